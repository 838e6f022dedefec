"""Experiments of issue 19 (can the default absorb per-benchmark best?), as extra contestants beside the default
in one `taskspace evaluate` run (same folds, `--peers fast` so `benchbest` is in the table). Not product options
(the first was also built in the index form, the method `auto-mc-level`, on the branch `level` (e88f239), measured
there and not merged: it does not win, docs/RESULTS.md):

    TASKSPACE_CACHE_DIR=/work/cache python benchmarks/bench_level.py DATA[+DATA2] SPLIT METHOD GRID [SEEDS]

GRID is a comma-separated list of entries ``a:b[:kind]``:

- ``k:s`` (kind absent): `level k s`, the generalised ridge: the top ``k`` principal directions of each embedding
  half of the fold's source rows scaled by ``s`` (penalty / s^2), the models mapped back to score raw rows;
- ``k:s:1``: `bench k s`, the same with the top ``k`` directions of the between-benchmark scatter (benchmark
  means of the source prompts, weighted by their sizes) instead of the principal ones;
- ``k:0:2``: `absorb nnk` and `absorb known`: one unpenalised column per benchmark but the first (a per-model,
  per-benchmark intercept), a query's columns the benchmark mix of its ``k`` nearest source prompts (by question)
  or its own benchmark (as `benchbest` is given); plain solver scores (no index form, no probabilities);
- ``C:s:3`` (hard) or ``C:s:3+100T``: `clus C s T`, soft membership of ``C`` k-means clusters of the source
  questions (softmax of centroid similarities at temperature T; 0: nearest centroid) as extra penalised columns
  scaled by ``s``; plain solver scores.

Each contestant's numbers are printed; the JSON goes to /tmp (its name is printed).
"""
import argparse, sys, time, json
from dataclasses import dataclass
from pathlib import Path
import numpy as np
from indexer import represent
from indexer.evaluation.contestants import Fitted, source_means
from indexer.evaluate import evaluate, load_pooled, _default_space, _default_rows


def halves(width, space):
    d_emb = width - (represent.n_features(represent.feature_set(space)) if represent.feature_set(space) else 0)
    if represent.is_split(space):
        h = d_emb // 2
        return [(0, h), (h, 2 * h)]
    return [(0, d_emb)]


def basis(X, space, k, codes=None):
    out = []
    for lo, hi in halves(X.shape[1], space):
        Z = np.asarray(X[:, lo:hi], dtype=np.float64)
        keep = np.abs(Z).sum(axis=1) > 0
        Z = Z[keep]
        if Z.shape[0] <= k:
            continue
        Zc = Z - Z.mean(axis=0)
        if codes is None:
            _, _, Vt = np.linalg.svd(Zc, full_matrices=False)
            P = Vt[:k].T
        else:
            c = codes[keep]
            Bm = []
            for b in np.unique(c):
                sel = c == b
                Bm.append(np.sqrt(sel.sum()) * Zc[sel].mean(axis=0))
            Bm = np.array(Bm)
            _, sv, Vt = np.linalg.svd(Bm, full_matrices=False)
            kk = min(k, int((sv > 1e-8 * sv[0]).sum()))
            P = Vt[:kk].T
        out.append((lo, hi, P))
    return out


def apply(X, B, s):
    X = np.array(X, dtype=np.float64, copy=True)
    for lo, hi, P in B:
        Z = X[:, lo:hi]
        X[:, lo:hi] = Z + (s - 1.0) * (Z @ P) @ P.T
    return X


@dataclass
class Level:
    options: dict
    space: object
    k: int
    s: float
    rows: tuple | None = None
    fill: object = None
    bench: bool = False

    def fit(self, X, S):
        from indexer.solver import HyperplaneSolver
        from indexer.pipeline import _fit_calibration
        codes = None
        if self.bench:
            X, codes = X[:, :-1], X[:, -1]
        B = basis(X, self.space, self.k, codes)
        Xt = apply(X, B, self.s).astype(np.asarray(X).dtype)
        solver = HyperplaneSolver(**self.options).fit(Xt, S)
        Vt = represent.index_vectors(solver, Xt, self.space)
        V = apply(Vt, B, self.s)  # A symmetric: (A e') . x = e' . (A x)
        def predict(Q):
            if self.bench:
                Q = Q[:, :-1]
            Xi = represent.add_intercept(np.asarray(Q, dtype=np.float64), self.space)
            return V @ Xi.T
        cal = _fit_calibration(solver, Xt, S)
        return Fitted(predict, source_means(S), lambda Q, P: cal.probability(P), "level")


@dataclass
class ClusterCols:
    """Soft membership of C k-means clusters of the source prompts (question half) as extra penalised columns
    (scaled by s: penalty / s^2), inserted before the covariates. Plain predict (no index form)."""
    options: dict
    space: object
    C: int
    s: float
    T: float
    rows: tuple | None = None
    fill: object = None

    def _memb(self, X):
        Z = np.asarray(X[:, :self.qw], dtype=np.float64)
        sims = Z @ self.cent.T
        if self.T <= 0:
            out = np.zeros_like(sims); out[np.arange(len(sims)), sims.argmax(axis=1)] = 1.0
            return out
        e = np.exp((sims - sims.max(axis=1, keepdims=True)) / self.T)
        return e / e.sum(axis=1, keepdims=True)

    def _tx(self, X):
        X = np.asarray(X, dtype=np.float64)
        emb = X.shape[1] - self.free
        return np.hstack([X[:, :emb], self.s * self._memb(X), X[:, emb:]])

    def fit(self, X, S):
        from sklearn.cluster import KMeans
        from indexer.solver import HyperplaneSolver
        self.free = int(self.options.get("free", 0) or 0)
        emb = X.shape[1] - self.free
        self.qw = emb // 2 if represent.is_split(self.space) else emb
        Z = np.asarray(X[:, :self.qw], dtype=np.float64)
        rng = np.random.default_rng(0)
        samp = rng.choice(len(Z), min(3000, len(Z)), replace=False)
        km = KMeans(self.C, n_init=1, random_state=0, max_iter=50).fit(Z[samp])
        c = km.cluster_centers_
        self.cent = c / np.linalg.norm(c, axis=1, keepdims=True)
        solver = HyperplaneSolver(**self.options).fit(self._tx(X), S)
        return Fitted(lambda Q: solver.predict(self._tx(Q)).T, source_means(S))


def _grid(text):
    """GRID: comma-separated ``a:b[:kind]`` entries (the module docstring), each a tuple of numbers."""
    try:
        grid = [tuple(float(v) for v in g.split(":")) for g in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: entries are a:b[:kind] numbers, comma-separated (e.g. 16:3,13:3:1)")
    if any(len(g) not in (2, 3) for g in grid):
        raise argparse.ArgumentTypeError(f"{text!r}: each entry is a:b or a:b:kind")
    return grid


def main():
    from indexer.evaluate import SPLIT_CHOICES
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="a data folder, or several joined by '+' (pooled)")
    ap.add_argument("split", choices=SPLIT_CHOICES)
    ap.add_argument("method", help="the default's method (auto-mc, ...)")
    ap.add_argument("grid", type=_grid, help="comma-separated a:b[:kind] entries (above)")
    ap.add_argument("seeds", type=int, nargs="?", default=5, help="seeds of the in-sample and coverage splits (5)")
    args = ap.parse_args()  # before: sys.argv read by position, so --help or a missing argument was an IndexError
    data, split, method, grid, seeds = args.data.split("+"), args.split, args.method, args.grid, args.seeds
    from indexer.encoder import get_encoder
    m, datasets, names = load_pooled(data)
    enc = get_encoder(None)
    D = enc.encode(m.texts)
    space = _default_space(method)
    own = _default_rows(m.texts, m.texts, D, D, space, None)
    rows, fill = (own[:2], own[2]) if own is not None else (None, None)
    extra = {}
    X0, XQ0 = rows if rows is not None else (D, D)
    codes = np.unique(np.asarray(m.benchmarks, dtype=str), return_inverse=True)[1].astype(np.float64)[:, None]
    Xb, XQb = np.hstack([X0, codes]), np.hstack([XQ0, codes])
    fillb = None
    if fill is not None:
        def fillb(XQ, Xs):
            return np.hstack([fill(XQ[:, :-1], Xs[:, :-1]), XQ[:, -1:]])
    for k, s, *kind in grid:
        if kind and kind[0] == 2:  # per-benchmark free columns on the default's rows (no index form)
            from indexer.evaluation.contestants import SolverContestant
            names_, cds = np.unique(np.asarray(m.benchmarks, dtype=str), return_inverse=True)
            onehot = np.eye(len(names_))[cds][:, 1:]
            opts = dict(space.options); opts["free"] = int(opts.get("free", 0) or 0) + onehot.shape[1]
            w0 = X0.shape[1]
            Xa, XQa = np.hstack([X0, onehot]), np.hstack([XQ0, np.zeros_like(onehot)])
            qw = represent.question_width(w0) if represent.is_split(space) else w0
            def filla(XQ, Xs, w0=w0, qw=qw, kk=int(k)):
                left = fill(XQ[:, :w0], Xs[:, :w0]) if fill is not None else XQ[:, :w0]
                sims = XQ[:, :qw] @ Xs[:, :qw].T
                nn = np.argpartition(-sims, kk - 1, axis=1)[:, :kk]
                return np.hstack([left, Xs[nn, w0:].mean(axis=1)])
            def fillk(XQ, Xs, w0=w0):
                left = fill(XQ[:, :w0], Xs[:, :w0]) if fill is not None else XQ[:, :w0]
                return np.hstack([left, XQ[:, w0:]])
            extra[f"absorb nn{int(k)}"] = SolverContestant(opts, rows=(Xa, XQa), fill=filla)
            extra["absorb known"] = SolverContestant(opts, rows=(Xa, Xa), fill=fillk)
            continue
        if kind and kind[0] >= 3:  # cluster columns: k = C, s, T = kind - 3 (0 = hard)
            T = float(kind[0] - 3) / 100.0
            extra[f"clus C{int(k)} s{s:g} T{T:g}"] = ClusterCols(space.options, space, int(k), s, T, rows, fill)
            continue
        if kind and kind[0] == 1:
            extra[f"bench k{int(k)} s{s:g}"] = Level(space.options, space, int(k), s, (Xb, XQb), fillb, True)
        else:
            extra[f"level k{int(k)} s{s:g}"] = Level(space.options, space, int(k), s, rows, fill)
    t0 = time.time()
    res = evaluate(data if len(data) > 1 else data[0], split=split, seeds=seeds, method=method, sweep=False,
                   matrix=m, embeddings=D, contestants=extra, datasets=datasets, peers="fast")
    out = {}
    for sp, r in (res.items() if "methods" not in res else [(split, res)]):
        if not isinstance(r, dict) or "methods" not in r:
            continue
        print(f"== {sp} ({time.time()-t0:.0f}s)")
        for name, mm in r["methods"].items():
            line = f"{name:18s} auc {mm['auc']:.4f} sel {mm['selection_accuracy']:.4f} ece {mm.get('ece', float('nan')):.3f} t {mm['seconds']:.1f}"
            for part in ("covered", "uncovered"):
                if part in mm:
                    line += f" | {part[:3]} auc {mm[part]['auc']:.4f} sel {mm[part]['selection_accuracy']:.4f}"
            for ds in (mm.get("datasets") or {}):
                dd = mm["datasets"][ds]
                line += f" | {ds} auc {dd['auc']:.4f} sel {dd['selection_accuracy']:.4f}"
            print(line)
        out[sp] = {n: {k: v for k, v in mm.items() if k != "folds"} for n, mm in r["methods"].items()}
    path = f"/tmp/bench_level_{'+'.join(x.rstrip('/').split('/')[-1] for x in data)}_{split}_{method}.json"
    print("json:", path)
    from indexer.cli_index import json_text  # standard JSON: a metric without a value is null, not NaN

    Path(path).write_text(json_text(out, indent=None))

if __name__ == "__main__":
    import sys

    from indexer.errors import IndexerError

    try:
        main()
    except IndexerError as exc:  # a bad DATA or option value: one line and its exit code, as `taskspace evaluate`
        print(f"error: {exc}", file=sys.stderr)  # says it (before: a traceback)
        sys.exit(exc.exit_code)
