"""Speed of the Qdrant index (the embedded engine, TASKSPACE_QDRANT_ENGINE: edge by default, or local):
real data (MMLU-Pro by default) through SQL -> reindex -> check -> search, and synthetic scale (rebuild and
query latency for 5k / 20k model points).

    python benchmarks/bench_vectors.py [--data ../shared/data/mmlu_pro] [--sizes 5000,20000] [--dims 384,768]
    TASKSPACE_QDRANT_ENGINE=local python benchmarks/bench_vectors.py ...     # the same with qdrant-client's local mode

Uses a fresh TASKSPACE_HOME under /tmp (override with --home); the embedding cache is
$TASKSPACE_CACHE_DIR if set, else <home>/cache (the first run encodes the 12,032 MMLU-Pro prompts).
Prints a Markdown report (paste it into docs/BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t0


def latency(fn, queries) -> tuple[float, float]:
    """(p50, p95) in milliseconds over the queries."""
    ts = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        ts.append((time.perf_counter() - t0) * 1000)
    ts.sort()
    return statistics.median(ts), ts[int(0.95 * (len(ts) - 1))]


def shared_files(data: Path) -> tuple[Path, Path] | None:
    """(outcomes, prompts) of a folder of the shared layout, each plain or gzipped; None without them. Before,
    ``outcomes.csv.gz`` was assumed: the bundled sample (plain files) failed with "no such file or folder"."""
    found = [next((p for p in (data / n, data / f"{n}.gz") if p.is_file()), None) for n in ("outcomes.csv",
                                                                                          "prompts.jsonl")]
    return None if None in found else (found[0], found[1])


def real_data(data: Path, lines: list[str]) -> None:
    from indexer.encoder import get_encoder
    from indexer.solver import HyperplaneSolver
    from indexer.sources import read_source
    from indexer.store.sql import BenchmarkVector, ModelVector, open_store
    from indexer.store.vectors import VectorStore
    from indexer.sync import check, reindex, space_name

    outcomes, prompts = shared_files(data)
    batch = read_source(outcomes, prompts=prompts)
    if batch.table is not None:  # as Outcome rows: when this was written, Store.ingest ignored `batch.table`
        batch.outcomes, batch.table = list(batch.iter_outcomes()), None
    enc = get_encoder("all-MiniLM-L6-v2")
    with open_store() as sql:
        _, t_ingest = timed(sql.ingest, batch)
        m = sql.load_outcomes()
        texts = sql.prompt_texts(m.prompt_ids)
        D, t_enc = timed(enc.encode, texts)
        solver, t_fit = timed(HyperplaneSolver(1.0, 0.0).fit, D, m.scores, m.models)
        space = sql.get_or_create_space(enc.id, enc.dim, 1.0, 0.0)
        digests = sql.model_digests()
        bench = np.array(m.benchmarks)
        names = sorted(set(m.benchmarks))
        vecs = []
        for i, model in enumerate(m.models):
            obs = ~np.isnan(m.scores[i])
            acc = {b: float(np.nanmean(m.scores[i][bench == b])) for b in names if obs[bench == b].any()}
            vecs.append(ModelVector(model, solver.normals_[i].astype(np.float32), int(obs.sum()), list(acc), acc,
                                    digests[model]))
        sql.save_model_vectors(space.id, vecs)
        sql.save_benchmark_vectors(space.id, [BenchmarkVector(b, D[bench == b].mean(axis=0), int((bench == b).sum()))
                                              for b in names])
        with VectorStore.from_settings() as vs:
            (res,), t_reindex = timed(reindex, sql, vs, encoder=enc)
            _, t_reindex2 = timed(reindex, sql, vs, encoder=enc)
            drifts, t_check = timed(check, sql, vs)
            assert all(d.clean for d in drifts), [d.as_dict() for d in drifts]
            name = space_name(space)
            qs = D[np.random.default_rng(0).choice(len(D), 50, replace=False)]
            p_models = latency(lambda q: vs.search(name, "models", q, limit=10), qs)
            p_prompts = latency(lambda q: vs.search(name, "prompts", q, limit=5), qs)
            first_bench = sorted(set(m.benchmarks))[0]
            p_prompts_f = latency(lambda q: vs.search(name, "prompts", q, limit=5,
                                                      filters={"benchmark": first_bench}), qs)
            _, t_batch = timed(vs.search_many, name, "prompts", D[:1000], limit=5)
    lines += [
        f"### Real data: `{data.name}` ({len(m.models)} models x {len(m.prompt_ids):,} prompts, "
        f"{batch.n_outcomes:,} outcomes), MiniLM 384-d, engine {_engine()}",
        "",
        "| step | time |",
        "|---|---|",
        f"| SQL ingest (SQLite) | {t_ingest:.1f} s |",
        f"| encode prompts (cache {'warm' if t_enc < 5 else 'cold'}) | {t_enc:.1f} s |",
        f"| solver fit | {t_fit:.2f} s |",
        f"| `reindex` (models {res.counts['models']}, benchmarks {res.counts['benchmarks']}, prompts "
        f"{res.counts['prompts']:,}), first | {t_reindex:.1f} s |",
        f"| `reindex` again (alias switch, old dropped) | {t_reindex2:.1f} s |",
        f"| `check` (scan + compare every point) | {t_check:.1f} s |",
        f"| search models, top 10 (p50 / p95) | {p_models[0]:.1f} / {p_models[1]:.1f} ms |",
        f"| search prompts, top 5, exact over {res.counts['prompts']:,} (p50 / p95) | {p_prompts[0]:.1f} / {p_prompts[1]:.1f} ms |",
        f"| same with filter `benchmark = {first_bench}` (p50 / p95) | {p_prompts_f[0]:.1f} / {p_prompts_f[1]:.1f} ms |",
        f"| `search_many` 1,000 prompt queries, top 5 | {t_batch:.1f} s |",
        "",
    ]


def _engine() -> str:
    from indexer.config import get_settings

    return get_settings().qdrant_engine


def synthetic(sizes: list[int], dims: list[int], home: Path, lines: list[str]) -> None:
    from indexer.store.vectors import Point, VectorStore

    lines += [f"### Synthetic model points, engine {_engine()} (random vectors, Hub-like payloads)", "",
              "| points | dim | rebuild | points/s | search top 10 p50 / p95 | filtered p50 / p95 | reopen |",
              "|---|---|---|---|---|---|---|"]
    rng = np.random.default_rng(0)
    licenses = ["mit", "apache-2.0", "llama3", "other"]
    for dim in dims:
        for n in sizes:
            path = home / f"synthetic-{n}-{dim}"
            shutil.rmtree(path, ignore_errors=True)
            X = rng.normal(size=(n, dim)).astype(np.float32)
            pts = (Point(f"org/m{i}", X[i], {"license": licenses[i % 4], "num_parameters": int(1e8 * (i % 700 + 1)),
                                              "gated": i % 7 == 0, "tags": ["chat"] if i % 2 else ["base"]})
                   for i in range(n))
            with VectorStore(path=path) as vs:
                _, t_build = timed(vs.rebuild, "bench", "models", pts, dim=dim)
            _, t_open = timed(lambda: VectorStore(path=path))
            vs = _
            qs = rng.normal(size=(30, dim))
            p = latency(lambda q: vs.search("bench", "models", q, limit=10), qs)
            pf = latency(lambda q: vs.search("bench", "models", q, limit=10, filters={
                "license": ["mit", "apache-2.0"], "num_parameters": {"lte": 8_000_000_000}, "gated": False}), qs)
            vs.close()
            shutil.rmtree(path, ignore_errors=True)
            lines.append(f"| {n:,} | {dim} | {t_build:.1f} s | {n / t_build:,.0f} | {p[0]:.1f} / {p[1]:.1f} ms | "
                         f"{pf[0]:.1f} / {pf[1]:.1f} ms | {t_open:.1f} s |")
    lines.append("")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "mmlu_pro")
    ap.add_argument("--sizes", default="5000,20000")
    ap.add_argument("--dims", default="384,768")
    ap.add_argument("--home", type=Path, default=Path("/tmp/taskspace-bench-vectors"))
    ap.add_argument("--skip-real", action="store_true")
    args = ap.parse_args()
    if not args.skip_real and shared_files(args.data) is None:  # before anything is removed or built
        ap.error(f"--data {args.data}: no outcomes.csv[.gz] and prompts.jsonl[.gz] (or give --skip-real)")
    shutil.rmtree(args.home, ignore_errors=True)
    os.environ["TASKSPACE_HOME"] = str(args.home)
    os.environ.pop("TASKSPACE_DATABASE_URL", None)
    os.environ.pop("TASKSPACE_QDRANT_URL", None)
    import qdrant_client

    lines = [f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
             f"qdrant-client {qdrant_client.__version__ if hasattr(qdrant_client, '__version__') else '1.20'}.", ""]
    if not args.skip_real:
        real_data(args.data, lines)
    synthetic([int(s) for s in args.sizes.split(",")], [int(d) for d in args.dims.split(",")], args.home, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
