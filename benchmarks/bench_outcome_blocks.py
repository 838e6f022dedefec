"""Time ``Store.outcome_blocks`` of every model of a home's index (what a model page's every-model rows read: each
model's blocks on the benchmarks of the page's neighbourhoods), read by key in IN-list chunks against the table
read without a key list (``indexer.store.sql_reads.BLOCKS_WHOLE_TABLE``), and check both give the same blocks.

    TASKSPACE_HOME=DIR python benchmarks/bench_outcome_blocks.py [--runs 5]

Reads the home's SQL store (``TASKSPACE_DATABASE_URL`` if set) and its default space's model keys; writes nothing.
Prints a Markdown table: way, median wall and CPU seconds over ``--runs``, blocks read.
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="runs of each way (medians)")
    args = ap.parse_args()

    from indexer.browse import _stores
    from indexer.store import sql_reads

    store, vectors, _sp, name = _stores(None, None, None)
    keys = [h.key for h in vectors.scan(name, "models", fields=())]
    benches = [b.name for b in store.list_benchmarks()]
    if not keys:
        raise SystemExit("the index holds no model: run `taskspace index` first")

    def canon(blocks):
        return sorted((k, b, p.tobytes(), s.tobytes()) for k, b, p, s in blocks)

    whole = sql_reads.BLOCKS_WHOLE_TABLE
    rows, first = [], None
    for way, limit in (("by key (IN-list chunks)", len(keys) + 1), ("the table, kept to the keys", whole)):
        sql_reads.BLOCKS_WHOLE_TABLE = limit
        walls, cpus = [], []
        for _ in range(args.runs):
            w, c = time.perf_counter(), time.process_time()
            got = store.outcome_blocks(keys, benches)
            walls.append(time.perf_counter() - w)
            cpus.append(time.process_time() - c)
        got = canon(got)
        if first is None:
            first = got
        elif got != first:
            raise SystemExit("the two reads gave different blocks")
        rows.append((way, statistics.median(walls), statistics.median(cpus), len(got)))
    sql_reads.BLOCKS_WHOLE_TABLE = whole
    print(f"{len(keys)} models, {len(benches)} benchmarks, medians of {args.runs} runs; the same blocks both ways\n")
    print("| read | wall | CPU | blocks |\n|---|---|---|---|")
    for way, w, c, n in rows:
        print(f"| {way} | {w:.3f} s | {c:.3f} s | {n} |")


if __name__ == "__main__":
    main()
