"""Engines and migrations: build a checked SQLAlchemy engine from a URL, run Alembic programmatically.

``make_engine(url)`` turns every way a URL can be wrong into a :class:`~indexer.errors.StoreError` that says
what to fix, and sets SQLite up for safe concurrent use (WAL, foreign keys, ``BEGIN IMMEDIATE`` for writes).
``upgrade(engine)`` / ``downgrade(engine, rev)`` / ``current(engine)`` / ``head()`` drive Alembic with the
scripts in ``migrations/`` (no ``alembic.ini`` needed).
"""

from __future__ import annotations

import logging
import math
import sqlite3
import time
import zlib
from pathlib import Path

from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from ..config import SECRET_PARAMS
from ..errors import (DatabaseURLError, DatabaseUnreachableError, SchemaError, StoreError, file_size_limit_note,
                      full_disk_free, unwritable)

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
CONNECT_TIMEOUT_S = 5
SQLITE_BUSY_TIMEOUT_S = 30
#: where the URL is set: the setting, or `taskspace db`'s option, which takes precedence over it
_URL_SETTING = "TASKSPACE_DATABASE_URL, or `--url` of `taskspace db`"
_URL_HELP = f"set the URL ({_URL_SETTING}) to e.g. sqlite:////abs/path/taskspace.db or postgresql+psycopg://user@host:5432/db"


def safe_url(url) -> str:
    """The URL with any password masked, for messages and logs."""
    try:
        u = _without_userinfo_in_host(make_url(url))
        secret = {k: "MASKED" for k in u.query if k.lower() in SECRET_PARAMS}  # libpq takes ?password=... too
        shown = (u.update_query_dict(secret) if secret else u).render_as_string(hide_password=True)
        return shown.replace("=MASKED", "=***") if secret else shown
    except Exception:
        return "<unparseable URL>"


def _without_userinfo_in_host(u):
    """``u`` with what its parser took for the host before an '@' masked as the password: an '@' of the password (or
    user) not percent-encoded ends the password there, and the rest of it was shown as the host."""
    if u.host and "@" in u.host:
        return u.set(host=u.host.rsplit("@", 1)[1], password="***")
    return u


def _masked_text(url: str) -> str:
    """A URL that cannot be parsed, with whatever stands where its password would be (``//user:PASSWORD@``) masked."""
    import re

    return re.sub(r"(//[^/@:]*:)[^@/]*@", r"\1***@", str(url))


def _path_given(url) -> str:
    """For a "URL" that is a file system path (``/x/home/taskspace.db``, a ``Path``, a home's folder ``/x/home``, as
    a Python caller points ``open_store`` at a home's database): ``"; it is a file path: its SQLite URL is
    'sqlite:///...'"`` (a folder's: its ``taskspace.db``); "" for anything else."""
    text = str(url)
    if not text or "://" in text:
        return ""
    path = Path(text).expanduser()
    if path.is_dir():
        path = path / "taskspace.db"
    elif not path.exists() and path.suffix not in (".db", ".sqlite", ".sqlite3"):
        return ""
    return f"; it is a file path: its SQLite URL is 'sqlite:///{path.resolve()}'"


def make_engine(url: str) -> Engine:
    """A SQLAlchemy engine for ``url``; raises DatabaseURLError (a ConfigError and a
    StoreError) for a malformed URL or unknown driver, StoreError for a missing folder."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as exc:  # ValueError: a port that is not a number (before: its traceback)
        why = f" ({exc})" if isinstance(exc, ValueError) else ""
        raise DatabaseURLError(f"database URL {_masked_text(url)!r} is not a valid SQLAlchemy URL{why}"
                               f"{_path_given(url)}; {_URL_HELP}") from None
    if parsed.host and "@" in parsed.host:  # before: the driver's "failed to resolve host 'REST_OF_PASSWORD@host'"
        raise DatabaseURLError(
            f"database URL {safe_url(url)}: its password (or user name) holds an '@' that is not percent-encoded, so "
            "the rest was read as the host; percent-encode it (each '@' as %40: `urllib.parse.quote(password, safe='')`); "
            f"{_URL_HELP}")
    if parsed.drivername == "postgres":  # libpq's other scheme (hosting platforms give DATABASE_URL so); SQLAlchemy has
        # no dialect of that name (before: "no driver for 'postgres'")
        parsed = parsed.set(drivername="postgresql")
    backend = parsed.get_backend_name()
    connect_args: dict = {}
    if backend == "sqlite":
        db = parsed.database
        if db and db != ":memory:" and not db.startswith("file:"):
            folder = Path(db).expanduser().resolve().parent
            if not folder.is_dir():
                raise StoreError(f"the folder of the SQLite database {db} does not exist; create it or {_URL_HELP}")
        if "timeout" not in parsed.query:  # the URL's own wins (before: connect_args overrode it with 30 s)
            connect_args["timeout"] = SQLITE_BUSY_TIMEOUT_S
        elif not 0 <= sqlite_busy_timeout(parsed, default=-1) < math.inf:  # before: a ValueError traceback
            raise DatabaseURLError(f"database URL {safe_url(url)}: ?timeout={parsed.query['timeout']!r} is not a number "
                                   f"of seconds; give one (e.g. ?timeout=60) or leave it out ({SQLITE_BUSY_TIMEOUT_S} s)")
    elif backend == "postgresql":
        if parsed.get_driver_name() not in {"psycopg", "psycopg2"} and parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")  # plain postgresql:// means psycopg 3 here
        if "connect_timeout" not in parsed.query:  # the URL's own wins (before: connect_args overrode it with 5 s)
            connect_args["connect_timeout"] = CONNECT_TIMEOUT_S
    pool = {"pool_size": 5, "max_overflow": POOL_CONNECTIONS - 5} if backend == "postgresql" else {}  # (the defaults)
    try:
        engine = create_engine(parsed, connect_args=connect_args, pool_pre_ping=backend != "sqlite", **pool)
    except (NoSuchModuleError, ImportError) as exc:
        raise DatabaseURLError(f"database URL {safe_url(url)}: no driver for {parsed.drivername!r} ({exc}); {_URL_HELP}") from None
    except (ArgumentError, TypeError) as exc:
        raise DatabaseURLError(f"database URL {safe_url(url)} is not usable: {exc}; {_URL_HELP}") from None
    if backend == "sqlite":
        _sqlite_setup(engine)
    return engine


def sqlite_busy_timeout(url, default: float | None = None) -> float:
    """How long a SQLite connection of ``url`` waits for another's lock, in seconds: the URL's ``?timeout=N``, else
    SQLITE_BUSY_TIMEOUT_S; ``default`` (SQLITE_BUSY_TIMEOUT_S) when the URL's is not a number."""
    default = SQLITE_BUSY_TIMEOUT_S if default is None else default
    try:
        return float(make_url(str(url)).query.get("timeout", SQLITE_BUSY_TIMEOUT_S))
    except (ArgumentError, TypeError, ValueError):
        return default


def _sqlite_setup(engine: Engine) -> None:
    """WAL (readers never block the writer; a killed process loses only its uncommitted transaction),
    foreign keys on, and our own BEGIN so a write transaction can take the write lock up front."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):
        dbapi_conn.isolation_level = None  # let the "begin" hook below emit BEGIN
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA foreign_keys=ON")
        if engine.url.database not in (None, "", ":memory:"):
            _set_wal(cur, sqlite_busy_timeout(engine.url))
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection):
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("sqlite_immediate") else "BEGIN")

    @event.listens_for(engine, "close")
    def _on_close(dbapi_conn, _record):
        _end_transaction(dbapi_conn)

    @event.listens_for(engine, "handle_error")
    def _on_error(ctx):
        # an interrupt (SIGTERM or Ctrl-C raised as a statement or a fetch returned) does not lose a SQLite connection,
        # which is in-process: keep it (its cursor closed, its transaction rolled back, as for any error). SQLAlchemy
        # takes it for lost and closes it under the open cursor; closing that cursor afterwards (its result's cleanup)
        # failed, logged as ERROR "Error closing cursor" with a traceback on the command's stderr
        if ctx.is_disconnect and not isinstance(ctx.original_exception, Exception):
            ctx.is_disconnect = False


def _end_transaction(dbapi_conn) -> None:
    """Roll back the transaction of a SQLite connection about to be closed. SQLAlchemy closes a connection whose statement
    was interrupted (SIGTERM or Ctrl-C raised as the statement returned: it takes the connection for lost), and SQLite's
    close of a connection whose statement a cursor still holds (an unread INSERT ... RETURNING or SELECT, a finished
    executemany), only makes it a zombie that keeps its transaction, and the write lock, until that cursor is freed: the
    cursor is a local of the interrupt's traceback, alive while the interrupted pass records its run (that write waited
    the 30 s busy timeout; `taskspace demo` exited 6 instead of 143). A rollback ends the transaction with the cursor
    alive."""
    try:
        if dbapi_conn.in_transaction:
            dbapi_conn.rollback()
    except sqlite3.Error:  # closed already, or a connection of another thread: nothing this close can end
        pass


def _set_wal(cur, timeout: float) -> None:
    """``PRAGMA journal_mode=WAL``, retried while the database is locked. SQLite answers this pragma with
    "database is locked" at once, without its busy timeout, while another connection holds a write lock on a
    database still in rollback-journal mode (several processes opening a new file together); WAL is a property
    of the file, so the retry usually finds it already set by the other process."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc).lower() or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


def write_connection(engine: Engine) -> Connection:
    """A connection whose transactions take the SQLite write lock at BEGIN (no upgrade deadlocks)."""
    return engine.connect().execution_options(sqlite_immediate=True)


def connect_error(url, exc: Exception) -> StoreError:
    """Turn a driver error at connect time into a StoreError that says what to fix."""
    if isinstance(exc, PoolTimeout):  # no connection was even tried: every one of this process's was in use (before:
        # SQLAlchemy's "QueuePool limit ... reached" with its link, and "check the URL and that the server is running")
        import re

        # "QueuePool limit of size 5 overflow 10 reached, connection timed out, timeout 30.00": the error carries no pool
        m = re.search(r"size (\d+) overflow (\d+) reached.*timeout ([\d.]+)", str(exc))
        size, waited = (int(m[1]) + max(0, int(m[2])), float(m[3])) if m else (POOL_CONNECTIONS, 30.0)
        where = ("look at what they wait for in pg_stat_activity and pg_locks (a LOCK TABLE another session holds, slow "
                 "statements)" if str(getattr(url, "drivername", url)).startswith("postgresql") else
                 "another process holding the SQLite database's write lock, or slow statements")
        return StoreError(
            f"cannot use the database at {safe_url(url)}: all {size} connections of this process were in use for "
            f"{waited:g} s (each query and pass holds one while the database answers it, so they were all waiting on the "
            f"database); the URL is right: {where}, then retry")
    detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "malformed" in detail or "not a database" in detail:  # SQLite's words for a damaged file: the URL is right
        return StoreError(
            f"cannot use the database at {safe_url(url)}: {detail}. The file is damaged: restore it from a backup "
            "(`sqlite3 FILE .recover` may save what is left of it); the Qdrant index beside it is derived from it")
    path = sqlite_path(url)
    if full := full_disk_note(url, detail, "; SQLite writes beside the file even to read it"):
        return StoreError(f"cannot use the database at {safe_url(url)}: {detail}{full}")
    if path is not None and (limit := file_size_limit_note(detail)):
        return StoreError(f"cannot use the database at {safe_url(url)}: {detail}{limit}")
    if path is not None and (read_only := read_only_note(url)):
        return StoreError(f"cannot use the database at {safe_url(url)}: {detail}{read_only}")
    if hint := _missing_hint(url, detail) or _refused_hint(url, detail):
        return StoreError(f"cannot use the database at {safe_url(url)}: {detail}. {hint}")
    # a server away for now (restarting, failing over) rather than a wrong URL: the worker tries its pass again soon
    away = str(getattr(url, "drivername", url)).startswith("postgresql") and any(w in detail.lower() for w in _AWAY)
    return (DatabaseUnreachableError if away else StoreError)(
        f"cannot use the database at {safe_url(url)}: {detail}. Check the URL ({_URL_SETTING}: host, port, user, "
        "database name, file path) and that the server is running and reachable"
    )


#: what PostgreSQL (or the connection to it) says while the server is away for now: restarting, failing over, in
#: recovery, or not answering in time (DatabaseUnreachableError); a wrong password, user or database is not among them
_AWAY = ("connection refused", "the database system is starting up", "the database system is shutting down",
         "the database system is in recovery mode", "the database system is not yet accepting connections",
         "is not currently accepting connections", "timeout expired", "connection timed out")


#: what PostgreSQL says when it refuses a connection for its limits (SQLSTATE 53300, too_many_connections)
_AT_LIMIT = ("too many connections", "too many clients", "remaining connection slots are reserved")
#: the most connections one PostgreSQL engine opens (:func:`make_engine`: 5 kept, 10 more under load, SQLAlchemy's defaults)
POOL_CONNECTIONS = 15


def _postgresql_url(url):
    """``url`` (a string or SQLAlchemy's URL) as SQLAlchemy's URL when it is a PostgreSQL one, else None (a hint is an
    extra: a URL that does not parse gets none)."""
    try:
        u = make_url(str(url)) if not hasattr(url, "database") else url
    except Exception:  # noqa: BLE001 - the hint is an extra; the error stands without it
        return None
    return u if u.drivername.startswith("postgresql") else None


def _missing_hint(url, detail: str) -> str:
    """What to do when PostgreSQL says the database or the role of the URL does not exist (a first setup): create it,
    as its superuser (``createdb``, ``createuser``); or that it is at its connection limit: what to change; "" otherwise."""
    if (u := _postgresql_url(url)) is None:
        return ""
    if any(w in detail for w in _AT_LIMIT):  # the server answered and refused: the URL is right (before: "check the URL")
        return ("The server is at its connection limit (max_connections, or a CONNECTION LIMIT set for this database or "
                f"user); the URL is right. Each taskspace process keeps a pool of up to {POOL_CONNECTIONS} connections "
                "(`taskspace serve` under load, a pass): raise the limit, run fewer processes against this database, or "
                "put a connection pooler (PgBouncer) in front; retry when connections are free")
    # a unix socket's folder (and its port) may be given as the URL's ?host=/path (and ?port=N) instead
    host, port = u.host or u.query.get("host"), u.port or u.query.get("port")
    server = " ".join(f"{flag} {value}" for flag, value in (("-h", host), ("-p", port))
                      if isinstance(value, (str, int)) and value)
    server = f" {server}" if server else ""
    if u.database and f'database "{u.database}" does not exist' in detail:
        owner = f" -O {u.username}" if u.username and u.username != "postgres" else ""
        return (f"Create it (`createdb{server} -U postgres{owner} {u.database}`, or `CREATE DATABASE \"{u.database}\"` as "
                f"a user who may) and then `taskspace db upgrade`, or name an existing database in the URL ({_URL_SETTING})")
    if u.username and f'role "{u.username}" does not exist' in detail:
        return (f"Create the user (`createuser{server} -U postgres {u.username}`, or `CREATE ROLE \"{u.username}\" LOGIN`), "
                f"or name an existing user in the URL ({_URL_SETTING})")
    return ""


def _refused_hint(url, detail: str) -> str:
    """What to grant or fix when PostgreSQL answered and refused the URL's user (no LOGIN, no CONNECT on the database,
    its password, pg_hba.conf), or its client refused a parameter of the URL (an unknown one, a bad value, an sslmode
    the server cannot meet), rather than "check the URL and that the server is running"; "" otherwise."""
    if (u := _postgresql_url(url)) is None:
        return ""
    user = f'"{u.username}"' if u.username else "the user"
    if "is not permitted to log in" in detail:
        return (f"The user may not log in: let it, as a superuser (`ALTER ROLE {user} LOGIN`), or name a user who may "
                f"in the URL ({_URL_SETTING})")
    if u.database and f'permission denied for database "{u.database}"' in detail:
        return (f"The user may not connect to this database: grant it, as the database's owner (`GRANT CONNECT ON "
                f"DATABASE \"{u.database}\" TO {user}`), or name a user who may in the URL ({_URL_SETTING})")
    if "password authentication failed" in detail:
        return (f"The server refused the password of {user}: fix it in the URL ({_URL_SETTING}; percent-encoded, "
                f"each '@' as %40: `urllib.parse.quote(password, safe='')`) or set it for the user (`ALTER ROLE {user} PASSWORD '...'`)")
    import re

    # the client refused a parameter after the URL's '?' before it reached the server (a typo, a bad value), or the
    # server has no SSL for an sslmode that requires it
    if m := re.search(r'invalid connection option "([^"]+)"', detail):
        return (f"The URL's `{m[1]}` is no connection parameter of PostgreSQL's client (every parameter after '?' is "
                f"passed to it): remove it or fix its name in the URL ({_URL_SETTING}); the parameters: "
                "https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-PARAMKEYWORDS")
    m = re.search(r'invalid (\w+) value: "([^"]*)"', detail) or re.search(r"bad value for (\w+): '([^']*)'", detail)
    if m and m[1] in u.query:
        return f"The URL's `{m[1]}={m[2]}` is not a value the client takes: fix it in the URL ({_URL_SETTING})"
    if "server does not support SSL, but SSL was required" in detail:
        return ("The server does not accept SSL connections and the URL's sslmode requires them: enable SSL on the "
                f"server (ssl = on), or set sslmode=prefer (or disable) in the URL ({_URL_SETTING})")
    if "no pg_hba.conf entry" in detail:
        return ("The server's pg_hba.conf admits no connection of this host, user and database (and encryption): add "
                "a line for them there and reload the server (`SELECT pg_reload_conf()`), or connect as they allow "
                "(another user or database, `?sslmode=require`)")
    return ""


def read_only_note(url) -> str:
    """``", because F cannot be written ...: make it writable, or ..."`` for a SQLite database whose file or folder
    cannot be written (a read-only file system, no write permission: another user's file); "" otherwise."""
    path = sqlite_path(url)
    read_only = unwritable(path) if path is not None else None
    if read_only is None:
        return ""
    return (f", because {read_only} cannot be written (a read-only file system, or no write permission): SQLite writes "
            "beside the file even to read it (its write-ahead log and shared-memory files), so make it writable, or set "
            "TASKSPACE_HOME (or TASKSPACE_DATABASE_URL) to a place you can write")


def sqlite_path(url) -> Path | None:
    """The file of a SQLite database URL (a string or a SQLAlchemy URL), ``~`` expanded; None for another database,
    one in memory, a ``file:`` URI or a URL that does not parse (opening it says what is wrong)."""
    try:
        u = make_url(str(url)) if not hasattr(url, "get_backend_name") else url
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number (before: a search's traceback)
        return None
    db = u.database
    if u.get_backend_name() != "sqlite" or not db or db == ":memory:" or db.startswith("file:"):
        return None
    return Path(db).expanduser()


def file_identity(path: Path | None) -> tuple[int, int] | None:
    """The device and inode of ``path`` (None for no path or no file): which file a name stands for, to tell a
    database file deleted or replaced under an open store (:meth:`indexer.store.sql.Store.check_file`)."""
    if path is None:
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def full_disk_note(url, detail: str, why: str = "") -> str:
    """When ``detail`` (a SQLite error's text) is a full disk's under the SQLite database ``url``: what to say of it,
    beginning ", because the disk holding FOLDER is full (N kB free...)" and saying what to do; "" otherwise (another
    error, a server database). ``why``: said after the free space (opening: SQLite writes beside the file even to read
    it). For opening the database and for a write that failed (a source's ingest: before, "database or disk is full"
    alone)."""
    path = sqlite_path(url)
    if path is None or (free := full_disk_free(path.parent, detail)) is None:
        return ""
    return (f", because the disk holding {path.parent} is full ({_free_text(free)} free{why}): free some space there, "
            "or set TASKSPACE_HOME (or TASKSPACE_DATABASE_URL) to a place with room")


def _free_text(free: int) -> str:
    return f"{free} bytes" if free < 1 << 10 else f"{free >> 10} kB"


def _quiet_alembic() -> None:
    """Alembic's INFO chatter only with --verbose (DEBUG)."""
    if not logging.getLogger().isEnabledFor(logging.DEBUG):
        logging.getLogger("alembic").setLevel(logging.WARNING)


def _config(connection: Connection | None = None):
    _quiet_alembic()
    from alembic.config import Config

    if not (MIGRATIONS_DIR / "env.py").is_file():
        raise StoreError(f"Alembic migrations not found at {MIGRATIONS_DIR}; reinstall taskspace from its source tree")
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


#: The newest revision in migrations/versions (a test keeps it equal to Alembic's head); opening a store
#: compares against it without importing Alembic.
HEAD = "0020"


def head() -> str:
    """The newest migration revision in ``migrations/versions`` (asks Alembic; see also :data:`HEAD`)."""
    return _script().get_current_head()


def known_revisions() -> set[str]:
    return {s.revision for s in _script().walk_revisions()}


def current(engine: Engine) -> str | None:
    """The database's migration revision (None for an empty database). Plain SQL, so opening a store does not
    import Alembic; the first connection is also the fail-fast connectivity check."""
    try:
        with engine.connect() as conn:
            if conn.dialect.name == "postgresql" and conn.exec_driver_sql("select current_schema()").scalar() is None:
                path = conn.exec_driver_sql("show search_path").scalar()
                # a SchemaError (exit 2, permanent: a worker ends with it) as a database without the tables is; before,
                # a plain StoreError, which a worker retried every pass for ever
                raise SchemaError(  # before: "no taskspace tables; run `taskspace db upgrade`", which then failed
                    f"the database at {safe_url(engine.url)} has no schema to use: its search_path ({path}) names no "
                    "schema that exists and this user may use; create it (`CREATE SCHEMA name`), grant the user "
                    "USAGE on it, or fix the search_path given in TASKSPACE_DATABASE_URL (options=-csearch_path=...) "
                    "or set for the user")
            if not inspect(conn).has_table("alembic_version"):
                return None
            rows = conn.execute(text("select version_num from alembic_version")).scalars().all()
    except SQLAlchemyError as exc:
        raise connect_error(engine.url, exc) from exc
    if len(rows) > 1:
        raise StoreError(f"the database at {safe_url(engine.url)} has several Alembic heads {rows}; fix alembic_version")
    return rows[0] if rows else None


def _migrate(engine: Engine, fn, rev: str) -> None:
    from alembic.util import CommandError

    try:
        with write_connection(engine) as conn:
            with conn.begin():
                if conn.dialect.name == "postgresql":  # one migrator at a time per database + schema
                    key = zlib.crc32(b"taskspace-migrate:" + str(conn.exec_driver_sql("select current_schema()").scalar()).encode())
                    conn.execute(text("select pg_advisory_xact_lock(:k)"), {"k": key})
                fn(_config(conn), rev)
    except SQLAlchemyError as exc:  # the driver's first line, as every other store error (before: the SQL of the
        # failing CREATE TABLE and SQLAlchemy's link too)
        detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        if getattr(getattr(exc, "orig", None), "sqlstate", None) == "42501":  # insufficient privilege
            detail += ("; migrate as a user that may create tables there (the schema's owner), or grant it "
                       "(GRANT CREATE ON SCHEMA name TO user)")
        raise StoreError(f"migrating {safe_url(engine.url)} to {rev} failed: {detail}; nothing was changed") from exc
    except CommandError as exc:  # a revision Alembic cannot place: before, its traceback
        raise _revision_error(engine, rev, exc) from None


def _revision_error(engine: Engine, rev: str, exc: Exception) -> Exception:
    """What to say when Alembic cannot migrate to ``rev``: the database is at a revision this taskspace does not know
    (written by a newer taskspace: a StoreError), or ``rev`` is not a revision (or not one to go to from here: a
    ConfigError naming it and the known revisions)."""
    from ..errors import ConfigError

    cur, where = current(engine), safe_url(engine.url)
    known = known_revisions()
    if cur is not None and cur not in known:
        return StoreError(f"the database at {where} is at schema {cur}, newer than this taskspace (head {head()}); "
                          "upgrade taskspace (this one cannot migrate it up or down)")
    detail = " ".join(str(exc).split())
    return ConfigError(f"cannot migrate the database at {where} (at {cur or '(empty)'}) to revision {rev!r}: {detail}; "
                       f"revisions: base, {', '.join(sorted(known))}, head")


def upgrade(engine: Engine, rev: str = "head") -> None:
    """Migrate the database up to ``rev`` (default: head), creating every table."""
    _quiet_alembic()
    from alembic import command

    _migrate(engine, command.upgrade, rev)


def downgrade(engine: Engine, rev: str) -> None:
    """Migrate the database down to ``rev`` (``base`` drops every table)."""
    _quiet_alembic()
    from alembic import command

    _migrate(engine, command.downgrade, rev)


def with_search_path(url: str, schema: str) -> str:
    """A PostgreSQL URL whose connections use ``schema`` (tests give each test its own schema)."""
    return make_url(url).update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)


def create_schema(url: str, schema: str) -> None:
    """Create a PostgreSQL schema (raises StoreError when the server is unreachable)."""
    _schema_ddl(url, f'create schema "{schema}"')


def drop_schema(url: str, schema: str) -> None:
    _schema_ddl(url, f'drop schema if exists "{schema}" cascade')


def _schema_ddl(url: str, ddl: str) -> None:
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(ddl)
    except SQLAlchemyError as exc:
        raise connect_error(url, exc) from exc
    finally:
        engine.dispose()


# -- by URL: what `taskspace db ...` calls ---------------------------------------------------------------------


def _url_or_default(url: str | None, make: bool = True) -> str:
    """``url``, or the configured database's URL, its home created when ``make`` (an upgrade, a downgrade; not a
    status, which creates nothing)."""
    from ..config import get_settings

    settings = get_settings()
    if url is None:
        if make and settings.is_default_database:
            from ..config import make_folder

            make_folder("TASKSPACE_HOME", settings.home)
        return settings.database_url
    return url


def status(url: str | None = None) -> dict:
    """``{"url", "current", "head", "newer"}`` of the database at ``url`` (default: the configured one); ``newer``: the
    database is at a revision this taskspace does not know (a newer taskspace migrated it: `db upgrade` cannot)."""
    from ..config import get_settings

    default_home = url is None and get_settings().is_default_database
    url = _url_or_default(url, make=False)
    path = sqlite_path(url)
    if default_home and path is not None and not path.parent.is_dir():  # a home not made yet: empty, and not made
        # (before: a status run in a folder without ./.taskspace created it)
        return {"url": safe_url(url), "current": None, "head": head(), "newer": False}
    engine = make_engine(url)
    try:
        # a SQLite file that does not exist is empty, and stays absent: connecting would create it, and an empty file
        # where the database was deleted turned `check` and `reindex` from "the SQL database is missing" to advising a
        # reindex that drops the index
        cur = None if _absent_sqlite_file(engine) else current(engine)
        return {"url": safe_url(url), "current": cur, "head": head(),
                "newer": cur is not None and cur not in known_revisions()}
    finally:
        engine.dispose()


def history(url: str | None = None) -> dict:
    """:func:`status` and ``revisions``: every schema revision this taskspace knows, oldest first, as ``(revision,
    description)`` (the first paragraph of its migration's docstring, on one line, shortened at a word to
    :data:`HISTORY_WIDTH` with "..."): what `taskspace db history` lists. Before, the docstring's first line, cut where
    its wrapping happened to fall ("... outcomes (packed blocks),")."""
    import textwrap

    r = status(url)
    r["revisions"] = [(sc.revision, textwrap.shorten((sc.doc or "").strip().split("\n\n")[0], HISTORY_WIDTH,
                                                     placeholder=" ..."))
                      for sc in reversed(list(_script().walk_revisions()))]
    return r


#: the longest description `taskspace db history` shows of a revision (its revision and marks beside it)
HISTORY_WIDTH = 100


def _absent_sqlite_file(engine: Engine) -> bool:
    """True for a SQLite database (a file, not in memory nor a ``file:`` URI) whose file does not exist."""
    path = sqlite_path(engine.url)
    return path is not None and not path.exists()


def _migrate_url(url: str | None, step, rev: str) -> dict:
    """Run ``step(engine, rev)`` (upgrade or downgrade) on the database at ``url``; report from/to revisions."""
    url = _url_or_default(url)
    engine = make_engine(url)
    try:
        before = current(engine)
        step(engine, rev)
        return {"url": safe_url(url), "from": before, "to": current(engine)}
    finally:
        engine.dispose()


def upgrade_url(url: str | None = None, rev: str = "head") -> dict:
    return _migrate_url(url, _upgrade_only, rev)


def _upgrade_only(engine: Engine, rev: str) -> None:
    """:func:`upgrade`, refusing a revision the database is already past: Alembic does nothing then, and `taskspace db
    upgrade 0005` on a database at 0013 reported "0013 -> 0013", exit 0, as if that were 0005."""
    from ..errors import ConfigError

    cur = current(engine)
    order = [s.revision for s in _script().walk_revisions()][::-1]  # base first (the chain is linear)
    if cur in order and rev in order and order.index(rev) < order.index(cur):
        raise ConfigError(f"the database at {safe_url(engine.url)} is at {cur}, past {rev}: `taskspace db upgrade` "
                          f"only goes up; `taskspace db downgrade {rev} --yes` goes down to it (deleting the data of "
                          "what it drops)")
    upgrade(engine, rev)


def _script():
    _quiet_alembic()
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config())


def downgrade_url(url: str | None, rev: str) -> dict:
    return _migrate_url(url, downgrade, rev)


def schema_diff(url: str) -> list:
    """Differences between the migrated database and the ORM tables (empty when the migrations are complete)."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from .sql_models import UNDECLARED_INDEXES, Base

    def include(name, type_, parent_names) -> bool:
        return not (type_ == "index" and name in UNDECLARED_INDEXES)

    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": True, "include_name": include})
            return [d for d in compare_metadata(ctx, Base.metadata)]
    finally:
        engine.dispose()


def table_names(url: str) -> list[str]:
    """Tables in the database's current schema (for tests and diagnostics)."""
    from sqlalchemy import inspect

    engine = make_engine(url)
    try:
        return sorted(inspect(engine).get_table_names())
    finally:
        engine.dispose()
