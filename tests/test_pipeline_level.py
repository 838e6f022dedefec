"""The worker with a level method (``auto-mean-level``: the top principal directions of the prompt embeddings
penalised less, :class:`indexer.represent.Level`): the map is estimated with the prior from every model's prompts
and stored with the space (migration 0006), held fixed while models are added (one new model = one solve), and the
stored vectors, which score raw prompt rows, always equal a fit from scratch on rows mapped by the stored map."""

from __future__ import annotations

import numpy as np
import pytest

from indexer import represent, sync
from indexer.config import reset_settings
from indexer.solver import HyperplaneSolver
from indexer.sourcelist import SourceSpec
from indexer.space import method_options, space_params

from helpers import model_vectors, outcomes, write_table

PARAMS = space_params("auto-mean-level")


@pytest.fixture(autouse=True)
def level_method(monkeypatch):
    monkeypatch.setenv("TASKSPACE_METHOD", "auto-mean-level")
    reset_settings()


def _direct(ix, encoder, level, prior):
    """The stored form of every model fitted from scratch on rows mapped by ``level`` toward ``prior``."""
    om = ix.store.load_outcomes()
    D = encoder.encode(ix.store.prompt_texts(om.prompt_ids))
    s = HyperplaneSolver(**dict(method_options("auto"), prior=prior)).fit(level.apply(D).astype(np.float32),
                                                                          om.scores, model_ids=om.models)
    V = represent.level_index_vectors(s, level.apply(D), PARAMS, level)
    return {m: V[i] for i, m in enumerate(om.models)}, s, D


def test_level_map_is_stored_held_fixed_and_vectors_equal_a_fit_from_scratch(tmp_path, env, encoder):
    rng = np.random.default_rng(5)
    a, b = tmp_path / "a", tmp_path / "b"
    write_table(a, "alpha", outcomes(rng, [f"m{i}" for i in range(6)], 40), 40)
    write_table(b, "alpha", outcomes(rng, ["m6"], 40), 40)  # same prompts, one more model
    ix = env()
    r1 = ix.run([SourceSpec(str(a))])
    assert r1.status == "ok" and r1.counts["solved"] == 6 and r1.counts["prior_models"] == 6
    (space,) = ix.store.list_spaces()
    assert space.method == "auto-mean-level" and space.params["level"] == "pca-v1" and space.dim == 385
    rec = ix.store.get_space_level(space.id)
    assert rec is not None and rec.n_prompts == 40
    level = represent.Level.from_array(rec.vector)
    om = ix.store.load_outcomes()
    D = encoder.encode(ix.store.prompt_texts(om.prompt_ids))
    assert level == represent.fit_level(D, PARAMS)  # estimated from the models' prompts
    want, solver, D = _direct(ix, encoder, level, "mean")
    np.testing.assert_allclose(ix.store.get_space_prior(space.id).vector, solver.prior_, atol=1e-6)
    first = model_vectors(ix)
    for m in want:
        np.testing.assert_allclose(first[m], want[m], atol=1e-5)
    # the stored vectors score raw rows (the index form is unchanged): as the fit on mapped rows scores them
    X = represent.lift(D, space)
    np.testing.assert_allclose(np.stack([first[m] for m in om.models]) @ X.T,
                               solver.predict(level.apply(D)).T, atol=1e-4)
    assert ix.run().counts["solved"] == 0  # nothing new: no work

    # one more model: only it is solved, on rows mapped by the stored map toward the stored prior
    prior = ix.store.get_space_prior(space.id)
    r2 = ix.run([SourceSpec(str(b))])
    assert r2.counts["solved"] == 1 and "prior_models" not in r2.counts
    assert ix.store.get_space_level(space.id).digest == rec.digest
    second = model_vectors(ix)
    for m in first:
        np.testing.assert_array_equal(second[m], first[m])
    fixed, _, _ = _direct(ix, encoder, level, prior.vector)
    for m in fixed:  # all seven equal a fit from scratch with the stored map and prior held fixed
        np.testing.assert_allclose(second[m], fixed[m], atol=1e-5)
    assert all(d.clean for d in sync.check(ix.store, ix.vectors))

    # the query path: the posterior variance is taken of the mapped row, and is finite for every model
    from indexer import query

    pred = query.predictor(ix.store, space)
    assert pred.level == level
    payloads = [{"pattern": mv.pattern, "lam": mv.lam, "noise": mv.noise}
                for mv in ix.store.load_model_vectors(space.id)]
    var = pred.variance(payloads, X[0])
    assert np.isfinite(var).all() and (var > 0).all()
    # the variance is of the mapped row: equal to the solver's own posterior there
    ours = dict(zip([mv.model for mv in ix.store.load_model_vectors(space.id)], var))
    om2 = ix.store.load_outcomes()
    D2 = encoder.encode(ix.store.prompt_texts(om2.prompt_ids))
    direct = HyperplaneSolver(**dict(method_options("auto"), prior=prior.vector)).fit(
        level.apply(D2).astype(np.float32), om2.scores, model_ids=om2.models)
    want_var = direct.predictive_variance(level.apply(D[:1]))[0]
    for i, m in enumerate(om2.models):
        assert ours[m] == pytest.approx(want_var[i], rel=1e-3)
    # without its map (a pulled space: publications do not carry it) the variance is unknown, not wrong
    from indexer.posterior import Predictor

    assert np.isnan(Predictor(space, pred.calibration, lambda keys: {}).variance(payloads, X[0])).all()

    # a refresh re-estimates the map with the prior (the same prompts: the same map) and re-solves every model
    r3 = ix.run(refresh_prior=True)
    assert r3.counts["solved"] == 7
    assert ix.store.get_space_level(space.id).digest == rec.digest
