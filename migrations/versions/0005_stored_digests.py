"""stored digests: what an indexing pass and `taskspace check` used to recompute for every model on every run is
kept at write time, so a pass with nothing new and a check read it instead (issue 20, Hub scale):

- models.outcomes_digest: sha256 over the model's outcome blocks (Store.model_digests), backfilled here;
- models.identity_stamp: the identity rules the key was last resolved under (None: check it once more);
- model_vectors.outcomes_digest / prior_digest: the outcomes digest and the space prior's digest a vector was solved
  from, set when its inputs digest matched them (so "stale" is a comparison of columns in SQL); backfilled here for
  the vectors whose inputs digest matches their model's outcomes and their space's prior;
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
    # plain ALTER TABLE ADD COLUMN (nullable): no table is copied, so SQLite's foreign-key cascades never fire
    op.add_column('models', sa.Column('outcomes_digest', sa.String(length=64), nullable=True))
    op.add_column('models', sa.Column('identity_stamp', sa.String(length=32), nullable=True))
    op.add_column('model_vectors', sa.Column('outcomes_digest', sa.String(length=64), nullable=True))
    op.add_column('model_vectors', sa.Column('prior_digest', sa.String(length=64), nullable=True))
    op.add_column('model_vectors', sa.Column('point_digest', sa.String(length=32), nullable=True))
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
    # each vector's (outcomes, prior) digests where its inputs digest is that of its model's outcomes and its space's
    # prior (indexer.store.sql_types.vector_digest; SpacePrior.digest is the sha256 of the stored float64 bytes)
    priors = {sid: hashlib.sha256(bytes(vec)).hexdigest()
              for sid, vec in conn.execute(sa.text("SELECT space_id, vector FROM space_priors"))}
    marks = []
    for vid, sid, inputs, digest in conn.execute(sa.text(
            "SELECT v.id, v.space_id, v.inputs_digest, m.outcomes_digest FROM model_vectors v "
            "JOIN models m ON m.id = v.model_id WHERE m.outcomes_digest IS NOT NULL")):
        prior = priors.get(sid)
        want = digest if prior is None else hashlib.sha256(f"{digest}:{prior}".encode()).hexdigest()
        if inputs == want:
            marks.append({"d": digest, "p": prior or "", "i": vid})
    if marks:
        conn.execute(sa.text("UPDATE model_vectors SET outcomes_digest = :d, prior_digest = :p WHERE id = :i"), marks)


def downgrade() -> None:
    # ALTER TABLE DROP COLUMN, never a batch copy: copying `models` on SQLite drops the old table, and with foreign
    # keys on that deletes every outcome, alias and vector through ON DELETE CASCADE. SQLite before 3.35 has no DROP
    # COLUMN: the (nullable, unused by 0004) columns then stay.
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        import sqlite3

        if sqlite3.sqlite_version_info < (3, 35):
            return
    for table, column in (('model_vectors', 'point_digest'), ('model_vectors', 'prior_digest'),
                          ('model_vectors', 'outcomes_digest'), ('models', 'identity_stamp'),
                          ('models', 'outcomes_digest')):
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
