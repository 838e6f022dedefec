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
``V diag(phi) V^T``; the solver groups models by coverage pattern and builds each pattern's projection once.
When several patterns exist, the prompts are split into *atoms* (prompts covered by exactly the same
patterns, e.g. one benchmark) whose Gram blocks are computed in one pass over ``D``; a pattern's Gram is the
sum of its atoms' blocks.

Speed notes: ``D`` is kept in the dtype it was given (float32 halves the memory traffic of the ``b`` pass);
products with it are accumulated in float64 over cache-sized row blocks.  Models are processed in chunks of
``_CHUNK`` rows with reused float64 buffers, so a fit never holds a float64 copy of the whole ``S``.
"""

from __future__ import annotations

import contextlib
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
    "method_options",
    "GCV_LAMBDAS",
]

#: Models are processed in chunks of this many rows so (chunk, N) float64 temporaries stay bounded.
_CHUNK = 512
#: More atoms than this (and than 4 x the patterns) and pattern Grams are computed directly instead.
_MAX_ATOMS = 256


def validate_embeddings(D: np.ndarray, *, dim: int | None = None, ids: Sequence[Hashable] | None = None) -> np.ndarray:
    """Check an (N, d) embedding matrix: 2-D, finite, of the expected dimension. Returns it as an array
    (float32 and float64 are kept, other dtypes become float64).

    Raises :class:`DimensionError` for a wrong shape and :class:`InputError` naming the first bad row (by id
    when ``ids`` is given).
    """
    D = np.asarray(D)
    if D.dtype not in (np.float32, np.float64):
        D = D.astype(np.float64)
    if D.ndim != 2 or D.shape[1] == 0:
        raise DimensionError(f"embeddings must be a 2-D (prompts, dim) array with dim >= 1, got shape {D.shape}")
    if dim is not None and D.shape[1] != dim:
        raise DimensionError(
            f"embeddings have dimension {D.shape[1]} but this space has dimension {dim}; "
            "embed with the space's encoder or create a new space"
        )
    if not np.isfinite(D.sum()):  # one cheap pass; NaN/inf (or an overflow) shows up in the sum
        finite = np.isfinite(D).all(axis=1)
        if not finite.all():
            row = int(np.flatnonzero(~finite)[0])
            name = ids[row] if ids is not None else row
            raise InputError(
                f"embedding of prompt {name!r} contains NaN or inf; re-encode it (clear its cache entry)",
                item=f"prompt {name}",
            )
    return D


def _signed_into(S: np.ndarray, Y: np.ndarray, missing: np.ndarray, ids: Sequence[Hashable]) -> None:
    """Fill ``Y`` (k, n) float64 with ``2s-1`` (0 where missing) and ``missing`` (k, n) bool from ``S`` (k, n).

    Raises :class:`InputError` naming the model (``ids[row]``) and prompt column of a value outside [0, 1].
    The checks run on ``S`` itself (float32 S: half the memory traffic of checking ``Y``).
    """
    np.isnan(S, out=missing)
    if S.size:
        hi, lo = np.fmax.reduce(S, axis=None), np.fmin.reduce(S, axis=None)  # NaN-ignoring, no temporaries
        if hi > 1 or lo < 0:
            r, c = np.argwhere((S > 1) | (S < 0))[0]
            raise InputError(
                f"outcome {float(S[r, c])!r} on prompt column {int(c)} is outside [0, 1]; "
                "outcomes are 0/1 or a graded score in [0, 1] (use NaN for not observed)",
                item=f"model {ids[r]}",
            )
    np.multiply(S, 2.0, out=Y, casting="unsafe")  # y = 2s - 1
    np.subtract(Y, 1.0, out=Y)
    if missing.any():
        np.copyto(Y, 0.0, where=missing)


def signed_outcomes(S: np.ndarray, *, model_ids: Sequence[Hashable] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Map graded outcomes s in [0, 1] (NaN = missing) to y = 2s - 1 with missing cells set to 0.

    Parameters
    ----------
    S : (M, N) or (N,) array of float, values in [0, 1] or NaN.

    Returns
    -------
    Y : (M, N) float64, 2s-1 on observed cells and 0 elsewhere.
    observed : (M, N) bool.
    """
    S = np.asarray(S)
    if S.ndim == 1:
        S = S[None, :]
    if S.dtype.kind not in "fbiu":
        S = S.astype(np.float64)
    Y = np.empty(S.shape)
    missing = np.empty(S.shape, dtype=bool)
    _signed_into(S, Y, missing, model_ids if model_ids is not None else range(S.shape[0]))
    return Y, ~missing


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
    """The (d, d) matrix ``V diag(phi(w)) V^T`` of a Gram matrix ``G = V diag(w) V^T``; ``e = b @ it``.

    With ``eps == 0`` and ``lam > 0`` every component is kept, so this is ``(G + 2 lambda I)^-1``, computed
    by an LU inverse (several times faster than the eigendecomposition, same result to round-off).
    """
    G = np.asarray(G, dtype=np.float64)
    d = G.shape[0]
    if eps == 0 and lam > 0 and 2.0 * lam >= 1e-8 * max(float(np.abs(np.diag(G)).max(initial=0.0)), 1.0):
        P = np.linalg.inv(G + 2.0 * lam * np.eye(d))
        return (P + P.T) * 0.5
    w, V = np.linalg.eigh(G)
    phi = shrinkage(w, lam, eps)
    return (V * phi) @ V.T


def paper_normals(D: np.ndarray, S: np.ndarray, lam: float = 1.0, eps: float = 0.0) -> np.ndarray:
    """The paper's formula computed the direct way, for dense outcomes: ``E = P U S' V^T``.

    ``D`` (N, d), ``S`` (M, N) in [0, 1] without NaN. Returns E (M, d) float64. Used as the reference in
    tests and benchmarks; the solver never calls it. ``P U`` is formed in chunks of models.
    """
    S = np.asarray(S)
    if S.ndim == 1:
        S = S[None, :]
    U, s, Vt = np.linalg.svd(np.asarray(D, dtype=np.float64), full_matrices=False)
    keep = s >= eps
    if lam == 0:
        keep &= s > s.max(initial=0.0) * 1e-6
    s_prime = np.zeros_like(s)
    s_prime[keep] = s[keep] / (s[keep] ** 2 + 2.0 * lam)  # S'_k = s_k / (s_k^2 + 2 lambda)
    E = np.empty((S.shape[0], Vt.shape[1]))
    for lo in range(0, S.shape[0], _CHUNK):
        Y, observed = signed_outcomes(S[lo : lo + _CHUNK], model_ids=range(lo, lo + _CHUNK))
        if not observed.all():
            raise InputError("paper_normals needs dense outcomes (no NaN)")
        E[lo : lo + _CHUNK] = ((Y @ U) * s_prime) @ Vt  # E = P U S' V^T
    return E


def _single_threaded_lapack():
    """A context in which BLAS/LAPACK use one thread, when threadpoolctl is installed (else a no-op).

    The d x d factorisations (LU inverse, eigh) are chains of small BLAS calls; on a 2-core machine that is
    also busy, OpenBLAS's thread hand-offs made them 3-6x slower than one thread (measured, d = 384 and 768).
    The big products (``Y @ D``, ``D^T D``) keep all threads.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is optional
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _dot_rows(Y: np.ndarray, D: np.ndarray, segments: list[tuple[int, int]]) -> np.ndarray:
    """``Y @ D`` restricted to the prompt ranges ``segments``, float64: Y (k, N) float64, D (N, d) -> (k, d).

    A float32 ``D`` is cast block by block into a reused float64 buffer (cache-sized for a few rows, larger
    for a wide GEMM), so the sum is accumulated in float64 without a float64 copy of ``D``.
    """
    k, d = Y.shape[0], D.shape[1]
    out = np.zeros((k, d))
    if D.dtype == np.float64:
        for lo, hi in segments:
            out += Y[:, lo:hi] @ D[lo:hi]
        return out
    block = 256 if k < 16 else 4096
    buf = np.empty((block, d))
    for lo, hi in segments:
        for a in range(lo, hi, block):
            z = min(block, hi - a)
            np.copyto(buf[:z], D[a : a + z])
            out += Y[:, a : a + z] @ buf[:z]
    return out


def _gram(D: np.ndarray, rows: np.ndarray | slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
    """``(D[rows]^T D[rows], sum of D[rows])`` in float64, (d, d) and (d,), accumulated over row blocks cast
    into one reused float64 buffer (no float64 copy of ``D``)."""
    d = D.shape[1]
    G, total = np.zeros((d, d)), np.zeros(d)
    if isinstance(rows, slice):
        lo, hi, _ = rows.indices(D.shape[0])
        blocks = [slice(a, min(a + 4096, hi)) for a in range(lo, hi, 4096)]
    else:
        blocks = [rows[a : a + 4096] for a in range(0, rows.size, 4096)]
    buf = np.empty((4096, d))
    for rows_block in blocks:
        part = D[rows_block]
        z = part.shape[0]
        np.copyto(buf[:z], part)
        G += buf[:z].T @ buf[:z]  # symmetric rank-z update (numpy uses syrk for A.T @ A)
        total += buf[:z].sum(axis=0)
    return G, total


def _gather_dot(D: np.ndarray, idx: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_k w_k D[idx_k]`` (d,) in float64, reading only the rows ``idx`` in cache-sized blocks."""
    acc = np.zeros(D.shape[1])
    buf = np.empty((256, D.shape[1]))
    for a in range(0, idx.size, 256):
        z = min(256, idx.size - a)
        np.copyto(buf[:z], D[idx[a : a + z]])
        acc += w[a : a + z] @ buf[:z]
    return acc


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Contiguous [lo, hi) ranges where ``mask`` (N,) is True."""
    edges = np.flatnonzero(np.diff(np.concatenate([[False], mask, [False]]).astype(np.int8)))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))


def _pattern_key(mask: np.ndarray) -> bytes:
    """A compact key of a boolean coverage row (N,)."""
    if mask.all():
        return b"all"
    return hashlib.blake2b(np.packbits(mask).tobytes(), digest_size=16).digest() + mask.size.to_bytes(8, "little")


@dataclass(frozen=True, eq=False)
class _Covariates:
    """The unpenalised trailing columns (option ``free``, k of them) of a pattern's (centred) Gram
    ``[[A, B], [B^T, C]]``, A (p, p) the embedding block, C (k, k) the covariate block, B (p, k) between them."""

    B: np.ndarray  # (p, k) cross block
    K: np.ndarray  # (p, k) B C^+
    Cinv: np.ndarray  # (k, k) C^+ (pseudo-inverse)
    rank: float  # rank(C): the covariates' degrees of freedom


@dataclass(frozen=True, eq=False)
class _Eigen:
    """The eigendecomposition ``V diag(w) V^T`` of a pattern's Gram as the general solve uses it: centred
    (option ``intercept``) and with the covariates partialled out (option ``free``)."""

    w: np.ndarray  # (p,) eigenvalues clipped at 0
    V: np.ndarray  # (p, p) eigenvectors (columns)
    mu: np.ndarray  # (d,) mean prompt row of the pattern (zeros without the intercept)
    covariates: _Covariates | None = None  # with option ``free``


@dataclass(frozen=True, eq=False)
class _Atoms:
    """Prompts grouped by membership in every coverage pattern (A atoms), with each atom's Gram block."""

    labels: np.ndarray  # (N,) int: the atom of each prompt
    counts: np.ndarray  # (A,) int: prompts per atom
    grams: np.ndarray  # (A, d, d) float64: sum of d_j d_j^T over the atom
    sums: np.ndarray  # (A, d) float64: sum of d_j over the atom


@dataclass
class _Pattern:
    mask: np.ndarray  # (N,) bool
    proj: np.ndarray | None = None  # (d, d) float64 projection, computed lazily
    colsum: np.ndarray | None = None  # (d,) float64 sum of the pattern's prompt vectors, computed lazily
    eig: _Eigen | None = None  # for the intercept / GCV / free / prior options, computed lazily


class HyperplaneSolver:
    """Success-hyperplane normals of many models in one embedding space (closed form, incremental).

    Parameters
    ----------
    lam : float, default 1.0
        Tikhonov regularisation lambda (the paper uses 1).
    eps : float, default 0.0
        Threshold on the singular values ``sqrt(w)`` of each model's prompt matrix; components below it
        are dropped.
    intercept : bool, default False
        Centre the embeddings and fit an unpenalised per-model intercept (``intercept_``).
    select : None or 'gcv'
        Choose lambda per model by generalised cross-validation over ``lambdas`` (default :data:`GCV_LAMBDAS`).
    free : int, default 0
        The last ``free`` columns of ``D`` are prompt covariates (e.g. :mod:`indexer.features`) whose
        coefficients are not penalised; the first ``d - free`` columns (the embedding) are. 0 = none.
    prior : None, 'mean' or array of length ``d - free``
        Shrink the embedding part of every normal toward ``u`` instead of toward 0: the penalty becomes
        ``2 lambda ||e_i - u||^2`` (with ``select='gcv'`` lambda is chosen for the residual target
        ``y - X u``). An array is used as it is. ``'mean'``: ``fit`` first solves every model without a prior,
        takes ``u`` = the mean of their embedding parts (the models' mean normal) and re-solves them all
        toward it; ``u`` is then held fixed (``prior_``) by ``add_models`` / ``replace_model`` /
        ``add_prompts``, so the models stay independent of each other until :meth:`refresh_prior`. With fewer
        than :data:`PRIOR_MIN_MODELS` models the mean would be mostly each model's own normal (with one model,
        shrinking toward itself undoes the shrinkage), so there is no prior then.

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
    prior_ : (d - free,) float64 or None
        The shrinkage target in use (option ``prior``).
    D_ : (N, d) float32 or float64
        The prompt embeddings, kept in the dtype given and by reference (``fit`` does not copy ``D``; do not
        modify it in place afterwards). ``add_prompts`` replaces it with a new array.
    """

    def __init__(self, lam: float = 1.0, eps: float = 0.0, *, intercept: bool = False, select: str | None = None,
                 lambdas: Sequence[float] | None = None, free: int = 0, prior=None):
        self.lam = lam
        self.eps = eps
        self.intercept = intercept
        self.select = select
        self.lambdas = lambdas
        self.free = free
        self.prior = prior

    @classmethod
    def from_settings(cls, settings=None) -> "HyperplaneSolver":
        """The solver taskspace uses: ``TASKSPACE_METHOD`` (see :func:`method_options`) with
        ``TASKSPACE_LAMBDA`` / ``TASKSPACE_EPS``."""
        if settings is None:
            from .config import get_settings

            settings = get_settings()
        return cls(**method_options(settings.method, lam=settings.lam, eps=settings.eps))

    # Row-wise state lives in over-allocated buffers so adding one model does not copy all the others.
    @property
    def b_(self) -> np.ndarray:
        return self._b[: len(self.model_ids_)]

    @b_.setter
    def b_(self, value: np.ndarray) -> None:
        self._b = np.array(value, dtype=np.float64, ndmin=2)

    @property
    def normals_(self) -> np.ndarray:
        return self._normals[: len(self.model_ids_)]

    @normals_.setter
    def normals_(self, value: np.ndarray) -> None:
        self._normals = np.array(value, dtype=np.float64, ndmin=2)

    # ------------------------------------------------------------------ fitting
    def fit(self, D: np.ndarray, S: np.ndarray, model_ids: Sequence[Hashable] | None = None) -> "HyperplaneSolver":
        """Fit every model from scratch. On bad input nothing of a previous fit is changed.

        Parameters
        ----------
        D : (N, d) prompt embeddings (float32 or float64).
        S : (M, N) outcomes in [0, 1], NaN where not observed (float32 saves memory for large M x N).
        model_ids : M hashable ids (default ``range(M)``).
        """
        self._check_params()
        D = validate_embeddings(D)
        if self.free and self.free >= D.shape[1]:
            raise InputError(f"free={self.free} leaves no embedding column of the {D.shape[1]} in D")
        S = np.asarray(S)
        if S.ndim != 2 or S.shape[1] != D.shape[0]:
            raise DimensionError(
                f"outcomes have shape {S.shape}; expected (models, {D.shape[0]}) to match {D.shape[0]} prompts"
            )
        ids = list(model_ids) if model_ids is not None else list(range(S.shape[0]))
        if len(ids) != S.shape[0]:
            raise InputError(f"{len(ids)} model ids for {S.shape[0]} outcome rows")
        saved = dict(self.__dict__)
        try:
            d = D.shape[1]
            self.D_ = D
            self.gram_ = None
            self.patterns_: dict[bytes, _Pattern] = {}
            self.model_ids_: list = []
            self._index: dict = {}
            self.pattern_of_: list[bytes] = []
            self._b = np.zeros((0, d))
            self._normals = np.zeros((0, d))
            self.n_observed_ = np.zeros(0, dtype=np.int64)
            self.sum_y_, self.sum_yy_ = np.zeros(0), np.zeros(0)
            self.intercept_, self.lam_ = np.zeros(0), np.zeros(0)
            self._atoms = None
            self.prior_ = self._fixed_prior(d)
            self.add_models(S, ids)
            if self._prior_kind() == "mean":
                self._estimate_prior(base_solved=True)  # add_models solved them with prior_ None
            self._full_gram()
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
        return self

    def add_models(self, S: np.ndarray, model_ids: Sequence[Hashable] | None = None) -> "HyperplaneSolver":
        """Add models (one pass over their outcomes, no refit of the others).

        ``S`` (K, N) or (N,) outcomes over the current prompts, NaN where not observed. On bad input no model
        is added.
        """
        self._check_fitted()
        S = np.asarray(S)
        if S.ndim == 1:
            S = S[None, :]
        if S.dtype.kind not in "fbiu":
            S = S.astype(np.float64)
        N = self.D_.shape[0]
        if S.ndim != 2 or S.shape[1] != N:
            raise DimensionError(f"outcomes cover {S.shape[-1]} prompts; the solver has {N}")
        start = len(self.model_ids_)
        ids = list(model_ids) if model_ids is not None else list(range(start, start + S.shape[0]))
        if len(ids) != S.shape[0]:
            raise InputError(f"{len(ids)} model ids for {S.shape[0]} outcome rows")
        seen: set = set()
        for mid in ids:
            if mid in self._index or mid in seen:
                raise InputError("model id is already in the solver; use replace_model", item=f"model {mid}")
            seen.add(mid)
        K = S.shape[0]
        b = np.empty((K, self.D_.shape[1]))
        n = np.empty(K, dtype=np.int64)
        sy, syy = np.empty(K), np.empty(K)  # sum_j y_ij and sum_j y_ij^2 (the intercept / GCV statistics)
        keys: list[bytes] = []
        new_patterns: dict[bytes, _Pattern] = {}
        Ybuf = np.empty((min(K, _CHUNK), N))
        Mbuf = np.empty((min(K, _CHUNK), N), dtype=bool)
        for lo in range(0, K, _CHUNK):
            k = min(_CHUNK, K - lo)
            Y, missing = Ybuf[:k], Mbuf[:k]
            chunk_ids = ids[lo : lo + k]
            _signed_into(S[lo : lo + k], Y, missing, chunk_ids)
            sy[lo : lo + k] = Y.sum(axis=1)
            syy[lo : lo + k] = np.einsum("ij,ij->i", Y, Y)
            n[lo : lo + k] = N - missing.sum(axis=1)
            if (n[lo : lo + k] == 0).any():
                bad = chunk_ids[int(np.flatnonzero(n[lo : lo + k] == 0)[0])]
                raise InputError("model has no observed outcome; drop it or add its results", item=f"model {bad}")
            if not missing.any():
                keys.extend([b"all"] * k)
                segments = [(0, N)]
            else:
                for row in missing:
                    observed = ~row
                    key = _pattern_key(observed)
                    if key not in self.patterns_ and key not in new_patterns:
                        new_patterns[key] = _Pattern(mask=observed)
                    keys.append(key)
                segments = _runs(~missing.all(axis=0))
                if len(segments) > 64:
                    segments = [(0, N)]
            if k <= 4 and all(key in self.patterns_ for key in keys[lo : lo + k]):
                sparse = [self._sparse_b(Y[r], ~missing[r], self.patterns_[keys[lo + r]]) for r in range(k)]
                if all(v is not None for v in sparse):
                    b[lo : lo + k] = sparse
                    continue
            b[lo : lo + k] = _dot_rows(Y, self.D_, segments)  # b_i = sum_j y_ij d_j   (k, d)
        if b"all" in keys and b"all" not in self.patterns_:
            new_patterns[b"all"] = _Pattern(mask=np.ones(N, dtype=bool))
        # commit: nothing above changed the solver's state
        self.patterns_.update(new_patterns)
        for mid in ids:
            self._index[mid] = len(self.model_ids_)
            self.model_ids_.append(mid)
        self.pattern_of_.extend(keys)
        self._append_rows(start, b)
        self.n_observed_ = np.concatenate([self.n_observed_, n])
        self.sum_y_, self.sum_yy_ = np.concatenate([self.sum_y_, sy]), np.concatenate([self.sum_yy_, syy])
        self.intercept_, self.lam_ = np.concatenate([self.intercept_, np.zeros(K)]), np.concatenate([self.lam_, np.zeros(K)])
        self._solve(range(start, start + K))
        return self

    def replace_model(self, model_id: Hashable, s: np.ndarray) -> "HyperplaneSolver":
        """Replace one model's outcomes (N,) and re-solve only that model."""
        self._check_fitted()
        i = self.index_of(model_id)
        s = np.asarray(s)
        N = self.D_.shape[0]
        if s.ndim != 1 or s.shape[0] != N:
            raise DimensionError(f"outcomes of model {model_id!r} have shape {s.shape}; expected ({N},)")
        Y, observed = signed_outcomes(s[None, :], model_ids=[model_id])
        if observed.sum() == 0:
            raise InputError("model has no observed outcome; use remove_models", item=f"model {model_id}")
        self.b_[i] = _dot_rows(Y, self.D_, _runs(observed[0]) if not observed.all() else [(0, N)])[0]
        self.n_observed_[i] = int(observed.sum())
        self.sum_y_[i], self.sum_yy_[i] = float(Y.sum()), float((Y * Y).sum())
        self.pattern_of_[i] = self._register_pattern(observed[0])
        self._solve([i])
        self._drop_unused_patterns()
        return self

    def remove_models(self, model_ids: Sequence[Hashable]) -> "HyperplaneSolver":
        """Remove models; the others are untouched. Unknown ids raise :class:`NotFoundError` (nothing removed)."""
        self._check_fitted()
        drop = {self.index_of(m) for m in model_ids}
        keep = np.array([i for i in range(len(self.model_ids_)) if i not in drop], dtype=np.int64)
        b, normals = self.b_[keep], self.normals_[keep]
        self.model_ids_ = [self.model_ids_[i] for i in keep]
        self._index = {m: i for i, m in enumerate(self.model_ids_)}
        self.pattern_of_ = [self.pattern_of_[i] for i in keep]
        self._b, self._normals = b, normals
        self.n_observed_ = self.n_observed_[keep]
        self.sum_y_, self.sum_yy_ = self.sum_y_[keep], self.sum_yy_[keep]
        self.intercept_, self.lam_ = self.intercept_[keep], self.lam_[keep]
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
        M = len(self.model_ids_)
        if S_new.ndim == 1:
            S_new = S_new[None, :] if M == 1 else S_new[:, None]
        if S_new.shape != (M, D_new.shape[0]):
            raise DimensionError(f"new outcomes have shape {S_new.shape}; expected ({M}, {D_new.shape[0]})")
        Y, observed = signed_outcomes(S_new, model_ids=self.model_ids_)
        K = D_new.shape[0]
        self.D_ = np.concatenate([self.D_, D_new.astype(self.D_.dtype, copy=False)])
        G_new, sum_new = _gram(D_new)
        self._full_gram()
        self.gram_, self._colsum = self.gram_ + G_new, self._colsum + sum_new
        self.b_[:] += _dot_rows(Y, D_new, [(0, K)])
        self.n_observed_ += observed.sum(axis=1)
        self.sum_y_ += Y.sum(axis=1)
        self.sum_yy_ += (Y * Y).sum(axis=1)
        self._atoms = None
        # Extend every coverage pattern with the new columns; a model that saw a new prompt gets a new pattern.
        # A pattern nobody extends keeps its projection (its prompts and hence its Gram are unchanged).
        old = self.patterns_
        self.patterns_ = {}
        touched = []
        for i in range(M):
            old_pat = old[self.pattern_of_[i]]
            key = self._register_pattern(np.concatenate([old_pat.mask, observed[i]]))
            self.pattern_of_[i] = key
            if observed[i].any():
                touched.append(i)
            elif self.patterns_[key].proj is None:
                self.patterns_[key].proj = old_pat.proj
                self.patterns_[key].eig = old_pat.eig
        self._solve(touched)
        return self

    # ------------------------------------------------------------------ use
    def predict(self, Q: np.ndarray) -> np.ndarray:
        """Predicted success scores ``Q @ normals_.T``: Q (n, d) or (d,) -> (n, M)."""
        self._check_fitted()
        Q = validate_embeddings(np.atleast_2d(Q), dim=self.D_.shape[1])
        if self.intercept:
            return Q @ self.normals_.T + self.intercept_
        return Q @ self.normals_.T

    def refit(self, **params) -> "HyperplaneSolver":
        """Change hyper-parameters (``lam``, ``eps``, ``intercept``, ``select``, ``lambdas``) and re-solve every
        model from the stored sufficient statistics: no pass over ``D`` or the outcomes. Equals a fresh ``fit``
        with the new parameters. Used by the eps/lambda ablation of ``taskspace evaluate``."""
        self._check_fitted()
        unknown = set(params) - {"lam", "eps", "intercept", "select", "lambdas", "prior"}
        if unknown:
            raise InputError(f"unknown solver parameter(s) {sorted(unknown)}")
        saved = {k: getattr(self, k) for k in params}
        for k, v in params.items():
            setattr(self, k, v)
        try:
            self._check_params()
        except InputError:
            for k, v in saved.items():
                setattr(self, k, v)
            raise
        for pat in self.patterns_.values():
            pat.proj = None
            pat.eig = None
        self.prior_ = self._fixed_prior(self.D_.shape[1])
        if self._prior_kind() == "mean":
            self._estimate_prior(base_solved=False)  # new parameters: every model is solved again
        else:
            self._solve(range(len(self.model_ids_)))
        return self

    def refresh_prior(self) -> "HyperplaneSolver":
        """Re-estimate the ``'mean'`` prior from the models now in the solver and re-solve every model toward it
        (equals a fresh ``fit``); with a fixed array prior (or none) this only re-solves."""
        self._check_fitted()
        if self._prior_kind() == "mean":
            # with no prior in use the normals are already the prior-free fits the estimate starts from
            self._estimate_prior(base_solved=self.prior_ is None)
        else:
            self._solve(range(len(self.model_ids_)))
        return self

    def augmented_normals(self) -> np.ndarray:
        """(M, d + 1) rows ``[e_i, a_i]`` (``a_i`` = ``intercept_``, 0 without the intercept option), so that a
        plain dot product with ``[q, 1]`` gives :meth:`predict`'s score (for a vector index that only does
        dot products)."""
        self._check_fitted()
        a = self.intercept_ if self.intercept else np.zeros(len(self.model_ids_))
        return np.hstack([self.normals_, a[:, None]])

    def index_of(self, model_id: Hashable) -> int:
        """Row of ``model_id`` in ``normals_``; :class:`NotFoundError` when it is not in the solver."""
        self._check_fitted()
        try:
            return self._index[model_id]
        except (KeyError, TypeError):
            raise NotFoundError(f"model {model_id!r} is not in the solver; check the id or add the model") from None

    # ------------------------------------------------------------------ internals
    def _check_params(self) -> None:
        self._check_options()
        for name in ("lam", "eps"):
            value = getattr(self, name)
            if not isinstance(value, (int, float, np.floating, np.integer)) or not np.isfinite(value) or value < 0:
                raise InputError(f"{name}={value!r} must be a finite number >= 0")

    def _check_options(self) -> None:
        free = getattr(self, "free", 0)
        if isinstance(free, bool) or not isinstance(free, (int, np.integer)) or free < 0:
            raise InputError(f"free={free!r} must be a whole number >= 0 (trailing unpenalised columns)")
        if self.select not in (None, "gcv"):
            raise InputError(f"select={self.select!r}: use None (fixed lambda) or 'gcv'")
        prior = getattr(self, "prior", None)
        if isinstance(prior, str) and prior != "mean":
            raise InputError(f"prior={prior!r}: use None, 'mean' or an array (the shrinkage target)")
        if prior is not None and not isinstance(prior, str):
            u = np.asarray(prior)
            if u.ndim != 1 or u.dtype.kind not in "fiu" or not np.isfinite(u).all():
                raise InputError("prior must be a 1-d array of finite numbers (the shrinkage target)")
        if self.lambdas is not None:
            grid = np.asarray(self.lambdas, dtype=np.float64)
            if grid.ndim != 1 or grid.size == 0 or not np.isfinite(grid).all() or (grid < 0).any():
                raise InputError(f"lambdas={self.lambdas!r} must be a non-empty list of finite numbers >= 0")

    def _prior_kind(self) -> str | None:
        prior = getattr(self, "prior", None)
        return None if prior is None else ("mean" if isinstance(prior, str) else "fixed")

    def _fixed_prior(self, d: int) -> np.ndarray | None:
        """The array prior as float64 of the embedding width ``d - free`` (None for no prior or ``'mean'``)."""
        if self._prior_kind() != "fixed":
            return None
        u = np.asarray(self.prior, dtype=np.float64)
        p = d - int(self.free or 0)
        if u.shape != (p,):
            raise DimensionError(f"prior has shape {u.shape}; expected ({p},), the embedding part of the normals")
        return u

    def _estimate_prior(self, base_solved: bool) -> None:
        """``prior='mean'``: solve every model without a prior (skipped when ``base_solved``: the normals already
        are those fits), then toward the mean of their embedding parts. With fewer than
        :data:`PRIOR_MIN_MODELS` models there is no prior (``prior_`` None: plain ridge)."""
        rows = range(len(self.model_ids_))
        self.prior_ = None
        if not base_solved:
            self._solve(rows)
        if len(self.model_ids_) >= PRIOR_MIN_MODELS:
            p = self.D_.shape[1] - int(self.free or 0)
            self.prior_ = self.normals_[:, :p].mean(axis=0)
            self._solve(rows)

    def _check_fitted(self) -> None:
        if not hasattr(self, "D_"):
            raise NotFoundError("the solver is not fitted; call fit(D, S) first")

    def _append_rows(self, M: int, b: np.ndarray) -> None:
        """Put ``b`` (K, d) in rows M..M+K of the b / normals buffers, growing them geometrically."""
        K = b.shape[0]
        if M + K > self._b.shape[0]:
            cap = max(M + K, int(self._b.shape[0] * 1.5) + 16)
            for name in ("_b", "_normals"):
                grown = np.zeros((cap, b.shape[1]))
                grown[:M] = getattr(self, name)[:M]
                setattr(self, name, grown)
        self._b[M : M + K] = b
        self._normals[M : M + K] = 0.0

    def _full_gram(self) -> np.ndarray:
        if self.gram_ is None:
            self.gram_, self._colsum = _gram(self.D_)
        return self.gram_

    def _pattern_sum(self, pat: _Pattern) -> np.ndarray:
        """``sum_{j in pattern} d_j`` (d,), cached on the pattern (the pre-summed block of :meth:`_sparse_b`)."""
        if pat.colsum is None:
            mask = pat.mask
            union = self._atoms_in(mask)
            if mask.all():
                self._full_gram()
                pat.colsum = self._colsum
            elif union is not None:
                pat.colsum = self._atoms.sums[union].sum(axis=0)
            else:
                idx = np.flatnonzero(mask)
                pat.colsum = _gather_dot(self.D_, idx, np.ones(idx.size))
        return pat.colsum

    def _atoms_in(self, mask: np.ndarray) -> np.ndarray | None:
        """(A,) bool: the atoms whose union is ``mask``; None when there are no atoms or it is not a union."""
        if self._atoms is None or self._atoms.labels.size != mask.size:
            return None
        labels, counts = self._atoms.labels, self._atoms.counts
        inside = np.bincount(labels, weights=mask, minlength=counts.size)
        full = inside == counts
        return full if np.all(full | (inside == 0)) else None

    def _sparse_b(self, y: np.ndarray, observed: np.ndarray, pat: _Pattern) -> np.ndarray | None:
        """``b = sum_j y_j d_j`` (d,) of one model on a known pattern, reading only part of ``D``.

        With the pattern's pre-summed ``P = sum_{j observed} d_j``:  b = sum (y_j + 1) d_j - P  (only rows with
        s_j > 0) or  b = P - sum (1 - y_j) d_j  (only rows with s_j < 1), whichever reads fewer rows; for 0/1
        outcomes that is at most half of them. Returns None when neither saves much (graded outcomes).
        """
        up, down = observed & (y > -1.0), observed & (y < 1.0)
        n_up, n_down = int(up.sum()), int(down.sum())
        if min(n_up, n_down) > 0.7 * int(observed.sum()):
            return None
        if n_up <= n_down:
            idx = np.flatnonzero(up)
            return _gather_dot(self.D_, idx, y[idx] + 1.0) - self._pattern_sum(pat)
        idx = np.flatnonzero(down)
        return self._pattern_sum(pat) - _gather_dot(self.D_, idx, 1.0 - y[idx])

    def _register_pattern(self, mask: np.ndarray) -> bytes:
        key = _pattern_key(mask)
        if key not in self.patterns_:
            self.patterns_[key] = _Pattern(mask=mask.copy())
        return key

    def _build_atoms(self) -> None:
        """Split the prompts into atoms (same membership in every pattern) and compute each atom's Gram.

        Costs one pass over ``D`` (like ``D^T D``, which it also yields). Leaves ``_atoms = None`` when the
        coverage is too irregular for atoms to pay off.
        """
        keys = list(self.patterns_)
        masks = np.stack([self.patterns_[k].mask for k in keys])  # (P, N)
        sig = np.packbits(masks, axis=0)  # (ceil(P/8), N) membership signature of each prompt
        _, labels = np.unique(sig, axis=1, return_inverse=True)
        labels = labels.ravel()
        A = int(labels.max()) + 1
        if A > max(_MAX_ATOMS, 4 * len(keys)):
            self._atoms = None
            return
        order = np.argsort(labels, kind="stable")
        bounds = np.searchsorted(labels[order], np.arange(A + 1))
        grams = np.empty((A, self.D_.shape[1], self.D_.shape[1]))
        sums = np.empty((A, self.D_.shape[1]))
        for a in range(A):
            rows = order[bounds[a] : bounds[a + 1]]
            contiguous = rows[-1] - rows[0] + 1 == rows.size
            grams[a], sums[a] = _gram(self.D_, slice(int(rows[0]), int(rows[-1]) + 1) if contiguous else rows)
        self._atoms = _Atoms(labels, np.bincount(labels, minlength=A), grams, sums)
        if self.gram_ is None:
            self.gram_, self._colsum = grams.sum(axis=0), sums.sum(axis=0)

    def _pattern_gram(self, mask: np.ndarray) -> np.ndarray:
        """``G`` over the prompts in ``mask``: from the atoms when it is a union of atoms, else directly."""
        if mask.all():
            return self._full_gram()
        union = self._atoms_in(mask)
        if union is not None:
            return self._atoms.grams[union].sum(axis=0)  # G_i = sum of the atom blocks it covers
        missing = ~mask
        if int(missing.sum()) < mask.size // 4:
            return self._full_gram() - _gram(self.D_, np.flatnonzero(missing))[0]
        runs = _runs(mask)
        if len(runs) <= 64:
            return sum(_gram(self.D_, slice(lo, hi))[0] for lo, hi in runs)
        return _gram(self.D_, np.flatnonzero(mask))[0]

    def _solve(self, rows) -> None:
        if (getattr(self, "intercept", False) or getattr(self, "select", None) or getattr(self, "free", 0)
                or getattr(self, "prior_", None) is not None):
            self._solve_general(list(rows))
            return
        by_pattern, todo = self._rows_by_pattern(rows, "proj")
        with _single_threaded_lapack():
            for key in todo:
                pat = self.patterns_[key]
                # e_i = b_i V diag(phi(w)) V^T with G_i = V diag(w) V^T
                pat.proj = projection(self._pattern_gram(pat.mask), self.lam, self.eps)
        for key, idx in by_pattern.items():
            proj = self.patterns_[key].proj
            idx_arr = np.asarray(idx)
            if idx_arr[-1] - idx_arr[0] + 1 == idx_arr.size:
                self._normals[idx_arr[0] : idx_arr[-1] + 1] = self._b[idx_arr[0] : idx_arr[-1] + 1] @ proj
            else:
                self._normals[idx_arr] = self._b[idx_arr] @ proj

    def _rows_by_pattern(self, rows, cached: str) -> tuple[dict[bytes, list[int]], list[bytes]]:
        """``rows`` grouped by coverage pattern, and the patterns whose ``cached`` factorisation (``proj`` or
        ``eig``) is still to be computed; with several of those, the atom Gram blocks are built first (one pass
        over ``D`` for all of them)."""
        by_pattern: dict[bytes, list[int]] = {}
        for i in rows:
            by_pattern.setdefault(self.pattern_of_[i], []).append(i)
        todo = [k for k in by_pattern if getattr(self.patterns_[k], cached) is None]
        if len(todo) > 1 and self._atoms is None:
            self._build_atoms()
        return by_pattern, todo

    def _drop_unused_patterns(self) -> None:
        used = set(self.pattern_of_)
        for key in [k for k in self.patterns_ if k not in used]:
            del self.patterns_[key]

    def _solve_general(self, rows: list[int]) -> None:
        """Solve ``rows`` with the per-model intercept and/or the lambda chosen by GCV (see :func:`method_options`).

        Per coverage pattern (n prompts, mean vector mu, centred Gram ``G_c = G - n mu mu^T = V diag(w) V^T``,
        or ``G`` itself without the intercept) and per model (``c = V^T (b_i - sum_y_i mu)``):

            e_i = V diag(phi(w; lambda_i)) c,    intercept_i = sum_y_i / n - e_i . mu

        which minimises ``sum_j (y_ij - a_i - e_i . d_j)^2 + 2 lambda ||e_i||^2`` with an unpenalised ``a_i``.
        With ``select='gcv'``, lambda_i minimises GCV(lambda) = n RSS / (n - df)^2 over ``lambdas``, where
        ``RSS = ss - sum_k c_k^2 (2 phi_k - w_k phi_k^2)``, ``ss = sum_yy - sum_y^2 / n`` and
        ``df = 1 + sum_k w_k phi_k``: all from the sufficient statistics, so an incremental update equals a
        fit from scratch.

        With ``free = k`` the (centred) Gram is split into the embedding block ``A``, the covariate block ``C``
        and their cross block ``B``; the covariates are partialled out (Frisch-Waugh) in statistics space:
        ``A_r = A - B C^+ B^T`` takes the place of ``G_c`` and ``b_D - B C^+ b_F`` of ``b``; then the covariate
        coefficients are ``f_i = C^+ (b_F - B^T e_i)``, ``ss`` loses ``b_F^T C^+ b_F`` and ``df`` gains rank(C).

        With a prior ``u`` (``prior_``) the embedding part is ``e_i = u + delta_i``, delta_i the ridge fit of the
        residual target ``y - X u``: in statistics space ``b -> b - A u`` and ``ss -> ss - 2 b.u + u^T A u``
        (``A`` the centred, partialled Gram above), so GCV picks lambda for the residual target.
        """
        by_pattern, _ = self._rows_by_pattern(rows, "eig")
        grid = np.asarray(self.lambdas if self.lambdas is not None else GCV_LAMBDAS, dtype=np.float64)
        for key, idx in by_pattern.items():
            pat = self.patterns_[key]
            n = int(pat.mask.sum())
            free = int(self.free or 0)
            if pat.eig is None:
                G = self._pattern_gram(pat.mask)
                mu = self._pattern_sum(pat) / n if self.intercept else np.zeros(G.shape[0])
                if self.intercept:
                    G = G - n * np.outer(mu, mu)  # centred Gram
                cov = None
                if free:  # partial the unpenalised covariates out of the embedding block
                    p = G.shape[0] - free
                    Bm, C = G[:p, p:], G[p:, p:]
                    Cinv = np.linalg.pinv(C, hermitian=True)
                    K = Bm @ Cinv  # (p, free)
                    cov = _Covariates(Bm, K, Cinv, float(np.linalg.matrix_rank(C, hermitian=True)))
                    G = G[:p, :p] - K @ Bm.T
                with _single_threaded_lapack():  # multi-threaded eigh of a small matrix is slower under load
                    w, V = np.linalg.eigh(G)
                pat.eig = _Eigen(np.clip(w, 0.0, None), V, mu, cov)
            w, V, mu = pat.eig.w, pat.eig.V, pat.eig.mu
            idx_arr = np.asarray(idx)
            sy, syy = self.sum_y_[idx_arr], self.sum_yy_[idx_arr]
            b = self._b[idx_arr] - sy[:, None] * mu[None, :] if self.intercept else self._b[idx_arr]
            ss = syy - (sy * sy / n if self.intercept else 0.0)
            df0 = 1.0 if self.intercept else 0.0
            if free:
                Bm, K, Cinv, rank = pat.eig.covariates.B, pat.eig.covariates.K, pat.eig.covariates.Cinv, pat.eig.covariates.rank
                bF = b[:, -free:]
                b = b[:, :-free] - bF @ K.T  # the embedding part of b with the covariates partialled out
                ss = ss - ((bF @ Cinv) * bF).sum(axis=1)
                df0 += rank
            u = getattr(self, "prior_", None)
            if u is not None:  # e_i = u + ridge fit of the residual target y - X u (same A, so same V and w)
                Au = V @ (w * (V.T @ u))
                ss = ss - 2.0 * (b @ u) + float(u @ Au)
                b = b - Au[None, :]
            c = b @ V  # (k, d) coordinates in the eigenbasis
            if self.select == "gcv":
                phis = np.stack([shrinkage(w, float(lam), self.eps) for lam in grid])  # (L, d)
                red = (c * c) @ (2.0 * phis - w * phis * phis).T  # (k, L) explained sum of squares
                rss = np.maximum(ss[:, None] - red, 0.0)
                df = df0 + (w * phis).sum(axis=1)  # (L,) trace of the hat matrix
                resid_df = n - df
                with np.errstate(divide="ignore", invalid="ignore"):
                    gcv = np.where(resid_df > 0.5, n * rss / np.maximum(resid_df, 0.5) ** 2, np.inf)
                best = np.argmin(gcv, axis=1)
                best[~np.isfinite(gcv).any(axis=1)] = int(np.argmax(grid))  # too few prompts: most shrinkage
                lam_i = grid[best]
                phi = phis[best]  # (k, d)
            else:
                lam_i = np.full(idx_arr.size, float(self.lam))
                phi = np.broadcast_to(shrinkage(w, float(self.lam), self.eps), c.shape)
            E = (c * phi) @ V.T  # e_i = V diag(phi) V^T (b_i - sum_y_i mu)
            if u is not None:
                E = E + u[None, :]
            if free:
                E = np.hstack([E, (bF - E @ Bm) @ Cinv])  # f_i = C^+ (b_F - B^T e_i)
            self._normals[idx_arr] = E
            self.lam_[idx_arr] = lam_i
            self.intercept_[idx_arr] = sy / n - E @ mu if self.intercept else 0.0


#: ``prior='mean'`` needs at least this many models; with fewer, no prior is used (plain ridge toward 0).
PRIOR_MIN_MODELS = 5

#: The lambda grid of ``select='gcv'`` (log-spaced; the largest is close to "the model's mean only").
GCV_LAMBDAS = tuple(float(x) for x in np.logspace(-2, 4, 25))


def method_options(name: str, *, lam: float = 1.0, eps: float = 0.0) -> dict:
    """Constructor options of :class:`HyperplaneSolver` for a method name (``TASKSPACE_METHOD``).

    - ``paper``: the paper's exact method, ``lam`` and ``eps`` as given (no intercept).
    - ``auto``: centred embeddings with an unpenalised per-model intercept, lambda chosen per model by
      generalised cross-validation over :data:`GCV_LAMBDAS`, ``eps`` as given. Measured in docs/RESULTS.md.
    - ``auto-mean``: ``auto`` with every model shrunk toward the models' mean normal instead of toward 0
      (``prior='mean'``): estimated by ``fit`` and stored with the space by the worker, held fixed between
      re-estimations so models stay independent (docs/RESULTS.md).
    - ``auto-text``: ``auto`` plus the prompt covariates of :mod:`indexer.features` as
      ``free`` (unpenalised) trailing columns of ``D``; the caller appends them
      (:func:`indexer.represent.design`); a space records the set's name (``features`` in its params).
    - ``auto-mc``: ``auto-mean`` on the question/options split representation (:mod:`indexer.represent`,
      ``multiple-choice-v1``): ``D`` is ``[E(question), E(options)]`` plus 4 multiple-choice covariates as
      ``free`` columns; on prompts without answer options it is ``auto-mean``.
    """
    key = (name or "").strip().lower()
    if key == "paper":
        return {"lam": lam, "eps": eps}
    if key == "auto":
        return {"lam": lam, "eps": eps, "intercept": True, "select": "gcv"}
    if key == "auto-mean":
        return {"lam": lam, "eps": eps, "intercept": True, "select": "gcv", "prior": "mean"}
    if key == "auto-text":
        from .features import TEXT_FEATURES, n_features

        return {"lam": lam, "eps": eps, "intercept": True, "select": "gcv", "free": n_features(TEXT_FEATURES)}
    if key == "auto-mc":
        from .features import MULTIPLE_CHOICE, n_features

        return {"lam": lam, "eps": eps, "intercept": True, "select": "gcv", "prior": "mean",
                "free": n_features(MULTIPLE_CHOICE)}
    from .config import METHODS

    raise InputError(f"unknown solver method {name!r}; use {', '.join(METHODS)}")
