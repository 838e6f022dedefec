"""The embedded engines answer alike: the same points written through Qdrant Edge (the default) and through
qdrant-client's local mode (the engine before it) give the same top-k, in the same order, with the same scores to
float32 precision, filtered or not, and read back the same payloads and vectors exactly.

Scores are float32 dot products summed in a different order by each engine (SIMD in Rust, BLAS in numpy), so they
can differ in the last bit or two; numpy's own scores for one point already change in the last bit with the number
of points in the collection (its matrix-vector product is blocked by size), so "bit for bit" is not defined even
for the old engine alone."""

from __future__ import annotations

import numpy as np
import pytest

from indexer.store.vectors import Point, VectorStore

DIM = 773  # the index width of auto-mc with MiniLM
FILTERS = [None, {"license": ["mit"]}, {"license": ["mit", "apache-2.0"], "gated": False},
           {"num_parameters": {"lte": 8e9}}, {"tags": "code", "key": {"not": ["m3", "m7"]}},
           {"benchmarks": {"all": ["arc", "mmlu"]}}]


def _points(n=400, seed=0):
    rng = np.random.default_rng(seed)
    vecs = (rng.normal(size=(n, DIM)) * 0.05).astype(np.float32)
    vecs[5] = vecs[4]  # an exact tie
    lic = ["mit", "apache-2.0", "llama3", None]
    return [Point(f"m{i}", vecs[i], {"license": lic[i % 4], "num_parameters": (i % 30 + 1) * 10**9 if i % 7 else None,
                                     "gated": i % 3 == 0, "tags": ["code"] if i % 2 else ["chat"],
                                     "benchmarks": ["arc", "mmlu"] if i % 5 else ["arc"], "accuracy": i / n})
            for i in range(n)]


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    pts = _points()
    queries = np.random.default_rng(9).normal(size=(25, DIM)).astype(np.float32)
    queries[0] = pts[4].vector  # the tie at the top
    out = {}
    for engine in ("edge", "local"):
        with VectorStore(path=tmp_path_factory.mktemp(engine), engine=engine) as vs:
            vs.rebuild("s", "models", pts, dim=DIM)
            out[engine] = {
                "search": [[[(h.key, h.score) for h in vs.search("s", "models", q, filters=f, limit=15)] for q in queries]
                           for f in FILTERS],
                "many": [[(h.key, h.score) for h in hs] for hs in vs.search_many("s", "models", queries, limit=7)],
                "scan": sorted((h.key, h.id, h.payload, h.vector.tobytes()) for h in vs.scan("s", "models", with_vectors=True)),
                "get": {k: (h.payload, h.vector.tobytes()) for k, h in vs.get("s", "models", ["m1", "m4"], with_vectors=True).items()},
            }
    return out


def _ties(hits):
    """The keys of a ranked list grouped by exactly equal score (an engine lists tied points in its own order)."""
    out: list[tuple[set, float]] = []
    for k, s in hits:
        if out and out[-1][1] == s:
            out[-1][0].add(k)
        else:
            out.append(({k}, s))
    return out


def _same(a, b):
    ta, tb = _ties(a), _ties(b)
    assert [g for g, _ in ta[:-1]] == [g for g, _ in tb[:-1]] and len(ta[-1][0]) == len(tb[-1][0])  # the last
    # group may be cut by the limit at another member
    sa, sb = np.array([s for _, s in a]), np.array([s for _, s in b])
    np.testing.assert_allclose(sa, sb, rtol=0, atol=4 * np.spacing(np.float32(max(np.abs(sa).max(initial=0), 1e-3))))


@pytest.mark.parametrize("f", range(len(FILTERS)))
def test_same_top_k_and_scores(answers, f):
    edge, local = answers["edge"]["search"][f], answers["local"]["search"][f]
    assert all(edge) and len(edge) == len(local)
    for a, b in zip(edge, local):
        _same(a, b)


def test_same_batched_answers_and_stored_points(answers):
    for a, b in zip(answers["edge"]["many"], answers["local"]["many"]):
        _same(a, b)
    assert answers["edge"]["scan"] == answers["local"]["scan"] and len(answers["edge"]["scan"]) == 400
    assert answers["edge"]["get"] == answers["local"]["get"]


def test_ties_and_exactness(answers):
    top = answers["edge"]["search"][0][0]
    assert {k for k, _ in top[:2]} == {"m4", "m5"} and top[0][1] == top[1][1]
    # a float32 score is within a few ulps of the exact (float64) inner product of the stored float32 vectors
    pts = {p.key: p for p in _points()}
    q = np.random.default_rng(9).normal(size=(25, DIM)).astype(np.float32)[3]
    for k, s in answers["edge"]["search"][0][3]:
        exact = float(np.dot(pts[k].vector.astype(np.float64), q.astype(np.float64)))
        assert abs(s - exact) <= 4 * np.spacing(np.float32(abs(exact)))


@pytest.mark.parametrize("written,used", [("edge", "local"), ("local", "edge")])
def test_an_index_written_by_the_other_engine_is_named_as_such(written, used, taskspace_home, encoder):
    """A home indexed with one embedded engine, then read with the other (`TASKSPACE_QDRANT_ENGINE` changed): a search
    (`taskspace search`) and the model list (`taskspace models`) say which engine wrote the folder and what to do (set
    the variable back, or `taskspace reindex`): a store error, exit 3; `reindex` then rebuilds it for the engine in
    use, leaving the other engine's files as they were. Before, the search said the prompts index "is missing" and the
    model list that the index "has drifted", never naming the other engine."""
    from pathlib import Path

    from indexer.browse import list_models
    from indexer.errors import StoreError
    from indexer.find import find_models
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import ENGINE_NAMES
    from indexer.sync import check, reindex

    sample = Path(__file__).resolve().parents[1] / "indexer" / "data" / "sample"
    folder = taskspace_home / "qdrant"
    with open_store() as store:
        with VectorStore(path=folder, engine=written) as vs:
            assert Indexer(store, vs, encoder=encoder).run([SourceSpec(str(sample))]).status == "ok"
        with VectorStore(path=folder, engine=used) as vs:
            for what, ask in (("search", lambda: find_models("What is 2 + 2?", store=store, vectors=vs)),
                              ("models", lambda: list_models(store=store, vectors=vs))):
                with pytest.raises(StoreError) as err:
                    ask()
                said = str(err.value)
                assert err.value.exit_code == 3, (what, said)
                assert f"was written by {ENGINE_NAMES[written]} (TASKSPACE_QDRANT_ENGINE={written}" in said, (what, said)
                assert f"set TASKSPACE_QDRANT_ENGINE={written} back, or run `taskspace reindex`" in said, (what, said)
                assert "is missing" not in said and "drifted" not in said, (what, said)
            # `taskspace check` names it too, for every kind (before, with `local` reading Edge's files, it listed
            # every point as missing, naming no engine; the other way round only a log warning at open said so)
            (drift,) = check(store, vs)
            assert not drift.clean and len(drift.problems) == 3, drift.problems
            for kind, problem in zip(("models", "benchmarks", "prompts"), drift.problems):
                assert problem.startswith(f"{kind} index cannot be read: the {kind} index of space"), problem
                assert f"was written by {ENGINE_NAMES[written]} (TASKSPACE_QDRANT_ENGINE={written}" in problem, problem
            reindex(store, vs)
        for engine in (used, written):  # both engines answer now: the other engine's files are left as they were
            with VectorStore(path=folder, engine=engine) as vs:
                assert find_models("What is 2 + 2?", store=store, vectors=vs).results
                assert list_models(store=store, vectors=vs)
