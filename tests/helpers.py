"""Helpers shared by several test modules (fixtures live in conftest.py): writing table sources, indexing them,
and a synthetic SourceBatch. Test modules import them as ``from helpers import ...`` (pytest puts tests/ on
sys.path); no test module imports another."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from indexer.records import Outcome, SourceBatch, SourceInfo

TOPICS = ["algebra", "biology", "contract law", "chemistry", "poetry", "astronomy", "economics", "history"]


def write_table(folder: Path, benchmark: str, models: dict[str, list[int]], n: int, offset: int = 0) -> list[str]:
    """A long-form table source: prompts.jsonl + outcomes.csv. models: name -> outcomes (0/1) per prompt."""
    texts = [f"Question {offset + j} on {TOPICS[(offset + j) % len(TOPICS)]}: what is item {j} of {benchmark}?" for j in range(n)]
    write_source(folder, benchmark, texts, models)
    return texts


def write_source(folder: Path, benchmark: str, texts: list[str], outcomes: dict) -> None:
    """prompts.jsonl (ids ``<benchmark>-<j>``) + outcomes.csv; outcomes: model -> 0/1 per prompt."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "prompts.jsonl", "w") as f:
        for j, t in enumerate(texts):
            f.write(json.dumps({"prompt_id": f"{benchmark}-{j}", "benchmark": benchmark, "text": t}) + "\n")
    with open(folder / "outcomes.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "prompt_id", "correct"])
        for m, ys in outcomes.items():
            for j, y in enumerate(ys):
                w.writerow([m, f"{benchmark}-{j}", int(y)])


def index_sources(encoder, sources: list[tuple[Path, str, list[str], dict]]):
    """Write each ``(folder, benchmark, texts, outcomes)`` source (:func:`write_source`) and index them all in one
    pass into a fresh store and local Qdrant (the settings in force: TASKSPACE_METHOD ...); returns
    ``(store, vectors)`` for the caller to close."""
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    for folder, benchmark, texts, outs in sources:
        write_source(folder, benchmark, texts, outs)
    store, vectors = open_store(), VectorStore.from_settings()
    r = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(folder)) for folder, *_ in sources])
    assert r.status == "ok", r.errors
    return store, vectors


def outcomes(rng, names, n):
    """Random 0/1 outcomes: model name -> n outcomes."""
    return {m: rng.integers(0, 2, n).tolist() for m in names}


def model_vectors(indexer) -> dict[str, np.ndarray]:
    """The stored model vectors of an Indexer's only space, by model."""
    (space,) = indexer.store.list_spaces()
    return {mv.model: mv.vector for mv in indexer.store.load_model_vectors(space.id)}


BATCH_MODELS = [f"org/m{i}" for i in range(5)]


def source_batch(location, revision="r1", n_prompts=20, score=1.0) -> SourceBatch:
    """A table source of :data:`BATCH_MODELS` x ``n_prompts`` prompts (three benchmarks), every score ``score``."""
    outs = [Outcome(m, f"bench{j % 3}", f"{location} question {j}", score, prompt_id=str(j))
            for m in BATCH_MODELS for j in range(n_prompts)]
    return SourceBatch(SourceInfo("table", location, revision), {}, outs)
