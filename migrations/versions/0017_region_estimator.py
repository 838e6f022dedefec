"""the version of the estimator a calibration map's region variance was estimated by
(indexer.posterior.REGION_ESTIMATOR; NULL: before this revision, the estimator that counted models measured on one
benchmark and so diluted it): a pass fits again a map whose region variance an older estimator gave.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05 20:30:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0017'
down_revision: Union[str, Sequence[str], None] = '0016'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    # ADD COLUMN, never a batch copy of the table (as 0016): nothing to copy, one statement on a home with data
    op.add_column('space_calibrations', sa.Column('region_estimator', sa.Integer(), nullable=True))


def downgrade() -> None:
    # SQLite before 3.35 has no DROP COLUMN: the (nullable) column then stays, unread by 0016
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        import sqlite3

        if sqlite3.sqlite_version_info < (3, 35):
            return
    op.execute("ALTER TABLE space_calibrations DROP COLUMN region_estimator")
