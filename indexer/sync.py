"""Keep the Qdrant index (derived) in step with the SQL store (the source of truth).

A space is named in the index by :func:`indexer.space.space_name`; its vectors are in the index form of
:mod:`indexer.represent` (models ``[e_i, (f_i,) c_i]``, prompts and queries ``[q, (covariates,) 1]``), so that
Qdrant's Dot product is the model's predicted score.

- :func:`reindex` rebuilds the ``models`` / ``benchmarks`` / ``prompts`` collections of one space (or of every
  space) from SQL, each with :meth:`VectorStore.rebuild` (fresh collection + atomic alias switch), under the SQL
  lock ``"reindex"``:

  - models: one point per SQL model vector; vector = the hyperplane normal; payload = the model's Hub
    metadata that filters and readers use (license, num_parameters, pipeline_tag, library, tags, gated (bool),
    downloads, kind, aliases), the vector's provenance (benchmarks, n_prompts, accuracy = unweighted mean of
    accuracy_by_benchmark) and its posterior (pattern, lam, noise). The rest of the model's metadata
    (:data:`UNSTORED`: revision, gated mode, likes, base model, last modified, the vector's inputs digest and
    computed_at) stays in SQL: the digest covers it, the payload does not carry it (an index written before
    carries it and reads the same).
  - benchmarks: one point per SQL benchmark vector (mean prompt embedding); payload group, metric,
    num_fewshot, n_prompts, computed_at.
  - prompts: one point per prompt of any benchmark, key = prompt hash, vector from the encoder cache of
    the space's encoder (:func:`indexer.space.space_encoder`; encoded now if not cached); payload benchmark
    (first by name), benchmarks, snippet (first 300 characters of the text), encoder.

  Every payload carries ``digest``: sha256 of the payload (for models, with the unstored fields) and (models,
  benchmarks) the float32 vector.
- :func:`push_models` upserts some models' points into the live collection (after the worker saved new vectors)
  without a rebuild, and deletes those SQL has no vector for; it takes the same lock (BusyError while a reindex
  runs).
- :func:`check` compares each space (every SQL space, plus any index space that SQL does not know; or just the
  one asked for) with SQL: a :class:`Drift` maps each kind to sorted keys that are *missing* (in SQL, not in
  the index), *extra* (in the index, not in SQL) or *stale* (in both, but the payload digest or, for models and
  benchmarks, the stored vector differs from what SQL gives: digests compared exactly, vectors through their inner
  products with two fixed random probes, beyond float32 rounding, :func:`_compare`), and lists the collections an interrupted rebuild
  left (``orphans``: not drift, the next rebuild drops them), and which extra benchmark points are of benchmarks SQL
  holds with prompts but without a vector in the space (``uncomputed``: an indexing pass recomputes their vectors and
  rebuilds the collection; a rebuild alone would drop the points; the pass of the space, ``indexed_by``, as a pass
  computes them in the space it solves alone), which missing or stale models only wait for a push that every pass
  makes (``unpushed``), and, in the space an indexing pass solves (the
  configured one, ``solves``), the models with outcomes whose vector is missing or was solved from other inputs that
  its solver can solve (``unsolved``: drift `taskspace index` repairs), and those it refuses, with why
  (``unsolvable``: not drift; no pass or rebuild repairs them, a corrected source ingested again does). Prompt
  vectors are not recomputed (that needs the encoder): their digest covers hash, benchmarks, text snippet and encoder
  id. A kind whose live collection cannot be read (:meth:`VectorStore.unreadable`: its folder removed, say), or whose
  scan or search fails (its files damaged), is a problem of the drift with every expected point missing; ``reindex``
  replaces it. So is the embedded folder that does not exist (removed by hand: :meth:`VectorStore.folder_missing` of a
  store opened without creating it, as ``taskspace check`` opens it), in every space SQL holds points for.
- :func:`check_report` is what ``taskspace check`` prints (and exits 1 on, :attr:`CheckReport.clean`): :func:`check`
  of the spaces and, without ``space``, :func:`configured_unbuilt` (the configured space not built while SQL holds
  results to build it from), and when that is not clean the indexing run in progress (:func:`running_pass`), whose
  work the drift may be; :func:`beyond_a_pass` says whether a space's drift needs `taskspace reindex` beside the
  indexing passes advised for it.
- A pulled space (``taskspace pull``, read-only until raw results are ingested) keeps the prompts collection the pull
  wrote from the published index rows: ``reindex`` leaves it and ``check`` does not compare it (SQL has no texts).
- :func:`open_sql_of_index` opens SQL for ``check`` and ``reindex``, refusing (instead of creating it empty) a SQLite
  file that is gone while a vector index remains.
- :func:`resolve_spaces` looks spaces up: all of them, or the one named by its index name, its SQL id, or an
  encoder name (whole, or the part after its last "/", in any case) when that picks exactly one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

from . import represent
from .errors import BusyError, DimensionError, StoreError, UnknownSpaceError, arg
from .records import ToDict, parameter_count, prompt_hash, strip_invisible
from .space import encoder_name, space_encoder, space_name
from .store.vectors import KINDS, Point, VectorStore, space_slug

log = logging.getLogger(__name__)
SNIPPET = 300


def space_text(space, *, names: str = "index name, SQL id or encoder name", lists: str | None = None) -> str:
    """``space`` as a name: the spaces and invisible characters around it dropped (``" 1 "`` is ``"1"``). Blanks or
    invisible characters alone name no space: bad input (an :class:`~indexer.errors.InputError`, a ValueError naming
    ``space``), as a blank benchmark is, not looked up. ``names``: what a space is named by where it is looked up;
    ``lists``: what lists them (default: :func:`indexer.find.lister`'s words for the reader)."""
    s = strip_invisible(str(space))
    if not s:
        from .errors import InputError
        from .find import lister

        raise InputError(f"space must be a space's {names}, not {str(space)[:40]!r} (blank, or only invisible "
                         f"characters); {lists or lister('space')} lists them", item="space")
    return s


def resolve_spaces(sql, space=None, spaces: list | None = None, *, said: str | None = None) -> list:
    """Every SQL space (``space`` None), or the one ``space`` names (see the module docstring); a space record
    is returned as it is. :class:`UnknownSpaceError` (a NotFoundError, exit 2: a usage error) listing the spaces when
    the name fits none or several.
    ``spaces``: SQL's spaces as just read (:meth:`list_spaces <indexer.store.sql.Store.list_spaces>`), not read
    again. ``said``: how that error names the argument (default: as its caller wrote it, ``--space 'x'`` in a command,
    ``space='x'`` to the library: :func:`indexer.errors.arg`)."""
    spaces = sql.list_spaces() if spaces is None else spaces
    if space is None:
        return spaces
    if isinstance(space, np.integer):  # a numpy id (from an array or a DataFrame) is the id it holds
        space = int(space)
    if isinstance(space, bool) or not isinstance(space, (str, int)):
        if hasattr(space, "id") and hasattr(space, "encoder"):
            return [space]  # a SpaceRecord already
        # before: a list or a float here failed later with AttributeError: 'list' object has no attribute 'id'
        from .errors import InputError

        raise InputError(f"space must be a space's name or id (a string or an integer), not {type(space).__name__}",
                         item="space")
    # spaces and invisible characters around a name are no part of it, as a benchmark's or a filter's (before: `" 1 "`
    # was "not a known space")
    s = space_text(space)
    by_name = [r for r in spaces if space_name(r) == s or str(r.id) == s]
    if not by_name:
        # the encoder's name, whole or after a "/" (all-MiniLM-L6-v2 for sentence-transformers/all-MiniLM-L6-v2): a
        # bare suffix made `--space 2` (an id no space has) the space of every encoder whose name ends in "2"; or the
        # encoder as `taskspace spaces` and GET /v1/spaces list it, with its revision (before, that listed value was
        # "not a known space")
        low = s.lower()
        by_name = [r for r in spaces if (n := encoder_name(r.encoder).lower()) == low or n.endswith("/" + low)
                   or r.encoder.lower() == low]
    if len(by_name) != 1:
        # the caller's words: the library's argument, `space='x'`; a command's option, `--space 'x'`
        # (indexer.errors.arg); the HTTP API's field, `space 'x'` (indexer.serve)
        said = said or arg("space", s)
        if by_name:  # an encoder several methods' spaces share: those spaces, by what tells them apart (before: every
            # space of SQL by name, id and encoder, the method nowhere, so two names of one encoder read alike)
            alike = len({r.encoder for r in by_name}) == 1
            which = ", ".join(f"{space_name(r)} (id {r.id}, {'' if alike else r.encoder + ', '}method {r.method})"
                              for r in by_name)
            detail = ("matches several spaces" + (f" of encoder {by_name[0].encoder}" if alike else "")
                      + f": {which}; name one by its index name or id")
        else:
            known = ", ".join(f"{space_name(r)} (id {r.id}, {r.encoder}, method {r.method})" for r in spaces)
            detail = f"is not a known space; spaces in SQL: {known or 'none'}"
        err = UnknownSpaceError(f"{said} {detail}")
        err.item = "space"  # the argument that named it, as a model's or benchmark's NotFoundError has
        # the name given and what is wrong with it, for a layer that names the argument its own way (indexer.serve)
        err.given, err.detail = s, detail
        raise err
    return by_name


def open_sql_of_index(settings=None, *, read_only: bool = False):
    """The SQL store of a command that compares the vector index with SQL or rebuilds it from SQL (``check``,
    ``reindex``, ``spaces``). When the SQLite file is gone but a vector index remains (its embedded folder holds something, or the
    configured Qdrant server holds a space): a StoreError saying that SQL, the source of truth, is missing at its path and that
    ``taskspace index`` re-indexes the sources (the index cannot rebuild SQL). Before, opening the store created an
    empty database: ``check`` reported every indexed point as extra and advised ``reindex``, which rebuilt nothing.
    ``read_only`` (a command with nothing to do on a home never indexed: ``check``, ``spaces``, ``spaces drop``,
    ``reindex``): without either, the error of a query on such a home (:func:`indexer.query.refuse_missing_database`),
    and no home nor database is created."""
    from .store.sql import missing_sqlite_file, open_store

    if settings is None:
        from .config import get_settings

        settings = get_settings()
    gone = missing_sqlite_file(settings.database_url)
    if gone is not None:
        folder = settings.qdrant_path
        if settings.qdrant_url is not None:  # a server: does it hold any space? (its own errors come first)
            with VectorStore.from_settings(settings) as vectors:
                index = bool(vectors.spaces())
        else:
            index = folder.is_dir() and any(folder.iterdir())
        if index:
            where = "the Qdrant server" if settings.qdrant_url is not None else str(folder)
            raise StoreError(f"the SQL database is missing at {gone}; it is the source of truth (the vector index at "
                             f"{where} is derived from it and cannot rebuild it): re-index the sources with "
                             "`taskspace index` (or restore the file from a backup)")
        if read_only:  # `check`, `spaces`, `reindex`: nothing indexed, and nothing made
            from .query import open_existing_store

            return open_existing_store(settings)
    return open_store()


def _pulled_read_only(sql, rec) -> bool:
    """True for a pulled space without raw results (``taskspace pull``): its prompts collection holds the pulled
    index rows, which SQL (no prompt texts) cannot rebuild or check."""
    return bool(getattr(sql, "is_read_only", None)) and sql.is_read_only(rec.id)


def _digest(payload: dict, vector: np.ndarray | None = None) -> str:
    h = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode())
    if vector is not None:
        h.update(np.asarray(vector, dtype="<f4").tobytes())
    return h.hexdigest()[:32]


def _iso(t):
    return t.isoformat() if t is not None else None


#: model metadata in SQL that no filter and no reader of the index uses (the published records read SQL): part of
#: the point's digest, left out of its payload (each payload value costs Edge's binding 3-4 us to convert)
UNSTORED = ("revision", "gated_mode", "likes", "base_model", "last_modified", "inputs_digest", "computed_at")


def license_payload(text):
    """A model's license as its point carries it: the text SQL holds, or, for a model card that names several
    (stored joined with ",", e.g. ``apache-2.0,mit``), the list of them, so that a filter on any one of them matches
    (a keyword filter matches an array field holding the value; the joined text matched none of its licenses).
    :func:`license_text` reads it back."""
    if isinstance(text, str) and "," in text:
        parts = [t.strip() for t in text.split(",") if t.strip()]
        return parts if len(parts) > 1 else (parts[0] if parts else None)
    return text


def license_text(value):
    """A point's ``license`` as text, as SQL and the answers give it: a list joined with ","."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value) or None
    return value


#: the Hub metadata fields of a model point: a point with none of them has had no Hub metadata fetched
HUB_FIELDS = ("license", "num_parameters", "pipeline_tag", "library", "tags", "downloads")


def gated_known(payload: dict) -> bool | None:
    """Whether a model point's repo is gated, as an answer shows it: None where that is not known, else the payload's
    ``gated``. Not known: a model that is not a Hub repo (an API model), or one whose Hub metadata was never fetched
    (an offline pass, ``--no-metadata``, a Hub that failed): its point holds none of :data:`HUB_FIELDS`, or, on a
    point read from SQL, the Hub's own value ``gated_mode`` is missing. The ``gated`` payload field itself is False
    there, so ``exclude_gated`` keeps those models (it drops the repos known to be gated). Before, those answers
    said "gated no"."""
    if payload.get("kind") != "hub":
        return None
    if "gated_mode" in payload:
        return None if payload.get("gated_mode") in (None, "") else bool(payload.get("gated"))
    if all(payload.get(f) in (None, "", []) for f in HUB_FIELDS):
        return None
    return bool(payload.get("gated"))


def _model_point(mv, rec, aliases: dict | None = None) -> Point:
    acc = {k: float(v) for k, v in (mv.accuracy or {}).items() if v is not None and np.isfinite(v)}
    gated = getattr(rec, "gated", None)
    payload = {
        "kind": getattr(rec, "kind", None), "revision": getattr(rec, "revision", None),
        "license": license_payload(getattr(rec, "license", None)),
        "num_parameters": parameter_count(getattr(rec, "num_parameters", None)),  # 0: no size
        "pipeline_tag": getattr(rec, "pipeline_tag", None), "library": getattr(rec, "library", None),
        "tags": list(getattr(rec, "tags", None) or []),
        "gated": gated not in (None, "", "false", "False", False), "gated_mode": gated,
        "downloads": getattr(rec, "downloads", None), "likes": getattr(rec, "likes", None),
        "base_model": getattr(rec, "base_model", None), "last_modified": _iso(getattr(rec, "last_modified", None)),
        "benchmarks": sorted(mv.benchmarks or []), "n_prompts": int(mv.n_prompts),
        "accuracy": float(np.mean(list(acc.values()))) if acc else None, "accuracy_by_benchmark": acc,
        "inputs_digest": mv.inputs_digest, "computed_at": _iso(mv.computed_at),
        # the posterior of its scores (indexer.posterior): coverage pattern, lambda, residual variance
        "pattern": getattr(mv, "pattern", None), "lam": getattr(mv, "lam", None), "noise": getattr(mv, "noise", None),
        # every other name its sources gave it (indexer.identity; the model_aliases table)
        "aliases": sorted(a for a in (aliases or {}).get(mv.model, []) if a != mv.model),
    }
    counts = getattr(mv, "counts", None)
    if counts:  # a pulled vector: the outcome cells per benchmark its record carries (a built one's are its outcomes)
        payload["n_by_benchmark"] = {k: int(v) for k, v in counts.items()}
    vec = np.asarray(mv.vector, dtype=np.float32)
    digest = _digest({"key": mv.model, **payload}, vec)
    for k in UNSTORED:  # covered by the digest (as before), but not written into the index: nothing reads them there
        del payload[k]
    payload["digest"] = digest
    return Point(mv.model, vec, payload)


def _benchmark_point(bv, rec) -> Point:
    payload = {"group": getattr(rec, "group", None), "metric": getattr(rec, "metric", None),
               "num_fewshot": getattr(rec, "num_fewshot", None), "n_prompts": int(bv.n_prompts),
               "computed_at": _iso(bv.computed_at)}
    vec = np.asarray(bv.vector, dtype=np.float32)
    payload["digest"] = _digest({"key": bv.benchmark, **payload}, vec)
    return Point(bv.benchmark, vec, payload)


def _prompt_payload(h: str, benchmarks: list[str], text: str, encoder_id: str) -> dict:
    payload = {"benchmark": benchmarks[0], "benchmarks": benchmarks, "snippet": text[:SNIPPET], "encoder": encoder_id}
    payload["digest"] = _digest({"key": h, **payload})
    return payload


def _prompts(sql) -> dict[str, tuple[list[str], str]]:
    """prompt hash -> (sorted benchmarks, text) for every prompt of every SQL benchmark."""
    out: dict[str, tuple[list[str], str]] = {}
    for b in sorted(sql.list_benchmarks(), key=lambda r: r.name):
        ids = sql.benchmark_prompts(b.name)
        for text in sql.prompt_texts(ids) if ids else []:
            h = prompt_hash(text)
            if h in out:
                if b.name not in out[h][0]:
                    out[h][0].append(b.name)
            else:
                out[h] = ([b.name], text)
    return out


#: every vector of a space is read from SQL this many models at a time (a rebuild's writer starts on the first
#: chunk instead of after all 32k, and the vectors read are not all in memory at once)
MODEL_CHUNK = 4096


def _model_points(sql, space, models: Sequence[str] | None = None) -> Iterator[Point]:
    """The models collection's points SQL implies: every vector of the space (read :data:`MODEL_CHUNK` models at a
    time, in key order), or these models' (keys)."""
    if models is None and hasattr(sql, "model_vector_keys"):
        models = sql.model_vector_keys(space.id)
    if models is not None and len(models) > MODEL_CHUNK:
        for lo in range(0, len(models), MODEL_CHUNK):
            yield from _model_points(sql, space, models[lo:lo + MODEL_CHUNK])
        return
    records = {m.key: m for m in sql.list_models(keys=models)}
    aliases = sql.aliases_by_model(models)
    for mv in sql.load_model_vectors(space.id, models):
        yield _model_point(mv, records.get(mv.model), aliases)


class _Digests:
    """Wraps the points written to the models collection and keeps each one's payload digest, to be stored in SQL
    (``model_vectors.point_digest``) once the write succeeded, under the claim taken before the points were built
    (:meth:`~indexer.store.sql.Store.claim_point_digests`): a write of their inputs meanwhile wins."""

    def __init__(self, sql, space, models: Sequence[str] | None = None):
        self.sql, self.space_id = sql, space.id
        self.token = sql.claim_point_digests(space.id, models) if hasattr(sql, "claim_point_digests") else None
        self.digests: dict[str, str] = {}

    def wrap(self, points: Iterator[Point]) -> Iterator[Point]:
        for p in points:
            self.digests[p.key] = p.payload["digest"]
            yield p

    def save(self) -> None:
        if self.token is not None:
            self.sql.save_point_digests(self.space_id, self.token, self.digests)


def _benchmark_points(sql, space) -> Iterator[Point]:
    records = {b.name: b for b in sql.list_benchmarks()}
    for bv in sql.load_benchmark_vectors(space.id):
        yield _benchmark_point(bv, records.get(bv.benchmark))


def _prompt_points(sql, space, encoder, batch: int = 2048) -> Iterator[Point]:
    prompts = _prompts(sql)
    if not prompts:
        return
    enc = space_encoder(space, encoder)
    items = list(prompts.items())
    for lo in range(0, len(items), batch):
        chunk = items[lo:lo + batch]
        texts = [text for _, (_, text) in chunk]
        vecs = represent.rows(texts, enc.encode, space, lifted=True)
        if vecs.shape[1] != space.dim:
            raise DimensionError(f"encoder {enc.id} gives {vecs.shape[1]}-dim vectors, space has {space.dim}",
                                 item=space_name(space))
        for (h, (bench, text)), v in zip(chunk, vecs):
            yield Point(h, v, _prompt_payload(h, bench, text, space.encoder))


@dataclass
class ReindexResult(ToDict):
    space: str
    space_id: int
    counts: dict[str, int]
    seconds: float

    def as_dict(self) -> dict:
        return {"space": self.space, "space_id": self.space_id, "counts": self.counts, "seconds": round(self.seconds, 3)}


def reindex(sql, vectors: VectorStore, space=None, *, kinds: Sequence[str] = KINDS, encoder=None,
            progress=None, ensure=None) -> list[ReindexResult]:
    """Rebuild the index of one space (or every space) from SQL. See the module docstring.

    ``progress(points, kind)``, when given, wraps each kind's point iterator (e.g. a progress bar). ``ensure``: the
    ``held.ensure`` of a lock the caller holds around this (``taskspace reindex`` and ``pull`` hold ``"index"``); it
    and this function's own ``"reindex"`` lock are checked before each collection is rebuilt, so a rebuild whose
    PostgreSQL lock session the server ended takes the lock again or stops (BusyError) instead of rebuilding beside
    the pass that took it meanwhile."""
    results = []
    lock = sql.lock("reindex") if hasattr(sql, "lock") else nullcontext()
    with lock as held:
        checks = [f for f in (ensure, getattr(held, "ensure", None)) if f is not None]
        for rec in resolve_spaces(sql, space):
            t0, name, counts = time.perf_counter(), space_name(rec), {}
            # the models collection last: a search needs the prompts (neighbours, coverage) and benchmarks as soon as
            # the models answer, so on a new space's first build no query sees models without prompts (a 503)
            for kind in sorted(kinds, key=lambda k: k == "models"):
                if kind == "prompts" and _pulled_read_only(sql, rec):
                    log.info("space %s was pulled and is read-only: its prompts collection (from the pulled files, "
                             "no texts in SQL) is kept", name)
                    origin = sql.unfinished_pull(rec.id) if hasattr(sql, "unfinished_pull") else None
                    if origin is not None:
                        log.warning("space %s: the pull of %s stopped before it wrote the vector index, and its "
                                    "prompts collection cannot be rebuilt from SQL: run `taskspace pull %s` again",
                                    name, origin, origin)
                    continue
                digests = None
                size = None
                if kind == "models":
                    digests = _Digests(sql, rec)
                    keys = sql.model_vector_keys(rec.id) if hasattr(sql, "model_vector_keys") else None
                    size = None if keys is None else len(keys)
                    points = digests.wrap(_model_points(sql, rec, keys))
                elif kind == "benchmarks":
                    points = _benchmark_points(sql, rec)
                else:
                    points = _prompt_points(sql, rec, encoder)
                if progress is not None:
                    points = progress(points, kind)
                for still_held in checks:
                    still_held()
                counts[kind] = vectors.rebuild(name, kind, points, dim=rec.dim, size=size).count
                if digests is not None:
                    digests.save()
            counts = {k: counts[k] for k in kinds if k in counts}  # reported in the order asked
            results.append(ReindexResult(name, rec.id, counts, time.perf_counter() - t0))
            log.info("reindexed space %s: %s", name, counts)
    return results


def push_models(sql, vectors: VectorStore, space, models: Sequence[str] | None = None) -> int:
    """Upsert these models' points (all when None) into the live index; drop those SQL has no vector for."""
    (rec,) = resolve_spaces(sql, space)
    name = space_name(rec)
    # the same lock as reindex: a push into a collection that a concurrent rebuild is about to drop would be lost
    with sql.lock("reindex") if hasattr(sql, "lock") else nullcontext():
        digests = _Digests(sql, rec, models)
        records = {m.key: m for m in sql.list_models(keys=models)}  # keys=None: every model
        aliases = sql.aliases_by_model(models)
        mvs = sql.load_model_vectors(rec.id, models)
        n = vectors.upsert(name, "models", digests.wrap(_model_point(mv, records.get(mv.model), aliases) for mv in mvs),
                           dim=rec.dim)
        digests.save()
        if models is not None:
            gone = set(models) - {mv.model for mv in mvs}
            # a model renamed or merged since its last push (a repo renamed on the Hub, a name the identity rules now
            # map elsewhere: Store.rename_models, merge_model_names) keeps its old key as an alias, and the point under
            # that key is stale: dropped here, where the pass pushes the model under its new key (its point digest was
            # forgotten with the rename, so a pass after a crash still does). Before, the old point stayed: `models`
            # and `search` listed the model twice and `check` reported an extra point until a reindex
            pushed = {mv.model for mv in mvs}
            former = sorted({a for m in pushed for a in aliases.get(m, ()) if a != m})
            if former:
                keys = {m.key for m in sql.list_models(keys=former)}  # an alias is never another model's key; still
                gone |= set(vectors.get(name, "models", [a for a in former if a not in keys]))
            vectors.delete(name, "models", sorted(gone))
    return n


def push_other_spaces(sql, vectors: VectorStore, skip: Sequence[int] = ()) -> dict[str, int]:
    """Push the points of every space but ``skip`` (SQL ids) whose other inputs were written since their last push:
    the models whose point digest is unknown (:meth:`~indexer.store.sql.Store.unpushed_models`: a license lowered,
    Hub metadata fetched, a model renamed or merged; SQL writes each of those for the model in every space), into a
    space whose models collection exists (one that was never built is left to `taskspace reindex`). An indexing
    pass solves and pushes its configured space alone; before, those writes reached the other spaces' SQL only (a
    pulled space, one of another encoder or method): their answers kept the old payload (`--license mit` missed a
    model an older taskspace stored as "MIT") and `taskspace check` reported them stale until a reindex. Returns
    space name -> points pushed, for the spaces pushed."""
    if not hasattr(sql, "unpushed_models"):
        return {}
    out = {}
    for rec in sql.list_spaces():
        if rec.id in skip:
            continue
        models = sql.unpushed_models(rec.id)
        name = space_name(rec)
        if models and vectors.alias_target(name, "models") is not None:
            out[name] = push_models(sql, vectors, rec.id, models)
    return out


@dataclass
class Drift(ToDict):
    space: str
    missing: dict[str, list[str]] = field(default_factory=dict)
    stale: dict[str, list[str]] = field(default_factory=dict)
    extra: dict[str, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: physical collections no alias points at (left by an interrupted rebuild; not drift, the next rebuild drops them)
    orphans: list[str] = field(default_factory=list)
    #: extra benchmark points of benchmarks SQL holds with prompts but without a vector in this space (a benchmark
    #: vector deleted, say): `taskspace reindex` would drop the points, an indexing pass recomputes the vectors
    uncomputed: list[str] = field(default_factory=list)
    #: benchmarks SQL holds with prompts whose vector in this space is missing or counts other prompts than SQL holds
    #: now: results ingested since the last indexing pass (`taskspace ingest` without `taskspace index`). That pass
    #: solves them, computes these vectors and rebuilds the benchmarks and prompts collections, so their drift is its
    #: to repair; `taskspace reindex` would rebuild the prompts and leave the new results unindexed. Drift where a pass
    #: solves the space (:attr:`indexed_by`), even when its index matches SQL (after `taskspace reindex`: before, a
    #: space other than the configured one then checked clean, lacking the new benchmark's vector)
    unindexed: list[str] = field(default_factory=list)
    #: models with outcomes in SQL whose vector in this space is missing or was solved from other inputs (results
    #: ingested since the last indexing pass: `taskspace ingest` without `taskspace index`), in a space a pass solves
    #: (the configured one; another whose pass a setting makes, :attr:`indexed_by`) and that its solver can solve
    #: (:func:`_solvable`): drift that the space's pass repairs. Before, check said clean while these models were in no
    #: search (in another space: after `taskspace index` and `taskspace reindex`, with its old vectors)
    unsolved: list[str] = field(default_factory=list)
    #: models with outcomes in SQL that the solver refuses (:func:`indexer.solver.inputs.refusals`), in the space a
    #: pass solves -> why (no observed outcome, or a value outside [0, 1] and its benchmark): not drift (no pass or
    #: rebuild repairs it; every pass reports them as item errors), fixed by correcting the source and ingesting it
    unsolvable: dict[str, str] = field(default_factory=dict)
    #: models with a vector in the space a pass solves and no outcome in SQL any more (their source dropped with
    #: `taskspace sources drop`, or replaced without them): that pass removes their vectors and points
    #: (:meth:`~indexer.store.sql.Store.orphan_model_vectors`, "models removed"), so their drift is its to repair.
    #: Before, check did not count them: after `sources drop` it advised `taskspace reindex` alone, and after that
    #: rebuild said clean while every search still ranked them
    resultless: list[str] = field(default_factory=list)
    #: the models the indexing pass that repairs :attr:`unsolved` re-solves and pushes to the index (whatever their
    #: points' drift): the unsolved ones, or every model with outcomes the solver takes when the pass solves them all
    #: (it fits the space's prior or calibration map now). Empty outside the space a pass solves
    by_pass: set[str] = field(default_factory=set, repr=False)
    #: models whose point is missing or stale only as it waits for a push: its digest unknown
    #: (:meth:`~indexer.store.sql.Store.unpushed_models`: the model's metadata, key or aliases written since its last
    #: push, Hub metadata fetched, a license lowered), less :attr:`by_pass`. Every indexing pass pushes them, in every
    #: space whose models collection exists (the configured one with its solved models, the others through
    #: :func:`push_other_spaces`), so their drift is any pass's to repair, as `taskspace reindex`'s
    unpushed: list[str] = field(default_factory=list)
    #: the command whose indexing pass computes this space's :attr:`unindexed` and :attr:`uncomputed` benchmark vectors
    #: and rebuilds its benchmarks and prompts collections (:func:`indexer.spaces.update_command`): `taskspace index`
    #: in the configured space, with `TASKSPACE_METHOD=...` or `TASKSPACE_ENCODER=...` before it in another (a pass
    #: does that in the space it solves alone); None when no pass does (a pulled space, read-only; a method or encoder
    #: revision no setting of this taskspace builds), when there is nothing to compute or ``solves`` was not given
    indexed_by: str | None = None
    #: why the space's calibration map is fitted again by :attr:`indexed_by`'s next pass, every model solved once: a map
    #: an older taskspace fitted otherwise than this one fits it (:func:`indexer.pipeline.calibration_refit`: e.g. one
    #: stored before the benchmarks' links, whose intervals are too narrow for a model measured only on benchmarks no
    #: model links to the query's); None when it is not, or no pass solves the space. Before, check said clean
    refit: str | None = None
    #: False for a space the index holds and SQL does not (an interrupted or by-hand removal, a copied folder):
    #: `taskspace reindex` rebuilds only SQL's spaces, so it stays; `taskspace spaces drop NAME` removes it
    in_sql: bool = True
    #: where a pulled space came from when its pull stopped before it wrote the vector index: `taskspace pull` of it
    #: again finishes it (`taskspace reindex` keeps a read-only space's prompts collection, which SQL cannot rebuild)
    pull_again: str | None = None
    #: the vector width the space's encoder makes (its method's layout over the encoder's own dimension) when the
    #: space's is another: built from another encoder's vectors in this encoder's embedding cache (a file copied or
    #: renamed, before `taskspace index` skipped such files), so every search of a new prompt fails on it; None when
    #: they agree or the encoder's dimension is not known here (not the configured encoder's space)
    foreign_dim: int | None = None
    #: the space's vector width, as SQL records it (None: a space SQL does not hold)
    dim: int | None = None
    #: the command that builds the space again with the encoder's own vectors (None: none does, or one has: then
    #: `taskspace spaces drop` of this one is what is left)
    rebuild: str | None = None

    @property
    def clean(self) -> bool:
        return not (any(self.missing.values()) or any(self.stale.values()) or any(self.extra.values()) or self.problems
                    or self.unsolved or self.resultless or self.refit or self.foreign_dim is not None
                    or (self.unindexed and self.indexed_by is not None))

    def counts(self) -> dict:
        return {k: {kind: len(v) for kind, v in getattr(self, k).items() if v} for k in ("missing", "stale", "extra")}

    def as_dict(self, limit: int = 20) -> dict:
        """JSON-able summary: counts and up to ``limit`` keys per (category, kind)."""
        return {"space": self.space, "clean": self.clean, "counts": self.counts(), "problems": self.problems,
                "orphans": self.orphans, "uncomputed": self.uncomputed[:limit],
                "unindexed": self.unindexed[:limit], "unsolved": self.unsolved[:limit],
                "n_unsolved": len(self.unsolved),
                "unsolvable": [{"model": m, "why": w} for m, w in list(self.unsolvable.items())[:limit]],
                "n_unsolvable": len(self.unsolvable), "resultless": self.resultless[:limit],
                "n_resultless": len(self.resultless), "unpushed": self.unpushed[:limit],
                "indexed_by": self.indexed_by, "refit": self.refit, "in_sql": self.in_sql,
                "pull_again": self.pull_again, "dim": self.dim, "foreign_dim": self.foreign_dim, "rebuild": self.rebuild,
                **{k: {kind: v[:limit] for kind, v in getattr(self, k).items() if v}
                   for k in ("missing", "stale", "extra")}}


#: check compares stored vectors with SQL's through their inner products with these many fixed random probes
PROBES = 2


def _compare(drift: Drift, kind: str, expected: dict[str, str], vectors: VectorStore, name: str,
             matrix: tuple[dict[str, int], np.ndarray] | None = None) -> None:
    """Missing, extra and stale points of one collection: payload digests (``expected``: key -> digest) compared
    exactly (only ``key`` and ``digest`` are read); stored vectors (``matrix``: key -> row of SQL's float32 vectors)
    through :meth:`VectorStore.scores` with :data:`PROBES` random probe vectors: a stored vector is stale when a
    probe's score differs from SQL's vector's by more than float32 rounding can explain (the error bound of a
    float32 dot product of this length), so reading 32k stored vectors back into Python is never needed."""
    seen = set()
    stale, extra, same = [], [], []
    ids: dict[str, str] = {}  # key -> point id, as the scan gives it
    for hit in vectors.scan(name, kind, fields=["digest"], missing_ok=True):
        seen.add(hit.key)
        ids[hit.key] = hit.id
        want = expected.get(hit.key)
        if want is None:
            extra.append(hit.key)
        elif hit.payload.get("digest") != want:
            stale.append(hit.key)
        elif matrix is not None:
            same.append(hit.key)
    if same:
        rows_of, M = matrix
        idx = np.fromiter((rows_of[k] for k in same), dtype=np.int64, count=len(same))
        probes = np.random.default_rng(0).normal(size=(PROBES, M.shape[1])).astype(np.float32)
        try:
            got = vectors.scores(name, kind, probes)
        except DimensionError:  # the index holds vectors of another dimension (a problem of the drift): all stale
            got = [{} for _ in probes]
        P = probes.astype(np.float64)
        want, bound = np.empty((len(same), PROBES)), np.empty((len(same), PROBES))
        for lo in range(0, len(idx), 4096):  # float64 a slice at a time (32k x 774 float64 would be 200 MB)
            E = M[idx[lo:lo + 4096]].astype(np.float64)
            want[lo:lo + 4096], bound[lo:lo + 4096] = E @ P.T, np.abs(E) @ np.abs(P).T
        tol = (M.shape[1] + 2) * 2.0 ** -24 * bound  # |float32 dot - exact| <= (n+1) u sum|e_k p_k| (+ rounding)
        pids = [ids[k] for k in same]
        have = np.array([[g.get(pid, np.nan) for pid in pids] for g in got]).T.reshape(len(same), len(got))
        bad = ~(np.abs(have - want) <= tol)  # NaN (a point the query did not return) counts as stale
        stale.extend(k for k, b in zip(same, bad.any(axis=1)) if b)
    drift.missing[kind] = sorted(set(expected) - seen)
    drift.stale[kind] = sorted(stale)
    drift.extra[kind] = sorted(extra)


def _expected_models(sql, rec) -> tuple[dict[str, str], tuple[dict[str, int], np.ndarray]]:
    """(key -> payload digest, (key -> row, float32 vectors)) of every point the models collection should hold: the
    digests stored with the vectors (``model_vectors.point_digest``, kept by every push and rebuild and forgotten by
    every write of their inputs), the unknown ones computed from SQL as a rebuild would (only those models' rows are
    read); the vectors read alone."""
    if not hasattr(sql, "point_digests"):
        pts = list(_model_points(sql, rec))
        return _expected(pts)
    stored = sql.point_digests(rec.id)
    unknown = sorted(k for k, d in stored.items() if d is None)
    if unknown:
        stored.update({p.key: p.payload["digest"] for p in _model_points(sql, rec, unknown)})
    keys, E = sql.model_vector_matrix(rec.id)
    return {k: stored[k] for k in keys}, ({k: i for i, k in enumerate(keys)}, E)


def _expected(points) -> tuple[dict[str, str], tuple[dict[str, int], np.ndarray]]:
    digests = {p.key: p.payload["digest"] for p in points}
    rows = {p.key: i for i, p in enumerate(points)}
    dim = len(points[0].vector) if points else 0
    M = np.stack([np.asarray(p.vector, np.float32) for p in points]) if points else np.zeros((0, dim), np.float32)
    return digests, (rows, M)


def _solvable(sql, models: list[str], chunk: int = 256) -> tuple[list[str], dict[str, str]]:
    """(those of ``models`` an indexing pass's solver can solve, those it refuses -> why), by the solver's own rule
    (:func:`indexer.solver.inputs.refusals`: at least one observed outcome, every one in [0, 1]; a pass reports a
    model it refuses as an item error and leaves it unsolved, so counting it would keep check dirty after every
    pass). Their outcomes are read ``chunk`` models at a time."""
    from .solver import inputs  # (the rule is read from its module at each call: one rule, wherever it changes)

    out, refused = [], {}
    for lo in range(0, len(models), chunk):
        om = sql.load_outcomes(models=models[lo:lo + chunk])
        S = np.asarray(om.scores)
        why = inputs.refusals(S)
        out.extend(m for i, m in enumerate(om.models) if i not in why)
        for i, c in why.items():
            refused[om.models[i]] = ("no observed outcome" if c is None else
                                     f"outcome {float(S[i, c]):g} on benchmark {om.benchmarks[c]} is outside [0, 1]")
    return sorted(out), dict(sorted(refused.items()))


def _plan_of_a_pass(sql, rec, drift: Drift) -> None:
    """In the space an indexing pass solves, as the pass decides (:func:`indexer.pipeline.solve_plan`):
    :attr:`Drift.unsolved`, its stale models (:meth:`Store.stale_models`) less those its solver refuses;
    :attr:`Drift.unsolvable`, those it refuses (a model it refuses has no vector solved from its outcomes, so it is
    among the stale ones); :attr:`Drift.by_pass`, the unsolved ones, or every model with outcomes but the refused ones
    when the pass solves them all (its prior or calibration map fitted now; their keys are read only then)."""
    from .pipeline import solve_plan

    plan = solve_plan(sql, rec)
    drift.unsolved, drift.unsolvable = _solvable(sql, plan.stale) if plan.stale else ([], {})
    if plan.solves_all:  # every model is re-solved and pushed; those refused are among the stale ones
        drift.by_pass = {m for m in plan.models if m not in drift.unsolvable}
    else:
        drift.by_pass = set(drift.unsolved)
    # the vectors of models left without outcomes: the pass deletes them and their points (Indexer._drop_orphan_vectors)
    drift.resultless = sql.orphan_model_vectors(rec.id) if hasattr(sql, "orphan_model_vectors") else []
    drift.by_pass |= set(drift.resultless)


def _unpushed(sql, vectors: VectorStore, rec, drift: Drift) -> list[str]:
    """:attr:`Drift.unpushed` of the space ``rec``: its missing or stale models that
    :meth:`~indexer.store.sql.Store.unpushed_models` lists (read only when there are some) and no pass re-solves
    (:attr:`Drift.by_pass`), when its models collection exists (a pass pushes into that one; it does not create
    another space's). Before, check advised `taskspace reindex` for them, though `taskspace index` alone pushes them."""
    drifted = set(drift.missing.get("models", [])) | set(drift.stale.get("models", []))
    if not drifted or not hasattr(sql, "unpushed_models") or vectors.alias_target(space_name(rec), "models") is None:
        return []
    return sorted(drifted.intersection(sql.unpushed_models(rec.id)) - drift.by_pass)


def _indexed_by(rec, solves) -> str | None:
    """:attr:`Drift.indexed_by` of the space ``rec`` (not a pulled read-only one; ``solves``: the configured space's
    spec). Before, check advised `taskspace index` for every space's benchmark vectors, though its pass computes the
    configured space's alone: in another space the advice came back after every pass."""
    from .spaces import update_command

    return "taskspace index" if solves.matches(rec) else update_command(rec)


def _foreign_width(sql, rec, solves, encoder_dim: int | None) -> tuple[int | None, str | None]:
    """(:attr:`Drift.foreign_dim`, :attr:`Drift.rebuild`) of the space ``rec``: the width its encoder's own vectors
    give under its method (``encoder_dim``: the configured encoder's dimension, :attr:`Encoder.declared_dim`, its
    spaces alone compared) when the space's is another, and the pass that builds the space with that width unless one
    of the same settings has it already."""
    from .space import SpaceSpec
    from .spaces import update_command

    if solves is None or encoder_dim is None or rec.encoder != solves.encoder:
        return None, None
    want = represent.index_dim(encoder_dim, rec.params or {})
    if int(rec.dim) == want:
        return None, None
    spec = SpaceSpec.of(rec)
    built = any(s.id != rec.id and int(s.dim) == want and spec.matches(s) for s in sql.list_spaces())
    return want, None if built else update_command(rec)


def _configured_encoder_dim(solves) -> int | None:
    """The configured encoder's own dimension (:attr:`Encoder.declared_dim`) when ``solves`` names it (it loaded)."""
    if solves is None or solves.encoder is None:
        return None
    from .encoder import get_encoder
    from .errors import EncoderError

    try:
        return get_encoder().declared_dim
    except EncoderError:
        return None


def check(sql, vectors: VectorStore, space=None, *, solves=None) -> list[Drift]:
    """Compare every space's index with SQL (see the module docstring); ``space`` (as in :func:`reindex`)
    checks only that one and skips index spaces unknown to SQL. ``solves``: the spec of the space an indexing pass
    solves (:func:`indexer.spaces.configured_spec`); its models with outcomes but no vector solved from them, that a
    pass can solve, are :attr:`Drift.unsolved` (None: not looked for)."""
    out = []
    known = set()
    prompts = benchmarks = None  # SQL's, read once for every space
    encoder_dim = _configured_encoder_dim(solves)
    gone = vectors.folder_missing()  # the embedded folder removed (a store opened without creating it)
    for rec in resolve_spaces(sql, space):
        name = space_name(rec)
        known.add(space_slug(name))
        drift = Drift(name, dim=int(rec.dim))
        drift.foreign_dim, drift.rebuild = _foreign_width(sql, rec, solves, encoder_dim)
        broken = set()
        for kind in KINDS:
            why = vectors.unreadable(name, kind)
            if why is None and vectors.alias_target(name, kind) is None:
                # the other embedded engine's files (TASKSPACE_QDRANT_ENGINE changed): named, as a search names them;
                # before, every point was listed as missing (local mode reading Edge's files) with no word of why
                why = vectors.other_engines_index(name, kind)
            if why is not None:  # its every expected point counts as missing; a rebuild replaces it
                broken.add(kind)
                drift.problems.append(f"{kind} index cannot be read: {why}")
                continue
            have = vectors.dim(name, kind)
            if have is not None and have != rec.dim:
                drift.problems.append(f"{kind} index holds {have}-dim vectors, the space has {rec.dim}")

        def compare(kind, expected, matrix=None):
            if kind not in broken:
                try:
                    return _compare(drift, kind, expected, vectors, name, matrix)
                except BusyError:
                    raise
                except StoreError as exc:  # its files damaged: the engine cannot scan or search it
                    drift.problems.append(f"{kind} index cannot be read: {exc}")
            drift.missing[kind], drift.stale[kind], drift.extra[kind] = sorted(expected), [], []

        compare("models", *_expected_models(sql, rec))
        if benchmarks is None:
            benchmarks = sql.list_benchmarks()
        saved = sql.load_benchmark_vectors(rec.id)
        records = {b.name: b for b in benchmarks}
        compare("benchmarks", *_expected([_benchmark_point(bv, records.get(bv.benchmark)) for bv in saved]))
        if drift.extra.get("benchmarks"):
            with_prompts = {b.name for b in benchmarks if b.n_prompts}
            drift.uncomputed = [b for b in drift.extra["benchmarks"] if b in with_prompts]
        if _pulled_read_only(sql, rec):  # a pulled space's prompts come from its files, not from SQL
            origin = sql.unfinished_pull(rec.id) if hasattr(sql, "unfinished_pull") else None
            if origin is not None:  # before: "clean" once models and benchmarks were rebuilt, whatever prompts held
                drift.pull_again = origin
                drift.problems.append(f"the pull of {origin} stopped before it wrote the vector index: its prompts "
                                      "collection (from the pulled files; SQL cannot rebuild it) may hold another "
                                      f"pull's rows or none; run `taskspace pull {origin}` again")
        else:
            # the benchmarks whose vector an indexing pass computes now (as Indexer._benchmark_vectors decides)
            n_saved = {bv.benchmark: bv.n_prompts for bv in saved}
            drift.unindexed = sorted(b.name for b in benchmarks if b.n_prompts and n_saved.get(b.name) != b.n_prompts)
            by = None if solves is None else _indexed_by(rec, solves)  # the pass that solves it, if a setting makes one
            if by is not None and hasattr(sql, "stale_models"):  # the configured space's, or another's own pass
                _plan_of_a_pass(sql, rec, drift)
            if by is not None:  # (its pass refits its map)
                from .pipeline import calibration_refit

                drift.refit = calibration_refit(sql, rec) or None
            if drift.unindexed or drift.uncomputed or drift.refit or drift.unsolved or drift.resultless:
                drift.indexed_by = by
            if prompts is None:
                prompts = _prompts(sql)
            compare("prompts", {h: _prompt_payload(h, b, t, rec.encoder)["digest"] for h, (b, t) in prompts.items()})
        if gone is not None and any(drift.missing.values()):  # why every point is missing (a space expecting none
            # is clean); before, check made an empty folder there and said nothing of it
            drift.problems.insert(0, f"vector index folder {gone} does not exist: every point is missing")
        if "models" not in broken:
            drift.unpushed = _unpushed(sql, vectors, rec, drift)
        live = {vectors.alias_target(name, k) for k in KINDS}
        drift.orphans = [c for c in vectors.physical_collections(name) if c not in live]
        out.append(drift)
    for slug in vectors.spaces() if space is None else []:
        if slug not in known:
            drift = Drift(slug, problems=[f"index space {slug} has no embedding space in SQL (`taskspace reindex` "
                                          "leaves it)"], in_sql=False)
            for kind in KINDS:
                drift.extra[kind] = sorted(h.key for h in vectors.scan(slug, kind, missing_ok=True))
            out.append(drift)
    return out


def configured_unbuilt(sql, spec) -> dict | None:
    """The configured space (``spec``: the one `taskspace index` builds, :func:`indexer.spaces.configured_spec`) when
    SQL holds none that it matches and holds results to build it from: ``{"settings": its settings, "searched": the
    space searches without a space take meanwhile (None: there is none, and every search fails), "older_method": the
    method of that space when no setting of this taskspace builds it (`hyperplane`, an older taskspace's; else None),
    "command": the command that builds it}``. None when it is built, when SQL holds no results (an empty home; a home of
    pulled spaces alone, which `taskspace index` has nothing to build from), when every space is a pulled one, or when
    the configured encoder cannot be loaded (`taskspace index` says so). Drift of the home (:attr:`CheckReport.clean`):
    before, a home whose spaces an older taskspace's method built, or one with results ingested and no space at all,
    checked clean; and it was computed in the CLI alone (a Python caller of :func:`check` got no word of it)."""
    from .spaces import default_space, setting_value, update_command

    spaces = sql.list_spaces()
    if spec.encoder is None or any(spec.matches(s) for s in spaces) or not sql.has_outcomes():
        return None
    if spaces and all(sql.space_origin(s.id) is not None for s in spaces):  # pulled alone: their home's own work
        return None
    settings = f"encoder {spec.encoder}, method {spec.method}, lambda {setting_value(spec.lam)}, eps {setting_value(spec.eps)}"
    searched = default_space(spaces, spec)
    return {"settings": settings, "searched": None if searched is None else space_name(searched),
            "older_method": (searched.method if searched is not None and update_command(searched) is None
                             and sql.space_origin(searched.id) is None else None),
            "command": "taskspace index"}


def running_pass(sql):
    """The indexing run in progress now, or None: the newest run is an ``index`` run recorded ``running`` (on SQLite,
    whose lock is local, only while its process lives; on PostgreSQL while a session holds the lock: a killed one
    stays ``running`` until the next pass, :meth:`~indexer.store.sql.Store.run_left_running`)."""
    recs = sql.list_runs(limit=1)
    run = recs[0] if recs and recs[0].kind == "index" and recs[0].status == "running" else None
    return None if run is None or sql.run_left_running(run) else run


def beyond_a_pass(d: Drift, advised) -> bool:
    """True when a space's drift is more than the indexing passes advised for it (``advised``: their commands, e.g.
    ``taskspace index``) repair, so `taskspace reindex` is needed too: with benchmarks whose vectors the pass that
    solves the space computes (``Drift.unindexed``, results ingested since the last pass; ``Drift.uncomputed`` among
    them; that pass is ``Drift.indexed_by``) it rebuilds the benchmarks and prompts collections, and it re-solves and
    pushes the models of ``Drift.by_pass`` (the unsolved ones, or every one it solves when it solves them all), and
    every pass pushes the models of ``Drift.unpushed`` (their points waiting for a push), so only the other models'
    drift and the problems are left to `taskspace reindex`. Before, a model whose results were ingested under a new
    name (its point's aliases stale) added "then run `taskspace reindex`", though the pass left check clean; and
    another space's benchmarks and prompts drift was discounted, though `taskspace index` does not repair it."""
    missing, stale, extra = dict(d.missing), dict(d.stale), dict(d.extra)
    # a benchmark gone with a dropped source (extra, none missing): the pass that re-solves or removes its models
    # rebuilds the benchmarks and prompts collections (Indexer's index stage: their counts differ)
    gone = bool(d.extra.get("benchmarks")) and not d.missing.get("benchmarks") and bool(d.by_pass)
    if (d.unindexed or d.uncomputed or gone) and d.indexed_by in advised:
        for kinds in (missing, stale, extra):
            kinds.pop("benchmarks", None)
            kinds.pop("prompts", None)
    # by_pass: by the pass that solves the space (the configured one's: `taskspace index`); unpushed: every pass
    # pushes them
    repaired = ((d.by_pass if (d.indexed_by or "taskspace index") in advised else set()) |
                (set(d.unpushed) if advised else set()))
    if repaired:
        for kinds in (missing, stale, extra):
            kinds["models"] = [m for m in kinds.get("models", []) if m not in repaired]
    return bool(d.problems or any(missing.values()) or any(stale.values()) or any(extra.values()))


@dataclass
class CheckReport(ToDict):
    """What `taskspace check` reports (:func:`check_report`): each space's :class:`Drift` (:func:`check`), the
    configured space when it is not built (:func:`configured_unbuilt`; None when it is, or when a ``space`` alone was
    checked) and, when the home is not clean, the indexing run in progress (:func:`running_pass`; None: none), whose
    work in progress the drift may be (then `taskspace reindex` would make that pass fail: check names the pass
    instead of advising it)."""

    drifts: list[Drift]
    configured_unbuilt: dict | None = None
    running: object | None = None

    @property
    def clean(self) -> bool:
        """True when every space is clean and the configured space is built (`taskspace check` exits 0)."""
        return all(d.clean for d in self.drifts) and self.configured_unbuilt is None

    def as_dict(self) -> dict:
        """What `taskspace check --json` prints: ``clean``, each space's :meth:`Drift.as_dict` and
        ``configured_unbuilt``."""
        return {"clean": self.clean, "spaces": [d.as_dict() for d in self.drifts],
                "configured_unbuilt": self.configured_unbuilt}


def check_report(sql, vectors: VectorStore, space=None, *, solves=None) -> CheckReport:
    """:func:`check` of every space (or of ``space`` alone) and, without ``space``, :func:`configured_unbuilt`: the
    verdict `taskspace check` prints (:attr:`CheckReport.clean`: its exit 0). ``solves``: the spec of the space an
    indexing pass solves (default: the configured one, :func:`indexer.spaces.configured_spec` ``(lenient=True)``)."""
    if solves is None:
        from .spaces import configured_spec

        solves = configured_spec(lenient=True)
    drifts = check(sql, vectors, space, solves=solves)
    report = CheckReport(drifts, None if space is not None else configured_unbuilt(sql, solves))
    if not report.clean:
        report.running = running_pass(sql)
    return report
