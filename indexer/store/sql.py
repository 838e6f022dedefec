"""The SQL store: the source of truth (SQLite file by default, PostgreSQL in production).

Only ``indexer/store/sql*.py`` import SQLAlchemy. Tables live in :mod:`indexer.store.sql_models`
(SQLAlchemy 2 typed ORM); Alembic (``migrations/``) is the only thing that creates them.

Opening
-------
``Store(url=None, *, upgrade=None)`` or ``open_store()``: ``url`` defaults to
``get_settings().database_url`` (``TASKSPACE_DATABASE_URL``, else ``sqlite:///$TASKSPACE_HOME/taskspace.db``).
The embedded default SQLite is migrated to head automatically on first use; any other database must be
at head already (``taskspace db upgrade``), else :class:`~indexer.errors.StoreError` says so. A bad or
unreachable URL fails fast (5 s connect timeout) with a StoreError that says what to fix.
``store.close()`` (or ``with Store(...) as store:``) disposes the engine.

Writing results (input = :mod:`indexer.records`)
-----------------------------------------------
- ``store.ingest(batch: SourceBatch) -> IngestResult(models, prompts, outcomes, skipped, replaced, source_id)``:
  one transaction per source, committed whole or not at all. A source whose location + revision is
  already ingested is skipped and nothing changes (``skipped=True``). A new revision of a known source
  replaces that source's outcomes. ``revision=None`` means "use a fingerprint of the batch content".
  Prompts are keyed by ``prompt_hash(text)``: duplicate texts are one prompt, and one model's outcomes on
  copies of a prompt within one benchmark are averaged into one graded score. ``models``/``prompts`` count
  rows newly created; ``outcomes`` counts stored (model, benchmark, prompt) cells after averaging.
- ``store.upsert_models(rows: Iterable[dict]) -> int``: Hub metadata. Each dict has ``key`` (alias
  ``repo_id`` / ``id``) plus any of the :class:`ModelRecord` field names; unknown keys raise InputError.
  Rows upserted this way get ``kind="hub"``; models first seen in outcomes get ``kind="hub"`` when the key
  looks like a repo id ("org/name") and ``kind="name"`` otherwise (e.g. "gpt-4o(eval_results/gpt4o)").
- ``store.get_source(location) -> SourceRecord | None``; ``store.list_sources()``;
  ``store.record_checked(location, *, kind=None, revision=None)``: note that a source was looked at
  (``checked_at`` = now, ``seen_revision`` = what was seen) without ingesting.

Bulk reads (solver, worker, evaluator)
--------------------------------------
- ``store.load_outcomes(models=None, benchmarks=None) -> OutcomeMatrix`` (a NamedTuple:
  ``prompt_ids`` int64 (N,) DB ids, ``prompt_hashes`` list[str] (N), ``models`` list[str] (M),
  ``scores`` float32 (M, N) in [0, 1] with NaN = not observed, ``benchmarks`` list[str] (N) = the
  benchmark of each prompt (the first by name among the selected ones when a prompt is in several)).
  A cell observed in several sources (or benchmarks) is their mean. Columns are sorted by
  (benchmark, position); rows by model key.
- ``store.prompt_texts(prompt_ids) -> list[str]`` (same order); ``store.prompt_ids(hashes) -> dict[hash, id]``.
- ``store.list_models(kind=None) -> list[ModelRecord]``; ``store.get_model(key) -> ModelRecord | None``.
- ``store.list_benchmarks() -> list[BenchmarkRecord]`` (with ``n_prompts``);
  ``store.benchmark_prompts(name) -> list[int]`` (prompt ids in position order).
- ``store.model_digests(models=None) -> dict[model key, str]``: hex sha256 over the model's stored
  outcomes; it changes iff that model's outcomes changed (any source, any benchmark).
- ``store.counts() -> dict`` (rows per table, outcome cells).

Embedding spaces and vectors (derived state the worker writes; Qdrant is rebuilt from these)
-------------------------------------------------------------------------------------------
- ``store.get_or_create_space(encoder, dim, lam, eps, method="hyperplane", params=None) -> SpaceRecord``
  (``encoder`` is the encoder id including its revision); ``store.get_space(id)``; ``store.list_spaces()``.
- ``store.save_model_vectors(space_id, vectors: Iterable[ModelVector])`` (upsert per model; a vector of the
  wrong dimension raises DimensionError); ``store.load_model_vectors(space_id, models=None) -> list[ModelVector]``;
  ``store.delete_model_vectors(space_id, models)``.
  ``ModelVector(model, vector float32 (dim,), n_prompts, benchmarks list[str], accuracy dict[str, float],
  inputs_digest str, computed_at datetime | None)``.
- ``store.stale_models(space_id) -> list[str]``: models with outcomes whose vector is missing or whose
  ``inputs_digest`` differs from ``model_digests()``.
- ``store.save_benchmark_vectors(space_id, vectors: Iterable[BenchmarkVector])``;
  ``store.load_benchmark_vectors(space_id) -> list[BenchmarkVector]``
  (``BenchmarkVector(benchmark, vector float32 (dim,), n_prompts, computed_at)``).

Indexing runs and the worker lock
---------------------------------
- ``store.start_run(kind="index") -> int``; ``store.finish_run(run_id, status, counts=None, errors=None)``
  (status e.g. "ok" | "failed" | "partial"; errors = list of JSON-able dicts, e.g. ``RowError.as_dict()``);
  ``store.list_runs(limit=20) -> list[RunRecord]``.
- ``with store.lock("index"):`` one holder per database: a PostgreSQL advisory lock (session level,
  released if the process dies), or an exclusive file lock next to the SQLite file. A second holder gets
  :class:`~indexer.errors.BusyError` naming the holder's pid.

Schema (tables; ``id`` integer primary keys; times are timezone-aware UTC)
-------------------------------------------------------------------------
- ``models``: key (unique free string: Hub repo id or a table's plain name), kind ("hub" | "name"),
  revision, author, license, num_parameters, pipeline_tag, library, tags (JSON list), downloads, likes,
  gated (str: "false" | "auto" | "manual"), created_at, last_modified, base_model, fetched_at.
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
  accuracy (JSON), inputs_digest, computed_at.
- ``benchmark_vectors``: (space_id, benchmark_id) unique, dim, vector, n_prompts, computed_at.
- ``runs``: kind, started_at, finished_at, status, pid, counts (JSON), errors (JSON).
"""
