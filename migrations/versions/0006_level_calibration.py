"""level/deviation calibration: the coefficients of a space's level/deviation map (indexer.posterior.Calibration
level, specific, shared; NULL for the plain map of the raw score, as every calibration stored before).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 02:00:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0006'
down_revision: Union[str, Sequence[str], None] = '0005'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('space_calibrations') as batch:
        batch.add_column(sa.Column('level', sa.Float(), nullable=True))
        batch.add_column(sa.Column('specific', sa.Float(), nullable=True))
        batch.add_column(sa.Column('shared', sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('space_calibrations') as batch:
        batch.drop_column('shared')
        batch.drop_column('specific')
        batch.drop_column('level')
