"""Derived state in the SQL store (mixed into :class:`indexer.store.sql.Store`): embedding spaces, model
and benchmark vectors with provenance, and indexing runs. Qdrant is rebuilt from these tables."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence

import numpy as np
from sqlalchemy import Text, cast, delete, exists, func, or_, select, update
from sqlalchemy.exc import SQLAlchemyError

from ..errors import DimensionError, InputError, NotFoundError, StoreError, counted, noun
from ..represent import prior_formats
from ..space import SpaceSpec
from .sql_models import (Benchmark, BenchmarkVectorRow, Model, ModelAlias, ModelVectorRow, OutcomeBlock, Run, Space,
                         SpaceCalibrationRow, SpacePatternRow, SpacePriorRow, utcnow)
from .sql_types import (BenchmarkVector, ModelVector, RunRecord, SpacePrior, SpaceRecord, chunks, driver_rows_in,
                        inputs_digest, prior_digest, rows_for_keys, vector_digest)

# stopped: SIGTERM; interrupted: Ctrl-C; killed: the process ended without finishing the run (found "running" by the
# next holder of its lock)
RUN_STATUSES = ("running", "ok", "partial", "failed", "stopped", "interrupted", "killed")
#: the error of a run its process left "running" (killed), as the next pass marks it and `taskspace runs` shows it before
KILLED_NOTE = "the process ended without finishing this run (killed?); the next pass completes what it left"


def killed_error() -> dict:
    """The error entry of a killed run (:data:`KILLED_NOTE`), as :meth:`DerivedMixin.mark_killed_runs` records it and
    `taskspace runs` shows it before."""
    return {"file": None, "line": None, "message": KILLED_NOTE}


def _space_record(s: Space) -> SpaceRecord:
    return SpaceRecord(s.id, s.encoder, s.dim, s.lam, s.eps, s.method, dict(s.params or {}), s.created_at)


def _run_record(r: Run) -> RunRecord:
    return RunRecord(r.id, r.kind, r.started_at, r.finished_at, r.status, r.pid, dict(r.counts or {}), list(r.errors or []))


def _finite(x) -> float | None:
    return float(x) if x is not None and np.isfinite(x) else None


def _pattern_row(space_id: int, post) -> dict:
    """The ``space_patterns`` row of a :class:`indexer.posterior.PatternPosterior`: float32, and only the
    eigenvectors with a non-zero eigenvalue (the others weigh as eigenvalue 0, :func:`posterior.score_variance`)."""
    w = np.asarray(post.w, dtype=np.float64)
    V = np.asarray(post.V, dtype=np.float64)
    keep = w > max(float(w.max(initial=0.0)), 1.0) * 1e-9
    f4 = lambda a: np.ascontiguousarray(a, dtype="<f4").tobytes()  # noqa: E731
    for name, a in (("mu", post.mu), ("w", w), ("V", V)):
        if not np.isfinite(np.asarray(a, dtype=np.float64)).all():
            raise InputError(f"pattern posterior with non-finite {name}", item=f"pattern {post.key}")
    free = 0 if post.K is None else int(np.asarray(post.K).shape[1])
    return dict(space_id=space_id, key=str(post.key), n=int(post.n), width=int(V.shape[0]), rank=int(keep.sum()),
                free=free, mc_seen=bool(post.formats[0]), free_seen=bool(post.formats[1]), mu=f4(post.mu),
                w=f4(w[keep]), V=f4(V[:, keep]), K=None if post.K is None else f4(post.K),
                Cinv=None if post.Cinv is None else f4(post.Cinv), computed_at=utcnow())


def _vector(v, dim: int, item: str) -> bytes:
    a = np.asarray(v, dtype="<f4").reshape(-1)
    if a.shape[0] != dim:
        raise DimensionError(f"vector has dimension {a.shape[0]}, the space has {dim}", item=item)
    if not np.isfinite(a).all():
        raise InputError("vector has NaN or infinite entries", item=item)
    return a.tobytes()


class DerivedMixin:
    # -- spaces ---------------------------------------------------------------------------------------------

    def get_or_create_space(self, encoder: str, dim: int, lam: float, eps: float, method: str = "hyperplane",
                            params: dict | None = None) -> SpaceRecord:
        """The embedding space with exactly these settings, created on first use."""
        if dim <= 0 or not all(math.isfinite(x) and x >= 0 for x in (lam, eps)):
            raise InputError(f"invalid space: dim={dim}, lambda={lam}, eps={eps}", item=encoder)
        params = dict(params or {})
        key = SpaceSpec(encoder, lam, eps, method, params, int(dim)).key
        with self._write() as conn:
            row = conn.execute(select(Space).where(Space.key == key)).scalar()
            if row is None:
                self._insert_ignore(conn, Space.__table__, [dict(key=key, encoder=encoder, dim=int(dim), lam=float(lam),
                                                                 eps=float(eps), method=method, params=params,
                                                                 created_at=utcnow())], ["key"])
                row = conn.execute(select(Space).where(Space.key == key)).scalar_one()
            return _space_record(row)

    def get_space(self, space_id: int) -> SpaceRecord:
        with self._read() as conn:
            row = conn.execute(select(Space).where(Space.id == space_id)).scalar()
            if row is None:
                raise NotFoundError(f"unknown embedding space id {space_id}")
            return _space_record(row)

    def list_spaces(self) -> list[SpaceRecord]:
        with self._read() as conn:
            return [_space_record(s) for s in conn.execute(select(Space).order_by(Space.id)).scalars()]

    def space_states(self) -> list[tuple[SpaceRecord, object, SpacePrior | None]]:
        """Every space (in id order, as :meth:`list_spaces`) with its calibration map (:meth:`get_space_calibration`)
        and its prior (:meth:`get_space_prior`), each None when not stored: what a search reads of SQL about its
        space, in one statement (a query made three transactions of these)."""
        s, c, p = Space.__table__.c, SpaceCalibrationRow.__table__.c, SpacePriorRow.__table__.c
        q = (select(s.id, s.encoder, s.dim, s.lam, s.eps, s.method, s.params, s.created_at,
                    c.space_id, c.a, c.b, c.n_cells, c.n_models, c.spread, c.level, c.specific, c.shared, c.uncovered,
                    c.knots, c.lam_cap, c.region_var, c.region_estimator, c.links, c.centres,
                    p.space_id, p.vector, p.n_models, p.computed_at)
             .select_from(Space.__table__.outerjoin(SpaceCalibrationRow.__table__, c.space_id == s.id)
                          .outerjoin(SpacePriorRow.__table__, p.space_id == s.id))
             .order_by(s.id))
        with self._read() as conn:
            rows = conn.connection().execute(q).all()
        out = []
        for r in rows:
            rec = SpaceRecord(r[0], r[1], r[2], r[3], r[4], r[5], dict(r[6] or {}), r[7])
            cal = None if r[8] is None else _calibration(*r[9:24])
            prior = None if r[24] is None else SpacePrior(np.frombuffer(r[25], dtype="<f8").copy(), r[26], r[27])
            out.append((rec, cal, prior))
        return out

    # -- model vectors --------------------------------------------------------------------------------------

    def get_space_prior(self, space_id: int) -> SpacePrior | None:
        """The space's stored shrinkage target (method ``auto-mean``), or None."""
        with self._read() as conn:
            row = conn.execute(select(SpacePriorRow).where(SpacePriorRow.space_id == space_id)).scalar()
            if row is None:
                return None
            return SpacePrior(np.frombuffer(row.vector, dtype="<f8").copy(), row.n_models, row.computed_at)

    def save_model_vectors(self, space_id: int, vectors: Iterable[ModelVector], prior: SpacePrior | None = None,
                           replace_prior: bool | None = None, patterns: Iterable | None = None,
                           calibration=None, calibration_models: int = 0) -> int:
        """Upsert one vector per model in one transaction; returns how many were written. ``prior``: the space's
        new shrinkage target, stored in the same transaction (so vectors and the prior they were solved toward
        change together). ``replace_prior`` (default: whether ``prior`` is given): replace the stored prior by
        ``prior``, i.e. delete it when ``prior`` is None. ``patterns``: the posterior factors
        (:class:`indexer.posterior.PatternPosterior`) of the vectors' coverage patterns, added when new; patterns no
        vector of the space refers to any more are deleted. ``calibration``: the space's new calibration map
        (:class:`indexer.posterior.Calibration`, fitted on ``calibration_models`` models), replacing the stored one."""
        replace_prior = prior is not None if replace_prior is None else replace_prior
        space = self.get_space(space_id)
        self.check_writable(space_id)
        vectors = list(vectors)
        prior_row = None
        if prior is not None:
            u = np.asarray(prior.vector, dtype="<f8").reshape(-1)  # a prior per answer format: its rows in turn
            F = prior_formats(space.params or {})
            if not np.isfinite(u).all() or u.shape[0] >= F * space.dim or u.shape[0] % F or prior.n_models < 1:
                raise InputError(f"invalid prior: {u.shape[0]} entries for a space of dimension {space.dim}, "
                                 f"{counted(prior.n_models, 'model')}", item=f"space {space_id}")
            prior_row = dict(space_id=space_id, dim=int(u.shape[0]), vector=u.tobytes(), n_models=int(prior.n_models),
                             computed_at=prior.computed_at or utcnow(), n_changed=0)
        rows = {}
        for v in vectors:
            rows[v.model] = dict(dim=space.dim, vector=_vector(v.vector, space.dim, v.model), n_prompts=int(v.n_prompts),
                                 benchmarks=list(v.benchmarks), accuracy={k: float(x) for k, x in v.accuracy.items()},
                                 inputs_digest=v.inputs_digest, computed_at=v.computed_at or utcnow(),
                                 pattern=v.pattern, lam=_finite(v.lam), noise=_finite(v.noise))
        pattern_rows = [_pattern_row(space_id, p) for p in (patterns or [])]
        if not rows and not replace_prior and calibration is None:
            return 0
        with self._write("saving model vectors") as conn:
            if replace_prior:
                conn.execute(delete(SpacePriorRow).where(SpacePriorRow.space_id == space_id))
                if prior_row is not None:
                    conn.execute(SpacePriorRow.__table__.insert(), [prior_row])
            if calibration is not None:
                conn.execute(delete(SpaceCalibrationRow).where(SpaceCalibrationRow.space_id == space_id))
                conn.execute(SpaceCalibrationRow.__table__.insert(), [dict(
                    space_id=space_id, a=float(calibration.a), b=float(calibration.b), n_cells=int(calibration.n_cells),
                    n_models=int(calibration_models), spread=float(calibration.spread), computed_at=utcnow(), n_changed=0,
                    **_folded(calibration))])
            if pattern_rows:
                have_p = set(conn.execute(select(SpacePatternRow.key).where(SpacePatternRow.space_id == space_id)).scalars())
                new = [r for r in pattern_rows if r["key"] not in have_p]
                for c in chunks(new, 20):
                    conn.execute(SpacePatternRow.__table__.insert(), c)
            mids = self._ids_by(conn, Model.key, Model.id, list(rows))
            missing = set(rows) - set(mids)
            if missing:
                raise NotFoundError(f"vectors for unknown {noun(len(missing), 'model')}: {', '.join(sorted(missing)[:10])}")
            # the (outcomes, prior) digests each vector was solved from, when its inputs digest is theirs: what
            # stale_models compares in SQL (the prior is the space's after this save)
            if replace_prior:
                pdig = prior_digest(prior_row["vector"]) if prior_row else ""
            else:
                pvec = conn.execute(select(SpacePriorRow.vector).where(SpacePriorRow.space_id == space_id)).scalar()
                pdig = "" if pvec is None else prior_digest(pvec)
            outs = self._ids_by(conn, Model.key, Model.outcomes_digest, list(rows))
            for k, r in rows.items():
                d = outs.get(k)
                ok = d is not None and r["inputs_digest"] == inputs_digest(d, pdig)
                r.update(outcomes_digest=d if ok else None, prior_digest=pdig if ok else None, point_digest=None)
            have: set = set()  # the saved models that have a vector already (only theirs read)
            for c in chunks(sorted(mids.values())):
                have.update(conn.execute(select(ModelVectorRow.model_id).where(
                    ModelVectorRow.space_id == space_id, ModelVectorRow.model_id.in_(c))).scalars())
            inserts = [dict(space_id=space_id, model_id=mids[k], **r) for k, r in sorted(rows.items()) if mids[k] not in have]
            for c in chunks(inserts, 500):
                conn.execute(ModelVectorRow.__table__.insert(), c)
            for k, r in sorted(rows.items()):
                if mids[k] in have:
                    conn.execute(update(ModelVectorRow).where(ModelVectorRow.space_id == space_id,
                                                              ModelVectorRow.model_id == mids[k]).values(**r))
            self._drop_unused_patterns(conn, space_id)
        return len(rows)

    # -- the digests of the index points SQL implies (model_vectors.point_digest) ----------------------------------
    @staticmethod
    def _forget_point_digests(conn, model_ids) -> None:
        """Inside a write transaction that changes what these models' index points hold (their metadata, key or
        aliases): their stored point digests are unknown again (in every space)."""
        ids = sorted(set(int(i) for i in model_ids))  # IN-lists to the driver (an ingest forgets 32k new models)
        # (every space_id is a space's: the condition lets the (space_id, model_id) index find the rows, where
        # model_id alone read every row of the table, 3 KB vector blobs included: 50 ms at 32k, for one model)
        driver_rows_in(conn, f"UPDATE {ModelVectorRow.__tablename__} SET point_digest = NULL WHERE point_digest IS NOT "
                             f"NULL AND space_id IN (SELECT id FROM {Space.__tablename__}) AND model_id IN ", ids)

    def point_digests(self, space_id: int) -> dict[str, str | None]:
        """model key -> the stored digest of its index point (None: unknown, compute it) for every vector of the
        space. A claim token (``~...``, :meth:`claim_point_digests`) reads as unknown."""
        q = (select(Model.key, ModelVectorRow.point_digest).join(Model, Model.id == ModelVectorRow.model_id)
             .where(ModelVectorRow.space_id == space_id))
        with self._read() as conn:
            rows = conn.connection().execute(q).all()
        return {k: (d if d and not d.startswith("~") else None) for k, d in rows}

    def unpushed_models(self, space_id: int) -> list[str]:
        """The models of the space whose index point digest is unknown (NULL): a vector not pushed yet, or one whose
        point's other inputs (the model's metadata, key or aliases) were written since its last push, e.g. Hub
        metadata a later ingest or pass fetched. A claim token (a push under way) is not listed."""
        q = (select(Model.key).select_from(ModelVectorRow).join(Model, Model.id == ModelVectorRow.model_id)
             .where(ModelVectorRow.space_id == space_id, ModelVectorRow.point_digest.is_(None)).order_by(Model.key))
        with self._read() as conn:
            return [k for (k,) in conn.connection().execute(q).all()]

    def claim_point_digests(self, space_id: int, models: Sequence[str] | None = None) -> str:
        """Mark the unknown point digests of these models' vectors (all when None) with a fresh token and return it,
        before their points are built: :meth:`save_point_digests` then stores a digest only where the token is still
        there, so a write of the inputs in between (which sets None) wins and nothing stale is ever stored."""
        import uuid

        token = "~" + uuid.uuid4().hex[:31]
        v = ModelVectorRow
        cond = [v.space_id == space_id, or_(v.point_digest.is_(None), v.point_digest.like("~%"))]
        with self._write("claiming point digests") as conn:
            if models is None:
                conn.execute(update(v).where(*cond).values(point_digest=token))
            else:
                mids = list(self._ids_by(conn, Model.key, Model.id, list(models)).values())
                for c in chunks(sorted(mids)):
                    conn.execute(update(v).where(*cond, v.model_id.in_(c)).values(point_digest=token))
        return token

    def save_point_digests(self, space_id: int, token: str, digests: dict[str, str]) -> int:
        """Store each model's point digest where its row still holds ``token`` (see :meth:`claim_point_digests`)."""
        if not digests:
            return 0
        n = 0
        with self._write("saving point digests") as conn:
            mids = self._ids_by(conn, Model.key, Model.id, list(digests))
            raw = conn.connection()
            mark = "?" if raw.dialect.paramstyle == "qmark" else "%s"
            sql = (f"UPDATE {ModelVectorRow.__tablename__} SET point_digest = {mark} "
                   f"WHERE space_id = {mark} AND model_id = {mark} AND point_digest = {mark}")
            rows = [(d, space_id, mids[k], token) for k, d in sorted(digests.items()) if k in mids]
            for c in chunks(rows):
                n += raw.exec_driver_sql(sql, c).rowcount or 0
        return n

    @staticmethod
    def _drop_unused_patterns(conn, space_id: int) -> None:
        used = select(ModelVectorRow.pattern).where(ModelVectorRow.space_id == space_id,
                                                    ModelVectorRow.pattern.is_not(None))
        conn.execute(delete(SpacePatternRow).where(SpacePatternRow.space_id == space_id,
                                                   SpacePatternRow.key.not_in(used)))

    def load_patterns(self, space_id: int, keys: Sequence[str] | None = None) -> dict:
        """The stored posterior factors of a space's coverage patterns (all, or ``keys``), by key:
        :class:`indexer.posterior.PatternPosterior` (float64 copies of the float32 stored)."""
        from ..posterior import PatternPosterior

        with self._read() as conn:
            rows = rows_for_keys(conn, select(SpacePatternRow).where(SpacePatternRow.space_id == space_id),
                                 SpacePatternRow.key, keys)
        out = {}
        for r in rows:  # plain rows (rows_for_keys runs on the Core connection)
            f4 = lambda b: np.frombuffer(b, dtype="<f4").astype(np.float64)  # noqa: E731
            p = r.width
            K = f4(r.K).reshape(p, r.free) if r.K is not None else None
            Cinv = f4(r.Cinv).reshape(r.free, r.free) if r.Cinv is not None else None
            out[r.key] = PatternPosterior(key=r.key, n=r.n, mu=f4(r.mu), w=f4(r.w), V=f4(r.V).reshape(p, r.rank),
                                          K=K, Cinv=Cinv, formats=(bool(r.mc_seen), bool(r.free_seen)))
        return out

    def get_space_calibration(self, space_id: int):
        """The space's stored calibration map (:class:`indexer.posterior.Calibration`), or None."""
        with self._read() as conn:
            row = conn.execute(select(SpaceCalibrationRow).where(SpaceCalibrationRow.space_id == space_id)).scalar()
        return None if row is None else _calibration(row.a, row.b, row.n_cells, row.n_models, row.spread,
                                                     row.level, row.specific, row.shared, row.uncovered, row.knots,
                                                     row.lam_cap, row.region_var, row.region_estimator, row.links,
                                                     row.centres)

    def state_digest(self, space_id: int) -> str:
        """A digest of what SQL holds that a query's every-model scores in this space are computed from, read in one
        transaction: every model's outcomes digest (``models.outcomes_digest``: refreshed by each write of its
        outcomes, what :meth:`changed_outcomes` compares; so an ``ingest`` without ``index`` changes it) with its
        vector's digests in the space (inputs, outcomes, prior, index point, pattern, when computed), the space's
        benchmark vectors, calibration map (links and centres included), prior and pulled pattern prompt sets, and
        the prompts' count and last id. Equal digests: none of these changed between the two reads.
        :func:`indexer.browse.model_detail` keeps its every-model rows by it. The rows are read as the driver gives
        them (no type processing) and hashed whole (0.15 s on 32,823 models, most of it SQLite reading past the vectors'
        blobs; SQLAlchemy's row objects and their ``repr``, which cuts long values, took 0.7 s)."""
        import hashlib

        from .sql_models import Prompt, SpacePatternPromptsRow

        t = {n: m.__tablename__ for n, m in (("m", Model), ("v", ModelVectorRow), ("bv", BenchmarkVectorRow),
                                             ("cal", SpaceCalibrationRow), ("pri", SpacePriorRow),
                                             ("pp", SpacePatternPromptsRow), ("p", Prompt))}
        cal = ", ".join(c.name for c in SpaceCalibrationRow.__table__.c if c.name != "n_changed")
        reads = (f"SELECT m.id, m.outcomes_digest, v.inputs_digest, v.outcomes_digest, v.prior_digest, v.point_digest, "
                 f"v.pattern, v.computed_at FROM {t['m']} m LEFT JOIN {t['v']} v ON v.model_id = m.id AND "
                 f"v.space_id = :s ORDER BY m.id",
                 f"SELECT benchmark_id, n_prompts, computed_at FROM {t['bv']} WHERE space_id = :s ORDER BY benchmark_id",
                 f"SELECT {cal} FROM {t['cal']} WHERE space_id = :s",
                 f"SELECT vector, n_models, computed_at FROM {t['pri']} WHERE space_id = :s",
                 f"SELECT pattern, digest FROM {t['pp']} WHERE space_id = :s ORDER BY pattern",
                 f"SELECT count(id), max(id) FROM {t['p']}")
        h = hashlib.sha256()
        with self._read() as conn:
            raw = conn.connection()
            mark = "?" if raw.dialect.paramstyle == "qmark" else "%s"
            for q in reads:
                n = q.count(":s")
                # the driver's own rows (plain tuples: SQLAlchemy's row objects cost a third more)
                rows = raw.exec_driver_sql(q.replace(":s", mark), (int(space_id),) * n if n else ()).cursor.fetchall()
                if rows and any(isinstance(x, memoryview) for x in rows[0]):  # a blob as a memoryview shows its
                    rows = [tuple(bytes(x) if isinstance(x, memoryview) else x for x in r) for r in rows]  # address
                h.update(repr(list(map(tuple, rows))).encode())
                h.update(b"\x00")
        return h.hexdigest()

    def fit_drift(self, space_id: int) -> tuple[int | None, int | None]:
        """How many models were solved or removed since the space's prior, and since its calibration map, were
        estimated (:func:`indexer.space.needs_refit`): None where there is none or it was stored before
        migration 0015 counted them."""
        with self._read() as conn:
            return tuple(conn.execute(select(t.n_changed).where(t.space_id == space_id)).scalar()
                         for t in (SpacePriorRow, SpaceCalibrationRow))

    def add_fit_drift(self, space_id: int, n: int, *, prior: bool, calibration: bool) -> None:
        """Count ``n`` models solved toward the held prior (``prior``) and calibrated by the held map
        (``calibration``), or removed, since they were estimated (:meth:`fit_drift`)."""
        tables = [t for t, held in ((SpacePriorRow, prior), (SpaceCalibrationRow, calibration)) if held]
        if n <= 0 or not tables:
            return
        with self._write("counting the models changed since the space's fit") as conn:
            for t in tables:
                conn.execute(update(t).where(t.space_id == space_id)
                             .values(n_changed=func.coalesce(t.n_changed, 0) + int(n)))

    def set_calibration_links(self, space_id: int, links, centres=None) -> bool:
        """Store ``links`` (:attr:`indexer.posterior.Calibration.links`, None: one group) and their ``centres``
        (:attr:`~indexer.posterior.Calibration.centres`) as the space's calibration map's, the map's other values
        kept; False when the space has no map."""
        self.check_writable(space_id)
        t = SpaceCalibrationRow
        with self._write("storing the benchmarks' links of the space's map") as conn:
            return bool(conn.execute(update(t).where(t.space_id == space_id).values(
                links=_links_text(links), centres=_centres_text(centres))).rowcount)

    def _benchmark_texts(self, conn, space_id: int) -> dict[str, list[str]]:
        """The space's vectors' distinct ``benchmarks`` as stored (their JSON text) -> each one's list (a NULL or
        JSON null: empty); a few among tens of thousands of vectors, each decoded once."""
        v = ModelVectorRow
        texts = conn.execute(select(cast(v.benchmarks, Text)).where(v.space_id == space_id).distinct()).scalars()
        return {t: list(json.loads(t) or []) if t is not None else [] for t in texts}

    def model_benchmark_lists(self, space_id: int) -> list[list[str]]:
        """The distinct lists of benchmarks the space's vectors were fitted on (each once; no vector read): what
        :func:`indexer.posterior.links_of` groups."""
        with self._read() as conn:
            return list(self._benchmark_texts(conn.connection(), space_id).values())

    def model_benchmark_vectors(self, space_id: int, lists: Sequence[Sequence[str]] | None = None
                                ) -> tuple[list[list[str]], np.ndarray]:
        """(the benchmarks each vector of the space was fitted on, float32 (n, dim) the vectors), in one (unset)
        order: what :func:`indexer.posterior.link_centres` averages (no model key read). ``lists``: only the vectors
        fitted on one of these lists of benchmarks (a pass's refresh of the groups its models changed). Each
        distinct list is decoded once (before, every row's JSON: 0.85 s of 32,823 rows)."""
        v = ModelVectorRow
        text = cast(v.benchmarks, Text)
        with self._read() as conn:
            c = conn.connection()
            kinds = self._benchmark_texts(c, space_id)
            q = select(text, v.vector).where(v.space_id == space_id)
            if lists is not None:
                want = {tuple(x) for x in lists}
                q = q.where(text.in_([t for t, bs in kinds.items() if t is not None and tuple(bs) in want]))
            rows = c.execute(q).all()
        dim = self.get_space(space_id).dim
        if not rows:
            return [], np.zeros((0, dim), np.float32)
        if any(len(b) != 4 * dim for _, b in rows):
            raise StoreError(f"a stored vector in space {space_id} does not have {dim} float32 entries")
        # a list added between the two reads (another writer) is decoded here
        return ([list(kinds[t]) if t in kinds else list(json.loads(t) or []) if t is not None else [] for t, _ in rows],
                np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1))

    def forget_space_fit(self, space_id: int) -> int:
        """Delete the space's prior and calibration map (fitted on models that have no outcomes any more), so the
        next models get their own as in a fresh space; returns how many rows were deleted."""
        self.check_writable(space_id)
        with self._write() as conn:
            return sum(conn.execute(delete(t).where(t.space_id == space_id)).rowcount
                       for t in (SpacePriorRow, SpaceCalibrationRow))

    def load_model_vectors(self, space_id: int, models: Sequence[str] | None = None) -> list[ModelVector]:
        """Stored vectors of a space, by model key (all models when ``models`` is None)."""
        v = ModelVectorRow
        q = (select(Model.key, v.vector, v.n_prompts, v.benchmarks, v.accuracy, v.inputs_digest, v.computed_at,
                    v.pattern, v.lam, v.noise, v.counts)
             .join(Model, Model.id == v.model_id).where(v.space_id == space_id).order_by(Model.key))
        with self._read() as conn:  # plain rows, not ORM objects (32k vectors)
            rows = rows_for_keys(conn, q, Model.key, models)
        if models is not None:
            rows.sort(key=lambda r: r[0])
        return [ModelVector(k, np.frombuffer(vec, dtype="<f4").copy(), n, list(b or []), dict(a or {}), d, t, pk, lam, nz,
                            dict(c) if c else None)
                for k, vec, n, b, a, d, t, pk, lam, nz, c in rows]

    def model_vector_matrix(self, space_id: int) -> tuple[list[str], np.ndarray]:
        """(model keys, float32 (n, dim) vectors) of every vector of the space, in key order (as Python orders
        strings): only the vectors read. The vectors and the keys are read apart and put in order here (SQL's join
        and sort of 32k rows of 3 KB cost more than the read itself)."""
        v = ModelVectorRow
        with self._read() as conn:
            core = conn.connection()
            rows = core.execute(select(v.model_id, v.vector).where(v.space_id == space_id)).all()
            keys = dict(core.execute(select(Model.id, Model.key).join(v, Model.id == v.model_id)
                                     .where(v.space_id == space_id)).all())
        dim = self.get_space(space_id).dim
        if not rows:
            return [], np.zeros((0, dim), np.float32)
        rows.sort(key=lambda r: keys[r[0]])
        bad = next((keys[m] for m, b in rows if len(b) != 4 * dim), None)
        if bad is not None:
            raise StoreError(f"the stored vector of {bad} in space {space_id} does not have {dim} float32 entries")
        return ([keys[r[0]] for r in rows],
                np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1))

    def model_vector_keys(self, space_id: int) -> list[str]:
        """The models that have a vector in this space (keys only: no vector is read)."""
        q = (select(Model.key).join(ModelVectorRow, Model.id == ModelVectorRow.model_id)
             .where(ModelVectorRow.space_id == space_id).order_by(Model.key))
        with self._read() as conn:
            return list(conn.execute(q).scalars())

    def delete_model_vectors(self, space_id: int, models: Sequence[str]) -> int:
        self.check_writable(space_id)
        with self._write() as conn:
            mids = list(self._ids_by(conn, Model.key, Model.id, list(models)).values())
            n = 0
            for c in chunks(mids):
                n += conn.execute(delete(ModelVectorRow).where(ModelVectorRow.space_id == space_id,
                                                               ModelVectorRow.model_id.in_(c))).rowcount
            if n:  # their coverage patterns go with them where no other vector names one (as a save drops them)
                self._drop_unused_patterns(conn, space_id)
        return n

    def stale_models(self, space_id: int, digests: dict[str, str] | None = None) -> list[str]:
        """Models with outcomes whose vector in this space is missing or was computed from other inputs (other
        outcomes, or another prior of the space: :func:`~indexer.store.sql_types.vector_digest`). Without
        ``digests`` a comparison of stored columns in SQL (each vector's ``outcomes_digest``/``prior_digest`` with
        its model's ``outcomes_digest`` and the space's prior): only the stale rows are read. ``digests``: compare
        every vector's inputs digest with these model digests instead (:meth:`model_digests` or others)."""
        self.get_space(space_id)
        # a pulled space's prior came with it for folding queries; vectors built here use a prior estimated here
        pulled = getattr(self, "space_origin", lambda _: None)(space_id) is not None
        prior = None if pulled else self.get_space_prior(space_id)
        if digests is not None:
            current = {k: vector_digest(d, prior) for k, d in digests.items()}
            q = select(Model.key, ModelVectorRow.inputs_digest).join(Model, Model.id == ModelVectorRow.model_id)
            with self._read() as conn:
                stored = dict(conn.execute(q.where(ModelVectorRow.space_id == space_id)).all())
            return sorted(k for k, d in current.items() if stored.get(k) != d)
        v = ModelVectorRow
        pdig = "" if prior is None else prior.digest
        q = (select(Model.key).select_from(Model)
             .outerjoin(v, (v.model_id == Model.id) & (v.space_id == space_id))
             .where(Model.outcomes_digest.is_not(None),
                    or_(v.id.is_(None), v.outcomes_digest.is_(None), v.outcomes_digest != Model.outcomes_digest,
                        v.prior_digest.is_(None), v.prior_digest != pdig)))
        with self._read() as conn:
            return sorted(conn.execute(q).scalars())

    def changed_outcomes(self, space_id: int, models: Sequence[str] | None) -> set[str]:
        """Those of these models whose vector in this space was solved from other outcomes than SQL holds now: the
        vector's ``outcomes_digest`` differs from its model's (results ingested, replaced or dropped since: an index
        pass between its ingest and its publish, or ``taskspace ingest`` without ``taskspace index``). Both None (a
        pulled vector, its model measured nowhere here) is no change. One keyed read, the comparison in SQL; the
        space's prior is left out (a new prior changes no outcome an answer shows). ``models`` None: every model with
        a vector in the space, in one read without keys (a model page's every-model rows: 32,823 keys took 0.5 s)."""
        if models is not None and not models:
            return set()
        v = ModelVectorRow
        q = (select(Model.key).join(v, (v.model_id == Model.id) & (v.space_id == space_id))
             .where(or_(v.outcomes_digest != Model.outcomes_digest,
                        v.outcomes_digest.is_(None) & Model.outcomes_digest.is_not(None),
                        v.outcomes_digest.is_not(None) & Model.outcomes_digest.is_(None))))
        with self._read() as conn:
            if models is None:
                return set(conn.execute(q).scalars())
            return {k for (k,) in rows_for_keys(conn, q, Model.key, list(models))}

    def orphan_model_vectors(self, space_id: int) -> list[str]:
        """Models with a vector in this space and no outcomes any more (their source was replaced without them)."""
        q = (select(Model.key).join(ModelVectorRow, Model.id == ModelVectorRow.model_id)
             .where(ModelVectorRow.space_id == space_id, Model.outcomes_digest.is_(None)))
        with self._read() as conn:
            return sorted(conn.execute(q).scalars())

    def delete_models_without_results(self) -> list[str]:
        """Delete the models that hold no outcome and no vector in any space (every result of theirs gone: a new
        revision of their source without them, a dropped source), with their aliases, as a fresh index of the same
        sources never had them; returns their keys. A pass calls it once their vectors are dropped."""
        q = select(Model.id, Model.key).where(~exists().where(OutcomeBlock.model_id == Model.id),
                                              ~exists().where(ModelVectorRow.model_id == Model.id))
        with self._write() as conn:
            rows = conn.execute(q).all()
            for c in chunks([i for i, _ in rows]):
                conn.execute(delete(ModelAlias).where(ModelAlias.model_id.in_(c)))
                conn.execute(delete(Model).where(Model.id.in_(c)))
        return sorted(k for _, k in rows)

    # -- benchmark vectors ----------------------------------------------------------------------------------

    def save_benchmark_vectors(self, space_id: int, vectors: Iterable[BenchmarkVector]) -> int:
        space = self.get_space(space_id)
        self.check_writable(space_id)
        rows = {v.benchmark: dict(dim=space.dim, vector=_vector(v.vector, space.dim, v.benchmark),
                                  n_prompts=int(v.n_prompts), computed_at=v.computed_at or utcnow()) for v in vectors}
        if not rows:
            return 0
        with self._write() as conn:
            bids = self._ids_by(conn, Benchmark.name, Benchmark.id, list(rows))
            missing = set(rows) - set(bids)
            if missing:
                raise NotFoundError(f"vectors for unknown {noun(len(missing), 'benchmark')}: {', '.join(sorted(missing)[:10])}")
            conn.execute(delete(BenchmarkVectorRow).where(BenchmarkVectorRow.space_id == space_id,
                                                          BenchmarkVectorRow.benchmark_id.in_(list(bids.values()))))
            conn.execute(BenchmarkVectorRow.__table__.insert(),
                         [dict(space_id=space_id, benchmark_id=bids[k], **r) for k, r in rows.items()])
        return len(rows)

    def load_benchmark_vectors(self, space_id: int) -> list[BenchmarkVector]:
        q = (select(Benchmark.name, BenchmarkVectorRow).join(Benchmark, Benchmark.id == BenchmarkVectorRow.benchmark_id)
             .where(BenchmarkVectorRow.space_id == space_id).order_by(Benchmark.name))
        with self._read() as conn:
            return [BenchmarkVector(n, np.frombuffer(r.vector, dtype="<f4").copy(), r.n_prompts, r.computed_at)
                    for n, r in conn.execute(q).all()]

    # -- runs -----------------------------------------------------------------------------------------------

    def start_run(self, kind: str = "index") -> int:
        with self._write() as conn:
            return conn.execute(Run.__table__.insert().values(kind=kind, started_at=utcnow(), status="running",
                                                              pid=os.getpid(), counts={}, errors=[])
                                .returning(Run.id)).scalar_one()

    def mark_killed_runs(self, kind: str = "index") -> list[int]:
        """Runs of ``kind`` still marked "running", set to "killed" (with their finish time and an error saying so,
        after the errors they hold: the rule `taskspace runs` shows such a run by, before this marks it; before, this
        replaced them). Call it while holding that kind's lock: then no live process owns them (a killed process never
        finished)."""
        with self._write() as conn:
            rows = conn.execute(select(Run.id, Run.errors).where(Run.kind == kind, Run.status == "running")).all()
            now = utcnow()
            for run_id, errors in rows:
                conn.execute(update(Run).where(Run.id == run_id).values(
                    status="killed", finished_at=now, errors=[*(errors or []), killed_error()]))
        return [run_id for run_id, _ in rows]

    def run_left_running(self, run: RunRecord) -> bool:
        """Whether ``run``, recorded "running", was left so by a process that ended without finishing it (killed), which
        the next pass of its kind marks "killed" (:meth:`mark_killed_runs`): on SQLite, whose lock is local, its process
        (``run.pid``) no longer lives; on PostgreSQL, no session holds its lock and the record still says running (a
        pass records its end before it lets the lock go). Nothing is written or locked."""
        if run.status != "running":
            return False
        if self.dialect == "postgresql":
            from .sql_lock import pg_lock_holder

            lock = "reindex" if run.kind == "reindex" else "index"
            try:
                if pg_lock_holder(self.engine, lock) is not None:
                    return False
                again = self.get_run(run.id)
            except (SQLAlchemyError, StoreError, NotFoundError):  # the server gone meanwhile: say nothing more than the record
                return False
            return again.status == "running"
        if not run.pid:
            return False
        try:
            os.kill(run.pid, 0)
        except ProcessLookupError:
            return True
        except OSError:  # another user's process: it lives
            pass
        return False

    def finish_run(self, run_id: int, status: str, counts: dict | None = None, errors: list | None = None) -> RunRecord:
        if status not in RUN_STATUSES[1:]:
            raise InputError(f"run status {status!r}; use one of {', '.join(RUN_STATUSES[1:])}", item=f"run {run_id}")
        errors = [e.as_dict() if hasattr(e, "as_dict") else e for e in (errors or [])]
        with self._write() as conn:
            n = conn.execute(update(Run).where(Run.id == run_id).values(
                finished_at=utcnow(), status=status, counts=json.loads(json.dumps(counts or {}, default=str)),
                errors=json.loads(json.dumps(errors, default=str)))).rowcount
        if not n:
            raise NotFoundError(f"unknown run id {run_id}")
        return self.get_run(run_id)

    def get_run(self, run_id: int) -> RunRecord:
        with self._read() as conn:
            r = conn.execute(select(Run).where(Run.id == run_id)).scalar()
            if r is None:
                raise NotFoundError(f"unknown run id {run_id}")
            return _run_record(r)

    def list_runs(self, limit: int = 20) -> list[RunRecord]:
        """The newest runs first (at most ``limit``; a limit past what a 32-bit id can number is every run)."""
        limit = min(int(limit), 2**31 - 1)  # `runs -n 9999999999999999999`: "bigint out of range" / OverflowError before
        with self._read() as conn:
            return [_run_record(r) for r in conn.execute(select(Run).order_by(Run.id.desc()).limit(limit)).scalars()]


def _folded(calibration) -> dict:
    """The level/deviation coefficients of a calibration map, its bend's knots (JSON text), its ``lam_cap``, its
    ``region_var`` and the ``region_estimator`` that gave it and its ``links`` (JSON text) as row values (None for the
    plain map, no bend, no cap, no region variance or one group of benchmarks; the estimator None where not known)."""
    out = {k: (None if getattr(calibration, k, None) is None else float(getattr(calibration, k)))
           for k in ("level", "specific", "shared", "uncovered")}
    knots = getattr(calibration, "knots", None)
    out["knots"] = None if knots is None else json.dumps({"z": list(knots[0]), "logit": list(knots[1])})
    cap = getattr(calibration, "lam_cap", None)
    out["lam_cap"] = None if cap is None else float(cap)
    region = getattr(calibration, "region_var", None)
    out["region_var"] = None if region is None else float(region)
    estimator = getattr(calibration, "region_estimator", None)
    out["region_estimator"] = None if region is None or estimator is None else int(estimator)
    out["links"] = _links_text(getattr(calibration, "links", None))
    out["centres"] = _centres_text(getattr(calibration, "centres", None))
    return out


def _centres_text(centres) -> str | None:
    """A map's ``centres`` (:attr:`indexer.posterior.Calibration.centres`) as its row value: JSON text, None for none."""
    return None if centres is None else json.dumps([[float(x) for x in c] for c in centres])


def _links_text(links) -> str | None:
    """A map's ``links`` (:attr:`indexer.posterior.Calibration.links`) as its row value: JSON text, None for one group."""
    return None if links is None else json.dumps([list(g) for g in links])


def _calibration(a, b, n_cells, n_models, spread, level, specific, shared, uncovered, knots, lam_cap=None,
                 region_var=None, region_estimator=None, links=None, centres=None):
    """A :class:`~indexer.posterior.Calibration` from its row values (:func:`_folded`'s, ``knots`` JSON text)."""
    from ..posterior import Calibration

    k = None if knots is None else json.loads(knots)
    return Calibration(a, b, n_cells, n_models, spread, level, specific, shared, uncovered,
                       None if k is None else (tuple(k["z"]), tuple(k["logit"])), lam_cap, region_var,
                       region_estimator, None if links is None else tuple(tuple(g) for g in json.loads(links)),
                       None if centres is None or links is None
                       else tuple(tuple(float(x) for x in c) for c in json.loads(centres)))
