"""The vector index: Qdrant. The only module that imports ``qdrant_client``. Qdrant is *derived* state,
rebuilt from SQL at any time (:mod:`indexer.sync`); nothing here is the source of truth.

Opening
-------
``VectorStore.from_settings(settings=None)``: a Qdrant server when ``TASKSPACE_QDRANT_URL`` is set (with
``TASKSPACE_QDRANT_API_KEY``), else embedded local mode in ``settings.qdrant_path`` ($TASKSPACE_HOME/qdrant).
Local mode keeps one folder per kind (``qdrant/models``, ``qdrant/benchmarks``, ``qdrant/prompts``), each
opened on first use: opening a local collection loads all its points, and a models query or a push of a few
model vectors should not pay for loading every prompt.
``VectorStore(path=...)``, ``VectorStore(url=..., api_key=..., timeout=5)``, ``VectorStore.memory()`` (':memory:').
Use it as a context manager or call ``close()``: local mode holds an exclusive lock on its folder, and a
second opener (another process, or a second store in the same process) gets
:class:`~indexer.errors.BusyError`. A server that is unreachable or refuses the key fails at open, within
``timeout`` seconds, with :class:`~indexer.errors.StoreError` naming the URL.

Layout
------
Per embedding *space* (a name, e.g. ``minilm-1a2b3c``; see :func:`space_slug`) and *kind*
(``"models"`` | ``"benchmarks"`` | ``"prompts"``) there is one logical collection: the alias
``ts_<slug>__<kind>``, pointing at a physical collection ``ts_<slug>__<kind>__v<stamp>``. Distance is Dot
(model vectors are hyperplane normals, scores are inner products). Point ids are UUIDv5 of
``(space, kind, key)`` (:func:`point_id`), so writing a key twice replaces the point (idempotent).
Every payload carries ``key`` (the natural key: model key, benchmark name, prompt hash).
Payload indexes (:data:`PAYLOAD_INDEXES`) are created for the filter fields; they take effect on a server
(local mode does exact brute-force search and ignores them).

Writing
-------
- ``rebuild(space, kind, points, *, dim) -> RebuildResult``: writes ``points`` (an iterable of
  :class:`Point`) into a fresh physical collection, then switches the alias to it in one atomic alias
  operation and drops the old collection (and any orphan left by an earlier interrupted rebuild).
  A reader sees the old complete collection until the switch, never a half-built one. If writing raises
  (bad vector, killed process, ...) the alias still points at the old collection; the partial one is
  dropped (or, after a SIGKILL, by the next rebuild of that space/kind).
  In local mode the alias map lives in the folder's ``meta.json``, which qdrant-client replaces atomically
  (write + ``os.replace``), so the switch is atomic on disk too.
- ``upsert(space, kind, points, *, dim) -> int`` writes into the collection the alias points at (creating
  it if absent); ``delete(space, kind, keys)``; ``drop_space(space)``.
- A vector whose length differs from ``dim``, or a ``dim`` that differs from the existing collection,
  raises :class:`~indexer.errors.DimensionError` (a space has one dimension: index a different encoder
  into a new space). Non-finite vectors raise :class:`~indexer.errors.InputError`.

Reading
-------
- ``search(space, kind, vector, *, filters=None, limit=10, with_vectors=False) -> list[Hit]``
  (``query_points``, highest inner product first); ``search_many(space, kind, vectors, ...)`` batches it.
- ``get(space, kind, keys, *, with_vectors=False) -> dict[key, Hit]``; ``scan(space, kind, *,
  with_vectors=False) -> Iterator[Hit]`` (every point); ``count(space, kind) -> int``.
- ``spaces() -> list[str]`` (slugs that have an alias); ``alias_target(space, kind) -> str | None``;
  ``physical_collections(space=None, kind=None) -> list[str]``; ``dim(space, kind) -> int | None``.
- Filters are plain dicts (callers never build Qdrant objects), all conditions must hold::

      {"license": ["mit", "apache-2.0"],        # any of
       "gated": False, "pipeline_tag": "text-generation",   # equals
       "num_parameters": {"lte": 8_000_000_000},              # range: gt, gte, lt, lte
       "benchmarks": {"all": ["mmlu_pro/law", "mmlu_pro/math"]},   # array field holds every value
       "key": {"not": ["org/excluded"]}}         # none of
  ``None`` values are ignored. A range never matches a point whose field is missing or null.
- ``Hit(key, score, payload, vector=None, id)``: ``score`` is the inner product (0.0 from get/scan).
"""

from __future__ import annotations

import fcntl
import logging
import math
import os
import re
import threading
import time
import uuid
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from ..errors import BusyError, DimensionError, InputError, NotFoundError, StoreError

log = logging.getLogger(__name__)

KINDS = ("models", "benchmarks", "prompts")
#: local mode is exact search; qdrant-client warns above this many points per collection
LOCAL_LIMIT = 20_000
_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/taskspace/qdrant-points")

_K, _I, _F, _B = (models.PayloadSchemaType.KEYWORD, models.PayloadSchemaType.INTEGER,
                  models.PayloadSchemaType.FLOAT, models.PayloadSchemaType.BOOL)
#: payload field -> index type, per kind (the fields queries filter on)
PAYLOAD_INDEXES: dict[str, dict[str, Any]] = {
    "models": {"key": _K, "license": _K, "num_parameters": _I, "pipeline_tag": _K, "library": _K, "tags": _K,
               "gated": _B, "downloads": _I, "benchmarks": _K, "n_prompts": _I, "accuracy": _F,
               "inputs_digest": _K, "digest": _K},
    "benchmarks": {"key": _K, "group": _K, "n_prompts": _I, "digest": _K},
    "prompts": {"key": _K, "benchmark": _K, "benchmarks": _K, "digest": _K},
}


def space_slug(space: str) -> str:
    """A collection-name-safe form of a space name: ``[A-Za-z0-9-]`` only; a name that had to change
    gets 8 hex of its sha256 appended, so two different names never share a slug."""
    import hashlib

    if not isinstance(space, str) or not space:
        raise InputError("an embedding space needs a non-empty name", item=repr(space))
    slug = re.sub(r"[^A-Za-z0-9-]+", "-", space).strip("-")[:80]
    if slug != space:
        slug = f"{slug}-{hashlib.sha256(space.encode()).hexdigest()[:8]}".lstrip("-")
    return slug


def point_id(space: str, kind: str, key: str) -> str:
    """The deterministic Qdrant id of a point: UUIDv5 of (space, kind, key)."""
    return str(uuid.uuid5(_NAMESPACE, f"{space}\x1f{kind}\x1f{key}"))


@dataclass
class Point:
    """One point to write: natural ``key``, ``vector`` (dim,), JSON-able ``payload``."""

    key: str
    vector: Any
    payload: dict = field(default_factory=dict)


@dataclass
class Hit:
    key: str
    score: float
    payload: dict
    vector: np.ndarray | None = None
    id: str = ""


@dataclass
class RebuildResult:
    alias: str
    collection: str
    count: int
    dropped: list[str]


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


class VectorStore:
    """Qdrant, local or server. See the module docstring for the API."""

    def __init__(self, *, path: str | Path | None = None, url: str | None = None, api_key: str | None = None,
                 timeout: int = 5, memory: bool = False):
        if sum(x is not None and x is not False for x in (path, url, memory or None)) != 1:
            raise StoreError("VectorStore needs exactly one of path=, url= or memory=True")
        self._lock = threading.RLock()
        self._dims: dict[str, int] = {}
        from ..config import mask_secrets, mask_url

        self.url = url
        self.path = Path(path).expanduser().resolve() if path is not None else None
        self.where = mask_url(url) or (str(self.path) if self.path else ":memory:")  # never shows a password
        self.local = url is None
        if url is not None:
            try:
                self._client = QdrantClient(url=url, api_key=api_key, timeout=timeout, check_compatibility=False)
                self._client.get_collections()
            except UnexpectedResponse as exc:
                hint = ("check TASKSPACE_QDRANT_API_KEY" if exc.status_code in (401, 403)
                        else "check that TASKSPACE_QDRANT_URL points at a Qdrant server")
                raise StoreError(f"Qdrant at {self.where} answered HTTP {exc.status_code}; {hint}") from None
            except Exception as exc:
                detail = mask_secrets(f"{type(exc).__name__}: {exc}", url)
                raise StoreError(
                    f"cannot reach Qdrant at {self.where} ({detail}); check TASKSPACE_QDRANT_URL "
                    "(e.g. http://localhost:6333) or unset it to use the embedded local index"
                ) from None
        elif memory:
            self._client = QdrantClient(location=":memory:")
        else:
            # Local mode: one folder per kind (path/models, path/benchmarks, path/prompts), each opened on first
            # use, because opening a local collection loads all its points: a query or a push of a few models
            # must not pay for loading every prompt. One process at a time holds the whole index (a lock file).
            self._client = None
            self.path.mkdir(parents=True, exist_ok=True)
            self._lockfile = open(self.path / ".taskspace.lock", "a+")
            try:
                fcntl.flock(self._lockfile.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                self._lockfile.close()
                self._lockfile = None
                raise BusyError(
                    f"another taskspace process is using the index at {self.path}; "
                    "use a Qdrant server (TASKSPACE_QDRANT_URL) for concurrent access"
                ) from None
        self._clients: dict[str, QdrantClient] = {}

    def _c(self, kind: str) -> QdrantClient:
        """The client holding collections of this kind (the one client on a server or in memory)."""
        if self._client is not None:
            return self._client
        client = self._clients.get(kind)
        if client is None:
            if kind not in KINDS:
                raise InputError(f"unknown collection kind {kind!r}; use one of {', '.join(KINDS)}")
            try:
                client = self._clients[kind] = QdrantClient(path=str(self.path / kind))
            except RuntimeError as exc:
                if "already accessed" in str(exc):
                    raise BusyError(
                        f"another taskspace process is using the index at {self.path / kind}; "
                        "use a Qdrant server (TASKSPACE_QDRANT_URL) for concurrent access"
                    ) from None
                raise StoreError(f"cannot open the local Qdrant index at {self.path / kind}: {exc}") from exc
        return client

    @staticmethod
    def _kind_of(name: str) -> str:
        """The kind of an alias ``ts_<slug>__<kind>`` or collection ``ts_<slug>__<kind>__v<stamp>``."""
        m = re.search(r"__(models|benchmarks|prompts)(?:__v[0-9a-f]+)?$", name)
        if m is None:
            raise InputError(f"{name!r} is not a taskspace collection name")
        return m.group(1)

    @classmethod
    def from_settings(cls, settings=None) -> "VectorStore":
        if settings is None:
            from ..config import get_settings

            settings = get_settings()
        if settings.qdrant_url:
            return cls(url=settings.qdrant_url, api_key=settings.qdrant_api_key)
        return cls(path=settings.qdrant_path)

    @classmethod
    def memory(cls) -> "VectorStore":
        return cls(memory=True)

    def close(self) -> None:
        with self._lock:
            for client in [self._client, *self._clients.values()]:
                if client is not None:
                    client.close()
            self._clients = {}
            if getattr(self, "_lockfile", None) is not None:
                self._lockfile.close()  # releases the flock
                self._lockfile = None

    def __enter__(self) -> "VectorStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"VectorStore({self.where!r})"

    # -- names ----------------------------------------------------------------
    @staticmethod
    def alias_name(space: str, kind: str) -> str:
        if kind not in KINDS:
            raise InputError(f"unknown collection kind {kind!r}; use one of {', '.join(KINDS)}")
        return f"ts_{space_slug(space)}__{kind}"

    def _call(self, fn, *args, **kwargs):
        """Run a client call under the lock, turning transport errors into StoreError."""
        with self._lock:
            try:
                return fn(*args, **kwargs)
            except (ResponseHandlingException, UnexpectedResponse) as exc:
                from ..config import mask_secrets

                raise StoreError(f"Qdrant at {self.where} failed: {mask_secrets(str(exc), self.url)}") from None

    def _clients_for(self, kind: str | None) -> list[QdrantClient]:
        if self._client is not None:
            return [self._client]
        return [self._c(k) for k in ([kind] if kind else KINDS)]

    def _aliases(self, kind: str | None = None) -> dict[str, str]:
        return {a.alias_name: a.collection_name for c in self._clients_for(kind)
                for a in self._call(c.get_aliases).aliases}

    def _collections(self, kind: str | None = None) -> list[str]:
        return [col.name for c in self._clients_for(kind) for col in self._call(c.get_collections).collections]

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

    def _collection_dim(self, name: str) -> int:
        info = self._call(self._c(self._kind_of(name)).get_collection, name)
        vectors = info.config.params.vectors
        return int(vectors.size if hasattr(vectors, "size") else next(iter(vectors.values())).size)

    # -- writing --------------------------------------------------------------
    def _check_dim(self, space: str, kind: str, dim: int) -> str | None:
        target = self.alias_target(space, kind)
        if target is not None:
            have = self._collection_dim(target)
            if have != dim:
                raise DimensionError(
                    f"the index of space {space!r} ({kind}) holds {have}-dim vectors, not {dim}; a space has one "
                    "dimension: index the other encoder into a new space, or drop this one "
                    f"(`taskspace reindex --space {space}` rebuilds it from SQL)", item=self.alias_name(space, kind))
        return target

    def _create(self, space: str, kind: str, dim: int) -> str:
        if not isinstance(dim, (int, np.integer)) or dim < 1:
            raise DimensionError(f"dimension must be a positive integer, got {dim!r}", item=space)
        name = f"{self.alias_name(space, kind)}__v{time.time_ns()}{uuid.uuid4().hex[:4]}"
        self._call(self._c(kind).create_collection, name,
                   vectors_config=models.VectorParams(size=int(dim), distance=models.Distance.DOT))
        with warnings.catch_warnings():  # local mode: "payload indexes have no effect" (they do on a server)
            warnings.simplefilter("ignore", UserWarning)
            for field_name, schema in PAYLOAD_INDEXES[kind].items():
                self._call(self._c(kind).create_payload_index, name, field_name, field_schema=schema)
        return name

    def _structs(self, space: str, kind: str, points: Iterable[Point], dim: int) -> Iterator[models.PointStruct]:
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
            yield models.PointStruct(id=point_id(space, kind, p.key), vector=vec.tolist(), payload=payload)

    def _local_sqlite(self, collection: str):
        """The sqlite connection of a persistent local-mode collection (qdrant-client internals), or None."""
        if self.path is None:
            return None
        coll = getattr(getattr(self._c(self._kind_of(collection)), "_client", None), "collections", {}).get(collection)
        con = getattr(getattr(coll, "storage", None), "storage", None)
        return con if hasattr(con, "execute") else None

    def _write(self, collection: str, structs: Iterator[models.PointStruct], batch_size: int) -> int:
        # Local mode commits every point on its own (about 17 ms each with fsync). While writing we turn the
        # collection's sqlite fsync off (a killed process loses nothing the OS already has; a power cut
        # mid-rebuild only loses a collection the alias does not point at yet), then sync once at the end.
        con = self._local_sqlite(collection)
        if con is not None:
            with self._lock:
                con.execute("PRAGMA synchronous=OFF")
        n, batch = 0, []
        try:
            for s in structs:
                batch.append(s)
                if len(batch) >= batch_size:
                    self._call(self._c(self._kind_of(collection)).upsert, collection, points=batch, wait=True)
                    n += len(batch)
                    batch = []
            if batch:
                self._call(self._c(self._kind_of(collection)).upsert, collection, points=batch, wait=True)
                n += len(batch)
        finally:
            if con is not None:
                with self._lock:
                    con.execute("PRAGMA synchronous=FULL")
                    db = self.path / self._kind_of(collection) / "collection" / collection / "storage.sqlite"
                    if db.exists():
                        fd = os.open(db, os.O_RDONLY)
                        try:
                            os.fsync(fd)
                        finally:
                            os.close(fd)
        if self.local and n > LOCAL_LIMIT:
            log.warning("%s holds %d points; local mode is exact search and slows down above %d points: "
                        "use a Qdrant server (TASKSPACE_QDRANT_URL)", collection, n, LOCAL_LIMIT)
        return n

    def rebuild(self, space: str, kind: str, points: Iterable[Point], *, dim: int,
                batch_size: int = 256) -> RebuildResult:
        """Write ``points`` into a fresh collection, then atomically point the alias at it (see module doc)."""
        alias = self.alias_name(space, kind)
        self._dims.pop(alias, None)
        old = self._check_dim(space, kind, dim)
        new = self._create(space, kind, dim)
        try:
            n = self._write(new, self._structs(space, kind, points, dim), batch_size)
            ops: list = []
            if old is not None:
                ops.append(models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=alias)))
            ops.append(models.CreateAliasOperation(
                create_alias=models.CreateAlias(collection_name=new, alias_name=alias)))
            self._call(self._c(kind).update_collection_aliases, change_aliases_operations=ops)
        except BaseException:
            try:
                self._call(self._c(kind).delete_collection, new)
            except Exception:  # the next rebuild drops it as an orphan
                log.warning("could not drop the partial collection %s", new)
            raise
        dropped = [c for c in self.physical_collections(space, kind) if c != new]
        for c in dropped:  # the previous target, and orphans of interrupted rebuilds
            self._call(self._c(kind).delete_collection, c)
        log.info("rebuilt %s -> %s (%d points, dropped %s)", alias, new, n, dropped or "nothing")
        return RebuildResult(alias=alias, collection=new, count=n, dropped=dropped)

    def upsert(self, space: str, kind: str, points: Iterable[Point], *, dim: int, batch_size: int = 256) -> int:
        """Write points into the live collection (created with its alias if absent). Returns how many."""
        target = self._check_dim(space, kind, dim)
        if target is None:
            target = self._create(space, kind, dim)
            self._call(self._c(kind).update_collection_aliases, change_aliases_operations=[
                models.CreateAliasOperation(create_alias=models.CreateAlias(
                    collection_name=target, alias_name=self.alias_name(space, kind)))])
        return self._write(target, self._structs(space, kind, points, dim), batch_size)

    def delete(self, space: str, kind: str, keys: Iterable[str]) -> None:
        target = self.alias_target(space, kind)
        ids = [point_id(space, kind, k) for k in keys]
        if target is not None and ids:
            self._call(self._c(kind).delete, target, points_selector=models.PointIdsList(points=ids), wait=True)

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
                self._call(self._c(kind).update_collection_aliases, change_aliases_operations=[
                    models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=a))])
            for c in self.physical_collections(space, kind):
                self._call(self._c(kind).delete_collection, c)
                names.append(c)
        return sorted(names)

    # -- reading --------------------------------------------------------------
    def _target(self, space: str, kind: str) -> str:
        target = self.alias_target(space, kind)
        if target is None:
            raise NotFoundError(f"no {kind} index for space {space!r} at {self.where}; "
                                f"run `taskspace reindex --space {space}`")
        return target

    @staticmethod
    def _hit(p, score: float | None = None) -> Hit:
        payload = dict(p.payload or {})
        vec = np.asarray(p.vector, dtype=np.float32) if p.vector is not None else None
        return Hit(key=payload.get("key", str(p.id)), score=float(score if score is not None else getattr(p, "score", 0.0) or 0.0),
                   payload=payload, vector=vec, id=str(p.id))

    def _query_dim(self, space: str, kind: str) -> int:
        """The dimension of the live (space, kind) collection, cached per alias (a space has one dimension;
        the cache is dropped on rebuild/drop here and whenever a query fails)."""
        alias = self.alias_name(space, kind)
        dim = self._dims.get(alias)
        if dim is None:
            dim = self._dims[alias] = self._collection_dim(self._target(space, kind))
        return dim

    def _query_rows(self, space: str, kind: str, vectors) -> list[list[float]]:
        arr = np.asarray(vectors, dtype=np.float32)
        arr = arr.reshape(1, -1) if arr.ndim <= 1 else arr
        dim = self._query_dim(space, kind)
        if arr.shape[1] != dim:
            raise DimensionError(f"query vector has {arr.shape[1]} dimensions, the {kind} index of space {space!r} "
                                 f"has {dim}; embed the query with the space's encoder", item=space)
        if not np.isfinite(arr).all():
            raise InputError("query vector has NaN/inf entries", item=space)
        return arr.tolist()

    def _query(self, space: str, kind: str, fn, *args, **kwargs):
        """Query through the alias (one round trip); on failure re-check that the index exists."""
        try:
            return self._call(fn, self.alias_name(space, kind), *args, **kwargs)
        except Exception:
            self._dims.pop(self.alias_name(space, kind), None)
            self._target(space, kind)  # NotFoundError when the index is gone
            raise

    def search(self, space: str, kind: str, vector, *, filters: dict | None = None, limit: int = 10,
               with_vectors: bool = False) -> list[Hit]:
        """Points of highest inner product with ``vector`` (dim,) that pass ``filters``."""
        (row,) = self._query_rows(space, kind, np.asarray(vector, dtype=np.float32).reshape(-1))
        res = self._query(space, kind, self._c(kind).query_points, query=row, query_filter=build_filter(filters),
                          limit=int(limit), with_payload=True, with_vectors=with_vectors)
        return [self._hit(p) for p in res.points]

    def search_many(self, space: str, kind: str, vectors, *, filters: dict | None = None, limit: int = 10,
                    with_vectors: bool = False, batch_size: int = 256) -> list[list[Hit]]:
        """:meth:`search` for each row of ``vectors`` (n, dim), batched."""
        flt = build_filter(filters)
        rows = self._query_rows(space, kind, vectors)
        out: list[list[Hit]] = []
        for lo in range(0, len(rows), batch_size):
            reqs = [models.QueryRequest(query=r, filter=flt, limit=int(limit), with_payload=True,
                                        with_vector=with_vectors) for r in rows[lo:lo + batch_size]]
            for res in self._query(space, kind, self._c(kind).query_batch_points, requests=reqs):
                out.append([self._hit(p) for p in res.points])
        return out

    def get(self, space: str, kind: str, keys: Sequence[str], *, with_vectors: bool = False) -> dict[str, Hit]:
        target = self._target(space, kind)
        ids = [point_id(space, kind, k) for k in keys]
        out = {}
        for lo in range(0, len(ids), 1024):
            for p in self._call(self._c(kind).retrieve, target, ids=ids[lo:lo + 1024], with_payload=True,
                                with_vectors=with_vectors):
                h = self._hit(p, 0.0)
                out[h.key] = h
        return out

    def scan(self, space: str, kind: str, *, with_vectors: bool = False, batch_size: int = 1024) -> Iterator[Hit]:
        """Every point of the live collection (empty if the space/kind has no index)."""
        target = self.alias_target(space, kind)
        if target is None:
            return
        offset = None
        while True:
            points, offset = self._call(self._c(kind).scroll, target, limit=batch_size, offset=offset,
                                        with_payload=True, with_vectors=with_vectors)
            for p in points:
                yield self._hit(p, 0.0)
            if offset is None:
                break

    def count(self, space: str, kind: str) -> int:
        target = self.alias_target(space, kind)
        return 0 if target is None else int(self._call(self._c(kind).count, target, exact=True).count)


def build_filter(filters: dict | None) -> models.Filter | None:
    """The Qdrant filter for the dict grammar of the module docstring (None when there is nothing to filter)."""
    if not filters:
        return None
    must, must_not = [], []
    for name, cond in filters.items():
        if cond is None:
            continue
        if isinstance(cond, dict):
            unknown = set(cond) - {"gt", "gte", "lt", "lte", "all", "not"}
            if unknown:
                raise InputError(f"unknown filter operator(s) {sorted(unknown)}; use gt/gte/lt/lte, all, not",
                                 item=f"filter {name}")
            rng = {k: cond[k] for k in ("gt", "gte", "lt", "lte") if cond.get(k) is not None}
            if rng:
                must.append(models.FieldCondition(key=name, range=models.Range(**rng)))
            for v in cond.get("all") or []:
                must.append(models.FieldCondition(key=name, match=models.MatchValue(value=v)))
            if cond.get("not") is not None:
                vals = cond["not"] if isinstance(cond["not"], (list, tuple, set)) else [cond["not"]]
                must_not.append(models.FieldCondition(key=name, match=models.MatchAny(any=list(vals))))
        elif isinstance(cond, (list, tuple, set)):
            must.append(models.FieldCondition(key=name, match=models.MatchAny(any=list(cond))))
        elif isinstance(cond, (str, bool, int, np.integer)):
            must.append(models.FieldCondition(key=name, match=models.MatchValue(value=_jsonable(cond))))
        else:
            raise InputError(f"filter value {cond!r} is not a string, integer, bool, list or range dict",
                             item=f"filter {name}")
    if not must and not must_not:
        return None
    return models.Filter(must=must or None, must_not=must_not or None)
