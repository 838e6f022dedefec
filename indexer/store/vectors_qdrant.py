"""The qdrant-client engine of :class:`indexer.store.vectors.VectorStore`: a Qdrant server (``url=``), or
qdrant-client's own local mode (a folder, or ``:memory:``), a pure-Python stand-in for Qdrant that loads every
point of a collection into memory when it opens it and tests payload filters in Python per point (the embedded
default is :mod:`indexer.store.vectors_edge`; ``TASKSPACE_QDRANT_ENGINE=local`` selects this one for a folder).
Only this module imports ``qdrant_client``; it is imported only when such a store is opened.

:class:`ClientEngine` wraps one ``QdrantClient`` behind the same small interface as
:class:`~indexer.store.vectors_edge.EdgeEngine` (aliases, collections, upsert/delete, query, retrieve, scroll,
count). Aliases are Qdrant's own (switched with one ``update_collection_aliases`` call: atomic on a server, and
in local mode through ``meta.json``, which qdrant-client replaces with ``os.replace``). Queries go through the
alias name, so a server resolves it in the same round trip.

Writes in local mode: qdrant-client commits every point in its own sqlite transaction (about 17 ms each with
fsync); :meth:`ClientEngine.flush` turns the collection's sqlite fsync back on and syncs the file once, after
:meth:`ClientEngine.upsert` ran with fsync off (a killed process loses nothing the OS already has; a power cut
mid-rebuild only loses a collection no alias points at yet).
"""

from __future__ import annotations

import math
import sqlite3

import os
import warnings
from pathlib import Path
from typing import Iterator

import numpy as np
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from ..errors import BusyError, StoreError, file_size_limit_note

#: what a file-size limit's note says grew past it (:func:`indexer.errors.file_size_limit_note`)
LOCAL_FILE = "a file of the local Qdrant index (a collection's storage.sqlite)"

_SCHEMAS = {"keyword": models.PayloadSchemaType.KEYWORD, "integer": models.PayloadSchemaType.INTEGER,
            "float": models.PayloadSchemaType.FLOAT, "bool": models.PayloadSchemaType.BOOL}


def client_filter(parsed) -> "models.Filter | None":
    """The qdrant-client filter of a parsed filter ``(must, must_not)`` (see :func:`~indexer.store.vectors.parse_filter`)."""
    if parsed is None:
        return None

    def cond(c):
        op, key, value = c
        if op == "eq":
            return models.FieldCondition(key=key, match=models.MatchValue(value=value))
        if op == "empty":
            return models.IsEmptyCondition(is_empty=models.PayloadField(key=key))
        if op == "has_id":
            return ClientEngine.id_condition(value)
        if op == "made":  # a condition made already (ClientEngine.id_condition)
            return value
        if op == "range":
            return models.FieldCondition(key=key, range=models.Range(**value))
        if op == "except":  # a value other than these, or none at all (parse_filter)
            return models.Filter(should=[
                models.FieldCondition(key=key, match=models.MatchExcept(**{"except": list(value)})),
                models.IsEmptyCondition(is_empty=models.PayloadField(key=key))])
        return models.FieldCondition(key=key, match=models.MatchAny(any=list(value)))

    must, must_not = parsed
    return models.Filter(must=[cond(c) for c in must] or None, must_not=[cond(c) for c in must_not] or None)


def open_server(url: str, api_key: str | None, timeout: int) -> QdrantClient:
    """A client of the Qdrant server at ``url``; errors never show a password in the URL (masked)."""
    from ..config import mask_secrets, mask_url

    where = mask_url(url)
    try:
        client = QdrantClient(url=url, api_key=api_key, timeout=timeout, check_compatibility=False)
        client.get_collections()
    except UnexpectedResponse as exc:
        hint = ("check TASKSPACE_QDRANT_API_KEY" if exc.status_code in (401, 403)
                else "check that TASKSPACE_QDRANT_URL points at a Qdrant server")
        raise StoreError(f"Qdrant at {where} answered HTTP {exc.status_code}; {hint}") from None
    except Exception as exc:
        detail = mask_secrets(f"{type(exc).__name__}: {exc}", url)
        raise StoreError(
            f"cannot reach Qdrant at {where} ({detail}); check TASKSPACE_QDRANT_URL "
            "(e.g. http://localhost:6333) or unset it to use the embedded local index"
        ) from None
    return client


def open_local(path: Path | None) -> QdrantClient:
    """qdrant-client's local mode in a folder (None: in memory)."""
    if path is None:
        return QdrantClient(location=":memory:")
    try:
        return QdrantClient(path=str(path))
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            raise BusyError(f"another taskspace process is using the index at {path}; "
                            "use a Qdrant server (TASKSPACE_QDRANT_URL) for concurrent access") from None
        raise StoreError(f"cannot open the local Qdrant index at {path}: {exc}"
                         + file_size_limit_note(str(exc), LOCAL_FILE)) from exc


class ClientEngine:
    """One QdrantClient (server, local folder ``path`` or memory) behind the engine interface."""

    def __init__(self, client: QdrantClient, where: str, path: Path | None = None):
        from ..config import mask_url

        self.client = client
        self._url = where
        self.where = mask_url(where)  # never shows a password
        self.path = path  # the local-mode folder (None on a server or in memory)

    def _call(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (ResponseHandlingException, UnexpectedResponse) as exc:
            from ..config import mask_secrets

            raise StoreError(f"Qdrant at {self.where} failed: {mask_secrets(str(exc), self._url)}") from None
        except sqlite3.Error as exc:  # local mode keeps each collection in a SQLite file (before: its traceback)
            raise StoreError(f"the local Qdrant index at {self.path} failed: {type(exc).__name__}: {exc}"
                             + file_size_limit_note(str(exc), LOCAL_FILE)) from exc

    # -- aliases and collections ---------------------------------------------------------------------------
    def aliases(self) -> dict[str, str]:
        return {a.alias_name: a.collection_name for a in self._call(self.client.get_aliases).aliases}

    def set_alias(self, alias: str, collection: str) -> None:
        ops: list = []
        if alias in self.aliases():
            ops.append(models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=alias)))
        ops.append(models.CreateAliasOperation(create_alias=models.CreateAlias(collection_name=collection,
                                                                              alias_name=alias)))
        self._call(self.client.update_collection_aliases, change_aliases_operations=ops)

    def delete_alias(self, alias: str) -> None:
        self._call(self.client.update_collection_aliases, change_aliases_operations=[
            models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=alias))])

    def collections(self) -> list[str]:
        return [c.name for c in self._call(self.client.get_collections).collections]

    def create_collection(self, name: str, dim: int) -> None:
        self._call(self.client.create_collection, name,
                   vectors_config=models.VectorParams(size=int(dim), distance=models.Distance.DOT))

    def collection_dim(self, name: str) -> int:
        vectors = self._call(self.client.get_collection, name).config.params.vectors
        return int(vectors.size if hasattr(vectors, "size") else next(iter(vectors.values())).size)

    def delete_collection(self, name: str) -> None:
        self._call(self.client.delete_collection, name)

    # -- writing --------------------------------------------------------------------------------------------
    def create_payload_index(self, name: str, field: str, field_schema) -> None:
        with warnings.catch_warnings():  # local mode: "payload indexes have no effect" (they do on a server)
            warnings.simplefilter("ignore", UserWarning)
            self._call(self.client.create_payload_index, name, field, field_schema=_SCHEMAS[str(field_schema)])

    def _local_sqlite(self, name: str):
        """The sqlite connection of a persistent local-mode collection (qdrant-client internals), or None."""
        if self.path is None:
            return None
        coll = getattr(getattr(self.client, "_client", None), "collections", {}).get(name)
        con = getattr(getattr(coll, "storage", None), "storage", None)
        return con if hasattr(con, "execute") else None

    def upsert(self, name: str, points: list[tuple[str, np.ndarray, dict]]) -> None:
        con = self._local_sqlite(name)
        if con is not None:
            self._call(con.execute, "PRAGMA synchronous=OFF")
        self._call(self.client.upsert, name, wait=True,
                   points=[models.PointStruct(id=i, vector=v.tolist(), payload=p) for i, v, p in points])

    def flush(self, name: str) -> None:
        con = self._local_sqlite(name)
        if con is None:
            return
        self._call(con.execute, "PRAGMA synchronous=FULL")
        db = self.path / "collection" / name / "storage.sqlite"
        if db.exists():
            fd = os.open(db, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def delete(self, name: str, ids: list[str]) -> None:
        self._call(self.client.delete, name, points_selector=models.PointIdsList(points=list(ids)), wait=True)

    # -- reading --------------------------------------------------------------------------------------------
    @staticmethod
    def _row(p, score: float = 0.0):
        return str(p.id), score, p.payload or {}, p.vector

    def query(self, name: str, rows: np.ndarray, flt, limit: int, with_vectors: bool,
              payload: bool | list[str] = True, penalty: tuple | None = None) -> list[list[tuple]]:
        f = client_filter(flt)
        if penalty is not None and self.is_local:
            return self._rescore_locally(name, rows, flt, limit, with_vectors, payload, penalty)
        if penalty is not None:  # a formula query over a prefetch (server >= 1.14)
            field_name, alpha, default, prefetch = penalty
            formula = models.FormulaQuery(
                formula=models.SumExpression(sum=["$score", models.MultExpression(
                    mult=[-alpha, models.Log10Expression(log10=field_name)])]),
                defaults={field_name: default})
            reqs = [models.QueryRequest(query=formula, prefetch=models.Prefetch(query=r, filter=f, limit=int(prefetch)),
                                        filter=f, limit=int(limit), with_payload=payload, with_vector=with_vectors)
                    for r in rows.tolist()]
            res = self._call(self.client.query_batch_points, name, requests=reqs)
            return [[(str(p.id), float(p.score), p.payload or {}, p.vector) for p in r.points] for r in res]
        if len(rows) == 1:
            res = [self._call(self.client.query_points, name, query=rows[0].tolist(), query_filter=f,
                              limit=int(limit), with_payload=payload, with_vectors=with_vectors)]
        else:
            reqs = [models.QueryRequest(query=r, filter=f, limit=int(limit), with_payload=payload, with_vector=with_vectors)
                    for r in rows.tolist()]
            res = self._call(self.client.query_batch_points, name, requests=reqs)
        return [[(str(p.id), float(p.score), p.payload or {}, p.vector) for p in r.points] for r in res]

    @staticmethod
    def id_condition(ids) -> "models.HasIdCondition":
        """As :meth:`indexer.store.vectors_edge.EdgeEngine.id_condition`: "the point's id is one of ``ids``"."""
        return models.HasIdCondition(has_id=list(ids))

    def score_rows(self, name: str, rows: np.ndarray, flts: list, limit: int,
                   with_ids: bool) -> list[tuple[list[str] | None, np.ndarray]]:
        """As :meth:`indexer.store.vectors_edge.EdgeEngine.score_rows`: each row's scores of the points passing its
        filter, highest first (float64), and their ids with ``with_ids``."""
        reqs = [models.QueryRequest(query=r, filter=client_filter(f), limit=int(limit), with_payload=False,
                                    with_vector=False) for r, f in zip(rows.tolist(), flts)]
        res = self._call(self.client.query_batch_points, name, requests=reqs) if reqs else []
        return [([str(p.id) for p in r.points] if with_ids else None,
                 np.array([float(p.score) for p in r.points], dtype=np.float64)) for r in res]

    @property
    def is_local(self) -> bool:
        """qdrant-client's pure-Python local mode (not a server)."""
        return type(getattr(self.client, "_client", None)).__name__ == "QdrantLocal"

    def _rescore_locally(self, name, rows, flt, limit, with_vectors, payload, penalty) -> list[list[tuple]]:
        """The size penalty re-ranked here: qdrant-client's local mode evaluates formulas but fails on a null payload
        value (where Qdrant itself takes the default), so the prefetch is fetched and re-scored in Python with the
        same formula. Same result as the formula query."""
        field_name, alpha, default, prefetch = penalty
        out = []
        for found in self.query(name, rows, flt, prefetch, with_vectors, True):
            def value(p):
                v = p[2].get(field_name)
                v = v if isinstance(v, (int, float)) and not isinstance(v, bool) else default
                return p[1] - alpha * math.log10(v) if v > 0 else float("-inf")
            rescored = sorted(((p[0], value(p), p[2], p[3]) for p in found), key=lambda r: -r[1])[:int(limit)]
            if payload is not True:
                keep = set(payload) if payload else set()
                rescored = [(i, sc, {k: v for k, v in pl.items() if k in keep}, vec) for i, sc, pl, vec in rescored]
            out.append(rescored)
        return out

    def retrieve(self, name: str, ids: list[str], with_vectors: bool) -> list[tuple]:
        return [self._row(p) for p in self._call(self.client.retrieve, name, ids=list(ids), with_payload=True,
                                                 with_vectors=with_vectors)]

    def scroll(self, name: str, with_vectors: bool, batch_size: int, payload: bool | list[str] = True,
               flt=None) -> Iterator[tuple]:
        offset = None
        f = client_filter(flt)
        while True:
            points, offset = self._call(self.client.scroll, name, limit=int(batch_size), offset=offset,
                                        with_payload=payload, with_vectors=with_vectors, scroll_filter=f)
            for p in points:
                yield self._row(p)
            if offset is None:
                return

    def count(self, name: str, flt=None) -> int:
        return int(self._call(self.client.count, name, count_filter=client_filter(flt), exact=True).count)

    def close(self) -> None:
        self.client.close()
