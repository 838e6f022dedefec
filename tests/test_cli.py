import json
import subprocess
import sys

import pytest


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True, env=env)


def test_bad_setting_is_one_line_with_exit_code(monkeypatch):
    import os

    env = dict(os.environ, TASKSPACE_LAMBDA="oops")
    res = run("demo", env=env)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1].startswith("error: TASKSPACE_LAMBDA='oops'")
    assert "Traceback" not in res.stderr
    res = run("demo", "--json", env=env)  # under --json, the error as JSON (test_errors_under_json_are_json)
    assert res.returncode == 2
    assert json.loads(res.stderr.strip().splitlines()[-1])["error"].startswith("TASKSPACE_LAMBDA='oops'")
    res = run("--debug", "demo", env=env)
    assert "Traceback" in res.stderr


def test_demo_presents_its_answers_as_search_does(encoder, taskspace_home):
    """`taskspace demo` indexes the bundled sample into a throwaway home (the pass of `taskspace index`, no Hub
    metadata) and answers each prompt with `find_models`, printed by search's own table: Hub ids or API names (the
    identity rules: `gpt-4o`, not the sample's raw `gpt-4o(eval_results/gpt4o)`), calibrated P(success) and 90%
    intervals, and nothing left in TASKSPACE_HOME. Before, it fitted the solver in memory and printed raw model names
    beside raw solver scores ("predicted +0.526   observed acc 0.726"), numbers `taskspace search` never shows."""
    from typer.testing import CliRunner

    from indexer.cli import app
    from indexer.demo import run_demo

    out = run_demo(["Which enzyme is most specific for myocardial infarction?"], top=3)
    assert out.models == 25 and out.prompts == 420
    ((prompt, answer),) = out.queries
    assert len(answer.results) == 3
    names = [r.model for r in answer.results]
    assert "gpt-4o" in names and not any("(" in n for n in names), names  # identity rules applied
    rows = [r.to_dict() for r in answer.results]
    probs = [r["probability"] for r in rows]
    assert probs == sorted(probs, reverse=True) and all(0 < p < 1 for p in probs)
    assert all(r["interval"] is not None and r["interval"][0] <= r["probability"] <= r["interval"][1] for r in rows)
    d = json.loads(json.dumps(out.to_dict()))
    assert d["queries"][0]["prompt"] == prompt and d["queries"][0]["results"][0]["model"] == names[0]
    assert not taskspace_home.exists() or not any(taskspace_home.iterdir())  # the user's home untouched
    res = CliRunner().invoke(app, ["demo", "-k", "2", "-p", "Compute the derivative of x^3 sin(x)."])
    assert res.exit_code == 0, res.output
    assert "P(success)" in res.stdout and "90% interval" in res.stdout and "gpt-4o (API)" in res.stdout
    assert "predicted" not in res.stdout and "eval_results" not in res.stdout


def test_debug_keeps_the_exit_code():
    """--debug shows the traceback and still exits with the error's code (2 for a bad setting, not 1)."""
    import os

    env = dict(os.environ, TASKSPACE_LAMBDA="oops")
    res = run("--debug", "demo", env=env)
    assert "Traceback" in res.stderr and "ConfigError" in res.stderr
    assert res.returncode == 2


def test_errors_name_the_path_once(tmp_path):
    """A missing source path is named once (`/x: no such file`, never `/x: /x: no such file`), in `ingest` and in the
    run report of `index`."""
    import os

    env = dict(os.environ, TASKSPACE_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1")
    missing = str(tmp_path / "nope")
    res = run("ingest", missing, env=env)
    assert res.returncode == 1
    assert res.stderr.strip().splitlines()[-1] == f"error: {missing}: no such file or folder"  # no Hub hint for /x
    from indexer.ingest import IngestSummary
    from indexer.errors import InputError

    s = IngestSummary()
    s.add_error(InputError("no such file or folder", file=missing), missing)
    assert str(s.errors[0]) == f"{missing}: no such file or folder"


def test_index_and_sources_add_name_a_missing_source_path_once(tmp_path):
    """`index --source /x` and `sources add /x` name a missing path once, as `ingest` does (before: "source '/x': no
    such file or folder (/x)"); nothing is saved in sources.toml."""
    import os

    env = dict(os.environ, TASKSPACE_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1")
    missing = str(tmp_path / "nope")
    for args in (("index", "--source", missing), ("sources", "add", missing)):
        res = run(*args, env=env)
        assert res.returncode == 2, (args, res.stderr)
        line = res.stderr.strip().splitlines()[-1]
        assert line.startswith(f"error: {missing}: no such file or folder; nothing was saved") and \
            line.count(missing) == 1, (args, line)
    assert not (tmp_path / "home" / "sources.toml").exists()


def test_a_bad_option_value_is_a_usage_error_not_a_traceback(taskspace_script):
    """typer vendors its own click: its BadParameter / NoSuchOption escaped `main` as a traceback with exit 1."""
    for args, words in ((["search", "--top", "many", "x"], "Invalid value for '--top'"),
                        (["search", "--no-such-option"], "No such option"),
                        (["worker", "--max-passes", "two", "--every", "1h"], "Invalid value for '--max-passes'"),
                        (["search", "x", "--license"], "requires an argument"),
                        (["db", "upgrade", "--url"], "requires an argument")):
        res = subprocess.run([taskspace_script, *args], capture_output=True, text=True)
        assert res.returncode == 2 and words in res.stderr and "Traceback" not in res.stderr, (args, res.stderr[-800:])
        # the help it points at is the command's (an option without its value comes without the parser's context)
        command = " ".join(a for a in args[:2] if not a.startswith("-") and a != "x")
        assert f"(see `taskspace {command} -h`)" in res.stderr, (args, res.stderr)


def test_an_unexpected_error_escapes_as_itself(monkeypatch):
    """An error that is neither the library's nor a usage error leaves `main` as it is (a traceback of the real cause).
    Before, the handler looked up `Abort` in typer's vendored click, which has none, and raised AttributeError over it."""
    from indexer import cli, demo

    def boom(*a, **k):
        raise RuntimeError("the real cause")

    monkeypatch.setattr(demo, "run_demo", boom)
    monkeypatch.setattr(sys, "argv", ["taskspace", "demo"])
    with pytest.raises(RuntimeError, match="the real cause"):
        cli.main()


def test_an_error_whose_cause_spans_lines_is_still_one_line(monkeypatch, capsys):
    """README: an error prints one line (`error: ...`). A library error whose message carries a cause of several
    lines (transformers' "We couldn't connect to 'https://huggingface.co' ...\nCheck your internet connection ..."
    inside "cannot load encoder ...") is printed on one line, its line breaks folded into spaces, with its exit code.
    Before, `taskspace evaluate DATA --encoder no-such/encoder` offline printed it on two lines."""
    import os

    from indexer import cli, demo
    from indexer.errors import EncoderError

    def boom(*a, **k):
        raise EncoderError("cannot load encoder 'x': We couldn't connect.\nCheck your internet connection.\n; hint")

    monkeypatch.setattr(demo, "run_demo", boom)
    monkeypatch.setattr(sys, "argv", ["taskspace", "demo"])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == EncoderError.exit_code
    assert capsys.readouterr().err == "error: cannot load encoder 'x': We couldn't connect. Check your internet connection. ; hint\n"
    sample = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "indexer" / "data" / "sample")
    res = run("evaluate", sample, "--encoder", "no-such-org/no-such-encoder", "--no-sweep",
              env=dict(os.environ, HF_HUB_OFFLINE="1"))
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 5 and len(lines) == 1 and lines[0].startswith("error: cannot load encoder"), res.stderr


@pytest.mark.parametrize("value", ["0", "-3"])
def test_demo_top_below_one_is_a_usage_error(value):
    """`taskspace demo -k 0` is a usage error (exit 2, one line naming `--top`), as `search -k 0` is, before the
    sample is fitted; before, it printed the header and no result with exit 0. The library refuses it too."""
    res = run("demo", "-k", value)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and res.stdout == "", res.stderr[-2000:]
    assert "'--top'" in lines[0] and "greater than or equal to 1" in lines[0], lines
    from indexer.demo import run_demo
    from indexer.errors import InputError

    with pytest.raises(InputError, match="top: must be an integer of at least 1"):
        run_demo(["x"], top=int(value))


@pytest.mark.parametrize("value", ["", "   "])
def test_a_demo_prompt_without_text_is_a_usage_error_naming_which(value):
    """`taskspace demo -p ok -p ""`: one line naming `--prompt` and which one (the 2nd), exit 2, before the sample is
    fitted; before, "prompt #1: prompt text is empty" (the encoder's 0-based index) with exit 1, and a NUL was
    embedded as text. The library refuses it too, naming `queries[1]`."""
    res = run("demo", "-p", "What is 2 + 2?", "-p", value)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and res.stdout == "", res.stderr[-2000:]
    assert "'--prompt'" in lines[0] and "the 2nd" in lines[0] and "empty prompt text" in lines[0], lines
    from indexer.demo import run_demo
    from indexer.errors import InputError

    for bad in (value, "a\x00b"):  # (a NUL cannot be passed on a command line)
        with pytest.raises(InputError, match=r"queries\[1\]"):
            run_demo(["What is 2 + 2?", bad])


def _command_paths():
    """Every command and command group of ``taskspace`` as its path of names (``("sources", "add")``)."""
    import typer.main

    from indexer.cli import app

    def walk(cmd, path):
        if path:
            yield path, cmd
        if hasattr(cmd, "commands"):  # a group (typer 0.29 vendors its own click: no isinstance check)
            for name, sub in sorted(cmd.commands.items()):
                yield from walk(sub, (*path, name))

    return list(walk(typer.main.get_command(app), ()))


def test_every_command_has_help_with_examples_of_itself():
    """The README: "Every command has `--help` (`-h`) with examples". Each command's and group's `-h` shows an
    Examples section with at least one line that runs that very command. Before, only search, models, benchmarks,
    model, serve, evaluate and `taskspace` itself had one: index, worker, runs, ingest, reindex, check, publish,
    pull, demo, sources and db did not."""
    import re

    from typer.testing import CliRunner

    from indexer.cli import app

    paths = _command_paths()
    assert {" ".join(p) for p, _ in paths} >= {"index", "worker", "runs", "search", "sources", "sources add", "db",
                                               "db upgrade", "publish", "pull", "ingest", "evaluate", "serve"}
    lacking = []
    for path, _ in paths:
        res = CliRunner().invoke(app, [*path, "-h"], terminal_width=200)
        assert res.exit_code == 0, (path, res.output)
        text = res.output
        after = re.split(r"\bExamples?:", text, maxsplit=1)[1] if re.search(r"\bExamples?:", text) else ""
        own = [line for line in after.splitlines()
               if line.strip(" │").startswith(f"taskspace {' '.join(path)}")]
        if not own:
            lacking.append(" ".join(path))
    assert lacking == []


def test_every_commands_help_shows_its_examples_indented_as_written():
    """Each command's `-h` shows its example lines indented under "Examples:" as its docstring writes them (two
    spaces), none reflowed into a paragraph. Before, every command whose text after "Examples:" was all indented
    (`sources add`, `search`, `serve`, ... 25 of 30) showed its examples flush with the prose: typer dedented the text
    after the first paragraph by its common indentation."""
    import os
    import re
    import subprocess
    import sys

    flush = []
    # each help in a fresh interpreter, as a user runs it: in the suite's process, the state earlier test modules left
    # (seen once in CI's fixed order, not reproduced alone) must not decide what this checks
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "HF_HUB_OFFLINE": "1"}
    for path, _ in _command_paths():
        lines = subprocess.run([sys.executable, "-m", "indexer.cli", *path, "-h"], capture_output=True, text=True,
                               env=env, timeout=120).stdout.splitlines()
        at = next((i for i, line in enumerate(lines) if re.match(r"\s*Examples?:", line)), None)
        if at is None:
            continue
        margin = len(lines[at]) - len(lines[at].lstrip())
        examples = [line for line in lines[at + 1:] if line.lstrip().startswith("taskspace ")]
        assert examples, path
        if any(len(line) - len(line.lstrip()) != margin + 2 for line in examples):
            flush.append(" ".join(path) or "taskspace")
    assert flush == []


def test_the_help_gives_no_value_to_a_flag_and_one_value_to_a_repeatable_option():
    """`-h` shows what an option takes: a flag (`--open-only`, `--json`, `--metadata/--no-metadata`) and the counter
    `-v` nothing, a repeatable option (`--license`, `-m`, `--kind`) the type of its one value (`<str>`), an option with a
    value its type; before, typer 0.29's rich help wrote "--open-only <bool>", "-v <int>" and "--license <list[str]>",
    as if a flag took a value (`--open-only true` is "unexpected extra argument") and --license a list."""
    import re

    from typer.testing import CliRunner

    from indexer.cli import app

    def line(args, option):
        res = CliRunner().invoke(app, [*args, "-h"], terminal_width=200)
        assert res.exit_code == 0, res.output
        (got,) = [ln for ln in res.output.splitlines() if re.search(rf"│ {re.escape(option)}\b", ln)]
        return got

    for args, option in ((["models"], "--open-only"), (["models"], "--json"), (["search"], "--exclude-gated"),
                         ([], "--verbose"), ([], "--debug"), (["ingest"], "--metadata"), (["evaluate"], "--sweep")):
        assert "<" not in line(args, option), (args, option)
    for args, option in ((["models"], "--license"), (["search"], "--model"), (["reindex"], "--kind")):
        got = line(args, option)
        assert "<str>" in got and "list[" not in got, (args, option, got)
    assert "<int range> [x>=1]" in line(["models"], "--limit") and "<str>" in line(["search"], "--benchmark")


def test_arguments_are_named_in_the_usage_and_errors_as_the_readme_writes_them():
    """Every command's arguments are named in capitals, as the README writes them and as `search`'s PROMPT and
    `model`'s ID already were: the usage line (`taskspace pull [OPTIONS] {SOURCE}`) and a missing argument ("Missing
    argument 'ORG/NAME'"), with the type of one value (`DATA <str>`, not `<list[str]>`); before, typer's lowercase
    parameter names: "{source}", "{repo}", "{data}...", "Missing argument 'spec'"."""
    import re

    from typer.testing import CliRunner

    from indexer.cli import app

    want = {("ingest",): "SOURCE", ("pull",): "SOURCE", ("publish",): "ORG/NAME", ("evaluate",): "DATA",
            ("sources", "add"): "SPEC", ("sources", "remove"): "SPEC", ("sources", "drop"): "LOCATION",
            ("db", "downgrade"): "REVISION", ("model",): "ID"}
    for path, name in want.items():
        res = CliRunner().invoke(app, [*path, "-h"], terminal_width=200)
        usage = next(ln for ln in res.output.splitlines() if "Usage:" in ln)
        assert f"{{{name}}}" in usage, (path, usage)
        res = CliRunner().invoke(app, list(path))
        assert res.exit_code == 2 and f"Missing argument '{name}'" in res.output, (path, res.output)
    res = CliRunner().invoke(app, ["db", "upgrade", "-h"], terminal_width=200)
    assert "[REVISION]" in next(ln for ln in res.output.splitlines() if "Usage:" in ln)
    res = CliRunner().invoke(app, ["evaluate", "-h"], terminal_width=200)
    assert re.search(r"│ \* +DATA +<str> ", res.output), res.output


@pytest.mark.parametrize("args,hint", [
    (["models", "-v"], "; -v is an option of taskspace itself: put it before the command, taskspace -v models ..."),
    (["search", "x", "--debug"], "; --debug is an option of taskspace itself: put it before the command, "
                                 "taskspace --debug search ..."),
    (["sources", "list", "--verbose"], "put it before the command, taskspace --verbose sources list ..."),
    (["models", "--version"], "; --version is an option of taskspace itself: put it before the command, "
                              "taskspace --version"),
])
def test_a_global_option_after_the_command_is_told_to_go_before_it(args, hint):
    """`taskspace models -v` (`--debug`, `--verbose`, `--version` after a command name): the one-line usage error
    (exit 2) says the option is taskspace's own and where it goes; before, only "No such option: -v", though the
    README lists `-v` and `--debug` as global options."""
    res = run(*args)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and "No such option" in lines[0], res.stderr
    assert lines[0].endswith(hint) or hint in lines[0], lines[0]


@pytest.mark.parametrize("args,hint", [
    (["search", "x", "-n", "5"], "; taskspace search takes how many models as -k/--top N"),
    (["search", "x", "--limit", "5"], "; taskspace search takes how many models as -k/--top N"),
    (["models", "-k", "5"], "; taskspace models takes how many models as -n/--limit N"),
    (["models", "--top", "5"], "; taskspace models takes how many models as -n/--limit N"),
])
def test_the_other_listings_count_option_names_this_ones(args, hint):
    """`taskspace search QUERY -n 5` (as `taskspace models -n 5` pages) or `models -k 5` (as `search -k 5`): the
    one-line usage error (exit 2) names the command's own option for how many models; before, only "No such option:
    -n", found walking a 32,823-model home."""
    res = run(*args)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and "No such option" in lines[0], res.stderr
    assert lines[0].endswith(hint), lines[0]


def test_the_top_help_lists_the_exit_codes_as_the_errors_have_them():
    """`taskspace -h` lists the exit codes (the README's "exit with a code by kind"), each as the error classes carry
    it; before, only the README said which code means what, nothing a user running the command could read."""
    import re

    from typer.testing import CliRunner

    from indexer import errors
    from indexer.cli import app

    text = " ".join(CliRunner().invoke(app, ["-h"], terminal_width=200).output.split())
    said = re.search(r"Exit codes: (.*?\.)", text)
    assert said, text
    codes = dict((int(n), what) for n, what in re.findall(r"(\d+) ([a-zA-Z][^;,]*)", said.group(1)))
    assert codes[0] == "done" and codes[2].startswith("usage or configuration") and codes[130] == "interrupted"
    for cls, word in ((errors.InputError, "input"), (errors.NotFoundError, "input"), (errors.ConfigError, "usage"),
                      (errors.StoreError, "storage"), (errors.HubError, "Hugging Face Hub"),
                      (errors.EncoderError, "encoder"), (errors.BusyError, "busy")):
        assert codes[cls.exit_code].startswith(word), (cls, codes)
    assert codes[143] == "terminated (SIGTERM)" and codes[129].startswith("hung up (SIGHUP")


def _single_valued_options():
    """(command path, option, its two spellings of two values) for every single-valued option of every command and
    group of the app (a flag pair: its two flags), the help options and counters aside."""
    import typer.main

    from indexer.cli import app

    out, todo = [], [((), typer.main.get_command(app))]
    while todo:
        path, cmd = todo.pop()
        todo += [((*path, name), sub) for name, sub in sorted(getattr(cmd, "commands", {}).items())]
        for p in cmd.params:
            if getattr(p, "param_type_name", "") != "option" or p.multiple or p.count or "--help" in p.opts:
                continue
            name = max(p.opts, key=len)
            if p.is_flag:
                if p.secondary_opts:
                    out.append((path, f"{name}/{max(p.secondary_opts, key=len)}", [name, max(p.secondary_opts, key=len)]))
                continue
            choices = list(p.type_descriptor.choices or [])[:2] if p.type_descriptor.is_choice else []
            a, b = (str(getattr(c, "value", c)) for c in choices) if len(choices) == 2 else ("1", "2")
            out.append((path, name, [name, a, name, b]))
    return out


def test_every_single_valued_option_of_every_command_given_two_values_is_refused(capsys):
    """Any command's single-valued option given twice with two values (`check --space a --space b`, `evaluate D
    --seeds 1 --seeds 2`, `serve --port 1 --port 2`), and a flag pair given both ways (`ingest S --metadata
    --no-metadata`), is a usage error naming the option and both values (exit 2, one line, before the command runs),
    as `search`, `models` and `model` refuse theirs; before, every other command silently took the last value."""
    from helpers import run_cli

    cases = _single_valued_options()
    named = {(" ".join(path), name) for path, name, _ in cases}
    for want in (("check", "--space"), ("evaluate", "--seeds"), ("serve", "--port"), ("publish", "--space"),
                 ("pull", "--space"), ("reindex", "--space"), ("ingest", "--metadata/--no-metadata"), ("worker", "--every")):
        assert want in named, want
    wrong = []
    for path, name, given in cases:
        rc, out, err = run_cli(capsys, *path, *given)
        lines = err.strip().splitlines()
        if not (rc == 2 and out == "" and len(lines) == 1 and lines[0].startswith(f"error: {name} was given 2 values")
                and "once" in lines[0]):
            wrong.append((path, given, rc, out, err))
    assert wrong == [], wrong


def test_the_same_value_of_an_option_twice_is_one_value(capsys, tmp_path):
    """`--url U --url U`: one value, as `search -k 2 -k 2` is (the command runs); `03` reads as 3 does."""
    from helpers import run_cli

    url = f"sqlite:///{tmp_path / 'x.db'}"
    rc, out, err = run_cli(capsys, "db", "current", "--url", url, "--url", url)
    assert rc == 0 and "current (empty)" in out, (rc, out, err)
    rc, out, err = run_cli(capsys, "demo", "-k", "3", "-k", "03", "-k", "4", "--json")
    assert rc == 2 and "--top was given 2 values (3, 4)" in err, (rc, out, err)


def test_errors_under_json_are_json_on_stderr_with_the_exit_code(taskspace_home, capsys):
    """With `--json` an error is one JSON object on stderr, `{"error": MESSAGE, "exit": CODE}`, the message and code of
    the plain `error: MESSAGE` line: a library error (search on an empty index, exit 1), a usage error (exit 2) and a
    bad option value of another command; without `--json`, or with `--json` only after `--` (a prompt's text), the
    plain line. Before, a program calling `taskspace search --json` got the plain line, which it could not parse."""
    from helpers import run_cli

    code, out, err = run_cli(capsys, "search", "What is 2+2?", "--json")
    said = json.loads(err)
    assert code == 1 and out == "" and said["exit"] == 1 and said["error"].startswith("the index is empty: run "
                                                                                     "`taskspace index` first")
    code, out, plain = run_cli(capsys, "search", "What is 2+2?")
    assert code == 1 and plain == f"error: {said['error']}\n"
    code, _, err = run_cli(capsys, "models", "--limit", "0", "--json")
    assert code == 2 and json.loads(err) == {"error": "taskspace models: Invalid value for '--limit' / '-n': Input "
                                                      "should be greater than or equal to 1 (see `taskspace models -h`)",
                                             "exit": 2}
    code, _, err = run_cli(capsys, "search", "-k", "0", "--json", "x")
    assert code == 2 and json.loads(err)["error"].startswith("taskspace search: Invalid value for '--top' / '-k'")
    code, _, err = run_cli(capsys, "search", "--", "--json")
    assert code == 1 and err.startswith("error: the index is empty")


@pytest.mark.parametrize("raised, code, said", [
    (KeyboardInterrupt, 130, "interrupted: what was committed is kept"),
    (EOFError, 1, "aborted"),
])
def test_an_interrupted_or_aborted_command_under_json_says_so_in_json(monkeypatch, capsys, raised, code, said):
    """Under `--json` the interrupt line (Ctrl-C: exit 130, its what-was-kept sentence; also 143/129) and "aborted"
    (an end of input: exit 1) are the JSON object every other error is, `{"error": ..., "exit": CODE}`; without
    `--json` the plain lines as before. Before, they were plain text under `--json` too, which a program reading the
    command's JSON could not parse."""
    from helpers import run_cli

    from indexer import demo

    def stop(*a, **k):
        raise raised()

    monkeypatch.setattr(demo, "run_demo", stop)
    rc, out, err = run_cli(capsys, "demo", "--json")
    assert rc == code and out == "", (rc, out, err)
    got = json.loads(err)
    assert got["exit"] == code and got["error"].startswith(said), err
    rc, out, err = run_cli(capsys, "demo")
    assert rc == code and err.strip().startswith(said) and not err.lstrip().startswith("{"), err


@pytest.mark.parametrize("args", [["--version"], ["-h"], ["benchmarks", "-h"], ["db", "current", "--url", "sqlite://"]])
def test_output_to_a_closed_pipe_exits_141_silently_not_as_an_input_error(args, tmp_path):
    """`taskspace models | head -1`: the reader closes the pipe before the command has written its output. The
    command stops without a word and exits 141 (128 + SIGPIPE, as a shell shows a program SIGPIPE ended), which
    `set -o pipefail` scripts know; before, typer's handler exited 1, the code of an input error (README: "1 input"),
    so a script read "bad input" for a listing cut short on purpose."""
    import os

    read, write = os.pipe()
    os.close(read)  # the reader has gone: every write to the pipe is EPIPE
    try:
        res = subprocess.run([sys.executable, "-m", "indexer.cli", *args], stdout=write, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, "TASKSPACE_HOME": str(tmp_path)})
    finally:
        os.close(write)
    assert res.returncode == 141, (res.returncode, res.stderr)
    assert res.stderr == ""


@pytest.mark.parametrize("as_json", [False, True])
def test_a_long_listing_cut_short_by_its_reader_exits_141(as_json, tmp_path):
    """`taskspace models | head -1` on a large home (4.7 MB of table, 32,823 models): the reader takes the first line
    and goes; the command stops without a word and exits 141, as it does for a reader gone before it wrote. Before, the
    table (and `--json`) was one write, which the pipe took in part when its reader left, and Python counted that as
    done: the rest was dropped and the command exited 0, as if the whole listing had been read."""
    import os
    import textwrap

    script = textwrap.dedent(f"""
        import sys
        import indexer.browse
        indexer.browse.list_benchmarks = lambda: [
            {{"name": f"bench/{{i:06d}}", "group": "bench", "prompts": i, "models": 3}} for i in range(60000)]
        from indexer.cli import main
        sys.argv = ["taskspace", "benchmarks"{', "--json"' if as_json else ''}]
        main()
    """)
    reader = subprocess.Popen(["head", "-c", "10"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        res = subprocess.run([sys.executable, "-c", script], stdout=reader.stdin, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "TASKSPACE_HOME": str(tmp_path)}, timeout=120)
    finally:
        reader.stdin.close()
        reader.wait()
    assert res.returncode == 141, (res.returncode, res.stderr)
    assert res.stderr == ""


@pytest.mark.parametrize("group", [[], ["db"], ["sources"], ["spaces"]])
def test_the_command_list_wraps_each_summary_at_the_width_not_at_the_docstrings_line_breaks(group):
    """`taskspace -h` (and a group's `-h`) lists each command with its summary, the first paragraph of its help, wrapped
    at the terminal's width as the command's own `-h` wraps it; before, typer's command list kept the line breaks of
    the docstring, so `demo`'s summary broke after "for sample prompts" and `evaluate`'s after "(the paper's", short
    lines in the middle of the panel at any width."""
    import re

    from typer.testing import CliRunner

    from indexer.cli import app

    out = CliRunner().invoke(app, [*group, "-h"], terminal_width=100).output
    panel = out[out.index("─ Commands ─"):].split("\n")[1:]
    panel = panel[:next(i for i, line in enumerate(panel) if line.startswith("╰"))]
    width = max(len(line) for line in panel)
    name_col = min(len(m.group(1)) for line in panel if (m := re.match(r"(│ \S+ +)\S", line)))
    rows: list[list[str]] = []
    for line in panel:
        cell = line[name_col:].rstrip("│").rstrip()
        if line[2] != " ":
            rows.append([cell])
        else:
            rows[-1].append(cell)
    room = width - name_col - 3  # the description column's width, less its border and padding
    for row in rows:
        for line, after in zip(row, row[1:]):
            assert len(line) + 1 + len(after.split()[0]) > room, (line, after, room)


def test_no_color_removes_the_colour_and_keeps_the_emphasis_as_readme_says():
    """`NO_COLOR=1` on a terminal (forced here: TTY_COMPATIBLE=1): the help and the tables carry no colour code (SGR
    30-38, 40-48, 90-107), only bold, dim and italic, as rich reads no-color.org and README says; `TERM=dumb` no escape
    at all. A guard: checked when the CLI was suspected of colouring under NO_COLOR (it did not)."""
    import os
    import re

    env = dict(os.environ, TTY_COMPATIBLE="1", COLUMNS="100", HF_HUB_OFFLINE="1")
    env.pop("FORCE_COLOR", None)
    table = ("from indexer.cli_find import _table; _table('t', [('model', 'left'), ('p', 'right')], "
             "[['org/a', '0.5'], ['org/b', '0.4']], caption='c')")
    for extra, allowed in (({}, None), ({"NO_COLOR": "1"}, {"0", "1", "2", "3"}), ({"TERM": "dumb"}, set())):
        for argv in (["-m", "indexer.cli", "-h"], ["-c", table]):
            out = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120,
                                 env={**env, **extra}).stdout
            codes = {c for m in re.findall(r"\x1b\[([0-9;]*)m", out) for c in m.split(";")}
            if allowed is None:  # the terminal is styled at all (else this test checks nothing)
                assert codes - {"0"}, argv
            else:
                assert codes <= allowed, (extra, argv, sorted(codes - allowed))


def test_run_demo_refuses_no_prompt_and_a_set_of_them_as_find_models_does():
    """`indexer.demo.run_demo([])` (no prompt) and `run_demo({"a", "b"})` (a set: no order to answer in) are the
    InputError naming `queries`, before the sample is indexed, as `find_models` refuses such prompts (the demo checks
    its prompts with find's check). Before, a check of its own indexed the sample for an empty list and answered
    nothing, and took a set in whatever order it iterated (found comparing the two checks)."""
    from indexer.demo import run_demo
    from indexer.errors import InputError

    for bad, said in (([], "queries is an empty list: give at least one prompt"),
                      ({"a", "b"}, "queries must be a string or a list of strings, not set")):
        with pytest.raises(InputError) as err:
            run_demo(bad, top=1)
        assert err.value.item == "queries" and said in str(err.value), err.value


def test_run_demo_takes_one_prompt_as_a_string_and_names_queries_that_are_no_text():
    """`indexer.demo.run_demo("What is 2 + 2?")` is one query, as `find_models("...")` takes one prompt; before, the
    string was iterated as one query per character (its space refused as a blank `queries[4]`). `None` or a list
    holding a number is the InputError naming `queries` / `queries[i]`, before the sample is fitted (before, a
    TypeError)."""
    from indexer.demo import run_demo
    from indexer.errors import InputError

    with pytest.raises(InputError, match="NUL") as err:  # refused before the sample is fitted
        run_demo("What is 2 + 2?\x00", top=1)
    assert err.value.item == "queries[0]"
    for bad, item in ((None, "queries"), (3, "queries"), (b"What", "queries"), (["ok", 3], "queries[1]")):
        with pytest.raises(InputError, match="must be") as err:
            run_demo(bad, top=1)
        assert err.value.item == item


def test_no_message_or_help_text_hedges_a_count_with_s_in_brackets():
    """No string of indexer/ a user reads (a message, a log line, a --help text; docstrings and comments aside, and
    command docstrings hold none) writes a noun hedged "(s)": a count says its noun by `indexer.errors.counted`, a list
    by `indexer.errors.noun` ("missing columns model, score", "1 error: this input was rejected", "unknown query
    parameter ['top']"). Before, "1 error(s)", "missing column(s) model", check's "solve the 1 model(s)", `sources
    stored`'s "outcome cell(s)", publish's "pulled model(s)", the server's "unknown query parameter(s)" and 40 more,
    and `taskspace evaluate`'s protocol line ("5 seed(s)", now "5 seeds", as docs/RESULTS.md quotes it): none is
    exempt."""
    import ast
    import re
    from pathlib import Path

    import indexer

    root = Path(indexer.__file__).parent
    hedged = []
    for f in sorted(root.rglob("*.py")):
        tree = ast.parse(f.read_text())
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for n in ast.walk(tree):
            if (isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
                    and re.search(r"[A-Za-z]\(s\)", n.value)):
                hedged.append(f"{f.relative_to(root)}:{n.lineno}: {n.value.strip()[:60]}")
    assert hedged == []
