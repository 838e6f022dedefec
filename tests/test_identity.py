"""Model identity: source names -> Hub repo ids (rules, the packaged alias file, the user's), API-only models, the
SQL alias table (migration 0004 on SQLite and PostgreSQL) and one model row whatever its sources call it."""

import re

import numpy as np
import pytest

from indexer.errors import InputError
from indexer.identity import ALIASES_FILE, AliasTable, packaged, resolve
from indexer.records import Outcome, SourceBatch, SourceInfo
from indexer.store import sql_migrate as migrate


@pytest.mark.parametrize("name,key,kind", [
    ("Qwen--Qwen1.5-72B-Chat", "Qwen/Qwen1.5-72B-Chat", "hub"),  # org--name
    ("meta-llama__Meta-Llama-3-8B", "meta-llama/Meta-Llama-3-8B", "hub"),  # org__name
    ("open-llm-leaderboard/meta-llama__Llama-3.1-8B-details", "meta-llama/Llama-3.1-8B", "hub"),  # details repo
    ("open-llm-leaderboard-old/details_tiiuae__falcon-7b", "tiiuae/falcon-7b", "hub"),
    ("details_EleutherAI__pythia-160m", "EleutherAI/pythia-160m", "hub"),
    ("Meta-Llama-3_1-70B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", "hub"),  # packaged alias file
    ("phi-3-mini-4k-instruct", "microsoft/Phi-3-mini-4k-instruct", "hub"),  # case-insensitive
    ("microsoft--Phi-3-mini-4k-instruct", "microsoft/Phi-3-mini-4k-instruct", "hub"),  # the same model, other source
    ("gpt-4o(eval_results/gpt4o)", "gpt-4o", "api"),  # provenance tag dropped, API-only
    ("claude-3-opus-20240229", "claude-3-opus-20240229", "api"),
    ("org/model", "org/model", "hub"),
    ("my-local-finetune", "my-local-finetune", "name"),
    ("deepseek(eval_results/deepseek)", "deepseek", "name"),
])
def test_resolve(name, key, kind):
    i = resolve(name)
    assert (i.key, i.kind) == (key, kind)
    assert i.hub_id == (key if kind == "hub" else None) and i.api_only == (kind == "api")


@pytest.mark.parametrize("name", ["org/модель", "café/modèle", "org/naïve-7b", "org--модель", "орг__model-7b",
                                  "org/ｍodel", "org/model\n"])
def test_a_name_with_non_ascii_letters_is_not_a_hub_id(name):
    """Hub repo ids are ASCII (`[A-Za-z0-9._-]`): a name with other letters stays a plain name, whatever the naming
    rules would make of it, and no Hub id check passes it (identity, the Hub client, the SQL reads). Before, `\\w` was
    Unicode: "org/модель" was taken as a Hub repo id (and would be asked of the Hub); `$` also passed "org/model\\n"."""
    from indexer.hub import is_valid_repo_id
    from indexer.identity import is_repo_id
    from indexer.store.sql_types import looks_like_repo_id

    assert not is_repo_id(name) and not is_valid_repo_id(name) and not looks_like_repo_id(name)
    i = resolve(name)
    if name.strip() != "org/model":
        assert (i.kind, i.hub_id, i.key) == ("name", None, name.strip()), i
    for ok in ("meta-llama/Llama-3.1-8B", "a_b/c.d-e"):
        assert is_repo_id(ok) and is_valid_repo_id(ok) and looks_like_repo_id(ok) and resolve(ok).hub_id == ok


def test_packaged_alias_file_is_valid_and_maps_to_repo_ids():
    t = packaged()
    assert len(t.hub) > 50 and t.api_patterns
    from indexer.identity import is_repo_id

    assert all(is_repo_id(r) for r in t.hub.values())
    assert ALIASES_FILE.is_file()


def test_user_alias_file_extends_and_wins(taskspace_home):
    taskspace_home.mkdir(parents=True, exist_ok=True)
    (taskspace_home / "aliases.toml").write_text(
        '[hub]\n"my-local-finetune" = "me/finetune-v1"\n"Meta-Llama-3_1-70B-Instruct" = "me/llama-copy"\n'
        '[api]\nnames = ["house-model"]\n')
    assert resolve("my-local-finetune").key == "me/finetune-v1" and resolve("my-local-finetune").rule == "user"
    assert resolve("Meta-Llama-3_1-70B-Instruct").key == "me/llama-copy"
    assert resolve("house-model").api_only
    assert resolve("Qwen1.5-7B").key == "Qwen/Qwen1.5-7B"  # the packaged file still applies


def test_a_user_alias_file_saved_with_a_byte_order_mark_is_read(taskspace_home):
    """`$TASKSPACE_HOME/aliases.toml` saved with a UTF-8 byte-order mark (Notepad's "UTF-8 with BOM"), as
    sources.toml is: read as written; before, "not valid TOML (Invalid statement at line 1, column 1)" and every
    ingest failed on it."""
    taskspace_home.mkdir(parents=True, exist_ok=True)
    (taskspace_home / "aliases.toml").write_bytes('\ufeff[hub]\n"my-local-finetune" = "me/finetune-v1"\n'.encode())
    assert resolve("my-local-finetune").key == "me/finetune-v1"


@pytest.mark.parametrize("text,match", [
    ("[hub\n", "not valid TOML"),
    ('[hub]\n"x" = "not a repo"\n', "is not a Hub repo id"),
    ('[models]\n', "unknown section"),
    ('[api]\nnames = "gpt"\n', "must be a list"),
])
def test_bad_alias_file_names_the_file(tmp_path, text, match):
    path = tmp_path / "aliases.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=match) as e:
        AliasTable.parse(path)
    assert str(path) in str(e.value)


@pytest.mark.parametrize("raw,match", [
    (b'[hub]\n"caf\xe9" = "org/x"\n', r"not UTF-8 text \(byte 0xe9 at line 2\); TOML files are UTF-8"),
    (b"hub = 5\n", r"hub must be a table \(\[hub\]\), not int"),
    (b"api = [1]\n", r"api must be a table \(\[api\]\), not list"),
])
def test_an_alias_file_not_utf8_or_with_a_value_for_a_section_is_an_input_error_naming_it(tmp_path, taskspace_home,
                                                                                         raw, match):
    """`$TASKSPACE_HOME/aliases.toml` saved in Latin-1 (a name with "é") or with `hub = 5` where the [hub] table
    belongs: an error naming the alias file and what is wrong, and an ingest reports it so (the source not stored).
    Before, a
    UnicodeDecodeError or AttributeError that the ingest reported as an unexpected error of the source being read
    ("DATA: cannot be read: ... please report it")."""
    from indexer.ingest import ingest

    taskspace_home.mkdir(parents=True, exist_ok=True)
    path = taskspace_home / "aliases.toml"
    path.write_bytes(raw)
    with pytest.raises(InputError, match=match) as e:
        AliasTable.parse(path)
    assert str(e.value).startswith(f"{path}: ")
    data = tmp_path / "data"
    data.mkdir()
    (data / "prompts.jsonl").write_text('{"prompt_id": "p1", "benchmark": "b", "text": "Q?"}\n')
    (data / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\n")
    s = ingest(str(data), fetch_metadata=False)
    (err,) = s.errors
    assert err.message.startswith(f"source not stored (nothing of it was written): {path}: ")
    assert re.search(match, err.message) and "unexpected" not in err.message


def _batch(location, outcomes):
    return SourceBatch(SourceInfo("table", location, "r1"), {}, outcomes)


def test_one_model_is_one_row_whatever_its_sources_call_it(store):
    """Two sources name one model differently: one row, both names as aliases, outcomes of the same prompt averaged
    like repeats; an API model is marked; a model named twice inside one source is merged there too."""
    a = [Outcome("Phi-3-mini-4k-instruct", "math", f"q{j}", float(j % 2)) for j in range(4)]
    a += [Outcome("gpt-4o(eval_results/gpt4o)", "math", f"q{j}", 1.0) for j in range(4)]
    b = [Outcome("microsoft--Phi-3-mini-4k-instruct", "math", f"q{j}", 1.0) for j in range(2)]
    b += [Outcome("microsoft--Phi-3-mini-4k-instruct", "code", "write code", 0.0)]
    b += [Outcome("microsoft/Phi-3-mini-4k-instruct", "code", "write code", 1.0)]  # a third name in the same source
    store.ingest(_batch("/a.csv", a))
    store.ingest(_batch("/b.csv", b))
    keys = [m.key for m in store.list_models()]
    assert keys == ["gpt-4o", "microsoft/Phi-3-mini-4k-instruct"]
    assert store.get_model("gpt-4o").kind == "api"
    assert store.aliases_of("microsoft/Phi-3-mini-4k-instruct") == [
        "Phi-3-mini-4k-instruct", "microsoft--Phi-3-mini-4k-instruct", "microsoft/Phi-3-mini-4k-instruct"]
    assert store.resolve_aliases(["gpt-4o(eval_results/gpt4o)", "nope"]) == {"gpt-4o(eval_results/gpt4o)": "gpt-4o"}
    # every key with each name stored for it, as the lookup of an unknown name reads them (plain tuples, both backends)
    names = store.model_names()
    assert all(type(r) is tuple for r in names)
    assert sorted(set(names)) == sorted({(k, k) for k in keys} | {(k, a) for k in keys for a in store.aliases_of(k)})
    om = store.load_outcomes()
    row = om.scores[om.models.index("microsoft/Phi-3-mini-4k-instruct")]
    texts = store.prompt_texts(om.prompt_ids)
    got = {t: float(v) for t, v in zip(texts, row) if not np.isnan(v)}
    # q0: 0 (a) and 1 (b) -> 0.5; q1: 1 and 1; q2, q3 from a only; "write code": 0 and 1 in one source -> 0.5
    assert got == {"q0": 0.5, "q1": 1.0, "q2": 0.0, "q3": 1.0, "write code": 0.5}


def test_a_stored_alias_keeps_its_row(store):
    """A name the alias table already maps keeps mapping there, whatever the rules say now."""
    store.ingest(_batch("/a.csv", [Outcome("Qwen--Qwen1.5-7B", "math", "q", 1.0)]))
    from sqlalchemy import update

    from indexer.store.sql_models import ModelAlias, Model

    with store._write() as conn:  # a user merges the name into another row by hand
        mid = conn.execute(Model.__table__.insert().values(key="someone/qwen-copy", kind="hub").returning(Model.id)).scalar()
        conn.execute(update(ModelAlias).where(ModelAlias.alias == "Qwen--Qwen1.5-7B").values(model_id=mid))
    store.ingest(_batch("/b.csv", [Outcome("Qwen--Qwen1.5-7B", "math", "q2", 0.0)]))
    assert store.outcome_blocks(["someone/qwen-copy"])[0][1] == "math"


def test_migration_0004_adds_the_alias_table_and_backfills(db_url):
    """0003 -> 0004 keeps every model and gives each its own key as alias; 0004 -> 0003 drops the table."""
    from sqlalchemy import MetaData, Table, create_engine, select

    migrate.upgrade_url(db_url, "0003")
    engine = create_engine(db_url)
    try:
        models = Table("models", MetaData(), autoload_with=engine)
        with engine.begin() as conn:
            conn.execute(models.insert(), [{"key": "org/a", "kind": "hub"}, {"key": "plain", "kind": "name"}])
        assert "model_aliases" not in migrate.table_names(db_url)
        r = migrate.upgrade_url(db_url)
        assert (r["from"], r["to"]) == ("0003", migrate.head())  # through 0004 (and any later revision)
        aliases = Table("model_aliases", MetaData(), autoload_with=engine)
        with engine.connect() as conn:
            got = conn.execute(select(aliases.c.alias, models.c.key, aliases.c.rule)
                               .join(models, models.c.id == aliases.c.model_id).order_by(aliases.c.alias)).all()
        assert [tuple(g) for g in got] == [("org/a", "org/a", "as-given"), ("plain", "plain", "as-given")]
        assert migrate.schema_diff(db_url) == []  # the ORM and the migrations agree
        migrate.downgrade_url(db_url, "0003")
        assert "model_aliases" not in migrate.table_names(db_url)
        with engine.connect() as conn:
            assert sorted(conn.execute(select(models.c.key)).scalars()) == ["org/a", "plain"]
    finally:
        engine.dispose()


def test_one_name_in_two_unicode_forms_is_one_model(store):
    """`org/Café-7B` with a precomposed é in one source and with e + a combining accent in another (macOS, some
    exports): one model row under the NFC key, both spellings its aliases, on SQLite and PostgreSQL; a row stored
    before under the other spelling is merged into it by the next pass (merge_model_names). Before, two model rows
    that look the same, each with half the outcomes."""
    import unicodedata

    from sqlalchemy import update

    from indexer.store.sql_models import Model

    nfc, nfd = unicodedata.normalize("NFC", "org/Café-7B"), unicodedata.normalize("NFD", "org/Café-7B")
    assert nfc != nfd and resolve(nfd).key == resolve(nfc).key == nfc
    store.ingest(_batch("/a.csv", [Outcome(nfc, "math", "q1", 1.0)]))
    store.ingest(_batch("/b.csv", [Outcome(nfd, "math", "q2", 0.0)]))
    assert [m.key for m in store.list_models()] == [nfc]
    assert set(store.aliases_of(nfc)) == {nfc, nfd}
    with store._write() as conn:  # what a database written before holds: the other spelling as its own row
        conn.execute(Model.__table__.insert().values(key=nfd, kind="hub"))
        conn.execute(update(Model).values(identity_stamp=None))
    store.ingest(_batch("/c.csv", [Outcome("org/other", "math", "q3", 1.0)]))
    assert dict(store.merge_model_names()) == {nfd: nfc}
    assert sorted(m.key for m in store.list_models()) == [nfc, "org/other"]


def test_rows_stored_before_the_alias_table_are_renamed_or_merged(store):
    """A database from before 0004 keeps names as given: merge_model_names renames a row to its Hub id, or merges
    it into the row that id already has (blocks move, aliases follow, nothing lost)."""
    from sqlalchemy import update

    from indexer.store.sql_models import Model

    store.ingest(_batch("/a.csv", [Outcome("org/x", "math", "q1", 1.0), Outcome("org/y", "math", "q1", 0.0)]))
    store.ingest(_batch("/b.csv", [Outcome("org/z", "code", "c1", 1.0)]))
    with store._write() as conn:  # what an old database holds: the names as the sources gave them
        conn.execute(update(Model).where(Model.key == "org/x").values(key="Qwen--Qwen1.5-7B", kind="name"))
        conn.execute(update(Model).where(Model.key == "org/y").values(key="microsoft--phi-2", kind="name"))
        conn.execute(update(Model).where(Model.key == "org/z").values(key="Phi-2", kind="name"))
        conn.execute(Model.__table__.insert().values(key="microsoft/phi-2", kind="hub"))
        conn.execute(update(Model).values(identity_stamp=None))  # nor had it checked any key (0005)
    store.ingest(_batch("/c.csv", [Outcome("microsoft/phi-2", "math", "q2", 1.0)]))
    done = dict(store.merge_model_names())
    assert done == {"Qwen--Qwen1.5-7B": "Qwen/Qwen1.5-7B", "microsoft--phi-2": "microsoft/phi-2", "Phi-2": "microsoft/phi-2"}
    assert [m.key for m in store.list_models()] == ["Qwen/Qwen1.5-7B", "microsoft/phi-2"]
    assert store.get_model("Qwen/Qwen1.5-7B").kind == "hub"
    blocks = sorted((b, p.tolist()) for _, b, p, _ in store.outcome_blocks(["microsoft/phi-2"]))
    assert [b for b, _ in blocks] == ["code", "math", "math"]  # /a (old name), /b (Phi-2), /c (its own)
    assert {"microsoft--phi-2", "Phi-2", "microsoft/phi-2"} <= set(store.aliases_of("microsoft/phi-2"))
    assert store.merge_model_names() == []  # idempotent


def test_the_reads_find_and_browse_use(store):
    """outcome_blocks, benchmark_model_counts, aliases_by_model on SQLite and PostgreSQL."""
    store.ingest(_batch("/a.csv", [Outcome("Qwen--Qwen1.5-7B", "math", "q1", 1.0), Outcome("org/y", "math", "q1", 0.0),
                                   Outcome("org/y", "code", "c1", 1.0)]))
    store.ingest(_batch("/b.csv", [Outcome("Qwen1.5-7B", "math", "q2", 0.0)]))
    assert store.benchmark_model_counts() == {"math": 2, "code": 1}
    blocks = sorted((m, b, len(p), float(s.sum())) for m, b, p, s in store.outcome_blocks(["Qwen/Qwen1.5-7B", "org/y"]))
    assert blocks == [("Qwen/Qwen1.5-7B", "math", 1, 0.0), ("Qwen/Qwen1.5-7B", "math", 1, 1.0),
                      ("org/y", "code", 1, 1.0), ("org/y", "math", 1, 0.0)]
    assert [b for _, b, _, _ in store.outcome_blocks(["org/y"], benchmarks=["code"])] == ["code"]
    assert store.aliases_by_model() == {"Qwen/Qwen1.5-7B": ["Qwen--Qwen1.5-7B", "Qwen/Qwen1.5-7B", "Qwen1.5-7B"],
                                        "org/y": ["org/y"]}


@pytest.mark.parametrize("name,key,kind", [
    ("hf://mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-v0.1", "hub"),  # huggingface_hub's file system
    ("hf://meta-llama/Llama-3-8B@main", "meta-llama/Llama-3-8B", "hub"),
    ("https://huggingface.co/meta-llama/Llama-3-8B", "meta-llama/Llama-3-8B", "hub"),  # the repo's page
    ("https://huggingface.co/meta-llama/Llama-3-8B/tree/main", "meta-llama/Llama-3-8B", "hub"),
    ("huggingface.co/Qwen/Qwen2-7B", "Qwen/Qwen2-7B", "hub"),
    # an lm-eval run of a downloaded snapshot: pretrained=<the huggingface_hub cache folder>
    ("/root/.cache/huggingface/hub/models--meta-llama--Llama-3-8B/snapshots/" + "a" * 40, "meta-llama/Llama-3-8B", "hub"),
    ("hf://datasets/org/results", "hf://datasets/org/results", "name"),  # a dataset is no model
    ("/cache/hub/datasets--org--results/snapshots/1", "/cache/hub/datasets--org--results/snapshots/1", "name"),
    ("/models/llama-3-8b", "/models/llama-3-8b", "name"),  # a local folder: which repo it came from is unknown
    ("https://example.com/org/model", "https://example.com/org/model", "name"),
])
def test_a_hub_url_or_cache_path_names_its_repo(name, key, kind):
    """The ways tools and users write a Hub repo besides ORG/NAME are that repo: before, `hf://ORG/NAME`, the repo's
    URL and an lm-eval `pretrained=` of a downloaded snapshot's cache folder were plain names (kind "name": no Hub
    metadata, dropped by --open-only, a model apart from the same repo's other results)."""
    assert (resolve(name).key, resolve(name).kind) == (key, kind)


def test_model_lookup_takes_a_hub_url_and_a_stored_name_in_another_case(store):
    """`taskspace model ID`, `search -m ID` and GET /v1/models/{id} find a model by its Hub URL or `hf://` reference,
    and by any name its sources gave it typed in another case (the Hub's ids are case-insensitive); before, both were
    "unknown model"."""
    from indexer.errors import NotFoundError
    from indexer.find import _resolve_models

    store.ingest(_batch("/a.csv", [Outcome("Qwen--Qwen1.5-7B", "math", "q1", 1.0), Outcome("org/y", "math", "q1", 0.0)]))
    for typed in ("hf://Qwen/Qwen1.5-7B", "https://huggingface.co/Qwen/Qwen1.5-7B", "QWEN--qwen1.5-7b",
                  "https://huggingface.co/qwen/QWEN1.5-7B/tree/main"):
        assert _resolve_models(store, [typed]) == ["Qwen/Qwen1.5-7B"], typed
    assert store.rename_models([("org/y", "org/renamed")]) == [("org/y", "org/renamed")]  # the Hub renamed it
    assert _resolve_models(store, ["ORG/Y"]) == ["org/renamed"]  # its old id, in another case
    with pytest.raises(NotFoundError):
        _resolve_models(store, ["hf://org/z"])


def test_a_hub_id_in_another_case_is_the_same_model_without_the_hub(store):
    """Hub ids are case-insensitive (the Hub answers `Meta-Llama/llama-3-8b` with `meta-llama/Llama-3-8B`): offline,
    a source naming a stored model's id in another case adds to that model, and two spellings inside one source are
    one model under the first; a bare name stays case-sensitive. Before, each spelling was a model of its own until a
    pass reached the Hub (with HF_HUB_OFFLINE, for good): `search` listed it twice."""
    store.ingest(_batch("/a.csv", [Outcome("meta-llama/Llama-3-8B", "math", "q1", 1.0)]))
    store.ingest(_batch("/b.csv", [Outcome("Meta-Llama/llama-3-8b", "math", "q2", 0.0),
                                   Outcome("org/Model-7B", "math", "q1", 1.0), Outcome("ORG/model-7b", "math", "q2", 1.0),
                                   Outcome("my-Model", "math", "q1", 1.0), Outcome("my-model", "math", "q1", 0.0)]))
    assert store.aliases_by_model() == {"meta-llama/Llama-3-8B": ["Meta-Llama/llama-3-8b", "meta-llama/Llama-3-8B"],
                                        "org/Model-7B": ["ORG/model-7b", "org/Model-7B"],
                                        "my-Model": ["my-Model"], "my-model": ["my-model"]}
    assert sorted(len(p) for m, _, p, _ in store.outcome_blocks(["meta-llama/Llama-3-8B", "org/Model-7B"])) == [1, 1, 2]


def test_a_hub_id_an_older_taskspace_stored_in_two_cases_is_merged_by_the_next_pass(store):
    """A home an older taskspace indexed holds one Hub id in two spellings as two models (`meta-llama/Llama-3-8B` and
    `Meta-Llama/llama-3-8b`, from two sources). The first pass (or ingest) of this one, offline, merges them into the
    row stored first, the other spelling its alias, the outcomes of both its own, as an ingest of both spellings
    into a fresh home stores them; two bare names that differ in case stay two. Before, the two stayed models of
    their own until a pass reached the Hub and their metadata was due again (never offline): listed twice."""
    from sqlalchemy import update

    from indexer.store.sql_models import Model

    store.ingest(_batch("/a.csv", [Outcome("meta-llama/Llama-3-8B", "math", "q1", 1.0)]))
    with store.engine.begin() as conn:  # out of the way, so the next ingest stores its spelling apart, as before
        conn.execute(update(Model).where(Model.key == "meta-llama/Llama-3-8B").values(key="x/hidden"))
    store.ingest(_batch("/b.csv", [Outcome("Meta-Llama/llama-3-8b", "math", "q2", 0.0),
                                   Outcome("my-Model", "math", "q1", 1.0), Outcome("my-model", "math", "q1", 0.0)]))
    with store.engine.begin() as conn:  # what the older taskspace left: two rows, checked under older rules
        conn.execute(update(Model).where(Model.key == "x/hidden").values(key="meta-llama/Llama-3-8B"))
        conn.execute(update(Model).values(identity_stamp=None))
    assert len(store.list_models()) == 4
    assert store.merge_model_names() == [("Meta-Llama/llama-3-8b", "meta-llama/Llama-3-8B")]
    assert store.aliases_by_model() == {"meta-llama/Llama-3-8B": ["Meta-Llama/llama-3-8b", "meta-llama/Llama-3-8B"],
                                        "my-Model": ["my-Model"], "my-model": ["my-model"]}
    assert [len(p) for _, _, p, _ in store.outcome_blocks(["meta-llama/Llama-3-8B"])] == [1, 1]
    assert store.merge_model_names() == []  # done once
