"""Plain records the SQL store returns and accepts (no SQLAlchemy here): import them from
:mod:`indexer.store.sql`, which re-exports them."""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

import numpy as np

CHUNK = 5000
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+\Z", re.ASCII)  # ASCII, as indexer.identity._REPO
MODEL_FIELDS = (
    "kind", "revision", "author", "license", "num_parameters", "pipeline_tag", "library", "tags", "downloads",
    "likes", "gated", "created_at", "last_modified", "base_model", "fetched_at", "num_parameters_from",
)


def looks_like_repo_id(key: str) -> bool:
    """True for "org/name" Hub repo ids; False for plain names such as "gpt-4o(eval_results/gpt4o)"."""
    return bool(_REPO_ID.match(key)) and ".." not in key and len(key) <= 96


def chunks(seq: Sequence, n: int = CHUNK):
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


def rows_for_keys(conn, query, column, keys: Sequence | None) -> list:
    """All rows of ``query``, or (``keys`` given) those whose ``column`` is in ``keys``, in IN-list chunks.
    Runs on the session's Core connection: plain rows, without the ORM's per-row bookkeeping."""
    conn = conn.connection() if hasattr(conn, "get_bind") else conn
    if keys is None:
        return conn.execute(query).all()
    rows: list = []
    for c in chunks(list(dict.fromkeys(keys))):
        rows.extend(conn.execute(query.where(column.in_(c))).all())
    return rows


def driver_rows_in(conn, head: str, values: Sequence) -> list:
    """Rows of the SQL ``head + "(?, ?, ...)"`` over ``values`` (plain strings or integers; duplicates dropped) in
    IN-list chunks, straight to the driver (a statement without rows returns none): SQLAlchemy's expansion of an
    ``in_()`` list costs a few microseconds per value (0.2 s for 32k names)."""
    conn = conn.connection() if hasattr(conn, "get_bind") else conn
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    rows: list = []
    for c in chunks(list(dict.fromkeys(values))):
        res = conn.exec_driver_sql(f"{head}({', '.join([mark] * len(c))})", tuple(c))
        if res.returns_rows:
            rows.extend(res.all())
    return rows


@dataclass(frozen=True)
class IngestResult:
    """What one source's ingest (:meth:`Store.ingest`) stored: the rows it created and the outcome cells it wrote."""

    models: int  # model rows newly created
    prompts: int  # prompt rows newly created
    outcomes: int  # (model, benchmark, prompt) cells stored, after averaging duplicates
    skipped: bool = False  # location + revision already ingested: nothing changed
    replaced: bool = False  # a previous revision's outcomes were replaced
    source_id: int | None = None
    pruned: int = 0  # benchmark memberships the replaced revision left (a prompt edited, moved or dropped) removed
    warnings: tuple[str, ...] = ()  # what the caller should hear (a benchmark keeping its recorded metric)


class StoredOutcomes(NamedTuple):
    """Stored outcomes as a models x prompts matrix (:meth:`Store.load_outcomes`): the in-memory
    :class:`indexer.outcomes.OutcomeMatrix` of the store, its columns keyed by database prompt ids; the fields
    both have carry the same names."""

    prompt_ids: np.ndarray  # int64 (N,) DB ids of the prompts (columns)
    prompt_hashes: list[str]  # (N,)
    models: list[str]  # (M,) model keys (rows)
    scores: np.ndarray  # float32 (M, N) in [0, 1]; NaN = not observed
    benchmarks: list[str]  # (N,) benchmark of each prompt


@dataclass(frozen=True)
class SourceRecord:
    """A row of ``sources``: one ingested source (a path or Hub repo), its revisions and the outcome cells it holds."""

    id: int
    kind: str
    location: str
    revision: str | None
    seen_revision: str | None
    checked_at: datetime | None
    ingested_at: datetime | None
    n_outcomes: int


@dataclass(frozen=True)
class ModelRecord:
    """A row of ``models``: one model by its key (a Hub id or a source's name), with the Hub metadata known of it."""

    key: str
    kind: str
    revision: str | None = None
    author: str | None = None
    license: str | None = None
    num_parameters: int | None = None
    pipeline_tag: str | None = None
    library: str | None = None
    tags: list | None = None
    downloads: int | None = None
    likes: int | None = None
    gated: str | None = None
    created_at: datetime | None = None
    last_modified: datetime | None = None
    base_model: str | None = None
    fetched_at: datetime | None = None
    #: the repo whose count ``num_parameters`` is when not the model's own (an adapter's base model), else None
    num_parameters_from: str | None = None


@dataclass(frozen=True)
class BenchmarkRecord:
    """A row of ``benchmarks``: one benchmark by name, the source task and metric it was read with, its prompt count."""

    name: str
    group: str | None
    source_task: str | None
    metric: str | None
    num_fewshot: int | None
    config: dict
    n_prompts: int


@dataclass(frozen=True)
class SpaceRecord:
    """A row of ``spaces``: one embedding space (an encoder and a method with its parameters)."""

    id: int
    encoder: str  # encoder id including its revision
    dim: int
    lam: float
    eps: float
    method: str
    params: dict
    created_at: datetime | None = None


@dataclass
class ModelVector:
    """A row of ``model_vectors``: one model's solved vector in a space, the benchmarks and accuracies it rests on."""

    model: str  # model key
    vector: np.ndarray  # float32 (dim,)
    n_prompts: int
    benchmarks: list[str] = field(default_factory=list)
    accuracy: dict[str, float] = field(default_factory=dict)  # observed accuracy per benchmark
    inputs_digest: str | None = None  # Store.model_digests()[model] when the vector was computed
    computed_at: datetime | None = None
    # the posterior of its scores (indexer.posterior): its coverage pattern's key, its lambda and residual variance
    pattern: str | None = None
    lam: float | None = None
    noise: float | None = None
    #: outcome cells per benchmark, as a pulled record carries them (``benchmarks[].n`` of models/<space>.parquet);
    #: None for a vector built here, whose counts come from its outcomes
    counts: dict[str, int] | None = None


@dataclass
class SpacePrior:
    """A space's shrinkage target (method ``auto-mean``): the models' mean normal when it was estimated."""

    vector: np.ndarray  # float64 (p,): the embedding part of the normals
    n_models: int  # how many models it was estimated from
    computed_at: datetime | None = None

    @functools.cached_property
    def digest(self) -> str:
        """sha256 of the float64 vector; part of every model vector's inputs digest (:func:`vector_digest`).
        Computed once per record (stale_models asks it for each of 32k models)."""
        return hashlib.sha256(np.asarray(self.vector, dtype="<f8").tobytes()).hexdigest()


def vector_digest(model_digest: str, prior: SpacePrior | None) -> str:
    """The inputs digest of a model vector: its outcomes' digest, combined with the prior's when there is one
    (a vector solved toward another prior is stale)."""
    return inputs_digest(model_digest, None if prior is None else prior.digest)


def inputs_digest(model_digest: str, prior_digest: str | None) -> str:
    """:func:`vector_digest` from the prior's digest (None or "": no prior)."""
    if not prior_digest:
        return model_digest
    return hashlib.sha256(f"{model_digest}:{prior_digest}".encode()).hexdigest()


def prior_digest(vector_bytes: bytes) -> str:
    """:attr:`SpacePrior.digest` of a prior stored as float64 bytes (``space_priors.vector``)."""
    return hashlib.sha256(np.frombuffer(vector_bytes, dtype="<f8").astype("<f8").tobytes()).hexdigest()


@dataclass
class BenchmarkVector:
    """A row of ``benchmark_vectors``: one benchmark's vector in a space, the mean of its prompts' embeddings."""

    benchmark: str
    vector: np.ndarray  # float32 (dim,): mean of the benchmark's prompt embeddings
    n_prompts: int
    computed_at: datetime | None = None


@dataclass(frozen=True)
class RunRecord:
    """A row of ``runs``: one indexing pass (or ingest), its status, counts and errors, as `taskspace runs` lists it."""

    id: int
    kind: str
    started_at: datetime
    finished_at: datetime | None
    status: str
    pid: int | None
    counts: dict
    errors: list
