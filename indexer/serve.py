"""``taskspace serve``: the HTTP API and the search page (FastAPI under uvicorn). A thin layer: it parses, checks
the input limits, calls :mod:`indexer.find` / :mod:`indexer.browse` and returns their JSON; no ranking here.

Routes
------
- ``POST /v1/find``: body ``{"prompts": [...] | "benchmark": "..." | "vector": [...], "k": 10, "offset": 0,
  "filters": {...}, "models": [...], "prefer_smaller": 0.0, "rank": "probability", "evidence": 3}`` -> the object
  ``taskspace search --json`` prints (:meth:`indexer.find.FindResult.to_dict`); ``offset`` pages the ranking as
  ``GET /v1/models``' pages the list (``{"k": 10, "offset": 10}``: ranks 11 to 20; the answer's ``query.total`` and
  ``query.next_offset`` say how many the ranking holds and where the next page starts, null on the last).
- ``GET /v1/models`` (``?benchmark=&offset=&limit=`` and the filters: ``license`` (repeatable), ``min_params``,
  ``max_params``, ``pipeline_tag``, ``exclude_gated``, ``open_only``, ``min_evidence``, ``measured_on``) ->
  ``{"models": [...], "offset", "limit", "total", "next_offset"}``; ``GET /v1/models/{id}`` (a key, Hub id or alias; ids
  contain slashes); ``GET /v1/benchmarks``; ``GET /v1/spaces`` (the embedding spaces, which one is the default).
- ``GET /healthz`` (the process answers), ``GET /readyz`` (stores reachable, index not empty, encoder loaded;
  503 otherwise). ``GET /openapi.json``. (No ``/docs``: Swagger UI loads its files from a CDN.)
- ``GET /``: the search page (``indexer/web``: plain HTML, CSS and JavaScript; no request to any other host).

Errors
------
Every error, ours, FastAPI's validation errors, 404/405 and 500, has one shape::

    {"error": {"code": "limit_exceeded", "message": "...", "field": "prompts"}}

``field`` is the body field / query parameter at fault, or null. Library errors map to a status by class
(InputError 422, NotFoundError 404, StoreError/EncoderError 503); anything else is a 500 whose message carries an
id also written to the log with the traceback; no traceback or credential ever reaches the client.

Limits (:data:`LIMITS`): prompt length, number of example prompts, ``k``, compare-mode models, evidence, vector
length, page size, and the request body size (413, checked while the body streams in).

Stores and the worker
---------------------
One :class:`Service` per process owns one SQL store and one vector store, opened at start-up, and loads the
encoder once. With ``worker_schedule`` (``--worker-every 6h`` / ``--cron``) the scheduled indexing worker
(:class:`indexer.worker.Worker`) runs in a thread of the same process and writes through the same vector store,
so one process owns the embedded index folder. A query during an index pass ranks by the previous complete
index: the pass's first write of derived state (model vectors, calibration, benchmark vectors in SQL, any
Qdrant write) takes the write side of :class:`Gate` and keeps it to the end of the pass; queries take the read
side. Ingesting and solving, the long stages, run beside the queries; while the new index is published (SQL
vectors, then Qdrant) queries wait for it and then answer from the new one: never new SQL vectors with old Qdrant
points, never an error. The outcomes the ingest stores are read at once; a result whose model's outcomes changed
since its vector was solved shows coverage and evidence from its outcomes on the benchmarks that vector was fitted
on, and says ``results_changed`` (:func:`indexer.query.changed_since_solved`; docs/SERVING.md).
With a Qdrant server and PostgreSQL the worker and any number of API processes run apart (docs/SERVING.md).
"""

from __future__ import annotations

import errno
import functools
import hashlib
import logging
import math
import os
import re
import signal
import threading
import time
import uuid
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from .errors import counted, noun

log = logging.getLogger(__name__)

WEB = Path(__file__).resolve().parent / "web"

#: input limits; each violation is a 4xx naming the limit
LIMITS = {
    "max_body_bytes": 256 * 1024,
    "max_prompts": 32,
    "max_prompt_chars": 4000,
    "max_k": 100,
    "max_models": 100,
    "max_evidence": 20,
    "max_vector_length": 8192,
    "max_page": 500,
}

#: the text query parameters (their name -> what to give, what leaving them out gives) an empty value of which is
#: said as an empty number's is ("offset is empty: give an integer, or leave offset out for its default, 0")
EMPTY_TEXT_PARAMS = {"benchmark": ("a benchmark name", "every model"),
                     "measured_on": ("a benchmark name", "no such filter"),
                     "pipeline_tag": ("a pipeline tag such as text-generation", "no such filter"),
                     "license": ("a license name such as mit", "no such filter"),
                     "min_params": ("a parameter count such as 8B", "no such filter"),
                     "max_params": ("a parameter count such as 8B", "no such filter"),
                     "space": ("a space's name or id (GET /v1/spaces lists them)", "the default space")}

#: the library's pointers for a benchmark's name given as a model's (indexer.browse._a_benchmark): the calls that list
#: and rank its models, each naming it as a Python string (or the commands, each naming it as a shell word)
_BENCHMARK_QUERIES = re.compile(r"indexer\.list_models\(benchmark=(.+?)\) lists the models measured on it, "
                                r"indexer\.find_models\(benchmark=\1\) ranks the models for it|"
                                r"`taskspace models -b (.+?)` lists the models measured on it, "
                                r"`taskspace search -b \2` ranks the models for it")


def _http_hints(message: str) -> str:
    """A library error's message for an HTTP client: a listing it points to is named by its endpoint, and the queries
    a benchmark's models are asked with by theirs (commands an operator runs, such as `taskspace reindex`, stay as they
    are). Before, a benchmark's name asked as a model's (`GET /v1/models/mmlu_pro/law`) pointed the client, and the
    search page its user, to `taskspace models -b` and `taskspace search -b`."""
    import json
    import shlex
    from urllib.parse import quote

    from .find import LISTING_CALLS

    # the library's pointers to a listing (indexer.find.lister: a Python caller's call, as a request is answered; a
    # command's, in a CLI command), as an HTTP client reaches the same list
    for what, call in LISTING_CALLS.items():
        for said in (call, f"`taskspace {what}s`"):
            message = message.replace(f"{said} lists them", f"GET /v1/{what}s lists them")

    def endpoints(m) -> str:
        import ast

        # the one string or shell word browse wrote
        (name,) = [ast.literal_eval(m.group(1))] if m.group(1) is not None else shlex.split(m.group(2))
        return (f"GET /v1/models?benchmark={quote(name, safe='/')} lists the models measured on it, POST /v1/find "
                f"with {json.dumps({'benchmark': name})} ranks the models for it")

    return _BENCHMARK_QUERIES.sub(endpoints, message)


#: a ConfigError during a request is the server's (its settings, an index another version of taskspace built: the
#: CLI's exit 2), never the client's: 503 (before, 422 invalid_input, as if the request were wrong)
_STATUS = {"InputError": 422, "DimensionError": 422, "ConfigError": 503, "NotFoundError": 404, "BusyError": 503,
           "StoreError": 503, "EncoderError": 503, "HubError": 503}
_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "body_too_large",
          415: "unsupported_media_type", 422: "invalid_request", 503: "unavailable", 500: "internal_error"}
#: what the ``space`` field and query parameter take (OpenAPI)
SPACE_PARAM = ("the embedding space to query: its index name, SQL id or encoder name, as GET /v1/spaces lists them; "
               "default: the configured space")
#: the ``/v1/find`` body fields
FIND_FIELDS = ("prompts", "prompt", "benchmark", "vector", "k", "offset", "filters", "models", "prefer_smaller", "rank",
               "evidence", "space")
#: the ``/v1/find`` knobs that take no true/false, with what each takes (a body without one, or with null, gets
#: find_models' default)
_KNOBS = {"k": f"a positive integer, at most {LIMITS['max_k']}", "offset": "a non-negative integer",
          "prefer_smaller": "a number from 0 to {max_prefer:g}",
          "rank": "probability or lcb", "evidence": f"an integer from 0 to {LIMITS['max_evidence']}"}
#: names other APIs use for a ``/v1/find`` field: an unknown field of these names is answered with ours
_FIND_SYNONYMS = {"top": "k", "top_k": "k", "topk": "k", "limit": "k", "n": "k", "num_results": "k", "query": "prompts",
                  "queries": "prompts", "text": "prompt", "texts": "prompts", "examples": "prompts", "filter": "filters",
                  "model": "models", "sort": "rank", "order_by": "rank", "skip": "offset", "start": "offset"}


class ApiError(Exception):
    """An error answered as ``{"error": {"code", "message", "field"}}`` with ``status``."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field


def error_body(code: str, message: str, field: str | None = None) -> dict:
    """The one error shape. A lone surrogate in the message or the field (user input echoed back: a JSON ``\\ud800``
    escape, a path that was not UTF-8) is written as its escape, so the answer is valid UTF-8 JSON (encoding it
    raised, and the client got a 500)."""
    return {"error": {"code": code, "message": utf8_safe(message), "field": utf8_safe(field)}}


def utf8_safe(value):
    """``value`` with every string in it encodable as UTF-8: a lone surrogate becomes its escape (``\\ud800``)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {utf8_safe(k): utf8_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [utf8_safe(v) for v in value]
    return value


def scrub(text: str) -> str:
    """``text`` without any configured secret (database / Qdrant passwords, the Qdrant API key, HF_TOKEN)."""
    from .config import get_settings, mask_secrets

    try:
        s = get_settings()
    except Exception:  # settings that cannot be read hold no secret we could mask
        return text
    for url in (s.database_url, s.qdrant_url):
        text = mask_secrets(text, url)
    text = _URL_PASSWORD.sub(r"\1***@", text)  # any other URL a message quotes (another database's, in an error)
    for secret in (s.qdrant_api_key, os.environ.get("HF_TOKEN"), os.environ.get("HUGGING_FACE_HUB_TOKEN")):
        # as it is sent: without the newline or spaces a file or a paste leaves (huggingface_hub's reading)
        secret = (secret or "").replace("\r", "").replace("\n", "").strip()
        if secret and len(secret) >= _WHOLE_TOKEN:  # wherever it appears
            text = text.replace(secret, "***")
        elif secret:  # a short one only where it stands as a token: before, in every word holding its letters
            text = re.sub(rf"(?<![\w-]){re.escape(secret)}(?![\w-])", "***", text)
    return text


#: the password of a URL quoted in a message: ``scheme://user:PASSWORD@`` (up to the last '@' before the host, as
#: config.url_secrets reads an unencoded '@' in it)
_URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:)[^\s/]*@")

#: a token (API key, HF_TOKEN) of this many characters on is masked wherever it appears in a message; a shorter one
#: only where it stands alone (``key ab1 rejected``), so that ``a`` does not garble every word with an "a" in it
_WHOLE_TOKEN = 8


# --------------------------------------------------------------------------------------------- the read/write gate
class Gate:
    """A readers-writer lock, writer preferring: queries hold the read side for one request; an index pass holds the
    write side while it publishes (a waiting writer stops new readers, so a busy API cannot starve the pass)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._waiting = 0

    @contextmanager
    def read(self):
        with self._cond:
            while self._writer or self._waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    def acquire_write(self) -> None:
        with self._cond:
            self._waiting += 1
            try:
                while self._writer or self._readers:
                    self._cond.wait()
            finally:
                self._waiting -= 1
            self._writer = True

    def release_write(self) -> None:
        with self._cond:
            self._writer = False
            self._cond.notify_all()

    @property
    def publishing(self) -> bool:
        """A writer holds the gate or waits for it: a reader arriving now waits until it is done."""
        return self._writer or bool(self._waiting)


class _Publish:
    """One pass's hold on the gate: taken at its first write of derived state, released when the pass ends."""

    def __init__(self, gate: Gate):
        self.gate, self.held, self.taken_at = gate, False, None

    def take(self) -> None:
        if not self.held:
            self.gate.acquire_write()
            self.held, self.taken_at = True, time.perf_counter()

    def release(self) -> float:
        """Release if held; the seconds it was held."""
        if not self.held:
            return 0.0
        self.held = False
        self.gate.release_write()
        return time.perf_counter() - self.taken_at

    def wrap(self, fn):
        def gated(*args, **kwargs):
            self.take()
            return fn(*args, **kwargs)

        gated.__name__ = getattr(fn, "__name__", "gated")
        return gated


#: the pass's writes of what queries read: SQL derived state, and every Qdrant write
_SQL_PUBLISH = ("save_model_vectors", "delete_model_vectors", "save_benchmark_vectors")
_VECTOR_WRITES = ("rebuild", "upsert", "delete", "drop_orphans", "drop_space")


class _PassVectors:
    """The service's vector store as a pass sees it: the same store, its writes taking the gate first."""

    def __init__(self, vectors, publish: _Publish):
        self._vectors, self._publish = vectors, publish

    def __getattr__(self, name):
        attr = getattr(self._vectors, name)
        return self._publish.wrap(attr) if name in _VECTOR_WRITES else attr


# ------------------------------------------------------------------------------------------------ the service
class Service:
    """The stores, the encoder and the optional in-process worker of one server process."""

    def __init__(self, *, worker_schedule: str | None = None, store=None, vectors=None, encoder=None,
                 busy_retry_seconds: float = 30.0):
        self.worker_schedule = worker_schedule
        self.gate = Gate()
        self.store, self.vectors, self.encoder = store, vectors, encoder
        self._own = store is None, vectors is None
        self.worker = None
        self._thread: threading.Thread | None = None
        #: why this server's worker thread ended by itself (an error no later pass can get past, an unexpected one), in
        #: /readyz's worker check; None while it runs or after a stop asked for
        self.worker_stopped: str | None = None
        #: set by a second stop signal (:meth:`abandon_worker`): shutting down stops waiting for the worker's item
        self.abandoned = threading.Event()
        self.busy_retry_seconds = busy_retry_seconds
        self.passes: list[dict] = []  # the recent in-process passes (run_id, status, seconds, publish_seconds)
        self.passes_done = 0
        #: held while a pass is listed (passes, passes_done) and while /readyz reads them: it sees both of one moment
        self._passes_lock = threading.Lock()
        self.pass_running = False  # an in-process pass is running now (its first one builds the index)
        self._pass_started = 0.0  # time.perf_counter() when the running pass began
        self._checked: dict | None = None  # the store checks of the last /readyz (answered again during a publish)
        if worker_schedule:
            from .schedule import next_run
            from datetime import datetime, timezone

            next_run(worker_schedule, datetime.now(timezone.utc))  # a bad schedule fails before anything opens

    # -- life cycle
    def start(self) -> "Service":
        from .store.sql import open_store
        from .store.vectors import VectorStore

        if self.store is None:
            self.store = open_store()
        if self.vectors is None:
            try:
                self.vectors = VectorStore.from_settings()
            except BaseException:
                self.store.close()
                raise
        try:
            self.load_encoder()
        except BaseException:
            self.close()
            raise
        if self.worker_schedule:
            self.start_worker()
        return self

    def load_encoder(self):
        """The encoder queries use, loaded now (once per process): the indexed space's, else the configured one."""
        from .encoder import get_encoder
        from .errors import NotFoundError
        from .query import _space
        from .space import space_encoder

        if self.encoder is None:
            try:
                self.encoder = space_encoder(_space(self.store))
            except NotFoundError:  # an empty index: the configured encoder is the one its first pass will use
                self.encoder = get_encoder()
        # the model itself, now rather than on the first query (encode() would not load it for a text the embedding
        # cache holds)
        self.encoder._load()
        return self.encoder

    def close(self) -> None:
        self.stop_worker()
        if self._thread is not None:  # abandoned mid-item: its pass still uses the stores; the process is exiting
            return
        if self._own[1] and self.vectors is not None:
            self.vectors.close()
        if self._own[0] and self.store is not None:
            self.store.close()

    # -- the worker
    def run_pass(self, stop: threading.Event):
        """One indexing pass through the service's vector store (its writes gated, :class:`Gate`)."""
        from .pipeline import Indexer, Progress
        from .store.sql import open_store

        publish = _Publish(self.gate)
        from .errors import BusyError, one_line

        t = self._pass_started = time.perf_counter()
        self.pass_running = True
        entry = {"status": "failed"}  # until the pass returns: one that raised says why in /readyz (not "None")
        store = None
        try:
            # opened in the pass: one that cannot open its connection (the database gone for a moment) is a failed
            # pass in /readyz too (before, it was neither listed nor counted: "the last ok" while passes failed)
            store = open_store()
            for name in _SQL_PUBLISH:
                setattr(store, name, publish.wrap(getattr(store, name)))
            report = Indexer(store, _PassVectors(self.vectors, publish), progress=Progress(False), stop=stop,
                             encoder=None).run()
            # the entry is whole when it is listed: before, it was listed "failed" and given its status after, so a
            # /readyz (or a test) reading the passes in between saw "the last failed" for a pass that was ok
            entry = {"status": report.status, "run_id": report.run_id}
            if report.errors:  # a partial pass (a quarantined source, bad rows): how many, said in /readyz
                entry["errors"] = len(report.errors)
        except BusyError as exc:  # another process's pass holds the lock: this one did not run (the worker tries again)
            # who holds it (BusyError.held), not the advice to retry: this server's worker tries again by itself
            entry.update(status="busy", error=scrub(one_line(exc.held)) or type(exc).__name__)
            raise
        except Exception as exc:
            entry["error"] = scrub(one_line(str(exc))) or type(exc).__name__
            raise
        finally:  # a pass that raised is listed too; before, its status was None and failing passes piled up in
            held = publish.release()  # /readyz, only a pass that finished trimmed them
            self.pass_running = False
            if store is not None:
                store.close()
            with self._passes_lock:
                self.passes.append({"seconds": time.perf_counter() - t, "publish_seconds": held, **entry})
                self.passes_done += 1
                del self.passes[:-20]  # the recent ones
        log.info("index pass %s: %s (index published in %.2f s)", report.run_id, report.status, held)
        return report

    def start_worker(self) -> None:
        from .worker import Worker

        self.worker = Worker(self.worker_schedule, self.run_pass, busy_retry_seconds=self.busy_retry_seconds)
        self.worker_stopped = None
        self._thread = threading.Thread(target=self._work, name="taskspace-worker", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        from .errors import CLI, SERVE, one_line

        # the passes' records (`taskspace runs`) and log lines are read by the server's operator, at a shell: in
        # their words (errors.CLI), in this thread only (the HTTP answers keep the API's)
        CLI.set(SERVE)
        try:
            self.worker.serve()
        except BaseException as exc:  # the API keeps serving the last complete index
            log.exception("the in-process worker stopped")
            self.worker_stopped = (f"an unexpected {type(exc).__name__}: {scrub(one_line(str(exc)))} (its traceback is "
                                   "in the server log)")
        else:
            if self.worker.stopped_by is not None:  # as its log line says it (worker.Worker.serve)
                self.worker_stopped = (f"{scrub(one_line(str(self.worker.stopped_by)))} (no later pass can succeed "
                                       "until this is fixed)")

    def stop_worker(self, timeout: float | None = None) -> None:
        """Ask the worker to finish its current item and wait for it (at most ``timeout`` seconds), or until
        :meth:`abandon_worker`: then the thread is left running (a daemon; the process is exiting) and kept in
        ``_thread``, its pass recorded ``running`` for the next pass to mark killed."""
        if self.worker is not None:
            self.worker.stop.set()
        thread = self._thread
        if thread is None:
            return
        end = None if timeout is None else time.monotonic() + timeout
        while thread.is_alive() and not self.abandoned.is_set():
            thread.join(0.1 if end is None else max(0.0, min(0.1, end - time.monotonic())))
            if end is not None and time.monotonic() >= end:
                break
        if not thread.is_alive() or end is not None:
            self._thread = None
        else:
            log.warning("stopping now: the in-process worker's pass is left as it is (the next pass marks its run "
                        "killed; what it committed stays)")

    def abandon_worker(self) -> None:
        """A second stop signal: :meth:`stop_worker` stops waiting for the worker's current item."""
        self.abandoned.set()

    def worker_running(self) -> bool:
        """Whether this server's indexing worker thread runs (``--worker-every``, started and not stopped)."""
        return bool(self.worker_schedule) and self._thread is not None and self._thread.is_alive()

    def publish_eta(self) -> float | None:
        """Seconds until this server's worker is expected to have published a new index, or None when that is not
        known (no worker, its thread stopped; a running pass already longer than the passes before it, or the first).
        A running pass: the longest of the recent passes that finished, less the time it has run; a worker waiting:
        until its next pass starts (:attr:`indexer.worker.Worker.next_at`, exact) plus that estimate of its length."""
        worker = self.worker
        if worker is None or not self.worker_running():
            return None
        longest = max((p["seconds"] for p in self.passes if p.get("status") in ("ok", "partial")), default=None)
        if self.pass_running:
            left = None if longest is None else longest - (time.perf_counter() - self._pass_started)
            return left if left is not None and left > 0 else None
        at = worker.next_at
        if at is None:
            return None
        return max(0.0, at - time.monotonic()) + (longest or 0.0)

    # -- reads (the library does the work)
    def _read(self, fn):
        """``fn()`` under the gate's read side; once more when the database ended the session it ran on (a PostgreSQL
        restart or failover, ``pg_terminate_backend``): a read is safe to repeat, and the pool's next connection is a
        fresh one. Before, every query in flight when the database restarted answered 503."""
        from .errors import once_more_if_lost

        with self.gate.read():
            return once_more_if_lost(fn, log=log, level=logging.INFO, said=lambda exc: (
                f"the database ended the session of a query ({exc}); asking again on a fresh connection"))

    def find(self, **query) -> dict:
        from .find import find_models

        return self._read(lambda: find_models(**query, store=self.store, vectors=self.vectors).to_dict())

    def models_page(self, **query) -> dict:
        from .browse import models_page

        return self._read(lambda: models_page(**query, store=self.store, vectors=self.vectors))

    def model(self, model_id: str, space: str | None = None) -> dict:
        from .browse import model_detail

        return self._read(lambda: model_detail(model_id, store=self.store, vectors=self.vectors, space=space))

    def benchmarks(self) -> list[dict]:
        from .browse import list_benchmarks

        return self._read(lambda: list_benchmarks(store=self.store))

    #: what ``GET /v1/spaces`` gives of each space (``taskspace spaces --json`` without the vector index's counts)
    SPACE_FIELDS = ("name", "id", "encoder", "method", "dim", "lam", "eps", "models", "benchmarks", "stale", "default",
                    "configured", "origin")

    def spaces(self) -> list[dict]:
        """The embedding spaces SQL holds (id order), as ``taskspace spaces --json`` lists them, with which one a query
        without ``space`` takes (``default``)."""
        from .spaces import describe_spaces

        return self._read(lambda: [{k: v for k, v in info.as_dict().items() if k in self.SPACE_FIELDS}
                                   for info in describe_spaces(self.store)])

    #: the library's word on an empty index (indexer.query._space), said for a server by :meth:`empty_index`
    from .query import EMPTY

    def empty_index(self) -> str:
        """What to do about an empty index, for this server: a `taskspace index` run beside a server that holds the
        embedded index stops at its index stage (another process holds it), so that advice is not given there."""
        if self.worker_schedule:
            return (f"the index is empty: this server's indexing worker ({self.worker_schedule}) has indexed no model "
                    "yet (GET /readyz shows its passes and their status; `taskspace sources list` what they read)")
        if self.vectors is not None and getattr(self.vectors, "local", False):
            return ("the index is empty: stop this server, run `taskspace index`, then start it again; or restart it "
                    "with --worker-every INTERVAL to index in the server (the embedded index is one process at a time)")
        return "the index is empty: run `taskspace index` (or `taskspace worker`) against these stores"

    #: the library's word on a benchmark ingested and not indexed yet (indexer.find._unindexed_benchmark)
    UNINDEXED = "(its results were ingested, its vector not computed): run `taskspace index`"
    #: what :meth:`advice` says of it while this server's pass is running (a 503: there once the pass publishes)
    INDEXING = "is indexing it: its pass is running"

    def indexing_now(self, message: str) -> bool:
        """Whether ``message`` is about a benchmark this server's running pass is indexing (ingested, its vector not
        published yet): a wait of that pass, not a missing benchmark."""
        return bool(self.worker_schedule and self.pass_running and self.UNINDEXED in message)

    def advice(self, message: str) -> str:
        """A library message as this server's client should read it: an empty index said by :meth:`empty_index`, and
        on an embedded index the `taskspace reindex` it advises run with this server stopped (beside it, reindex
        stops at once: another process holds the index, exit 6)."""
        # (the library's word names the database it looked in, for a command run against the wrong home; a server
        # says its own, as /readyz does)
        message = re.sub(re.escape(self.EMPTY) + r"( \(the database .* holds no (indexed space|model in space \S+);"
                         r" `taskspace index --source SPEC` [^)]*\))?",
                         lambda _: self.empty_index(), message)
        if self.worker_schedule and self.pass_running and not self.passes_done:
            # the worker's first pass has written the space to SQL and not yet published its index: it is building it
            # (before: "`taskspace reindex` ... rebuilds it; run it with this server stopped", which stops that pass)
            message = re.sub(r"; `taskspace reindex --space \S+` \(or the next indexing pass\) rebuilds it from SQL",
                             f"; this server's indexing worker ({self.worker_schedule}) is building it: its first pass "
                             "is running (GET /readyz is 200 when the index is published)", message)
        if self.indexing_now(message):
            # a benchmark the running pass ingested (or finds ingested) and publishes when it ends (before: "run
            # `taskspace index` with this server stopped ...: this server's worker indexes it at its next pass", a 404
            # for a benchmark GET /v1/benchmarks had just listed; stopping the server would stop that pass)
            message = message.replace(self.UNINDEXED, "(its results were ingested, its vector not computed yet): this "
                                      f"server's indexing worker ({self.worker_schedule}) {self.INDEXING}; ask again when it "
                                      "has published (GET /readyz lists its passes)")
        if getattr(self.vectors, "local", False) and "this server" not in message:
            # an ingested benchmark not indexed yet: `taskspace index` beside this server stops at its index stage
            cmd = next((c for c in ("reindex", "index") if f"`taskspace {c}" in message), None)
            if cmd is not None:
                message += (f"; run `taskspace {cmd}` with this server stopped (the embedded index is one process at a "
                            "time)" + (": this server's worker indexes it at its next pass" if cmd == "index" and
                                       self.worker_schedule else ""))
        return message

    def readiness(self, *, wait: bool = True) -> dict | None:
        """``{check: {"ok": bool, "detail": str}}`` for the SQL store, the vector store, the index and the encoder.
        ``wait=False``: while a pass publishes, the store checks made before it (saying so), without touching the
        stores or waiting for the publish; None when there are none to give (then ask with ``wait=True``)."""
        if not wait:
            if not self.gate.publishing or self._checked is None:
                return None
            checks = {k: dict(v) for k, v in self._checked.items()}
            checks["index"]["detail"] += ("; an index pass is publishing a new index now (queries wait for it; these "
                                          "checks are from before it)")
        else:
            checks = self._store_checks()
            self._checked = {k: dict(v) for k, v in checks.items()}
        checks["encoder"] = {"ok": self.encoder is not None,
                             "detail": getattr(self.encoder, "id", None) or "not loaded"}
        if self.worker_schedule:
            with self._passes_lock:
                passes, done = [dict(p) for p in self.passes], self.passes_done
            last = passes[-1] if passes else None
            alive = self._thread is not None and self._thread.is_alive()
            detail = f"every {self.worker_schedule}; {done} pass(es) done" + (
                f"; the last {last.get('status')}"
                + (f" ({last['error']})" if last.get("error") else "")
                # which run, and where its errors are read (before: "partial", no more)
                + (f" (run {last.get('run_id')}: {counted(last['errors'], 'error')}, listed by `taskspace runs`)"
                   if last.get("errors") else "")
                + f", {last['seconds']:.1f} s, its index published in {last['publish_seconds']:.2f} s" if last else "")
            if not alive and self.worker_stopped:  # the thread ended by itself: that it stopped, why and what to do
                # (before, the pass counts alone, as for a worker that would run again at its next pass)
                detail = (f"every {self.worker_schedule}; stopped after {done} pass(es): {self.worker_stopped}; the "
                          "server keeps serving its last index: restart it (`taskspace serve`) once this is fixed")
            checks["worker"] = {"ok": alive, "detail": detail, "passes": passes}
        return checks

    def _store_checks(self) -> dict:
        """The SQL store, the vector store and the index, read under the gate's read side."""
        from .query import _space
        from .space import space_name
        from .store.vectors import VectorStore

        checks: dict[str, dict] = {}
        space = None
        with self.gate.read():
            try:
                space = _space(self.store)
                checks["sql"] = {"ok": True, "detail": f"space {space_name(space)}"}
            except Exception as exc:  # noqa: BLE001 - any failure is "not ready", said in the answer
                from .errors import NotFoundError

                checks["sql"] = {"ok": isinstance(exc, NotFoundError),
                                 "detail": self.advice(scrub(str(exc)))}
            try:
                # an embedded index removed by hand (its folder, a kind's folder): read from the files, as an
                # indexing pass does; the engine may still answer from what it mapped before, until a restart
                gone = ([] if space is None or not self.vectors.local else
                        VectorStore.kinds_gone(self.vectors.path, self.vectors.engine, space_name(space)))
                n = self.vectors.count(space_name(space), "models", missing_ok=True) if space is not None and not gone else 0
                if space is None:
                    self.vectors.spaces()
                checks["vectors"] = {"ok": True, "detail": self.vectors.where if self.vectors.local else "server"}
                # an index of another dimension than SQL's space (copied from another home): every query is a 503
                # saying `taskspace reindex` rebuilds it, so not ready (before: "147 models indexed", ready)
                stepped = None if space is None or gone else self.vectors.out_of_step(space_name(space), space.dim)
                if gone:
                    missing = self.vectors.missing(space_name(space), gone)
                    checks["index"] = {"ok": False, "detail": self.advice(missing)}
                elif stepped is not None:
                    checks["index"] = {"ok": False, "detail": self.advice(scrub(str(stepped)))}
                elif space is None and not checks["sql"]["ok"]:  # which space to count is SQL's word: unknown (before:
                    # "the index is empty: stop this server, run `taskspace index`", for a whole index and a lost database)
                    checks["index"] = {"ok": False, "detail": "cannot be checked: the SQL store cannot be read (see sql)"}
                else:
                    checks["index"] = {"ok": n > 0, "detail": f"{counted(n, 'model')} indexed" if n else self.empty_index()}
            except Exception as exc:  # noqa: BLE001
                checks["vectors"] = {"ok": False, "detail": scrub(str(exc))}
                checks["index"] = {"ok": False, "detail": "the vector store cannot be read"}
        return checks


# ------------------------------------------------------------------------------------------------ the app
def cors_origins(origins) -> list[str]:
    """The origins ``taskspace serve --cors-origin`` allows, checked: each ``*`` (any) or ``scheme://host[:port]`` as
    a browser sends it in its ``Origin`` header (no path, query or trailing slash: such an origin never matches, so
    a browser would be refused with nothing said); a ConfigError naming the first one that is not."""
    from urllib.parse import urlsplit

    from .errors import ConfigError

    out: list[str] = []
    for raw in origins or ():
        o = str(raw).strip()
        try:
            parts = urlsplit(o)
            port_ok = parts.port is None or parts.port > 0
        except ValueError:
            parts, port_ok = None, False
        if o != "*" and (parts is None or not port_ok or parts.scheme not in ("http", "https") or not parts.hostname
                         or parts.path or parts.query or parts.fragment or parts.username is not None):
            raise ConfigError(f"--cors-origin {raw!r} is not an origin: give scheme://host[:port] as the browser sends "
                              "it (e.g. https://example.org or http://localhost:3000, no path), or * for any")
        if o not in out:
            out.append(o)
    return out


def create_app(service: Service | None = None, *, worker_schedule: str | None = None, cors: list[str] | None = None):
    """The FastAPI app. ``service``: one already built (tests); else one is built and started at start-up and
    closed at shutdown. ``cors``: the origins whose pages may call the API from a browser (:func:`cors_origins`;
    none: no CORS headers, so only pages served from the API's own origin, as its search page is)."""
    from fastapi import Body, Depends, FastAPI, Path as PathParam, Query, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, Response
    from starlette.exceptions import HTTPException as StarletteHTTPException

    from . import errors

    svc = service or Service(worker_schedule=worker_schedule)

    @asynccontextmanager
    async def lifespan(app):
        import anyio

        if svc.store is None or svc.vectors is None or svc.encoder is None:
            await anyio.to_thread.run_sync(svc.start)
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(svc.close)

    from . import __version__ as version

    async def known_query_parameters(request: Request) -> None:
        """A query parameter the route does not take is an error naming it (a typo such as ``?limt=5`` or
        ``/v1/find?k=3`` would otherwise be ignored without a word). The page (``/?q=...``) is not checked. On the
        event loop (no I/O here): a sync dependency takes a worker thread, which /healthz must not wait for."""
        route = request.scope.get("route")
        if route is None or not (getattr(route, "include_in_schema", False) or route.path == app.openapi_url):
            return
        if (control := _control_in_path(request.scope.get("path", ""))) is not None:
            raise ApiError(422, "invalid_request", *control)
        if "{" in getattr(route, "path", ""):  # a model id in the path: its bytes as a query parameter's (below)
            _path_is_utf8(request.scope.get("raw_path") or b"", len(route.path.split("{")[0]))
        path = request.url.path
        if path.endswith("/") and _trailing_slash_of(request.app, request.url.path, request.scope.get("raw_path")):
            # /v1/models/ (the model route with no id): the model list written with a trailing slash, as any other
            # route so written is answered (before: "a model id must be a non-empty string", or with ?limit=5
            # "unknown query parameter(s) ['limit']; /v1/models/ takes no query parameters")
            raise ApiError(404, "not_found", f"no route {path}: write it without the trailing slash: "
                           f"{path.rstrip('/')}", None)
        if not request.query_params:
            return
        _query_is_utf8(request.scope.get("query_string", b""))
        takes, one, todo = [], set(), [route.dependant]
        while todo:  # the route's own query parameters and those of its dependencies
            dep = todo.pop()
            takes += [p.alias for p in dep.query_params]
            one |= {p.alias for p in dep.query_params if not _takes_many(p.field_info.annotation)}
            todo += dep.dependencies
        unknown = sorted(set(request.query_params) - set(takes))
        _check_query_values(route.dependant.query_params, request.query_params)
        if not unknown:
            # a parameter that takes one value, given twice (?limit=2&limit=3): FastAPI keeps the last one without a word
            twice = sorted(n for n in one if len(request.query_params.getlist(n)) > 1)
            if twice:
                given = ", ".join(f"{twice[0]}={v}" for v in request.query_params.getlist(twice[0]))
                raise ApiError(422, "invalid_request", f"{twice[0]} takes one value, given {given}", twice[0])
            return
        path = request.url.path
        if takes:
            hint = f"{path} takes {', '.join(takes)}"
        elif request.method == "POST":
            hint = f"{path} takes its arguments in the JSON body (fields: {', '.join(FIND_FIELDS)})"
        else:
            hint = f"{path} takes no query parameters"
        # `?=x`: a value with no name, said so, `field` null (before: "unknown query parameter(s) ['']", `field` "")
        nameless = (f"a query parameter has no name (={request.query_params['']}): write it as name=value"
                    if "" in unknown else None)
        named = [n for n in unknown if n]
        said = "; ".join(s for s in (named and f"unknown query {noun(len(named), 'parameter')} {named}", nameless) if s)
        raise ApiError(422, "invalid_request", f"{said}; {hint}", named[0] if named else None)

    async def names_once(request: Request) -> None:
        """A name written twice in one object of the body, or a number that is not finite (``NaN``, ``Infinity``:
        not JSON, which Python's parser takes; ``1e999``, past float range), is an error naming it (JSON leaves a
        repeated name's meaning open, the parser kept the last). The body is already read and parsed by then: a body
        that does not parse has its own error. On the event loop: no I/O (the body is cached), parsing at most
        :data:`LIMITS` ``max_body_bytes``."""
        if (problem := body_problem(await request.body())) is not None:
            where, message = problem
            raise ApiError(422, "invalid_input", f"{where}: {message}", where)

    # the annotation as a class, not the string this module's `from __future__ import annotations` makes of it (FastAPI
    # resolves strings in the module's globals, where Request is not imported): the request, not a query parameter
    known_query_parameters.__annotations__["request"] = Request
    names_once.__annotations__["request"] = Request

    # no redirect of a path with a trailing slash (/v1/find/): a 404 naming the route instead (_http); the redirect was
    # a 307 with an empty body to an http:// URL built from the Host header, which clients that do not follow
    # redirects read as an answer without JSON, and which behind a TLS proxy pointed at plain http
    app = FastAPI(title="taskspace", version=version, lifespan=lifespan, docs_url=None, redoc_url=None,
                  redirect_slashes=False,
                  dependencies=[Depends(known_query_parameters)],
                  description="Find the model for a task: rank indexed models by their predicted success on prompts "
                              "or a benchmark. Read-only.")
    app.state.service = svc

    # -- errors: one shape
    def answer(status: int, code: str, message: str, field: str | None = None, *, retry_after: float | None = None,
               **extra) -> JSONResponse:
        """An error answer; ``retry_after``: seconds a 503 is known to last at least (or expected to), said in the
        ``Retry-After`` header (RFC 9110 10.2.3, whole seconds, at least 1); None: not known, no header."""
        headers = None if retry_after is None else {"Retry-After": str(max(1, math.ceil(retry_after)))}
        return JSONResponse(status_code=status, content={**error_body(code, message, field), **utf8_safe(extra)},
                            headers=headers)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        return answer(exc.status, exc.code, exc.message, exc.field)

    @app.exception_handler(errors.IndexerError)
    async def _library_error(request: Request, exc: errors.IndexerError):
        name = next((c.__name__ for c in type(exc).__mro__ if c.__name__ in _STATUS), None)
        status = _STATUS.get(name, 500)
        if status == 500:
            return _internal(request, exc)
        field = getattr(exc, "item", None)
        if isinstance(exc, errors.UnknownSpaceError):  # the client sent the field `space` (the library says `space=`)
            from .sources.common import example_value

            given = getattr(exc, "given", None)
            said = f"space {example_value(given)} {exc.detail}" if given is not None else str(exc)  # a long one cut
            return answer(status, "not_found", scrub(said), "space")
        if isinstance(exc, errors.DimensionError) and field != "vector":
            # only a query vector is the client's: any other dimension that disagrees is the index's, out of step
            # with SQL (copied from another home, another encoder), which `taskspace reindex` rebuilds (before: 422
            # invalid_input with the field "space NAME", one no client sent)
            status, field = 503, None
        message = svc.advice(_http_hints(scrub(str(exc))))
        indexing = isinstance(exc, errors.NotFoundError) and svc.INDEXING in message
        if indexing:
            status = 503  # being indexed by this server's running pass: there once it publishes, not unknown
        # an empty index this server's running worker fills: a wait for its pass, asked again (before: a 404, which
        # the page took for an answer and kept until reloaded while the worker published the index)
        building = (isinstance(exc, errors.NotFoundError) and svc.worker_running()
                    and svc.empty_index() in message)
        if building:
            status = 503
        code = {404: "not_found", 422: "invalid_input", 503: "unavailable"}[status]
        retry = None
        if status == 503:
            # how long is known: an encoder load that failed is tried again after RETRY_FAILED_LOAD_SECONDS; a benchmark
            # or an index this server's worker publishes, when its pass is expected to end (else nothing is said)
            retry = _retry_after_carried(exc)
            if retry is None and (indexing or building or (isinstance(exc, errors.IndexMissingError)
                                               and "next indexing pass" in str(exc))):
                retry = svc.publish_eta()
        return answer(status, code, message, field, retry_after=retry)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError):
        errs = exc.errors()
        first = errs[0] if errs else {}
        loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path")]
        field = ".".join(loc) or None
        kind = first.get("type", "")
        if kind == "json_invalid":  # where and why, as the parser said it (a trailing comma, single quotes)
            return answer(400, "invalid_json", _not_json(first, getattr(exc, "body", None)), None)
        sent = (request.headers.get("content-length", "0") not in ("", "0")
                or "chunked" in request.headers.get("transfer-encoding", "").lower())
        if kind == "missing" and not loc and sent:  # a body of JSON null: FastAPI takes it for no body
            return answer(422, "invalid_request", "the body must be a JSON object such as {\"prompts\": [\"...\"], "
                          "\"k\": 5}, not null", None)
        if kind == "missing" and not loc:
            return answer(400, "bad_request", "the request needs a JSON body, e.g. {\"prompts\": [\"...\"], \"k\": 5}",
                          None)
        if not loc and kind in ("dict_type", "model_type", "model_attributes_type"):
            ctype = request.headers.get("content-type")
            main = (ctype or "").split(";")[0].strip().lower()
            if main != "application/json" and not main.endswith("+json"):
                return answer(415, "unsupported_media_type", "the body must be JSON sent with the header content-type: "
                              f"application/json (got {('content-type: ' + ctype) if ctype else 'no content-type'})",
                              "content-type")
            what = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "true/false",
                    type(None): "null"}.get(type(first.get("input")), "not an object")
            return answer(422, "invalid_request", f"the body must be a JSON object such as {{\"prompts\": [\"...\"], "
                          f"\"k\": 5}}, not {what}", None)
        def one(e) -> str:
            where = ".".join(str(p) for p in e.get("loc", ()) if p not in ("body", "query", "path")) or "request"
            # a query parameter's type or bound in the words the body's fields get from the library ("open_only must
            # be true or false, not 'yes'"); before, pydantic's "Input should be a valid boolean, unable to interpret
            # input", which said neither what was sent nor what is taken
            kind, got, ctx = e.get("type"), e.get("input"), e.get("ctx") or {}
            if kind in ("bool_parsing", "int_parsing") and isinstance(got, str) and not got.strip():
                # an empty value (a form's empty field, ?offset=): no value, as every empty parameter is a 422; said so,
                # with the way to its default (before: "offset must be an integer, not ''", naming no way out)
                import json

                dependant = getattr(request.scope.get("route"), "dependant", None)
                default = next((p.field_info.default for p in getattr(dependant, "query_params", ())
                                if p.alias == where), None)
                takes = SWITCH_SAID if kind == "bool_parsing" else "an integer"
                dflt = "no such filter" if default is None else f"its default, {json.dumps(default)}"
                return f"{where} is empty: give {takes}, or leave {where} out for {dflt}"
            if kind == "bool_parsing":
                return f"{where} must be {SWITCH_SAID}, not {got!r}"
            if kind in ("int_parsing", "int_from_float"):
                return f"{where} must be an integer, not {got!r}"
            if kind == "greater_than_equal" and ctx.get("ge") in (0, 1):
                return f"{where} must be a {'non-negative' if ctx['ge'] == 0 else 'positive'} integer, not {got}"
            return f"{where}: {e.get('msg', 'invalid value')}"

        return answer(422, "invalid_request", "; ".join(one(e) for e in errs), field)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        code = _CODES.get(exc.status_code, "http_error")
        headers = getattr(exc, "headers", None)
        if exc.status_code in (404, 405) and (control := _control_in_path(request.scope.get("path", ""))) is not None:
            return answer(422, "invalid_request", *control)  # the path as sent, not request.url's (which drops it)
        if exc.status_code == 404:
            message = f"no route {request.url.path}; see /openapi.json"
            if _trailing_slash_of(request.app, request.url.path, request.scope.get("raw_path")):
                message = (f"no route {request.url.path}: write it without the trailing slash: "
                           f"{request.url.path.rstrip('/')}")
        elif exc.status_code == 400 and exc.detail == "There was an error parsing the body":
            cause = exc.__cause__  # what FastAPI's json.loads raised
            digits = re.search(r"Exceeds the limit \((\d+) digits\).*?value has (\d+) digits", str(cause or ""))
            if isinstance(cause, UnicodeDecodeError):
                code, message = "invalid_json", _not_utf8(cause)
            elif digits is not None:  # Python's guard on int(); before, "is it nested too deeply?", which it was not
                code, message = "invalid_json", (f"the request body holds an integer of {digits[2]} digits; the "
                                                 f"JSON parser reads at most {digits[1]}: send a shorter number")
            else:
                code, message = "invalid_json", "the request body could not be parsed as JSON (is it nested too deeply?)"
        elif exc.status_code == 405:
            method = request.scope.get("taskspace.method", request.method)  # HEAD, which _Head sends on as GET
            # a GET route takes HEAD too (_Head): Allow says so (before: "GET" alone), and the message says what it takes
            allow = [m.strip() for m in (headers or {}).get("Allow", "").split(",") if m.strip()]
            if "GET" in allow and "HEAD" not in allow:
                allow.append("HEAD")
            headers = {**(headers or {}), "Allow": ", ".join(allow)}
            message = f"method {method} is not allowed on {request.url.path}" + (
                f" (it takes {', '.join(allow)})" if allow else "")
        else:
            message = str(exc.detail)
        return JSONResponse(status_code=exc.status_code, content=error_body(code, message), headers=headers)

    def _internal(request, exc) -> JSONResponse:
        ref = uuid.uuid4().hex[:12]
        log.error("internal error %s on %s %s", ref, request.method, request.url.path, exc_info=exc)
        return answer(500, "internal_error", f"internal error (reference {ref}; the server log has the details)")

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        return _internal(request, exc)

    app.add_middleware(_Charset)  # inside the size limit, which is of the bytes sent
    app.add_middleware(_BodyLimit, limit=LIMITS["max_body_bytes"])
    app.add_middleware(_Head)
    if cors:  # outermost: a preflight is answered before any other middleware, every answer carries the headers
        # Retry-After (a 503's) is no CORS-safelisted answer header: exposed, so the page's script can read it.
        # "Content-Type" as Starlette's safelist spells it: it adds that list to ours as a set of strings, so
        # "content-type" was named twice (in Access-Control-Allow-Headers and in a refusal's "it allows ...")
        app.add_middleware(_cors_middleware(), allow_origins=cors_origins(cors), allow_methods=["GET", "HEAD", "POST"],
                           allow_headers=["Content-Type"], expose_headers=["Retry-After"], max_age=600)
    else:  # every preflight refused as such, whatever the path (before: the route's 405 for OPTIONS, or a 404)
        app.add_middleware(_NoCors)
    app.add_middleware(_SecurityHeaders)  # every answer, a preflight's and a 413's included
    app.add_middleware(_AbsoluteForm)  # outermost: every route and error sees the path the request names

    # -- routes (each lists its error statuses in /openapi.json, with the one error shape)
    fails = _error_responses()
    ok = _answer_responses()

    # every route refuses a query parameter it does not take (known_query_parameters, an app dependency): 422 on each,
    # those without parameters too (before, /healthz, /readyz and /v1/benchmarks declared none)
    @app.get("/healthz", tags=["service"], responses=fails(422))
    async def healthz() -> dict:
        """The process is up. On the event loop, not in the worker threads: while an index pass publishes, every
        query waits in one of them (40 at most), and a liveness probe queued behind them failed."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["service"], responses={**ok["ready"], **fails(422), **fails(503, ready=True)})
    async def readyz():
        """Ready when the stores answer, the index holds models and the encoder is loaded (503 otherwise). On the event
        loop: while an index pass publishes, the checks made before it, at once (before, a probe waited for the publish
        behind the queries in the worker threads, and a readiness probe's timeout took the server out of service)."""
        import anyio

        checks = svc.readiness(wait=False) or await anyio.to_thread.run_sync(svc.readiness)
        bad = [k for k, v in checks.items() if not v["ok"]]
        if bad:
            # only the index is not ready, and this server's worker builds or rebuilds it: ready when its pass is
            # expected to publish (Retry-After); another failing check (a store, the worker) lasts no known time
            retry = (svc.publish_eta() if bad == ["index"] and svc.worker_schedule and re.search(
                r"next indexing pass|this server's indexing worker", checks["index"]["detail"]) else None)
            return answer(503, "not_ready", "not ready: " + "; ".join(f"{k}: {checks[k]['detail']}" for k in bad),
                          None, retry_after=retry, checks=checks)
        return utf8_safe({"status": "ready", "checks": checks})  # a folder's name may not be UTF-8

    schema = _find_schema()
    defs = schema.pop("$defs", {})

    @app.post(BODY_ROUTE[1], tags=["find"], responses={**ok["find"], **fails(400, 404, 413, 415, 422, 503, 500)},
              dependencies=[Depends(names_once)],
              openapi_extra={"requestBody": {"required": True, "content": {
        "application/json": {"schema": schema, "example": {"prompts": ["Solve 2x + 3 = 7"], "k": 5,
                                                           "filters": {"max_params": "8B"}}}}}})
    def find(body: dict[str, Any] = Body(...)):
        """Rank the indexed models for a task: one of ``prompts`` (a string or a list), ``benchmark`` or
        ``vector``; ``k`` (<= 100), ``offset`` (skip the best ``offset``: ranks offset + 1 to offset + k), ``filters`` (licenses, min_params, max_params, pipeline_tag, exclude_gated,
        open_only, min_evidence, benchmark), ``models`` (compare mode), ``prefer_smaller``, ``rank``
        (probability | lcb), ``evidence``, ``space`` (default: the configured space, as ``taskspace search``
        without ``--space``). Answers what ``taskspace search --json`` prints."""
        args = find_arguments(body)
        written = _whole_floats(body)
        try:
            return _echo_as_written(svc.find(**args), written)
        except (errors.InputError, errors.UnknownSpaceError) as exc:  # named as the client sent it
            one = ("prompt" if body.get("prompt") is not None else "prompts" if isinstance(body.get("prompts"), str)
                   else None)
            if one is not None and exc.item == "prompts[0]":
                _named_as_sent(exc, "prompts[0]", one)
            if isinstance(body.get("models"), str) and exc.item == "models[0]":  # one model sent as a string
                _named_as_sent(exc, "models[0]", "models")
            filters = body.get("filters")
            # a number written as a float (1e300, -3.0) quoted as written, not as the integer _whole made of it (1e300:
            # 301 digits, its tail the double's rounding)
            if isinstance(exc, errors.UnknownSpaceError) and "space" in written:
                exc.given = _json_said(written["space"])
            elif exc.item in written and getattr(exc, "template", None) is not None:  # the value the library names
                exc.args = (exc.said_with(_json_said(written[exc.item])),)
            if exc.item == "filters.licenses[0]" and isinstance(filters, dict) and isinstance(filters.get("licenses"), str):
                exc.item = "filters.licenses"  # one license sent as a string: named as sent, not as the list it became
                exc.args = (str(exc).replace("licenses[0]", "licenses", 1),)
            raise
        except errors.NotFoundError as exc:  # a model not stored: `models[i]`, or `models` for one sent as a string
            if getattr(exc, "item", None) == "models[0]" and isinstance(body.get("models"), str):
                exc.item = "models"
            raise

    @app.get("/v1/models", tags=["browse"], responses={**ok["models"], **fails(404, 422, 503, 500)})
    def models(benchmark: str | None = None, offset: int = Query(0, ge=0),
               limit: int = Query(50, ge=1, json_schema_extra={"maximum": LIMITS["max_page"]}),
               license: list[str] | None = Query(None), min_params: str | None = None, max_params: str | None = None,
               pipeline_tag: str | None = None, exclude_gated: bool = False, open_only: bool = False,
               min_evidence: int | None = Query(None, ge=0), measured_on: str | None = None,
               space: str | None = Query(None, description=SPACE_PARAM)):
        """The indexed models by key, a page at a time (``next_offset`` is null on the last page)."""
        _check_space(space)  # ?space= (an empty choice): as the body's "space": "" (before: 404, "space '' is not a
        # known space", where every other empty parameter is a 422)
        if limit > LIMITS["max_page"]:
            raise ApiError(422, "limit_exceeded", f"limit: at most {LIMITS['max_page']} models per page "
                           f"(max_page), got {limit}", "limit")
        filters = {"licenses": license or None, "min_params": min_params, "max_params": max_params,
                   "pipeline_tag": pipeline_tag, "exclude_gated": exclude_gated, "open_only": open_only,
                   "min_evidence": min_evidence, "benchmark": measured_on}
        try:
            given = {k: v for k, v in filters.items() if v is not None}
            # with the total it is out of (as `taskspace models` titles a page, "3 of 25") and, per filter that needs
            # metadata (license, sizes, ...), how many models lack it, as /v1/find says
            return svc.models_page(benchmark=benchmark, offset=offset, limit=limit, filters=given, space=space)
        except errors.IndexerError as exc:  # the library names the filter; the client sent the query parameter
            item = getattr(exc, "item", None) or ""
            from .browse import FILTER_PARAMS  # GET /v1/models query parameter -> the filter it sets

            param = {f"filters.{v}": k for k, v in FILTER_PARAMS.items()}.get(item)
            if param is not None:
                _named_as_sent(exc, item, param)
            elif (entry := re.fullmatch(r"filters\.licenses\[(\d+)\]", item)) is not None:
                # one of the ?license= values: named as the parameter, which of them when several were given
                i, n = int(entry[1]), len(license or ())
                exc.item = "license"
                exc.args = (str(exc).replace(f"licenses[{i}]", "license" if n <= 1 else
                                             f"license (its value {i + 1} of {n})", 1),)
            raise

    @app.get("/v1/models/{model_id:path}", tags=["browse"], responses={**ok["model"], **fails(404, 422, 503, 500)})
    def model(model_id: str = PathParam(description="the model's key, Hub id (org/name: its slash is part of the path, "
                                                    "or sent as %2F) or any alias; an error about it names the field "
                                                    "`model`"),
              space: str | None = Query(None, description=SPACE_PARAM)):
        """One model (key, Hub id or alias): observed accuracy per benchmark, and where it is strongest."""
        _check_space(space)
        return svc.model(model_id, space=space)

    @app.get("/v1/benchmarks", tags=["browse"], responses={**ok["benchmarks"], **fails(404, 422, 503, 500)})
    def benchmarks():
        """Every benchmark: name, group, prompts, models measured."""
        return {"benchmarks": svc.benchmarks()}

    @app.get("/v1/spaces", tags=["browse"], responses={**ok["spaces"], **fails(422, 503, 500)})
    def spaces():
        """The embedding spaces (one per encoder and method indexed or pulled), as `taskspace spaces --json` lists
        them: the name `space` takes, encoder, method, dimension, models and benchmarks with a vector, how many models
        are stale (their results changed since their vector was solved), and which one a query without `space` takes
        (`default`)."""
        return {"spaces": svc.spaces()}

    # -- the page: its few small files answered from memory on the event loop, so it loads while queries wait for
    # a publish in the worker threads (a FileResponse reads the file in one of those threads, and waited for them)
    def web_file(request: Request, path: Path, media: str | None) -> Response:
        data, etag = _web_bytes(path)
        headers = {"etag": etag, "content-length": str(len(data))}
        if _none_match(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers={"etag": etag})
        return Response(data, media_type=media, headers=headers)

    async def page(request: Request):
        return web_file(request, WEB / "index.html", "text/html; charset=utf-8")

    async def static(request: Request, name: str):
        path = WEB / name
        # the page's files of a type it names, each answered with its content-type; the page itself is at /
        media = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}.get(path.suffix)
        if "/" in name or name.startswith(".") or media is None or not path.is_file():
            page = " (the page is at /)" if path == WEB / "index.html" else ""
            raise ApiError(404, "not_found", f"no static file {name!r}{page}", "name")
        return web_file(request, path, media)

    for endpoint in (page, static):  # the request as a class (see known_query_parameters), not a query parameter
        endpoint.__annotations__["request"] = Request
    app.add_api_route("/", page, methods=["GET"], include_in_schema=False)  # HEAD too (_Head)
    app.add_api_route("/static/{name}", static, methods=["GET"], include_in_schema=False)

    openapi = app.openapi

    def with_defs():  # the body schema's sub-schemas (FindFilters) beside FastAPI's own components
        doc = openapi()
        doc.setdefault("components", {}).setdefault("schemas", {}).update(defs)
        return doc

    app.openapi = with_defs
    # /openapi.json refuses a query parameter as every route of the API does (before, ?x=1 answered the document, the
    # one route that ignored one): FastAPI's own route, which runs no dependency, is answered by a route that does
    fastapi_doc = next(r for r in app.router.routes if getattr(r, "path", None) == app.openapi_url)
    app.router.routes.remove(fastapi_doc)

    async def openapi_doc(request: Request):
        return await fastapi_doc.endpoint(request)

    openapi_doc.__annotations__["request"] = Request  # the request, not a query parameter (see known_query_parameters)
    app.add_api_route(app.openapi_url, openapi_doc, methods=["GET"], include_in_schema=False)
    return app


@functools.lru_cache(maxsize=None)
def _web_bytes(path: Path) -> tuple[bytes, str]:
    """A page file's bytes and ETag, read once per process (the files are part of the package)."""
    data = path.read_bytes()
    return data, '"' + hashlib.md5(data, usedforsecurity=False).hexdigest() + '"'


def _none_match(header: str | None, etag: str) -> bool:
    """``If-None-Match`` matches ``etag`` (RFC 9110 13.1.2): ``*`` matches any current representation, else one of its
    comma-separated entity tags by weak comparison (``W/"x"`` matches ``"x"``). Before, the header was searched for
    the tag as a substring, so ``*`` (a cache or proxy asking "anything newer than what I hold?") answered 200."""
    if not header:
        return False
    tags = [t.strip() for t in header.split(",")]
    return "*" in tags or any(t.removeprefix("W/") == etag for t in tags)


def _retry_after_carried(exc: BaseException) -> float | None:
    """The ``retry_after`` seconds an error (or the error it was raised from) carries: an encoder whose load failed
    says when it tries again (:data:`indexer.encoder.RETRY_FAILED_LOAD_SECONDS`)."""
    seen = 0
    while exc is not None and seen < 10:
        if getattr(exc, "retry_after", None) is not None:
            return float(exc.retry_after)
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def _control_in_path(path: str) -> tuple[str, str | None] | None:
    """``(message, field)`` for a path (percent-decoded, as received) holding a line break, carriage return or tab
    (``%0A``, ``%0D``, ``%09``), which no route and no model id holds; None for any other path (a NUL is the model
    id's own error, :func:`indexer.browse.model_detail`). Python's URL parsing drops these three characters, so before, the answer quoted another path than the one sent ("no route
    /v1/models/ab" for ``/v1/models/a%0Ab``; for ``/v1/models/%0A`` "write it without the trailing slash"), and a
    route with a line break after it (``/v1/benchmarks%0A``) was answered as the route."""
    bad = re.search(r"[\t\n\r]", path)
    if bad is None:
        return None
    char = bad[0].encode("unicode_escape").decode("ascii")  # \n, \t, \x00
    shown = re.sub(r"[\x00-\x1f\x7f]", lambda m: m[0].encode("unicode_escape").decode("ascii"), path)
    field = "model" if path.startswith("/v1/models/") else None
    return (f"the path {shown} holds a control character ({char} at character {bad.start() + 1}, sent as "
            f"%{ord(bad[0]):02X}); no route or model id holds one: send the path without it", field)


def _trailing_slash_of(app, path: str, raw: bytes | None = None) -> bool:
    """``path`` is a route of ``app`` written with a trailing slash (``/v1/find/``, ``/v1/models/``), the slash as
    sent (``raw``, the path's bytes before percent-decoding): a percent-encoded one (``/v1/models/%2F``, the model id
    "/") is the id's text, not a trailing slash (before, its decoded path ``/v1/models//`` was told to drop it)."""
    bare = path.rstrip("/")
    return (bare != path and bool(bare) and (raw or path.encode()).split(b"?")[0].endswith(b"/")
            and any(getattr(r, "path", None) == bare for r in app.routes))


def _named_as_sent(exc, item: str, field: str) -> None:
    """The library's InputError about ``item`` (``filters.licenses``, ``prompts[0]``) said with the name the client
    sent (``license``, ``prompt``): its ``item`` and the message's leading ``item: `` become ``field``."""
    exc.item = field
    said = str(exc)
    exc.args = (said.replace(f"{item}: ", f"{field}: ", 1) if said.startswith(f"{item}: ") else said
                if said.startswith(f"{field} ") else f"{field}: {said}",)  # "measured_on: benchmark must ..."


def _error_responses():
    """``fails(status, ...)`` -> the OpenAPI ``responses`` of a route's error statuses, each the one error shape
    (FastAPI's default 422, ``{"detail": [...]}``, is not what the server answers)."""
    from pydantic import BaseModel, Field

    class ErrorDetail(BaseModel):
        code: str = Field(description="e.g. limit_exceeded, invalid_input, not_found, unavailable")
        message: str
        field: str | None = Field(description="the body field or query parameter at fault, or null")

    class Error(BaseModel):
        error: ErrorDetail

    class NotReady(Error):
        checks: dict[str, dict] = Field(description="each check: ok and detail")

    said = {400: "the body is not JSON (or not UTF-8), or there is none",
            404: "an empty index, or an unknown model or benchmark",
            413: "the body is over max_body_bytes",
            415: "the body was not sent as application/json",
            422: "a malformed field or parameter (or one the route does not take), or an input limit",
            500: "an internal error (its message carries a reference to the server log)",
            503: "a store cannot be reached, the index a query needs is missing, out of step with SQL or built by "
                 "another version of taskspace, or (readyz) not ready"}
    #: a 503's Retry-After, where how long it lasts is known
    retry = {"Retry-After": {"description": "seconds until it is expected to end, where that is known: an encoder load "
                                            "that failed is tried again then; a benchmark or an index this server's "
                                            "worker is building is expected to be published then",
                             "schema": {"type": "integer", "minimum": 1}}}
    return lambda *statuses, ready=False: {s: {"model": NotReady if ready else Error, "description": said[s],
                                               **({"headers": retry} if s == 503 else {})} for s in statuses}


def _answer_responses() -> dict:
    """The OpenAPI ``responses`` entry of each route's 200 answer: the shape the library's dicts have (``FindAnswer``
    is :meth:`indexer.find.FindResult.to_dict`, ``ModelPage`` the ``GET /v1/models`` page, ``ModelDetail``
    :func:`indexer.browse.model_detail`, ``BenchmarkList``, ``Ready``). Documentation only: the routes return the
    library's dicts as they are, nothing is converted or filtered on the way. Before, every 200 was declared as ``{}``
    (any JSON), so a client built from /openapi.json knew nothing of an answer's fields."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    class Metadata(BaseModel):
        license: str | None = Field(description="as the Hub gives it; several joined with a comma (apache-2.0,mit)")
        params: int | None = Field(description="parameter count")
        pipeline_tag: str | None
        gated: bool | None
        open_weights: bool = Field(description="the model has a Hub repo")
        base_model: str | None = Field(None, description="the model its card says it is a fine-tune, adapter, "
                                       "quantization or merge of (several joined with a comma)")
        params_from: str | None = Field(None, description="the repo whose parameter count params is when it is "
                                        "not the model's own (a PEFT adapter's base model), else null")

    class Identity(BaseModel):
        model: str = Field(description="its key: the Hub repo id when it has one")
        hub_id: str | None
        api_only: bool
        aliases: list[str] = Field(description="the other names its sources gave it")
        metadata: Metadata

    class AppliedFilters(BaseModel):
        """The filters as understood (units resolved: max_params 8B is 8000000000); unset ones are left out."""

        model_config = ConfigDict(extra="forbid")
        licenses: list[str] = None
        min_params: float = None
        max_params: float = None
        pipeline_tag: str = None
        exclude_gated: bool = None
        open_only: bool = None
        min_evidence: int = None
        benchmark: str = None

    class MeasuredNear(BaseModel):
        """How many of the results were measured near the query (their coverage.measured_near), said once."""

        results: int = Field(description="the results measured near the query (a benchmark query: on it)")
        of: int = Field(description="the results in the answer")
        any_model: bool = Field(description="false: no model in the index was measured on anything like this query "
                                            "(no indexed prompt is near it), so the ranking rests on the models' "
                                            "general ability alone")

    class Query(BaseModel):
        kind: Literal["prompt", "prompts", "benchmark", "vector"]
        prompts: int = Field(description="how many prompts the query was made of")
        options_filled: bool = Field(description="answer options were filled in from the nearest indexed questions")
        truncated: list[int] = Field(description="the prompts (0-based) longer than the encoder reads: only their "
                                                 "first max_tokens tokens were embedded")
        max_tokens: int | None = Field(description="the encoder's limit in tokens (word pieces); null when no prompt "
                                                   "was long enough to count")
        measured_near: MeasuredNear | None = Field(description="null: no result, or some result's coverage is "
                                                               "unknown")
        benchmark: str | None
        k: int
        offset: int = Field(description="the results are ranks offset + 1 to offset + k")
        rank: Literal["probability", "lcb"]
        prefer_smaller: float
        filters: AppliedFilters
        models: list[str] | None = Field(description="compare mode: the models asked for, by key")
        unranked: list[str] = Field(None, description="compare mode only: the models asked for that are not in "
                                                      "the answer (removed by a filter, or without a vector)")
        total: int = Field(description="how many models the ranking holds over all its pages (those the filters let "
                                       "through; compare mode: the models ranked), as GET /v1/models' total")
        next_offset: int | None = Field(description="the offset of the next page (offset + k); null on the last page "
                                                    "and in compare mode")

    class SpaceInfo(BaseModel):
        name: str
        id: int
        encoder: str
        method: str
        dim: int
        calibrated: bool
        signal: bool = Field(description="false: no rise of success with the score in the held-out results; every "
                                         "probability is then the base rate and every interval null")

    class Coverage(BaseModel):
        near: int | None = Field(description=(
            "indexed prompts near the query it was measured on (null: unknown); for a benchmark query, of the "
            "benchmark's own prompts nearest its mean (at most 50), not of all its prompts (`evidence` gives those)"))
        measured_near: bool | None
        benchmarks: list[str] | None

    class EvidencePrompt(BaseModel):
        text: str | None
        benchmark: str | None
        outcome: float | None = Field(description="its outcome on the prompt, 0 to 1")
        similarity: float | None

    class Observed(BaseModel):
        name: str = Field(description="a benchmark")
        accuracy: float | None
        n: int | None = Field(description="prompts its accuracy is of (null: unknown, records published without it)")

    class Evidence(BaseModel):
        prompts: list[EvidencePrompt]
        benchmarks: list[Observed]

    class Result(Identity):
        score: float | None
        rank_score: float | None = Field(description="what the results are ordered by")
        probability: float | None = Field(description="calibrated probability of success")
        interval: list[float] | None = Field(min_length=2, max_length=2, description="90% interval [low, high]")
        variance: float | None
        coverage: Coverage
        evidence: Evidence
        results_changed: bool = Field(description=(
            "true: the model's results changed since its vector was solved (ingested during an index pass, before "
            "its publish, or by `taskspace ingest` without `taskspace index`): its score and probability are from "
            "before them; its coverage and evidence are its results on the benchmarks that vector was fitted on "
            "(the same state where the change added benchmarks; changed results of one of them show as they are now)"))

    class FindAnswer(BaseModel):
        """What ``taskspace search --json`` prints."""

        query: Query
        space: SpaceInfo
        results: list[Result] = Field(description="best first")
        excluded: dict[str, int] = Field(description="per filter, how many models it removed")
        missing_metadata: dict[str, int] = Field(description="per filter, how many models lack the field it needs")

    class ListedModel(Identity):
        benchmarks: list[str]
        n_prompts: int | None
        accuracy: float | None = Field(description="the mean of its benchmarks' observed accuracies")

    class ModelPage(BaseModel):
        models: list[ListedModel]
        offset: int
        limit: int
        total: int = Field(description="how many models the query lists over all its pages")
        next_offset: int | None = Field(description="null on the last page")
        missing_metadata: dict[str, int] = Field(description="per filter given that needs metadata (named as sent), "
                                                             "how many models lack it")

    class Strength(BaseModel):
        benchmark: str
        probability: float | None
        mean: float | None = Field(description="the mean probability of every indexed model")
        delta: float | None
        rank: int
        of: int
        measured: bool

    class ModelDetail(Identity):
        indexed: bool
        n_prompts: int | None
        benchmarks: list[Observed]
        benchmarks_note: str | None
        strengths: list[Strength]
        results_changed: bool = Field(description=(
            "true: the model's results changed since its vector was solved (ingested during an index pass, before "
            "its publish, or by `taskspace ingest` without `taskspace index`): `benchmarks` shows its results now, "
            "`strengths` were predicted from before them"))
        space: str = Field(description="the embedding space whose vectors the strengths (and `indexed`) are of")

    class Benchmark(BaseModel):
        name: str
        group: str | None
        prompts: int
        models: int = Field(description="models measured on it")

    class BenchmarkList(BaseModel):
        benchmarks: list[Benchmark]

    class Space(BaseModel):
        name: str = Field(description="its index name: what `space` (POST /v1/find) and `?space=` take")
        id: int
        encoder: str
        method: str
        dim: int
        lam: float = Field(description="the lambda its models' vectors were solved with (TASKSPACE_LAMBDA)")
        eps: float = Field(description="the eps its models' vectors were solved with (TASKSPACE_EPS)")
        models: int = Field(description="models with a vector in it")
        benchmarks: int = Field(description="benchmarks with a vector in it")
        stale: int | None = Field(description="models whose results changed since their vector in it was solved (or "
                                              "that have none any more): the next indexing pass re-solves them in the "
                                              "configured space, no pass in another; null for a pulled (read-only) space")
        default: bool = Field(description="the space a query without `space` takes")
        configured: bool = Field(description="the space the server's settings configure (the one `taskspace index` "
                                             "updates)")
        origin: str | None = Field(description="where a pulled space came from (null: built here)")

    class SpaceList(BaseModel):
        spaces: list[Space]

    class Check(BaseModel):
        ok: bool
        detail: str
        passes: list[dict] = Field(None, description="the worker check: its recent passes")

    class Ready(BaseModel):
        status: Literal["ready"]
        checks: dict[str, Check]

    said = {"find": (FindAnswer, "the ranked models (what `taskspace search --json` prints)"),
            "models": (ModelPage, "a page of the indexed models"), "model": (ModelDetail, "one model"),
            "benchmarks": (BenchmarkList, "every benchmark"), "spaces": (SpaceList, "every embedding space"),
            "ready": (Ready, "ready")}
    return {name: {200: {"model": model, "description": description}} for name, (model, description) in said.items()}


#: what a switch query parameter (``?open_only=``, ``?exclude_gated=``) takes, in any case, and its errors' words for
#: it: each value taken is said (before, "must be true or false", though 1 and 0 are taken as the page's URL writes them)
SWITCH_VALUES = ("true", "false", "1", "0")
SWITCH_SAID = "true, false, 1 or 0"


def _check_query_values(params, given) -> None:
    """ApiError 422 ``invalid_request`` for a value of the route's own query parameters ``params`` (FastAPI's) in the
    request's ``given`` that is no value of its type as the API writes it: an integer in decimal digits (Python's
    ``1_0``, ``+5`` or `` 5`` are no such; a blank one is the validation's "empty"), a switch true or false (any case)
    or 1 or 0, as the page's URL writes it (not pydantic's yes/no/on/off/t/f/y/n, beside an error saying "must be true
    or false"); and a text parameter left empty (a form's empty field, ``?benchmark=``) said in the words and code an
    empty number or switch gets (:data:`EMPTY_TEXT_PARAMS`)."""
    bad = [(p.alias, v) for p in params if _takes_int(p.field_info.annotation) for v in given.getlist(p.alias)
           if v.strip() and not re.fullmatch(r"-?[0-9]+", v)]
    if bad:  # each one said, as the validation's
        raise ApiError(422, "invalid_request", "; ".join(f"{name} must be an integer, not {v!r}" for name, v in bad),
                       bad[0][0])
    loose = next(((p.alias, v) for p in params if p.field_info.annotation in (bool, "bool")
                  for v in given.getlist(p.alias) if v.strip() and v.strip().lower() not in SWITCH_VALUES), None)
    if loose is not None:
        raise ApiError(422, "invalid_request", f"{loose[0]} must be {SWITCH_SAID}, not {loose[1]!r}", loose[0])
    empty = next((p.alias for p in params if p.alias in EMPTY_TEXT_PARAMS
                  for v in given.getlist(p.alias) if not v.strip()), None)
    if empty is not None:
        wants, default = EMPTY_TEXT_PARAMS[empty]
        raise ApiError(422, "invalid_request", f"{empty} is empty: give {wants}, or leave {empty} out for {default}", empty)


def _takes_int(annotation) -> bool:
    """A query parameter's type is an integer (``int``, ``int | None``)."""
    from typing import get_args

    return annotation is int or (int in get_args(annotation) and not _takes_many(annotation))


def _takes_many(annotation) -> bool:
    """A query parameter's type takes several values (``list[str] | None``: ``?license=a&license=b``)."""
    from typing import get_args, get_origin

    return get_origin(annotation) in (list, tuple, set) or any(_takes_many(a) for a in get_args(annotation)
                                                                if get_origin(annotation) is not None)


def _find_schema() -> dict:
    """The JSON schema of a ``/v1/find`` body, for the OpenAPI document (the checks are :func:`find_arguments` and
    the library's, whose messages name the field). Every field and filter is optional and takes null for its
    default (:func:`find_arguments` drops it)."""
    from typing import Annotated, Literal

    from pydantic import BaseModel, ConfigDict, Field

    from .find import MAX_PREFER_SMALLER

    # each variant of a union carries its own limits (maxLength on a list is no limit at all in JSON Schema); a
    # name or a prompt may come alone where the library takes a list (indexer.find.Filters, find_models). A text the
    # server refuses as blank (empty or spaces only) is refused by the schema too (pattern: a non-space character),
    # and so is an empty list of prompts or models (before, the schema let both through to a 422)
    Text = Annotated[str, Field(pattern=r"\S")]
    Prompt = Annotated[str, Field(max_length=LIMITS["max_prompt_chars"], pattern=r"\S")]

    class FindFilters(BaseModel):
        model_config = ConfigDict(extra="forbid")
        licenses: list[Text] | Text | None = Field(None, description="any of these licenses (one may be a string; "
                                                                      "\"apache-2.0,mit\" names both)")
        min_params: str | float | None = Field(None, description="parameters, e.g. 1.5B")
        max_params: str | float | None = Field(None, description="parameters, e.g. 8B")
        pipeline_tag: Text | None = None
        exclude_gated: bool | None = Field(False, description="leave out gated models (null: false)")
        open_only: bool | None = Field(False, description="only models with a Hub repo (open weights; null: false)")
        min_evidence: int | None = Field(None, ge=0, description="measured on at least this many prompts")
        benchmark: Text | None = Field(None, description="measured on this benchmark")

    class FindBody(BaseModel):
        """Exactly one of prompts (or prompt), benchmark, vector."""

        model_config = ConfigDict(extra="forbid")
        prompts: Annotated[list[Prompt], Field(min_length=1, max_length=LIMITS["max_prompts"])] | Prompt | None = Field(
            None, description="example prompts of the task (their mean is the query), or one prompt as a string")
        prompt: Prompt | None = Field(None, description="one prompt")
        benchmark: Text | None = Field(None, description="a benchmark name: its vector is the query")
        vector: list[float] | None = Field(None, max_length=LIMITS["max_vector_length"],
                                           description="a raw query in the space's index form")
        k: Annotated[int, Field(ge=1, le=LIMITS["max_k"])] | None = Field(10, description="how many results (null: "
                                                                                        "10)")
        offset: Annotated[int, Field(ge=0)] | None = Field(
            0, description="skip the best offset models: the results are ranks offset + 1 to offset + k (a page of the "
                           "ranking, as GET /v1/models pages; not with models; null: 0)")
        filters: FindFilters | None = None
        models: Annotated[list[Text], Field(min_length=1, max_length=LIMITS["max_models"])] | Text | None = Field(
            None, description="compare mode: rank exactly these models (one may be a string)")
        prefer_smaller: Annotated[float, Field(ge=0, le=MAX_PREFER_SMALLER)] | None = Field(
            0.0, description="rank by score - ALPHA * log10(parameters) (null: 0)")
        rank: Literal["probability", "lcb"] | None = Field("probability", description="null: probability")
        evidence: Annotated[int, Field(ge=0, le=LIMITS["max_evidence"])] | None = Field(
            3, description="evidence items per result (null: 3)")
        space: Text | int | None = Field(None, description=SPACE_PARAM + " (the id may be a JSON integer)")

    return FindBody.model_json_schema(ref_template="#/components/schemas/{model}")


class _Pairs(list):
    """A JSON object as its (name, value) pairs in order, duplicates kept (:func:`body_problem`)."""


class _NotFinite:
    """A number of the body that is not finite, as written: ``NaN``, ``Infinity``, ``-Infinity`` (not JSON; Python's
    parser takes them) or a number past float range (``1e999``, which it reads as infinity)."""

    def __init__(self, text: str):
        self.text = text


def _finite_float(text: str):
    value = float(text)
    return value if value - value == 0 else _NotFinite(text)


def _first_problem(node, path: str) -> tuple[str, str] | None:
    if isinstance(node, _Pairs):
        seen: set = set()
        for name, value in node:
            where = f"{path}.{name}" if path else str(name)
            if name in seen:
                return where, "written twice in one JSON object; send each name once"
            seen.add(name)
            if (got := _first_problem(value, where)) is not None:
                return got
    elif isinstance(node, list):
        for i, value in enumerate(node):
            if (got := _first_problem(value, f"{path}[{i}]")) is not None:
                return got
    elif isinstance(node, _NotFinite):
        if node.text.lstrip("-") in ("NaN", "Infinity"):
            return path or "body", (f"{node.text} is not a JSON number (JSON has no NaN or Infinity); send a finite "
                                    "number")
        return path or "body", f"{node.text} is past the range of a number (a double); send a finite number"
    return None


def body_problem(raw: bytes) -> tuple[str, str] | None:
    """``(path, what is wrong)`` for the first name a JSON body writes twice in one object (``k``,
    ``filters.licenses``, ``prompts[0].x``) or the first number in it that is not finite (``vector[3]``: ``NaN``,
    ``Infinity``, ``1e999``); None when there is neither (or the body does not parse: its own error says so). JSON
    leaves the meaning of a repeated name open and Python keeps the last, so ``{"k": 5, "k": 50}`` would be answered
    for 50 without a word; and Python's parser reads ``NaN`` and ``Infinity``, which are not JSON, so the library was
    told of a ``nan`` the client never wrote."""
    import json

    try:
        return _first_problem(json.loads(raw, object_pairs_hook=_Pairs, parse_constant=_NotFinite,
                                         parse_float=_finite_float), "")
    except (ValueError, RecursionError):
        return None


def find_arguments(body: dict) -> dict:
    """The ``find_models`` keyword arguments of a ``/v1/find`` body, after the limits (:data:`LIMITS`); the library
    checks the rest (types, filters, names) and says what is wrong."""
    import difflib

    from .sources.common import example_value, values_listed

    if not isinstance(body, dict):
        raise ApiError(422, "invalid_request", "the body must be a JSON object", None)
    unknown = sorted(set(body) - set(FIND_FIELDS))
    if unknown:
        name = unknown[0]
        low = name.strip().lower()  # "PROMPTS", "K", "prompts ": ours in another case or with spaces
        ours = (_FIND_SYNONYMS.get(low) or (low if low in FIND_FIELDS else None)
                or next(iter(difflib.get_close_matches(low, FIND_FIELDS, n=1)), None))
        hint = f" (did you mean {ours!r}?)" if ours else ""
        more = f" (also {values_listed(unknown[1:])})" if len(unknown) > 1 else ""  # each cut, the first few
        raise ApiError(422, "invalid_request", f"unknown field {example_value(name)}{hint}{more}; the fields are "
                       f"{', '.join(FIND_FIELDS)}", name)
    # null in an optional field (every field of the body, every filter) is the field left out, its default, as most
    # JSON APIs read it (a client serialising an unset option); before, "k": null was a 422 while "filters": null and
    # "models": null were the default. An entry of a list (prompts, vector, licenses) is no optional field: its null
    # is still named
    body = {name: value for name, value in body.items() if value is not None}
    if isinstance(body.get("filters"), dict):
        body["filters"] = {name: value for name, value in body["filters"].items() if value is not None}
    # a knob written as true or false: the library's words would be Python's ("k must be a positive integer, not
    # True"), for a value the client wrote as true; said in JSON's, with what it takes and the way to get the default
    for name, takes in _KNOBS.items():
        if name in body and isinstance(body[name], bool):
            import inspect
            import json

            from .find import MAX_PREFER_SMALLER, find_models

            default = inspect.signature(find_models).parameters[name].default
            takes = takes.format(max_prefer=MAX_PREFER_SMALLER)
            raise ApiError(422, "invalid_input", f"{name}: {json.dumps(body[name])} is not a value of {name} ({takes}); "
                           f"leave {name} out (or null) for its default ({default})", name)
    args = dict(body)
    # a whole number written with a fraction (5.0: a client that computed it as a float) is the integer JSON Schema
    # takes it for, as /openapi.json declares k, evidence and min_evidence "integer" (before: "k must be a positive
    # integer, not 5.0", a body valid by the document refused)
    args.update({name: _whole(args[name]) for name in ("k", "offset", "evidence", "space") if name in args})
    if isinstance(args.get("filters"), dict) and "min_evidence" in args["filters"]:
        args["filters"] = {**args["filters"], "min_evidence": _whole(args["filters"]["min_evidence"])}
    if "prompt" in args:  # one prompt: "prompt": "..." is "prompts": ["..."]
        if "prompts" in args:
            raise ApiError(422, "invalid_request", "give prompt or prompts, not both", "prompt")
        if not isinstance(args["prompt"], str):
            raise ApiError(422, "invalid_request", f"prompt must be one string, not {_json_type(args['prompt'])}; "
                           "send several example prompts as a list in prompts", "prompt")
        _check_length(args["prompt"], "prompt")
        args["prompts"] = args.pop("prompt")
    prompts = args.get("prompts")
    if isinstance(prompts, list):
        if len(prompts) > LIMITS["max_prompts"]:
            raise ApiError(422, "limit_exceeded", f"prompts: at most {LIMITS['max_prompts']} example prompts per "
                           f"request (max_prompts), got {len(prompts)}", "prompts")
        for i, p in enumerate(prompts):
            _check_length(p, f"prompts[{i}]")
    else:
        _check_length(prompts, "prompts")
    k = args.get("k")
    if isinstance(k, int) and not isinstance(k, bool) and k > LIMITS["max_k"]:
        # quoted as the body wrote it (1e300 is "1e+300"; before, the integer _whole made of it, 301 digits)
        raise ApiError(422, "limit_exceeded", f"k: at most {LIMITS['max_k']} results (max_k), got {body['k']}", "k")
    for name, limit in (("models", "max_models"), ("vector", "max_vector_length")):
        v = args.get(name)
        if isinstance(v, list) and len(v) > LIMITS[limit]:
            raise ApiError(422, "limit_exceeded", f"{name}: at most {LIMITS[limit]} entries ({limit}), got {len(v)}",
                           name)
    _check_json_types(args)
    _check_space(args.get("space"))
    ev = args.get("evidence")
    if isinstance(ev, int) and not isinstance(ev, bool) and ev > LIMITS["max_evidence"]:
        # quoted as the body wrote it, as k is (before: 1e300 as the 301-digit integer _whole made of it)
        raise ApiError(422, "limit_exceeded", f"evidence: at most {LIMITS['max_evidence']} per result "
                       f"(max_evidence), got {body['evidence']}", "evidence")
    return args


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_text(v) -> bool:
    return isinstance(v, str)


#: the JSON type each ``/v1/find`` field takes (as /openapi.json declares it) and how a message says so: a value of
#: another type is a 422 in JSON's words here; the library judges the rest (a blank name, a negative k, an unknown
#: benchmark) in words that read the same in JSON (``-1``, ``1.5``, an empty string)
_FIND_TYPES = {
    "prompts": (lambda v: _is_text(v) or isinstance(v, list), "a string or a list of strings"),
    "benchmark": (_is_text, "one benchmark name (a string)"),
    "vector": (lambda v: isinstance(v, list), "a list of numbers"),
    "k": (_is_int, _KNOBS["k"]),
    "offset": (_is_int, _KNOBS["offset"]),
    "evidence": (_is_int, _KNOBS["evidence"]),
    "prefer_smaller": (_is_number, _KNOBS["prefer_smaller"]),
    "rank": (_is_text, _KNOBS["rank"]),
    "models": (lambda v: _is_text(v) or isinstance(v, list), "a model name or a list of them"),
    "filters": (lambda v: v is None or isinstance(v, dict), "an object"),
}
#: the same for each filter of ``filters`` (a null filter never comes here: :func:`find_arguments` drops it, the
#: filter's default)
_FILTER_TYPES = {
    "licenses": (lambda v: v is None or _is_text(v) or isinstance(v, list), "a license name or a list of them"),
    "min_params": (lambda v: v is None or _is_text(v) or _is_number(v),
                   "a parameter count, a number or a string such as 8B or 770M"),
    "max_params": (lambda v: v is None or _is_text(v) or _is_number(v),
                   "a parameter count, a number or a string such as 8B or 770M"),
    "pipeline_tag": (lambda v: v is None or _is_text(v), "a string"),
    "benchmark": (lambda v: v is None or _is_text(v), "a benchmark name (a string)"),
    "exclude_gated": (lambda v: isinstance(v, bool), "true or false"),
    "open_only": (lambda v: isinstance(v, bool), "true or false"),
    "min_evidence": (lambda v: v is None or _is_int(v), "a non-negative integer"),
}


def _json_said(value) -> str:
    """``value`` as the client wrote it in JSON: a scalar as JSON writes it (``true``, ``null``, ``"3"``, ``5``), a list
    or an object by its kind (the library's words were Python's: ``True``, ``None``, ``'3'``, ``int``, ``dict``)."""
    import json

    if isinstance(value, (list, dict)):
        return _json_type(value)
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_json_types(args: dict) -> None:
    """A ``/v1/find`` field (or filter, or entry of a list) of another JSON type than it takes is a 422 naming it and
    saying what it takes and what was sent in JSON's words (:data:`_FIND_TYPES`). Before, the library's Python words
    came back: "licenses must be ... not int", "True is not a parameter count", "a license must be a non-empty
    string" for a number, "open_only must be true or false, not None"."""
    from .find import MAX_PREFER_SMALLER, licence_names, no_licence

    def refuse(field: str, name: str, takes: str, value) -> None:
        takes = takes.replace("{max_prefer:g}", f"{MAX_PREFER_SMALLER:g}")
        raise ApiError(422, "invalid_input", f"{name} must be {takes}, not {_json_said(value)}", field)

    for name, (fits, takes) in _FIND_TYPES.items():
        if name in args and not fits(args[name]):
            refuse(name, name, takes, args[name])
    for name, what in (("prompts", "a prompt"), ("models", "a model name")):
        if isinstance(args.get(name), list):
            for i, v in enumerate(args[name]):
                if not isinstance(v, str):
                    refuse(f"{name}[{i}]", f"{name}[{i}]", f"{what} (a string)", v)
    if isinstance(args.get("vector"), list):
        for i, v in enumerate(args["vector"]):
            if not _is_number(v):
                refuse(f"vector[{i}]", f"vector[{i}]", "a number (vector is a list of numbers)", v)
    filters = args.get("filters")
    if isinstance(filters, dict):
        for name, (fits, takes) in _FILTER_TYPES.items():
            if name in filters and not fits(filters[name]):
                refuse(f"filters.{name}", name, takes, filters[name])
        # each license named by its path as the client wrote it (filters.licenses[1], or filters.licenses for one given
        # as a string) and said with its value; before, `field` filters.licenses for any entry, and a blank one was
        # the library's "a license must be a non-empty string", which named neither the entry nor what it held
        lic = filters.get("licenses")
        for i, v in enumerate([lic] if isinstance(lic, str) else lic if isinstance(lic, list) else []):
            at = "licenses" if isinstance(lic, str) else f"licenses[{i}]"
            if not isinstance(v, str):
                refuse(f"filters.{at}", at, "a license name (a string)", v)
            if not licence_names(v):  # in the library's words, with the value as JSON writes it
                raise ApiError(422, "invalid_input", f"{at} {no_licence(v, _json_said(v))}", f"filters.{at}")


def _check_space(sp) -> None:
    """A ``space`` given (the body's field, the ``?space=`` parameter) is a non-empty string or (in the body) a space's
    SQL id as a JSON integer (the ``id`` ``GET /v1/spaces`` lists; before, 422 "not a number", though the id is what
    ``"space": "2"`` and ``?space=2`` take), else a 422 naming it: blanks and invisible characters alone name none.
    The listing it points to is the client's, ``GET /v1/spaces`` (before, "as `taskspace spaces` and GET /v1/spaces
    list them": a command an HTTP client cannot run, beside the endpoint)."""
    import json

    from .records import INVISIBLE_ONLY, is_blank

    if isinstance(sp, int) and not isinstance(sp, bool):
        return
    # invisible characters alone (a zero-width space) name no space either: refused as blanks are, not looked up
    if sp is not None and (not isinstance(sp, str) or is_blank(sp)):
        said = (_json_type(sp) if not isinstance(sp, str) else "an empty string" if not sp.strip() else
                f"{json.dumps(sp[:40])}, which holds {INVISIBLE_ONLY}")  # escaped: the characters show
        raise ApiError(422, "invalid_request", f"space must be a space's name or id (a non-empty string, or the id as an "
                       f"integer, as GET /v1/spaces lists them), not {said}", "space")


def _whole(value):
    """``value`` as an int when it is a float with no fraction (``5.0``), else as it is (the library names the rest)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


#: the integer fields of a ``/v1/find`` body (their paths) that :func:`_whole` reads from a whole float
_WHOLE_FIELDS = ("k", "offset", "evidence", "space", "filters.min_evidence")


def _whole_floats(body) -> dict:
    """Path -> the float the body wrote, for each of :data:`_WHOLE_FIELDS` written as a whole float (``1e300``,
    ``-3.0``): what an error about it quotes (:func:`_json_said`, as ``k`` and ``evidence`` over their limits are), not
    the integer :func:`_whole` made of it (1e300: 301 digits, a number nobody wrote)."""
    out = {}
    for path in _WHOLE_FIELDS if isinstance(body, dict) else ():
        node, name = _holder(body, path)
        value = node.get(name) if node is not None else None
        if isinstance(value, float) and value.is_integer():
            out[path] = value
    return out


def _echo_as_written(answer: dict, written: dict) -> dict:
    """The answer's ``query.offset`` and ``query.filters.min_evidence`` as the body wrote them when the integer
    :func:`_whole` made of that float is another number than the one written (``1e300`` is 10**300 plus the double's
    rounding: echoed ``1e+300``, not 301 digits); ``1.0`` or ``1e20`` stay the integers they write."""
    import decimal

    query = answer.get("query") if isinstance(answer, dict) else None
    for path, value in written.items():
        node, name = _holder(query, path)
        if node is not None and name in node and decimal.Decimal(repr(value)) != int(value):
            node[name] = value
    return answer


def _holder(root, path: str) -> tuple[dict | None, str]:
    """The dict of ``root`` that holds the field at ``path`` (``"k"``: ``root``; ``"filters.min_evidence"``: ``root``'s
    ``filters``), or None where there is none, and the field's own name."""
    parent, _, name = path.rpartition(".")
    node = (root.get(parent) if isinstance(root, dict) else None) if parent else root
    return (node if isinstance(node, dict) else None), name


def _not_json(error: dict, doc) -> str:
    """The message for a body the JSON parser refused: its reason, and the line and column (of ``doc``, the body's
    text) where it stopped."""
    why = (error.get("ctx") or {}).get("error")
    loc = error.get("loc") or ()
    pos = loc[-1] if loc and isinstance(loc[-1], int) else None
    where = ""
    if pos is not None and isinstance(doc, str):
        line = doc.count("\n", 0, pos) + 1
        where = f" at line {line}, column {pos - doc.rfind(chr(10), 0, pos)} (character {pos})"
    return f"the request body is not valid JSON: {why or 'JSON decode error'}{where}"


def _not_utf8(exc: UnicodeDecodeError) -> str:
    """The message for a body whose bytes are not UTF-8 (the offset is into the body as sent)."""
    bad = bytes(exc.object[exc.start:exc.start + 1]) if isinstance(exc.object, (bytes, bytearray)) else b""
    byte = f" 0x{bad.hex()}" if bad else ""
    return (f"the request body is not UTF-8 JSON ({exc.reason}{byte} at byte {exc.start}); send the JSON encoded as "
            "UTF-8 (a JSON \\uXXXX escape carries any character)")


def _query_is_utf8(raw: bytes) -> None:
    """A query parameter whose percent-decoded bytes are not UTF-8 (``?license=mit%FF``, a Latin-1 ``caf%E9``) is an
    error naming it, as such a body is; before, each bad byte became U+FFFD and the answer was for that other value
    (no model of license 'mit\ufffd') without a word."""
    from urllib.parse import unquote_to_bytes

    for part in raw.split(b"&"):
        name, _, value = part.partition(b"=")
        for piece in (name, value):
            data = unquote_to_bytes(piece.replace(b"+", b" "))
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as exc:
                field = unquote_to_bytes(name.replace(b"+", b" ")).decode("utf-8", "backslashreplace")
                raise ApiError(422, "invalid_request", f"query parameter {field!r} is not UTF-8 ({exc.reason} "
                               f"0x{data[exc.start]:02x} at byte {exc.start} of its {'name' if piece is name else 'value'}"
                               " percent-decoded); percent-encode the UTF-8 bytes of the text", field) from None


def _path_is_utf8(raw: bytes, start: int) -> None:
    """A path whose percent-decoded bytes are not UTF-8 (``/v1/models/caf%E9``, Latin-1) is an error naming the model
    it carries (``start``: where the id begins in the path), as such a query parameter is (:func:`_query_is_utf8`); before, each bad byte became U+FFFD and the
    answer was "unknown model 'caf\ufffd'", a name the client never sent."""
    from urllib.parse import unquote_to_bytes

    data = unquote_to_bytes(raw)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(422, "invalid_request", f"the model id in the path is not UTF-8 ({exc.reason} "
                       f"0x{data[exc.start]:02x} at byte {exc.start - start} of the id percent-decoded); percent-encode "
                       "the UTF-8 bytes of the id", "model") from None


def _json_type(value) -> str:
    return {list: "a list", dict: "an object", str: "a string", bool: "true/false", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _check_length(text, field: str) -> None:
    if isinstance(text, str) and len(text) > LIMITS["max_prompt_chars"]:
        raise ApiError(422, "limit_exceeded", f"{field}: a prompt has at most {LIMITS['max_prompt_chars']} "
                       f"characters (max_prompt_chars), got {len(text)}", field)


#: the (method, path) of the one route that reads a request body: the body's checks (size, encoding, charset) are its
BODY_ROUTE = ("POST", "/v1/find")


def _reads_body(scope) -> bool:
    """The request goes to the route that reads its body (:data:`BODY_ROUTE`); any other is answered by its own route,
    a 405 or a 404, before its body is read."""
    return scope["type"] == "http" and (scope["method"], scope.get("path")) == BODY_ROUTE


class _BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes is answered 413 (by its Content-Length before
    reading, else when the streamed body passes the limit); a compressed one (Content-Encoding) 415."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        # only POST /v1/find reads a body: another method or path (a GET, HEAD, `POST /v1/models`, `POST /v1/fnd`) is
        # answered by its route's 405 or 404 whatever its Content-Encoding or Content-Length, as /openapi.json
        # declares no 413 or 415 for those
        if not _reads_body(scope):
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        coding = headers.get(b"content-encoding", b"").decode("latin-1").strip()
        if coding and coding.lower() != "identity":  # a compressed body was parsed as it came ("not UTF-8"): 415
            return await _send_json(send, 415, error_body(
                "unsupported_media_type", f"the body is sent with content-encoding: {coding}, which this server does not "
                "decode: send it uncompressed (no content-encoding header)", "content-encoding"))
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            return await self._reject(send, int(declared))
        seen = 0
        over = False  # the body passed the limit: whatever the app answers (a parse error), the client gets 413

        async def counted():
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    over = True
                    raise _TooLarge(seen)
            return message

        replaced = False

        async def answer(message):
            nonlocal replaced
            if over:
                if message["type"] == "http.response.start" and not replaced:
                    replaced = True
                    await self._reject(send, seen, at_least=True)
                return
            await send(message)

        try:
            await self.app(scope, counted, answer)
        except _TooLarge:
            if not replaced:
                await self._reject(send, seen, at_least=True)

    async def _reject(self, send, size: int, at_least: bool = False):
        # a body without a Content-Length is read only until it passes the limit: its size is a lower bound
        size_said = f"at least {size} bytes (read so far)" if at_least else f"{size} bytes"
        await _send_json(send, 413, error_body("body_too_large", f"the request body is {size_said}; the limit is "
                                               f"{self.limit} bytes (max_body_bytes)", "body"))


async def _send_json(send, status: int, content: dict):
    """An error answered by an ASGI middleware (:class:`_BodyLimit`, :class:`_Charset`), before any route runs."""
    # rendered by the JSONResponse every other error is (compact, UTF-8 as it is), with its headers: before,
    # json.dumps' spaced separators and \uXXXX escapes, so a 413 or 415 read differently from a 422 or a 404
    from starlette.responses import JSONResponse

    response = JSONResponse(content, status_code=status)
    await send({"type": "http.response.start", "status": status, "headers": response.raw_headers})
    await send({"type": "http.response.body", "body": response.body})


#: Python codecs (by their codecs.lookup name) that are no charset a client declares: backslash escapes, domain
#: names, a table of none
_NOT_CHARSETS = ("unicode-escape", "raw-unicode-escape", "idna", "punycode", "undefined", "charmap")


class _Charset:
    """ASGI middleware: a JSON body whose content-type declares a charset other than UTF-8 (``application/json;
    charset=latin-1``, as ASP.NET Core and Spring read it) is read in that charset and handed on as UTF-8; a charset
    this server does not know is a 415 naming it, bytes not of the declared charset a 400 naming it, the byte and
    where. Before, every body was read as UTF-8 whatever it declared. Inside :class:`_BodyLimit`: the limit is of the
    bytes sent."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if not _reads_body(scope):  # its route's 405 or 404, whatever its charset (as _BodyLimit)
            return await self.app(scope, receive, send)
        headers = list(scope.get("headers") or [])
        ctype = dict(headers).get(b"content-type", b"").decode("latin-1")
        main, *params = [part.strip() for part in ctype.split(";")]
        charset = next((value.strip().strip('"') for name, _, value in (p.partition("=") for p in params)
                        if name.strip().lower() == "charset"), None)
        if not (main.lower() == "application/json" or main.lower().endswith("+json")):
            return await self.app(scope, receive, send)
        import codecs

        try:
            info = codecs.lookup(charset or "utf-8")
            known = info._is_text_encoding and info.name not in _NOT_CHARSETS
        except LookupError:
            known = False
        if not known:
            return await _send_json(send, 415, error_body(
                "unsupported_media_type", f"the body's content-type declares charset={charset}, which this server does "
                "not read: send the JSON as UTF-8 (content-type: application/json)", "content-type"))
        if info.name == "utf-8":
            return await self._utf8(scope, receive, send)
        read = await self._read(receive)
        if read is None:
            return  # the client left
        raw = read[0]
        try:
            text = raw.decode(info.name)
            body = text.encode("utf-8")
        except UnicodeDecodeError as exc:
            return await _send_json(send, 400, error_body(
                "invalid_json", f"the request body is not {charset} as its content-type declares (charset={charset}; "
                f"{exc.reason} 0x{raw[exc.start]:02x} at byte {exc.start}); send the JSON as UTF-8 (content-type: "
                "application/json)"))
        except UnicodeEncodeError as exc:  # a lone surrogate the charset encodes (UTF-7's +2AA-): no text holds one
            return await _send_json(send, 400, error_body(
                "invalid_json", f"the request body is not {charset} text as its content-type declares (charset="
                f"{charset}; it decodes to a lone surrogate U+{ord(text[exc.start]):04X} at character {exc.start}, "
                "which no text holds); send the JSON as UTF-8 (content-type: application/json)"))
        scope = {**scope, "headers": [(k, v) for k, v in headers if k not in (b"content-type", b"content-length")]
                 + [(b"content-type", f"{main}; charset=utf-8".encode()), (b"content-length", str(len(body)).encode())]}
        await self.app(scope, self._replay({"type": "http.request", "body": body, "more_body": False}, receive), send)

    @staticmethod
    async def _read(receive, enough: int | None = None) -> tuple[bytes, bool] | None:
        """The body's bytes, all of them or (``enough``) the messages holding at least that many, and whether more
        are to come; None when the client left."""
        chunks, more = [], True
        while more and (enough is None or sum(map(len, chunks)) < enough):
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        return b"".join(chunks), more

    async def _utf8(self, scope, receive, send):
        """A body to be read as UTF-8 (no charset declared, or utf-8) whose first bytes are UTF-16 or UTF-32 (a byte
        order mark, or the NUL bytes an ASCII character has in them: :func:`json.detect_encoding`, which no UTF-8 JSON
        text starts with) is a 400 naming its encoding: JSON between systems is UTF-8 (RFC 8259 §8.1). Before,
        Python's json read it in the encoding it guessed, a body SERVING.md says is refused. The bytes read to tell
        are handed on as they came."""
        import json

        read = await self._read(receive, enough=4)
        if read is None:
            return  # the client left
        head, more = read
        coding = json.detect_encoding(head) if head else "utf-8"
        if coding not in ("utf-8", "utf-8-sig"):
            named = coding.upper().replace("-LE", "").replace("-BE", "")  # utf-16-le -> UTF-16: what a client calls it
            return await _send_json(send, 400, error_body(
                "invalid_json", f"the request body is not UTF-8 JSON: it is {named} (its first bytes: "
                f"{head[:4].hex(' ')}); send the JSON encoded as UTF-8, or declare its charset (content-type: "
                f"application/json; charset={named.lower()})"))
        await self.app(scope, self._replay({"type": "http.request", "body": head, "more_body": more}, receive), send)

    @staticmethod
    def _replay(message: dict, receive):
        """A receive that hands on ``message`` (the body as read here: decoded, or its first bytes) first, then the
        client's own messages."""
        pending = [message]

        async def replayed():
            return pending.pop() if pending else await receive()

        return replayed


#: headers of every answer: the page loads nothing from another host (no CDN, no inline script), so its policy allows
#: its own origin alone; it may not be framed by another site (clickjacking); no answer is sniffed as another type
#: (an error's JSON echoing `<script>` is never run as HTML); and the page's URL, which holds the user's task
#: (``/?q=...``), is not sent to the Hub when a result's link is followed
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
                               "form-action 'self'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
}


@functools.lru_cache(maxsize=None)
def _cors_middleware():
    """Starlette's CORSMiddleware, its refused preflight answered in the API's one error shape. Starlette answers it 400
    in plain text ("Disallowed CORS origin"): the status stays (a browser needs an ok status and
    Access-Control-Allow-Origin to go on, Fetch standard; what it is told otherwise is left to the server), the body
    is the error naming the request header at fault (``origin``, ``access-control-request-method``,
    ``access-control-request-headers``) and what is allowed, as every other error of the API."""
    from starlette.middleware.cors import CORSMiddleware
    from starlette.responses import JSONResponse

    class Cors(CORSMiddleware):
        def preflight_response(self, request_headers):
            response = super().preflight_response(request_headers)
            if response.status_code < 400:
                return response
            origin = request_headers["origin"]
            method = request_headers["access-control-request-method"]
            asked = [h.strip() for h in (request_headers.get("access-control-request-headers") or "").lower().split(",")]
            refused = []  # (the request header at fault, what is said of it)
            if not self.is_allowed_origin(origin=origin):
                refused.append(("origin", f"origin {origin!r} is not allowed (the server allows the pages of the "
                                          "origins given to `taskspace serve --cors-origin`)"))
            if method not in self.allow_methods:
                refused.append(("access-control-request-method", f"method {method!r} is not allowed (it allows "
                                f"{', '.join(self.allow_methods)})"))
            if not self.allow_all_headers and (bad := [h for h in asked if h and h not in self.allow_headers]):
                refused.append(("access-control-request-headers", f"{noun(len(bad), 'header')} {', '.join(map(repr, bad))} not allowed "
                                f"(it allows {', '.join(self.allow_headers)})"))
            if request_headers.get("access-control-request-private-network") is not None and \
                    not self.allow_private_network:
                refused.append(("access-control-request-private-network", "private network access is not allowed"))
            if not refused:  # a refusal this code does not know (a newer Starlette): its own words
                refused.append((None, bytes(response.body).decode("utf-8", "replace")))
            headers = {k: v for k, v in response.headers.items() if k.lower() not in ("content-type", "content-length")}
            return JSONResponse(error_body("cors_refused", "CORS preflight refused: " + "; ".join(m for _, m in refused),
                                           refused[0][0]), status_code=response.status_code, headers=headers)

    return Cors


class _NoCors:
    """ASGI middleware of a server without ``--cors-origin``: a browser's CORS preflight (``OPTIONS`` with ``Origin``
    and ``Access-Control-Request-Method``) to any path is the 400 ``cors_refused`` a refused preflight is with
    ``--cors-origin`` (:func:`_cors_middleware`), naming ``origin`` and the option that allows it. A preflight asks
    about the server's CORS, not the route, as Starlette's CORSMiddleware answers it for every path; before, the
    route's 405 ("method OPTIONS is not allowed on /v1/find (it takes POST)") or a 404, which sent a developer
    looking at the method or the path. An ``OPTIONS`` that is no preflight goes to the route."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "OPTIONS":
            headers = dict(scope.get("headers") or [])
            if b"origin" in headers and b"access-control-request-method" in headers:
                from starlette.responses import JSONResponse

                origin = headers[b"origin"].decode("latin-1")
                return await JSONResponse(error_body(
                    "cors_refused", f"CORS preflight refused: this server allows no cross-origin calls from a browser "
                    f"(origin {origin!r}); its operator allows the pages of an origin with `taskspace serve "
                    "--cors-origin ORIGIN`", "origin"), status_code=400)(scope, receive, send)
        await self.app(scope, receive, send)


class _SecurityHeaders:
    """ASGI middleware: :data:`SECURITY_HEADERS` on every answer (a header the app set itself is kept)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                have = {name.lower() for name, _ in headers}
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items() if k.encode() not in have]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


class _AbsoluteForm:
    """ASGI middleware: a request target in absolute-form (``GET http://host/v1/benchmarks HTTP/1.1``, as a client
    speaking through a proxy sends it; RFC 9112 §3.2.2: a server MUST accept it) is the path it names (``/`` for
    none), its raw bytes too, so the model id's escapes stay. uvicorn's h11 protocol hands the app the whole URL as the
    path: before, a 404 "no route /http://host/v1/benchmarks"."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", path):
            return await self.app(scope, receive, send)
        raw = scope.get("raw_path") or path.encode()
        after = lambda text, slash: text.partition(slash * 2)[2]  # noqa: E731 -- the authority and what follows it
        rest, raw_rest = after(path, "/"), after(raw, b"/")
        path = "/" + rest.partition("/")[2] if "/" in rest else "/"
        raw = b"/" + raw_rest.partition(b"/")[2] if b"/" in raw_rest else b"/"
        await self.app({**scope, "path": path, "raw_path": raw}, receive, send)


class _Head:
    """ASGI middleware: ``HEAD`` of any route is its ``GET`` without the body (the headers, content-length included),
    as RFC 9110 asks of every GET resource; before, only /, /static/*, /healthz and /readyz took HEAD (each its own
    route) and ``HEAD /v1/benchmarks`` or ``/openapi.json`` was a 405."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "HEAD":
            return await self.app(scope, receive, send)

        async def headers_only(message):
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET", "taskspace.method": "HEAD"}, receive, headers_only)


class _TooLarge(Exception):
    def __init__(self, size: int):
        super().__init__(size)
        self.size = size


def run(host: str = "127.0.0.1", port: int = 8000, *, worker_schedule: str | None = None,
        log_level: str = "warning", on_start=None, cors: list[str] | None = None) -> None:
    """Start the server (blocks until SIGINT/SIGTERM; the in-process worker finishes its current item first).
    ``on_start(url)`` is called once the stores and the encoder are open, before the server listens, with the URL
    it serves (:func:`served_url`)."""
    import uvicorn

    cors = cors_origins(cors)  # a bad origin is one line and exit 2, before anything is bound or opened
    # the address is taken first: a port in use (or a host that is not an address here) is one line and exit 2
    # (a configuration error) before anything loads; uvicorn binding it itself logged its own ERROR line after the
    # encoder had loaded and exited 3, the code of a storage error
    sock = listen_socket(host, port)
    try:
        # the stores and the encoder open here, before uvicorn: an index another process holds, a database that is
        # not reachable or an encoder that does not load is one line and its exit code (indexer.cli), not a traceback
        service = Service(worker_schedule=worker_schedule).start()
        # listening from here, not from when uvicorn starts: a client that connects as soon as `serving URL` is said
        # (before: while the app was still being built) waits in the backlog instead of being refused
        sock.listen(2048)
        if on_start is not None:
            on_start(served_url(sock))
        app = create_app(service, cors=cors)
        # uvicorn shuts down gracefully on SIGTERM and SIGINT (Ctrl-C), then raises the signal again for the handler it
        # found: this one, so a clean shutdown exits 0. Before, SIGINT's re-raise was a KeyboardInterrupt: exit 130 and
        # "interrupted: ... (`taskspace runs` shows an interrupted pass)" after a clean stop (uvicorn's own handlers
        # are in place from server.run on; the worker's pass is stopped at its next item on shutdown)
        signal.signal(signal.SIGTERM, lambda signum, frame: None)
        signal.signal(signal.SIGINT, lambda signum, frame: None)
        config = uvicorn.Config(app, host=host, port=port, log_level=log_level.lower(), access_log=False,
                                server_header=False)
        server = _uvicorn_server()(config, on_second_signal=service.abandon_worker)
        from .worker import hangup_is_ours

        if hangup_is_ours():
            # SIGHUP (its terminal or ssh session closed) shuts down as SIGTERM does (uvicorn handles only SIGINT and
            # SIGTERM): before, its default action ended the server at once, an in-process pass left `running`; a
            # server started under nohup keeps ignoring it
            signal.signal(signal.SIGHUP, server.handle_exit)
        server.run(sockets=[sock])
        if service.abandoned.is_set() and service._thread is not None:  # a second signal left the worker's pass
            raise SystemExit(130)  # unfinished, as `taskspace worker` exits then (uvicorn raising a SIGHUP again once
            # it has shut down comes to server.handle_exit as a second one: the pass had finished, exit 0)
        if not server.started:  # the app's startup failed (uvicorn.run's own exit code for that)
            raise SystemExit(3)
    finally:
        sock.close()


def _uvicorn_server():
    """:class:`uvicorn.Server` with the second-signal rule below (a class made here: uvicorn loads with the server)."""
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, where a second SIGTERM, SIGINT or SIGHUP stops at once: the shutdown no longer waits for
        the in-process worker's current item (``on_second_signal``) and the open connections (before, uvicorn forced
        the exit on a second SIGINT alone, and the shutdown waited for the worker's item whatever came: a pass
        embedding thousands of new texts kept a twice-stopped server running for minutes)."""

        def __init__(self, config, *, on_second_signal):
            super().__init__(config)
            self._on_second_signal = on_second_signal

        def handle_exit(self, sig, frame) -> None:
            if self.should_exit:
                self.force_exit = True
                self._on_second_signal()
            super().handle_exit(sig, frame)

    return Server


def served_url(sock) -> str:
    """The URL of the bound ``sock``: the port the system picked for ``--port 0``, an IPv6 address in brackets
    (``http://[::1]:8000/``), every interface as ``0.0.0.0`` (``--host ''``)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def listen_socket(host: str, port: int):
    """A TCP socket bound to ``(host, port)`` as uvicorn binds one (SO_REUSEADDR; IPv6 when the host has a colon),
    or a :class:`~indexer.errors.ConfigError` naming the address and what to change."""
    import socket

    from .errors import ConfigError

    given, host = host, host.strip()
    if host.startswith("[") and host.endswith("]"):  # an IPv6 address written as in a URL: [::1]
        host = host[1:-1]
    if "://" in host or "/" in host or (host.count(":") == 1 and host.rsplit(":", 1)[1].isdigit()):
        # a URL or HOST:PORT (before: "cannot listen on localhost:8000:8000: Name or service not known")
        raise ConfigError(f"--host {given!r} is not an address: give the host alone (e.g. 127.0.0.1, 0.0.0.0 or ::1) "
                          "and the port with --port")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        why = exc.strerror or str(exc)
        raise ConfigError(f"cannot listen on {host}:{port}: {why}; "
                          + ("another server uses that port: give another --port"
                             if exc.errno == errno.EADDRINUSE else "check --host and --port")) from None
    sock.set_inheritable(True)
    return sock
