"""The closed-form solver against the paper's SVD formula, incremental updates against from-scratch fits,
degenerate inputs and bad-input errors. Float64 throughout; tolerances stated per assertion.

Tolerances: results are O(1) numbers built from a few hundred float64 products, so agreement to 1e-10
(absolute, relative 1e-9) is round-off level; a real mistake (a missing factor 2, a wrong threshold, a
stale statistic) shows up at 1e-3 or more.
"""

from __future__ import annotations

import numpy as np
import pytest

from indexer.errors import DimensionError, IndexerError, InputError, NotFoundError
from indexer.solver import HyperplaneSolver, paper_normals, projection, shrinkage, signed_outcomes

SEEDS = [0, 1, 2]
TOL = dict(rtol=1e-9, atol=1e-10)


def _data(seed: int, N: int = 240, d: int = 12, M: int = 9, graded: bool = False):
    """Unit-norm prompts D (N, d) and outcomes S (M, N) in {0, 1} (or graded in [0, 1])."""
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((N, d))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    S = rng.random((M, N)) if graded else (rng.random((M, N)) < rng.uniform(0.2, 0.8, (M, 1))).astype(float)
    return D, S


def _own_paper(D, s, lam, eps):
    """The paper's formula for one model on the prompts it was observed on."""
    obs = ~np.isnan(s)
    return paper_normals(D[obs], s[obs][None, :], lam, eps)[0]


def _assert_same_state(a: HyperplaneSolver, b: HyperplaneSolver) -> None:
    assert a.model_ids_ == b.model_ids_
    np.testing.assert_allclose(a.normals_, b.normals_, **TOL)
    np.testing.assert_allclose(a.b_, b.b_, **TOL)
    np.testing.assert_array_equal(a.n_observed_, b.n_observed_)
    np.testing.assert_allclose(a.gram_, b.gram_, **TOL)


# ---------------------------------------------------------------------------------------- the formula
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("lam,keep", [(1.0, None), (0.0, None), (0.3, None), (1.0, 8), (0.0, 8), (2.0, 3)])
def test_equals_paper_svd_formula_on_dense_data(seed, lam, keep):
    """``keep``: eps is put halfway between the keep-th and the next singular value (None: eps = 0)."""
    D, S = _data(seed)
    sv = np.linalg.svd(D, compute_uv=False)  # descending
    eps = 0.0 if keep is None else (sv[keep - 1] + sv[keep]) / 2
    solver = HyperplaneSolver(lam=lam, eps=eps).fit(D, S)
    E = paper_normals(D, S, lam, eps)
    assert solver.normals_.shape == (S.shape[0], D.shape[1])
    np.testing.assert_allclose(solver.normals_, E, **TOL)
    if keep is not None:  # the threshold really dropped components: E lies in the span of the top `keep`
        _, _, Vt = np.linalg.svd(D, full_matrices=False)
        np.testing.assert_allclose(E @ Vt[keep:].T, 0.0, atol=1e-12)
        assert np.abs(E @ Vt[:keep].T).max() > 1e-3


def test_known_answer_orthonormal_prompts():
    # D = I (d prompts = the basis vectors): G = I, so e = b / (1 + 2 lambda) and b_k = y_k.
    d = 5
    s = np.array([[1.0, 0.0, 0.5, 1.0, 0.0]])
    solver = HyperplaneSolver(lam=1.0).fit(np.eye(d), s)
    np.testing.assert_allclose(solver.normals_[0], (2 * s[0] - 1) / 3.0, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(HyperplaneSolver(lam=0.0).fit(np.eye(d), s).normals_[0], 2 * s[0] - 1, atol=1e-15)


@pytest.mark.parametrize("seed", SEEDS)
def test_eps_above_every_singular_value_gives_zero_normals(seed):
    D, S = _data(seed)
    top = np.linalg.svd(D, compute_uv=False).max()
    for lam in (0.0, 1.0):
        solver = HyperplaneSolver(lam=lam, eps=top * 1.01).fit(D, S)
        np.testing.assert_array_equal(solver.normals_, 0.0)
        np.testing.assert_array_equal(paper_normals(D, S, lam, top * 1.01), 0.0)


def test_shrinkage_and_projection():
    w = np.array([0.0, 0.25, 4.0, 9.0])
    # sqrt(w) = 0, .5, 2, 3; eps = 1 drops the first two; lambda = 1 -> 1 / (w + 2)
    np.testing.assert_allclose(shrinkage(w, 1.0, 1.0), [0, 0, 1 / 6, 1 / 11], rtol=1e-15)
    np.testing.assert_allclose(shrinkage(w, 0.0, 0.0), [0, 4, 1 / 4, 1 / 9], rtol=1e-15)
    rng = np.random.default_rng(3)
    A = rng.standard_normal((40, 6))
    G = A.T @ A
    # the LU-inverse shortcut (eps = 0, lambda > 0) equals the eigendecomposition route
    w, V = np.linalg.eigh(G)
    np.testing.assert_allclose(projection(G, 0.7, 0.0), (V / (w + 1.4)) @ V.T, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("seed", SEEDS)
def test_graded_outcomes_map_to_2s_minus_1(seed):
    D, S = _data(seed, graded=True)
    solver = HyperplaneSolver().fit(D, S)
    np.testing.assert_allclose(solver.b_, (2 * S - 1) @ D, **TOL)
    np.testing.assert_allclose(solver.normals_, paper_normals(D, S, 1.0, 0.0), **TOL)
    Y, observed = signed_outcomes(np.array([0.0, 0.25, np.nan, 1.0]))
    np.testing.assert_array_equal(Y, [[-1.0, -0.5, 0.0, 1.0]])
    np.testing.assert_array_equal(observed, [[True, True, False, True]])


# ---------------------------------------------------------------------------------------- coverage
def _with_coverage(seed, D, S):
    """Blank out cells so models have different coverage: benchmark blocks, a scattered model, one dense."""
    rng = np.random.default_rng(seed + 100)
    S = S.copy()
    N = S.shape[1]
    S[0, : N // 3] = np.nan  # misses the first benchmark
    S[1, N // 3 :] = np.nan  # only the first benchmark
    S[2, rng.random(N) < 0.3] = np.nan  # scattered missing cells
    S[3, N // 3 : 2 * N // 3] = np.nan  # misses the middle benchmark
    S[4, : N // 3] = np.nan  # same coverage as model 0: shares its projection
    return S


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("lam,eps", [(1.0, 0.0), (0.0, 0.0), (1.0, 2.5)])
def test_each_model_equals_paper_on_its_own_prompts(seed, lam, eps):
    D, S = _data(seed)
    S = _with_coverage(seed, D, S)
    solver = HyperplaneSolver(lam=lam, eps=eps).fit(D, S)
    for i in range(S.shape[0]):
        np.testing.assert_allclose(solver.normals_[i], _own_paper(D, S[i], lam, eps), **TOL, err_msg=f"model {i}")
    np.testing.assert_array_equal(solver.n_observed_, (~np.isnan(S)).sum(axis=1))
    np.testing.assert_allclose(solver.gram_, D.T @ D, **TOL)
    assert solver.pattern_of_[0] == solver.pattern_of_[4]


def test_many_irregular_patterns_fall_back_to_direct_grams():
    # every model has its own scattered coverage: more atoms than patterns can pay for
    D, S = _data(5, N=400, d=6, M=12)
    S[np.random.default_rng(5).random(S.shape) < 0.4] = np.nan
    solver = HyperplaneSolver().fit(D, S)
    for i in range(S.shape[0]):
        np.testing.assert_allclose(solver.normals_[i], _own_paper(D, S[i], 1.0, 0.0), **TOL)


def test_atoms_are_built_only_where_they_group_prompts():
    # a small data set with 30% of its cells missing at random (`taskspace evaluate` of a user's sparse table: 20
    # models x 270 prompts): nearly every prompt was its own atom, so the atoms held one d x d Gram per prompt and each
    # model's Gram summed about 150 of them: one in-sample fold took 67 s and 2.9 GB instead of 20 s and 1.1 GB, for
    # the same vectors. Atoms are kept where they group prompts (benchmark blocks)
    D, S = _data(7, N=120, d=6, M=12)
    S[np.random.default_rng(7).random(S.shape) < 0.3] = np.nan
    solver = HyperplaneSolver().fit(D, S)
    assert solver._coverage.atoms is None
    for i in range(S.shape[0]):
        np.testing.assert_allclose(solver.normals_[i], _own_paper(D, S[i], 1.0, 0.0), **TOL)
    D, S = _data(7, N=120, d=6, M=12)
    blocks = HyperplaneSolver().fit(D, _with_coverage(7, D, S))
    assert blocks._coverage.atoms is not None and blocks._coverage.atoms.counts.size <= 60


# ---------------------------------------------------------------------------------------- incremental
@pytest.mark.parametrize("seed", SEEDS)
def test_add_models_equals_from_scratch(seed):
    D, S = _data(seed)
    S = _with_coverage(seed, D, S)
    inc = HyperplaneSolver().fit(D, S[:3], model_ids=["a", "b", "c"])
    before = inc.normals_.copy()
    inc.add_models(S[3:5], model_ids=["d", "e"]).add_models(S[5], model_ids=["f"]).add_models(S[6:], ["g", "h", "i"])
    full = HyperplaneSolver().fit(D, S, model_ids=list("abcdefghi"))
    _assert_same_state(inc, full)
    np.testing.assert_array_equal(inc.normals_[:3], before)  # the others were not refitted


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_adding_one_model_on_a_known_pattern(seed, dtype):
    """One model on an existing coverage pattern takes the pre-summed path (reads only its correct or its
    wrong prompts); it must give the same b and normal as the plain pass, for 0/1 and graded outcomes."""
    D, S = _data(seed)
    S = _with_coverage(seed, D, S)
    D = D.astype(dtype)
    solver = HyperplaneSolver().fit(D, S)
    rng = np.random.default_rng(seed)
    for row, p_correct in [(0, 0.9), (1, 0.1), (2, 0.5), (5, 0.5), (3, None)]:
        s = (rng.random(D.shape[0]) < (p_correct or 0.5)).astype(float)
        if p_correct is None:
            s = rng.random(D.shape[0])  # graded
        s[np.isnan(S[row])] = np.nan  # the coverage of an existing model
        solver.add_models(s, [f"new{row}"])
        y = np.where(np.isnan(s), 0.0, 2 * s - 1)
        np.testing.assert_allclose(solver.b_[-1], y @ D.astype(np.float64), **TOL)
        np.testing.assert_allclose(solver.normals_[-1], _own_paper(D.astype(np.float64), s, 1.0, 0.0), **TOL)
    solver.add_prompts(D[:5], np.full((len(solver.model_ids_), 5), np.nan))  # drops the atoms
    s = np.where(np.isnan(S[0]), np.nan, 1.0)
    solver.add_models(np.concatenate([s, np.full(5, np.nan)]), ["after"])
    np.testing.assert_allclose(solver.normals_[-1], _own_paper(D.astype(np.float64), s, 1.0, 0.0), **TOL)


@pytest.mark.parametrize("seed", SEEDS)
def test_add_prompts_new_benchmark_equals_from_scratch(seed):
    D, S = _data(seed, N=300)
    S = _with_coverage(seed, D, S)
    old, new = slice(0, 200), slice(200, 300)
    S_new = S[:, new].copy()
    S_new[[1, 5]] = np.nan  # models 1 and 5 were not evaluated on the new benchmark
    S_new[2, :50] = np.nan  # model 2 only on half of it
    inc = HyperplaneSolver().fit(D[old], S[:, old])
    untouched = inc.normals_[[1, 5]].copy()
    inc.add_prompts(D[new], S_new)
    full = HyperplaneSolver().fit(D, np.concatenate([S[:, old], S_new], axis=1))
    _assert_same_state(inc, full)
    np.testing.assert_array_equal(inc.normals_[[1, 5]], untouched)
    for i in range(S.shape[0]):
        np.testing.assert_allclose(inc.normals_[i], _own_paper(D, full_row(S, S_new, i), 1.0, 0.0), **TOL)


def full_row(S, S_new, i):
    return np.concatenate([S[i, :200], S_new[i]])


@pytest.mark.parametrize("seed", SEEDS)
def test_replace_and_remove_equal_from_scratch(seed):
    D, S = _data(seed)
    S = _with_coverage(seed, D, S)
    rng = np.random.default_rng(seed + 7)
    inc = HyperplaneSolver(lam=0.5).fit(D, S, model_ids=list("abcdefghi"))
    s_new = (rng.random(D.shape[0]) < 0.5).astype(float)
    s_new[:40] = np.nan
    inc.replace_model("c", s_new)
    inc.remove_models(["a", "h"])
    S2 = S.copy()
    S2[2] = s_new
    keep = [1, 2, 3, 4, 5, 6, 8]
    full = HyperplaneSolver(lam=0.5).fit(D, S2[keep], model_ids=[list("abcdefghi")[i] for i in keep])
    _assert_same_state(inc, full)
    assert inc.index_of("c") == 1
    assert set(inc.patterns_) == set(full.patterns_)  # no stale projection left behind


@pytest.mark.parametrize("seed", SEEDS)
def test_any_sequence_of_updates_equals_from_scratch(seed):
    rng = np.random.default_rng(seed)
    D, S = _data(seed, N=260, M=6)
    S = _with_coverage(seed, D, S)
    rows = {f"m{i}": S[i, :180] for i in range(3)}  # current outcomes per model over the current prompts
    solver = HyperplaneSolver(lam=1.0, eps=1.0).fit(D[:180], np.stack(list(rows.values())), list(rows))
    n_prompts = 180
    next_id = 3
    for step in range(12):
        op = rng.choice(["add", "replace", "remove", "prompts"])
        if op == "add" or len(rows) < 2:
            s = S[next_id % S.shape[0], :n_prompts].copy()
            s[rng.random(n_prompts) < 0.2] = np.nan
            solver.add_models(s, [f"m{next_id}"])
            rows[f"m{next_id}"] = s
            next_id += 1
        elif op == "replace":
            mid = rng.choice(list(rows))
            s = (rng.random(n_prompts) < 0.5).astype(float)
            s[: rng.integers(0, n_prompts // 2)] = np.nan
            solver.replace_model(mid, s)
            rows[mid] = s
        elif op == "remove":
            mid = rng.choice(list(rows))
            solver.remove_models([mid])
            del rows[mid]
        elif n_prompts < D.shape[0]:
            k = min(20, D.shape[0] - n_prompts)
            block = (rng.random((len(rows), k)) < 0.5).astype(float)
            block[rng.random(len(rows)) < 0.4] = np.nan  # some models not observed on the new prompts
            solver.add_prompts(D[n_prompts : n_prompts + k], block)
            rows = {m: np.concatenate([r, block[i]]) for i, (m, r) in enumerate(rows.items())}
            n_prompts += k
        full = HyperplaneSolver(lam=1.0, eps=1.0).fit(D[:n_prompts], np.stack(list(rows.values())), list(rows))
        _assert_same_state(solver, full)


# ---------------------------------------------------------------------------------------- degenerate inputs
def test_no_models_and_integer_or_bool_outcomes():
    D, S = _data(0)
    empty = HyperplaneSolver().fit(D, np.zeros((0, D.shape[0])))
    assert empty.normals_.shape == (0, 12) and empty.predict(D[:3]).shape == (3, 0)
    np.testing.assert_allclose(empty.gram_, D.T @ D, **TOL)
    empty.add_models(S[0], ["first"])
    np.testing.assert_allclose(empty.normals_[0], paper_normals(D, S[:1])[0], **TOL)
    np.testing.assert_allclose(HyperplaneSolver().fit(D, S.astype(bool)).normals_, paper_normals(D, S), **TOL)
    np.testing.assert_allclose(HyperplaneSolver().fit(D, S.astype(np.int64)).normals_, paper_normals(D, S), **TOL)
    with pytest.raises(InputError, match="model 0: model has no observed outcome"):
        HyperplaneSolver().fit(np.zeros((0, 4)), np.zeros((1, 0)))


def test_one_prompt():
    d = np.array([[0.6, 0.8, 0.0]])
    solver = HyperplaneSolver(lam=1.0).fit(d, np.array([[1.0], [0.0]]))
    # G = d d^T has eigenvalue 1 along d: e = y d / (1 + 2)
    np.testing.assert_allclose(solver.normals_, np.array([[1.0], [-1.0]]) * d / 3.0, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(solver.normals_, paper_normals(d, np.array([[1.0], [0.0]])), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("seed", SEEDS)
def test_all_correct_model_and_fewer_prompts_than_dimensions(seed):
    D, S = _data(seed, N=7, d=20, M=3)  # N < d: G is singular
    S[0] = 1.0
    for lam, eps in [(1.0, 0.0), (0.0, 0.0), (1.0, 0.5)]:
        solver = HyperplaneSolver(lam=lam, eps=eps).fit(D, S)
        np.testing.assert_allclose(solver.normals_, paper_normals(D, S, lam, eps), rtol=1e-9, atol=1e-10)
    # lambda = 0: the pseudo-inverse interpolates, so every training prompt of the all-correct model scores 1
    solver = HyperplaneSolver(lam=0.0).fit(D, S)
    np.testing.assert_allclose(solver.predict(D)[:, 0], 1.0, rtol=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_predict_is_linear_so_benchmark_mean_gives_mean_score(seed):
    D, S = _data(seed)
    solver = HyperplaneSolver().fit(D, S)
    bench = D[:50]
    np.testing.assert_allclose(solver.predict(bench.mean(axis=0))[0], solver.predict(bench).mean(axis=0), **TOL)
    np.testing.assert_allclose(solver.predict(D), D @ solver.normals_.T, **TOL)


def test_float32_embeddings_give_float64_results():
    D, S = _data(4, N=600)
    D32 = D.astype(np.float32)
    solver = HyperplaneSolver().fit(D32, S)
    assert solver.normals_.dtype == np.float64 and solver.D_.dtype == np.float32
    # the same numbers as a float64 fit on the float32-rounded embeddings
    np.testing.assert_allclose(solver.normals_, paper_normals(D32.astype(np.float64), S), **TOL)
    solver.add_models(S[0], ["again"])
    np.testing.assert_allclose(solver.normals_[-1], solver.normals_[0], rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------------------- bad input
def test_nan_or_inf_embedding_names_the_prompt():
    D, S = _data(0)
    for bad in (np.nan, np.inf):
        D2 = D.copy()
        D2[17, 3] = bad
        with pytest.raises(InputError, match="prompt 17"):
            HyperplaneSolver().fit(D2, S)
    solver = HyperplaneSolver().fit(D, S)
    with pytest.raises(InputError, match="prompt 1.*NaN or inf"):
        solver.add_prompts(np.array([[0.0] * 12, [np.nan] * 12]), np.zeros((S.shape[0], 2)))
    with pytest.raises(InputError, match="prompt 0"):
        solver.predict(np.full(12, np.inf))


def test_dimension_mismatch():
    D, S = _data(0)
    solver = HyperplaneSolver().fit(D, S)
    with pytest.raises(DimensionError, match="dimension 5 but this space has dimension 12"):
        solver.add_prompts(np.ones((3, 5)), np.zeros((S.shape[0], 3)))
    with pytest.raises(DimensionError, match="dimension"):
        solver.predict(np.ones((2, 13)))
    with pytest.raises(DimensionError, match=r"expected \(models, 240\)"):
        HyperplaneSolver().fit(D, S[:, :10])
    with pytest.raises(DimensionError, match="cover 10 prompts; the solver has 240"):
        solver.add_models(S[0, :10])
    with pytest.raises(DimensionError, match="expected \\(240,\\)"):
        solver.replace_model(0, S[0, :10])
    with pytest.raises(DimensionError, match="2-D"):
        HyperplaneSolver().fit(D[0], S)


def test_empty_model_is_named_and_nothing_is_added():
    D, S = _data(0)
    S[3] = np.nan
    with pytest.raises(InputError, match="model m3: model has no observed outcome"):
        HyperplaneSolver().fit(D, S, model_ids=[f"m{i}" for i in range(S.shape[0])])
    solver = HyperplaneSolver().fit(D, S[:2], model_ids=["a", "b"])
    before = solver.normals_.copy()
    with pytest.raises(InputError, match="model y: model has no observed outcome"):
        solver.add_models(np.stack([S[0], np.full(D.shape[0], np.nan)]), ["x", "y"])
    assert solver.model_ids_ == ["a", "b"]
    np.testing.assert_array_equal(solver.normals_, before)
    with pytest.raises(InputError, match="model a: .*use remove_models"):
        solver.replace_model("a", np.full(D.shape[0], np.nan))


@pytest.mark.parametrize("value", [1.5, -0.1, np.inf, -np.inf])
def test_outcome_outside_unit_interval_names_model_and_column(value):
    D, S = _data(0)
    S[2, 31] = value
    with pytest.raises(InputError, match=r"model m2: outcome .* on prompt column 31 is outside \[0, 1\]"):
        HyperplaneSolver().fit(D, S, model_ids=[f"m{i}" for i in range(S.shape[0])])
    solver = HyperplaneSolver().fit(D, S[:2])
    with pytest.raises(InputError, match="prompt column 31"):
        solver.add_models(S[2])
    with pytest.raises(InputError, match="model 1: outcome"):
        solver.add_prompts(D[:1], np.array([[0.0], [value]]))


def test_failed_fit_keeps_the_previous_fit():
    D, S = _data(0)
    solver = HyperplaneSolver().fit(D, S)
    before = solver.normals_.copy()
    S_bad = S.copy()
    S_bad[-1, 0] = 2.0
    with pytest.raises(InputError):
        solver.fit(D, S_bad)
    np.testing.assert_array_equal(solver.normals_, before)
    assert solver.model_ids_ == list(range(S.shape[0]))


def test_unknown_and_duplicate_model_ids():
    D, S = _data(0)
    solver = HyperplaneSolver().fit(D, S[:3], model_ids=["a", "b", "c"])
    for call in (lambda: solver.replace_model("zz", S[0]), lambda: solver.remove_models(["a", "zz"]),
                 lambda: solver.index_of("zz")):
        with pytest.raises(NotFoundError, match="'zz' is not in the solver"):
            call()
    assert solver.model_ids_ == ["a", "b", "c"]  # remove_models with one unknown id removed nothing
    with pytest.raises(InputError, match="model b: model id is already in the solver"):
        solver.add_models(S[3], ["b"])
    with pytest.raises(InputError, match="model x: model id is already"):
        solver.add_models(S[3:5], ["x", "x"])
    with pytest.raises(InputError, match="model d: model id is already"):
        HyperplaneSolver().fit(D, S[:2], model_ids=["d", "d"])
    with pytest.raises(NotFoundError, match="not fitted"):
        HyperplaneSolver().add_models(S[0])
    assert issubclass(NotFoundError, (IndexerError, LookupError))


@pytest.mark.parametrize("lam,eps", [(-1.0, 0.0), (1.0, -0.5), (np.nan, 0.0), (1.0, np.inf), ("1", 0.0)])
def test_bad_hyper_parameters(lam, eps):
    D, S = _data(0)
    with pytest.raises(InputError, match="must be a finite number >= 0"):
        HyperplaneSolver(lam=lam, eps=eps).fit(D, S)


def test_paper_formula_at_lambda_0_is_the_pseudo_inverse_of_a_rank_deficient_matrix():
    """With lambda 0 the paper's formula is the minimum-norm least-squares fit: a singular value at round-off level
    (a column that is the sum of two others) is dropped as ``pinv`` drops it, not divided by (which gave normals of
    1e15). Added by the mutation audit of 2026-12-06 (docs/TESTING.md)."""
    D, S = _data(4, N=60, d=6, M=3)
    D[:, -1] = D[:, 0] + D[:, 1]
    Y = 2 * S - 1
    want = np.linalg.lstsq(D, Y.T, rcond=None)[0].T
    np.testing.assert_allclose(paper_normals(D, S, lam=0.0), want, atol=1e-9)
    np.testing.assert_allclose(HyperplaneSolver(lam=0.0).fit(D, S).normals_, want, atol=1e-9)
