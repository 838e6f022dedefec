"""Per-task rules (data in ``rules.toml``): benchmark name normalisation, the correctness metric,
the filter, and which ``doc`` fields hold the question, its context and its options.

``load_rules(path=None)`` reads the bundled table (or another TOML file of the same shape);
``Rules.for_task(task, group=None)`` gives a :class:`TaskRule` (a rule may send a writer's task name on to
another rule with ``alias``, so ``leaderboard_arc_challenge``, v1's ``harness|arc:challenge|25`` and lm-eval's
``arc_challenge`` reach the same benchmark); :func:`extract_text` picks the text that is embedded: the
question from ``doc`` (after its context, if the doc has one) with its options appended, or else the last
example of the rendered prompt.
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
MAX_ALIASES = 4  # alias hops before a rule chain is taken as a loop


@dataclass(frozen=True)
class TaskRule:
    task: str  # the raw task name as its writer spells it
    benchmark: str
    group: str | None
    #: the benchmark's name for its metric (rules.toml ``metric_name``, else the first ``metric`` key); None: the
    #: first of metric_preference present in the sample
    metric: str | None
    filter: str | None
    by_field: str | None
    text_fields: tuple
    option_fields: tuple
    options: str
    metric_preference: tuple
    binary_metrics: frozenset = field(default_factory=frozenset)
    graded_metrics: frozenset = field(default_factory=frozenset)
    #: sample keys that all mean this benchmark's metric, under different writers' names; the first present is read
    metric_keys: tuple = ()
    #: metric -> the newest task version (``versions`` of the results file) whose value of it is this
    #: benchmark's scorer (MATH-hard's ``exact_match`` is the strict check up to version 2 only)
    metric_max_version: dict = field(default_factory=dict)
    metric_note: str | None = None  # why, for the message that rejects a metric of a newer task version
    #: metrics whose per-sample value is a list of per-item values, averaged (IFEval's ``inst_level_*``)
    list_metrics: frozenset = field(default_factory=frozenset)
    #: metrics whose per-sample value is a (gold, pred) pair (lm-eval's multiple-choice f1/mcc)
    pair_metrics: frozenset = field(default_factory=frozenset)
    #: how a (gold, pred) pair is scored: None (rejected: such metrics are corpus-level) or "match" (1 if equal)
    pair_score: str | None = None
    context_fields: tuple = ()  # doc fields holding the passage a question is about (boolq passage, asdiv body)
    sort_options: bool = False  # options sorted by text before lettering (tasks that shuffle them per run)
    preamble: str | None = None  # fixed text a writer puts before every query (stripped from the text)
    shots: int | None = None  # the benchmark's standard shot count (the run read when a source has several)

    def benchmark_for(self, doc: dict | None) -> str:
        if self.by_field and isinstance(doc, dict) and doc.get(self.by_field) not in (None, ""):
            value = re.sub(r"\s+", "_", str(doc[self.by_field]).strip().lower())
            return f"{self.benchmark}/{value}"
        return self.benchmark

    def is_known_metric(self, name: str) -> bool:
        return name in self.binary_metrics or name in self.graded_metrics or name in self.pair_metrics


class Rules:
    def __init__(self, data: dict):
        self.defaults = dict(data.get("defaults", {}))
        self.tasks = []
        for i, t in enumerate(data.get("task", [])):
            if "match" not in t or ("benchmark" not in t and "alias" not in t):
                raise ValueError(f"rules [[task]] #{i + 1} needs `match` and `benchmark` (or `alias`)")
            self.tasks.append((re.compile(t["match"]), t))

    def _find(self, name: str) -> tuple[dict, dict]:
        for rx, t in self.tasks:
            m = rx.fullmatch(name)
            if m:
                return t, {k: v for k, v in m.groupdict().items() if v is not None}
        return {}, {}

    @functools.lru_cache(maxsize=4096)
    def for_task(self, task: str, group: str | None = None) -> TaskRule:
        """The rule for a task name as its writer spells it (``group``: the harness group listing it, if any)."""
        d = self.defaults
        name = task
        spec, groups = self._find(name)
        for _ in range(MAX_ALIASES):
            if "alias" not in spec:
                break
            name = spec["alias"].format(task=name, **groups)
            spec, groups = self._find(name)
        bench = spec.get("benchmark", "{task}").format(task=name, **groups) if spec else name
        metric = spec.get("metric")
        keys = tuple(metric) if isinstance(metric, list) else ((metric,) if metric else ())
        text_fields = spec.get("text_fields")
        # a rule that names its text fields names its whole text: the default context fields do not apply
        context = spec.get("context_fields", [] if text_fields is not None else d.get("context_fields", []))
        graded = frozenset(d.get("graded_metrics", [])) | frozenset(spec.get("graded", []))
        return TaskRule(
            task=task,
            benchmark=bench,
            group=spec.get("group", group),
            metric=spec.get("metric_name", keys[0] if keys else None),
            filter=spec.get("filter"),
            by_field=spec.get("by_field"),
            text_fields=tuple(_freeze(text_fields if text_fields is not None else d.get("text_fields", []))),
            option_fields=tuple(_freeze(spec.get("option_fields", d.get("option_fields", [])))),
            options=spec.get("options", d.get("options", "letters")),
            metric_preference=tuple(d.get("metric_preference", [])),
            binary_metrics=frozenset(d.get("binary_metrics", [])) - graded,
            graded_metrics=graded,
            metric_keys=keys,
            metric_max_version=dict(spec.get("metric_max_version", {})),
            metric_note=spec.get("metric_note"),
            list_metrics=frozenset(d.get("list_metrics", [])),
            pair_metrics=frozenset(d.get("pair_metrics", [])),
            pair_score=spec.get("pair_score"),
            context_fields=tuple(context),
            sort_options=bool(spec.get("sort_options", False)),
            preamble=spec.get("preamble"),
            shots=int(spec["shots"]) if "shots" in spec else None,
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
            except (ValueError, SyntaxError, MemoryError, RecursionError):
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


def _from_rendered(context: str, prompt: str | None) -> str | None:
    """The rendered prompt from the last place the doc's context starts: the doc's own example with the
    task's wording (race: "Article: ..." then its questions), without the few-shot examples before it."""
    if not isinstance(prompt, str):
        return None
    head = context.strip()[:200]
    at = prompt.rfind(head) if head else -1
    if at < 0:
        return None
    return prompt[at:].strip() or None


def text_from_doc(doc, rule: TaskRule, choices: list[str] | None = None, prompt: str | None = None) -> str | None:
    """The question from ``doc`` (first matching text field), after its context (first matching context field,
    a blank line between), options appended as "A. ..." lines (from the rule's option fields, else
    ``choices``: the task's fixed options; sorted first when the rule says so). A doc with a context but no
    question field gives the rendered ``prompt`` from where that context starts."""
    if not isinstance(doc, dict):
        return None
    question = None
    for spec in rule.text_fields:
        question = _field_text(doc, spec)
        if question:
            break
    context = next((c for c in (_field_text(doc, f) for f in rule.context_fields) if c and c != question), None)
    if not question:
        return _from_rendered(context, prompt) if context else None
    if context:
        question = f"{context}\n\n{question}"
    if rule.options == "none":
        return question
    for spec in rule.option_fields:
        opts = [str(doc[k]).strip() for k in spec if doc.get(k) is not None] if isinstance(spec, tuple) else _options(doc.get(spec))
        if opts:
            return with_options(question, sorted(opts) if rule.sort_options else opts)
    if choices and rule.option_fields:
        opts = [str(c).strip() for c in choices]
        return with_options(question, sorted(opts) if rule.sort_options else opts)
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


def strip_preamble(text: str | None, rule: TaskRule) -> str | None:
    """``text`` without the rule's fixed preamble (v1 truthfulqa's six example QAs before every question)."""
    if text and rule.preamble and text.startswith(rule.preamble):
        return text[len(rule.preamble):].strip() or None
    return text


def extract_text(doc, rule: TaskRule, full_prompt: str | None = None, delimiter: str = "\n\n",
                 choices: list[str] | None = None) -> str | None:
    """The text to embed: from ``doc`` by the rule, else the last example of ``full_prompt``."""
    return text_from_doc(doc, rule, choices, full_prompt) or last_example(strip_preamble(full_prompt, rule), delimiter)
