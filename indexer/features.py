"""Prompt covariates beside the embedding: fixed functions of a prompt's text, no fitting, no I/O.

The method ``auto-text`` (``TASKSPACE_METHOD=auto-text``, see :func:`indexer.solver.method_options`) appends these
columns to each prompt's embedding and leaves their coefficients unpenalised (the solver's ``free`` option).
A model is then stored as ``[e_i, f_i, c_i]`` and a query as ``[q, text_features(query), 1]``
(:func:`indexer.sync.lift`), so an inner product is still the model's predicted score.

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

from typing import Sequence

import numpy as np

__all__ = ["TEXT_FEATURES", "text_features", "n_features"]

#: the covariate set's name, recorded in a space's params so a later change of the set makes a new space
TEXT_FEATURES = "text-length-v1"
_NAMES = ("log1p(characters)", "log1p(lines)")


def n_features(name: str | None) -> int:
    """Number of covariate columns of the set ``name`` (0 for None)."""
    if not name:
        return 0
    if name != TEXT_FEATURES:
        from .errors import ConfigError

        raise ConfigError(f"unknown prompt feature set {name!r}; this version knows {TEXT_FEATURES!r}")
    return len(_NAMES)


def text_features(texts: Sequence[str]) -> np.ndarray:
    """(n, 2) float32: ``log(1 + characters)`` and ``log(1 + lines)`` of each text."""
    out = np.empty((len(texts), len(_NAMES)), dtype=np.float32)
    for i, t in enumerate(texts):
        t = t or ""
        out[i, 0] = np.log1p(len(t))
        out[i, 1] = np.log1p(t.count("\n") + 1 if t else 0)
    return out
