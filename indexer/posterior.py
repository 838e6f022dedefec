"""What a prediction is worth: the calibrated probability of success and its uncertainty. Numpy (scikit-learn's
logistic regression only where the cells separate), no I/O.

Every model's fit is a ridge regression, so its score at a prompt has a closed-form posterior
(:func:`indexer.solver.ridge.predictive_variance`): the residual variance ``s_i^2`` of the model times the
leverage of the prompt's (effective) design row under the eigendecomposition its coverage pattern shares with every
model observed on the same prompts. A :class:`PatternPosterior` is what a pattern contributes (stored once per
pattern, not per model); a model adds its lambda and ``s_i^2``. The variance grows as a query leaves the prompts
the model was observed on, toward the prior's ``s_i^2 / (2 lambda_i)`` per unit in directions it never saw. An
interval counts ``s_i^2`` at least :func:`noise_floor` (a model measured at 0% or 100% has a fit's ``s_i^2`` of 0).

A :class:`Calibration` turns a raw score (the inner product Qdrant ranks by) into a probability: a logistic
(Platt) map ``p = 1 / (1 + exp(-(a + b score)))`` fitted on held-out source cells when the space is fitted:
the closed-form leave-one-out predictions of the ridge fits, ``y_j - r_j / (1 - h_jj)`` with ``h_jj`` the
prompt's leverage (:func:`loo_cells`), on a seeded sample of prompts. The map depends on the score alone and is
increasing, so ranking by probability is ranking by score (Qdrant's order). The interval is the posterior one
of the score mapped through the same calibration: ``p(score -/+ z sd)``; ranking by its lower end (a lower
confidence bound) re-ranks a candidate set (:func:`lcb_candidates_exact`).

**The level/deviation map** (spaces with :func:`indexer.represent.has_levels`, the default ``auto-mc``): the score
is split into the model's level ``l_i`` (its mean signed source outcome), the prior's part of its deviation
``U = u . (x - mu_i)`` (the models' mean normal: prompt difficulty as the population sees it) and the model's own
part ``s - l_i - U``, each with its own weight: ``logit p = a + level l_i + specific (s - l_i - U) + shared U``
(:class:`Calibration` ``level``, ``specific``, ``shared``), fitted on cross-fitted held-out *prompts*
(:func:`heldout_cells`, :func:`fit_level_calibration`): leave-one-out cells would let the prior, fitted on every
other model's outcome of the prompt, know its difficulty. The weights are per space and the model vectors carry
``[l_i, u . mu_i]``, so the map folds into the query vector (:meth:`Calibration.fold`): Qdrant's inner product
plus a per-query constant is the logit, and Qdrant's order is the probability order. With the prior per answer
format (:data:`indexer.represent.LEVELS_FORMATS`) a model's prior is its own mix ``u_i = sum_f w_if u_f`` of the
formats' priors, the vectors carry ``[w_i1 .. w_iF, l_i, u_i . mu_i]`` and the folded query holds the ``u_f . x``
(scaled) in the ``w`` coordinates, with no per-query constant. Where thousands of models
each have a few hundred cells (metabench), the held-out prompts give the own deviation a small weight, and the
argmax over models picks strong models instead of over-fitted ones.

**Coverage** (:attr:`Calibration.uncovered`): a model's own deviation at a query far from every prompt it was
observed on is an extrapolation of its normal. Each held-out cell carries the model's coverage ``c``, the share of
the held-out prompt's :data:`COVERAGE_PROMPTS` nearest training prompts (by question) it was observed on
(:func:`coverage_shares`); where enough cells are uncovered (a sparse index: models measured on some benchmarks
only) the map gives the own deviation one weight where models were observed near (``specific``, times ``c``) and
another where not (``uncovered``, times ``1 - c``), so a model with no evidence near a query falls back toward its
level and the population's prior there. The logit is then ``c L1 + (1 - c) L0`` (two folded queries: the search
re-ranks their candidates, :func:`indexer.query.coverage_ranked`); a dense index has no uncovered cells and keeps
one weight.

**The bend** (:attr:`Calibration.knots`): one logistic in the map's features cannot follow every shape of success
(where models' rates span 0.1-0.9, as among metabench's thousands, the weakest models fail more often on hard prompts
than any one logistic says). The logit ``z`` the map gives each held-out cell is mapped once more, by an increasing
function fitted on the same cells (:func:`fit_bend`): their outcomes' isotonic regression on ``z`` (scikit-learn),
averaged over bins of equal cell counts (one knot per bin, at most :data:`BEND_KNOTS`) and joined by straight lines
in logit space, each rising at least :data:`BEND_MIN_SLOPE` per unit of ``z``, with slope 1 beyond the end knots. ``p = sigmoid(bend(z))``: the bend is increasing, so Qdrant's order (``z``'s) stays the probability order
and every ranking is unchanged; only the probabilities and their intervals move.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

__all__ = ["EVIDENCE_ALPHA", "evidence_lr", "PatternPosterior", "Calibration", "Predictor", "pattern_posteriors", "score_variance", "loo_cells",
           "region_variance", "benchmark_links", "links_of", "link_centres", "link_members", "REGION_ESTIMATOR", "fit_calibration", "fit_level_calibration", "heldout_cells", "calibration_prompts", "lcb_candidates_exact", "Z_INTERVAL", "CALIBRATION_PROMPTS",
           "coverage_shares", "COVERAGE_PROMPTS", "fit_bend", "lambda_cap", "noise_floor", "interval_noise"]

#: the interval is the posterior's central 90% (z = 1.645) mapped through the calibration
Z_INTERVAL = 1.6448536269514722
#: how many source prompts (a seeded sample) the calibration's leave-one-out cells come from
CALIBRATION_PROMPTS = 2000
#: the parts the level/deviation map's held-out cells are cut into (:func:`heldout_cells`): two refits of every
#: model on half of the prompts each (one halves the cost; measured worse calibration, docs/RESULTS.md)
CALIBRATION_FOLDS = 2
#: the smallest factor of the raw score and of the level in a folded query (:attr:`Calibration.ranking_coefficients`)
TIE_BREAK = 1e-6
#: a query's neighbourhood for the map's coverage (:func:`coverage_shares`): its this many nearest indexed prompts
COVERAGE_PROMPTS = 10
#: the map weighs the own deviation of uncovered cells apart only when their weight (the sum of ``1 - c``) is at
#: least this many cells and this share of all held-out cells (a dense index has almost none: one weight there)
COVERAGE_MIN_CELLS = 200
COVERAGE_MIN_SHARE = 0.01
#: the bend of the map's logit (:func:`fit_bend`): one knot per BEND_CELLS_PER_KNOT held-out cells between the
#: BEND_TAIL and 1 - BEND_TAIL quantiles of their logits (at most BEND_KNOTS knots; the few cells beyond keep the map's
#: own slope), fitted only on at least BEND_MIN_CELLS cells (fewer: no bend)
BEND_KNOTS = 48
BEND_CELLS_PER_KNOT = 2000
BEND_TAIL = 0.005
BEND_MIN_CELLS = 4000
#: the fewest outcomes of a model on one benchmark for its level there to enter :func:`region_variance` (half of them
#: in each of its split halves)
REGION_MIN_CELLS = 20
#: how many random cuts of the prompts into halves :func:`region_variance` averages over
REGION_SPLITS = 4
#: the version of :func:`region_variance`, stored with the map it estimated (:attr:`Calibration.region_estimator`,
#: schema 0017), raised whenever it gives other values on the same outcomes: 2 leaves models measured on one
#: benchmark out of the model x benchmark interaction; the estimator before it (1: every map stored before schema
#: 0017) counted them as pairs without one, which diluted the variance (sample + evalarena_code + metabench_openllm:
#: 0.00007 against 0.0049), so intervals far from a model's evidence were too narrow. 3 stores the benchmarks' links
#: with it (:func:`benchmark_links`, :attr:`Calibration.links`), which 2 did not find. A pass fits a map of an older
#: estimator again
REGION_ESTIMATOR = 3
#: each segment of the bend rises at least this much per unit of the logit: no ties, and an interval (the posterior's
#: spread of the logit, bent) never shrinks below this share of its width on a plateau of the isotonic fit, whose
#: steps are partly the noise of finite cells (seen on the bundled sample: 10,500 cells, 48 knots, half the
#: segments flat and 90% intervals of one point)
BEND_MIN_SLOPE = 0.25
#: the map keeps its slopes only when its held-out cells reject "success does not depend on the score" at this level:
#: a likelihood-ratio test of the fitted map against the cells' base rate (chi-square, one degree of freedom per
#: slope kept). On pure-noise outcomes (6 models x 60 MMLU-Pro prompts, random 0/1, 12 seeds) slopes fitted by chance
#: gave LR 0.0-5.9 and probabilities of 0.32-0.66 that looked like signal; on the bundled sample LR is about 1,050
EVIDENCE_ALPHA = 0.01
#: at most this many models (a seeded sample) are refitted for the level/deviation map's held-out cells: more
#: models, less sampling noise in the map's few coefficients (metabench_openllm's 32,676 models, 5 seeds in-sample:
#: AUC 0.8090 with 2,000, 0.8095 with 8,000; its coverage split 0.7542 -> 0.7584, ECE 0.033 -> 0.027; docs/RESULTS.md),
#: for about 1.5x the refits' time there; an index of fewer models refits them all
CALIBRATION_MODELS = 8000
#: the refits for the held-out cells leave out the training prompts that models lacking at most this share of the
#: part lack, when those prompts are at most this share of it: those nearly complete models then share one coverage
#: pattern, one eigendecomposition per refit instead of one per pattern (mmlu_pro: 5 patterns among 31 models, one
#: model lacking 14% of the prompts; the refits were half of `taskspace evaluate`'s time)
DENSE_GAPS = 0.05


@dataclass(frozen=True, eq=False)
class PatternPosterior:
    """The posterior factors one coverage pattern shares with all its models.

    ``key``: a stable id of the pattern's prompt set; ``n``: its prompts; ``mu`` (d,): its mean design row;
    ``w`` (p,), ``V`` (p, p): eigendecomposition of its centred Gram with the free covariates partialled out;
    ``K`` (p, k), ``Cinv`` (k, k): the covariates' blocks (None without); ``formats``: (observed with answer
    options, observed without), for spaces that keep the two apart (:func:`indexer.represent.has_formats`)."""

    key: str
    n: int
    mu: np.ndarray
    w: np.ndarray
    V: np.ndarray
    K: np.ndarray | None = None
    Cinv: np.ndarray | None = None
    formats: tuple[bool, bool] = (True, True)

    def eigen(self):
        """The solver's :class:`~indexer.solver.ridge.Eigen` of these factors."""
        from .solver.ridge import Covariates, Eigen

        cov = None
        if self.K is not None:
            cov = Covariates(B=np.zeros_like(self.K), K=np.asarray(self.K, np.float64),
                             Cinv=np.asarray(self.Cinv, np.float64), rank=0.0)
        return Eigen(np.asarray(self.w, np.float64), np.asarray(self.V, np.float64), np.asarray(self.mu, np.float64),
                     cov)


def pattern_posteriors(solver, X: np.ndarray, keys: dict[bytes, str] | None = None,
                       space=None) -> dict[bytes, PatternPosterior]:
    """The :class:`PatternPosterior` of each coverage pattern the solver's models use, by the solver's pattern
    key; ``keys`` maps those to stable ids (default: their hex). ``X``: the design rows the solver was fitted on
    (for a split space's formats)."""
    from . import represent

    out = {}
    split = space is not None and represent.has_formats(space)
    for key, (n, eig) in solver.factors(sorted(set(solver.pattern_of_))).items():
        cov = eig.covariates
        formats = represent.pattern_formats(X, solver.patterns_[key].mask) if split else (True, True)
        out[key] = PatternPosterior(
            key=(keys or {}).get(key, key.hex()), n=int(n), mu=eig.mu, w=eig.w, V=eig.V,
            K=None if cov is None else cov.K, Cinv=None if cov is None else cov.Cinv, formats=formats)
    return out


def score_variance(post: PatternPosterior, lam: np.ndarray, noise: np.ndarray, rows: np.ndarray, space) -> np.ndarray:
    """(q, k): the posterior variance of the scores of k models of the pattern ``post`` (their ``lam``, ``noise``
    (k,)) at the index rows ``rows`` (q, dim) of ``space``."""
    from . import represent
    from .solver.ridge import predictive_variance

    X = represent.effective_rows(rows, np.asarray(post.mu, np.float64), post.formats, space)
    return predictive_variance(post.eigen(), post.n, np.atleast_1d(lam), np.atleast_1d(noise), X)


def loo_cells(solver, X: np.ndarray, S: np.ndarray, prompts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Closed-form leave-one-out scores of the solver's models on the source prompts ``prompts`` (indices into
    the rows ``X`` (N, d) the solver was fitted on and the columns of its outcomes ``S`` (M, N)): for every
    observed cell, ``y_j - r_j / (1 - h_jj)`` with the fit's residual ``r_j`` and the leverage
    ``h_jj = var(score at x_j) / s_i^2``. Returns (scores, outcomes in [0, 1]), one entry per observed cell."""
    Xp = np.asarray(X[prompts], dtype=np.float64)
    P = solver.predict(Xp).T  # (M, q) fitted scores
    noise = np.asarray(solver.noise_, dtype=np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):  # a model fitted exactly (or not at all) has noise 0
        H = np.where(noise > 0, solver.predictive_variance(Xp).T / noise, 0.0)  # (M, q) leverages
    Sp = np.asarray(S[:, prompts], dtype=np.float64)
    obs = ~np.isnan(Sp)
    y = 2.0 * Sp[obs] - 1.0
    r = y - P[obs]
    loo = y - r / np.maximum(1.0 - H[obs], 1e-3)
    return loo, Sp[obs]


@dataclass(frozen=True)
class Calibration:
    """``p = 1 / (1 + exp(-(a + b score)))`` (see the module docstring); ``n_cells``: the held-out source cells
    it was fitted on, ``n_models``: from how many models (as stored with a space). ``spread``: the variance across
    those models of their mean signed outcome (how much models differ in general level): the uncertainty of a
    model's score on an answer format it was never observed on, where its own average stands in
    (:func:`indexer.represent.index_vectors`)."""

    a: float
    b: float
    n_cells: int = 0
    n_models: int = 0
    spread: float = 0.0
    #: the level/deviation map (spaces with :func:`indexer.represent.has_levels`; None: the plain map of the raw
    #: score above): ``logit p = a + level * l_i + specific * (s - l_i - U) + shared * U`` with ``l_i`` the model's
    #: level (its mean signed source outcome), ``s`` its raw score and ``U = u . (x - mu_i)`` the prior's (the models'
    #: mean normal's) part of the deviation ``s - l_i``, fitted on cross-fitted held-out source cells
    #: (:func:`heldout_cells`); ``b`` is then ``specific`` (the factor of the raw score, :meth:`fold`)
    level: float | None = None
    specific: float | None = None
    shared: float | None = None
    #: the weight of the own deviation ``s - l_i - U`` where the model was observed on none of the query's
    #: :data:`COVERAGE_PROMPTS` nearest indexed prompts (None: ``specific`` everywhere). A model observed on a share
    #: ``c`` of them gets ``c`` times the map with ``specific`` plus ``1 - c`` times the map with this weight
    #: (:meth:`fold` with ``own``): where a model has no evidence near the query its own deviation there is an
    #: extrapolation, and the held-out cells measure how much less it is worth
    uncovered: float | None = None
    #: the bend of the folded map's logit (:func:`fit_bend`; None: none): ``(z, logit)``, two increasing tuples of
    #: knots; ``p = sigmoid(bend(z))`` with ``bend`` the straight lines through them and slope 1 beyond the ends
    knots: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    #: the largest lambda a model's interval is computed with (:func:`lambda_cap`: the median of the models'
    #: lambdas when the map was fitted; None: each model's own): a model whose outcomes could not tell its deviation
    #: from the population's (lambda chosen at the grid's edge, mostly models with few outcomes) is not known to
    #: follow the population more closely than a typical model, so away from its evidence its interval widens at
    #: least as fast as a typical model's (docs/RESULTS.md, "Intervals")
    lam_cap: float | None = None
    #: the region variance ``sigma_r^2`` (:func:`region_variance`, signed-score units; None: none, as every map
    #: stored before it and the plain map): how far a model's level on one benchmark
    #: strays from its overall level beyond what the benchmark does to every model. Where a model has no evidence
    #: near the query its level there is its overall level, known only up to that, so its interval widens by
    #: :meth:`region_term` (docs/RESULTS.md, "Intervals")
    region_var: float | None = None
    #: the :data:`REGION_ESTIMATOR` that gave :attr:`region_var` (None: an older one, as every map stored before
    #: schema 0017, or not known: a pulled map); a pass fits a map again whose estimator is older than this
    #: taskspace's (:func:`indexer.pipeline._fitted_before`). Not part of the map's value (no effect on equality)
    region_estimator: int | None = dataclasses.field(default=None, compare=False)
    #: the benchmarks in groups no model links (:func:`benchmark_links`: two benchmarks are linked when a model was
    #: observed on both, or through a chain of such models), each group sorted, the groups by their first name; None
    #: when every benchmark is linked to every other (one group), as in every map stored before schema 0018. A model
    #: was observed only in its own group: the index holds no outcome that relates its level there to a model's level
    #: in another group, so where the query lies in another group its level there is known only as well as any
    #: model's is, and its interval widens to the models' spread (:meth:`unlinked_term`)
    links: tuple[tuple[str, ...], ...] | None = None
    #: one vector per group of :attr:`links` (same order): the mean index vector of the models observed in that
    #: group (:func:`link_centres`), the average model of the group; None without links, or a map stored before
    #: schema 0019 (until the next pass). Where a model is not linked to the query's benchmarks its own level and
    #: deviation there are not known: its score on that share of the query is the average model's of the query's
    #: group (:meth:`unlinked_mix`), where before it kept its own, measured on prompts nothing relates to the query
    centres: tuple[tuple[float, ...], ...] | None = None

    def unlinked_mix(self, q: np.ndarray, model_benchmarks: list, near_benchmarks: list
                     ) -> tuple[np.ndarray, np.ndarray]:
        """(weight, constant), each (k,): a model of ``model_benchmarks`` (k lists, the payloads' ``benchmarks``)
        scores ``weight * own + constant`` on the folded query ``q`` (:meth:`fold`, scores before its offset), with
        ``own`` its own score. Each of the query's nearest indexed prompts (``near_benchmarks``) counts alike: one
        linked to the model's benchmarks (:meth:`linked_shares`' rule) by the model's own score, one that is not by
        the average model's of the prompt's groups (``q . centre``, :attr:`centres`). ``weight`` is the linked share,
        at least :data:`TIE_BREAK` (models of one group that no nearest prompt lies in still rank by their own score,
        as a folded query's coefficients do). (1, 0) without :attr:`centres` or a neighbourhood."""
        k = len(model_benchmarks)
        weight, const = np.ones(k), np.zeros(k)
        if self.centres is None or not self.folded:
            return weight, const
        at = np.asarray(self.centres, dtype=np.float64) @ np.asarray(q, dtype=np.float64)  # (G,) the average models
        n = len(near_benchmarks or ())
        done: dict[int, tuple[float, float]] = {}  # by the list of prompts (one per set of groups)
        for i, off in enumerate(self._unlinked_prompts(model_benchmarks, near_benchmarks)):
            if off is not None:
                if id(off) not in done:
                    done[id(off)] = (max(1.0 - len(off) / n, TIE_BREAK),
                                     sum(float(np.mean(at[sorted(gs)])) for gs in off) / n)
                weight[i], const[i] = done[id(off)]
        return weight, const

    def _unlinked_prompts(self, model_benchmarks: list, near_benchmarks: list) -> list:
        """For each model of ``model_benchmarks``, the groups (of :attr:`links`) of each of the query's nearest
        indexed prompts (``near_benchmarks``) that lie in no benchmark linked to one of its own; None for a model
        linked to every prompt: all None without :attr:`links` or a neighbourhood, and for a model without benchmarks
        or with one the map does not know. A prompt of no benchmark, or of one the map does not know (indexed since
        it was fitted), is linked to every model: nothing says otherwise. The one rule of :meth:`linked_shares` and
        :meth:`unlinked_mix`, worked out once per set of groups (a few among thousands of models)."""
        if self.links is None or not near_benchmarks:
            return [None] * len(model_benchmarks)
        group = {b: g for g, names in enumerate(self.links) for b in names}
        near = [frozenset(group.get(b, -1) for b in (bs or ())) for bs in near_benchmarks]
        known = [gs for gs in near if gs and -1 not in gs]
        memo: dict[frozenset, list] = {}
        out = []
        for bs in model_benchmarks:
            own = frozenset(group.get(b, -1) for b in (bs or ()))
            if not own or -1 in own:
                out.append(None)
                continue
            if own not in memo:
                memo[own] = [gs for gs in known if not gs & own]
            out.append(memo[own])
        return out

    def region_term(self, coverage) -> np.ndarray:
        """The raw-score variance to add to a model's posterior variance at a query where it was observed on a share
        ``coverage`` (any shape, in [0, 1]) of the query's :data:`COVERAGE_PROMPTS` nearest indexed prompts:
        ``(level / scale)^2 (1 - c)^2 region_var`` (the map's weight of the level, on the raw score's scale: the
        interval's sd is :attr:`scale` times the raw one's). 0 without :attr:`region_var` or off the folded map."""
        c = np.clip(np.asarray(coverage, dtype=np.float64), 0.0, 1.0)
        if self.region_var is None or not self.folded:
            return np.zeros_like(c)
        return (float(self.level) / self.scale) ** 2 * (1.0 - c) ** 2 * float(self.region_var)

    def unlinked_term(self, linked) -> np.ndarray:
        """The raw-score variance to add to a model's posterior variance at a query whose
        :data:`COVERAGE_PROMPTS` nearest indexed prompts lie a share ``linked`` (any shape, in [0, 1]:
        :meth:`linked_shares`) in benchmarks linked to the model's own (:attr:`links`):
        ``(level / scale)^2 (1 - linked)^2 max(spread - region_var, 0)``. Where nothing links the query's benchmarks to
        the model's, the model's level there is known no better than any model's (the models' :attr:`spread`), not
        up to the region variance alone, which the benchmarks linked to each other measure (:meth:`region_term` adds
        that part). 0 without :attr:`links` or off the folded map."""
        b = np.clip(np.asarray(linked, dtype=np.float64), 0.0, 1.0)
        if self.links is None or not self.folded:
            return np.zeros_like(b)
        rest = max(float(self.spread) - float(self.region_var or 0.0), 0.0)
        return (float(self.level) / self.scale) ** 2 * (1.0 - b) ** 2 * rest

    def linked_shares(self, model_benchmarks: list, near_benchmarks: list) -> np.ndarray:
        """(k,) for each model of ``model_benchmarks`` (k lists: the benchmarks its vector was fitted on, the
        payload's ``benchmarks``) the share of the query's nearest indexed prompts (``near_benchmarks``: each one's
        benchmarks) that lie in a benchmark linked to one of its own (:attr:`links`). A prompt of a benchmark the map
        does not know (indexed since it was fitted) and a model without benchmarks count as linked: nothing says
        otherwise, and the interval stays as before. All 1 without :attr:`links` or a neighbourhood."""
        out = np.ones(len(model_benchmarks))
        for i, off in enumerate(self._unlinked_prompts(model_benchmarks, near_benchmarks)):
            if off is not None:
                out[i] = 1.0 - len(off) / len(near_benchmarks)
        return out

    def level_term(self, noise, n) -> np.ndarray:
        """The raw-score variance to add to the posterior variance of models of residual variance ``noise`` fitted on
        ``n`` prompts each, so that their level's part of it counts at the map's weight of the level: a model's
        score is its level (its mean signed outcome, the intercept at its prompts' mean: variance ``noise / n`` in
        the posterior) plus its deviation, and the folded map weighs the level by ``level`` where the posterior's sd
        is scaled by ``specific`` (:attr:`scale`): ``((level / scale)^2 - 1) noise / n``. 0 off the folded map."""
        noise = np.asarray(noise, dtype=np.float64)
        if not self.folded:
            return np.zeros_like(noise)
        return ((float(self.level) / self.scale) ** 2 - 1.0) * noise / np.maximum(np.asarray(n, dtype=np.float64), 1.0)

    def interval_lambdas(self, lam) -> np.ndarray:
        """The lambdas the posterior variance of an interval uses for models of lambda ``lam``: at most
        :attr:`lam_cap`."""
        lam = np.asarray(lam, dtype=np.float64)
        return lam if self.lam_cap is None else np.minimum(lam, float(self.lam_cap))

    def bend(self, z) -> np.ndarray:
        """The logit ``z`` of the map bent by :attr:`knots` (increasing; ``z`` itself without knots)."""
        z = np.asarray(z, dtype=np.float64)
        if self.knots is None:
            return z
        xs, L = (np.asarray(k, dtype=np.float64) for k in self.knots)
        return np.where(z < xs[0], L[0] + (z - xs[0]), np.where(z > xs[-1], L[-1] + (z - xs[-1]), np.interp(z, xs, L)))

    @property
    def folded(self) -> bool:
        """True for the level/deviation map: the query vector is folded (:meth:`fold`) and Qdrant's score is the
        logit of the probability up to the per-query ``offset`` and the map's :meth:`bend`."""
        return self.level is not None

    def probability(self, score, offset: float = 0.0) -> np.ndarray:
        """Calibrated probability of success of raw scores (any shape); for the level/deviation map, of the scores
        of a folded query vector (:meth:`fold`) with its ``offset``."""
        s = np.asarray(score, dtype=np.float64)
        z = self.bend(self.a + offset + s) if self.folded else (self.a + self.b * s)
        return 0.5 * (1.0 + np.tanh(0.5 * z))  # the logistic function, without overflow

    @property
    def coverage_aware(self) -> bool:
        """True when the map weighs the own deviation apart where a model has no evidence near the query
        (:attr:`uncovered` fitted, and different from ``specific``)."""
        return self.folded and self.uncovered is not None and float(self.uncovered) != float(self.specific)

    def fold(self, row: np.ndarray, u: np.ndarray | None, own: float | None = None) -> tuple[np.ndarray, float]:
        """(folded query vector, offset) of an index row ``row`` (dim,) of a space with levels
        (:func:`indexer.represent.has_levels`, whose rows end ``[.., 0, 0]`` and model vectors ``[.., l_i, u.mu_i]``)
        and the space's prior ``u`` (None: no prior): ``q' = specific * row`` with the last two coordinates
        ``level - specific`` and ``-(shared - specific)``, offset ``(shared - specific) u . row[:p]``, so that
        ``a + offset + q' . v_i`` is the map's logit for model i (the ranking by Qdrant's inner product is the
        ranking by probability). With a prior per answer format (``u`` (F, p), model vectors ``[.., w_i, l_i,
        u_i . mu_i]``, :data:`indexer.represent.LEVELS_FORMATS`) the F coordinates before those two are
        ``(shared - specific) u_f . row[:p]`` and the offset 0: ``w_i . (u_f . x)_f = u_i . x``. The plain map:
        ``(row, 0)``. ``own``: the own deviation's weight to fold with instead of ``specific`` (the map where a model
        has no evidence near the query: :attr:`uncovered`)."""
        q, offset = self.fold_rows(np.asarray(row, dtype=np.float64)[None, :], u, own)
        return q[0], float(offset[0])

    def fold_rows(self, rows: np.ndarray, u: np.ndarray | None, own: float | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`fold` of the index rows ``rows`` (q, dim) at once: (q, dim) folded vectors and (q,) offsets."""
        rows = np.atleast_2d(np.asarray(rows, dtype=np.float64))
        if not self.folded:
            return rows, np.zeros(rows.shape[0])
        g, lev = self.ranking_coefficients
        if own is not None:
            g = max(float(own), TIE_BREAK)
        h = float(self.shared) if u is not None else g
        q = g * rows
        q[:, -2] = lev - g
        q[:, -1] = -(h - g)
        offset = np.zeros(rows.shape[0])
        if u is not None:
            u = np.asarray(u, np.float64)
            ux = rows[:, :u.shape[-1]] @ u.T  # (q,) or (q, F): u . x, or u_f . x per format
            if u.ndim == 2:  # the model's own prior part out of its deviation, the query format's prior in the offset
                F = u.shape[0]
                q[:, -2 - F:-2] = -g * ux
                m = rows[:, -2 - 2 * F:-2 - F]  # the query's format shares (the F coordinates before these)
                offset = h * (m * ux).sum(axis=1)
            else:
                offset = (h - g) * ux
        return q, offset

    @property
    def informative(self) -> bool:
        """False when the held-out cells it was fitted on showed no rise of success with the score (every slope fitted
        0, e.g. on a tiny index): each probability is then the cells' base rate and an interval would have no width,
        so none is given (:meth:`Predictor.interval`)."""
        slopes = [self.level, self.specific, self.shared] if self.folded else [self.b]
        return any(x is not None and float(x) > (TIE_BREAK if self.folded else 0.0) for x in slopes)

    @property
    def ranking_coefficients(self) -> tuple[float, float]:
        """(specific, level) as the folded query uses them: at least :data:`TIE_BREAK`, so that where the held-out
        cells carry no information (a coefficient fitted 0, e.g. on a tiny index) models still rank by their level and
        raw score instead of all tying (the probabilities move by at most that much per unit of score)."""
        return max(float(self.specific), TIE_BREAK), max(float(self.level), TIE_BREAK)

    @property
    def scale(self) -> float:
        """How much a unit of the raw score moves the score the map takes: 1, or ``specific`` when folded (the
        posterior sd of a folded score is ``specific`` times the raw score's)."""
        return self.ranking_coefficients[0] if self.folded else 1.0

    def interval(self, score, variance, z: float = Z_INTERVAL, offset: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(low, high): the posterior interval ``score -/+ z sd`` mapped through the calibration (``variance``: the
        raw score's; a folded score's sd is :attr:`scale` times it)."""
        sd = self.scale * np.sqrt(np.maximum(np.asarray(variance, dtype=np.float64), 0.0))
        s = np.asarray(score, dtype=np.float64)
        return self.probability(s - z * sd, offset), self.probability(s + z * sd, offset)

    def as_dict(self) -> dict:
        out = {"a": float(self.a), "b": float(self.b), "n_cells": int(self.n_cells), "n_models": int(self.n_models),
               "spread": float(self.spread)}
        if self.folded:
            out.update(level=float(self.level), specific=float(self.specific), shared=float(self.shared))
            if self.uncovered is not None:
                out["uncovered"] = float(self.uncovered)
            if self.knots is not None:
                out["knots"] = {"z": [float(x) for x in self.knots[0]], "logit": [float(x) for x in self.knots[1]]}
        if self.lam_cap is not None:
            out["lam_cap"] = float(self.lam_cap)
        if self.region_var is not None:
            out["region_var"] = float(self.region_var)
        if self.links is not None:
            out["links"] = [list(g) for g in self.links]
        if self.centres is not None:
            out["centres"] = [list(map(float, c)) for c in self.centres]
        return out


def evidence_lr(z: np.ndarray, outcomes: np.ndarray) -> float:
    """The likelihood-ratio statistic of logits ``z`` against the cells' base rate for graded ``outcomes``: twice the
    gain in log-likelihood (``s`` of a success, ``1 - s`` of a failure)."""
    z, o = np.asarray(z, dtype=np.float64).ravel(), np.asarray(outcomes, dtype=np.float64).ravel()
    rate = float(np.clip(o.mean(), 1e-12, 1 - 1e-12))
    log_p, log_q = -np.logaddexp(0.0, -z), -np.logaddexp(0.0, z)  # log p, log (1 - p) without overflow
    fit = float((o * log_p + (1.0 - o) * log_q).sum())
    base = float(o.sum() * np.log(rate) + (1.0 - o).sum() * np.log(1.0 - rate))
    return 2.0 * (fit - base)


def _significant(z: np.ndarray, outcomes: np.ndarray, slopes: int) -> bool:
    """Whether the map with logits ``z`` and ``slopes`` fitted slopes beats the base rate at :data:`EVIDENCE_ALPHA`."""
    from scipy.stats import chi2

    return slopes > 0 and evidence_lr(z, outcomes) > float(chi2.isf(EVIDENCE_ALPHA, slopes))


def base_rate_logit(outcomes: np.ndarray) -> float:
    """The intercept of the base-rate map: the logit of the held-out cells' mean outcome (clipped to [1e-6, 1 - 1e-6]
    so that all-success or all-failure cells stay finite). The one fallback of :func:`fit_calibration` and
    :func:`fit_level_calibration` when the held-out scores carry no calibrated information (every slope 0)."""
    rate = float(np.clip(np.mean(outcomes), 1e-6, 1 - 1e-6))
    return float(np.log(rate / (1.0 - rate)))


def fit_calibration(scores: np.ndarray, outcomes: np.ndarray, spread: float = 0.0) -> Calibration:
    """A :class:`Calibration` fitted on held-out cells: logistic regression of the outcome on the score, unregularised,
    by Newton's method on its two parameters (the map scikit-learn's ``LogisticRegression(C=1e6)`` finds, in a
    fraction of its time; a test checks they agree); a graded outcome ``s`` counts as ``s`` of a success and
    ``1 - s`` of a failure. Too few cells, or only one class: the identity-like map ``p = (1 + tanh(score)) / 2``.
    Cells that separate the classes (no finite optimum): scikit-learn's nearly unregularised fit. The map is kept
    increasing (so Qdrant's score order stays the probability order): a fitted slope <= 0 means the held-out scores
    say nothing about success, and every score maps to the cells' base rate (slope 0); so does a slope the cells do not
    tell from 0 (:data:`EVIDENCE_ALPHA`)."""
    x = np.asarray(scores, dtype=np.float64).ravel()
    s = np.asarray(outcomes, dtype=np.float64).ravel()
    keep = np.isfinite(x) & np.isfinite(s)
    x, s = x[keep], s[keep]
    if x.size < 20 or s.sum() <= 0 or (1 - s).sum() <= 0:
        return Calibration(0.0, 2.0, int(x.size), spread=float(spread))
    a, b, ok = 0.0, 0.0, False
    for _ in range(100):
        p = 0.5 * (1.0 + np.tanh(0.5 * (a + b * x)))
        r, w = s - p, p * (1.0 - p)  # the log-likelihood's gradient is (sum r, sum r x)
        wx = w * x
        H = np.array([[w.sum(), wx.sum()], [wx.sum(), (wx * x).sum()]])
        try:
            step = np.linalg.solve(H, np.array([r.sum(), (r * x).sum()]))
        except np.linalg.LinAlgError:
            break
        if not np.isfinite(step).all() or np.abs(step).max() > 1e6:
            break
        a, b = a + step[0], b + step[1]
        if np.abs(step).max() < 1e-10:
            ok = True
            break
    if not ok:
        from sklearn.linear_model import LogisticRegression

        X = np.concatenate([x, x])[:, None]
        y = np.concatenate([np.ones(x.size), np.zeros(x.size)])
        w = np.concatenate([s, 1.0 - s])
        lr = LogisticRegression(C=1e6, max_iter=1000).fit(X, y, sample_weight=w)
        a, b = float(lr.intercept_[0]), float(lr.coef_[0, 0])
    if not b > 0 or not _significant(a + b * x, s, 1):  # held-out scores that do not rise with success (or not
        # distinguishably from chance) carry no calibrated information: the base rate
        a, b = base_rate_logit(s), 0.0
    return Calibration(float(a), float(b), int(x.size), spread=float(spread))


def _logistic(F: np.ndarray, s: np.ndarray) -> np.ndarray:
    """(k + 1,) intercept and coefficients of the unregularised weighted logistic regression of the graded outcomes
    ``s`` on the features ``F`` (n, k) (``s`` of a success and ``1 - s`` of a failure), by Newton's method;
    scikit-learn's nearly unregularised fit where it does not converge (separable cells)."""
    X = np.hstack([np.ones((F.shape[0], 1)), F])
    beta = np.zeros(X.shape[1])
    for _ in range(100):
        p = 0.5 * (1.0 + np.tanh(0.5 * (X @ beta)))
        w = p * (1.0 - p)
        H = (X * w[:, None]).T @ X
        try:
            step = np.linalg.solve(H, X.T @ (s - p))
        except np.linalg.LinAlgError:
            break
        if not np.isfinite(step).all() or np.abs(step).max() > 1e6:
            break
        beta = beta + step
        if np.abs(step).max() < 1e-10:
            return beta
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=1e6, max_iter=1000).fit(np.concatenate([F, F]),
                                                       np.r_[np.ones(len(s)), np.zeros(len(s))],
                                                       sample_weight=np.r_[s, 1.0 - s])
    return np.r_[lr.intercept_[0], lr.coef_[0]]


def fit_level_calibration(level: np.ndarray, deviation: np.ndarray, shared: np.ndarray | None, outcomes: np.ndarray,
                          spread: float = 0.0, coverage: np.ndarray | None = None) -> Calibration:
    """The level/deviation map (:attr:`Calibration.level`) fitted on held-out cells (:func:`heldout_cells`): the
    logistic regression of the outcome on the model's level ``l``, the model-specific part of its deviation
    ``deviation - shared`` and the prior's part ``shared`` (None or all 0: a space without a prior, one factor for
    the whole deviation). A coefficient that comes out negative carries no held-out information and is fixed at 0
    (the others refitted); a map the cells do not tell from their base rate (:data:`EVIDENCE_ALPHA`: on few cells,
    slopes fitted to chance) is the base rate, every slope 0. Too few cells or one class: the map of :func:`fit_calibration` (of the raw score) in this
    form (every coefficient its slope).

    ``coverage`` (per cell, in [0, 1]: the share of the held-out prompt's :data:`COVERAGE_PROMPTS` nearest training
    prompts the model was observed on, :func:`coverage_shares`): the own deviation gets two weights, ``c`` times one
    (``specific``) and ``1 - c`` times the other (``uncovered``), when the uncovered cells weigh at least
    :data:`COVERAGE_MIN_CELLS` cells and :data:`COVERAGE_MIN_SHARE` of all; an uncovered weight above the covered
    one (evidence far away worth more than near) is not believed: one weight then, as without ``coverage``."""
    l, dv, o = (np.asarray(x, dtype=np.float64).ravel() for x in (level, deviation, outcomes))
    u = np.zeros_like(dv) if shared is None else np.asarray(shared, dtype=np.float64).ravel()
    c = np.ones_like(dv) if coverage is None else np.asarray(coverage, dtype=np.float64).ravel()
    keep = np.isfinite(l) & np.isfinite(dv) & np.isfinite(u) & np.isfinite(o) & np.isfinite(c)
    l, dv, u, o, c = l[keep], dv[keep], u[keep], o[keep], c[keep]
    if l.size < 20 or o.sum() <= 0 or (1 - o).sum() <= 0:  # the plain map of the raw score, in the folded form
        plain = fit_calibration(l + dv, o, spread)
        return Calibration(plain.a, plain.b, plain.n_cells, spread=plain.spread, level=plain.b, specific=plain.b,
                           shared=plain.b)
    has_prior = bool(np.any(u != 0.0))
    own = dv - u if has_prior else dv
    gap = float((1.0 - c).sum())
    split = coverage is not None and gap >= COVERAGE_MIN_CELLS and gap >= COVERAGE_MIN_SHARE * l.size
    cols = [l, c * own, (1.0 - c) * own] if split else [l, own]
    F = np.column_stack(cols + ([u] if has_prior else []))
    use = np.ones(F.shape[1], dtype=bool)
    coef = np.zeros(F.shape[1])
    for _ in range(F.shape[1]):
        beta = _logistic(F[:, use], o)
        coef[:] = 0.0
        coef[use] = beta[1:]
        a = float(beta[0])
        if (coef[use] >= 0).all():
            break
        use &= coef > 0
        if not use.any():
            break
    if use.any() and not _significant(a + F[:, use] @ coef[use], o, int(use.sum())):
        use[:] = False
    if not use.any():
        a, coef = base_rate_logit(o), np.zeros(F.shape[1])
    lev, spec = float(coef[0]), float(coef[1])
    unc = float(coef[2]) if split else None
    if unc is not None and unc > spec:  # the far cells' deviation worth more than the near ones': not believed
        return fit_level_calibration(level, deviation, shared, outcomes, spread)
    sh = float(coef[-1]) if has_prior else spec
    cal = Calibration(a, spec, int(l.size), spread=float(spread), level=lev, specific=spec, shared=sh, uncovered=unc)
    # each cell's logit as the index gives it: the folded queries' coefficients (:meth:`Calibration.fold_rows`, the
    # uncovered one's weight floored as the covered one's), coverage-weighted
    g1, lev1 = cal.ranking_coefficients
    g0 = max(unc, TIE_BREAK) if unc is not None else g1
    z = a + lev1 * l + (c * g1 + (1.0 - c) * g0) * own + (sh * u if has_prior else 0.0)
    return dataclasses.replace(cal, knots=fit_bend(z, o))


def fit_bend(z: np.ndarray, outcomes: np.ndarray, knots: int = BEND_KNOTS, tail: float = BEND_TAIL,
             min_cells: int | None = None) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """The knots ``(z, logit)`` of :attr:`Calibration.knots` from held-out cells' logits ``z`` and (graded) outcomes:
    the outcomes' isotonic regression on ``z`` (scikit-learn's ``IsotonicRegression``, values kept in [0.001,
    0.999]); the cells between the ``tail`` and ``1 - tail`` quantiles of ``z`` cut into bins of equal counts (one
    per :data:`BEND_CELLS_PER_KNOT`, 2 to ``knots``), each bin's knot at its mean ``z`` with the logit of its mean
    fitted value, each knot at least :data:`BEND_MIN_SLOPE` per unit of ``z`` above the one before. None (no bend)
    with fewer than ``min_cells`` cells (default :data:`BEND_MIN_CELLS`) or one class."""
    min_cells = BEND_MIN_CELLS if min_cells is None else min_cells
    z, o = np.asarray(z, dtype=np.float64).ravel(), np.asarray(outcomes, dtype=np.float64).ravel()
    keep = np.isfinite(z) & np.isfinite(o)
    z, o = z[keep], o[keep]
    if z.size < min_cells or o.sum() <= 0 or (1.0 - o).sum() <= 0:
        return None
    from sklearn.isotonic import IsotonicRegression

    order = np.argsort(z, kind="stable")
    z, o = z[order], o[order]
    fit = IsotonicRegression(y_min=1e-3, y_max=1.0 - 1e-3, out_of_bounds="clip").fit_transform(z, o)
    lo, hi = int(tail * z.size), z.size - int(tail * z.size)
    bins = np.array_split(np.arange(lo, hi), int(np.clip((hi - lo) // BEND_CELLS_PER_KNOT, 2, knots)))
    xs = np.array([z[b].mean() for b in bins])
    p = np.array([fit[b].mean() for b in bins])
    if (np.diff(xs) <= 0).any():  # a bin of one repeated logit: no bend where the logits do not spread
        return None
    L = np.log(p / (1.0 - p))
    for k in range(1, L.size):
        L[k] = max(L[k], L[k - 1] + BEND_MIN_SLOPE * (xs[k] - xs[k - 1]))
    return tuple(map(float, xs)), tuple(map(float, L))


def coverage_shares(Zq: np.ndarray, Zs: np.ndarray, observed: np.ndarray, k: int = COVERAGE_PROMPTS) -> np.ndarray:
    """(M, q): for each of M models and q queries, the share of the query's ``k`` nearest source prompts it was
    observed on. ``Zq`` (q, e) and ``Zs`` (N, e): unit question embeddings of the queries and of the source prompts
    (:func:`indexer.represent.question_rows`; nearest by cosine), ``observed`` (M, N) bool."""
    from .represent import nearest

    observed = np.asarray(observed, dtype=bool)
    k = min(int(k), np.shape(Zs)[0])
    out = np.ones((observed.shape[0], np.shape(Zq)[0]))
    if k < 1:
        return out
    # float32: only the order of the cosines counts
    nn = nearest(np.asarray(Zq, dtype=np.float32), np.asarray(Zs, dtype=np.float32), k)
    for lo in range(0, nn.shape[0], 512):  # (M, 512, k) at a time
        out[:, lo:lo + 512] = observed[:, nn[lo:lo + 512]].mean(axis=2)
    return out


def heldout_cells(make_solver, X: np.ndarray, S: np.ndarray, space, folds: int = CALIBRATION_FOLDS, seed: int = 0,
                  size: int = CALIBRATION_PROMPTS, models: int = CALIBRATION_MODELS, extra=None,
                  with_coverage: bool = False) -> tuple[np.ndarray, ...]:
    """Cross-fitted held-out source cells for :func:`fit_level_calibration`: the prompts (rows ``X`` (N, width) with
    outcomes ``S`` (M, N)) are cut at random (``seed``) into ``folds`` parts; on each part (a seeded sample of at most
    ``size / folds`` of its prompts) every model is scored by a fit on the other parts (``make_solver()``: a new
    solver of the space; its prior, when it has one, re-estimated there), in the index form of ``space``; with more
    than ``models`` models, a seeded sample of that many (the prior, a mean over models, barely changes; the
    refits' cost is per model there); the few training prompts that nearly complete models lack
    (:data:`DENSE_GAPS`) are left out of the refits, so that those models share one coverage pattern. Unlike
    the closed-form leave-one-out cells the whole prompt is held out, so the prior (the models' mean normal, fitted
    on every model's outcomes of the prompt) does not know the held-out prompt's difficulty. Returns (level,
    deviation, prior's part of the deviation, outcome in [0, 1]) per observed held-out cell. ``extra(S_train, train,
    held)`` (experiments, e.g. ``benchmarks/bench_local.py``): one more feature per cell of a refit, from its outcomes
    ``S_train`` (refitted models x ``train`` prompts) as an array (refitted models x ``held`` prompts), returned last.
    ``with_coverage``: also (fifth) each cell's coverage, the share of the held-out prompt's
    :data:`COVERAGE_PROMPTS` nearest training prompts (by question) the model was observed on in the refit
    (:func:`coverage_shares`; the ``coverage`` of :func:`fit_level_calibration`); 1 for every cell of a refit with
    fewer than :data:`COVERAGE_MIN_SHARE` of its model x prompt entries missing (a dense index, where the map keeps
    one weight anyway; the search costs as much as a fifth of a refit)."""
    from . import represent

    X = np.asarray(X)
    S = np.asarray(S)
    N = X.shape[0]
    rng = np.random.default_rng(seed)
    if S.shape[0] > models:
        S = S[np.sort(rng.choice(S.shape[0], int(models), replace=False))]
    part = rng.permutation(N) % max(int(folds), 2)  # one fold: a random half held out, scored by the other
    n_out = 4 + int(bool(with_coverage))
    out: list[list[np.ndarray]] = [[] for _ in range(n_out + (extra is not None))]
    Z = None  # the question rows, made when a refit is sparse enough to need them (not on a dense index)
    for k in range(max(int(folds), 1)):
        train, held = np.flatnonzero(part != k), np.flatnonzero(part == k)
        if held.size > size // max(int(folds), 1):
            held = np.sort(rng.choice(held, size // max(int(folds), 1), replace=False))
        S_tr = S[:, train]
        keep = (~np.isnan(S_tr)).any(axis=1)
        if not keep.any() or not held.size:
            continue
        miss = np.isnan(S_tr[keep])
        gaps = miss[miss.mean(axis=1) <= DENSE_GAPS].any(axis=0)  # training prompts some nearly complete model lacks
        if 0 < gaps.sum() <= DENSE_GAPS * train.size:  # without them, those models share one pattern
            train, S_tr = train[~gaps], S_tr[:, ~gaps]
            keep = (~np.isnan(S_tr)).any(axis=1)  # a sparse model seen only on those prompts sits this refit out
            if not keep.any():
                continue
        formats = represent.prompt_formats(X[train], space)  # None: one prior (no per-format solve)
        solver = make_solver().fit(X[train], S_tr[keep], **({} if formats is None else {"formats": formats}))
        V = represent.index_vectors(solver, X[train], space)
        rows_ = represent.add_intercept(np.asarray(X[held], dtype=np.float64), space)
        level, mu_u = represent.levels(solver)
        lw = represent.level_width(space)
        P = V @ rows_.T if not lw else V[:, :-lw] @ rows_[:, :-lw].T
        U = np.zeros_like(P)
        if solver.prior_ is not None:  # U_i = u_i . (x - mu_i), u_i = sum_f w_if u_f (one prior: w_i = 1)
            u = np.atleast_2d(np.asarray(solver.prior_, dtype=np.float64))
            ux = rows_[:, :u.shape[1]] @ u.T  # (q, F) u_f . x
            own_prior = represent.format_weights(solver) @ ux.T - mu_u[:, None]
            # the shared part: the prior of the query's format, u_f(q) . x - u_i . mu_i (one prior: u_i's own)
            U = ((represent.query_format_shares(rows_, space) * ux).sum(axis=1))[None, :] - mu_u[:, None]
            P = P - own_prior + U  # so that deviation - shared is the model's own part s - l - u_i . (x - mu_i)
        Sh = S[keep][:, held]
        obs = ~np.isnan(Sh)
        L = np.broadcast_to(level[:, None], Sh.shape)
        out[0].append(L[obs])
        out[1].append((P - L)[obs])
        out[2].append(U[obs])
        out[3].append(np.asarray(Sh[obs], dtype=np.float64))
        if with_coverage:  # a nearly dense refit has (almost) no uncovered cell: coverage 1 without the search
            seen = ~np.isnan(S_tr[keep])
            if 1.0 - seen.mean() >= COVERAGE_MIN_SHARE:
                Z = represent.question_rows(X, space) if Z is None else Z
                cov = coverage_shares(Z[held], Z[train], seen)
            else:
                cov = np.ones(Sh.shape)
            out[4].append(cov[obs])
        if extra is not None:
            out[n_out].append(np.asarray(extra(S_tr[keep], train, held), dtype=np.float64)[obs])
    cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0)  # noqa: E731
    return tuple(cat(x) for x in out)  # type: ignore[return-value]


def level_spread(S: np.ndarray) -> float:
    """The variance across models (rows of ``S`` (M, N), NaN = not observed) of their mean signed outcome
    ``2 s - 1``: :attr:`Calibration.spread`. 0 with fewer than two models."""
    with np.errstate(invalid="ignore"):
        levels = 2.0 * np.nanmean(np.asarray(S, dtype=np.float64), axis=1) - 1.0
    levels = levels[np.isfinite(levels)]
    return float(levels.var(ddof=1)) if levels.size > 1 else 0.0


def region_variance(S: np.ndarray, groups: np.ndarray, min_cells: int = REGION_MIN_CELLS,
                    splits: int = REGION_SPLITS) -> float:
    """:attr:`Calibration.region_var` of outcomes ``S`` (M, N; NaN = not observed) on prompts of the benchmarks
    ``groups`` (N,): how far a model's level (mean signed outcome ``2 s - 1``) on one benchmark strays from its overall
    level beyond the benchmark's mean offset (the model x benchmark interaction of a two-way additive fit), over the
    (model, benchmark) pairs with at least ``min_cells`` outcomes, without the outcomes' own noise. Split halves: each
    benchmark's prompts are cut in two at random (seeded), the interaction is computed on each half alone (levels and
    offsets too), and its variance is the mean product of the two halves' residuals, which share the models' true
    interaction but not a single outcome, so no noise model is needed (a binomial one overstates the noise of a level
    where prompts differ in difficulty: on the sample's 30 prompts per MMLU-Pro category it took all of it). The mean
    over ``splits`` cuts; 0 at least, and 0 without a pair. Measured on the coverage split of mmlu_pro, the 90%
    intervals of models the fold hid a category from held their true rate 83% of the time with the targets' noise
    counted, 91% with this variance added where they have no evidence near the query
    (``benchmarks/bench_intervals.py``, docs/RESULTS.md "Intervals")."""
    S = np.asarray(S, dtype=np.float64)
    names, code = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    obs = ~np.isnan(S)
    y = np.where(obs, 2.0 * S - 1.0, 0.0)  # signed outcomes, 0 where not observed
    seen = obs.astype(np.float64)
    G, half_cells = len(names), max(int(min_cells) // 2, 1)
    out = []
    for seed in range(int(splits)):
        rng = np.random.default_rng(seed)
        half = np.zeros(code.size, dtype=np.int64)
        for g in range(G):
            c = np.flatnonzero(code == g)
            half[rng.permutation(c)[c.size // 2:]] = 1
        H = np.zeros((code.size, 2 * G))  # column 2 g + h: benchmark g's prompts in half h
        H[np.arange(code.size), 2 * code + half] = 1.0
        sums, counts = y @ H, seen @ H  # (M, 2 G): each model's sum and count of outcomes per benchmark and half
        dA, dB = (_interaction(sums[:, h::2], counts[:, h::2], half_cells) for h in (0, 1))
        both = np.isfinite(dA) & np.isfinite(dB)
        if both.any():
            out.append(float(np.mean(dA[both] * dB[both])))
    return max(float(np.mean(out)), 0.0) if out else 0.0


def benchmark_links(S: np.ndarray, groups: np.ndarray) -> tuple[tuple[str, ...], ...] | None:
    """:attr:`Calibration.links` of outcomes ``S`` (M, N; NaN = not observed) on prompts of the benchmarks ``groups``
    (N,): :func:`links_of` the benchmarks each model was observed on. On the sample + evalarena_code +
    metabench_openllm, where each of metabench's 32,676 anonymous models was observed on one benchmark, the MMLU-Pro
    categories and code benchmarks form one group (ten models were measured on both) and each metabench benchmark
    one of its own."""
    names, code = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    if names.size < 2:
        return None
    observed = ~np.isnan(np.asarray(S))
    # (M, G): each model's benchmarks, a benchmark's columns at a time (no float copy of S, as a product with a
    # one-hot matrix needs: 470 MB and 1.7 s against 0.6 s on 32,823 x 3,637)
    A = np.stack([observed[:, code == g].any(axis=1) for g in range(names.size)], axis=1)
    return links_of(names[row].tolist() for row in A)


def link_centres(links, benchmark_lists, vectors: np.ndarray) -> tuple[tuple[float, ...], ...] | None:
    """:attr:`Calibration.centres` of the groups ``links`` (:func:`links_of`): for each group, the mean of the index
    ``vectors`` (n, dim) of the models whose benchmarks (``benchmark_lists``, n lists) lie in it (a model's all lie in
    one group: the groups are linked through the models; :func:`link_members`). A model without benchmarks or with
    one the groups do not name counts in none. None without links; a group with no such model (not seen: every group
    has its models) is the mean of them all."""
    if links is None:
        return None
    of = link_members(links, benchmark_lists)
    V = np.asarray(vectors)

    def mean(rows) -> np.ndarray:  # in float64, a group's rows at a time (not a float64 copy of every vector)
        return rows.astype(np.float64).mean(axis=0) if rows.shape[0] else np.zeros(rows.shape[1])

    return tuple(tuple(float(x) for x in (mean(V[of == g]) if (of == g).any() else mean(V)))
                 for g in range(len(links)))


def link_members(links, benchmark_lists) -> np.ndarray:
    """(n,) int: the group of ``links`` (:attr:`Calibration.links`, not None) each of ``benchmark_lists`` (n lists of
    benchmarks) lies in, -1 for a list without benchmarks, with one the groups do not name, or with benchmarks of
    several groups: which models :func:`link_centres` averages in each group."""
    group = {b: g for g, names in enumerate(links) for b in names}
    out = np.full(len(benchmark_lists), -1, dtype=np.int64)
    for i, bs in enumerate(benchmark_lists):
        gs = {group.get(str(b), -1) for b in (bs or ())}
        if len(gs) == 1 and -1 not in gs:
            out[i] = gs.pop()
    return out


def links_of(benchmark_lists) -> tuple[tuple[str, ...], ...] | None:
    """The groups of benchmarks that models link, from the benchmarks each model was observed on (an iterable of
    lists; the payloads' ``benchmarks``): the connected components of the graph whose nodes are the benchmarks and
    whose edges are the models observed on two of them, each sorted, in the order of their first name; None with one
    group (or none). What a pass stores with the map (:attr:`Calibration.links`), from the outcomes when it fits the
    map (:func:`benchmark_links`) and from the stored vectors when it holds it."""
    parent: dict[str, str] = {}

    def root(b: str) -> str:
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        return b

    for names in benchmark_lists:
        names = [str(b) for b in names]
        for b in names:
            parent.setdefault(b, b)
        for b in names[1:]:
            ra, rb = root(names[0]), root(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = {}
    for b in parent:
        groups.setdefault(root(b), []).append(b)
    if len(groups) < 2:
        return None
    return tuple(sorted(tuple(sorted(g)) for g in groups.values()))


def _interaction(sums: np.ndarray, counts: np.ndarray, min_cells: int) -> np.ndarray:
    """(M, G): the residuals of the two-way additive fit of the models' per-benchmark levels, from the sums and counts
    (M, G) of their signed outcomes per benchmark: level on the benchmark, less the model's overall level (over all
    its outcomes), less the benchmark's mean of that; NaN for a pair with fewer than ``min_cells`` outcomes, and for a
    model with outcomes on that benchmark alone."""
    n_i = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        L = np.where(counts >= min_cells, sums / counts, np.nan)
        d = L - np.where(n_i > 0, sums.sum(axis=1) / n_i, np.nan)[:, None]
    # a model all of whose outcomes are on one benchmark has its level there equal to its overall level: a residual
    # of 0 whatever its interaction, no evidence of it (before, such models counted as pairs without interaction: in a
    # home of the sample and evalarena_code, adding metabench_openllm's 32,676 models of one benchmark each took the
    # variance from 0.0033 to 0.00007, and their intervals far from their evidence to a width of under 1 point)
    d[counts >= n_i[:, None]] = np.nan
    known = np.isfinite(d)
    bench = np.where(known, d, 0.0).sum(axis=0) / np.maximum(known.sum(axis=0), 1)  # each benchmark's mean offset
    return d - bench[None, :]


def lambda_cap(lam) -> float | None:
    """:attr:`Calibration.lam_cap` of models with the lambdas ``lam``: their median (finite, positive ones; None
    without any). Measured on the coverage split of evalarena_code (2 seeds), the 90% intervals of the models whose
    lambda sat at the grid's edge held their true rate 45% (covered) and 36% (uncovered) of the time, at a quarter of
    the others' width for errors as large; with the cap, 93% and 100% (``benchmarks/bench_intervals.py``,
    docs/RESULTS.md "Intervals")."""
    lam = np.asarray(lam, dtype=np.float64).ravel()
    lam = lam[np.isfinite(lam) & (lam > 0)]
    return float(np.median(lam)) if lam.size else None


def noise_floor(n) -> np.ndarray:
    """The least residual variance an interval counts for a model of ``n`` outcomes (any shape): the variance of a
    signed outcome ``2 s - 1`` at the rate ``(n + 1/2) / (n + 1)``, the Jeffreys estimate after n successes in n
    (or its mirror after n failures), ``2 (n + 1/2) / (n + 1)^2``, about ``2 / n``. The ridge fit's ``s_i^2 = RSS /
    (n - df)`` is 0, or nearly, for a model whose outcomes are all one value (its intercept fits them) or that GCV
    let interpolate them (lambda at the grid's low edge with fewer prompts than dimensions): n binary outcomes
    cannot show a model's outcomes to be noiseless, and with that ``s_i^2`` every term of its posterior variance
    is 0 and its interval a single point (the sample + evalarena_code + metabench_openllm home: 335 models measured
    at 0% or 100%, ``s_i^2`` below 1e-5, intervals "89%-89%"). The floor is about half the variance of n outcomes
    with one miss among them (``4 (n - 1) / n^2``), so it binds only where a fit claims less noise than that (on that
    home 527 models: those 335 and 192 whose fit interpolates outcomes such as 98 of 100); fits, scores and
    probabilities do not use it (docs/RESULTS.md, "Intervals")."""
    n = np.maximum(np.asarray(n, dtype=np.float64), 1.0)
    return 2.0 * (n + 0.5) / (n + 1.0) ** 2


def interval_noise(noise, n) -> np.ndarray:
    """The residual variances an interval uses for models of residual variance ``noise`` with ``n`` outcomes each:
    at least :func:`noise_floor` (NaN stays NaN)."""
    noise = np.asarray(noise, dtype=np.float64)
    return np.where(np.isnan(noise), noise, np.maximum(noise, noise_floor(n)))


def calibration_prompts(n: int, seed: int = 0, size: int = CALIBRATION_PROMPTS) -> np.ndarray:
    """A seeded sample of at most ``size`` of ``n`` prompt indices (sorted) for :func:`loo_cells`."""
    if n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False))


def lcb_candidates_exact(scores: np.ndarray, lower: np.ndarray, k: int, next_score: float | None) -> bool:
    """True when ranking candidates by a lower bound ``lower`` (<= ``scores``) is exact for the top ``k``: every
    model outside the candidate set has a score <= ``next_score`` (the best score not fetched; None: all
    fetched), hence a lower bound <= it, so the top k are settled when the k-th best ``lower`` is >= it."""
    if next_score is None or len(scores) == 0:
        return True
    kth = np.sort(np.asarray(lower))[::-1][min(k, len(lower)) - 1]
    return bool(kth >= next_score)


class Predictor:
    """Probabilities and intervals of a space's models for one query (what :func:`indexer.find_models`
    shows with every result). ``calibration``: the space's map (None: never fitted, e.g. an index not re-indexed
    since; then ``(1 + score) / 2``, clipped, stands in: the score estimates ``2 p - 1``, and ``calibrated`` is
    False). ``load_patterns(keys)``: the stored :class:`PatternPosterior` of the given pattern keys (cached here)."""

    def __init__(self, space, calibration: Calibration | None, load_patterns, prior: np.ndarray | None = None):
        self.space = space
        self.calibration = calibration
        self._load = load_patterns
        self._patterns: dict[str, PatternPosterior] = {}
        from . import represent

        #: the space's prior, (p,) or one row per answer format (F, p) (:func:`indexer.represent.prior_matrix`)
        self.prior = None if prior is None else represent.prior_matrix(prior, space)
        #: the per-query constant of a folded query (:meth:`fold`), added to its scores before the map
        self.offset = 0.0
        #: the benchmarks of each of the query's nearest indexed prompts (the search's neighbourhood, set by it; None:
        #: not known), for the variance's term where nothing links them to a model's (:meth:`Calibration.unlinked_term`)
        self.near_benchmarks: list | None = None

    @property
    def calibrated(self) -> bool:
        return self.calibration is not None

    @property
    def signal(self) -> bool:
        """Whether the probability depends on the score (:attr:`Calibration.informative`; True without a
        calibration, whose probability is the clipped score)."""
        return self.calibration is None or self.calibration.informative

    @property
    def folded(self) -> bool:
        """True when the query vector is folded with the level/deviation map (:meth:`Calibration.fold`)."""
        from . import represent

        return self.calibration is not None and self.calibration.folded and represent.has_levels(self.space)

    def fold(self, row: np.ndarray) -> np.ndarray:
        """The vector to search with for the index row ``row`` of a query: folded by the level/deviation map (its
        inner products then rank as the probabilities do; the per-query offset is kept here for
        :meth:`probability`), or ``row`` itself. Variances are still those of the raw score at ``row``."""
        if not self.folded:
            self.offset = 0.0
            return np.asarray(row, dtype=np.float32)
        q, self.offset = self.calibration.fold(row, self.prior)
        return q.astype(np.float32)

    @property
    def coverage_aware(self) -> bool:
        """True when the folded map weighs a model's own deviation apart where it has no evidence near the query
        (:attr:`Calibration.coverage_aware`): the search then re-ranks candidates of two folded queries
        (:func:`indexer.query.coverage_ranked`)."""
        return self.folded and self.calibration.coverage_aware

    @property
    def region_aware(self) -> bool:
        """True when a model's variance depends on its coverage share of the query (the map's
        :attr:`~Calibration.region_var` is positive): the search then gives :meth:`variance` every hit's share."""
        return self.folded and bool(self.calibration.region_var)

    @property
    def link_aware(self) -> bool:
        """True when a model's variance depends on whether its benchmarks are linked to the query's (the map's
        :attr:`~Calibration.links` split the benchmarks into groups): the search then sets :attr:`near_benchmarks`."""
        return self.folded and self.calibration.links is not None

    @property
    def centring(self) -> bool:
        """True when the map carries its groups' average models (:attr:`~Calibration.centres`): a model not linked
        to a query's benchmarks scores the average model's of the query's group on that share
        (:meth:`Calibration.unlinked_mix`)."""
        return self.link_aware and self.calibration.centres is not None

    @property
    def centred(self) -> bool:
        """:attr:`centring` at a query whose neighbourhood is known (:attr:`near_benchmarks` set): the search then
        re-ranks candidates (:func:`indexer.query.coverage_ranked`)."""
        return self.centring and bool(self.near_benchmarks)

    def fold_uncovered(self, row: np.ndarray) -> tuple[np.ndarray, float]:
        """(the folded query of the map with the :attr:`~Calibration.uncovered` weight, the constant to add to its
        inner products to put them on the scale of :meth:`fold`'s, whose offset :meth:`probability` adds): a model's
        score where it has no evidence near the query. Leaves :attr:`offset` alone."""
        _, covered = self.calibration.fold(row, self.prior)
        q, offset = self.calibration.fold(row, self.prior, own=self.calibration.uncovered)
        return q.astype(np.float32), offset - covered

    def probability(self, scores) -> np.ndarray:
        s = np.asarray(scores, dtype=np.float64)
        if self.calibration is None:
            return np.clip((1.0 + s) / 2.0, 0.0, 1.0)
        if self.folded:
            return self.calibration.probability(s, self.offset)
        return Calibration(self.calibration.a, self.calibration.b).probability(s)

    @property
    def scale(self) -> float:
        """Posterior sd of a search score per unit of the raw score's sd (the map's ``specific`` when folded)."""
        return self.calibration.scale if self.folded else 1.0

    def variance(self, payloads: list[dict], row: np.ndarray, coverage=None) -> np.ndarray:
        """(k,) posterior variance of each model's score at the index row ``row`` (dim,); NaN for a model without a
        stored posterior (the plain method, or a vector from before posteriors were kept). With the level/deviation map, the level's part
        counts at the map's weight of the level (:meth:`~Calibration.level_term`). ``coverage`` (k,): each model's
        share of the query's nearest indexed prompts it was observed on (:func:`indexer.query.coverage_ranked`,
        :func:`indexer.query.share_reader`): adds the map's :meth:`~Calibration.region_term` (none without it). With
        :attr:`near_benchmarks` set, the map's :meth:`~Calibration.unlinked_term` beyond what a never-observed answer
        format added (:meth:`_unseen`: both are the spread of a level nothing in the index relates to the model's)."""
        out = np.full(len(payloads), np.nan)
        keys = {p.get("pattern") for p in payloads if p.get("pattern") and p.get("noise") is not None}
        missing = [k for k in keys if k not in self._patterns]
        if missing:
            self._patterns.update(self._load(missing))
        groups: dict[str, list[int]] = {}
        for i, p in enumerate(payloads):
            if p.get("pattern") in self._patterns and p.get("noise") is not None and p.get("lam") is not None:
                groups.setdefault(p["pattern"], []).append(i)
        row = np.asarray(row, dtype=np.float64)
        unseen = np.zeros(len(payloads))  # each model's never-observed answer format's part (_unseen)
        for key, idx in groups.items():
            post = self._patterns[key]
            lam = np.array([payloads[i]["lam"] for i in idx], dtype=np.float64)
            if self.calibration is not None:
                lam = self.calibration.interval_lambdas(lam)
            noise = interval_noise([payloads[i]["noise"] for i in idx], post.n)  # never 0 (noise_floor)
            unseen[idx] = self._unseen(post, row)
            out[idx] = score_variance(post, lam, noise, row[None, :], self.space)[0] + unseen[idx]
            if self.calibration is not None and self.folded:  # the level's part at the map's weight of the level
                out[idx] += self.calibration.level_term(noise, post.n)
        if coverage is not None and self.calibration is not None and self.folded:
            out = out + self.calibration.region_term(coverage)
        if self.near_benchmarks and self.calibration is not None and self.folded:
            # the same unknown (a level where nothing relates it to the model's) as a never-observed format's: the
            # larger of the two counts, not both
            unlinked = self.calibration.unlinked_term(
                self.calibration.linked_shares([p.get("benchmarks") for p in payloads], self.near_benchmarks))
            out = out + np.maximum(unlinked - unseen, 0.0)
        return out

    def _unseen(self, post: PatternPosterior, row: np.ndarray) -> float:
        """The variance a never-observed answer format adds: its weight in the query (``m`` with options,
        ``1 - m`` without) squared, times the calibration's ``spread``."""
        from . import represent

        if self.calibration is None or not represent.has_formats(self.space):
            return 0.0
        m = float(represent.strip_levels(np.asarray(row), self.space)[-2])
        w = (0.0 if post.formats[0] else m) + (0.0 if post.formats[1] else 1.0 - m)
        return w * w * float(self.calibration.spread)

    def interval(self, scores, variance) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) probabilities: the score's posterior interval (:data:`Z_INTERVAL` sd) mapped like the score;
        NaN where the variance is unknown, and everywhere when the calibration carries no signal (:attr:`signal`:
        every probability is the base rate, an interval of no width would claim a certainty nothing measured)."""
        s = np.asarray(scores, dtype=np.float64)
        v = np.asarray(variance, dtype=np.float64)
        if not self.signal:
            nan = np.full(np.broadcast(s, v).shape, np.nan)
            return nan, nan.copy()
        sd = self.scale * np.sqrt(np.maximum(v, 0.0))
        return self.probability(s - Z_INTERVAL * sd), self.probability(s + Z_INTERVAL * sd)
