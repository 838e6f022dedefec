"""The solver's posterior: each model's residual variance and the predictive variance of its scores, checked
against the ridge posterior written out directly (design [1, x], explicit penalty matrix, explicit inverse)."""

import numpy as np
import pytest

from indexer.errors import InputError
from indexer.solver import HyperplaneSolver


def _problem(seed, N=70, d=7, M=6, free=0, missing=True):
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(N, d))
    D[:, : d - free] /= np.linalg.norm(D[:, : d - free], axis=1, keepdims=True)
    if free:
        D[:, d - free:] = rng.normal(size=(N, free)) + 3.0
    S = (rng.random((M, N)) < 0.2 + 0.6 * rng.random((M, 1))).astype(float)
    if missing:
        S[0, :15] = np.nan  # two other coverage patterns
        S[1, 40:] = np.nan
    return D, S


def _direct(D, s, e, a, lam, free):
    """(residual variance, posterior covariance of [a, e]) of one model written out directly."""
    obs = ~np.isnan(s)
    X = np.hstack([np.ones((obs.sum(), 1)), D[obs]])
    y = 2 * s[obs] - 1
    P = np.zeros((X.shape[1], X.shape[1]))
    p = D.shape[1] - free
    P[1 : 1 + p, 1 : 1 + p] = 2 * lam * np.eye(p)  # only the embedding part is penalised
    H = np.linalg.pinv(X.T @ X + P)
    rss = float(((y - a - D[obs] @ e) ** 2).sum())
    df = float(np.trace(X @ H @ X.T))
    s2 = rss / max(obs.sum() - df, 1.0)
    return s2, s2 * H


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("options", [
    {"intercept": True, "select": "gcv"},
    {"intercept": True, "select": "gcv", "prior": "mean"},
    {"intercept": True, "lam": 0.7},
    {"intercept": True, "select": "gcv", "prior": "mean", "free": 2},
])
def test_noise_and_predictive_variance_equal_the_ridge_posterior(seed, options):
    free = options.get("free", 0)
    D, S = _problem(seed, free=free)
    solver = HyperplaneSolver(**options).fit(D, S)
    Q = np.vstack([D[:5], np.random.default_rng(seed + 9).normal(size=(3, D.shape[1]))])
    V = solver.predictive_variance(Q)
    assert V.shape == (Q.shape[0], S.shape[0])
    for i in range(S.shape[0]):
        s2, cov = _direct(D, S[i], solver.normals_[i], solver.intercept_[i], solver.lam_[i], free)
        np.testing.assert_allclose(solver.noise_[i], s2, rtol=1e-8)
        Xq = np.hstack([np.ones((Q.shape[0], 1)), Q])
        np.testing.assert_allclose(V[:, i], np.einsum("ij,jk,ik->i", Xq, cov, Xq), rtol=1e-7, atol=1e-12)


def test_variance_grows_away_from_the_observed_prompts():
    D, S = _problem(3, missing=False)
    solver = HyperplaneSolver(intercept=True, lam=0.5).fit(D, S)  # a fixed lambda (GCV may pick "mean only")
    near = solver.predictive_variance(D[:10]).mean(axis=0)
    far = solver.predictive_variance(5.0 * D[:10]).mean(axis=0)  # 5x as far from the data's mean
    assert (far > 3 * near).all()


def test_incremental_noise_equals_a_fit_from_scratch():
    D, S = _problem(4)
    whole = HyperplaneSolver(intercept=True, select="gcv", prior=np.zeros(D.shape[1])).fit(D, S)
    parts = HyperplaneSolver(intercept=True, select="gcv", prior=np.zeros(D.shape[1])).prepare(D)
    for i in range(S.shape[0]):
        parts.add_models(S[i : i + 1], [i])
    np.testing.assert_allclose(parts.noise_, whole.noise_, rtol=1e-10)
    np.testing.assert_allclose(parts.predictive_variance(D[:4]), whole.predictive_variance(D[:4]), rtol=1e-9)


def test_the_plain_solve_has_no_posterior():
    D, S = _problem(5)
    solver = HyperplaneSolver(lam=1.0).fit(D, S)
    assert np.isnan(solver.noise_).all()
    with pytest.raises(InputError):
        solver.predictive_variance(D[:2])


def test_both_calibration_fits_fall_back_to_the_one_base_rate_map():
    """Held-out cells whose scores do not rise with success: `fit_calibration` and `fit_level_calibration` both give
    the base-rate map of `indexer.posterior.base_rate_logit` (every slope 0, the intercept the logit of the cells'
    mean outcome, clipped so that all-success cells stay finite). Before, each fit wrote its own copy of the fallback."""
    from indexer.posterior import base_rate_logit, fit_calibration, fit_level_calibration

    rng = np.random.default_rng(3)
    o = (rng.random(300) < 0.3).astype(float)
    falling = -o + 0.1 * rng.normal(size=o.size)  # scores that fall with success: no calibrated information
    assert base_rate_logit(o) == pytest.approx(np.log(o.mean() / (1 - o.mean())), abs=1e-12)
    assert base_rate_logit(np.ones(30)) == pytest.approx(np.log((1 - 1e-6) / 1e-6))
    cal = fit_calibration(falling, o)
    assert (cal.a, cal.b) == (base_rate_logit(o), 0.0)
    lev = fit_level_calibration(falling, 0.01 * rng.normal(size=o.size), None, o)
    assert lev.a == base_rate_logit(o) and (lev.level, lev.specific, lev.shared) == (0.0, 0.0, 0.0)
