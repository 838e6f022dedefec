"""indexer.browse: models (filters, paging, benchmark), benchmarks (prompts, models measured), one model's record
(observed accuracy and n, strengths relative to the other models), close-name suggestions."""

import re

import numpy as np
import pytest

from indexer import list_benchmarks, list_models, model_detail
from indexer.errors import InputError, NotFoundError

from helpers import TOPICS, index_sources, outcomes

ALPHA = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(12)]
BETA = [f"Write a Python function number {j} that sorts a list of integers" for j in range(10)]


@pytest.fixture
def idx(tmp_path, encoder):
    rng = np.random.default_rng(7)
    a = outcomes(rng, ["org/a", "org/b", "gpt-4o"], 12)
    b = outcomes(rng, ["org/a", "org/c"], 10)
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", ALPHA, a), (tmp_path / "b", "beta", BETA, b)])
    store.upsert_models([{"key": "org/a", "license": "mit", "num_parameters": 8_000_000_000},
                         {"key": "org/b", "license": "apache-2.0", "num_parameters": 70_000_000_000}])
    from indexer import sync

    sync.push_models(store, vectors, store.list_spaces()[0].id)
    yield store, vectors, {"alpha": a, "beta": b}
    vectors.close()
    store.close()


def test_list_models_filters_and_pages(idx):
    store, vectors, _ = idx
    kw = {"store": store, "vectors": vectors}
    every = list_models(**kw)
    assert [m["model"] for m in every] == ["gpt-4o", "org/a", "org/b", "org/c"]
    assert every[0]["api_only"] and every[1]["hub_id"] == "org/a" and every[1]["metadata"]["params"] == 8_000_000_000
    assert every[1]["benchmarks"] == ["alpha", "beta"] and every[1]["n_prompts"] == 22
    assert [m["model"] for m in list_models(benchmark="beta", **kw)] == ["org/a", "org/c"]
    assert [m["model"] for m in list_models(offset=1, limit=2, **kw)] == ["org/a", "org/b"]
    assert [m["model"] for m in list_models(filters={"max_params": "8B"}, **kw)] == ["org/a"]
    assert [m["model"] for m in list_models(filters={"open_only": True}, benchmark="alpha", **kw)] == ["org/a", "org/b"]
    with pytest.raises(NotFoundError, match="did you mean beta"):
        list_models(benchmark="betta", **kw)


def test_a_page_asked_with_numpy_integers_is_plain_json(idx):
    """`models_page` (the answer of `GET /v1/models` and `taskspace models --json`) and `list_models` asked with numpy
    integers (`offset=np.int64(1)`, as read from an array) answer as with ints, in plain ints: before, the page's
    `offset`, `limit` and `next_offset` were numpy values and `json.dumps` of it failed ("Object of type int64 is not
    JSON serializable")."""
    import json

    from indexer.browse import models_page

    store, vectors, _ = idx
    kw = {"store": store, "vectors": vectors}
    page = models_page(offset=np.int64(1), limit=np.int32(2), **kw)
    assert page == models_page(offset=1, limit=2, **kw) and json.loads(json.dumps(page)) == page
    assert [type(page[k]) for k in ("offset", "limit", "next_offset")] == [int, int, int]
    assert list_models(offset=np.int64(1), limit=np.int64(2), **kw) == list_models(offset=1, limit=2, **kw)
    with pytest.raises(InputError, match="offset must be a non-negative integer") as err:
        models_page(offset=np.int64(-1), **kw)
    assert err.value.item == "offset"


def test_a_limit_below_one_is_an_input_error_naming_limit_as_the_cli_and_http_refuse_it(idx):
    """`models_page(limit=0)` and `list_models(limit=0)` are the InputError naming `limit` (a positive integer, or None
    for every model), as `taskspace models --limit 0` (exit 2) and `GET /v1/models?limit=0` (422) refuse it; before,
    the library answered an empty page whose `next_offset` was its own `offset` while `total` said more models
    followed, so a program paging by `next_offset` asked the same empty page forever."""
    from indexer.browse import models_page

    store, vectors, _ = idx
    kw = {"store": store, "vectors": vectors}
    for call in (models_page, list_models):
        for bad in (0, np.int64(0), -1):
            with pytest.raises(InputError, match=rf"limit must be a positive integer \(or None for every model\), "
                                                 rf"not {re.escape(repr(bad))}") as err:
                call(offset=2, limit=bad, **kw)
            assert err.value.item == "limit"
    page, seen = models_page(limit=1, **kw), []
    while True:  # paging by next_offset ends
        seen += [m["model"] for m in page["models"]]
        if page["next_offset"] is None:
            break
        page = models_page(offset=page["next_offset"], limit=1, **kw)
    assert seen == [m["model"] for m in list_models(**kw)] == [m["model"] for m in models_page(**kw)["models"]]


def test_a_models_index_that_lost_its_models_is_a_store_error(idx):
    """The models collection emptied, or its folder removed, while SQL holds the vectors: the model list was empty
    (GET /v1/models 200 with no models) as if nothing had been indexed. Now it is the StoreError a search gives (exit 3,
    HTTP 503) saying `taskspace reindex`, with a filter or without; a filter that matches no model of a whole index
    is still an empty list."""
    from indexer.errors import StoreError
    from indexer.space import space_name

    store, vectors, _ = idx
    kw = {"store": store, "vectors": vectors}
    (space,) = store.list_spaces()
    assert list_models(filters={"licenses": ["no-such-licence"]}, **kw) == []  # a whole index: the filter's answer
    vectors.delete(space_name(space), "models", store.model_vector_keys(space.id))
    with pytest.raises(StoreError, match=r"answered no model, though the database holds 4 model vector.*reindex"):
        list_models(**kw)
    # (with a filter too: the index holds no model at all; before, an empty list)
    with pytest.raises(StoreError, match=r"answered no model, though the database holds 4 model vector.*reindex"):
        list_models(filters={"licenses": ["mit"]}, **kw)


def test_list_benchmarks_counts_prompts_and_models(idx):
    store, _, _ = idx
    assert list_benchmarks(store=store) == [{"name": "alpha", "group": None, "prompts": 12, "models": 3},
                                            {"name": "beta", "group": None, "prompts": 10, "models": 2}]


def test_model_detail_observed_and_strengths(idx):
    store, vectors, outs = idx
    d = model_detail("org/a", store=store, vectors=vectors)
    assert d["hub_id"] == "org/a" and d["metadata"]["license"] == "mit"
    assert d["benchmarks"] == [{"name": b, "accuracy": round(float(np.mean(outs[b]["org/a"])), 4), "n": n}
                               for b, n in (("alpha", 12), ("beta", 10))]
    # strengths: the calibrated probability on each benchmark vector, relative to every indexed model's
    from indexer.query import predictor
    from indexer.space import space_name

    (space,) = store.list_spaces()
    name = space_name(space)
    pred = predictor(store, space)
    models = {h.key: h.vector for h in vectors.scan(name, "models", with_vectors=True)}
    want = {}
    for h in vectors.scan(name, "benchmarks", with_vectors=True):
        q = pred.fold(h.vector)  # the benchmark row as a search folds it (the level/deviation map)
        p = pred.probability(np.array([float(q @ v) for v in models.values()]))
        mine = float(pred.probability(float(q @ models["org/a"])))
        want[h.key] = mine - p.mean()
    got = {s["benchmark"]: s["delta"] for s in d["strengths"]}
    assert got == pytest.approx(want, abs=1e-3)
    from indexer.browse import order_strengths  # best first by the difference shown, ties by the exact one

    assert d["strengths"] == order_strengths(d["strengths"]) and {s["benchmark"] for s in d["strengths"]} == set(want)
    assert all(s["of"] == 4 and 1 <= s["rank"] <= 4 for s in d["strengths"])
    api = model_detail("gpt-4o(eval_results/gpt4o)", store=store, vectors=vectors)  # any alias finds it
    assert api["model"] == "gpt-4o" and api["api_only"] and api["hub_id"] is None
    with pytest.raises(NotFoundError, match="did you mean org/a"):
        model_detail("org/aa", store=store, vectors=vectors)


@pytest.mark.parametrize("strengths", ["2", -1, 2.5, True, None])
def test_a_bad_strengths_names_strengths(idx, strengths):
    """`model_detail(ID, strengths=S)` with S not a non-negative integer: an InputError naming `strengths`, as
    `list_models` does for `offset` and `limit`; before, "2" raised TypeError ('>' not supported between 'str' and
    'int') from inside and -1 answered no strengths without a word."""
    from indexer.errors import InputError

    store, vectors, _ = idx
    with pytest.raises(InputError, match=rf"strengths must be a non-negative integer, not {re.escape(repr(strengths))}") as err:
        model_detail("org/a", store=store, vectors=vectors, strengths=strengths)
    assert err.value.item == "strengths"
    assert len(model_detail("org/a", store=store, vectors=vectors, strengths=0)["strengths"]) == 0


def test_strengths_are_ordered_by_the_difference_shown():
    """The model page's strengths were sorted by the exact difference while the page shows the difference of two whole
    percentages, so a list could read +25, +24, +24, +25 (exact .2500 > .2498 > .2497 > .2496). Now by the shown
    difference, ties by the exact one."""
    from indexer.browse import order_strengths, shown_difference

    rows = [{"benchmark": b, "probability": p, "mean": m, "delta": round(p - m, 4)}
            for b, p, m in (("w", .6500, .4000), ("x", .6449, .3951), ("y", .6449, .3952), ("z", .6450, .3954))]
    got = order_strengths(rows)
    assert [shown_difference(r) for r in got] == [25, 25, 24, 24]
    assert [r["benchmark"] for r in got] == ["w", "z", "x", "y"]
    unknown = {"benchmark": "u", "probability": None, "mean": None, "delta": None}
    assert order_strengths([unknown, {"benchmark": "v", "probability": .3, "mean": .5, "delta": -.2}])[0] is unknown


def test_list_benchmarks_given_a_url_for_store_is_the_input_error_naming_store(idx):
    """`list_benchmarks(store="sqlite:///x.db")`: the InputError naming `store` and how to open one, as
    `find_models`, `list_models` and `model_detail` give; before, AttributeError: 'str' object has no attribute
    'benchmark_model_counts' (no IndexerError, no `.item`)."""
    with pytest.raises(InputError, match=r"store must be an SQL store .*open_store\(URL\).*not str") as err:
        list_benchmarks(store="sqlite:///x.db")
    assert err.value.item == "store"
