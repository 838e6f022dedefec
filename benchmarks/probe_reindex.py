"""Probe (issue 20): a ``reindex`` of an index ``bench_scale.py`` built, against its plain-SQLite floor, with the CPU
of the process and of the child writer, and when each side finishes.

    TASKSPACE_CACHE_DIR=... python benchmarks/probe_reindex.py <bench_scale --work>/home [--rounds 3]

Each round: ``sync.reindex`` of every collection (Qdrant Edge writes a large fresh collection from a child process,
``indexer/store/edge_writer.py``), then ``bench_scale.sqlite_floor`` (the same points built from SQL and written into
one SQLite table). Prints the wall times and their ratio (issue 20's target: at most 1.5x), the CPU seconds of this
process and of its children during the reindex, and the moments (seconds after the start) at which the child was
started, the model points were all built, and the child ended: where the child ends well after the last point, the
child is the critical path.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("home", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    os.environ.update(TASKSPACE_HOME=str(args.home.resolve()), HF_HUB_OFFLINE="1")
    import bench_scale
    from indexer import sync
    from indexer.config import reset_settings
    from indexer.store import edge_writer
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    reset_settings()
    marks: dict[str, float] = {}
    timing = False
    build, write = sync._model_points, edge_writer.write_in_child

    def points(*a, **k):  # recursive per chunk through the module name: the first start, the last end
        if not timing:
            yield from build(*a, **k)
            return
        marks.setdefault("points started", time.perf_counter())
        yield from build(*a, **k)
        marks["points built"] = time.perf_counter()

    def child(*a, **k):
        marks.setdefault("child started", time.perf_counter())
        n = write(*a, **k)
        marks.setdefault("child ended", time.perf_counter())
        return n

    sync._model_points, edge_writer.write_in_child = points, child
    with open_store() as sql, tempfile.TemporaryDirectory() as tmp:
        (rec,) = sql.list_spaces()
        for _ in range(args.rounds):
            marks.clear()
            cpu, kids = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            timing = True
            with VectorStore.from_settings() as vs:
                sync.reindex(sql, vs, rec.id)
            wall = time.perf_counter() - t0
            timing = False  # the floor builds the same points
            cpu = time.process_time() - cpu
            now = resource.getrusage(resource.RUSAGE_CHILDREN)
            kids = now.ru_utime + now.ru_stime - kids.ru_utime - kids.ru_stime
            floor = bench_scale.sqlite_floor(sql, rec, Path(tmp))[0]
            when = ", ".join(f"{k} {v - t0:.2f}" for k, v in sorted(marks.items(), key=lambda kv: kv[1]))
            print(f"reindex {wall:.2f} s (CPU {cpu:.2f} s here, {kids:.2f} s in children), floor {floor:.2f} s: "
                  f"{wall / floor:.2f}x; {when}", flush=True)


if __name__ == "__main__":
    main()
