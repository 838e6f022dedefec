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

__all__ = ["METRICS", "CALIBRATION", "COVERAGE_PARTS", "FoldResult", "Pooled", "run_folds", "run_sweep", "score_fold", "aggregate"]

METRICS = ("auc", "accuracy", "correlation", "selection_accuracy", "selection_recall")
#: calibration metrics, for contestants that give probabilities (NaN for the others)
CALIBRATION = ("ece", "brier")
#: the coverage split's parts: the models that kept the held-out group's source outcomes, and those that did not
COVERAGE_PARTS = ("covered", "uncovered")


@dataclass
class FoldResult:
    name: str
    models: int
    prompts: int
    cells: int
    #: contestant -> metric -> value; beside the metrics, ``covered``/``uncovered`` (coverage split) and
    #: ``datasets`` (several data sets pooled: data set -> metric -> value), each the same metrics on that part
    methods: dict[str, dict]
    oracle: dict[str, float]
    seconds: dict[str, float] = field(default_factory=dict)
    #: how each contestant's probabilities are made (None: it gives none)
    calibration: dict[str, str | None] = field(default_factory=dict)


@dataclass
class Pooled:
    """Held-out predictions of one contestant over all folds (for ROC curves, reliability and per-benchmark plots)."""

    scores: list = field(default_factory=list)  # arrays of observed-cell scores
    outcomes: list = field(default_factory=list)
    groups: list = field(default_factory=list)  # benchmark of each cell
    sel_outcome: list = field(default_factory=list)  # picked model's outcome per prompt
    sel_groups: list = field(default_factory=list)
    probs: list = field(default_factory=list)  # probabilities of the observed cells (NaN: the contestant gives none)

    def arrays(self):
        cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0)  # noqa: E731
        return cat(self.scores), cat(self.outcomes), cat(self.groups), cat(self.sel_outcome), cat(self.sel_groups)

    def probabilities(self) -> np.ndarray:
        return np.concatenate(self.probs) if self.probs else np.zeros(0)


def run_folds(
    D: np.ndarray,
    S: np.ndarray,
    benchmarks: np.ndarray,
    folds: list[Fold],
    contestants: dict,
    *,
    pooled: dict[str, Pooled] | None = None,
    queries: np.ndarray | None = None,
    datasets: np.ndarray | None = None,
) -> list[FoldResult]:
    """Evaluate ``contestants`` (name -> object with ``fit(D, S)``, :mod:`.contestants`) on every fold.

    ``D`` (N, d) unit rows, ``S`` (M, N) outcomes with NaN, ``benchmarks`` (N,) the benchmark of each prompt
    (the unit of the benchmark-score correlation). ``pooled``, if given, collects held-out predictions.
    ``queries`` (N, d): what a held-out prompt is queried with when it is not its own text
    (:mod:`indexer.evaluation.queries`); contestants are still fitted on ``D`` and judged on ``S``.
    A contestant with its own ``rows = (X, XQ)`` (:class:`~.contestants.SolverContestant`: covariates, the
    question/options split) is fitted on ``X`` and queried with ``XQ`` instead, completed by its
    ``fill(XQ_fold, X_source_fold)`` from the fold's source rows when it has one.

    A fold with ``hide_models`` (the coverage split, :func:`~.splits.coverage`) hides those models' outcomes on
    its ``hide_prompts`` from the contestants; its metrics are then also given for the ``covered`` and the
    ``uncovered`` models apart (selection among those models only). ``datasets`` (N,): the data set of each prompt
    when several are pooled; the metrics are then also given per data set (``datasets``: name -> metrics) over
    its target prompts.
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
        covered = None
        if fold.hide_models is not None:
            S_src = S_src.copy()
            cols = np.flatnonzero(np.isin(fold.train, fold.hide_prompts))
            S_src[np.ix_(np.asarray(fold.hide_models), cols)] = np.nan
            covered = ~np.isin(np.arange(S.shape[0]), fold.hide_models)
        keep = (~np.isnan(S_src)).any(axis=1)
        S_src = S_src[keep]
        S_tgt = S[keep][:, fold.test]
        obs = ~np.isnan(S_tgt)
        D_src, D_tgt = D[fold.train], Q[fold.test]
        bench = benchmarks[fold.test]
        parts: dict = {}
        if covered is not None:
            parts["covered"] = (covered[keep], None)
            parts["uncovered"] = (~covered[keep], None)
        if datasets is not None:
            ds = np.asarray(datasets, dtype=object)[fold.test]
            parts["datasets"] = {str(k): (None, ds == k) for k in sorted(set(ds.tolist()), key=str)}
        res = FoldResult(fold.name, int(keep.sum()), int(fold.test.size), int(obs.sum()), {}, metrics.oracle(S_tgt))
        for name, contestant in contestants.items():
            t0 = time.perf_counter()
            if not res.cells:  # nothing to score (no model of the source measured on the targets): no fit, NaN metrics
                fitted, P, prob = _Unfitted(S_tgt.shape[0]), np.zeros(S_tgt.shape), np.full(S_tgt.shape, np.nan)
            else:
                X_src, X_tgt = _rows(contestant, fold, D_src, D_tgt)
                fitted = contestant.fit(X_src, S_src)
                P = fitted.predict(X_tgt)  # (M, n_tgt)
                prob = fitted.probability(X_tgt, P) if hasattr(fitted, "probability") else None
            res.seconds[name] = time.perf_counter() - t0
            res.calibration[name] = getattr(fitted, "calibration", None) if prob is not None else None
            res.methods[name] = score_fold(P, S_tgt, bench, fitted.source_mean, prob, parts)
            if pooled is not None:
                pool = pooled.setdefault(name, Pooled())
                pool.scores.append(P[obs])
                pool.outcomes.append(S_tgt[obs])
                pool.probs.append(prob[obs] if prob is not None else np.full(int(obs.sum()), np.nan))
                pool.groups.append(np.broadcast_to(bench[None, :], obs.shape)[obs])
                pick, has = metrics._picks(P, S_tgt, fitted.source_mean)
                pool.sel_outcome.append(S_tgt[pick, np.arange(S_tgt.shape[1])][has])
                pool.sel_groups.append(bench[has])
        results.append(res)
    return results


class _Unfitted:
    """What stands in for a contestant in a fold with no cell to score: no calibration, no source means."""

    calibration = None

    def __init__(self, models: int):
        self.source_mean = np.zeros(models)


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


def score_fold(P: np.ndarray, S_tgt: np.ndarray, bench: np.ndarray, source_mean: np.ndarray | None,
               prob: np.ndarray | None = None, parts: dict | None = None) -> dict:
    """Every metric of one fold: predictions ``P`` and outcomes ``S_tgt`` (M, n), ``bench`` (n,) benchmarks;
    ``prob`` (M, n): probabilities of success (``ece``, ``brier``; NaN without). ``parts``: name -> (model mask
    or None, prompt mask or None), or ``"datasets"`` -> {name: (None, prompt mask)}: the same metrics on those
    models / prompts under the key ``name`` (selection among the part's models only)."""
    obs = ~np.isnan(S_tgt)
    sel = metrics.selection(P, S_tgt, tie_break=source_mean)
    r, _ = metrics.benchmark_correlation(P, S_tgt, bench)
    out = {
        "auc": metrics.roc_auc(P[obs], S_tgt[obs]),
        "accuracy": metrics.sign_accuracy(P[obs], S_tgt[obs]),
        "correlation": r,
        "selection_accuracy": sel["selection_accuracy"],
        "selection_recall": sel["selection_recall"],
        "ece": metrics.ece(prob[obs], S_tgt[obs]) if prob is not None else float("nan"),
        "brier": metrics.brier(prob[obs], S_tgt[obs]) if prob is not None else float("nan"),
    }
    for name, part in (parts or {}).items():
        if name == "datasets":
            out[name] = {k: _score_part(P, S_tgt, bench, source_mean, prob, *v) for k, v in part.items()}
        else:
            out[name] = _score_part(P, S_tgt, bench, source_mean, prob, *part)
    return out


def _score_part(P, S_tgt, bench, source_mean, prob, rows, cols) -> dict:
    r = slice(None) if rows is None else np.asarray(rows)
    c = slice(None) if cols is None else np.asarray(cols)
    sub = lambda A: None if A is None else A[r][:, c]  # noqa: E731
    tb = None if source_mean is None else np.asarray(source_mean)[r]
    return score_fold(sub(P), sub(S_tgt), np.asarray(bench)[c], tb, sub(prob))


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


def _stats(values: list[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation of the finite values; the spread is None for one value (nothing was
    measured: before, 0.0, shown as "±0.000" as if the folds had agreed exactly), both NaN for none."""
    arr = np.array([v for v in values if v is not None and np.isfinite(v)], dtype=np.float64)
    if arr.size == 0:
        return float("nan"), float("nan")
    return float(arr.mean()), (float(arr.std(ddof=1)) if arr.size > 1 else None)


def aggregate(results: list[FoldResult]) -> dict:
    """Mean (and ``*_std``) over folds of every metric of every contestant, plus the oracle; a contestant's
    ``covered``/``uncovered`` and ``datasets`` parts likewise (over the folds that have them)."""
    names = list(results[0].methods) if results else []
    out: dict = {"methods": {}, "oracle": None}
    for name in names:
        entry = _mean_entry([r.methods[name] for r in results])
        for part in COVERAGE_PARTS:
            got = [r.methods[name][part] for r in results if part in r.methods[name]]
            if got:
                entry[part] = _mean_entry(got)
        ds = sorted({k for r in results for k in r.methods[name].get("datasets", {})}, key=str)
        if ds:
            entry["datasets"] = {k: _mean_entry([r.methods[name]["datasets"][k] for r in results
                                                 if k in r.methods[name].get("datasets", {})]) for k in ds}
        entry["seconds"] = float(sum(r.seconds.get(name, 0.0) for r in results))
        entry["probabilities"] = next((r.calibration.get(name) for r in results if r.calibration.get(name)), None)
        out["methods"][name] = entry
    sel, _ = _stats([r.oracle["selection_accuracy"] for r in results])
    rec, _ = _stats([r.oracle["selection_recall"] for r in results])
    out["oracle"] = sel
    out["oracle_detail"] = {"selection_accuracy": sel, "selection_recall": rec}
    return out


def _mean_entry(per_fold: list[dict]) -> dict:
    entry = {}
    for m in METRICS + CALIBRATION:
        mean, std = _stats([f.get(m) for f in per_fold])
        entry[m] = mean
        entry[m + "_std"] = std
    entry["folds"] = len(per_fold)
    return entry
