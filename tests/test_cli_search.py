"""`taskspace search` itself (issue 21, item 6): prompts and a benchmark, the filters, `--json`, no match, bad input.

Written against what the command must keep doing whatever its output looks like: exit codes, the JSON's `model`
(and `score`) per result, whether the results are the JSON itself or under `results` (:func:`results`), and which
models the filters let through. Run in process through ``indexer.cli.main`` (the console script's entry point) and
once through the installed script (checked to be this checkout's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from helpers import outcomes, write_table

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
    from indexer import cli as cli_module

    argv = sys.argv
    sys.argv = ["taskspace", "search", *args]
    try:
        try:
            cli_module.main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = argv
        if "indexer.query" in sys.modules:
            sys.modules["indexer.query"].close_cached()
    out = capsys.readouterr()
    return code, out.out, out.err


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
