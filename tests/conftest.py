"""Shared fixtures. Tests never touch the real Hub (HF_HUB_OFFLINE=1) and never the user's data directory."""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(autouse=True)
def taskspace_home(tmp_path, monkeypatch):
    """Every test gets its own TASKSPACE_HOME and fresh settings; the embedding cache is shared per session."""
    from indexer.config import reset_settings

    for name in list(os.environ):
        if name.startswith("TASKSPACE_") and name not in {"TASKSPACE_REQUIRE_POSTGRES", "TASKSPACE_TEST_POSTGRES_URL"}:
            monkeypatch.delenv(name)
    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TASKSPACE_CACHE_DIR", str(_SESSION_CACHE))
    reset_settings()
    yield tmp_path / "home"
    reset_settings()


_SESSION_CACHE = Path(os.environ.get("TASKSPACE_TEST_CACHE", "/tmp/taskspace-test-cache"))


@pytest.fixture(scope="session")
def encoder():
    """The real all-MiniLM-L6-v2, loaded once per session (offline, from the installed package)."""
    from indexer.encoder import Encoder

    return Encoder("all-MiniLM-L6-v2", cache_dir=_SESSION_CACHE)


@pytest.fixture(scope="session")
def shared_data():
    """../shared/data, or a skip with the reason when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared datasets not found at {SHARED_DATA}")
    return SHARED_DATA
