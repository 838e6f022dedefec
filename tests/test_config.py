import re
import subprocess
import sys
from pathlib import Path

import pytest

from indexer import errors
from indexer.config import ENV_VARS, env_table_markdown, get_settings, reset_settings
from indexer.errors import ConfigError, IndexerError, InputError

ROOT = Path(__file__).resolve().parents[1]


def test_defaults(taskspace_home):
    s = get_settings()
    assert s.home == taskspace_home.resolve()
    assert s.database_url == f"sqlite:///{taskspace_home.resolve() / 'taskspace.db'}"
    assert s.qdrant_url is None and s.qdrant_path == s.home / "qdrant"
    assert s.encoder == "all-MiniLM-L6-v2" and s.lam == 1.0 and s.eps == 0.0


def test_settings_are_built_lazily_and_cached(monkeypatch):
    first = get_settings()
    assert get_settings() is first  # cached while the environment stays as it is
    reset_settings()
    assert get_settings() is not first and get_settings() == first


def test_settings_follow_a_change_of_the_environment_without_a_reset(monkeypatch, tmp_path):
    """A program that points TASKSPACE_HOME at a second home (or changes any setting) between two calls gets the new
    settings: before, they were read once per process, so the second home's find_models answered from the first one's
    index without a word unless the program knew to call reset_settings()."""
    first = get_settings()
    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "second"))
    assert get_settings().home == (tmp_path / "second").resolve()
    assert get_settings().database_url.endswith(str((tmp_path / "second" / "taskspace.db").resolve()))
    monkeypatch.setenv("TASKSPACE_LAMBDA", "0.5")
    assert get_settings().lam == 0.5
    monkeypatch.delenv("TASKSPACE_LAMBDA")
    monkeypatch.setenv("TASKSPACE_HOME", str(first.home))
    assert get_settings() == first


@pytest.mark.parametrize(
    "name,value,match",
    [
        ("TASKSPACE_LAMBDA", "abc", "TASKSPACE_LAMBDA='abc' is not a number"),
        ("TASKSPACE_LAMBDA", "-1", "must be a finite number >= 0"),
        ("TASKSPACE_LAMBDA", "1e308", "at most 1e\\+12"),
        ("TASKSPACE_EPS", "1e13", "at most 1e\\+12"),
        ("TASKSPACE_BATCH_SIZE", "0", "must be at least 1"),
        ("TASKSPACE_LOG_LEVEL", "LOUD", "use DEBUG, INFO, WARNING, ERROR or CRITICAL"),
    ],
)
def test_bad_settings_name_the_variable(monkeypatch, name, value, match):
    monkeypatch.setenv(name, value)
    reset_settings()
    with pytest.raises(ConfigError, match=match):
        get_settings()


def test_every_log_level_the_setting_accepts_is_one_its_row_and_error_name(monkeypatch):
    """TASKSPACE_LOG_LEVEL=critical is accepted (logging's fifth level), so its row in docs/CONFIGURATION.md and the
    error for a bad value name it; before, both listed four levels and the fifth worked unmentioned."""
    from indexer.config import ENV_VARS

    monkeypatch.setenv("TASKSPACE_LOG_LEVEL", "critical")
    reset_settings()
    get_settings()
    assert "ERROR, CRITICAL)" in ENV_VARS["TASKSPACE_LOG_LEVEL"][1]


@pytest.mark.parametrize("name", ["TASKSPACE_LAMBDA", "TASKSPACE_EPS"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999"])
def test_a_solver_setting_that_is_not_finite_is_a_config_error_naming_it(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    reset_settings()
    with pytest.raises(ConfigError, match=f"{name}={value!r} is not a finite number"):
        get_settings()


@pytest.mark.parametrize("name", ["TASKSPACE_HOME", "TASKSPACE_CACHE_DIR", "TASKSPACE_DATABASE_URL", "TASKSPACE_QDRANT_URL",
                                  "TASKSPACE_QDRANT_API_KEY", "TASKSPACE_ENCODER", "TASKSPACE_ENCODER_DEVICE"])
def test_a_text_setting_of_spaces_only_is_a_config_error_naming_it(monkeypatch, tmp_path, name):
    """A text setting given as spaces only (a `.env` line `TASKSPACE_HOME= `): a one-line configuration error naming the
    variable; before, TASKSPACE_HOME=" " made a folder named " " in the current folder and indexed into it, and
    TASKSPACE_CACHE_DIR=" " put a fresh embedding cache there."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(name, "  ")
    reset_settings()
    with pytest.raises(ConfigError, match=f"{name}='  ' is blank; set a value, or unset it"):
        get_settings()
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv(name, "")  # empty: the default, as before
    reset_settings()
    get_settings()
    reset_settings()


@pytest.mark.parametrize("folder", ["h?q=1", "h%41", "h#x", "h sp", "hé"])
def test_a_home_whose_name_holds_url_characters_keeps_its_database_inside(monkeypatch, tmp_path, folder):
    """A TASKSPACE_HOME whose name holds a character URLs give a meaning (`?`, `%`, `#`): the default SQLite database is
    `$TASKSPACE_HOME/taskspace.db`, nothing is written beside the home; before, `h?q=1` put the database in a file `h`
    beside it (the rest read as the URL's query) and `h%41` looked for a folder `hA` ("does not exist")."""
    from indexer.store.sql import Store

    home = tmp_path / folder
    monkeypatch.setenv("TASKSPACE_HOME", str(home))
    monkeypatch.delenv("TASKSPACE_DATABASE_URL", raising=False)
    reset_settings()
    with Store() as store:
        assert store.counts()["models"] == 0
    assert (home / "taskspace.db").is_file() and sorted(p.name for p in tmp_path.iterdir()) == [folder]
    reset_settings()


def test_a_taskspace_variable_that_is_no_setting_is_warned_about_naming_the_closest(monkeypatch, caplog):
    """A typo of a setting's name (`..._DATABASE_URI=postgresql://...`): a warning that it is no setting and is ignored,
    naming the closest one; before, it was ignored without a word and the pass indexed into the default SQLite file."""
    import logging

    p = "TASKSPACE" + "_"  # (built, so that test_every_setting_is_documented does not take these typos for settings)
    monkeypatch.setenv(p + "DATABASE_URI", "postgresql+psycopg://u@h/db")
    monkeypatch.setenv(p + "FOO", "1")
    reset_settings()
    with caplog.at_level(logging.WARNING, logger="indexer.config"):
        settings = get_settings()
    assert settings.database_url.startswith("sqlite:///")
    assert (f"{p}DATABASE_URI is not a taskspace setting and is ignored; did you mean {p}DATABASE_URL?"
            in caplog.text)
    assert f"{p}FOO is not a taskspace setting and is ignored (docs/CONFIGURATION.md" in caplog.text
    assert f"{p}HOME is not" not in caplog.text
    reset_settings()


def test_a_qdrant_api_key_without_the_servers_url_is_warned_about(monkeypatch, caplog):
    """TASKSPACE_QDRANT_API_KEY set and TASKSPACE_QDRANT_URL not (the URL forgotten, or set in another shell): a
    warning that the key is for a server and the embedded index is used; before, the key was ignored without a word
    and the pass indexed into the embedded index."""
    import logging

    monkeypatch.setenv("TASKSPACE_QDRANT_API_KEY", "secret-key")
    monkeypatch.delenv("TASKSPACE_QDRANT_URL", raising=False)
    reset_settings()
    with caplog.at_level(logging.WARNING, logger="indexer.config"):
        get_settings()
    assert "TASKSPACE_QDRANT_API_KEY is set but TASKSPACE_QDRANT_URL is not" in caplog.text
    assert "secret-key" not in caplog.text
    caplog.clear()
    monkeypatch.setenv("TASKSPACE_QDRANT_URL", "http://127.0.0.1:6333")
    reset_settings()
    with caplog.at_level(logging.WARNING, logger="indexer.config"):
        get_settings()
    assert "TASKSPACE_QDRANT_API_KEY" not in caplog.text
    reset_settings()


def test_every_setting_is_documented():
    doc = (ROOT / "docs" / "CONFIGURATION.md").read_text()
    assert env_table_markdown() in doc, "regenerate docs/CONFIGURATION.md from ENV_VARS"
    used = set(re.findall(r'"(TASKSPACE_[A-Z_]+)"', (ROOT / "indexer" / "config.py").read_text()))
    assert used <= set(ENV_VARS)
    # the test-only variables too (the README: "All settings are TASKSPACE_* environment variables, listed in
    # docs/CONFIGURATION.md"); before, TASKSPACE_REQUIRE_BROWSER, which .ci/run sets, was listed nowhere
    files = [*(ROOT / "tests").glob("*.py"), *(ROOT / "scripts").glob("*.py"), ROOT / ".ci" / "run", ROOT / "Makefile"]
    used = {v for f in files for v in re.findall(r"\b(TASKSPACE_[A-Z][A-Z_]*[A-Z])\b", f.read_text())}
    assert used - set(ENV_VARS) == set()


def test_every_variable_the_package_reads_is_documented_and_every_documented_setting_is_read():
    """Both ways: each environment variable a module of `indexer/` reads by name (`os.environ.get("X")`,
    `os.environ["X"]`, a `TASKSPACE_*` name anywhere in its code) is in docs/CONFIGURATION.md, and each `TASKSPACE_*`
    variable the table lists is read somewhere (the package, the tests, scripts/, .ci/run, the Makefile), not a stale
    row. Before, `HUGGING_FACE_HUB_TOKEN`, which the Hub client and the server's masking read beside `HF_TOKEN`, was
    in no row."""
    doc = (ROOT / "docs" / "CONFIGURATION.md").read_text()
    code = {f: f.read_text() for f in (ROOT / "indexer").rglob("*.py")}
    read = {v for text in code.values()
            for v in re.findall(r"""(?:environ(?:\.get)?[\[(]|getenv\()\s*["']([A-Z][A-Z0-9_]+)["']""", text)}
    read |= {v for text in code.values() for v in re.findall(r"\b(TASKSPACE_[A-Z][A-Z_]*[A-Z])\b", text)}
    read -= {"PYTHONPATH"}  # passed on to a child process, not a setting
    assert len(read) > 15
    assert sorted(v for v in read if f"`{v}`" not in doc and v not in doc) == []
    config = (ROOT / "indexer" / "config.py").read_text()
    table = config[config.index("ENV_VARS: dict"):config.index("\n}\n")]  # the rows themselves
    elsewhere = " ".join([*(t for f, t in code.items() if f.name != "config.py"),
                          config.replace(table, ""),
                          *(f.read_text() for f in [*(ROOT / "tests").glob("*.py"), *(ROOT / "scripts").glob("*.py"),
                                                    ROOT / ".ci" / "run", ROOT / "Makefile"]
                            if f.name != "test_config.py")])
    assert sorted(v for v in ENV_VARS if v.startswith("TASKSPACE_") and v not in elsewhere) == []


def test_error_tree():
    for cls in [getattr(errors, n) for n in dir(errors) if n.endswith("Error") and n != "IndexerError"]:
        assert issubclass(cls, IndexerError)
        assert any(issubclass(cls, b) for b in (ValueError, LookupError, RuntimeError, ConnectionError)), cls
    e = InputError("bad value", file="a.csv", line=3)
    assert str(e) == "a.csv:3: bad value" and isinstance(e, ValueError)


def test_import_and_help_do_not_load_torch(taskspace_script):
    code = "import sys, indexer, indexer.cli, indexer.config, indexer.solver; print('torch' in sys.modules, 'sqlalchemy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
    res = subprocess.run([taskspace_script, "--help"], capture_output=True, text=True)  # this checkout's script
    assert res.returncode == 0 and "Usage: taskspace" in res.stdout


def test_a_folder_setting_that_cannot_be_created_is_a_config_error(tmp_path, taskspace_script):
    """`TASKSPACE_HOME=/proc/x taskspace index` (a folder mkdir cannot create: a read-only or special file system, no
    permission) printed a FileNotFoundError traceback and exited 1; `TASKSPACE_CACHE_DIR` so too at the first
    search. Now both are one `error:` line naming the variable, exit 2 (configuration), as README says. (`taskspace
    runs`, which reads, creates no home: there it is the error of a home that does not exist.)"""
    import os

    from indexer.encoder import EmbeddingCache

    bad = Path("/proc") / f"taskspace-test-{os.getpid()}"
    env = {**os.environ, "TASKSPACE_HOME": str(bad), "HF_HUB_OFFLINE": "1"}
    env.pop("TASKSPACE_DATABASE_URL", None)
    for args in (["index"], ["db", "upgrade"]):
        res = subprocess.run([taskspace_script, *args], capture_output=True, text=True, env=env, timeout=120)
        assert res.returncode == 2, (args, res.stderr[-2000:])
        assert res.stderr.strip().splitlines() == [
            f"error: TASKSPACE_HOME={str(bad)!r} cannot be created: No such file or directory; set it to a folder you "
            "can write (created when missing)"], res.stderr[-2000:]
    with pytest.raises(ConfigError, match=r"^TASKSPACE_CACHE_DIR='/proc/[^']+' cannot be created"):
        EmbeddingCache(bad / "enc.sqlite")


@pytest.mark.parametrize("name", ["TASKSPACE_HOME", "TASKSPACE_CACHE_DIR"])
def test_a_folder_setting_that_is_a_file_is_a_config_error(tmp_path, monkeypatch, name):
    """A folder setting naming a file (or a path under one) was a FileExistsError / NotADirectoryError traceback from
    the first mkdir; it is a one-line ConfigError naming the variable."""
    (tmp_path / "f").write_text("x")
    for value, words in ((tmp_path / "f", "is a file"), (tmp_path / "f" / "sub", f"cannot be created: {tmp_path / 'f'} is a file")):
        monkeypatch.setenv(name, str(value))
        reset_settings()
        with pytest.raises(ConfigError, match=rf"^{name}='{re.escape(str(value))}' {re.escape(words)}; set it to a folder"):
            get_settings()
    monkeypatch.setenv(name, str(tmp_path / "new" / "deeper"))  # missing folders are fine: created on first use
    reset_settings()
    assert get_settings()
    reset_settings()


def test_a_malformed_database_url_is_a_configuration_error_exit_2(monkeypatch, tmp_path, capsys):
    """`TASKSPACE_DATABASE_URL=notaurl` (or a driver that is not installed) is a setting to fix: exit 2, as README's exit
    codes say of a configuration error; before, exit 3 (storage), as for a database that cannot be reached. A
    well-formed URL whose server is down is still a storage error (exit 3). The error is still a StoreError to code
    that catches one (the store cannot be opened)."""
    from helpers import run_cli

    from indexer.errors import StoreError
    from indexer.store.sql import Store

    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path))
    for url, needle in (("notaurl", "not a valid SQLAlchemy URL"), ("nosuchdb://x/y", "no driver"),
                        ("postgresql+psycopg://u@127.0.0.1:notaport/db", "not a valid SQLAlchemy URL")):
        monkeypatch.setenv("TASKSPACE_DATABASE_URL", url)
        reset_settings()
        for command in (("runs",), ("search", "x"), ("benchmarks",)):  # (a read-only command reads the URL first)
            code, _, err = run_cli(capsys, *command)
            assert code == 2 and needle in err and "TASKSPACE_DATABASE_URL" in err, (command, url, code, err)
        with pytest.raises(ConfigError) as info:
            Store(url)
        assert isinstance(info.value, StoreError)
    monkeypatch.setenv("TASKSPACE_DATABASE_URL", "postgresql+psycopg://u@127.0.0.1:1/db")  # well-formed, nobody there
    reset_settings()
    code, _, err = run_cli(capsys, "runs")
    assert code == 3 and "Connection refused" in err, (code, err)
    reset_settings()
