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


def refusals(S: np.ndarray, missing: np.ndarray | None = None) -> dict[int, int | None]:
    """The rows of outcomes ``S`` (k, n) the solver refuses to solve as models, row -> why: the prompt column of the
    row's first value outside [0, 1], or None when the row has no observed outcome (every cell NaN); empty when it
    takes them all. The one statement of the rule: :meth:`HyperplaneSolver.add_models
    <indexer.solver.HyperplaneSolver.add_models>` raises for the first row it gives, and ``taskspace check``
    (:mod:`indexer.sync`) names the models a pass would refuse by it, so a change to the rule changes both.
    Rows with a value out of range come first (the error a solver raises for a mixed chunk). ``missing``:
    ``isnan(S)`` when the caller has it."""
    S = outcome_rows(S)
    out: dict[int, int | None] = dict(_outside(S))
    missing = np.isnan(S) if missing is None else missing
    for r in np.flatnonzero(missing.all(axis=1)):  # (such a row holds no value out of range)
        out[int(r)] = None
    return out


def _outside(S: np.ndarray) -> dict[int, int]:
    """Rows of ``S`` (k, n) with a value outside [0, 1] -> the column of their first one (NaN is not observed). One
    NaN-ignoring pass over ``S`` when every value is in range (the usual case), no temporaries."""
    if not S.size:
        return {}
    hi, lo = np.fmax.reduce(S, axis=None), np.fmin.reduce(S, axis=None)
    if not (hi > 1 or lo < 0):
        return {}
    bad = (S > 1) | (S < 0)
    return {int(r): int(np.argmax(bad[r])) for r in np.flatnonzero(bad.any(axis=1))}


def refused_error(S: np.ndarray, row: int, column: int | None, model_id: Hashable, hint: str) -> InputError:
    """The error a solver raises for a model it refuses (:func:`refusals`); ``hint``: what to do with a model that
    has no observed outcome (it differs between adding and replacing one)."""
    if column is None:
        return InputError(f"model has no observed outcome; {hint}", item=f"model {model_id}")
    return InputError(
        f"outcome {float(S[row, column])!r} on prompt column {int(column)} is outside [0, 1]; "
        "outcomes are 0/1 or a graded score in [0, 1] (use NaN for not observed)",
        item=f"model {model_id}",
    )


def signed_into(S: np.ndarray, Y: np.ndarray, missing: np.ndarray, ids: Sequence[Hashable], *,
                unobserved: str | None = None) -> None:
    """Fill ``Y`` (k, n) float64 with ``2s-1`` (0 where missing) and ``missing`` (k, n) bool from ``S`` (k, n).

    Raises :class:`InputError` naming the model (``ids[row]``) and prompt column of a value outside [0, 1], and,
    when the rows are whole models (``unobserved``: the advice for one with no observed outcome), a row the solver
    refuses (:func:`refusals`; None: rows of new prompts, which a model may not have observed).
    The checks run on ``S`` itself (float32 S: half the memory traffic of checking ``Y``).
    """
    np.isnan(S, out=missing)
    refused = _outside(S) if unobserved is None else refusals(S, missing)
    if refused:
        r, c = next(iter(refused.items()))
        raise refused_error(S, r, c, ids[r], unobserved or "")
    np.multiply(S, 2.0, out=Y, casting="unsafe")  # y = 2s - 1
    np.subtract(Y, 1.0, out=Y)
    if missing.any():
        np.copyto(Y, 0.0, where=missing)


def signed_outcomes(S: np.ndarray, *, model_ids: Sequence[Hashable] | None = None,
                    unobserved: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Map graded outcomes s in [0, 1] (NaN = missing) to y = 2s - 1 with missing cells set to 0.

    Parameters
    ----------
    S : (M, N) or (N,) array of float, values in [0, 1] or NaN.

    unobserved : as for :func:`signed_into` (rows that are whole models).

    Returns
    -------
    Y : (M, N) float64, 2s-1 on observed cells and 0 elsewhere.
    observed : (M, N) bool.
    """
    S = outcome_rows(S)
    Y = np.empty(S.shape)
    missing = np.empty(S.shape, dtype=bool)
    signed_into(S, Y, missing, model_ids if model_ids is not None else range(S.shape[0]), unobserved=unobserved)
    return Y, ~missing
