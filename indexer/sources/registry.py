"""Which reader handles a source: every format's reader declares itself here, in one place.

A reader module (:mod:`.tables`, :mod:`.lm_eval`, :mod:`.lighteval`) defines ``READER``, a :class:`Reader`:
its format name (``--format``), a one-line picture of its files (for error messages), how sure it is that a
local file or folder is its format (:class:`Match`), how it reads one (one batch per source), the optional
revision shortcut (source identities and revisions without parsing), and, for a Hub dataset repo, which of
the repo's files it needs. :data:`READER_MODULES` lists the modules; adding a format is a new module with a
``READER`` and its name there, and a new layout of a known format stays inside that format's module.

Which reader wins when several recognise a source: the surest (:class:`Match`), and among equally sure ones
the first in :data:`READER_MODULES`. So a folder with ``outcomes.<ext>`` + ``prompts.<ext>`` is a plain table
even when lm-eval output sits below it, a ``samples_<task>_<ts>.jsonl`` file is lm-eval output although any
``.jsonl`` is a table file type, and a Hub repo with lm-eval samples is read as lm-eval output even when
table-named files sit at its root.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

from ..errors import READING_FOR, InputError, arg, option_hint, source_hint
from ..records import SourceBatch, SourceInfo

#: the reader modules of this package, in order of precedence among equally sure matches
READER_MODULES = ("tables", "lm_eval", "lighteval")


class Match(IntEnum):
    """How sure a reader is that a source is its format."""

    NONE = 0
    #: it fits but proves little: a file with a table extension, or table-named files in a Hub repo's list
    #: (whether they pair up is not checked)
    WEAK = 1
    #: file names only this format writes (``samples_*``, ``details_*``), or its complete layout (an
    #: ``outcomes.<ext>`` + ``prompts.<ext>`` pair side by side)
    STRONG = 2


@dataclass(frozen=True)
class Reader:
    """One input format: how to recognise, plan and read it (each callable lives in the format's module)."""

    name: str  # the format's name (``--format``, ``sources.toml``'s ``format``)
    layout: str  # what its files look like, e.g. "details_*.parquet (lighteval)"
    recognise: Callable[[Path], Match]  # a local file or folder -> how sure
    read: Callable[..., Iterator[SourceBatch]]  # (path, **options) -> one SourceBatch per source, lazily
    #: a Hub repo's file list -> (how sure, the files to download: the runs the reader would read)
    plan_hub_files: Callable[[list[str]], tuple[Match, list[str]]]
    #: (path, **options) -> the SourceInfo of every source under the path, from file names and content hashes
    #: without parsing (so an unchanged source is skipped unread); None: no such shortcut, always read
    source_infos: Callable[..., list[SourceInfo]] | None = None
    #: (path) -> why a folder no reader recognised is no source of this format though it looks like one (e.g. an
    #: lm-eval run without samples files), or None; detection's error says it instead of "cannot tell the format"
    why_not: Callable[[Path], str | None] | None = None
    #: ``read`` takes ``kind=``, ``location=``, ``revision=`` and ``model=``, so a Hub download is read under
    #: the repo's identity (the repo's name may also tell the model)
    takes_identity: bool = False
    #: the reading options ``read`` and ``source_infos`` take (``ingest --prompts``, ``--model``, ``--filter``,
    #: ``--metric`` and the identity above); another is a usage error naming the formats that take it
    options: tuple[str, ...] = ()


#: the CLI option of each reading option a user gives (``taskspace ingest``), for the messages
OPTION_FLAGS = {"prompts": "--prompts", "model": "--model", "filter": "--filter", "metric": "--metric"}


def check_options(reader: "Reader", options: dict) -> None:
    """A :class:`~indexer.errors.ConfigError` (exit 2, a usage error) when ``options`` hold one the format of
    ``reader`` does not take (``ingest TABLE --filter X``: lm-eval's option), naming it and the formats that take it;
    before, the reader failed with "TypeError: read_table() got an unexpected keyword argument 'filter'"."""
    from ..errors import ConfigError

    check_option_values(options)
    for name in options:
        if name in reader.options:
            continue
        takers = [r.name for r in readers() if name in r.options]
        flag = arg(name, flag=OPTION_FLAGS.get(name, name))  # the option under the CLI, else the parameter
        # a configured source (sources.toml written by hand): the command that configures it without the option;
        # before, "drop --model" alone, an option of no command the user gave
        raise ConfigError(f"{flag} applies only to {' and '.join(takers) or 'no'} sources, not to this {reader.name} "
                          f"source; drop {flag}{source_hint(name, None)}")


def check_option_values(options: dict) -> None:
    """A :class:`~indexer.errors.ConfigError` (exit 2) when a name option (``--model``, ``--filter``, ``--metric``)
    is given blank: before, ``''`` was read as not given (the default model name, the default filter) and ``'  '`` as
    a name, so every row of the source was rejected ("model name empty")."""
    from ..errors import ConfigError

    from .scoring import parse_metric

    parse_metric(options.get("metric"))  # KEY, or TASK=KEY per task (a list of them): blank halves, two KEYs
    for name in ("model", "filter"):
        value = options.get(name)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ConfigError(f"{arg(name, value)}: blank; give a name or leave {arg(name)} out")


_readers: dict[str, Reader] | None = None


def readers() -> list[Reader]:
    """Every reader, in the order of :data:`READER_MODULES` (their modules are imported on first use)."""
    global _readers
    if _readers is None:
        found = {}
        for module in READER_MODULES:
            reader = importlib.import_module(f"{__package__}.{module}").READER
            found[reader.name] = reader
        _readers = found
    return list(_readers.values())


def formats() -> tuple[str, ...]:
    """The format names, in :data:`READER_MODULES` order."""
    return tuple(r.name for r in readers())


def find_reader(name: str | None) -> Reader | None:
    """The reader of format ``name``; None when there is none of that name."""
    readers()
    return _readers.get(name) if name else None


def get_reader(name: str, item: str | None = None) -> Reader:
    """The reader of format ``name``, or an InputError (naming ``item``) listing the known formats."""
    reader = find_reader(name)
    if reader is None:
        raise InputError(f"unknown format {name!r}; use one of {', '.join(formats())}", item=item)
    return reader


def _refuse_known(p: Path) -> None:
    """An InputError when a reader knows ``p`` as its format's output that is no source (its ``why_not``: results
    files of runs made without per-sample output, an lm-eval results file given alone)."""
    for reader in readers():
        if reader.why_not is not None and (why := reader.why_not(p)):
            raise InputError(why, file=str(p))


def empty_folder(folder: Path) -> bool:
    """True for a folder with nothing in it (False when it cannot be listed: the error says so elsewhere)."""
    try:
        return next(folder.iterdir(), None) is None
    except OSError:
        return False


def _sources_below(folder: Path) -> list[tuple[Path, "Reader"]]:
    """The folders right below ``folder`` (not hidden) that a reader is sure of (:data:`Match.STRONG`), with it: a
    folder of table runs (``results/run1``, ``results/run2``), which no reader reads as one source."""
    try:
        subs = sorted(d for d in folder.iterdir() if d.is_dir() and not d.name.startswith("."))
    except OSError:
        return []
    found = []
    for d in subs:
        if (r := next((r for r in readers() if r.recognise(d) == Match.STRONG), None)) is not None:
            found.append((d, r))
    return found


def detect(path: str | Path, options=()) -> Reader:
    """The reader of a local file or folder (the surest, see the module docstring), or an InputError saying why
    there is none. ``options``: the reading options given (names, :data:`OPTION_FLAGS`); when no reader knows the
    path by its files, options only one format takes name it (``--prompts``: a folder of outcomes alone, its prompts
    file given; before, "outcomes.csv but no prompts file beside it", the file given ignored), and its reader says
    what is missing."""
    from .common import other_compression, path_problem

    p = Path(path)
    if (why := path_problem(p)) is not None:
        raise InputError(why, file=str(p))
    best, sure = None, Match.NONE
    for reader in readers():
        m = reader.recognise(p)
        if m > sure:
            best, sure = reader, m
            if sure == Match.STRONG:
                break  # no later reader can be surer
    if best is None and (compressed := other_compression(p)) is not None:
        raise InputError(compressed[0], file=str(compressed[1]))
    if best is not None and sure == Match.WEAK and p.is_file():  # any table-typed file: unless it is known as
        _refuse_known(p)  # another format's file that is no source (an lm-eval results file)
    given = {o for o in options if o in OPTION_FLAGS}
    takers = [r for r in readers() if given and given <= set(r.options)]
    if best is None and len(takers) == 1 and not (p.is_dir() and empty_folder(p)):
        return takers[0]
    if best is not None:
        return best
    names = ", ".join(formats())
    _refuse_known(p)
    from ..dataset import SPACES, records_not_results

    if p.is_dir() and (p / SPACES).is_file():  # a `taskspace publish --dry-run` folder or a downloaded record set
        raise InputError(records_not_results("folder", str(p)), file=str(p))
    if p.is_dir():
        layouts = [r.layout for r in readers()]
        expected = layouts[0] if len(layouts) == 1 else f"{', '.join(layouts[:-1])}, or {layouts[-1]}"
        if empty_folder(p):  # nothing to tell a format by: "pass --format" would not help
            raise InputError(f"the folder is empty: put a source's files in it ({expected})", file=str(p))
        if below := _sources_below(p):  # `results/run1`, `results/run2`: no --format reads them as one
            more = f" and {len(below) - 5} more" if len(below) > 5 else ""
            raise InputError(f"no source itself, but the folders below it are: "
                             f"{', '.join(f'{d.name} ({r.name})' for d, r in below[:5])}{more}; {READING_FOR.get()} "
                             f"each by its own path ({below[0][0]}, ...): each is a source of its own",
                             file=str(p))
        raise InputError(f"cannot tell the format of this folder: expected {expected}; pass {option_hint('format')} ({names})",
                         file=str(p))
    from .common import EXTENSIONS, table_ext

    if table_ext(p) is None:  # no reader reads such a file whatever --format says: say what they read
        kind = f"{p.suffix} files" if p.suffix else "a file without an extension"
        raise InputError(f"unknown file type: taskspace does not read {kind}; it reads "
                         f"{'; '.join(r.layout for r in readers())}, where a table is {', '.join(EXTENSIONS)}",
                         file=str(p))
    raise InputError(f"unknown file type; pass {option_hint('format')} ({names})", file=str(p))


def plan_files(files: list[str]) -> tuple[str | None, list[str]]:
    """``(format, files to download)`` for a Hub repo's file list (the surest reader's plan: the latest run per
    task and what reading it needs); ``(None, [])`` when no reader knows these files."""
    best, sure, chosen = None, Match.NONE, []
    for reader in readers():
        m, wanted = reader.plan_hub_files(files)
        if m > sure and wanted:
            best, sure, chosen = reader, m, wanted
    return (best.name, chosen) if best is not None else (None, [])
