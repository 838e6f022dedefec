"""The closed-form success-hyperplane solver (Kashani, Mendelson, Nemcovsky 2025), numpy only, no I/O.

Notation (``docs/METHOD.md`` and ``DESIGN.md`` §1):

- ``D``  (N, d): prompt embeddings, one L2-normalised row per prompt.
- ``S``  (M, N): graded outcomes in [0, 1]; ``NaN`` marks a cell that was not observed (never "wrong").
- ``y_ij = 2 s_ij - 1`` in [-1, 1].
- Model i observes the prompt set ``O_i``.  Its sufficient statistics are

      G_i = sum_{j in O_i} d_j d_j^T   (d, d)        b_i = sum_{j in O_i} y_ij d_j   (d,)

  and with the eigendecomposition ``G_i = V diag(w) V^T``:

      e_i = b_i V diag(phi(w)) V^T,    phi(w) = 0 if sqrt(w) < eps else 1 / (w + 2 lambda)

  which equals the paper's ``P U S' V^T`` (``S'_k = s_k / (s_k^2 + 2 lambda)`` above the threshold) exactly.

Models that observe the same prompts share one ``G`` and hence one projection matrix
``V diag(phi) V^T``; the solver groups models by coverage pattern and decomposes each pattern once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np

from .errors import DimensionError, InputError, NotFoundError

__all__ = [
    "HyperplaneSolver",
    "shrinkage",
    "projection",
    "paper_normals",
    "signed_outcomes",
    "validate_embeddings",
]

#: Models are processed in chunks of this many rows so (chunk, N) float64 temporaries stay small.
_CHUNK = 512


def validate_embeddings(D: np.ndarray, *, dim: int | None = None, ids: Sequence[Hashable] | None = None) -> np.ndarray:
    """Check an (N, d) embedding matrix: 2-D, finite, of the expected dimension. Returns it as an array.

    Raises :class:`InputError` naming the first bad row (by id when ``ids`` is given).
    """
    D = np.asarray(D)
    if D.ndim != 2:
        raise DimensionError(f"embeddings must be a 2-D (prompts, dim) array, got shape {D.shape}")
    if dim is not None and D.shape[1] != dim:
        raise DimensionError(
            f"embeddings have dimension {D.shape[1]} but this space has dimension {dim}; "
            "embed with the space's encoder or create a new space"
        )
    finite = np.isfinite(D).all(axis=1)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        name = ids[row] if ids is not None else row
        raise InputError(
            f"embedding of prompt {name!r} contains NaN or inf; re-encode it (clear its cache entry)",
            item=f"prompt {name}",
        )
    return D


def signed_outcomes(S: np.ndarray, *, model_ids: Sequence[Hashable] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Map graded outcomes s in [0, 1] (NaN = missing) to y = 2s - 1 with missing cells set to 0.

    Parameters
    ----------
    S : (M, N) array of float, values in [0, 1] or NaN.

    Returns
    -------
    Y : (M, N) float64, 2s-1 on observed cells and 0 elsewhere.
    observed : (M, N) bool.
    """
    S = np.asarray(S, dtype=np.float64)
    if S.ndim == 1:
        S = S[None, :]
    observed = ~np.isnan(S)
    if np.isinf(S).any() or ((S[observed] < 0) | (S[observed] > 1)).any():
        bad = np.argwhere(np.isinf(S) | (observed & ((S < 0) | (S > 1))))[0]
        name = model_ids[bad[0]] if model_ids is not None else int(bad[0])
        raise InputError(
            f"outcome {S[bad[0], bad[1]]!r} on prompt column {int(bad[1])} is outside [0, 1]; "
            "outcomes are 0/1 or a graded score in [0, 1] (use NaN for not observed)",
            item=f"model {name}",
        )
    Y = np.where(observed, 2.0 * np.nan_to_num(S) - 1.0, 0.0)
    return Y, observed


def shrinkage(w: np.ndarray, lam: float, eps: float) -> np.ndarray:
    """phi(w) of the eigenvalues ``w`` (d,) of a Gram matrix: 0 below the threshold, else 1/(w + 2 lambda).

    ``sqrt(w)`` are the singular values of the model's prompt matrix. With ``lam == 0`` this is the
    pseudo-inverse, so eigenvalues at round-off level (relative 1e-12) are dropped as numpy's ``pinv`` does.
    """
    w = np.clip(np.asarray(w, dtype=np.float64), 0.0, None)
    keep = np.sqrt(w) >= eps
    if lam == 0:
        keep &= w > (w.max(initial=0.0) * 1e-12)
    denom = w + 2.0 * lam
    out = np.zeros_like(w)
    np.divide(1.0, denom, out=out, where=keep & (denom > 0))
    return out


def projection(G: np.ndarray, lam: float, eps: float) -> np.ndarray:
    """The (d, d) matrix ``V diag(phi(w)) V^T`` of a Gram matrix ``G = V diag(w) V^T``; ``e = b @ it``."""
    w, V = np.linalg.eigh(G)
    phi = shrinkage(w, lam, eps)
    return (V * phi) @ V.T


def paper_normals(D: np.ndarray, S: np.ndarray, lam: float = 1.0, eps: float = 0.0) -> np.ndarray:
    """The paper's formula computed the direct way, for dense outcomes: ``E = P U S' V^T``.

    ``D`` (N, d), ``S`` (M, N) in [0, 1] without NaN. Returns E (M, d). Used as the reference in tests
    and benchmarks; the solver never calls it.
    """
    Y, observed = signed_outcomes(S)
    if not observed.all():
        raise InputError("paper_normals needs dense outcomes (no NaN)")
    U, s, Vt = np.linalg.svd(np.asarray(D, dtype=np.float64), full_matrices=False)
    keep = s >= eps
    if lam == 0:
        keep &= s > s.max(initial=0.0) * 1e-6
    s_prime = np.zeros_like(s)
    s_prime[keep] = s[keep] / (s[keep] ** 2 + 2.0 * lam)
    return ((Y @ U) * s_prime) @ Vt


def _pattern_key(mask: np.ndarray) -> bytes:
    """A compact key of a boolean coverage row (N,)."""
    if mask.all():
        return b"all"
    return hashlib.blake2b(np.packbits(mask).tobytes(), digest_size=16).digest() + mask.size.to_bytes(8, "little")


@dataclass
class _Pattern:
    mask: np.ndarray  # (N,) bool
    proj: np.ndarray | None = None  # (d, d) float64 projection, computed lazily
    n: int = 0


class HyperplaneSolver:
    """Success-hyperplane normals of many models in one embedding space (closed form, incremental).

    Parameters
    ----------
    lam : float, default 1.0
        Tikhonov regularisation lambda (the paper uses 1).
    eps : float, default 0.0
        Threshold on the singular values ``sqrt(w)`` of each model's prompt matrix; components below it
        are dropped.

    Attributes (after ``fit``)
    --------------------------
    normals_ : (M, d) float64
        Row i is e_i; ``Q @ normals_.T`` gives predicted success scores.
    b_ : (M, d) float64
        Outcome sums ``b_i = sum_j y_ij d_j``.
    n_observed_ : (M,) int
        Number of prompts each model was observed on.
    gram_ : (d, d) float64
        ``D^T D`` over all prompts.
    model_ids_ : list
        Model identifiers in row order (default 0..M-1).
    """

    def __init__(self, lam: float = 1.0, eps: float = 0.0):
        self.lam = lam
        self.eps = eps

    # ------------------------------------------------------------------ fitting
    def fit(self, D: np.ndarray, S: np.ndarray, model_ids: Sequence[Hashable] | None = None) -> "HyperplaneSolver":
        """Fit every model from scratch.

        Parameters
        ----------
        D : (N, d) prompt embeddings (float32 or float64).
        S : (M, N) outcomes in [0, 1], NaN where not observed.
        model_ids : M hashable ids (default ``range(M)``).
        """
        self._check_params()
        D = validate_embeddings(D)
        S = np.asarray(S)
        if S.ndim != 2 or S.shape[1] != D.shape[0]:
            raise DimensionError(
                f"outcomes have shape {S.shape}; expected (models, {D.shape[0]}) to match {D.shape[0]} prompts"
            )
        self.D_ = D
        self.gram_ = self._gram(D)
        self.patterns_: dict[bytes, _Pattern] = {}
        self.model_ids_: list = []
        self.pattern_of_: list[bytes] = []
        M, d = S.shape[0], D.shape[1]
        self.b_ = np.zeros((0, d))
        self.n_observed_ = np.zeros(0, dtype=np.int64)
        self.normals_ = np.zeros((0, d))
        ids = list(model_ids) if model_ids is not None else list(range(M))
        if len(ids) != M:
            raise InputError(f"{len(ids)} model ids for {M} outcome rows")
        return self.add_models(S, ids)

    def add_models(self, S: np.ndarray, model_ids: Sequence[Hashable] | None = None) -> "HyperplaneSolver":
        """Add models (one pass over their outcomes, no refit of the others).

        ``S`` (K, N) or (N,) outcomes over the current prompts, NaN where not observed.
        """
        self._check_fitted()
        S = np.asarray(S, dtype=np.float64)
        if S.ndim == 1:
            S = S[None, :]
        N = self.D_.shape[0]
        if S.shape[1] != N:
            raise DimensionError(f"outcomes cover {S.shape[1]} prompts; the solver has {N}")
        start = len(self.model_ids_)
        ids = list(model_ids) if model_ids is not None else list(range(start, start + S.shape[0]))
        if len(ids) != S.shape[0]:
            raise InputError(f"{len(ids)} model ids for {S.shape[0]} outcome rows")
        known = set(self.model_ids_)
        for mid in ids:
            if mid in known:
                raise InputError("model is already fitted; use replace_model", item=f"model {mid}")
            known.add(mid)
        b_parts, n_parts, keys = [], [], []
        for lo in range(0, S.shape[0], _CHUNK):
            chunk_ids = ids[lo : lo + _CHUNK]
            Y, observed = signed_outcomes(S[lo : lo + _CHUNK], model_ids=chunk_ids)
            n = observed.sum(axis=1)
            if (n == 0).any():
                bad = chunk_ids[int(np.flatnonzero(n == 0)[0])]
                raise InputError("model has no observed outcome; drop it or add its results", item=f"model {bad}")
            b_parts.append(Y @ self.D_)  # b_i = sum_j y_ij d_j   (K, d)
            n_parts.append(n)
            for row in observed:
                keys.append(self._register_pattern(row))
        b = np.concatenate(b_parts).astype(np.float64, copy=False)
        self.model_ids_.extend(ids)
        self.pattern_of_.extend(keys)
        self.b_ = np.vstack([self.b_, b])
        self.n_observed_ = np.concatenate([self.n_observed_, np.concatenate(n_parts)])
        self.normals_ = np.vstack([self.normals_, np.zeros_like(b)])
        self._solve(range(start, start + len(ids)))
        return self

    def replace_model(self, model_id: Hashable, s: np.ndarray) -> "HyperplaneSolver":
        """Replace one model's outcomes (N,) and re-solve only that model."""
        i = self.index_of(model_id)
        Y, observed = signed_outcomes(np.asarray(s, dtype=np.float64)[None, :], model_ids=[model_id])
        if observed.sum() == 0:
            raise InputError("model has no observed outcome; use remove_models", item=f"model {model_id}")
        self.b_[i] = (Y @ self.D_)[0]
        self.n_observed_[i] = int(observed.sum())
        self.pattern_of_[i] = self._register_pattern(observed[0])
        self._solve([i])
        self._drop_unused_patterns()
        return self

    def remove_models(self, model_ids: Sequence[Hashable]) -> "HyperplaneSolver":
        """Remove models; the others are untouched."""
        drop = {self.index_of(m) for m in model_ids}
        keep = np.array([i for i in range(len(self.model_ids_)) if i not in drop], dtype=np.int64)
        self.model_ids_ = [self.model_ids_[i] for i in keep]
        self.pattern_of_ = [self.pattern_of_[i] for i in keep]
        self.b_ = self.b_[keep]
        self.n_observed_ = self.n_observed_[keep]
        self.normals_ = self.normals_[keep]
        self._drop_unused_patterns()
        return self

    def add_prompts(self, D_new: np.ndarray, S_new: np.ndarray) -> "HyperplaneSolver":
        """Add prompts (a new benchmark, more questions) and the current models' outcomes on them.

        ``D_new`` (K, d) embeddings; ``S_new`` (M, K) outcomes of the fitted models in row order, NaN where a
        model was not observed. Only the models with an observed outcome on a new prompt are re-solved.
        """
        self._check_fitted()
        D_new = validate_embeddings(D_new, dim=self.D_.shape[1])
        S_new = np.asarray(S_new, dtype=np.float64)
        if S_new.ndim == 1:
            S_new = S_new[:, None]
        M = len(self.model_ids_)
        if S_new.shape != (M, D_new.shape[0]):
            raise DimensionError(f"new outcomes have shape {S_new.shape}; expected ({M}, {D_new.shape[0]})")
        Y, observed = signed_outcomes(S_new, model_ids=self.model_ids_)
        self.D_ = np.vstack([self.D_, D_new.astype(self.D_.dtype, copy=False)])
        self.gram_ = self.gram_ + self._gram(D_new)
        self.b_ += Y @ D_new
        self.n_observed_ += observed.sum(axis=1)
        # Extend every coverage pattern with the new columns; a model that saw a new prompt gets a new pattern.
        old_masks = {k: p.mask for k, p in self.patterns_.items()}
        self.patterns_ = {}
        touched = []
        for i in range(M):
            mask = np.concatenate([old_masks[self.pattern_of_[i]], observed[i]])
            self.pattern_of_[i] = self._register_pattern(mask)
            if observed[i].any():
                touched.append(i)
        self._solve(touched)
        return self

    # ------------------------------------------------------------------ use
    def predict(self, Q: np.ndarray) -> np.ndarray:
        """Predicted success scores ``Q @ normals_.T``: Q (n, d) -> (n, M)."""
        self._check_fitted()
        Q = validate_embeddings(np.atleast_2d(Q), dim=self.D_.shape[1])
        return Q @ self.normals_.T

    def index_of(self, model_id: Hashable) -> int:
        try:
            return self.model_ids_.index(model_id)
        except ValueError:
            raise NotFoundError(f"model {model_id!r} is not in the solver") from None

    # ------------------------------------------------------------------ internals
    def _check_params(self) -> None:
        if not np.isfinite(self.lam) or self.lam < 0:
            raise InputError(f"lam={self.lam!r} must be a finite number >= 0")
        if not np.isfinite(self.eps) or self.eps < 0:
            raise InputError(f"eps={self.eps!r} must be a finite number >= 0")

    def _check_fitted(self) -> None:
        if not hasattr(self, "D_"):
            raise NotFoundError("the solver is not fitted; call fit(D, S) first")

    @staticmethod
    def _gram(D: np.ndarray) -> np.ndarray:
        """``D^T D`` in float64, (d, d), accumulated in row chunks to bound the float64 copy."""
        d = D.shape[1]
        G = np.zeros((d, d))
        for lo in range(0, D.shape[0], 65536):
            part = np.asarray(D[lo : lo + 65536], dtype=np.float64)
            G += part.T @ part
        return G

    def _register_pattern(self, mask: np.ndarray) -> bytes:
        key = _pattern_key(mask)
        pat = self.patterns_.get(key)
        if pat is None:
            self.patterns_[key] = pat = _Pattern(mask=mask.copy())
        return key

    def _pattern_gram(self, mask: np.ndarray) -> np.ndarray:
        """``G`` over the prompts in ``mask``: the full Gram minus the missing rows when few are missing."""
        missing = ~mask
        n_missing = int(missing.sum())
        if n_missing == 0:
            return self.gram_
        if n_missing < mask.size // 2:
            return self.gram_ - self._gram(self.D_[missing])
        return self._gram(self.D_[mask])

    def _solve(self, rows) -> None:
        rows = list(rows)
        by_pattern: dict[bytes, list[int]] = {}
        for i in rows:
            by_pattern.setdefault(self.pattern_of_[i], []).append(i)
        for key, idx in by_pattern.items():
            pat = self.patterns_[key]
            if pat.proj is None:
                # e_i = b_i V diag(phi(w)) V^T with G_i = V diag(w) V^T
                pat.proj = projection(self._pattern_gram(pat.mask), self.lam, self.eps)
            self.normals_[idx] = self.b_[idx] @ pat.proj

    def _drop_unused_patterns(self) -> None:
        used = set(self.pattern_of_)
        for key in [k for k in self.patterns_ if k not in used]:
            del self.patterns_[key]
