"""Sources: one reader per format, each turning per-sample results into :class:`~indexer.records.SourceBatch` es.

Entry points: :func:`read_sources` (every source under a path, one batch each: the unit the store commits
whole or not at all), :func:`read_source` (all of them as one batch), :func:`source_infos` (their identities
and revisions without parsing, where the format allows) and :func:`detect_format`. Formats (each reader
declares itself in :mod:`.registry`, which also decides which reader handles a source):

* ``table``: plain tables, long form (``model, prompt_id, correct|score`` + ``prompts.<ext>``) or
  matrix form (models x prompt ids), CSV / TSV / JSONL / Parquet, ``.gz`` too (:mod:`.tables`).
* ``lm_eval``: lm-evaluation-harness ``--log_samples`` output, one batch per folder of runs (:mod:`.lm_eval`);
  Open LLM Leaderboard v2 details are the same files (task rules in ``rules.toml``).
* ``lighteval``: lighteval details parquet files, among them the older Open LLM Leaderboard's (:mod:`.lighteval`).

docs/FORMATS.md lists the layouts each reader takes with the harness versions that write them.

Hub specs (``hub:ORG/REPO``, ``hub-org:ORG``) are resolved by :mod:`indexer.ingest` through
:mod:`indexer.hub`, which downloads the files the registry plans (:func:`plan_files`) and calls these
readers on the local copy.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..records import SourceBatch
from .registry import Match, Reader, check_options, detect, find_reader, formats, get_reader, plan_files, readers

__all__ = ["read_sources", "read_source", "source_infos", "detect_format", "plan_files", "formats", "readers",
           "get_reader", "find_reader", "Reader", "Match"]


def detect_format(path: str | Path, options=()) -> str:
    """The format name of a local file or folder, or an InputError saying why there is none (``options``: the reading
    options given, :func:`~indexer.sources.registry.detect`)."""
    return detect(path, options).name


def read_sources(path: str | Path, format: str | None = None, **options) -> Iterator[SourceBatch]:
    """Every source under a local file or folder, one SourceBatch each.

    ``format``: a format name (:func:`formats`), or None to detect it. ``options`` go to the reader
    (tables: ``prompts=`` path, ``shape=`` "long"|"matrix"; lm_eval/lighteval: ``model=``, ``metric=``,
    ``rules=``, ``kind=``, ``location=``, ``revision=``; lm_eval: ``filter=``).
    Raises :class:`~indexer.errors.InputError` when the source cannot be read at all; bad rows are
    returned in ``batch.errors`` and the rest is read.
    """
    from ..ingest import spec_text

    path = spec_text(path, "path", hub=False)  # before, None was Python's TypeError (not a str or os.PathLike)
    reader = get_reader(format, item=str(path)) if format else detect(path, options)
    check_options(reader, options)
    also = [] if format else _not_read_below(Path(path), reader)
    for i, batch in enumerate(reader.read(path, **options)):
        if i == 0 and also:
            batch.warnings.extend(also)
        yield batch


def _not_read_below(path: Path, reader: Reader) -> list[str]:
    """Warnings for output of another format below a table folder, which the table source does not read (a folder is
    read in one format: the table's, when it has outcomes and prompts files). Before, an lm-eval run beside them was
    left unread without a word."""
    if reader.name != "table" or not path.is_dir():
        return []
    out = []
    for r in readers():
        if r is reader or r.recognise(path) != Match.STRONG:
            continue
        subs = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
        where = next((p for p in subs if r.recognise(p) == Match.STRONG), None)
        out.append(f"{path}: read as a plain table (its outcomes and prompts files); {where or 'a folder below it'} "
                   f"holds {r.name} output ({r.layout}), which is no part of this source: ingest it by its own path")
    return out


def source_infos(path: str | Path, format: str | None = None, **options) -> list | None:
    """The :class:`~indexer.records.SourceInfo` (location + revision) of every source under a path, computed
    from file names and content hashes without parsing, so an unchanged source need not be read at all;
    None for formats without this shortcut."""
    reader = find_reader(format) if format else detect(path, options)
    if reader is not None:
        check_options(reader, options)
    if reader is None or reader.source_infos is None:
        return None
    return reader.source_infos(path, **options)


def read_source(path: str | Path, format: str | None = None, **options) -> SourceBatch:
    """Everything under a local file or folder as ONE SourceBatch (outcome rows and tables concatenated,
    errors and skips summed; the source identity is the path). See :func:`read_sources` for the options."""
    batches = list(read_sources(path, format, **options))
    if len(batches) == 1:
        return batches[0]
    from ..records import OutcomeTable, SourceInfo

    first = batches[0].source
    out = SourceBatch(source=SourceInfo(kind=first.kind, location=str(Path(path).resolve()),
                                        revision=_combined_revision(b.source.revision for b in batches)))
    tables = []
    for b in batches:
        out.benchmarks.update(b.benchmarks)
        out.outcomes.extend(b.outcomes)
        out.errors.extend(b.errors)
        out.warnings.extend(b.warnings)
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
