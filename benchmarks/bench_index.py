"""Indexing-worker benchmark: from-scratch pass over real data, a second pass with nothing new, and a pass
that adds one model's results.

    python benchmarks/bench_index.py [--data DIR ...] [--cache-dir DIR] [--home DIR]

Defaults: ../shared/data/mmlu_pro and ../shared/data/evalarena_code, MiniLM, a fresh data directory, and a
fresh (cold) embedding cache unless --cache-dir points at a warm one. Prints a Markdown table: seconds per
stage (ingest / embed / solve / vectors / index) of the first pass, the second pass in-process and as the
`taskspace index` command (process start and imports included), and the one-model pass.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_model_source(data: Path, out: Path) -> str:
    """A table source with one existing model's mmlu_pro results under a new name (its prompts are known)."""
    out.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if (data / "outcomes.csv.gz").exists() else open
    src = data / "outcomes.csv.gz" if (data / "outcomes.csv.gz").exists() else data / "outcomes.csv"
    with opener(src, "rt", newline="") as f:
        rows = list(csv.DictReader(f))
    first = rows[0]["model"]
    with open(out / "outcomes.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "prompt_id", "correct"])
        for r in rows:
            if r["model"] == first:
                w.writerow(["bench-org/new-model", r["prompt_id"], r["correct"]])
    prompts = next(p for p in data.iterdir() if p.name.startswith("prompts.jsonl"))
    os.symlink(prompts.resolve(), out / prompts.name)
    return first


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", type=Path,
                    default=[ROOT.parent / "shared/data/mmlu_pro", ROOT.parent / "shared/data/evalarena_code"])
    ap.add_argument("--cache-dir", type=Path, default=None, help="embedding cache (default: a fresh, cold one)")
    ap.add_argument("--home", type=Path, default=None)
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-index-"))
    os.environ["TASKSPACE_HOME"] = str(args.home or work / "home")
    os.environ["TASKSPACE_CACHE_DIR"] = str(args.cache_dir or work / "cache")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from indexer.config import reset_settings
    from indexer.pipeline import Progress, run_index
    from indexer.sourcelist import SourceSpec

    reset_settings()
    print(f"data: {', '.join(str(d) for d in args.data)}; cache: {os.environ['TASKSPACE_CACHE_DIR']}", file=sys.stderr)
    t0 = time.perf_counter()
    first = run_index([SourceSpec(str(d.resolve())) for d in args.data], progress=Progress(False))
    t_first = time.perf_counter() - t0
    assert first.status == "ok", first.errors

    t0 = time.perf_counter()
    second = run_index(progress=Progress(False))
    t_second = time.perf_counter() - t0
    assert second.counts["solved"] == 0 and second.counts["embedded"] == 0, second.counts

    exe = Path(sys.executable).parent / "taskspace"
    t0 = time.perf_counter()
    subprocess.run([str(exe), "index"], check=True, capture_output=True)
    t_cli = time.perf_counter() - t0

    copied = one_model_source(args.data[0], work / "one-model")
    t0 = time.perf_counter()
    third = run_index([SourceSpec(str(work / "one-model"))], progress=Progress(False))
    t_third = time.perf_counter() - t0
    assert third.status == "ok" and third.counts["solved"] == 1, (third.counts, third.errors)

    c = first.counts
    print(f"\nfirst pass: {c['models_added']} models, {c['prompts_added']} prompts, {c['outcomes_added']} outcomes, "
          f"{c['embedded']} prompts embedded, {c['solved']} models solved\n")
    print("| pass | ingest | setup | load | embed | solve | vectors | index | pass total (in lock) | wall |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, rep, total in [("from scratch", first, t_first), ("nothing new (in-process)", second, t_second),
                             (f"one model added ({copied} renamed)", third, t_third)]:
        s = rep.seconds
        cells = " | ".join(f"{s.get(k, 0.0):.2f}" for k in ("ingest", "setup", "load", "embed", "solve", "vectors", "index"))
        print(f"| {name} | {cells} | {s.get('total', 0.0):.2f} | {total:.2f} |")
    print(f"| nothing new (`taskspace index`, process start included) | | | | | | | | | {t_cli:.2f} |")


if __name__ == "__main__":
    main()
