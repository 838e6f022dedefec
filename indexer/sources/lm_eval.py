"""lm-evaluation-harness ``--log_samples`` output -> one :class:`~indexer.records.SourceBatch` per model folder.

Layout (as the harness writes it): ``<out>/<org>__<model>/results_<ts>.json`` beside
``samples_<task>_<ts>.jsonl``; a second run of a model adds files with a new timestamp. Open LLM
Leaderboard v2 details repos hold the same thing (``samples_leaderboard_<task>_<ts>.jsonl``), written by an
older harness: ``.json`` files (possibly one JSON array), possibly without ``filter``/``metrics`` keys,
``arguments`` as a list of ``[arg_0, arg_1]`` pairs.

Per model and task the latest run (timestamp) is read. Per sample line: the filter (generation tasks write one
line per filter) and metric come from :mod:`.rules`; the prompt text is the question from ``doc`` with its
options (or the last example of ``arg_0``); the prompt id is ``<task>:<doc_id>``. Problems become RowErrors
(file, line, what is wrong) and the rest is read; a samples file without its ``results_<ts>.json`` is rejected.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..records import BenchmarkInfo, Outcome, SourceBatch, SourceInfo
from .common import ErrorLog, json_objects
from .registry import Match, Reader
from .rules import Rules, TaskRule, extract_text, load_rules

TS = r"\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}(?:\.\d+)?"
SAMPLES_RE = re.compile(rf"^samples_(?P<task>.+)_(?P<ts>{TS})\.(?P<ext>jsonl|json)$")
RESULTS_RE = re.compile(rf"^results_(?P<ts>{TS})\.json$")


@dataclass
class ModelFolder:
    """The harness files of one model: ``results[ts]`` and ``samples[task][ts]``."""

    path: Path
    results: dict[str, Path] = field(default_factory=dict)
    samples: dict[str, dict[str, Path]] = field(default_factory=dict)


def scan_folder(folder: Path) -> ModelFolder | None:
    mf = ModelFolder(folder)
    for p in sorted(folder.iterdir()):
        if not p.is_file():
            continue
        if m := RESULTS_RE.match(p.name):
            mf.results[m["ts"]] = p
        elif m := SAMPLES_RE.match(p.name):
            mf.samples.setdefault(m["task"], {})[m["ts"]] = p
    return mf if mf.samples else None


def find_model_folders(path: Path, max_depth: int = 3) -> list[ModelFolder]:
    """Every folder under ``path`` (itself included, ``max_depth`` levels) holding samples files."""
    path = Path(path)
    found: list[ModelFolder] = []

    def walk(p: Path, depth: int) -> None:
        mf = scan_folder(p)
        if mf:
            found.append(mf)
        if depth < max_depth:
            for sub in sorted(x for x in p.iterdir() if x.is_dir() and not x.name.startswith(".")):
                walk(sub, depth + 1)

    if path.is_dir():
        walk(path, 0)
    return found


def looks_like_lm_eval(path: Path) -> bool:
    path = Path(path)
    if path.is_file():
        return bool(SAMPLES_RE.match(path.name))
    return bool(find_model_folders(path, max_depth=2))


def recognise(path: Path) -> Match:
    """STRONG for a samples file, or a folder with samples files in it or up to two levels below."""
    return Match.STRONG if looks_like_lm_eval(path) else Match.NONE


def plan_hub_files(files: list[str]) -> tuple[Match, list[str]]:
    """The files of a Hub repo's list that :func:`read_lm_eval` reads: per model folder and task the latest
    run that has its results file (with that file), plus any newer samples file lacking one, so that the
    reader reports it."""
    samples: dict[tuple[str, str], dict[str, str]] = {}  # (folder, task) -> ts -> file
    results: dict[str, set[str]] = {}  # folder -> timestamps of its results files
    for f in files:
        folder, _, base = f.rpartition("/")
        if m := SAMPLES_RE.match(base):
            samples.setdefault((folder, m["task"]), {})[m["ts"]] = f
        elif m := RESULTS_RE.match(base):
            results.setdefault(folder, set()).add(m["ts"])
    if not samples:
        return Match.NONE, []
    out: set[str] = set()
    for (folder, _task), runs in samples.items():
        res_ts = results.get(folder, set())
        have = [ts for ts in runs if ts in res_ts]
        best = max(have) if have else None
        for ts, f in runs.items():
            if ts == best or (ts not in res_ts and (best is None or ts > best)):
                out.add(f)
        if best:
            out.add(f"{folder}/results_{best}.json" if folder else f"results_{best}.json")
    return Match.STRONG, sorted(out)


# --------------------------------------------------------------------------------------- results


def _model_from_results(results: dict, folder: Path) -> tuple[str, str | None]:
    cfg = results.get("config") if isinstance(results.get("config"), dict) else {}
    args = cfg.get("model_args")
    margs: dict = {}
    if isinstance(args, dict):
        margs = args
    elif isinstance(args, str):
        margs = dict(kv.split("=", 1) for kv in args.split(",") if "=" in kv)
    name = results.get("model_name") or margs.get("pretrained") or margs.get("model") or folder.name.replace("__", "/")
    rev = cfg.get("model_sha") or results.get("model_sha") or margs.get("revision") or cfg.get("model_revision")
    if rev in ("", "main", None):
        rev = None
    return str(name), (str(rev) if rev else None)


def _task_group(results: dict, task: str) -> str | None:
    for group, subs in (results.get("group_subtasks") or {}).items():
        if isinstance(subs, list) and task in subs and group != task:
            return group
    return None


def _task_config(results: dict, task: str) -> dict:
    cfg = (results.get("configs") or {}).get(task)
    return cfg if isinstance(cfg, dict) else {}


def _default_filter(results: dict, task: str) -> str | None:
    """The filter the headline metric is read under: the task's first declared filter that extracts an
    answer (not "none", the raw output), else "none"."""
    fl = _task_config(results, task).get("filter_list")
    names = [str(f["name"]) for f in fl if isinstance(f, dict) and f.get("name")] if isinstance(fl, list) else []
    return next((n for n in names if n != "none"), names[0] if names else None)


# --------------------------------------------------------------------------------------- samples


def iter_sample_rows(path: Path, errors: ErrorLog) -> Iterator[tuple[int, dict]]:
    """(line, row) of a samples file: JSON lines, or one JSON array (line = item number)."""
    fname = str(path)
    try:
        with open(path, encoding="utf-8") as f:
            head = f.read(1)
            while head and head.isspace():
                head = f.read(1)
            f.seek(0)
            if not head:
                errors.add(fname, None, "empty file: no samples")
                return
            yield from json_objects(f, fname, errors, array=head == "[")
    except (OSError, UnicodeDecodeError) as exc:
        errors.add(fname, None, f"cannot read file: {exc}")


def _arg0(row: dict) -> str | None:
    args = row.get("arguments")
    if isinstance(args, dict):
        first = args.get("gen_args_0") or next(iter(args.values()), None)
        if isinstance(first, dict):
            return first.get("arg_0")
        if isinstance(first, (list, tuple)) and first:
            return first[0]
    if isinstance(args, list) and args:
        first = args[0]
        if isinstance(first, (list, tuple)) and first and isinstance(first[0], str):
            return first[0]
        if isinstance(first, str):
            return first
    return None


def _value(v, metric: str, rule: TaskRule) -> tuple[float | None, str | None]:
    """(score, None) or (None, what is wrong)."""
    if isinstance(v, bool):
        v = float(v)
    elif isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            return None, f"{metric} value {v!r} is not a number"
    elif isinstance(v, list) and metric in rule.graded_metrics and v and all(isinstance(x, (int, float, bool)) for x in v):
        v = sum(float(x) for x in v) / len(v)  # e.g. inst_level_*: one value per instruction
    if not isinstance(v, (int, float)) or v != v:
        return None, f"{metric} value {v!r} is not a number"
    v = float(v)
    if metric in rule.binary_metrics and v not in (0.0, 1.0):
        return None, f"{metric} value {v:g} is not binary (0 or 1 expected)"
    if not 0.0 <= v <= 1.0:
        return None, f"{metric} value {v:g} is outside [0, 1]"
    return v, None


def _choose_metric(row: dict, rule: TaskRule, override: str | None) -> tuple[str | None, str | None]:
    """(metric, None) or (None, what is wrong) for one sample row."""
    if override or rule.metric:
        m = override or rule.metric
        if not rule.is_known_metric(m):
            return None, (f"unknown metric {m!r} for task {rule.task}: not a correctness metric taskspace knows "
                          f"({', '.join(sorted(rule.binary_metrics | rule.graded_metrics))}); fix the rule or --metric")
        if m not in row:
            have = [k for k in row if rule.is_known_metric(k)] or row.get("metrics") or []
            return None, f"metric {m!r} (task {rule.task}) is missing from the sample (it has: {', '.join(map(str, have)) or 'none'})"
        return m, None
    listed = row.get("metrics") if isinstance(row.get("metrics"), list) else [k for k in row if k not in _NON_METRIC]
    for m in rule.metric_preference:
        if m in row and (m in listed or not row.get("metrics")):
            return m, None
    return None, (f"unknown metric: no correctness metric taskspace knows among {', '.join(map(str, listed)) or 'no keys'} "
                  f"(task {rule.task}); add a rule for it in rules.toml or pass metric=")


_NON_METRIC = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
               "doc_hash", "prompt_hash", "target_hash"}


@dataclass
class _TaskRows:
    by_filter: dict[str, list] = field(default_factory=dict)  # filter -> [(line, row)]


def read_task_file(
    path: Path, task: str, rule: TaskRule, model: str, revision: str | None, *,
    errors: ErrorLog, filter: str | None = None, metric: str | None = None, delimiter: str = "\n\n",
    choices: list[str] | None = None,
) -> tuple[list[Outcome], int, str | None, str | None]:
    """Outcomes of one samples file. Returns (outcomes, duplicates skipped, filter used, metric used)."""
    fname = str(path)
    by_filter: dict[str, list] = {}
    for line, row in iter_sample_rows(path, errors):
        by_filter.setdefault(str(row.get("filter", "none")), []).append((line, row))
    if not by_filter:
        return [], 0, None, None
    chosen = next((f for f in (filter, rule.filter, "none") if f and f in by_filter), next(iter(by_filter)))
    if filter and filter not in by_filter:
        errors.add(fname, None, f"filter {filter!r} not in this file (it has: {', '.join(by_filter)}); read {chosen!r}")
    outcomes: list[Outcome] = []
    seen: dict[str, tuple[int, float, int]] = {}  # doc_id -> (line, score, index in outcomes)
    dropped: set[str] = set()
    skipped = 0
    used_metric = None
    for line, row in by_filter[chosen]:
        if "doc_id" not in row:
            errors.add(fname, line, "missing field doc_id", "missing doc_id")
            continue
        doc = row.get("doc")
        text = extract_text(doc, rule, _arg0(row), delimiter, choices)
        if not text:
            errors.add(fname, line, f"no prompt text: `doc` has none of {', '.join(map(str, rule.text_fields))} "
                       "and there is no arguments.arg_0 prompt", "samples without prompt text")
            continue
        m, why = _choose_metric(row, rule, metric)
        if m is None:
            errors.add(fname, line, why, why.split(":")[0])
            continue
        used_metric = used_metric or m
        score, why = _value(row[m], m, rule)
        if score is None:
            errors.add(fname, line, why, f"bad {m} values")
            continue
        doc_id = str(row["doc_id"])
        if doc_id in seen:
            first_line, first_score, idx = seen[doc_id]
            if first_score == score:
                skipped += 1
            elif doc_id not in dropped:
                errors.add(fname, line, f"doc_id {doc_id} repeated with a different {m} ({first_score:g} at line "
                           f"{first_line}, {score:g} here); both dropped: fix the source", "conflicting repeats")
                dropped.add(doc_id)
            continue
        seen[doc_id] = (line, score, len(outcomes))
        outcomes.append(Outcome(model=model, benchmark=rule.benchmark_for(doc), text=text, score=score,
                                revision=revision, prompt_id=f"{task}:{doc_id}"))
    if dropped:
        outcomes = [o for o in outcomes if o.prompt_id.split(":", 1)[1] not in dropped]
    return outcomes, skipped, chosen, used_metric


def chosen_runs(mf: ModelFolder) -> dict[str, str]:
    """task -> the timestamp read: the latest run that has its results file."""
    out = {}
    for task, runs in mf.samples.items():
        have = [ts for ts in runs if ts in mf.results]
        if have:
            out[task] = max(have)
    return out


def model_folder_info(mf: ModelFolder, *, kind: str = "lm_eval", location: str | None = None,
                      revision: str | None = None, **_ignored) -> SourceInfo:
    """The identity and revision (fingerprint of the files read) of a model folder, without parsing it."""
    if revision is None:
        runs = chosen_runs(mf)
        revision = _fingerprint([mf.samples[t][ts] for t, ts in runs.items()] + [mf.results[ts] for ts in set(runs.values())])
    return SourceInfo(kind=kind, location=location or str(mf.path.resolve()), revision=revision)


def read_model_folder(
    mf: ModelFolder, *, rules: Rules | None = None, model: str | None = None, filter: str | None = None,
    metric: str | None = None, kind: str = "lm_eval", location: str | None = None, revision: str | None = None,
) -> SourceBatch:
    """One model folder -> one SourceBatch (latest run per task)."""
    rules = rules or load_rules()
    errors = ErrorLog()
    outcomes: list[Outcome] = []
    benchmarks: dict[str, BenchmarkInfo] = {}
    skipped = 0
    results_cache: dict[str, dict] = {}
    for task in sorted(mf.samples):
        runs = mf.samples[task]
        with_results = {ts: p for ts, p in runs.items() if ts in mf.results}
        for ts, p in runs.items():
            if ts not in mf.results:
                errors.add(str(p), None, f"no results_{ts}.json beside this samples file: the run is incomplete "
                           "(cannot tell the model and task config); copy the results file or remove the samples file")
        if not with_results:
            continue
        ts = max(with_results)
        path = with_results[ts]
        if ts not in results_cache:
            try:
                results_cache[ts] = json.loads(mf.results[ts].read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
                errors.add(str(mf.results[ts]), getattr(exc, "lineno", None), f"unreadable results file: {exc}")
                results_cache[ts] = None
        results = results_cache[ts]
        if not isinstance(results, dict):
            continue
        name, rev = _model_from_results(results, mf.path)
        name = model or name
        rule = rules.for_task(task, _task_group(results, task))
        if rule.filter is None and (df := _default_filter(results, task)):
            rule = _with(rule, filter=df)
        cfg = _task_config(results, task)
        delim = cfg.get("fewshot_delimiter") if isinstance(cfg.get("fewshot_delimiter"), str) else "\n\n"
        # options the task config lists (doc_to_choice: ["no", "yes"]) serve docs that have none of their own
        choices = cfg.get("doc_to_choice") if isinstance(cfg.get("doc_to_choice"), list) else None
        got, dup, used_filter, used_metric = read_task_file(
            path, task, rule, name, rev, errors=errors, filter=filter, metric=metric, delimiter=delim, choices=choices)
        skipped += dup
        outcomes.extend(got)
        nshot = (results.get("n-shot") or {}).get(task)
        for bench in dict.fromkeys(o.benchmark for o in got):
            benchmarks[bench] = BenchmarkInfo(
                name=bench, group=rule.group, source_task=task, metric=used_metric,
                num_fewshot=nshot if isinstance(nshot, int) else None,
                config={"filter": used_filter} if used_filter else {},
            )
    info = model_folder_info(mf, kind=kind, location=location, revision=revision)
    return SourceBatch(source=info, benchmarks=benchmarks, outcomes=outcomes, errors=errors.finish(), skipped=skipped)


def _with(rule: TaskRule, **changes) -> TaskRule:
    from dataclasses import replace

    return replace(rule, **changes)


def _fingerprint(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in sorted(set(paths)):
        h.update(p.name.encode() + b"\0")
        with open(p, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    return "sha256:" + h.hexdigest()


def lm_eval_folders(path: str | Path) -> list[ModelFolder]:
    """The model folders a path names (a samples file: its folder, restricted to that file)."""
    path = Path(path)
    if path.is_file():
        m = SAMPLES_RE.match(path.name)
        if not m:
            raise InputError("not an lm-eval samples file (samples_<task>_<timestamp>.jsonl)", file=str(path))
        mf = scan_folder(path.parent)
        mf.samples = {m["task"]: {m["ts"]: path}}
        return [mf]
    folders = find_model_folders(path)
    if not folders:
        raise InputError("no lm-eval samples files (samples_<task>_<timestamp>.jsonl) in this folder", file=str(path))
    return folders


def lm_eval_source_infos(path: str | Path, **options) -> list[SourceInfo]:
    return [model_folder_info(mf, **options) for mf in lm_eval_folders(path)]


def read_lm_eval(path: str | Path, **options) -> Iterator[SourceBatch]:
    """Every model folder under ``path`` (or the folder of one samples file) -> SourceBatch each.

    ``options``: ``model`` (override the name), ``filter``, ``metric`` (override the rules),
    ``rules`` (a :class:`~indexer.sources.rules.Rules`), ``kind``, ``location``, ``revision``.
    """
    for mf in lm_eval_folders(path):
        yield read_model_folder(mf, **options)


READER = Reader(
    name="lm_eval",
    layout="samples_<task>_<ts>.jsonl + results_<ts>.json (lm-eval)",
    recognise=recognise,
    read=read_lm_eval,
    plan_hub_files=plan_hub_files,
    source_infos=lm_eval_source_infos,
    takes_identity=True,
)
