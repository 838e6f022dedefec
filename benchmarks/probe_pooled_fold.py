"""Probe (issue 13's pooled target): where one leave-one-benchmark-out fold of a pooled run loses selection.

    HF_HUB_OFFLINE=1 TASKSPACE_CACHE_DIR=/work/cache python benchmarks/probe_pooled_fold.py DATA_A DATA_B [...] --fold LABEL [--top 6]

``benchmarks/bench_pooled.py --split oos`` compares the default fitted on the pooled data sets with the default
fitted on the held-out benchmark's own data set alone, on the same targets; this takes one of its folds (``LABEL``
as `taskspace evaluate` names the groups, e.g. ``mmlu_pro/math`` or ``humaneval``) and prints, for both fits, the
selection accuracy among the held-out data set's models and the models selected most often, with how often, their
true success rate on the targets and their mean predicted probability there. Models measured in more than one of the
data sets (the ones pooling gives outcomes of another data set) are marked ``both``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="+", type=Path, help="two or more data folders, pooled as `taskspace evaluate` pools them")
    ap.add_argument("--fold", required=True, help="the held-out group (benchmark or category) to look at")
    ap.add_argument("--top", type=int, default=6, help="how many of the most selected models to list (default 6)")
    args = ap.parse_args()
    if len(args.data) < 2:
        ap.error("give at least two data folders")
    for d in args.data:
        if not d.is_dir():
            ap.error(f"{d}: not a folder")
    if args.top < 1:
        ap.error("--top must be at least 1")

    from indexer import evaluate as ev
    from indexer.encoder import get_encoder
    from indexer.evaluation.contestants import SolverContestant

    m, datasets, _ = ev.load_pooled([str(d) for d in args.data], None)
    labels, ds = np.asarray(m.labels(None)), np.asarray(datasets)
    if args.fold not in set(labels.tolist()):
        ap.error(f"--fold {args.fold!r}: no such group; the groups are {', '.join(sorted(set(labels.tolist())))}")
    default = ev._default_space(None)
    D = get_encoder(None).encode(m.texts)
    X, XQ, fill = ev._default_rows(m.texts, m.texts, D, D, default, None)
    te = np.flatnonzero(labels == args.fold)
    own = ds[te][0]
    St = m.scores[:, te]
    on_target = ~np.isnan(St).all(axis=1)
    both = on_target & (~np.isnan(m.scores[:, ds != own])).any(axis=1)
    print(f"{args.fold}: {te.size} targets of {own}, {int(on_target.sum())} models measured on them, "
          f"{int(both.sum())} also on another data set")
    for name, train in (("pooled", np.flatnonzero(labels != args.fold)),
                        ("alone", np.flatnonzero((labels != args.fold) & (ds == own)))):
        S = m.scores[:, train]
        keep = ~np.isnan(S).all(axis=1)
        fitted = SolverContestant(default.options, rows=(X[train], XQ[train]), fill=fill,
                                  space=default).fit(X[train], S[keep])
        Z = np.full(St.shape, -np.inf)  # the logit of each model's probability (the folded score), -inf: not chosen
        Z[keep] = fitted.predict(fill(XQ[te], X[train]))
        Z[~on_target[:, None] | np.isnan(St)] = -np.inf  # selection among the data set's models observed on each prompt
        pick = np.argmax(Z, axis=0)
        print(f"{name}: selection {float(np.nanmean(St[pick, np.arange(te.size)])):.4f}")
        models, counts = np.unique(pick, return_counts=True)
        for i, n in sorted(zip(models, counts), key=lambda t: -t[1])[:args.top]:
            z = Z[i][np.isfinite(Z[i])]
            print(f"  {m.models[i]}: chosen {n}, true rate {float(np.nanmean(St[i])):.3f}, "
                  f"mean p {float(np.mean(1 / (1 + np.exp(-z)))):.3f}{'  both' if both[i] else ''}")


if __name__ == "__main__":
    main()
