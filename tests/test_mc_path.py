"""Method auto-mc through indexing and queries: prompts are embedded as question and options apart
(``multiple-choice-v2``, :mod:`indexer.represent`), a model is stored as ``[e_q, e_o, f, c_mc, c_free]``, and
Qdrant's Dot score is the solver's prediction: on a full prompt from its own row, on a question without options
from the row completed with the options of the nearest indexed questions (a search of the prompts collection);
a model never observed on an answer format is scored there at its own average, not extrapolated."""

from __future__ import annotations

import numpy as np
import pytest

from indexer import represent, sync
from indexer.config import reset_settings
from indexer.features import MULTIPLE_CHOICE_V2
from indexer.pipeline import Indexer
from indexer.query import find_models
from indexer.records import prompt_hash
from indexer.space import configured
from indexer.sourcelist import SourceSpec

from helpers import index_sources, write_source

TOPICS = ["enzymes", "orbits", "tariffs", "sonnets", "treaties", "protons", "algebra", "contracts"]
NAMES = ["m1", "m2", "m3", "m4", "m5", "m6"]


def mc_texts(n: int) -> list[str]:
    out = []
    for k in range(n):
        topic = TOPICS[k % len(TOPICS)]
        opts = "\n".join(f"{c}. {topic} answer {c.lower()}{' with a long explanation' * (k % 3)}"
                         for c in "ABCDEFGHIJ"[: 3 + k % 5])
        out.append(f"Question {k} about {topic}: which statement is true?\n{opts}")
    return out


def open_texts(n: int) -> list[str]:
    return [f"Write a short function number {k} that handles {TOPICS[k % len(TOPICS)]}." for k in range(n)]


def driven(rng, texts):
    """Outcomes that depend on the number of options and the topic, plus noise."""
    k = np.array([t.count("\n") for t in texts])
    topic = np.array([TOPICS.index(next(w for w in TOPICS if w in t)) for t in texts])
    return {m: (((k + topic * (i % 3)) % (2 + i % 3) == 0) ^ (rng.random(len(texts)) < 0.15)).astype(int)
            for i, m in enumerate(NAMES)}


@pytest.fixture
def indexed(tmp_path, encoder, monkeypatch):
    """A multiple-choice benchmark and an open one indexed with auto-mc (6 models: a 'mean' prior)."""
    monkeypatch.setenv("TASKSPACE_METHOD", "auto-mc")
    reset_settings()
    rng = np.random.default_rng(5)
    ta, tb = mc_texts(60), open_texts(20)  # more prompts than represent.NEIGHBOURS
    store, vectors = index_sources(encoder, [(tmp_path / "a", "mcq", ta, driven(rng, ta)),
                                             (tmp_path / "b", "code", tb, driven(rng, tb))])
    yield store, vectors
    vectors.close()
    store.close()


def direct(store, encoder, space):
    """The solver fitted directly on the representation's rows of every prompt with outcomes."""
    om = store.load_outcomes()
    texts = store.prompt_texts(om.prompt_ids)
    X = represent.rows(texts, encoder.encode, space)
    return configured().solver().fit(X, om.scores, model_ids=om.models,
                                     formats=represent.prompt_formats(X, space)), X


def test_space_and_vectors_are_the_solvers(indexed, encoder):
    store, _ = indexed
    (space,) = store.list_spaces()
    assert space.method == "auto-mc" and represent.feature_set(space) == MULTIPLE_CHOICE_V2
    assert space.dim == 2 * encoder.dim + 4 + 2 + 2 + 2  # [.., c_mc, c_free, w_mc, w_free, level, u_i . mu]
    solver, X = direct(store, encoder, space)
    assert solver.free == 4 and solver.prior_ is not None and solver.prior_.shape == (2, 2 * encoder.dim)
    prior = store.get_space_prior(space.id)
    np.testing.assert_allclose(represent.prior_matrix(prior.vector, space), solver.prior_, atol=1e-6)
    stored = {mv.model: mv.vector for mv in store.load_model_vectors(space.id)}
    level, mu_u = represent.levels(solver)
    om = store.load_outcomes()
    mc = X[:, 2 * encoder.dim] > 0
    for j, m in enumerate(solver.model_ids_):  # every model saw both formats: [e, f, c, c, w, level, u_i . mu]
        seen = ~np.isnan(om.scores[om.models.index(m)])
        w = [mc[seen].mean(), 1 - mc[seen].mean()]  # its share of prompts with options, without
        assert 0 < w[0] < 1
        np.testing.assert_allclose(stored[m], np.r_[solver.augmented_normals()[j], solver.intercept_[j], w,
                                                    level[j], mu_u[j]], atol=1e-4)


def test_qdrant_score_is_the_prediction_for_full_prompts_and_bare_questions(indexed, encoder):
    store, vectors = indexed
    (space,) = store.list_spaces()
    solver, X = direct(store, encoder, space)
    name = sync.space_name(space)
    assert X.shape[0] > represent.NEIGHBOURS
    full = mc_texts(70)[-1]  # not indexed, with 10 options
    question = "Which statement about enzymes is true?"
    bare = represent.query_rows([question], encoder.encode, space)
    for text, row in ((full, represent.rows([full], encoder.encode, space)),
                      (question, represent.fill_from_neighbours(bare, X))):
        want = dict(zip(solver.model_ids_, solver.predict(row)[0].tolist()))
        got = find_models([text], top=10, store=store, vectors=vectors)
        # ranked by probability (Qdrant's order for the folded query, tests/test_levels.py), scored raw
        assert [m.model for m in got] == sorted(want, key={m.model: m.probability for m in got}.get, reverse=True)
        assert [m.model for m in got] == sorted(want, key={m.model: m.search_score for m in got}.get, reverse=True)
        assert {m.model: m.score for m in got} == pytest.approx(want, abs=1e-4)
        q = represent.add_intercept(row.astype(np.float32), space)[0]
        assert q.shape == (space.dim,) and q[-6] + q[-5] == pytest.approx(1.0) and not q[-4:].any()  # [m, 1-m, 0 x 4]
        hits = vectors.search(name, "models", q, limit=10)
        assert {h.key: h.score for h in hits} == pytest.approx(want, abs=1e-4)
    # the bare question's is_mc is the share of its nearest indexed questions that have options
    nearest = np.argsort(-(X[:, :encoder.dim] @ bare[0, :encoder.dim]))[:represent.NEIGHBOURS]
    filled = represent.fill_from_neighbours(bare, X)[0]
    assert filled[2 * encoder.dim] == pytest.approx(X[nearest, 2 * encoder.dim].mean(), abs=1e-6)
    assert 0 < filled[2 * encoder.dim] < 1  # neighbours of both kinds: 60 of the 80 prompts have options


def test_with_no_prompt_points_a_bare_question_takes_the_mean_of_all_prompts(indexed, encoder):
    store, vectors = indexed
    (space,) = store.list_spaces()
    solver, X = direct(store, encoder, space)
    mean = represent.mean_row(store.load_benchmark_vectors(space.id), space)
    np.testing.assert_allclose(mean, X.mean(axis=0), atol=1e-5)  # no prompt is in both benchmarks
    vectors.rebuild(sync.space_name(space), "prompts", [], dim=space.dim)  # an empty prompts collection
    question = "Which statement about enzymes is true?"
    row = represent.query_rows([question], encoder.encode, space, mean)
    want = dict(zip(solver.model_ids_, solver.predict(row)[0].tolist()))
    got = find_models([question], top=10, store=store, vectors=vectors)
    assert {m.model: m.score for m in got} == pytest.approx(want, abs=1e-4)


def test_prompt_and_benchmark_points_are_lifted_rows(indexed, encoder):
    store, vectors = indexed
    (space,) = store.list_spaces()
    name = sync.space_name(space)
    solver, _ = direct(store, encoder, space)
    for b in ("mcq", "code"):
        texts = store.prompt_texts(store.benchmark_prompts(b))
        L = represent.lift(represent.embed(texts, encoder.encode, space), space, texts)
        hashes = [prompt_hash(t) for t in texts]
        got = vectors.get(name, "prompts", hashes, with_vectors=True)
        for h, w in zip(hashes, L):
            np.testing.assert_allclose(got[h].vector, w, atol=1e-6)
        bench = vectors.get(name, "benchmarks", [b], with_vectors=True)[b]
        np.testing.assert_allclose(bench.vector, L.mean(axis=0), atol=1e-6)
        want = dict(zip(solver.model_ids_, solver.predict(represent.strip_levels(L, space)[:, :-2]).mean(axis=0)
                        .tolist()))
        got_b = find_models(benchmark=b, top=10, store=store, vectors=vectors)
        assert {m.model: m.score for m in got_b} == pytest.approx(want, abs=1e-4)


def test_adding_a_model_solves_only_it_toward_the_stored_prior(indexed, encoder, tmp_path):
    store, vectors = indexed
    (space,) = store.list_spaces()
    before = {mv.model: mv.vector for mv in store.load_model_vectors(space.id)}
    texts = mc_texts(60)
    write_source(tmp_path / "c", "mcq", texts, {"m7": np.random.default_rng(9).integers(0, 2, 60).tolist()})
    r = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "c"))])
    assert r.status == "ok" and r.counts["solved"] == 1
    after = {mv.model: mv.vector for mv in store.load_model_vectors(space.id)}
    assert set(after) == set(before) | {"m7"}
    for m in before:
        np.testing.assert_array_equal(after[m], before[m])
    assert all(d.clean for d in sync.check(store, vectors))


@pytest.fixture
def mixed(tmp_path, encoder, monkeypatch):
    """A mixed index as real sources make it: three models measured only on multiple-choice prompts, three only on
    open prompts (code), no model on both (auto-mc, 6 models: a 'mean' prior)."""
    monkeypatch.setenv("TASKSPACE_METHOD", "auto-mc")
    reset_settings()
    rng = np.random.default_rng(11)
    ta, tb = mc_texts(60), open_texts(60)
    oa, ob = driven(rng, ta), driven(rng, tb)
    store, vectors = index_sources(encoder, [(tmp_path / "a", "mcq", ta, {m: oa[m] for m in NAMES[:3]}),
                                             (tmp_path / "b", "code", tb, {m: ob[m] for m in NAMES[3:]})])
    yield store, vectors
    vectors.close()
    store.close()


def test_a_model_with_no_evidence_near_a_query_is_not_ranked_by_an_extrapolated_covariate(mixed, encoder):
    """Regression (issue: a code request ranked models measured only on multiple-choice prompts first, at +1.3 to
    +2.5, through their length covariates evaluated at 0). A model measured only with answer options is scored on a
    request without options at its own average options and covariates; one measured only without, at its own."""
    store, vectors = mixed
    (space,) = store.list_spaces()
    om = store.load_outcomes()
    texts = store.prompt_texts(om.prompt_ids)
    X = represent.rows(texts, encoder.encode, space)
    solver = configured().solver().fit(X, om.scores, model_ids=om.models)
    d = encoder.dim
    request = "Write a short function number 77 that handles sonnets."
    # the request has no options: they are those of its nearest indexed questions, a share p of which have any
    row = represent.fill_from_neighbours(represent.query_rows([request], encoder.encode, space), X)[0]
    p = row[2 * d]
    assert 0 <= p < 0.5
    got = {m.model: m.score for m in find_models([request], top=10, store=store, vectors=vectors)}
    assert set(got) == set(NAMES)
    extrapolated = {}
    for j, m in enumerate(solver.model_ids_):
        e, a = solver.normals_[j], solver.intercept_[j]
        seen = ~np.isnan(om.scores[om.models.index(m)])
        own = X[seen].mean(axis=0)  # the model's own mean row (its options half and covariates)
        has_options = bool((X[seen, 2 * d] > 0).any())
        # seen with options only: at the share 1 - p without options, its own options and covariates stand in;
        # seen without options only: its options coefficients were never identified, it is scored on its question half
        if has_options:
            want = a + e @ row + (1 - p) * (e[d:] @ own[d:])
        else:
            want = a + e[:d] @ row[:d]
        assert got[m] == pytest.approx(want, abs=1e-3), m
        extrapolated[m] = a + e @ row  # an options-only model's score with its covariates taken at 0
    moved = [abs(extrapolated[m] - got[m]) for m in NAMES[:3]]
    assert max(moved) > 0.05  # the fallback changes what these models would have been extrapolated to
    assert all(-1.5 < s < 1.5 for s in got.values())


def test_probabilities_intervals_and_the_lower_bound_ranking(mixed, encoder):
    """Every result carries a calibrated probability (the space's stored map, fitted on the models' leave-one-out
    scores), an interval from the score's posterior (the direct solver's, at the row the model is effectively
    scored at), and ranking by the interval's lower end is the brute-force order over every model."""
    from indexer import posterior
    from indexer.solver.ridge import predictive_variance

    store, vectors = mixed
    (space,) = store.list_spaces()
    om = store.load_outcomes()
    X = represent.rows(store.prompt_texts(om.prompt_ids), encoder.encode, space)
    solver = configured().solver().fit(X, om.scores, model_ids=om.models, formats=represent.prompt_formats(X, space))
    cal = store.get_space_calibration(space.id)
    assert cal is not None and cal.n_models == 6 and cal.folded  # the level/deviation map (tests/test_levels.py)
    assert cal.spread == pytest.approx(posterior.level_spread(om.scores))
    assert cal.lam_cap == pytest.approx(float(np.median(solver.lam_)))
    want_cal = posterior.fit_level_calibration(*posterior.heldout_cells(configured().solver, X, om.scores, space))
    assert (cal.a, cal.level, cal.specific, cal.shared) == pytest.approx(
        (want_cal.a, want_cal.level, want_cal.specific, want_cal.shared), abs=1e-3)
    level, mu_u = represent.levels(solver)
    d = encoder.dim
    request = "Write a short function number 77 that handles sonnets."
    row = represent.fill_from_neighbours(represent.query_rows([request], encoder.encode, space), X)[0]
    p = row[2 * d]
    got = find_models([request], top=10, store=store, vectors=vectors)
    assert cal.links == (("code",), ("mcq",))
    mcq = set(mc_texts(60))
    bench = ["mcq" if t in mcq else "code" for t in store.prompt_texts(om.prompt_ids)]
    bench_of = {m: bench[int(np.flatnonzero(~np.isnan(om.scores[i]))[0])] for i, m in enumerate(om.models)}
    nearest = np.argsort(-(X[:, :d] @ row[:d]))[:posterior.COVERAGE_PROMPTS]
    logit = {}
    for mt in got:
        j = solver.model_ids_.index(mt.model)
        seen = ~np.isnan(om.scores[om.models.index(mt.model)])
        own = X[seen].mean(axis=0)
        has_options = bool((X[seen, 2 * d] > 0).any())
        eff = row.copy()  # the part of a format the model never saw is its own average
        eff[d:] = row[d:] + (1 - p) * own[d:] if has_options else p * own[d:]
        # plus, for the share of the query in the format it never saw, the spread of the models' general levels
        unseen = (1 - p) if has_options else p
        # at the model's lambda, at most the map's cap: the median of the models' lambdas (posterior.lambda_cap)
        n, eig = solver.factors([solver.pattern_of_[j]])[solver.pattern_of_[j]]
        lam_j = min(float(solver.lam_[j]), float(np.median(solver.lam_)))
        var = predictive_variance(eig, n, np.array([lam_j]), solver.noise_[[j]], eff[None])[0, 0] + unseen ** 2 * cal.spread
        # the level's part (noise / n of it) at the map's weight of the level, not the deviation's
        var += ((cal.level / cal.scale) ** 2 - 1.0) * solver.noise_[j] / n
        # no model links mcq and code (Calibration.links): the share b of the query's nearest prompts (by question)
        # outside the model's benchmark counts the models' spread at the level's weight, beyond the unseen format's
        b = float(np.mean([bench[i] == bench_of[mt.model] for i in nearest]))
        linked = (cal.level / cal.scale) ** 2 * (1 - b) ** 2 * (cal.spread - cal.region_var)
        var += max(linked - unseen ** 2 * cal.spread, 0.0)
        assert mt.variance == pytest.approx(var, rel=1e-3)
        assert 0.0 <= mt.low <= mt.probability <= mt.high <= 1.0
        # the model's own prior's part of its deviation, and the query format's prior's part (the shared one)
        own_part = float(solver.pattern_prior(solver.pattern_of_[j]) @ row[:2 * d]) - mu_u[j]
        U = float((p * solver.prior_[0] + (1 - p) * solver.prior_[1]) @ row[:2 * d]) - mu_u[j]
        logit[mt.model] = cal.a + cal.level * level[j] + cal.specific * (mt.score - level[j] - own_part) \
            + cal.shared * U
    # on the share of the nearest prompts outside a model's benchmark, its score is that benchmark's average
    # model's (Calibration.centres: the mean of its models' vectors, so the mean of their scores); K is the logit's
    # query-only constant (the query format's prior part)
    assert len(got) == len(om.models) and cal.centres is not None
    K = cal.a + cal.shared * float((p * solver.prior_[0] + (1 - p) * solver.prior_[1]) @ row[:2 * d])
    average = {g: np.mean([logit[m] - K for m in logit if bench_of[m] == g]) for g in ("code", "mcq")}
    for mt in got:
        off = [bench[i] for i in nearest if bench[i] != bench_of[mt.model]]
        b = 1 - len(off) / len(nearest)
        centred = K + max(b, posterior.TIE_BREAK) * (logit[mt.model] - K) + sum(average[g] for g in off) / len(nearest)
        assert mt.probability == pytest.approx(1 / (1 + np.exp(-centred)), abs=1e-5), mt.model
    assert [m.probability for m in got] == sorted((m.probability for m in got), reverse=True)
    lcb = find_models([request], top=3, store=store, vectors=vectors, rank="lcb")
    everyone = sorted(got, key=lambda m: m.search_score - posterior.Z_INTERVAL * cal.specific * np.sqrt(m.variance),
                      reverse=True)
    assert [m.model for m in lcb] == [m.model for m in everyone[:3]]
