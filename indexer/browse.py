"""Browse the index: the models, the benchmarks, one model's record (``taskspace models``, ``taskspace benchmarks``,
``taskspace model ID``; ``GET /v1/models``, ``/v1/benchmarks``, ``/v1/models/{id}``).

- :func:`list_models`: the indexed models (those with a vector in the space), by key, with identity and metadata;
  ``benchmark``: only those measured on it; ``filters``: a :class:`~indexer.find.Filters` (Qdrant payload filters);
  ``offset``/``limit`` page the list.
- :func:`count_models`: how many models :func:`list_models` lists without ``offset``/``limit`` (what a page is out of).
- :func:`models_page`: a page of :func:`list_models` with its total and next offset (``GET /v1/models``,
  ``taskspace models --json``).
- :func:`list_benchmarks`: every benchmark with its group, number of prompts and number of models measured.
- :func:`model_detail`: one model (by key, Hub id or any alias): its benchmarks with observed accuracy and n (in an
  index without its per-prompt results, a pulled one, the accuracy and n its record was published with, ``n`` null
  from records that carry none, and ``benchmarks_note`` saying so), ``results_changed`` (its results in SQL changed
  since its vector was solved: the observed accuracy is of them, the strengths from before them;
  :func:`indexer.query.changed_since_solved`, as a search's result says it), and
  the benchmarks where its predicted success is highest relative to the other models (``strengths``: the
  calibrated probability on the benchmark's vector minus the mean over every indexed model, and its rank there).
  Each is the number `search --benchmark B` gives (one folded query per benchmark ranks every model at once; where
  the calibration weighs coverage, :attr:`indexer.posterior.Calibration.uncovered`, each model's own deviation is
  weighed by its share of B's nearest own prompts it was observed on, as the search does). The every-model part of
  the strengths is the same for every model's page: a process keeps it while the index's state reads the same
  (:func:`_every_rows`), so `taskspace serve` computes it once per state, not once per page (pages asked at once
  before it is kept wait for the one computing it).

Unknown models and benchmarks raise :class:`~indexer.errors.NotFoundError` naming the close names.
"""

from __future__ import annotations

import threading

import numpy as np

from .errors import DimensionError, InputError, NotFoundError
from .query import check_has_models
from .records import name_problem, strip_invisible
from .find import (Filters, card_facts, check_benchmark_name, check_stores, facts_of, _index_in_step, _means,
                   check_not_drifted, _merge, _num, _resolve_models, _stores as _given_or_shared, require_indexed_benchmark, suggest)

#: how many benchmarks :func:`model_detail` lists as strengths
STRENGTHS = 5
#: :func:`model_detail`'s ``benchmarks_note`` when its observed accuracies are the published ones (a pulled index)
PUBLISHED = "as published (no per-prompt results here)"
#: what a model page says when its ``results_changed`` is true (the CLI's note, the page's)
MODEL_RESULTS_CHANGED = ("results changed since this model was indexed: its observed accuracy is of its results now, "
                         "its predicted strengths are from before them (the next `taskspace index` pass includes them)")
_FIELDS = ("kind", "license", "num_parameters", "pipeline_tag", "gated", "benchmarks", "n_prompts", "accuracy",
           "aliases", "downloads", "library", "tags")  # the last three with the others: whether Hub metadata is known


def _stores(store, vectors, space):
    from .query import _space
    from .space import space_name

    store, vectors = _given_or_shared(store, vectors)
    sp = _space(store, space)
    return store, vectors, sp, space_name(sp)


def _identity(key: str, p: dict) -> dict:
    kind = p.get("kind")
    return {"model": key, "hub_id": key if kind == "hub" else None, "api_only": kind == "api",
            "aliases": [a for a in (p.get("aliases") or []) if a != key]}


def _metadata(p: dict, facts: dict | None = None) -> dict:
    """An answer's ``metadata``: the point's facts and :func:`indexer.find.card_facts`' (``facts``) of the model."""
    from .find import NO_CARD_FACTS
    from .sync import gated_known, license_text

    return {"license": license_text(p.get("license")), "params": p.get("num_parameters"),
            "pipeline_tag": p.get("pipeline_tag"),
            "gated": gated_known(p), "open_weights": p.get("kind") == "hub", **(facts or NO_CARD_FACTS)}


def _page(offset, limit) -> tuple[int, int | None]:
    """``offset`` and ``limit`` checked (``offset`` a non-negative integer, ``limit`` a positive one or None for all,
    as ``taskspace models --limit`` and ``GET /v1/models?limit=`` take it: a page of 0 models would say its own offset
    is the next page's) and as plain ints: a numpy integer (read from an array) made :func:`models_page`'s
    ``offset``/``next_offset`` numpy values, which ``json.dumps`` refuses."""
    def bad(v) -> bool:
        return isinstance(v, bool) or not isinstance(v, (int, np.integer))

    if offset is None or bad(offset) or offset < 0:
        raise InputError("offset must be a non-negative integer, not {value}", item="offset", value=offset)
    if limit is not None and (bad(limit) or limit < 1):
        raise InputError(f"limit must be a positive integer (or None for every model), not {limit!r}", item="limit")
    return int(offset), None if limit is None else int(limit)


def list_models(benchmark: str | None = None, offset: int = 0, limit: int | None = None,
                filters: Filters | dict | None = None, *, store=None, vectors=None, space=None) -> list[dict]:
    """The indexed models sorted by key: ``{"model", "hub_id", "api_only", "aliases", "metadata", "benchmarks",
    "n_prompts", "accuracy"}`` each (``accuracy``: mean observed accuracy over its benchmarks), the items of
    ``taskspace models --json``'s ``models``. ``benchmark``: only the models measured on it; ``offset``: skip that
    many; ``limit``: at most that many (at least 1; None: every model); ``filters``: a :class:`~indexer.find.Filters`
    or a dict of its fields; ``space``: an index name, an SQL id or an encoder name (None: the default space).
    Without ``store``/``vectors``, the configured ones (as :func:`indexer.find_models`).

    Raises :class:`~indexer.errors.InputError` (a ValueError) for a bad argument, ``.item`` naming it (``offset``,
    ``limit``, ``benchmark``, ``filters.licenses``); :class:`~indexer.errors.NotFoundError` (a LookupError) for an
    unknown benchmark (``benchmark``) or space (``space``), or an empty index or a home never indexed (``.item``
    None); :class:`~indexer.errors.StoreError` when the store cannot be used. All derive from
    :class:`~indexer.errors.IndexerError`."""
    offset, limit = _page(offset, limit)
    store, vectors, sp, name = _stores(store, vectors, space)
    return _listed(store, vectors, sp, name, _models_where(store, benchmark, filters, index=(vectors, sp)), offset, limit)


def _listed(store, vectors, sp, name: str, where: dict, offset: int, limit: int | None) -> list[dict]:
    """:func:`list_models` of a resolved space (``sp``, its index name ``name``) and payload filter ``where``.

    A page (``limit``) scans the matching models' keys alone, sorts them and reads the page's payloads by key: on a
    home of 32,823 models a page of 50 took 1.7-2.6 s reading every model's listed fields (most of it decoding them),
    0.8-1.0 s now (docs/BENCHMARKS.md, "A page of models"). Without ``limit`` every model is listed, so the one scan
    reads their fields."""
    page = limit is not None
    hits = sorted(vectors.scan(name, "models", fields=() if page else _FIELDS, filters=where or None,
                                missing_ok=True),
                  key=lambda h: h.key)
    if not hits and not where:
        check_not_drifted(store, sp, name, vectors)
    if not hits:  # an empty space is an empty index, as no space is (the filters left none of a non-empty one: [])
        check_has_models(store, vectors, sp, name)
    hits = hits[offset: None if limit is None else offset + limit]
    if page and hits:  # the page's payloads (a model removed since the scan by a concurrent pass: not listed)
        got = vectors.get(name, "models", [h.key for h in hits])
        hits = [got[h.key] for h in hits if h.key in got]
    facts = card_facts(store, [h.key for h in hits])
    return [{**_identity(h.key, h.payload), "metadata": _metadata(h.payload, facts.get(h.key)),
             "benchmarks": list(h.payload.get("benchmarks") or []), "n_prompts": h.payload.get("n_prompts"),
             "accuracy": _num(h.payload.get("accuracy"), 4)} for h in hits]


def count_models(benchmark: str | None = None, filters: Filters | dict | None = None, *, store=None, vectors=None,
                 space=None) -> int:
    """How many indexed models :func:`list_models` lists with these options and no ``offset``/``limit`` (what a page
    of it is out of)."""
    store, vectors, sp, name = _stores(store, vectors, space)
    return vectors.count(name, "models", _models_where(store, benchmark, filters, index=(vectors, sp)) or None,
                         missing_ok=True)


def missing_metadata(benchmark: str | None = None, filters: Filters | dict | None = None, *, store=None, vectors=None,
                     space=None) -> dict[str, int]:
    """Per filter of these options that needs metadata (license, parameter count, pipeline tag, a Hub repo), how many
    of the models ``benchmark`` restricts to lack it, so that the filter drops them whatever they are (as
    ``find_models`` reports ``missing_metadata``); ``{}`` without such a filter."""
    flt = filters if isinstance(filters, Filters) else Filters.from_dict(filters)
    if not _needs_metadata(flt):  # no such filter (most pages): no store is asked
        return {}
    store, vectors, sp, name = _stores(store, vectors, space)
    return _missing(vectors, name, _models_where(store, benchmark, None), flt)


def _needs_metadata(flt: Filters) -> list[str]:
    """The filters of ``flt`` that need metadata (:data:`indexer.find._MISSING`)."""
    from .find import _MISSING

    return [f for f in flt.conditions() if f in _MISSING]


def _missing(vectors, name: str, base: dict, flt: Filters) -> dict[str, int]:
    """:func:`missing_metadata` in the index ``name`` of the models the payload filter ``base`` restricts to."""
    from .find import _MISSING

    return {f: vectors.count(name, "models", _merge(base, _MISSING[f]), missing_ok=True) for f in _needs_metadata(flt)}


#: the query parameters of ``GET /v1/models`` (and the keys of :func:`models_page`'s ``missing_metadata``) -> the
#: :class:`~indexer.find.Filters` field each sets
FILTER_PARAMS = {"license": "licenses", "min_params": "min_params", "max_params": "max_params",
                 "pipeline_tag": "pipeline_tag", "exclude_gated": "exclude_gated", "open_only": "open_only",
                 "min_evidence": "min_evidence", "measured_on": "benchmark"}


def models_page(benchmark: str | None = None, offset: int = 0, limit: int | None = None,
                filters: Filters | dict | None = None, *, store=None, vectors=None, space=None) -> dict:
    """One page of :func:`list_models` with what it is out of: ``{"models", "offset", "limit", "total", "next_offset",
    "missing_metadata"}`` (``next_offset`` null on the last page; ``missing_metadata`` keyed by the query parameter of
    :data:`FILTER_PARAMS`), the answer of ``GET /v1/models`` and of ``taskspace models --json``."""
    offset, limit = _page(offset, limit)
    # the space resolved and the benchmark checked once for the page, its total and its missing counts (before, each of
    # the three read the spaces and the benchmarks from SQL again)
    store, vectors, sp, name = _stores(store, vectors, space)
    flt = filters if isinstance(filters, Filters) else Filters.from_dict(filters)
    names: dict = {}
    where = _models_where(store, benchmark, flt, names, index=(vectors, sp))
    got = _listed(store, vectors, sp, name, where, offset, None if limit is None else limit + 1)
    # per filter that needs metadata (license, sizes, ...): how many models lack it, as a search says
    missing = _missing(vectors, name, _models_where(store, benchmark, None, names), flt) if _needs_metadata(flt) else {}
    total = vectors.count(name, "models", where or None, missing_ok=True)
    more = limit is not None and len(got) > limit
    return {"models": got[:limit], "offset": offset, "limit": limit, "total": total,
            "next_offset": offset + limit if more else None,
            "missing_metadata": {k: missing[v] for k, v in FILTER_PARAMS.items() if v in missing}}


def _models_where(store, benchmark: str | None, filters: Filters | dict | None, names: dict | None = None,
                  index: tuple | None = None) -> dict:
    """The payload filter of :func:`list_models`' options (unknown benchmarks raise NotFoundError naming close ones).
    ``names``: a request's memo of SQL's benchmark names (read here once when a benchmark is given). ``index``: the
    (vectors, space) listed, where a benchmark SQL knows and the index does not hold yet is an error
    (:func:`indexer.find.require_indexed_benchmark`), not an empty listing."""
    flt = filters if isinstance(filters, Filters) else Filters.from_dict(filters)
    # a blank or unusable name is refused as a benchmark query refuses it, in its words and order (one bad name, one
    # message), not looked up as an unknown benchmark
    if benchmark is not None:
        check_benchmark_name(benchmark)
        # "beta ", "\u200bbeta": the benchmark it names, as a filter's is (Filters)
        benchmark = strip_invisible(benchmark)
    conds = dict(flt.conditions())
    names = {} if names is None else names
    for given, item in ((benchmark, "benchmark"), (flt.benchmark, "filters.benchmark")):
        if given is not None:
            if "known" not in names:
                names["known"] = [b.name for b in store.list_benchmarks()]
            known = names["known"]
            if given not in known:
                raise suggest(given, known, "benchmark", item=item)
            if index is not None:
                require_indexed_benchmark(store, *index, given, item)
    if benchmark is not None:
        conds["benchmark"] = {"benchmarks": {"all": list(dict.fromkeys([benchmark, *([flt.benchmark] if flt.benchmark else [])]))}}
    return _merge(*conds.values())


def list_benchmarks(*, store=None) -> list[dict]:
    """Every benchmark by name: ``{"name", "group", "prompts", "models"}`` (models: how many were measured on it),
    what ``taskspace benchmarks --json`` prints. Without ``store``, the configured one.

    Raises :class:`~indexer.errors.InputError` (a ValueError) for a ``store`` that is no store (``.item`` ``store``);
    :class:`~indexer.errors.NotFoundError` (a LookupError) for a home never indexed, or one whose database holds no
    benchmark (nothing ingested: the empty-index error :func:`list_models` raises there; ``.item`` None);
    :class:`~indexer.errors.StoreError` when the database cannot be used. All derive from
    :class:`~indexer.errors.IndexerError`."""
    from .query import empty_index

    check_stores(store)  # a URL given for it: an InputError naming store, not an AttributeError from SQL's call
    if store is None:  # SQL alone: the shared pair's vector store would hold the embedded folder for nothing
        from .query import _shared_sql

        store = _shared_sql()  # no database: its error, and none made (query.open_existing_store), as `models` says
    counts = store.benchmark_model_counts()
    rows = [{"name": b.name, "group": b.group, "prompts": int(b.n_prompts), "models": counts.get(b.name, 0)}
            for b in store.list_benchmarks()]
    if not rows:  # a database with nothing ingested: the error list_models, GET /v1/models and `taskspace models`
        # give there (before, [] here and from GET /v1/benchmarks, while `taskspace benchmarks` gave that error)
        raise empty_index(store)
    if any(r["prompts"] == 0 for r in rows):  # a pulled index has neither prompts nor outcomes in SQL: the records'
        prompts, models = _published_counts(store)  # counts (before, every row said 0 prompts, 0 models)
        for r in rows:
            if r["prompts"] == 0:
                r["prompts"], r["models"] = prompts.get(r["name"], 0), len(models.get(r["name"], ()))
    return rows


def _published_counts(store) -> tuple[dict[str, int], dict[str, set]]:
    """(benchmark -> prompts its vector is the mean of, benchmark -> the models whose vector was fitted on it), over
    every space, from the vectors SQL holds (what a pull imported)."""
    prompts: dict[str, int] = {}
    models: dict[str, set] = {}
    for sp in store.list_spaces():
        for bv in store.load_benchmark_vectors(sp.id):
            prompts[bv.benchmark] = max(prompts.get(bv.benchmark, 0), int(bv.n_prompts or 0))
        for mv in store.load_model_vectors(sp.id):
            for b in mv.benchmarks or ():
                models.setdefault(b, set()).add(mv.model)
    return prompts, models


class _EveryRow:
    """The model-independent part of :func:`model_detail`'s strengths on a coverage-aware or centred map
    (:func:`_coverage_rows`): each benchmark row's every-model logit (``every``), and what one model's own logit
    needs besides its two scores: each model's coverage share per row (``shares``, by ``index``), each row's
    centring of the models nothing links to it (``mixes``: the weight and constant per distinct benchmark list,
    ``of`` each model's list, ``apart`` where they are not (1, 0)), the folded rows and the uncovered ones with their
    constants. Memory: 8 bytes per model and row for ``every`` and as much for ``shares`` (32,823 models x 23 rows:
    6 MB each), the keys and their index (about 3 MB there)."""

    def __init__(self, every, keys, shares, mixes, of, Bq, U, d0):
        self.every, self.shares, self.mixes, self.of, self.Bq, self.U, self.d0 = every, shares, mixes, of, Bq, U, d0
        self.index = {k: i for i, k in enumerate(keys)}

    def own(self, vectors, name: str, key: str) -> np.ndarray:
        """Model ``key``'s logit on each row (NaN where it has no point): its covered and uncovered scores read by id
        (two engine calls, one model), blended by its share and centred as its row's every-model value is."""
        from .query import coverage_logit

        n = len(self.every)
        b1s = vectors.scores_of_each(name, "models", self.Bq, [[key]] * n)
        b0s = vectors.scores_of_each(name, "models", self.U, [[key]] * n)
        i = self.index.get(key)
        mine = []
        for r, (b1, b0, d0) in enumerate(zip(b1s, b0s, self.d0)):
            if key not in b1 or key not in b0:
                mine.append(np.nan)
                continue
            c = 1.0 if i is None else float(self.shares[r, i])
            w, cc = (1.0, 0.0) if i is None else _centring(self.mixes[r], self.of[i])
            mine.append(w * coverage_logit(c, b1[key], b0[key], d0) + cc)
        return np.array(mine, dtype=np.float64)


def _centring(mix: tuple | None, j: int) -> tuple[float, float]:
    """The ``(w, c)`` a row's centring (``mix``: its weights, constants and where they are not (1, 0), per distinct
    benchmark list; None: none) gives the models of benchmark list ``j``."""
    return (float(mix[0][j]), float(mix[1][j])) if mix is not None and mix[2][j] else (1.0, 0.0)


def _coverage_rows(store, vectors, sp, name: str, pred, bench: list, Bq: np.ndarray,
                   changed: dict | None = None) -> _EveryRow:
    """Every model's score on each benchmark of ``bench`` (its hits, with vectors; ``Bq`` their folded rows) as a
    benchmark search ranks by it where the calibration weighs coverage (:func:`indexer.query.coverage_ranked`):
    ``c L1 + (1 - c) L0``, ``c`` the model's share of the benchmark's nearest own prompts it was observed on, L1 its
    score on the folded row, L0 that with the uncovered weight of its own deviation; centred where nothing links the
    model to the row's nearest prompts; with what one model's own value needs (:meth:`_EveryRow.own`). Before,
    ``c = 1`` for every model: a model never measured on a benchmark was ranked there by its extrapolated deviation
    (the bundled sample plus evalarena_code: microsoft/phi-2 "rank 39 of 147" on mmlu_pro/history, 94th in `search -b
    mmlu_pro/history`). ``changed``: the page's memo of :func:`indexer.query.changed_since_solved` (the shares fill
    it for every model).

    Each row's values come without the models they are of, except where both scores are needed: ``c L1 + (1 - c)
    L0`` is exactly L1 where ``c = 1`` and exactly L0 where ``c = 0`` (IEEE: ``x + 0.0 * y == x`` for finite y), so
    those models' values are L1's (or L0's) scores alone, read without their point ids (:meth:`score_values`), and
    only the models of a fractional share are read with their ids and blended. Before, both rows were read for every
    model with its id: 1.5 million ids a page on a home of 32,823 models, 12.6-15.2 s of CPU a page there against
    5.1-6.3 s then (docs/BENCHMARKS.md, "A model's page on 32,823 models"). The rows are the same for every model's
    page: none is singled out (before, the page's own model was read with its id among the blended ones, so a row's
    mean added the same values in another order on each page); :func:`_every_rows` keeps them."""
    from .find import _near, _near_hits
    from .posterior import COVERAGE_PROMPTS
    from .query import _all_measured, coverage_logit, observed_share_rows

    # each model's payload fields and point id: the scan reads the id anyway (the Edge binding builds it), and the
    # rows' engine calls name every model by it (before, each of the 32,823 ids was made again from its key)
    info, ids = {}, {}
    for h in vectors.scan(name, "models", fields=("benchmarks", "pattern"), missing_ok=True):
        info[h.key], ids[h.key] = h.payload, h.id
    keys = list(info)
    folded = []  # each row's uncovered query and its constant
    for h in bench:
        pred.fold(h.vector)  # the map's offset for this row (fold_uncovered's constant is relative to it)
        folded.append(pred.fold_uncovered(np.asarray(h.vector, dtype=np.float64)))
    # every neighbourhood's shares with one read of SQL for them all (before, two or three reads per benchmark)
    nears = [[_near(x) for x in _near_hits(vectors, sp, h.vector, h.key, store=store)[:COVERAGE_PROMPTS]]
             for h in bench]
    asked = [near for near in nears if near]
    got = iter(observed_share_rows(store, keys, asked, {k: p.get("benchmarks") for k, p in info.items()},
                                   _all_measured(store, sp), space=sp,
                                   patterns={k: p.get("pattern") for k, p in info.items()}, changed=changed)
               if asked else [])
    # each row's centring of the models nothing links to its benchmark's nearest prompts (unlinked_mix: ``w own +
    # c``, the average model's of those prompts' groups) per distinct benchmark list, with where it is not (1, 0);
    # None where the map centres nothing
    mix_rows = []
    distinct: dict[tuple, int] = {}  # the models' benchmark lists, each once (a few among tens of thousands)
    of = np.array([distinct.setdefault(tuple(info[k].get("benchmarks") or ()), len(distinct)) for k in keys], int)
    for near, q1 in zip(nears, Bq):
        pred.near_benchmarks = [x["benchmarks"] for x in near] or None
        if not pred.centred:
            mix_rows.append(None)
            continue
        w, c = pred.calibration.unlinked_mix(np.asarray(q1, np.float64), [list(t) for t in distinct],
                                             pred.near_benchmarks)
        mix_rows.append((w, c, (w != 1.0) | (c != 0.0)))
    pred.near_benchmarks = None
    # each model's share on each row, in the order of ``keys`` (1 where the row has no neighbourhood)
    at = np.ones((len(nears), len(keys)))
    for r, near in enumerate(nears):
        if near:
            at[r] = next(got)
    # per row: the models of c = 1 (L1 alone), of c = 0 (L0 alone), those of c = 0 a row centres at one pair (its
    # groups none of the nearest prompts lies in: ``w L0 + c``; the pair of the first such model) and the rest (both,
    # blended), each in the order of ``keys``; as arrays over the models (before, a loop over every model and row in
    # Python: 1.5 s of a page on 32,823 models with the dicts of each row's centring)
    ones, zeros, far, both, far_pair, both_at = [], [], [], [], [], []
    for c, mix in zip(at, mix_rows):
        apart = np.zeros(len(keys), bool) if mix is None else mix[2][of]
        gf = np.zeros(len(keys), bool)
        pair = None
        first = np.flatnonzero(apart & (c == 0.0))
        if first.size:
            j = of[first[0]]
            pair = (float(mix[0][j]), float(mix[1][j]))
            gf = apart & (c == 0.0) & (mix[0][of] == pair[0]) & (mix[1][of] == pair[1])
            gf[first[0]] = True  # (its own pair, whatever it is)
        gb = (apart & ~gf) | (~apart & (c != 1.0) & (c != 0.0))
        ones.append([keys[i] for i in np.flatnonzero(~apart & (c == 1.0))])
        zeros.append([keys[i] for i in np.flatnonzero(~apart & (c == 0.0))])
        far.append([keys[i] for i in np.flatnonzero(gf)])
        both_at.append(np.flatnonzero(gb))
        both.append([keys[i] for i in both_at[-1]])
        far_pair.append(pair or (1.0, 0.0))

    def only(group: list[list[str]], rest: list[list[str]]) -> dict:
        """``score_values``' arguments for the rows' ``group`` of models: those keys, or every model but the
        others (``rest``), whichever list is shorter."""
        if sum(map(len, group)) <= sum(map(len, rest)):
            return {"keys": group}
        return {"exclude": rest}

    U = np.stack([q0 for q0, _ in folded]).astype(np.float32)
    conds: dict = {}  # each distinct list's id condition, made once for the five calls (before, 112 lists of 89,332
    # ids made a page on 32,823 models; 18 distinct of 33,853)
    l1 = vectors.score_values(name, "models", Bq, **only(ones, [z + f + b for z, f, b in zip(zeros, far, both)]),
                              memo=ids, conds=conds)
    l0 = vectors.score_values(name, "models", U, **only(zeros, [o + f + b for o, f, b in zip(ones, far, both)]),
                              memo=ids, conds=conds)
    lf = (vectors.score_values(name, "models", U, **only(far, [o + z + b for o, z, b in zip(ones, zeros, both)]),
                               memo=ids, conds=conds)
          if any(far) else [np.zeros(0)] * len(far))
    l1_both = vectors.scores_of_each(name, "models", Bq, both, memo=ids, conds=conds)
    l0_both = vectors.scores_of_each(name, "models", U, both, memo=ids, conds=conds)
    blended = []
    for c, mix, v1, v0, vf, (wf, cf), b1, b0, gb, (_, d0) in zip(at, mix_rows, l1, l0, lf, far_pair, l1_both,
                                                                  l0_both, both_at, folded):
        def centred(i: int):  # model i's logit on this row, centred where nothing links it (unlinked_mix)
            k = keys[i]
            w, cc = _centring(mix, of[i])
            return w * coverage_logit(float(c[i]), b1[k], b0[k], d0) + cc

        mixed = [centred(i) for i in gb if keys[i] in b1 and keys[i] in b0]
        blended.append(np.concatenate([v1, v0 + d0, wf * (vf + d0) + cf, np.asarray(mixed, dtype=np.float64)]))
    return _EveryRow(blended, keys, at, mix_rows, of, Bq, U, [d0 for _, d0 in folded])


#: :func:`_every_rows`' kept rows: (database, space, index, vector store) -> (the state they were computed in, rows)
_EVERY: dict = {}
_EVERY_LOCK = threading.Lock()
#: how many (database, space, index) :data:`_EVERY` keeps (the oldest dropped first): one a space in practice
EVERY_KEPT = 4


class _Flight:
    """One computation of :func:`_every_rows` under way, for one (slot, state): the pages asking for the same rows
    meanwhile wait for it (``waiting`` of them) instead of computing them again; ``rows`` once it is done, None when
    it failed (each waiter then computes its own)."""

    def __init__(self):
        self.done = threading.Event()
        self.rows = None
        self.waiting = 0


#: :func:`_every_rows`' computations under way, by (slot, state), guarded by :data:`_EVERY_LOCK`
_FLIGHTS: dict = {}


def _state(store, vectors, sp, name: str, bench: list, pred) -> tuple | None:
    """What the every-model rows of space ``sp`` (index ``name``) are computed from, as a value that changes when
    any of it does: SQL's (:meth:`~indexer.store.sql.Store.state_digest`: the outcomes, the vectors' digests, the
    benchmark vectors, the calibration map, its links and centres, the prior), the vector index's (each kind's live
    collection and its number of points), the benchmark rows read for this page and the map's fold of them; None
    when the store cannot tell (no reuse)."""
    from .store.vectors import KINDS

    digest = getattr(store, "state_digest", None)
    if digest is None:
        return None
    index = tuple((kind, vectors.alias_target(name, kind), vectors.count(name, kind, missing_ok=True)) for kind in KINDS)
    rows = tuple((h.key, np.asarray(h.vector, dtype=np.float32).tobytes()) for h in bench)
    return digest(sp.id), index, rows, bool(pred.coverage_aware or pred.centring)


def _every_rows(store, vectors, sp, name: str, pred, bench: list, Bq: np.ndarray, changed: dict | None = None,
                keep: bool = True):
    """The model-independent part of a model page's strengths: on a coverage-aware or centred map the
    :class:`_EveryRow` of :func:`_coverage_rows`, else each row's every-model score (:meth:`score_values`). Kept for
    the process by (database, space, index) with the state it was computed in (:func:`_state`, read before it is
    computed), and reused while that state reads the same: on a home of 32,823 models the rows cost 4.5-8 s a page,
    the state about 0.1 s (docs/BENCHMARKS.md, "A model's page on 32,823 models"). A state that changes while the
    rows are computed is the next page's to see: it differs from the one kept with them. ``keep`` False: computed,
    neither looked up nor kept, and the state not read (0.15-0.5 s of a one-shot page on that home).

    Pages asking at once (a fresh server's first pages) compute the rows once per (slot, state): the first computes
    them, the others of the same state wait for its rows (:class:`_Flight`; one that fails leaves each waiter to
    compute its own); a page of another state computes its own beside it."""
    from .query import store_identity

    state = _state(store, vectors, sp, name, bench, pred) if keep else None
    if state is None:
        return _compute_every(store, vectors, sp, name, pred, bench, Bq, changed)
    slot = (store_identity(store), sp.id, name, getattr(vectors, "where", id(vectors)))
    while True:
        with _EVERY_LOCK:
            kept = _EVERY.get(slot)
            if kept is not None and kept[0] == state:
                return kept[1]
            flight = _FLIGHTS.get((slot, state))
            if flight is None:  # this page computes them
                flight = _FLIGHTS[(slot, state)] = _Flight()
                break
            flight.waiting += 1
        flight.done.wait()
        if flight.rows is not None:
            return flight.rows
        # the computation failed: compute them here (the loop takes the rows kept meanwhile, or a flight begun)
    try:
        rows = _compute_every(store, vectors, sp, name, pred, bench, Bq, changed)
        flight.rows = rows
        with _EVERY_LOCK:
            _EVERY.pop(slot, None)
            _EVERY[slot] = (state, rows)
            while len(_EVERY) > EVERY_KEPT:
                _EVERY.pop(next(iter(_EVERY)))
    finally:
        with _EVERY_LOCK:
            _FLIGHTS.pop((slot, state), None)
        flight.done.set()
    return rows


def _compute_every(store, vectors, sp, name: str, pred, bench: list, Bq: np.ndarray, changed: dict | None):
    """:func:`_every_rows`' rows computed (not kept)."""
    if pred.coverage_aware or pred.centring:
        return _coverage_rows(store, vectors, sp, name, pred, bench, Bq, changed)
    # each benchmark row: every model's (ranking) score, without which model it is (none is needed)
    return vectors.score_values(name, "models", Bq)


def model_detail(model_id: str, *, store=None, vectors=None, space=None, strengths: int = STRENGTHS,
                 keep: bool = True) -> dict:
    """One model: identity, metadata, ``benchmarks`` (observed accuracy and n on each, by name; with no outcomes
    here, the published accuracy and n (None where the record carries none) and ``benchmarks_note`` :data:`PUBLISHED`,
    else None) and ``strengths``
    (the benchmarks where its predicted success is highest relative to the other indexed models: ``probability``,
    ``mean`` over the models, ``delta``, its ``rank`` among ``of`` models, best first), and ``space``: the index name
    of the space they are of (``space``, else the default). ``keep``: keep the every-model rows of the strengths for
    the process's next pages (:func:`_every_rows`); False for a process that asks one page (``taskspace model``),
    which then neither reads the index's state they are kept with nor keeps them: the same page. ``model_id``: its
    key, Hub id or any alias. What ``taskspace model ID --json`` prints.

    Raises :class:`~indexer.errors.InputError` (a ValueError) for a bad argument, ``.item`` naming it (``model``,
    ``strengths``); :class:`~indexer.errors.NotFoundError` (a LookupError) for an unknown model (``.item``
    ``model``; the message names the close ones) or space (``space``), or an empty index or a home never indexed
    (``.item`` None); :class:`~indexer.errors.StoreError` when the store cannot be used. All derive from
    :class:`~indexer.errors.IndexerError`."""
    if not isinstance(model_id, str):  # said as what it is (before: "must be a non-empty string" for 5 or a list)
        raise InputError(f"a model id must be a string, not {type(model_id).__name__}", item="model")
    if not model_id.strip():
        raise InputError("a model id must be a non-empty string", item="model")
    if bad := name_problem(model_id):  # the model the path (or ID) names, not compare mode's "models" (its name before)
        raise InputError(f"model {model_id[:60]!r} {bad}", item="model")
    if isinstance(strengths, bool) or not isinstance(strengths, (int, np.integer)) or strengths < 0:
        # as list_models' offset and limit (before, "2": a TypeError from inside; -1: silently none)
        raise InputError(f"strengths must be a non-negative integer, not {strengths!r}", item="strengths")
    store, vectors, sp, name = _stores(store, vectors, space)
    # the model the path (or ID) names: "model", as for a blank or NUL id (before: null), not compare mode's "models"
    try:
        (key,) = _resolve_models(store, [model_id], item="model")
    except NotFoundError as exc:
        raise _a_benchmark(store, model_id, exc) from None
    rec = store.get_model(key)
    hit = vectors.get(name, "models", [key], with_vectors=True).get(key)
    payload = dict(hit.payload) if hit is not None else {
        "kind": getattr(rec, "kind", None), "license": getattr(rec, "license", None),
        "num_parameters": getattr(rec, "num_parameters", None), "pipeline_tag": getattr(rec, "pipeline_tag", None),
        "gated": getattr(rec, "gated", None) not in (None, "", "false", "False"),
        "gated_mode": getattr(rec, "gated", None)}
    if hit is None and hasattr(store, "aliases_of"):
        payload["aliases"] = store.aliases_of(key)
    blocks: dict[str, tuple[list, list]] = {}
    for _, b, pids, scores in store.outcome_blocks([key]):
        got = blocks.setdefault(b, ([], []))
        got[0].append(pids)
        got[1].append(scores)
    observed = []
    for b in sorted(blocks):
        u, mean = _means(*blocks[b])
        observed.append({"name": b, "accuracy": _num(float(mean.mean()), 4) if len(u) else None, "n": int(len(u))})
    note = None
    if not observed and payload.get("accuracy_by_benchmark"):
        # no outcomes here (a pulled index): the accuracy and n per benchmark its record was published with
        # (before, an empty table under "N prompts measured")
        ns = payload.get("n_by_benchmark") or {}  # its n, where the record carries it (records of old: unknown)
        observed = [{"name": b, "accuracy": _num(a, 4), "n": ns.get(b)}
                    for b, a in sorted(payload["accuracy_by_benchmark"].items()) if a is not None]
        note = PUBLISHED if observed else None
    best = []
    changed: dict[str, bool] = {}  # whose results changed since their vector was solved: read once for the page
    if hit is not None and strengths > 0:
        # an index of another dimension than SQL's space says `taskspace reindex` rebuilds it, as a search does
        # (before: "query vector has 778 dimensions ...; embed the query with the space's encoder", exit 1)
        with _index_in_step(vectors, sp):
            best = _strengths(store, vectors, sp, name, key, hit, payload, blocks, strengths, changed, keep)
    # its results in SQL (the observed accuracy above) changed since its vector was solved: an index pass between its
    # ingest and its publish, or `taskspace ingest` without `taskspace index`; as a search's result says it
    # (before, the page showed the new accuracies beside strengths predicted from the old ones without a word)
    from .query import changed_since_solved

    # (read once for the page: the strengths' coverage shares asked it for every model, this one among them)
    results_changed = hit is not None and key in changed_since_solved(store, sp, [key], known=changed)
    # its card facts from the row read above (before, card_facts read the same row again)
    facts = facts_of([rec]).get(key) if rec is not None else None
    return {**_identity(key, payload), "metadata": _metadata(payload, facts),
            "indexed": hit is not None,
            "n_prompts": payload.get("n_prompts"), "benchmarks": observed, "benchmarks_note": note, "strengths": best,
            "results_changed": bool(results_changed), "space": name}


def _a_benchmark(store, name: str, exc: NotFoundError) -> NotFoundError:
    """``exc`` (an unknown model) for a name that is a benchmark's: says so and what lists or ranks the models on it.
    Before, `taskspace model truthfulqa` on a home of metabench_openllm's rows was "did you mean truthfulqa-B:r4280,
    truthfulqa-B:r4279, ...", five anonymous rows."""
    if name not in {b.name for b in store.list_benchmarks()}:
        return exc
    from .errors import CLI

    if CLI.get():  # each a command, the name as a shell takes it ("mmlu_pro/computer science" is one benchmark)
        import shlex

        lists, ranks = (f"`taskspace {cmd} -b {shlex.quote(name)}`" for cmd in ("models", "search"))
    else:  # each a call (before, the commands for a Python caller too)
        lists, ranks = (f"indexer.{call}(benchmark={name!r})" for call in ("list_models", "find_models"))
    err = NotFoundError(f"unknown model {name!r}: {name} is a benchmark; {lists} lists the models "
                        f"measured on it, {ranks} ranks the models for it")
    err.item = getattr(exc, "item", None)
    return err


def _strengths(store, vectors, sp, name: str, key: str, hit, payload: dict, blocks: dict, strengths: int,
               changed: dict | None = None, keep: bool = True) -> list[dict]:
    """:func:`model_detail`'s ``strengths``: the ``strengths`` benchmarks where the model's predicted success is highest
    relative to the other indexed models, best first."""
    from .query import predictor

    bench = list(vectors.scan(name, "benchmarks", with_vectors=True, missing_ok=True))
    if not bench:
        return []
    B = np.stack([h.vector for h in bench]).astype(np.float32)
    if B.shape[1] != int(sp.dim):  # a benchmarks index of another dimension (_index_in_step says which, and what to do)
        raise DimensionError(f"benchmark vectors have {B.shape[1]} entries, the space has {sp.dim}", item="benchmarks")
    pred = predictor(store, sp)
    folds = []  # each benchmark row as the search folds it (the level/deviation map) and its offset
    for b in B:
        folds.append((pred.fold(b), pred.offset))
    Bq = np.stack([f for f, _ in folds]).astype(np.float32)
    # every model's value on each row, the same for every model's page (kept while the index's state is the same)
    rows = _every_rows(store, vectors, sp, name, pred, bench, Bq, changed, keep)
    if isinstance(rows, _EveryRow):
        # each model's logit as `search --benchmark B` gives it (its coverage of B; centred where nothing links it)
        every, mine = rows.every, rows.own(vectors, name, key)
    else:
        every = rows
        mine = Bq.astype(np.float64) @ np.asarray(hit.vector, dtype=np.float64)
    # measured: outcomes in SQL, or a benchmark its vector was fitted on (a pulled index has only the latter)
    fitted = set(payload.get("benchmarks") or [])
    rows = []
    for h, vals, s, (_, offset) in zip(bench, every, mine, folds):
        pred.offset = offset
        probs = pred.probability(vals)
        p = float(pred.probability(s))
        rows.append({"benchmark": h.key, "probability": _num(p, 4), "mean": _num(float(probs.mean()), 4),
                     "delta": _num(p - float(probs.mean()), 4), "rank": int((vals > s + 1e-9).sum()) + 1,
                     "of": int(vals.size), "measured": h.key in blocks or h.key in fitted})
    return order_strengths(rows)[:strengths]


def order_strengths(rows: list[dict]) -> list[dict]:
    """Strengths rows best first by their difference as shown (:func:`shown_difference`, the page's "+N pts"), ties by
    the exact ``delta``: before, by the exact ``delta`` alone, so a list of rounded differences could read +25, +24,
    +24, +25."""
    return sorted(rows, key=lambda r: (-shown_difference(r), -(r["delta"] or 0.0)))


def _whole_pct(x: float) -> int:
    """A share as the whole percentage shown (halfway rounded up, as the CLI's ``_pct`` and the page's ``Math.round``)."""
    import math

    return math.floor(100 * x + 0.5)


def shown_difference(row: dict) -> int:
    """A strengths row's difference in points as the model page shows it: that of its two whole percentages
    (``probability`` and ``mean``, each rounded as shown), 0 where either is unknown."""
    if row.get("probability") is None or row.get("mean") is None:
        return 0
    return _whole_pct(row["probability"]) - _whole_pct(row["mean"])
