"""Reliability of the SQL store: all-or-nothing ingests, SIGKILL mid-ingest, the worker lock across
processes, and bad configuration failing fast with a message that says what to fix."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from indexer.config import reset_settings
from indexer.errors import BusyError, StoreError
from indexer.records import Outcome, SourceBatch, SourceInfo
from indexer.store.sql import Store

from helpers import BATCH_MODELS as MODELS, source_batch as batch


def snapshot(store: Store):
    return store.counts(), store.model_digests(), [(s.location, s.revision, s.n_outcomes) for s in store.list_sources()]


def test_failure_midway_leaves_no_partial_source(store, monkeypatch):
    store.ingest(batch("/d/a.csv"))
    before = snapshot(store)
    real = Store._insert_blocks

    def half_then_fail(self, conn, blocks):
        real(self, conn, blocks[: len(blocks) // 2])  # some blocks are written inside the transaction...
        raise RuntimeError("disk on fire")  # ...then the insert fails

    monkeypatch.setattr(Store, "_insert_blocks", half_then_fail)
    with pytest.raises(RuntimeError, match="disk on fire"):
        store.ingest(batch("/d/b.csv"))  # a new source
    with pytest.raises(RuntimeError, match="disk on fire"):
        store.ingest(batch("/d/a.csv", revision="r2", score=0.0))  # a new revision of a known one
    assert snapshot(store) == before
    assert store.get_source("/d/b.csv") is None
    monkeypatch.setattr(Store, "_insert_blocks", real)
    assert store.ingest(batch("/d/b.csv")).outcomes == len(MODELS) * 20


CHILD = textwrap.dedent(
    """
    import sys, time
    from indexer.store.sql import Store
    sys.path.insert(0, {tests!r})
    from helpers import source_batch as batch

    store = Store({url!r})
    mode = {mode!r}
    if mode == "ingest":
        store.ingest(batch("/d/a.csv"))
        real = Store._insert_blocks
        def slow(self, conn, blocks):
            real(self, conn, blocks[:2])
            print("inserting", flush=True)
            time.sleep(120)
        Store._insert_blocks = slow
        store.ingest(batch("/d/b.csv"))
    else:
        with store.lock("index"):
            print("locked", flush=True)
            time.sleep(120)
    """
)


def _child(url: str, mode: str, marker: str) -> subprocess.Popen:
    code = CHILD.format(url=url, mode=mode, tests=os.path.dirname(__file__))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if line.strip() != marker:
        p.kill()
        raise AssertionError(f"child did not reach {marker!r}: {line!r} {p.stderr.read()}")
    return p


def test_sigkill_mid_ingest_loses_nothing_committed(store):
    p = _child(store.url, "ingest", "inserting")
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    assert store.get_source("/d/a.csv").n_outcomes == len(MODELS) * 20  # committed before the kill
    assert store.get_source("/d/b.csv") is None  # the killed transaction left nothing
    counts = store.counts()
    assert counts["outcome_cells"] == len(MODELS) * 20 and counts["prompts"] == 20
    r = store.ingest(batch("/d/b.csv"))  # the next run completes it (the database is not locked by the dead process)
    assert not r.skipped and store.counts()["outcome_cells"] == 2 * len(MODELS) * 20
    assert store.ingest(batch("/d/a.csv")).skipped


def test_lock_across_processes_and_released_by_kill(store):
    p = _child(store.url, "lock", "locked")
    try:
        with pytest.raises(BusyError, match="holds the 'index' lock"):
            with store.lock("index"):
                pass
    finally:
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    # PostgreSQL notices the dropped connection within moments (an upper bound not asserted: 60 s on a loaded machine)
    deadline = time.monotonic() + 60
    while True:
        try:
            with store.lock("index"):
                break
        except BusyError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_a_busy_lock_names_the_holding_process_on_every_database(store):
    """The second holder of a lock is told the holder's own pid and host (`pid N on HOST`, as the SQLite lock file
    says), on PostgreSQL too; before, PostgreSQL named only the server backend's pid, which is no taskspace process
    (killing it, as root, makes the server restart every session)."""
    import socket

    p = _child(store.url, "lock", "locked")
    try:
        with pytest.raises(BusyError, match=rf"\(pid {p.pid} on {socket.gethostname()}[,)]"):
            with store.lock("index"):
                pass
    finally:
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)


def test_a_busy_lock_names_the_command_holding_it(store):
    """The second holder of a lock is told which command holds it (`taskspace worker`, `taskspace serve`, the CLI
    command, or the program of a Python caller) beside its pid and host, on SQLite and PostgreSQL; before, only
    "pid 32504 on vm", and the operator had to look the pid up to tell a worker's pass from an `index` run by hand."""
    import socket

    from indexer.errors import CLI, WORKER

    token = CLI.set(WORKER)
    try:
        with store.lock("index"):
            with pytest.raises(BusyError) as busy:
                with store.lock("index"):
                    pass
    finally:
        CLI.reset(token)
    assert f"(pid {os.getpid()} on {socket.gethostname()}, taskspace worker" in str(busy.value), busy.value
    with store.lock("index"):  # a Python caller: its program
        with pytest.raises(BusyError, match=rf"pid {os.getpid()} on \S+, Python \("):
            with store.lock("index"):
                pass


def test_an_opener_while_the_sqlite_lock_is_released_is_told_its_holder(tmp_path, monkeypatch):
    """A second opener of the SQLite lock at the moment its holder releases it (between the holder's last write to the
    lock file and its unlock: caught here inside the holder's flock(LOCK_UN)) is told who holds it, as at any other
    moment. Before, the file was emptied before the unlock, so that opener read "unknown pid": a worker waiting for a
    pass's lock logged a second warning, "... holds the 'index' lock ... (unknown pid)", as the pass ended (seen in a
    test run under load: test_worker.py::test_a_worker_waiting_for_another_pass_does_not_tell_its_operator_to_retry,
    two warnings where it expects one)."""
    import fcntl
    import socket

    from indexer.store import sql_lock

    database = str(tmp_path / "t.db")
    told = []
    real = fcntl.flock

    def flock(fd, op):
        if op == fcntl.LOCK_UN and not told:  # the holder releasing: another opener (another open file) tries now
            with pytest.raises(BusyError) as busy:
                with sql_lock.sqlite_lock(database, "index"):
                    pass
            told.append(str(busy.value))
        return real(fd, op)

    monkeypatch.setattr(fcntl, "flock", flock)
    with sql_lock.sqlite_lock(database, "index"):
        pass
    assert len(told) == 1 and f"(pid {os.getpid()} on {socket.gethostname()}" in told[0], told
    with sql_lock.sqlite_lock(database, "index"):  # released: taken again, and released
        pass


@pytest.mark.parametrize(
    "url, needle",
    [
        ("not a url", "not a valid SQLAlchemy URL"),
        ("nosuchdb://x/y", "no driver"),
        ("sqlite:////nonexistent-folder-xyz/taskspace.db", "does not exist"),
        ("postgresql+psycopg://postgres@127.0.0.1:1/test", "Connection refused"),
        # a port that is not a number: before, a ValueError traceback from the URL parser
        ("postgresql+psycopg://postgres@127.0.0.1:notaport/test", r"not a valid SQLAlchemy URL \(invalid literal"),
        ("postgresql+psycopg://postgres:topsecret@127.0.0.1:notaport/test", r"'postgresql\+psycopg://postgres:\*\*\*@"),
    ],
)
def test_bad_urls_fail_fast_and_say_what_to_fix(url, needle):
    t = time.monotonic()
    with pytest.raises(StoreError, match=needle) as info:
        Store(url)
    assert time.monotonic() - t < 10
    assert "TASKSPACE_DATABASE_URL" in str(info.value) and "topsecret" not in str(info.value)


def test_a_file_path_given_for_the_url_is_answered_with_its_sqlite_url(tmp_path):
    """`open_store("/x/home/taskspace.db")`, `open_store(Path(...))` or `open_store("/x/home")` (a path, the way a
    Python caller points at a home's database): the DatabaseURLError names the SQLite URL of that file (of the home's
    `taskspace.db` for a folder); before, "not a valid SQLAlchemy URL" and a made-up example path alone."""
    from indexer.errors import DatabaseURLError

    db = tmp_path / "taskspace.db"
    with Store(f"sqlite:///{db}", upgrade=True):
        pass
    for given in (str(db), db, tmp_path, str(tmp_path / "new.db")):
        with pytest.raises(DatabaseURLError, match="not a valid SQLAlchemy URL") as info:
            Store(given)
        want = tmp_path / "new.db" if str(given).endswith("new.db") else db
        assert f"it is a file path: its SQLite URL is 'sqlite:///{want}'" in str(info.value), str(info.value)


@pytest.mark.parametrize("damage", ["cut short", "not a database"])
def test_a_damaged_sqlite_file_is_named_as_damaged_not_as_a_bad_url(tmp_path, damage):
    """A damaged SQLite file was reported as "check TASKSPACE_DATABASE_URL ... and that the server is running": the URL
    is right, the file is what to fix (SQL is the source of truth, so nothing is set aside or rebuilt here)."""
    path = tmp_path / "t.db"
    with Store(f"sqlite:///{path}", upgrade=True) as s:
        s.ingest(SourceBatch(SourceInfo("table", "mem:x", "r1"), {},
                             [Outcome(model=f"m{i}", benchmark="b", text=f"t{j}", score=1.0)
                              for i in range(30) for j in range(40)]))
    if damage == "cut short":
        with open(path, "r+b") as f:
            f.truncate(path.stat().st_size // 3)
    else:
        path.write_bytes(b"garbage" * 3000)
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"t.db{suffix}").unlink(missing_ok=True)
    with pytest.raises(StoreError, match=r"The file is damaged: restore it from a backup") as info:
        Store(f"sqlite:///{path}", upgrade=True)
    assert "server is running" not in str(info.value)


def test_unroutable_host_times_out_quickly():
    t = time.monotonic()
    with pytest.raises(StoreError, match="TASKSPACE_DATABASE_URL"):
        Store("postgresql+psycopg://postgres@10.255.255.1:5432/test")
    assert time.monotonic() - t < 12  # 5 s connect timeout (+ slack), not the OS default of minutes


def test_bad_url_from_the_environment(monkeypatch):
    monkeypatch.setenv("TASKSPACE_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:1/test")
    reset_settings()
    with pytest.raises(StoreError, match="127.0.0.1:1"):
        Store()


def test_concurrent_ingests_of_overlapping_sources(store):
    """Four threads ingest sources that share prompts, models and benchmarks (in different orders) at once."""
    import threading

    def source(k):
        outs = [Outcome(m, f"bench{j % 3}", f"shared question {(j * (k + 1)) % 30}", float((j + k) % 2), prompt_id=str(j))
                for m in (MODELS[::-1] if k % 2 else MODELS) for j in range(30)]
        return SourceBatch(SourceInfo("table", f"/d/{k}.csv", "r1"), {}, outs)

    errors = []

    def work(k):
        try:
            store.ingest(source(k))
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    c = store.counts()
    assert c["sources"] == 4 and c["prompts"] == 30 and c["models"] == len(MODELS)
    assert all(s.n_outcomes > 0 for s in store.list_sources())


def test_delete_source(store):
    store.ingest(batch("/d/a.csv"))
    store.ingest(batch("/d/b.csv"))
    cells = store.counts()["outcome_cells"]
    assert store.delete_source("/d/a.csv") and not store.delete_source("/d/a.csv")
    assert store.get_source("/d/a.csv") is None and store.counts()["outcome_cells"] == cells // 2
    assert store.ingest(batch("/d/a.csv")).outcomes == cells // 2  # can come back


@pytest.mark.parametrize("given", ["default", "url"])
def test_sqlite_writer_blocked_too_long_gets_busy_error(tmp_path, monkeypatch, given):
    """A writer waits for another's lock for the busy timeout, then a BusyError saying how long: taskspace's (30 s), or
    the SQLite URL's own `?timeout=N`. Before, found reading make_engine beside the PostgreSQL `connect_timeout` fix:
    connect_args overrode the URL's timeout with 30 s, and the error said 30 s; a timeout that is not a number of
    seconds was a ValueError traceback, now a URL error saying so."""
    from indexer.store import sql_migrate

    url = f"sqlite:///{tmp_path / 'busy.db'}"
    holder = Store(url, upgrade=True)
    if given == "default":
        monkeypatch.setattr(sql_migrate, "SQLITE_BUSY_TIMEOUT_S", 0.3)
    waiter = Store(url if given == "default" else f"{url}?timeout=0.3")
    conn = sql_migrate.write_connection(holder.engine)
    tx = conn.begin()  # BEGIN IMMEDIATE: holds the write lock
    try:
        with pytest.raises(BusyError, match="locked for over 0.3 s"):
            waiter.ingest(batch("/d/a.csv", revision=None))
    finally:
        tx.rollback()
        conn.close()
    assert waiter.ingest(batch("/d/a.csv")).outcomes == len(MODELS) * 20
    holder.close()
    waiter.close()
    with pytest.raises(StoreError, match=r"\?timeout='abc' is not a number of seconds"):  # before: a traceback
        Store(f"{url}?timeout=abc")


def test_a_password_in_the_database_url_is_never_shown():
    with pytest.raises(StoreError) as info:
        Store("postgresql+psycopg://postgres:topsecret@127.0.0.1:1/test")
    assert "topsecret" not in str(info.value) and "postgres:***@127.0.0.1:1" in str(info.value)


@pytest.mark.parametrize("query", ["password=topsecret", "PASSWORD=topsecret&sslmode=disable", "sslpassword=topsecret"])
def test_a_password_given_as_a_query_parameter_is_never_shown(query):
    """libpq takes the password as a query parameter too (`...?password=...`): masked like the one before the host;
    before, every error message showed it."""
    with pytest.raises(StoreError) as info:
        Store(f"postgresql+psycopg://postgres@127.0.0.1:1/test?{query}")
    assert "topsecret" not in str(info.value) and "password=***" in str(info.value).lower()


def test_a_sqlite_home_that_cannot_be_written_is_named_not_taken_for_a_bad_url(tmp_path):
    """The SQLite database in a home that cannot be written (a read-only mount): every command that opens it says the
    folder cannot be written and to make it writable or move TASKSPACE_HOME (exit 3, one line), for a database that
    exists (`runs`, `ingest`) and one not created yet (`index --source`). Before, "unable to open database file. Check
    TASKSPACE_DATABASE_URL (host, port, user, database name, file path) and that the server is running"."""
    from helpers import run_in_read_only_home, write_table

    home, empty, data = tmp_path / "home", tmp_path / "empty", tmp_path / "data"
    write_table(data, "demo/a", {"m1": [1, 0, 1], "m2": [0, 0, 1]}, 3)
    home.mkdir()
    empty.mkdir()
    with Store(f"sqlite:///{home / 'taskspace.db'}", upgrade=True) as s:
        s.ingest(batch("mem:x"))
    for where, args in ((home, ["runs"]), (home, ["ingest", str(data)]), (empty, ["index", "--source", str(data)])):
        r = run_in_read_only_home(where, *args, env={"HF_HUB_OFFLINE": "1"})
        assert r.returncode == 3, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
        assert f"because the folder {where} cannot be written" in r.stderr, r.stderr
        assert "TASKSPACE_HOME" in r.stderr and "server is running" not in r.stderr


def test_a_lock_whose_connection_the_server_ended_is_left_without_a_traceback(pg_url, caplog):
    """PostgreSQL ending the session that holds the 'index' lock during a pass (a restart, `pg_terminate_backend`):
    leaving the lock logs a warning that the server released it with the session, and the pass's own outcome stands
    (its result, or its own error); before, unlocking on the dead connection raised a raw OperationalError traceback,
    which hid a pass's own error too."""
    import logging

    from sqlalchemy import text

    import zlib

    with Store(pg_url, upgrade=True) as store, Store(pg_url) as other:
        def end_the_holder():  # only this test's lock: its key is of this test's own schema (the server is shared)
            with other.engine.begin() as conn:
                scope = conn.exec_driver_sql("select current_database() || '.' || current_schema()").scalar()
                key = zlib.crc32(f"taskspace:{scope}:index".encode())
                n = conn.execute(text("select count(pg_terminate_backend(pid)) from pg_locks where locktype = 'advisory' "
                                      "and granted and objid = (:k)::bigint::oid and pid <> pg_backend_pid()"),
                                 {"k": key}).scalar()
            assert n == 1

        with caplog.at_level(logging.WARNING, logger="indexer.store.sql_lock"):
            with store.lock("index"):
                end_the_holder()
        assert "was lost before the lock was released" in caplog.text
        with pytest.raises(ValueError, match="the pass's own error"):
            with store.lock("index"):
                end_the_holder()
                raise ValueError("the pass's own error")
        with store.lock("index"):  # free again
            pass


@pytest.mark.postgres
def test_a_lock_whose_session_the_server_ended_is_taken_again_or_given_up(pg_url, caplog):
    """PostgreSQL ending the session of a held 'index' lock while its holder runs on (a restart, `pg_terminate_backend`,
    `idle_session_timeout`): `held.ensure()`, which a pass calls between its stages, takes the lock again on a new
    connection (a warning says so), so a second holder is refused again; when another process took it meanwhile,
    `ensure()` raises BusyError naming that holder and saying this pass stops. Before, the lock was gone for the rest
    of the pass and a second pass (a waiting worker) ran beside it."""
    import logging

    from helpers import end_lock_session

    with Store(pg_url, upgrade=True) as store, Store(pg_url) as other:
        with caplog.at_level(logging.WARNING, logger="indexer.store.sql_lock"):
            with store.lock("index") as held:
                held.ensure()  # the session lives: nothing to do
                end_lock_session(other)
                held.ensure()
                assert "this process took it again" in caplog.text
                with pytest.raises(BusyError, match="holds the 'index' lock"):
                    with other.lock("index"):
                        pass
                end_lock_session(other)
                with other.lock("index"):  # another pass takes it while this one's session is gone
                    with pytest.raises(BusyError, match="another taskspace process took it") as info:
                        held.ensure()
                    assert "this pass stops here" in str(info.value) and "pid " in str(info.value)
        with store.lock("index"):  # released by the other holder: free
            pass


@pytest.mark.postgres
def test_a_lock_taken_while_the_server_cannot_be_reached_is_a_store_error(pg_url):
    """The 'index' lock asked for while PostgreSQL cannot be reached (a restart or failover between opening the store
    and taking the lock: a pass, `reindex`, `publish`, `pull`): a StoreError saying the database cannot be used (exit 3;
    the worker logs one line and retries), not a raw `sqlalchemy.exc.OperationalError` with its traceback (exit 1, "an
    unexpected OperationalError" in the worker's log)."""
    from indexer.store.sql_migrate import make_engine

    with Store(pg_url, upgrade=True) as store:
        engine = store.engine
        store.engine = make_engine("postgresql+psycopg://nobody@127.0.0.1:1/none")  # connection refused at once
        try:
            with pytest.raises(StoreError, match="cannot use the database at .*Connection refused"):
                with store.lock("index"):
                    pass
        finally:
            store.engine.dispose()
            store.engine = engine
        with store.lock("index"):  # reachable again: taken
            pass


def test_a_database_or_user_that_does_not_exist_says_how_to_create_it(pg_url):
    """A first setup against a PostgreSQL server where the URL's database or user was not created yet: the error says
    to create it (`createdb ... NAME` / `createuser ... NAME`, or the SQL) and to run `taskspace db upgrade`, naming
    `--url` beside TASKSPACE_DATABASE_URL (`taskspace db upgrade --url URL` gave it there); before, "Check
    TASKSPACE_DATABASE_URL (host, port, user, database name, file path) and that the server is running and
    reachable", which names neither what is missing nor how to make it, and a variable the user had not set."""
    from sqlalchemy.engine import make_url

    from indexer.store.sql_migrate import status

    base = make_url(pg_url)
    no_db = base.set(database="ts_no_such_database_q1").render_as_string(hide_password=False)
    with pytest.raises(StoreError) as info:
        status(no_db)
    message = str(info.value)
    assert 'database "ts_no_such_database_q1" does not exist' in message, message
    assert "createdb" in message and "ts_no_such_database_q1" in message.split("createdb", 1)[1], message
    assert "taskspace db upgrade" in message and "--url" in message, message
    no_role = base.set(username="ts_no_such_role_q1").render_as_string(hide_password=False)
    with pytest.raises(StoreError) as info:
        Store(no_role)
    message = str(info.value)
    assert 'role "ts_no_such_role_q1" does not exist' in message and "createuser" in message, message
    # a server that is not there: the URL's settings, --url among them, and the server to start
    with pytest.raises(StoreError) as info:
        status(base.set(port=1).render_as_string(hide_password=False))
    assert "--url" in str(info.value) and "server is running" in str(info.value)


@pytest.mark.postgres
def test_a_server_at_its_connection_limit_is_named_not_taken_for_a_bad_url(pg_url):
    """PostgreSQL refusing a connection because it is at its limit (max_connections, or a limit set for the database
    or the user: many `taskspace serve` processes, each with its own pool): the error says the server is at its
    connection limit, how many connections a taskspace process keeps, and what to do (raise the limit, fewer
    processes, a pooler), and that the URL is right; before, "Check the URL (...: host, port, user, database name, file
    path) and that the server is running and reachable", about a URL that works and a server that answered."""
    import uuid

    from sqlalchemy.engine import make_url

    from indexer.store.sql_migrate import _schema_ddl

    role = "ts_limit_" + uuid.uuid4().hex[:10]
    _schema_ddl(pg_url, f'create role "{role}" login connection limit 0')  # every connection over its limit
    try:
        with pytest.raises(StoreError) as info:
            Store(make_url(pg_url).set(username=role).render_as_string(hide_password=False))
        message = str(info.value)
        assert f'too many connections for role "{role}"' in message, message
        assert "connection limit" in message and "max_connections" in message and "pool" in message, message
        assert "Check the URL" not in message and "running and reachable" not in message, message
    finally:
        _schema_ddl(pg_url, f'drop role if exists "{role}"')


@pytest.mark.postgres
@pytest.mark.parametrize("setting", ["statement_timeout", "lock_timeout"])
def test_a_statement_the_servers_timeout_cancelled_names_the_setting(pg_url, setting):
    """A statement PostgreSQL cancelled for its `statement_timeout` or `lock_timeout` (set for the database or the user
    by an operator; here in the URL, while another session holds a table's lock): the store error names the setting,
    says nothing was saved and how to give taskspace more time (`ALTER ROLE ... SET`, or the URL's options); before,
    only the driver's "canceling statement due to statement timeout", no setting and nothing to do."""
    import threading

    from sqlalchemy.engine import make_url

    from indexer.store.sql_migrate import make_engine

    Store(pg_url, upgrade=True).close()
    u = make_url(pg_url)
    url = u.update_query_dict({"options": f"{u.query['options']} -c{setting}=200"}).render_as_string(hide_password=False)
    holder = make_engine(pg_url)
    locked, done = threading.Event(), threading.Event()

    def hold():
        with holder.begin() as conn:
            conn.exec_driver_sql("lock table sources in access exclusive mode")
            locked.set()
            done.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert locked.wait(30)
        with Store(url) as store:
            with pytest.raises(StoreError) as info:
                store.record_checked("/data/x", kind="table")
    finally:
        done.set()
        t.join()
        holder.dispose()
    message = str(info.value)
    words = "statement timeout" if setting == "statement_timeout" else "lock timeout"
    assert f"canceling statement due to {words}" in message and "nothing of it was saved" in message, message
    assert f"the server's {setting}" in message and "ALTER ROLE" in message and f"-c{setting}=" in message, message


@pytest.mark.postgres
def test_a_transaction_the_servers_idle_timeout_ended_names_the_setting(pg_url, monkeypatch):
    """PostgreSQL ending an ingest's session for its `idle_in_transaction_session_timeout` (an operator's setting; an
    ingest keeps its transaction open while it prepares the next rows, seconds for a large source): the store error
    names the setting, says nothing of the source was saved and how to give taskspace's user more; before, only the
    driver's "terminating connection due to idle-in-transaction timeout", or "server closed the connection
    unexpectedly"."""
    from sqlalchemy.engine import make_url

    Store(pg_url, upgrade=True).close()
    u = make_url(pg_url)
    url = u.update_query_dict({"options": f"{u.query['options']} -cidle_in_transaction_session_timeout=100"})
    real = Store._insert_blocks

    def slow(self, conn, blocks):  # Python work inside the transaction, longer than the server allows
        time.sleep(0.6)
        return real(self, conn, blocks)

    monkeypatch.setattr(Store, "_insert_blocks", slow)
    with Store(url.render_as_string(hide_password=False)) as store:
        with pytest.raises(StoreError) as info:
            store.ingest(batch("/d/a.csv"))
        monkeypatch.setattr(Store, "_insert_blocks", real)
        assert store.get_source("/d/a.csv") is None
    message = str(info.value)
    assert "nothing of it was saved" in message, message  # (the driver saw the server's word, or a closed connection)
    assert "idle_in_transaction_session_timeout" in message and "ALTER ROLE" in message, message
    assert "-cidle_in_transaction_session_timeout=0" in message, message
    from indexer.errors import ConnectionLostError

    if "terminating connection due to idle-in-transaction timeout" in message:  # the server's word, read by the driver
        assert not isinstance(info.value, ConnectionLostError)  # the same work would meet it again: no quick retry
    else:  # a closed connection alone, the setting read from the server: a restart may have done it too
        assert "a restart" in message and "(100ms for this user and database)" in message, message

    def ended(self, conn, blocks):  # without the timeout: the session ended by an operator (or a restart)
        conn.connection().exec_driver_sql("select pg_terminate_backend(pg_backend_pid())")

    monkeypatch.setattr(Store, "_insert_blocks", ended)
    with Store(pg_url) as store:
        with pytest.raises(StoreError) as info:
            store.ingest(batch("/d/a.csv"))
    assert "the server ended the session (a restart, `pg_terminate_backend`); retry" in str(info.value), str(info.value)
    from indexer.errors import ConnectionLostError

    assert isinstance(info.value, ConnectionLostError)  # what the worker runs again soon (test_worker.py)
    assert "idle_in_transaction" not in str(info.value)


def test_a_user_that_may_only_read_is_told_which_grant_an_indexing_pass_needs(pg_url):
    """PostgreSQL as a user granted SELECT alone on taskspace's tables (a read-only role, as `taskspace serve` needs):
    queries answer, and a write (an indexing pass, ingest, pull) is a store error naming the table, the user, that
    nothing was saved, and the GRANT that lets it write (or to run it as the tables' owner); before, only the driver's
    "permission denied for table runs"."""
    import uuid

    from sqlalchemy.engine import make_url

    from indexer.store.sql_migrate import _schema_ddl

    Store(pg_url, upgrade=True).close()
    schema = make_url(pg_url).query["options"].split("=", 1)[1]
    role = "ts_reader_" + uuid.uuid4().hex[:10]
    _schema_ddl(pg_url, f'create role "{role}" login; grant usage on schema "{schema}" to "{role}"; '
                        f'grant select on all tables in schema "{schema}" to "{role}"')
    try:
        with Store(make_url(pg_url).set(username=role).render_as_string(hide_password=False)) as reader:
            assert reader.list_sources() == [] and reader.list_runs() == []  # reading is allowed
            with pytest.raises(StoreError) as info:
                reader.start_run("index")
    finally:
        _schema_ddl(pg_url, f'drop owned by "{role}"; drop role if exists "{role}"')
    message = str(info.value)
    assert "permission denied for table runs" in message and "nothing of it was saved" in message, message
    assert f'user "{role}" may read' in message and "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA" in message, message
    assert "USAGE ON ALL SEQUENCES" in message, message


def test_a_connection_pool_busy_too_long_is_named_not_taken_for_a_bad_url(store):
    """Every connection of the process's pool in use past the pool's timeout (`taskspace serve` with its queries waiting
    on a table another session locked, or slow statements): the store error (HTTP 503) says the pool was busy, how
    many connections it has and for how long, and what to look at; before, "QueuePool limit of size 5 overflow 10
    reached, connection timed out, timeout 30.00 (Background on this error at: https://sqlalche.me/...). Check the URL
    (...) and that the server is running and reachable", about a URL that works and a server that answers."""
    from indexer.store.sql_migrate import POOL_CONNECTIONS

    store.engine.pool._timeout = 0.2  # (30 s by default)
    held = []
    try:
        if store.dialect == "postgresql":
            held = [store.engine.connect() for _ in range(POOL_CONNECTIONS)]
        else:  # SQLite's pool: as many as it takes
            while True:
                try:
                    held.append(store.engine.connect())
                except Exception:  # noqa: BLE001 - the pool's own TimeoutError: all of them are held now
                    break
        with pytest.raises(StoreError) as info:
            store.list_sources()
    finally:
        for conn in held:
            conn.close()
    message = str(info.value)
    assert "connections of this process" in message and "in use" in message and "0.2 s" in message, message
    assert "pg_stat_activity" in message or store.dialect == "sqlite", message
    assert "Check the URL" not in message and "sqlalche.me" not in message and "QueuePool" not in message, message
    assert store.list_sources() == []  # free again


def test_a_lock_beside_a_sqlite_file_on_a_full_disk_is_still_taken(tmp_path):
    """TASKSPACE_HOME on a full disk (a 64 kB tmpfs, filled): the lock beside the SQLite file is taken though its holder
    cannot be written into it, so the command goes on to the error that says the disk is full (`taskspace index`:
    "not enough free disk space ...", exit 3); before, `OSError: [Errno 28] No space left on device` from writing
    the holder, a traceback, exit 1."""
    from helpers import fill_disk_code, run_on_a_small_disk

    disk = tmp_path / "disk"
    disk.mkdir()
    res = run_on_a_small_disk(disk, "64k", python="from pathlib import Path\n"
                              "from indexer.store.sql_lock import sqlite_lock\n"
                              f"Path({str(disk)!r}, 't.db.index.lock').touch()\n" + fill_disk_code(disk / "filler") + f"""
with sqlite_lock({str(disk / 't.db')!r}, "index"):
    print("held")
""")
    assert res.returncode == 0 and res.stdout.strip() == "held", res.stderr[-2000:]


def test_a_sqlite_database_on_a_full_disk_says_the_disk_is_full(tmp_path):
    """A home whose disk filled up after it was indexed (a 4 MB tmpfs, filled): opening its SQLite database says the
    disk holding it is full and to free space or move TASKSPACE_HOME (exit 3); before, "disk I/O error. Check
    TASKSPACE_DATABASE_URL (host, port, user, database name, file path) and that the server is running and
    reachable", as if the URL were wrong (SQLite creates its shared-memory file even to read, and cannot)."""
    from helpers import fill_disk_code, run_on_a_small_disk

    disk = tmp_path / "disk"
    disk.mkdir()
    db = str(disk / "t.db")
    res = run_on_a_small_disk(disk, "4m", python=f"""
import contextlib
import os
from indexer.errors import StoreError
from indexer.store.sql import Store
url = "sqlite:///" + {db!r}
Store(url, upgrade=True).close()
for suffix in ("-wal", "-shm"):
    if os.path.exists({db!r} + suffix):
        os.remove({db!r} + suffix)
""" + fill_disk_code(disk / "filler") + """
try:
    Store(url).close()
    print("opened")
except StoreError as exc:
    print(exc)
""")
    said = res.stdout.strip()
    assert res.returncode == 0 and said != "opened", (said, res.stderr[-2000:])
    assert f"because the disk holding {disk} is full" in said and "free some space" in said, said
    assert "server is running" not in said


def test_a_source_stored_on_a_full_disk_says_the_disk_is_full_and_what_to_do(tmp_path):
    """A pass whose home's disk filled up after the database was opened (a 4 MB tmpfs, filled): the source's error
    says the disk holding the SQLite file is full, how much is free and to free space or move TASKSPACE_HOME, as opening
    the database does. Before, found running a worker on a full tmpfs: "source not stored (nothing of it was written):
    ingesting SRC failed, nothing of it was saved: database or disk is full (sqlite:///...)", with nothing to do."""
    from helpers import fill_disk_code, run_on_a_small_disk

    src = tmp_path / "src"
    src.mkdir()
    (src / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(
        f"m{m},p{p},{(m + p) % 2}\n" for m in range(3) for p in range(200)))
    (src / "prompts.csv").write_text("prompt_id,benchmark,text\n" + "".join(
        f"p{p},b,question number {p}?\n" for p in range(200)))
    disk = tmp_path / "disk"
    disk.mkdir()
    res = run_on_a_small_disk(disk, "4m", python=f"""
from indexer.ingest import ingest
from indexer.store.sql import Store
store = Store("sqlite:///" + {str(disk / 't.db')!r}, upgrade=True)
""" + fill_disk_code(disk / "filler") + f"""
summary = ingest({str(src)!r}, store=store, fetch_metadata=False)
print(" | ".join(e.message for e in summary.errors) or "stored")
""")
    said = res.stdout.strip()
    assert res.returncode == 0 and said != "stored", (said, res.stderr[-2000:])
    assert f"because the disk holding {disk} is full" in said and "free some space there" in said, said


def test_an_interrupt_between_begin_and_the_body_of_a_write_leaves_no_lock(tmp_path, monkeypatch):
    """SIGTERM to `taskspace demo` (or Ctrl-C) raises KeyboardInterrupt wherever the process is: arriving after a write
    transaction's BEGIN IMMEDIATE and before its body, it skipped ``__exit__``, and the connection, kept alive by the
    traceback while the pass recorded its run as interrupted, held SQLite's write lock; the record waited the busy
    timeout (30 s) and the demo exited 6 "another process kept the SQLite database locked" instead of 143 (seen once in
    CI, tests/test_worker.py::test_sigterm_to_demo_removes_its_throwaway_home). Now the connection is closed (its
    transaction rolled back) before the interrupt goes on."""
    import sqlite3

    import indexer.store.sql as sql

    path = tmp_path / "t.db"
    store = Store(f"sqlite:///{path}", upgrade=True)
    real, calls = sql.Session, []

    def interrupted(*args, **kwargs):
        if not calls:
            calls.append(1)
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(sql, "Session", interrupted)
    try:
        with store._write("testing"):
            pytest.fail("the body ran")
    except KeyboardInterrupt:  # the traceback is alive here, as in the pass's handler that records the run
        other = sqlite3.connect(path, timeout=0.5)
        try:
            other.execute("BEGIN IMMEDIATE")  # "database is locked" when the interrupted transaction kept the lock
            other.rollback()
        finally:
            other.close()
    with store._write("after"):
        pass
    store.close()


@contextlib.contextmanager
def _sigterm_on(engine, event_name: str, when=lambda *args: True):
    """SIGTERM sent to this process from the engine's ``event_name`` event, the first time it fires with ``when(*its
    arguments)`` true, with the handler
    of `taskspace demo` / `index` (:func:`indexer.cli_index.interrupt_on_sigterm`) installed: its KeyboardInterrupt
    is raised inside the event, as a signal that lands at that moment of the transaction raises it there."""
    from sqlalchemy import event

    from indexer import cli_index

    sent: list[int] = []

    def send(*args):
        if not sent and when(*args):
            sent.append(1)
            os.kill(os.getpid(), signal.SIGTERM)  # the handler raises at the next instruction, in this function
            raise AssertionError("SIGTERM did not interrupt")  # not reached

    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    was = list(cli_index.terminated)
    cli_index.interrupt_on_sigterm()
    event.listen(engine, event_name, send)
    try:
        yield sent
    finally:
        event.remove(engine, event_name, send)
        for s, h in handlers.items():
            signal.signal(s, h)
        cli_index.terminated[:] = was


def _sqlite_write_lock_free(path) -> bool:
    """Whether another connection can take the SQLite database's write lock now (no waiting)."""
    import sqlite3

    other = sqlite3.connect(path, timeout=0)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.rollback()
        return True
    except sqlite3.OperationalError as exc:
        assert "locked" in str(exc), exc
        return False
    finally:
        other.close()


def test_an_interrupt_right_after_a_statement_leaves_no_lock_while_its_traceback_lives(tmp_path):
    """SIGTERM to `taskspace demo` (or Ctrl-C) landing while a write transaction runs a statement (the interrupt is
    raised when the statement returns; most of a pass's writes are long inserts): SQLAlchemy invalidates the connection,
    closing it, and SQLite's close of a connection whose statement a cursor still holds (a local of the traceback's
    frames, alive while the pass records its run as interrupted) only makes it a zombie that keeps its transaction and
    the write lock. Before, the run record then waited the busy timeout (30 s) for that lock and `taskspace demo` exited
    6 "another process kept the SQLite database locked" (CI: tests/test_worker.py::test_sigterm_to_demo_removes_its_
    throwaway_home). Now the transaction is rolled back before the connection is closed."""
    path = tmp_path / "t.db"
    store = Store(f"sqlite:///{path}", upgrade=True)
    try:
        inserting = lambda conn, cursor, statement, *rest: statement.startswith("INSERT")  # noqa: E731 (not BEGIN)
        with _sigterm_on(store.engine, "after_cursor_execute", inserting) as sent:
            try:
                store.start_run("index")  # INSERT ... RETURNING: interrupted before its row is read
                pytest.fail("the SIGTERM did not interrupt the write")
            except KeyboardInterrupt:  # the traceback is alive here, as in the pass's handler that records the run
                assert sent and _sqlite_write_lock_free(path), "the interrupted write still holds the write lock"
                run = store.start_run("index")  # what the pass's handler does next: a write
        assert [r.id for r in store.list_runs()] == [run]  # the interrupted insert was rolled back
    finally:
        store.close()


def test_an_interrupt_just_before_a_commit_leaves_no_transaction_open(store, db_url):
    """SIGTERM (or Ctrl-C) landing in SQLAlchemy's commit before the COMMIT reaches the database: SQLAlchemy marks the
    transaction over and returns the connection to its pool without the rollback it does for any other connection, so
    the transaction stayed open there: on SQLite holding the write lock (the run record of the interrupted pass waited
    30 s for it, `taskspace demo` exited 6, as above); on PostgreSQL the next transaction given that connection committed
    the interrupted writes with its own. Now a transaction whose commit did not finish is rolled back, its connection
    not reused."""
    with _sigterm_on(store.engine, "commit") as sent:
        try:
            store.record_checked("/interrupted", kind="path")
            pytest.fail("the SIGTERM did not interrupt the commit")
        except KeyboardInterrupt:
            assert sent
            if store.dialect == "sqlite":
                assert _sqlite_write_lock_free(store.engine.url.database), "the interrupted write holds the write lock"
            store.record_checked("/after", kind="path")  # the next write, as the pass's handler records its run
    assert [s.location for s in store.list_sources()] == ["/after"]  # the interrupted one was never committed


def test_an_interrupt_while_rows_are_fetched_logs_no_error(tmp_path, caplog):
    """SIGTERM to `taskspace demo` (or Ctrl-C) landing as a SQLite read's rows are fetched: the interrupt goes on and
    nothing else is said; the connection is kept (its cursor closed, its transaction rolled back, as for any error).
    Before, SQLAlchemy took the connection for lost and closed it under the open cursor; closing that cursor afterwards
    failed, logged as ERROR "Error closing cursor" with a traceback ("Cannot operate on a closed database") on the
    command's stderr (1 in about 170 interrupts at random moments of the demo's pass; the demo test
    tests/test_worker.py::test_sigterm_to_demo_removes_its_throwaway_home fails on a traceback in stderr)."""
    import logging
    import sqlite3

    from indexer import cli_index

    store = Store(f"sqlite:///{tmp_path / 't.db'}", upgrade=True)
    store.ingest(batch("/d/a.csv"))
    ids = store.benchmark_prompts(store.list_benchmarks()[0].name)
    sent: list[int] = []

    def at_fetch(frame, what, arg):  # SIGTERM as the driver's fetchall returns (where its handler raises)
        if what == "c_return" and not sent and getattr(arg, "__name__", "") == "fetchall" \
                and isinstance(getattr(arg, "__self__", None), sqlite3.Cursor):
            sent.append(1)
            sys.setprofile(None)
            os.kill(os.getpid(), signal.SIGTERM)

    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    was = list(cli_index.terminated)
    cli_index.interrupt_on_sigterm()
    caplog.set_level(logging.WARNING)
    try:
        sys.setprofile(at_fetch)
        with pytest.raises(KeyboardInterrupt):
            store.prompt_texts(ids)
    finally:
        sys.setprofile(None)
        for s, h in handlers.items():
            signal.signal(s, h)
        cli_index.terminated[:] = was
    try:
        assert sent
        assert [f"{r.name}: {r.getMessage()}" for r in caplog.records] == []
        assert len(store.prompt_texts(ids)) == len(ids)
    finally:
        store.close()


def test_a_write_past_a_file_size_limit_says_the_limit(tmp_path):
    """A pass run under a file-size limit (`ulimit -f`, SIGXFSZ ignored as a service manager may: the write fails
    with EFBIG) whose SQLite file grows past it: the store error says a file-size limit of N bytes was hit and to
    raise it (`ulimit -f`, LimitFSIZE=), as a full disk's says the disk is full; before, a bare "disk I/O error"."""
    db = str(tmp_path / "t.db")
    code = textwrap.dedent(f"""
        import resource, signal
        from sqlalchemy import text
        from indexer.errors import StoreError
        from indexer.store.sql import Store
        store = Store("sqlite:///" + {db!r}, upgrade=True)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            with store._write("storing the test rows") as conn:
                conn.execute(text("create table big (x blob)"))
                for _ in range(40):
                    conn.execute(text("insert into big values (randomblob(100000))"))
            print("written")
        except StoreError as exc:
            print(exc)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    said = res.stdout.strip()
    assert res.returncode == 0 and said != "written", (said, res.stderr[-2000:])
    assert "file-size limit" in said and "1048576 bytes" in said and "ulimit -f" in said, said


@pytest.mark.postgres
def test_a_postgres_scheme_url_is_postgresql(pg_url):
    """`postgres://` (libpq's other scheme, the one hosting platforms' DATABASE_URL gives) is PostgreSQL through
    psycopg, as `postgresql://` is; before, "no driver for 'postgres' (Can't load plugin: sqlalchemy.dialects:postgres)"."""
    from indexer.store.sql_migrate import status

    url = "postgres://" + pg_url.split("://", 1)[1]
    with Store(url, upgrade=True) as s:
        assert s.dialect == "postgresql"
        s.ingest(batch("/d/a.csv"))
        assert s.counts()["sources"] == 1
    assert status(url)["current"] == status(pg_url)["current"] is not None


def test_mask_secrets_masks_a_urls_passwords_where_they_stand_and_nothing_else():
    """`config.mask_secrets` (what `serve.scrub` masks a message with) hides the URL's password before the host and its
    `?password=` / `sslpassword=` values, as written or percent-decoded, where they stand (`user:***@`, `password=***`);
    other text is left as it is. Before, found reading it beside `safe_url`: the query's passwords were shown, and a
    short password ("a") was replaced wherever its letters appeared, garbling the message."""
    from indexer.config import mask_secrets

    url = "postgresql+psycopg://u:a@127.0.0.1/db?sslpassword=k3y&password=p%40ss"
    text = (f"cannot use {url}: password authentication failed for user \"u\"; a value at "
            "host=127.0.0.1 password='p@ss' sslpassword=k3y")
    out = mask_secrets(text, url)
    assert "k3y" not in out and "p%40ss" not in out and "p@ss" not in out, out
    assert "u:***@127.0.0.1" in out and "password=***&" in out.lower() and "password='***'" in out, out
    assert 'password authentication failed for user "u"; a value at' in out, out
    assert mask_secrets("a plain message", "http://admin:a@127.0.0.1:6333") == "a plain message"


@pytest.mark.parametrize("userinfo", ["postgres:t0p@s3cr3t", "postgres:t0p@s3@cr3t", "postgres:t0p/x@s3cr3t"])
def test_a_password_with_an_at_sign_not_percent_encoded_is_named_and_never_shown(userinfo):
    """An '@' in the password left as it is (`postgres:t0p@s3cr3t@host`): the URL parser ends the password at the first
    '@' and takes the rest for the host. Now the URL is refused saying to write it as %40, nothing of the password
    shown; before, "cannot use the database at postgresql+psycopg://postgres:***@s3cr3t@127.0.0.1...: failed to
    resolve host 's3cr3t@127.0.0.1'", the password's tail in the clear."""
    from indexer.store.sql_migrate import safe_url

    url = f"postgresql+psycopg://{userinfo}@127.0.0.1:5432/test"
    with pytest.raises(StoreError, match="%40") as info:
        Store(url)
    shown = str(info.value) + safe_url(url)
    assert "s3" not in shown and "cr3t" not in shown and "t0p" not in shown
    assert "postgres:***@127.0.0.1:5432/test" in str(info.value)


@pytest.mark.postgres
def test_a_user_the_server_refuses_is_told_what_to_grant_not_to_check_the_url(pg_url):
    """PostgreSQL answering that the URL's user may not log in, or may not connect to its database (CONNECT revoked
    from PUBLIC, as a hardened server does), or refusing its password or its host (pg_hba.conf): the error says what
    the server refused and what to grant or fix (`ALTER ROLE ... LOGIN`, `GRANT CONNECT ON DATABASE ...`); before,
    "Check the URL (...: host, port, user, database name, file path) and that the server is running and reachable",
    of a server that answered."""
    import uuid

    import psycopg
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    from indexer.store.sql_migrate import connect_error

    base = make_url(pg_url)
    tag = uuid.uuid4().hex[:10]
    role, database = f"ts_role_{tag}", f"ts_db_{tag}"
    admin = create_engine(base.set(query={}), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'create role "{role}" nologin')
        conn.exec_driver_sql(f'create database "{database}"')
        conn.exec_driver_sql(f'revoke connect on database "{database}" from public')
    try:
        with pytest.raises(StoreError) as no_login:
            Store(base.set(username=role).render_as_string(hide_password=False))
        with admin.connect() as conn:
            conn.exec_driver_sql(f'alter role "{role}" login')
        with pytest.raises(StoreError) as no_connect:
            Store(base.set(username=role, database=database, query={}).render_as_string(hide_password=False))
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'drop database if exists "{database}"')
            conn.exec_driver_sql(f'drop role if exists "{role}"')
        admin.dispose()
    assert f'ALTER ROLE "{role}" LOGIN' in str(no_login.value), no_login.value
    assert f'GRANT CONNECT ON DATABASE "{database}" TO "{role}"' in str(no_connect.value), no_connect.value
    for info in (no_login, no_connect):
        assert "server is running" not in str(info.value), info.value
    # what a server asking for passwords says (this one trusts its local users): the password, or pg_hba.conf
    url = base.set(username=role, password="wrong")
    said = {why: str(connect_error(url, psycopg.OperationalError(
        f'connection failed: connection to server at "127.0.0.1", port 5432 failed: FATAL:  {why}')))
        for why in (f'password authentication failed for user "{role}"',
                    f'no pg_hba.conf entry for host "10.0.0.7", user "{role}", database "test", no encryption')}
    for why, message in said.items():
        assert "server is running" not in message and "wrong" not in message, message
    assert "%40" in said[f'password authentication failed for user "{role}"']
    # the role is named in the ALTER ROLE to run (before: the text `ALTER ROLE {user} PASSWORD` verbatim)
    assert f'`ALTER ROLE "{role}" PASSWORD' in said[f'password authentication failed for user "{role}"']
    assert "{user}" not in said[f'password authentication failed for user "{role}"']
    assert "pg_hba.conf" in said[next(w for w in said if "pg_hba" in w)].split(". ", 1)[1]


@pytest.mark.postgres
def test_a_connect_timeout_given_in_the_url_is_the_one_used(pg_url):
    """`?connect_timeout=N` in the URL (an operator's longer wait for a far or slow server, or a shorter one) is the
    timeout the driver gets; taskspace's 5 s is the default where the URL gives none. Before, found with a server
    that accepts and never answers: `?connect_timeout=1` still waited 5 s (SQLAlchemy lets `connect_args` override
    the URL's parameters)."""
    from sqlalchemy import event

    from indexer.store.sql_migrate import CONNECT_TIMEOUT_S, make_engine

    seen = []
    for url in (pg_url + "&connect_timeout=30", pg_url):
        engine = make_engine(url)
        event.listen(engine, "do_connect", lambda dialect, rec, cargs, cparams: seen.append(cparams["connect_timeout"]))
        try:
            with engine.connect():
                pass
        finally:
            engine.dispose()
    assert [int(t) for t in seen] == [30, CONNECT_TIMEOUT_S]


@pytest.mark.postgres
def test_a_connection_parameter_the_client_refuses_is_named_not_taken_for_a_server_away(pg_url):
    """A query parameter of the URL the PostgreSQL client does not know (`?sslmod=require`, a typo) or whose value it
    refuses (`?sslmode=bogus`, `?connect_timeout=abc`), and `sslmode=require` against a server without SSL: the error names the parameter and
    what to change, no password shown; before, the driver's line and "Check the URL (...: host, port, user, database
    name, file path) and that the server is running and reachable", none of which was wrong."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    url = make_url(pg_url).set(password="t0psecret")
    said = {}
    for key, value in (("sslmod", "require"), ("sslmode", "bogus"), ("connect_timeout", "abc"), ("sslmode", "require")):
        try:
            Store(url.update_query_dict({key: value}).render_as_string(hide_password=False)).close()
        except StoreError as exc:
            said[f"{key}={value}"] = str(exc)
    assert "`sslmod`" in said["sslmod=require"] and "remove it or fix its name" in said["sslmod=require"], said
    assert "`sslmode=bogus`" in said["sslmode=bogus"] and "`connect_timeout=abc`" in said["connect_timeout=abc"], said
    engine = create_engine(make_url(pg_url).set(query={}))
    with engine.connect() as conn:
        ssl = conn.exec_driver_sql("show ssl").scalar()
    engine.dispose()
    if ssl == "off":  # this server has no SSL: sslmode=require is refused
        assert "sslmode=prefer" in said.get("sslmode=require", ""), said
    for message in said.values():
        assert "server is running" not in message and "t0psecret" not in message, message


@pytest.mark.postgres
def test_createdb_is_told_the_socket_folder_a_url_names_in_its_query(pg_url):
    """A URL reaching PostgreSQL through a unix socket names its folder as `?host=/path` (`postgresql://user@/db?host=
    /var/run/postgresql`): the `createdb` of a database that does not exist is told it (`createdb -h /path`), as it is
    told the host of a TCP URL; before, `createdb -U postgres NAME`, which tries libpq's own default socket folder."""
    from sqlalchemy.engine import make_url

    socket_dir = "/var/run/postgresql"
    port = make_url(pg_url).port or 5432
    if not os.path.exists(f"{socket_dir}/.s.PGSQL.{port}"):
        pytest.skip(f"no PostgreSQL socket in {socket_dir}")
    url = f"postgresql+psycopg://{make_url(pg_url).username}@/ts_no_such_database_s1?host={socket_dir}&port={port}"
    with pytest.raises(StoreError) as info:
        Store(url)
    assert f"createdb -h {socket_dir} -p {port} -U postgres ts_no_such_database_s1" in str(info.value), info.value
def test_a_write_of_the_vector_index_or_the_embedding_cache_past_a_file_size_limit_says_the_limit(tmp_path):
    """Under a file-size limit (`ulimit -f`, SIGXFSZ ignored: the write fails with EFBIG), a vector-index write (Qdrant
    Edge sizes its files 32 MB ahead) and an embedding-cache write that grow a file past it say the limit of N bytes
    and how to raise it, as the SQL database's does. Before, "Service runtime error: ... File too large (os error 27)"
    from the index (found running `taskspace index` under `ulimit -f 3000`) and "disk I/O error (delete the file ...)"
    from the cache, neither naming the limit."""
    code = textwrap.dedent(f"""
        import resource, signal
        from pathlib import Path
        import numpy as np
        from indexer.encoder import EmbeddingCache
        from indexer.errors import EncoderError, StoreError
        from indexer.store.vectors import Point, VectorStore
        root = Path({str(tmp_path)!r})
        cache, vs = EmbeddingCache(root / "cache.sqlite", dim=384), VectorStore(path=root / "qdrant")
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            vs.upsert("s", "models", [Point("m", np.ones(4), {{}})], dim=4)
            print("index written")
        except StoreError as exc:
            print("index:", exc)
        try:
            cache.put_many([(str(i), np.ones(384)) for i in range(2000)])
            print("cache written")
        except EncoderError as exc:
            print("cache:", exc)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    lines = res.stdout.strip().splitlines()
    assert res.returncode == 0 and len(lines) == 2, (res.stdout, res.stderr[-2000:])
    for line, what in zip(lines, ("index: ", "cache: ")):
        assert line.startswith(what) and "file-size limit of 1048576 bytes" in line and "ulimit -f" in line, line


def test_a_child_writer_of_the_vector_index_past_a_file_size_limit_says_the_limit_once(tmp_path):
    """A rebuild's child writer (indexer.store.edge_writer, Qdrant Edge) that a file-size limit stops (the child
    inherits `ulimit -f` and the ignored SIGXFSZ): the parent's error says the limit of N bytes and how to lift it, once.
    Before, no test ran that path, and its error said it twice (the child's own error carried it, and the parent added
    it again)."""
    root = tmp_path / "qdrant"
    code = textwrap.dedent(f"""
        import resource, signal
        from pathlib import Path
        import numpy as np
        from indexer.errors import StoreError
        from indexer.store import edge_writer
        from indexer.store.vectors_edge import EdgeEngine
        root = Path({str(root)!r})
        root.mkdir()
        engine = EdgeEngine(root)
        engine.create_collection("c", 4)
        engine.close()
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            edge_writer.write_in_child(root, "c", [[(i, np.ones(4, dtype="float32"), {{}}) for i in range(1, 101)]])
            print("written")
        except StoreError as exc:
            print(exc)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    out = res.stdout.strip()
    assert res.returncode == 0 and out.startswith(f"writing {root}/c in a child process failed"), (out, res.stderr[-2000:])
    assert out.count("file-size limit of 1048576 bytes") == 1 and "ulimit -f" in out, out


def test_a_write_of_the_local_qdrant_index_past_a_file_size_limit_says_the_limit(tmp_path):
    """qdrant-client's local engine (`TASKSPACE_QDRANT_ENGINE=local`, a collection kept in a SQLite file) under a
    file-size limit: a write that grows its file past it is a store error that says the limit of N bytes and how to
    lift it, as Qdrant Edge's and the embedding cache's do. Before, a `sqlite3.OperationalError: disk I/O error`
    traceback (found running the file-size test of Edge with engine="local")."""
    code = textwrap.dedent(f"""
        import resource, signal
        from pathlib import Path
        import numpy as np
        from indexer.errors import StoreError
        from indexer.store.vectors import Point, VectorStore
        vs = VectorStore(path=Path({str(tmp_path)!r}) / "qdrant", engine="local")
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            vs.upsert("s", "models", [Point(f"m{{i}}", np.ones(384), {{"x": "y" * 100}}) for i in range(3000)], dim=384)
            print("index written")
        except StoreError as exc:
            print("index:", exc)
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    out = res.stdout.strip()
    assert res.returncode == 0 and out.startswith("index: the local Qdrant index at "), (out, res.stderr[-2000:])
    assert "file-size limit of 1048576 bytes" in out and "ulimit -f" in out and "storage.sqlite" in out, out


def test_a_sqlite_file_that_cannot_be_written_says_so_and_what_to_do(tmp_path):
    """A home whose database file cannot be written while its folder can (another user's file, a file mounted
    read-only; a worker started as another user than the one who indexed): the pass fails naming the file that cannot
    be written and what to do (make it writable, or another TASKSPACE_HOME), exit 3, as a database that cannot even be
    opened does. Before, "writing to the database failed, nothing of it was saved: attempt to write a readonly database"
    alone, every scheduled pass of the worker, nothing saying why or what to do."""
    import shlex
    import shutil

    if not shutil.which("unshare"):
        pytest.skip("no unshare to mount the file read-only")
    home = tmp_path / "home"
    home.mkdir()
    Store(f"sqlite:///{home / 'taskspace.db'}", upgrade=True).close()  # a migrated database
    db = shlex.quote(str(home / "taskspace.db"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = shlex.join([sys.executable, "-m", "indexer.cli", "index"])
    res = subprocess.run(["unshare", "-Urm", "sh", "-c", f"mount --bind {db} {db} && mount -o remount,bind,ro {db} "
                          f"|| exit 97; exec {cmd}"], capture_output=True, text=True, timeout=300, cwd=root,
                         env={**os.environ, "TASKSPACE_HOME": str(home), "PYTHONPATH": root})
    if res.returncode == 97 or res.stderr.startswith("unshare:"):
        pytest.skip("mount namespaces not allowed here")
    assert res.returncode == 3, res.stderr[-2000:]
    line = res.stderr.strip().splitlines()[-1]
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr[-2000:]
    assert f"because {home / 'taskspace.db'} cannot be written" in line and "make it writable" in line, line
    assert "TASKSPACE_HOME" in line, line
