"""Publish the model records as a Hub dataset (``taskspace publish``) and pull them into another installation
(``taskspace pull``). The files and their columns: :mod:`indexer.dataset`; the card: :mod:`indexer.card`; the Hub:
:mod:`indexer.hub` only.

**publish** (:func:`publish`): every space with model vectors (or the one ``space`` names) becomes
``models/<space>.parquet`` + ``patterns/<space>.parquet`` (with each pattern's observed prompts, a bitmask over
``prompts/<space>.parquet``: :func:`_pattern_observed`), with ``spaces.parquet``, ``benchmarks.parquet`` and the
card. The files are a function of the SQL records alone (no publish time in them), so publishing unchanged
records gives the same bytes. Against the Hub: the token must be there and able to write
(:meth:`~indexer.hub.HubClient.check_write_access`), the dataset is created when missing, the files it holds now
are compared with the new ones, and when any differs there is exactly one commit (its parent the commit compared
against) whose message counts the model records added, changed and removed; nothing differs -> no commit.
``dry_run=DIR`` writes the files a publish to an empty repository would commit into ``DIR`` and talks to no one;
``DIR`` must be new, empty or an earlier dry run's output, whose record files this one does not write are removed.
The dataset holds exactly what a publish selected: with ``space`` the files of other spaces are deleted (and their
records counted as removed).

Licences: every ingested source is looked up for a ``SOURCE.md`` / ``PROVENANCE.md`` (in its folder or the two
above it) whose ``License`` line says what it is under; a non-commercial or share-alike one (NC, SA,
"non-commercial", "share-alike") refuses the publish unless ``include_restricted``; the card lists them all.

**pull** (:func:`pull`): ``hub:ORG/NAME[@REV]`` (downloaded through the Hub cache at one commit) or a local folder.
Everything is read and validated first (:func:`indexer.dataset.read`: bad rows are reported by file and row), then
every space is checked against this installation: its encoder must be installed here with the same revision
(:class:`~indexer.errors.EncoderError`, exit 5) and give its width, and no space already present may have the same
settings with another dimension (:class:`~indexer.errors.DimensionError`, naming both). Then, under the ``index`` lock (publish takes it too, to read one finished pass), SQL is written in one
transaction for all spaces (:meth:`~indexer.store.sql.Store.import_spaces`), and only then Qdrant: the models and
benchmarks collections of each space are rebuilt from SQL (:func:`indexer.sync.reindex`). A pulled space is
read-only until raw results are ingested (:mod:`indexer.store.sql_records`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import dataset
from .errors import ConfigError, DimensionError, EncoderError, HubError, InputError, NotFoundError, arg, counted
from .records import ToDict

if TYPE_CHECKING:
    from .hub import HubOutageError

log = logging.getLogger(__name__)

#: a licence line that makes a source restricted: non-commercial or share-alike
_RESTRICTED_WORDS = re.compile(r"non-?commercial|share-?alike", re.IGNORECASE)
_RESTRICTED_CODES = re.compile(r"(?<![A-Za-z])(NC|SA)(?![A-Za-z])")  # CC BY-NC, BY-SA, BY-NC-SA
_LICENCE_LINE = re.compile(r"licen[cs]e", re.IGNORECASE)


# ----------------------------------------------------------------------------------------------- licences
def _restricted(text: str) -> bool:
    return bool(_RESTRICTED_WORDS.search(text) or _RESTRICTED_CODES.search(text))


def _unmarked(text: str) -> str:
    """Markdown text without its emphasis and code marks: ``*``, backticks, and ``_`` at a word's edge; an underscore
    inside a word (``evalarena_code``, ``mmlu_pro``) is part of a name and stays."""
    return re.sub(r"(?<![^\W_])_+|_+(?![^\W_])", "", re.sub(r"[*`]", "", text))


def _title(path: Path) -> str | None:
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("#"):
            return _unmarked(line.lstrip("# ")).replace("|", "").strip()[:200] or None
    return None


def licence_of(location: str) -> tuple[str, bool, str | None]:
    """(licence text, restricted, the file it was read from) of an ingested source's location. A local path is
    looked up for ``SOURCE.md``/``PROVENANCE.md`` in it and the two folders above; other sources (Hub datasets)
    are ``unknown``."""
    if location.startswith(("hub:", "hub-org:", "pulled:")):
        return "unknown (see the dataset's card on the Hub)", False, None
    p = Path(location)
    folders = [p] if p.is_dir() else []
    folders += list(p.parents)[:2]
    for folder in folders:
        for name in ("SOURCE.md", "PROVENANCE.md"):
            f = folder / name
            if f.is_file():
                lines = [ln.strip() for ln in f.read_text(errors="replace").splitlines() if _LICENCE_LINE.search(ln)]
                if not lines:
                    continue
                text = _unmarked(lines[0]).lstrip("-# ").strip()
                text = re.sub(r"^licen[cs]e\s*:?\s*", "", text, flags=re.IGNORECASE) or text
                return text[:300], _restricted(" ".join(lines)), str(f)
    return "unknown (no SOURCE.md or PROVENANCE.md found)", False, None


def _source_name(location: str) -> str:
    """How a source is named in the published files: a Hub spec as it is, a local path by its last two parts (no
    local folder names beyond those)."""
    return location if location.startswith("hub") else "/".join(Path(location).parts[-2:])


def source_licences(store) -> list[dict]:
    """``{location, kind, licence, restricted, file}`` of every source that holds outcomes, and of every pulled
    space (named in the card of a home that also holds one; a pulled space itself is not published again,
    :func:`build`)."""
    out = []
    for s in store.list_sources():
        if s.kind == "pulled":
            out.append({"location": s.seen_revision or s.location, "name": s.seen_revision or s.location,
                        "title": "records pulled from there", "kind": "pulled",
                        "licence": f"as published at {s.seen_revision} (see its card)", "restricted": False,
                        "file": None})
            continue
        if not s.n_outcomes:
            continue
        text, restricted, f = licence_of(s.location)
        name = _source_name(s.location)
        out.append({"location": s.location, "name": name, "title": _title(Path(f)) if f else None, "kind": s.kind,
                    "licence": text.replace("|", "/"), "restricted": restricted, "file": f})
    return out


# ----------------------------------------------------------------------------------------------- building the files
@dataclass
class RecordSet:
    """The files of a publish, and per space the model records (for counting what changed)."""

    files: dict[str, bytes]
    records: dict[tuple[str, str], dict]  # (space, model) -> row without the vector, plus its vector bytes
    spaces: list[str]
    sources: list[dict]


def _version() -> str:
    from . import __version__

    return __version__


def _prompt_rows(store, sp, encoder=None) -> tuple[list, list, list]:
    """(hashes, benchmarks, index rows) of the space's indexed prompts: the points its prompts collection is built
    from (:func:`indexer.sync.reindex`: SQL texts, the encoder's cache); empty without prompts in SQL."""
    from .sync import _prompt_points

    hashes, benches, vecs = [], [], []
    for p in _prompt_points(store, sp, encoder):
        hashes.append(p.key)
        benches.append(list(p.payload["benchmarks"]))
        vecs.append(np.asarray(p.vector, dtype=np.float32))
    return hashes, benches, vecs


def _pattern_observed(store, mvs, chunk: int = 256) -> dict[str, set[str]]:
    """pattern key -> the text hashes of the prompts its models were observed on, as SQL's outcomes say (what the
    publisher's own searches compute coverage from, :func:`indexer.query.observed_shares`), for each pattern whose
    models SQL holds one and the same set for. A pattern whose models disagree (a vector out of step with outcomes
    ingested since it was solved) is left out: a pulled index says coverage unknown for its models, not a wrong one."""
    members: dict[str, list[str]] = {}
    for mv in mvs:
        if mv.pattern:
            members.setdefault(mv.pattern, []).append(mv.model)
    models = [m for ms in members.values() for m in ms]
    seen: dict[str, np.ndarray] = {}
    for lo in range(0, len(models), chunk):
        part = models[lo:lo + chunk]
        got: dict[str, list[np.ndarray]] = {}
        for m, _, pids, _ in store.outcome_blocks(part):
            got.setdefault(m, []).append(np.asarray(pids, dtype=np.int64))
        for m, ps in got.items():
            seen[m] = np.unique(np.concatenate(ps))
    sets: dict[str, np.ndarray] = {}
    for key, ms in members.items():
        first = seen.get(ms[0])
        if first is None or not all(m in seen and np.array_equal(seen[m], first) for m in ms[1:]):
            log.warning("publish: the models of coverage pattern %s were not all observed on the same prompts (or "
                        "have no outcomes); a pulled index says their coverage is unknown", key)
            continue
        sets[key] = first
    ids = np.unique(np.concatenate(list(sets.values()))) if sets else np.zeros(0, dtype=np.int64)
    hash_of = dict(zip(ids.tolist(), store.prompt_hashes(ids.tolist()))) if ids.size else {}
    return {key: {hash_of[i] for i in s.tolist() if i in hash_of} for key, s in sets.items()}


def build(store, space=None, *, include_restricted: bool = False, repo_id: str = "ORG/NAME",
          encoder=None) -> RecordSet:
    """The files a publish of ``space`` (default: every space with model vectors) writes; see the module docstring."""
    from .space import SpaceSpec, space_name
    from .store.sql_types import looks_like_repo_id
    from .sync import resolve_spaces

    # the spaces first: a --space naming none is said as such (exit 2), not as a licence refusal (exit 1)
    spaces = [sp for sp in resolve_spaces(store, space) if store.model_vector_keys(sp.id)]
    if not spaces:
        raise NotFoundError("nothing to publish: no space has model vectors; run `taskspace index` first")
    sources = source_licences(store)
    restricted = [s for s in sources if s["restricted"]]
    if restricted and not include_restricted:
        s = restricted[0]
        more = f" (and {len(restricted) - 1} more)" if len(restricted) > 1 else ""
        raise InputError(f"source {s['location']} is under a restricted licence ({s['licence']}, from {s['file']}){more}: "
                         f"its derived records are not published; pass {arg('include_restricted', True)} to publish them anyway "
                         "(the card lists every licence)")
    for sp in spaces:  # a pulled space: its records are published where they came from, and it holds too little here
        origin = store.space_origin(sp.id)
        if origin is not None:
            others = f" (or name another space with {arg('space')})" if len(store.list_spaces()) > 1 else ""
            raise InputError(f"space {space_name(sp)} was pulled from {origin}: a pulled space holds no results, "
                             "prompt texts or sources, so publishing it again would drop its prompts file and the "
                             "provenance of its records; publish from the home that indexed its results, or index raw "
                             f"results into this home first (`taskspace index`){others}", item=f"space {space_name(sp)}")
    orphans = {sp.id: store.orphan_model_vectors(sp.id) for sp in spaces}
    # the spaces a --space could publish instead (before: "or publish another space with --space" whenever there were
    # two, though a dropped source leaves its vectors in every space not indexed since, so often in all of them)
    clean = [space_name(o) for o in spaces if not orphans[o.id]]
    for sp in spaces:  # vectors of results no longer held: a source dropped since the space's last pass
        gone = orphans[sp.id]
        if gone:
            raise InputError(f"space {space_name(sp)} holds the vectors of {counted(len(gone), 'model')} whose results are no "
                             f"longer stored ({', '.join(g[:80] for g in gone[:3])}{', ...' if len(gone) > 3 else ''}): their source "
                             "was dropped, so their records would be published under no source and licence; index "
                             f"that space first, which removes them (`TASKSPACE_METHOD={sp.method} taskspace index`)"
                             + (f", or publish a space without them alone, {' / '.join(arg('space', c, quote=False) for c in clean)}"
                                if clean else ""),
                             item=f"space {space_name(sp)}")  # named once (before: "NAME: space NAME holds ...")
    for sp in spaces:
        _warn_stale(store, sp)
    version = _version()
    files: dict[str, bytes] = {}
    records: dict[tuple[str, str], dict] = {}
    space_rows, bench_rows, counts = [], [], {}
    bench_meta = {b.name: b for b in store.list_benchmarks()}
    n_by = store.model_benchmark_counts()
    prov = store.model_provenance()
    aliases = store.aliases_by_model()
    for sp in spaces:
        spec = SpaceSpec.of(sp)
        name = space_name(sp)
        parts = dataset.layout(sp.dim, sp.params or {})
        lay = dataset.layout_string(parts)
        enc_name, _, enc_rev = sp.encoder.rpartition("@")
        mvs = store.load_model_vectors(sp.id)
        meta = {m.key: m for m in store.list_models(keys=[mv.model for mv in mvs])}
        rows, vecs = [], []
        for mv in mvs:
            m = meta.get(mv.model)
            row = {
                "model": mv.model, "aliases": aliases.get(mv.model, [mv.model]), "hub_repo_id": mv.model if looks_like_repo_id(mv.model) else None,
                "kind": getattr(m, "kind", None),
                "model_revision": getattr(m, "revision", None) or prov.get(mv.model, (None, []))[0],
                "sources": [f"{_source_name(loc)}@{rev}" if rev else _source_name(loc)
                            for loc, rev in prov.get(mv.model, (None, []))[1]],
                "author": getattr(m, "author", None), "license": getattr(m, "license", None),
                "num_parameters": getattr(m, "num_parameters", None),
                "num_parameters_from": getattr(m, "num_parameters_from", None),  # an adapter's: its base model
                "pipeline_tag": getattr(m, "pipeline_tag", None),
                "library": getattr(m, "library", None), "tags": list(getattr(m, "tags", None) or []) if m else None,
                "gated": getattr(m, "gated", None), "downloads": getattr(m, "downloads", None),
                "likes": getattr(m, "likes", None), "base_model": getattr(m, "base_model", None),
                "created_at": dataset._iso(getattr(m, "created_at", None)),
                "last_modified": dataset._iso(getattr(m, "last_modified", None)),
                "space": name, "encoder": sp.encoder, "encoder_revision": enc_rev or None, "dim": int(sp.dim),
                "method": sp.method, "lam": float(sp.lam), "eps": float(sp.eps), "layout": lay,
                "pattern": mv.pattern, "model_lambda": mv.lam, "noise": mv.noise, "n_prompts": int(mv.n_prompts),
                "benchmarks": [{"name": b, "accuracy": (mv.accuracy or {}).get(b), "n": n_by.get((mv.model, b))}
                               for b in (mv.benchmarks or [])],
                "inputs_digest": mv.inputs_digest, "computed_at": dataset._iso(mv.computed_at),
                "taskspace_version": version,
            }
            vec = np.asarray(mv.vector, dtype=np.float32)
            rows.append(row)
            vecs.append(vec)
            records[(name, mv.model)] = dict(row, vector=vec.tobytes())
        files[dataset.models_file(name)] = dataset.models_table(rows, np.asarray(vecs, dtype=np.float32))
        hashes, benches, pvecs = _prompt_rows(store, sp, encoder)
        observed = dataset.pattern_masks(_pattern_observed(store, mvs), hashes) if hashes else None
        files[dataset.patterns_file(name)] = dataset.patterns_table(list(store.load_patterns(sp.id).values()), observed)
        if hashes:
            files[dataset.prompts_file(name)] = dataset.prompts_table(hashes, benches, pvecs)
        bvs = store.load_benchmark_vectors(sp.id)
        for bv in bvs:
            b = bench_meta.get(bv.benchmark)
            bench_rows.append({"benchmark": bv.benchmark, "group": getattr(b, "group", None),
                               "source_task": getattr(b, "source_task", None), "metric": getattr(b, "metric", None),
                               "num_fewshot": getattr(b, "num_fewshot", None),
                               "config": json.dumps(getattr(b, "config", None) or {}, sort_keys=True),
                               "prompt_count": getattr(b, "n_prompts", None) or bv.n_prompts, "space": name,
                               "vector": np.asarray(bv.vector, dtype=np.float32), "n_prompts": int(bv.n_prompts),
                               "computed_at": dataset._iso(bv.computed_at)})
        cal = store.get_space_calibration(sp.id)
        prior = store.get_space_prior(sp.id)
        space_rows.append({
            "prior": None if prior is None else [float(x) for x in prior.vector],
            "prior_models": None if prior is None else int(prior.n_models),
            "space": name, "key": spec.key, "encoder": sp.encoder, "encoder_name": enc_name or sp.encoder,
            "encoder_revision": enc_rev or None, "encoder_dim": dataset.encoder_dim_of(sp.dim, sp.params or {}),
            "dim": int(sp.dim), "lam": float(sp.lam), "eps": float(sp.eps), "method": sp.method,
            "params": json.dumps(dict(sp.params or {}), sort_keys=True), "layout": json.dumps(parts),
            "calibration_a": None if cal is None else float(cal.a), "calibration_b": None if cal is None else float(cal.b),
            "calibration_n_cells": None if cal is None else int(cal.n_cells),
            "calibration_n_models": None if cal is None else int(cal.n_models),
            "calibration_spread": None if cal is None else float(cal.spread), "n_models": len(rows),
            **{f"calibration_{k}": (None if cal is None or getattr(cal, k) is None else float(getattr(cal, k)))
               for k in ("level", "specific", "shared", "uncovered")},
            **{c: (None if cal is None or getattr(cal, "knots", None) is None else list(cal.knots[j]))
               for j, c in enumerate(dataset.SPACE_BEND)},
            "calibration_lam_cap": None if cal is None or cal.lam_cap is None else float(cal.lam_cap),
            "calibration_region_var": None if cal is None or cal.region_var is None else float(cal.region_var),
            "calibration_links": None if cal is None or cal.links is None else [list(g) for g in cal.links],
            "created_at": dataset._iso(sp.created_at)})
        counts[name] = {"models": len(rows), "benchmarks": len(bvs), "prompts": len(hashes)}
    files[dataset.SPACES] = dataset.spaces_table(space_rows)
    files[dataset.BENCHMARKS] = dataset.benchmarks_table(bench_rows)
    from .card import card

    card_spaces = [dict(r, layout=json.loads(r["layout"]), params_dict=json.loads(r["params"])) for r in space_rows]
    files[dataset.CARD] = card(repo_id, card_spaces, sources, counts, version).encode()
    return RecordSet(files, records, [r["space"] for r in space_rows], sources)


def _records_of(files: dict[str, Path]) -> dict[tuple[str, str], dict]:
    """(space, model) -> record (with its vector bytes) of the model files of an earlier publish."""
    import pyarrow.parquet as pq

    out = {}
    for name, path in files.items():
        if not name.startswith(dataset.MODELS_DIR + "/"):
            continue
        try:
            table = pq.read_table(path)
            rows = table.drop_columns(["vector"]).to_pylist()
            vecs = table.column("vector").to_pylist()
        except Exception as exc:  # noqa: BLE001 - an earlier file we cannot read counts as replaced
            log.warning("cannot read %s of the published dataset (%s); its records count as removed", name, exc)
            continue
        for r, v in zip(rows, vecs):
            out[(r.get("space"), r.get("model"))] = dict(r, vector=np.asarray(v, dtype=np.float32).tobytes())
    return out


def _same_record(old: dict, new: dict) -> bool:
    """Whether two model records hold the same values, a column one of them lacks read as null (as :func:`pull`
    reads records published before the column was added)."""
    return all(old.get(c) == new.get(c) for c in old.keys() | new.keys())


def _diff(old: dict, new: dict) -> tuple[int, int, int]:
    """(added, changed, removed) model records: a record whose only difference is a column the earlier one lacks,
    null in it, is unchanged (before, a publish after an upgrade that added a column counted every record changed)."""
    added = sum(1 for k in new if k not in old)
    removed = sum(1 for k in old if k not in new)
    changed = sum(1 for k, r in new.items() if k in old and not _same_record(old[k], r))
    return added, changed, removed


#: the columns of a model record that say when and by which taskspace it was computed and published, not what it
#: holds, with what a record differing in it alone is
_STAMPS = {"computed_at": "solved again to the same values", "taskspace_version": "published by another version"}


def _only_stamps(old: dict, new: dict) -> tuple[int, list[str]]:
    """(how many of the changed model records differ only in :data:`_STAMPS`, those stamps): solved again to the
    same vector and values (every model of a pass that fits the calibration map again: an upgraded home's first
    pass), or published by another taskspace version."""
    n, stamps = 0, set()
    for k, r in new.items():
        if k not in old or _same_record(old[k], r):
            continue
        differ = {c for c in old[k].keys() | r.keys() if old[k].get(c) != r.get(c)}
        if differ <= _STAMPS.keys():
            n, stamps = n + 1, stamps | differ
    return n, sorted(stamps)


def _new_columns(old: dict, new: dict) -> list[str]:
    """The columns of the ``new`` model records that none of the ``old`` ones has (an older taskspace published them
    without): why model files are rewritten whose records did not change."""
    if not old or not new:
        return []
    had = set().union(*(r.keys() for r in old.values()))
    return sorted(set().union(*(r.keys() for r in new.values())) - had)


def _unnamed_models(old_paths: dict[str, Path], deletes: list[str]) -> list[str]:
    """The deleted files under models/ whose space the published ``spaces.parquet`` does not name (a file taskspace
    did not write: a user's own copy of the records), sorted; every deleted models file where that table is
    missing or cannot be read is taskspace's (its records count as removed, as before)."""
    import pyarrow.parquet as pq

    gone = [f for f in deletes if f.startswith(dataset.MODELS_DIR + "/")]
    if not gone or dataset.SPACES not in old_paths:
        return []
    try:
        named = {dataset.models_file(s) for s in pq.read_table(old_paths[dataset.SPACES], columns=["space"])
                 .column("space").to_pylist()}
    except Exception as exc:  # noqa: BLE001 - an unreadable table: count the files' records, as before
        log.warning("cannot read %s of the published dataset (%s); every deleted models file counts as records",
                    dataset.SPACES, exc)
        return []
    return sorted(f for f in gone if f not in named)


# ----------------------------------------------------------------------------------------------- publish
@dataclass
class PublishResult(ToDict):
    repo: str
    commit: str | None  # None: nothing changed (or a dry run)
    added: int
    changed: int
    removed: int
    files: list[str]  # the files written or committed
    deleted: list[str] = field(default_factory=list)
    dry_run: str | None = None
    message: str | None = None

    def as_dict(self) -> dict:
        return {"repo": self.repo, "commit": self.commit, "added": self.added, "changed": self.changed,
                "removed": self.removed, "files": self.files, "deleted": self.deleted, "dry_run": self.dry_run,
                "message": self.message}


def commit_message(added: int, changed: int, removed: int, spaces: int, new_columns: list[str] = (),
                   stamped: tuple[int, list[str]] = (0, []), others: list[str] = (), unnamed: list[str] = ()) -> str:
    """The commit's summary; ``new_columns``: the columns the model files gain (an older taskspace published them
    without), said once as why the files are rewritten (a record lacking one reads as null: not counted changed);
    ``stamped``: how many of the ``changed`` differ only in when or by which version they were computed, and in which
    of those columns (:func:`_only_stamps`); ``others``: the files other than model files the commit writes or deletes,
    named when no model record changed and no new column explains the commit (a card listing a new source);
    ``unnamed``: the files under models/ the commit deletes that no published space names (:func:`_unnamed_models`)."""
    cols = ", ".join(new_columns)
    n, stamps = stamped
    more = (f"; {n} of the changed {'differs' if n == 1 else 'differ'} only in {' and '.join(stamps)} ({' or '.join(_STAMPS[c] for c in stamps)})"
            if n else "")
    more += (f"; the model files gain the column{'s' if len(new_columns) > 1 else ''} {cols}, which the records "
             "published before lack" if new_columns else "")
    if others and not (added or changed or removed or new_columns):  # before: a commit said to change nothing
        more += f"; no model record changed, only {', '.join(others)}"
    if unnamed:
        more += (f"; deleted {', '.join(unnamed)}, which no published space names ({dataset.MODELS_DIR}/*.parquet is "
                 "taskspace's)")
    return (f"taskspace publish: {counted(added, 'model record')} added, {changed} changed, {removed} removed "
            f"({counted(spaces, 'space')}){more}")


def _check_dry_run_dir(path: Path) -> None:
    """A ConfigError naming ``--dry-run PATH`` unless the files can be written there (a folder that exists and can
    be written, or a path whose nearest existing parent is such a folder)."""
    from .config import check_output_folder

    check_output_folder(path, "dry_run", "the records")
    if path.is_dir() and any(path.iterdir()) and not (path / dataset.SPACES).is_file():
        # a folder of other files: a dry run removes the record files it no longer produces, so it only writes
        # into a new or empty folder or over an earlier dry run (which holds spaces.parquet)
        raise ConfigError(f"{arg('dry_run', str(path), quote=False)}: the folder is not empty and holds no earlier dry run's records (no "
                          f"{dataset.SPACES}); give a new or empty folder")


def _write_all(out: Path, files: dict) -> None:
    """Write the record ``files`` into the dry run folder ``out`` as one set: each to a temporary file beside it first,
    then all renamed into place, ``spaces.parquet`` last. A run that fails (a full disk) or is killed while writing
    them leaves the earlier dry run's files whole (a failure removes its temporary files; a kill leaves hidden
    ``.<name>.<pid>.tmp`` files) instead of a mix of new and old records that pulls as one set; the error names the
    file and says the folder is as it was."""
    import os

    tmps: list[tuple[Path, Path]] = []
    try:
        for name, data in sorted(files.items(), key=lambda kv: (kv[0] == dataset.SPACES, kv[0])):
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            tmps.append((tmp, target))
            tmp.write_bytes(data)
    except OSError as exc:
        for tmp, _ in tmps:
            tmp.unlink(missing_ok=True)
        raise ConfigError(f"{arg('dry_run', str(out), quote=False)}: cannot write {name}: {exc.strerror or exc}; nothing of this run was "
                          "written (the folder holds what it held before)") from exc
    for tmp, target in tmps:
        os.replace(tmp, target)


def _warn_stale(store, sp) -> None:
    """A warning when a space to publish holds models whose vector is missing or older than their results (SQL's
    :meth:`~indexer.store.sql.Store.stale_models`): results ingested since the last pass, or a space the configured
    method did not build (an older taskspace's default method), which no pass updates. Its records are published as
    they are; before, without a word, so an upgraded home published its old space's vectors of last month's results."""
    from .config import get_settings
    from .space import configured, space_name
    from .spaces import configured_spec, update_command

    stale = store.stale_models(sp.id)
    if not stale:
        return
    name, spec = space_name(sp), configured(get_settings())
    mine = configured_spec(lenient=True)
    if mine.matches(sp):
        why = "results were ingested since the last indexing pass: run `taskspace index` first to publish them"
    elif spec.same_method(sp):  # the configured method on another encoder (before: "run `taskspace index` first",
        # whose pass updates the configured encoder's space alone and left this one as stale as it was)
        cmd = update_command(sp)
        why = (f"it was built with encoder {sp.encoder}, not the configured {mine.encoder or get_settings().encoder} "
               "(TASKSPACE_ENCODER), so no indexing pass updates it" + (f": `{cmd}` re-solves it first" if cmd else ""))
    else:
        mine = [space_name(o) for o in store.list_spaces() if spec.same_method(o)]
        why = (f"it was built by method {sp.method}, not as this taskspace builds the configured {spec.method} "
               "(TASKSPACE_METHOD), so no indexing pass updates it" +
               (f": `{arg('space', mine[-1], quote=False)}` publishes the configured method's space alone" if mine else ""))
    more = f" (+{len(stale) - 3} more)" if len(stale) > 3 else ""
    log.warning("publish: space %s holds %s whose vector is missing or older than their results (%s%s); %s; "
                "its records are published as they are", name, counted(len(stale), "model"), ", ".join(sorted(stale)[:3]), more, why)


def _stale_dry_run_files(out: Path, files: dict) -> list[str]:
    """The record files an earlier dry run left in ``out`` that this one does not write (a space dropped or renamed):
    the managed layout only (:func:`indexer.dataset.is_managed`); other files are left alone, as on the Hub."""
    found = [out / n for n in (dataset.SPACES, dataset.BENCHMARKS, dataset.CARD)]
    for sub in (dataset.MODELS_DIR, dataset.PATTERNS_DIR, dataset.PROMPTS_DIR):
        if (out / sub).is_dir() and not (out / sub).is_symlink():
            found.extend((out / sub).iterdir())
    rels = (p.relative_to(out).as_posix() for p in found if p.is_file() or p.is_symlink())
    return sorted(r for r in rels if dataset.is_managed(r) and r not in files)


def publish(repo_id: str, *, space=None, private: bool = False, dry_run: str | Path | None = None,
            include_restricted: bool = False, store=None, hub=None) -> PublishResult:
    """Publish the records (see the module docstring)."""
    from .hub import HubClient, is_valid_repo_id

    if not is_valid_repo_id(repo_id):
        raise InputError(f"{repo_id!r} is not a Hub repo id ORG/NAME")
    if dry_run is not None:  # before the records are read: a file there raised FileExistsError at the end
        _check_dry_run_dir(Path(dry_run))
    else:  # the token before the records are built (minutes on a large home, the encoder for the prompt rows)
        hub = hub or HubClient()
        hub.again = "nothing was published; run `taskspace publish` again later"  # not "the next run": none follows
        hub.check_write_access(repo_id)
    own = store is None
    if own:  # it only reads: a home never indexed is said so, and not created
        from .query import open_existing_store

        store = open_existing_store()
    try:
        with store.lock("index"):  # the records of one finished pass, not of one half-way through
            rs = build(store, space, include_restricted=include_restricted, repo_id=repo_id)
    finally:
        if own:
            store.close()
    files = dict(rs.files)
    if dry_run is not None:
        out = Path(dry_run)
        out.mkdir(parents=True, exist_ok=True)
        stale = _stale_dry_run_files(out, files)  # the folder then holds exactly what an empty repository gets
        _write_all(out, files)
        for name in stale:  # after the new set is in place: a failed write leaves the earlier run whole
            (out / name).unlink()
        n = len(rs.records)
        return PublishResult(repo_id, None, n, 0, 0, sorted(files), stale, dry_run=str(out),
                             message=commit_message(n, 0, 0, len(rs.spaces)))
    hub.create_dataset(repo_id, private=private)
    snap = hub.repo_snapshot(repo_id, None, "dataset")
    foreign = [f for f in snap.files if f != ".gitattributes"]
    if foreign and dataset.SPACES not in snap.files:  # another dataset (a typo): its card would be replaced
        more = f", ... {len(foreign)} files" if len(foreign) > 5 else ""
        raise ConfigError(f"{repo_id}: the dataset holds files that are not taskspace records ({', '.join(foreign[:5])}"
                          f"{more}) and no {dataset.SPACES}; publishing would replace its README.md and add the records "
                          "beside them: publish to a new or empty dataset, or to one taskspace published")
    managed = [f for f in snap.files if dataset.is_managed(f)]
    old_paths: dict[str, Path] = {}
    with hub.using(repo_id, "dataset"):  # from the download to the reading: no other process's keep_only removes it
        if managed:
            root = hub.download(snap, managed)
            hub.keep_only(snap)  # a scheduled publish's cache: the revision it compares with, not every one it read
            old_paths = {f: root / f for f in managed}
        adds = {n: d for n, d in files.items() if n not in old_paths or old_paths[n].read_bytes() != d}
        deletes = sorted(f for f in old_paths if f not in files)
        if not adds and not deletes:
            log.info("publish %s: nothing changed since commit %s; no commit", repo_id, snap.sha)
            return PublishResult(repo_id, None, 0, 0, 0, [], message=None)
        # a models file no space of the published spaces.parquet names is not taskspace's (a user's own copy): it is
        # deleted (models/*.parquet is managed) and said so, its rows not counted as removed records
        unnamed = _unnamed_models(old_paths, deletes)
        # the records of the model files that changed (an unchanged file holds the same records)
        changed_models = {f: p for f, p in old_paths.items() if f.startswith(dataset.MODELS_DIR + "/") and
                          (f in adds or f in deletes) and f not in unnamed}
        new_records = {k: r for k, r in rs.records.items() if dataset.models_file(k[0]) in adds}
        old_records = _records_of(changed_models)
    added, changed, removed = _diff(old_records, new_records)
    message = commit_message(added, changed, removed, len(rs.spaces), _new_columns(old_records, new_records),
                             _only_stamps(old_records, new_records),
                             sorted(f for f in [*adds, *deletes] if not f.startswith(dataset.MODELS_DIR + "/")),
                             unnamed)
    sha = hub.commit(repo_id, adds, deletes, message, parent=snap.sha)
    log.info("published %s at %s: %s", repo_id, sha, message)
    return PublishResult(repo_id, sha, added, changed, removed, sorted(adds), deletes, message=message)


# ----------------------------------------------------------------------------------------------- pull
@dataclass
class PullResult(ToDict):
    origin: str
    spaces: list[dict]
    seconds: float
    #: offline, or with the Hub unreachable, a Hub record set read from the home's Hub cache: ``{revision, ref,
    #: variable, unreachable}`` (the commit used, the revision asked or ``main``, the variable that forbids Hub requests
    #: or None, what failed reaching the Hub or None); None otherwise
    cached: dict | None = None
    #: the spaces this home had pulled from the same dataset that the revision pulled no longer holds, removed
    #: (:func:`_drop_withdrawn`)
    removed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"origin": self.origin, "spaces": self.spaces, "seconds": round(self.seconds, 3), "cached": self.cached,
                "removed": self.removed}


@contextlib.contextmanager
def _named(origin: str):
    """Bad records of a Hub dataset are reported as ``hub:ORG/NAME@SHA``, not by the Hub cache folder they were
    downloaded into (a folder pulled in place keeps its path)."""
    try:
        yield
    except InputError as exc:
        if exc.file is not None or exc.item is None or exc.item == origin or not origin.startswith("hub:"):
            raise
        raise type(exc)(exc.message, item=origin) from None


def _fetch(spec: str, hub=None, space: str | None = None) -> tuple[Path, str, str, dict | None]:
    """(folder, origin, revision, cached) of a pull spec: ``hub:ORG/NAME[@REV]`` or a local folder. ``space`` (``pull
    --space``): from the Hub, the space table is downloaded first and the name checked against it (an unknown one is
    an error before the vectors are fetched), then only that space's files. Offline (``HF_HUB_OFFLINE``), a Hub spec
    is read from the home's Hub cache at the revision asked (none: the commit main was when it was last fetched) when
    the cache holds every file the records need (``cached`` then says which revision and the variable), else the
    offline refusal naming the variable and what the cache lacks. A Hub that cannot be reached (refused or failed
    connections, timeouts through the retries: :class:`~indexer.hub.HubUnreachableError`) or that answers 408/429/5xx
    through the retries (down, overloaded, rate limiting: :class:`~indexer.hub.HubUnavailableError`; not a
    401/403/404, which are answers) is read the same way from the cache, with a warning (:func:`cache_fallback_said`,
    which `taskspace ingest` gives too); a cache that cannot give the records leaves the Hub's error as it was."""
    from .hub import HubClient, HubOutageError
    from .ingest import parse_spec

    if spec.startswith("hub:"):
        # the CLI's rule (indexer.ingest.parse_spec): a malformed repo id or revision, and an @ with no revision
        # after it, which read the default branch here (`pull hub:org/repo@$REV`, REV unset) though `pull` refused it
        repo, rev = (got := parse_spec(spec)).target, got.revision
        hub = hub or HubClient()
        hub.again = "nothing was pulled; run `taskspace pull` again later"  # not "the next run": none follows
        if hub.offline:
            return _fetch_cached(hub, repo, rev or None, space)
        try:
            return _fetch_hub(hub, repo, rev or None, space)
        except HubOutageError as exc:  # an outage (no answer, or 408/429/5xx through the retries), not a 401/403/404
            return _fetch_cached(hub, repo, rev or None, space, unreachable=exc)
    root = Path(spec).expanduser()
    if not root.is_dir():
        raise InputError(f"{spec!r} is neither hub:ORG/NAME[@REVISION] nor a folder")
    root = root.resolve()
    return root, str(root), dataset.digest(root), None


def _fetch_hub(hub, repo: str, rev: str | None, space: str | None) -> tuple[Path, str, str, None]:
    """:func:`_fetch` of a Hub record set from the Hub (see there)."""
    snap = hub.repo_snapshot(repo, rev, "dataset", records=True)
    files = [f for f in snap.files if dataset.is_managed(f) and f != dataset.CARD]
    if dataset.SPACES not in files:
        raise NotFoundError(f"hub:{repo}@{snap.sha[:12]} holds no {dataset.SPACES}: not a taskspace record set")
    origin = f"hub:{repo}@{snap.sha}"
    if space is not None:  # its name checked on the small space table, before any vectors are downloaded
        with _named(origin):
            dataset.space_names(hub.download(snap, [dataset.SPACES]), [space])
        own = {dataset.models_file(space), dataset.patterns_file(space), dataset.prompts_file(space)}
        files = [f for f in files if f.count("/") == 0 or f in own]
    root = hub.download(snap, files)
    hub.keep_only(snap)  # the revision pulled (an offline pull reads it), not every one pulled before
    return root, origin, snap.sha, None


def cached_revision_said(sha: str, ref: str) -> str:
    """Which revision a record set read from the home's Hub cache is, as the pull says it: the one asked (a commit,
    whole or short) or the commit a branch or tag was when the cache last fetched it."""
    return ("the revision asked" if sha.startswith(ref) else
            f"the commit {ref} was when this home's Hub cache last fetched it")


def cache_fallback_said(outage: "HubOutageError", done: str, snap) -> str:
    """What a command says of a Hub repo it ``done`` (pulled, read) from the home's Hub cache because the Hub failed
    (``outage``, a :class:`~indexer.hub.HubOutageError`): what the Hub did and why, and which commit of the snapshot
    ``snap`` was read (:func:`cached_revision_said`). `taskspace pull` and `taskspace ingest` say it alike."""
    return (f"{outage.outage} ({outage.reason}): "
            f"{done} hub:{snap.repo_id} at {snap.sha} from this home's Hub cache "
            f"({cached_revision_said(snap.sha, snap.ref)}); it may not be the newest revision")


def _fetch_cached(hub, repo: str, rev: str | None, space: str | None,
                  unreachable: HubOutageError | None = None) -> tuple[Path, str, str, dict]:
    """:func:`_fetch` offline: the records from the Hub cache (see there). Before, an offline pull refused even with
    every file in the cache (huggingface_hub serves cached files offline). ``unreachable``: the error of a Hub that
    could not be reached (HF_HUB_OFFLINE unset: refused or failed connections, timeouts through the retries) or that
    answered 408/429/5xx through them: the same from the cache, with a warning naming the commit used
    (``cached["unreachable"]`` the error); a cache that cannot give the records raises that error as it was. Before,
    such a pull failed with exit 4 whatever the cache held, unless HF_HUB_OFFLINE was set (and until later, a Hub
    answering 503 through the retries failed it still)."""
    from .hub import offline_variable

    try:
        snap = hub.cached_snapshot(repo, rev, "dataset")
        origin = f"hub:{snap.repo_id}@{snap.sha}"  # the spelling the cache holds it under (ids are case-insensitive)
        with _named(origin):
            names = dataset.space_names(hub.download(snap, [dataset.SPACES], cached=True), [space] if space else None)
            if space is not None:
                names = [space]
            root = hub.download(snap, dataset.files_needed(hub.download(snap, [dataset.BENCHMARKS], cached=True),
                                                           names), cached=True)
    except HubError:
        if unreachable is None:
            raise
        raise unreachable from None  # nothing usable cached: the Hub's error, as without a cache
    reason = unreachable.reason if unreachable is not None else None
    cached = {"revision": snap.sha, "ref": snap.ref, "variable": offline_variable(), "unreachable": reason}
    if unreachable is not None:
        log.warning("pull: %s", cache_fallback_said(unreachable, "pulled", snap))
    else:
        log.info("pull: %s is set: hub:%s read from the Hub cache at %s (%s); not checked for a newer revision",
                 cached["variable"], snap.repo_id, snap.sha, snap.ref)
    return root, origin, snap.sha, cached


def _check_space(store, vectors, spec) -> None:
    """The space's encoder is installed here with the same revision and width, and no space of the same settings
    and another dimension is present (SQL or the vector index)."""
    from . import represent
    from .encoder import get_encoder
    from .space import space_name

    try:
        enc = get_encoder(spec.encoder_name)
        enc_id = enc.id
    except EncoderError as exc:
        why = " ".join(str(exc).split())[:300]
        raise EncoderError(f"the records of space {spec.name} need encoder {spec.encoder}, which is not installed here "
                           f"({why}); install it (README: Encoders) and pull again") from None
    if enc_id != spec.encoder:
        raise EncoderError(f"the records of space {spec.name} were made with encoder {spec.encoder}, the installed one "
                           f"is {enc_id}: prompts embedded here would not match them; install that encoder revision")
    width = represent.index_dim(enc.dim, spec.params)
    if width != spec.dim:
        raise DimensionError(f"space {spec.name} has {spec.dim}-dim vectors, but encoder {enc_id} with its method "
                             f"{spec.method} gives {width}")
    for sp in store.list_spaces():
        same = (sp.encoder == spec.encoder and sp.lam == spec.lam and sp.eps == spec.eps and sp.method == spec.method
                and dict(sp.params or {}) == dict(spec.params))
        if same and int(sp.dim) != int(spec.dim):
            raise DimensionError(f"the pulled space {spec.name} ({spec.dim} dims) disagrees with space {space_name(sp)} "
                                 f"already here ({sp.dim} dims, same encoder and settings); pull into another "
                                 "TASKSPACE_HOME")
    if vectors is not None:
        for kind in ("models", "benchmarks"):
            have = vectors.dim(spec.name, kind)
            if have is not None and have != spec.dim:
                raise DimensionError(f"the pulled space {spec.name} has {spec.dim}-dim vectors, the vector index already "
                                     f"holds a {kind} collection of {have} dims under that name; run `taskspace "
                                     "reindex` or pull into another TASKSPACE_HOME")


def _index_prompts(vectors, rec) -> int:
    """The pulled space's prompts collection from the published index rows (their texts are not published: the
    payload's snippet is empty). Kept by ``reindex`` and ``check`` while the space is read-only."""
    from .store.vectors import Point
    from .sync import _prompt_payload

    if not rec.prompts:
        return 0
    points = (Point(h, v, _prompt_payload(h, b, "", rec.spec.encoder)) for h, b, v in rec.prompts)
    return vectors.rebuild(rec.spec.name, "prompts", points, dim=int(rec.spec.dim)).count


def pull(spec: str, *, space: str | None = None, store=None, vectors=None, hub=None) -> PullResult:
    """Load published records into this installation (see the module docstring). Holds the ``index`` lock while it
    writes (BusyError, exit 6, while an indexing pass runs). A ``space`` of blanks or invisible characters alone is
    bad input naming ``space`` (before, ``space=" "`` was looked up, "not a space of the records", and ``space=""``
    pulled every space), checked before anything is fetched; the spaces around a name are dropped."""
    from .ingest import spec_text
    from .sync import space_text

    t0 = time.perf_counter()
    if space is not None:
        space = space_text(space, names="index name", lists=f"the record set's {dataset.SPACES}")
    spec = spec_text(spec)
    using = contextlib.nullcontext()
    if spec.startswith("hub:"):  # from the download to the reading: no other process's keep_only removes the files
        from .hub import HubClient
        from .ingest import parse_spec

        hub = hub or HubClient()
        using = hub.using(parse_spec(spec).target, "dataset")
    with using:
        root, origin, revision, cached = _fetch(spec, hub, space)
        with _named(origin):
            spaces = dataset.read(root, [space] if space else None)
    own_store, own_vectors = store is None, vectors is None
    if own_store:
        from .store.sql import open_store

        store = open_store()
    try:
        if own_vectors:
            from .store.vectors import VectorStore

            vectors = VectorStore.from_settings()
        with store.lock("index") as held:  # no indexing pass writes meanwhile
            res = _pull_locked(store, vectors, spaces, origin, revision, t0, held.ensure, whole=space is None)
        res.cached = cached
        return res
    finally:
        if own_vectors and vectors is not None:
            vectors.close()
        if own_store:
            store.close()


def _dataset_of(origin: str) -> str:
    """The dataset a pull's origin names, whatever its revision: ``hub:org/name`` (Hub ids are case-insensitive) of
    ``hub:ORG/NAME@SHA``, a folder as it is; cut as the pulled marker stores an origin (128 characters)."""
    from .ingest import hub_repo_key

    return hub_repo_key(origin[:128])


def _drop_withdrawn(store, vectors, spaces, origin: str) -> list[str]:
    """Remove the spaces this home pulled from the dataset ``origin`` names (another revision of it, or the same folder
    rewritten) that the record set just pulled (``spaces``, the whole set) no longer holds: its publisher removed them
    (a publish with ``--space``, another encoder or method), so a fresh pull of the dataset would not have them. Each is
    said in a warning naming where it came from. Before, such a space stayed with the records the publisher withdrew,
    and as the configured space it kept answering every search; nothing said so."""
    from .space import SpaceSpec, space_name
    from .spaces import drop_space

    keep = {rec.spec.key for rec in spaces}
    gone = []
    for sp in store.list_spaces():
        was = store.space_origin(sp.id)
        if was is None or SpaceSpec.of(sp).key in keep or _dataset_of(was) != _dataset_of(origin):
            continue
        name = space_name(sp)
        drop_space(store, vectors, sp.id, force=True)
        back = f"; `taskspace pull {was} --space {name}` pulls it again" if was != origin[:128] else ""
        log.warning("pull: space %s was pulled from %s, and %s no longer holds it (its publisher removed it), so it is "
                    "removed here, as a fresh pull of %s would not have it%s", name, was, origin, origin, back)
        gone.append(name)
    return gone


def _pull_locked(store, vectors, spaces, origin: str, revision: str, t0: float, ensure=None,
                 whole: bool = False) -> PullResult:
    """``whole``: the record set was pulled whole (no ``--space``): the spaces an earlier pull of the same dataset
    brought and it no longer holds are removed (:func:`_drop_withdrawn`)."""
    from .space import SpaceSpec
    from .store.sql_records import ImportedSpace
    from .sync import reindex

    refused = {}
    for rec in spaces:
        try:
            _check_space(store, vectors, rec.spec)
        except (EncoderError, DimensionError) as exc:
            refused[rec.spec.name] = exc
    if refused:  # the spaces that would pull are named: a publisher that moved to an encoder not installed here
        exc = next(iter(refused.values()))
        ok = [r.spec.name for r in spaces if r.spec.name not in refused]
        if not ok:
            raise exc
        alone = (f"pull the other space alone ({arg('space', ok[0])})" if len(ok) == 1 else
                 f"pull another space alone ({' / '.join(arg('space', o) for o in ok)})")
        raise type(exc)(f"{exc}; or {alone}: nothing was pulled") from None
    items = [ImportedSpace(spec=r.spec, origin=origin, revision=revision, models=r.models, vectors=r.vectors,
                           patterns=r.patterns, calibration=_with_centres(r), benchmarks=r.benchmarks,
                           benchmark_vectors=r.benchmark_vectors, created_at=r.created_at, aliases=r.aliases,
                           prior=r.prior, coverage=r.coverage)
             for r in spaces]
    # the models each space held here before: those the records lack are removed by the import, and said
    held = {SpaceSpec.of(sp).key: set(store.model_vector_keys(sp.id)) for sp in store.list_spaces()}
    ids = store.import_spaces(items)  # one transaction: all of it or nothing
    removed = _drop_withdrawn(store, vectors, spaces, origin) if whole else []
    # the models an earlier pull of these spaces had and these records lack: gone, as from a fresh pull of them (a
    # pass likewise drops a model with no result and no vector); before, each stayed listed, "not indexed"
    store.delete_models_without_results()
    if store.has_outcomes():  # raw results here: the pulled spaces are not read-only, a pass re-solves them
        for sid in ids:
            _warn_writable(store, sid, origin)
    out = []
    for rec, sid in zip(spaces, ids):
        done = reindex(store, vectors, sid, kinds=("models", "benchmarks"), ensure=ensure)
        counts = dict(done[0].counts) if done else {}
        counts["prompts"] = _index_prompts(vectors, rec)
        store.finish_pull(sid)  # before, a pull stopped before here left a marker that said nothing of it
        out.append({"space": rec.spec.name, "space_id": sid, "models": len(rec.vectors),
                    "benchmarks": len(rec.benchmark_vectors), "patterns": len(rec.patterns),
                    "prompts": len(rec.prompts), "indexed": counts, "coverage_known": _coverage_known(rec, origin),
                    "models_removed": len(held.get(rec.spec.key, set()) - set(store.model_vector_keys(sid)))})
    return PullResult(origin, out, time.perf_counter() - t0, removed=removed)


def _warn_writable(store, space_id: int, origin: str) -> None:
    """A warning when a space is pulled into a home holding raw results of its own (another space built here): it is
    not read-only, so the pass that solves it (:func:`indexer.spaces.update_command`) re-solves it from this home's
    results, replacing the publisher's vectors and removing the pulled models measured nowhere here (the next
    ``taskspace index`` can leave 25 of 147 pulled models), so the pull says so first."""
    from .space import space_name
    from .spaces import update_command

    sp = store.get_space(space_id)
    cmd = update_command(sp)
    if cmd is None:  # no setting of this taskspace builds it: no pass touches it
        return
    lost = len(store.orphan_model_vectors(space_id))
    total = len(store.model_vector_keys(space_id))
    log.warning("pull: this home holds raw results, so space %s pulled from %s is not read-only: `%s` solves it from "
                "this home's results, replacing the publisher's vectors%s; pull into a TASKSPACE_HOME of its own to "
                "keep the publisher's records as they are", space_name(sp), origin, cmd,
                f", and removes the {lost} of the {counted(total, 'pulled model')} measured nowhere here" if lost else "")


def _with_centres(rec):
    """The records' calibration map with its groups' average models (:attr:`indexer.posterior.Calibration.centres`)
    computed from the records' vectors, as the publisher's pass computed them from the same vectors (the records
    carry the groups, ``calibration_links``, not their centres)."""
    import dataclasses

    from . import posterior

    cal = rec.calibration
    if cal is None or cal.links is None or cal.centres is not None or not rec.vectors:
        return cal
    V = np.stack([np.asarray(v.vector, dtype=np.float32) for v in rec.vectors])
    return dataclasses.replace(cal, centres=posterior.link_centres(cal.links, [v.benchmarks for v in rec.vectors], V))


def _coverage_known(rec, origin: str) -> bool:
    """Whether the records tell which indexed prompts each model was observed on (the patterns' ``observed``); when
    they do not (published by a taskspace from before they did) and the space's map is coverage-aware, a warning that
    the pulled index answers otherwise than its publisher (every model counted as measured near every query: c = 1)
    and that publishing again fixes it. Before, nothing said so: docs/PUBLISHING.md alone did. A space whose method
    keeps no posterior (``paper``: no patterns to carry the observed prompts) says that `measured near` is unknown
    here while the ranking is the publisher's; before, nothing did, and the card promised the same answers."""
    if rec.coverage:
        return True
    if not rec.spec.params.get("intercept"):  # the plain method (paper) keeps no posterior: no coverage patterns
        log.warning("pull: space %s (method %s) keeps no posterior, so its records do not say which indexed prompts "
                    "each model was measured on: its rankings and probabilities are the publisher's, `measured near` "
                    "is unknown in this installation (the publisher's own searches say it)",
                    rec.spec.name, rec.spec.method)
        return False
    cal = rec.calibration
    if cal is not None and getattr(cal, "coverage_aware", False):
        log.warning("pull: the records of space %s from %s do not say which indexed prompts each model was measured "
                    "on (published by a taskspace from before they did), and its calibration map weighs that: this "
                    "installation counts every model as measured near every query, so on this index its order, "
                    "probabilities and intervals can differ from the publisher's, and `measured near` is unknown; "
                    "publishing the records again with this taskspace (`taskspace publish`) adds it",
                    rec.spec.name, origin)
    return False


__all__ = ["publish", "pull", "build", "licence_of", "source_licences", "PublishResult", "PullResult"]
