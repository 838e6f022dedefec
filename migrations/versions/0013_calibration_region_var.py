"""the region variance of a space's coverage-aware map: how far a model's level on one benchmark strays from its
overall level, which widens its interval where it has no evidence near the query
(indexer.posterior.Calibration.region_var; NULL: none, as every map stored before).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04 18:00:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0013'
down_revision: Union[str, Sequence[str], None] = '0012'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('space_calibrations') as batch:
        batch.add_column(sa.Column('region_var', sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('space_calibrations') as batch:
        batch.drop_column('region_var')
