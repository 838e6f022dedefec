"""Is there another embedded engine whose exact search reaches the query floor (issue 20)? Exact top 10 by inner
product over N x D float32 points (default the metabench_openllm models shard's shape, 32,682 x 776, random
normal), per query row, unfiltered and filtered on a keyword held by a fifth of the points: the numpy floor
(``V @ q`` + argpartition, BLAS threads as the process has them; filtered: the same scan, then the mask), Qdrant Edge (the embedded default, one shard
on disk as ``indexer.store.vectors_edge`` creates it: plain index, ``Memory.Cold``, no WAL), FAISS ``IndexFlatIP``
(filter: an ``IDSelectorBatch``), LanceDB (flat search, ``metric("dot")``, SQL prefilter) and DuckDB
(``array_inner_product`` over a ``FLOAT[D]`` column). Engines not installed are skipped: they are not taskspace's
dependencies, so run it from a scratch environment, e.g.

    python3.11 -m venv /tmp/eng && /tmp/eng/bin/pip install numpy pyarrow qdrant-edge-py==0.9.0 faiss-cpu lancedb duckdb
    /tmp/eng/bin/python benchmarks/probe_engines.py [--n 32682] [--dim 776] [--queries 60] [--work DIR]

Prints each engine's p50 in ms (one row per query, ``--queries`` random rows, after one warm-up query), and the
seconds each took to write the points with a model point's 17-field payload (:func:`payload`; FAISS holds no
payload) in this one process (taskspace's rebuild writes Edge from a child process, ``indexer.store.edge_writer``).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

LICENSES = np.array(["mit", "apache-2.0", "llama3", "other", "cc-by-nc-4.0"])


def payload(i: int, lic: str) -> dict:
    """A payload shaped like a model point's (``indexer.sync._model_point``): 17 fields, five strings, three
    floats, three ints, three lists, a dict."""
    return {"kind": "hub", "license": lic, "num_parameters": (1 + i % 70) * 10**9, "pipeline_tag": "text-generation",
            "library": None, "tags": ["text-generation"], "gated": i % 7 == 0, "downloads": None,
            "benchmarks": ["arc"], "n_prompts": 120 + i % 50, "accuracy": 0.5 + (i % 40) / 100,
            "accuracy_by_benchmark": {"arc": 0.5 + (i % 40) / 100}, "pattern": f"p{i % 20:03d}", "lam": 31.6,
            "noise": 0.9, "aliases": [], "digest": f"{i:032x}"}


def p50(fn, rows) -> float:
    fn(rows[0])
    ts = []
    for r in rows:
        t = time.perf_counter()
        fn(r)
        ts.append((time.perf_counter() - t) * 1000)
    return statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=32682)
    ap.add_argument("--dim", type=int, default=776)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--work", default=None, help="scratch folder for the on-disk engines (default: a temp folder)")
    args = ap.parse_args()
    n, d = args.n, args.dim
    rng = np.random.default_rng(0)
    V = rng.standard_normal((n, d)).astype(np.float32)
    lic = LICENSES[np.arange(n) % len(LICENSES)]
    mit = np.flatnonzero(lic == "mit")
    rows = list(rng.standard_normal((args.queries, d)).astype(np.float32))
    work = Path(args.work or tempfile.mkdtemp(prefix="engines-"))
    work.mkdir(parents=True, exist_ok=True)
    out: dict[str, tuple[float, float]] = {}
    write: dict[str, float] = {}
    pays = [payload(i, str(lic[i])) for i in range(n)]

    def top(s):
        i = np.argpartition(-s, 10)[:10]
        return i[np.argsort(-s[i])]

    out["numpy V @ q (the floor)"] = (p50(lambda q: top(V @ q), rows), p50(lambda q: mit[top((V @ q)[mit])], rows))

    try:
        import qdrant_edge as qe
    except ImportError:
        print("qdrant-edge-py not installed: skipped")
    else:
        path = work / "edge"
        shutil.rmtree(path, ignore_errors=True)
        cfg = qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=d, distance=qe.Distance.Dot, memory=qe.Memory.Cold),
                            payload_memory=qe.Memory.Cold, wal_enabled=False,
                            optimizers=qe.EdgeOptimizersConfig(indexing_threshold=0, prevent_unoptimized=False))
        t0 = time.perf_counter()
        shard = qe.EdgeShard.create(str(path), cfg)
        shard.update(qe.UpdateOperation.create_field_index("license", qe.PayloadSchemaType.Keyword))
        for lo in range(0, n, 4096):
            pts = [qe.Point(i, memoryview(V[i]), pays[i]) for i in range(lo, min(n, lo + 4096))]
            shard.update(qe.UpdateOperation.upsert_points(pts))
        shard.flush()
        write["Qdrant Edge 0.9 (the default)"] = time.perf_counter() - t0
        flt = qe.Filter(must=[qe.FieldCondition(key="license", match=qe.MatchValue("mit"))])

        def edge(q, f=None):
            return shard.query(qe.QueryRequest(limit=10, query=qe.Query.Nearest(q.tolist()), filter=f,
                                               with_payload=False, with_vector=False))

        out["Qdrant Edge 0.9 (the default)"] = (p50(edge, rows), p50(lambda q: edge(q, flt), rows))
        shard.close()

    try:
        import faiss
    except ImportError:
        print("faiss-cpu not installed: skipped")
    else:
        t0 = time.perf_counter()
        ix = faiss.IndexFlatIP(d)
        ix.add(V)
        write[f"FAISS {faiss.__version__} IndexFlatIP"] = time.perf_counter() - t0
        params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(mit.astype(np.int64)))
        out[f"FAISS {faiss.__version__} IndexFlatIP"] = (p50(lambda q: ix.search(q[None, :], 10), rows),
                                                         p50(lambda q: ix.search(q[None, :], 10, params=params), rows))

    try:
        import lancedb
        import pyarrow as pa
    except ImportError:
        print("lancedb not installed: skipped")
    else:
        path = work / "lance"
        shutil.rmtree(path, ignore_errors=True)
        t0 = time.perf_counter()
        cols = {k: pa.array([p[k] for p in pays]) for k in pays[0]}
        tbl = lancedb.connect(str(path)).create_table("m", pa.table({
            "id": pa.array(np.arange(n)), **cols, "vector": pa.FixedSizeListArray.from_arrays(pa.array(V.ravel()), d)}))
        write[f"LanceDB {lancedb.__version__} (flat)"] = time.perf_counter() - t0

        def lance(q, where=None):
            s = tbl.search(q).metric("dot").limit(10)
            return (s.where(where, prefilter=True) if where else s).to_arrow()

        out[f"LanceDB {lancedb.__version__} (flat)"] = (p50(lance, rows), p50(lambda q: lance(q, "license = 'mit'"), rows))

    try:
        import duckdb
        import pyarrow as pa
    except ImportError:
        print("duckdb not installed: skipped")
    else:
        t0 = time.perf_counter()
        con = duckdb.connect(str(work / "duck.db"))
        cols = {k: pa.array([p[k] for p in pays]) for k in pays[0]}
        arr = pa.table({"id": pa.array(np.arange(n)), **cols,
                        "v": pa.FixedSizeListArray.from_arrays(pa.array(V.ravel()), d)})
        con.register("arr", arr)
        con.execute(f"create or replace table m as select * exclude (v), v::FLOAT[{d}] v from arr")
        con.execute("checkpoint")
        write[f"DuckDB {duckdb.__version__}"] = time.perf_counter() - t0
        sql = f"select id from m {{}} order by array_inner_product(v, ?::FLOAT[{d}]) desc limit 10"

        def duck(q, where=""):
            return con.execute(sql.format(where), [q.tolist()]).fetchall()

        out[f"DuckDB {duckdb.__version__}"] = (p50(duck, rows), p50(lambda q: duck(q, "where license = 'mit'"), rows))
        con.close()

    print(f"{n} x {d} float32, exact top 10 by inner product, p50 of {len(rows)} queries (ms)")
    print(f"{'engine':<34} {'unfiltered':>10} {'filtered':>9} {'write s':>8}")
    for k, (a, b) in out.items():
        w = f"{write[k]:.2f}" if k in write else "-"
        print(f"{k:<34} {a:>10.2f} {b:>9.2f} {w:>8}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
