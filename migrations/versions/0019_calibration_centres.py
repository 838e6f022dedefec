"""the mean model vector of each group of the benchmarks' links (indexer.posterior.Calibration.centres, JSON text;
NULL: no links, or a map stored before this revision, whose next pass computes them): a model's score where nothing
links its benchmarks to the query's is the average model's of the query's group.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06 12:10:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0019'
down_revision: Union[str, Sequence[str], None] = '0018'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    # ADD COLUMN, never a batch copy of the table (as 0018): nothing to copy, one statement on a home with data
    op.add_column('space_calibrations', sa.Column('centres', sa.Text(), nullable=True))


def downgrade() -> None:
    # SQLite before 3.35 has no DROP COLUMN: the (nullable) column then stays, unread by 0018
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        import sqlite3

        if sqlite3.sqlite_version_info < (3, 35):
            return
    op.execute("ALTER TABLE space_calibrations DROP COLUMN centres")
