"""Find models for a task: one or more example prompts (averaged) or a benchmark name -> one query vector ->
inner-product search over the models collection of an embedding space, with payload filters.

A model's score is the inner product of its stored vector with the query's lifted row
(:func:`indexer.represent.query_rows`: ``[e_i, c_i] . [q, 1]`` with auto-mean and auto,
``[e_i, f_i, c_i] . [q, covariates(prompt), 1]`` with auto-text and auto-mc, whose query without answer options
takes the options of the nearest indexed questions, :mod:`indexer.represent`): its predicted success (in [-1, 1] units of
the outcome scale) on the prompt, or, for a benchmark or several prompts, its mean predicted success over them
(the query is the mean of their lifted rows; linearity).
"""

from __future__ import annotations

import atexit
import threading
from dataclasses import dataclass

import numpy as np

from .errors import InputError, NotFoundError


@dataclass
class Match:
    model: str
    score: float
    payload: dict

    def as_dict(self) -> dict:
        keep = ("license", "num_parameters", "pipeline_tag", "gated", "downloads", "n_prompts", "accuracy", "benchmarks")
        return {"model": self.model, "score": round(self.score, 6), **{k: self.payload.get(k) for k in keep}}


def _space(store, space=None):
    from .sync import resolve_spaces

    spaces = resolve_spaces(store, space)
    if not spaces:
        raise NotFoundError("the index is empty: run `taskspace index` first")
    if len(spaces) > 1:
        from .config import get_settings
        from .encoder import get_encoder
        from .pipeline import make_solver

        settings = get_settings()
        enc_id = get_encoder(settings.encoder).id
        mine = [s for s in spaces if s.encoder == enc_id]
        # the space the configured method builds (TASKSPACE_METHOD=auto after auto-text: the auto space)
        _, method, params = make_solver(settings)
        configured = [s for s in mine if s.method == method and (s.params or {}) == params
                      and s.lam == settings.lam and s.eps == settings.eps]
        spaces = configured[-1:] or mine[-1:] or spaces[-1:]
    return spaces[0]


def query_vector(store, vectors, space, *, prompts: list[str] | None = None, benchmark: str | None = None) -> np.ndarray:
    """The (dim,) query vector of example prompts (mean of their lifted vectors) or of a benchmark (its vector)."""
    from . import represent
    from .sync import space_name

    if bool(prompts) == bool(benchmark):
        raise InputError("give prompts or a benchmark name (not both)")
    if benchmark:
        hit = vectors.get(space_name(space), "benchmarks", [benchmark], with_vectors=True).get(benchmark)
        if hit is None:
            raise NotFoundError(f"benchmark {benchmark!r} is not in the index; `taskspace runs` / `taskspace index`")
        return np.asarray(hit.vector, dtype=np.float32)
    from .encoder import Encoder

    enc_name = space.encoder.rsplit("@", 1)[0]
    enc = Encoder(enc_name)
    if enc.id != space.encoder:
        raise InputError(f"the space was built with {space.encoder} but the installed encoder is {enc.id}; "
                         "re-index with the installed encoder")
    X = represent.query_rows(prompts, enc.encode, space)
    if represent.is_split(space):  # a query without answer options takes those of the nearest indexed questions
        X = represent.fill_unknown(X, _neighbour_rows(store, vectors, space, X))
    X = represent.add_intercept(X, space)
    return X.mean(axis=0, dtype=np.float64).astype(np.float32)


def _neighbour_rows(store, vectors, space, X: np.ndarray) -> np.ndarray:
    """For the query rows of a split space whose options are unknown, the mean design row of the
    :data:`~indexer.represent.NEIGHBOURS` indexed prompts nearest by question: one search of the prompts collection
    per query with its question half (the other entries 0, so the score is the question cosine). Without prompt
    points (an index whose prompts collection was not built) the mean row of all indexed prompts, from the
    benchmark vectors."""
    from . import represent
    from .sync import space_name

    out = np.zeros_like(X)
    bare = np.flatnonzero(represent.unknown(X))
    if not bare.size:
        return out
    width, e = X.shape[1], represent.question_width(X.shape[1])
    probes = np.zeros((bare.size, int(space.dim)), dtype=np.float32)
    probes[:, :e] = X[bare, :e]
    name = space_name(space)
    hits = (vectors.search_many(name, "prompts", probes, limit=represent.NEIGHBOURS, with_vectors=True)
            if vectors.alias_target(name, "prompts") is not None else [[] for _ in bare])
    fallback = None
    for row, found in zip(bare, hits):
        if found:
            out[row] = np.mean([np.asarray(h.vector, dtype=np.float64)[:width] for h in found], axis=0)
        else:
            if fallback is None:
                fallback = represent.mean_row(store.load_benchmark_vectors(space.id), space)
            out[row] = fallback
    return out


_OPEN: dict = {}
_OPEN_LOCK = threading.Lock()


def _shared_stores():
    """The SQL store and the vector store of the current settings, opened on the first :func:`find_models` call
    that passes none and reused by the next ones (reopened when the settings change or the vector store was
    closed). The embedded vector folder is held by one store at a time: this one is marked
    :meth:`~indexer.store.vectors.VectorStore.share`, so another store of this process that opens the folder
    (e.g. an indexing pass) takes it over; a later call here reopens it. Closed at exit, or by
    :func:`close_cached`."""
    from .config import get_settings
    from .store.sql import open_store
    from .store.vectors import VectorStore

    s = get_settings()
    key = (s.database_url, s.qdrant_url, str(s.qdrant_path), s.qdrant_engine)
    with _OPEN_LOCK:
        got = _OPEN.get("stores")
        if got is not None and got[0] == key and not got[2].closed:
            return got[1], got[2]
        _close_locked()
        store = open_store()
        try:
            vectors = VectorStore.from_settings(s).share()
        except BaseException:
            store.close()
            raise
        if not _OPEN.get("atexit"):
            atexit.register(close_cached)
            _OPEN["atexit"] = True
        _OPEN["stores"] = (key, store, vectors)
        return store, vectors


def _close_locked() -> None:
    got = _OPEN.pop("stores", None)
    if got is not None:
        got[2].close()
        got[1].close()


def close_cached() -> None:
    """Close the stores :func:`find_models` keeps open (releases the embedded index folder)."""
    with _OPEN_LOCK:
        _close_locked()


def find_models(prompts: list[str] | None = None, *, benchmark: str | None = None, top: int = 10,
                filters: dict | None = None, space=None, store=None, vectors=None) -> list[Match]:
    """Rank the indexed models for prompts or a benchmark. ``filters`` as in :meth:`VectorStore.search`.
    Without ``store``/``vectors`` the configured stores are opened once per process and reused
    (:func:`close_cached` closes them)."""
    from .sync import space_name

    if store is None or vectors is None:
        shared_store, shared_vectors = _shared_stores()
        store = store or shared_store
        vectors = vectors or shared_vectors
    sp = _space(store, space)
    q = query_vector(store, vectors, sp, prompts=prompts, benchmark=benchmark)
    hits = vectors.search(space_name(sp), "models", q, filters=filters, limit=top)
    return [Match(h.key, float(h.score), dict(h.payload)) for h in hits]
