"""lighteval "details" (and the Open LLM Leaderboard v1 details it wrote) -> one SourceBatch per model.

Files ``details_<task>_<ts>.parquet`` where ``<task>`` is ``<suite>|<task>|<shots>`` (lighteval <= 0.12.0,
the v1 leaderboard's ``harness|arc:challenge|25``) or ``<task>|<shots>`` (lighteval >= 0.12.1, no suite).
Where they sit (docs/FORMATS.md has the versions):

* a details repo (``details_<org>__<model>``, pushed to the Hub): ``results_<ts>.json`` at its root and the
  details at the root or in a ``<ts>/`` folder;
* lighteval's output folder: ``<out>/details/<model>/<ts>/details_*.parquet`` beside
  ``<out>/results/<model>/results_<ts>.json`` (``<model>`` is ``org/name``, two folders).

Columns: lighteval <= 0.10 writes ``example`` (the rendered query of this sample), ``full_prompt`` (with the
few-shot examples), ``instruction``, ``metrics`` (a per-sample dict, e.g. ``{"acc": 1, "acc_norm": 0}``) and
more; lighteval >= 0.11 writes ``doc`` (``query``, ``choices``, ``gold_index``, ``instruction``, ...),
``model_response`` and ``metric``. lighteval 0.4-0.7 stored every cell as ``str(value)`` (a Python repr;
up to 0.3 when the details dataset failed to build):
such cells are read with :func:`ast.literal_eval` (:func:`.scoring.py_literal`), never ``eval``.

The text is the rendered query without the task's instruction and fixed preamble (rules.toml ``preamble``).
Per task the latest run is read; when a model has runs of one task with several shot counts, the
benchmark's standard count (rules.toml ``shots``) is read, else the most shots, and the rest are skipped.
The metric and benchmark name come from ``rules.toml`` (``harness|hendrycksTest-anatomy|5`` ->
``mmlu/anatomy``). The prompt id is ``<task>:<row>``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

from ..errors import READING_FOR, InputError, option_hint
from ..records import BenchmarkInfo, Outcome, SourceBatch, SourceInfo
from .common import (UTF8, ErrorLog, column_shown, each_isolated, encoding_problem, example_value, json_document,
                     json_kind, json_problem, lfs_pointer_problem)
from .lm_eval import RESULTS_RE, TS
from .registry import Match, Reader
from .rules import Rules, TaskRule, last_example, load_rules, strip_preamble
from .scoring import (KeyFit, MetricOption, parse_metric, py_literal, report_metric_failures, scored_row,
                      task_keys)

DETAILS_RE = re.compile(rf"^details_(?P<task>.+)_(?P<ts>{TS})\.parquet$")
TS_DIR_RE = re.compile(rf"^{TS}$")
MAX_DEPTH = 5  # <out>/details/<org>/<name>/<ts>/details_*.parquet


def _split_task(task: str) -> tuple[str, int | None]:
    """``harness|gsm8k|5`` -> (``harness|gsm8k``, 5); a name without a shot count -> (name, None)."""
    base, _, shots = task.rpartition("|")
    return (base, int(shots)) if base and shots.isdigit() else (task, None)


def _details_files(root: Path) -> dict[str, dict[str, Path]]:
    """task -> ts -> file, for details files in ``root`` and its immediate subfolders."""
    out: dict[str, dict[str, Path]] = {}
    for p in sorted(list(root.glob("details_*.parquet")) + list(root.glob("*/details_*.parquet"))):
        if m := DETAILS_RE.match(p.name):
            out.setdefault(m["task"], {})[m["ts"]] = p
    return out


def _model_root(f: Path) -> Path:
    """The folder of one model's details: the file's folder, or above it when that is a ``<ts>/`` folder."""
    return f.parent.parent if TS_DIR_RE.match(f.parent.name) else f.parent


def find_details_roots(path: Path, max_depth: int = MAX_DEPTH) -> list[Path]:
    """Every model's details folder under ``path`` (itself included)."""
    path = Path(path)
    roots: dict[Path, None] = {}

    def walk(p: Path, depth: int) -> None:
        for f in sorted(p.glob("details_*.parquet")):
            if DETAILS_RE.match(f.name):
                roots.setdefault(_model_root(f), None)
        if depth < max_depth:
            for sub in sorted(x for x in p.iterdir() if x.is_dir() and not x.name.startswith(".")):
                walk(sub, depth + 1)

    if path.is_dir():
        walk(path, 0)
    return list(roots)


def looks_like_lighteval(path: Path) -> bool:
    path = Path(path)
    if path.is_file():
        return bool(DETAILS_RE.match(path.name))
    return bool(find_details_roots(path, max_depth=MAX_DEPTH))


def recognise(path: Path) -> Match:
    """STRONG for a details file, or a folder with details files in it or below (lighteval's output folder)."""
    return Match.STRONG if looks_like_lighteval(path) else Match.NONE


def _is_lighteval_results(path: Path) -> bool:
    """Whether ``path`` is a lighteval results file: ``results_<ts>.json`` holding a JSON object with
    ``config_general``."""
    if not RESULTS_RE.match(path.name):
        return False
    try:
        data = json_document(path.read_text(encoding=UTF8))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "config_general" in data


def _results_without_details(path: Path, max_depth: int = MAX_DEPTH) -> list[Path]:
    """The lighteval results files in ``path`` and up to ``max_depth`` levels below it when there is no details file
    there (a run made without ``--save-details``, or its results folder alone): ``[]`` otherwise."""
    if find_details_roots(path, max_depth):
        return []
    found: list[Path] = []

    def walk(p: Path, depth: int) -> None:
        try:
            entries = sorted(p.iterdir())
        except OSError:
            return
        found.extend(f for f in entries if f.is_file() and _is_lighteval_results(f))
        if depth < max_depth:
            for sub in entries:
                if sub.is_dir() and not sub.name.startswith("."):
                    walk(sub, depth + 1)

    walk(path, 0)
    return found


def why_not(path: Path) -> str | None:
    """Why a path is no lighteval source although it is lighteval's: a results file given alone (``results_<ts>.json``
    holding ``config_general``), which the table reader took for an outcomes table ("no prompts file beside the
    outcomes; put one there"), or a folder holding lighteval results files but no details files (before, "cannot tell
    the format of this folder", and with ``--format lighteval`` "no lighteval details files here", neither saying
    that the per-sample results are the details, which the run did not save). None otherwise."""
    path = Path(path)
    if path.is_dir():
        runs = _results_without_details(path)
        if not runs:
            return None
        more = f" (and {len(runs) - 1} more)" if len(runs) > 1 else ""
        return (f"lighteval results without details: {runs[0].relative_to(path)}{more} but no "
                "details_<task>_<ts>.parquet; the results file holds the run's aggregate scores, per-sample results "
                "are its details, which lighteval writes with --save-details: run the evaluation again with it, or "
                f"{READING_FOR.get()} the folder (or details_<org>__<model> repo) holding them")
    if not (path.is_file() and _is_lighteval_results(path)):
        return None
    return ("a lighteval results file: it holds the run's aggregate scores, not per-sample results; "
            f"{READING_FOR.get()} the folder "
            "holding the run's details_*.parquet files (the details repo's folder, or lighteval's output folder "
            "--output-dir)")


def _choose_runs(runs_by_task: dict[str, dict[str, object]], rules: Rules) -> tuple[dict[str, tuple[str, object]], list]:
    """Per task without its shot count: (full task name, the latest run of the shot count read), and the runs
    left out for another shot count. The shot count read is the benchmark's standard one (rules ``shots``)
    when present, else the largest."""
    by_base: dict[str, dict[int | None, str]] = {}
    for task in runs_by_task:
        base, shots = _split_task(task)
        by_base.setdefault(base, {})[shots] = task
    chosen: dict[str, tuple[str, object]] = {}
    left_out = []
    for base, variants in by_base.items():
        if len(variants) == 1:
            task = next(iter(variants.values()))
        else:
            std = rules.for_task(next(iter(variants.values()))).shots
            pick = std if std in variants else max((s for s in variants if s is not None), default=None)
            task = variants[pick]
            left_out += [runs_by_task[t][max(runs_by_task[t])] for s, t in variants.items() if t != task]
        runs = runs_by_task[task]
        chosen[base] = (task, runs[max(runs)])
    return chosen, left_out


def plan_hub_files(files: list[str]) -> tuple[Match, list[str]]:
    """The files of a Hub repo's list that :func:`read_lighteval` reads: per task the latest details file of the
    shot count read, and the results files (they name the model)."""
    details: dict[str, dict[str, str]] = {}  # task -> ts -> file (one model per details repo)
    for f in files:
        if m := DETAILS_RE.match(f.rpartition("/")[2]):
            details.setdefault(m["task"], {})[m["ts"]] = f
    if not details:
        return Match.NONE, []
    chosen, _ = _choose_runs(details, load_rules())
    out = {f for _task, f in chosen.values()}
    out |= {f for f in files if RESULTS_RE.match(f.rpartition("/")[2])}
    return Match.STRONG, sorted(out)


def _results_files(root: Path) -> list[Path]:
    """Results files that may name the model of the details in ``root``, newest first: in the repo layout at
    ``root`` (or its ``<ts>/`` folders), in lighteval's output folder at ``<out>/results/<model>/``."""
    found = list(root.glob("results_*.json")) + list(root.glob("*/results_*.json"))
    parts = root.parts
    if "details" in parts:
        i = len(parts) - 1 - parts[::-1].index("details")
        mirror = Path(*parts[:i], "results", *parts[i + 1:])
        if mirror.is_dir():
            found += list(mirror.glob("results_*.json"))
    return sorted(found, key=lambda p: p.name, reverse=True)


def _model_name(root: Path, unread: list[tuple[Path, str]] | None = None) -> str | None:
    """The model of the details in ``root``: the newest results file's ``model_name``, else the folder's name.
    ``unread``: a list to which each results file passed over is appended with what it holds (empty, not JSON, not
    a JSON object): the details are then read without it, which is worth a word."""
    for p in _results_files(root):
        if (why := encoding_problem(p)) is not None:  # UTF-16, a Git LFS pointer: said as such (before, "it cannot be
            if unread is not None:                    # read as JSON ('utf-8' codec can't decode byte 0xff ...)")
                unread.append((p, why))
            continue
        try:
            data = json_document(p.read_text(encoding=UTF8))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            if unread is not None:
                empty = isinstance(exc, json.JSONDecodeError) and not exc.doc.strip()
                why = json_problem(exc) if isinstance(exc, json.JSONDecodeError) else exc
                unread.append((p, "it is empty (a copy or download cut short?)" if empty else
                               f"it cannot be read as JSON ({why})"))
            continue
        if not isinstance(data, dict):  # a JSON array or string names no model, as an unreadable file (before: an
            if unread is not None:  # AttributeError, "an unexpected error ... please report it", and the model
                unread.append((p, f"it holds {_json_kind(data)}, not the run's JSON object"))  # folder not read)
            continue
        cfg = data.get("config_general") or data.get("config") or {}
        given = cfg.get("model_name") if isinstance(cfg, dict) else None
        if isinstance(given, (list, dict, bool)):  # no name: the folder's in its place, or the Python repr, was
            # stored without a word before (a list's first element is not taken: see lm_eval.model_field_problem)
            raise InputError(f"`model_name` of the results file's {'config_general' if 'config_general' in data else 'config'} is "
                             f"{json_kind(given)} ({example_value(given, written=json.dumps)}), not a string naming the model; the "
                             f"details are not read: write the name as a string, or pass "
                             f"{option_hint('model', 'NAME', quote=False)}", file=str(p))
        if given:
            return str(given)
    return _folder_model_name(root)


def _folder_model_name(root: Path) -> str | None:
    """The model a details folder's path names: ``details_<org>__<model>``, or ``<out>/details/<org>/<model>``."""
    if root.name.startswith("details_"):
        return root.name[len("details_"):].replace("__", "/")
    parts = root.parts
    if "details" in parts:  # <out>/details/<org>/<name>
        i = len(parts) - 1 - parts[::-1].index("details")
        rest = parts[i + 1:]
        if rest:
            return "/".join(rest)
    return None


def _json_kind(data) -> str:
    return ("a JSON array" if isinstance(data, list) else "a JSON string" if isinstance(data, str)
            else "null" if data is None else "a JSON number" if isinstance(data, (int, float)) else "JSON")


# -------------------------------------------------------------------------------------------- cells


def _cell(value, want: type):
    """A cell as ``want`` (dict or list): as stored, or parsed from a JSON string or a Python repr (lighteval
    <= 0.7 wrote ``str(value)``); None when it is neither."""
    if isinstance(value, want):
        return value
    if isinstance(value, str) and value.strip():
        s = value.strip()
        try:
            got = json.loads(s)
        except json.JSONDecodeError:
            try:
                got = py_literal(s)
            except ValueError:
                return None
        return got if isinstance(got, want) else None
    return None


def _metrics_cell(value) -> dict | None:
    """A row's metrics cell as a dict (:func:`_cell`), without the null fields of a Parquet struct: such a column has a
    field for every key of the file's rows and fills it with null in the rows without that key (a task whose rows carry
    different keys: ``{"acc": 1.0}``, then ``{"acc_norm": 0.0}``), so the row is read as one without it. Before, it
    was rejected as "acc value None is not a number"."""
    if isinstance(value, dict):  # a struct cell (a cell stored as text holds what the writer gave: kept as it is)
        return {k: v for k, v in value.items() if v is not None}
    return _cell(value, dict)


def _without_instruction(query: str, instruction) -> str:
    if isinstance(instruction, str) and instruction.strip() and query.startswith(instruction):
        return query[len(instruction):]
    return query


def _row_text(row: dict, rule: TaskRule) -> str | None:
    """The rendered query of a row, without the task's instruction and fixed preamble; else the last example of
    the full prompt."""
    doc = _cell(row.get("doc"), dict) if "doc" in row else None
    if doc is not None:  # lighteval >= 0.11
        query, instruction, full = doc.get("query"), doc.get("instruction"), None
        resp = _cell(row.get("model_response"), dict)
        if resp is not None and isinstance(resp.get("input"), str):
            full = resp["input"]
    else:
        query, instruction, full = row.get("example"), row.get("instruction"), row.get("full_prompt")
    if isinstance(query, str) and query.strip():
        text = strip_preamble(_without_instruction(query, instruction).strip(), rule)
        if text:
            return text
    return last_example(strip_preamble(full, rule) if isinstance(full, str) else None)


def _read_details(f: Path, task: str, rule: TaskRule, model: str, metric: str | None,
                  errors: ErrorLog, fit: KeyFit | None = None) -> tuple[list[Outcome], str | None] | None:
    """Outcomes of one details file and the metric read; None when the file cannot be read (reported)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fname = str(f)
    if (why := lfs_pointer_problem(f)) is not None:
        errors.add(fname, None, why)
        return None
    try:
        table = pq.read_table(f)
    except (pa.ArrowException, OSError) as exc:
        errors.add(fname, None, f"not a readable Parquet file ({exc}); is it truncated? re-download it")
        return None
    cols = set(table.column_names)
    if not ({"metrics", "example"} <= cols or {"metrics", "full_prompt"} <= cols or {"doc", "metric"} <= cols):
        errors.add(fname, None, "missing columns: need metrics and example or full_prompt (lighteval <= 0.10), "
                   f"or doc and metric (lighteval >= 0.11); found {', '.join(map(column_shown, sorted(cols)))}")
        return None
    if not table.num_rows:  # before, said by the ingest as "<folder>: no outcomes to store", a warning
        errors.add(fname, None, "empty details file: no rows (the run saved no sample of this task); run the task "
                   "again, or remove the file")
        return None
    metrics_col = "metric" if {"doc", "metric"} <= cols else "metrics"
    outcomes: list[Outcome] = []
    used = None
    # the kind of problem of the metric or its value -> (row, message, problem): a task's problem is said once
    failed: dict[str, list[tuple[int, str, str]]] = {}
    read: list[tuple[int, str, dict]] = []
    for i, row in enumerate(table.to_pylist(), 1):
        text = _row_text(row, rule)
        if not text:
            errors.add(fname, i, "no prompt text (empty query/example and full prompt)", "rows without prompt text")
            continue
        metrics = _metrics_cell(row.get(metrics_col))
        if metrics is None:
            errors.add(fname, i, f"{metrics_col} {example_value(row.get(metrics_col))} is not a dict of per-sample "
                       "values, nor its JSON or Python-literal repr (lighteval <= 0.7 wrote cells as str(value))",
                       f"bad {metrics_col} cells")
            continue
        read.append((i, text, metrics))
    reached = len(read)
    keys = task_keys([(i, metrics, None) for i, _, metrics in read], rule, metric)  # (rows carrying different keys)
    for i, text, metrics in read:
        if (got := scored_row(metrics, rule, metric, i, failed, fit=fit, keys_of_task=keys)) is None:
            continue
        mname, score = got
        used = used or mname
        outcomes.append(Outcome(model=model, benchmark=rule.benchmark, text=text, score=score, prompt_id=f"{task}:{i - 1}"))
    report_metric_failures(errors, fname, task, failed, reached)
    return outcomes, used


def _read_root(root: Path, files: dict[str, dict[str, Path]], *, model: str | None, metric: MetricOption | None,
               rules: Rules, kind: str, location: str | None, revision: str | None) -> SourceBatch:
    metrics = metric or MetricOption()
    unread: list[tuple[Path, str]] = []
    model = model or _model_name(root, unread)
    # a results file passed over (an empty one: a copy cut short): the details are read without it, the model named
    # by an older results file or the folder; before, without a word
    named_by = "the folder name" if model == _folder_model_name(root) else "an older results file"
    warnings = [f"{p}: results file not read: {why}; the details are read without it, the model named {model!r} by "
                f"{named_by} (copy the results file again, or pass {option_hint('model', 'NAME', quote=False)})" for p, why in unread] if model else []
    if not model:
        raise InputError("cannot tell the model of these details files (no results file naming it, and the folder "
                         "is neither details_<org>__<model> nor <out>/details/<org>/<model>); pass "
                         f"{option_hint('model', 'NAME', quote=False)}", file=str(root))
    errors = ErrorLog()
    outcomes: list[Outcome] = []
    benchmarks: dict[str, BenchmarkInfo] = {}
    chosen, left_out = _choose_runs(files, rules)
    skipped = 0
    for f in left_out:
        try:
            import pyarrow.parquet as pq

            skipped += pq.ParquetFile(f).metadata.num_rows
        except Exception:  # noqa: BLE001 - an unreadable superseded run is not read anyway
            pass
    used_files: list[Path] = []
    fit = KeyFit()
    for _base, (task, f) in sorted(chosen.items()):
        rule = rules.for_task(task)
        metric = metrics.for_task(task)  # --metric TASK=KEY, else --metric KEY, else (None) the rule's
        got = _read_details(f, task, rule, model, metric, errors, fit)
        if got is None:
            continue
        used_files.append(f)
        rows, used_metric = got
        outcomes.extend(rows)
        shots = _split_task(task)[1]
        config = {"metric_key": used_metric} if used_metric and (metric or rule.metric) and used_metric != (metric or rule.metric) else {}
        benchmarks[rule.benchmark] = BenchmarkInfo(
            name=rule.benchmark, group=rule.group, source_task=task, metric=metric or rule.metric or used_metric,
            num_fewshot=shots, config=config)
    fit.advise(errors)
    if revision is None:
        h = hashlib.sha256()
        for p in used_files:
            h.update(p.name.encode() + b"\0" + p.read_bytes())
        revision = "sha256:" + h.hexdigest()
    info = SourceInfo(kind=kind, location=location or str(root.resolve()), revision=revision)
    return SourceBatch(source=info, benchmarks=benchmarks, outcomes=outcomes, errors=errors.finish(), skipped=skipped,
                       warnings=warnings)


def read_lighteval(path: str | Path, *, model: str | None = None, metric: str | list[str] | None = None,
                   rules: Rules | None = None,
                   kind: str = "lighteval", location: str | None = None,
                   revision: str | None = None) -> Iterator[SourceBatch]:
    """One SourceBatch per model's details under ``path`` (a details repo, lighteval's output folder, or one
    details file). No ``filter``: lighteval details have no filters, so ``--filter`` is refused (a usage error,
    :func:`indexer.sources.registry.check_options`) as other formats refuse the options they do not take.
    ``metric``: KEY for every task, TASK=KEY for one (TASK as the file names it, ``leaderboard|mmlu:anatomy|5``), or
    a list of them; a TASK naming no task under ``path`` is a ConfigError."""
    path = Path(path)
    rules = rules or load_rules()
    metrics = parse_metric(metric)
    opts = dict(model=model, metric=metrics, rules=rules, kind=kind, location=location, revision=revision)
    if path.is_file():
        m = DETAILS_RE.match(path.name)
        if not m:
            raise InputError("not a lighteval details file (details_<task>_<ts>.parquet)", file=str(path))
        if metrics is not None:
            metrics.check_tasks([m["task"]], str(path))
        yield _read_root(_model_root(path), {m["task"]: {m["ts"]: path}}, **opts)
        return
    roots = find_details_roots(path)
    if not roots:
        raise InputError(why_not(path) or "no lighteval details files (details_<task>_<ts>.parquet) here",
                         file=str(path))
    files = {root: _details_files(root) for root in roots}
    if metrics is not None:
        metrics.check_tasks([t for f in files.values() for t in f], str(path))
    yield from each_isolated(roots, lambda root: _read_root(root, files[root], **opts))  # one fails alone


READER = Reader(
    name="lighteval",
    layout="details_*.parquet (lighteval)",
    recognise=recognise,
    why_not=why_not,
    read=read_lighteval,
    plan_hub_files=plan_hub_files,
    takes_identity=True,
    options=("model", "metric", "rules", "kind", "location", "revision"),
)
