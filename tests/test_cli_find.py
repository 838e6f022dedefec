"""The command line as users expect it: usage errors are one line with exit 2, --version, -h, examples and choices in
the help, no reference to files outside the repo; search/models/benchmarks/model print exactly the library's answer
(--json) or a table with column titles, and nothing but the answer on stdout."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import TOPICS, index_sources, outcomes

ROOT = Path(__file__).resolve().parents[1]


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True, input=stdin,
                          env=dict(os.environ, HF_HUB_OFFLINE="1", COLUMNS="200"), cwd=ROOT)


@pytest.mark.parametrize("args,says", [
    (["search", "-k", "abc", "x"], "Invalid value for '--top'"),
    (["search", "-k", "0", "x"], "greater than or equal to 1"),
    (["nosuchcmd"], "No such command 'nosuchcmd'"),
    (["ingest"], "Missing argument"),
    # the choice named after the option, without the validator's "Value error, " (before: "'--rank': Value error, ...")
    (["search", "--rank", "best", "x"], "Invalid value for '--rank': 'best' is not one of 'probability', 'lcb'"),
    (["evaluate", "x", "--split", "nope"], "Invalid value for '--split': 'nope' is not one of 'in-sample', 'oos', "
                                           "'coverage', 'all', 'both'"),
    (["evaluate", "x", "--queries", "nope"], "Invalid value for '--queries': 'nope' is not one of 'full', 'stem'"),
    (["search", "--no-such-option"], "No such option"),
])
def test_usage_errors_are_one_line_with_exit_2(args, says):
    res = run(*args)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: taskspace") and says in lines[0], res.stderr
    assert res.stdout == ""


def test_version_help_examples_and_choices():
    from indexer import __version__

    res = run("--version")
    assert res.returncode == 0 and res.stdout.strip() == f"taskspace {__version__}"
    top = run("-h")
    assert top.returncode == 0 and "Examples" in top.stdout and "search" in top.stdout
    for cmd in ("search", "models", "benchmarks", "model", "evaluate"):
        res = run(cmd, "-h")
        assert res.returncode == 0 and "Example" in res.stdout, cmd
    assert "probability|lcb" in run("search", "-h").stdout
    assert "in-sample|oos|coverage|all|both" in run("evaluate", "-h").stdout


def test_split_choices_are_the_evaluate_splits():
    from indexer.cli import Split
    from indexer.evaluate import SPLIT_CHOICES, SPLITS

    assert tuple(s.value for s in Split) == SPLIT_CHOICES and set(SPLITS) == set(SPLIT_CHOICES)


def test_help_names_no_file_outside_the_repo():
    from indexer.cli import app
    import typer.main

    group = typer.main.get_command(app)
    texts = [run("-h").stdout]
    for name, cmd in group.commands.items():
        texts.append(run(name, "-h").stdout)
        for sub in getattr(cmd, "commands", {}):
            texts.append(run(name, sub, "-h").stdout)
    blob = re.sub(r"\s*│\s*", " ", "\n".join(texts))
    assert "DESIGN.md" not in blob and "CONVENTIONS.md" not in blob
    for path in set(re.findall(r"\b((?:docs|indexer|tests|benchmarks)/[\w./-]+\.(?:md|toml|py))", blob)):
        assert (ROOT / path).is_file(), path


@pytest.fixture
def indexed(tmp_path, encoder):
    rng = np.random.default_rng(11)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(12)]
    beta = [f"Write a Python function number {j} that sorts a list" for j in range(10)]
    store, vectors = index_sources(encoder, [
        (tmp_path / "a", "alpha", alpha, outcomes(rng, ["org/a", "Qwen--Qwen1.5-7B", "gpt-4o"], 12)),
        (tmp_path / "b", "beta", beta, outcomes(rng, ["org/a", "org/c"], 10))])
    store.upsert_models([{"key": "org/a", "license": "mit", "num_parameters": 8_000_000_000}])
    from indexer import sync

    sync.push_models(store, vectors, store.list_spaces()[0].id)
    vectors.close()  # the subprocesses open the folder
    yield store
    store.close()


def _library(fn, *args, **kw):
    from indexer.query import close_cached

    try:
        return fn(*args, **kw)
    finally:
        close_cached()  # release the folder for the next subprocess


def test_search_json_is_the_library_answer_and_the_table_has_titles(indexed, tmp_path):
    from indexer import Filters, find_models

    res = run("search", "Write a Python function that sorts numbers", "-k", "3", "--license", "mit", "--json")
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""  # logs at WARNING by default: nothing to say
    want = _library(find_models, "Write a Python function that sorts numbers", k=3, filters=Filters(licenses=["mit"]))
    assert json.loads(res.stdout) == json.loads(json.dumps(want.to_dict()))
    text = run("search", "Write a Python function that sorts numbers", "-k", "3", "--max-params", "8B")
    assert text.returncode == 0 and text.stderr == ""
    for title in ("model", "P(success)", "90% interval", "measured near", "params", "license"):
        assert title in text.stdout
    assert "org/a" in text.stdout and "--max-params excluded 3 models (3 without the metadata it needs)" in text.stdout
    examples = tmp_path / "examples.txt"
    examples.write_text("Write a Python function that sorts numbers\n\nQuestion on poetry: what is a sonnet?\n")
    res = run("search", "-f", str(examples), "--json", "-m", "org/a", "-m", "Qwen--Qwen1.5-7B")
    got = json.loads(res.stdout)
    assert got["query"]["kind"] == "prompts" and got["query"]["prompts"] == 2
    assert sorted(r["model"] for r in got["results"]) == ["Qwen/Qwen1.5-7B", "org/a"]
    import uuid

    verbose = run("-v", "search", f"a prompt never encoded before {uuid.uuid4()}", "-k", "1")
    assert " INFO " in verbose.stderr  # -v: INFO logs, on stderr only
    bad = run("search", "x", "--max-params", "8 bytes")  # a usage error naming the option (exit 1 before)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "error: taskspace search: Invalid value for '--max-params': '8 bytes' is not a parameter count; use a number "
        "with K, M, B or T, e.g. 8B or 770M (see `taskspace search -h`)"]
    missing = run("search", "-b", "alpah")
    assert missing.returncode == 1 and "did you mean alpha" in missing.stderr


def test_browse_commands(indexed):
    from indexer import list_benchmarks, list_models, model_detail
    from indexer.browse import models_page

    res = run("models", "--json", "--benchmark", "beta")
    page = json.loads(res.stdout)
    assert page == _library(models_page, benchmark="beta")
    assert page["models"] == _library(list_models, benchmark="beta") and page["total"] == len(page["models"])
    res = run("benchmarks", "--json")
    assert json.loads(res.stdout) == _library(list_benchmarks)
    res = run("model", "Qwen--Qwen1.5-7B", "--json")
    assert json.loads(res.stdout) == _library(model_detail, "Qwen/Qwen1.5-7B")
    text = run("models")
    assert text.returncode == 0 and all(t in text.stdout for t in ("model", "params", "license", "accuracy"))
    text = run("models", "--offset", "1000")  # past the end: how many match, not "run taskspace index"
    assert text.returncode == 0 and "taskspace index" not in text.stdout
    assert "4 indexed models match these options; --offset 1000 skips them all (the last one is at --offset 3)" \
        in text.stdout, text.stdout
    # past the end of a filter's matches (before: "drop a filter or lower --offset", as if the filter left none)
    text = run("models", "--benchmark", "beta", "--offset", "2")
    assert text.returncode == 0 and "2 indexed models match these options; --offset 2 skips them all" in text.stdout
    assert "drop a filter" not in text.stdout
    # a filter that needs metadata says how many models it drops for lack of it (3 of the 4 have no parameter count)
    text = run("models", "--max-params", "80B", "--license", "mit")
    assert text.returncode == 0 and "org/a" in text.stdout
    assert "--max-params: 3 models with no parameter count are not listed" in text.stdout, text.stdout
    assert "--license: 3 models with no license are not listed" in text.stdout
    text = run("models", "--max-params", "1B")  # none left: said, with why
    assert "no indexed model matches these options" in text.stdout and "--max-params: 3 models" in text.stdout
    text = run("benchmarks")
    assert "models measured" in text.stdout and "alpha" in text.stdout
    text = run("model", "org/a")
    assert "Observed" in text.stdout and "Strongest relative" in text.stdout
    res = run("model", "org/aa")
    assert res.returncode == 1 and res.stderr.strip() == (
        "error: unknown model 'org/aa'; did you mean org/a, org/c? (`taskspace models` lists them)")


def test_a_benchmark_name_given_as_a_model_says_it_is_a_benchmark(indexed):
    """`taskspace model beta` (a benchmark's name): exit 1, one line saying it is a benchmark and what lists or ranks
    the models on it; before, "unknown model 'beta'" with close model names (on a home of metabench_openllm's rows,
    `model truthfulqa` suggested five anonymous "truthfulqa-B:r42.." rows)."""
    res = run("model", "beta")
    assert res.returncode == 1 and res.stderr.strip() == (
        "error: unknown model 'beta': beta is a benchmark; `taskspace models -b beta` lists the models measured on it, "
        "`taskspace search -b beta` ranks the models for it"), res.stderr


def test_a_benchmark_name_with_a_space_given_as_a_model_is_quoted_in_the_commands_it_names():
    """The commands named for a benchmark's name given as a model's are runnable as written: `taskspace models -b
    'mmlu_pro/computer science'`; before, unquoted, the shell split the name in two."""
    from types import SimpleNamespace

    from indexer.browse import _a_benchmark
    from indexer.errors import CLI, NotFoundError

    store = SimpleNamespace(list_benchmarks=lambda: [SimpleNamespace(name="mmlu_pro/computer science")])
    token = CLI.set(True)  # as in a CLI command (a Python caller is named the calls)
    try:
        err = _a_benchmark(store, "mmlu_pro/computer science", NotFoundError("unknown model"))
    finally:
        CLI.reset(token)
    assert "`taskspace models -b 'mmlu_pro/computer science'` lists the models measured on it, `taskspace search -b " \
           "'mmlu_pro/computer science'` ranks the models for it" in str(err), err


def test_an_answer_without_calibrated_signal_says_so(capsys):
    """The table shows "-" for the interval and a line saying why, instead of a zero-width interval."""
    from indexer.cli_find import _print_result
    from indexer.find import Coverage, Evidence, FindResult, ModelResult

    def answer(signal: bool, low: float, high: float) -> FindResult:
        r = ModelResult("org/m", "org/m", False, [], 0.1, 0.1, 0.47, low, high, 0.01, Coverage(), Evidence(), {})
        space = {"name": "s", "id": 1, "encoder": "e", "method": "auto-mc", "dim": 4, "calibrated": True,
                 "signal": signal}
        query = {"kind": "prompt", "rank": "probability", "prefer_smaller": 0.0}
        return FindResult(query, space, [r], {}, {})

    _print_result(answer(False, float("nan"), float("nan")))
    out = capsys.readouterr().out
    assert "no calibrated signal" in out and "47%" in out and "47%-47%" not in out
    _print_result(answer(True, 0.40, 0.55))
    out = capsys.readouterr().out
    assert "no calibrated signal" not in out and "40%-55%" in out



def test_an_answer_from_a_space_without_a_calibration_map_says_its_probability_is_not_calibrated(capsys):
    """A space an older taskspace indexed before calibration maps were stored (found by an upgraded home, `calibrated`
    false in the JSON): the table's P(success) is the predictor's `(1 + score) / 2`, and a line under it says so, naming
    the space and `taskspace index`; the search page shows the same line (indexer/web/app.js, NOT_CALIBRATED). Before,
    77% and "-" with no word, read as a calibrated probability whose interval was missing."""
    from indexer.cli_find import NOT_CALIBRATED, _print_result
    from indexer.find import Coverage, Evidence, FindResult, ModelResult

    def answer(calibrated: bool) -> FindResult:
        r = ModelResult("org/m", "org/m", False, [], 0.54, 0.54, 0.77, float("nan"), float("nan"), float("nan"),
                        Coverage(), Evidence(), {})
        space = {"name": "all-minilm-l6-v2-1dd55a44ac", "id": 1, "encoder": "e", "method": "auto", "dim": 385,
                 "calibrated": calibrated, "signal": True}
        return FindResult({"kind": "prompt", "rank": "probability", "prefer_smaller": 0.0}, space, [r], {}, {})

    _print_result(answer(False))
    out = capsys.readouterr().out
    assert "77%" in out and ("not calibrated: space all-minilm-l6-v2-1dd55a44ac stores no calibration map (indexed by a "
                             "taskspace from before one was stored), so P(success) is (1 + score) / 2") in " ".join(out.split())
    assert "`taskspace index`" in out
    _print_result(answer(True))
    assert "not calibrated" not in capsys.readouterr().out
    js = (Path(__file__).resolve().parents[1] / "indexer" / "web" / "app.js").read_text(encoding="utf-8")
    said = NOT_CALIBRATED.split("{space}")
    assert "calibrated === false" in js and all(part.split(" (")[0] in js for part in said)


def test_measured_near_unknown_says_that_pulling_the_records_again_can_tell_it(capsys):
    """A pulled home whose records do not say which prompts each model was measured on (records published, or a home
    pulled, by a taskspace from before the patterns' observed prompts, schema 0012): the line under the table says so and
    that pulling again (republished if need be) gives it, with the publisher's order and probabilities; the search page
    says the same (indexer/web/app.js, NEAR_UNKNOWN). Before, "(an index pulled from a published dataset holds none)",
    though a pulled index knows it from the records, and a home pulled by an older taskspace got it by pulling again."""
    from indexer.cli_find import NEAR_UNKNOWN, _print_result
    from indexer.find import Coverage, Evidence, FindResult, ModelResult

    r = ModelResult("org/m", "org/m", False, [], 0.54, 0.54, 0.74, 0.63, 0.84, 0.01, Coverage(None, None, None),
                    Evidence(), {})
    space = {"name": "s", "id": 1, "encoder": "e", "method": "auto-mc", "dim": 4, "calibrated": True, "signal": True}
    _print_result(FindResult({"kind": "prompt", "rank": "probability", "prefer_smaller": 0.0}, space, [r], {}, {}))
    out = " ".join(capsys.readouterr().out.split())
    assert "measured near unknown: this index cannot tell" in out and "published dataset holds none" not in out
    assert ("its pulled records do not say which prompts each model was measured on (records published, or pulled, by a "
            "taskspace from before they did): pulling them again") in out
    js = " ".join((Path(__file__).resolve().parents[1] / "indexer" / "web" / "app.js").read_text(encoding="utf-8").split())
    assert all(part in js.replace('" + "', "") for part in (NEAR_UNKNOWN[:60], NEAR_UNKNOWN[-60:]))

def test_an_empty_answer_says_why(capsys):
    """No result with filters: the filters. No result without any: SQL holds no model vector yet, so `taskspace
    index` (an index that lost what SQL holds is a StoreError of find_models, exit 3, saying `reindex`:
    test_find.py::test_an_index_that_lost_its_models_is_a_store_error_not_an_empty_answer)."""
    from indexer.cli_find import _print_result
    from indexer.find import FindResult

    space = {"name": "s", "id": 1, "encoder": "e", "method": "auto-mc", "dim": 4, "calibrated": True, "signal": True}
    # and after a pass that indexed nothing (no source configured) it names the way to give one: before, "(run
    # `taskspace index`)", the command just run
    for filters, words in (({"licenses": ["mit"]}, "check the filters"),
                           ({}, "no model indexed yet: `taskspace index --source SPEC` ingests results and indexes them")):
        query = {"kind": "prompt", "prompts": 1, "rank": "probability", "prefer_smaller": 0.0, "filters": filters,
                 "models": None}
        _print_result(FindResult(query, space, [], {}, {}))
        assert words in capsys.readouterr().out


def test_compare_mode_text_names_the_listed_models_left_unranked(capsys):
    """`search -m A -m B` whose answer leaves a listed model out (a filter removed it, or it has no vector): the table
    is followed by a line naming it, as `--json` (`query.unranked`) and the page do; before, the text dropped it
    silently (only "filter open_only excluded 1 model(s)", not which)."""
    from indexer.cli_find import _print_result
    from indexer.find import Coverage, Evidence, FindResult, ModelResult

    space = {"name": "s", "id": 1, "encoder": "e", "method": "auto-mc", "dim": 4, "calibrated": True, "signal": True}
    r = ModelResult("org/m", "org/m", False, [], 0.1, 0.1, 0.47, 0.4, 0.55, 0.01, Coverage(), Evidence(), {})
    query = {"kind": "prompt", "prompts": 1, "rank": "probability", "prefer_smaller": 0.0,
             "filters": {"open_only": True}, "models": ["org/m", "gpt-4o"], "unranked": ["gpt-4o"]}
    for results in ([r], []):
        _print_result(FindResult(query, space, results, {"open_only": 1}, {"open_only": 1}))
        out = capsys.readouterr().out
        assert "not ranked (removed by a filter, or without a vector in this space): gpt-4o" in out
    _print_result(FindResult({**query, "unranked": []}, space, [r], {}, {}))
    assert "not ranked" not in capsys.readouterr().out


def test_compare_mode_without_a_filter_says_an_unranked_model_has_no_vector_and_what_solves_it(capsys):
    """`search PROMPT -m org/new` of a model whose results were ingested but not yet indexed, no filter given: the
    lines under the answer say it has no vector in this space and that `taskspace index` solves it. Before, "no model
    matches (check the filters, or run `taskspace index`)" and "not ranked (removed by a filter, or without a vector in
    this space)", naming filters the user never gave (found walking the CLI)."""
    from indexer.cli_find import _print_result
    from indexer.find import FindResult

    space = {"name": "s", "id": 1, "encoder": "e", "method": "auto-mc", "dim": 4, "calibrated": True, "signal": True}
    query = {"kind": "prompt", "prompts": 1, "rank": "probability", "prefer_smaller": 0.0, "filters": {},
             "models": ["org/new"], "unranked": ["org/new"]}
    _print_result(FindResult(query, space, [], {}, {}))
    out = " ".join(capsys.readouterr().out.split())
    assert "filter" not in out, out
    assert ("not ranked (no vector in this space: `taskspace index` solves the models whose results were ingested "
            "since its last pass): org/new") in out, out

def test_an_index_out_of_step_with_sql_exits_3_as_a_storage_error(indexed):
    """The vector index holding vectors of another dimension than SQL's space (copied from another home, built with
    another encoder): `search` and `model` say `taskspace reindex --space NAME` rebuilds it and exit 3, a storage
    error as for a missing index (README: 1 input, 3 storage); before, exit 1, as if the prompt were bad input (and
    `model`: "query vector has N dimensions ...; embed the query with the space's encoder"). The library's error is
    still a DimensionError."""
    import numpy as np

    from indexer.errors import DimensionError, StoreError
    from indexer.space import space_name
    from indexer.store.vectors import KINDS, Point, VectorStore

    name = space_name(indexed.list_spaces()[0])
    with VectorStore.from_settings() as vectors:
        points = {kind: [Point(h.key, np.ones(8), h.payload) for h in vectors.scan(name, kind)] for kind in KINDS}
        for kind in KINDS:
            vectors.rebuild(name, kind, points[kind], dim=8)
    for args in (["search", "What is item 3 of alpha?"], ["search", "-b", "alpha", "--json"], ["model", "org/a"]):
        res = run(*args)
        assert res.returncode == 3, (args, res.returncode, res.stderr)
        assert f"taskspace reindex --space {name}" in res.stderr and res.stderr.count("\n") == 1, res.stderr
    from indexer.find import find_models

    with pytest.raises(DimensionError) as err:
        _library(find_models, "What is item 3 of alpha?")
    assert isinstance(err.value, StoreError) and err.value.exit_code == 3


def test_answer_options_taken_from_neighbours_are_said_under_the_table(capsys):
    """A question asked without its answer options (the default method takes those of the nearest indexed questions):
    the table is followed by a line saying so, as the page's notes and `--json` (`query.options_filled`) say; before,
    the text said nothing of it."""
    from indexer.cli_find import _print_result
    from indexer.find import Coverage, Evidence, FindResult, ModelResult

    space = {"name": "s", "id": 1, "encoder": "e", "method": "auto-mc", "dim": 4, "calibrated": True, "signal": True}
    r = ModelResult("org/m", "org/m", False, [], 0.1, 0.1, 0.47, 0.4, 0.55, 0.01, Coverage(), Evidence(), {})
    for filled in (True, False):
        query = {"kind": "prompt", "prompts": 1, "options_filled": filled, "rank": "probability",
                 "prefer_smaller": 0.0, "filters": {}, "models": None}
        _print_result(FindResult(query, space, [r], {}, {}))
        said = "answer options taken from the nearest indexed questions" in capsys.readouterr().out
        assert said is filled


def test_a_prompt_cut_by_the_encoder_is_said_under_the_table(capsys):
    """A prompt longer than the encoder reads (`query.truncated`): a line under the table says which one was cut and
    at how many word pieces, as the page's notes and `--json` do; before, nothing said that only its beginning counted."""
    from indexer.cli_find import _print_result
    from indexer.find import Coverage, Evidence, FindResult, ModelResult

    space = {"name": "s", "id": 1, "encoder": "e", "method": "auto-mc", "dim": 4, "calibrated": True, "signal": True}
    r = ModelResult("org/m", "org/m", False, [], 0.1, 0.1, 0.47, 0.4, 0.55, 0.01, Coverage(), Evidence(), {})
    for n, cut, says in ((1, [0], "the prompt is longer than the encoder reads (256 word pieces)"),
                         (3, [1], "prompt 2 of 3 is longer than the encoder reads (256 word pieces)"),
                         (3, [0, 2], "prompts 1, 3 of 3 are longer"), (2, [], None)):
        query = {"kind": "prompts", "prompts": n, "options_filled": False, "truncated": cut,
                 "max_tokens": 256 if cut else None, "rank": "probability", "prefer_smaller": 0.0, "filters": {},
                 "models": None}
        _print_result(FindResult(query, space, [r], {}, {}))
        out = capsys.readouterr().out
        assert (says in out) if says else "encoder reads" not in out, out


@pytest.mark.parametrize("args,says", [
    ([], "none was given"), (["-m", "org/a"], "none was given"),
    (["x", "-b", "alpha"], "not PROMPT and --benchmark together"),
    (["-f", "-", "-b", "alpha"], "not --file and --benchmark together"),
])
def test_search_without_a_task_or_with_two_is_a_usage_error_in_the_commands_terms(args, says):
    """`taskspace search` with no task (no PROMPT, --file or --benchmark; `-m` alone) or with a prompt and a
    benchmark: a usage error (exit 2, one line) naming the command's own options, before any store is opened; before,
    the library's input error (exit 1) "give exactly one of prompts, a benchmark name or a query vector", a vector
    the command line cannot take."""
    res = run("search", *args, stdin="")
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], res.stderr
    assert "PROMPT" in lines[0] and "--file" in lines[0] and "--benchmark" in lines[0] and "vector" not in lines[0]
    assert res.stdout == ""


def test_a_prompts_file_that_cannot_be_read_is_named_once_with_what_to_do(tmp_path):
    """`search --file`: a missing file, a folder and a file that is not UTF-8 each get one line naming the path once
    and saying what the option takes (before: "cannot read the prompts file: [Errno 2] No such file or directory:
    '/x'", the path twice and Python's words)."""
    from indexer.cli_find import read_prompts_file
    from indexer.errors import InputError

    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    for path, says in ((tmp_path / "none.txt", "no such prompts file"), (tmp_path, "is a folder; --file takes"),
                       (bad, "the prompts file is not UTF-8 text (invalid continuation byte: byte 0xe9, the file's "
                             "byte 3); save it as UTF-8")):
        with pytest.raises(InputError) as err:
            read_prompts_file(path)
        where = f"{path}:1" if path == bad else f"{path}"
        assert str(err.value).startswith(f"{where}: {says}") and str(err.value).count(str(path)) == 1, str(err.value)


def test_a_prompts_file_that_is_a_device_is_refused_before_it_is_read(tmp_path):
    """`search --file /dev/zero` (or /dev/urandom, a disk): refused at once, naming the path and what --file takes
    (`-` for stdin); a named pipe (`--file <(cmd)`) is still read. Before, the device was read to its end: /dev/zero
    has none, so the command ran until memory ran out (found walking the CLI), and /dev/null was "no prompt in the
    file"."""
    import threading

    from indexer.cli_find import read_prompts_file
    from indexer.errors import InputError

    for dev in ("/dev/null", "/dev/zero"):  # (/dev/null first: it ends, so without the check this test fails, not hangs)
        with pytest.raises(InputError) as err:
            read_prompts_file(Path(dev))
        assert str(err.value).startswith(f"{dev}: a device, not a file; --file takes a .jsonl file"), err.value
        assert "or -, stdin" in str(err.value), err.value
    fifo = tmp_path / "prompts.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text("What is two plus two?\n"))
    writer.start()
    assert read_prompts_file(fifo) == ["What is two plus two?"]
    writer.join(5)

def test_a_prompts_file_whose_text_no_query_takes_is_named_by_file_and_line(tmp_path):
    """`search -f FILE` whose prompt holds a NUL or a lone surrogate (a `\\u0000` or unpaired `\\ud800` escape of a
    .jsonl or .json file, a NUL byte in a text file), and a file saved as UTF-16: an input error naming the file and
    the line, saying what to do. Before, the query's "prompts[1]: prompt text holds a NUL character" (the 0-based
    index of a list the user never wrote), and a UTF-16 file was "invalid start byte at byte 0" or, without a byte
    order mark, a NUL error for prompts[0]."""
    from indexer.cli_find import read_prompts_file
    from indexer.errors import InputError

    cases = {"esc.jsonl": (b'"fine"\n"half \\ud800 a pair"\n', 2, "the line: prompt text is not valid UTF-8 (a lone "
                                                                  "surrogate); a \\ud800-\\udfff escape needs its pair"),
             "nul.json": (b'[\n"fine",\n{"prompt": "a\\u0000b"}\n]', 3, "item 2 of the array's \"prompt\": prompt "
                                                                         "text holds a NUL character; remove its"),
             "zw.jsonl": ('"fine"\n{"prompt": "\\u200b\\ufeff"}\n'.encode(), 2, "the line's \"prompt\": empty prompt text "
                         "(only invisible characters: zero-width or format characters, a byte order mark, controls); "
                         "write the prompt's text, or remove it"),
             "nul.txt": (b"fine\n---\nbad\x00byte\n", 3, "holds a NUL character"),
             "u16.txt": ("hello\n---\nworld\n".encode("utf-16-le"), 1, "holds a NUL character (a binary file, or UTF-16"),
             "bom16.txt": ("hello\n---\nworld\n".encode("utf-16"), None, "the file is UTF-16 text (it starts with a "
                                                                           "UTF-16 byte order mark), not UTF-8")}
    for name, (data, line, says) in cases.items():
        f = tmp_path / name
        f.write_bytes(data)
        with pytest.raises(InputError) as err:
            read_prompts_file(f)
        assert err.value.file == str(f) and err.value.line == line, (name, str(err.value))
        assert says in str(err.value), (name, str(err.value))
    blank = tmp_path / "blank.txt"  # a text block of zero-width characters only is an empty block: dropped, as "" is
    blank.write_text("fine\n---\n\u200b\ufeff\n---\nalso fine\n")
    assert read_prompts_file(blank) == ["fine", "also fine"]


def test_a_byte_order_mark_is_not_part_of_the_first_prompt(tmp_path, monkeypatch):
    """`search -f FILE` (and `-f -`): a file saved with a byte order mark (Notepad, Excel) gives the same prompts as
    without it; before, the first prompt began with U+FEFF (another embedding, another prompt hash)."""
    import io

    from indexer.cli_find import read_prompts_file

    f = tmp_path / "prompts.txt"
    f.write_bytes(b"\xef\xbb\xbfFirst prompt\r\n\r\nSecond prompt\r\n")
    assert read_prompts_file(f) == ["First prompt", "Second prompt"]
    monkeypatch.setattr("sys.stdin", io.StringIO("\ufeffFirst prompt\n\nSecond prompt\n"))
    assert read_prompts_file(Path("-")) == ["First prompt", "Second prompt"]


@pytest.mark.parametrize("args,says", [
    (["search", "x", "--min-params", "abc"], "Invalid value for '--min-params': 'abc' is not a parameter count"),
    (["search", "x", "--max-params", "0"], "Invalid value for '--max-params': '0' is not a positive parameter count"),
    (["models", "--max-params", "8Q"], "Invalid value for '--max-params': '8Q' is not a parameter count"),
    (["search", "x", "--prefer-smaller", "1000"], "Invalid value for '--prefer-smaller': 1000 is not a number from 0 "
                                                  "to 100"),
    (["search", "x", "--min-evidence", "abc"], "Invalid value for '--min-evidence'"),
])
def test_numeric_filter_values_are_usage_errors_naming_the_option(args, says):
    """Every numeric filter option of `search` and `models` refuses a bad value as a usage error (exit 2, one line)
    naming the option and the value, as `--top` and `--min-evidence` did; before, `--min-params abc` / `--max-params`
    and an out-of-range `--prefer-smaller` were input errors (exit 1) naming `filters.min_params` / `prefer_smaller`."""
    test_usage_errors_are_one_line_with_exit_2(args, says)


def test_a_page_of_models_says_out_of_how_many(indexed):
    """`taskspace models --limit N` / `--offset N` titles the table with the page's size out of all the models the
    options list (before: "3 indexed models" of 25); the whole list keeps its plain title."""
    from indexer.browse import count_models, list_models

    assert _library(count_models) == len(_library(list_models)) == 4
    assert _library(count_models, benchmark="beta") == len(_library(list_models, benchmark="beta")) == 2
    for args, title in ((["--limit", "2"], "2 of 4 indexed models"),
                        (["--offset", "1", "--limit", "2"], "2 of 4 indexed models (#2-3)"),
                        (["--offset", "3"], "1 of 4 indexed models (#4)"),
                        (["--benchmark", "beta", "--limit", "1"], "1 of 2 indexed models"),
                        (["--limit", "10"], "4 indexed models"),
                        ([], "4 indexed models")):
        res = run("models", *args)
        assert res.returncode == 0 and res.stdout.splitlines()[0].strip() == title, (args, res.stdout, res.stderr)


def test_models_limit_below_one_is_a_usage_error_and_a_populated_home_never_says_nothing_is_indexed(indexed):
    """`taskspace models --limit 0` is a usage error (exit 2, one line naming `--limit`), as `GET /v1/models?limit=0`
    is a 422; before, it listed an empty page and said "no model is indexed yet (run `taskspace index`)" on a home
    that holds models. An empty page of a populated home says the options left none."""
    for bad in ("0", "-1"):
        res = run("models", "--limit", bad)
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1 and "'--limit'" in lines[0], res.stderr
        assert "greater than or equal to 1" in lines[0] and res.stdout == ""
    for args, said in ((["--offset", "4"], "4 indexed models match these options; --offset 4 skips them all"),
                       (["--offset", "4", "--limit", "1"], "--offset 4 skips them all"),
                       (["--license", "nosuch"], "no indexed model matches these options")):
        res = run("models", *args)
        assert res.returncode == 0 and "no model is indexed yet" not in res.stdout, (args, res.stdout)
        assert said in res.stdout, (args, res.stdout)


def test_models_takes_the_filters_of_the_http_model_list(indexed):
    """`taskspace models` takes every filter `GET /v1/models` takes, under `taskspace search`'s option names and with
    the library's semantics (`--min-params`, `--pipeline-tag`, `--exclude-gated`, `--min-evidence`, `--measured-on`);
    before, only `--license`, `--max-params` and `--open-only`: "No such option: --min-params" (exit 2)."""
    from indexer import Filters
    from indexer.browse import list_models

    res = run("models", "--json", "--min-params", "1B", "--min-evidence", "15", "--measured-on", "beta", "--exclude-gated")
    assert res.returncode == 0, res.stderr
    want = _library(list_models, filters=Filters(min_params="1B", min_evidence=15, benchmark="beta", exclude_gated=True))
    assert json.loads(res.stdout)["models"] == want and [m["model"] for m in want] == ["org/a"]
    res = run("models", "--min-evidence", "11")  # org/a (22 prompts) and the three alpha models (12); org/c has 10
    assert res.returncode == 0 and "org/c" not in res.stdout and "org/a" in res.stdout, res.stdout
    res = run("models", "--pipeline-tag", "text-generation", "--min-params", "1B")  # none has a tag: said, with why
    assert res.returncode == 0 and "no indexed model matches these options" in res.stdout, res.stdout
    assert "--pipeline-tag: 4 models with no pipeline tag are not listed" in res.stdout
    assert "--min-params: 3 models with no parameter count are not listed" in res.stdout
    res = run("models", "--min-params", "10B", "--max-params", "1B")
    assert res.returncode == 2 and "see `taskspace models -h`" in res.stderr, res.stderr


def test_a_terminal_narrower_than_a_table_gets_the_whole_table(indexed):
    """On a terminal narrower than a table (COLUMNS=40; `TTY_COMPATIBLE=1` makes rich treat the pipe as one), every
    cell and the title are printed whole, the lines left to the terminal to wrap, as piped output is; before, rich
    cropped the table to the terminal: `search`'s rank column came out empty, the columns on the right (interval,
    measured near, params, license) and the end of the title were cut off, with no mark that anything was missing."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", COLUMNS="40", TTY_COMPATIBLE="1")

    def shown(*args):
        res = subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True, env=env,
                             cwd=ROOT)
        assert res.returncode == 0, res.stderr
        return re.sub(r"\x1b\[[0-9;]*m", "", res.stdout)

    text = shown("search", "Write a Python function that sorts numbers", "-k", "4")
    assert "Models for the prompt" in text
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]
    assert [r[0] for r in rows] == ["1", "2", "3", "4"], text
    assert all(len(r) == 7 and r[1] and "%" in r[2] and r[4] for r in rows), text
    assert ["org/a", "8.0B", "mit"] in [[r[1], r[5], r[6]] for r in rows], text
    text = shown("models")
    assert "4 indexed models" in text and "Qwen/Qwen1.5-7B" in text
    assert any(line.startswith("│ org/a") and "8.0B" in line and "mit" in line and "22" in line
               for line in text.splitlines()), text


def test_an_empty_stdin_is_named_as_stdin_not_as_a_file_named_dash():
    """`taskspace search -f -` with nothing on stdin: the input error (exit 1, one line, before any store is opened)
    says no prompt came on stdin and how `-f -` reads it; before, "-: no prompt in the file (--file takes a .jsonl
    file ...)", a file named "-" and the formats of files stdin is never read as."""
    res = run("search", "-f", "-", stdin="\n \n")
    assert res.returncode == 1 and res.stdout == "", res.stderr
    assert res.stderr.strip().splitlines() == [
        "error: no prompt on stdin (--file - reads text: prompts separated by a line of three dashes, ---, or without "
        "one by blank lines); pipe the prompts into it"]


@pytest.mark.parametrize("args,says", [
    (["search", " "], "Invalid value for 'PROMPT': the 1st: empty prompt text"),
    (["search", "a task", ""], "Invalid value for 'PROMPT': the 2nd: empty prompt text"),
    (["search", "x", "-m", "org/a", "-m", " "], "Invalid value for '--model' / '-m': the 2nd: ' ' is empty"),
    (["search", "-b", ""], "Invalid value for '--benchmark' / '-b': '' is empty"),
    (["search", "-b", " "], "Invalid value for '--benchmark' / '-b': ' ' is empty"),
    (["search", "x", "--pipeline-tag", ""], "Invalid value for '--pipeline-tag': '' is empty"),
    (["search", "x", "--measured-on", " "], "Invalid value for '--measured-on': ' ' is empty"),
    (["search", "x", "--license", ""], "Invalid value for '--license': the 1st: '' is empty"),
    (["models", "--benchmark", ""], "Invalid value for '--benchmark' / '-b': '' is empty"),
    (["models", "--license", "mit", "--license", " "], "Invalid value for '--license': the 2nd: ' ' is empty"),
    (["search", "x", "--license", ","], "Invalid value for '--license': the 1st: ',' names no license (commas, "
                                        "spaces or invisible characters alone); give a license name such as mit"),
    (["models", "--license", "mit", "--license", " , "], "Invalid value for '--license': the 2nd: ' , ' names no "
                                                         "license"),
    (["model", " "], "Invalid value for 'ID': ' ' is empty"),
    (["models", "--license", "\u200b"], "Invalid value for '--license': the 1st: '\\u200b' names no license (commas, "
                                        "spaces or invisible characters alone)"),
    (["search", "x", "--measured-on", "\u200b"], "Invalid value for '--measured-on': '\\u200b' holds only invisible "
                                                 "characters"),
    (["model", "\ufeff"], "Invalid value for 'ID': '\\ufeff' holds only invisible characters"),
])
def test_a_blank_text_value_is_a_usage_error_naming_the_option_and_which(args, says):
    """A blank PROMPT, `--model`, `--benchmark`, `--measured-on`, `--pipeline-tag` or `--license` of `search` (and
    `models`; a `--license` of commas and spaces alone, too: before, the library's "licenses[0] names no license",
    exit 1, naming no option; a name of invisible characters alone, too: before, the library's "benchmark must have
    visible text", exit 1, for `--measured-on`, and "unknown model" for a model) is a usage error (exit 2, one line) naming the option and, for a repeatable one, which value, before any
    store is opened (no home here); before, the library's input error (exit 1) naming its own argument:
    "prompts[0]: a prompt must be a non-empty string" (0-based), "models: ...", "filters.pipeline_tag: ...", and
    `-b ""` said no task was given."""
    test_usage_errors_are_one_line_with_exit_2(args, says)


def test_min_params_above_max_params_is_a_usage_error_naming_both_options():
    """`search --min-params 70B --max-params 8B` (a range no model can be in) is a usage error naming both options
    (exit 2, one line, before any store is opened: no home here); before, the library's input error (exit 1) "filters:
    min_params 70.0B is above max_params 8.0B", naming neither option. An equal pair is a range, not an error."""
    res = run("search", "x", "--min-params", "70B", "--max-params", "8B")
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and res.stdout == "", res.stderr
    assert lines[0].startswith("error: --min-params 70B is above --max-params 8B") and "lower --min-params" in lines[0]
    res = run("search", "x", "--min-params", "8B", "--max-params", "8b", "--benchmark", "b")  # the range passes
    assert "--min-params" not in res.stderr and "give the task as PROMPT" in res.stderr, res.stderr


def _alpha_home(tmp_path, encoder, seed: int) -> None:
    """The CLI's home (this module's): benchmark alpha, 12 prompts, 3 models (org/a, org/b, org/c), indexed."""
    rng = np.random.default_rng(seed)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(12)]
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", alpha,
                                              outcomes(rng, ["org/a", "org/b", "org/c"], 12))])
    vectors.close()
    store.close()


def test_lcb_on_a_space_without_intervals_says_it_ranked_by_probability(tmp_path, encoder, monkeypatch):
    """`search --rank lcb` on a space whose method keeps no posterior (`paper`: no model has an interval, so lcb ranks
    as probability, README) says under the table that it ranked by probability and why; before, "ranked by lower
    bound" above a column of "-" intervals, an order no lower bound made. The order is the probability order."""
    from indexer.config import reset_settings

    monkeypatch.setenv("TASKSPACE_METHOD", "paper")
    reset_settings()
    _alpha_home(tmp_path, encoder, 11)
    prompt = "What is item 3 of alpha about chemistry?"
    res = run("search", prompt, "--rank", "lcb")
    said = " ".join(res.stdout.split())
    assert res.returncode == 0 and "ranked by lower bound" not in said, res.stdout + res.stderr
    assert "ranked by probability (--rank lcb: no model here has an interval" in said, res.stdout
    by_lcb, by_p = (json.loads(run("search", prompt, "--rank", r, "--json").stdout)["results"] for r in ("lcb", "probability"))
    assert [r["model"] for r in by_lcb] == [r["model"] for r in by_p] and all(r["interval"] is None for r in by_lcb)
    res = run("search", prompt, "--rank", "probability")
    assert "ranked by probability" in res.stdout and "--rank lcb" not in res.stdout


def test_a_prompt_that_starts_with_a_dash_is_told_to_go_after_double_dash():
    """`taskspace search "-1 times -1 is?"`: click takes the prompt for options ("No such option: -1"); the one-line
    usage error (exit 2) now says that a text starting with '-' goes after `--`, with the command to type; before, only
    "No such option: -1", naming no prompt. A real unknown option gets no such hint."""
    res = run("search", "-1 times -1 is?", "-k", "1")
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and res.stdout == "", res.stderr
    assert "No such option: -1" in lines[0]
    assert lines[0].endswith("a text that starts with '-' goes after `--`: taskspace search -- \"-1 times -1 is?\"")
    res = run("search", "-x", "task")
    assert res.returncode == 2 and "goes after `--`" not in res.stderr, res.stderr


def test_the_notes_under_the_table_name_the_options_that_excluded_models(indexed):
    """The notes under `search`'s table name each filter by the option that set it: `-b alpha --measured-on beta`
    says "--measured-on excluded 2 model(s)"; before, "filter benchmark excluded 2 model(s)", read as the `-b`
    (--benchmark) query having excluded them; likewise --license, --open-only, --min-evidence for the library's
    licenses, open_only, min_evidence."""
    res = run("search", "-b", "alpha", "--measured-on", "beta", "--open-only", "--min-evidence", "1")
    assert res.returncode == 0, res.stderr
    notes = [line for line in res.stdout.splitlines() if "excluded" in line]
    assert "--measured-on excluded 2 models" in notes, res.stdout
    assert any(n.startswith("--open-only excluded 1 model") for n in notes), res.stdout
    assert not any("filter " in n or "benchmark excluded" in n for n in notes), notes


def _index_names(tmp_path, encoder, names: list[str], bench: str, metadata: dict) -> list[str]:
    """An index of one benchmark ``bench`` (12 prompts, returned) measuring the models ``names``, one of them given Hub
    ``metadata`` (a licence) pushed to its point; the stores closed for the command-line runs."""
    from indexer import sync

    rng = np.random.default_rng(11)
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(12)]
    store, vectors = index_sources(encoder, [(tmp_path / "a", bench, alpha, outcomes(rng, names, 12))])
    store.upsert_models([metadata])
    sync.push_models(store, vectors, store.list_spaces()[0].id)
    vectors.close()
    store.close()
    return alpha


def test_names_with_brackets_or_colons_are_printed_as_written(tmp_path, encoder):
    """The tables of `search`, `models`, `model` and `benchmarks` print model, benchmark and licence names as the
    sources wrote them: `org/model[v2]`, `[bold]z[/bold]`, `org/x:fire:` and `bench[v1]` are text, not rich markup or
    emoji codes, and `x[/]y` prints; before, `org/model[v2]` was shown as `org/model`, `[bold]z[/bold]` as a bold
    `z`, `:fire:` as an emoji, and `taskspace models` (or any table holding `x[/]y`) failed with a MarkupError
    traceback."""
    names = ["org/model[v2]", "x[/]y", "[bold]z[/bold]", "org/x:fire:"]
    alpha = _index_names(tmp_path, encoder, names, "bench[v1]", {"key": "org/model[v2]", "license": "[i]mine[/i]"})
    outputs = [run("models"), run("search", alpha[0], *[a for n in names for a in ("-m", n)]),
               run("search", "-b", "bench[v1]"), run("benchmarks"), run("model", "org/model[v2]")]
    for res in outputs:
        assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    for res in outputs[:3]:
        assert all(n in res.stdout for n in names), res.stdout
        assert "[i]mine[/i]" in res.stdout, res.stdout
    assert "Models for benchmark bench[v1]" in outputs[2].stdout and "bench[v1]" in outputs[3].stdout
    assert "bench[v1]" in outputs[4].stdout and "🔥" not in "".join(r.stdout for r in outputs)


def test_names_with_escape_sequences_cannot_drive_the_terminal(tmp_path, encoder):
    """A model or benchmark name holding a bidi override (`org/\u202eevil`, `bench\u202ered`: the readers refuse
    control characters since dc9501b, not format characters) and a licence holding an escape sequence (Hub metadata:
    `lic\x1b[2J`) are printed by `search`, `models`, `model` and `benchmarks` with those characters escaped (`\x1b`,
    `\u202e`), the rest as written; before, the raw ESC reached the terminal (a colour for the rest of the screen, a
    window title set, OSC 52 a clipboard write) and U+202E reversed what followed on the line."""
    names = ["org/m\u202e]0;pwned", "org/plain", "org/\u202eevil"]
    alpha = _index_names(tmp_path, encoder, names, "bench\u202ered", {"key": "org/plain", "license": "lic\x1b[2J"})
    outputs = [run("models"), run("search", alpha[0], *[a for n in names for a in ("-m", n)]),
               run("search", "-b", "bench\u202ered"), run("benchmarks"), run("model", names[0]),
               run("model", "org/plain")]
    for res in outputs:
        assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
        assert "\x1b" not in res.stdout and "\x07" not in res.stdout and "\u202e" not in res.stdout, res.stdout
    for res in outputs[:3]:
        assert "org/m\\u202e]0;pwned" in res.stdout and "org/\\u202eevil" in res.stdout, res.stdout
        assert "lic\\x1b[2J" in res.stdout, res.stdout
    assert "bench\\u202ered" in outputs[3].stdout and "org/m\\u202e]0;pwned" in outputs[4].stdout


def test_search_takes_the_space_option_the_docs_name(indexed):
    """`taskspace search --space NAME` searches that space (its index name, SQL id or encoder name, as `check`,
    `reindex` and `publish` take it, and as docs/RELIABILITY.md said search did) and prints the library's answer for
    `find_models(space=NAME)`; a name that is no space is a usage error naming `--space` and the spaces (exit 2).
    Before, search had no such option ("No such option: --space"), so a home with several spaces (an `auto` index
    beside the `auto-mc` one) could be searched only by changing TASKSPACE_METHOD."""
    from indexer import find_models

    (space,) = indexed.list_spaces()
    for name in ("all-MiniLM-L6-v2", str(space.id)):
        res = run("search", "Write a Python function that sorts numbers", "-k", "2", "--space", name, "--json")
        assert res.returncode == 0, res.stderr
        want = _library(find_models, "Write a Python function that sorts numbers", k=2, space=name)
        assert json.loads(res.stdout) == json.loads(json.dumps(want.to_dict()))
    bad = run("search", "x", "--space", "2")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert bad.stderr.startswith("error: --space '2' is not a known space; spaces in SQL: ")
    assert "--space" in run("search", "-h").stdout


def test_a_gzipped_prompts_file_is_read_as_the_file_it_holds(indexed, tmp_path):
    """`search -f prompts.jsonl.gz` (a table source's prompts file as the shared data sets ship it; README: "lines of a
    table source's prompts.jsonl can be given as they are") reads the .jsonl it holds, and answers as the plain file
    does; a gzipped text file is text; a damaged one is one line naming it (exit 1). Before, each was "the prompts
    file is not UTF-8 text (invalid start byte at byte 1); save it as UTF-8"."""
    import gzip

    from indexer.cli_find import read_prompts_file
    from indexer.errors import InputError

    lines = [json.dumps({"prompt_id": "p1", "benchmark": "beta", "text": "Write a Python function that sorts numbers"}),
             json.dumps({"prompt_id": "p2", "benchmark": "alpha", "text": "Question on poetry: what is a sonnet?"})]
    plain, packed = tmp_path / "prompts.jsonl", tmp_path / "prompts.jsonl.gz"
    plain.write_text("\n".join(lines) + "\n")
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_prompts_file(packed) == read_prompts_file(plain) == [json.loads(x)["text"] for x in lines]
    text = tmp_path / "prompts.txt.gz"
    text.write_bytes(gzip.compress(b"First prompt\n---\nSecond prompt\n"))
    assert read_prompts_file(text) == ["First prompt", "Second prompt"]
    got, want = (run("search", "-f", str(p), "-k", "2", "--json") for p in (packed, plain))
    assert got.returncode == 0 and json.loads(got.stdout) == json.loads(want.stdout), got.stderr
    damaged = tmp_path / "cut.jsonl.gz"
    damaged.write_bytes(gzip.compress(plain.read_bytes())[:20])
    with pytest.raises(InputError) as err:
        read_prompts_file(damaged)
    assert str(err.value).startswith(f"{damaged}: the prompts file is gzip-compressed but cannot be read")
    res = run("search", "-f", str(damaged))
    assert res.returncode == 1 and len(res.stderr.strip().splitlines()) == 1 and "gzip-compressed" in res.stderr


def test_the_help_of_prefer_smaller_gives_its_whole_range():
    """`search -h` gives `--prefer-smaller`'s range as it is checked, 0 to 100 (`--prefer-smaller 101` is a usage
    error); before, it showed "ALPHA [x>=0.0]", a range without the upper bound."""
    help_text = re.sub(r"[│\s]+", " ", run("search", "-h").stdout)
    assert "ALPHA from 0 to 100" in help_text and "x>=0.0" not in help_text
    res = run("search", "x", "--prefer-smaller", "101")
    assert res.returncode == 2 and "101 is not a number from 0 to 100" in res.stderr


def test_prefer_smaller_says_the_size_is_charged_on_the_score(indexed):
    """`search --prefer-smaller 0.1`: the caption says what the order is, the score (which the probability rises with)
    less 0.1 x log10(parameters), as the README's "Size trade-off" computes it; before, "ranked by probability - 0.1 x
    log10(parameters)", which is not what is ranked by (the size is charged on the score, not on the probability)."""
    text = re.sub(r"\s+", " ", run("search", "Write a Python function that sorts numbers", "--prefer-smaller", "0.1").stdout)
    assert "ranked by score - 0.1 x log10(parameters) (the probability rises with the score)" in text, text
    text = re.sub(r"\s+", " ", run("search", "Write a Python function that sorts numbers").stdout)
    assert "ranked by probability" in text and "log10" not in text, text


def test_the_score_prefer_smaller_charges_is_said_as_the_calibration_maps_it(indexed):
    """`search -h` and the README say what the score `--prefer-smaller` charges is with the default method: the
    logit the calibration maps to the probability, p = sigmoid(bend(score + c)) with one constant c per query (checked
    here on the answer), not the probability's own logit; before, both said "the logit of the probability", which on
    the sample plus evalarena_code differs from the score by 0.14 to 0.40 within one query (a Fibonacci prompt:
    gpt-4-turbo-2024-04-09+cot's score 1.69, its 82.6%'s logit 1.56)."""
    from indexer.find import find_models
    from indexer.query import _shared_stores, _space_state

    res = _library(lambda: (find_models("Write a Python function that sorts a list", k=10),
                            _space_state(_shared_stores()[0])[1][0]))
    answer, cal = res
    rs = np.array([r.rank_score for r in answer.results])
    z = np.log([r.probability / (1 - r.probability) for r in answer.results])
    if cal.knots is not None:  # the bend's inverse: straight lines through its knots, slope 1 beyond them
        xs, L = (np.asarray(k, dtype=np.float64) for k in cal.knots)
        z = np.where(z < L[0], xs[0] + (z - L[0]), np.where(z > L[-1], xs[-1] + (z - L[-1]), np.interp(z, L, xs)))
    assert np.ptp(z - rs) < 1e-3, z - rs  # one constant per query
    help_text = re.sub(r"[│\s]+", " ", run("search", "-h").stdout)
    readme = re.sub(r"\s+", " ", (Path(__file__).resolve().parents[1] / "README.md").read_text())
    for text in (help_text, readme):
        assert "the logit of the probability" not in text
        assert "sigmoid(bend(score + c))" in text


def test_an_empty_index_says_which_database_it_looked_in(tmp_path, monkeypatch):
    """`taskspace search` (and `models`, `model`) on a home where nothing is indexed says where it looked: the
    database (its URL, password masked), so a search against another home than the one indexed (a typo in
    TASKSPACE_HOME) shows it; before, only "the index is empty: run `taskspace index` first", which in that home would
    index into the wrong folder. (A home that does not exist is said to be so, and made by none of them:
    test_a_read_only_command_on_a_home_that_does_not_exist_creates_nothing.)"""
    home = tmp_path / "typo-home"
    monkeypatch.setenv("TASKSPACE_HOME", str(home))
    for args in (("search", "x"), ("models",), ("model", "org/a")):
        res = run(*args)
        assert res.returncode == 1 and res.stderr.strip() == (
            "error: the index is empty: run `taskspace index` first (the database "
            f"sqlite:///{home}/taskspace.db does not exist: nothing is indexed in TASKSPACE_HOME={home}; "
            "`taskspace index --source SPEC` ingests results and "
            "indexes them, a plain `taskspace index` the sources `taskspace sources list` shows)"), res.stderr


def test_a_percentage_halfway_between_two_rounds_up_as_on_the_page(tmp_path, encoder):
    """The tables round a percentage halfway between two whole ones up, as the search page does (JavaScript's
    Math.round): 1 of 8 is "13%", 5 of 8 "63%" in `taskspace model`, `models` and the "measured on it" column of
    `search -b`. Before, Python's round-half-to-even: "12%" and "62%" where the page said 13% and 63% (on
    evalarena_code, codellama/CodeLlama-13b-hf's 324 of 800 on cruxeval-output: "40%" in `taskspace model`, "41%" on
    its model page)."""
    texts = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(8)]
    outs = {"org/low": [1, 0, 0, 0, 0, 0, 0, 0], "org/high": [1, 1, 1, 1, 1, 0, 0, 0], "org/mid": [1, 0] * 4}
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", texts, outs)])
    vectors.close()
    store.close()
    for model, want in (("org/low", "13%"), ("org/high", "63%")):
        res = run("model", model)
        assert res.returncode == 0, res.stderr
        assert re.search(rf"alpha\s*\S\s*{want}\s*\S\s*8\b", res.stdout), res.stdout
        listed = next(line for line in run("models").stdout.splitlines() if model in line)
        assert re.search(rf"\b8\s*\S\s*{want}\s", listed), listed
        ranked = next(line for line in run("search", "-b", "alpha").stdout.splitlines() if model in line)
        assert f"{want} of 8" in ranked, ranked


def test_the_models_accuracy_column_says_it_is_the_mean_of_the_benchmarks(tmp_path, encoder):
    """`taskspace models`' accuracy is the mean of a model's benchmarks' observed accuracies, each benchmark weighing
    alike (the payload's `accuracy`, GET /v1/models' too), and its column says so: "accuracy (mean of benchmarks)".
    Before, the column was "accuracy" beside "prompts": on evalarena_code, microsoft/phi-2 read "2142 prompts, 42%",
    though it got 38% of those 2,142 prompts right (32% and 33% of 800, 46% of 164, 55% of 378)."""
    alpha = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(12)]
    beta = [f"Write a Python function number {j} that sorts a list" for j in range(4)]
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", alpha, {"org/a": [0] * 12, "org/b": [1] * 12}),
                                             (tmp_path / "b", "beta", beta, {"org/a": [1] * 4, "org/b": [0] * 4})])
    vectors.close()
    store.close()
    res = run("models")
    assert res.returncode == 0, res.stderr
    assert "accuracy (mean of benchmarks)" in res.stdout, res.stdout
    row = next(line for line in res.stdout.splitlines() if "org/a" in line)  # 4 of 16 prompts; 0% and 100%: 50%
    assert re.search(r"\b16\s*\S\s*50%", row), row
    listed = json.loads(run("models", "--json").stdout)["models"]
    assert [m["accuracy"] for m in listed] == [0.5, 0.5]
    assert "mean of its benchmarks' observed accuracies" in run("models", "--help").stdout


def test_a_parameter_count_is_shown_to_three_significant_digits_as_the_hub_does(tmp_path, encoder):
    """A model's size in `taskspace models`, `search` and `model` has three significant digits, as the Hub shows it
    (Meta-Llama-3-8B's safetensors count 8,030,261,248: "8.03B"; a round 70e9 stays "70.0B"), so a model that
    `--max-params 8B` leaves out does not read as 8B. Before, one decimal: "8.0B" for a model `--max-params 8B`
    excluded."""
    texts = [f"Question {j} on {TOPICS[j % len(TOPICS)]}: what is item {j} of alpha?" for j in range(8)]
    outs = {"meta-llama/Meta-Llama-3-8B": [1, 0] * 4, "org/big": [1, 1, 0, 1] * 2}
    store, vectors = index_sources(encoder, [(tmp_path / "a", "alpha", texts, outs)])
    store.upsert_models([{"key": "meta-llama/Meta-Llama-3-8B", "num_parameters": 8_030_261_248},
                         {"key": "org/big", "num_parameters": 70_000_000_000}])
    from indexer import sync

    sync.push_models(store, vectors, store.list_spaces()[0].id)
    vectors.close()
    store.close()
    for res in (run("models"), run("search", texts[0]), run("search", "-b", "alpha")):
        assert res.returncode == 0, res.stderr
        rows = {m: line for line in res.stdout.splitlines() for m in outs if m in line}
        assert "8.03B" in rows["meta-llama/Meta-Llama-3-8B"] and "70.0B" in rows["org/big"], res.stdout
    assert "parameters 8.03B," in run("model", "meta-llama/Meta-Llama-3-8B").stdout
    assert "Meta-Llama-3-8B" not in run("models", "--max-params", "8B").stdout


def test_after_a_pass_with_no_source_the_listings_say_how_to_give_one():
    """A fresh home, `taskspace index` with no source configured (it says so), then `models`, `benchmarks` and
    `search`: each names `taskspace index --source SPEC`; before, "(run `taskspace index`)", the command just run.
    Each says it in the empty index's error (exit 1), as on a home never indexed (`benchmarks` too since fee836ce:
    before, an empty list, exit 0)."""
    assert run("index").returncode == 0
    for args in (["models"], ["benchmarks"], ["search", "What is 2+2?"]):
        res = run(*args)
        said = res.stderr
        assert res.returncode == 1, (args, res.stderr)
        assert "`taskspace index --source SPEC` ingests results and indexes them" in said, (args, said)
        assert "(run `taskspace index`)" not in said


def test_models_json_is_the_http_page_with_its_total_and_next_offset(indexed):
    """`taskspace models --json` prints the answer of `GET /v1/models` (`indexer.browse.models_page`): the page's models
    with `offset`, `limit`, `total` (what the page is out of), `next_offset` (null on the last page) and, per filter
    needing metadata, how many models lack it under the query parameter's name; before, a bare list, so a script
    paging with `--offset/--limit` could not tell how many there were or when it was done, as an HTTP client can."""
    every = json.loads(run("models", "--json").stdout)
    n = every["total"]
    assert n == len(every["models"]) >= 3 and every["next_offset"] is None and every["limit"] is None, every
    first = json.loads(run("models", "--json", "--limit", "2").stdout)
    assert first["models"] == every["models"][:2] and first["total"] == n and first["next_offset"] == 2, first
    last = json.loads(run("models", "--json", "--offset", "2", "--limit", "1000").stdout)
    assert last["models"] == every["models"][2:] and last["next_offset"] is None and last["offset"] == 2, last
    lacking = json.loads(run("models", "--json", "--max-params", "80B", "--license", "mit").stdout)
    assert set(lacking["missing_metadata"]) == {"license", "max_params"}, lacking
    # what a user reads says so: `models -h` gives the object and `limit` null without --limit (before: "Print JSON.",
    # "At most this many"), as the README's row does
    import typer.main

    from indexer.cli import app

    params = {p.name: p for p in typer.main.get_command(app).commands["models"].params}
    assert all(k in params["as_json"].help for k in every) and "null without --limit" in params["as_json"].help
    assert "default: every model" in params["limit"].help
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert "(without `--limit`: every model, `limit` null)" in readme
    assert lacking["missing_metadata"]["max_params"] >= 1, lacking


@pytest.mark.parametrize("args,says", [
    (["search", "x", "-k", "3", "-k", "5"], "--top was given 2 values (3, 5)"),
    (["search", "x", "--top", "3", "-k", "5", "-k", "3"], "--top was given 2 values (3, 5)"),
    (["search", "--benchmark", "a", "-b", "b"], "--benchmark was given 2 values ('a', 'b')"),
    (["search", "--file", "a.txt", "-f", "b.txt"], "--file was given 2 values ('a.txt', 'b.txt')"),
    (["search", "x", "--max-params", "8B", "--max-params", "70B"], "--max-params was given 2 values ('8B', '70B')"),
    (["search", "x", "--min-params", "1B", "--min-params", "2B"], "--min-params was given 2 values ('1B', '2B')"),
    (["search", "x", "--pipeline-tag", "a", "--pipeline-tag", "b"], "--pipeline-tag was given 2 values ('a', 'b')"),
    (["search", "x", "--min-evidence", "1", "--min-evidence", "2"], "--min-evidence was given 2 values (1, 2)"),
    (["search", "x", "--measured-on", "a", "--measured-on", "b"], "--measured-on was given 2 values ('a', 'b')"),
    (["search", "x", "--prefer-smaller", "0.1", "--prefer-smaller", "0.2"],
     "--prefer-smaller was given 2 values (0.1, 0.2)"),
    (["search", "x", "--rank", "lcb", "--rank", "probability"], "--rank was given 2 values ('lcb', 'probability')"),
    (["search", "x", "--evidence", "1", "--evidence", "2"], "--evidence was given 2 values (1, 2)"),
    (["search", "x", "--space", "a", "--space", "b"], "--space was given 2 values ('a', 'b')"),
    (["models", "-n", "2", "--limit", "3"], "--limit was given 2 values (2, 3)"),
    (["models", "--offset", "0", "--offset", "5"], "--offset was given 2 values (0, 5)"),
    (["models", "-b", "a", "--benchmark", "b"], "--benchmark was given 2 values ('a', 'b')"),
    (["models", "--max-params", "8B", "--max-params", "9B"], "--max-params was given 2 values ('8B', '9B')"),
    (["models", "--min-params", "8B", "--min-params", "9B"], "--min-params was given 2 values ('8B', '9B')"),
    (["models", "--pipeline-tag", "a", "--pipeline-tag", "b"], "--pipeline-tag was given 2 values ('a', 'b')"),
    (["models", "--min-evidence", "1", "--min-evidence", "2"], "--min-evidence was given 2 values (1, 2)"),
    (["models", "--measured-on", "a", "--measured-on", "b"], "--measured-on was given 2 values ('a', 'b')"),
    (["models", "--space", "a", "--space", "b"], "--space was given 2 values ('a', 'b')"),
    (["model", "org/m", "--space", "a", "--space", "b"], "--space was given 2 values ('a', 'b')"),
])
def test_search_models_and_model_refuse_one_option_given_two_values(args, says):
    """A single-valued option of `search`, `models` or `model` given twice with two values (`search x -k 3 -k 5`) is a
    usage error naming the option and both values (exit 2, one line, before any store is opened: no home here), as
    `index`, `ingest` and `sources add` refuse theirs; before, the last value was silently read."""
    res = run(*args)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and res.stdout == "", (res.returncode, res.stdout, res.stderr)
    assert lines[0].startswith("error: ") and says in lines[0] and "takes one value; give it once" in lines[0], lines


def test_the_same_value_twice_is_one_value_in_search_models_and_model(tmp_path, encoder):
    """The same value given twice (`-k 2 -k 2`, `--space S --space S`) is that value, as in `index`; and an option
    left out keeps its default (-k 10, --rank probability)."""
    _alpha_home(tmp_path, encoder, 5)
    prompt = "What is item 3 of alpha about chemistry?"
    answer = json.loads(run("search", prompt, "-k", "2", "--top", "2", "--rank", "lcb", "--rank", "lcb", "--json").stdout)
    assert len(answer["results"]) == 2 and answer["query"]["k"] == 2 and answer["query"]["rank"] == "lcb", answer
    space = answer["space"]["name"]
    default = json.loads(run("search", prompt, "--space", space, "--space", space, "--json").stdout)
    assert default["query"]["k"] == 10 and default["query"]["rank"] == "probability" and len(default["results"]) == 3
    listed = json.loads(run("models", "-n", "1", "--limit", "1", "--offset", "1", "--offset", "1", "--json").stdout)
    assert listed["limit"] == 1 and listed["offset"] == 1 and len(listed["models"]) == 1, listed
    res = run("model", "org/a", "--space", space, "--space", space, "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["model"] == "org/a", res.stderr


@pytest.mark.parametrize("env", [{}, {"FORCE_COLOR": "1", "COLUMNS": "300"}, {"COLUMNS": "40"}],
                         ids=["piped", "terminal", "narrow"])
def test_a_long_table_is_richs_table_to_the_byte_with_one_row_laid_out(monkeypatch, capsys, env):
    """`taskspace models` lists every model (its documented default), which on a home of 32,823 models took 21 s, all
    but 5 of them in rich laying the table out cell by cell. Now rich draws the table with its first row (title,
    borders, bold header, caption, as piped or in a terminal) and every body line is that row's as rich draws it: the
    same output to the byte (names with brackets and colons, right-aligned numbers, a caption), with one row laid out
    by rich whatever the table's length (32,823 rows: 0.9 s)."""
    from rich.console import Console
    from rich.table import Table

    from indexer.cli_find import _table

    for k, v in env.items():
        monkeypatch.setenv(k, v)
    columns = [("model", "left"), ("kind", "left"), ("params", "right"), ("prompts", "right")]
    rows = [[f"org/m{i}[v2]" + ":fire:" * (i % 3), "Hub" if i % 2 else "name", "-" if i % 5 else f"{i}B", str(i * 7)]
            for i in range(800)]
    title, caption = "800 indexed models", "--max-params: 3 models with no parameter count are not listed"

    def rich_whole() -> str:  # the table as rich draws it, every row laid out (how _table printed it before)
        t = Table(title=title, caption=caption, show_lines=False, header_style="bold")
        for i, (name, justify) in enumerate(columns):
            t.add_column(name, justify=justify, no_wrap=True, min_width=max([len(name), *(len(r[i]) for r in rows)]))
        for r in rows:
            t.add_row(*r)
        plain = {"soft_wrap": False, "markup": False, "emoji": False}
        console = Console(**plain)
        need = sum(c.min_width + 3 for c in t.columns) + 1
        console = console if console.width >= need else Console(**plain, width=need)
        with console.capture() as cap:
            console.print(t)
        return cap.get()

    want = rich_whole()
    laid = []
    real = Table.add_row
    monkeypatch.setattr(Table, "add_row", lambda self, *cells, **kw: laid.append(1) or real(self, *cells, **kw))
    _table(title, columns, rows, caption)
    assert capsys.readouterr().out == want and len(laid) == 1
    assert ("\x1b[1m" in want) == ("FORCE_COLOR" in env) and "org/m799[v2]:fire:" in want


def test_search_says_which_page_of_how_many_and_where_the_last_is(tmp_path, encoder):
    """A page of a longer ranking is titled with its ranks out of how many (`Models for the prompt (#2-3 of 3)`, as
    `taskspace models` titles a page), a search that fits one page is not; past the last model it says how many the
    ranking holds and the last one's offset. Before, neither said how many models there were."""
    _alpha_home(tmp_path, encoder, 5)
    prompt = "What is item 3 of alpha about chemistry?"
    assert json.loads(run("search", prompt, "--json").stdout)["query"]["total"] == 3
    res = run("search", prompt, "-k", "2", "--offset", "1")
    assert res.returncode == 0 and "Models for the prompt (#2-3 of 3)" in res.stdout, res.stdout + res.stderr
    assert "Models for the prompt (#1 of 3)" in run("search", prompt, "-k", "1").stdout
    assert " of 3)" not in run("search", prompt).stdout  # one page: no page in the title
    res = run("search", prompt, "--offset", "9")
    assert res.returncode == 0 and ("the ranking holds 3 models and --offset 9 skips every ranked model (the last "
                                    "one is at --offset 2)") in " ".join(res.stdout.split()), res.stdout


def test_search_offset_lists_the_ranks_after_it(tmp_path, encoder):
    """`search --offset N` lists ranks N+1 to N+k of the ranking a larger -k gives (by the lower bound too), numbered
    from N+1 in the table, `query.offset` in --json; past the last model it says so; with -m (every listed model) it
    is a usage error; given twice with two values it is refused as -k is. Before, search had no --offset."""
    _alpha_home(tmp_path, encoder, 5)
    prompt = "What is item 3 of alpha about chemistry?"
    for rank in ("probability", "lcb"):
        every = json.loads(run("search", prompt, "-k", "3", "--rank", rank, "--json").stdout)["results"]
        for offset, k in ((1, 1), (1, 5), (2, 1)):
            page = json.loads(run("search", prompt, "-k", str(k), "--offset", str(offset), "--rank", rank, "--json").stdout)
            assert page["results"] == every[offset:offset + k] and page["query"]["offset"] == offset, (rank, offset)
    res = run("search", prompt, "-k", "2", "--offset", "1")
    ranks = [ln.split("│")[1].strip() for ln in res.stdout.splitlines() if ln.count("│") > 2 and "org/" in ln]
    assert res.returncode == 0 and ranks == ["2", "3"], res.stdout + res.stderr
    res = run("search", prompt, "--offset", "3")
    assert res.returncode == 0 and "--offset 3 skips every ranked model" in res.stdout, res.stdout + res.stderr
    res = run("search", prompt, "-m", "org/a", "--offset", "1")
    assert res.returncode == 2 and "compare mode (-m)" in res.stderr and "drop --offset" in res.stderr, res.stderr
    res = run("search", prompt, "--offset", "1", "--offset", "2")
    assert res.returncode == 2 and "--offset was given 2 values (1, 2)" in res.stderr, res.stderr


def test_the_tables_write_counts_past_a_thousand_with_separators(tmp_path, encoder):
    """Every count the tables and their titles show (ranks, totals, prompts, models, a strength's rank) is written
    with thousands separators, as the search page writes it ("32,823"); --json keeps plain integers, and an option's
    value to type (--offset 1001) stays plain. Before, `taskspace search` titled a page "(#1-5 of 32823)" on a home
    of 32,823 models."""
    from servehelpers import build_thousands_index

    build_thousands_index(tmp_path, encoder)
    prompt = "What is item 3 of alpha about chemistry?"
    said = lambda res: " ".join(res.stdout.split())  # noqa: E731
    res = run("search", prompt, "-k", "2", "--offset", "999")
    assert res.returncode == 0 and "Models for the prompt (#1,000-1,001 of 1,002)" in res.stdout, res.stdout + res.stderr
    assert re.search(r"│ 1,000 │ org/m\d{4} ", res.stdout) and re.search(r"│ 1,001 │ org/m\d{4} ", res.stdout), res.stdout
    assert json.loads(run("search", prompt, "-k", "2", "--offset", "999", "--json").stdout)["query"]["total"] == 1002
    res = run("search", prompt, "--offset", "5000")
    assert ("no model past the best 5,000: the ranking holds 1,002 models and --offset 5000 skips every ranked "
            "model (the last one is at --offset 1001)") in said(res), res.stdout
    res = run("models", "--offset", "999", "--limit", "2")
    assert res.returncode == 0 and "2 of 1,002 indexed models (#1,000-1,001)" in res.stdout, res.stdout + res.stderr
    res = run("models", "--limit", "1")
    assert re.search(r"│ org/m0000 │ .* │ +1,112 │ +\d+% │ +2 │", res.stdout), res.stdout
    assert "1,002 indexed models match these options; --offset 5000 skips them all (the last one is at --offset " \
           "1001)" in said(run("models", "--offset", "5000"))
    res = run("benchmarks")
    assert re.search(r"│ big +│ - +│ +1,100 │ +2 │", res.stdout) and re.search(r"│ alpha +│ - +│ +12 │ +1,002 │", res.stdout), res.stdout
    res = run("model", "org/m0000")
    assert re.search(r"│ big +│ +\d+% │ +1,100 │", res.stdout), res.stdout
    assert re.search(r"│ +\d+ of 1,002 │", res.stdout), res.stdout
    # `taskspace spaces` writes its counts as the tables and the page's space chooser do ("1,002 models")
    res = run("spaces")
    assert "  models 1,002  benchmarks 2  stale: none" in res.stdout, res.stdout + res.stderr


def test_count_writes_thousands_separators():
    """``count``: the tables' way of writing a count."""
    from indexer.cli_find import count

    assert [count(n) for n in (0, 7, 999, 1000, 32823, 1234567)] == ["0", "7", "999", "1,000", "32,823", "1,234,567"]


def test_an_offset_past_a_filter_that_matches_no_model_says_the_filter_left_none(tmp_path, encoder):
    """`search --license L --offset N` where the filter leaves no model says that no model matches (check the
    filters), as the search page and the same search without --offset say, and how many the filter excluded; before,
    "--offset 2 skips every ranked model (lower --offset)", which no offset would change (found on the 32,823-model
    home: `--license mit --offset 2`, every model without a license)."""
    _alpha_home(tmp_path, encoder, 5)
    prompt = "What is item 3 of alpha about chemistry?"
    res = run("search", prompt, "--license", "nosuch-license", "--offset", "2")
    said = " ".join(res.stdout.split())
    assert res.returncode == 0 and "no model matches (check the filters" in said, res.stdout + res.stderr
    assert "lower --offset" not in said and "--license excluded 3 models" in said, said


def test_a_license_with_invisible_characters_at_its_edges_is_the_license_it_names_on_the_cli(indexed):
    """`taskspace models --license $'\u200bmit'` lists what `--license mit` lists, as `GET /v1/models` and `/v1/find`
    do (invisible characters at a license's edges are dropped, as spaces are); before, it listed no model."""
    want = run("models", "--json", "--license", "mit")
    got = run("models", "--json", "--license", "\u200bmit\ufeff")
    assert got.returncode == 0 and want.returncode == 0, got.stderr
    assert json.loads(got.stdout)["models"] == json.loads(want.stdout)["models"] != []


def test_a_read_only_command_on_a_home_that_does_not_exist_creates_nothing(tmp_path, monkeypatch):
    """`taskspace search x`, `taskspace models`, `taskspace benchmarks`, `indexer.find_models("x")` and
    `indexer.list_benchmarks()` where TASKSPACE_HOME (or ./.taskspace) does not exist: the empty index's error, saying
    that the database does not exist and naming TASKSPACE_HOME, and no file made. Before, each created the home and
    an empty taskspace.db in it (in whatever folder it ran); later `benchmarks` said "no benchmarks yet", exit 0, and
    `list_benchmarks()` gave [], while `models` and every other command listing what is indexed gave this error."""
    from indexer import find_models, list_benchmarks
    from indexer.errors import NotFoundError

    home = tmp_path / "typo-home"
    monkeypatch.setenv("TASKSPACE_HOME", str(home))
    for args in (("search", "x"), ("models",)):
        res = run(*args)
        assert res.returncode == 1 and res.stderr.startswith("error: the index is empty: run `taskspace index` first "
                                                             f"(the database sqlite:///{home}/taskspace.db does not "
                                                             f"exist: nothing is indexed in TASKSPACE_HOME={home}; "), \
            res.stderr
        assert not home.exists(), list(home.rglob("*"))
    with pytest.raises(NotFoundError, match="does not exist: nothing is indexed in TASKSPACE_HOME="):
        find_models("x", k=3)
    res = run("benchmarks")  # the same error as `models` (before: "no benchmarks yet", exit 0)
    assert res.returncode == 1 and res.stderr.startswith("error: the index is empty: run `taskspace index` first "
                                                         f"(the database sqlite:///{home}/taskspace.db does not "
                                                         f"exist: nothing is indexed in TASKSPACE_HOME={home}; "), res
    with pytest.raises(NotFoundError, match="does not exist: nothing is indexed in TASKSPACE_HOME="):
        list_benchmarks()
    assert not home.exists(), list(home.rglob("*"))


def test_benchmarks_on_a_home_with_a_database_but_no_index_gives_the_error_models_gives(tmp_path, monkeypatch):
    """`taskspace benchmarks` (and `--json`) on a home that exists, its database made (`taskspace db upgrade`, or a
    `sources add` before any pass) but nothing ingested: the empty index's error `taskspace models` gives there, with
    what to run, exit 1. Before, "no benchmarks yet: ..." and `[]`, exit 0, beside `models`' error."""
    home = tmp_path / "home"
    monkeypatch.setenv("TASKSPACE_HOME", str(home))
    assert run("db", "upgrade").returncode == 0
    models, listed, as_json = run("models"), run("benchmarks"), run("benchmarks", "--json")
    assert models.returncode == 1 and models.stderr.startswith("error: the index is empty: run `taskspace index` first"), \
        models.stderr
    assert (listed.returncode, listed.stdout, listed.stderr) == (1, "", models.stderr), listed
    assert as_json.returncode == 1 and json.loads(as_json.stderr)["error"] == models.stderr.strip()[len("error: "):], \
        as_json  # as `models --json` says it


def test_every_other_read_only_command_on_a_home_that_does_not_exist_says_so_and_creates_nothing(tmp_path, monkeypatch):
    """`taskspace spaces` (and `spaces list`), `runs`, `check`, `sources stored`, `spaces drop`/`sources drop`
    (nothing there to drop) and `reindex` (nothing to rebuild from) where TASKSPACE_HOME does not exist: the error
    `search` gives (the database does not exist, naming TASKSPACE_HOME), and no file made; `db current` says "(empty)"
    and makes nothing either. Before, each created the home (all but `db current` an empty taskspace.db, `spaces` and
    `check` an embedded index too) and answered as if it were indexed: "no embedding spaces yet", "no runs yet", exit 0
    (found running them in an empty folder; `reindex` later: "no embedding spaces in SQL yet", exit 0)."""
    home = tmp_path / "typo-home"
    monkeypatch.setenv("TASKSPACE_HOME", str(home))
    for args in (("spaces",), ("spaces", "list"), ("runs",), ("check",), ("sources", "stored"),
                 ("spaces", "drop", "x", "--dry-run"), ("sources", "drop", "/x"), ("reindex",)):
        res = run(*args)
        assert res.returncode == 1 and res.stderr.startswith("error: the index is empty: run `taskspace index` first "
                                                             f"(the database sqlite:///{home}/taskspace.db does not "
                                                             f"exist: nothing is indexed in TASKSPACE_HOME={home}; "), \
            (args, res.stderr)
        assert not home.exists(), (args, list(home.rglob("*")))
    res = run("db", "current")
    assert res.returncode == 0 and "current (empty)" in res.stdout, res
    assert not home.exists(), list(home.rglob("*"))


def test_publish_on_a_home_that_does_not_exist_says_so_and_creates_nothing(tmp_path, monkeypatch):
    """`taskspace publish ORG/NAME --dry-run DIR` and `indexer.publish.publish(..., dry_run=DIR)` where TASKSPACE_HOME
    does not exist: the error of every other read-only command (the database does not exist, naming TASKSPACE_HOME),
    and no file made, neither the home nor the dry run's folder. Before, publish opened the store as a pass does: it
    created the home and an empty taskspace.db, said "nothing to publish: no space has model vectors", and from then
    on `taskspace runs` answered "no runs yet", exit 0, as on an indexed home."""
    from indexer.errors import NotFoundError
    from indexer.publish import publish

    home, out = tmp_path / "typo-home", tmp_path / "out"
    monkeypatch.setenv("TASKSPACE_HOME", str(home))
    res = run("publish", "org/name", "--dry-run", str(out))
    assert res.returncode == 1 and res.stderr.startswith("error: the index is empty: run `taskspace index` first "
                                                         f"(the database sqlite:///{home}/taskspace.db does not "
                                                         f"exist: nothing is indexed in TASKSPACE_HOME={home}; "), res
    assert not home.exists() and not out.exists(), list(tmp_path.rglob("*"))
    with pytest.raises(NotFoundError, match="does not exist: nothing is indexed in TASKSPACE_HOME="):
        publish("org/name", dry_run=str(out))
    assert not home.exists() and not out.exists(), list(tmp_path.rglob("*"))


def test_a_benchmark_with_spaces_around_is_found_and_one_in_another_case_is_suggested_on_the_cli(indexed):
    """`taskspace models -b "beta "` lists what `-b beta` lists and `search -b "beta "` ranks for beta, as the HTTP API
    does; `search -b BETA` and `models --measured-on "Beta "` say "unknown benchmark ...; did you mean beta?" through
    the one `find.suggest`. Before, "beta " was an unknown benchmark."""
    want = run("models", "--json", "-b", "beta")
    got = run("models", "--json", "-b", "beta ")
    assert got.returncode == 0 and json.loads(got.stdout)["models"] == json.loads(want.stdout)["models"] != [], got.stderr
    got = run("search", "--json", "-b", "\u200bbeta ")
    assert got.returncode == 0 and json.loads(got.stdout)["query"]["benchmark"] == "beta", got.stderr
    for args in (("search", "-b", "BETA"), ("models", "--measured-on", "Beta ")):
        got = run(*args)
        assert got.returncode != 0 and "did you mean beta?" in got.stderr, (args, got.stderr)


def test_benchmarks_on_a_database_with_nothing_ingested_is_the_models_error_in_the_library_and_over_http(tmp_path,
                                                                                                         monkeypatch):
    """`indexer.list_benchmarks()` and `GET /v1/benchmarks` on a home whose database exists but holds nothing
    ingested: the empty-index error `list_models()` and `GET /v1/models` give there (a NotFoundError, HTTP 404 with
    the same body), as `taskspace benchmarks` gives (fee836ce). Before, `[]` and `{"benchmarks": []}` with 200."""
    from fastapi.testclient import TestClient

    from indexer import list_benchmarks, list_models
    from indexer.config import reset_settings
    from indexer.errors import NotFoundError
    from indexer.serve import create_app

    home = tmp_path / "home"
    monkeypatch.setenv("TASKSPACE_HOME", str(home))
    assert run("db", "upgrade").returncode == 0
    reset_settings()
    with pytest.raises(NotFoundError) as models_error:
        list_models()
    with pytest.raises(NotFoundError) as benchmarks_error:
        list_benchmarks()
    assert str(benchmarks_error.value) == str(models_error.value), benchmarks_error.value
    with TestClient(create_app()) as client:
        models, listed = client.get("/v1/models"), client.get("/v1/benchmarks")
    assert models.status_code == 404, models.text
    assert (listed.status_code, listed.json()) == (models.status_code, models.json()), listed.text
