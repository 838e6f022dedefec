"""What a prediction is worth: the calibrated probability of success and its uncertainty. Numpy (scikit-learn's
logistic regression only where the cells separate), no I/O.

Every model's fit is a ridge regression, so its score at a prompt has a closed-form posterior
(:func:`indexer.solver.ridge.predictive_variance`): the residual variance ``s_i^2`` of the model times the
leverage of the prompt's (effective) design row under the eigendecomposition its coverage pattern shares with every
model observed on the same prompts. A :class:`PatternPosterior` is what a pattern contributes (stored once per
pattern, not per model); a model adds its lambda and ``s_i^2``. The variance grows as a query leaves the prompts
the model was observed on, toward the prior's ``s_i^2 / (2 lambda_i)`` per unit in directions it never saw.

A :class:`Calibration` turns a raw score (the inner product Qdrant ranks by) into a probability: a logistic
(Platt) map ``p = 1 / (1 + exp(-(a + b score)))`` fitted on held-out source cells when the space is fitted:
the closed-form leave-one-out predictions of the ridge fits, ``y_j - r_j / (1 - h_jj)`` with ``h_jj`` the
prompt's leverage (:func:`loo_cells`), on a seeded sample of prompts. The map depends on the score alone and is
increasing, so ranking by probability is ranking by score (Qdrant's order). The interval is the posterior one
of the score mapped through the same calibration: ``p(score -/+ z sd)``; ranking by its lower end (a lower
confidence bound) re-ranks a candidate set (:func:`lcb_candidates_exact`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PatternPosterior", "Calibration", "Predictor", "pattern_posteriors", "score_variance", "loo_cells",
           "fit_calibration", "calibration_prompts", "lcb_candidates_exact", "Z_INTERVAL", "CALIBRATION_PROMPTS"]

#: the interval is the posterior's central 90% (z = 1.645) mapped through the calibration
Z_INTERVAL = 1.6448536269514722
#: how many source prompts (a seeded sample) the calibration's leave-one-out cells come from
CALIBRATION_PROMPTS = 2000


@dataclass(frozen=True, eq=False)
class PatternPosterior:
    """The posterior factors one coverage pattern shares with all its models.

    ``key``: a stable id of the pattern's prompt set; ``n``: its prompts; ``mu`` (d,): its mean design row;
    ``w`` (p,), ``V`` (p, p): eigendecomposition of its centred Gram with the free covariates partialled out;
    ``K`` (p, k), ``Cinv`` (k, k): the covariates' blocks (None without); ``formats``: (observed with answer
    options, observed without), for spaces that keep the two apart (:func:`indexer.represent.has_formats`)."""

    key: str
    n: int
    mu: np.ndarray
    w: np.ndarray
    V: np.ndarray
    K: np.ndarray | None = None
    Cinv: np.ndarray | None = None
    formats: tuple[bool, bool] = (True, True)

    def eigen(self):
        """The solver's :class:`~indexer.solver.ridge.Eigen` of these factors."""
        from .solver.ridge import Covariates, Eigen

        cov = None
        if self.K is not None:
            cov = Covariates(B=np.zeros_like(self.K), K=np.asarray(self.K, np.float64),
                             Cinv=np.asarray(self.Cinv, np.float64), rank=0.0)
        return Eigen(np.asarray(self.w, np.float64), np.asarray(self.V, np.float64), np.asarray(self.mu, np.float64),
                     cov)


def pattern_posteriors(solver, X: np.ndarray, keys: dict[bytes, str] | None = None,
                       space=None) -> dict[bytes, PatternPosterior]:
    """The :class:`PatternPosterior` of each coverage pattern the solver's models use, by the solver's pattern
    key; ``keys`` maps those to stable ids (default: their hex). ``X``: the design rows the solver was fitted on
    (for a split space's formats)."""
    from . import represent

    out = {}
    split = space is not None and represent.has_formats(space)
    for key, (n, eig) in solver.factors(sorted(set(solver.pattern_of_))).items():
        cov = eig.covariates
        formats = represent.pattern_formats(X, solver.patterns_[key].mask) if split else (True, True)
        out[key] = PatternPosterior(
            key=(keys or {}).get(key, key.hex()), n=int(n), mu=eig.mu, w=eig.w, V=eig.V,
            K=None if cov is None else cov.K, Cinv=None if cov is None else cov.Cinv, formats=formats)
    return out


def score_variance(post: PatternPosterior, lam: np.ndarray, noise: np.ndarray, rows: np.ndarray, space) -> np.ndarray:
    """(q, k): the posterior variance of the scores of k models of the pattern ``post`` (their ``lam``, ``noise``
    (k,)) at the index rows ``rows`` (q, dim) of ``space``."""
    from . import represent
    from .solver.ridge import predictive_variance

    X = represent.effective_rows(rows, np.asarray(post.mu, np.float64), post.formats, space)
    return predictive_variance(post.eigen(), post.n, np.atleast_1d(lam), np.atleast_1d(noise), X)


def loo_cells(solver, X: np.ndarray, S: np.ndarray, prompts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Closed-form leave-one-out scores of the solver's models on the source prompts ``prompts`` (indices into
    the rows ``X`` (N, d) the solver was fitted on and the columns of its outcomes ``S`` (M, N)): for every
    observed cell, ``y_j - r_j / (1 - h_jj)`` with the fit's residual ``r_j`` and the leverage
    ``h_jj = var(score at x_j) / s_i^2``. Returns (scores, outcomes in [0, 1]), one entry per observed cell."""
    Xp = np.asarray(X[prompts], dtype=np.float64)
    P = solver.predict(Xp).T  # (M, q) fitted scores
    H = solver.predictive_variance(Xp).T / np.asarray(solver.noise_)[:, None]  # (M, q) leverages
    Sp = np.asarray(S[:, prompts], dtype=np.float64)
    obs = ~np.isnan(Sp)
    y = 2.0 * Sp[obs] - 1.0
    r = y - P[obs]
    loo = y - r / np.maximum(1.0 - H[obs], 1e-3)
    return loo, Sp[obs]


@dataclass(frozen=True)
class Calibration:
    """``p = 1 / (1 + exp(-(a + b score)))`` (see the module docstring); ``n_cells``: the held-out source cells
    it was fitted on, ``n_models``: from how many models (as stored with a space). ``spread``: the variance across
    those models of their mean signed outcome (how much models differ in general level): the uncertainty of a
    model's score on an answer format it was never observed on, where its own average stands in
    (:func:`indexer.represent.index_vectors`)."""

    a: float
    b: float
    n_cells: int = 0
    n_models: int = 0
    spread: float = 0.0

    def probability(self, score) -> np.ndarray:
        """Calibrated probability of success of raw scores (any shape)."""
        z = self.a + self.b * np.asarray(score, dtype=np.float64)
        return 0.5 * (1.0 + np.tanh(0.5 * z))  # the logistic function, without overflow

    def interval(self, score, variance, z: float = Z_INTERVAL) -> tuple[np.ndarray, np.ndarray]:
        """(low, high): the posterior interval ``score -/+ z sd`` mapped through the calibration."""
        sd = np.sqrt(np.maximum(np.asarray(variance, dtype=np.float64), 0.0))
        s = np.asarray(score, dtype=np.float64)
        return self.probability(s - z * sd), self.probability(s + z * sd)

    def as_dict(self) -> dict:
        return {"a": float(self.a), "b": float(self.b), "n_cells": int(self.n_cells), "n_models": int(self.n_models),
                "spread": float(self.spread)}


def fit_calibration(scores: np.ndarray, outcomes: np.ndarray, spread: float = 0.0) -> Calibration:
    """A :class:`Calibration` fitted on held-out cells: logistic regression of the outcome on the score, unregularised,
    by Newton's method on its two parameters (the map scikit-learn's ``LogisticRegression(C=1e6)`` finds, in a
    fraction of its time; a test checks they agree); a graded outcome ``s`` counts as ``s`` of a success and
    ``1 - s`` of a failure. Too few cells, or only one class: the identity-like map ``p = (1 + tanh(score)) / 2``.
    Cells that separate the classes (no finite optimum): scikit-learn's nearly unregularised fit. The map is kept
    increasing (so Qdrant's score order stays the probability order): a fitted slope <= 0 means the held-out scores
    say nothing about success, and every score maps to the cells' base rate (slope 0)."""
    x = np.asarray(scores, dtype=np.float64).ravel()
    s = np.asarray(outcomes, dtype=np.float64).ravel()
    keep = np.isfinite(x) & np.isfinite(s)
    x, s = x[keep], s[keep]
    if x.size < 20 or s.sum() <= 0 or (1 - s).sum() <= 0:
        return Calibration(0.0, 2.0, int(x.size), spread=float(spread))
    a, b, ok = 0.0, 0.0, False
    for _ in range(100):
        p = 0.5 * (1.0 + np.tanh(0.5 * (a + b * x)))
        r, w = s - p, p * (1.0 - p)  # the log-likelihood's gradient is (sum r, sum r x)
        wx = w * x
        H = np.array([[w.sum(), wx.sum()], [wx.sum(), (wx * x).sum()]])
        try:
            step = np.linalg.solve(H, np.array([r.sum(), (r * x).sum()]))
        except np.linalg.LinAlgError:
            break
        if not np.isfinite(step).all() or np.abs(step).max() > 1e6:
            break
        a, b = a + step[0], b + step[1]
        if np.abs(step).max() < 1e-10:
            ok = True
            break
    if not ok:
        from sklearn.linear_model import LogisticRegression

        X = np.concatenate([x, x])[:, None]
        y = np.concatenate([np.ones(x.size), np.zeros(x.size)])
        w = np.concatenate([s, 1.0 - s])
        lr = LogisticRegression(C=1e6, max_iter=1000).fit(X, y, sample_weight=w)
        a, b = float(lr.intercept_[0]), float(lr.coef_[0, 0])
    if not b > 0:  # held-out scores that do not rise with success carry no calibrated information: the base rate
        rate = float(np.clip(s.mean(), 1e-6, 1 - 1e-6))
        a, b = float(np.log(rate / (1.0 - rate))), 0.0
    return Calibration(float(a), float(b), int(x.size), spread=float(spread))


def level_spread(S: np.ndarray) -> float:
    """The variance across models (rows of ``S`` (M, N), NaN = not observed) of their mean signed outcome
    ``2 s - 1``: :attr:`Calibration.spread`. 0 with fewer than two models."""
    with np.errstate(invalid="ignore"):
        levels = 2.0 * np.nanmean(np.asarray(S, dtype=np.float64), axis=1) - 1.0
    levels = levels[np.isfinite(levels)]
    return float(levels.var(ddof=1)) if levels.size > 1 else 0.0


def calibration_prompts(n: int, seed: int = 0, size: int = CALIBRATION_PROMPTS) -> np.ndarray:
    """A seeded sample of at most ``size`` of ``n`` prompt indices (sorted) for :func:`loo_cells`."""
    if n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False))


def lcb_candidates_exact(scores: np.ndarray, lower: np.ndarray, k: int, next_score: float | None) -> bool:
    """True when ranking candidates by a lower bound ``lower`` (<= ``scores``) is exact for the top ``k``: every
    model outside the candidate set has a score <= ``next_score`` (the best score not fetched; None: all
    fetched), hence a lower bound <= it, so the top k are settled when the k-th best ``lower`` is >= it."""
    if next_score is None or len(scores) == 0:
        return True
    kth = np.sort(np.asarray(lower))[::-1][min(k, len(lower)) - 1]
    return bool(kth >= next_score)


class Predictor:
    """Probabilities and intervals of a space's models for one query (what :func:`indexer.query.find_models`
    shows with every result). ``calibration``: the space's map (None: never fitted, e.g. an index not re-indexed
    since; then ``(1 + score) / 2``, clipped, stands in: the score estimates ``2 p - 1``, and ``calibrated`` is
    False). ``load_patterns(keys)``: the stored :class:`PatternPosterior` of the given pattern keys (cached here)."""

    def __init__(self, space, calibration: Calibration | None, load_patterns, level=None):
        self.space = space
        self.calibration = calibration
        self._load = load_patterns
        #: a level space's map of its rows (:class:`indexer.represent.Level`): its patterns' factors are of mapped rows
        self.level = level
        self._patterns: dict[str, PatternPosterior] = {}

    @property
    def calibrated(self) -> bool:
        return self.calibration is not None

    def probability(self, scores) -> np.ndarray:
        s = np.asarray(scores, dtype=np.float64)
        if self.calibration is None:
            return np.clip((1.0 + s) / 2.0, 0.0, 1.0)
        return self.calibration.probability(s)

    def variance(self, payloads: list[dict], row: np.ndarray) -> np.ndarray:
        """(k,) posterior variance of each model's score at the index row ``row`` (dim,); NaN for a model without a
        stored posterior (the plain method, or a vector from before posteriors were kept)."""
        out = np.full(len(payloads), np.nan)
        from . import represent

        if self.level is None and represent.level_set(self.space):  # a level space without its map (pulled from
            return out  # a publication, which does not carry it): its factors are of mapped rows, so unknown here
        keys = {p.get("pattern") for p in payloads if p.get("pattern") and p.get("noise") is not None}
        missing = [k for k in keys if k not in self._patterns]
        if missing:
            self._patterns.update(self._load(missing))
        groups: dict[str, list[int]] = {}
        for i, p in enumerate(payloads):
            if p.get("pattern") in self._patterns and p.get("noise") is not None and p.get("lam") is not None:
                groups.setdefault(p["pattern"], []).append(i)
        row = np.asarray(row, dtype=np.float64)
        mapped = row if self.level is None else self.level.apply(row)[0]  # the row the factors were taken of
        for key, idx in groups.items():
            post = self._patterns[key]
            lam = np.array([payloads[i]["lam"] for i in idx], dtype=np.float64)
            noise = np.array([payloads[i]["noise"] for i in idx], dtype=np.float64)
            out[idx] = score_variance(post, lam, noise, mapped[None, :], self.space)[0] + self._unseen(post, row)
        return out

    def _unseen(self, post: PatternPosterior, row: np.ndarray) -> float:
        """The variance a never-observed answer format adds: its weight in the query (``m`` with options,
        ``1 - m`` without) squared, times the calibration's ``spread``."""
        from . import represent

        if self.calibration is None or not represent.has_formats(self.space):
            return 0.0
        m = float(row[-2])
        w = (0.0 if post.formats[0] else m) + (0.0 if post.formats[1] else 1.0 - m)
        return w * w * float(self.calibration.spread)

    def interval(self, scores, variance) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) probabilities: the score's posterior interval (:data:`Z_INTERVAL` sd) mapped like the score;
        NaN where the variance is unknown."""
        s = np.asarray(scores, dtype=np.float64)
        v = np.asarray(variance, dtype=np.float64)
        sd = np.sqrt(np.maximum(v, 0.0))
        return self.probability(s - Z_INTERVAL * sd), self.probability(s + Z_INTERVAL * sd)
