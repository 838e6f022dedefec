"""How long queries of ``taskspace serve`` wait while its in-process worker publishes a new index, and on what.

    python benchmarks/bench_publish_wait.py [--source indexer/data/sample ...] [--home DIR]

A pass holds the write side of the serving gate (:class:`indexer.serve.Gate`) from its first write of what queries
read (the model vectors and calibration in SQL) to its end; a query arriving then waits for it (docs/SERVING.md).
This script indexes ``--source`` (repeatable; default the bundled sample) into a fresh home, then runs two passes
through :meth:`indexer.serve.Service.run_pass` (the server's own pass) while one thread asks ``find_models`` in a
loop through the service, as a client of the server would:

1. ``new prompts``: a copy of the last source under other benchmark names with a third of its prompts' outcomes
   flipped (``bench_serve.flipped_source``) is added: its models are re-solved, the calibration refitted, the
   benchmarks and prompts collections rebuilt and the models pushed;
2. ``new outcomes``: 5% of that copy's outcomes flipped again (a new revision of a source, no new prompt): its models
   re-solved and pushed, nothing rebuilt.

For each: the pass's length, how long it held the gate (``publish``) and how that time splits (SQL writes, the
collection rebuilds, the model push), and the slowest query. Timings wrap the library's own functions; nothing is
changed.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKSPACE = str(Path(sys.executable).parent / "taskspace")
sys.path.insert(0, str(ROOT / "benchmarks"))


def _wrap(obj, name: str, marks: list, label: str) -> None:
    fn = getattr(obj, name)

    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            marks.append((label, t, time.perf_counter()))

    setattr(obj, name, timed)


def one_pass(svc, prompt: str) -> dict:
    """One pass of the server's worker with a reader asking meanwhile; the measurements."""
    from indexer import serve, sync
    from indexer.pipeline import Indexer
    from indexer.store.sql_derived import DerivedMixin

    marks: list = []
    saved = [(o, n, getattr(o, n)) for o, n in ((DerivedMixin, "save_model_vectors"), (DerivedMixin, "save_benchmark_vectors"),
                                                 (Indexer, "_benchmark_vectors"), (sync, "reindex"), (sync, "push_models"),
                                                 (serve._Publish, "take"))]
    for obj, name, _ in saved[:-1]:
        _wrap(obj, name, marks, name.strip("_"))
    taken: list = []
    take = serve._Publish.take

    def take_noted(self):
        if not self.held:
            taken.append(time.perf_counter())
        return take(self)

    serve._Publish.take = take_noted
    latencies, stop = [], threading.Event()

    def reader():
        while not stop.is_set():
            t = time.perf_counter()
            svc.find(prompts=[prompt], k=5)
            latencies.append(time.perf_counter() - t)

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    t0 = time.perf_counter()
    try:
        report = svc.run_pass(threading.Event())
    finally:
        stop.set()
        th.join(60)
        for obj, name, fn in saved:
            setattr(obj, name, fn)
    spent = {}
    for label, a, b in marks:
        spent[label] = spent.get(label, 0.0) + (b - a)
    return {"status": report.status, "solved": report.counts.get("solved", 0),
            "rebuilt": ", ".join(report.counts.get("rebuilt") or []) or "-", "pass_s": time.perf_counter() - t0,
            "publish_s": svc.passes[-1]["publish_seconds"], "sql_s": spent.get("save_model_vectors", 0.0)
            + spent.get("save_benchmark_vectors", 0.0) + spent.get("benchmark_vectors", 0.0),
            "rebuild_s": spent.get("reindex", 0.0), "push_s": spent.get("push_models", 0.0),
            "queries": len(latencies), "max_query_s": max(latencies, default=float("nan")),
            "p50_query_s": sorted(latencies)[len(latencies) // 2] if latencies else float("nan")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", type=Path, action="append", help="repeatable (default: indexer/data/sample)")
    ap.add_argument("--home", type=Path, default=None, help="TASKSPACE_HOME (default: a temporary folder, removed)")
    a = ap.parse_args()
    sources = a.source or [ROOT / "indexer" / "data" / "sample"]
    home = a.home or Path(tempfile.mkdtemp(prefix="bench-publish-"))
    os.environ.update(TASKSPACE_HOME=str(home), HF_HUB_OFFLINE="1")
    from bench_serve import flipped_source, prompt_texts

    from indexer.config import reset_settings
    from indexer.serve import Service

    reset_settings()
    try:
        subprocess.run([TASKSPACE, "index", *[x for s in sources for x in ("--source", str(s))]], check=True,
                       capture_output=True, timeout=1800)
        extra = home / "extra-source"
        flipped_source(sources[-1], extra)
        prompt = prompt_texts(sources[0], 1)[0]
        rows = []
        svc = Service().start()
        try:
            subprocess.run([TASKSPACE, "sources", "add", str(extra)], check=True, capture_output=True, timeout=120)
            rows.append(("new prompts", one_pass(svc, prompt)))
            table = list(csv.reader(open(extra / "outcomes.csv")))
            rng = random.Random(7)
            for row in table[1:]:
                if rng.random() < 0.05:
                    row[2] = str(1 - int(float(row[2])))
            with open(extra / "outcomes.csv", "w", newline="") as f:
                csv.writer(f).writerows(table)
            rows.append(("new outcomes", one_pass(svc, prompt)))
        finally:
            svc.close()
        print(f"\n{' + '.join(s.name for s in sources)} ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})\n")
        print("| pass | solved | rebuilt | pass s | publish s | of it: SQL s | rebuild s | push s | queries | p50 ms | max ms |")
        print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for what, r in rows:
            assert r["status"] == "ok", r
            print(f"| {what} | {r['solved']} | {r['rebuilt']} | {r['pass_s']:.1f} | {r['publish_s']:.2f} | "
                  f"{r['sql_s']:.2f} | {r['rebuild_s']:.2f} | {r['push_s']:.2f} | {r['queries']} | "
                  f"{1000 * r['p50_query_s']:.0f} | {1000 * r['max_query_s']:.0f} |")
    finally:
        if a.home is None:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
