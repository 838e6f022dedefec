"""One holder per database for the indexing worker (``Store.lock(name)``).

- PostgreSQL: a session-level advisory lock on a dedicated connection, keyed by database, schema and
  name. The server releases it when the holder's connection ends, so a killed process never leaves it held.
- SQLite: an exclusive ``fcntl`` lock on ``<database file>.<name>.lock`` holding the owner's pid; the kernel
  releases it when the process dies. An in-memory database uses a process-local lock.

A second holder gets :class:`~indexer.errors.BusyError` naming the current holder. The context gives a :class:`Held`:
a long holder calls ``held.ensure()`` between its stages, which on PostgreSQL takes the lock again when the server ended
its session (or raises BusyError when another process took it meanwhile).
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

from ..errors import BusyError, running_command

log = logging.getLogger(__name__)
_local_locks: dict[str, threading.Lock] = {}
_local_guard = threading.Lock()


def _busy(name: str, where: str, holder: str) -> BusyError:
    held = f"another taskspace process holds the {name!r} lock on {where} ({holder})"
    # the advice to retry is for a command; the worker waiting for the lock retries by itself (BusyError.held)
    return BusyError(f"{held}; wait for it to finish (`taskspace runs` shows the running pass) or stop it, then retry",
                     held=f"{held}; `taskspace runs` shows the running pass")


def _holder_name() -> str:
    """Who holds a lock, as the SQLite lock file says it: ``pid N on HOST, COMMAND`` (PostgreSQL keeps 63 bytes of it,
    its ``application_name``): the command (:func:`~indexer.errors.running_command`) so that the operator of a waiting
    worker tells a pass of another worker from an ``index`` run by hand or a server."""
    return f"pid {os.getpid()} on {socket.gethostname()}, {running_command()}"[:63]


def _holders(conn, key: int) -> str | None:
    """Who holds the advisory lock ``key`` (its holder's ``application_name`` and server backend pid), or None."""
    holder = conn.execute(
        text(
            "select string_agg(coalesce(nullif(a.application_name, ''), 'a client') || ', server backend pid '"
            " || l.pid::text, '; ') from pg_locks l left join pg_stat_activity a on a.pid = l.pid "
            "where l.locktype = 'advisory' and l.objid = (:k)::bigint::oid and l.granted"
        ),
        {"k": key},
    ).scalar()
    conn.commit()
    return holder


def _lock_key(conn, name: str) -> tuple[str, int]:
    """``(scope, key)`` of the advisory lock ``name``: the database and schema ``conn`` is in (``db.schema``) and the
    lock's key in it, one per lock name and schema (:func:`pg_lock` takes it, :func:`pg_lock_holder` looks at it)."""
    scope = conn.exec_driver_sql("select current_database() || '.' || current_schema()").scalar()
    return scope, zlib.crc32(f"taskspace:{scope}:{name}".encode())


def pg_lock_holder(engine: Engine, name: str) -> str | None:
    """Who holds the advisory lock ``name`` now (as :func:`_holders` says it), or None, without asking for it: a
    reader (`taskspace runs`) must not make a pass starting at that moment meet a busy lock."""
    with engine.connect() as conn:
        return _holders(conn, _lock_key(conn, name)[1])


def _try_lock(conn, key: int) -> bool:
    got = conn.execute(text("select pg_try_advisory_lock(:k)"), {"k": key}).scalar()
    if got:  # the holder's own pid and host, for a second holder's message (the backend's pid is the server's)
        conn.execute(text("select set_config('application_name', :n, false)"), {"n": _holder_name()})
    conn.commit()
    return bool(got)


def _first_line(exc: BaseException) -> str:
    return str(getattr(exc, "orig", exc)).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


class Held:
    """A held lock, as ``with store.lock(name) as held:`` gives it. ``held.ensure()`` (a long holder calls it between
    its stages: :class:`indexer.pipeline.Indexer`) checks the lock is still held; on SQLite the kernel holds it for the
    process's life, so there is nothing to check."""

    def ensure(self) -> None:
        return None


class _PgHeld(Held):
    """A PostgreSQL advisory lock on its own connection. The server releases it when it ends that session (a restart,
    ``pg_terminate_backend``, ``idle_session_timeout``) while the holder runs on: :meth:`ensure` takes it again on a
    new connection, or raises BusyError when another process took it meanwhile. Before, a pass whose lock connection
    was ended ran on without the lock, and a second pass (a waiting worker) took it and ran beside it, marking the
    first pass's run ``killed`` while it still ran."""

    def __init__(self, engine: Engine, conn, key: int, name: str, scope: str):
        self.engine, self.conn, self.key, self.name, self.scope = engine, conn, key, name, scope
        self.lost = False  # the lock went with its session and another process holds it now: nothing to release

    def ensure(self) -> None:
        try:
            self.conn.exec_driver_sql("select 1")
            self.conn.commit()
            return  # the session lives, so does its lock
        except SQLAlchemyError as exc:
            lost = _first_line(exc)
        with contextlib.suppress(SQLAlchemyError):
            self.conn.close()
        from .sql_migrate import connect_error

        try:
            conn = self.engine.connect()
        except SQLAlchemyError as exc:  # the server is gone, not only the session: the pass's next write says so too
            self.lost = True
            raise connect_error(self.engine.url, exc) from exc
        try:
            if _try_lock(conn, self.key):
                self.conn = conn
                log.warning("the connection holding the %r lock on PostgreSQL database %s was lost (%s); the server "
                            "released the lock with the session, and this process took it again", self.name, self.scope,
                            lost)
                return
            holder = _holders(conn, self.key) or "server backend pid ?"
        except SQLAlchemyError as exc:
            conn.close()
            self.lost = True
            raise connect_error(self.engine.url, exc) from exc
        except BaseException:
            conn.close()
            raise
        conn.close()
        self.lost = True
        raise BusyError(
            f"the connection holding the {self.name!r} lock on PostgreSQL database {self.scope} was lost ({lost}), the "
            f"server released the lock with it, and another taskspace process took it ({holder}): this pass stops here "
            "so that two passes do not run at once; what it committed stays, and the other pass (or the next one) "
            "completes it")


@contextlib.contextmanager
def pg_lock(engine: Engine, name: str):
    from .sql_migrate import connect_error

    try:  # the server unreachable now (a restart between opening the store and this): a StoreError (before: a raw
        conn = engine.connect()  # OperationalError traceback, "an unexpected OperationalError" in a worker's log)
    except SQLAlchemyError as exc:
        raise connect_error(engine.url, exc) from exc
    held = None
    try:
        try:
            scope, key = _lock_key(conn, name)
            got = _try_lock(conn, key)
            holder = None if got else _holders(conn, key)
        except SQLAlchemyError as exc:
            raise connect_error(engine.url, exc) from exc
        if not got:
            raise _busy(name, f"PostgreSQL database {scope}", holder or "server backend pid ?")
        held = _PgHeld(engine, conn, key, name, scope)
        try:
            yield held
        finally:
            try:
                if not held.lost:
                    held.conn.execute(text("select pg_advisory_unlock(:k)"), {"k": key})
                    held.conn.commit()
            except SQLAlchemyError as exc:  # the session ended (the server restarted, pg_terminate_backend): its
                # locks went with it. Before, a raw OperationalError traceback here, hiding the pass's own outcome
                log.warning("the connection holding the %r lock on PostgreSQL database %s was lost before the lock was "
                            "released (%s); the server released it with the session", name, scope, _first_line(exc))
    finally:
        if held is not None and held.conn is not conn:
            held.conn.close()
        conn.close()


@contextlib.contextmanager
def sqlite_lock(database: str | None, name: str):
    if not database or database == ":memory:" or database.startswith("file:"):
        with _local_guard:
            lock = _local_locks.setdefault(f"{database}:{name}", threading.Lock())
        if not lock.acquire(blocking=False):
            raise _busy(name, "the in-memory database", f"this process, pid {os.getpid()}")
        try:
            yield Held()
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
            holder = f"{_holder_name()}\n".encode()
            os.pwrite(fd, holder, 0)  # written over the last holder's name, then cut to it: the file is never empty
            os.ftruncate(fd, len(holder))
        except OSError as exc:  # a full disk: the lock is held all the same (before: an OSError traceback, exit 1)
            with contextlib.suppress(OSError):  # no earlier holder's name left in it
                os.ftruncate(fd, 0)
            log.debug("cannot write the holder into %s: %s", path, exc)
        try:
            yield Held()
        finally:
            # the name stays until the flock is released (the next holder writes over it): before, the file was emptied
            # first, so an opener between the two read no holder, and a worker waiting for the lock logged a second
            # "another taskspace process holds ... (unknown pid)" as the holder released it
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
