"""Prompt covariates beside the embedding: fixed functions of a prompt's text, no fitting, no I/O.

Sets are named in a space's params (``features``) so that a change of a set makes a new space:
``text-length-v1`` (method ``auto-text``, below) and the answer-option split with its covariates
(:func:`split_options` / :func:`mc_covariates`): ``multiple-choice-v2`` (method ``auto-mc``) and its predecessor
``multiple-choice-v1`` (still read; :mod:`indexer.represent` builds the rows of both and says how they differ).

The method ``auto-text`` (``TASKSPACE_METHOD=auto-text``, :mod:`indexer.space`) appends these columns to each
prompt's embedding and leaves their coefficients unpenalised (the solver's ``free`` option).
A model is then stored as ``[e_i, f_i, c_i]`` and a query as ``[q, text_features(query), 1]``
(:func:`indexer.represent.lift`), so an inner product is still the model's predicted score.

Why these two: MiniLM embeddings say little about how long and how involved a prompt is (the encoder truncates
long prompts), and length predicts difficulty on both evaluation datasets, out of sample too. A larger set
(digits, symbols, options, word length) helped on mmlu_pro but hurt leave-one-benchmark-out on
evalarena_code; docs/RESULTS.md has the numbers.

Not the default: the covariates' coefficients are unpenalised and linear, so a query far outside the indexed
prompts' lengths (a one-line question against 10-option multiple-choice prompts) is extrapolated, and the
ranking is then driven by how length-sensitive each model was on the benchmarks rather than by the prompt's
content (seen on the bundled sample: a one-line calculus question ranked Phi-3-mini first with a predicted
score of +1.6; clipping the query's covariates to the indexed range still ranked it first).
``auto`` has no such term.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

__all__ = ["TEXT_FEATURES", "MULTIPLE_CHOICE", "MULTIPLE_CHOICE_V2", "text_features", "n_features", "question_stem", "split_options",
           "mc_covariates"]

#: the covariate sets' names, recorded in a space's params so a later change of a set makes a new space
TEXT_FEATURES = "text-length-v1"
MULTIPLE_CHOICE = "multiple-choice-v1"
#: the same covariates, with a prompt's two answer formats (with options / without) kept apart in the index so that
#: a model is never extrapolated to a format it was not observed on (:mod:`indexer.represent`)
MULTIPLE_CHOICE_V2 = "multiple-choice-v2"
_NAMES = ("log1p(characters)", "log1p(lines)")
_MC_NAMES = ("is_mc", "is_mc*log1p(question characters)", "is_mc*log1p(option characters)", "is_mc*log(options)")
_SETS = {TEXT_FEATURES: _NAMES, MULTIPLE_CHOICE: _MC_NAMES, MULTIPLE_CHOICE_V2: _MC_NAMES}
_OPTION = re.compile(r"^\s*\(?([A-Z])[.)]\s")


def n_features(name: str | None) -> int:
    """Number of covariate columns of the set ``name`` (0 for None)."""
    if not name:
        return 0
    if name not in _SETS:
        from .errors import ConfigError

        raise ConfigError(f"unknown prompt feature set {name!r}; this version knows {', '.join(_SETS)} "
                          "(the space was built by another version of taskspace: re-index)")
    return len(_SETS[name])


def text_features(texts: Sequence[str]) -> np.ndarray:
    """(n, 2) float32: ``log(1 + characters)`` and ``log(1 + lines)`` of each text."""
    out = np.empty((len(texts), len(_NAMES)), dtype=np.float32)
    for i, t in enumerate(texts):
        t = t or ""
        out[i, 0] = np.log1p(len(t))
        out[i, 1] = np.log1p(t.count("\n") + 1 if t else 0)
    return out


def _letter(line: str) -> str | None:
    m = _OPTION.match(line)
    return m.group(1) if m else None


def _option_block(lines: list[str]) -> int | None:
    """Index of the first line of the answer-option block (a line ``A.``/``A)`` followed by ``B.``/``B)``) that has
    some question text before it; None without one."""
    for i in range(1, len(lines) - 1):
        if _letter(lines[i]) == "A" and _letter(lines[i + 1]) == "B" and "\n".join(lines[:i]).strip():
            return i
    return None


def question_stem(text: str) -> str:
    """The question part of a multiple-choice prompt: everything before its ``A.``/``B.`` option lines (the
    text itself when it has no such block, or nothing before it)."""
    return split_options(text)[0]


def split_options(text: str) -> tuple[str, str | None]:
    """``(question, options)`` of a prompt: the text before its answer-option block and the block (from its
    ``A.`` line to the end), both stripped; ``(text, None)`` for a prompt without one (code, open questions)."""
    lines = text.split("\n")
    i = _option_block(lines)
    if i is None:
        return text, None
    return "\n".join(lines[:i]).strip(), "\n".join(lines[i:]).strip()


def mc_covariates(questions: Sequence[str], options: Sequence[str | None]) -> np.ndarray:
    """(n, 4) float64 covariates of the ``multiple-choice-v1`` set, from :func:`split_options`' parts:
    ``[is_mc, is_mc log1p(question characters), is_mc log1p(option characters), is_mc log(number of options)]``,
    all 0 for a prompt without options (``None``), so on data without options they are constant and drop out
    with the intercept. The options are the block's lines starting with a letter (``A.``, ``B)`` ...)."""
    out = np.zeros((len(questions), len(_MC_NAMES)))
    for i, (q, o) in enumerate(zip(questions, options)):
        if o is None:
            continue
        k = sum(_letter(line) is not None for line in o.split("\n"))
        out[i] = (1.0, np.log1p(len(q)), np.log1p(len(o)), np.log(max(k, 1)))
    return out
