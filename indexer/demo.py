"""The bundled-sample demo: embed the sample's prompts, fit every model, rank models for prompts.

Reads the bundled real MMLU-Pro extract (``indexer/data/sample``), so it needs no database and no network.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

SAMPLE_DIR = Path(__file__).parent / "data" / "sample"

DEFAULT_PROMPTS = [
    "A patient presents with chest pain radiating to the left arm. Which enzyme is most specific for myocardial infarction?",
    "Compute the derivative of x^3 sin(x) with respect to x.",
    "Under contract law, is a promise without consideration enforceable?",
]


def load_sample(folder: Path = SAMPLE_DIR) -> tuple[list[dict], list[str], np.ndarray]:
    """(prompts, model names, S) with S (models, prompts) in {0, 1}, NaN where not observed."""
    with open(folder / "prompts.jsonl", encoding="utf-8") as f:
        prompts = [json.loads(line) for line in f if line.strip()]
    index = {p["prompt_id"]: j for j, p in enumerate(prompts)}
    cells: dict[str, dict[int, float]] = {}
    with open(folder / "outcomes.csv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            cells.setdefault(row["model"], {})[index[row["prompt_id"]]] = float(row["correct"])
    models = sorted(cells)
    S = np.full((len(models), len(prompts)), np.nan)
    for i, m in enumerate(models):
        for j, v in cells[m].items():
            S[i, j] = v
    return prompts, models, S


def run_demo(queries: list[str], top: int = 5) -> dict:
    """Fit the sample and rank its models for each query prompt."""
    from .encoder import get_encoder
    from .represent import fill_from_neighbours, query_rows, rows
    from .space import configured

    prompts, models, S = load_sample()
    enc = get_encoder()
    texts = [p["text"] for p in prompts]
    space = configured()  # TASKSPACE_METHOD
    # the rows of the method's representation (indexer.represent): embeddings, and covariates with a feature set
    X = rows(texts, enc.encode, space)
    solver = space.solver().fit(X, S, model_ids=models)
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
    return {"encoder": enc.id, "models": len(models), "prompts": len(prompts), "queries": out}
