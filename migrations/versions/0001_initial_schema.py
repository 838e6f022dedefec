"""initial schema: models, benchmarks, prompts, benchmark_prompts, sources, outcomes (packed blocks),
spaces, model_vectors, benchmark_vectors, runs.

Revision ID: 0001
Revises: 
Create Date: 2026-11-29 16:23:42.964215

"""
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision: str = '0001'
down_revision: Union[str, Sequence[str], None] = None
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table('benchmarks',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=512), nullable=False),
    sa.Column('group', sa.String(length=256), nullable=True),
    sa.Column('source_task', sa.String(length=512), nullable=True),
    sa.Column('metric', sa.String(length=128), nullable=True),
    sa.Column('num_fewshot', sa.Integer(), nullable=True),
    sa.Column('config', sa.JSON(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_benchmarks')),
    sa.UniqueConstraint('name', name=op.f('uq_benchmarks_name'))
    )
    op.create_table('models',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=512), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('revision', sa.String(length=128), nullable=True),
    sa.Column('author', sa.String(length=256), nullable=True),
    sa.Column('license', sa.String(length=256), nullable=True),
    sa.Column('num_parameters', sa.BigInteger(), nullable=True),
    sa.Column('pipeline_tag', sa.String(length=128), nullable=True),
    sa.Column('library', sa.String(length=128), nullable=True),
    sa.Column('tags', sa.JSON(), nullable=True),
    sa.Column('downloads', sa.BigInteger(), nullable=True),
    sa.Column('likes', sa.BigInteger(), nullable=True),
    sa.Column('gated', sa.String(length=16), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_modified', sa.DateTime(timezone=True), nullable=True),
    sa.Column('base_model', sa.String(length=512), nullable=True),
    sa.Column('fetched_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_models')),
    sa.UniqueConstraint('key', name=op.f('uq_models_key'))
    )
    op.create_table('prompts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('hash', sa.String(length=64), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_prompts')),
    sa.UniqueConstraint('hash', name=op.f('uq_prompts_hash'))
    )
    op.create_table('runs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('pid', sa.Integer(), nullable=True),
    sa.Column('counts', sa.JSON(), nullable=True),
    sa.Column('errors', sa.JSON(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_runs'))
    )
    op.create_table('sources',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=64), nullable=False),
    sa.Column('location', sa.String(length=1024), nullable=False),
    sa.Column('revision', sa.String(length=128), nullable=True),
    sa.Column('seen_revision', sa.String(length=128), nullable=True),
    sa.Column('checked_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('ingested_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('n_outcomes', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_sources')),
    sa.UniqueConstraint('location', name=op.f('uq_sources_location'))
    )
    op.create_table('spaces',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('encoder', sa.String(length=512), nullable=False),
    sa.Column('dim', sa.Integer(), nullable=False),
    sa.Column('lam', sa.Float(), nullable=False),
    sa.Column('eps', sa.Float(), nullable=False),
    sa.Column('method', sa.String(length=64), nullable=False),
    sa.Column('params', sa.JSON(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_spaces')),
    sa.UniqueConstraint('key', name=op.f('uq_spaces_key'))
    )
    op.create_table('benchmark_prompts',
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('prompt_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('source_prompt_id', sa.String(length=512), nullable=True),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmarks.id'], name=op.f('fk_benchmark_prompts_benchmark_id_benchmarks'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['prompt_id'], ['prompts.id'], name=op.f('fk_benchmark_prompts_prompt_id_prompts'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('benchmark_id', 'prompt_id', name=op.f('pk_benchmark_prompts'))
    )
    with op.batch_alter_table('benchmark_prompts', schema=None) as batch_op:
        batch_op.create_index('ix_benchmark_prompts_prompt_id', ['prompt_id'], unique=False)

    op.create_table('benchmark_vectors',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('space_id', sa.Integer(), nullable=False),
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('dim', sa.Integer(), nullable=False),
    sa.Column('vector', sa.LargeBinary(), nullable=False),
    sa.Column('n_prompts', sa.Integer(), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmarks.id'], name=op.f('fk_benchmark_vectors_benchmark_id_benchmarks'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['space_id'], ['spaces.id'], name=op.f('fk_benchmark_vectors_space_id_spaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_benchmark_vectors')),
    sa.UniqueConstraint('space_id', 'benchmark_id', name='uq_benchmark_vectors_space_benchmark')
    )
    op.create_table('model_vectors',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('space_id', sa.Integer(), nullable=False),
    sa.Column('model_id', sa.Integer(), nullable=False),
    sa.Column('dim', sa.Integer(), nullable=False),
    sa.Column('vector', sa.LargeBinary(), nullable=False),
    sa.Column('n_prompts', sa.Integer(), nullable=False),
    sa.Column('benchmarks', sa.JSON(), nullable=True),
    sa.Column('accuracy', sa.JSON(), nullable=True),
    sa.Column('inputs_digest', sa.String(length=64), nullable=True),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['model_id'], ['models.id'], name=op.f('fk_model_vectors_model_id_models'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['space_id'], ['spaces.id'], name=op.f('fk_model_vectors_space_id_spaces'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_model_vectors')),
    sa.UniqueConstraint('space_id', 'model_id', name='uq_model_vectors_space_model')
    )
    op.create_table('outcomes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('source_id', sa.Integer(), nullable=False),
    sa.Column('model_id', sa.Integer(), nullable=False),
    sa.Column('benchmark_id', sa.Integer(), nullable=False),
    sa.Column('n', sa.Integer(), nullable=False),
    sa.Column('prompt_ids', sa.LargeBinary(), nullable=False),
    sa.Column('scores', sa.LargeBinary(), nullable=False),
    sa.Column('model_revision', sa.String(length=128), nullable=True),
    sa.Column('digest', sa.String(length=64), nullable=False),
    sa.ForeignKeyConstraint(['benchmark_id'], ['benchmarks.id'], name=op.f('fk_outcomes_benchmark_id_benchmarks'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['model_id'], ['models.id'], name=op.f('fk_outcomes_model_id_models'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['source_id'], ['sources.id'], name=op.f('fk_outcomes_source_id_sources'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_outcomes')),
    sa.UniqueConstraint('source_id', 'model_id', 'benchmark_id', name='uq_outcomes_source_model_benchmark')
    )
    with op.batch_alter_table('outcomes', schema=None) as batch_op:
        batch_op.create_index('ix_outcomes_benchmark_id', ['benchmark_id'], unique=False)
        batch_op.create_index('ix_outcomes_model_id', ['model_id'], unique=False)



def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table('outcomes', schema=None) as batch_op:
        batch_op.drop_index('ix_outcomes_model_id')
        batch_op.drop_index('ix_outcomes_benchmark_id')

    op.drop_table('outcomes')
    op.drop_table('model_vectors')
    op.drop_table('benchmark_vectors')
    with op.batch_alter_table('benchmark_prompts', schema=None) as batch_op:
        batch_op.drop_index('ix_benchmark_prompts_prompt_id')

    op.drop_table('benchmark_prompts')
    op.drop_table('spaces')
    op.drop_table('sources')
    op.drop_table('runs')
    op.drop_table('prompts')
    op.drop_table('models')
    op.drop_table('benchmarks')
