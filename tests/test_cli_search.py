"""`taskspace search` itself (issue 21, item 6): prompts and a benchmark, the filters, `--json`, no match, bad input.

Written against what the command must keep doing whatever its output looks like: exit codes, the JSON's `model`
(and `score`) per result, whether the results are the JSON itself or under `results` (:func:`results`), and which
models the filters let through. Run in process through ``indexer.cli.main`` (the console script's entry point) and
once through the installed script (checked to be this checkout's)."""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

from helpers import HUMANEVAL_0, outcomes, run_cli, write_source, write_table
from indexer.space import space_name

MODELS = ["org/small-mit", "org/big-apache", "org/mid-mit", "org/unknown"]


@pytest.fixture
def index(tmp_path, encoder):
    """An index of 4 models on one benchmark (cli-bench), three of them with Hub metadata (license, size)."""
    from indexer import sync
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    write_table(tmp_path / "src", "cli-bench", outcomes(np.random.default_rng(11), MODELS, 10), 10)
    with open_store() as store, VectorStore.from_settings() as vectors:
        assert Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "src"))]).status == "ok"
        store.upsert_models([{"key": "org/small-mit", "license": "mit", "num_parameters": 1_000_000_000},
                             {"key": "org/big-apache", "license": "apache-2.0", "num_parameters": 70_000_000_000},
                             {"key": "org/mid-mit", "license": "mit", "num_parameters": 8_000_000_000}])
        sync.push_models(store, vectors, store.list_spaces()[0].id)
    return tmp_path


def cli(capsys, *args) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``taskspace search ARGS`` run in this process."""
    return run_cli(capsys, "search", *args)


def results(obj) -> list[dict]:
    """The ranked results of `search --json`: the JSON list itself, or its `results` (a richer answer object)."""
    if isinstance(obj, dict):
        assert "results" in obj, obj
        return obj["results"]
    assert isinstance(obj, list), obj
    return obj


def test_benchmark_search_json_and_filters(index, capsys):
    code, out, _ = cli(capsys, "--benchmark", "cli-bench", "--json")
    assert code == 0
    everyone = results(json.loads(out))
    assert sorted(r["model"] for r in everyone) == sorted(MODELS)
    scores = [r["score"] for r in everyone]
    assert scores == sorted(scores, reverse=True)

    code, out, _ = cli(capsys, "--benchmark", "cli-bench", "--license", "mit", "--json")
    assert code == 0 and sorted(r["model"] for r in results(json.loads(out))) == ["org/mid-mit", "org/small-mit"]
    code, out, _ = cli(capsys, "--benchmark", "cli-bench", "--license", "mit", "--license", "apache-2.0", "--json")
    assert code == 0 and len(results(json.loads(out))) == 3  # repeatable: either license
    code, out, _ = cli(capsys, "--benchmark", "cli-bench", "--max-params", "8e9", "--json")
    assert code == 0 and sorted(r["model"] for r in results(json.loads(out))) == ["org/mid-mit", "org/small-mit"]
    code, out, _ = cli(capsys, "--benchmark", "cli-bench", "--license", "mit", "--max-params", "2e9", "-k", "5",
                       "--json")
    assert code == 0 and [r["model"] for r in results(json.loads(out))] == ["org/small-mit"]
    code, out, _ = cli(capsys, "--benchmark", "cli-bench", "-k", "2", "--json")
    assert code == 0 and [r["model"] for r in results(json.loads(out))] == [r["model"] for r in everyone[:2]]


def test_a_benchmark_search_shows_each_models_observed_accuracy_on_it(index, capsys, monkeypatch):
    """`search --benchmark B` prints, beside the predicted probability (shrunk toward the model's general level, so it
    may differ), the model's observed accuracy on B and of how many prompts; before, only "measured near: yes (10)",
    so 74% beside a measured 57% (the bundled sample's gpt-4o on mmlu_pro/law) read as a contradiction."""
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = cli(capsys, "--benchmark", "cli-bench", "--evidence", "0")  # the table reads it whatever --evidence
    assert code == 0 and "measured on it" in out and "measured near" not in out, out
    rows = {line.split("│")[2].strip(): line for line in out.splitlines() if line.count("│") > 6}
    assert sorted(rows) == sorted(MODELS), out
    code, js, _ = cli(capsys, "--benchmark", "cli-bench", "--json")
    for r in results(json.loads(js)):
        (b,) = [b for b in r["evidence"]["benchmarks"] if b["name"] == "cli-bench"]
        assert f"{round(100 * b['accuracy'])}% of 10" in rows[r["model"]], (rows[r["model"]], b)
    code, out, _ = cli(capsys, "What is item 3?")  # a prompt query keeps its column
    assert code == 0 and "measured near" in out and "measured on it" not in out


def test_compare_mode_lists_every_named_model_and_the_help_says_k_does_not_apply(index, capsys, monkeypatch):
    """`search -m A -m B -m C -k 1`: every named model is ranked (find_models: compare mode lists every listed model)
    and `--json` echoes the -k given as `query.k`; `search -h` says so at `-k` and `-m`. Before, the help said only
    "How many models.", so `query.k` 1 beside three results read as a bug."""
    code, out, _ = cli(capsys, "--benchmark", "cli-bench", "-m", MODELS[0], "-m", MODELS[1], "-m", MODELS[2], "-k", "1",
                       "--json")
    got = json.loads(out)
    assert code == 0 and sorted(r["model"] for r in results(got)) == sorted(MODELS[:3]) and got["query"]["k"] == 1
    monkeypatch.setenv("COLUMNS", "400")
    code, out, _ = cli(capsys, "-h")
    text = " ".join(out.replace("│", " ").split())
    assert code == 0 and "compare mode, -m: every listed model, whatever -k says; --json still echoes it as query.k" \
        in text and "every one is listed, -k does not apply" in text, text


def test_search_text_output_and_no_match(index, capsys):
    code, out, _ = cli(capsys, "--benchmark", "cli-bench", "--license", "mit")
    assert code == 0
    assert "org/small-mit" in out and "org/mid-mit" in out and "org/big-apache" not in out
    # a filter nothing passes: not an error, an empty answer that says so
    code, out, err = cli(capsys, "--benchmark", "cli-bench", "--license", "gpl-3.0")
    assert code == 0 and "no model matches" in (out + err)
    code, out, _ = cli(capsys, "--benchmark", "cli-bench", "--license", "gpl-3.0", "--json")
    assert code == 0 and results(json.loads(out)) == []


def test_search_bad_input_exit_codes(index, capsys):
    code, _, err = cli(capsys, "--benchmark", "no-such-bench")
    assert code == 1 and err.strip().splitlines()[-1].startswith("error:") and "no-such-bench" in err
    code, _, err = cli(capsys, "--benchmark", "cli-bench", "--max-params", "lots")
    assert code == 2 and "--max-params" in err and "lots" in err  # checked while the options are parsed: usage, exit 2
    code, _, err = cli(capsys, "--benchmark", "cli-bench", "--top", "many")
    assert code == 2 and "Invalid value for '--top'" in err  # a usage error (click): exit 2


def test_search_on_an_empty_index_says_to_index(capsys):
    code, _, err = cli(capsys, "What is 2 + 2?")
    assert code == 1 and "taskspace index" in err


def test_prompt_search_through_the_installed_script(index, taskspace_script, encoder):
    """The console script itself: rank for two example prompts (averaged), --json, equal to the library's ranking."""
    from indexer.query import find_models

    prompts = ["What is item 3 of cli-bench about chemistry?", "A question on poetry"]
    res = subprocess.run([taskspace_script, "search", *prompts, "--json"], capture_output=True, text=True,
                         env=dict(os.environ), timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    got = results(json.loads(res.stdout))
    want = find_models(prompts, top=10)
    assert [r["model"] for r in got] == [m.model for m in want]
    assert [r["score"] for r in got] == pytest.approx([m.score for m in want], abs=1e-5)


def test_a_prompt_with_blank_lines_is_one_prompt_in_a_prompts_file(index, capsys, tmp_path):
    """`search -f FILE`: a prompt with blank lines (HumanEval/0) is one prompt in a .jsonl file (one prompt a line, a
    JSON string or an object's "prompt" or "text"), in a .json array and in a text file whose prompts are separated by
    `---` lines; the answer is the library's for that prompt. Before, every file was split at blank lines: HumanEval/0
    became two example prompts, the query their mean. A text file without a `---` line is split at blank lines, as
    before."""
    from indexer import find_models
    from indexer.query import close_cached

    he, other = HUMANEVAL_0.strip(), "What is item 3 of cli-bench about chemistry?"
    try:
        want = {n: json.loads(json.dumps(find_models(p, k=10).to_dict())) for n, p in ((1, [he]), (2, [he, other]))}
    finally:
        close_cached()
    files = {
        "evalarena.jsonl": (json.dumps({"prompt_id": "humaneval/0", "text": HUMANEVAL_0}) + "\n", 1),
        "strings.jsonl": (json.dumps(HUMANEVAL_0) + "\n\n" + json.dumps({"prompt": other}) + "\n", 2),
        "array.json": (json.dumps([{"prompt": HUMANEVAL_0}, other], indent=2), 2),
        "dashes.txt": (HUMANEVAL_0 + "  ---\t\n" + other + "\n", 2),
        "crlf.txt": ((HUMANEVAL_0 + "---\n" + other).replace("\n", "\r\n"), 2),
        "one.txt": (HUMANEVAL_0 + "---\n", 1),  # one prompt with blank lines: end it with a --- line
    }
    for name, (text, n) in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8", newline="")
        code, out, err = cli(capsys, "-f", str(tmp_path / name), "--json")
        assert code == 0, (name, err)
        got = json.loads(out)
        assert got["query"]["prompts"] == n, name
        assert got == want[n], name
    # no --- line: blank lines separate the prompts, as they always did
    (tmp_path / "old.txt").write_text(f"{HUMANEVAL_0}\n{other}\n")
    code, out, err = cli(capsys, "-f", str(tmp_path / "old.txt"), "--json")
    assert code == 0 and json.loads(out)["query"]["prompts"] == 3, err


@pytest.mark.parametrize("name,text,line,says", [
    ("fields.jsonl", '{"prompt": "a"}\n{"question": "b"}\n', 2,
     'the line has no "prompt" or "text" field (its fields: "question"); give the prompt as {"prompt": "..."}'),
    ("blank.jsonl", '"a"\n\n"   "\n', 3, "the line is an empty prompt; write the prompt's text, or remove it"),
    ("text.jsonl", '"a"\nWrite a function\n', 2, "not JSON (Expecting value at column 1); each line of a .jsonl "
     'prompts file is one prompt: a JSON string or an object with a "prompt" or "text" field'),
    ("number.jsonl", '"a"\n42\n', 2, "the line is the number 42, not a prompt"),
    ("null.jsonl", '{"text": null}\n', 1, 'the line\'s "text" is null, not a prompt'),
    ("empty.json", '[\n  "a",\n  {"prompt": ""}\n]\n', 3, 'item 2 of the array\'s "prompt" is an empty prompt'),
    ("object.json", '\n{"prompt": "a"}\n', 2, "the file is an object, not an array; a .json prompts file is a JSON array"),
    ("comma.json", '["a"\n "b"]\n', 2, "not JSON (Expecting ',' delimiter at column 2)"),
    ("nothing.jsonl", "\n\n", None, "no prompt in the file (--file takes a .jsonl file"),
])
def test_a_prompts_file_item_that_is_not_a_prompt_is_an_input_error_naming_file_and_line(name, text, line, says,
                                                                                         tmp_path, capsys):
    """`search -f FILE.jsonl` / `FILE.json`: a line or item that is not a JSON string or an object with a "prompt" or
    "text" string, an empty prompt, or JSON that does not parse, is an input error (exit 1, one line) naming the file
    and line and saying what the file takes; nothing is searched. Before, a .jsonl or .json file was read as text: its
    lines of JSON were searched as prompts."""
    path = tmp_path / name
    path.write_text(text)
    code, out, err = cli(capsys, "-f", str(path))
    where = f"{path}:{line}: " if line else f"{path}: "
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [err.strip()] and err.strip().startswith(f"error: {where}{says}"), err


CODE = [f"Write a Python function number {j} that sorts a list of integers" for j in range(10)]


def test_a_query_far_from_everything_measured_is_said_once_under_the_table(tmp_path, encoder, capsys):
    """A mixed index (cli-bench's questions: four models; a coding benchmark: two of them): a bread recipe, far from
    every indexed prompt, gets one line under the table saying no model in the index was measured on anything like
    it, so the ranking rests on the models' general ability (and `--json` says it in `query.measured_near`); a coding
    task near the coding prompts says how many of the rows were measured near it instead; a cli-bench question,
    near prompts every model was measured on, says neither. Before, each row's "no" alone."""
    from indexer import sync
    from indexer.cli_find import FAR_NOTE
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    rng = np.random.default_rng(4)
    write_table(tmp_path / "a", "cli-bench", outcomes(rng, MODELS, 10), 10)
    write_source(tmp_path / "c", "cli-code", CODE, outcomes(rng, MODELS[:2], len(CODE)))
    with open_store() as store, VectorStore.from_settings() as vectors:
        run = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "a")), SourceSpec(str(tmp_path / "c"))])
        assert run.status == "ok", run.errors
        sync.push_models(store, vectors, store.list_spaces()[0].id)
    far = "Give me a recipe for sourdough bread with a crisp crust"
    code, out, _ = cli(capsys, far)
    assert code == 0 and all(m in out for m in MODELS)
    said = " ".join(out.split())
    assert (f"{FAR_NOTE}: no model in the index was measured on anything like this query (no indexed prompt is near "
            "it), so the ranking rests on the models' general ability alone") in said
    assert said.count(FAR_NOTE) == 1 and "models were measured near this query" not in said
    code, out, _ = cli(capsys, far, "--json")
    assert json.loads(out)["query"]["measured_near"] == {"results": 0, "of": 4, "any_model": False}
    code, out, _ = cli(capsys, "Write a Python function that sorts a list of integers")
    said = " ".join(out.split())
    assert code == 0 and FAR_NOTE not in said
    assert "2 of these 4 models were measured near this query; the others' rank rests on their general ability" in said
    code, out, _ = cli(capsys, "Write a Python function that sorts a list of integers", "-m", MODELS[2], "-m", MODELS[3])
    assert "none of these 2 models was measured near this query (other indexed models were)" in " ".join(out.split())
    code, out, _ = cli(capsys, "Question 3 on chemistry: what is item 3 of cli-bench?")
    assert code == 0 and FAR_NOTE not in out and "of these" not in out and "none of these" not in out


def test_the_measured_near_line_says_one_other_model_in_the_singular():
    """The line under the table counts the results measured near the query: with one of them not, it says "the
    other's rank rests on its general ability" (before, "5 of these 6 models were measured near this query; the
    others' rank rests on their general ability" for a single other), several "the others'"; none said when all were."""
    from indexer.cli_find import measured_near_note

    def said(results, of):
        return measured_near_note({"kind": "prompts", "measured_near": {"results": results, "of": of, "any_model": True}})

    assert said(5, 6) == ("5 of these 6 models were measured near this query; the other's rank rests on its general "
                          "ability")
    assert said(1, 4).endswith("1 of these 4 models was measured near this query; the others' rank rests on their "
                               "general ability")
    assert said(6, 6) is None
    # one result not measured near (compare mode with one model, -k 1): "this model", not "none of these 1 models"
    assert said(0, 1) == ("this model was not measured near this query (other indexed models were), so its ranking "
                          "rests on its general ability")
    assert said(0, 2).startswith("none of these 2 models was measured near this query")


def test_a_list_none_of_whose_models_was_measured_there_names_the_option_that_lists_those_that_were():
    """None of the ranked models measured near the query (other indexed models were): the note says which option
    lists those instead, `--rank lcb` for a prompt ranked by probability, `--measured-on B` for a benchmark; nothing
    in compare mode (the user's models) or already ranked by lcb. Before, only why, on a 32,823-model home where
    ten single-benchmark truthfulqa/mmlu rows topped a Python coding prompt."""
    from indexer.cli_find import measured_near_note

    mn = {"results": 0, "of": 10, "any_model": True}
    said = measured_near_note({"kind": "prompt", "rank": "probability", "measured_near": mn})
    assert said.endswith("; --rank lcb (the lower end of the 90% interval) favours the models measured near it"), said
    said = measured_near_note({"kind": "benchmark", "benchmark": "humaneval", "rank": "probability", "measured_near": mn})
    assert said.endswith("; --measured-on humaneval lists only the models measured on it"), said
    for q in ({"kind": "prompt", "rank": "lcb"}, {"kind": "prompt", "rank": "probability", "models": ["a", "b"]}):
        assert measured_near_note({**q, "measured_near": mn}).endswith("rests on their general ability"), q


def test_an_eps_that_drops_every_component_is_refused_by_index_and_a_space_built_with_one_by_search(tmp_path, encoder,
                                                                                                     capsys, monkeypatch):
    """`--eps` is `evaluate`'s option; an index's eps is TASKSPACE_EPS. One past sqrt(stored prompts x embedded texts a
    prompt) drops every component of every model whatever the prompts (each embedded text is of length 1), so every
    model's score is the same for every task. `taskspace index` under it is a usage error (exit 2) naming the variable,
    the bound and what to do, after the sources' results are stored and before any space is built; a space built with
    one (by an older taskspace) is refused by search with the same reason and how to replace it. Before, both went on
    without a word: the search ranked models by their base rate alone, each interval 0%-100%."""
    from indexer.config import reset_settings
    from indexer.store.sql import open_store

    write_table(tmp_path / "src", "cli-bench", outcomes(np.random.default_rng(11), MODELS, 10), 10)
    monkeypatch.setenv("TASKSPACE_EPS", "1e9")
    reset_settings()
    code, _, err = run_cli(capsys, "index", "--source", str(tmp_path / "src"))
    assert code == 2, err
    said = " ".join(err.split())
    assert said.startswith("error: TASKSPACE_EPS=1e+09: eps 1e+09 drops every component of every model, whatever the "
                           "prompts: the 10 stored prompts' embeddings (each of length 1, a question and its options in "
                           "each row) have a largest singular value of at most 4.472"), said
    assert "set TASKSPACE_EPS within it (or unset it)" in said, said
    with open_store() as store:
        assert store.list_spaces() == [] and store.prompt_count() == 10  # the results stored, no space
        space = store.get_or_create_space(encoder.id, encoder.dim, 1.0, 1e9, method="paper", params={})
    monkeypatch.delenv("TASKSPACE_EPS")
    reset_settings()
    code, _, err = cli(capsys, "--space", str(space.id), "a question")
    assert code == 2, err
    said = " ".join(err.split())
    assert (f"error: space {space_name(space)}: eps 1e+09 drops every component of every model, whatever the prompts: "
            "the 10 stored prompts' embeddings (each of length 1) have a largest singular value of at most 3.162" in said), said
    assert f"`taskspace spaces drop {space_name(space)} --force`" in said, said
    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "empty"))  # a home of no prompt yet: nothing to bound
    monkeypatch.setenv("TASKSPACE_EPS", "1e9")
    reset_settings()
    code, _, err = run_cli(capsys, "index")
    assert code == 0, err


def test_search_eps_is_a_usage_error_saying_eps_is_how_a_space_is_built(capsys):
    """`taskspace search --eps 1e9` (and `--lambda`, on search or models): no such option, exit 2, as before, now saying
    where eps is set (TASKSPACE_EPS for `taskspace index`, a space per value) and where values are compared
    (`evaluate --eps`); before, "No such option: --eps (Possible options: --help, --top)" alone."""
    code, _, err = cli(capsys, "--eps", "1e9", "a question")
    said = " ".join(err.split())
    assert code == 2 and said.startswith("error: taskspace search: No such option: --eps"), said
    assert said.endswith("; eps is how a space is built, not a query's: set TASKSPACE_EPS for `taskspace index` (a "
                         "space per value; --space picks one), or compare values with `taskspace evaluate DATA --eps "
                         "X`"), said
    code, _, err = run_cli(capsys, "models", "--lambda", "3")
    assert code == 2 and "lambda is how a space is built, not a query's: set TASKSPACE_LAMBDA" in err, err
