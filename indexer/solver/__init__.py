"""The closed-form success-hyperplane solver (Kashani, Mendelson, Nemcovsky 2025), numpy (and scipy's LAPACK), no I/O.

Notation (``../shared/DESIGN.md`` §1):

- ``D``  (N, d): prompt embeddings, one L2-normalised row per prompt.
- ``S``  (M, N): graded outcomes in [0, 1]; ``NaN`` marks a cell that was not observed (never "wrong").
- ``y_ij = 2 s_ij - 1`` in [-1, 1].
- Model i observes the prompt set ``O_i``.  Its sufficient statistics are

      G_i = sum_{j in O_i} d_j d_j^T   (d, d)        b_i = sum_{j in O_i} y_ij d_j   (d,)

  and with the eigendecomposition ``G_i = V diag(w) V^T``:

      e_i = b_i V diag(phi(w)) V^T,    phi(w) = 0 if sqrt(w) < eps else 1 / (w + 2 lambda)

  which equals the paper's ``P U S' V^T`` (``S'_k = s_k / (s_k^2 + 2 lambda)`` above the threshold) exactly.

Models that observe the same prompts share one ``G`` (a coverage pattern) and hence one factorisation, built
once per pattern. The package, one concern per module:

- :mod:`.estimator`: :class:`HyperplaneSolver` (fit / prepare / add / replace / remove / refit, the public
  estimator) and its per-model rows of sufficient statistics.
- :mod:`.coverage`: coverage patterns, atoms (prompts covered by exactly the same patterns) and the Gram
  cache over ``D``.
- :mod:`.ridge`: the maths: shrinkage, projection, the paper's formula (reference) and the per-pattern solve
  in which the options intercept, GCV, free covariates and prior combine, on the pattern Gram's tridiagonal form
  (its eigenvectors only when a posterior needs them).
- :mod:`.kernels`: blocked float64 products with ``D`` (which stays in its own dtype, float32 halving the
  memory traffic) and the single-threaded LAPACK context of the small factorisations.
- :mod:`.inputs`: checks of ``D`` and ``S`` and the map ``y = 2s - 1``.

What each ``TASKSPACE_METHOD`` name means (the estimator's options) is :mod:`indexer.space`'s.
"""

from __future__ import annotations

from .estimator import PRIOR_MIN_MODELS, HyperplaneSolver
from .inputs import signed_outcomes, validate_embeddings
from .ridge import GCV_LAMBDAS, paper_normals, projection, shrinkage

__all__ = [
    "HyperplaneSolver",
    "shrinkage",
    "projection",
    "paper_normals",
    "signed_outcomes",
    "validate_embeddings",
    "GCV_LAMBDAS",
    "PRIOR_MIN_MODELS",
]

