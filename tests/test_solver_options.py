"""Solver options of the evaluation's `auto` method: per-model intercept (centred) and lambda by GCV.

Known answers from explicit least squares / hat matrices; incremental updates equal a fit from scratch.
"""

from __future__ import annotations

import numpy as np
import pytest

from indexer.errors import InputError
from indexer.solver import GCV_LAMBDAS, HyperplaneSolver
from indexer.space import configured, method_options


def _data(seed, M=6, N=80, d=10, missing=0.3, graded=False):
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(N, d))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    S = rng.random((M, N)) if graded else (rng.random((M, N)) < 0.6).astype(float)
    S[rng.random((M, N)) < missing] = np.nan
    S[:, 0] = 1.0  # every model observed somewhere
    return D, S


def _explicit(D, s, lam, intercept):
    """Ridge with an unpenalised intercept by solving the normal equations on the observed rows."""
    obs = ~np.isnan(s)
    X, y = D[obs], 2 * s[obs] - 1
    n, d = X.shape
    if intercept:
        A = np.c_[X, np.ones(n)]
        P = np.diag(np.r_[np.full(d, 2 * lam), 0.0])
        sol = np.linalg.solve(A.T @ A + P, A.T @ y)
        H = A @ np.linalg.solve(A.T @ A + P, A.T)
        return sol[:d], sol[d], y, H
    sol = np.linalg.solve(X.T @ X + 2 * lam * np.eye(d), X.T @ y)
    H = X @ np.linalg.solve(X.T @ X + 2 * lam * np.eye(d), X.T)
    return sol, 0.0, y, H


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("lam", [0.1, 1.0, 10.0])
def test_intercept_matches_explicit_least_squares(seed, lam):
    D, S = _data(seed)
    solver = HyperplaneSolver(lam=lam, intercept=True).fit(D, S)
    for i in range(S.shape[0]):
        e, a, _, _ = _explicit(D, S[i], lam, True)
        np.testing.assert_allclose(solver.normals_[i], e, atol=1e-9)
        assert solver.intercept_[i] == pytest.approx(a, abs=1e-9)
    Q = D[:5]
    np.testing.assert_allclose(solver.predict(Q), Q @ solver.normals_.T + solver.intercept_, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("graded", [False, True])
def test_gcv_choice_matches_brute_force(seed, intercept, graded):
    D, S = _data(seed, graded=graded)
    grid = [0.01, 0.1, 1.0, 10.0, 100.0]
    solver = HyperplaneSolver(intercept=intercept, select="gcv", lambdas=grid).fit(D, S)
    for i in range(S.shape[0]):
        scores = []
        for lam in grid:
            _, _, y, H = _explicit(D, S[i], lam, intercept)
            r = y - H @ y
            n = y.size
            scores.append(n * (r @ r) / (n - np.trace(H)) ** 2)
        best = grid[int(np.argmin(scores))]
        assert solver.lam_[i] == best
        e, a, _, _ = _explicit(D, S[i], best, intercept)
        np.testing.assert_allclose(solver.normals_[i], e, atol=1e-9)
        assert solver.intercept_[i] == pytest.approx(a, abs=1e-9)


@pytest.mark.parametrize("options", [{"intercept": True}, {"intercept": True, "select": "gcv"}, {"select": "gcv"}])
def test_incremental_equals_from_scratch(options):
    D, S = _data(7, M=8, N=90)
    full = HyperplaneSolver(**options).fit(D, S, model_ids=list("abcdefgh"))
    # models added one by one, prompts added later, a model replaced, a model removed
    inc = HyperplaneSolver(**options).fit(D[:60], S[:3, :60], model_ids=list("abc"))
    inc.add_prompts(D[60:], S[:3, 60:])
    for k, mid in enumerate("defgh", start=3):
        inc.add_models(S[k], [mid])
    wrong = S[4].copy()
    wrong[~np.isnan(wrong)] = 1 - wrong[~np.isnan(wrong)]
    inc.replace_model("e", wrong)
    inc.replace_model("e", S[4])
    inc.add_models(S[0], ["extra"])
    inc.remove_models(["extra"])
    for mid in "abcdefgh":
        i, j = full.index_of(mid), inc.index_of(mid)
        np.testing.assert_allclose(inc.normals_[j], full.normals_[i], atol=1e-9)
        assert inc.intercept_[j] == pytest.approx(full.intercept_[i], abs=1e-9)
        assert inc.lam_[j] == full.lam_[i]
    np.testing.assert_allclose(inc.predict(D[:4]), full.predict(D[:4]), atol=1e-9)


def test_default_options_leave_the_paper_method_unchanged():
    D, S = _data(1)
    a = HyperplaneSolver(lam=1.0).fit(D, S)
    b = HyperplaneSolver(**method_options("paper", lam=1.0, eps=0.0)).fit(D, S)
    np.testing.assert_array_equal(a.normals_, b.normals_)
    np.testing.assert_array_equal(a.predict(D[:3]), D[:3] @ a.normals_.T)


def test_gcv_shrinks_noise_to_the_model_mean():
    # pure-noise outcomes: GCV should pick a large lambda, leaving (almost) only the intercept = the mean
    rng = np.random.default_rng(0)
    D = rng.normal(size=(200, 16))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    S = (rng.random((3, 200)) < 0.7).astype(float)
    solver = HyperplaneSolver(intercept=True, select="gcv").fit(D, S)
    assert (solver.lam_ >= 10).all()
    np.testing.assert_allclose(solver.predict(D).mean(axis=0), 2 * S.mean(axis=1) - 1, atol=0.05)
    assert max(GCV_LAMBDAS) >= 1e4 and min(GCV_LAMBDAS) <= 1e-2


def test_method_options_and_bad_options(monkeypatch):
    assert method_options("paper", lam=2.0, eps=0.5) == {"lam": 2.0, "eps": 0.5}
    assert method_options("auto")["intercept"] is True and method_options("AUTO")["select"] == "gcv"
    with pytest.raises(InputError, match="unknown solver method"):
        method_options("magic")
    D, S = _data(0)
    with pytest.raises(InputError, match="select="):
        HyperplaneSolver(select="loo").fit(D, S)
    with pytest.raises(InputError, match="lambdas="):
        HyperplaneSolver(select="gcv", lambdas=[-1.0]).fit(D, S)
    from indexer.config import reset_settings

    monkeypatch.setenv("TASKSPACE_METHOD", "paper")
    reset_settings()
    assert configured().solver().intercept is False
    monkeypatch.setenv("TASKSPACE_METHOD", "auto")
    reset_settings()
    s = configured().solver()
    assert s.intercept is True and s.select == "gcv"


@pytest.mark.parametrize("params", [{"lam": 3.0}, {"lam": 0.5, "eps": 1.0}, {"intercept": True}, {"select": "gcv", "intercept": True}])
def test_refit_equals_a_fresh_fit(params):
    D, S = _data(5)
    solver = HyperplaneSolver(lam=1.0).fit(D, S)
    solver.refit(**params)
    fresh = HyperplaneSolver(**{"lam": 1.0, **params}).fit(D, S)
    np.testing.assert_allclose(solver.normals_, fresh.normals_, atol=1e-10)
    np.testing.assert_allclose(solver.predict(D[:4]), fresh.predict(D[:4]), atol=1e-10)
    with pytest.raises(InputError, match="lam="):
        solver.refit(lam=-1.0)
    assert solver.lam == params.get("lam", 1.0)  # a rejected change leaves the parameters as they were
    with pytest.raises(InputError, match="unknown solver parameter"):
        solver.refit(gamma=2)


@pytest.mark.parametrize("intercept", [False, True])
def test_augmented_normals_reproduce_predict_by_a_dot_product(intercept):
    D, S = _data(2)
    solver = HyperplaneSolver(intercept=intercept, select="gcv").fit(D, S)
    A = solver.augmented_normals()
    assert A.shape == (S.shape[0], D.shape[1] + 1)
    Q = np.c_[D[:6], np.ones(6)]
    np.testing.assert_allclose(Q @ A.T, solver.predict(D[:6]), atol=1e-12)


def test_gcv_on_too_few_prompts_takes_the_most_shrinkage():
    """A model observed on one prompt leaves GCV no residual degree of freedom (its intercept takes the one): every
    lambda of the grid is undefined, and the model gets the grid's largest (the most shrinkage, toward its mean), whose
    posterior is the widest. Added by the mutation audit of 2026-12-06 (docs/TESTING.md)."""
    D, S = _data(5)
    S[1] = np.nan
    S[1, 7] = 1.0
    solver = HyperplaneSolver(intercept=True, select="gcv").fit(D, S)
    assert solver.lam_[1] == max(GCV_LAMBDAS)
    assert solver.intercept_[1] == pytest.approx(1.0) and np.abs(solver.normals_[1]).max() < 1e-12
    assert (solver.lam_[[0, 2, 3, 4, 5]] < max(GCV_LAMBDAS)).any()  # the others chose their own
