"""The embedded vector engine: Qdrant Edge (``qdrant-edge-py``), Qdrant's own storage and search engine running
inside this process. Only this module imports ``qdrant_edge``; :class:`indexer.store.vectors.VectorStore` is the
API, this is one of its engines (the other, :mod:`indexer.store.vectors_qdrant`, talks to a Qdrant server).

One :class:`EdgeEngine` holds the collections of one folder:

- each physical collection is a folder ``<root>/<name>/``: an Edge shard (its segments, WAL and config) plus
  ``taskspace.json`` (``{"dim": d}``, written right after the shard is created);
- the alias map is ``<root>/aliases.json`` (``{alias: collection}``), replaced atomically (written to a temporary
  file, fsynced, ``os.replace``d, folder fsynced): switching an alias is one rename, so a reader (or a process
  killed mid-rebuild) sees the old complete collection or the new complete one, never a half-written one;
- a collection folder that no alias names is an orphan (a rebuild killed midway): listed by
  :meth:`collections`, removed by the next rebuild.

Collections are created with Dot distance, vectors memory-mapped from disk (``Memory.Cold``: opening a shard does
not read its vectors), payload on disk, and vector indexing switched off (``indexing_threshold=0``): search is
exact brute force over float32 vectors, SIMD in Rust, with payload indexes (keyword, integer, float, bool) serving
filters.

Edge drops its files' pages from the page cache when a shard is closed (or dropped, at exit), so every process
starts with the collection on disk. An unfiltered search reads the vectors in order (the kernel reads ahead: 60-70
ms for the 32k x 778 models at first), but a filtered search, a size-penalty query (the parameter counts of every
prefetched point) and a scroll read them at random, one 4 KB page per fault: the first filtered search of a
process took 0.55-0.65 s there (10,003 page reads) against 4 ms next. Before the first such read of a collection
in this process its files are read into the page cache in order (:func:`_warm`, the data extents only: Edge
preallocates sparse files): about 0.1 s for that collection, and 0.1 s for the filtered search in all.

Without a write-ahead log (``wal_enabled=False``): every write of :class:`VectorStore` ends with :meth:`flush`, and
a write is durable once that returns. With the WAL, Edge re-reads the whole log on every open (0.15 s of the 0.35 s
open of 32k model points here, and a third of the write time), and the index is derived state: a rebuild is
flushed before its alias switch (a killed rebuild leaves an orphan that the next one drops); a push into the live
collection that a kill interrupts belongs to a pass that did not finish, and the next pass checks every
collection against SQL and repairs it. Shards are opened on first use and kept open
until :meth:`close`. Edge holds a lock on each open shard's WAL; :class:`VectorStore` adds one lock file over
the whole folder, so a second process gets a clear BusyError before it touches a shard.

The Python binding converts ``bool`` filter values to integers (``MatchValue(False).value == 0``, which then
matches nothing); numpy booleans keep their type, so bool conditions are built with ``np.bool_``.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import tempfile
import uuid
import weakref
from pathlib import Path
from typing import Iterator

import numpy as np
import qdrant_edge as qe

from ..errors import StoreError, file_size_limit_note

ALIASES = "aliases.json"
META = "taskspace.json"
#: the end of a read failure's message: the files may be damaged, and the index is derived from SQL
DAMAGED = "; if the index files are damaged, `taskspace reindex` rebuilds them from SQL (`taskspace check` reports it)"
_SCHEMAS = {"keyword": qe.PayloadSchemaType.Keyword, "integer": qe.PayloadSchemaType.Integer,
            "float": qe.PayloadSchemaType.Float, "bool": qe.PayloadSchemaType.Bool}


def _limit(exc: Exception) -> str:
    """The note of a file-size limit a write of the index hit (:func:`indexer.errors.file_size_limit_note`), or ""."""
    from .edge_writer import INDEX_FILE

    return file_size_limit_note(str(exc), INDEX_FILE)


#: ``madvise`` option that reads a mapped range into the page cache and waits for it (Linux 5.14+; Python 3.11's mmap
#: module does not name it)
_MADV_POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22)


def _warm(folder: Path) -> None:
    """Read every file under ``folder`` into the page cache in file order, its data extents only (the holes of a
    sparse file would become pages of zeros), and wait for it. Best effort: a file or a system that does not allow
    it is left as it is (a search then reads it page by page, as before)."""
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            size = os.fstat(fd).st_size
            if not size:
                continue
            with mmap.mmap(fd, size, prot=mmap.PROT_READ) as mm:
                pos = 0
                while pos < size:
                    start = os.lseek(fd, pos, os.SEEK_DATA)  # OSError (ENXIO) past the last extent
                    end = os.lseek(fd, start, os.SEEK_HOLE)
                    start -= start % mmap.PAGESIZE
                    mm.madvise(_MADV_POPULATE_READ, start, end - start)
                    pos = end
        except (OSError, ValueError):
            pass
        finally:
            os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def alias_on_disk(folder: Path, alias: str) -> bool:
    """Whether the index folder ``folder`` holds ``alias`` and the folder of the collection it points at, read from
    the files (the shard is not opened): False when the folder, its alias map or the collection was removed."""
    try:
        target = json.loads((folder / ALIASES).read_text()).get(alias)
    except (OSError, ValueError, AttributeError):
        return False
    return bool(target) and (folder / target).is_dir()


def _value(v):
    """A filter value the binding keeps as given (see the module docstring about bools)."""
    if isinstance(v, (bool, np.bool_)):
        return np.bool_(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def _condition(cond):
    """One neutral condition of :func:`indexer.store.vectors.parse_filter` as an Edge condition."""
    op, key, value = cond
    if op == "eq":
        return qe.FieldCondition(key, match=qe.MatchValue(_value(value)))
    if op == "empty":
        return qe.IsEmptyCondition(key)
    if op == "has_id":
        return EdgeEngine.id_condition(value)
    if op == "made":  # a condition the engine made already (:meth:`EdgeEngine.id_condition`)
        return value
    if op == "range":
        return qe.FieldCondition(key, range=qe.RangeFloat(**{k: float(v) for k, v in value.items()}))
    if op == "except":  # a value other than these (strings, or integers: parse_filter), or none at all
        return qe.Filter(should=[qe.FieldCondition(key, match=qe.MatchExcept([_value(v) for v in value])),
                                 qe.IsEmptyCondition(key)])
    values = [_value(v) for v in value]  # "any"
    if values and (all(isinstance(v, str) for v in values)
                   or all(isinstance(v, int) and not isinstance(v, np.bool_) for v in values)):
        return qe.FieldCondition(key, match=qe.MatchAny(values))
    # bools or mixed types: one MatchValue per value, any of them
    return qe.Filter(should=[qe.FieldCondition(key, match=qe.MatchValue(v)) for v in values])


def upsert_op(points: list[tuple[str, np.ndarray, dict]]) -> "qe.UpdateOperation":
    """The Edge operation that upserts points ``(id, float32 vector, payload)`` (the binding converts every value
    here, holding the GIL; applying it, :meth:`EdgeEngine.apply`, lets other threads run). A vector goes in as a
    memoryview of its float32 buffer: the binding reads that in 8.5 us per 774 floats, against 13 us through
    ``tolist()`` and 23 us from the array itself (qdrant-edge-py 0.9.0; the same values, tested)."""
    return qe.UpdateOperation.upsert_points(
        [qe.Point(i, memoryview(np.ascontiguousarray(v, dtype=np.float32)), p) for i, v, p in points])


def edge_filter(parsed) -> "qe.Filter | None":
    """The Edge filter of a parsed filter ``(must, must_not)`` (None: no filter)."""
    if parsed is None:
        return None
    must, must_not = parsed
    return qe.Filter(must=[_condition(c) for c in must] or None, must_not=[_condition(c) for c in must_not] or None)


class EdgeEngine:
    """The Qdrant Edge collections of one folder (see the module docstring). ``temporary``: a fresh folder that
    :meth:`close` (or garbage collection) removes: the in-memory store of tests and notebooks."""

    def __init__(self, root: str | Path | None = None, *, temporary: bool = False):
        if temporary:
            root = tempfile.mkdtemp(prefix="taskspace-edge-")
            self._cleanup = weakref.finalize(self, shutil.rmtree, root, True)
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._shards: dict[str, qe.EdgeShard] = {}
        self._aliases: dict[str, str] | None = None
        self._warmed: set[str] = set()  # collections read into the page cache by this engine (:func:`_warm`)

    def __repr__(self) -> str:
        return f"EdgeEngine({str(self.root)!r})"

    # -- aliases and collections ---------------------------------------------------------------------------
    def aliases(self) -> dict[str, str]:
        if self._aliases is None:
            try:
                aliases = json.loads((self.root / ALIASES).read_text())
                if not isinstance(aliases, dict) or not all(isinstance(v, str) for v in aliases.values()):
                    raise ValueError(f"not a JSON object of alias -> collection name ({type(aliases).__name__})")
                self._aliases = aliases
            except FileNotFoundError:
                self._aliases = {}
            except (OSError, ValueError) as exc:  # ValueError: not JSON, not UTF-8, or not the map (above)
                raise StoreError(f"cannot read the alias map {self.root / ALIASES}: {exc}; "
                                 f"delete the folder {self.root} and run `taskspace reindex`") from None
        return dict(self._aliases)

    def _save_aliases(self, aliases: dict[str, str]) -> None:
        tmp = self.root / f".{ALIASES}.{uuid.uuid4().hex[:8]}"
        with open(tmp, "w") as f:
            json.dump(aliases, f, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.root / ALIASES)
        _fsync_dir(self.root)
        self._aliases = dict(aliases)

    def set_alias(self, alias: str, collection: str) -> None:
        """Point ``alias`` at ``collection`` (creating or moving it) in one atomic rename."""
        self._save_aliases({**self.aliases(), alias: collection})

    def delete_alias(self, alias: str) -> None:
        aliases = self.aliases()
        if aliases.pop(alias, None) is not None:
            self._save_aliases(aliases)

    def collections(self) -> list[str]:
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))

    def create_collection(self, name: str, dim: int) -> None:
        path = self.root / name
        config = qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=int(dim), distance=qe.Distance.Dot, memory=qe.Memory.Cold),
            payload_memory=qe.Memory.Cold, wal_enabled=False,
            optimizers=qe.EdgeOptimizersConfig(indexing_threshold=0, prevent_unoptimized=False))
        try:
            self._shards[name] = qe.EdgeShard.create(str(path), config)
            with open(path / META, "w") as f:
                json.dump({"dim": int(dim)}, f)
        except Exception as exc:
            raise StoreError(f"cannot create the collection {path}: {exc}{_limit(exc)}") from exc

    def collection_dim(self, name: str) -> int:
        try:
            return int(json.loads((self.root / name / META).read_text())["dim"])
        except (OSError, ValueError, KeyError) as exc:
            raise StoreError(f"collection {self.root / name} has no readable {META} ({exc}); "
                             "`taskspace reindex` rebuilds it") from None

    def delete_collection(self, name: str) -> None:
        self._warmed.discard(name)
        shard = self._shards.pop(name, None)
        if shard is not None:
            shard.close()
        shutil.rmtree(self.root / name, ignore_errors=True)

    def _shard(self, name: str, warm: bool = False) -> qe.EdgeShard:
        """The open shard of a collection or of the collection an alias points at; ``warm``: for a read at random
        places (a filter, a scroll), its files read into the page cache first, once per open (:func:`_warm`)."""
        name = self.aliases().get(name, name)
        if warm and name not in self._warmed and (self.root / name / META).exists():
            self._warmed.add(name)
            _warm(self.root / name)
        shard = self._shards.get(name)
        if shard is None:
            path = self.root / name
            if not (path / META).exists():
                raise StoreError(f"no collection {name} in {self.root}")
            try:
                shard = self._shards[name] = qe.EdgeShard.load(str(path))
            except Exception as exc:
                raise StoreError(f"cannot open the collection {path}: {exc}{DAMAGED}") from exc
        return shard

    # -- writing --------------------------------------------------------------------------------------------
    def create_payload_index(self, name: str, field: str, field_schema) -> None:
        self._update(name, qe.UpdateOperation.create_field_index(field, _SCHEMAS[str(field_schema)]))

    def upsert(self, name: str, points: list[tuple[str, np.ndarray, dict]]) -> None:
        """Write points ``(id, float32 vector, payload)``; an existing id is replaced."""
        self._update(name, upsert_op(points))

    def write_in_child(self, name: str, batches, size: int | None = None, lock=None,
                       hold: int | None = None) -> tuple[int | None, Iterator]:
        """Write the batches (lists of ``(id, float32 vector, payload)``) of the fresh collection ``name`` (no alias
        names it: nothing reads it yet) from a child process when they are many (:mod:`indexer.store.edge_writer`:
        from :data:`~indexer.store.edge_writer.CHILD_MIN` points on, started at once when ``size``, the points
        announced, says so, else once that many have come). Returns (points written and flushed, None), or (None,
        the batches) for the caller to write here: fewer than that, or no child could be started. ``lock``: held
        while this engine's state changes; ``hold``: a file descriptor the child inherits (the folder's lock file,
        so that the folder stays locked while a child outlives its parent)."""
        import itertools
        from contextlib import nullcontext

        from . import edge_writer

        it = iter(batches)
        head: list[list[tuple]] = []
        if size is None or size < edge_writer.CHILD_MIN:
            n = 0
            for batch in it:
                head.append(batch)
                n += len(batch)
                if n >= edge_writer.CHILD_MIN:
                    break
            else:  # all of it is here already: small
                return None, iter(head)
        with lock if lock is not None else nullcontext():
            shard = self._shards.pop(name, None)  # one process per shard: the child opens it
            if shard is not None:
                shard.close()
            self._warmed.discard(name)
        rest = itertools.chain(head, it)
        try:
            return edge_writer.write_in_child(self.root, name, rest, hold=hold), None
        except edge_writer.NoChild:  # e.g. no interpreter to start: nothing was taken from the batches yet
            return None, rest

    def delete(self, name: str, ids: list[str]) -> None:
        self._update(name, qe.UpdateOperation.delete_points(list(ids)))

    def flush(self, name: str) -> None:
        """Persist the collection's segments (after a write: reopening then replays nothing)."""
        try:
            self._shard(name).flush()
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(f"cannot flush the collection {self.root / name}: {exc}{_limit(exc)}") from exc

    def apply(self, name: str, op) -> None:
        """Apply an update operation (e.g. :func:`upsert_op`'s) to the collection."""
        self._update(name, op)

    def _update(self, name: str, op) -> None:
        shard = self._shard(name)
        try:
            shard.update(op)
        except Exception as exc:
            raise StoreError(f"writing to the collection {self.root / name} failed: {exc}{_limit(exc)}") from exc

    # -- reading --------------------------------------------------------------------------------------------
    @staticmethod
    def _row(p, score: float = 0.0):
        return str(p.id), score, p.payload or {}, p.vector

    def query(self, name: str, rows: np.ndarray, flt, limit: int, with_vectors: bool,
              payload: bool | list[str] = True, penalty: tuple | None = None) -> list[list[tuple]]:
        """For each query row (float32 (n, dim)), ``limit`` points of highest dot product passing ``flt`` (a
        parsed filter), as ``(id, score, payload, vector | None)``; ``payload``: all, none or these fields.
        ``penalty`` ``(field, alpha, default, prefetch)``: rescored by the formula ``$score - alpha log10(field)``
        over the ``prefetch`` nearest (``default`` for a point without the field)."""
        shard = self._shard(name, warm=flt is not None or penalty is not None)
        f = edge_filter(flt)
        if penalty is None:
            reqs = [qe.QueryRequest(limit=int(limit), query=qe.Query.Nearest(r), filter=f, with_payload=payload,
                                    with_vector=with_vectors) for r in rows.tolist()]
        else:
            field_name, alpha, default, prefetch = penalty
            E = qe.Expression
            formula = qe.Formula(E.Sum([E.Variable("$score"), E.Mult([E.Constant(-alpha), E.Log10(E.Variable(field_name))])]),
                                 defaults={field_name: default})
            reqs = [qe.QueryRequest(limit=int(limit), query=formula, filter=f, with_payload=payload, with_vector=with_vectors,
                                    prefetches=[qe.Prefetch(limit=int(prefetch), query=qe.Query.Nearest(r), filter=f)])
                    for r in rows.tolist()]
        try:
            found = [shard.query(reqs[0])] if len(reqs) == 1 else shard.query_batch(qe.QueryBatchRequest(reqs))
        except Exception as exc:
            raise StoreError(f"query of {self.root / name} failed: {exc}{DAMAGED}") from exc
        return [[(str(p.id), p.score, p.payload or {}, p.vector) for p in pts] for pts in found]

    @staticmethod
    def id_condition(ids) -> "qe.HasIdCondition":
        """The condition "the point's id is one of ``ids``" (the binding parses every id into a UUID: about 1.6 us
        each), which a parsed filter may hold as ``("made", None, condition)``: :meth:`VectorStore._score_rows
        <indexer.store.vectors.VectorStore._score_rows>` makes each distinct one once for a page's calls."""
        return qe.HasIdCondition(set(ids))

    def score_rows(self, name: str, rows: np.ndarray, flts: list, limit: int,
                   with_ids: bool) -> list[tuple[list[str] | None, np.ndarray]]:
        """For each query row (float32 (n, dim)) and its parsed filter (None: every point), the dot products of the
        (at most ``limit``) points passing it, highest first, as float64 values, and with ``with_ids`` their ids:
        nothing else of a point is read. The binding builds a ``uuid.UUID`` for every id read (2 us each, and 1.3 us
        more for its ``str``): 2.6 of the 6.2 s of a full read of 23 rows over 32,823 points."""
        shard = self._shard(name, warm=any(f is not None for f in flts))
        reqs = [qe.QueryRequest(limit=int(limit), query=qe.Query.Nearest(r), filter=edge_filter(f), with_payload=False,
                                with_vector=False) for r, f in zip(rows.tolist(), flts)]
        if not reqs:
            return []
        try:
            found = [shard.query(reqs[0])] if len(reqs) == 1 else shard.query_batch(qe.QueryBatchRequest(reqs))
        except Exception as exc:
            raise StoreError(f"query of {self.root / name} failed: {exc}{DAMAGED}") from exc
        return [([str(p.id) for p in pts] if with_ids else None,
                 np.fromiter((p.score for p in pts), dtype=np.float64, count=len(pts))) for pts in found]

    def retrieve(self, name: str, ids: list[str], with_vectors: bool) -> list[tuple]:
        try:
            recs = self._shard(name).retrieve(list(ids), with_payload=True, with_vector=with_vectors)
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(f"reading {self.root / name} failed: {exc}{DAMAGED}") from exc
        return [self._row(p) for p in recs]

    def scroll(self, name: str, with_vectors: bool, batch_size: int, payload: bool | list[str] = True,
               flt=None) -> Iterator[tuple]:
        shard = self._shard(name, warm=True)
        offset = None
        f = edge_filter(flt)
        while True:
            try:
                recs, offset = shard.scroll(qe.ScrollRequest(offset=offset, limit=int(batch_size), with_payload=payload,
                                                             with_vector=with_vectors, filter=f))
            except Exception as exc:
                raise StoreError(f"reading {self.root / name} failed: {exc}{DAMAGED}") from exc
            if with_vectors and recs:  # one array per page: a float32 row per point without a list each
                vecs = np.array([p.vector for p in recs], dtype=np.float32)
                for p, v in zip(recs, vecs):
                    yield str(p.id), 0.0, p.payload or {}, v
            else:
                for p in recs:
                    yield self._row(p)
            if offset is None:
                return

    def count(self, name: str, flt=None) -> int:
        try:
            return int(self._shard(name).count(qe.CountRequest(exact=True, filter=edge_filter(flt))))
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(f"counting {self.root / name} failed: {exc}{DAMAGED}") from exc

    def close(self) -> None:
        self._warmed.clear()  # (Edge drops the pages on close)
        shards, self._shards = self._shards, {}
        for shard in shards.values():
            shard.close()
        cleanup = getattr(self, "_cleanup", None)
        if cleanup is not None:
            cleanup()
