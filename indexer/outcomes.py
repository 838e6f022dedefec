"""An in-memory outcome matrix (models x prompts) built from a :class:`~indexer.records.SourceBatch`. No I/O.

Prompts are identified by content hash (:func:`~indexer.records.prompt_hash`): the same text read twice (two
ids, two benchmarks, two files) is one prompt, and a model's outcomes on the copies are averaged. A cell a model
was never observed on is ``NaN`` -- never "wrong".

Each prompt keeps its benchmark (the first one it was seen in) and any extra per-prompt fields the caller
supplies (e.g. ``src`` of MMLU-Pro), so an evaluation can group prompts by any of them.

The SQL store's bulk read is the same idea keyed by database ids (:class:`indexer.store.sql.StoredOutcomes`);
the fields both have carry the same names (``models``, ``prompt_hashes``, ``scores``, ``benchmarks``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from .errors import InputError, counted, noun
from .records import SourceBatch, prompt_hash

__all__ = ["OutcomeMatrix", "from_batch", "from_arrays", "merge"]


@dataclass
class OutcomeMatrix:
    """Outcomes of M models on N distinct prompts.

    Attributes
    ----------
    models : list of M model names (sorted; with ``model_keys``, the keys in the order of their first name).
    texts : list of N prompt texts (order of first appearance).
    prompt_hashes : list of N content hashes of ``texts``.
    scores : (M, N) float64, outcome in [0, 1] (mean over copies), NaN where not observed.
    benchmarks : (N,) object array, the prompt's benchmark.
    fields : extra per-prompt labels, name -> (N,) object array (None where a prompt lacks the field).
    copies : (N,) int, how many (prompt id, benchmark) copies of the text were read.
    errors : rows the reader rejected (:class:`~indexer.records.RowError`), carried over from the batch.
    """

    models: list[str]
    texts: list[str]
    prompt_hashes: list[str]
    scores: np.ndarray
    benchmarks: np.ndarray
    fields: dict[str, np.ndarray] = field(default_factory=dict)
    copies: np.ndarray | None = None
    errors: list = field(default_factory=list)

    @property
    def shape(self) -> tuple[int, int]:
        return self.scores.shape

    @property
    def observed(self) -> np.ndarray:
        """(M, N) bool."""
        return ~np.isnan(self.scores)

    @property
    def density(self) -> float:
        return float(self.observed.mean()) if self.scores.size else 0.0

    def labels(self, group_by: str | None = None) -> np.ndarray:
        """(N,) group labels: the benchmark (``None``/``"benchmark"``) or an extra field.

        Raises :class:`InputError` naming the available fields when ``group_by`` is unknown or missing on
        some prompts.
        """
        if group_by in (None, "benchmark"):
            return self.benchmarks
        if group_by not in self.fields:
            have = ", ".join(["benchmark", *sorted(self.fields)])
            raise InputError(f"prompts have no field {group_by!r} to group by; available: {have}")
        values = self.fields[group_by]
        missing = np.array([v is None or v == "" for v in values])
        if missing.any():  # named by benchmark and text: the prompt's content hash (named before) says nothing
            where = sorted({str(b) for b in self.benchmarks[missing]}, key=str)
            j = int(np.flatnonzero(missing)[0])
            text = " ".join(self.texts[j].split())
            raise InputError(
                f"{counted(int(missing.sum()), 'prompt')} {noun(int(missing.sum()), 'lacks', 'lack')} the field {group_by!r} "
                f"(in {counted(len(where), 'benchmark')}: "
                f"{', '.join(where[:5])}{', ...' if len(where) > 5 else ''}; the first: "
                f"{text[:60] + '...' if len(text) > 60 else text!r}); group by a field every prompt has")
        return values

    def subset(self, models: np.ndarray | None = None, prompts: np.ndarray | None = None) -> "OutcomeMatrix":
        """A copy restricted to the given model / prompt indices (or boolean masks)."""
        mi = np.arange(len(self.models)) if models is None else np.flatnonzero(_as_mask(models, len(self.models)))
        pj = np.arange(len(self.texts)) if prompts is None else np.flatnonzero(_as_mask(prompts, len(self.texts)))
        return OutcomeMatrix(
            models=[self.models[i] for i in mi],
            texts=[self.texts[j] for j in pj],
            prompt_hashes=[self.prompt_hashes[j] for j in pj],
            scores=self.scores[np.ix_(mi, pj)],
            benchmarks=self.benchmarks[pj],
            fields={k: v[pj] for k, v in self.fields.items()},
            copies=None if self.copies is None else self.copies[pj],
        )


def _as_mask(sel: np.ndarray, n: int) -> np.ndarray:
    sel = np.asarray(sel)
    if sel.dtype == bool:
        return sel
    mask = np.zeros(n, dtype=bool)
    mask[sel] = True
    return mask


def from_batch(batch: SourceBatch, prompt_fields: Mapping[str, Mapping[str, object]] | None = None,
               model_keys: Callable[[list[str]], Mapping[str, str]] | None = None) -> OutcomeMatrix:
    """Build the matrix from a batch's outcomes (its ``outcomes`` rows and/or columnar ``table``).

    Parameters
    ----------
    batch : the outcomes (model, benchmark, text, score in [0, 1]).
    prompt_fields : optional extra labels, keyed by prompt hash or by the source's ``prompt_id``, each a
        dict of field -> value (e.g. ``{"src": "ori_mmlu-law"}``). Looked up by hash first, then by id.
    model_keys : optional, the batch's model names -> {name: the model it is} (as an index keys it:
        :func:`indexer.identity.resolve_many`); names of one model are one row, their outcomes on a prompt averaged.
        Default: each name its own model.

    Raises :class:`InputError` if the batch has no outcomes or a score is outside [0, 1].
    """
    if not batch.n_outcomes:
        raise InputError("no outcomes to evaluate", file=batch.source.location)
    t = batch.to_table()
    scores = np.asarray(t.scores, dtype=np.float64)
    bad = ~((scores >= 0.0) & (scores <= 1.0))  # also catches NaN
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        m, p = t.models[int(t.model_idx[k])], int(t.prompt_idx[k])
        raise InputError(
            f"model {m}, prompt {t.prompt_ids[p] or prompt_hash(t.texts[p])[:12]}: score {float(scores[k])!r} is outside "
            "[0, 1]; outcomes are 0/1 or a graded score in [0, 1]",
            file=batch.source.location,
        )
    # prompts: one per distinct text (content hash), first-seen benchmark and id
    prompt_index: dict[str, int] = {}
    texts: list[str] = []
    hashes: list[str] = []
    benchmarks: list[str] = []
    ids: list[str | None] = []
    pmap = np.empty(len(t.texts), dtype=np.int64)
    for p, text in enumerate(t.texts):
        h = prompt_hash(text)
        j = prompt_index.get(h)
        if j is None:
            j = prompt_index[h] = len(texts)
            texts.append(text)
            hashes.append(h)
            benchmarks.append(t.benchmarks[p])
            ids.append(t.prompt_ids[p])
        pmap[p] = j
    # models: by name (sorted), or by their ``model_keys`` in the order of their first name (so that a source whose
    # names are all distinct keeps its rows' order, on which ties and the trained peers' seeding depend); revisions
    # of one name are one model here
    names = sorted(set(t.models), key=str)
    keys = dict(model_keys(names)) if model_keys is not None else {}
    order = list(dict.fromkeys(keys.get(m, m) for m in names))
    row_of = {m: i for i, m in enumerate(order)}
    mmap = np.asarray([row_of[keys.get(m, m)] for m in t.models], dtype=np.int64)
    M, N = len(order), len(texts)
    rows = mmap[np.asarray(t.model_idx, dtype=np.int64)]
    cols = pmap[np.asarray(t.prompt_idx, dtype=np.int64)]
    flat = rows * N + cols
    total = np.bincount(flat, weights=scores, minlength=M * N)
    count = np.bincount(flat, minlength=M * N)
    with np.errstate(invalid="ignore", divide="ignore"):
        S = np.where(count > 0, total / np.maximum(count, 1), np.nan).reshape(M, N)
    n_copies = np.bincount(pmap, minlength=N).astype(np.int64)  # table prompts (benchmark, text, id) per text
    fields = _extra_fields(hashes, ids, prompt_fields) if prompt_fields else {}
    return OutcomeMatrix(order, texts, hashes, S, np.array(benchmarks, dtype=object), fields, n_copies, list(batch.errors))


def _extra_fields(hashes, ids, prompt_fields) -> dict[str, np.ndarray]:
    per_prompt = [prompt_fields.get(h) or (prompt_fields.get(i) if i is not None else None) or {} for h, i in zip(hashes, ids)]
    names = sorted({k for d in per_prompt for k in d})
    out = {}
    for name in names:
        out[name] = np.array([None if d.get(name) is None else str(d.get(name)) for d in per_prompt], dtype=object)
    return out


def from_arrays(scores: np.ndarray, texts: list[str], benchmarks, models: list[str] | None = None,
                fields=None) -> OutcomeMatrix:
    """A matrix from arrays (tests, synthetic data): ``scores`` (M, N), ``texts`` N distinct strings,
    ``benchmarks`` (N,) group labels."""
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim != 2 or S.shape[1] != len(texts) or len(benchmarks) != len(texts):
        raise InputError(f"outcomes {S.shape} do not match {len(texts)} texts and {len(benchmarks)} group labels")
    models = list(models) if models is not None else [f"m{i}" for i in range(S.shape[0])]
    return OutcomeMatrix(
        models=models,
        texts=list(texts),
        prompt_hashes=[prompt_hash(t) for t in texts],
        scores=S,
        benchmarks=np.array(list(benchmarks), dtype=object),
        fields={k: np.array(list(v), dtype=object) for k, v in (fields or {}).items()},
        copies=np.ones(len(texts), dtype=np.int64),
    )


def merge(matrices: Sequence[OutcomeMatrix], names: Sequence[str]) -> tuple[OutcomeMatrix, np.ndarray]:
    """Several matrices pooled into one, as one index holds several sources: models merged by name (sorted; the
    matrices' model names are their index keys, :func:`indexer.evaluate.load_matrix`),
    prompts by text (content hash; a prompt keeps the benchmark and fields of the first matrix that has it), and
    a model's outcomes on a prompt in two matrices averaged. Returns (the matrix, (N,) the name in ``names`` of the
    matrix each prompt first came from)."""
    if len(matrices) != len(names) or not matrices:
        raise InputError(f"{len(matrices)} matrices for {len(names)} names")
    models = sorted({m for om in matrices for m in om.models}, key=str)
    row_of = {m: i for i, m in enumerate(models)}
    col_of: dict[str, int] = {}
    texts, hashes, bench, origin, copies = [], [], [], [], []
    fields_of: list[dict] = []
    for om, name in zip(matrices, names):
        for j, h in enumerate(om.prompt_hashes):
            if h in col_of:
                copies[col_of[h]] += int(om.copies[j]) if om.copies is not None else 1
                continue
            col_of[h] = len(texts)
            texts.append(om.texts[j])
            hashes.append(h)
            bench.append(om.benchmarks[j])
            origin.append(str(name))
            copies.append(int(om.copies[j]) if om.copies is not None else 1)
            fields_of.append({k: v[j] for k, v in om.fields.items()})
    total = np.zeros((len(models), len(texts)))
    count = np.zeros((len(models), len(texts)))
    for om in matrices:
        r = np.array([row_of[m] for m in om.models], dtype=np.int64)
        c = np.array([col_of[h] for h in om.prompt_hashes], dtype=np.int64)
        obs = ~np.isnan(om.scores)
        total[np.ix_(r, c)] += np.where(obs, om.scores, 0.0)
        count[np.ix_(r, c)] += obs
    with np.errstate(invalid="ignore", divide="ignore"):
        S = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    names_f = sorted({k for d in fields_of for k in d})
    fields = {k: np.array([d.get(k) for d in fields_of], dtype=object) for k in names_f}
    errors = [e for om in matrices for e in om.errors]
    return (OutcomeMatrix(models, texts, hashes, S, np.array(bench, dtype=object), fields,
                          np.array(copies, dtype=np.int64), errors), np.array(origin, dtype=object))
