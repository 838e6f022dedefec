"""lm-evaluation-harness ``--log_samples`` output -> one :class:`~indexer.records.SourceBatch` per folder of runs
(a samples file given alone: one for that file, located at its own path).

Layouts (docs/FORMATS.md lists them with the harness versions that write them):

* ``<out>/<org>__<model>/results_<ts>.json`` beside ``samples_<task>_<ts>.jsonl`` (harness 0.4.3+; a second run
  of a model adds files with a new timestamp). Open LLM Leaderboard v2 details repos hold the same, written by
  the leaderboard's harness of June 2024: ``.json`` samples that are JSON lines (or, briefly, one JSON array
  with ``arguments`` as ``[[arg_0, arg_1], ...]``).
* ``--output_path <dir>/<name>.json`` (harness 0.4.9+): the results file is ``<dir>/<name>_<ts>.json`` and the
  samples sit beside it in ``<dir>``, with no model folder; several models' runs may share the folder.
  A results file is found by its timestamp and its content (a JSON object with ``results`` and ``configs``).

Per model and task the latest run (timestamp) is read; the model is the one its results file names. Per
sample line: the filter (generation tasks write one line per filter; harness <= 0.4.6 wrote no ``filter`` key,
one record per filter and doc in the order of the task's ``filter_list``, recovered here from that order) and
the metric come from :mod:`.rules` and :mod:`.scoring`; the prompt text is the question from ``doc`` with its
context and options (or the last example of ``arg_0``); the prompt id is ``<task>:<doc_id>``. Problems become
RowErrors (file, line, what is wrong) and the rest is read; a samples file without its results file is rejected.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import READING_FOR, InputError, arg, counted, option_hint
from ..records import NAME_LIMIT, BenchmarkInfo, Outcome, SourceBatch, SourceInfo, name_problem
from .common import (OTHER_COMPRESSIONS, READ_ERRORS, UTF8, ErrorLog, add_read_failure, each_isolated, encoding_problem,
                     example_value, json_document, json_kind, json_objects, json_problem, number_shown,
                     other_compression, trailing_comma)
from .registry import Match, Reader
from .rules import Rules, TaskRule, extract_text, load_rules
from .scoring import KeyFit, MetricOption, parse_metric, report_metric_failures, scored_row, task_keys

TS = r"\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}(?:\.\d+)?"
#: (a ``.gz`` of either is read as the file: ``gzip -r`` over an output folder made them unreadable before)
SAMPLES_RE = re.compile(rf"^samples_(?P<task>.+)_(?P<ts>{TS})\.(?P<ext>jsonl|json)(?:\.gz)?$")
RESULTS_RE = re.compile(rf"^results_(?P<ts>{TS})\.json$")
#: any ``<name>_<ts>.json`` that is not a samples file: a results file (``--output_path <name>.json``, 0.4.9+)
RUN_JSON_RE = re.compile(rf"^(?P<stem>.+)_(?P<ts>{TS})\.json(?:\.gz)?$")


def open_text(path: Path, errors: str = "strict"):
    """A samples or results file as UTF-8 text (a byte order mark dropped), through gzip when its name ends
    ``.gz``; ``errors="surrogateescape"``: bytes that are not UTF-8 become lone surrogates, reported at their line."""
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding=UTF8, errors=errors)
    return open(path, encoding=UTF8, errors=errors)


def _read_json(path: Path):
    with open_text(path) as f:
        return json_document(f.read())  # (a DOS end-of-file byte after the object dropped, as in a table file)


def results_ts(name: str) -> str | None:
    """The timestamp of a file name that may be a results file (``results_<ts>.json`` or ``<name>_<ts>.json``)."""
    if SAMPLES_RE.match(name):
        return None
    m = RUN_JSON_RE.match(name)
    return m["ts"] if m else None


@dataclass
class ModelFolder:
    """The harness files of one folder: ``results[ts]`` (candidate results files, ``results_<ts>.json`` first)
    and ``samples[task][ts]``. Usually one model's folder; with ``--output_path <name>.json`` possibly several
    models' runs."""

    path: Path
    results: dict[str, list[Path]] = field(default_factory=dict)
    samples: dict[str, dict[str, Path]] = field(default_factory=dict)
    #: the one samples file given as the source (``taskspace ingest DIR/samples_<task>_<ts>.jsonl``): it is its
    #: own source, located at its own path, so two files of one folder ingested apart are two sources
    only: Path | None = None
    #: why this folder could not be listed (a folder below the path given that this user may not read): reading it
    #: raises this, so it costs only itself (an error naming it) and the other model folders are read
    denied: PermissionError | None = None
    #: samples or results files of this folder that are symbolic links to nothing (a target moved or deleted, a loop
    #: of links): each an error when the folder is read, as its task or run is missing
    broken: list[Path] = field(default_factory=list)
    #: samples or results files of this folder that are no regular file (a named pipe, a socket, a device): each an
    #: error when the folder is read, found by ``stat`` alone (opening a named pipe would wait for a writer forever)
    special: list[Path] = field(default_factory=list)
    #: samples or results files of this folder compressed other than with gzip (``samples_<task>_<ts>.jsonl.zst``):
    #: each an error when the folder is read (:func:`~indexer.sources.common.other_compression`), as its task or run
    #: is missing; before, passed over without a word
    compressed: list[Path] = field(default_factory=list)


def _harness_name(name: str) -> bool:
    """Whether a file name is a samples or results file's."""
    return bool(SAMPLES_RE.match(name) or results_ts(name))


def scan_folder(folder: Path) -> ModelFolder | None:
    mf = ModelFolder(folder)
    for p in sorted(folder.iterdir()):
        if not p.is_file():
            if SAMPLES_RE.match(p.name) or results_ts(p.name):
                if p.is_symlink() and not p.exists():
                    mf.broken.append(p)
                elif p.exists() and not p.is_dir():  # before, passed over without a word (its task missing)
                    mf.special.append(p)
            continue
        if m := SAMPLES_RE.match(p.name):
            mf.samples.setdefault(m["task"], {})[m["ts"]] = p
        elif ts := results_ts(p.name):
            mf.results.setdefault(ts, []).append(p)
        elif p.suffix.lower() in OTHER_COMPRESSIONS and _harness_name(p.stem):
            mf.compressed.append(p)
    for paths in mf.results.values():
        paths.sort(key=lambda p: (not RESULTS_RE.match(p.name), p.name))
    unread = mf.special + [p.with_suffix("") for p in mf.compressed]
    return mf if mf.samples or any(SAMPLES_RE.match(p.name) for p in unread) else None


#: how many levels below the path given model folders are looked for (detection and reading alike)
MAX_DEPTH = 3
#: how far below that limit a model folder is still noticed (and reported as not read)
_LOOK_BEYOND = 5


#: a model folder lm-eval names after a relative path (``pretrained=./ckpt`` -> ``.__ckpt``, ``../ckpt`` ->
#: ``..__ckpt``: ``sanitize_model_name`` turns each ``/`` into ``__``): hidden, but read as any model folder
LOCAL_PATH_FOLDER_RE = re.compile(r"^\.{1,2}__")


def _subfolders(p: Path) -> list[Path]:
    """The folders in ``p`` that may hold runs: not hidden ones (``.git``, ``.cache``), but those lm-eval names after
    a relative model path (:data:`LOCAL_PATH_FOLDER_RE`); before, a run of ``pretrained=./ckpt`` was not found."""
    try:
        return sorted(x for x in p.iterdir() if x.is_dir() and (not x.name.startswith(".")
                                                                   or LOCAL_PATH_FOLDER_RE.match(x.name)))
    except OSError:
        return []


def _has_samples(p: Path) -> bool:
    try:
        return any(SAMPLES_RE.match(x.name) for x in p.iterdir())
    except OSError:
        return False


def _first_samples_folder(p: Path, levels: int) -> Path | None:
    """The first folder at or below ``p`` (``levels`` levels at most, breadth first) holding a samples file."""
    todo = [(p, 0)]
    while todo:
        q, d = todo.pop(0)
        if _has_samples(q):
            return q
        if d < levels:
            todo.extend((x, d + 1) for x in _subfolders(q))
    return None


def find_model_folders(path: Path, max_depth: int = MAX_DEPTH,
                       too_deep: list[Path] | None = None) -> list[ModelFolder]:
    """Every folder under ``path`` (itself included, ``max_depth`` levels) holding samples files. ``too_deep``:
    a list to which the first model folder found below the limit in each folder at the limit is appended (they
    are not read)."""
    path = Path(path)
    found: list[ModelFolder] = []
    seen: set[Path] = set()  # resolved folders walked: a symlink back up (`loop -> ..`) or a second link to one is not

    def walk(p: Path, depth: int) -> None:
        real = p.resolve()
        if real in seen:  # walked again (before: the folder read twice, then a warning that a path of the loop was too
            return  # deep to read)
        seen.add(real)
        try:
            mf = scan_folder(p)
        except PermissionError as exc:
            if depth == 0:
                raise
            found.append(ModelFolder(p, denied=exc))  # whether it holds runs cannot be told: reading it says why
            return
        if mf:
            found.append(mf)
        for sub in _subfolders(p):
            if depth < max_depth:
                walk(sub, depth + 1)
            elif too_deep is not None and sub.resolve() not in seen and (
                    deep := _first_samples_folder(sub, _LOOK_BEYOND)) is not None:
                too_deep.append(deep)

    if path.is_dir():
        walk(path, 0)
    return found


def _is_results_file(p: Path) -> bool:
    try:
        data = _read_json(p)
    except (*READ_ERRORS, ValueError):
        return False
    return isinstance(data, dict) and "results" in data and "configs" in data


def results_without_samples(path: Path, max_depth: int = MAX_DEPTH) -> list[Path]:
    """lm-eval results files (``results_<ts>.json``, or ``<name>_<ts>.json`` holding ``results`` and ``configs``) in
    folders under ``path`` (``max_depth`` levels) that hold no samples file: runs made without ``--log_samples``.
    A results file without a timestamp (harness 0.4.0-0.4.2's ``results.json``, or a results dict a script dumped)
    counts too in a folder holding no ``*.jsonl`` at all (with them, it is 0.4.0-0.4.2 ``--log_samples`` output:
    :func:`_old_harness_results`); before, such a folder was "cannot tell the format of this folder"."""
    out: list[Path] = []

    def walk(p: Path, depth: int) -> None:
        if not _has_samples(p):
            try:
                listed = sorted(x for x in p.iterdir() if x.is_file())
            except OSError:
                listed = []
            no_jsonl = not any(x.name.endswith(".jsonl") for x in listed)
            files = [x for x in listed if results_ts(x.name) or (no_jsonl and x.name.lower().endswith(".json"))]
            out.extend(f for f in files if _is_results_file(f))
        if depth < max_depth:
            for sub in _subfolders(p):
                walk(sub, depth + 1)

    if Path(path).is_dir():
        walk(Path(path), 0)
    return out


def looks_like_lm_eval(path: Path) -> bool:
    path = Path(path)
    if path.is_file():
        return bool(SAMPLES_RE.match(path.name))
    return bool(find_model_folders(path))


def recognise(path: Path) -> Match:
    """STRONG for a samples file, or a folder with samples files in it or up to :data:`MAX_DEPTH` levels below."""
    return Match.STRONG if looks_like_lm_eval(path) else Match.NONE


def why_not(path: Path) -> str | None:
    """Why a path is no lm-eval source although it looks like one: a folder of results files of runs made without
    ``--log_samples``, or a results file given alone (None otherwise)."""
    path = Path(path)
    if path.is_file():  # a results file given alone: a JSON file, which the table reader took for an outcomes table
        if results_ts(path.name) is not None and _is_results_file(path):
            return ("an lm-eval results file: it holds the run's aggregate scores, not per-sample results; "
                    f"{READING_FOR.get()} its folder, {path.parent}, whose samples_<task>_<timestamp>.jsonl files "
                    "hold them")
        if path.name.lower().endswith((".json", ".json.gz")) and _is_results_file(path):
            # no timestamp in its name: harness 0.4.0-0.4.2's results.json (or the <name>.json --output_path named),
            # or a results dict dumped by a script (simple_evaluate's); before, read as a table's outcomes file
            # ("no prompts file ... beside the outcomes")
            return (f"an lm-eval results file: it holds a run's aggregate scores, not per-sample results, which "
                    f"lm-eval 0.4.3 and later writes with --log_samples to samples_<task>_<timestamp>.jsonl files "
                    f"beside a results_<timestamp>.json; {READING_FOR.get()} the folder holding those")
        return None
    runs = results_without_samples(path) if path.is_dir() else []
    if not runs:
        old = _old_harness_results(path) if path.is_dir() else None
        if old is not None:
            return (f"lm-evaluation-harness 0.4.0-0.4.2 output ({old.relative_to(path)} beside "
                    "<model_args>_<task>.jsonl samples files) is not read: its samples files have no timestamped name "
                    "that ties them to their run; run the evaluation again with harness 0.4.3 or later "
                    "(--log_samples), or convert the samples to a plain table (outcomes + prompts: README)")
        return None
    first = runs[0].relative_to(path)
    more = f" (and {counted(len(runs) - 1, 'more results file')})" if len(runs) > 1 else ""
    return (f"an lm-eval run without samples files: {first}{more} but no samples_<task>_<timestamp>.jsonl; per-sample "
            "results need lm-eval's --log_samples: run the evaluation again with it")


def _old_harness_results(path: Path, max_depth: int = MAX_DEPTH) -> Path | None:
    """The results file of the first folder under ``path`` (``max_depth`` levels) laid out as lm-evaluation-harness
    0.4.0-0.4.2 wrote ``--output_path`` with ``--log_samples``: ``results.json`` (``--output_path DIR``), or the
    ``<name>.json`` that ``--output_path DIR/<name>.json`` named (a JSON object with ``results`` and ``configs``, no
    timestamp in its name), beside ``*.jsonl`` samples files without a timestamp. Before, only ``results.json`` was
    recognised: the second layout was "cannot tell the format of this folder"."""
    def walk(p: Path, depth: int) -> Path | None:
        try:
            names = sorted(x.name for x in p.iterdir())
        except OSError:
            return None
        if any(n.endswith(".jsonl") and not SAMPLES_RE.match(n) for n in names):
            if "results.json" in names:
                return p / "results.json"
            for n in names:
                if n.endswith(".json") and results_ts(n) is None and _is_results_file(p / n):
                    return p / n
        for sub in _subfolders(p) if depth < max_depth else []:
            if (got := walk(sub, depth + 1)) is not None:
                return got
        return None

    return walk(Path(path), 0)


def plan_hub_files(files: list[str]) -> tuple[Match, list[str]]:
    """The files of a Hub repo's list that :func:`read_lm_eval` reads: per folder and task the latest run that
    has a results file candidate (``results_<ts>.json`` or ``<name>_<ts>.json``: all of them are fetched, the
    reader tells them apart by content), plus any newer samples file lacking one, so that the reader reports it."""
    samples: dict[tuple[str, str], dict[str, str]] = {}  # (folder, task) -> ts -> file
    results: dict[tuple[str, str], list[str]] = {}  # (folder, ts) -> candidate results files
    for f in files:
        folder, _, base = f.rpartition("/")
        if m := SAMPLES_RE.match(base):
            samples.setdefault((folder, m["task"]), {})[m["ts"]] = f
        elif ts := results_ts(base):
            results.setdefault((folder, ts), []).append(f)
    if not samples:
        return Match.NONE, []
    out: set[str] = set()
    for (folder, _task), runs in samples.items():
        have = [ts for ts in runs if (folder, ts) in results]
        best = max(have) if have else None
        for ts, f in runs.items():
            if ts == best or ((folder, ts) not in results and (best is None or ts > best)):
                out.add(f)
        if best:
            out.update(results[(folder, best)])
    return Match.STRONG, sorted(out)


# --------------------------------------------------------------------------------------- results


def _model_fields(results: dict) -> tuple[dict, dict]:
    """(``config``, ``model_args`` as a dict) of a results file (``model_args`` a dict, or ``k=v,...`` text)."""
    cfg = results.get("config") if isinstance(results.get("config"), dict) else {}
    args = cfg.get("model_args")
    margs: dict = {}
    if isinstance(args, dict):
        margs = args
    elif isinstance(args, str):
        margs = dict(kv.split("=", 1) for kv in args.split(",") if "=" in kv)
    return cfg, margs


def model_field_problem(results: dict) -> str | None:
    """What is wrong with a field of a results file that names the model or its revision when it holds a list, an
    object or a boolean (``"model_name": ["org/m"]``), or None. lm-eval writes each as a string; no element of a list
    is taken, not even the one of a one-element list: neither harness writes a list there, so a file that does was
    written or edited by another tool, whose list may be of several models (the tables reader refuses a list as a
    name or an id alike), and ``--model NAME`` reads the run in one step. Before, the value's Python repr was stored
    as the model's name (``['org/m']``, ``[]``) without a word."""
    cfg, margs = _model_fields(results)
    fields = (("model_name", results.get("model_name")), ("config.model_args pretrained=", margs.get("pretrained")),
              ("config.model_args model=", margs.get("model")), ("config.model_sha", cfg.get("model_sha")),
              ("model_sha", results.get("model_sha")), ("config.model_args revision=", margs.get("revision")),
              ("config.model_revision", cfg.get("model_revision")))
    for name, value in fields:
        if isinstance(value, (list, dict, bool)):
            return (f"`{name}` is {json_kind(value)} ({example_value(value, written=json.dumps)}), not a string naming the "
                    "model" + (" revision" if "sha" in name or "revision" in name else ""))
    return None


def _model_from_results(results: dict, folder: Path) -> tuple[str | None, str | None]:
    """(model name, revision) a results file names: ``model_name``, else ``pretrained=`` (or ``model=``) of
    ``model_args``, blanks stripped and skipped, else an ``<org>__<model>`` folder name; None when there is none, or
    when a field naming it holds no string (:func:`model_field_problem`)."""
    if model_field_problem(results) is not None:
        return None, None
    cfg, margs = _model_fields(results)
    given = (results.get("model_name"), margs.get("pretrained"), margs.get("model"))
    name = next((str(v).strip() for v in given if v is not None and str(v).strip()), None)
    if name is None and "__" in folder.name:
        name = folder.name.replace("__", "/")
    rev = cfg.get("model_sha") or results.get("model_sha") or margs.get("revision") or cfg.get("model_revision")
    if rev in ("", "main", None):
        rev = None
    return name, (str(rev) if rev else None)


def _task_group(results: dict, task: str) -> str | None:
    for group, subs in (results.get("group_subtasks") or {}).items():
        if isinstance(subs, list) and task in subs and group != task:
            return group
    return None


def _task_config(results: dict, task: str) -> dict:
    cfg = (results.get("configs") or {}).get(task)
    return cfg if isinstance(cfg, dict) else {}


def _declared_filters(results: dict, task: str) -> list[str]:
    """The task's filters in config order (``filter_list``); ``["none"]`` when it declares none."""
    fl = _task_config(results, task).get("filter_list")
    names = [str(f.get("name", "none")) for f in fl if isinstance(f, dict)] if isinstance(fl, list) else []
    return names or ["none"]


def _default_filter(results: dict, task: str) -> str | None:
    """The filter the headline metric is read under: the task's first declared filter that extracts an
    answer (not "none", the raw output), else "none"."""
    names = _declared_filters(results, task)
    return next((n for n in names if n != "none"), names[0])


def _task_version(results: dict, task: str):
    v = (results.get("versions") or {}).get(task)
    if v is None:
        meta = _task_config(results, task).get("metadata")
        v = meta.get("version") if isinstance(meta, dict) else None
    return v


#: the keys of a results file the reader looks a task up in: JSON objects (task -> ...) in every harness version
RESULTS_TABLES = ("results", "configs", "versions", "n-shot", "group_subtasks")


def _read_results(paths: list[Path], errors: ErrorLog) -> dict | None:
    """The first candidate that is an lm-eval results file (a JSON object with ``results`` and ``configs``);
    when none is, every candidate is reported and None returned (the runs of that timestamp are not read)."""
    problems = []
    for p in paths:
        if (why := encoding_problem(p)) is not None:  # a Git LFS pointer; UTF-16 (a re-save in PowerShell 5): before,
            # "unreadable results file: 'utf-8' codec can't decode byte 0xff in position 0", saying nothing of what to do
            problems.append((str(p), None, f"unreadable results file: {why}; the samples of its timestamp are not read"))
            continue
        try:
            data = _read_json(p)
        except json.JSONDecodeError as exc:
            why = ("it is empty (a run that stopped before writing it, a copy cut short)" if not exc.doc.strip()
                   else json_problem(exc) if exc.msg == "Extra data"
                   else f"{exc.msg} at column {exc.colno}{trailing_comma(exc.doc, exc)}")
            problems.append((str(p), exc.lineno if exc.doc.strip() else None, f"unreadable results file: {why}; the "
                             "samples of its timestamp are not read: copy it again, or run the evaluation again"))
            continue
        except READ_ERRORS as exc:
            problems.append((str(p), None, f"unreadable results file: {exc}"))
            continue
        if not isinstance(data, dict):  # before: "no `results` and `configs` keys" said of a list
            kind = {list: "an array", str: "a string", type(None): "null"}.get(type(data), type(data).__name__)
            problems.append((str(p), None, f"not an lm-eval results file: it holds {kind}, not the JSON object with "
                             "`results` and `configs` keys every harness since 0.4.0 writes; the samples of its "
                             "timestamp are not read: use the results file the harness wrote"))
            continue
        if isinstance(data, dict) and "results" in data and "configs" in data:
            # the tables the reader looks tasks up in must be objects (or absent/null) as every harness writes them
            bad = [f"`{k}` is {type(data[k]).__name__}" for k in RESULTS_TABLES
                   if data.get(k) is not None and not isinstance(data[k], dict)]
            if not bad:
                return data
            problems.append((str(p), None, f"not an lm-eval results file: {', '.join(bad)}, not a JSON object (as "
                             "every harness writes it); the samples of its timestamp are not read: re-export the "
                             "results file"))
            continue
        problems.append((str(p), None, "not an lm-eval results file: no `results` and `configs` keys (every "
                         "harness since 0.4.0 writes both); the samples of its timestamp are not read"))
    for file, line, message in problems:
        errors.add(file, line, message)
    return None


# --------------------------------------------------------------------------------------- samples


def iter_sample_rows(path: Path, errors: ErrorLog) -> Iterator[tuple[int, dict]]:
    """(line, row) of a samples file: JSON lines, or one JSON array (line = item number); a ``.gz`` is read through
    gzip. A file that breaks off (a truncated ``.gz``) is reported after the line last read, whose rows are kept. A
    line with bytes that are not UTF-8 costs that line (before, decoding failed at the 8 KB block holding it: the
    rest of the file was lost, reported at no line)."""
    fname = str(path)
    if (why := encoding_problem(path)) is not None:  # UTF-16: before, "cannot read file: 'utf-8' codec can't decode"
        errors.add(fname, None, why)
        return
    line = None
    try:
        with open_text(path, errors="surrogateescape") as f:
            head = f.read(1)
            while head and head.isspace():
                head = f.read(1)
            f.seek(0)
            if not head:
                errors.add(fname, None, "empty file: no samples")
                return
            for line, row in json_objects(f, fname, errors, array=head == "["):
                yield line, row
    except READ_ERRORS as exc:
        add_read_failure(errors, fname, line, exc, kept="samples")


def _chat_prompt(arg0) -> str | None:
    """The prompt of an ``arg_0`` as lm-eval wrote it: a text, or (an API chat model, ``local-chat-completions`` or
    ``openai-chat-completions`` with ``--apply_chat_template``) its ``JsonChatStr``: a one-item list holding the JSON
    of the messages (``["[{\"role\": \"user\", \"content\": ...}]"]``), or that JSON alone; then the content of
    the last user message, the rendered prompt as the model was sent it. Before, such an ``arg_0`` (a list) gave no
    text, so a doc without a question field ("no prompt text") cost every row."""
    if isinstance(arg0, (list, tuple)) and len(arg0) == 1:
        arg0 = arg0[0]
    if not isinstance(arg0, str):
        return None
    if arg0.lstrip().startswith("[{"):
        try:
            messages = json.loads(arg0)
        except ValueError:
            return arg0
        if isinstance(messages, list) and messages and all(isinstance(m, dict) and "role" in m for m in messages):
            users = [m.get("content") for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
            return users[-1] if users else None
    return arg0


def _arg0(row: dict) -> str | None:
    args = row.get("arguments")
    if isinstance(args, dict):
        first = args.get("gen_args_0") or next(iter(args.values()), None)
        if isinstance(first, dict):
            return _chat_prompt(first.get("arg_0"))
        if isinstance(first, (list, tuple)) and first:
            return first[0]
    if isinstance(args, list) and args:
        first = args[0]
        if isinstance(first, (list, tuple)) and first and isinstance(first[0], str):
            return first[0]
        if isinstance(first, str):
            return first
    return None


@dataclass
class TaskRun:
    """What a samples file is read with: its task's rule and what its results file says about the task."""

    task: str
    rule: TaskRule
    model: str
    revision: str | None
    filters: list[str] = field(default_factory=lambda: ["none"])  # declared, in config order
    version: object = None
    aggregates: dict = field(default_factory=dict)  # results[task]: "<metric>,<filter>" -> value
    delimiter: str = "\n\n"
    choices: list[str] | None = None


def _by_filter(path: Path, rows: list[tuple[int, dict]], run: TaskRun,
               errors: ErrorLog) -> tuple[dict[str, list], bool] | None:
    """Rows grouped by filter, and whether the filters were recovered from the record order (harness <= 0.4.6,
    no ``filter`` key); None when the file cannot be split by filter (reported)."""
    if any("filter" in r for _, r in rows):
        out: dict[str, list] = {}
        for line, row in rows:
            name = row.get("filter", "none")
            if not isinstance(name, str) or not name.strip():  # a list, null, blank: before, a filter of its own
                # (`['none']`, `None`) that no read chose, the line dropped without a word
                errors.add(str(path), line, f"filter {example_value(name, written=json.dumps)} is not a filter name (a "
                           "string); the line is skipped: fix the source", "bad filter names")
                continue
            out.setdefault(name, []).append((line, row))
        return (out, False) if out else None  # (every line's filter no name: each said at its line)
    counts = Counter(str(r["doc_id"]) for _, r in rows if "doc_id" in r)
    per_doc = set(counts.values())
    filters = run.filters
    if per_doc <= {1} and len(filters) == 1:
        return {filters[0]: rows}, False
    if per_doc == {len(filters)}:
        out = {f: [] for f in filters}
        seen: Counter = Counter()
        for line, row in rows:
            if "doc_id" not in row:
                continue
            k = seen[str(row["doc_id"])]
            seen[str(row["doc_id"])] += 1
            out[filters[k]].append((line, row))
        return out, True
    if per_doc <= {1}:
        why = (f"one record per doc, but the task's config declares {len(filters)} filters ({', '.join(filters)}) "
               "and the samples have no `filter` key (harness <= 0.4.6 writes one record per filter and doc)")
    else:
        lo, hi = min(per_doc), max(per_doc)
        why = (f"{lo}" + (f" to {hi}" if hi != lo else "") + " records per doc and no `filter` key: harness <= 0.4.6 "
               f"writes one record per filter of the task's config ({', '.join(filters)}) and doc, in that order, "
               "so which record belongs to which filter cannot be told")
    errors.add(str(path), None, f"{why}; the file is skipped rather than read as a biased subset "
               "(harness >= 0.4.7 writes the `filter` key)")
    return None


def choose_filter(by_filter: dict, asked: str | None, default: str | None) -> tuple[str | None, str | None]:
    """(the filter to read, or None, and why not) among the filters a samples file holds (``by_filter``, in file
    order). ``asked`` (``--filter``) must be there, unless the file holds only the raw output ``none`` (a task with no
    answer-extracting filter, such as a multiple-choice task, is read with ``none``); otherwise the file is refused.
    Without ``asked``: ``default`` (the rule's, or the task's first answer-extracting filter in the results file's
    config) when present, else the file's first answer-extracting filter, else ``none``."""
    extracting = [f for f in by_filter if f != "none"]
    if asked:
        if asked in by_filter:
            return asked, None
        if not extracting:
            return next(iter(by_filter)), None
        return None, (f"filter {asked!r} not in this file (it has: {', '.join(by_filter)}); the file is not read: "
                      f"pass one of these with {option_hint('filter')} (or no {arg('filter')} for the task's answer-extracting "
                      "filter)")
    if default and default in by_filter:
        return default, None
    return (extracting[0] if extracting else next(iter(by_filter))), None


def read_task_file(path: Path, run: TaskRun, *, errors: ErrorLog, filter: str | None = None,
                   metric: str | None = None, fit: KeyFit | None = None
                   ) -> tuple[list[Outcome], int, str | None, str | None]:
    """Outcomes of one samples file. Returns (outcomes, duplicates skipped, filter used, metric used). ``fit``: the
    keys of the folder's tasks (:class:`~indexer.sources.scoring.KeyFit`), which its rows are added to."""
    fname = str(path)
    rule = run.rule
    rows = list(iter_sample_rows(path, errors))
    if not rows:
        return [], 0, None, None
    split = _by_filter(path, rows, run, errors)
    if split is None:
        return [], 0, None, None
    by_filter, recovered = split
    chosen, why = choose_filter(by_filter, filter, rule.filter)
    if chosen is None:
        errors.add(fname, None, why)
        return [], 0, None, None
    mark = errors.mark()
    outcomes: list[Outcome] = []
    seen: dict[str, tuple[int, float, int]] = {}  # doc_id -> (line, score, index in outcomes)
    dropped: set[str] = set()
    skipped = rejected = reached = 0
    used_metric = None
    # the kind of problem of the metric or its value -> (line, message, problem): a task's problem is said once
    failed: dict[str, list[tuple[int, str, str]]] = {}
    keys = task_keys([(line, row, row.get("metrics") if isinstance(row.get("metrics"), list) else None)
                      for line, row in by_filter[chosen]], rule, metric, unit="line")  # (lines carrying different keys)
    for line, row in by_filter[chosen]:
        if row.get("doc_id") is None:
            errors.add(fname, line, "missing field doc_id", "missing doc_id")
            rejected += 1
            continue
        did = row["doc_id"]
        if isinstance(did, bool) or not isinstance(did, (int, str)) or (isinstance(did, str) and not did.strip()):
            # before: a list, object or float became the prompt id as its repr ("task:[1]", "task:1.5")
            errors.add(fname, line, f"doc_id {example_value(did, written=json.dumps)} is not a whole number or a name "
                       "(the harness writes the doc's index): the line is skipped; fix the source", "bad doc_id")
            rejected += 1
            continue
        if isinstance(did, str) and (bad := name_problem(did, "an id", NAME_LIMIT - len(run.task) - 1)) is not None:
            # a NUL, a control character, a lone surrogate, too long for its prompt id `<task>:<doc_id>`: as a plain
            # table's prompt id (before, stored: cut at the NUL on SQLite, refused by PostgreSQL; cut at 512 characters)
            errors.add(fname, line, f"doc_id {example_value(did)} is not a valid id: it {bad}; the line is skipped: fix "
                       "the source", "invalid doc_ids")
            rejected += 1
            continue
        doc = row.get("doc")
        text = extract_text(doc, rule, _arg0(row), run.delimiter, run.choices)
        if not text:
            errors.add(fname, line, f"no prompt text: `doc` has none of {', '.join(map(str, rule.text_fields))} "
                       "and there is no arguments.arg_0 prompt", "samples without prompt text")
            rejected += 1
            continue
        listed = row.get("metrics") if isinstance(row.get("metrics"), list) else None
        reached += 1
        if (got := scored_row(row, rule, metric, line, failed, run.version, listed, fit, keys)) is None:
            rejected += 1
            continue
        m, score = got
        used_metric = used_metric or m
        doc_id = str(row["doc_id"])
        if doc_id in seen:
            first_line, first_score, idx = seen[doc_id]
            if first_score == score:
                skipped += 1
            elif doc_id not in dropped:
                errors.add(fname, line, f"doc_id {doc_id} repeated with a different {m} ({number_shown(first_score)} "
                           f"at line {first_line}, {number_shown(score)} here); both dropped: fix the source", "conflicting repeats")
                dropped.add(doc_id)
            continue
        seen[doc_id] = (line, score, len(outcomes))
        outcomes.append(Outcome(model=run.model, benchmark=rule.benchmark_for(doc), text=text, score=score,
                                revision=run.revision, prompt_id=f"{run.task}:{doc_id}"))
    report_metric_failures(errors, fname, run.task, failed, reached)
    if dropped:
        outcomes = [o for o in outcomes if o.prompt_id.split(":", 1)[1] not in dropped]
    if recovered and outcomes and not rejected and not dropped:
        # the recovered filter assignment must reproduce the harness's own aggregate of that filter
        agg = run.aggregates.get(f"{used_metric},{chosen}")
        mean = sum(o.score for o in outcomes) / len(outcomes)
        if isinstance(agg, (int, float)) and abs(mean - agg) > 1e-6:
            errors.rollback(mark)
            errors.add(fname, None, f"the records read as filter {chosen!r} (by their order: no `filter` key, harness "
                       f"<= 0.4.6) average {used_metric} {mean:.6g}, but the results file says {agg:.6g}; the file "
                       "is skipped rather than read as a biased subset")
            return [], 0, None, None
    return outcomes, skipped, chosen, used_metric


# ----------------------------------------------------------------------------------------- folders


def _results_of(mf: ModelFolder, cache: dict, errors: ErrorLog) -> "callable":
    def get(ts: str) -> dict | None:
        if ts not in cache:
            cache[ts] = _read_results(mf.results.get(ts, []), errors)
        return cache[ts]
    return get


def chosen_runs(mf: ModelFolder, model: str | None = None, errors: ErrorLog | None = None,
                cache: dict | None = None) -> dict[tuple[str, str], str]:
    """(model, task) -> the timestamp read: per model (the one its results file names, or ``model``) and task
    the latest run that has a readable results file (an unreadable one is reported by :func:`_read_results`;
    whose run it was cannot be told, so it hides no other run)."""
    errors = errors if errors is not None else ErrorLog()
    get = _results_of(mf, cache if cache is not None else {}, errors)
    out: dict[tuple[str, str], str] = {}
    for task, runs in mf.samples.items():
        for ts in sorted(runs, reverse=True):
            res = get(ts) if ts in mf.results else None
            if res is not None:
                out.setdefault((model or _model_from_results(res, mf.path)[0] or "", task), ts)
    return out


def model_folder_info(mf: ModelFolder, *, kind: str = "lm_eval", location: str | None = None,
                      revision: str | None = None, model: str | None = None, **_ignored) -> SourceInfo:
    """The identity and revision (fingerprint of the files read) of a folder of runs, from file contents
    without reading the samples."""
    if mf.denied is not None:
        raise mf.denied
    if revision is None:
        runs = chosen_runs(mf, model)
        files = [mf.samples[t][ts] for (_m, t), ts in runs.items()]
        files += [p for ts in set(runs.values()) for p in mf.results[ts]]
        revision = _fingerprint(files)
    where = mf.only if mf.only is not None else mf.path
    return SourceInfo(kind=kind, location=location or str(where.resolve()), revision=revision)


def read_model_folder(
    mf: ModelFolder, *, rules: Rules | None = None, model: str | None = None, filter: str | None = None,
    metric: str | list[str] | MetricOption | None = None, kind: str = "lm_eval", location: str | None = None,
    revision: str | None = None,
) -> SourceBatch:
    """One folder of runs -> one SourceBatch (latest run per model and task). ``metric``: KEY, TASK=KEY or a list of
    them (:func:`~indexer.sources.scoring.parse_metric`)."""
    if mf.denied is not None:
        raise mf.denied
    metrics = metric if isinstance(metric, MetricOption) else parse_metric(metric) or MetricOption()
    rules = rules or load_rules()
    errors = ErrorLog()
    outcomes: list[Outcome] = []
    benchmarks: dict[str, BenchmarkInfo] = {}
    skipped = 0
    warnings: list[str] = []
    unnamed: set[str] = set()
    cache: dict[str, dict | None] = {}
    fit = KeyFit()
    for p in mf.broken if mf.only is None else []:
        errors.add(str(p), None, "a symbolic link to nothing (its target was moved or deleted, or a loop of links): "
                   f"not read, so its {'task' if SAMPLES_RE.match(p.name) else 'run'} is missing; restore the target "
                   "or remove the link")
    for p in mf.special if mf.only is None else []:
        errors.add(str(p), None, "not a regular file (a named pipe, socket or device): not read, so its "
                   f"{'task' if SAMPLES_RE.match(p.name) else 'run'} is missing; put the file itself there (write "
                   "what the pipe carries to a file first)")
    for p in mf.compressed if mf.only is None else []:
        errors.add(str(p), None, other_compression(p)[0])
    for task in sorted(mf.samples):
        for ts, p in mf.samples[task].items():
            if ts not in mf.results:
                errors.add(str(p), None, f"no results_{ts}.json beside this samples file (nor a <name>_{ts}.json "
                           "holding `results` and `configs`, which --output_path <name>.json writes in harness "
                           ">= 0.4.9): the run is incomplete (cannot tell the model and task config); copy the "
                           "results file or remove the samples file")
    runs = chosen_runs(mf, model, errors, cache)
    for (who, task), ts in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        results = cache[ts]
        path = mf.samples[task][ts]
        name, rev = _model_from_results(results, mf.path)
        name = model or name
        if not name:
            rfile = str(mf.results[ts][0])
            if rfile not in unnamed:
                unnamed.add(rfile)
                if (bad := model_field_problem(results)) is not None:  # not the folder's name in its place
                    errors.add(rfile, None, f"{bad}; its samples are not read: write the name as a string, or pass "
                               f"{option_hint('model', 'NAME', quote=False)}")
                else:
                    errors.add(rfile, None, "the results file names no model (`model_name` and `model_args`' "
                               "pretrained= are empty or missing, and the folder is not named <org>__<model>); its "
                               f"samples are not read: pass {option_hint('model', 'NAME', quote=False)}")
            continue
        rule = rules.for_task(task, _task_group(results, task))
        cfg = _task_config(results, task)
        if rule.filter is None and cfg and (df := _default_filter(results, task)):
            rule = replace(rule, filter=df)
        res_task = (results.get("results") or {}).get(task)
        run = TaskRun(
            task=task, rule=rule, model=name, revision=rev, filters=_declared_filters(results, task),
            version=_task_version(results, task), aggregates=res_task if isinstance(res_task, dict) else {},
            delimiter=cfg.get("fewshot_delimiter") if isinstance(cfg.get("fewshot_delimiter"), str) else "\n\n",
            # options the task config lists (doc_to_choice: ["no", "yes"]) serve docs that have none of their own
            choices=cfg.get("doc_to_choice") if isinstance(cfg.get("doc_to_choice"), list) else None,
        )
        metric = metrics.for_task(task)  # --metric TASK=KEY, else --metric KEY, else (None) the rule's
        got, dup, used_filter, used_metric = read_task_file(path, run, errors=errors, filter=filter, metric=metric,
                                                            fit=fit)
        if not cfg and got:
            read = f"read with filter {used_filter!r}" + (" (its first answer-extracting filter)"
                                                           if used_filter != "none" and not filter else "")
            warnings.append(f"{path}: task {task!r} is missing from the results file of its run ({ts}: no config "
                            f"for it, so its declared filters, few-shot delimiter and options are unknown); {read}")
        skipped += dup
        outcomes.extend(got)
        nshot = (results.get("n-shot") or {}).get(task)
        config = {"filter": used_filter} if used_filter else {}
        if run.version is not None:
            config["version"] = run.version
        if used_metric and (metric or rule.metric) and used_metric != (metric or rule.metric):
            config["metric_key"] = used_metric
        for bench in dict.fromkeys(o.benchmark for o in got):
            benchmarks[bench] = BenchmarkInfo(
                name=bench, group=rule.group, source_task=task, metric=metric or rule.metric or used_metric,
                num_fewshot=nshot if isinstance(nshot, int) else None, config=dict(config),
            )
    fit.advise(errors)
    info = model_folder_info(mf, kind=kind, location=location, revision=revision, model=model)
    return SourceBatch(source=info, benchmarks=benchmarks, outcomes=outcomes, errors=errors.finish(), skipped=skipped,
                       warnings=warnings)


def _fingerprint(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in sorted(set(paths)):
        h.update(p.name.encode() + b"\0")
        with open(p, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    return "sha256:" + h.hexdigest()


def lm_eval_folders(path: str | Path, notes: list[str] | None = None) -> list[ModelFolder]:
    """The folders of runs a path names (a samples file: its folder, restricted to that file, which is then the
    source's location). ``notes``: a list to which a warning is appended for each model folder found below
    :data:`MAX_DEPTH` levels (not read)."""
    path = Path(path)
    if path.is_file():
        m = SAMPLES_RE.match(path.name)
        if not m:
            raise InputError("not an lm-eval samples file (samples_<task>_<timestamp>.jsonl)", file=str(path))
        mf = scan_folder(path.parent)
        mf.samples = {m["task"]: {m["ts"]: path}}
        mf.only = path
        return [mf]
    too_deep: list[Path] = []
    folders = find_model_folders(path, too_deep=too_deep)
    deep = [f"{d}: lm-eval samples files more than {MAX_DEPTH} levels below {path} are not read (model folders are "
            f"looked for at most {MAX_DEPTH} levels deep); {READING_FOR.get()} that folder, or one nearer it, by its "
            "path"
            for d in too_deep]
    if not folders and not too_deep and (why := why_not(path)):
        raise InputError(why, file=str(path))
    if not folders:
        hint = f"; only more than {MAX_DEPTH} levels below it, not read: {', '.join(map(str, too_deep))} " \
               f"({READING_FOR.get()} those folders by their path)" if too_deep else ""
        raise InputError(f"no lm-eval samples files (samples_<task>_<timestamp>.jsonl) in this folder{hint}",
                         file=str(path))
    if notes is not None:
        notes.extend(deep)
    return folders


def check_metric_tasks(folders: list[ModelFolder], path: str | Path, metric) -> MetricOption | None:
    """The ``metric`` option read, a ConfigError when a TASK it names (``--metric TASK=KEY``) is no task of the
    folders of runs under ``path`` (:meth:`~indexer.sources.scoring.MetricOption.check_tasks`)."""
    opt = metric if isinstance(metric, MetricOption) else parse_metric(metric)
    if opt is not None and opt.per_task:
        opt.check_tasks([t for mf in folders if mf.denied is None for t in mf.samples], str(path))
    return opt


def lm_eval_source_infos(path: str | Path, **options) -> list[SourceInfo]:
    folders = lm_eval_folders(path)
    check_metric_tasks(folders, path, options.get("metric"))
    return [model_folder_info(mf, **options) for mf in folders]


def read_lm_eval(path: str | Path, **options) -> Iterator[SourceBatch]:
    """Every folder of runs under ``path`` (or one samples file, a source of its own) -> SourceBatch each.

    ``options``: ``model`` (override the name), ``filter``, ``metric`` (override the rules: KEY for every task,
    TASK=KEY for one, or a list of them; a TASK naming no task under ``path`` is a ConfigError),
    ``rules`` (a :class:`~indexer.sources.rules.Rules`), ``kind``, ``location``, ``revision``.
    """
    notes: list[str] = []
    folders = lm_eval_folders(path, notes)
    if (metric := check_metric_tasks(folders, path, options.get("metric"))) is not None:
        options = {**options, "metric": metric}
    # a folder that fails unexpectedly costs only itself: the folders after it are still read (each_isolated)
    seen: dict[tuple[str, str], str] = {}  # (model, benchmark) -> the first folder read holding its results
    for i, batch in enumerate(each_isolated(folders, lambda mf: read_model_folder(mf, **options))):
        if i == 0:
            batch.warnings[:0] = notes  # once, with the first source
        here = batch.source.location
        for name, bench in dict.fromkeys((o.model, o.benchmark) for o in batch.outcomes):
            if (first := seen.setdefault((name, bench), here)) != here:
                # a copy of a model folder beside it (Finder's `<folder> copy`): before, stored as another source of
                # the model without a word, its outcomes counted again (folders of other tasks of a model say nothing)
                batch.warnings.append(f"{here}: holds results of {name!r} on {bench}, as {first} does (a copy of that "
                                      "folder?): both are stored, as two sources of the model; remove the one not "
                                      "meant to be read")
                break
        yield batch


READER = Reader(
    name="lm_eval",
    layout="samples_<task>_<ts>.jsonl + results_<ts>.json or <name>_<ts>.json (lm-eval)",
    recognise=recognise,
    why_not=why_not,
    read=read_lm_eval,
    plan_hub_files=plan_hub_files,
    source_infos=lm_eval_source_infos,
    takes_identity=True,
    options=("model", "filter", "metric", "rules", "kind", "location", "revision"),
)
