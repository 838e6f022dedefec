"""The bundled-sample demo: embed the sample's prompts, fit every model, rank models for prompts.

Reads the bundled real MMLU-Pro extract (``indexer/data/sample``), so it needs no database and no network.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SAMPLE_DIR = Path(__file__).parent / "data" / "sample"

DEFAULT_PROMPTS = [
    "A patient presents with chest pain radiating to the left arm. Which enzyme is most specific for myocardial infarction?",
    "Compute the derivative of x^3 sin(x) with respect to x.",
    "Under contract law, is a promise without consideration enforceable?",
]


def load_sample(folder: Path = SAMPLE_DIR) -> tuple[list[str], list[str], np.ndarray]:
    """(prompt texts in the prompts file's order, model names sorted, S) from the table reader, with
    S (models, prompts) in {0, 1}, NaN where not observed."""
    from .outcomes import from_batch
    from .records import prompt_hash
    from .sources import tables

    m = from_batch(tables.read_table(folder))  # models sorted; prompts in the order the outcomes name them
    prompts, _ = tables.read_prompts(tables.resolve_table_files(folder)[1])  # {prompt_id: (benchmark, text)}
    column = {h: j for j, h in enumerate(m.prompt_hashes)}
    order = [column[prompt_hash(text)] for _, text in prompts.values()]
    return [m.texts[j] for j in order], m.models, np.ascontiguousarray(m.scores[:, order])


def run_demo(queries: list[str], top: int = 5) -> dict:
    """Fit the sample and rank its models for each query prompt (``top`` models each, at least 1)."""
    from .errors import InputError

    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise InputError(f"must be an integer of at least 1, not {top!r}", item="top")
    from .records import text_problem

    for i, q in enumerate(queries):  # before the sample is fitted; a NUL would have been embedded as text
        bad = text_problem(q)
        if bad:
            raise InputError(f"{bad}; give the prompt as text", item=f"queries[{i}]")
    from .encoder import get_encoder
    from .represent import fill_from_neighbours, prompt_formats, query_rows, rows
    from .space import configured

    texts, models, S = load_sample()
    enc = get_encoder()
    space = configured()  # TASKSPACE_METHOD
    # the rows of the method's representation (indexer.represent): embeddings, and covariates with a feature set
    X = rows(texts, enc.encode, space)
    solver = space.solver().fit(X, S, model_ids=models, formats=prompt_formats(X, space))
    # a question without its answer options takes those of the nearest sample questions (auto-mc)
    scores = solver.predict(fill_from_neighbours(query_rows(queries, enc.encode, space), X))  # (queries, models)
    acc = np.nanmean(S, axis=1)
    out = []
    for q, row in zip(queries, scores):
        order = np.argsort(-row)[:top]
        out.append(
            {
                "prompt": q,
                "ranking": [{"model": models[i], "score": float(row[i]), "accuracy": float(acc[i])} for i in order],
            }
        )
    return {"encoder": enc.id, "models": len(models), "prompts": len(texts), "queries": out}
