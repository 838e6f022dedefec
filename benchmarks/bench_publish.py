"""Publish and pull at scale: 10,000 model records through ``taskspace publish`` and ``taskspace pull``.

    python benchmarks/bench_publish.py [--models 10000] [--patterns 20] [--rank 200] [--benchmarks 60]
                                       [--work DIR] [--json FILE]

1. seed: a home with one ``auto-mc`` space on the installed all-MiniLM-L6-v2 (774-dim records: 2 x 384 embedding
   columns, 4 covariates, 2 intercepts; the 772 design columns plus ``c_mc``, ``c_free``), ``--models`` models with
   Hub metadata, seeded random vectors, each model on one of ``--patterns`` coverage patterns of rank ``--rank``
   (posterior factors as stored), a calibration and ``--benchmarks`` benchmark vectors (not timed);
2. publish: ``taskspace publish ORG/NAME`` to the local Hub-API server of the tests (tests/hubserver.py: the real
   huggingface_hub client, create_repo + preupload + one NDJSON commit; no network), in a fresh process;
3. pull: ``taskspace pull hub:ORG/NAME`` into an empty home (download through the Hub cache, validation, one SQL
   transaction, Qdrant Edge models + benchmarks collections), in a fresh process;
4. a second publish with nothing changed (no commit), in a fresh process.

Each step is its own process (``python -m indexer.cli``), timed from outside (process start and imports included)
with its own CPU time (user + system) and peak RSS (``ru_maxrss`` of that process): on a shared machine
the wall time depends on the load (printed), the CPU time much less. Prints a table; ``--json`` writes the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def seed(home: Path, n_models: int, n_patterns: int, rank: int, n_bench: int) -> dict:
    """Fill a home through the store's own API (the records look like an indexed space's)."""
    import numpy as np

    os.environ["TASKSPACE_HOME"] = str(home)
    from indexer.config import reset_settings

    reset_settings()
    from indexer.encoder import get_encoder
    from indexer.posterior import Calibration, PatternPosterior
    from indexer.space import get_method
    from indexer.store.sql import BenchmarkVector, ModelVector, open_store
    from indexer.store.sql_records import ImportedSpace, pulled_location
    from indexer.space import SpaceSpec

    enc = get_encoder("all-MiniLM-L6-v2")
    m = get_method("auto-mc")
    spec = SpaceSpec(enc.id, 1.0, 0.0, m.name, m.params).with_encoder(enc.id, 384)
    rng = np.random.default_rng(0)
    d, free = 2 * 384, 4
    patterns = []
    for j in range(n_patterns):
        V, _ = np.linalg.qr(rng.normal(size=(d, rank)))
        patterns.append(PatternPosterior(key=f"{j:032x}", n=int(rng.integers(200, 12000)),
                                         mu=rng.normal(size=d + free).astype(np.float32),
                                         w=np.sort(rng.gamma(2.0, 5.0, size=rank))[::-1].astype(np.float32),
                                         V=V.astype(np.float32), K=rng.normal(size=(d, free)).astype(np.float32),
                                         Cinv=np.eye(free, dtype=np.float32), formats=(True, bool(j % 2))))
    benches = [f"bench_{b:03d}" for b in range(n_bench)]
    models, vectors = [], []
    for i in range(n_models):
        key = f"org{i % 97}/model-{i:05d}"
        models.append({"key": key, "kind": "hub", "license": ["mit", "apache-2.0", "llama3"][i % 3],
                       "num_parameters": int(rng.integers(1, 700)) * 10**8, "pipeline_tag": "text-generation",
                       "tags": ["transformers", "safetensors"], "downloads": int(rng.integers(0, 10**6)),
                       "likes": int(rng.integers(0, 1000)), "gated": "false"})
        bs = sorted(rng.choice(benches, size=min(6, n_bench), replace=False).tolist())  # (size 6 of fewer: ValueError)
        vectors.append(ModelVector(key, (rng.normal(size=spec.dim) * 0.05).astype(np.float32), int(rng.integers(100, 6000)),
                                   bs, {b: float(rng.random()) for b in bs}, f"{i:064x}", None,
                                   patterns[i % n_patterns].key, float(rng.gamma(2.0, 2.0)), float(rng.random())))
    bench_rows = [{"name": b, "group": "g", "metric": "acc", "num_fewshot": 0, "config": {}} for b in benches]
    # no indexed prompts (the seeded home has none, so its record set has no prompts file): a benchmark counting some
    # made the set one `taskspace pull` refuses ("prompts/<space>.parquet: file is missing, though benchmarks.parquet
    # counts N indexed prompt(s)"), so every run failed at its pull
    bvs = [BenchmarkVector(b, rng.normal(size=spec.dim).astype(np.float32), 0) for b in benches]
    store = open_store()
    try:
        item = ImportedSpace(spec=spec, origin="seed", revision="seed", models=models, vectors=vectors,
                             patterns=patterns, calibration=Calibration(-0.1, 2.3, 5000, 25, 0.04), benchmarks=bench_rows,
                             benchmark_vectors=bvs)
        store.import_spaces([item])
        store.delete_source(pulled_location(spec.key))  # a space built here, not a pulled one
        # ... from results: its models count as measured (publish refuses the vectors of results no longer held)
        from sqlalchemy import update

        from indexer.store.sql_models import Model

        with store.engine.begin() as conn:
            conn.execute(update(Model).values(outcomes_digest="seed"))
    finally:
        store.close()
    return {"space": spec.name, "dim": spec.dim}


#: runs the CLI in a fresh process and reports that process's own peak RSS on stderr
_CHILD = ("import resource, sys\nsys.argv = ['taskspace'] + sys.argv[1:]\nfrom indexer.cli import main\ntry:\n    main()\n"
          "finally:\n    r = resource.getrusage(resource.RUSAGE_SELF)\n"
          "    print('BENCH_MAXRSS_KB=%d BENCH_CPU_S=%.2f' % (r.ru_maxrss, r.ru_utime + r.ru_stime), file=sys.stderr)\n")


def run(args: list[str], env: dict) -> dict:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _CHILD, *args], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if out.returncode:
        raise SystemExit(f"{' '.join(args)} failed ({out.returncode}): {out.stderr[-2000:]}")
    kb = int(out.stderr.rsplit("BENCH_MAXRSS_KB=", 1)[1].split()[0])
    cpu = float(out.stderr.rsplit("BENCH_CPU_S=", 1)[1].split()[0])
    return {"seconds": round(seconds, 2), "cpu_seconds": cpu, "peak_rss_mb": round(kb / 1024, 1),
            "output": out.stdout.strip()}


def _at_least_one(text: str) -> int:
    """A count (before, 0 failed in the seeding with a ZeroDivisionError or numpy's ValueError)."""
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: need at least 1")
    return n


def _rank(text: str) -> int:
    n = _at_least_one(text)
    if n > 2 * 384:  # the columns of a pattern's V (d x rank) cannot outnumber its rows
        raise argparse.ArgumentTypeError(f"{n}: at most {2 * 384} (the split embedding's width)")
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=_at_least_one, default=10_000)
    ap.add_argument("--patterns", type=_at_least_one, default=20)
    ap.add_argument("--rank", type=_rank, default=200, help="each pattern's posterior rank (1 to 768, the split width)")
    ap.add_argument("--benchmarks", type=_at_least_one, default=60)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    work = a.work or Path(tempfile.mkdtemp(prefix="bench_publish_"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    t0 = time.perf_counter()
    info = seed(work / "home_a", a.models, a.patterns, a.rank, a.benchmarks)
    seed_s = time.perf_counter() - t0
    sys.path.insert(0, str(ROOT / "tests"))
    from hubserver import HubServer

    (work / "hub").mkdir(exist_ok=True)
    server = HubServer(work / "hub").start()
    token = "hf_bench_write"
    server.tokens = {token: "write"}
    base = {**os.environ, "HF_ENDPOINT": server.url, "HF_HUB_OFFLINE": "0", "HF_TOKEN": token,
            "HF_HOME": str(work / "hf_home"), "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    try:
        pub = run(["publish", "bench/records", "--json"], {**base, "TASKSPACE_HOME": str(work / "home_a")})
        pul = run(["pull", "hub:bench/records", "--json"], {**base, "TASKSPACE_HOME": str(work / "home_b"),
                                                              "HF_TOKEN": ""})
        again = run(["publish", "bench/records", "--json"], {**base, "TASKSPACE_HOME": str(work / "home_a")})
    finally:
        server.stop()
    repo = work / "hub" / "datasets" / "bench" / "records"
    size = sum(p.stat().st_size for p in repo.rglob("*") if p.is_file())
    pulled = json.loads(pul["output"])
    result = {"models": a.models, "dim": info["dim"], "patterns": a.patterns, "rank": a.rank, "benchmarks": a.benchmarks,
              "seed_seconds": round(seed_s, 2), "dataset_mb": round(size / 2**20, 1), "commits": len(server.commits),
              "publish": {k: v for k, v in pub.items() if k != "output"},
              "pull": {k: v for k, v in pul.items() if k != "output"},
              "publish_unchanged": {k: v for k, v in again.items() if k != "output"},
              "pulled": pulled["spaces"][0]["indexed"], "unchanged_commit": json.loads(again["output"])["commit"]}
    print(f"{a.models} records x {info['dim']} dims, {a.patterns} patterns of rank {a.rank}, {a.benchmarks} benchmarks; "
          f"dataset {result['dataset_mb']} MB, {result['commits']} commit(s)")
    print(f"{'step':<28}{'seconds':>9}{'CPU s':>9}{'peak RSS MB':>13}")
    for name in ("publish", "pull", "publish_unchanged"):
        r = result[name]
        print(f"{name:<28}{r['seconds']:>9}{r['cpu_seconds']:>9}{r['peak_rss_mb']:>13}")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} CPU(s)")
    print(f"pulled into the index: {result['pulled']}; second publish commit: {result['unchanged_commit']}")
    if a.json:
        a.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
