"""The contestants an evaluation compares (predictors of success, each under a name such as ``default``,
``paper``, ``knn``, ``bsp``), behind one small interface. Numpy only, no I/O. (A *method*, in taskspace, is a
``TASKSPACE_METHOD``, :mod:`indexer.space`; the ``default`` and ``paper`` contestants are the hyperplane solver
under one method's options.)

A contestant is fitted on source prompts and predicts signed success scores (``> 0`` = predicted success) for
target prompts:

    fitted = contestant.fit(D_src, S_src)  # D (n, d) unit rows, S (M, n) in [0, 1] with NaN = not observed
    P = fitted.predict(D_tgt)              # (M, n_tgt)
    fitted.source_mean                     # (M,) each model's mean outcome on its source prompts

- ``SolverContestant``: the success hyperplanes of :class:`indexer.solver.HyperplaneSolver` with any constructor
  options (``paper`` = lambda 1, eps 0; ``default`` = what taskspace uses).
- ``KNNContestant``: k nearest source prompts by cosine, the model's mean outcome over those it was observed on
  (its source mean when it saw none of them), mapped to the signed scale ``2 p - 1``.
- ``BSPContestant``: best source performer: every prompt gets the model's source mean ``2 acc - 1``.
- the published peers (EmbedLLM, IRT routing, cluster profiles, per-benchmark best): :mod:`.peers`,
  registered here as :data:`PEER_SETS` and :func:`peer_contestants`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SolverContestant", "KNNContestant", "BSPContestant", "source_means", "PEER_SETS", "peer_contestants"]


def source_means(S: np.ndarray) -> np.ndarray:
    """(M,) mean observed outcome per model (NaN for a model with no observed cell)."""
    obs = ~np.isnan(S)
    n = obs.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.nansum(S, axis=1) / np.maximum(n, 1), np.nan)


@dataclass
class _Fitted:
    predict_fn: object
    source_mean: np.ndarray

    def predict(self, Q: np.ndarray) -> np.ndarray:
        return self.predict_fn(Q)


@dataclass
class SolverContestant:
    """The hyperplane solver with constructor options (``lam``, ``eps``, and any option the solver takes).

    ``rows``: the contestant's own design rows ``(X, XQ)``, each (N, k), of every prompt and of every prompt's query,
    when they are not the embeddings the protocol has (a representation with covariates or the question/options
    split, :mod:`indexer.represent`); ``fill(XQ_fold, X_source_fold)`` completes a fold's query rows from its
    source rows (unknown answer options, :func:`indexer.represent.fill_from_neighbours`)."""

    options: dict = field(default_factory=dict)
    rows: tuple | None = None
    fill: object = None

    def fit(self, D: np.ndarray, S: np.ndarray) -> _Fitted:
        from ..solver import HyperplaneSolver

        solver = HyperplaneSolver(**self.options).fit(D, S)
        return _Fitted(lambda Q: solver.predict(Q).T, source_means(S))


@dataclass
class KNNContestant:
    """k nearest source prompts by cosine similarity (embeddings are unit rows, so a dot product)."""

    k: int = 5

    def fit(self, D: np.ndarray, S: np.ndarray) -> _Fitted:
        D = np.asarray(D, dtype=np.float32)
        mean = source_means(S)
        obs = ~np.isnan(S)
        S0 = np.where(obs, S, 0.0).astype(np.float32)
        O = obs.astype(np.float32)
        k = min(self.k, D.shape[0])

        def predict(Q: np.ndarray) -> np.ndarray:
            out = np.empty((S.shape[0], Q.shape[0]))
            for lo in range(0, Q.shape[0], 2048):
                sims = np.asarray(Q[lo : lo + 2048], dtype=np.float32) @ D.T  # (q, n)
                nn = np.argpartition(-sims, k - 1, axis=1)[:, :k]  # (q, k) the k most similar source prompts
                num = S0[:, nn].sum(axis=2)  # (M, q): sum of the model's outcomes on the neighbours it saw
                den = O[:, nn].sum(axis=2)  # (M, q): how many of the neighbours it saw
                with np.errstate(invalid="ignore", divide="ignore"):
                    p = np.where(den > 0, num / np.maximum(den, 1), mean[:, None])
                out[:, lo : lo + 2048] = 2.0 * p - 1.0
            return out

        return _Fitted(predict, mean)


@dataclass
class BSPContestant:
    """Best source performer: one score per model, its mean source outcome."""

    def fit(self, D: np.ndarray, S: np.ndarray) -> _Fitted:
        mean = source_means(S)
        return _Fitted(lambda Q: np.repeat((2.0 * mean - 1.0)[:, None], Q.shape[0], axis=1), mean)


from .peers import PEER_SETS, peer_contestants  # noqa: E402  (the peers use source_means above)
