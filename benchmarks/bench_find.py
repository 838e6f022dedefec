"""Query latency of ``find_models`` (evidence and calibration included) against its floor, at 1,000 and 10,000
indexed models, and where a cold ``taskspace search`` process spends its time.

    python benchmarks/bench_find.py [--sizes 1000 10000] [--queries 200] [--work DIR] [--json FILE]
    python benchmarks/bench_find.py --variants-only --work DIR [--queries 50]   # the options, on DIR's index

Setup (in --work, default a temporary folder; embedded defaults: SQLite + Qdrant Edge, MiniLM):

1. the bundled real sample (``indexer/data/sample``: 25 models x 420 MMLU-Pro prompts, 14 benchmarks) is indexed
   by a normal ``taskspace index`` pass (real vectors, calibration, posterior patterns, prompts collection);
2. synthetic models up to the size: outcomes on the same 420 prompts (a per-model ability, ingested into SQL, so
   evidence reads real outcome blocks) and a vector each, a random mix of two real model vectors plus noise,
   with a real model's posterior payload (pattern, lambda, noise) and synthetic metadata, upserted into the
   models collection (synthetic vectors: the count is what matters for search).

Per size, in one process, 200 distinct single-prompt queries (100 EvalArena code tasks and 100 MMLU-Pro
questions from ../shared/data that are not in the sample; none in the embedding cache) each run as:

- ``find_models(text, k=10)`` with the shared stores (the library call; ``FindResult.timings`` splits it into
  encoding and the rest: the query vector's neighbour fill, the search, probabilities and intervals, coverage and
  evidence);
- the floor, measured right after on the same query: the one-prompt encode (the same encoder instance, no
  embedding cache) + the bare Qdrant search of the models collection (top 10, the query's vector).

Reports p50 and p95 of each and the ratio of the p50 totals. Then a cold ``taskspace search`` process: the whole
command's wall time, and a fresh process that times the same steps one by one (interpreter start, CLI imports,
opening the stores, loading the encoder, the first query).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"
LICENSES = ["mit", "apache-2.0", "llama3", "other", "cc-by-nc-4.0"]


def pct(xs, q):
    return float(np.percentile(np.asarray(xs) * 1000.0, q))


def query_texts(n: int, exclude: set[str]) -> list[str]:
    """n distinct real task texts: half EvalArena code tasks, half MMLU-Pro questions not in the sample."""
    code, mc = [], []
    with open(DATA / "evalarena_code" / "prompts.jsonl") as f:
        for line in f:
            t = json.loads(line)["text"]
            if t not in exclude and t not in code:
                code.append(t)
            if len(code) >= n // 2:
                break
    with gzip.open(DATA / "mmlu_pro" / "prompts.jsonl.gz", "rt") as f:
        for line in f:
            t = json.loads(line)["text"]
            if t not in exclude and t not in mc:
                mc.append(t)
            if len(mc) >= n - len(code):
                break
    return code + mc


def grow(store, vectors, n_total: int, rng) -> None:
    """Add synthetic models until the models collection holds ``n_total`` (see the module docstring)."""
    from indexer.records import OutcomeTable, SourceBatch, SourceInfo
    from indexer.space import space_name
    from indexer.store.vectors import Point

    (space,) = store.list_spaces()
    name = space_name(space)
    have = vectors.count(name, "models")
    new = n_total - have
    if new <= 0:
        return
    real = [h for h in vectors.scan(name, "models", with_vectors=True) if not h.key.startswith("synthetic/")]
    om = store.load_outcomes(models=[h.key for h in real])
    texts = store.prompt_texts(om.prompt_ids)
    keys = [f"synthetic/m{have + i:05d}" for i in range(new)]
    ability = rng.uniform(0.1, 0.9, new)
    P = len(texts)
    scores = (rng.random((new, P)) < ability[:, None]).astype(np.float64)
    table = OutcomeTable(models=keys, prompt_ids=[f"p{j}" for j in range(P)], benchmarks=list(om.benchmarks),
                         texts=list(texts), model_idx=np.repeat(np.arange(new, dtype=np.int32), P),
                         prompt_idx=np.tile(np.arange(P, dtype=np.int32), new), scores=scores.ravel())
    store.ingest(SourceBatch(SourceInfo("table", f"synthetic-{n_total}", "r1"), {}, [], table=table))
    V = np.stack([h.vector for h in real]).astype(np.float64)
    a, b = rng.integers(0, len(real), new), rng.integers(0, len(real), new)
    w = rng.random(new)[:, None]
    vecs = (1 - w) * V[a] + w * V[b] + rng.normal(0, 0.01, (new, V.shape[1]))
    points = []
    for i, k in enumerate(keys):
        p = dict(real[a[i]].payload)
        p.update(kind="hub", license=LICENSES[i % len(LICENSES)], num_parameters=int(10 ** rng.uniform(8, 11.5)),
                 gated=bool(i % 7 == 0), aliases=[], accuracy=float(ability[i]))
        points.append(Point(k, vecs[i].astype(np.float32), p))
    vectors.upsert(name, "models", points, dim=int(space.dim))


def measure(texts: list[str]) -> dict:
    from indexer.encoder import Encoder
    from indexer.find import find_models
    from indexer.query import _shared_stores, _space
    from indexer.space import space_encoder, space_name

    store, vectors = _shared_stores()
    space = _space(store)
    name = space_name(space)
    enc = space_encoder(space)
    floor_enc = Encoder(enc.name if hasattr(enc, "name") else "all-MiniLM-L6-v2", cache_dir=None, use_cache=False)
    floor_enc._model = enc._load()  # the same loaded model, without the embedding cache
    bench = [h.vector for h in vectors.scan(name, "benchmarks", with_vectors=True)]
    find_models("warm-up query: sort a list", k=10)  # the encoder and the stores load once per process
    rows = {"encode": [], "rest": [], "total": [], "rest_search": [], "rest_evidence": [], "floor_encode": [],
            "floor_search": [], "floor": []}
    for i, text in enumerate(texts):
        t0 = time.perf_counter()
        r = find_models(text, k=10)
        total = time.perf_counter() - t0
        rows["encode"].append(r.timings["encode"])
        rows["rest"].append(total - r.timings["encode"])
        rows["total"].append(total)
        rows["rest_search"].append(r.timings["search"])  # the models search, probabilities and intervals
        rows["rest_evidence"].append(r.timings["evidence"])  # coverage and evidence (prompts search + SQL)
        t0 = time.perf_counter()
        floor_enc._encode_raw([text], progress=False)
        t1 = time.perf_counter()
        vectors.search(name, "models", bench[i % len(bench)], limit=10)
        t2 = time.perf_counter()
        rows["floor_encode"].append(t1 - t0)
        rows["floor_search"].append(t2 - t1)
        rows["floor"].append(t2 - t0)
    out = {k: {"p50_ms": round(pct(v, 50), 2), "p95_ms": round(pct(v, 95), 2)} for k, v in rows.items()}
    out["ratio_p50"] = round(out["total"]["p50_ms"] / out["floor"]["p50_ms"], 2)
    out["models"] = vectors.count(name, "models")
    return out


COLD = r"""
import time, sys, json
t0 = time.perf_counter()
import indexer.cli  # noqa: F401  (what the command imports before it runs)
t1 = time.perf_counter()
from indexer.query import _shared_stores, _space
store, vectors = _shared_stores(); space = _space(store)
t2 = time.perf_counter()
from indexer.space import space_encoder
space_encoder(space)._load()
t3 = time.perf_counter()
from indexer.find import find_models
r = find_models(sys.argv[1], k=10)
t4 = time.perf_counter()
print(json.dumps({"cli_imports": t1 - t0, "open_stores": t2 - t1, "load_encoder": t3 - t2, "first_query": t4 - t3,
                  "query_encode": r.timings["encode"], "query_search": r.timings["search"],
                  "query_evidence": r.timings["evidence"]}))
"""


def cold(env: dict, text: str, repeat: int = 3) -> dict:
    def wall(args):
        t0 = time.perf_counter()
        p = subprocess.run(args, env=env, capture_output=True, text=True, cwd=ROOT)
        if p.returncode:
            raise RuntimeError(p.stderr[-2000:])
        return time.perf_counter() - t0, p.stdout

    start = statistics.median(wall([sys.executable, "-c", "pass"])[0] for _ in range(repeat))
    cmd = statistics.median(wall([sys.executable, "-m", "indexer.cli", "search", f"{text} {i}", "-k", "10"])[0]
                            for i in range(repeat))
    steps = [json.loads(wall([sys.executable, "-c", COLD, f"{text} step {i}"])[1]) for i in range(repeat)]
    out = {"command_wall": cmd, "interpreter_start": start}
    out.update({k: statistics.median(s[k] for s in steps) for k in steps[0]})
    return {k: round(v * 1000, 1) for k, v in out.items()}


VARIANTS = {
    "default": {},
    "filters (license, max 8B)": {"filters": {"licenses": ["mit", "apache-2.0"], "max_params": "8B"}},
    "prefer_smaller 0.05": {"prefer_smaller": 0.05},
    "rank lcb": {"rank": "lcb"},
    "compare 20 models": None,  # filled in: 20 indexed models
}


def variants(texts: list[str]) -> dict:
    """p50/p95 of find_models per option on texts already in the embedding cache (encoding ~0): what each
    option costs beyond the default query."""
    from indexer.find import find_models
    from indexer.query import _shared_stores, _space
    from indexer.space import space_name

    store, vectors = _shared_stores()
    name = space_name(_space(store))
    some = [h.key for h, _ in zip(vectors.scan(name, "models", fields=["key"]), range(20))]
    out = {}
    for label, kw in VARIANTS.items():
        kw = {"models": some} if kw is None else kw
        ts = []
        for text in texts:
            find_models(text, k=10, **kw)  # cached encode, stores open
            t0 = time.perf_counter()
            find_models(text, k=10, **kw)
            ts.append(time.perf_counter() - t0)
        out[label] = {"p50_ms": round(pct(ts, 50), 2), "p95_ms": round(pct(ts, 95), 2)}
    return out


def main() -> None:
    global DATA  # --data: query_texts reads it
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--variants-only", action="store_true",
                    help="Reuse the index in --work (as a previous run left it) and time the query options only.")
    ap.add_argument("--data", type=Path, default=DATA,
                    help=f"the shared data sets' folder, holding evalarena_code and mmlu_pro (default {DATA})")
    args = ap.parse_args()
    DATA = args.data
    # what the queries are read from, checked first: before, a missing ../shared/data failed with a traceback after the
    # indexes were built (minutes)
    need = [DATA / "evalarena_code" / "prompts.jsonl", DATA / "mmlu_pro" / "prompts.jsonl.gz"]
    if missing := [str(f) for f in need if not f.is_file()]:
        ap.error(f"{', '.join(missing)} not found: give the shared data sets' folder with --data DIR")
    if args.variants_only:
        os.environ.update(TASKSPACE_HOME=str(args.work / "home"), TASKSPACE_CACHE_DIR=str(args.work / "cache"),
                          HF_HUB_OFFLINE="1")
        from indexer.query import _shared_stores

        store, _ = _shared_stores()
        texts = query_texts(args.queries, set(store.prompt_texts(store.load_outcomes(
            models=[m.key for m in store.list_models() if not m.key.startswith("synthetic/")]).prompt_ids)))
        res = {"queries": len(texts), "variants": variants(texts)}
        print(json.dumps(res, indent=1))
        if args.json:
            args.json.write_text(json.dumps(res, indent=1))
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_find_"))
    shutil.rmtree(work / "home", ignore_errors=True)
    os.environ.update(TASKSPACE_HOME=str(work / "home"), TASKSPACE_CACHE_DIR=str(work / "cache"), HF_HUB_OFFLINE="1")
    os.environ.pop("TASKSPACE_DATABASE_URL", None)
    os.environ.pop("TASKSPACE_QDRANT_URL", None)
    from indexer.config import reset_settings

    reset_settings()
    from indexer.pipeline import Indexer
    from indexer.query import close_cached
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    rng = np.random.default_rng(0)
    with open_store() as store, VectorStore.from_settings() as vectors:
        r = Indexer(store, vectors).run([SourceSpec(str(ROOT / "indexer" / "data" / "sample"))])
        assert r.status == "ok", r.errors
        sample = set(store.prompt_texts(store.load_outcomes().prompt_ids))
    texts = query_texts(args.queries, sample)
    assert len(set(texts)) == args.queries
    results = {"queries": len(texts), "sizes": {}}
    for size in args.sizes:
        close_cached()
        with open_store() as store, VectorStore.from_settings() as vectors:
            t0 = time.perf_counter()
            grow(store, vectors, size, rng)
            print(f"grew the index to {size} models in {time.perf_counter() - t0:.1f}s", flush=True)
        forget_embeddings()  # every size encodes the same 200 texts afresh (the cache holds nothing of them)
        res = measure(texts)
        results["sizes"][size] = res
        print(json.dumps({size: res}, indent=1), flush=True)
    close_cached()
    results["cold_search_ms"] = cold(dict(os.environ), "Write a Python function that merges two sorted lists")
    print(json.dumps(results["cold_search_ms"], indent=1))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


def forget_embeddings() -> None:
    """Empty the bench's own embedding cache (queries only read the index, never the prompts' embeddings)."""
    from indexer.config import get_settings
    from indexer.encoder import get_encoder

    cache = get_encoder(get_settings().encoder)._get_cache()
    if cache is not None:
        with cache._conn() as con:
            con.execute("DELETE FROM embedding")


if __name__ == "__main__":
    main()
