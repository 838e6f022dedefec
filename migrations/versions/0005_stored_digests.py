"""stored digests: what an indexing pass and `taskspace check` used to recompute for every model on every run is
kept at write time, so a pass with nothing new and a check read it instead (issue 20, Hub scale):

- models.outcomes_digest: sha256 over the model's outcome blocks (Store.model_digests), backfilled here;
- models.identity_stamp: the identity rules the key was last resolved under (None: check it once more);
- model_vectors.point_digest: the digest of the index point SQL implies (None: compute it again).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 02:00:00

"""
import hashlib
from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = '0005'
down_revision: Union[str, Sequence[str], None] = '0004'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('models') as batch:
        batch.add_column(sa.Column('outcomes_digest', sa.String(length=64), nullable=True))
        batch.add_column(sa.Column('identity_stamp', sa.String(length=32), nullable=True))
    with op.batch_alter_table('model_vectors') as batch:
        batch.add_column(sa.Column('point_digest', sa.String(length=32), nullable=True))
    # the outcomes digest of every model that has outcomes (the same formula as Store.model_digests)
    conn = op.get_bind()
    parts: dict[int, list[str]] = {}
    for mid, loc, bench, digest in conn.execute(sa.text(
            "SELECT o.model_id, s.location, b.name, o.digest FROM outcomes o "
            "JOIN sources s ON s.id = o.source_id JOIN benchmarks b ON b.id = o.benchmark_id")):
        parts.setdefault(mid, []).append(f"{loc}\x1f{bench}\x1f{digest}")
    rows = [{"d": hashlib.sha256("\x1e".join(sorted(v)).encode()).hexdigest(), "i": mid} for mid, v in parts.items()]
    if rows:
        conn.execute(sa.text("UPDATE models SET outcomes_digest = :d WHERE id = :i"), rows)


def downgrade() -> None:
    with op.batch_alter_table('model_vectors') as batch:
        batch.drop_column('point_digest')
    with op.batch_alter_table('models') as batch:
        batch.drop_column('identity_stamp')
        batch.drop_column('outcomes_digest')
