"""Bad input costs the line (or the source) it is in, never the pass: a corrupt .gz, bytes that are not UTF-8,
whitespace-only and NUL prompt texts (the same rule on SQLite and PostgreSQL)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from indexer.errors import InputError
from indexer.ingest import ingest
from indexer.records import Outcome, SourceBatch, SourceInfo

from helpers import outcomes, write_source


def _prompts(folder: Path, texts: list[str], bench: str = "b") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "prompts.jsonl").write_text("".join(json.dumps({"prompt_id": f"p{j}", "benchmark": bench, "text": t}) + "\n"
                                                  for j, t in enumerate(texts)))


def _rows(models: list[str], n: int) -> list[str]:
    return [f"{m},p{j},{(j + k) % 2}\n" for k, m in enumerate(models) for j in range(n)]


def test_corrupt_gz_costs_only_that_source(env, tmp_path):
    """`printf '\\x1f\\x8b\\x08\\x00garbage' > outcomes.csv.gz`: before, a zlib.error traceback failed the run (and every
    later one, with 0 vectors). Now it is one error line; the other source is indexed; later passes run."""
    from indexer.sourcelist import SourceSpec

    rng = np.random.default_rng(3)
    good, bad = tmp_path / "good", tmp_path / "bad"
    write_source(good, "good", [f"Good question {i}?" for i in range(12)], outcomes(rng, ["org/a", "org/b"], 12))
    _prompts(bad, [f"Bad question {i}?" for i in range(4)])
    (bad / "outcomes.csv.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    idx = env()
    r = idx.run([SourceSpec(str(good)), SourceSpec(str(bad))])
    assert r.status == "partial" and r.counts["solved"] == 2
    (err,) = r.errors
    assert err["file"].endswith("outcomes.csv.gz") and "cannot read file" in err["message"]
    assert [s["status"] for s in r.sources] == ["ingested", "failed"]
    again = idx.run()
    assert again.status == "partial" and len(again.errors) == 1  # the next pass runs (the bad file is still bad)
    (bad / "outcomes.csv.gz").write_bytes(gzip.compress("model,prompt_id,correct\n".encode() + "".join(_rows(["org/c"], 4)).encode()))
    fixed = idx.run()
    # org/c, a third model beside the two the calibration map was fitted on: every model solved, the map fitted again
    assert fixed.status == "ok" and fixed.counts["solved"] == 3


def test_an_unexpected_reader_error_costs_only_that_source(store, tmp_path, monkeypatch):
    from indexer.sources import tables

    rng = np.random.default_rng(4)
    write_source(tmp_path / "a", "a", [f"A {i}?" for i in range(5)], outcomes(rng, ["m1"], 5))
    write_source(tmp_path / "b", "b", [f"B {i}?" for i in range(5)], outcomes(rng, ["m2"], 5))
    real = tables._read_long_blocks

    def buggy(path, errors):
        if "/b/" in str(path):
            raise RuntimeError("a bug in a reader")
        return real(path, errors)

    monkeypatch.setattr(tables, "_read_long_blocks", buggy)
    s = ingest(str(tmp_path / "b"), store=store, fetch_metadata=False)
    (e,) = s.errors
    assert "RuntimeError: a bug in a reader" in e.message and "the others are read" in e.message
    assert ingest(str(tmp_path / "a"), store=store, fetch_metadata=False).sources == 1


def test_bytes_that_are_not_utf8_cost_their_line(store, tmp_path):
    """One bad byte in an outcomes file rejected the whole file without a line; one in a prompts file lost every
    line after it. Now each is an error at its line and the rest is stored (plain, .gz and CSV prompts alike)."""
    d = tmp_path / "t"
    _prompts(d, [f"Question {j}?" for j in range(6)])
    raw = (d / "prompts.jsonl").read_bytes().splitlines(keepends=True)
    raw[2] = raw[2].replace(b"Question 2", b"Question \xff2")  # line 3
    (d / "prompts.jsonl").write_bytes(b"".join(raw))
    lines = ["model,prompt_id,correct\n"] + _rows(["m1", "m2"], 6)
    body = "".join(lines).encode().replace(b"m2,p4,", b"m\xfe2,p4,")  # line 12
    (d / "outcomes.csv.gz").write_bytes(gzip.compress(body))
    s = ingest(str(d), store=store, fetch_metadata=False)
    errs = {(Path(e.file).name, e.line): e.message for e in s.errors}
    assert "not valid UTF-8" in errs[("prompts.jsonl", 3)] and "not valid UTF-8" in errs[("outcomes.csv.gz", 12)]
    assert ("outcomes.csv.gz", 4) in errs  # m1's row of the rejected prompt p2: named, dropped
    # 12 rows - the bad line - the two rows of prompt p2
    assert s.outcomes == 9 and s.sources == 1
    # CSV prompts: a bad byte on line 2 costs line 2 only
    c = tmp_path / "c"
    c.mkdir()
    (c / "prompts.csv").write_bytes(b"prompt_id,benchmark,text\np0,b,Caf\xe9?\np1,b,Tea?\np2,b,\"Two\nlines\"\n")
    (c / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\nm1,p2,0\n")
    s = ingest(str(c), store=store, fetch_metadata=False)
    assert [(Path(e.file).name, e.line) for e in s.errors] == [("prompts.csv", 2)] and s.outcomes == 2


def test_a_header_line_that_is_not_utf8_is_one_error_not_a_row_read_as_the_header(store, tmp_path):
    """A Latin-1 header (`modèle,prompt_id,correct`): the header line was skipped as a row's is, so the first row became the header and every later row was read under its values
    (`score value 'p2' is not a number`, `prompt_id '1' is not in the prompts file`), the first row lost. Now one
    error at the header's line says it is not UTF-8 and nothing of that file is read (outcomes, CSV/TSV prompts)."""
    d = tmp_path / "t"
    _prompts(d, ["Two plus two?", "Three plus three?"])
    (d / "outcomes.csv").write_bytes("modèle,prompt_id,correct\nm1,p0,1\nm1,p1,0\n".encode("latin-1"))
    s = ingest(str(d), store=store, fetch_metadata=False)
    (e,) = s.errors
    assert (Path(e.file).name, e.line) == ("outcomes.csv", 1)
    assert "header line is not valid UTF-8" in e.message and "nothing of this file is read" in e.message
    assert s.sources == 0 and s.outcomes == 0
    p = tmp_path / "p"
    p.mkdir()
    (p / "prompts.csv").write_bytes("prompt_id,benchmark,énoncé\np0,b,Two?\n".encode("latin-1"))
    (p / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p0,1\n")
    s = ingest(str(p), store=store, fetch_metadata=False)
    errs = {(Path(e.file).name, e.line): e.message for e in s.errors}
    assert "header line is not valid UTF-8" in errs[("prompts.csv", 1)] and s.sources == 0
    # a row's bad byte still costs that row only
    (d / "outcomes.csv").write_bytes("model,prompt_id,correct\nmod\xe8le,p0,1\nm1,p1,0\n".encode("latin-1"))
    s = ingest(str(d), store=store, fetch_metadata=False)
    assert [(Path(e.file).name, e.line) for e in s.errors] == [("outcomes.csv", 2)] and s.outcomes == 1


@pytest.mark.parametrize("name", ["outcomes.csv", "outcomes.tsv", "outcomes.jsonl", "outcomes.csv.gz", "prompts.jsonl",
                                  "prompts.csv"])
def test_a_table_file_saved_as_utf16_is_one_error_saying_so(store, tmp_path, name):
    """A table file saved as UTF-16 (Windows PowerShell 5's `>` and `Out-File`, Excel's "Unicode Text"): before, every
    line failed on its own (`line 1: not valid UTF-8`, then `malformed JSON line: Expecting value` for each line of a
    JSONL file, or a header of NUL bytes: "matrix form needs a model column ... found ['\\x00']"), the cause buried
    among dozens of errors. Now one error names the file, says it is UTF-16 and to save it as UTF-8; nothing of it is
    read."""
    d = tmp_path / "t"
    _prompts(d, [f"Question {j}?" for j in range(30)])
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(_rows(["m1"], 30)))
    src = d / name.replace(".gz", "")
    text = src.read_text() if src.exists() else "".join(json.dumps({"model": "m1", "prompt_id": f"p{j}", "correct": 1})
                                                         + "\n" for j in range(30))
    if name == "outcomes.tsv":
        text = (d / "outcomes.csv").read_text().replace(",", "\t")
    if name == "prompts.csv":
        text = "prompt_id,benchmark,text\n" + "".join(f"p{j},b,Question {j}?\n" for j in range(30))
    for f in [d / "outcomes.csv", d / "prompts.jsonl"]:
        if name.split(".")[0] == f.name.split(".")[0]:
            f.unlink()
    data = text.replace("\n", "\r\n").encode("utf-16")
    (d / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    s = ingest(str(d), store=store, fetch_metadata=False)
    mine = [e for e in s.errors if Path(e.file).name == name]
    assert [e.line for e in mine] == [None], mine
    assert mine[0].message.startswith("the file is UTF-16 text") and "save it as UTF-8" in mine[0].message
    assert s.sources == 0


@pytest.mark.parametrize("name, data, said", [
    ("outcomes.csv", "model,prompt_id,correct\r\nm1,p0,1\r\n".encode("utf-16-le"), "UTF-16 (little-endian) text without"),
    ("outcomes.jsonl", '{"model": "m1", "prompt_id": "p0", "correct": 1}\n'.encode("utf-16-be"), "UTF-16 (big-endian)"),
    ("outcomes.csv.gz", gzip.compress("model,prompt_id,correct\nm1,p0,1\n".encode("utf-16-le")), "UTF-16 (little"),
    ("outcomes.csv", b"\x00" * 700, "holds NUL bytes only (zeros a crash or an interrupted copy leaves"),
    ("prompts.csv", b"\x00" * 5000, "holds NUL bytes only"),
    ("outcomes.csv.gz", gzip.compress(b"\x00" * 300_000), "holds NUL bytes only")])
def test_a_table_file_of_utf16_without_a_mark_or_of_zeros_is_one_error_saying_so(store, tmp_path, name, data, said):
    """A table file of UTF-16 text without a byte order mark (`iconv -t UTF-16LE`, some Windows tools), or of NUL
    bytes only (zeros a crash or an interrupted copy leaves): one error naming the file, saying what it is and what
    to do; nothing of it read. Before, UTF-16 without a mark read as text whose every name held NULs (`model
    '\\x00m\\x001\\x00' holds a NUL character`, prompt ids `'\\x00p\\x00r...'` not in the prompts file), and a file of
    zeros was "empty file: no rows"."""
    d = tmp_path / "t"
    _prompts(d, ["Question 0?"])
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(_rows(["m1"], 1)))
    for f in [d / "outcomes.csv", d / "prompts.jsonl"]:
        if name.split(".")[0] == f.name.split(".")[0]:
            f.unlink()
    (d / name).write_bytes(data)
    s = ingest(str(d), store=store, fetch_metadata=False)
    mine = [e for e in s.errors if Path(e.file).name == name]
    assert [e.line for e in mine] == [None] and said in mine[0].message, s.errors
    assert "nothing of it is read" in mine[0].message and s.sources == 0


def test_a_jsonl_file_starting_with_a_long_run_of_zeros_keeps_its_other_lines(store, tmp_path):
    """A JSON-lines file whose first line is a run of NUL bytes longer than the head the encoding check reads (zeros
    a crash left) and whose later lines are rows: the line of zeros is an error, the other rows are read; only a file
    of zeros alone is refused whole."""
    d = tmp_path / "t"
    _prompts(d, ["Question 0?", "Question 1?"])
    (d / "outcomes.jsonl").write_bytes(b"\x00" * 5000 + b"\n" + "".join(
        json.dumps({"model": "m1", "prompt_id": f"p{j}", "correct": 1}) + "\n" for j in range(2)).encode())
    s = ingest(str(d), store=store, fetch_metadata=False)
    assert [(Path(e.file).name, e.line) for e in s.errors] == [("outcomes.jsonl", 1)], s.errors
    assert "NUL byte" in s.errors[0].message and s.outcomes == 2


def test_a_quote_opening_in_the_last_field_and_never_closing_costs_its_line(store, tmp_path):
    """`m2,p3,"1` with rows after it: the quote took every later line into the last field (the header's field
    count, so it was not seen as malformed): one error 'not a number' and the rows after it lost. Now the quote is
    reported at its line and reading goes on at the next line (outcomes and CSV prompts alike); a last record whose
    quoted field spans lines and closes is read as before."""
    d = tmp_path / "t"
    d.mkdir()
    (d / "prompts.csv").write_text('prompt_id,benchmark,text\np0,b,Zero?\np3,b,"Three\nlines"\np1,b,"One\np2,b,Two?\n')
    (d / "outcomes.csv").write_text('model,prompt_id,correct\nm1,p0,1\nm2,p2,"1\nm2,p0,0\nm1,p3,1\nm1,p2,0\n')
    s = ingest(str(d), store=store, fetch_metadata=False)
    errs = {(Path(e.file).name, e.line): e.message for e in s.errors}
    assert set(errs) == {("prompts.csv", 5), ("outcomes.csv", 3)}, errs
    assert all("never closes" in m and "reading goes on at the next line" in m for m in errs.values())
    assert s.outcomes == 4 and s.prompts == 3 and s.sources == 1


def test_whitespace_and_nul_prompt_texts_are_row_errors(store, tmp_path):
    """A whitespace-only text rejected the whole source without a line; a NUL was stored on SQLite and rejected the
    source on PostgreSQL. Now both are row errors at their line, and the rest is stored, on both databases."""
    d = tmp_path / "t"
    _prompts(d, ["Fine question?", "   \t ", "Null\u0000byte?", "Another fine one?"])
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(_rows(["m1"], 4)))
    s = ingest(str(d), store=store, fetch_metadata=False)
    errs = {(Path(e.file).name, e.line): e.message for e in s.errors}
    assert "empty prompt text" in errs[("prompts.jsonl", 2)] and "NUL" in errs[("prompts.jsonl", 3)]
    assert s.outcomes == 2 and s.sources == 1
    om = store.load_outcomes()
    assert len(om.prompt_hashes) == 2


def test_a_prompt_of_invisible_characters_only_is_a_row_error(store, tmp_path):
    """A prompt text of zero-width spaces, a byte order mark, joiners or control characters only (what a spreadsheet or a
    scraper leaves in an emptied cell): an error at its line ("empty prompt text (only invisible characters ...)"), the
    rest stored, on SQLite and PostgreSQL; before, it passed the whitespace check (`str.strip` keeps them) and was
    stored and embedded as a prompt the encoder reads as empty. A text with visible characters among them is kept."""
    d = tmp_path / "t"
    _prompts(d, ["Fine question?", "\u200b\u200b", " \ufeff\u200d\n", "\x07\x1b", "Keep \u200bthis one?"])
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(_rows(["m1"], 5)))
    s = ingest(str(d), store=store, fetch_metadata=False)
    errs = {(Path(e.file).name, e.line): e.message for e in s.errors}
    for line in (2, 3, 4):
        assert "empty prompt text (only invisible characters" in errs[("prompts.jsonl", line)], errs
    assert {f for f, _ in errs} == {"prompts.jsonl", "outcomes.csv"} and len(errs) == 6  # their outcome rows say so
    assert s.outcomes == 2 and s.sources == 1
    assert len(store.load_outcomes().prompt_hashes) == 2


def test_a_name_longer_than_the_database_holds_costs_its_rows_not_the_source(store, tmp_path):
    """A model or benchmark name longer than its SQL column (512 characters; a harness's model_args string, a damaged
    export): its rows are errors (a benchmark's at its line in the prompts file, a model's naming it) and the rest of the
    source is stored, on SQLite as on PostgreSQL. Before, the store refused the whole source ("source not stored
    (nothing of it was written): prompt p3: model 'org/mmm...'... is longer than 512 characters"), naming no line."""
    d = tmp_path / "t"
    d.mkdir()
    rows = [("p0", "b", "Fine?"), ("p1", "b" * 600, "Long benchmark?"), ("p2", "b", "Also fine?")]
    (d / "prompts.jsonl").write_text("".join(json.dumps({"prompt_id": p, "benchmark": b, "text": t}) + "\n"
                                             for p, b, t in rows))
    long_model = "org/" + "m" * 600
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(_rows(["m1", long_model], 3)))
    s = ingest(str(d), store=store, fetch_metadata=False)
    assert s.sources == 1 and s.outcomes == 2 and s.models == 1, s.errors
    msgs = [str(e) for e in s.errors]
    assert any(m.startswith(f"{d / 'prompts.jsonl'}:2: benchmark name is longer than 512 characters (600)") for m in msgs), msgs
    assert any("org/mmm" in m and "is longer than 512 characters (604)" in m and "its outcomes are dropped" in m
               for m in msgs), msgs
    assert sorted(store.load_outcomes().models) == ["m1"]


def test_a_prompt_id_longer_than_the_database_holds_is_an_error_at_its_line(store, tmp_path):
    """A prompt id longer than its SQL column (512 characters, `benchmark_prompts.source_prompt_id`; a table keyed by
    the prompt's text): an error at its line in the prompts file naming the limit, its outcome rows saying so, the rest
    stored; from any reader (here built directly) its rows are dropped with an error naming the prompt, and the store
    refuses it. Before, the id was stored cut to its first 512 characters without a word."""
    d = tmp_path / "t"
    d.mkdir()
    long_id = "What is " + "very " * 120 + "long?"
    rows = [("p0", "b", "Fine?"), (long_id, "b", "Long id?"), ("p2", "b", "Also fine?")]
    (d / "prompts.jsonl").write_text("".join(json.dumps({"prompt_id": p, "benchmark": b, "text": t}) + "\n"
                                             for p, b, t in rows))
    (d / "outcomes.jsonl").write_text("".join(json.dumps({"model": "m1", "prompt_id": p, "correct": 1}) + "\n"
                                              for p, _, _ in rows))
    s = ingest(str(d), store=store, fetch_metadata=False)
    msgs = [str(e) for e in s.errors]
    assert any(m.startswith(f"{d / 'prompts.jsonl'}:2: prompt_id 'What is very very") and
               f"is longer than 512 characters ({len(long_id)}), more than the database holds" in m for m in msgs), msgs
    assert any(m.startswith(f"{d / 'outcomes.jsonl'}:2: ") for m in msgs), msgs
    assert s.outcomes == 2 and s.sources == 1
    from indexer.ingest import Ingester

    ing = Ingester(store, fetch_metadata=False)
    ing.store_batch(SourceBatch(SourceInfo("lm_eval", "/x/long", "r1"), {},
                                [Outcome("org/m", "bench", "Text one?", 1.0, prompt_id="t:" + "9" * 600),
                                 Outcome("org/m", "bench", "Text two?", 1.0, prompt_id="t:1")]))
    ing_errors = [e.message for e in ing.summary.errors]
    assert len(ing_errors) == 1 and "is longer than 512 characters (602)" in ing_errors[0], ing_errors
    assert ing.summary.outcomes == 1
    with pytest.raises(InputError, match="longer than 512 characters"):
        store.ingest(SourceBatch(SourceInfo("table", "/y", "r1"), {}, [Outcome("m", "b", "Text?", 1.0, prompt_id="x" * 513)]))
    assert store.get_source("/y") is None


@pytest.mark.parametrize("form", ["long", "matrix"])
def test_a_table_model_name_no_database_takes_is_said_at_its_line_in_the_file(store, tmp_path, form):
    """A plain table's model name holding a NUL (or a lone surrogate, a control character; too long) is one error at
    the line of its first row in the outcomes (or matrix) file, saying to fix the name there; its outcomes are dropped,
    the rest stored. Before, the ingest said it after reading, naming the folder and no line (`DIR: model 'm\\x001':
    holds a NUL character; its outcomes are dropped`)."""
    d = tmp_path / "t"
    d.mkdir()
    (d / "prompts.csv").write_text("prompt_id,benchmark,text\np1,b,First?\np2,b,Second?\n")
    if form == "long":
        (d / "outcomes.csv").write_bytes(b"model,prompt_id,correct\nm1,p1,1\nm\x001,p1,0\nm\x001,p2,1\nm1,p2,0\n")
        name, line = "outcomes.csv", 3
    else:
        (d / "matrix.csv").write_bytes(b"model,p1,p2\nm1,1,0\nm\x001,0,1\n")
        name, line = "matrix.csv", 3
    s = ingest(str(d), store=store, fetch_metadata=False)
    (e,) = s.errors
    assert (Path(e.file).name, e.line) == (name, line), e
    assert e.message == "model 'm\\x001' holds a NUL character; its outcomes are dropped: fix the name in the file"
    assert s.outcomes == 2 and store.load_outcomes().models == ["m1"]


@pytest.mark.parametrize("form", ["long", "matrix"])
def test_a_prompt_id_with_a_control_character_is_an_invalid_id_at_its_line(store, tmp_path, form):
    """A prompt id holding a NUL, a tab or a terminal escape in an outcomes (or matrix) file is an invalid id, said
    once at the line of its first row (matrix form: the row of its first cell) with what it holds, its rows dropped,
    the rest stored; in the prompts file, the prompt's line is rejected so, and the outcome rows of that id say the
    id is invalid, not that it "is not in the prompts file". Before, the outcomes file's id was "not in the prompts
    file", and when the prompts file held the same id the pair was stored: SQLite kept `p` for `p\x002`, PostgreSQL
    refuses a NUL."""
    d = tmp_path / "t"
    d.mkdir()
    (d / "prompts.jsonl").write_text('{"prompt_id": "p1", "benchmark": "b", "text": "First?"}\n'
                                     '{"prompt_id": "p\\u00002", "benchmark": "b", "text": "Second?"}\n'
                                     '{"prompt_id": "p3", "benchmark": "b", "text": "Third?"}\n')
    if form == "long":
        (d / "outcomes.csv").write_bytes(b"model,prompt_id,correct\nm1,p1,1\nm1,p\x002,0\nm2,p\x002,1\n"
                                         b"m1,p\t3,1\nm1,p\x1b[2J3,1\nm2,p1,0\n")
        name, lines = "outcomes.csv", (3, 5, 6)
    else:
        (d / "matrix.csv").write_bytes(b"model,p1,p\x002,p\t3\nm1,1,0,1\nm2,0,1,\n")
        name, lines = "matrix.csv", (2, 2)
    s = ingest(str(d), store=store, fetch_metadata=False)
    errs = [(Path(e.file).name, e.line, e.message) for e in s.errors]
    assert errs[0] == ("prompts.jsonl", 2, "prompt_id 'p\\x002' holds a NUL character; the prompt is skipped"), errs
    mine = [(line, msg) for f, line, msg in errs if f == name]
    assert [line for line, _ in mine] == list(lines), errs
    assert mine[0][1] == "prompt_id 'p\\x002' is not a valid id: it holds a NUL character; its rows are dropped: fix the id in the file"
    assert mine[1][1].startswith("prompt_id 'p\\t3' is not a valid id: it holds a control character (U+0009"), mine
    assert not any("not in the prompts file" in m for _, _, m in errs), errs
    assert s.outcomes == 2 and sorted(store.load_outcomes().models) == ["m1", "m2"]


def test_a_lone_surrogate_from_a_json_escape_costs_its_row(store, tmp_path):
    """``"\\ud800"`` in a JSONL prompt decodes to a lone surrogate (the file itself is valid UTF-8): it passed the
    not-UTF-8 check (which looked only for surrogateescape's U+DC80-U+DCFF) and crashed the prompt hash. Now the row
    is an error at its line and the rest is stored; a model name with one is refused the same way."""
    d = tmp_path / "t"
    d.mkdir()
    (d / "prompts.jsonl").write_text('{"prompt_id": "p0", "benchmark": "b", "text": "Fine?"}\n'
                                     '{"prompt_id": "p1", "benchmark": "b", "text": "Bad \\ud800 one?"}\n'
                                     '{"prompt_id": "p2", "benchmark": "b", "text": "Also fine?"}\n')
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(_rows(["m1"], 3)))
    s = ingest(str(d), store=store, fetch_metadata=False)
    errs = {(Path(e.file).name, e.line): e.message for e in s.errors}
    assert "not valid UTF-8" in errs[("prompts.jsonl", 2)]
    assert s.outcomes == 2 and s.sources == 1
    from indexer.ingest import Ingester

    ing = Ingester(store, fetch_metadata=False)
    ing.store_batch(SourceBatch(SourceInfo("lm_eval", "/x/sur", "r1"), {},
                                [Outcome("org/m\udc00", "bench", "Text?", 1.0, prompt_id="1"),
                                 Outcome("org/ok", "bench", "Text?", 1.0, prompt_id="1")]))
    ing_errors = [e.message for e in ing.summary.errors]
    assert len(ing_errors) == 1 and "not valid Unicode" in ing_errors[0] and ing.summary.outcomes == 1


def test_every_reader_and_the_store_hold_the_same_rule(store):
    """Outcome rows from any reader (here built directly) with a NUL or blank text are dropped with an error naming the
    prompt, the rest stored; the store itself refuses a NUL text on SQLite as PostgreSQL does."""
    from indexer.ingest import Ingester

    outs = [Outcome("org/m", "bench", "Good text?", 1.0, prompt_id="1"),
            Outcome("org/m", "bench", "Bad\u0000text?", 1.0, prompt_id="2"),
            Outcome("org/m", "bench", "  ", 0.0, prompt_id="3"),
            Outcome("org/m\u0000x", "bench", "Good text?", 1.0, prompt_id="1")]
    ing = Ingester(store, fetch_metadata=False)
    ing.store_batch(SourceBatch(SourceInfo("lm_eval", "/x/run", "r1"), {}, outs))
    msgs = sorted(e.message for e in ing.summary.errors)
    assert len(msgs) == 3 and any("'2'" in m and "NUL" in m for m in msgs) and any("'3'" in m and "empty" in m for m in msgs)
    assert ing.summary.outcomes == 1 and store.get_source("/x/run").n_outcomes == 1
    with pytest.raises(InputError, match="NUL"):
        store.ingest(SourceBatch(SourceInfo("table", "/y", "r1"), {}, [Outcome("m", "b", "a\u0000b", 1.0)]))
    assert store.get_source("/y") is None


def _lm_eval_out_with_a_buggy_folder(tmp_path, monkeypatch, folders=None) -> Path:
    """A copy of the lm-eval fixture folder (or of its ``folders``) whose reader fails with a RuntimeError (a bug)
    on fake-org__dummy-b's samples."""
    import shutil

    from indexer.sources import lm_eval

    src = Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out"
    out = tmp_path / "lm_eval_out"
    for f in folders or sorted(p.name for p in src.iterdir()):
        shutil.copytree(src / f, out / f)
    real = lm_eval.read_task_file

    def buggy(path, *a, **k):
        if "dummy-b" in str(path):
            raise RuntimeError("a bug in a reader")
        return real(path, *a, **k)

    monkeypatch.setattr(lm_eval, "read_task_file", buggy)
    return out


def test_a_model_folder_that_fails_unexpectedly_costs_only_itself(store, tmp_path, monkeypatch):
    """An lm-eval output folder of four model folders where reading one fails unexpectedly (a bug): the three other
    model folders are stored, the error names the model folder, and the next ingest skips the three as unchanged.
    Before, the error named the whole output folder and every model folder after the bad one (in sorted order) was
    never read, on every pass."""
    out = _lm_eval_out_with_a_buggy_folder(tmp_path, monkeypatch)
    s = ingest(str(out), store=store, fetch_metadata=False)
    (e,) = s.errors
    assert e.file == str(out / "fake-org__dummy-b") and "cannot be read: RuntimeError: a bug in a reader" in e.message
    assert s.sources == 3 and sorted(store.load_outcomes().models) == [
        "fake-org/dummy-a", "fake-org/dummy-c", "fake-org/noisy-oracle-70"]
    again = ingest(str(out), store=store, fetch_metadata=False)
    assert (again.sources, again.skipped, len(again.errors)) == (0, 3, 1)


def test_the_traceback_of_an_unexpected_reader_error_is_shown_by_v_as_its_line_says(store, tmp_path, monkeypatch,
                                                                                  caplog):
    """The error line of a reader's unexpected failure says "run with -v for the traceback": the traceback is logged
    at INFO, the level `-v` shows (`indexer.cli`: WARNING by default, INFO with -v, DEBUG with -vv); the CLI's line
    without -v holds none. Before, it was logged at DEBUG, which only -vv shows."""
    import logging

    from typer.testing import CliRunner

    from indexer.cli import app

    out = _lm_eval_out_with_a_buggy_folder(tmp_path, monkeypatch, ["fake-org__dummy-b"])
    quiet = CliRunner().invoke(app, ["ingest", str(out)])
    assert quiet.exit_code == 1 and "run with -v for the traceback" in quiet.stderr
    assert "Traceback" not in quiet.stderr
    with caplog.at_level(logging.INFO, logger="indexer"):
        summary = ingest(str(out), store=store, fetch_metadata=False)
    # a Python caller, who has no -v: the logger that logs it
    assert any("its traceback is logged at INFO by the logger indexer.ingest" in e.message for e in summary.errors)
    assert not any("with -v" in e.message for e in summary.errors), summary.errors
    (rec,) = [r for r in caplog.records if r.exc_info and "unexpected error while reading" in r.getMessage()]
    assert rec.levelno == logging.INFO and str(rec.exc_info[1]) == "a bug in a reader"


def _run_cli_without_read_override(home: Path, *args: str):
    """``python -m indexer.cli ARGS`` as a process that file permissions apply to: as root (which reads a ``chmod 000``
    file), with CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH dropped from its capability bounding set (``setpriv``)."""
    import os
    import shutil
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    cmd = [sys.executable, "-m", "indexer.cli", *args]
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("root reads every file, and no setpriv here to drop that capability")
        cmd = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *cmd]
    env = {**os.environ, "TASKSPACE_HOME": str(home), "PYTHONPATH": str(root)}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=root, timeout=300)


def test_a_file_this_user_may_not_read_is_an_error_naming_it_and_the_other_model_folders_are_stored(tmp_path):
    """A samples file of one model folder with mode 000 (or a folder without x): one error naming that file, saying to
    make it readable, and the folder's other model folders stored. Before, the fingerprint taken before reading failed
    for the whole path: "in/: cannot be read: PermissionError ... (an unexpected error: ... please report it)", and
    nothing of any model folder was stored."""
    import shutil

    from indexer.store.sql import Store

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out", out)
    locked = next((out / "fake-org__dummy-b").glob("samples_tiny_mc_yesno_*.jsonl"))
    locked.chmod(0)
    shut = out / "fake-org__dummy-c"
    shut.chmod(0)
    try:
        res = _run_cli_without_read_override(tmp_path / "home", "ingest", str(out), "--no-metadata", "--json")
    finally:
        locked.chmod(0o644)
        shut.chmod(0o755)
    assert res.returncode == 1, res.stderr
    got = json.loads(res.stdout)
    errors = {e["file"]: e["message"] for e in got["errors"]}
    assert set(errors) == {str(locked), str(shut)}, got["errors"]
    assert "permission denied" in errors[str(locked)] and "`chmod a+r`" in errors[str(locked)]
    assert "`chmod a+rx`" in errors[str(shut)] and "unexpected" not in " ".join(errors.values())
    store = Store(f"sqlite:///{tmp_path / 'home' / 'taskspace.db'}")
    assert sorted(store.load_outcomes().models) == ["fake-org/dummy-a", "fake-org/noisy-oracle-70"]
    # made readable, the next ingest stores the two others and skips the two it stored
    again = _run_cli_without_read_override(tmp_path / "home", "ingest", str(out), "--no-metadata", "--json")
    assert again.returncode == 0, again.stderr
    assert (json.loads(again.stdout)["sources"], json.loads(again.stdout)["skipped"]) == (2, 2)


def test_a_stored_source_that_cannot_be_read_now_says_its_stored_revision_is_kept_and_searched(tmp_path):
    """A model folder stored by an earlier ingest whose samples file can no longer be read (chmod 000 after an edit):
    its error says the stored revision (its outcome count) is kept and searched, which it is; a folder never stored
    says nothing of it is stored. Before, both said "nothing of this source is stored", while the stored revision of
    the first kept serving searches (found walking ``taskspace worker``)."""
    import os
    import shutil

    from indexer.store.sql import Store

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out", out)
    new = out / "fake-org__dummy-c"
    shutil.move(new, tmp_path / "later")
    first = _run_cli_without_read_override(tmp_path / "home", "ingest", str(out), "--no-metadata", "--json")
    assert first.returncode == 0, first.stderr
    shutil.move(tmp_path / "later", new)
    store = Store(f"sqlite:///{tmp_path / 'home' / 'taskspace.db'}")
    folder = out / "fake-org__dummy-b"
    n = store.get_source(str(folder)).n_outcomes
    locked = next(folder.glob("samples_tiny_mc_yesno_*.jsonl"))
    locked.write_text(locked.read_text() + "\n")  # edited since: a new revision to read
    os.utime(locked, (1, 1))
    locked.chmod(0)
    shut = next(new.glob("samples_*.jsonl"))
    shut.chmod(0)
    try:
        res = _run_cli_without_read_override(tmp_path / "home", "ingest", str(out), "--no-metadata", "--json")
    finally:
        locked.chmod(0o644)
        shut.chmod(0o644)
    errors = {e["file"]: e["message"] for e in json.loads(res.stdout)["errors"]}
    assert set(errors) == {str(locked), str(shut)}, errors
    assert f"its stored revision ({n} outcomes) is kept and searched" in errors[str(locked)], errors[str(locked)]
    assert "nothing of this source is stored" not in errors[str(locked)]
    assert "nothing of this source is stored" in errors[str(shut)], errors[str(shut)]
    assert store.get_source(str(folder)).n_outcomes == n  # kept, as the line says


def test_a_model_name_no_database_takes_is_one_error_showing_its_start_not_a_line_per_prompt(store, tmp_path):
    """An lm-eval results file whose ``model_name`` is 5,000 characters (a damaged export, a model_args string): one
    error naming the model by its first characters and its length, counting the outcomes dropped and saying what to
    do; the store is as before and the run reads with ``--model``. Before, one error per prompt (20, then "22 more rows
    rejected"), each holding the whole name: 100 kB of output for 42 rows."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    (res,) = (out / "fake-org__dummy-b").glob("results_*.json")
    data = json.loads(res.read_text())
    data["model_name"] = "org/" + "x" * 4996
    res.write_text(json.dumps(data))
    s = ingest(str(out), store=store, fetch_metadata=False)
    (e,) = s.errors
    # (its start and end, cut by the one function every ingest message quotes a value with: example_value)
    assert e.message.startswith("model 'org/xxx") and "xxx' (5,000 characters): name is longer than 512 characters " \
        "(5000)" in e.message, e.message
    assert "its 42 outcomes are dropped" in e.message and "--model NAME" in e.message and len(e.message) < 300
    assert s.sources == 0 and store.load_outcomes().models == []
    again = ingest(str(out), store=store, fetch_metadata=False, model="org/short")
    assert again.errors == [] and store.load_outcomes().models == ["org/short"]


@pytest.mark.parametrize("name", ["org/evil\x1b[2J\x1b[31mmodel", "org/two\nlines", "org/tab\tbed", "org/c1\x9bx"])
def test_a_model_name_with_a_control_character_is_an_error_and_nothing_of_it_is_stored(store, tmp_path, name):
    """A results file's ``model_name`` holding a line break, a tab or a terminal escape (ESC, or the C1 CSI U+009B): one
    error naming the model and the character, nothing of that model stored; `--model` reads the run. Before, the name
    was stored as given, and every line showing it (`taskspace models`, an error's `file:line:`) broke or wrote the
    escape to the terminal."""
    import shutil

    from indexer.records import name_problem

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    (res,) = (out / "fake-org__dummy-b").glob("results_*.json")
    data = json.loads(res.read_text())
    data["model_name"] = name
    res.write_text(json.dumps(data))
    s = ingest(str(out), store=store, fetch_metadata=False)
    (e,) = s.errors
    assert "holds a control character (U+" in e.message and "--model NAME" in e.message, e.message
    assert s.sources == 0 and store.load_outcomes().models == []
    with pytest.raises(InputError, match="control character"):  # the store holds the same rule
        store.ingest(SourceBatch(SourceInfo("table", "/y", "r1"), {}, [Outcome(name, "b", "A text?", 1.0)]))
    assert name_problem("org/model name with spaces/and slashes") is None  # printable names stay as given
    assert ingest(str(out), store=store, fetch_metadata=False, model="org/fine").errors == []


@pytest.mark.parametrize("field, value", [("model_name", ["fake-org/dummy-b"]), ("model_name", []),
                                          ("model_name", ["org/a", "org/b"]), ("model_name", {"name": "org/a"}),
                                          ("model_name", True), ("pretrained", ["fake-org/dummy-b"]),
                                          ("model_sha", ["abc123"])])
def test_an_lm_eval_model_name_that_is_a_list_is_an_error_naming_the_file_and_field(store, tmp_path, field, value):
    """A results file whose ``model_name`` (or ``model_args``' pretrained=, or the revision ``model_sha``) is a list,
    an object or a boolean: one error naming the results file, the field and the value, its samples not read, nothing
    stored; ``--model`` reads the run. A one-element list is refused too: lm-eval writes a string there, so a list
    comes from another tool, whose list may be of several models. Before, the value's Python repr was stored as the
    model's name (``['fake-org/dummy-b']``, ``[]``) without a word."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    (res,) = (out / "fake-org__dummy-b").glob("results_*.json")
    data = json.loads(res.read_text())
    if field == "pretrained":
        data.pop("model_name")
        data["config"]["model_args"] = {"pretrained": value}
        shown = "config.model_args pretrained="
    elif field == "model_sha":
        data["config"]["model_sha"] = value
        shown = "config.model_sha"
    else:
        data[field] = value
        shown = field
    res.write_text(json.dumps(data))
    s = ingest(str(out), store=store, fetch_metadata=False)
    (e,) = s.errors
    assert e.file == str(res) and e.message.startswith(f"`{shown}` is "), e.message
    assert json.dumps(value) in e.message and "NAME" in e.message, e.message
    assert s.sources == 0 and store.load_outcomes().models == []
    again = ingest(str(out), store=store, fetch_metadata=False, model="org/named")
    assert again.errors == [] and store.load_outcomes().models == ["org/named"]


def test_a_lighteval_model_name_that_is_a_list_is_an_error_naming_the_results_file(store, tmp_path):
    """lighteval's results file whose ``config_general.model_name`` is a list: the source is refused naming the file
    and the field; ``--model`` reads it. Before, the Python repr of the list was stored as the model name (an empty
    list: the folder's name, without a word)."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "formats" / "lighteval_0.13_output", out)
    (res,) = (out / "results").rglob("results_*.json")
    data = json.loads(res.read_text())
    for value in (["org/light-model"], []):
        data["config_general"]["model_name"] = value
        res.write_text(json.dumps(data))
        s = ingest(str(out), store=store, fetch_metadata=False)
        (e,) = s.errors
        assert e.file == str(res), e
        assert e.message.startswith(f"`model_name` of the results file's config_general is a list ({json.dumps(value)})"), e
        assert "NAME" in e.message and s.sources == 0 and store.load_outcomes().models == []
    assert ingest(str(out), store=store, fetch_metadata=False, model="org/light-model").errors == []
    assert store.load_outcomes().models == ["org/light-model"]


def test_a_symlink_loop_in_an_lm_eval_output_folder_reads_each_model_folder_once_without_a_warning(store, tmp_path):
    """A model folder holding a link to its parent (`ln -s .. loop`, as a tool syncing an output folder may leave) and
    a second link to a model folder: each model folder is read once, and no warning speaks of folders too deep to read.
    Before, the folder was reached again through the loop (read twice, counted as one unchanged source) and a warning
    said that `.../loop/fake-org__dummy-a/loop/fake-org__dummy-a` was more than 3 levels deep, not read."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out", out)
    (out / "fake-org__dummy-a" / "loop").symlink_to("..")
    (out / "again").symlink_to(out / "fake-org__dummy-b")
    s = ingest(str(out), store=store, fetch_metadata=False)
    assert (s.sources, s.skipped, s.errors, s.warnings) == (4, 0, [], []), (s.warnings, s.errors)
    assert len(store.load_outcomes().models) == 4
    again = ingest(str(out), store=store, fetch_metadata=False)
    assert (again.sources, again.skipped, again.warnings) == (0, 4, [])


def test_a_json_line_cut_short_or_of_nul_bytes_says_so_where_and_what_to_do(store, tmp_path):
    """A samples file whose last line breaks off (a copy that stopped, a run still writing) and one whose line is NUL
    bytes (what a crash leaves where data was to be written): each error gives the column, says what the line looks
    like and what to do, and the other lines are stored. Before: "malformed JSON line: Unterminated string starting
    at" (the sentence cut before its position) and "malformed JSON line: Expecting value" for the NULs."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    (f,) = (out / "fake-org__dummy-b").glob("samples_tiny_mc_yesno_*.jsonl")
    lines = f.read_bytes().splitlines()
    lines[2] = b"\x00" * 64
    f.write_bytes(b"\n".join(lines)[:-300])  # the last line loses its end (no line break after it either)
    s = ingest(str(out), store=store, fetch_metadata=False)
    errs = {e.line: e.message for e in s.errors if e.file == str(f)}
    assert sorted(errs) == [3, len(lines)], s.errors
    assert errs[3].startswith("malformed JSON line: it holds 64 NUL bytes") and "copy or export the file again" in errs[3]
    cut = errs[len(lines)]
    assert cut.startswith("malformed JSON line: Unterminated string starting at column ") and cut.split("column ")[1][0].isdigit()
    assert "breaks off before its end" in cut and "export or copy the file again" in cut
    assert s.sources == 1 and s.outcomes == 42 - 2


@pytest.mark.parametrize("content, said", [
    ("", "unreadable results file: it is empty (a run that stopped before writing it"),
    ("[]", "not an lm-eval results file: it holds an array, not the JSON object with `results` and `configs` keys"),
    ('"results"', "not an lm-eval results file: it holds a string, not the JSON object"),
])
def test_an_empty_or_non_object_results_file_is_named_for_what_it_holds(store, tmp_path, content, said):
    """A results file that is empty (a run stopped before writing it) or holds a JSON array or string: one error saying
    what it holds and what to do; nothing of its run stored; the store untouched, and the run reads once the file is
    back. Before: "unreadable results file: Expecting value: line 1 column 1 (char 0)" at line 1, and "no `results` and
    `configs` keys" said of an array."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    (res,) = (out / "fake-org__dummy-b").glob("results_*.json")
    good = res.read_text()
    res.write_text(content)
    s = ingest(str(out), store=store, fetch_metadata=False)
    (e,) = s.errors
    assert (e.file, e.line) == (str(res), None) and e.message.startswith(said), e
    assert "the samples of its timestamp are not read: " in e.message
    assert s.sources == 0 and store.load_outcomes().models == []
    res.write_text(good)
    assert ingest(str(out), store=store, fetch_metadata=False).errors == []
    assert store.load_outcomes().models == ["fake-org/dummy-b"]


@pytest.mark.parametrize("content", ["[1, 2]", '"org/light-model"', "null"])
def test_a_lighteval_results_file_that_is_no_object_costs_only_the_model_name_it_would_give(store, tmp_path, content):
    """lighteval's output folder whose results file holds a JSON array, string or null: the details are read, the
    model named from its folders (`<out>/details/org/light-model`), as when the results file does not parse. Before:
    "cannot be read: AttributeError: 'list' object has no attribute 'get' (an unexpected error ... please report it)"
    and nothing of the run stored."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "formats" / "lighteval_0.13_output", out)
    (res,) = (out / "results").rglob("results_*.json")
    res.write_text(content)
    s = ingest(str(out), store=store, fetch_metadata=False)
    assert s.errors == [] and s.sources == 1 and s.outcomes > 0, s.errors
    assert store.load_outcomes().models == ["org/light-model"]


@pytest.mark.parametrize("content, said", [("", "it is empty (a copy or download cut short?)"),
                                           ("  \n", "it is empty (a copy or download cut short?)"),
                                           ('{"config_general": {"model_na', "it cannot be read as JSON"),
                                           ("[1, 2]", "it holds a JSON array, not the run's JSON object"),
                                           # a re-save in PowerShell 5: before, "it cannot be read as JSON ('utf-8'
                                           # codec can't decode byte 0xff in position 0: invalid start byte)"
                                           ('{"config_general": {"model_name": "org/v1-shots"}}'.encode("utf-16"),
                                            "the file is UTF-16 text (it starts with a UTF-16 byte order mark), not "
                                            "UTF-8: nothing of it is read; save it as UTF-8")])
def test_an_empty_lighteval_v1_results_file_is_a_warning_naming_it_when_the_details_are_read_alone(store, tmp_path,
                                                                                                   content, said):
    """An Open LLM Leaderboard v1 details repo (`details_<org>__<model>/`) whose results file is empty (a copy or
    download cut short), does not parse or holds no object: the details are read and the model named from the folder,
    with a warning naming the results file, what it holds, that the model was named by the folder name and what to do;
    nothing of the kind with the results file whole. Before, the results file was passed over without a word."""
    import shutil

    repo = tmp_path / "details_org__v1-shots"
    shutil.copytree(Path(__file__).parent / "fixtures" / "formats" / "leaderboard_v1_shots" / "details_org__v1-shots",
                    repo)
    (res,) = repo.glob("results_*.json")
    good = res.read_text()
    res.write_bytes(content) if isinstance(content, bytes) else res.write_text(content)
    s = ingest(str(repo), store=store, fetch_metadata=False)
    assert s.errors == [] and s.sources == 1 and s.outcomes > 0, s.errors
    (w,) = s.warnings
    assert w.startswith(f"{res}: results file not read: {said}"), w
    assert "the model named 'org/v1-shots' by the folder name" in w and "copy the results file again" in w
    assert store.load_outcomes().models == ["org/v1-shots"]
    res.write_text(good)
    again = ingest(str(repo), store=store, fetch_metadata=False)
    assert again.warnings == [] and again.errors == []


def test_a_json_array_file_cut_short_says_where_it_breaks_off_and_what_to_do(store, tmp_path):
    """A `.json` prompts table (one JSON array) whose copy stopped half-way: one error at the line where parsing
    stopped, with its column, saying the file breaks off before its end and to copy it again; nothing of the table is
    stored (its outcome rows name no readable prompt). Before: "malformed JSON: Unterminated string starting at; the
    file is skipped" (the sentence cut before its position)."""
    d = tmp_path / "t"
    d.mkdir()
    rows = [{"prompt_id": f"p{j}", "benchmark": "b", "text": f"Question number {j}?"} for j in range(6)]
    text = json.dumps(rows, indent=1)
    (d / "prompts.json").write_text(text[: len(text) // 2])
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(_rows(["m1"], 6)))
    s = ingest(str(d), store=store, fetch_metadata=False)
    (e,) = [e for e in s.errors if e.file == str(d / "prompts.json")]
    assert e.line is not None and e.line > 1
    assert e.message.startswith("malformed JSON: ") and " column " in e.message
    assert "breaks off before its end" in e.message and "copy or download it again" in e.message
    assert s.sources == 0 and store.load_outcomes().models == []


def test_a_prompts_file_holding_its_rows_under_a_key_says_how_to_write_them(store, tmp_path):
    """`prompts.json` written as `{"prompts": [{...}, ...]}` (an object where an array of rows belongs): the error at
    line 1 says it holds N rows under 'prompts' and how to write them; nothing is stored. Before, only "missing
    field(s) prompt_id, benchmark, text", as if the object were a prompt row with its fields misspelt."""
    d = tmp_path / "t"
    d.mkdir()
    rows = [{"prompt_id": f"p{j}", "benchmark": "b", "text": f"Question number {j}?"} for j in range(4)]
    (d / "prompts.json").write_text(json.dumps({"prompts": rows}))
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(_rows(["m1"], 4)))
    s = ingest(str(d), store=store, fetch_metadata=False)
    (e,) = [e for e in s.errors if e.file == str(d / "prompts.json")]
    assert e.line == 1 and "one JSON object holding 4 rows under 'prompts'" in e.message
    assert "write them as a JSON array" in e.message
    assert s.sources == 0 and store.load_outcomes().models == []
    (d / "prompts.json").write_text(json.dumps(rows))
    assert ingest(str(d), store=store, fetch_metadata=False).errors == []


@pytest.mark.parametrize("name, nested, said", [
    ("prompts.json", True, "one JSON object holding 30 rows under 'prompts' spread over 154 lines"),
    ("prompts.jsonl", True, "one JSON object holding 30 rows under 'prompts' spread over 154 lines"),
    ("prompts.jsonl", False, "one JSON array of 30 items spread over 152 lines"),
])
def test_a_pretty_printed_json_prompts_file_is_one_error_saying_so_not_one_per_line(store, tmp_path, name, nested,
                                                                                    said):
    """A prompts file that is one JSON document spread over lines (`json.dump({"prompts": rows}, f, indent=2)`, or a
    pretty-printed array under a JSON-lines name): one error at line 1 saying it is one pretty-printed JSON document,
    not JSON lines, what it holds and how to write it; nothing stored. Before, every line was a "malformed JSON line"
    error (20 shown, then "N more rows rejected"), and only a one-line object got the hint."""
    d = tmp_path / "t"
    d.mkdir()
    rows = [{"prompt_id": f"p{j}", "benchmark": "b", "text": f"Question number {j}?"} for j in range(30)]
    (d / name).write_text(json.dumps({"prompts": rows} if nested else rows, indent=2) + "\n")
    (d / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(_rows(["m1"], 30)))
    s = ingest(str(d), store=store, fetch_metadata=False)
    (e,) = [e for e in s.errors if e.file == str(d / name)]
    assert e.line == 1 and e.message.startswith(f"the file is {said} (pretty-printed), not JSON lines"), e.message
    assert ("write the rows as a JSON array" if nested else "name it .json to read it as one JSON array") in e.message
    assert s.sources == 0 and store.load_outcomes().models == []


def test_a_pretty_printed_samples_file_is_one_error_saying_so(store, tmp_path):
    """An lm-eval samples file rewritten as one pretty-printed JSON object (`jq . samples.jsonl > x` of a one-sample
    file, `json.dump(sample, f, indent=2)`): one error at line 1 saying it is one JSON object spread over its lines,
    not JSON lines, and to write one object per line (`jq -c`); a pretty-printed file that does not parse says where.
    Before, one "malformed JSON line" error per line."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    (f,) = (out / "fake-org__dummy-b").glob("samples_tiny_mc_yesno_*.jsonl")
    first = json.loads(f.read_text().splitlines()[0])
    text = json.dumps(first, indent=2)
    f.write_text(text)
    s = ingest(str(out), store=store, fetch_metadata=False)
    (e,) = s.errors
    assert (e.file, e.line) == (str(f), 1) and e.message.startswith(
        f"the file is one JSON object spread over {text.count(chr(10)) + 1} lines (pretty-printed), not JSON lines"), e
    assert "write one object per line" in e.message and "jq -c" in e.message
    assert s.sources == 1 and s.outcomes == 42 - 12
    f.write_text("\n" + text[:-40])  # cut short, after a blank first line
    (e,) = ingest(str(out), store=store, fetch_metadata=False).errors
    assert e.line == 2 and "and it does not parse either" in e.message, e
    assert f"at line {text[:-40].count(chr(10)) + 2} column" in e.message, e


def test_a_samples_file_that_is_a_symlink_to_nothing_is_an_error_naming_it(store, tmp_path):
    """A samples file that is a symbolic link whose target was moved or deleted (a cache cleaned, a folder copied with
    its links): one error naming the link and saying its task is missing and what to do; the other tasks stored; with
    the target back, the next ingest reads the task. Before, the link was passed over without a word (exit 0) and the
    task was silently missing from the model."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    (f,) = (out / "fake-org__dummy-b").glob("samples_tiny_mc_yesno_*.jsonl")
    moved = tmp_path / "elsewhere.jsonl"
    f.rename(moved)
    f.symlink_to(tmp_path / "gone.jsonl")
    s = ingest(str(out), store=store, fetch_metadata=False)
    (e,) = s.errors
    assert e.file == str(f) and "a symbolic link to nothing" in e.message and "its task is missing" in e.message
    assert "restore the target or remove the link" in e.message
    assert s.sources == 1 and s.outcomes == 42 - 12
    f.unlink()
    f.symlink_to(moved)
    again = ingest(str(out), store=store, fetch_metadata=False)
    assert again.errors == [] and again.sources == 1 and again.outcomes == 42


@pytest.mark.parametrize("alone", [False, True])
def test_a_samples_file_that_is_a_named_pipe_in_a_model_folder_is_an_error_naming_it_never_opened(store, tmp_path,
                                                                                                  alone):
    """A samples file in a model folder that is a named pipe (`mkfifo`; a socket or device alike): one error naming it,
    saying it is no regular file and its task is missing, the other tasks stored; the pipe is never opened (which
    would wait for a writer forever). A model folder whose only samples file is a pipe is the same error, not "cannot
    tell the format". Before, the pipe was passed over without a word (exit 0), its task silently missing, while the
    same pipe given as the path was an error."""
    import os
    import shutil
    import threading

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    folder = out / "fake-org__dummy-b"
    (f,) = folder.glob("samples_tiny_mc_yesno_*.jsonl")
    if alone:  # the pipe is the folder's only samples file
        for other in folder.glob("samples_*.jsonl"):
            other.unlink()
    else:
        f.unlink()
    os.mkfifo(f)
    opened, done = [], threading.Event()

    def watch() -> None:  # a reader opening the pipe lets a non-blocking writer in: record it, and set the reader free
        while not done.wait(0.05):
            try:
                fd = os.open(f, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: no reader has it open
                continue
            opened.append(True)
            os.close(fd)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    try:
        s = ingest(str(out), store=store, fetch_metadata=False)
    finally:
        done.set()
        t.join()
    assert not opened, "the named pipe was opened"
    (e,) = s.errors
    assert e.file == str(f) and e.line is None, e
    assert e.message.startswith("not a regular file (a named pipe, socket or device)") and "its task is missing" in e.message
    if alone:
        assert s.sources == 0 and store.load_outcomes().models == []
    else:
        assert s.sources == 1 and s.outcomes == 42 - 12


def test_an_lm_eval_0_4_2_output_folder_is_named_as_such_and_what_to_do(store, tmp_path):
    """lm-evaluation-harness 0.4.0-0.4.2's --log_samples output (`results.json` beside `<model_args>_<task>.jsonl`, no
    timestamps), which FORMATS.md lists as not read: the error names that layout and says to re-run with 0.4.3+ or
    convert to a plain table, with `--format lm_eval` too; nothing stored. Before: "cannot tell the format of this
    folder: expected outcomes.<ext> + prompts.<ext> (plain table), samples_<task>_<ts>.jsonl + ..." (and with
    --format lm_eval: "no lm-eval samples files"), which did not say that this harness output is known and not read."""
    import shutil

    src = Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b"
    run = tmp_path / "out" / "pretrained__fake-org__dummy-b"
    run.mkdir(parents=True)
    shutil.copy(next(src.glob("results_*.json")), run / "results.json")
    shutil.copy(next(src.glob("samples_tiny_mc_yesno_*.jsonl")), run / "pretrained=fake-org__dummy-b_tiny_mc_yesno.jsonl")
    for fmt in (None, "lm_eval"):
        s = ingest(str(tmp_path / "out"), store=store, fetch_metadata=False, format=fmt)
        (e,) = s.errors
        assert e.file == str(tmp_path / "out"), e
        assert e.message.startswith("lm-evaluation-harness 0.4.0-0.4.2 output (pretrained__fake-org__dummy-b/results.json")
        assert "harness 0.4.3 or later" in e.message and "plain table" in e.message
        assert s.sources == 0 and store.load_outcomes().models == []


def test_an_lm_eval_0_4_2_output_folder_whose_results_file_was_named_by_output_path_is_named_as_such(store, tmp_path):
    """lm-evaluation-harness 0.4.0-0.4.2 run with `--output_path output/w.json --log_samples` (as a real run committed
    to a fork of the harness): the results go to `output/w.json` (no timestamp, no `results.json`) beside the samples
    `output/<model_args>_<task>.jsonl` (`_winogrande.jsonl` for empty model_args). The error names that layout and
    `w.json`, with `--format lm_eval` too; nothing stored. Before: "cannot tell the format of this folder: expected
    outcomes.<ext> + prompts.<ext> (plain table), ..." (with --format lm_eval: "no lm-eval samples files"), as only a
    `results.json` was recognised as this layout's results file."""
    out = tmp_path / "output"
    out.mkdir()
    (out / "w.json").write_text(json.dumps({
        "results": {"winogrande": {"acc,none": 0.5, "acc_stderr,none": 0.5}},
        "configs": {"winogrande": {"task": "winogrande", "dataset_path": "winogrande", "output_type": "multiple_choice",
                                   "num_fewshot": 0}},
        "versions": {"winogrande": 1.0}, "config": {"model": "hf", "model_args": "", "batch_size": 1},
        "git_hash": "4d10ad5"}, indent=2))
    rows = [{"doc_id": i, "doc": {"sentence": f"Sarah was a much better surgeon than Maria so _ always got the {w} "
                                              "cases.", "option1": "Sarah", "option2": "Maria", "answer": a},
             "target": f"always got the {w} cases.", "arguments": [["Sarah was a much better surgeon than Maria so "
                                                                   "Sarah", f" always got the {w} cases."]],
             "resps": [[[-15.5546875, False]], [[-15.78125, False]]],
             "filtered_resps": [[-15.5546875, False], [-15.78125, False]], "acc": acc}
            for i, (w, a, acc) in enumerate([("easier", "2", 0.0), ("harder", "1", 1.0)])]
    (out / "_winogrande.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "o.json").write_text(json.dumps({"results": {}, "configs": {}, "versions": {}, "config": {}}))
    for fmt in (None, "lm_eval"):
        s = ingest(str(out), store=store, fetch_metadata=False, format=fmt)
        (e,) = s.errors
        assert e.file == str(out), e
        assert e.message.startswith("lm-evaluation-harness 0.4.0-0.4.2 output (o.json beside <model_args>_<task>.jsonl"), e
        assert "harness 0.4.3 or later" in e.message and "plain table" in e.message
        assert s.sources == 0 and store.load_outcomes().models == []


@pytest.mark.parametrize("kind, said", [
    ("loop", "a loop of symbolic links: it names no file or folder"),
    ("dangling", "a symbolic link to nothing (its target, "),
    ("fifo", "not a regular file or folder (a named pipe, socket or device)"),
])
def test_a_source_path_that_is_a_link_loop_a_dangling_link_or_a_pipe_is_named_for_what_it_is(store, tmp_path, kind,
                                                                                             said):
    """`taskspace ingest`, `sources add` and `index --source` of a path that is a loop of symbolic links, a link whose
    target was moved, or a named pipe: one error naming the path given and what it is, nothing stored or saved, the
    store as before. Before: a loop was a RuntimeError traceback from `sources add` / `index --source` and "no such
    file or folder" from `ingest`; a dangling link was "no such file or folder" naming its missing target; a pipe was
    "no such file or folder" though it exists."""
    import os

    from indexer.errors import ConfigError
    from indexer.sourcelist import SourceSpec, validate

    write_source(tmp_path / "good", "good", [f"Good question {i}?" for i in range(4)],
                 outcomes(np.random.default_rng(5), ["org/a"], 4))
    assert ingest(str(tmp_path / "good"), store=store, fetch_metadata=False).sources == 1
    p = tmp_path / "samples_x_2026-01-01T00-00-00.000000.jsonl"
    if kind == "loop":
        p.symlink_to(p.name)
    elif kind == "dangling":
        p.symlink_to(tmp_path / "moved-away.jsonl")
    else:
        os.mkfifo(p)
    with pytest.raises(InputError) as err:  # as for a path that does not exist (the CLI: "error: PATH: ...", exit 1)
        ingest(str(p), store=store, fetch_metadata=False)
    assert (err.value.file, err.value.line) == (str(p), None) and err.value.message.startswith(said), err.value
    assert store.load_outcomes().models == ["org/a"]
    with pytest.raises(ConfigError) as got:
        validate(SourceSpec(str(p)))
    assert str(got.value).startswith(f"{p}: {said}") and "nothing was saved" in str(got.value)


def test_a_samples_line_whose_doc_id_is_no_number_or_name_costs_its_line(store, tmp_path):
    """lm-eval samples lines whose `doc_id` is a list, an object, a fraction or null (a hand-edited or hostile file):
    each an error at its line, the other lines stored. Before, the list, object and fraction were stored under prompt
    ids made of their repr (`tiny_mc_yesno:[1]`, `tiny_mc_yesno:1.5`) and null as `tiny_mc_yesno:None`, without a word."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    (f,) = (out / "fake-org__dummy-b").glob("samples_tiny_mc_yesno_*.jsonl")
    rows = [json.loads(x) for x in f.read_text().splitlines()]
    for row, bad in zip(rows, [[1], {"a": 1}, 1.5, None, True]):
        row["doc_id"] = bad
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = ingest(str(out), store=store, fetch_metadata=False)
    errs = {e.line: e.message for e in s.errors}
    assert sorted(errs) == [1, 2, 3, 4, 5], s.errors
    assert errs[1].startswith("doc_id [1] is not a whole number or a name") and errs[4] == "missing field doc_id"
    assert errs[3].startswith("doc_id 1.5 is not") and errs[5].startswith("doc_id true is not")
    assert s.outcomes == 42 - 5


def test_a_samples_line_whose_doc_id_holds_a_control_character_costs_its_line(store, tmp_path):
    """lm-eval samples lines whose `doc_id` is a name holding a NUL, a tab or a terminal escape: each an invalid id at
    its line (as a plain table's prompt id), the other lines stored. Before, they were stored: the prompt's source id
    `tiny_mc_yesno:a` on SQLite for `a\x00b` (cut at the NUL; PostgreSQL refuses a NUL), the tab and escape as given."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    (f,) = (out / "fake-org__dummy-b").glob("samples_tiny_mc_yesno_*.jsonl")
    rows = [json.loads(x) for x in f.read_text().splitlines()]
    for row, bad in zip(rows, ["a\x00b", "a\tb", "a\x1b[2Jb"]):
        row["doc_id"] = bad
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = ingest(str(out), store=store, fetch_metadata=False)
    errs = {e.line: e.message for e in s.errors}
    assert sorted(errs) == [1, 2, 3], s.errors
    assert errs[1] == "doc_id 'a\\x00b' is not a valid id: it holds a NUL character; the line is skipped: fix the source"
    assert errs[2].startswith("doc_id 'a\\tb' is not a valid id: it holds a control character (U+0009")
    assert s.outcomes == 42 - 3


def test_an_lm_eval_metric_value_just_off_binary_is_quoted_as_written(store, tmp_path):
    """An lm-eval samples line whose binary `acc` is 0.9999999 (a float sum written out): the error quotes it as
    written. Before, "acc value 1 is not binary", a value that is fine."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    (f,) = (out / "fake-org__dummy-b").glob("samples_tiny_mc_yesno_*.jsonl")
    rows = [json.loads(x) for x in f.read_text().splitlines()]
    rows[0]["acc"] = 0.9999999
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (e,) = ingest(str(out), store=store, fetch_metadata=False).errors
    assert e.line == 1 and e.message.startswith("acc value 0.9999999 is not binary"), e


def test_a_samples_line_whose_filter_is_no_name_is_an_error_at_its_line(store, tmp_path):
    """lm-eval samples lines whose `filter` is a list, null or blank (a hand-edited or another tool's file): each an
    error at its line naming the value, the other lines stored. Before, each was grouped under a filter of its own
    (`['none']`, `None`), which no read chose: the lines were dropped without a word."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    (f,) = (out / "fake-org__dummy-b").glob("samples_tiny_mc_yesno_*.jsonl")
    rows = [json.loads(x) for x in f.read_text().splitlines()]
    for row, bad in zip(rows, [["none"], None, " "]):
        row["filter"] = bad
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = ingest(str(out), store=store, fetch_metadata=False)
    errs = {e.line: e.message for e in s.errors}
    assert sorted(errs) == [1, 2, 3], s.errors
    assert errs[1] == 'filter ["none"] is not a filter name (a string); the line is skipped: fix the source', errs
    assert errs[2].startswith("filter null is not a filter name") and errs[3].startswith('filter " " is not'), errs
    assert s.outcomes == 42 - 3


def test_a_samples_file_of_json_lines_whose_first_line_is_an_array_costs_that_line(store, tmp_path):
    """An lm-eval samples file of JSON lines whose first line is a JSON array (`[1, 2]`, a stray line): that line is
    an error (not a JSON object), the lines after it are read. Before, the file was taken for one JSON array, which
    did not parse: "malformed JSON: Extra data at column 1; the file breaks off before its end (a copy or download cut
    short ...)", at line 2, and every line of the file lost."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    (f,) = (out / "fake-org__dummy-b").glob("samples_tiny_mc_yesno_*.jsonl")
    f.write_text("[1, 2]\n" + f.read_text())
    s = ingest(str(out), store=store, fetch_metadata=False)
    (e,) = s.errors
    assert (e.file, e.line, e.message) == (str(f), 1, "line is not a JSON object"), e
    assert s.outcomes == 42


def test_a_folder_with_prompts_but_no_outcomes_or_with_nothing_says_what_it_lacks(store, tmp_path):
    """`taskspace ingest DIR` (and `index --source DIR`, `sources add DIR`, `evaluate DIR`) of a folder holding a
    prompts file and no outcomes file names the prompts file and says to put the outcomes beside it, as a folder of
    outcomes without prompts says; an empty folder (to `ingest`, which reads it now) is said to be empty. Before,
    both were "cannot tell the format of this folder: expected ...; pass --format", the advice for a folder of
    unknown files, though no --format reads either."""
    from indexer.errors import ConfigError
    from indexer.evaluate import evaluate
    from indexer.sourcelist import SourceSpec, validate

    lone = tmp_path / "lone"
    _prompts(lone, ["What is 2 + 2?"])
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder, said in ((lone, "prompts.jsonl but no outcomes file beside it: put one there (outcomes.csv"),
                         (empty, "the folder is empty: put a source's files in it (")):
        s = ingest(str(folder), store=store, fetch_metadata=False)
        (e,) = s.errors
        assert e.file == str(folder) and e.message.startswith(said), e
        assert "cannot tell" not in e.message and "--format" not in e.message, e
        with pytest.raises(InputError) as err:
            evaluate(folder, split="oos", sweep=False)
        assert said in str(err.value), err.value
    with pytest.raises(ConfigError) as got:
        validate(SourceSpec(str(lone)))
    assert str(got.value).startswith(f"source '{lone}': prompts.jsonl but no outcomes file beside it"), got.value
    assert store.load_outcomes().models == []


@pytest.mark.parametrize("suffix,tool", [(".zst", "zstd"), (".bz2", "bzip2"), (".xz", "xz")])
def test_a_source_compressed_with_other_than_gzip_is_an_error_naming_the_file_and_how_to_read_it(store, tmp_path,
                                                                                               suffix, tool):
    """`zstd -r --rm out/` (or bzip2, xz) over an lm-eval output folder, or over a table's outcomes file, and then
    `taskspace ingest`: an error naming each compressed file (of the table, the outcomes file), the compression, and
    to decompress it or use gzip; nothing stored. Before, the lm-eval folder was "cannot tell the format of this folder ... pass --format" (no --format
    reads it) and the table folder "prompts.jsonl but no outcomes file beside it: put one there" (it is there)."""
    import shutil

    table = tmp_path / "table"
    _prompts(table, ["What is 2 + 2?"])
    (table / f"outcomes.csv{suffix}").write_bytes(b"\x28\xb5\x2f\xfd compressed")
    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out" / "fake-org__dummy-b",
                    out / "fake-org__dummy-b")
    for f in sorted((out / "fake-org__dummy-b").iterdir()):
        f.rename(f.with_name(f.name + suffix))
    every = sorted((out / "fake-org__dummy-b").iterdir())
    for given, files in ((table, [table / f"outcomes.csv{suffix}"]), (table / f"outcomes.csv{suffix}", None),
                         (out, every)):
        s = ingest(str(given), store=store, fetch_metadata=False)
        assert [e.file for e in s.errors] == [str(f) for f in files or [given]], s.errors  # (each file of the run)
        for e in s.errors:
            assert f"compressed with {tool}" in e.message and "decompress" in e.message and "gzip" in e.message, e
            assert "--format" not in e.message and "no outcomes file" not in e.message, e
    assert store.load_outcomes().models == []


def test_a_table_file_compressed_with_other_than_gzip_is_that_error_with_format_table_too(store, tmp_path):
    """The table of the test above read with its format given (`taskspace ingest --format table`, a sources.toml entry
    with format = "table"): its zstd outcomes file, given or in its folder, and a zstd prompts file beside a plain
    outcomes file, are the same one error naming the file, the compression and to decompress it or use gzip; nothing
    stored. Before, the check stood in the format detection alone, so with --format the folder was "no outcomes.<ext>
    or matrix.<ext> in this folder", the file itself was read as CSV ("not valid UTF-8 text" on each line) and the
    compressed prompts file was "no prompts file ... beside the outcomes; put one there"."""
    table = tmp_path / "table"
    _prompts(table, ["What is 2 + 2?"])
    (table / "outcomes.csv.zst").write_bytes(b"\x28\xb5\x2f\xfd compressed")
    beside = tmp_path / "beside"
    _prompts(beside, ["What is 2 + 2?"])
    (beside / "prompts.jsonl").rename(beside / "prompts.jsonl.zst")
    (beside / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p0,1\n")
    for given, file in ((table, table / "outcomes.csv.zst"), (table / "outcomes.csv.zst", table / "outcomes.csv.zst"),
                        (beside, beside / "prompts.jsonl.zst"), (beside / "outcomes.csv", beside / "prompts.jsonl.zst")):
        s = ingest(str(given), format="table", store=store, fetch_metadata=False)
        assert [e.file for e in s.errors] == [str(file)], (given, s.errors)
        (e,) = s.errors
        assert "compressed with zstd" in e.message and "decompress" in e.message and "gzip" in e.message, e
    assert store.load_outcomes().models == []


def _pandas_json(rows: list[dict], orient: str) -> dict:
    """What pandas' ``DataFrame(rows).to_json(orient=orient)`` writes (pandas is no dependency here)."""
    cols = list(rows[0])
    if orient == "columns":  # to_json()'s default
        return {c: {str(i): r[c] for i, r in enumerate(rows)} for c in cols}
    if orient == "index":
        return {str(i): r for i, r in enumerate(rows)}
    return {"columns": cols, "index": list(range(len(rows))), "data": [[r[c] for c in cols] for r in rows]}


@pytest.mark.parametrize("orient", ["columns", "index", "split"])
def test_a_table_written_by_pandas_to_json_without_orient_records_is_one_error_saying_how_to_write_it(store, tmp_path,
                                                                                                 orient):
    """`df.to_json("outcomes.json")` (pandas' default, orient="columns": {column: {row: value}}), orient="index" or
    "split", for the outcomes or the prompts file, on one line or pretty-printed (indent=2): one error at line 1 naming
    pandas' layout, the number of rows and `orient="records"`; nothing stored. Before, "model is an object, not a name,
    prompt_id is an object, not a name, correct is an object, not a score; the row is skipped" ("columns is a list, not
    a name" for split), and each outcome row of such a prompts file said "prompt_id 'p0' is not in the prompts file",
    as if it had been read."""
    prompts = [{"prompt_id": f"p{j}", "benchmark": "b", "text": f"Question {j}?"} for j in range(3)]
    rows = [{"model": m, "prompt_id": f"p{j}", "correct": (j + k) % 2} for k, m in enumerate(["m1", "m2"]) for j in range(3)]
    for name, which, data, indent in (("outcomes", rows, "prompts", None), ("prompts", prompts, "outcomes", None),
                                      ("outcomes", rows, "prompts", 2)):
        folder = tmp_path / f"{orient}-{name}-{indent}"
        folder.mkdir()
        (folder / f"{name}.json").write_text(json.dumps(_pandas_json(which, orient), indent=indent))
        other = prompts if data == "prompts" else rows
        (folder / f"{data}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in other))
        s = ingest(str(folder), store=store, fetch_metadata=False)
        (e,), others = ([e for e in s.errors if e.file.endswith(".json")],
                        [e for e in s.errors if not e.file.endswith(".json")])
        assert (e.file, e.line) == (str(folder / f"{name}.json"), 1), e
        assert f"pandas' to_json() {orient} layout" in e.message and (f"{len(which)} rows" if len(which) != 1 else "1 row") in e.message, e
        assert 'orient="records"' in e.message and "is an object, not" not in e.message, e
        # the outcome rows of a prompts file so written: not "is not in the prompts file" alone, as if it were read
        assert all("which could not be read (its error says why)" in r.message for r in others), others
    assert store.load_outcomes().models == []


def test_a_zstd_samples_file_among_plain_ones_is_an_error_naming_it_and_the_rest_is_stored(store, tmp_path):
    """An lm-eval output folder where one task's samples file, and every file of another model folder, was compressed
    with zstd (`zstd --rm` on some files): one error per such file naming it, the compression and what to do; the
    other tasks and model folders are stored, and a model folder stored whole is kept (quarantined: its new revision
    reads with errors). Before, they were passed over without a word (that task's outcomes, and that model, missing
    from an ingest that reported no error; a stored model folder replaced by one without the task)."""
    import shutil

    out = tmp_path / "out"
    shutil.copytree(Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out", out)
    (one,) = (out / "fake-org__dummy-b").glob("samples_tiny_gen_arith_*.jsonl")
    one.rename(one.with_name(one.name + ".zst"))
    whole = sorted((out / "fake-org__dummy-c").iterdir())
    for f in whole:
        f.rename(f.with_name(f.name + ".zst"))
    s = ingest(str(out), store=store, fetch_metadata=False)
    said = {e.file: e.message for e in s.errors}
    assert set(said) == {str(one) + ".zst", *(str(f) + ".zst" for f in whole)}, s.errors
    assert all("compressed with zstd" in m and "decompress" in m for m in said.values()), said
    dummy_b = [m for m in store.load_outcomes().models if m.endswith("dummy-b")]
    assert s.outcomes == 42 + 42 + 27 and dummy_b, s  # dummy-a, noisy-oracle-70, dummy-b but its gen_arith
    # decompressed, the task is read; compressed again, the stored one is kept (an error: the new revision quarantined)
    one.with_name(one.name + ".zst").rename(one)
    assert ingest(str(out), store=store, fetch_metadata=False).outcomes == 42
    one.rename(one.with_name(one.name + ".zst"))
    again = ingest(str(out), store=store, fetch_metadata=False)
    assert again.quarantined == [str(out / "fake-org__dummy-b")], again
    assert store.get_source(str(out / "fake-org__dummy-b")).n_outcomes == 42


def test_a_folder_of_table_folders_is_an_error_naming_them_and_to_ingest_each(store, tmp_path):
    """`taskspace ingest results` where `results/` holds `run1/` and `run2/`, each an outcomes + prompts table (and a
    README): one error naming the table folders below it and saying to ingest each by its path; nothing stored.
    Before, "cannot tell the format of this folder: ...; pass --format", advice no --format follows."""
    rng = np.random.default_rng(5)
    top = tmp_path / "results"
    write_source(top / "run1", "a", [f"A {i}?" for i in range(4)], outcomes(rng, ["m1"], 4))
    write_source(top / "run2", "b", [f"B {i}?" for i in range(4)], outcomes(rng, ["m2"], 4))
    (top / "README.md").write_text("two runs\n")
    s = ingest(str(top), store=store, fetch_metadata=False)
    (e,) = s.errors
    assert e.file == str(top) and "cannot tell the format" not in e.message, e
    assert "run1 (table)" in e.message and "run2 (table)" in e.message and "ingest each by its own path" in e.message, e
    assert str(top / "run1") in e.message, e
    assert store.load_outcomes().models == []


def test_a_folder_of_several_zstd_tables_names_every_compressed_file(store, tmp_path):
    """`taskspace ingest FOLDER` of a folder whose table sources were all compressed with zstd (`zstd -r`: no source
    readable): the one error names its first compressed file and, after it, every other one (relative to the folder,
    up to 5 then how many more), so none is left to be found by a second ingest. Before, only the first was named."""
    top = tmp_path / "top"
    for d in ("x", "y", "z"):
        _prompts(top / d, ["What is 2 + 2?"])
        (top / d / "outcomes.csv.zst").write_bytes(b"\x28\xb5\x2f\xfd compressed")
    s = ingest(str(top), store=store, fetch_metadata=False)
    (e,) = s.errors
    assert e.file == str(top / "x" / "outcomes.csv.zst") and "compressed with zstd" in e.message, e
    assert e.message.endswith("; so are 2 more files of this folder: y/outcomes.csv.zst, z/outcomes.csv.zst"), e.message
