"""The scheduled worker and the one-pass-per-database lock, through the real CLI in subprocesses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from indexer.errors import BusyError, StoreError
from indexer.worker import Worker

TASKSPACE = str(Path(sys.executable).parent / "taskspace")


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
    time.sleep(0.3)
    w.stop.set()
    t.join(timeout=5)
    assert not t.is_alive() and w.passes == 1


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


def test_worker_survives_a_failing_pass():
    results = iter([StoreError("database went away"), "ok"])

    def flaky(stop):
        r = next(results)
        if isinstance(r, Exception):
            raise r
        return r

    w = Worker("1s", flaky, max_passes=2)
    assert w.serve() == 0 and w.passes == 2


def test_bad_schedule_fails_before_any_work():
    from indexer.errors import ConfigError

    with pytest.raises(ConfigError):
        Worker("every now and then", lambda stop: None)


def test_cli_worker_sigterm_finishes_and_exits_zero(tmp_path):
    env = dict(os.environ)
    proc = subprocess.Popen([TASKSPACE, "worker", "--every", "1h"], stderr=subprocess.PIPE, text=True, env=env)
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
    assert "finishing the current item" in rest


def test_cli_second_pass_is_refused_while_the_lock_is_held(tmp_path):
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


def test_cli_runs_lists_recent_runs(tmp_path):
    res = subprocess.run([TASKSPACE, "runs"], capture_output=True, text=True, env=dict(os.environ))
    assert res.returncode == 0 and "no runs yet" in res.stdout
    subprocess.run([TASKSPACE, "index"], capture_output=True, text=True, env=dict(os.environ), check=True)
    res = subprocess.run([TASKSPACE, "runs"], capture_output=True, text=True, env=dict(os.environ))
    assert res.returncode == 0 and " ok " in res.stdout
