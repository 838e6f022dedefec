"""Living with several embedding spaces (indexer/spaces.py): `taskspace spaces` lists each one's encoder, method,
dimension, models, staleness and which is the default; `taskspace spaces drop` removes one from SQL and the vector
index together (crash-safe, idempotent, the default refused unless forced, a dry run first); the HTTP API takes a
`space` as the CLI does. A home with two spaces is built as a user gets one: indexed with the default method, then
with TASKSPACE_METHOD=auto (a second space from the stored results, the same encoder)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import pytest

from helpers import outcomes, write_source

TOPICS = ["chemistry", "poetry", "law", "algebra"]
PROMPT = "Question 3 on law: what is item 3 of alpha?"


def _sources(tmp_path):
    rng = np.random.default_rng(3)
    alpha = [f"Question {j} on {TOPICS[j % 4]}: what is item {j} of alpha?" for j in range(14)]
    beta = [f"Write a Python function number {j} that sorts a list" for j in range(10)]
    write_source(tmp_path / "a", "alpha", alpha, outcomes(rng, ["org/a", "org/b", "org/c", "org/d"], 14))
    write_source(tmp_path / "b", "beta", beta, outcomes(rng, ["org/a", "org/c", "org/e"], 10))
    return [tmp_path / "a", tmp_path / "b"]


def _index(store, vectors, encoder, folders, method=None, monkeypatch=None):
    from indexer.config import reset_settings
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec

    if method is not None:
        monkeypatch.setenv("TASKSPACE_METHOD", method)
        reset_settings()
    r = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(f)) for f in folders])
    assert r.status == "ok", r.errors


@pytest.fixture
def two_spaces(tmp_path, encoder, store, monkeypatch):
    """(store, vectors, auto-mc space, auto space) in this test's home, SQL on SQLite and PostgreSQL; the configured
    method is auto-mc again after (its space is the default)."""
    from indexer.config import reset_settings
    from indexer.store.vectors import VectorStore

    vectors = VectorStore.from_settings()
    folders = _sources(tmp_path)
    _index(store, vectors, encoder, folders)
    _index(store, vectors, encoder, folders, "auto", monkeypatch)
    monkeypatch.delenv("TASKSPACE_METHOD")
    reset_settings()
    mc, auto = store.list_spaces()
    assert (mc.method, auto.method) == ("auto-mc", "auto")
    try:
        yield store, vectors, mc, auto
    finally:
        vectors.close()


def test_drop_space_removes_its_sql_rows_and_its_index_together(two_spaces):
    """`drop_space` of a space that is not the default: a dry run lists its SQL rows and collections and changes
    nothing; the drop removes every row SQL holds of it and its three collections, the other space stays whole (its
    searches answer as before); a second drop finds nothing and succeeds (idempotent). Before, no command removed a
    space: the only way was deleting rows by hand and leaving its collections in the index."""
    from indexer.find import find_models
    from indexer.space import space_name
    from indexer.spaces import drop_space
    from indexer.sync import check

    store, vectors, mc, auto = two_spaces
    name = space_name(auto)
    before = find_models(PROMPT, k=3, store=store, vectors=vectors).to_dict()
    dry = drop_space(store, vectors, name, dry_run=True)
    assert dry.dry_run and not dry.default and dry.sql["model_vectors"] == 5 and dry.sql["spaces"] == 1
    assert sorted(dry.collections.values()) == sorted([5, 2, 24]), dry.collections
    assert [s.id for s in store.list_spaces()] == [mc.id, auto.id] and name in vectors.spaces()

    res = drop_space(store, vectors, name)
    assert res.sql == dry.sql and res.collections == dry.collections
    assert [s.id for s in store.list_spaces()] == [mc.id]
    assert name not in vectors.spaces() and vectors.physical_collections(name) == []
    assert store.load_model_vectors(auto.id) == [] and store.get_space_calibration(auto.id) is None
    assert all(d.clean for d in check(store, vectors)), [d.as_dict() for d in check(store, vectors)]
    assert find_models(PROMPT, k=3, store=store, vectors=vectors).to_dict() == before
    assert store.counts()["outcomes"] > 0  # the results stay

    again = drop_space(store, vectors, name)
    assert again.nothing and again.sql == {} and again.collections == {}


def test_drop_space_refuses_the_default_space_unless_forced(two_spaces):
    """The default space (the one searches take without --space) is refused with an error naming it, the way to force
    it and the other spaces, nothing removed; `force=True` drops it, and searches then take the other space."""
    from indexer.errors import ConfigError
    from indexer.find import find_models
    from indexer.space import space_name
    from indexer.spaces import drop_space

    store, vectors, mc, auto = two_spaces
    name = space_name(mc)
    with pytest.raises(ConfigError) as err:
        drop_space(store, vectors, name)
    msg = str(err.value)
    assert f"space {name}" in msg and "is the default space" in msg and f"taskspace spaces drop {name} --force" in msg
    assert space_name(auto) in msg
    assert len(store.list_spaces()) == 2 and name in vectors.spaces()
    assert drop_space(store, vectors, name, dry_run=True).default  # a dry run says it, refusing nothing
    drop_space(store, vectors, name, force=True)
    assert [s.id for s in store.list_spaces()] == [auto.id] and name not in vectors.spaces()
    got = find_models(PROMPT, k=3, store=store, vectors=vectors).to_dict()
    assert got["space"]["name"] == space_name(auto)


def test_a_drop_killed_between_the_index_and_sql_is_finished_by_the_same_command(two_spaces, monkeypatch):
    """Killed after the index part and before SQL's transaction: SQL still names the space (nothing half-deleted in
    SQL), `check` reports its index missing, and the same drop again finishes it. Left the other way (collections
    whose SQL rows are gone: a copied folder, an older drop), `drop_space` of the name removes them."""
    from indexer.space import space_name
    from indexer.spaces import drop_space
    from indexer.sync import check

    store, vectors, mc, auto = two_spaces
    name = space_name(auto)
    rows = store.space_rows(auto.id)

    def killed(space_id):
        raise KeyboardInterrupt

    monkeypatch.setattr(type(store), "delete_space", lambda self, sid: killed(sid))
    with pytest.raises(KeyboardInterrupt):
        drop_space(store, vectors, name)
    monkeypatch.undo()
    assert [s.id for s in store.list_spaces()] == [mc.id, auto.id] and store.space_rows(auto.id) == rows
    assert not next(d for d in check(store, vectors) if d.space == name).clean
    res = drop_space(store, vectors, name)
    assert res.sql["model_vectors"] == rows["model_vectors"] and res.collections == {}
    assert [s.id for s in store.list_spaces()] == [mc.id] and name not in vectors.spaces()

    # collections no SQL row names: removed by name
    from indexer.store.vectors import Point

    vectors.upsert("ghost-0123456789", "models", [Point("m", np.ones(4, np.float32), {"key": "m"})], dim=4)
    assert drop_space(store, vectors, "ghost-0123456789").collections
    assert "ghost-0123456789" not in vectors.spaces()


def test_an_unknown_space_name_is_an_error_naming_the_spaces(two_spaces):
    """A name that is no space (and not of a space name's form) is an UnknownSpaceError naming the spaces, as
    `--space` of search is (the name being an argument here, `space 'x'`, not `--space 'x'`); nothing removed."""
    from indexer.errors import UnknownSpaceError
    from indexer.space import space_name
    from indexer.spaces import drop_space

    store, vectors, mc, auto = two_spaces
    with pytest.raises(UnknownSpaceError, match=r"^space 'minilm' is not a known space; spaces in SQL: "
                                                + space_name(mc)):
        drop_space(store, vectors, "minilm")
    assert len(store.list_spaces()) == 2


def test_an_unknown_space_tells_a_python_caller_the_call_that_lists_them_and_a_command_the_command(two_spaces):
    """`drop_space` of an unknown name tells a Python caller what it can call to list the spaces
    (`indexer.spaces.describe_spaces(sql)`: the library has no `indexer.list_spaces()`), a command (`spaces drop`)
    `taskspace spaces`, as `indexer.find.lister` words the model and benchmark listings; before, "(`taskspace spaces`
    lists them)" to both."""
    from indexer.errors import CLI, UnknownSpaceError
    from indexer.spaces import drop_space

    store, vectors, mc, auto = two_spaces
    with pytest.raises(UnknownSpaceError) as got:
        drop_space(store, vectors, "minilm")
    assert str(got.value).endswith("(indexer.spaces.describe_spaces(sql) lists them)"), str(got.value)
    assert "taskspace spaces" not in str(got.value), str(got.value)
    token = CLI.set(True)
    try:
        with pytest.raises(UnknownSpaceError) as got:
            drop_space(store, vectors, "minilm")
    finally:
        CLI.reset(token)
    assert str(got.value).endswith("(`taskspace spaces` lists them)"), str(got.value)


def test_drop_space_takes_a_numpy_id_and_says_a_wrong_type_is_an_input_error_naming_space(two_spaces):
    """`drop_space` takes a numpy integer id (read from an array) as the id it holds; None, a list or a bool is the
    InputError naming `space`, and an unknown name's UnknownSpaceError carries `.item == "space"`; nothing removed.
    Before, `str(space)` was looked up: `drop_space(sql, vectors, None)` said 'space "None" is not a known space'."""
    import numpy as np

    from indexer.errors import InputError, UnknownSpaceError
    from indexer.space import space_name
    from indexer.spaces import drop_space

    store, vectors, mc, auto = two_spaces
    assert drop_space(store, vectors, np.int64(auto.id), dry_run=True).space == space_name(auto)
    for bad in (None, [auto.id], True):
        with pytest.raises(InputError, match="^space must be a space's name or id") as err:
            drop_space(store, vectors, bad)
        assert err.value.item == "space"
    with pytest.raises(UnknownSpaceError) as unknown:
        drop_space(store, vectors, "minilm")
    assert unknown.value.item == "space"
    assert len(store.list_spaces()) == 2


def test_describe_spaces_gives_each_ones_encoder_method_dim_models_staleness_and_the_default(two_spaces, tmp_path,
                                                                                            encoder):
    """`describe_spaces`: per space its encoder, method, width, models and benchmarks with a vector, how many models
    are stale, which is the default and which the configured; after new results only the configured space is
    re-solved by a pass, so the other one's stale count says how many of its models are behind."""
    from indexer.space import space_name
    from indexer.spaces import describe_spaces

    store, vectors, mc, auto = two_spaces
    got = {i.name: i for i in describe_spaces(store, vectors)}
    a, b = got[space_name(mc)], got[space_name(auto)]
    assert (a.method, b.method) == ("auto-mc", "auto") and a.encoder == b.encoder == encoder.id
    assert (a.dim, b.dim) == (mc.dim, auto.dim) and a.dim != b.dim
    assert (a.models, a.benchmarks, a.stale, b.models, b.stale) == (5, 2, 0, 5, 0)
    assert (a.default, a.configured, b.default, b.configured) == (True, True, False, False)
    assert a.index == {"models": 5, "benchmarks": 2, "prompts": 24}
    # new results for org/e: the pass re-solves the configured space; the auto space is one model behind
    rng = np.random.default_rng(9)
    write_source(tmp_path / "c", "gamma", [f"Translate sentence {j} into French" for j in range(8)],
                 outcomes(rng, ["org/e"], 8))
    _index(store, vectors, encoder, [tmp_path / "a", tmp_path / "b", tmp_path / "c"])
    got = {i.name: i for i in describe_spaces(store, vectors)}
    assert got[space_name(mc)].stale == 0 and got[space_name(auto)].stale == 1


def test_get_spaces_says_how_many_models_of_each_space_are_stale(two_spaces, tmp_path, encoder):
    """`GET /v1/spaces` gives each space's `stale` (models whose results changed since their vector was solved, or that
    have none any more: `taskspace spaces`' count; null for a pulled read-only space), so a client choosing a space
    sees that another encoder's or method's space lags behind the results; /openapi.json declares it with the other
    fields, and every field an answer holds is declared. Before, the server computed each space's staleness (a
    query per space) and dropped it from the answer."""
    from fastapi.testclient import TestClient

    from indexer.serve import Service, create_app
    from indexer.space import space_name
    from indexer.spaces import describe_spaces

    store, vectors, mc, auto = two_spaces
    rng = np.random.default_rng(9)  # new results for org/e: the pass re-solves the configured space only
    write_source(tmp_path / "c", "gamma", [f"Translate sentence {j} into French" for j in range(8)],
                 outcomes(rng, ["org/e"], 8))
    _index(store, vectors, encoder, [tmp_path / "a", tmp_path / "b", tmp_path / "c"])
    with TestClient(create_app(Service(store=store, vectors=vectors, encoder=encoder))) as client:
        listed = client.get("/v1/spaces").json()["spaces"]
        declared = client.get("/openapi.json").json()["components"]["schemas"]["Space"]
    assert [(s["name"], s["stale"]) for s in listed] == [(space_name(mc), 0), (space_name(auto), 1)]
    assert [s["stale"] for s in listed] == [i.stale for i in describe_spaces(store)]
    assert set(listed[0]) == set(declared["properties"]), (set(listed[0]) ^ set(declared["properties"]))
    assert "stale" in declared["required"]


def _run(*args):
    import os
    from pathlib import Path

    return subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True,
                          env=dict(os.environ, HF_HUB_OFFLINE="1", COLUMNS="200"), cwd=Path(__file__).parents[1])


@pytest.fixture
def home_with_two_spaces(tmp_path, encoder, monkeypatch):
    """This test's TASKSPACE_HOME (SQLite, Qdrant Edge) with an auto-mc and an auto space; stores closed."""
    from indexer.config import reset_settings
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    folders = _sources(tmp_path)
    with open_store() as store, VectorStore.from_settings() as vectors:
        _index(store, vectors, encoder, folders)
        _index(store, vectors, encoder, folders, "auto", monkeypatch)
        spaces = store.list_spaces()
    monkeypatch.delenv("TASKSPACE_METHOD")
    reset_settings()
    return spaces


def test_the_spaces_command_lists_each_space_and_marks_the_default(home_with_two_spaces, encoder, monkeypatch):
    """`taskspace spaces` (and `spaces list`, `--json`: `describe_spaces`) prints per space its name, id, encoder,
    method, dimension, models, benchmarks and staleness, and marks the default and the configured one; under
    TASKSPACE_METHOD=auto the other one is both. Before, no command listed the spaces: `taskspace spaces` was "No such
    command", and a user learnt their names only from an error of `--space`."""
    from indexer.space import space_name

    mc, auto = home_with_two_spaces
    res = _run("spaces")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == f"{space_name(mc)} [default, configured]" and lines[3] == space_name(auto), res.stdout
    assert lines[1] == (f"  id {mc.id}  encoder {encoder.id}  method auto-mc  dim {mc.dim}  lambda {mc.lam:g}  "
                        f"eps {mc.eps:g}")
    assert lines[2] == "  models 5  benchmarks 2  stale: none" and f"method auto  dim {auto.dim}" in lines[4]
    got = json.loads(_run("spaces", "list", "--json").stdout)
    assert [(s["name"], s["method"], s["dim"], s["models"], s["stale"], s["default"]) for s in got] == [
        (space_name(mc), "auto-mc", mc.dim, 5, 0, True), (space_name(auto), "auto", auto.dim, 5, 0, False)]
    monkeypatch.setenv("TASKSPACE_METHOD", "auto")
    swapped = json.loads(_run("spaces", "--json").stdout)
    assert [(s["default"], s["configured"]) for s in swapped] == [(False, False), (True, True)]


def test_every_surface_lists_each_space_with_its_lambda_and_eps(home_with_two_spaces, encoder):
    """`taskspace spaces` (text), `taskspace spaces --json` and `GET /v1/spaces` give each space's lambda and eps, the
    same values (the two settings, with encoder and method, that make a space: TASKSPACE_LAMBDA=3 builds another).
    Before, `GET /v1/spaces` and the text listing lacked them, so two spaces of one encoder and method told apart only
    by their lambda looked alike there."""
    from fastapi.testclient import TestClient

    from indexer.serve import Service, create_app

    mc, auto = home_with_two_spaces
    listed = json.loads(_run("spaces", "--json").stdout)
    text = _run("spaces").stdout
    for rec, js in zip((mc, auto), listed):
        assert (js["lam"], js["eps"]) == (rec.lam, rec.eps), js
        assert f"dim {rec.dim}  lambda {rec.lam:g}  eps {rec.eps:g}" in text, text
    svc = Service(encoder=encoder)
    with TestClient(create_app(svc), raise_server_exceptions=False) as client:
        served = client.get("/v1/spaces").json()["spaces"]
        schema = client.get("/openapi.json").json()["components"]["schemas"]["Space"]["properties"]
    assert [(s["name"], s["lam"], s["eps"]) for s in served] == [(s["name"], s["lam"], s["eps"]) for s in listed]
    assert {"lam", "eps"} <= set(schema), schema
    assert all(set(s) == {k: None for k in schema}.keys() for s in served), served


def test_spaces_drop_dry_run_refusal_and_drop_from_the_command_line(home_with_two_spaces):
    """`taskspace spaces drop NAME --dry-run` lists the SQL rows and collections it would remove and changes nothing;
    the default space is one `error:` line naming `--force` (exit 2); the other is dropped and a second drop says
    there is nothing to drop (exit 0). Before, there was no such command ("No such command 'spaces'")."""
    from indexer.space import space_name

    mc, auto = home_with_two_spaces
    name = space_name(auto)
    dry = _run("spaces", "drop", name, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith(f"space {name} (") and "would remove" in dry.stdout and "5 model_vectors" in dry.stdout
    assert dry.stdout.count("index collection ts_") == 3 and "nothing was changed" in dry.stdout
    refused = _run("spaces", "drop", space_name(mc))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith(f"error: space {space_name(mc)} (") and "--force" in refused.stderr
    done = _run("spaces", "drop", name, "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["sql"]["spaces"] == 1, done.stderr
    assert [s["name"] for s in json.loads(_run("spaces", "--json").stdout)] == [space_name(mc)]
    again = _run("spaces", "drop", name)
    assert again.returncode == 0 and "nothing to drop" in again.stdout, again.stderr


def test_the_http_api_queries_the_space_it_is_given_as_the_cli_does(home_with_two_spaces, encoder):
    """`POST /v1/find` takes `space` and `GET /v1/models`, `/v1/models/{id}` take `?space=` (index name, SQL id or
    encoder name, as `--space`), each answering what the library answers for that space, and /openapi.json declares
    them; a space that is no space is a 404 naming the field `space` and the spaces (the CLI's error, exit 2), one
    that is not a string a 422. Before, the API could query only the default space: `space` was an unknown field
    (422) and `?space=` an unknown query parameter."""
    from fastapi.testclient import TestClient

    from indexer.browse import list_models, model_detail
    from indexer.find import find_models
    from indexer.serve import Service, create_app
    from indexer.space import encoder_name, space_name

    mc, auto = home_with_two_spaces
    svc = Service(encoder=encoder)
    with TestClient(create_app(svc), raise_server_exceptions=False) as client:
        kw = dict(store=svc.store, vectors=svc.vectors)
        for sp in (space_name(auto), str(auto.id), space_name(mc)):
            r = client.post("/v1/find", json={"prompt": PROMPT, "k": 3, "space": sp})
            assert r.status_code == 200, r.text
            want = find_models(PROMPT, k=3, space=sp, **kw).to_dict()
            assert r.json() == json.loads(json.dumps(want))
        # the id as GET /v1/spaces lists it, a JSON integer (before: 422 "not a number"), answers as its name does
        by_id = client.post("/v1/find", json={"prompt": PROMPT, "k": 3, "space": auto.id})
        assert by_id.status_code == 200, by_id.text
        assert by_id.json() == client.post("/v1/find", json={"prompt": PROMPT, "k": 3, "space": space_name(auto)}).json()
        got = client.post("/v1/find", json={"prompt": PROMPT, "k": 3, "space": space_name(auto)}).json()
        assert got["space"]["name"] == space_name(auto) and got["space"]["method"] == "auto"
        assert client.post("/v1/find", json={"prompt": PROMPT}).json()["space"]["name"] == space_name(mc)
        page = client.get("/v1/models", params={"space": space_name(auto), "limit": 3}).json()
        assert page["models"] == json.loads(json.dumps(list_models(limit=3, space=space_name(auto), **kw)))
        one = client.get("/v1/models/org/a", params={"space": space_name(auto)})
        assert one.status_code == 200, one.text
        assert one.json() == json.loads(json.dumps(model_detail("org/a", space=space_name(auto), **kw)))
        assert one.json() != client.get("/v1/models/org/a").json()  # the other space's predictions
        for r in (client.post("/v1/find", json={"prompt": PROMPT, "space": "nope"}),
                  client.get("/v1/models", params={"space": "nope"}), client.get("/v1/models/org/a?space=nope")):
            assert r.status_code == 404, r.text
            err = r.json()["error"]
            assert err["code"] == "not_found" and err["field"] == "space", err
            assert err["message"].startswith("space 'nope' is not a known space; spaces in SQL: ") and \
                space_name(auto) in err["message"], err
        # an encoder's name that both spaces share: the field the client sent, as it sent it (not `space=`)
        enc = encoder_name(mc.encoder)
        err = client.post("/v1/find", json={"prompt": PROMPT, "space": enc}).json()["error"]
        assert err["field"] == "space" and err["message"].startswith(f"space '{enc}' matches several spaces"), err
        listed = client.get("/v1/spaces").json()["spaces"]  # what `taskspace spaces --json` lists, as the page shows it
        assert [(s["name"], s["id"], s["method"], s["default"], s["models"]) for s in listed] == \
            [(space_name(mc), mc.id, "auto-mc", True, 5), (space_name(auto), auto.id, "auto", False, 5)]
        bad = client.post("/v1/find", json={"prompt": PROMPT, "space": ["x"]})
        assert bad.status_code == 422 and bad.json()["error"]["field"] == "space", bad.text
        # an empty space (a form's empty choice) is a 422 in the body and as ?space= alike (before: ?space= was a 404,
        # "space '' is not a known space")
        for r in (client.post("/v1/find", json={"prompt": PROMPT, "space": ""}), client.get("/v1/models?space="),
                  client.get("/v1/models/org/a?space=%20")):
            err = r.json()["error"]
            assert r.status_code == 422 and err["field"] == "space" and ("not an empty string" in err["message"] or
                                                                         err["message"].startswith("space is empty: ")), r.text
        for bad in (True, 2.5, ["x"]):
            r = client.post("/v1/find", json={"prompt": PROMPT, "space": bad})
            assert r.status_code == 422 and r.json()["error"]["field"] == "space", r.text
        doc = client.get("/openapi.json").json()
        body = doc["paths"]["/v1/find"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert "space" in body["properties"]
        for path in ("/v1/models", "/v1/models/{model_id}"):
            assert "space" in [p["name"] for p in doc["paths"][path]["get"]["parameters"]], path


def test_models_and_model_take_the_space_option(home_with_two_spaces):
    """`taskspace models --space NAME` and `taskspace model ID --space NAME` answer for that space (as `search
    --space` and the HTTP `?space=`); before, both had no such option ("No such option: --space") and listed the
    default space alone."""
    from indexer.browse import model_detail
    from indexer.query import close_cached
    from indexer.space import space_name

    mc, auto = home_with_two_spaces
    res = _run("model", "org/a", "--space", space_name(auto), "--json")
    assert res.returncode == 0, res.stderr
    try:
        want = model_detail("org/a", space=space_name(auto))
    finally:
        close_cached()
    assert json.loads(res.stdout) == json.loads(json.dumps(want))
    listed = _run("models", "--space", str(auto.id), "--json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)["models"]) == 5, listed.stderr
    bad = _run("models", "--space", "nope")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --space 'nope' is not a known space"), bad.stderr


def test_an_unknown_or_shared_space_name_names_the_argument_of_its_caller_and_the_matching_spaces(home_with_two_spaces):
    """A space name that fits no space: the library's error names its argument, `space='nope'` (find_models,
    models_page), the CLI's its option, `--space 'nope'`; an encoder's name that two methods' spaces share lists those
    two by index name and method, so the user can pick one. Before, the library said `--space 'nope'` (an option of a
    command a library user never ran), and the shared name listed every space by name and encoder, the method that
    tells them apart nowhere."""
    from indexer.browse import models_page
    from indexer.errors import UnknownSpaceError
    from indexer.find import find_models
    from indexer.query import close_cached
    from indexer.space import encoder_name, space_name

    mc, auto = home_with_two_spaces
    enc = encoder_name(mc.encoder)
    try:
        for call in (lambda: find_models(PROMPT, k=3, space="nope"), lambda: models_page(space="nope")):
            with pytest.raises(UnknownSpaceError, match=r"^space='nope' is not a known space; spaces in SQL: ") as err:
                call()
            assert err.value.item == "space" and "--space" not in str(err.value)
        with pytest.raises(UnknownSpaceError, match=rf"^space='{enc}' matches several spaces") as err:
            find_models(PROMPT, k=3, space=enc)
    finally:
        close_cached()
    assert (f"{space_name(mc)} (id {mc.id}, method auto-mc), {space_name(auto)} (id {auto.id}, method auto); name "
            "one by its index name or id") in str(err.value), err.value
    bad = _run("search", PROMPT, "--space", enc)
    assert bad.returncode == 2, bad.stderr
    (line,) = bad.stderr.splitlines()
    assert line.startswith(f"error: --space '{enc}' matches several spaces") and line.endswith(
        f"{space_name(mc)} (id {mc.id}, method auto-mc), {space_name(auto)} (id {auto.id}, method auto); name one by "
        "its index name or id"), line


def test_the_spaces_are_listed_from_sql_beside_a_server_that_holds_the_index(home_with_two_spaces, tmp_path):
    """`taskspace spaces` while `taskspace serve` holds the embedded index: the spaces are listed from SQL (exit 0;
    `--json` gives `index` null, unchecked) with a note naming the process that holds the index; `spaces drop` is
    told to stop the server first. Before, both failed with exit 6 and "send the query to it instead (POST
    /v1/find, GET /v1/models, or its search page)", queries the server has none of for listing or dropping spaces."""
    import os
    import textwrap

    from indexer.config import get_settings
    from indexer.space import space_name

    mc, auto = home_with_two_spaces
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time
        from indexer.store.vectors import VectorStore
        path, sys.argv = sys.argv[1], ["/usr/bin/taskspace", "serve"]
        vs = VectorStore(path=path)
        print("ready", flush=True)
        time.sleep(60)
    """), str(get_settings().qdrant_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        assert holder.stdout.readline().strip() == "ready", holder.stderr.read()
        listed = _run("spaces")
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.startswith(space_name(mc) + " [default, configured]\n") and space_name(auto) in listed.stdout
        (note,) = listed.stderr.splitlines()
        assert note == (f"note: another taskspace process is using the index at {get_settings().qdrant_path} (pid "
                        f"{holder.pid}: taskspace serve): the spaces are listed from SQL alone, their vector-index "
                        "collections unchecked"), note
        as_json = _run("spaces", "--json")
        assert as_json.returncode == 0 and [(i["name"], i["models"], i["index"]) for i in json.loads(as_json.stdout)] \
            == [(space_name(mc), 5, None), (space_name(auto), 5, None)], as_json.stdout
        drop = _run("spaces", "drop", space_name(auto))
        assert drop.returncode == 6 and "send the query" not in drop.stderr and "stop it first" in drop.stderr, drop.stderr
    finally:
        holder.kill()
        holder.wait()
    assert len(json.loads(_run("spaces", "--json").stdout)[1]["index"]) == 3  # the server gone: checked again


def test_a_configured_encoder_that_cannot_be_loaded_does_not_stop_searches_of_the_spaces_there(two_spaces, caplog,
                                                                                            monkeypatch):
    """TASKSPACE_ENCODER naming an encoder that cannot be loaded here (a typo, a package not installed) in a home with
    two spaces: a search without --space takes the newest space with the warning naming the configured encoder, as it
    does in a home with one space, and `describe_spaces` lists both, the newest as the default. Before, every search
    without --space failed (exit 5, "cannot load encoder ..."), though no space needed that encoder, and so did the
    listing."""
    import logging

    from indexer.config import reset_settings
    from indexer.find import find_models
    from indexer.space import space_name
    from indexer.spaces import describe_spaces

    from indexer import query

    store, vectors, mc, auto = two_spaces
    query._WARNED_ENCODER.clear()  # said once per process and (encoder, space): the other database's run said it
    monkeypatch.setenv("TASKSPACE_ENCODER", "/nonexistent/encoder")
    reset_settings()
    with caplog.at_level(logging.WARNING, logger="indexer.query"):
        got = find_models(PROMPT, k=3, store=store, vectors=vectors).to_dict()
    assert got["space"]["name"] == space_name(auto)
    # one clause (before: "... /nonexistent/encoder (which cannot be loaded here) (TASKSPACE_ENCODER); ...")
    assert any("no indexed space was built with the configured encoder /nonexistent/encoder (TASKSPACE_ENCODER), which "
               "cannot be loaded here; searching the newest space" in r.getMessage() for r in caplog.records), caplog.text
    listed = describe_spaces(store, vectors)
    assert [(i.name, i.default, i.configured) for i in listed] == [(space_name(mc), False, False),
                                                                   (space_name(auto), True, False)]


def test_dropping_a_pulled_space_removes_what_the_pull_brought(store, encoder, tmp_path):
    """A space pulled into another home (`taskspace pull` of a `publish --dry-run` folder; that home's SQL on SQLite
    and PostgreSQL), dropped: its rows, its pulled marker and the models and benchmarks only it brought go, so the home
    is as empty as before the pull; the refusal of the default does not promise that `taskspace index` builds it again
    (a pulled space has no results here to build from). Before, the refusal said it would."""
    from indexer.errors import ConfigError
    from indexer.publish import publish, pull
    from indexer.space import space_name
    from indexer.spaces import drop_space
    from indexer.store.sql import Store
    from indexer.store.vectors import VectorStore

    with Store(f"sqlite:///{tmp_path / 'publisher.db'}", upgrade=True) as pub, \
            VectorStore(path=tmp_path / "publisher-index") as pvec:
        _index(pub, pvec, encoder, _sources(tmp_path))
        publish("tester/recs", dry_run=tmp_path / "out", store=pub)
    with VectorStore.from_settings() as vectors:
        pull(str(tmp_path / "out"), store=store, vectors=vectors)
        (rec,) = store.list_spaces()
        with pytest.raises(ConfigError) as err:
            drop_space(store, vectors, space_name(rec))
        assert "--force" in str(err.value) and "builds it again" not in str(err.value)
        res = drop_space(store, vectors, space_name(rec), force=True)
        assert res.sql["sources"] == 1 and res.sql["models"] == 5 and res.sql["benchmarks"] == 2, res.sql
        assert {k: v for k, v in store.counts().items() if v} == {}, store.counts()
        assert vectors.spaces() == []

def test_check_says_to_drop_an_index_space_sql_does_not_hold_not_to_reindex(home_with_two_spaces):
    """A space the vector index holds and SQL does not (its SQL rows removed, as a drop killed the other way round or a
    copied folder leaves it): `taskspace check` reports it and says `taskspace spaces drop NAME` removes it, not
    `taskspace reindex`, which rebuilds SQL's spaces only and left it (check drifted again after it); the drop it
    names makes check clean. Before, check said "run `taskspace reindex` to rebuild the index from SQL", forever."""
    from indexer.space import space_name
    from indexer.store.sql import open_store

    mc, auto = home_with_two_spaces
    name = space_name(auto)
    with open_store() as store:
        store.delete_space(auto.id)
    res = _run("check")
    assert res.returncode == 1 and f"index space {name} has no embedding space in SQL" in res.stdout, res.stdout
    assert f"run `taskspace spaces drop {name}`" in res.stderr and "taskspace reindex` to rebuild" not in res.stderr, \
        res.stderr
    assert json.loads(_run("check", "--json").stdout)["spaces"][1]["in_sql"] is False
    assert _run("spaces", "drop", name).returncode == 0
    again = _run("check")
    assert again.returncode == 0 and again.stdout == f"space {space_name(mc)}: clean\n", again.stdout + again.stderr


def test_a_stale_space_of_another_encoder_is_said_to_be_resolved_by_the_command_that_does(two_spaces, caplog):
    """A space of the configured method on another encoder (indexed under TASKSPACE_ENCODER=all-mpnet-base-v2, then
    the setting back to MiniLM) whose models are stale: `publish` warns that no pass updates it and names
    `TASKSPACE_ENCODER=NAME taskspace index`, which re-solves it; `describe_spaces` gives the same command (and
    `TASKSPACE_METHOD=auto taskspace index` for the auto space). Before, publish said "run `taskspace index` first",
    whose pass updates the configured encoder's space alone and left this one as stale as it was."""
    import logging

    from indexer.publish import _warn_stale
    from indexer.space import space_name, space_params
    from indexer.spaces import describe_spaces

    store, vectors, mc, auto = two_spaces
    other = store.get_or_create_space("org/enc-b@1", mc.dim, mc.lam, mc.eps, method="auto-mc",
                                      params=space_params("auto-mc"))
    with caplog.at_level(logging.WARNING, logger="indexer.publish"):
        _warn_stale(store, other)
    assert (f"publish: space {space_name(other)} holds 5 models whose vector is missing or older than their "
            f"results") in caplog.text, caplog.text
    assert ("it was built with encoder org/enc-b@1, not the configured " in caplog.text and
            "(TASKSPACE_ENCODER), so no indexing pass updates it: `TASKSPACE_ENCODER=org/enc-b taskspace index` "
            "re-solves it first" in caplog.text), caplog.text
    assert "run `taskspace index` first" not in caplog.text
    got = {i.name: i for i in describe_spaces(store, vectors)}
    assert got[space_name(other)].stale == 5 and not got[space_name(other)].configured
    assert got[space_name(other)].update == "TASKSPACE_ENCODER=org/enc-b taskspace index"
    assert got[space_name(auto)].update == "TASKSPACE_METHOD=auto taskspace index"
    assert got[space_name(mc)].update == "taskspace index"


def test_a_models_strengths_name_the_space_they_are_of(home_with_two_spaces):
    """`taskspace model ID` (and `model_detail`, `GET /v1/models/{id}`) names the space its predicted strengths come
    from, the default or the one `--space` gives: in a home with two spaces the table's title says "predicted in space
    NAME" and the answer carries `space`. Before, nothing said which space's vectors the strengths were of."""
    from indexer.space import space_name

    mc, auto = home_with_two_spaces
    for args, sp in (((), mc), (("--space", space_name(auto)), auto)):
        res = _run("model", "org/a", *args)
        assert res.returncode == 0, res.stderr
        said = " ".join(res.stdout.split())  # the table's title wraps at its width
        assert f"Strongest relative to the other models (predicted in space {space_name(sp)})" in said, res.stdout
        assert json.loads(_run("model", "org/a", *args, "--json").stdout)["space"] == space_name(sp)


def test_a_space_whose_encoder_cannot_be_loaded_is_named_with_what_to_do(two_spaces):
    """A query of a space whose encoder cannot be loaded here (`--space NAME` of an mpnet space on a machine without
    its packages, a pulled space of another encoder): an encoder error naming the space and its encoder, saying to
    install it or query another space (`taskspace spaces`), without the loader's advice to set TASKSPACE_ENCODER (which
    changes nothing for that space). Before, "cannot load encoder ...; set TASKSPACE_ENCODER to a local folder or
    all-MiniLM-L6-v2", with no word of the space."""
    from indexer.errors import EncoderError
    from indexer.find import find_models
    from indexer.space import space_encoder, space_name, space_params

    store, vectors, mc, auto = two_spaces
    other = store.get_or_create_space("/no/such/encoder@1", mc.dim, mc.lam, mc.eps, method="auto-mc",
                                      params=space_params("auto-mc"))
    for call in (lambda: space_encoder(other), lambda: find_models(PROMPT, space=space_name(other), store=store,
                                                                     vectors=vectors)):
        with pytest.raises(EncoderError) as err:
            call()
        msg = str(err.value)
        assert msg.startswith(f"space {space_name(other)} needs its encoder /no/such/encoder, which cannot be loaded "
                              "here: "), msg
        assert msg.endswith("install that encoder to query this space, or query another (`taskspace spaces` lists "
                            "them)") and "set TASKSPACE_ENCODER" not in msg, msg


def test_a_503_for_an_encoder_that_failed_to_load_says_when_it_is_tried_again(two_spaces, encoder, monkeypatch):
    """A query (`"space"` of `POST /v1/find`) of a space whose encoder failed to load (a Hub id, offline: a real failed
    load) is a 503 whose `Retry-After` says when the load is tried again (indexer.encoder.RETRY_FAILED_LOAD_SECONDS,
    60 s, counting down: an earlier query gets the same error at once); before, no Retry-After, so a client could
    only guess, and a retry within the minute was bound to fail."""
    from fastapi.testclient import TestClient

    import indexer.encoder
    from indexer.serve import Service, create_app
    from indexer.space import space_name, space_params

    store, vectors, mc, auto = two_spaces
    monkeypatch.setattr(indexer.encoder, "_ENCODERS", {})  # this test's shared encoders only
    other = store.get_or_create_space("org/nope@1234", mc.dim, mc.lam, mc.eps, method="auto-mc",
                                      params=space_params("auto-mc"))
    with TestClient(create_app(Service(store=store, vectors=vectors, encoder=encoder))) as client:
        waits = []
        for _ in range(2):
            r = client.post("/v1/find", json={"prompt": PROMPT, "space": space_name(other)})
            assert r.status_code == 503 and r.json()["error"]["code"] == "unavailable", r.text
            assert "needs its encoder org/nope, which cannot be loaded here" in r.json()["error"]["message"], r.text
            waits.append(int(r.headers["retry-after"]))
            time.sleep(1.1)
        assert 55 <= waits[0] <= 60 and 1 <= waits[1] < waits[0], waits
        ok = client.post("/v1/find", json={"prompt": PROMPT})  # the other spaces answer meanwhile, with no such header
        assert ok.status_code == 200 and "retry-after" not in ok.headers


def test_a_configured_encoder_that_cannot_load_is_tried_once_not_on_every_query(home_with_two_spaces, encoder,
                                                                                monkeypatch):
    """A server whose TASKSPACE_ENCODER names a model it cannot load (here a Hub id, offline), on a home with two
    spaces: each query without `space` asks which space is the configured one, so for that encoder's id; the load is
    tried once, later queries answer at once from the newest space (as the first did) without trying it again
    (indexer.encoder.RETRY_FAILED_LOAD_SECONDS). Before, every such query tried the load again (Hub requests when
    online) and logged the attempt."""
    import sentence_transformers
    from fastapi.testclient import TestClient

    from indexer.config import reset_settings
    from indexer.serve import Service, create_app
    from indexer.space import space_name

    mc, auto = home_with_two_spaces
    real, tried = sentence_transformers.SentenceTransformer, []

    def loading(name, *args, **kwargs):
        if "org/nope" in str(name):
            tried.append(name)
            raise OSError("org/nope is not a local folder and is not a valid model identifier")
        return real(name, *args, **kwargs)

    import indexer.encoder

    monkeypatch.setattr(indexer.encoder, "_ENCODERS", {})  # this test's shared encoders only
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", loading)
    monkeypatch.setenv("TASKSPACE_ENCODER", "org/nope")
    reset_settings()
    with TestClient(create_app(Service(encoder=encoder)), raise_server_exceptions=False) as client:
        for _ in range(4):
            r = client.post("/v1/find", json={"prompt": PROMPT, "k": 2})
            assert r.status_code == 200, r.text
            assert r.json()["space"]["name"] == space_name(auto)  # the newest: the configured encoder built neither
    assert len(tried) == 1, tried


def test_the_command_that_re_solves_a_space_of_another_lambda_or_eps_names_them(store, encoder):
    """A space of the paper method built under TASKSPACE_LAMBDA=3 (and one under TASKSPACE_EPS=0.5): `taskspace spaces`
    (`update`, and the stale note) names the command whose pass re-solves it, with the lambda (eps) it was built with;
    before, no command: "no setting of this taskspace builds it: no pass updates it", though
    `TASKSPACE_METHOD=paper TASKSPACE_LAMBDA=3 taskspace index` does. The configured space's stays `taskspace index`."""
    from indexer.config import get_settings
    from indexer.space import configured
    from indexer.spaces import update_command

    settings = get_settings()
    paper = configured(settings, encoder=encoder.id, method="paper")
    lam3 = store.get_or_create_space(encoder.id, paper.dim or 384, 3.0, 0.0, method="paper", params=dict(paper.params))
    eps = store.get_or_create_space(encoder.id, paper.dim or 384, 1.0, 0.5, method="paper", params=dict(paper.params))
    assert update_command(lam3, settings) == "TASKSPACE_METHOD=paper TASKSPACE_LAMBDA=3 taskspace index"
    assert update_command(eps, settings) == "TASKSPACE_METHOD=paper TASKSPACE_EPS=0.5 taskspace index"
    mine = configured(settings, encoder=encoder.id)
    here = store.get_or_create_space(encoder.id, 11, mine.lam, mine.eps, method=mine.method, params=dict(mine.params))
    assert update_command(here, settings) == "taskspace index"


def test_the_command_that_re_solves_a_space_names_its_lambda_exactly(store, encoder):
    """A space built under TASKSPACE_LAMBDA=0.1234567 (TASKSPACE_EPS=0.00012345678): the command that re-solves it
    sets the value it was built with, which builds it again; before, 6 digits (``:g``), ``TASKSPACE_LAMBDA=0.123457
    taskspace index``, whose pass builds another space."""
    from indexer.config import get_settings
    from indexer.space import configured
    from indexer.spaces import update_command

    settings = get_settings()
    paper = configured(settings, encoder=encoder.id, method="paper")
    odd = store.get_or_create_space(encoder.id, paper.dim or 384, 0.1234567, 0.00012345678, method="paper",
                                    params=dict(paper.params))
    assert update_command(odd, settings) == ("TASKSPACE_METHOD=paper TASKSPACE_LAMBDA=0.1234567 "
                                             "TASKSPACE_EPS=0.00012345678 taskspace index")


def test_the_refused_drop_of_the_default_names_the_settings_that_make_another_the_default(store, encoder, tmp_path):
    """`taskspace spaces drop` of the default space without --force: the refusal names, for another space built under
    TASKSPACE_METHOD=paper TASKSPACE_LAMBDA=3, those settings, which make it the default; before, only
    "TASKSPACE_ENCODER / TASKSPACE_METHOD", though the method alone builds (and makes default) another space."""
    from indexer.config import get_settings
    from indexer.errors import ConfigError
    from indexer.space import configured, space_name
    from indexer.spaces import drop_space
    from indexer.store.vectors import VectorStore

    settings = get_settings()
    mine = configured(settings, encoder=encoder.id)
    here = store.get_or_create_space(encoder.id, 11, mine.lam, mine.eps, method=mine.method, params=dict(mine.params))
    paper = configured(settings, encoder=encoder.id, method="paper")
    lam3 = store.get_or_create_space(encoder.id, 384, 3.0, 0.0, method="paper", params=dict(paper.params))
    with VectorStore(path=tmp_path / "index") as vectors, pytest.raises(ConfigError) as got:
        drop_space(store, vectors, space_name(here))
    assert f"{space_name(lam3)}: TASKSPACE_METHOD=paper TASKSPACE_LAMBDA=3" in str(got.value), got.value


def test_check_says_the_configured_space_is_not_built_and_the_command_that_builds_it(home_with_two_spaces):
    """A home whose configured space (auto-mc here) was dropped, another (auto) left: `taskspace check` said "clean",
    exit 0, while every search warned that the configured space is not indexed. Now it says the configured space is
    not built, which space searches take meanwhile and `taskspace index` builds it (exit 1); `--json` gives it as
    `configured_unbuilt`. With `--space NAME` (that space only) it is not looked at."""
    from indexer.space import space_name

    mc, auto = home_with_two_spaces
    assert _run("check").returncode == 0
    assert _run("spaces", "drop", space_name(mc), "--force").returncode == 0
    res = _run("check")
    assert res.returncode == 1, (res.stdout, res.stderr)
    assert f"space {space_name(auto)}: clean" in res.stdout
    assert "configured space (encoder " in res.stdout and "method auto-mc" in res.stdout, res.stdout
    assert f"not built; searches without --space take {space_name(auto)} meanwhile" in res.stdout, res.stdout
    assert "run `taskspace index` to build it from the stored results" in res.stderr, res.stderr
    got = json.loads(_run("check", "--json").stdout)
    assert got["clean"] is False and got["configured_unbuilt"]["command"] == "taskspace index", got
    assert _run("check", "--space", space_name(auto)).returncode == 0
