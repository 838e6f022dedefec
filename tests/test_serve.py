"""taskspace serve: every route, every input limit and the one error shape through the app's test client; once
over a real socket (uvicorn started here); the encoder loaded once at start-up; the in-process worker, and a
query during an index pass ranking by the previous complete index (never an error, never new SQL vectors with old
Qdrant points; a model whose results the pass already ingested says so, tests/test_find.py)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from indexer.serve import LIMITS, Service, create_app

from servehelpers import MODELS, ThreadServer, build_index

TASKSPACE = str(Path(sys.executable).parent / "taskspace")
PROMPT = "What is item 3 of alpha about chemistry?"


@pytest.fixture
def indexed(tmp_path, encoder):
    build_index(tmp_path, encoder)
    return tmp_path


@pytest.fixture
def client(indexed, encoder):
    svc = Service(encoder=encoder)
    with TestClient(create_app(svc), raise_server_exceptions=False) as c:
        c.service = svc
        yield c


def assert_error(r, status: int, code: str, field=None, *, says: str | None = None) -> dict:
    """The one error shape: {"error": {"code", "message", "field"}} (readyz adds its checks beside it)."""
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert set(body) - {"checks"} == {"error"} and set(body["error"]) == {"code", "message", "field"}, body
    err = body["error"]
    assert err["code"] == code and err["field"] == field, body
    assert isinstance(err["message"], str) and err["message"]
    assert "Traceback" not in r.text and 'File "' not in r.text
    if says is not None:
        assert says in err["message"], err["message"]
    return err


def _given(prop: dict) -> dict:
    """The schema of a body field as given, not null (each optional field is `anyOf` it and null)."""
    kinds = [v for v in prop.get("anyOf", [prop]) if v != {"type": "null"}]
    assert len(kinds) == 1, prop
    return kinds[0]


def test_find_answers_what_search_json_prints(client):
    from indexer.find import find_models

    svc = client.service
    for body in ({"prompts": [PROMPT], "k": 3}, {"prompt": PROMPT, "k": 3},
                 {"benchmark": "alpha", "k": 10, "filters": {"licenses": ["mit"]}, "evidence": 1},
                 {"prompts": [PROMPT, "A question on poetry"], "models": ["org/m1", "plainname"]},
                 {"benchmark": "beta", "prefer_smaller": 0.05, "rank": "lcb", "filters": {"max_params": "8B"}}):
        r = client.post("/v1/find", json=body)
        assert r.status_code == 200, r.text
        args = {("prompts" if k == "prompt" else k): v for k, v in body.items()}
        want = find_models(**args, store=svc.store, vectors=svc.vectors).to_dict()
        assert r.json() == json.loads(json.dumps(want))
    got = client.post("/v1/find", json={"benchmark": "alpha", "filters": {"licenses": ["mit"]}}).json()
    assert {x["model"] for x in got["results"]} == {"org/m1", "lab/m3"} and got["excluded"]["licenses"] == 2
    top = client.post("/v1/find", json={"prompts": [PROMPT], "k": 4}).json()
    assert [set(x) >= {"model", "hub_id", "api_only", "probability", "interval", "coverage", "evidence", "metadata"}
            for x in top["results"]] == [True] * 4
    assert top["query"]["kind"] == "prompt" and top["space"]["encoder"]


def test_every_static_file_answered_carries_a_content_type(client):
    """Every file `/static/{name}` answers carries its content-type (the page's css and js); a file of the page's folder
    that is no static file, its `index.html` (the page is `/`), is the 404 an unknown one is, naming `/`. Before,
    `/static/index.html` was answered 200 with no content-type at all, beside `x-content-type-options: nosniff`
    (found by asking /static/ for each file of indexer/web)."""
    from indexer.serve import WEB

    for path in sorted(WEB.iterdir()):
        r = client.get(f"/static/{path.name}")
        if r.status_code == 200:
            assert r.headers.get("content-type"), (path.name, dict(r.headers))
        else:
            assert_error(r, 404, "not_found", "name")
    assert_error(client.get("/static/index.html"), 404, "not_found", "name", says="the page is at /")


def test_if_none_match_star_or_a_listed_tag_answers_304_and_another_tag_200(client):
    """The page and its files answer a conditional GET as RFC 9110 says: `If-None-Match: *` (any current
    representation) and a list holding the tag (weak `W/"..."` too) are 304; other tags are 200 with the body. Before,
    the header was searched for the tag as a substring: `*` answered 200."""
    for path in ("/", "/static/app.js"):
        etag = client.get(path).headers["etag"]
        for header in ("*", etag, f'"x", {etag}', f"W/{etag}"):
            r = client.get(path, headers={"if-none-match": header})
            assert r.status_code == 304 and r.content == b"" and r.headers["etag"] == etag, (path, header)
        for header in ('"x"', f'"{etag.strip(chr(34))}x"', ""):
            r = client.get(path, headers={"if-none-match": header})
            assert r.status_code == 200 and r.content, (path, header)


def test_browse_routes_health_openapi_and_page(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.head("/healthz").status_code == 200 and client.head("/readyz").status_code == 200  # probes
    head = client.head("/")  # a probe of the page (was 405)
    assert head.status_code == 200 and head.headers["content-type"].startswith("text/html") and head.content == b""
    # HEAD of every GET route: its headers, no body (before: 405 but for /, /static/*, /healthz and /readyz)
    for path in ("/v1/benchmarks", "/v1/models?limit=2", "/v1/models/org/m1", "/openapi.json"):
        got, head = client.get(path), client.head(path)
        assert head.status_code == 200 and head.content == b"", (path, head.status_code, head.text)
        assert head.headers["content-length"] == str(len(got.content)), path
    assert client.head("/v1/models/org/nope").status_code == 404 and client.head("/v1/models?limit=0").status_code == 422
    assert_error(client.get("/v1/find"), 405, "method_not_allowed", says="method GET is not allowed")
    assert client.head("/v1/find").status_code == 405
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    assert set(ready.json()["checks"]) == {"sql", "vectors", "index", "encoder"}
    page1 = client.get("/v1/models", params={"limit": 3}).json()
    assert [m["model"] for m in page1["models"]] == sorted(MODELS)[:3] and page1["next_offset"] == 3
    page2 = client.get("/v1/models", params={"limit": 3, "offset": 3}).json()
    assert [m["model"] for m in page2["models"]] == sorted(MODELS)[3:] and page2["next_offset"] is None
    # how many the query lists over all its pages, as `taskspace models` titles a page ("3 of 5"); before, no count
    assert page1["total"] == page2["total"] == len(MODELS)
    mit = client.get("/v1/models", params=[("license", "mit"), ("max_params", "2B")]).json()
    assert [m["model"] for m in mit["models"]] == ["lab/m3"] and mit["total"] == 1
    # per filter that needs metadata, how many models lack it (plainname has neither), named as sent; as /v1/find says
    assert mit["missing_metadata"] == {"license": 1, "max_params": 1} and page1["missing_metadata"] == {}
    assert len(client.get("/v1/models", params={"benchmark": "beta"}).json()["models"]) == 4
    detail = client.get("/v1/models/org/m1").json()  # a Hub id has a slash: the route takes the rest of the path
    assert detail["model"] == "org/m1" and detail["hub_id"] == "org/m1"
    assert {b["name"]: b["n"] for b in detail["benchmarks"]} == {"alpha": 16, "beta": 12}
    assert detail["strengths"] and detail["metadata"]["license"] == "mit"
    assert client.get("/v1/models/plainname").json()["hub_id"] is None
    bench = client.get("/v1/benchmarks").json()["benchmarks"]
    assert {(b["name"], b["prompts"], b["models"]) for b in bench} == {("alpha", 16, 4), ("beta", 12, 4)}
    spec = client.get("/openapi.json").json()
    assert {"/v1/find", "/v1/models", "/v1/models/{model_id}", "/v1/benchmarks", "/healthz", "/readyz"} <= set(spec["paths"])
    body = spec["paths"]["/v1/find"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert {"prompts", "benchmark", "vector", "k", "filters", "models", "prefer_smaller", "rank", "evidence"} <= set(body["properties"])
    assert _given(body["properties"]["k"])["maximum"] == LIMITS["max_k"] and "FindFilters" in spec["components"]["schemas"]
    assert client.get("/docs").status_code == 404  # Swagger UI would load files from a CDN
    html = client.get("/")
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert client.get("/", headers={"if-none-match": html.headers["etag"]}).status_code == 304  # a browser's cache
    for name, kind in (("app.css", "text/css"), ("app.js", "text/javascript")):
        r = client.get(f"/static/{name}")
        assert r.status_code == 200 and r.headers["content-type"].startswith(kind)
        head = client.head(f"/static/{name}")  # a probe of the page's files, as of the page (was 405)
        assert head.status_code == 200 and head.content == b"" and head.headers["content-length"] == str(len(r.content))
    assert_error(client.get("/static/..%2Fserve.py"), 404, "not_found")
    # no request to any other host: no absolute URL in what the page loads, except the Hub links it writes
    for text in (html.text, client.get("/static/app.css").text, client.get("/static/app.js").text):
        for url in __import__("re").findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[a-z]{2,}", text):
            assert url.endswith("huggingface.co"), url


def test_the_openapi_body_schema_describes_what_the_server_accepts(client):
    """The /v1/find schema in /openapi.json against the server: before, `prompts` (a string or a list) carried one
    maxLength 32 over the union (no limit on a list in JSON Schema, and a wrong one on a string), `filters.licenses`
    and `models` said array only though the server (indexer.find.Filters, find_models) takes one name as a string,
    and `prefer_smaller` had no maximum though above 100 is refused; an empty list of prompts or models and a blank
    prompt or name were valid by the schema, refused by the server."""
    spec = client.get("/openapi.json").json()
    body = spec["paths"]["/v1/find"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]
    variants = lambda prop: {v.get("type"): v for v in prop["anyOf"]}  # noqa: E731
    prompts = variants(body["prompts"])
    assert prompts["array"]["maxItems"] == LIMITS["max_prompts"] and "maxLength" not in prompts["array"]
    assert prompts["array"]["items"]["maxLength"] == LIMITS["max_prompt_chars"]
    assert prompts["string"]["maxLength"] == LIMITS["max_prompt_chars"] and "maxLength" not in body["prompts"]
    assert variants(body["prompt"])["string"]["maxLength"] == LIMITS["max_prompt_chars"]
    models = variants(body["models"])
    assert models["array"]["maxItems"] == LIMITS["max_models"] and "string" in models
    assert _given(body["prefer_smaller"])["maximum"] == 100 and _given(body["prefer_smaller"])["minimum"] == 0
    licenses = variants(spec["components"]["schemas"]["FindFilters"]["properties"]["licenses"])
    assert set(licenses) == {"array", "string", "null"}
    # what the schema now says, the server does
    one = client.post("/v1/find", json={"benchmark": "alpha", "filters": {"licenses": "mit"}, "models": "org/m1"})
    listed = client.post("/v1/find", json={"benchmark": "alpha", "filters": {"licenses": ["mit"]}, "models": ["org/m1"]})
    assert one.status_code == 200 and one.json()["results"] == listed.json()["results"]
    assert [r["model"] for r in one.json()["results"]] == ["org/m1"]
    long = "x" * (LIMITS["max_prompt_chars"] + 1)
    assert_error(client.post("/v1/find", json={"prompts": long}), 422, "limit_exceeded", "prompts")
    assert client.post("/v1/find", json={"prompts": "x" * 40, "k": 1}).status_code == 200  # > 32 characters
    assert_error(client.post("/v1/find", json={"prompts": ["x"], "prefer_smaller": 101}), 422, "invalid_input",
                 "prefer_smaller")
    # what the server refuses as empty or blank, the schema refuses too (before, it let each through to a 422), and
    # what it answers the schema takes
    from jsonschema import Draft202012Validator

    schema = spec["paths"]["/v1/find"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    valid = Draft202012Validator({**schema, "components": spec["components"]}).is_valid
    for body in ({"prompts": []}, {"prompts": ["  "]}, {"prompts": [PROMPT, ""]}, {"prompts": " "}, {"prompt": ""},
                 {"benchmark": " "}, {"prompts": [PROMPT], "models": []}, {"prompts": [PROMPT], "models": [""]},
                 {"prompts": [PROMPT], "models": " "}, {"prompts": [PROMPT], "filters": {"licenses": [" "]}},
                 {"prompts": [PROMPT], "filters": {"pipeline_tag": ""}}, {"prompts": [PROMPT], "filters": {"benchmark": ""}}):
        assert client.post("/v1/find", json=body).status_code == 422, body
        assert not valid(body), body
    for body in ({"prompts": [PROMPT]}, {"prompt": " x "}, {"benchmark": "alpha", "models": "org/m1"},
                 {"prompts": PROMPT, "filters": {"licenses": "mit", "benchmark": "beta", "pipeline_tag": "x"}}):
        assert client.post("/v1/find", json=body).status_code == 200, body
        assert valid(body), body


def test_the_openapi_schema_of_the_model_list_gives_the_page_limit(client):
    """`GET /v1/models`' `limit` in /openapi.json says its maximum (`max_page`, 500), which the server enforces (a
    `limit_exceeded` 422 above it); before, only `minimum: 1`, so a client built from the schema could send 1000."""
    spec = client.get("/openapi.json").json()
    params = {p["name"]: p["schema"] for p in spec["paths"]["/v1/models"]["get"]["parameters"]}
    assert params["limit"]["maximum"] == LIMITS["max_page"] and params["limit"]["minimum"] == 1
    assert client.get("/v1/models", params={"limit": LIMITS["max_page"]}).status_code == 200
    assert_error(client.get("/v1/models", params={"limit": LIMITS["max_page"] + 1}), 422, "limit_exceeded", "limit")


def test_the_openapi_description_of_space_names_the_listing_an_http_client_reads(client):
    """`space` (the `/v1/find` body field and each route's `?space=`) in /openapi.json says what takes it as
    `GET /v1/spaces` lists it: before, "as `taskspace spaces` lists it ... as `taskspace search` without --space", CLI
    commands an HTTP client does not run."""
    spec = client.get("/openapi.json").json()
    descriptions = [p.get("description") or p.get("schema", {}).get("description", "")
                    for route in spec["paths"].values() for op in route.values()
                    for p in op.get("parameters", []) if p.get("name") == "space"]
    body = spec["paths"]["/v1/find"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    if "$ref" in body:
        body = spec["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]
    descriptions.append(body["properties"]["space"].get("description", ""))
    assert len(descriptions) >= 3, descriptions
    for text in descriptions:
        assert "GET /v1/spaces" in text and "taskspace" not in text, text


def test_the_openapi_document_gives_each_routes_error_statuses_in_the_one_error_shape(client):
    """/openapi.json lists each route's error statuses with the shape the server answers, {"error": {"code",
    "message", "field"}}; before, every route with a parameter declared only FastAPI's default 422
    `HTTPValidationError` ({"detail": [...]}), a shape the server never sends, and no 400/404/413/415/503."""
    spec = client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    assert "HTTPValidationError" not in schemas
    detail = schemas["ErrorDetail"]
    assert set(detail["required"]) == {"code", "message", "field"} and schemas["Error"]["required"] == ["error"]
    long = "x" * (LIMITS["max_prompt_chars"] + 1)
    cases = [("/v1/find", "post", client.post("/v1/find", content=b"{oops", headers={"content-type": "application/json"})),
             ("/v1/find", "post", client.post("/v1/find", json={"benchmark": "nope"})),
             ("/v1/find", "post", client.post("/v1/find", content=b"x" * (LIMITS["max_body_bytes"] + 1),
                                              headers={"content-type": "application/json"})),
             ("/v1/find", "post", client.post("/v1/find", content=b'{"prompts": ["x"]}')),
             ("/v1/find", "post", client.post("/v1/find", json={"prompts": long})),
             ("/v1/models", "get", client.get("/v1/models", params={"limit": 0})),
             ("/v1/models", "get", client.get("/v1/models", params={"benchmark": "nope"})),
             ("/v1/models/{model_id}", "get", client.get("/v1/models/org/nope")),
             ("/v1/models/{model_id}", "get", client.get("/v1/models/a%00b")),
             # a query parameter a route does not take is refused on every route, those without parameters too
             ("/v1/benchmarks", "get", client.get("/v1/benchmarks", params={"limit": 5})),
             ("/healthz", "get", client.get("/healthz", params={"verbose": 1})),
             ("/readyz", "get", client.get("/readyz", params={"verbose": 1}))]
    for path, method, r in cases:
        declared = spec["paths"][path][method]["responses"]
        assert str(r.status_code) in declared, (path, r.status_code, sorted(declared))
        ref = declared[str(r.status_code)]["content"]["application/json"]["schema"]["$ref"]
        assert ref == "#/components/schemas/Error", ref
        assert set(r.json()) == {"error"} and set(r.json()["error"]) == set(detail["properties"])
    ready = spec["paths"]["/readyz"]["get"]["responses"]["503"]["content"]["application/json"]["schema"]["$ref"]
    assert set(schemas[ready.rsplit("/", 1)[1]]["required"]) == {"error", "checks"}


def _strict(schema):
    """``schema`` with ``additionalProperties: false`` on every object that lists its properties (and none given), so
    that validating an answer also checks it carries no field the document does not declare."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    return [_strict(v) for v in schema] if isinstance(schema, list) else schema


def test_every_answer_fits_the_schema_openapi_declares_for_it(client):
    """A client written from /openapi.json alone: every answer (200 and error) validates against the schema its route
    declares for its status, each field of it declared (JSON Schema 2020-12, as OpenAPI 3.1 uses). Before, every 200
    answer was declared as `{}` (any JSON): the document said nothing of `results`, `probability`, `interval`, a
    page's `total` or a model's `strengths`."""
    from jsonschema import Draft202012Validator

    spec = client.get("/openapi.json").json()
    components = _strict(spec["components"])

    def fits(path: str, method: str, r, status: int | None = None) -> dict:
        assert status is None or r.status_code == status, r.text
        declared = spec["paths"][path][method]["responses"]
        assert str(r.status_code) in declared, (path, r.status_code, sorted(declared))
        schema = declared[str(r.status_code)]["content"]["application/json"]["schema"]
        assert schema, (path, r.status_code, "declared as any JSON")
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in
                  Draft202012Validator({**_strict(schema), "components": components}).iter_errors(r.json())]
        assert not errors, (path, r.status_code, errors[:3])
        return r.json()

    request = spec["paths"]["/v1/find"]["post"]["requestBody"]["content"]["application/json"]
    example = request["example"]  # the document's own example is a body it declares, and the server answers it
    assert not list(Draft202012Validator({**request["schema"], "components": spec["components"]}).iter_errors(example))
    fits("/v1/find", "post", client.post("/v1/find", json=example), 200)
    for body in ({"prompts": [PROMPT], "k": 3}, {"prompt": PROMPT, "evidence": 5},
                 {"prompts": [PROMPT, "A question on poetry"], "rank": "lcb"},
                 {"benchmark": "alpha", "filters": {"licenses": ["mit"], "max_params": "8B", "min_params": 1e9,
                                                    "exclude_gated": True, "open_only": True, "min_evidence": 1,
                                                    "benchmark": "beta"}},
                 {"prompts": [PROMPT], "filters": {"pipeline_tag": "text-generation"}},  # none has a tag: no result
                 {"benchmark": "beta", "prefer_smaller": 0.1, "models": ["org/m1", "plainname"],
                  "filters": {"licenses": "mit"}}):
        got = fits("/v1/find", "post", client.post("/v1/find", json=body), 200)
        assert got["results"] or "pipeline_tag" in body.get("filters", {}), body
    assert got["query"]["unranked"] == ["plainname"]  # compare mode's field, declared too
    for params in ({}, {"limit": 2, "offset": 1}, {"license": ["mit", "apache-2.0"], "max_params": "8B"},
                   {"benchmark": "alpha", "measured_on": "beta", "open_only": True}):
        fits("/v1/models", "get", client.get("/v1/models", params=params), 200)
    assert fits("/v1/models/{model_id}", "get", client.get("/v1/models/org/m1"), 200)["strengths"]
    fits("/v1/models/{model_id}", "get", client.get("/v1/models/plainname"), 200)
    fits("/v1/benchmarks", "get", client.get("/v1/benchmarks"), 200)
    fits("/healthz", "get", client.get("/healthz"), 200)
    fits("/readyz", "get", client.get("/readyz"), 200)
    for r in (client.post("/v1/find", json={"benchmark": "nope"}), client.post("/v1/find", json={"prompts": []}),
              client.post("/v1/find", json={"prompts": ["x"], "k": LIMITS["max_k"] + 1}),
              client.post("/v1/find", content=b"{oops", headers={"content-type": "application/json"})):
        fits("/v1/find", "post", r)
    for r in (client.get("/v1/models", params={"limit": 0}), client.get("/v1/models", params={"benchmark": "nope"})):
        fits("/v1/models", "get", r)
    fits("/v1/models/{model_id}", "get", client.get("/v1/models/org/nope"), 404)
    # the path parameter says what it takes, the slash of a Hub id sent as %2F too, and the field its errors name
    param = next(p for p in spec["paths"]["/v1/models/{model_id}"]["get"]["parameters"] if p["name"] == "model_id")
    assert "alias" in param["description"] and "`model`" in param["description"], param
    assert client.get("/v1/models/org%2Fm1").json()["model"] == "org/m1"
    assert client.get("/v1/models/org%2Fnope").json()["error"]["field"] == "model"


def test_the_http_answer_says_when_no_model_was_measured_near_the_query_and_openapi_declares_it(client):
    """`query.measured_near` over HTTP: a bread recipe, far from every indexed alpha/beta question, answers that no
    model in the index was measured on anything like it (any_model false, 0 of 4); a question like alpha's that all
    four models were measured on, 4 of 4. /openapi.json declares the field and its parts (the answer validates
    against the declared Query, closed to undeclared fields). Before, only each result's coverage said "no"."""
    from jsonschema import Draft202012Validator

    far = client.post("/v1/find", json={"prompt": "Give me a recipe for sourdough bread with a crisp crust"}).json()
    assert far["query"]["measured_near"] == {"results": 0, "of": 4, "any_model": False}
    assert [r["coverage"]["measured_near"] for r in far["results"]] == [False] * 4
    near = client.post("/v1/find", json={"prompt": PROMPT}).json()
    assert near["query"]["measured_near"] == {"results": 4, "of": 4, "any_model": True}
    spec = client.get("/openapi.json").json()
    components = _strict(spec["components"])
    declared = components["schemas"]["Query"]["properties"]["measured_near"]
    assert "null" in json.dumps(declared) and "MeasuredNear" in json.dumps(declared)
    said = components["schemas"]["MeasuredNear"]
    assert set(said["properties"]) == {"results", "of", "any_model"}
    assert "general ability" in said["properties"]["any_model"]["description"]
    for answer in (far, near):
        errors = list(Draft202012Validator({"$ref": "#/components/schemas/Query", "components": components})
                      .iter_errors(answer["query"]))
        assert not errors, errors[:3]


def test_a_whole_number_written_with_a_fraction_is_the_integer_the_schema_takes_it_for(client):
    """`"k": 5.0` (a client that computed it as a float): JSON Schema, which /openapi.json uses, counts 5.0 an
    integer, so the body is valid by the document and the server answers it as k 5 (evidence and min_evidence too);
    before, 422 "k must be a positive integer, not 5.0". A fraction is still refused, naming the field."""
    from jsonschema import Draft202012Validator

    spec = client.get("/openapi.json").json()
    schema = spec["paths"]["/v1/find"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    whole = {"prompts": [PROMPT], "k": 3.0, "evidence": 2.0, "filters": {"min_evidence": 1.0}}
    assert Draft202012Validator({**schema, "components": spec["components"]}).is_valid(whole)
    got = client.post("/v1/find", json=whole)
    assert got.status_code == 200, got.text
    ints = client.post("/v1/find", json={"prompts": [PROMPT], "k": 3, "evidence": 2, "filters": {"min_evidence": 1}})
    assert got.json() == ints.json() and len(got.json()["results"]) == 3 and got.json()["query"]["k"] == 3
    for body, field in (({"prompts": [PROMPT], "k": 2.5}, "k"), ({"prompts": [PROMPT], "evidence": 0.5}, "evidence"),
                        ({"prompts": [PROMPT], "filters": {"min_evidence": 1.5}}, "filters.min_evidence")):
        assert_error(client.post("/v1/find", json=body), 422, "invalid_input", field)
    assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "k": 101.0}), 422, "limit_exceeded", "k")


def test_a_k_over_the_limit_is_quoted_as_the_client_wrote_it(client):
    """A k over max_k is quoted in the error as the body wrote it: `"k": 1e300` (the page's ?k=1e300) is "got 1e+300";
    before, the float turned into the integer it stands for was quoted, 301 digits from "got 1000000000000000052504760..."
    (a number nobody wrote, its tail the double's rounding), the page's status a screenful of digits."""
    for k, said in ((1e300, "1e+300"), (101.0, "101.0"), (1000, "1000")):
        err = assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "k": k}), 422, "limit_exceeded", "k")
        assert err["message"] == f"k: at most 100 results (max_k), got {said}", err


def test_an_evidence_or_a_space_written_as_a_large_float_is_quoted_as_written(client):
    """`"evidence": 1e300` and `"space": 1e300` are quoted in their errors as the body wrote them, as `k` is; before,
    the float turned into the integer it stands for, "got 100000000000000005250476..." (301 digits, a number nobody
    wrote, its tail the double's rounding) and "space '1000000000000000052504...' is not a known space". Found walking
    the API on the 32,823-model home."""
    for evidence, said in ((1e300, "1e+300"), (21.0, "21.0"), (50, "50")):
        err = assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "evidence": evidence}), 422,
                           "limit_exceeded", "evidence")
        assert err["message"] == f"evidence: at most 20 per result (max_evidence), got {said}", err
    for space, said in ((1e300, "1e+300"), (7.0, "7.0")):
        err = assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "space": space}), 404, "not_found", "space")
        assert err["message"].startswith(f"space {said!r} is not a known space"), err
        assert len(err["message"]) < 400, err
    one = client.post("/v1/find", json={"prompts": [PROMPT], "space": 1.0, "k": 2})  # a whole float is still the id
    assert one.status_code == 200 and one.json() == client.post("/v1/find", json={"prompts": [PROMPT], "space": 1,
                                                                                  "k": 2}).json()


def test_every_integer_field_written_as_a_large_float_is_quoted_as_written(client):
    """Every integer field of a /v1/find body written as a whole float (`1e300`, `-1e300`, `-3.0`) is quoted as the body
    wrote it, in an error and in the answer's `query`, as `k`, `evidence` and `space` are: before, `"offset": 1e300`
    and `"filters": {"min_evidence": 1e300}` answered 200 with the 301-digit integer the float became in `query`
    ("offset": 10000000000000000525047...), and `"offset": -1e300` (k, evidence, min_evidence) was "offset must be a
    non-negative integer, not -1000000000000000052504..." (a number nobody wrote, its tail the double's rounding).
    Found walking the API on the 32,823-model home."""
    for field, value, said in (("offset", -1e300, "-1e+300"), ("k", -1e300, "-1e+300"), ("evidence", -1e300, "-1e+300"),
                               ("offset", -3.0, "-3.0"), ("filters.min_evidence", -1e300, "-1e+300")):
        body = {"prompts": [PROMPT]}
        if field.startswith("filters."):
            body["filters"] = {field.split(".")[1]: value}
        else:
            body[field] = value
        err = assert_error(client.post("/v1/find", json=body), 422, "invalid_input", field)
        assert err["message"].endswith(f"not {said}"), err
        assert len(err["message"]) < 200, err
    big = client.post("/v1/find", json={"prompts": [PROMPT], "offset": 1e300, "k": 2})
    assert big.status_code == 200 and big.json()["results"] == [] and big.json()["query"]["next_offset"] is None
    assert '"offset":1e+300' in big.text and "100000000000000005" not in big.text, big.text[:300]
    few = client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"min_evidence": 1e300}, "k": 2})
    assert few.status_code == 200 and few.json()["results"] == [], few.text[:300]
    assert '"min_evidence":1e+300' in few.text and "100000000000000005" not in few.text, few.text[:300]
    whole = client.post("/v1/find", json={"prompts": [PROMPT], "offset": 1.0, "k": 2}).json()  # a small whole float
    assert whole["query"]["offset"] == 1 and isinstance(whole["query"]["offset"], int)  # is the integer it writes


def test_the_encoder_get_v1_spaces_lists_names_its_space(client):
    """The `encoder` GET /v1/spaces lists (and an answer's `space.encoder`, with its revision, `org/name@rev`) names
    its space as `space` in POST /v1/find and `?space=` in GET /v1/models: the encoder name the docs say `space`
    takes, as a program reading the list sends it back. Before, only the name without its revision did: the listed
    value was a 404 "is not a known space" whose list of spaces showed that very value (found by sending
    /v1/spaces' fields back as `space`)."""
    (listed,) = client.get("/v1/spaces").json()["spaces"]
    assert "@" in listed["encoder"], listed
    want = client.post("/v1/find", json={"prompt": PROMPT, "k": 2, "space": listed["name"]}).json()
    for sp in (listed["encoder"], listed["encoder"].upper()):
        got = client.post("/v1/find", json={"prompt": PROMPT, "k": 2, "space": sp})
        assert got.status_code == 200 and got.json() == want, got.text[:300]
        page = client.get("/v1/models", params={"space": sp, "limit": 2})
        assert page.status_code == 200 and page.json()["total"] == len(MODELS), page.text[:300]
    other = listed["encoder"].split("@")[0] + "@0000000000000000"  # another revision of it names no space
    assert_error(client.post("/v1/find", json={"prompt": PROMPT, "space": other}), 404, "not_found", "space",
                 says="is not a known space")


def test_a_space_with_spaces_around_names_its_space(client):
    """`"space": " 1 "` or `?space=%20NAME%20` (a space's id or name with spaces or invisible characters around it)
    names that space, as a benchmark or a filter with spaces around is read; before, a 404 "not a known space" whose
    list showed that very name (found walking the API)."""
    (listed,) = client.get("/v1/spaces").json()["spaces"]
    want = client.post("/v1/find", json={"prompt": PROMPT, "k": 2, "space": listed["name"]}).json()
    for sp in (f" {listed['id']} ", f"\u200b{listed['name']}\t"):
        got = client.post("/v1/find", json={"prompt": PROMPT, "k": 2, "space": sp})
        assert got.status_code == 200 and got.json() == want, got.text[:300]
        page = client.get("/v1/models", params={"space": sp, "limit": 2})
        assert page.status_code == 200 and page.json()["total"] == len(MODELS), page.text[:300]
    assert_error(client.post("/v1/find", json={"prompt": PROMPT, "space": " nope "}), 404, "not_found", "space",
                 says="is not a known space")


def test_an_index_this_version_cannot_read_is_a_503_not_the_clients_error(client, monkeypatch):
    """A space built by another version of taskspace (a prompt feature set this one does not know: a server rolled back
    over a home a newer one indexed) makes every query a configuration error of the server (the CLI's exit 2): a 503
    `unavailable` saying so, as a store the server cannot read is; before, 422 `invalid_input`, telling the client to
    change a request that was fine."""
    import indexer.features as features

    unknown = {k: v for k, v in features._SETS.items() if k != features.MULTIPLE_CHOICE_V2}
    monkeypatch.setattr(features, "_SETS", unknown)  # the fixture's space (auto-mc) uses multiple-choice-v2
    for body in ({"prompts": [PROMPT]}, {"benchmark": "alpha"}):
        assert_error(client.post("/v1/find", json=body), 503, "unavailable", None,
                     says="the space was built by another version of taskspace")


def test_an_index_out_of_step_with_sql_is_a_503_and_a_bad_vector_the_clients_422(client):
    """The vector index holding vectors of another dimension than SQL's space (copied from another home, built with
    another encoder): a query is a 503 `unavailable` saying `taskspace reindex` rebuilds it, as for a missing index;
    before, 422 `invalid_input` with `field` "space NAME", a field no client sent, and `/readyz` said ready. A query
    vector of the wrong length stays the client's 422 naming `vector`."""
    import numpy as np

    from indexer.space import space_name
    from indexer.store.vectors import KINDS, Point

    svc = client.service
    name = space_name(svc.store.list_spaces()[0])
    points = {kind: [Point(h.key, np.ones(8), h.payload) for h in svc.vectors.scan(name, kind)] for kind in KINDS}
    for kind in KINDS:
        svc.vectors.rebuild(name, kind, points[kind], dim=8)
    for body in ({"prompts": [PROMPT]}, {"benchmark": "alpha"}):
        assert_error(client.post("/v1/find", json=body), 503, "unavailable", None, says="taskspace reindex --space")
    assert_error(client.get("/v1/models/org/m1"), 503, "unavailable", None, says="taskspace reindex --space")
    # and the server is not ready (a load balancer sends it no query it would answer 503); before, ready
    assert_error(client.get("/readyz"), 503, "not_ready", None, says="taskspace reindex --space")
    assert_error(client.post("/v1/find", json={"vector": [0.5, 0.5, 0.5]}), 422, "invalid_input", "vector",
                 says="the query vector has 3 entries")


def test_a_route_written_with_a_trailing_slash_is_a_404_naming_the_route(client):
    """`POST /v1/find/` (or `GET /v1/benchmarks/`, `/healthz/`): a 404 in the one error shape naming the route meant;
    before, a 307 redirect with an empty body to an absolute `http://` URL built from the Host header, which a client
    that does not follow redirects (httpx, requests for a POST) read as an answer without JSON, and which behind a TLS
    proxy pointed at plain http."""
    for r, route in ((client.post("/v1/find/", json={"prompts": [PROMPT]}), "/v1/find"),
                     (client.get("/v1/benchmarks/"), "/v1/benchmarks"), (client.get("/healthz/"), "/healthz"),
                     # the model route with no id is the model list so written, its parameters too
                     (client.get("/v1/models/"), "/v1/models"), (client.get("/v1/models/", params={"limit": 2}),
                                                                  "/v1/models")):
        assert_error(r, 404, "not_found", says=f"without the trailing slash: {route}")
    assert_error(client.get("/v1/nope"), 404, "not_found", says="no route /v1/nope; see /openapi.json")


def test_a_model_id_of_an_encoded_slash_is_looked_up_not_told_of_a_trailing_slash(client):
    """`GET /v1/models/%2F` names the model id "/" (its slash percent-encoded, as a client encoding the id sends it):
    an unknown model naming "/", as `/v1/models/%2Fx` names "/x". Before, the decoded path `/v1/models//` was taken
    for the model list written with a trailing slash: "no route /v1/models//: write it without the trailing slash",
    about a slash the client never wrote after the route."""
    for path, shown in (("/v1/models/%2F", "'/'"), ("/v1/models/%2F%2F", "'//'")):
        err = assert_error(client.get(path), 404, "not_found", "model", says="unknown model")
        assert shown in err["message"] and "trailing slash" not in err["message"], (path, err)
    assert_error(client.get("/v1/models/"), 404, "not_found", says="without the trailing slash: /v1/models")


def test_an_unknown_model_of_punctuation_alone_suggests_no_model(client):
    """`GET /v1/models/%2F` (the model "/", or "-", "a") is an unknown model suggesting none: no stored name is close
    to it; before, "did you mean" the first models (every Hub id holds a "/", so each was a substring match). A name
    with some letters still finds the models holding it ("llama-3.1-8b": meta-llama/Llama-3.1-8B), and a close name
    its close ones (`indexer.find.suggest`, which `taskspace model` says too)."""
    from indexer.find import suggest

    for path, shown in (("/v1/models/%2F", "'/'"), ("/v1/models/-", "'-'"), ("/v1/models/a", "'a'")):
        err = assert_error(client.get(path), 404, "not_found", "model", says="unknown model")
        assert err["message"].startswith(f"unknown model {shown} (") and "did you mean" not in err["message"], err
    known = ["org/a", "org/b", "meta-llama/Llama-3.1-8B"]
    assert "did you mean meta-llama/Llama-3.1-8B?" in str(suggest("llama-3.1-8b", known, "model"))
    assert "did you mean org/b, org/a?" in str(suggest("org/", known, "model"))


def test_every_limit_is_a_4xx_naming_it(client):
    long = "x" * (LIMITS["max_prompt_chars"] + 1)
    cases = [
        ({"prompts": [PROMPT, long]}, "prompts[1]", "max_prompt_chars"),
        ({"prompt": long}, "prompt", "max_prompt_chars"),
        ({"prompts": [PROMPT] * (LIMITS["max_prompts"] + 1)}, "prompts", "max_prompts"),
        ({"prompts": [PROMPT], "k": LIMITS["max_k"] + 1}, "k", "max_k"),
        ({"prompts": [PROMPT], "models": [f"m{i}" for i in range(LIMITS["max_models"] + 1)]}, "models", "max_models"),
        ({"vector": [0.0] * (LIMITS["max_vector_length"] + 1)}, "vector", "max_vector_length"),
        ({"prompts": [PROMPT], "evidence": LIMITS["max_evidence"] + 1}, "evidence", "max_evidence"),
    ]
    for body, field, limit in cases:
        assert_error(client.post("/v1/find", json=body), 422, "limit_exceeded", field, says=limit)
    assert client.post("/v1/find", json={"prompts": [PROMPT], "k": LIMITS["max_k"]}).status_code == 200
    assert_error(client.get("/v1/models", params={"limit": LIMITS["max_page"] + 1}), 422, "limit_exceeded", "limit",
                 says="max_page")
    big = json.dumps({"prompts": ["y" * 1000] * 300}).encode()
    assert len(big) > LIMITS["max_body_bytes"]
    assert_error(client.post("/v1/find", content=big, headers={"content-type": "application/json"}), 413,
                 "body_too_large", "body", says="max_body_bytes")

    def chunks():  # no Content-Length: the limit holds while the body streams in
        for _ in range(40):
            yield b" " * 8192

    assert_error(client.post("/v1/find", content=chunks(), headers={"content-type": "application/json"}), 413,
                 "body_too_large", "body", says="max_body_bytes")


def test_every_error_has_one_shape(client, monkeypatch):
    assert_error(client.get("/nope"), 404, "not_found", says="/nope")
    assert_error(client.delete("/v1/find"), 405, "method_not_allowed")
    assert_error(client.get("/v1/find"), 405, "method_not_allowed")
    assert_error(client.post("/v1/find", content=b"{oops", headers={"content-type": "application/json"}), 400, "invalid_json")
    assert_error(client.post("/v1/find"), 400, "bad_request")
    assert_error(client.post("/v1/find", json=["a list"]), 422, "invalid_request")
    # a body of JSON null was sent: not "the request needs a JSON body" (before), but what the body must be
    assert_error(client.post("/v1/find", content=b"null", headers={"content-type": "application/json"}), 422,
                 "invalid_request", says="must be a JSON object such as")
    assert_error(client.post("/v1/find", content=b"", headers={"content-type": "application/json"}), 400,
                 "bad_request", says="needs a JSON body")
    assert_error(client.get("/v1/models", params={"offset": -1}), 422, "invalid_request", "offset")
    assert_error(client.get("/v1/models", params={"limit": "many"}), 422, "invalid_request", "limit")
    assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "colour": "red"}), 422, "invalid_request", "colour")
    bad_k = assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "k": 0}), 422, "invalid_input", "k")
    assert bad_k["message"] == "k must be a positive integer, not 0"  # the field named once (before: "k: k must ...")
    assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "benchmark": "alpha"}), 422, "invalid_input", "query")
    assert_error(client.post("/v1/find", json={"prompts": [""]}), 422, "invalid_input", "prompts[0]")
    assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"size": 1}}), 422, "invalid_input",
                 "filters.size")
    assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"max_params": "big"}}), 422,
                 "invalid_input", "filters.max_params")
    assert_error(client.post("/v1/find", json={"vector": [0.1, 0.2]}), 422, "invalid_input", "vector")
    assert_error(client.post("/v1/find", json={"benchmark": "alpah"}), 404, "not_found", "benchmark", says="alpha")
    # the unknown model of the path is named as its blank or NUL id is, "model" (before: null)
    assert_error(client.get("/v1/models/org/nope"), 404, "not_found", "model", says="GET /v1/models lists them")
    assert_error(client.get("/v1/models", params={"benchmark": "nope"}), 404, "not_found", "benchmark",
                 says="GET /v1/benchmarks lists them")
    # an internal error: a 500 with a reference, no traceback, no secret
    from indexer import find as find_module
    from indexer.errors import StoreError

    monkeypatch.setenv("TASKSPACE_QDRANT_API_KEY", "s3cr3t-key")
    monkeypatch.setenv("TASKSPACE_DATABASE_URL", "postgresql+psycopg://user:hunter2@db.example/x")
    from indexer.config import reset_settings

    reset_settings()

    def boom(*a, **k):
        raise RuntimeError("connection to postgresql+psycopg://user:hunter2@db.example/x failed; key s3cr3t-key")

    monkeypatch.setattr(find_module, "find_models", boom)
    err = assert_error(client.post("/v1/find", json={"prompts": [PROMPT]}), 500, "internal_error", says="reference")
    assert "hunter2" not in err["message"] and "s3cr3t" not in err["message"] and "RuntimeError" not in err["message"]

    def unreachable(*a, **k):
        raise StoreError("cannot reach postgresql+psycopg://user:hunter2@db.example/x (key s3cr3t-key)")

    monkeypatch.setattr(find_module, "find_models", unreachable)
    err = assert_error(client.post("/v1/find", json={"prompts": [PROMPT]}), 503, "unavailable")
    assert "hunter2" not in err["message"] and "s3cr3t" not in err["message"] and "***" in err["message"]


def test_every_error_body_is_one_serialisation_byte_for_byte(client):
    """The 413 (body too large, by Content-Length or streamed) and 415 (content-encoding) answered by the body-size
    middleware are serialised as every other error body (a 422, a 404, a 405, a 400, the app's own 415): compact JSON
    (no space after `,` and `:`), UTF-8 text as it is, the same content-type. Before, the middleware wrote
    `{"error": {"code": "body_too_large", ...}}` with Python's spaced separators and every non-ASCII character
    escaped, so a client comparing or logging error bodies met two serialisations."""
    def rendered(r) -> bytes:  # the one serialisation: Starlette's JSONResponse, which renders every other error
        return json.dumps(r.json(), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()

    big = b" " * (LIMITS["max_body_bytes"] + 1)

    def streamed():
        for _ in range(40):
            yield b" " * 8192

    ref_422 = client.post("/v1/find", json={"prompts": ["\u00e9t\u00e9"], "k": 0})
    ref_404 = client.get("/v1/models/org/caf\u00e9")
    answers = {
        "422": ref_422, "404": ref_404, "405": client.get("/v1/find"),
        "400": client.post("/v1/find", content=b"{oops", headers={"content-type": "application/json"}),
        "415 content-type": client.post("/v1/find", content=b'{"prompts": ["x"]}', headers={"content-type": "text/plain"}),
        "415 content-encoding": client.post("/v1/find", content=b"x", headers={"content-type": "application/json",
                                                                             "content-encoding": "br"}),
        "413 content-length": client.post("/v1/find", content=big, headers={"content-type": "application/json"}),
        "413 streamed": client.post("/v1/find", content=streamed(), headers={"content-type": "application/json"}),
    }
    assert ref_422.status_code == 422 and ref_404.status_code == 404
    assert "\u00e9" in ref_404.json()["error"]["message"] and "\u00e9".encode() in ref_404.content  # UTF-8, unescaped
    for name, r in answers.items():
        assert r.status_code == int(name.split()[0]), (name, r.status_code, r.text)
        assert_error(r, r.status_code, r.json()["error"]["code"], r.json()["error"]["field"])
        assert r.content == rendered(r), (name, r.content)
        assert r.headers["content-type"] == ref_422.headers["content-type"], name
        assert r.headers["content-length"] == str(len(r.content)), name
    assert answers["413 content-length"].content.startswith(b'{"error":{"code":"body_too_large","message":"')


def test_an_error_about_one_prompt_names_the_field_the_client_sent(client):
    """A body giving one prompt as `"prompt": "..."` or `"prompts": "..."` (a string) has its errors named by that
    field; before, by `prompts[0]` (or `prompts` for the length limit of `prompt`), a list the client never sent."""
    long = "x" * (LIMITS["max_prompt_chars"] + 1)
    for body, field in (({"prompt": ""}, "prompt"), ({"prompt": "a\x00b"}, "prompt"), ({"prompts": " "}, "prompts"),
                        ({"prompts": "a\x00b"}, "prompts")):
        err = assert_error(client.post("/v1/find", json=body), 422, "invalid_input", field)
        assert err["message"].startswith(f"{field}: ") and "prompts[0]" not in err["message"], err
    assert_error(client.post("/v1/find", json={"prompt": long}), 422, "limit_exceeded", "prompt", says="prompt: ")
    assert_error(client.post("/v1/find", json={"prompts": [PROMPT, ""]}), 422, "invalid_input", "prompts[1]")


def test_a_bad_model_name_of_the_list_is_named_by_its_entry(client):
    """A blank model name of `models` (or one holding a NUL, too long for the database) is named by its entry,
    `models[1]`, as an entry that is not a string is and as `prompts[1]` and `filters.licenses[1]` are; one sent as a
    string is `models`. Before, `field` was `models` for any of them, so a client sending 100 names could not tell which
    (found by sending each kind of bad entry in a list)."""
    for bad, says in (("", "non-empty"), ("   ", "non-empty"), ("a\u0000b", "NUL"), ("m" * 600, "longer than")):
        assert_error(client.post("/v1/find", json={"prompt": PROMPT, "models": ["org/m1", bad]}), 422, "invalid_input",
                     "models[1]", says=says)
    assert_error(client.post("/v1/find", json={"prompt": PROMPT, "models": ["org/m1", 5]}), 422, "invalid_input",
                 "models[1]")
    err = assert_error(client.post("/v1/find", json={"prompt": PROMPT, "models": " "}), 422, "invalid_input", "models")
    assert "models[0]" not in err["message"], err


def test_a_model_of_the_list_that_is_not_stored_is_named_by_its_entry(client):
    """A model of `models` that is not stored is a 404 naming its entry, `models[1]`, as a malformed entry's 422 is;
    one sent as a string is `models`. Before, `field` was `models` for any of them (found walking the API)."""
    err = assert_error(client.post("/v1/find", json={"prompt": PROMPT, "models": ["org/m1", "nope/zzz"]}), 404,
                       "not_found", "models[1]")
    assert "unknown model 'nope/zzz'" in err["message"], err
    assert_error(client.post("/v1/find", json={"prompt": PROMPT, "models": ["nope/zzz", "org/m1"]}), 404, "not_found",
                 "models[0]")
    err = assert_error(client.post("/v1/find", json={"prompt": PROMPT, "models": "nope/zzz"}), 404, "not_found",
                       "models")
    assert "models[0]" not in err["message"], err


def test_a_prompt_or_model_that_is_not_a_string_is_said_so(client):
    """`{"prompts": [["x"]]}`, `{"prompts": [1]}` or `{"models": [1]}`: the error names the type sent; before, "must
    be a non-empty string", as if an empty string had been sent."""
    err = assert_error(client.post("/v1/find", json={"prompts": [PROMPT, ["x"]]}), 422, "invalid_input", "prompts[1]")
    assert err["message"] == "prompts[1] must be a prompt (a string), not a list", err
    err = assert_error(client.post("/v1/find", json={"prompts": [1]}), 422, "invalid_input", "prompts[0]")
    assert err["message"] == "prompts[0] must be a prompt (a string), not 1", err
    err = assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "models": [1]}), 422, "invalid_input",
                       "models[0]")
    assert err["message"] == "models[0] must be a model name (a string), not 1", err


def test_an_integer_parameter_is_written_in_decimal_digits_alone(client):
    """An integer query parameter (`limit`, `offset`, `min_evidence`) is decimal digits, as /openapi.json's "integer"
    and every query serialiser write it: `1_0`, `+5` or ` 5` is the 422 a word is, naming it and quoting the value as
    sent. Before, Python's own spellings were taken without a word (`?limit=1_0` listed 10 models, `?offset=1_000`
    skipped 1000; found by sending each parameter spelled otherwise)."""
    for name, value in (("limit", "1_0"), ("offset", "1_000"), ("min_evidence", "1_0"), ("limit", "+5"), ("limit", " 5"),
                        ("limit", "5 ")):
        assert_error(client.get("/v1/models", params={name: value}), 422, "invalid_request", name,
                     says=f"{name} must be an integer, not {value!r}")
    assert client.get("/v1/models", params={"limit": "2", "offset": "1", "min_evidence": "0"}).json()["limit"] == 2
    assert_error(client.get("/v1/models", params={"offset": "-1"}), 422, "invalid_request", "offset",
                 says="non-negative integer, not -1")


def test_a_query_parameter_that_takes_one_value_given_twice_is_refused(client):
    """`GET /v1/models?limit=2&limit=3` is a 422 naming `limit` and both values; before, FastAPI kept the last value
    without a word (limit 3), as it did for `benchmark`, `max_params` and every other one-value parameter.
    `license`, which takes several, still does."""
    err = assert_error(client.get("/v1/models?limit=2&limit=3"), 422, "invalid_request", "limit")
    assert err["message"] == "limit takes one value, given limit=2, limit=3"
    assert_error(client.get("/v1/models?max_params=1B&max_params=80B"), 422, "invalid_request", "max_params")
    both = client.get("/v1/models?license=mit&license=apache-2.0")
    assert both.status_code == 200 and {m["model"] for m in both.json()["models"]} == {"org/m1", "org/m2", "lab/m3"}


def test_an_unknown_body_field_in_another_case_is_answered_with_ours(client):
    """An unknown `/v1/find` field that is ours in another case or with spaces ("PROMPTS", "K", "Top_K") is answered
    with the field meant; before, "PROMPTS" and "K" got no suggestion (the match was case-sensitive)."""
    for sent, ours in (("PROMPTS", "prompts"), ("K", "k"), ("Top_K", "k"), ("Filters", "filters"), ("prompts ", "prompts")):
        err = assert_error(client.post("/v1/find", json={sent: ["x"]}), 422, "invalid_request", sent)
        assert f"(did you mean {ours!r}?)" in err["message"], err


def test_a_filter_named_as_the_model_list_names_it_is_answered_with_ours(client):
    """A `/v1/find` filter under the name `GET /v1/models` and the page's URL give it (`measured_on`, `license`) or in
    another case (`Licenses`) is answered with the body's name; before, `measured_on` got no suggestion (not close to
    `benchmark` by spelling), so a client could not tell which known filter it was."""
    for sent, ours in (("measured_on", "benchmark"), ("license", "licenses"), ("Licenses", "licenses"),
                       ("MIN_EVIDENCE", "min_evidence")):
        err = assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "filters": {sent: "alpha"}}), 422,
                           "invalid_input", f"filters.{sent}")  # the key as sent
        assert f"(did you mean {ours!r}?)" in err["message"], err


def test_a_find_field_of_another_json_type_is_said_in_jsons_words(client):
    """A `/v1/find` field, filter or list entry of another JSON type than /openapi.json declares is a 422 naming it,
    saying what it takes and what was sent as JSON writes it (true, null, "3", 5, a list, an object), checked by the
    HTTP layer before the library. Before, the library's Python words came back: "licenses must be a license name or
    a list of them, not int", "filters.min_params: True is not a parameter count", "filters.licenses: a license must
    be a non-empty string" for the number 5, "open_only must be true or false, not None", "k must be a positive
    integer, not '3'"."""
    post = lambda body: client.post("/v1/find", json={"prompts": [PROMPT], **body})  # noqa: E731
    for body, field, said in (
            ({"filters": {"licenses": 5}}, "filters.licenses", "licenses must be a license name or a list of them, not 5"),
            ({"filters": {"licenses": [5]}}, "filters.licenses[0]", "licenses[0] must be a license name (a string), not 5"),
            ({"filters": {"licenses": {"a": 1}}}, "filters.licenses",
             "licenses must be a license name or a list of them, not an object"),
            ({"filters": {"min_params": True}}, "filters.min_params",
             "min_params must be a parameter count, a number or a string such as 8B or 770M, not true"),
            ({"filters": {"max_params": [1]}}, "filters.max_params",
             "max_params must be a parameter count, a number or a string such as 8B or 770M, not a list"),
            ({"filters": {"open_only": 1}}, "filters.open_only", "open_only must be true or false, not 1"),
            ({"filters": {"exclude_gated": "true"}}, "filters.exclude_gated",
             'exclude_gated must be true or false, not "true"'),
            ({"filters": {"min_evidence": True}}, "filters.min_evidence",
             "min_evidence must be a non-negative integer, not true"),
            ({"filters": {"pipeline_tag": 5}}, "filters.pipeline_tag", "pipeline_tag must be a string, not 5"),
            ({"filters": []}, "filters", "filters must be an object, not a list"),
            ({"k": "3"}, "k", 'k must be a positive integer, at most 100, not "3"'),
            ({"evidence": [1]}, "evidence", "evidence must be an integer from 0 to 20, not a list"),
            ({"prefer_smaller": "x"}, "prefer_smaller", 'prefer_smaller must be a number from 0 to 100, not "x"'),
            ({"rank": 5}, "rank", "rank must be probability or lcb, not 5"),
            ({"models": 5}, "models", "models must be a model name or a list of them, not 5"),
            ({"prompts": 5}, "prompts", "prompts must be a string or a list of strings, not 5"),
            ({"prompts": None, "vector": [0.5, True]}, "vector[1]", "vector[1] must be a number (vector is a list of numbers), not true"),
            ({"prompts": None, "vector": "x"}, "vector", 'vector must be a list of numbers, not "x"')):
        body = {k: v for k, v in body.items() if v is not None}
        if "vector" in body:
            err = assert_error(client.post("/v1/find", json=body), 422, "invalid_input", field)
        else:
            err = assert_error(post(body), 422, "invalid_input", field)
        assert err["message"] == said, err
    # the library keeps its Python words: it is not the HTTP layer's to rewrite them
    from indexer.errors import InputError
    from indexer.find import Filters

    with pytest.raises(InputError, match="not int"):
        Filters(licenses=5)
    with pytest.raises(InputError, match="True is not a parameter count"):
        Filters(min_params=True)


def test_a_benchmark_that_is_not_a_string_is_said_so(client):
    """`{"benchmark": ["alpha"]}` (a list, as `prompts` takes) or a number: 422 naming `benchmark` and saying it is one
    name, a string, not what was sent; before, "benchmark must be a non-empty benchmark name", for a list that was
    not empty. A blank name is still "non-empty"."""
    for sent, kind in ((["alpha"], "a list"), (5, "5"), ({"name": "alpha"}, "an object")):
        err = assert_error(client.post("/v1/find", json={"benchmark": sent}), 422, "invalid_input", "benchmark")
        assert err["message"] == f"benchmark must be one benchmark name (a string), not {kind}", err
    assert_error(client.post("/v1/find", json={"benchmark": " "}), 422, "invalid_input", "benchmark",
                 says="non-empty benchmark name")


def test_a_filter_error_names_its_filter_once(client):
    """An input error about a filter names it once, as `k`'s does: `filters.min_evidence` in the field, "min_evidence
    must be ..." in the message (before: "filters.min_evidence: min_evidence must be ..."; on GET /v1/models
    "pipeline_tag: pipeline_tag must be ..."); min_params above max_params names `filters.min_params` (GET:
    `min_params`), not the whole `filters`, and says what to change."""
    post = lambda filters: client.post("/v1/find", json={"prompts": [PROMPT], "filters": filters})  # noqa: E731
    err = assert_error(post({"min_evidence": -1}), 422, "invalid_input", "filters.min_evidence")
    assert err["message"] == "min_evidence must be a non-negative integer, not -1"
    err = assert_error(post({"open_only": "yes"}), 422, "invalid_input", "filters.open_only")
    assert err["message"] == 'open_only must be true or false, not "yes"'
    err = assert_error(post({"min_params": "70B", "max_params": "8B"}), 422, "invalid_input", "filters.min_params")
    assert err["message"].startswith("min_params 70.0B is above max_params 8.0B") and "lower min_params" in err["message"]
    err = assert_error(client.get("/v1/models", params={"pipeline_tag": " "}), 422, "invalid_request", "pipeline_tag")
    assert err["message"].startswith("pipeline_tag is empty: give ")  # an empty parameter's words, the name once
    err = assert_error(client.get("/v1/models", params={"min_params": "70B", "max_params": "8B"}), 422,
                       "invalid_input", "min_params")
    assert err["message"].startswith("min_params 70.0B is above max_params 8.0B")
    # a query parameter's type or bound in the body's words (before: pydantic's "open_only: Input should be a valid
    # boolean, unable to interpret input", "min_evidence: Input should be greater than or equal to 0")
    for params, field, said in (({"open_only": "maybe"}, "open_only", "open_only must be true, false, 1 or 0, not 'maybe'"),
                                ({"min_evidence": -1}, "min_evidence", "min_evidence must be a non-negative integer, not -1"),
                                ({"min_evidence": "abc"}, "min_evidence", "min_evidence must be an integer, not 'abc'"),
                                ({"limit": 0}, "limit", "limit must be a positive integer, not 0"),
                                ({"offset": "1.5"}, "offset", "offset must be an integer, not '1.5'")):
        err = assert_error(client.get("/v1/models", params=params), 422, "invalid_request", field)
        assert err["message"] == said, err


def test_a_switch_parameter_takes_true_or_false_as_its_error_says(client):
    """`?open_only=` / `?exclude_gated=` take true or false (any case: Python's requests sends `True`), and 1 or 0 as
    the page's URL does; pydantic's other spellings (yes, no, on, off, t, f, y, n) are the 422 "must be true, false, 1
    or 0": the error lists exactly what is taken. Before, those were taken without a word, beside an error saying true
    or false; then refused, but the error still said "must be true or false", leaving out the 1 and 0 it takes."""
    on = client.get("/v1/models", params={"open_only": "true"}).json()
    for value in ("True", "TRUE", "1"):
        assert client.get("/v1/models", params={"open_only": value}).json() == on, value
    off = client.get("/v1/models").json()
    for value in ("false", "False", "0"):
        assert client.get("/v1/models", params={"exclude_gated": value}).json() == off, value
    for name in ("open_only", "exclude_gated"):
        for value in ("yes", "no", "on", "off", "t", "f", "y", "n"):
            err = assert_error(client.get("/v1/models", params={name: value}), 422, "invalid_request", name)
            assert err["message"] == f"{name} must be true, false, 1 or 0, not {value!r}", err


def test_an_empty_number_or_switch_parameter_says_to_leave_it_out_for_its_default(client):
    """`GET /v1/models?offset=` (a form's empty field; `limit`, `min_evidence`, `exclude_gated`, `open_only` too) stays a
    422, as every other empty parameter is (`?benchmark=`, `?pipeline_tag=`, `?space=`, `?license=`: an empty value is
    no value of any of them, and taking it for the default would answer a page the client did not ask for without a
    word), and now says it is empty and how to get the default: leave it out. Before, "offset must be an integer, not
    ''", which named no way out."""
    for name, takes, default in (("offset", "an integer", "its default, 0"), ("limit", "an integer", "its default, 50"),
                                 ("min_evidence", "an integer", "no such filter"),
                                 ("exclude_gated", "true, false, 1 or 0", "its default, false"),
                                 ("open_only", "true, false, 1 or 0", "its default, false")):
        for value in ("", " "):
            err = assert_error(client.get("/v1/models", params={name: value}), 422, "invalid_request", name)
            assert err["message"] == f"{name} is empty: give {takes}, or leave {name} out for {default}", err
    # a text parameter left empty: the same code and words (before: `?benchmark=` and `?license=` were `invalid_input`
    # "benchmark must be a non-empty benchmark name", `?offset=` `invalid_request` "offset is empty: ...")
    for name, takes, default in (("benchmark", "a benchmark name", "every model"),
                                 ("measured_on", "a benchmark name", "no such filter"),
                                 ("pipeline_tag", "a pipeline tag such as text-generation", "no such filter"),
                                 ("license", "a license name such as mit", "no such filter"),
                                 ("min_params", "a parameter count such as 8B", "no such filter"),
                                 ("max_params", "a parameter count such as 8B", "no such filter"),
                                 ("space", "a space's name or id (GET /v1/spaces lists them)", "the default space")):
        for value in ("", " "):
            err = assert_error(client.get("/v1/models", params={name: value}), 422, "invalid_request", name)
            assert err["message"] == f"{name} is empty: give {takes}, or leave {name} out for {default}", err
    err = assert_error(client.get("/v1/models", params=[("license", "mit"), ("license", "")]), 422, "invalid_request",
                       "license")
    assert err["message"].startswith("license is empty: "), err
    err = assert_error(client.get(f"/v1/models/{MODELS[0]}", params={"space": ""}), 422, "invalid_request", "space")
    assert err["message"].startswith("space is empty: "), err
    err = assert_error(client.get("/v1/models", params={"offset": "x"}), 422, "invalid_request", "offset")
    assert err["message"] == "offset must be an integer, not 'x'"  # a value that is there keeps its words


def test_a_bad_license_is_named_by_its_path_as_sent_with_its_value(client):
    """A bad license of `filters.licenses` is named by its path as the client wrote it (`field`
    `filters.licenses[1]`, as `prompts[1]` or `vector[3]` are; `filters.licenses` for one sent as a string), the
    message naming the entry as the other filters' messages name their filter (`licenses[1]`) and saying the value
    given; `GET /v1/models?license=` names `license` (which of its values when several are given). Before, `field`
    `filters.licenses` whichever entry it was, and a blank entry or one of commas alone was "a license must be a
    non-empty string", naming neither the entry nor what it held (the same on GET)."""
    post = lambda licenses: client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"licenses": licenses}})  # noqa: E731
    for licenses, field, said in (
            (["mit", 5], "filters.licenses[1]", "licenses[1] must be a license name (a string), not 5"),
            (["mit", " "], "filters.licenses[1]",
             'licenses[1] names no license (commas, spaces or invisible characters alone: " "); give a license name '
             'such as mit'),
            (["mit", "apache-2.0", " , "], "filters.licenses[2]",
             'licenses[2] names no license (commas, spaces or invisible characters alone: " , "); give a license '
             'name such as mit'),
            ("", "filters.licenses", 'licenses names no license (empty: ""); give a license name such as mit'),
            (["mit", "a\x00b"], "filters.licenses[1]", "licenses[1] 'a\\x00b' holds a NUL character"),
            ("a\x00b", "filters.licenses", "licenses 'a\\x00b' holds a NUL character")):
        err = assert_error(post(licenses), 422, "invalid_input", field)
        assert err["message"].startswith(said), (licenses, err)
    err = assert_error(client.get("/v1/models", params=[("license", "mit"), ("license", " ")]), 422, "invalid_request",
                       "license")  # an empty value: an empty parameter's words (test_an_empty_number_or_switch_...)
    assert err["message"].startswith("license is empty: "), err
    for params, said in (([("license", "mit"), ("license", "\u200b")], "license (its value 2 of 2) names no license "
                          "(commas, spaces or invisible characters alone: '\\u200b'); give a license name such as mit"),
                         ([("license", ",")], "license names no license (commas, spaces or invisible characters "
                                              "alone: ','); give a "
                                              "license name such as mit")):
        err = assert_error(client.get("/v1/models", params=params), 422, "invalid_input", "license")
        assert err["message"] == said, err


def test_a_license_or_pipeline_tag_of_invisible_characters_alone_is_refused_as_such_a_prompt_is(client):
    """A license or pipeline_tag filter holding only invisible characters (a zero-width space, a byte order mark) is a
    422 naming it, on `POST /v1/find` and `GET /v1/models`, as a prompt of them is refused (`records.is_blank`); before,
    it was taken as a filter and matched nothing (an empty answer, as if no model had that license). A license list
    naming one beside such an entry keeps the one it names."""
    post = lambda filters: client.post("/v1/find", json={"prompts": [PROMPT], "filters": filters})  # noqa: E731
    for zw in ("\u200b", "\ufeff\u200b "):
        assert_error(post({"licenses": [zw]}), 422, "invalid_input", "filters.licenses[0]",
                     says="licenses[0] names no license (commas, spaces or invisible characters alone")
        assert_error(post({"licenses": zw}), 422, "invalid_input", "filters.licenses",
                     says="licenses names no license (commas, spaces or invisible characters alone")
        assert_error(client.get("/v1/models", params={"license": zw}), 422, "invalid_input", "license",
                     says="license names no license (commas, spaces or invisible characters alone")
        for err in (assert_error(post({"pipeline_tag": zw}), 422, "invalid_input", "filters.pipeline_tag"),
                    assert_error(client.get("/v1/models", params={"pipeline_tag": zw}), 422, "invalid_input",
                                 "pipeline_tag")):
            assert err["message"].startswith("pipeline_tag must have visible text (it holds only invisible "
                                             "characters"), err
    got = post({"licenses": "mit,\u200b"})  # the license it names, the invisible part none
    assert got.status_code == 200 and got.json()["query"]["filters"] == {"licenses": ["mit"]}, got.text


def test_a_benchmark_of_invisible_characters_alone_is_refused_as_such_a_prompt_is(client):
    """A benchmark of invisible characters alone (a zero-width space, a byte order mark) in `POST /v1/find` (and `GET
    /v1/models?benchmark=`) is a 422 naming `benchmark` and what it holds, as a prompt, license or pipeline_tag of them
    is refused (`records.INVISIBLE_ONLY`); before, a 404 "unknown benchmark" suggesting benchmarks."""
    for zw in ("\u200b", "\ufeff\u200b"):
        for err in (assert_error(client.post("/v1/find", json={"benchmark": zw}), 422, "invalid_input", "benchmark"),
                    assert_error(client.get("/v1/models", params={"benchmark": zw}), 422, "invalid_input",
                                 "benchmark")):
            assert err["message"].startswith("benchmark must have visible text (it holds only invisible "
                                             "characters"), err


def test_a_bad_benchmark_name_gets_one_message_from_the_model_list_and_a_benchmark_query(client):
    """A benchmark name both unusable and without visible text (a control character alone, a zero-width space past the
    length limit), or one that is not a string: `GET /v1/models?benchmark=` and `POST /v1/find` refuse it with the same
    message (one check, `find.check_benchmark_name`). Before, the model list asked for the name's problem first and
    the query for visible text first: "benchmark '\\x01' holds a control character ..." from one, "benchmark must have
    visible text ..." from the other (found reading the two checks)."""
    for bad in ("\x01", "\u200b" * 600):
        listed = assert_error(client.get("/v1/models", params={"benchmark": bad}), 422, "invalid_input", "benchmark")
        found = assert_error(client.post("/v1/find", json={"benchmark": bad}), 422, "invalid_input", "benchmark")
        assert listed["message"] == found["message"] and "visible text" in found["message"], (listed, found)


def test_a_license_with_invisible_characters_at_its_edges_is_the_license_it_names(client):
    """A license filter with invisible characters at its edges (`"\u200bmit"`, `"mit\ufeff"`: pasted from a page) is
    the license it names, as spaces around it are: `POST /v1/find` and `GET /v1/models` answer as for `mit` (and echo
    `mit`); before, it was kept as given and matched no model, an empty answer as if none had that license."""
    want = client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"licenses": ["mit"]}}).json()
    listed = client.get("/v1/models", params={"license": "mit"}).json()
    assert want["results"] and listed["models"], (want, listed)
    for lic in ("\u200bmit", "mit\ufeff", " \u200bMIT\u200d "):
        got = client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"licenses": [lic]}})
        assert got.status_code == 200 and got.json()["query"]["filters"] == {"licenses": ["mit"]}, got.text
        assert got.json()["results"] == want["results"]
        assert client.get("/v1/models", params={"license": lic}).json()["models"] == listed["models"]


def test_a_license_with_an_invisible_character_inside_is_refused_quoting_it(client):
    """`GET /v1/models?license=mi%E2%80%8Bt` (a zero-width space inside the name, pasted from a page) is a 422 naming
    `license` that shows the character (`'mi\\u200bt'`, U+200B, its name) and the name without it, as `POST
    /v1/find`'s `filters.licenses` is; before, a 200 with no model (no license id holds one), as if none had that
    license. A value of a zero-width space alone is quoted as `'\\u200b'` too (not printed invisible)."""
    said = ("'mi\\u200bt' holds an invisible character inside a name (U+200B, zero width space), which no license "
            "name has: give the name without it ('mit')")
    err = assert_error(client.get("/v1/models?license=mi%E2%80%8Bt"), 422, "invalid_input", "license")
    assert err["message"] == f"license {said}", err
    err = assert_error(client.get("/v1/models?license=mit&license=ap%C2%ADache"), 422, "invalid_input", "license")
    assert err["message"].startswith("license (its value 2 of 2) 'ap\\xadache' holds an invisible character inside "
                                     "a name (U+00AD, soft hyphen)"), err
    post = lambda licenses: client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"licenses": licenses}})  # noqa: E731
    assert assert_error(post(["mit", "mi\u200bt"]), 422, "invalid_input", "filters.licenses[1]")["message"] == (
        f"licenses[1] {said}")
    assert assert_error(post("mi\u200bt"), 422, "invalid_input", "filters.licenses")["message"] == f"licenses {said}"
    err = assert_error(client.get("/v1/models?license=%E2%80%8B"), 422, "invalid_input", "license")
    assert err["message"] == ("license names no license (commas, spaces or invisible characters alone: '\\u200b'); "
                              "give a license name such as mit"), err


def test_a_blank_benchmark_of_the_model_list_is_refused_as_a_benchmark_query_refuses_it(client):
    """`GET /v1/models?benchmark=` (blank) is a 422 naming `benchmark`, as `POST /v1/find {"benchmark": ""}` is; before,
    a 404 "unknown benchmark ''; did you mean ..." listing five benchmarks. A blank `measured_on=` names `measured_on`
    in its message too, not only in its field (the library's filter is `benchmark`)."""
    for blank in ("", " "):  # an empty query parameter's words (test above)
        err = assert_error(client.get("/v1/models", params={"benchmark": blank}), 422, "invalid_request", "benchmark")
        assert err["message"].startswith("benchmark is empty: ")
        err = assert_error(client.get("/v1/models", params={"measured_on": blank}), 422, "invalid_request", "measured_on")
        assert err["message"].startswith("measured_on is empty: ")
    err = assert_error(client.post("/v1/find", json={"benchmark": " "}), 422, "invalid_input", "benchmark")
    assert err["message"] == "benchmark must be a non-empty benchmark name"


def test_a_benchmark_name_asked_as_a_model_names_the_endpoints_that_list_and_rank_its_models(client):
    """`GET /v1/models/beta` (a benchmark's name) is a 404 saying it is a benchmark and naming what an HTTP client
    asks for its models, `GET /v1/models?benchmark=beta` and `POST /v1/find` with `{"benchmark": "beta"}`, as the
    other not-found errors name `GET /v1/models`; before, the CLI's `taskspace models -b beta` and `taskspace search -b
    beta` (found asking for `mmlu_pro/law` on the 32,823-model home's search page, which showed them to its user)."""
    err = assert_error(client.get("/v1/models/beta"), 404, "not_found", "model")
    assert err["message"] == ("unknown model 'beta': beta is a benchmark; GET /v1/models?benchmark=beta lists the models "
                              'measured on it, POST /v1/find with {"benchmark": "beta"} ranks the models for it'), err


def test_a_model_id_with_a_nul_is_named_as_the_model(client):
    """`GET /v1/models/{id}` with a NUL in the id is a 422 whose field and message name `model` (the path's model, as
    a blank id is); before, `models`, compare mode's argument, which the request does not have."""
    err = assert_error(client.get("/v1/models/a%00b"), 422, "invalid_input", "model")
    assert err["message"] == "model 'a\\x00b' holds a NUL character"
    assert_error(client.get("/v1/models/%20"), 422, "invalid_input", "model")


def test_malformed_requests_get_a_4xx_naming_the_field_and_what_to_do(client):
    """What a client gets for each malformed request: a JSON error naming the field or parameter, saying what to send
    instead, with a 4xx status; never a 500 (a vector of strings was one) and never a silently ignored argument (an
    unknown query parameter was, a prompts object was read as its keys, true as prefer_smaller 1)."""
    post = lambda body: client.post("/v1/find", json=body)  # noqa: E731
    raw = lambda data, ctype: client.post("/v1/find", content=data, headers={"content-type": ctype} if ctype else {})  # noqa: E731
    # the body: not JSON, not an object, not sent as JSON
    assert_error(raw(b'{"prompts": ["x"]}', "text/plain"), 415, "unsupported_media_type", "content-type",
                 says="content-type: application/json (got content-type: text/plain)")
    assert_error(raw(b'{"prompts": ["x"]}', None), 415, "unsupported_media_type", "content-type",
                 says="got no content-type")
    assert_error(raw(b'"a string"', "application/json"), 422, "invalid_request", says="must be a JSON object")
    assert_error(raw(b"[" * 50000 + b"]" * 50000, "application/json"), 400, "invalid_json", says="parsed as JSON")
    assert_error(raw(b"", "application/json"), 400, "bad_request", says='{"prompts"')
    assert raw(b'{"prompts": ["%s"], "k": 2}' % PROMPT.encode(), "application/json; charset=utf-8").status_code == 200
    # fields: unknown (with ours for the usual other names), wrong types, empty
    assert_error(post({"prompts": [PROMPT], "top": 500}), 422, "invalid_request", "top", says="did you mean 'k'?")
    assert_error(post({"prompts": [PROMPT], "top_k": 5}), 422, "invalid_request", "top_k", says="did you mean 'k'?")
    assert_error(post({"query": PROMPT}), 422, "invalid_request", "query", says="did you mean 'prompts'?")
    assert_error(post({"prompts": [PROMPT], "k": LIMITS["max_k"] * 10}), 422, "limit_exceeded", "k", says="max_k")
    assert_error(post({"prompts": [PROMPT], "k": "ten"}), 422, "invalid_input", "k", says="positive integer")
    assert_error(post({"prompts": []}), 422, "invalid_input", "prompts", says="give at least one prompt")
    assert_error(post({"prompts": {"a": PROMPT}}), 422, "invalid_input", "prompts", says="list of strings")
    assert_error(post({"prompt": [PROMPT, PROMPT]}), 422, "invalid_request", "prompt", says="as a list in prompts")
    assert_error(post({"vector": ["a", "b"]}), 422, "invalid_input", "vector[0]", says="list of numbers")
    assert_error(post({"vector": {"x": 1}}), 422, "invalid_input", "vector", says="list of numbers")
    assert_error(post({"prompts": [PROMPT], "prefer_smaller": True}), 422, "invalid_input", "prefer_smaller")
    assert_error(post({"prompts": [PROMPT], "prefer_smaller": 1e308}), 422, "invalid_input", "prefer_smaller",
                 says="from 0 to 100")
    assert_error(post({}), 422, "invalid_input", "query", says="got none")
    assert_error(post({"prompts": [PROMPT], "filters": {"benchmark": "nope"}}), 404, "not_found", "filters.benchmark")
    assert_error(post({"prompts": [PROMPT], "models": ["org/nope"]}), 404, "not_found", "models[0]",
                 says="(GET /v1/models lists them)")  # the listing an HTTP client reaches, not the command's
    assert_error(post({"benchmark": "nope"}), 404, "not_found", "benchmark", says="(GET /v1/benchmarks lists them)")
    # query parameters a route does not take: named, not ignored (the page itself takes its own: ?q=...)
    assert_error(client.post("/v1/find?k=3", json={"prompts": [PROMPT]}), 422, "invalid_request", "k",
                 says="takes its arguments in the JSON body")
    assert_error(client.get("/v1/models", params={"top": 5}), 422, "invalid_request", "top", says="limit")
    assert_error(client.get("/v1/benchmarks", params={"x": 1}), 422, "invalid_request", "x", says="no query parameters")
    assert_error(client.get("/v1/models/org/m1", params={"full": 1}), 422, "invalid_request", "full")
    assert client.get("/", params={"q": PROMPT, "k": 3}).status_code == 200
    assert client.get("/v1/models", params={"limit": 2, "license": "mit"}).status_code == 200
    # GET /v1/models names the query parameter, not the library's filter
    assert_error(client.get("/v1/models", params={"measured_on": "nope"}), 404, "not_found", "measured_on")
    assert_error(client.get("/v1/models", params={"max_params": "big"}), 422, "invalid_input", "max_params",
                 says="max_params: 'big' is not a parameter count")
    err = assert_error(client.get("/v1/models", params={"limit": "x", "offset": "y"}), 422, "invalid_request", "offset")
    assert "limit must" in err["message"] and "offset must" in err["message"]  # every problem, not the first and a count


def test_a_query_parameter_with_no_name_is_said_so(client):
    """`GET /v1/models?=x` (a value with no name) is a 422 saying the parameter has no name and how to write one,
    `field` null; beside an unknown named one, that one is the `field`. Before, "unknown query parameter(s) ['']" with
    `field` "", a name no client sent (found walking the API)."""
    err = assert_error(client.get("/v1/models?=x"), 422, "invalid_request", None)
    assert err["message"].startswith("a query parameter has no name (=x): write it as name=value; /v1/models takes "), err
    err = assert_error(client.get("/v1/models?=x&top=5"), 422, "invalid_request", "top")
    assert err["message"].startswith("unknown query parameter ['top']; a query parameter has no name (=x)"), err
    assert_error(client.get("/v1/benchmarks?="), 422, "invalid_request", None, says="has no name (=)")


def test_the_openapi_document_refuses_a_query_parameter_as_every_api_route_does(client):
    """`GET /openapi.json?x=1` is the 422 `/healthz?x=1` and `/v1/benchmarks?x=1` are, naming `x` and saying the route
    takes no query parameters (HEAD too); before, 200 and the document, the one route of the API that ignored a query
    parameter without a word. The page `/` and its files still take their own."""
    doc = client.get("/openapi.json")
    assert doc.status_code == 200 and doc.json()["paths"]["/v1/find"] and doc.headers["content-type"] == "application/json"
    for method in ("GET", "HEAD"):
        r = client.request(method, "/openapi.json", params={"x": 1})
        assert r.status_code == 422, (method, r.text)
    err = assert_error(client.get("/openapi.json", params={"x": 1}), 422, "invalid_request", "x")
    assert err["message"] == "unknown query parameter ['x']; /openapi.json takes no query parameters", err
    assert client.head("/openapi.json").status_code == 200
    assert client.get("/openapi.json").json() == doc.json()
    assert_error(client.post("/openapi.json"), 405, "method_not_allowed", None, says="it takes GET, HEAD")
    assert client.get("/static/app.js", params={"v": 2}).status_code == 200


def test_a_query_vector_too_large_for_the_index_is_an_input_error_naming_vector(client):
    """A vector of huge finite numbers ([1e308] * dim, or entries whose length passes float32's largest): before, a
    422 whose field was the space's name ("query vector has NaN/inf entries", the store's check after the cast to
    float32), or a 200 ranking by scores past float32 (probability 1.0 for every model). Now an input error naming
    `vector`, saying the values overflow and what to send; the same from the Python API (the CLI's path)."""
    from indexer.errors import InputError
    from indexer.find import find_models

    svc = client.service
    dim = svc.store.list_spaces()[0].dim
    for vector in ([1e308] * dim, [1e300] + [0.0] * (dim - 1), [3e38] * dim):
        err = assert_error(client.post("/v1/find", json={"vector": vector}), 422, "invalid_input", "vector",
                           says="overflow")
        assert "too large" in err["message"] and "index form" in err["message"], err["message"]
        with pytest.raises(InputError, match="overflow") as got:
            find_models(vector=vector, store=svc.store, vectors=svc.vectors)
        assert got.value.item == "vector"
    assert client.post("/v1/find", json={"vector": [1e3] * dim}).status_code == 200  # large but representable


def test_an_all_zero_query_vector_is_an_input_error_naming_vector(client):
    """A query vector of zeros (or of entries too small for the index's 32-bit floats, which become zeros) scores
    every model 0: before, a 200 ranking of the index in an order of no meaning (every score 0, every probability the
    same). Now a 422 naming `vector`, saying what it sent and what to send; the same from the Python API."""
    from indexer.errors import InputError
    from indexer.find import find_models

    svc = client.service
    dim = svc.store.list_spaces()[0].dim
    for vector in ([0.0] * dim, [0] * dim, [1e-320] + [0.0] * (dim - 1), [-0.0] * dim):
        err = assert_error(client.post("/v1/find", json={"vector": vector}), 422, "invalid_input", "vector",
                           says="zero")
        assert "index form" in err["message"], err["message"]
        with pytest.raises(InputError, match="zero") as got:
            find_models(vector=vector, store=svc.store, vectors=svc.vectors)
        assert got.value.item == "vector"
    assert client.post("/v1/find", json={"vector": [0.0] * (dim - 1) + [1e-3]}).status_code == 200  # one entry


def test_an_integer_past_float_range_is_an_input_error_not_a_500(client):
    """JSON integers have no bound and Python reads them whole: `"prefer_smaller": 1` and 400 zeros,
    `filters.min_params` / `max_params` so written, or such an entry of `vector`, made `float()` raise OverflowError,
    a 500 "internal error" (and a traceback from `indexer.find_models`). Now a 422 naming the field, the number cut
    short in the message; the same InputError from the Python API."""
    from indexer.errors import InputError
    from indexer.find import find_models

    svc = client.service
    dim = svc.store.list_spaces()[0].dim
    huge = 10 ** 400
    for body, field, says in (({"prompts": [PROMPT], "prefer_smaller": huge}, "prefer_smaller", "from 0 to 100"),
                              ({"prompts": [PROMPT], "filters": {"min_params": huge}}, "filters.min_params",
                               "parameter count"),
                              ({"prompts": [PROMPT], "filters": {"max_params": -huge}}, "filters.max_params",
                               "parameter count"),
                              ({"vector": [huge] + [0.0] * (dim - 1)}, "vector", "overflow")):
        err = assert_error(client.post("/v1/find", json=body), 422, "invalid_input", field, says=says)
        assert len(err["message"]) < 400, err["message"]  # the 401 digits are not echoed whole
        args = {k: v for k, v in body.items()}
        with pytest.raises(InputError) as got:
            find_models(**args, store=svc.store, vectors=svc.vectors)
        assert got.value.item == field


def test_an_integer_too_long_to_parse_is_said_so_not_taken_for_nesting(client):
    """An integer of more digits than Python's parser reads (4300: `"k": 1` and 5000 zeros) made the body unparsable,
    and the 400 said "could not be parsed as JSON (is it nested too deeply?)", sending the client looking at a
    nesting that was fine. Now it names the number's digits and the parser's limit."""
    body = '{"prompts": ["x"], "k": 1' + "0" * 5000 + "}"
    err = assert_error(client.post("/v1/find", content=body.encode(), headers={"content-type": "application/json"}),
                       400, "invalid_json")
    assert err["message"] == ("the request body holds an integer of 5001 digits; the JSON parser reads at most 4300: "
                              "send a shorter number"), err


def test_a_body_that_is_not_json_is_said_where_and_why(client):
    """A body the JSON parser refuses: the message gives the parser's reason and the line and column where it
    stopped; before, only "the request body is not valid JSON", with no hint of a trailing comma or quotes."""
    json_ = {"content-type": "application/json"}
    err = assert_error(client.post("/v1/find", content=b'{"prompts": ["x"],\n "k": 3,\n}', headers=json_), 400,
                       "invalid_json")
    assert err["message"] == ("the request body is not valid JSON: Expecting property name enclosed in double quotes "
                              "at line 3, column 1 (character 28)"), err
    err = assert_error(client.post("/v1/find", content=b"{'prompts': ['x']}", headers=json_), 400, "invalid_json")
    assert "double quotes at line 1, column 2" in err["message"], err
    err = assert_error(client.post("/v1/find", content=b'{"k": 3} {"k": 4}', headers=json_), 400, "invalid_json")
    assert err["message"].endswith("Extra data at line 1, column 10 (character 9)"), err


def test_a_compressed_body_is_a_415_naming_content_encoding(client):
    """A body sent with `content-encoding: gzip` (or deflate, br): 415 naming the header and saying to send it
    uncompressed; before, the compressed bytes were parsed as they came, "not UTF-8 JSON (invalid start byte 0x8b
    at byte 1); send the JSON encoded as UTF-8", advice the client had followed."""
    import gzip

    body = json.dumps({"prompts": [PROMPT], "k": 1}).encode()
    for coding, data in (("gzip", gzip.compress(body)), ("deflate", __import__("zlib").compress(body))):
        err = assert_error(client.post("/v1/find", content=data, headers={"content-type": "application/json",
                                                                          "content-encoding": coding}),
                           415, "unsupported_media_type", "content-encoding", says=f"content-encoding: {coding}")
        assert "send it uncompressed" in err["message"]
    plain = client.post("/v1/find", content=body, headers={"content-type": "application/json",
                                                            "content-encoding": "identity"})
    assert plain.status_code == 200, plain.text


def test_a_body_that_is_not_utf8_is_named_with_its_byte_and_what_to_send(encoder):
    """A body whose bytes are not UTF-8 (a Latin-1 client, a binary upload): before, 400 "could not be parsed as
    JSON (is it nested too deeply?)", which sent the client looking at its nesting. Now it says the body is not
    UTF-8 JSON, at which byte, and to send UTF-8."""
    with TestClient(create_app(Service(encoder=encoder))) as c:
        body = '{"prompts": ["café"]}'.encode("latin-1")
        err = assert_error(c.post("/v1/find", content=body, headers={"content-type": "application/json"}), 400,
                           "invalid_json", says="not UTF-8 JSON")
        assert f"at byte {body.index(0xe9)}" in err["message"] and "0xe9" in err["message"], err["message"]
        assert "send the JSON encoded as UTF-8" in err["message"] and "nested" not in err["message"]
        assert_error(c.post("/v1/find", content=b"[" * 50000 + b"]" * 50000, headers={"content-type": "application/json"}),
                     400, "invalid_json", says="nested too deeply")  # the other parse failure keeps its message


def test_a_body_in_a_declared_charset_is_read_in_it_or_the_charset_named(client):
    """A body whose content-type declares a charset other than UTF-8 (`application/json; charset=latin-1`, as
    ASP.NET Core and Spring read it) is read in that charset: the answer is the one its text sent as UTF-8 gets.
    Before, it was read as UTF-8 whatever it declared: "not UTF-8 JSON (invalid continuation byte 0xe9 ...)" for a
    Latin-1 "café", and a Latin-1 body whose bytes happen to be UTF-8 ("cafÃ©") read as another text without a word.
    A charset this server does not know is a 415 naming it; bytes that are not of the declared charset a 400 naming
    it, the byte and where."""
    text = json.dumps({"prompts": ["café menu", "Ã© 5 €"], "k": 2}, ensure_ascii=False)
    want = client.post("/v1/find", content=text.encode("utf-8"), headers={"content-type": "application/json"})
    assert want.status_code == 200, want.text
    for charset, coding in (("latin-1", "latin-1"), ('"ISO-8859-1"', "latin-1"), ("windows-1252", "cp1252"),
                            ("UTF-16", "utf-16"), ("utf-8", "utf-8")):
        if "€" in text and coding == "latin-1":
            sent = text.replace("€", "E")
            base = client.post("/v1/find", content=sent.encode(), headers={"content-type": "application/json"}).json()
        else:
            sent, base = text, want.json()
        got = client.post("/v1/find", content=sent.encode(coding),
                          headers={"content-type": f"application/json; charset={charset}"})
        assert got.status_code == 200 and got.json() == base, (charset, got.text[:300])
    for charset in ("foo", "base64", "unicode_escape"):
        err = assert_error(client.post("/v1/find", content=text.encode(), headers={
            "content-type": f"application/json; charset={charset}"}), 415, "unsupported_media_type", "content-type")
        assert f"charset={charset}" in err["message"] and "UTF-8" in err["message"], err
    body = text.encode("utf-8")
    err = assert_error(client.post("/v1/find", content=body, headers={"content-type": "application/json; charset=ascii"}),
                       400, "invalid_json")
    assert "charset=ascii" in err["message"] and f"0xc3 at byte {body.index(0xc3)}" in err["message"], err


def test_a_body_whose_declared_charset_decodes_to_a_lone_surrogate_is_a_400_naming_it(client):
    """A body in a declared charset whose bytes decode to a lone surrogate (UTF-7's `+2AA-` is U+D800), which no text
    holds and UTF-8 cannot carry, is the 400 `invalid_json` bytes not of the declared charset are, naming the charset,
    the code point and where. Before, re-encoding it as UTF-8 raised in the middleware: a 500 `internal_error`
    (found by sending bodies in every charset a client may declare)."""
    body = '{"prompt": "+2AA- x", "k": 1}'.encode("ascii")
    err = assert_error(client.post("/v1/find", content=body,
                                   headers={"content-type": "application/json; charset=utf-7"}), 400, "invalid_json")
    assert "charset=utf-7" in err["message"] and "U+D800" in err["message"] and "character 12" in err["message"], err
    ok = client.post("/v1/find", content='{"prompt": "caf+AOk-", "k": 1}'.encode("ascii"),
                     headers={"content-type": "application/json; charset=utf-7"})
    assert ok.status_code == 200 and ok.json()["query"]["k"] == 1, ok.text[:300]


def test_a_utf16_or_utf32_body_declaring_no_charset_is_refused_as_not_utf8(client):
    """A JSON body in UTF-16 or UTF-32 (with or without a byte order mark) whose content-type declares no charset (or
    charset=utf-8) is a 400 `invalid_json` naming the encoding it is in and saying to send UTF-8 or declare the
    charset: JSON between systems is UTF-8 (RFC 8259 §8.1), as SERVING.md says bodies are. Before, Python's json
    guessed the encoding from its first bytes and read it, so the server took bodies its own docs said it refused.
    Declared (`charset=utf-16`) it is read, and UTF-8 with a byte order mark is UTF-8."""
    text = json.dumps({"prompts": ["café menu"], "k": 2})
    want = client.post("/v1/find", content=text.encode("utf-8"), headers={"content-type": "application/json"})
    assert want.status_code == 200, want.text
    for coding, said in (("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"),
                         ("utf-32", "UTF-32"), ("utf-32-be", "UTF-32")):
        for ctype in ("application/json", "application/json; charset=utf-8"):
            err = assert_error(client.post("/v1/find", content=text.encode(coding), headers={"content-type": ctype}),
                               400, "invalid_json", says="not UTF-8")
            assert said in err["message"] and "charset=" in err["message"], (coding, err)
    got = client.post("/v1/find", content=text.encode("utf-16"),
                      headers={"content-type": "application/json; charset=utf-16"})
    assert got.status_code == 200 and got.json() == want.json(), got.text[:300]
    got = client.post("/v1/find", content=text.encode("utf-8-sig"), headers={"content-type": "application/json"})
    assert got.status_code == 200 and got.json() == want.json(), got.text[:300]


def test_a_streamed_body_over_the_limit_is_said_to_be_at_least_what_was_read(encoder):
    """A body without a Content-Length (chunked) is read only until it passes the limit, so its size is unknown:
    before, 413 said "more than N bytes" with N the bytes read, which is false when the body ends right there; now
    "at least N bytes". A declared Content-Length is said exactly."""
    def chunks():
        for _ in range(40):
            yield b" " * 8192

    with TestClient(create_app(Service(encoder=encoder))) as c:
        err = assert_error(c.post("/v1/find", content=chunks(), headers={"content-type": "application/json"}), 413,
                           "body_too_large", "body", says="the request body is at least ")
        read = int(err["message"].split("at least ")[1].split(" ")[0])
        assert LIMITS["max_body_bytes"] < read <= 40 * 8192 and "more than" not in err["message"]
        big = b" " * (LIMITS["max_body_bytes"] + 1)
        assert_error(c.post("/v1/find", content=big, headers={"content-type": "application/json"}), 413,
                     "body_too_large", "body", says=f"the request body is {len(big)} bytes;")


def test_an_error_echoing_a_lone_surrogate_is_valid_utf8_json(encoder):
    """An error whose message or field echoes user input holding a lone surrogate (a JSON "\\ud800" escape in a
    field name): before, encoding the answer raised UnicodeEncodeError and the client got a 500. Now the surrogate is
    written as its escape and the answer is the 4xx it should be, valid UTF-8 JSON."""
    from indexer.serve import error_body

    body = error_body("invalid_request", "unknown field '\ud800x'", "\ud800x")
    assert json.loads(json.dumps(body, ensure_ascii=False).encode("utf-8")) == {
        "error": {"code": "invalid_request", "message": "unknown field '\\ud800x'", "field": "\\ud800x"}}
    assert error_body("c", "plain é", "f") == {"error": {"code": "c", "message": "plain é", "field": "f"}}
    with TestClient(create_app(Service(encoder=encoder)), raise_server_exceptions=False) as c:
        r = c.post("/v1/find", content=b'{"prompts": ["x"], "\\ud800": 1}', headers={"content-type": "application/json"})
        err = assert_error(r, 422, "invalid_request", "\\ud800", says="unknown field")
        r.content.decode("utf-8")  # valid UTF-8
        assert "\\ud800" in err["message"]


def test_readyz_is_503_on_an_empty_index(encoder):
    with TestClient(create_app(Service(encoder=encoder))) as c:
        assert c.get("/healthz").status_code == 200
        err = assert_error(c.get("/readyz"), 503, "not_ready", says="index")
        checks = c.get("/readyz").json()["checks"]
        assert checks["index"]["ok"] is False and checks["encoder"]["ok"] is True and checks["vectors"]["ok"] is True
        assert_error(c.post("/v1/find", json={"prompts": [PROMPT]}), 404, "not_found", says="taskspace index")
        assert err["field"] is None


def test_an_empty_index_is_answered_with_advice_that_works_beside_this_server(encoder):
    """An empty embedded index under a server: the 404 of a query and /readyz say to stop the server and run
    `taskspace index` (or restart it with --worker-every); with --worker-every, that its worker has indexed no model
    yet. Before, "run `taskspace index` first", which beside the server that holds the embedded index stops at
    its index stage (another process holds it, exit 6)."""
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    with TestClient(create_app(Service(encoder=encoder))) as c:
        err = assert_error(c.post("/v1/find", json={"prompts": [PROMPT]}), 404, "not_found")
        assert err["message"].startswith("the index is empty: stop this server, run `taskspace index`"), err
        assert "--worker-every" in err["message"] and "first" not in err["message"]
        checks = c.get("/readyz").json()["checks"]
        assert checks["index"]["detail"] == checks["sql"]["detail"] == err["message"]
        assert_error(c.get("/v1/models"), 404, "not_found", says="stop this server")
    with open_store() as store, VectorStore.from_settings() as vectors:  # the worker's schedule, its thread not started
        with TestClient(create_app(Service(worker_schedule="6h", store=store, vectors=vectors, encoder=encoder))) as c:
            err = assert_error(c.post("/v1/find", json={"prompts": [PROMPT]}), 404, "not_found")
            assert err["message"].startswith("the index is empty: this server's indexing worker (6h) has indexed "
                                             "no model yet"), err
            assert c.get("/readyz").json()["checks"]["index"]["detail"] == err["message"]


def test_an_empty_index_its_running_worker_fills_is_a_503_asked_again(encoder):
    """`serve --worker-every` on an empty index: a query is a 503 saying the worker has indexed no model yet, with
    Retry-After (its next pass plus the last one's length), so a client (the page) asks again and gets the index once
    the worker publishes it. Before, a 404, which the page kept until it was reloaded (found walking the page)."""
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    with open_store() as store, VectorStore.from_settings() as vectors:
        svc = Service(worker_schedule="6s", store=store, vectors=vectors, encoder=encoder)
        with TestClient(create_app(svc)) as c:
            svc.start_worker()
            try:
                deadline = time.monotonic() + 60  # its first pass (no source) over, the worker waiting for the next
                while svc.worker.next_at is None and time.monotonic() < deadline:
                    time.sleep(0.05)
                for r in (c.post("/v1/find", json={"prompts": [PROMPT]}), c.get("/v1/models")):
                    assert_error(r, 503, "unavailable", says="this server's indexing worker (6s) has indexed no model")
                    # at most the next pass's start (6 s away) plus the first pass's length
                    assert 1 <= int(r.headers["retry-after"]) <= math.ceil(6 + svc.passes[0]["seconds"]), r.headers
            finally:
                svc.stop_worker()


@pytest.mark.parametrize("removed", ["qdrant", "benchmarks"])
def test_readyz_is_503_when_the_embedded_index_was_removed_by_hand(client, removed):
    """The embedded index's folder (or one kind's) removed by hand under a running server: before, /readyz answered
    200 (the engine still answers from what it mapped, and the model count looked only at the models kind), though
    a restart would find no index. Now it is 503, naming the kinds missing and that `taskspace reindex` rebuilds
    them; read from the files as an indexing pass does (VectorStore.kinds_gone), the index not opened."""
    import shutil

    from indexer.config import get_settings

    root = Path(get_settings().qdrant_path)
    assert client.get("/readyz").status_code == 200
    shutil.rmtree(root if removed == "qdrant" else root / removed)
    err = assert_error(client.get("/readyz"), 503, "not_ready", says="`taskspace reindex --space ")
    # beside this server reindex stops at once (another process holds the embedded index): said (before: not)
    assert err["message"].endswith("run `taskspace reindex` with this server stopped (the embedded index is one "
                                   "process at a time)"), err["message"]
    want = "models and benchmarks and prompts" if removed == "qdrant" else "the benchmarks index"
    assert want in err["message"] and "missing" in err["message"], err["message"]
    checks = client.get("/readyz").json()["checks"]
    assert checks["index"]["ok"] is False and checks["vectors"]["ok"] is True and checks["sql"]["ok"] is True
    assert client.head("/readyz").status_code == 503


def test_readyz_with_the_database_unreachable_does_not_call_the_index_empty(client):
    """The SQL store cannot be reached (PostgreSQL restarted, at its connection limit, a network cut) under a server
    whose index is whole: /readyz is 503 with the sql check saying why, and the index check says it cannot be checked
    without SQL; before, it said "the index is empty: stop this server, run `taskspace index`, then start it again",
    advice that rebuilds nothing and stops a server that answers again as soon as the database does. When the
    database is back, /readyz is 200 again without a restart."""
    from indexer.store.sql_migrate import make_engine

    svc = client.service
    assert client.get("/readyz").status_code == 200
    engine = svc.store.engine
    svc.store.engine = make_engine("postgresql+psycopg://nobody@127.0.0.1:1/none")  # connection refused at once
    try:
        err = assert_error(client.get("/readyz"), 503, "not_ready", says="sql: cannot use the database")
        checks = client.get("/readyz").json()["checks"]
        assert checks["sql"]["ok"] is False and checks["index"]["ok"] is False
        assert "empty" not in err["message"] and "taskspace index" not in err["message"], err["message"]
        assert checks["index"]["detail"].startswith("cannot be checked: the SQL store cannot be read"), checks["index"]
    finally:
        svc.store.engine.dispose()
        svc.store.engine = engine
    assert client.get("/readyz").status_code == 200


@pytest.mark.parametrize("removed", ["qdrant", "benchmarks", "prompts"])
def test_a_query_on_a_missing_index_is_503_saying_reindex_rebuilds_it(indexed, encoder, removed):
    """The embedded index (or one kind's folder) removed before the server starts, SQL intact: every query kind
    that needs what is gone is 503 `unavailable` saying `taskspace reindex` rebuilds it. Before, 404 `not_found`,
    which for a benchmark query read as an unknown benchmark; a query of a kind still there answers. The prompts
    collection is needed by every kind (the options fill, coverage): before, its loss answered 200 as if the space
    had none (another ranking, every coverage unknown)."""
    import shutil

    from indexer.config import get_settings

    root = Path(get_settings().qdrant_path)
    shutil.rmtree(root if removed == "qdrant" else root / removed)
    svc = Service(encoder=encoder)
    with TestClient(create_app(svc), raise_server_exceptions=False) as c:
        dim = svc.store.list_spaces()[0].dim
        queries = {"benchmark": {"benchmark": "alpha"}, "prompts": {"prompts": [PROMPT]}, "vector": {"vector": [0.1] * dim}}
        for kind, body in queries.items():
            r = c.post("/v1/find", json=body)
            if removed == "benchmarks" and kind != "benchmark":
                assert r.status_code == 200, r.text
                continue
            err = assert_error(r, 503, "unavailable", says="`taskspace reindex --space ")
            assert err["message"].endswith("run `taskspace reindex` with this server stopped (the embedded index is "
                                           "one process at a time)"), err["message"]
            assert "is missing from" in err["message"] and (f"the {removed} index" in err["message"]
                                                            or removed == "qdrant"), err["message"]
        if removed == "qdrant":
            assert_error(c.get("/v1/models/org/m1"), 503, "unavailable", says="`taskspace reindex --space ")


def test_a_benchmark_ingested_beside_the_server_says_index_with_the_server_stopped(client, tmp_path):
    """A benchmark ingested (SQL only, `taskspace ingest`) while the server runs, not indexed yet: its query's 404
    says to run `taskspace index` with this server stopped; before, only "run `taskspace index`", which beside the
    server holding the embedded index stops at its index stage (exit 6)."""
    import numpy as np

    from helpers import outcomes, write_table
    from indexer.ingest import ingest

    write_table(tmp_path / "g", "gamma", outcomes(np.random.default_rng(0), ["org/m1"], 4), 4, offset=40)
    assert ingest(str(tmp_path / "g"), store=client.service.store, fetch_metadata=False).outcomes == 4
    err = assert_error(client.post("/v1/find", json={"benchmark": "gamma"}), 404, "not_found", "benchmark")
    assert "not indexed" in err["message"] and err["message"].endswith(
        "; run `taskspace index` with this server stopped (the embedded index is one process at a time)"), err


def test_the_encoder_loads_once_at_start_up(indexed, monkeypatch):
    import sentence_transformers

    from indexer import encoder as encoder_module

    monkeypatch.setattr(encoder_module, "_ENCODERS", {})
    real, loads = sentence_transformers.SentenceTransformer, []

    def counting(*args, **kwargs):
        loads.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", counting)
    with TestClient(create_app()) as c:  # the app opens the configured stores itself
        assert len(loads) == 1  # at start-up, before any query
        for i in range(3):
            assert c.post("/v1/find", json={"prompts": [f"{PROMPT} variant {i}"]}).status_code == 200
        assert len(loads) == 1


def test_over_a_real_socket(indexed, encoder):
    import httpx

    with ThreadServer(create_app(Service(encoder=encoder))) as url:
        with httpx.Client(base_url=url, timeout=30) as http:
            r = http.post("/v1/find", json={"prompts": [PROMPT], "k": 2})
            assert r.status_code == 200 and len(r.json()["results"]) == 2
            assert http.get("/readyz").json()["status"] == "ready"
            assert_error(http.get("/v1/models/nope"), 404, "not_found", "model")
            assert http.get("/").text.startswith("<!doctype html>")


def test_a_request_in_absolute_form_is_answered_as_the_path_it_names(indexed, encoder):
    """`GET http://host/v1/benchmarks HTTP/1.1` (absolute-form, as a client speaking through a proxy sends it; RFC 9112
    §3.2.2: a server MUST accept it) is answered as `GET /v1/benchmarks`, its query and a model id's escapes kept;
    before, uvicorn handed the app the whole URL as the path: 404 "no route /http://127.0.0.1:PORT/v1/benchmarks"."""
    import socket

    def raw(port: int, target: str) -> tuple[int, bytes]:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        return int(head.split()[1]), body

    with ThreadServer(create_app(Service(encoder=encoder))) as url:
        port = int(url.rsplit(":", 1)[1])
        want = raw(port, "/v1/benchmarks")
        assert want[0] == 200
        for scheme in ("http", "HTTP"):
            assert raw(port, f"{scheme}://127.0.0.1:{port}/v1/benchmarks") == want
        status, body = raw(port, f"http://127.0.0.1:{port}/v1/models?limit=1&offset=1")
        assert status == 200 and len(json.loads(body)["models"]) == 1, body
        status, body = raw(port, f"http://127.0.0.1:{port}/v1/models/org%2Fm1")
        assert status == 200 and json.loads(body)["model"] == "org/m1", body[:300]
        status, body = raw(port, f"http://127.0.0.1:{port}")  # no path: the root, as RFC 9112 §3.2.2 says of it
        assert status == 200 and body.startswith(b"<!doctype html>"), body[:200]


def test_many_concurrent_clients_are_answered_with_the_encoding_bounded(indexed, encoder, monkeypatch):
    """24 clients at once over a real socket, each with example prompts the cache does not hold: every answer is 200
    and equals the same query asked alone afterwards, and the model encodes at most `ENCODE_AT_ONCE` calls at once.
    Before, every request in the server's 40-thread pool encoded at once: 50 concurrent requests of 32 prompts of
    4,000 characters took the process to 11 GB (each call's activations), no faster than two at a time."""
    import uuid
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from indexer import encoder as encoder_module

    from sentence_transformers import SentenceTransformer

    real, lock = SentenceTransformer.encode, threading.Lock()
    seen = {"now": 0, "most": 0, "calls": 0}

    def counted(self, *args, **kwargs):  # the real model's encode, counting the calls in it at once
        with lock:
            seen["now"] += 1
            seen["calls"] += 1
            seen["most"] = max(seen["most"], seen["now"])
        try:
            time.sleep(0.05)  # long enough for the others to pile up behind the bound
            return real(self, *args, **kwargs)
        finally:
            with lock:
                seen["now"] -= 1

    monkeypatch.setattr(SentenceTransformer, "encode", counted)
    run = uuid.uuid4().hex  # prompts no earlier run cached
    bodies = [{"prompts": [f"{PROMPT} ({run} client {i} example {j})" for j in range(4)], "k": 3} for i in range(24)]
    with ThreadServer(create_app(Service(encoder=encoder))) as url:
        with httpx.Client(base_url=url, timeout=120, limits=httpx.Limits(max_connections=30)) as http:
            with ThreadPoolExecutor(24) as pool:
                answers = list(pool.map(lambda b: http.post("/v1/find", json=b), bodies))
            assert [r.status_code for r in answers] == [200] * 24, [r.text[:200] for r in answers if r.status_code != 200]
            assert seen["calls"] == 24 and 1 < seen["most"] <= encoder_module.ENCODE_AT_ONCE, seen
            for body, r in zip(bodies, answers):  # alone now (from the cache): the same answer
                assert _ranking(http.post("/v1/find", json=body).json()) == _ranking(r.json())


def _ranking(body: dict) -> list:
    return [(x["model"], x["score"], x["probability"], x["interval"], x["coverage"], x["evidence"]["benchmarks"])
            for x in body["results"]]


def test_a_query_during_an_index_pass_answers_from_the_previous_complete_index(indexed, encoder, monkeypatch):
    """A pass that re-solves every model, its Qdrant push slowed to 1.5 s (SQL already holds the new vectors and
    calibration then): every answer during the pass is exactly the one before it or the one after it."""
    import numpy as np

    from helpers import outcomes, write_table
    from indexer import sourcelist, sync
    from indexer.config import get_settings
    from indexer.sourcelist import SourceSpec

    real_push = sync.push_models

    def slow_push(*args, **kwargs):
        time.sleep(1.5)
        return real_push(*args, **kwargs)

    monkeypatch.setattr(sync, "push_models", slow_push)
    svc = Service(encoder=encoder)
    with TestClient(create_app(svc)) as c:
        queries = [{"prompts": [PROMPT], "k": 4}, {"benchmark": "alpha", "k": 4}]
        before = [c.post("/v1/find", json=q).json() for q in queries]
        write_table(indexed / "c", "gamma", outcomes(np.random.default_rng(9), MODELS, 20), 20, offset=40)
        sourcelist.add(get_settings().sources_file, [SourceSpec(str(indexed / "c"))])
        reports = []
        worker = threading.Thread(target=lambda: reports.append(svc.run_pass(threading.Event())))
        worker.start()
        during = []
        while worker.is_alive():
            for i, q in enumerate(queries):
                r = c.post("/v1/find", json=q)
                assert r.status_code == 200, r.text
                during.append((i, r.json()))
        worker.join()
        assert reports[0].status == "ok" and reports[0].counts["solved"] == 4 and reports[0].counts["pushed"] == 4
        after = [c.post("/v1/find", json=q).json() for q in queries]
        assert all(_ranking(a) != _ranking(b) for a, b in zip(after, before))  # the pass changed the answers
        assert len(during) >= 4
        for i, body in during:
            assert _ranking(body) in (_ranking(before[i]), _ranking(after[i]))
            if _ranking(body) == _ranking(after[i]):  # published: no result is of other results than its vector's
                assert not any(x["results_changed"] for x in body["results"])
        assert not any(x["results_changed"] for b in before + after for x in b["results"])
        assert svc.passes[-1]["publish_seconds"] >= 1.5  # queries waited for the publish, not for the pass
        assert c.get("/v1/benchmarks").json()["benchmarks"][-1]["name"] == "gamma"


@contextmanager
def _queries_waiting_on_a_publish(svc, url: str, n: int = 45):
    """The gate's write side held, as an index pass holds it while it publishes, with ``n`` GET /v1/benchmarks
    waiting on it; yields the list their statuses are appended to, once each is answered (after the gate is
    released on leaving, the queries are joined)."""
    import urllib.request

    answers: list[int] = []

    def query():
        with urllib.request.urlopen(url + "/v1/benchmarks", timeout=60) as r:
            answers.append(r.status)

    waiting = [threading.Thread(target=query, daemon=True) for _ in range(n)]
    svc.gate.acquire_write()
    try:
        for t in waiting:
            t.start()
        time.sleep(0.5)
        yield answers
    finally:
        svc.gate.release_write()
        for t in waiting:
            if t.ident is not None:  # started
                t.join(60)


def test_healthz_and_the_page_answer_while_queries_wait_for_a_publish(indexed, encoder):
    """While an index pass holds the gate (its publish), /healthz still answers at once, however many queries wait;
    before, it ran in the same thread pool as the queries (40 threads), so 45 waiting requests left a liveness probe
    without an answer until the publish ended (a probe's timeout kills the server mid-publish)."""
    import urllib.request

    svc = Service(encoder=encoder)
    with ThreadServer(create_app(svc)) as url:
        with _queries_waiting_on_a_publish(svc, url) as answers:
            with urllib.request.urlopen(url + "/healthz", timeout=3) as r:
                assert json.load(r) == {"status": "ok"}
            assert answers == []  # the queries still wait for the publish
            # the search page and its files load meanwhile (before: they waited in the same thread pool)
            for path in ("/", "/static/app.js", "/static/app.css"):
                with urllib.request.urlopen(url + path, timeout=3) as r:
                    assert r.status == 200 and r.read()
    assert answers == [200] * 45


def test_readyz_answers_at_once_while_queries_wait_for_a_publish(indexed, encoder):
    """While an index pass publishes (the gate's write side held) and queries wait for it, /readyz answers at once, 200,
    from the checks made before the publish and saying a publish is under way; after it, from the stores again. Before,
    it read the stores under the gate's read side in the queries' thread pool: it waited for the publish (2.3 s under
    4 clients on the sample, longer on a large index), so a readiness probe with a 1 s timeout failed during each
    publish and a load balancer took the only server out of service, though every query was about to be answered."""
    import urllib.request

    svc = Service(encoder=encoder)  # the pass's hold on the gate is taken below
    with ThreadServer(create_app(svc)) as url:
        with urllib.request.urlopen(url + "/readyz", timeout=60) as r:  # checked once before the pass
            before = json.load(r)["checks"]
        with _queries_waiting_on_a_publish(svc, url) as answers:
            with urllib.request.urlopen(url + "/readyz", timeout=3) as r:
                assert r.status == 200
                during = json.load(r)
            assert answers == []  # the queries still wait for the publish
        with urllib.request.urlopen(url + "/readyz", timeout=60) as r:
            after = json.load(r)["checks"]
    assert answers == [200] * 45
    assert during["status"] == "ready" and "an index pass is publishing" in during["checks"]["index"]["detail"], during
    assert {k: v["ok"] for k, v in during["checks"].items()} == {k: v["ok"] for k, v in before.items()}
    assert "publishing" not in after["index"]["detail"] and after["index"]["detail"] == before["index"]["detail"]


def test_the_worker_runs_in_the_server_process(indexed, encoder):
    """--worker-every: the first pass runs at start-up in a thread of the server, through the server's stores
    (the embedded index has one owner), while the API answers; shutdown stops it."""
    svc = Service(encoder=encoder, worker_schedule="1h")
    with TestClient(create_app(svc)) as c:
        def answers():
            assert c.post("/v1/find", json={"prompts": [PROMPT]}).status_code == 200
            time.sleep(0.05)

        _first_pass_ok(svc, 120, answers)
        checks = c.get("/readyz").json()["checks"]
        assert checks["worker"]["ok"] and "1 pass(es)" in checks["worker"]["detail"]
    assert svc._thread is None and svc.worker.stop.is_set()


def test_failing_in_process_passes_show_as_failed_and_only_the_recent_ones_are_kept(indexed, encoder):
    """Passes of the server's worker that fail (a sources.toml broken by hand, every pass): each shows as `failed` in
    `/readyz` (the last one's status) and only the 20 most recent are listed; before, their status was None ("the
    last None") and, since only a pass that finished trimmed the list, a worker failing for days listed every pass."""
    from indexer.config import get_settings
    from indexer.errors import ConfigError

    get_settings().sources_file.write_text("garbage = = \n")
    svc = Service(encoder=encoder)
    with TestClient(create_app(svc)) as c:
        for _ in range(23):
            with pytest.raises(ConfigError):
                svc.run_pass(threading.Event())
        svc.worker_schedule = "1h"  # as with --worker-every (the thread is not started: the passes ran above)
        checks = c.get("/readyz").json()["checks"]
    assert len(svc.passes) == 20 and svc.passes_done == 23
    assert {p["status"] for p in svc.passes} == {"failed"} and all(p.get("run_id") is None for p in svc.passes)
    assert "the last failed" in checks["worker"]["detail"] and len(checks["worker"]["passes"]) == 20
    from indexer.errors import BusyError
    from indexer.store.sql import open_store

    get_settings().sources_file.write_text("")
    with open_store() as other, other.lock("index"):  # another process's pass: this one is busy, not failed
        with pytest.raises(BusyError):
            svc.run_pass(threading.Event())
    assert svc.passes[-1]["status"] == "busy"
    # who holds it, without the command's advice to retry: this server's worker tries again by itself
    assert "holds the 'index' lock" in svc.passes[-1]["error"] and "retry" not in svc.passes[-1]["error"], svc.passes


def test_a_pass_is_listed_with_its_own_status_from_the_moment_it_is_listed(indexed, encoder):
    """The worker's pass entry is whole when it is listed: what it holds as it is appended to the passes /readyz reads
    (recorded here from inside the list's append) is the pass's own status and run. Before, an ok pass was listed
    "failed" and given its status a moment later, so a /readyz in between said "the last failed" (and gave no
    Retry-After, a failed pass not counting as a pass's length), and a test waiting for the first pass
    (`_first_pass_ok`, which checks its status as soon as it is listed) could find it failed."""
    svc = Service(encoder=encoder)
    listed = []

    class Passes(list):
        def append(self, entry):
            listed.append(dict(entry))
            super().append(entry)

    svc.passes = Passes()
    with TestClient(create_app(svc)):
        svc.worker_schedule = "1h"  # as with --worker-every (the thread is not started: the pass runs below)
        report = svc.run_pass(threading.Event())
        detail = svc.readiness()["worker"]["detail"]
    assert report.status == "ok" and listed == [svc.passes[0]], (listed, svc.passes)
    assert listed[0]["status"] == "ok" and listed[0]["run_id"] == report.run_id, listed
    assert "every 1h; 1 pass(es) done; the last ok" in detail, detail


def test_readyz_says_why_the_workers_last_pass_failed(tmp_path, encoder):
    """An in-process pass that raises (here sources.toml is not TOML) is listed in /readyz's worker check as failed,
    with its error; before, "the last None, 0.0 s" and a pass entry without status, the error only in the log."""
    from indexer.config import get_settings
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    home = get_settings().home
    home.mkdir(parents=True, exist_ok=True)
    (home / "sources.toml").write_text("source = [ { spec = \n")
    with open_store() as store, VectorStore.from_settings() as vectors:
        svc = Service(worker_schedule="6h", store=store, vectors=vectors, encoder=encoder)
        with pytest.raises(Exception, match="not valid TOML"):
            svc.run_pass(threading.Event())
        worker = svc.readiness()["worker"]
    assert worker["passes"][-1]["status"] == "failed" and "not valid TOML" in worker["passes"][-1]["error"]
    assert "; the last failed (" in worker["detail"] and "sources.toml: not valid TOML" in worker["detail"]
    assert "None" not in worker["detail"], worker


def test_a_pass_that_cannot_open_the_database_is_listed_as_failed_in_readyz(indexed, encoder, monkeypatch):
    """The database gone for a moment (PostgreSQL refusing connections): the in-process passes meanwhile fail at opening
    their connection, and /readyz's worker check lists each as failed with why, and counts it; once the database
    answers, the next pass is ok and the failed ones stay in its recent passes. Before, a pass failing there was
    neither listed nor counted: during a 10 s outage five passes failed (the log said so) while the worker check said
    "the last ok", and afterwards /readyz showed only ok passes."""
    from indexer.errors import StoreError
    from indexer.store import sql

    svc = Service(encoder=encoder)
    with TestClient(create_app(svc)) as c:
        svc.worker_schedule = "1h"  # as with --worker-every (the thread is not started: the passes run below)
        real = sql.open_store

        def refused(*a, **k):
            raise StoreError("cannot use the database at postgresql://db/x: connection failed: database \"x\" is not "
                             "currently accepting connections")

        monkeypatch.setattr(sql, "open_store", refused)
        for _ in range(2):
            with pytest.raises(StoreError):
                svc.run_pass(threading.Event())
        worker = svc.readiness()["worker"]
        assert svc.passes_done == 2 and [p["status"] for p in svc.passes] == ["failed", "failed"], svc.passes
        assert "2 pass(es) done; the last failed (cannot use the database" in worker["detail"], worker
        assert not svc.pass_running
        monkeypatch.setattr(sql, "open_store", real)
        assert svc.run_pass(threading.Event()).status == "ok"
        assert [p["status"] for p in c.get("/readyz").json()["checks"]["worker"]["passes"]] == ["failed", "failed", "ok"]
        assert c.post("/v1/find", json={"prompts": [PROMPT]}).status_code == 200

def test_readyz_says_the_worker_stopped_on_a_permanent_error_why_and_what_to_do(indexed, encoder, monkeypatch):
    """`taskspace serve --worker-every` whose in-process worker stopped on an error no later pass can get past (the
    database lost its taskspace tables): /readyz's worker check is not ok and its detail says the worker stopped,
    the error's one line and to restart the server once it is fixed (the server keeps serving its last index), as
    the log line says. Before, the detail gave the schedule and the pass counts ("every 1h; 1 pass(es) done; the
    last failed (...)"), as for a worker that would run again at its next pass."""
    from indexer.errors import SchemaError
    from indexer.store import sql
    from indexer.store.vectors import VectorStore

    with sql.open_store() as store, VectorStore.from_settings() as vectors:
        def gone(*a, **k):
            raise SchemaError("the database at postgresql://db/x has no taskspace tables: run `taskspace db upgrade`")

        monkeypatch.setattr(sql, "open_store", gone)
        svc = Service(encoder=encoder, worker_schedule="1h", store=store, vectors=vectors)
        with TestClient(create_app(svc)) as c:
            svc.start_worker()  # as Service.start does with --worker-every (the stores are given here)
            svc._thread.join(60)
            assert not svc._thread.is_alive()
            r = c.get("/readyz")
            assert c.post("/v1/find", json={"prompts": [PROMPT]}).status_code == 200  # it keeps serving
    worker = r.json()["checks"]["worker"]
    assert r.status_code == 503 and worker["ok"] is False, r.json()
    detail = worker["detail"]
    assert "stopped" in detail and "has no taskspace tables: run `taskspace db upgrade`" in detail, detail
    assert "restart" in detail and "keeps serving its last index" in detail, detail


def test_cli_serve_rejects_a_bad_schedule_in_one_line():
    for args in (["--worker-every", "soon"], ["--cron", "61 * * * *"], ["--every", "1h", "--cron", "@daily"]):
        r = subprocess.run([TASKSPACE, "serve", *args], capture_output=True, text=True, timeout=120)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.strip().count("\n") == 0 and r.stderr.startswith("error:"), r.stderr


@pytest.mark.postgres
def test_a_query_whose_database_session_is_ended_is_asked_again(pg_url, tmp_path, encoder, monkeypatch):
    """PostgreSQL ending the session a query runs on (a restart or failover, `pg_terminate_backend`) in the middle of
    the query: the server asks again on a fresh connection and answers 200, as the query answers after; before, 503
    "reading from the database failed: terminating connection ..." for every query in flight. A session ended on the
    second try too is still the 503 saying so."""
    from indexer.config import reset_settings
    from indexer.store.sql import Store

    monkeypatch.setenv("TASKSPACE_DATABASE_URL", pg_url)
    reset_settings()
    Store(pg_url, upgrade=True).close()
    build_index(tmp_path, encoder)
    svc = Service(encoder=encoder)
    with TestClient(create_app(svc), raise_server_exceptions=False) as c:
        want = c.post("/v1/find", json={"prompts": [PROMPT], "k": 3}).json()
        states, ended = svc.store.space_states, []

        def ended_once(*args, **kwargs):  # the session ends under the query (here: its own backend terminated)
            if len(ended) < times:
                ended.append(1)
                with svc.store._read() as conn:
                    conn.connection().exec_driver_sql("select pg_terminate_backend(pg_backend_pid())")
            return states(*args, **kwargs)

        monkeypatch.setattr(svc.store, "space_states", ended_once)
        times = 1
        r = c.post("/v1/find", json={"prompts": [PROMPT], "k": 3})
        assert r.status_code == 200 and r.json() == want and ended == [1], r.text
        ended.clear()
        times = 2
        assert_error(c.post("/v1/find", json={"prompts": [PROMPT], "k": 3}), 503, "unavailable",
                     says="the server ended the session")


@pytest.mark.postgres
def test_routes_and_an_in_process_pass_on_postgresql(pg_url, tmp_path, encoder, monkeypatch):
    """The same app over PostgreSQL (the production SQL store): find, browse, readiness, and a pass run by the
    server's worker thread while it answers."""
    import numpy as np

    from helpers import outcomes, write_table
    from indexer import sourcelist
    from indexer.config import get_settings, reset_settings
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import Store

    monkeypatch.setenv("TASKSPACE_DATABASE_URL", pg_url)
    reset_settings()
    Store(pg_url, upgrade=True).close()
    build_index(tmp_path, encoder)
    svc = Service(encoder=encoder)
    with TestClient(create_app(svc)) as c:
        assert c.get("/readyz").json()["checks"]["sql"]["ok"]
        before = c.post("/v1/find", json={"benchmark": "alpha", "k": 4}).json()
        assert [x["model"] for x in before["results"]] and c.get("/v1/models/org/m2").json()["hub_id"] == "org/m2"
        assert len(c.get("/v1/models").json()["models"]) == 4
        write_table(tmp_path / "c", "gamma", outcomes(np.random.default_rng(3), MODELS, 10), 10, offset=40)
        sourcelist.add(get_settings().sources_file, [SourceSpec(str(tmp_path / "c"))])
        svc.worker_schedule = "1h"
        svc.start_worker()
        def answers():
            assert c.post("/v1/find", json={"benchmark": "alpha", "k": 4}).status_code == 200

        _first_pass_ok(svc, meanwhile=answers)
        assert "gamma" in {b["name"] for b in c.get("/v1/benchmarks").json()["benchmarks"]}
        assert c.post("/v1/find", json={"benchmark": "gamma", "k": 4}).status_code == 200


def test_cli_serve_on_an_index_another_process_holds_is_one_line_exit_6(indexed, encoder):
    from servehelpers import free_port

    with ThreadServer(create_app(Service(encoder=encoder))):  # this process holds the embedded index
        r = subprocess.run([TASKSPACE, "serve", "--port", str(free_port())], capture_output=True, text=True,
                           timeout=120)
    assert r.returncode == 6, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.startswith("error:")]
    assert len(lines) == 1 and "another taskspace process is using the index" in lines[0]
    assert "Traceback" not in r.stderr and "serving http" not in r.stderr  # it never served: it does not say it does


def test_cli_serve_says_the_url_it_serves(tmp_path):
    """`taskspace serve` names the URL it listens on as bound: `--port 0` the port the system picked, an IPv6 host
    in brackets; before, "serving http://127.0.0.1:0/" and "serving http://::1:8000/", URLs no client can open. A
    client that connects as soon as the line is said is answered (before: refused until uvicorn had started)."""
    import os
    import urllib.request

    proc = subprocess.Popen([TASKSPACE, "serve", "--port", "0"], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TASKSPACE_HOME": str(tmp_path / "home")})
    try:
        line = next(x for x in proc.stderr if x.startswith("serving ") or x.startswith("error:"))
        url = line.split()[1]
        assert url.startswith("http://127.0.0.1:") and not url.startswith("http://127.0.0.1:0/"), line
        # at once: the address listens when the line is said (before: connection refused until uvicorn had started)
        with urllib.request.urlopen(url + "healthz", timeout=60) as r:
            assert json.load(r) == {"status": "ok"}
    finally:
        proc.terminate()
        proc.wait(60)
    from indexer.serve import listen_socket, served_url

    try:
        sock = listen_socket("::1", 0)
    except Exception:  # noqa: BLE001 - no IPv6 loopback here
        pytest.skip("no IPv6 loopback")
    with sock:
        assert served_url(sock) == f"http://[::1]:{sock.getsockname()[1]}/"
    with listen_socket("", 0) as sock:
        assert served_url(sock).startswith("http://0.0.0.0:")


def test_a_host_given_as_a_url_or_with_a_port_is_said_so():
    """`--host localhost:8000`, `--host http://localhost`: a configuration error saying to give the host alone and
    the port with --port; `--host [::1]` (an IPv6 address as a URL writes it) listens on ::1. Before, "cannot listen
    on localhost:8000:8000: Name or service not known; check --host and --port", and `[::1]` was "not known"."""
    from indexer.errors import ConfigError
    from indexer.serve import listen_socket, served_url

    for host in ("localhost:8000", "http://localhost", "127.0.0.1:9000", "http://[::1]:8000/"):
        with pytest.raises(ConfigError) as caught:
            listen_socket(host, 0)
        assert str(caught.value) == (f"--host {host!r} is not an address: give the host alone (e.g. 127.0.0.1, "
                                     "0.0.0.0 or ::1) and the port with --port")
    with listen_socket(" 127.0.0.1 ", 0) as sock:
        assert served_url(sock).startswith("http://127.0.0.1:")
    try:
        sock = listen_socket("[::1]", 0)
    except ConfigError as exc:  # no IPv6 loopback here: the error is not about the brackets
        assert "not an address" not in str(exc)
        return
    with sock:
        assert served_url(sock).startswith("http://[::1]:")


def test_cli_serve_on_a_port_in_use_is_one_line_exit_2(tmp_path):
    """`taskspace serve --port P` where P is taken (another server) is one `error:` line naming the address and
    saying to give another --port, exit 2 (configuration), before the stores or the encoder load. Before, the
    encoder loaded, the server said it was serving, uvicorn logged its own `ERROR: [Errno 98] ...` and the process
    exited 3, the code of a storage error."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = subprocess.run([TASKSPACE, "serve", "--port", str(port)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use; another server uses that port: give "
        "another --port"], r.stderr
    r = subprocess.run([TASKSPACE, "serve", "--host", "nosuch.invalid", "--port", "0"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("error: cannot listen on nosuch.invalid:0: "), r.stderr
    assert "check --host and --port" in r.stderr and r.stderr.strip().count("\n") == 0


def test_cors_origins_may_call_the_api_from_a_browser_and_others_get_no_cors_headers(indexed, encoder):
    """`taskspace serve --cors-origin URL`: a page of that origin may call the API from a browser (a preflight is
    answered, every answer carries Access-Control-Allow-Origin); another origin gets no such header (the browser
    refuses it); without the option no answer carries one. An origin a browser never sends (with a path, another
    scheme, no host) is a configuration error naming it, before anything starts."""
    from indexer.errors import ConfigError
    from indexer.serve import cors_origins

    app_origin = "https://app.example.org"
    with TestClient(create_app(Service(encoder=encoder), cors=[app_origin, app_origin + " "])) as c:
        pre = c.options("/v1/find", headers={"Origin": app_origin, "Access-Control-Request-Method": "POST",
                                             "Access-Control-Request-Headers": "content-type"})
        assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == app_origin
        assert "POST" in pre.headers["access-control-allow-methods"]
        r = c.post("/v1/find", json={"prompts": [PROMPT], "k": 2}, headers={"Origin": app_origin})
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == app_origin
        # a 503's Retry-After is readable by that page's script (not a CORS-safelisted header: before, hidden from it)
        assert r.headers["access-control-expose-headers"] == "Retry-After", r.headers
        err = c.post("/v1/find", json={"prompts": [""]}, headers={"Origin": app_origin})  # errors too
        assert err.status_code == 422 and err.headers["access-control-allow-origin"] == app_origin
        other = c.get("/v1/models", headers={"Origin": "https://elsewhere.example"})
        assert other.status_code == 200 and "access-control-allow-origin" not in other.headers
    with TestClient(create_app(Service(encoder=encoder))) as c:
        plain = c.get("/v1/models", headers={"Origin": app_origin})
        assert plain.status_code == 200 and "access-control-allow-origin" not in plain.headers
    assert cors_origins(["*", "http://localhost:3000", "http://localhost:3000"]) == ["*", "http://localhost:3000"]
    for bad in ("https://app.example.org/", "app.example.org", "ftp://x.org", "https://x.org/page", "http://:80",
                "http://x.org:0", "http://x.org:99999"):
        with pytest.raises(ConfigError, match="is not an origin"):
            cors_origins([bad])


def test_a_refused_cors_preflight_is_an_error_of_the_one_shape_naming_what_was_refused(indexed, encoder):
    """A browser's preflight the server refuses (`--cors-origin` given, another origin, a method or a header it does not
    allow) is still a 400, which a browser reads as a refusal (it needs an ok status and Access-Control-Allow-Origin,
    Fetch standard), but in the API's one error shape, `field` the request header at fault and the message saying
    what was refused and what is allowed; before, Starlette's plain text "Disallowed CORS origin", the one answer of
    the API that was not JSON. An allowed preflight is answered as before, and carries the security headers."""
    from indexer.serve import SECURITY_HEADERS

    app_origin = "https://app.example.org"
    with TestClient(create_app(Service(encoder=encoder), cors=[app_origin])) as c:
        def preflight(origin, method="POST", headers="content-type"):
            return c.options("/v1/find", headers={"Origin": origin, "Access-Control-Request-Method": method,
                                                  "Access-Control-Request-Headers": headers})

        ok = preflight(app_origin)
        assert ok.status_code == 200 and ok.headers["access-control-allow-origin"] == app_origin
        # each allowed header named once (before: "Accept, Accept-Language, Content-Language, Content-Type,
        # content-type", and a refusal's "it allows ..., content-type, content-type")
        assert ok.headers["access-control-allow-headers"] == "Accept, Accept-Language, Content-Language, Content-Type"
        refused = preflight(app_origin, headers="X-Api-Key").json()["error"]["message"]
        assert refused.endswith("(it allows accept, accept-language, content-language, content-type)"), refused
        for r, field, says in (
                (preflight("https://elsewhere.example"), "origin",
                 "origin 'https://elsewhere.example' is not allowed"),
                (preflight(app_origin, method="DELETE"), "access-control-request-method",
                 "method 'DELETE' is not allowed (it allows GET, HEAD, POST)"),
                (preflight(app_origin, headers="content-type, X-Api-Key"), "access-control-request-headers",
                 "header 'x-api-key' not allowed")):
            err = assert_error(r, 400, "cors_refused", field, says=says)
            assert err["message"].startswith("CORS preflight refused: "), err
            assert "access-control-allow-origin" not in r.headers or field != "origin"
            assert all(r.headers.get(k) == v for k, v in SECURITY_HEADERS.items()), r.headers
        both = preflight("https://elsewhere.example", method="PUT")
        err = assert_error(both, 400, "cors_refused", "origin", says="method 'PUT' is not allowed")
        assert "origin 'https://elsewhere.example' is not allowed" in err["message"]


def test_a_cors_preflight_is_answered_for_the_server_not_the_route(indexed, encoder):
    """A browser's preflight (OPTIONS with Origin and Access-Control-Request-Method) asks whether the page's origin may
    send that method and those headers; it is answered the same for every path, as Starlette's CORSMiddleware does
    (200 or 400). With `--cors-origin`, one to an unknown route is 200: a non-2xx preflight is a network error to the
    page's script (fetch rejects, the status hidden), while after a 200 the request itself is sent and its 404, in the
    one error shape with Access-Control-Allow-Origin, tells the script there is no such route. Without
    `--cors-origin` every preflight is the 400 `cors_refused` naming `origin` and the option that allows it; before,
    405 "method OPTIONS is not allowed on /v1/find (it takes POST)" (or a 404 for an unknown route), which sent a
    developer looking at the method, not at the server's CORS."""
    app_origin = "https://app.example.org"
    ask = {"Origin": app_origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
    with TestClient(create_app(Service(encoder=encoder), cors=[app_origin])) as c:
        for path in ("/v1/find", "/v1/fnd", "/nope/deeper"):
            pre = c.options(path, headers=ask)
            assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == app_origin, (path, pre.text)
        r = c.post("/v1/fnd", json={"prompts": [PROMPT]}, headers={"Origin": app_origin})
        assert_error(r, 404, "not_found", says="no route /v1/fnd")  # what the page's script reads after the 200
        assert r.headers["access-control-allow-origin"] == app_origin
        assert_error(c.options("/v1/fnd", headers={**ask, "Origin": "https://elsewhere.example"}), 400, "cors_refused",
                     "origin")
    with TestClient(create_app(Service(encoder=encoder))) as c:
        for path in ("/v1/find", "/v1/models", "/v1/fnd"):
            r = c.options(path, headers=ask)
            err = assert_error(r, 400, "cors_refused", "origin",
                               says="CORS preflight refused: this server allows no cross-origin calls from a browser")
            assert "taskspace serve --cors-origin" in err["message"] and "access-control-allow-origin" not in r.headers
        # an OPTIONS that is no preflight (no Access-Control-Request-Method) is the route's, as before
        assert_error(c.options("/v1/find", headers={"Origin": app_origin}), 405, "method_not_allowed")
        assert_error(c.options("/v1/fnd"), 404, "not_found")


def test_serve_refuses_a_bad_cors_origin_before_it_starts(tmp_path):
    proc = subprocess.run([TASKSPACE, "serve", "--port", "0", "--cors-origin", "https://app.example.org/"],
                          capture_output=True, text=True, timeout=60,
                          env={**__import__("os").environ, "TASKSPACE_HOME": str(tmp_path / "home")})
    assert proc.returncode == 2 and "--cors-origin 'https://app.example.org/' is not an origin" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "home").exists()


def test_a_long_name_or_many_names_are_quoted_cut_in_an_error(client):
    """A long value or name the client sent (a 100,000-character `rank`, `space`, unknown field or filter) is quoted cut
    in its error, as a long benchmark or model name is ("'bbbb...' is longer than 512 characters"), and many unknown
    names are counted past the first few. Before, the whole value came back in the message (and again in `field`):
    `"rank": "r" * 100000` answered 100,115 bytes, an unknown field of 100,000 characters 200,194, an unknown filter
    300,204, 10,000 unknown filters a list of every one. Found walking the API on the 32,823-model home."""
    long = "x" * 100000
    cases = (({"prompts": [PROMPT], "rank": long}, 422, "rank"), ({"prompts": [PROMPT], "space": long}, 404, "space"),
             ({"prompts": [PROMPT], long: 1}, 422, long), ({"prompts": [PROMPT], "filters": {long: 1}}, 422,
                                                           f"filters.{long}"),
             ({"prompts": [PROMPT], **{f"f{i}": 1 for i in range(5000)}}, 422, "f0"),
             ({"prompts": [PROMPT], "filters": {f"f{i}": 1 for i in range(5000)}}, 422, "filters"))
    for body, status, field in cases:
        r = client.post("/v1/find", json=body)
        assert r.status_code == status and r.json()["error"]["field"] == field, r.text[:300]
        message = r.json()["error"]["message"]
        assert len(message) < 700 and ("100,000 characters" in message or "0 more" in message or "9 more" in message), message
    err = assert_error(client.get("/v1/models", params={"space": "x" * 5000}), 404, "not_found", "space")
    assert len(err["message"]) < 700 and "5,000 characters" in err["message"], err["message"]
    err = assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "rank": "LCB"}), 422, "invalid_input", "rank")
    assert err["message"] == "rank: unknown ranking 'LCB'; use one of probability, lcb"  # a short one whole


def test_a_name_written_twice_in_the_body_is_named_not_taken_last(client):
    """`{"prompts": [...], "k": 5, "k": 50}`: JSON leaves a repeated name's meaning open and the parser kept the last,
    so the answer was for k=50 without a word. Now 422 naming it (its path inside the body), for nested objects too;
    the same name in two different objects is fine."""
    def post(text):
        return client.post("/v1/find", content=text.encode(), headers={"content-type": "application/json"})

    err = assert_error(post(f'{{"prompts": ["{PROMPT}"], "k": 5, "k": 50}}'), 422, "invalid_input", "k")
    assert "written twice in one JSON object" in err["message"]
    assert_error(post(f'{{"prompts": ["{PROMPT}"], "filters": {{"max_params": "8B", "max_params": "80B"}}}}'), 422,
                 "invalid_input", "filters.max_params")
    ok = post(f'{{"prompts": ["{PROMPT}"], "k": 2, "filters": {{"k": 1}}}}')  # one 'k' per object: no repeat there
    assert ok.status_code == 422 and ok.json()["error"]["field"] == "filters.k"  # (an unknown filter, said as such)
    assert post(f'{{"prompts": ["{PROMPT}"], "k": 2}}').status_code == 200
    assert_error(post('{"prompts": ['), 400, "invalid_json")  # a body that does not parse keeps its own error


def test_a_number_that_is_not_finite_is_named_as_not_json(client):
    """`NaN`, `Infinity` and `-Infinity` are not JSON, but Python's parser reads them, so the library was handed a
    `nan` and answered "k must be a positive integer, not nan", "prefer_smaller must be a number from 0 to 100 (e.g.
    0.1), not inf", or for a whole vector of NaN "the query vector has NaN/inf entries": words for a value the client
    never wrote, not what to change. `1e999` is JSON but past a double's range (read as inf). Now 422 naming the
    number's path in the body and saying to send a finite number."""
    def post(text):
        return client.post("/v1/find", content=text.encode(), headers={"content-type": "application/json"})

    for body, field, literal in ((f'{{"prompts": ["{PROMPT}"], "k": NaN}}', "k", "NaN"),
                                 (f'{{"prompts": ["{PROMPT}"], "prefer_smaller": Infinity}}', "prefer_smaller", "Infinity"),
                                 (f'{{"prompts": ["{PROMPT}"], "filters": {{"max_params": -Infinity}}}}',
                                  "filters.max_params", "-Infinity"),
                                 ('{"vector": [0.5, NaN, 0.25]}', "vector[1]", "NaN")):
        err = assert_error(post(body), 422, "invalid_input", field)
        assert err["message"] == (f"{field}: {literal} is not a JSON number (JSON has no NaN or Infinity); send a "
                                  "finite number"), err
    err = assert_error(post(f'{{"prompts": ["{PROMPT}"], "k": 1e999}}'), 422, "invalid_input", "k")
    assert err["message"] == "k: 1e999 is past the range of a number (a double); send a finite number", err
    assert post(f'{{"prompts": ["{PROMPT}"], "prefer_smaller": 1e-3, "k": 2}}').status_code == 200  # finite: fine


def test_every_answer_carries_the_headers_a_public_page_should_send(client):
    """The page, its files, the API's answers and its errors (a 404, the body limit's 413, a 405) each carry a
    Content-Security-Policy allowing the page's own origin alone and no framing by another site, `X-Frame-Options:
    DENY`, `X-Content-Type-Options: nosniff` and a Referrer-Policy that keeps the page's URL (the user's task, `?q=`)
    from the Hub when a result's link is followed; before, none of them: the page could be framed by any site
    (clickjacking) and nothing stopped an answer being sniffed as another type."""
    answers = [client.get("/"), client.get("/static/app.js"), client.get("/static/app.css"), client.get("/v1/benchmarks"),
               client.head("/"), client.get("/v1/models/org/nope"), client.get("/v1/find"),
               client.post("/v1/find", content=b" " * (LIMITS["max_body_bytes"] + 1),
                           headers={"content-type": "application/json"}),
               client.post("/v1/find", json={"prompts": [PROMPT], "k": 2})]
    assert [r.status_code for r in answers] == [200, 200, 200, 200, 200, 404, 405, 413, 200]
    for r in answers:
        csp = r.headers.get("content-security-policy", "")
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, (r.request.url, dict(r.headers))
        assert r.headers.get("x-frame-options") == "DENY" and r.headers.get("x-content-type-options") == "nosniff"
        assert r.headers.get("referrer-policy") == "same-origin"


def test_a_body_sent_where_no_route_reads_one_gets_the_routes_405_or_404(client):
    """A body sent with a method or to a path no route reads a body for (`POST /v1/models`, `PUT /v1/find`, `POST
    /v1/fnd`) is answered as the method or path is, 405 naming the methods the route takes or 404, whatever its size,
    content-encoding or charset: 413 and 415 are `POST /v1/find`'s, as docs/SERVING.md and /openapi.json say. Before,
    the body's checks ran before any route was matched, so `POST /v1/models` with a 300 KB body was a 413 and `PUT
    /v1/find` with `charset=foo` a 415, statuses no route declares for them (found by sending bodies with wrong
    methods and paths)."""
    big = b" " * (LIMITS["max_body_bytes"] + 1)
    sent = ({"content": big, "headers": {"content-type": "application/json"}},
            {"content": b"{}", "headers": {"content-type": "application/json", "content-encoding": "gzip"}},
            {"content": b"{}", "headers": {"content-type": "application/json; charset=foo"}},
            {"content": '{"k": 1}'.encode("utf-16"), "headers": {"content-type": "application/json"}})
    for kw in sent:
        for method, path, allow in (("POST", "/v1/models", "GET, HEAD"), ("PUT", "/v1/find", "POST"),
                                    ("DELETE", "/v1/benchmarks", "GET, HEAD")):
            r = client.request(method, path, **kw)
            assert_error(r, 405, "method_not_allowed")
            assert r.headers["allow"] == allow, (method, path, dict(r.headers))
        assert_error(client.request("POST", "/v1/fnd", **kw), 404, "not_found", says="no route /v1/fnd")
        assert_error(client.request("POST", "/v1/find/", **kw), 404, "not_found", says="without the trailing slash")
    # POST /v1/find keeps them
    assert_error(client.post("/v1/find", **sent[0]), 413, "body_too_large", "body")
    assert_error(client.post("/v1/find", **sent[1]), 415, "unsupported_media_type", "content-encoding")
    assert_error(client.post("/v1/find", **sent[2]), 415, "unsupported_media_type", "content-type")
    assert_error(client.post("/v1/find", **sent[3]), 400, "invalid_json", says="UTF-16")


def test_a_get_is_answered_whatever_its_body_headers_say(client):
    """A GET reads no body, so its `Content-Encoding` or a body over the limit is about nothing the server reads: the
    answer is the route's, with a status /openapi.json declares for it; before, `GET /v1/benchmarks` with
    `content-encoding: gzip` was a 415 and with a 300 KB body a 413, neither declared for a GET route. A POST keeps
    both (its body is read)."""
    spec = client.get("/openapi.json").json()
    want = client.get("/v1/benchmarks").json()
    big = b" " * (LIMITS["max_body_bytes"] + 1)
    for path, route in (("/v1/benchmarks", "/v1/benchmarks"), ("/v1/models/org/m1", "/v1/models/{model_id}"),
                        ("/v1/models?limit=2", "/v1/models"), ("/", None)):
        for kw in ({"headers": {"content-encoding": "gzip"}}, {"content": big}):
            for method in ("GET", "HEAD"):
                r = client.request(method, path, **kw)
                assert r.status_code == 200, (method, path, r.status_code, r.text[:200])
                assert route is None or str(r.status_code) in spec["paths"][route]["get"]["responses"]
    assert client.request("GET", "/v1/benchmarks", content=big).json() == want
    assert_error(client.post("/v1/find", content=big, headers={"content-type": "application/json"}), 413,
                 "body_too_large", "body")
    assert_error(client.post("/v1/find", json={"prompts": [PROMPT]}, headers={"content-encoding": "gzip"}), 415,
                 "unsupported_media_type", "content-encoding")


def test_null_in_any_optional_field_is_its_default(client):
    """One rule for null in the `/v1/find` body: an optional field or filter written as `null` (a client serialising
    an unset option) is the field left out, its default, for every field of the body and every filter, as
    /openapi.json declares each (null among its types, the default beside it). Before, `"k": null` (and
    `prefer_smaller`, `rank`, `evidence`, `filters.open_only`, `filters.exclude_gated`) was a 422 while
    `"filters": null`, `"models": null` or `"filters": {"licenses": null}` was the default. `true`/`false` where a
    number or a name is taken stays a 422 with the default named."""
    spec = client.get("/openapi.json").json()
    body_schema = spec["paths"]["/v1/find"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    fields = body_schema["properties"]
    filters = spec["components"]["schemas"]["FindFilters"]["properties"]
    from indexer.serve import FIND_FIELDS

    assert set(fields) == set(FIND_FIELDS) and not body_schema.get("required")  # every field is optional
    queries = {"prompts", "prompt", "benchmark", "vector"}  # one of them is the query: another one gives it here
    for name in fields:
        base = {"benchmark": "alpha", "k": 3} if name in queries - {"benchmark"} else {"prompts": [PROMPT], "k": 3}
        if name == "k":
            base = {"prompts": [PROMPT]}
        without, with_null = client.post("/v1/find", json=base), client.post("/v1/find", json={**base, name: None})
        assert without.status_code == 200, (name, without.text)
        assert with_null.status_code == 200 and with_null.json() == without.json(), (name, with_null.text)
        assert {"type": "null"} in fields[name].get("anyOf", []), (name, fields[name])  # declared so
    for name in filters:
        base = {"prompts": [PROMPT], "k": 3}
        without = client.post("/v1/find", json={**base, "filters": {}})
        with_null = client.post("/v1/find", json={**base, "filters": {name: None}})
        assert without.status_code == 200, (name, without.text)
        assert with_null.status_code == 200 and with_null.json() == without.json(), (name, with_null.text)
        assert {"type": "null"} in filters[name].get("anyOf", []), (name, filters[name])
    from jsonschema import Draft202012Validator

    valid = Draft202012Validator({**body_schema, "components": spec["components"]}).is_valid
    assert valid({"prompts": [PROMPT], **{n: None for n in fields if n not in queries},
                  "filters": {n: None for n in filters}})
    # a null beside the query it would replace is no second query: "prompt": null with "prompts" given
    both = client.post("/v1/find", json={"prompts": [PROMPT], "prompt": None, "k": 3})
    assert both.status_code == 200 and both.json() == client.post("/v1/find", json={"prompts": [PROMPT], "k": 3}).json()
    # null entries of a list are no default: still named
    assert_error(client.post("/v1/find", json={"prompts": [PROMPT, None]}), 422, "invalid_input", "prompts[1]")
    for name, takes, default in (("k", "a positive integer, at most 100", "10"),
                                 ("prefer_smaller", "a number from 0 to 100", "0.0"),
                                 ("rank", "probability or lcb", "probability"),
                                 ("evidence", "an integer from 0 to 20", "3")):
        for value, said in ((True, "true"), (False, "false")):
            err = assert_error(client.post("/v1/find", json={"prompts": [PROMPT], name: value}), 422, "invalid_input",
                               name)
            assert err["message"] == (f"{name}: {said} is not a value of {name} ({takes}); leave {name} out (or null) "
                                      f"for its default ({default})"), err


def test_a_wrong_method_says_the_methods_the_route_takes_head_included(client):
    """A 405's Allow header (and its message) lists the methods the route takes: a GET route also HEAD, which every
    GET route answers (``_Head``); before, ``Allow: GET`` alone and a message naming none, so a client reading Allow
    took HEAD for refused."""
    for method, path, takes in (("POST", "/v1/models", "GET, HEAD"), ("DELETE", "/v1/models/org/m1", "GET, HEAD"),
                                ("POST", "/healthz", "GET, HEAD"), ("PUT", "/", "GET, HEAD"),
                                ("POST", "/static/app.css", "GET, HEAD"), ("GET", "/v1/find", "POST"),
                                ("DELETE", "/v1/find", "POST")):
        r = client.request(method, path)
        assert_error(r, 405, "method_not_allowed", says=f"method {method} is not allowed on {path} (it takes {takes})")
        assert r.headers["allow"] == takes, (method, path, r.headers.get("allow"))
    head = client.head("/v1/find")  # HEAD of the POST route: refused, the headers saying what it takes
    assert head.status_code == 405 and head.content == b"" and head.headers["allow"] == "POST"


def _first_pass_ok(svc, seconds: float = 180, meanwhile=None) -> None:
    """Wait until the server's worker has listed its first pass (calling ``meanwhile()`` while it waits, or
    sleeping), and check that it ended ok."""
    deadline = time.monotonic() + seconds
    while not svc.passes and time.monotonic() < deadline:
        meanwhile() if meanwhile else time.sleep(0.1)
    assert svc.passes and svc.passes[0]["status"] == "ok", svc.passes

def _hold_the_worker_pass(monkeypatch) -> tuple[threading.Event, threading.Event]:
    """(reached, go): the worker thread's pass waits at its read of the space's calibration map (after its ingest,
    before it writes anything a query reads) until ``go`` is set; ``reached`` is set when it is there."""
    from indexer.store.sql_derived import DerivedMixin

    reached, go = threading.Event(), threading.Event()
    original = DerivedMixin.get_space_calibration

    def held(self, space_id):
        if threading.current_thread().name == "taskspace-worker":
            reached.set()
            go.wait(120)
        return original(self, space_id)

    monkeypatch.setattr(DerivedMixin, "get_space_calibration", held)
    return reached, go

def test_a_query_during_the_workers_first_pass_says_the_worker_is_building_the_index(tmp_path, encoder, monkeypatch):
    """`serve --worker-every` on a home with sources and no index: once its first pass has written the space to SQL
    (held here at its solve stage, as a large first pass spends minutes there), a query and /readyz are 503 saying
    this server's worker is building the index (its first pass is running); the pass then publishes and the query
    answers. Before, they said the index "is missing" and to run `taskspace reindex` with this server stopped, which
    would stop the pass that was building it."""
    import numpy as np

    from helpers import outcomes, write_table
    from indexer import sourcelist
    from indexer.config import get_settings
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    write_table(tmp_path / "a", "alpha", outcomes(np.random.default_rng(3), MODELS, 16), 16)
    sourcelist.add(get_settings().sources_file, [SourceSpec(str(tmp_path / "a"))])
    reached, go = _hold_the_worker_pass(monkeypatch)  # at its solve stage: the space is in SQL, nothing published
    with open_store() as store, VectorStore.from_settings() as vectors:
        svc = Service(worker_schedule="1h", store=store, vectors=vectors, encoder=encoder)
        with TestClient(create_app(svc)) as c:
            svc.start_worker()
            try:
                assert reached.wait(120)
                building = "this server's indexing worker (1h) is building it: its first pass is running"
                for body in ({"prompts": [PROMPT]}, {"benchmark": "alpha"}):
                    err = assert_error(c.post("/v1/find", json=body), 503, "unavailable", says=building)
                    assert "taskspace reindex" not in err["message"], err
                err = assert_error(c.get("/readyz"), 503, "not_ready", says=building)
                assert "taskspace reindex" not in err["message"], err
            finally:
                go.set()
            _first_pass_ok(svc)
            assert c.post("/v1/find", json={"prompts": [PROMPT]}).status_code == 200
            assert c.get("/readyz").status_code == 200


def test_a_benchmark_the_running_pass_ingested_is_said_to_be_indexed_now_not_to_stop_the_server(indexed, encoder,
                                                                                                 monkeypatch):
    """`serve --worker-every`: a pass ingests a new benchmark (held here at its solve stage): /v1/benchmarks lists it at
    once, and a query for it is a 503 saying this server's worker is indexing it now, its pass running; once the pass
    has published it answers. Before, a 404 telling the client to "run `taskspace index`; run `taskspace index` with
    this server stopped ...: this server's worker indexes it at its next pass", for a benchmark the listing had just
    given and the running pass was about to publish (stopping the server would have stopped that pass)."""
    import numpy as np

    from helpers import outcomes, write_table
    from indexer import sourcelist
    from indexer.config import get_settings
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    write_table(indexed / "c", "gamma", outcomes(np.random.default_rng(9), MODELS, 12), 12, offset=40)
    sourcelist.add(get_settings().sources_file, [SourceSpec(str(indexed / "c"))])
    reached, go = _hold_the_worker_pass(monkeypatch)  # after its ingest, before it writes anything queries read
    with open_store() as store, VectorStore.from_settings() as vectors:
        svc = Service(worker_schedule="1h", store=store, vectors=vectors, encoder=encoder)
        with TestClient(create_app(svc)) as c:
            svc.start_worker()
            try:
                assert reached.wait(120)
                assert "gamma" in [b["name"] for b in c.get("/v1/benchmarks").json()["benchmarks"]]
                err = assert_error(c.post("/v1/find", json={"benchmark": "gamma"}), 503, "unavailable", "benchmark",
                                   says="this server's indexing worker (1h) is indexing it: its pass is running")
                assert "stopped" not in err["message"] and "run `taskspace index`" not in err["message"], err
                # the same for the benchmark as a filter and as a listing's: before, 200 with no model ("no model
                # matches: loosen the filters", `total` 0) while the pass was about to publish the models measured on it
                for r, field in ((c.post("/v1/find", json={"prompts": [PROMPT], "filters": {"benchmark": "gamma"}}),
                                  "filters.benchmark"),
                                 (c.get("/v1/models", params={"measured_on": "gamma"}), "measured_on"),
                                 (c.get("/v1/models", params={"benchmark": "gamma"}), "benchmark")):
                    assert_error(r, 503, "unavailable", field, says="is indexing it: its pass is running")
                assert c.post("/v1/find", json={"benchmark": "alpha"}).status_code == 200  # the previous index answers
            finally:
                go.set()
            _first_pass_ok(svc)
            assert c.post("/v1/find", json={"benchmark": "gamma"}).status_code == 200
            assert c.get("/v1/models", params={"measured_on": "gamma"}).json()["total"] > 0


def test_a_503_that_the_workers_next_pass_ends_says_when_it_is_expected_in_retry_after(tmp_path, encoder, monkeypatch):
    """`serve --worker-every`: a 503 that this server's worker ends by publishing says in `Retry-After` when that is
    expected: /readyz on an index its worker has not built yet, while the worker waits, until its next pass starts
    (Worker.next_at, exact) plus the longest recent pass; a query for a benchmark its running pass ingested, the
    longest recent pass less the time this one has run. A 503 whose end is not known (the first pass, a store that
    cannot be reached) has none. Before, no 503 carried Retry-After."""
    import numpy as np

    from helpers import outcomes, write_table
    from indexer import sourcelist
    from indexer.config import get_settings
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.sql_derived import DerivedMixin
    from indexer.store.vectors import VectorStore

    rng = np.random.default_rng(3)
    write_table(tmp_path / "a", "alpha", outcomes(rng, MODELS, 16), 16)
    write_table(tmp_path / "c", "gamma", outcomes(rng, MODELS, 12), 12, offset=40)
    sources = get_settings().sources_file
    reached, go, slowed = threading.Event(), threading.Event(), []
    original = DerivedMixin.get_space_calibration

    def held(self, space_id):  # the worker's passes after their ingest, before they write what queries read
        if threading.current_thread().name == "taskspace-worker":
            if svc.passes_done == 1 and not slowed:  # the pass indexing alpha: it adds gamma for the next, takes 3 s more
                slowed.append(time.perf_counter())
                sourcelist.add(sources, [SourceSpec(str(tmp_path / "c"))])
                time.sleep(3)
            elif svc.passes_done == 2 and not go.is_set():  # the next one, gamma ingested: held until the test says
                reached.set()
                go.wait(120)
        return original(self, space_id)

    monkeypatch.setattr(DerivedMixin, "get_space_calibration", held)
    with open_store() as store, VectorStore.from_settings() as vectors:
        svc = Service(worker_schedule="6s", store=store, vectors=vectors, encoder=encoder)
        with TestClient(create_app(svc)) as c:
            svc.start_worker()
            try:
                # the first pass (no source, nothing indexed) over and the worker waiting for the next: next_at is
                # set then, after the pass is listed (waiting for the listing alone, /readyz could come in between)
                deadline = time.monotonic() + 60
                while svc.worker.next_at is None and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert svc.passes and svc.passes[0]["status"] == "ok", svc.passes
                asked = time.monotonic()
                r = c.get("/readyz")
                answered = time.monotonic()
                assert r.status_code == 503 and "has indexed no model yet" in r.text, r.text
                # exactly the whole seconds until the next pass starts plus the pass's length, at some moment between
                # the request and its answer (before: within 1.5 s of that measured after the answer, which a slow
                # answer on a loaded machine could miss)
                eta = [max(1, math.ceil(max(0.0, svc.worker.next_at - t) + svc.passes[0]["seconds"]))
                       for t in (answered, asked)]
                assert eta[0] <= int(r.headers["retry-after"]) <= eta[1], (r.headers, eta)
                sourcelist.add(sources, [SourceSpec(str(tmp_path / "a"))])
                assert reached.wait(120), svc.passes  # the third pass
                longest = max(p["seconds"] for p in svc.passes)
                assert len(svc.passes) == 2 and longest >= 3, svc.passes
                before = time.perf_counter() - svc._pass_started
                err = c.post("/v1/find", json={"benchmark": "gamma"})
                ran = time.perf_counter() - svc._pass_started
                assert_error(err, 503, "unavailable", "benchmark", says="is indexing it: its pass is running")
                # the longest recent pass less the time this one had run, at some moment between request and answer
                eta = [max(1, math.ceil(longest - x)) for x in (ran, before)]
                assert eta[0] <= int(err.headers["retry-after"]) <= eta[1], (err.headers, longest, before, ran)
                assert c.post("/v1/find", json={"benchmark": "alpha"}).status_code == 200
            finally:
                go.set()
            deadline = time.monotonic() + 120
            while len(svc.passes) < 3 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert c.post("/v1/find", json={"benchmark": "gamma"}).status_code == 200
            doc = c.get("/openapi.json").json()["paths"]
            for path, method in (("/readyz", "get"), ("/v1/find", "post"), ("/v1/models", "get")):
                assert "Retry-After" in doc[path][method]["responses"]["503"]["headers"], path
            svc.stop_worker()


def test_a_query_parameter_that_is_not_utf8_is_named(client):
    """A query parameter whose percent-decoded bytes are not UTF-8 (`?license=mit%FF`, Latin-1 `caf%E9`, a name
    `%FF=1`): 422 naming it, the byte and where, as a body that is not UTF-8 is said; before, each bad byte became
    U+FFFD and the answer was for that other value without a word (200 and no model of license 'mit\\ufffd', 404
    "unknown benchmark '\\ufffd'"). UTF-8 text percent-encoded is taken as before."""
    err = assert_error(client.get("/v1/models?license=mit%FF"), 422, "invalid_request", "license",
                       says="query parameter 'license' is not UTF-8 (invalid start byte 0xff at byte 3 of its value")
    assert "percent-encode the UTF-8 bytes" in err["message"]
    assert_error(client.get("/v1/models?benchmark=caf%E9"), 422, "invalid_request", "benchmark", says="0xe9 at byte 3")
    assert_error(client.get("/v1/models?%FF=1"), 422, "invalid_request", "\\xff", says="of its name")
    assert_error(client.get("/v1/models?limit=2&measured_on=%ED%A0%80"), 422, "invalid_request", "measured_on")
    got = client.get("/v1/models?license=caf%C3%A9&license=mit+x")  # UTF-8, and + for a space: taken
    assert got.status_code == 200 and got.json()["models"] == [], got.text
    assert client.get("/?q=caf%E9").status_code == 200  # the page reads its own URL


def test_a_path_holding_a_control_character_is_said_so(client):
    """A path holding a line break, a carriage return or a tab (`/v1/models/a%0Ab`, `/v1/models/%0A`) is a 422 naming
    the character and where it is (`field` `model` on the model route), as a path that is not UTF-8 is. Before, the
    message quoted the path with the character dropped (Python's URL parsing strips it): "no route /v1/models/ab",
    a path the client never sent, or for `/v1/models/%0A` "no route /v1/models/: write it without the trailing
    slash", advice about a slash that was not the problem; and `/v1/benchmarks%0A` was answered as `/v1/benchmarks`.
    Found walking the API on the 32,823-model home."""
    for path, field, at in (("/v1/models/a%0Ab", "model", "\\n at character 13"), ("/v1/models/%0A", "model",
                                                                                   "\\n at character 12"),
                            ("/v1/models/org/m1%0D", "model", "\\r at character 18"),
                            ("/v1/benchmarks%0A", None, "\\n at character 15"), ("/nope%09x", None, "\\t at character 6")):
        err = assert_error(client.get(path), 422, "invalid_request", field, says="holds a control character")
        assert at in err["message"] and "trailing slash" not in err["message"], (path, err)
    assert client.get("/v1/models/org/m1%20").status_code == 200  # a space is text (the id is trimmed), as before


def test_a_model_id_that_is_not_utf8_is_named(client):
    """`GET /v1/models/caf%E9` (Latin-1) or `%FF`: the id's percent-decoded bytes are not UTF-8, and each bad byte
    became U+FFFD, so the answer was "unknown model 'caf\ufffd'", a name the client never sent. Now a 422 naming
    `model`, the byte and its offset, as a query parameter's bytes are checked; a UTF-8 id (`%E2%98%83`) is looked up."""
    for path, byte in (("/v1/models/caf%E9", "0xe9 at byte 3 of the id"), ("/v1/models/org/%FF", "0xff at byte 4 of the id")):
        err = assert_error(client.get(path), 422, "invalid_request", "model", says="is not UTF-8")
        assert byte in err["message"] and "\ufffd" not in err["message"], err["message"]
        assert client.head(path).status_code == 422
    assert_error(client.get("/v1/models/%E2%98%83"), 404, "not_found", "model", says="unknown model '\u2603'")
    assert client.get("/v1/models/org%2Fm1").json()["model"] == "org/m1"


@pytest.mark.parametrize("sig", ["SIGINT", "SIGHUP"])
def test_ctrl_c_stops_the_server_cleanly_as_sigterm_does(tmp_path, sig):
    """Ctrl-C (SIGINT) to `taskspace serve --worker-every` while the worker sleeps: the server shuts down as on SIGTERM
    and exits 0, saying nothing was interrupted; before, it exited 130 with "interrupted: ... run the command again to
    continue (`taskspace runs` shows an interrupted pass)", though no pass ran and `runs` showed none interrupted.
    SIGHUP (its terminal or ssh session closed) the same; before, its default action ended the server at once (exit
    -1, no shutdown), a pass it was running left `running` in `taskspace runs`."""
    import os
    import signal

    from helpers import hangup_as_from_a_terminal

    proc = subprocess.Popen([TASKSPACE, "serve", "--port", "0", "--worker-every", "1h"], stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "TASKSPACE_HOME": str(tmp_path / "home")},
                            preexec_fn=hangup_as_from_a_terminal)
    lines = []
    try:
        for line in proc.stderr:  # the first pass ran at start-up; the worker now sleeps until the next
            lines.append(line)
            if "next pass at" in line or line.startswith("error:"):
                break
        time.sleep(1.0)  # uvicorn's own signal handlers in place
        proc.send_signal(getattr(signal, sig))
        rest = proc.communicate(timeout=60)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert any("next pass at" in x for x in lines), "".join(lines)[-2000:]
    assert proc.returncode == 0, rest[-2000:]
    assert "interrupted" not in rest and "Traceback" not in rest, rest[-2000:]


def test_an_empty_license_list_is_said_to_allow_none(client):
    """`"licenses": []` (an allow-list of none) is a 422 naming `filters.licenses` and saying to leave it out for any
    license; before, it was no filter at all, every license, without a word."""
    err = assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"licenses": []}}), 422,
                       "invalid_input", "filters.licenses")
    assert "empty list" in err["message"] and "leave licenses out" in err["message"], err
    with_one = client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"licenses": ["mit"]}})
    assert with_one.status_code == 200 and with_one.json()["query"]["filters"] == {"licenses": ["mit"]}


def test_a_parameter_count_past_float_range_is_said_too_large(client):
    """A parameter count past a double's range (`?min_params=1e400`, `"1e300T"`, a JSON integer of 400 digits) is said
    to be too large; before, "not a positive parameter count", of a positive number."""
    err = assert_error(client.get("/v1/models", params={"min_params": "1e400"}), 422, "invalid_input", "min_params")
    assert "too large" in err["message"] and "not a positive" not in err["message"], err
    err = assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"max_params": "1e300T"}}), 422,
                       "invalid_input", "filters.max_params")
    assert "too large" in err["message"], err
    body = '{"prompts": ["%s"], "filters": {"min_params": 1%s}}' % (PROMPT, "0" * 400)
    err = assert_error(client.post("/v1/find", content=body, headers={"content-type": "application/json"}), 422,
                       "invalid_input", "filters.min_params")
    assert "too large" in err["message"] and len(err["message"]) < 300, err
    err = assert_error(client.get("/v1/models", params={"max_params": "0"}), 422, "invalid_input", "max_params")
    assert "not a positive parameter count" in err["message"], err


def test_a_quarantine_by_the_servers_worker_names_the_command_its_operator_runs_beside_it(indexed, encoder):
    """A source the in-process worker of `taskspace serve` quarantines (a copy cut mid-write): its run record
    (`taskspace runs`) says to store it anyway with `taskspace ingest SOURCE --accept-partial`, which writes SQL only
    and so runs beside the server holding the embedded index, and following it works: the server's next pass indexes
    the new revision. Before, the record said `accept_partial=True (ingest() or Indexer.run())`, the library's words,
    to the operator who started the server from a shell."""
    from indexer.ingest import ingest
    from indexer.store.sql import open_store

    src = indexed / "a"
    lines = (src / "outcomes.csv").read_text().splitlines(keepends=True)
    (src / "outcomes.csv").write_text("".join(lines[:20]) + lines[20][:6])  # 45 of 64 rows cut, the last one torn
    svc = Service(encoder=encoder, worker_schedule="1h")
    with TestClient(create_app(svc)) as c:
        deadline = time.monotonic() + 180
        while not svc.passes and time.monotonic() < deadline:
            time.sleep(0.1)
        assert svc.passes and svc.passes[0]["status"] == "partial", svc.passes
        with open_store() as store:
            (run,) = store.list_runs(limit=1)
        (why,) = [e["message"] for e in run.errors if "quarantined" in e["message"]]
        assert f"`taskspace ingest {src} --accept-partial` beside this server" in why, why
        assert "accept_partial=" not in why and "Indexer.run()" not in why and "taskspace index" not in why, why
        # the HTTP answers keep the API's words (the worker's context is its thread's): a field, not an option
        r = c.get("/v1/models", params={"space": "nope"})
        assert r.status_code == 404 and "space 'nope'" in r.json()["error"]["message"], r.text
        assert "--space" not in r.text and "space=" not in r.text, r.text
        detail = c.get("/readyz").json()["checks"]["worker"]["detail"]
        assert detail.startswith("every 1h; 1 pass(es) done; the last partial (run "), detail
        # /readyz says which run and where its errors are read (before: "the last partial", and no more)
        assert f"(run {run.id}: 2 errors, listed by `taskspace runs`)" in detail, detail
        # the advice, beside the running server (the CLI's `taskspace ingest` calls this), then the worker's next pass
        assert ingest(str(src), fetch_metadata=False, accept_partial=True).sources == 1
        report = svc.run_pass(threading.Event())
    assert report.counts["quarantined"] == 0 and report.counts["solved"] > 0, report.counts


def test_a_result_whose_results_changed_since_it_was_indexed_says_so_in_json_the_cli_and_openapi(indexed, encoder):
    """`taskspace ingest` without `taskspace index` (the state an index pass leaves between its ingest and its
    publish): org/m1's new results on alpha's prompts are in SQL, its vector is the indexed one. `taskspace search`
    marks it "(results changed)" and says why under the table; POST /v1/find says `results_changed: true` on org/m1
    alone (declared in /openapi.json; the answer validates against the declared Result, closed to undeclared
    fields). Before, nothing said it, and its evidence showed the new results beside the old score."""
    from jsonschema import Draft202012Validator
    from typer.testing import CliRunner

    from helpers import write_table
    from indexer.cli import app
    from indexer.find import RESULTS_CHANGED
    from indexer.ingest import ingest

    res = CliRunner().invoke(app, ["search", PROMPT], terminal_width=200)
    assert res.exit_code == 0 and "results changed" not in res.output, res.output
    write_table(indexed / "more", "alpha", {"org/m1": [1] * 16}, 16)  # alpha's own prompts, a second source
    ingest(str(indexed / "more"), fetch_metadata=False)
    res = CliRunner().invoke(app, ["search", PROMPT], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "org/m1 (results changed)" in res.output and f"org/m1: {RESULTS_CHANGED}" in " ".join(res.output.split())
    assert "org/m2 (results changed)" not in res.output
    js = (Path(__file__).resolve().parents[1] / "indexer" / "web" / "app.js").read_text(encoding="utf-8")
    assert RESULTS_CHANGED in js.replace('" +\n  "', "") and "r.results_changed" in js  # the page says it the same way
    with TestClient(create_app(Service(encoder=encoder))) as client:
        body = client.post("/v1/find", json={"prompt": PROMPT}).json()
        spec = client.get("/openapi.json").json()
    assert {r["model"]: r["results_changed"] for r in body["results"]} == {m: m == "org/m1" for m in MODELS}
    components = _strict(spec["components"])
    declared = components["schemas"]["Result"]
    assert "results_changed" in declared["required"] and "before" in declared["properties"]["results_changed"]["description"]
    for r in body["results"]:
        errors = list(Draft202012Validator({"$ref": "#/components/schemas/Result", "components": components})
                      .iter_errors(r))
        assert not errors, errors[:3]


def test_a_model_page_whose_results_changed_since_it_was_indexed_says_so_in_json_the_cli_and_openapi(indexed, encoder):
    """`taskspace ingest` without `taskspace index` (the state an index pass leaves between its ingest and its
    publish): the model page shows org/m1's observed accuracy from SQL (its new results on alpha) beside strengths
    predicted from its indexed vector. `taskspace model org/m1` now says so under its tables, GET /v1/models/org/m1
    says `results_changed: true` (declared in /openapi.json; the answer validates against ModelDetail, closed to
    undeclared fields), org/m2's page false, and the page shows the note. Before, nothing said it."""
    from jsonschema import Draft202012Validator
    from typer.testing import CliRunner

    from helpers import write_table
    from indexer.browse import MODEL_RESULTS_CHANGED
    from indexer.cli import app
    from indexer.ingest import ingest

    res = CliRunner().invoke(app, ["model", "org/m1"], terminal_width=200)
    assert res.exit_code == 0 and "results changed" not in res.output, res.output
    with TestClient(create_app(Service(encoder=encoder))) as client:
        assert client.get("/v1/models/org/m1").json()["results_changed"] is False
    write_table(indexed / "more", "alpha", {"org/m1": [1] * 16}, 16)  # alpha's own prompts, a second source
    ingest(str(indexed / "more"), fetch_metadata=False)
    res = CliRunner().invoke(app, ["model", "org/m1"], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert MODEL_RESULTS_CHANGED in " ".join(res.output.split())
    assert "results changed" not in CliRunner().invoke(app, ["model", "org/m2"], terminal_width=200).output
    js = (Path(__file__).resolve().parents[1] / "indexer" / "web" / "app.js").read_text(encoding="utf-8")
    assert MODEL_RESULTS_CHANGED in js.replace('" +\n  "', "") and "m.results_changed" in js  # the page says it too
    with TestClient(create_app(Service(encoder=encoder))) as client:
        m1 = client.get("/v1/models/org/m1").json()
        m2 = client.get("/v1/models/org/m2").json()
        spec = client.get("/openapi.json").json()
    assert m1["results_changed"] is True and m2["results_changed"] is False and m1["strengths"]
    components = _strict(spec["components"])
    declared = components["schemas"]["ModelDetail"]
    assert "results_changed" in declared["required"] and "before" in declared["properties"]["results_changed"]["description"]
    for d in (m1, m2):
        errors = list(Draft202012Validator({"$ref": "#/components/schemas/ModelDetail", "components": components})
                      .iter_errors(d))
        assert not errors, errors[:3]

def test_a_second_stop_signal_ends_the_shutdown_without_waiting_for_the_workers_item(encoder):
    """`taskspace serve`: the first SIGTERM/SIGINT/SIGHUP shuts down after the in-process worker's current item; a
    second one stops waiting for it (uvicorn's force exit, the worker's thread left to the exiting process, the
    stores it uses not closed under it) and the server exits 130, as `taskspace worker` does. Before, uvicorn forced
    the exit on a second SIGINT alone and the shutdown joined the worker's thread whatever came: a pass embedding
    thousands of new texts kept a server stopped twice running for minutes."""
    import signal

    import uvicorn

    from indexer.serve import Service, _uvicorn_server, create_app

    svc = Service(encoder=encoder)
    busy, done = threading.Event(), threading.Event()
    svc._thread = threading.Thread(target=busy.wait, args=(60,), daemon=True)  # a pass's long item
    svc._thread.start()
    server = _uvicorn_server()(uvicorn.Config(create_app(svc)), on_second_signal=svc.abandon_worker)
    server.handle_exit(signal.SIGTERM, None)
    assert server.should_exit and not server.force_exit and not svc.abandoned.is_set()
    closing = threading.Thread(target=lambda: (svc.close(), done.set()), daemon=True)
    closing.start()
    assert not done.wait(0.5)  # the first signal: waiting for the item
    server.handle_exit(signal.SIGTERM, None)
    assert server.force_exit and svc.abandoned.is_set()
    assert done.wait(5), "the shutdown still waits for the worker's item after a second signal"
    assert svc._thread is not None and svc._thread.is_alive()  # left running, its stores not closed under it
    busy.set()


def test_an_offset_pages_alike_in_python_the_cli_and_http(indexed, encoder):
    """One page, however asked: `indexer.query.find_models(offset=N)` (the lean library entry), `indexer.find_models
    (offset=N)`, `taskspace search --offset N --json` and `POST /v1/find` with `offset` rank the same models with the
    same probabilities, by probability and by the lower bound, for a prompt and a benchmark, with a filter, and past
    the last model (no result). Before, `indexer.query.find_models` took no offset (a TypeError) while the other
    three paged."""
    from typer.testing import CliRunner

    import indexer
    from indexer import query
    from indexer.cli import app

    asks = (({"prompts": [PROMPT]}, []), ({"benchmark": "beta", "rank": "lcb"}, ["--rank", "lcb"]),
            ({"prompts": [PROMPT], "rank": "lcb", "filters": {"max_params": "80B"}}, ["--rank", "lcb", "--max-params", "80B"]))
    pages = []  # (body, options, offset, k, the HTTP page's models and probabilities)
    svc = Service(encoder=encoder)
    with TestClient(create_app(svc)) as client:
        for body, options in asks:
            where = {"benchmark": body["benchmark"]} if "benchmark" in body else {"prompts": body["prompts"]}
            flt, rank = indexer.Filters.from_dict(body.get("filters", {})), body.get("rank", "probability")
            every = client.post("/v1/find", json={**body, "k": 20}).json()["results"]
            for offset, k in ((0, 2), (1, 2), (2, 2), (len(every) - 1, 2), (len(every), 2), (len(every) + 5, 1)):
                http = client.post("/v1/find", json={**body, "k": k, "offset": offset}).json()["results"]
                want = [(r["model"], round(r["probability"], 6)) for r in http]  # as the answer's JSON rounds it
                assert want == [(r["model"], round(r["probability"], 6)) for r in every[offset:offset + k]], (body, offset)
                lean = query.find_models(where.get("prompts"), benchmark=where.get("benchmark"), top=k, offset=offset,
                                         filters=flt, rank=rank, store=svc.store, vectors=svc.vectors)
                assert [(m.model, round(m.probability, 6)) for m in lean] == want, (body, offset)
                full = indexer.find_models(**where, k=k, offset=offset, filters=flt, rank=rank, store=svc.store,
                                           vectors=svc.vectors)
                assert [(r.model, round(r.probability, 6)) for r in full] == want, (body, offset)
                pages.append((body, options, offset, k, want))
    for body, options, offset, k, want in pages:  # the command, once the server let the index go
        args = ["search", *(body["prompts"] if "prompts" in body else ["-b", body["benchmark"]]), *options,
                "-k", str(k), "--offset", str(offset), "--json"]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        assert [(r["model"], round(r["probability"], 6)) for r in json.loads(res.output)["results"]] == want, \
            (body, offset)


def test_find_says_how_many_the_ranking_holds_and_the_next_pages_offset(client):
    """`POST /v1/find` says what a page is out of, as `GET /v1/models` does: `query.total` (the models the ranking holds,
    the filters applied) and `query.next_offset` (offset + k; null on the last page, past it, and in compare mode),
    declared in /openapi.json; the web page's "next" is shown by them. Before, a client could not tell the last page
    from a page of exactly k without asking for the next one."""
    spec = client.get("/openapi.json").json()
    declared = spec["components"]["schemas"]["Query"]
    assert {"total", "next_offset"} <= set(declared["required"]) and "total" in declared["properties"]
    for ask in ({"prompts": [PROMPT]}, {"benchmark": "beta", "rank": "lcb"}, {"prompt": PROMPT, "filters": {"licenses": ["mit"]}}):
        every = client.post("/v1/find", json={**ask, "k": 20}).json()["results"]
        for offset, k in ((0, 2), (0, len(every)), (1, 2), (len(every) - 1, 1), (len(every), 3), (len(every) + 4, 1)):
            q = client.post("/v1/find", json={**ask, "k": k, "offset": offset}).json()["query"]
            assert q["total"] == len(every), (ask, offset, q)
            assert q["next_offset"] == (offset + k if offset + k < len(every) else None), (ask, offset, k, q)
    q = client.post("/v1/find", json={"prompts": [PROMPT], "k": 1, "models": ["org/m1", "lab/m3"]}).json()["query"]
    assert q["total"] == 2 and q["next_offset"] is None  # compare mode: every listed model, one page


def test_find_pages_its_ranking_with_an_offset_declared_in_the_schema(client):
    """`POST /v1/find` takes `offset`, as `GET /v1/models` pages: the results are ranks offset + 1 to offset + k of
    the ranking a larger k gives (by the lower bound and with a filter too), `query.offset` says it, /openapi.json
    declares it (body: an integer >= 0, default 0; answer: query.offset), and a bad one is a 422 naming `offset` in
    the words the other knobs use. Before, the body field was refused as unknown and the results stopped at k <= 100."""
    spec = client.get("/openapi.json").json()
    body = spec["paths"]["/v1/find"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert _given(body["offset"])["type"] == "integer" and _given(body["offset"])["minimum"] == 0
    assert body["offset"]["default"] == 0
    assert "offset" in spec["components"]["schemas"]["Query"]["required"]
    for ask in ({"prompts": [PROMPT]}, {"benchmark": "beta", "rank": "lcb"},
                {"prompt": PROMPT, "rank": "lcb", "filters": {"max_params": "80B"}, "prefer_smaller": 0.05}):
        every = client.post("/v1/find", json={**ask, "k": 20}).json()["results"]
        assert len(every) >= 3, every
        for offset, k in ((0, 2), (1, 2), (2, 1), (1, 10), (len(every), 3)):
            r = client.post("/v1/find", json={**ask, "k": k, "offset": offset})
            assert r.status_code == 200, r.text
            assert r.json()["results"] == every[offset:offset + k] and r.json()["query"]["offset"] == offset, (ask, offset)
    assert client.post("/v1/find", json={"prompts": [PROMPT], "offset": 2.0, "k": 1}).json()["query"]["offset"] == 2
    for offset, said in ((-1, "offset must be a non-negative integer, not -1"),
                         ("2", 'offset must be a non-negative integer, not "2"'),
                         (1.5, "offset must be a non-negative integer, not 1.5"),
                         (True, "offset: true is not a value of offset (a non-negative integer); leave offset out (or "
                                "null) for its default (0)")):
        err = assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "offset": offset}), 422, "invalid_input",
                           "offset")
        assert err["message"] == said, err
    assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "models": ["org/m1"], "offset": 1}), 422,
                 "invalid_input", "offset", says="compare mode")
    assert_error(client.post("/v1/find", json={"prompts": [PROMPT], "skip": 1}), 422, "invalid_request", "skip",
                 says="did you mean 'offset'?")


def test_a_servers_model_pages_show_an_ingest_and_its_workers_pass_beside_them(indexed, encoder):
    """`taskspace serve` keeps its model pages' every-model rows (indexer.browse: computed by one page, reused by the
    next ones while the index is the same) and answers a page after `taskspace ingest` beside it (another store on
    the same SQLite file: org/m1's results changed) and after its worker's pass (a model added: one more on every
    row) with the index as it is then: each page equals the one computed alone (real SQLite, real local Qdrant)."""
    from helpers import write_table
    from indexer import browse
    from indexer.config import get_settings
    from indexer.ingest import ingest

    svc = Service(encoder=encoder)
    with TestClient(create_app(svc)) as client:
        def page(model: str) -> dict:
            r = client.get(f"/v1/models/{model}")
            assert r.status_code == 200, r.text
            return r.json()

        def alone(model: str) -> dict:
            browse._EVERY.clear()
            return page(model)

        first = page("org/m2")
        assert page("org/m1") == alone("org/m1") and page("org/m2") == first and first["strengths"]
        write_table(indexed / "more", "alpha", {"org/m1": [1] * 16}, 16)  # alpha's own prompts, a second source
        ingest(str(indexed / "more"), fetch_metadata=False)
        m1 = page("org/m1")
        assert m1["results_changed"] is True and m1 == alone("org/m1") and page("org/m2") == alone("org/m2")
        write_table(indexed / "c", "alpha", {"org/new": [1] * 16}, 16)
        get_settings().sources_file.write_text("source = [\n" + "".join(
            f'    {{ spec = "{indexed / f}" }},\n' for f in ("a", "b", "more", "c")) + "]\n")
        assert svc.run_pass(threading.Event()).status == "ok"
        now = page("org/m2")
        assert now == alone("org/m2")
        assert {s["of"] for s in now["strengths"]} == {s["of"] + 1 for s in first["strengths"]}


def test_every_text_filter_with_invisible_characters_at_its_edges_is_the_value_it_names(client):
    """`pipeline_tag` and `benchmark` (`measured_on`) filters with invisible characters or spaces at their edges
    (`"\u200btext-generation"`, `"beta\ufeff"`) are the values they name, as a license is (`records.strip_invisible`,
    through `Filters`, which the CLI's options, `POST /v1/find` and `GET /v1/models` all read): echoed stripped, answered
    as the plain value. Before, kept as given: a tag matching no model, a benchmark "unknown"."""
    from indexer.find import Filters

    f = Filters(pipeline_tag="\u200btext-generation ", benchmark=" \ufeffbeta\u200d")
    assert (f.pipeline_tag, f.benchmark) == ("text-generation", "beta")
    want = client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"benchmark": "beta"}}).json()
    listed = client.get("/v1/models", params={"measured_on": "beta"}).json()
    assert want["results"] and listed["models"], (want, listed)
    for b in ("\u200bbeta", "beta\ufeff", " \u200dbeta "):
        got = client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"benchmark": b}})
        assert got.status_code == 200 and got.json()["query"]["filters"] == {"benchmark": "beta"}, got.text
        assert got.json()["results"] == want["results"]
        got = client.get("/v1/models", params={"measured_on": b})
        assert got.status_code == 200 and got.json()["models"] == listed["models"], got.text
    got = client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"pipeline_tag": "\u200btext-generation"}})
    assert got.status_code == 200 and got.json()["query"]["filters"] == {"pipeline_tag": "text-generation"}, got.text
    assert client.get("/v1/models", params={"pipeline_tag": "\u200btext-generation"}).status_code == 200


def test_a_benchmark_with_spaces_around_is_found_and_one_in_another_case_is_suggested(client):
    """A benchmark named with spaces or invisible characters around it (`"beta "`, as pasted) is the benchmark it names
    on `POST /v1/find` (a query, a filter) and `GET /v1/models` (`benchmark`, `measured_on`); one typed in another case
    (`"BETA"`, `"Alpha "`) is a 404 suggesting the stored name, through the one `find.suggest` an unknown model's
    lookup uses (`taskspace search -b`, `taskspace models -b` and `--measured-on` call the same). Before, the first
    was "unknown benchmark 'beta '", and a name in another case with a space after it (`"MMLU_PRO/Law "`) suggested
    nothing: difflib compares case, and the case-insensitive substring fallback kept the space."""
    from indexer.find import suggest

    want = client.post("/v1/find", json={"benchmark": "beta"}).json()
    listed = client.get("/v1/models", params={"benchmark": "beta"}).json()
    for b in ("beta ", " \u200bbeta"):
        got = client.post("/v1/find", json={"benchmark": b})
        assert got.status_code == 200 and got.json()["query"]["benchmark"] == "beta", got.text
        assert got.json()["results"] == want["results"]
        got = client.get("/v1/models", params={"benchmark": b})
        assert got.status_code == 200 and got.json()["models"] == listed["models"], got.text
    for b, ours in (("BETA", "beta"), ("Alpha ", "alpha")):
        for got in (client.post("/v1/find", json={"benchmark": b}),
                    client.post("/v1/find", json={"prompts": [PROMPT], "filters": {"benchmark": b}}),
                    client.get("/v1/models", params={"benchmark": b}),
                    client.get("/v1/models", params={"measured_on": b})):
            assert got.status_code == 404 and f"did you mean {ours}?" in got.json()["error"]["message"], got.text
    known = ["mmlu_pro/law", "mmlu_pro/math", "bbh/navigate"]
    assert "did you mean mmlu_pro/law?" in str(suggest("MMLU_PRO/Law ", known, "benchmark"))


def test_scrub_masks_the_password_of_any_url_a_message_quotes(monkeypatch, tmp_path):
    """`serve.scrub` masks the password of every URL a message quotes (``postgresql://u:secret@db/x``), not only of
    the configured database and Qdrant URLs: a stopped worker's error in /readyz may name another database's URL
    (a SchemaError quoting one). Before, such a password was served as written; user, host and path stay readable."""
    from indexer.config import reset_settings
    from indexer.serve import scrub

    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path))
    monkeypatch.delenv("TASKSPACE_DATABASE_URL", raising=False)
    reset_settings()
    out = scrub("no taskspace tables in postgresql://u:s3cr%40t@db:5432/x?sslmode=require (nor at http://a:b@q:6333)")
    assert out == "no taskspace tables in postgresql://u:***@db:5432/x?sslmode=require (nor at http://a:***@q:6333)", out
    reset_settings()


def test_scrub_masks_a_short_token_where_it_stands_and_a_long_one_everywhere(monkeypatch):
    """`serve.scrub` (a server's error messages): a token as short as "ab1" (TASKSPACE_QDRANT_API_KEY, HF_TOKEN,
    HUGGING_FACE_HUB_TOKEN) is masked where it stands as a token, and the words holding its letters stay as written;
    a token of 8 characters on is masked wherever it appears, glued to other text too. Before, found reading `scrub`
    beside `config.mask_secrets`: every token was replaced wherever its letters appeared ("tab12" -> "t***")."""
    from indexer.config import reset_settings
    from indexer.serve import scrub

    monkeypatch.setenv("TASKSPACE_QDRANT_API_KEY", "ab1")
    monkeypatch.setenv("HF_TOKEN", "hf_L0ngT0kenValue")
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    reset_settings()
    out = scrub("the table tab12 lab1s: key ab1 rejected (api-key=ab1); token=xhf_L0ngT0kenValuey hf_L0ngT0kenValue")
    assert out == "the table tab12 lab1s: key *** rejected (api-key=***); token=x***y ***", out
    reset_settings()
