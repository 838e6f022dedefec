"""Alembic creates every table: an empty database goes to head and back to base, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from indexer.errors import StoreError
from indexer.store import sql_migrate as migrate

TABLES = ["benchmark_prompts", "benchmark_vectors", "benchmarks", "model_aliases", "model_vectors", "models", "outcomes", "prompts",
          "runs", "sources", "space_calibrations", "space_pattern_prompts", "space_patterns", "space_priors", "spaces"]


def test_upgrade_to_head_and_back_to_base(db_url):
    assert [t for t in migrate.table_names(db_url) if t != "alembic_version"] == []
    assert migrate.status(db_url)["current"] is None
    r = migrate.upgrade_url(db_url)
    assert (r["from"], r["to"]) == (None, migrate.head())
    assert [t for t in migrate.table_names(db_url) if t != "alembic_version"] == TABLES
    assert migrate.schema_diff(db_url) == []  # the migrations create exactly the ORM tables
    # ... and the indexes the ORM leaves undeclared (sql_models.UNDECLARED_INDEXES), a partial one where supported
    from sqlalchemy import inspect

    from indexer.store.sql_models import UNDECLARED_INDEXES

    engine = migrate.make_engine(db_url)
    try:
        indexes = {ix["name"]: ix for ix in inspect(engine).get_indexes("models")}
    finally:
        engine.dispose()
    assert UNDECLARED_INDEXES <= set(indexes)
    where = " ".join(str(getattr(w, "text", w)) for w in indexes["ix_models_unmeasured"]["dialect_options"].values())
    assert "outcomes_digest IS NULL" in where.replace("(", "").replace(")", "")
    migrate.upgrade_url(db_url)  # repeatable
    assert migrate.status(db_url)["current"] == migrate.head()
    r = migrate.downgrade_url(db_url, "base")
    assert r["to"] is None
    assert [t for t in migrate.table_names(db_url) if t != "alembic_version"] == []
    migrate.upgrade_url(db_url)
    assert [t for t in migrate.table_names(db_url) if t != "alembic_version"] == TABLES


def test_head_constant_matches_the_scripts():
    assert migrate.HEAD == migrate.head(), "bump sql_migrate.HEAD to the newest revision in migrations/versions"


def test_store_refuses_an_unmigrated_database(db_url):
    from indexer.store.sql import Store

    with pytest.raises(StoreError, match="taskspace db upgrade"):
        Store(db_url)
    assert migrate.table_names(db_url) in ([], ["alembic_version"])  # nothing was created behind our back


def test_embedded_default_is_migrated_on_first_use(taskspace_home):
    from indexer.store.sql import Store

    with Store() as store:
        assert store.url == f"sqlite:///{taskspace_home / 'taskspace.db'}"
        assert store.counts()["models"] == 0
    assert migrate.status()["current"] == migrate.head()


def test_cli_db_commands(tmp_path):
    from typer.testing import CliRunner

    from indexer.cli import app

    url = f"sqlite:///{tmp_path / 'cli.db'}"
    run = CliRunner().invoke
    r = run(app, ["db", "current", "--url", url])
    assert r.exit_code == 0 and "current (empty)" in r.output and "run `taskspace db upgrade`" in r.output
    r = run(app, ["db", "upgrade", "--url", url])
    assert r.exit_code == 0 and f"(empty) -> {migrate.head()}" in r.output
    assert "up to date" in run(app, ["db", "current", "--url", url]).output
    r = run(app, ["db", "downgrade", "base", "--url", url])
    assert r.exit_code != 0 and migrate.status(url)["current"] == migrate.head()  # refused without --yes
    r = run(app, ["db", "downgrade", "base", "--url", url, "--yes"])
    assert r.exit_code == 0 and migrate.status(url)["current"] is None


def test_concurrent_first_use_migrates_once(db_url):
    """Several processes opening a fresh database at once: one migrates, the others wait and find it done."""
    import subprocess
    import sys

    code = "import sys; from indexer.store.sql import Store; s = Store(sys.argv[1], upgrade=True); print(s.counts()['models'])"
    procs = [subprocess.Popen([sys.executable, "-c", code, db_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [e for _, e in outs]
    assert [o.strip() for o, _ in outs] == ["0", "0", "0"]
    assert migrate.status(db_url)["current"] == migrate.head()


def test_store_refuses_a_newer_schema(db_url):
    from indexer.store.sql import Store

    with Store(db_url, upgrade=True) as store:
        with store.engine.begin() as conn:
            conn.exec_driver_sql("update alembic_version set version_num = 'ffff_future'")
    with pytest.raises(StoreError, match="ffff_future, newer than this taskspace"):
        Store(db_url, upgrade=True)  # never "upgrades" a database it does not understand


def test_upgrade_from_0001_keeps_the_data_and_adds_space_priors(db_url):
    """A database made by the first release (0001) keeps its spaces through 0002 (space_priors) and back."""
    from datetime import datetime, timezone

    from sqlalchemy import MetaData, Table, create_engine, select

    from indexer.store.sql import Store

    migrate.upgrade_url(db_url, "0001")
    engine = create_engine(db_url)
    try:
        spaces = Table("spaces", MetaData(), autoload_with=engine)
        with engine.begin() as conn:
            conn.execute(spaces.insert().values(key="k" * 64, encoder="enc@1", dim=385, lam=1.0, eps=0.0, method="auto",
                                                params={"intercept": True}, created_at=datetime.now(timezone.utc)))
        assert "space_priors" not in migrate.table_names(db_url)
        r = migrate.upgrade_url(db_url)
        assert (r["from"], r["to"]) == ("0001", migrate.head()) and "space_priors" in migrate.table_names(db_url)
        with Store(db_url) as store:
            (space,) = store.list_spaces()
            assert (space.method, space.params) == ("auto", {"intercept": True})
            assert store.get_space_prior(space.id) is None
        migrate.downgrade_url(db_url, "0001")
        assert "space_priors" not in migrate.table_names(db_url)
        with engine.connect() as conn:
            assert conn.execute(select(spaces.c.method)).scalars().all() == ["auto"]
    finally:
        engine.dispose()


def test_sqlite_wal_switch_waits_for_a_writer_on_a_new_file(tmp_path):
    """SQLite refuses `PRAGMA journal_mode=WAL` at once ("database is locked", no busy timeout) while another
    connection holds a write lock on a file still in rollback mode: opening must wait for it, not fail."""
    import sqlite3
    import threading
    import time

    from indexer.store.sql_migrate import make_engine

    path = tmp_path / "new.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("create table t (a)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("insert into t values (1)")
    with pytest.raises(sqlite3.OperationalError, match="locked"):  # what SQLite itself does
        sqlite3.connect(path, timeout=5).execute("PRAGMA journal_mode=WAL")
    threading.Timer(0.4, lambda: other.execute("COMMIT")).start()
    engine = make_engine(f"sqlite:///{path}")
    t0 = time.perf_counter()
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("select count(*) from t").scalar() == 1
    assert time.perf_counter() - t0 >= 0.3
    engine.dispose()
    other.close()


def _set_revision(url: str, rev: str) -> None:
    """Write ``rev`` into the database's alembic_version (a revision this taskspace may not know)."""
    engine = migrate.make_engine(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(f"update alembic_version set version_num = '{rev}'")
    finally:
        engine.dispose()


def test_a_revision_alembic_cannot_place_is_one_error_naming_it(db_url):
    """`taskspace db upgrade 0099`, `db downgrade foo`, and either on a database a newer taskspace migrated: one error
    naming the revision (or that the database is newer), not Alembic's CommandError traceback."""
    from indexer.errors import ConfigError

    migrate.upgrade_url(db_url)
    with pytest.raises(ConfigError, match=r"to revision '0099': Can't locate revision .*revisions: base, 0001, "):
        migrate.upgrade_url(db_url, "0099")
    with pytest.raises(ConfigError, match="to revision 'foo'"):
        migrate.downgrade_url(db_url, "foo")
    assert migrate.status(db_url)["current"] == migrate.head()
    _set_revision(db_url, "ffff_future")  # as a newer taskspace leaves it
    for step in (lambda: migrate.upgrade_url(db_url), lambda: migrate.downgrade_url(db_url, "0012")):
        with pytest.raises(StoreError, match="at schema ffff_future, newer than this taskspace .*upgrade taskspace"):
            step()
    assert migrate.status(db_url)["current"] == "ffff_future"


def test_db_current_on_a_newer_database_says_to_upgrade_taskspace(tmp_path):
    """`taskspace db current` on a database a newer taskspace migrated: "newer than this taskspace: upgrade taskspace";
    before, "run `taskspace db upgrade`", which cannot migrate a revision it does not know."""
    from typer.testing import CliRunner

    from indexer.cli import app

    url = f"sqlite:///{tmp_path / 'newer.db'}"
    migrate.upgrade_url(url)
    assert migrate.status(url)["newer"] is False
    _set_revision(url, "ffff_future")
    assert migrate.status(url)["newer"] is True
    r = CliRunner().invoke(app, ["db", "current", "--url", url])
    assert r.exit_code == 0, r.output
    assert "current ffff_future" in r.output and "newer than this taskspace: upgrade taskspace" in r.output
    assert "db upgrade" not in r.output


def test_a_postgres_search_path_naming_no_schema_is_named(pg_url):
    """A PostgreSQL URL whose search_path names a schema that does not exist (a typo in `options=-csearch_path=...`):
    `db upgrade`, `db current` and opening the store say so, naming the search_path and what to do; before, opening
    said "no taskspace tables; run `taskspace db upgrade`", and that failed with a raw "no schema has been selected to
    create in" and the SQL of Alembic's CREATE TABLE."""
    from indexer.store.sql import Store

    url = migrate.with_search_path(pg_url.split("?")[0], "no_such_schema_xyz")
    for step in (lambda: migrate.upgrade_url(url), lambda: migrate.status(url), lambda: Store(url)):
        with pytest.raises(StoreError, match=r"its search_path \(no_such_schema_xyz\) names no schema that exists "
                                             r"and this user may use; create it"):
            step()


def test_db_upgrade_to_a_revision_the_database_is_past_is_refused(tmp_path):
    """`taskspace db upgrade 0005` on a database at head: a usage error saying it is past that revision and that
    `db downgrade 0005 --yes` goes down; before, Alembic did nothing and the command said "0013 -> 0013", exit 0."""
    from indexer.errors import ConfigError

    url = f"sqlite:///{tmp_path / 'past.db'}"
    migrate.upgrade_url(url)
    with pytest.raises(ConfigError, match=rf"is at {migrate.HEAD}, past 0005: .*`taskspace db downgrade 0005 --yes`"):
        migrate.upgrade_url(url, "0005")
    assert migrate.upgrade_url(url, migrate.HEAD)["to"] == migrate.HEAD  # where it is: nothing to do, no error
    migrate.downgrade_url(url, "0003")
    assert migrate.upgrade_url(url, "0005") == {"url": url, "from": "0003", "to": "0005"}


def test_a_migration_the_user_may_not_run_is_one_line_saying_what_to_do(pg_url):
    """`taskspace db upgrade` as a PostgreSQL user without CREATE on the schema: one line with the driver's reason,
    what to do, and that nothing was changed; before, the message carried the SQL of Alembic's CREATE TABLE and
    SQLAlchemy's link after "permission denied for schema"."""
    import uuid

    role = "taskspace_t_" + uuid.uuid4().hex[:12]  # a role of this test only (roles are the server's, not the schema's)
    admin = migrate.make_engine(pg_url)
    try:
        with admin.begin() as conn:
            conn.exec_driver_sql(f'create role "{role}" login')
            schema = conn.exec_driver_sql("select current_schema()").scalar()
            conn.exec_driver_sql(f'grant usage on schema "{schema}" to "{role}"')  # it may read there, not create
        url = pg_url.replace("postgres@", f"{role}@", 1)
        with pytest.raises(StoreError) as info:
            migrate.upgrade_url(url)
        message = str(info.value)
        assert "permission denied for schema" in message and "GRANT CREATE ON SCHEMA" in message
        assert message.endswith("nothing was changed") and "[SQL:" not in message and "\n" not in message
        assert migrate.status(pg_url)["current"] is None
    finally:
        with admin.begin() as conn:
            schema = conn.exec_driver_sql("select current_schema()").scalar()
            exists = conn.exec_driver_sql(f"select 1 from pg_roles where rolname = '{role}'").scalar()
            if exists:
                conn.exec_driver_sql(f'revoke all on schema "{schema}" from "{role}"')
                conn.exec_driver_sql(f'drop role "{role}"')
        admin.dispose()


def test_db_current_on_a_sqlite_file_that_does_not_exist_does_not_create_it(tmp_path):
    """`taskspace db current` (a status) on a SQLite database whose file does not exist (not created yet, or deleted
    beside its index): "(empty)" and no file; before, connecting created an empty file, after which `check` no longer
    said the SQL database is missing but reported every indexed point as extra and advised `reindex`."""
    from typer.testing import CliRunner

    from indexer.cli import app

    db = tmp_path / "gone.db"
    r = CliRunner().invoke(app, ["db", "current", "--url", f"sqlite:///{db}"])
    assert r.exit_code == 0 and "current (empty)" in r.output, r.output
    assert list(tmp_path.iterdir()) == []
    assert migrate.status(f"sqlite:///{db}")["current"] is None and not db.exists()


def test_migration_0016_asks_again_for_models_without_a_count_that_name_a_base(db_url):
    """A home upgraded to 0016: a Hub model stored without a parameter count whose card names a base model (an
    adapter) has its metadata asked again by the next pass (``models_without_metadata``), where it gets its base's
    count; models with a count, or without a base, keep theirs as fetched. Before, such an adapter stayed unsized
    until its metadata was next due, up to 7 days after the upgrade."""
    from indexer.records import Outcome, SourceBatch, SourceInfo
    from indexer.store.sql import Store

    with Store(db_url, upgrade=True) as st:
        st.upsert_models([{"key": "org/lora", "base_model": "org/base"}, {"key": "org/sized", "num_parameters": 5,
                          "base_model": "org/base"}, {"key": "org/plain"}])
        st.ingest(SourceBatch(SourceInfo("table", "/t.csv", "r1"), {}, [
            Outcome(m, "math", "What is 2+2?", 1.0, prompt_id="0") for m in ("org/lora", "org/sized", "org/plain")]))
        assert st.models_without_metadata() == []
    migrate.downgrade_url(db_url, "0015")
    migrate.upgrade_url(db_url)
    with Store(db_url) as st:
        assert st.models_without_metadata() == ["org/lora"]
        assert st.get_model("org/sized").fetched_at is not None and st.get_model("org/plain").fetched_at is not None


def test_migration_0017_keeps_every_calibration_map_and_stamps_none_with_the_current_estimator(db_url):
    """A home upgraded to 0017 keeps its calibration maps as they were (region variance included) with no estimator
    stamped (``region_estimator`` NULL: the estimator before it), which the next pass fits again; a map saved at
    0017 keeps its stamp, read by ``get_space_calibration`` and ``space_states`` alike, and going down to 0016 and up
    again loses no map."""
    import dataclasses

    from indexer import posterior
    from indexer.represent import LEVELS
    from indexer.store.sql import Store

    cal = posterior.Calibration(0.1, 0.7, 100, spread=0.05, level=2.1, specific=0.7, shared=3.2, lam_cap=4.0,
                                region_var=0.0125, region_estimator=posterior.REGION_ESTIMATOR)
    with Store(db_url, upgrade=True) as st:
        space = st.get_or_create_space("enc@1", 11, 1.0, 0.0, method="auto-mean", params={"intercept": True, "select": "gcv", "prior": "mean",
                                                                                       "levels": LEVELS})
        st.save_model_vectors(space.id, [], calibration=cal, calibration_models=9)
        assert st.get_space_calibration(space.id).region_estimator == posterior.REGION_ESTIMATOR
        assert st.space_states()[0][1].region_estimator == posterior.REGION_ESTIMATOR
    migrate.downgrade_url(db_url, "0016")
    migrate.upgrade_url(db_url)
    with Store(db_url) as st:
        got = st.get_space_calibration(space.id)
        assert got == dataclasses.replace(cal, n_models=9) and got.region_var == pytest.approx(0.0125) and got.region_estimator is None
        assert st.space_states()[0][1].region_estimator is None


def test_migration_0018_keeps_every_calibration_map_and_a_downgrade_has_the_next_pass_fit_its_links_again(db_url):
    """A map saved at 0018 keeps its benchmarks' links (read by ``get_space_calibration`` and ``space_states``
    alike); going down to 0017 drops them and up again restamps the map with estimator 2, so the next pass fits it
    again (indexer.pipeline._fitted_before) instead of keeping it without links; every other value of the map kept."""
    import dataclasses

    from indexer import pipeline, posterior
    from indexer.represent import LEVELS
    from indexer.store.sql import Store

    links = (("alpha", "beta"), ("gamma",))
    cal = posterior.Calibration(0.1, 0.7, 100, spread=0.05, level=2.1, specific=0.7, shared=3.2, lam_cap=4.0,
                                region_var=0.0125, region_estimator=posterior.REGION_ESTIMATOR, links=links)
    params = {"intercept": True, "select": "gcv", "prior": "mean", "levels": LEVELS}
    with Store(db_url, upgrade=True) as st:
        space = st.get_or_create_space("enc@1", 11, 1.0, 0.0, method="auto-mean", params=params)
        st.save_model_vectors(space.id, [], calibration=cal, calibration_models=9)
        assert st.get_space_calibration(space.id).links == links and st.space_states()[0][1].links == links
        assert pipeline._fitted_before(st.get_space_calibration(space.id), space) == ""
    migrate.downgrade_url(db_url, "0017")
    migrate.upgrade_url(db_url)
    with Store(db_url) as st:
        got = st.get_space_calibration(space.id)
        assert got == dataclasses.replace(cal, n_models=9, links=None) and got.region_estimator == 2
        assert "without the benchmarks' links" in pipeline._fitted_before(got, space)


def test_migration_0019_keeps_each_groups_average_model_and_a_downgrade_leaves_the_rest_of_the_map(db_url):
    """A map saved at 0019 keeps its groups' average models (Calibration.centres, read by ``get_space_calibration``
    and ``space_states`` alike); down to 0018 and up again it has none (the next pass computes them:
    tests/test_pipeline_prior.py), every other value kept."""
    import dataclasses

    from indexer import posterior
    from indexer.represent import LEVELS
    from indexer.store.sql import Store

    links = (("alpha", "beta"), ("gamma",))
    centres = ((0.25, -1.5, 0.125), (1.0 / 3.0, 2.0, -0.0625))
    cal = posterior.Calibration(0.1, 0.7, 100, spread=0.05, level=2.1, specific=0.7, shared=3.2, lam_cap=4.0,
                                region_var=0.0125, region_estimator=posterior.REGION_ESTIMATOR, links=links,
                                centres=centres)
    params = {"intercept": True, "select": "gcv", "prior": "mean", "levels": LEVELS}
    with Store(db_url, upgrade=True) as st:
        space = st.get_or_create_space("enc@1", 3, 1.0, 0.0, method="auto-mean", params=params)
        st.save_model_vectors(space.id, [], calibration=cal, calibration_models=9)
        assert st.get_space_calibration(space.id).centres == centres and st.space_states()[0][1].centres == centres
        assert st.set_calibration_links(space.id, None) and st.get_space_calibration(space.id).centres is None
        st.save_model_vectors(space.id, [], calibration=cal, calibration_models=9)
    migrate.downgrade_url(db_url, "0018")
    migrate.upgrade_url(db_url)
    with Store(db_url) as st:
        got = st.get_space_calibration(space.id)
        assert got == dataclasses.replace(cal, n_models=9, centres=None)


def test_migration_0020_makes_a_stored_count_of_0_unknown_and_has_the_next_pass_push_and_ask_again(db_url):
    """A home that stored a parameter count of 0 (or below) before 0 was read as unknown (records.parameter_count) has
    it NULL after 0020, whose count it is with it: the next pass pushes those models' points (their point digests
    forgotten: ``unpushed_models``) and asks again for a Hub model's metadata (``models_without_metadata``); a model
    with a count keeps it, its digest and its metadata as fetched. Going down to 0019 changes nothing. Before, the 0
    stayed in SQL (the model page and ``taskspace models`` said 0 parameters) until the Hub metadata was fetched
    again, and the points written with it kept their stored digests, so no pass pushed them."""
    import numpy as np
    from sqlalchemy import text

    from indexer.records import Outcome, SourceBatch, SourceInfo
    from indexer.store.sql import Store
    from indexer.store.sql_types import ModelVector

    keys = ["org/zero", "org/below", "org/sized", "local-zero"]
    with Store(db_url, upgrade=True) as st:
        st.upsert_models([{"key": "org/zero", "num_parameters": 7, "num_parameters_from": "org/base"},
                          {"key": "org/below", "num_parameters": 7}, {"key": "org/sized", "num_parameters": 7}])
        st.ingest(SourceBatch(SourceInfo("table", "/t.csv", "r1"), {}, [
            Outcome(m, "math", "What is 2+2?", 1.0, prompt_id="0") for m in keys]))
        space = st.get_or_create_space("enc@1", 4, 1.0, 0.0)
        digests = st.model_digests()
        st.save_model_vectors(space.id, [ModelVector(k, np.ones(4, dtype=np.float32), 1, ["math"], {}, digests[k])
                                         for k in keys])
        st.save_point_digests(space.id, st.claim_point_digests(space.id), {k: f"d-{k}" for k in keys})
        assert st.unpushed_models(space.id) == [] and st.models_without_metadata() == ["local-zero"]
    migrate.downgrade_url(db_url, "0019")
    engine = migrate.make_engine(db_url)  # what a taskspace before records.parameter_count stored
    try:
        with engine.begin() as conn:
            for key, n in (("org/zero", 0), ("org/below", -3), ("local-zero", 0)):
                conn.execute(text("UPDATE models SET num_parameters = :n WHERE key = :k"), {"n": n, "k": key})
    finally:
        engine.dispose()
    migrate.upgrade_url(db_url)
    with Store(db_url) as st:
        got = {k: (st.get_model(k).num_parameters, st.get_model(k).num_parameters_from) for k in keys}
        assert got == {"org/zero": (None, None), "org/below": (None, None), "org/sized": (7, None),
                       "local-zero": (None, None)}
        assert st.unpushed_models(space.id) == ["local-zero", "org/below", "org/zero"]
        assert sorted(st.models_without_metadata()) == ["local-zero", "org/below", "org/zero"]
        assert st.get_model("org/sized").fetched_at is not None
    migrate.downgrade_url(db_url, "0019")  # a no-op: up again, every value is as 0020 left it
    migrate.upgrade_url(db_url)
    with Store(db_url) as st:
        assert {k: (st.get_model(k).num_parameters, st.get_model(k).num_parameters_from) for k in keys} == got


@pytest.mark.parametrize("url", ["not a url", "nosuchdb://x/y", "sqlite:////nonexistent-folder-xyz/taskspace.db"])
def test_a_bad_url_given_to_taskspace_db_is_told_to_be_fixed_where_it_was_given(url):
    """`taskspace db current --url nosuch://x` (or `upgrade`, `downgrade`): the error says to fix the URL in
    TASKSPACE_DATABASE_URL or in `--url` of `taskspace db`, as the errors of a URL that cannot connect do; before, it
    said only "set TASKSPACE_DATABASE_URL to e.g. ...", which `--url` overrides, so following it changed nothing."""
    for call in (migrate.status, migrate.upgrade_url):
        with pytest.raises(StoreError) as info:
            call(url)
        assert "TASKSPACE_DATABASE_URL, or `--url` of `taskspace db`" in str(info.value), str(info.value)


def test_db_current_check_exits_nonzero_unless_the_schema_is_at_head(tmp_path):
    """`taskspace db current --check`: exit 0 at the code's head, 1 for a database behind it or empty (`taskspace db
    upgrade` brings it there), 3 for one a newer taskspace migrated; a script need not parse the text. Without
    --check the command shows the state and exits 0, as before."""
    from typer.testing import CliRunner

    from indexer.cli import app

    url = f"sqlite:///{tmp_path / 'c.db'}"
    run = lambda *a: CliRunner().invoke(app, ["db", "current", "--url", url, *a])  # noqa: E731
    assert run("--check").exit_code == 1  # empty (no file)
    migrate.upgrade_url(url, "0019")
    r = run("--check")
    assert r.exit_code == 1 and "run `taskspace db upgrade`" in r.output, r.output
    assert run().exit_code == 0
    migrate.upgrade_url(url)
    assert run("--check").exit_code == 0
    _set_revision(url, "ffff_future")
    assert run("--check").exit_code == 3
    assert "--check" in CliRunner().invoke(app, ["db", "current", "-h"]).output
    assert "--check" in CliRunner().invoke(app, ["db", "-h"]).output


def test_db_history_lists_the_revisions_and_marks_the_databases(db_url):
    """`taskspace db history` lists the schema revisions oldest first, each with its description, marking the one the
    database is at and the newest, so an operator picks the REVISION of `db downgrade REVISION --yes`; before, "No
    such command 'history'", and the revisions were named only by the error of a revision Alembic cannot place."""
    from typer.testing import CliRunner

    from indexer.cli import app

    migrate.upgrade_url(db_url, "0005")
    r = CliRunner().invoke(app, ["db", "history", "--url", db_url])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    revs = [line.split()[0] for line in lines if line[:4].isdigit()]
    assert revs == sorted(migrate.known_revisions()), r.output
    assert "(current)" in next(line for line in lines if line.startswith("0005")), r.output
    assert "(head)" in next(line for line in lines if line.startswith(migrate.head())), r.output
    assert "stored digests" in next(line for line in lines if line.startswith("0005")), r.output
    # each description whole or marked as shortened, never cut where its docstring's wrapping fell ("(packed blocks),")
    first = next(line for line in lines if line.startswith("0001"))
    assert first.rstrip().endswith(("runs.", "...")) and len(first) < 120, first
    assert "history" in CliRunner().invoke(app, ["db", "-h"]).output
