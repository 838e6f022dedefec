"""The parts of a search that :mod:`indexer.find` (the search itself, :func:`indexer.find_models`) and
:mod:`indexer.browse` share: the process's shared stores (:func:`close_cached`), which space a query uses, a space's
:class:`~indexer.posterior.Predictor`, :class:`Match` (one ranked model with its probability and interval), the
options fill from the nearest indexed questions and the exact lower-bound re-rank (:func:`lcb_ranked`).

:func:`find_models` and :func:`query_vector` here are thin wrappers over :mod:`indexer.find`, kept for code that
wants the ranked :class:`Match` list alone (no coverage, evidence or filter counts: no neighbourhood search and no
SQL read of outcomes; ``benchmarks/bench_scale.py`` times it) or the query vector: the same search, the same scores,
order and probabilities as :func:`indexer.find_models`.

One or more example prompts (averaged) or a benchmark name -> one query vector -> inner-product search over the
models collection of an embedding space, with payload filters.

A model's score is the inner product of its stored vector with the query's lifted row
(:func:`indexer.represent.query_rows`: ``[e_i, c_i] . [q, 1]`` with auto-mean and auto,
``[e_i, f_i, c_i] . [q, covariates(prompt), 1]`` with auto-text and auto-mc, whose query without answer options
takes the options of the nearest indexed questions, :mod:`indexer.represent`): its predicted success (in [-1, 1] units of
the outcome scale) on the prompt, or, for a benchmark or several prompts, its mean predicted success over them
(the query is the mean of their lifted rows; linearity).

Prompts are embedded with the space's own encoder, loaded once per process (:func:`indexer.space.space_encoder`,
an ``EncoderError`` when the installed encoder is not the one the space was built with). With several spaces in
SQL the search uses the configured one (encoder, ``TASKSPACE_METHOD``, lambda, eps), else the newest of the
configured encoder, else the newest (with a warning naming the configured encoder and the space searched). A space
taken by default that the configured method did not build (a home an older taskspace indexed with its default
method) is searched with a warning saying that ``taskspace index`` builds the configured one.
"""

from __future__ import annotations

import atexit
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError, NotFoundError
from .records import ToDict
from .sync import license_text


@dataclass
class Match(ToDict):
    """One ranked model: its raw ``score`` (its predicted score, the inner product of its vector with the query's
    index row), the calibrated ``probability`` of success and its interval ``low``-``high``
    (:mod:`indexer.posterior`; NaN where the model has no stored posterior), the score's posterior ``variance``,
    the model's index payload, and ``search_score``: the inner product Qdrant ranked by (the raw score, or on a
    space with levels that of the query folded by the level/deviation map, :meth:`Predictor.fold
    <indexer.posterior.Predictor.fold>`, whose order is the probabilities')."""

    model: str
    score: float
    payload: dict
    probability: float = float("nan")
    low: float = float("nan")
    high: float = float("nan")
    variance: float = float("nan")
    search_score: float = float("nan")

    def as_dict(self) -> dict:
        keep = ("license", "num_parameters", "pipeline_tag", "gated", "downloads", "n_prompts", "accuracy", "benchmarks")
        r = lambda x: None if x is None or not np.isfinite(x) else round(float(x), 6)  # noqa: E731
        return {"model": self.model, "score": round(self.score, 6), "probability": r(self.probability),
                "interval": None if r(self.low) is None or r(self.high) is None else [r(self.low), r(self.high)],
                **{k: self.payload.get(k) for k in keep}, "license": license_text(self.payload.get("license"))}


#: RANKS: ``probability`` (the calibrated probability: Qdrant's own order) or ``lcb`` (the lower end of the
#: probability's interval: re-ranks a candidate set, grown until the top k are settled)
RANKS = ("probability", "lcb")
#: (database, space id, space key, pattern key) -> PatternPosterior, per process. A pattern key is a digest of the
#: database's own prompt ids (indexer.pipeline._pattern_id), so two databases (two homes queried by one program)
#: can hold one key for different prompts: keyed by space key alone, the second home's intervals came from the
#: first home's factors
_PATTERNS: dict[tuple, object] = {}
_OBSERVED: dict[str, frozenset] = {}  # a pattern's observed prompt set by its digest, per process


def predictor(store, space, state: tuple | None = None):
    """The :class:`~indexer.posterior.Predictor` of a space: its stored calibration, and its coverage patterns'
    posterior factors loaded on demand and kept for the process (a pattern's factors are fixed by the space and
    the prompt set its key names in its database: kept per database, :data:`_PATTERNS`). ``state``: the space's ``(calibration, prior)`` as :func:`_space_state` just
    read them (not read again)."""
    from .posterior import Predictor
    from .space import SpaceSpec

    skey = (store_identity(store), space.id, SpaceSpec.of(space).key)

    def load(keys):
        want = [k for k in keys if (skey, k) not in _PATTERNS]
        if want:
            for k, post in store.load_patterns(space.id, want).items():
                _PATTERNS[(skey, k)] = post
        return {k: _PATTERNS[(skey, k)] for k in keys if (skey, k) in _PATTERNS}

    cal, stored = state if state is not None else (store.get_space_calibration(space.id), None)
    prior = None
    if cal is not None and cal.folded:  # the level/deviation map folds the prior's part of the query: u . row
        if state is None:
            stored = store.get_space_prior(space.id)
        prior = None if stored is None else stored.vector
    return Predictor(space, cal, load, prior)


def store_identity(store):
    """Which database ``store`` is, for what a process keeps per database: its URL, or for one in memory (or a store
    without a URL) the store object's id (its data is that store's alone)."""
    url = getattr(store, "url", None)
    return id(store) if url in (None, "sqlite://", "sqlite:///:memory:") else str(url)


def _matches(hits, pred, q: np.ndarray, at_row: dict[str, float] | None = None,
             shares: dict[str, float] | None = None, variance: dict[str, float] | None = None) -> list[Match]:
    """The hits with their probability, interval and variance (:class:`Match`). ``at_row``: key -> each hit's raw
    score at the row ``q`` when known (hits of a folded query fetched without their vectors); ``shares``: key -> each
    hit's coverage share (:func:`observed_shares`) when the search computed them, for the variance's region term
    (:meth:`~indexer.posterior.Predictor.variance`); ``variance``: key -> each hit's variance when the ranking
    computed it already (:func:`hit_variances`: ``lcb`` ranks by it), taken as it is."""
    if not hits:
        return []
    scores = np.array([h.score for h in hits], dtype=np.float64)
    payloads = [dict(h.payload) for h in hits]
    row = np.asarray(q, dtype=np.float64)
    var = (np.array([variance[h.key] for h in hits], dtype=np.float64) if variance is not None
           else hit_variances(hits, pred, q, shares, payloads))
    prob = pred.probability(scores)
    low, high = pred.interval(scores, var)
    raw = scores
    if at_row is not None:
        raw = np.array([at_row.get(h.key, np.nan) for h in hits])
    elif pred.folded:  # searched with the folded query (and the vectors): the raw score is the vector at the row
        raw = np.array([float(np.asarray(h.vector, dtype=np.float64) @ row) if h.vector is not None else np.nan
                        for h in hits])
    return [Match(h.key, float(r), p, float(pr), float(lo), float(hi), float(v), float(s))
            for h, r, s, p, pr, lo, hi, v in zip(hits, raw, scores, payloads, prob, low, high, var)]


def _ids_read(hits) -> dict[str, str]:
    """key -> point id of the hits whose search read their id (:meth:`~indexer.store.vectors.VectorStore.scores_of`'s
    ``memo``: their raw scores are read back by them, no id made again)."""
    return {h.key: h.id for h in hits if h.id}


def hit_variances(hits, pred, q: np.ndarray, shares: dict[str, float] | None = None,
                  payloads: list[dict] | None = None) -> np.ndarray:
    """(len(hits),) each hit's score variance at the row ``q`` (:meth:`~indexer.posterior.Predictor.variance`), as
    :func:`_matches` computes it (``shares``: key -> coverage share, for the region term), without the rest of a
    :class:`Match`: what ``lcb`` ranks every candidate by, where the probability, interval and whole payload are
    wanted for the page's models alone. It reads the payload fields :data:`VARIANCE_FIELDS` only."""
    if payloads is None:
        payloads = [dict(h.payload) for h in hits]
    return pred.variance(payloads, np.asarray(q, dtype=np.float64),
                         None if shares is None else np.array([shares.get(h.key, 1.0) for h in hits]))


#: the payload fields :meth:`~indexer.posterior.Predictor.variance` reads (a candidate fetched with these alone has
#: the variance its whole payload gives)
VARIANCE_FIELDS = ("pattern", "noise", "lam", "benchmarks")


def _space_state(store, space=None) -> tuple:
    """(the space a query uses (:func:`_space`), its ``(calibration, prior)`` for :func:`predictor`, or None when
    the store cannot give them with the spaces): one read of SQL (:meth:`space_states
    <indexer.store.sql.Store.space_states>`) instead of three."""
    states = getattr(store, "space_states", None)
    if states is None:
        return _space(store, space), None
    rows = states()
    rec = _space(store, space, [r for r, _, _ in rows])
    return rec, next(((cal, prior) for r, cal, prior in rows if r.id == rec.id), None)


#: (configured encoder, space id) pairs :func:`_space` has warned of in this process
_WARNED_ENCODER: set = set()


#: how the library says the index is empty (:func:`empty_index`; a server says its own advice in its place)
EMPTY = "the index is empty: run `taskspace index` first"


def refuse_missing_database(settings) -> None:
    """The :func:`empty_index` error, before anything is opened, when the configured SQLite file does not exist: a
    read-only call (a search, ``taskspace models``, :func:`indexer.find_models`) on a home never indexed (a typo in
    TASKSPACE_HOME, a folder without ``./.taskspace``). Before, opening the store created the home and an empty
    database in it, wherever the command ran. ``taskspace index``, ``serve`` and ``worker`` create it, as before."""
    from .store.sql import missing_sqlite_file

    gone = missing_sqlite_file(settings.database_url)
    if gone is not None:
        home = settings.home if gone.parent == settings.home else None  # else TASKSPACE_DATABASE_URL named it
        raise empty_index(None, missing=(settings.database_url, home))


def open_existing_store(settings=None):
    """The configured SQL store (:func:`indexer.store.sql.open_store`) for a call that only reads or removes (a query,
    ``taskspace runs``, :func:`indexer.ingest.stored_sources`): on a home never indexed, :func:`refuse_missing_database`'s
    error, and no home nor database is created."""
    from .store.sql import open_store

    if settings is None:
        from .config import get_settings

        settings = get_settings()
    refuse_missing_database(settings)
    return open_store()


def empty_index(store, space: str | None = None, missing: tuple | None = None) -> NotFoundError:
    """The error of a query on an empty index: no space (``space`` None), or the space ``space`` (its index name) holds
    no model (its sources dropped and a pass run); one message, naming the database it looked in (a search against
    another home than the one indexed, a typo in TASKSPACE_HOME, shows it) and how to index results."""
    url = getattr(store, "url", None)
    if isinstance(url, str):
        from .store.sql_migrate import safe_url

        url = safe_url(url)
    where = f"the database {url}" if isinstance(url, str) else "the database"
    what = "holds no indexed space" if space is None else f"holds no model in space {space}"
    if missing is not None:  # (refuse_missing_database: its URL, the home)
        where = f"the database {missing[0]}"
        what = (f"does not exist: nothing is indexed in TASKSPACE_HOME={missing[1]}" if missing[1] is not None else
                "does not exist (TASKSPACE_DATABASE_URL): nothing is indexed there")
        above = Path(missing[1]).parent if missing[1] is not None else None
        if above is not None and (above / "taskspace.db").is_file():  # TASKSPACE_HOME=HOME/qdrant: the home it meant
            what += (f", but the folder above it, {above}, is a taskspace home, holding taskspace.db: set "
                     f"TASKSPACE_HOME={above}")
    from .errors import CLI

    # a Python caller is named the library's pass too (README: run_index); no parenthesis in it, so that a server's
    # advice (indexer.serve.Service.advice) still replaces the whole of this
    library = ("; from Python, `indexer.pipeline.run_index` runs that pass, its list of `indexer.sourcelist.SourceSpec` "
               "the sources to add" if not CLI.get() else "")
    return NotFoundError(f"{EMPTY} ({where} {what}; `taskspace index --source SPEC` ingests results and indexes them, "
                         f"a plain `taskspace index` the sources `taskspace sources list` shows{library})")


def check_has_models(store, vectors, sp, name: str) -> None:
    """The :func:`empty_index` error when the index of space ``sp`` (index name ``name``) holds no model and SQL none
    either (a StoreError when SQL holds model vectors the index lost: :func:`indexer.find.check_not_drifted`). Before,
    a space whose models were all removed answered a search and `taskspace models` with "no model indexed yet" (exit 0,
    an empty list), while a home with no space was this error (exit 1): one empty index, two answers."""
    if vectors.count(name, "models", missing_ok=True) == 0:
        from .find import check_not_drifted

        check_not_drifted(store, sp, name, vectors)
        raise empty_index(store, name)


def _space(store, space=None, spaces: list | None = None):
    """The space a query uses (see the module docstring); ``spaces``: SQL's spaces as just read."""
    from .sync import resolve_spaces

    by_default = space is None
    spaces = resolve_spaces(store, space, spaces)
    if not spaces:
        # where it looked: a search against another home than the one indexed (a typo in TASKSPACE_HOME) said only to
        # run `taskspace index`, which would index into that home
        raise empty_index(store)
    # one space built here with another encoder than the configured one is said too (a home indexed under
    # TASKSPACE_ENCODER=all-mpnet-base-v2, then the setting changed back): before, its searches answered from it without
    # a word, while two such spaces were warned of. A pulled one is the publisher's choice (as for its method).
    if len(spaces) > 1 or by_default:
        from .spaces import configured_spec, default_space

        # the space the configured method builds (TASKSPACE_METHOD=auto after auto-text: the auto space)
        # lenient: a configured encoder that cannot be loaded here (a typo in TASKSPACE_ENCODER, a package not installed)
        # built none of the spaces, so the newest is searched with the warning below, as with one space (before: exit
        # 5 "cannot load encoder" for every search without --space, though no space needed that encoder)
        spec = configured_spec(lenient=True)
        mine = [s for s in spaces if s.encoder == spec.encoder]
        said = f"{spec.encoder} (TASKSPACE_ENCODER)" if spec.encoder else _configured_encoder()
        if not mine and (said, spaces[-1].id) not in _WARNED_ENCODER and (len(spaces) > 1 or _built_here(store, spaces[0])):
            # the configured encoder built none of them (TASKSPACE_ENCODER changed, or a typo): said once per process
            # (a server answers many queries), not silent
            import logging

            from .space import space_name

            _WARNED_ENCODER.add((said, spaces[-1].id))
            from .errors import CLI

            # the caller's words: the command's option, the library's parameter (before: `--space` to a Python caller)
            if len(spaces) > 1:
                logging.getLogger(__name__).warning(
                    "no indexed space was built with the configured encoder %s; searching the newest space, %s (%s); "
                    "%s picks another: %s", said, space_name(spaces[-1]), spaces[-1].encoder,
                    "--space NAME" if CLI.get() else "space=NAME", ", ".join(space_name(s) for s in spaces))
            else:
                # an encoder that cannot be loaded builds no space: `taskspace index` fails (exit 5) until the
                # setting is mended (before, it was advised as what builds the configured encoder's space)
                index = ("`taskspace index` builds the configured encoder's space beside it from the stored results"
                         if spec.encoder else "`taskspace index` fails until TASKSPACE_ENCODER names an encoder that "
                         "loads here (unset: all-MiniLM-L6-v2), then builds its space beside it from the stored results")
                logging.getLogger(__name__).warning(
                    "no indexed space was built with the configured encoder %s; searching the only space, %s (%s); "
                    "%s", said, space_name(spaces[-1]), spaces[-1].encoder, index)
        every, spaces = spaces, [default_space(spaces, spec)]
        if not mine:  # said above: the encoder differs, so the method's space cannot be here either
            return spaces[0]
    else:
        every = spaces
    if by_default:
        _warn_not_configured(store, spaces[0], every)
    _check_space_eps(store, spaces[0])
    return spaces[0]


def _check_space_eps(store, space) -> None:
    """A ConfigError when ``space``, built here, has an eps that drops every component of every model on the stored
    prompts (:func:`indexer.space.eps_problem`): its scores are the same for every task, so no search of it ranks by
    the task. Before, such a space (``TASKSPACE_EPS=1e9 taskspace index``) answered every search (its intervals 0%-100%)
    without a word. A pulled space is the publisher's (its prompts may not be here)."""
    eps = float(getattr(space, "eps", 0.0) or 0.0)
    if eps <= 0 or not _built_here(store, space):
        return
    from .errors import ConfigError
    from .space import SpaceSpec, eps_problem, space_name

    if (why := eps_problem(eps, store.prompt_count(), SpaceSpec.of(space).params)) is not None:
        name = space_name(space)
        raise ConfigError(f"space {name}: {why}: its answers cannot rank models for a task; build a space "
                          f"with TASKSPACE_EPS within that range (`TASKSPACE_EPS=0 taskspace index`), then drop this one "
                          f"(`taskspace spaces drop {name} --force`)")


def _built_here(store, space) -> bool:
    """Whether ``space`` was built by an indexing pass here, not pulled (a store without origins: built here)."""
    origin = getattr(store, "space_origin", None)
    return not callable(origin) or origin(space.id) is None


def _configured_encoder() -> str:
    """``TASKSPACE_ENCODER`` as set, for a warning about an encoder that cannot be loaded (so has no id)."""
    from .config import get_settings

    return f"{get_settings().encoder} (TASKSPACE_ENCODER), which cannot be loaded here"


#: (space key, configured method and settings) pairs :func:`_warn_not_configured` has warned of in this process
_WARNED_METHOD: set = set()


def _warn_not_configured(store, chosen, spaces: list) -> None:
    """A warning (once per process and space) when the space a query took by default is not the one the configured
    method (``TASKSPACE_METHOD``, lambda, eps) builds: a home indexed by an older taskspace, whose default method or its
    params have changed since, keeps its old space, which answered every search without a word (with the scores of the
    old method: before calibration was stored, its "probabilities" were ``(1 + score) / 2``), while ``taskspace
    index`` would build the configured one. Not for a pulled space (its method is the publisher's)."""
    from .config import get_settings
    from .space import SpaceSpec, configured, space_name

    spec, have = configured(get_settings()), SpaceSpec.of(chosen)
    if spec.same_method(chosen):
        return
    key = (have.key, repr((spec.lam, spec.eps, spec.method, dict(spec.params))))
    if key in _WARNED_METHOD:
        return
    _WARNED_METHOD.add(key)
    origin = getattr(store, "space_origin", None)
    if callable(origin) and origin(chosen.id) is not None:
        return
    import logging

    from .errors import arg
    from .spaces import setting_value

    name = space_name(chosen)
    others = [space_name(s) for s in spaces if s.id != chosen.id]
    # what differs, in the settings' words: a space of the configured method built under another TASKSPACE_LAMBDA
    # (or TASKSPACE_EPS) says which and both values; before, "with other settings (by an older taskspace, or under
    # another TASKSPACE_METHOD)", though the method was the configured one
    differs = [f"{what} {setting_value(got)} ({var} is {setting_value(want)} here)"
               for what, var, got, want in (("lambda", "TASKSPACE_LAMBDA", have.lam, spec.lam),
                                            ("eps", "TASKSPACE_EPS", have.eps, spec.eps)) if float(got) != float(want)]
    if have.method != spec.method:
        how = " (by an older taskspace, or under another TASKSPACE_METHOD)"
    elif dict(have.params) != dict(spec.params):
        how = " with other solver options (by an older taskspace)" + "".join(f", {d}" for d in differs)
    else:
        how = " with " + ", ".join(differs)
    logging.getLogger(__name__).warning(
        "searching space %s, built with method %s%s, not as "
        "this taskspace builds the configured method %s (TASKSPACE_METHOD), whose space is not indexed: `taskspace "
        "index` builds it from the stored results, and searches use it from then on; %s searches this "
        "one without this warning%s", name, have.method, how,
        spec.method, arg("space", name, quote=False), f" (other spaces: {', '.join(others)})" if others else "")


def query_vector(store, vectors, space, *, prompts: list[str] | None = None, benchmark: str | None = None) -> np.ndarray:
    """The (dim,) query vector of example prompts (mean of their lifted vectors) or of a benchmark (its vector): the
    one :func:`indexer.find_models` searches with (a thin wrapper over :mod:`indexer.find`)."""
    from .find import _prompts, _query_vector

    if bool(prompts) == bool(benchmark):
        raise InputError("give prompts or a benchmark name (not both)", item="query")
    return _query_vector(store, vectors, space, _prompts(prompts) if prompts else None, benchmark or None, None, {},
                         near=False)[0]


def prompts_indexed(store, vectors, space) -> bool:
    """Whether the space's prompts collection is there to search (the options fill, coverage and evidence): True
    when the index holds it; False for a space that legitimately has none (pulled read-only from a dataset published
    without prompt rows: SQL holds no prompt texts to build it from). A space whose prompts SQL holds but whose index
    lost that collection (its folder removed by hand, a damaged copy) is an
    :class:`~indexer.errors.IndexMissingError` (exit 3, HTTP 503) saying ``taskspace reindex`` rebuilds it, as a
    missing models or benchmarks collection is; before, the search answered as if the space had no prompts: a
    question without options filled from the mean of all prompts (another ranking) and every coverage "unknown"."""
    from .errors import IndexMissingError
    from .space import space_name

    name = space_name(space)
    if vectors.alias_target(name, "prompts") is not None:
        return True
    read_only = getattr(store, "is_read_only", None)
    if read_only is not None and read_only(space.id):
        return False
    raise IndexMissingError(vectors.missing(name, ["prompts"]))


def _neighbour_rows(store, vectors, space, X: np.ndarray) -> np.ndarray:
    """For the query rows of a split space whose options are unknown, the mean design row of the
    :data:`~indexer.represent.NEIGHBOURS` indexed prompts nearest by question: one search of the prompts collection
    per query with its question half (the other entries 0, so the score is the question cosine). Without prompt
    points (an empty prompts collection, or a pulled space published without prompt rows: :func:`prompts_indexed`)
    the mean row of all indexed prompts, from the
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
            if prompts_indexed(store, vectors, space) else [[] for _ in bare])
    fallback = None
    for row, found in zip(bare, hits):
        if found:
            out[row] = np.mean([np.asarray(h.vector, dtype=np.float64)[:width] for h in found], axis=0)
        else:
            if fallback is None:
                bvs = store.load_benchmark_vectors(space.id)
                # a space left without models and prompts (every source dropped): nothing to fill from and no model
                # to rank, so the search answers none, as it does for a question with options
                fallback = (np.zeros(width) if not bvs and not store.model_vector_keys(space.id)
                            else represent.mean_row(bvs, space))
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
    from .store.vectors import VectorStore

    s = get_settings()
    key = _stores_key(s)
    with _OPEN_LOCK:
        got = _OPEN.get("stores")
        if got is not None and got[0] == key and not got[2].closed:
            return got[1], got[2]
        sql = _OPEN.pop("sql", None)  # an SQL store opened alone (:func:`_shared_sql`) for these settings is kept
        if sql is not None and sql[0] != s.database_url:
            sql[1].close()
            sql = None
        _close_locked()
        store = sql[1] if sql is not None else open_existing_store(s)  # a read-only call makes no home
        try:
            vectors = VectorStore.from_settings(s, create=False).share()  # a query writes nothing: no folder made
        except BaseException:
            store.close()
            raise
        _keep_locked("stores", (key, store, vectors))
        return store, vectors


def _shared_sql():
    """The SQL store of the current settings alone, for a call that needs no vector store of its own
    (:func:`indexer.list_benchmarks`) or was given one (``find_models(..., vectors=V)``): the shared pair's when it is
    open, else one opened and kept apart. Before, such a call opened the pair, whose vector store, on the embedded
    folder a store of the caller already held, failed with BusyError (and otherwise held the folder for nothing)."""
    from .config import get_settings

    s = get_settings()
    key = _stores_key(s)
    with _OPEN_LOCK:
        got = _OPEN.get("stores")
        if got is not None and got[0] == key and not got[2].closed:
            return got[1]
        sql = _OPEN.get("sql")
        if sql is not None and sql[0] == s.database_url:
            return sql[1]
        if sql is not None:
            # no longer kept once closed: before, it stayed kept under its URL when the new one could not be opened
            # (a typo of TASKSPACE_DATABASE_URL), and once the program set the URL back every call failed with "the
            # store ... is closed"
            _OPEN.pop("sql")[1].close()
        store = open_existing_store(s)  # a read-only call makes no home
        _keep_locked("sql", (s.database_url, store))
        return store


def _stores_key(s) -> tuple:
    """The settings that name the shared stores (a change of any of them opens the stores again)."""
    return (s.database_url, s.qdrant_url, str(s.qdrant_path), s.qdrant_engine)


def _keep_locked(name: str, value) -> None:
    """``_OPEN[name] = value``, with the stores' close registered to run at exit (once a process)."""
    if not _OPEN.get("atexit"):
        atexit.register(_close_stores)
        _OPEN["atexit"] = True
    _OPEN[name] = value


def _close_locked() -> None:
    got = _OPEN.pop("stores", None)
    if got is not None:
        got[2].close()
        got[1].close()
    sql = _OPEN.pop("sql", None)
    if sql is not None:
        sql[1].close()


def _close_stores() -> None:
    with _OPEN_LOCK:
        _close_locked()


def close_cached(*, encoders: bool = True) -> None:
    """Release what the library's queries keep for the process: the SQL and vector stores :func:`find_models` keeps
    open (the embedded index folder and its lock, the database file), the posterior factors and model-page rows read
    from them, and (``encoders=True``) the shared encoders' models and embedding-cache files, with tqdm's idle
    monitor thread that a model load starts (:func:`indexer.encoder.close_encoders`). The next query opens and loads
    them again. ``encoders=False`` keeps the encoders loaded (the next query skips the model load: seconds). Call it
    when no query is running. Before, the encoders, their cache files (one connection per thread that encoded) and
    the monitor thread stayed for the process's life."""
    with _OPEN_LOCK:
        _close_locked()
        _PATTERNS.clear()
        _OBSERVED.clear()
    browse = sys.modules.get(f"{__package__}.browse")
    if browse is not None:
        with browse._EVERY_LOCK:
            browse._EVERY.clear()
    if encoders:
        encoder = sys.modules.get(f"{__package__}.encoder")
        if encoder is not None:  # never imported: no encoder to release
            encoder.close_encoders()


def find_models(prompts: str | list[str] | None = None, *, benchmark: str | None = None, top: int = 10,
                filters=None, space=None, store=None, vectors=None, rank: str = "probability",
                offset: int = 0) -> list[Match]:
    """The ranked models alone, best first: ``indexer.find_models(prompts, benchmark=..., k=top, rank=...,
    offset=...)`` without
    coverage, evidence or filter counts, as :class:`Match` objects (a thin wrapper over the same search,
    :func:`indexer.find._search`: the same scores, order, probabilities and intervals). ``filters``: a raw Qdrant
    payload filter as :meth:`VectorStore.search <indexer.store.vectors.VectorStore.search>` takes
    (``{"license": ["mit"], "num_parameters": {"lte": 8e9}}``), or an :class:`indexer.Filters`. ``rank``: one of
    :data:`RANKS`. ``offset``: skip the best ``offset`` (ranks ``offset + 1`` to ``offset + top``, the page
    ``indexer.find_models(offset=...)``, ``taskspace search --offset`` and ``POST /v1/find`` answer; before, this
    entry took none). Without ``store``/``vectors`` the configured stores are opened once per process and reused
    (:func:`close_cached` closes them). For the full answer (coverage, evidence, compare mode, ``prefer_smaller``,
    a raw query vector) use :func:`indexer.find_models`."""
    from .browse import _page
    from .find import Filters, _check_query, _merge, _search, _stores, page_limit
    from .space import space_name

    prompts = _check_query(prompts, benchmark, None, top, rank, k_name="top")  # its argument (before: "k must be")
    offset, _ = _page(offset, None)  # a non-negative integer, as indexer.find_models' offset
    where = (_merge(*filters.conditions().values()) or None) if isinstance(filters, Filters) else _raw_filter(filters)
    store, vectors = _stores(store, vectors)
    sp, state = _space_state(store, space)
    limit = page_limit(offset, top, vectors.count(space_name(sp), "models", where, missing_ok=True) if offset else None)
    skip = min(offset, limit - 1)  # the page alone matched (past the last model: the one model ranked, dropped)
    ranked = _search(store, vectors, sp, prompts, benchmark, None, where=where, limit=limit, rank=rank, timings={},
                     near=False, state=state, offset=skip)[-1]
    if not ranked and where and not isinstance(filters, Filters):
        _check_raw_fields(vectors, space_name(sp), where)
    return [m for m, _ in ranked[offset - skip:]]


def _check_raw_fields(vectors, name: str, where: dict) -> None:
    """InputError for a field of a raw payload filter that no model's payload carries (a misspelt ``licence``), naming
    the close field and those the models carry; asked only of a filter that let no model through, so it costs
    nothing otherwise. Before, such a filter answered ``[]`` without a word, as if no model fit it."""
    from .find import close_matches

    one = next(vectors.scan(name, "models", missing_ok=True), None)
    if one is None:  # no model at all: the caller's checks say the index is empty
        return
    carried = sorted({"key", *one.payload})
    for field_name in where:
        # not in one model's payload, nor a value in any other's (a field only some points carry, a pulled vector's
        # n_by_benchmark, is no typo)
        if field_name not in carried and not vectors.count(name, "models", {field_name: {"missing": False}}, missing_ok=True):
            close = close_matches(field_name, carried, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InputError(f"no indexed model carries the payload field {field_name!r}, so the filter matches "
                             f"nothing{hint}; the models' payload fields: {', '.join(carried)}",
                             item=f"filters.{field_name}")


#: the names of :class:`indexer.Filters` that are no payload field -> the payload field their filter reads
_FILTERS_FIELDS = {"licenses": "license", "min_params": "num_parameters", "max_params": "num_parameters",
                   "exclude_gated": "gated", "open_only": "kind", "min_evidence": "n_prompts", "benchmark": "benchmarks"}


def _raw_filter(filters) -> dict | None:
    """:func:`find_models`' ``filters`` when it is not an :class:`indexer.Filters`: a raw payload filter (a dict), or
    None. An InputError for anything else, and for a key that is a name of :class:`indexer.Filters` rather than a
    payload field (``{"licenses": ["mit"]}``, as :func:`indexer.find_models` takes it): no point carries such a field,
    so the filter would match nothing (before, ``[]`` without a word; a list or a string: an AttributeError)."""
    if filters is None:
        return None
    if not isinstance(filters, dict):
        raise InputError(f"filters must be a raw payload filter (a dict such as {{'license': ['mit']}}) or an "
                         f"indexer.Filters, not {type(filters).__name__}", item="filters")
    named = [k for k in filters if k in _FILTERS_FIELDS]
    if named:
        one = len(named) == 1
        raise InputError(f"{' and '.join(named)} {'is a name' if one else 'are names'} of indexer.Filters, not of a "
                         f"payload field (no model carries {'it' if one else 'them'}, so nothing would match): pass "
                         f"filters=indexer.Filters({named[0]}=...), or filter the payload field "
                         f"{_FILTERS_FIELDS[named[0]]!r}", item=f"filters.{named[0]}" if one else "filters")
    return filters


def pattern_observed(store, space, patterns: dict[str, str | None]) -> dict[str, frozenset]:
    """model -> the hashes of the indexed prompts it was observed on, from its coverage pattern (``patterns``: model
    -> its payload's ``pattern``), for the models whose pattern's prompt set SQL holds (a pulled index whose records
    carried it, :meth:`~indexer.store.sql.Store.pattern_prompts`). The sets are kept for the process by their
    digest (one small read per search tells which are stored now: a re-pull replaces them). Models left out: not
    known (a local index's models, whose outcomes tell, or records published without it)."""
    digests = getattr(store, "pattern_prompt_digests", None)
    if digests is None or space is None or not any(patterns.values()):
        return {}
    now = digests(space.id, [k for k in patterns.values() if k])
    want = [k for k, d in now.items() if d not in _OBSERVED]
    if want:
        for k, (d, hashes) in store.pattern_prompts(space.id, want).items():
            _OBSERVED[d] = hashes
    return {m: _OBSERVED[now[k]] for m, k in patterns.items() if k in now and now[k] in _OBSERVED}


def observed_shares(store, models: list[str], near: list[dict], fitted: dict | None = None,
                    all_measured: bool = False, ids: dict | None = None, space=None,
                    patterns: dict | None = None, changed: dict | None = None) -> dict[str, float]:
    """model -> the share of the indexed prompts ``near`` (the query's
    :data:`~indexer.posterior.COVERAGE_PROMPTS` nearest, as :func:`indexer.find._neighbourhood` gives them) it was
    observed on, from its outcome blocks in SQL (of those prompts' benchmarks only; one array pass over them). For a
    model SQL holds no outcome of (a pulled index), from the prompts its coverage pattern's models were observed on
    (:func:`pattern_observed`; ``patterns``: model -> its payload's ``pattern``, ``space`` the query's), the same
    share the publisher computed from its outcomes; 1.0 where that is not known either (records published without
    it: it cannot tell, and the model keeps the covered map).
    ``fitted``: model -> the benchmarks its vector was fitted on (its payload's ``benchmarks``): a model fitted on
    none of the neighbourhood's benchmarks has share 0 without reading its outcomes. ``all_measured``: SQL is known
    to hold outcomes of every model with a vector (:meth:`~indexer.store.sql.Store.unmeasured_vectors` said so), so
    which of these it holds outcomes of is not read. ``ids``: ``store.prompt_ids`` of ``near``, when already read.
    A model whose outcomes changed since its vector was solved (:func:`changed_since_solved`, with ``space`` and
    ``fitted``) is observed on its outcomes of the benchmarks its vector was fitted on alone: its share is the one
    its vector was solved with where the change added benchmarks (an index pass between its ingest and its
    publish, or ``taskspace ingest`` without ``taskspace index``), not the old vector blended by new coverage.
    ``changed``: the request's memo of that reading (:func:`changed_since_solved`'s ``known``), so the answer built
    from the same models reads it no more. :func:`observed_shares_many` of one neighbourhood."""
    return observed_shares_many(store, models, [near], fitted, all_measured, ids, space, patterns, changed)[0]


def observed_shares_many(store, models: list[str], nears: list[list[dict]], fitted: dict | None = None,
                         all_measured: bool = False, ids: dict | None = None, space=None,
                         patterns: dict | None = None, changed: dict | None = None) -> list[dict[str, float]]:
    """:func:`observed_shares` of each neighbourhood of ``nears`` (one dict each, in order), with one read of each
    kind for them all: which models SQL holds outcomes of, the prompts' ids (``ids``: ``store.prompt_ids`` of every
    neighbourhood's prompts, when already read), the outcome blocks (those of every neighbourhood's benchmarks, each
    neighbourhood's shares from its own benchmarks' blocks) and the coverage patterns. Before, a caller with a
    neighbourhood per benchmark (:func:`indexer.browse.model_detail`'s strengths) made these reads once per
    benchmark. :func:`observed_share_rows` as dicts."""
    models = list(dict.fromkeys(models))
    rows = observed_share_rows(store, models, nears, fitted, all_measured, ids, space, patterns, changed)
    return [dict(zip(models, row.tolist())) for row in rows]


def observed_share_rows(store, models: list[str], nears: list[list[dict]], fitted: dict | None = None,
                        all_measured: bool = False, ids: dict | None = None, space=None,
                        patterns: dict | None = None, changed: dict | None = None) -> np.ndarray:
    """(len(nears), len(models)) float64: :func:`observed_shares_many`'s shares, each neighbourhood's a row in the
    order of ``models`` (distinct keys): what a model page's every-model rows read for 32,823 models and 23
    neighbourhoods, without a dict of every model per neighbourhood (before, two built per neighbourhood and a
    lookup of every model in each: about 0.5 s of a page)."""
    out = np.ones((len(nears), len(models)))
    if not models:
        return out
    have = set(models) if all_measured else store.measured_models(models)
    hashes = [list(dict.fromkeys(p["id"] for p in near)) for near in nears]
    pulled = [i for i, m in enumerate(models) if m not in have]
    if pulled and any(hashes):
        known = pattern_observed(store, space, {models[i]: (patterns or {}).get(models[i]) for i in pulled})
        for r, hs in enumerate(hashes):
            if hs:
                for i in pulled:
                    seen = known.get(models[i])
                    if seen is not None:
                        out[r, i] = sum(h in seen for h in hs) / len(hs)
    if not have:
        return out
    at = np.array([i for i, m in enumerate(models) if m in have], dtype=np.int64)  # the measured models' columns
    measured = [models[i] for i in at]
    changed = (changed_since_solved(store, space, measured, known=changed) if fitted is not None else set())
    if ids is None:
        ids = store.prompt_ids([p["id"] for near in nears for p in near])
    todo = []  # (its row, its prompt ids, its benchmarks, which measured models' outcomes are read) per neighbourhood
    # the measured models by their fitted benchmark lists, each list once (a few among tens of thousands): whether a
    # model's outcomes are read is its list's (before, a set test per model and neighbourhood, 0.7 s a model page on
    # 32,823 models)
    lists: dict[tuple, int] = {}
    kind = np.array([lists.setdefault(tuple(fitted.get(m) or ()) if fitted is not None else (), len(lists))
                     for m in measured], dtype=np.int64)
    for r, near in enumerate(nears):
        got = np.unique(np.fromiter((ids[p["id"]] for p in near if p["id"] in ids), dtype=np.int64))
        if not got.size:
            continue
        benches = sorted({b for p in near for b in p["benchmarks"] if b})
        bs = set(benches)
        near_list = np.array([fitted is None or not bs.isdisjoint(t) for t in lists], dtype=bool)
        todo.append((r, got, benches, np.flatnonzero(near_list[kind]) if measured else np.zeros(0, np.int64)))
    read = list(dict.fromkeys(measured[j] for *_, ask in todo for j in ask))
    by_bench: dict[str, list[tuple]] = {}
    for block in (store.outcome_blocks(read, sorted({b for _, _, bs, _ in todo for b in bs})) if read else []):
        if block[0] in changed and block[1] not in set(fitted.get(block[0]) or ()):
            continue  # a benchmark its vector was not fitted on (added since it was solved): not its state yet
        by_bench.setdefault(block[1], []).append(block)
    for r, got, benches, ask in todo:
        code = {measured[j]: i for i, j in enumerate(ask)}
        seen = np.zeros((len(ask), got.size), dtype=bool)
        blocks = [blk for b in benches for blk in by_bench.get(b, ()) if blk[0] in code]
        if blocks:
            P = np.concatenate([pids for _, _, pids, _ in blocks])
            M = np.repeat([code[m] for m, _, _, _ in blocks], [len(pids) for _, _, pids, _ in blocks])
            hit = np.isin(P, got)
            seen[M[hit], np.searchsorted(got, P[hit])] = True
        row = np.zeros(len(measured))  # a measured model whose outcomes are not read: 0
        row[ask] = seen.mean(axis=1)
        out[r, at] = row
    return out


def prompt_ids_of(store, hashes, known: dict | None = None) -> dict[str, int]:
    """``store.prompt_ids(hashes)`` (hash -> prompt id, hashes SQL does not hold left out) through a request's memo
    ``known`` (hash -> id, None for a hash SQL does not hold), read and filled here: a search reads its
    neighbourhood's ids once for its coverage shares, its results' coverage and evidence and its cut evidence texts
    (before, up to three reads of the same rows)."""
    if known is None:
        return store.prompt_ids(hashes)
    hashes = list(dict.fromkeys(hashes))
    ask = [h for h in hashes if h not in known]
    if ask:
        got = store.prompt_ids(ask)
        known.update((h, got.get(h)) for h in ask)
    return {h: known[h] for h in hashes if known[h] is not None}


def changed_since_solved(store, space, models: list[str], known: dict | None = None) -> set[str]:
    """Those of ``models`` whose vector in ``space`` was solved from other outcomes than SQL holds now
    (:meth:`~indexer.store.sql.Store.changed_outcomes`: one keyed read comparing the stored digests); empty without
    a space or a store that cannot tell. ``known``: a request's memo (model -> changed), read and filled here, so
    one search asks SQL once per model: the ranking's coverage shares and the answer built from them (before, a search
    on a coverage-aware map read the ranked candidates' rows, then its results' again). From
    :data:`CHANGED_WHOLE_SPACE` models asked on, one read of the space's every changed model, kept to those asked (a
    model page's every-model rows ask for every model: 32,823 keys read 0.5 s, the whole space 0.1 s)."""
    read = getattr(store, "changed_outcomes", None)
    if read is None or space is None or not models:
        return set()
    ask = list(dict.fromkeys(models)) if known is None else [m for m in dict.fromkeys(models) if m not in known]
    got = (read(space.id, None) if len(ask) >= CHANGED_WHOLE_SPACE else read(space.id, ask)) if ask else set()
    if known is None:
        return {m for m in ask if m in got}
    known.update((m, m in got) for m in ask)
    return {m for m in models if known[m]}


#: how many models :func:`changed_since_solved` asks SQL for by key at most (more: the whole space, in one read)
CHANGED_WHOLE_SPACE = 2000


def _all_measured(store, space) -> bool:
    """True when SQL is known to hold outcomes of every model with a vector in ``space``
    (:meth:`~indexer.store.sql.Store.unmeasured_vectors` says none lacks them; False for a pulled index)."""
    unmeasured = getattr(store, "unmeasured_vectors", None)
    return unmeasured is not None and not unmeasured(space.id)


def share_reader(store, space, near: list[dict], all_measured: bool | None = None, changed: dict | None = None,
                 ids_known: dict | None = None):
    """A function of hits giving each one's coverage share of the query's nearest indexed prompts ``near``
    (:func:`observed_shares`, read once per model and kept for the search: a larger fetch reads only the new
    candidates), for :func:`_matches` and the coverage re-rank. ``all_measured``: :func:`_all_measured` of ``space``
    when already read; ``changed``: the request's memo of :func:`changed_since_solved`, ``ids_known`` its memo of
    :func:`prompt_ids_of`."""
    all_measured = _all_measured(store, space) if all_measured is None else all_measured
    ids = prompt_ids_of(store, [p["id"] for p in near], ids_known)  # the neighbourhood's ids, once for every read
    known: dict[str, float] = {}

    def read(hits) -> dict[str, float]:
        new = [h for h in hits if h.key not in known]
        if new:
            known.update(observed_shares(store, [h.key for h in new], near,
                                         {h.key: h.payload.get("benchmarks") for h in new}, all_measured, ids=ids,
                                         space=space, patterns={h.key: h.payload.get("pattern") for h in new},
                                         changed=changed))
        return {h.key: known[h.key] for h in hits}

    return read


#: the candidates :func:`coverage_ranked` fetches from each search first (at least :data:`FETCH_PER_RESULT` per result
#: asked for); a round that does not settle the top fetches four times as many
COVERAGE_FETCH = 40
#: the least candidates a re-ranking search fetches first per result asked for (at least 1: a round must hold k)
FETCH_PER_RESULT = 4


def coverage_logit(c, covered, uncovered, d0: float):
    """A model's logit on a coverage-aware map: ``c L1 + (1 - c) L0`` with ``c`` its share of the query's nearest
    indexed prompts it was observed on, ``covered`` L1 (its score on the folded query) and ``uncovered`` + ``d0`` L0
    (its score on :meth:`~indexer.posterior.Predictor.fold_uncovered`'s query plus that query's constant). Numbers or
    arrays; what :func:`coverage_ranked` ranks by and :func:`indexer.browse.model_detail`'s strengths give."""
    return c * covered + (1.0 - c) * (uncovered + d0)


def coverage_ranked(store, vectors, name: str, q: np.ndarray, pred, near: list[dict], *, filters, limit: int,
                    rank: str = "probability", penalty=None, shift=None, changed: dict | None = None,
                    ids_known: dict | None = None, offset: int = 0) -> list[tuple[Match, float]]:
    """The top ``limit`` models of a coverage-aware map (:attr:`~indexer.posterior.Predictor.coverage_aware`): a
    model observed on a share ``c`` of the query's nearest indexed prompts ``near`` (:func:`observed_shares`) has the
    logit ``c L1 + (1 - c) L0``, L1 the map's (the folded query's, :meth:`~indexer.posterior.Predictor.fold`) and
    L0 that with the uncovered weight of its own deviation (:meth:`~indexer.posterior.Predictor.fold_uncovered`).
    Both folded queries are searched (with the size ``penalty`` formula when given) and their candidates re-ranked,
    by the logit (``rank`` probability) or by its interval's lower end (``lcb``), minus ``shift(hit)`` when given
    (the ``penalty``'s own term, ``alpha`` log10 parameters, with it); more are fetched until no unfetched model can
    enter the top: its logit is at most the larger of the two searches' next scores, which the k-th ranked value
    must reach. Each match's ``search_score`` is its
    logit less the predictor's offset, as for an ordinary search. ``changed``: the request's memo of
    :func:`changed_since_solved` (the candidates' shares fill it), ``ids_known`` of :func:`prompt_ids_of`.

    A model fitted on none of the neighbourhood's benchmarks has ``c = 0`` (:func:`observed_shares`), so its logit
    is L0 and the L0 search alone finds it: the L1 search is then filtered to the models fitted on one of them (a
    Qdrant payload filter), and its next score bounds only those. Where some model's outcomes are not in SQL (a
    pulled index: ``c = 1`` for it, whatever it was fitted on) or the filters already name benchmarks, L1 searches
    every model, as L0 does.

    ``lcb`` where the map's groups of benchmarks leave some unlinked to the query's (:func:`unlinked_split`): the L0
    search is split into the models fitted only on those groups' benchmarks and the rest (a payload filter each:
    ``only`` / ``except`` those benchmarks). Each of the former has at least the map's unlinked term in its variance,
    so its lower end is at most that search's next score less the interval's half-width at that variance: before,
    thousands of such models (high scores, wide intervals) were all fetched, as an unfetched model was bounded by its
    score alone.

    ``offset``: the page of ranks ``offset + 1`` to ``limit`` alone is returned, and only its models get what the
    order does not need (their whole payloads, raw scores at the row, probabilities and intervals:
    :func:`_page_matches`). The order of the ``limit`` best is computed as for ``offset`` 0, from each candidate's
    logit (its two raw scores, share, centring and size), and for ``lcb`` its variance: every candidate's
    (:func:`hit_variances`, from the payload fields it reads, :data:`VARIANCE_FIELDS`), kept and handed to the page's
    matches, so their variances and intervals are the very numbers the order was made with. So a page is exactly the
    tail of the ``limit`` best (the same models, order and numbers); before, every model above it was matched and its
    whole payload read: on 32,823 models the last page of a benchmark query took 4.5 s of CPU, now 1.4 s
    (the first page 0.15 s; docs/BENCHMARKS.md, "A deep page of a ranking")."""
    if penalty is not None and shift is None:
        raise ValueError("coverage_ranked: a size penalty needs its shift (the penalty's own term per hit)")
    fetch = max(FETCH_PER_RESULT * limit, COVERAGE_FETCH)
    q1 = pred.fold(q)
    q0, d0 = pred.fold_uncovered(q)
    where1 = filters
    benches = sorted({b for p in near for b in p["benchmarks"] if b})
    all_measured = _all_measured(store, pred.space)
    if benches and "benchmarks" not in (filters or {}) and all_measured:
        where1 = {**(filters or {}), "benchmarks": benches}
    # the searches: (row, filter, the constant that puts its scores on L1's scale, the variance each of its models
    # has at least for ``lcb``'s bound of those not fetched: None, none known, the (weight, constant) pairs of the
    # centring its models may have: an unfetched model's value is at most the largest ``w (score + constant) + c``).
    # ``lcb`` with groups of benchmarks no model links to the query's (unlinked_split): the L0 search split in two,
    # the models fitted only on those (their next score bounds them less their least interval's half-width) and the
    # rest. Centred (unlinked_mix): a search per class of models that share a pair (:func:`_centred_searches`)
    on = (filters or {}).get("benchmarks")  # a filter's own condition on the benchmarks (its "all": -b's filter)
    splittable = on is None or isinstance(on, dict) and not {"except", "only", "any"} & set(on)
    mix = None
    if pred.centred:  # a model not linked to the query's benchmarks: the average model's score there
        mix = lambda lists: pred.calibration.unlinked_mix(q1, lists, pred.near_benchmarks)  # noqa: E731
    if mix is not None and splittable:
        searches = _centred_searches(pred, mix, q1, q0, d0, filters, on, benches if where1 is not filters else None,
                                     rank)
    else:
        every = [(1.0, 0.0)] if mix is None else _mix_pairs(pred, mix)
        split = unlinked_split(pred) if splittable and rank == "lcb" else None
        searches = [(q0, filters, d0, None, every)]
        if split is not None:
            only, least = split
            searches = [(q0, {**(filters or {}), "benchmarks": {**(on or {}), "except": only}}, d0, None, every),
                        (q0, {**(filters or {}), "benchmarks": {**(on or {}), "only": only}}, d0, least, every)]
        searches.append((q1, where1, 0.0, None, every))
    read_shares = share_reader(store, pred.space, near, all_measured, changed, ids_known)
    # each candidate's inner products with q1 and q0: one search restricted to the candidates' points, both rows at
    # once (no payloads or vectors read: converting them cost more than the search); the raw score at the row q is
    # read for the page's models alone, which show it
    rows = np.stack([np.asarray(x, dtype=np.float32) for x in (q1, q0)])
    raw1: dict[str, float] = {}
    raw0: dict[str, float] = {}

    # the candidates' payloads: only what the re-rank reads (the fields a model was fitted on, its size for the size
    # term; ``lcb`` the posterior fields of its variance, VARIANCE_FIELDS), the page's whole payloads read once the
    # ranking is settled (before, ``lcb`` read every candidate's whole payload)
    fields = list(dict.fromkeys(["benchmarks", "pattern", *(VARIANCE_FIELDS if rank == "lcb" else ()),
                                 *(["num_parameters"] if shift is not None else [])]))
    # ``lcb``: each candidate's variance once; its logit, share and payload do not change as more are fetched (before,
    # every round built every candidate's again: on 32,823 models, 6 rounds, 1 s)
    variance: dict[str, float] = {}

    while True:
        found_by = [vectors.search(name, "models", row, filters=where, limit=fetch + 1, penalty=penalty, fields=fields)
                    for row, where, _, _, _ in searches]
        nxt = []  # each search's bound of the models it has not returned (none once it returned them all)
        for hs, (_, _, d, least, pairs) in zip(found_by, searches):
            if len(hs) > fetch:
                bound = max(w * (float(hs[fetch].score) + d) + c for w, c in pairs)
                nxt.append(bound if least is None else float(lower_end(np.array([bound]), np.array([least]), pred)[0]))
        hits = list({h.key: h for hs in found_by for h in hs[:fetch]}.values())
        if not hits:
            return []
        for got, into in zip(vectors.scores_of(name, "models", rows, [h.key for h in hits if h.key not in raw1],
                                               memo=_ids_read(hits)),
                             (raw1, raw0)):
            into.update(got)
        shares = read_shares(hits)  # those of a smaller fetch are known already
        blend = coverage_logit(np.array([shares[h.key] for h in hits]), np.array([raw1[h.key] for h in hits]),
                               np.array([raw0[h.key] for h in hits]), d0)
        if mix is not None:
            w, c = mix([h.payload.get("benchmarks") for h in hits])
            blend = w * blend + c
        for h, v in zip(hits, blend):
            h.score = float(v)
        value = blend.copy()
        if shift is not None:
            value = value - np.array([shift(h) for h in hits])
        score = value
        if rank == "lcb":  # the bound needs every candidate's variance (not its probability, interval or payload)
            new = [h for h in hits if h.key not in variance]
            variance.update(zip([h.key for h in new], map(float, hit_variances(new, pred, q, shares))))
            value = lower_end(value, np.array([variance[h.key] for h in hits], dtype=np.float64), pred)
        # ties (two models' equal logits: e.g. a benchmark query, whose score is a model's accuracy there) by model
        # key, not by the order the two searches returned the candidates in, which differs between indexes holding
        # the same vectors (a pulled one); so a model not fetched yet that could tie the k-th is fetched first
        order = _ranked(value, score, limit, keys=[h.key for h in hits])
        kth = value[order[-1]] if len(order) else np.inf  # NaN (a bound unknown in the top): not settled, fetch more
        if not nxt or kth > max(nxt):
            return [(m, float(value[i])) for m, i in zip(
                _page_matches(vectors, name, [hits[i] for i in order[offset:]], pred, q, shares,
                              variance if rank == "lcb" else None), order[offset:])]
        fetch *= 4


def whole_hits(vectors, name: str, hits: list, with_vectors: bool) -> list:
    """``hits`` (of a models search made with some payload fields only, without vectors) with their whole payloads,
    and with ``with_vectors`` their vectors, read by id (one read; the scores the search gave are kept): a deep page's
    models, whose matches show what the order did not need."""
    got = vectors.get(name, "models", [h.key for h in hits], with_vectors=with_vectors) if hits else {}
    for h in hits:
        if h.key in got:
            h.payload = got[h.key].payload
            if with_vectors:
                h.vector = got[h.key].vector
    return hits


def _page_matches(vectors, name: str, page: list, pred, q: np.ndarray, shares: dict | None,
                  variance: dict | None = None, at_row: bool = True) -> list[Match]:
    """The :class:`Match` of each of a ranking's ``page`` of hits (fetched with some payload fields only): their whole
    payloads read by id, their raw scores at the row ``q`` by id (``at_row``: hits of a folded query), then
    :func:`_matches` (with the variances the ranking computed, ``variance``). What a ranked page costs beyond the
    order: these reads and the intervals for its models alone, not for every model ranked above it."""
    if not page:
        return []
    keys = [h.key for h in page]
    whole_hits(vectors, name, page, False)
    raw = vectors.scores_of(name, "models", np.asarray(q, dtype=np.float32)[None, :], keys)[0] if at_row else None
    return _matches(page, pred, q, raw, shares, variance)


#: the candidates :func:`lcb_ranked` fetches first (at least :data:`FETCH_PER_RESULT` per result asked for); a round
#: that does not settle the top fetches four times as many
LCB_FETCH = 50


def lcb_ranked(vectors, name: str, q: np.ndarray, pred, *, filters, limit: int, shift=None, penalty=None,
               shares=None, offset: int = 0) -> list[tuple[Match, float]]:
    """The top ``limit`` models by the lower end of their score's interval, minus ``shift(match)`` when given, with
    that value: candidates fetched from Qdrant and re-ranked, more fetched until no unfetched model can enter the
    top (:func:`~indexer.posterior.lcb_candidates_exact`).
    ``shares``: :func:`share_reader`'s function, when the variances need the candidates' coverage shares.
    ``penalty``: the size penalty whose own term ``shift`` is (``alpha`` log10 parameters): the candidates are then
    fetched by ``score - shift`` (the Qdrant formula of :meth:`~indexer.store.vectors.VectorStore.search`), so the
    next one's value bounds every unfetched model's ``score - shift`` and so its lower end; their raw scores are read
    back by id (:meth:`~indexer.store.vectors.VectorStore.scores_of`). Before, with a ``shift`` every model was
    fetched and scored (on 32,823 models 2.5-4 s a search).
    ``offset``: ranks ``offset + 1`` to ``limit`` alone are returned (a page): every candidate's variance orders them
    (:func:`hit_variances`), and the page's matches take those variances, so the page is exactly the tail of the
    ``limit`` best; only its models are matched (probability, interval), the candidates fetched with the payload
    fields the order reads alone and no vector, the page's whole payloads and vectors read after (:func:`whole_hits`)."""
    from .posterior import lcb_candidates_exact

    if penalty is not None and shift is None:
        raise ValueError("lcb_ranked: a size penalty needs its shift (the penalty's own term per match)")
    fetch = max(FETCH_PER_RESULT * limit, LCB_FETCH)
    search = pred.fold(q)  # the level/deviation map's folded query (the variances stay those at the raw row q)
    while True:
        # a deep page: the candidates with the payload fields the order reads alone, no vector (the page's read after)
        hits = vectors.search(name, "models", search, filters=filters, limit=fetch + 1,
                              with_vectors=pred.folded and not offset, penalty=penalty,
                              fields=[*VARIANCE_FIELDS, "num_parameters"] if offset else None)
        more = len(hits) > fetch
        if penalty is not None:  # the candidates' own scores (the next one's formula value stays the bound)
            raw = vectors.scores_of(name, "models", search, [h.key for h in hits[:fetch]],
                                    memo=_ids_read(hits[:fetch]))[0]
            for h in hits[:fetch]:
                h.score = raw[h.key]
        got = hits[:fetch]
        share = None if shares is None else shares(got)
        # every candidate's variance alone (its match, interval and probability for the page's models only)
        var = hit_variances(got, pred, q, share)
        scores = np.array([h.score for h in got], dtype=np.float64)
        if shift is not None:
            scores = scores - np.array([shift(h) for h in got])
        lower = lower_end(scores, var, pred)
        order = _ranked(lower, scores, limit)
        # settled when the top k all have a bound (an unfetched model with one would rank above a model without)
        # and the k-th bound reaches the best score not fetched
        if not more or (np.isfinite(lower[order]).all() and len(order) == limit
                        and lcb_candidates_exact(lower[order], lower[order], limit, float(hits[fetch].score))):
            page = order[offset:]
            top = [got[i] for i in page]
            if offset:
                whole_hits(vectors, name, top, pred.folded)
            found = _matches(top, pred, q, shares=share, variance={got[i].key: float(var[i]) for i in page})
            return [(m, float(lower[i])) for m, i in zip(found, page)]
        fetch *= 4


def _mix_pairs(pred, mix) -> list[tuple[float, float]]:
    """The (weight, constant) pairs of :meth:`~indexer.posterior.Calibration.unlinked_mix` a model may have: one per
    group of the map's :attr:`~indexer.posterior.Calibration.links`, and (1, 0) of a model linked to every prompt (no
    benchmarks, or one the map does not know)."""
    w, c = mix([[g[0]] for g in pred.calibration.links])
    return [*zip(map(float, w), map(float, c)), (1.0, 0.0)]


def _centred_searches(pred, mix, q1, q0, d0: float, filters, on, benches: list[str] | None, rank: str) -> list:
    """:func:`coverage_ranked`'s searches where a model not linked to the query's benchmarks scores the average
    model's there (:meth:`~indexer.posterior.Calibration.unlinked_mix`: ``w own + c``, one pair per group of
    benchmarks): the models fall in classes by their pair (the groups that share one: every group none of the
    nearest prompts lies in; and the models of no known group, (1, 0)), and each class is searched with both folded
    rows scaled by its ``w`` (a payload filter on its benchmarks: ``only`` its groups', or ``except`` every group's),
    so that each search's next score plus ``w d0 + c`` (``c`` for L1) bounds its unfetched models exactly, with a size
    penalty too; and for ``lcb`` less the interval's half-width at the class's least variance (its unlinked term,
    :func:`unlinked_split`'s argument), in both of its searches. Before (one search of each row over every model), a
    model of a group nothing links to the query stood at its own, high score among the next ones, and every such model
    was fetched.
    ``benches``: the L1 searches' own condition, the neighbourhood's benchmarks (None: every model of the class)."""
    cal = pred.calibration
    links = cal.links
    w, c = mix([[g[0]] for g in links])
    # a class per group a nearest prompt lies in, and one of every other group (their models share one pair: each
    # is linked to the nearest prompts of no benchmark or of one the map does not know, alone)
    untouched = set(untouched_benchmarks(pred) or ())
    pairs = [(float(wg), float(cg), list(g)) for g, wg, cg in zip(links, w, c)]
    far = [x for x in pairs if untouched & set(x[2])]
    merged = [x for x in pairs if not untouched & set(x[2])]
    if far:
        merged.append((far[0][0], far[0][1], sorted(b for *_, g in far for b in g)))
    out = []
    for wg, cg, names in merged:
        ops = {**(on or {}), "only": sorted(names)}
        least = None
        if rank == "lcb":  # every model of the class has at least its unlinked term
            least = float(cal.unlinked_term(cal.linked_shares([names[:1]], pred.near_benchmarks)[0])) or None
        out.append((wg * q0, {**(filters or {}), "benchmarks": ops}, wg * d0 + cg, least, [(1.0, 0.0)]))
        ops1 = ops if benches is None else {**ops, "any": benches}
        # its covered search's models are of the class too: bounded by the same least variance (before, by their
        # next score alone: on 32,823 models a query whose nearest prompts lie in three groups fetched thousands of
        # a partly linked group's rows)
        out.append((wg * q1, {**(filters or {}), "benchmarks": ops1}, cg, least, [(1.0, 0.0)]))
    # the rest: no benchmarks, one the map does not know, or (a map whose links are older than the points) several
    # groups' -- unscaled, bounded through every pair
    conds = [*([on] if on else []), *({"except": sorted(names)} for _, _, names in merged)]
    every = [(wg, cg) for wg, cg, _ in pairs] + [(1.0, 0.0)]  # _mix_pairs' (the pairs worked out above)
    out.append((q0, {**(filters or {}), "benchmarks": conds}, d0, None, every))
    out.append((q1, {**(filters or {}), "benchmarks": conds}, 0.0, None, every))
    return out


def untouched_benchmarks(pred) -> list[str] | None:
    """The benchmarks of the groups of the map's :attr:`~indexer.posterior.Calibration.links` that none of the
    query's nearest prompts (:attr:`~indexer.posterior.Predictor.near_benchmarks`) lies in (sorted), or None without
    such a group: every model fitted only on them is linked to the same share of the query."""
    cal = pred.calibration
    near = pred.near_benchmarks
    if not near or not pred.link_aware:
        return None
    group = {b: g for g, names in enumerate(cal.links) for b in names}
    touched = {group.get(b, -1) for bs in near for b in (bs or ())}
    only = sorted(b for g, names in enumerate(cal.links) if g not in touched for b in names)
    return only or None


def unlinked_split(pred) -> tuple[list[str], float] | None:
    """For ``lcb`` on a map whose benchmarks fall in groups no model links (:attr:`Calibration.links
    <indexer.posterior.Calibration.links>`): (the benchmarks of the groups that none of the query's nearest prompts
    (:attr:`~indexer.posterior.Predictor.near_benchmarks`) lies in, the raw-score variance every model whose
    benchmarks all lie there has at least); None without such a group or when that variance is 0.

    Such a model's linked share (:meth:`~indexer.posterior.Calibration.linked_shares`) is the same for all of them:
    the share of the nearest prompts of no benchmark or of one the map does not know. So :meth:`Predictor.variance
    <indexer.posterior.Predictor.variance>` adds at least :meth:`~indexer.posterior.Calibration.unlinked_term` at
    that share (beside the never-observed format's part, the larger of the two) to what is never negative: the
    posterior's variance (``noise (1/n + ...)``, :func:`indexer.solver.ridge.predictive_variance`) plus the level
    term (``((level / scale)^2 - 1) noise / n``, at least ``-noise / n``) and the region term. A model with no
    benchmarks, or one the map does not know, is linked (share 1): not among them."""
    cal = pred.calibration
    near = pred.near_benchmarks
    only = untouched_benchmarks(pred)
    if only is None:
        return None
    # the linked share every such model has: that of a model fitted on all of them (the variance's own rule)
    least = float(cal.unlinked_term(cal.linked_shares([only], near)[0]))
    if not least > 0.0:
        return None
    return only, least


def lower_end(values: np.ndarray, variance: np.ndarray, pred) -> np.ndarray:
    """The lower ends of the candidates' intervals on the scale of ``values`` (the scores ranked by): ``value - z
    scale sd`` (:data:`~indexer.posterior.Z_INTERVAL` sd of ``variance``), NaN where a model's variance is unknown (a
    vector stored before posteriors were kept, a pattern that could not be loaded): :func:`_ranked` puts those after
    every model with a bound, where before an unknown variance counted as none and such a model ranked first. A space
    whose method keeps no posterior at all (the plain ``paper`` method: no intercept) has no bound for any model: its
    bound is the score itself (``lcb`` then ranks as ``probability``)."""
    from .posterior import Z_INTERVAL

    values = np.asarray(values, dtype=np.float64)
    if not (getattr(pred.space, "params", None) or {}).get("intercept"):
        return values.copy()
    var = np.asarray(variance, dtype=np.float64)
    return values - Z_INTERVAL * pred.scale * np.sqrt(np.maximum(var, 0.0))  # NaN stays NaN


def _ranked(values: np.ndarray, scores: np.ndarray, limit: int, keys: list[str] | None = None) -> np.ndarray:
    """The indices of the top ``limit`` by ``values``, best first (ties in candidate order, or by model key when
    ``keys`` are given); those whose value is NaN (an unknown bound) after all others, by their ``scores``."""
    values = np.asarray(values, dtype=np.float64)
    known = np.isfinite(values)
    order = (-np.where(known, values, np.asarray(scores, dtype=np.float64)), ~known)
    if keys is not None:
        order = (np.asarray(keys, dtype=str), *order)
    return np.lexsort(order)[:limit]
