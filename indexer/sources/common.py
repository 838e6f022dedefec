"""Shared by the file readers: the error log (capped per problem), opening plain/gzip files, row iteration
over CSV / TSV / JSON / JSONL / Parquet, arrow blocks of an outcomes file, and content fingerprints."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
from pathlib import Path

import numpy as np

from ..records import RowError

EXTENSIONS = (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".jsonl", ".jsonl.gz", ".json", ".json.gz", ".parquet")
MAX_ERRORS_PER_PROBLEM = 20  # detailed errors per (file, problem); the rest are counted in one summary line
BLOCK_SIZE = 1 << 24  # bytes per pyarrow CSV block
RESTART = (None, None)  # yielded by the block readers: forget this file's blocks so far, it is read again


def table_ext(path: Path) -> str | None:
    """The table extension of ``path`` (``.csv.gz`` ...) or None."""
    name = path.name.lower()
    for ext in sorted(EXTENSIONS, key=len, reverse=True):
        if name.endswith(ext):
            return ext
    return None


class ErrorLog:
    """Collects RowErrors, keeping at most MAX_ERRORS_PER_PROBLEM detailed ones per (file, problem)
    and one summary line for the rest."""

    def __init__(self) -> None:
        self.errors: list[RowError] = []
        self._counts: dict[tuple[str, str], int] = {}

    def add(self, file: str, line: int | None, message: str, problem: str | None = None) -> None:
        key = (file, problem or message)
        n = self._counts.get(key, 0) + 1
        self._counts[key] = n
        if n <= MAX_ERRORS_PER_PROBLEM:
            self.errors.append(RowError(file, line, message))

    def add_rows(self, file: str, lines, problem: str, detail=None) -> None:
        """The same problem on many rows (``lines``: numpy array of line numbers); ``detail(k)`` gives
        the message of the k-th of them (default: the problem itself)."""
        if not len(lines):
            return
        key = (file, problem)
        before = self._counts.get(key, 0)
        for k, line in enumerate(lines[: max(0, MAX_ERRORS_PER_PROBLEM - before)].tolist()):
            self.errors.append(RowError(file, int(line), detail(k) if detail else problem))
        self._counts[key] = before + len(lines)

    def mark(self) -> tuple:
        """A point to :meth:`rollback` to."""
        return len(self.errors), dict(self._counts)

    def rollback(self, mark: tuple) -> None:
        n, counts = mark
        del self.errors[n:]
        self._counts = dict(counts)

    def finish(self) -> list[RowError]:
        self.errors.sort(key=lambda e: (e.file, e.line if e.line is not None else -1))
        for (file, problem), n in self._counts.items():
            if n > MAX_ERRORS_PER_PROBLEM:
                self.errors.append(RowError(file, None, f"{n - MAX_ERRORS_PER_PROBLEM} more rows rejected: {problem}"))
        self._counts = {}
        return self.errors


def _open_text(path: Path):
    if path.name.lower().endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def _fingerprint(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    return "sha256:" + h.hexdigest()


# --------------------------------------------------------------------------------------- prompts


def json_objects(f, fname: str, errors: ErrorLog, *, array: bool):
    """(line or item number, dict) of an open JSON file: one JSON array (``array``) or JSON lines. Malformed
    lines and items that are not objects go to ``errors``; a malformed array rejects the whole file."""
    if array:
        try:
            data = json.load(f)
        except json.JSONDecodeError as exc:
            errors.add(fname, exc.lineno, f"malformed JSON: {exc.msg}; the file is skipped")
            return
        if not isinstance(data, list):
            errors.add(fname, None, "the JSON file is not an array of objects (nor JSON lines); the file is skipped")
            return
        for i, row in enumerate(data, 1):
            if isinstance(row, dict):
                yield i, row
            else:
                errors.add(fname, i, f"item {i} is not a JSON object", "non-object JSON items")
        return
    for i, raw in enumerate(f, 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            errors.add(fname, i, f"malformed JSON line: {exc.msg}", "malformed JSON lines")
            continue
        if isinstance(row, dict):
            yield i, row
        else:
            errors.add(fname, i, "line is not a JSON object", "non-object JSON lines")


def _iter_rows(path: Path, errors: ErrorLog):
    """(line, dict) for each row of a small table file (prompts); parse errors go to ``errors``."""
    fname = str(path)
    ext = table_ext(path)
    if ext == ".parquet":
        for first, batch in _parquet_batches(path, errors, 65536):
            for k, row in enumerate(batch.to_pylist()):
                yield first + k, row
        return
    try:
        with _open_text(path) as f:
            if ext in (".csv", ".csv.gz", ".tsv", ".tsv.gz"):
                reader = csv.DictReader(f, delimiter="\t" if ext.startswith(".tsv") else ",")
                for row in reader:
                    yield reader.line_num, row
            else:
                yield from json_objects(f, fname, errors,
                                        array=ext in (".json", ".json.gz") and _starts_with_bracket(path))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        errors.add(fname, None, f"cannot read file ({exc}); is it truncated or not {ext}?")


def _starts_with_bracket(path: Path) -> bool:
    with _open_text(path) as f:
        head = f.read(4096).lstrip()
    return head.startswith("[")


def _parquet_batches(path: Path, errors: ErrorLog, batch_size: int):
    """Yield (line of the first row, 1-based; record batch) of a Parquet file. An unreadable file or a batch that
    fails to decode (truncated, corrupt) goes to ``errors`` naming the file and row, and ends the iteration."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        errors.add(str(path), None, f"not a readable Parquet file ({exc}); is it truncated? re-download or re-export it")
        return
    row = 0
    try:
        for batch in pf.iter_batches(batch_size=batch_size):
            yield row + 1, batch
            row += batch.num_rows
    except (pa.ArrowException, OSError) as exc:
        errors.add(str(path), row + 1, f"Parquet data unreadable after row {row} ({exc}); is the file truncated?")


# -------------------------------------------------------------------------------------- outcomes


def _read_long_blocks(path: Path, errors: ErrorLog):
    """Yield (columns: dict name->arrow array, lines ndarray) blocks of an outcomes/matrix file."""
    ext = table_ext(path)
    if ext == ".parquet":
        for first, batch in _parquet_batches(path, errors, 1 << 20):
            lines = np.arange(first, first + batch.num_rows, dtype=np.int64)
            yield {name: batch.column(i) for i, name in enumerate(batch.schema.names)}, lines
        return
    if ext in (".csv", ".csv.gz", ".tsv", ".tsv.gz"):
        yield from _read_csv_blocks(path, ext, errors)
        return
    # JSON lines (or a JSON array): Python parsing in chunks, converted to arrow columns
    chunk: list[dict] = []
    chunk_lines: list[int] = []
    for line, row in _iter_rows(path, errors):
        chunk.append(row)
        chunk_lines.append(line)
        if len(chunk) >= 200_000:
            yield _rows_to_columns(chunk), np.asarray(chunk_lines, dtype=np.int64)
            chunk, chunk_lines = [], []
    if chunk:
        yield _rows_to_columns(chunk), np.asarray(chunk_lines, dtype=np.int64)


def _rows_to_columns(rows: list[dict]) -> dict:
    import pyarrow as pa

    names: dict[str, None] = {}
    for r in rows:
        for k in r:
            names.setdefault(k, None)
    cols = {}
    for k in names:
        vals = [r.get(k) for r in rows]
        try:
            cols[k] = pa.array(vals)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            cols[k] = pa.array([None if v is None else str(v) for v in vals], type=pa.string())
    return cols


def _read_csv_blocks(path: Path, ext: str, errors: ErrorLog):
    import pyarrow as pa
    import pyarrow.csv as pacsv

    fname = str(path)
    delim = "\t" if ext.startswith(".tsv") else ","
    try:
        with _open_text(path) as f:
            header = next(csv.reader(f, delimiter=delim), None)
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        errors.add(fname, None, f"cannot read file ({exc}); is it truncated or not {ext}?")
        return
    if not header:
        errors.add(fname, None, "empty file: no header and no rows")
        return
    # fast path: pyarrow, streamed block by block. A malformed row (wrong field count, stray quote) makes
    # this yield RESTART: the consumer discards what it built from this file and the line-exact Python
    # reader below reads it again, so every error names its true line.
    bad_rows: list = []

    def on_invalid(row):
        bad_rows.append(row)
        return "skip"

    try:
        reader = pacsv.open_csv(
            path,
            read_options=pacsv.ReadOptions(block_size=BLOCK_SIZE),
            parse_options=pacsv.ParseOptions(delimiter=delim, invalid_row_handler=on_invalid),
            convert_options=pacsv.ConvertOptions(column_types={h: pa.string() for h in header}, strings_can_be_null=False),
        )
        row = 0
        for batch in reader:
            if bad_rows:
                break
            lines = np.arange(row + 2, row + 2 + batch.num_rows, dtype=np.int64)
            row += batch.num_rows
            yield {name: batch.column(i) for i, name in enumerate(batch.schema.names)}, lines
    except (pa.ArrowInvalid, OSError, EOFError):
        bad_rows.append(None)
    if not bad_rows:
        return
    yield RESTART
    yield from _read_csv_python(path, delim, header, errors)


def _read_csv_python(path: Path, delim: str, header: list[str], errors: ErrorLog, chunk: int = 200_000):
    """The slow, line-exact CSV reader (used when a file has malformed rows)."""
    import pyarrow as pa

    fname = str(path)
    n = len(header)
    cols: list[list] = [[] for _ in header]
    lines: list[int] = []

    def flush():
        out = {h: pa.array(c, type=pa.string()) for h, c in zip(header, cols)}, np.asarray(lines, dtype=np.int64)
        for c in cols:
            c.clear()
        lines.clear()
        return out

    try:
        with _open_text(path) as f:
            reader = csv.reader(f, delimiter=delim)
            next(reader, None)
            start = 2
            for rec in reader:
                line, start = start, reader.line_num + 1
                if not rec:
                    continue
                if len(rec) != n:
                    errors.add(fname, line, f"malformed CSV row: {len(rec)} fields, the header has {n}", "malformed CSV rows")
                    continue
                for c, v in zip(cols, rec):
                    c.append(v)
                lines.append(line)
                if len(lines) >= chunk:
                    yield flush()
    except (csv.Error, OSError, EOFError, UnicodeDecodeError) as exc:
        errors.add(fname, start, f"unreadable from here on ({exc}); is the file truncated? the rows before are read")
    if lines:
        yield flush()
