"""The prompt covariates (method auto-text) through indexing and queries: a model is stored as
[e_i, f_i, c_i], every prompt/query/benchmark vector as [q, text_features(text), 1], so Qdrant's Dot score is
the solver's prediction on [embedding, text features]."""

from __future__ import annotations


import numpy as np
import pytest

from indexer import represent, sync
from indexer.config import reset_settings
from indexer.errors import InputError
from indexer.features import TEXT_FEATURES, text_features
from indexer.pipeline import Indexer
from indexer.query import find_models
from indexer.solver import HyperplaneSolver
from indexer.space import configured
from indexer.sourcelist import SourceSpec
from indexer.store.sql import open_store
from indexer.store.vectors import VectorStore

from helpers import index_sources, write_source

WORDS = ["algebra", "enzyme", "contract", "orbit", "sonnet", "tariff", "treaty", "proton"]


def varied_texts(benchmark: str, n: int, offset: int = 0) -> list[str]:
    """Prompts of very different lengths and line counts, so the covariates matter."""
    out = []
    for j in range(n):
        k = offset + j
        body = " ".join(WORDS[(k + i) % len(WORDS)] for i in range(3 + 7 * (k % 5)))
        lines = "\n".join(f"({c}) option {c} of {k}" for c in "ABCD"[: k % 4])
        out.append(f"{benchmark} question {k}: {body}?" + (f"\n{lines}" if lines else ""))
    return out


def length_driven(rng, names, texts):
    """Outcomes that depend on prompt length (a model-specific threshold) plus noise."""
    L = np.log1p([len(t) for t in texts])
    return {m: ((L < np.quantile(L, 0.3 + 0.1 * i)) ^ (rng.random(len(texts)) < 0.2)).astype(int)
            for i, m in enumerate(names)}


@pytest.fixture
def indexed(tmp_path, encoder, monkeypatch):
    """Two benchmarks indexed with the method auto-text."""
    monkeypatch.setenv("TASKSPACE_METHOD", "auto-text")
    reset_settings()
    rng = np.random.default_rng(11)
    names = ["m1", "m2", "m3", "m4", "m5"]
    ta, tb = varied_texts("alpha", 20), varied_texts("beta", 14, offset=40)
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", ta, length_driven(rng, names, ta)),
                                             (tmp_path / "b", "beta", tb, length_driven(rng, names[:3], tb))])
    yield store, vectors
    vectors.close()
    store.close()


def direct_solver(store, encoder, space) -> HyperplaneSolver:
    om = store.load_outcomes()
    texts = store.prompt_texts(om.prompt_ids)
    return configured().solver().fit(represent.design(encoder.encode(texts), texts, space), om.scores,
                                                model_ids=om.models)


def test_auto_text_space_records_the_feature_set_and_its_dimension(indexed, encoder):
    store, _ = indexed
    (space,) = store.list_spaces()
    assert space.method == "auto-text" and represent.feature_set(space) == TEXT_FEATURES
    assert space.params["free"] == 2 and space.dim == encoder.dim + 2 + 1
    spec = configured(type("S", (), {"method": "auto-text", "lam": 1.0, "eps": 0.0})())
    solver, params = spec.solver(), spec.params
    assert params["features"] == TEXT_FEATURES and solver.free == 2 and not hasattr(solver, "features")
    for mv in store.load_model_vectors(space.id):
        assert mv.vector.shape == (space.dim,)


def test_qdrant_dot_score_is_the_solvers_prediction(indexed, encoder):
    """(a) search ranking == predict ranking, scores equal, for single prompts of different lengths."""
    store, vectors = indexed
    (space,) = store.list_spaces()
    solver = direct_solver(store, encoder, space)
    name = sync.space_name(space)
    queries = ["Short one?", "A long question about enzyme kinetics and proton gradients\n(A) one\n(B) two\n(C) three"]
    for text in queries:
        predicted = solver.predict(represent.design(encoder.encode([text]), [text], space))[0]
        want = dict(zip(solver.model_ids_, predicted.tolist()))
        q = represent.lift(encoder.encode([text]), space, [text])[0]
        assert q.shape == (space.dim,) and q[-1] == 1.0
        np.testing.assert_allclose(q[encoder.dim:encoder.dim + 2], text_features([text])[0])
        hits = vectors.search(name, "models", q, limit=10)
        assert [h.key for h in hits] == sorted(want, key=want.get, reverse=True)
        for h in hits:
            assert h.score == pytest.approx(want[h.key], abs=1e-4)
        got = find_models([text], top=10, store=store, vectors=vectors)
        assert [(m.model, round(m.score, 4)) for m in got] == [(h.key, round(h.score, 4)) for h in hits]
    # several example prompts: the mean predicted score
    predicted = solver.predict(represent.design(encoder.encode(queries), queries, space)).mean(axis=0)
    want = dict(zip(solver.model_ids_, predicted.tolist()))
    got = find_models(queries, top=10, store=store, vectors=vectors)
    assert [m.model for m in got] == sorted(want, key=want.get, reverse=True)
    assert {m.model: m.score for m in got} == pytest.approx(want, abs=1e-4)


def test_prompt_points_are_lifted_with_their_texts(indexed, encoder):
    store, vectors = indexed
    (space,) = store.list_spaces()
    ids = store.benchmark_prompts("beta")
    texts = store.prompt_texts(ids)
    from indexer.records import prompt_hash

    hashes = [prompt_hash(t) for t in texts]
    got = vectors.get(sync.space_name(space), "prompts", hashes, with_vectors=True)
    want = represent.lift(encoder.encode(texts), space, texts)
    for h, w in zip(hashes, want):
        np.testing.assert_allclose(got[h].vector, w, atol=1e-6)


def test_benchmark_vector_is_the_mean_of_its_prompts_lifted_vectors(indexed, encoder):
    """(b) and a benchmark query's score is the mean predicted score over its prompts."""
    store, vectors = indexed
    (space,) = store.list_spaces()
    stored = {bv.benchmark: bv.vector for bv in store.load_benchmark_vectors(space.id)}
    solver = direct_solver(store, encoder, space)
    for b in ("alpha", "beta"):
        texts = store.prompt_texts(store.benchmark_prompts(b))
        want = represent.lift(encoder.encode(texts), space, texts).mean(axis=0)
        np.testing.assert_allclose(stored[b], want, atol=1e-6)
        hit = vectors.get(sync.space_name(space), "benchmarks", [b], with_vectors=True)[b]
        np.testing.assert_allclose(hit.vector, stored[b], atol=0)
        mean_pred = solver.predict(represent.design(encoder.encode(texts), texts, space)).mean(axis=0)
        want_scores = dict(zip(solver.model_ids_, mean_pred.tolist()))
        got = find_models(benchmark=b, top=10, store=store, vectors=vectors)
        assert {m.model: m.score for m in got} == pytest.approx(want_scores, abs=1e-4)


def test_lift_and_design_need_the_texts_on_a_feature_space():
    """(c)"""
    feat = type("Space", (), {"params": {"intercept": True, "select": "gcv", "free": 2, "features": TEXT_FEATURES}})()
    plain = type("Space", (), {"params": {"intercept": True, "select": "gcv"}})()
    X = np.ones((2, 4), np.float32)
    with pytest.raises(InputError, match="texts"):
        represent.lift(X, feat)
    with pytest.raises(InputError, match="texts"):
        represent.design(X, None, feat.params)
    with pytest.raises(InputError, match="2 embedding row"):
        represent.design(X, ["only one"], feat)
    lifted = represent.lift(X, feat, ["a", "b\nc"])
    assert lifted.shape == (2, 4 + 2 + 1) and lifted.dtype == np.float32
    np.testing.assert_allclose(lifted[:, 4:6], text_features(["a", "b\nc"]))
    np.testing.assert_array_equal(lifted[:, -1], 1.0)
    # spaces without a feature set: unchanged, texts optional and ignored
    assert represent.lift(X, plain).shape == (2, 5) and represent.lift(X, plain, ["a", "b"]).shape == (2, 5)
    assert represent.design(X, None, plain) is X and represent.feature_set(plain) is None
    with pytest.raises(Exception, match="unknown prompt feature set"):
        represent.design(X, ["a", "b"], {"features": "text-length-v99"})


def test_an_auto_index_keeps_working_and_auto_text_makes_its_own_space(tmp_path, encoder, monkeypatch):
    """(3) an index built with auto stays as it was with TASKSPACE_METHOD=auto; auto-text builds a second
    space with auto-text (another name, dim + 2); each method's query uses its own space."""
    rng = np.random.default_rng(12)
    texts = varied_texts("alpha", 16)
    write_source(tmp_path / "a", "alpha", texts, length_driven(rng, ["m1", "m2", "m3"], texts))
    monkeypatch.setenv("TASKSPACE_METHOD", "auto")
    reset_settings()
    store, vectors = open_store(), VectorStore.from_settings()
    try:
        Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "a"))])
        (auto,) = store.list_spaces()
        assert auto.dim == encoder.dim + 1 and represent.feature_set(auto) is None
        again = Indexer(store, vectors, encoder=encoder).run()
        assert again.status == "ok" and again.counts["solved"] == 0 and again.counts["rebuilt"] == []
        before = {h.key: h.score for h in vectors.search(sync.space_name(auto), "models",
                                                         represent.lift(encoder.encode(["Short one?"]), auto)[0])}

        monkeypatch.setenv("TASKSPACE_METHOD", "auto-text")
        reset_settings()
        r = Indexer(store, vectors, encoder=encoder).run()
        assert r.status == "ok" and r.counts["solved"] == 3
        spaces = store.list_spaces()
        (text,) = [s for s in spaces if s.id != auto.id]
        assert text.dim == encoder.dim + 3 and sync.space_name(text) != sync.space_name(auto)
        assert all(d.clean for d in sync.check(store, vectors))
        got = find_models(["Short one?"], store=store, vectors=vectors)
        want = direct_solver(store, encoder, text).predict(represent.design(encoder.encode(["Short one?"]), ["Short one?"], text))[0]
        assert {m.model: m.score for m in got} == pytest.approx(dict(zip(["m1", "m2", "m3"], want.tolist())), abs=1e-4)

        monkeypatch.setenv("TASKSPACE_METHOD", "auto")
        reset_settings()
        r = Indexer(store, vectors, encoder=encoder).run()
        assert r.counts["solved"] == 0  # the auto space is current
        got = find_models(["Short one?"], store=store, vectors=vectors)  # the auto space, not the newer one
        assert {m.model: m.score for m in got} == pytest.approx(before, abs=1e-6)
    finally:
        vectors.close()
        store.close()
