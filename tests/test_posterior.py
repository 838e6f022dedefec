"""indexer.posterior: the stored posterior factors of a coverage pattern (SQLite and PostgreSQL round trip), the
calibration map, and the exactness rule of the lower-bound ranking."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from indexer import posterior, represent
from indexer.records import Outcome, SourceBatch, SourceInfo
from indexer.solver import HyperplaneSolver
from indexer.store.sql import ModelVector


def _fit(seed=0, N=40, d=6, M=4, free=2):
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(N, d))
    D[:, : d - free] /= np.linalg.norm(D[:, : d - free], axis=1, keepdims=True)
    S = (rng.random((M, N)) < 0.5).astype(float)
    S[0, : N // 5] = np.nan  # a second coverage pattern
    return D, S, HyperplaneSolver(intercept=True, select="gcv", prior="mean", free=free).fit(D, S)


def _stored(store, D, solver, **save):
    """(space, names, patterns, vectors) of ``solver``'s models saved into ``store`` (their results a table of three
    prompts each, in an ``auto-mean`` space), with ``save`` passed on to ``save_model_vectors``."""
    names = [f"org/m{i}" for i in range(len(solver.model_ids_))]
    store.ingest(SourceBatch(SourceInfo("table", "/x", "r1"), {}, [
        Outcome(m, "b", f"prompt {j}", 1.0, prompt_id=str(j)) for m in names for j in range(3)]))
    space = store.get_or_create_space("enc@1", D.shape[1] + 1, 1.0, 0.0, method="auto-mean",
                                      params={"intercept": True, "select": "gcv", "prior": "mean", "free": 2})
    posts = posterior.pattern_posteriors(solver, D)
    vecs = [ModelVector(m, np.append(solver.normals_[i], solver.intercept_[i]).astype(np.float32), 3,
                        pattern=posts[solver.pattern_of_[i]].key, lam=float(solver.lam_[i]),
                        noise=float(solver.noise_[i])) for i, m in enumerate(names)]
    store.save_model_vectors(space.id, vecs, patterns=posts.values(), **save)
    return space, names, posts, vecs


def test_stored_factors_give_the_solvers_variance(store):
    """float32 storage, only the eigenvectors with a non-zero eigenvalue kept (N < d leaves the rest 0): the
    variance from the loaded factors equals the solver's to float32 precision."""
    D, S, solver = _fit(N=6, d=10, free=2)  # 6 prompts: rank <= 5 of the 8 penalised directions
    space, names, posts, vecs = _stored(store, D, solver, calibration=posterior.Calibration(0.1, 2.5, 100, spread=0.07),
                                        calibration_models=4)
    loaded = store.load_patterns(space.id)
    assert set(loaded) == {p.key for p in posts.values()}
    assert all(p.V.shape[1] < p.V.shape[0] for p in loaded.values())  # truncated to the non-zero eigenvalues
    Q = np.random.default_rng(3).normal(size=(6, D.shape[1]))
    want = solver.predictive_variance(Q)
    stored = {mv.model: mv for mv in store.load_model_vectors(space.id)}
    for i, m in enumerate(names):
        mv = stored[m]
        post = loaded[mv.pattern]
        got = posterior.score_variance(post, [mv.lam], [mv.noise], np.hstack([Q, np.ones((6, 1))]),
                                       {"intercept": True})[:, 0]
        np.testing.assert_allclose(got, want[:, i], rtol=2e-4)
    cal = store.get_space_calibration(space.id)
    assert (cal.a, cal.b, cal.n_cells, cal.n_models, cal.spread) == pytest.approx((0.1, 2.5, 100, 4, 0.07))
    # a pattern no vector refers to any more is deleted with the vectors that change
    store.save_model_vectors(space.id, [ModelVector(m, v.vector, 3, pattern="other", lam=1.0, noise=0.5)
                                        for m, v in stored.items()])
    assert store.load_patterns(space.id) == {}


def test_deleting_vectors_deletes_the_patterns_no_vector_names(store):
    """Models removed from a space (their results dropped: the pass deletes their vectors and saves none) take
    their coverage pattern along when no other vector names it, as a save does; before, the pattern stayed in SQL,
    and `taskspace publish` wrote it to patterns/<space>.parquet, a pattern no record names (11 patterns for 10 on
    the sample plus evalarena_code after a source of 4 models was dropped)."""
    D, S, solver = _fit()
    space, names, posts, vecs = _stored(store, D, solver)
    assert len(posts) == 2  # model 0 alone has the second pattern
    assert store.delete_model_vectors(space.id, [names[0]]) == 1
    assert set(store.load_patterns(space.id)) == {vecs[1].pattern} != {vecs[0].pattern}


def test_an_interval_uses_at_most_the_maps_lambda_cap():
    """A model whose lambda sat at the grid's edge (its outcomes could not tell its deviation from the population's)
    gets the interval of the map's ``lam_cap`` (the models' median lambda), not the near-zero width of its own:
    on real data such intervals held the true rate 36-57% of the time (docs/RESULTS.md, "Intervals")."""
    D, S, solver = _fit(N=40, d=6, free=2)
    posts = posterior.pattern_posteriors(solver, D)
    by_key = {p.key: p for p in posts.values()}
    space = {"intercept": True, "select": "gcv", "prior": "mean", "free": 2}
    post = posts[solver.pattern_of_[1]]
    noise = float(solver.noise_[1])
    payloads = [{"pattern": post.key, "lam": 1e4, "noise": noise}, {"pattern": post.key, "lam": 0.5, "noise": noise}]
    x = np.array(post.mu, dtype=np.float64)  # the covariates at the pattern's mean, the embedding part far from it
    x[:-2] += 3.0 * np.random.default_rng(7).normal(size=x.size - 2)
    row = np.append(x, 1.0)
    at = lambda lam: posterior.score_variance(post, [lam], [noise], row[None, :], space)[0, 0]  # noqa: E731
    load = lambda keys: {k: by_key[k] for k in keys}  # noqa: E731
    capped = posterior.Predictor(space, posterior.Calibration(0.1, 2.5, 100, lam_cap=2.0), load)
    assert capped.variance(payloads, row) == pytest.approx([at(2.0), at(0.5)])  # a lambda under the cap is kept
    own = posterior.Predictor(space, posterior.Calibration(0.1, 2.5, 100), load)  # a map stored before the cap
    assert own.variance(payloads, row) == pytest.approx([at(1e4), at(0.5)])
    assert at(2.0) > 5 * at(1e4)  # the cap is what widens it
    assert posterior.lambda_cap([1.0, 10.0, 1e4, np.nan, 0.0]) == 10.0
    assert posterior.lambda_cap([]) is None and posterior.lambda_cap([np.nan]) is None
    assert posterior.Calibration(0.1, 2.5, lam_cap=2.0).as_dict()["lam_cap"] == 2.0


def test_region_variance_is_the_model_by_benchmark_interaction_less_its_noise():
    """sigma_r^2 (:func:`posterior.region_variance`): how far a model's level on one benchmark strays from its overall
    level beyond the benchmark's own offset, in signed-score units, without the outcomes' noise (split halves):
    recovered from simulated outcomes, with prompts of one difficulty or of very different ones, and about 0 where
    every model's levels differ by the benchmark's offset alone."""
    rng = np.random.default_rng(3)
    M, G, n = 300, 6, 200
    groups = np.repeat([f"b{g}" for g in range(G)], n)
    ability = rng.normal(0.0, 0.08, size=(M, 1))
    offset = np.linspace(-0.15, 0.15, G)[None, :]

    def outcomes(r_sd, spread=0.0):
        p = np.clip(0.55 + ability + offset + rng.normal(0.0, r_sd, size=(M, G)), 0.02, 0.98)
        # prompts that differ in difficulty (as real ones do: a binomial noise model overstates a level's noise then)
        easy = rng.choice([-spread, spread], size=G * n)
        P = np.clip(np.repeat(p, n, axis=1) + easy[None, :], 0.0, 1.0)
        # the truth: the two-way residuals of the expected per-benchmark levels (every model has every benchmark)
        d = (2.0 * P - 1.0).reshape(M, G, n).mean(axis=2)
        d = d - d.mean(axis=1, keepdims=True)
        return (rng.random((M, G * n)) < P).astype(float), float(np.mean((d - d.mean(axis=0)) ** 2))

    S, truth = outcomes(0.06, spread=0.35)
    assert truth > 0.005 and posterior.region_variance(S, groups) == pytest.approx(truth, rel=0.1)
    S, truth = outcomes(0.0, spread=0.35)  # (the clipping at 0 and 1 alone makes a small interaction)
    assert posterior.region_variance(S, groups) == pytest.approx(truth, abs=5e-4)
    S, truth = outcomes(0.06)
    # the truth: 4 var(r) (signed scores are 2 s - 1), less what the two-way fit absorbs ((M-1)(G-1) / (M G) of it)
    assert truth == pytest.approx(4 * 0.06 ** 2 * (5 / 6), rel=0.1)
    assert posterior.region_variance(S, groups) == pytest.approx(truth, rel=0.1)
    assert posterior.region_variance(outcomes(0.0)[0], groups) < 0.0005  # noise alone: none
    S[:, :n] = np.nan  # a benchmark nobody has, and models with too few cells on one, are left out
    S[:10, n:n + 190] = np.nan
    assert posterior.region_variance(S, groups) == pytest.approx(4 * 0.06 ** 2 * (4 / 5), rel=0.2)
    assert posterior.region_variance(np.full((3, 4), np.nan), np.array(list("abcd"))) == 0.0


def test_region_variance_is_not_diluted_by_models_measured_on_one_benchmark():
    """Models with outcomes on one benchmark only (a lm-eval upload of one task; metabench_openllm's anonymous
    matrices) carry no evidence of how a model's level moves between benchmarks: adding 3,000 of them leaves
    :func:`posterior.region_variance` as it was. Before, each counted as a pair without interaction (its level there
    is its overall level), and the variance fell with their share (here to about a third; in a home of the sample,
    evalarena_code and metabench_openllm from 0.0033 to 0.00007, every interval far from a model's evidence under a
    point wide); alone they give 0, as before."""
    rng = np.random.default_rng(5)
    M, G, n = 300, 6, 100
    groups = np.repeat([f"b{g}" for g in range(G)], n)
    p = np.clip(0.55 + rng.normal(0.0, 0.08, (M, 1)) + rng.normal(0.0, 0.08, (M, G)), 0.02, 0.98)
    S = (rng.random((M, G * n)) < np.repeat(p, n, axis=1)).astype(float)
    before = posterior.region_variance(S, groups)
    assert before > 0.01
    single = np.full((3000, G * n), np.nan)
    for i in range(single.shape[0]):
        g = i % G
        single[i, g * n:(g + 1) * n] = rng.random(n) < rng.uniform(0.2, 0.9)
    assert posterior.region_variance(np.vstack([S, single]), groups) == pytest.approx(before, rel=0.05)
    assert posterior.region_variance(single, groups) == 0.0


def test_an_interval_widens_by_the_region_term_where_the_model_has_no_evidence():
    """A coverage-aware map's ``region_var``: a model observed on none of the query's nearest prompts (share c = 0)
    gets ``(level / specific)^2 region_var`` more variance, one observed on all of them none, and a share between
    ``(1 - c)^2`` of it; the search passes the shares (:func:`indexer.query.coverage_ranked`), a map without it adds
    nothing."""
    D, S, solver = _fit(N=40, d=6, free=2)
    posts = posterior.pattern_posteriors(solver, D)
    by_key = {p.key: p for p in posts.values()}
    space = {"intercept": True, "select": "gcv", "prior": "mean", "free": 2, "levels": represent.LEVELS}
    post = posts[solver.pattern_of_[1]]
    payloads = [{"pattern": post.key, "lam": 0.5, "noise": float(solver.noise_[1])}] * 3
    row = np.append(np.array(post.mu, dtype=np.float64), [1.0, 0.0, 0.0])  # a row of a space with levels ends 0, 0
    load = lambda keys: {k: by_key[k] for k in keys}  # noqa: E731
    cal = posterior.Calibration(0.1, 2.0, 100, level=3.0, specific=2.0, shared=1.0, uncovered=0.5, region_var=0.04)
    pred = posterior.Predictor(space, cal, load)
    base = pred.variance(payloads, row)
    with_c = pred.variance(payloads, row, coverage=np.array([1.0, 0.5, 0.0]))
    assert with_c - base == pytest.approx([0.0, (3.0 / 2.0) ** 2 * 0.25 * 0.04, (3.0 / 2.0) ** 2 * 0.04])
    no_region = posterior.Predictor(space, dataclasses.replace(cal, region_var=None), load)
    assert no_region.variance(payloads, row, coverage=np.array([1.0, 0.5, 0.0])) == pytest.approx(base)
    lo0, hi0 = pred.interval(np.zeros(3), base)
    lo1, hi1 = pred.interval(np.zeros(3), with_c)
    assert (hi1 - lo1)[2] > (hi1 - lo1)[1] > (hi1 - lo1)[0] == pytest.approx((hi0 - lo0)[0])
    assert cal.as_dict()["region_var"] == 0.04
    assert posterior.Calibration(0.1, 2.0).region_term(0.0) == 0.0  # the plain map: none


def test_benchmark_links_are_the_groups_of_benchmarks_models_connect():
    """Two benchmarks are linked when one model was observed on both, or through a chain of such models: a model on
    a and b, one on b and c, one on d alone, one on e and f give the groups (a, b, c), (d,), (e, f), each sorted; a
    model with one NaN-free cell of a benchmark links it as much as one with all; when every benchmark is linked
    there is one group and nothing to store (None), and the benchmarks' order of prompts does not matter."""
    groups = np.array(["b", "a", "a", "b", "c", "c", "d", "d", "e", "f"])
    S = np.full((4, groups.size), np.nan)
    S[0, [0, 1]] = 1.0  # b, a
    S[1, [3, 5]] = 0.0  # b, c (one cell of c)
    S[2, [6, 7]] = 1.0  # d alone
    S[3, [8, 9]] = 0.5  # e, f
    assert posterior.benchmark_links(S, groups) == (("a", "b", "c"), ("d",), ("e", "f"))
    order = np.random.default_rng(0).permutation(groups.size)
    assert posterior.benchmark_links(S[:, order], groups[order]) == (("a", "b", "c"), ("d",), ("e", "f"))
    S[2, 9] = 1.0  # the d model observed on f too: d joins e and f
    assert posterior.benchmark_links(S, groups) == (("a", "b", "c"), ("d", "e", "f"))
    S[1, 6] = 0.0  # and the b/c model on d: all linked
    assert posterior.benchmark_links(S, groups) is None
    assert posterior.benchmark_links(S[:, :2], groups[:2]) is None  # one benchmark: one group


def test_an_interval_widens_to_the_spread_where_nothing_links_the_query_to_the_models_benchmarks():
    """A map with :attr:`Calibration.links`: a model gets ``(level / specific)^2 (1 - b)^2 (spread - region_var)``
    more variance, ``b`` the share of the query's nearest prompts in a benchmark linked to one of its own (nothing
    near its group: b = 0, all of it; a model of both groups, or of a benchmark the map does not know, none), on top
    of the region term, so one with no evidence near an unlinked query has the models' spread in all; no links, no
    neighbourhood or the plain map: nothing added."""
    D, S, solver = _fit(N=40, d=6, free=2)
    posts = posterior.pattern_posteriors(solver, D)
    by_key = {p.key: p for p in posts.values()}
    space = {"intercept": True, "select": "gcv", "prior": "mean", "free": 2, "levels": represent.LEVELS}
    post = posts[solver.pattern_of_[1]]
    benches = [["law"], ["code"], ["law", "code"], ["new"], []]
    payloads = [{"pattern": post.key, "lam": 0.5, "noise": float(solver.noise_[1]), "benchmarks": b} for b in benches]
    row = np.append(np.array(post.mu, dtype=np.float64), [1.0, 0.0, 0.0])
    load = lambda keys: {k: by_key[k] for k in keys}  # noqa: E731
    cal = posterior.Calibration(0.1, 2.0, 100, spread=0.3, level=3.0, specific=2.0, shared=1.0, uncovered=0.5,
                                region_var=0.04, links=(("code", "humaneval"), ("law", "math")))
    pred = posterior.Predictor(space, cal, load)
    base = pred.variance(payloads, row)  # no neighbourhood known: nothing added
    pred.near_benchmarks = [["humaneval"], ["code"], ["code", "math"], ["math"]]  # 3 of 4 in code's group
    linked = cal.linked_shares([p["benchmarks"] for p in payloads], pred.near_benchmarks)
    assert linked.tolist() == [0.5, 0.75, 1.0, 1.0, 1.0]
    got = pred.variance(payloads, row)
    unit = (3.0 / 2.0) ** 2 * (0.3 - 0.04)
    assert got - base == pytest.approx([0.25 * unit, 0.0625 * unit, 0.0, 0.0, 0.0])
    pred.near_benchmarks = [["humaneval"], ["code"]]  # nothing near law's group
    far = pred.variance(payloads, row, coverage=np.zeros(5))
    assert far[0] - base[0] == pytest.approx((3.0 / 2.0) ** 2 * 0.3)  # region term + unlinked term: the spread
    assert posterior.Predictor(space, dataclasses.replace(cal, links=None), load).variance(payloads, row) == \
        pytest.approx(base)
    assert posterior.Calibration(0.1, 2.0, links=cal.links).unlinked_term(0.0) == 0.0  # the plain map: none
    assert cal.as_dict()["links"] == [["code", "humaneval"], ["law", "math"]]
    assert pred.link_aware and not posterior.Predictor(space, dataclasses.replace(cal, links=None), load).link_aware


def test_calibration_fits_a_logistic_map_and_falls_back_when_it_cannot():
    rng = np.random.default_rng(1)
    score = rng.normal(size=4000)
    truth = 1 / (1 + np.exp(-(0.3 + 1.7 * score)))
    y = (rng.random(4000) < truth).astype(float)
    cal = posterior.fit_calibration(score, y)
    assert (cal.a, cal.b) == pytest.approx((0.3, 1.7), abs=0.15)
    graded = posterior.fit_calibration(score, truth)  # graded outcomes: s of a success, 1 - s of a failure
    assert (graded.a, graded.b) == pytest.approx((0.3, 1.7), abs=0.02)
    p = cal.probability(np.array([-50.0, 0.0, 50.0]))
    assert p[0] == pytest.approx(0.0, abs=1e-12) and p[2] == pytest.approx(1.0) and 0 < p[1] < 1
    lo, hi = cal.interval(np.array([0.2]), np.array([0.04]))
    assert lo[0] < cal.probability(0.2) < hi[0]
    assert posterior.fit_calibration(score[:5], y[:5]) == posterior.Calibration(0.0, 2.0, 5)
    S = np.array([[1.0, 0.0, np.nan], [1.0, 1.0, 1.0], [0.0, np.nan, 0.0]])  # levels 0, 1, -1
    assert posterior.level_spread(S) == pytest.approx(1.0)
    assert posterior.fit_calibration(score, np.ones_like(score)).b == 2.0  # one class only

    # held-out scores that fall as success rises (a tiny index): never a decreasing map, the base rate instead
    rev = posterior.fit_calibration(-score, y)
    assert rev.b == 0.0 and rev.probability(np.array([-3.0, 3.0])) == pytest.approx([y.mean(), y.mean()])
    lo, hi = rev.interval(np.array([0.5]), np.array([0.3]))
    assert lo[0] <= hi[0]


def test_loo_cells_are_the_leave_one_out_predictions():
    D, S, solver = _fit(seed=2, N=30, d=5, free=0)
    prompts = np.array([3, 11, 20])
    scores, outcomes = posterior.loo_cells(solver, D, S, prompts)
    k = 0
    for i in range(S.shape[0]):
        for j in prompts:
            if np.isnan(S[i, j]):
                continue
            s_minus = S[i].copy()
            s_minus[j] = np.nan  # refit without the cell, at the model's own lambda and the same prior
            again = HyperplaneSolver(intercept=True, lambdas=[solver.lam_[i]], select="gcv",
                                     prior=solver.prior_).fit(D, s_minus[None])
            assert scores[k] == pytest.approx(again.predict(D[j])[0, 0], abs=1e-8)
            assert outcomes[k] == S[i, j]
            k += 1
    assert k == scores.size


def test_the_lower_bound_ranking_is_exact_only_when_no_unfetched_model_can_enter():
    lower = np.array([0.5, 0.4, 0.1])
    assert posterior.lcb_candidates_exact(lower, lower, 2, next_score=0.3)  # the 2nd best bound 0.4 >= 0.3
    assert not posterior.lcb_candidates_exact(lower, lower, 3, next_score=0.3)  # 0.1 < 0.3: a model may enter
    assert posterior.lcb_candidates_exact(lower, lower, 3, next_score=None)  # everything fetched


def test_loo_cells_of_a_model_fitted_exactly_are_its_outcomes_without_a_warning():
    """A model with one outcome on every prompt is fitted exactly (residual variance 0): its leverages are 0, not
    0/0, so its held-out cells are its outcomes and no RuntimeWarning escapes."""
    import warnings

    D, S, _ = _fit(seed=3, N=30, d=5, free=0)
    S = S.copy()
    S[0] = 1.0  # every observed cell of model 0 a success
    solver = HyperplaneSolver(intercept=True, select="gcv").fit(D, S)
    assert solver.noise_[0] == pytest.approx(0.0, abs=1e-12)
    prompts = np.arange(10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        scores, outcomes = posterior.loo_cells(solver, D, S, prompts)
    assert np.isfinite(scores).all()
    assert scores[:10] == pytest.approx(np.ones(10))  # model 0's cells come first: y = +1, predicted exactly


def test_a_calibration_without_signal_gives_no_interval():
    """A map whose held-out cells showed no rise of success with the score gives every model the base rate; an
    interval of no width ("47% (47%-47%)") would claim a certainty nothing measured, so there is none."""
    rng = np.random.default_rng(4)
    score = rng.normal(size=2000)
    y = (rng.random(2000) < 1 / (1 + np.exp(-2 * score))).astype(float)
    cal, rev = posterior.fit_calibration(score, y), posterior.fit_calibration(-score, y)
    assert cal.informative and not rev.informative
    assert not posterior.Calibration(0.1, 0.0, level=0.0, specific=0.0, shared=0.0).informative
    assert posterior.Calibration(0.1, 0.5, level=0.0, specific=0.5, shared=0.0).informative

    scores, var = np.array([0.2, -0.4]), np.array([0.1, 0.3])
    flat = posterior.Predictor({}, rev, lambda keys: {})
    lo, hi = flat.interval(scores, var)
    assert not flat.signal and np.isnan(lo).all() and np.isnan(hi).all()
    assert flat.probability(scores) == pytest.approx([y.mean(), y.mean()])
    sharp = posterior.Predictor({}, cal, lambda keys: {})
    lo, hi = sharp.interval(scores, var)
    assert sharp.signal and (lo < sharp.probability(scores)).all() and (sharp.probability(scores) < hi).all()


def test_slopes_fitted_to_chance_are_not_signal():
    """Held-out cells whose outcomes are coin flips (6 models x 60 prompts) give slopes by chance; before the
    likelihood-ratio gate they were kept (level 0.75, shared 0.62 here: LR 7.3 on 2 slopes), and a search on such an
    index claimed a calibrated signal with probabilities from 0.32 to 0.66. Now the map is the base rate; the same
    cells with outcomes that follow the score keep their slopes."""
    rng = np.random.default_rng(3)
    level = np.repeat(rng.normal(0, 0.2, 6), 60)
    deviation, shared = rng.normal(0, 0.5, 360), rng.normal(0, 0.3, 360)
    coin = rng.integers(0, 2, 360).astype(float)
    cal = posterior.fit_level_calibration(level, deviation, shared, coin)
    assert (cal.level, cal.specific, cal.shared) == (0.0, 0.0, 0.0) and not cal.informative
    assert 1 / (1 + np.exp(-cal.a)) == pytest.approx(coin.mean())  # every model's logit is the base rate's
    plain = posterior.fit_calibration(deviation, coin)
    assert plain.b == 0.0 and not plain.informative

    real = (rng.random(360) < 1 / (1 + np.exp(-(2 * level + 2 * deviation)))).astype(float)
    cal = posterior.fit_level_calibration(level, deviation, shared, real)
    assert cal.informative and cal.specific > 0.5
    assert posterior.fit_calibration(level + deviation, real).informative


# -- tests added by the mutation audit of 2026-12-06 (docs/TESTING.md, "Mutation audit"): each kills a mutant the
# -- targeted tests let through


def test_the_level_term_counts_the_level_at_the_maps_weight_of_it():
    """A folded map's level term is ``((level / scale)^2 - 1) noise / n``: the posterior already holds the level's
    ``noise / n`` once, at the deviation's scale; the plain map adds nothing."""
    cal = posterior.Calibration(0.1, 2.0, level=3.0, specific=2.0, shared=1.0)
    noise, n = np.array([0.2, 0.5]), np.array([10, 40])
    assert cal.level_term(noise, n) == pytest.approx(((3.0 / 2.0) ** 2 - 1.0) * noise / n)
    same = posterior.Calibration(0.1, 2.0, level=2.0, specific=2.0, shared=1.0)  # level weighed as the deviation
    assert same.level_term(noise, n) == pytest.approx([0.0, 0.0])
    assert posterior.Calibration(0.1, 2.0).level_term(noise, n) == pytest.approx([0.0, 0.0])


def test_a_fold_with_an_uncovered_weight_of_0_keeps_the_tie_break():
    """The uncovered map's folded query with an own-deviation weight fitted 0 still carries the raw score at
    :data:`TIE_BREAK` (as the covered one does), so models with no evidence near the query do not all tie."""
    cal = posterior.Calibration(0.1, 0.0, level=1.0, specific=0.0, shared=0.5, uncovered=0.0)
    row = np.array([0.3, -0.2, 0.5, 1.0, 0.0, 0.0])
    q, _ = cal.fold(row, None, own=0.0)
    assert q[:4] == pytest.approx(posterior.TIE_BREAK * row[:4], rel=1e-12)
    covered, _ = cal.fold(row, None)
    assert q == pytest.approx(covered)


def test_evidence_lr_is_twice_the_log_likelihood_gain_over_the_base_rate():
    """The statistic the map's chi-square gate reads (:data:`EVIDENCE_ALPHA`) is twice the log-likelihood gain, as
    the likelihood-ratio test needs; graded outcomes count ``s`` of a success and ``1 - s`` of a failure."""
    rng = np.random.default_rng(7)
    z, o = rng.normal(size=300), rng.random(300)
    p, rate = 1 / (1 + np.exp(-z)), o.mean()
    fit = np.sum(o * np.log(p) + (1 - o) * np.log(1 - p))
    base = np.sum(o * np.log(rate) + (1 - o) * np.log(1 - rate))
    assert posterior.evidence_lr(z, o) == pytest.approx(2.0 * (fit - base), rel=1e-10)


def test_the_own_deviation_is_weighed_apart_only_over_enough_uncovered_cells():
    """Uncovered cells under :data:`COVERAGE_MIN_CELLS` (150 of 6,000 here, 2.5%: above the share) give the map one
    weight (``uncovered`` None) however differently they behave; 400 of them give it its second weight."""
    rng = np.random.default_rng(5)
    n = 6000
    level, dev = np.repeat(rng.normal(0, 0.3, 60), 100), rng.normal(0, 0.6, n)
    for gap, split in ((150, False), (400, True)):
        c = np.ones(n)
        c[:gap] = 0.0
        logit = 1.0 * level + 2.0 * dev * c  # uncovered cells: the own deviation says nothing
        o = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
        cal = posterior.fit_level_calibration(level, dev, None, o, coverage=c)
        assert (cal.uncovered is not None) == split, (gap, cal)


def test_the_bend_rises_at_least_its_minimum_slope_on_flat_cells():
    """On cells whose success does not depend on the logit (the isotonic fit flat up to noise) every segment of the
    bend still rises :data:`BEND_MIN_SLOPE` per unit of ``z``: no ties, no interval of no width."""
    rng = np.random.default_rng(2)
    z = rng.normal(size=8000)
    o = (rng.random(8000) < 0.4).astype(float)
    xs, L = (np.asarray(k) for k in posterior.fit_bend(z, o, knots=6))
    assert len(xs) >= 3
    assert (np.diff(L) >= posterior.BEND_MIN_SLOPE * np.diff(xs) - 1e-12).all(), (xs, L)


def test_region_variance_of_outcomes_without_interaction_is_never_negative():
    """Coin-flip outcomes have no model x benchmark interaction; the split-half estimate is then noise around 0 and
    comes out negative for some cuts (seeds 2 and 4 here): a variance, it is 0 there."""
    groups = np.repeat(["a", "b"], 40)
    for seed in range(5):
        S = (np.random.default_rng(seed).random((30, 80)) < 0.5).astype(float)
        assert posterior.region_variance(S, groups, min_cells=20) >= 0.0, seed
    S = (np.random.default_rng(2).random((30, 80)) < 0.5).astype(float)
    assert posterior.region_variance(S, groups, min_cells=20) == 0.0


def test_the_lower_bound_ranking_is_exact_when_the_kth_bound_ties_the_next_score():
    """An unfetched model's bound is at most ``next_score``: a k-th bound equal to it cannot be beaten."""
    lower = np.array([0.5, 0.3, 0.1])
    assert posterior.lcb_candidates_exact(lower, lower, 2, next_score=0.3)


def test_a_never_observed_answer_format_and_unlinked_benchmarks_count_the_larger_of_their_two_terms(monkeypatch):
    """Both terms are the spread of a level nothing in the index relates to the model's (a format it was never observed
    in, :meth:`Predictor._unseen`; benchmarks no model links to the query's, :meth:`Calibration.unlinked_term`): where
    both apply, the variance adds the larger, not their sum; with no neighbourhood the format's term alone."""
    D, S, solver = _fit(N=40, d=6, free=2)
    posts = posterior.pattern_posteriors(solver, D)
    by_key = {p.key: p for p in posts.values()}
    space = {"intercept": True, "select": "gcv", "prior": "mean", "free": 2, "levels": represent.LEVELS}
    post = posts[solver.pattern_of_[1]]
    payloads = [{"pattern": post.key, "lam": 0.5, "noise": float(solver.noise_[1]), "benchmarks": ["law"]}]
    row = np.append(np.array(post.mu, dtype=np.float64), [1.0, 0.0, 0.0])
    cal = posterior.Calibration(0.1, 2.0, 100, spread=0.3, level=3.0, specific=2.0, shared=1.0, uncovered=0.5,
                                region_var=0.04, links=(("code", "humaneval"), ("law", "math")))
    unlinked = (3.0 / 2.0) ** 2 * (0.3 - 0.04)  # b = 0: nothing near law's group
    for unseen in (0.0, 0.5 * unlinked, 2.0 * unlinked):
        monkeypatch.setattr(posterior.Predictor, "_unseen", lambda self, p, r, u=unseen: u)
        pred = posterior.Predictor(space, cal, lambda keys: {k: by_key[k] for k in keys})
        alone = pred.variance(payloads, row)[0]  # no neighbourhood known: the format's term alone
        monkeypatch.setattr(posterior.Predictor, "_unseen", lambda self, p, r: 0.0)
        none = posterior.Predictor(space, cal, lambda keys: {k: by_key[k] for k in keys}).variance(payloads, row)[0]
        assert alone - none == pytest.approx(unseen)
        pred.near_benchmarks = [["humaneval"], ["code"]]
        monkeypatch.setattr(posterior.Predictor, "_unseen", lambda self, p, r, u=unseen: u)
        assert pred.variance(payloads, row)[0] - none == pytest.approx(max(unseen, unlinked))
