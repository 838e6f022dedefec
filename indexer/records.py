"""Canonical records: what every source produces and the store ingests. Plain dataclasses, no I/O.

A source (a folder of lm-eval samples, a Hub dataset, a table) becomes one :class:`SourceBatch`:
the source's identity and revision, the benchmarks it covers, and per-sample :class:`Outcome` rows.
A prompt's identity is the sha256 of its text (:func:`prompt_hash`): the same text is one prompt
wherever it comes from.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any


#: a lone surrogate: bytes that were not UTF-8 (a ``surrogateescape`` decode gives U+DC80-U+DCFF) or a JSON ``\ud800``
#: escape without its pair; no UTF-8 encoder (hashes, SQL drivers, Qdrant) takes one
_SURROGATE = re.compile("[\ud800-\udfff]")


#: Unicode categories of characters that show nothing and that an encoder's tokenizer drops: controls (Cc), format
#: characters (Cf: zero-width space U+200B, joiners, a byte order mark U+FEFF, bidi marks), separators (Z*)
_INVISIBLE = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})


#: what a text :func:`is_blank` refuses though it is not empty (a prompt's message, a filter's)
INVISIBLE_ONLY = "only invisible characters: zero-width or format characters, a byte order mark, controls"


def is_blank(text: str) -> bool:
    """True when ``text`` has no visible character: nothing, whitespace, zero-width or other format characters (a byte
    order mark, U+200B), control characters. Such a text embeds as an empty one (the tokenizer drops them all)."""
    return all(_invisible(c) for c in text)


def _invisible(c: str) -> bool:
    """Whether the character ``c`` shows nothing (whitespace, or a category of :data:`_INVISIBLE`): what
    :func:`is_blank` finds nothing but, and what :func:`strip_invisible` drops at a text's edges."""
    return c.isspace() or unicodedata.category(c) in _INVISIBLE


def strip_invisible(text: str) -> str:
    """``text`` without the whitespace and invisible characters (:func:`is_blank`'s: a zero-width space, a byte order
    mark, controls) at its edges, as ``str.strip`` drops spaces: what a value pasted with them names (``"\u200bmit"``
    is ``mit``); the characters inside it are kept."""
    start, end = 0, len(text)
    while start < end and _invisible(text[start]):
        start += 1
    while end > start and _invisible(text[end - 1]):
        end -= 1
    return text[start:end]


def invisible_only(name: str, value) -> str | None:
    """The refusal of a name or filter ``value`` (of the argument ``name``) holding only invisible characters (a
    zero-width space, a byte order mark; :func:`is_blank`), said as a prompt of them is (:data:`INVISIBLE_ONLY`); None
    for any other value (an empty or whitespace one is the caller's own "non-empty" message)."""
    if not isinstance(value, str) or not value.strip() or not is_blank(value):
        return None
    return f"{name} must have visible text (it holds {INVISIBLE_ONLY}): {value[:40]!r}"


def text_problem(text) -> str | None:
    """What makes a prompt text unusable, or None: empty or only whitespace or invisible characters (:func:`is_blank`),
    a NUL character (PostgreSQL cannot store one, so no database takes it), or bytes that were not UTF-8 (lone
    surrogates from a ``surrogateescape`` decode). Readers reject such rows with their line; the store refuses them the
    same way on SQLite and PostgreSQL."""
    if not isinstance(text, str) or not text.strip():
        return "empty prompt text (only whitespace or nothing)"
    if is_blank(text):
        return f"empty prompt text ({INVISIBLE_ONLY})"
    if "\x00" in text:
        return "prompt text holds a NUL character"
    if _SURROGATE.search(text):
        return "prompt text is not valid UTF-8 (a lone surrogate)"
    return None


#: C0 and C1 control characters (NUL and the surrogates have messages of their own): a line break, a tab, an ESC that
#: starts a terminal escape sequence. No Hub id or benchmark holds one; in a name they break every line that shows it
#: (CLI tables, ``file:line: message`` errors) or rewrite the terminal that prints it
_CONTROL = re.compile("[\x01-\x1f\x7f-\x9f]")

#: the longest model or benchmark name, or source prompt id, the database holds (their SQL columns; PostgreSQL refuses
#: a longer one)
NAME_LIMIT = 512


def name_problem(value, what: str = "a name", limit: int | None = NAME_LIMIT) -> str | None:
    """What makes a model or benchmark name unusable (empty, a NUL character, a lone surrogate, or longer than
    ``limit`` characters: no database takes it; a control character: no line can show it), or None. ``what``: what
    the value is, as the control character's message says it (``"an id"``: a prompt id, held to the same rule, its
    length too: the store refuses an id it would have to cut)."""
    if not isinstance(value, str) or not value.strip():
        return "empty"
    if "\x00" in value:
        return "holds a NUL character"
    if _SURROGATE.search(value):
        return "is not valid Unicode (a lone surrogate, e.g. bytes that were not UTF-8)"
    if m := _CONTROL.search(value):
        return (f"holds a control character (U+{ord(m.group()):04X}: a line break, tab or terminal escape); {what} is "
                "one line of printable text")
    if limit is not None and len(value) > limit:
        return f"is longer than {limit} characters ({len(value)}), more than the database holds"
    return None


def utf8_position(exc: UnicodeDecodeError) -> str:
    """Where a whole file's bytes (``exc.object``, as ``Path.read_text`` decoded them) stop being UTF-8:
    ``byte 0x.. at line N``."""
    line = exc.object[:exc.start].count(b"\n") + 1
    return f"byte {exc.object[exc.start]:#04x} at line {line}"


def parameter_count(count):
    """A model's parameter count, when it is one: a positive integer, else None (unknown). A count of 0 (a Hub repo's
    safetensors of no tensor; a record set that stored one) is no size: before, 0 was stored, and the size penalty's
    log10(0) failed a search on Qdrant Edge and ranked the model apart from its score on the local engine."""
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else None


def prompt_hash(text: str) -> str:
    """Content hash of a prompt text: hex sha256 of its UTF-8 bytes (the text is used as given)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SourceInfo:
    """Where results came from. ``revision`` is a commit sha (Hub) or a content fingerprint (files);
    an unchanged revision is never downloaded or ingested twice."""

    kind: str  # "lm_eval" | "leaderboard" | "table" | ...
    location: str  # local path or "hub:ORG/REPO"
    revision: str | None = None


@dataclass(frozen=True)
class BenchmarkInfo:
    name: str  # normalised, e.g. "bbh/boolean_expressions" or "mmlu_pro/law"
    group: str | None = None  # e.g. "bbh"
    source_task: str | None = None  # the harness task name, e.g. "leaderboard_bbh_boolean_expressions"
    metric: str | None = None  # e.g. "acc_norm"
    num_fewshot: int | None = None
    config: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Outcome:
    """One model's result on one prompt. ``score`` is in [0, 1] (1 = right)."""

    model: str  # Hub repo id ("org/name") or any name a table gives (API models, local checkpoints)
    benchmark: str
    text: str  # the prompt text that is embedded (the question, not the few-shot scaffolding)
    score: float
    revision: str | None = None  # the model's revision, when the source says
    prompt_id: str | None = None  # the source's own id for the prompt (doc_id, prompt_id column, ...)

    @property
    def prompt_hash(self) -> str:
        return prompt_hash(self.text)


class ToDict:
    """A result object's ``to_dict()``: its ``as_dict()`` under the name FindResult, ModelResult and Filters use
    (README: ``result.to_dict()``), for the result classes that have an ``as_dict`` (before, each repeated
    ``to_dict = as_dict``)."""

    __slots__ = ()

    def to_dict(self, *args, **kwargs) -> dict:
        return self.as_dict(*args, **kwargs)


@dataclass(frozen=True)
class RowError(ToDict):
    """A rejected piece of input: file, line (or row) and what is wrong."""

    file: str
    line: int | None
    message: str

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "message": self.message}

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line is not None else f"{self.file}: {self.message}"


@dataclass
class OutcomeTable:
    """Columnar outcomes for big tables (millions of cells): the same meaning as a list of
    :class:`Outcome`, without a Python object per cell.

    Cell ``k`` is ``Outcome(model=models[model_idx[k]], benchmark=benchmarks[prompt_idx[k]],
    text=texts[prompt_idx[k]], score=scores[k], prompt_id=prompt_ids[prompt_idx[k]],
    revision=revisions[model_idx[k]] if revisions else None)``.

    ``model_idx``/``prompt_idx`` are numpy int32 arrays of shape (n,), ``scores`` numpy float64 (n,)
    in [0, 1]. Per-prompt lists (``prompt_ids``, ``benchmarks``, ``texts``) have one entry per prompt.
    """

    models: list[str]
    prompt_ids: list[str | None]
    benchmarks: list[str]
    texts: list[str]
    model_idx: Any
    prompt_idx: Any
    scores: Any
    revisions: list[str | None] | None = None

    def __len__(self) -> int:
        return len(self.scores)

    def __iter__(self) -> Iterator[Outcome]:
        revs = self.revisions
        for m, p, s in zip(self.model_idx.tolist(), self.prompt_idx.tolist(), self.scores.tolist()):
            yield Outcome(
                model=self.models[m],
                benchmark=self.benchmarks[p],
                text=self.texts[p],
                score=s,
                revision=revs[m] if revs else None,
                prompt_id=self.prompt_ids[p],
            )

    @classmethod
    def _of_keys(cls, models, prompts, model_idx, prompt_idx, scores) -> "OutcomeTable":
        """The table of the model keys ``(model, revision)`` and prompt keys ``(benchmark, text, prompt_id)`` in
        their order (the indexes of the cells)."""
        return cls(models=[m for m, _ in models], revisions=[r for _, r in models], prompt_ids=[k[2] for k in prompts],
                   benchmarks=[k[0] for k in prompts], texts=[k[1] for k in prompts], model_idx=model_idx,
                   prompt_idx=prompt_idx, scores=scores)

    @classmethod
    def from_outcomes(cls, outcomes: Iterable[Outcome]) -> "OutcomeTable":
        """Columns from Outcome rows (prompts keyed by (benchmark, text, prompt_id); models by (model, revision))."""
        import numpy as np

        models: dict[tuple, int] = {}
        prompts: dict[tuple, int] = {}
        mi: list[int] = []
        pi: list[int] = []
        sc: list[float] = []
        for o in outcomes:
            mi.append(models.setdefault((o.model, o.revision), len(models)))
            pi.append(prompts.setdefault((o.benchmark, o.text, o.prompt_id), len(prompts)))
            sc.append(float(o.score))
        return cls._of_keys(models, prompts, np.asarray(mi, dtype=np.int32), np.asarray(pi, dtype=np.int32),
                            np.asarray(sc, dtype=np.float64))

    @staticmethod
    def concat(tables: "list[OutcomeTable]") -> "OutcomeTable":
        """One table from several (models and prompts re-indexed; nothing merged)."""
        import numpy as np

        models: dict[tuple, int] = {}
        prompts: dict[tuple, int] = {}
        mi, pi, sc = [], [], []
        for t in tables:
            revs = t.revisions or [None] * len(t.models)
            mmap = np.asarray([models.setdefault((m, r), len(models)) for m, r in zip(t.models, revs)], dtype=np.int32)
            pmap = np.asarray(
                [prompts.setdefault(k, len(prompts)) for k in zip(t.benchmarks, t.texts, t.prompt_ids)], dtype=np.int32
            )
            mi.append(mmap[t.model_idx] if len(mmap) else np.zeros(0, np.int32))
            pi.append(pmap[t.prompt_idx] if len(pmap) else np.zeros(0, np.int32))
            sc.append(np.asarray(t.scores, dtype=np.float64))
        return OutcomeTable._of_keys(models, prompts, np.concatenate(mi) if mi else np.zeros(0, np.int32),
                                     np.concatenate(pi) if pi else np.zeros(0, np.int32),
                                     np.concatenate(sc) if sc else np.zeros(0, np.float64))

    def merged(self) -> "OutcomeTable":
        """The same prompt text is one prompt: copies of a text (within a benchmark) become one prompt
        (the first copy's prompt_id) and a model's outcomes on the copies are averaged into one
        graded score. Result: at most one cell per (model, benchmark, text)."""
        import numpy as np

        key_of: dict[tuple, int] = {}
        pmap = np.asarray(
            [key_of.setdefault((b, t), len(key_of)) for b, t in zip(self.benchmarks, self.texts)], dtype=np.int64
        )
        first = {}
        for old, new in enumerate(pmap.tolist()):
            first.setdefault(new, old)
        n_new = len(key_of)
        new_p = pmap[self.prompt_idx] if len(pmap) else np.zeros(0, np.int64)
        key = self.model_idx.astype(np.int64) * max(n_new, 1) + new_p
        uniq, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
        sums = np.bincount(inverse, weights=self.scores, minlength=len(uniq))
        olds = [first[i] for i in range(n_new)]
        return OutcomeTable(
            models=list(self.models),
            revisions=list(self.revisions) if self.revisions else None,
            prompt_ids=[self.prompt_ids[o] for o in olds],
            benchmarks=[self.benchmarks[o] for o in olds],
            texts=[self.texts[o] for o in olds],
            model_idx=(uniq // max(n_new, 1)).astype(np.int32),
            prompt_idx=(uniq % max(n_new, 1)).astype(np.int32),
            scores=sums / counts,
        )


@dataclass
class SourceBatch:
    """Everything read from one source, ready to be stored whole (or not at all).

    Outcomes come as :class:`Outcome` rows (``outcomes``), as a columnar :class:`OutcomeTable`
    (``table``, used by big plain tables), or both; :meth:`iter_outcomes` yields all of them and
    :meth:`to_table` gives one columnar table.
    """

    source: SourceInfo
    benchmarks: dict[str, BenchmarkInfo] = field(default_factory=dict)
    outcomes: list[Outcome] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)
    table: OutcomeTable | None = None
    skipped: int = 0  # input rows dropped without error (exact duplicates, superseded runs, ...)
    warnings: list[str] = field(default_factory=list)  # what the reader read by a guess or passed over, worth a word

    @property
    def n_outcomes(self) -> int:
        return len(self.outcomes) + (len(self.table) if self.table is not None else 0)

    def iter_outcomes(self) -> Iterator[Outcome]:
        yield from self.outcomes
        if self.table is not None:
            yield from self.table

    def to_table(self) -> OutcomeTable:
        """All outcomes as one columnar table (no merging; see :meth:`OutcomeTable.merged`)."""
        parts = []
        if self.outcomes:
            parts.append(OutcomeTable.from_outcomes(self.outcomes))
        if self.table is not None:
            parts.append(self.table)
        if len(parts) == 1:
            return parts[0]
        return OutcomeTable.concat(parts)
