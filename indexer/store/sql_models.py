"""SQLAlchemy 2 typed ORM tables of the SQL store (see :mod:`indexer.store.sql` for the schema notes).

Alembic (``migrations/versions``) creates these tables; the ORM never calls ``create_all``.
Times are stored timezone-aware (UTC). Packed arrays are little-endian int32 / float32 bytes.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class UTCDateTime(TypeDecorator):
    """A timezone-aware UTC datetime on every backend (SQLite keeps no zone: store naive UTC, read back as UTC)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        value = value.astimezone(timezone.utc)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Model(Base):
    __tablename__ = "models"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(512), unique=True)
    kind: Mapped[str] = mapped_column(String(16), default="hub")
    revision: Mapped[str | None] = mapped_column(String(128))
    author: Mapped[str | None] = mapped_column(String(256))
    license: Mapped[str | None] = mapped_column(String(256))
    num_parameters: Mapped[int | None] = mapped_column(BigInteger)
    pipeline_tag: Mapped[str | None] = mapped_column(String(128))
    library: Mapped[str | None] = mapped_column(String(128))
    tags: Mapped[list | None] = mapped_column(JSON)
    downloads: Mapped[int | None] = mapped_column(BigInteger)
    likes: Mapped[int | None] = mapped_column(BigInteger)
    gated: Mapped[str | None] = mapped_column(String(16))
    created_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_modified: Mapped[datetime | None] = mapped_column(UTCDateTime)
    base_model: Mapped[str | None] = mapped_column(String(512))
    fetched_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    #: the repo whose parameter count ``num_parameters`` is when it is not the model's own (a PEFT adapter's base
    #: model: :meth:`indexer.hub.HubClient.model_info`; migration 0016); None: its own, or none
    num_parameters_from: Mapped[str | None] = mapped_column(String(512))
    #: sha256 over the model's outcome blocks (:meth:`Store.model_digests`), kept by every write of its outcomes;
    #: None: no outcomes
    outcomes_digest: Mapped[str | None] = mapped_column(String(64))
    #: the identity rules (:func:`indexer.identity.rules_stamp`) the key was last resolved under; None: never
    identity_stamp: Mapped[str | None] = mapped_column(String(32))

    # The models without outcomes (a pulled index's, or metadata alone) have a partial index, ``ix_models_unmeasured``
    # on ``id`` where ``outcomes_digest IS NULL`` (migration 0009), so a query asks whether there is one in no time
    # (:meth:`Store.unmeasured_vectors`). It is created by the migration alone and not declared here: an Index with
    # a dialect's ``where`` makes SQLAlchemy import both dialects on every start (30-80 ms), and a plain index of the
    # digests cost the 32k-model ingest about 10% (random b-tree inserts); see UNDECLARED_INDEXES.


#: indexes the migrations create that the ORM tables do not declare (see :class:`Model`); the schema comparison
#: (:func:`indexer.store.sql_migrate.schema_diff`) leaves them out
UNDECLARED_INDEXES = frozenset({"ix_models_unmeasured"})


class ModelAlias(Base):
    """A name some source gave a model (:mod:`indexer.identity`) -> its one row; ``rule``: what mapped it
    (``as-given``, ``rule``, ``known``, ``user``, ``merged``; ``hub``: the Hub answered it with another id, a
    renamed repo's old id or an id in another case; ``case``: a Hub id in another case than the model's key)."""

    __tablename__ = "model_aliases"

    alias: Mapped[str] = mapped_column(String(512), primary_key=True)
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"))
    rule: Mapped[str] = mapped_column(String(16))

    __table_args__ = (Index("ix_model_aliases_model_id", "model_id"),)


class Benchmark(Base):
    __tablename__ = "benchmarks"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(512), unique=True)
    group: Mapped[str | None] = mapped_column(String(256))
    source_task: Mapped[str | None] = mapped_column(String(512))
    metric: Mapped[str | None] = mapped_column(String(128))
    num_fewshot: Mapped[int | None] = mapped_column(Integer)
    config: Mapped[dict | None] = mapped_column(JSON)


class Prompt(Base):
    __tablename__ = "prompts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    hash: Mapped[str] = mapped_column(String(64), unique=True)
    text: Mapped[str] = mapped_column(Text)


class BenchmarkPrompt(Base):
    __tablename__ = "benchmark_prompts"

    benchmark_id: Mapped[int] = mapped_column(ForeignKey("benchmarks.id", ondelete="CASCADE"), primary_key=True)
    prompt_id: Mapped[int] = mapped_column(ForeignKey("prompts.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
    source_prompt_id: Mapped[str | None] = mapped_column(String(512))

    __table_args__ = (Index("ix_benchmark_prompts_prompt_id", "prompt_id"),)


class Source(Base):
    __tablename__ = "sources"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(64))
    location: Mapped[str] = mapped_column(String(1024), unique=True)
    revision: Mapped[str | None] = mapped_column(String(128))
    seen_revision: Mapped[str | None] = mapped_column(String(128))
    checked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    ingested_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    n_outcomes: Mapped[int] = mapped_column(BigInteger, default=0)


class OutcomeBlock(Base):
    """One (source, model, benchmark): ``n`` cells as packed sorted int32 prompt ids + float32 scores."""

    __tablename__ = "outcomes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("sources.id", ondelete="CASCADE"))
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"))
    benchmark_id: Mapped[int] = mapped_column(ForeignKey("benchmarks.id", ondelete="CASCADE"))
    n: Mapped[int] = mapped_column(Integer)
    prompt_ids: Mapped[bytes] = mapped_column(LargeBinary)
    scores: Mapped[bytes] = mapped_column(LargeBinary)
    model_revision: Mapped[str | None] = mapped_column(String(128))
    digest: Mapped[str] = mapped_column(String(64))

    __table_args__ = (
        UniqueConstraint("source_id", "model_id", "benchmark_id", name="uq_outcomes_source_model_benchmark"),
        Index("ix_outcomes_model_id", "model_id"),
        Index("ix_outcomes_benchmark_id", "benchmark_id"),
    )


class Space(Base):
    __tablename__ = "spaces"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(64), unique=True)
    encoder: Mapped[str] = mapped_column(String(512))
    dim: Mapped[int] = mapped_column(Integer)
    lam: Mapped[float] = mapped_column(Float)
    eps: Mapped[float] = mapped_column(Float)
    method: Mapped[str] = mapped_column(String(64))
    params: Mapped[dict | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ModelVectorRow(Base):
    __tablename__ = "model_vectors"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    space_id: Mapped[int] = mapped_column(ForeignKey("spaces.id", ondelete="CASCADE"))
    model_id: Mapped[int] = mapped_column(ForeignKey("models.id", ondelete="CASCADE"))
    dim: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    n_prompts: Mapped[int] = mapped_column(Integer)
    benchmarks: Mapped[list | None] = mapped_column(JSON)
    accuracy: Mapped[dict | None] = mapped_column(JSON)
    #: outcome cells per benchmark as a pulled record carries them (migration 0014); None where the vector was built
    #: here (its outcomes count them) or its record carried none
    counts: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    inputs_digest: Mapped[str | None] = mapped_column(String(64))
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # the posterior of the model's scores: its coverage pattern (a key of space_patterns), lambda, s^2
    pattern: Mapped[str | None] = mapped_column(String(64))
    lam: Mapped[float | None] = mapped_column(Float)
    noise: Mapped[float | None] = mapped_column(Float)
    #: the outcomes digest (models.outcomes_digest) and the space prior's digest ("" without a prior) this vector
    #: was solved from, set when ``inputs_digest`` matched them on saving (None: it did not): a vector is current
    #: when both still equal the model's and the space's (:meth:`Store.stale_models`, a comparison in SQL)
    outcomes_digest: Mapped[str | None] = mapped_column(String(64))
    prior_digest: Mapped[str | None] = mapped_column(String(64))
    #: the digest of the models-collection point SQL implies for this row (``payload["digest"]``,
    #: :func:`indexer.sync.point_digests`); None when unknown: every write of its inputs (this row, the model's
    #: metadata or aliases) sets it None, and :func:`indexer.sync.check` / a push compute it again
    point_digest: Mapped[str | None] = mapped_column(String(32))

    __table_args__ = (UniqueConstraint("space_id", "model_id", name="uq_model_vectors_space_model"),
                      # the patterns a space's vectors use, without reading the rows (migration 0007)
                      Index("ix_model_vectors_pattern", "space_id", "pattern"))


class SpacePriorRow(Base):
    """The shrinkage target of a space with a ``'mean'`` prior (method ``auto-mean``): float64 packed."""

    __tablename__ = "space_priors"

    space_id: Mapped[int] = mapped_column(ForeignKey("spaces.id", ondelete="CASCADE"), primary_key=True)
    dim: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    n_models: Mapped[int] = mapped_column(Integer)
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: models solved toward this prior or removed since it was estimated (migration 0015; None: 0)
    n_changed: Mapped[int | None] = mapped_column(Integer, nullable=True)


class SpacePatternRow(Base):
    """The posterior factors one coverage pattern shares with its models (:class:`indexer.posterior.PatternPosterior`):
    float32 packed; ``V`` holds the ``rank`` eigenvectors with a non-zero eigenvalue (width x rank)."""

    __tablename__ = "space_patterns"

    space_id: Mapped[int] = mapped_column(ForeignKey("spaces.id", ondelete="CASCADE"), primary_key=True)
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    n: Mapped[int] = mapped_column(Integer)
    width: Mapped[int] = mapped_column(Integer)
    rank: Mapped[int] = mapped_column(Integer)
    free: Mapped[int] = mapped_column(Integer)
    mc_seen: Mapped[bool] = mapped_column(Boolean)
    free_seen: Mapped[bool] = mapped_column(Boolean)
    mu: Mapped[bytes] = mapped_column(LargeBinary)
    w: Mapped[bytes] = mapped_column(LargeBinary)
    V: Mapped[bytes] = mapped_column(LargeBinary)
    K: Mapped[bytes | None] = mapped_column(LargeBinary)
    Cinv: Mapped[bytes | None] = mapped_column(LargeBinary)
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class SpacePatternPromptsRow(Base):
    """The indexed prompts a coverage pattern's models were observed on, for a pulled space (migration 0012): its
    ``n`` prompts' sha256 text hashes, 32 raw bytes each, sorted and concatenated, and the sha256 of those bytes
    (``digest``: a search keeps the sets it read by it). A space built here has none (its outcomes tell which prompts
    each model was observed on)."""

    __tablename__ = "space_pattern_prompts"

    space_id: Mapped[int] = mapped_column(ForeignKey("spaces.id", ondelete="CASCADE"), primary_key=True)
    pattern: Mapped[str] = mapped_column(String(64), primary_key=True)
    n: Mapped[int] = mapped_column(Integer)
    prompts: Mapped[bytes] = mapped_column(LargeBinary)
    digest: Mapped[str] = mapped_column(String(64))


class SpaceCalibrationRow(Base):
    """A space's calibration map ``p = sigmoid(a + b score)`` (:class:`indexer.posterior.Calibration`)."""

    __tablename__ = "space_calibrations"

    space_id: Mapped[int] = mapped_column(ForeignKey("spaces.id", ondelete="CASCADE"), primary_key=True)
    a: Mapped[float] = mapped_column(Float)
    b: Mapped[float] = mapped_column(Float)
    n_cells: Mapped[int] = mapped_column(Integer)
    n_models: Mapped[int] = mapped_column(Integer)
    spread: Mapped[float] = mapped_column(Float)
    #: the level/deviation map's coefficients (None: the plain map of the raw score; migration 0006)
    level: Mapped[float | None] = mapped_column(Float, nullable=True)
    specific: Mapped[float | None] = mapped_column(Float, nullable=True)
    shared: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: the own deviation's weight where a model has no evidence near the query (None: ``specific``; migration 0008)
    uncovered: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: the bend of the map's logit, ``{"z": [...], "logit": [...]}`` as JSON text (None: none; migration 0010)
    knots: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: the largest lambda a model's interval uses (None: each model's own; migration 0011)
    lam_cap: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: the variance of a model's level between benchmarks, for intervals where it has no evidence (None: none;
    #: migration 0013)
    region_var: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: the version of the estimator that gave ``region_var`` (:data:`indexer.posterior.REGION_ESTIMATOR`; None: an
    #: older one, as every map stored before migration 0017, or a pulled map's publisher's)
    region_estimator: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: the benchmarks' groups no model links (:attr:`indexer.posterior.Calibration.links`), a JSON list of lists of
    #: names (None: one group; migration 0018)
    links: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: the mean model vector of each group of ``links`` (:attr:`indexer.posterior.Calibration.centres`), a JSON list
    #: of lists of numbers (None: without links, or a map stored before migration 0019)
    centres: Mapped[str | None] = mapped_column(Text, nullable=True)
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: models solved (calibrated by this map) or removed since it was fitted (migration 0015; None: 0)
    n_changed: Mapped[int | None] = mapped_column(Integer, nullable=True)


class BenchmarkVectorRow(Base):
    __tablename__ = "benchmark_vectors"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    space_id: Mapped[int] = mapped_column(ForeignKey("spaces.id", ondelete="CASCADE"))
    benchmark_id: Mapped[int] = mapped_column(ForeignKey("benchmarks.id", ondelete="CASCADE"))
    dim: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    n_prompts: Mapped[int] = mapped_column(Integer)
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (UniqueConstraint("space_id", "benchmark_id", name="uq_benchmark_vectors_space_benchmark"),)


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    status: Mapped[str] = mapped_column(String(16), default="running")
    pid: Mapped[int | None] = mapped_column(Integer)
    counts: Mapped[dict | None] = mapped_column(JSON)
    errors: Mapped[list | None] = mapped_column(JSON)
