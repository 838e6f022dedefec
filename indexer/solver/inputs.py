"""The solver's inputs checked and converted: prompt embeddings ``D`` and graded outcomes ``S`` -> ``y = 2s - 1``.

Every check names what is wrong and the item (prompt or model) it is wrong for.
"""

from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np

from ..errors import DimensionError, InputError


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


def outcome_rows(S: np.ndarray) -> np.ndarray:
    """Outcomes ``S`` as a 2-D array: an (N,) row is one model's (1, N); a dtype that is not a number becomes
    float64 (float32 and the integer and bool ones are kept)."""
    S = np.asarray(S)
    if S.ndim == 1:
        S = S[None, :]
    if S.dtype.kind not in "fbiu":
        S = S.astype(np.float64)
    return S


def signed_into(S: np.ndarray, Y: np.ndarray, missing: np.ndarray, ids: Sequence[Hashable]) -> None:
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
    S = outcome_rows(S)
    Y = np.empty(S.shape)
    missing = np.empty(S.shape, dtype=bool)
    signed_into(S, Y, missing, model_ids if model_ids is not None else range(S.shape[0]))
    return Y, ~missing
