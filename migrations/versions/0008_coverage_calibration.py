"""coverage-aware calibration: the weight of a model's own deviation where it has no evidence near the query
(indexer.posterior.Calibration.uncovered; NULL: the one weight ``specific`` everywhere, as every map stored before).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 11:00:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0008'
down_revision: Union[str, Sequence[str], None] = '0007'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('space_calibrations') as batch:
        batch.add_column(sa.Column('uncovered', sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('space_calibrations') as batch:
        batch.drop_column('uncovered')
