"""Per-task rules (data in ``rules.toml``): benchmark name normalisation, the correctness metric,
the filter, and which ``doc`` fields hold the question and its options.

``load_rules(path=None)`` reads the bundled table (or another TOML file of the same shape);
``Rules.for_task(task, group=None)`` gives a :class:`TaskRule`; :func:`extract_text` picks the text
that is embedded: the question from ``doc`` with its options appended, or else the last example of
the full prompt.
"""

from __future__ import annotations

import ast
import functools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

RULES_FILE = Path(__file__).with_name("rules.toml")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class TaskRule:
    task: str  # the raw harness task name
    benchmark: str
    group: str | None
    metric: str | None  # None: the first of metric_preference present in the sample
    filter: str | None
    by_field: str | None
    text_fields: tuple
    option_fields: tuple
    options: str
    metric_preference: tuple
    binary_metrics: frozenset = field(default_factory=frozenset)
    graded_metrics: frozenset = field(default_factory=frozenset)

    def benchmark_for(self, doc: dict | None) -> str:
        if self.by_field and isinstance(doc, dict) and doc.get(self.by_field) not in (None, ""):
            value = re.sub(r"\s+", "_", str(doc[self.by_field]).strip().lower())
            return f"{self.benchmark}/{value}"
        return self.benchmark

    def is_known_metric(self, name: str) -> bool:
        return name in self.binary_metrics or name in self.graded_metrics


class Rules:
    def __init__(self, data: dict):
        self.defaults = dict(data.get("defaults", {}))
        self.tasks = []
        for i, t in enumerate(data.get("task", [])):
            if "match" not in t or "benchmark" not in t:
                raise ValueError(f"rules [[task]] #{i + 1} needs `match` and `benchmark`")
            self.tasks.append((re.compile(t["match"]), t))

    @functools.lru_cache(maxsize=4096)
    def for_task(self, task: str, group: str | None = None) -> TaskRule:
        """The rule for a harness task name (``group``: the harness group listing it, if any)."""
        d = self.defaults
        spec: dict = {}
        groups: dict = {}
        for rx, t in self.tasks:
            m = rx.fullmatch(task)
            if m:
                spec, groups = t, m.groupdict()
                break
        bench = spec.get("benchmark", "{task}").format(task=task, **groups) if spec else task
        return TaskRule(
            task=task,
            benchmark=bench,
            group=spec.get("group", group),
            metric=spec.get("metric"),
            filter=spec.get("filter"),
            by_field=spec.get("by_field"),
            text_fields=tuple(_freeze(spec.get("text_fields", d.get("text_fields", [])))),
            option_fields=tuple(_freeze(spec.get("option_fields", d.get("option_fields", [])))),
            options=spec.get("options", d.get("options", "letters")),
            metric_preference=tuple(d.get("metric_preference", [])),
            binary_metrics=frozenset(d.get("binary_metrics", [])),
            graded_metrics=frozenset(d.get("graded_metrics", [])),
        )


def _freeze(items):
    return [tuple(x) if isinstance(x, list) else x for x in items]


@functools.lru_cache(maxsize=8)
def _load(path: str) -> Rules:
    with open(path, "rb") as f:
        return Rules(tomllib.load(f))


def load_rules(path: str | Path | None = None) -> Rules:
    """The rules table (the bundled ``rules.toml`` unless ``path`` is given)."""
    return _load(str(Path(path) if path else RULES_FILE))


# ---------------------------------------------------------------------------------------- text


def _options(value) -> list[str] | None:
    """Answer options from a doc value: a list, {"text": [...]}, or a Python/JSON literal string of a list."""
    if isinstance(value, str):
        s = value.strip()
        if s.startswith("[") and s.endswith("]"):
            try:
                value = ast.literal_eval(s)
            except (ValueError, SyntaxError):
                return None
        else:
            return None
    if isinstance(value, dict) and isinstance(value.get("text"), list):
        value = value["text"]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, int, float)) for v in value):
        return [str(v).strip() for v in value]
    return None


def _field_text(doc: dict, spec) -> str | None:
    if isinstance(spec, tuple):  # several fields joined by a blank line (all must be present)
        parts = [doc.get(k) for k in spec]
        if all(isinstance(p, str) and p.strip() for p in parts):
            return "\n\n".join(p.strip() for p in parts)
        return None
    v = doc.get(spec)
    return v.strip() if isinstance(v, str) and v.strip() else None


def text_from_doc(doc, rule: TaskRule, choices: list[str] | None = None) -> str | None:
    """The question from ``doc`` (first matching text field), options appended as "A. ..." lines
    (from the rule's option fields, else ``choices``: the task's fixed options)."""
    if not isinstance(doc, dict):
        return None
    question = None
    for spec in rule.text_fields:
        question = _field_text(doc, spec)
        if question:
            break
    if not question:
        return None
    if rule.options == "none":
        return question
    for spec in rule.option_fields:
        opts = [str(doc[k]).strip() for k in spec if doc.get(k) is not None] if isinstance(spec, tuple) else _options(doc.get(spec))
        if opts:
            return with_options(question, opts)
    if choices and rule.option_fields:
        return with_options(question, [str(c).strip() for c in choices])
    return question


def with_options(question: str, options: list[str]) -> str:
    """``question`` then one "A. option" line per option (the shared MMLU-Pro text format)."""
    return question + "\n" + "\n".join(f"{LETTERS[i % 26]}. {o}" for i, o in enumerate(options))


def last_example(full_prompt: str | None, delimiter: str = "\n\n") -> str | None:
    """The last example of a few-shot prompt: the text after the last few-shot delimiter."""
    if not isinstance(full_prompt, str) or not full_prompt.strip():
        return None
    parts = [p for p in full_prompt.split(delimiter or "\n\n") if p.strip()]
    return parts[-1].strip() if parts else None


def extract_text(doc, rule: TaskRule, full_prompt: str | None = None, delimiter: str = "\n\n",
                 choices: list[str] | None = None) -> str | None:
    """The text to embed: from ``doc`` by the rule, else the last example of ``full_prompt``."""
    return text_from_doc(doc, rule, choices) or last_example(full_prompt, delimiter)
