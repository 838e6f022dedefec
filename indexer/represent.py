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

from .errors import DimensionError, InputError, NotFoundError
from .features import MULTIPLE_CHOICE, MULTIPLE_CHOICE_V2, mc_covariates, n_features, split_options, text_features

__all__ = ["NO_OPTIONS", "NEIGHBOURS", "add_intercept", "neighbour_rows", "fill_from_neighbours", "feature_set",
           "has_intercept", "is_split", "embed_width", "index_dim", "embed", "design", "rows", "lift", "query_rows",
           "question_width", "unknown", "fill_unknown", "mean_row", "has_formats", "pattern_formats", "index_vectors",
           "effective_rows"]

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


def embed_width(encoder_dim: int, space_or_params) -> int:
    """Width of the embedding part of a row: ``d``, or ``2 d`` for the question/options split."""
    return encoder_dim * (2 if is_split(space_or_params) else 1)


def index_dim(encoder_dim: int, space_or_params) -> int:
    """Width of a stored vector: embedding part + covariates + 1 with an intercept."""
    p = _params(space_or_params)
    return (embed_width(encoder_dim, p) + n_features(feature_set(p)) + (1 if has_intercept(p) else 0)
            + (1 if has_formats(p) else 0))


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
        raise DimensionError(f"{len(texts)} text(s) for {E.shape[0]} embedding row(s)")
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
                         f"{X.shape[0]} prompt vector(s) as well (texts=...)")
    X = design(X, texts, space).astype(np.float32, copy=False)
    return add_intercept(X, space)


def add_intercept(X: np.ndarray, space) -> np.ndarray:
    """Rows in the index form: a trailing 1 with an intercept (every method but ``paper``); with the two answer
    formats apart (:func:`has_formats`) the trailing ``[m, 1 - m]``, ``m`` the row's ``is_mc`` (1 with an option
    block, 0 without, the share of neighbours with one for a question asked alone)."""
    if not has_intercept(space):
        return X
    if has_formats(space):
        m = X[:, _covariates_at(X.shape[1])][:, None]
        return np.hstack([X, m, 1.0 - m]).astype(X.dtype, copy=False)
    return np.hstack([X, np.ones((X.shape[0], 1), dtype=X.dtype)])


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


def unknown(X: np.ndarray) -> np.ndarray:
    """(n,) bool: the query rows of a split space whose options are unknown (NaN ``is_mc``)."""
    return np.isnan(X[:, _covariates_at(X.shape[1])])


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


def neighbour_rows(X: np.ndarray, X_src: np.ndarray, k: int = NEIGHBOURS) -> np.ndarray:
    """(n, width) for each query row of a split space, the mean of the ``k`` rows of ``X_src`` (indexed prompts'
    design rows) whose question embedding is nearest to the query's (inner product of the first halves of the
    embedding part, i.e. cosine); NaN rows for queries whose options are known (nothing to fill)."""
    X_src = np.asarray(X_src, dtype=np.float64)
    e = question_width(X.shape[1])
    out = np.full(X.shape, np.nan)
    rows_ = np.flatnonzero(unknown(X))
    k = min(int(k), X_src.shape[0])
    if k < 1:
        raise InputError("no indexed prompts to take the answer options of a question from")
    for lo in range(0, rows_.size, 1024):
        idx = rows_[lo:lo + 1024]
        sims = np.asarray(X[idx, :e], dtype=np.float64) @ X_src[:, :e].T
        nn = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        out[idx] = X_src[nn].mean(axis=1)
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


# ------------------------------------------------------------------------------------- level (generalised ridge)
#: the level sets a space's params may name (``level``): how many principal directions of each embedding half are
#: penalised less, and by how much (their coordinates scaled by ``s``: the ridge penalty on them divided by s^2)
LEVEL_SETS = {"pca-v1": {"k": 16, "s": 3.0}}


def level_set(space_or_params) -> dict | None:
    """The space's level set (``level`` in its params: :data:`LEVEL_SETS`), None without one."""
    name = _params(space_or_params).get("level") or None
    if name is None:
        return None
    if name not in LEVEL_SETS:
        from .errors import ConfigError

        raise ConfigError(f"unknown level set {name!r}; this version knows {', '.join(LEVEL_SETS)} "
                          "(the space was built by another version of taskspace: re-index)")
    return LEVEL_SETS[name]


def embedding_blocks(width: int, space_or_params) -> list[tuple[int, int]]:
    """``[(lo, hi)]``: the embedding halves of a design row of ``width`` (one block, or question and options)."""
    p = _params(space_or_params)
    emb = int(width) - n_features(feature_set(p))
    if is_split(p):
        return [(0, emb // 2), (emb // 2, emb)]
    return [(0, emb)]


class Level:
    """The linear map ``x -> A x`` of a space's design rows, ``A = I + (s - 1) P P^T`` per embedding block: the
    top ``k`` principal directions ``P`` (orthonormal columns) of each block's centred rows scaled by ``s``. An
    isotropic ridge on the mapped rows is a generalised ridge on the raw ones whose penalty on those directions is
    divided by ``s^2``: the directions along which prompts differ most (topic, benchmark) are learned nearly
    freely, the rest is shrunk as before. ``A`` is symmetric, so a model fitted on mapped rows, ``e'``, scores a
    raw row as ``e' . A x = (A e') . x``: :meth:`apply` maps the model vectors back and the index form, queries,
    benchmark vectors and neighbours stay raw (:func:`level_index_vectors`). Covariate and intercept columns are
    not touched (they are unpenalised anyway); a mean of mapped rows is the mapped mean (``A`` is linear)."""

    def __init__(self, blocks: Sequence[tuple[int, int, np.ndarray]], s: float, n: int = 0):
        self.blocks = [(int(lo), int(hi), np.asarray(P, dtype=np.float64)) for lo, hi, P in blocks]
        self.s = float(s)
        self.n = int(n)  # how many prompts it was estimated from

    def apply(self, X: np.ndarray, inverse: bool = False) -> np.ndarray:
        """``A X`` row-wise (``A^-1`` with ``inverse``: the same directions scaled by ``1 / s``), float64."""
        X = np.array(np.atleast_2d(X), dtype=np.float64, copy=True)
        f = (1.0 / self.s if inverse else self.s) - 1.0
        for lo, hi, P in self.blocks:
            if P.size:
                Z = X[:, lo:hi]
                X[:, lo:hi] = Z + f * ((Z @ P) @ P.T)
        return X

    def to_array(self) -> np.ndarray:
        """One float64 vector holding the map (``[s, n, blocks, (lo, hi, k, P.ravel())...]``) for storage."""
        parts = [np.array([self.s, self.n, len(self.blocks)], dtype=np.float64)]
        for lo, hi, P in self.blocks:
            parts.append(np.array([lo, hi, P.shape[1]], dtype=np.float64))
            parts.append(P.ravel())
        return np.concatenate(parts)

    @classmethod
    def from_array(cls, a: np.ndarray) -> "Level":
        a = np.asarray(a, dtype=np.float64)
        s, n, nb = float(a[0]), int(a[1]), int(a[2])
        at, blocks = 3, []
        for _ in range(nb):
            lo, hi, k = (int(v) for v in a[at:at + 3])
            at += 3
            blocks.append((lo, hi, a[at:at + (hi - lo) * k].reshape(hi - lo, k)))
            at += (hi - lo) * k
        return cls(blocks, s, n)

    def __eq__(self, other) -> bool:
        return (isinstance(other, Level) and self.s == other.s and len(self.blocks) == len(other.blocks)
                and all(a[0] == b[0] and a[1] == b[1] and np.array_equal(a[2], b[2])
                        for a, b in zip(self.blocks, other.blocks)))


def fit_level(X: np.ndarray, space_or_params) -> Level | None:
    """The space's :class:`Level` estimated from design rows ``X`` (N, width) of its indexed prompts (None when the
    space has no level set): per embedding block, the top ``k`` right singular vectors of the block's centred
    non-zero rows (a split space's prompts without options have a zero options half: they do not count there; a
    block with at most ``k`` such rows is left as it is). Signs are fixed (largest entry positive) so the map is a
    function of the rows only."""
    cfg = level_set(space_or_params)
    if cfg is None:
        return None
    X = np.asarray(X)
    k, blocks = int(cfg["k"]), []
    for lo, hi in embedding_blocks(X.shape[1], space_or_params):
        Z = np.asarray(X[:, lo:hi], dtype=np.float64)
        Z = Z[np.abs(Z).sum(axis=1) > 0]
        if Z.shape[0] <= k:
            blocks.append((lo, hi, np.zeros((hi - lo, 0))))
            continue
        Z = Z - Z.mean(axis=0)
        w, V = np.linalg.eigh(Z.T @ Z)  # d x d: cheaper than an SVD of N x d
        P = V[:, ::-1][:, :k]
        P = P * np.where(P[np.abs(P).argmax(axis=0), np.arange(P.shape[1])] < 0, -1.0, 1.0)
        blocks.append((lo, hi, P))
    return Level(blocks, float(cfg["s"]), X.shape[0])


def level_index_vectors(solver, X: np.ndarray, space, level: Level | None) -> np.ndarray:
    """:func:`index_vectors` of a solver fitted on mapped rows ``X = level.apply(raw rows)``, mapped back so that
    they score raw index rows (``(A e') . x``); without a level, :func:`index_vectors`."""
    V = index_vectors(solver, X, space)
    return V if level is None else level.apply(V)
