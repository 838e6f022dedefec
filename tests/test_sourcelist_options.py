"""A configured source (sources.toml) carries the reading options of `taskspace ingest` (--prompts, --model, --filter,
--metric): `taskspace sources add` and `taskspace index --source` set them, `sources list` shows them, every pass reads
with them, and a changed option re-reads the source. Before, an entry kept only spec, format and limit, so a source
that needed --metric or --model could be ingested by hand but never kept current by the worker, whose recorded errors
said "pass --model NAME", which no pass takes."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from indexer import sourcelist
from indexer.errors import ConfigError
from indexer.sourcelist import SourceSpec

FIXTURES = Path(__file__).parent / "fixtures"
LM_OUT = FIXTURES / "lm_eval" / "lm_eval_out"


def _unnamed_run(tmp_path) -> Path:
    """A real lm-eval run (fake-org__dummy-b, 42 samples) in a folder not named <org>__<model> whose results file names
    no model: read only with --model."""
    folder = tmp_path / "plain"
    shutil.copytree(LM_OUT / "fake-org__dummy-b", folder)
    results = next(folder.glob("results_*.json"))
    data = json.loads(results.read_text())
    data["model_name"] = ""
    data["config"]["model_args"] = ""
    results.write_text(json.dumps(data))
    return folder


def _cli(tmp_path):
    env = dict(os.environ, TASKSPACE_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1")

    def ts(*args):
        return subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True, env=env)

    return ts


def test_a_source_needing_model_is_added_listed_and_kept_current_by_the_worker(tmp_path):
    ts = _cli(tmp_path)
    plain = _unnamed_run(tmp_path)
    # configured without --model: the worker's pass records the error, whose hint says how to set it for this source
    assert ts("sources", "add", str(plain), "--format", "lm_eval").returncode == 0
    r = ts("worker", "--every", "1h", "--max-passes", "1")
    assert r.returncode == 1, r.stderr[-2000:]
    (run,) = json.loads(ts("runs", "--json").stdout)
    (err,) = run["error_details"]
    assert "names no model" in err["message"], err
    assert (f"pass --model NAME (for this configured source: `taskspace sources add {plain} --format lm_eval "
            "--model NAME`)") in err["message"], err
    # set so, as the hint says: replaces the entry (one path is one source), listed with its option
    r = ts("sources", "add", str(plain), "--format", "lm_eval", "--model", "my-org/my-model")
    assert r.returncode == 0 and r.stdout.startswith(f"updated {plain}"), r.stdout + r.stderr
    assert ts("sources", "list").stdout.strip() == f"{plain}  format=lm_eval  model=my-org/my-model"
    (listed,) = json.loads(ts("sources", "list", "--json").stdout)
    assert listed == {"spec": str(plain), "format": "lm_eval", "limit": None, "prompts": None,
                      "model": "my-org/my-model", "filter": None, "metric": None, "missing": False}
    r = ts("worker", "--every", "1h", "--max-passes", "1")
    assert r.returncode == 0, r.stderr[-2000:]
    run = json.loads(ts("runs", "--json").stdout)[0]
    assert run["status"] == "ok" and run["counts"]["sources"] == 1 and run["counts"]["outcomes_added"] == 42, run
    r = ts("model", "my-org/my-model", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    # the next pass: unchanged, nothing read again
    assert json.loads(ts("index", "--json").stdout)["counts"]["sources_unchanged"] == 1


def test_changing_a_configured_metric_re_reads_the_source_and_index_source_takes_the_options(tmp_path):
    ts = _cli(tmp_path)
    run = tmp_path / "fake-org__dummy-b"
    shutil.copytree(LM_OUT / "fake-org__dummy-b", run)
    for f in run.glob("samples_tiny_gen_arith_*.jsonl"):  # its multiple-choice tasks only, which have acc_norm too
        f.unlink()
    r = ts("index", "--source", str(run), "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(ts("index", "--json").stdout)["counts"]["sources_unchanged"] == 1
    # the metric read is part of what is stored: the next pass reads the source again (its revision names it)
    r = ts("index", "--source", str(run), "--metric", "acc_norm", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    counts = json.loads(r.stdout)["counts"]
    assert counts["sources"] == 1 and counts["sources_unchanged"] == 0, counts
    assert ts("sources", "list").stdout.strip() == f"{run}  metric=acc_norm"
    assert json.loads(ts("index", "--json").stdout)["counts"]["sources_unchanged"] == 1
    # ingest's checks, in ingest's words: an option the format does not take, a blank name; nothing saved
    r = ts("sources", "add", str(run), "--prompts", str(run / "x.csv"))
    assert r.returncode == 2 and "--prompts applies only to table sources, not to this lm_eval source" in r.stderr
    r = ts("index", "--source", str(run), "--metric", " ")
    assert r.returncode == 2 and "--metric ' ': blank" in r.stderr and "nothing was saved" in r.stderr
    r = ts("sources", "add", str(LM_OUT), "--model", "a/b")
    assert r.returncode == 2 and "holds the runs of 4 models" in r.stderr and "nothing was saved" in r.stderr
    r = ts("index", "--metric", "acc")  # no --source: the configured sources keep their own options
    assert r.returncode == 2 and "--metric applies only to the sources given with --source" in r.stderr
    assert ts("sources", "list").stdout.strip() == f"{run}  metric=acc_norm"


def test_an_old_sources_file_without_options_is_read_as_before(tmp_path):
    ts = _cli(tmp_path)
    run = tmp_path / "fake-org__dummy-a"
    shutil.copytree(LM_OUT / "fake-org__dummy-a", run)
    home = tmp_path / "home"
    home.mkdir()
    (home / "sources.toml").write_text(f'[[source]]\nspec = "{run}"\nformat = "lm_eval"\n')
    assert sourcelist.load(home / "sources.toml") == [SourceSpec(str(run), format="lm_eval")]
    assert ts("sources", "list").stdout.strip() == f"{run}  format=lm_eval"
    r = ts("index", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["counts"]["sources"] == 1, r.stderr[-2000:]


def test_the_library_takes_the_options_and_stores_a_prompts_path_absolute(tmp_path, monkeypatch):
    cfg = tmp_path / "sources.toml"
    (tmp_path / "t").mkdir()
    folder = tmp_path / "t" / "outcomes.csv"  # an outcomes file, its prompts file elsewhere (as ingest takes it)
    folder.write_text("model,prompt_id,correct\nm,p1,1\n")
    (tmp_path / "qs.csv").write_text("prompt_id,benchmark,text\np1,b,What is 2+2?\n")
    monkeypatch.chdir(tmp_path)
    merged = sourcelist.add(cfg, [SourceSpec(str(folder), prompts="qs.csv"),
                                  SourceSpec(str(LM_OUT / "fake-org__dummy-c"), metric="acc_norm", filter="none")])
    assert merged == sourcelist.load(cfg) == [
        SourceSpec(str(folder), prompts=str(tmp_path / "qs.csv")),
        SourceSpec(str(LM_OUT / "fake-org__dummy-c"), metric="acc_norm", filter="none")]
    assert merged[1].options == {"filter": "none", "metric": "acc_norm"}
    with pytest.raises(ConfigError, match=r"metric= applies only to lm_eval and lighteval sources, not to this table "
                                          r"source; drop metric=; nothing was saved"):
        sourcelist.add(cfg, [SourceSpec(str(folder), prompts=str(tmp_path / "qs.csv"), metric="acc")])
    with pytest.raises(ConfigError, match=r"prompts='.*missing.csv': no such file"):
        sourcelist.add(cfg, [SourceSpec(str(folder), prompts=str(tmp_path / "missing.csv"))])
    with pytest.raises(ConfigError, match=r"model='a/b' names one model, but hub-org:x lists the datasets of many"):
        sourcelist.add(cfg, [SourceSpec("hub-org:x", model="a/b")])
    with pytest.raises(ConfigError, match=r"prompts=5: give the path of a prompts file .*nothing was saved"):
        sourcelist.add(cfg, [SourceSpec(str(folder), prompts=5)])
    assert sourcelist.load(cfg) == merged  # nothing saved


@pytest.mark.parametrize("entry,match", [
    ('metric = 3', r"source #1 \(.*\): metric must be a non-empty string .*not 3; fix it in the file, or drop the key"),
    ('model = "  "', r"source #1 \(.*\): model must be a non-empty string"),
    ('format = "table"\nfilter = "strict-match"', r"source #1 \(.*\): filter= applies only to lm_eval sources, not "
                                                  r"to this table source.*fix this entry in the file"),
    ('colour = "red"', r"unknown key \['colour'\]; allowed: .*'metric'"),
])
def test_a_bad_option_in_the_sources_file_names_the_file_the_entry_and_the_fix(tmp_path, entry, match):
    cfg = tmp_path / "sources.toml"
    cfg.write_text(f'[[source]]\nspec = "{tmp_path}"\n{entry}\n')
    with pytest.raises(ConfigError, match=match) as info:
        sourcelist.load(cfg)
    assert str(cfg) in str(info.value)


def test_a_hub_org_entry_with_model_is_refused_naming_the_entry(tmp_path):
    cfg = tmp_path / "sources.toml"
    cfg.write_text('[[source]]\nspec = "hub-org:open-llm-leaderboard"\nmodel = "a/b"\n')
    with pytest.raises(ConfigError, match=r"sources.toml: source #1 \(hub-org:open-llm-leaderboard\): model='a/b' "
                                          r"names one model"):
        sourcelist.load(cfg)


def test_hints_and_the_servers_quarantine_advice_for_a_configured_source_keep_its_options():
    """While a pass reads a configured source, a hint to pass an option names the command that sets it for that source,
    keeping its other options (a shell's `taskspace sources add`, a Python caller's `sourcelist.add`); the quarantine
    advice of `taskspace serve`'s worker (`taskspace ingest LOCATION --accept-partial` beside the server) gives the
    source's reading options too. Before, that command read the source without them: it stored another read (another
    model name, another metric), and the next pass, reading with the options, found a revision it had not stored."""
    from indexer.errors import CLI, SERVE, SOURCE, accept_partial_advice, option_hint

    spec = SourceSpec("/data/my run", format="lm_eval", model="org/m")
    assert option_hint("metric") == "metric="  # no configured source: ingest's words
    token = SOURCE.set(spec)
    try:
        assert option_hint("metric") == ("metric= (for this configured source: indexer.sourcelist.add(sources_file, "
                                         f"[{spec.with_options(metric='NAME')!r}]))")
        mode = CLI.set(SERVE)
        try:
            assert option_hint("metric") == ("--metric (for this configured source: `taskspace sources add "
                                             "'/data/my run' --format lm_eval --model org/m --metric NAME`)")
            assert accept_partial_advice("/data/my run/org__m", "lm_eval").startswith(
                "`taskspace ingest '/data/my run/org__m' --accept-partial --format lm_eval --model org/m` beside")
        finally:
            CLI.reset(mode)
    finally:
        SOURCE.reset(token)


def test_the_quarantine_advice_of_taskspace_index_for_a_configured_source_keeps_its_options():
    """`taskspace index` quarantines a configured source: its advice is the pass again with --accept-partial (which
    reads the configured sources with their options), or, for that source alone, the full `taskspace ingest` command
    with the source's format and reading options (the one serve's worker gives). Before, it said "--accept-partial
    (taskspace index or taskspace ingest)": `taskspace ingest SOURCE --accept-partial` read the source without its
    options, stored another read, and the next pass found a revision it had not stored. A Python caller is told the
    same in its words; `taskspace ingest` (no configured source) is told to give its own command again."""
    from indexer.errors import CLI, SOURCE, accept_partial_advice

    spec = SourceSpec("/data/my run", format="lm_eval", model="org/m", metric="acc")
    token = SOURCE.set(spec)
    try:
        said = accept_partial_advice("/data/my run/org__m", "lm_eval")
        assert "ingest('/data/my run/org__m', accept_partial=True, format='lm_eval', model='org/m', metric='acc')" in said
        assert "Indexer.run()" in said
        mode = CLI.set(True)
        try:
            said = accept_partial_advice("/data/my run/org__m", "lm_eval")
            assert said.startswith("`taskspace index --accept-partial`"), said
            assert ("`taskspace ingest '/data/my run/org__m' --accept-partial --format lm_eval --model org/m "
                    "--metric acc`") in said
        finally:
            CLI.reset(mode)
    finally:
        SOURCE.reset(token)
    mode = CLI.set(True)
    try:
        said = accept_partial_advice("/data/x.csv", None)
        assert "taskspace ingest" in said and "taskspace index" not in said, said
    finally:
        CLI.reset(mode)


def test_index_gives_its_reading_options_to_every_source_and_refuses_one_option_given_two_values(tmp_path):
    """`index --source A --source B --metric M` reads and configures both with M (as --format, the options are the
    pass's, one value each); its help says so. `--source A --metric m1 --source B --metric m2` read as per-source
    options was the trap: the last value silently read both sources (and was saved with each); now a usage error
    naming the option, both values and the way to give sources their own options, nothing saved."""
    ts = _cli(tmp_path)
    runs = []
    for name in ("fake-org__dummy-b", "fake-org__dummy-c"):
        shutil.copytree(LM_OUT / name, tmp_path / name)
        for f in (tmp_path / name).glob("samples_tiny_gen_arith_*.jsonl"):  # multiple-choice tasks only: acc_norm
            f.unlink()
        runs.append(tmp_path / name)
    a, b = runs
    r = ts("index", "--source", str(a), "--metric", "acc", "--source", str(b), "--metric", "acc_norm")
    assert r.returncode == 2, (r.stdout[-2000:], r.stderr[-2000:])
    msg = " ".join(r.stderr.split())
    assert "--metric was given 2 values ('acc', 'acc_norm')" in msg and "every --source" in msg, msg
    assert "taskspace sources add SPEC --metric M" in msg and "nothing was saved" in msg, msg
    assert ts("sources", "list").stdout.startswith("no sources configured")
    r = ts("index", "--source", str(a), "--format", "lm_eval", "--source", str(b), "--format", "table")
    assert r.returncode == 2 and "--format was given 2 values ('lm_eval', 'table')" in " ".join(r.stderr.split())
    # one value (given once, or the same twice) is every source's, as before
    r = ts("index", "--source", str(a), "--source", str(b), "--metric", "acc_norm", "--metric", "acc_norm", "--json")
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)["counts"]["sources"] == 2
    assert sorted(ts("sources", "list").stdout.strip().splitlines()) == [f"{a}  metric=acc_norm", f"{b}  metric=acc_norm"]
    env = dict(os.environ, COLUMNS="400", TASKSPACE_HOME=str(tmp_path / "home"))
    help_text = subprocess.run([sys.executable, "-m", "indexer.cli", "index", "--help"], capture_output=True, text=True,
                               env=env).stdout
    help_text = " ".join(help_text.replace("│", " ").split())
    assert ("--format and the reading options (--prompts, --model, --filter, --metric) apply to every --source given"
            in help_text), help_text
    assert "--prompts <path>" in help_text, help_text  # one value each time, as `ingest --prompts` shows it


def test_ingest_and_sources_add_refuse_one_option_given_two_values_as_index_does(tmp_path):
    """`taskspace ingest RUN --metric acc --metric acc_norm` and `taskspace sources add RUN --metric acc --metric
    acc_norm` are the usage error `index` gives (the option named with both values; nothing stored or saved); before,
    both silently took the last value. The same value twice is one value, as in `index`."""
    ts = _cli(tmp_path)
    run = tmp_path / "fake-org__dummy-b"
    shutil.copytree(LM_OUT / run.name, run)
    for f in run.glob("samples_tiny_gen_arith_*.jsonl"):  # multiple-choice tasks only: acc and acc_norm
        f.unlink()
    for args in (("ingest", str(run)), ("sources", "add", str(run))):
        r = ts(*args, "--metric", "acc", "--metric", "acc_norm")
        msg = " ".join(r.stderr.split())
        assert r.returncode == 2 and "--metric was given 2 values ('acc', 'acc_norm')" in msg, (args, r.stdout, msg)
        assert "takes one value" in msg, msg
        r = ts(*args, "--format", "lm_eval", "--format", "table")
        msg = " ".join(r.stderr.split())
        assert r.returncode == 2 and "--format was given 2 values ('lm_eval', 'table')" in msg, (args, r.stdout, msg)
    assert "nothing was ingested" in " ".join(ts("ingest", str(run), "--model", "a", "--model", "b").stderr.split())
    r = ts("ingest", "hub-org:my-org", "-n", "1", "--limit", "2")
    assert r.returncode == 2 and "--limit was given 2 values (1, 2)" in " ".join(r.stderr.split()), r.stderr
    assert "nothing was saved" in " ".join(ts("sources", "add", str(run), "--model", "a", "--model", "b").stderr.split())
    assert "does not exist: nothing is indexed" in ts("sources", "stored").stderr  # nothing stored, no database made
    assert ts("sources", "list").stdout.startswith("no sources configured")
    # the same value twice is that value
    r = ts("ingest", str(run), "--metric", "acc_norm", "--metric", "acc_norm", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["outcomes"] > 0, r.stderr[-2000:]
    r = ts("sources", "add", str(run), "--metric", "acc_norm", "--metric", "acc_norm")
    assert r.returncode == 0, r.stderr
    assert ts("sources", "list").stdout.strip() == f"{run}  metric=acc_norm"


def test_metric_per_task_on_the_command_line_and_in_sources_toml(tmp_path):
    """`--metric KEY --metric TASK=KEY` (ingest, index --source, sources add) reads a folder whose tasks need different
    keys (CALAMITA's comet_score and bert_f1); sources.toml stores it as an array of the same entries (a plain
    `metric = "KEY"`, as written before, still reads), `sources list` shows each, and a TASK naming no task of the
    source is a usage error naming it and the tasks found, nothing saved. Before, a second --metric was refused and
    one read every task, rejecting the other task's every row."""
    from helpers import write_calamita_run

    ts = _cli(tmp_path)
    run = write_calamita_run(tmp_path / "tests_calamita")
    r = ts("ingest", str(run), "--metric", "comet_score", "--metric", "gfg_*=bert_f1", "--no-metadata", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["outcomes"] == 7, (r.stdout, r.stderr[-2000:])
    r = ts("sources", "add", str(run), "--metric", "comet_score", "--metric", "gfg_task_9=bert_f1")
    msg = " ".join(r.stderr.split())
    assert r.returncode == 2 and "--metric 'gfg_task_9=bert_f1': no task 'gfg_task_9'" in msg, msg
    assert "MT_CALAMITA_it_en_public, gfg_task_1_1" in msg and "nothing was saved" in msg, msg
    r = ts("sources", "add", str(run), "--metric", "gfg_task_1_1=bert_f1", "--metric", "comet_score")
    assert r.returncode == 0, r.stderr
    toml = tmp_path / "home" / "sources.toml"
    assert sourcelist.load(toml)[0].metric == ("comet_score", "gfg_task_1_1=bert_f1")
    assert 'metric = [\n    "comet_score",\n    "gfg_task_1_1=bert_f1",\n]' in toml.read_text(), toml.read_text()
    assert ts("sources", "list").stdout.strip() == f"{run}  metric=comet_score  metric=gfg_task_1_1=bert_f1"
    r = ts("sources", "add", str(run), "--metric", "comet_score", "--metric", "gfg_task_1_1=bert_f1")
    assert "configured already (nothing changed)" in r.stdout, r.stdout + r.stderr  # one read, in either order
    r = ts("index", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["counts"]["outcomes_added"] == 7, r.stderr[-2000:]
    # a file written by hand: a string as before, an array of entries, a bad entry said of the file
    toml.write_text(f'[[source]]\nspec = "{run}"\nmetric = "comet_score"\n')
    assert sourcelist.load(toml)[0].metric == "comet_score"
    toml.write_text(f'[[source]]\nspec = "{run}"\nmetric = ["gfg_*=bert_f1", "comet_score"]\n')
    assert sourcelist.load(toml)[0].metric == ("comet_score", "gfg_*=bert_f1")
    for bad in ('["comet_score", 5]', '[]', '["a", "b"]'):
        toml.write_text(f'[[source]]\nspec = "{run}"\nmetric = {bad}\n')
        with pytest.raises(ConfigError, match="source #1"):
            sourcelist.load(toml)
    r = ts("index", "--source", str(tmp_path / "tests_calamita"), "--metric", "comet_score", "--metric", "bert_f1")
    msg = " ".join(r.stderr.split())
    assert r.returncode == 2 and "--metric was given 2 values ('comet_score', 'bert_f1')" in msg, msg
    env = dict(os.environ, COLUMNS="400", TASKSPACE_HOME=str(tmp_path / "home"))
    for cmd in (["ingest"], ["index"], ["sources", "add"]):
        help_text = subprocess.run([sys.executable, "-m", "indexer.cli", *cmd, "--help"], capture_output=True,
                                   text=True, env=env).stdout
        assert "TASK=KEY for one task" in " ".join(help_text.replace("│", " ").split()), (cmd, help_text)


def test_one_path_written_twice_with_two_reading_options_is_read_at_the_later_entry(tmp_path, caplog):
    """A hand-written `sources.toml` with one path twice (`/x` with metric acc, `/x/` with metric acc_norm; or with
    another format or limit) is one stored source, as one Hub repo written twice is: read once, at the later entry (the
    one `taskspace sources add` keeps), in the earlier entry's place, with one warning naming both entries with their
    options, the one read and the command that leaves it; `sources add` of that path leaves one entry. The same entry
    written twice is read once. Before, both stayed two entries (with a warning), each pass reading the path twice,
    each read replacing the other's results."""
    import logging

    run = LM_OUT / "fake-org__dummy-b"
    other = LM_OUT / "fake-org__dummy-a"
    cfg = tmp_path / "sources.toml"
    cfg.write_text(f'[[source]]\nspec = "{run}"\nmetric = "acc"\n\n[[source]]\nspec = "{other}"\n\n'
                   f'[[source]]\nspec = "{run}/"\nmetric = "acc"\n\n[[source]]\nspec = "{run}/"\nmetric = "acc_norm"\n')
    with caplog.at_level(logging.WARNING, logger="indexer.sourcelist"):
        got = sourcelist.load(cfg)
    assert got == [SourceSpec(str(run), metric="acc_norm"), SourceSpec(str(other))]
    said = " ".join(caplog.text.split())
    assert "source #3 is source #1 again" in said, said  # the same entry twice: read once
    assert (f"{cfg}: source #1 ({run} with metric='acc') and source #4 ({run} with metric='acc_norm') are one path "
            f"({run}), which is one stored source: source #4 ({run} with metric='acc_norm') is read, source #1 is not; "
            f"delete one of the two entries (`taskspace sources add {run} --metric acc_norm` leaves the one read)"
            in said), said
    assert sourcelist.add(cfg, [SourceSpec(str(run), metric="acc_norm")]) == got  # and `sources add` leaves one


def test_an_option_a_hand_written_entry_gives_a_format_that_takes_none_says_the_command_that_drops_it(tmp_path):
    """A hand-written `sources.toml` entry of a table folder with `model = "x"` (an lm-eval option): the pass records
    the error at that source, now saying the command that configures it without the option (`taskspace sources add
    SPEC`, which replaces the entry); before, "drop --model" alone, an option of no command the user gave."""
    from helpers import write_table

    ts = _cli(tmp_path)
    data = tmp_path / "table"
    write_table(data, "bench", {"m1": [1, 0]}, 2)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "sources.toml").write_text(f'[[source]]\nspec = "{data}"\nmodel = "x"\n')
    r = ts("index", "--json")
    assert r.returncode == 1, r.stderr[-2000:]
    (err,) = json.loads(r.stdout)["errors"]
    assert err["message"] == ("--model applies only to lm_eval and lighteval sources, not to this table source; drop "
                              f"--model (for this configured source: `taskspace sources add {data}`)"), err
    assert ts("sources", "add", str(data)).returncode == 0  # as it says: the entry without model
    assert ts("sources", "list").stdout.strip() == str(data)
