"""The Qdrant vector store, with the real qdrant-client in local mode (a tmp folder) and ':memory:'."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import re

import numpy as np
import pytest

from indexer.errors import BusyError, DimensionError, InputError, NotFoundError, StoreError
from indexer.store.vectors import KINDS, Point, VectorStore, parse_filter, point_id, space_slug

DIM = 8


def make_points(n=20, seed=0, dim=DIM):
    rng = np.random.default_rng(seed)
    licenses = ["mit", "apache-2.0", "llama3", None]
    pts = []
    for i in range(n):
        pts.append(Point(
            key=f"org/model-{i}",
            vector=rng.normal(size=dim).astype(np.float32),
            payload={"license": licenses[i % 4], "num_parameters": (i + 1) * 1_000_000_000 if i % 5 else None,
                     "gated": i % 3 == 0, "tags": ["chat"] if i % 2 else ["base", "code"],
                     "benchmarks": ["mmlu_pro/law", "mmlu_pro/math"] if i < 10 else ["mmlu_pro/law"],
                     "downloads": np.int64(i * 10), "accuracy": float(i) / n},
        ))
    return pts


@pytest.fixture
def vs(tmp_path):
    vs = VectorStore(path=tmp_path / "qdrant")
    yield vs
    vs.close()


def test_point_ids_are_deterministic_and_distinct():
    import uuid

    from indexer.store.vectors import _NAMESPACE

    for space, kind, key in (("minilm", "models", "org/m"), ("s", "prompts", "a" * 64), ("x-y", "benchmarks", "ü/ñ ")):
        assert point_id(space, kind, key) == str(uuid.uuid5(_NAMESPACE, f"{space}\x1f{kind}\x1f{key}"))  # UUIDv5
    a = point_id("minilm", "models", "org/m")
    assert a == point_id("minilm", "models", "org/m")
    assert len({a, point_id("mpnet", "models", "org/m"), point_id("minilm", "prompts", "org/m"),
                point_id("minilm", "models", "org/n")}) == 4


def test_space_slug_is_safe_and_injective():
    assert space_slug("minilm-abc123") == "minilm-abc123"
    s1, s2 = space_slug("sentence-transformers/all-MiniLM-L6-v2@1a2b"), space_slug("sentence-transformers_all-MiniLM-L6-v2@1a2b")
    assert s1 != s2
    for s in (s1, s2):
        assert all(c.isalnum() or c == "-" for c in s)
    with pytest.raises(InputError):
        space_slug("")


def test_rebuild_search_matches_numpy_inner_products(vs):
    pts = make_points()
    res = vs.rebuild("s", "models", pts, dim=DIM)
    assert res.count == 20 and res.dropped == [] and vs.count("s", "models") == 20
    q = np.random.default_rng(1).normal(size=DIM)
    hits = vs.search("s", "models", q, limit=5)
    scores = np.array([np.dot(np.asarray(p.vector, np.float64), q) for p in pts])
    expected = [pts[i].key for i in np.argsort(-scores)[:5]]
    assert [h.key for h in hits] == expected
    np.testing.assert_allclose([h.score for h in hits], np.sort(scores)[::-1][:5], rtol=1e-5, atol=1e-5)
    assert hits[0].payload["key"] == hits[0].key
    assert isinstance(hits[0].payload["downloads"], int)  # numpy scalars become JSON numbers


def test_upsert_is_idempotent(vs):
    pts = make_points(10)
    assert vs.upsert("s", "models", pts, dim=DIM) == 10
    target = vs.alias_target("s", "models")
    vs.upsert("s", "models", pts, dim=DIM)
    vs.upsert("s", "models", pts[:3], dim=DIM)
    assert vs.count("s", "models") == 10 and vs.alias_target("s", "models") == target
    # a changed point replaces the old one under the same id
    changed = Point(pts[0].key, np.ones(DIM), {"license": "changed"})
    vs.upsert("s", "models", [changed], dim=DIM)
    got = vs.get("s", "models", [pts[0].key], with_vectors=True)[pts[0].key]
    assert got.payload["license"] == "changed" and got.id == point_id("s", "models", pts[0].key)
    np.testing.assert_allclose(got.vector, np.ones(DIM))
    assert vs.count("s", "models") == 10
    # rebuilding the same points twice gives the same ids and count
    vs.rebuild("s", "models", pts, dim=DIM)
    ids1 = sorted(h.id for h in vs.scan("s", "models"))
    vs.rebuild("s", "models", pts, dim=DIM)
    assert sorted(h.id for h in vs.scan("s", "models")) == ids1 and len(ids1) == 10


@pytest.mark.parametrize("filters, expected", [
    ({"license": ["mit", "apache-2.0"]}, lambda p: p["license"] in ("mit", "apache-2.0")),
    ({"license": "llama3"}, lambda p: p["license"] == "llama3"),
    ({"gated": False}, lambda p: p["gated"] is False),
    ({"num_parameters": {"lte": 8_000_000_000}}, lambda p: p["num_parameters"] is not None and p["num_parameters"] <= 8e9),
    ({"num_parameters": {"gt": 3_000_000_000, "lt": 12_000_000_000}},
     lambda p: p["num_parameters"] is not None and 3e9 < p["num_parameters"] < 12e9),
    ({"tags": "code"}, lambda p: "code" in p["tags"]),
    ({"benchmarks": {"all": ["mmlu_pro/law", "mmlu_pro/math"]}}, lambda p: "mmlu_pro/math" in p["benchmarks"]),
    ({"key": {"not": ["org/model-1", "org/model-2"]}}, lambda p: p["key"] not in ("org/model-1", "org/model-2")),
    ({"benchmarks": {"any": ["mmlu_pro/math", "x"], "only": ["mmlu_pro/law", "mmlu_pro/math"]}},
     lambda p: "mmlu_pro/math" in p["benchmarks"] and set(p["benchmarks"]) <= {"mmlu_pro/law", "mmlu_pro/math"}),
    ({"benchmarks": [{"except": ["mmlu_pro/law"]}, {"except": ["mmlu_pro/math"]}]},
     lambda p: bool(set(p["benchmarks"]) - {"mmlu_pro/law"}) and bool(set(p["benchmarks"]) - {"mmlu_pro/math"})),
    ({"license": ["mit"], "gated": False, "num_parameters": {"gte": 1}, "downloads": None},
     lambda p: p["license"] == "mit" and not p["gated"] and p["num_parameters"] is not None),
    ({}, lambda p: True),
])
def test_search_filters(filters, expected):
    pts = make_points()
    with VectorStore.memory() as vs:
        vs.rebuild("s", "models", pts, dim=DIM)
        hits = vs.search("s", "models", np.ones(DIM), filters=filters, limit=100)
    want = {p.key for p in pts if expected({**p.payload, "key": p.key})}
    assert want  # every case selects something, so the test can fail
    assert {h.key for h in hits} == want


def test_bad_filters_raise_input_error():
    with pytest.raises(InputError, match="unknown filter operator"):
        parse_filter({"num_parameters": {"below": 3}})
    with pytest.raises(InputError, match="filter"):
        parse_filter({"license": 1.5})
    assert parse_filter({"license": None}) is None


def test_search_many_equals_search(vs):
    vs.rebuild("s", "benchmarks", make_points(15), dim=DIM)
    qs = np.random.default_rng(3).normal(size=(4, DIM))
    many = vs.search_many("s", "benchmarks", qs, limit=3, filters={"gated": False})
    for q, hits in zip(qs, many):
        assert [h.key for h in hits] == [h.key for h in vs.search("s", "benchmarks", q, limit=3, filters={"gated": False})]


@pytest.mark.parametrize("engine", ["edge", "local"])
def test_search_many_without_payload_gives_the_same_hits(tmp_path, engine):
    """payload=False (the nearest-question search of a query): the same points, scores and vectors, no payload."""
    with VectorStore(path=tmp_path / engine, engine=engine) as store:
        store.rebuild("s", "benchmarks", make_points(15), dim=DIM)
        qs = np.random.default_rng(3).normal(size=(4, DIM))
        full = store.search_many("s", "benchmarks", qs, limit=5, with_vectors=True)
        bare = store.search_many("s", "benchmarks", qs, limit=5, with_vectors=True, payload=False)
        for a, b in zip(full, bare):
            assert [(h.id, h.score) for h in a] == [(h.id, h.score) for h in b]
            assert all(np.array_equal(x.vector, y.vector) and y.payload == {} for x, y in zip(a, b))


def test_alias_switch_reader_sees_old_index_during_rebuild(vs):
    old = make_points(10, seed=0)
    vs.rebuild("s", "models", old, dim=DIM)
    old_target = vs.alias_target("s", "models")
    q = np.ones(DIM)
    before = [h.key for h in vs.search("s", "models", q, limit=10)]
    seen_midway = {}
    new = make_points(30, seed=5)

    def slow_points():
        for i, p in enumerate(new):
            if i == 15:  # a reader halfway through the rebuild
                seen_midway["target"] = vs.alias_target("s", "models")
                seen_midway["count"] = vs.count("s", "models")
                seen_midway["keys"] = [h.key for h in vs.search("s", "models", q, limit=10)]
                seen_midway["physical"] = vs.physical_collections("s", "models")
            yield p

    res = vs.rebuild("s", "models", slow_points(), dim=DIM)
    assert seen_midway["target"] == old_target and seen_midway["count"] == 10 and seen_midway["keys"] == before
    assert len(seen_midway["physical"]) == 2  # the old one serving + the new one being written
    assert vs.alias_target("s", "models") == res.collection != old_target
    assert res.dropped == [old_target] and vs.physical_collections("s", "models") == [res.collection]
    assert vs.count("s", "models") == 30


def test_rebuild_that_fails_midway_leaves_old_index_serving(vs):
    vs.rebuild("s", "models", make_points(10), dim=DIM)
    old_target = vs.alias_target("s", "models")

    def broken():
        yield from make_points(300, seed=9)[:299]  # more than one batch is written before the failure
        raise RuntimeError("source went away")

    with pytest.raises(RuntimeError, match="source went away"):
        vs.rebuild("s", "models", broken(), dim=DIM, batch_size=64)
    assert vs.alias_target("s", "models") == old_target and vs.count("s", "models") == 10
    assert vs.physical_collections("s", "models") == [old_target]  # the partial one was dropped

    bad = make_points(5) + [Point("org/nan", np.full(DIM, np.nan))]
    with pytest.raises(InputError, match="org/nan"):
        vs.rebuild("s", "models", bad, dim=DIM)
    assert vs.alias_target("s", "models") == old_target and vs.count("s", "models") == 10


@pytest.fixture
def child_writes(monkeypatch, vector_engine):
    """Qdrant Edge's rebuild writes from a child process from 16 points on (indexer.store.edge_writer); the calls
    are counted. (Edge's alone: qdrant-client's engines write in the process.)"""
    from indexer.store import edge_writer

    if vector_engine != "edge":
        pytest.skip("the child writer is Qdrant Edge's")

    monkeypatch.setattr(edge_writer, "CHILD_MIN", 16)
    calls = []
    real = edge_writer.write_in_child

    def spy(root, name, batches, hold=None):
        calls.append(name)
        return real(root, name, batches, hold=hold)

    monkeypatch.setattr(edge_writer, "write_in_child", spy)
    return calls


def test_a_large_rebuild_written_by_a_child_process_holds_the_same_points(vs, child_writes):
    pts = make_points(300, seed=4)
    res = vs.rebuild("s", "models", pts, dim=DIM, batch_size=32)
    assert child_writes == [res.collection] and res.count == 300 and vs.count("s", "models") == 300
    q = np.random.default_rng(2).normal(size=DIM)
    scores = np.array([np.dot(np.asarray(p.vector, np.float64), q) for p in pts])
    hits = vs.search("s", "models", q, limit=10)
    assert [h.key for h in hits] == [pts[i].key for i in np.argsort(-scores)[:10]]
    np.testing.assert_allclose([h.score for h in hits], np.sort(scores)[::-1][:10], rtol=1e-5, atol=1e-5)
    got = {h.key: h.payload for h in vs.scan("s", "models")}
    assert got["org/model-6"]["license"] == "llama3" and got["org/model-6"]["downloads"] == 60
    assert vs.count("s", "models", {"license": ["mit"]}) == 75  # its payload indexes serve filters
    small = vs.rebuild("s", "benchmarks", make_points(10), dim=DIM)  # below CHILD_MIN: written here
    assert child_writes == [res.collection] and small.count == 10


def _files_open_in_children() -> list[str]:
    """What the child processes of this process have open (Linux /proc)."""
    pids = set()
    for task in Path("/proc/self/task").iterdir():
        pids.update((task / "children").read_text().split())
    out = []
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                out.append(os.readlink(fd))
            except OSError:
                pass
    return out


def test_a_child_writer_holds_the_folders_lock_file(vs, child_writes):
    """The child keeps the folder's lock (its inherited descriptor) while it writes, so that a parent killed meanwhile
    does not free the folder before the child is gone."""
    seen: list[str] = []

    def points():
        for i, p in enumerate(make_points(300, seed=5)):
            if i == 200:  # the child has started
                seen.extend(_files_open_in_children())
            yield p

    res = vs.rebuild("s", "models", points(), dim=DIM, batch_size=32)
    assert child_writes == [res.collection] and vs.count("s", "models") == 300
    assert str((vs.path / ".taskspace.lock").resolve()) in seen


def test_a_child_writer_that_fails_or_a_parent_that_fails_leaves_the_old_index_serving(vs, child_writes, monkeypatch):
    from indexer.store import edge_writer

    vs.rebuild("s", "models", make_points(10), dim=DIM)  # below CHILD_MIN
    old_target = vs.alias_target("s", "models")

    def broken():
        yield from make_points(300, seed=9)[:200]  # the child has started
        raise RuntimeError("source went away")

    with pytest.raises(RuntimeError, match="source went away"):
        vs.rebuild("s", "models", broken(), dim=DIM, batch_size=32)
    assert child_writes and vs.alias_target("s", "models") == old_target and vs.count("s", "models") == 10
    assert vs.physical_collections("s", "models") == [old_target]  # the partial one was dropped
    monkeypatch.setattr(edge_writer, "_command", lambda root, name: [
        sys.executable, "-c", "import sys; sys.stdin.buffer.read(100); sys.stderr.write('disk on fire'); sys.exit(1)"])
    with pytest.raises(StoreError, match="disk on fire"):
        vs.rebuild("s", "models", make_points(300, seed=3), dim=DIM, batch_size=32)
    assert vs.alias_target("s", "models") == old_target and vs.count("s", "models") == 10
    assert vs.physical_collections("s", "models") == [old_target]
    # no child can be started at all (no such interpreter): the points are written here instead
    monkeypatch.setattr(edge_writer, "_command", lambda root, name: [str(Path("/nonexistent/python"))])
    res = vs.rebuild("s", "models", make_points(300, seed=3), dim=DIM, batch_size=32)
    assert vs.alias_target("s", "models") == res.collection and vs.count("s", "models") == 300


def test_a_child_writers_error_says_its_exception_not_its_traceback(tmp_path, monkeypatch, caplog):
    """The child writer (Qdrant Edge) failing with a traceback: the error says the exception's own line (its advice
    with it), not the traceback's frames; the whole stderr goes to the log at DEBUG. Before, it said the last 5 lines
    of the child's stderr joined with " | ", frames included (`File ".../vectors_edge.py", line 330, in apply | ...`)."""
    import logging

    from indexer.store import edge_writer

    code = textwrap.dedent("""
        import sys
        sys.stderr.write("a library's warning\\n")
        def apply():
            raise OSError("No space left on device: free some space, then run it again")
        sys.stdin.buffer.read(8)
        apply()
    """)
    monkeypatch.setattr(edge_writer, "_command", lambda root, name: [sys.executable, "-c", code])
    caplog.set_level(logging.DEBUG, logger="indexer.store.edge_writer")
    with pytest.raises(StoreError) as err:
        edge_writer.write_in_child(tmp_path, "c", [[(1, np.ones(4, dtype="float32"), {})]])
    msg = str(err.value)
    assert msg.endswith("failed (exit status 1): OSError: No space left on device: free some space, then run it "
                        "again"), msg
    assert "File " not in msg and "Traceback" not in msg and "warning" not in msg, msg
    logged = caplog.text
    assert "Traceback (most recent call last)" in logged and 'in apply' in logged and "a library's warning" in logged


def test_dimension_mismatch(vs):
    vs.rebuild("s", "models", make_points(5), dim=DIM)
    with pytest.raises(DimensionError, match="new space"):
        vs.upsert("s", "models", make_points(5, dim=16), dim=16)
    with pytest.raises(DimensionError, match="org/model-0"):
        vs.upsert("s", "models", make_points(1, dim=16), dim=DIM)
    with pytest.raises(DimensionError, match="query vector has 3"):
        vs.search("s", "models", np.ones(3))
    assert vs.count("s", "models") == 5 and vs.dim("s", "models") == DIM
    # another space may have another dimension
    vs.rebuild("t", "models", make_points(5, dim=16), dim=16)
    assert vs.dim("t", "models") == 16 and vs.spaces() == ["s", "t"]


def test_a_rebuild_may_change_the_dimension(vs):
    """A rebuild replaces the collection whole, so it may change its dimension (how `taskspace reindex` repairs an
    index built with another encoder or dimension); before, it raised the DimensionError that told the user to run
    `taskspace reindex`, which then raised it again. An upsert into the live collection still refuses."""
    vs.rebuild("s", "models", make_points(5), dim=DIM)
    res = vs.rebuild("s", "models", make_points(5, dim=16), dim=16)
    assert res.count == 5 and len(res.dropped) == 1
    assert vs.dim("s", "models") == 16 and vs.physical_collections("s") == [res.collection]
    assert [h.key for h in vs.search("s", "models", np.ones(16), limit=5)]
    with pytest.raises(DimensionError, match="query vector has 8"):
        vs.search("s", "models", np.ones(DIM))
    with pytest.raises(DimensionError, match=r"taskspace reindex --space s"):
        vs.upsert("s", "models", make_points(5), dim=DIM)


def test_missing_index_and_drop_space(vs):
    with pytest.raises(NotFoundError, match="does not exist"):  # nothing written into the folder yet
        vs.search("nope", "models", np.ones(DIM))
    vs.rebuild("other", "models", make_points(3), dim=DIM)
    with pytest.raises(NotFoundError, match="taskspace reindex"):
        vs.search("nope", "models", np.ones(DIM))
    vs.drop_space("other")
    assert vs.count("nope", "models", missing_ok=True) == 0 and list(vs.scan("nope", "prompts", missing_ok=True)) == []
    for kind in KINDS:
        vs.rebuild("s", kind, make_points(3), dim=DIM)
    assert len(vs.physical_collections("s")) == 3
    assert len(vs.drop_space("s")) == 3
    assert vs.spaces() == [] and vs.physical_collections() == []
    with pytest.raises(InputError, match="unknown collection kind"):
        vs.count("s", "model")


@pytest.mark.parametrize("garbage", ["[1, 2]", '"x"', '{"models": 3}', "{not json", "\udcff"])
def test_an_alias_map_that_is_not_the_map_is_a_store_error_naming_it(tmp_path, garbage):
    """An Edge alias map overwritten with JSON that is not ``{alias: collection}`` (a list, a string, a number as a
    target) raised a TypeError / AttributeError traceback from ``dict()``; now, like a file that is not JSON, it is a
    StoreError naming the file and the folder to delete before ``taskspace reindex``."""
    from indexer.errors import StoreError

    with VectorStore(path=tmp_path / "q", engine="edge") as vs:
        vs.rebuild("s", "models", make_points(3), dim=DIM)
    (amap,) = list((tmp_path / "q").rglob("aliases.json"))
    amap.write_bytes(garbage.encode("utf-8", "surrogateescape"))
    with VectorStore(path=tmp_path / "q", engine="edge") as vs:
        with pytest.raises(StoreError, match=rf"cannot read the alias map {re.escape(str(amap))}: .*delete the folder "
                                             rf"{re.escape(str(amap.parent))} and run `taskspace reindex`"):
            vs.search("s", "models", np.ones(DIM))


def test_local_index_persists_across_reopen(tmp_path):
    with VectorStore(path=tmp_path / "q") as vs:
        vs.rebuild("s", "prompts", make_points(7), dim=DIM)
        target = vs.alias_target("s", "prompts")
    with VectorStore(path=tmp_path / "q") as vs:
        assert vs.alias_target("s", "prompts") == target and vs.count("s", "prompts") == 7


def test_from_settings_local_and_server(monkeypatch, taskspace_home):
    from indexer.config import reset_settings

    with VectorStore.from_settings() as vs:
        assert vs.local and vs.path == (taskspace_home / "qdrant").resolve()
    monkeypatch.setenv("TASKSPACE_QDRANT_URL", "http://127.0.0.1:9")
    reset_settings()
    t0 = time.monotonic()
    with pytest.raises(StoreError, match=r"http://127.0.0.1:9.*TASKSPACE_QDRANT_URL"):
        VectorStore.from_settings()
    assert time.monotonic() - t0 < 10


def test_bad_url_fails_fast():
    t0 = time.monotonic()
    with pytest.raises(StoreError, match="127.0.0.1:1"):
        VectorStore(url="http://127.0.0.1:1", timeout=2)
    assert time.monotonic() - t0 < 10
    with pytest.raises(StoreError):
        VectorStore(url="not a url at all", timeout=2)


def _spawn(code: str, *args) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_second_process_gets_busy_error(tmp_path):
    path = tmp_path / "q"
    path.mkdir()  # a folder that exists is locked at open (one that does not, at its first write)
    holder = _spawn("""
        import sys, time
        from indexer.store.vectors import VectorStore
        vs = VectorStore(path=sys.argv[1])
        print("ready", flush=True)
        time.sleep(60)
    """, path)
    try:
        assert holder.stdout.readline().strip() == "ready", holder.stderr.read()
        with pytest.raises(BusyError, match=f"another taskspace process is using the index at {path}"):
            VectorStore(path=path)
    finally:
        holder.kill()
        holder.wait()
    with VectorStore(path=path) as vs:  # the kernel released the lock with the process
        assert vs.spaces() == []


def test_a_second_store_of_this_process_is_told_it_is_this_process(tmp_path):
    """A second VectorStore on a folder this process already holds (a program that opened its own store beside the one
    find_models keeps, or a session that re-imported taskspace: the old modules' store still holds the lock): the
    BusyError says this process holds it and what releases it. Before, "another taskspace process is using the index
    at PATH (pid <this process's own>: ...): wait for it to finish, or stop it"."""
    path = tmp_path / "q"
    path.mkdir()  # a folder that exists is locked at open (one that does not, at its first write)
    with VectorStore(path=path):
        with pytest.raises(BusyError) as err:
            VectorStore(path=path)
        said = str(err.value)
        assert said.startswith(f"this process (pid {os.getpid()}) already holds the index at {path}")
        assert "another taskspace process" not in said and "close_cached()" in said
    # a re-import (every indexer module dropped and imported again, as a session may): the same, in a fresh process
    code = f"""
        import sys
        from indexer.store.vectors import VectorStore
        kept = VectorStore(path={str(path)!r})
        for name in [m for m in sys.modules if m == "indexer" or m.startswith("indexer.")]:
            del sys.modules[name]
        from indexer.errors import BusyError
        from indexer.store.vectors import VectorStore as Again
        try:
            Again(path={str(path)!r})
        except BusyError as e:
            print(e)
    """
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert out.stdout.startswith("this process (pid "), out.stdout + out.stderr
    assert "restarting the interpreter" in out.stdout


def test_an_opener_waits_for_a_query_command_that_holds_the_folder(tmp_path, monkeypatch):
    """A query command holding the embedded folder (`taskspace search`, `models`, `model`: seconds) is waited for, up
    to `QUERY_WAIT` seconds, by the next opener (an index pass at its last stage, another search); another holder
    (`taskspace index`, `serve`, a library process) is not waited for, nor a query past the wait. Before, a search
    beside `taskspace index` made the pass fail at its index stage (exit 6, SQL left ahead of the index, every later
    search answering from that mix until the next pass), and one of two searches run at once failed."""
    import indexer.store.vectors as vectors_module

    path = tmp_path / "q"
    path.mkdir()  # a folder that exists is locked at open (one that does not, at its first write)
    code = """
        import json, sys, time
        from indexer.store.vectors import VectorStore
        path, sys.argv, hold = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
        vs = VectorStore(path=path)
        print("ready", flush=True)
        time.sleep(hold)
        vs.close()
        print("released", flush=True)
        time.sleep(60)
    """
    search = _spawn(code, path, json.dumps(["/usr/bin/taskspace", "search", "a prompt", "-k", "3"]), 1.5)
    try:
        assert search.stdout.readline().strip() == "ready", search.stderr.read()
        t = time.monotonic()
        with VectorStore(path=path) as vs:  # waited for the search to let go (before: BusyError at once)
            assert vs.spaces() == [] and search.stdout.readline().strip() == "released"
        assert time.monotonic() - t > 0.5
    finally:
        search.kill()
        search.wait()
    for argv, hold in ((["/usr/bin/taskspace", "index"], 60), (["/usr/bin/taskspace", "model", "org/m"], 60)):
        if "model" in argv:
            monkeypatch.setattr(vectors_module, "QUERY_WAIT", 1.0)  # a query that holds it past the wait
        holder = _spawn(code, path, json.dumps(argv), hold)
        try:
            assert holder.stdout.readline().strip() == "ready", holder.stderr.read()
            t = time.monotonic()
            with pytest.raises(BusyError, match=f"pid {holder.pid}: taskspace {argv[1]}"):
                VectorStore(path=path)
            assert time.monotonic() - t < (0.5 if argv[1] == "index" else 3.0)
        finally:
            holder.kill()
            holder.wait()


def _open_when_free(path, wait: float = 30.0) -> VectorStore:
    deadline = time.monotonic() + wait
    while True:
        try:
            return VectorStore(path=path)
        except BusyError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@pytest.mark.parametrize("child_min", [None, 50])
def test_sigkill_mid_rebuild_then_rebuild_is_clean(tmp_path, child_min):
    """A writer killed mid-rebuild leaves an orphan the next rebuild drops; with child_min, Qdrant Edge's rebuild
    was writing from a child process (indexer.store.edge_writer), which ends when its parent does."""
    path = tmp_path / "q"
    with VectorStore(path=path) as vs:
        vs.rebuild("s", "models", make_points(10), dim=DIM)
        old_target = vs.alias_target("s", "models")
    writer = _spawn("""
        import sys, time
        import numpy as np
        from indexer.store import edge_writer
        from indexer.store.vectors import Point, VectorStore
        if sys.argv[2] != "None":
            edge_writer.CHILD_MIN = int(sys.argv[2])
        vs = VectorStore(path=sys.argv[1])
        def points():
            for i in range(100000):
                if i == 600:
                    print("midway", flush=True)
                    time.sleep(60)
                yield Point(f"k{i}", np.ones(8), {"i": i})
        vs.rebuild("s", "models", points(), dim=8, batch_size=100)
    """, path, child_min)
    try:
        assert writer.stdout.readline().strip() == "midway", writer.stderr.read()
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
    finally:
        if writer.poll() is None:
            writer.kill()
    with _open_when_free(path) as vs:  # a child writer still finishing holds the folder's lock until it exits
        assert vs.alias_target("s", "models") == old_target and vs.count("s", "models") == 10
        orphans = [c for c in vs.physical_collections("s", "models") if c != old_target]
        assert len(orphans) == 1  # the half-written one, not served
        res = vs.rebuild("s", "models", make_points(12), dim=DIM)
        assert sorted(res.dropped) == sorted([old_target, *orphans])
        assert vs.physical_collections("s", "models") == [res.collection] and vs.count("s", "models") == 12


def test_scores_of_gives_the_named_points_inner_products_with_each_row(vs):
    pts = make_points(40, seed=6)
    vs.rebuild("s", "models", pts, dim=DIM)
    rows = np.random.default_rng(3).normal(size=(3, DIM))
    want = ["org/model-3", "org/model-17", "org/model-3", "no/such-model"]
    got = vs.scores_of("s", "models", rows, want)
    vec = {p.key: np.asarray(p.vector, np.float64) for p in pts}
    assert len(got) == 3
    for row, scores in zip(rows, got):
        assert sorted(scores) == ["org/model-17", "org/model-3"]  # an unknown key is left out
        for k, v in scores.items():
            assert v == pytest.approx(float(vec[k] @ row), rel=1e-5, abs=1e-5)
    assert vs.scores_of("s", "models", rows[0], []) == [{}]


@pytest.mark.parametrize("engine", ["edge", "local"])
def test_score_values_are_the_scores_without_their_ids_and_scores_of_each_by_row(tmp_path, engine):
    """`score_values`: each row's inner products with every point, highest first, the very values `scores` gives in
    its order, read without the point ids; per row only some keys' points (`keys`) or all but some (`exclude`).
    `scores_of_each`: `scores_of` with one key list per row. Both engines."""
    pts = make_points(40, seed=8)
    with VectorStore(path=tmp_path / "qdrant", engine=engine) as vs:
        vs.rebuild("s", "models", pts, dim=DIM)
        rows = np.random.default_rng(4).normal(size=(3, DIM))
        every = vs.scores("s", "models", rows)
        for got, want in zip(vs.score_values("s", "models", rows), every):
            assert got.dtype == np.float64 and got.tolist() == list(want.values())  # same values, same order
        ids = {p.key: point_id("s", "models", p.key) for p in pts}
        some = [["org/model-3", "org/model-17"], [], ["org/model-5", "no/such-model"]]
        got = vs.score_values("s", "models", rows, keys=some)
        assert [sorted(g.tolist()) for g in got] == [sorted(w[ids[k]] for k in ks if k in ids)
                                                    for ks, w in zip(some, every)]
        got = vs.score_values("s", "models", rows, exclude=some)
        assert [sorted(g.tolist()) for g in got] == [sorted(v for i, v in w.items() if i not in {ids.get(k) for k in ks})
                                                    for ks, w in zip(some, every)]
        each = vs.scores_of_each("s", "models", rows, some)
        assert each == [{k: w[ids[k]] for k in ks if k in ids} for ks, w in zip(some, every)]
        with pytest.raises(InputError, match="one sequence of keys per query row"):
            vs.score_values("s", "models", rows, keys=some[:2])


def test_search_reads_only_the_payload_fields_asked_for(vs):
    pts = make_points(12, seed=7)
    vs.rebuild("s", "models", pts, dim=DIM)
    q = np.asarray(pts[3].vector, np.float64)
    whole = vs.search("s", "models", q, limit=5)
    for fields, want in ((["license"], {"key", "license"}), ([], {"key"})):
        part = vs.search("s", "models", q, limit=5, fields=fields)
        assert [(h.key, h.score) for h in part] == [(h.key, h.score) for h in whole]  # the same hits, in order
        assert all(set(h.payload) == want & set(w.payload) for h, w in zip(part, whole))
        assert all(h.payload[k] == w.payload[k] for h, w in zip(part, whole) for k in h.payload)


def test_search_follows_rebuilds_and_drops(vs):
    vs.rebuild("s", "models", make_points(5), dim=DIM)
    assert len(vs.search("s", "models", np.ones(DIM))) == 5
    vs.rebuild("s", "models", make_points(3, seed=4), dim=DIM)
    assert {h.key for h in vs.search("s", "models", np.ones(DIM))} == {p.key for p in make_points(3, seed=4)}
    vs.drop_space("s")
    with pytest.raises(NotFoundError):
        vs.search("s", "models", np.ones(DIM))
    vs.rebuild("s", "models", make_points(4, dim=16), dim=16)  # a dropped space may come back with another dim
    assert len(vs.search_many("s", "models", np.ones((2, 16)))[1]) == 4
    with pytest.raises(DimensionError):
        vs.search("s", "models", np.ones(DIM))


def test_payload_indexes_are_created_for_filter_fields(monkeypatch):
    """Local mode ignores payload indexes (a server uses them), so record what the store asks for: exactly the fields
    the documented filters (indexer.find.Filters) use."""
    from indexer.find import Filters
    from indexer.store.vectors import PAYLOAD_INDEXES

    with VectorStore.memory() as vs:
        asked = []
        real = vs._client.create_payload_index
        monkeypatch.setattr(vs._client, "create_payload_index",
                            lambda name, field, field_schema: asked.append((name, field, str(field_schema))) or real(name, field, field_schema=field_schema))
        res = vs.rebuild("s", "models", make_points(3), dim=DIM)
    got = {f: s for n, f, s in asked if n == res.collection}
    assert got["license"].endswith("keyword") and got["num_parameters"].endswith("integer")
    assert got["gated"].endswith("bool") and got["kind"].endswith("keyword")
    every = Filters(licenses=["mit"], min_params=1, max_params=2, pipeline_tag="x", exclude_gated=True, open_only=True,
                    min_evidence=1, benchmark="b").conditions()
    assert set(got) == set(PAYLOAD_INDEXES["models"]) == {f for cond in every.values() for f in cond}


def test_local_mode_opens_only_the_kinds_it_uses(tmp_path):
    """Opening a local collection loads all its points, so a models query must not load the prompts."""
    with VectorStore(path=tmp_path / "q") as vs:
        for kind in ("models", "benchmarks", "prompts"):
            vs.rebuild("s", kind, make_points(5), dim=DIM)
    assert sorted(p.name for p in (tmp_path / "q").iterdir() if p.is_dir()) == ["benchmarks", "models", "prompts"]
    with VectorStore(path=tmp_path / "q") as vs:
        hits = vs.search("s", "models", np.ones(DIM, np.float32), limit=2)
        assert len(hits) == 2
        assert set(vs._clients) == {"models"}
        assert vs.spaces() == ["s"] and set(vs._clients) == {"models", "benchmarks", "prompts"}


def test_a_password_in_the_qdrant_url_is_never_shown(monkeypatch):
    """TASKSPACE_QDRANT_URL=http://user:PASSWORD@host was printed whole in errors; it is masked like the database URL."""
    import os
    import subprocess
    import sys

    from indexer.errors import StoreError

    url = "http://admin:s3cr%40tpw@127.0.0.1:9"
    with pytest.raises(StoreError) as info:
        VectorStore(url=url)
    msg = str(info.value)
    assert "admin:***@127.0.0.1:9" in msg and "s3cr" not in msg
    from indexer.config import mask_url

    assert mask_url(url) == "http://admin:***@127.0.0.1:9" and mask_url("http://h:6333") == "http://h:6333"
    env = dict(os.environ, TASKSPACE_QDRANT_URL=url, HF_HUB_OFFLINE="1")
    res = subprocess.run([sys.executable, "-m", "indexer.cli", "check"], capture_output=True, text=True, env=env)
    assert res.returncode == 3 and "s3cr" not in res.stderr + res.stdout and "admin:***@" in res.stderr


def test_count_and_scan_with_filters_and_the_missing_operator(vs):
    """count/scan take the same payload filters as search; {"missing": True} matches an absent or null field."""
    pts = make_points()
    vs.rebuild("s1", "models", pts, dim=DIM)
    by = {p.key: p.payload for p in pts}
    for flt in ({"license": ["mit"]}, {"license": {"missing": True}}, {"license": {"missing": False}},
                {"num_parameters": {"missing": True}}, {"num_parameters": {"lte": 8e9}, "gated": False}):
        def ok(p, flt=flt):
            for k, c in flt.items():
                v = p.get(k)
                if isinstance(c, dict) and "missing" in c:
                    if (v is None) != c["missing"]:
                        return False
                elif isinstance(c, dict):
                    if v is None or v > c["lte"]:
                        return False
                elif isinstance(c, list):
                    if v not in c:
                        return False
                elif v != c:
                    return False
            return True

        want = sorted(k for k, p in by.items() if ok(p))
        assert vs.count("s1", "models", flt) == len(want), flt
        assert sorted(h.key for h in vs.scan("s1", "models", filters=flt)) == want, flt
    assert vs.count("s1", "models") == len(pts)


def test_search_with_a_size_penalty_is_the_formula(vs):
    """penalty=(field, alpha, default, prefetch): score - alpha log10(field), the default where it is missing."""
    pts = make_points()
    vs.rebuild("s1", "models", pts, dim=DIM)
    q = np.random.default_rng(1).normal(size=DIM).astype(np.float32)
    got = vs.search("s1", "models", q, limit=5, penalty=("num_parameters", 0.3, 1e11, len(pts)))
    want = {p.key: float(np.dot(np.asarray(p.vector, np.float64), q)) - 0.3 * np.log10(p.payload["num_parameters"] or 1e11)
            for p in pts}
    assert [h.key for h in got] == sorted(want, key=want.get, reverse=True)[:5]
    assert [h.score for h in got] == pytest.approx(sorted(want.values(), reverse=True)[:5], abs=1e-4)
    with pytest.raises(InputError, match="size penalty"):
        vs.search("s1", "models", q, penalty=("num_parameters", -1, 1e11, 5))


def test_edge_reads_a_collection_into_the_page_cache_once_before_random_reads(tmp_path):
    """A filtered search or a scroll reads the collection's files first (Edge drops their pages when a shard closes,
    and a filtered search then read them one page at a time): once per collection and open engine, the files left
    unchanged (sparse and empty files too), the answers those of an engine that did not."""
    from indexer.store import vectors_edge

    loose = tmp_path / "loose"
    loose.mkdir()
    with open(loose / "sparse", "wb") as f:
        f.seek(1 << 20)
        f.write(b"tail")
    (loose / "empty").write_bytes(b"")
    (loose / "data").write_bytes(bytes(range(256)) * 100)
    before = {p.name: p.read_bytes() for p in loose.iterdir()}
    vectors_edge._warm(loose)
    assert {p.name: p.read_bytes() for p in loose.iterdir()} == before

    with VectorStore(path=tmp_path / "edge", engine="edge") as store:
        store.rebuild("s", "models", make_points(40), dim=DIM)
        engine = store._c("models")
        target = store.alias_target("s", "models")
        q = np.random.default_rng(5).normal(size=DIM)
        plain = store.search("s", "models", q, limit=40)
        assert engine._warmed == set()  # an unfiltered search reads in order: nothing read before it
        calls = []
        real = vectors_edge._warm
        vectors_edge._warm = lambda folder: (calls.append(folder.name), real(folder))
        try:
            mit = store.search("s", "models", q, filters={"license": ["mit"]}, limit=5)
            keys = sorted(h.key for h in store.scan("s", "models"))
            store.search("s", "models", q, filters={"license": ["mit"]}, limit=5)
        finally:
            vectors_edge._warm = real
        assert calls == [target] and engine._warmed == {target}
        assert [(h.key, h.score) for h in mit] == [(h.key, h.score) for h in plain if h.payload.get("license") == "mit"][:5]
        assert len(keys) == 40
    assert engine._warmed == set()  # closed: the next open reads them again


def test_a_full_disk_is_an_error_before_the_engine_writes(vs, monkeypatch):
    """An embedded engine maps its files into memory: writing into a mapped page the disk has no room for killed the
    process with SIGBUS (seen with Qdrant Edge creating a payload index on a full file system), past any error handling.
    With too little free space a rebuild or an upsert is refused first, the live collection kept."""
    import shutil
    from collections import namedtuple

    from indexer.errors import StoreError
    from indexer.store.vectors import MIN_FREE_BYTES

    pts = make_points(10)
    vs.rebuild("s", "models", pts, dim=DIM)
    live = vs.alias_target("s", "models")
    usage = namedtuple("usage", "total used free")
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10**9, 10**9 - MIN_FREE_BYTES // 2, MIN_FREE_BYTES // 2))
    with pytest.raises(StoreError, match=r"not enough free disk space for a new models collection at .*: 16 MB free, "
                                         r"about 32 MB needed"):
        vs.rebuild("s", "models", make_points(10, seed=1), dim=DIM)
    with pytest.raises(StoreError, match="not enough free disk space for writing to the models collection"):
        vs.upsert("s", "models", make_points(3, seed=2), dim=DIM)
    assert vs.alias_target("s", "models") == live and vs.physical_collections("s", "models") == [live]
    assert sorted(h.key for h in vs.scan("s", "models")) == sorted(p.key for p in pts)
    # the estimate grows with the points a rebuild announces: 2 x 4 bytes per vector entry beyond the minimum
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10**10, 0, MIN_FREE_BYTES + 8 * 1000 * DIM - 1))
    with pytest.raises(StoreError, match="not enough free disk space"):
        vs.rebuild("s", "models", make_points(10, seed=1), dim=DIM, size=1000)
    monkeypatch.setattr(shutil, "disk_usage", real)
    assert vs.rebuild("s", "models", make_points(10, seed=1), dim=DIM).count == 10


@pytest.mark.parametrize("engine", ["edge", "local"])
def test_kinds_gone_reads_the_files_of_each_engine(tmp_path, engine):
    """VectorStore.kinds_gone (an indexing pass with nothing new asks it without opening the index): every kind of a
    space without an index, none once each is built, then the kind whose folder, alias map or live collection was
    removed by hand; another space's aliases do not count."""
    import shutil

    root = tmp_path / engine
    assert VectorStore.kinds_gone(root, engine, "s") == ["models", "benchmarks", "prompts"]
    assert VectorStore.kinds_gone(None, engine, "s") == []  # a server or memory
    with VectorStore(path=root, engine=engine) as store:
        for kind in ("models", "benchmarks", "prompts"):
            store.rebuild("s", kind, make_points(3), dim=DIM)
        store.rebuild("t", "models", make_points(3), dim=DIM)
        live = store.alias_target("s", "models")
    assert VectorStore.kinds_gone(root, engine, "s") == []
    assert VectorStore.kinds_gone(root, engine, "t") == ["benchmarks", "prompts"]
    shutil.rmtree(root / "prompts")
    (root / "benchmarks" / ("aliases.json" if engine == "edge" else "meta.json")).unlink()
    collection = root / "models" / live if engine == "edge" else root / "models" / "collection" / live
    shutil.rmtree(collection)
    assert VectorStore.kinds_gone(root, engine, "s") == ["models", "benchmarks", "prompts"]
    assert VectorStore.kinds_gone(root, engine, "t") == ["benchmarks", "prompts"]


def test_a_busy_index_names_the_process_that_holds_it_and_what_to_do(tmp_path, monkeypatch):
    """A second opener of the embedded index is told which process holds it (pid and command, never its arguments)
    and what to do: beside a running `taskspace serve`, send the query to the server; beside another command, wait
    or stop it. Before, every case said only to set up a Qdrant server, so `taskspace search` run beside `taskspace
    serve` (the first thing a user tries) did not say that the server it had just started answers it."""
    path = tmp_path / "q"
    path.mkdir()  # a folder that exists is locked at open (one that does not, at its first write)
    for argv, todo in ((["/usr/bin/taskspace", "-v", "serve", "--port", "9"], "send the query to it instead (POST /v1/find"),
                       (["/x/indexer/cli.py", "index", "--source", "s3cr3t-path"], "wait for it to finish, or stop it")):
        holder = _spawn("""
            import json, sys, time
            from indexer.store.vectors import VectorStore
            path, sys.argv = sys.argv[1], json.loads(sys.argv[2])
            vs = VectorStore(path=path)
            print("ready", flush=True)
            time.sleep(60)
        """, path, json.dumps(argv))
        try:
            assert holder.stdout.readline().strip() == "ready", holder.stderr.read()
            with pytest.raises(BusyError) as err:
                VectorStore(path=path)
            command = "taskspace serve" if "serve" in argv else "taskspace index"
            said = str(err.value)
            assert said.startswith(f"another taskspace process is using the index at {path} (pid {holder.pid}: "
                                   f"{command}): {todo}"), said
            assert "TASKSPACE_QDRANT_URL" in said and "s3cr3t" not in said and "--port" not in said
            if "serve" in argv:  # an indexing command beside the server: no query to send it (before: "send the query")
                with monkeypatch.context() as m, pytest.raises(BusyError) as err:
                    m.setattr(sys, "argv", ["/usr/bin/taskspace", "reindex"])
                    VectorStore(path=path)
                assert "send the query" not in str(err.value) and "(pid " in str(err.value), err.value
                assert ": stop it first (the embedded index is one process at a time); or let the server index: " \
                       "`taskspace serve --worker-every INTERVAL`" in str(err.value), err.value
                for other in (["taskspace", "spaces", "drop", "x"], ["taskspace", "pull", "d"], ["taskspace", "check"]):
                    # neither a query the server answers nor a pass its worker runs (before: `spaces drop` was told to
                    # "send the query to it instead (POST /v1/find ...)", `pull` to let the server index)
                    with monkeypatch.context() as m, pytest.raises(BusyError) as err:
                        m.setattr(sys, "argv", other)
                        VectorStore(path=path)
                    assert f"(pid {holder.pid}: taskspace serve): stop it first (the embedded index is one process " \
                           "at a time), then run this command again; for concurrent access use a Qdrant server" \
                           in str(err.value), (other, err.value)
        finally:
            holder.kill()
            holder.wait()
    with VectorStore(path=path):  # the kernel released the lock with the process; this one now holds it
        assert (path / ".taskspace.lock").read_text().split(" ", 1)[0] == str(os.getpid())


def test_the_embedded_index_lock_file_names_a_holder_at_every_step_of_naming_a_new_one(tmp_path, monkeypatch):
    """A new holder of the embedded folder writes its "PID COMMAND" over the last holder's name and cuts the file to
    its own: read (from another descriptor) after every call made while it names itself, the lock file is never empty,
    and ends as this holder's name alone, not the longer last one's tail. Before, it was emptied first and then
    written, so a second opener reading it then (`_read_holder` for the busy message, `_wait_for_a_query`) was told
    no holder (and a query opener waited half a second for one)."""
    path = tmp_path / "q"
    path.mkdir()
    lock = path / ".taskspace.lock"
    lock.write_text("4194303 taskspace serve-a-name-longer-than-this-one\n")  # a last holder, gone
    monkeypatch.setattr(sys, "argv", ["/usr/bin/taskspace", "index"])
    seen = []

    def profile(frame, event, arg):  # after each call returns inside the naming (the file's own calls included)
        if event in ("return", "c_return") and frame.f_code.co_name == "_write_holder":
            seen.append(lock.read_bytes())

    sys.setprofile(profile)
    try:
        store = VectorStore(path=path)
    finally:
        sys.setprofile(None)
    with store:
        assert len(seen) >= 3, seen  # the profile saw the naming's calls
        assert b"" not in seen, seen
        assert lock.read_text() == f"{os.getpid()} taskspace index\n"
    assert lock.read_text() == f"{os.getpid()} taskspace index\n"  # kept after the close, until the next holder


def test_an_embedded_index_on_a_read_only_file_system_is_a_store_error_naming_it(tmp_path, vector_engine):
    """The embedded index's folder on a read-only file system while SQL is elsewhere (PostgreSQL, or a SQLite file
    outside TASKSPACE_HOME): `search`, `models`, `check` and `reindex` say the folder cannot be opened for its lock
    file and what to do (exit 3, one line); before, an `OSError: [Errno 30] Read-only file system:
    '.../qdrant/.taskspace.lock'` traceback."""
    from helpers import run_in_read_only_home
    from indexer.store.sql import Store

    home = tmp_path / "home"
    (home / "qdrant").mkdir(parents=True)
    url = f"sqlite:///{tmp_path / 'sql' / 't.db'}"
    (tmp_path / "sql").mkdir()
    Store(url, upgrade=True).close()
    for args in (["check"], ["models"]):
        res = run_in_read_only_home(home, *args, env={"TASKSPACE_DATABASE_URL": url, "HF_HUB_OFFLINE": "1"})
        assert res.returncode == 3, res.stderr[-2000:]
        assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr[-2000:]
        assert f"cannot open the embedded index at {home / 'qdrant'}" in res.stderr and "TASKSPACE_HOME" in res.stderr


def test_opening_an_edge_index_on_a_disk_without_room_for_it_is_an_error_not_a_bus_error(tmp_path, vector_engine):
    """An Edge index copied onto a disk with little room (a tmpfs filled but for 256 kB), then searched: a store error
    saying the disk has not room enough to open the index (Edge fills its payload indexes' sparse files when it opens
    them, even to read); before, the process was killed by SIGBUS ("Bus error", no message) as a search on a home
    whose disk had filled up was."""
    from helpers import run_on_a_small_disk

    if vector_engine != "edge":
        pytest.skip("qdrant-client's local mode maps no file")
    with VectorStore(path=tmp_path / "built") as built:
        built.rebuild("s", "models", make_points(), dim=DIM)
    disk = tmp_path / "disk"
    disk.mkdir()
    res = run_on_a_small_disk(disk, "64m", timeout=120, python=f"""
        import os, shutil
        import numpy as np
        from indexer.errors import StoreError
        from indexer.store.vectors import VectorStore
        shutil.copytree({str(tmp_path / 'built')!r}, {str(disk / 'qdrant')!r}, copy_function=lambda s, d: os.system(f"cp --sparse=always '{{s}}' '{{d}}'"))
        with open({str(disk / 'filler')!r}, "wb") as f:
            while shutil.disk_usage({str(disk)!r}).free > 256 * 1024:
                f.write(b"x" * 65536)
                f.flush()
        try:
            with VectorStore(path={str(disk / 'qdrant')!r}) as vs:
                vs.search("s", "models", np.ones({DIM}), limit=3)
            print("searched")
        except StoreError as exc:
            print(exc)
    """)
    said = res.stdout.strip()
    assert res.returncode == 0, (res.returncode, said, res.stderr[-2000:])  # before: -7, SIGBUS
    assert said.startswith(f"not enough free disk space to open the index at {disk / 'qdrant' / 'models'}"), said


def test_opening_an_edge_index_counts_the_sparse_holes_only_where_a_read_fills_them(tmp_path, vector_engine,
                                                                                     monkeypatch):
    """Qdrant Edge's payload indexes are sparse files it maps: on tmpfs a read of a hole allocates its page (the
    bundled sample's index, copied with its holes punched into /dev/shm, lost 62 MB of holes to one search), on a
    disk file system (ext4: 16 kB grew, the 77 MB of holes stayed) it does not. So the free space asked to open an
    index counts the holes on tmpfs (and on a file system not known to keep them) only: a search on an ext4 disk with
    2 MB free runs, where before the holes (here about 4 MB) were asked for and it was refused."""
    import shutil
    from collections import namedtuple

    from indexer.errors import StoreError
    from indexer.store import vectors as vmod

    if vector_engine != "edge":
        pytest.skip("qdrant-client's local mode maps no file")
    with VectorStore(path=tmp_path / "q") as built:
        built.rebuild("s", "models", make_points(), dim=DIM)
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(1 << 30, (1 << 30) - (2 << 20), 2 << 20))
    monkeypatch.setattr(vmod, "fs_type", lambda p: "ext4")
    with VectorStore(path=tmp_path / "q") as vs:
        assert [h.key for h in vs.search("s", "models", np.ones(DIM), limit=2)]
    for kind in ("tmpfs", None):  # tmpfs, and a file system that cannot be told: its holes are counted
        monkeypatch.setattr(vmod, "fs_type", lambda p, kind=kind: kind)
        with pytest.raises(StoreError, match=r"not enough free disk space to open the index at .*: 2\.0 MB free"):
            with VectorStore(path=tmp_path / "q") as vs:
                vs.search("s", "models", np.ones(DIM), limit=2)


def test_fs_type_names_the_file_system_of_the_longest_mount_point():
    from indexer.store.vectors import fs_type

    assert fs_type(Path("/proc/self/status")) == "proc"
    assert fs_type(Path("/")) is not None
    if Path("/dev/shm").is_dir():
        assert fs_type(Path("/dev/shm")) == "tmpfs"


@pytest.mark.parametrize("engine", ["edge", "local"])
def test_the_except_and_only_operators_split_the_points_in_two_with_either_engine(tmp_path, engine):
    """``{"except": values}``: the array field holds a value other than these, or none (absent, null, []); ``{"only":
    values}``: it holds a value and all of them are among these; the two split the points exactly (how
    indexer.query.coverage_ranked splits the models fitted only where nothing links the query), alone or with another
    condition, searched, counted or scanned, with Qdrant Edge and qdrant-client's local mode alike. A server gets
    Qdrant's MatchExcept or IsEmpty. Before, both were an unknown operator (InputError)."""
    from indexer.store.vectors_qdrant import client_filter

    rng = np.random.default_rng(4)
    fields = [["a"], ["a", "b"], ["b"], ["c"], ["a", "c"], [], None, "absent", ["b", "b"], ["d", "a"]]
    pts = []
    for i, bs in enumerate(fields * 2):
        payload = {"license": "mit" if i % 2 else "apache-2.0"}
        if bs != "absent":
            payload["benchmarks"] = bs
        pts.append(Point(f"m{i}", rng.normal(size=DIM).astype(np.float32), payload))
    by = {p.key: p.payload for p in pts}
    with VectorStore(path=tmp_path / "q", engine=engine) as vs:
        vs.rebuild("s", "models", pts, dim=DIM)
        for values in (["a", "b"], ["a"], ["c", "d", "zz"], []):
            def only(p, values=values):
                bs = p.get("benchmarks") or []
                return bool(bs) and all(b in values for b in bs)

            for extra in ({}, {"license": "mit"}):
                def ok(p, extra=extra):
                    return all(p.get(k) == v for k, v in extra.items())

                for op, want in (("only", {k for k, p in by.items() if ok(p) and only(p)}),
                                 ("except", {k for k, p in by.items() if ok(p) and not only(p)})):
                    flt = {**extra, "benchmarks": {op: values}}
                    got = {h.key for h in vs.search("s", "models", rng.normal(size=DIM), filters=flt, limit=100)}
                    assert got == want, (flt, sorted(got ^ want))
                    assert vs.count("s", "models", flt) == len(want), flt
                    assert {h.key for h in vs.scan("s", "models", filters=flt)} == want, flt
        assert vs.count("s", "models", {"benchmarks": {"all": ["a"], "only": ["a", "b"]}}) == 4  # [a], [a, b]
    server = client_filter(parse_filter({"benchmarks": {"only": ["a", "b"]}})).model_dump(by_alias=True,
                                                                                          exclude_none=True)
    assert server == {"must_not": [{"should": [{"key": "benchmarks", "match": {"except": ["a", "b"]}},
                                               {"is_empty": {"key": "benchmarks"}}]}]}
    for bad in ({"except": [1.5]}, {"only": ["a", 2]}, {"except": [True]}):
        with pytest.raises(InputError, match="must all be strings or all integers") as err:
            parse_filter({"benchmarks": bad})
        assert err.value.item == "filter benchmarks"


def test_the_vector_store_says_which_kind_is_out_of_step_with_the_space_dimension(vs):
    """`VectorStore.out_of_step(space, dim)`: the IndexOutOfStepError naming the kind whose vectors are of another
    dimension than the space's in SQL, and `taskspace reindex`; None when every kind agrees. A public method the
    search (indexer.find) and the server's readiness check both call; before, `_index_dim_error` of indexer.find,
    which indexer.serve imported as a private name."""
    from indexer.errors import IndexOutOfStepError

    vs.rebuild("s", "models", make_points(), dim=DIM)
    assert vs.out_of_step("s", DIM) is None
    err = vs.out_of_step("s", DIM + 1)
    assert isinstance(err, IndexOutOfStepError) and err.item == "space s", err
    assert str(err).startswith(f"space s: its models index holds {DIM}-dim vectors, but the space has {DIM + 1}") and \
        "`taskspace reindex --space s`" in str(err), err


@pytest.mark.parametrize("command", ["analysis.py", "ipykernel_launcher.py", "python"])
def test_an_index_held_by_a_python_program_says_how_that_program_lets_it_go(tmp_path, monkeypatch, command):
    """`taskspace index` (or search) beside a script or a Jupyter kernel that called `indexer.find_models`, which keeps
    the embedded index open for the process's life: the error says that program lets it go with
    `indexer.query.close_cached()` (or by exiting). Before, "wait for it to finish, or stop it": a notebook kernel never
    finishes, and nothing named the call that releases the index."""
    from indexer.store.vectors import _busy_error

    monkeypatch.setattr(sys, "argv", ["/usr/bin/taskspace", "index"])
    said = str(_busy_error(tmp_path / "q", f"4242 {command}"))
    assert said.startswith(f"another taskspace process is using the index at {tmp_path / 'q'} (pid 4242: {command}): "), said
    assert "indexer.query.close_cached()" in said and "TASKSPACE_QDRANT_URL" in said, said
    assert "close_cached" not in str(_busy_error(tmp_path / "q", "4242 taskspace index"))  # a command: wait for it


def test_the_local_engines_sqlite_pragmas_fail_as_store_errors(tmp_path):
    """qdrant-client's local engine sets its collection's SQLite `PRAGMA synchronous` before an upsert and at a
    flush: its SQLite failing there (here: the connection closed under it) is a StoreError naming the local index,
    as any other SQLite failure of that engine is. Before, found reading `ClientEngine.upsert`/`flush`: the pragma
    ran outside `_call`, a raw `sqlite3.ProgrammingError` traceback."""
    from indexer.store.vectors_qdrant import ClientEngine, open_local

    path = tmp_path / "q"
    engine = ClientEngine(open_local(path), str(path), path=path)
    engine.create_collection("c", 4)
    engine._local_sqlite("c").close()
    with pytest.raises(StoreError, match="the local Qdrant index at .* failed: ProgrammingError"):
        engine.upsert("c", [(point_id("s", "models", "m"), np.ones(4, dtype="float32"), {})])
    with pytest.raises(StoreError, match="the local Qdrant index at .* failed: ProgrammingError"):
        engine.flush("c")


def test_a_secret_in_the_qdrant_urls_query_is_never_shown():
    """`config.mask_url` (how messages and logs show TASKSPACE_QDRANT_URL) masks the values of the query's secret
    parameters (`?api_key=`, `api-key`, `password`), any case, as `sql_migrate.safe_url` does for a database URL, the
    rest of the URL left as written. Before, found reading `mask_url`: only the password before the host was masked,
    `http://h:6333/?api_key=s3cr3t` was shown whole."""
    from indexer.config import mask_secrets, mask_url
    from indexer.store.sql_migrate import safe_url

    assert mask_url("http://h:6333/?api_key=s3cr3t&timeout=5") == "http://h:6333/?api_key=***&timeout=5"
    assert mask_url("http://u:pw@h:6333?API-KEY=k&Password=p%40ss") == "http://u:***@h:6333?API-KEY=***&Password=***"
    assert mask_url("https://h:6333/x?a=%2F&b") == "https://h:6333/x?a=%2F&b"
    assert "s3cr3t" not in safe_url("postgresql+psycopg://u@h/db?api_key=s3cr3t")
    url = "http://h:6333/?api_key=s3cr3t"
    assert mask_secrets(f"cannot reach {url}: refused", url) == "cannot reach http://h:6333/?api_key=***: refused"


def test_reading_an_embedded_folder_that_does_not_exist_creates_nothing_and_says_so(tmp_path, vector_engine):
    """``VectorStore(path=P)`` on a P that does not exist (a typo, a home's path instead of its ``qdrant`` folder
    moved away): a read creates nothing and says P does not exist; the first write creates it and takes its lock, as
    an open did. Before, the open created P and a lock file in it, and the read said the index "is missing" and that
    `taskspace reindex` rebuilds it (which rebuilds TASKSPACE_HOME's, not P)."""
    gone = tmp_path / "no" / "such"
    with VectorStore(path=gone) as store:
        assert store.spaces() == [] and store.physical_collections() == []
        assert store.count("s", "models", missing_ok=True) == 0 and list(store.scan("s", "models", missing_ok=True)) == []
        for read in (lambda: store.search("s", "models", np.ones(DIM)), lambda: store.get("s", "models", ["k"]),
                     lambda: store.count("s", "models"), lambda: store.scan("s", "models")):
            with pytest.raises(NotFoundError) as exc:
                read()
            assert f"{gone} does not exist" in str(exc.value) and "reindex" not in str(exc.value)
        assert not (tmp_path / "no").exists()
        store.upsert("s", "models", make_points(3), dim=DIM)
        assert (gone / ".taskspace.lock").is_file() and store.count("s", "models") == 3
        with pytest.raises(BusyError):
            VectorStore(path=gone)
    with VectorStore(path=gone) as again:
        assert again.count("s", "models") == 3


def test_a_closed_vector_store_says_to_open_a_new_one(tmp_path):
    """A read on a closed store: a StoreError naming the folder and saying to open a new store; before, only "the
    vector store at PATH is closed"."""
    store = VectorStore(path=tmp_path / "q")
    store.upsert("s", "models", make_points(3), dim=DIM)
    store.close()
    assert store.closed
    with pytest.raises(StoreError, match=r"is closed; open a new one \(VectorStore\(path=") as exc:
        store.search("s", "models", np.ones(DIM))
    assert str(tmp_path / "q") in str(exc.value)


def test_count_and_scan_of_a_missing_index_raise_as_search_does_unless_missing_ok(vs):
    """``count`` and ``scan`` of a space/kind with no index raise the IndexMissingError ``search`` and ``get`` raise
    (``scan`` at the call, not at its first point), naming the same fix; ``missing_ok=True`` answers 0 / no point, for
    the callers to whom a missing index is an empty one (an indexing pass, ``/readyz``, ``taskspace check``). An
    existing but empty collection counts 0 either way. Before, ``count`` said 0 and ``scan`` nothing without a word
    while ``search`` raised: a caller counting could not tell a lost index from an empty one."""
    from indexer.errors import IndexMissingError

    vs.rebuild("s", "models", make_points(3), dim=DIM)
    with pytest.raises(IndexMissingError) as searched:
        vs.search("s", "prompts", np.ones(DIM))
    for read in (lambda: vs.count("s", "prompts"), lambda: vs.scan("s", "prompts"),
                 lambda: vs.count("s", "prompts", {"license": ["mit"]})):
        with pytest.raises(IndexMissingError) as err:
            read()
        assert str(err.value) == str(searched.value)
    assert vs.count("s", "prompts", missing_ok=True) == 0 and list(vs.scan("s", "prompts", missing_ok=True)) == []
    assert vs.count("s", "models") == 3 and len(list(vs.scan("s", "models"))) == 3
    vs.rebuild("s", "benchmarks", [], dim=DIM)
    assert vs.count("s", "benchmarks") == 0 and list(vs.scan("s", "benchmarks")) == []
