"""The paper's quality metrics (DESIGN.md §3), numpy only, no I/O.

Every metric takes predicted scores on the signed scale (``> 0`` means "predicted to succeed") and outcomes
``s`` in [0, 1] with ``NaN`` for unobserved cells; unobserved cells are never counted. Graded outcomes count
fractionally: a cell with ``s = 0.7`` is 0.7 of a positive and 0.3 of a negative (for 0/1 outcomes this is
the ordinary definition).
"""

from __future__ import annotations

import numpy as np

__all__ = ["roc_auc", "roc_curve", "sign_accuracy", "benchmark_correlation", "selection", "oracle"]


def roc_auc(scores: np.ndarray, s: np.ndarray) -> float:
    """ROC AUC of ``scores`` (n,) against outcomes ``s`` (n,) in [0, 1]; ties count one half.

    ``AUC = P(score of a positive > score of a negative) + 0.5 P(equal)`` with positives weighted by ``s`` and
    negatives by ``1 - s``. NaN when there is no positive or no negative weight.
    """
    scores = np.asarray(scores, dtype=np.float64).ravel()
    s = np.asarray(s, dtype=np.float64).ravel()
    keep = ~np.isnan(s) & ~np.isnan(scores)
    scores, s = scores[keep], s[keep]
    pos, neg = s, 1.0 - s
    wp, wn = pos.sum(), neg.sum()
    if wp <= 0 or wn <= 0:
        return float("nan")
    uniq, inv = np.unique(scores, return_inverse=True)  # ascending distinct scores
    pos_g = np.bincount(inv, weights=pos, minlength=uniq.size)
    neg_g = np.bincount(inv, weights=neg, minlength=uniq.size)
    neg_below = np.cumsum(neg_g) - neg_g  # negative weight strictly below each distinct score
    return float((pos_g * (neg_below + 0.5 * neg_g)).sum() / (wp * wn))


def roc_curve(scores: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(false-positive rate, true-positive rate) arrays of the ROC curve, one point per distinct score."""
    scores = np.asarray(scores, dtype=np.float64).ravel()
    s = np.asarray(s, dtype=np.float64).ravel()
    keep = ~np.isnan(s) & ~np.isnan(scores)
    scores, s = scores[keep], s[keep]
    uniq, inv = np.unique(-scores, return_inverse=True)  # descending scores
    tp = np.cumsum(np.bincount(inv, weights=s, minlength=uniq.size))
    fp = np.cumsum(np.bincount(inv, weights=1.0 - s, minlength=uniq.size))
    tpr = np.concatenate([[0.0], tp / max(tp[-1], 1e-300)]) if tp.size else np.array([0.0, 1.0])
    fpr = np.concatenate([[0.0], fp / max(fp[-1], 1e-300)]) if fp.size else np.array([0.0, 1.0])
    return fpr, tpr


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
    if pred.size < 3 or pred.std() == 0 or true.std() == 0:
        return float("nan"), int(pred.size)
    return float(np.corrcoef(pred, true)[0, 1]), int(pred.size)


def _picks(P: np.ndarray, S: np.ndarray, tie_break: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Per prompt (column), the index of the top-scored model among those observed on it.

    Returns (picked model index (n,), mask of prompts with at least one observed model (n,)).
    """
    obs = ~np.isnan(S)
    has = obs.any(axis=0)
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
    recall = the same over prompts at least one observed model solved (outcome > 0).
    """
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
