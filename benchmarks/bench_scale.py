"""Hub scale on one machine: a full index of the largest shared set (metabench_openllm: 32,676 models x 1,075
prompts, 5.1M cells) in the embedded default stores, timed step by step against a floor measured in the same run.

    python benchmarks/bench_scale.py [--data DIR] [--work DIR] [--cache-dir DIR] [--repeat N] [--json FILE]

Steps (each repeated --repeat times where it is cheap; medians):

1. the reader alone (``read_source``), then one from-scratch ``taskspace index`` pass in-process (seconds per
   stage; whether the encoder model was loaded: with a warm embedding cache nothing needs it);
2. synthetic Hub metadata for every model (license, parameters, gated: the data's models are anonymous), then
   ``reindex`` of every collection, against the floor: the same points (built from SQL the same way) written
   into a plain SQLite table (vector blob + JSON payload, one transaction);
3. open the local index in a fresh process (open + count of the models collection; RSS, anonymous RSS);
4. in-process query (stores open, prompt text in the embedding cache) against the floor: the cached encode +
   numpy ``V @ q`` over every model vector + top 10; the same query filtered on ``license = mit``;
5. ``find_models()`` with no stores passed (the documented library call), repeated in one process;
6. ``taskspace search`` as a command (process start included), a pass with nothing new (in-process and as a
   command), adding one model (an existing model's outcomes under a new name: in-process and as a command),
   ``taskspace check`` as a command.

The data is read only to measure: nothing of it is written outside --work. The embedding cache is
``--cache-dir`` (default $TASKSPACE_CACHE_DIR, else <work>/cache: cold, the first pass then encodes 1,075 prompts).
Prints the table (step, now, floor, ratio); ``--json`` also writes every number.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "metabench_openllm"
LICENSES = ["mit", "apache-2.0", "llama3", "other", "cc-by-nc-4.0"]


def timed(fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t0


def setup_row(res: dict, stages: dict) -> str:
    """The setup row: whether the from-scratch pass loaded the encoder. With a cold embedding cache its embed stage
    encodes the prompts, which loads the encoder whatever setup does, so the row is then not a measurement."""
    embedded = (res.get("first_counts") or {}).get("embedded", 0)
    if embedded:
        return (f"{stages.get('setup', 0):.2f} s; not measured: cold embedding cache, the pass encoded {embedded} "
                "prompts (run again with the same --cache-dir)")
    return f"{stages.get('setup', 0):.2f} s, encoder " + ("loaded" if res["encoder_loaded"] else "not loaded")


def median_of(fn, n: int) -> float:
    return statistics.median(timed(fn)[1] for _ in range(n))


def p50_ms(fn, items) -> float:
    ts = []
    for x in items:
        t0 = time.perf_counter()
        fn(x)
        ts.append((time.perf_counter() - t0) * 1000)
    return statistics.median(ts)


CPU: dict[str, list[float]] = {}  # command -> CPU seconds (user + sys) per run


def run_cmd(args: list[str], env: dict) -> float:
    """Wall seconds of ``python -m indexer.cli ARGS`` (process start included; its CPU seconds go to CPU);
    raises on a failing command."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "indexer.cli", *args], env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"`taskspace {' '.join(args)}` exited {proc.returncode}: {proc.stderr[-2000:]}")
    CPU.setdefault(args[0] + (" --source" if "--source" in args else "") + (" --license" if "--license" in args else ""),
                   []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return dt


OPEN_PROBE = r"""
import json, sys, time
def mem():
    s = open("/proc/self/status").read()
    return {k: int(s.split(k + ":")[1].split()[0]) / 1024 for k in ("VmRSS", "RssAnon")}
from indexer.store.vectors import VectorStore
space = sys.argv[1]
m0 = mem()
t0 = time.perf_counter()
vs = VectorStore.from_settings()
n = vs.count(space, "models")
t_open = time.perf_counter() - t0
m1 = mem()
import numpy as np
t0 = time.perf_counter()
vs.search(space, "models", np.ones(int(sys.argv[2]), np.float32), limit=10)
t_query = time.perf_counter() - t0
m2 = mem()
vs.close()
print(json.dumps({"open": t_open, "first_query": t_query, "n": n,
                  "rss_open": m1["VmRSS"] - m0["VmRSS"], "anon_open": m1["RssAnon"] - m0["RssAnon"],
                  "rss_query": m2["VmRSS"] - m0["VmRSS"], "anon_query": m2["RssAnon"] - m0["RssAnon"]}))
"""


def open_probe(env: dict, space: str, dim: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", OPEN_PROBE, space, str(dim)], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"open probe failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _shared_file(data: Path, name: str) -> Path:
    """``name`` or ``name.gz`` in a folder of the shared layout; before, the gzipped name was assumed, so the bundled
    sample (plain files) failed after its index was built (``BadGzipFile``, or ``outcomes.csv.gz`` not found)."""
    for p in (data / name, data / f"{name}.gz"):
        if p.is_file():
            return p
    raise SystemExit(f"{data}: no {name} or {name}.gz (--data takes a folder of the shared layout: outcomes.csv[.gz] "
                     "and prompts.jsonl[.gz])")


def one_model_source(data: Path, out: Path, new_name: str) -> str:
    """A table source holding one existing model's outcomes under ``new_name`` (its prompts are all known)."""
    import pyarrow.csv as pacsv
    import pyarrow.compute as pc

    table = pacsv.read_csv(_shared_file(data, "outcomes.csv"))  # pyarrow reads a .gz by its name
    first = table.column("model")[0].as_py()
    rows = table.filter(pc.equal(table.column("model"), first))
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "outcomes.csv", "w") as f:
        f.write("model,prompt_id,correct\n")
        for pid, ok in zip(rows.column("prompt_id").to_pylist(), rows.column("correct").to_pylist()):
            f.write(f"{new_name},{pid},{ok}\n")
    prompts = next(p for p in data.iterdir() if p.name.startswith("prompts.jsonl"))
    os.symlink(prompts.resolve(), out / prompts.name)
    return first


def sqlite_floor(sql, rec, work: Path) -> tuple[float, int]:
    """Seconds to build every point of the space from SQL (as ``reindex`` does) and write them into a plain
    SQLite table (id, vector blob, JSON payload) in one transaction; and the number of points."""
    from indexer import sync
    from indexer.store.vectors import point_id

    db = work / "floor.sqlite"
    if db.exists():
        db.unlink()
    name = sync.space_name(rec)
    t0 = time.perf_counter()
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE points (kind TEXT, id TEXT PRIMARY KEY, vector BLOB, payload TEXT)")
    n = 0
    for kind, pts in (("models", sync._model_points(sql, rec)), ("benchmarks", sync._benchmark_points(sql, rec)),
                      ("prompts", sync._prompt_points(sql, rec, None))):
        rows = ((kind, point_id(name, kind, p.key), np.asarray(p.vector, np.float32).tobytes(),
                 json.dumps({**p.payload, "key": p.key}, default=str)) for p in pts)
        n += con.executemany("INSERT INTO points VALUES (?, ?, ?, ?)", rows).rowcount
    con.commit()
    con.close()
    return time.perf_counter() - t0, n


def folder_mb(path: Path) -> tuple[float, float]:
    """(MB allocated on disk, MB of apparent file sizes: Edge preallocates some files sparsely)."""
    files = [f.stat() for f in path.rglob("*") if f.is_file()]
    return sum(st.st_blocks * 512 for st in files) / 1e6, sum(st.st_size for st in files) / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--work", type=Path, default=None, help="working folder (default: a fresh temporary one)")
    ap.add_argument("--cache-dir", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    for name in ("outcomes.csv", "prompts.jsonl"):  # what steps 4 and 6 read, checked before the index is built
        _shared_file(args.data, name)

    work = args.work or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    home = work / "home"
    if home.exists():
        shutil.rmtree(home)
    cache = args.cache_dir or (Path(os.environ["TASKSPACE_CACHE_DIR"]) if os.environ.get("TASKSPACE_CACHE_DIR")
                               else work / "cache")
    os.environ.update(TASKSPACE_HOME=str(home), TASKSPACE_CACHE_DIR=str(cache), HF_HUB_OFFLINE="1")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    R = args.repeat
    data = args.data.resolve()
    res: dict = {"data": str(data), "cache": str(cache), "load_before": os.getloadavg()}
    print(f"data {data}; work {work}; cache {cache}; load {os.getloadavg()}", file=sys.stderr)

    from indexer.config import reset_settings
    from indexer.pipeline import Progress, run_index
    from indexer.sourcelist import SourceSpec
    from indexer.sources import read_source

    reset_settings()
    # 1. the reader alone, then a from-scratch pass
    res["reader"] = median_of(lambda: read_source(str(data)), max(1, R // 2))
    first, res["first_wall"] = timed(run_index, [SourceSpec(str(data))], progress=Progress(False))
    assert first.status == "ok", first.errors
    res["first"] = first.seconds
    res["first_counts"] = first.counts
    res["encoder_loaded"] = "sentence_transformers" in sys.modules
    print(f"first pass {res['first_wall']:.1f} s: {first.seconds}", file=sys.stderr)

    from indexer import query, sync
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    # 2. synthetic metadata, reindex vs the plain-SQLite floor
    with open_store() as sql:
        (rec,) = sql.list_spaces()
        name, dim = sync.space_name(rec), int(rec.dim)
        keys = sorted(sql.model_digests())
        sql.upsert_models([{"key": k, "license": LICENSES[i % len(LICENSES)], "num_parameters": (1 + i % 70) * 10**9,
                            "gated": "manual" if i % 7 == 0 else "false", "tags": ["text-generation"]}
                           for i, k in enumerate(keys)])
        res["models"] = len(keys)
        reindex_t, floor_t = [], []
        for _ in range(max(1, R // 2)):
            with VectorStore.from_settings() as vs:
                reindex_t.append(timed(sync.reindex, sql, vs, rec.id)[1])
            floor_t.append(sqlite_floor(sql, rec, work)[0])
        res["reindex"], res["reindex_floor"] = statistics.median(reindex_t), statistics.median(floor_t)
    qdir = Path(home / "qdrant")
    res["qdrant_mb"] = folder_mb(qdir)
    res["vectors_mb"] = len(keys) * dim * 4 / 1e6
    print(f"reindex {res['reindex']:.2f} s, floor {res['reindex_floor']:.2f} s", file=sys.stderr)

    # 3. open the local index in a fresh process
    probes = [open_probe(env, name, dim) for _ in range(R)]
    res["open"] = {k: statistics.median(p[k] for p in probes) for k in probes[0]}

    # 4. in-process query against the numpy floor
    prompts = _shared_file(data, "prompts.jsonl")
    with (gzip.open(prompts, "rt") if prompts.suffix == ".gz" else open(prompts)) as f:
        texts = [json.loads(line)["text"] for line in f][: args.queries]
    with open_store() as sql, VectorStore.from_settings() as vs:
        sp = query._space(sql)
        from indexer.encoder import Encoder

        enc = Encoder(sp.encoder.rsplit("@", 1)[0])
        mvs = sql.load_model_vectors(sp.id)
        V = np.stack([np.asarray(m.vector, np.float32) for m in mvs])
        keys_v = [m.model for m in mvs]
        pred = query.predictor(sql, sp)
        # the vector Qdrant ranks by: the query row folded by the space's level/deviation map (the row itself for a
        # space without one), so the floor does the same product and the top 10 compare like for like
        qv = {t: np.asarray(pred.fold(query.query_vector(sql, vs, sp, prompts=[t])), np.float32) for t in texts}

        def floor(t):
            enc.encode([t])
            s = V @ qv[t]
            top = np.argpartition(-s, 10)[:10]
            return [keys_v[i] for i in top[np.argsort(-s[top])]]

        for t in texts[:3]:
            query.find_models([t], store=sql, vectors=vs)
        res["query_floor_ms"] = p50_ms(floor, texts)
        res["query_ms"] = p50_ms(lambda t: query.find_models([t], store=sql, vectors=vs), texts)
        res["query_mit_ms"] = p50_ms(lambda t: query.find_models([t], store=sql, vectors=vs,
                                                                 filters={"license": ["mit"]}), texts)
        res["query_floor2_ms"] = p50_ms(floor, texts)
        res["coverage_aware"] = bool(pred.coverage_aware)
        if pred.coverage_aware:  # every model's blend c L1 + (1 - c) L0 (docs/RESULTS.md, coverage), c from SQL once
            from indexer.find import _neighbourhood
            from indexer.posterior import COVERAGE_PROMPTS

            om = sql.load_outcomes(models=keys_v)
            seen, col = ~np.isnan(om.scores), {h: j for j, h in enumerate(om.prompt_hashes)}
        same = 0
        for t in texts:  # the index's top 10 against numpy's (ties may be listed in another order)
            s = V @ qv[t]
            if pred.coverage_aware:
                q = query.query_vector(sql, vs, sp, prompts=[t])
                q0, d0 = pred.fold_uncovered(q)
                near = [col[p["id"]] for p in _neighbourhood(vs, sp, q)[:COVERAGE_PROMPTS] if p["id"] in col]
                c = seen[:, near].mean(axis=1) if near else np.ones(len(keys_v))
                s = c * s + (1.0 - c) * (V @ np.asarray(q0, np.float32) + d0)
            want = np.sort(s)[::-1][:10]
            got = [m.search_score for m in query.find_models([t], store=sql, vectors=vs)]
            same += bool(np.allclose(got, want, rtol=1e-5, atol=1e-5))
        res["top10_scores_equal_numpy"] = f"{same}/{len(texts)}"

    # 5. find_models() with no stores passed
    calls = [timed(query.find_models, [t])[1] for t in texts[:R + 1]]
    res["find_models_first"], res["find_models_next"] = calls[0], statistics.median(calls[1:])
    close = getattr(query, "close_cached", None)
    if close is not None:
        close()  # releases the local index for the commands below

    # 6. commands and passes
    res["search_cmd"] = statistics.median(run_cmd(["search", texts[0], "-k", "10"], env) for _ in range(R))
    res["search_cmd_mit"] = statistics.median(run_cmd(["search", texts[0], "-k", "10", "--license", "mit"], env)
                                              for _ in range(R))
    nothing = [timed(run_index, progress=Progress(False)) for _ in range(R)]
    assert all(r.counts["solved"] == 0 for r, _ in nothing)
    res["nothing_new"] = statistics.median(t for _, t in nothing)
    res["nothing_new_cmd"] = statistics.median(run_cmd(["index"], env) for _ in range(R))
    adds = []
    for i in range(R):
        src = work / f"one-model-{i}"
        shutil.rmtree(src, ignore_errors=True)
        copied = one_model_source(data, src, f"bench-org/new-model-{i}")
        rep, t = timed(run_index, [SourceSpec(str(src))], progress=Progress(False))
        assert rep.status == "ok" and rep.counts["solved"] == 1, (rep.counts, rep.errors)
        adds.append((t, rep.seconds))
    res["add_one"] = statistics.median(t for t, _ in adds)
    res["add_one_stages"] = adds[len(adds) // 2][1]
    res["add_one_copied"] = copied
    cmd_adds = []
    for i in range(R):
        src = work / f"one-model-cmd-{i}"
        shutil.rmtree(src, ignore_errors=True)
        one_model_source(data, src, f"bench-org/new-model-cmd-{i}")
        cmd_adds.append(run_cmd(["index", "--source", str(src)], env))
    res["add_one_cmd"] = statistics.median(cmd_adds)
    res["check_cmd"] = statistics.median(run_cmd(["check"], env) for _ in range(R))
    with open_store() as sql, VectorStore.from_settings() as vs:
        res["check"] = median_of(lambda: sync.check(sql, vs), max(1, R // 2))
    res["load_after"] = os.getloadavg()
    res["cpu"] = {k: statistics.median(v) for k, v in CPU.items()}

    s = res["first"]
    rows = [
        ("open the local index (fresh process: open + count models)",
         f"{res['open']['open']:.2f} s, +{res['open']['rss_open']:.0f} MB RSS (+{res['open']['anon_open']:.0f} MB anon); "
         f"first query {res['open']['first_query'] * 1000:.0f} ms, +{res['open']['rss_query']:.0f} MB RSS "
         f"(+{res['open']['anon_query']:.0f} MB anon)", "-", "<= 0.3 s"),
        ("`taskspace search`, cached text, whole process", f"{res['search_cmd']:.2f} s "
         f"(`--license mit`: {res['search_cmd_mit']:.2f} s)", "-", "<= 1.5 s"),
        ("in-process query, stores open (p50)", f"{res['query_ms']:.1f} ms",
         f"{res['query_floor_ms']:.1f} / {res['query_floor2_ms']:.1f} ms (before / after)",
         f"{res['query_ms'] / min(res['query_floor_ms'], res['query_floor2_ms']):.2f}x (<= 2x)"),
        ("filtered query (`license = mit`, p50)", f"{res['query_mit_ms']:.1f} ms", f"unfiltered {res['query_ms']:.1f} ms",
         f"{res['query_mit_ms'] / res['query_ms']:.2f}x (<= 2x)"),
        ("`find_models()` with no stores passed", f"first call {res['find_models_first']:.2f} s, next {res['find_models_next'] * 1000:.1f} ms",
         "-", "no open per call"),
        ("add one model, in-process pass (`taskspace index --source` as a command)",
         f"{res['add_one']:.2f} s ({res['add_one_cmd']:.2f} s)", "-", "<= 2 s"),
        ("pass with nothing new, in-process (`taskspace index` as a command)",
         f"{res['nothing_new']:.2f} s ({res['nothing_new_cmd']:.2f} s)", "-", "<= 1 s"),
        ("`taskspace check` as a command (in-process `check`)", f"{res['check_cmd']:.2f} s ({res['check']:.2f} s)", "-", "<= 3 s"),
        ("index stage of the from-scratch pass", f"{s.get('index', 0):.2f} s", "", ""),
        ("`reindex` of every collection vs the same points into plain SQLite", f"{res['reindex']:.2f} s",
         f"{res['reindex_floor']:.2f} s", f"{res['reindex'] / res['reindex_floor']:.2f}x (<= 1.5x)"),
        ("ingest stage of the from-scratch pass vs the reader alone", f"{s.get('ingest', 0):.2f} s", f"{res['reader']:.2f} s",
         f"{s.get('ingest', 0) / res['reader']:.2f}x (<= 2x)"),
        ("setup stage (warm embedding cache)", setup_row(res, s), "-", "no encoder load"),
        ("qdrant folder (on disk; apparent size)", f"{res['qdrant_mb'][0]:.0f} MB ({res['qdrant_mb'][1]:.0f} MB)",
         f"{res['vectors_mb']:.0f} MB of model vectors", "report"),
    ]
    print(f"\n{res['models']} models; from-scratch pass {res['first_wall']:.1f} s wall: "
          + ", ".join(f"{k} {v:.2f}" for k, v in s.items()) + f"; load average {res['load_before']} -> {res['load_after']}\n")
    print("| step at %s models | now | floor (same run) | ratio / target |" % f"{res['models']:,}")
    print("|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print("\nCPU seconds (user + sys, median) of the commands: "
          + ", ".join(f"`taskspace {k}` {v:.2f}" for k, v in res["cpu"].items()))
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, default=str))


if __name__ == "__main__":
    main()
