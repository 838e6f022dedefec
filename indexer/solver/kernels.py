"""Blocked numpy products with the prompt matrix ``D`` (N, d), accumulated in float64.

``D`` is kept in the dtype it was given (float32 halves the memory traffic of the ``b`` pass). Each product
casts row blocks of ``D`` into one reused float64 buffer (cache-sized for a few rows, larger for a wide GEMM),
so sums are accumulated in float64 without ever holding a float64 copy of ``D``. Models are processed in
chunks of :data:`CHUNK` rows so (chunk, N) float64 temporaries stay bounded. The d x d factorisations run
under :func:`single_threaded_lapack`.
"""

from __future__ import annotations

import contextlib

import numpy as np

#: Models are processed in chunks of this many rows so (chunk, N) float64 temporaries stay bounded.
CHUNK = 512


_CONTROLLER = None


def single_threaded_lapack():
    """A context in which BLAS/LAPACK use one thread, when threadpoolctl is installed (else a no-op).

    The d x d factorisations (LU inverse, tridiagonal reduction) and the products of a solve are chains of small
    BLAS calls; on a 2-core machine that is also busy, OpenBLAS's thread hand-offs made them 3-6x slower than one
    thread (measured, d = 384 and 768). The big products (``Y @ D``, ``D^T D``) keep all threads. The libraries are
    found once (numpy's and scipy's OpenBLAS; a fresh search cost 6 ms per use).
    """
    global _CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl is optional
        return contextlib.nullcontext()
    if _CONTROLLER is None:
        import scipy.linalg  # noqa: F401  (loads scipy's own BLAS, which the factorisations call, before the search)

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def dot_rows(Y: np.ndarray, D: np.ndarray, segments: list[tuple[int, int]]) -> np.ndarray:
    """``Y @ D`` restricted to the prompt ranges ``segments`` ([lo, hi) pairs), float64.

    Y (k, N) float64, D (N, d) float32 or float64 -> (k, d) float64.
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
            out += Y[:, a : a + z] @ buf[:z]  # sum_j y_ij d_j over the block
    return out


def gram(D: np.ndarray, rows: np.ndarray | slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
    """``(D[rows]^T D[rows], sum of D[rows])`` in float64, (d, d) and (d,); ``rows`` a slice or (n,) int
    indices of ``D`` (N, d)."""
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


def gather_dot(D: np.ndarray, idx: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_k w_k D[idx_k]`` (d,) float64 for ``idx`` (n,) int and ``w`` (n,), reading only the rows ``idx``
    of ``D`` (N, d) in cache-sized blocks."""
    acc = np.zeros(D.shape[1])
    buf = np.empty((256, D.shape[1]))
    for a in range(0, idx.size, 256):
        z = min(256, idx.size - a)
        np.copyto(buf[:z], D[idx[a : a + z]])
        acc += w[a : a + z] @ buf[:z]
    return acc


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Contiguous [lo, hi) ranges where ``mask`` (N,) is True."""
    edges = np.flatnonzero(np.diff(np.concatenate([[False], mask, [False]]).astype(np.int8)))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))
