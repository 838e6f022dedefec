"""Every contestant, the published peers included, side by side: `taskspace evaluate --peers all` on one data
folder and the splits asked for, as the markdown tables of docs/RESULTS.md (peers section), with each
contestant's fit (+ predict) seconds per fold and the wall time of each split.

    TASKSPACE_CACHE_DIR=/work/cache python benchmarks/bench_peers.py ../shared/data/mmlu_pro \
        [--splits in-sample,oos,coverage] [--peers all] [--sweep] [--method M] [--json OUT.json]

The embeddings come from the cache (the first run encodes every prompt). ``--sweep`` adds the paper method's
eps/lambda ablation, as a plain `taskspace evaluate` runs it (the 10-minute budget of issue 19 is measured with
it: `taskspace evaluate DATA --split both --peers all`).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLS = [("auc", "AUC"), ("accuracy", "sign acc"), ("correlation", "bench r"), ("selection_accuracy", "sel acc"),
        ("selection_recall", "sel recall"), ("ece", "ECE"), ("brier", "Brier")]


def _num(m: dict, key: str) -> str:
    x, sd = m.get(key), m.get(key + "_std")
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.3f}" if sd is None or math.isnan(sd) else f"{x:.3f} ± {sd:.3f}"


def table(res: dict) -> str:
    """The markdown table of one split: every contestant, its metrics and fit seconds per fold."""
    folds = max(1, len(res["folds"]))
    lines = ["| method | " + " | ".join(label for _, label in COLS) + " | fit s/fold |",
             "|---" * (len(COLS) + 2) + "|"]
    best_auc = max((m["auc"] for m in res["methods"].values() if m["auc"] == m["auc"]), default=None)
    for name, m in res["methods"].items():
        cells = [_num(m, k) for k, _ in COLS]
        if best_auc is not None and m["auc"] == best_auc:
            cells[0] = f"**{cells[0]}**"
        lines.append(f"| `{name}` | " + " | ".join(cells) + f" | {m['seconds'] / folds:.2f} |")
    o = res["oracle_detail"]
    lines.append("| oracle | | | | " + f"{_num(o, 'selection_accuracy')} | {_num(o, 'selection_recall')} | | | |")
    for part in ("covered", "uncovered"):
        if any(part in m for m in res["methods"].values()):
            lines += ["", f"{part} models (selection among them only):", "",
                      "| method | AUC | sel acc | ECE | Brier |", "|---|---|---|---|---|"]
            for name, m in res["methods"].items():
                p = m.get(part) or {}
                lines.append(f"| `{name}` | " + " | ".join(_num(p, k) for k in ("auc", "selection_accuracy", "ece", "brier")) + " |")
    return "\n".join(lines)


def _absorb(method: str | None, benchmarks, D, k: int = 10) -> dict:
    """An experiment, not a product option: ``default+bench``, the default's solver (``method``, plain-embedding
    methods only) with one unpenalised column per benchmark but the first (the solver's ``free`` covariates: a
    per-model, per-benchmark intercept, closed form, no training), each query's benchmark columns the mean of its
    ``k`` nearest source prompts' (its benchmark is not known to a person's query; in a fold, the source's
    neighbours stand in); ``default+bench(known)``: the same given each query's own benchmark, as ``benchbest``
    is."""
    import numpy as np

    from indexer.evaluation.contestants import SolverContestant
    from indexer.space import configured

    space = configured(method=method)
    names, codes = np.unique(np.asarray(benchmarks, dtype=str), return_inverse=True)
    onehot = np.eye(len(names))[codes][:, 1:]  # (N, B - 1)
    d = D.shape[1]
    X = np.hstack([D, onehot])
    XQ = np.hstack([D, np.zeros_like(onehot)])

    def fill(XQ_fold, X_src):
        sims = XQ_fold[:, :d] @ X_src[:, :d].T  # (q, n) cosine of the embeddings
        nn = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        out = XQ_fold.copy()
        out[:, d:] = X_src[nn, d:].mean(axis=1)  # the neighbours' benchmark mix
        return out

    opts = dict(space.options)
    opts["free"] = int(opts.get("free", 0) or 0) + onehot.shape[1]
    return {"default+bench": SolverContestant(opts, rows=(X, XQ), fill=fill),
            # the same with each query's own benchmark (what `benchbest` is given)
            "default+bench(known)": SolverContestant(opts, rows=(X, X))}


def _splits(text: str) -> list[str]:
    """``--splits``: every name checked before anything runs (before: a bad one failed with a traceback after the
    splits before it had run, their numbers lost), ``all`` and ``both`` as the splits they stand for (before, a
    KeyError after running them: their result holds one result per split)."""
    from indexer.evaluate import SPLIT_CHOICES, SPLITS

    names = [t.strip() for t in text.split(",")]
    bad = [n for n in names if n not in SPLIT_CHOICES]
    if bad:
        raise argparse.ArgumentTypeError(f"{', '.join(map(repr, bad))}: use splits of {', '.join(SPLIT_CHOICES)}, "
                                         "comma-separated")
    return list(dict.fromkeys(one for n in names for one in SPLITS[n]))


def _seeds(text: str) -> int:
    from indexer.evaluate import MAX_SEEDS

    n = int(text)
    if not 1 <= n <= MAX_SEEDS:
        raise argparse.ArgumentTypeError(f"{n}: need 1 to {MAX_SEEDS} seeds")
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    ap.add_argument("--splits", type=_splits, default="in-sample,oos",
                    help="comma-separated splits of `taskspace evaluate --split` (in-sample,oos)")
    ap.add_argument("--peers", default="all", choices=("none", "fast", "all"))
    ap.add_argument("--seeds", type=_seeds, default=5, help="seeds of the in-sample and coverage splits (5)")
    ap.add_argument("--group-by", default=None)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--method", default=None, help="the `default` contestant's method (default TASKSPACE_METHOD)")
    ap.add_argument("--absorb", action="store_true", help="add the `default+bench` experiment (in-sample only)")
    ap.add_argument("--json", type=Path, default=None, help="write every number here")
    args = ap.parse_args()

    from indexer.errors import ConfigError, InputError
    from indexer.evaluate import evaluate, load_matrix

    everything, skipped = {}, {}
    extra, matrix, emb = None, None, None
    t0 = time.perf_counter()
    if args.absorb or len(args.splits) > 1:  # read once: a DATA that cannot be read is its error, before any split
        matrix = load_matrix(args.data, args.group_by)
    read = time.perf_counter() - t0
    if args.absorb:
        from indexer.encoder import get_encoder

        emb = get_encoder(None).encode(matrix.texts)
        extra = _absorb(args.method, matrix.benchmarks, emb)
    for split in args.splits:
        t0 = time.perf_counter()
        try:
            res = evaluate(args.data, split=split, seeds=args.seeds, group_by=args.group_by, peers=args.peers,
                           sweep=args.sweep, method=args.method, contestants=extra, matrix=matrix, embeddings=emb)
        except InputError as exc:
            # of several splits, one the data cannot take (coverage of one model, oos of one benchmark) is named and
            # the others run, as `taskspace evaluate --split all` does; before, its error ended the run after the
            # splits before it, their --json never written
            if len(args.splits) == 1 or isinstance(exc, ConfigError):
                raise
            skipped[split] = str(exc)
            print(f"split {split} not run: {exc}\n", flush=True)
            continue
        if matrix is not None and "read" in res["seconds"]:
            res["seconds"]["read"] += read  # read once before the splits (0 from here on)
            read = 0.0
        wall = time.perf_counter() - t0
        everything[split] = res
        print(f"### {Path(args.data).name} {split}: {res['protocol']}\n")
        print(f"{res['models']} models x {res['prompts']} prompts, encoder `{res['encoder']}`; "
              f"{wall:.0f} s wall (read {res['seconds']['read']:.1f} s, encode {res['seconds']['encode']:.1f} s)\n")
        print(table(res) + "\n", flush=True)
    if not everything:
        raise InputError("no split of --splits can run on this data: "
                         + "; ".join(f"{sp}: {why}" for sp, why in skipped.items()))
    if skipped:
        everything["skipped"] = skipped
    if args.json:
        from indexer.cli_index import json_text  # standard JSON: a metric without a value is null, not NaN

        args.json.write_text(json_text(everything, indent=1))


if __name__ == "__main__":
    import sys

    from indexer.errors import IndexerError

    try:
        main()
    except IndexerError as exc:  # a bad DATA or option value: one line and its exit code, as `taskspace evaluate`
        print(f"error: {exc}", file=sys.stderr)  # says it (before: a traceback)
        sys.exit(exc.exit_code)
