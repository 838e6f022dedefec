"""Queries over an indexed store: prompts or a benchmark -> ranked models, equal to e_i . q computed directly."""

import numpy as np
import pytest

from indexer.errors import NotFoundError
from indexer.pipeline import Indexer
from indexer.query import find_models
from indexer.space import configured
from indexer import represent
from indexer.sourcelist import SourceSpec
from indexer.store.sql import open_store
from indexer.store.vectors import VectorStore

from helpers import outcomes, write_table


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
    store, vectors = indexed
    prompts = ["What is item 3 of alpha about chemistry?", "A question on poetry"]
    got = find_models(prompts, top=4, store=store, vectors=vectors)
    (space,) = store.list_spaces()
    solver = configured().solver()
    om = store.load_outcomes()
    texts = store.prompt_texts(om.prompt_ids)
    solver.fit(represent.rows(texts, encoder.encode, space), om.scores, model_ids=om.models)
    # e_i . q + f_i . covariates + c_i, averaged over the prompts: what the index must rank by
    mean = represent.mean_row(store.load_benchmark_vectors(space.id), space)
    predicted = solver.predict(represent.query_rows(prompts, encoder.encode, space, mean)).mean(axis=0)
    want = dict(zip(om.models, predicted.tolist()))
    q = represent.query_rows(prompts, encoder.encode, space, mean, lifted=True).mean(axis=0)
    assert {mv.model: float(q @ mv.vector) for mv in store.load_model_vectors(space.id)} == pytest.approx(want, abs=1e-5)
    assert [m.model for m in got] == sorted(want, key=want.get, reverse=True)
    for m in got:
        assert m.score == pytest.approx(want[m.model], abs=1e-5)


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
    monkeypatch.setattr(VectorStore, "from_settings", lambda settings=None: opened.append(1) or real(settings))
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
    with pytest.raises(NotFoundError, match="taskspace index"):  # other settings: other stores
        find_models(["anything"])
    assert len(opened) == 3
