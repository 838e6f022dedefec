"""Bulk reads of the SQL store (mixed into :class:`indexer.store.sql.Store`): the outcome matrix, prompt
texts, models, benchmarks and the per-model inputs digest."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from sqlalchemy import exists, func, select, text

from ..errors import NotFoundError, noun
from .sql_models import Benchmark, BenchmarkPrompt, Model, ModelAlias, ModelVectorRow, OutcomeBlock, Prompt, Source
from .sql_types import (MODEL_FIELDS, BenchmarkRecord, ModelRecord, SourceRecord, StoredOutcomes, chunks,
                        driver_rows_in, rows_for_keys)


def model_record(m: Model) -> ModelRecord:
    return ModelRecord(key=m.key, **{f: getattr(m, f) for f in MODEL_FIELDS})


#: the columns of a ModelRecord, selected as plain rows (no ORM object per model: 32k models read in a tenth)
_MODEL_COLUMNS = [Model.key, *(getattr(Model, f) for f in MODEL_FIELDS)]


def source_record(s: Source) -> SourceRecord:
    return SourceRecord(s.id, s.kind, s.location, s.revision, s.seen_revision, s.checked_at, s.ingested_at, s.n_outcomes)


def _outcome_digests(rows) -> dict:
    """``{model: sha256}`` of rows ``(model, source location, benchmark name, block digest)``."""
    parts: dict = {}
    for key, loc, bench, digest in rows:
        parts.setdefault(key, []).append(f"{loc}\x1f{bench}\x1f{digest}")
    return {k: hashlib.sha256("\x1e".join(sorted(v)).encode()).hexdigest() for k, v in sorted(parts.items())}


#: from how many models :meth:`ReadMixin.outcome_blocks` may read the blocks without a key list (when they are also
#: at least half of the models SQL holds)
BLOCKS_WHOLE_TABLE = 2000


class ReadMixin:
    def _filter_ids(self, conn, models, benchmarks):
        """Model and benchmark id maps (id -> name), restricted to the given names; unknown names raise."""
        mq, bq = select(Model.id, Model.key), select(Benchmark.id, Benchmark.name)
        mmap = bmap = None
        if models is not None:
            models = list(dict.fromkeys(models))
            mmap = {}
            for c in chunks(models):
                mmap.update(conn.execute(mq.where(Model.key.in_(c))).all())
            missing = set(models) - set(mmap.values())
            if missing:
                raise NotFoundError(f"unknown {noun(len(missing), 'model')}: {', '.join(sorted(missing)[:10])}; `taskspace models` lists the stored ones")
        if benchmarks is not None:
            benchmarks = list(dict.fromkeys(benchmarks))
            bmap = dict(conn.execute(bq.where(Benchmark.name.in_(benchmarks))).all())
            missing = set(benchmarks) - set(bmap.values())
            if missing:
                raise NotFoundError(f"unknown {noun(len(missing), 'benchmark')}: {', '.join(sorted(missing)[:10])}; `taskspace benchmarks` lists them")
        else:
            bmap = dict(conn.execute(bq).all())
        return mmap, bmap

    def load_outcomes(self, models: Sequence[str] | None = None, benchmarks: Sequence[str] | None = None) -> StoredOutcomes:
        """All stored outcomes as a dense (M, N) float32 matrix with NaN = not observed (see the module doc)."""
        with self._read() as conn:
            mmap, bmap = self._filter_ids(conn, models, benchmarks)
            q = select(OutcomeBlock.model_id, OutcomeBlock.benchmark_id, OutcomeBlock.prompt_ids, OutcomeBlock.scores)
            if benchmarks is not None:
                q = q.where(OutcomeBlock.benchmark_id.in_(list(bmap)))
            blocks = []
            if mmap is None:
                blocks = conn.execute(q).all()
            else:
                for c in chunks(list(mmap)):
                    blocks.extend(conn.execute(q.where(OutcomeBlock.model_id.in_(c))).all())
            if mmap is None:
                used = {b[0] for b in blocks}
                mmap = {}
                for c in chunks(sorted(used)):
                    mmap.update(conn.execute(select(Model.id, Model.key).where(Model.id.in_(c))).all())
            # membership of the selected benchmarks: (benchmark name, position) orders the columns
            mq = select(BenchmarkPrompt.prompt_id, BenchmarkPrompt.benchmark_id, BenchmarkPrompt.position)
            if benchmarks is not None:
                mq = mq.where(BenchmarkPrompt.benchmark_id.in_(list(bmap)))
            member = conn.execute(mq).all()
            decoded = [(m, b, np.frombuffer(p, dtype="<i4"), np.frombuffer(s, dtype="<f4")) for m, b, p, s in blocks]
            all_ids = np.unique(np.concatenate([d[2] for d in decoded])) if decoded else np.zeros(0, np.int64)
            hashes = {}
            for c in chunks(all_ids.tolist()):
                hashes.update(conn.execute(select(Prompt.id, Prompt.hash).where(Prompt.id.in_(c))).all())
        # column order: each prompt's first selected benchmark by name, then its position there
        bname_rank = {bid: r for r, bid in enumerate(sorted(bmap, key=bmap.get))}
        best: dict[int, tuple[int, int, int]] = {}
        for pid, bid, pos in member:
            key = (bname_rank[bid], pos, bid)
            if pid not in best or key < best[pid]:
                best[pid] = key
        observed = set(all_ids.tolist())
        cols = sorted((p for p in best if p in observed), key=best.__getitem__)
        col_ids = np.asarray(cols, dtype=np.int64)
        col_of_sorted = np.empty(len(all_ids), dtype=np.int64)
        col_of_sorted[np.searchsorted(all_ids, col_ids)] = np.arange(len(col_ids))
        model_keys = sorted(mmap.values()) if models is None else list(dict.fromkeys(models))
        index = {k: r for r, k in enumerate(model_keys)}
        row = {mid: index[k] for mid, k in mmap.items()}
        S = np.full((len(model_keys), len(col_ids)), np.nan, dtype=np.float32)
        counts: dict[int, np.ndarray] = {}  # rows observed more than once (several sources): running mean
        for mid, _bid, pids, sc in decoded:
            r = row[mid]
            c = col_of_sorted[np.searchsorted(all_ids, pids)]
            cur = S[r, c]
            seen = ~np.isnan(cur)
            if not seen.any():
                S[r, c] = sc
                continue
            cnt = counts.get(r)
            if cnt is None:
                cnt = counts[r] = (~np.isnan(S[r])).astype(np.uint32)
            k = cnt[c] + 1
            S[r, c] = np.where(seen, cur + (sc - cur) / k, sc)
            cnt[c] = k
        names = [bmap[best[p][2]] for p in cols]
        return StoredOutcomes(col_ids, [hashes[p] for p in cols], model_keys, S, names)

    def outcome_blocks(self, models: Sequence[str], benchmarks: Sequence[str] | None = None) -> list[tuple]:
        """Every stored outcome block of these models (of these benchmarks): ``(model key, benchmark, prompt ids
        (int64, n), scores (float32, n))``, one per (source, model, benchmark). A few models' evidence reads this,
        not the whole matrix. From :data:`BLOCKS_WHOLE_TABLE` models on, when they are at least half of the models
        SQL holds, the blocks are read without a key list and kept to those models (the same blocks, in another
        order): a model page's every-model rows ask for every model, and 32,823 keys in IN-list chunks took 0.44-0.54 s
        of CPU where the table took 0.31-0.33 s (docs/BENCHMARKS.md, "A one-shot page: the outcome blocks")."""
        # ``benchmark_id + 0``: the blocks are reached from the models (their index), never from a benchmark's, which
        # are every model's at Hub scale: SQLite's planner (no statistics) started there, 48 ms against 1.4 ms for
        # 80 models' blocks of two benchmarks at 32k models
        q = (select(Model.key, Benchmark.name, OutcomeBlock.prompt_ids, OutcomeBlock.scores)
             .join(Model, Model.id == OutcomeBlock.model_id)
             .join(Benchmark, Benchmark.id == OutcomeBlock.benchmark_id + 0))
        if benchmarks is not None:
            q = q.where(Benchmark.name.in_(list(benchmarks)))
        keys = list(dict.fromkeys(models))
        with self._read() as conn:
            if (len(keys) >= BLOCKS_WHOLE_TABLE
                    and 2 * len(keys) >= conn.execute(select(func.count()).select_from(Model)).scalar_one()):
                want = set(keys)
                rows = [r for r in rows_for_keys(conn, q, Model.key, None) if r[0] in want]
            else:
                rows = rows_for_keys(conn, q, Model.key, keys)
        return [(k, b, np.frombuffer(p, dtype="<i4").astype(np.int64), np.frombuffer(s, dtype="<f4")) for k, b, p, s in rows]

    def measured_models(self, models: Sequence[str]) -> set[str]:
        """Those of these model keys SQL holds outcomes of (stored outcomes digest; a pulled index holds none)."""
        q = select(Model.key).where(Model.outcomes_digest.is_not(None))
        with self._read() as conn:
            return {k for (k,) in rows_for_keys(conn, q, Model.key, list(models))}

    def unmeasured_vectors(self, space_id: int) -> bool:
        """Whether a model with a vector in this space has no outcomes in SQL (a pulled index's models: what they
        were measured on cannot be told here). Read through the partial index of the unmeasured models (0009), so
        it costs nothing where every model was measured."""
        v = ModelVectorRow.__table__.c
        inner = exists().where(v.space_id == space_id, v.model_id == Model.id)
        q = select(exists().where(Model.outcomes_digest.is_(None), inner))
        with self._read() as conn:
            return bool(conn.execute(q).scalar())

    def prompt_texts(self, prompt_ids: Sequence[int]) -> list[str]:
        """Texts of the given prompt ids, in the same order (NotFoundError for an unknown id)."""
        return self._prompt_column(prompt_ids, Prompt.text)

    def prompt_hashes(self, prompt_ids: Sequence[int]) -> list[str]:
        """Content hashes of the given prompt ids, in the same order (NotFoundError for an unknown id)."""
        return self._prompt_column(prompt_ids, Prompt.hash)

    def _prompt_column(self, prompt_ids: Sequence[int], column) -> list:
        ids = [int(i) for i in prompt_ids]
        out: dict[int, object] = {}
        with self._read() as conn:
            for c in chunks(sorted(set(ids))):
                out.update(conn.execute(select(Prompt.id, column).where(Prompt.id.in_(c))).all())
        missing = [i for i in ids if i not in out]
        if missing:
            raise NotFoundError(f"unknown prompt {noun(len(missing), 'id')}: {missing[:10]}")
        return [out[i] for i in ids]

    def prompt_ids(self, hashes: Sequence[str]) -> dict[str, int]:
        """Prompt ids of the given content hashes (unknown hashes are left out)."""
        out: dict[str, int] = {}
        with self._read() as conn:
            for c in chunks(list(dict.fromkeys(hashes))):
                out.update(conn.execute(select(Prompt.hash, Prompt.id).where(Prompt.hash.in_(c))).all())
        return out

    def list_models(self, kind: str | None = None, keys: Sequence[str] | None = None) -> list[ModelRecord]:
        """Every model (of ``kind``), or only those with these ``keys`` (unknown keys are left out)."""
        q = select(*_MODEL_COLUMNS).order_by(Model.key)
        if kind is not None:
            q = q.where(Model.kind == kind)
        with self._read() as conn:
            rows = rows_for_keys(conn, q, Model.key, keys)
        if keys is not None:
            rows.sort(key=lambda r: r[0])
        return [ModelRecord(*r) for r in rows]

    def models_without_metadata(self, fetched_before=None) -> list[str]:
        """Keys of the models that hold results (outcomes) and whose Hub metadata was never fetched (``fetched_at``
        null: the fetch failed, or the pass that stored them was offline), sorted: an ingest asks the Hub again.
        ``fetched_before`` (a UTC datetime): also those whose metadata was fetched before it (stale: a licence,
        size or gate changed on the Hub since), after the never-fetched ones, oldest first."""
        has_results = exists().where(OutcomeBlock.model_id == Model.id)
        q = select(Model.key).where(Model.fetched_at.is_(None), has_results).order_by(Model.key)
        with self._read() as conn:
            keys = [k for (k,) in conn.execute(q).all()]
            if fetched_before is not None:
                q = (select(Model.key).where(Model.fetched_at < fetched_before, has_results)
                     .order_by(Model.fetched_at, Model.key))
                keys += [k for (k,) in conn.execute(q).all()]
        return keys

    def resolve_aliases(self, names: Sequence[str]) -> dict[str, str]:
        """name -> the key of the model row it is an alias of (names no source used are left out)."""
        q = self.engine.dialect.identifier_preparer.quote
        head = (f"SELECT a.{q('alias')}, m.{q('key')} FROM {q(ModelAlias.__tablename__)} a "  # 32k names of a Hub-scale
                f"JOIN {q(Model.__tablename__)} m ON m.id = a.model_id WHERE a.{q('alias')} IN ")  # source: to the driver
        with self._read() as conn:
            return dict(driver_rows_in(conn, head, names))

    def aliases_by_model(self, models: Sequence[str] | None = None) -> dict[str, list[str]]:
        """model key -> every name stored for it (its key included), sorted."""
        q = select(Model.key, ModelAlias.alias).join(Model, Model.id == ModelAlias.model_id)
        out: dict[str, list[str]] = {}
        with self._read() as conn:
            for key, alias in rows_for_keys(conn, q, Model.key, None if models is None else list(models)):
                out.setdefault(key, []).append(alias)
        return {k: sorted(v) for k, v in out.items()}

    def model_names(self) -> list[tuple[str, str]]:
        """``(key, name)`` of every model: its key, and each name stored for it (its aliases), read straight from the
        driver. What the lookup of a name that is no key reads (:func:`indexer.find._resolve_models`: its case-folded
        match, its "did you mean"); before, it read :meth:`list_models`' whole records and :meth:`aliases_by_model`,
        0.39 s of the 0.6 s an unknown id took on 32,823 models."""
        q = self.engine.dialect.identifier_preparer.quote
        key, models, aliases = q("key"), q(Model.__tablename__), q(ModelAlias.__tablename__)
        with self._read() as conn:
            conn = conn.connection() if hasattr(conn, "get_bind") else conn
            res = conn.exec_driver_sql(f"SELECT {key}, {key} FROM {models} UNION ALL "
                                       f"SELECT m.{key}, a.{q('alias')} FROM {aliases} a JOIN {models} m ON m.id = a.model_id")
            try:  # the driver's rows, plain tuples: SQLAlchemy's Row objects cost three times the read (65k rows)
                return res.cursor.fetchall()
            finally:
                res.close()

    def aliases_of(self, key: str) -> list[str]:
        return self.aliases_by_model([key]).get(key, [])

    def get_model(self, key: str) -> ModelRecord | None:
        with self._read() as conn:
            m = conn.execute(select(Model).where(Model.key == key)).scalar()
            return model_record(m) if m is not None else None

    def list_benchmarks(self) -> list[BenchmarkRecord]:
        n = (select(BenchmarkPrompt.benchmark_id, func.count().label("n")).group_by(BenchmarkPrompt.benchmark_id).subquery())
        q = select(Benchmark, func.coalesce(n.c.n, 0)).outerjoin(n, n.c.benchmark_id == Benchmark.id).order_by(Benchmark.name)
        with self._read() as conn:
            return [BenchmarkRecord(b.name, b.group, b.source_task, b.metric, b.num_fewshot, dict(b.config or {}), int(k))
                    for b, k in conn.execute(q).all()]

    def benchmark_model_counts(self) -> dict[str, int]:
        """Benchmark name -> how many distinct models have outcomes on it."""
        q = (select(Benchmark.name, func.count(func.distinct(OutcomeBlock.model_id)))
             .join(OutcomeBlock, OutcomeBlock.benchmark_id == Benchmark.id).group_by(Benchmark.name))
        with self._read() as conn:
            return {name: int(n) for name, n in conn.execute(q).all()}

    def benchmark_prompts(self, name: str) -> list[int]:
        """Prompt ids of a benchmark in position order."""
        with self._read() as conn:
            bid = conn.execute(select(Benchmark.id).where(Benchmark.name == name)).scalar()
            if bid is None:
                raise NotFoundError(f"unknown benchmark {name!r}; `taskspace benchmarks` lists them")
            return list(conn.execute(select(BenchmarkPrompt.prompt_id).where(BenchmarkPrompt.benchmark_id == bid)
                                     .order_by(BenchmarkPrompt.position)).scalars())

    def model_digests(self, models: Sequence[str] | None = None) -> dict[str, str]:
        """Hex sha256 per model over its stored outcome blocks; changes iff that model's outcomes changed. Read from
        ``models.outcomes_digest``, which every write of outcome blocks keeps (:meth:`_refresh_outcome_digests`):
        one short row per model, not one per block."""
        q = select(Model.key, Model.outcomes_digest).where(Model.outcomes_digest.is_not(None))
        with self._read() as conn:
            rows = rows_for_keys(conn, q, Model.key, models)
        return dict(sorted(rows))

    def models_with_outcomes(self) -> int:
        """How many models have outcomes (the keys of :meth:`model_digests`, counted in SQL)."""
        with self._read() as conn:
            return int(conn.execute(select(func.count()).select_from(Model)
                                    .where(Model.outcomes_digest.is_not(None))).scalar())

    def computed_model_digests(self, models: Sequence[str] | None = None) -> dict[str, str]:
        """:meth:`model_digests` computed from the outcome blocks themselves (what the stored column must equal)."""
        q = (select(Model.key, Source.location, Benchmark.name, OutcomeBlock.digest)
             .join(Model, Model.id == OutcomeBlock.model_id).join(Source, Source.id == OutcomeBlock.source_id)
             .join(Benchmark, Benchmark.id == OutcomeBlock.benchmark_id))
        with self._read() as conn:
            rows = rows_for_keys(conn, q, Model.key, models)
        return _outcome_digests(rows)

    @staticmethod
    def _refresh_outcome_digests(conn, model_ids, fresh: tuple[int, list] | None = None) -> None:
        """Recompute ``models.outcomes_digest`` of these models from their outcome blocks, inside the write
        transaction that changed them (None for a model left without outcomes). ``fresh``: ``(source id, rows)``,
        the blocks that transaction just wrote for one source as rows ``(model id, location, benchmark, digest)``:
        taken as given, only the blocks of the other sources are read."""
        ids = sorted(set(int(i) for i in model_ids))
        if not ids:
            return
        q = (select(OutcomeBlock.model_id, Source.location, Benchmark.name, OutcomeBlock.digest)
             .join(Source, Source.id == OutcomeBlock.source_id).join(Benchmark, Benchmark.id == OutcomeBlock.benchmark_id))
        if fresh is None:
            rows = rows_for_keys(conn, q, OutcomeBlock.model_id, ids)
        else:  # the other sources' blocks of the models the source holds (a semi-join: no 32k-long IN-lists) ...
            sid, new_rows = fresh
            q = q.where(OutcomeBlock.source_id != sid)
            core = conn.connection() if hasattr(conn, "get_bind") else conn
            rows = core.execute(q.where(OutcomeBlock.model_id.in_(
                select(OutcomeBlock.model_id).where(OutcomeBlock.source_id == sid)))).all()
            held = {r[0] for r in new_rows}  # ... and of those it held before and holds no more
            rows += rows_for_keys(conn, q, OutcomeBlock.model_id, [i for i in ids if i not in held]) if set(ids) - held else []
            rows += list(new_rows)
        digests = _outcome_digests(rows)
        raw = conn.connection() if hasattr(conn, "get_bind") else conn
        mark = "?" if raw.dialect.paramstyle == "qmark" else "%s"
        sql = f"UPDATE {Model.__tablename__} SET outcomes_digest = {mark} WHERE id = {mark}"
        for c in chunks(ids, 5000):
            raw.exec_driver_sql(sql, [(digests.get(i), i) for i in c])

    def database_size(self) -> int:
        """Bytes on disk: the SQLite file (pages in use) or the PostgreSQL tables + indexes of the current schema."""
        with self._read() as conn:
            if self.dialect == "sqlite":
                pages = conn.execute(text("pragma page_count")).scalar()
                free = conn.execute(text("pragma freelist_count")).scalar()
                return int((pages - free) * conn.execute(text("pragma page_size")).scalar())
            return int(conn.execute(text(
                "select coalesce(sum(pg_total_relation_size(c.oid)), 0) from pg_class c "
                "join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relkind = 'r'"
            )).scalar())

    def counts(self) -> dict:
        """Rows per table plus the number of stored outcome cells."""
        from .sql_models import Base

        out = {}
        with self._read() as conn:
            for name, table in Base.metadata.tables.items():
                out[name] = conn.execute(select(func.count()).select_from(table)).scalar()
            out["outcome_cells"] = conn.execute(select(func.coalesce(func.sum(OutcomeBlock.n), 0))).scalar()
        return out
