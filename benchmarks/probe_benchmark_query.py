"""How close a benchmark query's probability comes to the model's success rate on that benchmark's unseen prompts.

`taskspace search --benchmark B` answers with each model's calibrated probability at B's vector (the mean of B's
indexed prompt rows), and shows beside it the model's observed accuracy on B. Which is the better estimate of how
the model does on more prompts of B? Per seed, a random share of each benchmark's prompts is held out, the rest is
indexed as a table source (a real index: SQLite + the embedded Qdrant, in a temporary home), every benchmark is
queried, and each model's answer is compared with its success rate on the held-out prompts of that benchmark:

- ``probability``: the benchmark query's calibrated probability (what the table ranks by);
- ``observed``: the model's accuracy on the benchmark's indexed prompts (the "measured on it" column);
- ``shrunk K``: the observed accuracy shrunk toward the probability by K pseudo-prompts,
  ``(n observed + K probability) / (n + K)`` (``n``: the model's indexed prompts of the benchmark).

Reported per estimate: the mean absolute error against the held-out rate over (model, benchmark) pairs, and the
held-out rate of the model each one ranks first per benchmark against the best held-out rate (selection).

    TASKSPACE_CACHE_DIR=/work/cache python benchmarks/probe_benchmark_query.py DATA [--seeds N] [--holdout F] [--per-benchmark N]

``DATA``: a table source folder (``outcomes.csv[.gz]`` + ``prompts.jsonl[.gz]``, as in ../shared/data);
``--per-benchmark N``: index at most N prompts of each benchmark (as the bundled sample's 30), the rest of its
prompts the held-out ones (default: all but the held-out share).
"""
from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _open(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")


def _find(folder: Path, stem: str) -> Path:
    for ext in (".csv", ".csv.gz", ".jsonl", ".jsonl.gz"):
        if (folder / (stem + ext)).is_file():
            return folder / (stem + ext)
    raise SystemExit(f"{folder}: no {stem}.csv[.gz] / {stem}.jsonl[.gz]")


def read(folder: Path) -> tuple[dict, list[tuple[str, str, float]]]:
    with _open(_find(folder, "prompts")) as f:
        prompts = {d["prompt_id"]: d for d in map(json.loads, filter(str.strip, f))}
    with _open(_find(folder, "outcomes")) as f:
        rows = [(r["model"], r["prompt_id"], float(r["correct"])) for r in csv.DictReader(f)]
    return prompts, rows


def one_seed(prompts: dict, rows: list, seed: int, holdout: float, per_benchmark: int | None, ks: list[int]) -> dict:
    rng = np.random.default_rng(seed)
    by_bench = defaultdict(list)
    for pid, d in prompts.items():
        by_bench[d["benchmark"]].append(pid)
    source = set()
    for b, ids in sorted(by_bench.items()):
        ids = sorted(ids)
        rng.shuffle(ids)
        keep = len(ids) - int(round(holdout * len(ids))) if per_benchmark is None else min(per_benchmark, len(ids) - 1)
        source.update(ids[:keep])
    home = Path(tempfile.mkdtemp(prefix="probe_bq_", dir=os.environ.get("TMPDIR")))
    src = home / "src"
    src.mkdir()
    with open(src / "prompts.jsonl", "w", encoding="utf-8") as f:
        for pid in sorted(source):
            f.write(json.dumps(prompts[pid]) + "\n")
    held = defaultdict(list)  # (model, benchmark) -> held-out outcomes
    seen = defaultdict(list)
    with open(src / "outcomes.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "prompt_id", "correct"])
        for m, pid, y in rows:
            if pid in source:
                w.writerow([m, pid, y])
                seen[(m, prompts[pid]["benchmark"])].append(y)
            else:
                held[(m, prompts[pid]["benchmark"])].append(y)
    os.environ["TASKSPACE_HOME"] = str(home / "home")
    from indexer import config

    config.reset_settings()  # this seed's home
    try:
        return _measure(src, by_bench, held, seen, ks)
    finally:
        config.reset_settings()
        shutil.rmtree(home, ignore_errors=True)


def _measure(src: Path, by_bench: dict, held: dict, seen: dict, ks: list[int]) -> dict:
    from indexer import find_models
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    with open_store() as store, VectorStore.from_settings() as vectors:
        assert str(src.parent) in str(store.url), (store.url, src)  # this seed's own home
        run = Indexer(store, vectors).run([SourceSpec(str(src))])
        assert run.status == "ok", run.errors
        errs = defaultdict(list)
        picks = defaultdict(list)
        for b in sorted(by_bench):
            res = find_models(benchmark=b, k=1000, evidence=1, store=store, vectors=vectors)
            est = defaultdict(dict)
            truth = {}
            for r in res.results:
                alias = [a for a in [r.model, *r.aliases] if (a, b) in held]
                if not alias or not held[(alias[0], b)]:
                    continue
                t = float(np.mean(held[(alias[0], b)]))
                obs = seen.get((alias[0], b))
                if not obs:
                    continue
                n, o = len(obs), float(np.mean(obs))
                truth[r.model] = t
                est["probability"][r.model] = r.probability
                est["observed"][r.model] = o
                for k in ks:
                    est[f"shrunk {k}"][r.model] = (n * o + k * r.probability) / (n + k)
            best = max(truth.values())
            for name, e in est.items():
                errs[name] += [abs(e[m] - truth[m]) for m in e]
                top = max(e, key=e.get)
                picks[name].append((truth[top], best))
    return {name: (float(np.mean(errs[name])), float(np.mean([p for p, _ in picks[name]])),
                   float(np.mean([b for _, b in picks[name]]))) for name in errs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--holdout", type=float, default=0.2)
    ap.add_argument("--per-benchmark", type=int, default=None)
    ap.add_argument("--shrink", default="5,20,80", help="pseudo-prompt counts K for the shrunk estimates")
    args = ap.parse_args()
    if not args.data.is_dir():
        ap.error(f"{args.data} is not a folder")
    if not 0 < args.holdout < 1:
        ap.error("--holdout must be between 0 and 1")
    if args.seeds < 1:
        ap.error("--seeds must be at least 1")
    ks = [int(k) for k in args.shrink.split(",") if k.strip()]
    prompts, rows = read(args.data)
    out = defaultdict(list)
    for seed in range(args.seeds):
        for name, v in one_seed(prompts, rows, seed, args.holdout, args.per_benchmark, ks).items():
            out[name].append(v)
    print(f"{args.data}: {args.seeds} seed(s), " + (f"{args.per_benchmark} indexed prompts per benchmark"
          if args.per_benchmark else f"{args.holdout:.0%} of each benchmark's prompts held out"))
    print(f"{'estimate':<14} {'MAE vs held-out rate':>21} {'selected rate':>14} {'best rate':>10}")
    for name, vals in out.items():
        v = np.mean(np.array(vals), axis=0)
        print(f"{name:<14} {v[0]:>21.4f} {v[1]:>14.4f} {v[2]:>10.4f}")


if __name__ == "__main__":
    main()
