"""Variants of the default method (``auto``) measured against issue 5's "go beyond the paper" targets.

    TASKSPACE_CACHE_DIR=.taskspace/cache python benchmarks/bench_beyond_auto.py [DATA ...] [--split oos|in-sample]

DATA defaults to ../shared/data/mmlu_pro and ../shared/data/evalarena_code (leave one benchmark out).
Every variant keeps the index form ``score = e_i . lift(q) + c_i``; the diagnostics at the end do not (they use
held-out information or all models' outcomes) and only bound what any per-model hyperplane can reach.
Prints one line per (dataset, variant): mean over folds of pooled AUC and selection accuracy.
Results: docs/RESULTS.md ("Also tried").
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from indexer.evaluation import metrics, splits  # noqa: E402
from indexer.solver import HyperplaneSolver, method_options, shrinkage  # noqa: E402

AUTO = method_options("auto")


def text_features(texts: list[str], rich: bool) -> np.ndarray:
    """Fixed per-prompt features, standardised over all prompts: log chars and log lines (``rich``: 8 features)."""
    rows = []
    for t in texts:
        lines, words = t.split("\n"), t.split()
        row = [np.log1p(len(t)), np.log1p(len(lines))]
        if rich:
            n = max(len(t), 1)
            row += [np.log1p(len(words)), sum(c.isdigit() for c in t) / n, sum(c in "=+-*/^()[]{}<>$%" for c in t) / n,
                    sum(bool(re.match(r"^[A-J]\. ", x)) for x in lines), np.log1p(len(lines[0])),
                    float(np.mean([len(w) for w in words])) if words else 0.0]
        rows.append(row)
    F = np.array(rows, dtype=np.float64)
    sd = F.std(axis=0)
    return (F - F.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def _auto(D, S):
    return HyperplaneSolver(**AUTO).fit(D, S)


def _mu(s: HyperplaneSolver) -> np.ndarray:
    return np.stack([s.patterns_[s.pattern_of_[i]].eig[2] for i in range(len(s.model_ids_))])


def loo_calibrated(Ds, Ss, Dt, slope_only):
    """auto, then per model y ~ alpha + beta * (closed-form leave-one-out prediction), folded into (e, c)."""
    s = _auto(Ds, Ss)
    E, a = s.normals_.copy(), s.intercept_.copy()
    for i in range(Ss.shape[0]):
        obs = ~np.isnan(Ss[i])
        y = 2.0 * Ss[i, obs] - 1.0
        w, V, mu = s.patterns_[s.pattern_of_[i]].eig
        Z = (Ds[obs] - mu) @ V
        h = 1.0 / obs.sum() + (Z * Z) @ shrinkage(w, float(s.lam_[i]), 0.0)  # hat-matrix diagonal
        fit = a[i] + Ds[obs] @ E[i]
        loo = y - (y - fit) / (1.0 - h)
        alpha, beta = np.linalg.lstsq(np.c_[np.ones(y.size), loo], y, rcond=None)[0]
        if slope_only:
            E[i] *= max(beta, 0.0)
            a[i] = y.mean() - E[i] @ mu
        else:
            E[i], a[i] = beta * E[i], alpha + beta * a[i]
    return Dt @ E.T + a


def slope_shrink(Ds, Ss, Dt, beta):
    s = _auto(Ds, Ss)
    E = s.normals_ * beta
    ybar = np.nanmean(2.0 * Ss - 1.0, axis=1)
    return Dt @ E.T + (ybar - (E * _mu(s)).sum(axis=1))


def transformed(Ds, Ss, Dt, kind, arg):
    """auto on globally transformed embeddings (statistics of the source prompts)."""
    m = Ds.mean(axis=0)
    w, V = np.linalg.eigh(np.cov((Ds - m).T))
    w = np.clip(w, 0.0, None)
    if kind == "whiten":  # (C + alpha mean(w) I)^(-power)
        alpha, power = arg
        W = (V * (w + alpha * w.mean() + 1e-12) ** -power) @ V.T
        tf = lambda X: (X - m) @ W  # noqa: E731
    elif kind == "pca":
        P = V[:, ::-1][:, :arg]
        tf = lambda X: X @ P  # noqa: E731
    else:  # rff: append random Fourier features (m features, bandwidth sigma, scale)
        k, sigma, scale = arg
        rng = np.random.default_rng(0)
        R, b = rng.normal(0.0, 1.0 / sigma, (Ds.shape[1], k)), rng.uniform(0.0, 2 * np.pi, k)
        tf = lambda X: np.c_[X, scale * np.sqrt(2.0 / k) * np.cos(X @ R + b)]  # noqa: E731
    return _auto(tf(Ds), Ss).predict(tf(Dt))


def variants(F2, F8):
    return {
        "auto (default)": lambda Ds, Ss, Dt, tr, te, gs: _auto(Ds, Ss).predict(Dt),
        "LOO calibration a+b*score": lambda Ds, Ss, Dt, tr, te, gs: loo_calibrated(Ds, Ss, Dt, False),
        "LOO calibration, slope only": lambda Ds, Ss, Dt, tr, te, gs: loo_calibrated(Ds, Ss, Dt, True),
        "slope x 0.5 (toward source mean)": lambda Ds, Ss, Dt, tr, te, gs: slope_shrink(Ds, Ss, Dt, 0.5),
        "whitening (C + 0.1 I)^-1/2": lambda Ds, Ss, Dt, tr, te, gs: transformed(Ds, Ss, Dt, "whiten", (0.1, 0.5)),
        "anti-whitening C^1/4": lambda Ds, Ss, Dt, tr, te, gs: transformed(Ds, Ss, Dt, "whiten", (0.0, -0.25)),
        "global PCA, 32 dims": lambda Ds, Ss, Dt, tr, te, gs: transformed(Ds, Ss, Dt, "pca", 32),
        "+512 random Fourier features": lambda Ds, Ss, Dt, tr, te, gs: transformed(Ds, Ss, Dt, "rff", (512, 1.0, 1.0)),
        "per-benchmark centring (transductive)": within_centred,
        "project out benchmark-mean span": project_out,
        "+2 text features (log chars, lines)": lambda Ds, Ss, Dt, tr, te, gs: _auto(
            np.c_[Ds, 0.2 * F2[tr]], Ss).predict(np.c_[Dt, 0.2 * F2[te]]),
        "+8 text features": lambda Ds, Ss, Dt, tr, te, gs: _auto(
            np.c_[Ds, 0.2 * F8[tr]], Ss).predict(np.c_[Dt, 0.2 * F8[te]]),
    }


def _bench_means(Ds, gs):
    labs = sorted(set(gs.tolist()))
    return labs, np.stack([Ds[gs == g].mean(axis=0) for g in labs])


def within_centred(Ds, Ss, Dt, tr, te, gs):
    labs, Mu = _bench_means(Ds, gs)
    s = _auto(Ds - Mu[np.searchsorted(labs, gs)], Ss)
    return s.predict(Dt - Dt.mean(axis=0))  # the target benchmark's own mean (needs all its prompts)


def project_out(Ds, Ss, Dt, tr, te, gs):
    _, Mu = _bench_means(Ds, gs)
    U, sv, _ = np.linalg.svd((Mu - Mu.mean(axis=0)).T, full_matrices=False)
    U = U[:, sv > 1e-8]
    proj = lambda X: X - (X @ U) @ U.T  # noqa: E731
    return _auto(proj(Ds), Ss).predict(proj(Dt))


def diagnostics(Ds, Ss, Dt, St):
    """Not index-compatible: bounds. 'true mean' = each model's mean outcome on the held-out group."""
    sm = np.nanmean(2.0 * Ss - 1.0, axis=1)
    with np.errstate(all="ignore"):
        tm = np.nan_to_num(np.nanmean(2.0 * St - 1.0, axis=1))
        diff = np.nanmean(2.0 * St - 1.0, axis=0)
    pooled = _auto(Ds, ((np.nanmean(2.0 * Ss - 1.0, axis=0) + 1.0) / 2.0)[None]).predict(Dt)[:, 0]
    s = _auto(Ds, Ss)
    slope = s.predict(Dt).T - (s.intercept_ + (s.normals_ * _mu(s)).sum(axis=1))[:, None]
    n = St.shape[1]
    return {
        "[diag] true held-out mean per model": np.repeat(tm[:, None], n, axis=1),
        "[diag] true mean + auto's slope": tm[:, None] + slope,
        "[diag] true mean + difficulty from all models' ridge": tm[:, None] + pooled[None],
        "[diag] true mean + true prompt difficulty": tm[:, None] + diff[None],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    shared = ROOT.parent / "shared" / "data"
    ap.add_argument("data", nargs="*", default=[str(shared / "mmlu_pro"), str(shared / "evalarena_code")])
    ap.add_argument("--split", choices=("oos", "in-sample"), default="oos")
    args = ap.parse_args()
    from indexer.encoder import get_encoder
    from indexer.evaluate import load_matrix

    for data in args.data:
        m = load_matrix(data)
        D = np.asarray(get_encoder(None).encode(m.texts), dtype=np.float64)
        F2, F8 = text_features(m.texts, False), text_features(m.texts, True)
        g = np.asarray(m.groups, dtype=str)
        folds = splits.leave_one_group_out(g) if args.split == "oos" else splits.in_sample(len(g), 5)
        scores: dict[str, list] = {}
        for f in folds:
            Ss = m.S[:, f.train]
            keep = (~np.isnan(Ss)).any(axis=1)
            Ss, St = Ss[keep], m.S[keep][:, f.test]
            obs, sm = ~np.isnan(St), np.nanmean(Ss, axis=1)
            Ds, Dt = D[f.train], D[f.test]
            preds = {k: fn(Ds, Ss, Dt, f.train, f.test, g[f.train]).T for k, fn in variants(F2, F8).items()}
            if args.split == "oos":
                preds.update(diagnostics(Ds, Ss, Dt, St))
            for k, P in preds.items():
                row = scores.setdefault(k, [[], []])
                row[0].append(metrics.roc_auc(P[obs], St[obs]))
                row[1].append(metrics.selection(P, St, tie_break=sm)["selection_accuracy"])
        for k, (auc, sel) in scores.items():
            print(f"{Path(data).name:15s} {args.split:9s} {k:48s} AUC {np.mean(auc):.3f}  sel {np.nanmean(sel):.3f}", flush=True)


if __name__ == "__main__":
    main()
