"""model_vectors pattern index: the coverage patterns a space's vectors use are found in an index instead of
reading every vector row (each holds a 3 KB vector, so SQLite read the overflow pages of all of them: 40 ms at
32k models on every save of model vectors, which deletes the patterns no vector uses any more; issue 20).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 11:00:00

"""
from typing import Sequence, Union

from alembic import op


revision: str = '0007'
down_revision: Union[str, Sequence[str], None] = '0006'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_index('ix_model_vectors_pattern', 'model_vectors', ['space_id', 'pattern'])


def downgrade() -> None:
    op.drop_index('ix_model_vectors_pattern', table_name='model_vectors')
