"""the outcome cells per benchmark of a pulled model vector (the ``n`` its published record carries beside each
benchmark's accuracy), so a pulled home shows "57% of 30" as its publisher does (NULL: not known, as every vector
stored before and every vector built here, whose counts come from its outcomes).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 05:00:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0014'
down_revision: Union[str, Sequence[str], None] = '0013'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('model_vectors') as batch:
        batch.add_column(sa.Column('counts', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('model_vectors') as batch:
        batch.drop_column('counts')
