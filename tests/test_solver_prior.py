"""Solver option ``prior`` (shrink toward a vector u instead of 0; method ``auto-mean``: u = the models' mean normal).

Known answers from explicit normal equations and brute-force GCV; incremental updates with the prior held fixed
equal a fit from scratch with that prior; ``prior='mean'`` equals the explicit two-stage fit.
"""

from __future__ import annotations

import numpy as np
import pytest

from indexer.errors import DimensionError, InputError
from indexer.solver import HyperplaneSolver
from indexer.space import method_options


def _data(seed, M=7, N=80, d=6, k=0, missing=0.3):
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(N, d)) + 0.5  # not centred: the intercept has work to do
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    if k:
        D = np.c_[D, rng.normal(size=(N, k)) + 3.0]
    S = (rng.random((M, N)) < 0.6).astype(float)
    S[rng.random((M, N)) < missing] = np.nan
    S[:, :3] = 1.0
    return D, S


def _explicit(X, s, lam, u, k=0):
    """[e, f, a] minimising sum (y - a - x.[e, f])^2 + 2 lam ||e - u||^2 (f, a unpenalised), and the hat
    matrix of the residual problem (target y - X_e u)."""
    obs = ~np.isnan(s)
    A = np.c_[X[obs], np.ones(obs.sum())]
    p = X.shape[1] - k
    P = np.diag(np.r_[np.full(p, 2 * lam), np.zeros(k + 1)])
    y = 2 * s[obs] - 1
    prior = np.r_[u, np.zeros(k + 1)]
    sol = np.linalg.solve(A.T @ A + P, A.T @ y + P @ prior)
    H = A @ np.linalg.solve(A.T @ A + P, A.T)
    return sol, y - X[obs][:, :p] @ u, H


@pytest.mark.parametrize("k", [0, 2])
@pytest.mark.parametrize("lam", [0.05, 1.0, 40.0])
def test_fixed_prior_matches_explicit_least_squares(lam, k):
    X, S = _data(1, k=k)
    u = np.random.default_rng(9).normal(size=X.shape[1] - k)
    solver = HyperplaneSolver(lam=lam, intercept=True, free=k, prior=u).fit(X, S)
    for i in range(S.shape[0]):
        sol, _, _ = _explicit(X, S[i], lam, u, k)
        np.testing.assert_allclose(solver.normals_[i], sol[:-1], atol=1e-9)
        assert solver.intercept_[i] == pytest.approx(sol[-1], abs=1e-9)
    # a huge lambda pins the embedding part to u (not to 0)
    big = HyperplaneSolver(lam=1e9, intercept=True, free=k, prior=u).fit(X, S)
    np.testing.assert_allclose(big.normals_[:, : X.shape[1] - k], np.tile(u, (S.shape[0], 1)), atol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_prior_gcv_matches_brute_force_on_the_residual_target(seed):
    X, S = _data(seed)
    u = np.random.default_rng(seed + 10).normal(size=X.shape[1]) * 0.7
    grid = [0.01, 0.3, 3.0, 30.0, 300.0]
    solver = HyperplaneSolver(intercept=True, select="gcv", lambdas=grid, prior=u).fit(X, S)

    def gcv(i, lam):
        _, r, H = _explicit(X, S[i], lam, u)
        return len(r) * np.sum((r - H @ r) ** 2) / (len(r) - np.trace(H)) ** 2

    for i in range(S.shape[0]):
        best = min(grid, key=lambda lam: gcv(i, lam))
        assert solver.lam_[i] == best
        np.testing.assert_allclose(solver.normals_[i], _explicit(X, S[i], best, u)[0][:-1], atol=1e-9)


def test_zero_prior_is_no_prior():
    X, S = _data(2)
    a = HyperplaneSolver(**method_options("auto")).fit(X, S)
    b = HyperplaneSolver(**dict(method_options("auto"), prior=np.zeros(X.shape[1]))).fit(X, S)
    np.testing.assert_allclose(b.normals_, a.normals_, atol=1e-12)
    np.testing.assert_allclose(b.lam_, a.lam_)
    assert a.prior_ is None


def test_mean_prior_is_the_two_stage_fit():
    X, S = _data(3)
    stage1 = HyperplaneSolver(**method_options("auto")).fit(X, S)
    u = stage1.normals_.mean(axis=0)
    want = HyperplaneSolver(**dict(method_options("auto"), prior=u)).fit(X, S)
    got = HyperplaneSolver(**method_options("auto-mean")).fit(X, S)
    np.testing.assert_allclose(got.prior_, u, atol=1e-12)
    np.testing.assert_allclose(got.normals_, want.normals_, atol=1e-10)
    np.testing.assert_allclose(got.intercept_, want.intercept_, atol=1e-10)
    np.testing.assert_allclose(got.predict(X[:5]), want.predict(X[:5]), atol=1e-10)
    assert not np.allclose(got.normals_, stage1.normals_)


def test_mean_prior_with_covariates_uses_the_embedding_part_only():
    X, S = _data(4, k=2)
    opts = dict(method_options("auto"), free=2)
    u = HyperplaneSolver(**opts).fit(X, S).normals_[:, :-2].mean(axis=0)
    got = HyperplaneSolver(**dict(opts, prior="mean")).fit(X, S)
    want = HyperplaneSolver(**dict(opts, prior=u)).fit(X, S)
    assert got.prior_.shape == (X.shape[1] - 2,)
    np.testing.assert_allclose(got.normals_, want.normals_, atol=1e-10)


def test_mean_prior_is_held_fixed_by_updates_and_refresh_equals_a_fresh_fit():
    X, S = _data(5, M=9)
    opts = method_options("auto-mean")
    inc = HyperplaneSolver(**opts).fit(X[:60], S[:5, :60])
    u0 = inc.prior_.copy()
    inc.add_prompts(X[60:], S[:5, 60:]).add_models(S[5:])
    inc.replace_model(2, S[2]).remove_models([8]).add_models(S[8:], model_ids=[8])
    np.testing.assert_array_equal(inc.prior_, u0)  # the updates did not move the prior ...
    fixed = HyperplaneSolver(**dict(opts, prior=u0)).fit(X, S)  # ... and equal a fit with it held fixed
    np.testing.assert_allclose(inc.normals_, fixed.normals_, atol=1e-9)
    np.testing.assert_allclose(inc.intercept_, fixed.intercept_, atol=1e-9)
    inc.refresh_prior()
    fresh = HyperplaneSolver(**opts).fit(X, S)
    np.testing.assert_allclose(inc.prior_, fresh.prior_, atol=1e-10)
    np.testing.assert_allclose(inc.normals_, fresh.normals_, atol=1e-9)


def test_refit_changes_the_prior():
    X, S = _data(6)
    s = HyperplaneSolver(**method_options("auto")).fit(X, S)
    s.refit(prior="mean")
    np.testing.assert_allclose(s.normals_, HyperplaneSolver(**method_options("auto-mean")).fit(X, S).normals_, atol=1e-10)
    s.refit(prior=None)
    np.testing.assert_allclose(s.normals_, HyperplaneSolver(**method_options("auto")).fit(X, S).normals_, atol=1e-10)


def test_bad_priors_are_refused_and_change_nothing():
    X, S = _data(7)
    with pytest.raises(InputError, match="prior='median'"):
        HyperplaneSolver(prior="median").fit(X, S)
    with pytest.raises(InputError, match="finite"):
        HyperplaneSolver(prior=np.array([np.nan] * X.shape[1])).fit(X, S)
    with pytest.raises(DimensionError, match=r"prior has shape \(3,\); expected \(6,\)"):
        HyperplaneSolver(prior=np.zeros(3)).fit(X, S)
    with pytest.raises(DimensionError, match=r"expected \(4,\)"):  # with free=2 the prior covers the embedding only
        HyperplaneSolver(intercept=True, free=2, prior=np.zeros(6)).fit(np.c_[X[:, :4], X[:, 4:] + 3], S)
    s = HyperplaneSolver(**method_options("auto-mean")).fit(X, S)
    before = s.normals_.copy()
    with pytest.raises(InputError, match="prior="):
        s.refit(prior="median")
    np.testing.assert_array_equal(s.normals_, before)


def test_mean_prior_needs_enough_models():
    from indexer.solver import PRIOR_MIN_MODELS

    X, S = _data(8, M=PRIOR_MIN_MODELS)
    few = HyperplaneSolver(**method_options("auto-mean")).fit(X, S[:-1])  # one model short: plain auto
    assert few.prior_ is None
    np.testing.assert_allclose(few.normals_, HyperplaneSolver(**method_options("auto")).fit(X, S[:-1]).normals_, atol=1e-12)
    few.add_models(S[-1:]).refresh_prior()  # now there are enough
    np.testing.assert_allclose(few.normals_, HyperplaneSolver(**method_options("auto-mean")).fit(X, S).normals_, atol=1e-10)
    assert few.prior_ is not None


def _two_formats(seed, M=14, N=90, d=6):
    """Prompts of two answer formats (0: the first 40, 1: the rest); models 0-5 observed on format 0 only, 6-11 on
    format 1 only, 12-13 on both (with gaps: several coverage patterns)."""
    X, S = _data(seed, M=M, N=N, d=d, missing=0.1)
    formats = (np.arange(N) >= 40).astype(np.int8)
    S[:6, 40:] = np.nan
    S[6:12, :40] = np.nan
    S[:, :3] = 1.0
    S[6:12, :3] = np.nan
    return X, S, formats


def test_a_prior_per_format_shrinks_each_model_toward_the_models_seen_on_its_formats():
    X, S, formats = _two_formats(11)
    opts = method_options("auto-mean")
    E = HyperplaneSolver(**method_options("auto")).fit(X, S).normals_  # the prior-free normals
    W = np.stack([np.bincount(formats[~np.isnan(s)], minlength=2) / (~np.isnan(s)).sum() for s in S])  # format mix
    u = (W.T @ E) / W.sum(axis=0)[:, None]  # (2, d): each format's mean normal, each model by its share there
    got = HyperplaneSolver(**dict(opts, n_formats=2)).fit(X, S, formats=formats)
    np.testing.assert_allclose(got.prior_, u, atol=1e-12)
    assert not np.allclose(u[0], E.mean(axis=0))  # a model seen only with options is not shrunk toward the mean of all
    for i in range(S.shape[0]):  # each model: the fit toward its own mix of the two, as with that prior held fixed
        want = HyperplaneSolver(**dict(opts, prior=W[i] @ u)).fit(X, S[i:i + 1])
        np.testing.assert_allclose(got.normals_[i], want.normals_[0], atol=1e-10)
        np.testing.assert_allclose(got.intercept_[i], want.intercept_[0], atol=1e-10)
        np.testing.assert_allclose(got.pattern_prior(got.pattern_of_[i]), W[i] @ u, atol=1e-12)


def test_a_prior_per_format_on_one_format_is_the_single_prior():
    X, S = _data(12, M=9)
    one = HyperplaneSolver(**method_options("auto-mean")).fit(X, S)
    for code in (0, 1):  # every prompt of one format, whichever: the other format has no model and the mean of all
        per = HyperplaneSolver(**dict(method_options("auto-mean"), n_formats=2)).fit(
            X, S, formats=np.full(X.shape[0], code))
        np.testing.assert_allclose(per.prior_, np.tile(one.prior_, (2, 1)), atol=1e-12)
        np.testing.assert_array_equal(per.normals_, one.normals_)
        np.testing.assert_array_equal(per.lam_, one.lam_)


def test_a_prior_per_format_is_held_fixed_by_updates_and_refresh_equals_a_fresh_fit():
    X, S, formats = _two_formats(13)
    opts = dict(method_options("auto-mean"), n_formats=2)
    inc = HyperplaneSolver(**opts).fit(X[:70], S[:10, :70], formats=formats[:70])
    u0 = inc.prior_.copy()
    inc.add_prompts(X[70:], S[:10, 70:], formats=formats[70:]).add_models(S[10:], model_ids=list(range(10, 14)))
    inc.replace_model(2, S[2])
    np.testing.assert_array_equal(inc.prior_, u0)
    fixed = HyperplaneSolver(**dict(opts, prior=u0)).fit(X, S, formats=formats)  # adding a model = a fit from scratch
    np.testing.assert_allclose(inc.normals_, fixed.normals_, atol=1e-9)
    np.testing.assert_allclose(inc.intercept_, fixed.intercept_, atol=1e-9)
    inc.refresh_prior()
    fresh = HyperplaneSolver(**opts).fit(X, S, formats=formats)
    np.testing.assert_allclose(inc.prior_, fresh.prior_, atol=1e-10)
    np.testing.assert_allclose(inc.normals_, fresh.normals_, atol=1e-9)


def test_bad_formats_are_refused():
    X, S = _data(14)
    opts = dict(method_options("auto-mean"), n_formats=2)
    with pytest.raises(InputError, match=r"formats must be 80 whole numbers in \[0, 2\)"):
        HyperplaneSolver(**opts).fit(X, S, formats=np.full(80, 2))
    with pytest.raises(InputError, match="formats must be"):
        HyperplaneSolver(**opts).fit(X, S, formats=np.zeros(79, dtype=int))
    with pytest.raises(InputError, match="n_formats=0"):
        HyperplaneSolver(n_formats=0).fit(X, S)
    with pytest.raises(DimensionError, match=r"expected \(2, 6\)"):
        HyperplaneSolver(**dict(opts, prior=np.zeros((3, 6)))).fit(X, S)


def test_the_mean_prior_needs_five_models():
    """Five models, as docs/WORKER.md and docs/RESULTS.md say: four get no prior, five get their mean normal.
    Added by the mutation audit of 2026-12-06 (docs/TESTING.md): the test above follows the constant, so a change
    of it went unseen."""
    X, S = _data(8, M=5)
    assert HyperplaneSolver(**method_options("auto-mean")).fit(X, S[:4]).prior_ is None
    assert HyperplaneSolver(**method_options("auto-mean")).fit(X, S).prior_ is not None


def test_a_format_seen_by_exactly_five_models_worth_of_shares_gets_its_own_prior():
    """The per-format prior's threshold is inclusive: three models observed with options only and four on both formats
    (half their prompts each) are 5.0 models' worth of format 0, which gets the share-weighted mean of their normals;
    format 1 (2.0) gets the plain mean of all. Added by the mutation audit of 2026-12-06 (docs/TESTING.md)."""
    X, S = _data(14, M=7, N=80, missing=0.0)
    formats = (np.arange(80) >= 40).astype(np.int8)  # 40 prompts of each format
    S[:3, 40:] = np.nan  # models 0-2: format 0 only
    opts = method_options("auto-mean")
    E = HyperplaneSolver(**method_options("auto")).fit(X, S).normals_  # the prior-free normals
    W = np.array([[1.0, 0.0]] * 3 + [[0.5, 0.5]] * 4)
    assert W[:, 0].sum() == 5.0
    got = HyperplaneSolver(**dict(opts, n_formats=2)).fit(X, S, formats=formats)
    np.testing.assert_allclose(got.prior_[0], W[:, 0] @ E / 5.0, atol=1e-12)
    np.testing.assert_allclose(got.prior_[1], E.mean(axis=0), atol=1e-12)
