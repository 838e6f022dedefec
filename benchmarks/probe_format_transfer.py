"""Probe (issue 13, the mixed index): how well a model's success is predicted in an answer format it was never
measured in (docs/RESULTS.md, "Predicting a format a model was never measured in").

    HF_HUB_OFFLINE=1 TASKSPACE_CACHE_DIR=/work/cache python benchmarks/probe_format_transfer.py DATA_A DATA_B [...]

The data folders are pooled as `taskspace evaluate` pools them (models merged by their index key). A *bridge* is a
model measured in both answer formats (prompts with answer options, prompts without) on at least
``MIN_CELLS`` (20) prompts each. For each bridge and each format, its outcomes in that format are hidden (it is
then a model measured in the other format only, as most models of a mixed index are), the default is fitted on every
other cell, and the bridge's mean predicted probability on the hidden prompts is compared with its true success rate
there; also where that prediction would rank it among the models measured in that format (by their true rates)
against where its true rate ranks it. Printed per bridge, then the mean absolute and mean signed error of the rate
and the mean absolute rank error.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: the fewest outcomes of a model in each answer format for it to count as a bridge
MIN_CELLS = 20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="+", type=Path, help="two or more data folders, pooled as `taskspace evaluate` pools them")
    args = ap.parse_args()
    if len(args.data) < 2:
        ap.error("give at least two data folders")
    for d in args.data:
        if not d.is_dir():
            ap.error(f"{d}: not a folder")

    from indexer import evaluate as ev
    from indexer import represent
    from indexer.encoder import get_encoder
    from indexer.evaluation.contestants import SolverContestant

    m, datasets, _ = ev.load_pooled([str(d) for d in args.data], None)
    default = ev._default_space(None)
    D = get_encoder(None).encode(m.texts)
    X, XQ, fill = ev._default_rows(m.texts, m.texts, D, D, default, None)
    formats = represent.prompt_formats(X, default)
    if formats is None:
        ap.error("the default space keeps one prior: no answer formats to transfer between")
    S = np.asarray(m.scores, dtype=np.float64)
    obs = ~np.isnan(S)
    n_f = np.stack([obs[:, formats == f].sum(axis=1) for f in (0, 1)], axis=1)
    bridges = np.flatnonzero((n_f >= MIN_CELLS).all(axis=1))
    names = list(m.models)
    print(f"{S.shape[0]} models x {S.shape[1]} prompts ({int((formats == 0).sum())} with answer options, "
          f"{int((formats == 1).sum())} without); {bridges.size} bridges")
    results = []
    for b in bridges:
        for f, fname in ((0, "options"), (1, "no options")):
            cols = np.flatnonzero((formats == f) & obs[b])
            Sb = S.copy()
            Sb[b, cols] = np.nan
            truth = float(S[b, cols].mean())
            peers = np.flatnonzero(n_f[:, f] >= MIN_CELLS)
            peers = peers[peers != b]
            rates = np.array([np.nanmean(S[i, formats == f]) for i in peers])
            line = [f"{names[b][:40]:40s} {fname:10s} n {cols.size:5d} true {truth:.3f}"]
            fitted = SolverContestant(default.options, rows=(X, XQ), fill=fill, space=default).fit(X, Sb)
            pred = float(fitted.probability(X[cols])[b].mean())
            rank_pred = int((rates > pred).sum()) + 1
            rank_true = int((rates > truth).sum()) + 1
            results.append((pred - truth, abs(rank_pred - rank_true)))
            line.append(f"predicted {pred:.3f} (rank {rank_pred} vs {rank_true} of {peers.size + 1})")
            print("  ".join(line), flush=True)
    if not results:
        print("no bridge: nothing to measure")
        return
    e = np.array([x[0] for x in results])
    rk = np.array([x[1] for x in results])
    print(f"rate error mean |e| {np.abs(e).mean():.4f}, mean e {e.mean():+.4f}; "
          f"rank error mean {rk.mean():.2f} over {e.size} (bridge, format) cases")


if __name__ == "__main__":
    main()
