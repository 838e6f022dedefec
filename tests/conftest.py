"""Shared fixtures. Tests never touch the real Hub (HF_HUB_OFFLINE=1) and never the user's data directory.

Every test session has its own embedding cache: a fresh temporary folder made here, before any test module is
imported, and removed when the session ends (``TASKSPACE_TEST_CACHE`` names a folder to use instead, for a
developer who wants a warm cache across runs: the counts the tests assert do not depend on it). Nothing a test
asserts depends on what an earlier session (or the order of the tests in this one) left in a cache.
"""

from __future__ import annotations

import os
import shutil
import tempfile

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

#: the session's embedding cache (see the module docstring)
_OWN_CACHE = not os.environ.get("TASKSPACE_TEST_CACHE")
_SESSION_CACHE = Path(os.environ.get("TASKSPACE_TEST_CACHE") or tempfile.mkdtemp(prefix="taskspace-test-cache-"))


def pytest_sessionfinish(session, exitstatus):
    if _OWN_CACHE:
        shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


def pytest_report_header(config):
    return [f"taskspace: embedding cache {_SESSION_CACHE} ({'this session only' if _OWN_CACHE else 'TASKSPACE_TEST_CACHE'})"]


#: variables of the test run itself, kept in every test's environment
_KEEP_ENV = {"TASKSPACE_REQUIRE_POSTGRES", "TASKSPACE_TEST_POSTGRES_URL", "TASKSPACE_REQUIRE_SHARED", "TASKSPACE_TEST_CACHE",
             "TASKSPACE_TEST_SCRIPT"}


@pytest.fixture(autouse=True)
def taskspace_home(tmp_path, monkeypatch):
    """Every test gets its own TASKSPACE_HOME and fresh settings; the embedding cache is shared per session."""
    from indexer.config import reset_settings

    for name in list(os.environ):
        if name.startswith("TASKSPACE_") and name not in _KEEP_ENV:
            monkeypatch.delenv(name)
    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TASKSPACE_CACHE_DIR", str(_SESSION_CACHE))
    reset_settings()
    yield tmp_path / "home"
    import sys

    if "indexer.query" in sys.modules:  # find_models() without stores keeps them open: not across tests (the
        # shared encoders stay loaded: a model load a test would cost seconds)
        sys.modules["indexer.query"].close_cached(encoders=False)
    reset_settings()


#: test modules of the vector store that run once per embedded engine (the same tests, unchanged, for each)
_EVERY_ENGINE = {"test_vectors", "test_sync"}


def pytest_generate_tests(metafunc):
    if "vector_engine" in metafunc.fixturenames and metafunc.module.__name__.rsplit(".", 1)[-1] in _EVERY_ENGINE:
        metafunc.parametrize("vector_engine", ["edge", "local"], indirect=True)


@pytest.fixture(autouse=True)
def vector_engine(request, taskspace_home, monkeypatch):
    """The embedded vector engine of the test (TASKSPACE_QDRANT_ENGINE): both for the vector store's own
    modules (:data:`_EVERY_ENGINE`), the default (Qdrant Edge) elsewhere. Subprocesses inherit it."""
    from indexer.config import reset_settings

    engine = getattr(request, "param", None)
    if engine is not None:
        monkeypatch.setenv("TASKSPACE_QDRANT_ENGINE", engine)
        reset_settings()
    return engine or "edge"


@pytest.fixture(autouse=True)
def hub_offline_kept():
    """huggingface_hub reads HF_HUB_OFFLINE (and HF_ENDPOINT) once, when it is imported, and
    :class:`indexer.hub.HubClient` sets its offline flag from the environment when a client is made: a test of the
    local Hub (``hub_server``: HF_HUB_OFFLINE=0) left the flag off for every later test, whose load of an encoder not
    installed then asked huggingface.co and waited ~70 s for a network this machine does not have (six tests in CI's
    order, seven minutes). The flag and the endpoint are put back after every test."""
    from huggingface_hub import constants

    saved = constants.HF_HUB_OFFLINE, constants.ENDPOINT
    yield
    constants.HF_HUB_OFFLINE, constants.ENDPOINT = saved


@pytest.fixture(scope="session")
def encoder():
    """The real all-MiniLM-L6-v2, loaded once per session (offline, from the installed package)."""
    from indexer.encoder import Encoder

    return Encoder("all-MiniLM-L6-v2", cache_dir=_SESSION_CACHE)


def shared_missing(what: Path = SHARED_DATA) -> None:
    """Skip (with the reason) when a shared dataset is absent, or fail with ``TASKSPACE_REQUIRE_SHARED=1`` (set by
    ``.ci/run``: CI has ``../shared`` beside the checkout, so the real-dataset tests must run there)."""
    reason = f"shared dataset not found at {what}"
    if os.environ.get("TASKSPACE_REQUIRE_SHARED") == "1":
        pytest.fail(reason + " (TASKSPACE_REQUIRE_SHARED=1: the real-dataset tests must run here)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def shared_data():
    """../shared/data, or a skip with the reason when it is absent (a failure with TASKSPACE_REQUIRE_SHARED=1)."""
    if not SHARED_DATA.is_dir():
        shared_missing()
    return SHARED_DATA


@pytest.fixture(scope="session")
def taskspace_script():
    """The installed ``taskspace`` console script, checked to run this checkout's code: the interpreter of its
    shebang imports ``indexer.cli`` from this worktree (an install from another checkout would test other code).
    ``TASKSPACE_TEST_SCRIPT`` names another script to use (scripts/mutants.py runs the tests in a copy)."""
    import subprocess
    import sys

    script = Path(os.environ.get("TASKSPACE_TEST_SCRIPT") or Path(sys.executable).parent / "taskspace")
    assert script.is_file(), f"{script} is not installed: run `make setup`"
    text = script.read_text()
    assert "indexer.cli" in text, f"{script} does not run indexer.cli:\n{text[:500]}"
    python = text.splitlines()[0].removeprefix("#!").strip()
    res = subprocess.run([python, "-c", "import indexer.cli; print(indexer.cli.__file__)"], capture_output=True,
                         text=True, timeout=120, cwd="/")
    assert res.returncode == 0, res.stderr[-2000:]
    where = Path(res.stdout.strip()).resolve()
    assert where == ROOT / "indexer" / "cli.py", (
        f"the installed taskspace runs {where}, not this checkout ({ROOT}): run `make setup` here")
    return str(script)


# -- SQL store: a `store` fixture over SQLite and PostgreSQL -------------------------------------------------

POSTGRES_URL = os.environ.get("TASKSPACE_TEST_POSTGRES_URL") or "postgresql+psycopg://postgres@127.0.0.1:5432/test"
_pg_state: dict = {}


def _postgres_unavailable() -> str | None:
    """None when the test PostgreSQL answers, else the reason (checked once per session)."""
    if "reason" not in _pg_state:
        from indexer.errors import StoreError
        from indexer.store.sql_migrate import create_schema, drop_schema

        try:
            create_schema(POSTGRES_URL, "taskspace_probe_%d" % os.getpid())
            drop_schema(POSTGRES_URL, "taskspace_probe_%d" % os.getpid())
            _pg_state["reason"] = None
        except StoreError as exc:
            _pg_state["reason"] = f"PostgreSQL not reachable at TASKSPACE_TEST_POSTGRES_URL={POSTGRES_URL}: {exc}"
    return _pg_state["reason"]


@pytest.fixture
def pg_url():
    """A PostgreSQL URL private to this test: a fresh schema (search_path) dropped afterwards.
    Skips when the server is unreachable, except with TASKSPACE_REQUIRE_POSTGRES=1 (CI), where it fails."""
    import uuid

    from indexer.store.sql_migrate import create_schema, drop_schema, with_search_path

    reason = _postgres_unavailable()
    if reason:
        if os.environ.get("TASKSPACE_REQUIRE_POSTGRES") == "1":
            pytest.fail(reason + " (TASKSPACE_REQUIRE_POSTGRES=1: PostgreSQL tests must run here)")
        pytest.skip(reason)
    schema = "t_" + uuid.uuid4().hex[:16]
    create_schema(POSTGRES_URL, schema)
    try:
        yield with_search_path(POSTGRES_URL, schema)
    finally:
        drop_schema(POSTGRES_URL, schema)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request, tmp_path):
    """An empty database URL: a SQLite file in tmp_path, or a private PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'test.db'}"
    return request.getfixturevalue("pg_url")


@pytest.fixture
def store(db_url):
    """A migrated, empty :class:`indexer.store.sql.Store` on SQLite and on PostgreSQL."""
    from indexer.store.sql import Store

    s = Store(db_url, upgrade=True)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def hub_server(tmp_path, monkeypatch):
    """A local server speaking the Hub's HTTP API over a copy of tests/fixtures/hub (tests may edit the copy).
    Sets HF_ENDPOINT to it, HF_HUB_OFFLINE=0, no HF_TOKEN and a private HF_HOME (no login token leaks in)."""
    import shutil

    from hubserver import HubServer

    root = tmp_path / "hubrepos"
    shutil.copytree(Path(__file__).parent / "fixtures" / "hub", root)
    server = HubServer(root).start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        yield server
    finally:
        server.stop()


# -- the indexing pass -------------------------------------------------------------------------------------------


@pytest.fixture
def env(tmp_path, encoder):
    """``make()`` -> an Indexer over a fresh SQLite store and local Qdrant in this test's TASKSPACE_HOME (closed
    after the test)."""
    from indexer.pipeline import Indexer
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    made = []

    def make():
        store = open_store()
        vectors = VectorStore.from_settings()
        made.append((store, vectors))
        return Indexer(store, vectors, encoder=encoder)

    yield make
    for store, vectors in made:
        vectors.close()
        store.close()
