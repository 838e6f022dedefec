"""The question/options split (method auto-mc: feature set multiple-choice-v2; its predecessor multiple-choice-v1
is still read) as pure functions: how a prompt and a query become rows, how a query without options is completed
from the indexed prompts' mean row, and (v2) how the two answer formats stay apart in the index."""

from __future__ import annotations

import numpy as np
import pytest

from indexer import represent
from indexer.errors import ConfigError, DimensionError, NotFoundError
from indexer.features import (MULTIPLE_CHOICE, MULTIPLE_CHOICE_V2, TEXT_FEATURES, mc_covariates, question_stem,
                              split_options)
from indexer.space import configured, space_params

MCL = space_params("auto-mc")  # the default: the formats apart and the level coordinates
MC2 = {k: v for k, v in MCL.items() if k != "levels"}  # multiple-choice-v2 without levels (spaces built before)
MC = dict(MC2, features=MULTIPLE_CHOICE)  # multiple-choice-v1: spaces built before v2 are still read
QUESTION = "Which gas do plants take in for photosynthesis?"
PROMPT = QUESTION + "\nA. Oxygen\nB. Carbon dioxide\nC. Nitrogen\nD. Helium"
CODE = "def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\""


def test_split_options_cuts_before_the_option_block():
    assert split_options(PROMPT) == (QUESTION, "A. Oxygen\nB. Carbon dioxide\nC. Nitrogen\nD. Helium")
    assert split_options("Pick one:\n\n(A) red\n(B) blue\nAnswer:") == ("Pick one:", "(A) red\n(B) blue\nAnswer:")
    assert split_options("Q?\nA) x\nB) y") == ("Q?", "A) x\nB) y")
    # no block, a lone A. line, or options with no question before them: the text is its own question
    for text in (CODE, "Q?\nA. only one option", "A. x\nB. y"):
        assert split_options(text) == (text, None) and question_stem(text) == text
    assert question_stem(PROMPT) == QUESTION


def test_mc_covariates_are_zero_without_options():
    q, o = split_options(PROMPT)
    F = mc_covariates([q, CODE], [o, None])
    np.testing.assert_allclose(F[0], [1.0, np.log1p(len(q)), np.log1p(len(o)), np.log(4)])
    np.testing.assert_array_equal(F[1], 0.0)


def test_space_params_and_dimensions():
    assert MC2["features"] == MULTIPLE_CHOICE_V2 and MC2["free"] == 4 and MC2["prior"] == "mean" and MC2["intercept"]
    assert "lam" not in MC2 and "eps" not in MC2
    assert represent.index_dim(384, MC2) == 2 * 384 + 4 + 2 and represent.embed_width(384, MC2) == 768
    assert represent.index_dim(384, MC) == 2 * 384 + 4 + 1 and represent.embed_width(384, MC) == 768
    text = space_params("auto-text")
    assert text["features"] == TEXT_FEATURES and represent.index_dim(384, text) == 384 + 2 + 1
    plain = space_params("auto-mean")
    assert "features" not in plain and represent.index_dim(384, plain) == 385
    assert represent.index_dim(384, space_params("paper")) == 384
    # the pipeline's space params are these
    params = configured(type("S", (), {"method": "auto-mc", "lam": 1.0, "eps": 0.0})()).params
    assert params == MCL == dict(MC2, levels=represent.LEVELS_FORMATS)  # the prior per answer format
    assert represent.index_dim(384, MCL) == 2 * 384 + 4 + 2 + 2 + 2 and represent.has_levels(MCL)
    assert represent.index_dim(384, dict(MC2, levels=represent.LEVELS)) == 2 * 384 + 4 + 2 + 2  # spaces built before
    with pytest.raises(ConfigError, match="unknown prompt feature set"):
        represent.is_split({"features": "multiple-choice-v0"})


def test_rows_embed_question_and_options_apart(encoder):
    X = represent.rows([PROMPT, CODE], encoder.encode, MC)
    d = encoder.dim
    assert X.shape == (2, 2 * d + 4)
    q, o = split_options(PROMPT)
    np.testing.assert_allclose(X[0, :d], encoder.encode([q])[0], atol=1e-7)
    np.testing.assert_allclose(X[0, d:2 * d], encoder.encode([o])[0], atol=1e-7)
    np.testing.assert_allclose(X[0, 2 * d:], mc_covariates([q], [o])[0], atol=1e-6)
    # a prompt without options: its whole text, the "(no options)" embedding, covariates 0
    np.testing.assert_allclose(X[1, :d], encoder.encode([CODE])[0], atol=1e-7)
    np.testing.assert_allclose(X[1, d:2 * d], encoder.encode([represent.NO_OPTIONS])[0], atol=1e-7)
    np.testing.assert_array_equal(X[1, 2 * d:], 0.0)
    lifted = represent.lift(represent.embed([PROMPT, CODE], encoder.encode, MC), MC, [PROMPT, CODE])
    np.testing.assert_allclose(lifted[:, :-1], X, atol=1e-6)
    np.testing.assert_array_equal(lifted[:, -1], 1.0)


def test_a_query_with_options_is_a_prompt_and_one_without_takes_the_average_options(encoder):
    d = encoder.dim
    indexed = [PROMPT, "What is 2 + 2?\nA. 3\nB. 4\nC. 5", CODE, "Write a haiku about rain."]
    X = represent.rows(indexed, encoder.encode, MC)
    mean = X.mean(axis=0)
    p = mean[2 * d]
    assert p == pytest.approx(0.5)  # two of the four indexed prompts have options
    unfilled = represent.query_rows([PROMPT, QUESTION], encoder.encode, MC)
    np.testing.assert_allclose(unfilled[0], X[0], atol=1e-6)  # options given: the prompt's own row
    assert np.isnan(unfilled[1, d:2 * d]).all() and np.isnan(unfilled[1, 2 * d]) and np.isnan(unfilled[1, -2:]).all()
    assert unfilled[1, 2 * d + 1] == pytest.approx(np.log1p(len(QUESTION)))
    Q = represent.query_rows([PROMPT, QUESTION], encoder.encode, MC, mean)
    np.testing.assert_allclose(Q[0], X[0], atol=1e-6)
    np.testing.assert_allclose(Q[1, :d], encoder.encode([QUESTION])[0], atol=1e-7)
    np.testing.assert_allclose(Q[1, d:2 * d], mean[d:2 * d])
    np.testing.assert_allclose(Q[1, 2 * d:], [p, p * np.log1p(len(QUESTION)), mean[-2], mean[-1]])
    lifted = represent.query_rows([QUESTION], encoder.encode, MC, mean, lifted=True)
    assert lifted.shape == (1, 2 * d + 5) and lifted[0, -1] == 1.0


def test_with_nothing_indexed_having_options_a_bare_query_is_its_own_row(encoder):
    """p = 0: the fill gives exactly the row of the text as an indexed prompt without options."""
    indexed = [CODE, "Write a haiku about rain.", "Sort a list in Python."]
    mean = represent.rows(indexed, encoder.encode, MC).mean(axis=0)
    Q = represent.query_rows(["Reverse a string."], encoder.encode, MC, mean)
    np.testing.assert_allclose(Q[0], represent.rows(["Reverse a string."], encoder.encode, MC)[0], atol=1e-6)


def test_other_spaces_query_rows_are_their_rows(encoder):
    for name in ("auto-mean", "auto-text", "paper"):
        params = space_params(name)
        texts = [QUESTION, PROMPT]
        np.testing.assert_array_equal(represent.query_rows(texts, encoder.encode, params),
                                      represent.rows(texts, encoder.encode, params))


def test_fill_unknown_checks_the_mean_row():
    X = np.full((1, 2 * 3 + 4), np.nan)
    with pytest.raises(DimensionError):
        represent.fill_unknown(X, np.zeros(5))
    with pytest.raises(Exception, match="re-run"):
        represent.fill_unknown(X, np.full(10, np.nan))


def test_mean_row_weights_benchmarks_by_their_prompts():
    bv = type("BV", (), {})

    def b(vec, n):
        o = bv()
        o.vector, o.n_prompts = np.asarray(vec, np.float32), n
        return o

    m = represent.mean_row([b([1.0, 0.0, 1.0], 3), b([0.0, 2.0, 1.0], 1), b([9.0, 9.0, 1.0], 0)], {"intercept": True})
    np.testing.assert_allclose(m, [0.75, 0.5])
    with pytest.raises(NotFoundError, match="taskspace index"):
        represent.mean_row([], {"intercept": True})


def test_neighbour_rows_average_the_k_nearest_questions():
    """Brute force: for each query with unknown options, the mean row of the k source rows whose question half has
    the largest inner product with the query's; queries with known options get nothing (NaN)."""
    rng = np.random.default_rng(4)
    e = 6
    width = 2 * e + 4
    X_src = rng.normal(size=(40, width))
    X_src[:, :e] /= np.linalg.norm(X_src[:, :e], axis=1, keepdims=True)
    X = rng.normal(size=(5, width))
    X[:, :e] /= np.linalg.norm(X[:, :e], axis=1, keepdims=True)
    X[[0, 2, 3], e:2 * e] = np.nan
    X[[0, 2, 3], 2 * e] = np.nan  # unknown options
    X[[0, 2, 3], 2 * e + 2:] = np.nan
    X[[1, 4], 2 * e] = 1.0
    assert represent.question_width(width) == e
    N = represent.neighbour_rows(X, X_src, k=7)
    for i in range(5):
        if i in (1, 4):
            assert np.isnan(N[i]).all()
            continue
        order = np.argsort(-(X_src[:, :e] @ X[i, :e]))[:7]
        np.testing.assert_allclose(N[i], X_src[order].mean(axis=0))
    filled = represent.fill_from_neighbours(X, X_src, k=7)
    np.testing.assert_array_equal(filled[[1, 4]], X[[1, 4]])
    np.testing.assert_allclose(filled[0], represent.fill_unknown(X[:1], N[0])[0])
    assert not np.isnan(filled).any()
    # k larger than the source: every source row
    np.testing.assert_allclose(represent.neighbour_rows(X[:1], X_src, k=1000)[0], X_src.mean(axis=0))


def test_a_bare_question_takes_the_options_of_similar_questions(encoder):
    """Two kinds of indexed prompts: a bare maths question takes maths options (p = 1 among its neighbours),
    a bare coding request takes none (its neighbours have no options: its own row, exactly)."""
    maths = [f"What is {a} + {b}?\nA. {a + b}\nB. {a + b + 1}\nC. {a * b}" for a, b in [(2, 3), (4, 5), (6, 7), (8, 9)]]
    code = [f"Write a Python function that {what}." for what in
            ("reverses a string", "sorts a list", "parses JSON", "counts words")]
    X = represent.rows(maths + code, encoder.encode, MC)
    d = 2 * encoder.dim
    Q = represent.query_rows(["What is 10 + 11?", "Write a Python function that merges two dicts."], encoder.encode, MC)
    filled = represent.fill_from_neighbours(Q, X, k=4)
    assert filled[0, d] == pytest.approx(1.0)  # the maths question's four nearest are the maths prompts
    np.testing.assert_allclose(filled[0, encoder.dim:d], X[:4, encoder.dim:d].mean(axis=0), atol=1e-6)
    own = represent.rows(["Write a Python function that merges two dicts."], encoder.encode, MC)[0]
    np.testing.assert_allclose(filled[1], own, atol=1e-6)


# -- multiple-choice-v2: the two answer formats apart -------------------------------------------------------------

def test_v2_rows_leave_the_options_half_empty_without_options(encoder):
    X = represent.rows([PROMPT, CODE], encoder.encode, MC2)
    d = encoder.dim
    q, o = split_options(PROMPT)
    np.testing.assert_allclose(X[0, d:2 * d], encoder.encode([o])[0], atol=1e-7)
    np.testing.assert_array_equal(X[1, d:], 0.0)  # no "(no options)" text: zeros, covariates 0
    L = represent.rows([PROMPT, CODE], encoder.encode, MC2, lifted=True)
    np.testing.assert_allclose(L[:, :-2], X, atol=1e-6)
    np.testing.assert_array_equal(L[:, -2:], [[1.0, 0.0], [0.0, 1.0]])  # [m, 1 - m]


class _Fitted:
    """What index_vectors reads of a solver, written out by hand: one model per coverage pattern."""

    def __init__(self, E, a, masks, mus):
        self.normals_, self.intercept_ = np.asarray(E, float), np.asarray(a, float)
        self.pattern_of_ = [bytes([i]) for i in range(len(masks))]
        self.patterns_ = {k: type("P", (), {"mask": np.asarray(m)})() for k, m in zip(self.pattern_of_, masks)}
        self._mus = dict(zip(self.pattern_of_, mus))

    def factors(self, keys):
        return {k: (int(self.patterns_[k].mask.sum()), type("E", (), {"mu": self._mus[k]})()) for k in keys}


def test_v2_model_vectors_never_extrapolate_to_an_unseen_format():
    d = 2
    # design rows of two prompts with options and one without: [E(q) (2), E(o) (2), is_mc, lq, lo, ln]
    X = np.array([[0.6, 0.8, 1.0, 0.0, 1, 3.0, 4.0, 1.4],
                  [0.8, 0.6, 0.0, 1.0, 1, 5.0, 2.0, 1.1],
                  [1.0, 0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0]])
    E = np.array([[0.1, 0.2, 0.3, 0.4, 0.5, -0.6, 0.7, 0.8]] * 3)
    a = np.array([0.1, 0.2, 0.3])
    masks = [[True, True, True], [True, True, False], [False, False, True]]  # both, options only, none
    mus = [X[m].mean(axis=0) for m in np.array(masks)]
    V = represent.index_vectors(_Fitted(E, a, masks, mus), X, MC2 | {"features": MULTIPLE_CHOICE_V2})
    assert V.shape == (3, 2 * d + 4 + 2)
    mc_row = np.concatenate([X[0], [1.0, 0.0]])
    free_row = np.concatenate([[0.2, 0.9], np.zeros(6), [0.0, 1.0]])  # a question without options
    # observed on both formats: exactly the fit, on either format
    assert V[0] @ mc_row == pytest.approx(a[0] + E[0] @ X[0])
    assert V[0] @ free_row == pytest.approx(a[0] + E[0][:2] @ [0.2, 0.9])
    # only with options: without options its own mean options and covariates stand in (no covariate at 0)
    assert V[1] @ mc_row == pytest.approx(a[1] + E[1] @ X[0])
    assert V[1] @ free_row == pytest.approx(a[1] + E[1][:2] @ [0.2, 0.9] + E[1][2:] @ mus[1][2:])
    # only without options: with options too it is scored at its own (zero) options part
    assert V[2] @ mc_row == pytest.approx(a[2] + E[2][:2] @ X[0, :2])
    assert V[2] @ free_row == pytest.approx(a[2] + E[2][:2] @ [0.2, 0.9])
    # a question whose neighbours are half multiple-choice: the same mix of the two scores
    mix = 0.5 * mc_row + 0.5 * np.concatenate([X[0, :2], np.zeros(6), [0.0, 1.0]])
    assert V[1] @ mix == pytest.approx(0.5 * (V[1] @ mc_row) + 0.5 * (a[1] + E[1][:2] @ X[0, :2] + E[1][2:] @ mus[1][2:]))
    # the effective design rows the posterior is taken at: the unseen format's part is the pattern's mean
    eff = represent.effective_rows(free_row[None], mus[1], (True, False), MC2)[0]
    np.testing.assert_allclose(eff, np.concatenate([[0.2, 0.9], mus[1][2:]]))
    assert a[1] + E[1] @ eff == pytest.approx(V[1] @ free_row)
