"""An independent reference for what the index must predict, from first principles (issue 21, item 5).

Nothing here imports :mod:`indexer` (no ``represent``, ``design``, ``features`` or solver code): the tests that
use it build each prompt's parts themselves (they write the prompts, so they know each one's question, options and
number of options) and this module fits every model by explicit least squares in *sample space* (an n x n kernel
per model and lambda), where the solver works with eigendecompositions of d x d Gram matrices of sufficient
statistics. A bug in the shared representation or in the solver shows up as a difference.

The model of one model i, observed on prompts J (n of them), outcomes ``y = 2 s - 1``:

    y_j ~ a + t_j . f + x_j . e,   minimise  sum_j (y_j - a - t_j . f - x_j . e)^2 + 2 lam ||e - u||^2

``x_j``: the penalised part (the prompt's embedding; with answer options kept apart ``[E(question), E(options)]``,
zeros for the options of a prompt without any); ``t_j``: unpenalised covariates (``[is_mc, is_mc log1p(question
chars), is_mc log1p(option chars), is_mc log(#options)]`` for ``auto-mc``, ``[log1p(chars), log1p(lines)]`` for
``auto-text``); ``a`` an unpenalised intercept (every method but ``paper``); ``u`` the prior (the mean of the
models' prior-free embedding parts, with at least 5 models, for ``auto-mc``/``auto-mean``). lambda is chosen per
model by generalised cross-validation, ``GCV = n RSS / (n - df)^2`` over the log grid 1e-2 .. 1e4 (25 points),
``df = rank([1, T]) + tr(K (K + 2 lam I)^-1)`` (no candidate with ``n - df <= 0.5``; the largest lambda when none is
left). A covariate that is constant on a model's prompts is not identified by its data: its coefficient is 0
(minimum norm among the centred covariates), the intercept carries the constant.

Scores in the index with the two answer formats apart (``multiple-choice-v2``, the docstring of
``indexer/represent.py``): on a format the model was observed on, exactly its fit; on one it was not, the parts that
format sets are replaced by the model's own average over its prompts (a model seen only with options scores a
prompt without options as ``q . e_q + a + mean_J(o . e_o + t . f)``; a model seen only without options scores a
prompt with options as ``q . e_q + a``). A row with a fractional ``is_mc = p`` (a question asked without options,
completed by its neighbours) mixes the two: ``p`` of the first and ``1 - p`` of the second.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GRID = np.logspace(-2, 4, 25)
PRIOR_MIN_MODELS = 5


@dataclass
class Fit:
    e: np.ndarray  # (p,) penalised coefficients
    a: float  # intercept (0 without one)
    f: np.ndarray  # (k,) covariate coefficients
    lam: float
    observed: np.ndarray  # (N,) bool


def _centre(T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = T.mean(axis=0) if T.shape[0] else np.zeros(T.shape[1])
    return T - mean, mean


def fit_one(X: np.ndarray, T: np.ndarray, y: np.ndarray, *, intercept: bool, lambdas, prior=None) -> tuple:
    """(e, a, f, lambda) for one model: X (n, p) penalised, T (n, k) unpenalised covariates, y (n,)."""
    X, T, y = (np.asarray(v, dtype=np.float64) for v in (X, T, y))
    n = X.shape[0]
    Tc, t_mean = _centre(T) if intercept else (T, np.zeros(T.shape[1]))
    Z = np.hstack([np.ones((n, 1)), Tc]) if intercept else Tc
    rank_z = np.linalg.matrix_rank(Z) if Z.shape[1] else 0

    def residual(V):  # V minus its least-squares fit on Z
        if not Z.shape[1]:
            return V
        return V - Z @ np.linalg.lstsq(Z, V, rcond=None)[0]

    u = np.zeros(X.shape[1]) if prior is None else np.asarray(prior, dtype=np.float64)
    Xr = residual(X)
    yr = residual(y - X @ u)
    K = Xr @ Xr.T
    best = None
    for lam in np.atleast_1d(lambdas):
        A = K + 2.0 * lam * np.eye(n)
        alpha = np.linalg.solve(A, yr)
        rss = float(np.sum((yr - K @ alpha) ** 2))
        df = rank_z + float(np.trace(np.linalg.solve(A, K)))
        gcv = n * rss / (n - df) ** 2 if n - df > 0.5 else np.inf
        if best is None or gcv < best[0]:
            best = (gcv, lam, alpha)
    if not np.isfinite(best[0]):  # too few prompts for any lambda: the most shrinkage
        lam = float(np.max(lambdas))
        best = (np.inf, lam, np.linalg.solve(K + 2.0 * lam * np.eye(n), yr))
    _, lam, alpha = best
    e = u + Xr.T @ alpha
    rest = y - X @ e
    if Z.shape[1]:
        coef = np.linalg.lstsq(Z, rest, rcond=None)[0]  # minimum norm: a constant covariate gets 0
    else:
        coef = np.zeros(0)
    if intercept:
        f = coef[1:]
        a = float(coef[0] - t_mean @ f)
    else:
        f, a = coef, 0.0
    return e, a, f, float(lam)


def fit_all(X: np.ndarray, T: np.ndarray, S: np.ndarray, *, intercept=True, lambdas=GRID, prior=None) -> list[Fit]:
    """Every model of S (M, N) (NaN = not observed) on the rows X (N, p), covariates T (N, k).
    ``prior``: None, ``'mean'`` (estimated as in the module docstring) or an array."""
    S = np.asarray(S, dtype=np.float64)
    obs = ~np.isnan(S)

    def solve(u):
        out = []
        for i in range(S.shape[0]):
            J = obs[i]
            e, a, f, lam = fit_one(X[J], T[J], 2.0 * S[i, J] - 1.0, intercept=intercept, lambdas=lambdas, prior=u)
            out.append(Fit(e, a, f, lam, J))
        return out

    if isinstance(prior, str):
        base = solve(None)
        if S.shape[0] < PRIOR_MIN_MODELS:
            return base
        return solve(np.mean([b.e for b in base], axis=0))
    return solve(prior)


def mc_score(fit: Fit, Xq, Xo, T, m, is_mc_rows) -> np.ndarray:
    """Scores of one ``auto-mc`` model at rows: question embeddings ``Xq`` (q, d), options part ``Xo`` (q, d),
    covariates ``T`` (q, 4), ``m`` (q,) the rows' is_mc (1, 0 or a share p); ``is_mc_rows`` (N,) bool: which
    indexed prompts have options (to know which formats the model was observed on)."""
    d = Xq.shape[1]
    eq, eo = fit.e[:d], fit.e[d:]
    mc_seen = bool(is_mc_rows[fit.observed].any())
    Xq, Xo, T, m = (np.asarray(v, dtype=np.float64) for v in (Xq, Xo, T, m))
    score = Xq @ eq + fit.a
    if mc_seen:
        score = score + Xo @ eo + T @ fit.f
    return score


def mc_own_average(fit: Fit, Xo_idx: np.ndarray, T_idx: np.ndarray) -> float:
    """A model's own average options-and-covariates part ``mean_J(o . e_o + t . f)`` over its observed prompts."""
    d = Xo_idx.shape[1]
    J = fit.observed
    return float(np.mean(Xo_idx[J] @ fit.e[d:] + T_idx[J] @ fit.f))


def mc_scores(fits: list[Fit], Xq, Xo, T, m, is_mc_rows, Xo_idx, T_idx) -> np.ndarray:
    """(M, q) every model's index score at the rows (see :func:`mc_score`), with the unseen-format rule of the module
    docstring: a model never observed without options gets ``(1 - m) * its own average``; one never observed with
    options gets nothing for the options part (it was never fitted on it)."""
    out = []
    m = np.asarray(m, dtype=np.float64)
    for fit in fits:
        s = mc_score(fit, Xq, Xo, T, m, is_mc_rows)
        free_seen = bool((~is_mc_rows[fit.observed]).any())
        mc_seen = bool(is_mc_rows[fit.observed].any())
        if mc_seen and not free_seen:
            s = s + (1.0 - m) * mc_own_average(fit, Xo_idx, T_idx)
        out.append(s)
    return np.array(out)
