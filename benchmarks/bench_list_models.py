"""Latency of a page of the model list (``GET /v1/models?limit=N``, ``taskspace models --limit N --json``) in process,
as ``taskspace serve`` answers it (stores opened once).

    TASKSPACE_HOME=DIR python benchmarks/bench_list_models.py [--limit 50] [--runs 5] [--json OUT]

On the home TASKSPACE_HOME names (as it is: nothing is written), times :func:`indexer.browse.models_page` for the
first page, a page deep in the list and a benchmark's page, and prints a Markdown table of medians (wall and CPU
seconds). ``--json OUT`` writes the pages themselves, to compare two versions' answers byte for byte.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from indexer import browse


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", help="write the pages answered to this file")
    args = ap.parse_args()
    store, vectors, _, name = browse._stores(None, None, None)
    total = vectors.count(name, "models")
    bench = max(browse.list_benchmarks(store=store), key=lambda b: b["models"], default=None)
    cases = [("first page", {}), ("a page at offset total/2", {"offset": total // 2})]
    if bench is not None:
        cases.append((f"models of {bench['name']}", {"benchmark": bench["name"]}))
    browse.models_page(limit=args.limit, store=store, vectors=vectors)  # open and warm the index
    pages = {}
    print(f"{total} models; limit {args.limit}; medians of {args.runs} runs\n")
    print("| page | wall s | CPU s |\n|---|---|---|")
    for label, kw in cases:
        walls, cpus = [], []
        for _ in range(args.runs):
            w, c = time.perf_counter(), time.process_time()
            pages[label] = browse.models_page(limit=args.limit, store=store, vectors=vectors, **kw)
            walls.append(time.perf_counter() - w)
            cpus.append(time.process_time() - c)
        print(f"| {label} | {statistics.median(walls):.2f} | {statistics.median(cpus):.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(pages, f, sort_keys=True)


if __name__ == "__main__":
    main()
