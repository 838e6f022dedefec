"""Queries over an indexed store: prompts or a benchmark -> ranked models, equal to e_i . q computed directly."""

import contextlib

import numpy as np
import pytest

from indexer.errors import NotFoundError
from indexer.pipeline import Indexer
from indexer.query import find_models
from indexer.sourcelist import SourceSpec
from indexer.store.sql import open_store
from indexer.store.vectors import VectorStore

from helpers import TOPICS, outcomes, write_table


@pytest.fixture
def indexed(tmp_path, encoder):
    rng = np.random.default_rng(5)
    write_table(tmp_path / "a", "alpha", outcomes(rng, ["m1", "m2", "m3", "m4"], 16), 16)
    store, vectors = open_store(), VectorStore.from_settings()
    Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "a"))])
    store.upsert_models([{"key": "m1", "license": "mit", "num_parameters": 7_000_000_000},
                         {"key": "m2", "license": "apache-2.0", "num_parameters": 70_000_000_000}])
    from indexer import sync

    sync.push_models(store, vectors, store.list_spaces()[0].id)
    yield store, vectors
    vectors.close()
    store.close()


def test_prompt_query_ranks_by_inner_product(indexed, encoder):
    """Two questions without options on an index without options (4 models: no prior): each model's score is
    ``mean over the prompts of (q . e_q + a)`` of an independent fit (tests/reference.py), not of represent/design."""
    import reference

    store, vectors = indexed
    prompts = ["What is item 3 of alpha about chemistry?", "A question on poetry"]
    got = find_models(prompts, top=4, store=store, vectors=vectors)
    texts = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(16)]
    S = np.array(list(outcomes(np.random.default_rng(5), ["m1", "m2", "m3", "m4"], 16).values()), dtype=float)
    X = np.asarray(encoder.encode(texts), dtype=np.float64)
    fits = reference.fit_all(np.hstack([X, np.zeros_like(X)]), np.zeros((16, 4)), S, intercept=True, prior="mean")
    Q = np.asarray(encoder.encode(prompts), dtype=np.float64)
    want = {m: float(np.mean(Q @ f.e[:384] + f.a)) for m, f in zip(["m1", "m2", "m3", "m4"], fits)}
    # ranked by the calibrated probability (the level/deviation map: not always the raw score's order)
    assert sorted(m.model for m in got) == sorted(want)
    assert all(a.probability >= b.probability for a, b in zip(got, got[1:]))
    for m in got:
        assert m.score == pytest.approx(want[m.model], abs=1e-4)


def test_queries_on_a_mixed_index_equal_a_first_principles_fit(tmp_path, encoder):
    """Prompts with and without answer options, 7 models (prior on; one observed only with options, one only
    without): a question asked without options (its options the mean of its neighbours': all 14 indexed prompts
    here, fewer than 50), a prompt with options, several prompts averaged, and a benchmark each score every model
    as an independent fit says (tests/reference.py)."""
    import reference
    from helpers import MIXED_MODELS, mc_text, mixed_outcomes, mixed_parts, write_mixed

    quiz, tasks = write_mixed(tmp_path)
    store, vectors = open_store(), VectorStore.from_settings()
    try:
        assert Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(quiz)), SourceSpec(str(tasks))]).status == "ok"
        Xq, Xo, T, is_mc = mixed_parts(encoder.encode)
        fits = reference.fit_all(np.hstack([Xq, Xo]), T, mixed_outcomes(), intercept=True, prior="mean")

        def scores(Q, O, Tq, m):
            return reference.mc_scores(fits, Q, O, Tq, m, is_mc, Xo, T)  # (7, q)

        def ranked(**kw):
            got = find_models(top=7, store=store, vectors=vectors, **kw)
            assert len(got) == 7
            return {m.model: m.score for m in got}

        bare = "What is the integral of 2x?"
        p = is_mc.mean()  # the share of the neighbours (all indexed prompts) with options
        Tq = np.array([[p, p * np.log1p(len(bare)), T[:, 2].mean(), T[:, 3].mean()]])
        want = scores(np.asarray(encoder.encode([bare]), dtype=np.float64), Xo.mean(axis=0, keepdims=True), Tq, [p])
        assert ranked(prompts=[bare]) == pytest.approx(dict(zip(MIXED_MODELS, want[:, 0])), abs=1e-4)

        question, opts = "Which clause makes a contract voidable?", ["Duress", "Consideration", "Offer"]
        block = "\n".join(f"{chr(65 + k)}. {o}" for k, o in enumerate(opts))
        Tq = np.array([[1.0, np.log1p(len(question)), np.log1p(len(block)), np.log(3)]])
        one = scores(np.asarray(encoder.encode([question]), dtype=np.float64),
                     np.asarray(encoder.encode([block]), dtype=np.float64), Tq, [1.0])[:, 0]
        assert ranked(prompts=[mc_text(question, opts)]) == pytest.approx(dict(zip(MIXED_MODELS, one)), abs=1e-4)
        both = (one + want[:, 0]) / 2  # several prompts: the mean of their rows, so of their scores
        assert ranked(prompts=[mc_text(question, opts), bare]) == pytest.approx(dict(zip(MIXED_MODELS, both)), abs=1e-4)

        m = is_mc.astype(float)
        at_prompts = scores(Xq, Xo, T, m)  # (7, 14)
        for bench, cols in (("quiz", slice(0, 8)), ("tasks", slice(8, 14))):
            mean = at_prompts[:, cols].mean(axis=1)
            assert ranked(benchmark=bench) == pytest.approx(dict(zip(MIXED_MODELS, mean)), abs=1e-4)
    finally:
        vectors.close()
        store.close()


def test_benchmark_query_and_filters(indexed):
    store, vectors = indexed
    ranked = find_models(benchmark="alpha", top=10, store=store, vectors=vectors)
    assert len(ranked) == 4
    only_mit = find_models(benchmark="alpha", filters={"license": ["mit"]}, store=store, vectors=vectors)
    assert [m.model for m in only_mit] == ["m1"]
    small = find_models(benchmark="alpha", filters={"num_parameters": {"lte": 8e9}}, store=store, vectors=vectors)
    assert [m.model for m in small] == ["m1"]
    with pytest.raises(NotFoundError, match="benchmark 'nope'"):
        find_models(benchmark="nope", store=store, vectors=vectors)


def test_the_lean_entry_point_is_the_one_search_without_the_evidence(indexed, monkeypatch):
    """indexer.query.find_models is a thin wrapper of indexer.find's search: the same models, scores, probabilities
    and intervals as indexer.find_models for prompts, a benchmark, lcb and filters (a raw payload filter or an
    indexer.Filters), the same checks (a string prompt is one prompt, not its characters; top=0 an InputError naming
    top, its own argument), and none of the full answer's extra work: no neighbourhood search, no SQL read of outcomes."""
    from indexer import Filters
    from indexer import find_models as find
    from indexer.errors import InputError
    from indexer.query import query_vector

    store, vectors = indexed
    text = "What is item 3 of alpha about chemistry?"
    reads, searched = [], []
    real_blocks, real_search = store.outcome_blocks, vectors.search
    monkeypatch.setattr(store, "outcome_blocks", lambda *a, **k: reads.append(1) or real_blocks(*a, **k))
    monkeypatch.setattr(vectors, "search", lambda space, kind, *a, **k: searched.append(kind) or real_search(space, kind, *a, **k))
    lean = lambda *a, **k: [(m.model, m.score, m.probability, m.low, m.high)  # noqa: E731
                            for m in find_models(*a, store=store, vectors=vectors, **k)]
    full = lambda *a, **k: [(r.model, r.score, r.probability, r.low, r.high)  # noqa: E731
                            for r in find(*a, store=store, vectors=vectors, **k)]
    cases = [((text,), {}), (([text, "A question on poetry"],), {}), ((), {"benchmark": "alpha"}),
             ((text,), {"rank": "lcb"}), ((), {"benchmark": "alpha", "rank": "lcb"})]
    got = [lean(*args, top=3, **kw) for args, kw in cases]
    mit = [lean(text, top=4, filters=Filters(licenses=["mit"])), lean(text, top=4, filters={"license": ["mit"]})]
    assert lean(text, top=4) == lean([text], top=4)  # a string is one prompt
    assert not reads and "prompts" not in searched  # (the options fill searches by search_many)
    for (args, kw), ans in zip(cases, got):
        assert len(ans) == 3 and ans == full(*args, k=3, **kw)
    assert reads and "prompts" in searched  # the full answer's coverage and evidence
    assert mit[0] == mit[1] == full(text, k=4, filters={"licenses": ["mit"]}) and len(mit[0]) == 1
    with pytest.raises(InputError) as err:
        find_models([text], top=0, store=store, vectors=vectors)
    assert err.value.item == "top"
    (space,) = store.list_spaces()
    assert np.allclose(query_vector(store, vectors, space, prompts=[text]),
                       query_vector(store, vectors, space, prompts=text))


def test_empty_index_says_what_to_do():
    with pytest.raises(NotFoundError, match="taskspace index"):
        find_models(["anything"])


def test_a_process_loads_the_encoder_once_for_many_searches(indexed, monkeypatch):
    import uuid

    import sentence_transformers

    store, vectors = indexed
    real, loads = sentence_transformers.SentenceTransformer, []

    def counting(*args, **kwargs):
        loads.append(args[0] if args else kwargs.get("model_name_or_path"))
        return real(*args, **kwargs)

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", counting)
    tag = uuid.uuid4().hex  # texts no cache has seen, so every search must encode
    for i in range(3):
        assert find_models([f"Question {i} on {tag}: which element has atomic number {i + 1}?"], top=2,
                           store=store, vectors=vectors)
    assert len(loads) <= 1, loads  # 0 when an earlier search in this process loaded it already


def test_find_models_without_stores_opens_them_once_and_yields_the_folder(tmp_path, encoder, monkeypatch):
    """The documented call (no stores passed) opens the configured stores on first use and reuses them; another
    store of this process that opens the embedded folder (an indexing pass) takes it over, the next call reopens;
    another process still gets the one-process lock error while they are open."""
    import subprocess
    import sys

    from indexer import query

    rng = np.random.default_rng(5)
    write_table(tmp_path / "a", "alpha", outcomes(rng, ["m1", "m2", "m3"], 12), 12)
    with open_store() as store, VectorStore.from_settings() as vectors:
        Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "a"))])
        want = [(m.model, m.score) for m in find_models(benchmark="alpha", store=store, vectors=vectors)]
    opened = []
    real = VectorStore.from_settings
    monkeypatch.setattr(VectorStore, "from_settings", lambda settings=None, **kw: opened.append(1) or real(settings, **kw))
    assert [(m.model, m.score) for m in find_models(benchmark="alpha")] == want
    assert [m.model for m in find_models(["What is item 3 of alpha about?"], top=2)]
    assert len(opened) == 1
    code = "import sys; from indexer.store.vectors import VectorStore; VectorStore.from_settings()"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert other.returncode != 0 and "another taskspace process is using the index" in other.stderr
    with open_store() as store, real() as vectors:  # takes the folder over from the kept store
        assert Indexer(store, vectors, encoder=encoder).run().status == "ok"
    assert [(m.model, m.score) for m in find_models(benchmark="alpha")] == want and len(opened) == 2
    query.close_cached()
    with real() as vectors:  # released
        assert vectors.count(vectors.spaces()[0], "models") == 3
    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "elsewhere"))
    from indexer.config import reset_settings

    reset_settings()
    open_store().close()  # a home with a database, empty (one without is refused before any store is opened)
    with pytest.raises(NotFoundError, match="taskspace index"):  # other settings: other stores
        find_models(["anything"])
    assert len(opened) == 3


def test_a_program_holding_its_own_vector_store_can_pass_it_alone(indexed):
    """A program that opened the configured vector store itself and passes it alone (`indexer.find_models(...,
    vectors=V)`, `model_detail(..., vectors=V)`, `indexer.query.find_models(..., vectors=V)`), or calls
    `list_benchmarks()` (SQL only), gets its answer: only an SQL store is opened for it, kept for the next call and
    released by `close_cached()`. Before, each opened the shared pair, whose second vector store on the folder the
    program held failed with BusyError (which named the program itself as "another taskspace process")."""
    import indexer
    from indexer import query

    store, vectors = indexed
    want = [(m.model, m.score) for m in find_models(benchmark="alpha", store=store, vectors=vectors)]
    assert [(r.model, r.score) for r in indexer.find_models(benchmark="alpha", vectors=vectors)] == want
    assert [(m.model, m.score) for m in find_models(benchmark="alpha", vectors=vectors)] == want
    assert indexer.model_detail("m1", vectors=vectors)["model"] == "m1"
    assert [b["name"] for b in indexer.list_benchmarks()] == ["alpha"]
    assert query._OPEN.get("stores") is None and query._OPEN["sql"][1] is not None  # no second vector store
    query.close_cached()
    assert query._OPEN.get("sql") is None


def test_close_cached_releases_the_encoders_their_cache_files_and_the_progress_monitor(indexed, monkeypatch, tmp_path):
    """`indexer.query.close_cached()` after `indexer.find_models(prompt)` (from two threads) releases everything the
    queries kept: the stores, the shared encoder (forgotten, its model dropped), its embedding cache's file (both
    threads' connections) and tqdm's monitor thread (started by a model load's progress bar); the next query opens
    them again. Before, it closed the stores alone: the cache file stayed open (once per thread that encoded), the
    encoder loaded and the monitor thread ran for the process's life."""
    import io
    import os
    import threading

    from tqdm import tqdm
    from tqdm._monitor import TMonitor

    import indexer
    from indexer import encoder as encoder_module
    from indexer import query
    from indexer.config import reset_settings

    def opened(path):  # how many times this process has the file open
        return sum(os.path.realpath(f"/proc/self/fd/{fd}") == path for fd in os.listdir("/proc/self/fd"))

    vectors = indexed[1]  # held by the test: find_models keeps an SQL store alone
    prompt = f"Question 3 on {TOPICS[3]}: what is item 3 of alpha?"
    # the shared encoders earlier tests of the session left are released first, so that the one the queries below
    # share is the only one, and its embedding cache is this test's own: the session's cache file is held by other
    # tests' encoders (27 descriptors in CI's order), and SQLite keeps a closed connection's descriptor open while
    # another connection of the process holds the file
    encoder_module.close_encoders()
    monkeypatch.setenv("TASKSPACE_CACHE_DIR", str(tmp_path / "own-cache"))
    reset_settings()
    assert indexer.find_models(prompt, k=2, vectors=vectors).results
    done, release = threading.Event(), threading.Event()

    def other():  # a second thread that encoded, still alive (a server's pool thread)
        indexer.find_models(prompt, k=2, vectors=vectors)
        done.set()
        release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    try:
        assert done.wait(10)
        (shared,) = encoder_module._ENCODERS.values()
        cache = os.path.realpath(shared._cache.path)
        assert cache.startswith(os.path.realpath(tmp_path / "own-cache")) and len(shared._cache._cons) == 2
        tqdm(total=1, file=io.StringIO()).close()  # the bar of a model load starts the monitor
        assert opened(cache) == 2 and any(isinstance(t, TMonitor) for t in threading.enumerate())
        query.close_cached()
        assert opened(cache) == 0 and not shared._cache._cons
        assert not any(isinstance(t, TMonitor) and t.is_alive() for t in threading.enumerate())
        assert encoder_module._ENCODERS == {} and shared._model is None and query._OPEN.get("sql") is None
    finally:
        release.set()
        thread.join()
    assert [r.model for r in indexer.find_models(prompt, k=2, vectors=vectors).results]  # opened again
    assert opened(cache) == 1


def test_a_call_refused_under_a_bad_database_url_leaves_the_next_call_its_store(indexed, monkeypatch):
    """A program that points TASKSPACE_DATABASE_URL at a database that cannot be opened (a typo) gets the error, and
    once it sets the URL back, the next call answers. Before, the SQL store kept for `list_benchmarks()` was closed
    for the new URL but left kept under the old one, so every later call on the old URL failed with "the store of
    ... is closed" (StoreError) until `close_cached()`."""
    import os

    import indexer
    from indexer import query
    from indexer.errors import DatabaseURLError

    assert [b["name"] for b in indexer.list_benchmarks()] == ["alpha"]
    url = os.environ.get("TASKSPACE_DATABASE_URL")
    monkeypatch.setenv("TASKSPACE_DATABASE_URL", "garbage://")
    with pytest.raises(DatabaseURLError):
        indexer.list_benchmarks()
    if url is None:
        monkeypatch.delenv("TASKSPACE_DATABASE_URL")
    else:
        monkeypatch.setenv("TASKSPACE_DATABASE_URL", url)
    assert [b["name"] for b in indexer.list_benchmarks()] == ["alpha"]
    assert [r.model for r in indexer.find_models(benchmark="alpha", vectors=indexed[1], k=2)]
    query.close_cached()


def test_two_homes_queried_by_one_process_each_get_their_own_intervals(tmp_path, monkeypatch, encoder):
    """Two homes indexed from different data (each 24 prompts, every model measured on all: one coverage pattern,
    whose key is a digest of the database's prompt ids 1..24, the same in both), queried by one program: the second
    home's variances and intervals are its own, as a fresh process gives them. Before, the process kept pattern
    factors by space and pattern key alone, so the second home's answers used the first home's factors (a
    variance of 2.57 where its own is 3.89)."""
    from helpers import write_source

    from indexer import query
    from indexer.config import reset_settings

    def home(name):
        monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / name))
        reset_settings()

    for name, topic, seed in (("x", "cooking recipes", 1), ("y", "orbital mechanics", 2)):
        rng = np.random.default_rng(seed)
        texts = [f"Question {j} about {topic}: explain step {j} of {topic} in detail." for j in range(24)]
        write_source(tmp_path / f"src-{name}", f"bench-{name}", texts,
                     {f"org/m{i}": rng.integers(0, 2, 24).tolist() for i in range(6)})
        home(name)
        with open_store() as store, VectorStore.from_settings() as vectors:
            Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / f"src-{name}"))])

    def answer(name):
        home(name)
        with open_store() as store, VectorStore.from_settings() as vectors:
            return [(m.model, m.variance) for m in find_models(["Explain how to bake bread."], top=6, store=store,
                                                                vectors=vectors)]

    query._PATTERNS.clear()  # as a fresh process
    alone = answer("y")
    query._PATTERNS.clear()
    answer("x")
    assert answer("y") == alone


@pytest.mark.parametrize("top", [0, -1, 2.5, None, True])
def test_a_bad_top_names_top(top):
    """`indexer.query.find_models(prompts, top=0)`: the input error names `top`, its own argument (checked before any
    store is opened); before, "k must be a positive integer, not 0" (item `k`), an argument this function lacks."""
    from indexer.errors import InputError

    with pytest.raises(InputError) as err:
        find_models(["Write a Python function that sorts a list"], top=top)
    assert str(err.value) == f"top must be a positive integer, not {top!r}" and err.value.item == "top"


def test_the_full_answer_is_indexed_as_it_is_iterated(indexed):
    """`indexer.find_models(...)` is a FindResult with `len` and iteration over its ranked results; `result[0]` and
    `result[:2]` are those results too (before, "TypeError: 'FindResult' object is not subscriptable")."""
    from indexer import find_models as find_full

    store, vectors = indexed
    result = find_full("What is item 3 of alpha?", k=3, store=store, vectors=vectors)
    assert len(result) == 3 and result[0] is result.results[0] and result[-1] is list(result)[-1]
    assert result[:2] == result.results[:2] and result[0].model == next(iter(result)).model
    with pytest.raises(IndexError):
        result[3]


def test_the_lean_entry_point_refuses_filters_no_payload_field_holds(indexed):
    """`indexer.query.find_models(filters=...)` takes a raw payload filter or an `indexer.Filters`: a dict keyed by
    `indexer.Filters` names (`{"licenses": ["mit"]}`, as `indexer.find_models` takes it) is an InputError naming the
    key, the Filters to pass and the payload field, and a filter that is no dict (a list, a string) an InputError
    naming `filters`; before, the first answered [] without a word (no point has a `licenses` field) and the second
    raised an AttributeError. A raw payload filter still ranks as before."""
    from indexer import Filters
    from indexer.errors import InputError

    store, vectors = indexed
    text = "What is item 3 of alpha about chemistry?"
    with pytest.raises(InputError) as err:
        find_models(text, filters={"licenses": ["mit"]}, store=store, vectors=vectors)
    assert err.value.item == "filters.licenses"
    assert "indexer.Filters(licenses=...)" in str(err.value) and "'license'" in str(err.value)
    with pytest.raises(InputError) as err:
        find_models(text, filters={"open_only": True, "max_params": 8e9}, store=store, vectors=vectors)
    assert err.value.item == "filters" and "open_only and max_params are names of indexer.Filters" in str(err.value)
    for bad in (["mit"], "mit"):
        with pytest.raises(InputError) as err:
            find_models(text, filters=bad, store=store, vectors=vectors)
        assert err.value.item == "filters"
    raw = find_models(text, filters={"license": ["mit"]}, store=store, vectors=vectors)
    assert [m.model for m in raw] == [m.model for m in find_models(text, filters=Filters(licenses=["mit"]),
                                                                   store=store, vectors=vectors)] == ["m1"]



@contextlib.contextmanager
def _as_the_cli():
    """Messages in the CLI's words while it runs, as `taskspace search` sets them (indexer.cli): the command's option."""
    from indexer.errors import CLI

    token = CLI.set(True)
    try:
        yield
    finally:
        CLI.reset(token)


def test_a_home_whose_spaces_none_of_the_configured_encoder_built_says_which_it_searches(store, encoder, caplog):
    """Several spaces, none built with the configured encoder (TASKSPACE_ENCODER changed since, or a typo): the query
    takes the newest space as before, and a warning says so, naming the configured encoder, the space searched and
    `--space` with the spaces it takes; before, it took the newest one without a word. A home with a space of the
    configured encoder says nothing."""
    import logging

    from indexer import query
    from indexer.query import _space
    from indexer.space import space_name

    store.get_or_create_space("org/enc-a@1", 11, 1.0, 0.0, method="auto", params={})
    newest = store.get_or_create_space("org/enc-b@1", 11, 1.0, 0.0, method="auto", params={})
    query._WARNED_ENCODER.clear()
    with caplog.at_level(logging.WARNING, logger="indexer.query"):
        assert _space(store).id == newest.id
        assert _space(store).id == newest.id  # said once per process (a server answers many queries)
    assert caplog.text.count("no indexed space was built") == 1, caplog.text
    # a library call: the library's parameter (before: `--space NAME`, an option a Python caller has not)
    assert (f"no indexed space was built with the configured encoder {encoder.id} (TASKSPACE_ENCODER); searching the "
            f"newest space, {space_name(newest)} (org/enc-b@1); space=NAME picks another") in caplog.text
    caplog.clear()
    query._WARNED_ENCODER.clear()
    with _as_the_cli(), caplog.at_level(logging.WARNING, logger="indexer.query"):
        assert _space(store).id == newest.id
    assert "(org/enc-b@1); --space NAME picks another" in caplog.text, caplog.text
    caplog.clear()
    mine = store.get_or_create_space(encoder.id, 11, 1.0, 0.0, method="auto", params={})
    with caplog.at_level(logging.WARNING, logger="indexer.query"):
        assert _space(store).id == mine.id
    assert "no indexed space" not in caplog.text


def test_a_home_whose_only_space_another_encoder_built_says_so_and_how_to_build_the_configured_one(store, encoder,
                                                                                                    caplog):
    """A home indexed under one encoder, then TASKSPACE_ENCODER changed (indexed with all-mpnet-base-v2, the setting
    back to MiniLM; or the other way): a search without a space still takes its only space, and once per process a
    warning names the configured encoder, the space searched and its encoder, and `taskspace index` (which builds the
    configured encoder's space beside it). Before, a lone space of another encoder answered without a word (two such
    spaces were warned of). Named by `space`, or of the configured encoder, it says nothing."""
    import logging

    from indexer import query
    from indexer.config import get_settings
    from indexer.query import _space
    from indexer.space import configured, space_name

    spec = configured(get_settings())  # the configured method and settings: only the encoder differs
    other = store.get_or_create_space("org/enc-b@1", 11, spec.lam, spec.eps, method=spec.method,
                                      params=dict(spec.params))
    query._WARNED_ENCODER.clear()
    getattr(query, "_WARNED_METHOD", set()).clear()
    with caplog.at_level(logging.WARNING, logger="indexer.query"):
        assert _space(store).id == other.id
        assert _space(store).id == other.id  # said once per process (a server answers many queries)
    assert caplog.text.count("no indexed space was built") == 1, caplog.text
    assert (f"no indexed space was built with the configured encoder {encoder.id} (TASKSPACE_ENCODER); searching the "
            f"only space, {space_name(other)} (org/enc-b@1); `taskspace index` builds the configured encoder's space "
            "beside it from the stored results") in caplog.text, caplog.text
    caplog.clear()
    query._WARNED_ENCODER.clear()
    with caplog.at_level(logging.WARNING, logger="indexer.query"):
        assert _space(store, space_name(other)).id == other.id
    assert "no indexed space" not in caplog.text, caplog.text


def test_the_lone_space_of_another_encoder_searched_under_an_encoder_that_cannot_load_does_not_advise_index(
        store, caplog, monkeypatch):
    """TASKSPACE_ENCODER naming an encoder that cannot be loaded here (`nope/nope` offline, a folder that is not a
    model) in a home with one space of another encoder: the search takes that space with a warning that says
    `taskspace index` fails until TASKSPACE_ENCODER names an encoder that loads; before, the warning advised
    `taskspace index`, which "builds the configured encoder's space beside it", and that command failed (exit 5,
    "cannot load encoder")."""
    import logging

    from indexer import query
    from indexer.config import get_settings, reset_settings
    from indexer.query import _space
    from indexer.space import configured, space_name

    spec = configured(get_settings())
    other = store.get_or_create_space("org/enc-b@1", 11, spec.lam, spec.eps, method=spec.method,
                                      params=dict(spec.params))
    monkeypatch.setenv("TASKSPACE_ENCODER", "/nonexistent/encoder")
    reset_settings()
    query._WARNED_ENCODER.clear()
    with caplog.at_level(logging.WARNING, logger="indexer.query"):
        assert _space(store).id == other.id
    assert (f"no indexed space was built with the configured encoder /nonexistent/encoder (TASKSPACE_ENCODER), which "
            f"cannot be loaded here; searching the only space, {space_name(other)} (org/enc-b@1); `taskspace index` "
            "fails until TASKSPACE_ENCODER names an encoder that loads here (unset: all-MiniLM-L6-v2), then builds "
            "its space beside it from the stored results") in caplog.text, caplog.text
    assert "builds the configured encoder's space" not in caplog.text


def test_a_space_the_configured_method_did_not_build_is_searched_with_a_warning_saying_to_index(store, encoder, caplog):
    """A home indexed by an older taskspace keeps the space of that version's default method (`auto` before `auto-mc`,
    no calibration stored yet): a search still takes it, once per process a warning names it, its method, the
    configured one and `taskspace index` (which builds the configured method's space) and `--space NAME` (which picks
    it without the warning); before, every search answered from it without a word, its "probabilities" the
    uncalibrated `(1 + score) / 2`. A space asked for by name, and the configured method's space, say nothing."""
    import logging

    from indexer import query
    from indexer.config import get_settings
    from indexer.query import _space
    from indexer.space import configured, space_name

    old = store.get_or_create_space(encoder.id, 385, 1.0, 0.0, method="auto", params={"intercept": True, "select": "gcv"})
    getattr(query, "_WARNED_METHOD", set()).clear()
    with caplog.at_level(logging.WARNING, logger="indexer.query"):
        assert _space(store).id == old.id
        assert _space(store).id == old.id  # said once per process (a server answers many queries)
    method = get_settings().method
    assert caplog.text.count("searching space") == 1, caplog.text
    assert (f"searching space {space_name(old)}, built with method auto (by an older taskspace, or under another "
            f"TASKSPACE_METHOD), not as this taskspace builds the configured method {method} (TASKSPACE_METHOD)") in caplog.text
    assert "whose space is not indexed: `taskspace index` builds it" in caplog.text
    assert f"space='{space_name(old)}' searches this" in caplog.text and "--space" not in caplog.text  # a library call
    caplog.clear()
    getattr(query, "_WARNED_METHOD", set()).clear()
    with _as_the_cli(), caplog.at_level(logging.WARNING, logger="indexer.query"):
        assert _space(store).id == old.id
    assert f"--space {space_name(old)} searches this" in caplog.text, caplog.text
    caplog.clear()
    getattr(query, "_WARNED_METHOD", set()).clear()
    with caplog.at_level(logging.WARNING, logger="indexer.query"):
        assert _space(store, space_name(old)).id == old.id
    assert "searching space" not in caplog.text
    spec = configured(encoder=encoder.id)
    mine = store.get_or_create_space(encoder.id, 11, spec.lam, spec.eps, method=spec.method, params=spec.params)
    with caplog.at_level(logging.WARNING, logger="indexer.query"):
        assert _space(store).id == mine.id
    assert "searching space" not in caplog.text


def test_a_space_of_the_configured_method_with_another_lambda_is_warned_of_naming_the_lambda(store, encoder, caplog,
                                                                                             monkeypatch):
    """A space the configured method built under another TASKSPACE_LAMBDA (`TASKSPACE_METHOD=paper TASKSPACE_LAMBDA=3
    taskspace index`, then the lambda unset) is searched with a warning that names its lambda and the configured one;
    before, it said the space was built "with other settings (by an older taskspace, or under another
    TASKSPACE_METHOD)", though the method was the configured one and the lambda the only difference."""
    import logging

    from indexer import query
    from indexer.config import get_settings
    from indexer.query import _space
    from indexer.space import configured, space_name

    monkeypatch.setenv("TASKSPACE_METHOD", "paper")
    monkeypatch.delenv("TASKSPACE_LAMBDA", raising=False)
    spec = configured(get_settings(), encoder=encoder.id)
    assert spec.method == "paper" and spec.lam == 1.0
    built = store.get_or_create_space(encoder.id, 384, 3.0, spec.eps, method="paper", params=dict(spec.params))
    getattr(query, "_WARNED_METHOD", set()).clear()
    with caplog.at_level(logging.WARNING, logger="indexer.query"):
        assert _space(store).id == built.id
    assert (f"searching space {space_name(built)}, built with method paper with lambda 3 (TASKSPACE_LAMBDA is 1 here), "
            "not as this taskspace builds the configured method paper") in caplog.text, caplog.text
    assert "another TASKSPACE_METHOD" not in caplog.text, caplog.text


def test_the_warning_of_a_space_with_another_lambda_tells_two_close_lambdas_apart(store, encoder, caplog, monkeypatch):
    """Lambdas that differ past six significant digits (TASKSPACE_LAMBDA=0.1234567 here, the space built under
    0.1234568) are written in the warning as the settings that build them: before, both printed ``0.123457`` with
    ``:g``, "lambda 0.123457 (TASKSPACE_LAMBDA is 0.123457 here)", a difference the warning did not show."""
    import logging

    from indexer import query
    from indexer.config import get_settings
    from indexer.query import _space
    from indexer.space import configured

    monkeypatch.setenv("TASKSPACE_METHOD", "paper")
    monkeypatch.setenv("TASKSPACE_LAMBDA", "0.1234567")
    spec = configured(get_settings(), encoder=encoder.id)
    built = store.get_or_create_space(encoder.id, 384, 0.1234568, spec.eps, method="paper", params=dict(spec.params))
    getattr(query, "_WARNED_METHOD", set()).clear()
    with caplog.at_level(logging.WARNING, logger="indexer.query"):
        assert _space(store).id == built.id
    assert "with lambda 0.1234568 (TASKSPACE_LAMBDA is 0.1234567 here)" in caplog.text, caplog.text


def test_the_lean_entry_point_refuses_a_raw_filter_on_a_field_no_model_carries(indexed):
    """`indexer.query.find_models(filters={"licence": ["mit"]})` (a misspelt payload field) answering no model: the
    InputError naming the field, the close payload field (`license`) and the fields the models carry; before, [] without
    a word, as if no model fit. A field the models carry that lets no model through (a license none has) is still an
    empty answer, and a filter that lets some through ranks as before."""
    from indexer.errors import InputError

    store, vectors = indexed
    text = "What is item 3 of alpha about chemistry?"
    with pytest.raises(InputError, match=r"no indexed model carries the payload field 'licence'.*did you mean 'license'") as err:
        find_models(text, filters={"licence": ["mit"]}, store=store, vectors=vectors)
    assert err.value.item == "filters.licence" and "num_parameters" in str(err.value)
    assert find_models(text, filters={"license": ["no-such-licence"]}, store=store, vectors=vectors) == []
    assert find_models(text, filters={"kind": {"not": ["nothing"]}}, store=store, vectors=vectors, top=2)
