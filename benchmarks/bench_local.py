"""Two experiments on the default's level/deviation map (issues 13 and 19), as extra contestants beside the default in
one `taskspace evaluate` run (same folds). Not product options: measured, not adopted (docs/RESULTS.md, "Where the
own deviation helps and where it costs").

    TASKSPACE_CACHE_DIR=/work/cache python benchmarks/bench_local.py DATA[+DATA2] SPLIT VARIANTS [--seeds N] [--peers P]

VARIANTS is ``-`` (the built-in contestants alone) or a comma-separated list of:

- ``kappa:K``: the map's weight of the model's own deviation (``specific``) scaled by K for every query, the rest
  of the map as fitted (K = 0 ranks by level and the prior's part alone; K = 1 is the default);
- ``local:C``: a cluster-local level as a fourth feature of the map: k-means (C clusters, seeded) of the source
  questions' embeddings; each model's mean signed outcome per cluster, shrunk toward its level by 5 pseudo-cells;
  the feature ``L_i,cluster(q) - l_i`` (the query's nearest centroid) fitted with the other three on the same
  cross-fitted held-out prompts as the default's map (a negative coefficient fixed at 0, as there);
- ``formats:1``: one map per answer format (held-out cells of prompts with options / without), a query's the mix
  by its ``is_mc`` (one map where a data set has one format: pooled data sets only);
- ``moderate:K``: the default's probability moderated by each model's posterior variance ``v`` of its raw score at
  the query (MacKay's approximation, ``p = sigmoid(z / sqrt(1 + K pi g^2 v / 8))``, ``g`` the map's weight of the
  deviation), ranked as the default; ``rankmod:K`` also ranks by it.

- ``difficulty:C``: the prior's part of the map ``U`` from a vector fitted for the purpose: ridge of each source
  prompt's mean outcome relative to its models' levels on its embedding part, lambda chosen by leaving out one
  of C k-means clusters of the source prompts at a time (so for prompts unlike the source), instead of the models'
  mean normal; ``U_i(q) = d . (x(q) - mu_i)``; refitted in every held-out refit (no leak).

- ``ease:K``: the query's local ease as a fourth feature of the map: each source prompt's mean signed outcome
  relative to its models' levels, averaged over the query's K nearest source prompts (by question); a per-query
  constant, fitted with the other three on the same held-out prompts (each held-out prompt's ease from the refit's
  training prompts; a negative coefficient fixed at 0). Not coverage-aware (compare with ``kappa:1``); the product
  prototype of it, coverage-aware and stored with the map, is described in docs/RESULTS.md, "Local ease".

- ``smooth:K/W``: the model's own deviation taken at ``(1 - W) x + W xbar``, ``xbar`` the mean index row of the
  query's K nearest source prompts (by question), the rest of the map (level, the prior's part) at ``x`` as fitted
  (linear, so in the index it would be one more folded query; not coverage-aware: compare with ``kappa:1``);
- ``simcov:C``: the map fitted on held-out cells with simulated gaps: in every refit a seeded half of the models lose
  their training outcomes on one of C k-means clusters of the source questions each, so that their held-out cells
  there are uncovered; the map has a level weight and an own-deviation weight per side (``c`` and ``1 - c``).

- ``logitlevel:EPS``: the map's level feature is the logit of the model's source rate, ``log(r / (1 - r))`` with
  ``r = (1 + l_i) / 2`` clipped to ``[EPS, 1 - EPS]``, instead of ``l_i`` itself (a logistic in ``l_i`` cannot give
  every model its own rate where rates span 0.1-0.9); ``bothlevels:EPS`` keeps ``l_i`` as a fourth feature. Not
  coverage-aware (compare with ``kappa:1``). In the index it would be one more per-model coordinate;
  ``formatslogit:EPS``: ``formats:1`` with the level term on that logit.

- ``iso:1``: the ``kappa:1`` map's logit bent by an increasing function fitted on the same held-out cells (isotonic
  regression of their outcomes on the logit, read at 48 quantiles, slope 1 beyond the ends): the rankings are
  ``kappa:1``'s, only the probabilities move (the product's bend, :func:`indexer.posterior.fit_bend`, is this on the
  coverage-aware map); ``beta:1``: beta calibration of that logit instead (``logit p = c + b1 log sigmoid(z) - b2
  log(1 - sigmoid(z))``, b1, b2 >= 0).

``--decompose`` also prints, per contestant, how much of each fold's ECE a constant logit shift of that fold (its
calibration-in-the-large) and a Platt map of that fold (shift and slope) would remove, both fitted on the fold's own
outcomes (an oracle: what no map fitted on the source can know), and the same per benchmark inside each fold.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer import evaluate as ev, posterior, represent  # noqa: E402
from indexer.evaluation.contestants import Fitted, SolverContestant, source_means  # noqa: E402
from indexer.pipeline import _fit_calibration  # noqa: E402
from indexer.solver import HyperplaneSolver  # noqa: E402
from indexer.space import SpaceSpec  # noqa: E402

TAU = 5.0


def _logistic(Z):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(Z)))


def qhalf(X: np.ndarray) -> np.ndarray:
    """The question half of split rows, unit length."""
    Z = np.asarray(X[:, :represent.question_width(X.shape[1])], dtype=np.float64)
    return Z / np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-12)


def cluster_levels(S: np.ndarray, assign: np.ndarray, k: int) -> np.ndarray:
    """(M, k): each model's mean signed outcome per cluster, shrunk toward its overall one by TAU pseudo-cells."""
    obs = ~np.isnan(S)
    y = np.where(obs, 2 * S - 1, 0.0)
    level = y.sum(1) / np.maximum(obs.sum(1), 1)
    L = np.empty((S.shape[0], k))
    for c in range(k):
        cols = assign == c
        L[:, c] = (y[:, cols].sum(1) + TAU * level) / (obs[:, cols].sum(1) + TAU)
    return L


def rate_logit(level, eps: float) -> np.ndarray:
    """The logit of the source rate ``(1 + l) / 2`` of levels ``l``, the rate clipped to ``[eps, 1 - eps]``."""
    r = np.clip((1.0 + np.asarray(level, dtype=np.float64)) / 2.0, eps, 1.0 - eps)
    return np.log(r / (1.0 - r))


def local_feature(X, C):
    """``extra`` of :func:`indexer.posterior.heldout_cells`: a held-out cell's cluster-local level minus the model's
    level, both from the refit's outcomes."""
    A = np.argmax(qhalf(X) @ C.T, axis=1)

    def extra(S_train, train, held):
        level = np.nanmean(2 * S_train - 1, axis=1)
        return cluster_levels(S_train, A[train], C.shape[0])[:, A[held]] - level[:, None]

    return extra


def format_feature(X, space):
    """``extra`` of :func:`indexer.posterior.heldout_cells`: the held-out prompt's ``is_mc`` (index rows end
    ``[m, 1 - m, 0, 0]``)."""
    m = represent.add_intercept(np.asarray(X, dtype=np.float64), space)[:, -4]
    return lambda S_train, train, held: np.broadcast_to(m[held][None, :], (S_train.shape[0], held.size))


@dataclass
class Local(SolverContestant):
    """The default's map with ``kappa`` times its specific weight, or (``clusters`` > 0) with the cluster-local level."""

    kappa: float = 1.0
    clusters: int = 0
    formats: bool = False
    moderate: float = 0.0
    rank_moderated: bool = False
    difficulty: int = 0
    ease: int = 0
    smooth: int = 0
    weight: float = 0.0
    simcov: int = 0
    logit_level: float = 0.0
    both_levels: bool = False
    iso: bool = False
    beta: bool = False

    def fit(self, D, S):
        spec = SpaceSpec.of(self.space)
        solver = HyperplaneSolver(**self.options).fit(D, S)
        if self.moderate:
            base = SolverContestant.fit(self, D, S)  # the default itself (same options: the same fit)
            g = _fit_calibration(solver, D, S, self.space).ranking_coefficients[0]

            def moderated(Q):
                var = np.nan_to_num(np.maximum(solver.predictive_variance(np.asarray(Q, dtype=np.float64)).T, 0.0))
                return base.predict(Q) / np.sqrt(1.0 + self.moderate * np.pi * g * g * var / 8.0)

            if self.rank_moderated:
                return Fitted(moderated, source_means(S), lambda Q, P: _logistic(P), "bench_local rankmod")
            return Fitted(base.predict, source_means(S), lambda Q, P: _logistic(moderated(Q)), "bench_local moderate")
        V = represent.index_vectors(solver, D, self.space)
        u = None if solver.prior_ is None else np.asarray(solver.prior_, dtype=np.float64)
        level, mu_u = V[:, -2], V[:, -1]
        if self.difficulty:
            return self._fit_difficulty(D, S, V, level)
        if self.ease:
            return self._fit_ease(D, S, V, level, u, mu_u)
        if self.simcov:
            return self._fit_simcov(D, S, V, level, u, mu_u)
        if self.formats:  # one map per answer format of the held-out prompt, a query's the mix by its is_mc
            lv, dv, U, o, mq = posterior.heldout_cells(spec.solver, D, S, spec, extra=format_feature(D, self.space))
            # with ``logit_level`` (formatslogit:EPS) the level term on the rate's logit: dv is still s - l
            lf = rate_logit(lv, self.logit_level) if self.logit_level else lv
            lterm = rate_logit(level, self.logit_level) if self.logit_level else level
            maps = {}
            for f, sel in (("mc", mq >= 0.5), ("free", mq < 0.5)):
                cal_f = posterior.fit_level_calibration(lf[sel], dv[sel], U[sel], o[sel]) if sel.sum() >= 20 else None
                maps[f] = cal_f
            pooled = posterior.fit_level_calibration(lf, dv, U, o)
            coefs = {}
            for f, c in maps.items():
                c = c if c is not None and 0 < o[(mq >= 0.5) == (f == "mc")].mean() < 1 else pooled
                coefs[f] = np.array([c.a, c.level, c.specific, c.shared])
            print(f"  format maps mc {np.round(coefs['mc'], 3)} free {np.round(coefs['free'], 3)}", flush=True)

            def predict_f(Q):
                Xi = represent.add_intercept(np.asarray(Q, dtype=np.float64), self.space)
                s_ = V[:, :-2] @ Xi[:, :-2].T
                Uq = np.zeros_like(s_) if u is None else (Xi[:, :u.shape[0]] @ u)[None, :] - mu_u[:, None]
                m = Xi[:, -4][None, :]
                c = m[..., None] * coefs["mc"] + (1 - m[..., None]) * coefs["free"]  # (1, n, 4)
                lv_ = level[:, None]
                return c[..., 0] + c[..., 1] * lterm[:, None] + c[..., 2] * (s_ - lv_ - Uq) + c[..., 3] * Uq

            return Fitted(predict_f, source_means(S), lambda Q, P: _logistic(P), "bench_local formats")
        if self.logit_level:
            lv, dv, U, o = posterior.heldout_cells(spec.solver, D, S, spec)[:4]
            eps = self.logit_level
            F = [rate_logit(lv, eps), dv - U, U] + ([lv] if self.both_levels else [])
            a, coef = fit_nonnegative(np.column_stack(F), o)
            print(f"  logitlevel:{eps} map a {a:.3f} coef {np.round(coef, 3)}", flush=True)
            lam_i = rate_logit(level, eps)

            def predict_ll(Q):
                Xi = represent.add_intercept(np.asarray(Q, dtype=np.float64), self.space)
                s = V[:, :-2] @ Xi[:, :-2].T
                Uq = np.zeros_like(s) if u is None else (Xi[:, :u.shape[0]] @ u)[None, :] - mu_u[:, None]
                lv_ = level[:, None]
                Z = a + coef[0] * lam_i[:, None] + coef[1] * (s - lv_ - Uq) + coef[2] * Uq
                return Z + (coef[3] * lv_ if self.both_levels else 0.0)

            return Fitted(predict_ll, source_means(S), lambda Q, P: _logistic(P), "bench_local logitlevel")
        if self.clusters:
            from sklearn.cluster import KMeans

            C = KMeans(self.clusters, n_init=1, random_state=0).fit(qhalf(D)).cluster_centers_
            C /= np.linalg.norm(C, axis=1, keepdims=True)
            L_all = cluster_levels(S, np.argmax(qhalf(D) @ C.T, axis=1), self.clusters)
            lv, dv, U, o, dl = posterior.heldout_cells(spec.solver, D, S, spec, extra=local_feature(D, C))
            a, coef = fit_nonnegative(np.column_stack([lv, dv - U, U, dl]), o)
            print(f"  local:{self.clusters} map a {a:.3f} level {coef[0]:.3f} specific {coef[1]:.3f} "
                  f"shared {coef[2]:.3f} local {coef[3]:.3f}", flush=True)
        else:
            cal = _fit_calibration(solver, D, S, self.space)
            g, lev = cal.ranking_coefficients
            a, coef = cal.a, np.array([lev, self.kappa * g, float(cal.shared) if u is not None else g, 0.0])
        if self.smooth:
            Zs = qhalf(D)
            Ds = represent.add_intercept(np.asarray(D, dtype=np.float64), self.space)

        post = None
        if self.iso or self.beta:  # a monotone map of the logit, fitted on the held-out cells the map was fitted on
            post = (monotone_map if self.iso else beta_map)(*posterior.heldout_cells(spec.solver, D, S, spec)[:4], a, coef)

        def predict(Q):
            Xi = represent.add_intercept(np.asarray(Q, dtype=np.float64), self.space)
            s = V[:, :-2] @ Xi[:, :-2].T
            Uq = np.zeros_like(s) if u is None else (Xi[:, :u.shape[0]] @ u)[None, :] - mu_u[:, None]
            lv_ = level[:, None]
            Z = a + coef[0] * lv_ + coef[1] * (s - lv_ - Uq) + coef[2] * Uq
            if self.clusters:
                Z = Z + coef[3] * (L_all[:, np.argmax(qhalf(Q) @ C.T, axis=1)] - lv_)
            if self.smooth:  # the own deviation at (1 - w) x + w * (mean row of the K nearest source prompts)
                nn = represent.nearest(qhalf(Q), Zs, min(self.smooth, Zs.shape[0]))
                Xn = Ds[nn].mean(axis=1)
                sn = V[:, :-2] @ Xn[:, :-2].T
                Un = np.zeros_like(sn) if u is None else (Xn[:, :u.shape[0]] @ u)[None, :] - mu_u[:, None]
                Z = Z + coef[1] * self.weight * ((sn - lv_ - Un) - (s - lv_ - Uq))
            return Z

        if post is not None:
            return Fitted(predict, source_means(S), lambda Q, P: post(P), "bench_local iso")
        return Fitted(predict, source_means(S), lambda Q, P: _logistic(P), "bench_local")

    def _fit_difficulty(self, D, S, V, level):
        spec = SpaceSpec.of(self.space)
        p = represent.question_width(D.shape[1]) * 2  # the embedding part (question and options halves)
        Xp = np.asarray(D[:, :p], dtype=np.float64)

        def extra(S_train, train, held):
            d = difficulty_vector(Xp[train], S_train, self.difficulty)
            return (Xp[held] @ d)[None, :] - model_means(Xp[train] @ d, S_train)[:, None]

        lv, dv, _, o, Ud = posterior.heldout_cells(spec.solver, D, S, spec, extra=extra)
        a, coef = fit_nonnegative(np.column_stack([lv, dv - Ud, Ud]), o)
        d = difficulty_vector(Xp, S, self.difficulty)
        mu_d = model_means(Xp @ d, S)
        print(f"  difficulty:{self.difficulty} map a {a:.3f} level {coef[0]:.3f} specific {coef[1]:.3f} "
              f"shared {coef[2]:.3f}", flush=True)

        def predict(Q):
            Xi = represent.add_intercept(np.asarray(Q, dtype=np.float64), self.space)
            s_ = V[:, :-2] @ Xi[:, :-2].T
            Uq = (np.asarray(Q, dtype=np.float64)[:, :p] @ d)[None, :] - mu_d[:, None]
            lv_ = level[:, None]
            return a + coef[0] * lv_ + coef[1] * (s_ - lv_ - Uq) + coef[2] * Uq

        return Fitted(predict, source_means(S), lambda Q, P: _logistic(P), "bench_local difficulty")


    def _fit_ease(self, D, S, V, level, u, mu_u):
        spec = SpaceSpec.of(self.space)
        Z = qhalf(D).astype(np.float32)

        def extra(S_train, train, held):
            r = local_ease(Z[held], Z[train], S_train, self.ease)
            return np.broadcast_to(r[None, :], (S_train.shape[0], held.size))

        lv, dv, U, o, dk = posterior.heldout_cells(spec.solver, D, S, spec, extra=extra)
        a, coef = fit_nonnegative(np.column_stack([lv, dv - U, U, dk]), o)
        print(f"  ease:{self.ease} map a {a:.3f} level {coef[0]:.3f} specific {coef[1]:.3f} shared {coef[2]:.3f} "
              f"difficulty {coef[3]:.3f}", flush=True)

        def predict(Q):
            Xi = represent.add_intercept(np.asarray(Q, dtype=np.float64), self.space)
            s_ = V[:, :-2] @ Xi[:, :-2].T
            Uq = np.zeros_like(s_) if u is None else (Xi[:, :u.shape[0]] @ u)[None, :] - mu_u[:, None]
            lv_ = level[:, None]
            r = local_ease(qhalf(Q).astype(np.float32), Z, S, self.ease)
            return a + coef[0] * lv_ + coef[1] * (s_ - lv_ - Uq) + coef[2] * Uq + coef[3] * r[None, :]

        return Fitted(predict, source_means(S), lambda Q, P: _logistic(P), "bench_local ease")

    def _fit_simcov(self, D, S, V, level, u, mu_u):
        """Held-out cells with simulated gaps: in every refit a seeded half of the models lose their training
        outcomes on one k-means cluster of the source questions each (``simcov`` clusters), so that their held-out
        cells there are uncovered; the map then has a level and an own-deviation weight per side (c and 1 - c)."""
        from sklearn.cluster import KMeans

        spec = SpaceSpec.of(self.space)
        Zq = represent.question_rows(D, self.space)
        C = KMeans(self.simcov, n_init=1, random_state=0).fit(Zq).cluster_centers_
        M = S.shape[0]
        rng = np.random.default_rng(1)
        hidden = rng.random(M) < 0.5
        g = rng.integers(self.simcov, size=M)

        where = {D[i, :6].tobytes(): i for i in range(D.shape[0])}

        def mask(Xrows, S_):  # (m, n) True where a hidden model's outcome on these rows is dropped
            idx = np.array([where[r[:6].tobytes()] for r in np.asarray(Xrows, dtype=D.dtype)])
            keep = (~np.isnan(S[:, idx])).any(axis=1)
            assert keep.sum() == S_.shape[0]
            a = np.argmax(Zq[idx] @ C.T, axis=1)
            return hidden[keep][:, None] & (a[None, :] == g[keep][:, None])

        class Gapped:
            def fit(self_, X, S_, **kw):
                S2 = np.where(mask(X, S_), np.nan, S_)
                lost = ~(~np.isnan(S2)).any(axis=1)
                S2[lost] = S_[lost]
                return spec.solver().fit(X, S2, **kw)

        def extra(S_train, train, held):
            seen = ~np.isnan(S_train) & ~mask(D[train], S_train)
            return posterior.coverage_shares(Zq[held], Zq[train], seen)

        lv, dv, U, o, c = posterior.heldout_cells(Gapped, D, S, spec, extra=extra)
        own = dv - U
        a, coef = fit_nonnegative(np.column_stack([c * lv, (1 - c) * lv, c * own, (1 - c) * own, U]), o)
        print(f"  simcov:{self.simcov} a {a:.3f} level c/1-c {coef[0]:.3f}/{coef[1]:.3f} own {coef[2]:.3f}/"
              f"{coef[3]:.3f} shared {coef[4]:.3f}; uncovered cells {(c < 0.5).mean():.3f}", flush=True)
        Zs, seen_src = Zq, ~np.isnan(S)

        def predict(Q):
            Xi = represent.add_intercept(np.asarray(Q, dtype=np.float64), self.space)
            s_ = V[:, :-2] @ Xi[:, :-2].T
            Uq = np.zeros_like(s_) if u is None else (Xi[:, :u.shape[0]] @ u)[None, :] - mu_u[:, None]
            lv_ = level[:, None]
            cq = posterior.coverage_shares(represent.question_rows(Q, self.space), Zs, seen_src)
            own_ = s_ - lv_ - Uq
            return (a + cq * (coef[0] * lv_ + coef[2] * own_) + (1 - cq) * (coef[1] * lv_ + coef[3] * own_)
                    + coef[4] * Uq)

        return Fitted(predict, source_means(S), lambda Q, P: _logistic(P), "bench_local simcov")


def monotone_map(lv, dv, U, o, a, coef, knots: int = 48, tail: float = 0.005):
    """``p(z)``: increasing in the map's logit ``z = a + coef . [l, s - l - U, U]`` of the held-out cells: isotonic
    regression of their outcomes on ``z``, read at ``knots`` quantiles of ``z`` from ``tail`` to ``1 - tail`` and
    joined by straight lines in logit space (each segment rising at least 1e-3 per unit of z: strictly increasing),
    beyond the ends the map's own slope (1 per unit of z) from the end values."""
    from sklearn.isotonic import IsotonicRegression

    z = a + coef[0] * lv + coef[1] * (dv - U) + coef[2] * U
    keep = np.isfinite(z) & np.isfinite(o)
    z, o = z[keep], o[keep]
    iso = IsotonicRegression(y_min=1e-3, y_max=1 - 1e-3, out_of_bounds="clip").fit(z, o)
    xs = np.unique(np.quantile(z, np.linspace(tail, 1 - tail, knots)))
    p = iso.predict(xs)
    L = np.log(p / (1 - p))
    for k in range(1, len(L)):
        L[k] = max(L[k], L[k - 1] + 1e-3 * (xs[k] - xs[k - 1]))
    print(f"  iso: {len(z)} cells, z {np.round(xs[[0, len(xs) // 2, -1]], 2)} -> logit {np.round(L[[0, len(xs) // 2, -1]], 2)}"
          f" (identity {np.round(xs[[0, len(xs) // 2, -1]], 2)})", flush=True)

    def g(P):
        P = np.asarray(P, dtype=np.float64)
        out = np.interp(P, xs, L)
        out = np.where(P < xs[0], L[0] + (P - xs[0]), out)
        out = np.where(P > xs[-1], L[-1] + (P - xs[-1]), out)
        return _logistic(out)

    return g


def beta_map(lv, dv, U, o, a, coef):
    """``p(z)``: beta calibration (Kull et al. 2017) of the map's logit ``z`` on the held-out cells:
    ``logit p = c + b1 log sigmoid(z) - b2 log(1 - sigmoid(z))``, b1, b2 >= 0 (increasing; b1 = b2 = 1, c = 0 is z)."""
    z = a + coef[0] * lv + coef[1] * (dv - U) + coef[2] * U
    keep = np.isfinite(z) & np.isfinite(o)
    z, o = z[keep], o[keep]

    def feats(z):
        return np.column_stack([-np.logaddexp(0.0, -z), np.logaddexp(0.0, z)])

    c, b = fit_nonnegative(feats(z), o)
    print(f"  beta: {len(z)} cells, c {c:.3f} b1 {b[0]:.3f} b2 {b[1]:.3f}", flush=True)
    return lambda P: _logistic(c + feats(np.ravel(P)) @ b).reshape(np.shape(P))


def local_ease(Zq: np.ndarray, Zs: np.ndarray, S: np.ndarray, k: int) -> np.ndarray:
    """(q,): for each query (unit question rows ``Zq``), the mean over its ``k`` nearest source prompts (``Zs``, with
    outcomes ``S`` (M, N)) of the prompt's mean signed outcome relative to its models' levels."""
    obs = ~np.isnan(S)
    y = np.where(obs, 2 * S - 1, 0.0)
    lev = y.sum(1) / np.maximum(obs.sum(1), 1)
    n = obs.sum(0)
    rel = np.where(obs, y - lev[:, None], 0.0).sum(0) / np.maximum(n, 1)
    nn = represent.nearest(Zq, Zs, min(k, Zs.shape[0]))
    w = (n > 0)[nn]
    return (rel[nn] * w).sum(1) / np.maximum(w.sum(1), 1)


def fit_nonnegative(F: np.ndarray, o: np.ndarray) -> tuple[float, np.ndarray]:
    """(intercept, coefficients) of the logistic regression of the outcomes ``o`` on the features ``F`` (cells x k), a
    negative coefficient fixed at 0 and the rest refitted, as :func:`indexer.posterior.fit_level_calibration` does."""
    use, coef, a = np.ones(F.shape[1], bool), np.zeros(F.shape[1]), 0.0
    for _ in range(F.shape[1]):
        beta = posterior._logistic(F[:, use], o)
        coef[:] = 0.0
        coef[use], a = beta[1:], beta[0]
        if (coef[use] >= 0).all():
            break
        use &= coef > 0
    return a, coef


def model_means(t: np.ndarray, S: np.ndarray) -> np.ndarray:
    """(M,): each model's mean of the per-prompt values ``t`` (N,) over the prompts it was observed on."""
    obs = ~np.isnan(S)
    return (obs * t[None, :]).sum(1) / np.maximum(obs.sum(1), 1)


def difficulty_vector(X: np.ndarray, S: np.ndarray, clusters: int, grid=np.logspace(-2, 4, 13)) -> np.ndarray:
    """Ridge of each prompt's mean signed outcome relative to its models' levels on ``X`` (N, p), lambda by leaving
    out one of ``clusters`` k-means clusters of the (unit) rows at a time."""
    from sklearn.cluster import KMeans

    obs = ~np.isnan(S)
    y = np.where(obs, 2 * S - 1, 0.0)
    lev = y.sum(1) / np.maximum(obs.sum(1), 1)
    r = np.where(obs, y - lev[:, None], 0.0)
    n = obs.sum(0)
    have = n > 0
    X, t = X[have], r.sum(0)[have] / n[have]
    Xc, tc = X - X.mean(0), t - t.mean()
    Z = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    lab = KMeans(clusters, n_init=1, random_state=0).fit_predict(Z)
    G, b = Xc.T @ Xc, Xc.T @ tc
    err = np.zeros(len(grid))
    for c in range(clusters):
        m = lab == c
        if not m.any() or m.all():
            continue
        Gc, bc = G - Xc[m].T @ Xc[m], b - Xc[m].T @ tc[m]
        e, W = np.linalg.eigh(Gc)
        wb = W.T @ bc
        for k, lam in enumerate(grid):
            dk = W @ (wb / (np.maximum(e, 0) + lam))
            err[k] += ((tc[m] - Xc[m] @ dk) ** 2).sum()
    lam = grid[int(np.argmin(err))]
    e, W = np.linalg.eigh(G)
    print(f"    difficulty lambda {lam:g} (cv error {err.min() / len(t):.4f}, lambda->inf {(tc ** 2).mean():.4f})", flush=True)
    return W @ ((W.T @ b) / (np.maximum(e, 0) + lam))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    # one split (all / both ran every split, then failed reading their result: KeyError 'methods', numbers lost)
    ap.add_argument("split", choices=("in-sample", "oos", "coverage"))
    ap.add_argument("variants")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--peers", default="none", choices=("none", "fast", "all"))
    ap.add_argument("--decompose", action="store_true")
    args = ap.parse_args()
    cells = _record_folds() if args.decompose else None
    datas = args.data.split("+")
    default = ev._default_space(None)
    if not represent.has_levels(default) or not represent.is_split(default):
        sys.exit("the default method must be the split representation with levels (auto-mc)")
    if represent.prior_formats(default) > 1:
        # the variants are written for one prior (the map's two level coordinates): on a data set of one answer format
        # that is the default's fit exactly; on pooled formats the variants differ from `default` by the prior too
        default = dataclasses.replace(default, params={**default.params, "levels": represent.LEVELS})
    m, datasets, _ = ev.load_pooled(datas, None)
    from indexer.encoder import get_encoder

    D = get_encoder(None).encode(m.texts)
    X, XQ, fill = ev._default_rows(m.texts, m.texts, D, D, default, None)
    extra = {}
    for v in [] if args.variants == "-" else args.variants.split(","):
        kind, val = v.split(":")
        if kind in ("logitlevel", "bothlevels"):
            extra[v] = Local(default.options, rows=(X, XQ), fill=fill, space=default, logit_level=float(val),
                             both_levels=kind == "bothlevels")
        elif kind == "beta":
            extra[v] = Local(default.options, rows=(X, XQ), fill=fill, space=default, beta=True)
        elif kind == "iso":
            extra[v] = Local(default.options, rows=(X, XQ), fill=fill, space=default, iso=True)
        elif kind == "kappa":
            extra[v] = Local(default.options, rows=(X, XQ), fill=fill, space=default, kappa=float(val))
        elif kind == "formats":
            extra[v] = Local(default.options, rows=(X, XQ), fill=fill, space=default, formats=True)
        elif kind == "formatslogit":
            extra[v] = Local(default.options, rows=(X, XQ), fill=fill, space=default, formats=True,
                             logit_level=float(val))
        elif kind in ("moderate", "rankmod"):
            extra[v] = Local(default.options, rows=(X, XQ), fill=fill, space=default, moderate=float(val),
                             rank_moderated=kind == "rankmod")
        elif kind == "difficulty":
            extra[v] = Local(default.options, rows=(X, XQ), fill=fill, space=default, difficulty=int(val))
        elif kind == "ease":
            extra[v] = Local(default.options, rows=(X, XQ), fill=fill, space=default, ease=int(val))
        elif kind == "simcov":
            extra[v] = Local(default.options, rows=(X, XQ), fill=fill, space=default, simcov=int(val))
        elif kind == "smooth":
            k_, w_ = val.split("/")
            extra[v] = Local(default.options, rows=(X, XQ), fill=fill, space=default, smooth=int(k_), weight=float(w_))
        elif kind == "local":
            extra[v] = Local(default.options, rows=(X, XQ), fill=fill, space=default, clusters=int(val))
        else:
            sys.exit(f"unknown variant {v!r}")
    res = ev.evaluate(datas if len(datas) > 1 else datas[0], split=args.split, sweep=False, contestants=extra,
                      matrix=m, embeddings=D, seeds=args.seeds, peers=args.peers,
                      datasets=datasets if len(datas) > 1 else None)
    for name, e in res["methods"].items():
        parts = "".join(f" | {p} auc {e[p]['auc']:.4f} sel {e[p]['selection_accuracy']:.4f} ece {e[p]['ece']:.4f}"
                        for p in ("covered", "uncovered") if p in e)
        if "datasets" in e:
            parts += "".join(f" | {k} auc {d['auc']:.4f} sel {d['selection_accuracy']:.4f} ece {d['ece']:.4f}"
                             for k, d in e["datasets"].items())
        print(f"{name:10s} auc {e['auc']:.4f} sel {e['selection_accuracy']:.4f} ece {e.get('ece', float('nan')):.4f}"
              f"{parts}")
    for f in res["folds"]:
        print(f["name"], " ".join(f"{n}:{f['methods'][n]['selection_accuracy']:.3f}/{f['methods'][n]['ece']:.3f}"
                                  for n in ["default", "bsp", *extra]))
    if cells is not None:
        _print_decomposition(cells, list(res["methods"]))


def _record_folds() -> list:
    """Every fold's (probabilities, outcomes, parts, benchmarks) per contestant, in the order the protocol scores
    them (contestants in order within each fold), from :func:`indexer.evaluation.protocol.score_fold`."""
    from indexer.evaluation import protocol

    cells, score = [], protocol.score_fold

    def spy(P, S_tgt, bench, source_mean, prob=None, parts=None):
        if parts is not None:  # the fold's own call, not one of its parts
            cells.append((prob, S_tgt, parts, bench))
        return score(P, S_tgt, bench, source_mean, prob, parts)

    protocol.score_fold = spy
    return cells


def _decompose(p, y) -> tuple[float, float, float, float, float]:
    """(ECE, |mean outcome - mean probability|, ECE after the best constant logit shift, ECE after a Platt map of
    the logit, that map's slope), all fitted on these cells."""
    from scipy.optimize import brentq
    from sklearn.linear_model import LogisticRegression

    from indexer.evaluation import metrics

    z = np.log(np.clip(p, 1e-6, 1 - 1e-6) / (1 - np.clip(p, 1e-6, 1 - 1e-6)))
    c = brentq(lambda c: _logistic(z + c).mean() - y.mean(), -20, 20)
    lr = LogisticRegression(C=1e6).fit(z[:, None], y) if set(np.unique(y)) <= {0, 1} else \
        LogisticRegression(C=1e6).fit(np.r_[z, z][:, None], np.r_[np.ones_like(y), np.zeros_like(y)],
                                      sample_weight=np.r_[y, 1 - y])
    return (metrics.ece(p, y), abs(y.mean() - p.mean()), metrics.ece(_logistic(z + c), y),
            metrics.ece(lr.predict_proba(z[:, None])[:, 1], y), float(lr.coef_[0, 0]))


def _print_decomposition(cells: list, names: list[str]) -> None:
    for ci, name in enumerate(names):
        rows: dict[str, list] = {}
        for prob, S, parts, bench in cells[ci::len(names)]:
            if prob is None:
                break
            for part, mask in [("all", None), *((k, v[0]) for k, v in parts.items() if k in ("covered", "uncovered"))]:
                Sp, pp = (S, prob) if mask is None else (S[mask], prob[mask])
                o = ~np.isnan(Sp)
                if o.sum() > 50:
                    rows.setdefault(part, []).append(_decompose(pp[o], Sp[o]))
            for b in np.unique(bench):
                Sb, pb = S[:, bench == b], prob[:, bench == b]
                o = ~np.isnan(Sb)
                if o.sum() > 200 and 0 < Sb[o].mean() < 1:
                    rows.setdefault("per benchmark in fold", []).append(_decompose(pb[o], Sb[o]))
        for part, r in rows.items():
            a = np.array(r)
            print(f"{name:10s} {part:22s} n {len(a):3d} ECE {a[:, 0].mean():.4f} |offset| {a[:, 1].mean():.4f} "
                  f"after shift {a[:, 2].mean():.4f} after Platt {a[:, 3].mean():.4f} slope {a[:, 4].mean():.3f}")


if __name__ == "__main__":
    import sys

    from indexer.errors import IndexerError

    try:
        main()
    except IndexerError as exc:  # a bad DATA or option value: one line and its exit code, as `taskspace evaluate`
        print(f"error: {exc}", file=sys.stderr)  # says it (before: a traceback)
        sys.exit(exc.exit_code)
