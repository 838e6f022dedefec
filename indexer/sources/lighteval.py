"""The older Open LLM Leaderboard "details" layout (lighteval) -> SourceBatch.

Files ``details_<suite>|<task>|<shots>_<ts>.parquet`` (at the repo root or in a ``<ts>/`` folder), beside
``results_<ts>.json``; columns ``example`` (the question of this sample), ``full_prompt`` (with the few-shot
examples), ``predictions``, ``gold``, ``metrics`` (a per-sample dict, e.g. ``{"acc": 1, "acc_norm": 0}``).
Per task the latest run is read; the metric and benchmark name come from ``rules.toml``
(``harness|hendrycksTest-anatomy|5`` -> ``mmlu/anatomy``). The prompt id is ``<task>:<row>``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..records import BenchmarkInfo, Outcome, SourceBatch, SourceInfo
from .common import ErrorLog
from .lm_eval import RESULTS_RE, TS, _choose_metric, _value
from .registry import Match, Reader
from .rules import Rules, last_example, load_rules

DETAILS_RE = re.compile(rf"^details_(?P<task>.+)_(?P<ts>{TS})\.parquet$")


def _details_files(root: Path) -> dict[str, dict[str, Path]]:
    """task -> ts -> file, for details files in ``root`` and its immediate subfolders."""
    out: dict[str, dict[str, Path]] = {}
    for p in sorted(list(root.glob("details_*.parquet")) + list(root.glob("*/details_*.parquet"))):
        if m := DETAILS_RE.match(p.name):
            out.setdefault(m["task"], {})[m["ts"]] = p
    return out


def looks_like_lighteval(path: Path) -> bool:
    path = Path(path)
    if path.is_file():
        return bool(DETAILS_RE.match(path.name))
    return bool(_details_files(path))


def recognise(path: Path) -> Match:
    """STRONG for a details file, or a folder with details files in it or one level below."""
    return Match.STRONG if looks_like_lighteval(path) else Match.NONE


def plan_hub_files(files: list[str]) -> tuple[Match, list[str]]:
    """The files of a Hub repo's list that :func:`read_lighteval` reads: the latest details file per task, and
    the results files (they name the model)."""
    details: dict[str, dict[str, str]] = {}  # task -> ts -> file (one model per details repo)
    for f in files:
        if m := DETAILS_RE.match(f.rpartition("/")[2]):
            details.setdefault(m["task"], {})[m["ts"]] = f
    if not details:
        return Match.NONE, []
    out = {runs[max(runs)] for runs in details.values()}
    out |= {f for f in files if RESULTS_RE.match(f.rpartition("/")[2])}
    return Match.STRONG, sorted(out)


def _model_name(root: Path) -> str | None:
    for p in sorted(root.glob("results_*.json"), reverse=True) + sorted(root.glob("*/results_*.json"), reverse=True):
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError):
            continue
        cfg = data.get("config_general") or data.get("config") or {}
        if isinstance(cfg, dict) and cfg.get("model_name"):
            return str(cfg["model_name"])
    name = root.name
    if name.startswith("details_"):
        return name[len("details_"):].replace("__", "/")
    return None


def read_lighteval(path: str | Path, *, model: str | None = None, metric: str | None = None, rules: Rules | None = None,
                   kind: str = "lighteval", location: str | None = None, revision: str | None = None,
                   filter: str | None = None) -> Iterator[SourceBatch]:
    """One SourceBatch for the details files under ``path`` (a repo folder, or one details file)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    del filter  # lighteval details have no filters
    path = Path(path)
    root = path.parent if path.is_file() else path
    files = _details_files(root)
    if path.is_file():
        m = DETAILS_RE.match(path.name)
        if not m:
            raise InputError("not a lighteval details file (details_<task>_<ts>.parquet)", file=str(path))
        files = {m["task"]: {m["ts"]: path}}
    if not files:
        raise InputError("no lighteval details files (details_<task>_<ts>.parquet) here", file=str(path))
    model = model or _model_name(root if root.name.startswith("details_") or not path.is_file() else root.parent)
    if not model:
        raise InputError("cannot tell the model of these details files; pass model=", file=str(path))
    rules = rules or load_rules()
    errors = ErrorLog()
    outcomes: list[Outcome] = []
    benchmarks: dict[str, BenchmarkInfo] = {}
    used: list[Path] = []
    for task, runs in sorted(files.items()):
        ts = max(runs)
        f = runs[ts]
        fname = str(f)
        rule = rules.for_task(task)
        try:
            table = pq.read_table(f)
        except (pa.ArrowException, OSError) as exc:
            errors.add(fname, None, f"not a readable Parquet file ({exc}); is it truncated? re-download it")
            continue
        used.append(f)
        cols = set(table.column_names)
        if "metrics" not in cols or not ({"example", "full_prompt"} & cols):
            errors.add(fname, None, f"missing column(s): need metrics and example or full_prompt; found {', '.join(sorted(cols))}")
            continue
        used_metric = None
        shots = task.rsplit("|", 1)[-1]
        for i, row in enumerate(table.to_pylist(), 1):
            text = row.get("example") if isinstance(row.get("example"), str) and row["example"].strip() else None
            text = text.strip() if text else last_example(row.get("full_prompt"))
            if not text:
                errors.add(fname, i, "no prompt text (empty example and full_prompt)", "rows without prompt text")
                continue
            metrics = row.get("metrics")
            if isinstance(metrics, str):
                try:
                    metrics = json.loads(metrics)
                except json.JSONDecodeError:
                    metrics = None
            if not isinstance(metrics, dict):
                errors.add(fname, i, "metrics is not a dict of per-sample values", "bad metrics cells")
                continue
            mname, why = _choose_metric(metrics, rule, metric)
            if mname is None:
                errors.add(fname, i, why, why.split(":")[0])
                continue
            score, why = _value(metrics[mname], mname, rule)
            if score is None:
                errors.add(fname, i, why, f"bad {mname} values")
                continue
            used_metric = used_metric or mname
            outcomes.append(Outcome(model=model, benchmark=rule.benchmark, text=text, score=score, prompt_id=f"{task}:{i - 1}"))
        benchmarks[rule.benchmark] = BenchmarkInfo(
            name=rule.benchmark, group=rule.group, source_task=task, metric=used_metric,
            num_fewshot=int(shots) if shots.isdigit() else None)
    if revision is None:
        h = hashlib.sha256()
        for p in used:
            h.update(p.name.encode() + b"\0" + p.read_bytes())
        revision = "sha256:" + h.hexdigest()
    info = SourceInfo(kind=kind, location=location or str(root.resolve()), revision=revision)
    yield SourceBatch(source=info, benchmarks=benchmarks, outcomes=outcomes, errors=errors.finish())


READER = Reader(
    name="lighteval",
    layout="details_*.parquet (lighteval)",
    recognise=recognise,
    read=read_lighteval,
    plan_hub_files=plan_hub_files,
    takes_identity=True,
)
