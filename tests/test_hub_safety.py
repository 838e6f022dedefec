"""What a broken or hostile Hub endpoint (HF_ENDPOINT) cannot do: write outside TASKSPACE_HOME, crash a pass, or keep
a `hub-org:` listing busy with retries stacked on retries. Against tests/hubserver.py (its tamper/drop faults)."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.errors import HubError, InputError
from indexer.hub import HubClient, is_safe_repo_path, is_valid_revision
from indexer.ingest import ingest, parse_spec

LB = "open-llm-leaderboard/fake-org__tiny-lb-details"
OLD = "open-llm-leaderboard/fake-org__old-harness-details"


def _outside(tmp_path: Path, name: str) -> tuple[str, Path]:
    """A relative path that climbs from anywhere under the Hub cache to ``tmp_path/name`` (and that target)."""
    return "../" * 12 + str(tmp_path / name).lstrip("/"), tmp_path / name


def _files_outside(tmp_path: Path, home: Path) -> list[Path]:
    keep = (home, tmp_path / "hubrepos", tmp_path / "hf_home")
    return [p for p in tmp_path.rglob("*") if not any(p == k or k in p.parents for k in keep)
            and not p.name.startswith("test.db")]  # the store fixture's SQLite file


def test_a_server_sha_with_dotdot_is_refused(store, hub_server, tmp_path, taskspace_home):
    """The repo's info answers a `sha` that climbs out of the cache: before, it was passed on as the download
    revision (a file appeared outside TASKSPACE_HOME) and stored as the source revision."""
    sha, target = _outside(tmp_path, "escaped-by-sha")
    hub_server.tamper(LB, sha=sha)
    s = ingest(f"hub:{LB}", store=store, fetch_metadata=False)
    (e,) = s.errors
    assert "not 40 hex digits" in e.message and "refusing" in e.message and s.exit_code == 4
    assert not target.exists() and _files_outside(tmp_path, taskspace_home) == []
    assert store.get_source(f"hub:{LB}") is None


def test_an_etag_with_dotdot_never_becomes_a_path(store, hub_server, tmp_path, taskspace_home):
    """huggingface_hub 2.4.0 joins the file's ETag into its blob path; taskspace refuses the answer before it does."""
    etag, target = _outside(tmp_path, "escaped-by-etag")
    hub_server.tamper(LB, etag=etag)
    s = ingest(f"hub:{LB}", store=store, fetch_metadata=False)
    (e,) = s.errors
    assert "ETag" in e.message and "nothing was written" in e.message
    assert not target.exists() and _files_outside(tmp_path, taskspace_home) == []
    assert store.get_source(f"hub:{LB}") is None
    hub_server.tampered.clear()  # the endpoint is fixed: the next run reads the repo
    assert ingest(f"hub:{LB}", store=store, fetch_metadata=False).outcomes == 12


def test_unsafe_file_names_cost_only_that_repo(store, hub_server, tmp_path, taskspace_home):
    """A repo listing `../` file names: before, huggingface_hub's ValueError ended the whole `hub-org:` listing with a
    traceback; now that repo is an error line and the others are ingested."""
    hub_server.tamper(LB, files={"fake-org__tiny-lb/../../samples_leaderboard_ifeval_2024-08-01T00-00-00.000000.jsonl":
                                 b'{"doc_id": 0}\n'})
    s = ingest("hub-org:open-llm-leaderboard", store=store, fetch_metadata=False)
    bad = [e for e in s.errors if e.file == f"hub:{LB}"]
    assert len(bad) == 1 and "unsafe file name" in bad[0].message
    assert store.get_source(f"hub:{OLD}") is not None  # the rest of the listing was read
    assert "fake-org/old-harness" in store.load_outcomes().models
    assert _files_outside(tmp_path, taskspace_home) == []
    client = HubClient(backoff=0, sleep=lambda s: None)
    with pytest.raises(HubError, match="unsafe file name"):
        client.download(client.repo_snapshot(OLD), ["../x.json"])


@pytest.mark.parametrize("value,ok", [
    ("a" * 40, True), ("main", True), ("v1.0", True), ("refs/pr/12", True), ("release/2024-06", True),
    ("../../etc", False), ("main/../x", False), ("", False), ("-rf", False), ("a b", False), ("x.lock", False),
])
def test_revision_forms(value, ok):
    assert is_valid_revision(value) is ok


@pytest.mark.parametrize("name,ok", [
    ("a/b.json", True), ("details_harness|arc:challenge|25_2023.parquet", True), ("../x", False), ("a/../b", False),
    ("/etc/passwd", False), ("a//b", False), ("a\\\\b", False), ("C:/x", False), ("./a", False), ("", False),
])
def test_repo_path_forms(name, ok):
    assert is_safe_repo_path(name) is ok


def test_user_revision_is_validated_before_use():
    with pytest.raises(InputError, match="REVISION"):
        parse_spec(f"hub:{LB}@../../../tmp/x")
    assert parse_spec(f"hub:{LB}@refs/pr/3").revision == "refs/pr/3"
    with pytest.raises(InputError):
        parse_spec("hub-org:../x")


# -- one retry layer, a total deadline -------------------------------------------------------------------------


def _requests(server, prefix):
    return sum(1 for _, p, _ in server.log if p.startswith(prefix))


def test_a_dropping_server_is_retried_by_one_layer_only(hub_server):
    """huggingface_hub retried dropped connections (and 5xx) itself inside every taskspace retry: 6 x 6 requests per
    listing, with real sleeps of up to 8 s between them. Now each taskspace try is one request."""
    sleeps = []
    c = HubClient(retries=2, backoff=0.01, sleep=sleeps.append)
    hub_server.drop("/api/datasets", 100)
    with pytest.raises(HubError, match="connection failed.*gave up after 3 tries"):
        c.list_datasets("open-llm-leaderboard")
    assert _requests(hub_server, "/api/datasets") == 3 and len(sleeps) == 2
    # the client is failing now: the next operation is tried once, not retried again
    with pytest.raises(HubError, match="not retried"):
        c.repo_snapshot(LB)
    assert _requests(hub_server, "/api/datasets") == 4 and len(sleeps) == 2
    hub_server._drops.clear()
    assert c.repo_snapshot(LB).sha  # a success ends the failing state
    hub_server.fail(f"/api/datasets/{LB}", [503])
    assert c.repo_snapshot(LB).sha and len(sleeps) == 3


def test_retries_stop_at_the_deadline(hub_server):
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds

    c = HubClient(retries=10, backoff=2.0, deadline=5.0, sleep=sleep, clock=lambda: now[0])
    hub_server.fail("/api/models/fake-org/tiny-lb", [503] * 20)
    with pytest.raises(HubError, match="gave up after 2 tries in 2 s"):
        c.model_info("fake-org/tiny-lb")
    assert now[0] == 2.0  # one sleep of 2 s; the next (4 s) would have ended past the 5 s deadline


def test_a_failing_hub_org_listing_costs_one_deadline(store, hub_server):
    """Every repo's info drops: the first repo is retried, the rest are tried once each (the listing ends quickly)."""
    sleeps = []
    hub = HubClient(retries=3, backoff=0.01, sleep=sleeps.append)
    hub_server.drop("/api/datasets/open-llm-leaderboard/", 100)
    s = ingest("hub-org:open-llm-leaderboard", store=store, hub=hub, fetch_metadata=False)
    assert s.exit_code == 4 and s.hub_failures == 4 and len(s.errors) == 4
    assert len(sleeps) == 3 and _requests(hub_server, "/api/datasets/open-llm-leaderboard/") == 4 + 3
