"""Coverage patterns and the Gram cache over the prompts ``D`` (N, d).

Models that observe the same prompts share one coverage *pattern* (a boolean mask over the prompts), hence
one Gram matrix ``G = sum_{j in pattern} d_j d_j^T`` and one factorisation of it, cached on the
:class:`Pattern`. When several patterns need one, the prompts are split into *atoms* (prompts covered by
exactly the same patterns, e.g. one benchmark) whose Gram blocks are computed in one pass over ``D``; a
pattern's Gram is then the sum of its atoms' blocks. :class:`Coverage` owns ``D``, the patterns, the atoms
and ``D^T D``, and reads ``D`` only through :mod:`indexer.solver.kernels`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from .kernels import gather_dot, gram, runs
from .ridge import Eigen

#: More atoms than this (and than 4 x the patterns), or than half of the prompts, and pattern Grams are computed
#: directly instead.
MAX_ATOMS = 256


def pattern_key(mask: np.ndarray) -> bytes:
    """A compact key of a boolean coverage row (N,)."""
    if mask.all():
        return b"all"
    return hashlib.blake2b(np.packbits(mask).tobytes(), digest_size=16).digest() + mask.size.to_bytes(8, "little")


@dataclass
class Pattern:
    """One coverage pattern and what is cached for it (each computed on first use)."""

    mask: np.ndarray  # (N,) bool: the prompts the pattern's models observed
    proj: np.ndarray | None = None  # (d, d) float64 projection (the plain solve, :func:`ridge.projection`)
    colsum: np.ndarray | None = None  # (d,) float64 sum of the pattern's prompt vectors
    eig: Eigen | None = None  # the general solve's factorisation (options intercept / GCV / free / prior)


@dataclass(frozen=True, eq=False)
class Atoms:
    """Prompts grouped by membership in every coverage pattern (A atoms), with each atom's Gram block."""

    labels: np.ndarray  # (N,) int: the atom of each prompt
    counts: np.ndarray  # (A,) int: prompts per atom
    grams: np.ndarray  # (A, d, d) float64: sum of d_j d_j^T over the atom
    sums: np.ndarray  # (A, d) float64: sum of d_j over the atom


class Coverage:
    """The prompts ``D`` (N, d), the coverage patterns on them (by :func:`pattern_key`) and their Gram cache.

    ``D`` is kept by reference in the dtype given; ``gram`` (d, d) = ``D^T D`` and ``colsum`` (d,) = the sum
    of the rows of ``D`` are computed on first use (:meth:`full_gram`) or with the atoms.
    """

    def __init__(self, D: np.ndarray):
        self.D = D
        self.patterns: dict[bytes, Pattern] = {}
        self.atoms: Atoms | None = None
        self.gram: np.ndarray | None = None
        self.colsum: np.ndarray | None = None

    def register(self, mask: np.ndarray) -> bytes:
        """The key of the pattern ``mask`` (N,) bool, added (as a copy) when new."""
        key = pattern_key(mask)
        if key not in self.patterns:
            self.patterns[key] = Pattern(mask=mask.copy())
        return key

    def drop_unused(self, used: set[bytes]) -> None:
        """Forget the patterns no model uses any more (and their caches)."""
        for key in [k for k in self.patterns if k not in used]:
            del self.patterns[key]

    def clear_factors(self) -> None:
        """Forget every pattern's projection and factorisation (the parameters changed)."""
        for pat in self.patterns.values():
            pat.proj = None
            pat.eig = None

    def group(self, rows, pattern_of: list[bytes], cached: str) -> tuple[dict[bytes, list[int]], list[bytes]]:
        """``rows`` (model rows, ``pattern_of[i]`` the pattern key of row i) grouped by coverage pattern, and
        the patterns whose ``cached`` factorisation (``proj`` or ``eig``) is still to be computed; with several
        of those, the atom Gram blocks are built first (one pass over ``D`` for all of them)."""
        by_pattern: dict[bytes, list[int]] = {}
        for i in rows:
            by_pattern.setdefault(pattern_of[i], []).append(i)
        todo = [k for k in by_pattern if getattr(self.patterns[k], cached) is None]
        if len(todo) > 1 and self.atoms is None:
            self.build_atoms()
        return by_pattern, todo

    def full_gram(self) -> np.ndarray:
        """``D^T D`` (d, d) float64 (computed on first use, with ``colsum``)."""
        if self.gram is None:
            self.gram, self.colsum = gram(self.D)
        return self.gram

    def pattern_sum(self, pat: Pattern) -> np.ndarray:
        """``sum_{j in pattern} d_j`` (d,), cached on the pattern (the pre-summed block of :meth:`sparse_b`)."""
        if pat.colsum is None:
            mask = pat.mask
            union = self.atoms_in(mask)
            if mask.all():
                self.full_gram()
                pat.colsum = self.colsum
            elif union is not None:
                pat.colsum = self.atoms.sums[union].sum(axis=0)
            else:
                idx = np.flatnonzero(mask)
                pat.colsum = gather_dot(self.D, idx, np.ones(idx.size))
        return pat.colsum

    def pattern_gram(self, mask: np.ndarray) -> np.ndarray:
        """``G`` (d, d) over the prompts in ``mask`` (N,): from the atoms when it is a union of atoms, else
        directly (from ``D^T D`` minus the few missing rows, over contiguous runs, or over the rows)."""
        if mask.all():
            return self.full_gram()
        union = self.atoms_in(mask)
        if union is not None:
            return self.atoms.grams[union].sum(axis=0)  # G_i = sum of the atom blocks it covers
        missing = ~mask
        if int(missing.sum()) < mask.size // 4:
            return self.full_gram() - gram(self.D, np.flatnonzero(missing))[0]
        segments = runs(mask)
        if len(segments) <= 64:
            return sum(gram(self.D, slice(lo, hi))[0] for lo, hi in segments)
        return gram(self.D, np.flatnonzero(mask))[0]

    def atoms_in(self, mask: np.ndarray) -> np.ndarray | None:
        """(A,) bool: the atoms whose union is ``mask`` (N,); None when there are no atoms or it is not a union."""
        if self.atoms is None or self.atoms.labels.size != mask.size:
            return None
        labels, counts = self.atoms.labels, self.atoms.counts
        inside = np.bincount(labels, weights=mask, minlength=counts.size)
        full = inside == counts
        return full if np.all(full | (inside == 0)) else None

    def build_atoms(self) -> None:
        """Split the prompts into atoms (same membership in every pattern) and compute each atom's Gram.

        Costs one pass over ``D`` (like ``D^T D``, which it also yields). Leaves ``atoms = None`` when the
        coverage is too irregular for atoms to pay off.
        """
        keys = list(self.patterns)
        masks = np.stack([self.patterns[k].mask for k in keys])  # (P, N)
        sig = np.packbits(masks, axis=0)  # (ceil(P/8), N) membership signature of each prompt
        _, labels = np.unique(sig, axis=1, return_inverse=True)
        labels = labels.ravel()
        A = int(labels.max()) + 1
        # atoms pay where they group prompts (benchmark blocks); where more than half of the prompts are atoms of
        # their own (cells missing at random), they are one d x d Gram per prompt, more memory than D and slower
        # to sum than a pattern's rows are to multiply
        if A > max(MAX_ATOMS, 4 * len(keys)) or 2 * A > labels.size:
            self.atoms = None
            return
        order = np.argsort(labels, kind="stable")
        bounds = np.searchsorted(labels[order], np.arange(A + 1))
        grams = np.empty((A, self.D.shape[1], self.D.shape[1]))
        sums = np.empty((A, self.D.shape[1]))
        for a in range(A):
            rows = order[bounds[a] : bounds[a + 1]]
            contiguous = rows[-1] - rows[0] + 1 == rows.size
            grams[a], sums[a] = gram(self.D, slice(int(rows[0]), int(rows[-1]) + 1) if contiguous else rows)
        self.atoms = Atoms(labels, np.bincount(labels, minlength=A), grams, sums)
        if self.gram is None:
            self.gram, self.colsum = grams.sum(axis=0), sums.sum(axis=0)

    def sparse_b(self, y: np.ndarray, observed: np.ndarray, pat: Pattern) -> np.ndarray | None:
        """``b = sum_j y_j d_j`` (d,) of one model (``y``, ``observed`` (N,)) on a known pattern, reading only
        part of ``D``.

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
            return gather_dot(self.D, idx, y[idx] + 1.0) - self.pattern_sum(pat)
        idx = np.flatnonzero(down)
        return self.pattern_sum(pat) - gather_dot(self.D, idx, 1.0 - y[idx])

    def add_prompts(self, D_new: np.ndarray, pattern_of: list[bytes], observed: np.ndarray) -> list[bytes]:
        """Append the prompts ``D_new`` (K, d) to ``D``; ``observed`` (M, K) bool: which of them each model (of
        pattern ``pattern_of[i]``) observed. Returns the models' new pattern keys (M,).

        Every pattern is extended with the new columns; a model that saw a new prompt gets a new pattern. A
        pattern nobody extends keeps its projection and factorisation (its prompts and Gram are unchanged).
        """
        self.full_gram()  # D^T D of the old prompts (fit and prepare compute it, so normally cached)
        self.D = np.concatenate([self.D, D_new.astype(self.D.dtype, copy=False)])
        G_new, sum_new = gram(D_new)
        self.gram, self.colsum = self.gram + G_new, self.colsum + sum_new
        self.atoms = None
        old, self.patterns = self.patterns, {}
        keys = []
        for key, seen in zip(pattern_of, observed):
            old_pat = old[key]
            new = self.register(np.concatenate([old_pat.mask, seen]))
            keys.append(new)
            if not seen.any() and self.patterns[new].proj is None:
                self.patterns[new].proj = old_pat.proj
                self.patterns[new].eig = old_pat.eig
        return keys
