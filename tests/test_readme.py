"""The README opens with a three-line Python example and a CLI example; this runs both exactly as written."""

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _blocks():
    text = (ROOT / "README.md").read_text()
    head = text[:text.index("**Which open model")]  # the opening, before any prose
    py = re.search(r"```python\n(.*?)```", head, re.S).group(1)
    sh = re.search(r"```bash\n(.*?)```", head, re.S).group(1)
    return py, sh


def test_readme_opens_with_three_python_lines_and_a_cli_example():
    py, sh = _blocks()
    assert len(py.strip().splitlines()) == 3
    ast.parse(py)
    assert all(line.startswith("taskspace ") for line in sh.strip().splitlines())


def test_readme_examples_run_as_written(taskspace_home):
    py, sh = _blocks()
    env = dict(os.environ, HF_HUB_OFFLINE="1", PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for line in sh.strip().splitlines():
        res = subprocess.run(line, shell=True, cwd=ROOT, env=env, capture_output=True, text=True)
        assert res.returncode == 0, (line, res.stderr[-2000:])
    assert "P(success)" in res.stdout and "meta-llama/" in res.stdout  # the search answered with Hub ids
    res = subprocess.run([sys.executable, "-c", py], cwd=ROOT, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    printed = ast.literal_eval(res.stdout.strip())
    assert len(printed) == 5 and all(0.0 <= p <= 1.0 for _, p, _ in printed)


def _make_setup(tmp_path, *args, path=None):
    """`make setup` of this Makefile in a scratch folder (empty pyproject.toml and requirements.lock: nothing is
    installed), with PATH searched first in tmp_path/bin."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "Makefile").write_bytes((ROOT / "Makefile").read_bytes())
    for name in ("pyproject.toml", "requirements.lock"):
        if not (work / name).exists():
            (work / name).touch()
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin")
    return subprocess.run(["make", "--no-print-directory", "setup", *args], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60)


def _other_python(path):
    """A Python that is not 3.11 as far as the Makefile can tell: `-V` says 3.12.1 and the version check fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('#!/bin/sh\nif [ "$1" = -V ]; then echo "Python 3.12.1"; exit 0; fi\nexit 1\n')
    path.chmod(0o755)
    return path


def test_make_setup_without_python_3_11_says_what_it_needs(tmp_path):
    # requirements.lock pins wheels for Python 3.11 alone. Before, `make setup` with another Python (PYTHON=python3.12,
    # or python3.11 missing and python3 another version) went on to pip, which failed with "Cannot install
    # torch==2.13.0+cpu because these package versions have conflicting dependencies", no word of the Python;
    # and the venv it left made every later `make setup` (even with Python 3.11) use that Python again.
    other = _other_python(tmp_path / "bin" / "python3.12")
    _other_python(tmp_path / "bin" / "python3")  # python3 on PATH is that Python too
    res = _make_setup(tmp_path, f"PYTHON={other}", f"VENV={tmp_path / 'venv'}")
    assert res.returncode != 0
    assert f"make: {other} is Python 3.12.1, not Python 3.11" in res.stderr, res.stderr
    assert "make: python3 is Python 3.12.1, not Python 3.11" in res.stderr, res.stderr
    assert "taskspace needs Python 3.11" in res.stderr and "make PYTHON=/path/to/python3.11" in res.stderr
    assert not (tmp_path / "venv").exists()
    res = _make_setup(tmp_path, f"PYTHON={tmp_path / 'nope' / 'python3.11'}", f"VENV={tmp_path / 'venv'}")
    assert f"make: {tmp_path / 'nope' / 'python3.11'}: not found" in res.stderr, res.stderr
    # a venv another Python made: named, with what to do, before pip runs in it
    _other_python(tmp_path / "venv" / "bin" / "python")
    res = _make_setup(tmp_path, f"PYTHON={sys.executable}", f"VENV={tmp_path / 'venv'}")
    assert res.returncode != 0
    assert f"make: {tmp_path / 'venv'} was made by Python 3.12.1, not Python 3.11" in res.stderr, res.stderr
    assert "make clean" in res.stderr and "pip" not in res.stdout


def test_make_setup_refuses_a_venv_made_for_another_checkout(tmp_path):
    # A checkout copied or moved with its .venv (`cp -r`, a renamed folder): make found .venv up to date, but its
    # editable install (and its scripts' #! line) pointed at the checkout it was made in, so `make run` ran that
    # checkout's code, or, once it was gone, failed with "make: .venv/bin/taskspace: No such file or directory".
    import sysconfig

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    assert site != Path(sysconfig.get_paths()["purelib"])
    first = tmp_path / "first"  # the checkout the venv was made in: an editable install is a path entry to it
    (first / "indexer").mkdir(parents=True)
    (first / "indexer" / "__init__.py").touch()
    (site / "taskspace-editable.pth").write_text(f"{first}\n")
    _make_setup(tmp_path, f"VENV={venv}")  # makes the checkout's folder; no .installed yet: pip is missing
    (venv / "bin" / ".installed").touch()  # as `make setup` leaves it
    res = _make_setup(tmp_path, f"VENV={venv}")
    work = (tmp_path / "work").resolve()
    assert res.returncode != 0
    assert f"make: {venv} runs the taskspace of {first}, not of this checkout ({work})" in res.stderr, res.stderr
    assert "make clean" in res.stderr
    shutil.rmtree(first)  # the checkout it was made in moved away
    res = _make_setup(tmp_path, f"VENV={venv}")
    assert res.returncode != 0 and f"make: {venv} cannot import taskspace" in res.stderr, res.stderr
    (site / "taskspace-editable.pth").write_text(f"{work}\n")  # made here: nothing to say
    (work / "indexer").mkdir()
    (work / "indexer" / "__init__.py").touch()
    res = _make_setup(tmp_path, f"VENV={venv}")
    assert res.returncode == 0 and res.stderr == "", res.stderr


def test_every_target_the_makefile_declares_does_something(tmp_path):
    # `.PHONY` named a `lint` target that had no rule: `make lint` said "Nothing to be done for 'lint'" and exited 0, as
    # if the code had been checked. Each declared target must have a rule with a recipe or prerequisites (`make -n`
    # prints what it would run and runs nothing).
    text = (ROOT / "Makefile").read_text()
    phony = re.search(r"^\.PHONY:(.*)$", text, re.M).group(1).split()
    assert "run" in phony and "test" in phony
    work = tmp_path / "work"
    work.mkdir()
    (work / "Makefile").write_text(text)
    for name in ("pyproject.toml", "requirements.lock"):
        (work / name).touch()
    for target in phony:
        res = subprocess.run(["make", "--no-print-directory", "-n", target], cwd=work, capture_output=True, text=True,
                             timeout=60)
        assert res.returncode == 0 and res.stdout.strip() and "Nothing to be done" not in res.stdout, (target, res)


def test_make_clean_removes_the_venv_and_keeps_the_index(tmp_path):
    # `make clean` is what make says to run for a venv made by another Python or in another checkout. It also removed
    # ./.taskspace, the default TASKSPACE_HOME: the SQL store with every ingested result, sources.toml and the index,
    # lost without a word by someone curing a venv. It removes what `make` builds; the data stays.
    work = tmp_path / "work"
    for path in (".venv/bin/python", ".pytest_cache/v/cache", ".taskspace/taskspace.db", ".taskspace/sources.toml"):
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text("x")
    (work / "Makefile").write_bytes((ROOT / "Makefile").read_bytes())
    res = subprocess.run(["make", "--no-print-directory", "clean"], cwd=work, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert not (work / ".venv").exists() and not (work / ".pytest_cache").exists()
    assert (work / ".taskspace" / "taskspace.db").read_text() == "x" and (work / ".taskspace" / "sources.toml").exists()


def _ci_run(tmp_path, **env):
    """`.ci/run` of this checkout in a scratch copy, with PATH holding only bash, dirname, a `make` that records its
    arguments and an `apt-get` that records it was called (nothing is installed, no suite runs)."""
    work = tmp_path / "ci"
    (work / ".ci").mkdir(parents=True, exist_ok=True)
    (work / ".ci" / "run").write_bytes((ROOT / ".ci" / "run").read_bytes())
    (work / ".ci" / "run").chmod(0o755)
    bin_ = tmp_path / "cibin"
    if not bin_.exists():
        bin_.mkdir()
        for tool in ("bash", "dirname", "id"):
            (bin_ / tool).symlink_to(shutil.which(tool))
        for tool in ("make", "apt-get"):
            (bin_ / tool).write_text(f'#!{shutil.which("bash")}\necho "{tool} $*" >> "{tmp_path / "calls"}"\n')
            (bin_ / tool).chmod(0o755)
    return subprocess.run([str(work / ".ci" / "run")], env={"PATH": str(bin_), **env}, capture_output=True, text=True,
                          timeout=60)


def test_ci_run_checks_the_chromium_taskspace_chromium_names_before_the_suite(tmp_path):
    # TASKSPACE_CHROMIUM names the browser the test drives. Before, .ci/run looked at /usr/bin/chromium alone: with
    # TASKSPACE_CHROMIUM naming a missing file it ran the whole suite (minutes) and the browser tests failed at its
    # end ("no Chromium at ..."), or installed /usr/bin/chromium, which the tests then did not use.
    res = _ci_run(tmp_path, TASKSPACE_CHROMIUM=str(tmp_path / "no-chromium"))
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert f"TASKSPACE_CHROMIUM={tmp_path / 'no-chromium'} is not an executable file" in res.stderr, res.stderr
    assert not (tmp_path / "calls").exists()  # no install, no suite
    chromium = tmp_path / "chromium"
    chromium.write_text("#!/bin/sh\n")
    chromium.chmod(0o755)
    res = _ci_run(tmp_path, TASKSPACE_CHROMIUM=str(chromium))
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "calls").read_text() == "make test\n"  # that chromium is used: nothing installed


def test_the_checkout_holds_no_venv_and_ignores_one_made_as_a_link():
    """No `.venv` is committed and `.gitignore` ignores one whether it is a folder or a symlink. Before, `.venv/`
    ignored folders alone, and a commit carried a checkout's `.venv` symlink (to /work/main/.venv): a fresh clone's
    `make setup` then failed ("File exists", or "Too many levels of symbolic links" where the link pointed at
    itself), and worked only once run again after it removed the link."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--", ".venv"], capture_output=True, text=True,
                             check=True, timeout=60).stdout.split()
    assert tracked == [], f"committed: {tracked}; `git rm --cached .venv` and commit"
    patterns = {line.strip() for line in (ROOT / ".gitignore").read_text().splitlines()}
    assert patterns & {".venv", "/.venv"}, ".gitignore does not ignore a .venv symlink (write `.venv`, not `.venv/`)"


def test_no_module_defines_one_name_twice_at_its_top_level():
    """No module of the package or the tests defines a function or class twice at its top level: the second silently
    replaces the first. Seen when two branches each added a fixture `mixed` to tests/test_find.py: the merge kept
    both, and the lcb tests written for the first ran on the second's index (and failed; a pair of tests that passed
    by accident would have checked nothing)."""
    import collections

    twice = {}
    for path in sorted([*ROOT.glob("indexer/**/*.py"), *ROOT.glob("tests/*.py"), *ROOT.glob("benchmarks/*.py")]):
        tree = ast.parse(path.read_text(), filename=str(path))
        names = collections.Counter(n.name for n in tree.body
                                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
        if dup := sorted(k for k, v in names.items() if v > 1):
            twice[str(path.relative_to(ROOT))] = dup
    assert not twice, f"defined twice (the later one wins): {twice}; rename one"


def test_the_readme_serving_paragraph_names_every_api_route(tmp_path, monkeypatch):
    """README's Serving paragraph lists the routes: every one /openapi.json declares is named there, as `GET /v1/x`
    (`/v1/models/{id}` as it writes it). Before, `GET /v1/spaces` was left out (found reading the README beside the
    API)."""
    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path))
    from indexer.serve import create_app

    text = (ROOT / "README.md").read_text()
    serving = text[text.index("## Serving"):]
    serving = serving[:serving.index("\n## ", 1)]
    for path, methods in create_app().openapi()["paths"].items():
        for method in methods:
            said = f"{method.upper()} {path.replace('{model_id}', '{id}')}"
            assert f"`{said}`" in serving, said


def test_the_readme_names_the_one_base_of_every_library_error():
    """A Python caller catching the library's errors is told their one base, `indexer.errors.IndexerError`, and that
    each carries `.item`; every error class of `indexer.errors` derives from it. Before, the README named
    `InputError` and `NotFoundError` alone, so `except` clauses missed `StoreError`, `BusyError`, `HubError`, ..."""
    import inspect

    from indexer import errors

    text = (ROOT / "README.md").read_text()
    python = text[text.index("- **Browsing from Python**"):text.index("- **The ranked list alone**")]
    assert "`indexer.errors.IndexerError`" in python and "`StoreError`" in python, python
    for name, cls in inspect.getmembers(errors, inspect.isclass):
        if issubclass(cls, Exception) and cls.__module__ == errors.__name__:
            assert issubclass(cls, errors.IndexerError), name


def test_the_readme_line_that_silences_the_librarys_warnings_silences_them(tmp_path):
    """The README's `logging.getLogger("indexer").setLevel(logging.ERROR)`: a library warning (a TASKSPACE_* typo,
    read with the settings) reaches stderr without it, and not with it."""

    readme = (ROOT / "README.md").read_text()
    line = 'logging.getLogger("indexer").setLevel(logging.ERROR)'
    assert line in readme
    typo = "TASKSPACE_" + "HOMEE"  # split: test_config reads every TASKSPACE_* name the tests spell as a setting
    env = {**os.environ, typo: str(tmp_path), "HF_HUB_OFFLINE": "1"}
    code = "import logging\n{}import indexer.config\nindexer.config.get_settings()\n"
    loud = subprocess.run([sys.executable, "-c", code.format("")], env=env, capture_output=True, text=True, cwd=tmp_path)
    quiet = subprocess.run([sys.executable, "-c", code.format(line + "\n")], env=env, capture_output=True, text=True,
                           cwd=tmp_path)
    assert loud.returncode == quiet.returncode == 0, (loud.stderr, quiet.stderr)
    assert f"{typo} is not a taskspace setting" in loud.stderr, loud.stderr
    assert quiet.stderr == "", quiet.stderr
