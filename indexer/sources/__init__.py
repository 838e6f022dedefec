"""Sources: one reader per format, each turning per-sample results into a :class:`~indexer.records.SourceBatch`.

Entry point: :func:`read_source` (format detected, or given). Formats:

* ``table``: plain tables, long form (``model, prompt_id, correct|score`` + ``prompts.<ext>``) or
  matrix form (models x prompt ids), CSV / TSV / JSONL / Parquet, ``.gz`` too (:mod:`.tables`).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..records import SourceBatch

FORMATS = ("table",)


def detect_format(path: str | Path) -> str:
    """The format of a local file or folder (one of :data:`FORMATS`), or an InputError saying why not."""
    from . import tables

    p = Path(path)
    if not p.exists():
        raise InputError("no such file or folder", file=str(p))
    if p.is_dir():
        if tables.looks_like_table_folder(p):
            return "table"
        raise InputError(
            "cannot tell the format of this folder: expected outcomes.<ext> + prompts.<ext> (plain table); "
            f"pass --format ({', '.join(FORMATS)})",
            file=str(p),
        )
    if tables.table_ext(p) is not None:
        return "table"
    raise InputError(f"unknown file type; pass --format ({', '.join(FORMATS)})", file=str(p))


def read_source(path_or_spec: str | Path, format: str | None = None, **options) -> SourceBatch:
    """Read one source into a SourceBatch.

    ``path_or_spec``: a local file or folder. ``format``: one of :data:`FORMATS`, or None to detect.
    ``options`` go to the reader (tables: ``prompts=`` path, ``shape=`` "long"|"matrix").
    Raises :class:`~indexer.errors.InputError` when the source cannot be read at all; bad rows are
    returned in ``batch.errors`` and the rest is read.
    """
    fmt = format or detect_format(path_or_spec)
    if fmt == "table":
        from .tables import read_table

        return read_table(path_or_spec, **options)
    raise InputError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}", item=str(path_or_spec))
