"""model aliases: every name a source gave a model -> its one model row (indexer.identity), so one model is one
row whatever its sources call it. Existing models get their own key as an alias.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 23:00:00

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0004'
down_revision: Union[str, Sequence[str], None] = '0003'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('model_aliases',
    sa.Column('alias', sa.String(length=512), nullable=False),
    sa.Column('model_id', sa.Integer(), nullable=False),
    sa.Column('rule', sa.String(length=16), nullable=False),
    sa.ForeignKeyConstraint(['model_id'], ['models.id'], name=op.f('fk_model_aliases_model_id_models'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('alias', name=op.f('pk_model_aliases'))
    )
    op.create_index('ix_model_aliases_model_id', 'model_aliases', ['model_id'], unique=False)
    op.execute("INSERT INTO model_aliases (alias, model_id, rule) SELECT key, id, 'as-given' FROM models")


def downgrade() -> None:
    op.drop_index('ix_model_aliases_model_id', table_name='model_aliases')
    op.drop_table('model_aliases')
