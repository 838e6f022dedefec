"""Per-sample scores of harness-style sources (lm-eval samples, lighteval details): which metric of a sample is
read (:func:`choose_metric`) and what its value means (:func:`metric_value`), by the task's
:class:`~indexer.sources.rules.TaskRule`; and :func:`py_literal`, which reads the Python reprs lighteval
wrote as cells (``str(value)``) with :func:`ast.literal_eval`, never ``eval``.
"""

from __future__ import annotations

import ast
import fnmatch
import math
import re
import shlex
from dataclasses import dataclass

from ..errors import CLI, SOURCE, arg, noun, source_hint
from .common import example_value, number_shown
from .rules import TaskRule

#: sample keys that are not metrics (lm-eval samples)
NON_METRIC = frozenset({"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
                        "doc_hash", "prompt_hash", "target_hash"})

_NP_SCALAR = re.compile(r"\bnp\.(?:float|int|uint|bool_?)\d*\(([^()]*)\)")


def py_literal(text: str):
    """A Python literal written as ``str(value)`` (single-quoted dicts and lists, tuples, True/None): parsed
    with :func:`ast.literal_eval` after unwrapping numpy scalar reprs (``np.float64(0.5)`` -> ``0.5``, as
    numpy >= 2 writes them). Raises ValueError when it is not such a literal."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    unwrapped = _NP_SCALAR.sub(r"\1", text)
    try:
        return ast.literal_eval(unwrapped)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise ValueError(f"not a Python literal ({type(exc).__name__})") from None


def metric_value(v, metric: str, rule: TaskRule) -> tuple[float | None, str | None]:
    """(score in [0, 1], None) or (None, what is wrong) for one sample's value of ``metric``."""
    score, why, _ = checked_value(v, metric, rule)
    return score, why


def checked_value(v, metric: str, rule: TaskRule) -> tuple[float | None, str | None, str | None]:
    """:func:`metric_value` with the kind of problem: (score, None, None) or (None, what is wrong, its kind), the kind
    the same for every value wrong the same way (``"pair"``, ``"outside [0, 1]"`` ...) whatever the value, so that a
    task's file whose every row is wrong alike is said once (:func:`report_metric_failures`)."""
    if isinstance(v, bool):
        v = float(v)
    elif isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            return None, f"{metric} value {example_value(v)} is not a number", "not a number"
    elif isinstance(v, (list, tuple)):
        if metric in rule.pair_metrics and len(v) == 2 and metric not in rule.list_metrics:
            if rule.pair_score == "match":
                return (1.0 if v[0] == v[1] else 0.0), None, None
            return None, (f"{metric} value {example_value(list(v))} is a (gold, pred) pair, not a per-sample score "
                          f"(lm-eval's multiple-choice {metric} is computed over the whole corpus); read another metric "
                          f"(acc) or set pair_score = \"match\" in the task's rule"), "pair"
        if metric in rule.list_metrics and v and all(isinstance(x, (int, float, bool)) for x in v):
            v = sum(float(x) for x in v) / len(v)  # inst_level_*: one value per instruction
        else:
            return None, (f"{metric} value {example_value(list(v))} is a list, not a per-sample score (lists are "
                          f"averaged only for {', '.join(sorted(rule.list_metrics)) or 'no metric'})"), "list"
    if not isinstance(v, (int, float)):
        return None, f"{metric} value {example_value(v)} is not a number", "not a number"
    try:
        v = float(v)
    except OverflowError:  # an integer too large for a float (`"acc": 1e999` is already inf)
        v = math.inf
    if not math.isfinite(v):  # NaN or infinity (`"acc": Infinity` or "inf"): before, inf was "not binary"
        return None, (f"{metric} value {example_value(v)} is not a number (NaN or infinite: the metric failed for "
                      "this sample); the sample is skipped"), "not finite"
    if metric in rule.binary_metrics and v not in (0.0, 1.0):
        return None, (f"{metric} value {number_shown(v)} is not binary (0 or 1 expected; a task whose {metric} is a graded "
                      f"score needs `graded = [\"{metric}\"]` in its rule)"), "not binary"
    if not 0.0 <= v <= 1.0:
        why = f"{metric} value {number_shown(v)} is outside [0, 1]"
        if not rule.is_known_metric(metric):  # a key read at the caller's choice (--metric): a scale of its own
            why += (f" (a metric taskspace has no rule for is read as a 0/1 outcome or a score in [0, 1]; {metric} "
                    f"is on another scale: choose another one)")
        return None, why, "outside [0, 1]"
    return v, None, None


def _version_number(version) -> float | None:
    try:
        return float(str(version).strip())
    except (TypeError, ValueError):
        return None


def choose_metric(row: dict, rule: TaskRule, override: str | None, version=None,
                  listed: list | None = None, keys_of_task: "TaskKeys | None" = None) -> tuple[str | None, str | None]:
    """(metric key, None) or (None, what is wrong) for one sample row (``row``: the sample's metric values;
    ``version``: the task's version in its results file; ``listed``: the metric names the sample says it has;
    ``keys_of_task``: the keys of the task's rows when they differ from row to row, :func:`task_keys`)."""
    if keys_of_task is not None and keys_of_task.problem:
        return None, keys_of_task.problem
    if override or rule.metric_keys:
        keys = (override,) if override else rule.metric_keys
        # a rule naming a key taskspace does not know is a mistake in the rules; a key the caller names (--metric) is
        # read at their choice as a 0/1 outcome or a score in [0, 1] (metric_value checks each value), so a task with
        # its own metric (truthfulqa_gen's bleu_acc, an MT task's comet_score) can be read. Before, --metric with such
        # a key was refused, its error saying to pass --metric.
        unknown = [m for m in keys if not rule.is_known_metric(m)] if not override else []
        if unknown:
            known = sorted(rule.binary_metrics | rule.graded_metrics | rule.pair_metrics)
            return None, (f"unknown metric {unknown[0]!r} for task {rule.task}: not a correctness metric taskspace knows "
                          f"({', '.join(known)}); fix the rule or pass {metric_hint(rule.task)}, KEY one of the "
                          f"sample's own")
        m = next((k for k in keys if k in row), None)
        if m is None:
            # (the sample's own keys when it has no metric taskspace knows: "it has: none" hid CALAMITA's cwa)
            have = [k for k in row if rule.is_known_metric(k)] or listed or [k for k in row if k not in NON_METRIC]
            want = " or ".join(repr(k) for k in keys)
            # (rows of one task carrying different keys: which have which, so that the key advised is not taken for
            # one that reads the whole task)
            differ = f"; its {keys_of_task.unit}s carry different keys: {keys_of_task.by_rows}" if keys_of_task else ""
            return None, (f"metric {want} (task {rule.task}, benchmark {rule.benchmark}) is missing from the sample "
                          f"(it has: {', '.join(map(str, have)) or 'none'}){differ}; this writer's task scores the "
                          f"benchmark another way: pass {metric_hint(rule.task)}, KEY one of these, to read it anyway")
        limit = rule.metric_max_version.get(m) if not override else None
        v = _version_number(version)
        if limit is not None and v is not None and v > float(limit):
            newer = [k for k in keys if k != m]
            note = f" ({rule.metric_note})" if rule.metric_note else ""
            return None, (f"{m} of task {rule.task} version {v:g} is not the scorer of {rule.benchmark}{note}: "
                          f"{m} is read only up to task version {float(limit):g}, and this sample has no "
                          f"{' or '.join(newer) or 'other key'}; the row is rejected so that one benchmark keeps one scorer")
        return m, None
    names = listed if listed else [k for k in row if k not in NON_METRIC]
    if keys_of_task is not None and keys_of_task.key is not None:
        # a task without a rule is read with one key, the first of the preference its rows have: before, each row
        # took its own first, so a row lacking acc was read with acc_norm, the benchmark recorded as acc
        m = keys_of_task.key
        if m in row and (m in names or not listed):
            return m, None
        have = _score_keys(row, listed)
        other = next((k for k in rule.metric_preference if k in have), have[0] if have else "KEY")
        unit = keys_of_task.unit
        return None, (f"metric {m!r} is missing from the sample (it has: {', '.join(map(str, have)) or 'none'}); task "
                      f"{rule.task} has no rule naming its metric, so its {unit}s are read with one key, the first of "
                      f"the default preference they have ({m}), and they carry different keys: {keys_of_task.by_rows}; "
                      f"pass {metric_hint(rule.task, other)} to read "
                      f"{f'every {unit} with {other} (each has it)' if other in keys_of_task.common else f'the {unit}s having {other}'}"
                      " instead, or add a rule for the task in rules.toml")
    for m in rule.metric_preference:
        if m in row and (m in names or not listed):
            return m, None
    # keys whose value is a list or an object (lm-eval's perplexity and BLEU/chrF/TER keys hold what their corpus-level
    # aggregation takes: (loglikelihood, length), (reference, prediction)) are no per-sample score: not advised
    shaped = [k for k in names if isinstance(row.get(k), (list, tuple, dict))]
    scalar = [k for k in names if k not in shaped]
    if shaped and not scalar:
        return None, (f"unknown metric: task {rule.task} has no per-sample score: each of its metrics "
                      f"({', '.join(map(str, shaped))}) holds a list or an object, what a corpus-level score (perplexity, "
                      f"BLEU, chrF, TER) is computed from over the whole task, not a score of the sample; such a task "
                      f"cannot be read per prompt: leave its file out of the source")
    which = ("KEY one of them whose values are" if not shaped else f"KEY {scalar[0]} if its values are"
             if len(scalar) == 1 else f"KEY one of {', '.join(map(str, scalar))} whose values are")
    lists = (f" ({', '.join(map(str, shaped))} {'holds' if len(shaped) == 1 else 'hold'} a list or an object, "
             f"no per-sample score)") if shaped else ""
    return None, (f"unknown metric: no correctness metric taskspace knows among {', '.join(map(str, scalar)) or 'no keys'}"
                  f"{lists} (task {rule.task}); pass {metric_hint(rule.task)}, {which} 0/1 outcomes or "
                  f"scores in [0, 1], or add a rule for the task in rules.toml")


def _score_keys(row: dict, listed: list | None) -> list:
    """The keys of a sample ``row`` that may be its score: metric keys (those ``listed`` when the sample lists them)
    whose value is no list or object (lm-eval's corpus-level inputs)."""
    names = listed if listed else [k for k in row if k not in NON_METRIC]
    return [k for k in names if k in row and not isinstance(row[k], (list, tuple, dict))]


@dataclass(frozen=True)
class TaskKeys:
    """The keys of one task's rows when they differ from row to row (:func:`task_keys`): ``by_rows`` which rows have
    which key; ``key``, the one key a task without a rule is read with; ``problem``, the error of every row of a task
    whose rows have no key taskspace knows; ``unit``, what a row is called (lm-eval's "line")."""

    by_rows: str
    common: tuple = ()
    key: str | None = None
    problem: str | None = None
    unit: str = "row"


def _lines_shown(lines: list[int], total: int, unit: str) -> str:
    if len(lines) == total:
        return f"every {unit}"
    shown = ", ".join(map(str, lines[:5]))
    return f"{noun(len(lines), unit)} {shown}" + (f" and {len(lines) - 5} more" if len(lines) > 5 else "")


def task_keys(rows, rule: TaskRule, override: str | None, unit: str = "row") -> TaskKeys | None:
    """What the readers pass :func:`choose_metric` for every row of one task: None when the task's rows (``rows``:
    (line, metric values, the metric names the sample lists or None) for each) all carry the same score keys, else
    which rows have which key and, for a task read by the default preference (no rule naming its metric, no
    ``--metric``), the one key it is read with (the first of the preference its rows have) or, when none has such a
    key, the task's problem, said once for its rows: no key taskspace knows and which rows have which. Before, each
    row was read with its own first key (acc here, acc_norm there, one benchmark scored two ways), or, with unknown
    keys, each row's error advised ``--metric TASK=KEY`` with its own key, which rejected the rows lacking it."""
    rows = list(rows)
    # (rows of one key layout, as a writer gives each row of a task, are the usual case: said at once, without a look
    # at each key; rows alike but for a value holding a list here and a number there are left to each row's check)
    if len({(tuple(row), tuple(listed) if listed else None) for _, row, listed in rows}) < 2:
        return None
    by_key: dict[str, list[int]] = {}
    sets = set()
    for line, row, listed in rows:
        keys = _score_keys(row, listed)
        sets.add(frozenset(keys))
        for k in keys:
            by_key.setdefault(k, []).append(line)
    if len(sets) < 2:
        return None
    total = len(rows)
    by_rows = ", ".join(f"{k} ({_lines_shown(lines, total, unit)})" for k, lines in by_key.items())
    if override or rule.metric_keys:
        return TaskKeys(by_rows, unit=unit)
    key = next((m for m in rule.metric_preference if m in by_key), None)
    common = [k for k, lines in by_key.items() if len(lines) == total]
    if key is not None:
        return TaskKeys(by_rows, tuple(common), key=key, unit=unit) if len(by_key[key]) < total else None
    advice = (f"pass {metric_hint(rule.task)}, KEY {' or '.join(map(str, common))} (in every {unit}) if its values are "
              "0/1 outcomes or scores in [0, 1]" if common else
              f"none in every {unit}, so no key reads the whole task: {metric_hint(rule.task)}, KEY one of them whose "
              f"values are 0/1 outcomes or scores in [0, 1], reads the {unit}s having KEY and rejects the others; have "
              f"the writer give every {unit} the task's key")
    return TaskKeys(by_rows, unit=unit, problem=(
        f"unknown metric: no correctness metric taskspace knows among the keys of task {rule.task}, and its {unit}s "
        f"carry different keys: {by_rows}; {advice}, or add a rule for the task in rules.toml"))


def metric_hint(task: str, key: str = "KEY") -> str:
    """How an error says to name the key read for ``task``: the per-task form, ``--metric TASK=KEY`` (``metric=
    'TASK=KEY'`` in Python), and while a pass reads a configured source, the ``sources add`` command that adds it to the
    source's other ``--metric`` entries. A plain ``--metric KEY`` reads every task of the source with KEY, so a task's
    error does not suggest it: before, it said "pass --metric" alone, and a KEY of one task's samples given so
    rejected the rows of every other task that lacks it (CALAMITA: comet_score for the translation tasks cost each
    gfg row)."""
    entry = f"{task}={key}"
    shown = arg("metric", shlex.quote(entry) if CLI.get() else entry, quote=False)
    source = SOURCE.get()
    value = entry
    if source is not None and getattr(source, "metric", None):
        kept = [e for e in metric_entries(source.metric) if not (isinstance(e, str) and e.partition("=")[0].strip() == task)]
        value = tuple(kept + [entry]) if kept else entry
    return shown + source_hint("metric", value)


# ----------------------------------------------------------------------------------- the metric option, per task


@dataclass(frozen=True)
class MetricOption:
    """The ``metric`` reading option (``--metric``) read: ``default``, the key read for every task not named (None: the
    task's rule), and ``per_task``, ``(TASK, KEY)`` pairs: TASK a task name as the source writes it (lm-eval's
    ``samples_<task>_<ts>.jsonl``, lighteval's ``details_<task>_<ts>.parquet``) or a shell-style pattern of them
    (``gfg_*``). A folder whose tasks need different keys (CALAMITA's translation tasks ``comet_score``, its gfg
    tasks ``bert_f1``) is read in one go; before, one ``--metric`` read every task, so the others' rows were rejected."""

    default: str | None = None
    per_task: tuple[tuple[str, str], ...] = ()

    def for_task(self, task: str) -> str | None:
        """The key read for ``task``: its exact name's, else the one pattern's matching it, else :attr:`default`."""
        for name, key in self.per_task:
            if name == task:
                return key
        hits = {key for name, key in self.per_task if _is_pattern(name) and fnmatch.fnmatchcase(task, name)}
        return hits.pop() if hits else self.default

    def check_tasks(self, tasks, where: str) -> None:
        """A ConfigError (exit 2, before anything is stored) when a TASK of :attr:`per_task` names no task in ``tasks``
        (the tasks of the source ``where``), or when two patterns give one task two keys; the message names the TASK
        and the tasks found."""
        from ..errors import ConfigError, arg

        tasks = sorted(set(tasks))
        for name, key in self.per_task:
            if not any(t == name or (_is_pattern(name) and fnmatch.fnmatchcase(t, name)) for t in tasks):
                shown = ", ".join(tasks[:30]) + (f", ... ({len(tasks)} in all)" if len(tasks) > 30 else "")
                whole = f"{name}={key}"
                # (a metric key holding "=", lighteval's pass@k:k=1&n=1, given plain is split at its first "=")
                as_key = (f"; if {whole!r} is a metric key (lighteval's parameterised names such as "
                          f"'pass@k:k=1&n=1' hold '='), give it as {arg('metric', every_task_entry(whole))} to read "
                          f"every task with it, or as TASK=KEY per task") if ":" in name or "=" in key else ""
                raise ConfigError(f"{arg('metric', whole)}: no task {name!r} in {where} (its tasks: "
                                  f"{shown or 'none'}); name one of these (a pattern such as 'gfg_*' names several), "
                                  f"or drop it{as_key}")
        for t in tasks:
            if any(name == t for name, _ in self.per_task):
                continue
            keys = {key: name for name, key in self.per_task if _is_pattern(name) and fnmatch.fnmatchcase(t, name)}
            if len(keys) > 1:
                both = " and ".join(f"{n}={k}" for k, n in keys.items())
                raise ConfigError(f"{arg('metric')} {both} both name task {t!r} of {where} with two keys; give it "
                                  f"its own ({arg('metric', f'{t}=KEY')}) or narrow the patterns")


def _is_pattern(name: str) -> bool:
    return any(c in name for c in "*?[")


def metric_entries(value) -> list[str]:
    """The entries of a ``metric`` option value as given: a string (``"acc_norm"``, ``"gfg_task_1_1=bert_f1"``) or a
    list of them (``--metric`` repeated, a sources.toml array)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def parse_metric(value) -> MetricOption | None:
    """The :class:`MetricOption` of a ``metric`` value (None for None), or a ConfigError (exit 2) naming the entry that
    is wrong: blank, ``=KEY`` or ``TASK=`` (blank halves), not a string, two KEYs for the tasks not named, one TASK
    given two keys."""
    from ..errors import ConfigError, arg

    if value is None:
        return None
    entries = metric_entries(value)
    if not entries:
        raise ConfigError(f"{arg('metric', value)}: empty; give KEY (every task) or TASK=KEY (one task), or leave "
                          f"{arg('metric')} out")
    defaults: list[str] = []
    per_task: dict[str, str] = {}
    for e in entries:
        if not isinstance(e, str) or not e.strip():
            raise ConfigError(f"{arg('metric', e)}: blank; give a name or leave {arg('metric')} out")
        task, eq, key = (s.strip() for s in e.partition("="))
        if not eq:
            if task not in defaults:
                defaults.append(task)
            continue
        if not task or not key:
            raise ConfigError(f"{arg('metric', e)}: {'the task' if not task else 'the key'} is blank; write TASK=KEY "
                              f"(a task of the source and the per-sample key read for it), or KEY for every task")
        if per_task.get(task, key) != key:
            raise ConfigError(f"{arg('metric')} names task {task!r} twice with two keys ({per_task[task]!r}, {key!r}); "
                              "give it one")
        per_task[task] = key
    if len(defaults) > 1:
        from ..errors import CLI

        flag = "--metric" if CLI.get() else "metric="
        raise ConfigError(f"{flag} was given {len(defaults)} values ({', '.join(map(repr, defaults))}) for every task: "
                          f"it takes one value KEY for the tasks not named, and TASK=KEY for a task of its own")
    return MetricOption(defaults[0] if defaults else None, tuple(per_task.items()))


def metric_value_text(value):
    """A ``metric`` value in one canonical form, for what is stored and compared (a source's revision, sources.toml): a
    string when it is one entry (``"acc_norm"``, as before per-task keys: a stored revision stays), else a tuple with
    the KEY for the other tasks first, then ``TASK=KEY`` by task. A value :func:`parse_metric` refuses stays as given."""
    if value is None or isinstance(value, str):
        return value
    try:
        opt = parse_metric(value)
    except Exception:  # noqa: BLE001 - checked (and said) where the options are checked
        return value
    out = ([opt.default] if opt.default else []) + [f"{t}={k}" for t, k in sorted(opt.per_task)]
    return out[0] if len(out) == 1 else tuple(out)


def scored_row(row: dict, rule: TaskRule, metric: str | None, line: int, failed: dict, version=None,
               listed=None, fit: "KeyFit | None" = None, keys_of_task: TaskKeys | None = None) -> tuple[str, float] | None:
    """(the metric chosen, its score) of one sample ``row`` (:func:`choose_metric`, :func:`checked_value`), or None with
    its problem added to ``failed`` (line ``line``; :func:`report_metric_failures`' rows, by kind of problem): the one
    step every reader takes per sample. ``fit``: the keys of the source's tasks that every row has (:class:`KeyFit`)."""
    if fit is not None:
        fit.add(row, rule)
    m, why = choose_metric(row, rule, metric, version, listed, keys_of_task)
    if m is None:
        failed.setdefault(why, []).append((line, why, why.split(":")[0]))
        return None
    score, why, kind = checked_value(row[m], m, rule)
    if score is None:
        failed.setdefault(f"{m} value: {kind}", []).append((line, why, f"bad {m} values"))
        return None
    return m, score


def report_metric_failures(errors, file: str, task: str, failed: dict[str, list[tuple[int, str, str]]],
                           reached: int) -> None:
    """Report the rows of one task's ``file`` whose metric could not be chosen (:func:`choose_metric`) or whose value
    could not be read (:func:`checked_value`). ``failed``: each kind of problem and its rows (line, message, the
    problem ErrorLog counts them under); ``reached``: the rows that came to the choice of the metric. When one kind
    covers every row that came to it, the problem is the task's (its rule, the metric option, its keys, the scale or
    shape of its metric), so it is one line, ``N rows of task T rejected: ...`` with the first row's message (its value
    the example), which :func:`~indexer.sources.common.count_rejected` counts as N; otherwise each row its own, as any
    row's problem (``errors``: an :class:`~indexer.sources.common.ErrorLog`). Before, an "unknown metric" of a task, or
    an f1 value that is a (gold, pred) pair in every row, was said once per row: 20 lines alike, then a count."""
    if reached > 1 and len(failed) == 1 and len(rows := next(iter(failed.values()))) == reached:
        line, why, _ = rows[0]
        if any(w != why for _, w, _ in rows):  # (the values differ: say which one is shown)
            why += f" (line {line}'s value; the other rows' values are wrong the same way)"
        errors.add(file, None, f"{reached} rows of task {task} rejected: {why}")
        return
    for rows in failed.values():
        for line, why, problem in rows:
            errors.add(file, line, why, problem)


class KeyFit:
    """The keys that every row of each task of one source (a model's folder) has with a value read as a score
    (:func:`checked_value`): a key every task has so is one ``--metric KEY`` reads the whole source with, which
    :meth:`advise` adds to the errors that advise ``--metric TASK=KEY`` for several of its tasks."""

    def __init__(self) -> None:
        self.by_task: dict[str, set[str]] = {}

    def add(self, row: dict, rule: TaskRule) -> None:
        """Note one sample ``row`` (its metric values) of the task of ``rule``."""
        have = self.by_task.get(rule.task)
        if have is None:
            self.by_task[rule.task] = {k for k in row if k not in NON_METRIC and _reads(row[k], k, rule)}
        elif have and not all(k in row and _reads(row[k], k, rule) for k in have):
            have.intersection_update(k for k in have if k in row and _reads(row[k], k, rule))

    def common(self) -> str | None:
        """The key (the first in sorted order) every task noted has in every row, or None."""
        keys = set.intersection(*self.by_task.values()) if self.by_task else set()
        return min(keys) if keys else None

    def advise(self, errors) -> None:
        """When the errors of ``errors`` (an :class:`~indexer.sources.common.ErrorLog`) advise ``--metric TASK=KEY``
        (:func:`metric_hint`) for two tasks or more and one key fits every task (:meth:`common`), each such advice
        also says the plain ``--metric KEY``. Before, a folder whose tasks are all scored by one key taskspace has no
        rule for (an lm-eval task group's ``foo_score``) had an error per task each saying to pass ``--metric
        TASK=KEY``: a command line of as many entries where one plain ``--metric KEY`` reads them all."""
        key = self.common()
        if key is None:
            return
        hints = {task: metric_hint(task) for task in self.by_task}
        advised = {t for t, h in hints.items() if any(h in e.message for e in errors.errors)}
        if len(advised) < 2:
            return
        plain = plain_metric_hint(key)
        from dataclasses import replace

        for i, e in enumerate(errors.errors):
            for t in advised:
                if hints[t] in e.message:
                    errors.errors[i] = replace(e, message=e.message.replace(
                        hints[t], f"{hints[t]} (or {plain} for every task: each task of this folder has {key}, a 0/1 "
                        "outcome or a score in [0, 1], in every row)", 1))
                    break


def _reads(v, metric: str, rule: TaskRule) -> bool:
    """Whether :func:`checked_value` reads ``v`` as a score (a 0/1 or [0, 1] number at once: once per key and row)."""
    if type(v) is float or type(v) is int:
        return v in (0, 1) or (0.0 <= v <= 1.0 and metric not in rule.binary_metrics)
    return checked_value(v, metric, rule)[0] is not None


def every_task_entry(key: str) -> str:
    """The ``metric`` entry that reads every task with ``key``: ``KEY``, or ``*=KEY`` when the key holds ``=``
    (lighteval's parameterised metric names, ``pass@k:k=1&n=1``), which a plain entry would split as TASK=KEY."""
    return f"*={key}" if "=" in key else key


def plain_metric_hint(key: str) -> str:
    """How an advice names the plain ``--metric KEY`` (every task of the source read with ``key``): the option
    (``metric='KEY'`` in Python) and, while a pass reads a configured source, the ``sources add`` command setting it in place of
    the source's ``--metric`` entries (a ``TASK=KEY`` kept would still read its task with its own key). A key holding
    ``=`` is given as ``*=KEY`` (:func:`every_task_entry`); before, the advice was ``--metric 'pass@k:k=1&n=1'``, which
    is read as task ``pass@k:k`` and refused."""
    entry = every_task_entry(key)
    return arg("metric", shlex.quote(entry) if CLI.get() else entry, quote=False) + source_hint("metric", entry)
