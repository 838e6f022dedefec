"""Experiment (issue 13's pooled target; not a product option): the ``'mean'`` prior estimated otherwise, by
replacing ``HyperplaneSolver._prior_of`` in this process only, then one `taskspace evaluate` of the default:

    TASKSPACE_CACHE_DIR=/work/cache python benchmarks/bench_prior.py DATA[+DATA2] SPLIT precision|coverage|format|performat

- ``precision``: the precision-weighted mean of the models' normals, each weighted by its coverage pattern's
  centred Gram (a direction is not diluted by models that never saw prompts along it);
- ``coverage``: the same with each pattern's Gram divided by its number of prompts (directions, not counts);
- ``format``: the plain mean, but the options half of a split space's normals averaged over the models observed
  on prompts with options only (a single-format data set is unchanged by construction);
- ``performat``: the default with a prior per answer format (space param ``levels = level-deviation-v2``: each model
  shrunk toward the mean normal of the models seen on its format(s), mixed by its cells' formats, and the map's
  prior part ``u_i . (x - mu_i)`` with the model's own ``u_i``; :func:`indexer.represent.prior_formats`).
"""
import sys
import numpy as np
from indexer.solver.estimator import HyperplaneSolver

def _prior_weighted(self, E):
    """The normals' mean weighted by each coverage pattern's centred Gram (divided by its prompts for ``coverage``)."""
    p = E.shape[1]
    A = np.zeros((p, p)); b = np.zeros(p)
    by = {}
    for i, k in enumerate(self._models.pattern):
        by.setdefault(k, []).append(i)
    for key, (n, eig) in self.factors(list(by)).items():
        G = (eig.V * eig.w) @ eig.V.T
        if self._weighting == "coverage":
            G = G / n
        idx = by[key]
        A += len(idx) * G
        b += G @ E[idx].sum(axis=0)
    ridge = 1e-6 * np.trace(A) / p
    return np.linalg.solve(A + ridge * np.eye(p), b)

def _prior_format(self, E):
    """The plain mean of the normals, but the options half (split spaces) averaged over the models observed on
    prompts with options only."""
    p = E.shape[1]
    u = E.mean(axis=0)
    if self.free == 4:
        d = p // 2
        mc = np.array([bool((np.asarray(self._coverage.patterns[k].mask) & (np.asarray(self._coverage.D[:, p]) > 0)).any())
                       for k in self._models.pattern])
        if mc.any():
            u[d:] = E[mc, d:].mean(axis=0)
    return u

if __name__ == "__main__":
    import argparse
    from indexer.evaluate import SPLIT_CHOICES
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="a data folder, or several joined by '+' (pooled)")
    ap.add_argument("split", choices=SPLIT_CHOICES)
    ap.add_argument("prior", choices=("precision", "coverage", "format", "performat"))
    args = ap.parse_args()  # before: sys.argv read by position, so --help or a missing argument was an IndexError
    if args.prior == "performat":
        import dataclasses
        from indexer import space
        space.METHODS["auto-mc"] = dataclasses.replace(space.METHODS["auto-mc"], prior_formats=True)
    else:
        HyperplaneSolver._prior_of = _prior_format if args.prior == "format" else _prior_weighted
    HyperplaneSolver._weighting = args.prior
    from indexer.evaluate import evaluate
    from indexer.errors import IndexerError
    data = args.data.split("+")
    try:
        res = evaluate(data if len(data) > 1 else data[0], split=args.split, sweep=False)
    except IndexerError as exc:  # a bad DATA: one line and its exit code (before: a traceback)
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    parts = [(k, v) for k, v in res.items() if isinstance(v, dict) and "methods" in v] or [(args.split, res)]
    for sp, r in parts:
        m = r["methods"]["default"]
        line = f"{sp} default({args.prior} prior) auc {m['auc']:.4f} sel {m['selection_accuracy']:.4f} ece {m['ece']:.3f}"
        for part in ("covered", "uncovered"):
            if part in m:
                line += f" | {part[:3]} {m[part]['auc']:.4f} {m[part]['selection_accuracy']:.4f}"
        for ds, dd in (m.get("datasets") or {}).items():
            line += f" | {ds} {dd['auc']:.4f} {dd['selection_accuracy']:.4f}"
        print(line, flush=True)

