"""``HyperplaneSolver.prepare(D)``: a solver started on the prompts with no model, then filled by ``add_models``
(the indexing pipeline's path), equals ``fit`` on the same data; bad input changes nothing.

Tolerances: as in test_solver.py, 1e-10 absolute / 1e-9 relative is round-off level for these O(1) numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

from indexer.errors import DimensionError, InputError, NotFoundError
from indexer.solver import HyperplaneSolver
from indexer.space import method_options

TOL = dict(rtol=1e-9, atol=1e-10)


def _data(seed: int, N: int = 200, d: int = 8, M: int = 12):
    """Unit prompts D (N, d) and 0/1 outcomes S (M, N), half the models not observed on the last 80 prompts."""
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((N, d)) + 0.3
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    S = (rng.random((M, N)) < rng.uniform(0.2, 0.8, (M, 1))).astype(float)
    S[::2, -80:] = np.nan
    return D, S


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("method", ["paper", "auto", "auto-mean"])
def test_prepare_then_add_models_equals_fit(seed, method):
    D, S = _data(seed)
    ids = [f"m{i}" for i in range(S.shape[0])]
    solver = HyperplaneSolver(**method_options(method)).prepare(D)
    assert solver.normals_.shape == (0, D.shape[1]) and solver.predict(D[:3]).shape == (3, 0)
    np.testing.assert_allclose(solver.gram_, D.T @ D, **TOL)
    for lo in range(0, S.shape[0], 5):  # in chunks, as the pipeline does
        solver.add_models(S[lo : lo + 5], ids[lo : lo + 5])
    solver.refresh_prior()  # auto-mean: the prior from every model (the others: re-solves, no change)
    fitted = HyperplaneSolver(**method_options(method)).fit(D, S, ids)
    assert solver.model_ids_ == fitted.model_ids_
    np.testing.assert_allclose(solver.normals_, fitted.normals_, **TOL)
    np.testing.assert_allclose(solver.intercept_, fitted.intercept_, **TOL)
    if method == "auto-mean":
        np.testing.assert_allclose(solver.prior_, fitted.prior_, **TOL)


def test_prepare_keeps_an_array_prior_and_refuses_bad_input_without_changing_anything():
    D, S = _data(3)
    u = np.full(D.shape[1], 0.05)
    held = HyperplaneSolver(**dict(method_options("auto"), prior=u)).prepare(D).add_models(S)
    np.testing.assert_array_equal(held.prior_, u)
    np.testing.assert_allclose(held.normals_, HyperplaneSolver(**dict(method_options("auto"), prior=u)).fit(D, S).normals_, **TOL)
    with pytest.raises(NotFoundError, match="not fitted"):
        HyperplaneSolver().add_models(S)
    solver = HyperplaneSolver().fit(D, S)
    before = solver.normals_.copy()
    bad = D.copy()
    bad[4, 0] = np.nan
    with pytest.raises(InputError, match="prompt 4"):
        solver.prepare(bad)
    solver.prior = np.zeros(3)
    with pytest.raises(DimensionError, match=r"prior has shape \(3,\)"):
        solver.prepare(D)
    np.testing.assert_array_equal(solver.normals_, before)
    assert solver.D_ is D
