"""Issue 13's pooled target on the same held-out prompts: several data sets pooled into one index against each alone.

`taskspace evaluate A B --split in-sample` holds out a random 20% of the *pooled* prompts per seed, so its numbers for
data set A are on other prompts than `taskspace evaluate A --split in-sample` (whose seeds draw from A's prompts
only): the difference between the two runs mixes pooling with the draw. Here every seed's pooled fold is also run
alone: for each data set, the models with an outcome on it, fitted on the fold's source prompts of that data set
only and scored on the fold's target prompts of it, the same prompts the pooled fit is scored on. The default
contestant exactly as `taskspace evaluate` builds it (the index form and its calibration).

    TASKSPACE_CACHE_DIR=/work/cache python benchmarks/bench_pooled.py DATA_A DATA_B [...] [--seeds N] [--split in-sample|oos] [--prior-formats]

``oos`` (leave one benchmark out) is on the same prompts in both runs already; it is offered for completeness.
Prints, per data set, AUC / selection accuracy / ECE of the pooled fit and of the fit alone (mean over folds,
selection among that data set's models observed on each prompt). ``--prior-formats``: the default with the prior
per answer format (space param ``levels = level-deviation-v2``, :func:`indexer.represent.prior_formats`), when it
is not the default already.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer import evaluate as ev  # noqa: E402
from indexer.evaluation import protocol, splits  # noqa: E402
from indexer.evaluation.contestants import SolverContestant  # noqa: E402


def fold_means(per_fold: list[dict]) -> dict:
    """AUC, selection accuracy and ECE, each the mean over the folds that have a value, as `taskspace evaluate`
    averages them (``protocol._stats``: a fold whose held-out cells are all successes has no AUC); NaN without one."""
    return {k: protocol._stats([f.get(k) for f in per_fold])[0] for k in ("auc", "selection_accuracy", "ece")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="+")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--split", default="in-sample", choices=["in-sample", "oos"])
    ap.add_argument("--prior-formats", action="store_true")
    args = ap.parse_args()
    if len(args.data) < 2:
        sys.exit("give at least two data folders")
    if args.prior_formats:
        import dataclasses
        from indexer import space
        space.METHODS["auto-mc"] = dataclasses.replace(space.METHODS["auto-mc"], prior_formats=True)
    default = ev._default_space(None)
    m, datasets, names = ev.load_pooled(args.data, None)
    from indexer.encoder import get_encoder

    D = get_encoder(None).encode(m.texts)
    own = ev._default_rows(m.texts, m.texts, D, D, default, None)
    rows, fill = (own[:2], own[2]) if own is not None else (None, None)

    def contestant(idx=None):
        r = None if rows is None else ((rows[0], rows[1]) if idx is None else (rows[0][idx], rows[1][idx]))
        return {"default": SolverContestant(default.options, rows=r, fill=fill, space=default)}

    folds = (splits.in_sample(len(m.texts), args.seeds) if args.split == "in-sample"
             else splits.leave_one_group_out(m.labels(None)))
    ds = np.asarray(datasets, dtype=object)
    pooled = protocol.run_folds(D, m.scores, m.benchmarks, folds, contestant(), datasets=ds)
    print(f"{len(m.models)} models x {len(m.texts)} prompts pooled, {len(folds)} folds ({args.split})")
    for name in names:
        idx = np.flatnonzero(ds == name)
        if not idx.size:  # every prompt of it is also in an earlier data set, where it counts (as evaluate counts it)
            print(f"{name}: no prompts of its own (each is also in an earlier data set, where it counts); not compared")
            continue
        pos = {int(p): k for k, p in enumerate(idx)}
        S = m.scores[:, idx]
        models = (~np.isnan(S)).any(axis=1)
        alone_folds = []
        for f in folds:
            tr = np.array([pos[int(p)] for p in f.train if int(p) in pos], dtype=np.int64)
            te = np.array([pos[int(p)] for p in f.test if int(p) in pos], dtype=np.int64)
            if te.size and tr.size:
                alone_folds.append(splits.Fold(f.name, tr, te))
        alone = protocol.run_folds(D[idx], S[models], m.benchmarks[idx], alone_folds, contestant(idx))
        got = {}
        for label, res in (("pooled", [r.methods["default"]["datasets"][name] for r in pooled
                                       if name in r.methods["default"].get("datasets", {})]),
                           ("alone", [r.methods["default"] for r in alone])):
            got[label] = fold_means(res)
        p, a = got["pooled"], got["alone"]
        print(f"{name}: pooled {p['auc']:.4f} / {p['selection_accuracy']:.4f} / {p['ece']:.4f}; alone {a['auc']:.4f} / "
              f"{a['selection_accuracy']:.4f} / {a['ece']:.4f}; pooled - alone AUC {p['auc'] - a['auc']:+.4f}, "
              f"selection {p['selection_accuracy'] - a['selection_accuracy']:+.4f}", flush=True)


if __name__ == "__main__":
    import sys

    from indexer.errors import IndexerError

    try:
        main()
    except IndexerError as exc:  # a bad DATA or option value: one line and its exit code, as `taskspace evaluate`
        print(f"error: {exc}", file=sys.stderr)  # says it (before: a traceback)
        sys.exit(exc.exit_code)
