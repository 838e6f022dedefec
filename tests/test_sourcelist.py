from pathlib import Path

import pytest

from indexer import sourcelist
from indexer.errors import ConfigError
from indexer.sourcelist import SourceSpec


def test_add_load_roundtrip(tmp_path):
    path = tmp_path / "sources.toml"
    assert sourcelist.load(path) == []
    folder = tmp_path / "results"
    folder.mkdir()
    merged = sourcelist.add(path, [SourceSpec(str(folder)), SourceSpec("hub-org:open-llm-leaderboard", limit=5)])
    assert [s.spec for s in merged] == [str(folder.resolve()), "hub-org:open-llm-leaderboard"]
    # adding the same spec again does not duplicate it; a new limit replaces the old
    sourcelist.add(path, [SourceSpec("hub-org:open-llm-leaderboard", limit=9), SourceSpec("hub:org/repo")])
    loaded = sourcelist.load(path)
    assert loaded == [
        SourceSpec(str(folder.resolve())),
        SourceSpec("hub-org:open-llm-leaderboard", limit=9),
        SourceSpec("hub:org/repo"),
    ]


@pytest.mark.parametrize(
    "text,match",
    [
        ("[[source]]\nspec = 'hub:noslash'\n", "hub:ORG/REPO"),
        ("[[source]]\nformat = 'table'\n", "needs a 'spec'"),
        ("[[source]]\nspec = '/x'\ncolour = 'red'\n", "unknown key"),
        ("[[source]]\nspec = '/x'\nlimit = 0\n", "positive integer"),
        ("source = [", "not valid TOML"),
    ],
)
def test_bad_config_names_the_file_and_entry(tmp_path, text, match):
    path = tmp_path / "sources.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match) as info:
        sourcelist.load(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    "text,match",
    [
        ("[[source]]\nspec = '/x'\nformat = 'excel'\n", "source #1 format 'excel' is unknown; use one of table, lm_eval, lighteval"),
        ("[[source]]\nspec = '/x'\nformat = 3\n", "source #1 format 3 is unknown"),
        ("[[source]]\nspec = 'hub-org:x'\nlimit = true\n", "source #1 limit must be a positive integer"),
        ("[[source]]\nspec = 5\n", "source #1 spec must be a string"),
    ],
)
def test_a_config_entry_of_the_wrong_type_or_an_unknown_format_is_refused(tmp_path, text, match):
    """`sources.toml` entries a hand edit can get wrong: an unknown `format`, a `limit = true`, a `spec = 5`: a
    configuration error naming the file and the entry (exit 2), as a bad spec or `limit = 0` is, and as `sources add
    --format excel` is refused. Before, all were loaded: the pass then failed that source ("unknown format 'excel'"),
    read `limit = true` as 1, and `spec = 5` as the folder `5` under the current folder."""
    path = tmp_path / "sources.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match) as info:
        sourcelist.load(path)
    assert str(path) in str(info.value)


def _add_one(args):
    path, folder = args
    from indexer import sourcelist as sl

    sl.add(Path(path), [SourceSpec(folder)])


def test_concurrent_adds_lose_nothing(tmp_path):
    """12 adds at once, as threads and as processes: the read-modify-write under the lock keeps every entry (before:
    a fixed .tmp name and no lock lost 6-8 of 12)."""
    import concurrent.futures as cf
    import multiprocessing

    folders = []
    for i in range(24):
        f = tmp_path / f"src{i:02d}"
        f.mkdir()
        (f / "outcomes.csv").write_text("model,prompt_id,correct\n")
        (f / "prompts.jsonl").write_text("")
        folders.append(str(f))
    path = tmp_path / "home" / "sources.toml"
    with cf.ThreadPoolExecutor(12) as pool:
        list(pool.map(_add_one, [(str(path), f) for f in folders[:12]]))
    with cf.ProcessPoolExecutor(12, mp_context=multiprocessing.get_context("fork")) as pool:
        list(pool.map(_add_one, [(str(path), f) for f in folders[12:]]))
    assert sorted(s.spec for s in sourcelist.load(path)) == folders
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []  # no temporary file left


@pytest.mark.parametrize("spec,fmt,match", [
    ("/no/such/folder", None, "no such file or folder"),
    ("hub:not-a-repo", None, "hub:ORG/REPO"),
    ("hub:org/repo@../../x", None, "REVISION"),
    ("hub-org:", None, "organisation"),
    (".", "excel", "unknown format"),
])
def test_a_bad_source_is_refused_before_saving(tmp_path, spec, fmt, match):
    path = tmp_path / "home" / "sources.toml"
    sourcelist.add(path, [SourceSpec("hub:org/repo")])
    before = path.read_text()
    empty = tmp_path / "empty"  # a valid source (an empty folder may fill later): saved only with the others
    empty.mkdir()
    with pytest.raises(ConfigError, match=match) as info:
        sourcelist.add(path, [SourceSpec(str(empty)), SourceSpec(spec, format=fmt)])
    assert "nothing was saved" in str(info.value)
    assert path.read_text() == before


def test_a_source_refused_for_a_file_in_it_names_that_file(tmp_path):
    """A table folder whose outcomes file is compressed with zstd: the refusal names the file (before, "source 'v':
    compressed with zstd ...", the file only by its name in the advice)."""
    folder = tmp_path / "v"
    folder.mkdir()
    (folder / "prompts.jsonl").write_text('{"prompt_id": "p1", "benchmark": "b", "text": "t"}\n')
    (folder / "outcomes.csv.zst").write_bytes(b"\x28\xb5\x2f\xfd")
    with pytest.raises(ConfigError) as info:
        sourcelist.add(tmp_path / "home" / "sources.toml", [SourceSpec(str(folder))])
    assert str(info.value).startswith(f"source {str(folder)!r}: {folder / 'outcomes.csv.zst'}: compressed with zstd")
    assert "nothing was saved" in str(info.value)


def _one_prompt_source_and_cli(tmp_path):
    """(a table source folder of one prompt and one outcome, ``ts(*args)``: the CLI run in a fresh home under
    ``tmp_path``)."""
    import os
    import subprocess
    import sys

    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "outcomes.csv").write_text("model,prompt_id,correct\nm,p1,1\n")
    (folder / "prompts.jsonl").write_text('{"prompt_id": "p1", "benchmark": "b", "text": "Q?"}\n')
    env = dict(os.environ, TASKSPACE_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1")

    def ts(*args):
        return subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True, env=env)

    return folder, ts


def test_cli_sources_list_add_remove(tmp_path):
    import json as _json

    folder, ts = _one_prompt_source_and_cli(tmp_path)

    r = ts("index", "--source", str(tmp_path / "typo"))
    assert r.returncode == 2 and "no such file or folder" in r.stderr and "nothing was saved" in r.stderr
    assert not (tmp_path / "home" / "sources.toml").exists()
    assert ts("sources", "add", str(folder)).returncode == 0
    assert ts("sources", "add", "hub-org:open-llm-leaderboard", "--limit", "5").returncode == 0
    # the same source again says nothing changed (it said "added" before); another limit updates it
    r = ts("sources", "add", str(folder))
    assert r.returncode == 0 and r.stdout.strip() == f"{folder} is configured already (nothing changed)"
    r = ts("sources", "add", "hub-org:open-llm-leaderboard", "--limit", "6")
    assert r.returncode == 0 and r.stdout.startswith("updated hub-org:open-llm-leaderboard")
    assert ts("sources", "add", "hub-org:open-llm-leaderboard", "--limit", "5").stdout.startswith("updated")
    r = ts("sources", "list", "--json")
    assert [(s["spec"], s["limit"]) for s in _json.loads(r.stdout)] == [(str(folder), None), ("hub-org:open-llm-leaderboard", 5)]
    r = ts("sources", "remove", "hub:org/unknown")
    assert r.returncode == 2 and "not configured" in r.stderr
    # a configured folder that disappears: the pass names it once, and `sources remove` takes it out
    folder.rename(tmp_path / "moved")
    r = ts("index")
    assert r.returncode == 1 and f"error: {folder}: no such file or folder" in r.stderr
    assert f"{folder}: {folder}" not in r.stderr
    assert ts("sources", "remove", str(folder)).returncode == 0
    r = ts("sources", "list")
    assert r.stdout.strip() == "hub-org:open-llm-leaderboard  limit=5"


def test_limit_on_a_source_that_is_not_an_organisation_is_refused(tmp_path):
    """`--limit N` counts the datasets of a `hub-org:` listing; on a path or a `hub:` repo it would be ignored, so
    `sources add PATH --limit 3`, `index --source PATH --limit 3` and `ingest PATH --limit 3` are usage errors naming
    it (exit 2, one line, nothing saved), as other options a source does not take are; `index --source PATH --source
    hub-org:ORG --limit N` gives the limit to the organisation only. Before, all three accepted it silently, and
    `sources add` saved `limit = 3` on the folder."""
    from indexer.ingest import ingest

    path = tmp_path / "home" / "sources.toml"
    folder, ts = _one_prompt_source_and_cli(tmp_path)
    for spec in (str(folder), "hub:org/repo"):
        # a library call names the library's parameter (before: `--limit`, an option a Python caller has not)
        with pytest.raises(ConfigError, match=r"^source '[^']*': limit= applies only to hub-org: sources") as info:
            sourcelist.add(path, [SourceSpec(spec, limit=3)])
        assert "nothing was saved" in str(info.value) and not path.exists() and "--limit" not in str(info.value)
    with pytest.raises(ConfigError, match="limit= applies only to hub-org: sources") as info:
        ingest(str(folder), limit=3, fetch_metadata=False)
    assert "--limit" not in str(info.value)
    for args in (["sources", "add", str(folder), "--limit", "3"], ["index", "--source", str(folder), "--limit", "3"],
                 ["ingest", str(folder), "--limit", "3", "--no-metadata"]):
        r = ts(*args)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and "--limit applies only to hub-org: sources" in lines[0], (args, r.stderr)
    assert not path.exists()
    with pytest.raises(ConfigError, match="limit= must be a positive integer, not True"):  # True is an int to Python
        sourcelist.add(path, [SourceSpec("hub-org:some-org", limit=True)])
    assert sourcelist.add(path, [SourceSpec("hub-org:some-org", limit=3)])[0].limit == 3  # where it applies


def test_a_limit_below_one_is_named_as_its_caller_wrote_it(tmp_path):
    """A `hub-org:` limit below 1 is refused naming the argument in the caller's words: `--limit` on the command line
    (`sources add`, `index --source`), `limit=` to `indexer.sourcelist.add`, with the value given; nothing is saved.
    Before, both said "limit must be a positive integer", the CLI's option without its dashes and no value."""
    path = tmp_path / "home" / "sources.toml"
    _, ts = _one_prompt_source_and_cli(tmp_path)
    with pytest.raises(ConfigError) as info:
        sourcelist.add(path, [SourceSpec("hub-org:some-org", limit=0)])
    assert str(info.value) == "source 'hub-org:some-org': limit= must be a positive integer, not 0; nothing was saved"
    for args in (["sources", "add", "hub-org:some-org", "--limit", "0"],
                 ["index", "--source", "hub-org:some-org", "--limit", "-3"]):
        r = ts(*args)
        assert r.returncode == 2 and r.stderr.strip().splitlines() == [
            f"error: source 'hub-org:some-org': --limit must be a positive integer, not {args[-1]}; nothing was saved"], r.stderr
    assert not path.exists()


def test_a_hub_source_is_configured_once_whatever_its_revision_or_spelling(tmp_path):
    """One Hub repo is one stored source (`hub:ORG/REPO`, whatever revision was read), so it is configured once:
    `sources add hub:ORG/REPO@v2` replaces `hub:ORG/REPO@v1` (as another format or limit replaces the old), and
    `hub-org:ORG/` is `hub-org:ORG` (`hub:ORG/REPO@`, an empty revision, is refused:
    test_ingest.py::test_an_empty_revision_after_the_at_sign_is_refused_where_a_hub_spec_is_read). Before, each spelling was a source of
    its own: `@v1` and `@v2` both configured made every pass read both revisions, each replacing the other's results
    (the pass never settled), and `hub:a/b@` beside `hub:a/b` read the repo twice."""
    path = tmp_path / "sources.toml"
    sourcelist.add(path, [SourceSpec("hub:org/repo@v1")])
    merged = sourcelist.add(path, [SourceSpec("hub:org/repo@v2"), SourceSpec("hub-org:some-org/")])
    assert [s.spec for s in merged] == ["hub:org/repo@v2", "hub-org:some-org"]
    merged = sourcelist.add(path, [SourceSpec("hub:org/repo"), SourceSpec("hub-org:some-org", limit=3)])
    assert [(s.spec, s.limit) for s in merged] == [("hub:org/repo", None), ("hub-org:some-org", 3)]
    assert [s.spec for s in sourcelist.load(path)] == ["hub:org/repo", "hub-org:some-org"]
    assert sourcelist.remove(path, "hub:org/repo@v1").spec == "hub:org/repo"  # the repo's one entry, however named
    assert [s.spec for s in sourcelist.load(path)] == ["hub-org:some-org"]
    _, ts = _one_prompt_source_and_cli(tmp_path)
    assert ts("sources", "add", "hub:org/other@v1").returncode == 0
    r = ts("sources", "add", "hub:org/other@v2")
    assert r.returncode == 0 and r.stdout.strip().startswith("updated hub:org/other@v2 (replaces hub:org/other@v1"), r.stdout
    assert ts("sources", "list").stdout.strip() == "hub:org/other@v2"


def test_a_hub_source_is_configured_once_whatever_the_case_of_its_repo_id(tmp_path, caplog):
    """`sources add hub:Fake-Org/Results` after `hub:fake-org/results` (the Hub's repo ids are case-insensitive: one
    dataset, one stored source) replaces it, `sources remove` in any case removes it, a file naming it in two cases
    by hand is read once (with the warning of two entries of one repo), and a configured spelling reads the stored
    source of another (`sourcelist.reading`, which `sources drop` asks), as does a `hub-org:` in another case. Before,
    each case was a source of its own: both configured, both read every pass."""
    import logging

    path = tmp_path / "sources.toml"
    sourcelist.add(path, [SourceSpec("hub:fake-org/results")], check=False)
    merged = sourcelist.add(path, [SourceSpec("hub:Fake-Org/Results@v2")], check=False)
    assert [s.spec for s in merged] == ["hub:Fake-Org/Results@v2"]
    assert sourcelist.remove(path, "hub:FAKE-ORG/results").spec == "hub:Fake-Org/Results@v2"
    path.write_text('source = [\n    { spec = "hub:fake-org/results" },\n    { spec = "hub:Fake-Org/Results" },\n]\n')
    with caplog.at_level(logging.WARNING, logger="indexer.sourcelist"):
        assert [s.spec for s in sourcelist.load(path)] == ["hub:Fake-Org/Results"]
    assert "are one Hub repo" in caplog.text, caplog.text
    configured = [SourceSpec("hub:Fake-Org/Results"), SourceSpec("hub-org:Other-Org")]
    assert [s.spec for s in sourcelist.reading("hub:fake-org/results", configured)] == ["hub:Fake-Org/Results"]
    assert [s.spec for s in sourcelist.reading("hub:other-org/x", configured)] == ["hub-org:Other-Org"]


def test_a_path_inside_or_holding_a_configured_source_is_refused(tmp_path):
    """A folder and a file in it would be two sources storing every outcome twice: `sources add` of either when the
    other is configured is refused (nothing saved); before, both were added."""
    from indexer.errors import ConfigError

    folder = tmp_path / "s1"
    folder.mkdir()
    (folder / "outcomes.csv").write_text("model,prompt_id,correct\nm,p1,1\n")
    (folder / "prompts.jsonl").write_text('{"prompt_id": "p1", "benchmark": "b", "text": "Q?"}\n')
    (tmp_path / "s10").mkdir()  # a sibling whose name starts like it is not inside it
    cfg = tmp_path / "sources.toml"
    sourcelist.add(cfg, [SourceSpec(str(folder))])
    with pytest.raises(ConfigError, match=r"is inside the configured source .*s1'.*nothing was saved"):
        sourcelist.add(cfg, [SourceSpec(str(folder / "outcomes.csv"))])
    assert [s.spec for s in sourcelist.load(cfg)] == [str(folder)]
    sourcelist.add(cfg, [SourceSpec(str(tmp_path / "s10"))])
    cfg2 = tmp_path / "other.toml"
    sourcelist.add(cfg2, [SourceSpec(str(folder / "outcomes.csv"))])
    with pytest.raises(ConfigError, match=r"holds the configured source .*outcomes.csv'.*nothing was saved"):
        sourcelist.add(cfg2, [SourceSpec(str(folder))])
    assert [s.spec for s in sourcelist.load(cfg2)] == [str(folder / "outcomes.csv")]


def test_dropping_a_stored_source_removes_its_results_and_the_next_pass_its_models(tmp_path, encoder):
    """`taskspace sources drop LOCATION` deletes a stored source's results (one transaction); the next pass removes
    the models left without results from the index and re-solves the others; `check` is clean. Before, there was no
    way short of a new database (`sources remove` keeps stored results, the errors named `Store.delete_source`)."""
    import numpy as np

    from helpers import TOPICS, index_sources, outcomes
    from indexer import sync
    from indexer.errors import NotFoundError
    from indexer.ingest import drop_source, stored_sources
    from indexer.pipeline import Indexer

    texts = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j}?" for j in range(12)]
    rng = np.random.default_rng(1)
    a, b = tmp_path / "a", tmp_path / "b"
    store, vectors = index_sources(encoder, [(a, "alpha", texts[:6], outcomes(rng, ["m1", "m2"], 6)),
                                             (b, "beta", texts[6:], outcomes(rng, ["m2", "m3"], 6))])
    try:
        assert [(r["location"], r["outcomes"]) for r in stored_sources(store)] == [(str(a), 12), (str(b), 12)]
        with pytest.raises(NotFoundError, match=r"no stored source .*did you mean .*/b"):
            drop_source(str(tmp_path / "bb"), store=store)
        assert drop_source(str(b), store=store) == {"location": str(b), "outcomes": 12}
        assert [r["location"] for r in stored_sources(store)] == [str(a)]
        from indexer.config import get_settings

        sourcelist.remove(get_settings().sources_file, str(b))  # still configured, the pass would read it again
        r = Indexer(store, vectors, encoder=encoder).run([])
        assert r.status == "ok", r.errors
        (space,) = store.list_spaces()
        assert sorted(store.model_vector_keys(space.id)) == ["m1", "m2"]
        assert sorted(h.key for h in vectors.scan(sync.space_name(space), "models")) == ["m1", "m2"]
        assert all(d.clean for d in sync.check(store, vectors))
    finally:
        vectors.close()
        store.close()


def test_cli_sources_stored_and_drop(tmp_path):
    """The commands: `stored` lists what the database holds, `drop` deletes one (by its path too) and notes when it is
    still configured; an unknown location is exit 1 naming close ones."""
    import json as _json

    folder, ts = _one_prompt_source_and_cli(tmp_path)

    assert "does not exist: nothing is indexed" in ts("sources", "stored").stderr  # a home never indexed
    assert ts("ingest", str(folder)).returncode == 0
    assert ts("sources", "add", str(folder)).returncode == 0
    rows = _json.loads(ts("sources", "stored", "--json").stdout)
    assert [(r["location"], r["kind"], r["outcomes"]) for r in rows] == [(str(folder.resolve()), "table", 1)]
    bad = ts("sources", "drop", str(folder) + "x")
    assert bad.returncode == 1 and "no stored source" in bad.stderr and str(folder.resolve()) in bad.stderr
    out = ts("sources", "drop", str(tmp_path / "results" / ".." / "results"))
    assert out.returncode == 0, out.stderr
    assert f"dropped {folder.resolve()} (1 outcome cell)" in out.stdout and "still configured" in out.stdout
    assert _json.loads(ts("sources", "stored", "--json").stdout) == []


def test_dropping_a_source_notes_every_configured_spec_that_reads_it_again(tmp_path):
    """`taskspace sources drop LOCATION` notes that the next pass reads the source again when a configured spec reads
    it under another name: a Hub repo configured at a revision (`hub:org/repo@v1`, stored as `hub:org/repo`), the
    `hub-org:` that lists it, the folder holding an lm-eval model folder; `drop hub:org/repo@v1` drops the repo.
    Before, only a spec equal to the location (or its path) was noted, so those were re-ingested by the next pass
    without a word, and `drop hub:org/repo@v1` was "no stored source"."""
    from helpers import source_batch

    from indexer.store.sql import open_store

    folder, ts = _one_prompt_source_and_cli(tmp_path)
    lm = tmp_path / "lm_out"
    (lm / "org__model").mkdir(parents=True)
    configured = [SourceSpec("hub:org/repo@v1"), SourceSpec("hub-org:org"), SourceSpec("hub:other/repo"),
                  SourceSpec(str(lm))]
    assert [s.spec for s in sourcelist.reading("hub:org/repo", configured)] == ["hub:org/repo@v1", "hub-org:org"]
    assert [s.spec for s in sourcelist.reading(str(lm / "org__model"), configured)] == [str(lm)]
    assert sourcelist.reading(str(folder.resolve()), configured) == []
    assert ts("sources", "add", "hub:org/repo@v1").returncode == 0
    assert ts("sources", "add", "hub-org:org").returncode == 0
    with open_store() as store:  # the CLI's home: the autouse fixture's TASKSPACE_HOME, tmp_path / "home"
        store.ingest(source_batch("hub:org/repo"))
    out = ts("sources", "drop", "hub:org/repo@v1")
    assert out.returncode == 0, out.stderr
    notes = [line for line in out.stdout.splitlines() if line.startswith("note:")]
    assert notes == ["note: hub:org/repo@v1 is still configured, so the next pass reads it again (`taskspace sources "
                     "remove hub:org/repo@v1` stops that)",
                     "note: hub-org:org is still configured, so the next pass reads it again (`taskspace sources "
                     "remove hub-org:org` stops that)"], out.stdout


def test_a_configured_source_that_vanished_says_it_is_configured_and_how_to_remove_it(tmp_path):
    """A folder configured in sources.toml and then removed: the pass's error says the source is configured, its path
    gone, and to `taskspace sources remove` it, naming it once and without the Hub hint (an absolute path was never
    meant as `hub:`); before, "no such file or folder (for a Hub dataset write hub:ORG/REPO)". `ingest org/name` of a
    missing relative path that could be a Hub repo id keeps the hint, written with that id."""
    import json as _json
    import os
    import shutil
    import subprocess
    import sys

    env = dict(os.environ, TASKSPACE_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1")

    def ts(*args, cwd=None):
        return subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True, env=env,
                              cwd=cwd or Path(__file__).resolve().parents[1])

    folder = tmp_path / "vanish"
    folder.mkdir()
    (folder / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\n")
    (folder / "prompts.csv").write_text("prompt_id,benchmark,text\np1,b,What is 2+2?\n")
    assert ts("sources", "add", str(folder)).returncode == 0
    shutil.rmtree(folder)
    r = ts("index", "--json")
    assert r.returncode == 1, r.stderr[-2000:]
    errors = _json.loads(r.stdout)["errors"]
    assert len(errors) == 1 and errors[0]["file"] == str(folder), errors
    message = errors[0]["message"]
    assert message.startswith("no such file or folder: this source is configured in sources.toml"), message
    assert f"`taskspace sources remove {folder}`" in message and "hub:" not in message and str(folder) not in \
        message.replace(f"remove {folder}", ""), message
    r = ts("index")
    assert r.returncode == 1 and f"error: {folder}: no such file or folder: this source is configured" in r.stderr
    r = ts("ingest", "org/name")  # relative to the checkout, where there is no such folder
    assert r.returncode == 1 and r.stderr.strip().splitlines()[-1] == (
        "error: org/name: no such file or folder (for a Hub dataset write hub:org/name)"), r.stderr


def test_a_configured_empty_folder_is_nothing_to_read_yet_not_a_failing_source(tmp_path):
    """`taskspace sources add` takes an empty folder (one results will land in, docs/WORKER.md); a pass then reads
    nothing there and says so (`empty`), the run `ok` and exit 0, and the pass after a file arrived ingests it.
    Before, every pass failed on it ("cannot tell the format of this folder"): run `partial`, exit 1, a worker
    logging an error each time until the first results came. `taskspace ingest` of an empty folder is still an
    error (asked to read it, there is nothing)."""
    import json as _json

    folder, ts = _one_prompt_source_and_cli(tmp_path)
    empty = tmp_path / "landing"
    empty.mkdir()
    assert ts("sources", "add", str(empty)).returncode == 0
    r = ts("index", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    out = _json.loads(r.stdout)
    assert out["status"] == "ok" and out["errors"] == [], out
    assert out["sources"] == [{"spec": str(empty), "status": "empty", "errors": 0}]
    r = ts("index")
    assert r.returncode == 0 and f"  empty       {empty}" in r.stdout.splitlines(), r.stdout
    for f in folder.iterdir():  # results land
        (empty / f.name).write_bytes(f.read_bytes())
    r = ts("index", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    assert _json.loads(r.stdout)["sources"] == [{"spec": str(empty), "status": "ingested", "errors": 0}]
    (tmp_path / "other").mkdir()
    assert ts("ingest", str(tmp_path / "other")).returncode == 1


def test_a_format_that_does_not_fit_the_path_is_refused_before_saving(tmp_path):
    """`sources add PATH --format F` (and `index --source PATH --format F`) where F's reader does not recognise PATH
    is refused (exit 2, nothing saved), naming what F's files look like and what PATH reads as; the format that
    fits is saved. Before, any known format was saved without a look at the path, and every later pass failed on it
    ("no lm-eval samples files ...") -- the typo docs/WORKER.md says is refused before it is saved."""
    folder, ts = _one_prompt_source_and_cli(tmp_path)
    # the library's parameter to a library call (before: the CLI's `--format`)
    with pytest.raises(ConfigError) as info:
        sourcelist.add(tmp_path / "home" / "sources.toml", [SourceSpec(str(folder), format="lm_eval")])
    assert str(info.value).endswith("it reads as table (drop format=, or give format='table'); nothing was saved")
    r = ts("sources", "add", str(folder), "--format", "lm_eval")
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == (
        f"error: source '{folder}': not a lm_eval source: expected samples_<task>_<ts>.jsonl + results_<ts>.json or "
        "<name>_<ts>.json (lm-eval); it reads as table (drop --format, or give --format table); nothing was saved")
    r = ts("index", "--source", str(folder), "--format", "lighteval")
    assert r.returncode == 2 and "not a lighteval source" in r.stderr and "nothing was saved" in r.stderr
    assert not (tmp_path / "home" / "sources.toml").exists()
    assert ts("sources", "add", str(folder), "--format", "table").returncode == 0
    empty = tmp_path / "later"  # an empty folder may fill later, whatever its format
    empty.mkdir()
    assert ts("sources", "add", str(empty), "--format", "lm_eval").returncode == 0


def test_changing_the_sources_of_a_read_only_home_is_one_line_naming_the_file(tmp_path):
    """`sources add` / `sources remove` on a home that cannot be written (a read-only mount): one
    line naming sources.toml and what to do, exit 2, the file unchanged; `sources list` still reads it. Before, an
    OSError traceback from creating `sources.toml.lock`."""
    from helpers import run_in_read_only_home

    folder, ts = _one_prompt_source_and_cli(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    home = tmp_path / "home"
    assert ts("sources", "add", str(folder)).returncode == 0
    before = (home / "sources.toml").read_text()
    for args in (["sources", "add", str(other)], ["sources", "remove", str(folder)]):
        r = run_in_read_only_home(home, *args)
        assert r.returncode == 2, (args, r.stderr)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert f"error: {home / 'sources.toml'}: cannot be written" in r.stderr and "nothing was saved" in r.stderr
        assert "TASKSPACE_HOME" in r.stderr
    assert (home / "sources.toml").read_text() == before
    r = run_in_read_only_home(home, "sources", "list")
    assert r.returncode == 0 and r.stdout.strip() == str(folder)


def test_a_relative_path_written_by_hand_is_read_relative_to_the_sources_file(tmp_path):
    """A `spec` written by hand as a relative path (`../results`) names the folder relative to sources.toml's folder
    (TASKSPACE_HOME), whatever folder the worker or `taskspace index` runs in: `sources list` shows it absolute and a
    pass run from another folder ingests it. Before, it was resolved against the current folder, so the same file
    named another folder (or none) depending on where the command was started."""
    import os
    import subprocess
    import sys

    folder, _ = _one_prompt_source_and_cli(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / "sources.toml").write_text('[[source]]\nspec = "../results"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, TASKSPACE_HOME=str(home), HF_HUB_OFFLINE="1",
               PYTHONPATH=str(Path(__file__).resolve().parent.parent))

    def ts(*args):
        return subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True, env=env,
                              cwd=elsewhere)

    assert [s.spec for s in sourcelist.load(home / "sources.toml")] == [str(folder)]
    r = ts("sources", "list")
    assert r.returncode == 0 and r.stdout.strip() == str(folder)
    r = ts("index")
    assert r.returncode == 0 and f"ingested    {folder}" in r.stdout, r.stdout + r.stderr


def test_index_format_without_a_source_is_a_usage_error(tmp_path):
    """`taskspace index --format F` without `--source`: `--format` names the reader of the sources given with
    `--source` (the configured ones keep the format sources.toml gives them), so it would be ignored; a usage error
    naming it (exit 2, one line) before any pass, as `--limit` without a hub-org: source is. Before, a pass ran
    (exit 0) and the option was dropped without a word."""
    folder, ts = _one_prompt_source_and_cli(tmp_path)
    assert ts("sources", "add", str(folder)).returncode == 0
    r = ts("index", "--format", "lm_eval")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "--format applies only to the sources given with --source" in lines[0]
    r = ts("runs", "--json")  # no pass ran: no database was made (`runs` says so and makes none)
    assert r.returncode == 1 and "does not exist" in r.stdout + r.stderr, (r.stdout, r.stderr)
    assert not (tmp_path / "home" / "taskspace.db").exists()


def test_a_sources_file_that_is_not_utf8_or_not_a_file_is_one_line_naming_it(tmp_path):
    """sources.toml saved in Latin-1 (a path with "é" written by hand) or replaced by a folder: `sources list`,
    `sources add` and `index` say what is wrong with the file, one line, exit 2. Before, a UnicodeDecodeError or
    IsADirectoryError traceback from every command that reads it (a worker failed every pass so)."""
    folder, ts = _one_prompt_source_and_cli(tmp_path)
    path = tmp_path / "home" / "sources.toml"
    path.parent.mkdir()
    for setup, says in ((lambda: path.write_bytes(b'[[source]]\nspec = "/data/caf\xe9"\n'),
                         f"error: {path}: not UTF-8 text (byte 0xe9 at line 2); TOML files are UTF-8"),
                        (lambda: path.mkdir(), f"error: {path}: cannot be read: Is a directory")):
        setup()
        for args in (["sources", "list"], ["sources", "add", str(folder)], ["index"]):
            r = ts(*args)
            assert r.returncode == 2 and r.stderr.startswith(says), (args, r.stderr)
            assert len(r.stderr.strip().splitlines()) == 1
        if path.is_file():
            path.unlink()


def test_a_pass_without_configured_sources_says_where_sources_come_from(tmp_path):
    """`taskspace index` on a home with no sources.toml entry: the summary says no source is configured (naming the
    file) and how to add one; with a source configured it says nothing of the kind. Before, "run 1: ok" and zeros,
    and the search that followed said to run `taskspace index`, the command just run."""
    folder, ts = _one_prompt_source_and_cli(tmp_path)
    r = ts("index")
    assert r.returncode == 0
    assert f"  no sources configured in {tmp_path / 'home' / 'sources.toml'}: `taskspace sources add SPEC`" in r.stdout
    r = ts("index", "--source", str(folder))
    assert r.returncode == 0 and "no sources configured" not in r.stdout


@pytest.mark.parametrize("text", ["[[sources]]\nspec = '/x'\n", "spec = '/x'\n",
                                  "[[source]]\nspec = '/x'\n[[Source]]\nspec = '/y'\n"])
def test_a_top_level_key_other_than_source_is_refused_not_ignored(tmp_path, text):
    """A `sources.toml` whose tables are misnamed (`[[sources]]`, `[[Source]]`, a bare `spec = ...`): a configuration
    error naming the file and the key (`sources list` and every pass, exit 2); before, the key was ignored: "no sources
    configured" and every pass indexed nothing, without a word."""
    from typer.testing import CliRunner

    from indexer.cli import app

    path = tmp_path / "sources.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"unknown key \['(sources|spec|Source)'\] at the top level; a source is a \[\[source\]\]") as info:
        sourcelist.load(path)
    assert str(path) in str(info.value)
    r = CliRunner().invoke(app, ["sources", "list"], env={"TASKSPACE_HOME": str(tmp_path)})
    assert isinstance(r.exception, ConfigError) and "no sources configured" not in r.output


def test_a_sources_file_saved_with_a_byte_order_mark_is_read(tmp_path):
    """`sources.toml` saved as "UTF-8 with BOM" (Windows Notepad, some editors): read as the same file without it, and
    `sources add` keeps its entries; before, "not valid TOML (Invalid statement (at line 1, column 1))", a first line
    with nothing visible wrong, and every pass failed."""
    from helpers import write_table

    data = tmp_path / "data"
    write_table(data, "bench", {"m1": [1, 0]}, 2)
    path = tmp_path / "sources.toml"
    path.write_bytes(b"\xef\xbb\xbf" + f'[[source]]\nspec = "{data}"\n'.encode())
    assert [s.spec for s in sourcelist.load(path)] == [str(data)]
    other = tmp_path / "other"
    write_table(other, "bench2", {"m1": [1, 0]}, 2)
    sourcelist.add(path, [SourceSpec(str(other))])
    assert [s.spec for s in sourcelist.load(path)] == [str(data), str(other)]


def test_one_path_written_twice_by_hand_is_one_source(tmp_path, caplog):
    """A hand-written `sources.toml` naming one folder twice (`/x` and `/x/`, or an absolute and a relative path):
    one source, read once, with a warning naming both entries; before, both were kept and every pass read the
    folder twice. The same folder with another format or limit is that source too, read at the later entry (as one Hub
    repo written twice is); before, it stayed a source of its own."""
    import logging

    from helpers import write_table

    data = tmp_path / "data"
    write_table(data, "bench", {"m1": [1, 0]}, 2)
    path = tmp_path / "sources.toml"
    path.write_text(f'[[source]]\nspec = "{data}"\n\n[[source]]\nspec = "{data}/"\n\n[[source]]\nspec = "data"\n\n'
                    f'[[source]]\nspec = "{data}"\nlimit = 3\n')
    with caplog.at_level(logging.WARNING, logger="indexer.sourcelist"):
        got = sourcelist.load(path)
    assert [(s.spec, s.limit) for s in got] == [(str(data), 3)]
    assert f"source #2 is source #1 again ({data}); it is read once" in caplog.text
    assert "source #3 is source #1 again" in caplog.text
    assert f"source #1 ({data}) and source #4 ({data} with limit=3) are one path ({data})" in caplog.text


def test_runs_shows_which_source_failed_and_why(tmp_path):
    """`taskspace runs` counted a run's errors and no command showed them (a worker's log did, if kept): which file
    or source failed was only in the database. Now the table prints a run's first errors under it as `taskspace index`
    prints them (`error: file:line: message`, then how many more) and `--json` lists every one (`error_details`)."""
    import json as _json

    folder, ts = _one_prompt_source_and_cli(tmp_path)
    gone = tmp_path / "gone"
    assert ts("sources", "add", str(folder)).returncode == 0
    for k in range(5):  # five configured folders that vanished: five item errors of one pass
        (gone / str(k)).mkdir(parents=True)
        assert ts("sources", "add", str(gone / str(k))).returncode == 0
    import shutil

    shutil.rmtree(gone)
    assert ts("index").returncode == 1
    table = ts("runs")
    lines = table.stdout.splitlines()
    assert table.returncode == 0 and "partial" in lines[1], table.stdout
    shown = [x.strip() for x in lines[2:] if x.strip().startswith("error: ")]
    assert len(shown) == 3 and shown[0].startswith(f"error: {gone / '0'}: no such file or folder"), table.stdout
    assert lines[-1].strip() == "... and 2 more (taskspace runs --json lists them)", table.stdout
    (run,) = _json.loads(ts("runs", "--json").stdout)
    assert run["errors"] == 5 and len(run["error_details"]) == 5
    assert {e["file"] for e in run["error_details"]} == {str(gone / str(k)) for k in range(5)}


def test_sources_list_marks_a_configured_path_that_is_gone(tmp_path):
    """`taskspace sources list` marks a configured path that no longer exists (removed, moved, not mounted) and says
    how to take it out, and `--json` gives `"missing": true`; before, it was listed as any other source while every
    pass failed on it, so the list the error sends the user to did not show which entry was the broken one."""
    import json as _json

    folder, ts = _one_prompt_source_and_cli(tmp_path)
    assert ts("sources", "add", str(folder)).returncode == 0
    assert ts("sources", "add", "hub:org/repo").returncode == 0
    r = ts("sources", "list")
    assert r.returncode == 0 and r.stdout.splitlines() == [str(folder), "hub:org/repo"], r.stdout
    folder.rename(tmp_path / "moved")
    r = ts("sources", "list")
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and lines[1] == "hub:org/repo", r.stdout
    assert lines[0].startswith(f"{folder}  (missing: no such file or folder") and \
        f"`taskspace sources remove {folder}`" in lines[0], lines
    r = ts("sources", "list", "--json")
    assert [s.get("missing") for s in _json.loads(r.stdout)] == [True, None], r.stdout
    # every entry has the same keys, "missing" null where it does not apply (a Hub source); before, a Hub entry had
    # no "missing" key, so a script reading `s["missing"]` failed on it
    local, hub = _json.loads(r.stdout)
    assert list(local) == list(hub) and hub["missing"] is None and "missing" in hub, r.stdout


def test_index_and_runs_count_the_rows_a_source_had_rejected(tmp_path):
    """A source with 25 bad rows of one problem (20 detailed, one line "5 more rows rejected"): `taskspace index`
    says "(25 errors)" beside it (and `--json` `sources[].errors` 25) and `taskspace runs` 25 in its errors column,
    as `taskspace ingest` counts them; before, 21, the lines recorded. `runs --json` keeps `errors` as the number of
    `error_details`."""
    import json as _json

    from indexer.sources.common import MAX_ERRORS_PER_PROBLEM

    folder, ts = _one_prompt_source_and_cli(tmp_path)
    n = MAX_ERRORS_PER_PROBLEM + 5
    (folder / "outcomes.csv").write_text("model,prompt_id,correct\nm,p1,1\n" + "".join(f"m{i},p1,x\n" for i in range(n)))
    res = ts("index", "--source", str(folder), "--json")
    assert res.returncode == 1, res.stderr
    (src,) = _json.loads(res.stdout)["sources"]
    assert src["errors"] == n, src
    table = ts("runs").stdout.splitlines()
    assert table[1].split()[:3] == ["1", "index", "partial"] and table[1].split()[-1] == str(n), table
    (run,) = _json.loads(ts("runs", "--json").stdout)
    assert run["errors"] == len(run["error_details"]) == MAX_ERRORS_PER_PROBLEM + 1
    folder2 = tmp_path / "results2"  # the text, for another source with the same rows
    folder2.mkdir()
    (folder2 / "outcomes.csv").write_text((folder / "outcomes.csv").read_text())
    (folder2 / "prompts.jsonl").write_text((folder / "prompts.jsonl").read_text())
    res = ts("index", "--source", str(folder2))
    assert f"ingested    {folder2}  ({n} errors)" in res.stdout, res.stdout


def test_changing_the_sources_of_a_home_on_a_full_disk_says_the_disk_is_full(tmp_path):
    """`taskspace sources add` with TASKSPACE_HOME on a disk with no room left (a 256 kB tmpfs, filled): one line
    naming `sources.toml`, that nothing was saved and that the disk is full (exit 2), the file unchanged; before,
    "No space left on device; ... make that folder writable", advice for a read-only home."""
    import os
    import shlex
    import sys
    from pathlib import Path

    from helpers import run_on_a_small_disk

    root = Path(__file__).resolve().parent.parent
    home = tmp_path / "home"
    home.mkdir()
    fill = f"dd if=/dev/zero of={home / 'filler'} bs=4096 2>/dev/null"
    add = shlex.join([sys.executable, "-m", "indexer.cli", "sources", "add", str(root / "indexer" / "data" / "sample")])
    res = run_on_a_small_disk(home, "256k", f"{fill}; exec {add}", timeout=120,
                              env={**os.environ, "TASKSPACE_HOME": str(home), "HF_HUB_OFFLINE": "1"})
    assert res.returncode == 2, res.stderr[-2000:]
    line = res.stderr.strip().splitlines()[-1]
    assert "sources.toml: cannot be written" in line and "nothing was saved" in line, line
    assert "The disk holding TASKSPACE_HOME is full" in line and "writable" not in line, line


def test_index_source_of_an_empty_folder_is_refused_as_ingest_refuses_it(tmp_path):
    """`taskspace index --source DIR` on an empty folder is asked to read it now, as `taskspace ingest DIR` is: an
    error naming the folder and the files it looks for, non-zero exit (2, nothing saved, as for a folder of no
    format), with a pointer to `sources add` for a folder results will land in later. Before, the folder was saved
    and the pass said `empty`, `ok`, exit 0 (while `ingest` of the same folder failed). A configured folder that is
    empty at a later pass (emptied after it was read) is still no error of that pass: shown `empty`, its stored
    results kept, the other sources indexed."""
    import json as _json

    folder, ts = _one_prompt_source_and_cli(tmp_path)
    empty = tmp_path / "nothing"
    empty.mkdir()
    r = ts("index", "--source", str(empty))
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stderr.strip() == (
        f"error: source '{empty}': the folder is empty: put a source's files in it (outcomes.<ext> + prompts.<ext> "
        "(plain table), samples_<task>_<ts>.jsonl + results_<ts>.json or <name>_<ts>.json (lm-eval), or "
        "details_*.parquet (lighteval)); to configure a folder that results will land in later, run `taskspace "
        f"sources add {empty}`; nothing was saved"), r.stderr
    assert not (tmp_path / "home" / "sources.toml").exists()
    with pytest.raises(ConfigError, match="the folder is empty"):  # the library's pass with extra sources, likewise
        from indexer.pipeline import run_index
        run_index([SourceSpec(str(empty))])
    assert ts("ingest", str(empty)).returncode == 1
    # emptied after it was read: the pass goes on with the other sources, the stored results stay
    assert ts("index", "--source", str(folder)).returncode == 0
    for f in folder.iterdir():
        f.unlink()
    other = tmp_path / "other"
    other.mkdir()
    (other / "outcomes.csv").write_text("model,prompt_id,correct\nm2,p1,0\n")
    (other / "prompts.jsonl").write_text('{"prompt_id": "p1", "benchmark": "b", "text": "Q?"}\n')
    assert ts("sources", "add", str(other)).returncode == 0
    r = ts("index", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    out = _json.loads(r.stdout)
    assert out["sources"] == [{"spec": str(folder), "status": "empty", "errors": 0},
                              {"spec": str(other), "status": "ingested", "errors": 0}], out
    r = ts("models", "--json")
    assert r.returncode == 0 and {m["model"] for m in _json.loads(r.stdout)["models"]} == {"m", "m2"}, r.stdout


def test_index_source_of_a_configured_folder_that_is_empty_runs_the_pass(tmp_path):
    """A folder configured with `taskspace sources add` (one results will land in) and still empty, or emptied after
    it was read, is no error of `taskspace index --source DIR` either: the pass shows it `empty` (exit 0), as a pass
    without `--source` does. Before, it was refused as an unconfigured empty folder is, advising to `taskspace
    sources add` it, which it already was."""
    import json as _json

    folder, ts = _one_prompt_source_and_cli(tmp_path)
    later = tmp_path / "later"
    later.mkdir()
    assert ts("sources", "add", str(later)).returncode == 0
    r = ts("index", "--source", str(later), "--json")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert {"spec": str(later), "status": "empty", "errors": 0} in _json.loads(r.stdout)["sources"], r.stdout
    assert ts("index", "--source", str(folder)).returncode == 0
    for f in folder.iterdir():  # emptied after it was read
        f.unlink()
    r = ts("index", "--source", str(folder), "--json")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert {"spec": str(folder), "status": "empty", "errors": 0} in _json.loads(r.stdout)["sources"], r.stdout
    r = ts("models", "--json")  # its stored results kept
    assert r.returncode == 0 and {m["model"] for m in _json.loads(r.stdout)["models"]} == {"m"}, r.stdout


def test_one_hub_repo_written_twice_by_hand_is_read_at_the_later_entry(tmp_path, caplog):
    """A hand-written `sources.toml` with two entries of one Hub repo (`hub:org/repo@v1`, then `hub:org/repo@v2`,
    or the same repo with another format): one stored source, so it is read once, at the later entry (the one
    `taskspace sources add` keeps), in the earlier entry's place, with one warning naming both entries and the one
    read. Before, both were read every pass, each replacing the other's results."""
    import logging

    path = tmp_path / "sources.toml"
    path.write_text('[[source]]\nspec = "hub:org/repo@v1"\n\n[[source]]\nspec = "hub:other/repo"\n\n'
                    '[[source]]\nspec = "hub:org/repo@v2"\n\n[[source]]\nspec = "hub:other/repo"\nformat = "table"\n')
    with caplog.at_level(logging.WARNING, logger="indexer.sourcelist"):
        got = sourcelist.load(path)
    assert got == [SourceSpec("hub:org/repo@v2"), SourceSpec("hub:other/repo", format="table")]
    said = " ".join(caplog.text.split())
    assert (f"{path}: source #1 (hub:org/repo@v1) and source #3 (hub:org/repo@v2) are one Hub repo (hub:org/repo)"
            in said), said
    assert "source #3 (hub:org/repo@v2) is read" in said, said
    assert "source #4 (hub:other/repo with format='table') is read" in said, said
    assert said.count("are one Hub repo") == 2, said
    # `sources add` of that repo leaves one entry, as the pass reads it
    assert [s.spec for s in sourcelist.add(path, [SourceSpec("hub:org/repo@v3")], check=False)] == [
        "hub:org/repo@v3", "hub:other/repo"]


def test_sources_stored_and_drop_write_counts_with_thousands_separators(capsys, monkeypatch):
    """`taskspace sources stored` and `drop` write an outcome count as every other command does ("5,097,418", the
    tables' :func:`indexer.cli_find.count`); `--json` keeps the integer. Before, "5097418 outcome cell(s)"."""
    import json as _json

    from helpers import run_cli

    rows = [{"location": "hub:org/big", "kind": "hub", "revision": "0123456789abcdef", "outcomes": 5097418}]
    monkeypatch.setattr("indexer.ingest.stored_sources", lambda: rows)
    monkeypatch.setattr("indexer.ingest.drop_source", lambda location: {"location": location, "outcomes": 32823})
    code, out, _ = run_cli(capsys, "sources", "stored")
    assert code == 0 and out == "hub:org/big  hub  revision 0123456789ab  5,097,418 outcome cells\n", out
    code, out, _ = run_cli(capsys, "sources", "stored", "--json")
    assert code == 0 and _json.loads(out)[0]["outcomes"] == 5097418
    code, out, _ = run_cli(capsys, "sources", "drop", "hub:org/big")
    assert code == 0 and out.startswith("dropped hub:org/big (32,823 outcome cells);"), out


def test_the_library_takes_a_str_file_and_pathlib_paths_and_names_a_spec_that_is_no_path(tmp_path):
    """`sourcelist.add("sources.toml", [...])`, `load(str)` and `remove(str, Path)`: the file given as a string and a
    source as a `pathlib.Path` (in a `SourceSpec`, alone or as a list of them) or a string, as `ingest` takes them; a
    spec that is no path (None, bytes) is an InputError naming it. Before, AttributeError tracebacks ('str' object has
    no attribute 'parent', 'PosixPath' object has no attribute 'spec' / 'strip'), and `SourceSpec(Path)` was kept as a
    Path that failed later."""
    from indexer.errors import InputError

    folder = tmp_path / "results"
    folder.mkdir()
    file = str(tmp_path / "sources.toml")
    assert sourcelist.add(file, [SourceSpec(folder)]) == [SourceSpec(str(folder))]
    assert SourceSpec(folder).spec == str(folder) and sourcelist.load(file) == [SourceSpec(str(folder))]
    assert sourcelist.add(file, SourceSpec("hub:org/repo")) == [SourceSpec(str(folder)), SourceSpec("hub:org/repo")]
    assert sourcelist.add(Path(file), [folder, "hub:org/other"])[-1] == SourceSpec("hub:org/other")
    assert sourcelist.remove(file, folder) == SourceSpec(str(folder))
    assert [s.spec for s in sourcelist.load(Path(file))] == ["hub:org/repo", "hub:org/other"]
    for bad in (None, b"hub:org/repo", 3):
        with pytest.raises(InputError, match="^spec must be a path") as err:
            SourceSpec(bad)
        assert err.value.item == "spec"
        with pytest.raises(InputError, match="^spec must be a path"):
            sourcelist.remove(file, bad)


def test_a_sources_file_this_user_may_not_read_says_to_make_it_readable(tmp_path, monkeypatch):
    """A sources.toml this user may not read (written by root with mode 600, a worker started as a service user): the
    error (every pass of the worker, `taskspace index`) names the file and says to make it readable by this user, not
    to "fix or delete it", which would lose the configured sources. Before, "cannot be read: Permission denied; it
    should be the TOML file of the configured sources: fix or delete it"."""
    import os

    path = tmp_path / "sources.toml"
    path.write_text('[[source]]\nspec = "/data/x"\n')
    path.chmod(0)
    if os.geteuid() == 0:  # root reads it all the same: the read fails as it does for another user
        def denied(self, *a, **k):
            raise PermissionError(13, "Permission denied", str(self))

        monkeypatch.setattr(Path, "read_text", denied)
    with pytest.raises(ConfigError) as err:
        sourcelist.load(path)
    said = str(err.value)
    assert said.startswith(f"{path}: cannot be read: Permission denied") and "fix or delete" not in said, said
    assert f"uid {os.geteuid()}" in said and "make it readable" in said and "chmod a+r" in said, said
