"""the largest lambda a model's interval is computed with: the median of the space's models' lambdas when its map
was fitted (indexer.posterior.Calibration.lam_cap; NULL: each model's own, as every map stored before).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04 15:00:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0011'
down_revision: Union[str, Sequence[str], None] = '0010'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('space_calibrations') as batch:
        batch.add_column(sa.Column('lam_cap', sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('space_calibrations') as batch:
        batch.drop_column('lam_cap')
