"""Solver option ``free`` (unpenalised covariate columns, method ``auto-text``) and the text covariates.

Known answers from explicit normal equations and brute-force GCV; incremental updates equal a fit from scratch.
"""

from __future__ import annotations

import numpy as np
import pytest

from indexer.errors import ConfigError, InputError
from indexer.features import TEXT_FEATURES, n_features, text_features
from indexer.solver import HyperplaneSolver
from indexer.space import method_options


def _data(seed, M=6, N=90, d=8, k=2, missing=0.3):
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(N, d))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    F = rng.normal(size=(N, k)) * 2.0 + 4.0  # covariates on their own scale (log lengths are ~2-8)
    S = (rng.random((M, N)) < 0.55).astype(float)
    S[rng.random((M, N)) < missing] = np.nan
    S[:, :3] = 1.0
    return np.c_[D, F], S


def _explicit(X, s, lam, k):
    """[e, f, a] from the normal equations: penalty 2 lam on the embedding columns only."""
    obs = ~np.isnan(s)
    A = np.c_[X[obs], np.ones(obs.sum())]
    d = X.shape[1] - k
    P = np.diag(np.r_[np.full(d, 2 * lam), np.zeros(k + 1)])
    y = 2 * s[obs] - 1
    sol = np.linalg.solve(A.T @ A + P, A.T @ y)
    H = A @ np.linalg.solve(A.T @ A + P, A.T)
    return sol, y, H


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("lam", [0.05, 1.0, 30.0])
def test_free_columns_match_explicit_least_squares(seed, lam):
    X, S = _data(seed)
    solver = HyperplaneSolver(lam=lam, intercept=True, free=2).fit(X, S)
    for i in range(S.shape[0]):
        sol, _, _ = _explicit(X, S[i], lam, 2)
        np.testing.assert_allclose(solver.normals_[i], sol[:-1], atol=1e-9)
        assert solver.intercept_[i] == pytest.approx(sol[-1], abs=1e-9)
    np.testing.assert_allclose(solver.augmented_normals() @ np.c_[X[:4], np.ones(4)].T, solver.predict(X[:4]).T, atol=1e-12)


def test_free_columns_are_not_shrunk():
    """With a huge lambda the embedding part vanishes but the covariate coefficients stay those of plain OLS."""
    X, S = _data(4, missing=0.0)
    solver = HyperplaneSolver(lam=1e9, intercept=True, free=2).fit(X, S)
    assert np.abs(solver.normals_[:, :-2]).max() < 1e-6
    for i in range(S.shape[0]):
        A = np.c_[X[:, -2:], np.ones(X.shape[0])]
        ols = np.linalg.lstsq(A, 2 * S[i] - 1, rcond=None)[0]
        np.testing.assert_allclose(solver.normals_[i, -2:], ols[:2], atol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_free_gcv_matches_brute_force(seed):
    X, S = _data(seed)
    grid = [0.01, 0.3, 3.0, 30.0, 300.0]
    solver = HyperplaneSolver(intercept=True, select="gcv", lambdas=grid, free=2).fit(X, S)
    for i in range(S.shape[0]):
        best = min(grid, key=lambda lam: (lambda sol, y, H: len(y) * np.sum((y - H @ y) ** 2) / (len(y) - np.trace(H)) ** 2)(*_explicit(X, S[i], lam, 2)))
        assert solver.lam_[i] == best
        np.testing.assert_allclose(solver.normals_[i], _explicit(X, S[i], best, 2)[0][:-1], atol=1e-9)


def test_free_incremental_equals_scratch():
    X, S = _data(7, M=8)
    opts = method_options("auto-text")
    full = HyperplaneSolver(**opts).fit(X, S)
    inc = HyperplaneSolver(**opts).fit(X[:60], S[:5, :60]).add_prompts(X[60:], S[:5, 60:]).add_models(S[5:])
    inc.replace_model(2, S[2]).remove_models([7]).add_models(S[7:], model_ids=[7])
    np.testing.assert_allclose(inc.normals_, full.normals_, atol=1e-9)
    np.testing.assert_allclose(inc.intercept_, full.intercept_, atol=1e-9)
    np.testing.assert_array_equal(inc.lam_, full.lam_)


def test_constant_covariate_gets_zero_coefficient():
    """A covariate with no variation among a model's prompts (C singular) adds nothing: pinv, rank-aware df."""
    X, S = _data(1, missing=0.0)
    X[:, -1] = 3.0
    with_const = HyperplaneSolver(intercept=True, select="gcv", free=2).fit(X, S)
    without = HyperplaneSolver(intercept=True, select="gcv", free=1).fit(X[:, :-1], S)
    np.testing.assert_allclose(with_const.normals_[:, :-1], without.normals_, atol=1e-8)
    np.testing.assert_allclose(with_const.normals_[:, -1], 0.0, atol=1e-8)
    np.testing.assert_allclose(with_const.predict(X), without.predict(X[:, :-1]), atol=1e-8)
    # rank-aware df: the constant column is no degree of freedom, so GCV's lambda and the residual variance (the
    # posterior's s^2) are those without it (a df counting C's size, 2, took one more: s^2 larger by n-df / n-df-1)
    np.testing.assert_array_equal(with_const.lam_, without.lam_)
    np.testing.assert_allclose(with_const.noise_, without.noise_, rtol=1e-9)


@pytest.mark.parametrize("free", [-1, 1.5, True, "2"])
def test_free_must_be_a_whole_number(free):
    X, S = _data(0)
    with pytest.raises(InputError, match="free="):
        HyperplaneSolver(intercept=True, free=free).fit(X, S)


def test_free_needs_an_embedding_column():
    X, S = _data(0)
    with pytest.raises(InputError, match="leaves no embedding column"):
        HyperplaneSolver(intercept=True, free=X.shape[1]).fit(X, S)


def test_auto_text_is_auto_plus_free_columns():
    assert method_options("auto-text") == dict(method_options("auto"), free=n_features(TEXT_FEATURES))
    with pytest.raises(InputError, match="auto-mc, auto-mean, auto, auto-text, paper"):
        method_options("magic")


def test_text_features_known_values():
    F = text_features(["", "abc", "a\nb\nc", "x" * 99])
    assert F.dtype == np.float32 and F.shape == (4, 2)
    np.testing.assert_allclose(F[:, 0], np.log1p([0, 3, 5, 99]), rtol=1e-6)
    np.testing.assert_allclose(F[:, 1], np.log1p([0, 1, 3, 1]), rtol=1e-6)
    assert n_features(None) == 0 and n_features(TEXT_FEATURES) == 2
    with pytest.raises(ConfigError, match="unknown prompt feature set"):
        n_features("text-length-v0")
