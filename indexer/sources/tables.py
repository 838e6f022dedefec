"""Plain tables of per-sample results -> :class:`~indexer.records.SourceBatch`.

Two shapes, in CSV / TSV / JSONL / Parquet (``.gz`` for the text formats):

* **long form** (exactly the format of ``../shared/data/*``): an outcomes file with columns
  ``model, prompt_id`` and ``correct`` (0/1, also true/false and yes/no in any case) or ``score`` (graded, in [0, 1]);
* **matrix form**: one row per model, first column ``model``, one column per prompt id, cells
  ``correct``-like (0/1) or scores; an empty cell is unobserved (never "wrong").

Both need a prompts file with ``prompt_id, benchmark, text`` (extra fields are ignored): passed
explicitly, or found beside the outcomes file as ``prompts.<ext>``. A folder holds
``outcomes.<ext>`` (or ``matrix.<ext>``) and ``prompts.<ext>``.

Outcomes are read in blocks with pyarrow and kept columnar (:class:`~indexer.records.OutcomeTable`),
so a 5-million-cell file costs a few seconds and a few numpy arrays, not an object per cell.
Line numbers in errors count the header as line 1 (for Parquet: the row number, 1-based).

Bad rows become :class:`~indexer.records.RowError` (file, line, message) and are dropped; the
rest is read. The same (model, prompt_id) twice with the same outcome is skipped; with a
different outcome it is a data error and both rows are dropped.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path


import numpy as np

from ..errors import noun
from ..records import BenchmarkInfo, OutcomeTable, RowError, SourceBatch, SourceInfo, name_problem, text_problem
from .common import (
    EXTENSIONS,
    LONG_COLUMNS,
    EMPTY_OBJECT,
    OTHER_COMPRESSIONS,
    REPEATED_HEADER,
    VALUE_COLUMNS,
    ErrorLog,
    _fingerprint,
    _iter_rows,
    _read_long_blocks,
    column_key,
    column_shown,
    csv_record_lines,
    example_value,
    json_kind,
    number_shown,
    other_compression,
    rows_under_key,
    table_ext,
)
from .registry import Match, Reader

OUTCOME_NAMES = ("outcomes", "matrix")
PROMPT_NAMES = ("prompts",)


def _known_columns(cols: dict, known: tuple = LONG_COLUMNS) -> dict:
    """``cols`` with every header that names a ``known`` column (default :data:`LONG_COLUMNS`) but for case or
    spacing renamed to it (``Model, Prompt_ID, Correct``); a name spelled exactly wins over a variant of it."""
    out = {k: v for k, v in cols.items() if k in known}
    for name, arr in cols.items():
        key = column_key(name)
        if name in known:
            continue
        out[key if key in known and key not in out else name] = arr
    return out


PROMPT_COLUMNS = ("prompt_id", "benchmark", "text")
#: the column pandas stores a DataFrame's unnamed index in (Parquet): a matrix's models when they are the index;
#: before, the first prompt id column was taken for the model column (models named "1.0", "0.0")
PANDAS_INDEX = "__index_level_0__"


def _prompt_columns(row: dict) -> dict:
    """A prompts file's row with its prompt columns (:data:`PROMPT_COLUMNS`) named so (``Prompt ID, Benchmark,
    Text``: :func:`_known_columns`); the row itself when it names them exactly (every row of most files)."""
    return row if all(k in row for k in PROMPT_COLUMNS) else _known_columns(row, PROMPT_COLUMNS)


def _table_files(folder: Path, stems) -> list[Path]:
    """Every ``<stem><ext>`` file in a folder, in :data:`EXTENSIONS` order, its name in any case (``Outcomes.CSV``
    from a case-insensitive file system: a table extension is read in any case, so a file so named given alone was
    read while its folder was "cannot tell the format")."""
    try:
        by_name: dict[str, list[Path]] = {}
        for p in sorted(folder.iterdir()):
            by_name.setdefault(p.name.lower(), []).append(p)
    except OSError:
        return []
    return [p for ext in EXTENSIONS for stem in stems for p in by_name.get(f"{stem}{ext}", []) if p.is_file()]


def _broken_links(folder: Path) -> list[Path]:
    """The symbolic links in a folder named as a table source's files (``outcomes.csv`` ...) whose target does not
    exist: :func:`_table_files` passes them over, as it does anything that is not a file."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    names = {f"{stem}{ext}" for stem in OUTCOME_NAMES + PROMPT_NAMES for ext in EXTENSIONS}
    return [p for p in entries if p.name.lower() in names and p.is_symlink() and not p.exists()]


def _not_files(folder: Path) -> list[tuple[Path, str]]:
    """(entry, what it is) of the entries in a folder named as a table source's files that exist but are no file: a
    folder (Spark's ``df.write.csv("outcomes.csv")``), a named pipe, a socket, a device. :func:`_table_files` passes
    them over; before, the folder was said to have "no outcomes file beside" its prompts file."""
    import stat

    names = {f"{stem}{ext}" for stem in OUTCOME_NAMES + PROMPT_NAMES for ext in EXTENSIONS}
    found = []
    try:
        for p in sorted(folder.iterdir()):
            if p.name.lower() not in names:
                continue
            try:
                mode = p.stat().st_mode  # (a link to one of them: its target's kind)
            except OSError:
                continue
            kind = ("a folder" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode) else "a socket"
                    if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else None)
            if kind is not None:
                found.append((p, kind))
    except OSError:
        return []
    return found


def find_table_files(folder: Path) -> tuple[Path | None, Path | None]:
    """``(outcomes_file, prompts_file)`` in a folder (either may be None; the first of several)."""
    outcomes, prompts = _table_files(folder, OUTCOME_NAMES), _table_files(folder, PROMPT_NAMES)
    return (outcomes[0] if outcomes else None), (prompts[0] if prompts else None)


def _one_of(files: list[Path], what: str, hint: str) -> None:
    """InputError when a folder holds several files that could each be a source's ``what`` (one would be read and the
    others ignored without a word)."""
    from ..errors import InputError

    if len(files) > 1:
        raise InputError(f"several {what} files here ({', '.join(f.name for f in files)}): a source has one; {hint}",
                         file=str(files[0].parent))


def looks_like_table_folder(folder: Path) -> bool:
    o, p = find_table_files(folder)
    return o is not None and p is not None


def why_not(path: Path) -> str | None:
    """Why a folder no reader recognised is no table source although it looks like one: an outcomes (or matrix) file
    without a prompts file beside it, or a prompts file without an outcomes file (None otherwise). Before, the folder's
    format "could not be told" and the advice was to pass --format, after which the missing file was named."""
    path = Path(path)
    if not path.is_dir():
        return None
    if broken := _broken_links(path):  # before, "cannot tell the format" or "no prompts file beside it"
        link = broken[0]
        return (f"{link.name} is a symbolic link to {os.readlink(link)}, which does not exist (a moved or unmounted "
                "folder): mount or restore it, or replace the link with the file")
    outcomes, prompts = find_table_files(path)
    if (outcomes is None or prompts is None) and (odd := _not_files(path)):
        entry, kind = odd[0]
        if kind == "a folder":
            return (f"{entry.name} is a folder, not a file (Spark writes a table so, as part-*.csv files): join its "
                    f"part files into one {entry.name} with one header line")
        return f"{entry.name} is {kind}, not a file: replace it with the file"
    if outcomes is None and prompts is not None:
        return (f"{prompts.name} but no outcomes file beside it: put one there (outcomes.csv / .jsonl / .parquet with "
                "model, prompt_id, correct, one row per outcome; or matrix.csv: one row per model, one column per "
                "prompt id)")
    if outcomes is None or prompts is not None:
        return None
    return (f"{outcomes.name} but no prompts file beside it: put one there (prompts.jsonl / .csv / .parquet with "
            "prompt_id, benchmark, text)")


def recognise(path: Path) -> Match:
    """STRONG for a folder with an outcomes (or matrix) file and a prompts file; WEAK for a file with a table
    extension (any table file can be read as outcomes, with ``prompts.<ext>`` beside it)."""
    if path.is_dir():
        return Match.STRONG if looks_like_table_folder(path) else Match.NONE
    return Match.WEAK if table_ext(path) is not None else Match.NONE


def plan_hub_files(files: list[str]) -> tuple[Match, list[str]]:
    """The table files at the root of a Hub repo's file list (``outcomes|matrix|prompts.<ext>``)."""
    names = OUTCOME_NAMES + PROMPT_NAMES
    found = sorted(f for f in files if "/" not in f and table_ext(Path(f)) and Path(f).name.split(".")[0].lower() in names)
    return (Match.WEAK, found) if found else (Match.NONE, [])


def iter_table_rows(path: str | Path) -> tuple[list[tuple[int, dict]], list[RowError]]:
    """Every row of a small table file (a prompts file, with all its extra fields) as ``(line, dict)``,
    and the rows that could not be parsed."""
    errors = ErrorLog()
    rows = list(_iter_rows(Path(path), errors))
    return rows, errors.finish()


class PromptMap(dict):
    """``{prompt_id: (benchmark, text)}``; ``rejected``: prompt ids whose row was rejected -> its line (a prompt id
    repeated with a different benchmark or text: a tuple of its lines); ``unread``:
    how many lines could not be read at all (not UTF-8, malformed), whose prompt ids are not known; ``unread_lines``:
    the first of them."""

    def __init__(self):
        super().__init__()
        self.rejected: dict[str, int | tuple[int, ...]] = {}
        self.unread = 0
        self.unread_lines: list[int] = []


def read_prompts(path: Path, errors: ErrorLog | None = None) -> tuple[PromptMap, list[RowError]]:
    """``{prompt_id: (benchmark, text)}`` from a prompts file, and the rows rejected (a text that is empty or only
    whitespace, holds a NUL or is not UTF-8 is rejected with its line, as a missing field is)."""
    own = errors is None
    errors = errors or ErrorLog()
    fname = str(path)
    prompts = PromptMap()
    first_line: dict[str, int] = {}
    conflicts: dict[str, list[int]] = {}  # prompt ids repeated with another benchmark or text -> their lines
    # problems of this file: all, the detailed ones, and the lines of those of the rows read here
    before, first, mine = errors.count(fname), len(errors.errors), []
    for line, row in _iter_rows(path, errors, PROMPT_COLUMNS):
        row = _prompt_columns(row)
        # an id or a benchmark name is read stripped, as the outcomes file's ids and names are (`p1 ,b ,...` from a
        # spreadsheet: before, "p1 " never matched the outcome rows' "p1"); a blank one is missing
        missing = [k for k in ("prompt_id", "benchmark", "text") if row.get(k) in (None, "")
                   or (k != "text" and isinstance(row[k], str) and not row[k].strip())]
        if missing:
            # the whole table as one object holding its rows under a key (`{"prompts": [{...}, ...]}`): say so
            hint = f"; {whole}" if (whole := rows_under_key(row)) is not None else ""
            errors.add(fname, line, f"missing {noun(len(missing), 'field')} {', '.join(missing)} (a prompt needs prompt_id, benchmark, text)"
                       + hint, "prompt rows with missing fields")
            if whole is not None:  # the whole table, unread: its outcome rows say the prompts file could not be read
                continue
            mine.append(line)
            if "prompt_id" not in missing:
                prompts.rejected.setdefault(_id_text(row["prompt_id"]), line)
            continue
        # JSON lines and Parquet carry types: a list, an object or a boolean is no id, name or text (str() made Python
        # reprs of them: a benchmark "['x']", a text "{'a': 1}", "True"); a number reads as its digits, as in CSV
        typed = [f"{k} is {json_kind(row[k])}" for k in ("prompt_id", "benchmark", "text")
                 if not isinstance(row[k], (str, int, float)) or isinstance(row[k], bool)]
        if typed:
            if (whole := rows_under_key(row)) is not None:  # the whole table as one object of pandas' to_json():
                errors.add(fname, line, whole, "prompt fields that are not strings")  # its prompts unread, not rejected
                continue
            errors.add(fname, line, f"{', '.join(typed)}, not a string; the prompt is skipped",
                       "prompt fields that are not strings")
            mine.append(line)
            if not typed[0].startswith("prompt_id"):  # its outcome rows say it was rejected here
                prompts.rejected.setdefault(_id_text(row["prompt_id"]), line)
            continue
        pid, bench, text = _id_text(row["prompt_id"]), str(row["benchmark"]).strip(), str(row["text"])
        bad_id = name_problem(pid, "an id")  # a NUL, a control character, a lone surrogate, too long
        bad = ((f"prompt_id {example_value(pid)} {bad_id}" if bad_id else None)
               or text_problem(text) or (f"benchmark name {name_problem(bench)}" if name_problem(bench) else None))
        if bad:
            errors.add(fname, line, f"{bad}; the prompt is skipped", "invalid prompt ids" if bad_id else bad)
            mine.append(line)
            prompts.rejected.setdefault(pid, line)
            continue
        if pid in prompts:
            if prompts[pid] != (bench, text):
                errors.add(fname, line, f"prompt_id {example_value(pid)} repeated with a different benchmark or text "
                           f"(first at line {first_line[pid]}); both dropped", "conflicting prompt ids")
                mine.append(line)
                prompts[pid] = None  # type: ignore[assignment]
                conflicts.setdefault(pid, [first_line[pid]]).append(line)
            continue
        prompts[pid] = (bench, text)
        first_line[pid] = line
    # the reader's own problems (a line not UTF-8, malformed): lines whose prompt ids are not known
    mine += [e.line for e in errors.errors[first:] if e.file == fname  # lines that hold no prompt: not "unread"
             and (e.message == REPEATED_HEADER or EMPTY_OBJECT in e.message)]
    prompts.unread = errors.count(fname) - before - len(mine)
    prompts.unread_lines = sorted({e.line for e in errors.errors[first:]
                                   if e.file == fname and e.line is not None} - set(mine))[:prompts.unread]
    if not prompts and not mine and all(n <= 1 for n in prompts.unread_lines):
        # no row read at all and no line past the first named (a header that cannot be read): the file could not be
        # read. (Before, also when its rows' lines were named, each not UTF-8: the outcome rows said the file "could
        # not be read" though only those lines were not.)
        prompts.unread_lines = []
    for k in [k for k, v in prompts.items() if v is None]:
        del prompts[k]
        prompts.rejected[k] = tuple(conflicts[k])  # its outcome rows say why (not "is not in the prompts file")
    if not prompts and not errors.errors:
        errors.add(fname, None, "empty prompts file: no rows")
    return prompts, (errors.finish() if own else [])


#: a whole number written with a decimal point (``1.0``, ``12.00``)
_WHOLE = re.compile(r"(-?\d+)\.0*")


def id_key(text: str) -> str:
    """The prompt id that outcome rows and the prompts file are matched on: a whole number written with a decimal
    point as its digits (``1.0`` -> ``1``). pandas writes an integer column with a gap as floats, and the files read
    them apart: a JSON or Parquet ``1.0`` read as "1" in an outcomes file (arrow's cast) and "1.0" in a prompts file
    (``str``), a CSV's as written, so ids of one writer did not match ("prompt_id '1' is not in the prompts file").
    An id is compared in Unicode NFC: ``café-1`` with a precomposed ``é`` in one file and ``e`` + a combining accent in
    the other (macOS file names, some exports) is one id (before, "prompt_id 'café-1' is not in the prompts file", the
    same id to the eye)."""
    m = _WHOLE.fullmatch(text)
    if m:
        return m.group(1)
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _id_text(value) -> str:
    """A prompts file's prompt id as the text the outcome rows are matched on: stripped, :func:`id_key`."""
    return id_key(str(value).strip())


class _Builder:
    """Accumulates outcome blocks (arrow arrays) into global int/float columns."""

    def __init__(self, fname: str, prompts: dict[str, tuple[str, str]], errors: ErrorLog):
        self.fname = fname
        self.prompts = prompts
        self.errors = errors
        self.models: dict[str, int] = {}
        self.pids: dict[str, int] = {}  # prompt_id -> local index (only ids found in prompts)
        self.pid_list: list[str] = []
        self.unknown_pids: set[str] = set()
        self.bad_models: set[str] = set()  # model names no database takes (said once, at their first row)
        self.m_parts: list[np.ndarray] = []
        self.p_parts: list[np.ndarray] = []
        self.s_parts: list[np.ndarray] = []
        self.l_parts: list[np.ndarray] = []
        self.value_kind: str | None = None
        #: (line, value) of the first row holding its outcome under :attr:`value_kind` (long form)
        self.value_first: tuple[int, object] | None = None
        #: (line, message) when the rows hold their outcomes under both value columns: nothing of the file is read
        self.mixed: tuple[int | None, str] | None = None
        #: ``line_map(lines) -> {line: physical line}`` when the lines given are provisional (fast CSV path)
        self.line_map = None

    def _model_index(self, model: str, line: int) -> int:
        """The index of a model name (its first row at ``line``), or -1 for a name no database takes (a NUL, a lone
        surrogate, a control character, too long: :func:`~indexer.records.name_problem`), said once at that line.
        Before, such a name was said by the ingest after reading, at no line of any file (``FOLDER: model 'm\\x001':
        holds a NUL character``)."""
        idx = self.models.get(model)
        if idx is not None:
            return idx
        if model in self.bad_models:
            return -1
        if (why := name_problem(model)) is not None:
            self.bad_models.add(model)
            self.errors.add(self.fname, line, f"model {example_value(model)} {why}; its outcomes are dropped: fix the name "
                            "in the file", "unusable model names")
            return -1
        return self.models.setdefault(model, len(self.models))

    def _pid_index(self, pid: str, line: int) -> int:
        pid = id_key(pid)
        idx = self.pids.get(pid)
        if idx is not None:
            return idx
        if pid not in self.unknown_pids and (why := name_problem(pid, "an id")) is not None:
            # a NUL, a control character (a tab, a terminal escape), a lone surrogate, too long: no id of the prompts
            # file either (read_prompts rejects it), so an invalid id here; before, "is not in the prompts file"
            self.errors.add(self.fname, line, f"prompt_id {example_value(pid)} is not a valid id: it {why}; its rows are "
                            "dropped: fix the id in the file", "invalid prompt ids")
            self.unknown_pids.add(pid)
            return -1
        if pid in self.prompts:
            self.pids[pid] = len(self.pid_list)
            self.pid_list.append(pid)
            return self.pids[pid]
        if pid not in self.unknown_pids:
            rejected = getattr(self.prompts, "rejected", {}).get(pid)
            if isinstance(rejected, tuple):
                self.errors.add(self.fname, line, f"prompt_id {example_value(pid)} was rejected in the prompts file: "
                                f"repeated with a different benchmark or text (lines {', '.join(map(str, rejected))}); its "
                                "rows are dropped", "rows of rejected prompts")
            elif rejected is not None:
                self.errors.add(self.fname, line, f"prompt_id {example_value(pid)} was rejected in the prompts file "
                                f"(line {rejected}); its rows are dropped", "rows of rejected prompts")
            else:
                unread, at = getattr(self.prompts, "unread", 0), getattr(self.prompts, "unread_lines", [])
                lines = ", ".join(map(str, at[:3])) + (f", ...: {unread} in all" if unread > len(at[:3]) else "")
                if unread and not at:  # no line of it was named: the file could not be read (corrupt, not UTF-8)
                    why = ", which could not be read (its error says why)"
                elif unread:
                    why = f", unless on a line of it that could not be read (line{'s' if unread > 1 else ''} {lines})"
                else:
                    why = ""
                self.errors.add(self.fname, line, f"prompt_id {example_value(pid)} is not in the prompts file{why}; its "
                                "rows are dropped", "unknown prompt ids")
            self.unknown_pids.add(pid)
        return -1

    def add_long(self, model_arr, pid_arr, value_arr, lines: np.ndarray, kind: str, matrix: bool = False) -> None:
        """One block of long-form rows (arrow arrays of equal length, ``lines`` their line numbers); ``matrix``: the
        cells of a matrix-form file (where an empty cell is unobserved, not an error)."""
        ok = np.ones(len(lines), dtype=bool)
        m_idx = self._encode(model_arr, lines, ok, "model", self._model_index)
        p_idx = self._encode(pid_arr, lines, ok, "prompt_id", self._pid_index)
        scores = _to_scores(value_arr, kind, lines, ok, self.fname, self.errors, matrix)
        self.m_parts.append(m_idx[ok].astype(np.int32))
        self.p_parts.append(p_idx[ok].astype(np.int32))
        self.s_parts.append(scores[ok])
        self.l_parts.append(lines[ok].astype(np.int32))

    def _encode(self, arr, lines: np.ndarray, ok: np.ndarray, what: str, index_of) -> np.ndarray:
        """Global int index per row via dictionary encoding (one Python call per distinct value per block).
        ``index_of(value, first_line) -> int`` (-1 = rejected); empty values are reported as missing."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if pa.types.is_nested(arr.type) or pa.types.is_boolean(arr.type):  # a Parquet column of lists: no text cast
            self.errors.add(self.fname, None, f"the {what} column holds {arr.type} values, not names (text); its rows "
                            "are not read", f"{what} column of {arr.type}")
            ok[:] = False
            return np.full(len(lines), -1, dtype=np.int64)
        if _is_binary(arr.type):
            arr = _decoded(arr, lines, ok, what, self.fname, self.errors)
        enc = pc.dictionary_encode(_as_string(arr))
        if isinstance(enc, pa.ChunkedArray):
            enc = enc.combine_chunks()
        values = enc.dictionary.to_pylist()
        nulls = enc.indices.is_null().to_numpy(zero_copy_only=False)
        codes = np.where(nulls, 0, enc.indices.fill_null(0).to_numpy(zero_copy_only=False)).astype(np.int64)
        first = np.full(len(values), -1, dtype=np.int64)
        first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)  # first row of each distinct value
        local = np.asarray(
            [index_of(v.strip(), int(lines[first[i]])) if v and v.strip() and first[i] >= 0 else -2
             for i, v in enumerate(values)],
            dtype=np.int64,
        )
        out = np.where(nulls, -2, local[codes]) if len(values) else np.full(len(codes), -2, dtype=np.int64)
        self.errors.add_rows(self.fname, lines[(out == -2) & ok], f"missing {what}")
        ok &= out >= 0
        return out

    def finish(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Concatenate blocks, resolve repeated (model, prompt_id) pairs. Returns m, p, s, skipped."""
        m = np.concatenate(self.m_parts) if self.m_parts else np.zeros(0, np.int32)
        p = np.concatenate(self.p_parts) if self.p_parts else np.zeros(0, np.int32)
        s = np.concatenate(self.s_parts) if self.s_parts else np.zeros(0, np.float64)
        lines = np.concatenate(self.l_parts) if self.l_parts else np.zeros(0, np.int32)
        self.m_parts, self.p_parts, self.s_parts, self.l_parts = [], [], [], []
        skipped = 0
        if len(s):
            key = m.astype(np.int64) * max(len(self.pid_list), 1) + p
            order = np.argsort(key, kind="stable")
            ks = key[order]
            dup = np.r_[False, ks[1:] == ks[:-1]]
            if dup.any():
                keep = np.ones(len(s), dtype=bool)
                group_start = np.flatnonzero(~dup)
                group_id = np.cumsum(~dup) - 1
                dup_groups = np.unique(group_id[dup])
                models = list(self.models)
                conflicts = []
                for g in dup_groups.tolist():
                    start = group_start[g]
                    end = group_start[g + 1] if g + 1 < len(group_start) else len(order)
                    rows = order[start:end]
                    vals = s[rows]
                    if np.all(vals == vals[0]):
                        keep[rows[1:]] = False
                        skipped += len(rows) - 1
                    else:
                        keep[rows] = False
                        conflicts.append((int(rows[0]), int(rows[1]), vals[0], vals[1]))
                at = self.line_map({int(lines[r]) for c in conflicts for r in c[:2]}) if conflicts and self.line_map else {}
                for r0, r1, v0, v1 in conflicts:
                    l0, l1 = int(lines[r0]), int(lines[r1])
                    self.errors.add(
                        self.fname, at.get(l1, l1),
                        f"model {example_value(models[int(m[r0])])}, prompt_id "
                        f"{example_value(self.pid_list[int(p[r0])])} repeated with a different outcome ({number_shown(v0)} at "
                        f"line {at.get(l0, l0)}, {number_shown(v1)} here); all its rows "
                        "are dropped: fix the source", "(model, prompt_id) repeated with a different outcome")
                m, p, s = m[keep], p[keep], s[keep]
        return m, p, s, skipped


def _is_binary(t) -> bool:
    import pyarrow as pa

    return pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)


def _decoded(arr, lines: np.ndarray, ok: np.ndarray, what: str, fname: str, errors: ErrorLog):
    """A binary column of names or ids (Parquet: pandas' bytes objects) as text, each value decoded as UTF-8; a value
    that is not UTF-8 is an error at its row, the row skipped (``ok`` False; the others read). Before, the cast failed
    the whole source: "ArrowInvalid: Invalid UTF8 payload (an unexpected error: please report it)"."""
    import pyarrow as pa

    out = []
    for k, v in enumerate(arr.to_pylist()):
        if v is not None:
            try:
                v = v.decode("utf-8")
            except UnicodeDecodeError:
                errors.add(fname, int(lines[k]), f"{what} {example_value(v)} is not UTF-8 text; the row is skipped (a "
                           "binary column: write it as a column of UTF-8 strings)", f"{what} values that are not UTF-8")
                ok[k], v = False, None
        out.append(v)
    return pa.array(out, pa.string())


def _as_string(arr):
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = pc.cast(arr, pa.string())
    return arr


#: the words read as 1 and 0, matched case-insensitively (``Yes``, ``NO``, ``True``)
_TRUE = {"1", "1.0", "true", "yes"}
_FALSE = {"0", "0.0", "false", "no"}


_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+")


def _comma_hint(v) -> str:
    """For a value written with a decimal comma (``0,5``: a spreadsheet in a locale that writes one), what to write
    instead; else nothing (before, "'0,5' is not a number" gave no hint that a decimal point was needed)."""
    if isinstance(v, str) and _DECIMAL_COMMA.fullmatch(v):
        return f" (write numbers with a decimal point: {v.replace(',', '.')})"
    return ""


def _to_scores(arr, kind: str, lines: np.ndarray, ok: np.ndarray, fname: str, errors: ErrorLog,
               matrix: bool = False) -> np.ndarray:
    """float64 scores from an arrow array; bad cells are reported and cleared in ``ok``. The advice for a NaN is the
    form's: a matrix cell left empty is unobserved, while in long form an empty value is an error of its own."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    vals = None
    try:
        if pa.types.is_boolean(arr.type):
            arr = pc.cast(arr, pa.int8())
        vals = pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False)
        nan = np.isnan(vals) & ~arr.is_null().to_numpy(zero_copy_only=False)  # a NaN given, not an empty cell
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        vals = None
    if vals is None:  # slow path: some cells are not numbers; find and report them
        out = np.empty(len(arr), dtype=np.float64)
        nan = np.zeros(len(arr), dtype=bool)
        for i, v in enumerate(arr.to_pylist()):
            if isinstance(v, str):
                v = v.strip()
                if v.lower() in _TRUE:
                    v = 1.0
                elif v.lower() in _FALSE:
                    v = 0.0
            try:
                out[i] = float(v) if v not in (None, "") else np.nan
                nan[i] = v not in (None, "") and np.isnan(out[i])
            except (TypeError, ValueError):
                out[i] = np.nan
                if ok[i]:
                    errors.add(fname, int(lines[i]), f"{kind} value {example_value(v)} is not a number{_comma_hint(v)}",
                               f"non-numeric {kind} values")
                    ok[i] = False
        vals = out
    unknown = ("leave the cell empty when the outcome is unknown" if matrix
               else "leave the row out when the outcome is unknown")
    errors.add_rows(fname, lines[nan & ok], f"{kind} value NaN is not a valid score (expected a number in [0, 1]; "
                    f"{unknown})")
    ok &= ~nan
    errors.add_rows(fname, lines[np.isnan(vals) & ok], f"missing {kind} value")
    ok &= ~np.isnan(vals)
    if kind == "correct":
        bad = ok & (vals != 0) & (vals != 1)
        why = "is not binary (expected 0 or 1; put graded outcomes in a `score` column)"
    else:
        bad = ok & ((vals < 0) | (vals > 1))
        why = "is outside [0, 1]"
    rows = np.flatnonzero(bad)
    errors.add_rows(fname, lines[rows], f"{kind} value {why}", lambda k: f"{kind} value {number_shown(vals[rows[k]])} {why}")
    ok &= ~bad
    return vals


def _refuse_compressed(path: Path, stems=()) -> None:
    """InputError naming the file when the table file ``path``, or in the folder ``path`` its ``<stem><ext>`` file of
    one of ``stems``, is compressed other than with gzip (:func:`~.common.other_compression`: ``outcomes.csv.zst``),
    however the source was found: a format given (``--format table``) skips the detection that also says so."""
    from ..errors import InputError

    files = [path / f"{stem}{ext}{z}" for stem in stems for ext in EXTENSIONS for z in OTHER_COMPRESSIONS] or [path]
    for f in files:
        if f.is_file() and (compressed := other_compression(f)) is not None:
            raise InputError(compressed[0], file=str(compressed[1]))


def resolve_table_files(path: str | Path, prompts: str | Path | None = None) -> tuple[Path, Path]:
    """``(outcomes_file, prompts_file)`` of a table source, or an InputError saying what is missing."""
    from ..errors import READING_FOR, SOURCE, InputError, option_hint

    verb = READING_FOR.get()  # the command that reads it, which the advice names (`taskspace evaluate` too)
    path = Path(path)

    if path.is_dir():
        outcomes = _table_files(path, OUTCOME_NAMES)
        _one_of(outcomes, "outcomes", f"keep one, or {verb} one by its path (`taskspace {verb} FOLDER/outcomes.csv`)")
        if not outcomes:
            _refuse_compressed(path, OUTCOME_NAMES)
            raise InputError(
                f"no outcomes.<ext> or matrix.<ext> in this folder (ext: {', '.join(EXTENSIONS)})", file=str(path)
            )
        outcomes_file = outcomes[0]
    elif path.is_file():
        _refuse_compressed(path)
        outcomes_file = path
    else:
        raise InputError("no such file or folder", file=str(path))
    beside = _table_files(outcomes_file.parent, PROMPT_NAMES)  # the folder's prompts files, listed once
    if outcomes_file in beside:
        raise InputError(f"this is a prompts file: {verb} its folder, or the outcomes file beside it (its prompts "
                         "are read with it)", file=str(path))
    if prompts is not None:  # given (`--prompts`): a file that is not there is the option's fault, not the folder's
        prompts_file = Path(prompts)
        if not prompts_file.is_file():
            from ..errors import ConfigError, arg

            from .common import path_problem

            # a device or a link to nothing said as such (before, "no such file", of a path `ls` lists)
            why = path_problem(prompts_file)
            what = ("is a folder; give the prompts file" if prompts_file.is_dir() else
                    "no such file" if why in (None, "no such file or folder") else why)
            raise ConfigError(f"{arg('prompts', str(prompts), quote=False)}: {what} (prompts.jsonl / .csv / .parquet with prompt_id, "
                              "benchmark, text)")
        if table_ext(prompts_file) is None:  # before, read as JSON lines whatever it held: every line malformed JSON
            from ..errors import ConfigError, arg

            raise ConfigError(f"{arg('prompts', str(prompts), quote=False)}: not a table file type, so how to read it cannot be told; name it "
                              f"for its format, one of {', '.join(EXTENSIONS)}")
    else:
        _one_of(beside, "prompts", "keep the one that goes with the outcomes")
        prompts_file = beside[0] if beside else None
    if prompts_file is None and prompts is None:
        _refuse_compressed(outcomes_file.parent, PROMPT_NAMES)
    if prompts_file is None or not prompts_file.is_file():
        raise InputError(
            "no prompts file (prompts.jsonl / .csv / .parquet with prompt_id, benchmark, text) beside the outcomes; "
            "put one there" + (" (evaluate reads the prompts file beside the outcomes)" if verb == "evaluate" else
                               " (`taskspace ingest OUTCOMES_FILE --prompts FILE` also takes one from elsewhere)"
                               if SOURCE.get() is None else f" (or name one elsewhere: {option_hint('prompts')})"),
            file=str(outcomes_file)
        )
    return outcomes_file, prompts_file


def table_source_info(path: str | Path, prompts: str | Path | None = None, **_ignored) -> SourceInfo:
    """The identity and revision (content fingerprint) of a table source, without parsing it."""
    outcomes_file, prompts_file = resolve_table_files(path, prompts)
    return SourceInfo(kind="table", location=str(Path(path).resolve()), revision=_fingerprint([outcomes_file, prompts_file]))


def prompt_fields(path: str | Path, prompts: str | Path | None = None) -> dict[str, dict]:
    """``{prompt_id: {field: value}}`` of the extra fields (beyond prompt_id, benchmark, text; e.g. MMLU-Pro's
    ``src``) in a table source's prompts file, which :func:`read_table` does not keep; ``{}`` when ``path`` has
    no prompts file. Rows that cannot be parsed are left out (:func:`read_table` reports them)."""
    from ..errors import InputError

    try:
        _, prompts_file = resolve_table_files(path, prompts)
    except InputError:
        return {}
    rows, _ = iter_table_rows(prompts_file)
    out = {}
    for _, row in rows:
        pid = "" if row.get("prompt_id") is None else _id_text(row["prompt_id"])  # as read_prompts reads it
        if pid:
            out[pid] = {k: v for k, v in row.items() if k not in ("prompt_id", "text", "benchmark") and v not in (None, "")}
    return out


def read_table(
    path: str | Path,
    prompts: str | Path | None = None,
    *,
    shape: str | None = None,
) -> SourceBatch:
    """Read a plain table (long or matrix form) and its prompts file into one SourceBatch.

    ``path``: a folder (``outcomes.<ext>`` or ``matrix.<ext>`` + ``prompts.<ext>``) or an outcomes file
    (prompts found beside it unless ``prompts`` is given). ``shape``: "long", "matrix" or None (detect:
    a ``prompt_id`` column, in any case or spacing, means long form). Raises :class:`~indexer.errors.InputError` only when
    nothing can be read at all (no file, no prompts file); row problems go to ``batch.errors``.
    """
    path = Path(path)
    outcomes_file, prompts_file = resolve_table_files(path, prompts)
    errors = ErrorLog()
    errors.lead(str(prompts_file))  # the prompts file's rejections are the cause of its outcome rows' drops: first
    prompt_map, _ = read_prompts(prompts_file, errors)
    fname = str(outcomes_file)
    builder = _Builder(fname, prompt_map, errors)
    detected: str | None = shape
    n_rows = 0
    mark = errors.mark()
    # pyarrow's fast CSV path numbers rows as if every record were one line; its lines are made physical below
    provisional = (table_ext(outcomes_file) or "").startswith((".csv", ".tsv"))
    for cols, lines in _read_long_blocks(outcomes_file, errors):
        if cols is None:  # RESTART: the file is read again by the line-exact reader
            errors.rollback(mark)
            builder = _Builder(fname, prompt_map, errors)
            detected, n_rows, provisional = shape, 0, False
            continue
        n_rows += len(lines)
        if detected is None:
            detected = "long" if any(column_key(c) == "prompt_id" for c in cols) else "matrix"
            if shape is None and detected == "matrix" and _looks_long(cols, prompt_map):
                errors.add(fname, 1, f"no prompt_id column, so this would be read as matrix form (one column per "
                           f"prompt id), but the header ({', '.join(map(column_shown, cols))}) looks like long form, which "
                           "needs model, prompt_id and correct (0/1) or score ([0, 1]) columns: name the prompt id "
                           "column prompt_id; nothing of this file is read")
                detected = "none"
        if detected == "none":
            continue
        if detected == "long":
            _add_long_block(builder, cols, lines, fname, errors)
            if builder.mixed is not None:  # nothing of the file is read: the rows of its blocks before are dropped
                errors.add(fname, *builder.mixed)  # (before, across blocks, rows of both kinds were stored)
                builder = _Builder(fname, prompt_map, errors)
                detected = "none"
        else:
            _add_matrix_block(builder, cols, lines, fname, errors)
    if n_rows == 0 and not any(e.file == fname for e in errors.errors):
        errors.add(fname, None, "empty file: no rows")
    if provisional:  # the errors so far; those of finish() are numbered through line_map
        _physical_lines(errors, fname, outcomes_file)
        builder.line_map = lambda wanted: csv_record_lines(outcomes_file, wanted)
    m, p, s, skipped = builder.finish()
    # compact the prompt and model lists to those with an outcome kept (an id is registered at its first row, before
    # that row's value is checked), in first-seen order
    used_p, p = np.unique(p, return_inverse=True) if len(p) else (np.zeros(0, np.int64), p)
    used_m, m = np.unique(m, return_inverse=True) if len(m) else (np.zeros(0, np.int64), m)
    pid_list = [builder.pid_list[i] for i in used_p.tolist()]
    model_list = list(builder.models)
    table = OutcomeTable(
        models=[model_list[i] for i in used_m.tolist()],
        prompt_ids=list(pid_list),
        benchmarks=[prompt_map[pid][0] for pid in pid_list],
        texts=[prompt_map[pid][1] for pid in pid_list],
        model_idx=m.astype(np.int32),
        prompt_idx=p.astype(np.int32),
        scores=s.astype(np.float64),
    )
    kind = builder.value_kind or "correct"
    benchmarks = {
        b: BenchmarkInfo(name=b, group=b.split("/", 1)[0] if "/" in b else None, metric=kind)
        for b in dict.fromkeys(table.benchmarks)
    }
    info = table_source_info(path, prompts)
    return SourceBatch(source=info, benchmarks=benchmarks, table=table, errors=errors.finish(), skipped=skipped)


def _physical_lines(errors: ErrorLog, fname: str, path: Path) -> None:
    """Replace the provisional line numbers of the fast CSV path in this file's errors by the physical lines of their
    records (blank lines and quoted line breaks counted; see :func:`~indexer.sources.common.csv_record_lines`)."""
    from dataclasses import replace

    mine = [i for i, e in enumerate(errors.errors) if e.file == fname and e.line is not None and e.line >= 2]
    if not mine:
        return
    where = csv_record_lines(path, {errors.errors[i].line for i in mine})
    for i in mine:
        e = errors.errors[i]
        errors.errors[i] = replace(e, line=where.get(e.line, e.line))


def _value_column(cols: dict, lines: np.ndarray, builder: _Builder) -> str | None:
    """The value column of a block of long-form rows, or None; ``builder.mixed`` set when the file's earlier blocks
    held their outcomes under the other one (JSON lines of more than :data:`~indexer.sources.common.JSON_BLOCK_ROWS`
    rows: the columns of a block are the keys of its rows)."""
    for c in VALUE_COLUMNS:
        if c in cols:
            here = _first_value(cols[c], lines)
            if builder.value_kind not in (None, c) and here is not None:
                builder.mixed = _mixed_values((builder.value_kind, *builder.value_first), (c, *here))
            elif builder.value_kind is None and here is not None:
                builder.value_kind, builder.value_first = c, here
            return c
    return None


def _whole(col):
    """A block's column as one arrow array (a chunked one combined)."""
    import pyarrow as pa

    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


def _held(col) -> np.ndarray:
    """Which rows of a block's column hold a value (not null)."""
    return ~_whole(col).is_null().to_numpy(zero_copy_only=False)


def _first_value(col, lines: np.ndarray) -> tuple[int, object] | None:
    """(line, value) of the first row of a block whose column ``col`` holds a value (not null), or None."""
    col = _whole(col)
    present = np.flatnonzero(_held(col))
    return (int(lines[present[0]]), col[int(present[0])].as_py()) if len(present) else None


def _both_at(cols: dict, lines: np.ndarray) -> int | None:
    """The line of the first row of a block holding a value under both value columns, or None."""
    at = np.flatnonzero(np.logical_and.reduce([_held(cols[c]) for c in VALUE_COLUMNS]))
    return int(lines[at[0]]) if len(at) else None


def _mixed_values(first: tuple, other: tuple) -> tuple[int, str]:
    """(line, message) of rows that hold their outcomes under both value columns: ``first`` and ``other`` are
    (column, line, value) of the first row of each, in line order."""
    (c1, l1, v1), (c2, l2, v2) = sorted((first, other), key=lambda t: t[1])
    return l2, (f"mixed value columns: line {l1} holds its outcome under {c1!r} ({example_value(v1, written=str)}), "
                f"line {l2} under {c2!r} ({example_value(v2, written=str)}): which one holds the outcomes cannot be told, "
                "so nothing of this file is read; write every row's outcome under one of them (correct: 0/1, score: "
                "[0, 1])")


def _looks_long(cols: dict, prompt_map: dict) -> bool:
    """A header without a prompt_id column that still looks like long form: a value column (``correct``/``score``,
    any case) and no column named after a prompt id of the prompts file."""
    return (any(column_key(c) in VALUE_COLUMNS for c in cols)
            and not any(id_key(str(c).strip()) in prompt_map for c in cols))


def _transposed(builder: _Builder, cols: dict, id_col, lines: np.ndarray, fname: str, errors: ErrorLog) -> bool:
    """Whether a block is a matrix turned on its side (one row per prompt, a column per model:
    ``df.pivot(index="prompt_id", columns="model")`` written as it is): column ``id_col`` holds prompt ids of the
    prompts file and no other column is named after one. Says so once per file (nothing of it is read); before, a
    first column ``prompt_id`` made it long form "missing column(s) model, correct|score", another name read its
    prompt ids as models and each model column as a prompt id "not in the prompts file"."""
    others = [c for c in cols if c != id_col]
    if not others or any(id_key(str(c).strip()) in builder.prompts for c in others):
        return False
    if any(_is_binary(_whole(col).type) for col in cols.values()):  # (bytes, maybe not UTF-8: the reading says so)
        return False
    if not all(_cells_only(cols[c]) for c in others):  # a long form's misnamed columns (`model_name,prompt_id,acc`)
        return False
    ids = [v for v in _as_string(_whole(cols[id_col])).to_pylist()[:100] if v is not None]
    pid = next((v.strip() for v in ids if id_key(v.strip()) in builder.prompts), None)
    if pid is None:
        return False
    why = (f"one row per prompt and a column per model (a transposed matrix: prompt ids such as {pid!r} down its first "
           f"column, models such as {str(others[0]).strip()!r} across its header): matrix form needs one row per model "
           "and one column per prompt id; transpose it (pandas: `df.T`), or write long form (model, prompt_id, "
           "correct); nothing of this file is read")
    if not any(e.message == why for e in errors.errors if e.file == fname):  # once, not per block
        errors.add(fname, _header_line(fname, lines), why)
    return True


def _cells_only(col) -> bool:
    """Whether a block's column holds only what a matrix cell holds (its first 100 values): numbers, true/false, yes/no,
    blanks; a column of names does not."""
    for v in _as_string(_whole(col)).to_pylist()[:100]:
        v = (v or "").strip()
        if v and v.lower() not in ("true", "false", "yes", "no"):
            try:
                float(v)
            except ValueError:
                return False
    return True


def _add_long_block(builder: _Builder, cols: dict, lines: np.ndarray, fname: str, errors: ErrorLog) -> None:
    cols = _known_columns(cols)
    if all(c in cols for c in VALUE_COLUMNS):  # which one holds the outcomes cannot be told: before, `correct` won
        json_rows = (table_ext(Path(fname)) or "").startswith(".json")  # JSON: a block's columns are its rows' keys
        both_at = _both_at(cols, lines) if json_rows else None
        firsts = [(c, *at) for c in VALUE_COLUMNS if (at := _first_value(cols[c], lines)) is not None]
        if not json_rows or both_at is not None or len(firsts) < 2:  # a header naming both, or a row holding both
            builder.mixed = (both_at or _header_line(fname, lines),
                             f"both a {VALUE_COLUMNS[0]!r} and a {VALUE_COLUMNS[1]!r} column: which one holds the outcomes "
                             "cannot be told; keep one (correct: 0/1, score: [0, 1]) and remove or rename the other")
        else:  # JSON rows, some with `correct`, some with `score`: the first row of each (in an earlier block too)
            builder.mixed = _mixed_values(*[(c, *builder.value_first) if c == builder.value_kind else (c, l, v)
                                            for c, l, v in firsts])
        return
    missing = [c for c in ("model", "prompt_id") if c not in cols]
    value = _value_column(cols, lines, builder)
    if builder.mixed is not None:
        return
    if value is None:
        missing.append("correct|score")
    if missing == ["model", "correct|score"] and _transposed(builder, cols, "prompt_id", lines, fname, errors):
        return
    if missing:
        if not any(e.message.startswith("missing column") for e in errors.errors if e.file == fname):
            errors.add(fname, _header_line(fname, lines),
                       f"missing {noun(len(missing), 'column')} {', '.join(missing)}: long form needs model, prompt_id and correct (0/1) "
                       f"or score ([0, 1]); found {', '.join(map(column_shown, cols))}")
        return
    builder.add_long(cols["model"], cols["prompt_id"], cols[value], lines, value)


def _header_line(fname: str, lines: np.ndarray) -> int | None:
    """The line a problem of the columns is reported at: the header's, line 1, in CSV/TSV (``lines`` holds the rows
    of the block, from line 2: reporting its first gave "line 2" for a header problem); in JSON lines, whose
    columns are the keys of each row, the block's first row; None for Parquet (no line) or an empty block."""
    ext = table_ext(Path(fname))
    if ext is not None and ext.startswith((".csv", ".tsv")):
        return 1
    if ext == ".parquet" or not len(lines):
        return None
    return int(lines[0])


def _add_matrix_block(builder: _Builder, cols: dict, lines: np.ndarray, fname: str, errors: ErrorLog) -> None:
    """Matrix form: first column = model name, every other column = one prompt id."""
    import pyarrow as pa

    names = list(cols)
    if len(names) < 2:  # (before: "matrix form needs ...; found ['model']", which named neither form's columns)
        errors.add(fname, _header_line(fname, lines),
                   f"the file has one column, {names[0]!r}: an outcomes file needs, in long form, model, "
                   f"prompt_id and correct (0/1) or score ([0, 1]) columns, or, in matrix form, a model column and one "
                   f"column per prompt id of the prompts file; add the missing columns" if names else
                   "no columns: an outcomes file needs, in long form, model, prompt_id and correct (0/1) or score "
                   "([0, 1]) columns, or, in matrix form, a model column and one column per prompt id")
        return
    model_col = "model" if "model" in cols else next((n for n in names if column_key(n) == "model"), None)
    if model_col is None:  # pandas writes an unnamed index (the models of `df.to_parquet()`) as its last column
        model_col = PANDAS_INDEX if PANDAS_INDEX in cols else names[0]
    if model_col == names[0] and id_key(str(model_col).strip()) in builder.prompts:  # no model column (index=False):
        # before, the first prompt id's cells were read as model names (a model "0" stored)
        why = (f"no model column: the first column, {model_col!r}, is a prompt id of the prompts file; matrix form needs "
               "the model names in a first column named model; nothing of this file is read")
        if not any(e.message == why for e in errors.errors if e.file == fname):  # once, not per block
            errors.add(fname, _header_line(fname, lines), why)
        return
    if _transposed(builder, cols, model_col, lines, fname, errors):
        return
    builder.value_kind = "score"  # cells may be 0/1 or graded in [0, 1]
    models, named = cols[model_col], np.ones(len(lines), dtype=bool)
    if _is_binary(models.type):  # decoded once, its rows that are not UTF-8 said once (not once per prompt column)
        models = _decoded(models, lines, named, "model", fname, errors)
    # the cells of the block's prompt columns, column after column, read at once per type of column (a wide matrix:
    # before, one add_long per column, ~1 ms each: 14 s of CPU for 30 models x 20,000 prompts)
    groups: dict[str, list] = {}
    for name in names:
        if name != model_col:
            groups.setdefault(str(cols[name].type), []).append(name)
    n = len(lines)
    for group in groups.values():
        cells = pa.concat_arrays([_whole(cols[name]) for name in group])
        present = ~_blank_to_null(cells).is_null().to_numpy(zero_copy_only=False) & np.tile(named, len(group))
        if not present.any():
            continue  # an empty cell is unobserved
        at = np.flatnonzero(present)
        row = at % n
        ids = np.array(group, dtype=object)[at // n]
        builder.add_long(models.take(pa.array(row)), pa.array(ids, type=pa.string()), cells.filter(pa.array(present)),
                         lines[row], "score", matrix=True)


def _blank_to_null(col):
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        stripped = pc.utf8_trim_whitespace(col)
        return pc.if_else(pc.equal(stripped, ""), pa.scalar(None, type=col.type), col)
    return col


def read_tables(path: str | Path, **options) -> Iterator[SourceBatch]:
    """:func:`read_table` as the registry's reader: a table path is one source."""
    yield read_table(path, **options)


def table_source_infos(path: str | Path, **options) -> list[SourceInfo]:
    return [table_source_info(path, **options)]


READER = Reader(
    name="table",
    layout="outcomes.<ext> + prompts.<ext> (plain table)",
    recognise=recognise,
    why_not=why_not,
    read=read_tables,
    plan_hub_files=plan_hub_files,
    source_infos=table_source_infos,
    options=("prompts", "shape"),
)
