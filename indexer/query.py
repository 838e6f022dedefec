"""Find models for a task: one or more example prompts (averaged) or a benchmark name -> one query vector ->
inner-product search over the models collection of an embedding space, with payload filters.

A model's score is the inner product of its stored vector with the query's lifted row
(:func:`indexer.represent.query_rows`: ``[e_i, c_i] . [q, 1]`` with auto-mean and auto,
``[e_i, f_i, c_i] . [q, covariates(prompt), 1]`` with auto-text and auto-mc, whose query without answer options
takes the options of the nearest indexed questions, :mod:`indexer.represent`): its predicted success (in [-1, 1] units of
the outcome scale) on the prompt, or, for a benchmark or several prompts, its mean predicted success over them
(the query is the mean of their lifted rows; linearity).

Prompts are embedded with the space's own encoder, loaded once per process (:func:`indexer.space.space_encoder`,
an ``EncoderError`` when the installed encoder is not the one the space was built with). With several spaces in
SQL the search uses the configured one (encoder, ``TASKSPACE_METHOD``, lambda, eps), else the newest of the
configured encoder, else the newest.
"""

from __future__ import annotations

import atexit
import threading
from dataclasses import dataclass

import numpy as np

from .errors import InputError, NotFoundError


@dataclass
class Match:
    """One ranked model: its raw ``score`` (the inner product Qdrant ranks by), the calibrated ``probability`` of
    success and its interval ``low``-``high`` (:mod:`indexer.posterior`; NaN where the model has no stored
    posterior), the score's posterior ``variance``, and the model's index payload."""

    model: str
    score: float
    payload: dict
    probability: float = float("nan")
    low: float = float("nan")
    high: float = float("nan")
    variance: float = float("nan")

    def as_dict(self) -> dict:
        keep = ("license", "num_parameters", "pipeline_tag", "gated", "downloads", "n_prompts", "accuracy", "benchmarks")
        r = lambda x: None if x is None or not np.isfinite(x) else round(float(x), 6)  # noqa: E731
        return {"model": self.model, "score": round(self.score, 6), "probability": r(self.probability),
                "interval": [r(self.low), r(self.high)], **{k: self.payload.get(k) for k in keep}}


#: RANKS: ``probability`` (the calibrated probability: Qdrant's own order) or ``lcb`` (the lower end of the
#: probability's interval: re-ranks a candidate set, grown until the top k are settled)
RANKS = ("probability", "lcb")
_PATTERNS: dict[tuple[str, str], object] = {}  # (space key, pattern key) -> PatternPosterior, per process


def predictor(store, space):
    """The :class:`~indexer.posterior.Predictor` of a space: its stored calibration, and its coverage patterns'
    posterior factors loaded on demand and kept for the process (a pattern's factors are fixed by the space and
    the prompt set its key names)."""
    from .posterior import Predictor
    from .space import SpaceSpec

    skey = SpaceSpec.of(space).key

    def load(keys):
        want = [k for k in keys if (skey, k) not in _PATTERNS]
        if want:
            for k, post in store.load_patterns(space.id, want).items():
                _PATTERNS[(skey, k)] = post
        return {k: _PATTERNS[(skey, k)] for k in keys if (skey, k) in _PATTERNS}

    level = None
    from . import represent

    if represent.level_set(SpaceSpec.of(space).params):  # methods *-level: the posterior is of the mapped rows
        rec = store.get_space_level(space.id)
        level = represent.Level.from_array(rec.vector) if rec is not None else None
    return Predictor(space, store.get_space_calibration(space.id), load, level=level)


def _matches(hits, pred, q: np.ndarray) -> list[Match]:
    """The hits with their probability, interval and variance (:class:`Match`)."""
    if not hits:
        return []
    scores = np.array([h.score for h in hits], dtype=np.float64)
    payloads = [dict(h.payload) for h in hits]
    var = pred.variance(payloads, np.asarray(q, dtype=np.float64))
    prob = pred.probability(scores)
    low, high = pred.interval(scores, var)
    return [Match(h.key, float(s), p, float(pr), float(lo), float(hi), float(v))
            for h, s, p, pr, lo, hi, v in zip(hits, scores, payloads, prob, low, high, var)]


def _space(store, space=None):
    from .sync import resolve_spaces

    spaces = resolve_spaces(store, space)
    if not spaces:
        raise NotFoundError("the index is empty: run `taskspace index` first")
    if len(spaces) > 1:
        from .config import get_settings
        from .encoder import get_encoder
        from .space import configured

        settings = get_settings()
        # the space the configured method builds (TASKSPACE_METHOD=auto after auto-text: the auto space)
        spec = configured(settings, encoder=get_encoder(settings.encoder).id)
        mine = [s for s in spaces if s.encoder == spec.encoder]
        spaces = [s for s in mine if spec.matches(s)][-1:] or mine[-1:] or spaces[-1:]
    return spaces[0]


def query_vector(store, vectors, space, *, prompts: list[str] | None = None, benchmark: str | None = None) -> np.ndarray:
    """The (dim,) query vector of example prompts (mean of their lifted vectors) or of a benchmark (its vector)."""
    from . import represent
    from .space import space_encoder, space_name

    if bool(prompts) == bool(benchmark):
        raise InputError("give prompts or a benchmark name (not both)")
    if benchmark:
        hit = vectors.get(space_name(space), "benchmarks", [benchmark], with_vectors=True).get(benchmark)
        if hit is None:
            raise NotFoundError(f"benchmark {benchmark!r} is not in the index; `taskspace runs` / `taskspace index`")
        return np.asarray(hit.vector, dtype=np.float32)
    enc = space_encoder(space)  # the process's shared instance: one model load for any number of queries
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
    from .space import space_name

    out = np.zeros_like(X)
    bare = np.flatnonzero(represent.unknown(X))
    if not bare.size:
        return out
    width, e = X.shape[1], represent.question_width(X.shape[1])
    probes = np.zeros((bare.size, int(space.dim)), dtype=np.float32)
    probes[:, :e] = X[bare, :e]
    name = space_name(space)
    hits = (vectors.search_many(name, "prompts", probes, limit=represent.NEIGHBOURS, with_vectors=True, payload=False)
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
                filters: dict | None = None, space=None, store=None, vectors=None,
                rank: str = "probability") -> list[Match]:
    """Rank the indexed models for prompts or a benchmark. ``filters`` as in :meth:`VectorStore.search`.
    ``rank``: one of :data:`RANKS`. Without ``store``/``vectors`` the configured stores are opened once per
    process and reused (:func:`close_cached` closes them)."""
    from .space import space_name

    if rank not in RANKS:
        raise InputError(f"unknown ranking {rank!r}; use one of {', '.join(RANKS)}")
    if store is None or vectors is None:
        shared_store, shared_vectors = _shared_stores()
        store = store or shared_store
        vectors = vectors or shared_vectors
    sp = _space(store, space)
    q = query_vector(store, vectors, sp, prompts=prompts, benchmark=benchmark)
    pred = predictor(store, sp)
    name = space_name(sp)
    if rank == "probability":  # the calibration is increasing in the score: Qdrant's order is the order
        return _matches(vectors.search(name, "models", q, filters=filters, limit=top), pred, q)
    return [m for m, _ in lcb_ranked(vectors, name, q, pred, filters=filters, limit=top)]


def lcb_ranked(vectors, name: str, q: np.ndarray, pred, *, filters, limit: int, fetch: int | None = None,
               shift=None) -> list[tuple[Match, float]]:
    """The top ``limit`` models by the lower end of their score's interval, minus ``shift(match)`` when given, with
    that value: candidates fetched from Qdrant and re-ranked, more fetched until no unfetched model can enter the
    top (:func:`~indexer.posterior.lcb_candidates_exact`). ``fetch``: fetch exactly that many once (every candidate,
    for a ``shift`` the bound does not cover)."""
    from .posterior import Z_INTERVAL, lcb_candidates_exact

    exhaustive = fetch is not None
    fetch = fetch if exhaustive else max(4 * limit, 50)
    while True:
        hits = vectors.search(name, "models", q, filters=filters, limit=fetch + 1)
        more = len(hits) > fetch
        found = _matches(hits[:fetch], pred, q)
        lower = np.array([m.score - Z_INTERVAL * np.sqrt(m.variance) if np.isfinite(m.variance) else m.score
                          for m in found])
        if shift is not None:
            lower = lower - np.array([shift(m) for m in found])
        if exhaustive or not more or lcb_candidates_exact(lower, lower, limit, float(hits[fetch].score)):
            order = np.argsort(-lower, kind="stable")[:limit]
            return [(found[i], float(lower[i])) for i in order]
        fetch *= 4
