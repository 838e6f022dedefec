"""Time a full `taskspace evaluate` (both splits, 5 seeds, all methods and baselines, the eps/lambda sweep).

    TASKSPACE_CACHE_DIR=.taskspace/cache python benchmarks/bench_evaluate.py [DATA ...] [--encoder NAME]
        [--group-by FIELD] [--json OUT.json]

DATA defaults to ../shared/data/mmlu_pro. The first run encodes every prompt (about 8 minutes for mmlu_pro with
MiniLM on 2 CPU cores) and fills the embedding cache; the timing that counts is a run with a warm cache, so the
script runs the evaluation and reports read / encode / evaluate seconds separately. Results go in
docs/RESULTS.md (speed section).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", nargs="*", default=[str(ROOT.parent / "shared" / "data" / "mmlu_pro")])
    ap.add_argument("--encoder", default=None)
    ap.add_argument("--group-by", default=None)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--json", type=Path, default=None, help="write every number here")
    args = ap.parse_args()

    from indexer.evaluate import evaluate

    everything = {}
    for data in args.data:
        t0 = time.perf_counter()
        res = evaluate(data, split="both", seeds=args.seeds, encoder=args.encoder, group_by=args.group_by)
        wall = time.perf_counter() - t0
        everything[data] = res
        ran = [(split, res[split]) for split in ("in-sample", "oos") if split in res]  # one benchmark: no oos
        first = ran[0][1]
        print(f"{data}: {first['models']} models x {first['prompts']} prompts, encoder {first['encoder']}")
        print(f"  wall {wall:.1f}s = read {first['seconds']['read']:.1f}s + encode {first['seconds']['encode']:.1f}s "
              + "".join(f"+ {split} {r['seconds']['evaluate']:.1f}s " for split, r in ran))
        for split, why in res.get("skipped", {}).items():
            print(f"  split {split} not run: {why}")
        for split, r in ran:
            for name, m in r["methods"].items():
                print(
                    f"  {split:<9} {name:<8} auc {m['auc']:.3f} acc {m['accuracy']:.3f} r {m['correlation']:.3f} "
                    f"sel {m['selection_accuracy']:.3f} recall {m['selection_recall']:.3f} ({m['seconds']:.1f}s)"
                )
            print(f"  {split:<9} oracle   sel {r['oracle']:.3f}")
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
