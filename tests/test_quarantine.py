"""A bad new revision never replaces a good stored one: quarantine (indexer.ingest.QUARANTINE_LOSS), CSV quote errors
reported at their line with reading going on, and `--accept-partial`."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from indexer.ingest import QUARANTINE_LOSS, ingest

from helpers import outcomes, write_source


def _copy_evalarena(shared_data, dest: Path) -> Path:
    dest.mkdir(parents=True)
    for name in ("outcomes.csv.gz", "prompts.jsonl"):
        shutil.copy(shared_data / "evalarena_code" / name, dest / name)
    return dest


def _state(store, location):
    src = store.get_source(location)
    return src.revision, src.n_outcomes, store.model_digests()


def test_stray_quote_and_truncated_copy_are_quarantined(store, tmp_path, shared_data):
    """The two cases of issue 18 on the real evalarena_code table: one stray `"` at line 101, and the file cut
    mid-copy (`head -c 132000`). Each new revision is quarantined: nothing stored changes, the error says why and
    how to accept; --accept-partial stores it."""
    d = _copy_evalarena(shared_data, tmp_path / "evalarena_code")
    first = ingest(str(d), store=store, fetch_metadata=False)
    assert first.errors == [] and first.sources == 1
    location = str(d.resolve())
    before = _state(store, location)
    n_models = len(store.load_outcomes().models)

    raw = gzip.decompress((d / "outcomes.csv.gz").read_bytes()).decode()
    lines = raw.splitlines(keepends=True)
    lines[100] = '"' + lines[100]  # line 101 of the file (the header is line 1)
    (d / "outcomes.csv.gz").write_bytes(gzip.compress("".join(lines).encode()))
    s = ingest(str(d), store=store, fetch_metadata=False)
    # the quote error is reported at its line and reading went on: the rest of the file is read
    quote = [e for e in s.errors if e.line == 101]
    assert quote and "quoted field opens on this line" in quote[0].message
    # one row lost of ~94k is within the threshold: that revision is stored (not quarantined)
    assert s.quarantined == [] and s.sources == 1
    assert store.get_source(location).n_outcomes >= before[1] - 1
    good = _state(store, location)

    full = (shared_data / "evalarena_code" / "outcomes.csv.gz").read_bytes()
    (d / "outcomes.csv.gz").write_bytes(full[:132000])  # head -c 132000: a copy caught halfway
    s = ingest(str(d), store=store, fetch_metadata=False)
    assert s.quarantined == [location] and s.sources == 0 and s.exit_code == 1
    (why,) = [e for e in s.errors if e.file == location]
    # a library call: the library's parameter (before: the CLI's --accept-partial, an option a Python caller has not)
    assert "quarantined" in why.message and "accept_partial=True" in why.message and "keeps serving" in why.message
    assert "--accept-partial" not in why.message
    assert any("unreadable from here on" in e.message for e in s.errors)  # where the file breaks off
    assert _state(store, location) == good  # nothing stored changed
    assert len(store.load_outcomes().models) == n_models
    # the next run meets it again (still quarantined) until it is fixed or accepted
    assert ingest(str(d), store=store, fetch_metadata=False).quarantined == [location]
    accepted = ingest(str(d), store=store, fetch_metadata=False, accept_partial=True)
    assert accepted.quarantined == [] and accepted.sources == 1
    assert store.get_source(location).n_outcomes < (1 - QUARANTINE_LOSS) * good[1]


def _stored_arith(store, tmp_path, seed: int):
    """A table source of 20 arithmetic prompts and 5 models (tmp_path/t) ingested into ``store``: its folder, texts,
    the rng that drew its outcomes (for a next revision), location, stored state and outcomes.csv's lines."""
    texts = [f"What is {i} + {i}?" for i in range(20)]
    rng = np.random.default_rng(seed)
    d = tmp_path / "t"
    write_source(d, "arith", texts, outcomes(rng, [f"org/m{i}" for i in range(5)], 20))
    assert ingest(str(d), store=store, fetch_metadata=False).sources == 1
    location = str(d.resolve())
    lines = (d / "outcomes.csv").read_text().splitlines(keepends=True)
    return d, texts, rng, location, _state(store, location), lines


def test_a_quote_that_swallows_the_file_is_quarantined(store, tmp_path):
    """A stray quote in a small file (the Python reader's old behaviour: the rest of the file became one field) is
    reported at its line; the lines after it are read again. When the revision loses over the threshold it is
    quarantined, and a clean smaller revision is not (the source's owner may drop models)."""
    d, texts, rng, location, stored, lines = _stored_arith(store, tmp_path, seed=0)
    # a quote on line 3 that never closes, and 30 rows cut off at the end
    (d / "outcomes.csv").write_text("".join(lines[:2] + ['"' + lines[2]] + lines[3:70]))
    s = ingest(str(d), store=store, fetch_metadata=False)
    (quote,) = [e for e in s.errors if e.line == 3]
    assert "reading goes on at the next line" in quote.message
    assert s.quarantined == [location] and _state(store, location) == stored
    # a clean revision with fewer models is the owner's choice: stored
    write_source(d, "arith", texts, outcomes(rng, ["org/m0", "org/m1"], 20))
    s = ingest(str(d), store=store, fetch_metadata=False)
    assert s.errors == [] and s.sources == 1 and store.get_source(location).n_outcomes == 40


@pytest.mark.parametrize("end", ["\n", ""])
def test_a_file_cut_inside_its_last_quoted_field_is_quarantined(store, tmp_path, end):
    """A new revision cut mid-write inside a quoted field of its last line (`org/m1,arith-9,"1`, a prompts file's
    `p9,b,"What is 9 +`), with or without a line break after it: the open quote is reported at its line, so a
    revision that lost most of its rows is quarantined and the stored one keeps serving. Before, a quote that never
    closed on the file's last line was read as if it closed (the cut prompt text stored as a prompt, the cut score
    as an outcome), the revision read cleanly and replaced the stored one whatever it had lost."""
    d, texts, _, location, stored, lines = _stored_arith(store, tmp_path, seed=3)
    (d / "outcomes.csv").write_text("".join(lines[:30]) + 'org/m1,arith-9,"1' + end)  # 71 of 100 rows lost
    s = ingest(str(d), store=store, fetch_metadata=False)
    (quote,) = s.errors[:1]
    assert (Path(quote.file).name, quote.line) == ("outcomes.csv", 31) and "never closes" in quote.message, s.errors
    assert s.quarantined == [location] and _state(store, location) == stored
    # a prompts file cut inside its last (quoted) text: that prompt is an error at its line, not a prompt "What is 9 +"
    e = tmp_path / "p"
    e.mkdir()
    (e / "prompts.csv").write_text("prompt_id,benchmark,text\n" + "".join(f'p{i},b,"{t}"\n' for i, t in enumerate(texts[:9]))
                                   + 'p9,b,"What is 9 +' + end)
    (e / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(f"m1,p{i},1\n" for i in range(10)))
    s = ingest(str(e), store=store, fetch_metadata=False)
    (cut,) = [x for x in s.errors if Path(x.file).name == "prompts.csv"]
    assert cut.line == 11 and "never closes" in cut.message, s.errors
    assert not any(t.startswith("What is 9 +") and t != "What is 9 + 9?" for t in store.prompt_texts(
        [int(i) for i in store.load_outcomes().prompt_ids]))


def test_index_run_is_partial_and_the_stored_revision_keeps_serving(env, tmp_path):
    from indexer.cli import app
    from indexer.sourcelist import SourceSpec

    texts = [f"Explain topic number {i} in one sentence." for i in range(30)]
    models = [f"org/model-{i}" for i in range(6)]
    d = tmp_path / "src"
    write_source(d, "explain", texts, outcomes(np.random.default_rng(1), models, 30))
    idx = env()
    assert idx.run([SourceSpec(str(d))]).status == "ok"
    lines = (d / "outcomes.csv").read_text().splitlines(keepends=True)
    (d / "outcomes.csv").write_text("".join(lines[:60]) + lines[60][:5])  # a copy caught mid-write
    r = idx.run()
    assert r.status == "partial" and r.exit_code == 1
    assert r.counts["quarantined"] == 1 and r.counts["removed"] == 0
    assert [s["status"] for s in r.sources] == ["quarantined"]
    assert any("quarantined" in e["message"] and "accept_partial=True" in e["message"] for e in r.errors)
    assert not any("--accept-partial" in e["message"] for e in r.errors)  # a library call: its parameter
    space = idx.store.list_spaces()[0]
    assert sorted(mv.model for mv in idx.store.load_model_vectors(space.id)) == models
    idx.close()
    idx.vectors.close()
    idx.store.close()
    # the CLI: the report names the quarantine; --accept-partial stores the new revision
    runner = CliRunner()
    out = runner.invoke(app, ["index", "--json"])
    assert out.exit_code == 1 and json.loads(out.stdout)["counts"]["quarantined"] == 1
    # the command's option there, and which commands take it
    assert any("`taskspace index --accept-partial` (a pass that reads the configured sources" in e["message"]
               for e in json.loads(out.stdout)["errors"]), out.stdout
    out = runner.invoke(app, ["index", "--accept-partial", "--json"])
    rep = json.loads(out.stdout)
    assert rep["counts"]["quarantined"] == 0 and rep["counts"]["sources"] == 1


def test_passes_while_a_source_stays_quarantined_push_what_changed_without_rebuilding(env, tmp_path, monkeypatch):
    """A source quarantined pass after pass (its owner has not fixed it yet: every pass is `partial`) while another
    source gains models: each pass pushes the new models to the index and rebuilds nothing, as after an `ok` pass; a
    partial pass finished its index stage, so the next one does not compare the whole index with SQL. Before, every
    pass after a partial one verified every collection (`taskspace check`'s work) and rebuilt the models collection
    from SQL because the models it had just solved were not pushed yet: a full rebuild on every pass for as long as
    the quarantine lasted."""
    from indexer import sync
    from indexer.sourcelist import SourceSpec

    rng = np.random.default_rng(4)
    a, b = tmp_path / "a", tmp_path / "b"
    write_source(a, "arith", [f"What is {i} + {i}?" for i in range(12)], outcomes(rng, [f"m{i}" for i in range(5)], 12))
    write_source(b, "more", [f"What is {i} * 3?" for i in range(6)], outcomes(rng, ["n1"], 6))
    ix = env()
    assert ix.run([SourceSpec(str(a)), SourceSpec(str(b))]).status == "ok"
    good = (a / "outcomes.csv").read_text().splitlines(keepends=True)
    (a / "outcomes.csv").write_text("".join(good[:10]) + 'm1,arith-9,"1')  # cut mid-write: quarantined
    assert ix.run().status == "partial"
    checked = []
    real_check = sync.check
    monkeypatch.setattr(sync, "check", lambda *args, **kw: checked.append(args) or real_check(*args, **kw))
    for extra in (["n2"], ["n2", "n3"]):
        write_source(b, "more", [f"What is {i} * 3?" for i in range(6)], outcomes(rng, ["n1", *extra], 6))
        r = ix.run()
        assert r.status == "partial" and r.counts["quarantined"] == 1
        assert r.counts["rebuilt"] == [] and r.counts["pushed"] >= 1 and checked == [], (r.counts, len(checked))
    assert all(d.clean for d in real_check(ix.store, ix.vectors))


def test_ingest_and_index_exit_1_on_a_quarantine_and_their_help_says_so(tmp_path):
    """`taskspace ingest` and `taskspace index` exit 1 when a new revision is quarantined (the README's rows say so), and
    each command's `-h` gives that exit code among its own. Before, both helps named exit 1 for rejected input or a
    failed item only, so a reader of `-h` could not tell that exit 1 may mean a quarantine (nothing of the new revision
    stored, the old one serving)."""
    from indexer.cli import app

    texts = [f"What is {i} + {i}?" for i in range(20)]
    d = tmp_path / "t"
    write_source(d, "arith", texts, outcomes(np.random.default_rng(0), [f"org/m{i}" for i in range(5)], 20))
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(d), "--no-metadata"]).exit_code == 0
    lines = (d / "outcomes.csv").read_text().splitlines(keepends=True)
    (d / "outcomes.csv").write_text("".join(lines[:2] + ['"' + lines[2]] + lines[3:70]))
    res = runner.invoke(app, ["ingest", str(d), "--no-metadata"])
    assert res.exit_code == 1 and "quarantined" in res.output, res.output
    res = runner.invoke(app, ["index", "--source", str(d)])
    assert res.exit_code == 1 and "quarantined" in res.output, res.output
    for command in ("ingest", "index"):
        text = " ".join(runner.invoke(app, [command, "-h"], terminal_width=200).output.split())
        exits = text.split("Exit code", 1)[1].split("Examples", 1)[0]
        assert "1 when" in exits and "quarantined" in exits, (command, exits)
