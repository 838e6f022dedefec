"""The in-memory outcome matrix: dedup by content hash, copies averaged, NaN for unobserved, group labels."""

from __future__ import annotations

import numpy as np
import pytest

from indexer.errors import InputError
from indexer.outcomes import from_arrays, from_batch
from indexer.records import Outcome, OutcomeTable, SourceBatch, SourceInfo, prompt_hash

SRC = SourceInfo("table", "mem://test")


def _batch(rows, table=False):
    outs = [Outcome(model=m, benchmark=b, text=t, score=s, prompt_id=p) for m, b, t, s, p in rows]
    if table:
        return SourceBatch(SRC, table=OutcomeTable.from_outcomes(outs))
    return SourceBatch(SRC, outcomes=outs)


ROWS = [
    ("b", "bench1", "q1", 1.0, "p1"),
    ("a", "bench1", "q1", 0.0, "p1"),
    ("a", "bench1", "q2", 1.0, "p2"),
    ("a", "bench2", "q1", 1.0, "p9"),  # same text under another benchmark/id: one prompt, a's outcomes averaged
    ("b", "bench2", "q3", 0.5, "p3"),
]


@pytest.mark.parametrize("table", [False, True])
def test_dedup_average_and_missing(table):
    m = from_batch(_batch(ROWS, table=table))
    assert m.models == ["a", "b"]
    assert m.texts == ["q1", "q2", "q3"]
    assert m.prompt_hashes == [prompt_hash(t) for t in m.texts]
    expected = np.array([[0.5, 1.0, np.nan], [1.0, np.nan, 0.5]])
    np.testing.assert_array_equal(m.scores, expected)  # NaN compare equal positionally with assert_array_equal
    assert list(m.benchmarks) == ["bench1", "bench1", "bench2"]  # first-seen benchmark
    assert list(m.copies) == [2, 1, 1]
    assert m.observed.sum() == 4
    assert m.density == pytest.approx(4 / 6)


def test_extra_fields_by_id_or_hash_and_group_by():
    fields = {"p1": {"src": "x"}, prompt_hash("q2"): {"src": "y"}, "p3": {"src": "x", "other": 3}}
    m = from_batch(_batch(ROWS), fields)
    assert list(m.labels("src")) == ["x", "y", "x"]
    assert list(m.labels()) == list(m.benchmarks)
    with pytest.raises(InputError, match="lack the field 'other'"):
        m.labels("other")
    with pytest.raises(InputError, match="no field 'nope'.*available: benchmark, other, src"):
        m.labels("nope")


def test_bad_score_and_empty_batch():
    with pytest.raises(InputError, match=r"model a, prompt p1: score 1.5 is outside \[0, 1\]"):
        from_batch(_batch([("a", "b", "q1", 1.5, "p1")]))
    with pytest.raises(InputError, match="no outcomes"):
        from_batch(SourceBatch(SRC))


def test_subset_and_from_arrays():
    S = np.array([[1, 0, np.nan], [0, 1, 1.0]])
    m = from_arrays(S, ["t1", "t2", "t3"], ["g", "g", "h"], fields={"src": ["u", "v", "w"]})
    sub = m.subset(models=[1], prompts=np.array([False, True, True]))
    assert sub.models == ["m1"] and sub.texts == ["t2", "t3"]
    np.testing.assert_array_equal(sub.scores, [[1.0, 1.0]])
    assert list(sub.fields["src"]) == ["v", "w"] and list(sub.benchmarks) == ["g", "h"]
    with pytest.raises(InputError):
        from_arrays(S, ["t1", "t2"], ["g", "g"])


def test_bundled_sample_through_the_table_reader():
    from pathlib import Path

    from indexer.sources import read_source

    sample = Path(__file__).resolve().parents[1] / "indexer" / "data" / "sample"
    m = from_batch(read_source(sample))
    assert m.shape == (25, 420)
    assert m.observed.sum() == 10500
    assert len(set(m.benchmarks)) == 14
    assert set(np.unique(m.scores[m.observed])) <= {0.0, 1.0}
