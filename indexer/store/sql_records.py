"""Published records in the SQL store (mixed into :class:`indexer.store.sql.Store`): what ``taskspace publish``
reads beyond the vectors, and the one transaction ``taskspace pull`` writes (:mod:`indexer.publish`).

- ``model_benchmark_counts``: observed cells per (model, benchmark), summed over sources.
- ``import_spaces`` (:class:`ImportedSpace`): a pulled space's models, benchmarks, model vectors, pattern factors,
  calibration and benchmark vectors, all in one transaction (nothing is half-imported), and the space's *pulled*
  marker: a ``sources`` row of kind ``"pulled"`` at location ``pulled:<space key>`` (revision = the pulled commit or
  content digest, seen_revision = where it came from). No new table for the marker: it is a source that holds no
  outcomes. Its ``ingested_at`` is null until the pull has written the vector index too (``finish_pull``): a pull
  stopped between its transaction and the end of its index writes leaves it null (``unfinished_pull``), so
  ``taskspace check`` can say to run the pull again (the read-only space's prompts collection comes from the
  pulled files alone: SQL cannot rebuild or check it). Markers written before this rule have it set.
- ``pattern_prompts``: per coverage pattern of a pulled space, the indexed prompts (text hashes) its models were
  observed on, when the records carry them (``space_pattern_prompts``, migration 0012; a record set published
  before has none): what the coverage of a pulled model is computed from (:func:`indexer.query.observed_shares`),
  as the publisher computes it from its outcomes.
- Read-only: a pulled space is read-only while the database holds no outcomes (no raw results were ingested):
  ``save_model_vectors``, ``save_benchmark_vectors`` and ``delete_model_vectors`` raise
  :class:`~indexer.errors.ReadOnlyError` for it (``check_writable``), and the indexing pass leaves it alone
  (:mod:`indexer.pipeline`). Once outcomes are ingested, the pass solves the space from them like any other and the
  first vectors it saves drop the marker.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from sqlalchemy import delete, func, select, update

from ..errors import InputError, ReadOnlyError
from .sql_models import (Benchmark, BenchmarkPrompt, BenchmarkVectorRow, Model, ModelAlias, ModelVectorRow, OutcomeBlock,
                         Prompt, Source, Space, SpaceCalibrationRow, SpacePatternPromptsRow, SpacePatternRow, SpacePriorRow,
                         utcnow)
from .sql_types import MODEL_FIELDS, BenchmarkVector, ModelVector, chunks
from .sql_derived import _folded

PULLED_KIND = "pulled"


def pulled_location(space_key: str) -> str:
    return f"pulled:{space_key}"


@dataclass
class ImportedSpace:
    """One space of a pulled record set, validated (:mod:`indexer.publish`)."""

    spec: object  # indexer.space.SpaceSpec with encoder and dim
    origin: str  # hub:ORG/NAME@sha or a folder
    revision: str  # the commit sha or the files' digest
    models: list[dict] = field(default_factory=list)  # Store.upsert_models fields, with "key"
    vectors: list[ModelVector] = field(default_factory=list)
    patterns: list = field(default_factory=list)  # indexer.posterior.PatternPosterior
    calibration: object | None = None  # indexer.posterior.Calibration
    benchmarks: list[dict] = field(default_factory=list)  # name, group, source_task, metric, num_fewshot, config
    benchmark_vectors: list[BenchmarkVector] = field(default_factory=list)
    created_at: datetime | None = None
    aliases: dict[str, list[str]] = field(default_factory=dict)  # model key -> its names (model_aliases)
    prior: tuple | None = None  # (the space prior's vector, n_models): a folded query needs it (posterior.Calibration)
    #: pattern key -> the text hashes (hex) of the indexed prompts its models were observed on (None: not published)
    coverage: dict[str, list[str]] | None = None


def _digests(hashes: Sequence[str]) -> bytes:
    """The sorted sha256 hex hashes as 32 raw bytes each, concatenated (``space_pattern_prompts.prompts``)."""
    try:
        return b"".join(bytes.fromhex(h) for h in sorted(set(hashes)) if len(h) == 64)
    except ValueError as exc:
        raise InputError(f"a pattern's prompt hash is not hex: {exc}") from None


class RecordsMixin:
    def model_benchmark_counts(self, models: Sequence[str] | None = None) -> dict[tuple[str, str], int]:
        """(model key, benchmark) -> stored outcome cells, summed over sources."""
        q = (select(Model.key, Benchmark.name, func.sum(OutcomeBlock.n))
             .join(Model, Model.id == OutcomeBlock.model_id).join(Benchmark, Benchmark.id == OutcomeBlock.benchmark_id)
             .group_by(Model.key, Benchmark.name))
        with self._read() as conn:
            rows = conn.execute(q).all()
        want = None if models is None else set(models)
        return {(m, b): int(n) for m, b, n in rows if want is None or m in want}

    def model_provenance(self) -> dict[str, tuple[str | None, list[tuple[str, str | None]]]]:
        """model key -> (the model revision its outcomes name, if any; [(source location, source revision)])."""
        q = (select(Model.key, OutcomeBlock.model_revision, Source.location, Source.revision)
             .join(Model, Model.id == OutcomeBlock.model_id).join(Source, Source.id == OutcomeBlock.source_id)
             .distinct())
        with self._read() as conn:
            rows = conn.execute(q).all()
        out: dict[str, tuple[str | None, list]] = {}
        for key, mrev, loc, srev in sorted(rows, key=lambda r: (r[0], r[2], r[1] or "")):
            rev, sources = out.get(key, (None, []))
            if (loc, srev) not in sources:
                sources.append((loc, srev))
            out[key] = (rev or mrev, sources)
        return out

    def prompt_count(self) -> int:
        """How many prompts are stored."""
        with self._read() as conn:
            return int(conn.execute(select(func.count()).select_from(Prompt)).scalar() or 0)

    def has_outcomes(self) -> bool:
        with self._read() as conn:
            return conn.execute(select(OutcomeBlock.id).limit(1)).first() is not None

    def space_origin(self, space_id: int) -> str | None:
        """Where a pulled space came from (``hub:ORG/NAME@sha`` or a folder), None for a space built here."""
        key = self.get_space(space_id)
        from ..space import SpaceSpec

        src = self.get_source(pulled_location(SpaceSpec.of(key).key))
        return None if src is None else (src.seen_revision or "?")

    def unfinished_pull(self, space_id: int) -> str | None:
        """Where a pulled space came from when the pull that wrote its records stopped before it finished writing the
        vector index (its marker's ``ingested_at`` still null), else None."""
        from ..space import SpaceSpec

        src = self.get_source(pulled_location(SpaceSpec.of(self.get_space(space_id)).key))
        if src is None or src.kind != PULLED_KIND or src.ingested_at is not None:
            return None
        return src.seen_revision or "?"

    def finish_pull(self, space_id: int) -> None:
        """Mark the pull of a space finished: its records and its vector index are written (``ingested_at``)."""
        from ..space import SpaceSpec

        loc = pulled_location(SpaceSpec.of(self.get_space(space_id)).key)
        with self._write("marking the pull finished") as conn:
            conn.execute(update(Source).where(Source.location == loc, Source.kind == PULLED_KIND)
                         .values(ingested_at=utcnow()))

    def is_read_only(self, space_id: int) -> bool:
        """True for a pulled space while no raw results (outcomes) are in the database."""
        return self.space_origin(space_id) is not None and not self.has_outcomes()

    def check_writable(self, space_id: int) -> None:
        """:class:`ReadOnlyError` for a pulled space without raw results; drops the marker of a pulled space that
        raw results now cover (it is then built here like any other)."""
        origin = self.space_origin(space_id)
        if origin is None:
            return
        if not self.has_outcomes():
            from ..space import space_name

            raise ReadOnlyError(f"space {space_name(self.get_space(space_id))} was pulled from {origin} and is read-only "
                                "until raw results are ingested (`taskspace ingest` / `taskspace index --source ...`)")
        from ..space import SpaceSpec

        self.delete_source(pulled_location(SpaceSpec.of(self.get_space(space_id)).key))
        # the prior pulled with it (for folding queries, posterior.Calibration.fold) is the publisher's models' mean:
        # built here, the space estimates its own from the models solved here
        with self._write("dropping the pulled prior") as conn:
            conn.execute(delete(SpacePriorRow).where(SpacePriorRow.space_id == space_id))
            # and the pulled patterns' prompt sets: the models solved here have outcomes, which tell
            conn.execute(delete(SpacePatternPromptsRow).where(SpacePatternPromptsRow.space_id == space_id))

    @staticmethod
    def _drop_unused_benchmarks(conn, keep: set[int]) -> None:
        """Benchmarks a re-pull no longer brings (the publisher renamed or dropped them) and nothing here uses (no
        prompt, outcome or vector in any space) are removed; before, they stayed listed with 0 prompts and 0 models,
        and a search for one said to run `taskspace index`."""
        used = (select(BenchmarkPrompt.benchmark_id).union(select(OutcomeBlock.benchmark_id),
                                                           select(BenchmarkVectorRow.benchmark_id)))
        unused = [b for b in conn.execute(select(Benchmark.id).where(Benchmark.id.not_in(used))).scalars()
                  if b not in keep]
        for c in chunks(unused):
            conn.execute(delete(Benchmark).where(Benchmark.id.in_(c)))

    def pattern_prompt_digests(self, space_id: int, keys: Sequence[str]) -> dict[str, str]:
        """pattern key -> the digest of its observed prompt set (:meth:`pattern_prompts`), for those of ``keys`` SQL
        holds one of: a small read that tells whether a set read before is still the one stored."""
        keys = sorted({k for k in keys if k})
        out: dict[str, str] = {}
        with self._read() as conn:
            for c in chunks(keys):
                out.update(conn.execute(select(SpacePatternPromptsRow.pattern, SpacePatternPromptsRow.digest).where(
                    SpacePatternPromptsRow.space_id == space_id, SpacePatternPromptsRow.pattern.in_(c))).all())
        return out

    def pattern_prompts(self, space_id: int, keys: Sequence[str]) -> dict[str, tuple[str, frozenset[str]]]:
        """pattern key -> (digest, the text hashes (hex) of the indexed prompts its models were observed on), for
        those of ``keys`` SQL holds that set of (a pulled space whose records carried it; none for a space built
        here)."""
        out: dict[str, tuple[str, frozenset[str]]] = {}
        keys = sorted({k for k in keys if k})
        with self._read() as conn:
            for c in chunks(keys):
                q = select(SpacePatternPromptsRow.pattern, SpacePatternPromptsRow.digest,
                           SpacePatternPromptsRow.prompts).where(SpacePatternPromptsRow.space_id == space_id,
                                                                 SpacePatternPromptsRow.pattern.in_(c))
                for key, digest, blob in conn.execute(q):
                    blob = bytes(blob)
                    out[key] = (digest, frozenset(blob[i:i + 32].hex() for i in range(0, len(blob), 32)))
        return out

    def import_spaces(self, items: Sequence[ImportedSpace]) -> list[int]:
        """Write pulled spaces in one transaction (see the module docstring); returns their SQL ids. A space of the
        same key that was built here (has vectors and no pulled marker) is refused; a pulled one is replaced."""
        with self._write("pulling records") as conn:
            return [self._import_one(conn, item) for item in items]

    def _import_one(self, conn, item: ImportedSpace) -> int:
        spec = item.spec
        key = spec.key
        loc = pulled_location(key)
        f4 = lambda a: np.ascontiguousarray(a, dtype="<f4").tobytes()  # noqa: E731
        sid = conn.execute(select(Space.id).where(Space.key == key)).scalar()
        marker = conn.execute(select(Source.id).where(Source.location == loc)).scalar()
        if sid is not None and marker is None:
            has = conn.execute(select(ModelVectorRow.id).where(ModelVectorRow.space_id == sid).limit(1)).first()
            if has is not None:
                raise InputError(f"space {spec.name} already holds vectors computed here from raw results, which a "
                                 "pull does not replace: pull into another TASKSPACE_HOME, or first take this home's "
                                 "results out (`taskspace sources remove` and `taskspace sources drop` each source, "
                                 "then `taskspace index`)", item=item.origin)
        if sid is None:
            conn.execute(Space.__table__.insert().values(
                key=key, encoder=spec.encoder, dim=int(spec.dim), lam=float(spec.lam), eps=float(spec.eps),
                method=spec.method, params=dict(spec.params), created_at=item.created_at or utcnow()))
            sid = conn.execute(select(Space.id).where(Space.key == key)).scalar_one()
        else:  # a re-pull replaces the pulled records
            for table in (ModelVectorRow, SpacePatternRow, SpaceCalibrationRow, BenchmarkVectorRow, SpacePriorRow,
                          SpacePatternPromptsRow):
                conn.execute(delete(table).where(table.space_id == sid))
        # benchmarks: new names are created; existing ones keep their metadata
        have_b = self._ids_by(conn, Benchmark.name, Benchmark.id, [b["name"] for b in item.benchmarks])
        new_b = [dict(name=b["name"], group=b.get("group"), source_task=b.get("source_task"),
                      metric=b.get("metric"), num_fewshot=b.get("num_fewshot"), config=b.get("config") or {})
                 for b in item.benchmarks if b["name"] not in have_b]
        for c in chunks(new_b, 500):
            conn.execute(Benchmark.__table__.insert(), c)
        bids = self._ids_by(conn, Benchmark.name, Benchmark.id, [b["name"] for b in item.benchmarks])
        # models: inserted, or their metadata updated
        rows = {m["key"]: {k: v for k, v in m.items() if k != "key"} for m in item.models}
        mids = self._ids_by(conn, Model.key, Model.id, list(rows))
        inserts = [{f: None for f in MODEL_FIELDS} | v | {"key": k} for k, v in rows.items() if k not in mids]
        for c in chunks(inserts, 1000):
            conn.execute(Model.__table__.insert(), c)
        for k, v in rows.items():  # a field the records leave empty keeps what this home knows (its Hub metadata)
            known = {f: x for f, x in v.items() if x is not None and x != []}
            if "num_parameters" in known:  # whose count it is goes with the count (null: the repo's own), so a home
                known["num_parameters_from"] = v.get("num_parameters_from")  # that sized it by its base says so no more
            if k in mids and known:
                conn.execute(update(Model).where(Model.id == mids[k]).values(**known))
        mids = self._ids_by(conn, Model.key, Model.id, list(rows))
        # every name the publisher's sources gave a model (a name already taken here keeps its model)
        alias_rows = {a: {"alias": a, "model_id": mids[k], "rule": "pulled"} for k in rows
                      for a in (item.aliases.get(k) or [k])}
        self._insert_ignore(conn, ModelAlias.__table__, [alias_rows[a] for a in sorted(alias_rows)], ["alias"])
        self._forget_point_digests(conn, mids.values())  # metadata and aliases in their index payloads
        vec_rows = [dict(space_id=sid, model_id=mids[v.model], dim=int(spec.dim), vector=f4(v.vector),
                         n_prompts=int(v.n_prompts), benchmarks=list(v.benchmarks), accuracy=dict(v.accuracy),
                         counts=dict(v.counts) if v.counts else None, inputs_digest=v.inputs_digest, computed_at=v.computed_at or utcnow(), pattern=v.pattern,
                         lam=v.lam, noise=v.noise) for v in item.vectors]
        for c in chunks(vec_rows, 500):
            conn.execute(ModelVectorRow.__table__.insert(), c)
        pat_rows = []
        for p in item.patterns:
            V = np.asarray(p.V)
            pat_rows.append(dict(space_id=sid, key=p.key, n=int(p.n), width=int(V.shape[0]), rank=int(V.shape[1]),
                                 free=0 if p.K is None else int(np.asarray(p.K).shape[1]),
                                 mc_seen=bool(p.formats[0]), free_seen=bool(p.formats[1]), mu=f4(p.mu), w=f4(p.w),
                                 V=f4(V), K=None if p.K is None else f4(p.K),
                                 Cinv=None if p.Cinv is None else f4(p.Cinv), computed_at=utcnow()))
        for c in chunks(pat_rows, 20):
            conn.execute(SpacePatternRow.__table__.insert(), c)
        cov_rows = [dict(space_id=sid, pattern=k, prompts=_digests(hs))
                    for k, hs in sorted((getattr(item, "coverage", None) or {}).items())]
        cov_rows = [dict(r, n=len(r["prompts"]) // 32, digest=hashlib.sha256(r["prompts"]).hexdigest()) for r in cov_rows]
        for c in chunks(cov_rows, 20):
            conn.execute(SpacePatternPromptsRow.__table__.insert(), c)
        prior = getattr(item, "prior", None)
        if prior is not None:  # what a folded query needs (indexer.posterior.Calibration.fold)
            u = np.asarray(prior[0], dtype="<f8")
            conn.execute(SpacePriorRow.__table__.insert().values(
                space_id=sid, dim=int(u.shape[0]), vector=u.tobytes(), n_models=int(prior[1]), computed_at=utcnow()))
        cal = item.calibration
        if cal is not None:
            conn.execute(SpaceCalibrationRow.__table__.insert().values(
                space_id=sid, a=float(cal.a), b=float(cal.b), n_cells=int(cal.n_cells), n_models=int(cal.n_models),
                spread=float(cal.spread), computed_at=utcnow(), **_folded(cal)))
        bv_rows = [dict(space_id=sid, benchmark_id=bids[b.benchmark], dim=int(spec.dim), vector=f4(b.vector),
                        n_prompts=int(b.n_prompts), computed_at=b.computed_at or utcnow())
                   for b in item.benchmark_vectors]
        for c in chunks(bv_rows, 500):
            conn.execute(BenchmarkVectorRow.__table__.insert(), c)
        self._drop_unused_benchmarks(conn, set(bids.values()))
        values = dict(kind=PULLED_KIND, revision=item.revision[:128], seen_revision=item.origin[:128],
                      checked_at=utcnow(), ingested_at=None, n_outcomes=0)  # finish_pull sets it
        if marker is None:
            conn.execute(Source.__table__.insert().values(location=loc, **values))
        else:
            conn.execute(update(Source).where(Source.id == marker).values(**values))
        return sid

    # -- removing a space (``taskspace spaces drop``, :func:`indexer.spaces.drop_space`) -----------------------

    #: the tables that hold a space's rows (each keyed by ``space_id``), in the order they are deleted
    SPACE_TABLES = (ModelVectorRow, BenchmarkVectorRow, SpacePatternPromptsRow, SpacePatternRow, SpaceCalibrationRow,
                    SpacePriorRow)

    def space_rows(self, space_id: int) -> dict[str, int]:
        """How many rows of each table :meth:`delete_space` would delete for the space (``spaces`` itself: 1; the
        pulled marker in ``sources``: 0 or 1)."""
        self.get_space(space_id)  # NotFoundError for an unknown id
        with self._read() as conn:
            key = conn.execute(select(Space.key).where(Space.id == space_id)).scalar_one()
            out = {t.__tablename__: conn.execute(select(func.count()).select_from(t)
                                                 .where(t.space_id == space_id)).scalar_one()
                   for t in self.SPACE_TABLES}
            out["sources"] = conn.execute(select(func.count()).select_from(Source)
                                          .where(Source.location == pulled_location(key))).scalar_one()
        out["spaces"] = 1
        return out

    def delete_space(self, space_id: int) -> dict[str, int]:
        """Delete a space and everything SQL holds of it, in one transaction: its model and benchmark vectors, pattern
        factors, calibration map and prior, its pulled marker, the ``spaces`` row; then the models and benchmarks a
        pulled space brought that nothing else uses any more (no outcomes, prompts or vector in another space).
        Outcomes, prompts and models with results stay. Returns the rows deleted per table; a space that is not
        there (deleted already) deletes nothing: ``{}``."""
        with self._write("dropping an embedding space") as conn:
            row = conn.execute(select(Space).where(Space.id == space_id)).scalar()
            if row is None:
                return {}
            loc = pulled_location(row.key)
            out = {t.__tablename__: conn.execute(delete(t).where(t.space_id == space_id)).rowcount
                   for t in self.SPACE_TABLES}
            out["sources"] = conn.execute(delete(Source).where(Source.location == loc,
                                                               Source.kind == PULLED_KIND)).rowcount
            out["spaces"] = conn.execute(delete(Space).where(Space.id == space_id)).rowcount
            if out["sources"]:  # the models a pull brought and nothing holds now (their aliases go with them)
                used = select(OutcomeBlock.model_id).union(select(ModelVectorRow.model_id))
                gone = list(conn.execute(select(Model.id).where(Model.id.not_in(used))).scalars())
                for c in chunks(gone):
                    conn.execute(delete(ModelAlias).where(ModelAlias.model_id.in_(c)))
                    conn.execute(delete(Model).where(Model.id.in_(c)))
                out["models"] = len(gone)
                nb = conn.execute(select(func.count()).select_from(Benchmark)).scalar_one()
                self._drop_unused_benchmarks(conn, set())
                out["benchmarks"] = nb - conn.execute(select(func.count()).select_from(Benchmark)).scalar_one()
        return out
