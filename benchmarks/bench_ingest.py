"""Benchmark the ingest path (indexer.ingest: source reader -> SQL store), excluding embedding.

By default the full MMLU-Pro set (``../shared/data/mmlu_pro``: 31 models x 12,032 prompts, 371,244 cells) into a
fresh SQLite file and a fresh PostgreSQL schema (dropped afterwards). Reports, per database, the wall time of
``ingest(path)`` end to end and its parts measured separately (the columnar table reader, turning the table into
``Outcome`` rows for ``Store.ingest``, the store transaction), then a repeat ingest (skipped: same revision).
``--read-only DATA...`` times only the reader on other folders (e.g. the 5.1M-cell metabench set).

    python benchmarks/bench_ingest.py [--data ../shared/data/mmlu_pro] [--postgres URL | --no-postgres]
    python benchmarks/bench_ingest.py --read-only ../shared/data/metabench_openllm ../shared/data/evalarena_code
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from indexer.ingest import ingest  # noqa: E402
from indexer.records import SourceBatch  # noqa: E402
from indexer.sources import read_source  # noqa: E402
from indexer.store import sql_migrate  # noqa: E402
from indexer.store.sql import Store  # noqa: E402

PG_DEFAULT = os.environ.get("TASKSPACE_TEST_POSTGRES_URL") or "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def timed(fn, *a, **k):
    t = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t


def run_db(label: str, url: str, data: Path) -> dict:
    store = Store(url, upgrade=True)
    try:
        summary, t_total = timed(ingest, str(data), store=store, fetch_metadata=False)
        again, t_again = timed(ingest, str(data), store=store, fetch_metadata=False)
    finally:
        store.close()
    return {"db": label, "total": t_total, "again": t_again, "summary": summary, "skipped_again": again.skipped}


def parts(url: str, data: Path) -> dict:
    batch, t_read = timed(read_source, data)
    rows, t_rows = timed(lambda: list(batch.iter_outcomes()))
    store = Store(url, upgrade=True)
    try:
        res, t_store = timed(store.ingest, SourceBatch(source=batch.source, benchmarks=batch.benchmarks, outcomes=rows))
    finally:
        store.close()
    return {"read": t_read, "rows": t_rows, "store": t_store, "cells": len(rows), "stored": res.outcomes}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "mmlu_pro")
    ap.add_argument("--postgres", default=PG_DEFAULT)
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("--read-only", type=Path, nargs="*", help="Only time the reader on these folders.")
    args = ap.parse_args()

    if args.read_only:
        for d in args.read_only:
            batch, t = timed(read_source, d)
            tb = batch.table
            merged, t_m = timed(tb.merged)
            print(f"read {d.name}: {len(tb.models):,} models x {len(tb.prompt_ids):,} prompt ids, {len(tb):,} cells, "
                  f"{len(batch.errors)} errors in {t:.2f} s; merge copies -> {len(merged.texts):,} prompts in {t_m:.2f} s; "
                  f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
        return

    with tempfile.TemporaryDirectory() as tmp:
        targets = [("SQLite", f"sqlite:///{tmp}/bench.db", f"sqlite:///{tmp}/parts.db")]
        schema = None
        if not args.no_postgres:
            schema = "bench_" + uuid.uuid4().hex[:12]
            try:
                sql_migrate.create_schema(args.postgres, schema)
                schema2 = schema + "_p"
                sql_migrate.create_schema(args.postgres, schema2)
                targets.append(("PostgreSQL", sql_migrate.with_search_path(args.postgres, schema),
                                sql_migrate.with_search_path(args.postgres, schema2)))
            except Exception as exc:  # noqa: BLE001 - report and go on with SQLite
                print(f"PostgreSQL skipped: {exc}")
                schema = None
        try:
            for label, url, url_parts in targets:
                r = run_db(label, url, args.data)
                p = parts(url_parts, args.data)
                s = r["summary"]
                print(f"{label}: ingest({args.data.name}) {r['total']:.2f} s end to end -> {s.models} models, "
                      f"{s.prompts} prompts, {s.outcomes} outcomes stored, {len(s.errors)} errors; "
                      f"repeat (unchanged, skipped={r['skipped_again']}) {r['again']:.3f} s")
                print(f"  parts: read table {p['read']:.2f} s ({p['cells']:,} cells), to Outcome rows {p['rows']:.2f} s, "
                      f"Store.ingest {p['store']:.2f} s ({p['stored']:,} cells stored)")
        finally:
            if schema:
                for sch in (schema, schema + "_p"):
                    try:
                        sql_migrate.drop_schema(args.postgres, sch)
                    except Exception as exc:  # noqa: BLE001
                        print(f"could not drop schema {sch}: {exc}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
