"""A worker pass that adds a small source to a large existing home (docs/BENCHMARKS.md, "A small pass on 32,823
models"): the home copied afresh for each run, a source of ``--models`` new models on ``--prompts`` prompts of one
of its benchmarks (texts the home holds, so the embedding cache has them), then ``taskspace index --source FOLDER
--json`` on the copy; prints the pass's seconds per stage (its ``--json``), wall and CPU (user + sys of the child)
per run and their medians, and a digest of what the pass stored (the calibration map with its groups' average
models, the prior, every model vector): compare it between two versions of the code.

    TASKSPACE_CACHE_DIR=/work/cache HF_HUB_OFFLINE=1 \\
        python benchmarks/bench_small_pass.py --home /work/tmp/h1/home --work /work/tmp/small-pass [--runs 3]

Never writes ``--home`` (each run indexes a copy under ``--work``, removed after it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

TASKSPACE = str(Path(sys.executable).parent / "taskspace")


def write_source(db: Path, folder: Path, benchmark: str, n_models: int, n_prompts: int, seed: int) -> None:
    """A long-form table source (prompts.jsonl, outcomes.csv) of ``n_models`` new models on ``n_prompts`` of the
    home's prompts of ``benchmark`` (their stored texts), random 0/1 outcomes."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT p.text FROM prompts p JOIN benchmark_prompts bp ON bp.prompt_id = p.id "
                           "JOIN benchmarks b ON b.id = bp.benchmark_id WHERE b.name = ? ORDER BY bp.position LIMIT ?",
                           (benchmark, n_prompts)).fetchall()
    finally:
        con.close()
    if not rows:
        raise SystemExit(f"the home holds no prompt of benchmark {benchmark!r}")
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    with open(folder / "prompts.jsonl", "w") as f:
        for j, (text,) in enumerate(rows):
            f.write(json.dumps({"prompt_id": f"p{j}", "benchmark": benchmark, "text": text}) + "\n")
    with open(folder / "outcomes.csv", "w") as f:
        f.write("model,prompt_id,correct\n")
        for m in range(n_models):
            for j in range(len(rows)):
                f.write(f"bench-small-pass/m{m},p{j},{rng.randint(0, 1)}\n")


def stored_digest(db: Path) -> str:
    """sha256 of the calibration maps (without their timestamps), the priors and every model vector by key."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        h = hashlib.sha256()
        cols = [r[1] for r in con.execute("PRAGMA table_info(space_calibrations)") if r[1] != "computed_at"]
        for row in con.execute(f"SELECT {', '.join(cols)} FROM space_calibrations ORDER BY space_id"):
            h.update(repr(row).encode())
        for (vec,) in con.execute("SELECT vector FROM space_priors ORDER BY space_id"):
            h.update(vec)
        for key, vec in con.execute("SELECT m.key, v.vector FROM model_vectors v JOIN models m ON m.id = v.model_id "
                                    "ORDER BY v.space_id, m.key"):
            h.update(key.encode() + vec)
        return h.hexdigest()
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", required=True, help="the large home to copy (a SQLite one; never written)")
    ap.add_argument("--work", required=True, help="a folder for the copies and the source")
    ap.add_argument("--benchmark", default="mbpp", help="the benchmark whose prompts the new models answer")
    ap.add_argument("--models", type=int, default=3)
    ap.add_argument("--prompts", type=int, default=60)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    home, work = Path(args.home), Path(args.work)
    source = work / "source"
    write_source(home / "taskspace.db", source, args.benchmark, args.models, args.prompts, seed=1)
    walls, cpus = [], []
    for run in range(args.runs):
        copy = work / f"home{run}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(home, copy)
        env = {**os.environ, "TASKSPACE_HOME": str(copy)}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        out = subprocess.run([TASKSPACE, "index", "--source", str(source), "--json"], env=env, capture_output=True,
                             text=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if out.returncode != 0:
            raise SystemExit(f"taskspace index failed ({out.returncode}):\n{out.stderr[-2000:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        walls.append(wall)
        cpus.append(cpu)
        report = json.loads(out.stdout)
        print(f"run {run + 1}: wall {wall:.2f} s, CPU {cpu:.2f} s, solved {report['counts']['solved']}, stages "
              + ", ".join(f"{k} {v:.2f}" for k, v in report["seconds"].items())
              + f"; stored {stored_digest(copy / 'taskspace.db')[:16]}", flush=True)
        shutil.rmtree(copy)
    print(f"median: wall {statistics.median(walls):.2f} s, CPU {statistics.median(cpus):.2f} s")


if __name__ == "__main__":
    main()
