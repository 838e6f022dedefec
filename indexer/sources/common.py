"""Shared by the file readers: the error log (capped per problem), opening plain/gzip files, row iteration
over CSV / TSV / JSON / JSONL / Parquet, arrow blocks of an outcomes file, and content fingerprints.

Damage costs the line it is on, not the file: text files are decoded with ``surrogateescape``, so a byte that is
not UTF-8 is reported at its line (:data:`NOT_UTF8`) and the line is skipped; a CSV record whose quote does not
close on its line swallows no later rows (:class:`CsvRecords`: the record is reported at the line the quote opens on
and reading goes on at the next line); a corrupt or truncated ``.gz`` is reported where it breaks off and the rows
before it are read.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..errors import counted, noun
from ..records import RowError

EXTENSIONS = (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".jsonl", ".jsonl.gz", ".json", ".json.gz", ".parquet")
MAX_ERRORS_PER_PROBLEM = 20  # detailed errors per (file, problem); the rest are counted in one summary line
BLOCK_SIZE = 1 << 24  # bytes per pyarrow CSV block
JSON_BLOCK_ROWS = 200_000  # rows per block of a JSON-lines (or JSON array) outcomes file
#: the longest CSV field (characters) the csv module reads: Python's default, 131,072, rejected long prompt texts
#: that JSONL takes; a longer field costs its line with a message saying to use JSONL
CSV_FIELD_LIMIT = 1 << 26
RESTART = (None, None)  # yielded by the block readers: forget this file's blocks so far, it is read again
#: what reading a damaged file can raise: OS errors, gzip's BadGzipFile (an OSError) and EOFError (truncated), zlib's
#: error (corrupt deflate data), a decoding error
READ_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError)
#: the problem of a line holding bytes that are not UTF-8 (decoded with surrogateescape: lone surrogates)
NOT_UTF8 = "not valid UTF-8 text; the line is skipped (re-save the file as UTF-8)"
_SURROGATE = re.compile("[\udc80-\udcff]")


#: the most characters of a value an ingest message quotes (:func:`example_value`)
EXAMPLE_WIDTH = 80


def example_value(value, width: int = EXAMPLE_WIDTH, written=repr) -> str:
    """A value as an ingest error or warning quotes it (a metric value, a cell, a prompt id, a doc_id): as ``written``
    (its ``repr``, or ``json.dumps`` for a value read from JSON as such) whole when at most ``width`` characters, else
    its start and end around "..." and its full length (``[['B-PER', 'B-PER', ...'O', 'O']] (28,052 characters written
    out)``, ``'xxxxxx...xxx' (10,000 characters)``). The one place every reader formats such a value: before, each
    quoted the whole repr, so one sample whose value was a (gold, pred) pair of long lists (lm-eval's MasakhaNER
    ``f1``) or a 10,000-character string made an error line of as many characters."""
    text = written(value)
    if len(text) <= width:
        return text
    tail = max(1, width // 5)
    size = f"{len(value):,} characters" if isinstance(value, str) else f"{len(text):,} characters written out"
    return f"{text[:width - tail - 3]}...{text[-tail:]} ({size})"


def values_listed(values: list, shown: int = 10) -> str:
    """``values`` as an error lists them: each cut as :func:`example_value` cuts it, the first ``shown``, then how many
    more (a body of 5,000 unknown filters, or one of 100,000 characters, was quoted whole)."""
    more = f", and {len(values) - shown:,} more" if len(values) > shown else ""
    return f"{', '.join(example_value(v) for v in values[:shown])}{more}"


def number_shown(value) -> str:
    """A score as an ingest message quotes it: in 6 significant digits (``2``, ``0.25``, ``41.1134``, ``1e+30``),
    unless they round it to another number in [0, 1], which would read as a valid score: then every digit it needs
    (``1.0000001``, ``0.9999999``, ``0.5000001``). Before, always in 6: a score of 1.0000001 was "score value 1 is
    outside [0, 1]", a `correct` of 0.9999999 "1 is not binary", and 0.5 and 0.5000001 repeated "0.5 ..., 0.5 here"."""
    v = float(value)
    short = f"{v:g}"
    return short if v != v or float(short) == v or not 0.0 <= float(short) <= 1.0 else repr(v)


def json_kind(value) -> str:
    """How a JSON (or Parquet) value that is not a string is named in an error: "a list", "an object", "a boolean"."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, (bytes, bytearray)):  # (before, "a bytes")
        return "binary data (a Parquet binary column: write it as a string column)"
    return f"a {type(value).__name__}"


def column_shown(name) -> str:
    """A column name as a message lists it: as written when it is printable text, else quoted with its escapes
    (:func:`example_value`: ``'mo\\x00del'``), so that a NUL, a line break or a terminal escape sequence of a damaged
    header is seen, not sent to the terminal. Before, a header's NUL byte was printed as such."""
    text = str(name)
    return text if text.isprintable() else example_value(text)


def column_key(name) -> str:
    """A header name as compared with the known column names: stripped, lower case, runs of spaces and hyphens as
    one ``_`` (``" Prompt ID"`` -> ``prompt_id``)."""
    return re.sub(r"[\s-]+", "_", str(name).strip()).lower()


def path_problem(path) -> str | None:
    """Why a source path given cannot be read as a file or folder, or None: missing, a symbolic link to nothing (its
    target moved or deleted, a loop of links: before, both "no such file or folder"), or neither a regular file nor a
    folder (a named pipe, which reading would wait on forever, a socket, a device)."""
    import os

    p = Path(path)
    if p.is_file() or p.is_dir():
        return None
    if p.is_symlink():
        import errno

        try:
            p.resolve(strict=True)
        except (RuntimeError, OSError) as exc:  # (a loop: RuntimeError up to Python 3.12, OSError ELOOP after)
            if isinstance(exc, RuntimeError) or exc.errno == errno.ELOOP:
                return "a loop of symbolic links: it names no file or folder; give the path of the file or folder itself"
        else:
            return None if p.exists() else "a symbolic link that cannot be followed"
        return (f"a symbolic link to nothing (its target, {os.readlink(p)}, was moved or deleted): restore the target, "
                "or give the path of the file or folder itself")
    if p.exists():
        return ("not a regular file or folder (a named pipe, socket or device): taskspace reads files; write the "
                "input to a file first")
    return "no such file or folder"


#: compressions taskspace does not read (it reads gzip, ``.gz``), by file name suffix: (the tool, its command that
#: decompresses a file); a source file so compressed (``zstd -r`` over an output folder) is one error saying so
OTHER_COMPRESSIONS = {".zst": ("zstd", "zstd -d"), ".bz2": ("bzip2", "bunzip2"), ".xz": ("xz", "unxz"),
                      ".lz4": ("lz4", "lz4 -d")}


def other_compression(path: Path, depth: int = 3) -> tuple[str, Path] | None:
    """Why ``path`` (a file, or a folder searched ``depth`` levels below itself) is a source's file compressed other
    than with gzip (``outcomes.csv.zst``, ``samples_<task>_<ts>.jsonl.zst``: a file type taskspace reads under a
    compression suffix it does not): ``(what is wrong and what to do, the first such file)``; None when there is none.
    Before, its folder was "cannot tell the format" (or "no outcomes file beside" its prompts file)."""
    path = Path(path)
    files = [path] if not path.is_dir() else []
    level = [path] if path.is_dir() else []
    for _ in range(depth + 1):
        deeper = []
        for folder in level:
            try:
                entries = sorted(folder.iterdir())
            except OSError:
                continue
            files.extend(e for e in entries if not e.is_dir())
            deeper.extend(e for e in entries if e.is_dir() and not e.name.startswith("."))
        level = deeper
    found = [f for f in files if f.suffix.lower() in OTHER_COMPRESSIONS and table_ext(f.with_suffix("")) is not None]
    if not found:
        return None
    f = found[0]
    tool, undo = OTHER_COMPRESSIONS[f.suffix.lower()]
    # the others of a folder (`zstd -r` over it) named too: before, only the first, the rest found one ingest at a time
    more = [str(g.relative_to(path)) for g in found[1:6]]
    also = (f"; so {noun(len(found) - 1, 'is', 'are')} {counted(len(found) - 1, 'more file')} of this folder: {', '.join(more)}"
            f"{f', ... ({len(found) - 6} more)' if len(found) > 6 else ''}" if more else "")
    return (f"compressed with {tool}, which taskspace does not read: decompress it ({undo} {f.name}, or the "
            f"folder's files at once), or compress it with gzip instead ({f.with_suffix('').name}.gz), which "
            f"is read as the file itself{also}"), f


def bad_utf8(text: str) -> bool:
    """True when ``text`` (decoded with ``errors="surrogateescape"``) holds bytes that were not UTF-8."""
    return _SURROGATE.search(text) is not None


def table_ext(path: Path) -> str | None:
    """The table extension of ``path`` (``.csv.gz`` ...) or None."""
    name = path.name.lower()
    for ext in sorted(EXTENSIONS, key=len, reverse=True):
        if name.endswith(ext):
            return ext
    return None


#: the summary line of :meth:`ErrorLog.finish` for the rows of one problem past the detailed ones
_MORE_ROWS = re.compile(r"(\d+) more rows rejected: ")


def is_summary(error) -> bool:
    """Whether ``error`` is the summary line of :meth:`ErrorLog.finish` (``N more rows rejected: ...``)."""
    return _MORE_ROWS.match(error.message) is not None


#: the line of a problem that cost every row of a task's file (:func:`indexer.sources.scoring.report_metric_failures`)
_TASK_ROWS = re.compile(r"(\d+) rows of task .*? rejected: ")


def count_rejected(errors) -> int:
    """How many rejections ``errors`` (RowErrors, as :meth:`ErrorLog.finish` returns them, or a run's recorded item
    errors) stand for: one each, and ``N`` for a summary line ``N more rows rejected: ...`` or a task's line ``N rows of
    task T rejected: ...``."""
    return sum(int(m.group(1)) if (m := _MORE_ROWS.match(_message(e)) or _TASK_ROWS.match(_message(e))) else 1
               for e in errors)


def _message(error) -> str:
    """The message of a RowError, or of an item error as a run records it (``{"file", "line", "message"}``)."""
    got = error.get("message") if isinstance(error, dict) else getattr(error, "message", error)
    return got if isinstance(got, str) else str(got)


class ErrorLog:
    """Collects RowErrors, keeping at most MAX_ERRORS_PER_PROBLEM detailed ones per (file, problem)
    and one summary line for the rest."""

    def __init__(self) -> None:
        self.errors: list[RowError] = []
        self._counts: dict[tuple[str, str], int] = {}
        self._leading: set[str] = set()

    def lead(self, file: str) -> None:
        """List the errors of ``file`` before the others': a file whose rejected rows cause errors in another (a
        table's prompts file: its outcome rows of a rejected prompt are dropped), so the cause reads first."""
        self._leading.add(file)

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

    def count(self, file: str) -> int:
        """How many problems of ``file`` were reported (those kept in detail and the rest)."""
        return sum(n for (f, _), n in self._counts.items() if f == file)

    def mark(self) -> tuple:
        """A point to :meth:`rollback` to."""
        return len(self.errors), dict(self._counts)

    def rollback(self, mark: tuple) -> None:
        n, counts = mark
        del self.errors[n:]
        self._counts = dict(counts)

    def finish(self) -> list[RowError]:
        # (before, by file name alone: an outcomes file's "prompt_id 'p1' is not in the prompts file" came before the
        # prompts file's malformed line that caused it whenever the outcomes file's name sorted first)
        self.errors.sort(key=lambda e: (e.file not in self._leading, e.file, e.line if e.line is not None else -1))
        for (file, problem), n in self._counts.items():
            if n > MAX_ERRORS_PER_PROBLEM:
                self.errors.append(RowError(file, None, f"{n - MAX_ERRORS_PER_PROBLEM} more rows rejected: {problem}"))
                # (count_rejected reads this line's number back)
        self._counts = {}
        return self.errors


#: UTF-8 with a leading byte order mark (Excel's "CSV UTF-8", Notepad) dropped: without it the first header name
#: (or the first JSON line) carries U+FEFF and is not recognised
UTF8 = "utf-8-sig"


def _open_text(path: Path):
    """A text file (gzip when ``.gz``) decoded as UTF-8 with ``surrogateescape``: bytes that are not UTF-8 become
    lone surrogates that the readers report at their line (:func:`bad_utf8`) instead of failing the whole file. A
    byte order mark at the start is dropped (:data:`UTF8`)."""
    if path.name.lower().endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding=UTF8, errors="surrogateescape", newline="")
    return open(path, encoding=UTF8, errors="surrogateescape", newline="")


#: byte order marks of the encodings a text file is saved in by Windows tools instead of UTF-8 (PowerShell 5's ``>``
#: and ``Out-File``, Excel's "Unicode Text"), longest first
_OTHER_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
               (b"\xfe\xff", "UTF-16"))


def encoding_problem(path: Path) -> str | None:
    """Why a text file (gzip when ``.gz``) cannot be read as UTF-8 at all: it starts with a UTF-16 or UTF-32 byte
    order mark (every line of it then failed: as not UTF-8, as malformed JSON, a header of NULs), or it is a Git LFS
    pointer (:func:`lfs_pointer_problem`), or it starts with NUL bytes (:func:`nul_problem`: zeros, UTF-16 without a
    byte order mark); None otherwise (also when it cannot be opened: the reader reports that).
    The file's head is read once, for both (a ``.gz`` one's first bytes decompressed from it). Before, the file was
    opened twice, and a ``.gz`` that is a Git LFS pointer (text, not gzip) was reported as "cannot read file: corrupt
    gzip data" by the reader, its pointer never said."""
    try:
        with open(path, "rb") as f:
            head = f.read(_LFS_HEAD)
    except READ_ERRORS:
        return None
    if (why := _lfs_head_problem(head)) is not None:
        return why
    if head.startswith(b"\x1f\x8b") and not path.name.lower().endswith(".gz"):
        return (f"the file is gzip-compressed but its name does not end in .gz: name it {path.name}.gz (or decompress "
                "it: gunzip); nothing of it is read")
    if path.name.lower().endswith(".gz"):
        try:
            head = zlib.decompressobj(wbits=31).decompress(head, _LFS_HEAD)  # (31: a gzip header)
        except zlib.error:
            return None  # not gzip: the reader reports it
    if head and head.count(0) == len(head) and not _only_zeros(path):
        return None  # zeros, then text: the readers report the lines of zeros and read the others
    return _binary_problem(head, path) or bom_problem(head) or nul_problem(head)


def _binary_problem(head: bytes, path: Path) -> str | None:
    """:func:`encoding_problem` of a text file's first bytes ``head`` that are a ZIP archive (an Excel .xlsx workbook
    renamed .csv) or a Parquet file: what it is and what to do. Before, "the header line is not valid UTF-8 text ...
    re-save the file as UTF-8", or for JSON lines an error per line."""
    if head.startswith(b"PK\x03\x04"):
        return ("the file is a ZIP archive (an Excel .xlsx workbook under another name?), not text: save the sheet as "
                "CSV UTF-8, or unzip it; nothing of it is read")
    if head.startswith(b"PAR1"):
        return f"the file is Parquet, not text: name it {path.name.split('.')[0]}.parquet; nothing of it is read"
    return None


def _only_zeros(path: Path) -> bool:
    """Whether a file (gzip when ``.gz``) whose start is NUL bytes holds nothing else: read until a byte that is not
    (only such a file is read past its head). False when it cannot be read: the reader reports that."""
    try:
        with (gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")) as f:
            while chunk := f.read(1 << 20):
                if chunk.count(0) != len(chunk):
                    return False
    except READ_ERRORS:
        return False
    return True


def nul_problem(head: bytes) -> str | None:
    """:func:`encoding_problem` of a file's first bytes ``head`` that are NUL bytes: all of them (zeros a crash or an
    interrupted copy leaves: :func:`encoding_problem` says so only when the whole file is), or every other one (UTF-16 text saved without a byte order mark, as some
    Windows tools and ``iconv -t UTF-16LE`` write it); said with what to do; None otherwise. Before, a file of zeros
    was "empty file: no rows", and UTF-16 without a mark read as text whose every name held NULs (`model
    '\\x00m\\x001\\x00' holds a NUL character`, prompt ids `'\\x00p\\x00r...'` not in the prompts file)."""
    if not head or 0 not in head:
        return None
    if head.count(0) == len(head):
        return ("the file holds NUL bytes only (zeros a crash or an interrupted copy leaves in a file), not text: "
                "nothing of it is read; copy or export the file again")
    for zeros, other, order in ((head[1::2], head[0::2], "little-endian"), (head[0::2], head[1::2], "big-endian")):
        if len(zeros) >= 2 and zeros.count(0) >= 0.9 * len(zeros) and other.count(0) <= 0.1 * len(other):
            return (f"the file seems to be UTF-16 ({order}) text without a byte order mark (every other byte of its "
                    "start is zero), not UTF-8: nothing of it is read; save it as UTF-8")
    return None


#: the first line of a Git LFS pointer file (https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md)
_LFS_SPEC = b"version https://git-lfs.github.com/spec/v1\n"
_LFS_SIZE = re.compile(rb"^size (\d+)$", re.M)


def lfs_pointer_problem(path: Path) -> str | None:
    """Why a file cannot be read when it is a Git LFS pointer (the small text file Git keeps in place of a file
    stored with LFS, when the content was never downloaded: a clone without git-lfs, `GIT_LFS_SKIP_SMUDGE=1`, a Hub
    dataset cloned so), said with what to do; None otherwise (also when it cannot be opened). Before, each of its
    three lines was "malformed JSON line ... breaks off before its end" (samples, JSONL tables) or the file "not a
    readable Parquet file (... magic bytes ...)", none of which says the content was never fetched."""
    try:
        with open(path, "rb") as f:
            head = f.read(_LFS_HEAD)
    except READ_ERRORS:
        return None
    return _lfs_head_problem(head)


#: the bytes of a file's start that :func:`lfs_pointer_problem` reads (a pointer is about 130)
_LFS_HEAD = 1024


def _lfs_head_problem(head: bytes) -> str | None:
    """:func:`lfs_pointer_problem` of a file's first :data:`_LFS_HEAD` bytes ``head``."""
    if not head.startswith(_LFS_SPEC):
        return None
    m = _LFS_SIZE.search(head)
    size = f" of {int(m[1]):,} bytes" if m else ""
    return (f"a Git LFS pointer, not the file's content (the file{size} is stored with Git LFS and was never "
            "downloaded: a clone without git-lfs, or GIT_LFS_SKIP_SMUDGE=1): nothing of it is read; run `git lfs pull` "
            "in its repository (or download the file) and ingest it again")


def bom_problem(head: bytes) -> str | None:
    """:func:`encoding_problem` of a file's first bytes ``head``: a UTF-16 or UTF-32 byte order mark, said with what to
    do; None otherwise."""
    for bom, name in _OTHER_BOMS:
        if head.startswith(bom):
            return (f"the file is {name} text (it starts with a {name} byte order mark), not UTF-8: nothing of it is "
                    "read; save it as UTF-8 (PowerShell: Out-File -Encoding utf8; Excel: CSV UTF-8)")
    return None


def _read_failure(exc: BaseException) -> str:
    """What a read error means, for a message."""
    if isinstance(exc, (zlib.error, gzip.BadGzipFile)):
        return f"corrupt gzip data ({exc})"
    if isinstance(exc, EOFError):
        return f"the file ends early ({exc or 'truncated'})"
    return str(exc) or type(exc).__name__


def add_read_failure(errors: ErrorLog, fname: str, line: int | None, exc: BaseException, *,
                     kept: str = "rows", hint: str = "") -> None:
    """Report a read error of a file: at no line when nothing of it was read ("cannot read file: ..." and ``hint``),
    else after ``line``, the last one read, whose ``kept`` ("rows", "samples") stay read."""
    if line is None:
        errors.add(fname, None, f"cannot read file: {_read_failure(exc)}{hint}")
    else:
        errors.add(fname, line + 1, f"unreadable from here on: {_read_failure(exc)}; is the file truncated? the {kept} "
                   "before are read")


#: what a lone carriage return (``\r`` not followed by ``\n``) inside a line of a file whose lines end with a line
#: feed stands for while :class:`csv.reader` parses the line (a Unicode noncharacter, which no text holds; a line that
#: does hold it keeps its lone CR, read as before), given back as ``\r`` in the fields: see :class:`_Lines`
_LONE_CR = "\ufdd0"

#: the DOS end-of-file byte (Ctrl-Z), which old DOS/Windows tools write at a file's end: a CSV line of it alone is no
#: row (:class:`CsvRecords`)
DOS_EOF = "\x1a"

def dos_eof_dropped(text: str) -> str:
    """``text`` (a line as a reader gives it, or a whole file's text) without the DOS end-of-file byte (:data:`DOS_EOF`)
    that ends it when no line break follows it: the end of the file, right after its last value (``m1,p2,0\x1a``) or on
    a last line of its own. Before, it was part of the last value (``correct value '0\x1a' is not a number``, the row
    lost) or a malformed JSON line."""
    return text[:-1] if text.endswith(DOS_EOF) else text


def json_document(text: str):
    """The JSON value of a whole file's ``text`` (a results file), read as a table file's JSON is: the DOS end-of-file
    byte (:data:`DOS_EOF`, one or more) after the value, before or after whitespace, is dropped (old DOS/Windows tools
    end a file with it; before, "Extra data" and the file not read). Other text after the value stays an error:
    :func:`json_problem` says where and what to do."""
    end = text.rstrip(" \t\r\n" + DOS_EOF)  # (JSON's own whitespace is " \t\r\n")
    return json.loads(end if end != text and DOS_EOF in text[len(end):] else text)


def json_problem(exc: json.JSONDecodeError) -> str:
    """What a whole JSON file (:func:`json_document`) that does not parse is told, with its line and column: text after
    its value (two files joined, a log line appended) says so, what the text starts with and to remove it; a comma
    before a closing bracket says to remove it (:func:`trailing_comma`)."""
    if exc.msg == "Extra data":
        start = exc.doc[exc.pos:].split("\n", 1)[0].strip()[:40]
        return (f"text after its JSON value at line {exc.lineno} column {exc.colno} ({start!r}), which JSON does not "
                "allow: remove it")
    where = f"{exc.msg} line {exc.lineno} column {exc.colno}" if exc.msg.endswith(" at") else \
        f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    return where + trailing_comma(exc.doc, exc)


#: what a malformed CSV row holding a lone carriage return is told (its field count broke there: a file mixing line
#: ends, `\r` after some rows and `\n` after others)
_LONE_CR_SAID = ("the line holds a carriage return (\\r) not followed by a line feed, which ends no line in a file whose "
                "first line ends with a line feed: if it was meant to end one, end every line of the file with \\n (or "
                "\\r\\n)")


def _line_end(text: str) -> str:
    """The line ending ``text`` (a line as a universal-newline reader gives it) ends with: ``\r\n``, ``\n``, ``\r``
    or none (the file's last line)."""
    return "\r\n" if text.endswith("\r\n") else text[-1:] if text.endswith(("\n", "\r")) else ""


class _Lines:
    """The physical lines of an open text file, numbered from 1, for a :class:`csv.reader`: lines that are not UTF-8
    are reported and skipped; ``taken`` is the (line number, text) pairs the current record used, and lines can be
    pushed back to be read again.

    A line ends where the file's first line does: with a line feed (``\n`` or ``\r\n``), so a lone carriage return
    inside a line (a text pasted from an old Mac or a web form, written unquoted) is part of its field, as an editor
    shows it (``^M``) and as a quoted field's is read; only in a file whose first line ends with a lone ``\r`` (classic
    Mac OS, Excel's "CSV (Macintosh)") does a lone ``\r`` end a line. Before, every lone ``\r`` ended a line: the
    prompt text was cut there, the rest of the line was a malformed row of its own (or, holding the header's commas,
    a row read without a word), and every later line number was one past the editor's. Such a line reaches the csv
    parser with its lone CRs as :data:`_LONE_CR` (``held`` counts those lines; :class:`CsvRecords` gives them back)."""

    def __init__(self, f, fname: str, errors: "ErrorLog"):
        self._f = iter(f)
        self.fname, self.errors = fname, errors
        self.n = 0
        self.back: list[tuple[int, str]] = []  # a stack: the next line is the last one
        self.taken: list[tuple[int, str]] = []
        #: while the header is read: a line that is not UTF-8 raises :class:`_HeaderNotUtf8` instead of being skipped
        #: (skipped, the first row was taken for the header)
        self.header = False
        self.cr_ends: bool | None = None  # whether a lone CR ends a line (the first line's ending says; None: unread)
        self.held = 0  # lines read whose lone CRs reach the parser as _LONE_CR

    def _physical(self) -> str:
        """The next physical line: the universal-newline reader's lines joined across lone CRs where they end none;
        the file's last line without the DOS end-of-file byte right after its last value (:func:`dos_eof_dropped`)."""
        text = dos_eof_dropped(next(self._f))
        if self.cr_ends is None:
            self.cr_ends = _line_end(text) == "\r"
        if self.cr_ends or text[-1:] != "\r":  # (the reader splits at every lone CR: a line it gives that ends with
            return text                        # a line feed holds none)
        while _line_end(text) == "\r":  # a lone CR the reader split the line at: the line goes on
            try:
                text += next(self._f)
            except StopIteration:
                break  # (a lone CR ending the file is its last line's end)
        end = _line_end(text)
        body = text[:len(text) - len(end)]
        if "\r" in body and _LONE_CR not in text:
            self.held += 1
            return body.replace("\r", _LONE_CR) + end
        return text

    def __iter__(self):
        return self

    def __next__(self) -> str:
        while True:
            if self.back:
                item = self.back.pop()
            else:
                text = self._physical()
                self.n += 1
                item = (self.n, text)
            if bad_utf8(item[1]):
                if self.header:
                    raise _HeaderNotUtf8(item[0])
                self.errors.add(self.fname, item[0], NOT_UTF8)
                continue
            self.taken.append(item)
            return item[1]

    def push_back(self, items: list[tuple[int, str]]) -> None:
        self.back.extend(reversed(items))


class _HeaderNotUtf8(Exception):
    """The header line of a CSV/TSV file holds bytes that are not UTF-8 (``line``: its number)."""

    def __init__(self, line: int):
        super().__init__(line)
        self.line = line


def _quote_never_closes(text: str, delimiter: str) -> bool:
    """Whether the CSV ``text`` (one record's lines) ends inside a quoted field: the lenient reader then took the
    rest of the file into that field."""
    try:
        for _ in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True):
            pass
    except csv.Error as exc:
        return "unexpected end of data" in str(exc)
    return False


#: the problem of a line that repeats the header (files joined one after another): it holds no row
REPEATED_HEADER = "the header line again (files joined one after another?); the line is skipped"


class CsvRecords:
    """The records of an open CSV/TSV text file as ``(line, fields)``, the header first (:meth:`header`), every later
    record checked against the header's field count. A record with another field count is reported and skipped; when
    it spans several lines (a quote that opens on its first line and does not close there swallowed the lines after
    it), only its first line is skipped and reading goes on at the next line. Lines that are not UTF-8 are reported
    and skipped. Problems go to ``errors`` under "malformed CSV rows"."""

    PROBLEM = "malformed CSV rows"

    def __init__(self, f, fname: str, errors: "ErrorLog", delimiter: str = ","):
        self.fname, self.errors, self.delimiter = fname, errors, delimiter
        self._lines = _Lines(f, fname, errors)
        csv.field_size_limit(CSV_FIELD_LIMIT)
        self._reader = csv.reader(self._lines, delimiter=delimiter)
        self.n_fields: int | None = None
        self.header_error: RowError | None = None  # the header line could not be read (see :meth:`header`)
        self.header_fields: list[str] | None = None
        self.extra_marks = False  # the header line started with byte order marks past the first (see :meth:`header`)

    @property
    def cr_ends(self) -> bool:
        """Whether a lone carriage return ends this file's lines (its first line's ending says; False before it is
        read)."""
        return bool(self._lines.cr_ends)

    def _next(self) -> tuple[int, list[str]] | None:
        """The next record as it parses (None at the end); csv's own errors cost the first line of the record."""
        lines = self._lines
        while True:
            lines.taken = []
            try:
                rec = next(self._reader)
            except StopIteration:
                return None
            except csv.Error as exc:
                start = lines.taken[0][0] if lines.taken else lines.n
                if "field limit" in str(exc):
                    msg = (f"a field longer than {csv.field_size_limit():,} characters, the most a CSV field may hold; "
                           "the line is skipped (put such long texts in a JSONL file, prompts.jsonl)")
                elif len(lines.taken) > 1:
                    msg = (f"malformed CSV row: a quoted field opens on this line and does not close on it ({exc}); "
                           "the line is skipped and reading goes on at the next line")
                else:
                    msg = f"malformed CSV ({exc}); the line is skipped"
                self.errors.add(self.fname, start, msg, self.PROBLEM)
                self._resume(lines.taken[1:])
                continue
            if ((len(lines.taken) > 1 or (lines.taken and '"' in lines.taken[0][1]))
                    and _quote_never_closes("".join(t for _, t in lines.taken), self.delimiter)):
                # a quote that opens in the record's last field and never closes took every line after it up to the
                # end of the file into that field, with the header's field count: report it, read the lines again
                # (on the file's last line it took nothing, but the record was cut there: a file caught mid-write)
                self.errors.add(self.fname, lines.taken[0][0], "malformed CSV row: a quoted field opens on this line "
                                "and never closes; the line is skipped and reading goes on at the next line",
                                self.PROBLEM)
                self._resume(lines.taken[1:])
                continue
            if rec and lines.taken:
                if lines.held and any(_LONE_CR in t for _, t in lines.taken):  # its lone CRs, as the file holds them
                    rec = [v.replace(_LONE_CR, "\r") for v in rec]
                return lines.taken[0][0], rec

    def _resume(self, lines: list[tuple[int, str]]) -> None:
        """Read ``lines`` again with a fresh parser (the old one may be inside a quoted field)."""
        self._lines.push_back(lines)
        self._reader = csv.reader(self._lines, delimiter=self.delimiter)

    def header(self) -> list[str] | None:
        """The header's fields; None for a file without one, and for a header line that is not UTF-8, which is
        reported (nothing of the file is read: skipped as a row's line is, the first row was taken for the header,
        its values for column names, and every row after it was read under them)."""
        self._lines.header = True
        try:
            got = self._next()
        except _HeaderNotUtf8 as exc:
            self.header_error = RowError(self.fname, exc.line, "the header line is not valid UTF-8 text, so the "
                                         "columns cannot be told and nothing of this file is read (re-save the file "
                                         "as UTF-8)")
            self.errors.add(self.fname, exc.line, self.header_error.message)
            return None
        finally:
            self._lines.header = False
        if got is None:
            return None
        if not any(str(f).strip() for f in got[1]):  # spaces only: before, read as one column named '   ' ("matrix
            # form needs ...; found ['   ']"), or a prompts file's every row "missing field(s) prompt_id, ..."
            self.header_error = RowError(self.fname, got[0], "the header line is blank (spaces only), so the columns "
                                         "cannot be told and nothing of this file is read: write the column names on "
                                         "the file's first line (or remove the file when it holds no rows)")
            self.errors.add(self.fname, got[0], self.header_error.message)
            return None
        if got[1][0].startswith("\ufeff"):  # byte order marks past the one UTF8 drops (a file that started with one
            # saved again by a tool that adds one): no part of the first name; before, it was read as '\ufeffmodel' and
            # the file as "missing column(s) model ... found '\ufeffmodel'" at line 1, nothing of it read
            got[1][0] = got[1][0].lstrip("\ufeff")
            self.extra_marks = True
        self.n_fields = len(got[1])
        self.header_fields = got[1]
        return got[1]

    def __iter__(self):
        while True:
            got = self._next()
            if got is None:
                return
            line, rec = got
            if self.header_fields and [rec[0].lstrip("\ufeff"), *rec[1:]] == self.header_fields:  # (a joined file's
                # byte order mark too) before, read as a row: "prompt_id 'prompt_id' is not in the prompts file"
                self.errors.add(self.fname, line, REPEATED_HEADER, REPEATED_HEADER)
                continue
            if not any(f.strip() for f in rec):  # empty cells only (`,,`: a spreadsheet's export), of any count: no
                continue  # row, a blank line (before, "missing model" / "missing field(s) ..." and exit 1)
            if rec == [DOS_EOF]:  # a line of the DOS end-of-file byte alone (old DOS/Windows tools end a file so): no
                continue  # row, as many tools read it (before, "malformed CSV row: 1 fields, the header has 3")
            if self.n_fields is None or len(rec) == self.n_fields:
                yield line, rec
                continue
            taken = self._lines.taken
            if len(taken) > 1:
                self.errors.add(self.fname, line, f"malformed CSV row: a quoted field opens on this line and does not "
                                f"close on it ({len(rec)} fields, the header has {self.n_fields}); the line is skipped "
                                "and reading goes on at the next line", self.PROBLEM)
                self._resume(taken[1:])
            else:
                if self._lines.held and _LONE_CR in taken[0][1]:
                    why = "; " + _LONE_CR_SAID
                elif len(rec) > self.n_fields and not any(f.strip() for f in rec[self.n_fields:]):
                    k = len(rec) - self.n_fields  # `m1,p1,1,`: a script that ends every value with a separator
                    sep = "tab" if self.delimiter == "\t" else "comma"
                    why = (f"; the {k} past the header's {'is' if k == 1 else 'are'} empty (a {sep} ending the line?): "
                           f"remove the trailing {sep}{'' if k == 1 else 's'}, or end the header line with as many")
                else:
                    why = ""
                self.errors.add(self.fname, line, f"malformed CSV row: {len(rec)} fields, the header has "
                                f"{self.n_fields}{why}", self.PROBLEM)


#: what a table file may be separated by instead of its extension's separator (a spreadsheet in a locale whose decimal
#: mark is a comma saves "CSV" with semicolons; a tab-separated export named .csv)
_OTHER_SEPARATORS = {";": "semicolons", "\t": "tabs", "|": "vertical bars", ",": "commas"}


def separator_problem(header: list[str], delimiter: str) -> str | None:
    """Why a CSV/TSV header of one column that holds another separator (``model;prompt_id;correct`` in a ``.csv``) is
    not read: the file is separated by something else than its extension says; None otherwise. Read as it is, the
    whole header was one column name ("matrix form needs a model column ...", or every prompt "missing field(s)").
    A first line that is Excel's separator hint (``sep=,``, ``sep=;``) is said as such: before, ``sep=,`` was a header
    of two columns ("malformed CSV row: 3 fields, the header has 2" on every row) and ``sep=;`` "separated by
    semicolons"."""
    kind = "TSV" if delimiter == "\t" else "CSV"
    if header and str(header[0]).lstrip("\ufeff \t").startswith(("{", "[")) and any(":" in str(h) for h in header):
        # JSON lines named .csv (`df.to_json(lines=True)` saved as outcomes.csv): before, read as a matrix whose prompt
        # ids were pieces of the JSON ("prompt_id 'prompt_id:\"p1\"' is not in the prompts file"), or, for a prompts
        # file of one line, "empty prompts file: no rows"
        return (f"line 1 is JSON, not a {kind} header: the file holds JSON; name it .jsonl (one JSON object a line) or "
                ".json (one JSON array); nothing of it is read")
    if header and len(header) <= 2 and str(header[0]).strip().lower().startswith("sep=") and len(str(header[0]).strip()) <= 5 \
            and not any(str(h).strip() for h in header[1:]):
        shown = str(header[0]).strip() + (delimiter if len(header) == 2 else "")
        return (f"line 1, {shown!r}, is Excel's separator line, not the header: delete it (the header is the first "
                "line); nothing of this file is read")
    if len(header) != 1:
        return None
    found = [name for sep, name in _OTHER_SEPARATORS.items() if sep != delimiter and sep in header[0]]
    if not found:
        return None
    ext, own = (".tsv", "tabs") if delimiter == "\t" else (".csv", "commas")
    return (f"the header is one column, {header[0]!r}: the file seems separated by {found[0]}, but a {ext} file is "
            f"read as separated by {own}; nothing of it is read: save it with {own}"
            + (" (or name it .tsv when it holds tabs)" if found[0] == "tabs" else ""))


def _fingerprint(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    return "sha256:" + h.hexdigest()


# --------------------------------------------------------------------------------------- prompts


def trailing_comma(text: str, exc: json.JSONDecodeError) -> str:
    """What a JSON document that fails at a closing ``]``/``}`` right after a comma (``[{...},]``, ``{"a": 1,}``: what
    a hand edit, a JavaScript or Python literal leaves) is told: JSON allows no comma there, remove it; "" otherwise."""
    close = text[exc.pos:exc.pos + 1]
    if close not in ("]", "}") or not text[:exc.pos].rstrip().endswith(","):
        return ""
    return f" (a comma before the closing '{close}', which JSON does not allow: remove that comma)"


def malformed_line(raw: str, exc: json.JSONDecodeError) -> str:
    """The error of a JSON line that does not parse: where on the line, and what to do. A line holding NUL bytes (the
    zeros a crash or an interrupted copy leaves where the data was to be) says so; a line that breaks off before its
    end (the last line of a file still being written) says it is cut short."""
    if "\x00" in raw:
        return (f"malformed JSON line: it holds {counted(raw.count(chr(0)), 'NUL byte')} (zeros a crash or an interrupted copy "
                "leaves in a file); the line is skipped: copy or export the file again")
    cut = not raw.rstrip().endswith("}")  # a JSON object's line ends with its closing brace
    if exc.msg == "Invalid control character at" and raw[exc.pos:exc.pos + 1] in ("\r", "\n", "\t"):  # (json.loads
        # strict: a raw line break or tab inside a string); the line is whole, not cut
        shown = {"\r": "carriage return", "\n": "line feed", "\t": "tab"}[raw[exc.pos]]
        return (f"malformed JSON line: a raw {shown} inside a string at column {exc.pos + 1} (JSON writes it as "
                f"{json.dumps(raw[exc.pos])[1:-1]}); the line is skipped: fix it, or export the file again with a "
                "JSON writer")
    # (not exc.colno: past the line's own line break, that is column 1 of the next line; at most just past its end)
    col = min(exc.pos, len(raw.rstrip("\r\n"))) + 1
    where = f"{exc.msg} column {col}" if exc.msg.endswith(" at") else f"{exc.msg} at column {col}"
    return (f"malformed JSON line: {where}{trailing_comma(raw, exc)}"
            + ("; the line breaks off before its end (a file still being written, or cut short?)" if cut else "")
            + "; the line is skipped: fix it, or export or copy the file again")


#: what a JSON line or array item ``{}`` is: an object, but of no field, so no row. Like a line ``[]`` or ``null`` (a
#: JSON value holding no row: "not a JSON object") it is an error at its line, the other rows read, where a blank line
#: (no JSON value at all: a file's trailing line feeds, lines between groups) is skipped without a word: a writer
#: that put ``{}`` where a row belongs lost that row's fields (a record that failed to serialise, an emptied
#: placeholder), which a skip would hide. Before, it was read as a row missing every field ("missing field(s)
#: prompt_id, benchmark, text", "missing model", "missing field doc_id"), naming fields as if some were there.
EMPTY_OBJECT = "an empty JSON object ({}), which holds no row (no field at all)"
EMPTY_OBJECTS = "empty JSON objects"


def json_objects(f, fname: str, errors: ErrorLog, *, array: bool, unique_keys: bool = False):
    """(line, dict) of an open JSON file: one JSON array (``array``; the line an item starts on) or JSON lines.
    Malformed lines and items that are not objects go to ``errors``; a malformed array rejects the whole file.
    ``unique_keys``: a JSON line or array item whose object names a key twice is an error at its line, not its last
    value read (a table's flat rows: checked only when the line, or the array's file, holds more ``":`` than its
    objects have keys)."""
    if array:
        text = dos_eof_dropped(f.read())
        try:
            data = json.loads(text)
            if unique_keys and isinstance(data, list) and text.count('":') > sum(len(r) for r in data if isinstance(r, dict)):
                data = json.loads(text, object_pairs_hook=_KeyedTwice.of)  # an item may name a key twice: find which
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data" and exc.lineno > 1 and _stray_first_line(text.split("\n", 1)[0]):
                # JSON lines whose first line is an array of no objects (a stray line): that line is an error, the
                # others are read; before, all lost as one array that "breaks off before its end"
                yield from json_objects(io.StringIO(text), fname, errors, array=False)
                return
            where = f"{exc.msg} column {exc.colno}" if exc.msg.endswith(" at") else f"{exc.msg} at column {exc.colno}"
            cut = text.strip() and not text.rstrip().endswith("]")  # a JSON array's file ends with its bracket
            errors.add(fname, exc.lineno, f"malformed JSON: {where}{trailing_comma(text, exc)}"
                       + ("; the file breaks off before its end (a copy or download cut short, or still being "
                          "written?)" if cut else "") + "; the file is skipped: fix it, or copy or download it again")
            return
        if not isinstance(data, list):
            errors.add(fname, None, "the JSON file is not an array of objects (nor JSON lines); the file is skipped")
            return
        for i, (line, row) in enumerate(zip(_item_lines(text), data), 1):
            if not isinstance(row, dict):
                errors.add(fname, line, f"item {i} is not a JSON object", "non-object JSON items")
            elif not row:
                errors.add(fname, line, f"item {i} is {EMPTY_OBJECT}: remove it, or write the row's fields into it",
                           EMPTY_OBJECTS)
            elif isinstance(row, _KeyedTwice) and row.twice:
                errors.add(fname, line, f"item {i} names {', '.join(map(repr, row.twice))} more than once: which value "
                           "holds cannot be told; the item is skipped", "keys named twice in a JSON object")
            elif bad_utf8(json.dumps(row, ensure_ascii=False)):
                errors.add(fname, line, f"item {i} holds text that is not valid UTF-8; the item is skipped", NOT_UTF8)
            else:
                yield line, row
        return
    first = True
    for i, raw in enumerate(_json_lines(f), 1):
        if not raw.strip():
            continue
        if raw.startswith("\ufeff"):  # a byte order mark where files were joined (`cat`): no content (before, "malformed
            raw = raw[1:]  # JSON line: Unexpected UTF-8 BOM (decode using utf-8-sig)", the row lost)
        if bad_utf8(raw):
            errors.add(fname, i, NOT_UTF8)
            first = False
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            if first and raw.strip() in ("{", "["):  # a JSON line is never a lone brace: one pretty-printed document
                errors.add(fname, i, _one_document(raw.lstrip() + f.read(), i))  # (before: an error per line, 20 shown)
                return
            if first and (table := _csv_header(raw)) is not None:  # CSV named .jsonl: before, every line "malformed
                # JSON line ...; the line breaks off before its end (a file still being written, or cut short?)"
                sep, kind = table
                errors.add(fname, i, f"line {i}, {example_value(raw.strip())}, is no JSON but a header of names "
                           f"separated by {sep}: the file seems to be {kind}; name it "
                           f"{Path(fname).name.split('.')[0]}.{kind.lower()}; nothing of it is read")
                return
            errors.add(fname, i, malformed_line(raw, exc), "malformed JSON lines")
            first = False
            continue
        first = False
        if isinstance(row, dict) and unique_keys and raw.count('":') > len(row) and (twice := _repeated_keys(raw)):
            errors.add(fname, i, f"the object names {', '.join(map(repr, twice))} more than once: which value holds "
                       "cannot be told; the row is skipped", "keys named twice in a JSON object")
        elif isinstance(row, dict) and not row:
            errors.add(fname, i, f"line is {EMPTY_OBJECT}: remove the line, or write the row's fields into it",
                       EMPTY_OBJECTS)
        elif isinstance(row, dict):
            yield i, row
        elif isinstance(row, list) and any(isinstance(x, dict) for x in row):  # the whole table as one JSON array
            errors.add(fname, i, f"line is a JSON array of {counted(len(row), 'item')}, not an object: a JSON-lines file holds "
                       "one object per line; a file holding one JSON array is read as such when named .json",
                       "non-object JSON lines")
        else:
            errors.add(fname, i, "line is not a JSON object", "non-object JSON lines")


class _KeyedTwice(dict):
    """A JSON object as read (``object_pairs_hook=_KeyedTwice.of``), with ``twice``: the keys it names more than once
    (``json.loads`` keeps the last value of each, without a word)."""

    twice: list[str] = []

    @classmethod
    def of(cls, items: list[tuple[str, object]]) -> _KeyedTwice:
        obj = cls(items)
        if len(obj) < len(items):
            seen: set[str] = set()
            obj.twice = []
            for k, _ in items:
                if k in seen and k not in obj.twice:
                    obj.twice.append(k)
                seen.add(k)
        return obj


def _repeated_keys(raw: str) -> list[str]:
    """The keys an object of the JSON text ``raw`` (any of its objects, nested ones too) names more than once."""
    twice: list[str] = []

    def pairs(items):
        obj = _KeyedTwice.of(items)
        twice.extend(k for k in obj.twice if k not in twice)
        return obj

    json.loads(raw, object_pairs_hook=pairs)
    return twice


_HEADER_NAME = re.compile(r'\s*"?[A-Za-z_][\w .\-/]*"?\s*')


def _csv_header(line: str) -> tuple[str, str] | None:
    """``("commas", "CSV")`` or ``("tabs", "TSV")`` when the first line of a JSON-lines file, which does not parse, is a
    CSV/TSV header (names, at least two, separated so: ``model,prompt_id,correct``); None otherwise."""
    text = line.strip()
    for sep, said in (("\t", ("tabs", "TSV")), (",", ("commas", "CSV"))):
        parts = text.split(sep)
        if len(parts) >= 2 and all(_HEADER_NAME.fullmatch(p) for p in parts):
            return said
    return None


def _json_lines(f):
    """The lines of a JSON-lines file as a universal-newline reader gives them, except that a line it ends at a lone
    carriage return (``\r`` not followed by ``\n``) where no JSON value ends (the text before it does not end with
    ``}`` or ``]``: a raw CR inside a string, a text pasted from an old Mac or a web form) goes on into the next: one
    line, numbered as an editor numbers it, its error ("Invalid control character") at its own line. Before, the line
    was cut there: an error at it, another ("Extra data") at a line the editor does not show, and every later line
    numbered one past its own. A file whose lines end with lone CRs (classic Mac OS) still reads line by line."""
    it = iter(f)
    for text in it:
        while text[-1:] == "\r" and not text.rstrip().endswith(("}", "]")):  # (a line of "\r\n" ends with "\n")
            try:
                text += next(it)
            except StopIteration:
                break
        yield dos_eof_dropped(text)


def _stray_first_line(line: str) -> bool:
    """Whether ``line``, the first of a file that starts with ``[``, is one JSON array of no objects on its own: a
    stray line of JSON lines, not the rows of a JSON array (an array of objects stays one, its errors said as such)."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return False
    return isinstance(value, list) and not any(isinstance(x, dict) for x in value)


def _one_document(text: str, first: int) -> str:
    """The error of a JSON-lines file that is one JSON document spread over lines (``json.dump(obj, f, indent=2)``,
    ``jq .``), ``text`` from its first line (line ``first``) on: what it holds and what to do, once."""
    lines = text.count("\n") + (not text.endswith("\n"))

    def said(what: str) -> str:
        return f"the file is one JSON {what} spread over {lines} lines (pretty-printed), not JSON lines (one object per line)"

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return (said("object" if text.startswith("{") else "array") + f", and it does not parse either: {exc.msg} at "
                f"line {first + exc.lineno - 1} column {exc.colno}; nothing of it is read: write one object per line, "
                "or copy the file again")
    if isinstance(data, dict) and (layout := pandas_layout(data)) is not None:
        return said(f"object holding a table in {layout}") + f"; nothing of it is read: {PANDAS_RECORDS}"
    if isinstance(data, list):
        return (said(f"array of {counted(len(data), 'item')}") + "; nothing of it is read: name it .json to read it as one JSON "
                "array, or write one object per line")
    nest = next((k for k, v in data.items() if isinstance(v, list) and v and isinstance(v[0], dict)), None)
    if nest is not None:  # the table as one object holding its rows under a key (`{"prompts": [{...}, ...]}`)
        return (said(f"object holding {counted(len(data[nest]), 'row')} under {nest!r}") + "; nothing of it is read: write the "
                "rows as a JSON array (`[{...}, ...]`, a .json file) or one object per line")
    return said("object") + "; nothing of it is read: write one object per line (`json.dumps(row)` without indent, `jq -c`)"


_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _item_lines(text: str) -> list[int]:
    """The line each item of the JSON array ``text`` (valid JSON) starts on. Before, an item's number was reported as
    its line, so an error in the 2nd item of a pretty-printed array (``json.dump(rows, f, indent=2)``) named line 2,
    inside the first."""
    decoder = json.JSONDecoder()
    pos = _JSON_SPACE.match(text).end() + 1  # past "["
    lines, line, counted = [], 1, 0
    while True:
        pos = _JSON_SPACE.match(text, pos).end()
        if pos >= len(text) or text[pos] == "]":
            return lines
        line += text.count("\n", counted, pos)
        counted = pos
        lines.append(line)
        _, pos = decoder.raw_decode(text, pos)
        pos = _JSON_SPACE.match(text, pos).end()
        if text.startswith(",", pos):
            pos += 1


def _iter_rows(path: Path, errors: ErrorLog, columns=None):
    """(line, dict) for each row of a small table file (prompts); parse errors go to ``errors``. ``columns``: the
    column names read (compared as :func:`column_key`): a CSV/TSV header or a Parquet schema naming one of them more
    than once is an error (:func:`repeated_columns`) and nothing of the file is read; before, a row held the last of
    them, without a word (a prompts file's second ``text`` column read as the prompt)."""
    fname = str(path)
    ext = table_ext(path)

    def repeated(names) -> str | None:
        return None if columns is None else repeated_columns([n if column_key(n) in columns else "" for n in names],
                                                             tuple(columns))

    if ext == ".parquet":
        for first, batch in _parquet_batches(path, errors, 65536):
            if first == 1 and (why := repeated(batch.schema.names)) is not None:
                errors.add(fname, None, why)
                return
            for k, row in enumerate(batch.to_pylist()):
                yield first + k, row
        return
    if (why := encoding_problem(path)) is not None:
        errors.add(fname, None, why)
        return
    line = None
    try:
        with _open_text(path) as f:
            if ext in (".csv", ".csv.gz", ".tsv", ".tsv.gz"):
                records = CsvRecords(f, fname, errors, "\t" if ext.startswith(".tsv") else ",")
                header = records.header()
                if header is None:  # an empty file, or a header that cannot be read (reported)
                    return
                if (why := repeated(header) or separator_problem(header, records.delimiter)) is not None:
                    errors.add(fname, 1, why)
                    return
                for line, rec in records:
                    yield line, dict(zip(header, rec))
            else:
                for line, row in json_objects(f, fname, errors, unique_keys=True,
                                              array=ext in (".json", ".json.gz") and _starts_with_bracket(path)):
                    yield line, row
    except READ_ERRORS as exc:
        add_read_failure(errors, fname, line, exc, hint=f"; is it truncated or not {ext}?")


def _starts_with_bracket(path: Path) -> bool:
    with _open_text(path) as f:
        head = f.read(4096).lstrip()
    return head.startswith("[")


def _parquet_batches(path: Path, errors: ErrorLog, batch_size: int):
    """Yield (line of the first row, 1-based; record batch) of a Parquet file. An unreadable file or a batch that
    fails to decode (truncated, corrupt) goes to ``errors`` naming the file and row, and ends the iteration."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if (why := lfs_pointer_problem(path)) is not None:
        errors.add(str(path), None, why)
        return
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
            if first == 1 and (why := repeated_columns(batch.schema.names, LONG_COLUMNS)) is not None:
                errors.add(str(path), None, why)
                return
            lines = np.arange(first, first + batch.num_rows, dtype=np.int64)
            yield {name: batch.column(i) for i, name in enumerate(batch.schema.names)}, lines
        return
    if ext in (".csv", ".csv.gz", ".tsv", ".tsv.gz"):
        yield from _read_csv_blocks(path, ext, errors)
        return
    # JSON lines (or a JSON array): Python parsing in chunks, converted to arrow columns
    chunk: list[dict] = []
    chunk_lines: list[int] = []
    twice_in: dict[tuple, list[str]] = {}  # a row's keys (most rows share them) -> :func:`_spelled_twice`
    for line, row in _iter_rows(path, errors):
        if (row := _without_nested(row, line, str(path), errors)) is None:
            continue
        twice = None
        if len(row) <= 64:  # long form (a matrix row's keys are its prompt ids, compared as written: not looked at)
            if (twice := twice_in.get(keys := tuple(row))) is None:
                if len(twice_in) > 10_000:
                    twice_in.clear()
                twice = twice_in[keys] = _spelled_twice(row)
        if twice:
            errors.add(str(path), line, f"the object names {' and '.join(map(repr, twice))} (one column, names read in "
                       "any case and spacing): which value holds cannot be told; the row is skipped",
                       "keys named twice in a JSON object")
            continue
        chunk.append(row)
        chunk_lines.append(line)
        if len(chunk) >= JSON_BLOCK_ROWS:
            yield _rows_to_columns(chunk), np.asarray(chunk_lines, dtype=np.int64)
            chunk, chunk_lines = [], []
    if chunk:
        yield _rows_to_columns(chunk), np.asarray(chunk_lines, dtype=np.int64)


def _spelled_twice(row: dict) -> list[str]:
    """The keys of a JSON outcomes row that name one long-form column (:data:`LONG_COLUMNS`) in two spellings
    (``correct`` and ``Correct``), as a CSV header's are (:func:`repeated_columns`); [] when none do. Before, the one
    spelled exactly was read and the other dropped without a word."""
    by_key: dict[str, list[str]] = {}
    for k in row:
        if (key := column_key(k)) in LONG_COLUMNS:
            by_key.setdefault(key, []).append(k)
    return next((names for names in by_key.values() if len(names) > 1), [])


#: how to write a table that pandas wrote with ``to_json()`` in another layout (:func:`pandas_layout`)
PANDAS_RECORDS = ('write it with `df.to_json(PATH, orient="records", lines=True)` (JSON lines, .jsonl) or '
                  '`orient="records"` (a JSON array, .json)')


def pandas_layout(obj: dict) -> str | None:
    """Which of pandas' ``DataFrame.to_json()`` layouts other than "records" a JSON object that is a whole table is in,
    with its number of rows (``pandas' to_json() columns layout ({column: {row: value}}) of 6 row(s)``), or None:
    "columns" (pandas' default), "index" ({row: {column: value}}) or "split" ({"columns": [...], "data": [[...]]}). The
    rows of a table file are objects one a line, or the items of an array: before, such an object was one row whose
    every field was "an object, not a name"."""
    if isinstance(obj.get("columns"), list) and isinstance(obj.get("data"), list):
        return f"pandas' to_json() split layout ({{\"columns\": [...], \"data\": [[...], ...]}}) of {counted(len(obj['data']), 'row')}"
    inner = list(obj.values())
    if not inner or not all(isinstance(v, dict) and v for v in inner):
        return None
    if any(column_key(k) in (*LONG_COLUMNS, "benchmark", "text") for k in obj):
        return f"pandas' to_json() columns layout ({{column: {{row: value}}}}) of {counted(len(inner[0]), 'row')}"
    return f"pandas' to_json() index layout ({{row: {{column: value}}}}) of {counted(len(obj), 'row')}"


def rows_under_key(row: dict) -> str | None:
    """What a JSON row that is the whole table as one object holding its rows under a key (``{"prompts": [{...},
    ...]}``, an object where an array belongs) or in a layout of pandas (:func:`pandas_layout`) is, and how to write
    it; None for another row."""
    if (layout := pandas_layout(row)) is not None:
        return f"this line is one JSON object holding a table in {layout}: {PANDAS_RECORDS}"
    nest = next((k for k, v in row.items() if isinstance(v, list) and v and isinstance(v[0], dict)), None)
    if nest is None:
        return None
    return (f"this line is one JSON object holding {counted(len(row[nest]), 'row')} under {nest!r}: write them as a JSON array "
            "(`[{...}, ...]`, a .json file) or one object per line (JSON lines)")


def _without_nested(row: dict, line: int, fname: str, errors: ErrorLog) -> dict | None:
    """A JSON-lines outcomes row without nested values (a list or an object where a name, id or score belongs; a
    boolean where a name or id belongs), each an error at ``line``: in long form (the row has a prompt_id key) such a model, prompt_id, correct or score
    costs the row, in matrix form such a cell is left out (unobserved) and such a model costs the row; None when the
    row is skipped. Read as columns they became Python reprs (a model named "['m2']") or, when every row had one, a
    column that could not be cast to text (an unexpected error costing the source)."""
    long = any(column_key(k) == "prompt_id" for k in row)
    names = [k for k in row if column_key(k) in ("model", "prompt_id") or (not long and k == next(iter(row)))]
    nested = [k for k, v in row.items() if isinstance(v, (list, dict)) or (k in names and isinstance(v, bool))]
    if not nested:
        return row
    fatal = [k for k in nested if k in names or column_key(k) in ("correct", "score")]
    if (whole := rows_under_key(row)) is not None:  # before: "rows is a list, not a name; the row is skipped"
        errors.add(fname, line, whole, "nested values (lists, objects) in outcome rows")
        return None
    if fatal:
        said = ", ".join(f"{k} is {json_kind(row[k])}, not {'a name' if k in names else 'a score'}" for k in fatal)
        errors.add(fname, line, f"{said}; the row is skipped", "nested values (lists, objects) in outcome rows")
        return None
    if not long:
        for k in nested:
            errors.add(fname, line, f"cell {k} is {json_kind(row[k])}, not a score; it is left out (unobserved)",
                       "nested values (lists, objects) in outcome rows")
        return {k: v for k, v in row.items() if k not in nested}
    return row  # a nested value in a column long form does not read


#: the columns of a long-form outcomes file (``tables.LONG_COLUMNS``), its header names read in any case and spacing
VALUE_COLUMNS = ("correct", "score")
LONG_COLUMNS = ("model", "prompt_id", *VALUE_COLUMNS)


def repeated_columns(names: list[str], known: tuple = ()) -> str | None:
    """The error for a header that names a column more than once (its columns, 1-based), or None. Read into one
    column per name, all but one of them would be dropped without a word (a matrix's repeated prompt id, a second
    `correct` column), so nothing of such a file is read. Blank names name no column (a spreadsheet's export ends its
    header with empty cells, ``model,prompt_id,correct,,``): they are no repetition, and their columns are read as
    any column long form does not use is. ``known``: the column names read in any case and spacing
    (:func:`column_key`), so that two spellings of one (``correct``, ``Correct``) are a repetition too (before, the one
    spelled exactly was read and the other dropped without a word); other names are compared as written."""
    seen: dict[str, list[tuple[int, str]]] = {}
    for i, n in enumerate(names, 1):
        if name := str(n).strip():
            seen.setdefault(column_key(name) if column_key(name) in known else name, []).append((i, name))
    twice = {k: at for k, at in seen.items() if len(at) > 1}
    if not twice:
        return None

    def said(at: list[tuple[int, str]]) -> str:
        spelled = list(dict.fromkeys(n for _, n in at))
        cols = ", ".join(str(i) for i, _ in at)
        if len(spelled) == 1:
            return f"{spelled[0]!r} (columns {cols})"
        return (f"{' and '.join(map(repr, spelled))} (columns {cols}: one column, names read in any case and "
                "spacing)")

    which = "; ".join(said(at) for at in twice.values())
    return (f"the header names {which} more than once: which column holds the values cannot be told, so nothing of "
            "this file is read; remove or rename the repeated column")


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
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # (OverflowError: a whole number past 64 bits,
            # which cost the source as an unexpected error; as text its row's value is an error or a name's digits)
            cols[k] = pa.array([None if v is None else str(v) for v in vals], type=pa.string())
    return cols


def _read_csv_blocks(path: Path, ext: str, errors: ErrorLog):
    import pyarrow as pa
    import pyarrow.csv as pacsv

    fname = str(path)
    delim = "\t" if ext.startswith(".tsv") else ","
    if (why := encoding_problem(path)) is not None:
        errors.add(fname, None, why)
        return
    probe = ErrorLog()
    try:
        with _open_text(path) as f:
            records = CsvRecords(f, fname, probe, delim)
            header = records.header()
            cr_ends = records.cr_ends
            extra_marks = records.extra_marks
    except READ_ERRORS as exc:
        add_read_failure(errors, fname, None, exc, hint=f"; is it truncated or not {ext}?")
        return
    if records.header_error is not None:
        errors.add(fname, records.header_error.line, records.header_error.message)
        return
    if not header:
        errors.add(fname, None, "empty file: no header and no rows")
        return
    if (why := repeated_columns(header, LONG_COLUMNS) or separator_problem(header, delim)) is not None:
        errors.add(fname, 1, why)
        return
    if extra_marks:  # pyarrow drops one byte order mark, not the next: its first column would be '\ufeffmodel'
        yield RESTART  # (the line-exact reader's lines are the file's, not provisional)
        yield from _read_csv_python(path, delim, header, errors)
        return
    # fast path: pyarrow, streamed block by block. A malformed row (wrong field count, stray quote) makes
    # this yield RESTART: the consumer discards what it built from this file and the line-exact Python
    # reader below reads it again, so every error names its true line.
    bad_rows: list = []

    def on_invalid(row):
        bad_rows.append(row)
        return "skip"

    # pyarrow ends a line at every lone CR (`\r` not followed by `\n`); the line-exact reader only in a file whose first
    # line ends with one: elsewhere such a file is read by the line-exact reader, as a malformed row is
    watch = None if cr_ends else _LoneCrWatch(pa.input_stream(path))
    try:
        reader = pacsv.open_csv(
            path if watch is None else watch,
            read_options=pacsv.ReadOptions(block_size=BLOCK_SIZE),
            parse_options=pacsv.ParseOptions(delimiter=delim, invalid_row_handler=on_invalid),
            convert_options=pacsv.ConvertOptions(column_types={h: pa.string() for h in header}, strings_can_be_null=False),
        )
        row = 0
        last_row: list = []
        for batch in reader:
            if bad_rows or (watch is not None and watch.lone) or _holds_header(batch, header):  # (the line-exact
                # reader reports a repeated header line)
                bad_rows.append(None)
                break
            lines = np.arange(row + 2, row + 2 + batch.num_rows, dtype=np.int64)  # provisional: csv_record_lines
            row += batch.num_rows
            if batch.num_rows:
                last_row = [batch.column(i)[batch.num_rows - 1].as_py() for i in range(batch.num_columns)]
            if (cells := _cells_not_all_blank(batch)) is not None:  # rows of empty cells (`,,`): blank lines, as the
                batch, lines = batch.filter(cells), lines[cells.to_numpy(zero_copy_only=False)]  # line-exact reader
            yield {name: batch.column(i) for i, name in enumerate(batch.schema.names)}, lines
        # a quote that never closes takes the rest of the file into the last record's field (pyarrow, like csv, reads
        # it so): a last record with a line break in a field is read again by the Python reader, which tells
        if (any(isinstance(v, str) and ("\n" in v or "\r" in v) for v in last_row) or _last_line_quotes(path)
                or (watch is not None and watch.lone) or (last_row and str(last_row[-1]).endswith(DOS_EOF))):
            # (the DOS end-of-file byte after the last value: the line-exact reader drops it, :func:`dos_eof_dropped`)
            bad_rows.append(None)
    except (pa.ArrowInvalid, *READ_ERRORS):
        bad_rows.append(None)
    finally:
        if watch is not None:
            watch.close()
    if not bad_rows:
        return
    yield RESTART
    yield from _read_csv_python(path, delim, header, errors)


class _LoneCrWatch(io.RawIOBase):
    """A binary stream (``raw``: the file as pyarrow opens it, decompressed) passed on as it is read, noting in
    ``lone`` whether it held a lone carriage return (``\r`` not followed by ``\n``; one ending the file ends its last
    line on both paths). Two counts of each block: the fast CSV path stays fast."""

    def __init__(self, raw):
        super().__init__()
        self._raw = raw
        self._cr = False  # the last block read ended with a CR
        self.lone = False

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        if data and not self.lone:
            if self._cr and data[:1] != b"\n":
                self.lone = True
            self._cr = data[-1:] == b"\r"
            body = data[:-1] if self._cr else data
            if (n := body.count(b"\r")) and n != body.count(b"\r\n"):
                self.lone = True
        return data

    def readinto(self, buf) -> int:
        data = self.read(len(buf))
        buf[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


def _cells_not_all_blank(batch):
    """The mask of the rows of a fast-path CSV block that hold a non-blank cell, or None when every row does (the
    usual case: only rows whose first cell is blank are looked at further). A row of empty or space-only cells (`,,`,
    a spreadsheet's export) is a blank line."""
    import pyarrow.compute as pc

    if not batch.num_rows or not batch.num_columns:
        return None
    blank = pc.equal(pc.utf8_trim_whitespace(batch.column(0)), "")
    if not pc.any(blank).as_py():
        return None
    for i in range(1, batch.num_columns):
        blank = pc.and_(blank, pc.equal(pc.utf8_trim_whitespace(batch.column(i)), ""))
        if not pc.any(blank).as_py():
            return None
    return pc.invert(pc.fill_null(blank, False))


def _last_line_quotes(path: Path, tail: int = 65536) -> bool:
    """Whether the last line of an uncompressed CSV/TSV file holds a quote character: a quote opening there and never
    closing (a file cut mid-write inside a quoted field, without the line break after it) is read by pyarrow as if it
    closed, so such a file is read again by the line-exact reader, which tells. Compressed files are not checked."""
    if path.suffix.lower() in (".gz", *OTHER_COMPRESSIONS):
        return False
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - tail))
            data = f.read()
    except OSError:
        return False
    return b'"' in data.rstrip(b"\r\n").rsplit(b"\n", 1)[-1]


def _holds_header(batch, header: list[str]) -> bool:
    """Whether a block of the fast CSV path holds a row equal to the header (files joined with ``cat``)."""
    import pyarrow.compute as pc

    if not batch.num_rows or batch.num_columns != len(header):
        return False
    mask = None
    for i, name in enumerate(header):
        col = batch.column(i)
        eq = pc.equal(pc.utf8_ltrim(col, characters="\ufeff") if i == 0 else col, name)
        mask = eq if mask is None else pc.and_(mask, eq)
    return bool(pc.any(mask).as_py())


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

    last = 1
    try:
        with _open_text(path) as f:
            records = CsvRecords(f, fname, errors, delim)
            records.header()
            records.n_fields = n
            for line, rec in records:
                last = line
                for c, v in zip(cols, rec):
                    c.append(v)
                lines.append(line)
                if len(lines) >= chunk:
                    yield flush()
    except READ_ERRORS as exc:
        add_read_failure(errors, fname, last, exc)
    if lines:
        yield flush()


def csv_record_lines(path: Path, wanted) -> dict[int, int]:
    """The physical line of records of a CSV/TSV file read by the fast path of :func:`_read_csv_blocks`, whose line
    numbers are provisional (record index + 2: blank lines, which pyarrow skips, and line breaks inside quoted fields
    are not counted): ``{provisional: physical}`` for the ``wanted`` provisional numbers. Reads the file (up to the
    last record wanted) with the line-exact reader, so it is called only when errors are reported."""
    wanted = {int(w) for w in wanted if w is not None and w >= 2}
    out: dict[int, int] = {}
    if not wanted:
        return out
    last = max(wanted)
    ext = table_ext(path) or ".csv"
    try:
        with _open_text(path) as f:
            records = CsvRecords(f, str(path), ErrorLog(), "\t" if ext.startswith(".tsv") else ",")
            records.header()
            for k, (line, _) in enumerate(records, 2):
                if k in wanted:
                    out[k] = line
                if k >= last:
                    break
    except READ_ERRORS:
        pass
    return out


def each_isolated(items, read) -> Iterator:
    """``read(item)`` for each of ``items`` (a reader's model folders), yielded in turn; an unexpected exception (a
    bug, a file shaped as no harness writes it) of one item does not stop the others: they are read and yielded, and
    the first such exception is raised at the end with ``source_where`` naming its item and ``also_failed`` the
    (item, exception) of the others (the ingest guard reports each at its item). Library errors (IndexerError) propagate at once, as before."""
    from ..errors import IndexerError

    failed: list[tuple[object, Exception]] = []
    for item in items:
        try:
            got = read(item)
        except IndexerError:
            raise
        except Exception as exc:  # noqa: BLE001 - raised again below, after the other items
            failed.append((item, exc))
            continue
        yield got
    if failed:
        item, exc = failed[0]
        exc.source_where = str(getattr(item, "path", item))
        exc.also_failed = [(str(getattr(i, "path", i)), e) for i, e in failed[1:]]
        raise exc
