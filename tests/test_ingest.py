"""indexer.ingest and `taskspace ingest`: sources -> the SQL store (SQLite and PostgreSQL), local and Hub."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from indexer.errors import ConfigError, InputError, StoreError
from indexer.ingest import ingest, leaderboard_model_id, parse_spec
from indexer.records import prompt_hash
from indexer.sources import plan_files

FIX = Path(__file__).parent / "fixtures"
LM_OUT = FIX / "lm_eval" / "lm_eval_out"
LB = "open-llm-leaderboard/fake-org__tiny-lb-details"


def write_table(folder: Path, rows, prompts=None):
    folder.mkdir(parents=True, exist_ok=True)
    prompts = prompts or [("p1", "demo/a", "What is 1+1?"), ("p2", "demo/a", "What is 2+2?"), ("p3", "demo/b", "What is 1+1?")]
    (folder / "prompts.jsonl").write_text("".join(json.dumps({"prompt_id": p, "benchmark": b, "text": t}) + "\n" for p, b, t in prompts))
    (folder / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(f"{m},{p},{c}\n" for m, p, c in rows))
    return folder


def test_local_table_then_unchanged_then_changed(store, tmp_path):
    d = write_table(tmp_path / "t", [("gpt-4o", "p1", 1), ("gpt-4o", "p2", 0), ("org/model", "p1", 0), ("org/model", "p3", 1)])
    s = ingest(str(d), store=store, fetch_metadata=False)
    assert (s.models, s.prompts, s.outcomes, s.skipped, s.sources, s.errors) == (2, 2, 4, 0, 1, [])
    assert s.exit_code == 0
    again = ingest(str(d), store=store, fetch_metadata=False)
    assert (again.models, again.outcomes, again.skipped, again.sources) == (0, 0, 1, 0)
    write_table(d, [("gpt-4o", "p1", 1), ("gpt-4o", "p2", 1), ("new/model", "p2", 1)])
    changed = ingest(str(d), store=store, fetch_metadata=False)
    assert (changed.models, changed.outcomes, changed.sources) == (1, 3, 1)
    # the new revision replaced the source's outcomes; the model row seen before stays
    assert sorted(store.load_outcomes().models) == ["gpt-4o", "new/model"]
    assert store.get_model("org/model") is not None


def test_a_benchmarks_recorded_metric_is_its_first_sources_and_another_source_reading_another_is_warned(store, tmp_path):
    """Two sources of one benchmark read with two metrics (a long table's `correct`, another's `score`): the benchmark
    keeps the metric it was recorded with, and the second ingest warns, naming both; a source that is the benchmark's
    only one reading it again another way replaces its metric (there is nothing else it describes). Before, each ingest
    overwrote the metric with its own, so the last source read won (and benchmarks.parquet showed it)."""
    prompts = [("p1", "demo/a", "What is 1+1?"), ("p2", "demo/a", "What is 2+2?")]
    a = write_table(tmp_path / "a", [("org/m1", "p1", 1), ("org/m1", "p2", 0)], prompts)
    s = ingest(str(a), store=store, fetch_metadata=False)
    assert not s.errors and not s.warnings, s
    metric = lambda: {b.name: b.metric for b in store.list_benchmarks()}["demo/a"]  # noqa: E731
    assert metric() == "correct"
    b = tmp_path / "b"
    write_table(b, [], prompts)
    (b / "outcomes.csv").write_text("model,prompt_id,score\norg/m2,p1,0.5\norg/m2,p2,0.25\n")
    s = ingest(str(b), store=store, fetch_metadata=False)
    assert not s.errors and s.sources == 1, s
    assert metric() == "correct"
    (w,) = [w for w in s.warnings if "demo/a" in w]
    assert "'correct'" in w and "'score'" in w and str(b) in w, w
    # the first source read again with its metric: nothing said; with another while b holds outcomes of demo/a: the
    # recorded metric stays and it is said (which source recorded it is not kept: a documented limit)
    (a / "outcomes.csv").write_text("model,prompt_id,correct\norg/m1,p1,1\norg/m1,p2,1\n")
    s = ingest(str(a), store=store, fetch_metadata=False)
    assert s.sources == 1 and not s.errors and not [w for w in s.warnings if "demo/a" in w], s
    (a / "outcomes.csv").write_text("model,prompt_id,score\norg/m1,p1,1\norg/m1,p2,0.5\n")
    s = ingest(str(a), store=store, fetch_metadata=False)
    assert s.sources == 1 and [w for w in s.warnings if "demo/a" in w and str(a) in w], s
    assert metric() == "correct"
    # a benchmark's only source read another way: its metric follows
    prompts_c = [("q1", "demo/c", "Name a colour."), ("q2", "demo/c", "Name a fruit.")]
    c = write_table(tmp_path / "c", [("org/m1", "q1", 1), ("org/m1", "q2", 0)], prompts_c)
    ingest(str(c), store=store, fetch_metadata=False)
    assert {x.name: x.metric for x in store.list_benchmarks()}["demo/c"] == "correct"
    (c / "outcomes.csv").write_text("model,prompt_id,score\norg/m1,q1,0.5\norg/m1,q2,0\n")
    s = ingest(str(c), store=store, fetch_metadata=False)
    assert not s.errors and not s.warnings, s
    assert {x.name: x.metric for x in store.list_benchmarks()}["demo/c"] == "score"


def test_unchanged_local_source_is_not_even_read(store, tmp_path, monkeypatch):
    d = write_table(tmp_path / "t", [("m1", "p1", 1)])
    assert ingest(str(d), store=store, fetch_metadata=False).sources == 1
    assert ingest(str(LM_OUT), store=store, fetch_metadata=False).sources == 4

    def boom(*a, **k):
        raise AssertionError("an unchanged source was parsed")

    monkeypatch.setattr("indexer.sources.read_sources", boom)
    assert ingest(str(d), store=store, fetch_metadata=False).skipped == 1
    assert ingest(str(LM_OUT), store=store, fetch_metadata=False).skipped == 4


def test_bad_rows_are_reported_and_the_rest_is_stored(store, tmp_path):
    d = write_table(tmp_path / "t", [("m1", "p1", 1), ("m1", "p2", 2), ("m2", "p1", 1), ("m2", "p1", 0), ("m3", "p9", 1)])
    s = ingest(str(d), store=store, fetch_metadata=False)
    assert s.exit_code == 1
    assert [(Path(e.file).name, e.line) for e in s.errors] == [("outcomes.csv", 3), ("outcomes.csv", 5), ("outcomes.csv", 6)]
    assert s.outcomes == 1 and s.models == 1  # only m1/p1 survives
    d = s.as_dict()
    assert set(d) >= {"models", "prompts", "outcomes", "skipped", "errors"}
    assert set(d["errors"][0]) == {"file", "line", "message"}


def test_one_text_under_several_prompt_ids_is_said_in_a_warning(store, tmp_path):
    """A table whose prompts file gives one text (in one benchmark) under two ids, a model right on one and wrong on the
    other: stored as one prompt, the outcomes averaged (a prompt is its text), and the summary says so in a warning
    naming the source, how many texts and an example pair; before, "added 1 prompts" for two ids without a word. The
    same text in two benchmarks is two benchmarks' prompt (no warning for it)."""
    prompts = [("p1", "demo/a", "What is 1+1?"), ("p2", "demo/a", "What is 1+1?"), ("p3", "demo/b", "What is 1+1?"),
               ("p4", "demo/b", "What is 2+2?")]
    d = write_table(tmp_path / "t", [("m1", "p1", 1), ("m1", "p2", 0), ("m1", "p3", 1), ("m1", "p4", 1)], prompts)
    s = ingest(str(d), store=store, fetch_metadata=False)
    assert s.errors == [] and s.prompts == 2 and s.outcomes == 3
    said = [w for w in s.warnings if "more than one prompt id" in w]
    assert len(said) == 1 and said[0].startswith(f"{d}: 1 prompt text is given under more than one prompt id (2 ids; "
                                                 "e.g. demo/a 'p1' = 'p2')"), s.warnings
    assert "averaged" in said[0]
    other = write_table(tmp_path / "u", [("m1", "p1", 1), ("m1", "p3", 1)], prompts)  # p2 has no outcome: not read
    assert not [w for w in ingest(str(other), store=store, fetch_metadata=False).warnings if "prompt id" in w]


def test_a_source_whose_outcomes_disagree_with_another_sources_says_so_in_one_warning(store, tmp_path):
    """Two sources giving one model different outcomes on one prompt: both are stored and the index uses their mean
    (``load_outcomes``, as before), and the ingest that brings the disagreement says so in one warning: how many
    model+prompt cells now disagree with another source, one example naming the model, the prompt's benchmark and
    id, both sources and their outcomes, and the mean. Outcomes that agree, and a first source, say nothing. Before,
    both ingests exited 0 without a word (docs/FORMATS.md said such outcomes were "merged like repeats of one
    source", whose different outcomes are dropped with an error)."""
    prompts = [("p1", "demo/a", "What is 1+1?"), ("p2", "demo/a", "What is 2+2?"), ("q1", "demo/b", "Name a prime.")]
    a = write_table(tmp_path / "a", [("org/m1", "p1", 1), ("org/m1", "p2", 1), ("org/m2", "p1", 0)], prompts)
    s = ingest(str(a), store=store, fetch_metadata=False)
    assert s.errors == [] and s.warnings == [], s.warnings
    b = write_table(tmp_path / "b", [("org/m1", "p1", 0), ("org/m1", "p2", 1), ("org/m2", "p1", 1), ("org/m3", "p1", 1),
                                     ("org/m1", "q1", 1)], prompts)
    s = ingest(str(b), store=store, fetch_metadata=False)
    assert s.errors == [] and s.exit_code == 0 and s.sources == 1
    said = [w for w in s.warnings if "disagree" in w]
    assert len(said) == 1 and len(s.warnings) == 1, s.warnings
    assert said[0] == (
        f"{b}: 2 model+prompt cells of this source disagree with another source's outcome of the same model on the "
        f"same prompt (e.g. 'org/m1' on demo/a 'p1': 0 here, 1 in {a}); both are kept and the index uses their "
        "mean (0.5 there): check that the sources ran the same model the same way (revision, settings, metric), "
        "or give the model another name in one of them to keep them apart"), said[0]
    m = store.load_outcomes()
    col = m.prompt_hashes.index(prompt_hash("What is 1+1?"))
    assert [float(m.scores[m.models.index(k), col]) for k in ("org/m1", "org/m2", "org/m3")] == [0.5, 0.5, 1.0]
    # a third source agreeing with the second disagrees with the first alone: the mean of the three
    c = write_table(tmp_path / "c", [("org/m1", "p1", 0)], prompts)
    (w,) = ingest(str(c), store=store, fetch_metadata=False).warnings
    assert w.startswith(f"{c}: 1 model+prompt cell of this source disagrees with another source's outcome of the same "
                        f"model on the same prompt (e.g. 'org/m1' on demo/a 'p1': 0 here, 1 in {a}); ") and "(0.333333 there)" in w, w
    # outcomes that agree with every other source's say nothing
    d = write_table(tmp_path / "d", [("org/m1", "p2", 1), ("org/m1", "q1", 1)], prompts)
    assert ingest(str(d), store=store, fetch_metadata=False).warnings == []


def test_lm_eval_folder_one_source_per_model(store):
    s = ingest(str(LM_OUT), store=store, fetch_metadata=False)
    assert (s.sources, s.models, s.prompts, s.outcomes, s.errors) == (4, 4, 42, 168, [])
    assert sorted(b.name for b in store.list_benchmarks()) == ["tiny_gen_arith", "tiny_mc_science", "tiny_mc_yesno"]


def test_samples_files_of_one_folder_ingested_apart_are_two_sources(store, tmp_path):
    """Each samples file given alone is its own source (its path, its revision): both are kept and a second pass
    over either is unchanged. Before, both were stored under the folder's location, the second replacing the first."""
    d = tmp_path / "fake-org__dummy-b"
    shutil.copytree(LM_OUT / "fake-org__dummy-b", d)
    science, yesno = next(d.glob("samples_tiny_mc_science_*")), next(d.glob("samples_tiny_mc_yesno_*"))
    for f, n in ((science, 15), (yesno, 12)):
        s = ingest(str(f), store=store, fetch_metadata=False)
        assert (s.sources, s.outcomes, s.errors) == (1, n, [])
    for f in (science, yesno):
        assert ingest(str(f), store=store, fetch_metadata=False).skipped == 1
    assert {x.location: x.n_outcomes for x in store.list_sources()} == {str(science.resolve()): 15,
                                                                        str(yesno.resolve()): 12}
    before = store.load_outcomes()
    assert before.scores.shape == (1, 27)
    # the folder holds them: ingested as a third source it would store their outcomes twice, so it is refused
    s = ingest(str(d), store=store, fetch_metadata=False)
    assert (s.exit_code, s.sources, s.outcomes) == (1, 0, 0) and s.errors[0].message.startswith("holds the stored source")
    assert store.load_outcomes().scores.shape == (1, 27)


def test_a_source_that_fails_midway_leaves_nothing_behind(store, tmp_path, monkeypatch):
    """The store fails while writing the second model's source: that source is absent, the others are whole."""
    calls = {"n": 0}
    real = store._insert_blocks

    def flaky(conn, blocks):
        calls["n"] += 1
        if calls["n"] == 2:
            real(conn, blocks[:1])  # half written, then the failure
            raise StoreError("disk full (simulated)")
        return real(conn, blocks)

    monkeypatch.setattr(store, "_insert_blocks", flaky)
    s = ingest(str(LM_OUT), store=store, fetch_metadata=False)
    assert s.sources == 3 and s.exit_code == 1
    (err,) = s.errors
    assert err.file.endswith("fake-org__dummy-b") and "nothing of it was written" in err.message and "disk full" in err.message
    assert store.get_source(err.file) is None
    assert "fake-org/dummy-b" not in store.load_outcomes().models
    assert len(store.load_outcomes().models) == 3


def test_a_new_revision_storing_fewer_outcomes_names_what_went(store, tmp_path):
    """A task's samples file deleted from an lm-eval model folder: the next ingest warns that the folder's new revision
    stores fewer outcomes than the stored one and names the benchmark no longer read; the first ingest says nothing.
    Before, "1 source ingested, 27 outcomes stored" (42 before), and no word of the outcomes that went."""
    out = tmp_path / "out"
    shutil.copytree(LM_OUT / "fake-org__dummy-b", out / "fake-org__dummy-b")
    folder = out / "fake-org__dummy-b"
    first = ingest(str(out), store=store, fetch_metadata=False)
    before = store.get_source(str(folder)).n_outcomes
    assert not any("fewer than" in w for w in first.warnings), first.warnings
    next(folder.glob("samples_tiny_mc_science_*.jsonl")).unlink()
    s = ingest(str(out), store=store, fetch_metadata=False)
    now = store.get_source(str(folder)).n_outcomes
    assert s.sources == 1 and 0 < now < before, (s, now, before)
    (said,) = [w for w in s.warnings if "fewer than" in w]
    assert said.startswith(f"{folder}: this revision stores {now} outcomes, {before - now} fewer than the stored "
                           f"revision's {before}: 1 benchmark no longer read ("), said
    assert "tiny_mc_science" in said and "model no longer read" not in said, said


def test_a_new_revision_that_drops_a_file_and_has_a_bad_row_is_quarantined_then_its_shrink_names_both(store, tmp_path):
    """A new revision of an lm-eval model folder whose tiny_mc_yesno samples file is gone (12 outcomes) and one of whose
    tiny_mc_science lines is cut (1 more): it reads with an error and would keep 29 of the 42 cells, so it is
    quarantined (the error says so; no shrink warning, nothing stored changes). Stored with accept_partial, the shrink
    warning names both losses: the benchmark no longer read and the outcome fewer in the benchmarks it still has, the
    rejected rows counting there. Before, the warning gave the 13 fewer to the benchmark no longer read alone ("1
    benchmark no longer read ('tiny_mc_yesno')") and said to put the file back, beside the error of the line."""
    out = tmp_path / "out"
    shutil.copytree(LM_OUT / "fake-org__dummy-b", out / "fake-org__dummy-b")
    folder = out / "fake-org__dummy-b"
    ingest(str(out), store=store, fetch_metadata=False)
    before = store.get_source(str(folder)).n_outcomes
    next(folder.glob("samples_tiny_mc_yesno_*.jsonl")).unlink()
    f = next(folder.glob("samples_tiny_mc_science_*.jsonl"))
    lines = f.read_text().splitlines()
    lines[2] = lines[2][:40]
    f.write_text("\n".join(lines) + "\n")
    s = ingest(str(out), store=store, fetch_metadata=False)
    assert s.quarantined == [str(folder)] and store.get_source(str(folder)).n_outcomes == before == 42
    assert [e.line for e in s.errors] == [3, None] and "new revision quarantined" in s.errors[1].message, s.errors
    assert not any("fewer than" in w for w in s.warnings), s.warnings
    s = ingest(str(out), store=store, fetch_metadata=False, accept_partial=True)
    assert store.get_source(str(folder)).n_outcomes == 29 and [e.line for e in s.errors] == [3], s.errors
    (said,) = [w for w in s.warnings if "fewer than" in w]
    assert said.startswith(f"{folder}: this revision stores 29 outcomes, 13 fewer than the stored revision's 42: 1 "
                           "benchmark no longer read ('tiny_mc_yesno'); 1 outcome fewer in the benchmarks "
                           "and models it still has (rows this revision's reading rejected count there: its errors "
                           "list them)"), said
    assert "Put it back and the next pass stores them again" in said and "fix the rows rejected" in said, said


def test_a_source_the_database_fails_to_store_says_nothing_was_saved_once(store, monkeypatch):
    """The database failing inside a source's write transaction (a driver error): the source's error says that nothing
    of it was saved once. Before, twice: "source not stored (nothing of it was written): ingesting X failed, nothing of
    it was saved: ..." (ingest.store_batch's words and the store's, found walking ``taskspace worker``)."""
    from sqlalchemy.exc import OperationalError

    calls = {"n": 0}
    real = store._insert_blocks

    def failing(conn, blocks):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OperationalError("INSERT", {}, Exception("disk I/O error"))
        return real(conn, blocks)

    monkeypatch.setattr(store, "_insert_blocks", failing)
    s = ingest(str(LM_OUT), store=store, fetch_metadata=False)
    (err,) = s.errors
    assert err.message.startswith(f"source not stored: ingesting {err.file} failed, nothing of it was saved: disk I/O "
                                  "error"), err.message
    assert err.message.count("nothing of it") == 1, err.message


def test_a_source_whose_names_cannot_be_read_says_nothing_was_saved_once(store, monkeypatch):
    """The database failing while `Store.ingest` reads the stored aliases of a source's model names, before its write
    transaction (`_identities`; a driver error): the source's error says that nothing of it was saved once. Before,
    twice: "source not stored (nothing of it was written): ingesting X failed, nothing of it was saved: reading from the
    database failed: ..." (the store's words lost their StoreError.nothing_saved mark when re-raised with the source)."""
    from sqlalchemy.exc import OperationalError

    def failing(names):
        with store._read():
            raise OperationalError("SELECT", {}, Exception("disk I/O error"))

    monkeypatch.setattr(store, "resolve_aliases", failing)
    s = ingest(str(LM_OUT / "fake-org__dummy-b"), store=store, fetch_metadata=False)
    (err,) = s.errors
    assert err.message.startswith(f"source not stored: ingesting {err.file} failed, nothing of it was saved: reading "
                                  "from the database failed: disk I/O error"), err.message
    assert err.message.count("nothing of it") == 1, err.message


@pytest.mark.postgres
def test_a_source_whose_database_session_was_ended_is_stored_on_a_fresh_connection(pg_url, monkeypatch, caplog):
    """PostgreSQL ending the session of a source's transaction (a restart or failover, `pg_terminate_backend`) while it
    is written: nothing of it was written, and it is stored once more on a fresh connection (a warning says so), so an
    ingest or an indexing pass equals one the database did not interrupt; a second ending is that source's error as
    before. Before, the source failed ("server closed the connection unexpectedly") and a pass went on without it,
    fitting the space's prior and calibration on the other sources' models."""
    import logging

    from indexer.store.sql import Store

    with Store(pg_url, upgrade=True) as store:
        real, ended = store._insert_blocks, []

        def end_session(conn, blocks):  # the first time, the session ends under the transaction
            if len(ended) < times:
                ended.append(1)
                conn.connection().exec_driver_sql("select pg_terminate_backend(pg_backend_pid())")
            return real(conn, blocks)

        monkeypatch.setattr(store, "_insert_blocks", end_session)
        times = 1
        with caplog.at_level(logging.WARNING, logger="indexer.ingest"):
            s = ingest(str(LM_OUT), store=store, fetch_metadata=False)
        assert s.errors == [] and s.sources == 4 and len(store.load_outcomes().models) == 4, s.errors
        assert ended == [1] and "storing it once more" in caplog.text
    with Store(pg_url) as store:  # ended twice: the source's error, nothing of it stored
        real, ended, times = store._insert_blocks, [], 2
        monkeypatch.setattr(store, "_insert_blocks", end_session)
        store.delete_source(sorted(x.location for x in store.list_sources())[0])
        s = ingest(str(LM_OUT), store=store, fetch_metadata=False)
        (err,) = s.errors
        assert "the server ended the session" in err.message and store.get_source(err.file) is None, err.message


def _end_the_session_of_the_first_alias_read(store) -> list:
    """Make PostgreSQL end the session of ``store``'s first read of the model aliases under it (as
    `pg_terminate_backend` from another session would); the list returned gets a 1 when it did."""
    from sqlalchemy import event

    ended = []

    def end_session(conn, cursor, statement, *_):
        if not ended and "model_aliases" in statement and statement.lstrip().upper().startswith("SELECT"):
            ended.append(1)
            cursor.execute("select pg_terminate_backend(pg_backend_pid())")

    event.listen(store.engine, "before_cursor_execute", end_session)
    return ended


def test_a_source_whose_session_was_ended_while_its_names_were_read_is_stored_once_more(pg_url, caplog):
    """PostgreSQL ending the session while `Store.ingest` reads the model aliases of a source's names, before its write
    transaction (long on a 32,823-model database; a restart, `pg_terminate_backend`): the ConnectionLostError stays
    one, so the source is stored once more on a fresh connection (a warning says so), as when the session ends while
    it is written. Before, `Store.ingest` made it a plain StoreError: the source failed ("ingesting ... failed, nothing
    of it was saved: reading from the database failed: terminating connection ...") and the pass went on without it."""
    import logging

    from indexer.store.sql import Store

    with Store(pg_url, upgrade=True) as store:
        ended = _end_the_session_of_the_first_alias_read(store)
        with caplog.at_level(logging.WARNING, logger="indexer.ingest"):
            s = ingest(str(LM_OUT), store=store, fetch_metadata=False)
        assert ended == [1] and "once more" in caplog.text, (caplog.text, [e.message for e in s.errors])
        assert s.errors == [] and s.sources == 4 and len(store.load_outcomes().models) == 4, s.errors


def test_a_table_whose_session_was_ended_while_its_names_were_checked_is_stored(pg_url, caplog):
    """PostgreSQL ending the session while the names of a table of many models are looked up to find two names of one
    model (`drop_conflicts_between_names`, before the source is stored; a restart, `pg_terminate_backend`): looked up
    once more on a fresh connection (a warning says so) and the source stored. Before, found killing sessions under
    `taskspace index` of the mixed home's sources on PostgreSQL: the error left the ingest, and the pass failed as a
    whole ("run aborted: reading from the database failed: terminating connection ...; retry", exit 3)."""
    import logging

    from indexer.store.sql import Store

    sample = Path(__file__).resolve().parents[1] / "indexer" / "data" / "sample"
    with Store(pg_url, upgrade=True) as store:
        ended = _end_the_session_of_the_first_alias_read(store)
        with caplog.at_level(logging.WARNING, logger="indexer.ingest"):
            s = ingest(str(sample), store=store, fetch_metadata=False)
        assert ended == [1] and "once more" in caplog.text, caplog.text
        assert s.errors == [] and s.sources == 1 and len(store.load_outcomes().models) == 25, s.errors


def test_reads_of_the_stored_sources_whose_session_was_ended_are_read_once_more(pg_url, caplog):
    """PostgreSQL ending the session while a pass reads what is stored before reading a source (the stored local
    sources it must not nest in, whether a source is unchanged, what a new revision with errors would lose; a restart,
    `pg_terminate_backend`): read once more on a fresh connection (a warning says so), each source counted once.
    Before, found killing sessions under `taskspace index` on PostgreSQL with nothing new: the ConnectionLostError left
    the ingest and the pass failed ("run aborted: reading from the database failed: terminating connection ...;
    retry", exit 3)."""
    import logging

    from sqlalchemy import event

    from indexer.ingest import Ingester
    from indexer.records import RowError, SourceBatch, SourceInfo
    from indexer.store.sql import Store

    with Store(pg_url, upgrade=True) as store:
        assert ingest(str(LM_OUT), store=store, fetch_metadata=False).sources == 4
        ended: list[str] = []

        def end_session(conn, cursor, statement, *_):  # the first time of each read of the sources table
            if (statement.lstrip().upper().startswith("SELECT") and "FROM sources" in statement
                    and statement not in ended):
                ended.append(statement)
                cursor.execute("select pg_terminate_backend(pg_backend_pid())")

        event.listen(store.engine, "before_cursor_execute", end_session)
        with caplog.at_level(logging.WARNING, logger="indexer.ingest"):
            s = ingest(str(LM_OUT), store=store, fetch_metadata=False)
        assert len(ended) >= 2 and "once more" in caplog.text, (ended, caplog.text)
        assert s.errors == [] and (s.skipped, s.sources) == (4, 0), s.errors
        # a new revision read with errors: what it would lose is read once more too (quarantined, not a failed pass)
        src = store.list_sources()[0]
        batch = SourceBatch(source=SourceInfo(kind=src.kind, location=src.location, revision="other"),
                            errors=[RowError(src.location, 1, "bad")])
        ended.clear()
        ing = Ingester(store, fetch_metadata=False)
        assert "quarantined" in ing._quarantine_reason(batch) and ended, ended


@pytest.mark.slow
def test_shared_mmlu_pro_counts(tmp_path, shared_data):
    """The real 371k-cell table into SQLite (PostgreSQL: benchmarks/bench_ingest.py)."""
    from indexer.store.sql import Store

    with Store(f"sqlite:///{tmp_path / 'mmlu.db'}", upgrade=True) as store:
        s = ingest(str(shared_data / "mmlu_pro"), store=store, fetch_metadata=False)
    # 12,032 prompt ids, 159 repeated texts -> 11,873 prompts; copies averaged into one graded outcome
    assert (s.models, s.prompts, s.errors) == (31, 11873, [])
    assert s.outcomes == 366317


# ------------------------------------------------------------------------------------------------- Hub


def test_hub_leaderboard_repo_skipped_by_commit_sha(store, hub_server):
    s = ingest(f"hub:{LB}", store=store)
    assert s.errors == [] and s.sources == 1 and s.outcomes == 12
    src = store.get_source(f"hub:{LB}")
    assert src.kind == "leaderboard" and len(src.revision) == 40
    # only the latest run was fetched (not the older .json run)
    got = hub_server.downloads(LB)
    assert got and not any("2024-06-26" in p for p in got)
    # Hub metadata for the model (a valid repo id)
    m = store.get_model("fake-org/tiny-lb")
    assert (m.license, m.num_parameters, m.base_model, m.kind) == ("apache-2.0", 1234567, "fake-org/base-lb", "hub")
    assert s.metadata == 1
    # unchanged sha: nothing downloaded again, nothing changed
    n = len(hub_server.downloads())
    again = ingest(f"hub:{LB}", store=store)
    assert (again.skipped, again.sources, again.outcomes) == (1, 0, 0)
    assert len(hub_server.downloads()) == n
    # a new commit (a file changed) is ingested again and replaces the source
    readme = hub_server.root / "datasets" / LB / "README.md"
    readme.write_text(readme.read_text() + "\nupdated\n")
    third = ingest(f"hub:{LB}", store=store)
    assert third.sources == 1 and store.get_source(f"hub:{LB}").revision != src.revision


def test_reading_a_source_again_with_other_options_replaces_it(store, hub_server, tmp_path):
    """--filter / --metric / --model change what is stored, so they are part of the source's revision: another
    reading replaces the stored one (one transaction, as a new revision), the same reading again is unchanged, and
    a reading with no such option keeps the content's own revision. Before, the revision was the files' hash alone:
    every other reading was skipped as unchanged and a wrong reading could not be corrected."""
    from indexer.sources import source_infos

    d = LM_OUT / "fake-org__noisy-oracle-70"
    res = json.loads(sorted(d.glob("results_*.json"))[-1].read_text())["results"]["tiny_gen_arith"]
    assert res["exact_match,none"] != res["exact_match,strict-match"]

    def arith():
        o = store.load_outcomes()
        cols = [i for i, b in enumerate(o.benchmarks) if b == "tiny_gen_arith"]
        return o.models, float(o.scores[0, cols].mean())

    plain = source_infos(str(d))[0].revision
    assert ingest(str(d), store=store, fetch_metadata=False).sources == 1
    assert store.get_source(str(d.resolve())).revision == plain
    assert arith()[1] == pytest.approx(res["exact_match,strict-match"])
    s = ingest(str(d), store=store, fetch_metadata=False, filter="none")
    assert (s.sources, s.skipped, s.outcomes) == (1, 0, 42)
    assert arith()[1] == pytest.approx(res["exact_match,none"])
    assert ingest(str(d), store=store, fetch_metadata=False, filter="none").skipped == 1
    s = ingest(str(d), store=store, fetch_metadata=False, model="local/ckpt")
    assert s.sources == 1 and arith()[0] == ["local/ckpt"]
    # back to the default reading: re-read, stored under the content's revision again
    assert ingest(str(d), store=store, fetch_metadata=False).sources == 1
    assert store.get_source(str(d.resolve())).revision == plain
    assert arith()[1] == pytest.approx(res["exact_match,strict-match"])
    assert arith()[0] == ["fake-org/noisy-oracle-70"]
    # --metric: a multiple-choice task's acc_norm instead of acc, on a copy of the file with its results (the file
    # inside the stored folder is part of that source: refused alone)
    copy = tmp_path / "copy" / d.name
    copy.mkdir(parents=True)
    for f in [next(d.glob("samples_tiny_mc_science_*")), *d.glob("results_*.json")]:
        shutil.copy(f, copy / f.name)
    science = next(copy.glob("samples_tiny_mc_science_*"))
    mc = json.loads(sorted(d.glob("results_*.json"))[-1].read_text())["results"]["tiny_mc_science"]
    assert mc["acc,none"] != mc["acc_norm,none"]
    for metric, key in ((None, "acc,none"), ("acc_norm", "acc_norm,none"), (None, "acc,none")):
        s = ingest(str(science), store=store, fetch_metadata=False, metric=metric)
        assert s.sources == 1
        # one block from the folder (acc), one from the file (the metric read)
        blocks = store.outcome_blocks(["fake-org/noisy-oracle-70"], ["tiny_mc_science"])
        assert sorted(float(sc.mean()) for *_, sc in blocks) == pytest.approx(sorted([mc["acc,none"], mc[key]]))
    # a Hub repo: its commit sha, with the options folded in
    first = ingest(f"hub:{LB}", store=store, fetch_metadata=False)
    sha = store.get_source(f"hub:{LB}").revision
    assert first.sources == 1 and len(sha) == 40
    other = ingest(f"hub:{LB}", store=store, fetch_metadata=False, model="fake-org/renamed")
    assert other.sources == 1 and "fake-org/renamed" in store.load_outcomes().models
    assert store.get_source(f"hub:{LB}").revision.startswith(sha + "+read:")
    assert ingest(f"hub:{LB}", store=store, fetch_metadata=False, model="fake-org/renamed").skipped == 1
    assert ingest(f"hub:{LB}", store=store, fetch_metadata=False).sources == 1
    assert store.get_source(f"hub:{LB}").revision == sha


def test_hub_row_errors_name_the_file_in_the_repo(store, hub_server):
    repo = hub_server.root / "datasets" / LB
    f = next(repo.glob("*/samples_leaderboard_ifeval_2024-07-01*.jsonl"))
    lines = f.read_text().splitlines()
    f.write_text(lines[0] + "\n{broken\n")
    s = ingest(f"hub:{LB}", store=store, fetch_metadata=False)
    (e,) = s.errors
    assert (e.file, e.line) == (f"hub:{LB}/fake-org__tiny-lb/{f.name}", 2) and "malformed JSON line" in e.message
    assert s.outcomes == 11 and s.exit_code == 1


def test_hub_org_discovery_with_limit_and_bad_repos(store, hub_server):
    s = ingest("hub-org:open-llm-leaderboard", store=store, limit=1)
    assert s.sources == 0 and len(s.errors) == 1  # the first listed repo is the invalid-id one
    assert s.errors[0].file == "hub:open-llm-leaderboard/fake-org__-details"
    assert "'fake-org/'" in s.errors[0].message and "not a valid Hub repo id" in s.errors[0].message
    s = ingest("hub-org:open-llm-leaderboard", store=store)
    assert s.sources == 2 and s.exit_code == 4  # the gated repo is a Hub failure (exit 4); the rest was ingested
    files = {e.file: e.message for e in s.errors}
    gated = files["hub:open-llm-leaderboard/fake-org__gated-details"]
    assert "gated" in gated and "request access" in gated and "HF_TOKEN" in gated
    assert sorted(store.load_outcomes().models) == ["fake-org/old-harness", "fake-org/tiny-lb"]


def test_model_over_a_hub_org_listing_is_a_usage_error(store, hub_server):
    """`taskspace ingest hub-org:ORG --model NAME`: a usage error naming `--model` (exit 2) before the organisation is
    listed, nothing downloaded or stored. Before, NAME replaced the model of every repo listed, so the results of all
    the organisation's models were stored as that one model."""
    from indexer.errors import ConfigError

    with pytest.raises(ConfigError, match="^model='org/foo' names one model, but hub-org:open-llm-leaderboard lists"):
        ingest("hub-org:open-llm-leaderboard", store=store, model="org/foo", fetch_metadata=False)
    assert store.list_sources() == [] and hub_server.downloads() == []
    assert [m for m, p, _ in hub_server.log if "/api/datasets" in p] == []  # not even listed


def test_model_over_a_hub_repo_of_several_models_is_a_usage_error(store, hub_server):
    """`taskspace ingest hub:ORG/REPO --model NAME` where the repo holds the lm-eval runs of several models: a usage
    error naming `--model` and the models (exit 2), nothing stored, as for a local folder; without `--model` each
    keeps its name. Before, the repo's two models were stored as NAME, one model."""
    from indexer.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^model='org/foo' names one model, but hub:fake-org/lm-eval-results holds "
                                          r"the runs of 2 models \(fake-org__dummy-b, fake-org__noisy-oracle-70\)"):
        ingest("hub:fake-org/lm-eval-results", store=store, model="org/foo", fetch_metadata=False)
    assert store.list_sources() == []
    s = ingest("hub:fake-org/lm-eval-results", store=store, fetch_metadata=False)
    assert s.sources == 1 and s.models == 2


def test_a_reading_option_a_hub_repos_format_does_not_take(store, hub_server):
    """`hub:REPO --filter X` where the repo holds a table: a usage error before anything is downloaded (before, after
    the download); in a `hub-org:` listing that repo is an error line and the others are read with the option (before,
    the usage error ended the whole listing at that repo)."""
    from indexer.errors import ConfigError

    table = hub_server.root / "datasets" / "fake-org" / "a-table"
    table.mkdir(parents=True)
    for name in ("outcomes.csv", "prompts.jsonl"):
        shutil.copy(FIX.parent.parent / "indexer" / "data" / "sample" / name, table / name)
    with pytest.raises(ConfigError, match="^filter= applies only to lm_eval"):  # the library's parameter
        ingest("hub:fake-org/a-table", store=store, fetch_metadata=False, filter="none")
    assert hub_server.downloads("a-table") == [] and store.get_source("hub:fake-org/a-table") is None
    s = ingest("hub-org:fake-org", store=store, fetch_metadata=False, filter="none")
    (e,) = [e for e in s.errors if e.file == "hub:fake-org/a-table"]
    assert "filter= applies only to lm_eval" in e.message and "skipped" in e.message
    assert store.get_source("hub:fake-org/lm-eval-results") is not None and s.exit_code == 1
    assert hub_server.downloads("a-table") == []


def test_hub_gated_repo_with_token(store, hub_server, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_test_allowed_token")
    s = ingest("hub:open-llm-leaderboard/fake-org__gated-details", store=store, fetch_metadata=False)
    assert s.errors == [] and s.outcomes == 2


def test_hub_lm_eval_and_lighteval_repos(store, hub_server):
    s = ingest("hub:fake-org/lm-eval-results", store=store)
    assert s.errors == [] and s.models == 2 and s.outcomes == 84
    assert store.get_source("hub:fake-org/lm-eval-results").kind == "lm_eval"
    assert store.get_model("fake-org/dummy-b").gated == "auto"
    v1 = ingest("hub:open-llm-leaderboard-old/details_fake-org__tiny-v1", store=store, fetch_metadata=False)
    assert v1.errors == [] and v1.outcomes == 4 and v1.models == 1
    assert "fake-org/tiny-v1" in store.load_outcomes().models


def test_a_hub_repo_ingested_in_another_case_is_the_one_source_stored(store, hub_server):
    """`taskspace ingest hub:fake-org/lm-eval-results`, then `hub:Fake-Org/LM-Eval-Results` (the Hub's repo ids are
    case-insensitive: one dataset): the second is that stored source, unchanged at its revision and skipped, not a
    second source holding the same 84 outcomes. Before, `sources stored`
    listed both, each with its 84 outcome cells."""
    s = ingest("hub:fake-org/lm-eval-results", store=store, fetch_metadata=False)
    assert s.errors == [] and s.outcomes == 84
    again = ingest("hub:Fake-Org/LM-Eval-Results", store=store, fetch_metadata=False)
    assert again.errors == [] and again.skipped == 1 and again.outcomes == 0, again
    assert [x.location for x in store.list_sources()] == ["hub:fake-org/lm-eval-results"]
    assert store.get_source("hub:Fake-Org/LM-Eval-Results") is None


def test_a_renamed_hub_dataset_is_stored_under_the_id_the_hub_gives_it_now(store, hub_server):
    """`taskspace ingest hub:fake-org/old-results` of a dataset renamed `fake-org/lm-eval-results` (the Hub redirects
    the old id), then `hub:fake-org/lm-eval-results`: one stored source, under the id the Hub gives the repo now, the
    second skipped as unchanged, and the first says the repo was renamed and how to name it. Before, each name was a
    source of its own: `sources stored` listed both, each with the same 84 outcome cells."""
    hub_server.rename("dataset", "fake-org/old-results", "fake-org/lm-eval-results")
    s = ingest("hub:fake-org/old-results", store=store, fetch_metadata=False)
    assert s.errors == [] and s.outcomes == 84
    assert any("hub:fake-org/old-results is hub:fake-org/lm-eval-results on the Hub now" in w for w in s.warnings), s
    again = ingest("hub:fake-org/lm-eval-results", store=store, fetch_metadata=False)
    assert again.errors == [] and again.skipped == 1 and again.outcomes == 0, again
    assert [x.location for x in store.list_sources()] == ["hub:fake-org/lm-eval-results"]


def test_hub_missing_repo_revision_and_offline(store, hub_server, monkeypatch):
    s = ingest("hub:fake-org/does-not-exist", store=store)
    (e,) = s.errors
    assert e.file == "hub:fake-org/does-not-exist" and "does not exist" in e.message
    (e,) = ingest(f"hub:{LB}@{'0' * 40}", store=store).errors
    assert f"revision {'0' * 40!r} not found in the dataset" in e.message
    from indexer.hub import HubClient

    sha = HubClient().repo_snapshot(LB).sha
    assert ingest(f"hub:{LB}@{sha}", store=store, fetch_metadata=False).outcomes == 12
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    s = ingest(f"hub:{LB}", store=store)
    assert "HF_HUB_OFFLINE" in s.errors[0].message


def test_a_hub_repo_whose_hub_is_down_or_unreachable_is_read_from_the_homes_hub_cache_with_a_warning(
        store, hub_server, monkeypatch):
    """`taskspace ingest hub:ORG/NAME` (and a pass over a configured hub: source) with HF_HUB_OFFLINE unset while the
    Hub refuses connections or answers 503 through the retries, on a home whose Hub cache holds the repo: read from the
    cache, with the warning `taskspace pull` gives (what the Hub did, the commit read); the Hub cache keeps what it
    held. A 404 is an answer, not an outage: the Hub's error; a repo the cache lacks keeps the Hub's error. Before,
    every such ingest was the Hub's error (exit 4) whatever the cache held, though `taskspace pull` read it."""
    import socket

    from indexer.hub import HubClient
    from indexer.ingest import drop_source

    location = f"hub:{LB}"
    assert ingest(location, store=store, fetch_metadata=False).outcomes == 12  # online: fills the home's Hub cache
    sha = HubClient().repo_snapshot(LB).sha
    drop_source(location, store=store)
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", closed)
    read = (f"read {location} at {sha} from this home's Hub cache (the commit main was when this home's Hub cache last "
            "fetched it); it may not be the newest revision")
    s = ingest(location, store=store, fetch_metadata=False)
    assert (s.errors, s.outcomes, s.hub_failures) == ([], 12, 0), s.errors
    (w,) = s.warnings
    assert w.startswith(f"{location}: the Hub could not be reached (cannot connect to {closed}") and w.endswith(read), w
    s = ingest(location, store=store, fetch_metadata=False)  # that commit stored already: skipped, said the same
    assert (s.errors, s.skipped) == ([], 1) and s.warnings[0].endswith(read), s.warnings
    (e,) = ingest("hub:open-llm-leaderboard/fake-org__old-harness-details", store=store, fetch_metadata=False).errors
    assert f"cannot connect to {closed}" in e.message and "Hub cache" not in e.message, e.message  # nothing cached
    monkeypatch.setenv("HF_ENDPOINT", hub_server.url)
    drop_source(location, store=store)
    hub_server.fail(f"/api/datasets/{LB}", [503] * 6)
    sleeps = []
    s = ingest(location, store=store, fetch_metadata=False, hub=HubClient(backoff=0.01, sleep=sleeps.append))
    assert (s.errors, s.outcomes, len(sleeps)) == ([], 12, 5), s.errors
    (w,) = s.warnings
    assert w.startswith(f"{location}: the Hub failed every try (the Hub at {hub_server.url} answered 503") and w.endswith(
        read), w
    hub_server._faults.clear()
    drop_source(location, store=store)
    hub_server.fail(f"/api/datasets/{LB}", [404] * 6)  # an answer: the Hub's error, the cache not read
    s = ingest(location, store=store, fetch_metadata=False)
    (e,) = s.errors
    assert s.outcomes == 0 and s.warnings == [] and "Hub cache" not in e.message, e.message
    hub_server._faults.clear()


def test_offline_messages_name_the_variable_that_set_it(store, tmp_path, monkeypatch, hub_server):
    """With only TRANSFORMERS_OFFLINE=1 (which huggingface_hub honours too) the warning and the Hub error name it;
    before, both said "HF_HUB_OFFLINE is set; unset it", which was not set, and unsetting it changed nothing."""
    d = write_table(tmp_path / "t", [("org/model", "p1", 0)])
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    s = ingest(str(d), store=store)
    assert s.warnings == ["TRANSFORMERS_OFFLINE is set: no Hub metadata fetched for the ingested models"]
    (e,) = ingest(f"hub:{LB}", store=store).errors
    assert "TRANSFORMERS_OFFLINE is set; unset it to reach the Hub" in e.message and "HF_HUB_OFFLINE" not in e.message
    monkeypatch.setenv("HF_HUB_OFFLINE", "yes")  # both: the one huggingface_hub reads first
    (e,) = ingest(f"hub:{LB}", store=store).errors
    assert "HF_HUB_OFFLINE is set" in e.message


def test_metadata_skipped_for_plain_names_and_offline(store, tmp_path, monkeypatch):
    d = write_table(tmp_path / "t", [("gpt-4o(api)", "p1", 1), ("org/model", "p1", 0)])
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    s = ingest(str(d), store=store)
    assert s.errors == [] and s.warnings == ["HF_HUB_OFFLINE is set: no Hub metadata fetched for the ingested models"]
    d2 = write_table(tmp_path / "u", [("gpt-4o(api)", "p2", 1)])
    assert ingest(str(d2), store=store).warnings == []  # a plain name never asks the Hub


# ----------------------------------------------------------------------------------- helpers and CLI


def test_parse_spec_and_helpers():
    assert parse_spec("hub:org/repo@abc") == ("hub", "org/repo", "abc")
    assert parse_spec("hub-org:open-llm-leaderboard") == ("hub-org", "open-llm-leaderboard", None)
    assert parse_spec("./data") == ("path", "./data", None)
    with pytest.raises(InputError):
        parse_spec("hub:not a repo")
    assert leaderboard_model_id(LB) == "fake-org/tiny-lb"
    assert leaderboard_model_id("open-llm-leaderboard-old/details_a__b") == "a/b"
    assert leaderboard_model_id("fake-org/lm-eval-results") is None
    fmt, files = plan_files(["m/results_2024-01-01T00-00-00.json", "m/samples_t_2024-01-01T00-00-00.jsonl",
                             "m/results_2024-02-01T00-00-00.json", "m/samples_t_2024-02-01T00-00-00.jsonl",
                             "m/samples_t_2024-03-01T00-00-00.jsonl", "README.md"])
    assert fmt == "lm_eval"
    assert files == ["m/results_2024-02-01T00-00-00.json", "m/samples_t_2024-02-01T00-00-00.jsonl",
                     "m/samples_t_2024-03-01T00-00-00.jsonl"]


def test_missing_path_is_an_input_error(store):
    with pytest.raises(InputError, match="no such file"):
        ingest("/nonexistent/folder", store=store)


def test_cli_ingest_json_and_exit_codes(tmp_path, monkeypatch):
    from indexer.cli import app

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    runner = CliRunner()
    good = write_table(tmp_path / "good", [("m1", "p1", 1), ("m2", "p2", 0)])
    r = runner.invoke(app, ["ingest", str(good), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert (out["models"], out["prompts"], out["outcomes"], out["skipped"], out["errors"]) == (2, 2, 2, 0, [])
    bad = write_table(tmp_path / "bad", [("m1", "p1", 1), ("m3", "p1", "x")])
    r = runner.invoke(app, ["ingest", str(bad), "--json"])
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    assert out["outcomes"] == 1 and out["errors"][0]["line"] == 3 and out["errors"][0]["file"].endswith("outcomes.csv")
    r = runner.invoke(app, ["ingest", str(good)])
    assert r.exit_code == 0 and "1 unchanged source skipped" in r.stdout


@pytest.mark.parametrize("command", [["ingest", "SRC"], ["ingest", "hub:org/repo"], ["index", "--source", "SRC"],
                                     ["sources", "add", "SRC"]])
def test_an_unknown_format_is_a_usage_error_naming_the_option(command, tmp_path, taskspace_home):
    """`taskspace ingest DIR --format bogus` (and `index --source`, `sources add`): a usage error naming --format and
    the known formats (exit 2, one line), before anything is read or written. Before, ingest reported the source as
    rejected input (exit 1, "1 error(s)"; a Hub spec was fetched first), and index / sources add said "source ...:
    unknown format" without naming the option."""
    import os
    import subprocess
    import sys

    src = write_table(tmp_path / "src", [("m1", "p1", 1)])
    args = [str(src) if a == "SRC" else a for a in command]
    res = subprocess.run([sys.executable, "-m", "indexer.cli", *args, "--format", "bogus"], capture_output=True,
                         text=True, env=dict(os.environ, HF_HUB_OFFLINE="1", COLUMNS="200"), timeout=120,
                         cwd=Path(__file__).resolve().parents[1])
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and res.stdout == "", res.stderr[-2000:]
    assert "Invalid value for '--format'" in lines[0] and "unknown format 'bogus'; use one of table, lm_eval, lighteval" in lines[0]
    assert not taskspace_home.exists() or not any(taskspace_home.iterdir())  # nothing opened or saved


def test_cli_ingest_hub_failure_exits_4(tmp_path, hub_server):
    """A Hub failure (here: a gated repo without a token) is the documented exit code 4, not 1."""
    from indexer.cli import app

    r = CliRunner().invoke(app, ["ingest", "hub:open-llm-leaderboard/fake-org__gated-details", "--json"])
    assert r.exit_code == 4, r.output
    out = json.loads(r.stdout)
    assert out["hub_failures"] == 1 and "gated" in out["errors"][0]["message"]
    # input errors alone stay 1
    bad = write_table(tmp_path / "bad", [("m1", "p1", 1), ("m3", "p1", "x")])
    assert CliRunner().invoke(app, ["ingest", str(bad), "--no-metadata"]).exit_code == 1


def test_the_error_count_of_ingest_counts_the_rows_a_summary_line_stands_for(tmp_path):
    """`taskspace ingest` over 25 rows of one problem (20 shown, one line "5 more rows rejected: ...") says "25
    error(s)", the rows rejected; before, "21 error(s)", the lines printed."""
    from indexer.cli import app
    from indexer.sources.common import MAX_ERRORS_PER_PROBLEM

    bad = write_table(tmp_path / "t", [(f"m{i}", "p1", "x") for i in range(MAX_ERRORS_PER_PROBLEM + 5)] + [("ok", "p1", 1)])
    r = CliRunner().invoke(app, ["ingest", str(bad), "--no-metadata"])
    assert r.exit_code == 1, r.output
    lines = r.stderr.splitlines()
    assert lines[0] == f"{MAX_ERRORS_PER_PROBLEM + 5} errors: this input was rejected, the rest was ingested", r.stderr
    assert lines[-1].endswith("5 more rows rejected: non-numeric correct values") and len(lines) == 22


def test_conflicting_outcomes_of_one_model_named_two_ways_are_dropped_with_an_error(store, tmp_path):
    """Names that map to one model (`meta-llama__Llama-3-8B` and `meta-llama/Llama-3-8B`, `gpt-4o(eval_results/gpt4o)`
    and `gpt-4o`) with different outcomes on one prompt id: all those rows are dropped with an error, as under one
    spelling; equal outcomes stay. Before, they were averaged to 0.5 without a word."""
    d = write_table(tmp_path / "t", [("meta-llama__Llama-3-8B", "p1", 1), ("meta-llama/Llama-3-8B", "p1", 0),
                                     ("meta-llama__Llama-3-8B", "p2", 1), ("meta-llama/Llama-3-8B", "p2", 1),
                                     ("gpt-4o(eval_results/gpt4o)", "p1", 1), ("gpt-4o", "p1", 0)])
    s = ingest(str(d), store=store, fetch_metadata=False)
    assert s.exit_code == 1
    assert [e.message for e in s.errors] == [
        "model 'meta-llama/Llama-3-8B', prompt_id 'p1': different outcomes under the names of one model (1 as "
        "'meta-llama__Llama-3-8B', 0 as 'meta-llama/Llama-3-8B'); all its rows are dropped: fix the source (or the "
        "alias that maps these names to one model)",
        "model 'gpt-4o', prompt_id 'p1': different outcomes under the names of one model (1 as "
        "'gpt-4o(eval_results/gpt4o)', 0 as 'gpt-4o'); all its rows are dropped: fix the source (or the alias that "
        "maps these names to one model)",
    ]
    assert (s.models, s.prompts, s.outcomes) == (1, 1, 1)  # meta-llama/Llama-3-8B on p2 (1 under both names)


def test_equal_outcomes_of_one_model_named_two_ways_are_counted_as_repeated_rows(store, tmp_path):
    """A table naming one model two ways (`Meta-Llama-3-8B`, `meta-llama-3-8b `) with equal outcomes on the same
    prompts: stored once, the rows merged counted in "repeated row(s) dropped"; before, "0 repeated row(s) dropped"."""
    rows = [(name, p, int(p == "p1")) for name in ("Meta-Llama-3-8B", "meta-llama-3-8b ") for p in ("p1", "p2")]
    s = ingest(str(write_table(tmp_path / "t", rows + [("m2", "p1", 1)])), store=store, fetch_metadata=False)
    assert s.errors == [] and (s.models, s.outcomes, s.duplicates) == (2, 3, 2), s
    # different outcomes: the error names the outcomes file, not the folder alone (before, the folder)
    d = write_table(tmp_path / "u", rows[:2] + [("meta-llama-3-8b ", "p1", 0)])
    s = ingest(str(d), store=store, fetch_metadata=False)
    assert [e.file for e in s.errors] == [str(d / "outcomes.csv")], s.errors


def test_ingesting_a_file_of_a_stored_folder_source_is_refused(store, tmp_path):
    """`ingest s1` then `ingest s1/outcomes.csv` (or the other way round) would store every outcome twice as two
    sources: the second is refused (exit 1) saying which stored source holds it; before, both were stored."""
    d = write_table(tmp_path / "s1", [("m1", "p1", 1), ("m1", "p2", 0)])
    assert ingest(str(d), store=store, fetch_metadata=False).outcomes == 2
    s = ingest(str(d / "outcomes.csv"), store=store, fetch_metadata=False)
    assert (s.exit_code, s.sources, s.outcomes) == (1, 0, 0)
    (e,) = s.errors
    assert e.file == str(d / "outcomes.csv") and e.message.startswith(f"part of the stored source {d} ")
    assert [x.location for x in store.list_sources()] == [str(d)]
    d2 = write_table(tmp_path / "s2", [("m1", "p1", 1)])
    assert ingest(str(d2 / "outcomes.csv"), store=store, fetch_metadata=False).outcomes == 1
    s = ingest(str(d2), store=store, fetch_metadata=False)
    assert s.exit_code == 1 and s.errors[0].message.startswith(f"holds the stored source {d2 / 'outcomes.csv'};")
    assert ingest(str(d), store=store, fetch_metadata=False).skipped == 1  # the stored folder itself: unchanged


def test_sources_below_a_table_folder_that_it_does_not_read_are_not_refused_as_nested(store, tmp_path):
    """A table folder reads its own outcomes and prompts files only: an lm-eval run or a second table in a subfolder
    of it is no part of it. Before, after `ingest DIR` (which read the table only), `ingest DIR/run` was refused as
    "part of the stored source DIR (its outcomes are stored with it)", and `sources add DIR/run` beside a configured
    DIR as "inside the configured source DIR, which reads it already": the run could not be ingested at all without
    moving its files. A file of the table (`DIR/outcomes.csv`) is still refused."""
    from indexer.sourcelist import SourceSpec, add, reading

    d = write_table(tmp_path / "d", [("m1", "p1", 1), ("m1", "p2", 0)])
    shutil.copytree(LM_OUT / "fake-org__dummy-a", d / "run")
    write_table(d / "tbl", [("m2", "p1", 1)])
    assert ingest(str(d), store=store, fetch_metadata=False).outcomes == 2
    for sub, n in (("run", 42), ("tbl", 1)):
        s = ingest(str(d / sub), store=store, fetch_metadata=False)
        assert s.errors == [] and s.outcomes == n, s.errors
    s = ingest(str(d / "outcomes.csv"), store=store, fetch_metadata=False)
    assert s.exit_code == 1 and s.errors[0].message.startswith(f"part of the stored source {d} ")
    conf = tmp_path / "sources.toml"
    add(conf, [SourceSpec(str(d)), SourceSpec(str(d / "run")), SourceSpec(str(d / "tbl"))])
    with pytest.raises(ConfigError, match="is inside the configured source"):
        add(conf, [SourceSpec(str(d / "outcomes.csv"))])
    assert [x.spec for x in reading(str(d / "run"), [SourceSpec(str(d))])] == []
    assert [x.spec for x in reading(str(d / "outcomes.csv"), [SourceSpec(str(d))])] == [str(d)]


def test_a_table_folder_holding_output_of_another_format_says_it_is_not_read(store, tmp_path):
    """A folder with outcomes and prompts files is read as a plain table, its own files only: an lm-eval run in a
    subfolder of it was left unread without a word (`ingest DIR` said "added ... from 1 source(s)", exit 0). Now a
    warning names the subfolder, its format and that it is ingested by its own path, which then reads it."""
    d = write_table(tmp_path / "d", [("m1", "p1", 1), ("m1", "p2", 0)])
    shutil.copytree(LM_OUT / "fake-org__dummy-a", d / "run")
    s = ingest(str(d), store=store, fetch_metadata=False)
    assert s.errors == [] and s.outcomes == 2
    (w,) = [w for w in s.warnings if "read as a plain table" in w]
    assert f"{d / 'run'} holds lm_eval output" in w and "ingest it by its own path" in w
    assert ingest(str(d / "run"), store=store, fetch_metadata=False).outcomes == 42
    plain = write_table(tmp_path / "plain", [("m1", "p1", 1)])
    assert not [w for w in ingest(str(plain), store=store, fetch_metadata=False).warnings if "plain table" in w]


def test_a_database_holding_a_folder_and_its_file_from_before_keeps_ingesting_both(store, tmp_path, monkeypatch):
    """Sources stored nested before the refusal existed are read as they always were (their changes ingested), so
    an old database or sources.toml listing both does not fail every pass; only a new nested source is refused."""
    from indexer.ingest import Ingester

    d = write_table(tmp_path / "s1", [("m1", "p1", 1), ("m1", "p2", 0)])
    with monkeypatch.context() as m:  # the state a database could reach before the rule
        m.setattr(Ingester, "_refuse_nested", lambda self, infos, path: None)
        ingest(str(d), store=store, fetch_metadata=False)
        ingest(str(d / "outcomes.csv"), store=store, fetch_metadata=False)
    assert len(store.list_sources()) == 2
    write_table(tmp_path / "s1", [("m1", "p1", 0), ("m1", "p2", 0)])  # a change: both re-read, no error
    for path in (d, d / "outcomes.csv"):
        s = ingest(str(path), store=store, fetch_metadata=False)
        assert (s.exit_code, s.sources, s.errors) == (0, 1, []), (path, s.errors)


def test_an_option_the_sources_format_does_not_take_is_a_usage_error(tmp_path):
    """`taskspace ingest TABLE --filter X` (or `--model`, `--metric`: lm-eval/lighteval options), or `ingest LM_EVAL
    --prompts F` (a table option): one line naming the option and the formats it applies to, exit 2, nothing
    stored (`indexer.sources.registry.check_options`, each reader declaring its options); before, the table reader
    failed with "TypeError: read_table() got an unexpected keyword argument 'filter'", reported as an unexpected
    error of that source (exit 1)."""
    import os
    import subprocess
    import sys

    from indexer.errors import ConfigError
    from indexer.store.sql import open_store

    sample = Path(__file__).resolve().parents[1] / "indexer" / "data" / "sample"
    for flag, says in (("--filter", "--filter applies only to lm_eval sources, not to this table source"),
                       ("--model", "--model applies only to lm_eval and lighteval sources"),
                       ("--metric", "--metric applies only to lm_eval and lighteval sources")):
        res = subprocess.run([sys.executable, "-m", "indexer.cli", "ingest", str(sample), flag, "X", "--no-metadata"],
                             capture_output=True, text=True, env=dict(os.environ, HF_HUB_OFFLINE="1"), timeout=300,
                             cwd=Path(__file__).resolve().parents[1])
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1 and lines[0] == f"error: {says}" + lines[0][len(says) + 7:], \
            res.stderr[-2000:]
        assert lines[0].endswith(f"drop {flag}") and "TypeError" not in res.stderr
    with pytest.raises(ConfigError, match="^filter= applies only to lm_eval sources"):
        ingest(str(sample), filter="strict-match", fetch_metadata=False)
    with pytest.raises(ConfigError, match="^prompts= applies only to table sources, not to this lm_eval source"):
        ingest(str(LM_OUT), prompts=str(sample / "prompts.jsonl"), fetch_metadata=False)
    with open_store() as store:
        assert store.list_sources() == []
    assert ingest(str(LM_OUT), filter="none", fetch_metadata=False).sources > 0  # its own options still read


def test_a_prompts_file_of_no_table_type_is_a_usage_error_naming_the_types(tmp_path, store):
    """`taskspace ingest OUTCOMES --prompts questions.txt` (a CSV named .txt): before, read as JSON lines whatever it
    held, every line "malformed JSON line: Expecting value" and every outcome row "not in the prompts file" (exit 1).
    Now one line naming --prompts and the table file types (exit 2), nothing stored; named .csv it reads."""
    import os
    import subprocess
    import sys

    from indexer.errors import ConfigError

    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\n")
    (tmp_path / "questions.txt").write_text("prompt_id,benchmark,text\np1,b,What is two plus two?\n")
    res = subprocess.run([sys.executable, "-m", "indexer.cli", "ingest", str(tmp_path / "outcomes.csv"), "--prompts",
                          str(tmp_path / "questions.txt"), "--no-metadata"], capture_output=True, text=True,
                         env=dict(os.environ, HF_HUB_OFFLINE="1"), timeout=300, cwd=Path(__file__).resolve().parents[1])
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr[-2000:]
    assert lines[0].startswith(f"error: --prompts {tmp_path / 'questions.txt'}: not a table file type") and ".csv" in lines[0]
    with pytest.raises(ConfigError, match="not a table file type"):
        ingest(str(tmp_path / "outcomes.csv"), prompts=str(tmp_path / "questions.txt"), store=store,
               fetch_metadata=False)
    (tmp_path / "questions.txt").rename(tmp_path / "questions.csv")
    s = ingest(str(tmp_path / "outcomes.csv"), prompts=str(tmp_path / "questions.csv"), store=store,
               fetch_metadata=False)
    assert s.errors == [] and s.outcomes == 1


def test_a_blank_reading_option_or_a_missing_prompts_file_is_a_usage_error(tmp_path):
    """`taskspace ingest DATA --prompts PATH` where PATH does not exist or is a folder, and `--model`, `--filter` or
    `--metric` given blank: one line naming the option (exit 2), nothing stored. Before, a missing `--prompts` file
    said "no prompts file ... beside the outcomes; put one there or pass it explicitly" (it had been passed; exit
    1), `--model ''` and `--filter ''` were silently ignored (exit 0: the default model name, the default filter)
    and `--model '  '` rejected every row as "model name empty" (exit 1, one error per row)."""
    import os
    import subprocess
    import sys

    from indexer.errors import ConfigError
    from indexer.sources import read_sources
    from indexer.store.sql import open_store

    sample = Path(__file__).resolve().parents[1] / "indexer" / "data" / "sample"
    missing = tmp_path / "no-such-prompts.jsonl"
    for args, says in (([str(sample), "--prompts", str(missing)], f"error: --prompts {missing}: no such file"),
                       ([str(sample), "--prompts", str(tmp_path)], f"error: --prompts {tmp_path}: is a folder"),
                       ([str(LM_OUT), "--model", ""], "error: --model '': blank"),
                       ([str(LM_OUT), "--filter", " "], "error: --filter ' ': blank")):
        res = subprocess.run([sys.executable, "-m", "indexer.cli", "ingest", *args, "--no-metadata"],
                             capture_output=True, text=True, env=dict(os.environ, HF_HUB_OFFLINE="1"), timeout=300,
                             cwd=Path(__file__).resolve().parents[1])
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1 and lines[0].startswith(says), (args, res.stderr[-2000:])
    for option in ("model", "filter", "metric"):
        with pytest.raises(ConfigError, match=f"^{option}='  ': blank"):
            ingest(str(LM_OUT), fetch_metadata=False, **{option: "  "})
        with pytest.raises(ConfigError, match=f"^{option}='': blank"):
            list(read_sources(LM_OUT, **{option: ""}))
    with pytest.raises(ConfigError, match="^prompts=.*: no such file"):
        ingest(str(sample), prompts=str(missing), fetch_metadata=False)
    with open_store() as store:
        assert store.list_sources() == []


def test_a_folder_of_outcomes_alone_is_read_with_the_prompts_file_given(tmp_path, store):
    """`taskspace ingest DIR --prompts FILE` (and `sources add`, `index --source`), DIR holding outcomes.csv and no
    prompts file, FILE kept elsewhere: read as a plain table with FILE, as `--prompts` says (default: prompts.<ext>
    beside the outcomes) and as `--format table` read it; a FILE that is not there is named. Before, the folder's
    format was detected without the option: "outcomes.csv but no prompts file beside it: put one there", the file
    given ignored (found walking the CLI)."""
    from indexer.errors import ConfigError
    from indexer.sourcelist import SourceSpec, validate

    data = tmp_path / "data"
    data.mkdir()
    (data / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\nm2,p1,0\n")
    prompts = tmp_path / "kept-elsewhere.csv"
    prompts.write_text("prompt_id,benchmark,text\np1,b,What is two plus two?\n")
    assert validate(SourceSpec(str(data), prompts=str(prompts))).options == {"prompts": str(prompts)}
    s = ingest(str(data), prompts=str(prompts), store=store, fetch_metadata=False)
    assert s.errors == [] and s.outcomes == 2, s.errors
    missing = tmp_path / "no-such.csv"
    with pytest.raises(ConfigError, match="no such file"):
        ingest(str(data), prompts=str(missing), store=store, fetch_metadata=False)
    with pytest.raises(ConfigError, match=f"prompts='{missing}': no such file"):
        validate(SourceSpec(str(data), prompts=str(missing)))


def test_a_prompts_file_given_that_is_a_device_or_a_link_to_nothing_is_named_for_what_it_is(tmp_path, store):
    """`taskspace ingest DATA --prompts /dev/null` (a device) or a link whose target is gone: the error says what
    the path is, as for a source path. Before, both were "--prompts PATH: no such file", though `ls` lists it."""
    from indexer.errors import ConfigError

    sample = Path(__file__).resolve().parents[1] / "indexer" / "data" / "sample"
    gone = tmp_path / "prompts.jsonl"
    gone.symlink_to(tmp_path / "moved" / "prompts.jsonl")
    for path, said in (("/dev/null", "not a regular file or folder (a named pipe, socket or device)"),
                       (str(gone), "a symbolic link to nothing")):
        with pytest.raises(ConfigError) as err:
            ingest(str(sample), prompts=path, store=store, fetch_metadata=False)
        assert str(err.value).startswith(f"prompts='{path}': {said}") and "no such file" not in str(err.value), err.value

def test_the_error_summary_of_an_ingest_that_stored_nothing_says_so(tmp_path):
    """`taskspace ingest EMPTY_FOLDER` (or a source every row of which is rejected): the error summary says "nothing
    was ingested"; with some source stored, "the rest was ingested". Before, always "the rest was ingested", also when
    nothing was (0 sources added)."""
    import os
    import subprocess
    import sys

    sample = Path(__file__).resolve().parents[1] / "indexer" / "data" / "sample"
    good = tmp_path / "good"
    good.mkdir()
    for name in ("outcomes.csv", "prompts.jsonl"):
        shutil.copy(sample / name, good / name)
    (good / "outcomes.csv").write_text((sample / "outcomes.csv").read_text() + "Llama-2-13b-hf,mmlupro-71,7\n")
    (tmp_path / "empty").mkdir()
    env = dict(os.environ, HF_HUB_OFFLINE="1", TASKSPACE_HOME=str(tmp_path / "home"))
    for folder, says in ((tmp_path / "empty", "1 error: this input was rejected, nothing was ingested"),
                         (good, "1 error: this input was rejected, the rest was ingested")):
        res = subprocess.run([sys.executable, "-m", "indexer.cli", "ingest", str(folder), "--no-metadata"],
                             capture_output=True, text=True, env=env, timeout=300, cwd=Path(__file__).resolve().parents[1])
        assert res.returncode == 1 and says in res.stderr.splitlines(), res.stderr[-2000:]


def test_an_empty_source_spec_is_refused_not_read_as_the_current_folder(tmp_path):
    """`taskspace ingest ""` (an unset variable in `taskspace ingest "$DIR"`) and `taskspace evaluate ""`: refused as
    an empty spec / DATA (exit 1, one line), nothing read, as `sources add ""` is. Before, `Path("")` is `.`, so both
    read whatever source the current folder held (ingest stored it, exit 0) and `ingest " "` said
    "error: : no such file or folder"."""
    import os
    import subprocess
    import sys

    from indexer.evaluate import evaluate
    from indexer.store.sql import open_store

    here = tmp_path / "cwd"
    here.mkdir()
    sample = Path(__file__).resolve().parents[1] / "indexer" / "data" / "sample"
    (here / "prompts.jsonl").write_text((sample / "prompts.jsonl").read_text())
    (here / "outcomes.csv").write_text("model,prompt_id,correct\nm1,mmlupro-71,1\nm2,mmlupro-71,0\n")
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    for args in (["ingest", "", "--no-metadata"], ["ingest", " ", "--no-metadata"], ["evaluate", "", "--no-sweep"]):
        res = subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True, env=env,
                             timeout=300, cwd=here)
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 1 and len(lines) == 1 and "is empty" in lines[0], (args, res.stderr[-2000:])
    with pytest.raises(InputError, match="a source spec is empty"):
        ingest("", fetch_metadata=False)
    with pytest.raises(InputError, match="a DATA is empty"):
        evaluate([str(sample), ""])
    with open_store() as store:
        assert store.list_sources() == []


def test_model_over_a_folder_of_several_models_is_a_usage_error():
    """`taskspace ingest LM_EVAL_OUT --model org/foo` where the folder holds the runs of several models: a usage error
    naming `--model` and how many models (exit 2, one line, nothing stored); one model's folder with `--model` is read
    under that name. Before, the four models' outcomes were all stored as `org/foo` ("added 1 models ... 168
    outcomes from 4 source(s)", exit 0): four models' results silently merged into one."""
    import os
    import subprocess
    import sys

    from indexer.errors import ConfigError
    from indexer.store.sql import open_store

    res = subprocess.run([sys.executable, "-m", "indexer.cli", "ingest", str(LM_OUT), "--model", "org/foo",
                          "--no-metadata"], capture_output=True, text=True, env=dict(os.environ, HF_HUB_OFFLINE="1"),
                         timeout=300, cwd=Path(__file__).resolve().parents[1])
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr[-2000:]
    assert lines[0].startswith(f"error: --model 'org/foo' names one model, but {LM_OUT} holds the runs of 4 models")
    with pytest.raises(ConfigError, match="holds the runs of 4 models"):
        ingest(str(LM_OUT), model="org/foo", fetch_metadata=False)
    with open_store() as store:
        assert store.list_sources() == []
    one = sorted(p for p in LM_OUT.iterdir() if p.is_dir())[0]
    s = ingest(str(one), model="org/foo", fetch_metadata=False)
    assert s.sources == 1 and s.models == 1


def test_lighteval_refuses_filter_as_other_formats_refuse_the_options_they_do_not_take():
    """`taskspace ingest LIGHTEVAL --filter X`: lighteval details have no filters, so the option is a usage error
    naming it (exit 2, one line, nothing stored), as `--filter` on a table and `--prompts` on lm-eval output are;
    before, the lighteval reader declared `filter` among its options and dropped it, so the option was silently
    ignored (exit 0, and the ignored filter even made the source's stored revision differ from a plain reading)."""
    import os
    import subprocess
    import sys

    from indexer.errors import ConfigError
    from indexer.sources import read_sources
    from indexer.store.sql import open_store

    out = FIX / "formats" / "lighteval_0.13_output"
    says = "error: --filter applies only to lm_eval sources, not to this lighteval source; drop --filter"
    res = subprocess.run([sys.executable, "-m", "indexer.cli", "ingest", str(out), "--filter", "strict-match",
                          "--no-metadata"], capture_output=True, text=True, env=dict(os.environ, HF_HUB_OFFLINE="1"),
                         timeout=300, cwd=Path(__file__).resolve().parents[1])
    assert res.returncode == 2 and res.stderr.strip().splitlines() == [says], res.stderr[-2000:]
    with pytest.raises(ConfigError, match="^filter= applies only to lm_eval sources, not to this lighteval source"):
        list(read_sources(out, filter="strict-match"))
    with open_store() as store:
        assert store.list_sources() == []
    assert ingest(str(out), model="org/light-model", fetch_metadata=False).sources == 1  # the options it takes: read


def test_a_table_in_a_hub_dataset_keeps_model_names_as_a_local_copy_does(store, hub_server, tmp_path):
    """A plain table in a Hub dataset repo with API models and short names (`gpt-4o`, `Llama-2-7b-hf`) is stored
    as the same table read from a folder: names kept as given (or mapped by the identity rules). Before, every
    outcome of a model whose name was not ORG/NAME was rejected ("not a valid Hub repo id ... skipped"), so such a
    repo stored nothing, exit 1, every pass."""
    rows = [("gpt-4o", "p1", 1), ("gpt-4o", "p2", 0), ("Llama-2-7b-hf", "p1", 0), ("org/model", "p3", 1)]
    write_table(hub_server.root / "datasets" / "qa-org" / "table-results", rows)
    local = write_table(tmp_path / "t", rows)
    s = ingest("hub:qa-org/table-results", store=store, fetch_metadata=False)
    assert (s.errors, s.sources, s.outcomes, s.exit_code) == ([], 1, 4, 0)
    hub_models = sorted(store.load_outcomes().models)
    assert "gpt-4o" in hub_models and len(hub_models) == 3
    assert store.delete_source("hub:qa-org/table-results")
    assert ingest(str(local), store=store, fetch_metadata=False).outcomes == 4
    assert sorted(store.load_outcomes().models) == hub_models


def test_a_limit_below_one_is_refused_before_the_hub_is_asked(store, hub_server, tmp_path):
    """`taskspace ingest hub-org:ORG --limit N` takes N >= 1, as `sources add` and `index --source` do (README:
    "a limit positive"): 0 or below is a usage error (exit 2, one line naming --limit) and the library's
    `ingest(limit=0)` a ConfigError, before any Hub request. Before, `--limit 0` listed the organisation and
    ingested nothing with exit 0, and `--limit -1` failed inside huggingface_hub (islice's "Stop argument")."""
    import os
    import subprocess
    import sys

    before = len(hub_server.log)
    for bad in (0, -1, True):
        with pytest.raises(ConfigError, match="must be a positive integer"):
            ingest("hub-org:open-llm-leaderboard", store=store, limit=bad)
    assert len(hub_server.log) == before
    env = dict(os.environ, TASKSPACE_HOME=str(tmp_path / "home"))
    for bad in ("0", "-1"):
        r = subprocess.run([sys.executable, "-m", "indexer.cli", "ingest", "hub-org:open-llm-leaderboard", "--limit",
                            bad], capture_output=True, text=True, env=env)
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "--limit" in lines[0] and lines[0].startswith("error: taskspace ingest:"), r.stderr
    assert len(hub_server.log) == before
    s = ingest("hub-org:open-llm-leaderboard", store=store, limit=1, fetch_metadata=False)  # 1 is a limit
    assert s.sources + len(s.errors) == 1


def test_a_file_changed_while_it_is_read_is_read_again_by_the_next_pass(store, tmp_path, monkeypatch):
    """The revision stored is the fingerprint taken before the files were read: a file rewritten while it is read
    (an export still running) is read again by the next pass. Before, the fingerprint was taken after reading, so
    the outcomes read were stored under the new content's fingerprint and every later pass skipped the new content
    as unchanged."""
    import indexer.sources.tables as tables

    d = write_table(tmp_path / "t", [("m1", "p1", 1), ("m1", "p2", 0)])
    real = tables._read_long_blocks

    def read_then_a_writer_rewrites(path, errors):  # the export rewrites the outcomes just after they were read
        yield from real(path, errors)
        write_table(d, [("m1", "p1", 1), ("m1", "p2", 0), ("m2", "p1", 1)])

    monkeypatch.setattr(tables, "_read_long_blocks", read_then_a_writer_rewrites)
    first = ingest(str(d), store=store, fetch_metadata=False)
    monkeypatch.setattr(tables, "_read_long_blocks", real)
    assert (first.sources, sorted(store.load_outcomes().models)) == (1, ["m1"])
    again = ingest(str(d), store=store, fetch_metadata=False)
    assert (again.skipped, again.sources) == (0, 1)
    assert sorted(store.load_outcomes().models) == ["m1", "m2"]
    assert ingest(str(d), store=store, fetch_metadata=False).skipped == 1


def test_format_of_a_hub_repo_plans_the_files_that_format_reads(store, hub_server):
    """`ingest hub:ORG/REPO --format table` on a repo that holds a plain table beside lm-eval runs (which the detection
    prefers): the table's files are downloaded and read; a format with no files in the repo is an error naming it.
    Before, the detected format's files were downloaded and read as the named one: "no outcomes.<ext> or matrix.<ext>
    in this folder" for a repo whose root holds outcomes.csv."""
    both = hub_server.root / "datasets" / "fake-org" / "both"
    shutil.copytree(hub_server.root / "datasets" / "fake-org" / "lm-eval-results", both)
    (both / "outcomes.csv").write_text("model,prompt_id,correct\norg/m1,p1,1\norg/m2,p1,0\n")
    (both / "prompts.csv").write_text("prompt_id,benchmark,text\np1,b,What is 2+2?\n")
    s = ingest("hub:fake-org/both", store=store, format="table", fetch_metadata=False)
    assert s.errors == [] and (s.models, s.outcomes) == (2, 2)
    assert not any("samples_" in p for p in hub_server.downloads("fake-org/both"))
    (e,) = ingest("hub:fake-org/lm-eval-results", store=store, format="lighteval", fetch_metadata=False).errors
    assert e.message == "no files of format lighteval in this repo (format='lighteval'); nothing to read"


def test_the_error_summary_of_an_ingest_the_hub_failed_says_so_not_rejected(tmp_path, hub_server):
    """`taskspace ingest hub:ORG/REPO` whose download the Hub keeps failing (exit 4): the summary line says the input
    could not be fetched from the Hub, and with input errors beside it (a `hub-org:` listing) how many of the errors
    are the Hub's. Before, "1 error(s): this input was rejected, nothing was ingested", as if the repo's files were
    read and found bad, though none was downloaded."""
    from indexer.cli import app

    hub_server.fail(f"/datasets/{LB}/resolve", [(503, {"Retry-After": "9999"})])  # past the deadline: not waited for
    r = CliRunner().invoke(app, ["ingest", f"hub:{LB}", "--no-metadata"])
    assert r.exit_code == 4, r.output
    assert "1 error: this input could not be fetched from the Hub, nothing was ingested" in r.output.splitlines()
    hub_server.fail(f"/datasets/{LB}/resolve", [(503, {"Retry-After": "9999"})])
    r = CliRunner().invoke(app, ["ingest", "hub-org:open-llm-leaderboard", "--no-metadata"])
    assert r.exit_code == 4, r.output
    # the gated repo (no token) could not be fetched either; the repo naming no valid model id was rejected
    assert "3 errors: 1 rejected; 2 could not be fetched from the Hub; the rest was ingested" in r.output


def test_an_ingest_of_a_hub_repo_that_does_not_exist_says_so_not_rejected(tmp_path, hub_server, monkeypatch):
    """`taskspace ingest hub:ORG/DELETED` (the Hub answers 404): exit 1, as any input naming something unknown (an
    unknown model, `taskspace -h`), and the summary says the input was not found on the Hub, the error that the
    repo does not exist (or is private: without a token, to set one; with one, that it cannot read it). Before, "1
    error(s): this input was rejected, nothing was ingested", as if files had been read and found bad, and with a
    token still "set HF_TOKEN"."""
    from indexer.cli import app

    r = CliRunner().invoke(app, ["ingest", "hub:fake-org/deleted", "--no-metadata"])
    assert r.exit_code == 1, r.output
    assert "1 error: this input was not found on the Hub, nothing was ingested" in r.output.splitlines()
    assert "the dataset fake-org/deleted does not exist on" in r.output and "(or it is private: set HF_TOKEN" in r.output
    monkeypatch.setenv("HF_TOKEN", "hf_x")
    r = CliRunner().invoke(app, ["ingest", "hub:fake-org/deleted", "--no-metadata", "--json"])
    assert r.exit_code == 1, r.output
    assert "(or it is private and this token cannot read it)" in r.output and "set HF_TOKEN" not in r.output

def test_the_error_summary_of_mixed_failures_gives_each_kind_its_own_count(monkeypatch):
    """`taskspace ingest` whose errors are of several kinds (rows rejected, Hub repos that could not be fetched, one the
    Hub does not have): the summary line gives each kind its own clause and count, the rejected ones counted as rows
    (a "5 more rows rejected" line is 5). Before, the kinds were joined with "or", the first without its count: "this
    input was rejected or (2) could not be fetched from the Hub or (1) not found on the Hub"."""
    import indexer.ingest
    from indexer.cli import app
    from indexer.errors import HubError, NotFoundError
    from indexer.ingest import IngestSummary
    from indexer.records import RowError

    s = IngestSummary(sources=1)
    s.add_error(InputError("line 2: correct value 'x' is not a number"), "a/outcomes.csv")
    s.errors.append(RowError("a/outcomes.csv", None, "5 more rows rejected: correct value is not a number"))
    s.add_error(HubError("cannot download x from org/one: the Hub answered 503"), "hub:org/one")
    s.add_error(HubError("cannot download x from org/two: the Hub answered 503"), "hub:org/two")
    s.add_error(NotFoundError("not found on the Hub: org/gone (read)"), "hub:org/gone")
    monkeypatch.setattr(indexer.ingest, "ingest", lambda *a, **k: s)
    r = CliRunner().invoke(app, ["ingest", "a"])
    assert r.exit_code == 4, r.output
    assert ("9 errors: 6 rejected; 2 could not be fetched from the Hub; 1 not found on the Hub; the rest was "
            "ingested") in r.output.splitlines(), r.output
    s.errors, s.hub_failures, s.hub_missing, s.sources = [], 0, 0, 0
    s.add_error(HubError("cannot download x from org/one: the Hub answered 503"), "hub:org/one")
    s.add_error(NotFoundError("not found on the Hub: org/gone (read)"), "hub:org/gone")
    r = CliRunner().invoke(app, ["ingest", "a"])
    assert ("2 errors: 1 could not be fetched from the Hub; 1 not found on the Hub; nothing was ingested"
            in r.output.splitlines()), r.output


def test_ingesting_a_published_record_set_says_to_pull_it(store, tmp_path, hub_server):
    """`taskspace ingest hub:ORG/NAME` of a dataset `taskspace publish` wrote (a consumer who has only the dataset),
    or of a `--dry-run` folder: the error says it holds published model records, not results, and to load them with
    `taskspace pull` of the same spec; nothing is stored. Before, "no lm-eval samples, lighteval details or plain
    table files in this repo; nothing to read" (for a folder: "cannot tell the format ...; pass --format"), advice
    that could not help."""
    repo = hub_server.root / "datasets" / "tester" / "recs"
    recs = tmp_path / "recs"
    for root in (repo, recs):
        (root / "models").mkdir(parents=True)
        for name in ("spaces.parquet", "benchmarks.parquet", "models/s.parquet", "README.md"):
            (root / name).write_bytes(b"not read")
    s = ingest("hub:tester/recs", store=store, fetch_metadata=False)
    assert [e.message for e in s.errors] == [
        "this repo holds spaces.parquet: published taskspace model records, not per-sample results; load them with "
        "`taskspace pull hub:tester/recs`"] and s.sources == 0 and s.exit_code == 1
    s = ingest(str(recs), store=store, fetch_metadata=False)
    assert [e.message for e in s.errors] == [
        "this folder holds spaces.parquet: published taskspace model records, not per-sample results; load them with "
        f"`taskspace pull {recs}`"] and s.sources == 0 and s.exit_code == 1


@pytest.mark.parametrize("args,says", [
    (["ingest", "hub:bad"], "Invalid value for 'SOURCE': hub: needs a dataset repo id ORG/NAME (optionally @REVISION) "
                            "(given 'hub:bad')"),
    (["ingest", "hub-org:"], "Invalid value for 'SOURCE': hub-org: needs an organisation name"),
    (["ingest", "hub:a/b@x..y"], "Invalid value for 'SOURCE': @REVISION must be a commit sha"),
    (["pull", "hub:bad"], "Invalid value for 'SOURCE': hub: needs a dataset repo id ORG/NAME"),
    (["pull", "hub:org/name@"], "Invalid value for 'SOURCE': the @ is followed by no revision"),
    (["pull", "hub-org:x"], "Invalid value for 'SOURCE': 'hub-org:x' names an organisation; pull takes one record set"),
])
def test_a_malformed_hub_spec_is_a_usage_error_in_every_command(args, says):
    """A malformed `hub:` / `hub-org:` spec given to `taskspace ingest` or `pull` is a usage error naming the argument
    (exit 2, one line, before the Hub or a store is asked), as `index --source` and `sources add` refuse the same spec;
    before, ingest and pull said it with exit 1, an input error, for the value `sources add` refused with 2. A path that
    is not there stays an input error (exit 1)."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and says in lines[0], res.stderr
    assert lines[0].startswith(f"error: taskspace {args[0]}: ")
    res = subprocess.run([sys.executable, "-m", "indexer.cli", "sources", "add", "hub:bad"], capture_output=True, text=True)
    assert res.returncode == 2


def test_an_empty_revision_after_the_at_sign_is_refused_where_a_hub_spec_is_read(tmp_path):
    """`hub:ORG/REPO@` (an empty revision: `hub:org/repo@$REV` with REV unset) is refused, saying what a revision is
    and how to write one, by `taskspace ingest` (a usage error naming SOURCE, before the Hub is asked), `index --source`
    and `sources add` (nothing saved) and the sources.toml reader (naming the file and the entry); before, each read it
    as no revision, the repo's default branch, and `sources add` saved it as `hub:org/repo`."""
    import os
    import subprocess
    import sys

    home = tmp_path / "home"
    env = dict(os.environ, TASKSPACE_HOME=str(home), HF_HUB_OFFLINE="1")

    def ts(*args):
        res = subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True, env=env)
        return res.returncode, " ".join(res.stderr.split())

    says = "the @ is followed by no revision"
    how = "a revision is a commit sha (40 hex digits), refs/pr/N, or a branch or tag name"
    code, err = ts("ingest", "hub:org/repo@")
    assert code == 2 and err.startswith("error: taskspace ingest: Invalid value for 'SOURCE'"), err
    assert says in err and how in err and "hub:ORG/REPO@main" in err and "drop the @" in err, err
    for args in (("sources", "add", "hub:org/repo@"), ("index", "--source", "hub:org/repo@")):
        code, err = ts(*args)
        assert code == 2 and says in err and how in err and "nothing was saved" in err, (args, err)
    assert not (home / "sources.toml").exists()
    home.mkdir(exist_ok=True)
    (home / "sources.toml").write_text('[[source]]\nspec = "hub:org/repo@"\n')
    code, err = ts("sources", "list")
    assert code == 2 and f"{home / 'sources.toml'}: source #1" in err and says in err and how in err, err
    from indexer.ingest import parse_spec

    assert parse_spec("hub:org/repo@main").revision == "main" and parse_spec("hub:org/repo").revision is None


def test_the_library_takes_a_pathlib_path_for_a_source_and_names_a_spec_that_is_no_path(store, tmp_path):
    """`drop_source(Path(...))` and `pull(Path(...))` take the path a `pathlib.Path` holds, as `ingest` does; `None`
    (or bytes, a number) is the InputError naming the argument. Before, `drop_source(Path)` was a StoreError
    ("Error binding parameter 1: type 'PosixPath' is not supported"), `drop_source(None)`, `pull(Path)` and
    `pull(None)` AttributeError: 'PosixPath' object has no attribute 'startswith'."""
    from indexer.ingest import drop_source
    from indexer.publish import pull

    d = write_table(tmp_path / "t", [("gpt-4o", "p1", 1), ("org/model", "p2", 0)])
    assert ingest(d, store=store, fetch_metadata=False).outcomes == 2
    assert drop_source(d, store=store) == {"location": str(d.resolve()), "outcomes": 2}
    with pytest.raises(InputError, match="is neither hub:ORG/NAME"):  # the folder read as a path: it holds no records
        pull(tmp_path / "none", store=store)
    for call, param in ((lambda x: drop_source(x, store=store), "location"), (lambda x: pull(x, store=store), "spec"),
                        (lambda x: ingest(x, store=store, fetch_metadata=False), "spec")):
        for bad in (None, str(d).encode(), 3):
            with pytest.raises(InputError, match=f"^{param} must be a path") as err:
                call(bad)
            assert err.value.item == param and type(bad).__name__ in str(err.value)


def test_cli_ingest_says_the_outcomes_stored_not_added(tmp_path):
    """`taskspace ingest` of a source that grew since it was stored stores it again whole, and says how many outcome
    cells it stored, as `taskspace index` ("outcomes stored") and the worker ("N outcomes stored") say it. Before,
    "added 2 models, 3 prompts, 9 outcomes" for a table of 6 outcomes grown by 3 rows: as if 9 had been added."""
    from indexer.cli import app

    data = tmp_path / "data"
    data.mkdir()
    (data / "prompts.csv").write_text("prompt_id,benchmark,text\n" + "".join(f"p{i},b,what is {i}+{i}?\n" for i in range(3)))
    (data / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(f"m{j},p{i},{(i + j) % 2}\n"
                                                                           for i in range(3) for j in range(2)))
    runner = CliRunner()
    first = runner.invoke(app, ["ingest", str(data), "--no-metadata"])
    assert first.exit_code == 0 and "added 2 models, 3 prompts; 6 outcomes stored from 1 source" in first.output, first.output
    with open(data / "outcomes.csv", "a") as f:
        f.write("m2,p0,1\nm2,p1,0\nm2,p2,1\n")
    again = runner.invoke(app, ["ingest", str(data), "--no-metadata"])
    assert again.exit_code == 0 and "added 1 model, 0 prompts; 9 outcomes stored from 1 source" in again.output, again.output


def test_cli_ingest_of_one_model_says_1_model_not_1_models(tmp_path):
    """`taskspace ingest` of a source with one model and one prompt counts each in the singular. Before, "added 1
    models, 1 prompts; 1 outcomes stored from 1 source(s); 0 unchanged source(s) skipped; ...": every count took its
    plural (or "(s)") whatever its number (indexer.errors.counted is the one helper of such counts)."""
    from indexer.cli import app
    from indexer.errors import counted

    assert (counted(1, "model"), counted(0, "model"), counted(2, "entry", "entries")) == ("1 model", "0 models", "2 entries")
    data = tmp_path / "data"
    data.mkdir()
    (data / "prompts.csv").write_text("prompt_id,benchmark,text\np0,b,what is 1+1?\n")
    (data / "outcomes.csv").write_text("model,prompt_id,correct\nm0,p0,1\n")
    out = CliRunner().invoke(app, ["ingest", str(data), "--no-metadata"])
    assert out.exit_code == 0, out.output
    assert ("added 1 model, 1 prompt; 1 outcome stored from 1 source; 0 unchanged sources skipped; 0 repeated rows "
            "dropped; Hub metadata for 0 models") in out.output, out.output
