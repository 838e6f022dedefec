"""What a held-out prompt is queried with. Pure text functions, no I/O.

The paper's protocol scores each held-out prompt from its own full text, so the query always looks like the
indexed prompts. People asking taskspace "which model for this?" usually type the question alone. The
``stem`` form measures that case on multiple-choice data: the held-out prompt is queried with its question
(the text before its answer options) and judged on the outcomes of the full prompt, which the models answered.

- ``full``: the prompt's text (the paper's protocol).
- ``stem``: the text before the first block of answer options, i.e. a line starting ``A.`` or ``A)`` followed
  by a line starting ``B.`` / ``B)``; a prompt without such a block keeps its full text (code prompts, open
  questions), and so does one whose question part would be empty.
"""

from __future__ import annotations

from typing import Sequence

from ..features import question_stem

__all__ = ["QUERY_FORMS", "question_stem", "query_texts"]

QUERY_FORMS = ("full", "stem")


def query_texts(texts: Sequence[str], form: str) -> list[str]:
    """The query text of every prompt under ``form`` (one of :data:`QUERY_FORMS`)."""
    if form == "full":
        return list(texts)
    if form == "stem":
        return [question_stem(t) for t in texts]
    from ..errors import InputError

    raise InputError(f"unknown query form {form!r}; use one of {', '.join(QUERY_FORMS)}")
