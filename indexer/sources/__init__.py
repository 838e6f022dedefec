"""Sources: one reader per format, each turning per-sample results into :class:`~indexer.records.SourceBatch` es.

Entry points: :func:`read_sources` (every source under a path or spec, one batch each: the unit the
store commits whole or not at all) and :func:`read_source` (all of them as one batch). Formats:

* ``table``: plain tables, long form (``model, prompt_id, correct|score`` + ``prompts.<ext>``) or
  matrix form (models x prompt ids), CSV / TSV / JSONL / Parquet, ``.gz`` too (:mod:`.tables`).
* ``lm_eval``: lm-evaluation-harness ``--log_samples`` output, one batch per model folder (:mod:`.lm_eval`);
  Open LLM Leaderboard v2 details are the same files (task rules in ``rules.toml``).
* ``lighteval``: the older Open LLM Leaderboard "details" parquet files (:mod:`.lighteval`).

Hub specs (``hub:ORG/REPO``, ``hub-org:ORG``) are resolved by :mod:`indexer.ingest` through
:mod:`indexer.hub`, which downloads them and calls these readers on the local copy.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..records import SourceBatch

FORMATS = ("table", "lm_eval", "lighteval")


def detect_format(path: str | Path) -> str:
    """The format of a local file or folder (one of :data:`FORMATS`), or an InputError saying why not."""
    from . import lighteval, lm_eval, tables

    p = Path(path)
    if not p.exists():
        raise InputError("no such file or folder", file=str(p))
    if p.is_dir():
        if tables.looks_like_table_folder(p):
            return "table"
        if lm_eval.looks_like_lm_eval(p):
            return "lm_eval"
        if lighteval.looks_like_lighteval(p):
            return "lighteval"
        raise InputError(
            "cannot tell the format of this folder: expected outcomes.<ext> + prompts.<ext> (plain table), "
            "samples_<task>_<ts>.jsonl + results_<ts>.json (lm-eval), or details_*.parquet (lighteval); "
            f"pass --format ({', '.join(FORMATS)})",
            file=str(p),
        )
    if lm_eval.looks_like_lm_eval(p):
        return "lm_eval"
    if lighteval.looks_like_lighteval(p):
        return "lighteval"
    if tables.table_ext(p) is not None:
        return "table"
    raise InputError(f"unknown file type; pass --format ({', '.join(FORMATS)})", file=str(p))


def read_sources(path_or_spec: str | Path, format: str | None = None, **options) -> Iterator[SourceBatch]:
    """Every source under a local file or folder, one SourceBatch each.

    ``format``: one of :data:`FORMATS`, or None to detect. ``options`` go to the reader
    (tables: ``prompts=`` path, ``shape=`` "long"|"matrix"; lm_eval/lighteval: ``model=``, ``filter=``,
    ``metric=``, ``rules=``, ``kind=``, ``location=``, ``revision=``).
    Raises :class:`~indexer.errors.InputError` when the source cannot be read at all; bad rows are
    returned in ``batch.errors`` and the rest is read.
    """
    fmt = format or detect_format(path_or_spec)
    if fmt == "table":
        from .tables import read_table

        yield read_table(path_or_spec, **options)
    elif fmt == "lm_eval":
        from .lm_eval import read_lm_eval

        yield from read_lm_eval(path_or_spec, **options)
    elif fmt == "lighteval":
        from .lighteval import read_lighteval

        yield from read_lighteval(path_or_spec, **options)
    else:
        raise InputError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}", item=str(path_or_spec))


def source_infos(path_or_spec: str | Path, format: str | None = None, **options) -> list | None:
    """The :class:`~indexer.records.SourceInfo` (location + revision) of every source under a path, computed
    from file names and content hashes without parsing, so an unchanged source need not be read at all;
    None for formats without this shortcut."""
    fmt = format or detect_format(path_or_spec)
    if fmt == "table":
        from .tables import table_source_info

        return [table_source_info(path_or_spec, **options)]
    if fmt == "lm_eval":
        from .lm_eval import lm_eval_source_infos

        return lm_eval_source_infos(path_or_spec, **options)
    return None


def read_source(path_or_spec: str | Path, format: str | None = None, **options) -> SourceBatch:
    """Everything under a local file or folder as ONE SourceBatch (outcome rows and tables concatenated,
    errors and skips summed; the source identity is the path). See :func:`read_sources` for the options."""
    batches = list(read_sources(path_or_spec, format, **options))
    if len(batches) == 1:
        return batches[0]
    from ..records import OutcomeTable, SourceInfo

    first = batches[0].source
    out = SourceBatch(source=SourceInfo(kind=first.kind, location=str(Path(path_or_spec).resolve()),
                                        revision=_combined_revision(b.source.revision for b in batches)))
    tables = []
    for b in batches:
        out.benchmarks.update(b.benchmarks)
        out.outcomes.extend(b.outcomes)
        out.errors.extend(b.errors)
        out.skipped += b.skipped
        if b.table is not None:
            tables.append(b.table)
    if tables:
        out.table = tables[0] if len(tables) == 1 else OutcomeTable.concat(tables)
    return out


def _combined_revision(revisions) -> str:
    import hashlib

    h = hashlib.sha256()
    for r in revisions:
        h.update(str(r).encode() + b"\0")
    return "sha256:" + h.hexdigest()
