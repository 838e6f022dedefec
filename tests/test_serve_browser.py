"""The search page end to end in headless Chromium (Debian's ``chromium`` driven by Playwright's Python package
through ``executable_path``; never ``playwright install``): type a task with the keyboard, see ranked results,
open the evidence, apply a filter, open a model page; screenshots at desktop width and at 360 px are saved under
a folder the test prints (``$TASKSPACE_ARTIFACTS``, default ``/tmp/taskspace-artifacts``, /serve-screenshots-PID). Without the
browser the test skips on a workstation and FAILS in CI (``CI`` or ``TASKSPACE_REQUIRE_BROWSER=1`` set), like the
PostgreSQL tests: ``.ci/run`` installs it."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import pytest

from indexer.serve import Service, create_app

from servehelpers import ThreadServer, build_index

# read at import: the autouse fixtures clear TASKSPACE_* variables before each test
CHROMIUM = os.environ.get("TASKSPACE_CHROMIUM", "/usr/bin/chromium")
REQUIRED = bool(os.environ.get("CI")) or os.environ.get("TASKSPACE_REQUIRE_BROWSER") == "1"
ARTIFACTS = os.environ.get("TASKSPACE_ARTIFACTS")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: how long an ``expect`` waits for what the page shows (ms). Playwright's default, 5 s, is an upper bound on an
#: answer no test means to assert: CI's loaded 2-core machine took longer for a page's first search (its route
#: fetching the server's real answer), "searching…" still shown after 5 s. A failing expectation still fails, later.
EXPECT_TIMEOUT_MS = 60_000


@pytest.fixture(autouse=True)
def _generous_expect_timeout():
    try:
        from playwright.sync_api import expect
    except ImportError:  # no playwright: the tests skip (or fail in CI) in _need_browser
        yield
        return
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    try:
        yield
    finally:
        expect.set_options(timeout=5_000)


def _browser_or_reason() -> str | None:
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM} (apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (make setup installs requirements.lock)"
    return None


@contextlib.contextmanager
def chromium_page():
    """A fresh chromium page (1280 x 900) and the list its uncaught script errors go to; closed after."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            failures: list[str] = []
            page.on("pageerror", lambda e: failures.append(str(e)))
            yield page, failures
        finally:
            # a route handler still fetching when the test ends (a refresh the page started after its last
            # assertion) raised "Response has been disposed" out of browser.close(): drop the handlers first
            for context in browser.contexts:
                for open_page in context.pages:
                    open_page.unroute_all(behavior="ignoreErrors")
            browser.close()


def _held(page, held: list, n: int = 1) -> list:
    """``held`` (the requests a route handler keeps) once it holds ``n``: the handler runs when Playwright dispatches the
    route event, which may come after the page showed what the test waited for (its "searching…", set as the request
    leaves); before, ``held.pop()`` right after that could find the list still empty."""
    deadline = time.monotonic() + EXPECT_TIMEOUT_MS / 1000
    while len(held) < n and time.monotonic() < deadline:
        page.wait_for_timeout(20)  # Playwright dispatches its events (the route's) meanwhile
    assert len(held) >= n, f"{len(held)} request(s) held, expected {n}"
    return held


#: in the page (an init script, so each document of the test has it): the URLs its script fetched (``__asked``) and
#: those whose answer it has read (``__answers``, once ``Response.json`` settled: the page's code after ``await
#: res.json()`` runs in the same microtask checkpoint, before the test's next look). A test that asserts a late answer
#: changed nothing waits for that answer to have been read, then asserts; before, it waited 300 ms, and on a loaded
#: machine the answer could come after the assertion, a check that could not fail
COUNT_ANSWERS = """(() => {
  window.__asked = [];
  window.__answers = [];
  const fetch0 = window.fetch;
  window.fetch = function (input, init) {
    window.__asked.push(String(input instanceof Request ? input.url : input));
    return fetch0.apply(this, arguments);
  };
  const json0 = Response.prototype.json;
  Response.prototype.json = function () {
    const url = this.url;
    return json0.call(this).finally(() => window.__answers.push(url));
  };
})()"""


def _answers_read(page, ending: str) -> int:
    """How many answers to a URL ending with ``ending`` the page's script has read (:data:`COUNT_ANSWERS`)."""
    return page.evaluate("(end) => window.__answers.filter((u) => u.endsWith(end)).length", ending)


def _release_and_wait_read(page, route, ending: str) -> None:
    """Let a held request ``route`` go on and return once the page has read its answer (a URL ending with
    ``ending``), so what the page shows after it is what the late answer left."""
    before = _answers_read(page, ending)
    route.continue_()
    page.wait_for_function("([end, n]) => window.__answers.filter((u) => u.endsWith(end)).length > n",
                           arg=[ending, before], timeout=EXPECT_TIMEOUT_MS)



def test_an_error_of_a_knob_or_the_compare_box_names_it_by_the_forms_words(page_server):
    """An error of a knob or of the compare box says it by the form's label, as a filter's does: "min prompts measured
    must be ...", "prefer smaller must be ...", "compare exactly these models: unknown model ...". Before, the API's
    names, "min_evidence must be a non-negative integer, not -1" under a box labelled "Min prompts measured", and
    "models[0]: unknown model ..." (found walking the page: typing -1 in each knob and an unknown model)."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.goto(page_server + "/?q=What+is+item+3%3F&min_evidence=-1")
        expect(status).to_have_text("error: min prompts measured must be a non-negative integer, not -1")
        expect(page.locator("#min_evidence")).to_have_attribute("aria-invalid", "true")
        page.goto(page_server + "/?q=What+is+item+3%3F&prefer_smaller=-1")
        expect(status).to_have_text("error: prefer smaller must be a number from 0 to 100 (e.g. 0.1), not -1")
        page.goto(page_server + "/?q=What+is+item+3%3F&models=nosuchmodel")
        expect(status).to_contain_text("error: compare exactly these models: unknown model 'nosuchmodel'")
        expect(page.locator("#models")).to_have_attribute("aria-invalid", "true")
        assert failures == []


def test_a_task_too_large_to_send_says_so_and_marks_the_task_box(page_server):
    """A task whose prompts, each within the limit, come to more than the server reads in one request (25 prompts of
    3,990 CJK characters: 299 KB of UTF-8, over max_body_bytes' 256 KiB) is said to be the task, too long to send, with
    what to do, and the task box is marked invalid. Before, the server's "the request body is 299345 bytes; the limit
    is 262144 bytes (max_body_bytes)" alone, of a request body the page's user never sees, no field marked (found
    walking the page with long pasted prompts)."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.goto(page_server + "/")
        page.fill("#task", "\n---\n".join(["\u4e2d" * 3990] * 25))
        page.click("#go")
        expect(status).to_contain_text("error: the task is too long to send: its 25 prompts are")
        expect(status).to_contain_text("shorten its prompts or give fewer")
        expect(page.locator("#task")).to_have_attribute("aria-invalid", "true")
        assert failures == []


def test_the_notes_and_caveats_of_an_answer_are_announced_to_a_screen_reader(page_server):
    """The notes and caveats under the status ("none of these 4 models was measured near this query", "no calibrated
    signal ...", "far from everything measured ...": how to read every result) are in a polite live region that is
    there before the answer comes, so a screen reader says them after the status, as it says the status. Before, only
    the status line was live: the caveat box appeared (from hidden) outside any live region and was never announced,
    so a screen-reader user heard "4 model(s) ranked" and not that no model was measured near the query (found reading
    the page's accessibility tree)."""
    from playwright.sync_api import expect

    live = """(id) => { const r = document.getElementById(id).closest('[aria-live]');
                       return r && r.id !== 'status' && getComputedStyle(r).display !== 'none' ? r.getAttribute('aria-live') : null; }"""
    with chromium_page() as (page, failures):
        page.goto(page_server + "/")
        # before any answer: the region is in the page, rendered, so what is put in it later is announced
        assert page.evaluate(live, "notes") == "polite"
        assert page.evaluate(live, "caveats") == "polite"
        page.goto(page_server + "/?q=What+is+item+3+of+alpha%3F")
        expect(page.locator("#status")).to_contain_text("ranked")
        assert page.evaluate(live, "notes") == "polite" and page.evaluate(live, "caveats") == "polite"
        assert failures == []

def _need_browser() -> None:
    reason = _browser_or_reason()
    if reason:
        if REQUIRED:
            pytest.fail(reason + " (CI / TASKSPACE_REQUIRE_BROWSER=1: the browser test must run here; .ci/run "
                        "installs chromium)")
        pytest.skip(reason)


@pytest.fixture
def page_server(tmp_path, encoder):
    _need_browser()
    build_index(tmp_path, encoder)
    with ThreadServer(create_app(Service(encoder=encoder))) as url:
        yield url


def test_search_page_in_chromium(page_server, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    # not under pytest's tmp folders, which later runs rotate away
    shots = Path(ARTIFACTS or Path(tempfile.gettempdir()) / "taskspace-artifacts") / f"serve-screenshots-{os.getpid()}"
    if shots.exists():
        shutil.rmtree(shots)
    shots.mkdir(parents=True)
    print(f"\nscreenshots: {shots}")
    base = urlsplit(page_server).netloc
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            hosts, failures = set(), []
            page.on("request", lambda r: hosts.add(urlsplit(r.url).netloc))
            page.on("pageerror", lambda e: failures.append(str(e)))
            with page.expect_response("**/v1/spaces") as listed:
                page.goto(page_server + "/")
            assert len(listed.value.json()["spaces"]) == 1
            expect(page.locator("#space-field")).to_be_hidden()  # one space: no chooser
            # keyboard only: the text box, then Ctrl+Enter searches
            page.keyboard.press("Tab")  # the skip link
            page.keyboard.press("Tab")  # the site name
            page.keyboard.press("Tab")  # the task box
            assert page.evaluate("document.activeElement.id") == "task"
            page.keyboard.type("What is item 3 of alpha about chemistry?")
            page.keyboard.press("Control+Enter")
            results = page.locator("#ranked > li.result")
            expect(results).to_have_count(4)
            expect(page.locator("#status")).to_contain_text("4 models ranked")
            query = parse_qs(urlsplit(page.url).query)
            assert query["q"] == ["What is item 3 of alpha about chemistry?"]  # shareable: the query is in the URL
            first = results.first
            assert first.locator(".bar").get_attribute("aria-label").startswith("probability of success")
            expect(first.locator(".bar .band")).to_have_count(1)  # the interval
            # the bar drawn under the page's Content-Security-Policy (no inline style attribute: set through the CSSOM)
            assert first.locator(".bar .fill").evaluate("e => e.style.width").endswith("%")
            assert first.locator(".bar .band").evaluate("e => e.getBoundingClientRect().width") > 0
            hub = page.locator("#ranked a.name[href^='https://huggingface.co/org/']")
            assert hub.count() >= 1
            expect(page.locator("#ranked span.name", has_text="plainname")).to_have_count(1)  # no Hub link for a plain name
            page.screenshot(path=str(shots / "results-desktop.png"), full_page=True)

            # the evidence panel, opened from the keyboard
            summary = first.locator("details.evidence summary")
            summary.focus()
            page.keyboard.press("Enter")
            expect(first.locator("details.evidence")).to_have_attribute("open", "")
            expect(first.locator("details.evidence li").first).to_be_visible()
            assert "similarity" in first.locator("details.evidence").inner_text()
            page.screenshot(path=str(shots / "evidence-desktop.png"), full_page=True)

            # a filter: licenses = mit leaves org/m1 and lab/m3
            page.locator("#options summary").click()
            page.fill("#licenses", "mit")
            page.fill("#k", "5")
            page.click("#go")
            expect(results).to_have_count(2)
            names = sorted(results.locator(".name").all_inner_texts())
            assert names == ["lab/m3", "org/m1"]
            assert parse_qs(urlsplit(page.url).query)["license"] == ["mit"]
            expect(page.locator("#notes")).to_contain_text("licenses excluded 2")

            # reload from the URL alone: the same answer (a shared link)
            page.goto(page.url)
            expect(results).to_have_count(2)
            assert page.input_value("#licenses") == "mit"

            # compare mode: exactly the listed models
            page.fill("#licenses", "")
            page.fill("#models", "org/m2, plainname")
            page.keyboard.press("Enter")  # Enter in a text field submits the form
            # wait for the new answer: the previous one (lab/m3, org/m1) also had two results, so a count does not wait
            expect(page.locator("#ranked")).to_contain_text("plainname")
            expect(page.locator("#ranked")).to_contain_text("org/m2")
            expect(results).to_have_count(2)
            assert sorted(results.locator(".name").all_inner_texts()) == ["org/m2", "plainname"]
            page.fill("#models", "")
            page.fill("#licenses", "mit")
            page.click("#go")
            expect(page.locator("#ranked")).to_contain_text("lab/m3")  # the filtered answer again (waits for it)
            expect(results).to_have_count(2)

            # 360 px wide: nothing wider than the screen
            page.set_viewport_size({"width": 360, "height": 780})
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
            page.screenshot(path=str(shots / "results-360.png"), full_page=True)

            # a model page
            page.set_viewport_size({"width": 1280, "height": 900})
            page.locator("#ranked a.detail[data-model='org/m1']").click()
            expect(page.locator("#model")).to_be_visible()
            expect(page.locator("#model-title")).to_have_text("org/m1")
            expect(page.locator("#observed tbody tr")).to_have_count(2)
            expect(page.locator("#strengths tbody tr").first).to_be_visible()
            assert parse_qs(urlsplit(page.url).query)["model"] == ["org/m1"]
            page.screenshot(path=str(shots / "model-desktop.png"), full_page=True)
            page.set_viewport_size({"width": 360, "height": 780})
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
            page.screenshot(path=str(shots / "model-360.png"), full_page=True)
            assert page.title() == "model org/m1 – taskspace"  # the tab and the history entry name the view
            page.go_back()  # Back returns to the filtered results
            expect(results).to_have_count(2)
            assert page.title() == "What is item 3 of alpha about chemistry? – taskspace"
            # the page's own "back to search" link does too: the same search, the form as it was (before: "/", an
            # empty form and no results)
            page.set_viewport_size({"width": 1280, "height": 900})
            page.locator("#ranked a.detail[data-model='lab/m3']").click()
            expect(page.locator("#model-title")).to_have_text("lab/m3")
            page.locator("#back").focus()
            page.keyboard.press("Enter")
            expect(page.locator("#search")).to_be_visible()
            expect(results).to_have_count(2)
            assert sorted(results.locator(".name").all_inner_texts()) == ["lab/m3", "org/m1"]
            assert page.input_value("#licenses") == "mit" and parse_qs(urlsplit(page.url).query)["license"] == ["mit"]

            assert failures == []
            assert hosts == {base}, hosts  # no request to any other host
        finally:
            browser.close()
    assert sorted(x.name for x in shots.iterdir()) == ["evidence-desktop.png", "model-360.png", "model-desktop.png",
                                                       "results-360.png", "results-desktop.png"]


def test_the_page_says_why_there_is_no_interval_and_when_measured_near_is_unknown(tmp_path, encoder, monkeypatch):
    """An index whose held-out results carry no calibrated signal (build_index's coin flips: 4 models x 28 prompts of
    random outcomes): the page says why there is no interval, as `taskspace search` does. The same index published
    without the patterns' observed prompts (as before they were published) and pulled into another home (no per-prompt
    outcomes there): "measured near" is unknown, not "not measured";
    its model page shows the published accuracy and n per benchmark."""
    from playwright.sync_api import expect, sync_playwright

    from indexer.config import reset_settings
    from indexer.publish import publish, pull
    from indexer.query import predictor
    from indexer.store.sql import open_store

    _need_browser()
    build_index(tmp_path, encoder, seed=2, signal=False)
    with open_store() as store:
        assert predictor(store, store.list_spaces()[0]).signal is False
        publish("tester/recs", store=store, dry_run=tmp_path / "records")
    import pyarrow.parquet as pq

    # records published before the patterns carried their observed prompts: the pulled home cannot tell what each
    # model was measured on (with them it can, and answers as the publisher: tests/test_publish.py)
    for f in (tmp_path / "records" / "patterns").glob("*.parquet"):
        pq.write_table(pq.read_table(f).drop_columns(["observed"]), f)
    prompt = "What is item 3 of alpha about chemistry?"
    seen, observed = {}, {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            for home in ("built", "pulled"):
                if home == "pulled":
                    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "pulled"))
                    reset_settings()
                    pull(str(tmp_path / "records"))
                with ThreadServer(create_app(Service(encoder=encoder))) as url:
                    page = browser.new_page(viewport={"width": 1280, "height": 900})
                    failures = []
                    page.on("pageerror", lambda e: failures.append(str(e)))
                    page.goto(url + "/?q=" + prompt.replace(" ", "+"))
                    results = page.locator("#ranked > li.result")
                    expect(results).to_have_count(4)
                    caveats = page.locator("#caveats")
                    expect(caveats).to_be_visible()
                    expect(caveats).to_contain_text("no calibrated signal: in this index's held-out results success "
                                                    "did not rise with the score beyond chance")
                    expect(results.first.locator(".ci")).to_have_text("(no interval: no calibrated signal)")
                    expect(results.first.locator(".bar .band")).to_have_count(0)
                    seen[home] = (caveats.inner_text(), results.locator(".badge").all_inner_texts(),
                                  results.first.locator("details.evidence").text_content(),
                                  results.first.locator(".meta").first.inner_text())
                    # the model page: observed accuracy per benchmark, as published on the pulled home (n unknown)
                    page.goto(url + "/?model=org%2Fm1")
                    expect(page.locator("#observed tbody tr")).to_have_count(2)
                    observed[home] = (page.locator("#observed tbody tr").all_inner_texts(),
                                      page.locator("#observed-note").is_visible(), page.locator("#observed-note").inner_text())
                    assert failures == []
                    page.close()
        finally:
            browser.close()
    text, badges, evidence, meta = seen["built"]
    assert "measured near unknown" not in text and not any("unknown" in b for b in badges)
    assert "measured on" in meta and "unknown" not in meta
    text, badges, evidence, meta = seen["pulled"]
    assert "measured near unknown: this index cannot tell" in text
    assert badges.count("measured near this query: unknown") == 4 and "not measured near this query" not in badges
    assert "unknown: this index does not hold this model's per-prompt results" in evidence
    # the nearest benchmarks' accuracy is the published one with the n the records carry, not "none": the built
    # home's own line ("alpha: 63% of 16 prompts ..."; records without n: "(as published; the number of prompts is
    # not in this index)", tests/test_publish.py)
    tail = seen["built"][2].split("Observed accuracy on the nearest benchmarks")[1]
    assert evidence.endswith("Observed accuracy on the nearest benchmarks" + tail) and " of " in tail, (evidence, tail)
    assert "measured on nearby prompts: unknown" in meta
    # a model page on the pulled home: the published accuracy and n per benchmark, said to be published (before: an
    # empty Observed table under "N prompts measured"); on the built home, the measured n and no note
    rows, shown, note = observed["built"]
    assert not shown and all(r.split("\t")[-1].strip().isdigit() for r in rows)
    rows, shown, note = observed["pulled"]
    assert shown and note == "as published (no per-prompt results here)"
    assert rows == observed["built"][0]  # the publisher's accuracy and n (records carry n since migration 0014)


def test_an_empty_answer_says_why_on_the_page(page_server):
    """The server's answer with no model (made so by the route below, from the real one): with filters the page says
    to loosen them; without any, that the index has drifted from its database (before: "loosen the filters" always)."""
    import json

    from playwright.sync_api import expect, sync_playwright

    def emptied(filters):
        def handle(route):
            data = route.fetch().json()
            data["results"], data["query"]["filters"] = [], filters
            route.fulfill(status=200, content_type="application/json", body=json.dumps(data))
        return handle

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            for filters, words in (({"licenses": ["mit"]}, "loosen the filters"), ({}, "has drifted from its database")):
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                failures = []
                page.on("pageerror", lambda e: failures.append(str(e)))
                page.route("**/v1/find", emptied(filters))
                page.goto(page_server + "/?q=What+is+item+3+of+alpha+about+chemistry%3F")
                expect(page.locator("#status")).to_contain_text(words)
                expect(page.locator("#ranked > li.result")).to_have_count(0)
                assert failures == []
                page.close()
        finally:
            browser.close()


def test_the_page_says_what_went_wrong_and_never_shows_stale_rows(page_server):
    """What the page says when something goes wrong, in one browser: a model page that fails to load (the server gone,
    made so by aborting its requests) shows no row of the model opened before it (before: the title said the new
    model, the tables the old one's rows) and says the server cannot be reached; errors that name their field once, and values that are not numbers named
    as such; flags in the URL as true/false/1/0;
    an empty task submitted says what to give; with JavaScript switched off, that the search needs it; an answer that is
    not the API's JSON (a proxy's page), what it was."""
    import json

    from playwright.sync_api import expect

    with chromium_page() as (page, failures):

        # a model page, Back, the server gone, another model page: no row of the first model stays
        page.goto(page_server + "/?q=What+is+item+3+of+alpha+about+chemistry%3F")
        expect(page.locator("#ranked > li.result")).to_have_count(4)
        page.locator("#ranked a.detail[data-model='org/m1']").click()
        expect(page.locator("#observed tbody tr")).to_have_count(2)
        expect(page.locator("#strengths tbody tr").first).to_be_visible()
        page.go_back()
        expect(page.locator("#ranked > li.result")).to_have_count(4)
        page.route("**/v1/**", lambda route: route.abort("connectionrefused"))
        page.locator("#ranked a.detail[data-model='org/m2']").click()
        expect(page.locator("#model-title")).to_have_text("org/m2")
        expect(page.locator("#model-meta")).to_contain_text("error:")
        expect(page.locator("#observed tbody tr")).to_have_count(0)
        expect(page.locator("#strengths tbody tr")).to_have_count(0)
        # and it says the server cannot be reached (before: only "error: Failed to fetch"), the browser's words in
        # the title, and that it asks again (test_a_server_that_cannot_be_reached_is_asked_again...); a search the same
        gone = "error: cannot reach the taskspace server (is it running?) (asking again in 5 s)"
        expect(page.locator("#model-meta")).to_have_text(gone)
        expect(page.locator("#model-meta")).to_have_attribute("title", "Failed to fetch")
        page.goto(page_server + "/?q=What+is+item+3")
        expect(page.locator("#status")).to_have_text(gone)
        expect(page.locator("#status")).to_have_attribute("title", "Failed to fetch")
        page.unroute("**/v1/**")
        # something else answering for the server (a proxy's login page with 200, a gateway's 502 page): said so,
        # with the status and the type (before: a script error, "Cannot read properties of undefined (reading
        # 'map')", and "HTTP 502")
        for code, words in ((200, "HTTP 200 OK, text/html"), (502, "HTTP 502 Bad Gateway, text/html")):
            portal = {"status": code, "content_type": "text/html",
                      "body": "<html><body>Sign in to the network</body></html>"}
            page.route("**/v1/**", functools.partial(lambda portal, route: route.fulfill(**portal), portal))
            page.goto(page_server + "/?q=What+is+item+3")
            expect(page.locator("#status")).to_have_text(f"error: the answer to /v1/find is not the taskspace API's "
                                                         f"JSON ({words}): is something else, a proxy, answering for "
                                                         "the server?")
            expect(page.locator("#ranked > li.result")).to_have_count(0)
            page.goto(page_server + "/?model=org%2Fm1")
            expect(page.locator("#model-meta")).to_contain_text("error: the answer to /v1/models/org/m1 is not the "
                                                                f"taskspace API's JSON ({words})")
            page.unroute("**/v1/**")

        # an error names its field once (before: "k: k: k must be ...", the page's prefix on the server's); a value
        # that is not a number is said so, naming the parameter (before: NaN went out as null, "not None", or the
        # filter was dropped: min_evidence=abc ranked every model); a non-integer k is sent as given, not truncated
        # (before: k=2.7 gave 2 results)
        status = page.locator("#status")
        for qs, words in (("prefer_smaller=1e9", "error: prefer smaller must be a number from 0 to 100"),
                          ("k=abc", "error: k: not a number"), ("prefer_smaller=abc", "error: prefer_smaller: not a number"),
                          ("min_evidence=abc", "error: min_evidence: not a number"), ("k=Infinity", "error: k: not a number"),
                          ("k=2.7", "error: k must be a positive integer, at most 100, not 2.7"),
                          ("min_evidence=2.5", "error: min prompts measured must be a non-negative integer, not 2.5")):
            page.goto(page_server + "/?q=What+is+item+3&" + qs)
            expect(status).to_contain_text(words)
            field = qs.split("=")[0]
            # named once, by the API's name or the form's words for it
            said = status.inner_text()
            words = {"prefer_smaller": "prefer smaller", "min_evidence": "min prompts measured"}.get(field)
            assert said.count(field) + (said.count(words) if words else 0) == 1, said
            assert "None" not in said, said
            expect(page.locator("#ranked > li.result")).to_have_count(0)
        # a flag in the URL: true/false/1/0 in any case (before: only 1 counted, open_only=true was ignored);
        # another word is an error naming it
        answers = {}
        for v in ("1", "TRUE", "true", "0", "False"):
            page.goto(page_server + "/?q=What+is+item+3&open_only=" + v)
            expect(status).to_contain_text("ranked")
            answers[v] = (page.locator("#ranked .name").all_inner_texts(), page.locator("#notes").inner_text(),
                          page.is_checked("#open_only"))
        assert answers["1"][1] and "open weights only excluded" in answers["1"][1] and answers["1"][2]
        assert answers["TRUE"] == answers["true"] == answers["1"]
        assert answers["0"] == answers["False"] and "open weights only" not in answers["0"][1] and not answers["0"][2]
        page.goto(page_server + "/?q=What+is+item+3&exclude_gated=yes")
        expect(status).to_have_text("error: exclude gated must be true or false, not \"yes\"")
        # an empty task submitted (Ctrl+Enter in the empty box) says what to give, in the announced status region
        # (before: nothing); a page opened without a query stays quiet
        page.goto(page_server + "/")
        expect(page.locator("#status[role=status][aria-live=polite]")).to_have_count(1)
        expect(status).to_have_text("")
        page.focus("#task")
        page.keyboard.press("Control+Enter")
        expect(status).to_have_text("type a task or pick a benchmark")
        assert page.evaluate("document.activeElement.id") == "task"
        page.keyboard.press("Control+Enter")  # again: said again (emptied, then set)
        expect(status).to_have_text("type a task or pick a benchmark")
        # a prompt over the limit is named by its place in the box, from 1 (before: "prompts[1]: ...", the API's
        # index from 0)
        page.fill("#task", "What is item 3?\n---\n" + "x" * 4001)
        page.keyboard.press("Control+Enter")
        expect(status).to_have_text("error: prompt 2: a prompt has at most 4000 characters (max_prompt_chars), "
                                    "got 4001")
        # a task of only --- lines holds no prompt: the same words (before: the API's "prompts is an empty list:
        # ... or a query vector instead", a thing the page cannot give); beside a benchmark, the benchmark's answer
        page.fill("#task", "---\n  ---  \n")
        page.keyboard.press("Control+Enter")
        expect(status).to_have_text("type a task or pick a benchmark")
        # and the tab's title names no search, as for an empty box (before: "--- --- – taskspace", a history entry
        # named for a search that was not made)
        expect(page).to_have_title("taskspace: find the model for a task")
        page.select_option("#benchmark", "alpha")
        page.click("#go")
        expect(status).to_have_text("4 models ranked for benchmark alpha")
        # a benchmark's answer shows each model's observed accuracy on it beside the predicted probability, which
        # the method shrinks toward the model's general level (before: the probability alone)
        metas = page.locator("#ranked .result > p.meta").all_inner_texts()
        assert len(metas) == 4 and all(re.search(r"observed on alpha: \d+% of 16 prompts", m) for m in metas), metas
        # and its coverage as what it counts, the benchmark's own prompts nearest its mean (before, "measured on 16
        # nearby prompt(s) (alpha)" beside "observed on alpha: 75% of 16 prompts")
        assert all(re.search(r"measured on \d+ of the alpha prompts nearest the benchmark's mean$", m) for m in metas), metas
        # a model not measured on the benchmark (made so below, from the real answer) is "not measured on alpha", as
        # the CLI's "measured on it: no" (before: "not measured near this query", the words for a prompt)

        def unmeasured(route):
            data = route.fetch().json()
            first = data["results"][0]
            first["coverage"].update(measured_near=False, near=0, benchmarks=[])
            first["evidence"].update(prompts=[], benchmarks=[])
            route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

        page.route("**/v1/find", unmeasured)
        page.click("#go")
        expect(page.locator("#ranked > li.result").first.locator(".badge.far")).to_have_text("not measured on alpha")
        page.unroute("**/v1/find")
        page.route("**/v1/find", unmeasured)  # a prompt's answer: the words for a prompt
        page.goto(page_server + "/?q=What+is+item+3")
        expect(page.locator("#ranked > li.result").first.locator(".badge.far")).to_have_text(
            "not measured near this query")
        page.unroute("**/v1/find")

        # JavaScript switched off (or blocked): the page says the search needs it and what answers instead, above the
        # button (before: nothing; "Find models" reloaded the page with the typed task gone and no word why)
        nojs = page.context.browser.new_context(java_script_enabled=False)
        try:
            plain = nojs.new_page()
            plain.goto(page_server + "/")
            expect(plain.locator("#nojs")).to_be_visible()
            expect(plain.locator("#nojs")).to_contain_text("This page needs JavaScript to search")
            expect(plain.locator("#nojs")).to_contain_text("taskspace search")
        finally:
            nojs.close()
        expect(page.locator("#nojs")).to_have_count(0)  # with JavaScript, no such words
        assert failures == []


def test_a_prompt_longer_than_the_encoder_reads_is_said_in_the_notes(page_server):
    """A prompt longer than the encoder reads (MiniLM: 256 word pieces): the notes say that only its beginning was
    embedded, as `taskspace search` and `query.truncated` do; a short one says nothing of it. Before, nothing did."""
    from playwright.sync_api import expect

    long = " ".join(f"word{i}" for i in range(400))
    with chromium_page() as (page, failures):
        page.goto(page_server + "/")
        status = page.locator("#status")
        for text, says in ((long, "the prompt is longer than the encoder reads (256 word pieces)"),
                           (f"What is item 3 of alpha?\n---\n{long}", "prompt 2 of 2 is longer than the encoder reads"),
                           ("What is item 3 of alpha?", None)):
            page.fill("#task", text)
            page.focus("#task")
            page.keyboard.press("Control+Enter")
            expect(status).to_contain_text("models ranked for")
            if says:
                expect(page.locator("#notes")).to_contain_text(says)
            else:
                expect(page.locator("#notes")).not_to_contain_text("encoder reads")
        assert failures == []


def test_evidence_texts_are_shown_as_text_and_cut_whole_characters(page_server):
    """The evidence panel shows an indexed prompt's text as text (markup in it, `<img onerror=...>`, is neither an
    element nor run) and cuts a long one after 300 characters, never through a character: a text whose 300th
    character is an emoji (two UTF-16 units) ends with the whole emoji and "…"; before, the cut fell between its
    surrogates and the page showed "�" (so did the tab's title, which names the task in 60 characters). A code
    prompt is shown with its line breaks and indentation (before, collapsed into one line)."""
    import json

    from playwright.sync_api import expect

    long = "a" * 299 + "\U0001F600" + "b" * 50
    html = "<img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script> & \u202eevil"
    code = "def f(n):\n    if n < 2:\n        return n\n    return f(n - 1) + f(n - 2)"

    def evidence(route):
        data = route.fetch().json()
        data["results"][0]["evidence"]["prompts"] = [
            {"text": long, "benchmark": "alpha", "outcome": 1.0, "similarity": 0.9},
            {"text": html, "benchmark": "alpha", "outcome": 0.0, "similarity": 0.8},
            {"text": code, "benchmark": "beta", "outcome": 1.0, "similarity": 0.7}]
        route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

    with chromium_page() as (page, failures):
        page.route("**/v1/find", evidence)
        page.goto(page_server + "/?q=What+is+item+3+of+alpha")
        first = page.locator("#ranked > li.result").first
        expect(first).to_be_visible()
        first.locator("details.evidence summary").click()
        shown = first.locator("details.evidence li > span:not(.meta):not(.outcome)").all_text_contents()
        assert shown[0] == "a" * 299 + "\U0001F600…", shown[0][-5:]
        assert shown[1] == html and first.locator("details.evidence img, details.evidence script").count() == 0
        assert page.evaluate("window.pwned") is None and failures == []
        # a code prompt keeps its line breaks and indentation (before: white-space collapsed, read as one line), under
        # a heading saying these are the prompts this model was measured on, not the query's nearest overall
        spans = first.locator("details.evidence li > span.prompt")
        assert spans.nth(2).evaluate("e => e.innerText") == code
        # ... its first line starting where the others do, so an indented line stands right of it (before: the text
        # began after "✓ correct", and the body of "def f(n):" stood left of it)
        left = ("(e, i) => { const r = document.createRange(); r.setStart(e.firstChild, i); "
                "r.setEnd(e.firstChild, i + 1); return r.getBoundingClientRect().left; }")
        for width in (1280, 375):
            page.set_viewport_size({"width": width, "height": 900})
            at = [spans.nth(2).evaluate(left, i) for i in (0, code.index("if"), code.index("return f"))]
            assert at[0] < at[1] and abs(at[2] - at[1]) < 1, (width, at)
        page.set_viewport_size({"width": 1280, "height": 900})
        expect(first.locator("details.evidence h4").first).to_have_text(
            "Nearest indexed prompts this model was measured on, with its outcome")
        page.unroute("**/v1/find")
        task = "q" * 59 + "\U0001F600" + "z" * 20  # the tab's title names the task, cut the same way
        page.goto(page_server + "/?q=" + quote(task))
        expect(page).to_have_title("q" * 59 + "\U0001F600… – taskspace")


def test_a_prompt_with_blank_lines_is_one_prompt_and_a_dashes_line_separates_several(page_server):
    """The task box: a pasted prompt with blank lines (HumanEval/0) is one prompt, sent as typed (trimmed); several
    example prompts are separated by a line of three dashes (spaces around them allowed), and the label and hint say
    so. A shared link (`/?q=...`) gives the same text in the box and the same prompts. Before, the text was split at
    every blank line: HumanEval/0 went out as two example prompts, the query their mean."""
    from playwright.sync_api import expect, sync_playwright

    from helpers import HUMANEVAL_0

    he, other = HUMANEVAL_0.strip(), "What is item 3 of alpha about chemistry?"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            failures, sent = [], []
            page.on("pageerror", lambda e: failures.append(str(e)))
            page.on("request", lambda r: sent.append(r.post_data_json.get("prompts"))
                    if r.method == "POST" and urlsplit(r.url).path == "/v1/find" else None)
            page.goto(page_server + "/")
            expect(page.locator("label[for=task]")).to_contain_text("a line of --- between them")
            expect(page.locator("#task-hint")).to_contain_text("Blank lines are part of a prompt")
            assert "\n---\n" in page.get_attribute("#task", "placeholder")
            status = page.locator("#status")
            for text, prompts in ((HUMANEVAL_0, [he]), (f"{HUMANEVAL_0}\n  ---\t\n{other}\n", [he, other])):
                page.fill("#task", text)
                page.focus("#task")
                page.keyboard.press("Control+Enter")
                expect(status).to_have_text(f"4 models ranked for {len(prompts)} prompt{'s' if len(prompts) > 1 else ''}")
                assert sent[-1] == prompts
                q = parse_qs(urlsplit(page.url).query)["q"]
                assert q == [text.strip()]  # the whole text, blank lines and --- line, in the shared link
                n = len(sent)
                page.goto(page.url)  # the shared link: the same text in the box, the same prompts sent
                expect(status).to_have_text(f"4 models ranked for {len(prompts)} prompt{'s' if len(prompts) > 1 else ''}")
                assert page.input_value("#task") == text.strip()
                assert len(sent) == n + 1 and sent[-1] == prompts
            assert failures == []
            page.close()
        finally:
            browser.close()


def test_a_task_and_a_benchmark_both_given_is_said_not_half_answered(page_server):
    """A benchmark left picked from an earlier search, then a task typed and searched: the page says both were given
    and what to change, and ranks nothing (the CLI and the API refuse both too); before, it ranked the benchmark and
    dropped the task without a word ("4 model(s) ranked for benchmark alpha" under the typed task). Either alone
    still searches."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.goto(page_server + "/")
        expect(page.locator("#benchmark option[value='alpha']")).to_have_count(1)
        page.select_option("#benchmark", "alpha")
        page.click("#go")
        expect(status).to_have_text("4 models ranked for benchmark alpha")
        page.fill("#task", "What is item 3 of alpha about chemistry?")
        page.click("#go")
        expect(status).to_have_text("error: a task and a benchmark were both given: empty the task box, or set "
                                    "the benchmark to (none)")
        expect(page.locator("#ranked > li.result")).to_have_count(0)
        page.goto(page_server + "/?q=What+is+item+3&benchmark=alpha")  # the same from a URL
        expect(status).to_contain_text("a task and a benchmark were both given")
        page.select_option("#benchmark", "")
        page.click("#go")
        expect(status).to_have_text("4 models ranked for 1 prompt")
        assert failures == []


def test_the_notes_name_filters_by_the_forms_words(page_server):
    """The notes above the results name each filter by the form's words ("max parameters excluded 2", "open weights
    only excluded 1", "max parameters excluded 2 (1 without the metadata it needs)": one note, as the CLI's line, where
    before a second said "1 without the metadata max parameters needs" of the same models); before, the API's field names ("max_params
    excluded 2", "open_only ..."), and "Measured on benchmark" was "benchmark excluded N", which beside a benchmark
    picked as the task read as that benchmark having excluded them. With prefer smaller or rank by lower bound, the
    order is said, and the models of no known size are said to be charged as 100B, as the CLI says."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        page.goto(page_server + "/?benchmark=alpha&max_params=10B&open_only=1")
        expect(page.locator("#status")).to_contain_text("ranked for benchmark alpha")
        notes = page.locator("#notes").inner_text().split(" · ")
        assert "open weights only excluded 1 (1 without the metadata it needs)" in notes, notes
        # the models a filter excluded for want of its metadata said in its note, as the CLI's line (before: a second
        # note, "1 without the metadata max parameters needs", of the same models)
        assert "max parameters excluded 2 (1 without the metadata it needs)" in notes, notes
        assert not any(n.endswith("needs") for n in notes), notes
        assert not any("max_params" in n or "open_only" in n for n in notes), notes
        # prefer smaller: the order said, and the model of no known size said to be charged as 100B, as the CLI says
        # (before: no word of the order, and "1 without the metadata prefer smaller needs", read as filtered out)
        page.goto(page_server + "/?benchmark=alpha&prefer_smaller=0.1&rank=lcb")
        expect(page.locator("#status")).to_have_text("4 models ranked for benchmark alpha")
        notes = page.locator("#notes").inner_text().split(" · ")
        assert "ranked by the lower end of the interval − 0.1 × log10(parameters)" in notes, notes
        assert "1 without a parameter count charged as 100B by prefer smaller" in notes, notes
        page.goto(page_server + "/?benchmark=alpha&prefer_smaller=0.1")  # charged on the score, not the probability
        expect(page.locator("#status")).to_have_text("4 models ranked for benchmark alpha")
        notes = page.locator("#notes").inner_text().split(" · ")
        assert "ranked by score − 0.1 × log10(parameters) (the probability rises with the score)" in notes, notes
        page.goto(page_server + "/?benchmark=alpha")
        expect(page.locator("#status")).to_have_text("4 models ranked for benchmark alpha")
        assert not any(n.startswith("ranked by") for n in page.locator("#notes").inner_text().split(" · "))
        labels = page.evaluate("FILTER_LABELS")  # every filter the API counts has the form's words
        assert labels["benchmark"] == "measured on benchmark" and labels["min_evidence"] == "min prompts measured"
        assert failures == []


def test_an_answer_that_comes_after_the_next_view_is_dropped(page_server):
    """A search whose answer is slow (held here by the route, as a publish holds queries), then Back to the search
    before it: when the slow answer comes it is dropped, the page shows the search its URL and form say; the same for
    a slow model page left for another. Before, the late answer replaced what was shown: "4 model(s) ranked for 1
    prompt(s)" under /?benchmark=alpha, and model org/m1's rows under the title of org/m2 after it. While the slow
    search runs, the previous answer's rows are gone; before, they stood under "searching…"."""
    from playwright.sync_api import expect

    held = []

    def hold(route):
        if "chemistry" in (route.request.post_data or "") or route.request.url.endswith("/v1/models/org/m1"):
            held.append(route)
        else:
            route.continue_()

    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.add_init_script(COUNT_ANSWERS)
        page.goto(page_server + "/?benchmark=alpha")
        expect(status).to_have_text("4 models ranked for benchmark alpha")
        page.route("**/v1/**", hold)
        page.select_option("#benchmark", "")
        page.fill("#task", "What is item 3 of alpha about chemistry?")
        page.click("#go")
        expect(status).to_have_text("searching…")
        # meanwhile no row, note or caveat of the benchmark's answer stands under the new query (before: its 4 rows)
        expect(page.locator("#ranked > li")).to_have_count(0)
        expect(page.locator("#notes")).to_have_text("")
        page.go_back()  # the benchmark's search again, answered at once
        expect(status).to_have_text("4 models ranked for benchmark alpha")
        assert len(held) == 1
        _release_and_wait_read(page, held.pop(), "/v1/find")
        assert status.inner_text() == "4 models ranked for benchmark alpha"
        assert "benchmark=alpha" in page.url and page.title().startswith("benchmark alpha")

        # a model page whose answer is slow, left for another model's: the first's answer never lands under it
        page.locator("#ranked a.detail[data-model='org/m1']").click()
        expect(page.locator("#model-meta")).to_have_text("loading…")
        page.go_back()
        expect(status).to_have_text("4 models ranked for benchmark alpha")
        page.locator("#ranked a.detail[data-model='org/m2']").click()
        expect(page.locator("#model-title")).to_have_text("org/m2")
        expect(page.locator("#model-meta")).to_contain_text("prompts measured")
        m2 = page.locator("#model-meta").inner_text()
        _release_and_wait_read(page, held.pop(), "/v1/models/org/m1")
        assert page.locator("#model-title").inner_text() == "org/m2"
        assert page.locator("#model-meta").inner_text() == m2
        assert failures == []


def test_a_search_changed_while_the_last_still_runs_is_searched(page_server):
    """A search whose answer does not come (a slow or hung server; held here by the route), then the task changed and
    "Find models" pressed: the new search runs and its answer is shown, the first one's dropped when it comes. The
    same search pressed again meanwhile is still ignored (the button marked busy until the form says another). Before,
    the button stayed busy, every press ignored, until the first answer came: a hung server's page could search
    nothing more until reloaded (seen walking the page with a /v1/find that never answered)."""
    from playwright.sync_api import expect

    held = []
    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.add_init_script(COUNT_ANSWERS)
        page.goto(page_server + "/")
        page.route("**/v1/find", lambda route: held.append(route) if "chemistry" in (route.request.post_data or "")
                   else route.continue_())
        page.fill("#task", "What is item 3 of alpha about chemistry?")
        page.click("#go")
        expect(status).to_have_text("searching…")
        expect(page.locator("#go")).to_have_attribute("aria-disabled", "true")
        page.fill("#task", "What is item 5 of beta?")
        expect(page.locator("#go")).not_to_have_attribute("aria-disabled", "true")
        page.click("#go")
        expect(status).to_have_text("4 models ranked for 1 prompt")
        assert "item+5+of+beta" in page.url
        _release_and_wait_read(page, _held(page, held).pop(), "/v1/find")
        assert status.inner_text() == "4 models ranked for 1 prompt"
        assert page.locator("#task").input_value() == "What is item 5 of beta?"
        assert failures == []


def test_a_slow_answer_says_how_long_the_page_has_waited(page_server):
    """A search, or a model page, whose answer has not come (a slow or hung server; held here by the route, the
    page's clock run on by the test) says every 15 s how long it has waited and that it still waits, in the live
    region that said "searching…" (or "loading…"); the answer replaces it when it comes. Before, "searching…" alone
    stood for as long as the server took, a hung server's forever, the page not saying whether it was still waiting
    (found walking the page with a /v1/find that never answered; a model page of the 32,823-model home takes 18 s)."""
    from playwright.sync_api import expect

    held = []
    with chromium_page() as (page, failures):
        status, meta = page.locator("#status"), page.locator("#model-meta")
        page.clock.install()
        page.goto(page_server + "/")
        page.route("**/v1/find", lambda route: held.append(route))
        page.fill("#task", "What is item 3 of alpha?")
        page.click("#go")
        expect(status).to_have_text("searching…")
        page.clock.run_for(16_000)
        expect(status).to_have_text("searching… (no answer yet after 15 s; still waiting for the server)")
        _held(page, held).pop().continue_()
        expect(status).to_have_text("4 models ranked for 1 prompt")
        page.route("**/v1/models/**", lambda route: held.append(route))
        page.locator("#ranked a.detail[data-model='org/m1']").click()
        expect(meta).to_have_text("loading…")
        page.clock.run_for(31_000)
        expect(meta).to_have_text("loading… (no answer yet after 30 s; still waiting for the server)")
        _held(page, held).pop().continue_()
        expect(meta).to_contain_text("prompts measured")
        page.clock.run_for(16_000)
        expect(meta).to_contain_text("prompts measured")
        assert failures == []


def test_a_search_asked_again_by_itself_leaves_a_changed_form_searchable(page_server):
    """A search answered 503 is asked again by itself (after 5 s; the page's clock run on by the test) while the user
    has changed the task meanwhile: the button is marked busy for the search that runs, not for the changed form, so
    "Find models" searches the new task. Before, the busy mark took the form as it stood when the retry started, so
    the changed task's press was ignored until the old query's answer came."""
    import json

    from playwright.sync_api import expect

    held = []
    down = {"error": {"code": "unavailable", "field": None, "message": "the index is being published"}}

    def answer(route):
        if "chemistry" not in (route.request.post_data or ""):
            route.continue_()
        elif not held:
            held.append(None)
            route.fulfill(status=503, content_type="application/json", body=json.dumps(down))
        else:
            held.append(route)

    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.clock.install()
        page.goto(page_server + "/")
        page.route("**/v1/find", answer)
        page.fill("#task", "What is item 3 of alpha about chemistry?")
        page.click("#go")
        expect(status).to_contain_text("asking again in 5 s")
        page.fill("#task", "What is item 5 of beta?")
        page.clock.run_for(6_000)
        expect(status).to_have_text("searching…")
        _held(page, held, 2)
        expect(page.locator("#go")).not_to_have_attribute("aria-disabled", "true")
        page.click("#go")
        expect(status).to_have_text("4 models ranked for 1 prompt")
        assert "item+5+of+beta" in page.url
        assert failures == []


def test_an_error_naming_a_field_marks_that_field(page_server):
    """An error the server names a field of (k over its maximum, with "Filters and knobs" closed; a prompt longer than
    the server takes) marks that field invalid (aria-invalid, which a screen reader says on reaching it, and the error
    colour), opening the panel it is in; the next search that starts clears the mark. Before, only the status said it:
    the field stayed unmarked, hidden in the closed panel (found walking the page from the keyboard)."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.goto(page_server + "/?q=What+is+item+3+of+alpha%3F&k=1000")
        expect(status).to_have_text("error: k: at most 100 results (max_k), got 1000")
        page.click("#options summary")  # closed by the user
        page.click("#go")
        expect(status).to_have_text("error: k: at most 100 results (max_k), got 1000")
        expect(page.locator("#k")).to_have_attribute("aria-invalid", "true")
        expect(page.locator("#k")).to_be_visible()
        expect(page.locator("#task")).not_to_have_attribute("aria-invalid", "true")
        page.fill("#k", "10")
        page.fill("#task", "x" * 4001)
        page.click("#go")
        expect(status).to_contain_text("error: prompt 1: a prompt has at most 4000 characters")
        expect(page.locator("#task")).to_have_attribute("aria-invalid", "true")
        expect(page.locator("#k")).not_to_have_attribute("aria-invalid", "true")
        page.fill("#task", "What is item 3 of alpha?")
        page.click("#go")
        expect(status).to_have_text("4 models ranked for 1 prompt")
        assert page.locator("[aria-invalid='true']").count() == 0
        assert failures == []


def test_an_error_names_a_filter_by_the_forms_words(page_server):
    """An error of a filter says it by the form's words, as the notes do: "min parameters: 'abc' is not a parameter
    count ...", and "measured on benchmark: unknown benchmark ..." for the filter, which the benchmark picked as the
    query is not. Before, the API's names, "filters.min_params: 'abc' ...", and for the filter "unknown benchmark
    'zzz'" alone, read as the picker's benchmark (found walking the page with shared URLs of bad filters)."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.goto(page_server + "/?q=What+is+item+3%3F&min_params=abc")
        expect(status).to_have_text("error: min parameters: 'abc' is not a parameter count; use a number with K, M, B "
                                    "or T, e.g. 8B or 770M")
        page.goto(page_server + "/?q=What+is+item+3%3F&measured_on=zzz")
        expect(status).to_have_text("error: measured on benchmark: unknown benchmark 'zzz' (the \"Measured on "
                                    "benchmark\" list offers them)")
        page.goto(page_server + "/?benchmark=zzz")
        expect(status).to_have_text("error: unknown benchmark 'zzz' (the \"…or a benchmark\" list offers them)")
        assert failures == []


def test_a_benchmark_named_in_the_url_is_in_the_pickers_order_with_its_prompts(page_server):
    """A shared URL naming a benchmark (`/?benchmark=beta`, `measured_on=beta`): when the list arrives the picker holds
    each benchmark once, in the list's order with its number of prompts, the URL's one selected; before, the URL's
    was first and bare ("beta" above "alpha (16 prompts)") for as long as the page stayed open."""
    from playwright.sync_api import expect

    options = "[...document.querySelectorAll('#{} option')].map((o) => o.textContent)"
    with chromium_page() as (page, failures):
        page.goto(page_server + "/?benchmark=beta")
        expect(page.locator("#status")).to_have_text("4 models ranked for benchmark beta")
        expect(page.locator("#benchmark option")).to_have_count(3)
        expect(page.locator("#benchmark option").nth(1)).to_have_text("alpha (16 prompts)")
        assert page.evaluate(options.format("benchmark"))[1:] == ["alpha (16 prompts)", "beta (12 prompts)"]
        assert page.locator("#benchmark").input_value() == "beta"
        page.goto(page_server + "/?q=What+is+item+3&measured_on=beta")
        expect(page.locator("#measured_on option")).to_have_count(3)
        expect(page.locator("#measured_on option").nth(1)).to_have_text("alpha (16 prompts)")
        assert page.evaluate(options.format("measured_on"))[1:] == ["alpha (16 prompts)", "beta (12 prompts)"]
        assert page.locator("#measured_on").input_value() == "beta"
        assert failures == []


def test_the_same_search_again_adds_no_history_entry(page_server):
    """A search submitted again unchanged (a refresh of its results) replaces its history entry, so one Back returns
    to the page before it; before, each submit pushed another entry for the same URL and Back seemed to do nothing.
    A changed search still adds one."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.goto(page_server + "/")
        page.fill("#task", "What is item 3 of alpha about chemistry?")
        for _ in range(3):
            page.click("#go")
            expect(status).to_have_text("4 models ranked for 1 prompt")
        # about:blank (the new tab), "/", the search: one entry however often it was submitted (before: 5)
        assert page.evaluate("history.length") == 3
        page.fill("#task", "What is item 5 of beta?")
        page.click("#go")
        expect(page).to_have_url(re.compile(r"item\+5"))
        assert page.evaluate("history.length") == 4
        page.go_back()
        expect(page).to_have_url(re.compile(r"item\+3"))
        page.go_back()
        expect(page).to_have_url(page_server + "/")
        assert failures == []


#: a model name with no space or hyphen to break at (as some fine-tunes are named), 86 characters
LONG_NAME = "org/Some_Extremely_Long_Model_Name_Finetuned_On_Everything_v0_1_GGUF_Q4_K_M_instruct"


def test_a_long_name_never_widens_the_page_on_a_phone(page_server):
    """At 360 x 740 (a phone), a shared link naming a long model or benchmark without a space or hyphen in it (the
    status quoting it in an error, a model page titled by it) keeps the page 360 px wide, and a model page's table
    wraps a long benchmark name so its numbers stay in view; before, the status made the page 886 px wide and the
    model page's title 1307 px, the numbers scrolled off beside the name."""
    import json

    from playwright.sync_api import expect

    def long_benchmarks(route):  # the real answer, its benchmarks renamed (the test index's are alpha and beta)
        data = route.fetch().json()
        for s in data["strengths"]:
            s["benchmark"] = "leaderboard_bbh_logical_deduction_seven_objects_" + s["benchmark"]
        for b in data["benchmarks"]:
            b["name"] = "leaderboard_bbh_logical_deduction_seven_objects_" + b["name"]
        route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

    with chromium_page() as (page, failures):
        page.set_viewport_size({"width": 360, "height": 740})
        width = "document.documentElement.scrollWidth"
        page.goto(page_server + "/?q=What+is+item+3&models=" + LONG_NAME)
        expect(page.locator("#status")).to_contain_text(f"unknown model '{LONG_NAME}'")
        assert page.evaluate(width) <= 360
        page.goto(page_server + "/?benchmark=" + LONG_NAME.replace("/", "_"))
        expect(page.locator("#status")).to_contain_text("unknown benchmark")
        assert page.evaluate(width) <= 360
        page.goto(page_server + "/?model=" + LONG_NAME)
        expect(page.locator("#model-meta")).to_contain_text("error: unknown model")
        expect(page.locator("#model-title")).to_have_text(LONG_NAME)
        assert page.evaluate(width) <= 360
        page.route("**/v1/models/org/m1", long_benchmarks)
        page.goto(page_server + "/?model=org%2Fm1")
        expect(page.locator("#observed tbody tr")).to_have_count(2)
        assert page.evaluate(width) <= 360
        for table in ("#observed", "#strengths"):  # the last column's numbers are on the screen, not scrolled off
            right = page.locator(f"{table} tbody tr").first.locator("td:visible").last.bounding_box()
            assert right["x"] + right["width"] <= 360, (table, right)
        assert failures == []


def test_the_keyboard_focus_stays_where_the_user_is(page_server):
    """A keyboard user's focus is never dropped to the page's body: pressing "Find models" (Enter on it) keeps it on
    the button while the search runs and after an error (the results get it when they come); before, the button was
    disabled while searching, which took the focus from it, so after an error the next Tab went to the footer.
    Leaving a model page (its "back to search" link, Back) puts the focus on that model's link among the results;
    before, on the body, as the model page's section was hidden under it. The skip link moves the focus to the view
    shown and navigates nowhere; before, it ran the search again. A model page that loads after the user tabbed on
    leaves the focus where they put it; before, it took the focus to its section."""
    from playwright.sync_api import expect

    focused = "document.activeElement.id || document.activeElement.tagName"
    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.add_init_script(COUNT_ANSWERS)
        page.goto(page_server + "/")
        held = []
        page.route("**/v1/find", lambda route: held.append(route))
        page.fill("#task", "What is item 3?\n---\n" + "x" * 4001)
        page.focus("#go")
        page.keyboard.press("Enter")
        expect(status).to_have_text("searching…")
        assert page.evaluate(focused) == "go"
        expect(page.locator("#go")).to_have_attribute("aria-disabled", "true")
        _held(page, held).pop().continue_()
        page.unroute("**/v1/find")
        expect(status).to_contain_text("error: prompt 2: a prompt has at most 4000 characters")
        assert page.evaluate(focused) == "go"
        expect(page.locator("#go")).not_to_have_attribute("aria-disabled", "true")
        page.keyboard.press("Shift+Tab")  # the focus goes on from where it was
        assert page.evaluate(focused) == "options-title"  # the "Filters and knobs" summary
        page.fill("#task", "What is item 3 of alpha about chemistry?")
        page.focus("#go")
        page.keyboard.press("Enter")
        expect(status).to_have_text("4 models ranked for 1 prompt")
        expect(page.locator("#results")).to_be_focused()

        # a model page opened from the keyboard and left by its "back to search" link, or by Back: the focus returns
        # to that model's link among the results (before: the body; the next Tab went to the footer)
        link = page.locator("#ranked a.detail[data-model='org/m2']")
        for leave in ("the link", "Back"):
            link.focus()
            page.keyboard.press("Enter")
            expect(page.locator("#model-meta")).to_contain_text("prompts measured")
            expect(page.locator("#model")).to_be_focused()
            if leave == "Back":
                page.go_back()
            else:
                page.keyboard.press("Tab")
                assert page.evaluate(focused) == "back"
                page.keyboard.press("Enter")
            expect(status).to_have_text("4 models ranked for 1 prompt")
            expect(link).to_be_focused()
        page.go_forward()  # Forward to the model page: its section has the focus
        expect(page.locator("#model-meta")).to_contain_text("prompts measured")
        expect(page.locator("#model")).to_be_focused()
        # a model page still loading when the user tabs on to "back to search": its answer leaves the focus there
        # (before: it moved the focus to the section, and the Enter meant for the link did nothing)
        page.go_back()
        expect(link).to_be_focused()
        held = []
        page.route("**/v1/models/org/m2", lambda route: held.append(route))
        page.keyboard.press("Enter")
        expect(page.locator("#model-meta")).to_have_text("loading…")
        page.keyboard.press("Tab")
        assert page.evaluate(focused) == "back"
        _held(page, held).pop().continue_()
        expect(page.locator("#model-meta")).to_contain_text("prompts measured")
        page.unroute("**/v1/models/org/m2")
        assert page.evaluate(focused) == "back"

        # the skip link moves the focus to the view shown and nothing else: no request, no history entry, the URL as
        # it was (before: its "#results" was a history entry whose popstate ran the search again; on a model page it
        # pointed at the hidden results and loaded the model again). Read in the page once the focus moved: a fragment
        # link's navigation and its popstate (whose search fetches at once) happen within the click, before that
        state = "[location.href, history.length, window.__asked.length]"
        skip = page.locator("a.skip")
        for view, name in (("#model", "Skip to the model page"), ("#results", "Skip to results")):
            if view == "#results":
                page.go_back()
                expect(status).to_have_text("4 models ranked for 1 prompt")
            before = page.evaluate(state)
            expect(skip).to_have_text(name)
            skip.focus()
            page.keyboard.press("Enter")
            expect(page.locator(view)).to_be_focused()
            assert page.evaluate(state) == before, (view, before)
        expect(status).to_have_text("4 models ranked for 1 prompt")
        page.go_forward()
        expect(page.locator("#model-meta")).to_contain_text("prompts measured")

        # the focus ring is seen: at least 3:1 against the page (WCAG's focus indicator contrast) on each kind of
        # control reached by Tab; before, amber #f2a900 on white, 2.1:1
        contrast = """(() => {
          const lum = (c) => { const [r, g, b] = c.match(/\\d+/g).slice(0, 3).map((v) => { v = v / 255;
            return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
          const s = getComputedStyle(document.activeElement);
          const [a, b] = [lum(s.outlineColor), lum(getComputedStyle(document.body).backgroundColor)];
          return [s.outlineStyle, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)];
        })()"""
        page.goto(page_server + "/?q=What+is+item+3")
        expect(status).to_contain_text("ranked")
        seen = set()
        for _ in range(10):  # the skip link, the site's name, the task, the picker, the filters, the button, a result's
            page.keyboard.press("Tab")
            seen.add(page.evaluate("document.activeElement.tagName"))
            style, ratio = page.evaluate(contrast)
            assert style == "solid" and ratio >= 3, (page.evaluate(focused), ratio)
        assert {"A", "TEXTAREA", "SELECT", "SUMMARY", "BUTTON"} <= seen, seen
        assert failures == []


def test_a_screen_reader_can_tell_the_results_apart(page_server):
    """What a screen reader lists of the results: each is headed by its model's name (h3 under the Results h2, the
    evidence panel's h4 under it; no heading level skipped on the page), its "model page" link and its evidence panel
    are named for the model. Before, no result had a heading (the h4s sat under the h2), and the lists of links and
    controls read "model page" and "Evidence" four times, none saying which model. The interval is said to be the 90%
    one, and heard once. A model page's section, focused
    when it loads, is described by the line under its title (its metadata, or the error); before, only its name was
    said, and why it failed to load never. Its tables are named by their headings."""
    from playwright.sync_api import expect

    levels = "[...document.querySelectorAll('h1,h2,h3,h4,h5,h6')].map((h) => Number(h.tagName[1]))"
    with chromium_page() as (page, failures):
        page.goto(page_server + "/?q=What+is+item+3+of+alpha+about+chemistry%3F")
        expect(page.locator("#ranked > li.result")).to_have_count(4)
        for m in ("org/m1", "org/m2", "lab/m3", "plainname"):
            expect(page.get_by_role("heading", level=3, name=m, exact=True)).to_have_count(1)
            expect(page.get_by_role("link", name=f"model page of {m}", exact=True)).to_have_count(1)
            expect(page.get_by_role("group").filter(has=page.get_by_text(f"Evidence for {m}", exact=True))).to_have_count(1)
        expect(page.get_by_role("link", name="model page", exact=True)).to_have_count(0)
        # the interval is said to be the 90% one (as the CLI's column), and a screen reader hears the probability and
        # the interval once, in the bar's label (before: "(67%–77%)" with no level, the figures said twice)
        first = page.locator("#ranked > li.result").first
        label = first.locator(".bar").get_attribute("aria-label")
        assert re.fullmatch(r"probability of success \d+%, 90% interval \d+% to \d+%", label), label
        expect(first.locator(".ci")).to_have_text(re.compile(r"^\(90% interval \d+%–\d+%\)$"))
        heard = first.aria_snapshot()
        assert heard.count(label.split(",")[0].split()[-1]) == 1 and heard.count("interval") == 1, heard
        order = page.evaluate(levels)
        assert order[0] == 1 and all(b - a <= 1 for a, b in zip(order, order[1:])), order
        page.locator("#ranked a.detail[data-model='org/m1']").click()
        expect(page.locator("#model-meta")).to_contain_text("prompts measured")
        order = page.evaluate(levels)
        assert order[0] == 1 and all(b - a <= 1 for a, b in zip(order, order[1:])), order
        # the model page's section, which gets the focus when it has loaded, is described by its line under the
        # title: what the model is, or why it could not be loaded (before: only its name was said, an error never)
        model = page.locator("#model")
        expect(model).to_be_focused()
        expect(model).to_have_accessible_name("org/m1")
        expect(model).to_have_accessible_description(re.compile(r"^parameters 7\.0B · license mit · .*prompts measured"))
        # its tables are named by their headings, as a screen reader's list of tables says them (before: unnamed)
        for name in ("Where it is strongest relative to the other models", "Observed accuracy per benchmark"):
            expect(page.get_by_role("table", name=name, exact=True)).to_have_count(1)
        page.goto(page_server + "/?model=org%2Fnope")
        expect(model).to_be_focused()
        expect(model).to_have_accessible_description(re.compile(r"^error: unknown model 'org/nope'"))
        assert failures == []


def test_the_page_writes_sizes_and_percentages_as_the_cli_does(page_server):
    """The page's parameter counts and percentages (app.js formatParams, pct) are the CLI's (indexer.find.format_params,
    indexer.cli_find._pct) for the same number, halfway cases included: 12.25B is "12.3B" in both, 1 of 8 "13%".
    Before, the CLI rounded a size halfway to even: "12.2B" and "2.62M" in `taskspace models` and `search`, "12.3B"
    and "2.63M" on the page."""
    import random

    from indexer.cli_find import _pct
    from indexer.find import format_params

    rng = random.Random(7)
    sizes = [12_250_000_000, 1_125_000_000, 3_375_000_000, 2_625_000, 124_500_000, 8_030_261_248, 70_553_706_496,
             999_950_000, 8_000_000_000, 1_500, 999, 1_000_000_000_000, 999_950, 999_999_999_999] + [
                 rng.randrange(1, 10**12) for _ in range(300)]
    shares = [k / d for d in (8, 40, 200, 1000) for k in range(d + 1)] + [rng.random() for _ in range(300)]
    with chromium_page() as (page, failures):
        page.goto(page_server + "/")
        got_sizes = page.evaluate("(ns) => ns.map(formatParams)", sizes)
        got_shares = page.evaluate("(xs) => xs.map(pct)", shares)
        assert failures == []
    assert [(n, g) for n, g in zip(sizes, got_sizes) if g != format_params(n)] == []
    assert (got_sizes[7], got_sizes[12], got_sizes[13]) == ("1.0B", "1.0M", "1.0T")  # not "1000.0M" (before)
    assert [(x, g) for x, g in zip(shares, got_shares) if g != _pct(x)] == []


def test_a_model_pages_difference_is_that_of_the_percentages_shown(page_server):
    """A model page's strengths row says predicted success, the mean of all models and their difference: the
    difference is that of the two percentages shown, so the row adds up (xwincoder-34b on mbpp in evalarena_code,
    0.6435 and 0.4481: "64%", "45%", "+19 pts"); before, the exact difference rounded on its own, "+20 pts", in 176 of
    evalarena_code's 735 rows."""
    import json

    from playwright.sync_api import expect

    def xwincoder(route):  # the real answer, its first row given xwincoder-34b's numbers on mbpp
        data = route.fetch().json()
        data["strengths"][0].update(probability=0.6435, mean=0.4481, delta=0.1954)
        route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

    with chromium_page() as (page, failures):
        page.route("**/v1/models/org/m1", xwincoder)
        page.goto(page_server + "/?model=org%2Fm1")
        rows = page.locator("#strengths tbody tr")
        expect(rows.first).to_be_visible()
        assert rows.first.locator("td").all_inner_texts()[1:4] == ["64%", "45%", "+19 pts"]
        for row in rows.all():
            _, p, mean, diff, _ = row.locator("td").all_inner_texts()
            assert int(diff.removesuffix(" pts")) == int(p.rstrip("%")) - int(mean.rstrip("%")), (p, mean, diff)
        assert failures == []


def test_the_page_takes_the_readers_default_text_size(page_server, tmp_path):
    """A reader who set a larger default text size in the browser (24 px, Chromium's preference) gets the page's text
    at that size, every size scaled from it (the labels at 0.95 of it); before, the page set 16 px on its root and
    overrode the preference, so only zooming enlarged it. At the usual 16 px default nothing changes."""
    import json

    from playwright.sync_api import expect, sync_playwright

    _need_browser()
    profile = tmp_path / "profile"
    (profile / "Default").mkdir(parents=True)
    (profile / "Default" / "Preferences").write_text(json.dumps({"webkit": {"webprefs": {"default_font_size": 24}}}))
    size = "(s) => parseFloat(getComputedStyle(document.querySelector(s)).fontSize)"
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = context.new_page()
            page.goto(page_server + "/?q=What+is+item+3")
            expect(page.locator("#status")).to_contain_text("ranked")
            assert page.evaluate(size, "html") == 24
            assert page.evaluate(size, "label[for=task]") == pytest.approx(24 * 0.95)
            assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
        finally:
            context.close()


def test_the_checkboxes_are_targets_of_at_least_24_pixels(page_server):
    """"Exclude gated models" and "Open weights only" are at least 24 x 24 CSS pixels, the minimum target size of
    WCAG 2.2 (2.5.8), at the default text size, on a desktop and on a phone; before, the browser's default 13 x 13."""
    with chromium_page() as (page, failures):
        for width in (1280, 360):
            page.set_viewport_size({"width": width, "height": 800})
            page.goto(page_server + "/")
            for box in ("#exclude_gated", "#open_only"):
                b = page.locator(box).bounding_box()
                assert b["width"] >= 24 and b["height"] >= 24, (width, box, b)
        assert failures == []


def test_the_space_chooser_appears_once_a_server_down_at_the_pages_load_answers(page_server):
    """The page loaded while the server did not answer (restarting; here its first `GET /v1/spaces` refused) shows the
    space chooser once the server answers, by itself, on a home holding several spaces (the real answer with a second
    space added here). Before, the spaces were asked once at load: the chooser never appeared until a reload, and
    every search took the default space."""
    import json

    from playwright.sync_api import expect

    asked = []

    def spaces(route):
        asked.append(route.request.url)
        if len(asked) == 1:
            return route.abort("connectionrefused")
        data = route.fetch().json()
        data["spaces"].append({**data["spaces"][0], "name": "other-space", "id": 99, "default": False})
        route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

    with chromium_page() as (page, failures):
        page.route("**/v1/spaces", spaces)
        page.goto(page_server + "/")
        chooser = page.get_by_label("Embedding space (this index holds several)")
        expect(chooser).to_be_visible()
        expect(page.locator("#space option")).to_have_count(2)
        assert page.locator("#space option").nth(1).get_attribute("value") == "other-space"
        assert len(asked) == 2, asked
        assert failures == []


def test_a_space_chooser_picks_the_space_when_the_index_holds_several(tmp_path, encoder, monkeypatch):
    """An index holding two spaces (the default method's, and `TASKSPACE_METHOD=auto`'s from the same results, as
    tests/test_spaces.py builds two): the page shows a labelled space chooser (hidden with one space: the other
    tests), the default first; picked from the keyboard, the search asks `POST /v1/find` for that space, says which
    space answered, keeps it in the URL (a reload picks it again), and a result's model page asks
    `GET /v1/models/{id}?space=` for it. Before, the page could search the default space alone."""
    from playwright.sync_api import expect

    from indexer.config import reset_settings
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.space import space_name
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    _need_browser()
    build_index(tmp_path, encoder)
    monkeypatch.setenv("TASKSPACE_METHOD", "auto")
    reset_settings()
    with open_store() as store, VectorStore.from_settings() as vectors:
        r = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "a")), SourceSpec(str(tmp_path / "b"))])
        assert r.status == "ok", r.errors
        (mc, _), (auto, auto_id) = ((space_name(s), str(s.id)) for s in store.list_spaces())
    monkeypatch.delenv("TASKSPACE_METHOD")
    reset_settings()
    with ThreadServer(create_app(Service(encoder=encoder))) as url, chromium_page() as (page, failures):
        page.goto(url + "/")
        chooser = page.get_by_label("Embedding space (this index holds several)")
        expect(chooser).to_be_visible()
        options = page.locator("#space option")
        expect(options).to_have_count(2)
        assert options.nth(0).get_attribute("value") == "" and mc in options.nth(0).inner_text()
        assert "(the default)" in options.nth(0).inner_text() and "method auto-mc" in options.nth(0).inner_text()
        assert options.nth(1).get_attribute("value") == auto and "method auto," in options.nth(1).inner_text()
        # from the keyboard: the task, then the chooser (the next control but the benchmark picker), then the button
        page.locator("#task").focus()
        page.keyboard.type("What is item 3 of alpha about chemistry?")
        page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "space"
        page.keyboard.press("ArrowDown")
        assert chooser.input_value() == auto
        with page.expect_request("**/v1/find") as asked:
            page.locator("#go").press("Enter")
        assert asked.value.post_data_json["space"] == auto
        expect(page.locator("#status")).to_contain_text(f"4 models ranked for 1 prompt in space {auto}")
        assert parse_qs(urlsplit(page.url).query)["space"] == [auto]
        page.goto(page.url)  # a shared link: the same space chosen again
        expect(page.locator("#status")).to_contain_text(f"in space {auto}")
        assert chooser.input_value() == auto
        with page.expect_request("**/v1/models/**") as detail:
            page.locator("#ranked a.detail[data-model='org/m1']").click()
        assert parse_qs(urlsplit(detail.value.url).query)["space"] == [auto]
        expect(page.locator("#model-meta")).to_contain_text(f"predicted in space {auto}")
        assert parse_qs(urlsplit(page.url).query)["space"] == [auto]
        page.go_back()
        # the default again: no space in the request or the URL, the answer from the default space
        expect(page.locator("#status")).to_contain_text(f"in space {auto}")
        chooser.select_option("")
        with page.expect_request("**/v1/find") as asked:
            page.locator("#go").press("Enter")
        assert "space" not in asked.value.post_data_json
        expect(page.locator("#status")).to_contain_text(f"in space {mc}")
        assert "space" not in parse_qs(urlsplit(page.url).query)
        # a link naming the space by its id is labelled as the list labels it; one naming no space of this index is
        # last, said so, and the search says what the spaces are
        page.goto(url + "/?" + urlencode({"q": "What is item 3 of alpha?", "space": auto_id}))
        expect(page.locator("#status")).to_contain_text(f"in space {auto}")
        expect(page.locator("#space option:checked")).to_contain_text(f"{auto}: ")
        page.goto(url + "/?q=x&space=nope")
        expect(page.locator("#status")).to_contain_text("error: space 'nope' is not a known space")
        expect(options.last).to_have_text("nope (not a space of this index)")
        expect(options).to_have_count(3)
        assert failures == []


def test_a_model_id_with_dot_segments_stays_a_model_id(page_server):
    """A model page whose id holds a `.` or `..` segment (`/?model=..%2Fbenchmarks`, `../..`, `org/..`) asks the API
    for that id (one path segment, its slashes as %2F) and says the model is unknown; `.` or `..` alone, which no URL
    path can carry, is said so without a request. Before, the browser resolved the dot segments: `../benchmarks`
    fetched /v1/benchmarks ("Cannot read properties of undefined", the title "undefined") and `../..` the page itself
    ("not the taskspace API's JSON")."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        for model, sent in (("../benchmarks", "/v1/models/..%2Fbenchmarks"), ("../..", "/v1/models/..%2F.."),
                            ("org/..", "/v1/models/org%2F..")):
            with page.expect_request(lambda r: "/v1/models" in r.url) as asked:
                page.goto(page_server + "/?model=" + quote(model, safe=""))
            assert urlsplit(asked.value.url).path == sent
            expect(page.locator("#model-meta")).to_contain_text(f"error: unknown model '{model}'")
            expect(page.locator("#model-title")).to_have_text(model)
        for model in (".", ".."):
            asked = []
            page.on("request", lambda r: asked.append(r.url) if "/v1/models" in r.url else None)
            page.goto(page_server + "/?model=" + quote(model, safe=""))
            expect(page.locator("#model-meta")).to_contain_text(f'error: the model id "{model}" cannot be written in a URL path')
            assert asked == []
        assert failures == []


def test_the_page_says_what_a_model_is_based_on_and_whose_size_it_shows(page_server):
    """A result and a model page say "based on BASE" for a model whose card names one, and "parameters 7.0B (of
    BASE)" where the count is the base model's (``params_from``: an adapter's), as the CLI does; a model with neither
    shows its size alone. (The answers are the server's, given these two fields by the routes below.)"""
    import json

    from playwright.sync_api import expect

    facts = {"base_model": "org/base", "params_from": "org/base"}

    def on_m1(route):
        data = route.fetch().json()
        for r in data.get("results") or [data]:
            if r["model"] == "org/m1":
                r["metadata"].update(facts)
        route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

    with chromium_page() as (page, failures):
        page.route("**/v1/find", on_m1)
        page.route("**/v1/models/org/m1", on_m1)
        page.goto(page_server + "/?q=What+is+item+3+of+alpha+about+chemistry%3F")
        results = page.locator("#ranked > li.result")
        expect(results.first).to_be_visible()
        metas = {r.locator("a.detail").get_attribute("data-model"): r.locator("p.meta").inner_text()
                 for r in results.all()}
        assert "parameters 7.0B (of org/base)" in metas["org/m1"] and "based on org/base" in metas["org/m1"]
        assert "parameters 70.0B ·" in metas["org/m2"] and "based on" not in metas["org/m2"]
        page.goto(page_server + "/?model=org%2Fm1")
        expect(page.locator("#model-meta")).to_contain_text("parameters 7.0B (of org/base)")
        expect(page.locator("#model-meta")).to_contain_text("based on org/base")
        assert failures == []


def test_the_page_says_once_when_no_model_was_measured_near_the_query(page_server):
    """A bread recipe, far from every indexed question: under the status line the page says once that no model in
    the index was measured on anything like it, so the ranking rests on the models' general ability (as
    `taskspace search` and `query.measured_near` do); a question like the index's says nothing of it; an answer where
    only some results were measured near (the real answer's `query.measured_near` made so) says how many in the
    notes. Before, only each result's "not measured near this query" badge."""
    import json

    from playwright.sync_api import expect

    from indexer.cli_find import FAR_NOTE

    with chromium_page() as (page, failures):
        page.goto(page_server + "/?q=Give+me+a+recipe+for+sourdough+bread+with+a+crisp+crust")
        status, caveats, notes = page.locator("#status"), page.locator("#caveats"), page.locator("#notes")
        expect(status).to_contain_text("4 models ranked for")
        expect(caveats).to_be_visible()
        expect(caveats).to_contain_text(f"{FAR_NOTE}: no model in the index was measured on anything like this query "
                                        "(no indexed prompt is near it), so the ranking rests on the models' general "
                                        "ability alone")
        assert caveats.inner_text().count(FAR_NOTE) == 1
        expect(page.locator("#ranked .badge.far")).to_have_count(4)
        page.goto(page_server + "/?q=What+is+item+3+of+alpha")
        expect(status).to_contain_text("4 models ranked for")
        expect(caveats).to_be_hidden()
        expect(notes).not_to_contain_text("of these")

        def some(route):
            data = route.fetch().json()
            data["query"]["measured_near"] = {"results": 1, "of": 4, "any_model": True}
            route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

        def one(route):
            data = route.fetch().json()
            data["results"] = data["results"][:1]
            data["query"]["measured_near"] = {"results": 0, "of": 1, "any_model": True}
            route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

        page.route("**/v1/find", some)
        page.goto(page_server + "/?q=What+is+item+3+of+beta")
        expect(notes).to_contain_text("1 of these 4 models was measured near this query")
        expect(caveats).to_be_hidden()
        page.unroute("**/v1/find")
        # one result, not measured near (compare mode with one model): "this model", not "none of these 1 models"
        page.route("**/v1/find", one)
        page.goto(page_server + "/?q=What+is+item+3+of+gamma")
        expect(notes).to_have_text("this model was not measured near this query (other indexed models were)")
        page.unroute("**/v1/find")

        def none_of(route):  # none of the ranked models measured near it (others were): which choice lists those
            data = route.fetch().json()
            data["query"]["measured_near"] = {"results": 0, "of": 4, "any_model": True}
            route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

        page.route("**/v1/find", none_of)
        page.goto(page_server + "/?q=What+is+item+3+of+delta")
        expect(notes).to_have_text("none of these 4 models was measured near this query (other indexed models were); "
                                   "ranking by the lower end of its interval favours the models measured near it")
        page.unroute("**/v1/find")
        assert failures == []


def test_a_503_with_retry_after_is_asked_again_then_and_one_without_says_so(page_server):
    """A 503 the server knows the length of (`Retry-After`: a pass publishing the benchmark asked for, made so by the
    route below with the server's own words) is said with it, and the page asks again by itself then, and shows the
    ranking; one without `Retry-After` (a model page here: a pass longer than the ones before) says the server does
    not say for how long and that it asks again in 5 s, and does. Before, both showed the error alone ("ask again when
    it has published") and the page never asked again nor said when."""
    import json
    import time

    from playwright.sync_api import expect

    busy = {"error": {"code": "unavailable", "field": "benchmark", "message": "benchmark 'alpha' is in the database "
                      "but not indexed in space s yet: this server's indexing worker (2s) is indexing it: its pass is "
                      "running; ask again when it has published (GET /readyz lists its passes)"}}
    asked: list[float] = []

    def once(route):
        asked.append(time.monotonic())
        if len(asked) == 1:
            route.fulfill(status=503, content_type="application/json", headers={"Retry-After": "1"}, body=json.dumps(busy))
        else:
            route.continue_()

    with chromium_page() as (page, failures):
        page.route("**/v1/find", once)
        page.goto(page_server + "/?benchmark=alpha")
        status = page.locator("#status")
        expect(status).to_contain_text("ask again when it has published (GET /readyz lists its passes) (the server "
                                       "expects this to last 1 s: asking again then)")
        expect(status).to_contain_text("models ranked for benchmark alpha")  # asked again by itself (when: below)
        # asked again after the 1 s it was told, not after the 5 s of a 503 without Retry-After (measured where the
        # route saw the requests: the answer's own time, long on a loaded machine, is not in it)
        assert len(asked) == 2 and 0.9 <= asked[1] - asked[0] < 4.5, asked
        page.unroute("**/v1/find")
        models: list[float] = []

        def model(route):
            models.append(time.monotonic())
            if len(models) == 1:
                route.fulfill(status=503, content_type="application/json", body=json.dumps(busy))
            else:
                route.continue_()

        page.route("**/v1/models/**", model)
        page.locator("#ranked a.detail").first.click()
        meta = page.locator("#model-meta")
        expect(meta).to_contain_text("(the server does not say for how long: asking again in 5 s)")
        expect(meta).to_contain_text("prompts measured")  # asked again by itself (when: below)
        assert len(models) == 2 and 4.9 <= models[1] - models[0] < 9.5, models  # 5 s, not the next wait (10 s)
        assert failures == []


def test_a_server_that_cannot_be_reached_is_asked_again_and_its_page_comes_back(page_server):
    """The server stopped while the page is open (a restart: its requests refused, made so by the routes below) on a
    page of a ranking past the first: the page says it cannot reach the server and that it asks again in 5 s, and
    does, by itself, and shows that page once the server answers (a model page the same). Before, the error stayed
    until the user acted, and the one button, "Find models", searched the form's query from its first page (found on
    the 32,823-model home: `taskspace serve` stopped under ranks 11-20, "next" pressed, then started again)."""
    import time

    from playwright.sync_api import expect

    def refused_once(asked: list[float]):  # a route: its first request refused (no server), the next ones answered
        def handle(route):
            asked.append(time.monotonic())
            if len(asked) == 1:
                route.abort("connectionrefused")
            else:
                route.continue_()
        return handle

    gone = "error: cannot reach the taskspace server (is it running?) (asking again in 5 s)"
    with chromium_page() as (page, failures):
        finds: list[float] = []
        page.route("**/v1/find", refused_once(finds))
        page.goto(page_server + "/?q=What+is+item+3+of+alpha+about+chemistry%3F&k=2&offset=2")
        status = page.locator("#status")
        expect(status).to_have_text(gone)
        expect(status).to_have_text("models 3–4 of 4 ranked for 1 prompt")  # asked again by itself: the same page
        assert len(finds) == 2 and 4.9 <= finds[1] - finds[0] < 9.5, finds
        page.unroute("**/v1/find")
        models: list[float] = []
        page.route("**/v1/models/**", refused_once(models))
        page.locator("#ranked a.detail").first.click()
        meta = page.locator("#model-meta")
        expect(meta).to_have_text(gone)
        expect(meta).to_contain_text("prompts measured")
        assert len(models) == 2, models
        assert failures == []


def test_a_model_page_reached_by_back_links_back_to_the_search_it_was_opened_from(page_server):
    """A model page opened from a search, left, and reached again by Back (or reloaded) links "back to search" to that
    search. Before, the link was set when a model link was clicked, so after another search and its model page, Back
    to the first model page linked to the other search (seen on the 32,823-model home: gpt-4-0613+cot, opened from
    "Sort a list in Python", linked to "Translate to French"), and a reload linked to the empty page."""
    from playwright.sync_api import expect

    first = "/?" + urlencode({"q": "What is item 3 of alpha about chemistry?", "k": 3})
    with chromium_page() as (page, failures):
        page.goto(page_server + first)
        rows = page.locator("#ranked > li.result")
        expect(rows).to_have_count(3)
        page.locator("#ranked a.detail").first.click()
        meta = page.locator("#model-meta")
        expect(meta).to_contain_text("prompts measured")
        model_url = page.url
        expect(page.locator("#back")).to_have_attribute("href", first)
        page.locator("#back").click()
        expect(rows).to_have_count(3)
        page.select_option("#benchmark", "alpha")
        page.fill("#task", "")
        page.click("#go")
        expect(page.locator("#status")).to_contain_text("ranked for benchmark alpha")
        page.locator("#ranked a.detail").nth(1).click()
        expect(meta).to_contain_text("prompts measured")
        expect(page.locator("#back")).to_have_attribute("href", "/?benchmark=alpha&k=3")
        for _ in range(3):  # the other search, the first again (the link's entry), the first model page
            page.go_back()
        assert page.url == model_url
        expect(meta).to_contain_text("prompts measured")
        expect(page.locator("#back")).to_have_attribute("href", first)
        page.reload()
        expect(meta).to_contain_text("prompts measured")
        expect(page.locator("#back")).to_have_attribute("href", first)
        page.locator("#back").click()
        expect(rows).to_have_count(3)
        assert page.url == page_server + first
        assert failures == []


def test_the_benchmark_pickers_follow_the_index_while_the_page_stays_open(page_server):
    """The server's list of benchmarks changes while the page stays open (an indexing pass published a source added
    meanwhile: the route below adds "gamma" to the server's own list, then drops "alpha" as a dropped source would):
    the next search answered offers it in both pickers, and no longer offers one gone, unless it is the one chosen.
    Before, the list the page loaded with stayed until a reload."""
    from playwright.sync_api import expect

    change = {"add": False, "drop": False}

    def benchmarks(route):
        data = route.fetch().json()
        if change["drop"]:
            data["benchmarks"] = [b for b in data["benchmarks"] if b["name"] != "alpha"]
        if change["add"]:
            data["benchmarks"].append({"name": "gamma", "group": "gamma", "prompts": 5, "models": 2})
        route.fulfill(json=data)

    values = "(id) => [...document.querySelectorAll(`#${id} option`)].map((o) => o.value)"
    with chromium_page() as (page, failures):
        page.route("**/v1/benchmarks", benchmarks)
        page.goto(page_server + "/?q=What+is+item+3&measured_on=alpha")
        status = page.locator("#status")
        expect(status).to_contain_text("models ranked for 1 prompt")
        expect(page.locator("#benchmark option")).to_have_count(3)
        change["add"] = True
        page.locator("#go").click()
        expect(page.locator("#benchmark option")).to_have_count(4)
        expect(page.locator("#measured_on option").last).to_have_text("gamma (5 prompts)")
        change["drop"] = True
        page.locator("#go").click()
        expect(page.locator("#benchmark option")).to_have_count(3)
        assert page.evaluate(values, "benchmark") == ["", "beta", "gamma"]
        assert page.evaluate(values, "measured_on") == ["", "alpha", "beta", "gamma"]  # chosen: it stays
        assert page.locator("#measured_on").input_value() == "alpha"
        assert failures == []


def test_a_model_page_whose_results_changed_says_so_under_its_title(page_server, tmp_path):
    """`taskspace ingest` without `taskspace index` (an index pass between its ingest and its publish): org/m1's page
    shows its new results beside strengths predicted from its indexed vector, and now says so under its title (the
    words of `taskspace model`); org/m2's page, whose results did not change, does not. Before, nothing said it."""
    from playwright.sync_api import expect

    from helpers import write_table
    from indexer.browse import MODEL_RESULTS_CHANGED
    from indexer.ingest import ingest

    write_table(tmp_path / "more", "alpha", {"org/m1": [1] * 16}, 16)  # alpha's own prompts, a second source
    ingest(str(tmp_path / "more"), fetch_metadata=False)
    with chromium_page() as (page, failures):
        page.goto(page_server + "/?model=org%2Fm1")
        expect(page.locator("#changed-note")).to_have_text(MODEL_RESULTS_CHANGED)
        expect(page.locator("#strengths tbody tr").first).to_be_visible()
        page.goto(page_server + "/?model=org%2Fm2")
        expect(page.locator("#strengths tbody tr").first).to_be_visible()
        expect(page.locator("#changed-note")).to_be_hidden()
        assert not failures, failures


def _open_model_page_held(page, server: str) -> list:
    """``page`` opened on org/m1's model page with its ``GET /v1/models/org/m1`` held (the other API calls answered):
    the held route, in a list, once the page asked."""
    held = []

    def hold(route):
        if route.request.url.endswith("/v1/models/org/m1"):
            held.append(route)
        else:
            route.continue_()

    page.add_init_script(COUNT_ANSWERS)
    page.route("**/v1/**", hold)
    page.goto(server + "/?model=org%2Fm1")
    _held(page, held)
    return held


def test_a_model_pages_loading_and_its_answer_are_announced_to_a_screen_reader(page_server):
    """A model page's "loading…" (8.5 s and more on a large home) is in a live region, as the search's status is, and
    so is what replaces it (the model's metadata, or its error); the tables it fills are marked busy meanwhile. Before,
    `#model-meta` was a plain paragraph: a screen reader heard nothing between the link's activation and the answer."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        held = _open_model_page_held(page, page_server)
        status = page.get_by_role("status").filter(has_text="loading…")
        expect(status).to_have_count(1)
        assert status.get_attribute("aria-live") == "polite" and status.get_attribute("id") == "model-meta"
        expect(page.locator("#model-tables")).to_have_attribute("aria-busy", "true")
        _release_and_wait_read(page, held.pop(), "/v1/models/org/m1")
        expect(page.get_by_role("status").filter(has_text="prompts measured")).to_have_count(1)
        expect(page.locator("#model-tables")).not_to_have_attribute("aria-busy", "true")
        page.goto(page_server + "/?model=org%2Fnope")
        expect(page.get_by_role("status").filter(has_text="error: unknown model 'org/nope'")).to_have_count(1)
        expect(page.locator("#model-tables")).not_to_have_attribute("aria-busy", "true")
        assert failures == []


def test_a_model_pages_tables_are_shown_once_it_loaded_and_never_under_an_error(page_server):
    """A model page's two tables, with their headings, are shown once the model's answer came: while it loads (held
    here; 20 s and more on a home of 32,823 models) only "loading…" stands under the title, and under an error (an
    unknown model) only the error, in the error colour. Before, both headings and the tables' header rows stood
    empty under "loading…" and under "error: unknown model ...", grey as the model's metadata."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        held = _open_model_page_held(page, page_server)
        meta = page.locator("#model-meta")
        expect(meta).to_have_text("loading…")
        for heading in ("#strengths-title", "#observed-title", "#strengths", "#observed"):
            expect(page.locator(heading)).to_be_hidden()
        _release_and_wait_read(page, held.pop(), "/v1/models/org/m1")
        expect(meta).to_contain_text("prompts measured")
        for heading in ("#strengths-title", "#observed-title", "#strengths", "#observed"):
            expect(page.locator(heading)).to_be_visible()
        muted = meta.evaluate("(e) => getComputedStyle(e).color")

        page.goto(page_server + "/?model=org%2Fnope")
        expect(meta).to_contain_text("error: unknown model 'org/nope'")
        for heading in ("#strengths-title", "#observed-title", "#strengths", "#observed"):
            expect(page.locator(heading)).to_be_hidden()
        red = meta.evaluate("(e) => getComputedStyle(e).color")
        assert red == page.locator("#status").evaluate(
            "(e) => { e.className = 'error'; return getComputedStyle(e).color; }") and red != muted
        # a model found after it: its tables again, its metadata grey again
        page.goto(page_server + "/?model=org%2Fm2")
        expect(meta).to_contain_text("prompts measured")
        expect(page.locator("#strengths-title")).to_be_visible()
        assert meta.evaluate("(e) => getComputedStyle(e).color") == muted
        assert failures == []


def test_a_value_out_of_a_knobs_range_is_said_even_with_the_filters_closed(page_server):
    """A knob's value the form's own limits refuse (k 1000 over its max of 100, min prompts measured 2.5 not a whole
    number) is sent and the server's error names it, whether the "Filters and knobs" panel is open or closed. Before,
    the browser's form validation stopped the search: with the panel closed it could not show its bubble on the
    hidden field ("An invalid form control with name='k' is not focusable", on the console only), so "Find models"
    did nothing at all, no search and no word, the previous answer still shown."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.goto(page_server + "/")
        page.fill("#task", "What is item 3 of alpha about chemistry?")
        page.click("#go")
        expect(status).to_have_text("4 models ranked for 1 prompt")
        page.click("#options summary")
        page.fill("#k", "1000")
        page.click("#options summary")  # closed again: k is hidden
        assert not page.evaluate("document.getElementById('options').open")
        page.click("#go")
        expect(status).to_have_text("error: k: at most 100 results (max_k), got 1000")
        expect(page.locator("#ranked > li.result")).to_have_count(0)
        assert "k=1000" in page.url
        # the panel open (the error opened it, on the field it names), a value that is not a whole number: the same,
        # the server's words (no bubble instead)
        assert page.evaluate("document.getElementById('options').open")
        page.fill("#k", "10")
        page.fill("#min_evidence", "2.5")
        page.click("#go")
        expect(status).to_have_text("error: min prompts measured must be a non-negative integer, not 2.5")
        page.fill("#min_evidence", "")
        page.click("#go")
        expect(status).to_have_text("4 models ranked for 1 prompt")
        assert failures == []


def test_a_box_of_commas_alone_names_no_model_to_compare_nor_license(page_server):
    """The compare box ("Compare exactly these models") holding only commas and spaces (the names deleted, a comma
    left) names no model: the search ranks every model, as with the box empty, the same as the licenses box. Before,
    the page sent an empty list and showed the API's "error: models must be a non-empty list of model names", a thing
    the box had not asked for; a box of commas in Licenses already meant no filter."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.goto(page_server + "/?q=What+is+item+3+of+alpha+about+chemistry%3F")
        expect(status).to_have_text("4 models ranked for 1 prompt")
        ranked = page.locator("#ranked .name").all_inner_texts()
        page.click("#options summary")
        for box in ("models", "licenses"):
            page.fill(f"#{box}", " , ,")
            page.click("#go")
            expect(status).to_have_text("4 models ranked for 1 prompt")
            assert page.locator("#ranked .name").all_inner_texts() == ranked
            page.fill(f"#{box}", "")
        page.goto(page_server + "/?q=What+is+item+3+of+alpha+about+chemistry%3F&models=%2C")
        expect(status).to_have_text("4 models ranked for 1 prompt")
        assert failures == []


def test_a_shared_url_without_a_task_nor_a_benchmark_says_what_to_give(page_server):
    """A URL carrying a search's settings and neither a task nor a benchmark (`?models=a,b`, shared before the task was
    typed) fills the form and says "type a task or pick a benchmark"; before, the page said nothing at all. The page
    opened bare (`/`) still stays quiet."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.goto(page_server + "/?models=m0,m1")
        expect(status).to_have_text("type a task or pick a benchmark")
        expect(page.locator("#models")).to_have_value("m0,m1")
        page.goto(page_server + "/")
        page.wait_for_timeout(200)  # the bare page's search returns at once: nothing is said later either
        expect(status).to_have_text("")
        assert failures == []


def test_an_offset_in_the_url_that_is_no_rank_says_find_models_starts_again(page_server):
    """A hand-made `?offset=` that is no rank to start from (-5, 3.5, abc) is said as the URL's, no form field holding
    it, with what to do: "Find models" searches again from the first page, which it does. Before, "offset must be a
    non-negative integer" (or "offset: not a number"), naming a field the page does not have."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        status = page.locator("#status")
        for bad in ("-5", "3.5", "abc"):
            page.goto(page_server + "/?q=What+is+item+3+of+alpha+about+chemistry%3F&offset=" + bad)
            expect(status).to_have_text(f'error: the URL\'s offset "{bad}" is not a rank to start from (a whole '
                                        'number, 0 or more): "Find models" searches again from the first page')
        page.click("#go")
        expect(status).to_have_text("4 models ranked for 1 prompt")
        assert "offset" not in page.url
        assert failures == []


def test_back_and_forward_show_filters_and_knobs_as_each_urls_search_does(page_server):
    """Back from a search with a filter to one without closes "Filters and knobs", as that URL opened afresh shows it;
    Forward opens it again. Before, the panel stayed open on Back (paramsToForm only ever opened it)."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        status, panel = page.locator("#status"), page.locator("#options")
        page.goto(page_server + "/?q=What+is+item+3+of+alpha+about+chemistry%3F")
        expect(status).to_have_text("4 models ranked for 1 prompt")
        expect(panel).not_to_have_attribute("open", "")
        page.click("#options summary")
        page.fill("#licenses", "mit")
        page.click("#go")
        expect(page).to_have_url(re.compile(r"license=mit"))
        expect(status).to_contain_text("ranked")
        page.go_back()
        expect(page.locator("#licenses")).to_have_value("")
        expect(panel).not_to_have_attribute("open", "")
        page.go_forward()
        expect(page.locator("#licenses")).to_have_value("mit")
        expect(panel).to_have_attribute("open", "")
        assert failures == []


def test_a_model_url_typed_with_a_plus_finds_the_model_named_with_it(page_server, tmp_path):
    """`/?model=org/a+b` typed by hand: a URL's '+' is read as a space, and "org/a b" is no model; the page then looks
    up the '+' form, finds org/a+b and writes its URL encoded. Before, "unknown model 'org/a b'"."""
    from playwright.sync_api import expect

    from helpers import write_table
    from indexer.ingest import ingest

    write_table(tmp_path / "more", "alpha", {"org/a+b": [1] * 16}, 16)
    ingest(str(tmp_path / "more"), fetch_metadata=False)
    with chromium_page() as (page, failures):
        page.goto(page_server + "/?model=org/a+b")
        expect(page.locator("#model-meta")).to_contain_text("prompts measured")  # its page (no vector: 0 of them)
        expect(page.locator("#model-title")).to_have_text("org/a+b")
        assert "model=org%2Fa%2Bb" in page.url, page.url
        page.goto(page_server + "/?model=org/zz+yy")  # neither form: named as typed
        expect(page.locator("#model-meta")).to_contain_text("error: unknown model 'org/zz+yy'")
        assert failures == []


def test_a_compared_model_without_a_vector_is_said_so_not_filtered_out(page_server, tmp_path):
    """Compare mode (`?models=`) of a model whose results were ingested but not yet indexed (`taskspace ingest`
    without `taskspace index`), no filter given: the page says none of the listed models is ranked and that this one
    has no vector in this space, which `taskspace index` solves, as `taskspace search -m` says. Before, "no model
    matches: loosen the filters" and "not ranked (no vector, or filtered out)", naming filters the user never gave.
    With a filter given the page still names both reasons."""
    from playwright.sync_api import expect

    from helpers import write_table
    from indexer.ingest import ingest

    write_table(tmp_path / "more", "alpha", {"org/new": [1] * 16}, 16)
    ingest(str(tmp_path / "more"), fetch_metadata=False)
    with chromium_page() as (page, failures):
        status, notes = page.locator("#status"), page.locator("#notes")
        page.goto(page_server + "/?q=What+is+item+3+of+alpha+about+chemistry%3F&models=org%2Fnew")
        expect(status).to_have_text("none of the listed models is ranked (1 prompt)")
        expect(notes).to_have_text("not ranked (no vector in this space: `taskspace index` solves the models whose "
                                   "results were ingested since its last pass): org/new")
        assert "filter" not in status.inner_text() + notes.inner_text()
        # beside a ranked one: the same words for the one left out
        page.goto(page_server + "/?q=What+is+item+3+of+alpha+about+chemistry%3F&models=org%2Fnew%2C+org%2Fm1")
        expect(status).to_have_text("1 model ranked for 1 prompt")
        expect(notes).to_contain_text("not ranked (no vector in this space: `taskspace index` solves")
        # a filter given: either reason, as the CLI's "removed by a filter, or without a vector in this space"
        page.goto(page_server + "/?q=What+is+item+3+of+alpha+about+chemistry%3F&models=org%2Fnew&license=mit")
        expect(status).to_have_text("no model matches (1 prompt): loosen the filters")
        expect(notes).to_contain_text("not ranked (removed by a filter, or without a vector in this space): org/new")
        assert failures == []


@pytest.mark.parametrize("width", [360, 320])
def test_a_model_pages_ranks_among_tens_of_thousands_fit_a_phone(page_server, width):
    """At 360 x 740 a model page's strengths table, ranks written "8,396 of 32,823" (a home of 32,823 models), fits its
    box: nothing in it is scrolled off sideways. Before, its cells' widest words ("Benchmark", "Predicted",
    "Difference", "32823") needed 5 px more than the 328 px there are, so each rank's last digit was cut off at the
    box's edge ("8396 of 3282"), the rest reached only by scrolling the table; the page itself stayed 360 px wide,
    so a check of the cell against the window alone passed. At 320 px (WCAG's reflow width: 1280 px at 400% zoom)
    too: there, before, the headings "Benchmark", "Predicted" and "Difference" beside "32,823" needed 322 px of the
    288, and the Rank column showed "7 o" / "32" (seen on the large home), the rest scrolled off."""
    import json

    from playwright.sync_api import expect

    def many(route):  # the real answer, ranked among as many models as the large mixed home holds
        data = route.fetch().json()
        for i, s in enumerate(data["strengths"]):
            s.update(rank=8396 + 1000 * i, of=32823)
        route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

    with chromium_page() as (page, failures):
        page.set_viewport_size({"width": width, "height": 740})
        page.route("**/v1/models/org/m1", many)
        page.goto(page_server + "/?model=org%2Fm1")
        expect(page.locator("#strengths tbody tr").first).to_contain_text("of 32,823")
        for box in page.locator("#model .scroll").all():
            assert box.evaluate("(e) => e.scrollWidth <= e.clientWidth"), box.evaluate(
                "(e) => [e.scrollWidth, e.clientWidth]")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert failures == []


def test_the_results_page_through_the_ranking_and_the_page_is_in_the_url(page_server):
    """A ranking longer than k is paged: "next" shows ranks k+1.. (numbered so, POST /v1/find's `offset`), "previous"
    returns, the page is in the URL (`offset`: a reload or a shared link shows the same page, Back the one before), a
    page past the last model says how many there are and links to the last page, and the same holds with a filter and
    for a benchmark query. Before, the page showed the best k alone and ignored `?offset=`."""
    import httpx
    from playwright.sync_api import expect

    def ranked(**body):  # the API's ranking, what each page must show a slice of
        return [r["model"] for r in httpx.post(page_server + "/v1/find", json={"k": 10, **body}, timeout=120).json()["results"]]

    prompt = "What is item 3 of alpha about chemistry?"
    every = ranked(prompts=[prompt])
    assert len(every) == 4, every
    with chromium_page() as (page, failures):
        status, rows = page.locator("#status"), page.locator("#ranked > li.result")
        ranks, names = rows.locator(".rank"), rows.locator(".title")

        def shows(first: int, models: list[str]):
            expect(rows).to_have_count(len(models))
            expect(ranks).to_have_text([f"{first + i}." for i in range(len(models))])
            expect(names).to_have_text(models)

        page.goto(page_server + "/?" + urlencode({"q": prompt, "k": 2}))
        expect(status).to_have_text("models 1–2 of 4 ranked for 1 prompt")
        shows(1, every[:2])
        expect(page.locator("#prev")).to_be_hidden()
        expect(page.locator("#next")).to_have_text("next 2 →")
        expect(page.locator("#page-of")).to_have_text("ranks 1–2 of 4")
        expect(page).to_have_title(f"{prompt} – taskspace")
        page.locator("#next").click()
        expect(page).to_have_url(re.compile(r"offset=2"))
        expect(status).to_have_text("models 3–4 of 4 ranked for 1 prompt")
        expect(page).to_have_title(f"{prompt} (from rank 3) – taskspace")  # the pages' history entries differ
        shows(3, every[2:])
        expect(page.locator("#next")).to_be_hidden()  # the last page
        assert page.evaluate("document.activeElement.id") == "results"  # the focus at the new page's results
        page.reload()  # the page is in the URL
        expect(status).to_have_text("models 3–4 of 4 ranked for 1 prompt")
        shows(3, every[2:])
        page.go_back()  # the history entry before "next": the first page
        expect(page).not_to_have_url(re.compile(r"offset="))
        shows(1, every[:2])
        page.go_forward()
        shows(3, every[2:])
        page.locator("#prev").click()  # back to the first page: no offset in its URL
        expect(page).not_to_have_url(re.compile(r"offset="))
        shows(1, every[:2])
        expect(page.locator("#prev")).to_be_hidden()

        # past the last model: said, with the last page a click away
        page.goto(page_server + "/?" + urlencode({"q": prompt, "k": 2, "offset": 10}))
        expect(status).to_have_text("no model past the best 10: the ranking holds 4 models for 1 prompt")
        expect(rows).to_have_count(0)
        expect(page.locator("#next")).to_be_hidden()
        expect(page.locator("#prev")).to_have_text("← last page")
        page.locator("#prev").click()
        expect(page).to_have_url(re.compile(r"offset=2"))
        shows(3, every[2:])

        # an offset that is no multiple of k: "previous" goes to the first page, not before it
        page.goto(page_server + "/?" + urlencode({"q": prompt, "k": 3, "offset": 1}))
        shows(2, every[1:])
        page.locator("#prev").click()
        shows(1, every[:3])

        # with a filter (licenses mit: org/m1 and lab/m3) and for a benchmark query, the pages are the API's
        mit = ranked(prompts=[prompt], filters={"licenses": ["mit"]})
        page.goto(page_server + "/?" + urlencode({"q": prompt, "k": 1, "license": "mit"}))
        expect(status).to_have_text("models 1–1 of 2 ranked for 1 prompt")
        shows(1, mit[:1])
        page.locator("#next").click()
        shows(2, mit[1:])
        expect(page.locator("#next")).to_be_hidden()
        beta = ranked(benchmark="beta")
        page.goto(page_server + "/?" + urlencode({"benchmark": "beta", "k": 3}))
        shows(1, beta[:3])
        page.locator("#next").click()
        expect(page).to_have_url(re.compile(r"offset=3"))
        shows(4, beta[3:])
        expect(page.locator("#benchmark")).to_have_value("beta")

        # one page (k >= the ranking) and compare mode: no pager
        page.goto(page_server + "/?" + urlencode({"q": prompt}))
        expect(status).to_have_text("4 models ranked for 1 prompt")
        expect(page.locator("#pager")).to_be_hidden()
        page.goto(page_server + "/?" + urlencode({"q": prompt, "k": 1, "models": "org/m1, lab/m3"}))
        expect(rows).to_have_count(2)
        expect(page.locator("#pager")).to_be_hidden()

        # a new search from the form starts at its first page
        page.goto(page_server + "/?" + urlencode({"q": prompt, "k": 2, "offset": 2}))
        shows(3, every[2:])
        page.click("#go")
        expect(page).not_to_have_url(re.compile(r"offset="))
        shows(1, every[:2])
        assert failures == []


def test_the_page_writes_counts_past_a_thousand_with_separators(tmp_path, encoder):
    """Every count the page shows (the status's ranks and total, the pager's, each result's rank, the tab's title, a
    model page's prompts measured, its benchmarks' n and its strengths' ranks, the benchmark picker's prompts) is
    written as the CLI's tables write it (``indexer.cli_find.count``): "1,002", not "1002". Before, "models 1–10 of
    32823 ranked" on a home of 32,823 models."""
    from playwright.sync_api import expect

    from indexer.cli_find import count
    from servehelpers import build_thousands_index

    _need_browser()
    build_thousands_index(tmp_path, encoder)
    prompt = "What is item 3 of alpha about chemistry?"
    with ThreadServer(create_app(Service(encoder=encoder))) as url, chromium_page() as (page, failures):
        page.goto(url + "/?" + urlencode({"q": prompt, "k": 2, "offset": 999}))
        expect(page.locator("#status")).to_have_text("models 1,000–1,001 of 1,002 ranked for 1 prompt")
        expect(page.locator("#ranked > li.result .rank")).to_have_text(["1,000.", "1,001."])
        expect(page.locator("#page-of")).to_have_text("ranks 1,000–1,001 of 1,002")
        expect(page).to_have_title(f"{prompt} (from rank 1,000) – taskspace")
        expect(page.locator("#benchmark option", has_text="big")).to_have_text("big (1,100 prompts)")
        page.goto(url + "/?" + urlencode({"q": prompt, "k": 2, "offset": 5000}))
        expect(page.locator("#status")).to_have_text(
            "no model past the best 5,000: the ranking holds 1,002 models for 1 prompt")
        page.goto(url + "/?model=org%2Fm0000")
        expect(page.locator("#model-meta")).to_contain_text("1,112 prompts measured")
        expect(page.locator("#observed tbody tr", has_text="big").locator("td").nth(2)).to_have_text("1,100")
        expect(page.locator("#strengths tbody tr").first.locator("td").nth(4)).to_have_text(re.compile(r"^\d+ of 1,002$"))
        numbers = [0, 7, 999, 1000, 32823, 1234567]
        assert page.evaluate("(ns) => ns.map(count)", numbers) == [count(n) for n in numbers]
        assert failures == []


def test_the_page_writes_one_of_a_count_in_the_singular(page_server):
    """A count of one is written with its noun in the singular, any other in the plural, on the whole page: the
    status ("1 model ranked for 1 prompt"), a result's details ("measured on 1 nearby prompt"), its evidence
    ("measured on 1 indexed prompt near this query"), a model page's "1 prompt measured" and a benchmark picker's
    "(1 prompt)". Before, "1 model(s) ranked for 1 prompt(s)", "measured on 2 nearby prompt(s)", "1 prompts
    measured" (found by a first-time user's walk through the page)."""
    import json

    from playwright.sync_api import expect

    def one_near(route):  # the real answer, its first result measured on one nearby prompt with no outcomes stored
        data = route.fetch().json()
        data["results"] = data["results"][:1]
        data["results"][0]["coverage"].update(measured_near=True, near=1, benchmarks=["alpha"])
        data["results"][0]["evidence"]["prompts"] = []
        route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

    def one_prompt(route):  # a model page of a model measured on one prompt; a benchmark of one prompt
        data = route.fetch().json()
        if "n_prompts" in data:
            data["n_prompts"] = 1
        else:
            data["benchmarks"][0]["prompts"] = 1
        route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

    with chromium_page() as (page, failures):
        status = page.locator("#status")
        page.goto(page_server + "/?q=What+is+item+3+of+alpha%3F")
        expect(status).to_have_text("4 models ranked for 1 prompt")
        expect(page.locator("#ranked .meta").first).to_contain_text("nearby prompts (")
        page.route("**/v1/find", one_near)
        page.route("**/v1/benchmarks", one_prompt)
        page.goto(page_server + "/?q=What+is+item+3+of+beta%3F")
        expect(status).to_have_text("1 model ranked for 1 prompt")
        expect(page.locator("#ranked .meta").first).to_contain_text("measured on 1 nearby prompt (alpha)")
        page.locator("#ranked details.evidence summary").first.click()
        expect(page.locator("#ranked details.evidence").first).to_contain_text(
            "measured on 1 indexed prompt near this query;")
        expect(page.locator("#benchmark option").nth(1)).to_have_text("alpha (1 prompt)")
        page.route("**/v1/models/org/m1", one_prompt)
        page.goto(page_server + "/?model=org%2Fm1")
        expect(page.locator("#model-meta")).to_contain_text(" · 1 prompt measured")
        assert "(s)" not in page.locator("body").inner_text()
        assert failures == []


def test_a_result_not_measured_near_the_query_says_so_once(page_server):
    """A result not measured near the query (a bread recipe, far from every indexed question) says so once, by its
    badge "not measured near this query"; its details line says its size and license, not also "measured on 0 nearby
    prompts". A benchmark's answer likewise: "not measured on alpha", once. Before, the badge and "measured on 0
    nearby prompt(s)" in the details line (found by a first-time user's walk through the page)."""
    import json

    from playwright.sync_api import expect

    def unmeasured(route):  # the real answer, its first result not measured on the benchmark
        data = route.fetch().json()
        data["results"][0]["coverage"].update(measured_near=False, near=0, benchmarks=[])
        route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

    with chromium_page() as (page, failures):
        page.goto(page_server + "/?q=Give+me+a+recipe+for+sourdough+bread+with+a+crisp+crust")
        results = page.locator("#ranked > li.result")
        expect(results.locator(".badge.far")).to_have_count(4)
        expect(results.first.locator(".badge.far")).to_have_text("not measured near this query")
        metas = results.locator("> p.meta").all_inner_texts()
        assert len(metas) == 4 and not any("measured" in m for m in metas), metas
        page.route("**/v1/find", unmeasured)
        page.goto(page_server + "/?benchmark=alpha")
        expect(results.first.locator(".badge.far")).to_have_text("not measured on alpha")
        first, second = results.locator("> p.meta").all_inner_texts()[:2]
        assert "measured on" not in first, first
        assert "of the alpha prompts nearest the benchmark's mean" in second, second
        assert failures == []


def test_the_filters_and_knobs_group_has_a_name(page_server):
    """The "Filters and knobs" panel (a details element, role group) is named by its summary, so a screen reader says
    "Filters and knobs, group", open or closed; before, it had no accessible name, "group" alone (found by a first-time
    user's walk through the page)."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        page.goto(page_server + "/")
        group = page.get_by_role("group", name="Filters and knobs", exact=True)
        expect(group).to_have_count(1)
        expect(group).to_have_accessible_name("Filters and knobs")
        page.click("#options summary")
        expect(page.locator("#licenses")).to_be_visible()
        expect(group).to_have_accessible_name("Filters and knobs")
        assert group.evaluate("(e) => e.id") == "options"
        assert failures == []


#: in the page: where a cell's text wraps, each break as "the character before|the one after" (a character whose box
#: starts lower than the one before it starts a line)
LINE_BREAKS = """(cell) => {
  const breaks = [], range = document.createRange(), walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  let top = null, before = "";
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    for (let i = 0; i < n.length; i++) {
      range.setStart(n, i);
      range.setEnd(n, i + 1);
      const box = range.getClientRects()[0];
      if (!box) continue;
      if (top !== null && box.top > top + 2) breaks.push(before + "|" + n.data[i]);
      top = box.top;
      before = n.data[i];
    }
  }
  return breaks;
}"""


@pytest.mark.parametrize("width", [360, 1280])
def test_a_model_pages_benchmark_names_break_after_a_slash_or_underscore_not_mid_word(page_server, width):
    """On a model page at 360 px (a phone) a benchmark's name wraps after a "/" or "_" ("mmlu_pro/" above
    "philosophy"), never inside a word that fits the column; at 1280 px "mmlu_pro/philosophy" stands on one line. Before, the cell
    broke anywhere, "mmlu_pro/phil" above "osophy" (found by a first-time user's walk through the page at 360 px)."""
    import json

    from playwright.sync_api import expect

    names = ["mmlu_pro/philosophy", "leaderboard_bbh_logical_deduction_seven_objects", "mmlu_pro/computer_science",
             "helm_lite/legalbench_abercrombie"]

    def renamed(route):  # the real answer, its two benchmarks renamed and two more added
        data = route.fetch().json()
        strengths = (data["strengths"] * 2)[:4]
        data["strengths"] = [dict(s, benchmark=n) for s, n in zip(strengths, names)]
        observed = (data["benchmarks"] * 2)[:4]
        data["benchmarks"] = [dict(b, name=n) for b, n in zip(observed, names)]
        route.fulfill(status=200, content_type="application/json", body=json.dumps(data))

    with chromium_page() as (page, failures):
        page.set_viewport_size({"width": width, "height": 740})
        page.route("**/v1/models/org/m1", renamed)
        page.goto(page_server + "/?model=org%2Fm1")
        expect(page.locator("#observed tbody tr")).to_have_count(4)
        for table in ("#strengths", "#observed"):
            cells = page.locator(f"{table} tbody td:first-child")
            assert [c.split(" (")[0] for c in cells.all_inner_texts()] == names  # the names as they are, whole
            breaks = [cell.evaluate(LINE_BREAKS) for cell in cells.all()]
            assert all(b[0] in "/_ " for cell in breaks for b in cell), (table, breaks)
            if width > 1000:  # the names of a usual length stand on one line
                assert [breaks[0], breaks[2]] == [[], []], (table, breaks)
            else:
                assert any(breaks), (table, breaks)  # the long names do wrap at 360 px
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        for box in page.locator("#model .scroll").all():
            assert box.evaluate("(e) => e.scrollWidth <= e.clientWidth"), box.evaluate(
                "(e) => [e.scrollWidth, e.clientWidth]")
        assert failures == []


def test_an_unknown_model_or_benchmark_is_said_with_what_the_page_offers(page_server):
    """An unknown model or benchmark on the page is said with what to do there: "(a search ranks them: each result
    links to its model page)" on a model page, "(empty the box to rank every model ...)" for the compare box, the
    benchmark pickers for a benchmark, the search page's choices for a benchmark's name opened as a model's page; the
    server's suggestions ("did you mean org/m1?") are kept. The HTTP API's own messages stay as they are, for its
    clients. Before, the page told its user "(GET /v1/models lists them)", "GET /v1/models?benchmark=beta lists the
    models measured on it, POST /v1/find with ..." (found by a first-time user's walk through the page,
    /?model=nosuch)."""
    from playwright.sync_api import expect

    with chromium_page() as (page, failures):
        meta, status = page.locator("#model-meta"), page.locator("#status")
        page.goto(page_server + "/?model=nosuch")
        expect(meta).to_have_text("error: unknown model 'nosuch' (a search ranks them: each result links to its model "
                                  "page)")
        page.goto(page_server + "/?model=org%2Fm")
        expect(meta).to_contain_text("error: unknown model 'org/m'; did you mean ")
        expect(meta).to_contain_text("(a search ranks them: each result links to its model page)")
        page.goto(page_server + "/?model=beta")
        expect(meta).to_have_text("error: unknown model 'beta': beta is a benchmark; \"…or a benchmark\" on the "
                                  "search page ranks the models for it, \"Measured on benchmark\" under \"Filters and "
                                  "knobs\" keeps those measured on it")
        page.goto(page_server + "/?q=What+is+item+3%3F&models=nosuchmodel")
        expect(status).to_have_text("error: compare exactly these models: unknown model 'nosuchmodel' (empty the box to "
                                    "rank every model: the results name them)")
        # (an unknown benchmark, picked or as a filter: test_an_error_names_a_filter_by_the_forms_words)
        for text in (meta.inner_text(), status.inner_text()):
            assert "/v1/" not in text, text
        assert failures == []
