"""the indexed prompts each coverage pattern's models were observed on, as a pulled space's records carry them
(patterns/<space>.parquet ``observed``): a pulled index computes the coverage share of the coverage-aware map and
``coverage.near`` from them, as the publisher does from its outcomes. A space built here holds none (its outcomes
tell).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 15:40:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0012'
down_revision: Union[str, Sequence[str], None] = '0011'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('space_pattern_prompts',
    sa.Column('space_id', sa.Integer(), nullable=False),
    sa.Column('pattern', sa.String(length=64), nullable=False),
    sa.Column('n', sa.Integer(), nullable=False),
    sa.Column('prompts', sa.LargeBinary(), nullable=False),
    sa.Column('digest', sa.String(length=64), nullable=False),
    sa.ForeignKeyConstraint(['space_id'], ['spaces.id'], name=op.f('fk_space_pattern_prompts_space_id_spaces'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('space_id', 'pattern', name=op.f('pk_space_pattern_prompts'))
    )


def downgrade() -> None:
    op.drop_table('space_pattern_prompts')
