"""The bundled-sample demo: index the sample into a throwaway home and answer prompts as ``taskspace search`` does.

Reads the bundled real MMLU-Pro extract (``indexer/data/sample``), so it needs no setup, no configured store and no
network: the sample is indexed by the same pass as ``taskspace index`` (identity rules, calibration, uncertainty)
into a temporary SQLite file and embedded index, which are removed afterwards (``TASKSPACE_HOME`` is not touched;
the embedding cache is the configured one), and each prompt is answered by :func:`indexer.find.find_models`. So the
demo shows what search shows (Hub ids, calibrated probabilities, intervals); before, it fitted the solver in memory
and printed raw model names and raw solver scores, numbers ``taskspace search`` never shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

SAMPLE_DIR = Path(__file__).parent / "data" / "sample"

DEFAULT_PROMPTS = [
    "A patient presents with chest pain radiating to the left arm. Which enzyme is most specific for myocardial infarction?",
    "Compute the derivative of x^3 sin(x) with respect to x.",
    "Under contract law, is a promise without consideration enforceable?",
]


@dataclass
class DemoResult:
    """What :func:`run_demo` answers: the sample's size, the encoder, and per prompt the :class:`~indexer.find.FindResult`
    that ``taskspace search`` would give on an index of the sample."""

    encoder: str
    models: int
    prompts: int
    queries: list[tuple[str, object]] = field(default_factory=list)  # (prompt, FindResult)

    def to_dict(self) -> dict:
        return {"encoder": self.encoder, "models": self.models, "prompts": self.prompts,
                "queries": [{"prompt": q, **r.to_dict()} for q, r in self.queries]}


def run_demo(queries: list[str] | str, top: int = 5) -> DemoResult:
    """Index the sample into a temporary home and rank its models for each query prompt (``top`` models each, at
    least 1), as ``taskspace search PROMPT -k top`` ranks them there. ``queries``: the prompts (a list, or one
    prompt as a string, as :func:`indexer.find_models` takes it)."""
    import dataclasses
    import tempfile

    from .errors import IndexerError, InputError

    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise InputError(f"must be an integer of at least 1, not {top!r}", item="top")
    from .find import _prompts, find_models

    if queries is None:
        raise InputError("queries must be a string or a list of strings, not None", item="queries")
    # checked as find_models checks its prompts (one string is one prompt; none, or a set, is refused), and before
    # the sample is indexed, so that a query that cannot be answered costs no indexing
    queries = _prompts(queries, "queries")
    from .config import get_settings, sqlite_url
    from .pipeline import Indexer
    from .sourcelist import SourceSpec
    from .store.sql import Store
    from .store.vectors import VectorStore

    with tempfile.TemporaryDirectory(prefix="taskspace-demo-") as tmp:
        # the configured settings (method, lambda, encoder, cache) in a home of its own: SQLite and the embedded index
        settings = dataclasses.replace(get_settings(), home=Path(tmp), database_url=sqlite_url(Path(tmp) / "demo.db"),
                                       qdrant_url=None, qdrant_api_key=None)
        store = Store(settings.database_url, upgrade=True)
        vectors = None
        try:
            vectors = VectorStore(path=settings.qdrant_path, engine=settings.qdrant_engine)
            indexer = Indexer(store, vectors, settings=settings, fetch_metadata=False)
            report = indexer.run([SourceSpec(str(SAMPLE_DIR))])
            if report.status != "ok":  # the bundled sample indexes cleanly; anything else is worth the whole story
                raise IndexerError(f"indexing the bundled sample failed ({report.status}): {report.errors[:3]}")
            counts = store.counts()
            out = DemoResult(indexer.encoder.id, counts["models"], counts["prompts"])
            for q in queries:
                out.queries.append((q, find_models([q], k=top, store=store, vectors=vectors)))
            return out
        finally:
            if vectors is not None:
                vectors.close()
            store.close()
