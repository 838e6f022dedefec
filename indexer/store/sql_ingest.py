"""Ingesting a :class:`~indexer.records.SourceBatch` (mixed into :class:`indexer.store.sql.Store`): one
transaction per source; prompts by content hash; outcomes packed per (source, model, benchmark).

The batch is taken column-wise (:meth:`SourceBatch.to_table`: a big reader's ``OutcomeTable`` as it is, Outcome
rows turned into columns): checks, prompt hashes, grouping and the averaging of copies are array operations,
with one Python step per distinct prompt, model, benchmark and (model, benchmark) block, none per cell."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, replace

import numpy as np
from sqlalchemy import delete, func, or_, select, text, update
from sqlalchemy.orm import Session

from ..errors import InputError, StoreError
from ..records import NAME_LIMIT, OutcomeTable, SourceBatch, name_problem, prompt_hash, text_problem
from .sql_models import (Benchmark, BenchmarkPrompt, BenchmarkVectorRow, Model, ModelAlias, OutcomeBlock, Prompt,
                         Source, utcnow)
from .sql_types import IngestResult, chunks, driver_rows_in, looks_like_repo_id


def _check_names(model, benchmark, revision, location: str, item: str) -> None:
    """Model keys and benchmark names must be non-empty and fit their columns."""
    for what, value, limit in (("model", model, 512), ("benchmark", benchmark, 512), ("model revision", revision, 128)):
        if what != "model revision" and (not isinstance(value, str) or not value.strip()):
            raise InputError(f"an outcome without a {what} name in {location}", item=item)
        if value is not None and name_problem(value):  # the same rule on SQLite and PostgreSQL (which refuses NUL)
            raise InputError(f"{what} name {value[:60]!r} {name_problem(value)} in {location}", item=item)
        if value is not None and len(value) > limit:
            raise InputError(f"{what} {value[:60]!r}... is longer than {limit} characters in {location}", item=item)


_DENSE = 1 << 24  # code spaces up to this size are grouped with a lookup table (no sort of the cells)


def _first(mask: np.ndarray) -> int:
    """The first True position, or the length when there is none."""
    hit = np.flatnonzero(mask)
    return int(hit[0]) if hit.size else len(mask)


@dataclass
class _Columns:
    """One source's outcomes, checked and grouped column-wise (no object per cell).

    ``by_hash``: prompt hash -> text; ``order``: benchmark -> prompt hash -> the source's prompt id, in order of first
    appearance; ``groups``: one (model, benchmark) pair per group, sorted by names, with ``cell_group``/``cell_hash``
    (indexes into ``groups``/``hashes``) and ``scores`` per cell; ``revisions``: (model, benchmark) -> the model
    revision last seen on that pair; ``model_rev``: model -> revision."""

    by_hash: dict[str, str]
    order: dict[str, dict[str, str | None]]
    hashes: list[str]
    groups: list[tuple[str, str]]
    cell_group: np.ndarray
    cell_hash: np.ndarray
    scores: np.ndarray
    revisions: dict[tuple[str, str], str]
    model_rev: dict[str, str]


def _table(batch: SourceBatch) -> tuple[OutcomeTable, dict[int, object]]:
    """The batch as one columnar table (Outcome rows first, then ``batch.table``), and the cells whose score is
    not a number (position -> the value given; NaN in the table)."""
    raw: dict[int, object] = {}
    rows = batch.outcomes
    if rows:
        def safe(k, o):
            try:
                return o if isinstance(o.score, float) else replace(o, score=float(o.score))
            except (TypeError, ValueError):
                raw[k] = o.score
                return replace(o, score=math.nan)

        rows = [safe(k, o) for k, o in enumerate(rows)]
    parts = ([OutcomeTable.from_outcomes(rows)] if rows else []) + ([batch.table] if batch.table is not None else [])
    return (parts[0] if len(parts) == 1 else OutcomeTable.concat(parts)), raw


def _compact(size: int):
    """The integer dtype of cell-level codes below ``size``: int32 when they fit (half the memory traffic and
    page faults of int64 over millions of cells), else int64."""
    return np.int32 if size < 2**31 else np.int64


def _first_positions(idx: np.ndarray, size: int) -> np.ndarray:
    """(size,) int64: the first position of each value in [0, size) in ``idx``, ``len(idx)`` for a value that does
    not occur. Reads ``idx`` in growing slices and stops once every value was seen (tables list each prompt early:
    a few thousand of millions of cells)."""
    n = len(idx)
    first = np.full(size, n, dtype=np.int64)
    lo, step, seen = 0, 1 << 14, 0
    while lo < n and seen < size:
        part = idx[lo:lo + step]
        here = np.full(size, n, dtype=np.int64)
        np.minimum.at(here, part, np.arange(lo, lo + len(part), dtype=np.int64))
        np.minimum(first, here, out=first)
        seen = int(np.count_nonzero(first < n))
        lo += len(part)
        step *= 2
    return first


def _columns(table: OutcomeTable, location: str, raw: dict[int, object] | None = None) -> _Columns:
    """Check and group a source's outcomes column-wise. The checks and their order are those of a pass over the
    cells: the first bad cell raises (an empty prompt text, a score outside [0, 1], a bad model or benchmark name).
    ``raw``: cells whose given score was not a number (shown as given in the error). What depends on a cell's
    prompt or model alone is computed per prompt or model, and a per-cell check runs only when some prompt or
    model fails it."""
    n = len(table)
    mi = np.asarray(table.model_idx)
    pi = np.asarray(table.prompt_idx)
    mi = mi if mi.dtype in (np.int32, np.int64) else mi.astype(np.int64)
    pi = pi if pi.dtype in (np.int32, np.int64) else pi.astype(np.int64)
    scores = np.asarray(table.scores, dtype=np.float64)
    revs = table.revisions or [None] * len(table.models)
    # prompts: one hash per distinct text (a prompt index whose text is empty is flagged, not hashed)
    texts: dict[str, int] = {}
    hashes: list[str] = []
    empty = np.zeros(len(table.texts), dtype=bool)  # an unusable text: empty, NUL, not UTF-8 (records.text_problem)
    problem: dict[int, str] = {}
    p_hash = np.zeros(len(table.texts), dtype=np.int64)
    for p, t in enumerate(table.texts):
        bad = text_problem(t)  # the same rule on SQLite and PostgreSQL (which refuses NUL)
        if bad:
            empty[p] = True
            problem[p] = bad
            continue
        h = texts.get(t)
        if h is None:
            h = texts[t] = len(hashes)
            hashes.append(prompt_hash(t))
        p_hash[p] = h
    # names: one id per distinct model name and benchmark
    name_id: dict[str, int] = {}
    m_name = np.asarray([name_id.setdefault(m, len(name_id)) for m in table.models], dtype=np.int64)
    bench_id: dict[str, int] = {}
    p_bench = np.asarray([bench_id.setdefault(b, len(bench_id)) for b in table.benchmarks], dtype=np.int64)
    names, benches = list(name_id), list(bench_id)

    def item(k: int) -> str:
        return f"{table.models[mi[k]]} / {table.benchmarks[pi[k]]}"

    bad_m = np.asarray([bool(name_problem(m)) or len(m) > 512 or (r is not None and (len(r) > 128 or bool(name_problem(r))))
                        for m, r in zip(table.models, revs)], dtype=bool)
    bad_b = np.asarray([bool(name_problem(b)) or len(b) > 512 for b in table.benchmarks], dtype=bool)
    first_text = _first(empty[pi]) if n and empty.any() else n
    in_range = bool(n) and bool(scores.min() >= 0.0) and bool(scores.max() <= 1.0)  # False with a NaN
    first_score = n if in_range else (_first(~((scores >= 0.0) & (scores <= 1.0))) if n else 0)
    first_name = _first(bad_m[mi] | bad_b[pi]) if n and (bad_m.any() or bad_b.any()) else n
    k = min(first_text, first_score, first_name)
    if k < n:
        pid = table.prompt_ids[pi[k]]
        if k == first_text:
            raise InputError(f"{problem[int(pi[k])]} in {location}", item=f"{item(k)} / {pid}")
        h = hashes[p_hash[pi[k]]]
        if k == first_score:
            shown = (raw or {}).get(k, float(scores[k]))
            raise InputError(f"score {shown!r} is not in [0, 1] in {location}", item=f"{item(k)} / {pid or h[:12]}")
        _check_names(table.models[mi[k]], table.benchmarks[pi[k]], revs[mi[k]], location, f"prompt {pid or h[:12]}")
    if n and (long := [p for p, s in enumerate(table.prompt_ids) if s is not None and len(str(s)) > NAME_LIMIT]):
        if (k := _first(np.isin(pi, long))) < n:  # the source's prompt id column holds 512: refused, not cut
            pid = str(table.prompt_ids[pi[k]])
            raise InputError(f"prompt id {pid[:60]!r}... is longer than {NAME_LIMIT} characters ({len(pid)}) in "
                             f"{location}", item=item(k))
    # groups (model, benchmark), numbered in name order: a cell's pair code from its model's and its prompt's parts
    nb = max(len(benches), 1)
    size = len(names) * nb
    wide = _compact(size)
    pair = (m_name * nb).astype(wide)[mi] + p_bench.astype(wide)[pi]
    if size > _DENSE:
        pairs, cell_pair = np.unique(pair, return_inverse=True)
    else:
        present = np.zeros(size, dtype=bool)
        present[pair] = True
        pairs, cell_pair = np.flatnonzero(present), None
    group_names = [(names[q // nb], benches[q % nb]) for q in pairs.tolist()]
    rank = np.asarray(sorted(range(len(group_names)), key=group_names.__getitem__), dtype=np.int64)
    renumber = np.empty_like(rank)
    renumber[rank] = np.arange(len(rank))
    groups = [group_names[r] for r in rank.tolist()]
    if cell_pair is not None:
        cell_group = renumber[cell_pair]
    else:  # one look-up from the pair code to its group's number
        lut = np.zeros(size, dtype=_compact(max(len(rank), 1)))
        lut[pairs] = renumber
        cell_group = lut[pair] if n else np.zeros(0, np.int64)
    del pair, cell_pair
    cell_hash = p_hash.astype(_compact(max(len(hashes), 1)))[pi]
    # benchmark membership: (benchmark, prompt) in order of first appearance, with the first cell's prompt id (a
    # cell's pair depends on its prompt index alone: the first cell of a pair is that of one of its prompt indexes)
    first = _first_positions(pi, len(table.texts))
    used = np.flatnonzero(first < n)
    code = p_bench[used] * max(len(hashes), 1) + p_hash[used]
    by_code = np.lexsort((first[used], code))
    lead = by_code[np.r_[True, code[by_code][1:] != code[by_code][:-1]]] if used.size else by_code
    order: dict[str, dict[str, str | None]] = {}
    for p in used[lead[np.argsort(first[used][lead])]].tolist():
        order.setdefault(benches[p_bench[p]], {})[hashes[p_hash[p]]] = table.prompt_ids[p]
    # model revisions: the last one seen per (model, benchmark); per model, that of the pair seen first last
    revisions: dict[tuple[str, str], str] = {}
    with_rev = np.asarray([bool(r) for r in revs], dtype=bool)
    idx = np.flatnonzero(with_rev[mi]) if n and with_rev.any() else np.zeros(0, np.int64)
    if idx.size:
        runs = np.flatnonzero(np.diff(cell_group[idx]) | np.diff(mi[idx])) + 1
        for c in idx[np.r_[runs - 1, idx.size - 1]].tolist():  # the last cell of each run
            revisions[groups[cell_group[c]]] = revs[mi[c]]
    model_rev = {m: r for (m, _), r in revisions.items()}
    return _Columns(by_hash=dict(zip(hashes, texts)), order=order, hashes=hashes, groups=groups,
                    cell_group=cell_group, cell_hash=cell_hash, scores=scores, revisions=revisions,
                    model_rev=model_rev)


def _fingerprint(table: OutcomeTable) -> str:
    """The content revision of a source that gives none: sha256 over its cells in order (40 hex)."""
    fp = hashlib.sha256()
    revs = table.revisions or [None] * len(table.models)
    m_part = [f"{m}\x1f" for m in table.models]
    p_part = [f"{b}\x1f{prompt_hash(t)}\x1f" for b, t in zip(table.benchmarks, table.texts)]
    for m, p, s in zip(table.model_idx.tolist(), table.prompt_idx.tolist(), table.scores.tolist()):
        fp.update(f"{m_part[m]}{p_part[p]}{float(s)!r}\x1f{revs[m]}\x1e".encode())
    return fp.hexdigest()[:40]


def _merge_cells(ids_a, scores_a, ids_b, scores_b) -> tuple[bytes, bytes]:
    """Two outcome blocks' packed cells (sorted little-endian int32 prompt ids, float32 scores) as one block's: every
    prompt of either; a prompt in both once when its two outcomes agree, and not at all when they differ (as an
    ingest drops a (model, prompt) its source gives two different outcomes under two names of the model)."""
    ia, ib = np.frombuffer(ids_a, dtype="<i4"), np.frombuffer(ids_b, dtype="<i4")
    sa, sb = np.frombuffer(scores_a, dtype="<f4"), np.frombuffer(scores_b, dtype="<f4")
    both, at_a, at_b = np.intersect1d(ia, ib, assume_unique=True, return_indices=True)
    differ = both[sa[at_a] != sb[at_b]]
    keep_b = ~np.isin(ib, both)
    ids = np.concatenate([ia, ib[keep_b]])
    scores = np.concatenate([sa, sb[keep_b]])
    order = np.argsort(ids, kind="stable")
    ids, scores = ids[order], scores[order]
    if len(differ):
        keep = ~np.isin(ids, differ)
        ids, scores = ids[keep], scores[keep]
    return (np.ascontiguousarray(ids, dtype="<i4").tobytes(), np.ascontiguousarray(scores, dtype="<f4").tobytes())


_STAMP = "\x00stamp"  # the key of the identity rules' stamp in the idents of _identities (no model name has a NUL)


def _distinct_prompt_ids(blobs) -> set[int]:
    """The prompt ids listed by outcome blocks' ``prompt_ids`` columns (little-endian int32): most of a benchmark's
    blocks list the same prompts, so each distinct list is decoded once, not one Python int per cell of a 32k-model
    source."""
    distinct = {bytes(b) for b in blobs}
    if not distinct:
        return set()
    return set(np.unique(np.concatenate([np.frombuffer(b, dtype="<i4") for b in distinct])).tolist())


# a benchmark's metadata, each field kept as recorded first while other sources hold its outcomes
_BENCHMARK_FIELDS = ("group", "source_task", "metric", "num_fewshot", "config")


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
        table, raw = _table(batch)
        revision = src.revision or f"content:{_fingerprint(table)}"  # of the names as given: stable across alias files
        try:
            table, idents = self._identities(table)
        except StoreError as exc:  # of its own kind: a session the server ended is a ConnectionLostError the caller
            # stores once more on (before: a plain StoreError, so the source failed, or the pass with it); marked as
            # saying that nothing was saved, so the ingester does not say it again (before, "source not stored
            # (nothing of it was written): ingesting X failed, nothing of it was saved: ...")
            said = type(exc)(f"ingesting {src.location} failed, nothing of it was saved: {exc}")
            said.nothing_saved = True
            raise said from exc
        cols = _columns(table, src.location, raw)
        with self._write(f"ingesting {src.location}") as conn:
            return self._ingest_tx(conn, batch, revision, cols, idents)

    def merge_model_names(self) -> list[tuple[str, str]]:
        """Rows stored under a name that :mod:`indexer.identity` now maps to another key (rows from before the
        alias table, or a name an alias file learned since; a Hub id stored in another case than an earlier row's
        key, as an older taskspace stored it): renamed to that key, or merged into its row when it
        exists (their outcome blocks move there; a block of the same source and benchmark under both names is merged
        into the target's: :meth:`_move_model`). Their aliases follow. Returns ``(old key, new key)`` pairs. The next index pass re-solves
        the models whose outcomes changed. Only rows not yet checked under the current identity rules are resolved
        (``models.identity_stamp`` != :func:`indexer.identity.rules_stamp`: rows written without resolving their
        key, renamed rows, or every row once the rules or an alias file change); a row whose key resolves to itself
        is stamped, so a pass with nothing new resolves nothing."""
        from ..identity import Identity, resolve_many, rules_stamp

        stamp = rules_stamp()
        with self._read() as conn:  # only the keys not yet checked under these rules (new rows, or the rules changed)
            rows = conn.execute(select(Model.id, Model.key).where(
                or_(Model.identity_stamp.is_(None), Model.identity_stamp != stamp))).all()
        if not rows:
            return []
        ids = resolve_many([k for _, k in rows])
        # a Hub id stored in two cases (`ACME/gamma-3b` beside `acme/Gamma-3B`: an older taskspace stored each
        # spelling as a model, as an ingest now does not, :meth:`_model_identities`) is one model: the row stored
        # first keeps it (the next pass with the Hub moves it to the repo's own id). Before, an upgraded home kept the
        # two until a pass reached the Hub and their metadata was due again (never offline), listed twice
        hub = {k.lower() for _, k in rows if ids[k].kind == "hub" and ids[k].key == k}
        if hub:
            q = self.engine.dialect.identifier_preparer.quote
            head = (f"SELECT lower({q('key')}), {q('key')}, {q('id')} FROM {q(Model.__tablename__)} "
                    f"WHERE {q('kind')} = 'hub' AND lower({q('key')}) IN ")
            with self._read() as conn:
                first: dict[str, tuple[int, str]] = {}
                for low, key, mid in driver_rows_in(conn, head, sorted(hub)):
                    if low not in first or mid < first[low][0]:
                        first[low] = (mid, key)
            for mid, k in rows:
                low = k.lower()
                if low in first and ids[k].kind == "hub" and ids[k].key == k and first[low][0] != mid:
                    ids[k] = Identity(k, first[low][1], first[low][1], "hub", "case")
        todo = [(mid, k, ids[k]) for mid, k in rows if ids[k].key != k]
        fixed = [(stamp, mid, k) for mid, k in rows if ids[k].key == k]  # checked: stamped (a key that moves is not)
        done = []
        if fixed:
            with self._write("merging model names") as conn:
                raw = conn.connection()
                mark = "?" if raw.dialect.paramstyle == "qmark" else "%s"
                for c in chunks(fixed, 5000):  # the key re-checked in the statement: a row renamed meanwhile stays unchecked
                    raw.exec_driver_sql(f"UPDATE {Model.__tablename__} SET identity_stamp = {mark} "
                                        f"WHERE id = {mark} AND key = {mark}", c)
        if not todo:
            return []
        with self._write("merging model names") as conn:
            touched = set()
            for mid, key, ident in todo:
                touched.add(self._move_model(conn, mid, key, ident.key, ident.kind, ident.rule))
                done.append((key, ident.key))
            self._refresh_outcome_digests(conn, touched)
            self._forget_point_digests(conn, touched)  # a new key, more aliases
        return done

    def rename_models(self, moves) -> list[tuple[str, str]]:
        """Move stored models to the key the Hub gives them now: ``moves`` are ``(stored key, current Hub id)``
        pairs (:meth:`indexer.hub.HubClient.model_info` of a repo renamed on the Hub, which answers the old id with
        the new one, or of an id typed in another case, which the Hub answers with the repo's own). Each row is
        renamed, or merged into the row of its new key when that exists (as :meth:`merge_model_names` merges);
        the old key stays an alias, so a source naming it is read into the same model. Returns the ``(old, new)``
        pairs done (a key not stored, or moved to itself, is left out)."""
        moves = [(old, new) for old, new in dict(moves).items() if old != new]
        if not moves:
            return []
        done = []
        with self._write("renaming models to their Hub ids") as conn:
            touched = set()
            for old, new in moves:
                mid = conn.execute(select(Model.id).where(Model.key == old)).scalar()
                if mid is None:
                    continue
                touched.add(self._move_model(conn, mid, old, new, "hub", "hub"))
                done.append((old, new))
            self._refresh_outcome_digests(conn, touched)
            self._forget_point_digests(conn, touched)
        return done

    def _move_model(self, conn, mid: int, key: str, new_key: str, kind: str, rule: str) -> int:
        """Rename the model row ``mid`` (key ``key``) to ``new_key``, or merge it into ``new_key``'s row when that
        exists: its outcome blocks move there (a block of the same source and benchmark as one of the target's is
        merged into it: the prompts of both, a prompt in both with one outcome kept once, with two different ones
        dropped, as an ingest treats two names of one model; before, the moved block was deleted, and the outcomes
        of a model its source named two ways were lost), its aliases follow, and ``key`` becomes an alias. Returns
        the id of the row it is now."""
        target = conn.execute(select(Model.id).where(Model.key == new_key)).scalar()
        if target is None:
            conn.execute(update(Model).where(Model.id == mid).values(key=new_key, kind=kind))
            target = mid
        else:
            mine = {(r[1], r[2]): r for r in conn.execute(
                select(OutcomeBlock.id, OutcomeBlock.source_id, OutcomeBlock.benchmark_id, OutcomeBlock.prompt_ids,
                       OutcomeBlock.scores).where(OutcomeBlock.model_id == target)).all()}
            for bid, src, bench, ids, scores in conn.execute(
                    select(OutcomeBlock.id, OutcomeBlock.source_id, OutcomeBlock.benchmark_id, OutcomeBlock.prompt_ids,
                           OutcomeBlock.scores).where(OutcomeBlock.model_id == mid)).all():
                if (src, bench) in mine:
                    tid, _, _, tids, tscores = mine[(src, bench)]
                    a, b = _merge_cells(tids, tscores, ids, scores)
                    conn.execute(delete(OutcomeBlock).where(OutcomeBlock.id == bid))
                    if not a:  # every prompt of both had two different outcomes
                        conn.execute(delete(OutcomeBlock).where(OutcomeBlock.id == tid))
                        continue
                    conn.execute(update(OutcomeBlock).where(OutcomeBlock.id == tid).values(
                        n=len(a) // 4, prompt_ids=a, scores=b, digest=hashlib.sha256(a + b).hexdigest()))
                    mine[(src, bench)] = (tid, src, bench, a, b)
                else:
                    conn.execute(update(OutcomeBlock).where(OutcomeBlock.id == bid).values(model_id=target))
            conn.execute(update(ModelAlias).where(ModelAlias.model_id == mid).values(model_id=target))
            conn.execute(delete(Model).where(Model.id == mid))
        self._insert_ignore(conn, ModelAlias.__table__, [{"alias": key, "model_id": target, "rule": rule[:16]},
                                                         {"alias": new_key, "model_id": target, "rule": "as-given"}],
                            ["alias"])
        return target

    def _model_identities(self, names) -> dict[str, tuple[str, str | None, str]]:
        """``{name: (key, kind, rule)}`` for the usable names among ``names``: a name the SQL alias table knows keeps
        its row (kind None, rule "stored"); otherwise the alias files and naming rules (:mod:`indexer.identity`)."""
        from ..identity import resolve_many

        usable = [m for m in dict.fromkeys(names)
                  if isinstance(m, str) and m.strip() and not name_problem(m) and len(m) <= 512]
        known = self.resolve_aliases(usable) if usable else {}
        ids = resolve_many([m for m in usable if m not in known])
        out = {m: (known[m], None, "stored") if m in known else (ids[m].key, ids[m].kind, ids[m].rule) for m in usable}
        # a Hub id is case-insensitive on the Hub (`Meta-Llama/llama-3-8b` is the repo `meta-llama/Llama-3-8B`): a new
        # Hub id in another case than a stored model's key, or than another name of this batch, is that model (the
        # stored key, else the batch's first spelling; the next pass with the Hub moves it to the repo's own id). Before,
        # each spelling was a model of its own until a pass reached the Hub, and offline for good
        hub = [m for m in usable if m not in known and ids[m].kind == "hub"]
        if hub:
            q = self.engine.dialect.identifier_preparer.quote
            head = f"SELECT lower({q('key')}), {q('key')} FROM {q(Model.__tablename__)} WHERE lower({q('key')}) IN "
            with self._read() as conn:
                canon = dict(sorted(driver_rows_in(conn, head, sorted({ids[m].key.lower() for m in hub})), reverse=True))
            for m in hub:
                key = canon.setdefault(ids[m].key.lower(), ids[m].key)
                if key != ids[m].key:
                    out[m] = (key, "hub", "case")
        return out

    def model_keys(self, names) -> dict[str, str]:
        """The model key each name would be stored under (as :meth:`ingest` maps it); names no database can take
        are left out."""
        return {m: key for m, (key, _, _) in self._model_identities(names).items()}

    def _identities(self, table: OutcomeTable) -> tuple[OutcomeTable, dict]:
        """The table with each model name replaced by its model's key (:mod:`indexer.identity`: a name the SQL
        alias table knows keeps its row; otherwise the alias files and naming rules), and ``{key: [(name, kind,
        rule)]}`` for the alias rows (and under :data:`_STAMP` the identity rules' stamp they were resolved under). Two names of one model in one source become one model (their outcomes on the
        same prompt averaged like repeats). Names no database can take are left for the checks to report."""
        from ..identity import rules_stamp

        stamp = rules_stamp()  # taken before resolving: a file changed meanwhile leaves the rows to re-check
        mapping: dict[str, str] = {}
        idents: dict[str, list] = {}
        for m, (key, kind, rule) in self._model_identities(table.models).items():
            mapping[m] = key
            idents.setdefault(key, []).append((m, kind, rule))
        idents[_STAMP] = stamp
        if all(mapping.get(m, m) == m for m in table.models):
            return table, idents
        return replace(table, models=[mapping.get(m, m) for m in table.models]), idents

    def _ingest_tx(self, conn, batch, revision, cols: _Columns, idents: dict | None = None) -> IngestResult:
        src = batch.source
        by_hash, order = cols.by_hash, cols.order
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
        warnings = []
        for name, info in sorted(batch.benchmarks.items()):
            values = {f: getattr(info, f) for f in _BENCHMARK_FIELDS if getattr(info, f) not in (None, {})}
            for f, recorded in self._benchmark_kept(conn, bench_ids[name], existing, values).items():
                warnings.append(f"{src.location}: benchmark {name!r} is recorded with {f} {recorded!r} (its other "
                                f"sources'); this source reads it as {values.pop(f)!r}: its outcomes are stored with "
                                f"the others, and the recorded {f} stays (read the source with the same {f}, or give "
                                "it its own benchmark name, to keep the two apart)")
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
                                 "source_prompt_id": None if spid is None else str(spid)})
            rows.sort(key=lambda r: r["prompt_id"])
            self._insert_ignore(conn, BenchmarkPrompt.__table__, rows, ["benchmark_id", "prompt_id"])
        # models
        keys = sorted({m for m, _ in cols.groups})
        model_rev = cols.model_rev
        mids = self._ids_by(conn, Model.key, Model.id, keys)
        new_models = [k for k in keys if k not in mids]
        idents = idents or {}

        def kind_of(k):
            kinds = [kd for _, kd, _ in idents.get(k, []) if kd]
            return kinds[0] if kinds else ("hub" if looks_like_repo_id(k) else "name")

        # a new key given as it resolves (a name that is its own key) is a fixed point of the identity rules it was
        # resolved under: stamped, so merge_model_names need not resolve it again (other new keys are left to it)
        stamp = idents.get(_STAMP)
        fixed = {k for k in new_models if any(name == k and rule != "stored" for name, _, rule in idents.get(k, []))}
        self._insert_ignore(conn, Model.__table__, [
            {"key": k, "kind": kind_of(k), "revision": model_rev.get(k), "identity_stamp": stamp if k in fixed else None}
            for k in new_models], ["key"])
        mids.update(self._ids_by(conn, Model.key, Model.id, new_models))
        # every name the source used (and the key itself) -> the model's row; a name already stored keeps its row
        alias_rows = {k: {"alias": k, "model_id": mids[k], "rule": "as-given"} for k in keys}
        for k in keys:
            for name, _, rule in idents.get(k, []):
                if name != k:
                    alias_rows.setdefault(name, {"alias": name, "model_id": mids[k], "rule": rule[:16]})
        # names stored already: a model that gains a name has another index payload (its aliases)
        known = set(self._ids_by(conn, ModelAlias.alias, ModelAlias.model_id, sorted(alias_rows)))
        self._insert_ignore(conn, ModelAlias.__table__, [alias_rows[a] for a in sorted(alias_rows)], ["alias"])
        self._forget_point_digests(conn, {r["model_id"] for a, r in alias_rows.items() if a not in known})
        # the source row: replace a previous revision's outcomes
        touched = set(mids.values())  # the models whose outcomes this changes: their stored digests are recomputed
        was: dict[int, set[int]] = {}  # benchmark id -> the prompts the replaced revision had outcomes on
        had: dict[tuple[int, int], int] = {}  # (model id, benchmark id) of the replaced revision's blocks -> their cells
        if existing is not None:
            was = self._block_prompts(conn, existing.id)
            had = {(m, b): n for m, b, n in conn.execute(select(OutcomeBlock.model_id, OutcomeBlock.benchmark_id,
                                                                OutcomeBlock.n).where(OutcomeBlock.source_id == existing.id))}
            touched.update(m for m, _ in had)
            conn.execute(delete(OutcomeBlock).where(OutcomeBlock.source_id == existing.id))
            source_id = existing.id
        else:
            source_id = conn.execute(Source.__table__.insert().values(kind=src.kind, location=src.location, n_outcomes=0)
                                     .returning(Source.id)).scalar_one()
        blocks, total = [], 0
        # each (model, benchmark) block sorted by prompt id; copies of one prompt in a block become one outcome,
        # their mean (summed in cell order: a stable sort keeps it)
        pid_of = np.asarray([pids[h] for h in cols.hashes], dtype=np.int64)
        wide = _compact(max(len(cols.groups), 1) * max(len(pid_of), 1))  # the sort key's codes fit int32 (usually)
        rank = np.empty(len(pid_of), dtype=wide)
        rank[np.argsort(pid_of)] = np.arange(len(pid_of))
        key = cols.cell_group.astype(wide, copy=False) * max(len(pid_of), 1) + rank[cols.cell_hash]
        order_ = np.argsort(key, kind="stable")
        key = key[order_]
        start = np.r_[True, key[1:] != key[:-1]] if len(key) else np.zeros(0, dtype=bool)
        if start.all():  # no copies of a prompt in a block (the usual case): each mean is its one score
            uniq, means = key, cols.scores[order_] + 0.0  # (+ 0.0: what the sum from 0.0 gives a -0.0 too)
        else:
            seg = np.cumsum(start) - 1
            uniq = key[start]
            means = np.bincount(seg, weights=cols.scores[order_]) / np.bincount(seg)
        group = uniq // max(len(pid_of), 1)
        prompt = pid_of[np.argsort(pid_of)].astype("<i4")[uniq % max(len(pid_of), 1)]  # ids < 2^31: checked above
        bounds = np.r_[0, np.flatnonzero(np.diff(group)) + 1, len(uniq)] if len(uniq) else np.zeros(1, np.int64)
        # every block's bytes are slices of the whole columns packed once (little-endian int32 prompt ids,
        # float32 scores; the digest is sha256 over the two)
        all_ids = np.ascontiguousarray(prompt, dtype="<i4").tobytes()
        all_scores = np.ascontiguousarray(means, dtype="<f4").tobytes()
        sha = hashlib.sha256
        groups_at = group[bounds[:-1]].tolist() if len(bounds) > 1 else []
        for lo, hi, g in zip(bounds[:-1].tolist(), bounds[1:].tolist(), groups_at):
            model, bench = cols.groups[g]
            a, b = all_ids[4 * lo:4 * hi], all_scores[4 * lo:4 * hi]
            digest = sha(a + b).hexdigest()
            blocks.append({"source_id": source_id, "model_id": mids[model], "benchmark_id": bench_ids[bench],
                           "n": hi - lo, "prompt_ids": a, "scores": b, "digest": digest,
                           "model_revision": cols.revisions.get((model, bench))})
            total += hi - lo
        self._insert_blocks(conn, blocks)
        if existing is not None and total < existing.n_outcomes:
            warnings.append(self._fewer_outcomes(conn, src.location, existing.n_outcomes, total, had,
                                                 {(b["model_id"], b["benchmark_id"]): b["n"] for b in blocks},
                                                 rejected=bool(batch.errors)))
        said = self._disagreeing_sources(conn, source_id, src.location, cols, mids, pids, group, prompt, means)
        if said:
            warnings.append(said)
        bench_name = {i: n for n, i in bench_ids.items()}
        self._refresh_outcome_digests(conn, touched, fresh=(source_id, [
            (b["model_id"], src.location, bench_name[b["benchmark_id"]], b["digest"]) for b in blocks]))
        conn.execute(update(Source).where(Source.id == source_id).values(
            kind=src.kind, revision=revision, seen_revision=revision, checked_at=now, ingested_at=now, n_outcomes=total))
        kept = {bench_ids[name]: {pids[h] for h in prompts} for name, prompts in order.items()}
        pruned = self._prune_membership(conn, was, kept)
        return IngestResult(len(new_models), len(new), total, skipped=False, replaced=existing is not None,
                            source_id=source_id, pruned=pruned, warnings=tuple(warnings))

    @staticmethod
    def _fewer_outcomes(conn, location: str, before: int, now: int, had: dict, has: dict, rejected: bool = False) -> str:
        """The warning of a new revision of ``location`` storing fewer outcome cells (``now``) than the one it replaces
        (``before``), naming the benchmarks and models of the stored revision no longer read (``had`` and ``has``:
        (model id, benchmark id) pairs -> their cells), so a file deleted from the source is told from an update, and,
        beside them, the cells fewer in the blocks it still has, where the rows its reading rejected (``rejected``: the
        batch has errors, as a revision stored with accept_partial) count. Before, a pass said "1 source ingested, 27
        outcomes stored" (42 before) and nothing of the outcomes that went; then, with a file gone and a row rejected,
        the whole loss was given to the file's benchmark and its advice was to put the file back."""
        from ..errors import counted
        from ..sources.common import values_listed

        def gone(ids: set[int], column, key) -> list[str]:
            return sorted(conn.execute(select(column).where(key.in_(sorted(ids)))).scalars()) if ids else []

        benches = gone({b for _, b in had} - {b for _, b in has}, Benchmark.name, Benchmark.id)
        models = gone({m for m, _ in had} - {m for m, _ in has}, Model.key, Model.id)
        what = [f"{counted(len(names), noun)} no longer read ({values_listed(names)})"
                for names, noun in ((benches, "benchmark"), (models, "model")) if names]
        shrunk = sum(max(0, n - has[k]) for k, n in had.items() if k in has)  # cells fewer in the blocks kept
        counted_there = " (rows this revision's reading rejected count there: its errors list them)" if rejected else ""
        if what and shrunk:
            what.append(f"{counted(shrunk, 'outcome')} fewer in the benchmarks and models it still has{counted_there}")
        why = "; ".join(what) if what else f"fewer prompts read in the benchmarks it still has{counted_there}"
        fix = "; fix the rows rejected and the next pass stores them too" if rejected and (shrunk or not what) else ""
        return (f"{location}: this revision stores {counted(now, 'outcome')}, {before - now} fewer than the stored "
                f"revision's {before}: {why}; their outcomes are no longer stored. A file deleted or moved out "
                f"of the source? Put it back and the next pass stores them again{fix}; a deliberate change needs nothing")

    @staticmethod
    def _disagreeing_sources(conn, source_id: int, location: str, cols: _Columns, mids: dict, pids: dict,
                             group: np.ndarray, prompt: np.ndarray, means: np.ndarray) -> str | None:
        """A warning when the source's outcomes (its stored cells: ``group`` (into ``cols.groups``), prompt id and
        score, one per cell) give a model another outcome on a prompt than another source gives it, else None: both
        stay stored and ``load_outcomes`` averages them (the index uses their mean), unlike two outcomes of one model
        on one prompt inside one source, which are dropped with an error. One read of the other sources' blocks of
        the batch's models (in IN-list chunks), compared as arrays. Before, both ingests said nothing."""
        if not len(prompt):
            return None
        g_mid = np.asarray([mids[m] for m, _ in cols.groups], dtype=np.int64)
        rows = driver_rows_in(conn, "select source_id, model_id, benchmark_id, prompt_ids, scores from "
                              f"{OutcomeBlock.__tablename__} where source_id <> {int(source_id)} and model_id in ",
                              sorted(set(g_mid.tolist())))
        if not rows:
            return None
        key = (g_mid[group] << 32) | prompt.astype(np.int64)  # model id, prompt id (both below 2^31)
        order = np.argsort(key, kind="stable")
        keys, mine = key[order], means[order].astype(np.float32)
        o_key = np.concatenate([(np.int64(m) << 32) | np.frombuffer(p, dtype="<i4").astype(np.int64)
                                for _, m, _, p, _ in rows])
        o_score = np.concatenate([np.frombuffer(sc, dtype="<f4") for *_, sc in rows])
        o_row = np.repeat(np.arange(len(rows)), [len(p) // 4 for _, _, _, p, _ in rows])
        at = np.minimum(np.searchsorted(keys, o_key), len(keys) - 1)
        shared = keys[at] == o_key
        differ = shared & (mine[at] != o_score)
        if not differ.any():
            return None
        bad = np.unique(o_key[differ])
        k = int(bad[0])  # the example: the lowest (model id, prompt id) that disagrees
        first = int(np.flatnonzero(differ & (o_key == k))[0])
        cell = int(order[at[first]])
        model, bench = cols.groups[int(group[cell])]
        h = {v: h for h, v in pids.items()}[int(prompt[cell])]
        pid = cols.order.get(bench, {}).get(h)
        pid = h[:12] if pid is None else repr(str(pid))  # a source without prompt ids: the text's hash, as errors show it
        s_id, _, o_bench, _, _ = rows[int(o_row[first])]
        other = conn.execute(select(Source.location).where(Source.id == s_id)).scalar_one()
        o_name = conn.execute(select(Benchmark.name).where(Benchmark.id == o_bench)).scalar_one()
        values = np.r_[float(mine[at[first]]), o_score[shared & (o_key == k)].astype(np.float64)]
        from ..sources.common import number_shown

        n = len(bad)
        there = f" (as {o_name})" if o_name != bench else ""
        return (f"{location}: {n} model+prompt cell{' of this source disagrees' if n == 1 else 's of this source disagree'}"
                f" with another source's outcome of the same model on the same prompt (e.g. {model!r} on {bench} "
                f"{pid}: {number_shown(mine[at[first]])} here, "
                f"{number_shown(o_score[first])} in {other}{there}); both are kept and the index uses their mean "
                f"({number_shown(round(float(values.mean()), 6))} there): check that the sources ran the same model the same "
                "way (revision, settings, metric), or give the model another name in one of them to keep them apart")

    @staticmethod
    def _benchmark_kept(conn, benchmark_id: int, existing, values: dict) -> dict:
        """The fields of ``values`` (what this source, its stored row ``existing``, None if new, reads the benchmark
        ``benchmark_id`` with) that keep the value the benchmark is recorded with, field -> that value: the recorded
        metadata (metric, group, harness task, few-shot count, config) describes the outcomes of the benchmark's other
        sources, so a source reading it otherwise does not overwrite it (the caller says so); a field not recorded
        yet is filled in, and the benchmark's only source records its own. Before, each ingest overwrote the metric
        (until the metric alone kept its first value) and the other fields, so the last source read won."""
        if not values:
            return {}
        row = conn.execute(select(*(getattr(Benchmark, f) for f in values)).where(Benchmark.id == benchmark_id)).one()
        differ = {f: r for f, r in zip(values, row) if r not in (None, {}) and r != values[f]}
        if not differ:
            return {}
        others = select(OutcomeBlock.id).where(OutcomeBlock.benchmark_id == benchmark_id)
        if existing is not None:
            others = others.where(OutcomeBlock.source_id != existing.id)
        return differ if conn.execute(others.limit(1)).first() is not None else {}

    @staticmethod
    def _block_prompts(conn, source_id: int) -> dict[int, set[int]]:
        """Benchmark id -> the prompt ids of the source's outcome blocks there (:func:`_distinct_prompt_ids`)."""
        blobs: dict[int, list] = {}
        for bid, p in conn.execute(select(OutcomeBlock.benchmark_id, OutcomeBlock.prompt_ids)
                                   .where(OutcomeBlock.source_id == source_id)).all():
            blobs.setdefault(bid, []).append(p)
        return {bid: _distinct_prompt_ids(bs) for bid, bs in blobs.items()}

    @staticmethod
    def _prune_membership(conn, was: dict[int, set[int]], kept: dict[int, set[int]]) -> int:
        """After a source's outcomes were replaced or deleted: take out of each benchmark the prompts the old outcomes
        put there (``was``) that neither the new revision lists there (``kept``) nor any stored outcome block of the
        benchmark still holds (a prompt edited, moved to another benchmark, or dropped); the vectors of a benchmark
        that lost prompts are deleted (the next pass computes them again), and a benchmark left without prompts and
        outcomes is deleted. Membership only ever grew before, so a benchmark kept the prompts of every revision.
        Returns how many memberships were removed."""
        removed = 0
        for bid in sorted(was):
            gone = was[bid] - kept.get(bid, set())
            if not gone:
                continue
            gone -= _distinct_prompt_ids(
                conn.execute(select(OutcomeBlock.prompt_ids).where(OutcomeBlock.benchmark_id == bid)).scalars())
            if not gone:
                continue
            for c in chunks(sorted(gone)):
                conn.execute(delete(BenchmarkPrompt).where(BenchmarkPrompt.benchmark_id == bid,
                                                           BenchmarkPrompt.prompt_id.in_(c)))
            conn.execute(delete(BenchmarkVectorRow).where(BenchmarkVectorRow.benchmark_id == bid))
            removed += len(gone)
            left = conn.execute(select(BenchmarkPrompt.prompt_id).where(BenchmarkPrompt.benchmark_id == bid).limit(1)).first()
            blocks = conn.execute(select(OutcomeBlock.id).where(OutcomeBlock.benchmark_id == bid).limit(1)).first()
            if left is None and blocks is None:
                conn.execute(delete(Benchmark).where(Benchmark.id == bid))
        return removed

    def _insert_blocks(self, conn: Session, blocks: list[dict]) -> None:
        """One executemany per 2,000 blocks, straight to the driver (SQLAlchemy's per-row parameter processing
        cost more than the insert itself for 32k blocks; these columns need none)."""
        cols = ("source_id", "model_id", "benchmark_id", "n", "prompt_ids", "scores", "digest", "model_revision")
        self._driver_insert(conn, OutcomeBlock.__tablename__, cols, blocks, chunk=2000)
