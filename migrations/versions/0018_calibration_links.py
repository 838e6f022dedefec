"""the benchmarks' groups no model links (indexer.posterior.Calibration.links, JSON text; NULL: one group, or a map
stored before this revision, whose region estimator (2) the next pass fits again): a model observed only on
benchmarks no model links to a query's gets an interval as wide as the models' spread there.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-06 02:40:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0018'
down_revision: Union[str, Sequence[str], None] = '0017'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    # ADD COLUMN, never a batch copy of the table (as 0017): nothing to copy, one statement on a home with data
    op.add_column('space_calibrations', sa.Column('links', sa.Text(), nullable=True))
    # a map stamped with estimator 3 whose links a downgrade to 0017 dropped: fitted again by the next pass, as a map
    # stored before 0018 (estimator 2) is (indexer.pipeline._fitted_before)
    op.execute("UPDATE space_calibrations SET region_estimator = 2 WHERE region_estimator >= 3")


def downgrade() -> None:
    # SQLite before 3.35 has no DROP COLUMN: the (nullable) column then stays, unread by 0017
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        import sqlite3

        if sqlite3.sqlite_version_info < (3, 35):
            return
    op.execute("ALTER TABLE space_calibrations DROP COLUMN links")
