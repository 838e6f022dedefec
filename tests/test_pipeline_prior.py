"""The worker with ``auto-mean`` (the default): the prior (the models' mean normal) is stored with the space,
held fixed while models are added (one new model = one solve), and re-estimated, with every model re-solved,
when the models changed since reach a quarter of those it was estimated from (space.REFIT_SHARE); the stored
vectors always equal the solver with that prior."""

from __future__ import annotations

import json

import numpy as np
import pytest

from indexer import represent, sync
from indexer.config import get_settings, reset_settings
from indexer.solver import HyperplaneSolver
from indexer.space import method_options
from indexer.sourcelist import SourceSpec

from helpers import model_vectors, outcomes, write_table


@pytest.fixture(autouse=True)
def auto_mean(monkeypatch):
    """These tests are about auto-mean's stored prior on plain embeddings (auto-mc holds it the same way:
    tests/test_mc_path.py)."""
    monkeypatch.setenv("TASKSPACE_METHOD", "auto-mean")
    reset_settings()


def _direct(ix, encoder, prior):
    """[e_i, c_i] of every stored model fitted directly by the solver with ``prior`` ('mean' or an array)."""
    om = ix.store.load_outcomes()
    D = encoder.encode(ix.store.prompt_texts(om.prompt_ids))
    s = HyperplaneSolver(**dict(method_options("auto"), prior=prior)).fit(D, om.scores, model_ids=om.models)
    return {m: np.append(s.normals_[i], s.intercept_[i]) for i, m in enumerate(om.models)}, s


def test_auto_mean_holds_the_prior_while_models_are_added_and_refreshes_it_when_a_quarter_changed(tmp_path, env, encoder):
    assert get_settings().method == "auto-mean"
    rng = np.random.default_rng(3)
    src = {name: tmp_path / name for name in "abcd"}
    write_table(src["a"], "alpha", outcomes(rng, ["m1", "m2", "m3", "m4"], 14), 14)
    write_table(src["b"], "alpha", outcomes(rng, ["m5"], 14), 14)  # same prompts, one more model
    write_table(src["c"], "alpha", outcomes(rng, ["m6"], 14), 14)
    write_table(src["d"], "alpha", outcomes(rng, ["m7"], 14), 14)

    ix = env()
    # four models: fewer than PRIOR_MIN_MODELS, so no prior yet (plain auto), nothing stored
    r1 = ix.run([SourceSpec(str(src["a"]))])
    assert r1.status == "ok" and r1.counts["solved"] == 4 and "prior_models" not in r1.counts
    (space,) = ix.store.list_spaces()
    assert space.method == "auto-mean" and space.params["prior"] == "mean" and space.dim == 385
    assert ix.store.get_space_prior(space.id) is None
    want, _ = _direct(ix, encoder, None)
    for m, v in model_vectors(ix).items():
        np.testing.assert_allclose(v, want[m], atol=1e-5)
    assert ix.run().counts["solved"] == 0  # nothing new: no work, even without a prior

    # the fifth model: the prior is estimated from all five and every model re-solved toward it
    r2 = ix.run([SourceSpec(str(src["b"]))])
    assert r2.counts["solved"] == 5 and r2.counts["prior_models"] == 5 and r2.counts["pushed"] == 5
    prior = ix.store.get_space_prior(space.id)
    want, solver = _direct(ix, encoder, "mean")
    np.testing.assert_allclose(prior.vector, solver.prior_, atol=1e-6)
    second = model_vectors(ix)
    for m in want:
        np.testing.assert_allclose(second[m], want[m], atol=1e-5)

    # one more (1 changed < 5 / 4): only it is solved, toward the stored prior; the others are untouched
    r3 = ix.run([SourceSpec(str(src["c"]))])
    assert r3.counts["solved"] == 1 and "prior_models" not in r3.counts
    assert ix.store.get_space_prior(space.id).digest == prior.digest
    third = model_vectors(ix)
    for m in second:
        np.testing.assert_array_equal(third[m], second[m])
    fixed, _ = _direct(ix, encoder, prior.vector)
    for m in fixed:  # all six equal a fit with the stored prior held fixed
        np.testing.assert_allclose(third[m], fixed[m], atol=1e-5)
    assert all(d.clean for d in sync.check(ix.store, ix.vectors))

    # another one (2 changed >= 5 / 4): re-estimated from all seven, every model re-solved
    r4 = ix.run([SourceSpec(str(src["d"]))])
    assert r4.counts["solved"] == 7 and r4.counts["prior_models"] == 7
    prior4 = ix.store.get_space_prior(space.id)
    assert prior4.n_models == 7 and prior4.digest != prior.digest
    want, solver = _direct(ix, encoder, "mean")
    np.testing.assert_allclose(prior4.vector, solver.prior_, atol=1e-6)
    fourth = model_vectors(ix)
    for m in want:
        np.testing.assert_allclose(fourth[m], want[m], atol=1e-5)
    assert ix.store.stale_models(space.id) == []
    assert all(d.clean for d in sync.check(ix.store, ix.vectors))
    # the index answers with the re-estimated vectors: Qdrant's Dot score is the solver's prediction
    q = encoder.encode(["Question 3 on chemistry: what is item 3 of alpha?"])
    hits = ix.vectors.search(sync.space_name(space), "models", represent.lift(q, space)[0], limit=10)
    scores = dict(zip(solver.model_ids_, solver.predict(q)[0]))
    assert {h.key: round(h.score, 4) for h in hits} == {m: round(float(v), 4) for m, v in scores.items()}


def test_a_re_estimation_with_too_few_models_removes_the_stored_prior(tmp_path, env, encoder):
    """Eight models, then the source replaced by three of them (3 x 2 <= 8): the prior is re-estimated, there are
    too few models for one, so it is removed and the three are plain auto; the next pass does no work."""
    rng = np.random.default_rng(4)
    names = [f"m{k}" for k in range(8)]
    table = outcomes(rng, names, 12)
    write_table(tmp_path / "a", "alpha", table, 12)
    ix = env()
    assert ix.run([SourceSpec(str(tmp_path / "a"))]).counts["prior_models"] == 8
    (space,) = ix.store.list_spaces()
    write_table(tmp_path / "a", "alpha", {m: table[m] for m in names[:3]}, 12)
    r = ix.run()
    assert r.status == "ok" and r.counts["solved"] == 3 and r.counts["removed"] == 5
    assert ix.store.get_space_prior(space.id) is None and ix.store.stale_models(space.id) == []
    want, _ = _direct(ix, encoder, None)
    assert sorted(model_vectors(ix)) == names[:3]
    for m, v in model_vectors(ix).items():
        np.testing.assert_allclose(v, want[m], atol=1e-5)
    assert ix.run().counts["solved"] == 0


@pytest.mark.parametrize("method", ["auto-mean", "auto"])
def test_known_models_gaining_a_benchmark_count_toward_re_estimating_the_prior_and_map(tmp_path, env, monkeypatch,
                                                                                        method):
    """The prior and the calibration map are re-estimated when the models solved since reach a quarter of those they
    were estimated from, whether new or known models with new results: 8 models, then a second benchmark for one of
    them (held: 1 < 8 / 4), then for another (2: every model solved, the prior and map of a fresh index). Before,
    only the model count was compared (doubled or halved), so known models gaining any number of benchmarks never
    refitted them: measured on evalarena_code, an evolving home's probabilities drifted up to 0.12 from a fresh
    index's, its first model differing for 7-17% of queries (docs/BENCHMARKS.md "Held prior and map")."""
    monkeypatch.setenv("TASKSPACE_METHOD", method)
    reset_settings()
    rng = np.random.default_rng(8)
    names = [f"m{k}" for k in range(8)]
    write_table(tmp_path / "a", "alpha", outcomes(rng, names, 12), 12)
    write_table(tmp_path / "b", "beta", outcomes(rng, ["m0"], 10), 10, offset=50)
    write_table(tmp_path / "c", "beta2", outcomes(rng, ["m1"], 10), 10, offset=70)
    ix = env()
    first = ix.run([SourceSpec(str(tmp_path / "a"))])
    assert first.counts["solved"] == 8
    (space,) = ix.store.list_spaces()
    fitted = ix.store.get_space_calibration(space.id)
    held = ix.run([SourceSpec(str(tmp_path / "b"))])
    assert held.counts["solved"] == 1 and "prior_models" not in held.counts
    assert vars(ix.store.get_space_calibration(space.id)) == vars(fitted)  # held
    assert ix.store.fit_drift(space.id) == ((1 if method == "auto-mean" else None), 1)
    again = ix.run([SourceSpec(str(tmp_path / "c"))])
    assert again.counts["solved"] == 8  # every model, toward the re-estimated prior, calibrated by a map fitted now
    if method == "auto-mean":
        assert again.counts["prior_models"] == 8
    assert ix.store.fit_drift(space.id) == ((0 if method == "auto-mean" else None), 0)
    assert ix.store.get_space_calibration(space.id).n_cells > fitted.n_cells
    assert ix.run().counts["solved"] == 0


def _six_then_one(tmp_path, monkeypatch, seed: int):
    """A home in tmp_path/home (fresh settings), two table sources (tmp_path/a: 6 models, tmp_path/b: 1 more), and
    ``index(*args)``: `taskspace index --json ARGS` in this process, its counts (asserting exit 0)."""
    from typer.testing import CliRunner

    from indexer.cli import app

    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "home"))
    reset_settings()
    rng = np.random.default_rng(seed)
    write_table(tmp_path / "a", "alpha", outcomes(rng, [f"m{k}" for k in range(6)], 10), 10)
    write_table(tmp_path / "b", "alpha", outcomes(rng, ["m6"], 10), 10)
    run = CliRunner().invoke

    def index(*args):
        out = run(app, ["index", "--json", *args])
        assert out.exit_code == 0, out.output
        return json.loads(out.output[out.output.index("{"):])["counts"]

    return index


def test_index_refresh_prior_re_estimates_now(tmp_path, monkeypatch):
    """`taskspace index --refresh-prior`: 6 models, then 1 more (1 < 6 / 4: held), then the flag re-estimates from 7."""
    from indexer.store.sql import open_store

    index = _six_then_one(tmp_path, monkeypatch, seed=5)
    assert index("--source", str(tmp_path / "a"))["prior_models"] == 6
    c = index("--source", str(tmp_path / "b"))
    assert c["solved"] == 1 and "prior_models" not in c
    c = index("--refresh-prior")
    assert c["solved"] == 7 and c["prior_models"] == 7
    with open_store() as store:
        (space,) = store.list_spaces()
        assert store.get_space_prior(space.id).n_models == 7 and store.stale_models(space.id) == []
    assert index()["solved"] == 0


def test_a_calibration_map_stored_by_an_older_taskspace_is_fitted_again_on_the_next_pass(tmp_path, env):
    """A home an older taskspace indexed keeps its calibration map through the upgrade (migrations 0011 and 0013 add
    the lambda cap and the region variance as NULL: "as every map stored before"). The next pass, with nothing new,
    fits the map again (every model solved once, with the stored prior: the same vectors), saying why, so its intervals
    are a fresh index's; the pass after it does no work. Before, the old map was kept until the model count doubled or
    halved: an upgraded home gave other intervals than a fresh index of the same results (gpt-4o on the sample and
    evalarena_code: 64%-84% instead of 62%-85%) without a word."""
    from sqlalchemy import text

    rng = np.random.default_rng(6)
    write_table(tmp_path / "a", "alpha", outcomes(rng, [f"m{k}" for k in range(6)], 12), 12)
    ix = env()
    assert ix.run([SourceSpec(str(tmp_path / "a"))]).status == "ok"
    (space,) = ix.store.list_spaces()
    fresh = ix.store.get_space_calibration(space.id)
    assert fresh.lam_cap is not None  # the premise: a map fitted now carries it
    before = model_vectors(ix)
    with ix.store.engine.begin() as conn:  # the map as migration 0011 left one an older taskspace stored
        conn.execute(text("UPDATE space_calibrations SET lam_cap = NULL"))
    assert ix.store.get_space_calibration(space.id).lam_cap is None
    r = ix.run()
    assert r.status == "ok" and r.counts["solved"] == 6, r.counts
    assert "was fitted by an older taskspace (without its lambda cap" in r.counts["calibration_refit"]
    again = ix.store.get_space_calibration(space.id)
    assert again.lam_cap == pytest.approx(fresh.lam_cap) and (again.a, again.b) == pytest.approx((fresh.a, fresh.b))
    for m, v in model_vectors(ix).items():
        np.testing.assert_allclose(v, before[m], atol=1e-6)
    assert ix.run().counts["solved"] == 0


def test_a_region_variance_an_older_estimator_gave_is_estimated_again_on_the_next_pass(tmp_path, env, monkeypatch,
                                                                                       capsys):
    """A home indexed before schema 0017 holds a region variance of the estimator that counted models measured on one
    benchmark (too small: intervals far from a model's evidence too narrow), stamped with no estimator by the
    migration. The next pass, with nothing new, fits the map again (every model solved once), its region variance as
    a fresh index's, stamped with this estimator, and says so once: in the pass's counts (its run record), printed by
    `taskspace index` and in the worker's pass line; the pass after it does no work, and neither does a fresh home's
    second pass. Before, the stored variance was kept until the model count doubled or halved (or --refresh-prior)."""
    from sqlalchemy import text

    from indexer import posterior
    from indexer.cli_index import _print_run
    from indexer.worker import pass_summary

    monkeypatch.setenv("TASKSPACE_METHOD", "auto-mc")  # a level/deviation map, which carries the region variance
    reset_settings()
    rng = np.random.default_rng(8)
    names = [f"m{k}" for k in range(8)]
    write_table(tmp_path / "a", "alpha", outcomes(rng, names, 24), 24)
    write_table(tmp_path / "b", "beta", outcomes(rng, names, 24), 24, offset=24)
    ix = env()
    assert ix.run([SourceSpec(str(tmp_path / "a")), SourceSpec(str(tmp_path / "b"))]).status == "ok"
    (space,) = ix.store.list_spaces()
    fresh = ix.store.get_space_calibration(space.id)
    assert fresh.folded and fresh.region_var is not None  # the premise: a map fitted now carries one, stamped
    assert fresh.region_estimator == posterior.REGION_ESTIMATOR
    second = ix.run()
    assert second.counts["solved"] == 0 and "calibration_refit" not in second.counts  # a fresh home: no refit
    with ix.store.engine.begin() as conn:  # the map as migration 0017 leaves one an older taskspace stored
        conn.execute(text("UPDATE space_calibrations SET region_var = 0.00007, region_estimator = NULL"))
    assert ix.store.get_space_calibration(space.id).region_estimator is None
    r = ix.run()
    assert r.status == "ok" and r.counts["solved"] == 8, r.counts
    note = r.counts["calibration_refit"]
    assert note.count("region variance from an older estimator") == 1 and "fitted again" in note
    again = ix.store.get_space_calibration(space.id)
    assert again.region_var == pytest.approx(fresh.region_var) and again.region_estimator == posterior.REGION_ESTIMATOR
    assert ix.store.list_runs(1)[0].counts["calibration_refit"] == note  # the run record says it
    _print_run(r)
    assert capsys.readouterr().out.count(note) == 1
    assert pass_summary(r).count(note) == 1
    assert "calibration_refit" not in ix.run().counts and ix.run().counts["solved"] == 0


def test_a_pass_stores_which_benchmarks_no_model_links_and_fits_a_map_without_them_again(tmp_path, env, monkeypatch,
                                                                                          capsys):
    """Two sources measured on models of their own (no model on both): the pass's map stores their benchmarks as two
    groups (Calibration.links), in SQL and read back by a search's one read of the spaces; one model measured on both
    links them, and the next pass's map has one group (None). A map stored before schema 0018 (estimator 2, no links
    column) is fitted again on the next pass, which says why once; the pass after it does no work."""
    from sqlalchemy import text

    from indexer import posterior

    monkeypatch.setenv("TASKSPACE_METHOD", "auto-mc")  # a level/deviation map, which carries the links
    reset_settings()
    rng = np.random.default_rng(9)
    write_table(tmp_path / "a", "alpha", outcomes(rng, [f"a{k}" for k in range(6)], 24), 24)
    write_table(tmp_path / "b", "beta", outcomes(rng, [f"b{k}" for k in range(6)], 24), 24, offset=24)
    ix = env()
    assert ix.run([SourceSpec(str(tmp_path / "a")), SourceSpec(str(tmp_path / "b"))]).status == "ok"
    (space,) = ix.store.list_spaces()
    cal = ix.store.get_space_calibration(space.id)
    assert cal.links == (("alpha",), ("beta",)) and cal.region_estimator == posterior.REGION_ESTIMATOR
    assert ix.store.space_states()[0][1].links == (("alpha",), ("beta",))
    with ix.store.engine.begin() as conn:  # the map as migration 0018 leaves one stored before it
        conn.execute(text("UPDATE space_calibrations SET links = NULL, region_estimator = 2"))
    r = ix.run()
    assert r.status == "ok" and r.counts["solved"] == 12, r.counts
    assert r.counts["calibration_refit"].count("without the benchmarks' links") == 1
    assert ix.store.get_space_calibration(space.id).links == (("alpha",), ("beta",))
    assert "calibration_refit" not in ix.run().counts
    both = outcomes(rng, ["a0"], 24)  # a0 measured on beta too: alpha and beta linked
    write_table(tmp_path / "b2", "beta", both, 24, offset=24)
    assert ix.run([SourceSpec(str(tmp_path / "b2"))], refresh_prior=True).status == "ok"  # a map fitted now
    assert ix.store.get_space_calibration(space.id).links is None


def test_a_pass_stores_each_unlinked_groups_average_model_and_fills_in_a_map_stored_without_them(tmp_path, env,
                                                                                                  monkeypatch):
    """With benchmarks in groups no model links (alpha's models and beta's apart), the pass stores with the map each
    group's average model (Calibration.centres): the mean of the SQL vectors of the models measured in it, in the
    groups' order, read back by a search's one read of the spaces. A map stored before schema 0019 (links, no
    centres) gets them on the next pass, which solves nothing; a group whose models changed follows their vectors."""
    from sqlalchemy import text

    monkeypatch.setenv("TASKSPACE_METHOD", "auto-mc")
    reset_settings()
    rng = np.random.default_rng(9)
    write_table(tmp_path / "a", "alpha", outcomes(rng, [f"a{k}" for k in range(6)], 24), 24)
    write_table(tmp_path / "b", "beta", outcomes(rng, [f"b{k}" for k in range(6)], 24), 24, offset=24)
    ix = env()
    assert ix.run([SourceSpec(str(tmp_path / "a")), SourceSpec(str(tmp_path / "b"))]).status == "ok"
    (space,) = ix.store.list_spaces()

    def means():
        keys, V = ix.store.model_vector_matrix(space.id)
        return [V[[k.startswith(p) for k in keys]].astype(np.float64).mean(axis=0) for p in ("a", "b")]

    cal = ix.store.get_space_calibration(space.id)
    assert cal.links == (("alpha",), ("beta",)) and cal.centres is not None
    np.testing.assert_allclose(np.array(cal.centres), means(), rtol=0, atol=1e-7)
    assert ix.store.space_states()[0][1].centres == cal.centres
    with ix.store.engine.begin() as conn:  # the map as migration 0019 leaves one stored before it
        conn.execute(text("UPDATE space_calibrations SET centres = NULL"))
    r = ix.run()
    assert r.status == "ok" and r.counts["solved"] == 0, r.counts
    assert ix.store.get_space_calibration(space.id).centres == cal.centres
    write_table(tmp_path / "a", "alpha", outcomes(np.random.default_rng(3), [f"a{k}" for k in range(6)], 24), 24)
    r = ix.run()
    assert r.status == "ok" and r.counts["solved"] >= 6, r.counts  # alpha's models (a refit: all)
    moved = ix.store.get_space_calibration(space.id).centres
    np.testing.assert_allclose(np.array(moved), means(), rtol=0, atol=1e-7)
    assert not np.allclose(moved[0], cal.centres[0])


def test_a_pass_that_holds_the_map_updates_its_benchmarks_links(tmp_path, env, monkeypatch):
    """The map's other values are held until enough models change, its groups of benchmarks no model links are not:
    two models measured only on a new benchmark gamma (too few for a refit) make gamma a group of its own at once, a
    model measured on gamma and alpha then joins the two, and its removal (its source dropped) parts them again, each
    pass without refitting the map, whose other values stay as stored. Before, gamma's models counted as linked to
    every query until the next refit (their intervals as narrow as a linked model's)."""
    import dataclasses

    monkeypatch.setenv("TASKSPACE_METHOD", "auto-mc")
    reset_settings()
    rng = np.random.default_rng(10)
    names = [f"a{k}" for k in range(8)]
    write_table(tmp_path / "a", "alpha", outcomes(rng, names, 24), 24)
    write_table(tmp_path / "b", "beta", outcomes(rng, names[:4] + [f"b{k}" for k in range(4)], 24), 24, offset=24)
    ix = env()
    assert ix.run([SourceSpec(str(tmp_path / "a")), SourceSpec(str(tmp_path / "b"))]).status == "ok"
    (space,) = ix.store.list_spaces()
    fitted = ix.store.get_space_calibration(space.id)
    assert fitted.links is None and fitted.region_var is not None  # alpha and beta linked by a0-a3
    write_table(tmp_path / "g", "gamma", outcomes(rng, ["g0", "g1"], 24), 24, offset=48)
    r = ix.run([SourceSpec(str(tmp_path / "g"))])
    assert r.status == "ok" and r.counts["solved"] == 2 and "calibration_refit" not in r.counts, r.counts
    held = ix.store.get_space_calibration(space.id)
    assert held.links == (("alpha", "beta"), ("gamma",))
    assert dataclasses.replace(held, links=None, centres=None) == fitted  # the map's other values held
    write_table(tmp_path / "ag", "gamma", outcomes(rng, ["a0"], 24), 24, offset=48)  # a0 on gamma too
    assert ix.run([SourceSpec(str(tmp_path / "ag"))]).status == "ok"
    assert ix.store.get_space_calibration(space.id).links is None
    from indexer import sourcelist
    from indexer.ingest import drop_source

    sourcelist.remove(ix.settings.sources_file, str(tmp_path / "ag"))  # `sources remove` + `sources drop`
    drop_source(str(tmp_path / "ag"), store=ix.store)
    r = ix.run()
    assert r.status == "ok" and "calibration_refit" not in r.counts, r.counts
    assert ix.store.get_space_calibration(space.id).links == (("alpha", "beta"), ("gamma",))



def test_a_pass_computes_again_only_the_average_models_of_the_groups_its_models_changed(tmp_path, env, monkeypatch):
    """A pass that replaces a few vectors on a map whose groups are as stored computes again the average models
    (Calibration.centres) of the groups those vectors lie in, as they were and as they are, from those groups'
    vectors alone (beta's and gamma's are not read to add two alpha models; before, every pass read every vector):
    each pass's centres equal those computed from every vector (to the bit on SQLite, whose rows come in one order),
    through two alpha models added (beta's and gamma's centres kept as stored), a beta model moved to gamma (both
    computed again, alpha's kept) and a model measured on beta and gamma (the groups joined: every vector read)."""
    from indexer import posterior
    from indexer.store.sql import Store

    monkeypatch.setenv("TASKSPACE_METHOD", "auto-mc")
    reset_settings()
    rng = np.random.default_rng(12)
    a, b, g = ([f"{p}{k}" for k in range(n)] for p, n in (("a", 10), ("b", 10), ("g", 8)))
    write_table(tmp_path / "a", "alpha", outcomes(rng, a, 24), 24)
    on_beta = outcomes(rng, b, 24)
    write_table(tmp_path / "b", "beta", on_beta, 24, offset=24)
    write_table(tmp_path / "g", "gamma", outcomes(rng, g, 24), 24, offset=48)
    ix = env()
    assert ix.run([SourceSpec(str(tmp_path / x)) for x in "abg"]).status == "ok"
    (space,) = ix.store.list_spaces()
    assert ix.store.get_space_calibration(space.id).links == (("alpha",), ("beta",), ("gamma",))
    read = []
    whole = Store.model_benchmark_vectors

    def counted(self, space_id, lists=None):
        got = whole(self, space_id, lists)
        read.append(sorted({bs[0] for bs in got[0]}))
        return got

    def every_vector():
        links = ix.store.get_space_calibration(space.id).links
        return links, posterior.link_centres(links, *whole(ix.store, space.id))

    before = ix.store.get_space_calibration(space.id).centres
    monkeypatch.setattr(Store, "model_benchmark_vectors", counted)
    write_table(tmp_path / "a2", "alpha", outcomes(rng, ["a10", "a11"], 24), 24)  # two more alpha models
    r = ix.run([SourceSpec(str(tmp_path / "a2"))])
    assert r.status == "ok" and r.counts["solved"] == 2 and "calibration_refit" not in r.counts, r.counts
    assert read == [["alpha"]]  # alpha's vectors alone
    cal = ix.store.get_space_calibration(space.id)
    assert (cal.links, cal.centres) == every_vector()
    assert cal.centres[1:] == before[1:] and cal.centres[0] != before[0]
    read.clear()
    # b9 measured on gamma now, not on beta: it leaves beta's group for gamma's
    write_table(tmp_path / "b", "beta", {m: o for m, o in on_beta.items() if m != "b9"}, 24, offset=24)
    write_table(tmp_path / "g2", "gamma", outcomes(rng, ["b9"], 24), 24, offset=48)
    r = ix.run([SourceSpec(str(tmp_path / "g2"))])
    assert r.status == "ok" and r.counts["solved"] == 1 and "calibration_refit" not in r.counts, r.counts
    assert read == [["beta", "gamma"]]
    moved = ix.store.get_space_calibration(space.id)
    assert (moved.links, moved.centres) == every_vector() and moved.centres[0] == cal.centres[0]
    read.clear()
    write_table(tmp_path / "bg", "gamma", outcomes(rng, ["b0"], 24), 24, offset=48)  # b0 on beta and gamma
    assert ix.run([SourceSpec(str(tmp_path / "bg"))]).status == "ok"
    assert read == [["alpha", "beta", "gamma"]]  # the groups changed: every vector
    joined = ix.store.get_space_calibration(space.id)
    assert joined.links == (("alpha",), ("beta", "gamma")) and (joined.links, joined.centres) == every_vector()


@pytest.mark.parametrize("method", ["auto", "auto-text"])
def test_refresh_prior_fits_the_calibration_map_of_a_method_without_a_prior(tmp_path, monkeypatch, method):
    """`taskspace index --refresh-prior` under a method without a prior (``auto``, ``auto-text``), whose calibration map
    is held fixed like the prior until the models changed reach a quarter: 6 models, then 1 more (held), then the flag
    fits the map on the 7 models now, as a fresh index of the same sources fits it (its probabilities and intervals).
    Before, the flag did nothing under these methods ("solved": 0), so their map could not be refitted short of
    twice as many models, and an evolved index kept another map than a fresh one."""
    from indexer.store.sql import open_store

    monkeypatch.setenv("TASKSPACE_METHOD", method)
    index = _six_then_one(tmp_path, monkeypatch, seed=6)
    def calibration():
        with open_store() as store:
            (space,) = store.list_spaces()
            cal = store.get_space_calibration(space.id)
            return {k: v for k, v in vars(cal).items() if k != "computed_at"}

    index("--source", str(tmp_path / "a"))
    assert calibration()["n_models"] == 6
    assert index("--source", str(tmp_path / "b"))["solved"] == 1 and calibration()["n_models"] == 6  # held
    c = index("--refresh-prior")
    assert c["solved"] == 7 and "prior_models" not in c
    evolved = calibration()
    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "fresh"))
    reset_settings()
    index("--source", str(tmp_path / "a"), "--source", str(tmp_path / "b"))
    fresh = calibration()
    assert evolved.keys() == fresh.keys() and evolved["n_models"] == 7
    for k in fresh:
        if isinstance(fresh[k], float):
            assert evolved[k] == pytest.approx(fresh[k], rel=1e-6, abs=1e-9), k
        else:
            assert evolved[k] == fresh[k], k
