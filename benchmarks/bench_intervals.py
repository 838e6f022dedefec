"""Are the 90% intervals honest? On the coverage split (issue 13), for every fold and every model scored on the
fold's targets: the model's true rate on them against the mean of its per-target intervals (what `taskspace search`
shows: the score's posterior, mapped through the space's calibration). Grouped by covered / uncovered (the fold hid
the group from the model) and by whether the model's lambda sat at the top of the GCV grid.

    TASKSPACE_CACHE_DIR=/work/cache python benchmarks/bench_intervals.py DATA [--split coverage|in-sample]
        [--seeds N] [--own-lambda] [--no-region-var] [--no-level-var] [--no-noise-floor]

``--own-lambda``: each model's own lambda, as before the map's cap (:attr:`indexer.posterior.Calibration.lam_cap`);
``--no-region-var``: without the map's region variance (:attr:`~indexer.posterior.Calibration.region_var`),
as before it; ``--no-level-var``: the level's part of the posterior at the deviation's weight
(without :meth:`~indexer.posterior.Calibration.level_term`), as before it; ``--no-noise-floor``: each model's own
residual variance even below :func:`~indexer.posterior.noise_floor` (0 for a model whose outcomes are all one value),
as before the floor.
The true rate is a mean over the fold's targets: "inside" ignores its binomial noise (which understates how often the interval
holds the model's success probability where a model has few targets), "with the targets' binomial noise" adds it. Uses the product's code: the default
space's representation, solver, calibration (`indexer.pipeline._fit_calibration`) and posterior variance.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--split", choices=("coverage", "in-sample"), default="coverage")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--own-lambda", action="store_true", help="each model's own lambda (no cap)")
    ap.add_argument("--no-region-var", action="store_true",
                    help="leave out the map's region variance (as before it: Calibration.region_term)")
    ap.add_argument("--no-level-var", action="store_true",
                    help="the level's part of the variance at the deviation's weight (as before Calibration.level_term)")
    ap.add_argument("--no-noise-floor", action="store_true",
                    help="each model's own residual variance, even below posterior.noise_floor (as before it)")
    args = ap.parse_args()

    from indexer import evaluate as ev
    from indexer import posterior, represent
    from indexer.encoder import get_encoder
    from indexer.evaluation import splits
    from indexer.pipeline import _fit_calibration
    from indexer.solver.ridge import GCV_LAMBDAS
    from indexer.space import SpaceSpec

    t0 = time.perf_counter()
    m = ev.load_matrix(args.data)
    space = ev._default_space(None)
    spec = SpaceSpec.of(space)
    encode = get_encoder(spec.encoder).encode
    X = represent.rows(m.texts, encode, space.params)
    XQ = represent.query_rows(m.texts, encode, space.params)
    S = m.scores
    M = S.shape[0]
    folds = (splits.coverage(m.benchmarks, M, args.seeds) if args.split == "coverage"
             else splits.in_sample(S.shape[1], args.seeds))
    edge = float(max(GCV_LAMBDAS))
    n_region = 0
    rec = []  # (uncovered, at the grid's edge, true rate, mean p, mean low, mean high)
    for f in folds:
        src = S[:, f.train].copy()
        if f.hide_models is not None:
            src[np.ix_(f.hide_models, np.searchsorted(f.train, f.hide_prompts))] = np.nan
        keep = ~np.isnan(src).all(axis=1)
        Xs = X[f.train]
        solver = spec.solver().fit(Xs, src[keep], formats=represent.prompt_formats(Xs, space.params))
        V = represent.index_vectors(solver, Xs, space.params)
        cal = _fit_calibration(solver, Xs, src[keep], space, groups=m.benchmarks[f.train])
        n_region += cal.region_var is not None
        XQt = represent.fill_from_neighbours(XQ[f.test], Xs)
        Xi = represent.add_intercept(XQt, space.params)
        u = None if solver.prior_ is None else np.asarray(solver.prior_)
        Qf, off = cal.fold_rows(Xi, u)
        Z = cal.a + off[None, :] + V @ Qf.T
        c = posterior.coverage_shares(represent.question_rows(XQt, space.params),
                                      represent.question_rows(Xs, space.params), ~np.isnan(src[keep]))
        if cal.coverage_aware:
            Qu, offu = cal.fold_rows(Xi, u, own=cal.uncovered)
            Z = c * Z + (1 - c) * (cal.a + offu[None, :] + V @ Qu.T)
        lam, noise = np.asarray(solver.lam_), np.asarray(solver.noise_)
        n_obs = (~np.isnan(src[keep])).sum(axis=1)
        floored = noise < posterior.noise_floor(n_obs)  # the models whose own s_i^2 is below the floor
        if not args.no_noise_floor:  # what the search counts (Predictor.variance): at least the floor
            noise = posterior.interval_noise(noise, n_obs)
        lam_var = lam if args.own_lambda else cal.interval_lambdas(lam)
        var = np.zeros_like(Z)
        for key, post in posterior.pattern_posteriors(solver, Xs, space=space.params).items():
            idx = np.array([i for i, k in enumerate(solver.pattern_of_) if k == key])
            var[idx] = posterior.score_variance(post, lam_var[idx], noise[idx], Xi, space.params).T
        if not args.no_region_var:  # what the search adds (Predictor.variance with the shares)
            var = var + cal.region_term(c)
        if not args.no_level_var:  # the level's part at the map's weight of the level (as Predictor.variance)
            var = var + cal.level_term(noise, n_obs)[:, None]
        sd = cal.scale * np.sqrt(np.maximum(var, 0.0))
        prob = lambda z: 0.5 * (1.0 + np.tanh(0.5 * cal.bend(z)))  # noqa: E731
        P, lo, hi = prob(Z), prob(Z - posterior.Z_INTERVAL * sd), prob(Z + posterior.Z_INTERVAL * sd)
        hidden = set([] if f.hide_models is None else f.hide_models.tolist())
        T = S[np.ix_(np.flatnonzero(keep), f.test)]
        for j, i in enumerate(np.flatnonzero(keep)):
            o = ~np.isnan(T[j])
            if o.sum() >= 5:
                rec.append((i in hidden, lam[j] >= edge, T[j][o].mean(), P[j][o].mean(), lo[j][o].mean(),
                            hi[j][o].mean(), float(np.mean(P[j][o] * (1.0 - P[j][o])) / o.sum()), floored[j]))
    r = np.array(rec, dtype=float)
    unc, at_edge, t, p, a, b, binom, low_noise = r.T
    inside = (t >= a) & (t <= b)
    # the same with the targets' own binomial noise (the rate of n outcomes at the predicted probabilities) added in
    # quadrature to each side of the interval: what the interval and the finite targets together should hold 90% of
    z = posterior.Z_INTERVAL
    reach = lambda half: np.sqrt(half ** 2 + z * z * binom)  # noqa: E731
    inside_n = (t >= p - reach(p - a)) & (t <= p + reach(b - p))
    print(f"{args.data}, {args.split} ({len(folds)} folds), {'own lambda' if args.own_lambda else 'lambda capped'}"
          f"{'' if args.no_region_var else f', region variance in {n_region} of {len(folds)} maps'}"
          f"{'' if args.no_level_var else ', the level at its weight'}"
          f"{'' if args.no_noise_floor else ', residual variance at least the floor'}; "
          f"{time.perf_counter() - t0:.0f} s\n")
    print("| models | lambda | (model, fold) pairs | true rate inside the 90% interval | inside, with the targets' "
          "binomial noise | median width | median abs error |")
    print("|---|---|---|---|---|---|---|")
    for name, sel in (("covered", unc == 0), ("uncovered", unc == 1), ("all", np.ones_like(unc, bool))):
        for lname, ls in ((f"at the edge ({edge:g})", at_edge == 1), ("below", at_edge == 0), ("any", np.ones_like(unc, bool))):
            s = sel & ls
            if s.any():
                print(f"| {name} | {lname} | {int(s.sum())} | {inside[s].mean():.3f} | {inside_n[s].mean():.3f} | "
                      f"{np.median(b[s] - a[s]):.3f} | "
                      f"{np.median(np.abs(t[s] - p[s])):.3f} |")
    s = low_noise == 1  # the models the floor raises (with --no-noise-floor: as they were)
    if s.any():
        print(f"| residual variance below the floor | any | {int(s.sum())} | {inside[s].mean():.3f} | "
              f"{inside_n[s].mean():.3f} | {np.median(b[s] - a[s]):.3f} | {np.median(np.abs(t[s] - p[s])):.3f} |")


if __name__ == "__main__":
    import sys

    from indexer.errors import IndexerError

    try:
        main()
    except IndexerError as exc:  # a bad DATA or option value: one line and its exit code, as `taskspace evaluate`
        print(f"error: {exc}", file=sys.stderr)  # says it (before: a traceback)
        sys.exit(exc.exit_code)
