"""Probe (issue 20): what a rebuild's child writer spends per model point, in one process, on real points of an index
``bench_scale.py`` built, and what Qdrant Edge's binding costs per payload value by type.

    TASKSPACE_CACHE_DIR=... python benchmarks/probe_child_writer.py <bench_scale --work>/home [--points 8192]

Builds ``--points`` model points from SQL as ``taskspace reindex`` does (``sync._model_points``, then the store's
checks, ``VectorStore._rows``), pickles and unpickles them in batches of 1,024 as the parent and the child do
(``indexer/store/edge_writer.py``), and writes them into fresh Edge collections four ways: as a rebuild does (with the
payload indexes), without the indexes, without payloads, and with key and digest alone; per point: converting the
batch into Edge's objects (``vectors_edge.upsert_op``, holding the GIL) and applying it (the applier thread). Then the
binding's cost per payload value of each type (``qdrant_edge.Point`` with ten values of it, less an empty payload).
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def per_value_costs(dim: int) -> dict[str, float]:
    """Microseconds the binding takes per payload value of each type (10 values a point, 3,000 points)."""
    import numpy as np
    import qdrant_edge as qe

    v = memoryview(np.zeros(dim, np.float32))

    def bench(p, n=3000):
        t = time.perf_counter()
        for i in range(n):
            qe.Point(i, v, p)
        return (time.perf_counter() - t) / n * 1e6

    base = bench({})
    kinds = {"str": "abcdef", "float": 0.5, "int": 5, "None": None, "bool": True, "empty list": [],
             "list of 1 str": ["a"], "list of 3 str": ["a", "b", "c"], "dict of 1 float": {"a": 0.5}}
    return {"empty payload (a point)": base, **{k: (bench({f"k{i}": x for i in range(10)}) - base) / 10
                                               for k, x in kinds.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("home", type=Path)
    ap.add_argument("--points", type=int, default=8192)
    args = ap.parse_args()
    os.environ.update(TASKSPACE_HOME=str(args.home.resolve()), HF_HUB_OFFLINE="1")
    import numpy as np

    from indexer import sync
    from indexer.config import reset_settings
    from indexer.store.sql import open_store
    from indexer.store.vectors import PAYLOAD_INDEXES, VectorStore
    from indexer.store.vectors_edge import EdgeEngine, upsert_op

    reset_settings()
    n = args.points
    with open_store() as sql:
        (rec,) = sql.list_spaces()
        keys = sql.model_vector_keys(rec.id)[:n]
        n = len(keys)
        t = time.perf_counter()
        pts = list(sync._model_points(sql, rec, keys))
        t_build = time.perf_counter() - t
        t = time.perf_counter()
        rows = list(VectorStore._rows(VectorStore.__new__(VectorStore), "s", "models", pts, rec.dim))
        t_rows = time.perf_counter() - t
    print(f"{n} model points of {rec.dim} dims; per point: built from SQL {t_build / n * 1e6:.1f} us, "
          f"checked {t_rows / n * 1e6:.1f} us")
    batches = [rows[i:i + 1024] for i in range(0, n, 1024)]
    t = time.perf_counter()
    blobs = [pickle.dumps(([r[0] for r in b], np.stack([r[1] for r in b]), [r[2] for r in b]),
                          protocol=pickle.HIGHEST_PROTOCOL) for b in batches]
    t_dump = time.perf_counter() - t
    t = time.perf_counter()
    loaded = [pickle.loads(x) for x in blobs]
    t_load = time.perf_counter() - t
    print(f"pickled {t_dump / n * 1e6:.1f} us, unpickled {t_load / n * 1e6:.1f} us ({sum(map(len, blobs)) / n:.0f} "
          "bytes a point)")
    with tempfile.TemporaryDirectory() as tmp:
        for j, variant in enumerate(("as a rebuild (payload indexes)", "no payload indexes", "no payload",
                                     "key and digest only")):
            eng = EdgeEngine(Path(tmp) / str(j))
            eng.create_collection("c", rec.dim)
            if variant.startswith("as a rebuild"):
                for field, schema in PAYLOAD_INDEXES["models"].items():
                    eng.create_payload_index("c", field, schema)
            convert = apply = 0.0
            for ids, vecs, pays in loaded:
                if variant == "no payload":
                    pays = [{}] * len(ids)
                elif variant == "key and digest only":
                    pays = [{"key": p["key"], "digest": p["digest"]} for p in pays]
                t = time.perf_counter()
                op = upsert_op(list(zip(ids, vecs, pays)))
                convert += time.perf_counter() - t
                t = time.perf_counter()
                eng.apply("c", op)
                apply += time.perf_counter() - t
            t = time.perf_counter()
            eng.flush("c")
            eng.close()
            print(f"{variant}: converted {convert / n * 1e6:.1f} us, applied {apply / n * 1e6:.1f} us a point; "
                  f"flush and close {time.perf_counter() - t:.2f} s")
    print("the binding per payload value (us): " + ", ".join(f"{k} {v:.2f}" for k, v in per_value_costs(rec.dim).items()))


if __name__ == "__main__":
    main()
