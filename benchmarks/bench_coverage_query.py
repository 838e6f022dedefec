"""What the coverage-aware calibration costs a query (docs/RESULTS.md, "The own deviation weighed by coverage"): on
issue 13's mixed index (the bundled sample, then ../shared/data/evalarena_code, indexed by two ordinary passes into
the embedded defaults), ``find_models(text, k=10)`` for real prompts whose embeddings are cached (20 MMLU-Pro
questions, 20 EvalArena code tasks), with the space's calibration as fitted (coverage-aware where the fit found
enough uncovered cells) and then with the same calibration but one weight (``uncovered`` NULL: one folded query,
Qdrant's own order). Reports p50 / p95 of the query without its encoding (``FindResult.timings``), in
milliseconds, interleaved over ``--rounds`` rounds, and whether the calibration was coverage-aware.

    TASKSPACE_CACHE_DIR=/work/cache python benchmarks/bench_coverage_query.py [--work DIR] [--rounds 3]
"""
from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data", type=Path, default=DATA,
                    help=f"the shared data sets' folder, holding evalarena_code and mmlu_pro (default {DATA})")
    args = ap.parse_args()
    data = args.data
    # what it reads, checked first: before, a missing ../shared/data failed after the sample was indexed (minutes)
    need = [data / "evalarena_code" / "prompts.jsonl", data / "mmlu_pro" / "prompts.jsonl.gz"]
    if missing := [str(f) for f in need if not f.is_file()]:
        ap.error(f"{', '.join(missing)} not found: give the shared data sets' folder with --data DIR")
    work = Path(args.work or tempfile.mkdtemp(prefix="bench_cov_"))
    os.environ["TASKSPACE_HOME"] = str(work / "home")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    done = work / "home" / "bench_coverage_query.indexed"  # both passes finished: before, a database alone was taken
    if not done.exists():                                    # for the index, so a run stopped after the sample
        for src in (ROOT / "indexer" / "data" / "sample", data / "evalarena_code"):  # reused a half index
            subprocess.run([sys.executable, "-m", "indexer.cli", "index", "--source", str(src)], check=True, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL)
        done.write_text("the sample and evalarena_code are indexed here\n")
    sys.path.insert(0, str(ROOT))
    from indexer import find_models
    from indexer.query import _shared_stores

    with gzip.open(data / "mmlu_pro" / "prompts.jsonl.gz", "rt") as f:
        texts = [json.loads(line)["text"] for _, line in zip(range(5020), f)][5000:]
    with open(data / "evalarena_code" / "prompts.jsonl") as f:
        texts += [json.loads(line)["text"] for _, line in zip(range(20), f)]
    store, _ = _shared_stores()
    sid = store.list_spaces()[-1].id
    fitted = store.get_space_calibration(sid)
    one = dataclasses.replace(fitted, uncovered=None)
    times: dict[str, list[float]] = {"fitted": [], "one weight": []}
    try:
        for _ in range(args.rounds):
            for name, cal in (("fitted", fitted), ("one weight", one)):
                store.save_model_vectors(sid, [], calibration=cal)
                find_models(texts[0], k=10)  # warm
                for t in texts:
                    r = find_models(t, k=10)
                    times[name].append(r.timings["total"] - r.timings.get("encode", 0.0))
    finally:
        store.save_model_vectors(sid, [], calibration=fitted)
    print(f"index {work / 'home'}; calibration specific {fitted.specific:.3f}, uncovered {fitted.uncovered}")
    for name, xs in times.items():
        xs = 1000.0 * np.asarray(xs)
        print(f"{name:10s} p50 {np.percentile(xs, 50):6.1f} ms  p95 {np.percentile(xs, 95):6.1f} ms  ({xs.size} queries)")


if __name__ == "__main__":
    main()
