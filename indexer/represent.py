"""A space's representation: how a prompt becomes a row of the solver's design matrix and a vector of the index.
Pure functions, no I/O: the encoder comes in as ``encode`` (a list of texts -> (n, d) unit rows, e.g.
:meth:`indexer.encoder.Encoder.encode`, which caches by text).

A space's params (its method's, :mod:`indexer.space`) name its representation:

- no ``features`` (methods ``paper``, ``auto``, ``auto-mean``): the prompt's embedding ``E(text)``;
- ``features = text-length-v1`` (``auto-text``): ``[E(text), log1p(characters), log1p(lines)]``;
- ``features = multiple-choice-v2`` (``auto-mc``): a prompt with an answer-option block
  (:func:`indexer.features.split_options`) is embedded as its question and its options apart,
  ``[E(question), E(options), 1, log1p(question chars), log1p(option chars), log(number of options)]``; a
  prompt without one as ``[E(text), 0, 0, 0, 0, 0]`` (the covariates are :func:`indexer.features.mc_covariates`).
  Width ``2 d + 4``. Its predecessor ``multiple-choice-v1`` (spaces built before) put ``E("(no options)")`` in
  the options half of a prompt without options and is still read.

The covariate columns are the solver's ``free`` (unpenalised) columns. With an intercept (every method but
``paper``) the index form of a prompt or query row ends with a 1 (:func:`lift`) and a model is stored as
``[e_i, (f_i,) c_i]``, so Qdrant's Dot product is the model's predicted score. A mean of lifted rows is a lifted
row: a benchmark's vector is the mean of its prompts' rows, a query by several prompts the mean of theirs.

**Two answer formats** (``multiple-choice-v2``, :func:`has_formats`). A real index mixes prompts with answer options
(MMLU-Pro, GPQA, ...) and without (code, math, instructions), and most models are measured on one kind only. A
model's covariate and options coefficients are identified only within the format it was measured on: evaluated
for the other format (covariates at 0, an options text it never saw) they extrapolate arbitrarily (a code request
once ranked models measured only on multiple-choice prompts first, at scores of +1.3 to +2.5). So the index keeps
the formats apart: a row ends ``[m, 1 - m]`` (``m`` = ``is_mc``: 1 with options, 0 without, the share of the
neighbours with options for a question asked alone) instead of ``1``, and a model is stored as
``[e_q, e_o, f, c_mc, c_free]`` (:func:`index_vectors`): on a format it was measured on exactly its fit, on one
it was not its own average options and covariates stand in, so there its score is its general level plus its
question-half fit. The posterior variance of such a score adds the spread of the models' levels for the unseen
format's share (:mod:`indexer.posterior`).

**Queries** (:func:`query_rows`). A query is represented like an indexed prompt, except on a split
space when it has no option block: it may be a question asked without its options (what
people type) or a prompt that has none (code). Its unknown parts are their average over the :data:`NEIGHBOURS`
indexed prompts whose questions are nearest to it (:func:`neighbour_rows`, :func:`fill_unknown`): the options
half is their mean options embedding, ``is_mc`` is ``p`` (the share of them with options), the question-length
column ``p log1p(question chars)``, and the two option columns their means. With ``p = 0`` (no neighbour has
options, e.g. nothing indexed has) that is exactly the query's own row; with ``p = 1`` it is the question with
the options of similar questions. The score is linear in the row, so this is each model's score at the average
of what the query leaves open. In the index the neighbours come from a search of the prompts collection with
the question half (:mod:`indexer.query`); in ``taskspace evaluate`` from each fold's source prompts.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .errors import DimensionError, InputError, NotFoundError, counted
from .features import MULTIPLE_CHOICE, MULTIPLE_CHOICE_V2, mc_covariates, n_features, split_options, text_features

__all__ = ["NO_OPTIONS", "NEIGHBOURS", "add_intercept", "neighbour_rows", "fill_from_neighbours", "feature_set",
           "has_intercept", "is_split", "embed_width", "index_dim", "embed", "design", "rows", "lift", "query_rows",
           "question_width", "unknown", "options_share", "fill_unknown", "mean_row", "has_formats", "pattern_formats", "index_vectors",
           "effective_rows", "embedded_texts", "LEVELS", "LEVELS_FORMATS", "has_levels", "strip_levels", "levels", "prior_formats",
           "level_width", "prompt_formats", "format_weights", "prior_matrix", "question_rows", "nearest"]

#: the ``levels`` param of a space whose vectors carry the level coordinates (:func:`has_levels`)
LEVELS = "level-deviation-v1"
#: the same with the prior (and its part of the level/deviation map) per answer format (:func:`prior_formats`): the
#: model vectors end ``[w_i1 .. w_iF, l_i, u_i . mu_i]``, ``w_if`` the share of the model's observed prompts in
#: format f and ``u_i = sum_f w_if u_f`` its shrinkage target
LEVELS_FORMATS = "level-deviation-v2"
#: the text whose embedding stands for the options of a prompt without any
NO_OPTIONS = "(no options)"
#: how many indexed prompts, nearest by question, stand in for the options a query leaves out (measured with
#: 10, 50 and 200 on mmlu_pro: each beats the plain mean of all prompts in every metric; docs/RESULTS.md)
NEIGHBOURS = 50

Encode = Callable[[Sequence[str]], np.ndarray]

def _params(space_or_params) -> dict:
    if isinstance(space_or_params, dict):
        return space_or_params
    return dict(getattr(space_or_params, "params", None) or {})


def feature_set(space_or_params) -> str | None:
    """The name of the space's prompt covariate set (``features`` in its params, :mod:`indexer.features`),
    None when its vectors carry no covariates (methods ``auto``, ``auto-mean`` and ``paper``)."""
    name = _params(space_or_params).get("features") or None
    n_features(name)  # an unknown set (written by another version) is a ConfigError, not wrong vectors
    return name


def has_intercept(space_or_params) -> bool:
    """True when the space's models carry a per-model intercept (every method but ``paper``)."""
    return bool(_params(space_or_params).get("intercept"))


def is_split(space_or_params) -> bool:
    """True when a prompt is embedded as its question and its options apart (``multiple-choice-v1``/``-v2``)."""
    return feature_set(space_or_params) in (MULTIPLE_CHOICE, MULTIPLE_CHOICE_V2)


def has_formats(space_or_params) -> bool:
    """True when the space keeps a prompt's two answer formats apart in the index (``multiple-choice-v2``): model
    vectors end ``[c_mc, c_free]`` and index rows ``[m, 1 - m]`` instead of one intercept (:func:`index_vectors`)."""
    return feature_set(space_or_params) == MULTIPLE_CHOICE_V2


def has_levels(space_or_params) -> bool:
    """True when the space's model vectors end with their level and prior coordinates ``[l_i, u . mu_i]`` (params
    ``levels``, :data:`LEVELS`; with :data:`LEVELS_FORMATS` preceded by the model's format shares): its calibration
    is the level/deviation map (:mod:`indexer.posterior`), folded into the query vector, and every index row ends
    with as many zeros (the raw score is unchanged)."""
    return _params(space_or_params).get("levels") in (LEVELS, LEVELS_FORMATS)


def prior_formats(space_or_params) -> int:
    """How many answer formats the space's prior is kept per (the solver's ``n_formats``): 2 (with options,
    without) for a space with :data:`LEVELS_FORMATS` that keeps the formats apart (:func:`has_formats`), else 1."""
    p = _params(space_or_params)
    return 2 if p.get("levels") == LEVELS_FORMATS and has_formats(p) else 1


def level_width(space_or_params) -> int:
    """How many trailing level coordinates the space's vectors carry: 0 without levels, 2 (``[l_i, u . mu_i]``),
    or ``F + 2`` with the prior per answer format (``[w_i1 .. w_iF, l_i, u_i . mu_i]``)."""
    if not has_levels(space_or_params):
        return 0
    return 2 if _params(space_or_params).get("levels") == LEVELS else 2 + prior_formats(space_or_params)


def prompt_formats(X: np.ndarray, space_or_params) -> np.ndarray | None:
    """(N,) int8 each design row's answer format for the solver (``formats``) of a space with the prior per format
    (:func:`prior_formats` > 1): 0 with answer options (``is_mc`` > 0), 1 without; None for any other space."""
    if prior_formats(space_or_params) == 1:
        return None
    return np.where(np.asarray(X)[:, _covariates_at(np.asarray(X).shape[1])] > 0, 0, 1).astype(np.int8)


def query_format_shares(rows: np.ndarray, space_or_params) -> np.ndarray:
    """(q, F) each index row's weight on each of the space's per-format priors (:func:`prior_formats` F): its
    ``[m, 1 - m]`` format coordinates with a prior per format, else a column of ones."""
    F = prior_formats(space_or_params)
    rows = np.atleast_2d(np.asarray(rows, dtype=np.float64))
    if F == 1:
        return np.ones((rows.shape[0], 1))
    w = level_width(space_or_params)
    return rows[:, -w - F:-w]


def prior_matrix(vector, space_or_params) -> np.ndarray:
    """A space's prior as the solver and the folded query take it, from its stored (flat) float64 vector: (p,), or
    (F, p) with a prior per answer format (:func:`prior_formats`; stored row after row)."""
    u = np.asarray(vector, dtype=np.float64)
    F = prior_formats(space_or_params)
    return u.reshape(F, -1) if F > 1 else u.reshape(-1)


def strip_levels(X: np.ndarray, space_or_params) -> np.ndarray:
    """Index rows (or a row) without the trailing level coordinates of a space with levels (:func:`level_width`;
    unchanged otherwise)."""
    w = level_width(space_or_params)
    return X[..., :-w] if w else X


def format_weights(solver) -> np.ndarray:
    """(M, F) each model's weight on each row of the solver's prior (``prior_`` as (F, p)): the shares of its observed
    prompts per answer format with a prior per format (``n_formats`` F > 1), else a column of ones (F = 1)."""
    M, F = len(solver.model_ids_), int(getattr(solver, "n_formats", 1))
    if F == 1:
        return np.ones((M, 1))
    shares = solver.format_shares(sorted(set(solver.pattern_of_)))
    return np.stack([shares[k] for k in solver.pattern_of_]) if M else np.zeros((0, F))


def levels(solver) -> tuple[np.ndarray, np.ndarray]:
    """(M,) each model's level ``l_i`` (its mean signed outcome over its observed prompts: the score at its
    coverage pattern's mean row) and (M,) ``u_i . mu_i``, the model's prior ``u_i`` (the space prior, the models'
    mean normal, embedding part; with a prior per answer format their mix by the model's format shares,
    :meth:`~indexer.solver.HyperplaneSolver.pattern_prior`) at the model's pattern mean (0 without a prior): the
    two coordinates a space with levels appends to its model vectors (:func:`index_vectors`)."""
    level = np.asarray(solver.sum_y_, dtype=np.float64) / np.maximum(np.asarray(solver.n_observed_), 1)
    mu_u = np.zeros(level.shape[0])
    if getattr(solver, "prior_", None) is not None and len(level):
        pats = solver.pattern_of_
        for key, (n, eig) in solver.factors(sorted(set(pats))).items():
            u = np.asarray(solver.pattern_prior(key), dtype=np.float64)
            rows_ = np.array([i for i, k in enumerate(pats) if k == key])
            mu_u[rows_] = float(np.asarray(eig.mu[:u.shape[0]]) @ u)
    return level, mu_u


def embed_width(encoder_dim: int, space_or_params) -> int:
    """Width of the embedding part of a row: ``d``, or ``2 d`` for the question/options split."""
    return encoder_dim * (2 if is_split(space_or_params) else 1)


def index_dim(encoder_dim: int, space_or_params) -> int:
    """Width of a stored vector: embedding part + covariates + 1 with an intercept."""
    p = _params(space_or_params)
    return (embed_width(encoder_dim, p) + n_features(feature_set(p)) + (1 if has_intercept(p) else 0)
            + (1 if has_formats(p) else 0) + level_width(p))


def _texts(texts) -> list[str]:
    return [texts] if isinstance(texts, str) else list(texts)


def _split_embed(parts: list[tuple[str, str | None]], encode: Encode, space_or_params=None) -> np.ndarray:
    """``[E(question), E(options)]`` of :func:`split_options` parts; without options the options half is
    ``E("(no options)")`` (``multiple-choice-v1``) or zeros (``multiple-choice-v2``)."""
    Q = np.asarray(encode([q for q, _ in parts]))
    if space_or_params is not None and has_formats(space_or_params):
        O = np.zeros_like(Q)
        have = [i for i, (_, o) in enumerate(parts) if o is not None]
        if have:
            O[have] = np.asarray(encode([parts[i][1] for i in have]))
        return np.hstack([Q, O])
    return np.hstack([Q, np.asarray(encode([o if o is not None else NO_OPTIONS for _, o in parts]))])


def _split_covariates(parts: list[tuple[str, str | None]]) -> np.ndarray:
    return mc_covariates([q for q, _ in parts], [o for _, o in parts])


def embedded_texts(texts: Sequence[str], space_or_params) -> list[list[str]]:
    """For each text, the texts its row embeds (what :func:`embed` gives the encoder): ``[text]``, or on a split
    space ``[question]`` and, when it has an option block, ``[question, options]``."""
    texts = _texts(texts)
    if not is_split(space_or_params):
        return [[t] for t in texts]
    return [[q] if o is None else [q, o] for q, o in (split_options(t) for t in texts)]


def embed(texts: Sequence[str], encode: Encode, space_or_params) -> np.ndarray:
    """The embedding part of the rows of ``texts``: ``E(text)``, or ``[E(question), E(options)]`` on a split
    space (``E("(no options)")`` for a prompt without options)."""
    texts = _texts(texts)
    if not is_split(space_or_params):
        return np.asarray(encode(texts))
    return _split_embed([split_options(t) for t in texts], encode, space_or_params)


def design(E: np.ndarray, texts: Sequence[str] | None, space_or_params) -> np.ndarray:
    """The rows the solver is fitted on (and predicts from): the embedding part ``E`` (:func:`embed`) of
    ``texts`` with the covariate columns of the space's feature set appended; ``E`` unchanged without one."""
    name = feature_set(space_or_params)
    if not name:
        return E
    if texts is None:
        raise InputError(f"prompt feature set {name!r}: the prompts' texts are needed as well as their embeddings")
    texts = _texts(texts)
    E = np.atleast_2d(np.asarray(E))
    if len(texts) != E.shape[0]:
        raise DimensionError(f"{counted(len(texts), 'text')} for {counted(E.shape[0], 'embedding row')}")
    if name in (MULTIPLE_CHOICE, MULTIPLE_CHOICE_V2):
        F = _split_covariates([split_options(t) for t in texts])
    else:
        F = text_features(texts)
    return np.hstack([E, F.astype(E.dtype, copy=False)])


def rows(texts: Sequence[str], encode: Encode, space_or_params, *, lifted: bool = False) -> np.ndarray:
    """Design rows of indexed prompts (their options known): ``design(embed(texts), texts)``; ``lifted``: in the
    index form (:func:`lift`)."""
    texts = _texts(texts)
    if is_split(space_or_params):  # split each text once for the embeddings and the covariates
        parts = [split_options(t) for t in texts]
        E = _split_embed(parts, encode, space_or_params)
        X = np.hstack([E, _split_covariates(parts).astype(E.dtype, copy=False)])
    else:
        X = design(embed(texts, encode, space_or_params), texts, space_or_params)
    if lifted:
        return add_intercept(np.asarray(X, dtype=np.float32), space_or_params)
    return X


def lift(X: np.ndarray, space, texts: Sequence[str] | None = None) -> np.ndarray:
    """Prompt vectors in the space's index form from their embedding part ``X`` (:func:`embed`): ``[X, 1]``
    with an intercept, ``[X, covariates(texts), 1]`` with a feature set (then ``texts`` is required), ``X``
    otherwise. The inner product with a stored model vector is the model's predicted score."""
    X = np.atleast_2d(np.asarray(X, dtype=np.float32))
    name = feature_set(space)
    if name and texts is None:
        raise InputError(f"the space's vectors carry the prompt features {name!r}: lift needs the texts of the "
                         f"{counted(X.shape[0], 'prompt vector')} as well (texts=...)")
    X = design(X, texts, space).astype(np.float32, copy=False)
    return add_intercept(X, space)


def add_intercept(X: np.ndarray, space) -> np.ndarray:
    """Rows in the index form: a trailing 1 with an intercept (every method but ``paper``); with the two answer
    formats apart (:func:`has_formats`) the trailing ``[m, 1 - m]``, ``m`` the row's ``is_mc`` (1 with an option
    block, 0 without, the share of neighbours with one for a question asked alone)."""
    if not has_intercept(space):
        return X
    tail = np.zeros((X.shape[0], level_width(space)), dtype=X.dtype)  # the level coordinates
    if has_formats(space):
        m = X[:, _covariates_at(X.shape[1])][:, None]
        return np.hstack([X, m, 1.0 - m, tail]).astype(X.dtype, copy=False)
    return np.hstack([X, np.ones((X.shape[0], 1), dtype=X.dtype), tail])


def query_rows(texts: Sequence[str], encode: Encode, space_or_params, fill: np.ndarray | None = None,
               *, lifted: bool = False) -> np.ndarray:
    """Design rows of queries (see the module docstring): like :func:`rows`, except that on a split space a query
    without an option block has unknown options, filled from ``fill`` (one row, or one per query, e.g.
    :func:`neighbour_rows`) by :func:`fill_unknown`; ``fill=None`` leaves them NaN for the caller to fill.
    ``lifted``: in the index form (a trailing 1 with an intercept)."""
    texts = _texts(texts)
    X = rows(texts, encode, space_or_params).astype(np.float64)
    if is_split(space_or_params):
        d = _covariates_at(X.shape[1])
        bare = X[:, d] == 0.0  # is_mc = 0: no option block
        if bare.any():
            X[bare, d // 2:d] = np.nan  # the options half
            X[bare, d] = np.nan  # is_mc
            X[bare, d + 1] = np.log1p([len(t) for t, b in zip(texts, bare) if b])  # the question's length, known
            X[bare, d + 2:d + 4] = np.nan
        if fill is not None:
            X = fill_unknown(X, fill)
    return add_intercept(X, space_or_params) if lifted else X


def _covariates_at(width: int) -> int:
    """The first covariate column (``is_mc``) of a split space's design row of ``width`` (= ``2 d``)."""
    return int(width) - n_features(MULTIPLE_CHOICE)


def question_width(width: int) -> int:
    """How many leading columns of a split space's design row of ``width`` are the question embedding."""
    return _covariates_at(width) // 2


def question_rows(X: np.ndarray, space_or_params) -> np.ndarray:
    """(n, e) the question embeddings of design rows ``X`` (n, width), unit length: the question half of a split
    space's rows, else the embedding part (without covariates); what "nearest indexed prompts" is measured by."""
    X = np.asarray(X, dtype=np.float64)
    e = question_width(X.shape[1]) if is_split(space_or_params) else X.shape[1] - n_features(feature_set(space_or_params))
    Z = X[:, :e]
    return Z / np.maximum(np.linalg.norm(Z, axis=1, keepdims=True), 1e-12)


def unknown(X: np.ndarray) -> np.ndarray:
    """(n,) bool: the query rows of a split space whose options are unknown (NaN ``is_mc``)."""
    return np.isnan(X[:, _covariates_at(X.shape[1])])


def options_share(X: np.ndarray) -> np.ndarray:
    """(n,) the ``is_mc`` column of a split space's design rows ``X`` (n, width): 1 with options, 0 without, the share
    of the neighbours with options for a row :func:`fill_unknown` completed (NaN while unknown)."""
    return np.asarray(X)[:, _covariates_at(np.asarray(X).shape[1])]


def fill_unknown(X: np.ndarray, fill: np.ndarray) -> np.ndarray:
    """Query rows of a split space with unknown options (the rows :func:`query_rows` marks: NaN options half,
    NaN ``is_mc``, the question's ``log1p(chars)`` in its column) completed from ``fill``, one design row of width
    ``2 d + 4`` for all of them or one per query row (the mean row of the query's neighbours, or of all indexed
    prompts): options half and option columns = the fill's, ``is_mc = p`` (the fill's ``is_mc``, a share of
    prompts with options), question-length column times ``p``. Other rows unchanged."""
    X = np.array(X, dtype=np.float64, copy=True)
    fill = np.asarray(fill, dtype=np.float64)
    if fill.ndim == 1 and fill.shape[0] == X.shape[1]:
        fill = np.broadcast_to(fill, X.shape)
    if fill.shape != X.shape:
        raise DimensionError(f"fill rows of shape {fill.shape} for query rows of shape {X.shape}")
    d = _covariates_at(X.shape[1])
    bare = unknown(X)
    if bare.any():
        F = fill[bare]
        if not np.isfinite(F).all():
            raise InputError("the rows that fill unknown answer options have NaN entries: re-run `taskspace index`")
        p = F[:, d]
        X[np.ix_(bare, np.arange(d // 2, d))] = F[:, d // 2:d]
        X[bare, d] = p
        X[bare, d + 1] *= p
        X[np.ix_(bare, [d + 2, d + 3])] = F[:, d + 2:d + 4]
    return X


def nearest(Q: np.ndarray, S: np.ndarray, k: int, exclude: np.ndarray | None = None, block: int = 1024) -> np.ndarray:
    """(n, k) int: for each row of ``Q`` (n, e), the indices of the ``k`` rows of ``S`` (N, e) of largest inner product
    (cosine for unit rows), in no particular order, in the dtype given (the product is made ``block`` rows at a
    time). ``exclude`` (n,): for each row of ``Q``, one row of ``S`` that is not its neighbour (itself, left out)."""
    Q, S = np.asarray(Q), np.asarray(S)
    out = np.empty((Q.shape[0], int(k)), dtype=np.intp)
    for lo in range(0, Q.shape[0], block):
        sims = Q[lo:lo + block] @ S.T
        if exclude is not None:
            sims[np.arange(sims.shape[0]), exclude[lo:lo + block]] = -np.inf
        out[lo:lo + block] = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    return out


def neighbour_rows(X: np.ndarray, X_src: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """(n, width) for each query row of a split space, the mean of the ``k`` rows of ``X_src`` (indexed prompts'
    design rows) whose question embedding is nearest to the query's (inner product of the first halves of the
    embedding part, i.e. cosine, :func:`nearest`); NaN rows for queries whose options are known (nothing to fill)."""
    X_src = np.asarray(X_src, dtype=np.float64)
    e = question_width(X.shape[1])
    out = np.full(X.shape, np.nan)
    rows_ = np.flatnonzero(unknown(X))
    k = min(int(k), X_src.shape[0])
    if k < 1:
        raise InputError("no indexed prompts to take the answer options of a question from")
    nn = nearest(np.asarray(X[rows_, :e], dtype=np.float64), X_src[:, :e], k)
    for lo in range(0, rows_.size, 1024):  # (1024, k, width) at a time
        out[rows_[lo:lo + 1024]] = X_src[nn[lo:lo + 1024]].mean(axis=1)
    return out


def fill_from_neighbours(X: np.ndarray, X_src: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """:func:`fill_unknown` with each unknown row's :func:`neighbour_rows` among ``X_src`` (what
    ``taskspace evaluate`` does with a fold's source rows)."""
    return fill_unknown(X, np.where(unknown(X)[:, None], neighbour_rows(X, X_src, k), 0.0))


def mean_row(benchmark_vectors: Sequence, space) -> np.ndarray:
    """The indexed prompts' mean design row from the space's benchmark vectors (each the mean lifted row of its
    prompts, with its ``n_prompts``): their prompt-weighted mean, without the intercept's 1. A prompt in two
    benchmarks counts twice."""
    vs = [b for b in benchmark_vectors if b.n_prompts]
    if not vs:
        raise NotFoundError("the space has no benchmark vectors yet: run `taskspace index`")
    w = np.array([b.n_prompts for b in vs], dtype=np.float64)
    V = np.stack([np.asarray(b.vector, dtype=np.float64) for b in vs])
    m = (w[:, None] * V).sum(axis=0) / w.sum()
    if has_intercept(space):
        m = strip_levels(m, space)
        m = m[:-2] if has_formats(space) else m[:-1]
    return m


# ---------------------------------------------------------------------------------------------- model vectors
def pattern_formats(X: np.ndarray, mask: np.ndarray) -> tuple[bool, bool]:
    """(observed with answer options, observed without) for the prompts ``mask`` (N,) of design rows ``X``
    (N, 2 d + 4) of a split space: whether any of them has ``is_mc`` 1, and whether any has 0."""
    m = np.asarray(X[np.asarray(mask), _covariates_at(X.shape[1])])
    return bool((m > 0).any()), bool((m == 0).any())


def index_vectors(solver, X: np.ndarray, space) -> np.ndarray:
    """(M, dim) float64: the solver's models in the index form of ``space`` (an inner product with an index row
    is the model's predicted score). ``X`` (N, width): the design rows the solver was fitted on.

    - no intercept (``paper``): the normals ``e_i``; with an intercept: ``[e_i, (f_i,) c_i]``;
    - ``multiple-choice-v2`` (:func:`has_formats`): ``[e_q, e_o, f, c_mc, c_free]``, queried with index rows
      ``[E(q), m E(o)-part, covariates, m, 1 - m]``. A model scores a format it was observed on exactly as fitted
      (``c_mc = c_free = c_i``: a prompt without options has a zero options half and zero covariates in the
      design). On a format it was never observed on, the parts that format would set are the model's own
      average instead of an extrapolation: a model seen only with options gets ``c_free = c_i + e_o . mu_o +
      f . mu_t`` (its mean options and covariates), one seen only without gets ``e_o = f = 0`` and
      ``c_mc = c_i``: either way its score there is its general level plus its question-half fit."""
    if not has_intercept(space):
        return np.array(solver.normals_, dtype=np.float64)
    if has_levels(space):  # [.., (w_i,) l_i, u_i . mu_i]: the level coordinates (queried with 0 but by a folded query)
        base = index_vectors(solver, X, {k: v for k, v in _params(space).items() if k != "levels"})
        tail = [format_weights(solver)] if level_width(space) > 2 else []
        if not len(base):
            return np.zeros((0, base.shape[1] + level_width(space)))
        return np.hstack([base, *tail, np.column_stack(levels(solver))])
    if not has_formats(space):
        return solver.augmented_normals()
    E, a = np.asarray(solver.normals_, dtype=np.float64), np.asarray(solver.intercept_, dtype=np.float64)
    d = question_width(E.shape[1])
    out = np.zeros((E.shape[0], E.shape[1] + 2))
    factors = solver.factors(sorted(set(solver.pattern_of_)))
    for key, (n, eig) in factors.items():
        rows_ = np.array([i for i, k in enumerate(solver.pattern_of_) if k == key])
        mc_seen, free_seen = pattern_formats(X, solver.patterns_[key].mask)
        own = E[rows_, d:] @ eig.mu[d:]  # e_o . mu_o + f . mu_t: the model's average options/covariates part
        out[rows_, :d] = E[rows_, :d]
        if mc_seen:
            out[rows_, d:E.shape[1]] = E[rows_, d:]
        out[rows_, -2] = a[rows_] if mc_seen else a[rows_] + own  # c_mc
        out[rows_, -1] = a[rows_] if free_seen else a[rows_] + own  # c_free
    return out


def effective_rows(Xi: np.ndarray, mu: np.ndarray, formats: tuple[bool, bool], space) -> np.ndarray:
    """The design rows a model of a pattern is effectively scored at for the index rows ``Xi`` (q, dim)
    (:func:`index_vectors`): ``Xi`` without its intercept column(s), where on a split space with the formats apart
    the options and covariates part of a format the pattern was not observed on is the pattern's mean ``mu``
    (``formats``: :func:`pattern_formats`). The posterior variance of the score is that of these rows."""
    Xi = np.atleast_2d(np.asarray(Xi, dtype=np.float64))
    if not has_intercept(space):
        return Xi
    Xi = strip_levels(Xi, space)
    if not has_formats(space):
        return Xi[:, :-1]
    X = Xi[:, :-2].copy()
    m = Xi[:, -2]
    d = question_width(X.shape[1])
    mc_seen, free_seen = formats
    tail = X[:, d:]
    if not mc_seen:
        tail = m[:, None] * mu[None, d:]
    if not free_seen:
        tail = tail + (1.0 - m)[:, None] * mu[None, d:]
    X[:, d:] = tail
    return X
