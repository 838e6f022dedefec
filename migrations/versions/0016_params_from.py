"""the repo whose parameter count a model's ``num_parameters`` is when it is not the model's own: a PEFT adapter (or a
repo with no count of its own that its card says is a fine-tune or quantization of one base) has its base model's
count, and this names that base (NULL: the model's own count, or none; as every model stored before). A Hub model
stored without a count whose card names a base is marked for its metadata to be asked again by the next pass.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-05 15:00:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0016'
down_revision: Union[str, Sequence[str], None] = '0015'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column('models', sa.Column('num_parameters_from', sa.String(length=512), nullable=True))
    # a Hub model stored without a count whose card names a base (an adapter, most likely) is asked again by the next
    # pass (metadata never fetched: ``Store.models_without_metadata``), so it gets its base model's count now rather
    # than when its metadata is next due (up to 7 days later)
    op.execute("UPDATE models SET fetched_at = NULL WHERE kind = 'hub' AND num_parameters IS NULL "
               "AND base_model IS NOT NULL AND fetched_at IS NOT NULL")


def downgrade() -> None:
    # ALTER TABLE DROP COLUMN, never a batch copy: copying `models` on SQLite drops the old table, and with foreign
    # keys on that deletes every outcome, alias and vector through ON DELETE CASCADE (as 0005). SQLite before 3.35 has
    # no DROP COLUMN: the (nullable, unused by 0015) column then stays.
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        import sqlite3

        if sqlite3.sqlite_version_info < (3, 35):
            return
    op.execute("ALTER TABLE models DROP COLUMN num_parameters_from")
