"""Digests kept at write time (migration 0005) so that a pass with nothing new and `taskspace check` read them instead
of recomputing every model's (issue 20): each must equal what it stands for after every kind of write, and the
decisions taken from them (stale, orphan, name to merge) must be those the full computation takes."""

from __future__ import annotations

import numpy as np

from indexer.records import Outcome, SourceBatch, SourceInfo
from indexer.store.sql import ModelVector, SpacePrior
from indexer.store.sql_types import vector_digest


def _batch(location, outcomes, revision="r1"):
    return SourceBatch(SourceInfo("table", location, revision), {}, list(outcomes))


def grid(models, prompts, bench="math", fn=lambda i, j: float((i + j) % 2)):
    return [Outcome(m, bench, p, fn(i, j), prompt_id=str(j)) for i, m in enumerate(models) for j, p in enumerate(prompts)]


A = ["org/alpha", "org/beta", "org/gamma"]
P = ["What is 2+2?", "Solve x^2 = 9.", "Integrate sin(x).", "Is 7 prime?"]


def _full_stale(store, space_id):
    """stale_models the old way: every model's digest recomputed and compared in Python."""
    return store.stale_models(space_id, store.computed_model_digests())


def test_the_stored_outcomes_digest_follows_every_write_of_outcomes(store):
    """ingest, a new revision (a model dropped, one changed), a second source, merge_model_names, delete_source:
    models.outcomes_digest equals the digest computed from the blocks, and None for a model left without any."""
    from sqlalchemy import update

    from indexer.store.sql_models import Model

    def same():
        assert store.model_digests() == store.computed_model_digests()

    store.ingest(_batch("/a.csv", grid(A, P)))
    same()
    store.ingest(_batch("/b.csv", grid(A[:1], ["New prompt"])))
    same()
    before = store.model_digests()
    store.ingest(_batch("/a.csv", grid(A[:2], P, fn=lambda i, j: 1.0), revision="r2"))  # gamma dropped, beta changed
    same()
    after = store.model_digests()
    assert A[2] not in after and after[A[1]] != before[A[1]] and after[A[0]] != before[A[0]]
    with store._write() as conn:  # a row stored under a name the rules now map to another key
        conn.execute(update(Model).where(Model.key == A[1]).values(key="org--alpha", kind="name", identity_stamp=None))
    assert dict(store.merge_model_names()) == {"org--alpha": "org/alpha"}
    same()
    assert store.delete_source("/b.csv")
    same()
    assert store.delete_source("/a.csv")
    assert store.model_digests() == {} == store.computed_model_digests()


def test_stale_in_sql_is_the_full_comparison(store):
    """After outcomes change, a prior changes, a vector is saved with inputs that are not current, a vector is
    deleted, and a source is removed: stale_models (columns compared in SQL) == every digest compared in Python; and
    orphan_model_vectors == the vectors of models without outcomes."""
    store.ingest(_batch("/a.csv", grid(A, P)))
    s = store.get_or_create_space("enc@1", 4, 1.0, 0.0, method="auto-mean", params={"prior": "mean"})

    def check(want):
        assert store.stale_models(s.id) == _full_stale(store, s.id) == sorted(want)

    check(A)
    prior = SpacePrior(np.array([0.1, -0.2, 1 / 3]), 3)
    d = store.model_digests()
    store.save_model_vectors(s.id, [ModelVector(k, np.ones(4), 4, ["math"], {}, vector_digest(d[k], prior)) for k in A],
                             prior=prior)
    check([])
    store.ingest(_batch("/b.csv", grid(A[:1], ["New prompt"])))  # alpha's outcomes change
    check(A[:1])
    # saved with the digest it had before: still stale; with the current one: current
    store.save_model_vectors(s.id, [ModelVector(A[0], np.ones(4), 4, [], {}, vector_digest(d[A[0]], prior))])
    check(A[:1])
    store.save_model_vectors(s.id, [ModelVector(A[0], np.ones(4), 4, [], {},
                                                vector_digest(store.model_digests()[A[0]], prior))])
    check([])
    # another prior: every vector solved toward the old one is stale; re-saved toward the new one, current
    prior2 = SpacePrior(prior.vector + 1.0, 3)
    store.save_model_vectors(s.id, [ModelVector(A[1], np.ones(4), 4, [], {}, vector_digest(d[A[1]], prior2))],
                             prior=prior2)
    check([A[0], A[2]])
    store.save_model_vectors(s.id, [], prior=prior, replace_prior=True)  # back to the first prior
    check([A[1]])
    store.delete_model_vectors(s.id, [A[2]])
    check([A[1], A[2]])
    assert store.orphan_model_vectors(s.id) == []
    store.delete_source("/a.csv")  # beta and gamma lose every outcome: not stale (nothing to solve), beta an orphan
    check([A[0]])
    assert store.orphan_model_vectors(s.id) == [A[1]]
    assert store.models_with_outcomes() == 1


def test_merge_checks_only_keys_not_yet_checked_under_these_rules(store, tmp_path, monkeypatch):
    """A key checked once is not resolved again until the identity rules change (here: the user's alias file)."""
    import indexer.identity as identity
    from indexer.config import reset_settings

    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "home"))
    reset_settings()
    (tmp_path / "home").mkdir()
    store.ingest(_batch("/a.csv", grid(["Llama-local", "org/alpha"], P[:1])))
    seen = []
    real = identity.resolve_many
    monkeypatch.setattr(identity, "resolve_many", lambda names: seen.append(sorted(names)) or real(names))
    assert store.merge_model_names() == []
    assert seen == []  # keys an ingest stored as they resolve were stamped there: nothing to check
    store.upsert_models([{"key": "org--beta"}])  # a row written without resolving its key (metadata for a new name)
    assert store.merge_model_names() == [("org--beta", "org/beta")] and seen == [["org--beta"]]
    assert store.merge_model_names() == [] and seen[-1] == ["org/beta"]  # a renamed row is checked once more
    assert store.merge_model_names() == [] and len(seen) == 2  # checked keys are not resolved again
    store.ingest(_batch("/b.csv", grid(["org/gamma"], P[:1])))  # (the ingest itself resolves its names)
    n = len(seen)
    assert store.merge_model_names() == [] and len(seen) == n
    (tmp_path / "home" / "aliases.toml").write_text('[hub]\n"Llama-local" = "meta-llama/Llama-3.1-8B"\n')
    assert store.merge_model_names() == [("Llama-local", "meta-llama/Llama-3.1-8B")]  # the rules changed: all again
    assert seen[-1] == ["Llama-local", "org/alpha", "org/beta", "org/gamma"]
    assert [m.key for m in store.list_models()] == ["meta-llama/Llama-3.1-8B", "org/alpha", "org/beta", "org/gamma"]
    assert store.model_digests() == store.computed_model_digests()
    reset_settings()


def test_migration_0005_backfills_the_digests(db_url):
    """A database at 0004 (no digest columns) with outcomes and vectors: 0005 stores every model's outcomes digest and
    marks current the vectors whose inputs digest is current, so the first pass after the upgrade re-solves exactly
    the models it re-solved before; 0005 -> 0004 -> 0005 again."""
    from sqlalchemy import create_engine, text

    from indexer.store import sql_migrate as migrate
    from indexer.store.sql import Store

    with Store(db_url, upgrade=True) as st:
        st.ingest(_batch("/a.csv", grid(A, P)))
        s = st.get_or_create_space("enc@1", 4, 1.0, 0.0, method="auto-mean", params={"prior": "mean"})
        plain = st.get_or_create_space("enc@1", 4, 0.5, 0.0)
        prior = SpacePrior(np.array([0.1, -0.2, 1 / 3]), 3)
        d = st.model_digests()
        st.save_model_vectors(s.id, [ModelVector(k, np.ones(4), 4, [], {}, vector_digest(d[k], prior)) for k in A[:2]]
                              + [ModelVector(A[2], np.ones(4), 4, [], {}, "0" * 64)], prior=prior)
        st.save_model_vectors(plain.id, [ModelVector(k, np.ones(4), 4, [], {}, d[k]) for k in A[1:]])
        want = (st.stale_models(s.id), st.stale_models(plain.id))
        assert want == ([A[2]], [A[0]])
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:  # what 0005 finds: no marks yet
            conn.execute(text("UPDATE model_vectors SET outcomes_digest = NULL, prior_digest = NULL"))
            conn.execute(text("UPDATE models SET outcomes_digest = NULL"))
    finally:
        engine.dispose()
    migrate.downgrade_url(db_url, "0004")
    assert migrate.upgrade_url(db_url)["from"] == "0004"
    assert migrate.schema_diff(db_url) == []
    with Store(db_url) as st:
        assert st.model_digests() == st.computed_model_digests() and sorted(st.model_digests()) == A
        assert (st.stale_models(s.id), st.stale_models(plain.id)) == want
        assert st.stale_models(s.id, st.computed_model_digests()) == want[0]


# -- point digests: what `taskspace check` compares without rebuilding every model's payload ----------------------

def _indexed(store, tmp_path, encoder):
    from indexer.store.vectors import VectorStore
    from indexer.sync import reindex
    from test_sync import fill

    space = fill(store, encoder)
    vs = VectorStore(path=tmp_path / "qdrant")
    reindex(store, vs, encoder=encoder)
    return space, vs


def test_point_digests_are_stored_by_a_rebuild_and_forgotten_by_every_write_of_their_inputs(store, tmp_path, encoder):
    """After a rebuild every vector's point digest is stored and equals the index payload's; a metadata change, a
    new alias, a re-solved vector and a merge each forget exactly their model's; a push stores it again."""
    from test_sync import MODELS, save_vectors

    from indexer.sync import check, push_models, space_name

    space, vs = _indexed(store, tmp_path, encoder)
    try:
        name = space_name(space)
        stored = store.point_digests(space.id)
        assert sorted(stored) == sorted(MODELS) and all(stored.values())
        assert stored == {h.key: h.payload["digest"] for h in vs.scan(name, "models")}
        store.upsert_models([{"key": "org/alpha", "license": "apache-2.0"}])
        store.ingest(SourceBatch(SourceInfo("table", "mem:more", "r1"), {}, [Outcome("org--beta", "toy/geo", "Where is Mount Fuji?", 1.0)]))
        save_vectors(store, space, ["org/gamma"], seed=9)
        unknown = sorted(k for k, d in store.point_digests(space.id).items() if d is None)
        assert unknown == ["org/alpha", "org/beta", "org/gamma"]
        drift = check(store, vs)[0]  # the unknown ones computed from SQL: alpha's payload and gamma's vector changed
        assert drift.stale["models"] == ["org/alpha", "org/beta", "org/gamma"]
        push_models(store, vs, space, unknown)
        assert all(store.point_digests(space.id).values()) and check(store, vs)[0].clean
    finally:
        vs.close()


def test_check_with_stored_digests_still_finds_a_tampered_vector(store, tmp_path, encoder):
    """A point whose payload (and so its digest) is untouched but whose stored vector changed is stale: the vectors
    are compared through the probes whatever digests SQL keeps."""
    from indexer.store.vectors import Point
    from indexer.sync import check, space_name

    space, vs = _indexed(store, tmp_path, encoder)
    try:
        name = space_name(space)
        assert all(store.point_digests(space.id).values())
        hit = vs.get(name, "models", ["org/beta"], with_vectors=True)["org/beta"]
        v = hit.vector.copy()
        v[5] += 0.5  # one entry (beyond what float32 rounding of a dot product can explain)
        vs.upsert(name, "models", [Point("org/beta", v, {k: x for k, x in hit.payload.items() if k != "key"})],
                  dim=space.dim)
        drift = check(store, vs)[0]
        assert drift.stale["models"] == ["org/beta"] and not drift.missing["models"] and not drift.extra["models"]
        # and a payload changed behind SQL's back (digest kept) is not hidden by the stored digest either
        vs.upsert(name, "models", [Point("org/beta", hit.vector, {**{k: x for k, x in hit.payload.items() if k != "key"},
                                                                  "digest": "0" * 32})], dim=space.dim)
        assert check(store, vs)[0].stale["models"] == ["org/beta"]
    finally:
        vs.close()


def test_a_write_between_claim_and_save_wins(store):
    """The claim protocol: a digest computed from inputs read before a write of those inputs is never stored."""
    store.ingest(_batch("/a.csv", grid(A, P)))
    s = store.get_or_create_space("enc@1", 4, 1.0, 0.0)
    d = store.model_digests()
    store.save_model_vectors(s.id, [ModelVector(k, np.ones(4), 4, [], {}, d[k]) for k in A])
    token = store.claim_point_digests(s.id)
    assert store.point_digests(s.id) == {k: None for k in A}  # a claim reads as unknown
    store.upsert_models([{"key": A[0], "license": "mit"}])  # written after the points were built
    assert store.save_point_digests(s.id, token, {k: f"digest-{k}" for k in A}) == 2
    assert store.point_digests(s.id) == {A[0]: None, A[1]: f"digest-{A[1]}", A[2]: f"digest-{A[2]}"}
    other = store.claim_point_digests(s.id, [A[0]])
    assert store.save_point_digests(s.id, token, {A[0]: "late"}) == 0  # an old claim stores nothing
    assert store.save_point_digests(s.id, other, {A[0]: "now"}) == 1
    assert store.point_digests(s.id)[A[0]] == "now"
