"""Probe (issue 20): where an in-process query's time goes, on an index ``bench_scale.py`` built.

    TASKSPACE_CACHE_DIR=... python benchmarks/probe_query.py <bench_scale --work>/home [--queries 60] [--profile]

Runs ``indexer.query.find_models`` (as ``bench_scale.py`` times it: stores open, cached prompt texts) on the first
``--queries`` prompts of metabench_openllm after five warm-up queries, and prints the p50 per query and, per kind of
vector-store call (``search`` of the prompts and of the models, ``scores_of``, ``get``), how many calls a query makes
and their time. ``--profile``: cProfile of two more passes, by own time. To compare two commits, check the other out
in a worktree and run this script from it, alternating (the VM's noise is as large as most single changes).
"""
from __future__ import annotations

import argparse
import cProfile
import gzip
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("home", type=Path)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "metabench_openllm")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    # prompts.jsonl plain or gzipped (before: opened with gzip whatever its name, so the bundled sample's plain file was a
    # BadGzipFile traceback; a folder without one a StopIteration), checked before anything is opened
    prompts = next((p for p in (args.data / "prompts.jsonl", args.data / "prompts.jsonl.gz") if p.is_file()), None)
    if prompts is None:
        ap.error(f"--data {args.data}: no prompts.jsonl or prompts.jsonl.gz (the query texts are read from it)")
    os.environ.update(TASKSPACE_HOME=str(args.home.resolve()), HF_HUB_OFFLINE="1")
    from indexer import query
    from indexer.config import reset_settings
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    reset_settings()
    with (gzip.open(prompts, "rt") if prompts.suffix == ".gz" else open(prompts)) as f:
        texts = [json.loads(line)["text"] for line in f][: args.queries]
    with open_store() as sql, VectorStore.from_settings() as vs:
        for t in texts[:5]:
            query.find_models([t], store=sql, vectors=vs)
        calls: dict[str, list[float]] = {}
        for name in ("search", "scores_of", "get"):
            real = getattr(vs, name)

            def timed(*a, _real=real, _name=name, **k):
                t0 = time.perf_counter()
                out = _real(*a, **k)
                calls.setdefault(f"{_name} {a[1]}", []).append(time.perf_counter() - t0)
                return out

            setattr(vs, name, timed)
        took = []
        for t in texts:
            t0 = time.perf_counter()
            query.find_models([t], store=sql, vectors=vs)
            took.append(time.perf_counter() - t0)
        print(f"p50 {1000 * statistics.median(took):.2f} ms per query ({len(texts)} queries)")
        for k, v in sorted(calls.items()):
            print(f"  {k}: {len(v) / len(texts):.2f} calls per query, {1000 * sum(v) / len(texts):.2f} ms per query")
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            for t in texts * 2:
                query.find_models([t], store=sql, vectors=vs)
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
