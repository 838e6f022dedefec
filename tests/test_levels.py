"""The level/deviation calibration (indexer.posterior.fit_level_calibration, heldout_cells, Calibration.fold) and the
level coordinates of a space's model vectors (indexer.represent.has_levels, levels, index_vectors): the folded
query ranks as the probabilities do, the query scaling is what the map says, the fit recovers known coefficients,
the level coordinates are incremental (equal to a fit from scratch), the store keeps the coefficients."""

from __future__ import annotations

import numpy as np
import pytest

from indexer import posterior, represent
from indexer.solver import HyperplaneSolver
from indexer.space import SpaceSpec, space_params

LEVELS = {"intercept": True, "select": "gcv", "prior": "mean", "levels": represent.LEVELS}  # auto-mean + levels


def _data(seed=0, N=80, d=8, M=12):
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(N, d))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    skill = rng.normal(size=M)
    W = rng.normal(size=(M, d))
    logit = skill[:, None] + 0.8 * (W @ D.T) + 0.5 * rng.normal(size=(M, N))
    S = (rng.random((M, N)) < 1 / (1 + np.exp(-logit))).astype(float)
    S[0, : N // 4] = np.nan  # a second coverage pattern
    S[1, N // 2:] = np.nan  # a third
    return D, S


def _spec():
    return SpaceSpec("enc@1", 1.0, 0.0, "auto-mean", LEVELS, 8 + 1 + 2)


def test_level_coordinates_are_the_models_mean_outcome_and_the_prior_at_their_pattern_mean():
    D, S = _data()
    solver = HyperplaneSolver(intercept=True, select="gcv", prior="mean").fit(D, S)
    V = represent.index_vectors(solver, D, LEVELS)
    assert V.shape == (S.shape[0], D.shape[1] + 1 + 2) == (S.shape[0], represent.index_dim(8, LEVELS))
    np.testing.assert_allclose(V[:, -2], np.nanmean(2 * S - 1, axis=1))  # the level: mean signed outcome
    for i in range(S.shape[0]):
        mu = D[~np.isnan(S[i])].mean(axis=0)
        assert V[i, -1] == pytest.approx(float(solver.prior_ @ mu))  # u . mu_i
    # the raw score is unchanged: index rows end [.., 1, 0, 0]
    rows = represent.add_intercept(D[:5], LEVELS)
    np.testing.assert_array_equal(rows[:, -2:], 0.0)
    np.testing.assert_allclose(V @ rows.T, solver.predict(D[:5]).T, atol=1e-10)
    assert represent.strip_levels(rows, LEVELS).shape[1] == D.shape[1] + 1
    np.testing.assert_allclose(represent.effective_rows(rows, np.zeros(8), (True, True), LEVELS), D[:5])


def test_level_coordinates_are_incremental_like_the_normals():
    """Models added one chunk at a time toward the held-fixed prior give the vectors of one fit toward it."""
    D, S = _data(1)
    full = HyperplaneSolver(intercept=True, select="gcv", prior="mean").fit(D, S)
    inc = HyperplaneSolver(intercept=True, select="gcv", prior=full.prior_).prepare(D)
    for lo in range(0, S.shape[0], 5):
        inc.add_models(S[lo:lo + 5], model_ids=list(range(lo, min(lo + 5, S.shape[0]))))
    np.testing.assert_allclose(represent.index_vectors(inc, D, LEVELS), represent.index_vectors(full, D, LEVELS),
                               atol=1e-9)


def test_the_fit_recovers_known_coefficients_and_keeps_them_non_negative():
    rng = np.random.default_rng(2)
    n = 40000
    level, dev, shared = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    logit = -0.3 + 2.0 * level + 0.5 * (dev - shared) + 3.0 * shared
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
    cal = posterior.fit_level_calibration(level, dev, shared, y, spread=0.1)
    assert cal.folded and cal.n_cells == n and cal.spread == 0.1
    assert (cal.a, cal.level, cal.specific, cal.shared) == pytest.approx((-0.3, 2.0, 0.5, 3.0), abs=0.08)
    assert cal.b == cal.specific
    # a deviation that goes against the outcome carries no information: fixed at 0, the rest refitted
    y2 = (rng.random(n) < 1 / (1 + np.exp(-(2.0 * level - 0.7 * dev)))).astype(float)
    cal2 = posterior.fit_level_calibration(level, dev, None, y2)
    assert cal2.specific == 0.0 and cal2.shared == 0.0 and 1.5 < cal2.level < 2.0  # (the omitted deviation attenuates it)
    # too few cells: the plain map of the raw score, in the folded form
    few = posterior.fit_level_calibration(level[:5], dev[:5], None, y[:5])
    assert few.folded and few.level == few.specific == few.shared == few.b


def test_the_folded_query_ranks_as_the_probabilities_and_gives_the_maps_logit():
    D, S = _data(3)
    spec = _spec()
    solver = spec.solver().fit(D, S)
    cal = posterior.fit_level_calibration(*posterior.heldout_cells(spec.solver, D, S, spec))
    assert cal.folded and cal.n_cells > 0
    V = represent.index_vectors(solver, D, spec)
    level, mu_u = represent.levels(solver)
    u = solver.prior_
    for row in represent.add_intercept(np.random.default_rng(4).normal(size=(5, 8)), spec):
        q, offset = cal.fold(row, u)
        # the query scaling: every coordinate times `specific`, the two level coordinates set by the map
        np.testing.assert_allclose(q[:-2], cal.specific * row[:-2])
        assert (q[-2], q[-1]) == pytest.approx((cal.level - cal.specific, -(cal.shared - cal.specific)))
        assert offset == pytest.approx((cal.shared - cal.specific) * float(u @ row[:8]))
        scores = V @ q  # what Qdrant returns for the folded query
        p = cal.probability(scores, offset)
        raw = V @ row
        U = float(u @ row[:8]) - mu_u
        want = cal.a + cal.level * level + cal.specific * (raw - level - U) + cal.shared * U
        np.testing.assert_allclose(p, 1 / (1 + np.exp(-want)), atol=1e-12)
        assert list(np.argsort(-scores, kind="stable")) == list(np.argsort(-p, kind="stable"))
        # the interval of a folded score: its sd is `specific` times the raw score's
        lo, hi = cal.interval(scores, np.full(len(scores), 0.04), offset=offset)
        np.testing.assert_allclose(lo, cal.probability(scores - posterior.Z_INTERVAL * cal.specific * 0.2, offset))
        assert (lo <= p).all() and (p <= hi).all()
    plain = posterior.Calibration(0.1, 2.0)
    q, offset = plain.fold(row, u)
    assert not plain.folded and offset == 0.0 and np.array_equal(q, row)


def test_coverage_weighs_the_own_deviation_apart_where_models_have_no_evidence_near():
    """Cells with coverage c: the own deviation predicts the outcome with weight 1.5 where the model was observed near
    the prompt (c = 1) and 0.3 where not (c = 0); the fit recovers both. Too few uncovered cells, or an uncovered
    weight above the covered one, give one weight (``uncovered`` None), as without coverage."""
    rng = np.random.default_rng(7)
    n = 60000
    level, dev, shared = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    c = (rng.random(n) < 0.7).astype(float)
    logit = 0.2 + 2.0 * level + (1.5 * c + 0.3 * (1 - c)) * (dev - shared) + 3.0 * shared
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
    cal = posterior.fit_level_calibration(level, dev, shared, y, coverage=c)
    assert (cal.a, cal.level, cal.specific, cal.uncovered, cal.shared) == pytest.approx((0.2, 2.0, 1.5, 0.3, 3.0),
                                                                                         abs=0.08)
    assert cal.coverage_aware and cal.as_dict()["uncovered"] == cal.uncovered
    one = posterior.fit_level_calibration(level, dev, shared, y)
    assert one.uncovered is None and not one.coverage_aware and 0.3 < one.specific < 1.5
    few = np.ones(n)
    few[:100] = 0.0  # 100 uncovered cells: fewer than COVERAGE_MIN_CELLS
    assert posterior.fit_level_calibration(level, dev, shared, y, coverage=few).uncovered is None
    flip = (rng.random(n) < 1 / (1 + np.exp(-(2.0 * level + (0.3 * c + 1.5 * (1 - c)) * (dev - shared))))).astype(float)
    assert posterior.fit_level_calibration(level, dev, shared, flip, coverage=c).uncovered is None


def test_coverage_shares_and_the_folded_query_with_the_uncovered_weight():
    Zs = np.eye(4)[[0, 0, 1, 2, 3]]  # five source prompts; query 0 is nearest to the first two
    Zq = np.array([[1.0, 0.1, 0, 0], [0, 0, 0.2, 1.0]])
    Zq /= np.linalg.norm(Zq, axis=1, keepdims=True)
    observed = np.array([[1, 1, 0, 0, 0], [0, 1, 1, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)
    got = posterior.coverage_shares(Zq, Zs, observed, k=2)  # query 1's two nearest: prompts 4 and 3
    np.testing.assert_allclose(got, [[1.0, 0.0], [0.5, 1.0], [0.0, 0.0]])
    D, S = _data(3)
    spec = _spec()
    solver = spec.solver().fit(D, S)
    cal = posterior.Calibration(0.1, 1.2, 100, level=2.0, specific=1.2, shared=2.5, uncovered=0.4)
    V = represent.index_vectors(solver, D, spec)
    level, mu_u = represent.levels(solver)
    row = represent.add_intercept(np.random.default_rng(4).normal(size=(1, 8)), spec)[0]
    q0, off0 = cal.fold(row, solver.prior_, own=cal.uncovered)
    raw, U = V @ row, float(solver.prior_ @ row[:8]) - mu_u
    want = cal.a + cal.level * level + 0.4 * (raw - level - U) + cal.shared * U
    np.testing.assert_allclose(cal.a + off0 + V @ q0, want, atol=1e-12)
    pred = posterior.Predictor(spec, cal, lambda keys: {}, prior=solver.prior_)
    pred.fold(row)
    qu, shift = pred.fold_uncovered(row)
    np.testing.assert_allclose(pred.probability(V @ qu + shift), 1 / (1 + np.exp(-want)), atol=1e-6)
    assert pred.coverage_aware and pred.offset == pytest.approx(cal.fold(row, solver.prior_)[1])
    assert not posterior.Predictor(spec, posterior.Calibration(0.1, 1.2, 100, level=2.0, specific=1.2, shared=2.5),
                                   lambda keys: {}, prior=solver.prior_).coverage_aware


def test_heldout_cells_give_each_cells_coverage():
    """With coverage: a model that lacks the training prompts nearest a held-out prompt has coverage 0 there."""
    D, S = _data(5)
    spec = _spec()
    plain = posterior.heldout_cells(spec.solver, D, S, spec, folds=2)
    level, dev, shared, out, cov = posterior.heldout_cells(spec.solver, D, S, spec, folds=2, with_coverage=True)
    for a, b in zip(plain, (level, dev, shared, out)):
        np.testing.assert_array_equal(a, b)
    assert cov.shape == out.shape and ((cov >= 0) & (cov <= 1)).all()
    assert (cov == 1).mean() > 0.5 and (cov < 1).any()  # models 0 and 1 lack a quarter and a half of the prompts


def test_heldout_cells_hold_whole_prompts_out():
    """A prompt whose outcomes no fit saw: with one model set to always succeed on it, the held-out deviation there
    is not the in-sample fit's (the prior does not know the prompt)."""
    D, S = _data(5)
    spec = _spec()
    level, dev, shared, out = posterior.heldout_cells(spec.solver, D, S, spec, folds=2)
    assert level.shape == dev.shape == shared.shape == out.shape
    assert out.size == int((~np.isnan(S)).sum())  # every observed cell once (80 prompts < the sample size)
    assert set(np.unique(out)) <= {0.0, 1.0}


def test_the_store_keeps_the_level_coefficients(store):
    space = store.get_or_create_space("enc@1", 11, 1.0, 0.0, method="auto-mean", params=LEVELS)
    cal = posterior.Calibration(0.1, 0.7, 100, spread=0.05, level=2.1, specific=0.7, shared=3.2)
    store.save_model_vectors(space.id, [], calibration=cal, calibration_models=9)
    got = store.get_space_calibration(space.id)
    assert got.folded and (got.a, got.level, got.specific, got.shared, got.n_models) == pytest.approx(
        (0.1, 2.1, 0.7, 3.2, 9))
    assert got.uncovered is None  # one weight of the own deviation (every map before migration 0007)
    store.save_model_vectors(space.id, [], calibration=posterior.Calibration(0.1, 0.7, 100, level=2.1, specific=0.7,
                                                                              shared=3.2, uncovered=0.25))
    assert store.get_space_calibration(space.id).uncovered == pytest.approx(0.25)
    bent = posterior.Calibration(0.1, 0.7, 100, level=2.1, specific=0.7, shared=3.2, knots=((-1.5, 0.0, 2.25),
                                                                                             (-3.0, 0.125, 2.5)))
    store.save_model_vectors(space.id, [], calibration=bent)  # the bend's knots (migration 0010), exactly
    assert store.get_space_calibration(space.id).knots == ((-1.5, 0.0, 2.25), (-3.0, 0.125, 2.5))
    assert store.space_states()[0][1].knots == bent.knots
    region = posterior.Calibration(0.1, 0.7, 100, level=2.1, specific=0.7, shared=3.2, uncovered=0.25, lam_cap=4.0,
                                   region_var=0.0125)
    store.save_model_vectors(space.id, [], calibration=region)  # the region variance (migration 0013)
    assert store.get_space_calibration(space.id) == region and store.space_states()[0][1] == region
    assert bent.region_var is None and store.get_space_calibration(space.id).lam_cap == 4.0
    store.save_model_vectors(space.id, [], calibration=posterior.Calibration(0.2, 2.0, 10), calibration_models=9)
    assert not store.get_space_calibration(space.id).folded  # the plain map: the coefficients are NULL


def test_the_level_map_carries_the_region_variance_of_its_outcomes():
    """The space's level/deviation map (pipeline._fit_calibration) carries the region variance of the models'
    outcomes over the prompts' benchmarks, coverage-aware (models measured on some benchmarks only) or not (a dense
    index, where every share is 1 and it adds nothing); none without the benchmarks, or on the plain map."""
    from indexer.pipeline import _fit_calibration

    rng = np.random.default_rng(21)
    N, d, M = 240, 8, 40
    D = rng.normal(size=(N, d))
    D[:, 0] += np.repeat([3.0, -3.0], N // 2)  # two benchmarks, apart in the embedding
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    groups = np.repeat(["a", "b"], N // 2)
    skill = rng.normal(size=(M, 1)) + rng.normal(0.0, 0.6, size=(M, 2)).repeat(N // 2, axis=1)
    W = rng.normal(size=(M, d))
    S = (rng.random((M, N)) < 1 / (1 + np.exp(-(skill + 1.5 * (W @ D.T))))).astype(float)
    dense = S.copy()
    few = rng.random((M, N // 2)) < 0.85  # half the models measured on benchmark a and a few of b's prompts, half
    S[: M // 2, N // 2:][few[: M // 2]] = np.nan  # the other way round
    S[M // 2:, : N // 2][few[M // 2:]] = np.nan
    spec = _spec()
    cal = _fit_calibration(spec.solver().fit(D, S), D, S, spec, groups=groups)
    assert cal.coverage_aware
    assert cal.region_var == pytest.approx(posterior.region_variance(S, groups)) and cal.region_var >= 0.0
    assert _fit_calibration(spec.solver().fit(D, S), D, S, spec).region_var is None
    full = _fit_calibration(spec.solver().fit(D, dense), D, dense, spec, groups=groups)
    assert not full.coverage_aware and full.region_var == pytest.approx(posterior.region_variance(dense, groups))
    assert full.region_var > 0.01  # the simulated per-benchmark skill (sd 0.6 in the logit)
    plain = SpaceSpec("enc@1", 1.0, 0.0, "auto", {"intercept": True, "select": "gcv"}, 8 + 1)
    assert _fit_calibration(plain.solver().fit(D, dense), D, dense, plain, groups=groups).region_var is None


def test_space_states_read_what_the_three_reads_give_and_see_every_rewrite(store):
    """What a search reads of its space in one statement equals list_spaces, get_space_calibration and
    get_space_prior; a new calibration or prior is what the next read gives (nothing kept between reads)."""
    from indexer.store.sql import SpacePrior

    bare = store.get_or_create_space("enc@1", 11, 1.0, 0.0, method="auto", params={})
    space = store.get_or_create_space("enc@1", 11, 1.0, 0.0, method="auto-mean", params=LEVELS)
    cal = posterior.Calibration(0.1, 0.7, 100, 9, 0.05, level=2.1, specific=0.7, shared=3.2, uncovered=0.3)
    store.save_model_vectors(space.id, [], prior=SpacePrior(np.arange(10.0), 4), calibration=cal, calibration_models=9)

    def three():
        return [(r, store.get_space_calibration(r.id), store.get_space_prior(r.id)) for r in store.list_spaces()]

    def same(got, want):
        assert [r for r, _, _ in got] == [r for r, _, _ in want] and [c for _, c, _ in got] == [c for _, c, _ in want]
        for (_, _, p), (_, _, q) in zip(got, want):
            assert (p is None) == (q is None)
            if p is not None:
                assert np.array_equal(p.vector, q.vector) and (p.n_models, p.computed_at) == (q.n_models, q.computed_at)

    got = store.space_states()
    same(got, three())
    assert [r.id for r, _, _ in got] == [bare.id, space.id] and got[0][1:] == (None, None)
    assert got[1][1] == cal and got[1][1].uncovered == 0.3 and got[1][2].vector.tolist() == list(range(10))
    store.save_model_vectors(space.id, [], prior=SpacePrior(np.ones(10), 5),
                             calibration=posterior.Calibration(0.2, 2.0, 10), calibration_models=9)
    got = store.space_states()
    same(got, three())
    assert not got[1][1].folded and got[1][2].vector.tolist() == [1.0] * 10 and got[1][2].n_models == 5


def test_the_default_method_has_levels_and_older_spaces_do_not():
    assert represent.has_levels(space_params("auto-mc"))
    assert not any(represent.has_levels(space_params(m)) for m in ("auto-mean", "auto", "auto-text", "paper"))
    assert "levels" not in SpaceSpec(None, 1.0, 0.0, "auto-mc", space_params("auto-mc")).options


def test_heldout_refits_leave_out_the_few_prompts_nearly_complete_models_lack():
    """Models lacking a prompt or two of a part share one coverage pattern in the refits (those prompts left out of
    them: one eigendecomposition instead of one per pattern); a model lacking more keeps its own; every observed
    held-out cell is still scored."""
    D, S = _data(7, N=200)
    S[1, 100:] = 1.0  # complete, but for the two gaps below
    S[0, : 200 // 4] = np.nan  # model 0 lacks a quarter of the prompts
    S[1, [60, 150]] = np.nan
    S[2, 170] = np.nan
    spec = _spec()
    fitted = []

    def solver():
        s = spec.solver()
        fit = s.fit
        s.fit = lambda X, Y: (fitted.append(np.asarray(Y)), fit(X, Y))[1]
        return s

    level, dev, shared, out = posterior.heldout_cells(solver, D, S, spec, folds=2)
    assert out.size == int((~np.isnan(S)).sum())
    assert len(fitted) == 2
    for Y in fitted:
        assert not np.isnan(Y[1:]).any()  # models 1 and 2 (and the complete ones): one pattern, no gap
        assert np.isnan(Y[0]).any()  # model 0 (a quarter missing) keeps its own
    assert sum(Y.shape[1] for Y in fitted) == 200 - 3  # only the three gaps left out


def test_heldout_refits_skip_a_sparse_model_seen_only_on_the_left_out_prompts():
    """A model observed only on prompts that nearly complete models lack (so left out of a refit) sits that refit
    out instead of failing it ("model has no observed outcome": `taskspace evaluate --split coverage` of
    evalarena_code crashed so); the other models' held-out cells are still scored."""
    D, S = _data(7, N=200)
    S[0, : 200 // 4] = np.nan
    S[3, :] = np.nan
    S[3, [60, 150]] = 1.0  # model 3: seen on two prompts only ...
    S[2, [60, 150]] = np.nan  # ... which a nearly complete model lacks: the refits leave them out
    spec = _spec()
    level, dev, shared, out = posterior.heldout_cells(spec.solver, D, S, spec, folds=2)
    assert out.size == int((~np.isnan(S)).sum()) - 2  # every observed cell but model 3's two


def _split_data(seed=0, N=120, d=4, M=14):
    """Design rows of a split space (``[E(q), E(o), is_mc, 3 option covariates]``): the first half of the prompts with
    answer options, the rest without (zero options half and covariates); models 0-5 observed with options only, 6-11
    without only, 12-13 on both."""
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=(N, d))
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    O = rng.normal(size=(N, d))
    O /= np.linalg.norm(O, axis=1, keepdims=True)
    mc = np.arange(N) < N // 2
    F = np.c_[np.ones(N), 3 + rng.random(N), 4 + rng.random(N), np.log(rng.integers(3, 11, N))]
    X = np.c_[Q, np.where(mc[:, None], O, 0.0), np.where(mc[:, None], F, 0.0)]
    logit = rng.normal(size=M)[:, None] + 1.5 * rng.normal(size=(M, 2 * d)) @ X[:, :2 * d].T
    S = (rng.random((M, N)) < 1 / (1 + np.exp(-logit))).astype(float)
    S[:6, ~mc] = np.nan
    S[6:12, mc] = np.nan
    S[12, :5] = np.nan
    return X, S


def _formats_spec(d=4):
    params = dict(space_params("auto-mc"), levels=represent.LEVELS_FORMATS)
    return SpaceSpec("enc@1", 1.0, 0.0, "auto-mc", params, represent.index_dim(d, params))


def test_a_prior_per_format_folds_into_the_query_and_ranks_as_the_probabilities():
    """levels = level-deviation-v2: the model vectors end [w_mc, w_free, l_i, u_i . mu_i], u_i = w_i . (u_mc, u_free)
    the model's own shrinkage target; the folded query gives the map's logit with U_i = u_i . (x - mu_i), and
    Qdrant's order is the probability's order."""
    X, S = _split_data()
    spec = _formats_spec()
    assert represent.prior_formats(spec) == 2 and represent.level_width(spec) == 4
    assert spec.options["n_formats"] == 2
    formats = represent.prompt_formats(X, spec)
    np.testing.assert_array_equal(formats, (np.arange(X.shape[0]) >= X.shape[0] // 2).astype(int))
    solver = spec.solver().fit(X, S, formats=formats)
    assert solver.prior_.shape == (2, 8)
    cal = posterior.fit_level_calibration(*posterior.heldout_cells(spec.solver, X, S, spec))
    assert cal.folded and cal.shared != cal.specific
    V = represent.index_vectors(solver, X, spec)
    assert V.shape == (S.shape[0], spec.dim)
    W = V[:, -4:-2]
    np.testing.assert_allclose(W[:6], [[1, 0]] * 6)
    np.testing.assert_allclose(W[6:12], [[0, 1]] * 6)
    np.testing.assert_allclose(W[12:].sum(axis=1), 1.0)
    assert 0 < W[12, 0] < 1
    level = np.nanmean(2 * S - 1, axis=1)
    np.testing.assert_allclose(V[:, -2], level)
    u_i = W @ solver.prior_  # each model's own prior
    mu = np.stack([X[~np.isnan(s)].mean(axis=0) for s in S])[:, :8]
    np.testing.assert_allclose(V[:, -1], (u_i * mu).sum(axis=1), atol=1e-12)
    rows = represent.add_intercept(np.r_[X[:3], X[-3:]], spec)
    np.testing.assert_array_equal(rows[:, -4:], 0.0)
    pred = posterior.Predictor(spec, cal, lambda keys: {}, prior=solver.prior_.reshape(-1))  # stored flat
    for row in rows:
        q = pred.fold(row).astype(np.float64)
        scores = V @ q
        p = pred.probability(scores)
        raw = V @ row
        own = u_i @ row[:8] - V[:, -1]  # the model's own prior's part of its deviation
        m = row[-6]  # the query's format: 1 with options
        U = (m * solver.prior_[0] + (1 - m) * solver.prior_[1]) @ row[:8] - V[:, -1]  # the query format's prior
        want = cal.a + cal.level * level + cal.specific * (raw - level - own) + cal.shared * U
        np.testing.assert_allclose(p, 1 / (1 + np.exp(-want)), atol=1e-6)  # the folded query is float32
        assert list(np.argsort(-scores, kind="stable")) == list(np.argsort(-p, kind="stable"))
    # the folded rows at once are the rows one by one
    Qf, off = cal.fold_rows(rows, solver.prior_)
    np.testing.assert_allclose(Qf[0], cal.fold(rows[0], solver.prior_)[0])
    assert off[0] == pytest.approx(cal.fold(rows[0], solver.prior_)[1])


def test_a_prior_per_format_adding_models_equals_a_fit_from_scratch():
    """Models added in chunks toward the held-fixed per-format priors: the vectors (level coordinates too) of one
    fit toward them."""
    X, S = _split_data(1)
    spec = _formats_spec()
    formats = represent.prompt_formats(X, spec)
    full = spec.solver().fit(X, S, formats=formats)
    inc = HyperplaneSolver(**dict(spec.options, prior=full.prior_)).prepare(X, formats=formats)
    for lo in range(0, S.shape[0], 4):
        inc.add_models(S[lo:lo + 4], model_ids=list(range(lo, min(lo + 4, S.shape[0]))))
    np.testing.assert_allclose(represent.index_vectors(inc, X, spec), represent.index_vectors(full, X, spec),
                               atol=1e-9)


def test_the_prior_per_format_is_a_new_space_and_older_ones_read_as_before():
    new, old = _formats_spec(), dict(space_params("auto-mc"), levels=represent.LEVELS)
    assert SpaceSpec.of(new).key != SpaceSpec("enc@1", 1.0, 0.0, "auto-mc", old, represent.index_dim(4, old)).key
    assert represent.prior_formats(old) == 1 and represent.level_width(old) == 2
    assert "n_formats" not in SpaceSpec("enc@1", 1.0, 0.0, "auto-mc", old, 14).options
    assert represent.prompt_formats(np.zeros((3, 12)), old) is None
    u = np.arange(16.0)
    np.testing.assert_array_equal(represent.prior_matrix(u, new), u.reshape(2, 8))
    np.testing.assert_array_equal(represent.prior_matrix(u, old), u)


def _bend_cells(rng, n, shape):
    """``n`` held-out cells: logits ``z`` and outcomes drawn with the true logit ``shape(z)``."""
    z = rng.normal(0.0, 1.5, n)
    return z, (rng.random(n) < 1.0 / (1.0 + np.exp(-shape(z)))).astype(float)


def test_the_bend_calibrates_a_shape_one_logistic_misses_and_keeps_the_order():
    """posterior.fit_bend: the isotonic regression of the outcomes on the map's logit, read at knots. Where success
    is not one logistic of the logit (steep below 0, flat above), the bent probabilities of fresh cells are far
    better calibrated than the map's own; the bend is strictly increasing (no ties: Qdrant's order stays the
    probability order) with slope 1 beyond the end knots; on a logit that is already calibrated it is nearly the
    identity; too few cells or one class: no bend."""
    from indexer.evaluation.metrics import ece

    rng = np.random.default_rng(5)
    shape = lambda z: np.where(z < 0, 2.5 * z, 0.6 * z)  # noqa: E731
    knots = posterior.fit_bend(*_bend_cells(rng, 20000, shape))
    xs, L = (np.asarray(k) for k in knots)
    assert len(xs) == 20000 * 0.99 // posterior.BEND_CELLS_PER_KNOT and (np.diff(xs) > 0).all()
    assert (np.diff(L) >= posterior.BEND_MIN_SLOPE * np.diff(xs) - 1e-12).all()  # no plateau: intervals keep a width
    bent = posterior.Calibration(0.0, 1.0, 20000, level=1.0, specific=1.0, shared=1.0, knots=knots)
    plain = posterior.Calibration(0.0, 1.0, 20000, level=1.0, specific=1.0, shared=1.0)
    zt, ot = _bend_cells(rng, 20000, shape)
    assert ece(bent.probability(zt), ot) < 0.4 * ece(plain.probability(zt), ot)
    s = np.sort(rng.normal(0.0, 5.0, 2000))
    assert (np.diff(bent.bend(s)) > 0).all()
    assert bent.bend(xs[-1] + 3.0) == pytest.approx(L[-1] + 3.0) and bent.bend(xs[0] - 2.0) == pytest.approx(L[0] - 2.0)
    assert bent.probability(0.3, offset=0.2) == pytest.approx(1.0 / (1.0 + np.exp(-np.interp(0.5, xs, L))))
    same = posterior.Calibration(0.0, 1.0, 1, level=1.0, specific=1.0, shared=1.0,
                                 knots=posterior.fit_bend(*_bend_cells(rng, 40000, lambda z: z)))
    assert np.abs(same.bend(np.linspace(-1.5, 1.5, 7)) - np.linspace(-1.5, 1.5, 7)).max() < 0.2
    z, o = _bend_cells(rng, posterior.BEND_MIN_CELLS - 1, shape)
    assert posterior.fit_bend(z, o) is None and posterior.fit_bend(zt, np.ones(zt.size)) is None
    assert posterior.Calibration(0.0, 1.0).bend(1.25) == 1.25


def test_the_level_map_is_bent_on_the_logits_the_index_gives_its_cells():
    """fit_level_calibration bends the logit of each held-out cell as the index computes it (the folded queries'
    coefficients, coverage-weighted): refitting the bend on those logits by hand gives the same knots."""
    rng = np.random.default_rng(9)
    n = 6000
    lv, dv, U = rng.uniform(-0.8, 0.8, n), rng.normal(0.0, 0.4, n), rng.normal(0.0, 0.3, n)
    c = rng.uniform(0.0, 1.0, n) ** 3  # many uncovered cells
    true = 0.2 + 3.0 * lv + (c * 1.5 + (1 - c) * 0.3) * (dv - U) + 2.0 * U
    o = (rng.random(n) < 1.0 / (1.0 + np.exp(-np.where(true < 0, 2.0 * true, true)))).astype(float)
    cal = posterior.fit_level_calibration(lv, dv, U, o, coverage=c)
    assert cal.coverage_aware and cal.knots is not None
    z = cal.a + cal.level * lv + (c * cal.specific + (1 - c) * cal.uncovered) * (dv - U) + cal.shared * U
    assert cal.knots == posterior.fit_bend(z, o)
    assert posterior.fit_level_calibration(lv[:500], dv[:500], U[:500], o[:500]).knots is None  # too few cells
