"""models without outcomes: a partial index (empty where every model was measured), so that a coverage-aware query
can ask in no time whether the space holds a model whose coverage it cannot tell (indexer.query.coverage_ranked;
without it the question scanned the 32k rows of the models table: 6 ms a query). The ORM does not declare it
(indexer.store.sql_models.UNDECLARED_INDEXES: a dialect's ``where`` there would import both dialects on every start).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 13:30:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0009'
down_revision: Union[str, Sequence[str], None] = '0008'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_index('ix_models_unmeasured', 'models', ['id'], sqlite_where=sa.text('outcomes_digest IS NULL'),
                    postgresql_where=sa.text('outcomes_digest IS NULL'))


def downgrade() -> None:
    op.drop_index('ix_models_unmeasured', table_name='models')
