"""The paper's quality metrics (DESIGN.md §3) and calibration, no I/O (ROC AUC, the ROC curve and the Brier
score from scikit-learn, the rest numpy).

Every metric takes predicted scores on the signed scale (``> 0`` means "predicted to succeed") and outcomes
``s`` in [0, 1] with ``NaN`` for unobserved cells; unobserved cells are never counted. Graded outcomes count
fractionally: a cell with ``s = 0.7`` is 0.7 of a positive and 0.3 of a negative (for 0/1 outcomes this is
the ordinary definition).
"""

from __future__ import annotations

import numpy as np

__all__ = ["roc_auc", "roc_curve", "brier", "ece", "reliability", "ECE_BINS", "sign_accuracy", "benchmark_correlation", "selection", "oracle"]


def _graded(scores: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observed cells as weighted binary events for scikit-learn: a cell with outcome ``s`` is a success of weight
    ``s`` and a failure of weight ``1 - s`` (zero-weight halves dropped, so 0/1 outcomes stay one event each).
    Returns (scores, labels 0/1, weights); cells with a NaN score or outcome are left out."""
    scores = np.asarray(scores, dtype=np.float64).ravel()
    s = np.asarray(s, dtype=np.float64).ravel()
    keep = ~np.isnan(s) & ~np.isnan(scores)
    scores, s = scores[keep], s[keep]
    pos, neg = s > 0, s < 1
    x = np.concatenate([scores[pos], scores[neg]])
    y = np.concatenate([np.ones(int(pos.sum())), np.zeros(int(neg.sum()))])
    w = np.concatenate([s[pos], 1.0 - s[neg]])
    return x, y, w


def roc_auc(scores: np.ndarray, s: np.ndarray) -> float:
    """ROC AUC of ``scores`` (n,) against outcomes ``s`` (n,) in [0, 1] (``sklearn.metrics.roc_auc_score``);
    ties count one half.

    ``AUC = P(score of a positive > score of a negative) + 0.5 P(equal)`` with positives weighted by ``s`` and
    negatives by ``1 - s`` (sample weights, :func:`_graded`). NaN when there is no positive or no negative weight,
    or when the outcomes do not vary (graded outcomes all 0.5: every cell is as much a success as a failure at one
    score, so any prediction had AUC 0.5).
    """
    from sklearn.metrics import roc_auc_score

    x, y, w = _graded(scores, s)
    if w[y == 1].sum() <= 0 or w[y == 0].sum() <= 0 or _constant_outcomes(scores, s):
        return float("nan")
    # 0/1 outcomes weigh 1 each: the same AUC without weights, which scikit-learn computes in two thirds of the time
    return float(roc_auc_score(y.astype(np.int8), x, sample_weight=None if bool((w == 1.0).all()) else w))


def _constant_outcomes(scores, s) -> bool:
    """Whether the observed outcomes (a score and an outcome, neither NaN) are all one value."""
    s = np.asarray(s, dtype=np.float64).ravel()
    s = s[~np.isnan(s) & ~np.isnan(np.asarray(scores, dtype=np.float64).ravel())]
    return bool(s.size) and float(s.min()) == float(s.max())


def roc_curve(scores: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(false-positive rate, true-positive rate) arrays of the ROC curve (``sklearn.metrics.roc_curve``, graded
    outcomes as sample weights), from (0, 0) to (1, 1)."""
    from sklearn.metrics import roc_curve as sk_roc_curve

    x, y, w = _graded(scores, s)
    if w[y == 1].sum() <= 0 or w[y == 0].sum() <= 0:
        return np.array([0.0, 1.0]), np.array([0.0, 1.0])
    fpr, tpr, _ = sk_roc_curve(y, x, sample_weight=w, drop_intermediate=True)
    return fpr, tpr


def brier(prob: np.ndarray, s: np.ndarray) -> float:
    """Brier score of probabilities of success ``prob`` against outcomes ``s`` in [0, 1]
    (``sklearn.metrics.brier_score_loss``; a graded cell is ``s`` of a success and ``1 - s`` of a failure, so its
    loss is ``s (1 - p)^2 + (1 - s) p^2``). NaN without an observed cell with a probability."""
    from sklearn.metrics import brier_score_loss

    x, y, w = _graded(prob, s)
    if w.sum() <= 0:
        return float("nan")
    return float(brier_score_loss(y, x, sample_weight=w, pos_label=1))


#: equal-width bins of the expected calibration error and the reliability plot
ECE_BINS = 10


def reliability(prob: np.ndarray, s: np.ndarray, bins: int = ECE_BINS) -> dict:
    """Per equal-width probability bin (``bins`` over [0, 1], the last one closed): the number of cells ``n``,
    their mean probability ``p`` and mean outcome ``s`` (NaN for an empty bin). Cells with a NaN left out."""
    prob = np.asarray(prob, dtype=np.float64).ravel()
    s = np.asarray(s, dtype=np.float64).ravel()
    keep = ~np.isnan(prob) & ~np.isnan(s)
    prob, s = prob[keep], s[keep]
    k = np.clip((prob * bins).astype(np.int64), 0, bins - 1)
    n = np.bincount(k, minlength=bins).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.bincount(k, weights=prob, minlength=bins) / n
        o = np.bincount(k, weights=s, minlength=bins) / n
    return {"edges": np.linspace(0.0, 1.0, bins + 1), "n": n, "p": p, "s": o}


def ece(prob: np.ndarray, s: np.ndarray, bins: int = ECE_BINS) -> float:
    """Expected calibration error: over ``bins`` equal-width probability bins, the cell-weighted mean of
    ``|mean outcome - mean probability|`` (graded outcomes count as their value). NaN without cells."""
    r = reliability(prob, s, bins)
    total = r["n"].sum()
    if total <= 0:
        return float("nan")
    full = r["n"] > 0
    return float((r["n"][full] * np.abs(r["s"][full] - r["p"][full])).sum() / total)


def sign_accuracy(scores: np.ndarray, s: np.ndarray) -> float:
    """Accuracy of ``sign(score)`` as a success prediction: ``mean(s [score > 0] + (1 - s) [score <= 0])``."""
    scores = np.asarray(scores, dtype=np.float64).ravel()
    s = np.asarray(s, dtype=np.float64).ravel()
    keep = ~np.isnan(s)
    if not keep.any():
        return float("nan")
    up = scores[keep] > 0
    return float(np.mean(np.where(up, s[keep], 1.0 - s[keep])))


def benchmark_correlation(P: np.ndarray, S: np.ndarray, groups: np.ndarray) -> tuple[float, int]:
    """Pearson correlation between a model's mean predicted score on a benchmark and its true accuracy there.

    ``P`` and ``S`` are (M, n) (models x held-out prompts), ``groups`` (n,) the prompts' benchmarks. One point
    per (model, benchmark) pair with at least one observed cell. Returns (r, number of pairs); r is NaN with
    fewer than 3 pairs or no variance.
    """
    pred, true = [], []
    obs = ~np.isnan(S)
    for g in np.unique(groups):
        cols = groups == g
        o = obs[:, cols]
        n = o.sum(axis=1)
        rows = n > 0
        if not rows.any():
            continue
        p = np.where(o, P[:, cols], 0.0).sum(axis=1)[rows] / n[rows]
        t = np.where(o, S[:, cols], 0.0).sum(axis=1)[rows] / n[rows]
        pred.append(p)
        true.append(t)
    if not pred:
        return float("nan"), 0
    pred, true = np.concatenate(pred), np.concatenate(true)
    if pred.size < 3 or _constant(pred) or _constant(true):
        return float("nan"), int(pred.size)
    return float(np.corrcoef(pred, true)[0, 1]), int(pred.size)


def _constant(x: np.ndarray) -> bool:
    """Whether ``x`` is one value up to rounding: the per-benchmark means of a constant prediction (``bsp`` on one
    model) differ in their last bits, and before, ``std() == 0`` missed that, so their "correlation" was a number made
    of rounding errors (any value in [-1, 1])."""
    return bool(np.ptp(x) <= 1e-9 * max(1.0, float(np.abs(x).max())))


def _picks(P: np.ndarray, S: np.ndarray, tie_break: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Per prompt (column), the index of the top-scored model among those observed on it.

    Returns (picked model index (n,), mask of prompts with at least one observed model (n,)).
    """
    obs = ~np.isnan(S)
    has = obs.any(axis=0)
    if not P.shape[0]:  # no model (a coverage part none of whose models kept a source outcome): nothing to pick
        return np.zeros(P.shape[1], dtype=np.int64), has
    masked = np.where(obs, P, -np.inf)
    best = masked.max(axis=0)
    top = obs & (masked == best[None, :])
    tb = np.zeros(P.shape[0]) if tie_break is None else np.asarray(tie_break, dtype=np.float64)
    # among tied top models, prefer the higher tie_break (e.g. the model's source mean), then the lower index
    pick = np.argmax(np.where(top, tb[:, None], -np.inf), axis=0)
    return pick, has


def selection(P: np.ndarray, S: np.ndarray, tie_break: np.ndarray | None = None) -> dict:
    """Model selection over held-out prompts: pick the top-scored model among those observed on each prompt.

    ``P``, ``S`` (M, n). Accuracy = mean outcome of the picked model over prompts with an observed model;
    recall = the same over prompts at least one observed model solved (outcome > 0). Without a model (``M = 0``):
    NaN, no prompt.
    """
    if not np.shape(S)[0]:
        return {"selection_accuracy": float("nan"), "selection_recall": float("nan"), "prompts": 0}
    pick, has = _picks(P, S, tie_break)
    got = S[pick, np.arange(S.shape[1])]
    solved = has & (np.nan_to_num(S, nan=0.0).max(axis=0) > 0)
    return {
        "selection_accuracy": float(got[has].mean()) if has.any() else float("nan"),
        "selection_recall": float(got[solved].mean()) if solved.any() else float("nan"),
        "prompts": int(has.sum()),
    }


def oracle(S: np.ndarray) -> dict:
    """The ceiling: the best observed model on every prompt (selection recall is 1 by definition)."""
    has = (~np.isnan(S)).any(axis=0)
    best = np.nan_to_num(S, nan=-1.0).max(axis=0)
    solved = has & (best > 0)
    return {
        "selection_accuracy": float(best[has].mean()) if has.any() else float("nan"),
        "selection_recall": float(best[solved].mean()) if solved.any() else float("nan"),
    }
