"""Benchmark the SQL store on a shared dataset, by default the full MMLU-Pro set (31 models x 12,032 prompts =
371,244 cells); ``--data ../shared/data/metabench_openllm`` is the 5.1M-cell scale run.

Reads the folder (prompts.jsonl[.gz] + outcomes.csv[.gz]) with csv/json into one SourceBatch,
then for SQLite (a fresh file) and PostgreSQL (a fresh schema, dropped afterwards) measures:
ingest (one transaction), a duplicate ingest (skipped), load_outcomes (dense matrix) with a check that
every cell reads back exactly, model_digests, and the database size.

    python benchmarks/bench_sql.py [--data ../shared/data/mmlu_pro] [--postgres URL | --no-postgres]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from indexer.records import BenchmarkInfo, Outcome, SourceBatch, SourceInfo, prompt_hash  # noqa: E402
from indexer.store import sql_migrate  # noqa: E402
from indexer.store.sql import Store  # noqa: E402

PG_DEFAULT = os.environ.get("TASKSPACE_TEST_POSTGRES_URL") or "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def _open(folder: Path, name: str):
    gz = folder / (name + ".gz")
    return gzip.open(gz, "rt", encoding="utf-8", newline="") if gz.exists() else open(folder / name, encoding="utf-8", newline="")


def read_batch(folder: Path) -> SourceBatch:
    prompts = {}
    with _open(folder, "prompts.jsonl") as f:
        for line in f:
            r = json.loads(line)
            prompts[r["prompt_id"]] = (r["benchmark"], r["text"])
    outcomes = []
    with _open(folder, "outcomes.csv") as f:
        rows = csv.reader(f)
        assert next(rows) == ["model", "prompt_id", "correct"]
        for model, pid, correct in rows:
            bench, text = prompts[pid]
            outcomes.append(Outcome(model, bench, text, float(correct), prompt_id=pid))
    benches = {b: BenchmarkInfo(b, group=folder.name) for b, _ in prompts.values()}
    return SourceBatch(SourceInfo("table", str(folder), "bench-1"), benches, outcomes)


def expected_cells(batch: SourceBatch) -> dict:
    """(model key, prompt hash) -> score, the mean where one text occurs under several prompt ids. A model is the key
    the store keeps it under (:mod:`indexer.identity`: mmlu_pro's `Llama-2-13b-hf` is `meta-llama/Llama-2-13b-hf`);
    before, the name as written, so the read-back check failed with a KeyError on mmlu_pro, the default data."""
    from indexer.identity import resolve_many

    keys = {n: i.key for n, i in resolve_many(sorted({o.model for o in batch.outcomes})).items()}
    hashes = {}
    sums: dict = {}
    for o in batch.outcomes:
        h = hashes.get(o.text) or hashes.setdefault(o.text, prompt_hash(o.text))
        s = sums.setdefault((keys[o.model], h), [0.0, 0])
        s[0] += o.score
        s[1] += 1
    # 159 texts occur under two prompt ids: the store keeps one prompt and the mean score
    return {k: s / n for k, (s, n) in sums.items()}


def run(url: str, batch: SourceBatch, expected: dict) -> dict:
    out = {}
    store = Store(url, upgrade=True)
    try:
        t = time.perf_counter()
        r = store.ingest(batch)
        out["ingest_s"] = time.perf_counter() - t
        out["stored"] = {"models": r.models, "prompts": r.prompts, "cells": r.outcomes}
        t = time.perf_counter()
        assert store.ingest(batch).skipped
        out["duplicate_ingest_s"] = time.perf_counter() - t
        t = time.perf_counter()
        m = store.load_outcomes()
        out["load_outcomes_s"] = time.perf_counter() - t
        observed = ~np.isnan(m.scores)
        out["matrix"] = list(m.scores.shape)
        assert observed.sum() == len(expected), (observed.sum(), len(expected))
        col = {h: j for j, h in enumerate(m.prompt_hashes)}
        row = {k: i for i, k in enumerate(m.models)}
        for (model, h), score in expected.items():
            assert abs(m.scores[row[model], col[h]] - score) < 1e-6, (model, h, score)
        out["readback_exact"] = True
        t = time.perf_counter()
        store.model_digests()
        out["model_digests_s"] = time.perf_counter() - t
        out["db_bytes"] = store.database_size()
    finally:
        store.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "mmlu_pro",
                    help="a folder in the shared long format (prompts.jsonl[.gz] + outcomes.csv[.gz])")
    ap.add_argument("--postgres", default=PG_DEFAULT, help="admin URL; a fresh schema is created and dropped")
    ap.add_argument("--no-postgres", action="store_true")
    args = ap.parse_args()
    t = time.perf_counter()
    batch = read_batch(args.data)
    results = {"cells": len(batch.outcomes), "read_files_s": time.perf_counter() - t}
    expected = expected_cells(batch)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        results["sqlite"] = run(f"sqlite:///{db}", batch, expected)
        results["sqlite"]["file_bytes"] = sum(p.stat().st_size for p in Path(tmp).iterdir())
    if not args.no_postgres:
        schema = "bench_" + uuid.uuid4().hex[:12]
        sql_migrate.create_schema(args.postgres, schema)
        try:
            results["postgresql"] = run(sql_migrate.with_search_path(args.postgres, schema), batch, expected)
        finally:
            sql_migrate.drop_schema(args.postgres, schema)
    print(json.dumps(results, indent=2, default=lambda x: round(x, 3) if isinstance(x, float) else str(x)))


if __name__ == "__main__":
    main()
