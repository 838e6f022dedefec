"""taskspace publish / pull: a small real sample indexed into one home, published to the local Hub server (the real
huggingface_hub client: create_repo, preupload, NDJSON commit), pulled into a fresh home through the real client,
and a dozen queries compared exactly; the same files through --dry-run and a folder pull; the card's example run
against the files; licences, tokens, bad records, encoder and dimension refusals, read-only pulled spaces."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from indexer import dataset
from indexer.config import reset_settings
from indexer.errors import ConfigError, DimensionError, EncoderError, GatedRepoError, InputError, ReadOnlyError
from indexer.pipeline import Indexer
from indexer.publish import licence_of, publish, pull
from indexer.query import find_models
from indexer.sourcelist import SourceSpec
from indexer.store.sql import open_store
from indexer.store.vectors import VectorStore

SAMPLE = Path(__file__).resolve().parents[1] / "indexer" / "data" / "sample"
CATEGORIES = ("mmlu_pro/biology", "mmlu_pro/law", "mmlu_pro/math")
WRITE, READ = "hf_test_write_token_123", "hf_test_read_token_456"
LLAMA, MISTRAL = "Meta-Llama-3-8B", "Mistral-7B-v0.1"  # as the sample names them (stored under their Hub ids)


def _key(store, name: str) -> str:
    """The key a source's model name is stored under (model_aliases)."""
    return store.resolve_aliases([name]).get(name, name)


def _subset(folder: Path) -> list[str]:
    """3 MMLU-Pro categories x 30 prompts x 25 models of the bundled sample (with its PROVENANCE.md): the prompts
    left out are returned as queries the index has not seen."""
    folder.mkdir(parents=True)
    keep, unseen = set(), []
    with open(SAMPLE / "prompts.jsonl") as f, open(folder / "prompts.jsonl", "w") as out:
        for line in f:
            row = json.loads(line)
            if row["benchmark"] in CATEGORIES:
                keep.add(row["prompt_id"])
                out.write(line)
            elif len(unseen) < 6 and len(unseen) < 1 + len(keep) // 10:
                unseen.append(row["text"])
    with open(SAMPLE / "outcomes.csv") as f, open(folder / "outcomes.csv", "w") as out:
        out.write(next(f))
        out.writelines(line for line in f if line.split(",")[1] in keep)
    shutil.copy(SAMPLE / "PROVENANCE.md", folder / "PROVENANCE.md")
    return unseen


def _home(tmp_path, monkeypatch, name: str) -> None:
    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / name))
    reset_settings()


@pytest.fixture
def bent(monkeypatch):
    """The calibration's bend (indexer.posterior.fit_bend) on the publisher's few held-out cells (2,250): its
    thresholds lowered, so that the records carry knots. Named before ``publisher`` so it applies to its index."""
    from indexer import posterior

    monkeypatch.setattr(posterior, "BEND_MIN_CELLS", 500)
    monkeypatch.setattr(posterior, "BEND_CELLS_PER_KNOT", 400)


@pytest.fixture
def publisher(tmp_path, monkeypatch, encoder):
    """Home A with the indexed subset (and Hub metadata for two models, to check filters survive)."""
    _home(tmp_path, monkeypatch, "home_a")
    unseen = _subset(tmp_path / "sample")
    store, vectors = open_store(), VectorStore.from_settings()
    Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "sample"))])
    store.upsert_models([{"key": _key(store, LLAMA), "license": "llama3", "num_parameters": 8_000_000_000},
                         {"key": _key(store, MISTRAL), "license": "apache-2.0", "num_parameters": 7_000_000_000}])
    from indexer import sync

    sync.push_models(store, vectors, store.list_spaces()[0].id)
    yield store, vectors, unseen
    vectors.close()
    store.close()


def _queries(store, unseen: list[str]) -> list[dict]:
    texts = store.prompt_texts(store.benchmark_prompts(CATEGORIES[0])[:3] + store.benchmark_prompts(CATEGORIES[2])[:1])
    out = [{"prompts": [t]} for t in unseen[:4] + texts[:3]]  # unseen and indexed prompts with options
    out += [{"benchmark": b} for b in CATEGORIES]
    out += [{"prompts": unseen[:2]}, {"prompts": [texts[3]], "rank": "lcb"}]
    # questions without options: filled from the 50 nearest indexed prompts (the published prompt rows)
    out += [{"prompts": [unseen[4].split("\nA.")[0]]}, {"prompts": ["Write a Python function that reverses a list."]}]
    out += [{"benchmark": CATEGORIES[1], "filters": {"license": ["apache-2.0", "llama3"]}}]
    return out


def _answers(store, vectors, queries) -> list[list[tuple]]:
    res = []
    for q in queries:
        kw = dict(q)
        got = find_models(kw.pop("prompts", None), top=8, store=store, vectors=vectors, **kw)
        res.append([(m.model, m.score, m.probability, m.low, m.high, m.variance) for m in got])
    return res


def test_publish_to_the_hub_then_pull_gives_the_same_answers(bent, publisher, hub_server, tmp_path, monkeypatch,
                                                             encoder):
    store_a, vectors_a, unseen = publisher
    cal_a = store_a.get_space_calibration(store_a.list_spaces()[0].id)
    assert cal_a.knots is not None and cal_a.lam_cap is not None  # published and pulled too (intervals compared below)
    hub_server.tokens = {WRITE: "write", READ: "read"}
    monkeypatch.setenv("HF_TOKEN", WRITE)
    res = publish("tester/taskspace-records", store=store_a)
    assert res.commit and len(hub_server.commits) == 1
    n = len(store_a.model_vector_keys(store_a.list_spaces()[0].id))
    assert hub_server.commits[0]["summary"] == f"taskspace publish: {n} model records added, 0 changed, 0 removed (1 space)"
    # nothing changed: no commit
    again = publish("tester/taskspace-records", store=store_a)
    assert again.commit is None and len(hub_server.commits) == 1
    # the dry run writes exactly the committed files
    dry = publish("tester/taskspace-records", store=store_a, dry_run=tmp_path / "dry")
    repo = hub_server.root / "datasets" / "tester" / "taskspace-records"
    on_hub = {p.relative_to(repo).as_posix(): p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    written = {p.relative_to(tmp_path / "dry").as_posix(): p.read_bytes() for p in (tmp_path / "dry").rglob("*") if p.is_file()}
    assert written == on_hub and sorted(written) == dry.files
    queries = _queries(store_a, unseen)
    assert len(queries) == 15
    want = _answers(store_a, vectors_a, queries)
    assert all(len(ans) == 8 for ans in want[:-1]) and len(want[-1]) == 2  # the filter keeps two models
    # a fresh home pulls through the real client (at the commit) and answers the same, exactly
    _home(tmp_path, monkeypatch, "home_b")
    monkeypatch.delenv("HF_TOKEN")
    got_pull = pull(f"hub:tester/taskspace-records@{res.commit}")
    assert got_pull.spaces[0]["models"] == n and got_pull.spaces[0]["indexed"]["prompts"] == 90
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        assert not store_b.has_outcomes() and store_b.list_sources()[0].kind == "pulled"  # no raw results here
        got = _answers(store_b, vectors_b, queries)
        assert got == want
        assert all(np.isfinite(r[2]) and np.isfinite(r[5]) for ans in got for r in ans)  # calibrated, with variance
        # read-only until raw results are ingested
        (sp,) = store_b.list_spaces()
        assert store_b.is_read_only(sp.id)
        with pytest.raises(ReadOnlyError, match="read-only until raw results are ingested"):
            store_b.delete_model_vectors(sp.id, [_key(store_b, MISTRAL)])
        from indexer.sync import check

        assert all(d.clean for d in check(store_b, vectors_b))
    finally:
        vectors_b.close()
        store_b.close()
    # an index pass on the pulled home leaves the pulled space alone
    from indexer.pipeline import run_index

    report = run_index()
    assert report.counts.get("read_only") and report.status == "ok"
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        assert _answers(store_b, vectors_b, queries[:3]) == want[:3]
    finally:
        vectors_b.close()
        store_b.close()
    # the same files pulled from the dry-run folder into a third home
    from indexer.find import find_models as find

    ranked = lambda res: [(r["model"], r["probability"], r["interval"]) for r in res["results"]]  # noqa: E731
    want_find = ranked(find(prompts=queries[0]["prompts"], k=8, store=store_a, vectors=vectors_a).to_dict())
    _home(tmp_path, monkeypatch, "home_c")
    pull(str(tmp_path / "dry"))
    store_c, vectors_c = open_store(), VectorStore.from_settings()
    try:
        assert _answers(store_c, vectors_c, queries) == want
    finally:
        vectors_c.close()
        store_c.close()
    # and `taskspace serve` answers from it at once: ready, the same ranking and probabilities, the page
    from fastapi.testclient import TestClient

    from indexer.serve import Service, create_app

    with TestClient(create_app(Service(encoder=encoder))) as client:
        assert client.get("/readyz").status_code == 200
        got = client.post("/v1/find", json={"prompts": queries[0]["prompts"], "k": 8})
        assert got.status_code == 200 and ranked(got.json()) == want_find and len(want_find) == 8
        assert client.get("/").status_code == 200


def test_republish_counts_changes_and_removals(publisher, hub_server, tmp_path, monkeypatch):
    store_a, vectors_a, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    publish("tester/recs", store=store_a)
    (sp,) = store_a.list_spaces()
    store_a.upsert_models([{"key": _key(store_a, MISTRAL), "license": "mit"}])  # a changed record
    store_a.delete_model_vectors(sp.id, [_key(store_a, LLAMA)])  # a removed one
    res = publish("tester/recs", store=store_a)
    assert res.message == "taskspace publish: 0 model records added, 1 changed, 1 removed (1 space)"
    assert hub_server.commits[-1]["summary"] == res.message and len(hub_server.commits) == 2
    # the earlier commit still resolves (pull @REV, through the real client) and holds the removed record
    old = hub_server.commits[0]["sha"]
    assert old != hub_server.commits[1]["sha"]
    _home(tmp_path, monkeypatch, "home_b")
    pull(f"hub:tester/recs@{old}")
    store_b = open_store()
    try:
        (sp_b,) = store_b.list_spaces()
        keys = store_b.model_vector_keys(sp_b.id)
        assert _key(store_b, LLAMA) in keys and len(keys) == len(store_a.model_vector_keys(sp.id)) + 1
        assert store_b.get_model(_key(store_b, MISTRAL)).license == "apache-2.0"
        assert _key(store_b, LLAMA) == _key(store_a, LLAMA) != LLAMA  # the source's name came along as an alias
        assert store_b.space_origin(sp_b.id) == f"hub:tester/recs@{old}"[:128]
    finally:
        store_b.close()


def test_a_pull_of_records_lacking_models_an_earlier_pull_brought_says_how_many_it_removed(publisher, tmp_path,
                                                                                          monkeypatch, capsys):
    """Pulling records of a space that hold fewer models than the earlier pull of it here (an older revision, or
    the publisher removed some) says how many of the models the space held are gone: the line of `taskspace pull`
    and `models_removed` in its JSON (0 on a first pull, and on the same records again). Before, found pulling
    `hub:ORG/NAME@OLD` of 25 models over the 147 of its newer revision: "25 models, 14 benchmark vectors from
    ...", the 122 removed without a word."""
    from helpers import run_cli

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d1")
    (sp,) = store_a.list_spaces()
    store_a.delete_model_vectors(sp.id, [_key(store_a, LLAMA), _key(store_a, MISTRAL)])
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d2")
    _home(tmp_path, monkeypatch, "home_b")
    assert pull(str(tmp_path / "d1")).spaces[0]["models_removed"] == 0
    assert pull(str(tmp_path / "d1")).spaces[0]["models_removed"] == 0
    code, out, err = run_cli(capsys, "pull", str(tmp_path / "d2"))
    assert code == 0 and "23 models" in out, (out, err)
    assert "2 models the space held here are not in these records and were removed" in out, out
    code, out, err = run_cli(capsys, "pull", str(tmp_path / "d1"), "--json")
    assert code == 0 and json.loads(out)["spaces"][0]["models_removed"] == 0, out


def test_a_users_own_parquet_under_models_is_deleted_and_said_so_not_counted_as_removed_records(publisher, hub_server,
                                                                                                  monkeypatch):
    """A file under models/ that no published space names (the user's own copy of the records) is deleted, as
    models/*.parquet is managed; before, its rows were counted as removed model records ("0 added, 0 changed, 25
    removed" when no record was removed)."""
    from indexer.hub import HubClient

    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    first = publish("tester/recs", store=store_a)
    client = HubClient()
    snap = client.repo_snapshot("tester/recs")
    root = client.download(snap, [f for f in first.files if f.startswith("models/")])
    mine = next(root / f for f in first.files if f.startswith("models/"))
    client.commit("tester/recs", {"models/mine.parquet": mine.read_bytes()}, [], "my copy", parent=snap.sha)
    res = publish("tester/recs", store=store_a)
    assert (res.added, res.changed, res.removed) == (0, 0, 0) and res.deleted == ["models/mine.parquet"]
    assert res.message == ("taskspace publish: 0 model records added, 0 changed, 0 removed (1 space); deleted "
                           "models/mine.parquet, which no published space names (models/*.parquet is taskspace's)")
    assert hub_server.commits[-1]["summary"] == res.message


def test_a_republish_over_records_without_a_newer_column_counts_only_the_records_that_differ(publisher, hub_server,
                                                                                             monkeypatch):
    """Records the previous release published (no `num_parameters_from` column), published again by this one from the
    same home: the model file is rewritten (it gains the column), its records whose new column is null and the rest
    the same count as unchanged, and the summary says once that the files gain the column; a record that really
    differs (a licence) is counted. Before, every record counted as changed ('0 added, N changed')."""
    import pyarrow.parquet as pq

    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    publish("tester/recs", store=store_a)
    (f,) = (hub_server.root / "datasets" / "tester" / "recs" / "models").glob("*.parquet")
    t = pq.read_table(f)  # what the previous release published: the same records without the column
    assert t.column("num_parameters_from").null_count == t.num_rows  # the premise: null in every record
    pq.write_table(t.drop_columns(["num_parameters_from"]), f)
    res = publish("tester/recs", store=store_a)
    assert res.commit is not None and res.files == [f"models/{f.name}"]
    assert res.message == ("taskspace publish: 0 model records added, 0 changed, 0 removed (1 space); the model "
                           "files gain the column num_parameters_from, which the records published before lack")
    assert hub_server.commits[-1]["summary"] == res.message
    pq.write_table(pq.read_table(f).drop_columns(["num_parameters_from"]), f)
    store_a.upsert_models([{"key": _key(store_a, MISTRAL), "license": "mit"}])  # one record really differs
    res = publish("tester/recs", store=store_a)
    assert res.message.startswith("taskspace publish: 0 model records added, 1 changed, 0 removed (1 space); ")
    assert res.message.count("num_parameters_from") == 1
    assert publish("tester/recs", store=store_a).commit is None  # nothing changed since: no commit, as before


def test_a_republish_says_how_many_changed_records_were_only_solved_again(publisher, hub_server, monkeypatch):
    """Records published, then solved again to the same values (an upgraded home's first pass fits its calibration map
    again, every model solved once: only `computed_at` is new): the republish counts them changed, as they are, and
    says once how many of them differ only in that, beside a record that really changed (a licence). Before, the
    summary said every record changed and nothing said why."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    publish("tester/recs", store=store_a)
    (f,) = (hub_server.root / "datasets" / "tester" / "recs" / "models").glob("*.parquet")
    t = pq.read_table(f)  # as published before the models were solved again
    i = t.column_names.index("computed_at")
    pq.write_table(t.set_column(i, "computed_at", pa.array(["2026-12-01T00:00:00+00:00"] * t.num_rows)), f)
    store_a.upsert_models([{"key": _key(store_a, MISTRAL), "license": "mit"}])  # and one really changed
    res = publish("tester/recs", store=store_a)
    n = t.num_rows
    assert res.message == (f"taskspace publish: 0 model records added, {n} changed, 0 removed (1 space); {n - 1} "
                           "of the changed differ only in computed_at (solved again to the same values)")
    assert publish("tester/recs", store=store_a).commit is None


def test_token_missing_or_read_only_is_one_line_and_never_shown(publisher, hub_server, monkeypatch, capfd):
    store_a, _, _ = publisher
    hub_server.tokens = {WRITE: "write", READ: "read"}
    with pytest.raises(ConfigError, match=r"needs a Hugging Face token.*hf auth login"):
        publish("tester/recs", store=store_a)
    monkeypatch.setenv("HF_TOKEN", READ)
    with pytest.raises(GatedRepoError, match="read-only") as err:
        publish("tester/recs", store=store_a)
    assert READ not in str(err.value) and "\n" not in str(err.value)
    assert not hub_server.commits and not (hub_server.root / "datasets" / "tester" / "recs").exists()
    # through the CLI: exit code 4, one line, the token nowhere in the output (with -v logging)
    out = subprocess.run([sys.executable, "-m", "indexer.cli", "-v", "publish", "tester/recs"], capture_output=True,
                         text=True)
    assert out.returncode == 4, out.stderr
    assert READ not in out.stdout + out.stderr
    (line,) = [ln for ln in out.stderr.splitlines() if ln.startswith("error:")]
    assert "read-only" in line and "write access" in line


def test_restricted_sources_are_refused_unless_asked(publisher, tmp_path):
    from indexer.errors import BusyError

    store_a, _, _ = publisher
    with store_a.lock("index"), pytest.raises(BusyError):  # an indexing pass is writing: publish waits for none
        publish("tester/recs", store=store_a, dry_run=tmp_path / "busy")
    (tmp_path / "sample" / "PROVENANCE.md").write_text("# x\n- License: CC BY-NC-SA 4.0 (non-commercial, share-alike)\n")
    with pytest.raises(InputError, match=r"restricted licence \(CC BY-NC-SA 4.0.*include_restricted=True"):
        publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    assert not (tmp_path / "d").exists()
    res = publish("tester/recs", store=store_a, dry_run=tmp_path / "d", include_restricted=True)
    card = (tmp_path / "d" / "README.md").read_text()
    assert "CC BY-NC-SA 4.0" in card and "| yes |" in card and res.added > 0


def test_a_space_holding_vectors_of_dropped_results_is_not_published(publisher, tmp_path):
    """A space holding the vectors of models whose results are no longer stored (`taskspace sources drop` and no
    pass of that space since: a space other than the configured one is never re-indexed by `taskspace index`) is
    refused, naming the space, the models and the command that removes them; nothing is written. Before, its records
    were published with `sources` empty and the card listed no source: records of results the home no longer holds
    (perhaps dropped for their licence), under no licence."""
    from indexer.ingest import drop_source
    from indexer.space import space_name

    store_a, _, _ = publisher
    drop_source(str(tmp_path / "sample"), store=store_a)
    with pytest.raises(InputError, match=r"^space \S+ holds the vectors of 25 models whose results are no longer "
                                         r"stored .*TASKSPACE_METHOD=auto-mc taskspace index") as err:
        publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    (sp,) = store_a.list_spaces()  # named once (before: "NAME: space NAME holds ...")
    assert str(err.value).count(space_name(sp)) == 1 and err.value.item == f"space {space_name(sp)}", err.value
    assert "01-ai/Yi-34B" in str(err.value) or "Meta-Llama" in str(err.value) or "meta-llama" in str(err.value)
    assert not (tmp_path / "d").exists()


def _index_auto_too(store, vectors, tmp_path, monkeypatch, encoder) -> None:
    """A second space in the publisher's home: the subset indexed with method ``auto`` too (the configured method
    stays the default)."""
    monkeypatch.setenv("TASKSPACE_METHOD", "auto")
    reset_settings()
    Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "sample"))])
    monkeypatch.delenv("TASKSPACE_METHOD")
    reset_settings()


def test_a_dropped_source_in_every_space_is_not_said_to_leave_another_space_to_publish(publisher, tmp_path, monkeypatch,
                                                                                       encoder):
    """A source dropped from a home with two spaces (auto-mc and auto) leaves its models' vectors in both: the refusal
    names the first space and how to index it, and no `--space` alternative, none being publishable. Before, it added
    "or publish another space with --space" whenever there were two spaces, sending the user to a space that is
    refused the same way."""
    from indexer.ingest import drop_source

    store_a, vectors_a, _ = publisher
    _index_auto_too(store_a, vectors_a, tmp_path, monkeypatch, encoder)
    assert len(store_a.list_spaces()) == 2
    drop_source(str(tmp_path / "sample"), store=store_a)
    with pytest.raises(InputError, match=r"^space \S+ holds the vectors of 25 models whose results are no longer "
                                         r"stored .*taskspace index`\)$") as err:
        publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    assert "--space" not in str(err.value) and "space=" not in str(err.value), err.value
    assert not (tmp_path / "d").exists()


def test_licences_of_the_shared_sets(shared_data):
    text, restricted, _ = licence_of(str(shared_data / "metabench_openllm"))
    assert "BY-NC-SA" in text and restricted
    text, restricted, _ = licence_of(str(shared_data / "mmlu_pro" / "outcomes.csv.gz"))
    assert "Apache-2.0" in text and not restricted
    assert licence_of(str(shared_data / "evalarena_code"))[1] is False


def test_a_sources_title_and_licence_on_the_card_keep_the_underscores_of_names(tmp_path):
    """The card names a source by its file's title: `evalarena_code`, `mmlu_pro` stay as written (Markdown emphasis
    marks are dropped, an underscore inside a word is none); before, every `_` went: "evalarenacode", "mmlupro"."""
    from indexer.publish import _title

    f = tmp_path / "SOURCE.md"
    f.write_text("# evalarena_code — 132 code LLMs (__bold__, *it*, `x_y`)\n\n**License**: see LICENSE_MIT.txt "
                 "(_MIT_)\n")
    assert _title(f) == "evalarena_code — 132 code LLMs (bold, it, x_y)"
    assert licence_of(str(tmp_path))[0] == "see LICENSE_MIT.txt (MIT)"


def test_the_card_names_every_column_of_the_model_records_and_what_gated_and_kind_hold(publisher, tmp_path):
    """The card (what a consumer reads on the Hub and the viewer's config shows) names every column of
    ``models/<space>.parquet``, and says that ``gated`` is text (the Hub's ``false``, ``auto``, ``manual``: the
    string "false" is true in Python and pandas) and which ``kind`` values there are; before, it named neither the
    Hub metadata nor ``aliases``, ``kind``, ``sources``, ``inputs_digest``."""
    import pyarrow.parquet as pq

    store_a, _, _ = publisher
    store_a.upsert_models([{"key": _key(store_a, LLAMA), "gated": "manual"}, {"key": _key(store_a, MISTRAL),
                                                                                "gated": False}])
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    card = (tmp_path / "d" / "README.md").read_text()
    (row,) = [ln for ln in card.splitlines() if ln.startswith("| `models/<space>.parquet` |")]
    (f,) = (tmp_path / "d" / "models").glob("*.parquet")
    t = pq.read_table(f)
    assert [c for c in t.column_names if f"`{c}`" not in row] == []
    gated = {g for g in t["gated"].to_pylist() if g is not None}
    assert gated == {"manual", "false"} and all(f"`{g}`" in row for g in gated)
    assert "text" in row.split("`gated`", 1)[1][:200]
    assert all(f"`{k}`" in row for k in set(t["kind"].to_pylist()))


def test_the_card_names_every_column_of_every_file_it_lists(publisher, tmp_path):
    """Each row of the card's "Files" table names every column of its file by the name a consumer reads in pandas or
    ``datasets`` (spaces, patterns and benchmarks too, not only the model records), and tells the benchmarks' two
    counts apart; before, ``benchmarks.parquet``'s row named no column ("name, group, metric, prompt count": the
    columns are ``benchmark``, ``source_task``, ``num_fewshot``, ``config``, ``prompt_count`` and ``n_prompts``, ...),
    and ``spaces.parquet``'s and ``patterns/<space>.parquet``'s left out ``key``, ``encoder_dim``,
    ``calibration_n_cells``, ``calibration_links``, ``n``, ``width``, ``mc_seen`` and more."""
    import pyarrow.parquet as pq

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    card = (tmp_path / "d" / "README.md").read_text()
    files = sorted(p.relative_to(tmp_path / "d") for p in (tmp_path / "d").rglob("*.parquet"))
    assert {str(f.parent) for f in files} == {".", "models", "patterns", "prompts"}
    missing = {}
    for f in files:
        label = f"`{f.parent}/<space>.parquet`" if str(f.parent) != "." else f"`{f.name}`"
        (row,) = [ln for ln in card.splitlines() if ln.startswith(f"| {label} |")]
        missing[str(f)] = [c for c in pq.read_table(tmp_path / "d" / f).column_names if f"`{c}`" not in row]
    missing = {f: cs for f, cs in missing.items() if cs}
    assert missing == {}
    # docs/PUBLISHING.md's table of the files too (its patterns row lists the factors in one span: words, not `spans`)
    doc = (Path(__file__).resolve().parents[1] / "docs" / "PUBLISHING.md").read_text(encoding="utf-8")
    for f in files:
        label = f"`{f.parent}/<space>.parquet`" if str(f.parent) != "." else f"`{f.name}`"
        (row,) = [ln for ln in doc.splitlines() if ln.startswith(f"| {label} |")]
        words = set(re.findall(r"\w+", row))
        assert [c for c in pq.read_table(tmp_path / "d" / f).column_names if c not in words] == [], ("PUBLISHING.md", f)
    (row,) = [ln for ln in card.splitlines() if ln.startswith("| `benchmarks.parquet` |")]
    assert "the prompts it holds" in row.split("`prompt_count`", 1)[1][:120]
    assert "its `vector` is the mean of" in row.split("`n_prompts`", 1)[1][:80]


def _card_of(space: str, encoder_name: str, encoder_dim: int, repo: str = "tester/recs") -> str:
    """The card of one auto-mc space of ``encoder_name`` (no I/O: :func:`indexer.card.card` on a spaces row)."""
    from indexer.card import card

    params = {"features": "multiple-choice-v2", "free": 4, "intercept": True, "levels": "level-deviation-v2",
              "prior": "mean", "select": "gcv"}
    dim = 2 * encoder_dim + 10
    sp = {"space": space, "encoder": f"{encoder_name}@0123456789abcdef", "encoder_name": encoder_name,
          "encoder_dim": encoder_dim, "method": "auto-mc", "dim": dim, "lam": 1.0, "eps": 0.0, "calibration_a": None,
          "params_dict": params, "layout": dataset.layout(dim, params)}
    return card(repo, [sp], [], {space: {"models": 1, "benchmarks": 1}}, "0.1.0")


def test_the_cards_model_records_row_gives_the_units_and_meaning_of_its_numbers():
    """The card's row of ``models/<space>.parquet`` says what its numbers are in: a benchmark's ``accuracy`` a share
    from 0 to 1 of its ``n`` outcome cells, ``n_prompts`` the prompts the vector was solved from, ``noise`` and
    ``model_lambda`` the fit's residual variance and ridge lambda, ``computed_at`` ISO 8601 UTC, ``layout`` text of
    ``part[start:stop]`` (the spaces table's is JSON); before, "`n_prompts`, `benchmarks` (name, observed accuracy,
    n)": neither the scale of an accuracy (a share or a percent) nor what `n` and `n_prompts` count."""
    card = _card_of("all-minilm-l6-v2-a9ac9c1645", "sentence-transformers/all-MiniLM-L6-v2", 384)
    (row,) = [ln for ln in card.splitlines() if ln.startswith("| `models/<space>.parquet` |")]
    after = lambda col: row.split(f"`{col}` (", 1)[1][:160]  # noqa: E731 - what the card says right after a column
    assert "0 to 1" in after("accuracy") and "outcome cells" in after("accuracy")
    assert "prompts its `vector` was solved from" in after("n_prompts")
    assert "residual variance" in after("noise") and "ridge lambda" in after("model_lambda")
    assert "ISO 8601" in after("computed_at") and "`part[start:stop]`" in after("layout")


def test_the_card_says_how_many_lines_each_example_has():
    """The sentence before each space's example gives its line count: 12 for the default `auto-mc` (the option split,
    the coverage share, the level/deviation map and the groups' average models), 5 for `auto`; before, every card
    said "Ten lines" above both."""
    import re

    from indexer.card import card

    text = _card_of("all-minilm-l6-v2-0123456789", "sentence-transformers/all-MiniLM-L6-v2", 384)
    params = {"intercept": True, "select": "gcv"}
    sp = {"space": "plain", "encoder": "e@0123", "encoder_name": "e", "encoder_dim": 384, "method": "auto",
          "dim": 385, "lam": 1.0, "eps": 0.0, "calibration_a": None, "params_dict": params,
          "layout": dataset.layout(385, params)}
    plain = card("tester/recs", [sp], [], {"plain": {"models": 1, "benchmarks": 1}}, "0.1.0")
    for t, n in ((text, 12), (plain, 5)):
        said, code = re.search(r"\n(\w+) lines \(`encode\(texts\)`.*?```python\n(.*?)```", t, re.S).groups()
        assert said == str(n) and len(code.strip().split("\n")) == n, (said, code)
    assert "Ten lines" not in text + plain


def test_the_card_says_how_encoder_revision_is_computed_and_its_recipe_gives_taskspaces(encoder, tmp_path):
    """The card says how ``encoder_revision`` is computed, with the few lines that compute it, and which files count:
    run over the packaged all-MiniLM-L6-v2 folder they give taskspace's revision, over a full Hub snapshot of the model
    (its extra ``pytorch_model.bin``, ``openvino/*.bin``, ``onnx/*.onnx`` here stand-ins) another one, and over the
    snapshot's files the card lists the same one. Before, the card said "a fingerprint of its weights" and no more, so
    a consumer could not check that their copy of the encoder is the one the vectors were made with."""
    import re

    from indexer.encoder import _minilm_path

    text = _card_of("all-minilm-l6-v2-0123456789", "sentence-transformers/all-MiniLM-L6-v2", 384)
    code = text.split("<!-- taskspace-encoder-revision -->\n```python\n", 1)[1].split("```", 1)[0]
    ns: dict = {}
    exec(compile(code, "card-encoder-revision", "exec"), ns)
    folder = _minilm_path()
    assert ns["encoder_revision"](folder) == encoder.revision
    snap = tmp_path / "snapshot"
    shutil.copytree(folder, snap)
    for extra in ("pytorch_model.bin", "openvino/openvino_model.bin", "onnx/model.onnx"):
        (snap / extra).parent.mkdir(exist_ok=True)
        (snap / extra).write_bytes(b"the same weights in another format")
    assert ns["encoder_revision"](snap) != encoder.revision  # a whole snapshot: another fingerprint
    said = " ".join(text.split()).split("the files that count are ", 1)[1].split(";", 1)[0]
    listed = re.findall(r"`([^`]+)`", said)
    counted = sorted(str(f.relative_to(folder)) for f in folder.rglob("*") if f.is_file() and
                     f.suffix in {".json", ".safetensors", ".bin", ".txt"} and f.name != "README.md")
    assert sorted(listed) == counted
    only = tmp_path / "only"
    for name in listed:
        (only / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(snap / name, only / name)
    assert ns["encoder_revision"](only) == encoder.revision
    for phrase in ("sha256", "first 16 hex", "`pytorch_model.bin`", "`openvino/", "Hub commit"):
        assert phrase in text, phrase


def test_the_cards_example_names_the_encoder_of_its_own_space():
    """Each space's example says to embed with that space's encoder (``encoder_name``): an all-mpnet-base-v2 space's
    example names all-mpnet-base-v2; before, every example said ``SentenceTransformer("sentence-transformers/
    all-MiniLM-L6-v2")``, whose 384-dimensional rows cannot score a 768-dimensional space's records."""
    text = _card_of("all-mpnet-base-v2-0123456789", "sentence-transformers/all-mpnet-base-v2", 768)
    section = text.split("### `all-mpnet-base-v2-0123456789`", 1)[1].split("## Uncertainty", 1)[0]
    assert 'SentenceTransformer("sentence-transformers/all-mpnet-base-v2")' in section
    assert "MiniLM" not in section


def test_the_card_and_publishing_md_give_every_term_of_the_interval_and_count_the_larger_of_two_levels_unknowns():
    """What the card's "Uncertainty" and PUBLISHING.md say a model's variance adds is what ``Predictor.variance`` adds:
    the never-observed answer format's ``w^2 calibration_spread`` (``mc_seen``/``free_seen`` of its pattern), and, with
    ``calibration_links``, the unlinked benchmarks' term only beyond it (the larger of the two counts, not both: the
    same unknown level), its ``spread - region_var`` at least 0. Before, neither named the format's term, nor said that
    the two are not summed, so a reader reproducing an interval from the records could add both (on the sample +
    evalarena_code + metabench_openllm home up to 0.30 and 1.71: ``calibration_spread`` and the unlinked term at b = 0)."""
    text = _card_of("all-minilm-l6-v2-0123456789", "sentence-transformers/all-MiniLM-L6-v2", 384)
    card = " ".join(text.split("## Uncertainty", 1)[1].split())
    doc = " ".join((Path(__file__).resolve().parents[1] / "docs" / "PUBLISHING.md").read_text().split())
    for where, body in (("card", card), ("PUBLISHING.md", doc)):
        for phrase in ("`w^2 calibration_spread`", "`mc_seen`", "`free_seen`", "the larger of the two",
                       "max(calibration_spread - calibration_region_var, 0)",
                       # Calibration.linked_shares: a benchmark indexed after the map was fitted is in no group (the
                       # map is held fixed between refits, and published so); nothing says it is not linked
                       "a benchmark no group lists counts as linked"):
            assert phrase in body, (where, phrase)


def test_the_cards_row_for_a_question_without_options_has_the_spaces_width():
    """The card writes out the query row taskspace builds for a question typed without its options: for an auto-mc
    space it ends with the four zeros of ``prior_w``, ``level`` and ``prior_mu`` (2 d + 10 entries, as the layout
    table above it says); before, it ended at ``1 - m[2d]`` (2 d + 6 entries), a row that cannot be multiplied with
    the records' vectors."""
    text = _card_of("all-minilm-l6-v2-0123456789", "sentence-transformers/all-MiniLM-L6-v2", 384)
    row = re.search(r"the query row is `\[(E\(question\), m\[d:2d\], [^`]*)\]`", text)[1]
    items = [x.strip() for x in row.split(", ")]
    width = 2 * 384 + len(items) - 2  # E(question) and m[d:2d] are d entries each, the others one
    assert width == 2 * 384 + 10 and items[-4:] == ["0"] * 4


def test_the_cards_space_table_says_lambda_is_chosen_per_model_where_it_is():
    """The card's table of spaces gives a space whose lambda is chosen per model (generalised cross-validation, as
    auto-mc's) as such, beside the space's setting; before, it said "lambda 1", while the records' `model_lambda`
    ran from 0.56 to 10,000 on the sample plus evalarena_code."""
    text = _card_of("all-minilm-l6-v2-0123456789", "sentence-transformers/all-MiniLM-L6-v2", 384)
    (row,) = [ln for ln in text.splitlines() if ln.startswith("| `all-minilm-l6-v2-0123456789` | `sentence")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[4].startswith("1 ") and "per model" in cells[4] and "model_lambda" in cells[4]


def test_the_card_says_where_the_example_reads_the_files_from(hub_server, tmp_path, monkeypatch):
    """The example reads ``models/<space>.parquet`` and the other files by relative path: the card says to run it in
    a folder holding them and how to download them (``snapshot_download`` of this dataset, which works as written);
    before, it said neither, so the example copied from the Hub's page failed with FileNotFoundError."""
    import functools

    from huggingface_hub import constants, snapshot_download

    text = _card_of("all-minilm-l6-v2-0123456789", "sentence-transformers/all-MiniLM-L6-v2", 384, repo="fake-org/recs")
    section = text.split("## Using the vectors without taskspace", 1)[1].split("### ", 1)[0]
    call = re.search(r"`(snapshot_download\([^`]*\))`", section)
    assert call and '"fake-org/recs"' in call[1] and "folder" in section
    (hub_server.root / "datasets" / "fake-org" / "recs" / "models").mkdir(parents=True)
    (hub_server.root / "datasets" / "fake-org" / "recs" / "models" / "x.parquet").write_bytes(b"PAR1")
    monkeypatch.chdir(tmp_path)
    # the library reads HF_ENDPOINT and HF_HUB_OFFLINE once, at import (maybe before the fixture set them)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    local = functools.partial(snapshot_download, endpoint=hub_server.url)
    got = eval(call[1], {"snapshot_download": local})  # noqa: S307 - the card's own call
    assert (Path(got) / "models" / "x.parquet").is_file()


def run_card_example(code: str, ns: dict, folder: Path) -> str:
    """Run the card's Python example ``code`` with the globals ``ns`` in ``folder`` (it reads the records by relative
    path, as from a download of the dataset), and return what it printed."""
    import contextlib
    import io
    import os

    cwd = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            exec(compile(code, "card-example", "exec"), ns)
    finally:
        os.chdir(cwd)
    return printed.getvalue()


def test_the_cards_example_runs_against_the_files(bent, publisher, tmp_path, encoder):
    store_a, vectors_a, unseen = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    card = (tmp_path / "d" / "README.md").read_text()
    assert card.startswith("---\nlicense:\n- apache-2.0\n- mit\ntags:\n") and "config_name: " in card
    (sp,) = store_a.list_spaces()
    assert store_a.get_space_calibration(sp.id).knots is not None  # the example bends the logit as taskspace does
    from indexer.space import space_name

    name = space_name(sp)
    code = card.split(f"<!-- taskspace-example:{name} -->\n```python\n", 1)[1].split("```", 1)[0]
    assert len(code.strip().splitlines()) <= 12
    enc = lambda texts: encoder.encode(list(texts))  # noqa: E731 - the named encoder, unit rows
    for prompt in (unseen[0], "Write a Python function that reverses a linked list."):
        ns = {"encode": enc, "prompt": prompt}
        printed = run_card_example(code, ns, tmp_path / "d")
        assert len(printed.strip().splitlines()) == 5
        models = [str(m) for m in ns["t"]["model"].to_pylist()]
        got = dict(zip(models, ns["s"].tolist()))
        prob = dict(zip(models, ns["p"].tolist()))
        # exactly taskspace's row, so its scores and probabilities: with options, and without, where taskspace fills
        # the options from the 50 nearest indexed prompts (before, the example built a row of zeros there: 76% for
        # taskspace's 72%)
        want = find_models([prompt], top=100, store=store_a, vectors=vectors_a)
        assert len(want) == len(models)
        for m in want:
            assert got[m.model] == pytest.approx(m.score, abs=2e-5)
            assert prob[m.model] == pytest.approx(m.probability, abs=2e-5)


def test_the_cards_interval_lines_give_taskspaces_intervals(bent, publisher, tmp_path, encoder):
    """The card's lines after the example compute each model's 90% interval from the published files alone (the ridge
    posterior of its pattern's factors, its lambda and noise, and the map's terms), and they are taskspace's: for a
    prompt with options and one without, every model's low and high equal ``find_models``'. Before, the card named the
    terms and sent the reader to ``score_variance`` in taskspace's code, never saying what the pattern factors are or
    how the leverage is computed."""
    store_a, vectors_a, unseen = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    card = (tmp_path / "d" / "README.md").read_text()
    (sp,) = store_a.list_spaces()
    from indexer.space import space_name

    name = space_name(sp)
    code = card.split(f"<!-- taskspace-example:{name} -->\n```python\n", 1)[1].split("```", 1)[0]
    lines = card.split(f"<!-- taskspace-interval:{name} -->\n```python\n", 1)[1].split("```", 1)[0]
    enc = lambda texts: encoder.encode(list(texts))  # noqa: E731 - the named encoder, unit rows
    for prompt in (unseen[0], "Write a Python function that reverses a linked list."):
        ns = {"encode": enc, "prompt": prompt}
        run_card_example(code + "\n" + lines, ns, tmp_path / "d")
        models = [str(m) for m in ns["t"]["model"].to_pylist()]
        lo, hi = dict(zip(models, ns["lo"].tolist())), dict(zip(models, ns["hi"].tolist()))
        want = find_models([prompt], top=100, store=store_a, vectors=vectors_a)
        assert len(want) == len(models)
        for m in want:
            assert (lo[m.model], hi[m.model]) == (pytest.approx(m.low, abs=2e-5), pytest.approx(m.high, abs=2e-5)), m.model


def _respace(src: Path, dst: Path, sp, encoder: str, params: dict | None = None) -> Path:
    """A copy of the records in ``src`` whose space claims another encoder id (or ``params``; key, name and file
    names follow)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from indexer.space import SpaceSpec

    dst = _copy(src, dst)
    spec = SpaceSpec(encoder, sp.lam, sp.eps, sp.method, params or sp.params, sp.dim)
    name = SpaceSpec.of(sp).name
    t = pq.read_table(dst / "spaces.parquet")
    rows = t.to_pylist()
    next(r for r in rows if r["space"] == name).update(  # that space's row (of a record set of several spaces)
        encoder=spec.encoder, key=spec.key, space=spec.name, params=json.dumps(spec.params, sort_keys=True))
    pq.write_table(pa.Table.from_pylist(rows, schema=t.schema), dst / "spaces.parquet")
    for f in ("models", "benchmarks"):
        path = dst / "models" / f"{name}.parquet" if f == "models" else dst / "benchmarks.parquet"
        t = pq.read_table(path)
        t = t.set_column(t.column_names.index("space"), "space",
                         pa.array([spec.name if s == name else s for s in t.column("space").to_pylist()]))
        if f == "models":
            path.unlink()
            path = dst / "models" / f"{spec.name}.parquet"
        pq.write_table(t, path)
    for d in ("patterns", "prompts"):
        (dst / d / f"{name}.parquet").rename(dst / d / f"{spec.name}.parquet")
    return dst


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _space_column(src: Path, dst: Path, column: str, value=None, drop: bool = False) -> Path:
    """A copy ``dst`` of the records ``src`` whose spaces.parquet has ``value`` in the first row's ``column``, or,
    with ``drop``, no such column (records written before it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    _copy(src, dst)
    t = pq.read_table(dst / "spaces.parquet")
    if drop:
        pq.write_table(t.drop_columns([column]), dst / "spaces.parquet")
        return dst
    rows = t.to_pylist()
    rows[0][column] = value
    pq.write_table(pa.Table.from_pylist(rows, schema=t.schema), dst / "spaces.parquet")
    return dst


def _rewrite_models(folder: Path, edit) -> None:
    import pyarrow.parquet as pq

    (f,) = (folder / "models").glob("*.parquet")
    t = pq.read_table(f)
    pq.write_table(edit(t), f)


def _assert_nothing_imported() -> None:
    """The home (TASKSPACE_HOME) holds no space and no model: a refused pull imported nothing."""
    store_b = open_store()
    try:
        assert store_b.list_spaces() == [] and store_b.list_models() == []
    finally:
        store_b.close()


def test_bad_records_are_reported_by_row_and_nothing_is_imported(publisher, tmp_path, monkeypatch):
    import pyarrow as pa

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")

    def corrupt(t):
        rows = t.to_pylist()
        rows[1]["vector"] = rows[1]["vector"][:-1]  # wrong dimension
        rows[3]["vector"][5] = float("nan")  # NaN
        return pa.Table.from_pylist(rows, schema=t.schema)

    bad = _copy(tmp_path / "d", tmp_path / "bad")
    _rewrite_models(bad, corrupt)
    with pytest.raises(InputError) as err:
        pull(str(bad))
    msg = str(err.value)
    assert re.search(r"models/\S+\.parquet: row 1 \(model [^)]+\): vector has \d+ entries, expected \d+", msg)
    assert re.search(r"row 3 \(model [^)]+\): vector has NaN", msg) and "nothing was imported" in msg
    out = subprocess.run([sys.executable, "-m", "indexer.cli", "pull", str(bad)], capture_output=True, text=True)
    assert out.returncode == 1 and out.stderr.startswith("error: ") and len(out.stderr.strip().splitlines()) == 1
    missing = _copy(tmp_path / "d", tmp_path / "missing")
    _rewrite_models(missing, lambda t: t.drop_columns(["noise", "pattern"]))
    with pytest.raises(InputError, match=r"missing columns pattern, noise"):
        pull(str(missing))
    _assert_nothing_imported()


def test_a_bad_region_variance_is_reported_and_an_old_record_set_pulls_without_it(publisher, tmp_path, monkeypatch):
    """spaces.parquet's ``calibration_region_var`` (the interval's region variance): a negative or NaN value is an
    error naming the row and the column, nothing imported; a record set written before the column pulls, its map
    without a region variance (intervals as before)."""
    import pyarrow.parquet as pq

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    assert pq.read_table(tmp_path / "d" / "spaces.parquet").column("calibration_region_var")[0].as_py() is not None
    for value in (-0.5, float("nan")):
        bad = _space_column(tmp_path / "d", tmp_path / f"bad{value}", "calibration_region_var", value)
        with pytest.raises(InputError, match=r"spaces.parquet.*row 0.*calibration_region_var must be a number at "
                                             r"least 0") as err:
            pull(str(bad))
        assert "nothing was imported" in str(err.value)
    pull(str(_space_column(tmp_path / "d", tmp_path / "old", "calibration_region_var", drop=True)))
    store_b = open_store()
    try:
        (sp,) = store_b.list_spaces()
        cal = store_b.get_space_calibration(sp.id)
        assert cal.folded and cal.region_var is None
    finally:
        store_b.close()


def test_the_benchmarks_links_are_published_and_pulled_and_a_bad_value_is_reported(publisher, tmp_path, monkeypatch):
    """spaces.parquet's ``calibration_links`` (the groups of benchmarks no model links): published with the map and
    pulled into the same map, so a pulled index widens the same intervals; null with one group; a value that is not
    at least two lists of names, each name once, is an error naming the row and the column, nothing imported; a
    record set written before the column pulls, its map without links (intervals as before). The pulled map carries
    each group's average model (Calibration.centres) computed from the records' vectors."""
    import dataclasses

    import pyarrow.parquet as pq

    from indexer import posterior

    store_a, _, _ = publisher
    (sp_a,) = store_a.list_spaces()
    cal_a = store_a.get_space_calibration(sp_a.id)
    assert cal_a.links is None  # one group: null
    publish("tester/recs", store=store_a, dry_run=tmp_path / "one")
    assert pq.read_table(tmp_path / "one" / "spaces.parquet").column("calibration_links")[0].as_py() is None
    names = sorted({b.name for b in store_a.list_benchmarks()})
    links = (tuple(names[:1]), tuple(names[1:]))
    store_a.save_model_vectors(sp_a.id, [], calibration=dataclasses.replace(cal_a, links=links))
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    assert pq.read_table(tmp_path / "d" / "spaces.parquet").column("calibration_links")[0].as_py() == \
        [list(g) for g in links]
    _home(tmp_path, monkeypatch, "home_b")
    for value in ([["x"]], [["x"], []], [["x"], ["x", "y"]]):
        bad = _space_column(tmp_path / "d", tmp_path / f"bad{len(str(value))}", "calibration_links", value)
        with pytest.raises(InputError, match=r"spaces.parquet.*row 0.*calibration_links must be null or at least two") \
                as err:
            pull(str(bad))
        assert "nothing was imported" in str(err.value)
    pull(str(_space_column(tmp_path / "d", tmp_path / "old", "calibration_links", drop=True)))
    store_b = open_store()
    try:
        (sp,) = store_b.list_spaces()
        assert store_b.get_space_calibration(sp.id).links is None
    finally:
        store_b.close()
    _home(tmp_path, monkeypatch, "home_c")
    pull(str(tmp_path / "d"))
    store_c = open_store()
    try:
        (sp,) = store_c.list_spaces()
        got = store_c.get_space_calibration(sp.id)
        assert got.links == links
        # the map as stored above (saved without a model count: 0), with each group's average model from the
        # records' vectors, as the publisher's pass computes them from its own
        assert dataclasses.replace(got, centres=None) == dataclasses.replace(cal_a, links=links, n_models=0)
        lists, V = store_a.model_benchmark_vectors(sp_a.id)
        np.testing.assert_allclose(got.centres, posterior.link_centres(links, lists, V), rtol=0, atol=1e-9)
        assert len(got.centres) == 2
    finally:
        store_c.close()


def test_a_column_of_the_wrong_type_is_reported_by_file_and_column(publisher, tmp_path, monkeypatch):
    """Records whose column holds another type than taskspace writes (a vector as text, a model's benchmarks as a
    string: a hand-made or damaged copy) are reported naming the file, the column and both types, exit 1, nothing
    imported; a type that casts safely (int32 written as int64) still pulls. Before, a TypeError or
    ArrowNotImplementedError traceback."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")

    def as_text(*names):
        def edit(t):
            for c in names:
                t = t.set_column(t.column_names.index(c), c, pa.array([str(v) for v in t.column(c).to_pylist()]))
            return t
        return edit

    bad = _copy(tmp_path / "d", tmp_path / "bad")
    _rewrite_models(bad, as_text("vector", "benchmarks"))
    with pytest.raises(InputError, match=r"models/\S+\.parquet: columns of the wrong type: vector is string, "
                                         r"not list<element: float>; benchmarks is string, not list<.*fetch the "
                                         r"record set again"):
        pull(str(bad))
    out = subprocess.run([sys.executable, "-m", "indexer.cli", "pull", str(bad)], capture_output=True, text=True)
    assert out.returncode == 1 and out.stderr.startswith("error: ") and len(out.stderr.strip().splitlines()) == 1
    bench = _copy(tmp_path / "d", tmp_path / "bench")
    t = pq.read_table(bench / "benchmarks.parquet")
    pq.write_table(as_text("vector")(t), bench / "benchmarks.parquet")
    with pytest.raises(InputError, match=r"benchmarks.parquet: column of the wrong type: vector is string"):
        pull(str(bench))
    _assert_nothing_imported()
    wide = _copy(tmp_path / "d", tmp_path / "wide")
    _rewrite_models(wide, lambda t: t.set_column(t.column_names.index("dim"), "dim", t.column("dim").cast(pa.int64())))
    assert pull(str(wide)).spaces


def test_a_benchmark_or_pattern_recorded_twice_is_reported_by_row(publisher, tmp_path, monkeypatch):
    """A record set with a benchmark row or a pattern row twice (a bad merge of two sets) is reported naming the file
    and the row of the second record (exit 1), nothing imported, as a model recorded twice already was. Before, the
    pull failed in its SQL write: "UNIQUE constraint failed: benchmarks.name" (or space_patterns), a store error
    (exit 3) naming no file or row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    for i, (name, pattern) in enumerate((("benchmarks.parquet", r"benchmarks.parquet: row (\d+) \([^)]+\): a second record of this "
                                                 r"benchmark in space \S+"),
                          ("patterns/*.parquet", r"patterns/\S+\.parquet: row (\d+) \(pattern \w+\): a second "
                                                 r"record of this pattern"))):
        bad = _copy(tmp_path / "d", tmp_path / f"bad{i}")
        (f,) = bad.glob(name)
        t = pq.read_table(f)
        pq.write_table(pa.concat_tables([t, t.slice(0, 1)]), f)
        with pytest.raises(InputError, match=pattern) as err:
            pull(str(bad))
        assert re.search(pattern, str(err.value)).group(1) == str(len(t))
        out = subprocess.run([sys.executable, "-m", "indexer.cli", "pull", str(bad)], capture_output=True, text=True)
        assert out.returncode == 1 and "UNIQUE" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    _assert_nothing_imported()


def test_a_models_file_with_another_count_than_spaces_parquet_says_is_refused(publisher, tmp_path, monkeypatch):
    """A models file holding fewer (or more) records than `spaces.parquet` counts for its space (`n_models`, which
    publish writes as the file's rows: a file rewritten by a tool that lost rows, or one from another publish) is
    refused naming the file and both counts, nothing imported. Before, an empty models file pulled as "0 model(s)",
    exit 0, and a file missing some models pulled the others without a word."""
    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    for i, edit in enumerate((lambda t: t.slice(0, 0), lambda t: t.slice(1))):
        cut = _copy(tmp_path / "d", tmp_path / f"cut{i}")
        _rewrite_models(cut, edit)
        with pytest.raises(InputError, match=r"models/\S+\.parquet: holds \d+ model records?, but spaces.parquet "
                                             r"counts \d+ for space \S+: the copy is incomplete or mixed"):
            pull(str(cut))
    _assert_nothing_imported()


def test_a_copy_without_its_prompts_file_is_refused_and_nothing_imported(publisher, tmp_path, monkeypatch):
    """A record set whose ``prompts/<space>.parquet`` is gone (a partial download or copy) pulled without a word, and
    the pulled index then filled no question's answer options and told no coverage. Now, as benchmarks.parquet counts
    the space's indexed prompts, the file is required: the pull fails naming it and imports nothing."""
    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    cut = _copy(tmp_path / "d", tmp_path / "cut")
    (f,) = (cut / "prompts").glob("*.parquet")
    f.unlink()
    with pytest.raises(InputError, match=r"prompts/\S+\.parquet: file is missing, though benchmarks.parquet counts 90 "
                                         r"indexed prompts.*fetch the whole record set again"):
        pull(str(cut))
    _assert_nothing_imported()
    assert pull(str(tmp_path / "d")).spaces[0]["indexed"]["prompts"] == 90  # the whole copy pulls


def test_publishing_a_pulled_space_is_refused_with_what_to_do(publisher, tmp_path, monkeypatch):
    """A home that pulled records holds no results, prompt texts or sources: publishing its space again wrote a set
    without the prompts file, with no sources and no benchmark prompt counts. Now it is refused, naming the space and
    where it came from; once raw results are indexed into it, the space is this home's own and publishes."""
    from indexer.pipeline import run_index

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d"))
    with pytest.raises(InputError, match=r"^space \S+ was pulled from .*publish from the home that indexed its results") as err:
        publish("tester/again", dry_run=tmp_path / "d2")
    name = err.value.item.removeprefix("space ")  # named once (before: "NAME: space NAME was pulled ...")
    assert str(err.value).count(name) == 1 and not (tmp_path / "d2").exists()
    out = subprocess.run([sys.executable, "-m", "indexer.cli", "publish", "tester/again", "--dry-run", str(tmp_path / "d3")],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "was pulled from" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert run_index([SourceSpec(str(tmp_path / "sample"))]).status == "ok"
    assert any(f.startswith("prompts/") for f in publish("tester/again", dry_run=tmp_path / "d4").files)


def test_encoder_not_installed_and_dimension_disagreement_are_refused(publisher, tmp_path, monkeypatch):

    from indexer.space import SpaceSpec

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    (sp,) = store_a.list_spaces()
    _home(tmp_path, monkeypatch, "home_b")
    # another encoder revision than the one installed, and an encoder that is not installed at all
    other = _respace(tmp_path / "d", tmp_path / "other", sp, sp.encoder.rsplit("@", 1)[0] + "@0000deadbeef")
    absent = _respace(tmp_path / "d", tmp_path / "absent", sp, "someorg/not-installed-encoder@1234")
    with pytest.raises(EncoderError, match=r"need encoder someorg/not-installed-encoder@1234, which is not installed") as err:
        pull(str(absent))
    assert "\n" not in str(err.value)
    spec = SpaceSpec(sp.encoder.rsplit("@", 1)[0] + "@0000deadbeef", sp.lam, sp.eps, sp.method, sp.params, sp.dim)
    with pytest.raises(EncoderError, match=rf"made with encoder {re.escape(spec.encoder)}, the installed one is "):
        pull(str(other))
    # a space of the same settings and another dimension already here
    store_b = open_store()
    try:
        store_b.get_or_create_space(sp.encoder, sp.dim - 2, sp.lam, sp.eps, method=sp.method, params=sp.params)
    finally:
        store_b.close()
    with pytest.raises(DimensionError, match=rf"{SpaceSpec.of(sp).name} \({sp.dim} dims\) disagrees with space \S+ "
                                             rf"already here \({sp.dim - 2} dims"):
        pull(str(tmp_path / "d"))


def test_import_writes_the_same_records_on_sqlite_and_postgresql(publisher, tmp_path, store):
    from indexer.store.sql_records import ImportedSpace

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    (rec,) = dataset.read(tmp_path / "d")
    (sid,) = store.import_spaces([ImportedSpace(spec=rec.spec, origin="test", revision="r", models=rec.models,
                                                vectors=rec.vectors, patterns=rec.patterns,
                                                calibration=rec.calibration, benchmarks=rec.benchmarks,
                                                benchmark_vectors=rec.benchmark_vectors, created_at=rec.created_at,
                                                coverage=rec.coverage)])
    (sp_a,) = store_a.list_spaces()
    got, want = store.load_model_vectors(sid), store_a.load_model_vectors(sp_a.id)
    assert [v.model for v in got] == [v.model for v in want]
    for g, w in zip(got, want):
        assert np.array_equal(g.vector, w.vector) and (g.pattern, g.lam, g.noise, g.n_prompts) == (w.pattern, w.lam, w.noise, w.n_prompts)
        assert g.accuracy == w.accuracy and g.benchmarks == w.benchmarks and g.computed_at == w.computed_at
    assert store.get_space_calibration(sid) == store_a.get_space_calibration(sp_a.id)
    pa, pb = store.load_patterns(sid), store_a.load_patterns(sp_a.id)
    assert sorted(pa) == sorted(pb)
    for k in pa:
        assert np.array_equal(pa[k].V, pb[k].V) and np.array_equal(pa[k].mu, pb[k].mu) and pa[k].formats == pb[k].formats
    # each pattern's observed prompts: the prompts SQL's outcomes of its models name at the publisher
    seen = store.pattern_prompts(sid, list(pa))
    assert sorted(seen) == sorted(pa) and rec.coverage
    for k, (digest, hashes) in seen.items():
        models = [v.model for v in want if v.pattern == k]
        ids = {int(i) for _, _, pids, _ in store_a.outcome_blocks(models[:1]) for i in pids}
        assert hashes == set(store_a.prompt_hashes(sorted(ids))) and len(hashes) == pa[k].n
        assert store.pattern_prompt_digests(sid, [k]) == {k: digest}
    assert store.space_origin(sid) == "test" and store.is_read_only(sid)
    with pytest.raises(ReadOnlyError):
        store.save_benchmark_vectors(sid, store.load_benchmark_vectors(sid))


def test_a_pulled_home_lists_its_benchmarks_with_the_published_counts(publisher, tmp_path, monkeypatch):
    """`taskspace benchmarks` on a pulled home said 0 prompts and 0 models measured for every benchmark (SQL there
    holds neither prompts nor outcomes); now it gives the records' counts: the prompts each benchmark vector is the
    mean of, and the models fitted on it, as the publisher's own listing does."""
    from indexer.browse import list_benchmarks

    store_a, _, _ = publisher
    want = list_benchmarks(store=store_a)
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d"))
    store_b = open_store()
    try:
        got = list_benchmarks(store=store_b)
    finally:
        store_b.close()
    assert [(r["name"], r["prompts"], r["models"]) for r in got] == [(r["name"], r["prompts"], r["models"]) for r in want]
    assert all(r["prompts"] > 0 and r["models"] > 0 for r in got)


def test_records_an_older_taskspace_published_with_a_license_in_capitals_pull_in_lower_case(publisher, tmp_path,
                                                                                            monkeypatch, encoder):
    """Records an older taskspace published hold a card's license as the card wrote it (`Llama3`, `MIT`). A pull
    stores it in lower case, as this taskspace stores a card's license, so `--license Llama3` and `llama3` match the
    model there as they do on the publisher's home after its upgrade; `check` is clean. Before, stored as published:
    the filter, which reads its value in lower case, matched no model of the pulled home."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from indexer import find, sync

    store_a, _, unseen = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")

    def caps(t):  # what the older publisher wrote: llama3 as "Llama3"
        i = t.schema.get_field_index("license")
        col = pc.if_else(pc.equal(t["license"], "llama3"), pa.scalar("Llama3"), t["license"])
        return t.set_column(i, "license", col)

    _rewrite_models(tmp_path / "d", caps)
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d"))
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        key = _key(store_b, LLAMA)
        assert store_b.get_model(key).license == "llama3"
        for lic in ("Llama3", "llama3"):
            found = find.find_models(unseen[0], k=5, filters={"licenses": [lic]}, store=store_b, vectors=vectors_b)
            assert [r.model for r in found] == [key], lic
        assert all(c.clean for c in sync.check(store_b, vectors_b))
    finally:
        vectors_b.close()
        store_b.close()


def test_a_size_that_is_the_base_models_is_published_and_pulled_with_whose_it_is(publisher, tmp_path, monkeypatch,
                                                                                   encoder):
    """A model sized by its base (an adapter: ``num_parameters_from``, migration 0016) is published with the column
    ``num_parameters_from`` and pulled with it, so the pulled home's answers say ``params_from`` as the publisher's
    do; records an older taskspace published (no such column) pull with it null (their counts are the repos' own),
    and a pulled count replaces what a home said of whose count it had. Before, the records carried no such column:
    a pull lost it and the pulled home showed the base's size as the adapter's own. A count of 0 pulls as unknown
    (before, stored as 0)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from indexer import find

    store_a, _, unseen = publisher
    llama = _key(store_a, LLAMA)
    store_a.upsert_models([{"key": llama, "num_parameters_from": "meta-llama/Meta-Llama-3-8B"}])
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    (f,) = (tmp_path / "d" / "models").glob("*.parquet")
    rows = {r["model"]: r for r in pq.read_table(f).to_pylist()}
    assert rows[llama]["num_parameters_from"] == "meta-llama/Meta-Llama-3-8B"
    assert rows[_key(store_a, MISTRAL)]["num_parameters_from"] is None
    older = _copy(tmp_path / "d", tmp_path / "older")  # what the previous release published: no such column
    _rewrite_models(older, lambda t: t.drop_columns(["num_parameters_from"]))
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d"))
    with open_store() as store_b:
        vectors_b = VectorStore.from_settings()
        try:
            assert (store_b.get_model(llama).num_parameters, store_b.get_model(llama).num_parameters_from) == (
                8_000_000_000, "meta-llama/Meta-Llama-3-8B")
            found = find.find_models(unseen[0], k=30, store=store_b, vectors=vectors_b)
            facts = {r.model: r.metadata["params_from"] for r in found}
            assert facts[llama] == "meta-llama/Meta-Llama-3-8B" and facts[_key(store_b, MISTRAL)] is None
        finally:
            vectors_b.close()
    pull(str(older))  # the same records as the previous release wrote them: the count is the repo's own
    with open_store() as store_b:
        assert (store_b.get_model(llama).num_parameters, store_b.get_model(llama).num_parameters_from) == (
            8_000_000_000, None)
    # a count of 0 (as a publisher stored a Hub repo's empty safetensors total before) is no size: unknown
    zero = _copy(tmp_path / "d", tmp_path / "zero")
    _rewrite_models(zero, lambda t: t.set_column(t.schema.get_field_index("num_parameters"), "num_parameters",
                                                 pa.array([0] * t.num_rows, pa.int64())))
    _home(tmp_path, monkeypatch, "home_c")
    pull(str(zero))
    with open_store() as store_b:
        assert {store_b.get_model(m).num_parameters for m in (llama, _key(store_b, MISTRAL))} == {None}


def test_a_license_an_older_taskspace_pulled_in_capitals_reaches_the_pulled_index_with_the_next_pass(
        publisher, tmp_path, monkeypatch, encoder):
    """A home an older taskspace pulled records into holds a license as published (`Llama3`) in SQL and its index.
    The first pass of this one stores it in lower case and pushes the pulled space's points, though it solves nothing
    there (the space is read-only): `--license llama3` finds the model and `check` is clean. Before, the pass left
    the pulled space alone after lowering SQL: the filter missed the model and `check` said stale until a reindex."""
    from indexer import find, sync

    store_a, _, unseen = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d"))
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        key = _key(store_b, LLAMA)
        store_b.upsert_models([{"key": key, "license": "Llama3"}])  # what the older taskspace's pull stored
        sync.reindex(store_b, vectors_b)
        assert all(c.clean for c in sync.check(store_b, vectors_b))
        report = Indexer(store_b, vectors_b, encoder=encoder).run()
        assert store_b.get_model(key).license == "llama3"
        found = find.find_models(unseen[0], k=5, filters={"licenses": ["llama3"]}, store=store_b, vectors=vectors_b)
        assert [r.model for r in found] == [key]
        assert all(c.clean for c in sync.check(store_b, vectors_b))
        assert report.counts["read_only"] and list(report.counts["pushed_other"].values()) == [1]
    finally:
        vectors_b.close()
        store_b.close()


def test_a_pass_on_a_home_pulled_with_another_method_leaves_searches_on_the_pulled_space(publisher, tmp_path,
                                                                                        monkeypatch, encoder):
    """Records pulled into a home configured for another method (or encoder) than the publisher's: searches take the
    pulled space, and still do after an indexing pass (a worker started on the pulled home), which has no results to
    build the configured space from. Before, the pass created the configured space empty and every search without
    `--space` took it: no model found, the pulled records unreachable but by `--space`."""
    from indexer import find

    store_a, _, unseen = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    monkeypatch.setenv("TASKSPACE_METHOD", "auto")
    reset_settings()
    pull(str(tmp_path / "d"))
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        want = [r.model for r in find.find_models(unseen[0], k=5, store=store_b, vectors=vectors_b)]
        assert len(want) == 5
        report = Indexer(store_b, vectors_b, encoder=encoder).run()
        assert report.status == "ok", report.errors
        got = [r.model for r in find.find_models(unseen[0], k=5, store=store_b, vectors=vectors_b)]
        assert got == want
    finally:
        vectors_b.close()
        store_b.close()


def test_a_pulled_model_page_shows_the_published_accuracy_per_benchmark(publisher, tmp_path, monkeypatch, encoder):
    """A model on a pulled home (no per-prompt outcomes there): its observed accuracy per benchmark is the one its
    record was published with, n unknown (null), said to be "as published (no per-prompt results here)", in the
    library, `taskspace model` and GET /v1/models/{id}; before, an empty Observed table under "N prompts measured".
    The publisher's own page keeps its measured n and no note."""
    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from indexer.browse import list_models, model_detail
    from indexer.cli import app
    from indexer.serve import Service, create_app

    store_a, vectors_a, _ = publisher
    top = list_models(store=store_a, vectors=vectors_a)[0]["model"]
    published = "as published (no per-prompt results here)"
    mine = model_detail(top, store=store_a, vectors=vectors_a)
    assert mine["benchmarks"] and all(b["n"] > 0 for b in mine["benchmarks"]) and mine.get("benchmarks_note") is None
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d"))
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        theirs = model_detail(top, store=store_b, vectors=vectors_b)
    finally:
        vectors_b.close()
        store_b.close()
    assert theirs["n_prompts"] == mine["n_prompts"] > 0
    assert [b["name"] for b in theirs["benchmarks"]] == [b["name"] for b in mine["benchmarks"]]
    assert [b["accuracy"] for b in theirs["benchmarks"]] == pytest.approx([b["accuracy"] for b in mine["benchmarks"]],
                                                                           abs=1e-4)
    # the n each benchmark's accuracy was published with (before, dropped by the pull: null)
    assert [b["n"] for b in theirs["benchmarks"]] == [b["n"] for b in mine["benchmarks"]]
    assert theirs["benchmarks_note"] == published
    out = CliRunner().invoke(app, ["model", top])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert "as published (no per-prompt results here)" in text and "unknown" not in text
    assert all(b["name"] in text for b in mine["benchmarks"])
    with TestClient(create_app(Service(encoder=encoder))) as client:
        got = client.get("/v1/models/" + top).json()
    assert got["benchmarks"] == theirs["benchmarks"] and got["benchmarks_note"] == published


def test_a_pulled_home_shows_the_published_n_of_each_benchmark_accuracy(publisher, tmp_path, monkeypatch, capsys):
    """The records carry each benchmark's observed accuracy with its n (outcome cells); the pull kept the accuracy and
    dropped the n, so a pulled home said "57% (published)" / n unknown where its publisher said "57% of 30". Now the
    pull keeps it (``model_vectors.counts``, the index payload's ``n_by_benchmark``): a benchmark search's "measured on
    it", the evidence's benchmarks and the model page give the publisher's n; records that carry no n still pull,
    n unknown."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from indexer.browse import model_detail
    from indexer.cli_find import _print_result
    from indexer.find import find_models as find

    store_a, vectors_a, _ = publisher
    law = CATEGORIES[1]
    mine = find(benchmark=law, k=5, store=store_a, vectors=vectors_a)
    top = mine.results[0].model
    page_a = model_detail(top, store=store_a, vectors=vectors_a)["benchmarks"]
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")

    def pulled(home):
        _home(tmp_path, monkeypatch, home)
        pull(str(tmp_path / "d"))
        store_b, vectors_b = open_store(), VectorStore.from_settings()
        try:
            return (find(benchmark=law, k=5, store=store_b, vectors=vectors_b),
                    model_detail(top, store=store_b, vectors=vectors_b)["benchmarks"])
        finally:
            vectors_b.close()
            store_b.close()

    theirs, page_b = pulled("home_b")
    assert [r.model for r in theirs] == [r.model for r in mine]
    for r, a in zip(theirs, mine):
        assert r.evidence.benchmarks[0]["name"] == law and r.evidence.benchmarks[0]["n"] == 30
        assert [(b["name"], b["n"]) for b in r.evidence.benchmarks] == [(b["name"], b["n"]) for b in a.evidence.benchmarks]
    assert [(b["name"], b["n"]) for b in page_b] == [(b["name"], b["n"]) for b in page_a] and page_b[0]["n"] > 0
    _print_result(theirs)
    out = capsys.readouterr().out
    assert " of 30" in out and "(published)" not in out
    # records published without n (a hand-made or older copy): they pull, n unknown, "(published)" in the table
    f = next((tmp_path / "d" / "models").glob("*.parquet"))
    t = pq.read_table(f)
    col = t.column("benchmarks")
    bare = pa.array([[dict(b, n=None) for b in row] for row in col.to_pylist()], type=col.type)
    pq.write_table(t.set_column(t.schema.get_field_index("benchmarks"), "benchmarks", bare), f)
    old, page_c = pulled("home_c")
    assert all(b["n"] is None for r in old for b in r.evidence.benchmarks) and all(b["n"] is None for b in page_c)
    _print_result(old)
    assert "(published)" in capsys.readouterr().out


def test_a_pulled_home_gives_the_publishers_accuracy_to_the_last_digit(tmp_path, monkeypatch, encoder):
    """A model's observed accuracy per benchmark, stored with its vector (and so published), is the mean of its
    outcomes in float64, as the publisher's own answers compute it from the outcomes: a pulled home shows the same
    4 digits. Before, it was a float32 mean: 131 of 160 was 0.8187500238 there, so the publisher said 0.8187 and the
    pulled home 0.8188 (on evalarena_code's 800-prompt benchmarks, gpt-4o+cot's cruxeval-output 0.7762 / 0.7763)."""
    from helpers import write_table

    from indexer.find import find_models as find

    rng = np.random.default_rng(3)
    outs = {f"org/m{i}": rng.integers(0, 2, 160).tolist() for i in range(5)}
    outs["org/m0"] = [1] * 131 + [0] * 29  # 131/160 = 0.81875, not a float32
    _home(tmp_path, monkeypatch, "home_a")
    write_table(tmp_path / "src", "bench", outs, 160)
    store, vectors = open_store(), VectorStore.from_settings()
    try:
        Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "src"))])
        (sp,) = store.list_spaces()
        assert {mv.model: mv.accuracy["bench"] for mv in store.load_model_vectors(sp.id)}["org/m0"] == 131 / 160
        mine = find(benchmark="bench", k=5, store=store, vectors=vectors).to_dict()["results"]
        publish("tester/recs", store=store, dry_run=tmp_path / "d")
    finally:
        vectors.close()
        store.close()
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d"))
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        theirs = find(benchmark="bench", k=5, store=store_b, vectors=vectors_b).to_dict()["results"]
    finally:
        vectors_b.close()
        store_b.close()
    assert [r["model"] for r in theirs] == [r["model"] for r in mine]
    assert {r["model"]: r["evidence"]["benchmarks"] for r in theirs} == {r["model"]: r["evidence"]["benchmarks"]
                                                                         for r in mine}
    assert next(r for r in theirs if r["model"] == "org/m0")["evidence"]["benchmarks"] == [
        {"name": "bench", "accuracy": 0.8187, "n": 160}]


def test_ingesting_raw_results_lifts_read_only(publisher, tmp_path, monkeypatch):
    from indexer.pipeline import run_index

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d"))
    report = run_index([SourceSpec(str(tmp_path / "sample"))])  # raw results for the pulled space's models
    assert report.status == "ok" and "read_only" not in report.counts and report.counts["solved"] > 0
    store_b = open_store()
    try:
        (sp,) = store_b.list_spaces()
        assert store_b.space_origin(sp.id) is None and not store_b.is_read_only(sp.id)
    finally:
        store_b.close()


def test_a_pull_into_a_home_with_raw_results_warns_that_a_pass_replaces_the_records(publisher, tmp_path, monkeypatch,
                                                                                      caplog):
    """Pulled into a home that holds raw results of its own (another method's space built here, of 3 of the 25
    models), a space is not read-only: the pull warns, naming the space, that the command whose pass solves it
    (`taskspace index`: the configured space) re-solves it from this home's results and removes the pulled models
    measured nowhere here (22 of 25), and to pull into a home of its own to keep the records; the next pass does just
    that. Before, found pulling a dataset into a home indexed with TASKSPACE_METHOD=auto: the pull said nothing, and
    the next `taskspace index` left 25 of the 147 pulled models ("models removed 122")."""
    import logging

    from indexer.pipeline import run_index

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    few = tmp_path / "few"
    few.mkdir()
    shutil.copy(tmp_path / "sample" / "prompts.jsonl", few / "prompts.jsonl")
    lines = (tmp_path / "sample" / "outcomes.csv").read_text().splitlines(keepends=True)
    keep = sorted({ln.split(",")[0] for ln in lines[1:]})[:3]
    (few / "outcomes.csv").write_text(lines[0] + "".join(ln for ln in lines[1:] if ln.split(",")[0] in keep))
    _home(tmp_path, monkeypatch, "home_b")
    monkeypatch.setenv("TASKSPACE_METHOD", "auto")
    reset_settings()
    assert run_index([SourceSpec(str(few))]).status == "ok"
    monkeypatch.delenv("TASKSPACE_METHOD")
    reset_settings()
    with caplog.at_level(logging.WARNING, logger="indexer.publish"):
        res = pull(str(tmp_path / "d"))
    (name,) = [s["space"] for s in res.spaces]
    said = " ".join(r.getMessage() for r in caplog.records if "not read-only" in r.getMessage())
    assert f"space {name} pulled from {tmp_path / 'd'}" in said and "this home holds raw results" in said, said
    assert "`taskspace index`" in said and "22 of the 25 pulled models" in said, said
    assert "TASKSPACE_HOME of its own" in said, said
    report = run_index([])
    assert report.status == "ok"
    store_b = open_store()
    try:
        sp = next(s for s in store_b.list_spaces() if s.method == "auto-mc")
        assert len(store_b.model_vector_keys(sp.id)) == 3
    finally:
        store_b.close()


def test_a_repo_that_moved_meanwhile_is_not_overwritten(publisher, hub_server, monkeypatch):
    from indexer.errors import HubError
    from indexer.hub import HubClient

    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    publish("tester/recs", store=store_a)
    client = HubClient()
    snap = client.repo_snapshot("tester/recs")
    client.commit("tester/recs", {"notes.txt": b"someone else"}, [], "another writer", parent=snap.sha)
    with pytest.raises(HubError, match="changed since this publish read it"):
        client.commit("tester/recs", {"README.md": b"---\n---\nx"}, [], "stale", parent=snap.sha)
    assert [c["summary"] for c in hub_server.commits][-1] == "another writer"


def test_a_pulled_index_says_measured_near_is_unknown_not_no(publisher, tmp_path, monkeypatch, encoder, capsys):
    """A pulled index holds no per-prompt outcomes. From records that carry no pattern's observed prompts (published
    before they did), whether a model was measured near the query is unknown there (null in the library and the
    JSON, "unknown" in the table), never "no"; the publisher's own index says yes, and a query with no indexed prompt
    near it is "no" in both (known without any outcome). From records that carry them, the pulled index says what
    the publisher says."""
    from fastapi.testclient import TestClient

    from indexer.cli_find import _print_result
    from indexer.find import find_models as find
    from indexer.serve import Service, create_app

    store_a, vectors_a, _ = publisher
    indexed = store_a.prompt_texts(store_a.benchmark_prompts(CATEGORIES[0])[:1])[0]  # similarity 1 to itself
    far = "Wie spät ist es in Tokio, wenn es in Berlin Mittag ist?"
    mine = find(indexed, k=5, store=store_a, vectors=vectors_a)
    assert all(r.coverage.measured_near is True and r.coverage.near >= 1 for r in mine)
    away = find(far, k=5, store=store_a, vectors=vectors_a)
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_new")
    pull(str(tmp_path / "d"))
    store_n, vectors_n = open_store(), VectorStore.from_settings()
    try:
        assert not store_n.has_outcomes()
        for text, at_a in ((indexed, mine), (far, away)):
            got = find(text, k=5, store=store_n, vectors=vectors_n)
            assert [(r.model, r.to_dict()["coverage"]) for r in got] == [(r.model, r.to_dict()["coverage"])
                                                                         for r in at_a]
    finally:
        vectors_n.close()
        store_n.close()
    _drop_observed(tmp_path / "d")  # as published before the patterns carried their observed prompts
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d"))
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        assert not store_b.has_outcomes()
        theirs = find(indexed, k=5, store=store_b, vectors=vectors_b)
        assert [r.model for r in theirs] == [r.model for r in mine]
        for r in theirs:
            assert r.coverage.measured_near is None and r.coverage.near is None and r.coverage.benchmarks is None
            assert r.to_dict()["coverage"] == {"near": None, "measured_near": None, "benchmarks": None}
        # the nearest benchmarks' accuracy and n: the published ones, as measured at the publisher
        for r, a in zip(theirs, mine):
            assert [b["name"] for b in r.evidence.benchmarks] == [b["name"] for b in a.evidence.benchmarks]
            assert r.evidence.benchmarks and [b["n"] for b in r.evidence.benchmarks] == [
                b["n"] for b in a.evidence.benchmarks]
            assert [b["accuracy"] for b in r.evidence.benchmarks] == pytest.approx(
                [b["accuracy"] for b in a.evidence.benchmarks], abs=1e-4)
        _print_result(theirs)
        out = capsys.readouterr().out
        assert "unknown" in out and "measured near unknown" in out and " no " not in out
        # a model page: the benchmarks its published vector was fitted on are "measured", as at the publisher
        from indexer.browse import model_detail

        top = theirs.results[0].model
        page = {s["benchmark"]: s["measured"] for s in model_detail(top, store=store_b, vectors=vectors_b)["strengths"]}
        assert page and page == {s["benchmark"]: s["measured"]
                                 for s in model_detail(top, store=store_a, vectors=vectors_a)["strengths"]}
        assert any(page.values())
        # no indexed prompt is near this one (all below NEAR_SIMILARITY): "no" is known here as at the publisher
        far_b = find(far, k=5, store=store_b, vectors=vectors_b)
        assert [r.coverage.measured_near for r in far_b] == [r.coverage.measured_near for r in away] == [False] * 5
    finally:
        vectors_b.close()
        store_b.close()
    with TestClient(create_app(Service(encoder=encoder))) as client:
        got = client.post("/v1/find", json={"prompts": [indexed], "k": 5}).json()
        assert [r["coverage"]["measured_near"] for r in got["results"]] == [None] * 5


def test_a_pooled_index_with_two_answer_formats_pulls_with_its_per_format_prior(publisher, tmp_path, monkeypatch,
                                                                                encoder):
    """The default keeps one prior per answer format (levels = level-deviation-v2): prompts without options (and
    models seen only on them, two seen on both) added to the multiple-choice subset give two different prior rows;
    the published records carry both, and a pulled home folds queries exactly as the publisher (same answers)."""
    from indexer import represent

    store_a, vectors_a, unseen = publisher
    folder = tmp_path / "code"
    folder.mkdir()
    rng = np.random.default_rng(0)
    verbs = ["reverses a list", "sorts a dictionary by value", "parses a date string", "merges two sorted lists",
             "counts the words in a file", "checks whether a number is prime", "flattens a nested list",
             "computes a moving average", "removes duplicates keeping order", "finds the longest common prefix"]
    prompts = [{"prompt_id": f"code-{k}", "benchmark": "toycode", "text": f"Write a Python function that {v}{s}"}
               for k, (v, s) in enumerate((v, s) for s in (".", " efficiently.", " without imports.") for v in verbs)]
    (folder / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts))
    coders = [f"toy-coder-{k}" for k in range(8)] + [LLAMA, MISTRAL]  # two also seen with options
    rows = [f"{m},{p['prompt_id']},{int(rng.random() < 0.2 + 0.06 * k)}" for k, m in enumerate(coders) for p in prompts]
    (folder / "outcomes.csv").write_text("model,prompt_id,correct\n" + "\n".join(rows) + "\n")
    shutil.copy(SAMPLE / "PROVENANCE.md", folder / "PROVENANCE.md")
    Indexer(store_a, vectors_a, encoder=encoder).run([SourceSpec(str(folder))], refresh_prior=True)
    (sp,) = store_a.list_spaces()
    assert represent.prior_formats(sp.params) == 2
    u = represent.prior_matrix(store_a.get_space_prior(sp.id).vector, sp)
    assert u.shape[0] == 2 and not np.allclose(u[0], u[1])  # the options models' mean and the others'
    queries = [{"prompts": [unseen[0]]}, {"prompts": ["Write a Python function that reverses a linked list."]},
               {"benchmark": "toycode"}, {"benchmark": CATEGORIES[0]}]
    want = _answers(store_a, vectors_a, queries)
    assert any(m[0] == "toy-coder-7" for m in want[1])  # a code query reaches the models seen on code
    publish("tester/pooled", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_pooled")
    pull(str(tmp_path / "d"))
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        (sp_b,) = store_b.list_spaces()
        np.testing.assert_array_equal(represent.prior_matrix(store_b.get_space_prior(sp_b.id).vector, sp_b), u)
        assert _answers(store_b, vectors_b, queries) == want
    finally:
        vectors_b.close()
        store_b.close()


def test_a_repull_after_the_publisher_renamed_a_benchmark_lists_only_the_published_ones(publisher, tmp_path,
                                                                                        monkeypatch, encoder):
    """The publisher renames a benchmark and publishes again; pulling again lists the published benchmarks only.
    Before, the old name stayed in `taskspace benchmarks` with 0 prompts and 0 models, and `search --benchmark OLD`
    said its vector was not computed yet and to run `taskspace index` (which does nothing on a pulled home)."""
    from indexer.browse import list_benchmarks
    from indexer.errors import NotFoundError
    from indexer.find import find_models as find

    store_a, vectors_a, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d1")
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d1"))
    _home(tmp_path, monkeypatch, "home_a")
    prompts = tmp_path / "sample" / "prompts.jsonl"
    prompts.write_text(prompts.read_text().replace('"mmlu_pro/law"', '"mmlu_pro/jurisprudence"'))
    assert Indexer(store_a, vectors_a, encoder=encoder).run().exit_code == 0
    want = sorted(r["name"] for r in list_benchmarks(store=store_a))
    assert "mmlu_pro/law" not in want and "mmlu_pro/jurisprudence" in want
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d2")
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d2"))
    store_b = open_store()
    try:
        assert sorted(r["name"] for r in list_benchmarks(store=store_b)) == want
        with pytest.raises(NotFoundError, match="unknown benchmark"):
            find(benchmark="mmlu_pro/law", store=store_b)
    finally:
        store_b.close()


def test_a_dry_run_path_that_is_a_file_is_a_config_error_before_reading_the_records(tmp_path, monkeypatch):
    """`taskspace publish ORG/NAME --dry-run FILE` (or a path under a file): one line naming --dry-run and the file,
    exit 2, before the records are read; before, a FileExistsError traceback after building them."""
    _home(tmp_path, monkeypatch, "home_c")
    (tmp_path / "afile").write_text("x")
    for target in (tmp_path / "afile", tmp_path / "afile" / "out"):
        with pytest.raises(ConfigError, match=f"^dry_run='{re.escape(str(target))}': .*{'is a file'}"):
            publish("tester/recs", dry_run=target)
    res = subprocess.run([sys.executable, "-m", "indexer.cli", "publish", "tester/recs", "--dry-run",
                          str(tmp_path / "afile")], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr[-2000:]
    assert res.stderr.startswith(f"error: --dry-run {tmp_path / 'afile'}: is a file") and "Traceback" not in res.stderr
    assert not (tmp_path / "home_c" / "taskspace.db").exists()  # nothing was opened


def test_a_dry_run_into_an_earlier_one_holds_exactly_the_new_records(publisher, tmp_path, monkeypatch):
    """`publish --dry-run D` twice: D holds exactly what a publish to an empty repository commits; before, record
    files of the earlier run stayed (a copied models/old-space.parquet was still there). Files outside the record
    layout are left alone, and a non-empty folder that is no earlier dry run is refused before anything is read or
    removed."""
    store_a, _, _ = publisher
    d = tmp_path / "d"
    first = publish("tester/recs", store=store_a, dry_run=d)
    model_file = next(f for f in first.files if f.startswith("models/"))
    shutil.copy(d / model_file, d / "models" / "old-space.parquet")
    shutil.copy(d / model_file.replace("models/", "patterns/"), d / "patterns" / "old-space.parquet")
    (d / "notes.txt").write_text("mine")
    again = publish("tester/recs", store=store_a, dry_run=d)
    written = sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file())
    assert written == sorted(again.files + ["notes.txt"]) and again.files == first.files
    assert again.deleted == ["models/old-space.parquet", "patterns/old-space.parquet"]
    other = tmp_path / "other"
    (other / "models").mkdir(parents=True)
    (other / "models" / "mine.parquet").write_bytes(b"x")
    with pytest.raises(ConfigError, match=f"^dry_run='{re.escape(str(other))}': the folder is not empty"):
        publish("tester/recs", store=store_a, dry_run=other)
    assert (other / "models" / "mine.parquet").read_bytes() == b"x"


def test_a_dry_run_that_fails_while_writing_leaves_the_earlier_one_whole(publisher, tmp_path, monkeypatch):
    """`publish --dry-run D` over an earlier dry run, failing while it writes (a full disk at the patterns file):
    every file of the earlier run is as it was (a dropped space's file too), no temporary file is left, and the error
    names `--dry-run`, the file and that nothing was written (exit 2 from the CLI). Before, the files written before
    the failure (README.md, benchmarks.parquet, the models file) replaced the earlier ones beside its old
    spaces.parquet and patterns: a mixed set that looks complete to `taskspace pull`, and an OSError traceback."""
    import errno
    import pathlib

    store_a, _, _ = publisher
    d = tmp_path / "d"
    first = publish("tester/recs", store=store_a, dry_run=d)
    model_file = next(f for f in first.files if f.startswith("models/"))
    shutil.copy(d / model_file, d / "models" / "old-space.parquet")  # a space the next run no longer writes
    (d / "README.md").write_text("the earlier card\n")  # so that a file the failed run wrote would show
    before = {p.relative_to(d).as_posix(): p.read_bytes() for p in d.rglob("*") if p.is_file()}
    real = pathlib.Path.write_bytes

    def disk_full_at_the_patterns(self, data):
        if "patterns" in str(self):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, data)

    monkeypatch.setattr(pathlib.Path, "write_bytes", disk_full_at_the_patterns)
    with pytest.raises(ConfigError, match=rf"^dry_run='{re.escape(str(d))}': cannot write patterns/\S+: No space left "
                                          r"on device; nothing of this run was written"):
        publish("tester/recs", store=store_a, dry_run=d)
    after = {p.relative_to(d).as_posix(): p.read_bytes() for p in d.rglob("*") if p.is_file()}
    assert after == before
    monkeypatch.setattr(pathlib.Path, "write_bytes", real)
    again = publish("tester/recs", store=store_a, dry_run=d)
    assert again.deleted == ["models/old-space.parquet"] and (d / "README.md").read_text() != "the earlier card\n"
    assert sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file()) == sorted(again.files)


# -- a sparse, mixed index (multiple-choice MMLU-Pro + free-form code) whose map is coverage-aware --

CODE_PER_BENCHMARK = 40


def _code_subset(src: Path, folder: Path, per: int = CODE_PER_BENCHMARK) -> list[str]:
    """The first ``per`` prompts of each of evalarena_code's four benchmarks with every outcome on them (models
    measured on some benchmarks only: a sparse index), with its SOURCE.md; a few prompts of each benchmark left out
    are returned as queries the index has not seen."""
    import gzip

    folder.mkdir(parents=True)
    keep, count, unseen = set(), {}, []
    with open(src / "prompts.jsonl") as f, open(folder / "prompts.jsonl", "w") as out:
        for line in f:
            row = json.loads(line)
            n = count.get(row["benchmark"], 0)
            count[row["benchmark"]] = n + 1
            if n < per:
                keep.add(row["prompt_id"])
                out.write(line)
            elif n < per + 2:
                unseen.append(row["text"])
    with gzip.open(src / "outcomes.csv.gz", "rt") as f, open(folder / "outcomes.csv", "w") as out:
        out.write(next(f))
        out.writelines(line for line in f if line.split(",")[1] in keep)
    shutil.copy(src / "SOURCE.md", folder / "SOURCE.md")
    return unseen


@pytest.fixture
def mixed_publisher(tmp_path, monkeypatch, encoder, shared_data):
    """Home M: the sample subset (25 models on 90 multiple-choice prompts) and 160 code prompts of evalarena_code
    (132 models, each measured on some of its four benchmarks), indexed in one pass: its fitted map is coverage-aware."""
    yield from _sample_and_code(tmp_path, monkeypatch, encoder, shared_data, "home_m")


def _sample_and_code(tmp_path, monkeypatch, encoder, shared_data, home: str, prefix: str = ""):
    """The sample subset and the evalarena_code subset indexed in one pass into ``home`` (the code models' names
    prefixed by ``prefix``); yields (store, vectors, unseen sample prompts, unseen code prompts)."""
    _home(tmp_path, monkeypatch, home)
    unseen = _subset(tmp_path / "sample")
    code = _code_subset(shared_data / "evalarena_code", tmp_path / "code")
    if prefix:
        rows = (tmp_path / "code" / "outcomes.csv").read_text().splitlines()
        (tmp_path / "code" / "outcomes.csv").write_text("\n".join([rows[0], *(prefix + r for r in rows[1:])]) + "\n")
    store, vectors = open_store(), VectorStore.from_settings()
    r = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "sample")),
                                                      SourceSpec(str(tmp_path / "code"))])
    assert r.status == "ok", r.errors
    yield store, vectors, unseen, code
    vectors.close()
    store.close()


def _mixed_queries(store, unseen: list[str], code: list[str]) -> list[dict]:
    """15 queries: benchmark queries of both kinds, unseen and indexed prompts of both kinds, several prompts,
    ``lcb``, ``prefer_smaller``, a question without its options."""
    indexed = store.prompt_texts(store.benchmark_prompts("humaneval")[:1] + store.benchmark_prompts("mbpp")[:1]
                                 + store.benchmark_prompts(CATEGORIES[1])[:1])
    out = [{"benchmark": b} for b in (CATEGORIES[1], "humaneval", "cruxeval-output", "mbpp")]
    out += [{"prompts": [t]} for t in code[:3] + unseen[:1] + indexed]
    out += [{"prompts": code[4:6]}, {"prompts": [code[6]], "rank": "lcb"}, {"benchmark": "mbpp", "rank": "lcb"},
            {"prompts": [unseen[3].split("\nA.")[0]], "prefer_smaller": 0.05}]
    return out


def _full_answers(store, vectors, queries) -> list[list[dict]]:
    """Each query's top 8 as :func:`indexer.find_models` answers (the JSON of ``taskspace search --json``): every
    field but the evidence's per-prompt outcomes and per-benchmark counts, which a pulled index does not hold."""
    from indexer.find import find_models as find

    res = []
    for q in queries:
        kw = dict(q)
        got = find(kw.pop("prompts", None), k=8, store=store, vectors=vectors, **kw).to_dict()
        res.append([{k: v for k, v in r.items() if k not in ("evidence", "metadata")}
                    | {"evidence_benchmarks": [b["name"] for b in r["evidence"]["benchmarks"]]}
                    for r in got["results"]])
    return res


def _drop_observed(folder: Path) -> None:
    """The record set as published before patterns carried their observed prompts (no ``observed`` column)."""
    import pyarrow.parquet as pq

    for f in (folder / "patterns").glob("*.parquet"):
        pq.write_table(pq.read_table(f).drop_columns(["observed"]), f)


def test_a_pulled_sparse_mixed_index_answers_as_its_publisher_coverage_included(mixed_publisher, tmp_path,
                                                                                monkeypatch):
    """On a sparse index the map is coverage-aware: a model's logit is ``c L1 + (1 - c) L0``, ``c`` its share of the
    query's nearest indexed prompts it was observed on. The records carry which indexed prompts each coverage
    pattern's models were observed on (patterns/<space>.parquet ``observed``), so a pulled home, which holds no
    per-prompt outcome, computes ``c``, ``coverage.near`` and ``measured_near`` as the publisher does: the same
    models, order, probabilities, intervals and coverage for 15 queries. Before, ``c`` was 1 for every pulled model
    (another order and other probabilities, e.g. on `-b mmlu_pro/law` and code prompts) and coverage "unknown". A
    record set published without them still pulls, and answers as before (coverage unknown)."""
    store_a, vectors_a, unseen, code = mixed_publisher
    (sp_a,) = store_a.list_spaces()
    cal_a = store_a.get_space_calibration(sp_a.id)
    assert cal_a.coverage_aware  # the premise: a coverage-aware map, fitted here
    assert cal_a.region_var is not None  # with its region variance, published and pulled (the map compared below)
    assert len({mv.pattern for mv in store_a.load_model_vectors(sp_a.id)}) > 3  # sparse: several coverage patterns
    queries = _mixed_queries(store_a, unseen, code)
    assert len(queries) == 15
    want = _full_answers(store_a, vectors_a, queries)
    want_lean = _answers(store_a, vectors_a, [q for q in queries if "prefer_smaller" not in q])
    assert all(len(ans) == 8 for ans in want)
    # the premise of the comparison: coverage differs between models and is partial for some (c is not 1 for all)
    covs = [r["coverage"]["near"] for ans in want for r in ans]
    assert None not in covs and 0 in covs and any(c > 0 for c in covs)
    publish("tester/mixed", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_p")
    pulled = pull(str(tmp_path / "d"))
    assert pulled.spaces[0]["prompts"] == 90 + 4 * CODE_PER_BENCHMARK
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        (sp_b,) = store_b.list_spaces()
        assert not store_b.has_outcomes() and store_b.get_space_calibration(sp_b.id) == cal_a
        # every pattern's observed prompts came along: as many as the pattern's posterior counts
        pats = store_b.load_patterns(sp_b.id)
        seen = store_b.pattern_prompts(sp_b.id, list(pats))
        assert set(seen) == set(pats) and all(len(seen[k][1]) == pats[k].n for k in pats)
        assert _full_answers(store_b, vectors_b, queries) == want
        assert _answers(store_b, vectors_b, [q for q in queries if "prefer_smaller" not in q]) == want_lean
    finally:
        vectors_b.close()
        store_b.close()
    # a record set published before the observed prompts: pulls, and says coverage unknown (c = 1) as before
    _drop_observed(tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_old")
    pull(str(tmp_path / "d"))
    store_c, vectors_c = open_store(), VectorStore.from_settings()
    try:
        (sp_c,) = store_c.list_spaces()
        assert store_c.pattern_prompts(sp_c.id, list(store_c.load_patterns(sp_c.id))) == {}
        old = _full_answers(store_c, vectors_c, queries[:2])
        assert all(r["coverage"] == {"near": None, "measured_near": None, "benchmarks": None} for a in old for r in a)
        assert old != want[:2]  # the share of every model taken as 1: another answer than the publisher's
    finally:
        vectors_c.close()
        store_c.close()


def test_the_cards_example_gives_taskspaces_probabilities_on_a_coverage_aware_index(mixed_publisher, tmp_path,
                                                                                    encoder):
    """On a sparse, mixed index (the map coverage-aware: a model's logit is ``c L1 + (1 - c) L0``) the card's example
    computes each model's share ``c`` of the query's 10 nearest indexed prompts from the records (the prompts' rows
    and its pattern's ``observed`` bits), so it prints taskspace's probabilities and top 5 (``taskspace search
    --json``), for code prompts and prompts with options, still in ten lines. Before, it took ``c = 1`` for every
    model: on the sample plus evalarena_code a code prompt's probabilities were up to 0.08 off and its top 5 in
    another order."""
    from indexer.find import find_models as find
    from indexer.space import space_name

    store_a, vectors_a, unseen, code = mixed_publisher
    (sp,) = store_a.list_spaces()
    assert store_a.get_space_calibration(sp.id).coverage_aware  # the premise
    publish("tester/mixed", store=store_a, dry_run=tmp_path / "d")
    card = (tmp_path / "d" / "README.md").read_text()
    example = card.split(f"<!-- taskspace-example:{space_name(sp)} -->\n```python\n", 1)[1].split("```", 1)[0]
    lines = card.split(f"<!-- taskspace-interval:{space_name(sp)} -->\n```python\n", 1)[1].split("```", 1)[0]
    assert len(example.strip().splitlines()) <= 12
    partial = 0
    for prompt in code[:3] + unseen[:2]:
        want = find(prompt, k=1000, store=store_a, vectors=vectors_a).to_dict()
        assert not want["query"]["options_filled"]  # a row the example builds as taskspace does
        ns = {"encode": lambda texts: encoder.encode(list(texts)), "prompt": prompt}
        printed = run_card_example(example + "\n" + lines, ns, tmp_path / "d")
        models = [str(m) for m in ns["t"]["model"].to_pylist()]
        prob = dict(zip(models, ns["p"].tolist()))
        iv = dict(zip(models, zip(ns["lo"].tolist(), ns["hi"].tolist())))  # the card's interval lines
        assert len(want["results"]) == len(models)
        for r in want["results"]:
            assert prob[r["model"]] == pytest.approx(r["probability"], abs=2e-5), (prompt[:40], r["model"])
            assert iv[r["model"]] == pytest.approx(tuple(r["interval"]), abs=2e-5), (prompt[:40], r["model"])
        assert [ln.split(" ")[0] for ln in printed.splitlines()] == [r["model"] for r in want["results"][:5]]
        partial += sum(c < 1 for c in ns["cv"])
    assert partial  # some model measured on none or part of a query's neighbourhood: c mattered


@pytest.fixture
def unlinked_publisher(tmp_path, monkeypatch, encoder, shared_data):
    """Home U: :func:`mixed_publisher`'s sources with evalarena_code's models renamed (``code/<name>``), so that no
    model is measured on both: the map's benchmarks fall in two groups no model links (Calibration.links), each with
    its average model (Calibration.centres)."""
    yield from _sample_and_code(tmp_path, monkeypatch, encoder, shared_data, "home_u", prefix="code/")


def test_the_cards_example_and_a_pull_score_a_model_nothing_links_to_the_query_as_taskspace_does(
        unlinked_publisher, tmp_path, monkeypatch, encoder):
    """On an index whose benchmarks fall in groups no model links, a model measured only in another group than the
    query's nearest prompts scores, on those prompts, their group's average model: the card's example computes those
    averages from the records (the models' vectors and benchmarks, the prompts' benchmarks) and prints taskspace's
    probabilities and top 5 for code prompts and prompts with options; a pulled home (the averages computed from the
    records' vectors) answers as the publisher does. Before, the example and every answer scored such a model by its
    own level there."""
    from indexer.find import find_models as find
    from indexer.space import space_name

    store_a, vectors_a, unseen, code = unlinked_publisher
    (sp,) = store_a.list_spaces()
    cal = store_a.get_space_calibration(sp.id)
    assert cal.links is not None and len(cal.links) == 2 and cal.centres is not None  # the premise
    publish("tester/unlinked", store=store_a, dry_run=tmp_path / "d")
    card = (tmp_path / "d" / "README.md").read_text()
    example = card.split(f"<!-- taskspace-example:{space_name(sp)} -->\n```python\n", 1)[1].split("```", 1)[0]
    lines = card.split(f"<!-- taskspace-interval:{space_name(sp)} -->\n```python\n", 1)[1].split("```", 1)[0]
    assert len(example.strip().splitlines()) <= 12
    queries = code[:3] + unseen[:2]
    want = {}
    for prompt in queries:
        want[prompt] = find(prompt, k=1000, store=store_a, vectors=vectors_a).to_dict()
        ns = {"encode": lambda texts: encoder.encode(list(texts)), "prompt": prompt}
        printed = run_card_example(example + "\n" + lines, ns, tmp_path / "d")
        models = [str(m) for m in ns["t"]["model"].to_pylist()]
        prob = dict(zip(models, ns["p"].tolist()))
        iv = dict(zip(models, zip(ns["lo"].tolist(), ns["hi"].tolist())))  # the card's interval lines
        assert len(want[prompt]["results"]) == len(models)
        for r in want[prompt]["results"]:
            assert prob[r["model"]] == pytest.approx(r["probability"], abs=2e-5), (prompt[:40], r["model"])
            assert iv[r["model"]] == pytest.approx(tuple(r["interval"]), abs=2e-5), (prompt[:40], r["model"])
        assert [ln.split(" ")[0] for ln in printed.splitlines()] == [r["model"] for r in want[prompt]["results"][:5]]
    # at a code prompt the sample's models (MMLU-Pro only) all score the code group's average model
    at_code = {r["model"]: r["probability"] for r in want[code[0]]["results"]}
    sample = [m for m in at_code if not m.startswith("code/")]
    assert len(sample) == 25 and max(at_code[m] for m in sample) - min(at_code[m] for m in sample) < 1e-4
    _home(tmp_path, monkeypatch, "home_pu")
    pull(str(tmp_path / "d"))
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        (sp_b,) = store_b.list_spaces()
        np.testing.assert_allclose(store_b.get_space_calibration(sp_b.id).centres, cal.centres, rtol=0, atol=1e-9)
        for prompt in queries:
            got = find(prompt, k=1000, store=store_b, vectors=vectors_b).to_dict()
            assert [(r["model"], round(r["probability"], 6)) for r in got["results"]] == \
                [(r["model"], round(r["probability"], 6)) for r in want[prompt]["results"]]
    finally:
        vectors_b.close()
        store_b.close()


def test_pulling_records_published_without_coverage_warns_that_answers_differ_from_the_publishers(
        mixed_publisher, tmp_path, monkeypatch, caplog):
    """Records published by a taskspace from before the patterns carried their observed prompts, of a space whose map
    is coverage-aware: the pull says that this installation counts every model as measured near every query, so its
    answers can differ from the publisher's, and that publishing again adds what is missing; `--json` gives
    `coverage_known` false (true for records that carry it, which pull without the warning). Before, nothing said so
    (docs/PUBLISHING.md alone): the pulled home answered otherwise than its publisher without a word."""
    import logging

    store_a, _, _, _ = mixed_publisher
    (sp_a,) = store_a.list_spaces()
    assert store_a.get_space_calibration(sp_a.id).coverage_aware  # the premise
    publish("tester/mixed", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_new")
    with caplog.at_level(logging.WARNING, logger="indexer.publish"):
        assert pull(str(tmp_path / "d")).spaces[0]["coverage_known"] is True
    assert "do not say which indexed prompts" not in caplog.text
    _drop_observed(tmp_path / "d")  # as published before the patterns carried their observed prompts
    _home(tmp_path, monkeypatch, "home_old")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="indexer.publish"):
        got = pull(str(tmp_path / "d"))
    assert got.spaces[0].get("coverage_known") is False
    assert (f"pull: the records of space {got.spaces[0]['space']} from "
            f"{tmp_path / 'd'} do not say which indexed prompts each model was measured on") in caplog.text
    assert "can differ from the publisher's" in caplog.text and "`taskspace publish`" in caplog.text



def test_publishing_a_space_with_out_of_date_vectors_warns_naming_it_and_what_to_do(publisher, tmp_path, monkeypatch,
                                                                                    caplog):
    """A space whose models' vectors are missing or older than their results: results ingested since the last pass
    (the warning says to run `taskspace index` first), or a space the configured method did not build (a home an older
    taskspace indexed with its default method, which no pass updates: the warning names the configured method's space
    for `--space`). The records are still published as they are. Before, without a word: an upgraded home published its
    old space's vectors, fitted on last month's results and missing every model added since."""
    import logging

    from helpers import outcomes, write_table
    from indexer.ingest import ingest

    store_a, _, _ = publisher
    (sp,) = store_a.list_spaces()
    with caplog.at_level(logging.WARNING, logger="indexer.publish"):
        publish("tester/x", store=store_a, dry_run=tmp_path / "d0")
    assert "older than their results" not in caplog.text  # nothing stale: nothing said
    write_table(tmp_path / "new", "alpha", outcomes(np.random.default_rng(0), ["org/new-model"], 6), 6)
    ingest(str(tmp_path / "new"), store=store_a)  # ingested, no pass since
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="indexer.publish"):
        res = publish("tester/x", store=store_a, dry_run=tmp_path / "d1")
    assert res.dry_run and (tmp_path / "d1" / "spaces.parquet").exists()  # published as it is
    from indexer.space import space_name

    assert (f"publish: space {space_name(sp)} holds 1 model whose vector is missing or older than their results "
            "(org/new-model); results were ingested since the last indexing pass: run `taskspace index` first") in caplog.text
    monkeypatch.setenv("TASKSPACE_METHOD", "auto-mean" if sp.method != "auto-mean" else "auto")
    reset_settings()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="indexer.publish"):
        publish("tester/x", store=store_a, dry_run=tmp_path / "d2")
    assert (f"it was built by method {sp.method}, not as this taskspace builds the configured ") in caplog.text
    assert "so no indexing pass updates it; its records are published as they are" in caplog.text

def test_a_pull_keeps_the_hub_metadata_the_records_leave_empty(publisher, tmp_path, store):
    """Records published without a model's Hub metadata (the publisher never fetched it) pulled into a home that has
    it: the home keeps its licence, parameters, gated, tags; what the records carry (the publisher's licence of
    LLAMA) still replaces it. Before, every empty field overwrote this home's value with null (its fetch time kept,
    so the next pass did not fetch it again): `--license` and `--max-params` filters then dropped the model."""
    from indexer.store.sql_records import ImportedSpace

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    (rec,) = dataset.read(tmp_path / "d")
    yi, llama = _key(store_a, "Yi-34B"), _key(store_a, LLAMA)
    assert store_a.get_model(yi).license is None  # published without metadata
    store.upsert_models([{"key": yi, "license": "apache-2.0", "num_parameters": 34_000_000_000, "gated": "false",
                          "tags": ["text-generation"]},
                         {"key": llama, "license": "other", "num_parameters": 1}])
    store.import_spaces([ImportedSpace(spec=rec.spec, origin="test", revision="r", models=rec.models,
                                       vectors=rec.vectors, patterns=rec.patterns, calibration=rec.calibration,
                                       benchmarks=rec.benchmarks, benchmark_vectors=rec.benchmark_vectors,
                                       created_at=rec.created_at, coverage=rec.coverage)])
    got = store.get_model(yi)
    assert (got.license, got.num_parameters, got.gated, got.tags) == ("apache-2.0", 34_000_000_000, "false",
                                                                       ["text-generation"])
    assert (store.get_model(llama).license, store.get_model(llama).num_parameters) == ("llama3", 8_000_000_000)


def test_a_pull_over_a_space_built_here_says_what_works(publisher, tmp_path, encoder):
    """Pulling records into the home that built the same space from raw results is refused, nothing imported, and
    the message says what works: another TASKSPACE_HOME, or the home's results taken out first (`sources remove`
    and `sources drop`, then `index`: the space is then left without vectors and the pull goes through). Before, it
    said "or drop this one first", naming no command; taskspace has none that drops a space."""
    store_a, vectors_a, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    (sp,) = store_a.list_spaces()
    before = len(store_a.model_vector_keys(sp.id))
    with pytest.raises(InputError) as e:
        pull(str(tmp_path / "d"), store=store_a, vectors=vectors_a)
    msg = str(e.value)
    assert "drop this one first" not in msg and "pull into another TASKSPACE_HOME" in msg
    assert "`taskspace sources remove` and `taskspace sources drop` each source, then `taskspace index`" in msg
    assert len(store_a.model_vector_keys(sp.id)) == before and store_a.space_origin(sp.id) is None
    # what it says works: the results taken out, a pass removes the vectors, and the pull goes through
    (src,) = [s.location for s in store_a.list_sources()]
    from indexer import sourcelist
    from indexer.config import get_settings

    sourcelist.remove(get_settings().sources_file, src)  # `taskspace sources remove`
    store_a.delete_source(src)  # `taskspace sources drop`
    Indexer(store_a, vectors_a, encoder=encoder).run([])
    assert store_a.model_vector_keys(sp.id) == []
    assert pull(str(tmp_path / "d"), store=store_a, vectors=vectors_a).spaces[0]["models"] == before


def test_publish_space_naming_no_space_is_said_before_a_licence_refusal(publisher, tmp_path):
    """`taskspace publish --space NAME` naming no space, in a home with a source under a restricted licence: the error
    names --space and the spaces there (UnknownSpaceError, exit 2), nothing written; before, the licence refusal
    (exit 1) came first, so a typo in --space read as a licence problem."""
    from indexer.errors import UnknownSpaceError

    store_a, _, _ = publisher
    (tmp_path / "sample" / "PROVENANCE.md").write_text("# x\n- License: CC BY-NC-SA 4.0 (non-commercial, share-alike)\n")
    with pytest.raises(UnknownSpaceError, match=r"^space='nope' is not a known space"):
        publish("tester/recs", space="nope", store=store_a, dry_run=tmp_path / "d")
    assert not (tmp_path / "d").exists()


def test_pull_space_naming_no_space_of_the_records_is_a_usage_error(publisher, tmp_path, monkeypatch):
    """`taskspace pull DIR --space NAME` where the records hold no space NAME: a usage error (exit 2, one line)
    naming `--space` and the spaces the records hold, nothing imported, as `--space` of publish, check and reindex is.
    Before, exit 1 (as for bad records) with "no space NAME in the records", the option named nowhere."""
    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    (sp,) = store_a.list_spaces()
    from indexer.space import space_name

    _home(tmp_path, monkeypatch, "home_b")
    out = subprocess.run([sys.executable, "-m", "indexer.cli", "pull", str(tmp_path / "d"), "--space", "nope"],
                         capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line == (f"error: --space 'nope' is not a space of the records; they hold "
                    f"{space_name(sp)} (by index name)")
    _assert_nothing_imported()


@pytest.mark.parametrize("space", [" ", "", "\u200b"])
def test_pull_of_a_blank_space_is_bad_input_naming_space_before_anything_is_read(tmp_path, space):
    """`indexer.publish.pull(spec, space=" ")` (blanks or invisible characters alone) is the bad-input error the other
    library calls give a blank space (an InputError, a ValueError, naming `space`), pointing to the record set's
    spaces.parquet, before the spec is read. Before, " " was looked up in the records ("space=' ' is not a space of
    the records") and "" pulled every space."""
    from indexer.errors import InputError

    with pytest.raises(InputError) as got:
        pull(str(tmp_path / "no-such-folder"), space=space)
    assert isinstance(got.value, ValueError) and got.value.item == "space", got.value
    assert str(got.value) == (f"space must be a space's index name, not {space!r} (blank, or only invisible "
                              "characters); the record set's spaces.parquet lists them"), str(got.value)


def test_records_of_settings_a_newer_taskspace_made_say_to_upgrade(publisher, tmp_path, monkeypatch):
    """Records whose space names a setting this version does not know (a newer feature set: `multiple-choice-v9`,
    key and name consistent, as a newer taskspace writes them) are reported by file and row, saying to upgrade
    taskspace (exit 1, nothing imported). Before, a ConfigError (exit 2) from deep in the layout code, naming no file
    and advising to "re-index", which a pulled home cannot (it holds no results)."""
    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    (sp,) = store_a.list_spaces()
    newer = _respace(tmp_path / "d", tmp_path / "newer", sp, sp.encoder,
                     params=dict(sp.params, features="multiple-choice-v9"))
    _home(tmp_path, monkeypatch, "home_b")
    with pytest.raises(InputError) as e:
        pull(str(newer))
    msg = str(e.value)
    assert type(e.value) is InputError and e.value.exit_code == 1
    assert re.search(r"spaces\.parquet: row 0 \(all-minilm-l6-v2-[0-9a-f]{10}\): its settings are not known to this "
                     r"taskspace \([^)]+\): unknown prompt feature set 'multiple-choice-v9'", msg)
    assert msg.endswith("another, likely newer, taskspace published these records: upgrade taskspace to pull them")
    assert "re-index" not in msg
    _assert_nothing_imported()


def test_a_record_whose_text_holds_a_nul_is_reported_by_row(publisher, tmp_path, store):
    """A record set whose model name (or another text: an alias, a licence, a benchmark name) holds a NUL character
    (a damaged or hand-made copy): reported by file, row and column, nothing imported (exit 1), on SQLite and
    PostgreSQL. Before, PostgreSQL failed the pull's transaction ("pulling records failed ...: PostgreSQL text fields
    cannot contain NUL (0x00) bytes", exit 3, no file or row named) and SQLite stored a model whose name no command
    could ask for."""
    import pyarrow as pa

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    bad = _copy(tmp_path / "d", tmp_path / "bad")

    def edit(t):
        names = t.column("model").to_pylist()
        names[1] = "org/a\x00b"
        lic = t.column("license").to_pylist()
        lic[2] = "mit\x00"
        t = t.set_column(t.column_names.index("model"), "model", pa.array(names))
        return t.set_column(t.column_names.index("license"), "license", pa.array(lic))

    _rewrite_models(bad, edit)
    with pytest.raises(InputError) as e:
        pull(str(bad), store=store)
    msg = str(e.value)
    assert "2 problems in the records, nothing was imported" in msg and e.value.exit_code == 1
    assert re.search(r"models/\S+\.parquet: row 1 \(model org/a\x00b\): model holds a NUL character", msg)
    assert re.search(r"models/\S+\.parquet: row 2 \(model \S+\): license holds a NUL character", msg)
    assert store.list_spaces() == [] and store.list_models() == []


def test_a_record_text_longer_than_the_database_holds_is_reported_by_row(publisher, tmp_path, store):
    """A record set whose texts are longer than the columns taskspace stores them in (a licence of 300 characters, a
    `gated` of 20, an alias of 600, a benchmark name of 600: a damaged, hand-made or foreign copy) is reported by
    file, row and column, nothing imported (exit 1), on SQLite and PostgreSQL alike. Before, PostgreSQL failed the
    pull's transaction with the driver's "value too long for type character varying(256)" (no file or row named) and
    SQLite stored what PostgreSQL refuses."""
    import pyarrow as pa

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    bad = _copy(tmp_path / "d", tmp_path / "bad")

    def edit(t):
        lic, gated, aliases = (t.column(c).to_pylist() for c in ("license", "gated", "aliases"))
        lic[2], gated[3], aliases[4] = "x" * 300, "y" * 20, [*aliases[4], "a" * 600]
        for c, v in (("license", lic), ("gated", gated), ("aliases", aliases)):
            t = t.set_column(t.column_names.index(c), c, pa.array(v, type=t.schema.field(c).type))
        return t

    _rewrite_models(bad, edit)
    import pyarrow.parquet as pq

    b = pq.read_table(bad / "benchmarks.parquet")
    names = b.column("benchmark").to_pylist()
    names[0] = "b" * 600
    pq.write_table(b.set_column(0, "benchmark", pa.array(names)), bad / "benchmarks.parquet")
    with pytest.raises(InputError) as e:
        pull(str(bad), store=store)
    msg = str(e.value)
    assert "problems in the records, nothing was imported" in msg and e.value.exit_code == 1, msg
    assert re.search(r"models/\S+\.parquet: row 2 \(model \S+\): license has 300 characters, more than the 256 "
                     r"taskspace stores", msg), msg
    assert re.search(r"row 3 \(model \S+\): gated has 20 characters, more than the 16", msg), msg
    assert re.search(r"row 4 \(model \S+\): aliases has 600 characters, more than the 512", msg), msg
    assert re.search(r"benchmarks\.parquet: row 0 \(b{10}\S*\): benchmark has 600 characters, more than the 512", msg), msg
    assert store.list_spaces() == [] and store.list_models() == []
    # the limits are the widths of the SQL columns the records go to
    from indexer.store.sql_models import Benchmark, Model, ModelAlias, ModelVectorRow

    cols = {"model": Model.key, "aliases": ModelAlias.alias, "model_revision": Model.revision,
            "pattern": ModelVectorRow.pattern, "inputs_digest": ModelVectorRow.inputs_digest}
    assert dataset.MODEL_TEXT_LIMITS == {c: (cols.get(c) or getattr(Model, c)).type.length
                                         for c in dataset.MODEL_TEXT_LIMITS}
    assert dataset.BENCHMARK_TEXT_LIMITS == {c: getattr(Benchmark, "name" if c == "benchmark" else c).type.length
                                             for c in dataset.BENCHMARK_TEXT_LIMITS}


def test_pull_space_from_the_hub_checks_the_name_before_downloading_vectors(publisher, hub_server, tmp_path,
                                                                          monkeypatch):
    """`taskspace pull hub:ORG/NAME --space X`: the space table is downloaded first and X checked against it, so an
    unknown X fails (exit 2's UnknownSpaceError, nothing imported) having fetched only that small table; a known X
    downloads its own files and the shared tables, not those of the dataset's other spaces. Before, every file of the
    record set was downloaded and then the name was found unknown."""
    from indexer import dataset
    from indexer.errors import UnknownSpaceError
    from indexer.space import space_name

    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    publish("tester/recs", store=store_a)
    (sp,) = store_a.list_spaces()
    name = space_name(sp)
    _home(tmp_path, monkeypatch, "home_b")
    before = len(hub_server.downloads())
    with pytest.raises(UnknownSpaceError, match=r"^space='nope' is not a space of the records; they hold " + name):
        pull("hub:tester/recs", space="nope")
    fetched = hub_server.downloads()[before:]
    assert fetched and all(p.endswith(dataset.SPACES) for p in fetched), fetched
    _assert_nothing_imported()
    before = len(hub_server.downloads())
    pull("hub:tester/recs", space=name)
    fetched = {p.split("/resolve/", 1)[1].split("/", 1)[1] for p in hub_server.downloads()[before:]}
    assert dataset.models_file(name) in fetched and dataset.BENCHMARKS in fetched
    assert all(f.count("/") == 0 or name in f for f in fetched), fetched


@pytest.mark.parametrize("repo", ["badname", "a/b/c", "org/na me"])
def test_publish_to_a_name_that_is_not_org_name_is_a_usage_error(repo, tmp_path):
    """`taskspace publish NAME` where NAME is not a Hub dataset id (`badname`, `a/b/c`) is a usage error naming the
    argument and the form to write (exit 2, one line), before any store is opened or the dry-run folder written, as
    the README says a bad value is; before, the library's input error, exit 1: "'badname' is not a Hub repo id
    ORG/NAME"."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "indexer.cli", "publish", repo, "--dry-run", str(tmp_path / "out")],
                         capture_output=True, text=True)
    assert res.returncode == 2 and res.stdout == "", res.stderr
    assert res.stderr.strip().splitlines() == [
        f"error: taskspace publish: Invalid value for 'ORG/NAME': {repo!r} is not a Hub dataset id; write ORG/NAME, "
        "e.g. my-org/taskspace-vectors (see `taskspace publish -h`)"]
    assert not (tmp_path / "out").exists()


def test_a_pull_stopped_before_its_prompts_were_indexed_is_drift_that_names_the_pull_to_run_again(
        publisher, tmp_path, monkeypatch, capsys):
    """A pull killed after its SQL transaction, while it wrote the vector index (seen with `kill -9` on a PostgreSQL
    home): `taskspace check` said "clean" once the models and benchmarks collections were rebuilt (by the pull
    itself, or by the `taskspace reindex` check advised), though the prompts collection of the read-only space, which
    SQL cannot rebuild or check, held the previous pull's rows or none, so searches answered otherwise than the
    publisher (other neighbours, coverage and filled answer options). Now the pulled marker says the index is written
    only once it is: until then `check` is drift (exit 1) naming the pull to run again, `reindex` says it leaves the
    prompts, and the pull run again finishes it."""
    from helpers import run_cli

    from indexer import publish as publish_module
    from indexer import sync

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")

    def killed(vectors, rec):
        raise KeyboardInterrupt  # the process stops while it writes the prompts collection

    with monkeypatch.context() as m:
        m.setattr(publish_module, "_index_prompts", killed)
        with pytest.raises(KeyboardInterrupt):
            pull(str(tmp_path / "d"))
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        (drift,) = sync.check(store_b, vectors_b)
        assert not drift.clean
        assert any(f"`taskspace pull {tmp_path / 'd'}`" in p for p in drift.problems), drift.problems
        sync.reindex(store_b, vectors_b)  # what check advised before: it keeps the prompts collection
        (drift,) = sync.check(store_b, vectors_b)
        assert not drift.clean
    finally:
        vectors_b.close()
        store_b.close()
    code, out, err = run_cli(capsys, "check")
    assert code == 1 and f"run `taskspace pull {tmp_path / 'd'}` again" in err and "taskspace reindex" not in err
    assert pull(str(tmp_path / "d")).spaces[0]["indexed"]["prompts"] == 90
    code, out, err = run_cli(capsys, "check")
    assert code == 0 and "clean" in out


def test_a_home_whose_only_space_is_pulled_with_another_encoder_searches_it_without_an_encoder_warning(
        publisher, tmp_path, monkeypatch, caplog):
    """A home holding one pulled space whose encoder is not the configured one (records published with
    all-mpnet-base-v2, TASKSPACE_ENCODER left at MiniLM): the publisher chose the encoder, so a search takes the space
    without the warning a space built here under another TASKSPACE_ENCODER gets
    (test_query.py::test_a_home_whose_only_space_another_encoder_built_says_so_and_how_to_build_the_configured_one)."""
    import logging

    from indexer import query
    from indexer.query import _space

    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d"))
    monkeypatch.setenv("TASKSPACE_ENCODER", str(tmp_path / "another-encoder"))  # not the pulled space's encoder
    reset_settings()
    store_b = open_store()
    try:
        query._WARNED_ENCODER.clear()
        with caplog.at_level(logging.WARNING, logger="indexer.query"):
            assert _space(store_b).id == store_b.list_spaces()[0].id
        assert "no indexed space was built" not in caplog.text, caplog.text
        store_b.get_or_create_space("org/enc-b@1", 11, 1.0, 0.0, method="auto", params={})  # two: the warning is said
        with caplog.at_level(logging.WARNING, logger="indexer.query"):
            _space(store_b)
        assert "no indexed space was built" in caplog.text, caplog.text
    finally:
        store_b.close()


@pytest.mark.parametrize("spec", ["hub:fake-org/lm-eval-results@", "hub:fake-org@v1", "hub:fake-org/lm-eval-results@-x"])
def test_pull_called_as_a_library_refuses_a_hub_spec_as_the_cli_does(hub_server, spec):
    """`pull("hub:ORG/NAME@")` (the @ followed by no revision: `@$REV` with REV unset) is refused with the error the
    CLI's `taskspace pull` gives (indexer.ingest.parse_spec, one rule), before the Hub is asked; before, the library
    read the repo's default branch (here: "holds no spaces.parquet": a record set looked for at a revision not asked for)."""
    from indexer.ingest import parse_spec

    with pytest.raises(InputError) as want:
        parse_spec(spec)
    with pytest.raises(InputError) as got:
        pull(spec)
    assert str(got.value) == str(want.value), (got.value, want.value)


def test_pulling_a_space_that_keeps_no_posterior_says_measured_near_is_unknown_there(tmp_path, monkeypatch, encoder,
                                                                                      caplog):
    """A `paper` space (no posterior, so no coverage patterns, whose `observed` bits say which indexed prompts each
    model was measured on): the pull says that its rankings and probabilities are the publisher's but `measured near`
    is unknown in this installation, and why (`coverage_known` false); the pulled search gives the publisher's models,
    scores and probabilities, coverage null. Before, the pull said nothing, while the card promised the same answers
    "and which models were measured near the query": the publisher's `measured near` yes read "unknown" there."""
    import logging

    from indexer import find

    monkeypatch.setenv("TASKSPACE_METHOD", "paper")
    _home(tmp_path, monkeypatch, "home_a")
    unseen = _subset(tmp_path / "sample")
    store_a, vectors_a = open_store(), VectorStore.from_settings()
    try:
        Indexer(store_a, vectors_a, encoder=encoder).run([SourceSpec(str(tmp_path / "sample"))])
        (sp,) = store_a.list_spaces()
        assert sp.method == "paper"
        publish("tester/paper", store=store_a, dry_run=tmp_path / "d")
        want = find.find_models(unseen[0], k=5, store=store_a, vectors=vectors_a)
    finally:
        vectors_a.close()
        store_a.close()
    assert any(r.coverage.measured_near for r in want)  # the publisher knows
    card = (tmp_path / "d" / "README.md").read_text()
    assert "keeps no posterior" in card and "`measured near` is unknown" in card
    _home(tmp_path, monkeypatch, "home_b")
    with caplog.at_level(logging.WARNING, logger="indexer.publish"):
        got = pull(str(tmp_path / "d"))
    assert got.spaces[0]["coverage_known"] is False
    assert (f"pull: space {got.spaces[0]['space']} (method paper) keeps no posterior, so its records do not say "
            "which indexed prompts each model was measured on: its rankings and probabilities are the publisher's, "
            "`measured near` is unknown in this installation") in caplog.text
    assert "can differ from the publisher's" not in caplog.text
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        mine = find.find_models(unseen[0], k=5, store=store_b, vectors=vectors_b)
    finally:
        vectors_b.close()
        store_b.close()
    assert [(r.model, r.score, r.probability) for r in mine] == [(r.model, r.score, r.probability) for r in want]
    assert all(r.coverage.measured_near is None for r in mine)


def test_a_pull_over_a_larger_pull_keeps_no_model_the_new_records_lack(publisher, tmp_path, monkeypatch):
    """Pulling a record set that holds fewer models over an earlier pull of the same space (a publisher that dropped a
    source, then published again) leaves this home with the new set's models only, as a fresh pull of it: a model
    only the earlier set had is unknown (`taskspace model`: not found; `models`: not listed). Before, its row stayed
    in SQL without a vector, listed and shown as "not indexed"."""
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from indexer.browse import list_models, model_detail
    from indexer.errors import NotFoundError

    store_a, _, _ = publisher
    publish("tester/records", store=store_a, dry_run=tmp_path / "d1")
    shutil.copytree(tmp_path / "d1", tmp_path / "d2")
    (f,) = (tmp_path / "d2" / "models").glob("*.parquet")
    t = pq.read_table(f)
    names = t.column("model").to_pylist()
    gone = names[:3]
    pq.write_table(t.slice(3), f)
    sp = pq.read_table(tmp_path / "d2" / "spaces.parquet")  # the set's own count, as a publish of 3 fewer says
    col = sp.schema.get_field_index("n_models")
    pq.write_table(sp.set_column(col, "n_models", pa.array([n - 3 for n in sp.column("n_models").to_pylist()],
                                                           sp.schema.field("n_models").type)),
                   tmp_path / "d2" / "spaces.parquet")
    _home(tmp_path, monkeypatch, "home_fresh")  # the smaller set pulled alone: what the home should hold
    pull(str(tmp_path / "d2"))
    store_f = open_store()
    try:
        want = sorted(m.key for m in store_f.list_models())
    finally:
        store_f.close()
    assert not set(gone) & set(want) and len(want) == len(names) - 3
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d1"))
    pull(str(tmp_path / "d2"))
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        assert sorted(m.key for m in store_b.list_models()) == want
        assert sorted(m["model"] for m in list_models(store=store_b, vectors=vectors_b)) == want
        with pytest.raises(NotFoundError):
            model_detail(gone[0], store=store_b, vectors=vectors_b)
    finally:
        vectors_b.close()
        store_b.close()


def test_an_offline_pull_uses_the_revision_the_homes_hub_cache_holds_and_refuses_what_it_lacks(
        publisher, hub_server, tmp_path, monkeypatch, capsys):
    """`taskspace pull hub:ORG/NAME[@REV]` with HF_HUB_OFFLINE=1 on a home whose Hub cache holds the record set's
    files at the revision asked (with none: the commit main was when the cache last fetched it) pulls from the cache
    and says which revision it used and that it could not check for a newer one; a cache without that revision, or
    without a file the records need, is the offline refusal naming the variable (exit 4), nothing imported. Before,
    every offline pull refused, though huggingface_hub itself serves cached files offline."""
    from helpers import run_cli

    from indexer.space import space_name

    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    first = publish("tester/recs", store=store_a).commit
    name = space_name(store_a.list_spaces()[0])
    _home(tmp_path, monkeypatch, "home_b")
    pull("hub:tester/recs")  # online: fills home_b's Hub cache
    _home(tmp_path, monkeypatch, "home_a")
    store_a.upsert_models([{"key": _key(store_a, MISTRAL), "license": "mit"}])
    second = publish("tester/recs", store=store_a).commit  # main moves on; home_b's cache still says main = first
    assert second != first
    _home(tmp_path, monkeypatch, "home_b")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    before = len(hub_server.log)
    code, out, err = run_cli(capsys, "pull", "hub:tester/recs")
    assert code == 0, err
    assert f"HF_HUB_OFFLINE is set: pulled hub:tester/recs at {first}" in out, out
    assert "main" in out and "could not check" in out and f"{name}: " in out, out
    code, out, err = run_cli(capsys, "pull", "hub:tester/recs", "--json")
    got = json.loads(out)
    assert got["origin"] == f"hub:tester/recs@{first}" and got["cached"] == {
        "revision": first, "ref": "main", "variable": "HF_HUB_OFFLINE", "unreachable": None}, got
    code, out, err = run_cli(capsys, "pull", f"hub:tester/recs@{first}", "--space", name)
    assert code == 0 and f"at {first}" in out, err
    assert len(hub_server.log) == before  # nothing was asked of the Hub
    store_b = open_store()
    try:
        assert len(store_b.model_vector_keys(store_b.list_spaces()[0].id)) == 25
    finally:
        store_b.close()
    # a revision the cache does not hold, and a home whose cache is empty: the offline refusal, naming the variable
    code, out, err = run_cli(capsys, "pull", f"hub:tester/recs@{second}")
    assert code == 4 and "HF_HUB_OFFLINE is set" in err and second in err and "unset it" in err, err
    assert f"it holds revision {first}: name it as @REVISION" in err, err  # what the cache does hold
    _home(tmp_path, monkeypatch, "home_c")
    code, out, err = run_cli(capsys, "pull", "hub:tester/recs")
    assert code == 4 and "HF_HUB_OFFLINE is set" in err and "unset it" in err, err
    _assert_nothing_imported()
    # a cache holding only the space table (a `pull --space` of a name the records lack): it lacks the vectors
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with pytest.raises(Exception):
        pull("hub:tester/recs", space="nope")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, out, err = run_cli(capsys, "pull", "hub:tester/recs")
    assert code == 4 and "HF_HUB_OFFLINE is set" in err and f"cannot read {dataset.BENCHMARKS} of" in err, err
    _assert_nothing_imported()


def test_an_offline_pull_finds_the_hub_cache_of_the_record_set_fetched_in_another_case(publisher, hub_server, tmp_path,
                                                                                      monkeypatch, capsys):
    """`taskspace pull hub:tester/recs` with HF_HUB_OFFLINE=1 on a home that pulled the record set as `hub:Tester/Recs`
    (the Hub's repo ids are case-insensitive: it answers either spelling with the one repo): the cache, which
    huggingface_hub keeps under the spelling asked (`datasets--Tester--Recs`), is found, and the pull names the spelling
    it holds and the one asked. Before, the offline lookup was case-sensitive: "HF_HUB_OFFLINE is set and the Hub cache
    ... holds no revision main of it" (exit 4), though every file was there."""
    from helpers import run_cli

    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    sha = publish("tester/recs", store=store_a).commit
    _home(tmp_path, monkeypatch, "home_b")
    pull("hub:Tester/Recs")  # online: the cache folder is named by this spelling
    assert (tmp_path / "home_b" / "hub" / "datasets--Tester--Recs").is_dir()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    before = len(hub_server.log)
    for spec in ("hub:tester/recs", f"hub:TESTER/recs@{sha}"):
        code, out, err = run_cli(capsys, "pull", spec)
        assert code == 0, err
        assert (f"HF_HUB_OFFLINE is set: pulled hub:Tester/Recs at {sha} from the Hub cache" in out
                and f"(asked as {spec.partition('@')[0]}: the Hub's repo ids are case-insensitive" in out), out
    assert len(hub_server.log) == before  # nothing was asked of the Hub
    code, out, err = run_cli(capsys, "pull", "hub:tester/other")  # another repo is still not there
    assert code == 4 and "holds no revision main of it" in err, err


def test_online_pulls_of_one_record_set_in_two_cases_keep_one_cache_folder(publisher, hub_server, tmp_path,
                                                                           monkeypatch):
    """`taskspace pull hub:Tester/Recs` then `taskspace pull hub:tester/recs` (and `hub:TESTER/RECS`), online: the Hub's repo ids are case-insensitive, so the home's Hub cache holds the one folder the
    first pull made, with the revision read last, and no file is downloaded twice. A home holding two folders from
    before keeps one after the next pull (the other's revisions are removed as any earlier revision is). Before, each
    spelling got a folder of its own (`datasets--Tester--Recs`, `datasets--tester--recs`), each with its own copy."""
    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    first = publish("tester/recs", store=store_a).commit
    _home(tmp_path, monkeypatch, "home_b")
    cache = tmp_path / "home_b" / "hub"
    pull("hub:Tester/Recs")
    got = len(hub_server.downloads())
    pull("hub:tester/recs")
    assert sorted(p.name for p in cache.iterdir() if p.name.startswith("datasets--")) == ["datasets--Tester--Recs"]
    assert len(hub_server.downloads()) == got  # every file was in the cache already
    # a new revision, pulled in a third spelling: the same folder, holding that revision alone
    _home(tmp_path, monkeypatch, "home_a")
    store_a.upsert_models([{"key": _key(store_a, MISTRAL), "license": "mit"}])
    second = publish("tester/recs", store=store_a).commit
    _home(tmp_path, monkeypatch, "home_b")
    res = pull("hub:TESTER/RECS")
    assert res.origin == f"hub:TESTER/RECS@{second}"
    assert sorted(p.name for p in cache.iterdir() if p.name.startswith("datasets--")) == ["datasets--Tester--Recs"]
    assert [p.name for p in (cache / "datasets--Tester--Recs" / "snapshots").iterdir()] == [second]
    # a home with two folders from before: the next pull keeps one
    shutil.copytree(cache / "datasets--Tester--Recs", cache / "datasets--tester--recs", symlinks=True)
    pull(f"hub:tester/recs@{first}")
    assert sorted(p.name for p in cache.iterdir() if p.name.startswith("datasets--")) == ["datasets--Tester--Recs"]
    assert [p.name for p in (cache / "datasets--Tester--Recs" / "snapshots").iterdir()] == [first]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # and it is what an offline pull reads, in any spelling
    assert pull(f"hub:tester/RECS@{first}").origin == f"hub:Tester/Recs@{first}"


def test_a_pull_whose_hub_cannot_be_reached_reads_the_homes_hub_cache_with_a_warning(publisher, hub_server, tmp_path,
                                                                                     monkeypatch, capsys, caplog):
    """`taskspace pull hub:ORG/NAME` with HF_HUB_OFFLINE unset and the Hub unreachable (connection refused; dropped
    connections through the retries, as a Hub timing out) on a home whose Hub cache holds the record set: pulled from
    the cache, exit 0, with a warning naming the commit used and that the Hub could not be reached (`cached.unreachable`
    in `--json`). Answers are not outages: a 401 of the repo is the Hub's error (exit 4), the cache not read; a home
    with nothing cached keeps the Hub's error. Before, every such pull failed (exit 4) unless HF_HUB_OFFLINE=1 was set,
    though the cache held every file."""
    import logging

    from helpers import run_cli

    from indexer.hub import HubClient

    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    sha = publish("tester/recs", store=store_a).commit
    _home(tmp_path, monkeypatch, "home_b")
    pull("hub:tester/recs")  # online: fills home_b's Hub cache
    closed = "http://127.0.0.1:8721"  # nothing listens there (this test's ports: 8720-8729)
    monkeypatch.setenv("HF_ENDPOINT", closed)
    with caplog.at_level(logging.WARNING, logger="indexer.publish"):
        code, out, err = run_cli(capsys, "pull", "hub:tester/recs")
    assert code == 0, err
    assert (f"pull: the Hub could not be reached (cannot connect to {closed}" in caplog.text
            and f"pulled hub:tester/recs at {sha} from this home's Hub cache (the commit main was when this home's Hub "
                "cache last fetched it); it may not be the newest revision" in caplog.text), caplog.text
    assert f"from hub:tester/recs@{sha}" in out and "is set" not in out, out
    code, out, err = run_cli(capsys, "pull", "hub:tester/recs", "--json")
    got = json.loads(out)["cached"]
    assert (got["revision"], got["ref"], got["variable"]) == (sha, "main", None), got
    assert got["unreachable"].startswith(f"cannot connect to {closed}"), got
    # dropped connections through the retries: after them, the same
    monkeypatch.setenv("HF_ENDPOINT", hub_server.url)
    hub_server.drop("/api/datasets/tester/recs", 100)
    sleeps = []
    res = pull("hub:tester/recs", hub=HubClient(backoff=0.01, sleep=sleeps.append))
    assert res.cached["revision"] == sha and len(sleeps) == 5, res.cached
    assert "connection failed" in res.cached["unreachable"] and "gave up after 6 tries" in res.cached["unreachable"]
    hub_server._drops.clear()
    # an answer (401: the repo made private, no token) is no outage: the Hub's error, nothing read from the cache
    hub_server.require_token("tester/recs", {WRITE})
    monkeypatch.delenv("HF_TOKEN")
    code, out, err = run_cli(capsys, "pull", "hub:tester/recs")
    assert code == 1 and "or it is private or gated" in err and "could not be reached" not in err, err
    # nothing cached: the Hub's error as before, nothing imported
    _home(tmp_path, monkeypatch, "home_c")
    monkeypatch.setenv("HF_ENDPOINT", closed)
    code, out, err = run_cli(capsys, "pull", "hub:tester/recs")
    assert code == 4 and f"cannot connect to {closed}; check the network or HF_ENDPOINT, or set HF_HUB_OFFLINE=1" in err
    _assert_nothing_imported()


def test_a_pull_whose_hub_answers_5xx_or_429_through_the_retries_reads_the_homes_hub_cache(publisher, hub_server,
                                                                                            tmp_path, monkeypatch,
                                                                                            capsys, caplog):
    """`taskspace pull hub:ORG/NAME` while the Hub answers 503, 502 or 429 to every try (down, overloaded, rate
    limiting) on a home whose Hub cache holds the record set: pulled from the cache, exit 0, with a warning naming
    the commit and what the Hub answered (`cached.unreachable` in `--json`), as for a Hub refusing connections. A 403
    or 404 is an answer, not an outage: the Hub's error, the cache not read. Before, only refused/dropped connections
    fell back: a Hub answering 503 through the retries failed the pull (exit 4) whatever the cache held."""
    import logging

    from helpers import run_cli

    from indexer.hub import HubClient

    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    sha = publish("tester/recs", store=store_a).commit
    _home(tmp_path, monkeypatch, "home_b")
    pull("hub:tester/recs")  # online: fills home_b's Hub cache
    for status in (503, 502, 429):
        hub_server.fail("/api/datasets/tester/recs", [status] * 6)
        sleeps = []
        with caplog.at_level(logging.WARNING, logger="indexer.publish"):
            res = pull("hub:tester/recs", hub=HubClient(backoff=0.01, sleep=sleeps.append))
        assert res.cached["revision"] == sha and len(sleeps) == 5, res.cached
        assert f"answered {status}" in res.cached["unreachable"] and "gave up after 6 tries" in res.cached[
            "unreachable"], res.cached
        assert (f"pull: the Hub failed every try (the Hub at {hub_server.url} answered {status}" in caplog.text
                and f"pulled hub:tester/recs at {sha} from this home's Hub cache" in caplog.text), caplog.text
        hub_server._faults.clear()
        caplog.clear()
    # through the CLI (huggingface_hub's own waits are the client's: backoff 1 s; a Retry-After past the deadline
    # gives up at once, which is the same outage)
    hub_server.fail("/api/datasets/tester/recs", [(429, {"Retry-After": "3600"})])
    code, out, err = run_cli(capsys, "pull", "hub:tester/recs", "--json")
    assert code == 0, err
    got = json.loads(out)["cached"]
    assert got["revision"] == sha and "answered 429" in got["unreachable"] and "Retry-After" in got["unreachable"], got
    hub_server._faults.clear()
    # answers are not outages: 403 and 404 are the Hub's errors, nothing read from the cache
    for status, exit_code, words in ((403, 4, "refused to let this token"), (404, 1, "not found")):
        hub_server.fail("/api/datasets/tester/recs", [status] * 6)
        code, out, err = run_cli(capsys, "pull", "hub:tester/recs")
        assert code == exit_code and words in err and "Hub cache" not in err, (status, err)
        hub_server._faults.clear()
    # nothing cached: the Hub's error as before, nothing imported
    _home(tmp_path, monkeypatch, "home_c")
    hub_server.fail("/api/datasets/tester/recs", [(503, {"Retry-After": "3600"})])
    code, out, err = run_cli(capsys, "pull", "hub:tester/recs")
    assert code == 4 and "answered 503" in err and "nothing was pulled" in err, err
    _assert_nothing_imported()


def test_two_pulls_of_two_revisions_at_once_leave_each_the_files_it_reads(publisher, hub_server, tmp_path,
                                                                          monkeypatch):
    """Two `taskspace pull`s of two revisions of one record set into one home at once (two scheduled jobs): the second
    waits for the first to have read its files (`HubClient.using`, a lock per repo in the Hub cache) before its
    `keep_only` removes the first's revision from the cache. Before, nothing guarded the Hub cache (the `index` lock
    is taken after the files are read): the second removed the files the first was reading, and the first failed."""
    import threading

    from indexer.errors import BusyError

    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    first = publish("tester/recs", store=store_a).commit
    store_a.upsert_models([{"key": _key(store_a, MISTRAL), "license": "mit"}])
    second = publish("tester/recs", store=store_a).commit
    _home(tmp_path, monkeypatch, "home_b")
    read, other = dataset.read, {}

    def run_second():
        try:
            other["result"] = pull(f"hub:tester/recs@{second}")
        except Exception as exc:  # noqa: BLE001 - asserted below
            other["result"] = exc

    def reading(root, names=None):  # the first pull, while it reads its files: the second pull runs
        if "thread" not in other:
            other["thread"] = threading.Thread(target=run_second)
            other["thread"].start()
            other["thread"].join(timeout=3)
            other["done_meanwhile"] = not other["thread"].is_alive()
        return read(root, names)

    monkeypatch.setattr(dataset, "read", reading)
    res = pull(f"hub:tester/recs@{first}")
    other["thread"].join(timeout=120)
    assert res.origin == f"hub:tester/recs@{first}" and res.spaces[0]["models"] == 25
    assert other["done_meanwhile"] is False  # it waited for the first to read
    got = other["result"]  # pulled after the first, or refused while the first held the index lock
    assert isinstance(got, BusyError) or got.origin == f"hub:tester/recs@{second}", got
    assert sorted(p.name for p in (tmp_path / "home_b" / "hub" / "datasets--tester--recs" / "snapshots").iterdir()) == [
        second]


#: the licence ids the Hub's card validator accepts (its error lists them; `array`: a list of them)
HUB_LICENSES = set("""apache-2.0 mit openrail bigscience-openrail-m creativeml-openrail-m bigscience-bloom-rail-1.0
bigcode-openrail-m afl-3.0 artistic-2.0 bsl-1.0 bsd bsd-2-clause bsd-3-clause bsd-3-clause-clear c-uda cc cc0-1.0
cc-by-2.0 cc-by-2.5 cc-by-3.0 cc-by-4.0 cc-by-sa-3.0 cc-by-sa-4.0 cc-by-nc-2.0 cc-by-nc-3.0 cc-by-nc-4.0 cc-by-nd-4.0
cc-by-nc-nd-3.0 cc-by-nc-nd-4.0 cc-by-nc-sa-2.0 cc-by-nc-sa-3.0 cc-by-nc-sa-4.0 cdla-sharing-1.0 cdla-permissive-1.0
cdla-permissive-2.0 wtfpl ecl-2.0 epl-1.0 epl-2.0 etalab-2.0 eupl-1.1 eupl-1.2 agpl-3.0 gfdl gpl gpl-2.0 gpl-3.0 lgpl
lgpl-2.1 lgpl-3.0 isc mpl-2.0 odc-by odbl ofl-1.1 unlicense zlib pddl llama2 llama3 gemma unknown other""".split())


@pytest.mark.parametrize("mix, want", [
    # the bundled sample / mmlu_pro: the data MIT, the repository Apache-2.0
    ([("indexer/data/sample", "the MMLU-Pro data is MIT (dataset card); the repository is Apache-2.0.", False)],
     ["apache-2.0", "mit"]),
    ([("mmlu_pro", "repository LICENSE is Apache-2.0; the MMLU-Pro dataset itself is published as MIT on its "
                   "dataset card.", False),
      ("evalarena_code", "No license file in eval-arena; results originate from the CRUXEval and EvalPlus "
                         "leaderboards.", False)], ["apache-2.0", "mit", "unknown"]),
    ([("mmlu_pro", "Apache-2.0 / MIT", False),
      ("metabench_openllm", "CC BY-NC-SA 4.0 (repository LICENSE) — non-commercial, share-alike.", True)],
     ["apache-2.0", "cc-by-nc-sa-4.0", "mit"]),
    ([("hub:org/results", "unknown (see the dataset's card on the Hub)", False)], "unknown"),
    ([("x", "MIT", False)], "mit"),
    ([("x", "see LICENSE_MIT.txt (MIT)", False), ("y", "research use only, ask the authors", False)], ["mit", "other"]),
    ([("y", "CC BY-NC 4.0", True)], "cc-by-nc-4.0"),
    ([("x", "MIT", False), ("y", "free for non-commercial research", True)], ["mit", "other"]),
    ([], "unknown"),
])
def test_the_cards_yaml_licence_is_what_the_hub_reads_for_each_mix_of_source_licences(mix, want):
    """The card's YAML `license` names the Hub licence id of every source licence (a list where there are several),
    `unknown` for a source with none, and `other` for one taskspace cannot name, which then comes with `license_name`
    and `license_link` (the Hub's card spec asks for both with `other`); a non-commercial source's id is there, so the
    Hub shows and filters the dataset as such. Before, every card said `license: other` with a made-up
    `license_name: taskspace-records` and no link, whatever the sources, a non-commercial one in the body alone."""
    import yaml

    from indexer.card import card

    sources = [{"location": loc, "name": loc, "title": None, "kind": "local", "licence": text, "restricted": r,
                "file": None} for loc, text, r in mix]
    from indexer import dataset as ds

    params = {"features": "multiple-choice-v2", "free": 4, "intercept": True, "levels": "level-deviation-v2",
              "prior": "mean", "select": "gcv"}
    sp = {"space": "s", "encoder": "all-MiniLM-L6-v2@0123", "encoder_name": "all-MiniLM-L6-v2", "encoder_dim": 384,
          "method": "auto-mc", "dim": 778, "lam": 1.0, "eps": 0.0, "calibration_a": None, "params_dict": params,
          "layout": ds.layout(778, params)}
    text = card("tester/recs", [sp], sources, {"s": {"models": 1, "benchmarks": 1}}, "0.1.0")
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["license"] == want, meta
    ids = want if isinstance(want, list) else [want]
    assert set(ids) <= HUB_LICENSES
    if "other" in ids:
        assert meta["license_name"] and re.fullmatch(r"[a-z0-9][a-z0-9.-]*", meta["license_name"]), meta
        assert ("non-commercial" in meta["license_name"]) == any(r for _, _, r in mix), meta
        assert meta["license_link"] == "README.md", meta
    else:
        assert "license_name" not in meta and "license_link" not in meta, meta


def test_a_republish_that_changes_no_model_record_names_the_files_it_rewrites(publisher, hub_server, tmp_path,
                                                                              monkeypatch):
    """A publish whose model records are all unchanged but whose other files differ (a source's licence line edited,
    a source ingested and not yet indexed: the card lists it) commits those files, and the summary says which, after
    its counts of 0. Before, the commit's summary was "0 model records added, 0 changed, 0 removed" alone: a scheduled
    job's history showed a commit that changed nothing it named."""
    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    publish("tester/recs", store=store_a)
    f = tmp_path / "sample" / "PROVENANCE.md"
    f.write_text(f.read_text().replace("the MMLU-Pro data is MIT", "the MMLU-Pro data is MIT (see its card)"))
    res = publish("tester/recs", store=store_a)
    assert res.files == ["README.md"]
    assert res.message == ("taskspace publish: 0 model records added, 0 changed, 0 removed (1 space); no model "
                           "record changed, only README.md")
    assert hub_server.commits[-1]["summary"] == res.message


def test_the_hub_cache_of_a_publisher_and_of_a_consumer_keeps_one_revision_of_the_records(publisher, hub_server,
                                                                                         tmp_path, monkeypatch):
    """A scheduled publish (each run downloads the dataset's current files to compare) and a scheduled pull (each
    downloads the revision it reads) leave the home's Hub cache holding that one revision of the record set, its
    files and no blob of an earlier one; before, every revision a run read stayed, so a home publishing or pulling a
    large index daily grew by its changed files a day (the models file of 32,823 models: 778 float32 each, about
    100 MB)."""
    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    storage = tmp_path / "home_a" / "hub" / "datasets--tester--recs"

    def held(folder):
        snaps = sorted(p.name for p in (folder / "snapshots").iterdir())
        used = {Path(os.path.realpath(p)).name for p in (folder / "snapshots").rglob("*") if p.is_file()}
        blobs = {p.name for p in (folder / "blobs").iterdir()}
        return snaps, blobs - used

    shas = [publish("tester/recs", store=store_a).commit]
    for lic in ("mit", "bsd-3-clause", "apache-2.0"):
        store_a.upsert_models([{"key": _key(store_a, MISTRAL), "license": lic}])
        shas.append(publish("tester/recs", store=store_a).commit)
    assert held(storage) == ([shas[-2]], set())  # the commit the last publish compared against, alone
    _home(tmp_path, monkeypatch, "home_b")
    pull(f"hub:tester/recs@{shas[0]}")
    pull("hub:tester/recs")
    assert held(tmp_path / "home_b" / "hub" / "datasets--tester--recs") == ([shas[-1]], set())


def test_publishing_into_a_dataset_that_holds_other_data_is_refused_before_anything_is_written(publisher, hub_server,
                                                                                               monkeypatch):
    """`taskspace publish ORG/NAME` of an existing dataset that holds files but no record set (no spaces.parquet:
    another dataset, a typo in a scheduled job's name) is refused naming the dataset and some of its files (exit 2),
    with no commit; a dataset holding only `.gitattributes` (as the Hub creates one) is published to. Before, the
    records were committed beside its files and its README.md, the card of that other dataset, was replaced by
    taskspace's, as a dry run refuses to do in a folder of other files."""
    store_a, _, _ = publisher
    monkeypatch.setenv("HF_TOKEN", WRITE)
    other = hub_server.root / "datasets" / "tester" / "other"
    other.mkdir(parents=True)
    (other / "README.md").write_text("---\nlicense: mit\n---\n# Someone's dataset\n")
    (other / "data.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ConfigError, match=r"^tester/other: the dataset holds files that are not taskspace records "
                                          r"\(README.md, data.csv\) and no spaces.parquet"):
        publish("tester/other", store=store_a)
    assert hub_server.commits == [] and (other / "README.md").read_text().endswith("# Someone's dataset\n")
    empty = hub_server.root / "datasets" / "tester" / "fresh"
    empty.mkdir(parents=True)
    (empty / ".gitattributes").write_text("*.parquet filter=lfs diff=lfs merge=lfs -text\n")
    assert publish("tester/fresh", store=store_a).commit is not None


def test_a_repull_of_a_dataset_that_no_longer_holds_a_space_removes_that_space_here(publisher, tmp_path, monkeypatch,
                                                                                   encoder, caplog):
    """The publisher publishes two spaces, then one alone (`--space`: the dataset then holds only that one's files);
    a home that pulled the first revision pulls the second: it holds what a fresh pull of it holds, the space the
    dataset dropped removed with a warning naming it, where it came from and how to get it back (a pull of the older
    revision). Before, that space stayed, its records those the publisher withdrew, and as the configured (default)
    space it kept answering every search without a word; a `--space` pull leaves the other spaces alone."""
    import logging

    from indexer.space import space_name

    store_a, vectors_a, _ = publisher
    _index_auto_too(store_a, vectors_a, tmp_path, monkeypatch, encoder)
    mc, plain = (space_name(s) for s in sorted(store_a.list_spaces(), key=lambda s: s.method != "auto-mc"))
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    first = pull(str(tmp_path / "d"))
    assert sorted(s["space"] for s in first.spaces) == sorted([mc, plain])
    _home(tmp_path, monkeypatch, "home_a")
    publish("tester/recs", space=plain, store=store_a, dry_run=tmp_path / "d")  # the dataset now holds `plain` alone
    _home(tmp_path, monkeypatch, "home_b")
    pull(str(tmp_path / "d"), space=plain)  # a --space pull: the other pulled space stays
    store_b = open_store()
    try:
        assert sorted(space_name(s) for s in store_b.list_spaces()) == sorted([mc, plain])
    finally:
        store_b.close()
    with caplog.at_level(logging.WARNING, logger="indexer.publish"):
        again = pull(str(tmp_path / "d"))
    assert [s["space"] for s in again.spaces] == [plain] and again.removed == [mc]
    assert again.as_dict()["removed"] == [mc]
    said = caplog.text
    assert f"space {mc}" in said and "no longer holds it" in said and "removed" in said
    assert str(tmp_path / "d") in said, said
    store_b, vectors_b = open_store(), VectorStore.from_settings()
    try:
        assert [space_name(s) for s in store_b.list_spaces()] == [plain]
        assert mc not in vectors_b.spaces()
        n = len(store_b.model_vector_keys(store_b.list_spaces()[0].id))
        assert sorted(m.key for m in store_b.list_models()) == sorted(store_a.model_vector_keys(
            next(s.id for s in store_a.list_spaces() if space_name(s) == plain))) and n == 25
    finally:
        vectors_b.close()
        store_b.close()


def test_a_record_file_cut_short_is_refused_saying_so_and_what_to_do(publisher, tmp_path, monkeypatch):
    """A models file cut short (a partial upload to the dataset, an interrupted copy): the pull fails naming the file,
    that it is cut short or damaged, Parquet's own reason in full, and what to do (fetch the record set again, or
    have it published again), nothing imported. Before, the error repeated the file's absolute path (a Hub cache
    snapshot folder for a Hub dataset) inside Parquet's message and cut that at 200 characters, often before its
    reason, and said nothing of what to do."""
    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    cut = _copy(tmp_path / "d", tmp_path / ("a-long-folder-name-" * 6) / "cut")
    (f,) = (cut / "models").glob("*.parquet")
    f.write_bytes(f.read_bytes()[:20000])
    with pytest.raises(InputError) as err:
        pull(str(cut))
    said = str(err.value)
    assert f"models/{f.name}: not a readable Parquet file: cut short or damaged" in said, said
    assert "magic bytes not found" in said and str(f) not in said, said
    assert "fetch the whole record set again" in said and "publish" in said, said
    _assert_nothing_imported()


def test_a_patterns_file_cut_short_is_the_one_problem_said_not_every_record_naming_its_pattern(publisher, tmp_path,
                                                                                                monkeypatch):
    """A patterns file cut short (or empty, or without a column) is reported once: its records' patterns are not
    checked against a file that could not be read. Before, every model record was a problem of its own, "pattern
    ... is not in patterns/<space>.parquet" (26 problems for the 25-model sample, the first 20 said), the cause one
    item among them."""
    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    (f,) = (tmp_path / "d" / "patterns").glob("*.parquet")
    for damaged in (b"", f.read_bytes()[:20000]):
        f.write_bytes(damaged)
        with pytest.raises(InputError) as err:
            pull(str(tmp_path / "d"))
        said = str(err.value)
        assert "1 problem in the records" in said and f"patterns/{f.name}: not a readable Parquet file" in said, said
        assert "is not in" not in said, said
        _assert_nothing_imported()


def test_a_space_whose_encoder_is_not_installed_says_the_others_can_be_pulled_alone(publisher, tmp_path, monkeypatch,
                                                                                    encoder):
    """A record set of two spaces, one made with an encoder not installed here (a publisher that moved to another
    encoder and publishes both): the refusal (exit 5, nothing imported) names the space and the encoder, and says
    that the other space can be pulled alone (`--space NAME`; ``space=`` from the library), which then works. Before, it said only to install the
    encoder, so a consumer without it took no update of the space it can use."""
    from indexer.space import space_name

    store_a, vectors_a, _ = publisher
    _index_auto_too(store_a, vectors_a, tmp_path, monkeypatch, encoder)
    mc, plain = sorted(store_a.list_spaces(), key=lambda s: s.method != "auto-mc")
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    moved = _respace(tmp_path / "d", tmp_path / "moved", plain, "someorg/not-installed-encoder@1234")
    _home(tmp_path, monkeypatch, "home_b")
    with pytest.raises(EncoderError) as err:
        pull(str(moved))
    said = str(err.value)
    assert "need encoder someorg/not-installed-encoder@1234, which is not installed" in said, said
    assert f"pull the other space alone (space={space_name(mc)!r})" in said and "\n" not in said, said
    _assert_nothing_imported()
    assert [s["space"] for s in pull(str(moved), space=space_name(mc)).spaces] == [space_name(mc)]


def test_a_record_set_missing_a_models_or_patterns_file_says_what_to_do_once(publisher, tmp_path, monkeypatch):
    """A record set whose models and patterns files of a space are gone (a partial upload or download) is refused
    naming each missing file and, once, what to do (fetch the whole record set again, or have it published again);
    before, "file is missing" alone, as a missing prompts file already said more."""
    store_a, _, _ = publisher
    publish("tester/recs", store=store_a, dry_run=tmp_path / "d")
    _home(tmp_path, monkeypatch, "home_b")
    cut = _copy(tmp_path / "d", tmp_path / "cut")
    (m,) = (cut / "models").glob("*.parquet")
    (p,) = (cut / "patterns").glob("*.parquet")
    m.unlink()
    p.unlink()
    with pytest.raises(InputError) as err:
        pull(str(cut))
    said = str(err.value)
    assert f"models/{m.name}: file is missing" in said and f"patterns/{p.name}: file is missing" in said, said
    assert said.count("fetch the whole record set again") == 1 and "publish again" in said, said
    _assert_nothing_imported()
