"""indexer.find: one entry point for prompt / prompts / benchmark / vector queries, Qdrant payload filters with
counts, compare mode, the size trade-off, coverage and evidence, on a tiny real index (SQLite + Qdrant Edge)."""

import json
import math
import re

import numpy as np
import pytest

from indexer import Filters, FindResult, find_models
from indexer.errors import DimensionError, InputError, NotFoundError
from indexer.find import NEAR_SIMILARITY, UNKNOWN_PARAMS, parse_params

from helpers import TOPICS, index_sources, outcomes

ALPHA = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(16)]
BETA = [f"Write a Python function number {j} that sorts a list of integers" for j in range(12)]
ALPHA_MODELS = ["org/small", "org/big", "gpt-4o(eval_results/gpt4o)", "Qwen--Qwen1.5-7B", "plain-name"]
BETA_MODELS = ["org/small", "coder/only-code"]


@pytest.fixture
def idx(tmp_path, encoder):
    rng = np.random.default_rng(3)
    a, b = outcomes(rng, ALPHA_MODELS, 16), outcomes(rng, BETA_MODELS, 12)
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", ALPHA, a), (tmp_path / "b", "beta", BETA, b)])
    store.upsert_models([{"key": "org/small", "license": "mit", "num_parameters": 1_500_000_000},
                         {"key": "org/big", "license": "apache-2.0", "num_parameters": 70_000_000_000, "gated": True},
                         {"key": "coder/only-code", "license": "mit", "num_parameters": 7_000_000_000,
                          "pipeline_tag": "text-generation"}])
    from indexer import sync

    sync.push_models(store, vectors, store.list_spaces()[0].id)
    yield store, vectors, {"alpha": a, "beta": b}
    vectors.close()
    store.close()


def ask(idx, *args, **kw):
    store, vectors, _ = idx
    return find_models(*args, store=store, vectors=vectors, **kw)


def test_filters_take_numpy_values_and_say_a_wrong_licenses_type_is_an_input_error():
    """`Filters` built from a DataFrame row or numpy arrays: `exclude_gated=np.bool_(True)` is True and its
    `to_dict()` plain JSON (before: ValueError "The truth value of an empty array is ambiguous", so every
    `find_models` with it failed), `licenses=np.array([...])` or a tuple the licenses it holds; `licenses=5` is the
    InputError naming `filters.licenses` (before: TypeError 'int' object is not iterable)."""
    flt = Filters(exclude_gated=np.bool_(True), open_only=np.bool_(False), licenses=np.array(["mit", "apache-2.0"]))
    assert flt.to_dict() == {"exclude_gated": True, "licenses": ["mit", "apache-2.0"]}
    assert type(flt.exclude_gated) is bool and type(flt.open_only) is bool
    assert json.loads(json.dumps(flt.to_dict())) == flt.to_dict()
    assert flt.conditions()["exclude_gated"] == {"gated": False}
    assert Filters(licenses=("mit",)).licenses == ["mit"]
    for bad in (5, b"mit", {"mit": 1}):
        with pytest.raises(InputError, match="licenses must be a license name or a list of them") as err:
            Filters(licenses=bad)
        assert err.value.item == "filters.licenses"


def test_parse_params_human_units():
    assert parse_params("8B") == 8e9 and parse_params("1.5b") == 1.5e9 and parse_params("770M") == 7.7e8
    assert parse_params("350k") == 3.5e5 and parse_params(7e9) == 7e9 and parse_params("1T") == 1e12
    for bad in ("8 bytes", "", "B", "-1B", "0", True):
        with pytest.raises(InputError, match="parameter count"):
            parse_params(bad)
    with pytest.raises(InputError, match="filters.max_params"):
        Filters(max_params="lots")
    with pytest.raises(InputError, match="above max_params"):
        Filters(min_params="8B", max_params="1B")
    with pytest.raises(InputError, match=r"unknown filter \['colour'\]") as err:
        Filters.from_dict({"colour": "red"})
    assert err.value.item == "filters.colour"  # the key itself, as a bad value of a known one (filters.licenses)
    with pytest.raises(InputError, match=r"unknown filters \['colour', 'size'\]") as err:
        Filters.from_dict({"colour": "red", "size": 1})
    assert err.value.item == "filters"
    with pytest.raises(InputError, match=r"unknown filter \['license'\] \(did you mean 'licenses'\?\); known: "):
        Filters.from_dict({"license": "mit"})  # the HTTP body's filters: a near name is suggested, as for fields
    assert Filters.from_dict({"max_params": "8B", "licenses": "mit"}).conditions() == {
        "licenses": {"license": ["mit"]}, "max_params": {"num_parameters": {"lte": 8_000_000_000}}}


def test_one_entry_point_four_kinds_and_the_json_shape(idx):
    one = ask(idx, "Write a Python function that sorts numbers", k=3)
    assert isinstance(one, FindResult) and one.query["kind"] == "prompt" and one.query["prompts"] == 1
    several = ask(idx, [BETA[0], BETA[1]], k=3)
    assert several.query["kind"] == "prompts" and several.query["prompts"] == 2
    bench = ask(idx, benchmark="beta", k=3)
    assert bench.query["kind"] == "benchmark" and bench.query["options_filled"] is False
    store, vectors, _ = idx
    from indexer.space import space_name

    (space,) = store.list_spaces()
    q = vectors.get(space_name(space), "benchmarks", ["beta"], with_vectors=True)["beta"].vector
    raw = ask(idx, vector=q, k=3)
    assert raw.query["kind"] == "vector"
    assert [r.model for r in raw] == [r.model for r in bench] and [r.score for r in raw] == pytest.approx([r.score for r in bench])
    d = json.loads(json.dumps(one.to_dict()))
    assert set(d) == {"query", "space", "results", "excluded", "missing_metadata"}
    assert {"encoder", "method"} <= set(d["space"])
    r = d["results"][0]
    assert set(r) >= {"model", "hub_id", "api_only", "aliases", "score", "probability", "interval", "coverage", "evidence",
                      "metadata"}
    assert set(r["coverage"]) == {"near", "measured_near", "benchmarks"}
    assert set(r["evidence"]) == {"prompts", "benchmarks"}
    assert set(r["metadata"]) == {"license", "params", "pipeline_tag", "gated", "open_weights", "base_model", "params_from"}
    for res in (one, several, bench, raw):
        for m in res:
            if res.space["signal"]:
                assert 0.0 <= m.low <= m.probability <= m.high <= 1.0
            else:  # this 4-model index's held-out cells carry no signal: the base rate, and no interval
                assert 0.0 <= m.probability <= 1.0 and np.isnan(m.low) and np.isnan(m.high)
        # ranked by probability (the folded query's inner product, rank_score; tests/test_levels.py)
        assert [m.probability for m in res] == sorted([m.probability for m in res], reverse=True)
        assert [m.rank_score for m in res] == sorted([m.rank_score for m in res], reverse=True)


def test_bad_queries_name_what_is_wrong(idx):
    with pytest.raises(InputError, match="exactly one of prompts"):
        ask(idx, "x", benchmark="alpha")
    with pytest.raises(InputError, match="exactly one of prompts"):
        ask(idx)
    with pytest.raises(InputError, match=r"prompts\[1\]"):
        ask(idx, ["ok", "  "])
    with pytest.raises(InputError, match="k must be a positive integer"):
        ask(idx, "x", k=0)
    with pytest.raises(InputError, match="unknown ranking"):
        ask(idx, "x", rank="best")
    with pytest.raises(InputError, match="prefer_smaller"):
        ask(idx, "x", prefer_smaller=-1)
    with pytest.raises(NotFoundError, match="did you mean alpha"):
        ask(idx, benchmark="alpah")
    with pytest.raises(DimensionError, match="entries"):
        ask(idx, vector=[0.1, 0.2])


def test_malformed_arguments_are_input_errors_naming_the_argument(idx):
    """Each a clear InputError / NotFoundError whose ``item`` names the argument (the HTTP answer's ``field``), never
    a ValueError from numpy, a dict read as its keys, an empty list read as "no prompts given" or true read as 1."""
    cases = [({"prompts": []}, "prompts", "empty list"), ({"prompts": {"a": 1}}, "prompts", "not dict"),
             ({"vector": "abc"}, "vector", "list of numbers"), ({"vector": {"a": 1}}, "vector", "list of numbers"),
             ({"vector": [0.5, "a"]}, "vector[1]", "entry 1 is 'a'"), ({"vector": [None]}, "vector[0]", "None"),
             ({"prompts": "x", "prefer_smaller": True}, "prefer_smaller", "from 0 to 100"),
             ({"prompts": "x", "prefer_smaller": 1e308}, "prefer_smaller", "from 0 to 100"),
             ({"prompts": "x", "benchmark": "alpha"}, "query", "got prompts and benchmark"), ({}, "query", "got none")]
    for kw, item, says in cases:
        with pytest.raises(InputError, match=re.escape(says)) as err:
            ask(idx, **kw)
        assert err.value.item == item, (kw, err.value.item)
    for kw, item in (({"benchmark": "alpah"}, "benchmark"), ({"prompts": "x", "models": ["org/nope"]}, "models[0]"),
                     ({"prompts": "x", "filters": {"benchmark": "alpah"}}, "filters.benchmark")):
        with pytest.raises(NotFoundError, match="unknown") as err:
            ask(idx, **kw)
        assert err.value.item == item
    assert ask(idx, "x", k=2, prefer_smaller=100).query["prefer_smaller"] == 100.0


def test_text_no_database_takes_is_an_input_error_naming_its_argument(idx):
    """A lone surrogate (a JSON ``\\ud800`` escape, a command-line argument that was not UTF-8) reached the prompt hash,
    the SQL driver or Qdrant's filter and raised UnicodeEncodeError / TypeError: a traceback on the command line, a
    500 over HTTP. A NUL prompt was embedded as if it were text. Now each is an InputError naming the argument."""
    cases = [({"prompts": "\ud800abc"}, "prompts[0]", "not valid UTF-8"),
             ({"prompts": ["fine", "a\udc80"]}, "prompts[1]", "not valid UTF-8"),
             ({"prompts": "a\x00b"}, "prompts[0]", "NUL"),
             ({"benchmark": "\udfff"}, "benchmark", "not valid Unicode"),
             ({"prompts": "x", "models": ["gpt\ud800"]}, "models[0]", "not valid Unicode"),
             ({"prompts": "x", "filters": {"licenses": ["mit", "\ud800"]}}, "filters.licenses[1]", "not valid Unicode"),
             ({"prompts": "x", "filters": {"pipeline_tag": "\ud800"}}, "filters.pipeline_tag", "not valid Unicode"),
             ({"prompts": "x", "filters": {"benchmark": "\ud800"}}, "filters.benchmark", "not valid Unicode")]
    for kw, item, says in cases:
        with pytest.raises(InputError, match=says) as err:
            ask(idx, **kw)
        assert err.value.item == item, (kw, err.value.item)
    assert ask(idx, "fine \U0001F600", k=1).results  # a character beyond the BMP (a surrogate pair in JSON) is text
    # the way out named for what is wrong (before, "without NUL characters" for a lone surrogate too)
    with pytest.raises(InputError) as err:
        ask(idx, "a\udc80")
    assert str(err.value).endswith("(a lone surrogate): send the prompt as valid UTF-8 text: a surrogate escape without "
                                   "its pair (a JSON \\ud800 alone) is no character; drop it or send the pair"), err.value
    with pytest.raises(InputError) as err:
        ask(idx, "a\x00b")
    assert str(err.value).endswith("holds a NUL character: send the prompt without NUL characters"), err.value


def test_a_prompt_of_invisible_characters_only_is_an_input_error(idx):
    """A query prompt of zero-width spaces, a byte order mark or control characters only (`"\\ufeff"`, `" \\u200b "`):
    an InputError naming `prompts[i]`; before, it passed the blank check (`str.strip` keeps them) and was ranked as if
    something had been asked (the encoder reads nothing of it). Visible text among them is a prompt."""
    for prompts, item in (("\ufeff", "prompts[0]"), (["fine", " \u200b\u200d "], "prompts[1]"), ("\x07", "prompts[0]")):
        with pytest.raises(InputError, match="a prompt must have visible text") as err:
            ask(idx, prompts)
        assert err.value.item == item
    assert ask(idx, "\u200bWhat is item 3 of alpha?", k=1).results


def test_a_benchmark_known_but_not_indexed_says_which_command_indexes_it(idx, tmp_path):
    """A benchmark whose results were ingested but not indexed yet (``taskspace ingest``) was "unknown benchmark
    'gamma'; did you mean gamma?". Now the error says it is not indexed yet and to run ``taskspace index``; one whose
    vector is in SQL but missing from the index says ``taskspace reindex``; an unknown name still gets suggestions."""
    from indexer.ingest import ingest

    from helpers import write_source
    from indexer.space import space_name

    store, vectors, _ = idx
    write_source(tmp_path / "g", "gamma", ALPHA[:4], outcomes(np.random.default_rng(0), ["org/small"], 4))
    assert ingest(str(tmp_path / "g"), store=store, fetch_metadata=False).outcomes == 4
    with pytest.raises(NotFoundError) as err:
        ask(idx, benchmark="gamma")
    msg = str(err.value)
    assert "not indexed" in msg and "`taskspace index`" in msg and "did you mean" not in msg
    assert err.value.item == "benchmark"
    # as a filter, and as the benchmark a listing restricts to: the same error (before: no model, "loosen the filters",
    # and a listing of 0, until the pass published the models measured on it)
    from indexer.browse import count_models, list_models, models_page

    with pytest.raises(NotFoundError, match="not indexed .*`taskspace index`") as err:
        ask(idx, ALPHA[0], filters={"benchmark": "gamma"})
    assert err.value.item == "filters.benchmark"
    for call, item in ((lambda: models_page(benchmark="gamma", store=store, vectors=vectors), "benchmark"),
                       (lambda: models_page(filters={"benchmark": "gamma"}, store=store, vectors=vectors),
                        "filters.benchmark"),
                       (lambda: list_models("gamma", store=store, vectors=vectors), "benchmark"),
                       (lambda: count_models("gamma", store=store, vectors=vectors), "benchmark")):
        with pytest.raises(NotFoundError, match="not indexed .*`taskspace index`") as err:
            call()
        assert err.value.item == item
    (space,) = store.list_spaces()
    vectors.delete(space_name(space), "benchmarks", ["beta"])
    with pytest.raises(NotFoundError, match=r"in the database but not in the index .*`taskspace reindex`"):
        ask(idx, benchmark="beta")
    with pytest.raises(NotFoundError, match=r"unknown benchmark 'gamm'; did you mean gamma"):
        ask(idx, benchmark="gamm")


def test_an_index_that_lost_its_models_is_a_store_error_not_an_empty_answer(idx):
    """The models collection emptied by hand (or by a damaged copy) while SQL holds the vectors: a search answered an
    empty list (the CLI printed a hint and exited 0, HTTP said 200). Now it is a StoreError (exit 3, HTTP 503) saying
    the index drifted and `taskspace reindex` rebuilds it, with a filter or without; a filter that removes every model
    of a whole index is still an empty answer."""
    from indexer.errors import StoreError
    from indexer.space import space_name

    store, vectors, _ = idx
    (space,) = store.list_spaces()
    assert not ask(idx, "x", filters={"licenses": ["no-such-licence"]}).results
    vectors.delete(space_name(space), "models", store.model_vector_keys(space.id))
    with pytest.raises(StoreError, match=r"answered no model, though the database holds 6 model vectors.*"
                                         r"`taskspace reindex` rebuilds it"):
        ask(idx, "x")
    # (with a filter too, since the index is checked for models before any filter: before, an empty answer)
    with pytest.raises(StoreError, match=r"answered no model, though the database holds 6 model vector"):
        ask(idx, "x", filters={"licenses": ["mit"]})


def test_model_identity_in_results(idx):
    every = {r.model: r for r in ask(idx, benchmark="alpha", k=10)}
    assert "gpt-4o" in every and every["gpt-4o"].api_only and every["gpt-4o"].hub_id is None
    assert every["gpt-4o"].aliases == ["gpt-4o(eval_results/gpt4o)"]
    assert every["Qwen/Qwen1.5-7B"].hub_id == "Qwen/Qwen1.5-7B" and every["Qwen/Qwen1.5-7B"].aliases == ["Qwen--Qwen1.5-7B"]
    assert every["plain-name"].hub_id is None and not every["plain-name"].api_only
    assert every["org/small"].metadata == {"license": "mit", "params": 1_500_000_000, "pipeline_tag": None,
                                           "gated": False, "open_weights": True, "base_model": None,
                                           "params_from": None}


def test_filters_are_payload_filters_with_excluded_and_missing_counts(idx):
    res = ask(idx, benchmark="alpha", k=10, filters=Filters(max_params="8B"))
    assert sorted(r.model for r in res) == ["coder/only-code", "org/small"]
    assert res.excluded == {"max_params": 4} and res.missing_metadata == {"max_params": 3}  # 3 have no parameter count
    res = ask(idx, benchmark="alpha", k=10, filters=Filters(max_params="8B", benchmark="alpha"))
    assert [r.model for r in res] == ["org/small"]
    assert res.excluded == {"max_params": 4, "benchmark": 1} and res.query["filters"]["benchmark"] == "alpha"
    res = ask(idx, benchmark="alpha", k=10, filters={"licenses": ["mit"], "exclude_gated": True})
    assert sorted(r.model for r in res) == ["coder/only-code", "org/small"]
    assert res.excluded == {"licenses": 4, "exclude_gated": 1} and res.missing_metadata == {"licenses": 3}
    res = ask(idx, benchmark="alpha", k=10, filters=Filters(open_only=True))
    assert sorted(r.model for r in res) == ["Qwen/Qwen1.5-7B", "coder/only-code", "org/big", "org/small"]
    assert res.excluded == {"open_only": 2} and res.missing_metadata == {"open_only": 1}  # plain-name: unknown
    res = ask(idx, benchmark="alpha", k=10, filters=Filters(min_evidence=13, pipeline_tag="text-generation"))
    assert [r.model for r in res] == [] and res.excluded["min_evidence"] == 1  # coder measured on 12 prompts


def test_filters_are_not_post_filters(idx, monkeypatch):
    """k results even when the best-scoring models fail the filter: Qdrant filters before it ranks."""
    best = ask(idx, benchmark="alpha", k=10)
    ok = [r.model for r in best if r.metadata["license"] == "mit"]
    got = ask(idx, benchmark="alpha", k=len(ok), filters=Filters(licenses=["mit"]))
    assert [r.model for r in got] == ok


def test_compare_mode_takes_the_models_as_any_sequence_of_names_as_prompts_are_taken(idx):
    """`models=` takes a numpy array of names (a DataFrame column's `.values`) or a generator, as `prompts=` of the
    same call does, and answers as for the list; an empty array or a dict is still the InputError naming `models`.
    Before, `models=np.array([...])` was "models must be a non-empty list of model names"."""
    import numpy as np

    names = ["org/small", "gpt-4o"]
    want = ask(idx, BETA[2], models=names)
    for given in (np.array(names), (n for n in names)):
        got = ask(idx, BETA[2], models=given)
        assert [r.model for r in got] == [r.model for r in want] and got.query["models"] == want.query["models"]
        assert all(type(m) is str for m in got.query["models"])
    with pytest.raises(InputError, match="models must be a non-empty list of model names") as err:
        ask(idx, BETA[2], models=np.array([], dtype=str))
    assert err.value.item == "models"


def test_a_wrong_type_for_models_or_a_model_id_is_said_with_the_type_given(idx):
    """`find_models(models={...})` (or `5`, `b"org/x"`) and `model_detail(5)` (or a list of ids) say the type they
    were given, as `benchmark=5` and `POST /v1/find`'s `"models": 5` do; before, "models must be a non-empty list of
    model names" and "a model id must be a non-empty string", whatever they were given."""
    from indexer import model_detail

    store, vectors, _ = idx
    for bad, said in (({"org/small": 1}, "dict"), (5, "int"), (b"org/small", "bytes")):
        with pytest.raises(InputError, match=f"models must be a model name or a list of them, not {said}$") as err:
            ask(idx, BETA[2], models=bad)
        assert err.value.item == "models"
    for bad, said in ((5, "int"), (["org/small"], "list"), (None, "NoneType")):
        with pytest.raises(InputError, match=f"a model id must be a string, not {said}$") as err:
            model_detail(bad, store=store, vectors=vectors)
        assert err.value.item == "model"
    with pytest.raises(InputError, match="a model id must be a non-empty string$"):
        model_detail("  ", store=store, vectors=vectors)


def test_compare_mode_ranks_exactly_the_given_models_by_any_name(idx):
    res = ask(idx, BETA[2], models=["Qwen--Qwen1.5-7B", "org/small", "gpt-4o(eval_results/gpt4o)"], k=1)
    assert sorted(r.model for r in res) == ["Qwen/Qwen1.5-7B", "gpt-4o", "org/small"]
    full = {r.model: r.rank_score for r in ask(idx, BETA[2], k=10)}
    assert [r.model for r in res] == sorted(["Qwen/Qwen1.5-7B", "gpt-4o", "org/small"], key=full.get, reverse=True)
    assert res.query["models"] == ["Qwen/Qwen1.5-7B", "org/small", "gpt-4o"] and res.query["unranked"] == []
    some = ask(idx, BETA[2], models=["org/small", "gpt-4o"], filters=Filters(open_only=True))
    assert [r.model for r in some] == ["org/small"] and some.query["unranked"] == ["gpt-4o"]
    assert some.excluded == {"open_only": 1}  # counted within the compared models
    with pytest.raises(NotFoundError, match="did you mean org/small"):
        ask(idx, "x", models=["org/smal"])
    one = ask(idx, BETA[2], models="org/small")  # one name, as for a prompt or a licence
    assert [r.model for r in one] == ["org/small"] and one.query["models"] == ["org/small"]
    # Hub ids are case-insensitive on the Hub: a name that differs from one stored key in case only is that model
    # (before: "unknown model 'qwen/qwen1.5-7b'; did you mean Qwen/Qwen1.5-7B?")
    cased = ask(idx, BETA[2], models=["qwen/qwen1.5-7b", "ORG/SMALL"])
    assert sorted(r.model for r in cased) == ["Qwen/Qwen1.5-7B", "org/small"]


def test_a_model_name_in_another_unicode_form_is_that_model(tmp_path, encoder):
    """A model whose name a source wrote with a combining accent ("cafe" + U+0301, as macOS file names and some tools
    write it) is found by the name typed precomposed ("café", what a keyboard gives; the two look the same), and the
    other way round, in compare mode and by `model_detail` (so `taskspace model`, `GET /v1/models/{id}`); before,
    "unknown model 'café-7B'; did you mean café-7B?", a suggestion that looks like the name given."""
    import unicodedata

    from indexer.browse import model_detail

    nfd, nfc = (unicodedata.normalize(f, "Café-7B") for f in ("NFD", "NFC"))
    other_nfc, other_nfd = (unicodedata.normalize(f, "Ünïcödé/Model") for f in ("NFC", "NFD"))
    assert nfd != nfc
    rng = np.random.default_rng(3)
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", ALPHA,
                                              outcomes(rng, ["org/small", nfd, other_nfc], 16))])
    try:
        got = find_models(ALPHA[0], models=[nfc, other_nfd, "cafÉ-7b"], store=store, vectors=vectors)
        # stored under the NFC spelling (indexer.identity), found by either
        assert sorted(r.model for r in got) == sorted([nfc, other_nfc]) and got.query["unranked"] == []
        assert model_detail(nfd, store=store, vectors=vectors)["model"] == nfc
        assert model_detail(other_nfd, store=store, vectors=vectors)["model"] == other_nfc
        with pytest.raises(NotFoundError, match="did you mean"):
            find_models(ALPHA[0], models=["Cafe-7B"], store=store, vectors=vectors)  # another name: not the model
    finally:
        vectors.close()
        store.close()


def test_close_matches_suggest_what_difflib_suggests():
    """The "did you mean" of an unknown name (indexer.find.close_matches, difflib's ratio over only the names its
    quick bound does not rule out) is difflib.get_close_matches' list, the same names in the same order, on a long list
    (typos, case, accents, a name of 250 characters, where difflib's autojunk applies) and a short one."""
    import difflib
    import random

    from indexer.find import close_matches

    rnd = random.Random(5)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.é"
    orgs = ["meta-llama", "Qwen", "mistralai", "org", "café-lab", "Ünïcödé"]
    known = sorted({f"{rnd.choice(orgs)}/{''.join(rnd.choices(alphabet, k=rnd.randint(3, 30)))}" for _ in range(3000)})
    known += ["x" * 240 + "-model", "meta-llama/Llama-3.1-8B", "meta-llama/Meta-Llama-3-8B"]
    words = ["meta-llama/Llama-3-8X", "llama-3.1-8b", "gpt2x", "x" * 250, "Cafe-lab/abc", "Ünïcödé/x", "q", "/"]
    for _ in range(150):
        k = rnd.choice(known)
        i = rnd.randrange(len(k))
        words += [k[:i] + rnd.choice("xq-_.Z9é") + k[i + 1:], k.upper()[:rnd.randint(1, len(k))], k[i:]]
    for word in words:
        assert close_matches(word, known) == difflib.get_close_matches(word, known, n=5, cutoff=0.6), word
        assert close_matches(word, known[:50]) == difflib.get_close_matches(word, known[:50], n=5, cutoff=0.6), word


def test_an_unknown_model_reads_names_not_every_models_record(idx, monkeypatch):
    """A name that is no stored name (an unknown model id, one typed in another case) is looked up in the models' keys
    and names alone (store.model_names): before, every model's record (list_models) and every alias list
    (aliases_by_model) were read, 0.39 s of the 0.6 s an unknown id took on 32,823 models. The answers are as
    before: the case-folded key, the alias typed in another case, "did you mean" the close names."""
    store = idx[0]

    list_models, aliases_by_model = store.list_models, store.aliases_by_model

    def every(read):  # a read of the few models of the answer is what the search does; of every model, refused
        def checked(*a, **kw):
            if not a and kw.get("keys", kw.get("models")) is None:
                raise AssertionError(f"{read.__name__} of every model to look up one name")
            return read(*a, **kw)
        return checked

    monkeypatch.setattr(store, "list_models", every(list_models))
    monkeypatch.setattr(store, "aliases_by_model", every(aliases_by_model))
    with pytest.raises(NotFoundError, match="did you mean org/small"):
        ask(idx, "x", models=["org/smal"])
    cased = ask(idx, BETA[2], models=["qwen/qwen1.5-7b", "ORG/SMALL", "GPT-4O(EVAL_RESULTS/GPT4O)"])
    assert sorted(r.model for r in cased) == ["Qwen/Qwen1.5-7B", "gpt-4o", "org/small"]


def test_prefer_smaller_counts_the_unsized_models_it_ranks_not_those_a_filter_removed(tmp_path, encoder):
    """``missing_metadata["prefer_smaller"]`` (the CLI's "--prefer-smaller: N models without a parameter count are
    charged as 100B", the page's note) counts the models of no known size that the ranking holds: those the filters
    left. Before, it counted every unsized model of the index: on the 32,823-model home, `search ... --prefer-smaller
    0.1 --open-only` ranked 71 models and said 32,823 were charged as 100B."""
    rng = np.random.default_rng(3)
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", ALPHA, outcomes(rng, ALPHA_MODELS, 16))])
    try:
        store.upsert_models([{"key": "org/small", "num_parameters": 1_500_000_000, "license": "mit"},
                             {"key": "org/big", "license": "mit"}])
        from indexer import sync

        sync.push_models(store, vectors, store.list_spaces()[0].id)
        res = find_models(ALPHA[0], k=10, prefer_smaller=0.1, filters=Filters(licenses=["mit"]), store=store,
                          vectors=vectors)
        assert sorted(r.model for r in res) == ["org/big", "org/small"]
        assert res.missing_metadata["prefer_smaller"] == 1  # org/big alone is ranked without a size
        assert res.missing_metadata["licenses"] == 3 and res.excluded["licenses"] == 3  # the filter's as before
        res = find_models(ALPHA[0], k=10, prefer_smaller=0.1, models=["org/big", "plain-name", "org/small"],
                          store=store, vectors=vectors)
        assert res.missing_metadata == {"prefer_smaller": 2}
        res = find_models(ALPHA[0], k=10, prefer_smaller=0.1, filters=Filters(min_params="1B"), store=store,
                          vectors=vectors)  # a size filter leaves no unsized model to charge
        assert [r.model for r in res] == ["org/small"] and res.missing_metadata["prefer_smaller"] == 0
    finally:
        vectors.close()
        store.close()


@pytest.mark.parametrize("big", [70_000_000_000, 0])
@pytest.mark.parametrize("engine", ["edge", "local"])
def test_prefer_smaller_equals_the_formula_computed_by_hand(tmp_path, encoder, monkeypatch, engine, big):
    """The size penalty on both engines, and a model whose metadata says 0 parameters (a Hub repo whose safetensors
    total is 0): its point holds no size, so it is charged :data:`UNKNOWN_PARAMS` and counts in ``missing_metadata``.
    Before, its point held 0, and the formula's log10(0) failed the search on Qdrant Edge ("process cancelled by
    service") and ranked it apart from its score on the local engine."""
    from indexer.config import reset_settings

    monkeypatch.setenv("TASKSPACE_QDRANT_ENGINE", engine)
    reset_settings()
    rng = np.random.default_rng(3)
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", ALPHA, outcomes(rng, ALPHA_MODELS, 16))])
    try:
        store.upsert_models([{"key": "org/small", "num_parameters": 1_500_000_000},
                             {"key": "org/big", "num_parameters": big}])
        from indexer import sync

        sync.push_models(store, vectors, store.list_spaces()[0].id)
        plain = find_models(ALPHA[0], k=10, store=store, vectors=vectors)
        params = {r.model: r.metadata["params"] for r in plain}
        assert params["org/big"] == (big or None)
        for alpha in (0.05, 0.5):
            res = find_models(ALPHA[0], k=10, prefer_smaller=alpha, store=store, vectors=vectors)
            # the size penalty applies to the ranking score (the folded query's inner product)
            want = {r.model: r.rank_score - alpha * math.log10(params[r.model] or UNKNOWN_PARAMS) for r in plain}
            assert [r.model for r in res] == sorted(want, key=want.get, reverse=True)
            assert {r.model: r.rank_score for r in res} == pytest.approx(want, abs=1e-5)
            assert {r.model: r.score for r in res} == pytest.approx({r.model: r.score for r in plain}, abs=1e-5)
            assert res.missing_metadata == {"prefer_smaller": 3 + (big == 0)}
            top = find_models(ALPHA[0], k=2, prefer_smaller=alpha, store=store, vectors=vectors)
            assert [r.model for r in top] == [r.model for r in res][:2]  # k < candidates: still the formula's best
        if big:
            assert [r.model for r in res] != [r.model for r in plain]  # the knob changes the order here
    finally:
        vectors.close()
        store.close()



def test_lcb_rank_is_exact(idx):
    every = ask(idx, ALPHA[3], k=10)
    store = idx[0]
    g = store.get_space_calibration(store.list_spaces()[0].id).scale  # a folded score's sd per raw sd
    lower = {r.model: r.rank_score - 1.6448536269514722 * g * math.sqrt(r.variance) for r in every}
    got = ask(idx, ALPHA[3], k=3, rank="lcb")
    assert [r.model for r in got] == sorted(lower, key=lower.get, reverse=True)[:3]
    assert [r.rank_score for r in got] == pytest.approx(sorted(lower.values(), reverse=True)[:3], abs=1e-6)


def test_lcb_ranks_a_model_of_unknown_variance_after_every_model_with_a_bound(idx):
    """A model whose point carries no posterior (a vector stored before posteriors were kept) has no interval: its
    variance is unknown. ``lcb`` counted that as no uncertainty (the bound was its score), so it ranked first; now it
    ranks after every model with a bound, its rank_score and interval null (the README's "interval is null")."""
    import dataclasses

    from indexer import sync
    from indexer.space import space_name

    store, vectors, _ = idx
    (space,) = store.list_spaces()
    top = ask(idx, ALPHA[3], k=1).results[0].model  # the best by probability: the first lcb would have put it
    (mv,) = store.load_model_vectors(space.id, [top])
    rec = {m.key: m for m in store.list_models(keys=[top])}.get(top)
    vectors.upsert(space_name(space), "models", [sync._model_point(dataclasses.replace(mv, pattern=None), rec)],
                   dim=space.dim)
    got = ask(idx, ALPHA[3], k=10, rank="lcb")
    assert got.results[-1].model == top and len(got.results) == len(ALPHA_MODELS) + 1
    last = got.to_dict()["results"][-1]
    assert last["rank_score"] is None and last["interval"] is None and last["probability"] is not None
    signal = got.to_dict()["space"]["signal"]  # without it every interval is null (the tiny index may have none)
    assert all(r["rank_score"] is not None and (r["interval"] is not None) == signal
               for r in got.to_dict()["results"][:-1])
    assert ask(idx, ALPHA[3], k=2, rank="lcb").results[0].model != top  # with k below the model count too


CODE_PROMPT = "Write a Python function that sorts a list of integers"


def coverage_aware(idx, region_var=None, uncovered=0.1, links=None):
    """The index's space, its calibration replaced by a coverage-aware map (an uncovered weight beside the covered;
    ``region_var``: its region variance; ``uncovered=None``: one weight, not coverage-aware; ``links``: its groups of
    benchmarks)."""
    from indexer import posterior

    store = idx[0]
    (space,) = store.list_spaces()
    store.save_model_vectors(space.id, [], calibration=posterior.Calibration(
        0.05, 1.5, 100, spread=0.1, level=2.0, specific=1.5, shared=2.5, uncovered=uncovered, region_var=region_var,
        links=links))
    return space


def shares(idx, encoder, text: str, keys: list[str]) -> np.ndarray:
    """Each model's share of the text's COVERAGE_PROMPTS nearest indexed prompts (from the encoder) it was measured
    on (from the benchmarks of its outcome blocks)."""
    from indexer import posterior

    store = idx[0]
    measured = {k: {b for _, b, _, _ in store.outcome_blocks([k])} for k in keys}
    E = encoder.encode(ALPHA + BETA + [text])
    nearest = np.argsort(-(E[:-1] @ E[-1]))[:posterior.COVERAGE_PROMPTS]
    return np.array([np.mean([("alpha" if j < len(ALPHA) else "beta") in measured[k] for j in nearest]) for k in keys])


def logits(idx, space, q):
    """(model keys, the predictor, L1, L0): every model's logit at the index row ``q`` under the covered and the
    uncovered map, computed with numpy from SQL's vectors (a model at share c has c L1 + (1 - c) L0)."""
    from indexer import query

    store = idx[0]
    keys, V = store.model_vector_matrix(space.id)
    pred = query.predictor(store, space)
    q0, shift = pred.fold_uncovered(q)
    return keys, pred, V @ np.asarray(pred.fold(q), np.float64), V @ np.asarray(q0, np.float64) + shift


def test_a_coverage_aware_map_reranks_by_each_models_coverage_exactly(idx, encoder):
    """With the own deviation weighed apart where a model has no evidence near the query (Calibration.uncovered), a
    model's logit is c L1 + (1 - c) L0: c its share of the query's 10 nearest indexed prompts it was measured on, L1
    and L0 the folded map with the covered and the uncovered weight. The ranking and probabilities equal that
    computed over every model (nearest prompts from the encoder, coverage from the benchmarks each was measured on),
    for both ranks; a model measured only on alpha (nothing near a coding prompt) gets L0."""
    from indexer import posterior, query

    store, vectors, _ = idx
    space = coverage_aware(idx)
    text = CODE_PROMPT
    keys, pred, L1, L0 = logits(idx, space, query.query_vector(store, vectors, space, prompts=[text]))
    assert pred.coverage_aware
    c = shares(idx, encoder, text, keys)
    assert c[keys.index("coder/only-code")] == 1.0 and c[keys.index("org/big")] == 0.0
    p = pred.probability(c * L1 + (1 - c) * L0)
    want = sorted(zip(keys, p), key=lambda kv: -kv[1])
    got = ask(idx, text, k=4)
    assert [r.model for r in got] == [k for k, _ in want[:4]]
    assert [r.probability for r in got] == pytest.approx([v for _, v in want[:4]], abs=1e-5)
    alpha_only = {r.model: r for r in ask(idx, text, k=10)}["org/big"]
    i = keys.index("org/big")
    assert alpha_only.probability == pytest.approx(float(pred.probability(L0[i])), abs=1e-5)
    assert abs(float(pred.probability(L1[i])) - alpha_only.probability) > 1e-4  # the covered map would differ
    every = ask(idx, text, k=10)
    g = pred.scale
    lower = {r.model: r.rank_score - posterior.Z_INTERVAL * g * math.sqrt(r.variance) for r in every}
    lcb = ask(idx, text, k=3, rank="lcb")
    assert [r.model for r in lcb] == sorted(lower, key=lower.get, reverse=True)[:3]


@pytest.mark.parametrize("uncovered", [0.1, None], ids=["coverage-aware", "one-weight"])
def test_a_models_interval_widens_by_the_region_variance_as_far_as_it_has_no_evidence(idx, encoder, uncovered):
    """A map with a region variance (coverage-aware or not): each result's variance is its posterior's plus
    ``(level / specific)^2 (1 - c)^2 region_var`` at its share c of the query's nearest prompts (a model measured only
    on alpha gets all of it at a coding prompt, one measured on beta none); the ranking by probability is unchanged,
    the ranking by the interval's lower end uses the widened intervals, exactly, over every model."""
    from indexer import posterior, query

    store, vectors, _ = idx
    text = CODE_PROMPT
    coverage_aware(idx, uncovered=uncovered)
    before = {r.model: r for r in ask(idx, text, k=10)}
    space = coverage_aware(idx, region_var=0.05, uncovered=uncovered)
    keys, pred, L1, L0 = logits(idx, space, query.query_vector(store, vectors, space, prompts=[text]))
    assert pred.coverage_aware == (uncovered is not None) and pred.region_aware
    c = dict(zip(keys, shares(idx, encoder, text, keys)))
    after = ask(idx, text, k=10)
    assert [r.model for r in after] == list(before)
    small = ask(idx, text, k=10, prefer_smaller=0.2)  # the size-penalty path gives the same variances
    assert {r.model: r.variance for r in small} == pytest.approx({r.model: r.variance for r in after})
    for r in after:
        extra = (2.0 / 1.5) ** 2 * (1.0 - c[r.model]) ** 2 * 0.05
        assert r.variance == pytest.approx(before[r.model].variance + extra, rel=1e-6, abs=1e-9), r.model
        assert r.probability == pytest.approx(before[r.model].probability, abs=1e-9)
    big, coder = next(r for r in after if r.model == "org/big"), next(r for r in after if r.model == "coder/only-code")
    assert c["org/big"] == 0.0 and big.high - big.low > before["org/big"].high - before["org/big"].low
    assert c["coder/only-code"] == 1.0 and coder.variance == pytest.approx(before["coder/only-code"].variance)
    lower = {r.model: r.rank_score - posterior.Z_INTERVAL * pred.scale * math.sqrt(r.variance) for r in after}
    lcb = ask(idx, text, k=3, rank="lcb")
    assert [r.model for r in lcb] == sorted(lower, key=lower.get, reverse=True)[:3]
    assert [r.rank_score for r in lcb] == pytest.approx(sorted(lower.values(), reverse=True)[:3], abs=1e-6)


@pytest.mark.parametrize("uncovered", [0.1, None], ids=["coverage-aware", "one-weight"])
def test_an_interval_widens_to_the_spread_where_no_model_links_the_query_to_the_models_benchmarks(idx, encoder,
                                                                                                  uncovered):
    """A map whose benchmarks fall in groups no model links (Calibration.links, here alpha and beta apart): each
    result's variance adds ``(level / specific)^2 (1 - b)^2 (spread - region_var)`` to the region term, b its share of
    the query's nearest prompts in its own group (with one benchmark per group, its coverage share): a model measured
    only on alpha gets the models' spread in all at a coding prompt, one measured on both nothing more; probabilities
    and their order unchanged, the lower-bound ranking exact on the widened intervals, through the search, stored
    and read back from SQL (a search reads the map with the space)."""
    from indexer import posterior, query

    store, vectors, _ = idx
    text = CODE_PROMPT
    coverage_aware(idx, region_var=0.02, uncovered=uncovered)
    before = {r.model: r for r in ask(idx, text, k=10)}
    space = coverage_aware(idx, region_var=0.02, uncovered=uncovered, links=(("alpha",), ("beta",)))
    assert store.get_space_calibration(space.id).links == (("alpha",), ("beta",))
    keys, pred, L1, L0 = logits(idx, space, query.query_vector(store, vectors, space, prompts=[text]))
    assert pred.link_aware
    c = dict(zip(keys, shares(idx, encoder, text, keys)))
    after = ask(idx, text, k=10)
    assert [r.model for r in after] == list(before)
    for r in after:
        extra = (2.0 / 1.5) ** 2 * (1.0 - c[r.model]) ** 2 * (0.1 - 0.02)
        assert r.variance == pytest.approx(before[r.model].variance + extra, rel=1e-6, abs=1e-9), r.model
        assert r.probability == pytest.approx(before[r.model].probability, abs=1e-9)
    big, small = next(r for r in after if r.model == "org/big"), next(r for r in after if r.model == "org/small")
    assert 0.0 < 1.0 - c["org/big"] and big.high - big.low > before["org/big"].high - before["org/big"].low
    assert small.variance == pytest.approx(before["org/small"].variance)  # measured on both: linked to any query
    lower = {r.model: r.rank_score - posterior.Z_INTERVAL * pred.scale * math.sqrt(r.variance) for r in after}
    lcb = ask(idx, text, k=3, rank="lcb")
    assert [r.model for r in lcb] == sorted(lower, key=lower.get, reverse=True)[:3]


def test_a_model_measured_at_100_or_0_percent_gets_an_interval_of_some_width(tmp_path, encoder):
    """A model whose outcomes are all successes (or all failures) is fitted by its intercept alone: its ridge fit's
    residual variance is 0, or nearly, and with it every term of its posterior variance. Its interval counts at least
    posterior.noise_floor(n) of residual variance, so it has a width: at least the level's part of the variance at
    that floor, ``(level / specific)^2 floor / n``, and more than a point through the map (before: a variance of 5e-5
    here; 1.9e-7 and intervals "89%-89%" for metabench's TruthfulQA rows measured 100% of 136)."""
    from indexer import posterior

    rng = np.random.default_rng(5)
    outs = outcomes(rng, ["org/a", "org/b", "org/c", "org/d", "org/e"], 16)
    outs["org/perfect"], outs["org/none"] = [1] * 16, [0] * 16
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", ALPHA, outs)])
    try:
        (space,) = store.list_spaces()
        noise = {mv.model: mv.noise for mv in store.load_model_vectors(space.id)}
        floor = float(posterior.noise_floor(16))
        assert noise["org/perfect"] < floor / 100 and noise["org/none"] < floor / 100  # the fit: (almost) no noise
        store.save_model_vectors(space.id, [], calibration=posterior.Calibration(
            0.05, 1.5, 100, spread=0.1, level=2.0, specific=1.5, shared=2.5))
        got = {r.model: r for r in find_models(benchmark="alpha", k=10, store=store, vectors=vectors)}
        assert set(got) == set(outs)
        for m in ("org/perfect", "org/none"):
            r = got[m]
            assert r.variance >= (2.0 / 1.5) ** 2 * floor / 16 * (1 - 1e-9), (m, r.variance)
            assert r.high - r.low > 0.02, (m, r.low, r.high)
            assert r.low < r.probability < r.high
    finally:
        vectors.close()
        store.close()


GAMMA = [f"Translate sentence {j} about {TOPICS[j % len(TOPICS)]} into French" for j in range(10)]


@pytest.fixture
def mixed(tmp_path, encoder):
    """A mixed index for ``lcb`` past groups no model links: 14 models measured on alpha alone, org/small on alpha
    and beta, 2 on beta alone, 2 on gamma alone; a coverage-aware map (as :func:`coverage_aware`'s, with a wider
    spread: wide intervals where nothing links) whose groups are alpha and beta (gamma indexed since: a benchmark
    the map does not know), and one alpha model's point without benchmarks."""
    import dataclasses

    from indexer import posterior, sync
    from indexer.space import space_name

    rng = np.random.default_rng(11)
    alpha_only = [f"alpha/m{i}" for i in range(14)]
    a = outcomes(rng, [*alpha_only, "org/small"], 16)
    # right of 16: seven at 11 or 12 (high scores, wide intervals: no model links alpha to a coding prompt), the
    # one without benchmarks at 14
    for m, right in zip(alpha_only, [2, 4, 5, 6, 8, 11, 11, 11, 11, 11, 12, 12, 14, 9]):
        a[m] = rng.permutation([1] * right + [0] * (16 - right)).tolist()
    b, g = outcomes(rng, ["org/small", "beta/b1", "beta/b2"], 12), outcomes(rng, ["gamma/g1", "gamma/g2"], 10)
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", ALPHA, a), (tmp_path / "b", "beta", BETA, b),
                                             (tmp_path / "g", "gamma", GAMMA, g)])
    (space,) = store.list_spaces()
    store.save_model_vectors(space.id, [], calibration=posterior.Calibration(
        0.05, 1.5, 100, spread=0.4, level=2.0, specific=1.5, shared=2.5, uncovered=0.1, region_var=0.02,
        links=(("alpha",), ("beta",))))
    (mv,) = store.load_model_vectors(space.id, ["alpha/m12"])
    vectors.upsert(space_name(space), "models", [sync._model_point(dataclasses.replace(mv, benchmarks=[]), None)],
                   dim=space.dim)
    yield store, vectors, None
    vectors.close()
    store.close()


def _count_matches_built(monkeypatch) -> list[str]:
    """The keys of the candidates whose variances the search computes (``lcb``: every candidate it weighs, for its
    lower end; a match's own variance when the ranking did not compute it), appended as computed, with one
    candidate fetched a round (``COVERAGE_FETCH`` 1) so that rounds fetch again."""
    from indexer import query

    built: list[str] = []
    variances = query.hit_variances

    def counted(hits, *args, **kw):
        built.extend(h.key for h in hits)
        return variances(hits, *args, **kw)

    monkeypatch.setattr(query, "COVERAGE_FETCH", 1)
    monkeypatch.setattr(query, "hit_variances", counted)
    return built


def test_a_coverage_aware_lcb_bounds_models_fitted_only_where_nothing_links_the_query_by_their_variance(mixed,
                                                                                                monkeypatch):
    """``lcb`` past groups no model links (Calibration.links): the uncovered search is split into the models fitted
    only on benchmarks of groups no model links to the query's (alpha for a coding prompt) and the rest, and the
    former's unfetched members are bounded by their next score less the interval's half-width at the unlinked term
    they all have. Fetched 4 at a time: the same top, rank scores and intervals as every model ranked (k = all),
    for every k and three queries (near beta: alpha unlinked; near alpha: beta unlinked; near gamma, a benchmark the
    map does not know: nothing split), a model of gamma and one whose point has no benchmarks counting as linked;
    and for the coding prompt at k=1 a model whose logit is above the top's lower end is left unfetched (before,
    an unfetched model was bounded by its logit alone, so every such model was fetched)."""
    from indexer import query
    from indexer.space import space_name

    store, vectors, _ = mixed
    name = space_name(store.list_spaces()[0])
    n = vectors.count(name, "models")
    assert n == 19
    texts = (CODE_PROMPT, ALPHA[2], GAMMA[3])
    every = {t: ask(mixed, t, k=n, rank="lcb") for t in texts}
    built = _count_matches_built(monkeypatch)
    fetched = {}
    for t in texts:
        want = every[t]
        assert len(want) == n
        for k in range(1, n + 1):
            built.clear()
            got = ask(mixed, t, k=k, rank="lcb")
            assert [r.model for r in got] == [r.model for r in want][:k], (t, k)
            assert [x for r in got for x in (r.rank_score, r.low, r.high, r.variance)] == pytest.approx(
                [x for r in want[:k] for x in (r.rank_score, r.low, r.high, r.variance)], abs=1e-9)
            fetched[t, k] = set(built)
    # at k=1 a model was left unfetched whose logit (its lower end's bound before) is above the top's lower end:
    # the old rule fetched every model until none was
    logit = {r.model: r.rank_score for r in ask(mixed, CODE_PROMPT, k=n)}
    top = every[CODE_PROMPT][0].rank_score
    assert [m for m in set(logit) - fetched[CODE_PROMPT, 1] if logit[m] > top]
    # the split at the coding prompt: alpha's 13 models with benchmarks apart, the rest (gamma's, the one without
    # benchmarks) with beta's
    pred = query.predictor(store, store.list_spaces()[0])
    pred.near_benchmarks = [["beta"]] * 10
    only, least = query.unlinked_split(pred)
    assert only == ["alpha"] and least == pytest.approx((2.0 / 1.5) ** 2 * (0.4 - 0.02))
    assert vectors.count(name, "models", {"benchmarks": {"only": only}}) == 13
    assert {h.key for h in vectors.search(name, "models", np.zeros(vectors.dim(name, "models"), np.float32),
                                          filters={"benchmarks": {"except": only}}, limit=n)} == {
        "org/small", "beta/b1", "beta/b2", "gamma/g1", "gamma/g2", "alpha/m12"}


def centre(mixed):
    """:func:`mixed` with each group's average model stored with the map (Calibration.centres, as a pass stores them:
    the mean SQL vector of the models measured in the group alone); returns the map before."""
    import dataclasses

    from indexer import posterior

    store = mixed[0]
    (space,) = store.list_spaces()
    before = store.get_space_calibration(space.id)
    lists, V = store.model_benchmark_vectors(space.id)
    store.save_model_vectors(space.id, [], calibration=dataclasses.replace(
        before, centres=posterior.link_centres(before.links, lists, V)))
    return before


def test_a_model_nothing_links_to_the_query_scores_the_average_model_of_the_querys_group(mixed, encoder,
                                                                                          monkeypatch):
    """A map whose groups of benchmarks no model links carries each group's average model (Calibration.centres):
    on the share of the query's nearest prompts that lie in a group a model was not measured in, its logit is that
    group's average model's, not its own (measured on prompts no outcome relates to the query's). At a coding prompt
    (its nearest prompts beta's) the 13 models measured on alpha alone all score beta's average model, whatever their
    alpha level (before: 2 to 14 right of 16 ranked them far apart, the best above the models measured on code);
    every model's probability equals ``w (c L1 + (1 - c) L0) + sum of the unlinked prompts' centre scores / 10``
    computed with numpy from SQL's vectors and the encoder's nearest prompts, at three queries (near beta, near
    alpha, near gamma: a benchmark the map does not know, linked to every model); a model of gamma and one whose
    point has no benchmarks count as linked. Fetched one at a time, by probability, by lower bound and with a size
    penalty, the top of every k equals every model's ranking."""
    from indexer import posterior, query
    from indexer.space import space_name

    store, vectors, _ = mixed
    (space,) = store.list_spaces()
    name = space_name(space)
    n = vectors.count(name, "models")
    old = {r.model: r.probability for r in ask(mixed, CODE_PROMPT, k=n)}
    alpha_only = [f"alpha/m{i}" for i in range(14) if i != 12]
    assert max(old[m] for m in alpha_only) - min(old[m] for m in alpha_only) > 0.05  # their own levels, before
    centre(mixed)
    keys, V = store.model_vector_matrix(space.id)
    V = V.astype(np.float64)
    measured = {k: {b for _, b, _, _ in store.outcome_blocks([k])} for k in keys}
    payload = {k: set(h.payload.get("benchmarks") or ()) for k, h in vectors.get(name, "models", keys).items()}
    group_of = {"alpha": 0, "beta": 1}
    mean = [V[[measured[k] == {b} for k in keys]].mean(axis=0) for b in ("alpha", "beta")]
    texts = ALPHA + BETA + GAMMA
    labels = ["alpha"] * len(ALPHA) + ["beta"] * len(BETA) + ["gamma"] * len(GAMMA)
    E = encoder.encode(texts)
    for text in (CODE_PROMPT, ALPHA[2], GAMMA[3]):
        q = query.query_vector(store, vectors, space, prompts=[text])
        pred = query.predictor(store, space)
        q1 = np.asarray(pred.fold(q), np.float64)
        q0, shift = pred.fold_uncovered(q)
        L1, L0 = V @ q1, V @ np.asarray(q0, np.float64) + shift
        e = encoder.encode([text])[0]
        near = [labels[j] for j in np.argsort(-(E @ e))[:posterior.COVERAGE_PROMPTS]]
        want = {}
        for i, k in enumerate(keys):
            c = np.mean([b in measured[k] & payload[k] for b in near])  # what its vector was fitted on
            own = {group_of.get(b, -1) for b in payload[k]}
            linked = [b for b in near if b == "gamma" or not own or -1 in own or group_of[b] in own]
            w = max(len(linked) / len(near), posterior.TIE_BREAK)
            const = sum(q1 @ mean[group_of[b]] for b in near if b not in linked) / len(near)
            want[k] = float(pred.probability(w * (c * L1[i] + (1 - c) * L0[i]) + const))
        got = ask(mixed, text, k=n)
        assert set(want) == {r.model for r in got}
        assert {r.model: r.probability for r in got} == pytest.approx(want, abs=1e-6), text
        assert [r.probability for r in got] == sorted((r.probability for r in got), reverse=True)
        if text == CODE_PROMPT:  # beta's nearest: alpha's own models all at beta's average model
            assert set(near) == {"beta"}
            at = {r.model: r.probability for r in got}
            average = float(pred.probability(q1 @ mean[1]))
            assert [at[m] for m in alpha_only] == pytest.approx([average] * len(alpha_only), abs=1e-5)
            assert at["alpha/m12"] == pytest.approx(old["alpha/m12"], abs=1e-9)  # no benchmarks: linked, as before
    every = {(t, rank, a): ask(mixed, t, k=n, rank=rank, prefer_smaller=a) for t in (CODE_PROMPT, ALPHA[2], GAMMA[3])
             for rank in ("probability", "lcb") for a in (0.0, 0.2) if not (rank == "lcb" and a)}
    monkeypatch.setattr(query, "COVERAGE_FETCH", 1)
    for (t, rank, a), want in every.items():
        for k in range(1, n + 1):
            got = ask(mixed, t, k=k, rank=rank, prefer_smaller=a)
            assert [r.model for r in got] == [r.model for r in want][:k], (t, rank, a, k)
            assert [x for r in got for x in (r.rank_score, r.probability, r.low, r.high)] == pytest.approx(
                [x for r in want[:k] for x in (r.rank_score, r.probability, r.low, r.high)], abs=1e-9)


@pytest.mark.parametrize("uncovered", [0.1, None], ids=["coverage-aware", "one-weight"])
def test_a_models_strengths_where_nothing_links_it_are_the_benchmark_searchs_centred_numbers(mixed, uncovered):
    """`taskspace model ID` strengths on a map with each unlinked group's average model (Calibration.centres), with
    the uncovered weight or one weight: each benchmark's probability, mean over the models and "rank N of M" are
    those `search --benchmark B` gives, where a model measured only in another group scores B's group's average
    model (alpha's models on beta all at beta's average, and beta's on alpha at alpha's). Before, each kept its own
    level there."""
    import dataclasses

    from indexer import model_detail
    from indexer.space import space_name

    store, vectors, _ = mixed
    (space,) = store.list_spaces()
    store.save_model_vectors(space.id, [], calibration=dataclasses.replace(
        store.get_space_calibration(space.id), uncovered=uncovered))
    centre(mixed)
    n = vectors.count(space_name(space), "models")
    ranked = {b: ask(mixed, benchmark=b, k=n, evidence=0).results for b in ("alpha", "beta", "gamma")}
    at_beta = {r.model: r.probability for r in ranked["beta"]}
    assert at_beta["alpha/m10"] == pytest.approx(at_beta["alpha/m0"], abs=1e-5)
    for model in ("alpha/m10", "alpha/m0", "org/small", "beta/b1", "gamma/g1"):
        d = model_detail(model, store=store, vectors=vectors, strengths=10)
        assert {s["benchmark"] for s in d["strengths"]} == {"alpha", "beta", "gamma"}
        for s in d["strengths"]:
            got = ranked[s["benchmark"]]
            probs = [r.probability for r in got]
            i = [r.model for r in got].index(model)
            assert s["probability"] == pytest.approx(probs[i], abs=1e-4), (model, s)
            assert s["mean"] == pytest.approx(float(np.mean(probs)), abs=1e-4), (model, s)
            assert s["of"] == len(got) and abs(s["rank"] - (i + 1)) <= sum(abs(p - probs[i]) < 1e-6 for p in probs), \
                (model, s, i)


def test_a_coverage_aware_lcb_fetched_in_rounds_equals_every_model_and_builds_each_match_once(mixed, monkeypatch):
    """``lcb`` on a coverage-aware map whose intervals widen where nothing links a model's benchmarks (the case that
    fetched every model of a large home in 6 rounds; :func:`mixed`): fetched 4 candidates at a time, the top, its
    rank scores and intervals equal those of ranking every model, for every k; each candidate's variance is computed
    once, however many rounds fetch it again (before, each round built every candidate's match again)."""
    from indexer import query

    every = {(t, k): ask(mixed, t, k=k, rank="lcb") for t in (CODE_PROMPT, ALPHA[2], GAMMA[3]) for k in (1, 2, 3)}
    built: list[str] = []
    rounds = []
    variances = query.hit_variances

    def counted(hits, *args, **kw):
        built.extend(h.key for h in hits)
        rounds[-1] += 1
        return variances(hits, *args, **kw)

    monkeypatch.setattr(query, "COVERAGE_FETCH", 1)
    monkeypatch.setattr(query, "hit_variances", counted)
    for (t, k), want in every.items():
        built.clear()
        rounds.append(0)
        got = ask(mixed, t, k=k, rank="lcb")
        assert [r.model for r in got] == [r.model for r in want]
        assert [x for r in got for x in (r.rank_score, r.low, r.high, r.variance)] == pytest.approx(
            [x for r in want for x in (r.rank_score, r.low, r.high, r.variance)], abs=1e-9)
        assert len(set(built)) == len(built), f"k={k}: a candidate's variance was computed twice"
    assert max(rounds) > 1  # some k took more than one round


def test_a_coverage_aware_map_with_prefer_smaller_ranks_by_the_blend_less_the_size_term(idx, encoder):
    """prefer_smaller on a coverage-aware map: the value ranked is each model's blend c L1 + (1 - c) L0 less alpha
    log10(parameters) (unknown sizes at UNKNOWN_PARAMS), exactly, over every model, for k below the model count."""
    from indexer import query

    store, vectors, _ = idx
    space = coverage_aware(idx)
    text = CODE_PROMPT
    keys, pred, L1, L0 = logits(idx, space, query.query_vector(store, vectors, space, prompts=[text]))
    c = shares(idx, encoder, text, keys)
    blend = c * L1 + (1 - c) * L0
    params = {m.key: m.num_parameters for m in store.list_models()}
    for alpha in (0.05, 0.3):
        size = np.array([math.log10(params.get(k) or UNKNOWN_PARAMS) for k in keys])
        want = sorted(zip(keys, blend - alpha * size), key=lambda kv: -kv[1])
        got = ask(idx, text, k=3, prefer_smaller=alpha)
        assert [r.model for r in got] == [k for k, _ in want[:3]]
        assert [r.rank_score for r in got] == pytest.approx([v for _, v in want[:3]], abs=1e-4)
        assert [r.probability for r in got] == pytest.approx([float(pred.probability(blend[keys.index(r.model)]))
                                                              for r in got], abs=1e-5)


def test_the_covered_search_is_filtered_to_models_fitted_near_unless_one_is_unmeasured(idx, encoder, monkeypatch):
    """A model fitted on none of the neighbourhood's benchmarks has c = 0, so coverage_ranked's L1 search is
    restricted to those fitted on one of them (a payload filter); once a model with a vector has no outcomes in SQL
    (a pulled model: c = 1 whatever it was fitted on) both searches cover every model again, and the answer is
    still every model's blend with that model at c = 1."""
    from sqlalchemy import text as sql

    from indexer import query
    from indexer.store.vectors import VectorStore

    store, vectors, _ = idx
    space = coverage_aware(idx)
    seen = []
    real = VectorStore.search

    def spy(self, name, kind, vector, **kw):
        if kind == "models":
            seen.append(kw.get("filters"))
        return real(self, name, kind, vector, **kw)

    monkeypatch.setattr(VectorStore, "search", spy)
    text = CODE_PROMPT
    assert not store.unmeasured_vectors(space.id)
    ask(idx, text, k=2)
    assert any(f and "benchmarks" in f for f in seen) and any(not f for f in seen)
    with store.engine.begin() as conn:
        conn.execute(sql("UPDATE models SET outcomes_digest = NULL WHERE key = 'org/big'"))
    assert store.unmeasured_vectors(space.id)
    seen.clear()
    got = ask(idx, text, k=10)
    assert seen and all(not f for f in seen)
    keys, pred, L1, L0 = logits(idx, space, query.query_vector(store, vectors, space, prompts=[text]))
    c = shares(idx, encoder, text, keys)
    c[keys.index("org/big")] = 1.0  # no outcomes in SQL: it cannot tell, the covered map
    p = pred.probability(c * L1 + (1 - c) * L0)
    assert {r.model: r.probability for r in got} == pytest.approx(dict(zip(keys, p)), abs=1e-5)


def test_coverage_and_evidence_come_from_the_models_own_outcomes(idx):
    _, _, outs = idx
    res = ask(idx, "Write a Python function that sorts a list of integers", k=10, evidence=2)
    by = {r.model: r for r in res}
    coder = by["coder/only-code"]
    assert coder.coverage.measured_near and coder.coverage.benchmarks == ["beta"] and coder.coverage.near >= 2
    assert len(coder.evidence.prompts) == 2
    for p in coder.evidence.prompts:
        j = BETA.index(p["text"])
        assert p["benchmark"] == "beta" and p["outcome"] == outs["beta"]["coder/only-code"][j]
        assert p["similarity"] >= NEAR_SIMILARITY
    assert coder.evidence.prompts[0]["similarity"] >= coder.evidence.prompts[1]["similarity"]
    assert coder.evidence.benchmarks == [{"name": "beta", "accuracy": round(float(np.mean(outs["beta"]["coder/only-code"])), 4),
                                          "n": 12}]
    for name in ("org/big", "gpt-4o", "plain-name"):  # measured on alpha only: nothing near a coding task
        assert not by[name].coverage.measured_near and by[name].coverage.near == 0
        assert by[name].coverage.benchmarks == []
    # the nearest benchmarks first, not the overall accuracy: org/small has both, beta first here
    small = by["org/small"].evidence.benchmarks
    assert [b["name"] for b in small][0] == "beta" and small[0]["n"] == 12
    bench = {r.model: r for r in ask(idx, benchmark="alpha", k=10)}
    assert bench["org/small"].evidence.benchmarks[0] == {
        "name": "alpha", "accuracy": round(float(np.mean(outs["alpha"]["org/small"])), 4), "n": 16}
    none = ask(idx, "x", k=2, evidence=0)
    assert all(r.evidence.prompts == [] and r.evidence.benchmarks == [] for r in none)


FAR_TASK = "Give me a recipe for sourdough bread with a crisp crust"  # no alpha or beta prompt near (cosine < 0.11)


def test_the_answer_says_once_whether_any_model_was_measured_near_the_query(idx, encoder):
    """``query.measured_near``: how many results were measured near the query, and whether any model in the index
    was. A query far from every indexed prompt (a bread recipe: no alpha or beta prompt within NEAR_SIMILARITY)
    says no model was (any_model false: the ranking rests on general ability); a coding task near beta says 2 of 6
    (the two models measured on beta), and in compare mode over alpha-only models 0 of 3 with other models measured
    near. Before, only each row's "no" said it."""
    E = encoder.encode([FAR_TASK, *ALPHA, *BETA]).astype(np.float64)
    assert (E[1:] @ E[0]).max() < NEAR_SIMILARITY  # far from everything indexed
    far = ask(idx, FAR_TASK, k=10)
    assert len(far) == 6 and all(r.coverage.measured_near is False for r in far)
    assert far.query["measured_near"] == {"results": 0, "of": 6, "any_model": False}
    assert far.to_dict()["query"]["measured_near"] == {"results": 0, "of": 6, "any_model": False}
    near = ask(idx, "Write a Python function that sorts a list of integers", k=10)
    assert {r.model for r in near if r.coverage.measured_near} == set(BETA_MODELS)
    assert near.query["measured_near"] == {"results": 2, "of": 6, "any_model": True}
    alpha_only = ["org/big", "plain-name", "gpt-4o(eval_results/gpt4o)"]
    some = ask(idx, "Write a Python function that sorts a list of integers", models=alpha_only)
    assert some.query["measured_near"] == {"results": 0, "of": 3, "any_model": True}
    assert ask(idx, "Write a Python function that sorts a list of integers", models=BETA_MODELS).query[
        "measured_near"] == {"results": 2, "of": 2, "any_model": True}
    assert ask(idx, benchmark="beta", k=10).query["measured_near"] == {"results": 2, "of": 6, "any_model": True}


def test_a_model_measured_beyond_the_neighbourhood_shows_its_own_nearest_measured_prompts(idx, encoder, monkeypatch):
    """Evidence is a model's nearest measured prompts even where none of them is among the query's neighbourhood:
    before, a model measured elsewhere showed no evidence prompt and no benchmark at all (Llama-3.1-70B-Instruct,
    measured on MMLU-Pro only, for a coding prompt on sample + evalarena_code: 62%, evidence empty), and one with
    fewer than ``evidence`` prompts in the neighbourhood fewer than asked. Checked against the cosines computed here."""
    from indexer import find

    _, _, outs = idx
    monkeypatch.setattr(find, "NEAR_PROMPTS", 5)  # the neighbourhood: the 5 nearest, all beta prompts
    task = "Write a Python function that sorts a list of integers"
    by = {r.model: r for r in ask(idx, task, k=10, evidence=3)}
    E = encoder.encode([task, *ALPHA]).astype(np.float64)
    sims = E[1:] @ E[0]
    nearest = np.argsort(-sims)[:3]
    for name in ("org/big", "plain-name"):  # measured on alpha only
        r = by[name]
        assert not r.coverage.measured_near and r.coverage.near == 0  # coverage still says so
        assert [p["text"] for p in r.evidence.prompts] == [ALPHA[j] for j in nearest]
        assert [p["outcome"] for p in r.evidence.prompts] == [float(outs["alpha"][name][j]) for j in nearest]
        assert [p["similarity"] for p in r.evidence.prompts] == pytest.approx([sims[j] for j in nearest], abs=1e-3)
        assert r.evidence.benchmarks == [{"name": "alpha", "accuracy": round(float(np.mean(outs["alpha"][name])), 4),
                                          "n": 16}]
    coder = by["coder/only-code"]  # measured near: its evidence is the neighbourhood's, as before
    assert coder.coverage.measured_near and {p["benchmark"] for p in coder.evidence.prompts} == {"beta"}


def test_an_evidence_text_cut_to_its_snippet_ends_with_an_ellipsis(tmp_path, encoder):
    """An evidence prompt is its indexed snippet, the first 300 characters (indexer.sync.SNIPPET): one cut so ends
    with "…", one of exactly 300 characters (whole) does not. Before, a cut text was shown as if whole: on the sample
    plus evalarena_code and metabench_openllm, an MMLU question ended "... the total number of month" on the page."""
    from indexer.sync import SNIPPET

    stem = "Write a Python function that sorts a list of integers and explains each step "
    long = stem + "in detail. " * 40  # > 300 characters
    exact = (stem + "x" * SNIPPET)[:SNIPPET]  # exactly 300: its snippet is the whole text
    texts = [long, exact] + BETA[:6]
    outs = outcomes(np.random.default_rng(5), ["org/a", "org/b", "org/c"], len(texts))
    store, vectors = index_sources(encoder, [(tmp_path / "s", "beta", texts, outs)])
    try:
        res = find_models(stem, store=store, vectors=vectors, k=1, evidence=len(texts))
        shown = {p["text"].rstrip("…"): p["text"] for p in res.results[0].evidence.prompts}
        assert shown[long[:SNIPPET]] == long[:SNIPPET] + "…"
        assert shown[exact] == exact and shown[BETA[0]] == BETA[0]
    finally:
        vectors.close()
        store.close()


def test_an_evidence_prompt_in_two_benchmarks_is_shown_under_the_one_the_model_was_measured_on_it_in(tmp_path,
                                                                                                   encoder):
    """A prompt indexed under two benchmarks (two sources hold its text) is shown, in a model's evidence, under the
    benchmark that model was measured on it in; before, always under the first of its benchmarks (alphabetical), so
    a model measured on it in "beta" alone was shown an outcome on "alpha", which it was never measured on."""
    shared = "Write a Python function that sorts a list of integers"
    rng = np.random.default_rng(7)
    a_texts, b_texts = [shared, *ALPHA[:6]], [shared, *BETA[:6]]
    store, vectors = index_sources(encoder, [
        (tmp_path / "a", "alpha", a_texts, outcomes(rng, ["org/a1", "org/a2"], len(a_texts))),
        (tmp_path / "b", "beta", b_texts, outcomes(rng, ["org/b1", "org/b2"], len(b_texts)))])
    try:
        res = find_models(shared, store=store, vectors=vectors, k=4, evidence=len(a_texts) + len(b_texts))
        for r in res:
            first = [p for p in r.evidence.prompts if p["text"] == shared]
            assert len(first) == 1, r.model
            assert first[0]["benchmark"] == ("alpha" if r.model.startswith("org/a") else "beta"), r.model
            assert {p["benchmark"] for p in r.evidence.prompts} == {"alpha" if r.model.startswith("org/a") else "beta"}
    finally:
        vectors.close()
        store.close()


def test_a_benchmark_querys_neighbourhood_is_its_own_prompts(idx, encoder):
    """A benchmark query asks how models do on that benchmark: its neighbourhood (coverage, evidence, and a
    coverage-aware map's shares) is the benchmark's own prompts nearest to its vector, so a model measured only on
    another benchmark has no evidence there and gets the uncovered map, however near the other's prompts are."""
    store, vectors, _ = idx
    space = coverage_aware(idx)
    by = {r.model: r for r in ask(idx, benchmark="beta", k=10, evidence=50)}
    for name in BETA_MODELS:
        assert {p["benchmark"] for p in by[name].evidence.prompts} <= {"beta"}
    assert len(by["coder/only-code"].evidence.prompts) == len(BETA) and by["coder/only-code"].coverage.measured_near
    for name in ("org/big", "gpt-4o", "plain-name"):  # measured on alpha only: not on it, its evidence its alpha prompts
        assert not by[name].coverage.measured_near and by[name].coverage.near == 0
        assert {p["benchmark"] for p in by[name].evidence.prompts} == {"alpha"}
        assert [b["name"] for b in by[name].evidence.benchmarks] == ["alpha"]
    # the blend: every alpha-only model has share 0 (L0), the two measured on beta share 1 (L1)
    from indexer.space import space_name

    q = np.asarray(vectors.get(space_name(space), "benchmarks", ["beta"], with_vectors=True)["beta"].vector)
    keys, pred, L1, L0 = logits(idx, space, q)
    c = np.array([1.0 if k in BETA_MODELS else 0.0 for k in keys])
    p = pred.probability(c * L1 + (1 - c) * L0)
    for k, v in zip(keys, p):
        assert by[k].probability == pytest.approx(float(v), abs=1e-5), k


def test_a_models_strengths_on_a_coverage_aware_map_are_the_benchmark_searchs_numbers(idx):
    """`taskspace model ID` / GET /v1/models/{id} strengths on a coverage-aware map: each benchmark's probability,
    mean over the models and "rank N of M" are those `search --benchmark B` gives (a model not measured on B gets the
    uncovered map there). Before, the covered map for every model: on the bundled sample plus evalarena_code,
    microsoft/phi-2 was "rank 39 of 147" on mmlu_pro/history (51%, its top strength) and 94th in
    `search -b mmlu_pro/history` (36%)."""
    from indexer import model_detail

    store, vectors, _ = idx
    coverage_aware(idx)
    for model in ("org/big", "org/small", "coder/only-code"):  # alpha only, both, beta only
        d = model_detail(model, store=store, vectors=vectors, strengths=10)
        assert {s["benchmark"] for s in d["strengths"]} == {"alpha", "beta"}
        for s in d["strengths"]:
            ranked = ask(idx, benchmark=s["benchmark"], k=100, evidence=0).results
            probs = [r.probability for r in ranked]
            i = [r.model for r in ranked].index(model)
            assert s["probability"] == pytest.approx(probs[i], abs=1e-4), (model, s)
            assert s["mean"] == pytest.approx(float(np.mean(probs)), abs=1e-4), (model, s)
            assert (s["rank"], s["of"]) == (i + 1, len(ranked)), (model, s)


def test_a_models_strengths_on_a_coverage_aware_map_read_sql_once_whatever_the_benchmarks(idx, monkeypatch):
    """`model_detail` (`taskspace model ID`, GET /v1/models/{id}) on a coverage-aware map reads the outcome blocks
    twice (the model's own, then every model's for every benchmark's neighbourhood at once) and the prompts' ids
    once, whatever the number of benchmarks, and scores every model on the uncovered queries in one pass. Before,
    once per benchmark each (1 + B outcome reads, B prompt-id reads, B + 1 passes)."""
    from indexer import model_detail

    store, vectors, _ = idx
    coverage_aware(idx)
    want = model_detail("org/small", store=store, vectors=vectors, strengths=10)
    calls = []
    for obj, method in ((store, "outcome_blocks"), (store, "prompt_ids"), (vectors, "scores")):
        real = getattr(obj, method)
        monkeypatch.setattr(obj, method, lambda *a, _real=real, _m=method, **kw: calls.append(_m) or _real(*a, **kw))
    got = _page_fresh(store, vectors, "org/small", strengths=10)  # its every-model rows computed for it
    assert got == want and {s["benchmark"] for s in got["strengths"]} == {"alpha", "beta"}  # two benchmarks
    assert sorted(calls) == ["outcome_blocks"] * 2 + ["prompt_ids"], calls
    calls.clear()  # the rows kept (the index unchanged): the page reads the model's own outcomes alone
    assert model_detail("org/small", store=store, vectors=vectors, strengths=10) == want
    assert calls == ["outcome_blocks"], calls


PART_MODELS = ["org/part", "org/part2"]  # measured on some of beta's prompts (and on alpha): a fractional share


@pytest.fixture
def parts(tmp_path, encoder):
    """Models of each coverage of beta's neighbourhood: all of it (c = 1), none (c = 0) and a part (0 < c < 1)."""
    rng = np.random.default_rng(11)
    a = outcomes(rng, ALPHA_MODELS + PART_MODELS, 16)
    b = outcomes(rng, BETA_MODELS + PART_MODELS, 12)
    for j in range(0, 12, 2):  # every other beta prompt unmeasured: c is a fraction
        b["org/part"][j] = None
    b["org/part2"][:4] = [None] * 4
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", ALPHA, a), (tmp_path / "b", "beta", BETA, b)])
    yield store, vectors, {"alpha": a, "beta": b}
    vectors.close()
    store.close()


def strengths_over_every_id(store, vectors, key: str) -> tuple[dict[str, dict], set[str]]:
    """A model's strengths computed as `model_detail` computed them before: every model's covered and uncovered
    score read with its point id (:meth:`VectorStore.scores`), each model's logit blended by id, the rows in the
    covered search's order. Benchmark -> probability, mean, delta, rank, of (as the page rounds them); and the kinds
    of coverage seen ("all", "none", "part")."""
    from indexer.browse import _num
    from indexer.find import _near, _near_hits
    from indexer.posterior import COVERAGE_PROMPTS
    from indexer.query import _all_measured, coverage_logit, observed_shares_many, predictor
    from indexer.space import space_name
    from indexer.store.vectors import point_id

    (sp,) = store.list_spaces()
    name = space_name(sp)
    pred = predictor(store, sp)
    bench = list(vectors.scan(name, "benchmarks", with_vectors=True))
    info = {h.key: h.payload for h in vectors.scan(name, "models", fields=("benchmarks", "pattern"))}
    keys = list(info)
    mine_id = point_id(name, "models", key)
    out, kinds = {}, set()
    for h in bench:
        q = pred.fold(np.asarray(h.vector, dtype=np.float32))
        offset = pred.offset
        q0, d0 = pred.fold_uncovered(np.asarray(h.vector, dtype=np.float64))
        (covered,) = vectors.scores(name, "models", np.asarray([q], dtype=np.float32))
        (uncovered,) = vectors.scores(name, "models", np.asarray([q0], dtype=np.float32))
        near = [_near(x) for x in _near_hits(vectors, sp, h.vector, h.key, store=store)[:COVERAGE_PROMPTS]]
        (shares,) = (observed_shares_many(store, keys, [near], {k: p.get("benchmarks") for k, p in info.items()},
                                          _all_measured(store, sp), space=sp,
                                          patterns={k: p.get("pattern") for k, p in info.items()}) if near else [{}])
        c = {point_id(name, "models", k): shares.get(k, 1.0) for k in keys}
        kinds |= {"all" if x == 1.0 else "none" if x == 0.0 else "part" for x in c.values()}
        row = {i: coverage_logit(c.get(i, 1.0), v, uncovered[i], d0) for i, v in covered.items() if i in uncovered}
        vals = np.fromiter(row.values(), dtype=np.float64)
        pred.offset = offset
        probs = pred.probability(vals)
        p = float(pred.probability(row[mine_id]))
        out[h.key] = {"probability": _num(p, 4), "mean": _num(float(probs.mean()), 4),
                      "delta": _num(p - float(probs.mean()), 4), "rank": int((vals > row[mine_id] + 1e-9).sum()) + 1,
                      "of": int(vals.size)}
    return out, kinds


def test_a_models_strengths_equal_those_of_every_models_scores_by_id(parts):
    """`model_detail`'s strengths (`taskspace model ID`, GET /v1/models/{id}) read each benchmark row's scores without
    the models' point ids where a model's coverage is all or none (its logit is then L1's or L0's score exactly), and
    with them only for the models of a fractional coverage and the model itself. The numbers are exactly those of
    the pass over every model by id it replaces (probability, mean, delta, rank of): for models of each coverage."""
    from indexer import model_detail

    store, vectors, _ = parts
    coverage_aware(parts)
    for model in ("org/small", "org/big", "coder/only-code", "org/part", "org/part2"):
        d = model_detail(model, store=store, vectors=vectors, strengths=10)
        got = {s["benchmark"]: {k: s[k] for k in ("probability", "mean", "delta", "rank", "of")}
               for s in d["strengths"]}
        want, kinds = strengths_over_every_id(store, vectors, model)
        assert got == want and len(got) == 2, model
    assert kinds == {"all", "none", "part"}  # every kind of coverage was compared


def test_a_models_strengths_read_the_point_ids_of_the_blended_models_only(parts, monkeypatch):
    """On a coverage-aware map the page reads a point id (a ``uuid.UUID`` the Qdrant Edge binding builds for each,
    with its ``str``) only for the models whose logit blends both scores (a fractional coverage) and the model
    itself, and never makes a pass over every model by id (:meth:`VectorStore.scores`). Before, two such passes per
    page: 1.5 million ids, 9 of the 12 s of a page on a home of 32,823 models."""
    from indexer import model_detail

    store, vectors, _ = parts
    coverage_aware(parts)
    engine = vectors._c("models")
    read, passes = [], []
    real_rows, real_scores = engine.score_rows, vectors.scores
    monkeypatch.setattr(engine, "score_rows", lambda *a, **kw: [
        read.append(len(ids)) or (ids, v) if ids is not None else (ids, v) for ids, v in real_rows(*a, **kw)])
    monkeypatch.setattr(vectors, "scores", lambda *a, **kw: passes.append(1) or real_scores(*a, **kw))
    d = model_detail("org/small", store=store, vectors=vectors, strengths=10)
    assert {s["benchmark"] for s in d["strengths"]} == {"alpha", "beta"} and not passes
    # two benchmarks, two maps: at most the two part-measured models and the model itself per row
    assert read and sum(read) <= 2 * 2 * (len(PART_MODELS) + 1), read


def _page_fresh(store, vectors, model: str, **kw) -> dict:
    """``model_detail`` with no every-model rows kept: computed for this page alone."""
    from indexer import browse

    getattr(browse, "_EVERY", {}).clear()  # (none before the rows were kept)
    return browse.model_detail(model, store=store, vectors=vectors, **kw)


def _page_index(request, which):
    """The model-page tests' index: ``parts`` with a coverage-aware map (coverage 1, 0 and a fraction), ``mixed``
    with a centred map (its unlinked models score their group's average)."""
    idx = request.getfixturevalue(which)
    coverage_aware(idx) if which == "parts" else centre(idx)
    return idx


@pytest.mark.parametrize("which", ["parts", "mixed"])
def test_a_models_page_reuses_the_every_model_rows_and_equals_one_computed_alone(which, request, monkeypatch):
    """`taskspace serve`'s model pages (GET /v1/models/{id}) compute each benchmark row's every-model logits once
    and reuse them for the next model's page while the index is the same: no engine pass over every model then, and
    every model's page equal to the one computed alone (coverage 1, 0 and a fraction; a centred map whose unlinked
    models score their group's average). Before, each page scored every model on every row again (4.5-8 s a page on
    32,823 models)."""
    from indexer import model_detail

    idx = _page_index(request, which)
    store, vectors, _ = idx
    models = (["org/small", "org/big", "coder/only-code", "org/part", "org/part2"] if which == "parts"
              else ["alpha/m10", "alpha/m12", "org/small", "beta/b1", "gamma/g1"])
    alone = {m: _page_fresh(store, vectors, m, strengths=10) for m in models}
    assert all(len(d["strengths"]) == 3 - (which == "parts") for d in alone.values())
    passes = []
    real = vectors.score_values
    monkeypatch.setattr(vectors, "score_values", lambda *a, **kw: passes.append(1) or real(*a, **kw))
    _page_fresh(store, vectors, models[-1], strengths=10)  # one page computes the rows ...
    passes.clear()
    for m in models:  # ... the others reuse them
        assert model_detail(m, store=store, vectors=vectors, strengths=10) == alone[m], m
    assert not passes


def _two_pages_at_once(store, vectors, models: list[str], until, monkeypatch) -> tuple[list, dict]:
    """Two threads each open a model page of a fresh process (no every-model rows kept); the first to compute the
    rows holds its computation until ``until(calls)`` holds (``calls``: how many computations began), polled, for at
    most 30 s. Returns the computations begun and each page (by model)."""
    import threading
    import time

    from indexer import browse

    browse._EVERY.clear()
    calls, pages, failed = [], {}, []
    real = browse._coverage_rows

    def counted(*a, **kw):
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            deadline = time.monotonic() + 30
            while not until(calls) and time.monotonic() < deadline:
                time.sleep(0.005)
        return real(*a, **kw)

    monkeypatch.setattr(browse, "_coverage_rows", counted)

    def page(m):
        try:
            pages[m] = browse.model_detail(m, store=store, vectors=vectors, strengths=10)
        except Exception as exc:  # noqa: BLE001 (the test's assertion names it)
            failed.append(exc)

    threads = [threading.Thread(target=page, args=(m,), name=m) for m in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failed, failed
    return calls, pages


def test_two_model_pages_at_once_compute_the_every_model_rows_once(parts, monkeypatch):
    """Two model pages asked at once of a fresh server (real threads, as uvicorn's pool runs them): the second waits
    for the first's every-model rows of the same index state, not computing them again, and both pages equal the
    ones computed alone. Before, each computed them (several seconds each on 32,823 models, so the two answered
    together no sooner than one after the other)."""
    from indexer import browse

    store, vectors, _ = parts
    coverage_aware(parts)
    alone = {m: _page_fresh(store, vectors, m, strengths=10) for m in ("org/small", "org/big")}

    def waiting(calls) -> bool:  # the second page began computing too, or waits for the first's
        return len(calls) > 1 or any(f.waiting for f in list(getattr(browse, "_FLIGHTS", {}).values()))

    calls, pages = _two_pages_at_once(store, vectors, ["org/small", "org/big"], waiting, monkeypatch)
    assert len(calls) == 1, calls
    assert pages == alone
    assert not browse._FLIGHTS  # nothing left in flight


def test_two_model_pages_of_different_index_states_at_once_each_compute_their_own(parts, monkeypatch):
    """Pages of two different index states (here: each thread reads another state) do not wait for each other:
    each computes its own rows, at the same time (the first holds its computation until the second began its own)."""
    import threading

    from indexer import browse

    store, vectors, _ = parts
    coverage_aware(parts)
    real = browse._state
    monkeypatch.setattr(browse, "_state", lambda *a, **kw: (real(*a, **kw), threading.current_thread().name))
    calls, pages = _two_pages_at_once(store, vectors, ["org/small", "org/big"], lambda c: len(c) > 1, monkeypatch)
    assert sorted(calls) == ["org/big", "org/small"]
    assert set(pages) == {"org/small", "org/big"} and not browse._FLIGHTS


def test_a_failed_computation_of_the_rows_leaves_a_waiting_page_to_compute_its_own(parts, monkeypatch):
    """When the page computing the every-model rows fails (its error is its own answer), a page that waited for it
    computes the rows itself and answers, and nothing stays in flight."""
    import threading
    import time

    from indexer import browse

    store, vectors, _ = parts
    coverage_aware(parts)
    alone = _page_fresh(store, vectors, "org/big", strengths=10)
    browse._EVERY.clear()
    real, calls = browse._coverage_rows, []

    def first_fails(*a, **kw):
        calls.append(1)
        if len(calls) == 1:
            deadline = time.monotonic() + 30
            while not any(f.waiting for f in list(browse._FLIGHTS.values())) and time.monotonic() < deadline:
                time.sleep(0.005)
            raise RuntimeError("store went away")
        return real(*a, **kw)

    monkeypatch.setattr(browse, "_coverage_rows", first_fails)
    out = {}

    def page(m):
        try:
            out[m] = browse.model_detail(m, store=store, vectors=vectors, strengths=10)
        except RuntimeError as exc:
            out[m] = exc

    first = threading.Thread(target=page, args=("org/small",))
    first.start()
    while not calls:  # the first page computes before the second asks
        time.sleep(0.005)
    second = threading.Thread(target=page, args=("org/big",))
    second.start()
    first.join(60), second.join(60)
    assert isinstance(out["org/small"], RuntimeError) and out["org/big"] == alone
    assert len(calls) == 2 and not browse._FLIGHTS


@pytest.mark.parametrize("which", ["parts", "mixed"])
def test_a_one_shot_models_page_reads_no_state_keeps_nothing_and_makes_each_point_id_once(which, request,
                                                                                         monkeypatch):
    """``model_detail(keep=False)`` (``taskspace model``: one page a process) equals the page computed alone and the
    page a server keeps its rows for, for every model (coverage 1, 0 and a fraction; a centred map), without reading
    the index's state the rows are kept with (``state_digest``) or keeping them; and the page makes no model's point
    id for its every-model rows: they are the ids its scan of the models read (before, once per call: 84,438 ids for
    32,823 models; then each once, one memo for the calls: 32,826)."""
    from indexer import browse
    from indexer.store import vectors as vmod
    from indexer.space import space_name

    idx = _page_index(request, which)
    store, vectors, _ = idx
    n = vectors.count(space_name(store.list_spaces()[0]), "models")
    models = [h.key for h in vectors.scan(space_name(store.list_spaces()[0]), "models")]
    alone = {m: _page_fresh(store, vectors, m, strengths=10) for m in models}
    browse._EVERY.clear()
    made = []
    real = vmod.point_id
    monkeypatch.setattr(vmod, "point_id", lambda *a: made.append(a) or real(*a))
    monkeypatch.setattr(type(store), "state_digest", lambda *a: pytest.fail("a one-shot page read the state"))
    for m in models:
        made.clear()
        assert browse.model_detail(m, store=store, vectors=vectors, strengths=10, keep=False) == alone[m], m
        assert not browse._EVERY
        ids = [a for a in made if a[1] == "models"]
        assert len(ids) <= 3 and {a[2] for a in ids} <= {m}, (m, ids, n)  # the page's own model's reads alone


@pytest.mark.parametrize("which", ["parts", "mixed"])
def test_a_models_page_makes_each_distinct_id_condition_once_and_scores_as_without(which, request, monkeypatch):
    """A model page's every-model rows name the same lists of models in several engine calls and rows (on a home of
    32,823 models, 112 lists of 89,332 point ids, 18 distinct): the engine's condition on each distinct list is made
    once for the page (Qdrant Edge parses every id of it: about 1.6 us each), and the rows' scores are those the
    calls give without the memo, to the bit (coverage 1, 0 and a fraction; a centred map). Before, each call made
    each row's conditions."""
    import qdrant_edge as qe

    from indexer import browse
    from indexer.space import space_name
    from indexer.store.vectors import point_id

    idx = _page_index(request, which)
    store, vectors, _ = idx
    name = space_name(store.list_spaces()[0])
    models = [h.key for h in vectors.scan(name, "models")]
    alone = {m: _page_fresh(store, vectors, m, strengths=10) for m in models}
    made = []
    real = qe.HasIdCondition
    monkeypatch.setattr(qe, "HasIdCondition", lambda ids: made.append(frozenset(ids)) or real(ids))
    for m in models:
        made.clear()
        assert browse.model_detail(m, store=store, vectors=vectors, strengths=10, keep=False) == alone[m], m
        rows = [f for f in made if f != {point_id(name, "models", m)}]  # (the own model's value: two reads of it)
        assert rows and len(rows) == len(set(rows)), (m, len(rows), len(set(rows)))
    # the calls with one memo of conditions give what each gives alone, value for value
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((3, vectors.dim(name, "models"))).astype(np.float32)
    lists = [models[:3], models[2:], models[:3]]
    ids, conds = {}, {}
    with_memo = [vectors.score_values(name, "models", rows, keys=lists, memo=ids, conds=conds),
                 vectors.score_values(name, "models", rows, exclude=lists, memo=ids, conds=conds),
                 vectors.scores_of_each(name, "models", rows, lists, memo=ids, conds=conds),
                 vectors.scores_of_each(name, "models", rows, lists, conds=conds)]
    assert len(conds) == 2
    without = [vectors.score_values(name, "models", rows, keys=lists),
               vectors.score_values(name, "models", rows, exclude=lists),
               vectors.scores_of_each(name, "models", rows, lists), vectors.scores_of_each(name, "models", rows, lists)]
    for a, b in zip(with_memo[:2], without[:2]):
        assert all(x.tobytes() == y.tobytes() for x, y in zip(a, b))
    assert with_memo[2:] == without[2:] and all(len(d) == len(k) for d, k in zip(with_memo[3], lists))


def test_a_models_page_after_an_ingest_or_a_pass_beside_it_shows_the_index_as_it_is(idx, tmp_path, encoder):
    """The every-model rows a server keeps for its model pages are recomputed when what they are computed from
    changes beside it: an ingest without an index pass (SQL outcomes: a model's coverage of a benchmark, and its
    ``results_changed``) and an index pass that adds a model (its point, every vector, the map). Each page equals the
    one computed alone, and differs from the page before the change (real SQLite, real local Qdrant)."""
    from helpers import write_source
    from indexer import model_detail
    from indexer.ingest import Ingester
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec

    store, vectors, outs = idx
    coverage_aware(idx)
    before = model_detail("org/small", store=store, vectors=vectors, strengths=10)
    assert model_detail("org/big", store=store, vectors=vectors, strengths=10) == _page_fresh(
        store, vectors, "org/big", strengths=10)
    # org/small's results on beta replaced by half of them, ingested with no pass: its share of beta's neighbourhood
    # is 1/2 now (its own probability on beta, beta's mean, the ranks)
    beta = {**outs["beta"], "org/small": [y if j % 2 else None for j, y in enumerate(outs["beta"]["org/small"])]}
    write_source(tmp_path / "b", "beta", BETA, beta)
    Ingester(store, fetch_metadata=False).ingest_path(str(tmp_path / "b"))
    after = model_detail("org/small", store=store, vectors=vectors, strengths=10)
    assert after == _page_fresh(store, vectors, "org/small", strengths=10)
    row = {s["benchmark"]: s for s in after["strengths"]}
    assert row["beta"] != {s["benchmark"]: s for s in before["strengths"]}["beta"]
    assert after["results_changed"] is True and not before["results_changed"]
    # a pass that adds a model measured on alpha: one more model on every row
    extra = {**outs["alpha"], "org/new": [1] * 16}
    write_source(tmp_path / "a", "alpha", ALPHA, extra)
    r = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / f)) for f in ("a", "b")])
    assert r.status == "ok", r.errors
    coverage_aware(idx)  # the pass refitted the map; the test's coverage-aware one again (a change too)
    now = model_detail("org/small", store=store, vectors=vectors, strengths=10)
    assert now == _page_fresh(store, vectors, "org/small", strengths=10)
    assert {s["of"] for s in now["strengths"]} == {s["of"] + 1 for s in after["strengths"]}



def test_scores_equal_the_query_layer_and_one_search_serves_fill_and_evidence(idx, monkeypatch):
    """A question without options (its options filled from the nearest indexed questions): the same scores as
    indexer.query, and the prompts collection is searched once for the fill and the neighbourhood together."""
    from indexer import query

    store, vectors, _ = idx
    text = "Which planet is the largest in the solar system"
    old = {m.model: m.score for m in query.find_models([text], top=10, store=store, vectors=vectors)}
    calls = []
    real = vectors.search

    def counting(space, kind, *a, **kw):
        calls.append(kind)
        return real(space, kind, *a, **kw)

    real_many = vectors.search_many

    def counting_many(space, kind, *a, **kw):
        calls.append(kind)
        return real_many(space, kind, *a, **kw)

    monkeypatch.setattr(vectors, "search", counting)
    monkeypatch.setattr(vectors, "search_many", counting_many)  # the options fill's own search, when not shared
    res = ask(idx, text, k=10)
    assert res.query["options_filled"] is False  # no indexed prompt has options: nothing to take (test below)
    assert {r.model: r.score for r in res} == pytest.approx(old, abs=1e-5)
    assert calls.count("prompts") == 1 and calls.count("models") == 1


def test_options_filled_only_when_some_neighbour_had_options(tmp_path, encoder, monkeypatch):
    """`query.options_filled` (the page's "answer options taken from the nearest indexed questions") is true only
    when the fill took options from neighbours: a code prompt whose nearest indexed prompts have none is its own row,
    nothing filled (and on an index without a multiple-choice prompt no query is: the test above). Before, every
    prompt without options said true."""
    from indexer import represent
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    from helpers import write_mixed

    quiz, tasks = write_mixed(tmp_path)
    store, vectors = open_store(), VectorStore.from_settings()
    try:
        assert Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(quiz)), SourceSpec(str(tasks))]).status == "ok"
        monkeypatch.setattr(represent, "NEIGHBOURS", 3)  # 14 prompts indexed: the 3 nearest decide
        code = "Write a Python function that reverses a doubly linked list."
        question = "What is the derivative of x^3?"
        for several in (False, True):  # one prompt (one search for fill and neighbourhood), several (the fill's own)
            got = find_models([code, code + " Do it in place."] if several else code, store=store, vectors=vectors, k=3)
            assert got.query["options_filled"] is False
            got = find_models([question, code] if several else question, store=store, vectors=vectors, k=3)
            assert got.query["options_filled"] is True
    finally:
        vectors.close()
        store.close()


def test_a_prompt_longer_than_the_encoder_reads_is_said_to_be_cut(idx):
    """MiniLM embeds a text's first 256 word pieces only: a prompt longer than that is answered from its beginning, so
    two prompts that differ after the cut get the same answer. `query.truncated` says which prompts were cut (0-based;
    a split space's question or options alike) and `query.max_tokens` the limit; before, nothing told the user."""
    long = " ".join(f"word{i}" for i in range(400))
    one, other = ask(idx, long + " ALPHA", k=3), ask(idx, long + " OMEGA", k=3)
    assert one.query["truncated"] == [0] and one.query["max_tokens"] == 256
    assert [(r.model, r.score) for r in one] == [(r.model, r.score) for r in other]  # the cut is real: same answer
    several = ask(idx, ["Write a Python function that sorts numbers", long], k=3)
    assert several.query["truncated"] == [1] and several.to_dict()["query"]["truncated"] == [1]
    options = "Which one?\n" + "\n".join(f"{letter}. {long}" for letter in "AB")  # the option block is cut
    assert ask(idx, options, k=3).query["truncated"] == [0]
    short = ask(idx, "Write a Python function that sorts numbers. " * 8, k=3)  # 360 characters, well under 256 pieces
    assert short.query["truncated"] == [] and short.query["max_tokens"] == 256
    shorter = ask(idx, "Write a Python function that sorts numbers.", k=3)  # too short to need counting
    assert shorter.query["truncated"] == [] and shorter.query["max_tokens"] is None
    assert ask(idx, benchmark="alpha", k=3).query["truncated"] == []


def test_a_lost_prompts_index_is_a_store_error_not_another_answer(idx, monkeypatch):
    """The prompts collection removed by hand (SQL intact): every query kind is an IndexMissingError (exit 3, HTTP
    503) saying `taskspace reindex` rebuilds it, as for a lost models or benchmarks collection. Before, the search
    answered as if the space had no prompts: a question without options filled from the mean of all prompts (on the
    sample plus evalarena_code, another top model) and every coverage "unknown" with a reason about pulled indexes.
    A pulled read-only space published without prompt rows still answers, coverage unknown."""
    import shutil
    from pathlib import Path

    from indexer.config import get_settings
    from indexer.errors import IndexMissingError, StoreError
    from indexer.store.vectors import VectorStore

    store, vectors, _ = idx
    vectors.close()
    shutil.rmtree(Path(get_settings().qdrant_path) / "prompts")
    vectors = VectorStore.from_settings()
    try:
        for kw in ({"prompts": "Which planet is the largest in the solar system"},
                   {"prompts": [ALPHA[0], BETA[1]]}, {"benchmark": "alpha"}):
            with pytest.raises(IndexMissingError, match=r"the prompts index of space .* is missing from .*"
                                                        r"`taskspace reindex --space ") as err:
                find_models(**kw, store=store, vectors=vectors, k=3)
            assert isinstance(err.value, StoreError)
        monkeypatch.setattr(store, "is_read_only", lambda space_id: True, raising=False)  # pulled, no prompt rows
        got = find_models("Which planet is the largest in the solar system", store=store, vectors=vectors, k=3)
        assert len(got) == 3 and all(r.coverage.measured_near is None for r in got)
    finally:
        vectors.close()


def test_importing_the_entry_point_is_cheap():
    """`from indexer import find_models` loads no torch, SQLAlchemy or Qdrant client (they load on the first call)."""
    import subprocess
    import sys

    code = ("import sys, indexer; a = set(sys.modules); from indexer import find_models, Filters, FindResult; "
            "heavy = [m for m in ('torch', 'sentence_transformers', 'sqlalchemy', 'qdrant_client', 'qdrant_edge') "
            "if m in sys.modules]; print(heavy, 'numpy' in a)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[] False"


def test_dir_of_the_package_lists_the_library_before_first_access():
    """`dir(indexer)` (what IPython's and Jupyter's `indexer.<TAB>` completion reads) lists every name of
    `indexer.__all__` in a fresh process, before any was accessed, and still loads nothing heavy. Before, it listed
    none of them (they are imported on first access), so completion offered only submodules."""
    import subprocess
    import sys

    code = ("import sys, indexer; names = dir(indexer); print(sorted(set(indexer.__all__) - set(names)), "
            "[m for m in ('numpy', 'torch', 'sqlalchemy') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[] []"


def test_every_class_a_find_result_holds_is_importable_from_the_package():
    """A notebook user who meets `result[0].coverage` (a `Coverage`) or `.evidence` (an `Evidence`) and wants to name
    its class (a type hint, an isinstance check) imports it from `indexer`, as `FindResult` and `ModelResult`: every
    class reached through the fields of `find_models`' answer is in `indexer.__all__` and `from indexer import NAME`
    gives it. Before, `Coverage` and `Evidence` were only in `indexer.find` (ImportError from `indexer`)."""
    import dataclasses
    import typing

    import indexer
    from indexer.find import FindResult

    seen, todo = set(), [FindResult]
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        for hint in typing.get_type_hints(cls).values():
            parts = [hint]
            while parts:
                t = parts.pop()
                parts.extend(typing.get_args(t))
                if dataclasses.is_dataclass(t) and t.__module__.startswith("indexer"):
                    todo.append(t)
    assert {c.__name__ for c in seen} >= {"FindResult", "ModelResult", "Coverage", "Evidence"}
    for cls in seen:
        assert cls.__name__ in indexer.__all__, cls.__name__
        namespace = {}
        exec(f"from indexer import {cls.__name__}", namespace)
        assert namespace[cls.__name__] is cls


def test_a_model_measured_on_a_varied_benchmark_is_measured_near_its_benchmark_query(tmp_path, encoder):
    """A benchmark of varied prompts (20 unrelated tasks) has a mean vector that many of its prompts are not similar
    to (cosine below NEAR_SIMILARITY). Its query's neighbourhood is its own prompts, so a model measured on it, even
    only on those far prompts, is "measured near" there. Before, the similarity cut of prompt queries applied and
    that model was "no" on its own benchmark."""
    varied = ["Translate 'good morning' into French.", "What is the boiling point of water at sea level in Kelvin?",
              "Write a SQL query that counts the rows of a table named users.", "Who wrote the novel Moby-Dick?",
              "Sort the list [3, 1, 2] in descending order.", "What is the derivative of sin(x)?",
              "Name the largest ocean on Earth.", "Compose a haiku about autumn leaves.",
              "Which enzyme breaks down starch in saliva?", "What does GDP stand for in economics?",
              "How many players are on a football (soccer) team on the field?", "What is the capital of Mongolia?",
              "Explain what a binary search tree is in one sentence.", "Convert 100 degrees Fahrenheit to Celsius.",
              "Which planet has the Great Red Spot?", "What is the plural of 'cactus'?",
              "In chess, which piece can only move diagonally?", "What year did the Berlin Wall fall?",
              "Give a synonym of 'rapid'.", "What is 17 times 23?"]
    E = encoder.encode(varied)
    mean = E.mean(axis=0)
    far = (E @ mean / np.linalg.norm(mean)) < NEAR_SIMILARITY - 0.05  # the benchmark vector's question part is this mean
    assert 3 <= far.sum() < len(varied)  # the premise: a part of the benchmark is not near its own mean
    other = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of the other benchmark?" for j in range(12)]
    rng = np.random.default_rng(0)
    on_far = [int(y) if f else None for y, f in zip(rng.integers(0, 2, len(varied)), far)]
    store, vectors = index_sources(encoder, [
        (tmp_path / "v", "varied", varied, {"org/on-far": on_far, **outcomes(rng, ["org/on-all"], len(varied))}),
        (tmp_path / "o", "other", other, outcomes(rng, ["org/elsewhere"], len(other)))])
    try:
        by = {r.model: r.coverage for r in find_models(benchmark="varied", k=10, store=store, vectors=vectors)}
        assert by["org/on-far"].measured_near and by["org/on-far"].near == int(far.sum()), by["org/on-far"]
        assert by["org/on-all"].near == len(varied) and by["org/on-all"].benchmarks == ["varied"]
        assert by["org/elsewhere"].measured_near is False
    finally:
        vectors.close()
        store.close()


def test_a_model_with_two_licenses_passes_a_filter_on_either(idx):
    """A model card naming two licenses is stored as "apache-2.0,mit" (hub._card_text joins them); its point held that
    text, so `--license mit` and `--license apache-2.0` both excluded it. Now the point holds the list of them and a
    filter on either matches; answers still show the text as stored."""
    from indexer import sync

    store, vectors, _ = idx
    store.upsert_models([{"key": "org/small", "license": "apache-2.0,mit"}])
    sync.push_models(store, vectors, store.list_spaces()[0].id)
    for lic in ("mit", "apache-2.0"):
        got = {r.model: r for r in ask(idx, benchmark="alpha", k=10, filters={"licenses": [lic]})}
        assert "org/small" in got, lic
        assert got["org/small"].metadata["license"] == "apache-2.0,mit"
    assert "org/small" not in {r.model for r in ask(idx, benchmark="alpha", k=10, filters={"licenses": ["gpl-3.0"]})}
    assert sync.license_payload("apache-2.0, mit") == ["apache-2.0", "mit"] and sync.license_payload("mit") == "mit"
    assert sync.license_payload(None) is None and sync.license_text(["a", "b"]) == "a,b"
    assert all(d.clean for d in sync.check(store, vectors))  # the digest covers the payload as pushed


def test_a_license_filter_given_as_the_answers_show_two_licenses_matches(idx):
    """The answers show a model card's two licenses as stored, "apache-2.0,mit"; a filter given that text (copied from
    a table, or `--license mit,apache-2.0`, `GET /v1/models?license=apache-2.0,mit`) is those licenses, any of them, so
    the model it was copied from is ranked and listed; before, it matched nothing (no point holds a text with a
    comma: its point holds the list) and every model was "excluded by --license"."""
    from indexer import sync
    from indexer.browse import list_models

    store, vectors, _ = idx
    store.upsert_models([{"key": "org/small", "license": "apache-2.0,mit"}])
    sync.push_models(store, vectors, store.list_spaces()[0].id)
    shown = {r.model: r.metadata["license"] for r in ask(idx, benchmark="alpha", k=10)}["org/small"]
    assert shown == "apache-2.0,mit"
    for given in ([shown], "mit, apache-2.0", ["mit,", "gpl-3.0"]):
        res = ask(idx, benchmark="alpha", k=10, filters={"licenses": given})
        assert "org/small" in {r.model for r in res}, given
    assert Filters(licenses=[shown]).licenses == ["apache-2.0", "mit"]
    assert ask(idx, benchmark="alpha", k=10, filters={"licenses": shown}).query["filters"] == {
        "licenses": ["apache-2.0", "mit"]}
    assert "org/small" in {m["model"] for m in list_models(filters={"licenses": [shown]}, store=store, vectors=vectors)}
    for bad in (",", " , "):
        with pytest.raises(InputError, match="licenses\\[0\\] names no license") as err:
            Filters(licenses=[bad])
        assert err.value.item == "filters.licenses[0]"


def test_gated_is_unknown_for_api_models_and_models_without_hub_metadata(idx):
    """`metadata.gated` is null (the CLI's "gated -") for a model that is not a Hub repo (gpt-4o, API only) and for a
    Hub repo whose metadata was never fetched (Qwen/Qwen1.5-7B here; every model of an offline pass), true or false
    where the Hub said; in search answers, the model list and a model's page alike. `exclude_gated` still drops only
    the repos known to be gated. Before, both unknowns said "gated no" (false), which the Hub never said."""
    from indexer.browse import list_models, model_detail

    store, vectors, _ = idx
    want = {"gpt-4o": None, "Qwen/Qwen1.5-7B": None, "org/big": True, "org/small": False}
    found = {r.model: r.metadata["gated"] for r in ask(idx, benchmark="alpha", k=10)}
    listed = {m["model"]: m["metadata"]["gated"] for m in list_models(store=store, vectors=vectors)}
    pages = {k: model_detail(k, store=store, vectors=vectors)["metadata"]["gated"] for k in want}
    for got in (found, listed, pages):
        assert {k: got[k] for k in want} == want, got
    kept = {r.model for r in ask(idx, benchmark="alpha", k=10, filters={"exclude_gated": True})}
    assert "org/big" not in kept and {"gpt-4o", "Qwen/Qwen1.5-7B", "org/small"} <= kept


def test_the_readme_names_every_field_search_json_prints(idx):
    """The README's "Finding models" is the reference for `taskspace search --json` (= `POST /v1/find`): every key of
    the object, its `query`, `space` and each result is named there in backticks. Before, `query.max_tokens` (the
    encoder's limit a cut prompt was read to), the query's echoed settings and compare mode's `unranked` were in the
    answer with no word on them, and `truncated` was "which prompts" without saying it holds 0-based indexes."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Finding models\n", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`(\w+)`", section))
    long = " ".join(f"word{i}" for i in range(400))
    some = ask(idx, [long, "Write a Python function"], k=3).to_dict()
    compare = ask(idx, "Write a Python function", models=["org/small", "org/big"], k=3,
                  filters=Filters(exclude_gated=True)).to_dict()
    assert some["query"]["max_tokens"] == 256 and "unranked" in compare["query"]
    keys = set(some) | set(some["query"]) | set(compare["query"]) | set(some["space"]) | set(some["results"][0])
    assert sorted(keys - named) == []
    assert "`truncated`: the 0-based indexes" in section


#: a query whose nearest indexed prompts are of both benchmarks (a model fitted on alpha alone gains beta near it)
MIXED = [ALPHA[0], ALPHA[1], BETA[0]]


@pytest.mark.parametrize("query", [CODE_PROMPT, MIXED], ids=["code", "mixed"])
@pytest.mark.parametrize("aware", [True, False], ids=["coverage-aware", "one-weight"])
def test_an_answer_between_ingest_and_publish_is_of_the_indexed_state_and_says_results_changed(idx, encoder, tmp_path,
                                                                                              aware, query):
    """Results ingested and not yet solved (an index pass between its ingest and its publish, or `taskspace ingest`
    without `taskspace index`): the vectors are the previous pass's, SQL's outcomes the new ones. Before, a model that
    gained results near the query (org/big: beta's prompts, 12 of 12 right) kept its old score and probability (and,
    on a coverage-aware map, the old vector blended by its new coverage share) while its coverage said "measured near:
    yes" and its evidence showed beta 100% of 12: one answer mixing two states. Now its coverage, evidence and share
    are its results on the benchmarks its vector was fitted on, so the answer equals the one before the ingest, and
    `results_changed` says its results changed (org/small, whose beta block gained a second source, too); the pass
    that solves them clears it and shows the new results."""
    from helpers import write_source
    from indexer.ingest import ingest
    from indexer.pipeline import Indexer

    store, vectors, _ = idx
    if aware:
        coverage_aware(idx)
    before = ask(idx, query, k=10).to_dict()
    assert not any(r["results_changed"] for r in before["results"])
    big = {r["model"]: r for r in before["results"]}["org/big"]
    assert [b["name"] for b in big["evidence"]["benchmarks"]] == ["alpha"]
    assert big["coverage"]["measured_near"] is (query is MIXED) and big["coverage"]["benchmarks"] in ([], ["alpha"])
    write_source(tmp_path / "more", "beta", BETA, {"org/big": [1] * len(BETA), "org/small": [0] * len(BETA)})
    ingest(str(tmp_path / "more"), store=store, fetch_metadata=False)
    assert set(store.stale_models(store.list_spaces()[0].id)) == {"org/big", "org/small"}

    during = ask(idx, query, k=10).to_dict()
    changed = {r["model"] for r in during["results"] if r["results_changed"]}
    assert changed == {"org/big", "org/small"}
    by_before = {r["model"]: r for r in before["results"]}
    for r in during["results"]:
        if r["model"] == "org/small":  # a benchmark it was fitted on changed: flagged, that evidence as it is now
            assert r["probability"] == by_before["org/small"]["probability"]  # (measured on the same prompts)
            continue
        want = dict(by_before[r["model"]], results_changed=r["model"] in changed)
        assert r == want, r["model"]
    assert [r["model"] for r in during["results"]] == [r["model"] for r in before["results"]]

    report = Indexer(store, vectors, encoder=encoder).run()
    assert report.status == "ok", report.errors
    after = {r["model"]: r for r in ask(idx, query, k=10).to_dict()["results"]}
    assert not any(r["results_changed"] for r in after.values())
    assert after["org/big"]["coverage"]["measured_near"] is True
    assert {"name": "beta", "accuracy": 1.0, "n": 12} in after["org/big"]["evidence"]["benchmarks"]
    assert after["org/big"]["probability"] != big["probability"]


@pytest.mark.parametrize("region_var,uncovered", [(None, 0.1), (0.05, None)], ids=["coverage-aware", "region-aware"])
@pytest.mark.parametrize("rank", ["probability", "lcb"])
def test_a_search_on_a_coverage_map_reads_whose_results_changed_once(idx, tmp_path, monkeypatch, region_var,
                                                                      uncovered, rank):
    """A search whose ranking reads the candidates' coverage shares (a coverage-aware map, or variances with a region
    term) asks SQL once which models' results changed since their vector was solved (`Store.changed_outcomes`), and
    the answer's `results_changed` and evidence use that same reading: no model is asked twice, and the answers equal
    those of a search reading it twice. Before, the share reader asked for the ranked candidates and `find._results`
    asked again for the results (a subset), two reads of the same rows per search."""
    from helpers import write_source
    from indexer.ingest import ingest

    store, vectors, _ = idx
    coverage_aware(idx, region_var=region_var, uncovered=uncovered)
    # results ingested without a pass: two models' results changed since their vectors were solved
    write_source(tmp_path / "more", "beta", BETA, {"org/big": [1] * len(BETA), "org/small": [0] * len(BETA)})
    ingest(str(tmp_path / "more"), store=store, fetch_metadata=False)
    queries = [dict(prompts=CODE_PROMPT, k=4), dict(prompts=MIXED, k=10), dict(benchmark="beta", k=3),
               dict(prompts=CODE_PROMPT, models=["org/big", "coder/only-code"]), dict(prompts=MIXED, k=3, prefer_smaller=0.1)]
    want = [ask(idx, rank=rank, **kw).to_dict()["results"] for kw in queries]
    assert any(r["results_changed"] for rs in want for r in rs)  # the reading matters to the answers
    asked = []
    real = store.changed_outcomes
    monkeypatch.setattr(store, "changed_outcomes",
                        lambda space_id, models: asked.append(list(models)) or real(space_id, models))
    for kw, before in zip(queries, want):
        asked.clear()
        got = ask(idx, rank=rank, **kw).to_dict()["results"]
        assert got == before, kw
        assert len(asked) == 1, (kw, asked)
        every = [m for ms in asked for m in ms]
        assert len(every) == len(set(every)) and {r["model"] for r in got} <= set(every), (kw, asked)


@pytest.mark.parametrize("whole", [False, True], ids=["by-key", "whole-space"])
def test_a_model_page_on_a_coverage_aware_map_reads_whose_results_changed_once(idx, tmp_path, monkeypatch, whole):
    """`model_detail` (`taskspace model ID`, GET /v1/models/{id}) on a coverage-aware map asks SQL once which models'
    results changed since their vector was solved: its strengths' coverage shares ask for every model, and its own
    `results_changed` uses that reading, with the same page. Before, it asked again for the model itself. From
    `query.CHANGED_WHOLE_SPACE` models on (32,823 on the large home) it reads the whole space without keys, with the
    same page; a page whose every-model rows are kept asks for the model alone."""
    from indexer import query
    from helpers import write_source
    from indexer import model_detail
    from indexer.ingest import ingest

    store, vectors, _ = idx
    coverage_aware(idx)
    write_source(tmp_path / "more", "beta", BETA, {"org/big": [1] * len(BETA)})
    ingest(str(tmp_path / "more"), store=store, fetch_metadata=False)  # org/big's results changed, not its vector
    pages = {m: model_detail(m, store=store, vectors=vectors, strengths=10) for m in ("org/big", "org/small")}
    assert pages["org/big"]["results_changed"] and not pages["org/small"]["results_changed"]
    asked = []
    real = store.changed_outcomes
    monkeypatch.setattr(store, "changed_outcomes", lambda space_id, models: asked.append(
        None if models is None else list(models)) or real(space_id, models))
    if whole:
        monkeypatch.setattr(query, "CHANGED_WHOLE_SPACE", 2)
    for m, want in pages.items():
        asked.clear()
        assert _page_fresh(store, vectors, m, strengths=10) == want, m
        assert len(asked) == 1 and (asked[0] is None if whole else m in asked[0]), (m, asked)
        asked.clear()
        assert model_detail(m, store=store, vectors=vectors, strengths=10) == want and asked == [[m]], (m, asked)


@pytest.mark.parametrize("region_var,uncovered", [(None, 0.1), (0.05, None), (None, None)],
                         ids=["coverage-aware", "region-aware", "plain"])
def test_a_search_reads_its_neighbourhoods_prompt_ids_once(tmp_path, encoder, monkeypatch, region_var, uncovered):
    """A search reads the ids of its neighbourhood's prompts from SQL once (`Store.prompt_ids`), for the coverage
    shares its ranking reads, the results' coverage and evidence and the evidence texts cut to their snippet, with the
    same answers. Before, up to three times: the coverage shares the 10 nearest prompts', the results the 50
    nearest's, and the cut evidence texts those of its long prompts again (a search on the bundled sample: 22 SQL
    statements before the changed-outcomes read was shared too, 20 with it, now 16)."""
    from indexer import posterior

    stem = "Write a Python function that sorts a list of integers and explains each step "
    texts = [stem + f"number {j} " + "in detail. " * 40 for j in range(6)] + BETA  # six past the 300-char snippet
    outs = outcomes(np.random.default_rng(6), ["org/a", "org/b", "org/c"], len(texts))
    store, vectors = index_sources(encoder, [(tmp_path / "s", "beta", texts, outs)])
    try:
        (space,) = store.list_spaces()
        if region_var is not None or uncovered is not None:
            store.save_model_vectors(space.id, [], calibration=posterior.Calibration(
                0.05, 1.5, 100, spread=0.1, level=2.0, specific=1.5, shared=2.5, uncovered=uncovered,
                region_var=region_var))
        queries = [dict(prompts=stem, k=3, evidence=8), dict(prompts=CODE_PROMPT, k=3, rank="lcb"),
                   dict(benchmark="beta", k=2, evidence=3)]
        want = [find_models(store=store, vectors=vectors, **kw).to_dict()["results"] for kw in queries]
        assert any(p["text"].endswith("…") for r in want[0] for p in r["evidence"]["prompts"])  # cut texts shown
        asked = []
        real = store.prompt_ids
        monkeypatch.setattr(store, "prompt_ids", lambda hashes: asked.append(list(hashes)) or real(hashes))
        for kw, before in zip(queries, want):
            asked.clear()
            assert find_models(store=store, vectors=vectors, **kw).to_dict()["results"] == before, kw
            assert len(asked) == 1, (kw, [len(a) for a in asked])
    finally:
        vectors.close()
        store.close()


def test_a_model_page_reads_the_models_row_once(idx, monkeypatch):
    """`model_detail` (`taskspace model ID`, GET /v1/models/{id}) reads the model's SQL row once: its card facts
    (`base_model`, `params_from`) come from the record it read for the page, with the same page. Before, `card_facts`
    read the same row again (`Store.list_models`)."""
    from indexer import model_detail

    store, vectors, _ = idx
    store.upsert_models([{"key": "org/big", "base_model": "org/base"}])
    want = {m: model_detail(m, store=store, vectors=vectors) for m in ("org/big", "org/small")}
    assert want["org/big"]["metadata"]["base_model"] == "org/base"
    calls = []
    for method in ("get_model", "list_models"):
        real = getattr(store, method)
        monkeypatch.setattr(store, method, lambda *a, _real=real, _m=method, **kw: calls.append(_m) or _real(*a, **kw))
    for m, page in want.items():
        calls.clear()
        assert model_detail(m, store=store, vectors=vectors) == page, m
        assert calls == ["get_model"], (m, calls)


def test_a_page_of_models_reads_the_spaces_and_benchmarks_once(idx, monkeypatch):
    """`models_page` (GET /v1/models, `taskspace models --json`) resolves its space and checks its benchmark once for
    the page, its total and its missing-metadata counts, with the same page. Before, each of the three resolved them
    again (`Store.list_spaces` three times, `Store.list_benchmarks` three times with a benchmark and a filter)."""
    from indexer.browse import models_page

    store, vectors, _ = idx
    pages = [dict(), dict(benchmark="beta"), dict(benchmark="alpha", filters={"licenses": ["mit"]}, limit=1),
             dict(filters={"min_params": 2_000_000_000}, offset=1, limit=2)]
    want = [models_page(store=store, vectors=vectors, **kw) for kw in pages]
    assert want[2]["missing_metadata"] and want[1]["total"] >= 2
    calls = []
    for method in ("list_spaces", "list_benchmarks"):
        real = getattr(store, method)
        monkeypatch.setattr(store, method, lambda *a, _real=real, _m=method, **kw: calls.append(_m) or _real(*a, **kw))
    for kw, page in zip(pages, want):
        calls.clear()
        assert models_page(store=store, vectors=vectors, **kw) == page, kw
        assert calls.count("list_spaces") <= 1 and calls.count("list_benchmarks") <= 1, (kw, calls)


@pytest.mark.parametrize("method", ["auto-mc", "auto-mean", "auto-text", "paper"])
def test_the_neighbourhood_probe_is_the_question_embedding_alone(method):
    """The query's nearest indexed prompts (coverage, `measured near`, evidence) are nearest *by question*: the
    inner product of the first d columns (docs/PUBLISHING.md, the card's example). On the default auto-mc space
    (778 wide with MiniLM) the probe took 386 columns, the question's 384 and the first two of the options half (the
    width forgot the four level columns), so on the sample plus evalarena_code two of four multiple-choice queries
    had another 10 nearest prompts than the card's example and 57-60 of 147 probabilities differed from it by up to
    0.037. Now it is the question embedding alone, the width ``represent`` gives the rows."""
    from indexer import represent
    from indexer.find import _probe
    from indexer.space import SpaceSpec, space_params

    d = 8
    params = space_params(method)
    spec = SpaceSpec("enc@1", 1.0, 0.0, method, params, represent.index_dim(d, params))
    q = np.arange(1, spec.dim + 1, dtype=np.float32)
    probe = _probe(spec, q)
    e = d
    assert probe.shape == (spec.dim,) and not probe[e:].any()
    assert np.allclose(probe[:e], q[:e] / np.linalg.norm(q[:e]))


#: the queries the offset test pages: (the index fixture, prompt, filters, prefer_smaller)
_PAGED = (("mixed", ALPHA[5], None, 0.0), ("mixed", BETA[2], {"benchmark": "alpha"}, 0.0), ("mixed", ALPHA[1], None, 0.05),
          ("mixed", ALPHA[2], {"min_evidence": 13}, 0.0), ("idx", ALPHA[3], {"open_only": True}, 0.0),
          ("idx", BETA[0], None, 0.0), ("idx", ALPHA[7], {"licenses": ["mit", "apache-2.0"]}, 0.1))


@pytest.mark.parametrize("fixture", ["mixed", "idx"])
@pytest.mark.parametrize("rank", ["probability", "lcb"])
def test_offset_pages_the_ranking_as_a_larger_k_ranks_it(request, fixture, rank):
    """`offset=N` answers ranks N+1 to N+k of the ranking `k = N + k` gives, each result whole (score, probability,
    interval, coverage, evidence), by probability and by the lower bound, with filters and a size trade-off, on a
    coverage-aware map (`mixed`, 19 models) and a plain one (`idx`); past the last model it is an empty answer.
    Before, find_models took no offset: the results stopped at k (<= 100 over HTTP)."""
    index = request.getfixturevalue(fixture)
    for _, prompt, filters, alpha in (q for q in _PAGED if q[0] == fixture):
        whole = ask(index, prompt, k=30, rank=rank, filters=filters, prefer_smaller=alpha)
        every = [r.to_dict() for r in whole]
        assert len(every) >= 3, every
        for offset, k in ((0, 3), (1, 3), (2, 2), (5, 4), (len(every) - 1, 5), (len(every), 2), (len(every) + 7, 1)):
            page = ask(index, prompt, k=k, offset=offset, rank=rank, filters=filters, prefer_smaller=alpha)
            assert [r.to_dict() for r in page] == every[offset:offset + k], (prompt, filters, alpha, offset, k)
            assert page.query["offset"] == offset and page.query["k"] == k
            assert page.excluded == whole.excluded and page.missing_metadata == whole.missing_metadata


@pytest.mark.parametrize("vector_engine", ["edge", "local"], indirect=True)
@pytest.mark.parametrize("fixture", ["mixed", "idx"])
@pytest.mark.parametrize("rank", ["probability", "lcb"])
def test_a_deep_page_matches_its_own_models_alone_and_is_the_tail_of_the_whole_ranking(request, fixture, rank,
                                                                                       vector_engine, monkeypatch):
    """A page deep in a ranking is the tail of the whole ranking to the last number (every result's model, scores,
    rank score, probability, interval, variance, payload, coverage and evidence: no rounding), by probability and by
    the lower bound, with filters and a size trade-off, on a coverage-aware map (`mixed`:
    :func:`indexer.query.coverage_ranked`) and a plain one (`idx`: the search itself, :func:`indexer.query.lcb_ranked`),
    through `indexer.find_models` and the lean `indexer.query.find_models`, on both embedded vector engines; and only
    the page's models are matched (their probability and interval, whole payload: :func:`indexer.query._matches`),
    not every model ranked above them, whose searches return the payload fields the order reads alone (no vector).
    Before, the page at offset N matched the best N + k: on the 32,823-model home the last page of a benchmark
    query took 4.5 s of CPU (its first page 0.15 s)."""
    import dataclasses

    from indexer import query

    def whole(r) -> str:  # every field, each float to its last bit (repr), NaN equal to NaN
        return json.dumps(dataclasses.asdict(r), sort_keys=True, default=str)

    index = request.getfixturevalue(fixture)
    store, vectors, _ = index
    matched: list[str] = []
    matches = query._matches

    def counted(hits, *args, **kw):
        matched.extend(h.key for h in hits)
        return matches(hits, *args, **kw)

    monkeypatch.setattr(query, "_matches", counted)
    # the models a search returned whole (a payload field the order does not read, or a vector)
    order_fields = {"key", "benchmarks", "pattern", "num_parameters", *query.VARIANCE_FIELDS}
    read_whole: list[str] = []
    search = vectors.search

    def searched(space, kind, *args, **kw):
        hits = search(space, kind, *args, **kw)
        if kind == "models":
            read_whole.extend(h.key for h in hits if h.vector is not None or set(h.payload) - order_fields)
        return hits

    monkeypatch.setattr(vectors, "search", searched)
    for _, prompt, filters, alpha in (q for q in _PAGED if q[0] == fixture):
        every = ask(index, prompt, k=100, rank=rank, filters=filters, prefer_smaller=alpha).results
        n = len(every)
        assert n >= 3, (prompt, filters)
        for offset, k in ((n - 2, 2), (n - 3, 2), (n - 1, 5), (n // 2, 3)):
            matched.clear()
            read_whole.clear()
            page = ask(index, prompt, k=k, offset=offset, rank=rank, filters=filters, prefer_smaller=alpha).results
            assert list(map(whole, page)) == list(map(whole, every[offset:offset + k])), (prompt, filters, alpha, offset, k)
            assert sorted(matched) == sorted(r.model for r in page), (prompt, filters, alpha, offset, k, matched)
            assert not (offset and read_whole), (prompt, filters, alpha, offset, k, read_whole)
            if alpha == 0:  # the lean entry (no size trade-off): the same page, its models alone matched
                raw = Filters.from_dict(filters) if filters else None
                matched.clear()
                lean = query.find_models(prompt, top=k, offset=offset, rank=rank, filters=raw, store=store,
                                         vectors=vectors)
                assert repr([(m.model, m.score, m.probability, m.low, m.high, m.variance) for m in lean]) == repr([
                    (r.model, r.score, r.probability, r.low, r.high, r.variance) for r in page])
                assert sorted(matched) == sorted(m.model for m in lean)


@pytest.mark.parametrize("fixture", ["mixed", "idx"])
@pytest.mark.parametrize("rank", ["probability", "lcb"])
def test_a_deep_pages_candidates_raw_scores_are_read_by_the_ids_their_searches_read(request, fixture, rank,
                                                                                   monkeypatch):
    """A ranked page reads its candidates' raw scores back by the point ids their searches read (``scores_of``'s
    ``memo``): no point id is made from a key but the page's own models', and the page is the one the same call gives
    with each id made from its key (every field, to the last bit), with filters and a size trade-off. Before, one id
    was made per candidate: 32,823 a deep page on the large home."""
    import dataclasses

    from indexer.store import vectors as vmod

    def whole(r) -> str:
        return json.dumps(dataclasses.asdict(r), sort_keys=True, default=str)

    index = request.getfixturevalue(fixture)
    made: list[str] = []
    point_id = vmod.point_id

    def making(space, kind, key):
        if kind == "models":
            made.append(key)
        return point_id(space, kind, key)

    scores_of = vmod.VectorStore.scores_of
    for _, prompt, filters, alpha in (q for q in _PAGED if q[0] == fixture):
        n = len(ask(index, prompt, k=100, rank=rank, filters=filters, prefer_smaller=alpha).results)
        for offset, k in ((0, 3), (n - 2, 2), (n // 2, 3)):
            kw = dict(k=k, offset=offset, rank=rank, filters=filters, prefer_smaller=alpha)
            monkeypatch.setattr(vmod.VectorStore, "scores_of", lambda self, *a, memo=None: scores_of(self, *a))
            by_key = list(map(whole, ask(index, prompt, **kw).results))
            monkeypatch.setattr(vmod.VectorStore, "scores_of", scores_of)
            monkeypatch.setattr(vmod, "point_id", making)
            made.clear()
            page = ask(index, prompt, **kw).results
            monkeypatch.setattr(vmod, "point_id", point_id)
            assert set(made) <= {r.model for r in page}, (prompt, filters, alpha, offset, k, made)
            assert list(map(whole, page)) == by_key, (prompt, filters, alpha, offset, k)


def test_an_offset_past_the_last_model_ranks_one_model_not_every_one(idx, monkeypatch):
    """An offset at or past the last model the query can list is an empty page whatever is ranked: the search ranks one
    model (for the answer's checks of an empty or drifted index), not all of them. Before, it ranked every model the
    filters let through and dropped them all: on the 32,823-model home `POST /v1/find` with `"offset": 1000000000`
    took 4-7 s of CPU to answer no result (0.13 s for a first page)."""
    import indexer.find as find_module

    asked = []
    search = find_module._search

    def spy(*args, **kw):
        asked.append(kw["limit"])
        return search(*args, **kw)

    whole = ask(idx, ALPHA[0], k=50)
    monkeypatch.setattr(find_module, "_search", spy)
    for offset in (len(whole), len(whole) + 3, 10**9):
        asked.clear()
        page = ask(idx, ALPHA[0], k=5, offset=offset)
        assert len(page) == 0 and page.query["offset"] == offset and asked == [1], (offset, asked)
        assert page.excluded == whole.excluded and page.missing_metadata == whole.missing_metadata
    asked.clear()
    assert [r.to_dict() for r in ask(idx, ALPHA[0], k=5, offset=len(whole) - 1)] == [whole.results[-1].to_dict()]
    assert asked == [len(whole)]


def test_a_bad_offset_is_an_input_error_naming_it(idx):
    """A negative or non-integer offset is refused as GET /v1/models' offset is ("offset must be a non-negative
    integer"), and so is an offset in compare mode, whose answer lists every model given."""
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(InputError, match="offset must be a non-negative integer") as err:
            ask(idx, ALPHA[0], offset=bad)
        assert err.value.item == "offset"
    with pytest.raises(InputError, match="compare mode") as err:
        ask(idx, ALPHA[0], models=["org/small", "org/big"], offset=1)
    assert err.value.item == "offset"
    assert len(ask(idx, ALPHA[0], models=["org/small", "org/big"], offset=0)) == 2



def test_a_centred_lcb_bounds_a_partly_linked_groups_covered_search_by_its_variance(mixed, encoder, monkeypatch):
    """``lcb`` with each unlinked group's average model (Calibration.centres) at a query whose nearest prompts lie in
    two groups (9 of beta's, 1 of alpha's): each group's models are searched apart, on both folded rows, and every
    model of a group has at least the unlinked term of its group's linked share in its variance, so the covered (L1)
    search's unfetched models are bounded by its next score less the interval's half-width at that term, as the
    uncovered one's are. Fetched one at a time, the top of every k equals every model's ranking (scores, intervals);
    at k=1 an alpha model whose covered-search value (``w L1 + c``, the centring of its group) is above the top's
    lower end is left unfetched (before, the covered search bounded its unfetched models by that value alone, so
    every such model was fetched: on 32,823 models, thousands of GSM8K rows for "Solve for x: 3x + 5 = 20")."""
    from indexer import query
    from indexer.space import space_name

    store, vectors, _ = mixed
    (space,) = store.list_spaces()
    centre(mixed)
    n = vectors.count(space_name(space), "models")
    text = ALPHA[2] + " " + BETA[3]
    near = {}
    ranked = query.coverage_ranked

    def spy(store, vectors, name, q, pred, nearby, **kw):
        near["benchmarks"] = [p["benchmarks"] for p in nearby]
        near["pred"], near["q"] = pred, q
        return ranked(store, vectors, name, q, pred, nearby, **kw)

    monkeypatch.setattr(query, "coverage_ranked", spy)
    want = ask(mixed, text, k=n, rank="lcb")
    assert sorted(map(tuple, near["benchmarks"])) == [("alpha",)] + [("beta",)] * 9
    built = _count_matches_built(monkeypatch)
    fetched = {}
    for k in range(1, n + 1):
        built.clear()
        got = ask(mixed, text, k=k, rank="lcb")
        assert [r.model for r in got] == [r.model for r in want][:k], k
        assert [x for r in got for x in (r.rank_score, r.probability, r.low, r.high, r.variance)] == pytest.approx(
            [x for r in want[:k] for x in (r.rank_score, r.probability, r.low, r.high, r.variance)], abs=1e-9)
        fetched[k] = set(built)
    pred, q = near["pred"], near["q"]
    q1 = np.asarray(pred.fold(q), np.float64)
    (w,), (c,) = pred.calibration.unlinked_mix(q1, [["alpha"]], near["benchmarks"])
    keys, V = store.model_vector_matrix(space.id)
    covered = dict(zip(keys, w * (V.astype(np.float64) @ q1) + c))
    alpha = [f"alpha/m{i}" for i in range(14) if i != 12]
    assert [m for m in alpha if m not in fetched[1] and covered[m] > want[0].rank_score + 1e-6]



def _sized(store, vectors, rng, skip=()):
    """Parameter counts drawn from 0.15B to 1.5T (``rng``) for every model but about a sixth (and ``skip``), pushed
    into the points."""
    from indexer import sync

    (space,) = store.list_spaces()
    keys = sorted(mv.model for mv in store.load_model_vectors(space.id))
    sized = [k for k in keys if k not in skip and rng.random() > 1 / 6]
    store.upsert_models([{"key": k, "num_parameters": int(1.5 * 10 ** rng.uniform(8, 12))} for k in sized])
    sync.push_models(store, vectors, space.id, [k for k in keys if k not in skip])
    return len(keys)


def _same_top(got, want, k: int, what) -> None:
    assert [r.model for r in got] == [r.model for r in want][:k], what
    assert [x for r in got for x in (r.rank_score, r.probability, r.low, r.high, r.variance)] == pytest.approx(
        [x for r in want[:k] for x in (r.rank_score, r.probability, r.low, r.high, r.variance)], abs=1e-9,
        nan_ok=True), what  # the tiny index has no signal: no interval


@pytest.mark.parametrize("centred", [False, True], ids=["coverage-aware", "centred"])
def test_lcb_with_prefer_smaller_fetches_by_the_penalised_score_and_equals_every_model_scored(mixed, monkeypatch,
                                                                                               centred):
    """``--rank lcb --prefer-smaller`` on a coverage-aware map (and one with each group's average model): each search
    fetches its candidates by score less the size term (the Qdrant formula, as ``probability`` does), so its next
    value bounds every unfetched model's value and lower end. Over six draws of the models' sizes, fetched one at a
    time (one per result first: k 1-3), two alphas and three queries: the same top, rank scores, intervals and variances as every model
    scored at once, and at k=1 not every model is scored. Before, a size penalty with ``lcb`` fetched and scored every
    model (on 32,823 models 2.5-4 s a search)."""
    from indexer import query

    store, vectors, _ = mixed
    if centred:
        centre(mixed)
    texts = (CODE_PROMPT, ALPHA[2], GAMMA[3])
    rng = np.random.default_rng(5)
    built = _count_matches_built(monkeypatch)
    partial = 0
    for _ in range(6):
        n = _sized(store, vectors, rng, skip={"alpha/m12"})  # alpha/m12's point (no benchmarks) stays the fixture's
        for t in texts:
            for a in (0.1, 1.0):
                monkeypatch.setattr(query, "COVERAGE_FETCH", 10 ** 6)  # the first fetch takes every model: no bound
                monkeypatch.setattr(query, "FETCH_PER_RESULT", 4)
                want = ask(mixed, t, k=n, rank="lcb", prefer_smaller=a)
                assert len(want) == n
                monkeypatch.setattr(query, "COVERAGE_FETCH", 1)
                monkeypatch.setattr(query, "FETCH_PER_RESULT", 1)
                for k in (1, 2, 3):
                    built.clear()
                    _same_top(ask(mixed, t, k=k, rank="lcb", prefer_smaller=a), want, k, (t, a, k))
                    partial += k == 1 and len(set(built)) < n
    assert partial  # not every model scored


def test_lcb_with_prefer_smaller_on_a_plain_map_fetches_by_the_penalised_score(idx, monkeypatch):
    """``lcb`` with a size penalty where the map needs no neighbourhood (:func:`indexer.query.lcb_ranked`): the
    candidates are fetched by score less the size term and their raw scores read back by id, so an unfetched model's
    lower end is at most the next value. Over six draws of the sizes, fetched 4 at a time, the top equals every model
    scored at once, and not every model is scored (one fetched first; before: every model, whatever k)."""
    from indexer import query

    store, vectors, _ = idx
    calls = []
    ranked = query.lcb_ranked

    def spy(*args, **kw):
        calls.append(kw)
        return ranked(*args, **kw)

    monkeypatch.setattr(query, "lcb_ranked", spy)
    built = _count_matches_built(monkeypatch)
    rng = np.random.default_rng(5)
    partial = 0
    for _ in range(6):
        n = _sized(store, vectors, rng)
        for text in (ALPHA[3], CODE_PROMPT):
            for a in (0.1, 2.0):
                monkeypatch.setattr(query, "LCB_FETCH", 10 ** 6)
                monkeypatch.setattr(query, "FETCH_PER_RESULT", 4)
                want = ask(idx, text, k=n, rank="lcb", prefer_smaller=a)
                assert len(want) == n and calls and calls[-1]["penalty"] is not None
                monkeypatch.setattr(query, "LCB_FETCH", 1)
                monkeypatch.setattr(query, "FETCH_PER_RESULT", 1)
                built.clear()
                _same_top(ask(idx, text, k=1, rank="lcb", prefer_smaller=a), want, 1, (text, a))
                partial += len(set(built)) < n
    assert partial


def test_an_input_error_naming_a_value_carries_it_for_a_caller_to_say_as_written():
    """The library's error about a value it names (k, offset, evidence, min_evidence) carries that value (`value`) and
    the message it is said in (`said_with`), so the HTTP layer says it as the JSON body wrote it (`-3.0`, `1e+300`:
    indexer.serve) by rendering, not by rewriting the message's text with a regular expression (before, serve matched
    the integer in the message and replaced it)."""
    from indexer.browse import _page

    cases = [(lambda: find_models("x", k=-3), "k", -3, "k must be a positive integer, not -3.0"),
             (lambda: find_models("x", evidence=-3), "evidence", -3, "evidence must be a non-negative integer, not -3.0"),
             (lambda: Filters(min_evidence=-3), "filters.min_evidence", -3,
              "min_evidence must be a non-negative integer, not -3.0"),
             (lambda: _page(-3, None), "offset", -3, "offset must be a non-negative integer, not -3.0")]
    for call, item, value, said in cases:
        with pytest.raises(InputError) as info:
            call()
        err = info.value
        assert err.item == item and err.value == value and str(err) == said.replace("-3.0", "-3"), err
        assert err.said_with("-3.0") == said, err
    plain = InputError("a prompt must be a non-empty string", item="prompts[0]")
    assert plain.template is None and plain.said_with("x") == str(plain)


@pytest.mark.parametrize("kw", [{}, {"rank": "lcb"}, {"prefer_smaller": 0.1}])
def test_a_k_past_any_index_answers_every_model_not_an_overflow(idx, kw):
    """``k=10**30`` (or ``top=`` of indexer.query.find_models): every model, as ``k=10**9`` answers; before, an
    OverflowError ("int too big to convert") from the vector engine's limit, a library caller's traceback."""
    from indexer.query import find_models as ranked

    store, vectors, _ = idx
    every = [r.model for r in ask(idx, ALPHA[0], k=10**9, **kw)]
    assert [r.model for r in ask(idx, ALPHA[0], k=10**30, **kw)] == every
    assert ask(idx, ALPHA[0], k=10**30, **kw).query["k"] == 10**30
    if "prefer_smaller" not in kw:  # the ranked list alone takes no prefer_smaller
        assert [m.model for m in ranked(ALPHA[0], top=10**30, store=store, vectors=vectors, **kw)] == every



@pytest.mark.parametrize("kind", ["models", "prompts"])
def test_a_search_limit_past_any_index_answers_every_point_not_an_overflow(idx, kind):
    """``VectorStore.search(..., limit=10**30)``, which ``find_models(evidence=10**30)`` asks for a model's nearest
    measured prompts (the library takes any count; the HTTP API at most 20): every point, as ``limit=10**9`` answers;
    before, an OverflowError ("int too big to convert") from Qdrant Edge's 64-bit limit."""
    from indexer.space import space_name

    store, vectors, _ = idx
    name = space_name(store.list_spaces()[0])
    q = np.random.default_rng(0).normal(size=vectors._query_dim(name, kind))
    every = [h.key for h in vectors.search(name, kind, q, limit=10**9)]
    assert len(every) == vectors.count(name, kind) and [h.key for h in vectors.search(name, kind, q, limit=10**30)] == every


def test_every_result_object_of_the_library_has_to_dict_as_find_results_do():
    """`summary.to_dict()` of `indexer.ingest.ingest`, `report.to_dict()` of `run_index`, and the results of pull,
    publish, spaces, reindex, check and `indexer.query.find_models`: the plain JSON-able dict of `as_dict()`, under the
    name the README teaches for `find_models`' answer (`result.to_dict()`) and `Filters` and `ModelResult` use; before,
    AttributeError: no attribute 'to_dict' on every one of them."""
    from indexer.ingest import IngestSummary
    from indexer.pipeline import RunReport
    from indexer.publish import PublishResult, PullResult
    from indexer.query import Match
    from indexer.records import RowError, ToDict
    from indexer.spaces import DropResult, SpaceInfo
    from indexer.sync import Drift, ReindexResult

    for cls in (IngestSummary, RunReport, PublishResult, PullResult, SpaceInfo, DropResult, ReindexResult, Drift, Match,
                RowError):
        assert cls.to_dict in (cls.as_dict, ToDict.to_dict), cls  # ToDict: as_dict under the README's name
    summary = IngestSummary(models=2, errors=[RowError("x.csv", 3, "bad row")], warnings=["w"])
    assert json.loads(json.dumps(summary.to_dict())) == summary.as_dict()
    assert json.loads(json.dumps(RunReport(status="ok").to_dict()))["status"] == "ok"


def test_a_store_given_as_a_url_or_a_path_is_an_input_error_saying_how_to_open_one(idx, tmp_path):
    """`find_models(..., store="sqlite:///x.db")` (or `vectors=` a folder; `list_models`, `model_detail`,
    `indexer.query.find_models`): the InputError naming `store` / `vectors` and the call that opens one
    (`open_store(URL)`, `VectorStore(path=...)`); before, AttributeError: 'str' object has no attribute 'list_spaces',
    or a TypeError from deep in the search (slice indices must be integers)."""
    from indexer import list_models, model_detail
    from indexer.query import find_models as ranked

    store, vectors, _ = idx
    for call in (lambda **kw: find_models(ALPHA[0], **kw), lambda **kw: list_models(**kw),
                 lambda **kw: model_detail("org/small", **kw), lambda **kw: ranked(ALPHA[0], **kw)):
        with pytest.raises(InputError, match=r"store must be an SQL store .*open_store\(URL\).*not str") as err:
            call(store="sqlite:///x.db", vectors=vectors)
        assert err.value.item == "store"
        with pytest.raises(InputError, match=r"vectors must be a vector store .*VectorStore\(path=.*not PosixPath") as err:
            call(store=store, vectors=tmp_path / "qdrant")
        assert err.value.item == "vectors"


def test_a_query_vector_array_of_several_rows_is_refused_as_not_one_vector(idx):
    """`find_models(vector=X)` with X of shape (2, dim) (two queries) or (4, dim // 4) (a row cut into four): the
    InputError saying it takes one vector and the shape given; before, the rows were flattened into one: a (2, dim)
    array was "the query vector has 2 x dim entries" and one of (4, dim // 4) was searched as if it were a vector. A
    (1, dim) row or a (dim, 1) column is one vector, as before."""
    store, vectors, _ = idx
    dim = store.list_spaces()[0].dim
    q = np.random.default_rng(1).normal(size=dim)
    want = [r.model for r in ask(idx, vector=q, k=3)]
    assert [r.model for r in ask(idx, vector=q.reshape(1, -1), k=3)] == want
    assert [r.model for r in ask(idx, vector=q.reshape(-1, 1), k=3)] == want
    for shape in ((2, dim), (2, dim // 2)):
        with pytest.raises(InputError, match=rf"one vector.*shape \({shape[0]}, {shape[1]}\)") as err:
            ask(idx, vector=np.resize(q, shape), k=3)
        assert err.value.item == "vector"


def test_an_unknown_keyword_of_filters_is_named_with_the_close_field_as_from_dict_does():
    """`Filters(license="mit")` (the name GET /v1/models uses, a misspelling) was Python's own TypeError ("unexpected
    keyword argument 'license'"), no field suggested, while `Filters.from_dict` says which one was meant."""
    with pytest.raises(InputError, match=r"unknown filter \['license'\] \(did you mean 'licenses'\?\); known: ") as err:
        Filters(license="mit")
    assert err.value.item == "filters.license"
    with pytest.raises(InputError, match=r"unknown filter \['min_param'\] \(did you mean 'min_params'\?\)"):
        Filters(min_param="1B")
    assert Filters(licenses="mit").licenses == ["mit"] and Filters("mit").licenses == ["mit"]


def test_help_of_filters_shows_its_fields_as_parameters():
    """`help(indexer.Filters)` and `inspect.signature(Filters)` (what Jupyter's Shift-Tab and IPython's `Filters?`
    show) give its eight fields with their defaults; before, `Filters(*args, **kwargs)`, its `__new__`'s (the unknown
    keyword check), so a caller could not see what it takes without reading the source."""
    import dataclasses
    import inspect
    import pydoc

    sig = inspect.signature(Filters)
    assert list(sig.parameters) == [f.name for f in dataclasses.fields(Filters)]
    assert sig.parameters["open_only"].default is False and sig.parameters["licenses"].default is None
    shown = pydoc.render_doc(Filters, renderer=pydoc.plaintext)
    assert "Filters(licenses: 'list[str] | None' = None, min_params" in shown


def test_help_of_each_public_function_says_what_it_takes_returns_and_raises():
    """`help()` of `indexer.find_models`, `list_models`, `list_benchmarks`, `model_detail` and `parse_params` names the
    errors they raise (`InputError`, and `NotFoundError` for those that look names up, with `.item`), and
    `list_models`' its arguments; before, none said what it raised (the README alone did), `list_models`' named
    none of its arguments and `FindResult`'s left out `timings["total"]`."""
    import pydoc

    import indexer

    for name in ("find_models", "list_models", "list_benchmarks", "model_detail", "parse_params"):
        shown = pydoc.render_doc(getattr(indexer, name), renderer=pydoc.plaintext)
        assert "InputError" in shown, name
        if name != "parse_params":
            assert "NotFoundError" in shown and ".item" in shown and "IndexerError" in shown, name
    shown = pydoc.render_doc(indexer.list_models, renderer=pydoc.plaintext)
    assert all(f"``{arg}``:" in shown for arg in ("benchmark", "offset", "limit", "filters", "space")), shown
    assert "``total``" in (FindResult.__doc__ or "")


def test_two_answers_to_one_query_compare_equal_whatever_they_took(idx):
    """A program comparing two answers of the same query (a cached one with a fresh one, a test of its own) finds them
    equal (`==`, as their `to_dict()` are): `timings`, how long each took, is no part of the answer (nor of its
    `to_dict()`), and a result without an interval (`low`/`high` NaN, null in `to_dict()`) equals itself. Before, every
    two FindResults compared unequal, by their timings, and such a ModelResult by its NaNs."""
    store, vectors, _ = idx
    a = find_models("What is item 3 of alpha about?", k=3, store=store, vectors=vectors)
    b = find_models("What is item 3 of alpha about?", k=3, store=store, vectors=vectors)
    assert a.to_dict() == b.to_dict() and a.timings != b.timings
    assert a == b
    assert a != find_models("What is item 3 of alpha about?", k=2, store=store, vectors=vectors)


def test_the_empty_index_error_names_the_library_call_to_a_python_caller(tmp_path, monkeypatch):
    """`indexer.find_models` on a home where nothing is indexed told a Python caller only to run `taskspace index`;
    it names the library's pass too (`indexer.pipeline.run_index`, README). The CLI's words are as they were
    (test_cli_find.py::test_an_empty_index_says_which_database_it_looked_in)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("TASKSPACE_HOME", str(home))
    with pytest.raises(NotFoundError) as exc:
        find_models("x", k=3)
    said = str(exc.value)
    assert said.startswith("the index is empty: run `taskspace index` first (the database ") and (
        "from Python, `indexer.pipeline.run_index`" in said) and ")" not in said[said.index("(") + 1:-1], said


def test_every_taskspace_error_carries_item_none_when_no_argument_is_at_fault(tmp_path, monkeypatch):
    """The README: errors carry `.item` naming the argument at fault, "None for an empty index". `find_models`,
    `list_models` and `list_benchmarks` on a home never indexed raise the NotFoundError with `.item` None (before,
    `exc.item` was AttributeError: only errors made with an item had one), and so does any IndexerError made without
    one (a StoreError, a HubError), so `except IndexerError as e: e.item` holds for every one of them."""
    from indexer import list_benchmarks, list_models
    from indexer.errors import HubError, IndexerError, StoreError

    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "never"))
    for call in (lambda: find_models("x", k=3), lambda: list_models(limit=2), list_benchmarks):
        with pytest.raises(NotFoundError, match="the index is empty") as exc:
            call()
        assert exc.value.item is None
    for err in (IndexerError("x"), StoreError("x"), HubError("x"), NotFoundError("x")):
        assert err.item is None
    assert InputError("bad", item="k").item == "k"


def test_a_vector_store_opened_on_the_home_names_the_qdrant_folder_it_meant(idx):
    """`VectorStore(path=HOME)` (the home given where its index folder is meant, HOME/qdrant): a search says the index
    is in HOME/qdrant and to open that folder; before, that the index "is missing" from HOME and that `taskspace
    reindex` rebuilds it, which rebuilds TASKSPACE_HOME's index and leaves the caller's call as it was; `list_models`
    that the index "has drifted"."""
    from indexer import list_models
    from indexer.config import get_settings
    from indexer.errors import IndexMissingError, StoreError
    from indexer.store.vectors import VectorStore

    store, _, _ = idx
    qdrant = get_settings().qdrant_path
    wrong = VectorStore(path=qdrant.parent)
    try:
        with pytest.raises(IndexMissingError, match=re.escape(f"VectorStore(path='{qdrant}')")) as err:
            find_models(ALPHA[0], store=store, vectors=wrong)
        assert "reindex" not in str(err.value)
        with pytest.raises(StoreError, match=re.escape(f"VectorStore(path='{qdrant}')")) as err:
            list_models(store=store, vectors=wrong)  # (before: "the index has drifted", reindex)
        assert "reindex" not in str(err.value)
    finally:
        wrong.close()


def test_a_taskspace_home_set_to_a_folder_inside_a_home_names_the_home(tmp_path, monkeypatch):
    """TASKSPACE_HOME set to a folder inside a home (its `qdrant` folder, the vector index's, as `ls HOME` shows it):
    the empty-index error says the folder above is a taskspace home (it holds taskspace.db) and to set TASKSPACE_HOME
    to it; before, only to run `taskspace index`, which would index into the folder inside."""
    home = tmp_path / "home"
    (home / "qdrant").mkdir(parents=True)
    (home / "taskspace.db").touch()
    monkeypatch.setenv("TASKSPACE_HOME", str(home / "qdrant"))
    with pytest.raises(NotFoundError) as exc:
        find_models("x", k=3)
    assert f"but the folder above it, {home}, is a taskspace home, holding taskspace.db: set TASKSPACE_HOME={home};" in (
        str(exc.value)), str(exc.value)
    assert exc.value.item is None


def test_the_public_result_classes_say_what_they_are():
    """help() on each result class a library caller gets back (find_models' FindResult, ModelResult, Coverage,
    Evidence, Filters; list_models' Match; the vector store's Point, Hit, RebuildResult) shows what it holds; before,
    Evidence, Hit and RebuildResult had no docstring (a dataclass then shows only its signature)."""
    import dataclasses

    from indexer.find import Coverage, Evidence, Filters, FindResult, ModelResult
    from indexer.query import Match
    from indexer.store.vectors import Hit, Point, RebuildResult

    for cls in (FindResult, ModelResult, Coverage, Evidence, Filters, Match, Point, Hit, RebuildResult):
        doc = cls.__doc__ or ""
        assert dataclasses.is_dataclass(cls) and doc and not doc.startswith(cls.__name__ + "("), cls.__name__


def test_the_sql_record_classes_say_what_a_row_is():
    """help() on each public record class of the SQL store (indexer.store.sql_types: ModelRecord, RunRecord, ...)
    says what it holds; before, all but StoredOutcomes and SpacePrior had only the signature dataclass writes."""
    import inspect

    from indexer.store import sql_types

    classes = [c for n, c in vars(sql_types).items()
               if inspect.isclass(c) and c.__module__ == sql_types.__name__ and not n.startswith("_")]
    assert len(classes) >= 10
    bare = [c.__name__ for c in classes if not c.__doc__ or c.__doc__.startswith(c.__name__ + "(")]
    assert bare == []


@pytest.mark.parametrize("bad", [5, ["mmlu"], "", "  ", "\u200b", "a\x00b"])
def test_a_bad_benchmark_filter_is_said_as_a_bad_benchmark_query_is(bad):
    """`Filters(benchmark=...)` refuses a bad benchmark name with the words of a benchmark query
    (check_benchmark_name), naming filters.benchmark. Before, it said "benchmark must be a non-empty string" for 5 as
    for "", where a query said "benchmark must be one benchmark name (a string), not int"."""
    from indexer.find import check_benchmark_name

    with pytest.raises(InputError) as query:
        check_benchmark_name(bad)
    with pytest.raises(InputError) as filt:
        Filters(benchmark=bad)
    assert (str(filt.value), filt.value.item) == (str(query.value), "filters.benchmark")


def test_an_unknown_name_tells_a_python_caller_the_call_that_lists_the_known_ones(idx):
    """An unknown benchmark or model raised to a Python caller (find_models, model_detail, list_models) names the call
    that lists the known ones (`indexer.list_benchmarks()`), and a benchmark's name given as a model's the calls that
    list and rank its models; a CLI command's (indexer.errors.CLI set) names the commands, as before. Before, the
    Python caller was told "(`taskspace models` lists them)", a command of another surface."""
    from indexer import list_models, model_detail
    from indexer.errors import CLI

    store, vectors, _ = idx
    kw = {"store": store, "vectors": vectors}
    calls = [(lambda: ask(idx, benchmark="alpah"), "unknown benchmark 'alpah'; did you mean alpha?", "benchmarks"),
             (lambda: ask(idx, "x", models=["org/smal"]), "unknown model 'org/smal'; did you mean org/small?", "models"),
             (lambda: model_detail("org/smal", **kw), "unknown model 'org/smal'; did you mean org/small?", "models"),
             (lambda: list_models(benchmark="alpah", **kw), "unknown benchmark 'alpah'; did you mean alpha?",
              "benchmarks")]
    for call, says, what in calls:
        with pytest.raises(NotFoundError) as err:
            call()
        assert str(err.value) == f"{says} (indexer.list_{what}() lists them)"
        token = CLI.set(True)
        try:
            with pytest.raises(NotFoundError) as err:
                call()
        finally:
            CLI.reset(token)
        assert str(err.value) == f"{says} (`taskspace {what}` lists them)"
    with pytest.raises(NotFoundError) as err:
        model_detail("beta", **kw)
    assert str(err.value) == ("unknown model 'beta': beta is a benchmark; indexer.list_models(benchmark='beta') lists "
                              "the models measured on it, indexer.find_models(benchmark='beta') ranks the models for it")


def test_a_bad_pipeline_tag_or_switch_filter_is_said_in_a_python_callers_words():
    """`Filters(pipeline_tag=5)` says the type given (`not int`), as `licenses` does, and an empty one what it takes;
    `Filters(open_only="x")` tells a Python caller True or False (an HTTP body is told true or false by the server).
    Before, "pipeline_tag must be a non-empty string" for 5 as for "", and "open_only must be true or false"."""
    from indexer.errors import InputError

    with pytest.raises(InputError) as got:
        Filters(pipeline_tag=5)
    assert str(got.value) == "pipeline_tag must be a pipeline tag (a string) such as text-generation, not int"
    assert got.value.item == "filters.pipeline_tag"
    with pytest.raises(InputError, match="^pipeline_tag must be a non-empty pipeline tag such as text-generation$"):
        Filters(pipeline_tag="  ")
    for name in ("open_only", "exclude_gated"):
        with pytest.raises(InputError) as got:
            Filters(**{name: "x"})
        assert str(got.value) == f"{name} must be True or False, not 'x'" and got.value.item == f"filters.{name}"
