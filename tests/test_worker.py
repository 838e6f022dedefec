"""The scheduled worker and the one-pass-per-database lock, through the real CLI in subprocesses."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from indexer.errors import BusyError, StoreError
from indexer.worker import Worker

from helpers import hangup_as_from_a_terminal



#: seconds a test waits for a command's pass or exit, an upper bound no test means to assert: under load the tiny
#: source's pass (the encoder loaded) took over 90 s (a stress run: "no run became 'ok' in 90 s")
WAIT = 240


@pytest.fixture
def TASKSPACE(taskspace_script):
    """The installed script, checked to run this checkout (conftest.taskspace_script)."""
    return taskspace_script


def test_worker_runs_passes_on_schedule_and_stops_cleanly():
    calls = []

    def run_pass(stop):
        calls.append(time.monotonic())
        return "ok"

    w = Worker("1s", run_pass, max_passes=3)
    assert w.serve() == 0
    assert len(calls) == 3 and calls[2] - calls[0] >= 1.5


def test_worker_stop_event_interrupts_the_wait():
    w = Worker("1h", lambda stop: "ok")
    t = threading.Thread(target=w.serve)
    t.start()
    # the first pass over and the worker waiting for the next (before: a fixed 0.3 s, after which a thread not yet
    # scheduled on a loaded machine had run no pass, and serve() saw the stop at once: passes 0)
    deadline = time.monotonic() + 60
    while w.next_at is None and t.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert w.next_at is not None, "the worker did not reach its wait for the next pass"
    w.stop.set()
    t.join(timeout=5)
    assert not t.is_alive() and w.passes == 1


def test_a_signal_during_a_pass_exits_without_announcing_a_next_pass(caplog):
    """SIGTERM during a pass: the worker finished the pass ('stopped') and exited 0, but logged 'next pass at ...'
    first, as if it would run again. Now it exits after the pass without that line."""
    def run_pass(stop):
        stop.set()  # what the signal handler does while a pass runs
        return "stopped"

    w = Worker("1h", run_pass)
    with caplog.at_level("INFO", logger="indexer.worker"):
        assert w.serve() == 0
    assert w.passes == 1
    assert not any("next pass at" in r.getMessage() for r in caplog.records), caplog.text


def test_worker_waits_for_the_lock_or_exits():
    attempts = []

    def busy(stop):
        attempts.append(1)
        if len(attempts) < 3:
            raise BusyError("another taskspace process (pid 1) is indexing this database")
        return "ok"

    w = Worker("1h", busy, busy_retry_seconds=0.05, max_passes=1)
    assert w.serve() == 0 and len(attempts) == 3
    def always_busy(stop):
        raise BusyError("busy")

    assert Worker("1h", always_busy, wait_for_lock=False).serve() == BusyError.exit_code


def _scripted_pass(*outcomes):
    """A pass function for :class:`Worker` that gives ``outcomes`` in turn: each exception raised, anything else
    returned (the pass's result)."""
    left = iter(outcomes)

    def run(stop):
        r = next(left)
        if isinstance(r, Exception):
            raise r
        return r

    return run


def test_worker_survives_a_failing_pass():
    flaky = _scripted_pass(StoreError("database went away"), "ok")
    w = Worker("1s", flaky, max_passes=2)
    assert w.serve() == 0 and w.passes == 2


def test_bad_schedule_fails_before_any_work():
    from indexer.errors import ConfigError

    with pytest.raises(ConfigError):
        Worker("every now and then", lambda stop: None)


def test_cli_worker_sigterm_finishes_and_exits_zero(tmp_path, TASKSPACE):
    env = dict(os.environ)
    proc = subprocess.Popen([TASKSPACE, "-v", "worker", "--every", "1h"], stderr=subprocess.PIPE, text=True, env=env)
    lines = []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if "next pass at" in line:
            break
    assert any("next pass at" in ln for ln in lines), "".join(lines)[-3000:]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    rest = proc.stderr.read()
    # the signal comes while the worker waits for its next pass: no item to finish (c8cec59c; mid-pass: the SIGHUP test)
    assert "signal SIGTERM: no pass running: exiting" in rest, rest
    assert "worker stopped by SIGTERM after 1 pass: exit 0" in rest, rest


def test_cli_second_pass_is_refused_while_the_lock_is_held(tmp_path, TASKSPACE):
    from indexer.store.sql import open_store

    store = open_store()
    try:
        with store.lock("index"):
            res = subprocess.run([TASKSPACE, "index"], capture_output=True, text=True, env=dict(os.environ), timeout=120)
            assert res.returncode == BusyError.exit_code
            assert res.stderr.strip().splitlines()[-1].startswith("error:")
            res = subprocess.run([TASKSPACE, "worker", "--every", "1h", "--no-wait"], capture_output=True, text=True,
                                 env=dict(os.environ), timeout=120)
            assert res.returncode == BusyError.exit_code
    finally:
        store.close()


def test_cli_runs_lists_recent_runs(tmp_path, TASKSPACE):
    res = subprocess.run([TASKSPACE, "runs"], capture_output=True, text=True, env=dict(os.environ))
    assert res.returncode == 1 and "does not exist: nothing is indexed" in res.stderr, res  # a home never indexed
    subprocess.run([TASKSPACE, "index"], capture_output=True, text=True, env=dict(os.environ), check=True)
    res = subprocess.run([TASKSPACE, "runs"], capture_output=True, text=True, env=dict(os.environ))
    assert res.returncode == 0 and " ok " in res.stdout
    # each run says its kind: a reindex solves nothing and read as an index pass with nothing to do
    subprocess.run([TASKSPACE, "reindex"], capture_output=True, text=True, env=dict(os.environ), check=True)
    res = subprocess.run([TASKSPACE, "runs"], capture_output=True, text=True, env=dict(os.environ))
    lines = res.stdout.splitlines()
    assert lines[0].split()[:3] == ["id", "kind", "status"], res.stdout
    assert [ln.split()[1:3] for ln in lines[1:]] == [["reindex", "ok"], ["index", "ok"]], res.stdout
    # -n 0 said "no runs yet" with a run on record: it is a usage error
    res = subprocess.run([TASKSPACE, "runs", "-n", "0"], capture_output=True, text=True, env=dict(os.environ))
    assert res.returncode == 2 and "no runs yet" not in res.stdout and "'-n'" in res.stderr


def test_runs_shows_a_run_whose_process_was_killed_as_killed(TASKSPACE):
    """`taskspace runs` (and `--json`) on a run its process left "running" (kill -9, an OOM kill) shows it `killed`,
    with the error the next pass records for it, before that pass marks it; a run whose process still runs stays
    `running`. Before, it said "running" (`"status": "running"` in `--json`) until the next pass: with a worker's
    schedule, hours during which the operator (or a probe reading `runs --json`) was told a pass ran that was gone."""
    from helpers import dead_pid
    from sqlalchemy import update

    from indexer.store.sql import open_store
    from indexer.store.sql_models import Run

    store = open_store()
    try:
        gone, live = store.start_run("index"), store.start_run("reindex")
        with store.engine.begin() as conn:
            conn.execute(update(Run).where(Run.id == gone).values(pid=dead_pid()))
    finally:
        store.close()
    res = subprocess.run([TASKSPACE, "runs"], capture_output=True, text=True, env=dict(os.environ))
    lines = res.stdout.splitlines()
    assert res.returncode == 0 and [ln.split()[:3] for ln in lines[1:] if ln.split()[0].isdigit()] == [
        [str(live), "reindex", "running"], [str(gone), "index", "killed"]], res.stdout
    assert "the process ended without finishing this run (killed?)" in res.stdout, res.stdout
    res = subprocess.run([TASKSPACE, "runs", "--json"], capture_output=True, text=True, env=dict(os.environ))
    by_id = {r["id"]: r for r in json.loads(res.stdout)}
    assert by_id[gone]["status"] == "killed" and by_id[gone]["errors"] == 1, by_id[gone]
    assert by_id[live]["status"] == "running" and by_id[live]["errors"] == 0, by_id[live]



def test_runs_shows_a_killed_run_with_the_errors_the_next_pass_records_for_it(TASKSPACE):
    """A run left "running" that holds errors: `taskspace runs --json` shows it with the errors `mark_killed_runs` (the
    next pass) then records, its own kept and the killed note after them: one rule. Before, `runs` appended the note
    while `mark_killed_runs` replaced the errors with it, so the record lost what `runs` had shown (found reading the
    two)."""
    from helpers import dead_pid
    from sqlalchemy import update

    from indexer.store.sql import open_store
    from indexer.store.sql_derived import killed_error
    from indexer.store.sql_models import Run

    mine = {"file": "results.csv", "line": 3, "message": "a row rejected"}
    store = open_store()
    try:
        gone = store.start_run("index")
        with store.engine.begin() as conn:
            conn.execute(update(Run).where(Run.id == gone).values(pid=dead_pid(), errors=[mine]))
        res = subprocess.run([TASKSPACE, "runs", "--json"], capture_output=True, text=True, env=dict(os.environ))
        (shown,) = json.loads(res.stdout)
        assert shown["status"] == "killed" and shown["error_details"] == [mine, killed_error()], shown
        assert store.mark_killed_runs("index") == [gone]
        (recorded,) = store.list_runs()
        assert recorded.status == "killed" and recorded.errors == shown["error_details"], recorded
    finally:
        store.close()


def test_runs_json_gives_times_in_iso_8601_as_sources_stored_does(TASKSPACE):
    """`taskspace runs --json` writes `started_at` / `finished_at` in ISO 8601 (`2026-12-05T04:48:31.257500+00:00`),
    as `sources stored --json` writes `ingested_at`; before, Python's `str()`:
    "2026-12-05 04:48:31.257500+00:00", a space for the `T`, which strict ISO 8601 parsers refuse."""
    import datetime

    subprocess.run([TASKSPACE, "index"], capture_output=True, text=True, env=dict(os.environ), check=True)
    res = subprocess.run([TASKSPACE, "runs", "--json"], capture_output=True, text=True, env=dict(os.environ))
    assert res.returncode == 0, res.stderr
    (run,) = json.loads(res.stdout)
    for key in ("started_at", "finished_at"):
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00", run[key]), run
        assert datetime.datetime.fromisoformat(run[key]).tzinfo is not None


def test_a_worker_pass_without_configured_sources_says_where_sources_come_from(caplog):
    """A worker's pass on a home with no `sources.toml` (a TASKSPACE_HOME mistyped in a service's environment, a
    fresh home) logs, as `taskspace index` prints it, that no sources are configured in that file and how to add
    one; before, "pass finished: ok (run 1): ..." then "ok (run 2): nothing new" every pass, for as long as the worker
    ran, with no word that it read nothing."""
    import logging

    from indexer.config import get_settings
    from indexer.pipeline import Progress, run_index

    caplog.set_level(logging.INFO, logger="indexer.worker")
    w = Worker("1h", lambda stop: run_index(progress=Progress(False), stop=stop), max_passes=1)
    assert w.serve() == 0
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("pass finished"))
    assert f"no sources configured in {get_settings().sources_file}" in line, line
    assert "`taskspace sources add SPEC`" in line, line


def test_worker_survives_an_unexpected_exception(caplog):
    """A bug in a pass (an exception that is no IndexerError) is logged with its traceback, counts as a pass and is
    retried at the next scheduled time; the worker goes on (docs/WORKER.md)."""
    import logging

    caplog.set_level(logging.INFO, logger="indexer.worker")
    buggy = _scripted_pass(RuntimeError("a bug in the pass"), "ok")
    w = Worker("1s", buggy, max_passes=2)
    assert w.serve() == 0 and w.passes == 2
    failed = [r for r in caplog.records if "unexpected RuntimeError" in r.getMessage()]
    assert failed and failed[0].levelname == "ERROR" and failed[0].exc_info is not None
    assert "a bug in the pass" in caplog.text and "pass finished: ok" in caplog.text


def test_a_pass_whose_database_session_was_ended_is_run_again_soon(caplog):
    """A pass failing because the database ended its session (a PostgreSQL restart or failover mid-pass:
    ConnectionLostError, exit 3) is run again after the busy retry (30 s), up to LOST_RETRIES times in a row, and then
    at the next scheduled time; another store error waits for the schedule as before. Before, every failing pass waited
    for the next scheduled time: a `serve --worker-every 6h` whose first pass met a restart had no index for 6 hours."""
    import logging
    import threading

    from indexer.errors import ConnectionLostError, StoreError
    from indexer.worker import LOST_RETRIES

    caplog.set_level(logging.INFO, logger="indexer.worker")
    lost = ConnectionLostError("reading from the database failed: terminating connection due to administrator command")
    flaky = _scripted_pass(lost, "ok")
    w = Worker("6h", flaky, max_passes=2, busy_retry_seconds=0.05)
    t = threading.Thread(target=w.serve, daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive() and w.passes == 2, "the second pass waited for the schedule (6h)"
    assert "the database ended its session: retrying in 0.05 s" in caplog.text and "pass finished: ok" in caplog.text
    # at most LOST_RETRIES in a row, then the schedule; another store error: the schedule at once
    for first, runs_soon in ((lost, LOST_RETRIES + 1), (StoreError("no taskspace tables"), 1)):
        caplog.clear()
        calls = []

        def failing(stop, first=first):
            calls.append(1)
            raise first

        w = Worker("6h", failing, max_passes=10, busy_retry_seconds=0.05)
        t = threading.Thread(target=w.serve, daemon=True)
        t.start()
        deadline = time.monotonic() + 20
        while "next pass at" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
        w.stop.set()
        t.join(20)
        assert len(calls) == runs_soon, (first, len(calls))
        assert caplog.text.count("retrying in 0.05 s") == runs_soon - 1 and "retrying at the next scheduled time" in caplog.text


def test_a_pass_that_cannot_reach_the_database_is_run_again_soon(caplog):
    """The database gone for a moment as a pass starts (PostgreSQL restarting or failing over: the connection refused,
    "the database system is starting up", "not currently accepting connections"): the store's error says it could not
    be reached (DatabaseUnreachableError, exit 3) and the worker runs the pass again after the busy retry (30 s), as for
    a session the server ended, up to LOST_RETRIES times in a row. Before, it was a plain StoreError and the pass waited
    for the next scheduled time: a restart that outlasted the 30 s retry of a pass it had ended, or that was under way
    when a pass began, left a `serve --worker-every 6h` index 6 hours behind."""
    import logging
    import socket
    import threading

    from indexer.errors import DatabaseUnreachableError, StoreError
    from indexer.store.sql import Store
    from indexer.store.sql_migrate import connect_error

    with socket.socket() as s:  # a port nothing listens on: the connection is refused, as while a server restarts
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DatabaseUnreachableError, match="Connection refused|connection refused") as refused:
        Store(f"postgresql+psycopg://postgres@127.0.0.1:{port}/taskspace", upgrade=False).list_runs(limit=1)
    for words in ("the database system is starting up", "the database system is shutting down",
                  'database "x" is not currently accepting connections'):
        assert isinstance(connect_error("postgresql+psycopg://u@db/x", Exception(f"connection failed: {words}")),
                          DatabaseUnreachableError), words
    # the URL is wrong, not the server away: the schedule, as before
    assert not isinstance(connect_error("postgresql+psycopg://u@db/x", Exception('password authentication failed for user "u"')),
                          DatabaseUnreachableError)
    caplog.set_level(logging.INFO, logger="indexer.worker")
    w = Worker("6h", _scripted_pass(refused.value, refused.value, "ok"), max_passes=3, busy_retry_seconds=0.05)
    t = threading.Thread(target=w.serve, daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive() and w.passes == 3, "a pass waited for the schedule (6h)"
    assert caplog.text.count("the database could not be reached: retrying in 0.05 s") == 2, caplog.text
    assert "pass finished: ok" in caplog.text
    assert isinstance(refused.value, StoreError) and refused.value.exit_code == 3


def test_worker_lets_an_interrupt_through():
    def interrupted(stop):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Worker("1s", interrupted, max_passes=3).serve()


def test_a_pass_failing_with_a_bug_is_recorded_and_retried(tmp_path, monkeypatch):
    """The real pass (run_index) raising a RuntimeError: its run is recorded `failed` with the message, the worker
    runs the next pass at the next time, and that one completes."""
    from indexer.pipeline import Indexer, run_index
    from indexer.store.sql import open_store

    from helpers import outcomes, write_table
    import numpy as np

    write_table(tmp_path / "a", "worker-bug", outcomes(np.random.default_rng(0), ["m1"], 4), 4)
    from indexer import sourcelist
    from indexer.config import get_settings
    from indexer.sourcelist import SourceSpec

    sourcelist.add(get_settings().sources_file, [SourceSpec(str(tmp_path / "a"))])
    real, calls = Indexer._pass, []

    def pass_with_a_bug(self, *a, **k):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("boom in the pass")
        return real(self, *a, **k)

    monkeypatch.setattr(Indexer, "_pass", pass_with_a_bug)
    w = Worker("1s", lambda stop: run_index(stop=stop), max_passes=2)
    assert w.serve() == 0 and w.passes == 2
    with open_store() as store:
        runs = store.list_runs()
    assert [r.status for r in runs] == ["ok", "failed"]
    assert "boom in the pass" in runs[1].errors[0]["message"] and runs[0].counts["solved"] == 1


def _cli(TASKSPACE, *args, timeout=240):
    return subprocess.run([TASKSPACE, *args], capture_output=True, text=True, env=dict(os.environ), timeout=timeout)


def test_cli_worker_max_passes_and_cron(TASKSPACE):
    """--max-passes N runs N passes and exits 0 (recorded in `runs`); --cron runs a pass at once and then waits for
    the next cron match; a bad --cron or an interval given as --cron fails before any work (exit 2)."""
    import json

    took = time.monotonic()
    res = _cli(TASKSPACE, "-v", "worker", "--every", "1s", "--max-passes", "2")  # -v: the INFO lines
    took = time.monotonic() - took
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stderr.count("pass finished: ok") == 2 and "next pass at" in res.stderr
    # --cron: the first pass at once, the next at the next match ("*/5": a minute divisible by 5, second 0)
    from datetime import datetime, timedelta, timezone

    # not started just before a match: that pass would be due before the SIGTERM below, and run (a fourth run, and a
    # "next pass at" already past). Started within twice the time the worker above took of one (at least 30 s), it
    # waits for the match to pass first (before: a start in the last moments of a 5-minute step failed the test)
    now = datetime.now(timezone.utc)
    boundary = now.replace(minute=now.minute - now.minute % 5, second=0, microsecond=0) + timedelta(minutes=5)
    if (boundary - now).total_seconds() < min(150.0, max(30.0, 2 * took)):
        time.sleep((boundary - now).total_seconds() + 1)
    started = datetime.now(timezone.utc)
    proc = subprocess.Popen([TASKSPACE, "-v", "worker", "--cron", "*/5 * * * *"], stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ))
    try:
        lines = []
        while True:
            line = proc.stderr.readline()
            lines.append(line)
            if not line or "next pass at" in line:
                break
        assert "next pass at" in lines[-1], "".join(lines)[-3000:]
        read = datetime.now(timezone.utc)
        due = datetime.fromisoformat(lines[-1].split("next pass at ")[1].strip())
        # the next match after the moment the worker computed it, which lies between its start and the line's reading
        assert due.minute % 5 == 0 and due.second == 0 and started < due <= read + timedelta(minutes=5), (lines[-1], started, read)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    runs = json.loads(_cli(TASKSPACE, "runs", "--json").stdout)
    assert [r["status"] for r in runs] == ["ok", "ok", "ok"]
    for bad in (["--cron", "0 0 31 2 *"], ["--cron", "6h"], ["--cron", "61 * * * *"], ["--every", "1h", "--cron", "@daily"]):
        res = _cli(TASKSPACE, "worker", *bad, "--max-passes", "1")
        assert res.returncode == 2 and res.stderr.strip().splitlines()[-1].startswith("error:"), (bad, res.stderr)
    assert len(json.loads(_cli(TASKSPACE, "runs", "--json").stdout)) == 3  # none of those ran a pass


SLOW_PASS = """
import sys, time
from indexer import pipeline

def slow(self, *a, **k):
    print("pass started", file=sys.stderr, flush=True)
    while True:  # a long item: the first signal only asks it to stop at the next item
        time.sleep(0.05)

pipeline.Indexer._pass = slow
from indexer.cli import main
sys.argv = ["taskspace", "worker", "--every", "1h"]
main()
"""


def test_cli_worker_second_signal_exits_at_once(tmp_path, TASKSPACE):
    """SIGTERM during a long item: the worker keeps going (finishing the item); a second SIGTERM leaves at once
    with exit 130, and the run is recorded `interrupted`."""
    import json

    script = tmp_path / "slow_worker.py"
    script.write_text(SLOW_PASS)
    proc = subprocess.Popen([sys.executable, str(script)], stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line or "pass started" in line:
                break
        proc.send_signal(signal.SIGTERM)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=1.5)  # the first signal does not end a running item
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 130  # typer maps the KeyboardInterrupt to exit 130
        last = proc.stderr.read().strip().splitlines()[-1]
        assert last.startswith("interrupted:") and "run the command again" in last, last
    finally:
        if proc.poll() is None:
            proc.kill()
    runs = json.loads(_cli(TASKSPACE, "runs", "--json").stdout)
    assert runs[0]["status"] == "interrupted"


@pytest.mark.parametrize("value", ["0", "-1"])
def test_max_passes_below_one_is_a_usage_error(value):
    """`taskspace worker --max-passes 0` (or -1) is a usage error (exit 2, one line naming the option), before any
    pass; before, it ran one pass and exited 0."""
    res = subprocess.run([sys.executable, "-m", "indexer.cli", "worker", "--every", "1h", "--max-passes", value],
                         capture_output=True, text=True, env=dict(os.environ), timeout=120)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr[-2000:]
    assert "'--max-passes'" in lines[0] and "greater than or equal to 1" in lines[0], lines
    from indexer.store.sql import open_store

    with open_store() as store:
        assert store.list_runs() == []  # no pass ran


def _tiny_configured_source(tmp_path, tag: str) -> Path:
    """A source of 3 prompts x 2 models configured in this test's home (sources.toml); its prompts, unique to the call,
    are in no embedding cache, so a pass loads the encoder (seconds) after its run is recorded running. The home."""
    import uuid

    data = tmp_path / "data"
    data.mkdir()
    texts = [f"{tag} {uuid.uuid4().hex}: what is {i} + {i}?" for i in range(3)]
    (data / "prompts.csv").write_text("prompt_id,benchmark,text\n"
                                      + "".join(f"p{i},b,{t}\n" for i, t in enumerate(texts)))
    (data / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(f"m{j},p{i},{(i + j) % 2}\n"
                                                                           for i in range(3) for j in range(2)))
    home = Path(os.environ["TASKSPACE_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "sources.toml").write_text(f'[[source]]\nspec = "{data}"\nformat = "table"\n')
    return home


def _wait_for_newest_run(home: Path, status: str, seconds: float = WAIT) -> None:
    """Wait until the home's newest run has ``status`` (``running``: the pass holds the lock; ``ok``: it is over)."""
    from indexer.store.sql import open_store

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if (home / "taskspace.db").exists():
            with open_store() as store:
                runs = store.list_runs(limit=1)
            if runs and runs[0].status == status:
                return
        time.sleep(0.1)
    raise AssertionError(f"no run became {status!r} in {seconds} s")


def _index_stopped_mid_pass(tmp_path, TASKSPACE, sig: int, tag: str):
    """`taskspace index` over a tiny configured source, sent ``sig`` once its run is recorded running (into the
    encoder's load): (its exit code, its stderr, the run recorded)."""
    from indexer.store.sql import open_store

    home = _tiny_configured_source(tmp_path, tag)
    proc = subprocess.Popen([TASKSPACE, "index"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ), preexec_fn=hangup_as_from_a_terminal)
    try:
        _wait_for_newest_run(home, "running")  # the pass holds the lock
        time.sleep(0.3)  # into the encoder's load
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=WAIT)
    finally:
        proc.kill()
    with open_store() as store:
        (run,) = store.list_runs(limit=1)
    return proc.returncode, err, run


def test_sigterm_to_index_records_the_run_interrupted_and_exits_143(tmp_path, TASKSPACE):
    """SIGTERM to `taskspace index` (`timeout`, a service manager) stops it as Ctrl-C does: its run is recorded
    `interrupted` and it exits 143 with one line saying what was kept; before, the process died at once, exit 143
    from the signal, and the run stayed `running` in `taskspace runs` until the next pass marked it `killed`."""
    code, err, run = _index_stopped_mid_pass(tmp_path, TASKSPACE, signal.SIGTERM, "sigterm")
    assert code == 143, err[-2000:]
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("terminated: what was committed is kept")
    assert run.status == "interrupted", run


def test_a_pass_failing_on_a_broken_sources_file_is_recorded_failed(tmp_path):
    """A worker's pass that fails because `sources.toml` was broken by hand (not TOML): its run is recorded `failed`
    with the message naming the file, as any failed pass (docs/WORKER.md), and the next pass after the fix is `ok`;
    before, the file was read before the run started: only a log line, and `taskspace runs` showed the last `ok`."""
    from indexer.config import get_settings
    from indexer.errors import ConfigError
    from indexer.pipeline import run_index
    from indexer.store.sql import open_store

    cfg = get_settings().sources_file
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text("garbage = = \n")
    w = Worker("1h", lambda stop: run_index(stop=stop), max_passes=1)
    assert w.serve() == ConfigError.exit_code and w.passes == 1  # the last pass's code, as `taskspace index` exits
    with pytest.raises(ConfigError, match="not valid TOML"):
        run_index()
    with open_store() as store:
        runs = store.list_runs()
    assert [r.status for r in runs] == ["failed", "failed"]
    assert all(str(cfg) in r.errors[0]["message"] and "not valid TOML" in r.errors[0]["message"] for r in runs)
    cfg.write_text("")
    assert run_index().status == "ok"


def test_the_worker_logs_the_errors_of_a_pass(caplog):
    """A worker's pass with item errors (a bad row, a failing source): each is logged as `taskspace index` prints it
    (`error: file:line: message`), at most 20 and a count of the rest; before, the log said only "pass finished:
    partial", and which file failed was in the run's record, which no command shows (`runs` counts the errors)."""
    import logging

    from indexer.pipeline import RunReport

    errors = [{"file": "/d/outcomes.csv", "line": i + 2, "message": f"bad value {i}"} for i in range(24)]
    errors.append({"file": None, "line": None, "message": "hub:org/x: 503 after 3 tries"})
    report = RunReport(run_id=7, status="partial", errors=errors)
    with caplog.at_level(logging.INFO, logger="indexer.worker"):
        assert Worker("1h", lambda stop: report, max_passes=1).serve() == 1  # a partial last pass, as `index` exits
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert lines[0] == "error: /d/outcomes.csv:2: bad value 0" and len(lines) == 21
    assert lines[-1] == "... and 5 more errors in run 7"
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="indexer.worker"):
        Worker("1h", lambda stop: RunReport(run_id=8, status="partial", errors=errors[-1:]), max_passes=1).serve()
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == ["error: hub:org/x: 503 after 3 tries"]


def test_sigterm_to_demo_removes_its_throwaway_home(tmp_path, TASKSPACE):
    """SIGTERM to `taskspace demo` while it indexes the sample: its temporary home (SQLite file, embedded index) is
    removed, as when it finishes, and it exits 143; before, the process died at once and left the folder behind."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen([TASKSPACE, "demo"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, TMPDIR=str(tmp)))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(tmp.glob("taskspace-demo-*/demo.db")):
            time.sleep(0.05)
        assert list(tmp.glob("taskspace-demo-*")), "the demo did not start"
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=WAIT)
    finally:
        proc.kill()
    assert proc.returncode == 143, err[-2000:]
    assert list(tmp.glob("taskspace-demo-*")) == [] and "Traceback" not in err



def test_a_sigterm_whose_interrupt_lands_in_a_finalizer_is_not_lost():
    """SIGTERM to `taskspace demo` / `index` / `reindex` whose handler happens to run inside a finalizer (a ``__del__``
    or a weakref callback the garbage collector runs: SQLAlchemy's, every few transactions): Python prints "Exception
    ignored in ..." with a traceback and drops the interrupt there, so the command went on as if never signalled (the
    demo under load: exit 0 and a traceback, about 1 SIGTERM in 40 at random moments of its pass). Now it is delivered
    again, outside the finalizer, and nothing is printed for the dropped one."""
    code = textwrap.dedent("""
        import os, signal, time
        from indexer.cli_index import Terminated, interrupt_on_sigterm

        interrupt_on_sigterm()

        class Finalized:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGTERM)  # the handler raises here, in the finalizer

        Finalized()  # dropped at once: its finalizer runs now
        try:
            time.sleep(20)
            print("lost")
        except Terminated:
            print("terminated")
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.stdout.strip() == "terminated" and res.returncode == 0, (res.stdout, res.stderr[-2000:])
    assert "Exception ignored" not in res.stderr and "Traceback" not in res.stderr, res.stderr[-2000:]


def test_after_sigterm_a_finalizers_error_prints_no_traceback():
    """After SIGTERM to `taskspace demo` / `index` (its interrupt raised wherever the process was, library code
    included), a finalizer of state the interrupt left half-updated that fails (SQLAlchemy's event registry: "TypeError:
    weak object has gone away", 1 in about 50 SIGTERMs to the demo under load) is logged at DEBUG: the command ends
    with its one line, not "Exception ignored in ..." and a traceback. Before the signal such an error prints as
    always."""
    code = textwrap.dedent("""
        import os, signal, sys
        from indexer.cli_index import Terminated, interrupt_on_sigterm

        interrupt_on_sigterm()

        class Failing:
            def __init__(self, name):
                self.name = name

            def __del__(self):
                raise TypeError(f"{self.name}: weak object has gone away")

        Failing("before the signal")
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except Terminated:
            print("terminated")
        Failing("after the signal")
        sys.stderr.flush()
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.stdout.strip() == "terminated" and res.returncode == 0, (res.stdout, res.stderr[-2000:])
    assert "before the signal: weak object" in res.stderr and res.stderr.count("Traceback") == 1, res.stderr[-2000:]
    assert "after the signal" not in res.stderr, res.stderr[-2000:]


def test_a_command_whose_sigterm_was_swallowed_still_exits_143():
    """SIGTERM to `taskspace demo` / `index` / `reindex` whose interrupt library code swallowed (an ``except
    BaseException`` that does not raise again), so the command's work went on and returned: it still exits 143 and says
    it was terminated. Before, it exited 0 as if never signalled (`taskspace demo` under load, now and then: its pass
    finished, 30 s after the SIGTERM)."""
    code = textwrap.dedent("""
        import os, signal, sys
        from indexer import cli
        from indexer.cli_index import interrupt_on_sigterm

        @cli.app.command("swallowing")
        def swallowing():
            interrupt_on_sigterm()  # as demo, index and reindex do
            try:
                os.kill(os.getpid(), signal.SIGTERM)
            except BaseException:  # library code that swallows every exception, the interrupt included
                pass
            print("work done")

        sys.argv = ["taskspace", "swallowing"]
        cli.main()
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.stdout.strip() == "work done" and res.returncode == 143, (res.returncode, res.stderr[-2000:])
    assert res.stderr.startswith("terminated:"), res.stderr[-2000:]

def test_a_worker_started_with_sighup_ignored_outlives_its_terminal(tmp_path, TASKSPACE):
    """`nohup taskspace worker ... &` (SIGHUP ignored when it starts, as nohup and service managers set it): the
    hangup of its closed terminal is still ignored and the worker keeps its schedule; SIGTERM stops it. Before, its
    SIGHUP handler replaced the ignored disposition, so closing the terminal stopped a worker started with nohup."""
    home = _tiny_configured_source(tmp_path, "nohup")
    proc = subprocess.Popen([TASKSPACE, "worker", "--every", "1h"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ),
                            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))  # what nohup does
    try:
        _wait_for_newest_run(home, "ok")  # the first pass over: the worker sleeps until the next
        proc.send_signal(signal.SIGHUP)
        time.sleep(1.5)
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=WAIT)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "SIGHUP" not in err and "SIGTERM" in err, err[-2000:]


def test_sighup_to_the_worker_finishes_the_pass_and_records_it_stopped(tmp_path, TASKSPACE):
    """SIGHUP to `taskspace worker` (its terminal or ssh session closed, `kill -HUP`): the worker stops as for SIGTERM,
    its pass recorded `stopped`, exit 0; before, SIGHUP's default action ended the process at once (exit 129, not a
    log line) and its run stayed `running` in `taskspace runs` until a later pass marked it `killed`."""
    from indexer.store.sql import open_store

    home = _tiny_configured_source(tmp_path, "sighup")
    proc = subprocess.Popen([TASKSPACE, "worker", "--every", "1h"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ), preexec_fn=hangup_as_from_a_terminal)
    try:
        _wait_for_newest_run(home, "running")  # the pass holds the lock
        proc.send_signal(signal.SIGHUP)
        out, err = proc.communicate(timeout=WAIT)
    finally:
        proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert "signal SIGHUP: finishing the current item" in err and "Traceback" not in err, err[-2000:]
    with open_store() as store:
        (run,) = store.list_runs(limit=1)
    assert run.status == "stopped", run


def test_the_worker_says_what_each_pass_did_and_when_it_found_nothing_new(tmp_path, caplog):
    """Each pass's line in the worker's log says what it did (`1 source ingested, ... 2 models solved`) or that it
    found nothing new (`nothing new: 1 source unchanged`), with its run id; before, every pass logged only
    "pass finished: ok", the same for a pass that indexed new results and one that changed nothing."""
    from indexer.pipeline import run_index

    from helpers import outcomes, write_table
    import numpy as np

    write_table(tmp_path / "a", "worker-summary", outcomes(np.random.default_rng(0), ["m1", "m2"], 4), 4)
    from indexer import sourcelist
    from indexer.config import get_settings
    from indexer.sourcelist import SourceSpec

    sourcelist.add(get_settings().sources_file, [SourceSpec(str(tmp_path / "a"))])
    w = Worker("1s", lambda stop: run_index(stop=stop), max_passes=2)
    with caplog.at_level("INFO", logger="indexer.worker"):
        assert w.serve() == 0
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("pass finished")]
    assert len(lines) == 2, caplog.text
    assert lines[0].startswith("pass finished: ok (run 1): 1 source ingested") and "2 models solved" in lines[0], lines
    assert lines[1] == "pass finished: ok (run 2): nothing new: 1 source unchanged", lines


def test_a_worker_waiting_for_the_lock_says_so_once(caplog):
    """A worker that meets another process's pass (a second worker, `taskspace index` by hand) logs the holder once,
    then waits without repeating it, and says when it got the lock; before, the same warning (naming the holder and
    "trying again in 30 s") was logged every 30 s for as long as the other pass ran: 120 lines for an hour's pass."""
    attempts = []

    def busy(stop):
        attempts.append(1)
        if len(attempts) < 5:
            raise BusyError("another taskspace process holds the 'index' lock (pid 1 on host)")
        return "ok"

    w = Worker("1h", busy, busy_retry_seconds=0.01, max_passes=1)
    with caplog.at_level("DEBUG", logger="indexer.worker"):
        assert w.serve() == 0 and len(attempts) == 5
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "pid 1 on host" in warnings[0] and "waiting" in warnings[0], warnings
    infos = [r.getMessage() for r in caplog.records if r.levelname == "INFO"]
    assert any(m.startswith("the lock is free") for m in infos), infos


def test_max_passes_exits_with_the_last_passs_code_as_index_does(tmp_path, TASKSPACE):
    """`taskspace worker --max-passes N` (a one-shot in CI or a cron job) exits as `taskspace index` does for its last
    pass: 1 when it had item errors (`partial` in `taskspace runs`), 0 when it was `ok`; before, it exited 0 whatever
    the passes recorded, so a job running it could not tell a failing source from a clean pass."""
    import json

    home = Path(os.environ["TASKSPACE_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    gone = tmp_path / "moved-away"
    (home / "sources.toml").write_text(f'[[source]]\nspec = "{gone}"\n')  # configured, then its folder went away
    res = _cli(TASKSPACE, "worker", "--every", "1s", "--max-passes", "1")
    runs = json.loads(_cli(TASKSPACE, "runs", "--json").stdout)
    assert [r["status"] for r in runs] == ["partial"], runs
    assert res.returncode == 1, res.stderr[-2000:]
    assert f"error: {gone}: no such file or folder" in res.stderr, res.stderr[-2000:]
    (home / "sources.toml").write_text("")
    res = _cli(TASKSPACE, "worker", "--every", "1s", "--max-passes", "1")
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(_cli(TASKSPACE, "runs", "--json").stdout)[0]["status"] == "ok"


def test_max_passes_whose_last_pass_fails_with_a_bug_exits_1():
    """`--max-passes N` whose last pass raises an unexpected exception (a bug): the worker exits 1, as `taskspace index`
    does on one; before, the code of the pass before it (0 after a clean one, 0 for a first pass), so a one-shot
    reported a pass that crashed as clean (the exit code was set only for passes that returned or failed as
    IndexerError)."""
    buggy = _scripted_pass("ok", RuntimeError("a bug in the pass"))
    w = Worker("1s", buggy, max_passes=2)
    assert w.serve() == 1 and w.passes == 2  # after a clean pass
    first = _scripted_pass(RuntimeError("a bug in the first pass"))
    assert Worker("1s", first, max_passes=1).serve() == 1  # the first pass


def test_the_last_pass_of_max_passes_that_fails_does_not_promise_a_retry(caplog):
    """`--max-passes N` whose last pass fails as a whole (the database lost): the worker logs the failure and exits
    with its code, without "(retrying at the next scheduled time)"; before, the last line of such a one-shot promised
    a retry that never came. A failing pass with passes to come still says it is retried."""
    failing = _scripted_pass(StoreError("database went away"), StoreError("database went away"))
    with caplog.at_level("INFO", logger="indexer.worker"):
        code = Worker("1s", failing, max_passes=2).serve()
    failures = [r.getMessage() for r in caplog.records if r.getMessage().startswith("pass failed")]
    assert len(failures) == 2 and code == StoreError.exit_code, caplog.text
    assert failures[0].endswith("(retrying at the next scheduled time)"), failures
    assert "retrying" not in failures[1], failures


def test_a_database_without_the_taskspace_tables_ends_the_worker(tmp_path, caplog, monkeypatch):
    """A worker on a database without the taskspace tables (a PostgreSQL database never upgraded), or at a schema
    another taskspace made, or a URL that names no database: no later pass can succeed until the operator acts, so
    the first pass logs why and what to do, and the worker exits 2 (a configuration error), as a service manager
    shows. Before, it failed every pass with "run `taskspace db upgrade` first" and ran on forever. A bad
    sources.toml, which each pass reads afresh, is still retried at the next pass."""
    import sqlite3

    from indexer.errors import ConfigError
    from indexer.pipeline import run_index

    sqlite3.connect(tmp_path / "empty.db").close()  # a database without the taskspace tables, as an un-upgraded one
    monkeypatch.setenv("TASKSPACE_DATABASE_URL", f"sqlite:///{tmp_path / 'empty.db'}")
    with caplog.at_level("INFO", logger="indexer.worker"):
        w = Worker("1s", lambda stop: run_index(stop=stop), max_passes=3)
        code = w.serve()
    failures = [r.getMessage() for r in caplog.records if r.getMessage().startswith("pass failed")]
    assert code == 2 and w.passes == 1 and len(failures) == 1, caplog.text
    assert "db upgrade" in failures[0] and "exiting" in failures[0] and "retrying" not in failures[0], failures
    monkeypatch.setenv("TASKSPACE_DATABASE_URL", "nosuchdriver://x")
    caplog.clear()
    with caplog.at_level("INFO", logger="indexer.worker"):
        assert Worker("1s", lambda stop: run_index(stop=stop), max_passes=3).serve() == 2
    monkeypatch.delenv("TASKSPACE_DATABASE_URL")
    w = Worker("1s", _scripted_pass(ConfigError("sources.toml: not valid TOML"), "ok"), max_passes=2)
    assert w.serve() == 0 and w.passes == 2  # fixed between passes: the next one runs


def test_the_worker_says_which_runs_it_marked_killed(caplog):
    """A worker restarted after it was killed mid-pass (kill -9, an OOM kill): its first pass's line names the run the
    killed process left `running` and that it is now marked `killed`; before, the line said only "pass finished: ok",
    and the mark was seen only in `taskspace runs` or `--json` counts."""
    from indexer.pipeline import run_index
    from indexer.store.sql import open_store

    with open_store() as store:
        left = store.start_run("index")  # the run of a process killed before it finished (its lock gone with it)
    w = Worker("1h", lambda stop: run_index(stop=stop), max_passes=1)
    with caplog.at_level("INFO", logger="indexer.worker"):
        assert w.serve() == 0
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("pass finished")]
    assert f"run {left} left running by a killed process marked killed" in line, line
    with open_store() as store:
        assert store.get_run(left).status == "killed"


def test_sighup_to_index_records_the_run_interrupted_and_exits_129(tmp_path, TASKSPACE):
    """SIGHUP to `taskspace index` (its terminal or ssh session closed) stops it as SIGTERM does: its run is recorded
    `interrupted` ("run aborted: terminated (SIGHUP)"), one line says what was kept, exit 129 (128 + SIGHUP); before,
    SIGHUP's default action ended it at once and its run stayed `running` until the next pass marked it `killed`."""
    code, err, run = _index_stopped_mid_pass(tmp_path, TASKSPACE, signal.SIGHUP, "sighup index")
    assert code == 129, err[-2000:]
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("terminated: what was committed is kept")
    assert run.status == "interrupted" and "terminated (SIGHUP)" in run.errors[0]["message"], run


def test_a_retry_after_a_lost_database_is_never_later_than_the_next_scheduled_pass(caplog):
    """A pass that cannot reach PostgreSQL (a real refused connection) is run again after the busy retry (30 s), or at
    the next scheduled time when that comes first: `serve --worker-every 2s` tries again in 2 s, not 30 s. Before, the
    retry waited 30 s whatever the schedule, so a retry "soon" came later than the pass the schedule would have run.
    Another process holding the lock (BusyError) is tried again as soon, for the same reason."""
    import logging
    import socket

    from indexer.errors import DatabaseUnreachableError
    from indexer.store.sql import Store

    with socket.socket() as s:  # a port nothing listens on: the connection is refused, as while a server restarts
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DatabaseUnreachableError) as refused:
        Store(f"postgresql+psycopg://postgres@127.0.0.1:{port}/taskspace", upgrade=False).list_runs(limit=1)
    caplog.set_level(logging.INFO, logger="indexer.worker")
    for first in (refused.value, BusyError("another taskspace process (pid 1) is indexing this database")):
        caplog.clear()
        calls = []

        def run(stop, first=first):
            calls.append(time.monotonic())
            if len(calls) == 1:
                raise first
            return "ok"

        w = Worker("2s", run, max_passes=2 if isinstance(first, DatabaseUnreachableError) else 1)  # 30 s retry
        t = threading.Thread(target=w.serve, daemon=True)
        t.start()
        t.join(12)
        w.stop.set()
        assert not t.is_alive() and len(calls) == 2, (first, "the retry waited longer than the 2 s schedule")
        assert 1.5 <= calls[1] - calls[0] < 5, calls
    assert "retrying in 2 s (the next scheduled pass)" in caplog.text or "trying again every 2 s" in caplog.text, caplog.text


def test_a_quarantine_by_taskspace_worker_names_the_pass_its_operator_runs_by_hand(tmp_path, TASKSPACE):
    """A source a `taskspace worker` pass quarantines (a copy cut mid-write): its log line and its run record
    (`taskspace runs`, text and --json) say to store it anyway with `taskspace index --accept-partial`, a pass by hand
    beside the worker (which has no such option), and following it works. Before, they said `accept_partial=True
    (ingest() or Indexer.run())`, the library's words, to the operator who started the worker from a shell; a Python
    caller running the pass itself keeps them (test_quarantine.py)."""
    import json

    from helpers import write_table

    home = Path(os.environ["TASKSPACE_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    src = tmp_path / "src"
    write_table(src, "alpha", {f"org/m{i}": [(i + j) % 2 for j in range(12)] for i in range(3)}, 12)
    (home / "sources.toml").write_text(f'[[source]]\nspec = "{src}"\nformat = "table"\n')
    assert _cli(TASKSPACE, "worker", "--every", "1h", "--max-passes", "1").returncode == 0
    lines = (src / "outcomes.csv").read_text().splitlines(keepends=True)
    (src / "outcomes.csv").write_text("".join(lines[:10]) + lines[10][:5])  # 27 of 36 rows cut, the last one torn
    res = _cli(TASKSPACE, "worker", "--every", "1h", "--max-passes", "1")
    advice = "store it anyway with `taskspace index --accept-partial` (one pass by hand, beside this worker"
    assert res.returncode == 1 and advice in res.stderr, res.stderr[-2000:]
    (run, _) = json.loads(_cli(TASKSPACE, "runs", "--json").stdout)
    (why,) = [e["message"] for e in run["error_details"] if "quarantined" in e["message"]]
    assert advice in why and "accept_partial=" not in why and "Indexer.run()" not in why, why
    assert advice in _cli(TASKSPACE, "runs").stdout
    res = _cli(TASKSPACE, "index", "--accept-partial", "--json")  # the advice: the new revision stored
    assert json.loads(res.stdout)["counts"]["sources"] == 1, res.stdout[-2000:]
    res = _cli(TASKSPACE, "worker", "--every", "1h", "--max-passes", "1")  # and the worker's next pass leaves it be
    assert res.returncode == 0 and "quarantined" not in res.stderr, res.stderr[-2000:]


def test_a_pass_failing_on_a_multi_line_message_is_one_line_in_the_log_and_in_runs(tmp_path, caplog, monkeypatch):
    """A worker's pass that fails on a message quoting another library's over two lines (an encoder named by a Hub id,
    offline and not cached: transformers' "We couldn't connect ...\\nCheck your internet connection ..."): the
    worker's log line and the run's record (`taskspace runs`) say it on one line, as the CLI prints an error; before,
    the second line stood at the margin of the log (no time, no level) and of `taskspace runs`'s table."""
    import logging

    from indexer.errors import EncoderError, item_error_line
    from indexer.pipeline import run_index
    from indexer.store.sql import open_store

    _tiny_configured_source(tmp_path, "multi-line")  # new prompts: the pass loads the encoder
    monkeypatch.setenv("TASKSPACE_ENCODER", "nobody/no-such-encoder-of-taskspace")
    with caplog.at_level(logging.INFO, logger="indexer.worker"):
        assert Worker("1h", lambda stop: run_index(stop=stop), max_passes=1).serve() == EncoderError.exit_code
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("pass failed")]
    assert "no-such-encoder-of-taskspace" in line and "\n" not in line, line
    with open_store() as store:
        (run,) = store.list_runs(limit=1)
    message = run.errors[0]["message"]
    assert message.startswith("run aborted: cannot load encoder") and "\n" not in message, message
    assert "\n" not in item_error_line({"file": "/d/x.csv", "line": 3, "message": "bad\n  value"})
    # the same pass by `taskspace serve`'s worker: /readyz's last failed pass
    from indexer.serve import Service
    from indexer.store.vectors import VectorStore

    with open_store() as store, VectorStore.from_settings() as vectors:
        svc = Service(worker_schedule="6h", store=store, vectors=vectors, encoder=object())
        with pytest.raises(EncoderError):
            svc.run_pass(threading.Event())
    error = svc.passes[-1]["error"]
    assert "no-such-encoder-of-taskspace" in error and "\n" not in error, error


def test_a_worker_waiting_for_another_pass_does_not_tell_its_operator_to_retry(tmp_path, caplog):
    """A worker whose pass meets another process's (the SQL lock `index` held): its log line names the holder and that
    it waits, trying again by itself; before, it passed on the advice meant for a command, "wait for it to finish ...
    or stop it, then retry; waiting: trying again every 2 s", as if its operator had to retry. `taskspace index`
    meeting it keeps that advice (test_cli_second_pass_is_refused_while_the_lock_is_held)."""
    import logging

    from indexer.pipeline import run_index
    from indexer.store.sql import open_store

    Path(os.environ["TASKSPACE_HOME"]).mkdir(parents=True, exist_ok=True)
    with open_store() as other:
        held = other.lock("index")
        held.__enter__()
        try:
            with pytest.raises(BusyError, match="then retry"):
                run_index()  # a command meeting it: told to retry
            w = Worker("1h", lambda stop: run_index(stop=stop), busy_retry_seconds=0.05, max_passes=1)
            caplog.set_level(logging.INFO, logger="indexer.worker")
            t = threading.Thread(target=w.serve)
            t.start()
            deadline = time.monotonic() + 30
            while "waiting" not in caplog.text and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            held.__exit__(None, None, None)
        t.join(240)  # its pass (the encoder loaded for the space) on a loaded machine
    (line,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and r.name == "indexer.worker"]
    assert "holds the 'index' lock" in line and "waiting: trying again every" in line, line
    assert "retry;" not in line and "then retry" not in line, line
    assert w.passes == 1 and any(r.getMessage().startswith("the lock is free") for r in caplog.records), caplog.text


BUGGY_READER_WORKER = """
import sys
from indexer import sources

def buggy(*a, **k):
    raise RuntimeError("a bug in a reader")
    yield

sources.read_sources = buggy
from indexer.cli import main
sys.argv = ["taskspace", *sys.argv[1:]]
main()
"""


def test_a_reader_bug_in_a_worker_pass_says_the_traceback_is_in_the_workers_log(tmp_path, TASKSPACE):
    """A reader failing unexpectedly (a bug) in a `taskspace worker` pass: its error line (log, `taskspace runs`) says
    the traceback is in the worker's log, where it is (a service logs at INFO), not "run with -v", which adds nothing
    to a worker; `taskspace index` still says -v, which its WARNING log needs. Before, the worker said -v too."""
    import json

    _tiny_configured_source(tmp_path, "reader-bug")
    script = tmp_path / "buggy_worker.py"
    script.write_text(BUGGY_READER_WORKER)
    res = subprocess.run([sys.executable, str(script), "worker", "--every", "1h", "--max-passes", "1"],
                         capture_output=True, text=True, env=dict(os.environ), timeout=240)
    assert res.returncode == 1, res.stderr[-2000:]
    said = "its traceback is in this worker's log, just before this line"
    assert said in res.stderr and "with -v" not in res.stderr, res.stderr[-2000:]
    assert res.stderr.index("Traceback") < res.stderr.index(said) and "RuntimeError: a bug in a reader" in res.stderr
    (run,) = json.loads(_cli(TASKSPACE, "runs", "--json").stdout)
    assert said in run["error_details"][0]["message"], run
    res = subprocess.run([sys.executable, str(script), "index"], capture_output=True, text=True, env=dict(os.environ),
                         timeout=240)
    assert res.returncode == 1 and "run with -v for the traceback" in res.stderr, res.stderr[-2000:]


@pytest.mark.parametrize("holder", ["taskspace serve", "ipykernel_launcher.py"])
def test_a_worker_beside_a_server_on_the_embedded_index_says_it_waits_for_the_server_to_stop(tmp_path, caplog,
                                                                                             monkeypatch, holder):
    """`taskspace worker` started beside `taskspace serve` on one home's embedded index (or beside a notebook kernel
    that searched through the library): the holder keeps the index for as long as it runs, not for a pass, so the
    worker's log says what to do (let the server index with `serve --worker-every`, a Qdrant server; the kernel's
    `close_cached()`) and, once it ran, that it waited for that process, not for a pass. Before, "waiting: trying
    again every 30 s until it is free" alone, so a worker beside a server waited for days without a word of why, and
    when the server stopped, "the lock is free (waited N s for the other pass)"."""
    import logging

    from indexer.store.vectors import _busy_error

    monkeypatch.setattr(sys, "argv", ["/usr/bin/taskspace", "worker", "--every", "6h"])
    attempts = []

    def busy(stop):
        attempts.append(1)
        if len(attempts) < 3:
            raise _busy_error(tmp_path / "qdrant", f"4242 {holder}")
        return "ok"

    w = Worker("6h", busy, busy_retry_seconds=0.01, max_passes=1)
    with caplog.at_level(logging.INFO, logger="indexer.worker"):
        assert w.serve() == 0 and len(attempts) == 3
    (line,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert f"(pid 4242: {holder})" in line and "waiting: trying again every" in line, line
    if holder == "taskspace serve":
        assert "as long as it runs" in line and "`taskspace serve --worker-every INTERVAL`" in line, line
        assert "TASKSPACE_QDRANT_URL" in line, line
    else:
        assert "indexer.query.close_cached()" in line, line
    (free,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("the lock is free")]
    assert "waited 0 s for the process that held it" in free and "the other pass" not in free, free


def test_a_pass_over_a_grown_source_says_the_outcomes_stored_not_added(tmp_path, caplog, capsys):
    """A source whose file grew by a few rows between two worker passes is stored again whole (one result set per
    source): the pass's line (and `taskspace index`'s summary) says how many outcome cells it stored, not that so many
    were added. Before, a table of 750 outcomes grown by 125 logged "875 outcome(s) added", then "1000" for 125 more,
    as if the index had grown by each revision's whole size."""
    import logging

    from indexer.pipeline import run_index

    _tiny_configured_source(tmp_path, "grown")
    with caplog.at_level(logging.INFO, logger="indexer.worker"):
        w = Worker("1h", lambda stop: run_index(stop=stop), max_passes=1)
        assert w.serve() == 0
        with open(tmp_path / "data" / "outcomes.csv", "a") as f:
            f.write("m2,p0,1\nm2,p1,0\nm2,p2,1\n")
        w = Worker("1h", lambda stop: run_index(stop=stop), max_passes=1)
        assert w.serve() == 0
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("pass finished")]
    assert len(lines) == 2 and all("outcomes added" not in m for m in lines), lines
    assert "6 outcomes stored" in lines[0] and "9 outcomes stored" in lines[1], lines
    from indexer.cli_index import _print_run

    with open(tmp_path / "data" / "outcomes.csv", "a") as f:
        f.write("m3,p0,0\n")
    _print_run(run_index())
    out = capsys.readouterr().out
    assert re.search(r"outcomes stored +10\n", out) and "outcomes added" not in out, out


def test_the_wait_for_the_lock_is_counted_until_the_pass_starts_not_until_it_ends(caplog):
    """"the lock is free (waited N s ...)" counts the time the worker waited, up to the start of its own pass; before,
    up to the end of it, so a worker that waited 2 s for another worker's pass, then ran a 5 s pass of its own, said it
    had waited 7 s (an hour's pass: an hour more than it waited)."""
    import logging

    attempts = []

    def busy_then_slow(stop):
        attempts.append(1)
        if len(attempts) == 1:
            raise BusyError("another taskspace process holds the 'index' lock (pid 1 on host)")
        time.sleep(1.6)  # this worker's own pass
        return "ok"

    w = Worker("1h", busy_then_slow, busy_retry_seconds=0.01, max_passes=1)
    with caplog.at_level(logging.INFO, logger="indexer.worker"):
        assert w.serve() == 0
    (free,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("the lock is free")]
    assert free.startswith("the lock is free (waited 0 s for the other pass)"), free


def test_runs_does_not_give_a_killed_run_the_time_until_the_next_pass_as_its_duration(TASKSPACE):
    """A run its process left "running" (kill -9, an OOM kill, a lost machine), marked killed by the next pass: `runs`
    shows its `took` as unknown ("-"), as before it was marked; before, the time from its start until the next pass
    marked it: a worker killed on Friday and started again on Monday showed a pass that "took 259200.0s"."""
    from datetime import timedelta

    from helpers import dead_pid
    from sqlalchemy import select, update

    from indexer.store.sql import open_store
    from indexer.store.sql_models import Run

    store = open_store()
    try:
        gone = store.start_run("index")
        with store.engine.begin() as conn:
            started = conn.execute(select(Run.started_at).where(Run.id == gone)).scalar_one()
            conn.execute(update(Run).where(Run.id == gone).values(pid=dead_pid(),
                                                                 started_at=started - timedelta(days=3)))
        assert store.mark_killed_runs("index") == [gone]
    finally:
        store.close()
    res = subprocess.run([TASKSPACE, "runs"], capture_output=True, text=True, env=dict(os.environ))
    (row,) = [ln.split() for ln in res.stdout.splitlines() if ln.split()[:1] == [str(gone)]]
    assert row[2] == "killed" and row[5] == "-", res.stdout


def test_a_pass_says_which_stored_results_came_from_a_folder_now_gone_under_a_configured_source(tmp_path, caplog):
    """A configured folder of several models' lm-eval runs, one model's folder deleted between passes (its results
    judged bad, or moved away): the pass warns, naming the stored source whose folder is gone, that its results stay in
    the index and that `taskspace sources drop LOCATION` removes them. Before, every later pass said "nothing new: 1
    source(s) unchanged" and the index went on serving the deleted model's results without a word."""
    import logging
    import shutil

    from indexer.pipeline import run_index

    runs = tmp_path / "runs"
    runs.mkdir()
    fixtures = Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out"
    for name in ("fake-org__dummy-a", "fake-org__dummy-b"):
        shutil.copytree(fixtures / name, runs / name)
    home = Path(os.environ["TASKSPACE_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "sources.toml").write_text(f'[[source]]\nspec = "{runs}"\n')
    assert run_index().status == "ok"
    shutil.rmtree(runs / "fake-org__dummy-a")
    with caplog.at_level(logging.WARNING):
        report = run_index()
    assert report.status == "ok" and report.exit_code == 0, report.errors
    gone = [r.getMessage() for r in caplog.records if "fake-org__dummy-a" in r.getMessage()]
    assert len(gone) == 1, caplog.text
    assert f"taskspace sources drop {runs / 'fake-org__dummy-a'}" in gone[0] and "stay" in gone[0], gone
    assert not any("dummy-b" in r.getMessage() for r in caplog.records), caplog.text


def test_worker_help_gives_the_exit_codes_of_a_stop_by_signal():
    """`taskspace worker -h` says how a worker stopped by a signal exits (0 after the first, which a service manager
    reads as a clean stop; 130 for a second), as `taskspace --help` lists 143 for a terminated command and docs/WORKER.md
    says the worker exits 0. Before, its help said "finishes the current item, then exits" and no code, so an operator
    writing a systemd unit read 143 in the main help."""
    res = subprocess.run([sys.executable, "-m", "indexer.cli", "worker", "-h"], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "400"}, timeout=120)
    said = " ".join(res.stdout.split())
    assert res.returncode == 0 and "then exits 0" in said and "a second signal exits at once (130)" in said, said


def test_a_servers_worker_ended_by_a_permanent_error_says_the_server_keeps_serving(caplog):
    """The in-process worker of `taskspace serve` (errors.CLI == SERVE) stopped by an error no later pass can get past
    (a database without the taskspace tables): its line says the server's indexing stops while the server keeps
    serving, and to restart the server once it is fixed; not "exiting with code 2", which the server does not do."""
    from indexer.errors import CLI, SERVE, SchemaError

    token = CLI.set(SERVE)
    try:
        with caplog.at_level("INFO", logger="indexer.worker"):
            Worker("1s", _scripted_pass(SchemaError("the database has no taskspace tables"), "ok"), max_passes=2).serve()
    finally:
        CLI.reset(token)
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("pass failed")]
    assert "exiting with code" not in line, line
    assert "keeps serving" in line and "restart" in line, line


@pytest.mark.postgres
def test_a_postgres_search_path_naming_no_schema_ends_the_worker(pg_url, caplog, monkeypatch):
    """A worker whose PostgreSQL URL gives a search_path naming no schema that exists (a typo in
    `options=-csearch_path=...`): a configuration error no later pass can get past, so the first pass logs it (naming
    the search_path and what to do) and the worker exits 2, as for a database without the taskspace tables. Before,
    a plain StoreError (exit 3, not permanent): the worker failed every pass with it and ran on for ever."""
    from indexer.pipeline import run_index
    from indexer.store import sql_migrate

    monkeypatch.setenv("TASKSPACE_DATABASE_URL", sql_migrate.with_search_path(pg_url.split("?")[0], "nosuchschema"))
    with caplog.at_level("INFO", logger="indexer.worker"):
        w = Worker("1s", lambda stop: run_index(stop=stop), max_passes=3)
        code = w.serve()
    failures = [r.getMessage() for r in caplog.records if r.getMessage().startswith("pass failed")]
    assert code == 2 and w.passes == 1 and len(failures) == 1, caplog.text
    assert "its search_path (nosuchschema) names no schema" in failures[0] and "exiting" in failures[0], failures


def test_the_pass_line_counts_in_words_singular_for_one():
    """The worker's pass line says "1 model solved", "3 models pushed to 2 other spaces", "1 source unchanged"
    (:func:`indexer.errors.counted`); before, every count was hedged: "1 model(s) solved", "1 source(s) unchanged"."""
    from types import SimpleNamespace

    from indexer.worker import pass_summary

    r = SimpleNamespace(status="ok", run_id=5, counts={"sources": 1, "solved": 1, "embedded": 2, "benchmarks": 1,
                                                       "pushed_other": {"a": 2, "b": 1}, "sources_unchanged": 1})
    said = pass_summary(r)
    assert said == ("ok (run 5): 1 source ingested, 2 texts embedded, 1 model solved, 1 benchmark vector, "
                    "3 models pushed to 2 other spaces; 1 source unchanged"), said
    assert "(s)" not in pass_summary(SimpleNamespace(status="ok", run_id=6, counts={"sources_unchanged": 2}))


def test_the_pass_line_says_what_its_source_counts_count_when_configured_and_stored_sources_differ():
    """3 configured sources (an lm-eval output folder of 3 model folders, two files), as `stage ingest: 3 sources`
    counts them, and 2 stored sources ingested and 2 unchanged (each model folder is one): the pass line says both,
    each named. Before, "2 sources ingested ...; 2 sources unchanged" beside "stage ingest: 3 sources", found walking
    the worker. A pass whose configured sources are its stored ones says no more than before."""
    from types import SimpleNamespace

    from indexer.worker import pass_summary

    configured = [{"spec": "/data/lm_out", "status": "ingested", "errors": 0},
                  {"spec": "/data/a.csv", "status": "unchanged", "errors": 0},
                  {"spec": "/data/b.csv", "status": "failed", "errors": 1}]
    r = SimpleNamespace(status="partial", run_id=3, sources=configured,
                        counts={"sources": 2, "sources_unchanged": 2, "outcomes_added": 42})
    said = pass_summary(r)
    assert said == ("partial (run 3): 2 sources ingested, 42 outcomes stored; 2 sources unchanged; of 3 sources read: "
                    "1 failed, 1 ingested, 1 unchanged (the counts before are of stored sources: each model folder of "
                    "an lm-eval output folder is one)"), said
    same = SimpleNamespace(status="ok", run_id=4, sources=configured[:2],
                           counts={"sources": 1, "sources_unchanged": 1, "outcomes_added": 42})
    assert pass_summary(same) == "ok (run 4): 1 source ingested, 42 outcomes stored; 1 source unchanged"


def test_the_pass_line_counts_texts_embedded_not_prompts():
    """With `auto-mc` a prompt with answer options is embedded as two texts (its question, its options), and the pass
    counts texts (`embedded`, as its truncation note says "of the 898 texts embedded"). Before, the worker's line said
    "462 prompts added, 898 prompts embedded" (and `taskspace index`'s table "prompts embedded 898"): more prompts
    embedded than the pass added, found running a worker over the bundled sample."""
    from types import SimpleNamespace

    from indexer.worker import pass_summary

    said = pass_summary(SimpleNamespace(status="ok", run_id=1, counts={"prompts_added": 462, "embedded": 898}))
    assert said == "ok (run 1): 462 prompts added, 898 texts embedded", said


def test_the_worker_log_says_when_it_started_and_why_it_stopped(caplog):
    """The worker's log opens with a line naming its pid, its schedule and what it indexes, and ends with the signal
    that stopped it and its exit code; a signal while it waits for its next pass says that no pass is running. Before,
    found restarting a worker after kill -9: the log ran on from the killed worker's last line with no line telling the
    two apart, a SIGINT while idle said "finishing the current item, then exiting" with no item running, and nothing
    said that the worker had then exited."""
    w = Worker("1h", lambda stop: "ok", where="database sqlite:///x.db")
    with caplog.at_level("INFO", logger="indexer.worker"):
        t = threading.Thread(target=lambda: setattr(w, "code", w.serve()))
        t.start()
        deadline = time.monotonic() + 60
        while w.next_at is None and t.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert w.next_at is not None, "the worker did not reach its wait for the next pass"
        w._on_signal(signal.SIGINT, None)  # what the handler gets while it waits
        t.join(timeout=5)
    said = [r.getMessage() for r in caplog.records]
    assert not t.is_alive() and w.code == 0
    assert said[0] == f"worker started (pid {os.getpid()}): a pass every 1h; database sqlite:///x.db", said
    assert "signal SIGINT: no pass running: exiting" in said, said
    assert said[-1] == "worker stopped by SIGINT after 1 pass: exit 0", said
    caplog.clear()
    with caplog.at_level("INFO", logger="indexer.worker"):
        assert Worker("0 3 * * *", lambda stop: "ok", max_passes=1).serve() == 0
    said = [r.getMessage() for r in caplog.records]
    assert said[0] == f'worker started (pid {os.getpid()}): cron "0 3 * * *"', said
    assert said[-1] == "worker done after 1 pass (--max-passes): exit 0", said
