"""The public estimator :class:`HyperplaneSolver` and its per-model rows (:class:`ModelRows`).

The estimator checks its inputs, keeps one row of sufficient statistics per model (``b``, counts, sums of y
and y^2) and the :class:`~indexer.solver.coverage.Coverage` of the prompts, and re-solves only the models an
update touches: with the plain method by each pattern's projection (:func:`~indexer.solver.ridge.projection`),
with any of the options intercept / GCV / free / prior by :func:`~indexer.solver.ridge.solve_pattern`.
"""

from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np

from ..errors import DimensionError, InputError, NotFoundError, noun
from .coverage import Coverage, Pattern, pattern_key
from .inputs import outcome_rows, signed_into, signed_outcomes, validate_embeddings
from .kernels import CHUNK, dot_rows, runs, single_threaded_lapack
from .ridge import GCV_LAMBDAS, Eigen, factorise, predictive_variance, projection, solve_pattern

#: ``prior='mean'`` needs at least this many models; with fewer, no prior is used (plain ridge toward 0).
PRIOR_MIN_MODELS = 5


class ModelRows:
    """The per-model state of a solver: one row per model, in the order the models were added.

    Rows are appended, kept (after a removal), updated and given their solution only through the methods
    below, so every field always has one entry per model. ``b`` and ``normals`` live in over-allocated buffers so adding one model
    does not copy all the others.

    Attributes
    ----------
    ids : list of M hashable model ids.
    pattern : list of M coverage-pattern keys (:func:`~indexer.solver.coverage.pattern_key`).
    b : (M, d) float64, ``b_i = sum_j y_ij d_j``.
    normals : (M, d) float64, the solved normals.
    n_observed : (M,) int64; sum_y, sum_yy : (M,) float64, ``sum_j y_ij`` and ``sum_j y_ij^2``.
    intercept, lam : (M,) float64, each model's intercept and lambda (0 until the general solve sets them).
    noise : (M,) float64, each model's residual variance at its lambda (NaN until the general solve sets it).
    """

    def __init__(self, d: int):
        self.ids: list = []
        self.pattern: list[bytes] = []
        self._index: dict = {}
        self._b = np.zeros((0, d))
        self._normals = np.zeros((0, d))
        self.n_observed = np.zeros(0, dtype=np.int64)
        self.sum_y, self.sum_yy = np.zeros(0), np.zeros(0)
        self.intercept, self.lam = np.zeros(0), np.zeros(0)
        self.noise = np.zeros(0)

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, model_id: Hashable) -> bool:
        return model_id in self._index

    def row(self, model_id: Hashable) -> int:
        """The row of ``model_id`` (KeyError when absent, TypeError when unhashable)."""
        return self._index[model_id]

    @property
    def b(self) -> np.ndarray:
        return self._b[: len(self.ids)]

    @property
    def normals(self) -> np.ndarray:
        return self._normals[: len(self.ids)]

    def append(self, ids: list, patterns: list[bytes], b: np.ndarray, n_observed: np.ndarray, sum_y: np.ndarray,
               sum_yy: np.ndarray) -> None:
        """Add K models: ``ids`` and ``patterns`` (K), ``b`` (K, d), ``n_observed``, ``sum_y``, ``sum_yy`` (K,);
        their normals, intercepts and lambdas start at 0."""
        M, K = len(self.ids), b.shape[0]
        for mid in ids:
            self._index[mid] = len(self.ids)
            self.ids.append(mid)
        self.pattern.extend(patterns)
        if M + K > self._b.shape[0]:  # grow geometrically
            cap = max(M + K, int(self._b.shape[0] * 1.5) + 16)
            for name in ("_b", "_normals"):
                grown = np.zeros((cap, b.shape[1]))
                grown[:M] = getattr(self, name)[:M]
                setattr(self, name, grown)
        self._b[M : M + K] = b
        self._normals[M : M + K] = 0.0
        self.n_observed = np.concatenate([self.n_observed, n_observed])
        self.sum_y, self.sum_yy = np.concatenate([self.sum_y, sum_y]), np.concatenate([self.sum_yy, sum_yy])
        self.intercept, self.lam = np.concatenate([self.intercept, np.zeros(K)]), np.concatenate([self.lam, np.zeros(K)])
        self.noise = np.concatenate([self.noise, np.full(K, np.nan)])

    def set_row(self, i: int, pattern: bytes, b: np.ndarray, n_observed: int, sum_y: float, sum_yy: float) -> None:
        """Replace row i's statistics (``b`` (d,)); its solution is left for the caller to re-solve."""
        self.pattern[i] = pattern
        self.b[i] = b
        self.n_observed[i] = n_observed
        self.sum_y[i], self.sum_yy[i] = sum_y, sum_yy

    def add_prompts(self, patterns: list[bytes], b: np.ndarray, n_observed: np.ndarray, sum_y: np.ndarray,
                    sum_yy: np.ndarray) -> None:
        """Every row's new coverage pattern (M) and statistics over new prompts, added to its own: ``b`` (M, d),
        the others (M,)."""
        self.pattern = list(patterns)
        self.b[:] += b
        self.n_observed += n_observed
        self.sum_y += sum_y
        self.sum_yy += sum_yy

    def solved(self, rows: slice | np.ndarray, normals: np.ndarray, lam: np.ndarray | None = None,
               intercept: np.ndarray | float | None = None, noise: np.ndarray | None = None) -> None:
        """Store the solution of ``rows`` (a slice or (k,) int): ``normals`` (k, d) and, from the general solve,
        ``lam`` (k,), ``intercept`` (k,) or a scalar, and ``noise`` (k,)."""
        self.normals[rows] = normals
        if lam is not None:
            self.lam[rows] = lam
        if intercept is not None:
            self.intercept[rows] = intercept
        if noise is not None:
            self.noise[rows] = noise

    def keep(self, rows: np.ndarray) -> None:
        """Keep only ``rows`` (K,) int, in that order."""
        b, normals = self.b[rows], self.normals[rows]
        self.ids = [self.ids[i] for i in rows]
        self._index = {m: i for i, m in enumerate(self.ids)}
        self.pattern = [self.pattern[i] for i in rows]
        self._b, self._normals = b, normals
        self.n_observed = self.n_observed[rows]
        self.sum_y, self.sum_yy = self.sum_y[rows], self.sum_yy[rows]
        self.intercept, self.lam = self.intercept[rows], self.lam[rows]
        self.noise = self.noise[rows]


def _learned(part: str, name: str, doc: str) -> property:
    """A read-only attribute of the estimator kept in its ``part`` (``_models`` or ``_coverage``)."""
    return property(lambda self: getattr(getattr(self, part), name), doc=doc)


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
    n_formats : int, default 1
        How many answer formats the prompts come in (the codes given to ``fit`` / ``prepare`` / ``add_prompts`` as
        ``formats``; :func:`indexer.represent.prompt_formats`). With more than one, the prior is one vector per
        format (``prior_`` (n_formats, d - free)) and each model is shrunk toward their mix weighted by the shares of
        its observed prompts in each format (:meth:`format_shares`); ``'mean'`` estimates each format's vector as
        the mean of the prior-free normals weighted by those shares (the models seen on the format). On prompts of
        one format this is the single prior exactly.
    prior : None, 'mean' or array of length ``d - free``
        Shrink the embedding part of every normal toward ``u`` instead of toward 0: the penalty becomes
        ``2 lambda ||e_i - u||^2`` (with ``select='gcv'`` lambda is chosen for the residual target
        ``y - X u``). An array is used as it is. ``'mean'``: ``fit`` first solves every model without a prior,
        takes ``u`` = the mean of their embedding parts (the models' mean normal) and re-solves them all
        toward it; ``u`` is then held fixed (``prior_``) by ``add_models`` / ``replace_model`` /
        ``add_prompts``, so the models stay independent of each other until :meth:`refresh_prior`. With fewer
        than :data:`PRIOR_MIN_MODELS` models the mean would be mostly each model's own normal (with one model,
        shrinking toward itself undoes the shrinkage), so there is no prior then.

    Attributes (after ``fit`` or ``prepare``)
    -----------------------------------------
    normals_ : (M, d) float64
        Row i is e_i; ``Q @ normals_.T`` gives predicted success scores.
    intercept_ : (M,) float64
        Per-model intercept (option ``intercept``; else 0).
    lam_ : (M,) float64
        Lambda of each model with the options (chosen by GCV with ``select='gcv'``); 0 with the plain method.
    noise_ : (M,) float64
        Residual variance ``s_i^2`` of each model at its lambda (with the options; NaN with the plain method):
        with the pattern's factorisation, the posterior of its predictions (:meth:`predictive_variance`).
    b_ : (M, d) float64
        Outcome sums ``b_i = sum_j y_ij d_j``.
    n_observed_ : (M,) int
        Number of prompts each model was observed on.
    sum_y_, sum_yy_ : (M,) float64
        ``sum_j y_ij`` and ``sum_j y_ij^2`` over each model's observed prompts.
    gram_ : (d, d) float64
        ``D^T D`` over all prompts.
    model_ids_ : list
        Model identifiers in row order (default 0..M-1).
    pattern_of_ : list of bytes
        Each model's coverage-pattern key (a key of ``patterns_``).
    patterns_ : dict
        The coverage patterns in use (:class:`~indexer.solver.coverage.Pattern`: mask and cached factorisations).
    prior_ : (d - free,) float64 or None; (n_formats, d - free) with ``n_formats`` > 1
        The shrinkage target in use (option ``prior``); per answer format with ``n_formats`` > 1 (a model's own
        target is :meth:`pattern_prior` of its coverage pattern).
    D_ : (N, d) float32 or float64
        The prompt embeddings, kept in the dtype given and by reference (``fit`` does not copy ``D``; do not
        modify it in place afterwards). ``add_prompts`` replaces it with a new array.
    """

    def __init__(self, lam: float = 1.0, eps: float = 0.0, *, intercept: bool = False, select: str | None = None,
                 lambdas: Sequence[float] | None = None, free: int = 0, prior=None, n_formats: int = 1):
        self.lam = lam
        self.eps = eps
        self.intercept = intercept
        self.select = select
        self.lambdas = lambdas
        self.free = free
        self.prior = prior
        self.n_formats = n_formats

    normals_ = _learned("_models", "normals", "(M, d) float64: row i is e_i.")
    intercept_ = _learned("_models", "intercept", "(M,) float64 per-model intercepts.")
    lam_ = _learned("_models", "lam", "(M,) float64 per-model lambdas.")
    noise_ = _learned("_models", "noise", "(M,) float64 per-model residual variance at lambda (NaN: plain solve).")
    b_ = _learned("_models", "b", "(M, d) float64 outcome sums b_i = sum_j y_ij d_j.")
    n_observed_ = _learned("_models", "n_observed", "(M,) int prompts observed per model.")
    sum_y_ = _learned("_models", "sum_y", "(M,) float64 sum_j y_ij.")
    sum_yy_ = _learned("_models", "sum_yy", "(M,) float64 sum_j y_ij^2.")
    model_ids_ = _learned("_models", "ids", "Model identifiers in row order.")
    pattern_of_ = _learned("_models", "pattern", "Each model's coverage-pattern key.")
    D_ = _learned("_coverage", "D", "(N, d) prompt embeddings (by reference).")
    gram_ = _learned("_coverage", "gram", "(d, d) float64 D^T D.")
    patterns_ = _learned("_coverage", "patterns", "The coverage patterns in use, by key.")

    # ------------------------------------------------------------------ fitting
    def fit(self, D: np.ndarray, S: np.ndarray, model_ids: Sequence[Hashable] | None = None, *,
            formats: np.ndarray | None = None) -> "HyperplaneSolver":
        """Fit every model from scratch. On bad input nothing of a previous fit is changed.

        Parameters
        ----------
        D : (N, d) prompt embeddings (float32 or float64).
        S : (M, N) outcomes in [0, 1], NaN where not observed (float32 saves memory for large M x N).
        model_ids : M hashable ids (default ``range(M)``).
        formats : (N,) int in ``[0, n_formats)``, each prompt's answer format (default all 0).
        """
        D = self._checked_embeddings(D)
        formats = self._checked_formats(formats, D.shape[0])
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
            self._start(D, formats)
            self.add_models(S, ids)
            if self._prior_kind() == "mean":
                self._estimate_prior(base_solved=True)  # add_models solved them with prior_ None
            self._coverage.full_gram()
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
        return self

    def prepare(self, D: np.ndarray, *, formats: np.ndarray | None = None) -> "HyperplaneSolver":
        """Start on the prompts ``D`` (N, d) with no model yet (then :meth:`add_models`), computing ``D^T D``
        (``formats``: as for :meth:`fit`). A ``'mean'`` prior is not estimated (there is no model); an array prior
        is used as it is. On bad input nothing of a previous fit is changed."""
        D = self._checked_embeddings(D)
        formats = self._checked_formats(formats, D.shape[0])
        self._start(D, formats)
        self._coverage.full_gram()
        return self

    def add_models(self, S: np.ndarray, model_ids: Sequence[Hashable] | None = None) -> "HyperplaneSolver":
        """Add models (one pass over their outcomes, no refit of the others).

        ``S`` (K, N) or (N,) outcomes over the current prompts, NaN where not observed. On bad input no model
        is added.
        """
        self._check_fitted()
        cov, D = self._coverage, self._coverage.D
        S = outcome_rows(S)
        N = D.shape[0]
        if S.ndim != 2 or S.shape[1] != N:
            raise DimensionError(f"outcomes cover {S.shape[-1]} prompts; the solver has {N}")
        start = len(self._models)
        ids = list(model_ids) if model_ids is not None else list(range(start, start + S.shape[0]))
        if len(ids) != S.shape[0]:
            raise InputError(f"{len(ids)} model ids for {S.shape[0]} outcome rows")
        seen: set = set()
        for mid in ids:
            if mid in self._models or mid in seen:
                raise InputError("model id is already in the solver; use replace_model", item=f"model {mid}")
            seen.add(mid)
        K = S.shape[0]
        b = np.empty((K, D.shape[1]))
        n = np.empty(K, dtype=np.int64)
        sy, syy = np.empty(K), np.empty(K)  # sum_j y_ij and sum_j y_ij^2 (the intercept / GCV statistics)
        keys: list[bytes] = []
        new_patterns: dict[bytes, Pattern] = {}
        Ybuf = np.empty((min(K, CHUNK), N))
        Mbuf = np.empty((min(K, CHUNK), N), dtype=bool)
        for lo in range(0, K, CHUNK):
            k = min(CHUNK, K - lo)
            Y, missing = Ybuf[:k], Mbuf[:k]
            chunk_ids = ids[lo : lo + k]
            # a model the solver refuses (inputs.refusals: no observed outcome, a value outside [0, 1]) raises
            signed_into(S[lo : lo + k], Y, missing, chunk_ids, unobserved="drop it or add its results")
            sy[lo : lo + k] = Y.sum(axis=1)
            syy[lo : lo + k] = np.einsum("ij,ij->i", Y, Y)
            n[lo : lo + k] = N - missing.sum(axis=1)
            if not missing.any():
                keys.extend([b"all"] * k)
                segments = [(0, N)]
            else:
                for row in missing:
                    observed = ~row
                    key = pattern_key(observed)
                    if key not in cov.patterns and key not in new_patterns:
                        new_patterns[key] = Pattern(mask=observed)
                    keys.append(key)
                segments = runs(~missing.all(axis=0))
                if len(segments) > 64:
                    segments = [(0, N)]
            if k <= 4 and all(key in cov.patterns for key in keys[lo : lo + k]):
                sparse = [cov.sparse_b(Y[r], ~missing[r], cov.patterns[keys[lo + r]]) for r in range(k)]
                if all(v is not None for v in sparse):
                    b[lo : lo + k] = sparse
                    continue
            b[lo : lo + k] = dot_rows(Y, D, segments)  # b_i = sum_j y_ij d_j   (k, d)
        if b"all" in keys and b"all" not in cov.patterns:
            new_patterns[b"all"] = Pattern(mask=np.ones(N, dtype=bool))
        # commit: nothing above changed the solver's state
        cov.patterns.update(new_patterns)
        self._models.append(ids, keys, b, n, sy, syy)
        self._solve(range(start, start + K))
        return self

    def replace_model(self, model_id: Hashable, s: np.ndarray) -> "HyperplaneSolver":
        """Replace one model's outcomes (N,) and re-solve only that model."""
        self._check_fitted()
        i = self.index_of(model_id)
        s = np.asarray(s)
        D = self._coverage.D
        N = D.shape[0]
        if s.ndim != 1 or s.shape[0] != N:
            raise DimensionError(f"outcomes of model {model_id!r} have shape {s.shape}; expected ({N},)")
        Y, observed = signed_outcomes(s[None, :], model_ids=[model_id], unobserved="use remove_models")
        b = dot_rows(Y, D, runs(observed[0]) if not observed.all() else [(0, N)])[0]  # b_i = sum_j y_ij d_j
        self._models.set_row(i, self._coverage.register(observed[0]), b, int(observed.sum()),
                             float(Y.sum()), float((Y * Y).sum()))
        self._solve([i])
        self._coverage.drop_unused(set(self._models.pattern))
        return self

    def remove_models(self, model_ids: Sequence[Hashable]) -> "HyperplaneSolver":
        """Remove models; the others are untouched. Unknown ids raise :class:`NotFoundError` (nothing removed)."""
        self._check_fitted()
        drop = {self.index_of(m) for m in model_ids}
        self._models.keep(np.array([i for i in range(len(self._models)) if i not in drop], dtype=np.int64))
        self._coverage.drop_unused(set(self._models.pattern))
        return self

    def add_prompts(self, D_new: np.ndarray, S_new: np.ndarray, *,
                    formats: np.ndarray | None = None) -> "HyperplaneSolver":
        """Add prompts (a new benchmark, more questions) and the current models' outcomes on them.

        ``D_new`` (K, d) embeddings; ``S_new`` (M, K) outcomes of the fitted models in row order, NaN where a
        model was not observed; ``formats`` (K,) their answer formats (as for :meth:`fit`). Only the models with an
        observed outcome on a new prompt are re-solved.
        """
        self._check_fitted()
        D_new = validate_embeddings(D_new, dim=self._coverage.D.shape[1])
        new_formats = self._checked_formats(formats, D_new.shape[0])
        S_new = np.asarray(S_new, dtype=np.float64)
        M = len(self._models)
        if S_new.ndim == 1:
            S_new = S_new[None, :] if M == 1 else S_new[:, None]
        if S_new.shape != (M, D_new.shape[0]):
            raise DimensionError(f"new outcomes have shape {S_new.shape}; expected ({M}, {D_new.shape[0]})")
        Y, observed = signed_outcomes(S_new, model_ids=self._models.ids)
        K = D_new.shape[0]
        patterns = self._coverage.add_prompts(D_new, self._models.pattern, observed)
        self._formats = np.concatenate([self._formats, new_formats])
        self._shares = {}
        # b_i += sum_{new j} y_ij d_j, and the counts and sums likewise
        self._models.add_prompts(patterns, dot_rows(Y, D_new, [(0, K)]), observed.sum(axis=1), Y.sum(axis=1),
                                 (Y * Y).sum(axis=1))
        self._solve([i for i in range(M) if observed[i].any()])
        return self

    # ------------------------------------------------------------------ use
    def predict(self, Q: np.ndarray) -> np.ndarray:
        """Predicted success scores ``Q @ normals_.T``: Q (n, d) or (d,) -> (n, M)."""
        self._check_fitted()
        Q = validate_embeddings(np.atleast_2d(Q), dim=self._coverage.D.shape[1])
        if self.intercept:
            return Q @ self.normals_.T + self.intercept_  # s = q . e_i + a_i
        return Q @ self.normals_.T

    def factors(self, keys=None) -> dict[bytes, tuple[int, Eigen]]:
        """``{pattern key: (n prompts, Eigen)}`` of the coverage patterns in use (or ``keys``): the factorisation
        the general solve shares between the models of a pattern (:func:`~indexer.solver.ridge.factorise`),
        computed now where missing. Needs one of the options (intercept, GCV, free, prior): the plain method
        (``paper``) has no per-model posterior."""
        self._check_fitted()
        if not (self.intercept or self.select or self.free or self.prior_ is not None):
            raise InputError("the plain solve (no intercept, GCV, covariates or prior) keeps no factorisation")
        cov = self._coverage
        keys = list(cov.patterns) if keys is None else list(keys)
        missing = [k for k in keys if cov.patterns[k].eig is None]
        if len(missing) > 1 and cov.atoms is None:
            cov.build_atoms()
        out = {}
        for key in keys:
            pat = cov.patterns[key]
            n = int(pat.mask.sum())
            if pat.eig is None:
                mu = cov.pattern_sum(pat) / n if self.intercept else None
                pat.eig = factorise(cov.pattern_gram(pat.mask), mu, n, int(self.free))
            out[key] = (n, pat.eig)
        return out

    def predictive_variance(self, Q: np.ndarray) -> np.ndarray:
        """Posterior variance of every model's score at the rows ``Q`` (n, d) -> (n, M)
        (:func:`~indexer.solver.ridge.predictive_variance`, per coverage pattern)."""
        Q = validate_embeddings(np.atleast_2d(Q), dim=self._coverage.D.shape[1])
        models = self._models
        out = np.empty((Q.shape[0], len(models)))
        by_pattern: dict[bytes, list[int]] = {}
        for i, key in enumerate(models.pattern):
            by_pattern.setdefault(key, []).append(i)
        for key, (n, eig) in self.factors(by_pattern).items():
            idx = np.asarray(by_pattern[key])
            out[:, idx] = predictive_variance(eig, n, models.lam[idx], models.noise[idx], Q)
        return out

    def refit(self, **params) -> "HyperplaneSolver":
        """Change hyper-parameters (``lam``, ``eps``, ``intercept``, ``select``, ``lambdas``, ``prior``) and
        re-solve every model from the stored sufficient statistics: no pass over ``D`` or the outcomes. Equals
        a fresh ``fit`` with the new parameters. Used by the eps/lambda ablation of ``taskspace evaluate``."""
        self._check_fitted()
        unknown = set(params) - {"lam", "eps", "intercept", "select", "lambdas", "prior"}
        if unknown:
            raise InputError(f"unknown solver {noun(len(unknown), 'parameter')} {sorted(unknown)}")
        saved = {k: getattr(self, k) for k in params}
        for k, v in params.items():
            setattr(self, k, v)
        try:
            self._check_params()
        except InputError:
            for k, v in saved.items():
                setattr(self, k, v)
            raise
        self._coverage.clear_factors()
        self.prior_ = self._fixed_prior(self._coverage.D.shape[1])
        if self._prior_kind() == "mean":
            self._estimate_prior(base_solved=False)  # new parameters: every model is solved again
        else:
            self._solve(range(len(self._models)))
        return self

    def refresh_prior(self) -> "HyperplaneSolver":
        """Re-estimate the ``'mean'`` prior from the models now in the solver and re-solve every model toward it
        (equals a fresh ``fit``); with a fixed array prior (or none) this only re-solves."""
        self._check_fitted()
        if self._prior_kind() == "mean":
            # with no prior in use the normals are already the prior-free fits the estimate starts from
            self._estimate_prior(base_solved=self.prior_ is None)
        else:
            self._solve(range(len(self._models)))
        return self

    def augmented_normals(self) -> np.ndarray:
        """(M, d + 1) rows ``[e_i, a_i]`` (``a_i`` = ``intercept_``, 0 without the intercept option), so that a
        plain dot product with ``[q, 1]`` gives :meth:`predict`'s score (for a vector index that only does
        dot products)."""
        self._check_fitted()
        a = self.intercept_ if self.intercept else np.zeros(len(self._models))
        return np.hstack([self.normals_, a[:, None]])

    def index_of(self, model_id: Hashable) -> int:
        """Row of ``model_id`` in ``normals_``; :class:`NotFoundError` when it is not in the solver."""
        self._check_fitted()
        try:
            return self._models.row(model_id)
        except (KeyError, TypeError):
            raise NotFoundError(f"model {model_id!r} is not in the solver; check the id or add the model") from None

    # ------------------------------------------------------------------ internals
    def _checked_embeddings(self, D: np.ndarray) -> np.ndarray:
        """The parameters and ``D`` (N, d) checked for :meth:`fit` / :meth:`prepare`."""
        self._check_params()
        D = validate_embeddings(D)
        if self.free and self.free >= D.shape[1]:
            raise InputError(f"free={self.free} leaves no embedding column of the {D.shape[1]} in D")
        return D

    def _start(self, D: np.ndarray, formats: np.ndarray) -> None:
        """Reset the learned state to the prompts ``D`` (N, d) of answer ``formats`` (N,) and no model (an array
        prior is checked first)."""
        prior = self._fixed_prior(D.shape[1])
        self._coverage = Coverage(D)
        self._models = ModelRows(D.shape[1])
        self._formats = formats
        self._shares: dict[bytes, np.ndarray] = {}  # format_shares by pattern key (a key is its mask)
        self.prior_ = prior

    def _checked_formats(self, formats, N: int) -> np.ndarray:
        """(N,) int8 answer-format codes in ``[0, n_formats)`` (None: all 0)."""
        if formats is None:
            return np.zeros(N, dtype=np.int8)
        f = np.asarray(formats)
        if f.shape != (N,) or f.dtype.kind not in "iub" or (N and (f.min() < 0 or f.max() >= self.n_formats)):
            raise InputError(f"formats must be {N} whole numbers in [0, {self.n_formats}) (one per prompt)")
        return f.astype(np.int8)

    def format_shares(self, keys=None) -> dict[bytes, np.ndarray]:
        """``{pattern key: (n_formats,) float64}``: the share of the pattern's prompts in each answer format (a model's
        format mix: every model of a pattern has the same), for the patterns in use (or ``keys``)."""
        self._check_fitted()
        cov = self._coverage
        keys = list(cov.patterns) if keys is None else list(keys)
        out = {}
        for key in keys:
            if key not in self._shares:
                counts = np.bincount(self._formats[cov.patterns[key].mask], minlength=int(self.n_formats))
                self._shares[key] = counts / max(int(counts.sum()), 1)
            out[key] = self._shares[key]
        return out

    def pattern_prior(self, key: bytes) -> np.ndarray | None:
        """(d - free,) the shrinkage target of the models of coverage pattern ``key``: ``prior_`` itself, or with
        one prior per answer format (``n_formats`` > 1) their mix weighted by the pattern's :meth:`format_shares`
        (None without a prior)."""
        u = self.prior_
        if u is None or np.ndim(u) == 1:
            return u
        return self.format_shares([key])[key] @ u

    def _check_params(self) -> None:
        self._check_options()
        for name in ("lam", "eps"):
            value = getattr(self, name)
            if not isinstance(value, (int, float, np.floating, np.integer)) or not np.isfinite(value) or value < 0:
                raise InputError(f"{name}={value!r} must be a finite number >= 0")

    def _check_options(self) -> None:
        free = self.free
        if isinstance(free, bool) or not isinstance(free, (int, np.integer)) or free < 0:
            raise InputError(f"free={free!r} must be a whole number >= 0 (trailing unpenalised columns)")
        if self.select not in (None, "gcv"):
            raise InputError(f"select={self.select!r}: use None (fixed lambda) or 'gcv'")
        nf = self.n_formats
        if isinstance(nf, bool) or not isinstance(nf, (int, np.integer)) or nf < 1:
            raise InputError(f"n_formats={nf!r} must be a whole number >= 1 (answer formats of the prompts)")
        prior = self.prior
        if isinstance(prior, str) and prior != "mean":
            raise InputError(f"prior={prior!r}: use None, 'mean' or an array (the shrinkage target)")
        if prior is not None and not isinstance(prior, str):
            u = np.asarray(prior)
            if u.ndim != (1 if nf == 1 else 2) or u.dtype.kind not in "fiu" or not np.isfinite(u).all():
                raise InputError("prior must be an array of finite numbers (the shrinkage target): 1-d, or one row "
                                 "per answer format with n_formats > 1")
        if self.lambdas is not None:
            grid = np.asarray(self.lambdas, dtype=np.float64)
            if grid.ndim != 1 or grid.size == 0 or not np.isfinite(grid).all() or (grid < 0).any():
                raise InputError(f"lambdas={self.lambdas!r} must be a non-empty list of finite numbers >= 0")

    def _prior_kind(self) -> str | None:
        return None if self.prior is None else ("mean" if isinstance(self.prior, str) else "fixed")

    def _fixed_prior(self, d: int) -> np.ndarray | None:
        """The array prior as float64 of the embedding width ``d - free`` (None for no prior or ``'mean'``)."""
        if self._prior_kind() != "fixed":
            return None
        u = np.asarray(self.prior, dtype=np.float64)
        p = d - int(self.free)
        want = (p,) if self.n_formats == 1 else (int(self.n_formats), p)
        if u.shape != want:
            raise DimensionError(f"prior has shape {u.shape}; expected {want}, the embedding part of the normals")
        return u

    def _estimate_prior(self, base_solved: bool) -> None:
        """``prior='mean'``: solve every model without a prior (skipped when ``base_solved``: the normals already
        are those fits), then toward the mean of their embedding parts. With fewer than
        :data:`PRIOR_MIN_MODELS` models there is no prior (``prior_`` None: plain ridge)."""
        rows = range(len(self._models))
        self.prior_ = None
        if not base_solved:
            self._solve(rows)
        if len(self._models) >= PRIOR_MIN_MODELS:
            p = self._coverage.D.shape[1] - int(self.free)
            E = self.normals_[:, :p]
            if self.n_formats == 1:
                self.prior_ = self._prior_of(E)
            else:
                shares = self.format_shares(sorted(set(self._models.pattern)))
                W = np.stack([shares[k] for k in self._models.pattern])  # (M, F) each model's format mix
                self.prior_ = self._format_priors(E, W)
            self._solve(rows)

    def _prior_of(self, E: np.ndarray) -> np.ndarray:
        """The ``'mean'`` prior from the models' prior-free normals ``E`` (models x embedding part): their mean (other
        estimates replace this in ``benchmarks/bench_prior.py``)."""
        return E.mean(axis=0)

    def _format_priors(self, E: np.ndarray, W: np.ndarray) -> np.ndarray:
        """(F, p) the ``'mean'`` prior per answer format from the prior-free normals ``E`` (M, p) and the models'
        format mixes ``W`` (M, F): ``u_f = sum_i W_if e_i / sum_i W_if`` (the models seen on format f, each by its
        share there). A format seen by less than :data:`PRIOR_MIN_MODELS` models' worth of shares gets the plain
        mean of all (its own mean would be mostly those few models' normals). On one format, the plain mean."""
        u = self._prior_of(E)
        out = np.tile(u, (W.shape[1], 1))
        total = W.sum(axis=0)
        for f in np.flatnonzero(total >= PRIOR_MIN_MODELS):
            if not (W[:, f] == 1.0).all():  # (every model on format f alone: the plain mean, as computed above)
                out[f] = W[:, f] @ E / total[f]
        return out

    def _check_fitted(self) -> None:
        if not hasattr(self, "_coverage"):
            raise NotFoundError("the solver is not fitted; call fit(D, S) or prepare(D) first")

    def _solve(self, rows) -> None:
        """Re-solve the model ``rows`` from their statistics, grouped by coverage pattern."""
        if self.intercept or self.select or self.free or self.prior_ is not None:
            self._solve_general(list(rows))
            return
        cov, models = self._coverage, self._models
        by_pattern, todo = cov.group(rows, models.pattern, "proj")
        with single_threaded_lapack():
            for key in todo:
                pat = cov.patterns[key]
                # e_i = b_i V diag(phi(w)) V^T with G_i = V diag(w) V^T
                pat.proj = projection(cov.pattern_gram(pat.mask), self.lam, self.eps)
        for key, idx in by_pattern.items():
            proj = cov.patterns[key].proj
            idx_arr = np.asarray(idx)
            if idx_arr[-1] - idx_arr[0] + 1 == idx_arr.size:  # contiguous rows: a view, no gather
                span = slice(int(idx_arr[0]), int(idx_arr[-1]) + 1)
                models.solved(span, models.b[span] @ proj)  # e_i = b_i V diag(phi) V^T
            else:
                models.solved(idx_arr, models.b[idx_arr] @ proj)

    def _solve_general(self, rows: list[int]) -> None:
        """Solve ``rows`` with the options (intercept, lambda by GCV, free covariates, prior): per coverage
        pattern, factorise its Gram once (:func:`~indexer.solver.ridge.factorise`, cached on the pattern) and
        solve its models together (:func:`~indexer.solver.ridge.solve_pattern`)."""
        cov, models = self._coverage, self._models
        by_pattern, _ = cov.group(rows, models.pattern, "eig")
        grid = np.asarray(self.lambdas if self.lambdas is not None else GCV_LAMBDAS, dtype=np.float64)
        for key, idx in by_pattern.items():
            pat = cov.patterns[key]
            n = int(pat.mask.sum())
            if pat.eig is None:
                G = cov.pattern_gram(pat.mask)
                mu = cov.pattern_sum(pat) / n if self.intercept else None  # the pattern's mean prompt row
                pat.eig = factorise(G, mu, n, int(self.free))
            idx_arr = np.asarray(idx)
            E, lam_i, a, noise = solve_pattern(pat.eig, n, models.b[idx_arr], models.sum_y[idx_arr],
                                               models.sum_yy[idx_arr], lam=self.lam, eps=self.eps,
                                               intercept=self.intercept, grid=grid if self.select == "gcv" else None,
                                               prior=self.pattern_prior(key))
            models.solved(idx_arr, E, lam_i, a, noise)
