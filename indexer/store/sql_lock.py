"""One holder per database for the indexing worker (``Store.lock(name)``).

- PostgreSQL: a session-level advisory lock on a dedicated connection, keyed by database, schema and
  name. The server releases it when the holder's connection ends, so a killed process never leaves it held.
- SQLite: an exclusive ``fcntl`` lock on ``<database file>.<name>.lock`` holding the owner's pid; the kernel
  releases it when the process dies. An in-memory database uses a process-local lock.

A second holder gets :class:`~indexer.errors.BusyError` naming the current holder.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import zlib
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from ..errors import BusyError

log = logging.getLogger(__name__)
_local_locks: dict[str, threading.Lock] = {}
_local_guard = threading.Lock()


def _busy(name: str, where: str, holder: str) -> BusyError:
    return BusyError(
        f"another taskspace process holds the {name!r} lock on {where} ({holder}); wait for it to finish "
        "(`taskspace runs` shows the running pass) or stop it, then retry"
    )


def _holder_name() -> str:
    """Who holds a lock, as the SQLite lock file says it: ``pid N on HOST`` (PostgreSQL keeps 63 bytes of it)."""
    return f"pid {os.getpid()} on {socket.gethostname()}"[:63]


@contextlib.contextmanager
def pg_lock(engine: Engine, name: str):
    conn = engine.connect()
    try:
        scope = conn.exec_driver_sql("select current_database() || '.' || current_schema()").scalar()
        key = zlib.crc32(f"taskspace:{scope}:{name}".encode())
        got = conn.execute(text("select pg_try_advisory_lock(:k)"), {"k": key}).scalar()
        if got:  # the holder's own pid and host, for a second holder's message (the backend's pid is the server's)
            conn.execute(text("select set_config('application_name', :n, false)"), {"n": _holder_name()})
        conn.commit()
        if not got:
            holder = conn.execute(
                text(
                    "select string_agg(coalesce(nullif(a.application_name, ''), 'a client') || ', server backend pid '"
                    " || l.pid::text, '; ') from pg_locks l left join pg_stat_activity a on a.pid = l.pid "
                    "where l.locktype = 'advisory' and l.objid = (:k)::bigint::oid and l.granted"
                ),
                {"k": key},
            ).scalar()
            conn.commit()
            raise _busy(name, f"PostgreSQL database {scope}", holder or "server backend pid ?")
        try:
            yield
        finally:
            try:
                conn.execute(text("select pg_advisory_unlock(:k)"), {"k": key})
                conn.commit()
            except SQLAlchemyError as exc:  # the session ended (the server restarted, pg_terminate_backend): its
                # locks went with it. Before, a raw OperationalError traceback here, hiding the pass's own outcome
                log.warning("the connection holding the %r lock on PostgreSQL database %s was lost before the lock was "
                            "released (%s); the server released it with the session", name, scope,
                            str(getattr(exc, "orig", exc)).strip().splitlines()[0] if str(exc).strip() else exc)
    finally:
        conn.close()


@contextlib.contextmanager
def sqlite_lock(database: str | None, name: str):
    if not database or database == ":memory:" or database.startswith("file:"):
        with _local_guard:
            lock = _local_locks.setdefault(f"{database}:{name}", threading.Lock())
        if not lock.acquire(blocking=False):
            raise _busy(name, "the in-memory database", f"this process, pid {os.getpid()}")
        try:
            yield
        finally:
            lock.release()
        return
    import fcntl

    path = Path(f"{Path(database).expanduser().resolve()}.{name}.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "unknown pid"
            raise _busy(name, str(database), holder) from None
        try:  # who holds it, for the next opener's message; the flock is the lock
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{_holder_name()}\n".encode(), 0)
        except OSError as exc:  # a full disk: the lock is held all the same (before: an OSError traceback, exit 1)
            log.debug("cannot write the holder into %s: %s", path, exc)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
