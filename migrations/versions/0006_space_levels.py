"""space_levels: the linear map of a space's design rows whose method penalises the top principal directions of
the prompt embeddings less (a generalised ridge, ``auto-mc-level``; :class:`indexer.represent.Level`), float64
packed, with the number of prompts it was estimated from.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 02:00:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0006'
down_revision: Union[str, Sequence[str], None] = '0005'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('space_levels',
    sa.Column('space_id', sa.Integer(), nullable=False),
    sa.Column('size', sa.Integer(), nullable=False),
    sa.Column('vector', sa.LargeBinary(), nullable=False),
    sa.Column('n_prompts', sa.Integer(), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['space_id'], ['spaces.id'], name=op.f('fk_space_levels_space_id_spaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('space_id', name=op.f('pk_space_levels'))
    )


def downgrade() -> None:
    op.drop_table('space_levels')
