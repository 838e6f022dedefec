"""The model facts a user filters on and reads (size, base model) for repos the fake Hub answers as the real Hub does:
a PEFT adapter (``adapter_config.json``, library ``peft``, card ``base_model``, no safetensors count of its own), a
fine-tune, their base models. Through the CLI (``search``, ``models``, ``model``) and HTTP (``/v1/find``,
``/v1/models``, ``/v1/models/{id}``)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from fastapi.testclient import TestClient

from helpers import outcomes, run_cli, write_table

#: the indexed models: two adapters (of a small and of a 70B base), a fine-tune with weights of its own, an API model
MODELS = ["fake-org/tiny-lora", "fake-org/big-lora", "fake-org/tiny-lb", "api-model"]
BIG = 70_553_706_496


def _repo(server, name: str, info: dict, files=("config.json",)) -> None:
    d = server.root / "models" / "fake-org" / name
    d.mkdir(parents=True, exist_ok=True)
    for f in files:
        (d / f).write_text("{}")
    (d / "_info.json").write_text(json.dumps(info))


@pytest.fixture
def index(hub_server, tmp_path, encoder):
    """An index of :data:`MODELS` whose Hub metadata the fake Hub answered (the base repos are not indexed)."""
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    adapter = ("adapter_config.json", "adapter_model.safetensors")
    _repo(hub_server, "tiny-lora", {"library_name": "peft", "cardData": {"base_model": "fake-org/tiny-lb"}}, adapter)
    _repo(hub_server, "big-lora", {"library_name": "peft", "cardData": {"base_model": "fake-org/big-base"}}, adapter)
    _repo(hub_server, "big-base", {"safetensors": {"parameters": {"BF16": BIG}, "total": BIG}})
    write_table(tmp_path / "src", "facts-bench", outcomes(np.random.default_rng(3), MODELS, 10), 10)
    with open_store() as store, VectorStore.from_settings() as vectors:
        r = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "src"))])
        assert r.status == "ok", r.errors
    return hub_server


def cli(capsys, *args) -> tuple[int, str]:
    """(exit code, stdout) of ``taskspace ARGS`` run in this process."""
    code, out, _ = run_cli(capsys, *args)
    return code, out


def _results(out: str) -> dict[str, dict]:
    obj = json.loads(out)
    return {r["model"]: r["metadata"] for r in (obj["results"] if isinstance(obj, dict) else obj)}


def _rows(out: str) -> list[dict]:
    obj = json.loads(out)
    return obj["models"] if isinstance(obj, dict) else obj


def test_every_answer_says_what_a_model_is_based_on(index, capsys, encoder):
    """The card's ``base_model`` (stored in SQL) is in every answer's metadata: ``search --json``, ``models --json``,
    ``model`` (JSON and text), GET /v1/models and /v1/models/{id}, POST /v1/find (None where no base is named).
    Before, SQL held it and no answer showed it: an adapter's answer did not say what it adapts."""
    from indexer.serve import Service, create_app

    want = {"fake-org/tiny-lora": "fake-org/tiny-lb", "fake-org/big-lora": "fake-org/big-base",
            "fake-org/tiny-lb": "fake-org/base-lb", "api-model": None}
    code, out = cli(capsys, "search", "--benchmark", "facts-bench", "--json")
    assert code == 0 and {m: md["base_model"] for m, md in _results(out).items()} == want
    code, out = cli(capsys, "models", "--json")
    assert code == 0 and {r["model"]: r["metadata"]["base_model"] for r in _rows(out)} == want
    code, out = cli(capsys, "model", "fake-org/tiny-lora", "--json")
    assert code == 0 and json.loads(out)["metadata"]["base_model"] == "fake-org/tiny-lb"
    code, out = cli(capsys, "model", "fake-org/tiny-lora")
    assert code == 0 and "based on fake-org/tiny-lb" in out
    code, out = cli(capsys, "model", "api-model")
    assert code == 0 and "based on" not in out
    with TestClient(create_app(Service(encoder=encoder))) as c:
        got = c.get("/v1/models/fake-org/big-lora")
        assert got.status_code == 200 and got.json()["metadata"]["base_model"] == "fake-org/big-base"
        page = c.get("/v1/models").json()
        rows = page["models"] if isinstance(page, dict) else page
        assert {r["model"]: r["metadata"]["base_model"] for r in rows} == want
        found = c.post("/v1/find", json={"benchmark": "facts-bench"}).json()
        assert {r["model"]: r["metadata"]["base_model"] for r in found["results"]} == want
        schema = c.get("/openapi.json").json()["components"]["schemas"]
        assert "base_model" in schema["Metadata"]["properties"]


def test_an_adapter_has_its_base_models_size_and_the_answers_say_so(index, capsys, encoder):
    """A PEFT adapter (no parameter count of its own on the Hub) has its base model's count, fetched once per pass
    and marked: ``params_from`` names the base in every answer, the CLI shows "of BASE" and the size filters and
    ``--prefer-smaller`` use it (a 70B base's adapter is dropped by ``--max-params 10B``, a small base's kept, none
    counted as missing metadata); a repo with a count of its own keeps it (``params_from`` None). Before, an adapter's
    size was unknown: every size filter dropped it as missing metadata, whatever its base."""
    from indexer.serve import Service, create_app
    from indexer.store.sql import open_store

    with open_store() as store:
        got = {m.key: (m.num_parameters, m.num_parameters_from) for m in store.list_models()}
    assert got == {"fake-org/tiny-lora": (1234567, "fake-org/tiny-lb"), "fake-org/big-lora": (BIG, "fake-org/big-base"),
                   "fake-org/tiny-lb": (1234567, None), "api-model": (None, None)}
    # the base tiny-lb is asked once for itself and once as tiny-lora's base, not once per adapter and pass
    assert sum(1 for _, p, _ in index.log if p.startswith("/api/models/fake-org/big-base")) == 1
    code, out = cli(capsys, "search", "--benchmark", "facts-bench", "--max-params", "10B", "--json")
    obj = json.loads(out)
    assert code == 0 and set(_results(out)) == {"fake-org/tiny-lora", "fake-org/tiny-lb"}
    assert obj["missing_metadata"] == {"max_params": 1}  # the API model only
    assert _results(out)["fake-org/tiny-lora"]["params_from"] == "fake-org/tiny-lb"
    assert _results(out)["fake-org/tiny-lb"]["params_from"] is None
    code, out = cli(capsys, "search", "--benchmark", "facts-bench", "--min-params", "10B", "--json")
    assert code == 0 and set(_results(out)) == {"fake-org/big-lora"}
    code, out = cli(capsys, "models", "--max-params", "10B", "--json")
    assert code == 0 and {r["model"] for r in _rows(out)} == {"fake-org/tiny-lora", "fake-org/tiny-lb"}
    code, out = cli(capsys, "model", "fake-org/big-lora")
    assert code == 0 and "parameters 70.6B (of fake-org/big-base)" in out
    code, out = cli(capsys, "models")
    assert code == 0 and "70.6B*" in out and "* the base model's" in out
    with TestClient(create_app(Service(encoder=encoder))) as c:
        md = c.get("/v1/models/fake-org/big-lora").json()["metadata"]
        assert (md["params"], md["params_from"]) == (BIG, "fake-org/big-base")
        found = c.post("/v1/find", json={"benchmark": "facts-bench", "filters": {"max_params": "10B"}}).json()
        assert {r["model"] for r in found["results"]} == {"fake-org/tiny-lora", "fake-org/tiny-lb"}
        page = c.get("/v1/models", params={"min_params": "10B"}).json()
        rows = page["models"] if isinstance(page, dict) else page
        assert [(r["model"], r["metadata"]["params_from"]) for r in rows] == [("fake-org/big-lora", "fake-org/big-base")]


def test_a_repo_silent_on_license_or_gate_has_its_base_models_where_a_user_needs_them(hub_server, tmp_path, encoder,
                                                                                        capsys):
    """Where a card is silent, the one base model it names speaks: a PEFT adapter of a gated base is gated as its base
    (it runs only on the base's weights, which need access), so ``--exclude-gated`` drops it, while a fine-tune with
    weights of its own stays as the Hub gates it; a card naming no license has its base's (a fine-tune, adapter or
    quantization is used under its base's terms), so ``--license llama3`` finds it; a card's own license, ``other``
    included, stays. Before, the adapter passed ``--exclude-gated`` and a fine-tune without a license in its card was
    dropped by every ``--license`` as missing metadata."""
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    adapter = ("adapter_config.json", "adapter_model.safetensors")
    base = {"cardData": {"base_model": "fake-org/gated-base"}}
    own = {"safetensors": {"parameters": {"BF16": 8_000}, "total": 8_000}}
    _repo(hub_server, "gated-base", {"gated": "manual", "cardData": {"license": "llama3"}, **own})
    _repo(hub_server, "gated-lora", {"library_name": "peft", **base}, adapter)
    _repo(hub_server, "apache-lora", {"library_name": "peft", "cardData": {**base["cardData"], "license": "apache-2.0"}},
          adapter)
    _repo(hub_server, "open-ft", {**base, **own})
    _repo(hub_server, "other-ft", {"cardData": {**base["cardData"], "license": "other"}, **own})
    models = ["fake-org/gated-lora", "fake-org/apache-lora", "fake-org/open-ft", "fake-org/other-ft"]
    write_table(tmp_path / "src", "facts-bench", outcomes(np.random.default_rng(3), models, 10), 10)
    with open_store() as store, VectorStore.from_settings() as vectors:
        r = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "src"))])
        assert r.status == "ok", r.errors
        got = {m.key: (m.license, m.gated) for m in store.list_models()}
    assert got == {"fake-org/gated-lora": ("llama3", "manual"), "fake-org/apache-lora": ("apache-2.0", "manual"),
                   "fake-org/open-ft": ("llama3", "false"), "fake-org/other-ft": ("other", "false")}
    code, out = cli(capsys, "search", "--benchmark", "facts-bench", "--exclude-gated", "--json")
    assert code == 0 and set(_results(out)) == {"fake-org/open-ft", "fake-org/other-ft"}
    code, out = cli(capsys, "search", "--benchmark", "facts-bench", "--license", "llama3", "--json")
    assert code == 0 and set(_results(out)) == {"fake-org/gated-lora", "fake-org/open-ft"}
    assert _results(out)["fake-org/gated-lora"]["gated"] is True


def test_a_size_that_rounds_up_to_a_thousand_of_its_unit_is_written_in_the_next():
    """A count that rounds to 1000 of its unit at three significant digits is one of the next unit: 999,950,000
    is "1.0B" (the CLI's tables and `model`; the page's formatParams writes the same, test_serve_browser.py), not
    "1000.0M"; counts below stay in their unit. Before, "1000.0M", "1000.0K"."""
    from indexer.find import format_params

    got = {n: format_params(n) for n in (999, 999_499, 999_950, 999_950_000, 999_999_999, 999_949_999, 8_030_261_248)}
    assert got == {999: "999", 999_499: "999.5K", 999_950: "1.0M", 999_950_000: "1.0B", 999_999_999: "1.0B",
                   999_949_999: "999.9M", 8_030_261_248: "8.03B"}
