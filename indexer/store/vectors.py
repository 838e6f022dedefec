"""The vector index: Qdrant, derived state rebuilt from SQL at any time (:mod:`indexer.sync`); nothing here is
the source of truth. :class:`VectorStore` is the API; two engines sit behind it:

- **Qdrant Edge** (:mod:`indexer.store.vectors_edge`, ``qdrant-edge-py``): Qdrant's own storage and search
  engine embedded in this process, the default for a folder. Opening maps the collection's files (nothing is
  loaded up front); search is exact (brute force over float32 vectors, SIMD) with payload indexes for filters.
- **qdrant-client** (:mod:`indexer.store.vectors_qdrant`): a Qdrant server (``url=``), or qdrant-client's
  pure-Python local mode (``TASKSPACE_QDRANT_ENGINE=local``: loads every point into memory when it opens a
  collection and tests filters in Python per point; slow above about 20,000 points, kept as a fallback).

Only those two modules import ``qdrant_edge`` / ``qdrant_client``, each when a store of its kind is opened.

Opening
-------
``VectorStore.from_settings(settings=None, create=True)``: a Qdrant server when ``TASKSPACE_QDRANT_URL`` is set (with
``TASKSPACE_QDRANT_API_KEY``), else the embedded engine ``TASKSPACE_QDRANT_ENGINE`` (``edge`` | ``local``) in
``settings.qdrant_path`` ($TASKSPACE_HOME/qdrant). The folder holds one folder per kind (``qdrant/models``,
``qdrant/benchmarks``, ``qdrant/prompts``), each opened on first use: a models query or a push of a few model
vectors does not touch the prompts.
``VectorStore(path=..., engine=None, create=False)``, ``VectorStore(url=..., api_key=..., timeout=5)``,
``VectorStore.memory(engine=None)`` (Edge in a temporary folder removed on close, or qdrant-client's ':memory:').
Use it as a context manager or call ``close()``: a folder is held by one store at a time (an exclusive lock on
``qdrant/.taskspace.lock``), and a second opener (another process, or a second store in the same process) gets
:class:`~indexer.errors.BusyError`. A folder that does not exist is not created at open (unless ``create=True``,
as ``from_settings`` does for the configured one, but not with ``create=False``: the read-only commands, ``taskspace
check``, ``search``, ``spaces``): a read finds nothing there (a search or ``get`` raises
:class:`~indexer.errors.IndexMissingError` saying the folder does not exist, or, of the home's index opened by
``from_settings``, that the space's index is missing and ``taskspace reindex`` rebuilds it) and creates nothing; the first write
creates it and takes its lock. A server that is unreachable or refuses the key fails at open, within
``timeout`` seconds, with :class:`~indexer.errors.StoreError` naming the URL.

Layout
------
Per embedding *space* (a name, e.g. ``minilm-1a2b3c``; see :func:`space_slug`) and *kind*
(``"models"`` | ``"benchmarks"`` | ``"prompts"``) there is one logical collection: the alias
``ts_<slug>__<kind>``, pointing at a physical collection ``ts_<slug>__<kind>__v<stamp>``. Distance is Dot
(model vectors are hyperplane normals, scores are inner products). Point ids are UUIDv5 of
``(space, kind, key)`` (:func:`point_id`), so writing a key twice replaces the point (idempotent).
Every payload carries ``key`` (the natural key: model key, benchmark name, prompt hash).
Payload indexes (:data:`PAYLOAD_INDEXES`) are created for the filter fields (Edge and a server use them;
qdrant-client's local mode ignores them).

Writing
-------
- ``rebuild(space, kind, points, *, dim) -> RebuildResult``: writes ``points`` (an iterable of
  :class:`Point`) into a fresh physical collection, then switches the alias to it in one atomic alias
  operation and drops the old collection (and any orphan left by an earlier interrupted rebuild).
  A reader sees the old complete collection until the switch, never a half-built one. If writing raises
  (bad vector, killed process, ...) the alias still points at the old collection; the partial one is
  dropped (or, after a SIGKILL, by the next rebuild of that space/kind).
  In a folder the alias map is a file replaced atomically (Edge: ``aliases.json``; local mode: ``meta.json``),
  so the switch is atomic on disk too.
- ``upsert(space, kind, points, *, dim) -> int`` writes into the collection the alias points at (creating
  it if absent); ``delete(space, kind, keys)``; ``drop_space(space)``. Every write ends with a flush of the
  collection (one sync, not one per point).
- A vector whose length differs from ``dim``, or an upsert's ``dim`` that differs from the existing collection,
  raises :class:`~indexer.errors.DimensionError` (a space has one dimension: index a different encoder
  into a new space). A rebuild replaces the collection whole, so it may change the dimension (how ``reindex``
  repairs an index built with another one). Non-finite vectors raise :class:`~indexer.errors.InputError`.

Reading
-------
- ``search(space, kind, vector, *, filters=None, limit=10, with_vectors=False, fields=None) -> list[Hit]``
  (highest inner product first; ``fields``: only these payload fields); ``search_many(space, kind, vectors, ..., payload=True)`` batches it
  (``payload=False``: hits without payload, e.g. only their vectors wanted).
- ``scores_of(space, kind, vectors, keys) -> list[dict[key, float]]``: those points' inner products with each row
  (one search restricted to their ids, no payload read).
  ``scores_of_each(space, kind, vectors, keys)``: the same with one key list per row.
- ``score_values(space, kind, vectors, *, keys=None, exclude=None) -> list[np.ndarray]``: each row's inner products
  with every point (or per row only ``keys``' points, or all but ``exclude``'s), highest first, without the point
  ids (reading an id is most of the cost of a pass over every point).
- ``get(space, kind, keys, *, with_vectors=False) -> dict[key, Hit]``; ``scan(space, kind, *,
  with_vectors=False, fields=None) -> Iterator[Hit]`` (every point; ``fields``: only those payload fields);
  ``count(space, kind) -> int``; ``scores(space, kind, vectors) -> list[dict[point id, float]]`` (every point's
  inner product with each row: how :func:`indexer.sync.check` compares stored vectors without reading them).
- ``spaces() -> list[str]`` (slugs that have an alias); ``alias_target(space, kind) -> str | None``;
  ``physical_collections(space=None, kind=None) -> list[str]``; ``dim(space, kind) -> int | None``;
  ``unreadable(space, kind) -> str | None`` (why the live collection cannot be read: a rebuild replaces it).
- Filters are plain dicts (callers never build Qdrant objects), all conditions must hold::

      {"license": ["mit", "apache-2.0"],        # any of
       "gated": False, "pipeline_tag": "text-generation",   # equals
       "num_parameters": {"lte": 8_000_000_000},              # range: gt, gte, lt, lte
       "benchmarks": {"all": ["mmlu_pro/law", "mmlu_pro/math"]},   # array field holds every value
       "key": {"not": ["org/excluded"]},         # none of
       "license": {"missing": True},             # absent, null or [] (False: present)
       "benchmarks": {"except": ["a", "b"]},     # holds a value other than these, or none (absent, null, [])
       "benchmarks": {"only": ["a", "b"]},       # holds a value, and every value it holds is one of these
       "benchmarks": {"any": ["a", "b"]},        # any of (the list form, beside other operators on the field)
       "benchmarks": [{"except": ["a"]}, {"except": ["b"]}]}  # each of these conditions on the field
  ``None`` values are ignored. A range never matches a point whose field is missing or null. ``only`` is exactly
  the points ``except`` leaves out (Qdrant's ``MatchExcept``, or the field empty; ``only`` is that under
  ``must_not``): how :func:`indexer.query.coverage_ranked` splits the models whose benchmarks all lie in groups no
  model links to the query's from the rest.
  ``count(space, kind, filters=...)`` counts the points that pass (how :mod:`indexer.find` reports what each filter
  excluded and how many models lack the metadata a filter needs).
- ``search(..., penalty=(field, alpha, default, prefetch))``: rank by ``score - alpha * log10(field)`` instead of the
  score (``default`` where the field is missing), computed by Qdrant as a formula query over the ``prefetch``
  best points by score (Qdrant Edge, qdrant-client's local mode and a server >= 1.14 all run it); each hit's
  ``score`` is then the formula's value.
  :func:`parse_filter` checks the grammar (InputError) and each engine builds its own filter from it.
- ``Hit(key, score, payload, vector=None, id)``: ``score`` is the inner product (0.0 from get/scan).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import math
import os
import re
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from ..errors import (BusyError, ConfigError, DimensionError, IndexMissingError, IndexOutOfStepError, InputError,
                      StoreError, command_word, noun)

log = logging.getLogger(__name__)

KINDS = ("models", "benchmarks", "prompts")
#: embedded engines: Qdrant Edge (the default) and qdrant-client's pure-Python local mode
ENGINES = ("edge", "local")
#: qdrant-client's local mode is exact search in Python; it warns above this many points per collection
LOCAL_LIMIT = 20_000
_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/taskspace/qdrant-points")

#: the free space an embedded index's folder must have before a collection is created or written (Qdrant Edge
#: created 9 MB of files per collection for the bundled sample): see :meth:`VectorStore._check_free_space`
MIN_FREE_BYTES = 32 * 2**20

#: file systems that map a sparse file's hole without allocating it when it is read (Qdrant Edge's payload indexes are
#: sparse files it maps): opening an index there fills none of them (:meth:`VectorStore._check_room_to_open`). Any
#: other (tmpfs allocates a page on a read fault; an unknown one) is taken to fill them all
HOLES_STAY = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "overlay", "zfs", "f2fs", "jfs", "reiserfs", "bcachefs"})


def fs_type(path: Path) -> str | None:
    """The type of the file system ``path`` is on (``/proc/self/mounts``: the mount point that is its longest
    prefix), or None where that cannot be read."""
    try:
        target = Path(path).resolve()
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            mounts = [line.split()[1:3] for line in f if len(line.split()) >= 3]
    except OSError:
        return None
    best, kind = -1, None
    for point, fstype in mounts:
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), point)  # \040: a space
        p = Path(point)
        if (target == p or p in target.parents) and len(p.parts) > best:
            best, kind = len(p.parts), fstype
    return kind


_K, _I, _B = "keyword", "integer", "bool"
#: payload field -> index type, per kind: the fields the documented filters use (models: :class:`indexer.find.Filters`,
#: ``open_only`` included, which is ``kind``; benchmarks and prompts: by benchmark). Not the unique strings (key,
#: digest): an index of 32k unique keywords costs Edge a third of its write time and of its open time; nor the
#: payload fields no documented filter uses (library, tags, downloads, accuracy): each index costs a rebuild of 32k
#: models about 0.1 s of CPU and its creation an fsync of every index made before it. A filter on an unindexed
#: field still works, evaluated per point (at 32k models about 170 ms instead of a few)
PAYLOAD_INDEXES: dict[str, dict[str, Any]] = {
    "models": {"license": _K, "num_parameters": _I, "pipeline_tag": _K, "gated": _B, "kind": _K,
               "benchmarks": _K, "n_prompts": _I},
    "benchmarks": {"group": _K, "n_prompts": _I},
    "prompts": {"benchmark": _K, "benchmarks": _K},
}
_BUSY = ("another taskspace process is using the index at {}; "
         "use a Qdrant server (TASKSPACE_QDRANT_URL) for concurrent access")


#: the commands whose hold on the embedded folder another opener waits for (up to :data:`QUERY_WAIT` seconds): each
#: answers one query and lets it go
QUERY_COMMANDS = ("taskspace search", "taskspace models", "taskspace model", "taskspace benchmarks")
QUERY_WAIT = 30.0


def _holder_command() -> str:
    """This process as the lock file names it (:meth:`VectorStore._write_holder`), from the command line alone:
    ``taskspace WORD`` (:func:`~indexer.errors.command_word`) when the program is taskspace, the top-level command its
    readers (:func:`_busy_error`) match the holder's last word against (``taskspace spaces`` for ``taskspace spaces
    drop``), else the program's name (``python`` for ``python -c``)."""
    import sys

    argv = sys.argv or []
    name = Path(argv[0]).name if argv and argv[0] and not argv[0].startswith("-") else "python"
    if name in ("taskspace", "cli.py", "__main__.py"):
        word = command_word()
        return "taskspace" + (f" {word}" if word else "")
    return name


def _command_of(holder: str) -> str:
    """The command of a lock file's "PID COMMAND" line ("" when it names none)."""
    pid, _, command = holder.strip().partition(" ")
    return command if pid.isdigit() else ""


def _busy_error(path: Path, holder: str) -> BusyError:
    """The BusyError of the folder ``path`` held by ``holder`` (the lock file's "PID COMMAND" line): :data:`_BUSY`
    with who holds it and what to do (a running ``taskspace serve`` answers the query itself); its ``held`` is who
    holds it alone, without the advice (``taskspace spaces`` notes it and lists the spaces from SQL; the worker logs
    it and waits). Before, the message named neither, so a search run beside a server was told only to set up a Qdrant
    server; and ``taskspace spaces`` cut the advice off the message with a pattern of its wording."""
    import os

    pid, _, command = holder.strip().partition(" ")
    if pid == str(os.getpid()):
        # this process holds it (another VectorStore, or one its modules kept before a re-import: importlib.reload,
        # autoreload); before, "another taskspace process ... (pid <this one>)" sent the user looking for a process
        held = f"this process (pid {pid}) already holds the index at {path} through another VectorStore"
        return BusyError(f"{held}: close that one first (store.close(), or indexer.query.close_cached() for the stores "
                         "find_models keeps); one kept by taskspace's modules before they were re-imported "
                         "(importlib.reload, autoreload) is released only by restarting the interpreter (the Jupyter "
                         "kernel)", held=held)
    if not pid.isdigit() or not command:
        return BusyError(_BUSY.format(path), held=f"another taskspace process is using the index at {path}")
    mine = _holder_command().split()[-1:]
    lasting = None  # what to do about a holder that keeps the folder while it runs (BusyError.lasting)
    if command.split()[-1:] == ["serve"] and mine in (["index"], ["reindex"], ["worker"]):
        # not a query the server could answer (before: "send the query to it instead", to `taskspace reindex`)
        todo = ("stop it first (the embedded index is one process at a time); or let the server index: `taskspace "
                "serve --worker-every INTERVAL` runs the indexing passes in its process")
        lasting = ("a server holds the embedded index as long as it runs, so this worker's passes wait until it stops; "
                   "to index while it serves, stop this worker and let the server index: `taskspace serve "
                   "--worker-every INTERVAL` runs the indexing passes in its process; or use a Qdrant server "
                   "(TASKSPACE_QDRANT_URL)") if mine == ["worker"] else todo
    elif command.split()[-1:] == ["serve"] and mine in (["pull"], ["check"], ["spaces"]):
        # pull, check, spaces drop: no query the server answers, nor a pass its worker runs (before:
        # `spaces drop` was told to "send the query to it instead (POST /v1/find ...)", `pull` to let the server index)
        todo = "stop it first (the embedded index is one process at a time), then run this command again"
    elif command.split()[-1:] == ["serve"]:
        todo = ("send the query to it instead (POST /v1/find, GET /v1/models, or its search page), or stop it "
                "first")
    elif not command.startswith("taskspace"):
        # a script or a notebook kernel that searched through the library (indexer.find_models keeps the index open
        # for the process's life): before, "wait for it to finish", which a Jupyter kernel never does
        todo = ("a Python program (a script or a notebook kernel) that searched through the library keeps the index "
                "open until it calls indexer.query.close_cached() (or closes the VectorStore it opened) or exits; "
                "do that, or stop it")
        lasting = todo
    else:
        todo = "wait for it to finish, or stop it"
    held = f"another taskspace process is using the index at {path} (pid {pid}: {command})"
    return BusyError(f"{held}: {todo}; for concurrent access use a Qdrant server (TASKSPACE_QDRANT_URL)", held=held,
                     lasting=lasting)


#: folder -> a store kept open for reuse (:meth:`VectorStore.share`); weak: it goes when nobody holds it
_SHARED: "weakref.WeakValueDictionary[Path, VectorStore]" = weakref.WeakValueDictionary()


def space_slug(space: str) -> str:
    """A collection-name-safe form of a space name: ``[A-Za-z0-9-]`` only; a name that had to change
    gets 8 hex of its sha256 appended, so two different names never share a slug."""
    if not isinstance(space, str) or not space:
        raise InputError("an embedding space needs a non-empty name", item=repr(space))
    slug = re.sub(r"[^A-Za-z0-9-]+", "-", space).strip("-")[:80]
    if slug != space:
        slug = f"{slug}-{hashlib.sha256(space.encode()).hexdigest()[:8]}".lstrip("-")
    return slug


def point_id(space: str, kind: str, key: str) -> str:
    """The deterministic Qdrant id of a point: UUIDv5 of (space, kind, key), the string ``uuid.uuid5`` gives (made
    here without a UUID object: a rebuild makes 33k of them; a test compares the two)."""
    b = bytearray(hashlib.sha1(_NAMESPACE.bytes + f"{space}\x1f{kind}\x1f{key}".encode()).digest()[:16])
    b[6] = (b[6] & 0x0F) | 0x50  # version 5
    b[8] = (b[8] & 0x3F) | 0x80  # the RFC 4122 variant
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@dataclass
class Point:
    """One point to write: natural ``key``, ``vector`` (dim,), JSON-able ``payload``."""

    key: str
    vector: Any
    payload: dict = field(default_factory=dict)


@dataclass
class Hit:
    """One point read back: its natural ``key``, ``score`` (its inner product with the query; 0.0 where none was
    asked, as in ``get`` and ``scan``), ``payload``, ``vector`` (when asked for, else None) and point ``id``."""

    key: str
    score: float
    payload: dict
    vector: np.ndarray | None = None
    id: str = ""


@dataclass
class RebuildResult:
    """What :meth:`VectorStore.rebuild` did: the ``alias`` it switched to the new physical ``collection`` holding
    ``count`` points, and the collections it ``dropped`` (the previous one, and orphans of interrupted rebuilds)."""

    alias: str
    collection: str
    count: int
    dropped: list[str]


_PLAIN = frozenset((str, int, bool, type(None)))


def _jsonable(value):
    """``value`` with JSON's types only: numpy scalars as Python numbers, non-finite floats as None, tuples and sets as
    lists, dates as ISO strings. (A 32k-model rebuild calls this for 700k values: plain values inside a dict or a
    list are copied without a call each.)"""
    t = type(value)
    if t in _PLAIN:
        return value
    if t is float:
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            tv = type(v)
            out[k if type(k) is str else str(k)] = v if tv in _PLAIN else (
                (v if math.isfinite(v) else None) if tv is float else _jsonable(v))
        return out
    if isinstance(value, (list, tuple, set)):
        return [v if type(v) in _PLAIN else _jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def _batches(rows: Iterator[tuple], size: int) -> Iterator[list[tuple]]:
    batch: list[tuple] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def index_missing(space: str, kinds: Sequence[str], where: str) -> str:
    """What to say of a space SQL holds whose index of ``kinds`` is missing from ``where`` (its folder removed by
    hand, or never published): what rebuilds it. The vector store's reads and ``GET /readyz`` say the same."""
    return (f"the {' and '.join(kinds)} index of space {space!r} is missing from {where}; "
            f"`taskspace reindex --space {space}` (or the next indexing pass) rebuilds it from SQL")


#: how a message names each embedded engine
ENGINE_NAMES = {"edge": "Qdrant Edge", "local": "qdrant-client's local mode"}


def default_engine() -> str:
    """The embedded engine the settings name (``TASKSPACE_QDRANT_ENGINE``, default ``edge``)."""
    from ..config import get_settings

    return get_settings().qdrant_engine


#: the most points a search asks the engine for, more than any index holds: a larger limit (a library caller's
#: ``find_models(k=10**30)`` or ``evidence=10**30``) asks for every point (before, Qdrant Edge's 64-bit limit raised
#: OverflowError)
MAX_LIMIT = 2**31 - 1


class VectorStore:
    """Qdrant: Qdrant Edge embedded in a folder, a server, or memory. See the module docstring for the API."""

    def __init__(self, *, path: str | Path | None = None, url: str | None = None, api_key: str | None = None,
                 timeout: int = 5, memory: bool = False, engine: str | None = None, create: bool = False):
        if sum(x is not None and x is not False for x in (path, url, memory or None)) != 1:
            raise StoreError("VectorStore needs exactly one of path=, url= or memory=True")
        self._lock = threading.RLock()
        self._dims: dict[str, int] = {}
        from ..config import mask_url

        self._clients: dict[str, Any] = {}
        self._lockfile = None
        self._closed = False
        self.url = url
        self.path = Path(path).expanduser().resolve() if path is not None else None
        self.where = mask_url(url) or (str(self.path) if self.path else ":memory:")  # never shows a password
        self.local = url is None
        #: True for the configured home's index (:meth:`from_settings`): SQL beside it rebuilds it, so a folder of it
        #: that does not exist is said to be missing (`taskspace reindex`), not a path to check
        self.of_home = False
        self.engine = "server" if url is not None else (engine or default_engine())
        if self.local and self.engine not in ENGINES:
            raise ConfigError(f"unknown Qdrant engine {self.engine!r}; use one of {', '.join(ENGINES)} "
                              "(TASKSPACE_QDRANT_ENGINE)")
        if url is not None:
            from .vectors_qdrant import ClientEngine, open_server

            self._client = ClientEngine(open_server(url, api_key, timeout), url)
        elif memory:
            self._client = self._open_engine(None)
        else:
            # One folder per kind (path/models, path/benchmarks, path/prompts), each opened on first use: a query
            # or a push of a few models opens only the models folder. One process at a time holds the whole
            # index (a lock file over the folder).
            self._client = None
            if create or self.path.exists():
                self._hold_folder()

    def _hold_folder(self) -> None:
        """Create the embedded folder if need be and take its lock (BusyError when another store holds it): at open,
        or, for a folder that did not exist then, at the first write (a read of it creates nothing)."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            # read and written in place (no O_APPEND: "a+" appended every write at the end, so a new holder's
            # name could not be written over the last one's)
            self._lockfile = open(os.open(self.path / ".taskspace.lock", os.O_RDWR | os.O_CREAT, 0o666), "r+")
        except OSError as exc:  # a read-only mount, no permission: said with what to do
            raise StoreError(
                f"cannot open the embedded index at {self.path}: {exc.strerror or exc} ({exc.filename or self.path}); "
                "it holds a lock file there even to read, so make the folder writable, or set TASKSPACE_HOME to a "
                "place you can write (`taskspace reindex` rebuilds the index there from SQL), or use a Qdrant "
                "server (TASKSPACE_QDRANT_URL)") from None
        if not self._flock():
            idle = _SHARED.pop(self.path, None)  # a store this process keeps for reuse gives the folder up
            if idle is not None:
                idle.close()
            if (idle is None or not self._flock()) and not self._wait_for_a_query():
                holder = self._read_holder()
                self._lockfile.close()
                self._lockfile = None
                raise _busy_error(self.path, holder)
        self._write_holder()

    def _write_holder(self) -> None:
        """Name this process in the lock file ("PID COMMAND"), for the message a second opener gets."""
        fd = self._lockfile.fileno()
        holder = f"{os.getpid()} {_holder_command()}\n".encode()
        try:  # written over the last holder's name, then cut to this one: the file never reads empty meanwhile
            os.pwrite(fd, holder, 0)  # (before: emptied first, so an opener then was told no holder)
            os.ftruncate(fd, len(holder))
        except OSError:  # a read-only folder, a full disk: the folder is locked all the same; no earlier holder named
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)

    def _read_holder(self) -> str:
        try:
            self._lockfile.seek(0)
            return self._lockfile.read(200)
        except (OSError, ValueError):
            return ""

    def _wait_for_a_query(self) -> bool:
        """Whether the folder became free while a query command held it (``taskspace search``, ``models``, ``model``:
        seconds), waited for up to :data:`QUERY_WAIT` seconds; other holders are not waited for. Before, a search
        that held the folder for its two seconds made a ``taskspace index`` beside it fail at its last stage (exit
        6, SQL left ahead of the index, every later search answering from that mix until the next pass), and two
        searches at once failed one of them."""
        start = time.monotonic()
        unnamed = None  # since when the lock file names no holder
        while time.monotonic() < start + QUERY_WAIT:
            command = _command_of(self._read_holder())
            # (a new holder names itself right after it locks: a lock file naming none is read again for half a second)
            unnamed = None if command else unnamed or time.monotonic()
            if command not in QUERY_COMMANDS and (command or time.monotonic() > unnamed + 0.5):
                return False
            time.sleep(0.05)
            if self._flock():
                return True
        return False

    def _flock(self) -> bool:
        try:
            fcntl.flock(self._lockfile.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            return False

    @property
    def closed(self) -> bool:
        return self._closed

    def share(self) -> "VectorStore":
        """Mark this store as kept for reuse (:func:`indexer.find_models` without stores): another store of
        this process that opens the same folder closes it first instead of getting BusyError."""
        if self.path is not None:
            _SHARED[self.path] = self
        return self

    def _open_engine(self, folder: Path | None):
        """The engine over one folder (None: in memory)."""
        if self.engine == "edge":
            from .vectors_edge import ALIASES, EdgeEngine

            if folder is None:
                return EdgeEngine(temporary=True)
            if (folder / "meta.json").exists() and not (folder / ALIASES).exists():
                log.warning("%s holds an index written by qdrant-client's local mode (TASKSPACE_QDRANT_ENGINE=local), "
                            "which Qdrant Edge does not read: `taskspace reindex` rebuilds it from SQL", folder)
            self._check_room_to_open(folder)
            return EdgeEngine(folder)
        from .vectors_qdrant import ClientEngine, open_local

        return ClientEngine(open_local(folder), str(folder or ":memory:"), folder)

    def _c(self, kind: str):
        """The engine holding collections of this kind (the one engine on a server or in memory)."""
        if self._client is not None:
            return self._client
        engine = self._clients.get(kind)
        if engine is None:
            if kind not in KINDS:
                raise InputError(f"unknown collection kind {kind!r}; use one of {', '.join(KINDS)}")
            with self._lock:
                if self._closed:
                    raise StoreError(f"the vector store at {self.path} is closed; open a new one "
                                     "(VectorStore(path=...) or VectorStore.from_settings()) to use it again")
                if self._lockfile is None:  # a folder that did not exist at open: its first write creates it
                    self._hold_folder()
                engine = self._clients.get(kind) or self._open_engine(self.path / kind)
                self._clients[kind] = engine
        return engine

    @staticmethod
    def _kind_of(name: str) -> str:
        """The kind of an alias ``ts_<slug>__<kind>`` or collection ``ts_<slug>__<kind>__v<stamp>``."""
        m = re.search(r"__(models|benchmarks|prompts)(?:__v[0-9a-f]+)?$", name)
        if m is None:
            raise InputError(f"{name!r} is not a taskspace collection name")
        return m.group(1)

    @classmethod
    def from_settings(cls, settings=None, *, create: bool = True) -> "VectorStore":
        """The configured vector store (see the module docstring). ``create=False`` (a command that only reads the
        index: ``taskspace check``, a search): an embedded folder that does not exist is not created (its reads find
        nothing, and a search says the home's index is missing and that `taskspace reindex` rebuilds it from SQL);
        before, every opener created it, so `taskspace check` on a home whose ``qdrant`` folder was removed made an
        empty one."""
        if settings is None:
            from ..config import get_settings

            settings = get_settings()
        if settings.qdrant_url:
            return cls(url=settings.qdrant_url, api_key=settings.qdrant_api_key)
        store = cls(path=settings.qdrant_path, engine=settings.qdrant_engine, create=create)
        store.of_home = True
        return store

    @classmethod
    def refuse_if_served(cls, settings=None) -> None:
        """BusyError (:func:`_busy_error`) when a ``taskspace serve`` holds the configured embedded folder: an
        indexing pass (``taskspace index``, ``worker``) asks before it writes anything, as it could not publish
        (the server holds the folder for its lifetime). The lock is tried and let go at once; other holders (a query,
        another pass) are left to the pass's own waits. Before, the pass ingested its sources, solved and saved their
        vectors in SQL, and only then failed at its index stage (exit 6), leaving SQL ahead of the index the server
        answered from until it was stopped."""
        if settings is None:
            from ..config import get_settings

            settings = get_settings()
        path = Path(settings.qdrant_path).expanduser() if not settings.qdrant_url and settings.qdrant_path else None
        if path is None or not (path / ".taskspace.lock").is_file():
            return
        try:
            f = open(path / ".taskspace.lock", "r")
        except OSError:
            return  # unreadable: the pass's own open says why
        with f:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = f.read(200)
                if _command_of(holder).split()[-1:] == ["serve"]:
                    raise _busy_error(path, holder) from None
                return
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)

    @classmethod
    def memory(cls, engine: str | None = None) -> "VectorStore":
        """A store that lives as long as the object: Qdrant Edge in a temporary folder removed on close, or
        qdrant-client's ``:memory:`` (``engine="local"``)."""
        return cls(memory=True, engine=engine)

    def close(self) -> None:
        if self.path is not None and _SHARED.get(self.path) is self:
            _SHARED.pop(self.path, None)
        with self._lock:
            for engine in [self._client, *self._clients.values()]:
                if engine is not None:
                    engine.close()
            self._clients = {}
            self._closed = self.path is not None
            if self._lockfile is not None:
                self._lockfile.close()  # releases the flock
                self._lockfile = None

    def __enter__(self) -> "VectorStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"VectorStore({self.where!r}, engine={self.engine!r})"

    # -- names ----------------------------------------------------------------
    @staticmethod
    def alias_name(space: str, kind: str) -> str:
        if kind not in KINDS:
            raise InputError(f"unknown collection kind {kind!r}; use one of {', '.join(KINDS)}")
        return f"ts_{space_slug(space)}__{kind}"

    def _call(self, fn, *args, **kwargs):
        """Run an engine call under the lock (engines raise StoreError themselves)."""
        with self._lock:
            return fn(*args, **kwargs)

    def _engines(self, kind: str | None) -> list:
        if self._client is not None:
            return [self._client]
        if self._never_written():
            return []  # nothing to read there, and a read creates nothing
        return [self._c(k) for k in ([kind] if kind else KINDS)]

    def _aliases(self, kind: str | None = None) -> dict[str, str]:
        return {a: c for e in self._engines(kind) for a, c in self._call(e.aliases).items()}

    def _collections(self, kind: str | None = None) -> list[str]:
        return [c for e in self._engines(kind) for c in self._call(e.collections)]

    def alias_target(self, space: str, kind: str) -> str | None:
        """The physical collection the (space, kind) alias points at, or None."""
        return self._aliases(kind).get(self.alias_name(space, kind))

    def spaces(self) -> list[str]:
        """Slugs of the spaces that have at least one alias."""
        out = set()
        for alias in self._aliases():
            m = re.fullmatch(r"ts_([A-Za-z0-9-]+)__(models|benchmarks|prompts)", alias)
            if m:
                out.add(m.group(1))
        return sorted(out)

    def physical_collections(self, space: str | None = None, kind: str | None = None) -> list[str]:
        names = [c for c in self._collections(kind) if c.startswith("ts_")]
        if space is not None:
            kinds = [kind] if kind else list(KINDS)
            prefixes = tuple(self.alias_name(space, k) + "__v" for k in kinds)
            names = [c for c in names if c.startswith(prefixes)]
        return sorted(names)

    def dim(self, space: str, kind: str) -> int | None:
        target = self.alias_target(space, kind)
        return None if target is None else self._collection_dim(target)

    def out_of_step(self, space: str, dim: int) -> IndexOutOfStepError | None:
        """An :class:`~indexer.errors.IndexOutOfStepError` (a StoreError and a DimensionError: exit 3, HTTP 503) saying
        which kind of ``space``'s index holds vectors of another dimension than ``dim``, the space's in SQL (the source
        of truth), and that ``taskspace reindex`` rebuilds it; None when every kind agrees (a kind that cannot be read
        at all is not this problem). A search raises it (:mod:`indexer.find`); the server's readiness check reports it."""
        for kind in KINDS:
            try:
                have = self.dim(space, kind)
            except StoreError:
                continue
            if have is not None and have != int(dim):
                return IndexOutOfStepError(f"its {kind} index holds {have}-dim vectors, but the space has {dim} (in "
                                           f"SQL, the source of truth): the index was built with another dimension; run "
                                           f"`taskspace reindex --space {space}` to rebuild it from SQL",
                                           item=f"space {space}")
        return None

    def unreadable(self, space: str, kind: str) -> str | None:
        """Why the collection the (space, kind) alias points at cannot be read (e.g. its folder was removed or
        copied in part), or None (it can, or there is no alias). :meth:`rebuild` replaces such a collection;
        :func:`indexer.sync.check` reports it."""
        target = self.alias_target(space, kind)
        if target is None:
            return None
        try:
            self._collection_dim(target)
        except BusyError:
            raise
        except StoreError as exc:
            return str(exc)
        return None

    @classmethod
    def kinds_gone(cls, path: str | Path | None, engine: str | None, space: str) -> list[str]:
        """The kinds of ``space`` whose index is missing from the embedded folder ``path`` (the folder, its alias or
        the collection it points at removed by hand), read from the files without opening the engines or taking
        the lock: an indexing pass with nothing new rebuilds them. None (a server or memory): none."""
        if path is None:
            return []
        root = Path(path).expanduser()
        if (engine or default_engine()) == "edge":
            from .vectors_edge import alias_on_disk
        else:
            alias_on_disk = _local_alias_on_disk
        return [k for k in KINDS if not alias_on_disk(root / k, cls.alias_name(space, k))]

    def _collection_dim(self, name: str) -> int:
        return self._call(self._c(self._kind_of(name)).collection_dim, name)

    # -- writing --------------------------------------------------------------
    def _check_dim(self, space: str, kind: str, dim: int, *, replacing: bool = False) -> str | None:
        """The live collection of (space, kind), or None; DimensionError when it holds vectors of another
        dimension. ``replacing`` (a rebuild): the live collection is replaced whole, so one that cannot be read or
        that holds vectors of another dimension (an index built with another encoder or copied from elsewhere) is
        returned as it is, to be replaced, instead of raising: before, a rebuild refused the dimension change, so
        `taskspace reindex` could not repair the index its own error told the user to rebuild."""
        target = self.alias_target(space, kind)
        if target is not None:
            why = self.unreadable(space, kind) if replacing else None
            if why is not None:
                log.warning("the %s collection %s cannot be read (%s); the rebuild replaces it", kind, target, why)
                return target
            have = self._collection_dim(target)
            if have != dim and replacing:
                log.warning("the %s collection %s holds %d-dim vectors; the rebuild replaces it with %d-dim ones",
                            kind, target, have, dim)
            elif have != dim:
                raise DimensionError(
                    f"the index of space {space!r} ({kind}) holds {have}-dim vectors, not {dim}; a space has one "
                    "dimension: index the other encoder into a new space, or rebuild this one "
                    f"(`taskspace reindex --space {space}` rebuilds it from SQL)", item=self.alias_name(space, kind))
        return target

    @staticmethod
    def _check_room_to_open(folder: Path) -> None:
        """StoreError when the disk holding ``folder`` has less room than Qdrant Edge fills on opening it. Its
        payload indexes' files are sparse (a map of 4 MB holding a few kB), and on a memory file system (tmpfs, where
        a mapped page is allocated when it is first read) opening them fills their holes, even to read: where the
        file system cannot hold those pages the process is killed (SIGBUS, "Bus error", no message), so a search on
        a home whose disk filled up crashed. There free space is compared with those holes (none once filled). A disk
        file system (:data:`HOLES_STAY`: ext4, xfs, btrfs, overlay, ...) maps a hole's page without allocating it, so
        its holes are not counted there (measured on ext4: the bundled sample's index, copied with its holes punched,
        searched, grew by 16 kB and kept its 77 MB of holes; before, those 77 MB and 1 MB more were asked for, so a
        search on a disk with less free space was refused though it would have run)."""
        import shutil
        import stat

        holes = 0
        if fs_type(folder) not in HOLES_STAY:  # (a file system not known to keep them: as tmpfs)
            for f in folder.glob("**/payload_index/**/*"):  # (a folder not there yet globs nothing)
                try:
                    st = f.lstat()
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):  # a plain file (not a folder, not a symlink)
                    holes += max(0, st.st_size - st.st_blocks * 512)
        if not holes:
            return
        free, need = shutil.disk_usage(folder).free, holes + (1 << 20)
        if free < need:
            raise StoreError(
                f"not enough free disk space to open the index at {folder}: {free / 2**20:.1f} MB free, about "
                f"{need / 2**20:.0f} MB needed (Qdrant Edge fills its files' sparse pages when it opens them on this "
                "file system, even to read); free some space and run it again (the index is as it was)")

    def _check_free_space(self, what: str, points: int = 0, dim: int = 0) -> None:
        """StoreError when the embedded index's file system has too little room for ``what``: :data:`MIN_FREE_BYTES`
        plus twice the vectors of ``points`` points. An embedded engine maps its files into memory, and a write into
        a mapped page the disk has no room for kills the process (SIGBUS), past any error handling: this check turns
        a full disk into an error first (a rough one: it cannot promise that the write fits)."""
        if self.path is None:
            return
        import shutil

        need = MIN_FREE_BYTES + 2 * 4 * int(points) * int(dim)
        with self._lock:  # every write asks first: the first one into a folder absent at open creates it
            if self._never_written():
                self._hold_folder()
        free = shutil.disk_usage(self.path).free
        if free < need:
            raise StoreError(f"not enough free disk space for {what} at {self.path}: {free / 2**20:.0f} MB free, about "
                             f"{need / 2**20:.0f} MB needed; free some space and run it again (the index is as it was)")

    def _create(self, space: str, kind: str, dim: int, size: int | None = None) -> str:
        if not isinstance(dim, (int, np.integer)) or dim < 1:
            raise DimensionError(f"dimension must be a positive integer, got {dim!r}", item=space)
        self._check_free_space(f"a new {kind} collection", size or 0, dim)
        name = f"{self.alias_name(space, kind)}__v{time.time_ns()}{uuid.uuid4().hex[:4]}"
        self._call(self._c(kind).create_collection, name, int(dim))
        for field_name, schema in PAYLOAD_INDEXES[kind].items():
            self._call(self._c(kind).create_payload_index, name, field_name, field_schema=schema)
        return name

    def _rows(self, space: str, kind: str, points: Iterable[Point], dim: int) -> Iterator[tuple[str, np.ndarray, dict]]:
        """``(point id, float32 vector, payload)`` per point, checked."""
        for p in points:
            if not isinstance(p.key, str) or not p.key:
                raise InputError("every point needs a non-empty string key", item=f"{space}/{kind}")
            vec = np.asarray(p.vector, dtype=np.float32).reshape(-1)
            if vec.size != dim:
                raise DimensionError(f"vector has {vec.size} dimensions, space {space!r} has {dim}; "
                                     "index it into a space of its encoder", item=f"{kind} {p.key}")
            if not np.isfinite(vec).all():
                raise InputError("vector has NaN/inf entries; re-solve it", item=f"{kind} {p.key}")
            payload = _jsonable(dict(p.payload))
            payload["key"] = p.key
            yield point_id(space, kind, p.key), vec, payload

    def _write(self, collection: str, rows: Iterator[tuple], batch_size: int, fresh: bool = False,
               size: int | None = None) -> int:
        """Upsert rows in batches, then flush the collection (its engine makes it durable once, at the end).
        ``fresh``: a collection no alias names yet (a rebuild's), which an engine may write from a second process
        (Qdrant Edge: :mod:`indexer.store.edge_writer`), knowing ``size`` (how many rows are coming) when given."""
        kind = self._kind_of(collection)
        engine = self._c(kind)
        batches = _batches(rows, batch_size)
        if fresh and hasattr(engine, "write_in_child"):  # the engine takes the lock for each of its own steps:
            # searches of the live collections (the server's requests beside its worker) go on meanwhile
            # the child holds the folder's lock file too (inherited): a new opener waits for it, not only for us
            hold = self._lockfile.fileno() if self._lockfile is not None else None
            written, batches = engine.write_in_child(collection, batches, size, lock=self._lock, hold=hold)
            if written is not None:
                return written
        n = 0
        try:
            for batch in batches:
                self._call(engine.upsert, collection, batch)
                n += len(batch)
        finally:
            try:
                self._call(engine.flush, collection)
            except StoreError:
                if n:  # a failed write raises its own error; a flush failure after a good one must be seen
                    raise
        if self.engine == "local" and n > LOCAL_LIMIT:
            log.warning("%s holds %d points; qdrant-client's local mode is exact search in Python and slows down "
                        "above %d points: use the default engine (Qdrant Edge) or a server", collection, n, LOCAL_LIMIT)
        return n

    def rebuild(self, space: str, kind: str, points: Iterable[Point], *, dim: int,
                batch_size: int = 1024, size: int | None = None) -> RebuildResult:
        """Write ``points`` into a fresh collection, then atomically point the alias at it (see module doc).
        ``size``: how many points are coming, when known (an engine may then start its way of writing many at once:
        :meth:`~indexer.store.vectors_edge.EdgeEngine.write_in_child`); the points decide, not it."""
        alias = self.alias_name(space, kind)
        self._dims.pop(alias, None)
        old = self._check_dim(space, kind, dim, replacing=True)
        new = self._create(space, kind, dim, size)
        try:
            n = self._write(new, self._rows(space, kind, points, dim), batch_size, fresh=True, size=size)
            self._call(self._c(kind).set_alias, alias, new)
        except BaseException:
            try:
                self._call(self._c(kind).delete_collection, new)
            except Exception:  # the next rebuild drops it as an orphan
                log.warning("could not drop the partial collection %s", new)
            raise
        dropped = [c for c in self.physical_collections(space, kind) if c != new]
        for c in dropped:  # the previous target, and orphans of interrupted rebuilds
            self._call(self._c(kind).delete_collection, c)
        log.info("rebuilt %s -> %s (%d points, replaced %s, dropped %s)", alias, new, n, old, dropped or "nothing")
        return RebuildResult(alias=alias, collection=new, count=n, dropped=dropped)

    def upsert(self, space: str, kind: str, points: Iterable[Point], *, dim: int, batch_size: int = 1024) -> int:
        """Write points into the live collection (created with its alias if absent). Returns how many."""
        target = self._check_dim(space, kind, dim)
        if target is None:
            target = self._create(space, kind, dim)
            self._call(self._c(kind).set_alias, self.alias_name(space, kind), target)
        else:
            self._check_free_space(f"writing to the {kind} collection")
        return self._write(target, self._rows(space, kind, points, dim), batch_size)

    def delete(self, space: str, kind: str, keys: Iterable[str]) -> None:
        target = self.alias_target(space, kind)
        ids = [point_id(space, kind, k) for k in keys]
        if target is not None and ids:
            self._call(self._c(kind).delete, target, ids)
            self._call(self._c(kind).flush, target)

    def drop_orphans(self, space: str, kind: str) -> list[str]:
        """Drop the physical collections of (space, kind) that no alias points at (left by an interrupted rebuild)."""
        live = self.alias_target(space, kind)
        gone = [c for c in self.physical_collections(space, kind) if c != live]
        for c in gone:
            self._call(self._c(kind).delete_collection, c)
        return gone

    def drop_space(self, space: str) -> list[str]:
        """Delete every alias and collection of a space. Returns the collections dropped."""
        aliases = [self.alias_name(space, k) for k in KINDS]
        for a in aliases:
            self._dims.pop(a, None)
        names = []
        for kind, a in zip(KINDS, aliases):
            if a in self._aliases(kind):
                self._call(self._c(kind).delete_alias, a)
            for c in self.physical_collections(space, kind):
                self._call(self._c(kind).delete_collection, c)
                names.append(c)
        return sorted(names)

    # -- reading --------------------------------------------------------------
    def _target(self, space: str, kind: str) -> str:
        target = self.alias_target(space, kind)
        if target is None:
            raise IndexMissingError(self.missing(space, [kind]))
        return target

    def folder_missing(self) -> Path | None:
        """The embedded folder when it does not exist (opened without ``create`` and nothing written since: removed by
        hand, say), else None. :func:`indexer.sync.check` reports it."""
        return self.path if self._never_written() else None

    def _never_written(self) -> bool:
        """True for an embedded folder that did not exist at open and still does not (nothing written to it)."""
        return self.path is not None and self._lockfile is None and not self._closed and not self.path.exists()

    def missing(self, space: str, kinds: Sequence[str]) -> str:
        """:func:`index_missing` of this store, or, when the folder holds the index as the other embedded engine wrote
        it, :meth:`other_engines_index`'s message, or, when the folder does not exist, that it does not."""
        if self._never_written() and not self.of_home:
            return (f"the vector index folder {self.path} does not exist: nothing is indexed there (a read creates "
                    "nothing); check the path, e.g. VectorStore(path=HOME/qdrant) for a taskspace home's index, or "
                    "VectorStore.from_settings() for TASKSPACE_HOME's")
        return next(filter(None, (self.other_engines_index(space, k) for k in kinds)), None) or \
            self.home_given(space) or index_missing(space, kinds, self.where)

    def home_given(self, space: str) -> str | None:
        """What to say when this embedded store was opened on a taskspace home (``VectorStore(path=HOME)``) whose
        ``qdrant`` folder holds ``space``'s index: to open that folder. None otherwise. (The index "is missing" and
        `taskspace reindex` would be wrong advice: that rebuilds TASKSPACE_HOME's and leaves the caller's call as it
        was.)"""
        if self.path is None or not (self.path / "qdrant").is_dir():
            return None
        inner = self.path / "qdrant"
        if len(self.kinds_gone(inner, self.engine, space)) == len(KINDS):
            return None
        return (f"{self.path} holds no vector index of space {space!r}: it is a taskspace home, whose index is in its "
                f"folder {inner}; open VectorStore(path={str(inner)!r}) (or leave vectors out, with TASKSPACE_HOME "
                f"set to {self.path})")

    def other_engines_index(self, space: str, kind: str) -> str | None:
        """What to say when the embedded folder holds the (space, kind) index as the other embedded engine wrote it
        (``TASKSPACE_QDRANT_ENGINE`` changed on a home indexed before; the engines' files differ: Edge keeps
        ``aliases.json`` beside a folder per collection, local mode ``meta.json`` and ``collection/<name>/``): which
        engine wrote it and what to do. None when it does not (or on a server, or in memory). Before, a search said
        the index "is missing" and ``taskspace models`` that it "has drifted"."""
        if self.path is None or self.engine not in ENGINES:
            return None
        other = "local" if self.engine == "edge" else "edge"
        if other == "edge":
            from .vectors_edge import alias_on_disk
        else:
            alias_on_disk = _local_alias_on_disk
        folder = self.path / kind
        if not alias_on_disk(folder, self.alias_name(space, kind)):
            return None
        default = ", the default" if other == "edge" else ""
        return (f"the {kind} index of space {space!r} in {folder} was written by {ENGINE_NAMES[other]} "
                f"(TASKSPACE_QDRANT_ENGINE={other}{default}), which the engine in use, {ENGINE_NAMES[self.engine]} "
                f"(TASKSPACE_QDRANT_ENGINE={self.engine}), does not read: set TASKSPACE_QDRANT_ENGINE={other} back, "
                f"or run `taskspace reindex` to rebuild the index from SQL for {self.engine}")

    @staticmethod
    def _hit(row) -> Hit:
        pid, score, payload, vec = row
        if isinstance(vec, dict):  # the unnamed vector of a record
            vec = vec.get("")
        return Hit(key=payload.get("key", pid), score=float(score or 0.0), payload=payload,
                   vector=np.asarray(vec, dtype=np.float32) if vec is not None else None, id=pid)

    def _query_dim(self, space: str, kind: str) -> int:
        """The dimension of the live (space, kind) collection, cached per alias (a space has one dimension;
        the cache is dropped on rebuild/drop here and whenever a query fails)."""
        alias = self.alias_name(space, kind)
        dim = self._dims.get(alias)
        if dim is None:
            dim = self._dims[alias] = self._collection_dim(self._target(space, kind))
        return dim

    def _query_rows(self, space: str, kind: str, vectors) -> np.ndarray:
        arr = np.asarray(vectors, dtype=np.float32)
        arr = arr.reshape(1, -1) if arr.ndim <= 1 else arr
        dim = self._query_dim(space, kind)
        if arr.shape[1] != dim:
            raise DimensionError(f"query vector has {arr.shape[1]} dimensions, the {kind} index of space {space!r} "
                                 f"has {dim}; embed the query with the space's encoder", item=space)
        if not np.isfinite(arr).all():
            raise InputError("query vector has NaN/inf entries", item=space)
        return arr

    def _query(self, space: str, kind: str, rows: np.ndarray, flt, limit: int, with_vectors: bool,
               penalty: tuple | None = None, payload: bool | Sequence[str] = True, raw: bool = False) -> list[list]:
        """Query through the alias; on failure re-check that the index exists. ``payload``: all of it, none, or
        these fields (``key`` always); ``raw``: the engine's rows ``(id, score, payload, vector)``, not hits."""
        alias = self.alias_name(space, kind)
        extra = {} if penalty is None else {"penalty": _check_penalty(penalty)}
        if payload is False:
            extra["payload"] = False
        elif payload is not True:
            extra["payload"] = list(dict.fromkeys(["key", *payload]))
        try:
            found = self._call(self._c(kind).query, alias, rows, flt, min(int(limit), MAX_LIMIT), with_vectors, **extra)
        except Exception:
            self._dims.pop(alias, None)
            self._target(space, kind)  # IndexMissingError when the index is gone
            raise
        return found if raw else [[self._hit(r) for r in rs] for rs in found]

    def _filter(self, space: str, kind: str, filters: dict | None):
        """The parsed filter; a ``key`` list (any of these keys) becomes a condition on the point ids, which Qdrant
        serves from its id index instead of reading every payload's ``key``."""
        if filters and isinstance(filters.get("key"), (list, tuple, set)):
            rest = {k: v for k, v in filters.items() if k != "key"}
            ids = [point_id(space, kind, str(k)) for k in filters["key"]]
            must, must_not = parse_filter(rest) or ([], [])
            return [*must, ("has_id", None, ids)], must_not
        return parse_filter(filters)

    def search(self, space: str, kind: str, vector, *, filters: dict | None = None, limit: int = 10,
               with_vectors: bool = False, penalty: tuple | None = None,
               fields: Sequence[str] | None = None) -> list[Hit]:
        """Points of highest inner product with ``vector`` (dim,) that pass ``filters``; with ``penalty``
        ``(field, alpha, default, prefetch)`` those of highest ``score - alpha * log10(field)`` among the
        ``prefetch`` best by score (a Qdrant formula query; see the module docstring). ``fields``: only these payload
        fields (``key`` always; the engine converts less)."""
        flt = self._filter(space, kind, filters)
        rows = self._query_rows(space, kind, np.asarray(vector, dtype=np.float32).reshape(-1))
        return self._query(space, kind, rows, flt, limit, with_vectors, penalty,
                           payload=True if fields is None else list(fields))[0]

    def search_many(self, space: str, kind: str, vectors, *, filters: dict | None = None, limit: int = 10,
                    with_vectors: bool = False, batch_size: int = 256, payload: bool = True) -> list[list[Hit]]:
        """:meth:`search` for each row of ``vectors`` (n, dim), batched. ``payload=False``: the hits carry no payload
        (nor their key: ``Hit.key`` is then the point id), which the engines then neither read nor convert."""
        flt = self._filter(space, kind, filters)
        rows = self._query_rows(space, kind, vectors)
        out: list[list[Hit]] = []
        for lo in range(0, len(rows), batch_size):
            out.extend(self._query(space, kind, rows[lo:lo + batch_size], flt, limit, with_vectors, payload=payload))
        return out

    def get(self, space: str, kind: str, keys: Sequence[str], *, with_vectors: bool = False) -> dict[str, Hit]:
        target = self._target(space, kind)
        ids = [point_id(space, kind, k) for k in keys]
        out = {}
        for lo in range(0, len(ids), 1024):
            for row in self._call(self._c(kind).retrieve, target, ids[lo:lo + 1024], with_vectors):
                h = self._hit(row)
                out[h.key] = h
        return out

    def scan(self, space: str, kind: str, *, with_vectors: bool = False, batch_size: int = 1024,
             fields: Sequence[str] | None = None, filters: dict | None = None,
             missing_ok: bool = False) -> Iterator[Hit]:
        """Every point of the live collection; ``fields``: only these payload fields (``key`` always); ``filters``:
        only the points that pass (a Qdrant payload filter). A space/kind with no index is the
        :class:`~indexer.errors.IndexMissingError` :meth:`search` and :meth:`get` raise (at the call, not at the first
        point), or with ``missing_ok`` no point (for a caller to whom a missing index is an empty one: a check, a
        readiness probe). Before, no point without a word, while :meth:`search` raised."""
        target = self.alias_target(space, kind)
        if target is None:
            if not missing_ok:
                raise IndexMissingError(self.missing(space, [kind]))
            return iter(())
        return self._scan(space, kind, target, with_vectors, batch_size, fields, filters)

    def _scan(self, space: str, kind: str, target: str, with_vectors: bool, batch_size: int,
              fields: Sequence[str] | None, filters: dict | None) -> Iterator[Hit]:
        payload = True if fields is None else sorted({"key", *fields})
        flt = self._filter(space, kind, filters)
        extra = {} if flt is None else {"flt": flt}
        for row in self._c(kind).scroll(target, with_vectors, batch_size, payload, **extra):
            yield self._hit(row)

    def scores(self, space: str, kind: str, vectors) -> list[dict[str, float]]:
        """For each row of ``vectors`` (n, dim), the inner product of every point of the live collection with it,
        by point id (one exact pass per row, no payload read: cheaper than reading every stored vector)."""
        target = self.alias_target(space, kind)
        if target is None:
            return [{} for _ in np.atleast_2d(vectors)]
        rows = self._query_rows(space, kind, vectors)
        n = self.count(space, kind, missing_ok=True)
        if n == 0:
            return [{} for _ in rows]
        found = self._call(self._c(kind).query, target, rows, None, n, False, False)
        return [{pid: float(score) for pid, score, _, _ in rs} for rs in found]

    def scores_of(self, space: str, kind: str, vectors, keys: Sequence[str],
                  memo: dict[str, str] | None = None) -> list[dict[str, float]]:
        """For each row of ``vectors`` (n, dim), the inner product of each of these points (by key) with it: one
        exact search restricted to their ids (no payload, no vector read), all rows in one call. A key with no point
        is absent from the dicts. ``memo``: key -> point id of ``space`` and ``kind`` where known (the ids of hits a
        search read: a deep page's candidates, 32,823 of them on the large home), the others made here."""
        rows = self._query_rows(space, kind, vectors)
        keys = list(dict.fromkeys(keys))
        if not keys:
            return [{} for _ in rows]
        memo = {} if memo is None else memo
        ids = {memo.get(k) or point_id(space, kind, str(k)): k for k in keys}
        found = self._query(space, kind, rows, ([("has_id", None, list(ids))], []), len(ids), False, payload=False,
                            raw=True)
        return [{ids[r[0]]: float(r[1]) for r in rs} for rs in found]

    def score_values(self, space: str, kind: str, vectors, *, keys: Sequence[Sequence[str]] | None = None,
                     exclude: Sequence[Sequence[str]] | None = None,
                     memo: dict[str, str] | None = None, conds: dict | None = None) -> list[np.ndarray]:
        """For each row of ``vectors`` (n, dim), the inner products of the live collection's points with it, highest
        first (float64), without saying which point each is: no point id is read (the Edge binding builds a
        ``uuid.UUID`` for each id read: with its ``str``, 2.6 of the 6.2 s of :meth:`scores` for 23 rows over 32,823
        points).
        ``keys``: for each row, only these keys' points (one sequence per row); ``exclude``: for each row, none of
        these keys' points. The values are the engine's own, as :meth:`scores` gives them, in its order. ``memo``:
        key -> point id of ``space`` and ``kind``, read and filled here (calls that name the same keys make each id
        once: a model page's rows name every model's key several times). ``conds``: the engine's condition on a list of
        these keys' points (of ``space`` and ``kind``), by the tuple of keys, read and filled here (a model page's rows name the same lists
        several times: 112 lists of 89,332 keys on a home of 32,823 models, 18 distinct of 33,853)."""
        return [vals for _, vals in self._score_rows(space, kind, vectors, keys, exclude, with_ids=False, memo=memo,
                                                     conds=conds)]

    def scores_of_each(self, space: str, kind: str, vectors, keys: Sequence[Sequence[str]],
                       memo: dict[str, str] | None = None, conds: dict | None = None) -> list[dict[str, float]]:
        """:meth:`scores_of` with its own keys for each row of ``vectors`` (``keys``: one sequence per row): each
        row's dict holds those keys' inner products with it (a key with no point is absent). ``memo``, ``conds``: as
        :meth:`score_values`'."""
        memo = {} if memo is None else memo
        found = self._score_rows(space, kind, vectors, keys, None, with_ids=True, memo=memo, conds=conds)
        key_of = {i: k for k, i in memo.items()}
        return [{key_of[i]: float(v) for i, v in zip(ids, vals) if i in key_of} for ids, vals in found]

    def _score_rows(self, space: str, kind: str, vectors, keys, exclude, with_ids: bool,
                    memo: dict[str, str] | None = None, conds: dict | None = None) -> list[tuple]:
        """:meth:`score_values` and :meth:`scores_of_each`: each row's ``(ids or None, values)``, one engine call for
        the rows (each with its own filter on the point ids). ``memo``: key -> point id, filled here (rows that name
        the same keys make each id once); ``conds``: tuple of keys -> the engine's condition on their points, filled
        here (rows that name the same list make its condition once: the engine parses every id of it)."""
        memo = {} if memo is None else memo
        conds = {} if conds is None else conds

        def ids_of(ks) -> list[str]:
            out = []
            for k in dict.fromkeys(str(k) for k in ks):
                i = memo.get(k)
                if i is None:
                    i = memo[k] = point_id(space, kind, k)
                out.append(i)
            return out

        def cond_of(ks) -> tuple:
            made = conds.get(t := tuple(ks))
            if made is None:
                made = conds[t] = ("made", None, self._c(kind).id_condition(ids_of(ks)))
            elif with_ids:
                ids_of(ks)  # (the ids read back are named by the memo)
            return made

        rows = self._query_rows(space, kind, vectors)
        for name, per in (("keys", keys), ("exclude", exclude)):
            if per is not None and len(per) != len(rows):
                raise InputError(f"{name} must hold one sequence of keys per query row ({len(rows)}), not {len(per)}",
                                 item=name)
        empty = ([] if with_ids else None, np.zeros(0, dtype=np.float64))
        target = self.alias_target(space, kind)
        if target is None:
            return [empty for _ in rows]
        flts, todo = [], []
        for i in range(len(rows)):
            must, must_not = [], []
            if keys is not None:
                if not len(keys[i]):
                    continue  # no key: no point
                must.append(cond_of(keys[i]))
            if exclude is not None and len(exclude[i]):
                must_not.append(cond_of(exclude[i]))
            flts.append((must, must_not) if must or must_not else None)
            todo.append(i)
        n = self.count(space, kind, missing_ok=True)
        out = [empty for _ in rows]
        if todo and n:
            found = self._call(self._c(kind).score_rows, target, rows[todo], flts, n, with_ids)
            for i, got in zip(todo, found):
                out[i] = got
        return out

    def count(self, space: str, kind: str, filters: dict | None = None, *, missing_ok: bool = False) -> int:
        """Points of the live collection (that pass ``filters``). A space/kind with no index is the
        :class:`~indexer.errors.IndexMissingError` :meth:`search` and :meth:`get` raise, or with ``missing_ok`` 0
        (for a caller to whom a missing index is an empty one: an indexing pass, a readiness probe, a check). Before,
        0 without a word, while :meth:`search` raised."""
        target = self.alias_target(space, kind)
        if target is None:
            if not missing_ok:
                raise IndexMissingError(self.missing(space, [kind]))
            return 0
        flt = self._filter(space, kind, filters)
        if flt is None:
            return self._call(self._c(kind).count, target)
        return self._call(self._c(kind).count, target, flt)


def _local_alias_on_disk(folder: Path, alias: str) -> bool:
    """:func:`indexer.store.vectors_edge.alias_on_disk` for qdrant-client's local mode (its folder: ``meta.json``
    with the aliases, a folder per collection under ``collection/``), read without importing qdrant-client."""
    try:
        target = json.loads((folder / "meta.json").read_text()).get("aliases", {}).get(alias)
    except (OSError, ValueError, AttributeError):
        return False
    return bool(target) and (folder / "collection" / target).is_dir()


def parse_filter(filters: dict | None) -> tuple[list, list] | None:
    """The dict grammar of the module docstring as ``(must, must_not)`` lists of neutral conditions
    ``("eq", field, value)``, ``("any", field, values)``, ``("range", field, {op: bound})``, ``("empty", field,
    None)``, ``("except", field, values)`` (a value other than these, or the field empty) that each engine turns
    into its own filter objects; None when there is nothing to filter. Raises InputError on a bad filter."""
    if not filters:
        return None
    must, must_not = [], []
    for name, cond in filters.items():
        if cond is None:
            continue
        if isinstance(cond, dict):
            unknown = set(cond) - {"gt", "gte", "lt", "lte", "all", "any", "not", "missing", "except", "only"}
            if unknown:
                raise InputError(f"unknown filter {noun(len(unknown), 'operator')} {sorted(unknown)}; use gt/gte/lt/lte, all, any, not, "
                                 f"missing, except, only", item=f"filter {name}")
            if cond.get("missing") is not None:  # the field is absent, null or an empty list (or is not: False)
                (must if cond["missing"] else must_not).append(("empty", name, None))
            rng = {k: cond[k] for k in ("gt", "gte", "lt", "lte") if cond.get(k) is not None}
            if rng:
                must.append(("range", name, rng))
            for v in cond.get("all") or []:
                must.append(("eq", name, _jsonable(v)))
            if cond.get("any") is not None:
                vals = cond["any"] if isinstance(cond["any"], (list, tuple, set)) else [cond["any"]]
                must.append(("any", name, [_jsonable(v) for v in vals]))
            if cond.get("not") is not None:
                vals = cond["not"] if isinstance(cond["not"], (list, tuple, set)) else [cond["not"]]
                must_not.append(("any", name, [_jsonable(v) for v in vals]))
            for op, into in (("except", must), ("only", must_not)):
                if cond.get(op) is not None:
                    into.append(("except", name, _except_values(name, op, cond[op])))
        elif isinstance(cond, (list, tuple)) and cond and all(isinstance(c, dict) for c in cond):
            for c in cond:  # several conditions on one field (a dict holds each operator once)
                got = parse_filter({name: c})
                if got is not None:
                    must.extend(got[0])
                    must_not.extend(got[1])
        elif isinstance(cond, (list, tuple, set)):
            must.append(("any", name, [_jsonable(v) for v in cond]))
        elif isinstance(cond, (str, bool, int, np.integer, np.bool_)):
            must.append(("eq", name, _jsonable(cond)))
        else:
            raise InputError(f"filter value {cond!r} is not a string, integer, bool, list or range dict",
                             item=f"filter {name}")
    if not must and not must_not:
        return None
    return must, must_not


def _except_values(name: str, op: str, values) -> list:
    """The values of an ``except`` / ``only`` condition: a list of strings, or of integers (what Qdrant's
    ``MatchExcept`` takes)."""
    vals = list(values) if isinstance(values, (list, tuple, set)) else [values]
    vals = [_jsonable(v) for v in vals]
    if not (all(isinstance(v, str) for v in vals) or all(type(v) is int for v in vals)):
        raise InputError(f"the values of {op!r} must all be strings or all integers, not {values!r}",
                         item=f"filter {name}")
    return vals


def _check_penalty(penalty) -> tuple:
    """``(field, alpha, default, prefetch)`` checked: alpha finite and >= 0, default > 0, prefetch >= 1."""
    try:
        field_name, alpha, default, prefetch = penalty
        alpha, default, prefetch = float(alpha), float(default), int(prefetch)
    except (TypeError, ValueError) as exc:
        raise InputError(f"a size penalty is (field, alpha, default, prefetch), not {penalty!r}") from exc
    if not (math.isfinite(alpha) and alpha >= 0 and default > 0 and prefetch >= 1 and isinstance(field_name, str)):
        raise InputError(f"bad size penalty {penalty!r}: alpha >= 0, default > 0, prefetch >= 1")
    return field_name, alpha, default, prefetch
