"""The finding and browsing commands of the ``taskspace`` CLI: search, models, benchmarks, model (registered in
:mod:`indexer.cli`). Formatting only: :mod:`indexer.find` and :mod:`indexer.browse` do the work; ``--json``
prints exactly what they return (``FindResult.to_dict()``, the browse dicts)."""

from __future__ import annotations

import json
import re
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from .cli_index import checked_option, each, one_value, write_out
from .errors import InputError, counted


class Rank(str, Enum):
    probability = "probability"
    lcb = "lcb"


def echo_json(obj) -> None:
    """As every command's ``--json`` (:func:`indexer.cli_index.echo_json`): standard JSON, times in ISO 8601."""
    from .cli_index import echo_json as standard

    standard(obj)


#: what ``search --file`` takes, said in its help and in its errors
PROMPTS_FILE_FORMATS = ("a .jsonl file (one prompt a line: a JSON string or an object with a \"prompt\" or \"text\" "
                        "field), a .json file (a JSON array of those) or a text file (prompts separated by a line "
                        "of three dashes, ---; without such a line, by a blank line), gzipped too")

#: a line of three dashes (spaces or tabs around them allowed) separates two prompts of a text (a prompts file, the
#: search page's text box: indexer/web/app.js says the same); blank lines are part of a prompt
SEPARATOR = re.compile(r"^[^\S\n]*---[^\S\n]*$", re.MULTILINE)


def split_prompts(text: str) -> list[str]:
    """The prompts of a text: separated by ``---`` lines when it has one (blank lines are kept inside a prompt),
    else by blank lines (what a prompts file has always meant); each stripped, empty ones (or of invisible characters
    only) dropped (so a text of one
    prompt with blank lines can be given as that prompt followed by a ``---`` line)."""
    text = text.replace("\r\n", "\n")
    from .records import is_blank

    blocks = SEPARATOR.split(text) if SEPARATOR.search(text) else text.split("\n\n")
    return [b for b in (b.strip() for b in blocks) if not is_blank(b)]  # a block of zero-width spaces is empty too


def _prompt_of(item, path: Path, line: int, what: str) -> str:
    """The prompt of one item of a .jsonl or .json prompts file: a JSON string, or an object's "prompt" (else
    "text") string; anything else, or an empty prompt, is an :class:`InputError` naming the file and line."""
    if isinstance(item, dict):
        key = "prompt" if "prompt" in item else "text" if "text" in item else None
        if key is None:
            fields = ", ".join(map(json.dumps, list(item)[:5])) or "none"
            raise InputError(f"{what} has no \"prompt\" or \"text\" field (its fields: {fields}); give the prompt "
                             f"as {{\"prompt\": \"...\"}} or as a JSON string", file=str(path), line=line)
        item, what = item[key], f"{what}'s \"{key}\""
    if not isinstance(item, str):
        raise InputError(f"{what} is {_json_kind(item)}, not a prompt; give each prompt as a JSON string or an object "
                         f"with a \"prompt\" or \"text\" string", file=str(path), line=line)
    if not item.strip():
        raise InputError(f"{what} is an empty prompt; write the prompt's text, or remove it", file=str(path), line=line)
    from .records import text_problem

    bad = text_problem(item)  # a "\u0000" or lone "\ud800" escape: said at its line, not as the query's prompts[i]
    if bad:
        fix = ("remove its \\u0000 escape" if "NUL" in bad else
               "a \\ud800-\\udfff escape needs its pair (\\ud83d\\ude00), or write the character itself"
               if "surrogate" in bad else "write the prompt's text, or remove it")
        raise InputError(f"{what}: {bad}; {fix}", file=str(path), line=line)
    return item.strip()


def _json_kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    return "an array" if isinstance(value, list) else "an object" if isinstance(value, dict) else "a string"


def _jsonl_prompts(text: str, path: Path) -> list[str]:
    prompts = []
    for n, line in enumerate(text.split("\n"), 1):  # only \n ends a line of JSON Lines (a string may hold U+2028)
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise InputError(f"not JSON ({getattr(exc, 'msg', exc)} at column {getattr(exc, 'colno', '?')}); each "
                             "line of a .jsonl prompts file is one prompt: a JSON string or an object with a "
                             "\"prompt\" or \"text\" field", file=str(path), line=n) from None
        prompts.append(_prompt_of(item, path, n, "the line"))
    return prompts


def _json_prompts(text: str, path: Path) -> list[str]:
    """A JSON array of prompts, each item's line numbered (json reads the array item by item)."""
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")

    def line_at(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    def fail(exc: json.JSONDecodeError):
        raise InputError(f"not JSON ({exc.msg} at column {exc.colno}); a .json prompts file is a JSON array of "
                         "prompts: JSON strings or objects with a \"prompt\" or \"text\" field", file=str(path),
                         line=exc.lineno) from None

    pos = ws.match(text).end()
    if not text.startswith("[", pos):
        try:
            value = decoder.decode(text)
        except json.JSONDecodeError as exc:
            fail(exc)
        raise InputError(f"the file is {_json_kind(value)}, not an array; a .json prompts file is a JSON array of "
                         "prompts (JSON strings or objects with a \"prompt\" or \"text\" field)", file=str(path),
                         line=line_at(pos))
    prompts, pos, n = [], ws.match(text, pos + 1).end(), 0
    try:
        if text.startswith("]", pos):
            pos += 1
        else:
            while True:
                item, end = decoder.raw_decode(text, pos)
                n += 1
                prompts.append(_prompt_of(item, path, line_at(pos), f"item {n} of the array"))
                pos = ws.match(text, end).end()
                if text.startswith("]", pos):
                    pos += 1
                    break
                if not text.startswith(",", pos):
                    raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
                pos = ws.match(text, pos + 1).end()
        if ws.match(text, pos).end() != len(text):
            raise json.JSONDecodeError("Extra data", text, ws.match(text, pos).end())
    except json.JSONDecodeError as exc:
        fail(exc)
    return prompts


def _gunzip(data: bytes, path: Path) -> bytes:
    """The bytes of a gzipped prompts file; an InputError naming it when they cannot be read (before, a gzipped file
    was "not UTF-8 text ...; save it as UTF-8")."""
    import gzip
    import zlib

    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"the prompts file is gzip-compressed but cannot be read ({exc}); decompress it, or give "
                         "the file it was made from", file=str(path)) from None


def _is_device(path) -> bool:
    """True for a character or block device (``/dev/zero``, a disk): no prompts file, and perhaps without an end. A
    named pipe (``--file <(cmd)``) is read as a file; a path that cannot be looked at is left to the read to name."""
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def read_prompts_file(path: Path) -> list[str]:
    """Example prompts from a file (:data:`PROMPTS_FILE_FORMATS`): a ``.jsonl`` file one a line, a ``.json`` file
    an array, any other file (and ``-``, stdin) text split by :func:`split_prompts`; a gzipped file (``.jsonl.gz``,
    as a table source's) is read as the file it holds. A leading byte order mark is dropped. A line of a .jsonl or an item of a .json file that is not a prompt, or is an empty one, is an
    :class:`InputError` naming the file and line; nothing is searched."""
    import sys

    from .sources.common import bom_problem

    try:
        if str(path) == "-":
            text = sys.stdin.read()
        else:
            if _is_device(path):  # /dev/zero has no end: read, it filled memory until the command was killed
                raise InputError(f"a device, not a file; --file takes {PROMPTS_FILE_FORMATS} (or -, stdin)",
                                 file=str(path))
            data = Path(path).read_bytes()
            if data[:2] == b"\x1f\x8b":  # gzip: a table source's prompts.jsonl.gz, as the shared data sets ship it
                data = _gunzip(data, path)
            if (bom := bom_problem(data[:4])) is not None:  # PowerShell 5's `>`, Notepad's "Unicode": said as such
                raise InputError(bom, file=str(path))
            text = data.decode("utf-8")
    except FileNotFoundError:
        raise InputError(f"no such prompts file (--file takes {PROMPTS_FILE_FORMATS})", file=str(path)) from None
    except IsADirectoryError:
        raise InputError(f"is a folder; --file takes {PROMPTS_FILE_FORMATS}", file=str(path)) from None
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        raise InputError(f"the prompts file is not UTF-8 text ({exc.reason}: byte {exc.object[exc.start]:#04x}, the "
                         f"file's byte {exc.start}); save it as UTF-8", file=str(path), line=line) from None
    except OSError as exc:
        raise InputError(f"cannot read the prompts file: {exc.strerror or exc}", file=str(path)) from exc
    text = text.removeprefix("\ufeff")  # a byte order mark (Notepad, Excel) is not part of the first prompt
    if "\x00" in text:  # no prompt may hold one (text_problem); a UTF-16 file without a byte order mark has them all over
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise InputError("holds a NUL character (a binary file, or UTF-16 text without a byte order mark?); a "
                         "prompts file is UTF-8 text", file=str(path) if str(path) != "-" else "stdin", line=line)
    name = Path(path).name.lower() if str(path) != "-" else ""
    suffix = Path(name.removesuffix(".gz")).suffix  # prompts.jsonl.gz is a .jsonl file
    if suffix == ".jsonl":
        prompts = _jsonl_prompts(text, path)
    elif suffix == ".json":
        prompts = _json_prompts(text, path)
    else:
        prompts = split_prompts(text)
    if not prompts:
        if str(path) == "-":  # before, "-: no prompt in the file", a file named "-"
            raise InputError("no prompt on stdin (--file - reads text: prompts separated by a line of three dashes, "
                             "---, or without one by blank lines); pipe the prompts into it")
        raise InputError(f"no prompt in the file (--file takes {PROMPTS_FILE_FORMATS})", file=str(path))
    return prompts


#: characters a terminal acts on instead of showing (C0 and C1 controls: ESC starts a colour, a cursor move or an OSC
#: that sets the window title or the clipboard) or that reorder the text around them (bidi embeddings, overrides,
#: isolates, marks)
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def shown(text: str) -> str:
    """``text`` as the CLI prints it: each control or bidi character as its escape (``\\x1b``, ``\\u202e``), so a
    model or benchmark name a source wrote cannot colour, move or retitle the user's terminal, nor reorder a line."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _table(title: str, columns: list[tuple[str, str]], rows: list[list[str]], caption: str | None = None) -> None:
    from rich.console import Console

    # names are the sources' (a Hub dataset's model or benchmark name can hold an escape sequence): shown, never acted on
    title, caption, rows = shown(title), (shown(caption) if caption else caption), [[shown(c) for c in r] for r in rows]
    widths = [max([len(name), *(len(r[i]) for r in rows)]) if rows else len(name) for i, (name, _) in enumerate(columns)]
    # the cells are data (model, benchmark and licence names as sources wrote them), never rich markup or emoji codes:
    # before, "org/model[v2]" was shown as "org/model", ":fire:" as an emoji, and "x[/]y" raised a MarkupError
    plain = {"soft_wrap": False, "markup": False, "emoji": False}
    console = Console(**plain)
    need = sum(w + 3 for w in widths) + 1
    if console.width < need:
        # piped, or a terminal narrower than the table (COLUMNS=60): the whole table, its lines wrapped by the terminal
        # if need be; before, a terminal cropped it to its width, the rank column left empty, the columns on the right
        # and the end of the title cut off without a mark (piped output was already printed whole)
        console = Console(**plain, width=need)
    if (len(rows) > 1 and all(j in ("left", "right") for _, j in columns)
            and all(c.isascii() for r in rows for c in r)):
        # rich lays a table out cell by cell (about 0.7 ms a row of seven: 23 s for the 32,823 models of a large
        # home); here every cell is as wide as its characters and each column as its widest cell, so rich draws the
        # table with its first row only (title, borders, header, caption, styled as rich styles them) and the body
        # is that row's line for every row: the same output, which the first row's line proves
        with console.capture() as cap:
            console.print(_rich_table(title, caption, columns, widths, rows[:1]))
        lines = cap.get().split("\n")
        first = _table_line(rows[0], columns, widths)
        if lines.count(first) == 1:
            at = lines.index(first)
            write_out("\n".join([*lines[:at], *(_table_line(r, columns, widths) for r in rows), *lines[at + 1:]]),
                      console.file)
            return
    console.print(_rich_table(title, caption, columns, widths, rows))


def _rich_table(title: str, caption: str | None, columns: list[tuple[str, str]], widths: list[int], rows: list[list[str]]):
    """:func:`_table`'s rich table: each column ``widths`` wide (its widest cell's characters), never wrapped."""
    from rich.table import Table

    t = Table(title=title, caption=caption, show_lines=False, header_style="bold")
    for (name, justify), widest in zip(columns, widths):
        t.add_column(name, justify=justify, no_wrap=True, min_width=widest)
    for r in rows:
        t.add_row(*r)
    return t


def _table_line(row: list[str], columns: list[tuple[str, str]], widths: list[int]) -> str:
    """One body line of :func:`_table`'s table as rich draws it (``│`` borders, one space of padding each side)."""
    cells = (c.rjust(w) if justify == "right" else c.ljust(w) for c, (_, justify), w in zip(row, columns, widths))
    return "│" + "│".join(f" {c} " for c in cells) + "│"


def _params(value: str) -> None:
    from .find import parse_params

    parse_params(value)


#: ``--min-params`` / ``--max-params``: checked by the library's rule (:func:`indexer.find.parse_params`) while the
#: options are parsed, so a bad value is a usage error naming the option and the value (exit 2), as for the other
#: numeric options; before, it was an input error (exit 1) naming ``filters.min_params``
_params_option = checked_option(_params, lambda exc: exc.message)


def _check_params_range(min_params: str | None, max_params: str | None, command: str = "search") -> None:
    """``--min-params`` above ``--max-params``: a usage error naming both options (exit 2, before any store is opened),
    as a bad value of either is; before, the library's input error (exit 1) "filters.min_params: ..."."""
    from .find import parse_params

    if min_params is not None and max_params is not None and parse_params(min_params) > parse_params(max_params):
        from .errors import ConfigError

        raise ConfigError(f"--min-params {min_params} is above --max-params {max_params}: no model can be in that "
                          f"range; lower --min-params or raise --max-params (see `taskspace {command} -h`)")


def _prefer_smaller_option(value: float) -> float:
    """``--prefer-smaller``: a finite number from 0 to :data:`indexer.find.MAX_PREFER_SMALLER`, checked while the
    options are parsed (a usage error naming the option, as ``--top``'s range is), not by the search (exit 1)."""
    import math

    from .find import MAX_PREFER_SMALLER

    if not (math.isfinite(value) and 0 <= value <= MAX_PREFER_SMALLER):
        raise typer.BadParameter(f"{value:g} is not a number from 0 to {MAX_PREFER_SMALLER:g} (e.g. 0.1)")
    return value


def _nth(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _unusable(value, problem) -> str | None:
    """What is wrong with one text value of an option (``problem``: :func:`indexer.records.text_problem` or
    ``name_problem``), said with the value, or None."""
    bad = problem(value)
    if not bad:
        return None
    return f"{value[:40]!r} is {bad}" if bad == "empty" else bad if not value.strip() else f"{value[:40]!r} {bad}"


def _texts_option(problem, one: bool = False):
    """A typer callback refusing a blank (or NUL, lone-surrogate) value of a text option or argument while the options
    are parsed: a usage error naming the option and, for a repeatable one, which value ("the 2nd"), exit 2, before any
    store is opened (``one``: a single-valued option, a str or the list :func:`one_values` reads, or an argument:
    no "the 2nd"). Before, ``search ""`` was the library's input error "prompts[0]: a prompt must be a non-empty
    string" (exit 1; the 0-based index of an argument the command does not have), ``-m ""`` "models: ...",
    ``--pipeline-tag ""`` "filters.pipeline_tag: ...", and ``-b ""`` "none was given"."""
    def callback(values):
        if values is None:
            return None
        for i, value in enumerate([values] if one and isinstance(values, str) else values):
            bad = _unusable(value, problem)
            if bad:
                raise typer.BadParameter(bad if one else f"the {_nth(i + 1)}: {bad}")
        return values

    return callback


def _text(value):
    from .records import text_problem

    return text_problem(value)


def _name(value):
    """A name option's problem (a model, benchmark, pipeline tag or space): :func:`indexer.records.name_problem`'s, or
    invisible characters alone, which name nothing (the library refuses such a benchmark or filter as it refuses a
    prompt of them); a usage error naming the option, as for a blank one, ``--license`` and PROMPT."""
    from .records import INVISIBLE_ONLY, is_blank, name_problem

    return name_problem(value) or (f"holds {INVISIBLE_ONLY}" if is_blank(value) else None)


def _licence(value):
    """A ``--license`` value's problem: a name's (:func:`indexer.records.name_problem`), or commas and spaces alone, which name no license
    (the library splits a value at its commas, :class:`indexer.find.Filters`, and refuses one naming none), or an
    invisible character inside a name (:func:`indexer.find.hidden_in_licence`)."""
    from .find import hidden_in_licence, licence_names, no_licence
    from .records import name_problem

    return name_problem(value) or (hidden_in_licence(value) if licence_names(value) else no_licence(value))


_prompt_args = _texts_option(_text)
_names_option = _texts_option(_name)
_licences_option = _texts_option(_licence)
_name_option = _texts_option(_name, one=True)


def count(n: int) -> str:
    """A count as the tables and their notes show it, with thousands separators: ``32823`` -> ``"32,823"`` (the
    search page writes it the same way, indexer/web/app.js ``count``; ``--json`` keeps the plain integer). An option's
    value to type (``--offset 32822``) stays plain."""
    return f"{n:,}"


def _pct(x) -> str:
    """A share as a whole percentage, halfway rounded up, as the search page's ``Math.round`` does (before, Python's
    round-half-to-even: 1 of 8 was "12%" here and "13%" on the page)."""
    import math

    return "-" if x is None else f"{math.floor(100 * x + 0.5):.0f}%"


def one_values(**options) -> tuple:
    """The one value of each single-valued option (by its parameter's name: ``min_params`` is ``--min-params``), each
    declared as a list so that one given twice with two values is a usage error naming it and both
    (:func:`indexer.cli_index.one_value`; the same value twice is one), as ``index``, ``ingest`` and ``sources add``
    refuse theirs: click keeps the last of two values without a word (`search x -k 3 -k 5` listed five models)."""
    return tuple(one_value("--" + name.replace("_", "-"), values, "--" + name.replace("_", "-") + " takes one value; "
                           "give it once") for name, values in options.items())


def search(
    prompt: list[str] = typer.Argument(None, callback=_prompt_args, metavar="PROMPT", help="The task: one prompt, or several example prompts (averaged)."),
    # each single-valued option a list, so that one given twice with two values is refused (one_values), not the last
    # silently read
    file: Optional[list[Path]] = typer.Option(None, "--file", "-f", help="Read example prompts from a file: "
                                        "FILE.jsonl, one prompt a line (a JSON string or an object with a \"prompt\" or "
                                        "\"text\" field); FILE.json, a JSON array of those; any other file is text, "
                                        "prompts separated by a line of three dashes (---) and blank lines kept inside a "
                                        "prompt, or, with no --- line, by blank lines; gzipped too (.jsonl.gz); - reads text from stdin."),
    benchmark: Optional[list[str]] = typer.Option(None, "--benchmark", "-b", callback=_name_option, help="Use a benchmark as the task (its mean prompt)."),
    top: list[int] = typer.Option([10], "--top", "-k", min=1, max=1000, help="How many models (compare mode, -m: every listed model, whatever -k says; --json still echoes it as query.k)."),
    offset: list[int] = typer.Option([0], "--offset", min=0, help="Skip the best N: list ranks N+1 to N+k, a page of the ranking (not with -m)."),
    license: list[str] = typer.Option(None, "--license", callback=_licences_option, help="Only these licenses (repeatable)."),
    min_params: Optional[list[str]] = typer.Option(None, "--min-params", callback=each(_params_option),
                                      help="Only models with at least this many parameters (1.5B, 770M)."),
    max_params: Optional[list[str]] = typer.Option(None, "--max-params", callback=each(_params_option),
                                      help="Only models with at most this many parameters (8B)."),
    pipeline_tag: Optional[list[str]] = typer.Option(None, "--pipeline-tag", callback=_name_option, help="Only models with this Hub pipeline tag."),
    exclude_gated: bool = typer.Option(False, "--exclude-gated", help="Drop gated Hub repos."),
    open_only: bool = typer.Option(False, "--open-only", help="Only models with a Hub repo (drops API-only models)."),
    min_evidence: Optional[list[int]] = typer.Option(None, "--min-evidence", min=0, help="Only models measured on at least N prompts."),
    measured_on: Optional[list[str]] = typer.Option(None, "--measured-on", callback=_name_option, help="Only models measured on this benchmark."),
    models: list[str] = typer.Option(None, "--model", "-m", callback=_names_option, help="Compare mode: rank exactly these models (repeatable); every one is listed, -k does not apply."),
    # (no min=: typer's help would show the range as "x>=0.0", hiding the upper bound the callback enforces)
    prefer_smaller: list[float] = typer.Option([0.0], "--prefer-smaller", metavar="ALPHA",
                                               callback=each(_prefer_smaller_option),
                                         help="Rank by score - ALPHA x log10(parameters), ALPHA from 0 to 100: with the default method the score is the logit the calibration maps to the probability, p = sigmoid(bend(score + c)), c one constant per query (0.1: a tenfold size for about 2.5 points near 50%)."),
    rank: list[Rank] = typer.Option([Rank.probability], "--rank", help="Order by the calibrated probability or by its lower bound."),
    evidence: list[int] = typer.Option([3], "--evidence", min=0, help="Evidence prompts and benchmarks per model (with --json)."),
    space: Optional[list[str]] = typer.Option(None, "--space", callback=_name_option, help="Search this space: its index name, SQL id or encoder name (default: the configured encoder and method's, else the newest)."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole answer as one JSON object."),
) -> None:
    """Find the models most likely to succeed on a task: prompts, a prompts file or a benchmark.

    Examples:

      taskspace search "Write a Python function that parses a date string"

      taskspace search -f FILE -k 5 --max-params 8B --open-only

      taskspace search -b mmlu_pro/law --license mit --license apache-2.0 --json

      taskspace search "Prove that sqrt(2) is irrational" -m org/model-a -m org/model-b

      taskspace search "Summarise a contract" --prefer-smaller 0.1
    """
    from .find import Filters, find_models

    file, benchmark, top, offset, min_params, max_params, pipeline_tag, min_evidence, measured_on, prefer_smaller, rank, \
        evidence, space = one_values(file=file, benchmark=benchmark, top=top, offset=offset, min_params=min_params,
                                     max_params=max_params, pipeline_tag=pipeline_tag, min_evidence=min_evidence,
                                     measured_on=measured_on, prefer_smaller=prefer_smaller,
                                     rank=[r.value for r in rank],
                                     evidence=evidence, space=space)
    _check_params_range(min_params, max_params)
    prompts = list(prompt or [])
    given = [what for what, x in (("PROMPT", prompts), ("--file", file), ("--benchmark", benchmark)) if x]
    if not given or (benchmark and len(given) > 1):  # checked before any file or store is read: a usage error
        from .errors import ConfigError

        raise ConfigError("give the task as PROMPT (one or more), --file FILE or --benchmark NAME" +
                          (f", not {' and '.join(given)} together" if given else "; none was given") +
                          " (see `taskspace search -h`)")
    if offset and models:  # a usage error, before any file or store is read
        from .errors import ConfigError

        raise ConfigError(f"--offset pages the ranking of -k models; compare mode (-m) lists every model given, so it "
                          f"takes no --offset (got {offset}): drop --offset")
    if file is not None:
        prompts += read_prompts_file(file)
    filters = Filters(licenses=license or None, min_params=min_params, max_params=max_params, pipeline_tag=pipeline_tag,
                      exclude_gated=exclude_gated, open_only=open_only, min_evidence=min_evidence, benchmark=measured_on)
    result = find_models(prompts or None, benchmark=benchmark, k=top, offset=offset, filters=filters, models=models or None,
                         prefer_smaller=prefer_smaller, rank=rank, space=space,
                         evidence=evidence if as_json else max(evidence, 1))  # the table's "measured on it" reads one
    if as_json:
        echo_json(result.to_dict())
        return
    _print_result(result)


def _measured_on(benchmark: str, benchmarks: list[dict], near: str) -> str:
    """A benchmark query's "measured on it" cell: the model's observed accuracy on the benchmark and of how many
    prompts ("57% of 30"; "57% (published)" from records that carry no count), beside the probability the
    method predicts for it, which the ridge shrinks toward the model's general level and may differ from it
    (before, only "yes (30)": the table showed 74% for a model that got 57% of the benchmark's 30 prompts right, and
    nothing said so); a model not measured on it: ``near`` ("no", or "unknown" where the index cannot tell)."""
    got = next((b for b in benchmarks if b["name"] == benchmark and b["accuracy"] is not None), None)
    if got is None:
        return near
    return f"{_pct(got['accuracy'])} " + ("(published)" if got["n"] is None else f"of {got['n']}")


#: a filter of :class:`indexer.find.Filters` -> the option of `taskspace search` that sets it, as the notes under the
#: table name it (before: "filter benchmark excluded 88 model(s)" for --measured-on, read as the --benchmark query)
FILTER_OPTIONS = {"licenses": "--license", "min_params": "--min-params", "max_params": "--max-params",
                  "pipeline_tag": "--pipeline-tag", "exclude_gated": "--exclude-gated", "open_only": "--open-only",
                  "min_evidence": "--min-evidence", "benchmark": "--measured-on"}


#: what to do when nothing is indexed, also after a pass that had no source to read
NOTHING_INDEXED = ("`taskspace index --source SPEC` ingests results and indexes them (a plain `taskspace index` reads "
                   "the sources `taskspace sources list` shows)")


#: under the table (and on the search page, indexer/web/app.js) when the space stores no calibration map (a space an
#: older taskspace indexed before maps were stored, whose probabilities the predictor gives as ``(1 + score) / 2``)
NOT_CALIBRATED = ("not calibrated: space {space} stores no calibration map (indexed by a taskspace from before one was "
                  "stored), so P(success) is (1 + score) / 2, not a probability fitted on held-out results, and no "
                  "interval is given; `taskspace index` gives the configured method's space one")


#: under the table (and on the page, indexer/web/app.js) when some result's ``measured_near`` is null: a pulled index
#: whose records (or whose pull) do not carry each pattern's observed prompts. Before, "(an index pulled from a published
#: dataset holds none)": a pulled index knows it from the patterns' observed prompts, and a home pulled by a taskspace
#: from before it kept them (schema 0012) gets them by pulling again
NEAR_UNKNOWN = ("measured near unknown: this index cannot tell whether those models were measured on prompts near this "
                "query; it holds none of their per-prompt results, and its pulled records do not say which prompts "
                "each model was measured on (records published, or pulled, by a taskspace from before they did): "
                "pulling them again, published again by a newer taskspace if need be, gives it (and where the map "
                "weighs it, the publisher's order and probabilities)")


def measured_near_note(q: dict) -> str | None:
    """The line under the table (the page says it the same way, indexer/web/app.js) from ``query.measured_near``:
    that no model in the index was measured on anything like the query (every row's "no" said once: the ranking
    rests on the models' general ability), or how many of the results were measured near it when not all were; None
    when all were, or it is unknown (:data:`NEAR_UNKNOWN` says that)."""
    mn = q.get("measured_near")
    if not mn or mn["results"] == mn["of"]:
        return None
    if not mn["any_model"]:
        return (f"{FAR_NOTE}: no model in the index was measured on anything like this query (no indexed prompt is "
                "near it), so the ranking rests on the models' general ability alone")
    on = f"on benchmark {q['benchmark']}" if q.get("kind") == "benchmark" else "near this query"
    if not mn["results"] and mn["of"] == 1:  # one result (compare mode, -k 1): not "none of these 1 models"
        return f"this model was not measured {on} (other indexed models were), so its ranking rests on its general ability"
    if not mn["results"]:
        return (f"none of these {count(mn['of'])} models was measured {on} (other indexed models were), so their ranking "
                "rests on their general ability" + _measured_instead(q))
    rest = "the other's rank rests on its" if mn["of"] - mn["results"] == 1 else "the others' rank rests on their"
    return (f"{count(mn['results'])} of these {count(mn['of'])} models {'was' if mn['results'] == 1 else 'were'} measured {on}; "
            f"{rest} general ability")


def _measured_instead(q: dict) -> str:
    """The option that lists the models measured there instead, for a ranked list none of whose rows was (not compare
    mode: its models are the user's). On a home of many single-benchmark rows (metabench_openllm's 32,676), `search
    "Write a Python function ..."` ranked ten truthfulqa/mmlu rows first, and the note said why but not what to do;
    `--rank lcb` put gpt-4o+cot and deepseek-coder-33b-instruct, measured near it, first."""
    if q.get("models"):
        return ""
    if q.get("kind") == "benchmark" and q.get("benchmark"):
        return f"; --measured-on {q['benchmark']} lists only the models measured on it"
    if q.get("rank", "probability") == "probability":
        return "; --rank lcb (the lower end of the 90% interval) favours the models measured near it"
    return ""


#: the words the note of a query far from every indexed prompt begins with (:func:`measured_near_note`)
FAR_NOTE = "far from everything measured"


#: a table's note under an inferred parameter count (``12.3B*``: :func:`_params_cell`)
PARAMS_FROM_NOTE = "* the base model's parameter count (an adapter or a repo with no count of its own)"


def _params_cell(meta: dict) -> str:
    """A table's params cell: the count, with ``*`` where it is the base model's (``params_from``; the table's caption
    says so: :data:`PARAMS_FROM_NOTE`), ``-`` where none is known."""
    from .find import format_params

    text = format_params(meta.get("params"))
    return "-" if text is None else text + ("*" if meta.get("params_from") else "")


def _with_note(caption: str | None, metas) -> str | None:
    """``caption`` with :data:`PARAMS_FROM_NOTE` added when a row's count is its base model's."""
    if not any(m.get("params_from") and m.get("params") is not None for m in metas):
        return caption
    return f"{caption}; {PARAMS_FROM_NOTE}" if caption else PARAMS_FROM_NOTE


def _print_result(result) -> None:
    q = result.query
    what = (f"benchmark {q['benchmark']}" if q["kind"] == "benchmark" else
            counted(q['prompts'], 'example prompt', grouped=True) if q["kind"] == "prompts" else "the prompt")
    if not result.results:
        if q.get("offset") and q.get("total"):  # the ranking has fewer models than the offset skips: how many, as
            # `taskspace models --offset` says (before, not how many, nor where the last page is)
            typer.echo(f"no model past the best {count(q['offset'])}: the ranking holds {counted(q['total'], 'model', grouped=True)} and --offset "
                       f"{q['offset']} skips every ranked model (the last one is at --offset {q['total'] - 1})")
        # (a ranking of no model at all, e.g. a filter that leaves none, is said as without --offset: before,
        # "--offset 2 skips every ranked model (lower --offset)", which no offset changes)
        elif q.get("filters"):
            typer.echo("no model matches (check the filters, or run `taskspace index`)")
        elif q.get("models"):  # compare mode, no filter: the "not ranked" line below says why and what to do
            typer.echo("none of the listed models is ranked")
        else:  # (an index that lost the models SQL holds is an error of find_models: exit 3)
            # said after a pass too (one with no source configured): "run `taskspace index`" alone sent the user back
            typer.echo(f"no model indexed yet: {NOTHING_INDEXED}")
    else:
        rows = []
        for i, r in enumerate(result.results, 1 + q.get("offset", 0)):  # ranks offset + 1 ... on a page
            d = r.to_dict()
            interval = "-" if d["interval"] is None else "{}-{}".format(*map(_pct, d["interval"]))
            near = ("unknown" if r.coverage.measured_near is None else
                    f"yes ({r.coverage.near})" if r.coverage.measured_near else "no")
            if q["kind"] == "benchmark":
                near = _measured_on(q["benchmark"], d["evidence"]["benchmarks"], near)
            meta = r.metadata
            name = r.model + (" (API)" if r.api_only else "") + (" (results changed)" if r.results_changed else "")
            rows.append([count(i), name, _pct(d["probability"]), interval, near, _params_cell(meta),
                         meta.get("license") or "-"])
        sort = "lower bound" if q["rank"] == "lcb" else "probability"
        if q["rank"] == "lcb" and all(d["interval"] is None and d["rank_score"] == d["score"]
                                       for d in (r.to_dict() for r in result.results)):
            # no model has a bound (the paper method keeps no posterior): lcb ranked by the score, so by probability
            sort = "probability (--rank lcb: no model here has an interval, so none a lower bound to rank by)"
        if q["prefer_smaller"]:
            # the size is charged on the score the probability rises with (the logit with the default method), not on
            # the probability (before, "ranked by probability - 0.1 x log10(parameters)", not what is computed)
            sort = ("score" if sort == "probability" else sort) + f" - {q['prefer_smaller']} x log10(parameters)"
            if sort.startswith("score"):
                sort += " (the probability rises with the score)"
        caption = f"space {result.space['name']} ({result.space['method']}); ranked by {sort}"
        near_column = "measured on it" if q["kind"] == "benchmark" else "measured near"
        # a page of a longer ranking: which ranks, out of how many, as `taskspace models` titles a page "(#24-25)"
        offset, total = q.get("offset", 0), q.get("total")
        paged = total is not None and (offset or q.get("next_offset") is not None)
        page = (f" (#{count(offset + 1)}" + (f"-{count(offset + len(rows))}" if len(rows) > 1 else "") + f" of {count(total)})"
                if paged else "")
        _table(f"Models for {what}{page}", [("#", "right"), ("model", "left"), ("P(success)", "right"),
                                      ("90% interval", "right"), (near_column, "left"), ("params", "right"),
                                      ("license", "left")], rows,
               _with_note(caption, [r.metadata for r in result.results]))
        if result.space.get("calibrated") is False:
            typer.echo(NOT_CALIBRATED.format(space=result.space["name"]))
        if not result.space.get("signal", True):
            typer.echo("no calibrated signal: in this index's held-out results success did not rise with the score beyond chance "
                       "(too few results?), so every probability is the base rate and no interval is given; the order "
                       "is the models' raw scores")
        if any(r.coverage.measured_near is None for r in result.results):
            typer.echo(NEAR_UNKNOWN)
        changed = [r.model for r in result.results if r.results_changed]
        if changed:  # as the page and --json (each result's results_changed) say
            from .find import RESULTS_CHANGED

            typer.echo(f"{shown(', '.join(changed))}: {RESULTS_CHANGED}")
        if measured_near_note(q):  # as the page and --json (query.measured_near) say; before, only each row's "no"
            typer.echo(measured_near_note(q))
    for name, n in result.excluded.items():
        miss = result.missing_metadata.get(name)
        extra = f" ({count(miss)} without the metadata it needs)" if miss else ""
        typer.echo(f"{FILTER_OPTIONS.get(name, name)} excluded {counted(n, 'model', grouped=True)}{extra}")
    if q.get("options_filled"):  # as the page's notes and --json (query.options_filled) say; before, the table alone
        # did not: a question asked without its answer options was ranked as if it had those of its neighbours
        typer.echo("answer options taken from the nearest indexed questions (the task gave none of its own)")
    if q.get("truncated"):  # as the page's notes and --json (query.truncated) say: the rest did not count
        typer.echo(truncated_note(q["truncated"], q.get("prompts") or 1, q.get("max_tokens")))
    if q.get("unranked"):  # compare mode: the listed models the answer leaves out (as the page and --json say)
        # without a filter the one reason is a missing vector (before, a filter was named to users who gave none)
        why = ("removed by a filter, or without a vector in this space" if q.get("filters") else
               "no vector in this space: `taskspace index` solves the models whose results were ingested since its "
               "last pass")
        typer.echo(f"not ranked ({why}): {shown(', '.join(q['unranked']))}")
    if "prefer_smaller" in result.missing_metadata and result.missing_metadata["prefer_smaller"]:
        n = result.missing_metadata["prefer_smaller"]
        typer.echo(f"--prefer-smaller: {counted(n, 'model', grouped=True)} without a parameter count "
                   f"{'is' if n == 1 else 'are'} charged as 100B")


def truncated_note(which: list[int], n: int, limit: int | None) -> str:
    """The line saying which prompts the encoder read only the beginning of (``query.truncated``, 0-based)."""
    what = "the prompt is" if n == 1 else (
        f"prompt {count(which[0] + 1)} of {count(n)} is" if len(which) == 1 else
        f"prompts {', '.join(count(i + 1) for i in which)} of {count(n)} are")
    return (f"{what} longer than the encoder reads ({limit} word pieces): only its beginning was embedded, so text "
            "after the cut does not change the answer")


def models(
    # each single-valued option a list, so that one given twice with two values is refused (one_values)
    benchmark: Optional[list[str]] = typer.Option(None, "--benchmark", "-b", callback=_name_option, help="Only models measured on this benchmark."),
    license: list[str] = typer.Option(None, "--license", callback=_licences_option, help="Only these licenses (repeatable)."),
    min_params: Optional[list[str]] = typer.Option(None, "--min-params", callback=each(_params_option),
                                      help="At least this many parameters (1.5B, 770M)."),
    max_params: Optional[list[str]] = typer.Option(None, "--max-params", callback=each(_params_option),
                                      help="At most this many parameters (8B)."),
    pipeline_tag: Optional[list[str]] = typer.Option(None, "--pipeline-tag", callback=_name_option, help="Only models with this Hub pipeline tag."),
    exclude_gated: bool = typer.Option(False, "--exclude-gated", help="Drop gated Hub repos."),
    open_only: bool = typer.Option(False, "--open-only", help="Only models with a Hub repo."),
    min_evidence: Optional[list[int]] = typer.Option(None, "--min-evidence", min=0, help="Only models measured on at least N prompts."),
    measured_on: Optional[list[str]] = typer.Option(None, "--measured-on", callback=_name_option, help="Only models measured on this benchmark (as --benchmark; both: on both)."),
    offset: list[int] = typer.Option([0], "--offset", min=0, help="Skip this many."),
    limit: Optional[list[int]] = typer.Option(None, "--limit", "-n", min=1,
                                        help="At most this many (1 or more; default: every model)."),
    space: Optional[list[str]] = typer.Option(None, "--space", callback=_name_option, help="This space: its index name, SQL id or encoder name (default: the configured encoder and method's, else the newest; `taskspace spaces` lists them)."),
    as_json: bool = typer.Option(False, "--json", help="Print the answer of GET /v1/models: {models, offset, limit "
                                 "(null without --limit), total, next_offset, missing_metadata}."),
) -> None:
    """List the indexed models: identity, metadata, the prompts each was measured on, and its accuracy: the mean of
    its benchmarks' observed accuracies, each benchmark weighing alike (`taskspace model ID` gives each one's).

    Examples:

      taskspace models --benchmark mmlu_pro/law

      taskspace models --open-only --max-params 8B --json

      taskspace models --min-params 1B --pipeline-tag text-generation --exclude-gated --min-evidence 100
    """
    from .browse import count_models, list_models, missing_metadata, models_page
    from .find import Filters

    benchmark, min_params, max_params, pipeline_tag, min_evidence, measured_on, offset, limit, space = one_values(
        benchmark=benchmark, min_params=min_params, max_params=max_params, pipeline_tag=pipeline_tag,
        min_evidence=min_evidence, measured_on=measured_on, offset=offset, limit=limit, space=space)
    # the filters of `taskspace search` and GET /v1/models, with the library's rules (before: only --license,
    # --max-params and --open-only, so the list could not be narrowed as a search or the HTTP list can)
    _check_params_range(min_params, max_params, "models")
    filters = Filters(licenses=license or None, min_params=min_params, max_params=max_params, pipeline_tag=pipeline_tag,
                      exclude_gated=exclude_gated, open_only=open_only, min_evidence=min_evidence, benchmark=measured_on)
    if as_json:  # the answer of GET /v1/models: the page with its total, next offset and models lacking metadata
        echo_json(models_page(benchmark=benchmark, offset=offset, limit=limit, filters=filters, space=space))
        return
    rows = list_models(benchmark=benchmark, offset=offset, limit=limit, filters=filters, space=space)

    def unlisted() -> None:  # the models a filter drops for lack of the metadata it needs (as `search` notes them)
        what = {"licenses": "no license", "min_params": "no parameter count", "max_params": "no parameter count",
                "pipeline_tag": "no pipeline tag", "open_only": "no Hub repo known"}
        for name, n in missing_metadata(benchmark=benchmark, filters=filters, space=space).items():
            if n:
                typer.echo(f"{FILTER_OPTIONS.get(name, name)}: {counted(n, 'model', grouped=True)} with "
                           f"{what.get(name, 'no such metadata')} {'is' if n == 1 else 'are'} not listed")

    if not rows:
        matching = count_models(benchmark=benchmark, filters=filters, space=space) if offset else 0
        if matching:  # the options match models, the offset skips them all: say how many, and the last page's offset
            typer.echo(f"{counted(matching, 'indexed model', grouped=True)} {'matches' if matching == 1 else 'match'} these options; --offset {offset} skips them all (the last "
                       f"one is at --offset {matching - 1})")
        elif list_models(limit=1, space=space):  # models are indexed: the options left none
            # (before, also past the end of matching models: "drop a filter or lower --offset", not saying that
            # `--open-only --offset 32000` matched 86 models on a 32,823-model home)
            typer.echo("no indexed model matches these options (without them the index lists models: drop a filter "
                       "or lower --offset)")
            unlisted()
        else:
            typer.echo(f"no model is indexed yet: {NOTHING_INDEXED}")
        return
    title = counted(len(rows), "indexed model", grouped=True)
    if offset or limit is not None:  # a page: out of how many, and which (the title said "3 indexed models" of 25)
        total = count_models(benchmark=benchmark, filters=filters, space=space)
        if len(rows) < total:
            which = f"#{count(offset + 1)}" + (f"-{count(offset + len(rows))}" if len(rows) > 1 else "")
            title = f"{count(len(rows))} of {counted(total, 'indexed model', grouped=True)}" + (f" ({which})" if offset else "")
    _table(title, [("model", "left"), ("kind", "left"), ("params", "right"), ("license", "left"), ("prompts", "right"),
                   ("accuracy (mean of benchmarks)", "right"), ("benchmarks", "right")],
           [[r["model"], "API" if r["api_only"] else ("Hub" if r["hub_id"] else "name"),
             _params_cell(r["metadata"]), r["metadata"]["license"] or "-", count(r["n_prompts"] or 0),
             _pct(r["accuracy"]), count(len(r["benchmarks"]))] for r in rows],
           _with_note(None, [r["metadata"] for r in rows]))
    unlisted()


def benchmarks(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the benchmarks: group, number of prompts, number of models measured.

    Example:

      taskspace benchmarks --json
    """
    from .browse import list_benchmarks

    rows = list_benchmarks()  # a home with a database but nothing ingested: the library's empty-index error, the one
    # `taskspace models` gives there (exit 1, with what to run), --json too; before, "no benchmarks yet" and exit 0
    if as_json:
        echo_json(rows)
        return
    _table(counted(len(rows), "benchmark", grouped=True), [("benchmark", "left"), ("group", "left"),
                                                           ("prompts", "right"), ("models measured", "right")],
           [[r["name"], r["group"] or "-", count(r["prompts"]), count(r["models"])] for r in rows])


def model(
    model_id: str = typer.Argument(..., metavar="ID", callback=_name_option, help="A model: its Hub id, or any name a source gave it."),
    space: Optional[list[str]] = typer.Option(None, "--space", callback=_name_option, help="This space: its index name, SQL id or encoder name (default: the configured encoder and method's, else the newest; `taskspace spaces` lists them)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show one model: its benchmarks with observed accuracy, and where it is strongest relative to the others.

    Example:

      taskspace model meta-llama/Llama-3.1-8B-Instruct
    """
    from .browse import model_detail
    from .find import format_params

    (space,) = one_values(space=space)
    d = model_detail(model_id, space=space, keep=False)  # one page a process: nothing to keep the rows for
    if as_json:
        echo_json(d)
        return
    m = d["metadata"]
    kind = "API-only" if d["api_only"] else ("Hub: https://huggingface.co/" + d["hub_id"] if d["hub_id"] else "no Hub repo known")
    typer.echo(shown(f"{d['model']}  ({kind})"))
    size = format_params(m["params"]) or "-"
    if m.get("params_from") and m["params"] is not None:  # an adapter's: its base model's count
        size += f" (of {m['params_from']})"
    typer.echo(shown(f"license {m['license'] or '-'}, parameters {size}, "
                     f"pipeline tag {m['pipeline_tag'] or '-'}, gated {'-' if m['gated'] is None else 'yes' if m['gated'] else 'no'}"))
    if m.get("base_model"):
        typer.echo(shown(f"based on {m['base_model']}"))
    if d["aliases"]:
        typer.echo(shown("also called: " + ", ".join(d["aliases"])))
    _table("Observed", [("benchmark", "left"), ("accuracy", "right"), ("n", "right")],
           [[b["name"], _pct(b["accuracy"]), "unknown" if b["n"] is None else count(b["n"])] for b in d["benchmarks"]],
           caption=d.get("benchmarks_note"))
    if d["strengths"]:
        _table(f"Strongest relative to the other models (predicted in space {d['space']})",
               [("benchmark", "left"), ("P(success)", "right"), ("mean of all models", "right"), ("rank", "right"),
                ("measured", "left")],
               [[s["benchmark"], _pct(s["probability"]), _pct(s["mean"]), f"{count(s['rank'])} of {count(s['of'])}",
                 "yes" if s["measured"] else "no"] for s in d["strengths"]])
    if d.get("results_changed"):  # as the page and --json (results_changed) say, and a search's note
        from .browse import MODEL_RESULTS_CHANGED

        typer.echo(MODEL_RESULTS_CHANGED)
