"""The SQL store: the source of truth (SQLite file by default, PostgreSQL in production).

Only ``indexer/store/sql*.py`` import SQLAlchemy. Tables live in :mod:`indexer.store.sql_models`
(SQLAlchemy 2 typed ORM); Alembic (``migrations/``) is the only thing that creates them. The Store is split
over ``sql.py`` (opening, models, sources, lock), ``sql_ingest.py``, ``sql_reads.py``, ``sql_derived.py``
(spaces, vectors, runs), ``sql_lock.py``, ``sql_migrate.py`` (engines, Alembic) and ``sql_types.py`` (records).

Opening
-------
``Store(url)`` or ``open_store(url)``: the URL defaults to ``get_settings().database_url``
(``TASKSPACE_DATABASE_URL``, else ``sqlite:///$TASKSPACE_HOME/taskspace.db``). The embedded default SQLite is
migrated to head automatically on first use; any other database must be at head already
(``taskspace db upgrade``), else :class:`~indexer.errors.StoreError` says so. A bad or unreachable URL fails
fast (5 s connect timeout) with a StoreError that says what to fix. ``close`` (or ``with Store(...)``) disposes
the engine. Any database failure inside an operation raises StoreError naming the operation ("ingesting X
failed, nothing of it was saved: ..."); a SQLite writer blocked past the 30 s busy timeout gets BusyError.
Bad input raises InputError naming the item (score outside [0, 1], empty text, over-long names).

The operations below are methods of :class:`Store` (their signatures and docstrings are in the mixin that
defines them); the records they take and return are defined in :mod:`.sql_types` and re-exported here.

Writing results (input = :mod:`indexer.records`)
-----------------------------------------------
- ``ingest`` a :class:`~indexer.records.SourceBatch` -> :class:`IngestResult`: one transaction per source,
  committed whole or not at all. A source whose location + revision is already ingested is skipped and nothing
  changes. A new revision of a known source replaces that source's outcomes; no revision means "use a
  fingerprint of the batch content". Prompts are keyed by ``prompt_hash(text)``: duplicate texts are one
  prompt, and one model's outcomes on copies of a prompt within one benchmark are averaged into one graded
  score. The result counts model and prompt rows newly created and the (model, benchmark, prompt) cells
  stored after averaging.
- ``upsert_models``: Hub metadata, one dict per model with ``key`` (alias ``repo_id`` / ``id``) and any of the
  :class:`ModelRecord` field names (unknown keys raise InputError; a ``num_parameters`` of 0 or below is unknown,
  None, as :func:`indexer.records.parameter_count` reads it). Rows upserted this way get kind "hub";
  models first seen in outcomes get kind "hub" when the key looks like a repo id ("org/name") and "name"
  otherwise (e.g. "gpt-4o(eval_results/gpt4o)").
- Sources (:class:`SourceRecord`): ``get_source``, ``list_sources``, ``delete_source`` (the source and its
  outcomes; models and prompts stay), ``record_checked`` (note that a source was looked at, and the revision
  seen, without ingesting it).

Bulk reads (solver, worker, evaluator)
--------------------------------------
- ``load_outcomes`` (optionally restricted to some models or benchmarks) -> :class:`StoredOutcomes`: the
  dense models x prompts matrix, with the prompts' DB ids, hashes and benchmarks (a prompt in several
  selected benchmarks takes the first by name). A cell observed in several sources (or benchmarks) is their
  mean. Columns are sorted by (benchmark, position); rows by model key.
- Prompts: ``prompt_texts`` and ``prompt_hashes`` (by id, same order), ``prompt_ids`` (by hash).
- Models and benchmarks: ``list_models`` (all, or some keys), ``get_model`` (:class:`ModelRecord`); ``list_benchmarks``
  (:class:`BenchmarkRecord`, with the number of prompts), ``benchmark_prompts`` (prompt ids in position order).
- ``model_digests``: a hex sha256 per model over its stored outcomes; it changes iff that model's outcomes
  changed (any source, any benchmark). Kept in ``models.outcomes_digest`` by every write of outcome blocks
  (ingest, ``merge_model_names``, ``delete_source``: recomputed for the models that write touched, in its
  transaction), so reading it is one short row per model; ``computed_model_digests`` recomputes it from the blocks
  (what the column must equal); ``models_with_outcomes`` counts them.
- ``counts`` (rows per table, outcome cells) and ``database_size`` (bytes).

Embedding spaces and vectors (derived state the worker writes; Qdrant is rebuilt from these)
-------------------------------------------------------------------------------------------
- Spaces (:class:`SpaceRecord`: the encoder id including its revision, dim, lambda, eps, method and its
  params): ``get_or_create_space``, ``get_space``, ``list_spaces``; ``space_states``: every space with its
  calibration map and prior in one read (what a search reads of SQL about its space); ``space_rows`` /
  ``delete_space`` (in :mod:`.sql_records`): the rows a space holds per table, and deleting them all with the space in
  one transaction (``taskspace spaces drop``, :func:`indexer.spaces.drop_space`).
- Model vectors (:class:`ModelVector`): ``save_model_vectors`` (upsert per model; a vector of the wrong
  dimension raises DimensionError; optionally with the space's shrinkage target, a :class:`SpacePrior`
  (method ``auto-mean``), in the same transaction), ``load_model_vectors``, ``delete_model_vectors``,
  ``get_space_prior``, ``model_vector_keys`` (the models with a vector, none read), ``model_vector_matrix`` (keys
  and vectors only); ``stale_models``: the models with outcomes whose vector is missing or whose inputs digest
  differs from ``model_digests`` (a comparison of columns in SQL: each vector keeps the outcomes and prior digests
  it was solved from, set on saving when its inputs digest is theirs; only stale rows are read);
  ``orphan_model_vectors``: vectors of models left without outcomes. ``point_digests`` /
  ``claim_point_digests`` / ``save_point_digests``: the digest of the index point each vector implies
  (:func:`indexer.sync.check` compares it instead of rebuilding 32k payloads), stored by pushes and rebuilds under
  a claim token and forgotten (None) by every write of its inputs (the model's metadata, key or aliases, the vector
  row), so a digest computed from inputs that changed meanwhile is never stored; ``unpushed_models``: the models whose
  digest is unknown (an indexing pass pushes them: Hub metadata fetched after their vector was pushed). Each vector carries
  the posterior of its scores (its coverage pattern's key, lambda, residual variance); ``save_model_vectors``
  also stores the patterns' factors and the space's calibration map (:mod:`indexer.posterior`) in the same
  transaction: ``load_patterns``, ``get_space_calibration``.
- Benchmark vectors (:class:`BenchmarkVector`, the mean of a benchmark's prompt vectors):
  ``save_benchmark_vectors``, ``load_benchmark_vectors``.

Published records (:mod:`.sql_records`, ``taskspace publish`` / ``pull``)
-----------------------------------------------------------------------
- ``model_benchmark_counts``, ``import_spaces`` (one transaction for all pulled spaces), ``space_origin``,
  ``is_read_only`` / ``check_writable``: a pulled space is read-only until raw results are ingested (its marker is a
  ``sources`` row of kind ``pulled``, no table of its own).

Indexing runs and the worker lock
---------------------------------
- Runs (:class:`RunRecord`): ``start_run``, ``finish_run`` (with a status such as "ok", "failed" or "partial",
  counts, and errors as JSON-able dicts such as ``RowError.as_dict()``), ``get_run``, ``list_runs`` (newest
  first).
- ``with store.lock("index") as held:`` one holder per database: a PostgreSQL advisory lock (session level,
  released if the process dies), or an exclusive file lock next to the SQLite file. A second holder gets
  :class:`~indexer.errors.BusyError` naming the holder's pid. ``held.ensure()`` (a pass calls it between its stages)
  takes a PostgreSQL lock again when the server ended its session, or raises BusyError when another process took it.
- A transaction whose PostgreSQL session the server ended (a restart, ``pg_terminate_backend``) raises
  :class:`~indexer.errors.ConnectionLostError` (a StoreError): the same work on a fresh connection can succeed.

Migrations: :mod:`indexer.store.sql_migrate` (``upgrade_url``, ``downgrade_url``, ``status``; the
``taskspace db upgrade|current|downgrade`` commands). Tests: the ``store`` fixture (tests/conftest.py) gives an
empty migrated Store on SQLite and on PostgreSQL (own schema per test); ``db_url`` / ``pg_url`` give bare URLs.

Schema (tables; ``id`` integer primary keys; times are timezone-aware UTC)
-------------------------------------------------------------------------
- ``models``: key (unique free string: Hub repo id or a table's plain name), kind ("hub" | "name"),
  revision, author, license, num_parameters, pipeline_tag, library, tags (JSON list), downloads, likes,
  gated (str: "false" | "auto" | "manual"), created_at, last_modified, base_model, fetched_at, num_parameters_from
  (the repo whose count num_parameters is when not the model's own: an adapter's base model).
- ``benchmarks``: name (unique), group, source_task, metric, num_fewshot, config (JSON).
- ``prompts``: hash (unique, hex sha256 of the text), text.
- ``benchmark_prompts``: (benchmark_id, prompt_id) primary key, position, source_prompt_id
  (the source's own id); a prompt can be in several benchmarks.
- ``sources``: kind, location (unique), revision (ingested), seen_revision, checked_at, ingested_at, n_outcomes.
- ``outcomes``: one row per (source, model, benchmark): n, prompt_ids (int32 little-endian packed,
  sorted), scores (float32 packed, same order), model_revision, digest (sha256 of the packed payload).
  Deleted with their source.
- ``spaces``: encoder, dim, lam, eps, method, params (JSON), key (unique digest of all those), created_at.
- ``model_vectors``: (space_id, model_id) unique, dim, vector (float32 packed), n_prompts, benchmarks (JSON),
  accuracy (JSON), counts (JSON: outcome cells per benchmark of a pulled vector, migration 0014; NULL for one built
  here), inputs_digest, computed_at.
- ``benchmark_vectors``: (space_id, benchmark_id) unique, dim, vector, n_prompts, computed_at.
- ``space_priors``: space_id (primary key), dim, vector (float64 packed), n_models, computed_at.
- ``runs``: kind, started_at, finished_at, status, pid, counts (JSON), errors (JSON).
"""

from __future__ import annotations

import contextlib
import logging
import operator
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

from sqlalchemy import delete, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from ..errors import BusyError, ConnectionLostError, InputError, SchemaError, StoreError, counted, file_size_limit_note
from . import sql_lock
from . import sql_migrate as migrate
from .sql_derived import DerivedMixin
from .sql_ingest import IngestMixin
from .sql_models import Model, OutcomeBlock, Source, utcnow
from .sql_reads import ReadMixin, source_record
from .sql_records import RecordsMixin
from .sql_types import (
    MODEL_FIELDS,
    BenchmarkRecord,
    BenchmarkVector,
    IngestResult,
    ModelRecord,
    ModelVector,
    RunRecord,
    SourceRecord,
    SpacePrior,
    SpaceRecord,
    StoredOutcomes,
    chunks as _chunks,
    driver_rows_in,
    looks_like_repo_id,
)

__all__ = [  # the records are defined in sql_types (no SQLAlchemy there) and re-exported here
    "Store", "open_store", "IngestResult", "StoredOutcomes", "SourceRecord", "ModelRecord", "BenchmarkRecord",
    "SpaceRecord", "SpacePrior", "ModelVector", "BenchmarkVector", "RunRecord", "looks_like_repo_id",
]

log = logging.getLogger(__name__)
_MODEL_ALIASES = {"repo_id": "key", "id": "key", "modelId": "key", "sha": "revision", "library_name": "library",
                  "lastModified": "last_modified", "createdAt": "created_at"}


def _model_parameter_count(value, key: str) -> int | None:
    """A library caller's ``num_parameters`` for the model ``key`` as :func:`indexer.records.parameter_count` reads a
    count (0 or below: unknown, None), an integral float as its integer; anything else an InputError naming the model
    and the field. Before, 0 was stored as given, though 0 means unknown everywhere else."""
    from ..records import parameter_count

    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError("num_parameters must be a whole number of parameters (0 or None for unknown), "
                         f"not {value!r}", item=key)
    return parameter_count(value)


def _holds_files(folder) -> Path | None:
    """``folder`` when it holds a file (at any depth), else None."""
    if folder is None or not Path(folder).is_dir():
        return None
    return Path(folder) if any(p.is_file() for p in Path(folder).rglob("*")) else None


def _parse_time(value, key: str, field: str):
    if value is None or isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{field}={value!r} is not an ISO date-time", item=key) from None


class Store(IngestMixin, ReadMixin, DerivedMixin, RecordsMixin):
    """The SQL store. See the module docstring for the API."""

    def __init__(self, url: str | None = None, *, upgrade: bool | None = None):
        from ..config import get_settings

        settings = get_settings()
        if url is None:
            url = settings.database_url
            if upgrade is None:
                upgrade = settings.is_default_database
            if settings.is_default_database:
                from ..config import make_folder

                make_folder("TASKSPACE_HOME", settings.home)
        self.url = url
        self.engine: Engine = migrate.make_engine(url)
        self.dialect = self.engine.dialect.name
        # the index beside a default SQLite store that is about to be made afresh (its file gone): said as a warning;
        # another database (the demo's throwaway one) has no index of TASKSPACE_HOME beside it
        default = settings.is_default_database and not settings.qdrant_url and url == settings.database_url
        self._index_folder = settings.qdrant_path if default else None
        try:
            self._check_schema(bool(upgrade))
        except BaseException:
            self.engine.dispose()
            raise
        self._file = migrate.sqlite_path(self.engine.url)
        self._file_id = migrate.file_identity(self._file)

    def _check_schema(self, upgrade: bool) -> None:
        cur = migrate.current(self.engine)  # also the fail-fast connectivity check
        if cur == migrate.HEAD:
            return
        head = migrate.head()
        if upgrade and (cur is None or cur in migrate.known_revisions()):
            if cur is None and (index := _holds_files(self._index_folder)):
                log.warning("the database %s was missing (deleted, or moved away) though the index %s beside it is "
                            "there: making a new, empty one; the next pass ingests every source again and the run "
                            "history is gone. If that was not meant, stop taskspace and put the database back from a "
                            "backup", migrate.sqlite_path(self.url) or migrate.safe_url(self.url), index)
            log.info("migrating %s from %s to %s", migrate.safe_url(self.url), cur, head)
            migrate.upgrade(self.engine)
            return
        where = migrate.safe_url(self.url)
        if cur is None:
            raise SchemaError(f"the database at {where} has no taskspace tables; run `taskspace db upgrade` first")
        if cur not in migrate.known_revisions():
            raise SchemaError(f"the database at {where} is at schema {cur}, newer than this taskspace (head {head}); upgrade taskspace")
        raise SchemaError(f"the database at {where} is at schema {cur}, this taskspace needs {head}; run `taskspace db upgrade`")

    def check_file(self) -> None:
        """A StoreError (exit 3) naming the file when this SQLite store's file is no longer the one it opened:
        deleted (``rm taskspace.db*``) or replaced while it was open. SQLite goes on writing into a deleted file, so a
        pass that wrote into it would record success in a file nobody will read again. Nothing for another database."""
        if self._file is None or migrate.file_identity(self._file) == self._file_id:
            return
        what = "deleted" if not self._file.exists() else "replaced by another file"
        raise StoreError(
            f"the database file {self._file} was {what} while taskspace had it open: what this process wrote since went "
            "into the old file and is lost, and its run could not be recorded. The next command or pass uses the file "
            "now there (a new, empty database when there is none: every source ingested again, the run history gone); "
            "put the database back from a backup first if you have one, and do not remove it while taskspace runs")

    def close(self) -> None:
        """Close every connection; a later use of this store raises StoreError saying to open a new one, rather than
        quietly opening new connections."""
        self.engine.dispose()
        if not getattr(self, "_closed", False):
            self._closed = True
            where = migrate.safe_url(self.url)

            def refuse(*_):
                raise StoreError(f"the store of {where} is closed; open a new one (indexer.store.sql.open_store(URL), "
                                 "or leave store= out for the configured one) to use it again")

            from sqlalchemy import event

            event.listen(self.engine, "do_connect", refuse)

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({migrate.safe_url(self.url)!r})"

    # -- transactions -------------------------------------------------------------------------------------

    def _write(self, what: str = "writing to the database"):
        """A write transaction (SQLite: BEGIN IMMEDIATE). Use as ``with self._write() as conn:``;
        a database error inside becomes a StoreError saying ``what`` failed and that nothing was saved."""
        return _Tx(self.engine, write=True, what=what)

    def _read(self):
        return _Tx(self.engine, write=False, what="reading from the database")

    def _driver_insert(self, conn: Session, table: str, cols: Sequence[str], rows: list[dict], *,
                       conflict: Sequence[str] | None = None, chunk: int = 5000) -> None:
        """Insert ``rows`` (dicts with at least ``cols``) into ``table`` with one executemany per ``chunk`` rows
        straight to the driver (no per-row parameter processing by SQLAlchemy: the values must need none);
        ``conflict``: the key columns of an ``ON CONFLICT DO NOTHING``."""
        q = self.engine.dialect.identifier_preparer.quote
        mark = "?" if self.engine.dialect.paramstyle == "qmark" else "%s"
        sql = f"INSERT INTO {q(table)} ({', '.join(q(c) for c in cols)}) VALUES ({', '.join([mark] * len(cols))})"
        if conflict:
            sql += f" ON CONFLICT ({', '.join(q(k) for k in conflict)}) DO NOTHING"
        raw = conn.connection()
        row = operator.itemgetter(*cols) if len(cols) > 1 else (lambda r, c=cols[0]: (r[c],))
        for part in _chunks(rows, chunk):
            raw.exec_driver_sql(sql, list(map(row, part)))

    def _insert_ignore(self, conn: Session, table, rows: list[dict], keys: list[str]) -> None:
        if not rows:
            return
        cols = list(rows[0])
        if all(list(r) == cols and all(v is None or type(v) in (str, int) for v in r.values()) for r in rows):
            # plain values (names, ids): straight to the driver, no per-row processing by SQLAlchemy (32k model
            # and alias rows of a Hub-scale source cost more in it than in the database)
            self._driver_insert(conn, table.name, cols, rows, conflict=keys, chunk=5000)
            return
        if self.dialect == "postgresql":  # imported here: the PostgreSQL dialect costs SQLite users 0.1 s at start
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        ins = insert(table)
        for chunk in _chunks(rows, 1000):
            conn.execute(ins.on_conflict_do_nothing(index_elements=keys), chunk)

    def _ids_by(self, conn: Session, column, id_column, values: Sequence) -> dict:
        """``{value: id}`` of the rows whose ``column`` is one of ``values`` (plain strings or integers): IN-lists
        straight to the driver, without SQLAlchemy's per-parameter expansion."""
        q = self.engine.dialect.identifier_preparer.quote
        head = f"SELECT {q(column.name)}, {q(id_column.name)} FROM {q(column.table.name)} WHERE {q(column.name)} IN "
        return dict(driver_rows_in(conn, head, values))

    # -- models and sources -------------------------------------------------------------------------------

    def upsert_models(self, rows: Iterable[dict]) -> int:
        """Insert or update Hub metadata; returns the number of rows written. Fields left out keep their value."""
        clean: dict[str, dict] = {}
        for row in rows:
            values: dict = {}
            for k, v in row.items():
                k = _MODEL_ALIASES.get(k, k)
                if k != "key" and k not in MODEL_FIELDS:
                    raise InputError(f"unknown model field {k!r}; known: key, {', '.join(MODEL_FIELDS)}",
                                     item=str(row.get("key") or row.get("repo_id") or row.get("id")))
                values[k] = v
            key = values.pop("key", None)
            if not key or not isinstance(key, str):
                raise InputError("a model row needs a 'key' (the Hub repo id)", item=repr(row)[:200])
            for f in ("created_at", "last_modified", "fetched_at"):
                if f in values:
                    values[f] = _parse_time(values[f], key, f)
            if values.get("num_parameters") is not None:
                values["num_parameters"] = _model_parameter_count(values["num_parameters"], key)
                if values["num_parameters"] is None:  # unknown: counted from no repo either
                    values["num_parameters_from"] = None
            if "gated" in values and values["gated"] is not None:
                g = values["gated"]
                values["gated"] = ("true" if g else "false") if isinstance(g, bool) else str(g)
            if isinstance(values.get("base_model"), (list, tuple)):
                values["base_model"] = ",".join(map(str, values["base_model"])) or None
            if values.get("tags") is not None:
                values["tags"] = list(values["tags"])
            values.setdefault("kind", "hub")
            values.setdefault("fetched_at", utcnow())
            clean.setdefault(key, {}).update(values)
        if not clean:
            return 0
        with self._write("saving model metadata") as conn:
            ids = self._ids_by(conn, Model.key, Model.id, list(clean))
            inserts = [{f: None for f in MODEL_FIELDS} | v | {"key": k} for k, v in clean.items() if k not in ids]
            for chunk in _chunks(inserts, 1000):
                conn.execute(Model.__table__.insert(), chunk)
            # what each stored row holds of the fields written: a row written with the values it holds (metadata asked
            # again and found unchanged) keeps its index point's digest, so the pass pushes nothing for it
            fields = sorted({f for v in clean.values() for f in v if f != "fetched_at"})
            held: dict[int, tuple] = {}
            for c in _chunks(sorted(ids.values()), 1000):
                q = select(Model.id, *(getattr(Model, f) for f in fields)).where(Model.id.in_(c))
                held.update((r[0], tuple(r[1:])) for r in conn.execute(q).all())
            changed = []
            for k, v in sorted(clean.items()):
                if k in ids:
                    conn.execute(update(Model).where(Model.id == ids[k]).values(**v))
                    was = dict(zip(fields, held.get(ids[k], (None,) * len(fields))))
                    if any(was[f] != x for f, x in v.items() if f != "fetched_at"):
                        changed.append(ids[k])
            self._forget_point_digests(conn, changed)  # their index payloads change
        return len(clean)

    def lower_licenses(self) -> int:
        """Store in lower case the licenses an older taskspace (before licenses were lowered) kept as a model card
        wrote them (``MIT``, ``Other``, ``other,Llama3``), as :meth:`indexer.hub.HubClient.model_info` stores a card's
        license now and the ``--license`` filters read theirs; their index points' digests are forgotten, so the next
        pass pushes them. Called by every ingest and pass (one read; nothing written when every license is lower
        case). Returns how many rows were lowered. Before, such a row kept its capitals until its metadata was fetched
        again (7 days on, never offline), and `--license MIT`, which matched it before the upgrade, missed it."""
        from sqlalchemy import func

        with self._read() as conn:  # lower(): ASCII on SQLite, enough for the Hub's license ids
            rows = conn.execute(select(Model.id, Model.license).where(
                Model.license.is_not(None), Model.license != func.lower(Model.license))).all()
        rows = [(mid, lic) for mid, lic in rows if lic != lic.lower()]
        if not rows:
            return 0
        with self._write("storing licenses in lower case") as conn:
            for mid, lic in rows:  # the text re-checked in the statement: a license written meanwhile is left as it is
                conn.execute(update(Model).where(Model.id == mid, Model.license == lic).values(license=lic.lower()))
            self._forget_point_digests(conn, [mid for mid, _ in rows])  # their index payloads change
        log.info("stored the licenses of %s in lower case, as this taskspace stores a card's license", counted(len(rows), "model"))
        return len(rows)

    def get_source(self, location: str) -> SourceRecord | None:
        with self._read() as conn:
            row = conn.execute(select(Source).where(Source.location == location)).scalar()
            return source_record(row) if row else None

    def list_sources(self) -> list[SourceRecord]:
        with self._read() as conn:
            return [source_record(r) for r in conn.execute(select(Source).order_by(Source.location)).scalars()]

    def record_checked(self, location: str, *, kind: str | None = None, revision: str | None = None) -> SourceRecord:
        """Note that a source was checked (``checked_at`` = now, ``seen_revision``) without ingesting it."""
        now = utcnow()
        with self._write() as conn:
            row = conn.execute(select(Source.id).where(Source.location == location)).scalar()
            if row is None:
                if not kind:
                    raise InputError("a source checked for the first time needs its kind", item=location)
                conn.execute(Source.__table__.insert().values(kind=kind, location=location, seen_revision=revision,
                                                              checked_at=now, n_outcomes=0))
            else:
                values = {"checked_at": now, "seen_revision": revision}
                if kind:
                    values["kind"] = kind
                conn.execute(update(Source).where(Source.id == row).values(**values))
        return self.get_source(location)

    def delete_source(self, location: str) -> bool:
        """Remove a source and all its outcomes in one transaction (models and prompt texts stay; a benchmark no
        longer holds the prompts only this source's outcomes put there, and one left empty is removed). False if
        unknown."""
        with self._write() as conn:
            sid = conn.execute(select(Source.id).where(Source.location == location)).scalar()
            if sid is None:
                return False
            touched = list(conn.execute(select(OutcomeBlock.model_id).where(OutcomeBlock.source_id == sid)).scalars())
            was = self._block_prompts(conn, sid)
            conn.execute(delete(OutcomeBlock).where(OutcomeBlock.source_id == sid))
            conn.execute(delete(Source).where(Source.id == sid))
            self._prune_membership(conn, was, {})
            self._refresh_outcome_digests(conn, touched)
        return True

    def lock(self, name: str = "index"):
        """Context manager: hold the per-database ``name`` lock or raise BusyError (see :mod:`.sql_lock`); it gives a
        :class:`~.sql_lock.Held` whose ``ensure()`` checks the lock is still held (PostgreSQL: taken again when the server
        ended its session, BusyError when another process took it meanwhile)."""
        if self.dialect == "postgresql":
            return sql_lock.pg_lock(self.engine, name)
        return sql_lock.sqlite_lock(self.engine.url.database, name)


def _said_saved(write: bool, exc: StoreError) -> StoreError:
    """``exc``, marked as saying "nothing of it was saved" when it is a write transaction's (StoreError.nothing_saved)."""
    exc.nothing_saved = write
    return exc


class _Tx:
    """``with _Tx(engine, write=...) as session``: one transaction, committed on success, rolled back on error.
    The ORM session is bound to one connection (SQLite writes: BEGIN IMMEDIATE)."""

    def __init__(self, engine: Engine, write: bool, what: str):
        self.engine, self.write, self.what = engine, write, what

    def __enter__(self) -> Session:
        try:
            self.conn = migrate.write_connection(self.engine) if self.write else self.engine.connect()
        except SQLAlchemyError as exc:
            raise migrate.connect_error(self.engine.url, exc) from exc
        try:
            self.tx = self.conn.begin()  # SQLite writers wait here for the write lock (busy timeout)
            self.session = Session(bind=self.conn, autoflush=False)
        except SQLAlchemyError as exc:
            self.conn.close()
            raise self._error(exc) from exc
        except BaseException:  # an interrupt (SIGTERM or Ctrl-C as KeyboardInterrupt) after BEGIN, before the body:
            self.conn.close()  # __exit__ never runs, and the connection, kept alive by the traceback while the
            raise  # handler records the run, held the write lock (the record waited 30 s for it, then failed)
        return self.session

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            try:
                self.session.close()
                if exc_type is None:
                    self.tx.commit()
                else:
                    self.tx.rollback()
            except BaseException:  # the COMMIT (ROLLBACK) may not have reached the database: an interrupt landing in
                # SQLAlchemy's commit before it, a failed COMMIT. SQLAlchemy marks the transaction over all the same and
                # pools the connection without its rollback, the transaction open (SQLite: holding the write lock the
                # interrupted pass's run record then waited 30 s for; PostgreSQL: refused to the next transaction given
                # that connection). Discarded instead: closing it ends the transaction
                with contextlib.suppress(SQLAlchemyError):
                    self.conn.invalidate()
                raise
            finally:
                self.conn.close()
        except SQLAlchemyError as err:  # the commit (or rollback) itself failed
            if exc is None:
                exc = err
        if isinstance(exc, SQLAlchemyError):
            raise self._error(exc) from exc

    def _error(self, exc: SQLAlchemyError) -> StoreError:
        detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        saved = ", nothing of it was saved" if self.write else ""
        if "database is locked" in detail:
            return _said_saved(self.write, BusyError(
                f"{self.what} failed{saved}: another process kept the SQLite database {self.engine.url.database} "
                f"locked for over {migrate.sqlite_busy_timeout(self.engine.url):g} s; retry when it is done, or use PostgreSQL "
                "(TASKSPACE_DATABASE_URL) for concurrent writers"))
        hint = (_timeout_hint(self.engine.url, detail) or self._grant_hint(exc, detail) or self._ended_hint(exc, detail)
                or migrate.full_disk_note(self.engine.url, detail) or file_size_limit_note(detail)
                # a file another user owns, or mounted read-only: which file, and what to do
                or (migrate.read_only_note(self.engine.url) if "readonly database" in detail else ""))
        # the same work on a fresh connection can succeed (a source stored once more, a worker's pass run again soon);
        # not after the server said its idle-in-transaction timeout ended it (the same work meets it again)
        kind = ConnectionLostError if self._lost(exc, detail) else StoreError
        return _said_saved(self.write,
                           kind(f"{self.what} failed{saved}: {detail}{hint} ({migrate.safe_url(self.engine.url)})"))

    def _lost(self, exc: SQLAlchemyError, detail: str) -> bool:
        """The server ended the session mid-transaction (a restart, ``pg_terminate_backend``), which the same work on a
        fresh connection can survive; not when it says its ``idle_in_transaction_session_timeout`` did (a setting that
        ends the same work again)."""
        return self.engine.dialect.name == "postgresql" and "idle-in-transaction timeout" not in detail and (
            getattr(exc, "connection_invalidated", False) or any(
                w in detail for w in ("server closed the connection", "terminating connection")))

    def _ended_hint(self, exc: SQLAlchemyError, detail: str) -> str:
        """Why PostgreSQL ended the session in the middle of a transaction: its ``idle_in_transaction_session_timeout``
        (named when the driver read the server's word, or when it is set for this user and database and the driver saw
        only a closed connection), else a restart or ``pg_terminate_backend``; "" for any other error. Before: the
        driver's "server closed the connection unexpectedly" alone."""
        if not (self._lost(exc, detail) or "idle-in-transaction timeout" in detail):
            return ""
        idle = None
        if "idle-in-transaction timeout" not in detail:
            try:  # the timeout set for this user and database (a fresh session has what the ended one had)
                with self.engine.connect() as conn:
                    idle = conn.exec_driver_sql("select current_setting('idle_in_transaction_session_timeout')").scalar()
            except SQLAlchemyError:
                pass
            if idle in (None, "0"):
                return ": the server ended the session (a restart, `pg_terminate_backend`); retry"
        role = self.engine.url.username or "USER"
        # the server's word, or a closed connection with the timeout set (then a restart may have ended it as well)
        who = ("the server's idle_in_transaction_session_timeout (set for this database or user, or in the URL) ended the "
               "session" if idle is None else
               "the server ended the session: a restart, `pg_terminate_backend`, or its idle_in_transaction_session_timeout "
               f"({idle} for this user and database)")
        return (f": {who}: taskspace keeps a transaction open while it prepares the next rows (seconds for a large "
                f"source); if it is the timeout, give taskspace's user more (`ALTER ROLE \"{role}\" SET "
                "idle_in_transaction_session_timeout = '10min'`, or `options=-cidle_in_transaction_session_timeout=0` in "
                "TASKSPACE_DATABASE_URL); retry")

    def _grant_hint(self, exc: SQLAlchemyError, detail: str) -> str:
        """What to grant when PostgreSQL refused the user a table (a role granted SELECT alone, as `taskspace serve`
        needs, running an indexing pass); "" for any other error. Before: the driver's "permission denied for table"."""
        if getattr(getattr(exc, "orig", None), "sqlstate", None) != "42501" or "permission denied for table" not in detail:
            return ""
        role = self.engine.url.username or "USER"
        schema = "SCHEMA_NAME"
        try:
            with self.engine.connect() as conn:
                schema = conn.exec_driver_sql("select current_schema()").scalar() or schema
        except SQLAlchemyError:
            pass
        grants = (f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO \"{role}\"; "
                  f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema} TO \"{role}\"")
        if not self.write:
            return (f": the user \"{role}\" may not read taskspace's tables; as their owner, "
                    f"`GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO \"{role}\"`")
        return (f": the user \"{role}\" may read taskspace's tables but not write them (enough for `taskspace serve` and "
                "the query commands); run indexing, ingest, pull and reindex as a user who may: the tables' owner, or "
                f"one granted, as their owner, `{grants}`")


def _timeout_hint(url, detail: str) -> str:
    """What to do when PostgreSQL cancelled a statement for its ``statement_timeout`` or ``lock_timeout`` (set for the
    database or the user by an operator): name the setting and how to give taskspace more (before: the driver's
    "canceling statement due to statement timeout" alone). "" for any other error."""
    setting = next((s for s in ("statement_timeout", "lock_timeout") if s.replace("_", " ") in detail), None)
    if setting is None:
        return ""
    role = url.username or "USER"
    what = ("a statement waited for a lock another session held, longer than it allows" if setting == "lock_timeout" else
            "a statement ran, or waited for a lock another session held, longer than it allows; taskspace's statements "
            "can take minutes on a large index")
    return (f": the server's {setting} (set for this database or user, or in the URL) cancelled it: {what}; give "
            f"taskspace's user more (`ALTER ROLE \"{role}\" SET {setting} = '30min'`, or `options=-c{setting}=0` in "
            "TASKSPACE_DATABASE_URL) and retry")


def open_store(url: str | None = None) -> Store:
    """The store at ``url`` (default: the configured one; the embedded SQLite is migrated automatically)."""
    return Store(url)


def missing_sqlite_file(url: str | None = None):
    """The file of a SQLite database URL (default: the configured one) when it does not exist, else None (it exists,
    or the URL is another database, an in-memory one or a ``file:`` URI). Opening the store would create it empty."""
    if url is None:
        from ..config import get_settings

        url = get_settings().database_url
    path = migrate.sqlite_path(url)
    return None if path is None or path.exists() else path
