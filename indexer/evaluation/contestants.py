"""The contestants an evaluation compares (predictors of success, each under a name such as ``default``,
``paper``, ``knn``, ``bsp``), behind one small interface. Numpy only, no I/O. (A *method*, in taskspace, is a
``TASKSPACE_METHOD``, :mod:`indexer.space`; the ``default`` and ``paper`` contestants are the hyperplane solver
under one method's options.)

**The interface.** A contestant has ``fit(D_src, S_src) -> Fitted``: fitted on source prompts, it predicts signed
success scores (``> 0`` = predicted success; only their order matters for AUC and selection) for target prompts
and, when it can, probabilities of success of the same (model, prompt) cells (for ECE and the Brier score):

    fitted = contestant.fit(D_src, S_src)  # D (n, d) rows, S (M, n) in [0, 1] with NaN = not observed
    P = fitted.predict(D_tgt)              # (M, n_tgt) scores
    p = fitted.probability(D_tgt, P)       # (M, n_tgt) probabilities in [0, 1], or None: no probabilities
    fitted.source_mean                     # (M,) each model's mean outcome on its source prompts
    fitted.calibration                     # how the probabilities are made (a short text; None without)

A new contestant returns :class:`Fitted` (``probability_fn(Q, P)`` gives its probabilities, e.g. a sigmoid of
its logits ``P``); one that gives scores only can be wrapped in :class:`PlattCalibrated`, which adds a Platt map
cross-fitted on the source (:func:`cross_fitted_platt`). A contestant with its own rows of the prompts (not the
embeddings) has ``rows = (X, XQ)`` and optionally ``fill`` (see :class:`SolverContestant`).

- ``SolverContestant``: the success hyperplanes of :class:`indexer.solver.HyperplaneSolver` with any constructor
  options (``paper`` = lambda 1, eps 0). With ``space`` (the ``default`` contestant) it is what the product
  serves for that space: the models in the index form (:func:`indexer.represent.index_vectors`, so on a mixed
  index a model is never extrapolated to an answer format it was not observed on) queried with the index rows,
  and the probabilities of the space's own calibration (:mod:`indexer.posterior`, fitted exactly as an index
  pass fits it: closed-form leave-one-out scores of the source cells, ``indexer.pipeline._fit_calibration``).
- ``KNNContestant``: k nearest source prompts by cosine, the model's mean outcome over those it was observed on
  (its source mean when it saw none of them), mapped to the signed scale ``2 p - 1``.
- ``BSPContestant``: best source performer: every prompt gets the model's source mean ``2 acc - 1``.
- the published peers (EmbedLLM, IRT routing, cluster profiles, per-benchmark best): :mod:`.peers`,
  registered here as :data:`PEER_SETS` and :func:`peer_contestants`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["Fitted", "SolverContestant", "KNNContestant", "BSPContestant", "PlattCalibrated", "cross_fitted_platt",
           "platt", "source_means", "CROSS_FOLDS", "CROSS_PROMPTS", "PEER_SETS",
           "peer_contestants"]

#: the Platt map of a contestant without probabilities of its own is fitted on held-out source cells of this many
#: cross-fitting folds (:func:`cross_fitted_platt`) ...
CROSS_FOLDS = 3
#: ... over a seeded sample of at most this many source prompts (two parameters need few cells: 200 prompts of 31
#: models are 6,200; the refits stay cheap)
CROSS_PROMPTS = 200


def source_means(S: np.ndarray) -> np.ndarray:
    """(M,) mean observed outcome per model (NaN for a model with no observed cell)."""
    obs = ~np.isnan(S)
    n = obs.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.nansum(S, axis=1) / np.maximum(n, 1), np.nan)


@dataclass
class Fitted:
    """What a contestant's ``fit`` returns (see the module docstring). ``predict_fn(Q)`` -> (M, n) scores;
    ``probability_fn(Q, P)`` -> (M, n) probabilities of success from the rows ``Q`` and their scores ``P``
    (None: the contestant gives none); ``calibration``: how those are made, for the results."""

    predict_fn: Callable
    source_mean: np.ndarray
    probability_fn: Callable | None = None
    calibration: str | None = None

    def predict(self, Q: np.ndarray) -> np.ndarray:
        return self.predict_fn(Q)

    def probability(self, Q: np.ndarray, P: np.ndarray | None = None) -> np.ndarray | None:
        """(M, n) probabilities of success at the rows ``Q`` (``P``: their scores, when already computed), or None."""
        if self.probability_fn is None:
            return None
        return np.clip(np.asarray(self.probability_fn(Q, self.predict(Q) if P is None else P), dtype=np.float64),
                       0.0, 1.0)


def cross_fitted_platt(fit: Callable, D: np.ndarray, S: np.ndarray, folds: int = CROSS_FOLDS, seed: int = 0,
                       size: int = CROSS_PROMPTS):
    """A Platt map (:class:`indexer.posterior.Calibration`, the map of :func:`indexer.posterior.fit_calibration`,
    fitted by :func:`platt`) of the scores of ``fit(D, S) -> Fitted`` on held-out source cells: a seeded sample of
    at most ``size`` source prompts is cut into ``folds`` parts; each part is scored by a fit on every other source
    prompt (the models observed there), and the map is fitted on those scores against the part's outcomes."""
    from .. import posterior

    D = np.asarray(D)
    n = D.shape[0]
    sample = posterior.calibration_prompts(n, seed, size)
    if sample.size < 2:
        return posterior.fit_calibration(np.zeros(0), np.zeros(0))
    parts = np.array_split(np.random.default_rng(seed).permutation(sample), min(int(folds), sample.size))
    scores, outcomes = [], []
    everything = np.arange(n)
    for part in parts:
        train = np.setdiff1d(everything, part, assume_unique=True)
        S_tr = S[:, train]
        keep = (~np.isnan(S_tr)).any(axis=1)
        if not keep.any():
            continue
        fitted = fit(D[train], S_tr[keep])
        S_part = S[keep][:, part]
        obs = ~np.isnan(S_part)
        scores.append(np.asarray(fitted.predict(D[part]))[obs])
        outcomes.append(S_part[obs])
    cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0)  # noqa: E731
    return platt(cat(scores), cat(outcomes))


def platt(scores: np.ndarray, outcomes: np.ndarray):
    """The Platt map of held-out ``scores`` against ``outcomes``: :func:`indexer.posterior.fit_calibration` (the
    map the index stores, the same fit)."""
    from ..posterior import fit_calibration

    return fit_calibration(scores, outcomes)


def _prompts_used(D) -> str:
    """How many source prompts a Platt map of :class:`PlattCalibrated` is fitted on (the sample of at most
    :data:`CROSS_PROMPTS`), for its label; before, the cap was named whatever the source's size."""
    n = np.asarray(D).shape[0]
    return f"{CROSS_PROMPTS} of {n} source prompts" if n > CROSS_PROMPTS else f"{n} source prompts"


@dataclass
class PlattCalibrated:
    """A contestant whose probabilities are a Platt map of its scores cross-fitted on the source
    (:func:`cross_fitted_platt`, ``folds`` parts), or leave-one-out when its fit can score a source prompt without
    that prompt (a ``held_out(prompts)`` attribute of the :class:`Fitted`, as kNN's: no refit). Everything else
    (``rows``, ``fill`` ...) is the ``base``'s."""

    base: object
    folds: int = CROSS_FOLDS

    def __getattr__(self, name):
        if name in ("base", "folds"):
            raise AttributeError(name)
        return getattr(self.base, name)

    def fit(self, D: np.ndarray, S: np.ndarray) -> Fitted:
        fitted = self.base.fit(D, S)
        if fitted.probability_fn is not None:
            return fitted
        held_out = getattr(fitted, "held_out", None)
        if held_out is not None:  # the fit scores a source prompt without it (kNN): leave-one-out, no refit
            from ..posterior import calibration_prompts

            sample = calibration_prompts(np.asarray(D).shape[0], 0, CROSS_PROMPTS)
            S_s = S[:, sample]
            obs = ~np.isnan(S_s)
            cal = platt(np.asarray(held_out(sample))[obs], S_s[obs])
            return Fitted(fitted.predict_fn, fitted.source_mean, lambda Q, P: cal.probability(P),
                          f"Platt map of the score, leave-one-out on {_prompts_used(D)}")
        cal = cross_fitted_platt(self.base.fit, D, S, self.folds)
        return Fitted(fitted.predict_fn, fitted.source_mean, lambda Q, P: cal.probability(P),
                      f"Platt map of the score, {self.folds}-fold cross-fitted on {_prompts_used(D)}")


@dataclass
class SolverContestant:
    """The hyperplane solver with constructor options (``lam``, ``eps``, and any option the solver takes).

    ``rows``: the contestant's own design rows ``(X, XQ)``, each (N, k), of every prompt and of every prompt's query,
    when they are not the embeddings the protocol has (a representation with covariates or the question/options
    split, :mod:`indexer.represent`); ``fill(XQ_fold, X_source_fold)`` completes a fold's query rows from its
    source rows (unknown answer options, :func:`indexer.represent.fill_from_neighbours`).

    ``space`` (a :class:`~indexer.space.SpaceSpec`): score and calibrate as the product does for that space (see the
    module docstring); without it, scores are :meth:`~indexer.solver.HyperplaneSolver.predict` and there are no
    probabilities (wrap it in :class:`PlattCalibrated`)."""

    options: dict = field(default_factory=dict)
    rows: tuple | None = None
    fill: object = None
    space: object = None

    def fit(self, D: np.ndarray, S: np.ndarray) -> Fitted:
        from .. import posterior, represent
        from ..solver import HyperplaneSolver

        formats = represent.prompt_formats(D, self.space) if self.space is not None else None
        solver = HyperplaneSolver(**self.options).fit(D, S, formats=formats)
        if self.space is None:
            return Fitted(lambda Q: solver.predict(Q).T, source_means(S))
        from ..pipeline import _fit_calibration

        V = represent.index_vectors(solver, D, self.space)  # (M, dim) the stored model vectors

        def predict(Q: np.ndarray) -> np.ndarray:
            Xi = represent.add_intercept(np.asarray(Q, dtype=np.float64), self.space)  # the index rows
            return V @ Xi.T

        cal = _fit_calibration(solver, D, S, self.space)
        if cal.folded and represent.has_levels(self.space):
            # the level/deviation map folded into the query (Calibration.fold), as the index searches: the score is
            # the map's logit, a + offset(q) + fold(q) . v_i
            u = None if solver.prior_ is None else np.asarray(solver.prior_, dtype=np.float64)
            if cal.coverage_aware:  # the source side of the coverage shares, once per fit
                Zs, seen = represent.question_rows(D, self.space), ~np.isnan(S)

            def folded(Q: np.ndarray) -> np.ndarray:
                Xi = represent.add_intercept(np.asarray(Q, dtype=np.float64), self.space)
                Qf, offset = cal.fold_rows(Xi, u)
                Z = cal.a + offset[None, :] + V @ Qf.T  # = a + offset(q) + fold(q) . v_i
                if not cal.coverage_aware:
                    return Z
                # as the index re-ranks: c times the map above, 1 - c times the one with the uncovered weight, c the
                # share of the query's nearest source prompts each model was observed on (posterior.coverage_shares)
                Qu, offset_u = cal.fold_rows(Xi, u, own=cal.uncovered)
                c = posterior.coverage_shares(represent.question_rows(Q, self.space), Zs, seen)
                return c * Z + (1.0 - c) * (cal.a + offset_u[None, :] + V @ Qu.T)

            return Fitted(folded, source_means(S), lambda Q, P: 0.5 * (1.0 + np.tanh(0.5 * cal.bend(P))),
                          "the space's own calibration as `taskspace index` fits it (the level/deviation map on "
                          "cross-fitted held-out source prompts, folded into the query; indexer.posterior)")
        how = ("Platt map of closed-form leave-one-out source scores" if not np.isnan(np.asarray(solver.noise_)).any()
               else "Platt map of in-sample source scores (the plain method has no leverages)")
        return Fitted(predict, source_means(S), lambda Q, P: cal.probability(P),
                      f"the space's own calibration as `taskspace index` fits it ({how}, indexer.posterior)")


@dataclass
class KNNContestant:
    """k nearest source prompts by cosine similarity (embeddings are unit rows, so a dot product)."""

    k: int = 5

    def fit(self, D: np.ndarray, S: np.ndarray) -> Fitted:
        D = np.asarray(D, dtype=np.float32)
        mean = source_means(S)
        obs = ~np.isnan(S)
        S0 = np.where(obs, S, 0.0).astype(np.float32)
        O = obs.astype(np.float32)
        k = min(self.k, D.shape[0])

        def predict(Q: np.ndarray, exclude: np.ndarray | None = None) -> np.ndarray:
            from ..represent import nearest

            out = np.empty((S.shape[0], Q.shape[0]))
            # (q, k) the k most similar source prompts; leave-one-out: a source prompt is not its own neighbour
            every = nearest(np.asarray(Q, dtype=np.float32), D, k, exclude=exclude, block=2048)
            for lo in range(0, Q.shape[0], 2048):
                nn = every[lo : lo + 2048]
                num = S0[:, nn].sum(axis=2)  # (M, q): sum of the model's outcomes on the neighbours it saw
                den = O[:, nn].sum(axis=2)  # (M, q): how many of the neighbours it saw
                with np.errstate(invalid="ignore", divide="ignore"):
                    p = np.where(den > 0, num / np.maximum(den, 1), mean[:, None])
                out[:, lo : lo + 2048] = 2.0 * p - 1.0
            return out

        fitted = Fitted(predict, mean)
        fitted.held_out = lambda prompts: predict(D[prompts], exclude=np.asarray(prompts))  # type: ignore[attr-defined]
        return fitted


@dataclass
class BSPContestant:
    """Best source performer: one score per model, its mean source outcome."""

    def fit(self, D: np.ndarray, S: np.ndarray) -> Fitted:
        mean = source_means(S)
        return Fitted(lambda Q: np.repeat((2.0 * mean - 1.0)[:, None], Q.shape[0], axis=1), mean)


from .peers import PEER_SETS, peer_contestants  # noqa: E402  (the published peers, registered here)
