"""Ingesting a :class:`~indexer.records.SourceBatch` (mixed into :class:`indexer.store.sql.Store`): one
transaction per source; prompts by content hash; outcomes packed per (source, model, benchmark)."""

from __future__ import annotations

import hashlib
import math

import numpy as np
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.orm import Session

from ..errors import InputError, StoreError
from ..records import SourceBatch, name_problem, prompt_hash, text_problem
from .sql_models import Benchmark, BenchmarkPrompt, Model, OutcomeBlock, Prompt, Source, utcnow
from .sql_types import IngestResult, chunks, looks_like_repo_id


def _pack(ids: np.ndarray, scores: np.ndarray) -> tuple[bytes, bytes, str]:
    a = np.ascontiguousarray(ids, dtype="<i4").tobytes()
    b = np.ascontiguousarray(scores, dtype="<f4").tobytes()
    return a, b, hashlib.sha256(a + b).hexdigest()


def _check_names(o, location: str, h: str) -> None:
    """Model keys and benchmark names must be non-empty and fit their columns (checked once per pair)."""
    item = f"prompt {o.prompt_id or h[:12]}"
    for what, value, limit in (("model", o.model, 512), ("benchmark", o.benchmark, 512), ("model revision", o.revision, 128)):
        if what != "model revision" and (not isinstance(value, str) or not value.strip()):
            raise InputError(f"an outcome without a {what} name in {location}", item=item)
        if value is not None and name_problem(value):  # the same rule on SQLite and PostgreSQL (which refuses NUL)
            raise InputError(f"{what} name {value[:60]!r} {name_problem(value)} in {location}", item=item)
        if value is not None and len(value) > limit:
            raise InputError(f"{what} {value[:60]!r}... is longer than {limit} characters in {location}", item=item)


class IngestMixin:

    def ingest(self, batch: SourceBatch) -> IngestResult:
        """Store one source whole or not at all (see the module docstring)."""
        src = batch.source
        if not src.location or not src.kind:
            raise InputError("a source needs a kind and a location", item=repr(src))
        if len(src.location) > 1024 or len(src.kind) > 64 or len(src.revision or "") > 128:
            raise InputError("source location (1024), kind (64) or revision (128 characters) too long", item=src.location[:200])
        if src.revision is not None:  # cheap early exit; re-checked inside the write transaction
            known = self.get_source(src.location)
            if known is not None and known.revision == src.revision:
                return IngestResult(0, 0, 0, skipped=True, source_id=known.id)
        texts: dict[str, str] = {}  # text -> hash
        cells: dict[tuple[str, str], tuple[list[str], list[float]]] = {}
        revisions: dict[tuple[str, str], str] = {}
        order: dict[str, dict[str, str | None]] = {}  # benchmark -> prompt hash -> source prompt id (first seen)
        fp = hashlib.sha256() if src.revision is None else None
        for o in batch.iter_outcomes():  # Outcome rows and/or the columnar table
            h = texts.get(o.text)
            if h is None:
                bad = text_problem(o.text)  # the same rule on SQLite and PostgreSQL (which refuses NUL)
                if bad:
                    raise InputError(f"{bad} in {src.location}", item=f"{o.model} / {o.benchmark} / {o.prompt_id}")
                h = texts[o.text] = prompt_hash(o.text)
            try:
                s = float(o.score)
            except (TypeError, ValueError):
                s = math.nan
            if not (0.0 <= s <= 1.0):  # also rejects NaN
                raise InputError(f"score {o.score!r} is not in [0, 1] in {src.location}", item=f"{o.model} / {o.benchmark} / {o.prompt_id or h[:12]}")
            key = (o.model, o.benchmark)
            c = cells.get(key)
            if c is None:
                _check_names(o, src.location, h)
                c = cells[key] = ([], [])
            c[0].append(h)
            c[1].append(float(s))
            if o.revision:
                revisions[key] = o.revision
            po = order.setdefault(o.benchmark, {})
            if h not in po:
                po[h] = o.prompt_id
            if fp is not None:
                fp.update(f"{o.model}\x1f{o.benchmark}\x1f{h}\x1f{s!r}\x1f{o.revision}\x1e".encode())
        revision = src.revision or f"content:{fp.hexdigest()[:40]}"
        by_hash = {h: t for t, h in texts.items()}
        with self._write(f"ingesting {src.location}") as conn:
            return self._ingest_tx(conn, batch, revision, by_hash, cells, revisions, order)

    def _ingest_tx(self, conn, batch, revision, by_hash, cells, revisions, order) -> IngestResult:
        src = batch.source
        if self.dialect == "postgresql":  # serialise ingests of the same source
            conn.execute(text("select pg_advisory_xact_lock(hashtext(:k))"), {"k": "taskspace-source:" + src.location})
        existing = conn.execute(select(Source).where(Source.location == src.location)).scalar()
        if existing is not None and existing.revision == revision:
            return IngestResult(0, 0, 0, skipped=True, source_id=existing.id)
        now = utcnow()
        # benchmarks: create the missing ones, refresh the metadata the batch gives
        names = sorted(set(order) | set(batch.benchmarks))
        self._insert_ignore(conn, Benchmark.__table__, [{"name": n, "config": {}} for n in names], ["name"])
        bench_ids = self._ids_by(conn, Benchmark.name, Benchmark.id, names)
        for name, info in sorted(batch.benchmarks.items()):
            values = {f: getattr(info, f) for f in ("group", "source_task", "metric", "num_fewshot") if getattr(info, f) is not None}
            if info.config:
                values["config"] = info.config
            if values:
                conn.execute(update(Benchmark).where(Benchmark.id == bench_ids[name]).values(**values))
        # prompts
        hashes = sorted(by_hash)  # every insert in key order: concurrent PostgreSQL ingests cannot deadlock
        pids = self._ids_by(conn, Prompt.hash, Prompt.id, hashes)
        new = [h for h in hashes if h not in pids]
        self._insert_ignore(conn, Prompt.__table__, [{"hash": h, "text": by_hash[h]} for h in new], ["hash"])
        pids.update(self._ids_by(conn, Prompt.hash, Prompt.id, new))
        if pids and max(pids.values()) >= 2**31:
            raise StoreError("prompt ids passed 2^31: the packed int32 outcome format needs a migration to int64")
        # benchmark membership, positions continuing after the existing ones
        for name, prompts in sorted(order.items()):
            bid = bench_ids[name]
            have = set(conn.execute(select(BenchmarkPrompt.prompt_id).where(BenchmarkPrompt.benchmark_id == bid)).scalars())
            top = conn.execute(select(func.max(BenchmarkPrompt.position)).where(BenchmarkPrompt.benchmark_id == bid)).scalar()
            pos = -1 if top is None else top
            rows = []
            for h, spid in prompts.items():
                if pids[h] not in have:
                    pos += 1
                    rows.append({"benchmark_id": bid, "prompt_id": pids[h], "position": pos,
                                 "source_prompt_id": None if spid is None else str(spid)[:512]})
            rows.sort(key=lambda r: r["prompt_id"])
            self._insert_ignore(conn, BenchmarkPrompt.__table__, rows, ["benchmark_id", "prompt_id"])
        # models
        keys = sorted({m for m, _ in cells})
        model_rev = {m: r for (m, _), r in revisions.items()}
        mids = self._ids_by(conn, Model.key, Model.id, keys)
        new_models = [k for k in keys if k not in mids]
        self._insert_ignore(conn, Model.__table__, [
            {"key": k, "kind": "hub" if looks_like_repo_id(k) else "name",
             "revision": model_rev.get(k)}
            for k in new_models], ["key"])
        mids.update(self._ids_by(conn, Model.key, Model.id, new_models))
        # the source row: replace a previous revision's outcomes
        if existing is not None:
            conn.execute(delete(OutcomeBlock).where(OutcomeBlock.source_id == existing.id))
            source_id = existing.id
        else:
            source_id = conn.execute(Source.__table__.insert().values(kind=src.kind, location=src.location, n_outcomes=0)
                                     .returning(Source.id)).scalar_one()
        blocks, total = [], 0
        for (model, bench), (hs, scores) in sorted(cells.items()):
            ids = np.fromiter((pids[h] for h in hs), dtype=np.int64, count=len(hs))
            sc = np.asarray(scores, dtype=np.float64)
            uniq, inv = np.unique(ids, return_inverse=True)
            if len(uniq) != len(ids):  # copies of one prompt within a benchmark: one averaged, graded outcome
                sc = np.bincount(inv, weights=sc, minlength=len(uniq)) / np.bincount(inv, minlength=len(uniq))
            else:
                sc = sc[np.argsort(ids, kind="stable")]
            a, b, digest = _pack(uniq, sc)
            blocks.append({"source_id": source_id, "model_id": mids[model], "benchmark_id": bench_ids[bench],
                           "n": len(uniq), "prompt_ids": a, "scores": b, "digest": digest,
                           "model_revision": revisions.get((model, bench))})
            total += len(uniq)
        self._insert_blocks(conn, blocks)
        conn.execute(update(Source).where(Source.id == source_id).values(
            kind=src.kind, revision=revision, seen_revision=revision, checked_at=now, ingested_at=now, n_outcomes=total))
        return IngestResult(len(new_models), len(new), total, skipped=False, replaced=existing is not None, source_id=source_id)

    def _insert_blocks(self, conn: Session, blocks: list[dict]) -> None:
        for chunk in chunks(blocks, 200):
            conn.execute(OutcomeBlock.__table__.insert(), chunk)
