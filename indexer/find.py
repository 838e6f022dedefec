"""Find models for a task: the library behind ``taskspace search`` and ``POST /v1/find``.

One entry point, :func:`find_models`, for the four ways to ask: one prompt, several example prompts (their mean
lifted row), a benchmark name (its vector), or a raw query vector in the space's index form. It returns a
:class:`FindResult` whose :meth:`~FindResult.to_dict` is the exact JSON object ``taskspace search --json`` prints::

    {"query": {"kind": "prompt" | "prompts" | "benchmark" | "vector", "prompts": n, "options_filled": bool,
               "truncated": [i, ...], "max_tokens": n | null,
               "measured_near": {"results": n, "of": n, "any_model": bool} | null,
               "benchmark": ..., "k": ..., "offset": ..., "rank": ..., "prefer_smaller": ..., "filters": {...},
               "models": [...]},
     "space": {"name", "id", "encoder", "method", "dim", "calibrated", "signal"},
     "results": [{"model", "hub_id", "api_only", "aliases", "score", "rank_score", "probability",
                  "interval": [lo, hi], "variance",
                  "coverage": {"near", "measured_near", "benchmarks"},
                  "evidence": {"prompts": [{"text", "benchmark", "outcome", "similarity"}],
                               "benchmarks": [{"name", "accuracy", "n"}]},
                  "metadata": {"license", "params", "pipeline_tag", "gated", "open_weights", "base_model",
                               "params_from"}}],
     "excluded": {"<filter>": count}, "missing_metadata": {"<filter>": count}}

**Ranking.** ``rank="probability"`` (default): the calibrated probability (:mod:`indexer.posterior`), an increasing
map of the raw score, so Qdrant's own order. ``rank="lcb"``: the lower end of the probability's interval, a
re-rank of a candidate set grown until exact (:func:`indexer.posterior.lcb_candidates_exact`).
``prefer_smaller=ALPHA``: rank by ``score - ALPHA * log10(parameters)`` with the score Qdrant ranks by: for the
default method (a level/deviation space, its query folded) the logit the calibration maps to the probability,
``p = sigmoid(bend(score + c))`` with ``c`` constant per query (the map's bend keeps the order; the probability's own
logit can differ from the score by a few tenths), so ALPHA = 0.1 trades a tenfold size for 0.1 of logit, about 2.5 points of probability near 0.5; for the other
methods the raw score (in [-1, 1] units of the outcome scale, ALPHA = 0.05 about 2.5 points near 0.5). Qdrant computes it: a formula query (``$score - ALPHA * log10(num_parameters)``) over a
prefetch of every model that passes the filters, so the order is exact; a model without a parameter count is
charged as if it had :data:`UNKNOWN_PARAMS` (and counted in ``missing_metadata["prefer_smaller"]``). Example::

    find_models("Write a SQL query that ...", prefer_smaller=0.05)
    taskspace search "Write a SQL query that ..." --prefer-smaller 0.05

**Filters** (:class:`Filters`) are Qdrant payload filters on every backend (never a Python post-filter);
``excluded`` counts, per filter, the models it alone removes from the candidates, and ``missing_metadata`` how
many of those lack the field it needs (no license, no parameter count, ...: a filter on that field drops them,
the answer says how many).

**Compare mode** (``models=[...]``): rank exactly these models (names, Hub ids or any alias the store knows);
an unknown name is a :class:`~indexer.errors.NotFoundError` suggesting close names; ``query.unranked`` lists the
given models missing from the answer (removed by a filter, or without a vector in the space).

**Long prompts.** The encoder embeds a text's first ``max_seq_length`` tokens only (all-MiniLM-L6-v2: 256 word
pieces, about 200 English words), so text after the cut does not change the answer: ``query.truncated`` lists the
(0-based) prompts that were cut (on the default method: whose question or answer options were), ``query.max_tokens``
the limit (null when no prompt was long enough to count).

**Coverage and evidence.** The :data:`NEAR_PROMPTS` indexed prompts nearest to the query (by cosine of the question
embedding, a search of the prompts collection) are the query's neighbourhood (a benchmark query's: that
benchmark's own prompts nearest to its vector); a model's ``coverage.near`` is how
many of those with similarity >= :data:`NEAR_SIMILARITY` (a benchmark query's: all of them) it was measured on, and
on which benchmarks;
``coverage.measured_near`` whether there is one. An index pulled from a published dataset holds no per-prompt
outcomes, but the records tell which indexed prompts each coverage pattern's models were observed on
(:func:`indexer.query.pattern_observed`): its coverage is computed from those, the same as the publisher's (and so
is the coverage share of a coverage-aware map, :func:`indexer.query.observed_shares`). Those three are null
(unknown) when the index cannot tell: it holds fewer of the model's per-prompt outcomes than the model's vector was
fitted on and no pattern prompt set for it (records published before they carried one) and none of those it holds
is near, or it has no prompts collection (a pulled space published without prompt rows; a local space's lost prompts
collection is an IndexMissingError); "no" is said only when some indexed prompt is near the query and SQL holds
every prompt the model was measured on (its outcomes, or its pattern's prompt set), or when no indexed prompt at
all is near. ``query.measured_near`` says it once for the answer (:func:`_measured_near`): ``results`` of the ``of``
results were measured near, and ``any_model`` false where no model in the index was (no indexed prompt is near the
query: the ranking rests on the models' general ability alone); null where some result's coverage is unknown.
``evidence.prompts`` are the ``evidence`` nearest of them it was measured on, with its outcome on each (repeats
across sources averaged); a model measured on fewer of them (none: measured elsewhere) shows its nearest measured
prompts beyond the neighbourhood (:func:`_own_nearest`; on a benchmark query only a model not measured on it), so
they are always its ``evidence`` nearest measured prompts; ``evidence.benchmarks`` its observed accuracy and n on
the benchmarks nearest to the query it was measured on (those of the neighbourhood, nearest first, a benchmark
query's own first, then those of its evidence prompts), not its overall accuracy; where
the index holds none of the model's per-prompt outcomes (a pulled index) they are the accuracies its published
record carries (the vector's payload, ``accuracy_by_benchmark``) with its ``n`` (``n_by_benchmark``; null from
records that carry none).
"""

from __future__ import annotations

import difflib
import inspect
import logging
import math
import re
import time
import unicodedata
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

from .errors import DimensionError, InputError, NotFoundError, StoreError, counted, noun
from .records import INVISIBLE_ONLY, invisible_only, is_blank, name_problem, strip_invisible, text_problem
from .sources.common import example_value, values_listed
from .sync import gated_known, license_text

log = logging.getLogger(__name__)

#: how many indexed prompts nearest to the query make its neighbourhood (coverage and evidence)
NEAR_PROMPTS = 50
#: the cosine a neighbour needs to count as "near". MiniLM cosines are low even for related questions: on the
#: bundled sample a derivative question's nearest indexed prompt (an MMLU-Pro integral) is at 0.36, "What is the
#: capital of France?"'s nearest (an MMLU-Pro history question) at 0.29
NEAR_SIMILARITY = 0.35
#: the parameter count a model without one is charged by ``prefer_smaller`` (about a frontier model's size)
UNKNOWN_PARAMS = 1e11
#: the largest ``prefer_smaller``: at 100 (logit units per tenfold size) the size alone decides the order already
MAX_PREFER_SMALLER = 100.0
RANKS = ("probability", "lcb")
KINDS = ("prompt", "prompts", "benchmark", "vector")

_UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
_PARAMS = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMBGT]?)\s*$", re.I)


def parse_params(value, *, what: str = "parameters") -> float:
    """A parameter count in human units: ``"8B"`` -> 8e9, ``"1.5B"``, ``"770M"``, ``"350k"``, ``"1T"``, ``7e9``,
    ``"7000000000"``. :class:`~indexer.errors.InputError` naming ``what`` otherwise."""
    if isinstance(value, bool):
        raise InputError(f"{value!r} is not a parameter count; use a number with K, M, B or T, e.g. 8B or 770M", item=what)
    if isinstance(value, (int, float, np.integer, np.floating)):
        n = _float_or_inf(value)  # an int past float range (a JSON 10**400) is infinite, not an OverflowError
    else:
        m = _PARAMS.match(str(value)) if isinstance(value, str) else None
        if m is None:
            raise InputError(f"{value!r} is not a parameter count; use a number with K, M, B or T, e.g. 8B or 770M",
                             item=what)
        n = float(m.group(1)) * _UNITS[m.group(2).upper()]
    if math.isinf(n) and n > 0:
        # a number past a double's range (1e400, 1e300T): before, "not a positive parameter count", of a positive one
        raise InputError(f"{_short(value)} is too large: past the range of a number (a double); give a parameter "
                         "count such as 8B or 770M", item=what)
    if not math.isfinite(n) or n <= 0:
        raise InputError(f"{_short(value)} is not a positive parameter count (e.g. 8B or 770M)", item=what)
    return n


def _float_or_inf(value) -> float:
    """``float(value)``; an int past float range (Python's ints have no bound: a JSON ``1`` and 400 zeros) is
    +-inf, which the callers refuse as not finite, rather than the OverflowError ``float`` raises (before: a
    traceback, an HTTP 500)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _short(value, width: int = 60) -> str:
    """``repr(value)``, its middle cut when longer than ``width`` (a number of 400 digits, said in an error)."""
    text = repr(value)
    return text if len(text) <= width else f"{text[:width // 2]}...{text[-10:]} ({len(text)} characters)"


def format_params(n) -> str | None:
    """A parameter count to three significant digits, as the Hub shows it, and at least one decimal:
    ``8030261248`` -> ``"8.03B"``, ``70553706496`` -> ``"70.6B"``, ``8e9`` -> ``"8.0B"``, ``124439808`` ->
    ``"124.4M"``; None stays None. (Before, one decimal: Meta-Llama-3-8B's 8.03B read "8.0B", which
    ``--max-params 8B`` excludes.) Halfway is rounded up, as the search page rounds: ``12250000000`` -> ``"12.3B"``.
    A count that rounds up to 1000 of its unit is written in the next one: ``999950000`` -> ``"1.0B"`` (before,
    ``"1000.0M"``; the page said the same)."""
    if n is None:
        return None
    n = float(n)
    units = (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3))
    for i, (unit, size) in enumerate(units):
        if n >= size:
            v = n / size
            digits = max(1, 2 - int(math.floor(math.log10(v))))
            # halfway rounded up, as the search page's toFixed rounds the same float (before, Python's half-to-even:
            # 12.25B read "12.2B" here and "12.3B" on the page)
            text = str(Decimal(v).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))
            if i > 0 and Decimal(text) >= 1000:  # 999.95M rounds to 1000.0M: one of the next unit
                text, unit = "1.0", units[i - 1][0]
            while text.endswith("0") and len(text.split(".")[1]) > 1:
                text = text[:-1]
            return f"{text}{unit}"
    return f"{n:.0f}"


#: other names of a filter (the query parameters of GET /v1/models and the search page's URL): answered with ours
_FILTER_SYNONYMS = {"measured_on": "benchmark", "license": "licenses", "measured": "benchmark",
                    "min_prompts": "min_evidence", "gated": "exclude_gated", "open_weights": "open_only"}


def licence_names(value: str) -> list[str]:
    """The licenses a license filter's value names: split at its commas (a model card naming several is stored and
    shown joined, ``apache-2.0,mit``), each stripped and in lower case, as the Hub's license ids are; none for a value
    of commas, spaces and invisible characters alone (a zero-width space: :func:`indexer.records.is_blank`, as a prompt
    of them is refused), which :class:`Filters`, the CLI's ``--license``, ``GET /v1/models`` and ``/v1/find`` each
    refuse (before, ``\u200b`` was a filter matching nothing). Invisible characters at a name's edges go as its spaces do
    (:func:`indexer.records.strip_invisible`: ``"\u200bmit"`` is ``mit``; before, kept, a filter matching nothing),
    for the CLI's ``--license`` and the HTTP API alike."""
    return [strip_invisible(p).lower() for p in value.split(",") if not is_blank(p)]


def no_licence(value: str, said: str | None = None) -> str:
    """What a license filter's value naming no license (:func:`licence_names` gives none: empty, or commas, spaces and
    invisible characters alone) is told, after the name of the value (``licenses[1]``, ``--license``'s ``' , '``):
    ``said``, the value as its reader wrote it (Python's ``repr`` to the library, JSON to an HTTP client; the CLI
    names it before), said in the brackets. One wording for the library, ``POST /v1/find``, ``GET /v1/models`` and
    the CLI; before, ``POST /v1/find`` said "licenses[1] must be a license name such as mit (not blank, not commas
    alone), not \" \"" where ``indexer.find_models`` said "licenses[1] must be a non-empty license name, not ' '" for a
    blank one and "licenses[1] names no license (...)" for commas."""
    why = "empty" if not value else "commas, spaces or invisible characters alone"
    return f"names no license ({why}{f': {said}' if said else ''}); give a license name such as mit"


def hidden_in_licence(value: str) -> str | None:
    """What a license filter's value with an invisible character inside a name (a zero-width space, a soft hyphen:
    pasted from a page; those at its edges are dropped, :func:`licence_names`) is told, after the value, or None: no
    license name holds one, so such a filter matched no model and answered none without a word (before). The name
    without it is said, as Python writes it. :class:`Filters` (the library, the HTTP API) and the CLI's ``--license``
    alike."""
    names = licence_names(value)
    hidden = next((c for n in names for c in n if unicodedata.category(c) == "Cf"), None)
    if hidden is None:
        return None
    seen = ",".join("".join(c for c in n if unicodedata.category(c) != "Cf") for n in names)
    return (f"holds an invisible character inside a name (U+{ord(hidden):04X}, "
            f"{unicodedata.name(hidden, 'a format character').lower()}), which no license name has: give the name "
            f"without it ({seen[:40]!r})")


@dataclass
class Filters:
    """What the candidates must satisfy (every field optional; all must hold). Each becomes a Qdrant payload
    condition (:meth:`conditions`).

    ``licenses``: any of these licenses; ``min_params`` / ``max_params``: parameter range (numbers, or strings in
    human units through :func:`parse_params`); ``pipeline_tag``; ``exclude_gated``: drop gated repos;
    ``open_only``: only models with a Hub repo (open weights; drops API-only models and names not mapped to a
    repo); ``min_evidence``: measured on at least this many prompts; ``benchmark``: measured on this benchmark."""

    licenses: list[str] | None = None
    min_params: float | None = None
    max_params: float | None = None
    pipeline_tag: str | None = None
    exclude_gated: bool = False
    open_only: bool = False
    min_evidence: int | None = None
    benchmark: str | None = None

    def __post_init__(self):
        if isinstance(self.licenses, str):
            self.licenses = [self.licenses]
        if self.licenses is not None:
            # a license or any collection of them (list, tuple, set, numpy array); before, `licenses=5` was a
            # TypeError traceback ('int' object is not iterable)
            bad = f"licenses must be a license name or a list of them, not {type(self.licenses).__name__}"
            if isinstance(self.licenses, (bytes, dict)):
                raise InputError(bad, item="filters.licenses")
            try:
                self.licenses = list(self.licenses)
            except TypeError:
                raise InputError(bad, item="filters.licenses") from None
            if not self.licenses:
                # an allow-list of none: before, taken for no filter (every license) without a word, the opposite of
                # what an empty allow-list says
                raise InputError("licenses is an empty list, which allows no license: leave licenses out for any "
                                 "license, or name one or more", item="filters.licenses")
            # each bad entry named by its index and said with its value (before: "a license must be a non-empty
            # string", naming neither which of the list nor what it held)
            for i, x in enumerate(self.licenses):
                if not isinstance(x, str):
                    raise InputError(f"licenses[{i}] must be a license name (a string), not {x!r}",
                                     item=f"filters.licenses[{i}]")
                if x.strip() and name_problem(x):
                    raise InputError(f"licenses[{i}] {x[:40]!r} {name_problem(x)}",
                                     item=f"filters.licenses[{i}]")
                if not licence_names(x):
                    raise InputError(f"licenses[{i}] {no_licence(x, repr(x[:40]))}", item=f"filters.licenses[{i}]")
                if hidden := hidden_in_licence(x):
                    raise InputError(f"licenses[{i}] {x[:40]!r} {hidden}", item=f"filters.licenses[{i}]")
            # a model card naming several licenses is stored (and shown) as "apache-2.0,mit", its point holding each
            # (indexer.sync.license_payload): no point holds a text with a comma, so a value given as the answers show
            # it ("apache-2.0,mit", "mit, apache-2.0") is the licenses it names (before: it matched nothing)
            # and in lower case, as the Hub's license ids are and taskspace stores a card's (indexer.hub): `--license
            # MIT` is `mit` (before, a filter in another case than the stored text matched nothing)
            parts = [licence_names(x) for x in self.licenses]
            self.licenses = list(dict.fromkeys(p for ps in parts for p in ps)) or None
        for name in ("min_params", "max_params"):
            v = getattr(self, name)
            if v is not None:
                setattr(self, name, parse_params(v, what=f"filters.{name}"))
        if self.min_params is not None and self.max_params is not None and self.min_params > self.max_params:
            raise InputError(f"min_params {format_params(self.min_params)} is above max_params "
                             f"{format_params(self.max_params)}: no model can be in that range; lower min_params or "
                             "raise max_params", item="filters.min_params")
        if self.min_evidence is not None:
            if isinstance(self.min_evidence, bool) or not isinstance(self.min_evidence, (int, np.integer)) or self.min_evidence < 0:
                raise InputError("min_evidence must be a non-negative integer, not {value}", item="filters.min_evidence",
                                 value=self.min_evidence)
            self.min_evidence = int(self.min_evidence)
        for name in ("exclude_gated", "open_only"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                # Python's words to a Python caller (an HTTP body is said in JSON's, "true or false": serve)
                raise InputError(f"{name} must be True or False, not {getattr(self, name)!r}", item=f"filters.{name}")
            # numpy's bool as the bool it holds: before, to_dict() (so find_models) failed with "The truth value of
            # an empty array is ambiguous" and the answer's filters could not be written as JSON
            setattr(self, name, bool(getattr(self, name)))
        if self.benchmark is not None:  # the check (and the words) of a benchmark query's name
            check_benchmark_name(self.benchmark, item="filters.benchmark")
        if (tag := self.pipeline_tag) is not None:  # the same checks, in a pipeline tag's words
            if not isinstance(tag, str):  # the type given, as licenses says it (before, "must be a non-empty string"
                # for 5 as for "")
                raise InputError(f"pipeline_tag must be a pipeline tag (a string) such as text-generation, not "
                                 f"{type(tag).__name__}", item="filters.pipeline_tag")
            if not tag.strip():
                raise InputError("pipeline_tag must be a non-empty pipeline tag such as text-generation",
                                 item="filters.pipeline_tag")
            if why := invisible_only("pipeline_tag", tag):  # "\u200b": a filter matching nothing, though a prompt of
                raise InputError(why, item="filters.pipeline_tag")  # it is refused
            if bad := name_problem(tag):
                raise InputError(f"pipeline_tag {tag[:40]!r} {bad}", item="filters.pipeline_tag")
        for name in ("pipeline_tag", "benchmark"):
            if (v := getattr(self, name)) is not None:  # "\u200btext-generation", "beta ": the value it names, as a
                setattr(self, name, strip_invisible(v))  # license is (licence_names); before, kept as given

    @classmethod
    def from_dict(cls, data: dict | None) -> "Filters":
        """From a JSON object (the HTTP body's ``filters``); an unknown key is an InputError naming it."""
        if data is None:
            return cls()
        if isinstance(data, Filters):
            return data
        if not isinstance(data, dict):
            raise InputError(f"filters must be an object, not {type(data).__name__}", item="filters")
        cls._check_names(data)
        return cls(**data)

    def __new__(cls, *args, **kwargs):
        # before the generated __init__: an unknown keyword (`Filters(license="mit")`) is the error from_dict gives,
        # with the close field; before, Python's own TypeError ("unexpected keyword argument 'license'")
        cls._check_names(kwargs)
        return super().__new__(cls)

    @classmethod
    def _check_names(cls, data) -> None:
        """An InputError naming the keys of ``data`` that are no filter, and the close one meant (None if all are)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            # the names GET /v1/models and the page's URL use for two of them (measured_on, license), then close ones
            close = [_FILTER_SYNONYMS.get(u.strip().lower()) or next(iter(difflib.get_close_matches(
                u.strip().lower(), known, n=1, cutoff=0.6)), None) for u in unknown]
            close = list(dict.fromkeys(c for c in close if c))
            hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
            # one unknown key is the item itself (as a bad value of a known one is: filters.licenses)
            said = f"unknown {noun(len(unknown), 'filter')} [{values_listed(unknown)}]{hint}; known: {', '.join(sorted(known))}"
            err = InputError(said, item=f"filters.{unknown[0]}" if len(unknown) == 1 else "filters")
            if len(err.item) > len(example_value(err.item)):  # a long name: said once, cut (not whole, before it)
                err.args = (said,)
            raise err

    def to_dict(self) -> dict:
        """The active filters (unset ones left out), JSON-ready."""
        return {k: v for k, v in asdict(self).items() if v not in (None, False, [])}

    def conditions(self) -> dict[str, dict]:
        """Filter name -> its Qdrant payload filter (the dict grammar of :mod:`indexer.store.vectors`)."""
        out: dict[str, dict] = {}
        if self.licenses:
            out["licenses"] = {"license": list(self.licenses)}
        if self.min_params is not None:
            out["min_params"] = {"num_parameters": {"gte": int(math.ceil(self.min_params))}}
        if self.max_params is not None:
            out["max_params"] = {"num_parameters": {"lte": int(math.floor(self.max_params))}}
        if self.pipeline_tag:
            out["pipeline_tag"] = {"pipeline_tag": self.pipeline_tag}
        if self.exclude_gated:
            out["exclude_gated"] = {"gated": False}
        if self.open_only:
            out["open_only"] = {"kind": "hub"}
        if self.min_evidence:
            out["min_evidence"] = {"n_prompts": {"gte": self.min_evidence}}
        if self.benchmark:
            out["benchmark"] = {"benchmarks": {"all": [self.benchmark]}}
        return out


#: filter -> the payload condition matching the models that lack the metadata it needs
_MISSING = {"licenses": {"license": {"missing": True}}, "min_params": {"num_parameters": {"missing": True}},
            "max_params": {"num_parameters": {"missing": True}}, "pipeline_tag": {"pipeline_tag": {"missing": True}},
            "open_only": {"kind": "name"}, "prefer_smaller": {"num_parameters": {"missing": True}}}


def _merge(*parts: dict) -> dict:
    """Several filter dicts, all to hold (a field in two of them: both conditions, via ``all``/ranges merged)."""
    out: dict = {}
    for part in parts:
        for k, v in part.items():
            if k not in out:
                out[k] = v
            elif isinstance(out[k], dict) and isinstance(v, dict) and not set(out[k]) & set(v):
                out[k] = {**out[k], **v}
            else:  # the same field twice: keep the stricter by nesting is not expressible; both must hold
                raise InputError(f"two conditions on {k!r} cannot be combined", item="filters")
    return out


# help(Filters) and inspect.signature (Jupyter's Shift-Tab) show the generated __init__'s fields, not __new__'s
# (*args, **kwargs), which the unknown keyword check above needs
Filters.__signature__ = inspect.signature(Filters.__init__).replace(
    parameters=list(inspect.signature(Filters.__init__).parameters.values())[1:])


@dataclass
class Coverage:
    """Whether the model was measured near the query (see the module docstring). ``None`` in all three fields when the
    index cannot tell: it holds fewer of the model's per-prompt outcomes than its vector was fitted on (a pulled index
    holds none) and no indexed prompt it was measured on is near, or there is no prompts collection to find the
    neighbourhood in. ``False`` is said only when it is known."""

    near: int | None = 0
    measured_near: bool | None = False
    benchmarks: list[str] | None = field(default_factory=list)


@dataclass
class Evidence:
    """What a model's result rests on near the query (see the module docstring): ``prompts``, its nearest measured
    prompts (``text``, ``benchmark``, ``outcome``, ``similarity``), and ``benchmarks``, its observed accuracy on the
    benchmarks nearest to the query (``name``, ``accuracy``, ``n``; ``n`` None from a record that carries none)."""

    prompts: list[dict] = field(default_factory=list)
    benchmarks: list[dict] = field(default_factory=list)


@dataclass
class ModelResult:
    """One ranked model (see the module docstring for the JSON form, :meth:`to_dict`: there ``low`` and ``high`` are
    ``interval``, ``[low, high]``, and ``payload``, the raw index payload, is left out)."""

    model: str
    hub_id: str | None
    api_only: bool
    aliases: list[str]
    score: float
    rank_score: float
    probability: float
    low: float
    high: float
    variance: float
    coverage: Coverage
    evidence: Evidence
    metadata: dict
    payload: dict = field(default_factory=dict, repr=False)
    #: the model's results in SQL changed since its vector was solved (:func:`indexer.query.changed_since_solved`):
    #: its score is from before them, its coverage and evidence from its results on the benchmarks the vector was
    #: fitted on (:data:`RESULTS_CHANGED` says so)
    results_changed: bool = False

    def __eq__(self, other):
        """Field by field, an unknown number (NaN: ``low``/``high`` without a posterior) equal to an unknown one, as
        :meth:`to_dict` says both as null: before, a result without an interval compared unequal to itself."""
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
                   for a, b in ((getattr(self, f.name), getattr(other, f.name)) for f in fields(self)))

    def to_dict(self) -> dict:
        """The JSON-ready form, one item of ``taskspace search --json``'s ``results``: ``low``/``high`` as
        ``interval`` (null where unknown), numbers rounded to 6 digits, ``payload`` left out."""
        return {"model": self.model, "hub_id": self.hub_id, "api_only": self.api_only, "aliases": list(self.aliases),
                "score": _num(self.score), "rank_score": _num(self.rank_score), "probability": _num(self.probability),
                "interval": _interval(self.low, self.high), "variance": _num(self.variance),
                "coverage": asdict(self.coverage), "evidence": asdict(self.evidence), "metadata": dict(self.metadata),
                "results_changed": bool(self.results_changed)}


#: what an answer says of a result whose ``results_changed`` is true (the CLI's and the search page's note)
RESULTS_CHANGED = ("results changed since this model was indexed; its score is from before them "
                   "(the next `taskspace index` pass includes them)")


def _interval(low, high) -> list | None:
    """``[low, high]``, or None where either end is unknown (no posterior, no calibrated signal)."""
    lo, hi = _num(low), _num(high)
    return None if lo is None or hi is None else [lo, hi]


def _num(x, digits: int = 6):
    return None if x is None or not np.isfinite(x) else round(float(x), digits)


@dataclass
class FindResult:
    """The answer of :func:`find_models`: ``query`` (as understood), ``space``, ``results`` (best first),
    ``excluded`` / ``missing_metadata`` counts per filter, and ``timings`` (seconds: ``encode``, ``search``,
    ``evidence``, ``total``; not part of :meth:`to_dict`, nor of ``==``: two answers to one query compare equal).
    ``len()``, iteration and ``result[i]`` are its ``results``; :meth:`to_dict` is the JSON object ``taskspace search
    --json`` prints (the module docstring)."""

    query: dict
    space: dict
    results: list[ModelResult]
    excluded: dict
    missing_metadata: dict
    timings: dict = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict:
        return {"query": dict(self.query), "space": dict(self.space), "results": [r.to_dict() for r in self.results],
                "excluded": dict(self.excluded), "missing_metadata": dict(self.missing_metadata)}

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self):
        return iter(self.results)

    def __getitem__(self, i):
        """``result[0]``, ``result[:3]``: the ranked results, as ``len`` and iteration already treat it (before,
        ``find_models(...)[0]`` was a TypeError: not subscriptable)."""
        return self.results[i]


def close_matches(word: str, known: list[str], n: int = 5, cutoff: float = 0.6) -> list[str]:
    """``difflib.get_close_matches(word, known, n, cutoff)``, the same list, without difflib's work on every name of a
    long list: its ratio is at most its quick_ratio, 2 x (the characters the two share, counted with repeats) / (their
    lengths' sum), which is counted here for every name at once (numpy) over the characters of ``word``; only the names
    it does not rule out go to difflib, whose answer (the best ``n`` by ratio, ties by name) does not depend on the
    others. Before, an unknown model id ran difflib over each of 32,823 names (0.1 s of the lookup)."""
    if len(known) < 1000 or not word:
        return difflib.get_close_matches(word, known, n=n, cutoff=cutoff)
    chars = np.array(sorted({ord(c) for c in word}), dtype=np.uint32)
    need = np.array([word.count(chr(c)) for c in chars])
    lengths = np.fromiter(map(len, known), dtype=np.int64, count=len(known))
    codes = np.frombuffer("".join(known).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    owner = np.repeat(np.arange(len(known)), lengths)
    at = np.minimum(np.searchsorted(chars, codes), len(chars) - 1)
    hit = chars[at] == codes  # the characters of word, by their place in chars
    counts = np.bincount(owner[hit] * len(chars) + at[hit], minlength=len(known) * len(chars)).reshape(len(known), -1)
    bound = 2.0 * np.minimum(counts, need).sum(axis=1) / (lengths + len(word))  # difflib's quick_ratio, exactly
    return difflib.get_close_matches(word, [known[i] for i in np.flatnonzero(bound >= cutoff - 1e-9)], n=n,
                                     cutoff=cutoff)


#: the letters and digits a name holds for :func:`suggest` to offer the known names that hold it, when none is close
SUBSTRING_MIN = 3


def suggest(name: str, known, what: str, item: str | None = None) -> NotFoundError:
    """A NotFoundError for an unknown ``what`` naming the close known names (difflib), else those holding it (when it has
    :data:`SUBSTRING_MIN` letters or digits), else none; ``item``: the argument that
    named it (``benchmark``, ``filters.benchmark``, ``models``), kept on the error as ``.item`` (the HTTP layer's
    ``field``)."""
    known = list(known)
    word = strip_invisible(name)  # "MMLU_PRO/Law ": spaces around a name are no part of it (before, no suggestion)
    close = close_matches(word, known)
    if not close and sum(c.isalnum() for c in word) >= SUBSTRING_MIN:
        # case-insensitive substring: "llama-3.1-8b" finds "meta-llama/Llama-3.1-8B"; not for "/", "-" or "a", which
        # most names hold (before, "unknown model '/'" suggested the first five models)
        low = word.lower()
        close = [k for k in known if low in k.lower()][:5]
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    err = NotFoundError(f"unknown {what} {name!r}{hint} ({lister(what)} lists them)")
    err.item = item
    return err


#: the library's call listing the known ``what`` ("model", "benchmark", "space"), as :func:`lister` tells it to a
#: Python caller and :func:`indexer.serve._http_hints` finds it to name the endpoint instead; the spaces' takes the SQL
#: store (README: indexer.spaces): no ``indexer.list_spaces()`` exists
LISTING_CALLS = {"model": "indexer.list_models()", "benchmark": "indexer.list_benchmarks()",
                 "space": "indexer.spaces.describe_spaces(sql)"}


def lister(what: str) -> str:
    """What lists the known ``what`` ("model", "benchmark" or "space") in the words of the reader
    (:data:`indexer.errors.CLI`): a CLI command's, the command (```taskspace benchmarks```); a Python caller's, the call
    (:data:`LISTING_CALLS`: ``indexer.list_benchmarks()``); an HTTP client's, the endpoint
    (:func:`indexer.serve._http_hints` maps the call: ``GET /v1/benchmarks``, ``GET /v1/spaces``). Before, a
    Python caller of find_models, model_detail or list_models was told to run `taskspace models`, and one of
    drop_space or of a blank ``space=`` `taskspace spaces`."""
    from .errors import CLI

    if CLI.get():
        return f"`taskspace {what}s`"
    return LISTING_CALLS[what]


def _unindexed_benchmark(store, space, name: str, item: str = "benchmark") -> NotFoundError:
    """The error for a benchmark query whose name has no vector in the space's index: a benchmark SQL knows but has
    not indexed yet (ingested, its vector not computed: ``taskspace index``; computed but missing from the index:
    ``taskspace reindex``), or an unknown name (:func:`suggest`). Before, an ingested benchmark was "unknown" with
    itself as the suggestion."""
    from .space import space_name

    known = [b.name for b in store.list_benchmarks()]
    if name not in known:
        return suggest(name, known, "benchmark", item=item)
    if any(bv.benchmark == name for bv in store.load_benchmark_vectors(space.id)):
        err = NotFoundError(f"benchmark {name!r} has a vector in the database but not in the index of space "
                            f"{space_name(space)}: `taskspace reindex` rebuilds the index from the database")
    else:
        err = NotFoundError(f"benchmark {name!r} is in the database but not indexed in space {space_name(space)} yet "
                            "(its results were ingested, its vector not computed): run `taskspace index`")
    err.item = item
    return err


def require_indexed_benchmark(store, vectors, space, name: str, item: str) -> None:
    """:func:`_unindexed_benchmark`'s error (``item``: the argument that named it) for a benchmark SQL knows that the
    space's index does not hold yet, where it restricts the models (``measured on`` it: a filter, ``taskspace models
    -b``): their payloads name it only once a pass has published them. Before, the answer was silently empty ("no
    model matches: loosen the filters", a listing of 0) while a server's running pass, or the `taskspace index` due
    after `taskspace ingest`, was to publish the models measured on it; a benchmark query said so already."""
    from .space import space_name

    try:
        indexed = vectors.get(space_name(space), "benchmarks", [name]).get(name) is not None
    except StoreError:  # no benchmarks index to ask: the models' listing says what it can
        return
    if not indexed:
        raise _unindexed_benchmark(store, space, name, item=item)


def _prompts(prompts, name: str = "prompts") -> list[str] | None:
    """``prompts`` (one string, or a list of them) as a list, each a usable prompt; None for None. InputError naming
    ``name`` (the argument: ``queries`` for :func:`indexer.demo.run_demo`, which checks its prompts here) or
    ``name[i]`` otherwise."""
    if prompts is None:
        return None
    if isinstance(prompts, str):
        prompts = [prompts]
    if isinstance(prompts, (dict, bytes, set, frozenset)):
        raise InputError(f"{name} must be a string or a list of strings, not {type(prompts).__name__}", item=name)
    try:
        out = list(prompts)
    except TypeError:
        raise InputError(f"{name} must be a string or a list of strings, not {type(prompts).__name__}", item=name) from None
    if not out:
        instead = " (or a benchmark name or a query vector instead)" if name == "prompts" else ""
        raise InputError(f"{name} is an empty list: give at least one prompt{instead}", item=name)
    for i, p in enumerate(out):
        if not isinstance(p, str):  # `[["x"]]`, `[1]`: said as what it is (before: "must be a non-empty string")
            raise InputError(f"a prompt must be a string, not {type(p).__name__}", item=f"{name}[{i}]")
        if not p.strip():
            raise InputError("a prompt must be a non-empty string", item=f"{name}[{i}]")
        if is_blank(p):  # "\u200b", "\ufeff": the encoder reads nothing (before, ranked as if something was asked)
            raise InputError(f"a prompt must have visible text (it holds {INVISIBLE_ONLY})", item=f"{name}[{i}]")
        bad = text_problem(p)  # what ingest refuses (a NUL, a lone surrogate) cannot be a query either
        if bad:
            # the way out for what is wrong (before, NUL characters named for a lone surrogate too)
            fix = ("send the prompt without NUL characters" if "\x00" in p else "send the prompt as valid UTF-8 text: "
                   "a surrogate escape without its pair (a JSON \\ud800 alone) is no character; drop it or send the pair")
            raise InputError(f"{bad}: {fix}", item=f"{name}[{i}]")
    return out


def _vector(vector) -> np.ndarray:
    """A raw query vector as a flat float64 array; InputError (``vector``) unless it is a list of numbers."""
    if isinstance(vector, np.ndarray):
        if vector.dtype.kind not in "iuf":
            raise InputError(f"the query vector must hold numbers, not {vector.dtype}", item="vector")
        if sum(n > 1 for n in vector.shape) > 1:  # several rows: before, flattened into one (searched, if it fit)
            raise InputError(f"the query vector must be one vector (a 1-D array, or one row), not an array of shape "
                             f"{vector.shape}; for several queries call find_models once per vector", item="vector")
        return np.asarray(vector, dtype=np.float64).reshape(-1)
    if not isinstance(vector, (list, tuple)):
        raise InputError(f"the query vector must be a list of numbers, not {type(vector).__name__}", item="vector")
    for i, x in enumerate(vector):
        if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
            raise InputError(f"the query vector must be a list of numbers; entry {i} is {x!r}", item=f"vector[{i}]")
        if not isinstance(x, (float, np.floating)) and not math.isfinite(_float_or_inf(x)):  # an int past float range
            raise InputError(f"the query vector's values overflow: entry {i} is {_short(x)}, past the range of a number "
                             "(a double); send a query in the space's index form (a row as indexer.represent builds "
                             "it, such as a benchmark's vector), whose entries are far smaller", item="vector")
    return np.asarray(vector, dtype=np.float64).reshape(-1)


#: the largest length of a query vector: the index holds and scores 32-bit floats
_MAX_NORM = float(np.finfo(np.float32).max)


def _check_magnitude(q: np.ndarray) -> None:
    """InputError (``vector``) when the finite query ``q`` is too large for the index's 32-bit floats: an entry, its
    length or the scores it makes would overflow to inf (and NaN once normalised), and the store would refuse it
    naming the space instead of the field."""
    with np.errstate(over="ignore"):
        norm = float(np.linalg.norm(q))
    if np.isfinite(norm) and norm <= _MAX_NORM:
        return
    i = int(np.argmax(np.abs(q)))
    raise InputError(f"the query vector's values overflow: they are too large for the index's 32-bit floats (entry "
                     f"{i} is {q[i]:.3g}; its length must stay below {_MAX_NORM:.3g}); send a query in the space's index "
                     "form (a row as indexer.represent builds it, such as a benchmark's vector), whose entries are "
                     "far smaller", item="vector")


def _embed_width(space) -> int:
    """The width of the question embedding at the front of a space's index rows."""
    from . import represent
    from .features import n_features

    width = int(space.dim) - int(represent.has_intercept(space)) - int(represent.has_formats(space))
    width -= n_features(represent.feature_set(space)) + represent.level_width(space)  # before, the levels were
    # counted in: an auto-mc probe took the first two columns of the options half as well
    return width // 2 if represent.is_split(space) else width


def _query_vector(store, vectors, space, prompts, benchmark, vector, timings,
                  near: bool = True) -> tuple[np.ndarray, bool, list | None]:
    """(the (dim,) query vector, whether unknown answer options were filled in from neighbours, the prompts-collection
    hits nearest to the query when that search was already made (else None)). A prompt query is the mean of its
    prompts' lifted rows (:func:`indexer.represent.query_rows`); a split space's prompt without answer options takes
    those of the nearest indexed questions; with ``near`` (one prompt) that search also fetches the neighbourhood
    (:data:`NEAR_PROMPTS` prompts) for coverage and evidence."""
    from . import represent
    from .query import _neighbour_rows, prompts_indexed
    from .space import space_encoder, space_name

    if benchmark is not None:
        hit = vectors.get(space_name(space), "benchmarks", [benchmark], with_vectors=True).get(benchmark)
        if hit is None:
            raise _unindexed_benchmark(store, space, benchmark)
        bq = np.asarray(hit.vector, dtype=np.float32)
        if bq.size != int(space.dim):  # the benchmarks index was built with another dimension (see _index_in_step)
            raise DimensionError(f"benchmark vector has {bq.size} entries, the space has {space.dim}", item=benchmark)
        return bq, False, None
    if vector is not None:
        q = _vector(vector)
        if q.size != int(space.dim):
            raise DimensionError(f"the query vector has {q.size} entries, space {space_name(space)} has {space.dim} "
                                 "(its index form: see indexer.represent)", item="vector")
        if not np.isfinite(q).all():
            raise InputError("the query vector has NaN/inf entries", item="vector")
        _check_magnitude(q)
        q = q.astype(np.float32)
        if not q.any():  # every model would score 0: a ranking of no meaning (entries below float32's range too)
            raise InputError("the query vector is all zeros (as the index's 32-bit floats hold it), so every model "
                             "scores 0 and no order means anything; send a query in the space's index form (a row as "
                             "indexer.represent builds it, such as a benchmark's vector), or ask with prompts or a "
                             "benchmark", item="vector")
        return q, False, None
    t = time.perf_counter()
    enc = space_encoder(space)  # the process's shared instance: one model load for any number of queries
    X = represent.query_rows(prompts, enc.encode, space)
    timings["encode"] = time.perf_counter() - t
    filled, hits = False, None
    if represent.is_split(space):
        bare = represent.unknown(X)
        filled = bool(bare.any())
        name = space_name(space)
        if near and filled and len(prompts) == 1 and prompts_indexed(store, vectors, space):
            # one search serves both the options fill (its NEIGHBOURS nearest by question, with their rows) and the
            # neighbourhood of coverage and evidence: the same probe, the question embedding (a unit row)
            e = represent.question_width(X.shape[1])
            probe = np.zeros(int(space.dim), dtype=np.float32)
            probe[:e] = X[0, :e]
            hits = vectors.search(name, "prompts", probe, limit=max(represent.NEIGHBOURS, NEAR_PROMPTS), with_vectors=True)
        if filled and hits:
            rows = np.stack([np.asarray(h.vector, dtype=np.float64)[:X.shape[1]] for h in hits[:represent.NEIGHBOURS]])
            X = represent.fill_unknown(X, rows.mean(axis=0))
        elif filled:
            X = represent.fill_unknown(X, _neighbour_rows(store, vectors, space, X))
        # options were filled in only where some neighbour had options (the fill's is_mc share p > 0); a prompt whose
        # neighbours have none (code, on an index that mixes formats or holds no multiple-choice prompt at all) is
        # its own row, nothing taken from neighbours (before, every prompt without options said "filled")
        filled = bool((represent.options_share(X)[bare] > 0).any()) if filled else False
    X = represent.add_intercept(X, space)
    return X.mean(axis=0, dtype=np.float64).astype(np.float32), filled, (hits[:NEAR_PROMPTS] if hits else None)


def check_not_drifted(store, space, name: str, vectors=None) -> None:
    """For a query that filtered nothing out and found no model: a StoreError (exit 3, HTTP 503) when SQL holds model
    vectors of the space, i.e. the index lost them (emptied by hand, a damaged copy); nothing when SQL has none.
    With ``vectors``: when the models index is there as the other embedded engine wrote it, or the store was opened on
    the home instead of its ``qdrant`` folder (:meth:`~indexer.store.vectors.VectorStore.home_given`), the error says
    so."""
    n = len(store.model_vector_keys(space.id))
    if n:
        other = None if vectors is None else (vectors.other_engines_index(name, "models")
                                              or vectors.home_given(name))
        if other is not None:
            raise StoreError(other)
        raise StoreError(f"the index of space {name} answered no model, though the database holds "
                         f"{counted(n, 'model vector')}: the index has drifted; `taskspace check` reports it, `taskspace reindex` "
                         "rebuilds it from the database")


@contextmanager
def _index_in_step(vectors, space):
    """Searches of a query of the space's own dimension: a DimensionError the vector index raises then means the index
    is out of step with SQL (built with another encoder or dimension, copied from elsewhere), and is raised as
    :meth:`~indexer.store.vectors.VectorStore.out_of_step` (run ``taskspace reindex``); before, it told the user to "embed the query with the space's
    encoder". A bad user ``vector`` (``item="vector"``) is raised as it is."""
    try:
        yield
    except DimensionError as exc:
        if exc.item == "vector":
            raise
        from .space import space_name

        err = vectors.out_of_step(space_name(space), space.dim)
        if err is None:
            raise
        raise err from exc


def _fold(name: str) -> str:
    """A model name as compared when it is not stored as given: NFC (one form for "é", precomposed or "e" with a
    combining accent, which look the same) and lower case."""
    return unicodedata.normalize("NFC", name).lower()


def _resolve_models(store, names: list[str], item: str | None = "models") -> list[str]:
    """Stored model keys of compare-mode names (key, alias or identity rules); NotFoundError suggesting close
    names for one that is not stored (``item``: the argument that named them)."""
    from .identity import resolve

    # any sequence of names, as prompts take it: a numpy array or a pandas Series of names (before: "must be a
    # non-empty list" for `models=df["model"].values`, which `prompts=` of the same call takes)
    if not isinstance(names, (str, bytes, dict)):
        try:
            names = list(names)
        except TypeError:
            pass
    if not isinstance(names, list):  # a dict, a number, bytes: said as what it is, as POST /v1/find's "models": 5
        raise InputError(f"models must be a model name or a list of them, not {type(names).__name__}", item="models")
    if not names:
        raise InputError("models must be a non-empty list of model names", item="models")
    names = [str(n) if isinstance(n, str) else n for n in names]  # numpy's str_ as the plain str it is
    # each entry's name in an error, as prompts[i]: browse's one model id keeps its own
    entry = [f"models[{i}]" if item == "models" else item for i in range(len(names))]
    for n, at in zip(names, entry):
        if not isinstance(n, str):
            raise InputError(f"a model name must be a string, not {type(n).__name__}", item=at)
        if not n.strip():
            raise InputError("a model name must be a non-empty string", item=at)
        if why := invisible_only("a model name", n):  # "\u200b": refused as a benchmark or a prompt of it is (before,
            raise InputError(why, item=at)  # looked up: "unknown model", a 404 where those were a 422)
        if name_problem(n):
            raise InputError(f"the model name {n[:60]!r} {name_problem(n)}", item=at)
    known_alias = store.resolve_aliases(names)
    keys = []
    pairs = stored = None  # every (key, name) and key, read once, for a name that is no stored name
    for n, at in zip(names, entry):
        key = known_alias.get(n)
        if key is None:
            if pairs is None:  # keys and names alone, from the driver (before: every model's record, 0.27 s of 32,823)
                pairs = store.model_names()
                stored = {k for k, _ in pairs}
            key = n if n in stored else resolve(n).key
            if key not in stored:  # Hub ids are case-insensitive on the Hub: one stored key that differs in case only
                # (or in Unicode normal form: "café" typed precomposed, stored with a combining accent, or the other way)
                # or a name a source gave it, typed in another case (folded once: before, per name compared)
                folded = {_fold(n), _fold(key)}
                hits = [(k, a) for k, a in pairs if _fold(a) in folded]
                same = sorted({k for k, a in hits if a == k}) or sorted({k for k, _ in hits})
                if len(same) != 1:  # the entry not stored, named as a malformed one is
                    raise suggest(n, sorted(stored), "model", item=at)
                key = same[0]
        keys.append(key)
    return list(dict.fromkeys(keys))


def page_limit(offset: int, k: int, listed: int | None) -> int:
    """How many of the best models a search ranks for the page of ``k`` after the best ``offset``: the tail of the best
    ``offset + k`` (:func:`find_models` and :func:`indexer.query.find_models` page alike), no more than the ``listed``
    models that pass the filters (a client's offset of 10**9 asks no larger search; None: not counted, no offset) nor
    :data:`indexer.store.vectors.MAX_LIMIT` (the searches' arithmetic stays in machine integers)."""
    from .store.vectors import MAX_LIMIT

    limit = min(offset + int(k), MAX_LIMIT)
    if offset:
        # at or past the last of them the page is empty whatever is ranked: one model is (for the checks of an empty
        # or drifted index); before, every one, 4-7 s on 32,823 models for an answer of no result
        limit = min(limit, listed) if offset < listed else 1
    return limit


def find_models(prompts: str | list[str] | None = None, *, benchmark: str | None = None, vector=None, k: int = 10,
                filters: Filters | dict | None = None, models: str | list[str] | None = None, prefer_smaller: float = 0.0,
                rank: str = "probability", evidence: int = 3, store=None, vectors=None, space=None,
                offset: int = 0) -> FindResult:
    """Rank the indexed models for a task (see the module docstring). Exactly one of ``prompts`` (a string or a
    list of example prompts: any iterable of strings, a tuple, a numpy array), ``benchmark`` or ``vector`` (a raw (dim,) query in the space's index form).
    ``k``: how many results (compare mode, ``models``: one name or a list, every listed model). ``offset``: skip the
    best ``offset`` first (a page of the ranking: the results are ranks ``offset + 1`` to ``offset + k`` of the ranking
    ``k = offset + k`` gives, whatever ``rank``, ``prefer_smaller`` and ``filters``; not with ``models``, whose
    answer lists every model given). ``evidence``: how many evidence prompts and
    benchmarks per result (0: none; the neighbourhood is still searched, for ``coverage``). Without ``store``/``vectors`` the configured
    stores (``TASKSPACE_HOME``'s, as the environment says it at the call) are opened once per process and reused
    (:func:`indexer.query.close_cached` closes them). ``space``: an index name, an SQL id or an encoder name (None: the
    default space).

    Returns a :class:`FindResult`: iterate it (or index it, ``len()`` it) for its :class:`ModelResult` results, best
    first; its ``to_dict()`` is the JSON of ``taskspace search --json`` and ``POST /v1/find``.

    Raises :class:`~indexer.errors.InputError` (a ValueError) for a bad argument, ``.item`` naming it (``k``,
    ``prompts[0]``, ``filters.licenses``, ``vector``); :class:`~indexer.errors.NotFoundError` (a LookupError) for an
    unknown benchmark, model (``models[i]``) or space (``space``), or an empty index or a home never indexed (``.item``
    None); :class:`~indexer.errors.StoreError` when the database or the vector index cannot be used. All derive from
    :class:`~indexer.errors.IndexerError`."""
    from .query import _space_state, check_has_models
    from .space import space_name

    timings: dict[str, float] = {"encode": 0.0}
    t0 = time.perf_counter()
    prompts = _check_query(prompts, benchmark, vector, k, rank)
    if benchmark is not None:  # "beta ", "\u200bbeta": the benchmark it names, as a filter's is (Filters)
        benchmark = strip_invisible(benchmark)
    from .browse import _page

    offset, _ = _page(offset, None)  # a non-negative integer, as GET /v1/models' offset
    if offset and models is not None:
        raise InputError("offset pages a ranking of k models; compare mode (models) lists every model given, so "
                         "it takes no offset (got {value}); leave offset out", item="offset", value=offset)
    bad = (f"prefer_smaller must be a number from 0 to {MAX_PREFER_SMALLER:g} (e.g. 0.1), not {_short(prefer_smaller)}")
    if isinstance(prefer_smaller, bool) or not isinstance(prefer_smaller, (int, float, np.integer, np.floating)):
        raise InputError(bad, item="prefer_smaller")
    alpha = _float_or_inf(prefer_smaller)
    if not math.isfinite(alpha) or not 0 <= alpha <= MAX_PREFER_SMALLER:
        raise InputError(bad, item="prefer_smaller")
    if isinstance(evidence, bool) or not isinstance(evidence, (int, np.integer)) or evidence < 0:
        raise InputError("evidence must be a non-negative integer, not {value}", item="evidence", value=evidence)
    flt = Filters.from_dict(filters) if not isinstance(filters, Filters) else filters
    store, vectors = _stores(store, vectors)
    sp, state = _space_state(store, space)
    name = space_name(sp)
    if flt.benchmark is not None and flt.benchmark not in {b.name for b in store.list_benchmarks()}:
        raise suggest(flt.benchmark, [b.name for b in store.list_benchmarks()], "benchmark", item="filters.benchmark")
    if flt.benchmark is not None:
        require_indexed_benchmark(store, vectors, sp, flt.benchmark, "filters.benchmark")
    keys = _resolve_models(store, [models] if isinstance(models, str) else models) if models is not None else None
    base = {"key": list(keys)} if keys is not None else {}
    conds = flt.conditions()
    where = _merge(base, *conds.values()) or None
    # how many models the ranking holds (those the filters let through): what a page is out of, as GET /v1/models' total
    listed = vectors.count(name, "models", where, missing_ok=True) if keys is None else None
    limit = len(keys) if keys is not None else page_limit(offset, k, listed)
    changed: dict[str, bool] = {}  # whose results changed since their vector was solved: read once for the request
    ids: dict[str, int | None] = {}  # the neighbourhood's prompt ids (query.prompt_ids_of): read once for the request
    # the page alone is matched (an offset past the last model: the one model ranked, for the checks below)
    skip = min(offset, limit - 1) if keys is None else 0
    q, filled, near_hits, pred, ranked = _search(store, vectors, sp, prompts, benchmark, vector, where=where,
                                                 limit=limit, rank=rank, alpha=alpha, timings=timings, state=state,
                                                 changed=changed, ids_known=ids, offset=skip)
    if not ranked and where is None:  # nothing filtered out, yet no model: the index has lost what SQL holds
        check_not_drifted(store, sp, name, vectors)
    if not ranked:  # an empty space is an empty index, as no space is (exit 1, 404); filters leaving none: no model
        check_has_models(store, vectors, sp, name)
    ranked = ranked[offset - skip:]

    excluded, missing = {}, {}
    if conds or alpha > 0:
        total = vectors.count(name, "models", base or None, missing_ok=True)
        for fname, cond in conds.items():
            excluded[fname] = total - vectors.count(name, "models", _merge(base, cond), missing_ok=True)
        for fname in conds:
            if fname in _MISSING:
                missing[fname] = vectors.count(name, "models", _merge(base, _MISSING[fname]), missing_ok=True)
        if alpha > 0:  # the models the ranking holds (those the filters left) that it charges as UNKNOWN_PARAMS
            missing["prefer_smaller"] = vectors.count(name, "models", _merge(where or {}, _MISSING["prefer_smaller"]), missing_ok=True)

    t = time.perf_counter()
    with _index_in_step(vectors, sp):
        results, anything_near = _results(store, vectors, sp, q, ranked, int(evidence), benchmark, near_hits, changed,
                                          ids)
    timings["evidence"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - t0

    kind = "benchmark" if benchmark is not None else "vector" if vector is not None else (
        "prompt" if len(prompts) == 1 else "prompts")
    truncated, max_tokens = _truncated(sp, prompts) if prompts else ([], None)
    query = {"kind": kind, "prompts": len(prompts or []), "options_filled": filled, "truncated": truncated,
             "max_tokens": max_tokens, "measured_near": _measured_near(results, anything_near), "benchmark": benchmark,
             "k": int(k), "offset": offset, "rank": rank, "prefer_smaller": alpha, "filters": flt.to_dict(),
             "models": list(keys) if keys is not None else None,
             # the ranking's size and the next page's offset (None on the last page), as GET /v1/models pages: the web
             # page's "next" and the CLI's "ranks 11-20 of 147" (compare mode: the models ranked, on one page)
             "total": listed if listed is not None else len(results),
             "next_offset": offset + int(k) if listed is not None and offset + int(k) < listed else None}
    if keys is not None:  # compare mode: the listed models that are not in the answer (filtered out, or no vector)
        shown = {r.model for r in results}
        query["unranked"] = [key for key in keys if key not in shown]
    space_info = {"name": name, "id": sp.id, "encoder": sp.encoder, "method": sp.method, "dim": int(sp.dim),
                  "calibrated": pred.calibrated, "signal": pred.signal}
    return FindResult(query, space_info, results, excluded, missing, timings)


def _measured_near(results: list[ModelResult], anything_near: bool) -> dict | None:
    """The answer's ``query.measured_near``: how many of the ``results`` were measured near the query (their
    ``coverage.measured_near``), ``of`` how many, and ``any_model``: whether any model in the index was (some indexed
    prompt is near the query; a benchmark query's own prompts always are). ``any_model`` false: the query is far from
    everything the index measured, so the ranking rests on the models' general ability alone (every result's
    coverage says "no", and the answer says so once). None where it cannot tell: no result, or some result's
    coverage unknown (a pulled index without its patterns' prompts, or no prompts collection)."""
    if not results or any(r.coverage.measured_near is None for r in results):
        return None
    return {"results": sum(bool(r.coverage.measured_near) for r in results), "of": len(results),
            "any_model": bool(anything_near)}


def _truncated(space, prompts: list[str]) -> tuple[list[int], int | None]:
    """(the 0-based indexes of the prompts the encoder read only the beginning of: a text it embeds, the whole prompt
    or on a split space its question or its options, is longer than its token limit; that limit, or None when no
    prompt is long enough to need counting). Text after the cut does not change the answer, so the answer says so."""
    from . import represent
    from .space import space_encoder

    parts = represent.embedded_texts(prompts, space)
    flat = [t for p in parts for t in p]
    over, limit = space_encoder(space).over_limit(flat)
    out, i = [], 0
    for n, p in enumerate(parts):
        if any(over[i:i + len(p)]):
            out.append(n)
        i += len(p)
    return out, limit


def check_benchmark_name(benchmark, item: str = "benchmark") -> None:
    """InputError (``item``) unless ``benchmark`` can name a benchmark: one string, not empty, with visible text
    (:func:`indexer.records.invisible_only`: "\u200b" is refused as a prompt of it is; before, "unknown benchmark",
    suggesting some), and no :func:`indexer.records.name_problem`. A benchmark query, a model list by benchmark
    (:func:`indexer.browse.list_models`) and the filter ``Filters(benchmark=...)`` (``item`` "filters.benchmark") ask
    it in this order, so one bad name gets one message from each (before, the filter said "benchmark must be a
    non-empty string" for 5 as for "")."""
    if not isinstance(benchmark, str):  # one name (before: "must be a non-empty ... name")
        raise InputError(f"benchmark must be one benchmark name (a string), not {type(benchmark).__name__}",
                         item=item)
    if not benchmark.strip():
        raise InputError("benchmark must be a non-empty benchmark name", item=item)
    if why := invisible_only("benchmark", benchmark):
        raise InputError(why, item=item)
    if bad := name_problem(benchmark):
        raise InputError(f"benchmark {benchmark[:40]!r} {bad}", item=item)


def _check_query(prompts, benchmark, vector, k, rank, k_name: str = "k") -> list[str] | None:
    """The checks of the query every entry point shares (:func:`find_models`, :func:`indexer.query.find_models`):
    exactly one of prompts (returned as a list), benchmark, vector; ``k`` a positive integer; ``rank`` one of
    :data:`RANKS`. InputError naming the argument otherwise."""
    prompts = _prompts(prompts)
    given = [name for name, x in (("prompts", prompts), ("benchmark", benchmark), ("vector", vector)) if x is not None]
    if len(given) != 1:
        got = " and ".join(given) or "none"
        raise InputError(f"give exactly one of prompts, a benchmark name or a query vector (got {got})", item="query")
    if benchmark is not None:
        check_benchmark_name(benchmark)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"{k_name} must be a positive integer, not {{value}}", item=k_name, value=k)
    if rank not in RANKS:
        raise InputError(f"unknown ranking {example_value(rank)}; use one of {', '.join(RANKS)}", item="rank")
    return prompts


def check_stores(store, vectors=None) -> None:
    """InputError naming ``store`` / ``vectors`` for one given that is no store (a URL, a path), rather than an
    AttributeError or a TypeError from deep in the search; None is fine (the configured one). Every library call
    taking them checks them so (:func:`_stores`, :func:`indexer.browse.list_benchmarks`)."""
    if store is not None and not hasattr(store, "list_spaces"):
        raise InputError(f"store must be an SQL store (indexer.store.sql.open_store(URL), or open_store() for the "
                         f"configured one), not {type(store).__name__}; leave it out to use TASKSPACE_DATABASE_URL's",
                         item="store")
    if vectors is not None and not hasattr(vectors, "search"):
        raise InputError(f"vectors must be a vector store (indexer.store.vectors.VectorStore(path=FOLDER) or "
                         f"VectorStore(url=URL), or VectorStore.from_settings()), not {type(vectors).__name__}; leave it "
                         "out to use the configured one", item="vectors")


def _stores(store, vectors):
    """The given stores (checked: :func:`check_stores`), or the process's shared ones
    (:func:`indexer.query._shared_stores`) for those not given: given a vector store alone, the shared SQL store alone
    (:func:`indexer.query._shared_sql`), no second vector store."""
    check_stores(store, vectors)
    if vectors is None:
        from .query import _shared_stores

        shared_store, shared_vectors = _shared_stores()
        store = store or shared_store
        vectors = shared_vectors
    elif store is None:
        from .query import _shared_sql

        store = _shared_sql()
    return store, vectors


def _search(store, vectors, space, prompts, benchmark, vector, *, where, limit: int, rank: str, alpha: float = 0.0,
            timings: dict, near: bool = True, state: tuple | None = None, changed: dict | None = None,
            ids_known: dict | None = None, offset: int = 0):
    """The search: the query vector, then the ranked models, each ``(Match, the value ranked by)``. The one
    implementation behind :func:`find_models` and the lean :func:`indexer.query.find_models`. ``where``: the Qdrant
    payload filter (dict grammar of :mod:`indexer.store.vectors`); ``near``: also fetch the query's neighbourhood
    when the options fill searches the prompts collection anyway (one search for both; False: the fill's own
    search of :data:`~indexer.represent.NEIGHBOURS` prompts, nothing more); ``state``: the space's calibration and
    prior as :func:`indexer.query._space_state` read them with it (None: read here). A coverage-aware map
    (:attr:`indexer.posterior.Calibration.uncovered`) needs the neighbourhood (its
    :data:`~indexer.posterior.COVERAGE_PROMPTS` nearest) whatever ``near`` says, and re-ranks candidates of two
    searches (:func:`indexer.query.coverage_ranked`). Returns ``(q, options filled, the neighbourhood hits or None,
    the predictor, ranked)``. A vector index out of step with SQL's dimension: :func:`_index_in_step`. ``changed``: the
    request's memo of :func:`indexer.query.changed_since_solved`, filled where the coverage shares read it;
    ``ids_known``: its memo of :func:`indexer.query.prompt_ids_of`, filled with the whole neighbourhood's ids where the
    coverage shares read those of its nearest (the results read the rest of it). ``offset``: ``ranked`` holds ranks
    ``offset + 1`` to ``limit`` alone (a page; the order is that of the ``limit`` best), and only those models are
    matched (probability, interval, whole payload): a deep page costs the order of the models above it, not their
    matches (:func:`indexer.query.coverage_ranked`)."""
    from .query import predictor

    pred = predictor(store, space, state)
    with _index_in_step(vectors, space):
        return _search_in(store, vectors, space, prompts, benchmark, vector, where=where, limit=limit, rank=rank,
                          alpha=alpha, timings=timings, near=near, pred=pred, changed=changed, ids_known=ids_known,
                          offset=offset)


def _search_in(store, vectors, space, prompts, benchmark, vector, *, where, limit: int, rank: str, alpha: float,
               timings: dict, near: bool, pred, changed: dict | None = None, ids_known: dict | None = None,
               offset: int = 0):
    """:func:`_search` past the predictor."""
    from .posterior import COVERAGE_PROMPTS
    from .query import _matches, coverage_ranked, lcb_ranked, prompt_ids_of, share_reader, whole_hits
    from .space import space_name

    name = space_name(space)
    # a coverage-aware map, and variances that depend on coverage, need the neighbourhood: the options fill's search
    # of the prompts fetches it as well
    by_coverage = pred.coverage_aware or pred.region_aware or pred.link_aware
    q, filled, near_hits = _query_vector(store, vectors, space, prompts, benchmark, vector, timings,
                                         near=near or by_coverage)
    t = time.perf_counter()
    if alpha > 0 or rank == "lcb":
        n_all = vectors.count(name, "models", where, missing_ok=True)
    penalty = ("num_parameters", alpha, UNKNOWN_PARAMS, max(n_all, 1)) if alpha > 0 else None
    if by_coverage and near_hits is None:
        near_hits = _near_hits(vectors, space, q, benchmark, store=store)
    near_c = [_near(h) for h in near_hits[:COVERAGE_PROMPTS]] if by_coverage and near_hits else []
    pred.near_benchmarks = [p["benchmarks"] for p in near_c] or None  # for the variances (Predictor.variance)
    if near_c and ids_known is not None:  # the whole neighbourhood's ids in the read the shares need (the results'
        prompt_ids_of(store, [h.key for h in near_hits], ids_known)  # evidence reads the same prompts' ids)
    # each hit's coverage share for its variance (coverage_ranked reads them itself)
    shares = (share_reader(store, space, near_c, changed=changed, ids_known=ids_known)
              if near_c and pred.region_aware and not pred.coverage_aware else None)
    if (pred.coverage_aware or pred.centred) and near_c:
        ranked = coverage_ranked(store, vectors, name, q, pred, near_c,
                                 filters=where, limit=limit, rank=rank,
                                 penalty=penalty, shift=(lambda m: alpha * _log10p(m.payload)) if alpha > 0 else None,
                                 changed=changed, ids_known=ids_known, offset=offset)
    elif alpha > 0 and rank == "probability":
        # a deep page: the models above it with their keys alone, the page's payloads and vectors read after
        hits = vectors.search(name, "models", pred.fold(q), filters=where, limit=limit,
                              with_vectors=pred.folded and not offset, penalty=penalty,
                              fields=[] if offset else None)[offset:]
        if offset:
            whole_hits(vectors, name, hits, pred.folded)
        found = _matches(_raw(hits, alpha), pred, q, shares=None if shares is None else shares(hits))
        ranked = [(m, m.search_score - alpha * _log10p(m.payload)) for m in found]
    elif rank == "lcb":  # with a size penalty, its candidates fetched by score less the penalty (the bound's order)
        ranked = lcb_ranked(vectors, name, q, pred, filters=where, limit=limit, penalty=penalty,
                            shift=(lambda m: alpha * _log10p(m.payload)) if alpha > 0 else None, shares=shares,
                            offset=offset)
    else:
        hits = vectors.search(name, "models", pred.fold(q), filters=where, limit=limit,
                              with_vectors=pred.folded and not offset, fields=[] if offset else None)[offset:]
        if offset:
            whole_hits(vectors, name, hits, pred.folded)
        found = _matches(hits, pred, q, shares=None if shares is None else shares(hits))
        ranked = [(m, m.search_score) for m in found]
    timings["search"] = time.perf_counter() - t
    return q, filled, near_hits, pred, ranked


def _log10p(payload: dict) -> float:
    n = payload.get("num_parameters")
    return math.log10(n) if isinstance(n, (int, float)) and n > 0 else math.log10(UNKNOWN_PARAMS)


def _raw(hits, alpha: float):
    """Hits of a formula query with their raw inner product back (formula value + alpha log10(parameters))."""
    for h in hits:
        h.score = float(h.score) + alpha * _log10p(h.payload)
    return hits


def _results(store, vectors, space, q, ranked, n_evidence: int, benchmark: str | None,
             near_hits=None, known_changed: dict | None = None,
             ids_known: dict | None = None) -> tuple[list[ModelResult], bool]:
    """(the ranked matches with identity, metadata, coverage and evidence; whether any indexed prompt is near the
    query, :func:`_measured_near`). ``known_changed``: the request's memo of whose results changed since their vector
    was solved (the search's coverage shares filled it: only the models it did not ask about are read); ``ids_known``:
    its memo of prompt ids (:func:`indexer.query.prompt_ids_of`), for the coverage, evidence and cut texts."""
    from .query import changed_since_solved, pattern_observed

    near = _neighbourhood(vectors, space, q, near_hits, benchmark, store=store) if ranked else []
    facts = card_facts(store, [m.model for m, _ in ranked]) if ranked else {}
    # the models whose results changed since their vector was solved (ingested during a pass, or without one): their
    # coverage and evidence from their results on the benchmarks the vector was fitted on, as its score is
    changed = changed_since_solved(store, space, [m.model for m, _ in ranked], known=known_changed) if ranked else set()
    fitted = {m.model: set(m.payload.get("benchmarks") or ()) for m, _ in ranked if m.model in changed}
    observed = _observed(store, [m.model for m, _ in ranked], near, fitted, ids_known) if ranked else {}
    # a model SQL holds no outcome of (a pulled index): the prompts its coverage pattern's models were observed on,
    # when the records carried them -- which near prompts it was measured on, not its outcomes there
    none = ({}, {}, 0, None, {})  # a model SQL holds no outcome of
    by_pattern = pattern_observed(store, space, {m.model: m.payload.get("pattern") for m, _ in ranked
                                                 if not observed.get(m.model, none)[2]}) if near else {}
    # benchmarks nearest to the query: the queried one, then those of the neighbourhood by best similarity
    order: list[str] = [benchmark] if benchmark else []
    for p in near:
        for b in p["benchmarks"]:
            if b not in order:
                order.append(b)
    out = []
    # a benchmark query's neighbourhood is the benchmark's own prompts (:func:`_near_hits`): each is near it by what
    # it is, however far it lies from the benchmark's mean (a varied benchmark's prompts do), so no similarity cut
    own = benchmark is not None and bool(near) and all(benchmark in x["benchmarks"] for x in near)
    is_near = (lambda x: True) if own else (lambda x: x["similarity"] >= NEAR_SIMILARITY)  # noqa: E731
    anything_near = any(is_near(x) for x in near)
    # a model measured on fewer than n_evidence prompts of the neighbourhood (its cells there) and on others: its
    # evidence is still its nearest measured prompts, found beyond it (before: none shown, or fewer than asked, for a
    # model measured elsewhere); on a benchmark query only a model not measured on it (one measured on it shows the
    # benchmark's own prompts alone). A pulled index holds no outcome to show, but the prompts its pattern was observed
    # on (by_pattern) order its published benchmarks the same way, so its answer names those its publisher's does.
    short: dict[str, np.ndarray | frozenset] = {}
    for m, _ in ranked:
        cells, _a, n_seen, measured, _w = observed.get(m.model, none)
        seen = by_pattern.get(m.model) if measured is None else None
        if seen is not None:
            cells, n_seen = [x for x in near if x["id"] in seen], len(seen)
        if n_evidence and (measured is not None or seen is not None) and len(cells) < n_evidence \
                and n_seen > len(cells) and not (own and cells):
            short[m.model] = measured[0] if measured is not None else frozenset(seen)
    # (near: the prompts collection is there)
    beyond = _own_nearest(store, vectors, space, q, short, n_evidence) if short and near else {}
    cut = _cut(store, [*near, *(x for xs in beyond.values() for x in xs)], ids_known) if n_evidence else set()
    for m, rank_score in ranked:
        p = m.payload
        cells, accs, n_known, measured, where = observed.get(m.model, none)
        if not n_known and p.get("accuracy_by_benchmark"):  # no outcomes here (a pulled index): the published accuracy
            ns = p.get("n_by_benchmark") or {}  # and its n, where the record carries it
            accs = {b: (a, ns.get(b)) for b, a in p["accuracy_by_benchmark"].items() if a is not None}
        mine = [x for x in near if x["id"] in cells]
        seen = by_pattern.get(m.model)
        close = [x for x in (mine if seen is None else [x for x in near if x["id"] in seen]) if is_near(x)]
        # "no" needs the whole of the model's measurements: SQL holds at least the prompts its vector was fitted on
        # (a pulled index holds none of them, but may hold the prompts its pattern was observed on), or no indexed
        # prompt at all is near the query
        whole = seen is not None or n_known >= int(p.get("n_prompts") or 0)
        known = bool(close) or (bool(near) and (not anything_near or whole))
        cov = (Coverage(near=len(close), measured_near=bool(close),
                        benchmarks=sorted({b for x in close for b in x["benchmarks"] if b in accs}))
               if known else Coverage(near=None, measured_near=None, benchmarks=None))
        shown_prompts, nearest = mine[:n_evidence], mine[:n_evidence]
        if m.model in beyond and measured is not None:  # its nearest measured prompts, some beyond the neighbourhood
            outcome = dict(zip(measured[0].tolist(), measured[1].tolist()))  # its outcomes on them, from SQL
            shown_prompts = nearest = [x for x in beyond[m.model] if x["pid"] in outcome]
            cells = {**cells, **{x["id"]: outcome[x["pid"]] for x in shown_prompts}}
            pids, _, codes, names = measured
            where = {**where, **{x["id"]: [names[c] for c in codes[pids == x["pid"]].tolist()] for x in shown_prompts}}
        elif m.model in beyond:  # pulled: the prompts its pattern was observed on, no outcome to show
            nearest = beyond[m.model]
        # the benchmarks nearest to the query it was measured on: the neighbourhood's, then those of its nearest
        # measured prompts (a model measured on none of the neighbourhood's benchmarks: before, none shown)
        mine_order = order + [b for x in nearest for b in x["benchmarks"] if b not in order]
        ev = Evidence(
            prompts=[{"text": x["text"] + ("…" if x["id"] in cut else ""), "benchmark": _measured_under(x, where),
                      "outcome": _num(cells[x["id"]], 4),
                      "similarity": _num(x["similarity"], 4)} for x in shown_prompts],
            benchmarks=[{"name": b, "accuracy": _num(accs[b][0], 4), "n": accs[b][1]}
                        for b in dict.fromkeys(mine_order) if b in accs][:n_evidence])
        kind = p.get("kind")
        hub = m.model if kind == "hub" else None
        meta = {"license": license_text(p.get("license")), "params": p.get("num_parameters"),
                "pipeline_tag": p.get("pipeline_tag"), "gated": gated_known(p), "open_weights": kind == "hub",
                **facts.get(m.model, NO_CARD_FACTS)}
        out.append(ModelResult(m.model, hub, kind == "api", [a for a in (p.get("aliases") or []) if a != m.model],
                               m.score, float(rank_score), m.probability, m.low, m.high, m.variance, cov, ev, meta, p,
                               results_changed=m.model in changed))
    return out, anything_near


#: :func:`card_facts` of a model SQL holds no record of
NO_CARD_FACTS = {"base_model": None, "params_from": None}


def card_facts(store, keys) -> dict[str, dict]:
    """key -> the model facts an answer's ``metadata`` shows that the index's points do not carry, read from SQL in
    one query: ``base_model`` (the model its card says it is a fine-tune, adapter, quantization or merge of; several
    joined with ","; None: none named, or no Hub metadata). Before, SQL held it and no answer showed it.
    ``params_from``: the repo whose parameter count ``params`` is when it is not the model's own (a PEFT adapter's
    base model: it runs as that model does), else None."""
    if not keys or store is None or not hasattr(store, "list_models"):
        return {}
    return facts_of(store.list_models(keys=list(keys)))


def facts_of(records) -> dict[str, dict]:
    """:func:`card_facts` of model records already read (key -> facts)."""
    return {r.key: {"base_model": getattr(r, "base_model", None),
                    "params_from": getattr(r, "num_parameters_from", None)} for r in records}


def _neighbourhood(vectors, space, q, hits=None, benchmark: str | None = None, store=None) -> list[dict]:
    """The :data:`NEAR_PROMPTS` indexed prompts nearest to the query's question embedding: ``id`` (prompt hash),
    ``text`` (snippet), ``benchmark``, ``benchmarks``, ``similarity`` (cosine), nearest first. Empty without a
    prompts collection. ``hits``: that search's hits when it was made already; ``benchmark``: a benchmark query's
    (:func:`_near_hits`)."""
    return [_near(h) for h in (_near_hits(vectors, space, q, benchmark, store=store) if hits is None else hits)]


def _near_hits(vectors, space, q, benchmark: str | None = None, store=None) -> list:
    """The prompts collection's :data:`NEAR_PROMPTS` hits nearest to the query's question embedding (none without
    a prompts collection or with a zero question part). A ``benchmark`` query's neighbourhood is that benchmark's
    own prompts nearest to its vector (a Qdrant filter on the prompts' ``benchmarks``): the question is how models do
    on it, so a model counts as covered where it was measured on it, not on another benchmark whose prompts lie
    nearer to the benchmark's mean than its own do (all of them, where none is indexed under that name). With
    ``store``, a prompts collection the index lost though SQL holds the space's prompts is an IndexMissingError
    (:func:`indexer.query.prompts_indexed`)."""
    from .query import prompts_indexed
    from .space import space_name

    name = space_name(space)
    if not (prompts_indexed(store, vectors, space) if store is not None
            else vectors.alias_target(name, "prompts") is not None):
        return []
    probe = _probe(space, q)
    if probe is None:
        return []
    if benchmark is not None:
        own = vectors.search(name, "prompts", probe, filters={"benchmarks": {"all": [benchmark]}}, limit=NEAR_PROMPTS)
        if own:
            return own
    return vectors.search(name, "prompts", probe, limit=NEAR_PROMPTS)


def _probe(space, q) -> np.ndarray | None:
    """The prompts-collection query of ``q``: its question embedding, unit length, zeros elsewhere (None when that
    part is zero)."""
    e = _embed_width(space)
    head = np.asarray(q, dtype=np.float64)[:e]
    norm = float(np.linalg.norm(head))
    if norm == 0.0:
        return None
    probe = np.zeros(int(space.dim), dtype=np.float32)
    probe[:e] = head / norm
    return probe


def _own_nearest(store, vectors, space, q, need: dict, n: int) -> dict[str, list[dict]]:
    """model -> the ``n`` indexed prompts nearest to the query among those it was measured on (``need``: model ->
    its measured prompt ids, or a pulled model's pattern prompt hashes, a frozenset), as :func:`_near` dicts with the
    SQL ``pid`` (None for hashes), nearest first: one prompts-collection search restricted to their ids per distinct
    set of measured prompts (models measured on the same prompts share it).
    For a model measured on fewer than ``n`` prompts of the neighbourhood: its nearest measured prompts lie beyond
    it, and are its evidence still (their similarity says how near they are)."""
    from .space import space_name

    probe = _probe(space, q) if need else None
    if probe is None:
        return {}
    out: dict[str, list[dict]] = {}
    done: dict = {}
    for model, measured in need.items():
        if isinstance(measured, frozenset):  # a pulled model's pattern prompts: their hashes, no SQL id
            sig, hashes, pid_of = measured, sorted(measured), {}
        else:
            pids = np.unique(measured)
            sig = pids.astype(np.int64).tobytes()
            if sig not in done:
                hashes = store.prompt_hashes(pids.tolist())
                pid_of = dict(zip(hashes, pids.tolist()))
        if sig not in done:
            done[sig] = [{**_near(h), "pid": pid_of.get(h.key)} for h in vectors.search(
                space_name(space), "prompts", probe, filters={"key": hashes}, limit=n)]
        out[model] = done[sig]
    return out


def _measured_under(x: dict, where: dict) -> str | None:
    """The benchmark an evidence prompt is shown under: the index's (the first of its benchmarks) where the model was
    measured on it there, else the first it was measured on it under. A prompt in two benchmarks whose model was
    measured on it in the second only was shown under the first, which the model was not measured on it in."""
    under = where.get(x["id"]) or []
    return x["benchmark"] if not under or x["benchmark"] in under else sorted(under)[0]


def _cut(store, hits: list[dict], ids_known: dict | None = None) -> set[str]:
    """The hashes of those prompts whose payload snippet (their first :data:`indexer.sync.SNIPPET` characters) is not
    the whole text, read from SQL (one query; only snippets of that length can be cut): an evidence text so cut ends
    with "…" (before, nothing said it was cut, and a user read a text cut mid-word as the whole prompt). ``ids_known``:
    the request's memo of prompt ids (the neighbourhood's were read for the coverage)."""
    from .query import prompt_ids_of
    from .sync import SNIPPET

    full = {x["id"] for x in hits if x["text"] and len(x["text"]) >= SNIPPET}
    if not full or store is None:
        return set()
    ids = prompt_ids_of(store, sorted(full), ids_known)
    if not ids:
        return set()
    hashes = list(ids)
    texts = store.prompt_texts([ids[h] for h in hashes])
    return {h for h, t in zip(hashes, texts) if len(t) > SNIPPET}


def _near(h) -> dict:
    return {"id": h.key, "text": h.payload.get("snippet"), "benchmark": h.payload.get("benchmark"),
            "benchmarks": list(h.payload.get("benchmarks") or [h.payload.get("benchmark")]), "similarity": h.score}


def _means(pids: list[np.ndarray], scores: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(distinct prompt ids, mean score of each) over several blocks (repeats averaged)."""
    P, S = np.concatenate(pids), np.concatenate(scores).astype(np.float64)
    u, inv = np.unique(P, return_inverse=True)
    return u, np.bincount(inv, weights=S, minlength=len(u)) / np.bincount(inv, minlength=len(u))


def _observed(store, models: list[str], near: list[dict], fitted: dict[str, set] | None = None,
              ids_known: dict | None = None) -> dict:
    """model -> ({prompt hash: mean outcome} over the neighbourhood, {benchmark: (accuracy, n)}, how many distinct
    prompts SQL holds its outcomes on, (the prompt ids of its cells, its mean outcome on each, each cell's benchmark
    code, the benchmark names the codes index), {prompt hash: the benchmarks it was measured on it under} over the
    neighbourhood): one SQL read of
    these models' outcome blocks, grouped in one pass of array operations (no Python step per cell or per block);
    repeats of a prompt (several sources, several names of one model) averaged. ``fitted``: model -> the benchmarks
    its vector was fitted on, for the models whose results changed since: only their blocks of those are read.
    ``ids_known``: the request's memo of prompt ids (:func:`indexer.query.prompt_ids_of`)."""
    from .query import prompt_ids_of

    ids = prompt_ids_of(store, [p["id"] for p in near], ids_known) if near else {}
    by_id = {v: h for h, v in ids.items()}
    blocks = store.outcome_blocks(models)
    if fitted:
        blocks = [b for b in blocks if b[0] not in fitted or b[1] in fitted[b[0]]]
    out = {m: ({}, {}, 0, None, {}) for m in models}
    if not blocks:
        return out
    mcode = {m: i for i, m in enumerate(models)}
    bnames = sorted({b for _, b, _, _ in blocks})
    bcode = {b: i for i, b in enumerate(bnames)}
    sizes = [len(p) for _, _, p, _ in blocks]
    P = np.concatenate([p for _, _, p, _ in blocks]).astype(np.int64)
    S = np.concatenate([s for _, _, _, s in blocks]).astype(np.float64)
    G = np.repeat(np.array([mcode[m] * len(bnames) + bcode[b] for m, b, _, _ in blocks], dtype=np.int64), sizes)
    span = int(P.max()) + 1 if P.size else 1
    u, inv = np.unique(G * span + P, return_inverse=True)  # one cell per (model, benchmark, prompt)
    mean = np.bincount(inv, weights=S, minlength=len(u)) / np.bincount(inv, minlength=len(u))
    group, pid = u // span, u % span
    g, ginv = np.unique(group, return_inverse=True)
    acc = np.bincount(ginv, weights=mean) / np.bincount(ginv)
    n = np.bincount(ginv)
    mids, per_model = np.unique(np.unique((group // len(bnames)) * span + pid) // span, return_counts=True)
    for mi, c in zip(mids.tolist(), per_model.tolist()):  # distinct prompts per model (a prompt in two benchmarks once)
        out[models[mi]] = (out[models[mi]][0], out[models[mi]][1], int(c), None, {})
    for gi, a, k in zip(g.tolist(), acc.tolist(), n.tolist()):
        out[models[gi // len(bnames)]][1][bnames[gi % len(bnames)]] = (a, int(k))
    # each model's cells are contiguous (u is sorted, the model its leading key): its measured prompts and its mean
    # outcome on each as views (a prompt in two benchmarks twice, with the same outcome), no copy per query
    bounds = np.searchsorted(group // len(bnames), np.arange(len(models) + 1))
    for mi in mids.tolist():
        lo, hi = int(bounds[mi]), int(bounds[mi + 1])
        out[models[mi]] = (*out[models[mi]][:3], (pid[lo:hi], mean[lo:hi], group[lo:hi] % len(bnames), bnames),
                           out[models[mi]][4])
    if by_id:
        want = np.fromiter(by_id, dtype=np.int64, count=len(by_id))
        hit = np.flatnonzero(np.isin(pid, want))
        for c in hit.tolist():  # a prompt in two benchmarks: the same outcome either way
            m = out[models[int(group[c]) // len(bnames)]]
            m[0][by_id[int(pid[c])]] = float(mean[c])
            m[4].setdefault(by_id[int(pid[c])], []).append(bnames[int(group[c]) % len(bnames)])
    return out
