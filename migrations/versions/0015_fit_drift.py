"""how many models were solved toward a space's held prior (or calibrated by its held map) or removed since it was
estimated: a pass re-estimates it when that reaches a share of the models it was estimated from
(:data:`indexer.space.REFIT_SHARE`), so a known model gaining a benchmark counts as an added one does (NULL: 0, as
for every prior and map stored before).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05 14:30:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0015'
down_revision: Union[str, Sequence[str], None] = '0014'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    for table in ('space_priors', 'space_calibrations'):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column('n_changed', sa.Integer(), nullable=True))


def downgrade() -> None:
    for table in ('space_priors', 'space_calibrations'):
        with op.batch_alter_table(table) as batch:
            batch.drop_column('n_changed')
