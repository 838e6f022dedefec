"""space_priors: the shrinkage target of a space whose method shrinks toward the models' mean normal
(``auto-mean``), with the number of models it was estimated from.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 21:40:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0002'
down_revision: Union[str, Sequence[str], None] = '0001'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('space_priors',
    sa.Column('space_id', sa.Integer(), nullable=False),
    sa.Column('dim', sa.Integer(), nullable=False),
    sa.Column('vector', sa.LargeBinary(), nullable=False),
    sa.Column('n_models', sa.Integer(), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['space_id'], ['spaces.id'], name=op.f('fk_space_priors_space_id_spaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('space_id', name=op.f('pk_space_priors'))
    )


def downgrade() -> None:
    op.drop_table('space_priors')
