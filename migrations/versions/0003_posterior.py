"""posterior and calibration: each model vector's coverage pattern, lambda and residual variance; the posterior
factors each coverage pattern shares with its models (space_patterns); a space's calibration map
(space_calibrations).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 22:00:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0003'
down_revision: Union[str, Sequence[str], None] = '0002'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('model_vectors') as batch:
        batch.add_column(sa.Column('pattern', sa.String(length=64), nullable=True))
        batch.add_column(sa.Column('lam', sa.Float(), nullable=True))
        batch.add_column(sa.Column('noise', sa.Float(), nullable=True))
    op.create_table('space_patterns',
    sa.Column('space_id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('n', sa.Integer(), nullable=False),
    sa.Column('width', sa.Integer(), nullable=False),
    sa.Column('rank', sa.Integer(), nullable=False),
    sa.Column('free', sa.Integer(), nullable=False),
    sa.Column('mc_seen', sa.Boolean(), nullable=False),
    sa.Column('free_seen', sa.Boolean(), nullable=False),
    sa.Column('mu', sa.LargeBinary(), nullable=False),
    sa.Column('w', sa.LargeBinary(), nullable=False),
    sa.Column('V', sa.LargeBinary(), nullable=False),
    sa.Column('K', sa.LargeBinary(), nullable=True),
    sa.Column('Cinv', sa.LargeBinary(), nullable=True),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['space_id'], ['spaces.id'], name=op.f('fk_space_patterns_space_id_spaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('space_id', 'key', name=op.f('pk_space_patterns'))
    )
    op.create_table('space_calibrations',
    sa.Column('space_id', sa.Integer(), nullable=False),
    sa.Column('a', sa.Float(), nullable=False),
    sa.Column('b', sa.Float(), nullable=False),
    sa.Column('n_cells', sa.Integer(), nullable=False),
    sa.Column('n_models', sa.Integer(), nullable=False),
    sa.Column('spread', sa.Float(), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['space_id'], ['spaces.id'], name=op.f('fk_space_calibrations_space_id_spaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('space_id', name=op.f('pk_space_calibrations'))
    )


def downgrade() -> None:
    op.drop_table('space_calibrations')
    op.drop_table('space_patterns')
    with op.batch_alter_table('model_vectors') as batch:
        batch.drop_column('noise')
        batch.drop_column('lam')
        batch.drop_column('pattern')
