"""the bend of the calibration map's logit: its knots, ``{"z": [...], "logit": [...]}`` as JSON text
(indexer.posterior.Calibration.knots; NULL: no bend, as every map stored before).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 04:40:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0010'
down_revision: Union[str, Sequence[str], None] = '0009'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('space_calibrations') as batch:
        batch.add_column(sa.Column('knots', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('space_calibrations') as batch:
        batch.drop_column('knots')
