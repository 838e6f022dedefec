"""One question, one answer on every surface: the Python library (``indexer.find_models``, ``model_detail``,
``models_page``, ``list_benchmarks``), the HTTP API (``POST /v1/find``, ``GET /v1/models[/{id}]``,
``/v1/benchmarks``, through FastAPI's TestClient) and the CLI's ``--json`` (``taskspace search``, ``models``,
``model``, ``benchmarks``, run in this process), compared field by field on one small index (servehelpers'
:func:`build_index`, built once for the module).

An answer is the same JSON on the three. An error is the library's: the HTTP status its class maps to
(:data:`indexer.serve._STATUS`: 422 for bad input, 404 for an unknown name) with ``field`` its ``item`` and its
message (the listing a message points to named by its endpoint, :func:`indexer.serve._http_hints`), and the CLI's exit
code its ``exit_code`` with its message, except where a surface documents its own rule: the HTTP limits
(docs/SERVING.md, ``LIMITS``: k <= 100, a prompt of 4,000 characters, evidence <= 20) and the CLI's usage errors
(a value the CLI checks while it parses its options: exit 2 naming the option, README "A usage error ...")."""

from __future__ import annotations

import copy
import json
import re

import pytest
from fastapi.testclient import TestClient

from helpers import run_cli
from indexer.serve import LIMITS, Service, _http_hints, _named_as_sent, _STATUS, create_app
from servehelpers import build_index

PROMPT = "What is item 3 of alpha about chemistry?"
OTHER = "A question on poetry and its meter"


@pytest.fixture(scope="module")
def home(tmp_path_factory, encoder):
    """The index every test of this module reads (nothing here writes it): built once."""
    from conftest import _SESSION_CACHE
    from indexer.config import reset_settings

    root = tmp_path_factory.mktemp("surfaces")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TASKSPACE_HOME", str(root / "home"))
        mp.setenv("TASKSPACE_CACHE_DIR", str(_SESSION_CACHE))
        reset_settings()
        build_index(root, encoder)
    reset_settings()
    return root / "home"


@pytest.fixture
def client(home, encoder, monkeypatch):
    """The HTTP app on the library's shared stores (the embedded index is one holder per process: the library's calls
    and the in-process CLI open the same ones)."""
    from indexer.config import reset_settings
    from indexer.query import _shared_stores

    monkeypatch.setenv("TASKSPACE_HOME", str(home))
    reset_settings()
    store, vectors = _shared_stores()
    with TestClient(create_app(Service(store=store, vectors=vectors, encoder=encoder)),
                    raise_server_exceptions=False) as c:
        yield c


def cli_args(body: dict) -> list[str]:
    """``taskspace search`` arguments asking what the ``/v1/find`` body asks."""
    prompts = body.get("prompts", body.get("prompt"))
    args = ["search", *([prompts] if isinstance(prompts, str) else prompts or [])]
    for field, option in (("benchmark", "-b"), ("k", "-k"), ("offset", "--offset"), ("rank", "--rank"),
                          ("prefer_smaller", "--prefer-smaller"), ("evidence", "--evidence"), ("space", "--space")):
        if field in body:
            args += [option, str(body[field])]
    for model in body.get("models") or []:
        args += ["-m", model]
    f = body.get("filters") or {}
    for lic in f.get("licenses") or []:
        args += ["--license", lic]
    for field, option in (("min_params", "--min-params"), ("max_params", "--max-params"),
                          ("pipeline_tag", "--pipeline-tag"), ("min_evidence", "--min-evidence"),
                          ("benchmark", "--measured-on")):
        if field in f:
            args += [option, str(f[field])]
    args += ["--open-only"] * bool(f.get("open_only")) + ["--exclude-gated"] * bool(f.get("exclude_gated"))
    return [*args, "--json"]


def library(call, *args, **kwargs):
    """("ok", the answer as JSON reads it) or ("error", the exception)."""
    try:
        return "ok", json.loads(json.dumps(call(*args, **kwargs)))
    except Exception as exc:  # the error is what is compared
        return "error", exc


def status_of(exc) -> int:
    return next(_STATUS[c.__name__] for c in type(exc).__mro__ if c.__name__ in _STATUS)


def cli_json(capsys, *args) -> tuple[int, dict]:
    """(exit code, the JSON answer or the JSON error line) of ``taskspace ARGS --json`` in this process."""
    code, out, err = run_cli(capsys, *args)
    return code, json.loads(out if code == 0 else err.strip().splitlines()[-1])


def _in_cli_words(message: str) -> str:
    """The library's error ``message`` as a CLI command words it (:func:`indexer.find.lister`): a Python caller is told
    the call that lists or ranks (``indexer.list_models()``), a command the command (```taskspace models```)."""
    import ast
    import shlex

    message = re.sub(r"indexer\.list_(model|benchmark)s\(\) lists them", r"`taskspace \1s` lists them", message)
    return re.sub(r"indexer\.(list_models|find_models)\(benchmark=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\)",
                  lambda m: f"`taskspace {'models' if m[1] == 'list_models' else 'search'} -b "
                            f"{shlex.quote(ast.literal_eval(m[2]))}`", message)


def same_everywhere(got_lib, r, cli: tuple[int, dict] | None, *, cli_usage: str | None = None,
                    http_limit: str | None = None, key: str | None = None, http_error=None) -> None:
    """The HTTP answer ``r`` and the CLI's ``cli`` are the library's ``got_lib`` (:func:`library`), as the module
    docstring says. ``cli_usage``: the CLI refuses the value as a usage error naming this option (or argument);
    ``http_limit``: the HTTP API refuses it as over this documented limit, naming the field; ``key``: the HTTP answer's
    key holding the library's answer (``{"benchmarks": [...]}``); ``http_error``: the library's error as the HTTP API
    names it (a filter as the query parameter that set it)."""
    kind, answer = got_lib
    if http_limit is not None:
        assert r.status_code == 422 and r.json()["error"]["code"] == "limit_exceeded", r.text
        assert r.json()["error"]["field"] == http_limit, r.text
    elif kind == "ok":
        assert r.status_code == 200, r.text
        assert (r.json()[key] if key else r.json()) == answer
    else:
        sent = http_error or answer
        if type(sent).__name__ == "UnknownSpaceError":  # the API names its field `space`, the library `space=`
            sent = copy.copy(sent)
            sent.args = (str(sent).replace("space=", "space ", 1),)
        assert r.status_code == status_of(sent), (r.text, repr(sent))
        assert r.json()["error"] == {"code": r.json()["error"]["code"], "message": _http_hints(str(sent)),
                                     "field": sent.item}, (r.json(), str(sent))
    if cli is None:
        return
    code, said = cli
    if cli_usage is not None:
        assert code == 2 and re.search(rf"'{re.escape(cli_usage)}'|{re.escape(cli_usage)}\b", said["error"]), said
        assert said["exit"] == 2, said
    elif kind == "ok":
        assert code == 0 and said == answer, said
    else:
        assert (code, said) == (answer.exit_code, {"error": _in_cli_words(str(answer)), "exit": answer.exit_code})


#: (id, POST /v1/find body, how a surface documents answering it otherwise: {"cli": OPTION} a CLI usage error naming
#: OPTION, {"http": FIELD} an HTTP limit naming FIELD, {"cli": None} a query the CLI cannot write)
FIND = [
    ("prompt", {"prompts": [PROMPT]}, {}),
    ("prompt-as-string", {"prompt": PROMPT}, {"cli": None}),
    ("prompts", {"prompts": [PROMPT, OTHER]}, {}),
    ("duplicate-prompts", {"prompts": [PROMPT, PROMPT]}, {}),
    ("benchmark", {"benchmark": "alpha"}, {}),
    ("benchmark-spaces-around", {"benchmark": " beta "}, {}),
    ("license", {"prompts": [PROMPT], "filters": {"licenses": ["mit"]}}, {}),
    ("licenses-in-one", {"prompts": [PROMPT], "filters": {"licenses": ["MIT,apache-2.0"]}}, {}),
    ("size", {"prompts": [PROMPT], "filters": {"min_params": "1B", "max_params": "8B"}}, {}),
    ("open-only", {"prompts": [PROMPT], "filters": {"open_only": True}}, {}),
    ("measured-on", {"benchmark": "beta", "filters": {"benchmark": "beta", "min_evidence": 5}}, {}),
    ("compare", {"prompts": [PROMPT], "models": ["plainname", "ORG/M1", "org/m1"]}, {}),
    ("compare-filtered", {"prompts": [PROMPT], "models": ["plainname", "org/m2"], "filters": {"licenses": ["mit"]}}, {}),
    ("top-k", {"prompts": [PROMPT], "k": 2}, {}),
    ("page", {"prompts": [PROMPT], "k": 2, "offset": 2}, {}),
    ("past-the-last", {"prompts": [PROMPT], "offset": 50}, {}),
    ("lcb", {"prompts": [PROMPT, OTHER], "rank": "lcb", "k": 3}, {}),
    ("prefer-smaller", {"benchmark": "alpha", "prefer_smaller": 0.1}, {}),
    ("no-evidence", {"prompts": [PROMPT], "evidence": 0}, {}),
    ("unicode", {"prompts": ["Quelle est la dérivée de x³·sin(x) ? 微分してください 😀"]}, {}),
    ("whitespace-around", {"prompts": ["  " + PROMPT + " \n"]}, {}),
    ("long-prompt", {"prompts": ["chemistry " * 2000]}, {"http": "prompts[0]"}),
    ("k-over-the-http-limit", {"prompts": [PROMPT], "k": LIMITS["max_k"] + 1}, {"http": "k"}),
    ("evidence-over-the-http-limit", {"prompts": [PROMPT], "evidence": LIMITS["max_evidence"] + 1}, {"http": "evidence"}),
    # bad input
    ("empty-prompt", {"prompts": [""]}, {"cli": "PROMPT"}),
    ("blank-prompt", {"prompts": [PROMPT, " \t"]}, {"cli": "PROMPT"}),
    ("invisible-prompt", {"prompts": ["\u200b"]}, {"cli": "PROMPT"}),
    ("unknown-benchmark", {"benchmark": "alfa"}, {}),
    ("blank-benchmark", {"benchmark": " "}, {"cli": "--benchmark"}),
    ("invisible-benchmark", {"benchmark": "\u200b"}, {"cli": "--benchmark"}),
    ("prompts-and-benchmark", {"prompts": [PROMPT], "benchmark": "alpha"}, {"cli": "--benchmark"}),
    ("k-zero", {"prompts": [PROMPT], "k": 0}, {"cli": "--top"}),
    ("k-negative", {"prompts": [PROMPT], "k": -3}, {"cli": "--top"}),
    ("k-huge", {"prompts": [PROMPT], "k": 10**12}, {"cli": "--top", "http": "k"}),
    ("offset-negative", {"prompts": [PROMPT], "offset": -1}, {"cli": "--offset"}),
    ("offset-in-compare-mode", {"prompts": [PROMPT], "models": ["org/m1"], "offset": 1}, {"cli": "--offset"}),
    ("unknown-rank", {"prompts": [PROMPT], "rank": "best"}, {"cli": "--rank"}),
    ("prefer-smaller-negative", {"prompts": [PROMPT], "prefer_smaller": -1}, {"cli": "--prefer-smaller"}),
    ("unknown-model", {"prompts": [PROMPT], "models": ["org/m1", "org/nope"]}, {}),
    ("blank-model", {"prompts": [PROMPT], "models": [" "]}, {"cli": "--model"}),
    ("invisible-model", {"prompts": [PROMPT], "models": ["org/m1", "\u200b"]}, {"cli": "--model"}),
    ("bad-size", {"prompts": [PROMPT], "filters": {"max_params": "eight"}}, {"cli": "--max-params"}),
    ("sizes-crossed", {"prompts": [PROMPT], "filters": {"min_params": "8B", "max_params": "1B"}}, {"cli": "--min-params"}),
    ("unknown-measured-on", {"prompts": [PROMPT], "filters": {"benchmark": "gamma"}}, {}),
    ("invisible-measured-on", {"prompts": [PROMPT], "filters": {"benchmark": "\u200b"}}, {"cli": "--measured-on"}),
    ("invisible-pipeline-tag", {"prompts": [PROMPT], "filters": {"pipeline_tag": "\u200b"}}, {"cli": "--pipeline-tag"}),
    ("negative-min-evidence", {"prompts": [PROMPT], "filters": {"min_evidence": -1}}, {"cli": "--min-evidence"}),
    ("unknown-space", {"prompts": [PROMPT], "space": "nope"}, {"cli": "--space"}),
]


@pytest.mark.parametrize("body,documented", [pytest.param(b, d, id=i) for i, b, d in FIND])
def test_a_find_query_gets_the_same_answer_from_the_library_http_and_the_cli(client, capsys, body, documented):
    from indexer import find_models

    args = {("prompts" if k == "prompt" else k): v for k, v in body.items()}
    got = library(lambda: find_models(**args).to_dict())
    r = client.post("/v1/find", json=body)
    cli = cli_json(capsys, *cli_args(body)) if documented.get("cli", "") is not None else None
    if got[0] == "ok" and body.get("k", 10) <= 1000 and "http" in documented:
        assert cli is not None and cli[1] == got[1]  # the CLI and the library take what the HTTP limit refuses
        cli = None
    same_everywhere(got, r, cli, cli_usage=documented.get("cli"),
                    http_limit=documented.get("http") if got[0] == "ok" or documented.get("http") == "k" else None)


def test_every_surface_asks_with_the_same_defaults(client, capsys):
    """A query giving nothing but the task is asked with find_models' defaults on every surface (k, offset, rank,
    prefer_smaller, evidence), the page's form included (indexer/web/app.js, its form's defaults)."""
    import inspect

    from indexer import find_models
    from indexer.serve import WEB

    defaults = {n: p.default for n, p in inspect.signature(find_models).parameters.items()
                if n in ("k", "offset", "rank", "prefer_smaller", "evidence")}
    want = {"k": defaults["k"], "offset": defaults["offset"], "rank": defaults["rank"],
            "prefer_smaller": defaults["prefer_smaller"]}
    http = client.post("/v1/find", json={"prompts": [PROMPT]}).json()
    code, cli = cli_json(capsys, "search", PROMPT, "--json")
    assert code == 0
    for answer in (http, cli, find_models(PROMPT).to_dict()):
        assert {k: answer["query"][k] for k in want} == want
        assert all(len(r["evidence"]["prompts"]) <= defaults["evidence"] for r in answer["results"])
    assert http == cli
    js = (WEB / "app.js").read_text()
    form = re.search(r"\{ k: \"(\d+)\", prefer_smaller: \"([\d.]+)\", rank: \"(\w+)\" \}", js)
    assert form and (int(form[1]), float(form[2]), form[3]) == (defaults["k"], defaults["prefer_smaller"],
                                                                 defaults["rank"])
    assert f'number(p, "k") : {defaults["k"]};' in js  # the body a URL without k sends
    assert not re.search(r"\bbody\.evidence\b", js)  # the page sends none: the API's default


@pytest.mark.parametrize("model_id,cli_usage", [
    ("org/m1", None), ("ORG/M1", None), ("hf://org/m1", None), ("https://huggingface.co/org/m1", None),
    ("plainname", None), (" lab/m3 ", None), ("org/nope", None), ("alpha", None), ("\u200b", "ID"), ("a\x00b", "ID"),
])
def test_a_model_page_is_the_same_on_every_surface(client, capsys, model_id, cli_usage):
    from urllib.parse import quote

    from indexer import model_detail

    got = library(model_detail, model_id)
    r = client.get("/v1/models/" + quote(model_id, safe="/:"))
    same_everywhere(got, r, cli_json(capsys, "model", model_id, "--json"), cli_usage=cli_usage)


@pytest.mark.parametrize("params,args,cli_usage", [
    ({"limit": 50}, ["--limit", "50"], None),
    ({"limit": 2, "offset": 1}, ["--limit", "2", "--offset", "1"], None),
    ({"benchmark": "beta", "limit": 50}, ["-b", "beta", "--limit", "50"], None),
    ({"license": "mit", "max_params": "8B", "limit": 50}, ["--license", "mit", "--max-params", "8B", "--limit", "50"], None),
    ({"open_only": "true", "min_evidence": 10, "limit": 50}, ["--open-only", "--min-evidence", "10", "--limit", "50"], None),
    ({"license": " MIT,apache-2.0", "limit": 50}, ["--license", " MIT,apache-2.0", "--limit", "50"], None),
    ({"offset": 9, "limit": 50}, ["--offset", "9", "--limit", "50"], None),
    ({"benchmark": "gamma", "limit": 50}, ["-b", "gamma", "--limit", "50"], None),
    ({"benchmark": "\u200b", "limit": 50}, ["-b", "\u200b", "--limit", "50"], "--benchmark"),
    ({"pipeline_tag": "\u200b", "limit": 50}, ["--pipeline-tag", "\u200b", "--limit", "50"], "--pipeline-tag"),
])
def test_a_model_list_is_the_same_on_every_surface(client, capsys, params, args, cli_usage):
    from indexer.browse import FILTER_PARAMS, models_page

    kwargs = {k: v for k, v in params.items() if k in ("benchmark", "offset", "limit")}
    filters = {FILTER_PARAMS[k]: v for k, v in params.items() if k in FILTER_PARAMS}
    if "open_only" in filters:
        filters["open_only"] = True
    if "licenses" in filters:
        filters["licenses"] = [filters["licenses"]]
    got = library(models_page, **kwargs, filters=filters or None)
    r = client.get("/v1/models", params=params)
    sent = None
    if got[0] == "error" and (got[1].item or "").startswith("filters."):  # named as the query parameter sent
        sent = copy.copy(got[1])
        _named_as_sent(sent, got[1].item, {f"filters.{v}": k for k, v in FILTER_PARAMS.items()}[got[1].item])
    same_everywhere(got, r, cli_json(capsys, "models", *args, "--json"), cli_usage=cli_usage, http_error=sent)


def test_the_benchmark_list_is_the_same_on_every_surface(client, capsys):
    from indexer import list_benchmarks

    same_everywhere(library(list_benchmarks), client.get("/v1/benchmarks"), cli_json(capsys, "benchmarks", "--json"),
                    key="benchmarks")


@pytest.mark.parametrize("field,value", [("benchmark", "\u200b"), ("models", ["\u200b"]), ("prompts", ["\ufeff"])])
def test_a_name_of_invisible_characters_alone_is_bad_input_whichever_field_names_it(client, field, value):
    """A benchmark, a model (compare mode, a model page) or a prompt holding only invisible characters (a zero-width
    space, a byte order mark) is refused as bad input naming its field (422), the same on each; before, a model of
    them was looked up, "unknown model '\\u200b'" (404), where a benchmark or a prompt of them was a 422."""
    from indexer import find_models, model_detail
    from indexer.errors import InputError

    r = client.post("/v1/find", json={"prompts": [PROMPT], **{field: value}} if field != "prompts" else {field: value})
    item = field if field == "benchmark" else f"{field}[0]"
    if field == "benchmark":
        r = client.post("/v1/find", json={field: value})
    assert r.status_code == 422 and r.json()["error"]["field"] == item, r.text
    assert "only invisible characters" in r.json()["error"]["message"], r.text
    with pytest.raises(InputError, match="only invisible characters") as got:
        model_detail("\u200b")
    assert got.value.item == "model"
    r = client.get("/v1/models/%E2%80%8B")
    assert r.status_code == 422 and r.json()["error"] == {"code": "invalid_input", "message": str(got.value),
                                                          "field": "model"}, r.text
    with pytest.raises(InputError, match="only invisible characters"):
        find_models(PROMPT, models=["org/m1", "\u200b"])


@pytest.mark.parametrize("bad", ["", " ", " , ", "\u200b"])
def test_a_license_naming_no_license_is_told_alike_by_the_library_and_the_api(client, bad):
    """A license filter entry naming no license (empty; blanks, commas or invisible characters alone) is one error in
    the library (`indexer.find_models(..., filters={"licenses": [...]})`) and on `POST /v1/find`: the same words, the
    entry named as each reader wrote it (`licenses[1]`), its value as each writes it (Python's repr, JSON). Before,
    `POST /v1/find` said "licenses[1] must be a license name such as mit (not blank, not commas alone), not \" \"" and
    the library "licenses[1] must be a non-empty license name, not ' '" (or "names no license" for commas)."""
    from indexer import find_models
    from indexer.errors import InputError

    with pytest.raises(InputError) as got:
        find_models(PROMPT, filters={"licenses": ["mit", bad]})
    r = client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"licenses": ["mit", bad]}})
    assert r.status_code == 422 and r.json()["error"]["field"] == got.value.item == "filters.licenses[1]", r.text
    said = str(got.value)
    assert said.startswith("licenses[1] names no license (") and said.endswith("); give a license name such as mit")
    sent = said.replace(repr(bad), json.dumps(bad, ensure_ascii=False))  # the value as JSON writes it
    assert r.json()["error"]["message"] == sent, (said, r.text)


@pytest.mark.parametrize("space", [" ", "\u200b", "\ufeff "])
def test_a_space_of_blanks_or_invisible_characters_alone_is_refused_alike_by_the_api_and_the_cli(client, capsys, space):
    """`space` holding only spaces or invisible characters names no space: the HTTP API refuses it as malformed
    (422 naming `space`) in the body and as a query parameter, and the CLI's `--space` as a usage error naming the option
    (exit 2), as each refuses a blank benchmark. Before, a zero-width space was looked up and answered 404 "space ''
    is not a known space" (a name the client never sent) where a space of spaces was a 422, and the CLI said
    "--space '' is not a known space" for either."""
    from urllib.parse import quote

    for r in (client.post("/v1/find", json={"prompts": [PROMPT], "space": space}),
              client.get("/v1/models?space=" + quote(space)), client.get("/v1/models/org/m1?space=" + quote(space))):
        assert r.status_code == 422 and r.json()["error"]["field"] == "space", r.text
        assert "''" not in r.json()["error"]["message"], r.text
        assert "GET /v1/spaces" in r.json()["error"]["message"], r.text  # the listing an HTTP client can reach
        assert "taskspace" not in r.json()["error"]["message"], r.text  # not a command it cannot run
    for args in (["search", PROMPT], ["models"], ["model", "org/m1"]):
        code, said = cli_json(capsys, *args, "--space", space, "--json")
        assert code == 2 and "Invalid value for '--space'" in said["error"], said


def test_a_blank_space_is_bad_input_in_the_library_and_a_usage_error_of_every_commands_space(client, capsys):
    """`space` of blanks or invisible characters alone names no space: the library refuses it as bad input naming
    `space` (an InputError: the HTTP API's 422), not as an unknown space whose message quoted a name nobody gave
    (`space='' is not a known space`, a NotFoundError: 404); each command's `--space` (and `spaces drop NAME`) as a usage
    error naming it."""
    from indexer import find_models, list_models, model_detail
    from indexer.errors import InputError

    for call in (lambda: find_models(PROMPT, space=" "), lambda: list_models(space="\u200b"),
                 lambda: model_detail("org/m1", space="\ufeff")):
        with pytest.raises(InputError) as got:
            call()
        assert got.value.item == "space" and "''" not in str(got.value), str(got.value)
        # what a Python caller can call (before: "`taskspace spaces` lists them")
        assert str(got.value).endswith("; indexer.spaces.describe_spaces(sql) lists them"), str(got.value)
    for args in (["reindex", "--space", " "], ["check", "--space", "\u200b"], ["spaces", "drop", " "],
                 ["publish", "org/name", "--space", "\u200b", "--dry-run", "out"], ["pull", "out", "--space", " "]):
        code, said = cli_json(capsys, *args, "--json")
        assert code == 2 and re.search(r"Invalid value for '(--space|NAME)'", said["error"]), (args, said)
