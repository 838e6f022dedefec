"""Probe (issue 20): does Qdrant Edge search two segments of one shard on two threads (``max_search_threads=2``)?

    TASKSPACE_HOME=<bench_scale --work>/home TASKSPACE_CACHE_DIR=... python benchmarks/probe_edge_segments.py

Copies the models' vectors of the index in TASKSPACE_HOME (e.g. the one ``bench_scale.py`` builds) into three
shards under /tmp: one segment; two segments (the first half sealed by ``optimize()`` with a graph-less HNSW
config, ``m = 0``, then the second half appended) searched with 2 threads and with 1; p50 of 100 queries each,
interleaved with the numpy product, and whether each shard's top 10 equals numpy's (ties may be listed in another
order)."""
import argparse, shutil, statistics, time, uuid, sys
argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
import numpy as np, qdrant_edge as qe
from indexer import query
from indexer.config import Settings
from indexer.errors import NotFoundError
from indexer.store.sql import open_store
with open_store() as sql:
    try:
        sp = query._space(sql)
    except NotFoundError as exc:  # before: a traceback, also for --help
        sys.exit(f"error: {exc}; this probe reads the index in TASKSPACE_HOME ({Settings.from_env().home}): set it to "
                 "one, e.g. <bench_scale.py --work>/home")
    keys, X = sql.model_vector_matrix(sp.id)
X = np.ascontiguousarray(X, dtype=np.float32); N, d = X.shape
print("vectors", X.shape, flush=True)
def cfg(threads, thr):
    opt = qe.EdgeOptimizersConfig(indexing_threshold=thr, prevent_unoptimized=False)
    return qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=d, distance=qe.Distance.Dot, memory=qe.Memory.Cold),
                         payload_memory=qe.Memory.Cold, wal_enabled=False, optimizers=opt, max_search_threads=threads,
                         hnsw_config=qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10**9))
def ins(sh, lo, hi):
    for a in range(lo, hi, 1000):
        sh.update(qe.UpdateOperation.upsert_points([qe.Point(str(uuid.UUID(int=i + 1)), X[i].tolist(), {"i": i})
                                                    for i in range(a, min(hi, a + 1000))]))
def build(path, segs, threads):
    shutil.rmtree(path, ignore_errors=True)
    sh = qe.EdgeShard.create(path, cfg(threads, 0))
    if segs == 1:
        ins(sh, 0, N); sh.flush(); return sh
    ins(sh, 0, N // 2); sh.flush(); sh.close()
    sh = qe.EdgeShard.load(path, cfg(threads, 1)); sh.optimize()
    ins(sh, N // 2, N); sh.flush(); sh.close()
    return qe.EdgeShard.load(path, cfg(threads, 0))
rng = np.random.default_rng(0)
Q = (X[rng.choice(N, 100)] + 0.1 * rng.standard_normal((100, d))).astype(np.float32)
shards = {"1 segment": build("/tmp/edgeseg1", 1, None), "2 segments, 2 threads": build("/tmp/edgeseg2", 2, 2),
          "2 segments, 1 thread": build("/tmp/edgeseg3", 2, 1)}
for name, sh in shards.items():
    print(name, "segments", sh.info().segments_count, flush=True)
req = lambda q, wp=False: qe.QueryRequest(limit=10, query=qe.Query.Nearest(q.tolist()), with_payload=wp, with_vector=False)
for rnd in range(2):
    t = {k: [] for k in [*shards, "numpy"]}
    for q in Q:
        for name, sh in shards.items():
            t0 = time.perf_counter(); sh.query(req(q)); t[name].append(time.perf_counter() - t0)
        t0 = time.perf_counter(); s = X @ q; top = np.argpartition(-s, 10)[:10]; top[np.argsort(-s[top])]; t["numpy"].append(time.perf_counter() - t0)
    print("round", rnd, {k: round(statistics.median(v) * 1000, 2) for k, v in t.items()}, flush=True)
for name, sh in shards.items():
    same = sum([p.payload["i"] for p in sh.query(req(q, True))] == list(np.argsort(-(X @ q))[:10]) for q in Q[:30])
    print(name, "top 10 = numpy", same, "/ 30")
