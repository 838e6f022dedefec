"""The worker with ``auto-mean`` (the default): the prior (the models' mean normal) is stored with the space,
held fixed while models are added (one new model = one solve), and re-estimated, with every model re-solved,
when the number of models doubles; the stored vectors always equal the solver with that prior."""

from __future__ import annotations

import numpy as np

from indexer import sync
from indexer.config import get_settings
from indexer.solver import HyperplaneSolver, method_options
from indexer.sourcelist import SourceSpec

from test_pipeline import env, model_vectors, outcomes, write_table  # noqa: F401  (env is a fixture)


def _direct(ix, encoder, prior):
    """[e_i, c_i] of every stored model fitted directly by the solver with ``prior`` ('mean' or an array)."""
    om = ix.store.load_outcomes()
    D = encoder.encode(ix.store.prompt_texts(om.prompt_ids))
    s = HyperplaneSolver(**dict(method_options("auto"), prior=prior)).fit(D, om.scores, model_ids=om.models)
    return {m: np.append(s.normals_[i], s.intercept_[i]) for i, m in enumerate(om.models)}, s


def test_auto_mean_holds_the_prior_while_models_are_added_and_refreshes_it_when_they_double(tmp_path, env, encoder):
    assert get_settings().method == "auto-mean"
    rng = np.random.default_rng(3)
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    write_table(a, "alpha", outcomes(rng, ["m1", "m2", "m3", "m4"], 14), 14)
    write_table(b, "alpha", outcomes(rng, ["m5"], 14), 14)  # same prompts, one more model
    write_table(c, "alpha", outcomes(rng, ["m6", "m7", "m8"], 14), 14)

    ix = env()
    r1 = ix.run([SourceSpec(str(a))])
    assert r1.status == "ok" and r1.counts["solved"] == 4 and r1.counts["prior_models"] == 4
    (space,) = ix.store.list_spaces()
    assert space.method == "auto-mean" and space.params["prior"] == "mean" and space.dim == 385
    prior1 = ix.store.get_space_prior(space.id)
    want, solver = _direct(ix, encoder, "mean")
    np.testing.assert_allclose(prior1.vector, solver.prior_, atol=1e-6)
    first = model_vectors(ix)
    for m in want:
        np.testing.assert_allclose(first[m], want[m], atol=1e-5)

    # one model more (5 < 2 x 4): only it is solved, toward the stored prior; the others are untouched
    r2 = ix.run([SourceSpec(str(b))])
    assert r2.counts["solved"] == 1 and "prior_models" not in r2.counts
    assert ix.store.get_space_prior(space.id).digest == prior1.digest
    second = model_vectors(ix)
    for m in ("m1", "m2", "m3", "m4"):
        np.testing.assert_array_equal(second[m], first[m])
    fixed, _ = _direct(ix, encoder, prior1.vector)
    for m in fixed:  # all five equal a fit with the stored prior held fixed
        np.testing.assert_allclose(second[m], fixed[m], atol=1e-5)
    assert all(d.clean for d in sync.check(ix.store, ix.vectors))

    # three more (8 >= 2 x 4): the prior is re-estimated from all eight and every model re-solved toward it
    r3 = ix.run([SourceSpec(str(c))])
    assert r3.counts["solved"] == 8 and r3.counts["prior_models"] == 8 and r3.counts["pushed"] == 8
    prior3 = ix.store.get_space_prior(space.id)
    assert prior3.n_models == 8 and prior3.digest != prior1.digest
    want, solver = _direct(ix, encoder, "mean")
    np.testing.assert_allclose(prior3.vector, solver.prior_, atol=1e-6)
    third = model_vectors(ix)
    for m in want:
        np.testing.assert_allclose(third[m], want[m], atol=1e-5)
    assert ix.store.stale_models(space.id) == []
    assert all(d.clean for d in sync.check(ix.store, ix.vectors))
    # the index answers with the re-estimated vectors: Qdrant's Dot score is the solver's prediction
    q = encoder.encode(["Question 3 on chemistry: what is item 3 of alpha?"])
    hits = ix.vectors.search(sync.space_name(space), "models", sync.lift(q, space)[0], limit=8)
    scores = dict(zip(solver.model_ids_, solver.predict(q)[0]))
    assert {h.key: round(h.score, 4) for h in hits} == {m: round(float(v), 4) for m, v in scores.items()}
