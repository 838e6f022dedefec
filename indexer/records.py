"""Canonical records: what every source produces and the store ingests. Plain dataclasses, no I/O.

A source (a folder of lm-eval samples, a Hub dataset, a table) becomes one :class:`SourceBatch`:
the source's identity and revision, the benchmarks it covers, and per-sample :class:`Outcome` rows.
A prompt's identity is the sha256 of its text (:func:`prompt_hash`): the same text is one prompt
wherever it comes from.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


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


@dataclass(frozen=True)
class RowError:
    """A rejected piece of input: file, line (or row) and what is wrong."""

    file: str
    line: int | None
    message: str

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "message": self.message}

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line is not None else f"{self.file}: {self.message}"


@dataclass
class SourceBatch:
    """Everything read from one source, ready to be stored whole (or not at all)."""

    source: SourceInfo
    benchmarks: dict[str, BenchmarkInfo] = field(default_factory=dict)
    outcomes: list[Outcome] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)
