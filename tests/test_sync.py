"""Rebuilding and checking the Qdrant index from the SQL store (real SQL store, real local-mode Qdrant,
real MiniLM for prompt vectors)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from indexer.errors import BusyError, EncoderError, NotFoundError
from indexer.records import BenchmarkInfo, Outcome, SourceBatch, SourceInfo
from indexer.store.vectors import VectorStore
from indexer.sync import check, push_models, reindex, resolve_spaces, space_name

BENCHES = {
    "toy/arith": ["What is 2 + 2?", "What is 7 times 6?", "What is 10 minus 3?", "What is 9 divided by 3?"],
    "toy/geo": ["What is the capital of France?", "Which river flows through Cairo?", "Where is Mount Fuji?"],
    "toy/code": ["Write a Python function that reverses a list.", "What does `len([1, 2])` return?",
                 "What is 2 + 2?"],  # a prompt shared with toy/arith
}
MODELS = ["org/alpha", "org/beta", "org/gamma", "plain-name-model"]


def fill(sql, encoder):
    """Ingest toy outcomes, Hub metadata, a space, model and benchmark vectors. Returns the space record."""
    rng = np.random.default_rng(0)
    outcomes = [Outcome(model=m, benchmark=b, text=t, score=float(rng.integers(0, 2)))
                for m in MODELS for b, texts in BENCHES.items() for t in texts]
    sql.ingest(SourceBatch(SourceInfo("table", "mem:toy", "r1"), {b: BenchmarkInfo(b, group="toy") for b in BENCHES},
                           outcomes))
    sql.upsert_models([
        {"key": "org/alpha", "license": "mit", "num_parameters": 7_000_000_000, "gated": "false", "tags": ["chat"]},
        {"key": "org/beta", "license": "llama3", "num_parameters": 70_000_000_000, "gated": "manual"},
        {"key": "org/gamma", "license": "apache-2.0", "num_parameters": 1_000_000_000, "gated": "false"},
    ])
    space = sql.get_or_create_space(encoder.id, encoder.dim, 1.0, 0.0)
    save_vectors(sql, space, MODELS, seed=1)
    from indexer.store.sql import BenchmarkVector

    sql.save_benchmark_vectors(space.id, [BenchmarkVector(b, encoder.encode(t).mean(axis=0), len(t))
                                          for b, t in BENCHES.items()])
    return space


def save_vectors(sql, space, models, seed):
    from indexer.store.sql import ModelVector

    rng = np.random.default_rng(seed)
    digests = sql.model_digests(models)
    sql.save_model_vectors(space.id, [
        ModelVector(m, rng.normal(size=space.dim).astype(np.float32), n_prompts=10, benchmarks=sorted(BENCHES),
                    accuracy={b: 0.5 for b in BENCHES}, inputs_digest=digests.get(m)) for m in models])


@pytest.fixture
def vs(tmp_path):
    v = VectorStore(path=tmp_path / "qdrant")
    yield v
    v.close()


def only(drifts):
    assert len(drifts) == 1
    return drifts[0]


def test_reindex_builds_every_collection_and_check_is_clean(store, vs, encoder):
    space = fill(store, encoder)
    name = space_name(space)
    (res,) = reindex(store, vs, encoder=encoder)
    n_prompts = len({t for ts in BENCHES.values() for t in ts})
    assert res.space == name and res.counts == {"models": 4, "benchmarks": 3, "prompts": n_prompts}
    assert only(check(store, vs)).clean
    # model points carry the Hub metadata and filter on it
    hits = vs.search(name, "models", np.ones(space.dim), filters={"gated": False, "num_parameters": {"lte": 8e9}})
    assert {h.key for h in hits} == {"org/alpha", "org/gamma"}
    alpha = vs.get(name, "models", ["org/alpha"])["org/alpha"].payload
    assert alpha["license"] == "mit" and alpha["tags"] == ["chat"] and alpha["accuracy"] == 0.5
    # metadata nothing reads from the index stays in SQL (sync.UNSTORED), yet the digest covers it
    assert not set(alpha) & {"inputs_digest", "computed_at", "gated_mode", "revision", "last_modified"}
    assert vs.get(name, "models", ["org/beta"])["org/beta"].payload.keys() == alpha.keys()
    assert vs.get(name, "models", ["org/beta"])["org/beta"].payload["gated"] is True
    # model vectors are SQL's, exactly
    sql_vec = {mv.model: mv.vector for mv in store.load_model_vectors(space.id)}
    got = vs.get(name, "models", MODELS, with_vectors=True)
    for m in MODELS:
        np.testing.assert_array_equal(got[m].vector, sql_vec[m])
    # a prompt finds itself; the shared prompt lists both its benchmarks
    q = encoder.encode(["Which river flows through Cairo?"])[0]
    top = vs.search(name, "prompts", q, limit=1)[0]
    assert top.payload["snippet"] == "Which river flows through Cairo?" and top.score == pytest.approx(1.0, abs=1e-5)
    shared = vs.search(name, "prompts", encoder.encode(["What is 2 + 2?"])[0], limit=1)[0]
    assert shared.payload["benchmarks"] == ["toy/arith", "toy/code"]
    assert vs.search(name, "benchmarks", q, limit=1)[0].key == "toy/geo"


def test_reindex_builds_the_models_collection_last(store, vs, encoder, monkeypatch):
    """A search needs the prompts collection as soon as the models answer (a lost one is a 503 saying reindex), so a
    first build writes models last: a query between the kinds (an API process beside the worker) finds no models
    yet rather than models without prompts. The counts are still reported in the order asked."""
    fill(store, encoder)
    built, rebuild = [], vs.rebuild
    monkeypatch.setattr(vs, "rebuild", lambda name, kind, *a, **kw: built.append(kind) or rebuild(name, kind, *a, **kw))
    (res,) = reindex(store, vs, encoder=encoder)
    assert built[-1] == "models" and sorted(built) == ["benchmarks", "models", "prompts"]
    assert list(res.counts) == ["models", "benchmarks", "prompts"]


def test_an_index_written_with_every_metadata_field_and_the_old_payload_indexes_still_answers(store, vs, encoder,
                                                                                               monkeypatch):
    """Model points written before sync.UNSTORED (their payload carries every metadata field) under the payload
    indexes of then (accuracy, tags, library, downloads; no kind): same digests, so check is clean, and every
    documented filter selects the same models as on an index written now."""
    import indexer.store.vectors as vectors_mod
    import indexer.sync as sync_mod
    from indexer.find import Filters

    space = fill(store, encoder)
    name = space_name(space)
    old_indexes = {**vectors_mod.PAYLOAD_INDEXES, "models": {
        "license": "keyword", "num_parameters": "integer", "pipeline_tag": "keyword", "library": "keyword",
        "tags": "keyword", "gated": "bool", "downloads": "integer", "benchmarks": "keyword", "n_prompts": "integer",
        "accuracy": "float"}}
    with monkeypatch.context() as m:
        m.setattr(sync_mod, "UNSTORED", ())
        m.setattr(vectors_mod, "PAYLOAD_INDEXES", old_indexes)
        reindex(store, vs, encoder=encoder)
    old = vs.get(name, "models", ["org/alpha"])["org/alpha"].payload
    assert old["inputs_digest"] == store.model_digests(["org/alpha"])["org/alpha"]  # the old payload, really
    assert only(check(store, vs)).clean
    every = Filters(licenses=["mit", "apache-2.0"], min_params="2B", max_params="80B", exclude_gated=True,
                    open_only=True, min_evidence=5, benchmark="toy/geo").conditions()
    q = np.ones(space.dim)
    before = {f: {h.key for h in vs.search(name, "models", q, filters=c, limit=10)} for f, c in every.items()}
    before["tags"] = {h.key for h in vs.search(name, "models", q, filters={"tags": "chat"}, limit=10)}
    reindex(store, vs, encoder=encoder)
    assert only(check(store, vs)).clean and "inputs_digest" not in vs.get(name, "models", ["org/alpha"])["org/alpha"].payload
    after = {f: {h.key for h in vs.search(name, "models", q, filters=c, limit=10)} for f, c in every.items()}
    after["tags"] = {h.key for h in vs.search(name, "models", q, filters={"tags": "chat"}, limit=10)}
    assert after == before and before["tags"] == {"org/alpha"} and before["open_only"] == {"org/alpha", "org/beta", "org/gamma"}


def test_reindex_is_idempotent(store, vs, encoder):
    space = fill(store, encoder)
    reindex(store, vs, encoder=encoder)
    ids = {k: sorted(h.id for h in vs.scan(space_name(space), k)) for k in ("models", "benchmarks", "prompts")}
    reindex(store, vs, space_name(space), encoder=encoder)
    assert {k: sorted(h.id for h in vs.scan(space_name(space), k)) for k in ids} == ids
    assert len(vs.physical_collections(space_name(space))) == 3 and only(check(store, vs)).clean


def test_check_detects_missing_stale_and_extra(store, vs, encoder):
    space = fill(store, encoder)
    name = space_name(space)
    reindex(store, vs, encoder=encoder)
    # missing: a new vector in SQL; stale: changed metadata and a changed vector; extra: deleted in SQL
    store.ingest(SourceBatch(SourceInfo("table", "mem:toy2", "r1"), {"toy/geo": BenchmarkInfo("toy/geo")},
                             [Outcome("org/delta", "toy/geo", "Where is Mount Fuji?", 1.0)]))
    save_vectors(store, space, ["org/delta", "org/gamma"], seed=7)
    store.upsert_models([{"key": "org/alpha", "license": "apache-2.0"}])
    store.delete_model_vectors(space.id, ["plain-name-model"])
    drift = only(check(store, vs))
    assert not drift.clean
    assert drift.missing["models"] == ["org/delta"]
    assert drift.stale["models"] == ["org/alpha", "org/gamma"]
    assert drift.extra["models"] == ["plain-name-model"]
    assert not any(drift.missing[k] or drift.stale[k] or drift.extra[k] for k in ("benchmarks", "prompts"))
    assert drift.as_dict()["counts"] == {"missing": {"models": 1}, "stale": {"models": 2}, "extra": {"models": 1}}
    # a point written behind SQL's back is extra; a tampered vector is stale
    from indexer.store.vectors import Point

    vs.upsert(name, "benchmarks", [Point("toy/ghost", np.ones(space.dim), {})], dim=space.dim)
    b = vs.get(name, "benchmarks", ["toy/arith"], with_vectors=True)["toy/arith"]
    vs.upsert(name, "benchmarks", [Point("toy/arith", b.vector * 2, {k: v for k, v in b.payload.items() if k != "key"})],
              dim=space.dim)
    drift = only(check(store, vs))
    assert drift.extra["benchmarks"] == ["toy/ghost"] and drift.stale["benchmarks"] == ["toy/arith"]
    reindex(store, vs, encoder=encoder)
    assert only(check(store, vs)).clean


def test_check_reports_index_space_unknown_to_sql_and_missing_index(store, vs, encoder):
    space = fill(store, encoder)
    drift = only(check(store, vs))  # nothing indexed yet: everything is missing
    assert len(drift.missing["models"]) == 4 and len(drift.missing["prompts"]) == 9 and not drift.clean
    reindex(store, vs, encoder=encoder, kinds=["models"])
    from indexer.store.vectors import Point

    vs.rebuild("orphan-space", "models", [Point("x", np.ones(4), {})], dim=4)
    drifts = {d.space: d for d in check(store, vs)}
    assert set(drifts) == {space_name(space), "orphan-space"}
    assert drifts["orphan-space"].extra["models"] == ["x"] and drifts["orphan-space"].problems
    assert not drifts[space_name(space)].missing["models"] and drifts[space_name(space)].missing["benchmarks"]
    (one,) = check(store, vs, space.id)
    assert one.space == space_name(space) and one.missing == drifts[space_name(space)].missing


def test_push_models_updates_the_live_index(store, vs, encoder):
    space = fill(store, encoder)
    reindex(store, vs, encoder=encoder)
    target = vs.alias_target(space_name(space), "models")
    save_vectors(store, space, ["org/alpha"], seed=3)
    store.delete_model_vectors(space.id, ["org/beta"])
    assert push_models(store, vs, space, ["org/alpha", "org/beta"]) == 1
    assert vs.alias_target(space_name(space), "models") == target  # in place, no rebuild
    assert only(check(store, vs)).clean
    with store.lock("reindex"):  # a reindex in progress elsewhere
        with pytest.raises(BusyError):
            push_models(store, vs, space, ["org/alpha"])
        with pytest.raises(BusyError):
            reindex(store, vs, encoder=encoder)


def test_resolve_spaces_and_encoder_mismatch(store, vs, encoder):
    space = fill(store, encoder)
    assert resolve_spaces(store, space_name(space)) == [space]
    assert resolve_spaces(store, space.id) == [space]
    assert resolve_spaces(store, "all-MiniLM-L6-v2") == [space]
    with pytest.raises(NotFoundError, match=space_name(space)):
        resolve_spaces(store, "nope")
    other = store.get_or_create_space("sentence-transformers/all-MiniLM-L6-v2@0000000000000000", encoder.dim, 1.0, 0.0)
    with pytest.raises(NotFoundError, match="several"):
        resolve_spaces(store, "all-MiniLM-L6-v2")
    with pytest.raises(EncoderError, match="0000000000000000"):
        reindex(store, vs, other, encoder=encoder)


def test_a_space_is_named_by_its_encoders_whole_name_not_any_suffix_of_it(store, vs, encoder):
    """`--space` (check, reindex, publish, search) names a space by index name, SQL id, or the encoder's name whole
    or after its "/" (`all-MiniLM-L6-v2`, any case); another suffix names none: `--space 2` on a home with only
    space 1 is "not a known space". Before, any suffix matched, so `reindex --space 2` (an id no space has) or
    `--space v2` rebuilt space 1, whose encoder name ends in "2"."""
    space = fill(store, encoder)
    assert space.id != 2
    for name in ("all-MiniLM-L6-v2", "ALL-minilm-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        assert resolve_spaces(store, name) == [space]
    for name in ("2", "v2", "L6-v2", "MiniLM-L6-v2"):
        with pytest.raises(NotFoundError, match=rf"^space='{name}' is not a known space"):
            resolve_spaces(store, name)


def test_a_space_given_as_a_numpy_id_or_a_wrong_type_is_resolved_or_an_input_error_naming_space(store, vs, encoder):
    """`space=` of the library (find_models, list_models, model_detail) takes a numpy integer id, as read from an
    array or a DataFrame, as the id it holds; another type (a list, a float) is an InputError naming `space`, and an
    unknown name's error carries `.item == "space"`. Before, `space=np.int64(1)` or `space=["x"]` failed with
    AttributeError: 'numpy.int64' object has no attribute 'id'."""
    import numpy as np

    from indexer.errors import InputError, UnknownSpaceError
    from indexer.query import _space

    space = fill(store, encoder)
    assert resolve_spaces(store, np.int64(space.id)) == [space]
    assert _space(store, np.int32(space.id)) == space
    for bad in (["x"], 1.0, True):
        with pytest.raises(InputError, match="^space must be a space's name or id") as err:
            _space(store, bad)
        assert err.value.item == "space"
    with pytest.raises(UnknownSpaceError) as unknown:
        resolve_spaces(store, "nope")
    assert unknown.value.item == "space"


def test_sigkill_mid_reindex_then_reindex_is_clean(tmp_path, vs, encoder):
    from indexer.store.sql import Store

    url = f"sqlite:///{tmp_path / 'sql.db'}"
    with Store(url, upgrade=True) as sql:
        space = fill(sql, encoder)
        reindex(sql, vs, encoder=encoder)
        old = {k: vs.alias_target(space_name(space), k) for k in ("models", "benchmarks", "prompts")}
        save_vectors(sql, space, MODELS, seed=11)  # SQL moves on; the index is now stale
    vs.close()
    code = """
        import sys, time
        from indexer.store.sql import Store
        from indexer.store.vectors import VectorStore
        from indexer.sync import reindex
        sql, vs = Store(sys.argv[1]), VectorStore(path=sys.argv[2])
        client = vs._c("models")  # local mode: one client per kind
        orig = client.upsert
        def upsert_then_hang(*a, **k):
            out = orig(*a, **k)
            print("midway", flush=True)
            time.sleep(60)
            return out
        client.upsert = upsert_then_hang
        reindex(sql, vs)
    """
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), url, str(tmp_path / "qdrant")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        assert proc.stdout.readline().strip() == "midway", proc.stderr.read()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    with Store(url) as sql, VectorStore(path=tmp_path / "qdrant") as vs2:
        name = space_name(space)
        now = {k: vs2.alias_target(name, k) for k in old}
        assert now["models"] == old["models"]  # the killed kind's old complete collection still serves
        assert all(now[k] for k in old)  # the kinds rebuilt before it (models come last) were switched whole
        drift = only(check(sql, vs2))
        assert drift.stale["models"] == sorted(MODELS) and not drift.missing["models"] and not drift.extra["models"]
        assert len(vs2.physical_collections(name)) == 4  # + the killed rebuild's orphan
        assert len(drift.orphans) == 1 and drift.orphans[0].startswith(f"ts_{name}__models__v")
        reindex(sql, vs2, encoder=encoder)
        drift = only(check(sql, vs2))
        assert drift.clean and not drift.orphans and len(vs2.physical_collections(name)) == 3


@pytest.fixture
def cli(capsys, monkeypatch):
    """Run `taskspace ARGS` in this process through the console entry point: (exit code, stdout, stderr)."""
    from indexer.cli import main

    def run(*args):
        monkeypatch.setattr(sys, "argv", ["taskspace", *args])
        try:
            main()
            rc = 0
        except SystemExit as exc:
            rc = exc.code or 0
        out = capsys.readouterr()
        return rc, out.out, out.err
    return run


def test_cli_reindex_and_check(encoder, taskspace_home, cli):
    import json

    from indexer.store.sql import open_store

    with open_store() as sql:
        space = fill(sql, encoder)
    name = space_name(space)
    rc, out, err = cli("check", "--json")
    assert rc == 1, err
    out = json.loads(out)
    assert out["clean"] is False and out["spaces"][0]["counts"]["missing"] == {"models": 4, "benchmarks": 3, "prompts": 9}
    rc, out, err = cli("reindex", "--space", name, "--json")
    assert rc == 0, err
    assert json.loads(out)[0]["counts"] == {"models": 4, "benchmarks": 3, "prompts": 9}
    rc, out, err = cli("check", "--space", name)
    assert rc == 0 and f"space {name}: clean" in out, err
    with open_store() as sql:
        sql.delete_model_vectors(space.id, ["org/beta"])
    rc, out, err = cli("check")
    assert rc == 1 and "extra models: 1: org/beta" in out and "taskspace reindex" in err
    rc, out, err = cli("reindex", "--kind", "models")
    assert rc == 0 and "3 models" in out, err
    assert cli("check", "--space", name)[0] == 0  # (without it, also the configured space, which is not built)
    rc, out, err = cli("reindex", "--space", "nope")
    assert rc == 2 and "is not a known space" in err
    # another holder of the local index (here a store of this same process, which the error names as such): a
    # one-line BusyError, exit code 6
    with VectorStore.from_settings():
        rc, out, err = cli("check")
    assert rc == 6 and "this process (pid" in err and "already holds the index at" in err and "Traceback" not in err


def test_reindex_with_an_unknown_kind_is_a_usage_error(taskspace_home, cli):
    """`taskspace reindex --kind bogus`: a usage error naming the option and the kinds (exit 2), before any store is
    opened; before, exit 1 after opening both stores, and a `failed` reindex run in `taskspace runs`."""
    rc, out, err = cli("reindex", "--kind", "models", "--kind", "bogus")
    assert rc == 2 and out == "", (rc, out, err)
    assert len(err.strip().splitlines()) == 1 and "'--kind'" in err and "models, benchmarks, prompts" in err, err
    assert not (taskspace_home / "taskspace.db").exists()


def test_an_unknown_space_is_a_usage_error_naming_the_option_and_the_spaces(encoder, taskspace_home, cli, tmp_path):
    """`--space NAME` naming no space (`check`, `reindex`, `publish`): a usage error (exit 2, one line) naming the
    option and the spaces SQL holds, and `reindex` records no failed run for it; before, exit 1, as for a failed
    command."""
    from indexer.store.sql import open_store

    with open_store() as sql:
        space = fill(sql, encoder)
    assert cli("reindex")[0] == 0
    with open_store() as sql:
        runs = len(sql.list_runs())
    for args in (("check", "--space", "nope"), ("reindex", "--space", "nope"),
                 ("publish", "my-org/x", "--space", "nope", "--dry-run", str(tmp_path / "out"))):
        rc, out, err = cli(*args)
        assert rc == 2 and out == "", (args, rc, out, err)
        assert len(err.strip().splitlines()) == 1 and "--space 'nope' is not a known space" in err, (args, err)
        assert f"spaces in SQL: {space_name(space)} (id {space.id}" in err, (args, err)
    with open_store() as sql:
        assert len(sql.list_runs()) == runs  # no failed reindex run recorded for it


def test_check_and_reindex_without_the_sqlite_file_say_sql_is_missing(encoder, taskspace_home, cli):
    """The SQLite file deleted, the Qdrant folder beside it kept: `check` and `reindex` say the SQL database is missing
    at its path, that it is the source of truth and to re-index the sources with `taskspace index` (exit 3), and
    create no empty database. Before, `check` created one, reported every indexed point as extra and advised
    `taskspace reindex`, which rebuilt nothing. A fresh home (no database, no index) is said to hold nothing indexed,
    as a search says it, and gets no database either."""
    from indexer.store.sql import open_store

    code, out, err = cli("check")
    assert code == 1 and "does not exist: nothing is indexed in TASKSPACE_HOME=" in err, (code, out, err)
    assert not (taskspace_home / "taskspace.db").exists()
    with open_store() as sql:
        space = fill(sql, encoder)
    assert cli("reindex")[0] == 0 and cli("check", "--space", space_name(space))[0] == 0
    db = taskspace_home / "taskspace.db"
    db.unlink()
    for command in ("check", "reindex"):
        rc, out, err = cli(command)
        assert rc == 3 and out == "", (command, rc, out, err)
        assert err.startswith(f"error: the SQL database is missing at {db}; it is the source of truth") and \
            "re-index the sources with `taskspace index`" in err and "taskspace reindex" not in err, err
        assert len(err.strip().splitlines()) == 1 and not db.exists()


def test_check_search_and_spaces_on_a_home_whose_index_folder_was_removed_make_nothing(encoder, taskspace_home, cli):
    """The Qdrant folder of an indexed home removed (by hand, a partial copy), its SQLite file kept: `taskspace check`
    says the index folder does not exist, every point is missing and to run `taskspace reindex` (exit 1); `taskspace
    search` that the space's index is missing and that `taskspace reindex --space NAME` rebuilds it (exit 3);
    `taskspace spaces` lists its index as missing; none of them makes the folder, which `reindex` then rebuilds.
    Before, each of these reads created an empty qdrant folder (its lock file, a folder per kind) in the home."""
    import json
    import shutil

    from indexer.store.sql import open_store

    with open_store() as sql:
        space = fill(sql, encoder)
    assert cli("reindex")[0] == 0
    name, folder = space_name(space), taskspace_home / "qdrant"
    shutil.rmtree(folder)
    rc, out, err = cli("check")
    assert rc == 1 and (f"space {name}: drift\n  vector index folder {folder} does not exist: every point is "
                        "missing\n  missing models: 4: ") in out, (out, err)
    assert "run `taskspace reindex` to rebuild the index from SQL" in err and not folder.exists(), (out, err)
    got = json.loads(cli("check", "--json")[1])
    assert not got["clean"] and got["spaces"][0]["counts"]["missing"] == {"models": 4, "benchmarks": 3, "prompts": 9}
    rc, out, err = cli("search", "--benchmark", "toy/geo", "--space", name)
    assert rc == 3 and f"is missing from {folder}; `taskspace reindex --space {name}`" in err, (out, err)
    rc, out, err = cli("spaces")
    assert rc == 0 and "index: models, benchmarks, prompts missing" in out, (out, err)
    assert not folder.exists()
    assert cli("reindex")[0] == 0 and cli("check", "--space", name)[0] == 0


def test_check_reports_an_index_of_another_dimension(store, vs, encoder):
    space = fill(store, encoder)
    name = space_name(space)
    from indexer.store.vectors import Point

    from indexer.sync import _benchmark_points

    # SQL's payloads (their digests match), vectors of another dimension: the vectors cannot be compared
    vs.rebuild(name, "benchmarks", [Point(p.key, np.ones(8), p.payload) for p in _benchmark_points(store, space)], dim=8)
    drift = only(check(store, vs))
    assert drift.problems == [f"benchmarks index holds 8-dim vectors, the space has {space.dim}"]
    assert drift.stale["benchmarks"] == sorted(BENCHES) and not drift.clean


def test_an_index_of_another_dimension_is_named_by_search_and_replaced_by_reindex(store, vs, encoder):
    """The index holds vectors of another dimension than SQL's space (built with another encoder, copied from another
    home): a search says so and names `taskspace reindex --space NAME` (before: "embed the query with the space's
    encoder"), and reindex replaces it (before: it refused the dimension change with the same DimensionError)."""
    from indexer.errors import DimensionError
    from indexer.find import find_models
    from indexer.store.vectors import KINDS, Point

    space = fill(store, encoder)
    name = space_name(space)
    reindex(store, vs, encoder=encoder)
    points = {kind: [Point(h.key, np.ones(8), h.payload) for h in vs.scan(name, kind)] for kind in KINDS}
    vs.drop_space(name)
    for kind in KINDS:
        vs.rebuild(name, kind, points[kind], dim=8)
    with pytest.raises(DimensionError, match=rf"holds 8-dim vectors, but the space has {space.dim} .*run `taskspace "
                       rf"reindex --space {name}` to rebuild it from SQL") as err:
        find_models("What is 3 + 5?", store=store, vectors=vs, space=space.id)
    assert "embed the query" not in str(err.value)
    with pytest.raises(DimensionError, match=r"taskspace reindex --space"):
        find_models(benchmark="toy/arith", store=store, vectors=vs, space=space.id)
    with pytest.raises(DimensionError, match=r"the query vector has 3 entries"):  # a bad user vector stays its own error
        find_models(vector=np.ones(3), store=store, vectors=vs, space=space.id)
    (res,) = reindex(store, vs, encoder=encoder)
    assert res.counts["models"] == len(MODELS) and all(vs.dim(name, k) == space.dim for k in KINDS)
    assert only(check(store, vs)).clean
    assert len(find_models("What is 3 + 5?", k=2, store=store, vectors=vs, space=space.id).results) == 2


def test_a_live_collection_whose_folder_is_gone_is_reported_and_rebuilt(store, tmp_path, encoder, vector_engine):
    """The alias names a collection whose folder was removed (a cleanup, a partial copy of the home). Before, with Qdrant
    Edge, search, `check` and `reindex` all failed on it with "`taskspace reindex` rebuilds it": the advice could not
    be followed. qdrant-client's local mode re-creates such a collection, empty, from its meta.json."""
    import shutil

    from indexer.errors import StoreError

    space = fill(store, encoder)
    name = space_name(space)
    with VectorStore(path=tmp_path / "qdrant") as vs:
        reindex(store, vs, encoder=encoder)
        gone = vs.alias_target(name, "models")
        assert vs.unreadable(name, "models") is None
    (folder,) = [p for p in (tmp_path / "qdrant" / "models").rglob(gone) if p.is_dir()]  # each engine's layout
    shutil.rmtree(folder)
    with VectorStore(path=tmp_path / "qdrant") as vs:
        why = vs.unreadable(name, "models")
        drift = only(check(store, vs))
        assert not drift.clean and drift.missing["models"] == sorted(MODELS) and not drift.stale.get("models")
        assert drift.missing["benchmarks"] == [] and drift.missing["prompts"] == []  # the other kinds are compared
        if vector_engine == "edge":
            assert vs.alias_target(name, "models") == gone and gone in why
            with pytest.raises(StoreError, match="taskspace reindex"):
                vs.search(name, "models", np.ones(space.dim))
            assert drift.problems == [f"models index cannot be read: {why}"]
        else:
            assert why is None and vs.search(name, "models", np.ones(space.dim)) == [] and drift.problems == []
        (res,) = reindex(store, vs, encoder=encoder)
        assert res.counts["models"] == len(MODELS) and vs.alias_target(name, "models") != gone
        assert only(check(store, vs)).clean and vs.unreadable(name, "models") is None
        assert len(vs.search(name, "models", np.ones(space.dim))) == len(MODELS)


def test_a_live_collection_with_a_damaged_file_is_reported_and_rebuilt(store, tmp_path, encoder, vector_engine):
    """A vector file of the live models collection cut short (a full disk, a bad copy): search says how to repair it,
    `check` reports it (every expected point missing) instead of failing, and `reindex` replaces it."""
    from indexer.errors import StoreError

    if vector_engine != "edge":
        pytest.skip("the damaged file is one of Qdrant Edge's")
    space = fill(store, encoder)
    name = space_name(space)
    with VectorStore(path=tmp_path / "qdrant") as vs:
        reindex(store, vs, encoder=encoder)
        live = vs.alias_target(name, "models")
    (chunk,) = (tmp_path / "qdrant" / "models" / live).rglob("vector_storage/vectors/chunk_0.mmap")
    with open(chunk, "r+b") as f:
        f.truncate(64)
    with VectorStore(path=tmp_path / "qdrant") as vs:
        with pytest.raises(StoreError, match=r"`taskspace reindex` rebuilds them from SQL"):
            vs.search(name, "models", np.ones(space.dim))
        drift = only(check(store, vs))
        assert drift.missing["models"] == sorted(MODELS) and not drift.clean
        assert len(drift.problems) == 1 and drift.problems[0].startswith("models index cannot be read: ")
        assert drift.missing["benchmarks"] == [] and drift.missing["prompts"] == []
        reindex(store, vs, encoder=encoder)
        assert only(check(store, vs)).clean
        assert len(vs.search(name, "models", np.ones(space.dim))) == len(MODELS)


def test_check_advises_an_indexing_pass_for_benchmark_vectors_sql_lacks(encoder, tmp_path, cli):
    """Benchmark vectors deleted from SQL (`delete from benchmark_vectors`): `check` lists their points as extra,
    names them as vectors SQL lacks (`uncomputed`) and advises `taskspace index`, which computes them and rebuilds
    the collection (check is clean after it). Before, it advised only `taskspace reindex`, which dropped the points and
    left the benchmarks without vectors until the next indexing pass."""
    import json

    from sqlalchemy import text

    from helpers import TOPICS, index_sources, outcomes
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec

    rng = np.random.default_rng(3)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(8)]
    beta = [f"Write a Python function number {j} that sorts a list of integers" for j in range(6)]
    sources = [(tmp_path / "a", "alpha", alpha, outcomes(rng, ["org/a", "org/b"], 8)),
               (tmp_path / "b", "beta", beta, outcomes(rng, ["org/a", "org/c"], 6))]
    store, vectors = index_sources(encoder, sources)
    with store.engine.begin() as conn:
        conn.execute(text("DELETE FROM benchmark_vectors WHERE benchmark_id IN "
                          "(SELECT id FROM benchmarks WHERE name = 'alpha')"))
    store.close()
    vectors.close()
    rc, out, err = cli("check")
    assert rc == 1 and "extra benchmarks: 1: alpha" in out, (out, err)
    assert "run `taskspace index` to compute the 1 benchmark vector SQL lacks" in err
    assert "run `taskspace reindex` to rebuild" not in err  # it would drop the point, not bring the vector back
    rc, out, err = cli("check", "--json")
    assert rc == 1 and json.loads(out)["spaces"][0]["uncomputed"] == ["alpha"]
    from indexer.store.sql import open_store

    with open_store() as store, VectorStore.from_settings() as vectors:
        r = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / s)) for s in "ab"])
        assert r.status == "ok" and r.counts["benchmarks"] == 1, r.counts
    rc, out, err = cli("check")
    assert rc == 0 and "clean" in out, (out, err)


def test_check_after_an_ingest_without_an_indexing_pass_advises_taskspace_index(encoder, tmp_path, cli):
    """`taskspace ingest` of a new benchmark without `taskspace index`: `check` reports its prompts missing from the
    index, names the benchmark whose vector SQL lacks the new results in (`unindexed` in `--json`) and advises
    `taskspace index`, the pass that solves the new results, computes the benchmark's vector and rebuilds the prompts
    (check is clean after it). Before, it advised `taskspace reindex`, which rebuilds the prompts from SQL and leaves
    the new benchmark without a vector and its models unsolved (check then said clean). Drift a pass would not repair
    (a point of a model SQL does not hold) keeps the reindex advice beside it."""
    import json

    from helpers import TOPICS, index_sources, outcomes, write_source
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.vectors import Point

    rng = np.random.default_rng(5)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(8)]
    beta = [f"Write a Python function number {j} that reverses a list of strings" for j in range(6)]
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", alpha, outcomes(rng, ["org/a", "org/b"], 8))])
    store.close()
    vectors.close()
    write_source(tmp_path / "b", "beta", beta, outcomes(rng, ["org/a", "org/c"], 6))
    rc, out, err = cli("ingest", str(tmp_path / "b"), "--no-metadata")
    assert rc == 0, (out, err)
    rc, out, err = cli("check")
    assert rc == 1 and "missing prompts: 6" in out, (out, err)
    assert "run `taskspace index`" in err and "beta" in err, err
    assert "run `taskspace reindex`" not in err, err  # it would rebuild the prompts, beta's results left unindexed
    rc, out, err = cli("check", "--json")
    assert rc == 1 and json.loads(out)["spaces"][0]["unindexed"] == ["beta"], out
    name = json.loads(out)["spaces"][0]["space"]
    with VectorStore.from_settings() as vs:  # drift a pass does not repair (a point of no model): reindex stays advised
        dim = vs.dim(name, "models")
        vs.upsert(name, "models", [Point("org/gone", np.ones(dim, np.float32), {"digest": "x"})], dim=dim)
    rc, out, err = cli("check")
    assert rc == 1 and "run `taskspace index`" in err and "then run `taskspace reindex`" in err, err
    from indexer.store.sql import open_store

    with open_store() as store, VectorStore.from_settings() as vs:
        r = Indexer(store, vs, encoder=encoder).run([SourceSpec(str(tmp_path / s)) for s in "ab"])
        assert r.status == "ok" and r.counts["benchmarks"] == 1 and r.counts["solved"] >= 2, r.counts
    rc, out, err = cli("reindex")
    assert rc == 0, (out, err)
    rc, out, err = cli("check")
    assert rc == 0 and "clean" in out, (out, err)


@pytest.mark.parametrize("db", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_check_after_an_ingest_of_a_new_model_advises_taskspace_index(encoder, tmp_path, cli, monkeypatch, request, db):
    """`taskspace ingest` of a new model's results on a benchmark already indexed (no new benchmark, no new prompt),
    without `taskspace index`: `check` reports the model as unsolved (it has outcomes and no vector: in no search),
    exit 1, advises `taskspace index` naming it (`unsolved` in `--json`) and not `taskspace reindex`. Before, it said
    clean. A model a pass cannot solve (its stored outcomes outside [0, 1]: the solver refuses it, the pass reports an
    item error) is not counted, so check is clean after the pass."""
    import json

    from sqlalchemy import text

    from helpers import TOPICS, index_sources, outcomes, write_source
    from indexer.config import reset_settings
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store

    if db == "postgresql":
        from indexer.store.sql import Store

        url = request.getfixturevalue("pg_url")
        Store(url, upgrade=True).close()
        monkeypatch.setenv("TASKSPACE_DATABASE_URL", url)
        reset_settings()
    rng = np.random.default_rng(7)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(8)]
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", alpha, outcomes(rng, ["org/a", "org/b"], 8))])
    store.close()
    vectors.close()
    rc, out, err = cli("check")
    assert rc == 0 and "clean" in out, (out, err)
    write_source(tmp_path / "n", "alpha", alpha, outcomes(rng, ["org/new"], 8))
    rc, out, err = cli("ingest", str(tmp_path / "n"), "--no-metadata")
    assert rc == 0, (out, err)
    rc, out, err = cli("check")
    assert rc == 1 and "unsolved models: 1: org/new" in out, (out, err)
    assert "run `taskspace index`" in err and "org/new" in err and "taskspace reindex" not in err, err
    rc, out, err = cli("check", "--json")
    assert rc == 1 and json.loads(out)["spaces"][0]["unsolved"] == ["org/new"], out
    with open_store() as sql:  # org/b's stored outcomes made ones no pass can solve (2.0), its digest changed
        with sql.engine.begin() as conn:
            mid = conn.execute(text("select id from models where key = 'org/b'")).scalar_one()
            blob = np.full(8, 2.0, dtype="<f4").tobytes()
            conn.execute(text("update outcomes set scores = :s where model_id = :m"), {"s": blob, "m": mid})
            conn.execute(text("update models set outcomes_digest = 'unsolvable' where id = :m"), {"m": mid})
        space = sql.list_spaces()[0]
        assert "org/b" in sql.stale_models(space.id)
    rc, out, err = cli("check", "--json")
    assert rc == 1 and json.loads(out)["spaces"][0]["unsolved"] == ["org/new"], out  # org/b: a pass cannot solve it
    with open_store() as sql, VectorStore.from_settings() as vs:
        r = Indexer(sql, vs, encoder=encoder).run([SourceSpec(str(tmp_path / s)) for s in "an"])
        assert r.counts["solved"] >= 1 and any("org/b" in e["message"] for e in r.errors), (r.counts, r.errors)
        assert "org/b" in sql.stale_models(space.id)  # still unsolved: every pass would leave it so
    rc, out, err = cli("check")
    assert rc == 0 and "clean" in out, (out, err)


def test_check_during_a_running_pass_says_the_pass_is_writing_the_index(encoder, taskspace_home, cli):
    """`taskspace check` while an indexing pass runs (the worker's, `taskspace index`): the drift it sees is the
    pass's work in progress, so it says which run is writing the index and to check again when it finishes, instead
    of advising `taskspace reindex` (which, run then, holds the index the pass needs and makes it fail: "run
    aborted: another taskspace process is using the index (pid N: taskspace reindex)"); before, "missing prompts:
    2142 ..." and "run `taskspace reindex` to rebuild the index from SQL", mid-pass. Without a running pass the advice
    stays."""
    from indexer.store.sql import open_store

    with open_store() as sql:
        fill(sql, encoder)  # SQL written, the index not yet: what a pass has done before its index stage
        run_id = sql.start_run("index")  # this process's pass, running
    rc, out, err = cli("check")
    assert rc == 1 and "drift" in out, (rc, out, err)
    assert f"an indexing pass is running (run {run_id}, pid {os.getpid()}" in err and "check again" in err, err
    assert "taskspace reindex" not in err, err
    with open_store() as sql:
        sql.finish_run(run_id, "ok")
    rc, out, err = cli("check")
    assert rc == 1 and "run `taskspace reindex` to rebuild the index from SQL" in err and "is running" not in err, err


def test_reindex_while_an_indexing_pass_runs_is_refused_naming_the_holder(encoder, taskspace_home, cli):
    """`taskspace reindex` while an indexing pass holds the index lock (a worker's pass, `taskspace index`, a pull):
    exit 6 naming the holder, before the index is opened, nothing rebuilt and no run recorded; before, it took only its
    own lock, rebuilt from the half-written SQL and held the embedded index, so the pass failed at its index stage
    ("run aborted: another taskspace process is using the index"). Once the pass is over it rebuilds."""
    from indexer.store.sql import open_store

    with open_store() as sql:
        fill(sql, encoder)
        with sql.lock("index"):  # a pass of this process, holding the lock
            n_runs = len(sql.list_runs())
            rc, out, err = cli("reindex")
            assert rc == 6 and "holds the 'index' lock" in err and f"pid {os.getpid()}" in err, (rc, out, err)
            assert len(sql.list_runs()) == n_runs
        rc, out, err = cli("reindex")
        assert rc == 0 and "space " in out, (rc, out, err)
        assert sql.list_runs()[0].kind == "reindex" and sql.list_runs()[0].status == "ok"


def test_a_search_during_the_first_pass_says_the_pass_is_building_the_index(encoder, taskspace_home, cli):
    """`taskspace search` while an indexing pass builds the index (a worker's first pass, SQL written, the index not
    yet): the error names the running pass and says to run the command again when it finishes (exit 3), instead of advising
    `taskspace reindex`, which run then holds the embedded index the pass needs and makes it fail; before, "the
    prompts index of space ... is missing ...; `taskspace reindex --space ...` (or the next indexing pass) rebuilds
    it". Without a running pass the advice stays."""
    from indexer.store.sql import open_store

    with open_store() as sql:
        fill(sql, encoder)
        run_id = sql.start_run("index")
    rc, out, err = cli("search", "what is 2 + 2?")
    assert rc == 3 and f"an indexing pass is running (run {run_id}, pid {os.getpid()}" in err, (rc, out, err)
    assert "run the command again when it finishes" in err and "taskspace reindex" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    with open_store() as sql:
        sql.finish_run(run_id, "ok")
    rc, out, err = cli("search", "what is 2 + 2?")
    assert rc == 3 and "taskspace reindex" in err and "is running" not in err, err


@pytest.mark.postgres
@pytest.mark.parametrize("taken", [False, True])
def test_a_reindex_whose_lock_session_is_ended_takes_it_again_or_stops(encoder, taskspace_home, cli, pg_url,
                                                                       monkeypatch, taken):
    """PostgreSQL ending the session that holds `taskspace reindex`'s 'index' lock after its first collection (a server
    restart, `pg_terminate_backend`): the rebuild takes the lock again before its next collection and completes;
    when another process (an indexing pass) took it meanwhile, the rebuild stops there (exit 6), its run recorded
    `failed` saying why. Before, it rebuilt every collection without the lock, beside the pass that held it."""
    from helpers import lose_lock_session
    from indexer.config import reset_settings
    from indexer.store.sql import Store

    monkeypatch.setenv("TASKSPACE_DATABASE_URL", pg_url)
    reset_settings()
    with Store(pg_url, upgrade=True) as sql:
        fill(sql, encoder)
    other, held_by_other, built = Store(pg_url), [], []
    rebuild = VectorStore.rebuild

    def rebuild_then_lose_the_lock(self, name, kind, points, **kwargs):
        out = rebuild(self, name, kind, points, **kwargs)
        built.append(kind)
        if len(built) == 1:
            lose_lock_session(other, taken, held_by_other)
        return out

    monkeypatch.setattr(VectorStore, "rebuild", rebuild_then_lose_the_lock)
    try:
        rc, out, err = cli("reindex")
        runs = other.list_runs()
        if not taken:
            assert rc == 0 and len(built) == 3, (rc, out, err, built)
            assert runs[0].kind == "reindex" and runs[0].status == "ok", runs
            return
        assert rc == 6 and "another taskspace process took it" in err, (rc, out, err)
        assert len(built) == 1, built  # nothing rebuilt beside the other holder
        assert runs[0].kind == "reindex" and runs[0].status == "failed", runs
        assert "another taskspace process took it" in runs[0].errors[0]["message"], runs[0].errors
    finally:
        for cm in held_by_other:
            cm.__exit__(None, None, None)
        other.close()


def _solver_takes(S: np.ndarray, names: list[str]) -> list[str]:
    """The models of outcome rows ``S`` that :meth:`HyperplaneSolver.add_models` takes, one at a time (as a pass
    retries a chunk it refuses), over random prompts of S's width."""
    from indexer.errors import InputError
    from indexer.solver import HyperplaneSolver

    D = np.random.default_rng(0).normal(size=(S.shape[1], 4))
    taken = []
    for i, m in enumerate(names):
        solver = HyperplaneSolver(lam=1.0).prepare(D / np.linalg.norm(D, axis=1, keepdims=True))
        try:
            solver.add_models(S[i:i + 1], model_ids=[m])
        except InputError:
            continue
        taken.append(m)
    return taken


def test_check_and_the_solver_agree_on_the_models_a_pass_refuses(monkeypatch):
    """`taskspace check` counts as unsolved only the models a pass's solver takes (sync._solvable); the solver's
    admission rule (one observed outcome at least, every value in [0, 1]) is stated once, in the solver package
    (indexer.solver.inputs.refusals), and check reads it from there: a model with a value out of range and one with no
    observed outcome are refused by both, and a change to the rule changes both. Before, sync restated the rule."""
    from types import SimpleNamespace

    from indexer import sync
    from indexer.solver import inputs

    nan = np.nan
    names = ["org/ok", "org/graded", "org/over", "org/under", "org/none", "org/one"]
    S = np.array([[0, 1, nan, 1], [0.25, 0.5, 1, nan], [0, 1.5, 1, 0], [nan, -0.1, nan, 1], [nan] * 4,
                  [nan, nan, 0, nan]], dtype=np.float32)

    class Outcomes:  # a store's load_outcomes: these rows, for the models asked (in the asked order)
        def load_outcomes(self, models):
            rows = [names.index(m) for m in models]
            return SimpleNamespace(models=list(models), scores=S[rows], benchmarks=["alpha", "alpha", "beta", "beta"])

    taken = _solver_takes(S, names)
    assert taken == ["org/ok", "org/graded", "org/one"]
    assert sync._solvable(Outcomes(), names)[0] == sorted(taken)
    assert sync._solvable(Outcomes(), names, chunk=2)[0] == sorted(taken)
    rule = inputs.refusals  # the rule changed in one place (a value of exactly 1 refused too): both follow

    def stricter(S, missing=None):
        out = rule(S, missing)
        for r in np.flatnonzero((np.asarray(S) == 1).any(axis=1)):
            out.setdefault(int(r), int(np.argmax(np.asarray(S)[r] == 1)))
        return out

    monkeypatch.setattr(inputs, "refusals", stricter)
    taken = _solver_takes(S, names)
    assert taken == ["org/one"]
    assert sync._solvable(Outcomes(), names)[0] == taken


def _alpha_indexed_then_beta_ingested(encoder, tmp_path, cli, seed: int, beta_models: list[str]) -> None:
    """A home indexed from an ``alpha`` source (org/a, org/b; 8 prompts), then `taskspace ingest` (no pass) of a
    ``beta`` source (6 new prompts) measuring ``beta_models``: results ingested since the last pass."""
    from helpers import TOPICS, index_sources, outcomes, write_source

    rng = np.random.default_rng(seed)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(8)]
    beta = [f"Write a Python function number {j} that sorts a list of {seed}-tuples" for j in range(6)]
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", alpha, outcomes(rng, ["org/a", "org/b"], 8))])
    store.close()
    vectors.close()
    write_source(tmp_path / "b", "beta", beta, outcomes(rng, beta_models, 6))
    rc, out, err = cli("ingest", str(tmp_path / "b"), "--no-metadata")
    assert rc == 0, (out, err)


def test_check_does_not_advise_reindex_for_model_drift_the_advised_pass_repairs(encoder, tmp_path, cli):
    """`taskspace ingest` of results that name an indexed model another way (`org--a`, an alias of `org/a`) and add a
    benchmark, without `taskspace index`: org/a's point is stale (its aliases changed) and org/a is unsolved (new
    outcomes). The advised `taskspace index` re-solves and pushes it, so check advises the pass and not "then run
    `taskspace reindex`" (after the pass, check is clean). Before, it added the reindex line (seen after
    `taskspace ingest ../shared/data/evalarena_code` on a home indexed from indexer/data/sample: three models). Model
    drift the pass does not repair (a point of no model in SQL) keeps the reindex line."""
    import json

    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import Point

    _alpha_indexed_then_beta_ingested(encoder, tmp_path, cli, 11, ["org--a", "org/c"])
    rc, out, err = cli("check", "--json")
    d = json.loads(out)["spaces"][0]
    assert rc == 1 and d["stale"].get("models") == ["org/a"] and "org/a" in d["unsolved"], out
    rc, out, err = cli("check")
    assert rc == 1 and "run `taskspace index`" in err, err
    assert "taskspace reindex`" not in err.replace("(`taskspace reindex` would", ""), err
    with VectorStore.from_settings() as vs:  # a point of no model SQL holds: no pass removes it
        dim = vs.dim(d["space"], "models")
        vs.upsert(d["space"], "models", [Point("org/gone", np.ones(dim, np.float32), {"digest": "x"})], dim=dim)
    rc, out, err = cli("check")
    assert rc == 1 and "extra models: 1: org/gone" in out and "then run `taskspace reindex`" in err, (out, err)
    with VectorStore.from_settings() as vs:  # a point of org/b (no new result) lost: the pass solves every model
        vs.delete(d["space"], "models", ["org/gone", "org/b"])  # (3 models, its calibration map fitted on 2)
    with open_store() as sql:
        from indexer.pipeline import solve_plan

        assert solve_plan(sql, sql.list_spaces()[0]).solves_all
    rc, out, err = cli("check")
    assert rc == 1 and "missing models: 1: org/b" in out and "taskspace reindex`" not in err.replace(
        "(`taskspace reindex` would", ""), (out, err)
    with open_store() as sql, VectorStore.from_settings() as vs:
        r = Indexer(sql, vs, encoder=encoder).run([SourceSpec(str(tmp_path / s)) for s in "ab"])
        assert r.status == "ok", r.errors
    rc, out, err = cli("check")
    assert rc == 0 and "clean" in out, (out, err)


def test_check_says_run_taskspace_index_once_naming_the_benchmarks_and_the_models(encoder, tmp_path, cli):
    """`taskspace ingest` of a new benchmark whose models include an indexed one, without `taskspace index`: check has
    benchmarks to index (`unindexed`) and models to solve (`unsolved`), and says "run `taskspace index`" on one line
    naming both. Before, it said it twice, a line for each."""
    _alpha_indexed_then_beta_ingested(encoder, tmp_path, cli, 13, ["org/a", "org/c"])
    rc, out, err = cli("check")
    assert rc == 1 and "unsolved models: 2: org/a, org/c" in out, (out, err)
    (line,) = [ln for ln in err.splitlines() if "run `taskspace index`" in ln]
    assert "benchmark beta" in line and "solve the 2 models" in line and "(org/a, org/c)" in line, err
    assert "taskspace reindex` to rebuild" not in err, err


def test_check_after_sources_drop_reports_the_models_left_without_results_until_a_pass_removes_them(encoder, tmp_path,
                                                                                                  cli):
    """`taskspace sources drop` of a source that held a model's every result: the model's vector and point stay (the
    next `taskspace index` removes them, "models removed 1"), and until then searches rank it. `check` names it
    (`resultless` in `--json`), advises `taskspace index` and is not clean, also after the `taskspace reindex` it used
    to advise alone (seen on the bundled sample: `sources drop`, then `check` said "extra benchmarks ... run
    `taskspace reindex`", and after that reindex "clean" with 25 models of no results still searched)."""
    import json

    from helpers import TOPICS, index_sources, outcomes
    from indexer.ingest import drop_source
    from indexer.pipeline import Indexer
    from indexer.store.sql import open_store

    rng = np.random.default_rng(17)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(8)]
    beta = [f"Write a Python function number {j} that merges two sorted lists" for j in range(6)]
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", alpha, outcomes(rng, ["org/a", "org/b"], 8)),
                                             (tmp_path / "b", "beta", beta, outcomes(rng, ["org/a", "org/c"], 6))])
    from indexer import sourcelist

    sourcelist.remove(Indexer(store, vectors, encoder=encoder).settings.sources_file, str(tmp_path / "b"))
    drop_source(str(tmp_path / "b"), store=store)  # `sources remove` + `sources drop`
    store.close()
    vectors.close()
    for step in ("check", "reindex"):  # before: clean once reindexed, org/c (no result left) still in every search
        if step == "reindex":
            assert cli("reindex")[0] == 0
        rc, out, err = cli("check")
        assert rc == 1 and "models without results: 1: org/c" in out, (step, out, err)
        (line,) = [ln for ln in err.splitlines() if "run `taskspace index`" in ln]
        assert "remove the 1 model whose results are no longer stored (org/c)" in line, err
        assert "taskspace reindex` to rebuild" not in err, err  # the pass rebuilds what the drop left
        rc, out, err = cli("check", "--json")
        d = json.loads(out)["spaces"][0]
        assert rc == 1 and d["resultless"] == ["org/c"] and d["n_resultless"] == 1 and not d["clean"], out
    with open_store() as sql, VectorStore.from_settings() as vs:
        r = Indexer(sql, vs, encoder=encoder).run()
        assert r.status == "ok" and r.counts["removed"] == 1, r.counts
    rc, out, err = cli("check")
    assert rc == 0 and "clean" in out, (out, err)


def test_check_names_the_models_the_solver_refuses_without_failing(encoder, tmp_path, cli):
    """Models whose stored outcomes no pass can solve (one with a value outside [0, 1], one with no observed outcome:
    the solver refuses them, every pass reports an item error): check names them, with why, as "not solvable" (a
    list of model and why in `--json`) and says to fix the source's values and ingest it again; it stays clean (exit 0)
    when nothing else drifted, as no pass or rebuild repairs them. Before, check said nothing of them."""
    import json

    from helpers import TOPICS, index_sources, outcomes

    rng = np.random.default_rng(17)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(8)]
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", alpha,
                                              outcomes(rng, ["org/a", "org/b", "org/c"], 8))])
    store.close()
    vectors.close()
    _unsolvable_outcomes()
    rc, out, err = cli("check")
    assert rc == 0 and "clean" in out, (out, err)
    space = json.loads(cli("check", "--json")[1])["spaces"][0]["space"]
    assert (f"not solvable in space {space}: 2: org/b (outcome 2 on benchmark alpha is outside [0, 1]), org/c (no "
            "observed outcome)" in out), out
    assert "fix the values" in err and "ingest it again" in err and "taskspace reindex" not in err, err
    rc, out, err = cli("check", "--json")
    d = json.loads(out)["spaces"][0]
    assert rc == 0 and d["clean"] and d["n_unsolvable"] == 2 and d["unsolved"] == [], out
    assert d["unsolvable"] == [{"model": "org/b", "why": "outcome 2 on benchmark alpha is outside [0, 1]"},
                               {"model": "org/c", "why": "no observed outcome"}], out


def _unsolvable_outcomes() -> None:
    """The stored outcomes (8 prompts) of org/b made 2 and org/c's NaN, each model's digest changed: outcomes no pass
    can solve (outside [0, 1]; none observed)."""
    from sqlalchemy import text

    from indexer.store.sql import open_store

    with open_store() as sql, sql.engine.begin() as conn:
        for key, value in (("org/b", 2.0), ("org/c", np.nan)):
            mid = conn.execute(text("select id from models where key = :k"), {"k": key}).scalar_one()
            blob = np.full(8, value, dtype="<f4").tobytes()
            conn.execute(text("update outcomes set scores = :s where model_id = :m"), {"s": blob, "m": mid})
            conn.execute(text("update models set outcomes_digest = :d where id = :m"), {"d": f"bad-{key}", "m": mid})


def test_check_names_a_model_the_solver_refuses_once_with_the_spaces_it_is_refused_in(encoder, tmp_path, cli,
                                                                                       monkeypatch):
    """A home of two spaces (the default method's pass, then TASKSPACE_METHOD=auto-mean's) whose models org/b and org/c
    no pass can solve: check lists each once, on one line naming both spaces. Before, each space listed them, so each
    model was named twice."""
    import json

    from helpers import TOPICS, outcomes, write_source

    rng = np.random.default_rng(23)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(8)]
    write_source(tmp_path / "a", "alpha", alpha, outcomes(rng, [f"org/{c}" for c in "abcdef"], 8))
    _index_with_method(encoder, monkeypatch, [tmp_path / "a"], None)
    _index_with_method(encoder, monkeypatch, [], "auto-mean")
    _unsolvable_outcomes()
    rc, out, err = cli("check", "--json")
    spaces = [d["space"] for d in json.loads(out)["spaces"]]
    assert len(spaces) == 2 and all(d["n_unsolvable"] == 2 for d in json.loads(out)["spaces"]), out
    rc, out, err = cli("check")
    assert rc == 0 and out.count("org/b") == 1 and out.count("org/c") == 1, (out, err)
    (line,) = [ln for ln in out.splitlines() if "not solvable" in ln]
    assert line == (f"not solvable in spaces {spaces[0]} and {spaces[1]}: 2: org/b (outcome 2 on benchmark alpha is "
                    "outside [0, 1]), org/c (no observed outcome)"), out
    assert err.count("fix the values of the models not solvable") == 1, err


def _index_with_method(encoder, monkeypatch, folders, method: str | None):
    """An indexing pass over ``folders`` with ``TASKSPACE_METHOD`` set to ``method`` (None: the default), which is
    unset again after it."""
    from indexer.config import reset_settings
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store

    if method is not None:
        monkeypatch.setenv("TASKSPACE_METHOD", method)
    reset_settings()
    try:
        with open_store() as sql, VectorStore.from_settings() as vs:
            r = Indexer(sql, vs, encoder=encoder).run([SourceSpec(str(f)) for f in folders])
            assert r.status == "ok", r.errors
    finally:
        monkeypatch.delenv("TASKSPACE_METHOD", raising=False)
        reset_settings()


def _two_spaces_then_beta(encoder, tmp_path, cli, monkeypatch, seed: int, beta_models: list[str]) -> None:
    """A home with two spaces over benchmark alpha (6 models; the default method's pass, then
    TASKSPACE_METHOD=auto-mean's), then benchmark beta (6 coding prompts, ``beta_models``) ingested without a pass."""
    from helpers import TOPICS, outcomes, write_source

    rng = np.random.default_rng(seed)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(8)]
    beta = [f"Write a Python function number {j} that merges two sorted lists" for j in range(6)]
    write_source(tmp_path / "a", "alpha", alpha, outcomes(rng, [f"org/{c}" for c in "abcdef"], 8))
    _index_with_method(encoder, monkeypatch, [tmp_path / "a"], None)
    _index_with_method(encoder, monkeypatch, [], "auto-mean")
    write_source(tmp_path / "b", "beta", beta, outcomes(rng, beta_models, 6))
    rc, out, err = cli("ingest", str(tmp_path / "b"), "--no-metadata")
    assert rc == 0, (out, err)


def test_check_advises_the_pass_of_another_space_for_its_benchmarks(encoder, tmp_path, cli, monkeypatch):
    """A home with two spaces (indexed with the default method, then with TASKSPACE_METHOD=auto-mean) and a new
    benchmark ingested without a pass: its prompts are missing from both spaces' index. `taskspace index` solves the
    configured space alone, so check advises it for that space and `TASKSPACE_METHOD=auto-mean taskspace index` for the
    other one (`indexed_by` in `--json`); after `taskspace index` that line alone stays (before, check advised
    `taskspace index` again after every pass, and discounted the other space's drift as that pass's to repair), and
    after the other space's pass check is clean."""
    import json

    _two_spaces_then_beta(encoder, tmp_path, cli, monkeypatch, 19, ["org/a", "org/g"])
    rc, out, err = cli("check", "--json")
    by = {d["space"]: d for d in json.loads(out)["spaces"]}
    assert rc == 1 and sorted(d["indexed_by"] for d in by.values()) == [
        "TASKSPACE_METHOD=auto-mean taskspace index", "taskspace index"], out
    other = next(n for n, d in by.items() if d["indexed_by"] != "taskspace index")
    rc, out, err = cli("check")
    assert rc == 1 and "run `taskspace index` to index the results" in err, err
    assert (f"run `TASKSPACE_METHOD=auto-mean taskspace index` (its pass solves space {other}; `taskspace index` "
            "solves the configured space alone) to index the results ingested since the last indexing pass "
            "(benchmark beta)") in err, err
    assert "taskspace reindex` to rebuild" not in err, err
    _index_with_method(encoder, monkeypatch, [tmp_path / "a", tmp_path / "b"], None)
    rc, out, err = cli("check")
    assert rc == 1 and f"space {other}: drift" in out and "missing prompts: 6" in out, (out, err)
    assert "run `taskspace index` to" not in err and "run `TASKSPACE_METHOD=auto-mean taskspace index`" in err, err
    assert "taskspace reindex` to rebuild" not in err, err
    _index_with_method(encoder, monkeypatch, [], "auto-mean")
    rc, out, err = cli("check")
    assert rc == 0 and "drift" not in out, (out, err)


def test_check_advises_taskspace_index_for_points_waiting_for_a_push(encoder, tmp_path, cli):
    """A model's Hub metadata written in SQL after its point was pushed (its point digest unknown: a license lowered, a
    fetch of the backlog): its point is stale and every indexing pass pushes it, so check advises `taskspace index`
    naming it (`unpushed` in `--json`), not `taskspace reindex` (check is clean after the pass alone). Before, it
    advised `taskspace reindex` only, a rebuild of every point. A point stale otherwise (its payload changed in the
    index: no pass pushes it) keeps "then run `taskspace reindex`"."""
    import json

    from helpers import TOPICS, index_sources, outcomes
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import Point

    rng = np.random.default_rng(23)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(8)]
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", alpha, outcomes(rng, ["org/a", "org/b"], 8))])
    store.upsert_models([{"key": "org/b", "license": "mit"}])
    store.close()
    vectors.close()
    rc, out, err = cli("check")
    assert rc == 1 and "stale models: 1: org/b" in out, (out, err)
    assert "run `taskspace index` to push the points of the 1 model" in err and "(org/b)" in err, err
    assert "taskspace reindex" not in err, err
    rc, out, err = cli("check", "--json")
    d = json.loads(out)["spaces"][0]
    assert rc == 1 and d["unpushed"] == ["org/b"] and d["unsolved"] == [], out
    with open_store() as sql, VectorStore.from_settings() as vs:
        r = Indexer(sql, vs, encoder=encoder).run([SourceSpec(str(tmp_path / "a"))])
        assert r.status == "ok" and r.counts["pushed"] == 1, r.counts
    rc, out, err = cli("check")
    assert rc == 0 and "clean" in out, (out, err)
    with open_store() as sql:
        sql.upsert_models([{"key": "org/b", "license": "apache-2.0"}])
    with VectorStore.from_settings() as vs:  # org/a's payload changed in the index (digest known): no pass pushes it
        (hit,) = vs.get(d["space"], "models", ["org/a"], with_vectors=True).values()
        vs.upsert(d["space"], "models", [Point("org/a", hit.vector, {**hit.payload, "digest": "x"})],
                  dim=len(hit.vector))
    rc, out, err = cli("check")
    assert rc == 1 and "stale models: 2: org/a, org/b" in out, (out, err)
    assert "run `taskspace index` to push the points of the 1 model" in err, err
    assert "then run `taskspace reindex`" in err, err


def test_check_leaves_to_reindex_the_benchmarks_of_a_space_no_pass_solves():
    """A space with benchmarks to index (`unindexed`, `uncomputed`) that no setting of this taskspace builds
    (``indexed_by`` None: a pulled space, an older method): check advises no pass for it and leaves its prompts and
    benchmarks drift to `taskspace reindex`; lines for several spaces' passes come in one order, the configured
    space's first."""
    from indexer.cli import _passes_advised
    from indexer.sync import Drift
    from indexer.sync import beyond_a_pass as _beyond_a_pass

    lost = Drift("s", missing={"prompts": ["h1"]}, extra={"benchmarks": ["b"]}, unindexed=["b"], uncomputed=["b"])
    assert _passes_advised([lost]) == {} and _beyond_a_pass(lost, {})
    commands = ["TASKSPACE_METHOD=auto taskspace index", "taskspace index", "TASKSPACE_METHOD=paper taskspace index"]
    drifts = [Drift(f"s{i}", missing={"prompts": ["h1"]}, unindexed=["b"], indexed_by=c)
              for i, c in enumerate(commands)]
    advised = _passes_advised(drifts)
    assert list(advised) == ["taskspace index", "TASKSPACE_METHOD=auto taskspace index",
                             "TASKSPACE_METHOD=paper taskspace index"], advised
    assert not any(_beyond_a_pass(d, advised) for d in drifts)
    assert _beyond_a_pass(drifts[0], {"taskspace index": "..."})  # another space's pass, not advised: reindex


def test_check_reports_a_calibration_map_an_older_taskspace_fitted_and_advises_taskspace_index(encoder, tmp_path,
                                                                                              cli):
    """A home whose calibration map predates the benchmarks' links (stamped with an older region estimator, as
    migration 0018 leaves a map stored before it): the next `taskspace index` fits it again (every model solved once)
    and says so; `check` reports it as drift (exit 1, `refit` in --json) and advises `taskspace index`, not
    `taskspace reindex` (a rebuild leaves the map). Before, check said clean. After the pass, check is clean."""
    import json

    from sqlalchemy import text

    from helpers import TOPICS, index_sources, outcomes
    from indexer import posterior
    from indexer.pipeline import Indexer

    rng = np.random.default_rng(12)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(16)]
    beta = [f"Write a Python function number {j} that sorts a list of integers" for j in range(16)]
    names = [f"org/m{k}" for k in range(8)]
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", alpha, outcomes(rng, names, 16)),
                                             (tmp_path / "b", "beta", beta, outcomes(rng, names, 16))])
    (space,) = store.list_spaces()
    cal = store.get_space_calibration(space.id)
    assert cal.folded and cal.region_var is not None and cal.region_estimator == posterior.REGION_ESTIMATOR
    with store.engine.begin() as conn:  # the map as migration 0018 leaves one stored before it
        conn.execute(text("UPDATE space_calibrations SET links = NULL, region_estimator = 2"))
    store.close()
    vectors.close()
    rc, out, err = cli("check")
    assert rc == 1 and "drift" in out and "without the benchmarks' links" in out, (out, err)
    assert "the next `taskspace index` fits it again" in out, out
    assert "run `taskspace index` to fit the calibration map of space" in err, err
    assert "taskspace reindex" not in err, err  # a rebuild from SQL leaves the map as it is
    rc, out, err = cli("check", "--json")
    (d,) = json.loads(out)["spaces"]
    assert rc == 1 and not d["clean"] and "without the benchmarks' links" in d["refit"], out
    from indexer.store.sql import open_store

    with open_store() as store, VectorStore.from_settings() as vs:
        r = Indexer(store, vs, encoder=encoder).run()
        assert r.status == "ok" and "without the benchmarks' links" in r.counts["calibration_refit"], r.counts
    rc, out, err = cli("check")
    assert rc == 0 and "clean" in out and "calibration" not in out + err, (out, err)
    assert json.loads(cli("check", "--json")[1])["spaces"][0]["refit"] is None


def test_check_after_reindex_reports_another_space_that_lacks_the_results_ingested_since_its_pass(
        encoder, tmp_path, cli, monkeypatch):
    """Two spaces (the default method's, then TASKSPACE_METHOD=auto-mean's), a new benchmark ingested, `taskspace
    index` (the configured space's pass) and `taskspace reindex`: the other space's index now matches its SQL, but its
    SQL lacks the new benchmark's vector and its models' new results (`taskspace spaces` shows it stale). check
    reports that space as drift, its models to solve (`unsolved`) and the benchmark (`unindexed`), and advises its own
    pass, `TASKSPACE_METHOD=auto-mean taskspace index`, not `taskspace index` (done) nor `taskspace reindex`; after
    that pass check is clean. Before, check said both spaces were clean."""
    import json

    _two_spaces_then_beta(encoder, tmp_path, cli, monkeypatch, 29, ["org/a", "org/b"])
    _index_with_method(encoder, monkeypatch, [tmp_path / "a", tmp_path / "b"], None)
    rc, out, err = cli("reindex")
    assert rc == 0, (out, err)
    rc, out, err = cli("check", "--json")
    by = {d["space"]: d for d in json.loads(out)["spaces"]}
    (other,) = [n for n, d in by.items() if not d["clean"]]
    d = by[other]
    assert rc == 1 and d["indexed_by"] == "TASKSPACE_METHOD=auto-mean taskspace index", out
    assert d["unsolved"] == ["org/a", "org/b"] and d["unindexed"] == ["beta"], d
    assert not any(d["counts"].values()), d  # the index matches SQL: the drift is the pass's to do
    rc, out, err = cli("check")
    assert rc == 1 and f"space {other}: drift" in out and "unsolved models: 2: org/a, org/b" in out, (out, err)
    assert (f"run `TASKSPACE_METHOD=auto-mean taskspace index` (its pass solves space {other}; `taskspace index` "
            "solves the configured space alone) to index the results ingested since the last indexing pass "
            "(benchmark beta)") in err and "solve the 2 models" in err, err
    assert "run `taskspace index`" not in err and "run `taskspace reindex`" not in err, err
    _index_with_method(encoder, monkeypatch, [], "auto-mean")
    rc, out, err = cli("check")
    assert rc == 0 and "drift" not in out, (out, err)


def test_a_point_written_with_a_count_of_0_is_pushed_again_after_migration_0020(store, vs, encoder, monkeypatch):
    """A point an older taskspace wrote holding 0 parameters (before 0 was no size in a point) kept it: its stored
    digest was the point's, so no pass pushed it and `taskspace check` found nothing. After migration 0020 (the count
    unknown in SQL, the digest forgotten) check names it stale and the push a pass makes (of ``unpushed_models``)
    writes it without a size; check is clean again."""
    from sqlalchemy import text

    from indexer import records, sync
    from indexer.store import sql_migrate as migrate

    space = fill(store, encoder)
    name = space_name(space)
    store.upsert_models([{"key": "org/gamma", "num_parameters": 7}])
    with store.engine.begin() as conn:  # the 0 an older taskspace stored (upsert_models now stores it as unknown)
        conn.execute(text("UPDATE models SET num_parameters = 0 WHERE key = 'org/gamma'"))
    monkeypatch.setattr(sync, "parameter_count", lambda n: n)  # the points as a taskspace before 5584b99 wrote them
    reindex(store, vs, encoder=encoder)
    monkeypatch.setattr(sync, "parameter_count", records.parameter_count)
    assert vs.get(name, "models", ["org/gamma"])["org/gamma"].payload["num_parameters"] == 0
    assert store.unpushed_models(space.id) == [] and only(check(store, vs)).clean  # what no pass pushed, nor check saw
    migrate.downgrade_url(store.url, "0019")
    migrate.upgrade_url(store.url)
    assert store.get_model("org/gamma").num_parameters is None
    assert only(check(store, vs)).stale["models"] == ["org/gamma"]
    assert store.unpushed_models(space.id) == ["org/gamma"]
    assert push_models(store, vs, space.id, store.unpushed_models(space.id)) == 1
    assert vs.get(name, "models", ["org/gamma"])["org/gamma"].payload["num_parameters"] is None
    assert only(check(store, vs)).clean and store.unpushed_models(space.id) == []


def test_check_reports_the_configured_space_unbuilt_in_a_home_of_an_older_method_or_of_no_space(
        encoder, tmp_path, taskspace_home, cli):
    """A home whose only space an older taskspace's method built (`hyperplane`, which no setting builds now) and a
    home with results ingested and no space at all: check says the configured space is not built, what searches take
    meanwhile (the older space, or nothing: every search fails) and `taskspace index`, exit 1 (`configured_unbuilt` in
    `--json`); `--space NAME` checks that space alone. Before, both said clean (or "no embedding spaces"), exit 0."""
    import json

    from helpers import TOPICS, outcomes, write_source
    from indexer.store.sql import open_store

    rng = np.random.default_rng(31)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(6)]
    write_source(tmp_path / "a", "alpha", alpha, outcomes(rng, ["org/a", "org/b"], 6))
    rc, out, err = cli("ingest", str(tmp_path / "a"), "--no-metadata")
    assert rc == 0, (out, err)
    rc, out, err = cli("check")
    assert rc == 1 and "SQL holds results but no embedding space, so every search fails meanwhile" in out, (out, err)
    assert "configured space (encoder " in out and "run `taskspace index` to build it" in err, (out, err)
    with open_store() as sql:
        space = fill(sql, encoder)  # method hyperplane, an older taskspace's
    assert cli("reindex")[0] == 0
    name = space_name(space)
    rc, out, err = cli("check")
    assert rc == 1 and f"space {name}: clean" in out, (out, err)
    assert (f"not built; searches without --space take {name} (method hyperplane, which no setting of this taskspace "
            "builds any more) meanwhile") in out, out
    assert "run `taskspace index` to build it from the stored results" in err, err
    got = json.loads(cli("check", "--json")[1])["configured_unbuilt"]
    assert got["searched"] == name and got["older_method"] == "hyperplane" and got["command"] == "taskspace index", got
    assert cli("check", "--space", name)[0] == 0
    # a Python caller gets the verdict the command prints (before, the configured space was the CLI's word alone)
    from indexer.sync import check_report

    with open_store() as sql, VectorStore.from_settings() as vs:
        report, alone = check_report(sql, vs), check_report(sql, vs, name)
    assert report.configured_unbuilt == got and not report.clean and report.running is None, report
    assert report.as_dict() == json.loads(cli("check", "--json")[1])
    assert alone.clean and alone.configured_unbuilt is None, alone


def test_check_reports_a_space_built_from_another_encoders_embedding_cache(encoder, taskspace_home, cli):
    """A space of the configured encoder whose vectors are wider than that encoder's own embeddings make (built from
    another encoder's 768-dim vectors in MiniLM's cache file, before `taskspace index` skipped such a file): check
    names its width and the one expected (`foreign_dim` in `--json`), advises `taskspace index` and then `taskspace
    spaces drop NAME`, exit 1; once a space of the same settings has the right width, the drop alone. Before, clean,
    while every search of a new prompt failed on it."""
    import json

    from indexer import represent
    from indexer.spaces import configured_spec
    from indexer.store.sql import open_store

    spec = configured_spec()
    with open_store() as sql:
        bad = sql.get_or_create_space(encoder.id, represent.index_dim(768, spec.params), spec.lam, spec.eps,
                                      spec.method, spec.params)
    name, want = space_name(bad), represent.index_dim(encoder.dim, spec.params)
    rc, out, err = cli("check")
    assert rc == 1 and f"space {name}: drift" in out, (out, err)
    assert f"  vectors: {bad.dim} wide, where its encoder's own embeddings under its method make {want}" in out, out
    assert (f"run `taskspace index` to build the space again with the encoder's own vectors, then run `taskspace "
            f"spaces drop {name}`") in err, err
    (d,) = json.loads(cli("check", "--json")[1])["spaces"]
    assert d["foreign_dim"] == want and d["dim"] == bad.dim and d["rebuild"] == "taskspace index", d
    with open_store() as sql:
        good = sql.get_or_create_space(encoder.id, want, spec.lam, spec.eps, spec.method, spec.params)
    rc, out, err = cli("check")
    assert rc == 1 and f"space {space_name(good)}: clean" in out and f"space {name}: drift" in out, (out, err)
    assert f"run `taskspace spaces drop {name}`" in err and "build the space again" not in err, err
