"""The SQL store on SQLite and PostgreSQL (the ``store`` fixture runs every test on both)."""

from __future__ import annotations

import os
from datetime import datetime, timezone

import numpy as np
import pytest

from indexer.errors import BusyError, DimensionError, InputError, NotFoundError
from indexer.records import BenchmarkInfo, Outcome, SourceBatch, SourceInfo, prompt_hash
from indexer.store.sql import BenchmarkVector, ModelVector, looks_like_repo_id


def batch(location="/data/a.csv", revision="r1", outcomes=(), benchmarks=None, kind="table"):
    return SourceBatch(SourceInfo(kind, location, revision), benchmarks or {}, list(outcomes))


def grid(models, prompts, bench="math", fn=lambda i, j: float((i + j) % 2)):
    return [Outcome(m, bench, p, fn(i, j), prompt_id=str(j)) for i, m in enumerate(models) for j, p in enumerate(prompts)]


A = ["org/alpha", "org/beta", "my-local-model"]
P = ["What is 2+2?", "Solve x^2 = 9.", "Integrate sin(x).", "Is 7 prime?"]


def test_a_benchmarks_metadata_is_its_first_sources_and_another_source_reading_it_otherwise_is_warned(store):
    """Like its metric (test_ingest.py), a benchmark's group, harness task, few-shot count and config stay as recorded
    first when another of its sources reads them otherwise, and that ingest says so, one line per field naming the
    benchmark, the field, both values and the source; a value not recorded yet is filled in, and the benchmark's only
    source read again records its own. Before, each ingest overwrote them: the last source read won, silently."""
    first = BenchmarkInfo("math", group="g", source_task="leaderboard_math", metric="acc", num_fewshot=5,
                          config={"filter": "none", "version": 1})
    r = store.ingest(batch("/data/a", outcomes=grid(A[:1], P), benchmarks={"math": first}))
    assert not r.warnings, r
    other = BenchmarkInfo("math", group="h", source_task="math_cot", metric="acc", num_fewshot=0,
                          config={"filter": "strict-match", "version": 2})
    r = store.ingest(batch("/data/b", outcomes=grid(A[1:2], P), benchmarks={"math": other}))
    (b,) = store.list_benchmarks()
    assert (b.group, b.source_task, b.metric, b.num_fewshot, b.config) == (
        "g", "leaderboard_math", "acc", 5, {"filter": "none", "version": 1})
    said = {w.split("recorded with ", 1)[1].split(" ", 1)[0]: w for w in r.warnings}
    assert sorted(said) == ["config", "group", "num_fewshot", "source_task"] and len(r.warnings) == 4, r.warnings
    for field, old, new in [("group", "'g'", "'h'"), ("source_task", "'leaderboard_math'", "'math_cot'"),
                            ("num_fewshot", "5", "0"),
                            ("config", "{'filter': 'none', 'version': 1}", "{'filter': 'strict-match', 'version': 2}")]:
        w = said[field]
        assert "\n" not in w and w.startswith("/data/b: benchmark 'math' is recorded with ") and old in w and new in w, w
    # a source giving what is recorded, or nothing for a field, says nothing
    same = BenchmarkInfo("math", group="g", metric="acc")
    assert not store.ingest(batch("/data/c", outcomes=grid(A[2:], P), benchmarks={"math": same})).warnings
    # a field not recorded yet is filled in by a later source
    store.ingest(batch("/data/d", outcomes=grid(A[:1], P, bench="geo"), benchmarks={"geo": BenchmarkInfo("geo")}))
    store.ingest(batch("/data/e", outcomes=grid(A[1:2], P, bench="geo"),
                       benchmarks={"geo": BenchmarkInfo("geo", group="g2", num_fewshot=3)}))
    geo = {x.name: x for x in store.list_benchmarks()}["geo"]
    assert (geo.group, geo.num_fewshot) == ("g2", 3)
    # the benchmark's only source read again another way: its metadata follows, nothing said
    store.ingest(batch("/data/f", outcomes=grid(A[:1], P, bench="art"), benchmarks={"art": BenchmarkInfo("art", group="x")}))
    r = store.ingest(batch("/data/f", revision="r2", outcomes=grid(A[:1], P, bench="art"),
                           benchmarks={"art": BenchmarkInfo("art", group="y", config={"filter": "f"})}))
    assert not r.warnings, r
    art = {x.name: x for x in store.list_benchmarks()}["art"]
    assert (art.group, art.config) == ("y", {"filter": "f"})


def test_ingest_and_load_dense_matrix(store):
    r = store.ingest(batch(outcomes=grid(A, P), benchmarks={"math": BenchmarkInfo("math", group="g", metric="acc", num_fewshot=5)}))
    assert (r.models, r.prompts, r.outcomes, r.skipped, r.replaced) == (3, 4, 12, False, False)
    m = store.load_outcomes()
    assert m.models == sorted(A)
    assert m.scores.shape == (3, 4) and m.scores.dtype == np.float32
    assert m.prompt_hashes == [prompt_hash(p) for p in P]  # benchmark position order
    assert m.benchmarks == ["math"] * 4
    assert store.prompt_texts(m.prompt_ids) == P
    assert store.prompt_texts(list(reversed(m.prompt_ids))) == P[::-1]
    for i, model in enumerate(A):
        row = m.scores[m.models.index(model)]
        np.testing.assert_array_equal(row, [float((i + j) % 2) for j in range(4)])
    (b,) = store.list_benchmarks()
    assert (b.name, b.group, b.metric, b.num_fewshot, b.n_prompts) == ("math", "g", "acc", 5, 4)
    assert store.benchmark_prompts("math") == list(m.prompt_ids)
    assert store.prompt_ids([prompt_hash(P[1]), "0" * 64]) == {prompt_hash(P[1]): int(m.prompt_ids[1])}


def test_observed_prompts_and_measured_models(store):
    """What the coverage re-rank reads (indexer.query.observed_shares): the prompts each model was observed on, per
    benchmark (its outcome blocks on those benchmarks), and which models SQL holds outcomes of."""
    store.ingest(batch(outcomes=grid(A[:2], P[:2]) + grid(A[2:], P[2:], bench="logic")))
    ids = store.prompt_ids([prompt_hash(p) for p in P])
    got = store.outcome_blocks(A, ["logic"])
    assert [k for k, *_ in got] == [A[2]] and sorted(got[0][2].tolist()) == sorted(ids[prompt_hash(p)] for p in P[2:])
    both = {k: sorted(v.tolist()) for k, _, v, _ in store.outcome_blocks([A[0], A[2]], ["math", "logic"])}
    assert both == {A[0]: sorted(ids[prompt_hash(p)] for p in P[:2]), A[2]: sorted(ids[prompt_hash(p)] for p in P[2:])}
    assert store.measured_models(A + ["nobody"]) == set(A)


def test_outcome_blocks_of_most_models_read_the_table_without_a_key_list_and_give_the_same_blocks(store,
                                                                                                  monkeypatch):
    """``outcome_blocks`` of at least ``BLOCKS_WHOLE_TABLE`` models that are also at least half of the models SQL
    holds (a model page's every-model rows ask for every model) reads the blocks without a key list and keeps those
    models': the same blocks as the keyed read, none of another model. Before, always in IN-list chunks of the keys
    (0.75 s of a page on 32,823 models, against 0.35 s for the table)."""
    from indexer.store import sql_reads

    models = [f"org/m{i}" for i in range(6)]
    store.ingest(batch(outcomes=grid(models[:4], P[:2]) + grid(models[2:], P[2:], bench="logic",
                                                                 fn=lambda i, j: 0.25 * (i + j) % 1)))

    def blocks(ks, benchmarks=None):
        return sorted((k, b, p.tolist(), s.tolist()) for k, b, p, s in store.outcome_blocks(ks, benchmarks))

    asked = [models[5], models[0], models[3], models[0]]
    keyed = {n: blocks(asked[:n]) for n in (2, 4)}
    keyed_logic = blocks(asked, ["logic"])
    assert {k for k, *_ in keyed[4]} == {models[0], models[3], models[5]} and keyed_logic  # (not every model's)
    seen = []
    real = sql_reads.rows_for_keys
    monkeypatch.setattr(sql_reads, "rows_for_keys", lambda conn, q, col, keys: seen.append(keys) or real(conn, q, col, keys))
    monkeypatch.setattr(sql_reads, "BLOCKS_WHOLE_TABLE", 2, raising=False)
    assert blocks(asked) == keyed[4] and blocks(asked, ["logic"]) == keyed_logic
    assert seen == [None, None], seen  # 3 distinct models of 6: the table, no key list
    seen.clear()
    assert blocks(asked[:2]) == keyed[2]  # 2 of 6: fewer than half, by key
    assert seen == [[models[5], models[0]]], seen
    seen.clear()
    monkeypatch.setattr(sql_reads, "BLOCKS_WHOLE_TABLE", 4)
    assert blocks(asked) == keyed[4] and seen[0] is not None  # 3 models, fewer than BLOCKS_WHOLE_TABLE: by key


def test_missing_cells_are_nan_not_wrong(store):
    store.ingest(batch(outcomes=grid(A[:2], P[:2]) + grid(A[2:], P[2:], bench="logic")))
    m = store.load_outcomes()
    assert np.isnan(m.scores).sum() == 6
    r = m.models.index(A[2])
    assert m.benchmarks == ["logic", "logic", "math", "math"]  # columns by (benchmark name, position)
    assert np.isnan(m.scores[r, 2:]).all() and not np.isnan(m.scores[r, :2]).any()
    sub = store.load_outcomes(benchmarks=["math"])
    assert sub.models == sorted(A[:2]) and sub.scores.shape == (2, 2)
    sub = store.load_outcomes(models=[A[2], A[0]])
    assert sub.models == [A[2], A[0]] and sub.scores.shape == (2, 4)
    with pytest.raises(NotFoundError, match="nobody"):
        store.load_outcomes(models=["nobody"])
    with pytest.raises(NotFoundError, match="nothing"):
        store.load_outcomes(benchmarks=["nothing"])


def test_duplicate_ingest_changes_nothing(store):
    b = batch(outcomes=grid(A, P))
    store.ingest(b)
    before = (store.counts(), store.model_digests(), store.get_source("/data/a.csv"))
    r = store.ingest(b)
    assert r.skipped and (r.models, r.prompts, r.outcomes) == (0, 0, 0)
    assert (store.counts(), store.model_digests(), store.get_source("/data/a.csv")) == before


def test_content_fingerprint_when_revision_unknown(store):
    b = batch(revision=None, outcomes=grid(A, P))
    assert not store.ingest(b).skipped
    assert store.ingest(batch(revision=None, outcomes=grid(A, P))).skipped
    assert store.get_source("/data/a.csv").revision.startswith("content:")
    r = store.ingest(batch(revision=None, outcomes=grid(A, P, fn=lambda i, j: 1.0)))
    assert r.replaced and not r.skipped
    assert np.all(store.load_outcomes().scores == 1.0)


def test_new_revision_replaces_that_sources_outcomes(store):
    store.ingest(batch(outcomes=grid(A, P)))
    store.ingest(batch(location="/data/other.csv", outcomes=grid(["org/zeta"], P)))
    r = store.ingest(batch(revision="r2", outcomes=grid(A[:1], P[:2], fn=lambda i, j: 1.0)))
    assert r.replaced and r.outcomes == 2
    m = store.load_outcomes()
    assert set(m.models) == {A[0], "org/zeta"}  # beta and gpt-4o had outcomes only in r1
    assert m.scores[m.models.index(A[0])].tolist()[:2] == [1.0, 1.0]
    assert np.isnan(m.scores[m.models.index(A[0]), 2:]).all()
    assert store.get_source("/data/a.csv").revision == "r2"
    assert store.get_source("/data/other.csv").n_outcomes == 4


def test_duplicate_texts_are_one_prompt_and_average(store):
    outs = [
        Outcome("org/alpha", "math", "Same?", 1.0, prompt_id="1"),
        Outcome("org/alpha", "math", "Same?", 0.0, prompt_id="2"),
        Outcome("org/alpha", "math", "Same?", 1.0, prompt_id="3"),
        Outcome("org/beta", "math", "Same?", 0.0, prompt_id="1"),
        Outcome("org/alpha", "logic", "Same?", 0.0, prompt_id="L1"),
    ]
    r = store.ingest(batch(outcomes=outs))
    assert r.prompts == 1 and r.outcomes == 3  # alpha/math, beta/math, alpha/logic
    m = store.load_outcomes(benchmarks=["math"])
    assert m.scores.shape == (2, 1)
    np.testing.assert_allclose(m.scores[m.models.index("org/alpha"), 0], 2 / 3, rtol=1e-6)
    both = store.load_outcomes()  # the prompt is in both benchmarks: one column, mean of every observation
    assert both.benchmarks == ["logic"] and both.scores.shape == (2, 1)
    np.testing.assert_allclose(both.scores[both.models.index("org/alpha"), 0], (2 / 3 + 0.0) / 2, rtol=1e-6)
    assert store.benchmark_prompts("math") == store.benchmark_prompts("logic")


def test_same_cell_from_two_sources_is_their_mean(store):
    store.ingest(batch(outcomes=grid(A[:1], P, fn=lambda i, j: 1.0)))
    store.ingest(batch(location="/data/b.csv", outcomes=grid(A[:1], P[:2], fn=lambda i, j: 0.0)))
    m = store.load_outcomes()
    np.testing.assert_allclose(m.scores[0], [0.5, 0.5, 1.0, 1.0])


def test_bad_scores_raise_and_store_nothing(store):
    for bad in (1.5, -0.1, float("nan")):
        outs = grid(A, P) + [Outcome("org/alpha", "math", "Another?", bad, prompt_id="99")]
        with pytest.raises(InputError, match="org/alpha / math / 99"):
            store.ingest(batch(outcomes=outs))
    with pytest.raises(InputError, match="empty prompt"):
        store.ingest(batch(outcomes=[Outcome("org/alpha", "math", "  ", 1.0)]))
    assert store.counts()["prompts"] == 0 and store.get_source("/data/a.csv") is None


def test_model_kind_and_revision(store):
    store.ingest(batch(outcomes=[Outcome("org/alpha", "math", "q", 1.0, revision="abc123"),
                                 Outcome("gpt-4o(eval_results/gpt4o)", "math", "q", 1.0),
                                 Outcome("my-local-model", "math", "q", 1.0)]))
    assert store.get_model("org/alpha").kind == "hub" and store.get_model("org/alpha").revision == "abc123"
    assert store.get_model("gpt-4o").kind == "api"  # identity: the provenance tag dropped, an API-only model
    assert [m.key for m in store.list_models(kind="name")] == ["my-local-model"]
    assert store.get_model("missing/model") is None
    assert looks_like_repo_id("meta-llama/Llama-3.1-8B") and not looks_like_repo_id("gpt-4o") and not looks_like_repo_id("a/b/c")


def test_upsert_models(store):
    t = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
    n = store.upsert_models([{"repo_id": "org/alpha", "license": "mit", "num_parameters": 7_000_000_000, "tags": ["a", "b"],
                              "gated": False, "last_modified": "2024-05-01T12:00:00Z", "downloads": 10}])
    assert n == 1
    m = store.get_model("org/alpha")
    assert (m.license, m.num_parameters, m.tags, m.gated, m.last_modified, m.downloads) == ("mit", 7_000_000_000, ["a", "b"], "false", t, 10)
    assert m.fetched_at is not None and m.fetched_at.tzinfo is not None
    store.upsert_models([{"key": "org/alpha", "downloads": 11, "gated": "manual"}])
    m = store.get_model("org/alpha")
    assert (m.license, m.downloads, m.gated) == ("mit", 11, "manual")  # fields left out keep their value
    with pytest.raises(InputError, match="unknown model field 'colour'"):
        store.upsert_models([{"key": "org/x", "colour": "red"}])
    with pytest.raises(InputError, match="key"):
        store.upsert_models([{"license": "mit"}])
    with pytest.raises(InputError, match="ISO"):
        store.upsert_models([{"key": "org/x", "created_at": "yesterday"}])
    assert store.get_model("org/x") is None


def test_digest_changes_iff_that_models_outcomes_change(store):
    store.ingest(batch(outcomes=grid(A, P)))
    d1 = store.model_digests()
    assert set(d1) == set(A)
    store.ingest(batch(location="/data/b.csv", outcomes=grid(A[:1], ["New prompt"])))
    d2 = store.model_digests()
    assert d2[A[0]] != d1[A[0]] and all(d2[k] == d1[k] for k in A[1:])
    store.ingest(batch(location="/data/b.csv", revision="r2", outcomes=grid(A[:1], ["New prompt"])))  # same content
    assert store.model_digests() == d2
    store.ingest(batch(revision="r2", outcomes=grid(A, P, fn=lambda i, j: 1.0 if i == 1 else float((i + j) % 2))))
    d3 = store.model_digests([A[1], A[2]])
    assert d3[A[1]] != d2[A[1]] and d3[A[2]] == d2[A[2]] and A[0] not in d3



def test_the_state_digest_changes_with_every_input_of_every_models_scores(store):
    """`Store.state_digest(space)` (what a model page keeps its every-model rows by): the same while nothing is
    written, and another after each write that feeds those scores: outcomes ingested (no vector solved), a vector
    saved, its index point's digest, a benchmark vector, the calibration map (its links), the prior. Another space's
    writes leave it."""
    from indexer import posterior
    from indexer.store.sql_types import SpacePrior

    store.ingest(batch(outcomes=grid(A, P)))
    s = store.get_or_create_space("all-MiniLM-L6-v2@abc", 4, 1.0, 0.0)
    other = store.get_or_create_space("all-MiniLM-L6-v2@abc", 4, 0.5, 0.0)
    seen = [store.state_digest(s.id)]
    assert store.state_digest(s.id) == seen[0]

    def changed() -> None:
        now = store.state_digest(s.id)
        assert now not in seen, len(seen)
        seen.append(now)

    store.ingest(batch(location="/data/b.csv", outcomes=grid(A[:1], ["New prompt"])))
    changed()
    digests = store.model_digests()
    store.save_model_vectors(s.id, [ModelVector(k, np.arange(4, dtype=np.float32) + i, 4, ["math"], {}, digests[k])
                                    for i, k in enumerate(A)])
    changed()
    token = store.claim_point_digests(s.id)
    changed()
    store.save_point_digests(s.id, token, {k: f"d{k}" for k in A})
    changed()
    store.save_benchmark_vectors(s.id, [BenchmarkVector("math", np.ones(4, dtype=np.float32), 3)])
    changed()
    store.save_model_vectors(s.id, [], calibration=posterior.Calibration(0.05, 1.5, 100, spread=0.1))
    changed()
    store.set_calibration_links(s.id, (("math",), ("other",)))
    changed()
    store.save_model_vectors(s.id, [], prior=SpacePrior(np.ones(3), 3), replace_prior=True)
    changed()
    store.save_model_vectors(other.id, [ModelVector(A[0], np.ones(4), 4, ["math"], {}, digests[A[0]])])
    assert store.state_digest(s.id) == seen[-1]

def test_the_vectors_of_some_benchmark_lists_are_read_apart_and_each_list_once(store):
    """``model_benchmark_lists``: the distinct lists the space's vectors were fitted on (an empty one for a vector
    without benchmarks); ``model_benchmark_vectors(lists=...)``: the vectors fitted on those lists alone, the same
    rows as every vector's read gives them (a pass computing again the average models of the groups it changed)."""
    models = [f"org/m{i}" for i in range(5)]
    store.ingest(batch(outcomes=grid(models, P)))
    s = store.get_or_create_space("enc@1", 4, 1.0, 0.0)
    lists = [["math"], ["law", "math"], ["math"], [], ["law"]]
    store.save_model_vectors(s.id, [ModelVector(m, np.arange(4, dtype=np.float32) + i, 4, bs)
                                    for i, (m, bs) in enumerate(zip(models, lists))])
    assert sorted(store.model_benchmark_lists(s.id)) == [[], ["law"], ["law", "math"], ["math"]]
    every, V = store.model_benchmark_vectors(s.id)
    assert sorted(map(tuple, every)) == sorted(map(tuple, lists)) and V.shape == (5, 4)
    some, W = store.model_benchmark_vectors(s.id, [["math"], ["law"]])
    assert sorted((tuple(bs), tuple(v)) for bs, v in zip(some, W.tolist())) == [
        (("law",), (4.0, 5.0, 6.0, 7.0)), (("math",), (0.0, 1.0, 2.0, 3.0)), (("math",), (2.0, 3.0, 4.0, 5.0))]
    assert [x for x in zip(every, V.tolist()) if x[0] in (["math"], ["law"])] == list(zip(some, W.tolist()))
    assert store.model_benchmark_vectors(s.id, [["gamma"]])[1].shape == (0, 4)
    assert store.model_benchmark_lists(s.id + 1) == []


def test_spaces_and_model_vectors(store):
    store.ingest(batch(outcomes=grid(A, P)))
    s = store.get_or_create_space("all-MiniLM-L6-v2@abc", 4, 1.0, 0.0)
    assert store.get_or_create_space("all-MiniLM-L6-v2@abc", 4, 1.0, 0.0) == s
    assert store.get_or_create_space("all-MiniLM-L6-v2@abc", 4, 0.5, 0.0).id != s.id
    assert [x.id for x in store.list_spaces()] == [s.id, s.id + 1]
    digests = store.model_digests()
    assert store.stale_models(s.id) == sorted(A)
    vecs = [ModelVector(k, np.arange(4, dtype=np.float32) + i, 4, ["math"], {"math": 0.5}, digests[k]) for i, k in enumerate(A)]
    assert store.save_model_vectors(s.id, vecs) == 3
    got = {v.model: v for v in store.load_model_vectors(s.id)}
    np.testing.assert_array_equal(got[A[1]].vector, np.arange(4) + 1)
    assert got[A[1]].accuracy == {"math": 0.5} and got[A[1]].benchmarks == ["math"] and got[A[1]].computed_at is not None
    assert store.stale_models(s.id) == [] and store.changed_outcomes(s.id, A) == set()
    store.ingest(batch(location="/data/b.csv", outcomes=grid(A[:1], ["New prompt"])))
    assert store.stale_models(s.id) == [A[0]]
    # the results an answer's evidence would read changed since the vector was solved (asked of given keys only)
    assert store.changed_outcomes(s.id, A) == {A[0]} and store.changed_outcomes(s.id, A[1:]) == set()
    assert store.changed_outcomes(s.id, None) == {A[0]}  # every model with a vector in the space, without keys
    assert store.changed_outcomes(s.id + 1, A) == set()  # no vector in that space: nothing it was solved from
    store.save_model_vectors(s.id, [ModelVector(A[0], np.ones(4), 5, ["math"], {}, store.model_digests()[A[0]])])
    assert store.stale_models(s.id) == [] and store.load_model_vectors(s.id, [A[0]])[0].n_prompts == 5
    assert store.changed_outcomes(s.id, A) == set()
    with pytest.raises(DimensionError, match="dimension 3"):
        store.save_model_vectors(s.id, [ModelVector(A[0], np.ones(3), 1)])
    with pytest.raises(NotFoundError, match="org/ghost"):
        store.save_model_vectors(s.id, [ModelVector("org/ghost", np.ones(4), 1)])
    keys, M = store.model_vector_matrix(s.id)  # every vector, in key order, as load_model_vectors gives them
    assert keys == sorted(A) and M.dtype == np.float32 and M.shape == (3, 4)
    assert all(np.array_equal(M[i], v.vector) for i, v in enumerate(store.load_model_vectors(s.id)))
    assert store.delete_model_vectors(s.id, [A[0]]) == 1
    assert store.stale_models(s.id) == [A[0]]
    assert store.model_vector_matrix(s.id)[0] == sorted(A[1:])
    assert store.model_vector_matrix(s.id + 1)[1].shape == (0, 4)


def test_space_prior_is_saved_with_the_vectors_and_makes_other_vectors_stale(store):
    from indexer.store.sql import SpacePrior
    from indexer.store.sql_types import vector_digest

    store.ingest(batch(outcomes=grid(A, P)))
    s = store.get_or_create_space("enc@1", 4, 1.0, 0.0, method="auto-mean", params={"prior": "mean"})
    assert store.get_space_prior(s.id) is None
    digests = store.model_digests()
    u = np.array([0.1, -0.2, 1 / 3])  # float64 kept exactly (the embedding part: dim - 1 with the intercept)
    prior = SpacePrior(u, 3)
    vecs = [ModelVector(k, np.ones(4), 4, ["math"], {}, vector_digest(digests[k], prior)) for k in A]
    # a bad prior is refused before anything is written: no vector, no prior
    with pytest.raises(InputError, match="invalid prior: 5 entries for a space of dimension 4"):
        store.save_model_vectors(s.id, vecs, prior=SpacePrior(np.zeros(5), 3))
    assert store.load_model_vectors(s.id) == [] and store.get_space_prior(s.id) is None
    assert store.save_model_vectors(s.id, vecs, prior=prior) == 3
    got = store.get_space_prior(s.id)
    np.testing.assert_array_equal(got.vector, u)
    assert (got.n_models, got.digest) == (3, prior.digest) and got.computed_at is not None
    assert store.stale_models(s.id) == []
    # another prior: every vector solved toward the old one is stale
    u2 = u + 1.0
    store.save_model_vectors(s.id, [], prior=SpacePrior(u2, 3))
    np.testing.assert_array_equal(store.get_space_prior(s.id).vector, u2)
    assert store.stale_models(s.id) == sorted(A)
    # a space without a prior is unaffected
    plain = store.get_or_create_space("enc@1", 4, 1.0, 0.0)
    assert store.get_space_prior(plain.id) is None


def test_benchmark_vectors(store):
    store.ingest(batch(outcomes=grid(A, P) + grid(A, ["Is it raining?"], bench="weather")))
    s = store.get_or_create_space("enc@1", 3, 1.0, 0.0)
    store.save_benchmark_vectors(s.id, [BenchmarkVector("math", np.ones(3), 4), BenchmarkVector("weather", np.zeros(3), 1)])
    store.save_benchmark_vectors(s.id, [BenchmarkVector("math", np.full(3, 2.0), 4)])
    got = {b.benchmark: b for b in store.load_benchmark_vectors(s.id)}
    np.testing.assert_array_equal(got["math"].vector, [2, 2, 2])
    assert got["weather"].n_prompts == 1
    with pytest.raises(DimensionError):
        store.save_benchmark_vectors(s.id, [BenchmarkVector("math", np.ones(5), 4)])


def test_runs(store):
    r1 = store.start_run()
    r2 = store.start_run("reindex")
    done = store.finish_run(r1, "partial", {"sources": 2}, [{"file": "x.csv", "line": 3, "message": "bad"}])
    assert done.status == "partial" and done.counts == {"sources": 2} and done.errors[0]["line"] == 3
    assert done.finished_at >= done.started_at
    runs = store.list_runs()
    assert [r.id for r in runs] == [r2, r1] and runs[0].status == "running" and runs[0].finished_at is None
    with pytest.raises(InputError, match="status"):
        store.finish_run(r2, "great")
    with pytest.raises(NotFoundError):
        store.finish_run(9999, "ok")
    # a limit past any id (`taskspace runs -n 9999999999999999999`) is every run; before, PostgreSQL's "bigint out of
    # range" as a store error (exit 3) and SQLite's OverflowError traceback
    for huge in (2**63, 10**19, 2**31):
        assert [r.id for r in store.list_runs(limit=huge)] == [r2, r1]



def test_a_run_left_running_by_a_killed_process_is_told_from_a_running_one(store):
    """`Store.run_left_running` (what `taskspace runs` shows): a run recorded "running" whose process is gone (SQLite:
    its pid no longer lives; PostgreSQL: no session holds its lock) was left by a killed process; a run whose pass
    holds the lock is running. Nothing is locked or written to tell."""
    from helpers import dead_pid
    from sqlalchemy import update

    from indexer.store.sql_models import Run

    with store.lock("index"):
        live = store.start_run("index")
        assert not store.run_left_running(store.get_run(live))
    dead = store.start_run("index")
    with store.engine.begin() as conn:
        conn.execute(update(Run).where(Run.id.in_([live, dead])).values(pid=dead_pid()))
    assert store.run_left_running(store.get_run(dead)) and store.run_left_running(store.get_run(live))
    with store.lock("index"):  # a pass that holds the lock (PostgreSQL) ...
        with store.engine.begin() as conn:  # ... in a live process (SQLite)
            conn.execute(update(Run).where(Run.id == dead).values(pid=os.getpid()))
        assert not store.run_left_running(store.get_run(dead))
    assert not store.run_left_running(store.finish_run(live, "ok"))
    assert [r.status for r in store.list_runs()] == ["running", "ok"]  # the record itself is the next pass's to mark


def test_record_checked(store):
    with pytest.raises(InputError, match="kind"):
        store.record_checked("hub:org/results")
    s = store.record_checked("hub:org/results", kind="leaderboard", revision="sha1")
    assert (s.seen_revision, s.revision, s.ingested_at, s.checked_at is not None) == ("sha1", None, None, True)
    r = store.ingest(batch(location="hub:org/results", revision="sha1", kind="leaderboard", outcomes=grid(A, P)))
    assert not r.skipped  # checked is not ingested
    s = store.record_checked("hub:org/results", revision="sha2")
    assert (s.seen_revision, s.revision) == ("sha2", "sha1")
    assert [x.location for x in store.list_sources()] == ["hub:org/results"]


def test_lock_is_exclusive_and_released(store):
    with store.lock("index"):
        with pytest.raises(BusyError, match="another taskspace process holds the 'index' lock"):
            with store.lock("index"):
                pass
        with store.lock("other"):
            pass
    with store.lock("index"):
        pass


@pytest.mark.parametrize("require, code, word", [("", 0, "skipped"), ("1", 1, "failed")])
def test_unreachable_postgres_skips_locally_and_fails_on_ci(require, code, word):
    """Without a server the PostgreSQL tests skip with the reason; with TASKSPACE_REQUIRE_POSTGRES=1 (.ci/run) they fail."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = dict(os.environ, TASKSPACE_TEST_POSTGRES_URL="postgresql+psycopg://postgres@127.0.0.1:1/test",
               TASKSPACE_REQUIRE_POSTGRES=require)
    root = Path(__file__).resolve().parents[1]
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                        "tests/test_sql.py::test_runs[postgresql]"], cwd=root, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == code, p.stdout[-2000:]
    assert f"1 {word}" in p.stdout and "PostgreSQL not reachable" in p.stdout


def test_numpy_scores_and_name_limits(store):
    outs = [Outcome("org/alpha", "math", "q1", np.float32(1.0)), Outcome("org/alpha", "math", "q2", np.int64(0)),
            Outcome("org/alpha", "math", "q3", True)]
    assert store.ingest(batch(outcomes=outs)).outcomes == 3
    with pytest.raises(InputError, match="longer than 512"):
        store.ingest(batch(location="/d/long.csv", outcomes=[Outcome("o/" + "x" * 600, "math", "q1", 1.0)]))
    with pytest.raises(InputError, match="without a model"):
        store.ingest(batch(location="/d/nomodel.csv", outcomes=[Outcome("", "math", "q1", 1.0)]))
    with pytest.raises(InputError, match="score 'yes'"):
        store.ingest(batch(location="/d/str.csv", outcomes=[Outcome("org/alpha", "math", "q1", "yes")]))
    assert [s.location for s in store.list_sources()] == ["/data/a.csv"]


def test_database_errors_become_store_errors(store):
    from indexer.errors import StoreError

    store.ingest(batch(outcomes=grid(A, P)))
    from indexer.store import sql_migrate

    sql_migrate.downgrade(store.engine, "base")  # the tables vanish under the store
    with pytest.raises(StoreError, match="reading from the database failed"):
        store.list_models()
    with pytest.raises(StoreError, match="ingesting /data/b.csv failed, nothing of it was saved"):
        store.ingest(batch(location="/data/b.csv", revision=None, outcomes=grid(A, P)))  # no early read


def test_ingest_reads_a_columnar_table_batch(store, tmp_path):
    """A reader's big-table form (SourceBatch.table) is stored like Outcome rows, never silently dropped."""
    from indexer.sources import read_source

    (tmp_path / "prompts.jsonl").write_text(
        '{"prompt_id": "p1", "benchmark": "b", "text": "What is 2+2?"}\n'
        '{"prompt_id": "p2", "benchmark": "b", "text": "Name a prime number."}\n')
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\nm1,p2,0\nm2,p1,1\n")
    batch = read_source(tmp_path)
    assert batch.table is not None and not batch.outcomes  # the columnar path
    res = store.ingest(batch)
    assert res.outcomes == 3
    om = store.load_outcomes()
    assert om.models == ["m1", "m2"] and int((~np.isnan(om.scores)).sum()) == 3


def _content(store) -> tuple:
    """Everything an ingest stores, in a comparable form (ids left out)."""
    om = store.load_outcomes()
    models = [(m.key, m.kind, m.revision) for m in store.list_models()]
    members = {b.name: [store.prompt_hashes([p])[0] for p in store.benchmark_prompts(b.name)] for b in store.list_benchmarks()}
    return (models, members, store.model_digests(), om.models, om.prompt_hashes, om.scores.tobytes(),
            [(s.location, s.revision, s.n_outcomes) for s in store.list_sources()])


def test_columnar_ingest_stores_what_outcome_rows_store(db_url, tmp_path):
    """The same cells as Outcome rows or as a columnar table (copies of a text averaged, revisions, several
    benchmarks, a model under two revisions) give the same stored content, revision fingerprint included."""
    from indexer.records import OutcomeTable
    from indexer.store.sql import Store

    rng = np.random.default_rng(3)
    rows = []
    for i, m in enumerate(["org/a", "org/b", "plain-name", "org/a"]):  # org/a again: a second revision
        for j in rng.permutation(12):
            bench = "math" if j < 8 else "code"
            text = f"question {j % 6}"  # math: texts 0 and 1 twice (copies, averaged); code: texts 2-5 again
            rows.append(Outcome(m, bench, text, float(rng.integers(0, 2)) if j % 3 else float(rng.random()),
                                revision=("r1" if i == 0 else "r2") if m == "org/a" else None, prompt_id=f"p{j}"))
    as_rows = SourceBatch(SourceInfo("table", "/d/x.csv", None), {}, list(rows))
    as_table = SourceBatch(SourceInfo("table", "/d/x.csv", None), {}, table=OutcomeTable.from_outcomes(rows))
    half = SourceBatch(SourceInfo("table", "/d/x.csv", None), {}, list(rows[:20]),
                       table=OutcomeTable.from_outcomes(rows[20:]))
    got = []
    for k, b in enumerate([as_rows, as_table, half]):
        url = db_url if k == 0 else f"sqlite:///{tmp_path / f'c{k}.db'}"
        with Store(url, upgrade=True) as s:
            res = s.ingest(b)
            got.append((res.models, res.prompts, res.outcomes, _content(s)))
    assert got[0][:3] == (3, 6, 30)  # 3 models, 6 texts; per model 6 math + 4 code cells after merging copies
    assert got[1] == got[0] and got[2] == got[0]
    assert got[0][3][0][0] == ("org/a", "hub", "r2")
    # every stored cell is the mean of that model's outcomes on that text (each text's copies weigh the same here)
    _, _, _, models, hashes, scores, _ = got[0][3]
    scores = np.frombuffer(scores, np.float32).reshape(len(models), len(hashes))
    for i, m in enumerate(models):
        for j, h in enumerate(hashes):
            want = [o.score for o in rows if o.model == m and prompt_hash(o.text) == h]
            assert scores[i, j] == pytest.approx(np.mean(want), abs=1e-6)


def test_columnar_ingest_reports_the_first_bad_cell(store):
    from indexer.records import OutcomeTable

    def table(models, texts, scores):
        return OutcomeTable(models=models, prompt_ids=[f"p{i}" for i in range(len(texts))], benchmarks=["b"] * len(texts),
                            texts=texts, model_idx=np.zeros(len(scores), np.int32),
                            prompt_idx=np.arange(len(scores), dtype=np.int32) % len(texts), scores=np.asarray(scores, float))

    def ingest(t):
        return store.ingest(SourceBatch(SourceInfo("table", "/d/t.csv", "r"), {}, table=t))

    with pytest.raises(InputError, match=r"m / b / p1: score 1.5 is not in \[0, 1\]"):
        ingest(table(["m"], ["q0", "q1", " "], [1.0, 1.5, 0.0]))
    with pytest.raises(InputError, match="m / b / p1: empty prompt text"):
        ingest(table(["m"], ["q0", " ", "q2"], [1.0, 0.5, 2.0]))
    with pytest.raises(InputError, match="without a model name"):
        ingest(table([" "], ["q0"], [1.0]))
    assert store.list_sources() == []


def test_list_models_by_keys_and_vector_keys(store):
    store.ingest(batch(outcomes=grid(A, P)))
    assert [m.key for m in store.list_models(keys=["org/beta", "org/ghost", "org/alpha"])] == ["org/alpha", "org/beta"]
    assert store.list_models(keys=[]) == []
    s = store.get_or_create_space("enc@1", 4, 1.0, 0.0)
    assert store.model_vector_keys(s.id) == []
    store.save_model_vectors(s.id, [ModelVector(k, np.ones(4), 4) for k in A[:2]])
    assert store.model_vector_keys(s.id) == sorted(A[:2])


def test_unmeasured_vectors_names_a_space_holding_a_model_without_outcomes(store):
    """Whether a model with a vector in the space has no outcomes in SQL (a pulled model), through the partial index
    of the unmeasured models (0009): a model without outcomes but also without a vector there does not count."""
    from sqlalchemy import text

    store.ingest(batch(outcomes=grid(A, P)))
    s, other = store.get_or_create_space("enc@1", 4, 1.0, 0.0), store.get_or_create_space("enc@2", 4, 1.0, 0.0)
    digests = store.model_digests()
    store.save_model_vectors(s.id, [ModelVector(k, np.ones(4), 4, inputs_digest=digests[k]) for k in A[:2]])
    assert not store.unmeasured_vectors(s.id) and not store.unmeasured_vectors(other.id)
    store.upsert_models([{"key": "org/metadata-only", "license": "mit"}])  # no outcomes, no vector
    assert not store.unmeasured_vectors(s.id)
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE models SET outcomes_digest = NULL WHERE key = :k"), {"k": A[1]})
    assert store.unmeasured_vectors(s.id) and not store.unmeasured_vectors(other.id)


def test_first_positions_equal_a_scan_of_every_cell():
    """The ingest's first cell of each prompt index (read in growing slices, stopping once all were seen) is the
    first occurrence, and the length for an index no cell has, whether every index occurs early, late or never."""
    import numpy as np

    from indexer.store.sql_ingest import _first_positions

    rng = np.random.default_rng(0)
    for size, n, late in ((7, 0, None), (50, 40_000, None), (50, 100_000, 49), (300, 70_000, None), (5, 20, 4)):
        idx = rng.integers(0, size - 1 if late is not None else size, n).astype(np.int32)
        if late is not None:
            idx[-1] = late  # one index seen only in the last cell (past every early slice)
        want = np.full(size, n, dtype=np.int64)
        for k in range(n - 1, -1, -1):
            want[idx[k]] = k
        assert np.array_equal(_first_positions(idx, size), want)


def test_upsert_models_reads_a_parameter_count_of_zero_as_unknown(store):
    """`Store.upsert_models` from a library caller: a parameter count of 0 (or below) is unknown (None), as
    `records.parameter_count` reads it everywhere else (the Hub metadata, records, pull), and the repo it was counted
    from goes with it; an integral float is that integer; a count that is no number (`"7B"`, True) is an InputError
    naming the model and the field. Before, 0 was stored as given, a size no search can charge (log10(0))."""
    store.upsert_models([{"key": "org/zero", "num_parameters": 0, "num_parameters_from": "org/base"},
                         {"key": "org/below", "num_parameters": -5}, {"key": "org/float", "num_parameters": 7e9},
                         {"key": "org/sized", "num_parameters": 1_000_000}])
    got = {k: store.get_model(k) for k in ("org/zero", "org/below", "org/float", "org/sized")}
    assert {k: (m.num_parameters, m.num_parameters_from) for k, m in got.items()} == {
        "org/zero": (None, None), "org/below": (None, None), "org/float": (7_000_000_000, None),
        "org/sized": (1_000_000, None)}
    store.upsert_models([{"key": "org/sized", "num_parameters": 0}])  # a caller's "unknown" now
    assert store.get_model("org/sized").num_parameters is None
    for bad in ("7B", True, 7.5):
        with pytest.raises(InputError, match=r"org/bad.*num_parameters.*a whole number"):
            store.upsert_models([{"key": "org/bad", "num_parameters": bad}])
    assert store.get_model("org/bad") is None


def test_a_closed_store_says_to_open_a_new_one_instead_of_reconnecting(tmp_path):
    """``s = open_store(URL); s.close(); list_benchmarks(store=s)``: a StoreError naming the database and saying to
    open a new store, as a closed VectorStore says; closing twice is fine. Before, the closed store quietly opened new
    connections (and kept them open, unclosed, after its close)."""
    from indexer import list_benchmarks
    from indexer.errors import NotFoundError, StoreError
    from indexer.store.sql import open_store

    url = f"sqlite:///{tmp_path / 't.db'}"
    from indexer.store.sql import Store

    Store(url, upgrade=True).close()
    s = open_store(url)
    with pytest.raises(NotFoundError, match="the index is empty"):  # open, nothing ingested: the empty-index error
        list_benchmarks(store=s)
    s.close()
    s.close()
    with pytest.raises(StoreError, match=r"t\.db is closed; open a new one \(indexer\.store\.sql\.open_store"):
        list_benchmarks(store=s)
    with open_store(url) as again, pytest.raises(NotFoundError, match="the index is empty"):
        list_benchmarks(store=again)
