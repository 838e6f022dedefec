"""The general solve on a pattern Gram's tridiagonal form (ridge.Tridiagonal) against the eigendecomposition it
replaces: the same factors, the same normals, lambdas and residual variances; the eigenvectors formed on demand."""

from __future__ import annotations

import numpy as np
import pytest

from indexer.solver import GCV_LAMBDAS, HyperplaneSolver
from indexer.solver.ridge import Eigen, Tridiagonal, factorise, solve_pattern


def _gram(seed, n, p):
    X = np.random.default_rng(seed).normal(size=(n, p))
    return X.T @ X, X


@pytest.mark.parametrize("p", [1, 2, 3, 65, 130, 200])
def test_tridiagonal_form_reproduces_the_matrix(p):
    A, _ = _gram(p, max(2 * p, 4), p)
    tri = Tridiagonal(A)
    Q = tri.q(np.eye(p))
    T = np.diag(tri.d) + np.diag(tri.e, 1) + np.diag(tri.e, -1)
    scale = np.abs(A).max()
    np.testing.assert_allclose(Q.T @ Q, np.eye(p), atol=1e-12)
    np.testing.assert_allclose(Q @ T @ Q.T, A, atol=1e-12 * scale)
    np.testing.assert_allclose(tri.qt(Q), np.eye(p), atol=1e-12)
    np.testing.assert_allclose(tri.tmul(np.eye(p)), T, atol=0)
    np.testing.assert_allclose(tri.w, np.linalg.eigvalsh(A), atol=1e-12 * scale)
    B = np.random.default_rng(1).normal(size=(p, 3))
    np.testing.assert_allclose(tri.solve(0.7, B), np.linalg.solve(T + 0.7 * np.eye(p), B), rtol=1e-9, atol=1e-12)
    V = tri.eigenvectors()
    np.testing.assert_allclose(V.T @ V, np.eye(p), atol=1e-11)
    np.testing.assert_allclose((V * tri.w) @ V.T, A, atol=1e-11 * scale)


def test_eigen_forms_its_eigenvectors_once_and_then_drops_the_reflectors():
    A, X = _gram(3, 60, 8)
    eig = factorise(A, X.mean(axis=0), 60, 0)
    assert eig.tri is not None
    w, V = np.linalg.eigh(A - 60 * np.outer(X.mean(axis=0), X.mean(axis=0)))
    got = eig.V
    assert eig.tri is None and eig.V is got
    np.testing.assert_allclose(eig.w, np.clip(w, 0, None), atol=1e-10)
    np.testing.assert_allclose(np.abs(got.T @ V), np.eye(8), atol=1e-8)  # the same basis up to signs
    with pytest.raises(ValueError):
        Eigen(w, None, np.zeros(8))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("free", [0, 2])
@pytest.mark.parametrize("grid", [None, np.asarray(GCV_LAMBDAS)])
@pytest.mark.parametrize("prior", [False, True])
def test_tridiagonal_solve_equals_the_eigenbasis_solve(seed, free, grid, prior):
    rng = np.random.default_rng(seed)
    n, d, k = 70, 12, 9
    G, X = _gram(seed, n, d)
    mu = X.mean(axis=0)
    Y = np.where(rng.random((k, n)) < 0.6, 1.0, -1.0)
    b, sy, syy = Y @ X, Y.sum(axis=1), (Y * Y).sum(axis=1)
    u = rng.normal(size=d - free) * 0.1 if prior else None
    tri = factorise(G, mu, n, free)
    dense = factorise(G, mu, n, free)
    dense = Eigen(dense.w, dense.V, dense.mu, dense.covariates)  # eigenbasis only: the solve's other path
    assert dense.tri is None and tri.tri is not None
    kw = dict(lam=0.5, eps=0.0, intercept=True, grid=grid, prior=u)
    got, want = solve_pattern(tri, n, b, sy, syy, **kw), solve_pattern(dense, n, b, sy, syy, **kw)
    for g, w_ in zip(got, want):
        np.testing.assert_allclose(g, w_, rtol=1e-9, atol=1e-10)


def test_eps_and_lambda_zero_use_the_eigenbasis():
    """eps > 0 drops components and lambda 0 is the pseudo-inverse: both need the eigenvalues per component."""
    G, X = _gram(5, 40, 6)
    Y = np.where(np.random.default_rng(5).random((3, 40)) < 0.5, 1.0, -1.0)
    b, sy, syy = Y @ X, Y.sum(axis=1), (Y * Y).sum(axis=1)
    for lam, eps in [(1.0, 3.0), (0.0, 0.0)]:
        eig = factorise(G, None, 40, 0)
        got = solve_pattern(eig, 40, b, sy, syy, lam=lam, eps=eps, intercept=False)
        assert eig.tri is None  # the eigenvectors were formed for it
        w, V = np.linalg.eigh(G)
        keep = (np.sqrt(np.clip(w, 0, None)) >= eps) & (w > w.max() * 1e-12)
        phi = np.where(keep, 1.0 / (np.clip(w, 0, None) + 2 * lam), 0.0)
        np.testing.assert_allclose(got[0], (b @ V * phi) @ V.T, rtol=1e-8, atol=1e-10)


def test_posterior_after_a_fit_matches_explicit_inverse():
    """A fitted solver's predictive variance (eigenvectors formed on demand) equals the explicit ridge posterior."""
    rng = np.random.default_rng(2)
    N, d = 90, 7
    D = rng.normal(size=(N, d))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    S = (rng.random((4, N)) < 0.5).astype(float)
    solver = HyperplaneSolver(lam=0.8, intercept=True).fit(D, S)
    Q = rng.normal(size=(5, d))
    got = solver.predictive_variance(Q)
    Xc = D - D.mean(axis=0)
    inv = np.linalg.inv(Xc.T @ Xc + 2 * 0.8 * np.eye(d))
    R = Q - D.mean(axis=0)
    base = 1.0 / N + np.einsum("qi,ij,qj->q", R, inv, R)
    np.testing.assert_allclose(got, base[:, None] * solver.noise_[None, :], rtol=1e-9)
