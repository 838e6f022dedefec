"""The evaluation protocol: fit every contestant (:mod:`.contestants`) on each fold's source prompts, score its
target prompts, and aggregate the metrics (mean and standard deviation over folds). Numpy only, no I/O.

A model takes part in a fold only if it has at least one observed outcome among the fold's source prompts
(a contestant cannot say anything about a model it has never seen); its target cells count only where observed.
Results keep the contestants under the key ``methods`` (``FoldResult.methods``, ``aggregate(...)["methods"]``),
the key of ``taskspace evaluate --json`` that docs/RESULTS.md and the benchmarks read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from . import metrics
from .splits import Fold

__all__ = ["METRICS", "FoldResult", "run_folds", "run_sweep", "score_fold", "aggregate"]

METRICS = ("auc", "accuracy", "correlation", "selection_accuracy", "selection_recall")


@dataclass
class FoldResult:
    name: str
    models: int
    prompts: int
    cells: int
    methods: dict[str, dict[str, float]]  # contestant -> metric -> value
    oracle: dict[str, float]
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass
class Pooled:
    """Held-out predictions of one contestant over all folds (for ROC curves and per-benchmark breakdowns)."""

    scores: list = field(default_factory=list)  # arrays of observed-cell scores
    outcomes: list = field(default_factory=list)
    groups: list = field(default_factory=list)  # benchmark of each cell
    sel_outcome: list = field(default_factory=list)  # picked model's outcome per prompt
    sel_groups: list = field(default_factory=list)

    def arrays(self):
        cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0)  # noqa: E731
        return cat(self.scores), cat(self.outcomes), cat(self.groups), cat(self.sel_outcome), cat(self.sel_groups)


def run_folds(
    D: np.ndarray,
    S: np.ndarray,
    benchmarks: np.ndarray,
    folds: list[Fold],
    contestants: dict,
    *,
    pooled: dict[str, Pooled] | None = None,
    queries: np.ndarray | None = None,
) -> list[FoldResult]:
    """Evaluate ``contestants`` (name -> object with ``fit(D, S)``) on every fold.

    ``D`` (N, d) unit rows, ``S`` (M, N) outcomes with NaN, ``benchmarks`` (N,) the benchmark of each prompt
    (the unit of the benchmark-score correlation). ``pooled``, if given, collects held-out predictions.
    ``queries`` (N, d): what a held-out prompt is queried with when it is not its own text
    (:mod:`indexer.evaluation.queries`); contestants are still fitted on ``D`` and judged on ``S``.
    A contestant with its own ``rows = (X, XQ)`` (:class:`~.contestants.SolverContestant`: covariates, the
    question/options split) is fitted on ``X`` and queried with ``XQ`` instead, completed by its
    ``fill(XQ_fold, X_source_fold)`` from the fold's source rows when it has one.
    """
    Q = D if queries is None else queries
    if Q.shape != D.shape:
        raise ValueError("queries must have the shape of D")
    for name, contestant in contestants.items():
        own = getattr(contestant, "rows", None)
        if own is not None and (own[0].shape[0] != D.shape[0] or own[1].shape != own[0].shape):
            raise ValueError(f"contestant {name!r}: its rows must be two arrays of the same shape, one row per prompt")
    results = []
    for fold in folds:
        S_src = S[:, fold.train]
        keep = (~np.isnan(S_src)).any(axis=1)
        S_src = S_src[keep]
        S_tgt = S[keep][:, fold.test]
        obs = ~np.isnan(S_tgt)
        D_src, D_tgt = D[fold.train], Q[fold.test]
        bench = benchmarks[fold.test]
        res = FoldResult(fold.name, int(keep.sum()), int(fold.test.size), int(obs.sum()), {}, metrics.oracle(S_tgt))
        for name, contestant in contestants.items():
            t0 = time.perf_counter()
            X_src, X_tgt = _rows(contestant, fold, D_src, D_tgt)
            fitted = contestant.fit(X_src, S_src)
            P = fitted.predict(X_tgt)  # (M, n_tgt)
            res.seconds[name] = time.perf_counter() - t0
            res.methods[name] = score_fold(P, S_tgt, bench, fitted.source_mean)
            if pooled is not None:
                pool = pooled.setdefault(name, Pooled())
                pool.scores.append(P[obs])
                pool.outcomes.append(S_tgt[obs])
                pool.groups.append(np.broadcast_to(bench[None, :], obs.shape)[obs])
                pick, has = metrics._picks(P, S_tgt, fitted.source_mean)
                pool.sel_outcome.append(S_tgt[pick, np.arange(S_tgt.shape[1])][has])
                pool.sel_groups.append(bench[has])
        results.append(res)
    return results


def _rows(contestant, fold: Fold, D_src: np.ndarray, D_tgt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A contestant's source and query rows in a fold: the embeddings, or its own rows (filled)."""
    own = getattr(contestant, "rows", None)
    if own is None:
        return D_src, D_tgt
    X_src, X_tgt = own[0][fold.train], own[1][fold.test]
    fill = getattr(contestant, "fill", None)
    if fill is not None:
        X_tgt = fill(X_tgt, X_src)
    return X_src, X_tgt


def score_fold(P: np.ndarray, S_tgt: np.ndarray, bench: np.ndarray, source_mean: np.ndarray | None) -> dict:
    """Every metric of one fold: predictions ``P`` and outcomes ``S_tgt`` (M, n), ``bench`` (n,) benchmarks."""
    obs = ~np.isnan(S_tgt)
    sel = metrics.selection(P, S_tgt, tie_break=source_mean)
    r, _ = metrics.benchmark_correlation(P, S_tgt, bench)
    return {
        "auc": metrics.roc_auc(P[obs], S_tgt[obs]),
        "accuracy": metrics.sign_accuracy(P[obs], S_tgt[obs]),
        "correlation": r,
        "selection_accuracy": sel["selection_accuracy"],
        "selection_recall": sel["selection_recall"],
    }


def run_sweep(D: np.ndarray, S: np.ndarray, benchmarks: np.ndarray, folds: list[Fold], grid,
              queries: np.ndarray | None = None) -> list[dict]:
    """The paper method over (lambda, eps) pairs ``grid``: one fit per fold, then
    :meth:`~indexer.solver.HyperplaneSolver.refit` per pair (no second pass over the data).
    Returns one row per pair: ``{"lam", "eps", <metric>: mean over folds}``. ``queries``: as in
    :func:`run_folds`."""
    Q = D if queries is None else queries
    from ..solver import HyperplaneSolver
    from .contestants import source_means

    grid = list(grid)
    per: list[list[dict]] = [[] for _ in grid]
    for fold in folds:
        S_src = S[:, fold.train]
        keep = (~np.isnan(S_src)).any(axis=1)
        S_src = S_src[keep]
        S_tgt = S[keep][:, fold.test]
        D_tgt, bench, mean = Q[fold.test], benchmarks[fold.test], source_means(S_src)
        solver = HyperplaneSolver(lam=grid[0][0], eps=grid[0][1]).fit(D[fold.train], S_src)
        for k, (lam, eps) in enumerate(grid):
            if k:
                solver.refit(lam=lam, eps=eps)
            per[k].append(score_fold(solver.predict(D_tgt).T, S_tgt, bench, mean))
    rows = []
    for (lam, eps), results in zip(grid, per):
        rows.append({"lam": lam, "eps": eps, **{m: _stats([r[m] for r in results])[0] for m in METRICS}})
    return rows


def _stats(values: list[float]) -> tuple[float, float]:
    arr = np.array([v for v in values if v is not None and np.isfinite(v)], dtype=np.float64)
    if arr.size == 0:
        return float("nan"), float("nan")
    return float(arr.mean()), float(arr.std(ddof=1)) if arr.size > 1 else 0.0


def aggregate(results: list[FoldResult]) -> dict:
    """Mean (and ``*_std``) over folds of every metric of every contestant, plus the oracle."""
    names = list(results[0].methods) if results else []
    out: dict = {"methods": {}, "oracle": None}
    for name in names:
        entry = {}
        for m in METRICS:
            mean, std = _stats([r.methods[name][m] for r in results])
            entry[m] = mean
            entry[m + "_std"] = std
        entry["seconds"] = float(sum(r.seconds.get(name, 0.0) for r in results))
        out["methods"][name] = entry
    sel, _ = _stats([r.oracle["selection_accuracy"] for r in results])
    rec, _ = _stats([r.oracle["selection_recall"] for r in results])
    out["oracle"] = sel
    out["oracle_detail"] = {"selection_accuracy": sel, "selection_recall": rec}
    return out
