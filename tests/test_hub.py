"""indexer.hub against tests/hubserver.py: the real huggingface_hub client over HTTP, no mocks."""

from __future__ import annotations

import logging

import pytest

from indexer.errors import GatedRepoError, HubError, NotFoundError
from indexer.hub import HubClient, HubUnreachableError, is_valid_repo_id

LB = "open-llm-leaderboard/fake-org__tiny-lb-details"
GATED = "open-llm-leaderboard/fake-org__gated-details"
TOKEN = "hf_test_allowed_token"


@pytest.fixture
def sleeps():
    return []


@pytest.fixture
def client(hub_server, sleeps):
    return HubClient(backoff=0.5, sleep=sleeps.append)


def test_model_info_maps_metadata_for_filters(client):
    info = client.model_info("fake-org/tiny-lb")
    assert info["key"] == "fake-org/tiny-lb" and len(info["revision"]) == 40
    assert (info["license"], info["num_parameters"], info["pipeline_tag"], info["library"]) == (
        "apache-2.0", 1234567, "text-generation", "transformers")
    assert info["tags"] == ["transformers", "safetensors", "text-generation"]
    assert (info["downloads"], info["likes"], info["gated"], info["base_model"]) == (42, 7, "false", "fake-org/base-lb")
    assert info["created_at"].year == 2024 and info["last_modified"].month == 6 and info["author"] == "fake-org"
    assert client.model_info("fake-org/dummy-b")["gated"] == "auto"
    assert client.model_info("fake-org/noisy-oracle-70")["license"] == "apache-2.0,mit"


def test_list_datasets_of_an_org(client):
    assert client.list_datasets("open-llm-leaderboard") == [
        "open-llm-leaderboard/fake-org__-details", GATED,
        "open-llm-leaderboard/fake-org__old-harness-details", LB]
    assert client.list_datasets("open-llm-leaderboard", search="tiny") == [LB]
    assert client.list_datasets("open-llm-leaderboard", limit=1) == ["open-llm-leaderboard/fake-org__-details"]
    assert client.list_datasets("nobody") == []


def test_snapshot_and_download_at_a_commit_are_cached(client, hub_server):
    snap = client.repo_snapshot(LB)
    assert len(snap.sha) == 40 and "README.md" in snap.files
    assert client.repo_snapshot(LB, snap.sha) == snap
    want = [f for f in snap.files if "ifeval" in f or f.endswith(".md")]
    root = client.download(snap, want)
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == sorted(want)
    before = len(hub_server.downloads())
    assert before == len(want)
    assert client.download(snap, want) == root
    assert len(hub_server.downloads()) == before  # nothing fetched twice


def test_a_damaged_file_in_the_cache_is_downloaded_again_and_offline_named_as_damaged(client, hub_server, monkeypatch,
                                                                                     caplog):
    """A file of the Hub cache whose bytes no longer match the checksum its blob is named by (cut short by a full
    disk, a partial copy of the home) is downloaded again, with a warning naming it, rather than handed on: before,
    huggingface_hub returned the cached copy as it was, `taskspace pull` said the published records had "1
    problem(s)" (not a readable Parquet file) and every retry read the same damaged copy until the cache was deleted
    by hand. Offline, the copy is named as damaged, with the variable to unset to download it again."""
    import os

    snap = client.repo_snapshot(LB)
    (name,) = [f for f in snap.files if f.endswith(".md")]
    root = client.download(snap, [name])
    good = (root / name).read_bytes()
    blob = os.path.realpath(root / name)
    with open(blob, "r+b") as f:
        f.truncate(len(good) // 2)
    before = len(hub_server.downloads())
    with caplog.at_level(logging.WARNING, logger="indexer.hub"):
        assert (client.download(snap, [name]) / name).read_bytes() == good
    assert len(hub_server.downloads()) == before + 1
    assert any(name in r.getMessage() and "damaged" in r.getMessage() for r in caplog.records), caplog.text
    with open(blob, "r+b") as f:
        f.truncate(len(good) // 2)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubError, match=rf"{name} .*is damaged.*HF_HUB_OFFLINE is set; unset it"):
        client.download(snap, [name])


def test_not_found_errors(client):
    with pytest.raises(NotFoundError, match="fake-org/nope does not exist"):
        client.model_info("fake-org/nope")
    with pytest.raises(NotFoundError, match="revision .0{40}. not found"):
        client.repo_snapshot(LB, "0" * 40)
    snap = client.repo_snapshot(LB)
    with pytest.raises(NotFoundError, match="no such file"):
        client.download(snap, ["missing.json"])


def test_gated_repo_without_and_with_a_token(hub_server, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    anon = HubClient(backoff=0, sleep=lambda s: None)
    snap = anon.repo_snapshot(GATED)  # the listing is public, the files are not
    with pytest.raises(GatedRepoError) as e:
        anon.download(snap, ["README.md"])
    msg = str(e.value)
    assert GATED in msg and "request access" in msg and "HF_TOKEN" in msg and f"{hub_server.url}/datasets/{GATED}" in msg
    wrong = HubClient(token="hf_wrong_token_123", backoff=0, sleep=lambda s: None)
    with pytest.raises(GatedRepoError, match="has no access yet"):
        wrong.download(snap, ["README.md"])
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    ok = HubClient(backoff=0, sleep=lambda s: None)
    root = ok.download(snap, ["README.md"])
    assert (root / "README.md").read_text().startswith("# Details of fake-org/gated")
    assert any(auth for m, p, auth in hub_server.log if "/resolve/" in p)
    # the token is never logged nor shown
    assert TOKEN not in caplog.text and "hf_wrong_token_123" not in caplog.text
    assert TOKEN not in repr(ok) and "hf_wrong_token_123" not in str(e.value)


@pytest.mark.parametrize("written", [f"{TOKEN}\n", f" {TOKEN} ", f"{TOKEN}\r\n"])
def test_a_token_written_with_a_newline_or_spaces_is_read_as_huggingface_hub_reads_it(hub_server, monkeypatch, sleeps,
                                                                                      written):
    """HF_TOKEN as a file or a copy gives it (`HF_TOKEN="$(cat token)"` keeps a CR; a pasted one a space): the token
    without them, as huggingface_hub reads it, so the gated repo's files download. Before, taskspace read the variable
    as written: every request failed inside httpx (an illegal header value), was retried for 31 s as "the connection
    failed (LocalProtocolError) talking to ...", and the repo could not be read; and a message a server masks
    (`serve.scrub`) hides the token as it is sent (before, only as written: a newline and all)."""
    monkeypatch.setenv("HF_TOKEN", written)
    client = HubClient(backoff=0.5, sleep=sleeps.append)
    snap = client.repo_snapshot(GATED)
    root = client.download(snap, [f for f in snap.files if f.endswith(".json")])
    assert any(root.rglob("*.json")) and sleeps == []
    assert "token=set" in repr(client) and TOKEN not in repr(client)
    from indexer.serve import scrub

    assert scrub(f"refused Bearer {TOKEN}.") == "refused Bearer ***."  # masked as it is sent, not only as written


@pytest.mark.parametrize("written,what", [(f"{TOKEN}\u2026", "a character that is not ASCII (U+2026)"),
                                          (f"{TOKEN}\u00a0hf_other", "a character that is not ASCII (U+00A0)")])
def test_a_token_no_request_can_carry_is_a_config_error_naming_the_variable(hub_server, monkeypatch, sleeps, written,
                                                                             what, store, tmp_path):
    """HF_TOKEN holding what no HTTP header can carry (a pasted `…` or non-breaking space): a ConfigError (exit 2)
    naming the variable and the character, the token shown nowhere, no request sent and none retried. Before,
    `UnicodeEncodeError` escaped every Hub request (a traceback; `ingest`: "an unexpected error: please report it")."""
    import re

    from indexer.errors import ConfigError

    monkeypatch.setenv("HF_TOKEN", written)
    client = HubClient(backoff=0.5, sleep=sleeps.append)
    with pytest.raises(ConfigError, match=re.escape(f"HF_TOKEN holds {what}, which no HTTP header can carry: set it "
                                                    "to the token alone")) as got:
        client.repo_snapshot(GATED)
    assert TOKEN not in str(got.value) and "hf_other" not in str(got.value)
    assert sleeps == [] and hub_server.log == []
    # an ingest's metadata: one warning, the results stored (before, the UnicodeEncodeError ended it)
    from indexer.ingest import ingest

    s = ingest(str(_one_prompt_table(tmp_path, ("fake-org/tiny-lb", 1))), store=store, hub=client)
    assert s.errors == [] and s.outcomes == 1 and s.metadata == 0
    assert [w for w in s.warnings if "HF_TOKEN holds" in w and w.startswith("no Hub metadata fetched: ")] == s.warnings


def test_retries_429_and_5xx_with_backoff(client, hub_server, sleeps):
    hub_server.fail("/api/models/fake-org/tiny-lb", [429, 503, 500])
    assert client.model_info("fake-org/tiny-lb")["likes"] == 7
    assert sleeps == [0.5, 1.0, 2.0]  # exponential backoff
    hub_server.fail(f"/datasets/{LB}/resolve", [502])
    snap = client.repo_snapshot(LB)
    assert (client.download(snap, ["README.md"]) / "README.md").is_file()


def test_gives_up_after_the_retries(hub_server, sleeps):
    c = HubClient(retries=2, backoff=0.1, sleep=sleeps.append)
    hub_server.fail("/api/models/fake-org/tiny-lb", [503] * 5)
    with pytest.raises(HubError, match="answered 503.*gave up after 3 tries"):
        c.model_info("fake-org/tiny-lb")
    assert len(sleeps) == 2


def test_offline_mode_sends_nothing(hub_server, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    c = HubClient()
    n = len(hub_server.log)
    with pytest.raises(HubError, match="HF_HUB_OFFLINE"):
        c.model_info("fake-org/tiny-lb")
    assert len(hub_server.log) == n


def test_unreachable_endpoint_is_not_retried(monkeypatch, sleeps):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    c = HubClient(endpoint="http://127.0.0.1:9", sleep=sleeps.append)
    with pytest.raises(HubUnreachableError, match="cannot connect"):
        c.model_info("fake-org/tiny-lb")
    assert sleeps == []


def test_a_deadline_passing_between_huggingface_hubs_own_requests_is_an_outage(client, hub_server):
    """The operation's deadline passing between the requests huggingface_hub sends for one operation (a download's
    metadata request, then its file: each answered slowly) is an outage (`HubOutageError`, on which `taskspace pull`
    and `ingest` read the home's Hub cache), its error saying it was out of time. Before, a plain HubError: a pull
    whose Hub answered too slowly failed (exit 4) though the cache held the records."""
    from indexer.hub import HubOutageError

    snap = client.repo_snapshot(LB)
    now = [0.0]

    def clock():  # each look at the clock 40 s later: a slow Hub
        now[0] += 40.0
        return now[0]

    slow = HubClient(deadline=60.0, clock=clock)
    name = next(f for f in snap.files if f.endswith(".md"))
    with pytest.raises(HubOutageError, match="out of time") as got:
        slow.download(snap, [name])
    assert "the operation's deadline has passed" in got.value.reason and got.value.outage, got.value.reason
    assert len(hub_server.downloads()) == 0  # its metadata asked, the file never fetched


def test_a_download_cut_off_mid_file_is_resumed_or_says_what_to_do_and_leaves_nothing_half_written(hub_server):
    """A file answer cut off mid-body (the connection reset after half the bytes): once, it is fetched again within the
    operation and the file is whole; every time, until the operation's deadline passes, the error names the file and
    the repo, says the deadline passed and what to do (the client's `again`), and the cache holds nothing of the file
    (no blob, no `.incomplete`, no snapshot link), so the next run downloads it whole. Before, "cannot download F from
    ORG/NAME: out of time (GET /datasets/...: the operation's deadline has passed)", with nothing to do said."""
    from indexer.hub import HubOutOfTimeError

    repo = "fake-org/lm-eval-results"
    client = HubClient(deadline=3.0, again="run `taskspace ingest` again later")
    snap = client.repo_snapshot(repo)
    name = next(f for f in snap.files if f.endswith(".json"))
    prefix = f"/datasets/{repo}/resolve/"
    hub_server.cut(prefix, 1)
    root = client.download(snap, [name])
    assert (root / name).read_bytes() == (hub_server.root / "datasets" / repo / name).read_bytes()

    other = next(f for f in snap.files if f.endswith(".jsonl"))
    hub_server.cut(prefix, 1000)
    with pytest.raises(HubOutOfTimeError, match=rf"cannot download {other} from {repo}: .*3 s deadline.*; run "
                                                r"`taskspace ingest` again later\)$"):
        client.download(snap, [other])
    storage = client.cache_dir / f"datasets--{repo.replace('/', '--')}"
    assert not (storage / "snapshots" / snap.sha / other).exists()
    assert sorted(p.name for p in (storage / "blobs").iterdir()) == [
        (storage / "snapshots" / snap.sha / name).resolve().name]  # only the first file's blob: nothing half-written
    hub_server._cuts.clear()
    root = HubClient().download(snap, [other])  # the next run
    assert (root / other).read_bytes() == (hub_server.root / "datasets" / repo / other).read_bytes()


def test_huggingface_hubs_warnings_show_once_in_the_format_of_taskspace_logs(hub_server, taskspace_home):
    """`taskspace ingest hub:ORG/NAME` whose file answer is cut off once: huggingface_hub's warning that it resumes the
    download shows once on stderr, in the format of taskspace's other log lines. Before, it showed twice: once bare
    (huggingface_hub's own handler) and once through the CLI's logging."""
    import os
    import subprocess
    import sys

    hub_server.cut("/datasets/fake-org/lm-eval-results/resolve/", 1)
    env = {**os.environ, "HF_HUB_OFFLINE": "0"}
    res = subprocess.run([sys.executable, "-m", "indexer.cli", "ingest", "hub:fake-org/lm-eval-results",
                          "--no-metadata"], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    lines = [x for x in res.stderr.splitlines() if "Error while downloading" in x]
    assert len(lines) == 1 and " WARNING huggingface_hub.file_download: " in lines[0], res.stderr


def test_a_server_trickling_a_file_past_the_deadline_is_out_of_time_not_waited_for(hub_server):
    """A file answer whose bytes come slowly, each read well within any read timeout (1 KB every 0.4 s: a 12 KB file
    takes about 5 s), with a 2 s deadline: the download stops once the deadline passes, an outage
    (`HubOutOfTimeError`) naming the file and saying what to do, with nothing of the file in the cache; an answer
    coming in fast past the deadline (a large file) is read to its end. Before, the deadline was looked at only
    between requests: the download ran to its end (a server sending a byte every 9 s held
    a pass for hours)."""
    import time

    from indexer.hub import HubOutOfTimeError

    repo = "fake-org/lm-eval-results"
    client = HubClient(deadline=2.0)
    snap = client.repo_snapshot(repo)
    name = next(f for f in snap.files if f.endswith(".json"))
    assert (hub_server.root / "datasets" / repo / name).stat().st_size > 10_000
    hub_server.slow(f"/datasets/{repo}/resolve/", 0.4)
    start = time.monotonic()
    with pytest.raises(HubOutOfTimeError, match=rf"cannot download {name} from {repo}: out of time .*2 s deadline"):
        client.download(snap, [name])
    assert time.monotonic() - start < 3.5
    storage = client.cache_dir / f"datasets--{repo.replace('/', '--')}"
    assert not (storage / "snapshots" / snap.sha / name).exists()
    assert not [p for p in (storage / "blobs").iterdir()] if (storage / "blobs").is_dir() else True

    # past the deadline, an answer coming in fast (a large file on a good link) is read to its end
    hub_server.slows.clear()
    late = HubClient(deadline=60.0, clock=lambda: 1000.0 if hub_server.downloads() else 0.0)
    root = late.download(snap, [name])
    assert (root / name).read_bytes() == (hub_server.root / "datasets" / repo / name).read_bytes()


def test_an_answer_that_came_fast_then_trickles_past_the_deadline_is_cut_off(monkeypatch):
    """Past the deadline the body's speed is judged over the last LOW_SPEED_SECONDS too, as curl's --speed-limit and
    --speed-time judge it, not only averaged from the answer's start: a server that sends 2 MB at once and then a byte
    every 0.1 s is cut off within a window, not after 2 MB / 50 kB/s = 40 s of trickle (any burst bought a
    proportionally longer trickle)."""
    import time

    import indexer.hub as hub

    monkeypatch.setattr(hub, "LOW_SPEED_SECONDS", 0.3)

    class Body:
        def __iter__(self):
            yield b"x" * 2_000_000
            for _ in range(30):
                time.sleep(0.1)
                yield b"x"

        def close(self):
            pass

    start = time.monotonic()
    with pytest.raises(hub._DeadlineExceeded, match="deadline passed"):
        for _ in hub._deadline_stream(Body(), lambda: True, "GET /x"):
            pass
    assert time.monotonic() - start < 1.5


@pytest.mark.parametrize("value,ok", [
    ("meta-llama/Llama-3.1-8B", True), ("fake-org/noisy-oracle-70", True), ("a/b", True),
    ("gpt-4o(eval_results/gpt4o)", False), ("fake-org/", False), ("no-slash", False), ("a/b/c", False),
    ("org/na..me", False), ("org/-name", False), ("org/name.", False), ("org/na--me", False), ("", False),
])
def test_is_valid_repo_id(value, ok):
    assert is_valid_repo_id(value) is ok


# -- error paths, each provoked on the local Hub server and met through the real client (issue 21) ------------


def _one_prompt_table(tmp_path, *outcomes):
    """A plain-table source in ``tmp_path/t``: one prompt ("What is 2+2?", benchmark ``b``) and each (model, correct)."""
    d = tmp_path / "t"
    d.mkdir()
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(f"{m},p1,{c}\n" for m, c in outcomes))
    (d / "prompts.csv").write_text("prompt_id,benchmark,text\np1,b,What is 2+2?\n")
    return d


def _two_model_table(tmp_path, texts):
    """A plain-table source in ``tmp_path/t``: ``texts`` as prompts p0, p1, ... of benchmark ``b``, answered
    alternately right and wrong by ``fake-org/tiny-lb`` (a repo of the fake Hub) and ``other-model``."""
    d = tmp_path / "t"
    d.mkdir()
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(
        f"{m},p{i},{(i + j) % 2}\n" for j, m in enumerate(("fake-org/tiny-lb", "other-model")) for i in range(len(texts))))
    (d / "prompts.csv").write_text("prompt_id,benchmark,text\n" + "".join(f"p{i},b,{t}\n" for i, t in enumerate(texts)))
    return d


def _requests(server, prefix):
    return sum(1 for _, p, _ in server.log if p.startswith(prefix))


def test_429_waits_at_least_retry_after(client, hub_server, sleeps):
    """A 429 with ``Retry-After: 7`` waits 7 s (not the 0.5 s backoff); the next retry is back on the backoff."""
    hub_server.fail("/api/models/fake-org/tiny-lb", [(429, {"Retry-After": "7"}), 503])
    assert client.model_info("fake-org/tiny-lb")["likes"] == 7
    assert sleeps == [7.0, 1.0]
    capped = HubClient(backoff=0.5, max_backoff=3.0, sleep=sleeps.append)
    hub_server.fail("/api/models/fake-org/tiny-lb", [(429, {"Retry-After": "120"})])
    assert capped.model_info("fake-org/tiny-lb")["likes"] == 7
    assert sleeps[-1] == 3.0  # never longer than max_backoff


def test_a_retry_after_given_as_a_date_is_waited_for(client, hub_server, sleeps):
    """`Retry-After` may be an HTTP date (RFC 9110; as a CDN or proxy in front of a mirror sends it): a 429 asking to
    wait until 20 s from now waits about 20 s, as `Retry-After: 20` does; a date past is no wait. Before, a date was
    read as no wait: the retries came on the 0.5 s backoff, each one refused again, and gave up long before it."""
    import email.utils
    import time

    soon = email.utils.formatdate(time.time() + 20, usegmt=True)
    past = email.utils.formatdate(time.time() - 600, usegmt=True)
    hub_server.fail("/api/models/fake-org/tiny-lb", [(429, {"Retry-After": soon}), (503, {"Retry-After": past})])
    assert client.model_info("fake-org/tiny-lb")["likes"] == 7
    assert 17.0 <= sleeps[0] <= 21.0 and sleeps[1] == 1.0, sleeps


@pytest.mark.parametrize("token,status,words", [
    ("hf_not_this_one", 403, "refused to let this token read model info of the model fake-org/tiny-lb (403)"),
])
def test_401_and_403_say_what_to_do_with_the_token_and_are_not_retried(hub_server, sleeps, token, status, words):
    # a 403 without an X-Error-Code (a token whose scopes do not cover the read; the Hub answers a token that cannot
    # read a private repo 404 RepoNotFound, as the fake Hub's require_token does)
    hub_server.fail("/api/models/fake-org/tiny-lb", [status])
    c = HubClient(token=token, backoff=0.5, sleep=sleeps.append)
    with pytest.raises(GatedRepoError) as e:
        c.model_info("fake-org/tiny-lb")
    assert words in str(e.value) and f"{hub_server.url}/fake-org/tiny-lb" in str(e.value)
    assert ("HF_TOKEN" in str(e.value)) and (token is None or token not in str(e.value))
    assert sleeps == [] and _requests(hub_server, "/api/models/fake-org/tiny-lb") == 1
    assert GatedRepoError.exit_code == 4


def test_a_401_without_a_token_is_not_found_or_private_not_an_auth_failure(hub_server, store, tmp_path, sleeps):
    """Without a token the Hub answers a repo that does not exist (deleted, renamed without a redirect, a typo) as it
    answers a private one, 401 (the fake Hub's `hide_missing`, `require_token`): the error is a NotFoundError (exit 1,
    as a missing repo's) saying the repo is not on the Hub, or private or gated, and to set HF_TOKEN if it is yours; not
    retried. With a token set a 401 stays the auth error (exit 4): the token is refused. Before, every 401 was a
    GatedRepoError (exit 4), so `taskspace ingest hub:ORG/TYPO` without a token was said to be a Hub failure."""
    from typer.testing import CliRunner

    from indexer.cli import app
    from indexer.errors import HiddenRepoError
    from indexer.ingest import ingest

    hub_server.hide_missing = True
    hub_server.require_token("fake-org/tiny-lb", {TOKEN})
    for repo in ("fake-org/gone", "fake-org/tiny-lb"):  # missing, private: the Hub answers both alike
        with pytest.raises(NotFoundError) as e:
            HubClient(sleep=sleeps.append).model_info(repo)
        assert isinstance(e.value, HiddenRepoError) and not isinstance(e.value, HubError) and e.value.exit_code == 1
        assert (f"the model {repo} is not on the Hub at {hub_server.url}, or it is private or gated (without a token "
                "the Hub answers 401 for all three): check the id, and if it is yours or you have access set HF_TOKEN "
                "or run `hf auth login`") in str(e.value), str(e.value)
    with pytest.raises(NotFoundError) as e:  # with a token: 404, the repo does not exist
        HubClient(token=TOKEN).model_info("fake-org/gone")
    assert not isinstance(e.value, HiddenRepoError)
    hub_server.fail("/api/models/fake-org/tiny-lb", [401])  # with a token, a 401 refuses the token: exit 4
    with pytest.raises(GatedRepoError, match=r"refused to let this token read model info .*\(401\)"):
        HubClient(token="hf_not_this_one", sleep=sleeps.append).model_info("fake-org/tiny-lb")
    assert sleeps == []
    r = CliRunner().invoke(app, ["ingest", "hub:fake-org/deleted", "--no-metadata"])
    assert r.exit_code == 1, r.output
    assert "1 error: this input was not found on the Hub, nothing was ingested" in r.output.splitlines(), r.output
    assert "the dataset fake-org/deleted is not on the Hub at" in r.output and "set HF_TOKEN" in r.output
    # the metadata of a model the Hub answers 401: a warning saying so (asked again next pass: a token may be set)
    d = _one_prompt_table(tmp_path, ("fake-org/gone", 1), ("fake-org/tiny-lb-x", 0))
    s = ingest(str(d), store=store)
    assert len(s.warnings) == 2 and any("fake-org/gone: no Hub metadata (the model fake-org/gone is not on the Hub"
                                        in w for w in s.warnings), s.warnings
    assert store.get_model("fake-org/gone").fetched_at is None


def test_a_private_dataset_needs_the_right_token_for_listing_and_files(hub_server, sleeps):
    """A private repo read without a token: 401 RepoNotFound, a HiddenRepoError (exit 1); with a token that cannot
    read it: 404 RepoNotFound, as the Hub answers (it does not tell such a token the repo exists), a NotFoundError
    saying it does not exist or is private and this token cannot read it (exit 1). Before, the fake Hub answered that
    token 403 (a GatedRepoError, exit 4, "refused to let this token ...") and the 401 without an X-Error-Code."""
    hub_server.require_token(LB, {TOKEN})
    with pytest.raises(NotFoundError, match=r"not on the Hub at .*, or it is private or gated"):
        HubClient(sleep=sleeps.append).repo_snapshot(LB)
    with pytest.raises(NotFoundError, match=r"does not exist on .* \(or it is private and this token cannot read it\)") as e:
        HubClient(token="hf_wrong_one_1", sleep=sleeps.append).repo_snapshot(LB)
    assert not isinstance(e.value, GatedRepoError) and e.value.exit_code == 1
    ok = HubClient(token=TOKEN, sleep=sleeps.append)
    snap = ok.repo_snapshot(LB)
    with pytest.raises(NotFoundError, match=r"not on the Hub at .*, or it is private or gated"):
        HubClient(sleep=sleeps.append).download(snap, ["README.md"])  # a file of the private repo, no token
    with pytest.raises(NotFoundError, match=r"or it is private and this token cannot read it"):
        HubClient(token="hf_wrong_one_1", sleep=sleeps.append).download(snap, ["README.md"])
    assert (ok.download(snap, ["README.md"]) / "README.md").is_file()
    assert sleeps == []


def test_ingest_of_a_repo_it_may_not_read_says_why_with_its_exit_code(hub_server, monkeypatch):
    """`taskspace ingest hub:...` of a repo the Hub will not show, as the Hub answers (the fake Hub's ``hide_missing``
    and ``require_token``): without a token a missing and a private repo alike are "not on the Hub ..., or it is
    private or gated" (exit 1); with a token that cannot read a private repo, "does not exist ... (or it is private
    and this token cannot read it)" (exit 1); a gated repo's files without access, "gated and no token is set" or
    "your token has no access yet" and how to request access (exit 4). Before, the fake Hub answered the token 403 and
    the ingest said "the Hub refused to let this token read ..." (exit 4), which the Hub never answers."""
    from typer.testing import CliRunner

    from indexer.cli import app

    hub_server.hide_missing = True
    hub_server.require_token(LB, {TOKEN})
    cases = [(None, "fake-org/nope", 1, "not found on the Hub", "is not on the Hub at"),
             (None, LB, 1, "not found on the Hub", "is not on the Hub at"),
             ("hf_other_1", LB, 1, "not found on the Hub", "does not exist on"),
             (None, GATED, 4, "could not be fetched from the Hub", "is gated and no token is set: request access at"),
             ("hf_other_1", GATED, 4, "could not be fetched from the Hub",
              "is gated and your token has no access yet: request access at")]
    for token, repo, code, kind, words in cases:
        if token:
            monkeypatch.setenv("HF_TOKEN", token)
        else:
            monkeypatch.delenv("HF_TOKEN", raising=False)
        r = CliRunner().invoke(app, ["ingest", f"hub:{repo}", "--no-metadata"])
        assert r.exit_code == code, (repo, token, r.output)
        assert f"1 error: this input was {kind}" in r.output or f"1 error: this input {kind}" in r.output, r.output
        assert f"hub:{repo}: the dataset {repo} {words}" in r.output, r.output


def test_the_fake_hub_answers_a_private_or_missing_repo_as_the_hub_does(hub_server):
    """The fake Hub's headers, as the Hub's: a private repo (``require_token``) or a missing one (``hide_missing``)
    read without a token is 401 with ``X-Error-Code: RepoNotFound``; with a token that cannot read it 404
    RepoNotFound (never 403); a gated repo's info answers anyone and its files 401 / 403 with ``GatedRepo``."""
    import httpx2

    hub_server.require_token(LB, {TOKEN})
    hub_server.hide_missing = True
    snap = HubClient(token=TOKEN).repo_snapshot(LB)

    def answer(path, token=None):
        r = httpx2.get(hub_server.url + path, headers={"Authorization": f"Bearer {token}"} if token else {})
        return r.status_code, r.headers.get("X-Error-Code")

    for path in (f"/api/datasets/{LB}", f"/api/datasets/{LB}/tree/main", f"/datasets/{LB}/resolve/{snap.sha}/README.md",
                 "/api/datasets/fake-org/nope"):
        assert answer(path) == (401, "RepoNotFound"), path
        assert answer(path, "hf_wrong_one_1") == (404, "RepoNotFound"), path
    assert answer(f"/api/datasets/{LB}", TOKEN)[0] == 200
    gated = HubClient().repo_snapshot(GATED)
    assert answer(f"/api/datasets/{GATED}") == (200, None)
    f = f"/datasets/{GATED}/resolve/{gated.sha}/README.md"
    assert answer(f) == (401, "GatedRepo") and answer(f, "hf_wrong_one_1") == (403, "GatedRepo")


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_repo_the_hub_will_not_show_reads_alike_over_http_and_https(scheme):
    """huggingface_hub reads a 401 without an X-Error-Code as RepositoryNotFoundError only from an https:// endpoint
    (its REPO_API_REGEX), an HfHubHTTPError from http://: taskspace's error (its class, exit code and message) is the
    same for both, and for the 401 or 404 with ``X-Error-Code: RepoNotFound`` the Hub sends, with and without a
    token; a 401 refusing a token (``Invalid credentials in Authorization header``) stays the auth error."""
    import httpx2
    from huggingface_hub.utils import hf_raise_for_status

    from indexer.errors import HiddenRepoError
    from indexer.hub import _translate

    endpoint = f"{scheme}://hub.example"

    def error(status, code=None, message="Repository not found", token=False):
        headers = {"X-Error-Message": message, **({"X-Error-Code": code} if code else {})}
        req = httpx2.Request("GET", f"{endpoint}/api/datasets/org/private")
        try:
            hf_raise_for_status(httpx2.Response(status, headers=headers, request=req))
        except Exception as exc:  # noqa: BLE001 - what huggingface_hub raised
            err, retry = _translate(exc, "read", "org/private", "dataset", endpoint, token)
            assert retry is None
            return type(err), err.exit_code, str(err)
        raise AssertionError("no error raised")

    hidden = (HiddenRepoError, 1, f"the dataset org/private is not on the Hub at {endpoint}, or it is private or gated "
              "(without a token the Hub answers 401 for all three): check the id, and if it is yours or you have access "
              f"set HF_TOKEN or run `hf auth login` (gated: request access at {endpoint}/datasets/org/private)")
    assert error(401, "RepoNotFound") == hidden
    assert error(401) == hidden  # without the header: the same
    assert error(404, "RepoNotFound", token=True) == (
        NotFoundError, 1, f"the dataset org/private does not exist on {endpoint} (or it is private and this token "
                          "cannot read it)")
    refused = error(401, message="Invalid credentials in Authorization header", token=True)
    assert refused[:2] == (GatedRepoError, 4) and "refused to let this token read" in refused[2], refused
    assert error(401, "RepoNotFound", token=True)[:2] == (GatedRepoError, 4)


def test_a_bare_404_is_not_found_and_not_retried(client, hub_server, sleeps):
    hub_server.fail("/api/models/fake-org/tiny-lb", [404])
    with pytest.raises(NotFoundError, match="fake-org/tiny-lb"):
        client.model_info("fake-org/tiny-lb")
    assert sleeps == [] and _requests(hub_server, "/api/models/fake-org/tiny-lb") == 1


def test_a_400_is_an_error_at_once_not_retried(client, hub_server, sleeps):
    hub_server.fail("/api/models/fake-org/tiny-lb", [400, 400, 400])
    with pytest.raises(HubError, match="answered 400") as e:
        client.model_info("fake-org/tiny-lb")
    assert not isinstance(e.value, (NotFoundError, GatedRepoError)) and e.value.exit_code == 4
    assert sleeps == [] and _requests(hub_server, "/api/models/fake-org/tiny-lb") == 1


def test_a_dropped_connection_is_retried_then_succeeds(client, hub_server, sleeps):
    hub_server.drop("/api/models/fake-org/tiny-lb", 1)
    assert client.model_info("fake-org/tiny-lb")["likes"] == 7
    assert sleeps == [0.5] and _requests(hub_server, "/api/models/fake-org/tiny-lb") == 2
    snap = client.repo_snapshot(LB)
    hub_server.drop(f"/datasets/{LB}/resolve", 1)  # a file download that drops once
    assert (client.download(snap, ["README.md"]) / "README.md").is_file()
    assert sleeps == [0.5, 0.5]


def test_an_answer_huggingface_hub_cannot_read_is_a_hub_error_and_the_ingest_goes_on(hub_server, sleeps, store,
                                                                                      tmp_path):
    """A model's info whose `safetensors` lacks `parameters` (a broken mirror, a hostile HF_ENDPOINT) makes
    huggingface_hub raise `KeyError: 'parameters'` while reading it: that is a HubError naming the endpoint, not
    retried, and an ingest records it as that model's metadata warning and stores the rest (the other model's
    metadata too). Before, the KeyError escaped: `taskspace index` ended with a traceback (run `failed`) after the
    source was stored, so the next pass found it unchanged and never fetched the metadata."""
    import json

    from indexer.ingest import ingest

    broken = hub_server.root / "models" / "fake-org" / "broken"
    broken.mkdir(parents=True)
    (broken / "config.json").write_text("{}")
    (broken / "_info.json").write_text(json.dumps({"safetensors": {"total": 5}}))
    client = HubClient(backoff=0.5, sleep=sleeps.append)
    with pytest.raises(HubError, match=r"cannot read model info of fake-org/broken: the Hub at http://127\.0\.0\.1:\d+ "
                                       r"answered something huggingface_hub cannot read \(KeyError: 'parameters'\)"):
        client.model_info("fake-org/broken")
    assert sleeps == []
    assert client.model_info("fake-org/tiny-lb")["num_parameters"] == 1234567  # the client goes on

    d = _one_prompt_table(tmp_path, ("fake-org/broken", 1), ("fake-org/tiny-lb", 0))
    s = ingest(str(d), store=store)
    assert s.errors == [] and s.outcomes == 2 and s.metadata == 1
    assert len(s.warnings) == 1 and s.warnings[0].startswith("fake-org/broken: no Hub metadata (cannot read model info")
    assert store.get_model("fake-org/tiny-lb").num_parameters == 1234567


def test_a_repo_listing_a_file_name_that_is_not_text_is_a_hub_error(hub_server, store):
    """A dataset's info listing a file whose `rfilename` is not text (`5`: a broken mirror or a hostile HF_ENDPOINT): a
    HubError naming the repo and the endpoint (`ingest` exit 4, "could not be fetched from the Hub"). Before, the
    ingest's own unsafe-name message failed on it: "cannot be read: TypeError: 'int' object is not subscriptable (an
    unexpected error: please report it ...)", exit 1."""
    import json

    from indexer.ingest import ingest

    repo = "fake-org/lm-eval-results"
    (hub_server.root / "datasets" / repo / "_info.json").write_text(json.dumps({"siblings": [{"rfilename": 5}]}))
    with pytest.raises(HubError, match=rf"the Hub at http://127\.0\.0\.1:\d+ listed a file of {repo} whose name is "
                                       r"not text \(5\); refusing it"):
        HubClient().repo_snapshot(repo)
    s = ingest(f"hub:{repo}", store=store, fetch_metadata=False)
    (e,) = s.errors
    assert s.exit_code == 4 and "whose name is not text" in e.message and "please report" not in e.message


def test_an_answer_that_is_not_json_is_a_hub_error_naming_the_repo_or_listing(hub_server, sleeps, store):
    """A 200 whose body is not JSON (a proxy's error page, a broken mirror: `server.garble`) for a repo's info or an
    organisation's listing: a HubError naming the repo or the listing and the endpoint, not retried (`ingest` exit
    4); the next request, answered right, goes on."""
    from indexer.ingest import ingest

    repo = "fake-org/lm-eval-results"
    hub_server.garble(f"/api/datasets/{repo}", 1)
    client = HubClient(backoff=0.5, sleep=sleeps.append)
    with pytest.raises(HubError, match=rf"cannot read {repo}: the Hub at http://127\.0\.0\.1:\d+ answered something "
                                       r"huggingface_hub cannot read \(JSONDecodeError"):
        client.repo_snapshot(repo)
    hub_server.garble("/api/datasets", 1)
    s = ingest("hub-org:fake-org", store=store, hub=client, fetch_metadata=False)
    (e,) = s.errors
    assert s.exit_code == 4 and e.file == "hub-org:fake-org" and "cannot list the datasets of fake-org" in e.message
    assert sleeps == [] and client.repo_snapshot(repo).files


def test_a_model_info_with_a_date_huggingface_hub_cannot_parse_is_a_hub_error_and_the_ingest_goes_on(
        hub_server, sleeps, store, tmp_path):
    """A model's info whose `createdAt` is no date (a broken mirror, a hostile HF_ENDPOINT) makes huggingface_hub
    raise `ValueError: Cannot parse 'yesterday' as a datetime` while building its ModelInfo: a HubError naming the
    endpoint and the model, not retried, and an ingest stores the outcomes and the other model's metadata with a
    warning for that model. Before, the ValueError escaped: `taskspace ingest` ended with a traceback after the
    source was stored, and no model of the pass got metadata."""
    import json

    from indexer.ingest import ingest

    d = hub_server.root / "models" / "fake-org" / "undated"
    d.mkdir(parents=True)
    (d / "config.json").write_text("{}")
    (d / "_info.json").write_text(json.dumps({"createdAt": "yesterday"}))
    client = HubClient(backoff=0.5, sleep=sleeps.append)
    with pytest.raises(HubError, match=r"cannot read model info of fake-org/undated: the Hub at http://127\.0\.0\.1:\d+ "
                                       r"answered something huggingface_hub cannot read \(ValueError: Cannot parse "
                                       r"'yesterday' as a datetime"):
        client.model_info("fake-org/undated")
    assert sleeps == []
    t = _one_prompt_table(tmp_path, ("fake-org/undated", 1), ("fake-org/tiny-lb", 0))
    s = ingest(str(t), store=store)
    assert s.errors == [] and s.outcomes == 2 and s.metadata == 1
    assert len(s.warnings) == 1 and s.warnings[0].startswith("fake-org/undated: no Hub metadata (cannot read model info")
    assert store.get_model("fake-org/tiny-lb").num_parameters == 1234567


@pytest.mark.parametrize("call", ["upload_file", "parse_datetime", "hf_hub_download", "model_info"])
def test_a_value_error_from_an_argument_huggingface_hub_checks_escapes_as_itself(call, hub_server, sleeps, tmp_path):
    """A ValueError huggingface_hub raises checking an argument taskspace passed (a bug of ours), before or without
    reading any answer: upload_file's CommitOperationAdd.__post_init__ ("Provided path ... is not a file"),
    parse_datetime of a text that is no date, hf_hub_download's "Invalid repo type", model_info's `expand` with
    `files_metadata`: it escapes as itself, not retried. Before, one raised in a huggingface_hub __init__,
    __post_init__ or parse_datetime frame became a HubError saying the Hub at HF_ENDPOINT "answered something
    huggingface_hub cannot read", so our bug read as a broken endpoint (the answers that are malformed still are
    HubErrors: the tests above)."""
    import re

    from huggingface_hub import hf_hub_download
    from huggingface_hub.utils import parse_datetime

    client = HubClient(backoff=0.5, sleep=sleeps.append)
    repo = "fake-org/tiny-lb"
    fn, args, kwargs, message = {
        "upload_file": (client._api.upload_file, (), dict(path_or_fileobj=str(tmp_path / "missing"), path_in_repo="x",
                                                          repo_id=repo), "is not a file"),
        "parse_datetime": (parse_datetime, ("yesterday",), {}, "Cannot parse 'yesterday' as a datetime"),
        "hf_hub_download": (hf_hub_download, (repo, "config.json"), dict(repo_type="bogus", endpoint=client.endpoint),
                            "Invalid repo type"),
        "model_info": (client._api.model_info, (repo,), dict(expand=["author"], files_metadata=True),
                       "`expand` cannot be used"),
    }[call]
    with pytest.raises(ValueError, match=re.escape(message)) as got:
        client._call("read model info of", repo, "model", fn, *args, **kwargs)
    assert not isinstance(got.value, HubError) and sleeps == []
    assert client.model_info(repo)["num_parameters"] == 1234567  # the client goes on


def test_a_model_card_with_odd_metadata_values_costs_no_metadata(hub_server, store, tmp_path):
    """A model card's YAML is its author's: `license: 5`, `base_model: {name: x}`, `tags` holding null, a blank
    license. The metadata keeps the text (a number as written, a list of texts joined, a blank or a mapping as
    unknown) and an ingest stores every model's metadata. Before, the mapping reached SQL: `upsert_models` failed
    ("type 'dict' is not supported", "cannot adapt type 'dict'") for the whole batch, so no model of the pass got its
    metadata, and the StoreError ended `taskspace index` (run failed) after the source was stored. A safetensors
    total of 0 is no size (unknown); before, 0 was stored."""
    import json

    from indexer.ingest import ingest

    for name, info in {"odd": {"cardData": {"license": 5, "base_model": {"name": "x"}}, "tags": ["a", None, " "],
                               "gated": True, "pipeline_tag": ""},
                       "blank": {"cardData": {"license": [" ", {"a": 1}], "base_model": [None, "org/base"]},
                                 "safetensors": {"parameters": {}, "total": None}},
                       "zero": {"safetensors": {"parameters": {}, "total": 0}}}.items():
        d = hub_server.root / "models" / "fake-org" / name
        d.mkdir(parents=True)
        (d / "config.json").write_text("{}")
        (d / "_info.json").write_text(json.dumps(info))
    got = HubClient().model_info("fake-org/odd")
    assert (got["license"], got["base_model"], got["tags"], got["gated"], got["pipeline_tag"]) == (
        "5", None, ["a"], "true", None)
    d = _one_prompt_table(tmp_path, ("fake-org/odd", 1), ("fake-org/blank", 0), ("fake-org/tiny-lb", 1))
    s = ingest(str(d), store=store)
    assert s.errors == [] and s.outcomes == 3 and s.metadata == 3 and s.warnings == []
    odd, blank = store.get_model("fake-org/odd"), store.get_model("fake-org/blank")
    assert (odd.license, odd.base_model, odd.tags, odd.gated) == ("5", None, ["a"], "true")
    assert (blank.license, blank.base_model, blank.num_parameters) == (None, "org/base", None)
    assert store.get_model("fake-org/tiny-lb").num_parameters == 1234567
    # safetensors of no tensor: a count of 0 is no size (unknown), as the size filters and the penalty take it
    assert HubClient().model_info("fake-org/zero")["num_parameters"] is None


def test_the_fake_hub_answers_a_card_whose_metadata_is_not_a_mapping_as_the_hub_does(hub_server):
    """A model whose `_info.json` gives a `cardData` that is not a mapping (a card whose YAML header is a list or a
    text): the fake Hub answers as the Hub does, which gives `cardData` only as a mapping (no card metadata, no model
    tree tags), so the model's info is read with no license or base. Before, the fake Hub's request handler failed
    (`AttributeError: 'list' object has no attribute 'get'` in `model_tree_tags`) and answered nothing."""
    import json

    for name, card in (("listcard", ["base_model: x"]), ("textcard", "license: mit")):
        d = hub_server.root / "models" / "fake-org" / name
        d.mkdir(parents=True)
        (d / "config.json").write_text("{}")
        (d / "_info.json").write_text(json.dumps({"cardData": card}))
        got = HubClient(retries=0).model_info(f"fake-org/{name}")
        assert (got["license"], got["base_model"], got["tags"]) == (None, None, [])


def test_a_gguf_repos_parameter_count_comes_from_its_gguf_metadata(hub_server, store, tmp_path):
    """A GGUF repo (llama.cpp quantizations: no safetensors) has the parameter count the Hub reads from its GGUF
    header (`gguf.total` of its model info), so size filters keep or drop it like any repo; a repo with safetensors
    keeps theirs (an MoE's total, every expert counted), one with neither stays unknown. Before, every GGUF repo's
    size was unknown and `--max-params 8B` dropped it as missing metadata."""
    import json

    from indexer.ingest import ingest

    for name, info in (("q-GGUF", {"gguf": {"total": 8030261248, "architecture": "llama", "context_length": 8192}}),
                       ("moe", {"safetensors": {"parameters": {"BF16": 46702792704}, "total": 46702792704},
                                "gguf": {"total": 1}}),
                       ("no-count", {"library_name": "transformers", "cardData": {"license": "mit"}})):
        d = hub_server.root / "models" / "fake-org" / name
        d.mkdir(parents=True)
        (d / "config.json").write_text("{}")
        (d / "_info.json").write_text(json.dumps(info))
    assert HubClient().model_info("fake-org/q-GGUF")["num_parameters"] == 8030261248
    d = _one_prompt_table(tmp_path, ("fake-org/q-GGUF", 1), ("fake-org/moe", 0), ("fake-org/no-count", 1))
    s = ingest(str(d), store=store)
    assert s.errors == [] and s.metadata == 3
    assert {m.key: m.num_parameters for m in store.list_models()} == {
        "fake-org/q-GGUF": 8030261248, "fake-org/moe": 46702792704, "fake-org/no-count": None}


def test_a_packed_quantized_repos_count_is_not_taken_for_its_size(hub_server):
    """A GPTQ/AWQ repo stores its weights packed (eight 4-bit values in one I32) and the Hub's safetensors count is of
    the packed elements (a 4-bit 70B model counts about 9B): such a count is no size, so the parameter count is unknown
    (a size filter reports it missing); an 8-bit repo (I8, one value each) and a model with a few integer buffers keep
    theirs. Before, a 70B GPTQ model passed `--max-params 10B`."""
    import json

    for name, params in (("llama-70b-gptq", {"I32": 8_600_000_000, "F16": 530_000_000}),
                         ("llama-8b-int8", {"I8": 6_980_000_000, "F16": 1_050_000_000}),
                         ("bert", {"F32": 109_000_000, "I64": 512})):
        d = hub_server.root / "models" / "fake-org" / name
        d.mkdir(parents=True)
        (d / "config.json").write_text("{}")
        (d / "_info.json").write_text(json.dumps({"safetensors": {"parameters": params, "total": sum(params.values())}}))
    got = {n: HubClient().model_info(f"fake-org/{n}")["num_parameters"]
           for n in ("llama-70b-gptq", "llama-8b-int8", "bert")}
    assert got == {"llama-70b-gptq": None, "llama-8b-int8": 8_030_000_000,
                   "bert": 109_000_512}


def test_a_renamed_or_other_case_model_id_becomes_one_model_under_its_current_hub_id(hub_server, store, tmp_path):
    """A model repo renamed on the Hub (its old id answers 307 to the new one, which huggingface_hub follows) and an
    id typed in another case (the Hub answers it with the repo's own id): one model, stored under the id the Hub
    gives it now, with the outcomes of every name (two names of one source's benchmark merged into one block, their
    one shared prompt agreeing) and the old names as aliases. Before, each name was a model of its own: the old id's
    row took the new repo's metadata, and `search` listed one model two or three times."""
    from indexer.find import _resolve_models
    from indexer.ingest import ingest

    hub_server.rename("model", "fake-org/old-name", "fake-org/tiny-lb")
    assert HubClient().model_info("fake-org/old-name")["key"] == "fake-org/tiny-lb"
    assert HubClient().model_info("Fake-Org/TINY-lb")["key"] == "fake-org/tiny-lb"
    d = tmp_path / "t"
    d.mkdir()
    rows = [("fake-org/old-name", "p0", 1), ("fake-org/old-name", "p1", 0), ("Fake-Org/Tiny-LB", "p2", 1),
            ("fake-org/tiny-lb", "p3", 0), ("fake-org/tiny-lb", "p0", 1)]
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(f"{m},{p},{c}\n" for m, p, c in rows))
    (d / "prompts.csv").write_text("prompt_id,benchmark,text\n" + "".join(f"p{i},b,What is {i}+2?\n" for i in range(4)))
    s = ingest(str(d), store=store)
    assert s.errors == [] and s.warnings == [] and s.metadata == 1
    assert [m.key for m in store.list_models()] == ["fake-org/tiny-lb"]
    got = store.get_model("fake-org/tiny-lb")
    assert (got.license, got.num_parameters, got.author) == ("apache-2.0", 1234567, "fake-org")
    assert store.aliases_of("fake-org/tiny-lb") == ["Fake-Org/Tiny-LB", "fake-org/old-name", "fake-org/tiny-lb"]
    ((_, bench, ids, scores),) = store.outcome_blocks(["fake-org/tiny-lb"])
    assert bench == "b" and len(ids) == 4 and sorted(scores.tolist()) == [0.0, 0.0, 1.0, 1.0]
    assert _resolve_models(store, ["fake-org/old-name", "FAKE-ORG/tiny-lb"]) == ["fake-org/tiny-lb"]
    # a later source naming the old id is read into the same model
    d2 = tmp_path / "t2"
    d2.mkdir()
    (d2 / "outcomes.csv").write_text("model,prompt_id,correct\nfake-org/old-name,q1,1\n")
    (d2 / "prompts.csv").write_text("prompt_id,benchmark,text\nq1,c,What is 9+9?\n")
    assert ingest(str(d2), store=store).errors == []
    assert [m.key for m in store.list_models()] == ["fake-org/tiny-lb"]
    assert len(store.outcome_blocks(["fake-org/tiny-lb"])) == 2


def test_a_revision_not_found_is_named(client, hub_server, store, taskspace_home):
    """`@REV` naming no commit, branch or tag of an existing repo (`taskspace pull hub:ORG/NAME@REV`, `ingest`,
    `sources add`): the error names the revision and what to give. Before, "revision not found in the dataset
    ORG/NAME", the revision named nowhere."""
    from indexer.ingest import ingest
    from indexer.publish import pull

    with pytest.raises(NotFoundError, match=rf"revision 'v9' not found in the dataset {LB}: give one of its commit "
                                            "shas, branches or tags, or none for main"):
        client.repo_snapshot(LB, "v9")
    with pytest.raises(NotFoundError, match=rf"revision '{'0' * 40}' not found in the dataset {LB}"):
        pull(f"hub:{LB}@{'0' * 40}")
    (e,) = ingest(f"hub:{LB}@no-such-branch", store=store).errors
    assert "revision 'no-such-branch' not found in the dataset" in e.message


def test_a_repo_whose_revision_changes_between_listing_and_download(hub_server, store, sleeps):
    """The repo's main moves on (a force-push: the commit listed is gone) between `repo_snapshot` and `download`: the
    download's error names the file, the commit and what happened and to run the command again (a HubError, exit 4),
    and `ingest hub:ORG/NAME` lists the repo once more and reads the revision it has now; `@COMMIT` pinned to the
    commit gone stays the error. Before, "revision not found in the dataset ORG/NAME" (exit 1, the file and commit
    named nowhere, as if the user had mistyped a revision) and the ingest stored nothing."""
    from indexer.ingest import ingest

    repo = "fake-org/lm-eval-results"
    folder = hub_server.root / "datasets" / repo

    def force_push():
        f = next(p for p in sorted(folder.rglob("results_*.json")))
        f.write_bytes(f.read_bytes() + b"\n")

    client = HubClient(backoff=0.5, sleep=sleeps.append)
    snap = client.repo_snapshot(repo)
    force_push()
    with pytest.raises(HubError, match=rf"cannot download {snap.files[0]} from {repo}: its commit {snap.sha} \(main "
                                       rf"when listed\) is no longer on the Hub at http://127\.0\.0\.1:\d+: the repo "
                                       r"changed since it was listed .*; run the command again"):
        client.download(snap, list(snap.files))
    assert sleeps == []

    listed = []
    real = HubClient.repo_snapshot

    def moving(self, *args, **kwargs):  # main moves on right after the first listing
        got = real(self, *args, **kwargs)
        listed.append(got.sha)
        if len(listed) == 1:
            force_push()
        return got

    hub = HubClient(backoff=0.5, sleep=sleeps.append)
    hub.repo_snapshot = moving.__get__(hub)
    s = ingest(f"hub:{repo}", store=store, hub=hub, fetch_metadata=False)
    assert s.errors == [] and s.outcomes == 84 and len(listed) == 2 and listed[0] != listed[1]
    s = ingest(f"hub:{repo}", store=store, hub=HubClient(), fetch_metadata=False)
    assert s.errors == [] and s.skipped == 1  # the revision stored is the one main is now

    hub = HubClient(backoff=0.5, sleep=sleeps.append)  # a commit pinned: not listed again
    hub.repo_snapshot = moving.__get__(hub)
    listed.clear()
    listed.append("already")
    force_push()
    pinned = real(hub, repo).sha
    real_download = HubClient.download
    hub.download = lambda snap, files, **kw: (force_push(), real_download(hub, snap, files, **kw))[1]
    (e,) = ingest(f"hub:{repo}@{pinned}", store=store, hub=hub, fetch_metadata=False).errors
    assert "is no longer on the Hub" in e.message and len(listed) == 2


def test_a_short_commit_sha_is_resolved_by_the_hub_online_and_in_the_cache_offline(client, hub_server, monkeypatch):
    """`@0e05e3f` (a commit sha shortened, as the Hub's pages and git show it): online the Hub resolves it (as
    huggingface.co does, huggingface_hub#197) and the snapshot is at the whole commit, recorded in the cache under no
    ref of that name; offline the cache resolves it to the one cached commit it starts, an ambiguous one is an error
    listing the commits it starts, and one starting none the offline refusal. A short sha the Hub does not resolve
    says to give the whole commit. Before, offline, "the Hub cache ... holds no revision 0e05e3f of it" (exit 4) though
    it held that commit."""
    full = client.repo_snapshot(LB)
    short = full.sha[:7]
    snap = client.repo_snapshot(LB, short)
    assert snap.sha == full.sha and snap.files == full.files
    client.download(snap, ["README.md"])
    storage = client.cache_dir / f"datasets--{LB.replace('/', '--')}"
    assert not (storage / "refs" / short).exists()  # a commit, not a branch
    with pytest.raises(NotFoundError, match=r"revision 'ffff0000' not found .*give the whole 40-hex-digit commit"):
        client.repo_snapshot(LB, "ffff0000" if not full.sha.startswith("ffff0000") else "eeee0000")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    offline = HubClient()
    for rev in (short, full.sha[:4], full.sha[:39]):
        got = offline.cached_snapshot(LB, rev)
        assert (got.sha, got.files, got.ref) == (full.sha, ("README.md",), rev)
        assert (offline.download(got, ["README.md"]) / "README.md").is_file()
    other = "0" if full.sha[7] != "0" else "1"
    twins = [short + other + c * 32 for c in "ab"]  # two more cached commits that start as this one does
    for t in twins:
        (storage / "snapshots" / t).mkdir()
    with pytest.raises(HubError) as e:
        offline.cached_snapshot(LB, short)
    assert str(e.value) == (f"cannot read {LB}: revision {short} is the start of 3 commits the Hub cache "
                            f"{offline.cache_dir} holds ({', '.join(sorted([full.sha, *twins]))}): give more of it, or "
                            "the whole 40-hex-digit commit")
    assert offline.cached_snapshot(LB, full.sha[:8]).sha == full.sha  # long enough to be one again
    nowhere = "ffff0000" if not full.sha.startswith("ffff0000") else "eeee0000"
    with pytest.raises(HubError, match=rf"HF_HUB_OFFLINE is set and the Hub cache .* holds no revision {nowhere} of it"):
        offline.cached_snapshot(LB, nowhere)


def test_a_token_the_hub_does_not_accept_is_named_as_such_when_publishing(hub_server, sleeps):
    """A token whoami answers 401 to (mistyped, expired, revoked): `taskspace publish` says the Hub does not accept
    the token and how to make one (exit 4, the token never shown). Before: "the Hub refused to let this token check
    the token for the dataset ORG/NAME (401): use a token with write access to ORG", which sent the user to add
    write access to a token that is not valid at all."""
    hub_server.tokens = {"hf_write_1": "write"}
    c = HubClient(token="hf_revoked_9", sleep=sleeps.append)
    with pytest.raises(GatedRepoError) as e:
        c.check_write_access("tester/recs")
    msg = str(e.value)
    assert msg == (f"the Hub at {hub_server.url} does not accept the Hugging Face token (401: mistyped, expired or "
                   "revoked), so nothing can be published to tester/recs: create a token with write access at "
                   "https://huggingface.co/settings/tokens, then run `hf auth login` or set HF_TOKEN")
    assert "hf_revoked_9" not in msg and e.value.exit_code == 4 and sleeps == []
    HubClient(token="hf_write_1", sleep=sleeps.append).check_write_access("tester/recs")  # a valid one passes


def test_a_pull_the_hub_fails_says_nothing_was_pulled_and_to_run_it_again(hub_server, sleeps, taskspace_home):
    """A Hub that keeps answering 503 during `taskspace pull` of a multi-file record set: after the retries the error
    says nothing was pulled and to run the command again (`publish` likewise says nothing was published). Before,
    "(gave up after 6 tries ...; the next run tries again)", the words of an indexing pass: nothing tries a pull
    again."""
    from indexer.publish import pull

    repo = hub_server.root / "datasets" / "tester" / "recs"
    for name in ("spaces.parquet", "benchmarks.parquet", "models/s.parquet"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(b"not read: a download fails")
    hub_server.fail("/datasets/tester/recs/resolve", [503] * 6)
    with pytest.raises(HubError) as e:
        pull("hub:tester/recs", hub=HubClient(backoff=0.01, sleep=sleeps.append))
    assert str(e.value).startswith("cannot download benchmarks.parquet from tester/recs: the Hub answered 503 (gave up")
    assert str(e.value).endswith("; nothing was pulled; run `taskspace pull` again later)")
    assert "next run" not in str(e.value) and len(sleeps) == 5


def test_metadata_a_failing_hub_did_not_give_is_fetched_by_the_next_ingest(hub_server, store, tmp_path):
    """The Hub failing (503 after the retries) while an ingest fetches a model's metadata: the next ingest fetches it,
    though its source is unchanged (skipped); a Hub id the Hub does not know is asked once, not on every pass.
    Before, metadata was asked only for the models of sources stored in that pass, so the warning's "the next run
    tries again" never happened: the model kept no licence, parameters or gated until its source changed (the same
    after a pass run with HF_HUB_OFFLINE=1)."""
    from indexer.ingest import ingest

    d = _one_prompt_table(tmp_path, ("fake-org/tiny-lb", 1), ("fake-org/not-on-hub", 0))
    hub_server.fail("/api/models/fake-org/tiny-lb", [503] * 6)
    first = ingest(str(d), store=store, hub=HubClient(backoff=0.01, sleep=lambda s: None))
    assert first.metadata == 0 and any("fake-org/tiny-lb: no Hub metadata" in w for w in first.warnings)
    assert store.get_model("fake-org/tiny-lb").license is None
    second = ingest(str(d), store=store)
    assert second.skipped == 1 and second.metadata == 1 and second.warnings == []
    assert store.get_model("fake-org/tiny-lb").num_parameters == 1234567
    asked = _requests(hub_server, "/api/models/fake-org/not-on-hub")
    third = ingest(str(d), store=store)
    assert third.metadata == 0 and third.warnings == []
    assert _requests(hub_server, "/api/models/fake-org/not-on-hub") == asked == 1  # asked once, answered 404


def test_metadata_fetched_by_a_later_pass_reaches_the_answers(hub_server, store, tmp_path, encoder):
    """A model indexed while the Hub failed (or offline): the next `taskspace index` fetches its metadata (the
    backlog above) and pushes it to the index, though the model's outcomes are unchanged, so `search`, `models` and
    the `--max-params` / `--license` filters see its size and licence and `taskspace check` is clean. Before, the
    metadata reached SQL only: the answers kept "-" for its size, a size filter left it out, and `check` reported
    the model stale ("run `taskspace reindex`")."""
    from indexer import list_models, sync
    from indexer.find import find_models
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.vectors import VectorStore

    texts = [f"What is {i} plus {i + 1}?" for i in range(6)]
    d = _two_model_table(tmp_path, texts)
    hub_server.fail("/api/models/fake-org/tiny-lb", [503] * 6)
    vectors = VectorStore.from_settings()
    try:
        hub = HubClient(backoff=0.01, sleep=lambda s: None)
        first = Indexer(store, vectors, encoder=encoder, hub=hub).run([SourceSpec(str(d))])
        assert first.counts["solved"] == 2 and store.get_model("fake-org/tiny-lb").num_parameters is None
        Indexer(store, vectors, encoder=encoder, hub=HubClient(backoff=0.01, sleep=lambda s: None)).run()
        assert store.get_model("fake-org/tiny-lb").num_parameters == 1234567  # the backlog fetched it
        listed = {m["model"]: m["metadata"] for m in list_models(store=store, vectors=vectors)}
        assert listed["fake-org/tiny-lb"]["params"] == 1234567
        found = find_models(texts[0], k=5, filters={"max_params": "2M"}, store=store, vectors=vectors)
        assert [r.model for r in found] == ["fake-org/tiny-lb"]
        assert all(d.clean for d in sync.check(store, vectors))
    finally:
        vectors.close()


def test_metadata_changed_on_the_hub_reaches_an_evolving_index_when_it_is_due(hub_server, store, tmp_path, encoder):
    """A model's licence, size and gate changed on the Hub after it was indexed (its results unchanged): a pass while
    its metadata is younger than ``METADATA_MAX_AGE`` does not ask again; the first pass after that fetches the new
    metadata and pushes it to the index, so `search` filters and answers (and SQL) are those of a fresh index of the
    same results. Before, metadata was fetched once per model: a worker's index kept "apache-2.0, not gated, 1.2M"
    for ever, where a fresh index said "mit, gated, 7.7M", and `--exclude-gated` kept a gated model."""
    import json
    from datetime import timedelta

    from sqlalchemy import update

    from indexer.find import find_models
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql_models import Model
    from indexer.store.vectors import VectorStore

    texts = [f"What is {i} times {i + 2}?" for i in range(6)]
    d = _two_model_table(tmp_path, texts)
    vectors = VectorStore.from_settings()
    try:
        assert Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(d))]).status == "ok"
        m = store.get_model("fake-org/tiny-lb")
        assert (m.license, m.gated, m.num_parameters) == ("apache-2.0", "false", 1234567)
        info_file = hub_server.root / "models" / "fake-org" / "tiny-lb" / "_info.json"
        info = json.loads(info_file.read_text())
        info["cardData"]["license"] = "mit"
        info["gated"] = "manual"
        info["safetensors"] = {"parameters": {"BF16": 7654321}, "total": 7654321}
        info_file.write_text(json.dumps(info))
        asked = _requests(hub_server, "/api/models/fake-org/tiny-lb")
        r = Indexer(store, vectors, encoder=encoder).run()  # metadata a day old: not due
        assert r.status == "ok" and _requests(hub_server, "/api/models/fake-org/tiny-lb") == asked
        assert store.get_model("fake-org/tiny-lb").license == "apache-2.0"
        with store.engine.begin() as conn:  # fetched 8 days ago: longer ago than METADATA_MAX_AGE (7 days)
            conn.execute(update(Model).where(Model.key == "fake-org/tiny-lb").values(
                fetched_at=m.fetched_at - timedelta(days=8)))
        r = Indexer(store, vectors, encoder=encoder).run()
        assert r.status == "ok" and _requests(hub_server, "/api/models/fake-org/tiny-lb") == asked + 1
        m = store.get_model("fake-org/tiny-lb")
        assert (m.license, m.gated, m.num_parameters) == ("mit", "manual", 7654321)
        found = find_models(texts[0], k=5, store=store, vectors=vectors)
        meta = {x.model: x.to_dict()["metadata"] for x in found}
        assert meta["fake-org/tiny-lb"]["license"] == "mit" and meta["fake-org/tiny-lb"]["gated"] is True
        assert meta["fake-org/tiny-lb"]["params"] == 7654321
        kept = find_models(texts[0], k=5, filters={"exclude_gated": True}, store=store, vectors=vectors)
        assert [x.model for x in kept] == ["other-model"]
        again = Indexer(store, vectors, encoder=encoder).run()  # fetched now: not asked again
        assert again.status == "ok" and _requests(hub_server, "/api/models/fake-org/tiny-lb") == asked + 1
    finally:
        vectors.close()


def test_metadata_of_a_private_model_the_token_cannot_read_says_it_may_be_private(hub_server, store, tmp_path,
                                                                              monkeypatch):
    """A model whose repo is private to a token other than the one set: the Hub answers 404 RepoNotFound, as for a
    repo that does not exist. The ingest's metadata warning says both (it may be private and this token cannot read
    it), as the Hub client's error does. Before, "not a model on the Hub; no metadata", which sent the user to check
    a correct id."""
    from indexer.ingest import ingest

    d = _one_prompt_table(tmp_path, ("fake-org/tiny-lb", 1))
    hub_server.require_token("fake-org/tiny-lb", {"the-right-token"})
    monkeypatch.setenv("HF_TOKEN", "another-token")
    got = ingest(str(d), store=store, hub=HubClient(backoff=0.01, sleep=lambda s: None))
    (warning,) = [w for w in got.warnings if "fake-org/tiny-lb" in w]
    assert "no Hub metadata" in warning and "private and this token cannot read it" in warning, got.warnings


def test_metadata_asked_again_and_unchanged_pushes_nothing(hub_server, store, tmp_path, encoder):
    """Metadata due again (over ``METADATA_MAX_AGE`` old) and unchanged on the Hub: the pass asks the Hub, keeps the
    index points as they are (pushed 0) and the worker's log says it found nothing new; metadata that did change is
    pushed. Before, any metadata written, the same values included, made the model's point stale: a weekly refresh
    re-pushed every refreshed model and no pass of a worker said "nothing new" again."""
    import json
    from datetime import datetime, timedelta, timezone

    from sqlalchemy import update

    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.space import space_name
    from indexer.store.sql_models import Model
    from indexer.store.vectors import VectorStore
    from indexer.worker import pass_summary

    d = _one_prompt_table(tmp_path, ("fake-org/tiny-lb", 1), ("other-model", 0))
    vectors = VectorStore.from_settings()

    def age():
        with store.engine.begin() as conn:
            conn.execute(update(Model).values(fetched_at=datetime.now(timezone.utc) - timedelta(days=8)))

    try:
        assert Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(d))]).status == "ok"
        age()
        asked = _requests(hub_server, "/api/models/fake-org/tiny-lb")
        r = Indexer(store, vectors, encoder=encoder).run()
        assert _requests(hub_server, "/api/models/fake-org/tiny-lb") == asked + 1
        assert r.status == "ok" and r.counts["pushed"] == 0, r.counts
        assert "nothing new" in pass_summary(r), pass_summary(r)
        info_file = hub_server.root / "models" / "fake-org" / "tiny-lb" / "_info.json"
        info = json.loads(info_file.read_text())
        info["gated"] = "manual"
        info_file.write_text(json.dumps(info))
        age()
        r = Indexer(store, vectors, encoder=encoder).run()
        assert r.status == "ok" and r.counts["pushed"] == 1, r.counts
        point = vectors.get(space_name(store.list_spaces()[0]), "models", ["fake-org/tiny-lb"])["fake-org/tiny-lb"]
        assert point.payload["gated"] is True
    finally:
        vectors.close()


def test_an_offline_hub_ingest_warns_once_not_per_model_of_the_metadata_backlog(store, tmp_path):
    """`taskspace ingest hub:ORG/REPO` with HF_HUB_OFFLINE set, on a home whose models have no Hub metadata yet (stored
    offline): the repo is the one error (exit 4) and no model's metadata is asked for; before, the Hub client the spec
    made sent the metadata backlog through it, one warning per model ("org/m0: no Hub metadata (cannot read model
    info of org/m0: HF_HUB_OFFLINE is set; ...)": 23 lines on the bundled sample's home)."""
    from indexer.ingest import ingest

    d = _one_prompt_table(tmp_path, *((f"org/m{i}", i % 2) for i in range(5)))
    first = ingest(str(d), store=store)
    assert first.warnings == ["HF_HUB_OFFLINE is set: no Hub metadata fetched for the ingested models"]
    assert len(store.models_without_metadata()) == 5
    s = ingest("hub:org/results", store=store)
    assert s.exit_code == 4 and [e.message for e in s.errors] == [
        "cannot read org/results: HF_HUB_OFFLINE is set; unset it to reach the Hub"]
    assert s.warnings == [], s.warnings


def test_a_hub_answer_with_a_nul_in_a_text_costs_no_metadata(hub_server, store, tmp_path):
    """A model's info whose texts hold a NUL (a broken mirror or a hostile HF_ENDPOINT: licence, pipeline tag, author,
    a tag): those values are unknown, the rest is stored, and every other model's metadata too, on SQLite and
    PostgreSQL. Before, PostgreSQL refused the NUL and `upsert_models` failed the whole batch (no model of the pass got
    metadata; the StoreError ended `taskspace index`)."""
    import json

    from indexer.ingest import ingest

    d = hub_server.root / "models" / "fake-org" / "nul"
    d.mkdir(parents=True)
    (d / "config.json").write_text("{}")
    (d / "_info.json").write_text(json.dumps({"cardData": {"license": "mit\u0000"}, "pipeline_tag": "text\u0000gen",
                                              "author": "x\u0000", "tags": ["ok", "b\u0000d"], "likes": 3}))
    t = _one_prompt_table(tmp_path, ("fake-org/nul", 1), ("fake-org/tiny-lb", 0))
    s = ingest(str(t), store=store)
    assert s.errors == [] and s.metadata == 2
    got = store.get_model("fake-org/nul")
    assert (got.license, got.pipeline_tag, got.author, got.tags, got.likes) == (None, None, "fake-org", ["ok"], 3)
    assert store.get_model("fake-org/tiny-lb").license == "apache-2.0"


def test_a_hub_answer_with_counts_or_tags_of_another_type_costs_no_metadata(hub_server, store, tmp_path):
    """A model's info whose counts are not whole numbers (`downloads: "many"`, likes past a 64-bit integer), whose
    `tags` is one text (`"llama"`) and whose `gated` is a mapping (a broken mirror or a hostile HF_ENDPOINT): those
    values are unknown, the rest and every other model's metadata stored, on SQLite and PostgreSQL. Before,
    PostgreSQL refused "many" (`invalid input syntax for type bigint`): `taskspace ingest` exited 3 and no model of the
    pass got metadata; the text's letters were stored as five tags, the mapping as its repr."""
    import json

    from indexer.ingest import ingest

    d = hub_server.root / "models" / "fake-org" / "odd-counts"
    d.mkdir(parents=True)
    (d / "config.json").write_text("{}")
    (d / "_info.json").write_text(json.dumps({"downloads": "many", "likes": 10**30, "tags": "llama",
                                              "gated": {"mode": "manual"}, "cardData": {"license": "mit"}}))
    got = HubClient().model_info("fake-org/odd-counts")
    assert (got["downloads"], got["likes"], got["tags"], got["gated"]) == (None, None, [], None)
    t = _one_prompt_table(tmp_path, ("fake-org/odd-counts", 1), ("fake-org/tiny-lb", 0))
    s = ingest(str(t), store=store)
    assert s.errors == [] and s.metadata == 2
    got = store.get_model("fake-org/odd-counts")
    assert (got.license, got.downloads, got.likes, got.tags) == ("mit", None, None, [])
    assert store.get_model("fake-org/tiny-lb").license == "apache-2.0"


def test_a_hub_org_listing_no_datasets_is_an_error_naming_it(hub_server, store):
    """`hub-org:ORG` whose listing is empty (the Hub answers an unknown organisation, a typo, with an empty list, not
    a 404): an error line naming the listing and asking whether the name is right (`ingest` exit 1, a pass `partial`);
    a known organisation is read as before. Before, "added 0 models ... from 0 source(s)", exit 0, every pass."""
    from indexer.ingest import ingest

    s = ingest("hub-org:fake-orgg", store=store)
    (e,) = s.errors
    assert (e.file, e.line) == ("hub-org:fake-orgg", None)
    assert e.message == (f"the Hub at {hub_server.url} lists no datasets of 'fake-orgg': is the organisation (or user) "
                         "name right?")
    assert s.hub_failures == 0 and s.sources == 0
    ok = ingest("hub-org:fake-org", store=store, fetch_metadata=False)
    assert ok.errors == [] and ok.sources == 1


def test_publish_checks_the_token_before_it_reads_the_records(hub_server, taskspace_home, monkeypatch):
    """`taskspace publish` without a token, or with a read-only one, says so before the records are read and built
    (on a large home minutes of work, the encoder loaded for the prompt rows): here on a home with nothing to publish
    the token is what it names. Before, the records were built first and only then was the token looked at."""
    from indexer.errors import ConfigError
    from indexer.publish import publish

    hub_server.tokens = {"hf_read_1": "read"}
    with pytest.raises(ConfigError, match="publishing to tester/recs needs a Hugging Face token and none is set"):
        publish("tester/recs")
    monkeypatch.setenv("HF_TOKEN", "hf_read_1")
    with pytest.raises(GatedRepoError, match="token is read-only and cannot publish to tester/recs"):
        publish("tester/recs")
    hub_server.tokens = {"hf_read_1": "write"}
    # a token that can write: then the records are read (here a home never indexed: the does-not-exist error)
    with pytest.raises(NotFoundError, match="does not exist: nothing is indexed"):
        publish("tester/recs")
    assert not (hub_server.root / "datasets" / "tester" / "recs").exists()


@pytest.mark.parametrize("answers", [
    # the preupload answer of a shape huggingface_hub refuses ("preupload_info is improperly formatted")
    [("/api/datasets/tester/recs/preupload", {"files": "none"})],
    [("/api/datasets/tester/recs/preupload", {"files": [{"path": "a.txt", "uploadMode": "sideways"}]})],
    # an LFS upload whose batch answer holds no list of objects ("Malformed response from server")
    [("/api/datasets/tester/recs/preupload", {"files": [{"path": "a.txt", "uploadMode": "lfs", "shouldIgnore": False,
                                                          "oid": None}]}),
     ("/datasets/tester/recs.git/info/lfs/objects/batch", {"objects": "none"})],
])
def test_a_commit_answered_with_json_huggingface_hub_cannot_read_is_a_hub_error(hub_server, sleeps, answers,
                                                                                 monkeypatch):
    """A commit (`taskspace publish`) to a Hub whose preupload or LFS batch answer is JSON of a shape huggingface_hub
    does not expect (a broken mirror, a hostile HF_ENDPOINT): the HubError the reads give such an answer, naming the
    dataset and the endpoint ("answered something huggingface_hub cannot read (ValueError: ...)"), nothing committed.
    Before, huggingface_hub's plain ValueError ("preupload_info is improperly formatted", "Malformed response from
    server") escaped, and `taskspace publish` ended with its traceback."""
    # the LFS protocol (huggingface_hub takes Xet when hf_xet is installed, which this server does not speak)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_DISABLE_XET", True)
    client = HubClient(token="hf_x", sleep=sleeps.append)
    client.create_dataset("tester/recs")
    for prefix, body in answers:
        hub_server.misanswer(prefix, body)
    with pytest.raises(HubError) as e:
        client.commit("tester/recs", {"a.txt": b"x"}, [], "a commit")
    assert str(e.value).startswith(f"cannot write to tester/recs: the Hub at {hub_server.url} answered something "
                                   "huggingface_hub cannot read (ValueError: "), str(e.value)
    assert hub_server.commits == [] and sleeps == [], hub_server.commits


def test_a_refused_dataset_creation_reads_as_one_sentence(hub_server, sleeps):
    """The Hub refusing to create the dataset (403: a token without rights to the organisation) says so once; before,
    "the Hub refused to let this token create the dataset the dataset ORG/NAME (403)"."""
    hub_server.fail("/api/repos/create", [403])
    with pytest.raises(GatedRepoError) as e:
        HubClient(token="hf_x", sleep=sleeps.append).create_dataset("other-org/recs")
    assert str(e.value).startswith("the Hub refused to let this token create the dataset other-org/recs (403): use a "
                                   "token with write access to other-org")


def test_a_hub_spec_naming_a_model_repo_says_it_is_a_model(client, hub_server, store, taskspace_home):
    """`ingest hub:ORG/NAME` (or `pull`) naming a model repo, not a dataset of results: the error says it is a model
    repo and which dataset holds its leaderboard details (`pull`: that it takes a dataset of published records; before,
    the leaderboard hint too, results pull cannot read). Before, "the dataset ORG/NAME does not exist ... (or it is
    private: set HF_TOKEN)", advice that does not help; an id that is neither still says that."""
    from indexer.ingest import ingest
    from indexer.publish import pull

    want = (f"fake-org/tiny-lb is a model repo on {hub_server.url}, not a dataset: hub:ORG/NAME names a dataset repo of "
            "results (for this model's Open LLM Leaderboard details: hub:open-llm-leaderboard/fake-org__tiny-lb-details; a "
            "private dataset of that name needs HF_TOKEN)")
    with pytest.raises(NotFoundError) as e:
        client.repo_snapshot("fake-org/tiny-lb")
    assert str(e.value) == want
    (err,) = ingest("hub:fake-org/tiny-lb", store=store).errors
    assert want in err.message
    with pytest.raises(NotFoundError) as e:  # pull takes records, not results: no leaderboard hint (before: the same)
        pull("hub:fake-org/tiny-lb")
    assert str(e.value) == (f"fake-org/tiny-lb is a model repo on {hub_server.url}, not a dataset: `taskspace pull "
                            "hub:ORG/NAME` takes a dataset of model records that `taskspace publish` made (a model's "
                            "per-sample results are ingested with `taskspace ingest hub:ORG/NAME`)")
    with pytest.raises(NotFoundError, match=r"the dataset fake-org/nothing does not exist .*set HF_TOKEN"):
        client.repo_snapshot("fake-org/nothing")


def test_a_hub_text_longer_than_its_column_costs_no_metadata(hub_server, store, tmp_path):
    """A model's info with a licence of 300 characters and a pipeline tag of 200 (longer than the SQL columns, 256 and
    128: a broken mirror or a hostile HF_ENDPOINT; no Hub value is that long): those are unknown, the rest and the
    other models' metadata stored, on SQLite and PostgreSQL. Before, PostgreSQL refused the value ("value too long for
    type character varying(256)") and the pass's whole metadata batch failed."""
    import json

    from indexer.ingest import ingest

    d = hub_server.root / "models" / "fake-org" / "long"
    d.mkdir(parents=True)
    (d / "config.json").write_text("{}")
    (d / "_info.json").write_text(json.dumps({"cardData": {"license": "x" * 300}, "pipeline_tag": "y" * 200,
                                              "library_name": "transformers"}))
    t = _one_prompt_table(tmp_path, ("fake-org/long", 1), ("fake-org/tiny-lb", 0))
    s = ingest(str(t), store=store)
    assert s.errors == [] and s.metadata == 2
    got = store.get_model("fake-org/long")
    assert (got.license, got.pipeline_tag, got.library) == (None, None, "transformers")
    assert store.get_model("fake-org/tiny-lb").license == "apache-2.0"


def test_a_rate_limit_longer_than_the_deadline_says_how_long_the_hub_asks_to_wait(hub_server, sleeps):
    """A 429 whose Retry-After passes the operation's deadline (a rate limit during a pull of many files): not waited
    for, and the error says how long the Hub asks to wait and that it passes the deadline. Before, "the Hub answered
    429 (gave up after 1 tries in 0 s; ...)", which read as a Hub that was not tried at all."""
    hub_server.fail("/api/datasets/" + LB, [(429, {"Retry-After": "300"})])
    with pytest.raises(HubError) as e:
        HubClient(backoff=0.5, sleep=sleeps.append).repo_snapshot(LB)
    assert (f"cannot read {LB}: the Hub answered 429 (gave up after 1 tries in 0 s: the Hub asks to wait 300 s "
            "(Retry-After), past this operation's 60 s deadline; the next run tries again)") == str(e.value)
    assert sleeps == []


def test_bad_records_of_a_hub_dataset_are_named_by_the_dataset_not_the_cache_folder(hub_server, taskspace_home):
    """`taskspace pull hub:ORG/NAME` of a dataset whose record files are damaged (a broken mirror, a hand-edited
    upload): the error names the dataset at its commit (`hub:tester/recs@SHA: 2 problems in the records ...`), with
    `--space` too. Before, it named the Hub cache folder the files were downloaded into
    (`$TASKSPACE_HOME/hub/datasets--tester--recs/snapshots/SHA: ...`), the dataset named nowhere."""
    from indexer.errors import InputError
    from indexer.publish import pull

    repo = hub_server.root / "datasets" / "tester" / "recs"
    repo.mkdir(parents=True)
    for name in ("spaces.parquet", "benchmarks.parquet"):
        (repo / name).write_bytes(b"PAR1 not a parquet file PAR1")
    sha = HubClient().repo_snapshot("tester/recs").sha
    for space in (None, "s"):
        with pytest.raises(InputError) as e:
            pull("hub:tester/recs", space=space)
        said = ": 2 problems in the records" if space is None else ": 1 problem in the records"
        assert str(e.value).startswith(f"hub:tester/recs@{sha}: ") and said in str(e.value), str(e.value)
        assert e.value.item == f"hub:tester/recs@{sha}"


def test_an_ingest_the_hub_fails_says_to_run_the_ingest_again(hub_server, sleeps, store):
    """`taskspace ingest hub:ORG/REPO` (and `hub-org:`) whose downloads keep failing (503 after the retries): the
    error says to run `taskspace ingest` again, as pull and publish say to run themselves again; a pass's Hub client
    keeps "the next run tries again" (a configured source is read by the next pass). Before, the ingest said "the
    next run tries again", though an ingest's source is in no sources.toml and nothing tries it again."""
    from indexer.ingest import Ingester, ingest

    hub_server.fail(f"/datasets/{LB}/resolve", [503] * 6)
    s = ingest(f"hub:{LB}", store=store, fetch_metadata=False, hub=HubClient(backoff=0.01, sleep=sleeps.append))
    (err,) = s.errors
    assert s.exit_code == 4 and "the Hub answered 503 (gave up after 6 tries" in err.message
    assert err.message.endswith("; run `taskspace ingest` again later)") and "next run" not in err.message
    hub = HubClient(backoff=0.01, sleep=sleeps.append)
    Ingester(store, hub=hub, fetch_metadata=False)  # as the indexing pass makes it
    assert hub.again == "the next run tries again"


def test_an_ingest_keeps_in_the_hub_cache_the_revision_it_read_and_those_other_sources_read(hub_server, store,
                                                                                          taskspace_home):
    """`taskspace ingest hub:ORG/REPO` (and a pass's Hub sources) leaves the home's Hub cache holding the revision it
    read, as publish and pull do (`HubClient.keep_only`), and also the revisions the home's other configured sources
    of that repo read (a `sources.toml` written by hand can name two revisions of one repo: `@SHA` as given, a branch
    as the cache's refs last saw it). Before, every revision an ingest ever downloaded stayed: a home reading a Hub
    repo whose main moves grew by its changed files a pass."""
    import os

    from indexer import sourcelist
    from indexer.config import get_settings
    from indexer.ingest import ingest

    storage = taskspace_home / "hub" / f"datasets--{LB.replace('/', '--')}"

    def held():
        snaps = sorted(p.name for p in (storage / "snapshots").iterdir())
        used = {os.path.basename(os.path.realpath(p)) for p in (storage / "snapshots").rglob("*") if p.is_file()}
        return snaps, {p.name for p in (storage / "blobs").iterdir()} - used

    def new_revision(text: str) -> str:
        HubClient(token="hf_write_1").commit(LB, {"notes.md": text.encode()}, [], "notes")
        return HubClient().repo_snapshot(LB).sha

    first = HubClient().repo_snapshot(LB).sha
    assert ingest(f"hub:{LB}", store=store, fetch_metadata=False).exit_code == 0
    assert held() == ([first], set())
    second = new_revision("a")
    assert ingest(f"hub:{LB}", store=store, fetch_metadata=False).sources == 1
    assert held() == ([second], set())  # before: [first, second], every revision read
    # another configured source reads main (the cache's refs: second): an ingest of the first keeps it
    cfg = get_settings().sources_file
    sourcelist.save(cfg, [sourcelist.SourceSpec(f"hub:{LB.upper()}")])
    assert ingest(f"hub:{LB}@{first}", store=store, fetch_metadata=False).sources == 1
    assert held() == (sorted([first, second]), set())
    # one names a commit (short): kept by an ingest of main, which moved on; a third revision read alone is not kept
    third = new_revision("b")
    sourcelist.save(cfg, [sourcelist.SourceSpec(f"hub:{LB}@{first[:8]}")])
    assert ingest(f"hub:{LB}", store=store, fetch_metadata=False).sources == 1
    assert held() == (sorted([first, third]), set())
    sourcelist.save(cfg, [])
    assert ingest(f"hub:{LB}@{first}", store=store, fetch_metadata=False).sources == 1
    assert held() == ([first], set())
    # a sources file that cannot be read: nothing is removed
    cfg.write_text("not [ toml")
    assert ingest(f"hub:{LB}", store=store, fetch_metadata=False).sources == 1
    assert held() == (sorted([first, third]), set())


def test_an_index_pass_says_when_no_hub_metadata_was_fetched(tmp_path, env, monkeypatch, caplog):
    """`taskspace index` with HF_HUB_OFFLINE unset and no network (HF_ENDPOINT at a closed port), and with it set:
    the pass logs the warning `taskspace ingest` prints ("no Hub metadata fetched: ... cannot connect ...; set
    HF_HUB_OFFLINE=1 ..."), so a user knows why licences and sizes are unknown and the metadata filters drop every
    model; before, the pass logged the readers' warnings before fetching the metadata, so these were never shown."""
    import logging
    import socket

    from indexer.sourcelist import SourceSpec

    with socket.socket() as s:  # a port nothing listens on: the Hub cannot be reached
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    d = _one_prompt_table(tmp_path, ("org/m0", 1), ("org/m1", 0))
    ix = env()
    with caplog.at_level(logging.WARNING, logger="indexer.pipeline"):
        assert ix.run([SourceSpec(str(d))]).status == "ok"
    said = [r.getMessage() for r in caplog.records if r.name == "indexer.pipeline"]
    assert any(m.startswith("no Hub metadata fetched: ") and "cannot connect" in m and "HF_HUB_OFFLINE=1" in m
               for m in said), said
    caplog.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (d / "outcomes.csv").write_text("model,prompt_id,correct\norg/m2,p1,1\norg/m3,p1,0\n")
    with caplog.at_level(logging.WARNING, logger="indexer.pipeline"):
        assert ix.run([SourceSpec(str(d))]).status == "ok"
    said = [r.getMessage() for r in caplog.records if r.name == "indexer.pipeline"]
    assert "HF_HUB_OFFLINE is set: no Hub metadata fetched for the ingested models" in said, said


def test_a_license_is_matched_whatever_its_case(hub_server, store, tmp_path):
    """A card's license written in capitals (`MIT`, `Other` with `license_name: Llama3`) is stored in lower case, as the
    Hub's license ids are, and a filter value is read in lower case too: `--license MIT`, `mit` and `llama3` match.
    Before, the text was stored as written and matched exactly: `--license mit` missed a card's "MIT", `--license
    MIT` missed every model stored "mit" ("no indexed model matches")."""
    import json

    from indexer.find import Filters
    from indexer.ingest import ingest

    for name, card in {"caps": {"license": "MIT"}, "llamaish": {"license": "Other", "license_name": "Llama3"}}.items():
        d = hub_server.root / "models" / "fake-org" / name
        d.mkdir(parents=True)
        (d / "config.json").write_text("{}")
        (d / "_info.json").write_text(json.dumps({"cardData": card}))
    d = _one_prompt_table(tmp_path, ("fake-org/caps", 1), ("fake-org/llamaish", 0))
    assert ingest(str(d), store=store).errors == []
    assert [store.get_model(f"fake-org/{m}").license for m in ("caps", "llamaish")] == ["mit", "other,llama3"]
    assert Filters(licenses=["MIT", "Llama3, Apache-2.0"]).licenses == ["mit", "llama3", "apache-2.0"]


def test_a_license_an_older_taskspace_stored_in_capitals_is_lowered_by_the_next_pass(store, tmp_path, encoder):
    """A home an older taskspace indexed holds a card's license as written (`MIT`, `other,Llama3`), in SQL and in
    its index points. The first pass of this one (no source changed, offline) stores them in lower case and pushes
    those points, so `--license MIT` / `mit` / `llama3` match them and `check` is clean, as on a fresh index. Before,
    the capitals stayed until the model's metadata was fetched again (7 days on, never offline): `--license MIT`,
    which found the model before the upgrade, answered no model, as the filter now reads its value in lower case."""
    from indexer import sync
    from indexer.find import find_models
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.vectors import VectorStore

    texts = [f"What is {i} plus {i + 1}?" for i in range(6)]
    d = _two_model_table(tmp_path, texts)
    vectors = VectorStore.from_settings()
    try:
        Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(d))])
        # what an older taskspace stored, in SQL and in the index
        store.upsert_models([{"key": "fake-org/tiny-lb", "license": "MIT"},
                             {"key": "other-model", "kind": "name", "license": "other,Llama3"}])
        sync.reindex(store, vectors)
        assert all(c.clean for c in sync.check(store, vectors))
        report = Indexer(store, vectors, encoder=encoder).run()
        assert report.counts["solved"] == 0 and report.counts["pushed"] == 2
        assert [store.get_model(m).license for m in ("fake-org/tiny-lb", "other-model")] == ["mit", "other,llama3"]
        for lic, want in (("MIT", ["fake-org/tiny-lb"]), ("mit", ["fake-org/tiny-lb"]), ("llama3", ["other-model"])):
            found = find_models(texts[0], k=5, filters={"licenses": [lic]}, store=store, vectors=vectors)
            assert [r.model for r in found] == want, lic
        assert all(c.clean for c in sync.check(store, vectors))
        assert Indexer(store, vectors, encoder=encoder).run().counts["pushed"] == 0  # done once
    finally:
        vectors.close()


def test_licenses_an_older_taskspace_stored_are_pushed_to_every_space_not_only_the_configured_one(
        store, tmp_path, encoder, monkeypatch):
    """A home with two spaces (one per method: the older default's and the configured one's), whose models' licenses
    an older taskspace stored in capitals in SQL and in both indexes: the first pass lowers them (SQL, for every
    space) and pushes the points of both spaces, the one it does not solve too, so `--license mit` finds the model
    in either and `check` is clean; the next pass pushes nothing. Before, only the configured space was pushed: the
    other answered no model for `--license mit` and `check` reported it stale until `taskspace reindex`."""
    from indexer import sync
    from indexer.config import reset_settings
    from indexer.find import find_models
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.space import space_name
    from indexer.store.vectors import VectorStore

    texts = [f"What is {i} plus {i + 1}?" for i in range(6)]
    d = _two_model_table(tmp_path, texts)
    vectors = VectorStore.from_settings()
    try:
        Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(d))])
        monkeypatch.setenv("TASKSPACE_METHOD", "auto")
        reset_settings()
        Indexer(store, vectors, encoder=encoder).run()
        spaces = store.list_spaces()
        assert len(spaces) == 2
        store.upsert_models([{"key": "fake-org/tiny-lb", "license": "MIT"}])  # as an older taskspace stored it
        sync.reindex(store, vectors)
        assert all(c.clean for c in sync.check(store, vectors))
        report = Indexer(store, vectors, encoder=encoder).run()
        for sp in spaces:
            found = find_models(texts[0], k=5, filters={"licenses": ["mit"]}, space=sp.id, store=store,
                                vectors=vectors)
            assert [r.model for r in found] == ["fake-org/tiny-lb"], sp.method
        assert all(c.clean for c in sync.check(store, vectors))
        (other,) = [sp for sp in spaces if sp.method != "auto"]
        assert report.counts["pushed"] == 1 and report.counts["pushed_other"] == {space_name(other): 1}
        assert "pushed_other" not in Indexer(store, vectors, encoder=encoder).run().counts  # done once
    finally:
        vectors.close()


def test_a_card_licensed_other_keeps_the_license_name_it_gives(hub_server, store, tmp_path):
    """A model card with the Hub's `license: other` and the license's own name (`license_name: tongyi-qianwen`, as
    Qwen's cards have it): the stored license is "other,tongyi-qianwen", shown so, and its point carries both names,
    so a filter on either matches (as for a card naming two licenses); before, "other" alone: the answers could not
    say which license and `--license tongyi-qianwen` never matched. A name that says nothing more ("other", blank, a
    mapping) leaves "other"."""
    import json

    from indexer.ingest import ingest
    from indexer.sync import license_payload

    for name, card in {"qwenish": {"license": "other", "license_name": "tongyi-qianwen",
                                   "license_link": "https://example.org/LICENSE"},
                       "plain-other": {"license": "other", "license_name": {"a": 1}},
                       "other-other": {"license": "Other", "license_name": "other"}}.items():
        d = hub_server.root / "models" / "fake-org" / name
        d.mkdir(parents=True)
        (d / "config.json").write_text("{}")
        (d / "_info.json").write_text(json.dumps({"cardData": card}))
    assert HubClient().model_info("fake-org/qwenish")["license"] == "other,tongyi-qianwen"
    d = _one_prompt_table(tmp_path, ("fake-org/qwenish", 1), ("fake-org/plain-other", 0), ("fake-org/other-other", 1))
    s = ingest(str(d), store=store)
    assert s.errors == [] and s.metadata == 3
    got = {m: store.get_model(f"fake-org/{m}").license for m in ("qwenish", "plain-other", "other-other")}
    assert got == {"qwenish": "other,tongyi-qianwen", "plain-other": "other", "other-other": "other"}, got
    assert license_payload(got["qwenish"]) == ["other", "tongyi-qianwen"]


def test_a_repo_without_a_count_of_its_own_has_its_one_base_models(hub_server):
    """The Hub gives a PEFT adapter, and a fine-tune or quantization with no safetensors (or packed ones), no parameter
    count of its own: it has the count of the one base model its card names (in turn that model's base's, when the base
    has none), and ``num_parameters_from`` names the repo counted; a merge (several bases, or tagged
    ``base_model:merge:``) and a base the Hub cannot answer leave it unknown; a repo with a count keeps its own. Each
    base is asked once per client. Before, all of them were unknown and every size filter dropped them."""
    import json

    def repo(name, info, files=("config.json",)):
        d = hub_server.root / "models" / "fake-org" / name
        d.mkdir(parents=True)
        for f in files:
            (d / f).write_text("{}")
        (d / "_info.json").write_text(json.dumps(info))

    adapter = ("adapter_config.json", "adapter_model.safetensors")
    repo("lora", {"library_name": "peft", "cardData": {"base_model": "fake-org/tiny-lb"}}, adapter)
    repo("lora-2", {"library_name": "peft", "cardData": {"base_model": ["fake-org/tiny-lb"]}}, adapter)
    repo("lora-of-lora", {"library_name": "peft", "cardData": {"base_model": "fake-org/lora"}}, adapter)
    repo("gptq", {"cardData": {"base_model": "fake-org/tiny-lb", "quantized_by": "x"},
                  "safetensors": {"parameters": {"I32": 900, "F16": 10}, "total": 910}})
    repo("merged", {"cardData": {"base_model": ["fake-org/tiny-lb", "fake-org/dummy-b"]}})
    repo("merge-tagged", {"cardData": {"base_model": "fake-org/tiny-lb"},
                          "tags": ["merge", "base_model:merge:fake-org/tiny-lb"]})
    repo("lora-gone", {"library_name": "peft", "cardData": {"base_model": "fake-org/deleted"}}, adapter)
    repo("loop", {"library_name": "peft", "cardData": {"base_model": "fake-org/loop"}}, adapter)
    hub = HubClient(retries=0)
    got = {n: (r["num_parameters"], r["num_parameters_from"]) for n in
           ("lora", "lora-2", "lora-of-lora", "gptq", "merged", "merge-tagged", "lora-gone", "loop", "tiny-lb")
           for r in [hub.model_info(f"fake-org/{n}")]}
    tiny = (1234567, "fake-org/tiny-lb")
    assert got == {"lora": tiny, "lora-2": tiny, "lora-of-lora": tiny, "gptq": tiny, "merged": (None, None),
                   "merge-tagged": (None, None), "lora-gone": (None, None), "loop": (None, None),
                   "tiny-lb": (1234567, None)}
    info = json.loads(json.dumps(hub_server.info("model", "fake-org/lora", hub_server.root / "models/fake-org/lora")))
    assert "base_model:adapter:fake-org/tiny-lb" in info["tags"]  # as the real Hub tags an adapter
    assert _requests(hub_server, "/api/models/fake-org/tiny-lb") == 2  # as a base once, and as itself


def test_a_bitsandbytes_4bit_count_gives_way_to_its_base_models(hub_server):
    """A bitsandbytes 4-bit repo packs two values in a U8 and the Hub counts the bytes (a 4-bit Llama-3-8B: about
    4.6B): a count mostly of U8 elements gives way to the one base model's count when that is larger, marked with
    ``num_parameters_from``; an MXFP4 repo's count (U8 blocks, counted right) equal to its base's stays its own, as
    does a U8-heavy repo naming no base. Before, the under-count stood: a 4-bit 8B model passed `--max-params 5B`."""
    import json

    def repo(name, info):
        d = hub_server.root / "models" / "fake-org" / name
        d.mkdir(parents=True)
        (d / "config.json").write_text("{}")
        (d / "_info.json").write_text(json.dumps(info))

    def st(**params):
        return {"parameters": params, "total": sum(params.values())}

    repo("llama-8b", {"safetensors": st(BF16=8_030_261_248)})
    repo("llama-8b-bnb-4bit", {"cardData": {"base_model": "fake-org/llama-8b"}, "safetensors": st(
        F16=1_050_939_392, U8=3_489_660_928), "config": {"quantization_config": {"quant_method": "bitsandbytes"}}})
    repo("oss-20b", {"safetensors": st(BF16=1_804_459_584, U8=19_110_297_600)})
    repo("oss-20b-fork", {"cardData": {"base_model": "fake-org/oss-20b"}, "safetensors": st(
        BF16=1_804_459_584, U8=19_110_297_600)})
    hub = HubClient(retries=0)
    got = {n: (r["num_parameters"], r["num_parameters_from"]) for n in
           ("llama-8b-bnb-4bit", "oss-20b", "oss-20b-fork") for r in [hub.model_info(f"fake-org/{n}")]}
    assert got == {"llama-8b-bnb-4bit": (8_030_261_248, "fake-org/llama-8b"), "oss-20b": (20_914_757_184, None),
                   "oss-20b-fork": (20_914_757_184, None)}


def test_metric_per_task_on_a_hub_repo_and_a_hub_org_listing(hub_server, store):
    """`--metric TASK=KEY` reads a Hub repo of lm-eval runs as a local folder (the task named read with its key); a TASK
    naming no task of the repo is a ConfigError naming the repo (not the download folder) and its tasks, nothing
    stored; in a `hub-org:` listing, that repo is skipped with an error line and the listing goes on."""
    from indexer.errors import ConfigError
    from indexer.ingest import ingest

    with pytest.raises(ConfigError) as exc:
        ingest("hub:fake-org/lm-eval-results", store=store, fetch_metadata=False, metric="tiny_nope=acc")
    msg = str(exc.value)
    assert "no task 'tiny_nope' in hub:fake-org/lm-eval-results (its tasks: tiny_gen_arith, tiny_mc_science" in msg, msg
    assert store.list_sources() == []
    s = ingest("hub-org:fake-org", store=store, fetch_metadata=False, metric="tiny_nope=acc")
    (e,) = s.errors
    assert e.file == "hub:fake-org/lm-eval-results" and "no task 'tiny_nope'" in e.message, e
    assert e.message.endswith("this repo is skipped, the others in the listing are read"), e.message
    s = ingest("hub:fake-org/lm-eval-results", store=store, fetch_metadata=False,
               metric=["acc_norm", "tiny_gen_arith=exact_match"])
    assert s.errors == [] and s.outcomes > 0
    assert {b.name: b.metric for b in store.list_benchmarks()} == {
        "tiny_gen_arith": "exact_match", "tiny_mc_science": "acc_norm", "tiny_mc_yesno": "acc_norm"}


@pytest.mark.parametrize("no_proxy", ["127.0.0.1", "127.0.0.0/8", "localhost,127.0.0.1", "*", "{port}",
                                      "other.example, 127.0.0.1"])
def test_no_proxy_names_the_hub_endpoint_and_it_is_reached_without_the_proxy(hub_server, monkeypatch, no_proxy):
    """Behind a proxy (HTTP(S)_PROXY) with NO_PROXY naming the mirror HF_ENDPOINT points at, the mirror is asked
    directly, as httpx, requests and curl do (a host, a CIDR range, `*`, a host with its port, a list). Before,
    NO_PROXY was not read: every request went to the proxy (here a closed port), and the mirror was unreachable. A
    NO_PROXY naming another host still sends the request to the proxy (so the proxy is honoured)."""
    import socket

    from huggingface_hub import close_session

    with socket.socket() as s:  # the "proxy": a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    port = hub_server.url.rsplit(":", 1)[1]
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY",
                 "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed}")
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{closed}")
    try:
        monkeypatch.setenv("NO_PROXY", no_proxy.replace("{port}", f"127.0.0.1:{port}"))
        close_session()  # huggingface_hub keeps one client: the next request makes it again, reading the variables
        assert HubClient(backoff=0, sleep=lambda s: None).model_info("fake-org/tiny-lb")["likes"] == 7
        monkeypatch.setenv("NO_PROXY", "other.example")
        close_session()
        with pytest.raises(HubUnreachableError):
            HubClient(backoff=0, sleep=lambda s: None).model_info("fake-org/tiny-lb")
    finally:
        close_session()  # the next test's client is made without these variables


def test_an_unreachable_proxy_is_named_not_taken_for_the_hub(hub_server, monkeypatch, sleeps):
    """HTTPS_PROXY (or https_proxy, HTTP_PROXY) naming a port nothing listens on: the error names the proxy (without
    its user name and password) and the variable that set it, says to check it or unset the variable (or name the
    host in NO_PROXY), and is not retried; a pull falls back on the Hub cache as for any outage (a
    HubUnreachableError). Before, "cannot connect to http://127.0.0.1:PORT; check the network or HF_ENDPOINT": the
    Hub endpoint blamed, which answers, and the proxy named nowhere."""
    import socket

    from huggingface_hub import close_session

    with socket.socket() as s:  # the "proxy": a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY",
                 "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    try:
        for variable in ("HTTP_PROXY", "http_proxy"):  # the fake Hub is http://
            monkeypatch.setenv(variable, f"http://someone:s3cret@127.0.0.1:{closed}")
            close_session()  # huggingface_hub keeps one client: the next request makes it again, reading the variables
            with pytest.raises(HubUnreachableError) as got:
                HubClient(sleep=sleeps.append).model_info("fake-org/tiny-lb")
            msg = str(got.value)
            assert (f"cannot connect to the proxy http://127.0.0.1:{closed} ({variable}) that requests to "
                    f"{hub_server.url} go through" in msg and f"unset {variable}" in msg and "NO_PROXY" in msg), msg
            assert "s3cret" not in msg and "someone" not in msg and "s3cret" not in got.value.reason, msg
            assert got.value.reason.startswith(f"cannot connect to the proxy http://127.0.0.1:{closed} ({variable})")
            assert sleeps == [], sleeps
            monkeypatch.delenv(variable)
    finally:
        close_session()  # the next test's client is made without these variables


def test_all_proxy_is_honoured_in_either_case_and_a_proxy_httpx_cannot_use_is_a_config_error(hub_server, monkeypatch,
                                                                                              sleeps):
    """ALL_PROXY (or all_proxy) with no HTTP(S)_PROXY: the Hub is asked through the proxy it names, as httpx, requests
    and curl use it (NO_PROXY still wins for the hosts it names). A proxy httpx cannot use (ALL_PROXY a SOCKS proxy
    without the socksio package, HTTPS_PROXY an ftp:// URL) is a ConfigError (exit 2) naming the variable and what to
    do, its password not shown. Before, ALL_PROXY was not read (the Hub asked directly: behind a proxy it names, no
    Hub), and either of those two raised an ImportError / ValueError out of every Hub request."""
    import importlib.util
    import threading
    import urllib.error
    import urllib.request
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from huggingface_hub import close_session

    from indexer.errors import ConfigError

    seen = []

    class Forward(BaseHTTPRequestHandler):  # a plain HTTP proxy: the request line holds the absolute URL
        def do_GET(self):
            seen.append(self.path)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "proxy-connection")}
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            try:
                r = opener.open(urllib.request.Request(self.path, headers=headers))
                status, body, got = r.status, r.read(), r.headers
            except urllib.error.HTTPError as e:
                status, body, got = e.code, e.read(), e.headers
            self.send_response(status)
            for k, v in got.items():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY",
                 "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    try:
        for variable in ("ALL_PROXY", "all_proxy"):
            monkeypatch.setenv(variable, f"http://127.0.0.1:{proxy.server_address[1]}")
            close_session()  # huggingface_hub keeps one client: the next request makes it again, reading the variables
            seen.clear()
            assert HubClient(sleep=sleeps.append).model_info("fake-org/tiny-lb")["likes"] == 7
            assert seen == [f"{hub_server.url}/api/models/fake-org/tiny-lb"], (variable, seen)
            monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # a host NO_PROXY names: asked directly
            close_session()
            seen.clear()
            assert HubClient(sleep=sleeps.append).model_info("fake-org/tiny-lb")["likes"] == 7
            assert seen == [], seen
            monkeypatch.delenv("NO_PROXY")
            monkeypatch.delenv(variable)
        bad = [("HTTPS_PROXY", "ftp://someone:s3cret@127.0.0.1:1", "is not a proxy URL the Hub client can use")]
        if importlib.util.find_spec("socksio") is None:
            bad.append(("ALL_PROXY", "socks5://someone:s3cret@127.0.0.1:1", "needs the socksio package"))
        for variable, value, words in bad:
            monkeypatch.setenv(variable, value)
            close_session()
            with pytest.raises(ConfigError) as got:
                HubClient(sleep=sleeps.append).model_info("fake-org/tiny-lb")
            assert str(got.value).startswith(f"{variable} names ") and words in str(got.value), str(got.value)
            assert "s3cret" not in str(got.value) and "someone" not in str(got.value), str(got.value)
            monkeypatch.delenv(variable)
    finally:
        close_session()  # the next test's client is made without these variables
        proxy.shutdown()
        proxy.server_close()


def test_a_proxy_that_refuses_the_request_is_named_and_not_retried(hub_server, monkeypatch, sleeps):
    """A proxy answering 407 (it asks for credentials) or 403 (its rules forbid the host), to the CONNECT of an
    https:// endpoint or to a plain http:// request it would forward: a HubError naming the proxy and its variable and
    what to do, not retried. Before, the CONNECT refusal was retried five times over 31 s as "the connection failed
    (ProxyError)", and a forwarded request's 407 read "the Hub answered 407", the Hub blamed for the proxy's answer."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from huggingface_hub import close_session

    answer = {"status": 407}

    class Refuse(BaseHTTPRequestHandler):
        def do_CONNECT(self):
            self.send_response(answer["status"])
            if answer["status"] == 407:
                self.send_header("Proxy-Authenticate", 'Basic realm="corp"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_HEAD = do_CONNECT

        def log_message(self, *args):
            pass

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{proxy.server_address[1]}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY",
                 "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", url)
    monkeypatch.setenv("HTTPS_PROXY", url)
    try:
        for endpoint, variable in (("https://hub.example", "HTTPS_PROXY"), (hub_server.url, "HTTP_PROXY")):
            for status, words in ((407, f"it asks for credentials: give them in {variable}"),
                                  (403, f"check the proxy's rules for {endpoint}, or unset {variable}")):
                answer["status"] = status
                close_session()
                with pytest.raises(HubError) as got:
                    HubClient(endpoint=endpoint, sleep=sleeps.append).model_info("fake-org/tiny-lb")
                msg = str(got.value)
                assert not isinstance(got.value, HubUnreachableError), msg
                if status == 403 and endpoint == hub_server.url:  # a forwarded 403 may be the Hub's own: the Hub's
                    assert "refused to let" in msg or "needs a Hugging Face token" in msg, msg
                    continue
                assert (f"the proxy {url} ({variable}) refused the request to {endpoint} ({status} " in msg
                        and words in msg), msg
                assert sleeps == [], (status, endpoint, sleeps)
    finally:
        close_session()
        proxy.shutdown()
        proxy.server_close()


@pytest.mark.parametrize("value", ["{host}", "htp://{host}", "http://", "ftp://{host}"])
def test_an_hf_endpoint_that_is_no_http_url_is_said_at_once(hub_server, monkeypatch, sleeps, value):
    """HF_ENDPOINT without an http:// or https:// scheme or host (`hub.corp:8080`, a typo `htp://`): the Hub error
    names the variable and its value and says what to set, at once, without a request or a retry (an outage on which
    a pull reads the home's Hub cache). Before, each request failed inside httpx, "the connection failed
    (UnsupportedProtocol) talking to 127.0.0.1:PORT", retried for 31 s."""
    value = value.format(host=hub_server.url.removeprefix("http://"))
    monkeypatch.setenv("HF_ENDPOINT", value)
    before = len(hub_server.log)
    with pytest.raises(HubUnreachableError) as got:
        HubClient(sleep=sleeps.append).model_info("fake-org/tiny-lb")
    assert str(got.value) == (f"cannot read model info of fake-org/tiny-lb: HF_ENDPOINT is {value!r}, which is not an "
                              "http:// or https:// URL with a host: set HF_ENDPOINT to the Hub's URL "
                              "(https://huggingface.co) or a mirror's (https://HOST[:PORT])")
    assert sleeps == [] and len(hub_server.log) == before


def test_after_an_out_of_time_operation_the_next_is_tried_once_as_after_any_outage(client, hub_server):
    """An operation out of time (`HubOutOfTimeError`: the deadline passed between huggingface_hub's own requests) marks
    the client failing, as the retries giving up do: the client's next operation in the same process (the next repo of
    a pass, a request after a pull) is tried once, not retried with backoff until its own deadline. Before, it was
    retried as on a healthy Hub: a slow Hub cost a whole deadline per operation."""
    from indexer.hub import HubOutageError

    snap = client.repo_snapshot(LB)
    now, step, sleeps = [0.0], [40.0], []

    def clock():  # each look at the clock 40 s later: a slow Hub
        now[0] += step[0]
        return now[0]

    slow = HubClient(deadline=60.0, clock=clock, sleep=sleeps.append)
    name = next(f for f in snap.files if f.endswith(".md"))
    with pytest.raises(HubOutageError, match="out of time"):
        slow.download(snap, [name])
    step[0] = 0.0  # the next operation has time, and the Hub fails it
    hub_server.fail("/api/models/fake-org/tiny-lb", [503])
    with pytest.raises(HubOutageError, match="not retried: an earlier request had failed as well"):
        slow.model_info("fake-org/tiny-lb")
    assert sleeps == []
    assert slow.model_info("fake-org/tiny-lb")["likes"] == 7 and not slow._failing  # a success ends it


def test_a_commit_to_a_hub_offering_lfs_but_no_xet_uploads_by_lfs(hub_server, sleeps):
    """A commit (`taskspace publish`) to a server that answers ``uploadMode: "lfs"`` (as the Hub does for Parquet) and
    offers the LFS batch endpoint but no Xet one (``xet-write-token`` answers 404): the files go up by LFS and the
    commit lands, without HF_HUB_DISABLE_XET being set for anything else. Before, huggingface_hub took Xet whenever
    hf_xet was installed, and hf_xet's ``ConnectionError`` ("... 404 Not Found") escaped as a traceback."""
    from huggingface_hub import constants

    hub_server.lfs = True
    client = HubClient(token="hf_x", sleep=sleeps.append)
    client.create_dataset("tester/recs")
    sha = client.commit("tester/recs", {"data/a.parquet": b"PAR1 x PAR1", "b.txt": b"y"}, [], "a commit")
    (rec,) = hub_server.commits
    assert rec["sha"] == sha and sorted(rec["added"]) == ["b.txt", "data/a.parquet"]
    d = hub_server.root / "datasets" / "tester" / "recs"
    assert (d / "data" / "a.parquet").read_bytes() == b"PAR1 x PAR1" and (d / "b.txt").read_bytes() == b"y"
    assert any(m == "PUT" and p.startswith("/_lfs/") for m, p, _ in hub_server.log)
    assert constants.HF_HUB_DISABLE_XET is False and sleeps == []


@pytest.mark.parametrize("status", [500, 400, 403])
def test_a_server_answering_the_xet_question_with_an_error_gets_the_files_by_lfs(hub_server, sleeps, status):
    """A mirror that does not know the Xet write-token route may answer it with an error page of any status, not only
    404: the files then go by LFS and the commit lands. Asking is never a reason to fail a commit."""
    hub_server.lfs = True
    client = HubClient(token="hf_x", sleep=sleeps.append)
    client.create_dataset("tester/recs")
    hub_server.fail("/api/datasets/tester/recs/xet-write-token", [status])
    client.commit("tester/recs", {"data/a.parquet": b"PAR1 x PAR1"}, [], "a commit")
    (rec,) = hub_server.commits
    assert rec["added"] == ["data/a.parquet"]
    assert any(m == "PUT" and p.startswith("/_lfs/") for m, p, _ in hub_server.log)


def test_a_commit_to_a_hub_offering_neither_xet_nor_lfs_is_a_hub_error_naming_the_endpoint(hub_server, sleeps):
    """A server that answers ``uploadMode: "lfs"`` but whose LFS batch endpoint answers 404 (and that has no Xet
    endpoint): a HubError naming the endpoint that failed and that nothing was committed; no traceback."""
    hub_server.lfs = True
    client = HubClient(token="hf_x", sleep=sleeps.append)
    client.create_dataset("tester/recs")
    hub_server.fail("/datasets/tester/recs.git/info/lfs/objects/batch", [404])
    with pytest.raises(HubError) as e:
        client.commit("tester/recs", {"a.parquet": b"PAR1"}, [], "a commit")
    assert str(e.value) == (
        f"cannot write to tester/recs: the Hub at {hub_server.url} answers no Xet upload endpoint "
        f"(/api/datasets/tester/recs/xet-write-token/main) and its LFS upload endpoint "
        f"(/datasets/tester/recs.git/info/lfs/objects/batch) answered 404, so no file can be uploaded to it: check "
        "HF_ENDPOINT; nothing was committed"), str(e.value)
    assert hub_server.commits == [] and sleeps == []


def _failed_xet_commit(hub_server, sleeps) -> str:
    """The HubError of a commit whose files go by Xet (the write-token endpoint answers) to a Xet storage that answers
    404, checked to name the Xet upload and hf_xet's ConnectionError."""
    hub_server.lfs = True
    hub_server.xet_cas = f"{hub_server.url}/cas"
    client = HubClient(token="hf_x", sleep=sleeps.append)
    client.create_dataset("tester/recs")
    with pytest.raises(HubError) as e:
        client.commit("tester/recs", {"a.parquet": b"PAR1"}, [], "a commit")
    msg = str(e.value)
    assert msg.startswith(f"cannot write to tester/recs: the Xet upload to the Hub at {hub_server.url} failed "
                          "(ConnectionError: "), msg
    return msg


def test_a_failing_xet_upload_is_a_hub_error_saying_how_to_upload_by_lfs(hub_server, sleeps):
    """A Hub whose Xet write-token endpoint answers (so the files go by Xet) but whose Xet storage then fails (here
    it answers 404): a HubError naming the Xet upload, saying HF_HUB_DISABLE_XET=1 uploads by LFS and that nothing
    was committed. Before, hf_xet's builtin ``ConnectionError`` escaped `taskspace publish` as a traceback."""
    msg = _failed_xet_commit(hub_server, sleeps)
    assert f"{hub_server.url}/cas/" in msg and msg.endswith(
        "): run the publish again, or set HF_HUB_DISABLE_XET=1 to upload by LFS; nothing was committed"), msg
    assert hub_server.commits == [] and sleeps == []


def _commit_in_a_thread(client, wait: float = 20.0):
    """(the error ``client.commit`` of one Parquet file to tester/recs raised, seconds it took); fails the test when it
    has not ended within ``wait`` seconds (hf_xet's own retries, unbounded, take minutes)."""
    import threading
    import time

    got: dict = {}

    def run():
        try:
            client.commit("tester/recs", {"a.parquet": b"PAR1" * 100}, [], "a commit")
        except Exception as exc:  # noqa: BLE001 - looked at below
            got["error"] = exc

    start = time.monotonic()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(wait)
    took = time.monotonic() - start
    assert not worker.is_alive(), f"the commit still runs after {took:.0f} s: hf_xet's retries ignore the deadline"
    return got.get("error"), took


@pytest.mark.parametrize("fault", ["stalls", "answers 500"])
def test_a_xet_storage_that_stalls_or_fails_is_given_up_at_the_deadline_and_nothing_is_committed(hub_server, sleeps,
                                                                                                   fault):
    """The Xet storage the write-token answer names accepts the connection and never answers, or answers 500 to
    everything: the commit ends at the client's deadline (here 1 s) with a HubError naming that storage, the deadline,
    HF_HUB_DISABLE_XET=1 and that nothing was committed. Before, hf_xet's own retry loop ran on past the deadline:
    measured at the default 60 s deadline, 318 s for a storage answering 500, over 900 s for one that stalls."""
    hub_server.lfs = True
    cas = hub_server.xet_cas = f"{hub_server.url}/cas"
    if fault == "stalls":
        hub_server.stall("/cas")
    else:
        hub_server.fail("/cas", [500] * 1000)
    client = HubClient(token="hf_x", sleep=sleeps.append, deadline=1.0)
    client.create_dataset("tester/recs")
    err, took = _commit_in_a_thread(client)
    assert isinstance(err, HubError), repr(err)
    msg = str(err)
    assert msg.startswith(f"cannot write to tester/recs: the Xet upload to {cas} (the Xet storage the Hub at "
                          f"{hub_server.url} names) did not finish within this operation's 1 s deadline"), msg
    assert msg.endswith("run the publish again later, or set HF_HUB_DISABLE_XET=1 to upload by LFS; nothing was "
                        "committed"), msg
    assert "hf_xet was still retrying" in msg and took < 10 and hub_server.commits == [] and sleeps == []


def test_a_xet_upload_draws_no_progress_bars_when_stderr_is_not_a_terminal(hub_server, sleeps, monkeypatch, capfd):
    """hf_xet's upload bars ("Processing Files", "New Data Upload", drawn with carriage returns and cursor moves) are
    off while a commit uploads with stderr not a terminal (a log, a pipe, `taskspace publish --json` in a job), as
    huggingface_hub documents (``disable_progress_bars``), and on again after. Before, they were drawn into it."""
    import sys

    from huggingface_hub.utils import are_progress_bars_disabled

    bars = sys.modules["huggingface_hub.utils.tqdm"]  # as without HF_HUB_DISABLE_PROGRESS_BARS (the fixture sets it)
    monkeypatch.setattr(bars, "HF_HUB_DISABLE_PROGRESS_BARS", None)
    monkeypatch.setattr(bars, "progress_bar_states", {})
    hub_server.lfs = True
    hub_server.xet_cas = f"{hub_server.url}/cas"  # the upload starts (its bars with it), then its storage answers 404
    client = HubClient(token="hf_x", sleep=sleeps.append)
    client.create_dataset("tester/recs")
    capfd.readouterr()
    err, _ = _commit_in_a_thread(client)
    assert isinstance(err, HubError) and "the Xet upload" in str(err), repr(err)
    out, errs = capfd.readouterr()
    assert out == "" and "Processing Files" not in errs and "\r" not in errs, errs
    assert not are_progress_bars_disabled()


@pytest.mark.parametrize("version", ["renamed", "from a helper"])
def test_a_failing_xet_upload_is_a_hub_error_with_a_huggingface_hub_that_names_its_upload_otherwise(hub_server,
                                                                                                   sleeps, monkeypatch,
                                                                                                   version):
    """hf_xet's error is told from others by the frame it surfaces in, huggingface_hub 2.4's ``_upload_xet_files``;
    another version may name that function otherwise (``renamed``: a renamed copy, given as a ``partial``, so no
    function of that name and no frame of it) or call hf_xet from a function of its own (``from a helper``): the
    failing Xet upload is still the HubError saying HF_HUB_DISABLE_XET=1, nothing committed. Before, hf_xet's builtin
    ``ConnectionError`` then escaped `taskspace publish` as a traceback."""
    import functools
    import inspect
    import types

    from huggingface_hub import _commit_api

    real = inspect.unwrap(_commit_api._upload_xet_files)
    if version == "renamed":
        code = real.__code__.replace(co_name="_send_by_xet", co_qualname="_send_by_xet")
        renamed = types.FunctionType(code, real.__globals__, "_send_by_xet", real.__defaults__, real.__closure__)
        renamed.__kwdefaults__ = real.__kwdefaults__
        monkeypatch.setattr(_commit_api, "_upload_xet_files", functools.partial(renamed))
    else:
        def _upload_xet_files(**kwargs):  # the upload's own function, which calls hf_xet in another
            return real(**kwargs)

        monkeypatch.setattr(_commit_api, "_upload_xet_files", _upload_xet_files)
    msg = _failed_xet_commit(hub_server, sleeps)
    assert msg.endswith("set HF_HUB_DISABLE_XET=1 to upload by LFS; nothing was committed"), msg
    assert hub_server.commits == [] and sleeps == []
