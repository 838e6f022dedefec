"""The scripts in benchmarks/ and scripts/: each answers --help with its usage (exit 0) without reading data or an index,
and every name a benchmark script takes from indexer/ exists and takes the arguments the script passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_benchmark_script_answers_help(script, tmp_path):
    # bench_level.py and bench_prior.py read sys.argv by position (--help: an IndexError traceback), and
    # probe_edge_segments.py read the index of TASKSPACE_HOME first (--help: a NotFoundError traceback)
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TASKSPACE_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--help"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("usage:"), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr


def _indexer_names(tree) -> dict:
    """The names a script binds to indexer's modules and objects, wherever it imports them (main() imports most of
    them after parsing its arguments, so --help never reaches those imports)."""
    import ast
    import importlib

    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "indexer":
            module = importlib.import_module(node.module)
            for alias in node.names:
                try:  # as `from M import N` does: M's attribute N, else its submodule N
                    names[alias.asname or alias.name] = getattr(module, alias.name)
                except AttributeError:
                    try:
                        names[alias.asname or alias.name] = importlib.import_module(f"{node.module}.{alias.name}")
                    except ModuleNotFoundError:
                        pytest.fail(f"line {node.lineno}: {node.module} has no {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "indexer":
                    module = importlib.import_module(alias.name)
                    names[alias.asname or "indexer"] = module if alias.asname else importlib.import_module("indexer")
    return names


#: attributes a script adds to an indexer class for its own use (bench_prior.py: which prior its _prior_of computes)
OWN_ATTRIBUTES = {"_weighting"}


def _resolve(node, names, lineno):
    """The object an attribute chain on an indexer name (``ev._default_rows``, ``HyperplaneSolver._prior_of``) names,
    or None where the chain leaves modules and classes (an instance's attributes are not checked)."""
    import ast
    import importlib
    import inspect

    chain = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in names:
        return None
    obj = names[node.id]
    for attr in reversed(chain):
        if not (inspect.ismodule(obj) or inspect.isclass(obj)):
            return None
        if hasattr(obj, attr):
            obj = getattr(obj, attr)
        elif inspect.ismodule(obj) and importlib.util.find_spec(f"{obj.__name__}.{attr}") is not None:
            obj = importlib.import_module(f"{obj.__name__}.{attr}")
        elif inspect.isclass(obj) and attr in getattr(obj, "__dataclass_fields__", {}):
            return None
        else:
            pytest.fail(f"line {lineno}: {getattr(obj, '__qualname__', obj.__name__)} has no {attr}")
    return obj


@pytest.mark.parametrize("script", SCRIPTS)
def test_what_a_benchmark_script_takes_from_indexer_exists_and_takes_its_arguments(script):
    # the script's --help (above) parses its arguments before main() imports the library: a name removed or renamed in
    # indexer/, or a keyword a function no longer takes, answered --help and failed only when the script was run
    import ast
    import importlib.util
    import inspect

    tree = ast.parse((ROOT / "benchmarks" / script).read_text())
    names = _indexer_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr not in OWN_ATTRIBUTES:  # read or assigned (a patch of a
            _resolve(node, names, node.lineno)                                        # gone name would patch nothing)
        if not isinstance(node, ast.Call):
            continue
        func = (names.get(node.func.id) if isinstance(node.func, ast.Name)
                else _resolve(node.func, names, node.lineno) if isinstance(node.func, ast.Attribute) else None)
        if func is None or inspect.ismodule(func) or not callable(func):
            continue
        try:
            sig = inspect.signature(func)
        except (TypeError, ValueError):  # a builtin without one
            continue
        params = sig.parameters.values()
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params)
        keywords = [k.arg for k in node.keywords if k.arg is not None]
        unknown = [k for k in keywords if k not in sig.parameters and not takes_any]
        assert not unknown, f"line {node.lineno}: {func.__qualname__}{sig} takes no {unknown}"
        if not any(isinstance(a, ast.Starred) for a in node.args) and all(k.arg for k in node.keywords):
            try:
                sig.bind(*node.args, **dict.fromkeys(keywords))
            except TypeError as exc:
                pytest.fail(f"line {node.lineno}: {func.__qualname__}{sig}: {exc}")


def _all_correct(root: Path) -> Path:
    """A small folder of the sample's prompts whose every outcome is a success: no AUC, so NaN metrics."""
    import json

    sample = ROOT / "indexer" / "data" / "sample"
    prompts = [json.loads(line) for line in (sample / "prompts.jsonl").read_text().splitlines()]
    by_bench: dict = {}
    for p in prompts:
        by_bench.setdefault(p["benchmark"], []).append(p)
    chosen = [p for b in sorted(by_bench)[:2] for p in by_bench[b][:10]]
    d = root / "allright"
    d.mkdir()
    (d / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in chosen))
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(
        f"m{i},{p['prompt_id']},1\n" for i in range(3) for p in chosen))
    return d


@pytest.mark.parametrize("script,args", [("bench_evaluate.py", ["--seeds", "1"]),
                                         ("bench_peers.py", ["--splits", "oos", "--peers", "none"])])
def test_a_benchmark_scripts_json_is_standard_json(script, args, tmp_path, monkeypatch):
    # data without an AUC (every outcome a success): the --json file held Python's bare NaN tokens, which jq,
    # JSON.parse and Go refuse for the whole file (the CLI's --json gives null since session 30)
    import json
    import runpy

    out = tmp_path / "out.json"
    monkeypatch.setattr(sys, "argv", [script, str(_all_correct(tmp_path)), *args, "--json", str(out)])
    runpy.run_path(str(ROOT / "benchmarks" / script), run_name="__main__")
    text = out.read_text()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert "null" in text


def test_bench_evaluate_of_one_benchmark_shows_in_sample_and_says_why_oos_did_not_run(tmp_path, monkeypatch, capsys):
    # `taskspace evaluate --split both` of one benchmark runs in-sample and names oos as not run; the script read
    # res["oos"] and ended in a KeyError traceback
    import json
    import runpy

    d = _all_correct(tmp_path)
    rows = [json.loads(line) for line in (d / "prompts.jsonl").read_text().splitlines()]
    one = [r for r in rows if r["benchmark"] == rows[0]["benchmark"]]
    (d / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in one))
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(
        f"m{i},{r['prompt_id']},{(i + j) % 2}\n" for i in range(3) for j, r in enumerate(one)))
    monkeypatch.setattr(sys, "argv", ["bench_evaluate.py", str(d), "--seeds", "1"])
    runpy.run_path(str(ROOT / "benchmarks" / "bench_evaluate.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "in-sample default" in out and "oos       default" not in out
    assert "split oos not run: out-of-sample evaluation needs at least 2 groups, found 1" in out


def test_the_mutation_script_answers_help_and_refuses_a_word_no_mutant_has(tmp_path):
    # scripts/mutants.py took every argument for a word of a mutant's name: `--help` or a typo ran no mutant, printed
    # nothing and exited 0, as if every mutant had been caught
    script = ROOT / "scripts" / "mutants.py"
    run = lambda *a: subprocess.run([sys.executable, str(script), *a], capture_output=True, text=True,  # noqa: E731
                                    cwd=tmp_path, timeout=60)
    helped = run("--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage:") and "mutants" in helped.stdout
    typo = run("crno")
    assert typo.returncode == 2 and "no mutant's name contains 'crno'" in typo.stderr
    assert "cron day-of-month AND day-of-week" in typo.stderr  # the names to choose from


def test_bench_peers_checks_its_splits_first_and_runs_all_or_both_as_their_splits(tmp_path, monkeypatch, capsys):
    # `--splits oos,bogus` ran oos (minutes at scale), then failed with an InputError traceback; `--splits both` ran
    # both splits, then a KeyError ('protocol': the result of `both` holds one result per split)
    import runpy

    data = _all_correct(tmp_path)
    script = str(ROOT / "benchmarks" / "bench_peers.py")
    for bad, says in ((["--splits", "oos,bogus"], "'bogus': use splits of"), (["--seeds", "0"], "need 1 to 1000"),
                      (["--peers", "every"], "invalid choice: 'every'")):
        monkeypatch.setattr(sys, "argv", ["bench_peers.py", str(data), *bad])
        with pytest.raises(SystemExit) as exc:
            runpy.run_path(script, run_name="__main__")
        assert exc.value.code == 2 and says in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["bench_peers.py", str(data), "--splits", "both", "--peers", "none", "--seeds", "1"])
    runpy.run_path(script, run_name="__main__")
    out = capsys.readouterr().out
    assert "### allright in-sample:" in out and "### allright oos:" in out


def test_bench_local_takes_one_split(tmp_path, monkeypatch, capsys):
    # `bench_local.py DATA both -` ran both splits (minutes at scale), then failed with KeyError 'methods' (the result
    # of `both` holds one result per split), every number lost
    import runpy

    monkeypatch.setattr(sys, "argv", ["bench_local.py", str(_all_correct(tmp_path)), "both", "-"])
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(ROOT / "benchmarks" / "bench_local.py"), run_name="__main__")
    assert exc.value.code == 2 and "invalid choice: 'both'" in capsys.readouterr().err


def test_bench_beyond_auto_refuses_an_only_no_variant_matches(tmp_path, monkeypatch, capsys):
    # `--only zzz` (a typo) ran no variant, printed nothing and exited 0
    import runpy

    monkeypatch.setattr(sys, "argv", ["bench_beyond_auto.py", str(_all_correct(tmp_path)), "--only", "zzz"])
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(ROOT / "benchmarks" / "bench_beyond_auto.py"), run_name="__main__")
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--only 'zzz': no variant's name contains it" in err and "auto-text" in err


@pytest.mark.parametrize("script", ["bench_find.py", "bench_coverage_query.py"])
def test_a_benchmark_needing_the_shared_data_says_so_first(script, tmp_path):
    # both read ../shared/data (beside the checkout) only after building their index: without it, a traceback
    # (FileNotFoundError, CalledProcessError) minutes in, and no option to say where the data is
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TASKSPACE_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--data", str(tmp_path / "none"),
                           "--work", str(tmp_path / "work")], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{tmp_path / 'none' / 'evalarena_code' / 'prompts.jsonl'}" in proc.stderr
    assert "not found: give the shared data sets' folder with --data DIR" in proc.stderr
    assert not (tmp_path / "work").exists()  # nothing built


def test_bench_sql_reads_back_the_sample_under_the_stores_model_keys(tmp_path):
    # its read-back check keyed the expected cells by the model names as written, the store by their keys
    # (`Llama-2-13b-hf` -> `meta-llama/Llama-2-13b-hf`): a KeyError on the sample and on mmlu_pro, its default data
    import json

    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TASKSPACE_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_sql.py"), "--data",
                           str(ROOT / "indexer" / "data" / "sample"), "--no-postgres"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout)["sqlite"]
    assert got["readback_exact"] is True and got["stored"]["models"] == 25


def test_bench_publish_runs_small_and_refuses_counts_it_cannot_seed(tmp_path):
    # every run failed at its pull (the seeded benchmarks counted prompts the home does not hold, so the record set
    # lacked a prompts file `taskspace pull` requires), and --benchmarks below 6 was a numpy ValueError
    import json

    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    env.pop("TASKSPACE_HOME", None)
    script = str(ROOT / "benchmarks" / "bench_publish.py")
    bad = subprocess.run([sys.executable, script, "--patterns", "0"], capture_output=True, text=True, env=env,
                         timeout=120)
    assert bad.returncode == 2 and "--patterns: 0: need at least 1" in bad.stderr
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, script, "--models", "8", "--patterns", "1", "--rank", "2", "--benchmarks",
                           "2", "--work", str(tmp_path / "work"), "--json", str(out)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "pulled into the index: {'models': 8, 'benchmarks': 2" in proc.stdout
    assert json.loads(out.read_text())


def test_bench_scale_reads_plain_or_gzipped_shared_files_and_checks_them_first(tmp_path):
    # it opened `prompts.jsonl*` with gzip and read `outcomes.csv.gz` by that name: on the bundled sample (plain files)
    # a BadGzipFile traceback after the index was built; a folder without them failed as late
    import runpy

    script = ROOT / "benchmarks" / "bench_scale.py"
    shared_file = runpy.run_path(str(script))["_shared_file"]
    sample = ROOT / "indexer" / "data" / "sample"
    assert shared_file(sample, "prompts.jsonl") == sample / "prompts.jsonl"
    assert shared_file(sample, "outcomes.csv") == sample / "outcomes.csv"
    (tmp_path / "gz").mkdir()
    (tmp_path / "gz" / "prompts.jsonl.gz").write_bytes(b"")
    assert shared_file(tmp_path / "gz", "prompts.jsonl") == tmp_path / "gz" / "prompts.jsonl.gz"
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, str(script), "--data", str(tmp_path / "gz"), "--work", str(tmp_path / "w")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1 and "no outcomes.csv or outcomes.csv.gz" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "w").exists()


def test_probe_query_names_a_data_folder_without_prompts(tmp_path):
    # it opened `prompts.jsonl*` with gzip whatever the name (the bundled sample's plain file: BadGzipFile) and a folder
    # without one was a StopIteration traceback
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "probe_query.py"), str(tmp_path / "home"),
                           "--data", str(tmp_path)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2 and "no prompts.jsonl or prompts.jsonl.gz" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bench_encoder_reads_a_plain_prompts_file(tmp_path):
    # `--prompts indexer/data/sample/prompts.jsonl` was opened with gzip: a BadGzipFile traceback
    import runpy

    load_prompts = runpy.run_path(str(ROOT / "benchmarks" / "bench_encoder.py"))["load_prompts"]
    texts = load_prompts(ROOT / "indexer" / "data" / "sample" / "prompts.jsonl", 5)
    assert len(texts) == 5 and all(texts)
    with pytest.raises(SystemExit, match="no such file"):
        load_prompts(tmp_path / "none.jsonl", 5)


def test_bench_vectors_takes_the_shared_layout_plain_or_gzipped(tmp_path):
    # its real-data part read `outcomes.csv.gz` by that name: on the bundled sample "no such file or folder" (a
    # traceback, after removing --home); a folder without prompts a StopIteration
    import runpy

    shared_files = runpy.run_path(str(ROOT / "benchmarks" / "bench_vectors.py"))["shared_files"]
    sample = ROOT / "indexer" / "data" / "sample"
    assert shared_files(sample) == (sample / "outcomes.csv", sample / "prompts.jsonl")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "outcomes.csv.gz").write_bytes(b"")
    assert shared_files(tmp_path / "half") is None
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_vectors.py"), "--data",
                           str(tmp_path / "half"), "--home", str(home)], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 2 and "no outcomes.csv[.gz] and prompts.jsonl[.gz]" in proc.stderr
    assert home.exists()  # nothing removed


@pytest.mark.parametrize("args", [["bench_evaluate.py", "{x}"], ["bench_peers.py", "{x}"],
                                  ["bench_pooled.py", "{x}", "{x}2"], ["bench_intervals.py", "{x}"],
                                  ["bench_local.py", "{x}", "oos", "-"], ["bench_beyond_auto.py", "{x}"],
                                  ["bench_level.py", "{x}", "oos", "auto-mc", "16:3"],
                                  ["bench_prior.py", "{x}", "oos", "format"]])
def test_an_evaluation_benchmark_given_a_bad_data_says_so_in_one_line(args, tmp_path):
    # each ended in a traceback of the library's InputError ("no such file or folder"): the cause was its last line
    x = str(tmp_path / "none")
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TASKSPACE_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / args[0]), *(a.format(x=x) for a in args[1:])],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1 and proc.stderr.strip() == f"error: {x}: no such file or folder", proc.stderr[-2000:]


def test_probe_pooled_fold_checks_its_arguments_before_reading_data(tmp_path):
    # one folder, or a folder that is not there: a usage error (exit 2) naming it, before any data is read or encoded
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    run = lambda *a: subprocess.run([sys.executable, str(ROOT / "benchmarks" / "probe_pooled_fold.py"), *a],  # noqa: E731
                                    capture_output=True, text=True, env=env, timeout=120)
    one = run(str(tmp_path), "--fold", "math")
    assert one.returncode == 2 and "give at least two data folders" in one.stderr
    missing = run(str(tmp_path), str(tmp_path / "none"), "--fold", "math")
    assert missing.returncode == 2 and f"{tmp_path / 'none'}: not a folder" in missing.stderr
    assert "Traceback" not in one.stderr + missing.stderr


def test_bench_refit_reads_plain_or_gzipped_shared_files_and_checks_them_first(tmp_path):
    # it read `outcomes.csv.gz` by that name: on the bundled sample (plain files) a FileNotFoundError traceback, and a
    # folder without outcomes failed only after its prompts were read
    import csv
    import runpy

    script = ROOT / "benchmarks" / "bench_refit.py"
    write = runpy.run_path(str(script))["_write"]
    sample = ROOT / "indexer" / "data" / "sample"
    with open(sample / "outcomes.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    two = sorted({r["model"] for r in rows})[:2]
    write(sample, two, tmp_path / "src", None)
    with open(tmp_path / "src" / "outcomes.csv", newline="") as f:
        got = list(csv.DictReader(f))
    assert len(got) == sum(r["model"] in two for r in rows) > 0 and {r["model"] for r in got} == set(two)
    assert (tmp_path / "src" / "prompts.jsonl").read_text() == (sample / "prompts.jsonl").read_text()
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "prompts.jsonl").write_text((sample / "prompts.jsonl").read_text())
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, str(script), "--data", str(tmp_path / "half"), "--work",
                           str(tmp_path / "w")], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1 and "no outcomes.csv or outcomes.csv.gz" in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and not (tmp_path / "w").exists()  # nothing built


@pytest.mark.parametrize("queries", ["0", "-1", "100000"])
def test_bench_refit_given_more_queries_than_prompts_says_so_in_one_line(queries, tmp_path):
    # --queries above the data set's prompt count ended in random.sample's "Sample larger than population or is
    # negative" traceback (after the work folder was made); 0 would have indexed everything and then divided by zero
    script = ROOT / "benchmarks" / "bench_refit.py"
    sample = ROOT / "indexer" / "data" / "sample"
    n = sum(1 for line in (sample / "prompts.jsonl").read_text().splitlines() if line.strip())
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, str(script), "--data", str(sample), "--work", str(tmp_path / "w"),
                           "--queries", queries], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1 and proc.stderr.strip() == (
        f"--queries {queries}: give 1 to {n} (the prompts in {sample})"), proc.stderr[-2000:]
    assert not (tmp_path / "w").exists()  # nothing built


def test_bench_pooled_averages_a_metric_over_the_folds_that_have_it_as_evaluate_does():
    # a fold whose held-out cells of a data set are all successes has no AUC: bench_pooled took np.mean over every
    # fold, so one such fold made the data set's AUC nan (pooled 'nan', `taskspace evaluate` 0.6406 on the same data)
    import runpy

    import numpy as np

    means = runpy.run_path(str(ROOT / "benchmarks" / "bench_pooled.py"))["fold_means"]
    nan = float("nan")
    got = means([{"auc": nan, "selection_accuracy": 1.0, "ece": 0.2}, {"auc": 0.6, "selection_accuracy": 0.5, "ece": 0.4}])
    assert got == pytest.approx({"auc": 0.6, "selection_accuracy": 0.75, "ece": 0.3})
    assert np.isnan(means([{"auc": nan, "selection_accuracy": nan, "ece": nan}])["auc"])


def test_bench_pooled_names_a_data_set_with_no_prompts_of_its_own(tmp_path, monkeypatch, capsys):
    # a data set whose every prompt is also in an earlier one (a copy of it) counts no prompt of its own, as
    # `taskspace evaluate a b` counts it: bench_pooled printed `copy: pooled nan / nan / nan; alone nan / nan / nan`
    # under numpy's "Mean of empty slice" warnings
    import runpy
    import shutil
    import warnings

    d = _all_correct(tmp_path)
    text = (d / "outcomes.csv").read_text().splitlines()
    (d / "outcomes.csv").write_text("\n".join([text[0]] + [f"{r[:-1]}{k % 2}" for k, r in enumerate(text[1:])]) + "\n")
    shutil.copytree(d, tmp_path / "copy")
    monkeypatch.setattr(sys, "argv", ["bench_pooled.py", str(d), str(tmp_path / "copy"), "--seeds", "1"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        runpy.run_path(str(ROOT / "benchmarks" / "bench_pooled.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "allright: pooled 0." in out and "nan" not in out
    assert "copy: no prompts of its own (each is also in an earlier data set, where it counts); not compared" in out


def test_bench_peers_runs_the_splits_the_data_takes_and_says_why_not_the_others(tmp_path, monkeypatch, capsys):
    # `--splits all` on data of one model: `taskspace evaluate --split all` runs in-sample and oos and says why not
    # coverage; bench_peers ran in-sample and oos, then ended in "error: the coverage split needs at least 2 models"
    # (exit 1), its --json never written: every number lost
    import json
    import runpy

    d = _all_correct(tmp_path)
    rows = (d / "outcomes.csv").read_text().splitlines()
    (d / "outcomes.csv").write_text("\n".join([rows[0]] + [f"{r[:-1]}{k % 2}" for k, r in enumerate(rows[1:])
                                                           if r.startswith("m0,")]) + "\n")
    out = tmp_path / "out.json"
    monkeypatch.setattr(sys, "argv", ["bench_peers.py", str(d), "--splits", "all", "--peers", "none", "--seeds", "1",
                                      "--json", str(out)])
    runpy.run_path(str(ROOT / "benchmarks" / "bench_peers.py"), run_name="__main__")
    text = capsys.readouterr().out
    assert "### allright in-sample:" in text and "### allright oos:" in text
    assert "split coverage not run: the coverage split needs at least 2 models" in text
    got = json.loads(out.read_text())
    assert set(got) == {"in-sample", "oos", "skipped"} and got["skipped"]["coverage"].startswith("the coverage split")


def test_bench_peers_table_shows_an_oracle_metric_without_a_value_as_the_others():
    # one seed whose held-out outcomes are all failures: no prompt was solved, so the oracle's sel recall has no
    # value; the row read "nan" where every other metric without a value reads "-"
    import runpy

    table = runpy.run_path(str(ROOT / "benchmarks" / "bench_peers.py"))["table"]
    nan = float("nan")
    m = {k: nan for k in ("auc", "accuracy", "correlation", "selection_accuracy", "selection_recall", "ece", "brier")}
    res = {"folds": [{}], "methods": {"default": {**m, "seconds": 0.1}},
           "oracle_detail": {"selection_accuracy": 0.0, "selection_recall": nan}}
    last = table(res).splitlines()[-1]
    assert last == "| oracle | | | | 0.000 | - | | | |" and "nan" not in table(res)
