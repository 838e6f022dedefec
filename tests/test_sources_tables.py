"""Plain tables (long and matrix form) -> SourceBatch, including the bad-input cases."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indexer.errors import InputError
from indexer.records import OutcomeTable
from indexer.sources import detect_format, read_source
from indexer.sources.common import MAX_ERRORS_PER_PROBLEM

PROMPTS = [
    {"prompt_id": "p1", "benchmark": "demo/a", "text": "What is 1+1?"},
    {"prompt_id": "p2", "benchmark": "demo/a", "text": "What is 2+2?"},
    {"prompt_id": "p3", "benchmark": "demo/b", "text": "Name a prime."},
    {"prompt_id": "p4", "benchmark": "demo/a", "text": "What is 1+1?"},  # same text as p1
]
ROWS = [("m1", "p1", 1), ("m1", "p2", 0), ("m1", "p3", 1), ("m1", "p4", 0), ("m2", "p1", 0), ("m2", "p3", 1)]


def write_prompts(folder, ext="jsonl"):
    if ext == "jsonl":
        (folder / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PROMPTS))
    elif ext == "csv":
        lines = ["prompt_id,benchmark,text"] + [f'{p["prompt_id"]},{p["benchmark"]},"{p["text"]}"' for p in PROMPTS]
        (folder / "prompts.csv").write_text("\n".join(lines) + "\n")
    elif ext == "parquet":
        pq.write_table(pa.Table.from_pylist(PROMPTS), folder / "prompts.parquet")


def write_outcomes(folder, ext, rows=ROWS, value="correct"):
    if ext in ("csv", "csv.gz"):
        text = f"model,prompt_id,{value}\n" + "".join(f"{m},{p},{c}\n" for m, p, c in rows)
        if ext == "csv":
            (folder / "outcomes.csv").write_text(text)
        else:
            with gzip.open(folder / "outcomes.csv.gz", "wt") as f:
                f.write(text)
    elif ext == "jsonl":
        (folder / "outcomes.jsonl").write_text(
            "".join(json.dumps({"model": m, "prompt_id": p, value: c}) + "\n" for m, p, c in rows)
        )
    elif ext == "parquet":
        pq.write_table(
            pa.table({"model": [r[0] for r in rows], "prompt_id": [r[1] for r in rows], value: [r[2] for r in rows]}),
            folder / "outcomes.parquet",
        )


def cells(batch):
    return sorted((o.model, o.prompt_id, o.benchmark, o.text, o.score) for o in batch.iter_outcomes())


EXPECTED = sorted(
    (m, p, next(x["benchmark"] for x in PROMPTS if x["prompt_id"] == p), next(x["text"] for x in PROMPTS if x["prompt_id"] == p), float(c))
    for m, p, c in ROWS
)


@pytest.mark.parametrize("out_ext", ["csv", "csv.gz", "jsonl", "parquet"])
@pytest.mark.parametrize("prompt_ext", ["jsonl", "csv", "parquet"])
def test_long_form_every_format_reads_the_same(tmp_path, out_ext, prompt_ext):
    write_prompts(tmp_path, prompt_ext)
    write_outcomes(tmp_path, out_ext)
    assert detect_format(tmp_path) == "table"
    batch = read_source(tmp_path)
    assert batch.errors == []
    assert cells(batch) == EXPECTED
    assert batch.source.kind == "table" and batch.source.revision.startswith("sha256:")
    assert set(batch.benchmarks) == {"demo/a", "demo/b"}
    assert batch.benchmarks["demo/a"].group == "demo"
    assert batch.n_outcomes == len(ROWS)


def test_outcomes_file_path_finds_prompts_beside_it_and_revision_tracks_content(tmp_path):
    write_prompts(tmp_path)
    write_outcomes(tmp_path, "csv")
    a = read_source(tmp_path / "outcomes.csv")
    assert cells(a) == EXPECTED
    write_outcomes(tmp_path, "csv", ROWS[:-1])
    b = read_source(tmp_path / "outcomes.csv")
    assert a.source.revision != b.source.revision


def test_score_column_accepts_graded_values(tmp_path):
    write_prompts(tmp_path)
    write_outcomes(tmp_path, "csv", [("m1", "p1", 0.25), ("m1", "p2", 1)], value="score")
    batch = read_source(tmp_path)
    assert batch.errors == []
    assert sorted(o.score for o in batch.iter_outcomes()) == [0.25, 1.0]
    assert batch.benchmarks["demo/a"].metric == "score"


def test_copies_of_a_text_are_averaged_by_merged(tmp_path):
    write_prompts(tmp_path)
    write_outcomes(tmp_path, "csv")
    table = read_source(tmp_path).to_table().merged()
    got = sorted((table.models[m], table.texts[p], s) for m, p, s in zip(table.model_idx, table.prompt_idx, table.scores))
    # m1 answered p1 right and its copy p4 wrong: one prompt, graded 0.5
    assert ("m1", "What is 1+1?", 0.5) in got
    assert ("m2", "What is 1+1?", 0.0) in got
    assert len(table.texts) == 3 and len(got) == 5


def test_matrix_form(tmp_path):
    write_prompts(tmp_path)
    (tmp_path / "matrix.csv").write_text("model,p1,p2,p3\nm1,1,0,\nm2,0.5,,1\n")
    batch = read_source(tmp_path)
    assert batch.errors == []
    got = sorted((o.model, o.prompt_id, o.score) for o in batch.iter_outcomes())
    assert got == [("m1", "p1", 1.0), ("m1", "p2", 0.0), ("m2", "p1", 0.5), ("m2", "p3", 1.0)]  # empty = unobserved


def test_a_matrix_parquet_whose_models_are_the_pandas_index_reads_them_as_models(tmp_path, store):
    """`df.to_parquet("matrix.parquet")` of a models x prompt ids DataFrame whose models are its unnamed index: pandas
    stores the index as a last column `__index_level_0__`. Before, the first column (prompt id p1) was taken for the
    model column: a model named "1.0" was stored with the p2 cell, and the index column was "prompt_id
    '__index_level_0__' is not in the prompts file". Now that column holds the models; a `model` column still wins."""
    from indexer.ingest import ingest

    write_prompts(tmp_path)
    pq.write_table(pa.table({"p1": [1.0, None], "p2": [0.0, 1.0], "__index_level_0__": ["m1", "m2"]}),
                   tmp_path / "matrix.parquet")
    batch = read_source(tmp_path)
    assert batch.errors == [] and sorted(batch.table.models) == ["m1", "m2"]
    assert sorted((o.model, o.prompt_id, o.score) for o in batch.iter_outcomes()) == [
        ("m1", "p1", 1.0), ("m1", "p2", 0.0), ("m2", "p2", 1.0)]
    s = ingest(str(tmp_path), store=store, fetch_metadata=False)
    assert (s.models, s.outcomes) == (2, 3)


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_a_matrix_without_a_model_column_is_one_error_not_models_named_after_cells(tmp_path, ext):
    """A matrix exported without its model names (`df.to_csv(index=False)`: `p1,p2,p3` then 0/1 rows): the first
    column was taken for the model column, so its cells became models ("0", "1") and the rows of each conflicted.
    Now, when that first column is a prompt id of the prompts file, one error says there is no model column and
    nothing of the file is read."""
    write_prompts(tmp_path)
    header, rows = ["p1", "p2", "p3"], [["1", "0", "1"], ["0", "1", "1"], ["1", "1", "0"]]
    if ext == "csv":
        (tmp_path / "matrix.csv").write_text("\n".join(",".join(r) for r in [header, *rows]) + "\n")
    else:
        pq.write_table(pa.table({h: [float(r[i]) for r in rows] for i, h in enumerate(header)}), tmp_path / "matrix.parquet")
    batch = read_source(tmp_path)
    (e,) = batch.errors
    assert e.line == (1 if ext == "csv" else None) and e.message.startswith("no model column: the first column, 'p1',")
    assert batch.table.scores.size == 0


@pytest.mark.parametrize("first", ["prompt_id", "", "question"])
@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_a_transposed_matrix_is_one_error_saying_to_transpose_it(tmp_path, ext, first):
    """A matrix with one row per prompt and a column per model (`df.pivot(index="prompt_id", columns="model").to_csv()`,
    its first header `prompt_id`, empty, or another name): one error at the header saying it is transposed and to
    transpose it; nothing read. Before, a first column `prompt_id` made it long form "missing column(s) model,
    correct|score", and another name read its prompt ids as models and each model column as a prompt id "not in the
    prompts file" (an error per model)."""
    write_prompts(tmp_path)
    header, rows = [first, "org/m1", "org/m2"], [["p1", "1", "0"], ["p2", "0", "1"], ["p3", "1", "1"]]
    if ext == "csv":
        (tmp_path / "matrix.csv").write_text("\n".join(",".join(r) for r in [header, *rows]) + "\n")
    else:
        pq.write_table(pa.table({h or "__index_level_0__": [r[i] if i == 0 else float(r[i]) for r in rows]
                                 for i, h in enumerate(header)}), tmp_path / "matrix.parquet")
    batch = read_source(tmp_path)
    (e,) = batch.errors
    assert e.line == (1 if ext == "csv" else None), e
    assert "one row per prompt and a column per model" in e.message and "transpose it" in e.message, e
    assert "'p1'" in e.message and "'org/m1'" in e.message, e
    assert batch.table.scores.size == 0
    if first == "prompt_id":  # long form with misnamed columns is not taken for one: its names are no scores
        (tmp_path / f"matrix.{ext}").unlink()
        (tmp_path / "outcomes.csv").write_text("model_name,prompt_id,acc\norg/m1,p1,1\n")
        (e,) = read_source(tmp_path).errors
        assert e.message.startswith("missing columns model, correct|score"), e


def test_a_wide_matrix_is_read_in_one_call_per_type_of_column_with_the_outcomes_of_its_long_form(tmp_path, monkeypatch):
    """A matrix block's cells are read at once per type of column (before, one add_long per prompt column: 21 s of
    CPU for 30 models x 20,000 prompts); what is stored, and each bad cell's error, is what the long form gives."""
    from indexer.sources import tables

    calls = []
    add_long = tables._Builder.add_long
    monkeypatch.setattr(tables._Builder, "add_long", lambda self, *a, **k: (calls.append(1), add_long(self, *a, **k)))
    write_prompts(tmp_path)
    pq.write_table(pa.table({"model": ["m1", "m2", "m3"], "p1": [1.0, 0.5, 0.0], "p2": [0, None, 1],
                             "p3": ["yes", "x", "no"], "p4": [None, 1, 0]}), tmp_path / "matrix.parquet")
    batch = read_source(tmp_path / "matrix.parquet")
    assert len(calls) == 3  # p1 double, p2 and p4 int64 (together), p3 text; before, 4 (one per column)
    got = sorted((o.model, o.prompt_id, o.score) for o in batch.iter_outcomes())
    assert got == [("m1", "p1", 1.0), ("m1", "p2", 0.0), ("m1", "p3", 1.0), ("m2", "p1", 0.5), ("m2", "p4", 1.0),
                   ("m3", "p1", 0.0), ("m3", "p2", 1.0), ("m3", "p3", 0.0), ("m3", "p4", 0.0)]
    assert ["'x'" in e.message for e in batch.errors] == [True]


def test_matrix_form_parquet_with_bad_cells(tmp_path):
    write_prompts(tmp_path)
    pq.write_table(pa.table({"model": ["m1", "m2"], "p1": [1.0, 2.0], "p9": [1.0, None]}), tmp_path / "matrix.parquet")
    batch = read_source(tmp_path)
    msgs = [str(e) for e in batch.errors]
    assert any("matrix.parquet:2:" in m and "outside [0, 1]" in m for m in msgs)
    assert any("'p9' is not in the prompts file" in m for m in msgs)
    assert [(o.model, o.prompt_id) for o in batch.iter_outcomes()] == [("m1", "p1")]


# ------------------------------------------------------------------ bad input: file, line and what is wrong


def errors_of(batch):
    return [(e.file.rsplit("/", 1)[-1], e.line, e.message) for e in batch.errors]


def test_the_advice_for_a_nan_score_is_the_one_of_its_form_and_following_it_reads_clean(tmp_path):
    """A NaN score's error says what to do instead, and doing it reads without an error: in long form leave the row
    out (an empty value there is an error of its own, "missing correct value"), in matrix form leave the cell empty
    (unobserved). Before, both forms advised "leave the value empty, or leave the row out": in long form the empty
    value was rejected in turn, in matrix form leaving the row out drops the model's other cells."""
    write_prompts(tmp_path)
    write_outcomes(tmp_path, "csv", [("m1", "p1", 1), ("m1", "p2", "NaN")])
    [(_, _, long_msg)] = errors_of(read_source(tmp_path))
    assert long_msg.endswith("leave the row out when the outcome is unknown)") and "empty" not in long_msg
    write_outcomes(tmp_path, "csv", [("m1", "p1", 1), ("m1", "p2", "")])  # not the way: an empty value is missing
    assert [m for _, _, m in errors_of(read_source(tmp_path))] == ["missing correct value"]
    write_outcomes(tmp_path, "csv", [("m1", "p1", 1)])  # the way: the row left out
    assert errors_of(read_source(tmp_path)) == []

    (tmp_path / "outcomes.csv").unlink()
    (tmp_path / "matrix.csv").write_text("model,p1,p2\nm1,1,NaN\n")
    [(_, line, matrix_msg)] = errors_of(read_source(tmp_path))
    assert line == 2 and matrix_msg.endswith("leave the cell empty when the outcome is unknown)")
    assert "row out" not in matrix_msg
    (tmp_path / "matrix.csv").write_text("model,p1,p2\nm1,1,\n")  # the way: the cell left empty
    batch = read_source(tmp_path)
    assert errors_of(batch) == [] and [(o.model, o.prompt_id) for o in batch.iter_outcomes()] == [("m1", "p1")]


def test_malformed_json_line_is_reported_and_the_rest_read(tmp_path):
    write_prompts(tmp_path)
    good = [json.dumps({"model": "m1", "prompt_id": "p1", "correct": 1}), "{not json", json.dumps({"model": "m1", "prompt_id": "p2", "correct": 0})]
    (tmp_path / "outcomes.jsonl").write_text("\n".join(good) + "\n")
    batch = read_source(tmp_path)
    (f, line, msg), = errors_of(batch)
    assert (f, line) == ("outcomes.jsonl", 2) and "malformed JSON" in msg
    assert len(list(batch.iter_outcomes())) == 2


def test_missing_fields_and_columns(tmp_path):
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\n,p2,1\nm1,,1\nm1,p3,\n")
    batch = read_source(tmp_path)
    assert errors_of(batch) == [
        ("outcomes.csv", 3, "missing model"),
        ("outcomes.csv", 4, "missing prompt_id"),
        ("outcomes.csv", 5, "missing correct value"),
    ]
    assert len(list(batch.iter_outcomes())) == 1
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,pass1\nm1,p1,1\n")
    (e,) = read_source(tmp_path).errors
    assert "missing column correct|score" in e.message and "pass1" in e.message


def test_prompt_rows_with_missing_fields(tmp_path):
    (tmp_path / "prompts.jsonl").write_text(
        json.dumps({"prompt_id": "p1", "benchmark": "b", "text": "Q?"}) + "\n" + json.dumps({"prompt_id": "p2", "text": "Q2?"}) + "\n"
    )
    write_outcomes(tmp_path, "csv", [("m1", "p1", 1), ("m1", "p2", 1)])
    batch = read_source(tmp_path)
    assert errors_of(batch) == [  # the cause first (before: by file name, so outcomes.csv's drops came first)
        ("prompts.jsonl", 2, "missing field benchmark (a prompt needs prompt_id, benchmark, text)"),
        ("outcomes.csv", 3, "prompt_id 'p2' was rejected in the prompts file (line 2); its rows are dropped"),
    ]


def test_outcomes_of_a_prompt_on_an_unreadable_line_say_where_it_may_be(tmp_path):
    """A prompts line that cannot be read (bytes that are not UTF-8, malformed JSON) hides its prompt id: the outcome
    rows of an id not read say the id may be on those lines, naming them (before: only "is not in the prompts file",
    which sent the user looking for an id that is there)."""
    rows = [json.dumps({"prompt_id": f"p{i}", "benchmark": "b", "text": f"Q{i}?"}).encode() for i in range(1, 4)]
    rows[1] = rows[1].replace(b"Q2", b"Q\xff2")
    (tmp_path / "prompts.jsonl").write_bytes(b"\n".join([*rows, b'{"prompt_id": "p4", '] ) + b"\n")
    write_outcomes(tmp_path, "csv", [("m1", "p1", 1), ("m1", "p2", 1), ("m1", "p4", 0), ("m1", "p3", 0)])
    assert errors_of(read_source(tmp_path)) == [  # the prompts file's lines (the cause) first
        ("prompts.jsonl", 2, "not valid UTF-8 text; the line is skipped (re-save the file as UTF-8)"),
        ("prompts.jsonl", 4, "malformed JSON line: Expecting property name enclosed in double quotes at column 21; the "
                             "line breaks off before its end (a file still being written, or cut short?); the line is "
                             "skipped: fix it, or export or copy the file again"),
        ("outcomes.csv", 3, "prompt_id 'p2' is not in the prompts file, unless on a line of it that could not be read "
                            "(lines 2, 4); its rows are dropped"),
        ("outcomes.csv", 4, "prompt_id 'p4' is not in the prompts file, unless on a line of it that could not be read "
                            "(lines 2, 4); its rows are dropped"),
    ]
    (tmp_path / "prompts.jsonl").write_bytes(b"\n".join(rows[:1]) + b"\n")  # every line read: the plain message
    assert [m for _, _, m in errors_of(read_source(tmp_path))][0] == ("prompt_id 'p2' is not in the prompts file; its "
                                                                     "rows are dropped")


def test_outcomes_of_a_prompts_file_whose_every_row_is_not_utf8_name_those_lines(tmp_path):
    """A prompts file whose header reads but whose every row is not UTF-8 (a Latin-1 export): the outcome rows of its
    prompts say they may be on those lines, as when only some rows are so. Before, they said the prompts file "could
    not be read (its error says why)", though its header was read and only those lines were not."""
    (tmp_path / "prompts.csv").write_bytes("prompt_id,benchmark,text\np1,demo/fr,Qu'est-ce que é ?\n".encode("latin-1"))
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\n")
    errs = errors_of(read_source(tmp_path))
    assert errs[0] == ("prompts.csv", 2, "not valid UTF-8 text; the line is skipped (re-save the file as UTF-8)"), errs
    assert errs[1] == ("outcomes.csv", 2, "prompt_id 'p1' is not in the prompts file, unless on a line of it that "
                                          "could not be read (line 2); its rows are dropped"), errs


@pytest.mark.parametrize("name, content", [("prompts.parquet", b"garbage"), ("prompts.jsonl.gz", b"garbage")])
def test_outcomes_of_a_prompts_file_that_could_not_be_read_at_all_say_so(tmp_path, name, content):
    """A prompts file that cannot be read at all (a corrupt Parquet file, a `.gz` that is not gzip): its error names no
    line, and the outcome rows said "is not in the prompts file, unless on a line of it that could not be read
    (line , ...: 1 in all)", a sentence with no line in it. Now they say the prompts file could not be read."""
    (tmp_path / name).write_bytes(content)
    write_outcomes(tmp_path, "csv", [("m1", "p1", 1)])
    errs = errors_of(read_source(tmp_path))
    assert errs[1] == ("outcomes.csv", 2, "prompt_id 'p1' is not in the prompts file, which could not be read (its "
                                          "error says why); its rows are dropped")
    assert errs[0][:2] == (name, None) and len(errs) == 2  # the cause first


def test_non_binary_and_non_numeric_values(tmp_path):
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,0.5\nm1,p2,yes\nm1,p3,abc\nm2,p1,true\n")
    batch = read_source(tmp_path)
    errs = errors_of(batch)
    assert errs[0][:2] == ("outcomes.csv", 2) and "0.5 is not binary" in errs[0][2]
    assert errs[1][:2] == ("outcomes.csv", 4) and "'abc' is not a number" in errs[1][2]
    assert sorted((o.model, o.prompt_id, o.score) for o in batch.iter_outcomes()) == [("m1", "p2", 1.0), ("m2", "p1", 1.0)]


def test_a_long_cell_or_prompt_id_is_quoted_cut_to_a_readable_length(tmp_path):
    """A 10,000-character value cell or prompt id is quoted in its error cut to about 80 characters, its length said
    (:func:`indexer.sources.common.example_value`); before, the error line held all 10,000."""
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_text(f"model,prompt_id,correct\nm1,p1,{'y' * 10_000}\nm1,{'q' * 10_000},1\n")
    errs = errors_of(read_source(tmp_path))
    assert errs[0][:2] == ("outcomes.csv", 2) and errs[0][2].startswith("correct value 'yyyy")
    assert errs[0][2].endswith("yyy' (10,000 characters) is not a number") and len(errs[0][2]) < 150, errs[0][2]
    assert errs[1][:2] == ("outcomes.csv", 3) and errs[1][2].startswith("prompt_id 'qqqq")
    assert "qqq' (10,000 characters) is not a valid id: it is longer than 512 characters" in errs[1][2], errs[1][2]
    assert len(errs[1][2]) < 300, errs[1][2]


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_a_prompts_file_naming_a_prompt_column_twice_is_refused_as_an_outcomes_file_is(tmp_path, ext):
    """A prompts file whose header (or Parquet schema) names prompt_id, benchmark or text more than once is one error
    naming the column and its positions, nothing of it read, as an outcomes file's; a repeated column it does not read
    (an extra field) is not. Before, each row held the last such column without a word: the second `text` column was
    stored as every prompt's text."""
    names = ["prompt_id", "benchmark", "text", "text"]
    cols = [["p1"], ["demo/math"], ["What is 2 + 2?"], ["a note"]]
    if ext == "csv":
        (tmp_path / "prompts.csv").write_text(",".join(names) + "\n" + ",".join(c[0] for c in cols) + "\n")
    else:
        pq.write_table(pa.Table.from_arrays([pa.array(c) for c in cols], names=names), tmp_path / "prompts.parquet")
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\n")
    batch = read_source(tmp_path)
    errs = errors_of(batch)
    assert not list(batch.iter_outcomes()) and errs[0][0] == f"prompts.{ext}", errs
    assert errs[0][2].startswith("the header names 'text' (columns 3, 4) more than once"), errs
    (tmp_path / f"prompts.{ext}").unlink()
    (tmp_path / "prompts.csv").write_text("prompt_id,benchmark,text,src,src\np1,demo/math,What is 2 + 2?,a,b\n")
    batch = read_source(tmp_path)
    assert not batch.errors and [o.text for o in batch.iter_outcomes()] == ["What is 2 + 2?"]


@pytest.mark.parametrize("name, content", [("outcomes.csv", "model\nm1\nm2\n"), ("matrix.csv", "model\nm1\n"),
                                           ("outcomes.jsonl", '{"model": "m1"}\n{"model": "m2"}\n')])
def test_an_outcomes_file_of_one_column_says_what_each_form_needs(tmp_path, name, content):
    """An outcomes (or matrix) file whose only column is the model: one error at its header saying the columns each
    form needs and to add them. Before, "matrix form needs a model column and one column per prompt id; found
    ['model']", which said nothing of long form's columns and quoted a Python list."""
    write_prompts(tmp_path)
    (tmp_path / name).write_text(content)
    (e,) = read_source(tmp_path).errors
    assert (Path(e.file).name, e.line) == (name, 1), e
    assert e.message == ("the file has one column, 'model': an outcomes file needs, in long form, model, prompt_id and "
                         "correct (0/1) or score ([0, 1]) columns, or, in matrix form, a model column and one column "
                         "per prompt id of the prompts file; add the missing columns"), e.message


@pytest.mark.parametrize("name", ["outcomes.csv", "prompts.csv", "outcomes.tsv"])
def test_a_csv_whose_header_line_is_blank_says_so(tmp_path, name):
    """A CSV/TSV file whose first line is spaces only (a file of blank lines; an export that wrote no header): one
    error at line 1 saying the header is blank and to write the column names there; nothing of it read. Before, an
    outcomes file was "matrix form needs a model column ...; found ['   ']" (a column named by the spaces) and a
    prompts file's every row "missing field(s) prompt_id, benchmark, text"."""
    write_prompts(tmp_path, "csv")
    write_outcomes(tmp_path, "csv")
    if name == "outcomes.tsv":
        (tmp_path / "outcomes.csv").unlink()
    (tmp_path / name).write_text("   \n" + "m1,p1,1\n" * 3)
    errs = errors_of(read_source(tmp_path))
    assert errs[0] == (name, 1, "the header line is blank (spaces only), so the columns cannot be told and nothing of "
                                "this file is read: write the column names on the file's first line (or remove the "
                                "file when it holds no rows)"), errs
    assert not [e for e in errs if e[0] == name and e[1] != 1], errs


def test_a_header_column_name_with_a_nul_or_an_escape_is_listed_quoted_not_raw(tmp_path):
    """The columns an error lists (`missing column(s) ...; found ...`, a header that looks like long form) show a name
    holding a NUL byte or a terminal escape quoted with its escapes, the others as written. Before, the raw bytes were
    printed: a NUL, or an escape sequence the terminal ran."""
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_bytes(b"mo\x00del,prompt_id,correct\nm1,p1,1\n")
    (e,) = read_source(tmp_path).errors
    assert e.message.endswith("found prompt_id, correct, 'mo\\x00del'"), e.message
    (tmp_path / "outcomes.csv").write_bytes(b"model,\x1b[2Jpid,correct\nm1,p1,1\n")
    (e,) = read_source(tmp_path).errors
    assert "the header (model, '\\x1b[2Jpid', correct) looks like long form" in e.message, e.message


def test_a_decimal_comma_is_said_to_need_a_decimal_point(tmp_path):
    """A number written with a decimal comma (`"0,5"`, a spreadsheet in a locale that writes one; a JSON string too)
    is still refused, and the error says to write it with a decimal point and how; before, only "'0,5' is not a
    number", no hint why a number was not one. Other text gets no such hint."""
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_text('model,prompt_id,score\nm1,p1,"0,5"\nm1,p2,",25"\nm1,p3,abc\nm2,p1,1\n')
    errs = errors_of(read_source(tmp_path))
    assert errs[0] == ("outcomes.csv", 2, "score value '0,5' is not a number (write numbers with a decimal point: 0.5)")
    assert errs[1] == ("outcomes.csv", 3, "score value ',25' is not a number (write numbers with a decimal point: .25)")
    assert errs[2] == ("outcomes.csv", 4, "score value 'abc' is not a number")
    (tmp_path / "outcomes.csv").unlink()
    (tmp_path / "outcomes.jsonl").write_text(json.dumps({"model": "m1", "prompt_id": "p1", "score": "0,75"}) + "\n")
    assert errors_of(read_source(tmp_path)) == [
        ("outcomes.jsonl", 1, "score value '0,75' is not a number (write numbers with a decimal point: 0.75)")]


def test_repeated_pair_with_different_outcome_is_a_data_error(tmp_path):
    write_prompts(tmp_path)
    write_outcomes(tmp_path, "csv", [("m1", "p1", 1), ("m1", "p2", 0), ("m1", "p1", 0), ("m2", "p1", 1), ("m2", "p1", 1)])
    batch = read_source(tmp_path)
    ((f, line, msg),) = errors_of(batch)
    assert (f, line) == ("outcomes.csv", 4)
    assert "'m1', prompt_id 'p1' repeated with a different outcome (1 at line 2, 0 here)" in msg
    # the conflicting pair is dropped, the exact repeat counted as skipped
    assert sorted((o.model, o.prompt_id) for o in batch.iter_outcomes()) == [("m1", "p2"), ("m2", "p1")]
    assert batch.skipped == 1


@pytest.mark.parametrize("name", ["outcomes.csv", "outcomes.jsonl", "outcomes.csv.gz"])
def test_empty_outcomes_file(tmp_path, name):
    write_prompts(tmp_path)
    if name.endswith(".gz"):
        with gzip.open(tmp_path / name, "wt"):
            pass
    else:
        (tmp_path / name).write_text("")
    batch = read_source(tmp_path)
    ((f, line, msg),) = errors_of(batch)
    assert f == name and "empty file" in msg
    assert batch.n_outcomes == 0


def test_truncated_parquet(tmp_path):
    write_prompts(tmp_path)
    write_outcomes(tmp_path, "parquet")
    data = (tmp_path / "outcomes.parquet").read_bytes()
    (tmp_path / "outcomes.parquet").write_bytes(data[: len(data) // 2])
    batch = read_source(tmp_path)
    ((f, line, msg),) = errors_of(batch)
    assert f == "outcomes.parquet" and "truncated" in msg
    assert batch.n_outcomes == 0



def test_corrupt_prompts_parquet_is_reported_not_raised(tmp_path):
    """A prompts file whose footer reads but whose data pages do not: an error naming the file and row."""
    texts = [f"prompt text number {i} " * 20 for i in range(5000)]
    pq.write_table(pa.table({"prompt_id": [f"p{i}" for i in range(5000)], "benchmark": ["b"] * 5000, "text": texts}),
                   tmp_path / "prompts.parquet", compression="snappy", row_group_size=1000)
    data = bytearray((tmp_path / "prompts.parquet").read_bytes())
    mid = len(data) // 3
    data[mid:mid + 3000] = b"\xab" * 3000
    (tmp_path / "prompts.parquet").write_bytes(bytes(data))
    write_outcomes(tmp_path, "csv")
    batch = read_source(tmp_path)
    bad = [(f, line, msg) for f, line, msg in errors_of(batch) if f == "prompts.parquet"]
    assert bad and "unreadable after row" in bad[0][2] and bad[0][1] >= 1

def test_truncated_gzip_keeps_the_rows_before(tmp_path):
    write_prompts(tmp_path)
    rows = [(f"m{i}", "p1", 1) for i in range(50000)]
    write_outcomes(tmp_path, "csv.gz", rows)
    data = (tmp_path / "outcomes.csv.gz").read_bytes()
    (tmp_path / "outcomes.csv.gz").write_bytes(data[: len(data) // 2])
    batch = read_source(tmp_path)
    ((f, line, msg),) = errors_of(batch)
    assert f == "outcomes.csv.gz" and line > 1000 and "truncated" in msg
    assert batch.n_outcomes == line - 2  # every complete row before the cut


def test_malformed_csv_rows_name_their_true_lines(tmp_path):
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_text('model,prompt_id,correct\nm1,p1,1\nm1,p2,0,9\n"m2\nstill m2",p1,1\nm3,p2,1\nm4,p3\n')
    batch = read_source(tmp_path)
    assert errors_of(batch) == [
        ("outcomes.csv", 3, "malformed CSV row: 4 fields, the header has 3"),
        # (a model name with a line break: no name an index takes, said at the line its record starts on)
        ("outcomes.csv", 4, "model 'm2\\nstill m2' holds a control character (U+000A: a line break, tab or terminal "
                            "escape); a name is one line of printable text; its outcomes are dropped: fix the name in "
                            "the file"),
        ("outcomes.csv", 7, "malformed CSV row: 2 fields, the header has 3"),
    ]
    assert sorted(o.model for o in batch.iter_outcomes()) == ["m1", "m3"]


def test_many_errors_are_summarised(tmp_path):
    write_prompts(tmp_path)
    write_outcomes(tmp_path, "csv", [(f"m{i}", "p1", 7) for i in range(100)])
    errs = read_source(tmp_path).errors
    assert len(errs) == MAX_ERRORS_PER_PROBLEM + 1
    assert errs[-1].line is None and errs[-1].message.startswith(f"{100 - MAX_ERRORS_PER_PROBLEM} more rows rejected")


def test_unreadable_sources_raise_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_source(tmp_path / "nope")
    write_outcomes(tmp_path, "csv")
    with pytest.raises(InputError, match="no prompts file"):
        read_source(tmp_path / "outcomes.csv")
    (tmp_path / "x.bin").write_text("?")
    with pytest.raises(InputError, match="unknown file type"):
        read_source(tmp_path / "x.bin")


@pytest.mark.parametrize("name", ["notes.md", "notes.txt", "README"])
def test_a_file_type_no_format_reads_lists_what_taskspace_reads(tmp_path, name):
    """A file of a type no reader reads (`.md`, `.txt` of prose, no extension): the error lists the formats and the
    table extensions taskspace reads, not "pass --format", which no format answers; before, "unknown file type; pass
    --format (table, lm_eval, lighteval)"."""
    (tmp_path / name).write_text("Some notes about the results.\n")
    with pytest.raises(InputError) as err:
        read_source(tmp_path / name)
    message = str(err.value)
    assert "--format" not in message and "unknown file type: taskspace does not read" in message, message
    for what in ("outcomes.<ext> + prompts.<ext> (plain table)", "(lm-eval)", "details_*.parquet (lighteval)",
                 ".csv, .csv.gz, .tsv", ".parquet"):
        assert what in message, (what, message)


def test_a_folder_with_two_outcomes_or_prompts_files_is_refused_naming_them(tmp_path):
    """outcomes.csv beside matrix.csv (or two prompts files): one was read and the other ignored without a word."""
    write_prompts(tmp_path)
    write_outcomes(tmp_path, "csv")
    (tmp_path / "matrix.csv").write_text("model,p1\nm9,0\n")
    with pytest.raises(InputError, match=r"several outcomes files here \(outcomes\.csv, matrix\.csv\): a source has one"):
        read_source(tmp_path)
    assert read_source(tmp_path / "outcomes.csv").table.models  # one of them named by its path: read
    (tmp_path / "prompts.csv").write_text("prompt_id,benchmark,text\np1,b,hello\n")
    with pytest.raises(InputError, match=r"several prompts files here \(prompts\.csv, prompts\.jsonl\)"):
        read_source(tmp_path / "outcomes.csv")
    with pytest.raises(InputError, match="this is a prompts file: ingest its folder"):  # was "missing column(s) model"
        read_source(tmp_path / "prompts.jsonl")


@pytest.mark.parametrize("outcomes, prompts", [("Outcomes.csv", "Prompts.jsonl"), ("outcomes.CSV", "prompts.jsonl"),
                                                ("MATRIX.TSV", "PROMPTS.JSONL")])
def test_table_files_named_in_another_case_are_found_in_their_folder(tmp_path, store, outcomes, prompts):
    """Files from a case-insensitive file system (Windows, macOS: `Outcomes.csv`, `outcomes.CSV`): a table extension
    is read in any case, so `ingest DIR/outcomes.CSV` read the file, but its folder was "cannot tell the format of
    this folder ... pass --format", which did not help, and `Prompts.jsonl` was never found beside an outcomes file.
    Now the names are matched in any case; two files whose names differ only in case are two outcomes files."""
    from indexer.ingest import ingest

    write_prompts(tmp_path)
    (tmp_path / "prompts.jsonl").rename(tmp_path / prompts)
    if outcomes.lower().startswith("matrix"):
        (tmp_path / outcomes).write_text("model\tp1\tp2\nm1\t1\t0\n")
    else:
        write_outcomes(tmp_path, "csv", [("m1", "p1", 1), ("m1", "p2", 0)])
        (tmp_path / "outcomes.csv").rename(tmp_path / outcomes)
    assert detect_format(tmp_path) == "table"
    s = ingest(str(tmp_path), store=store, fetch_metadata=False)
    assert s.errors == [] and s.outcomes == 2
    assert read_source(tmp_path / outcomes).errors == []
    (tmp_path / outcomes.swapcase()).write_text((tmp_path / outcomes).read_text())
    with pytest.raises(InputError, match="several outcomes files"):
        read_source(tmp_path)


@pytest.mark.parametrize("broken", ["outcomes.csv", "prompts.jsonl"])
def test_a_table_file_that_is_a_broken_symbolic_link_is_named(tmp_path, broken):
    """A table folder whose outcomes or prompts file is a symbolic link to a file that is gone (a data folder moved or
    not mounted): before, "cannot tell the format of this folder ... pass --format" (outcomes) or "outcomes.csv but no
    prompts file beside it: put one there" (prompts), for files `ls` lists. Now the error names the link and its
    target."""
    write_prompts(tmp_path)
    write_outcomes(tmp_path, "csv")
    (tmp_path / broken).unlink()
    (tmp_path / broken).symlink_to(tmp_path / "gone" / broken)
    with pytest.raises(InputError, match=rf"{broken} is a symbolic link to .*gone/{broken}, which does not exist"):
        detect_format(tmp_path)
    with pytest.raises(InputError, match="is a symbolic link"):
        read_source(tmp_path)


def test_outcome_table_round_trip():
    from indexer.records import Outcome

    rows = [Outcome("m", "b", "t1", 1.0, prompt_id="a"), Outcome("n", "b", "t2", 0.0, revision="r1", prompt_id="c")]
    table = OutcomeTable.from_outcomes(rows)
    assert list(table) == rows
    both = OutcomeTable.concat([table, table])
    assert len(both) == 4 and len(both.models) == 2
    assert np.array_equal(both.merged().scores, np.array([1.0, 0.0]))


def test_shared_mmlu_pro(shared_data):
    batch = read_source(shared_data / "mmlu_pro")
    assert batch.errors == []
    t = batch.table
    assert (len(t.models), len(t.prompt_ids), len(t)) == (31, 12032, 371244)
    merged = t.merged()
    assert len(merged.texts) == 12032 - 159
    assert set(np.unique(merged.scores)) >= {0.0, 0.5, 1.0}


@pytest.mark.parametrize(
    "text,array,rows,messages",
    [
        ('{"a": 1}\n\n[1]\nnot json\n{"b": 2}\n', False, [(1, {"a": 1}), (5, {"b": 2})],
         ["line is not a JSON object", "malformed JSON line"]),
        ('[{"a": 1}, 2, {"b": 2}]', True, [(1, {"a": 1}), (1, {"b": 2})], ["item 2 is not a JSON object"]),
        ('[\n  {"a": 1},\n\n  2, {"b":\n 2}, {"c": 3}\n]\n', True, [(2, {"a": 1}), (4, {"b": 2}), (5, {"c": 3})],
         ["item 2 is not a JSON object"]),
        ('{"a": 1}', True, [], ["not an array of objects"]),
        ('[{"a": 1},', True, [], ["malformed JSON"]),
    ],
)
def test_json_objects_lines_and_arrays(text, array, rows, messages):
    import io

    from indexer.sources.common import ErrorLog, json_objects

    errors = ErrorLog()
    assert list(json_objects(io.StringIO(text), "f.jsonl", errors, array=array)) == rows
    assert len(errors.errors) == len(messages)
    for err, msg in zip(errors.errors, messages):
        assert err.file == "f.jsonl" and msg in err.message


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_a_header_line_repeated_in_a_csv_joined_from_files_is_named_as_such(tmp_path, store, bom):
    """`cat part1.csv part2.csv > outcomes.csv` (each with its header; Excel's each with a byte order mark): the second
    header was read as a row, "prompt_id 'prompt_id' is not in the prompts file" (in a prompts file: a prompt whose
    text is "text"). Now it is named as the header line again, at its line, and skipped; the rows around it are
    read, in outcomes and prompts files alike."""
    from indexer.ingest import ingest

    write_prompts(tmp_path)
    part = lambda rows: bom + ("model,prompt_id,correct\r\n" + "".join(f"{m},{p},{c}\r\n" for m, p, c in rows)).encode()  # noqa: E731
    (tmp_path / "outcomes.csv").write_bytes(part([("m1", "p1", 1), ("m1", "p2", 0)]) + part([("m2", "p1", 0)]))
    assert errors_of(read_source(tmp_path)) == [
        ("outcomes.csv", 4, "the header line again (files joined one after another?); the line is skipped")]
    p = tmp_path / "p"
    p.mkdir()
    (p / "prompts.csv").write_bytes(b"prompt_id,benchmark,text\nq1,b,One?\n" + bom + b"prompt_id,benchmark,text\nq2,b,Two?\n")
    (p / "outcomes.csv").write_text("model,prompt_id,correct\nm1,q1,1\nm1,q2,0\nm1,prompt_id,1\n")
    s = ingest(str(p), store=store, fetch_metadata=False)
    assert [(Path(e.file).name, e.line, e.message.split(";")[0]) for e in s.errors] == [
        ("prompts.csv", 3, "the header line again (files joined one after another?)"),
        ("outcomes.csv", 4, "prompt_id 'prompt_id' is not in the prompts file")]
    assert s.outcomes == 2 and s.prompts == 2


def test_an_item_of_a_pretty_printed_json_array_is_reported_at_its_line(tmp_path):
    """`outcomes.json` / `prompts.json` written by `json.dump(rows, f, indent=2)`, and the June-2024 leaderboard's
    samples arrays: an item's number was reported as its line, so the 2nd item's bad value named line 2, inside the
    first item. Now the line the item starts on."""
    import shutil

    write_prompts(tmp_path)
    rows = [{"model": "m1", "prompt_id": "p1", "correct": 1}, {"model": "m1", "prompt_id": "p2", "correct": 2}]
    (tmp_path / "outcomes.json").write_text(json.dumps(rows, indent=2))
    assert errors_of(read_source(tmp_path)) == [
        ("outcomes.json", 7, "correct value 2 is not binary (expected 0 or 1; put graded outcomes in a `score` column)")]
    lb = tmp_path / "lb"
    shutil.copytree(Path(__file__).parent / "fixtures" / "formats" / "leaderboard_v2_json_array", lb)
    f = next(lb.glob("*/samples_*.json"))
    items = json.loads(f.read_text())
    items[1]["acc_norm"] = 7
    f.write_text(json.dumps(items, indent=1))
    ((name, line, msg),) = errors_of(read_source(lb))
    text = f.read_text().splitlines()
    assert name == f.name and text[line - 1].strip() == "{" and f'"doc_id": {items[1]["doc_id"]},' in text[line]


def test_a_json_array_in_a_jsonl_file_says_to_name_it_json(tmp_path):
    """`prompts.jsonl` holding one JSON array (`json.dump(rows, f)` into a .jsonl name): before, "line is not a JSON
    object", which it is not, but it holds the objects; now the error says it is a JSON array of N items and that a
    file holding one array is read when named .json, and so named it reads."""
    rows = [{"prompt_id": "p1", "benchmark": "b", "text": "One?"}, {"prompt_id": "p2", "benchmark": "b", "text": "Two?"}]
    (tmp_path / "prompts.jsonl").write_text(json.dumps(rows) + "\n")
    write_outcomes(tmp_path, "csv", [("m1", "p1", 1), ("m1", "p2", 0)])
    mine = [e for e in errors_of(read_source(tmp_path)) if e[0] == "prompts.jsonl"]
    assert mine == [("prompts.jsonl", 1, "line is a JSON array of 2 items, not an object: a JSON-lines file holds one "
                                         "object per line; a file holding one JSON array is read as such when named "
                                         ".json")]
    (tmp_path / "prompts.jsonl").rename(tmp_path / "prompts.json")
    assert read_source(tmp_path).errors == []


BOM = b"\xef\xbb\xbf"


def test_files_that_start_with_a_byte_order_mark_read_as_without_it(tmp_path):
    """Excel's "CSV UTF-8" (and Notepad) start a file with a byte order mark. It is dropped wherever a table is read:
    before, the first header name was '\\ufeffprompt_id' (every prompt "missing field(s) prompt_id"), the line-exact
    outcomes reader found no `model` column, and a JSON line started with a BOM was malformed."""
    for out_ext in ("csv", "csv.gz", "jsonl"):
        for prompt_ext in ("csv", "jsonl"):
            folder = tmp_path / f"{out_ext}-{prompt_ext}"
            folder.mkdir()
            write_prompts(folder, prompt_ext)
            write_outcomes(folder, out_ext)
            for f in folder.iterdir():
                raw = gzip.decompress(f.read_bytes()) if f.name.endswith(".gz") else f.read_bytes()
                f.write_bytes(gzip.compress(BOM + raw) if f.name.endswith(".gz") else BOM + raw)
            batch = read_source(folder)
            assert batch.errors == [] and cells(batch) == EXPECTED, (out_ext, prompt_ext, batch.errors)
    # a malformed row sends a CSV to the line-exact reader: it drops the mark too, and names the true line
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_bytes(BOM + b"model,prompt_id,correct\nm1,p1,1\nm1,p2,0,9\nm2,p3,1\n")
    batch = read_source(tmp_path)
    assert errors_of(batch) == [("outcomes.csv", 3, "malformed CSV row: 4 fields, the header has 3")]
    assert sorted((o.model, o.prompt_id) for o in batch.iter_outcomes()) == [("m1", "p1"), ("m2", "p3")]


def test_a_table_file_starting_with_two_byte_order_marks_reads_its_first_column_name(tmp_path):
    """A CSV/TSV (outcomes, gzipped too, or prompts) that starts with two byte order marks (a file that started with one
    saved again by a tool that adds one): the marks are no part of the first column's name, and the rows are read, a
    malformed one named at its line. Before, UTF-8-sig dropped one mark and the header's first name was
    '\\ufeffmodel': "missing column(s) model ... found prompt_id, correct, '\\ufeffmodel'" at line 1, nothing of the
    file read (a prompts file: every prompt "missing field(s) prompt_id")."""
    for out_ext in ("csv", "csv.gz", "tsv"):
        for prompt_ext in ("csv", "jsonl"):
            folder = tmp_path / f"{out_ext}-{prompt_ext}"
            folder.mkdir()
            write_prompts(folder, prompt_ext)
            write_outcomes(folder, "csv.gz" if out_ext == "csv.gz" else "csv")
            if out_ext == "tsv":
                text = (folder / "outcomes.csv").read_text().replace(",", "\t")
                (folder / "outcomes.csv").unlink()
                (folder / "outcomes.tsv").write_text(text)
            for f in folder.iterdir():
                if f.name.endswith(("csv", "csv.gz", "tsv")):
                    raw = gzip.decompress(f.read_bytes()) if f.name.endswith(".gz") else f.read_bytes()
                    f.write_bytes(gzip.compress(BOM * 2 + raw) if f.name.endswith(".gz") else BOM * 2 + raw)
            batch = read_source(folder)
            assert batch.errors == [] and cells(batch) == EXPECTED, (out_ext, prompt_ext, batch.errors)
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_bytes(BOM * 3 + b"model,prompt_id,correct\nm1,p1,1\nm1,p2,0,9\nm2,p3,1\n")
    batch = read_source(tmp_path)
    assert errors_of(batch) == [("outcomes.csv", 3, "malformed CSV row: 4 fields, the header has 3")]
    assert sorted((o.model, o.prompt_id) for o in batch.iter_outcomes()) == [("m1", "p1"), ("m2", "p3")]


def test_a_problem_of_the_header_is_reported_at_line_1(tmp_path):
    """A missing column of a CSV/TSV is the header's problem, line 1 (before: "line 2", the first data row's)."""
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,pass1\nm1,p1,1\n")
    ((f, line, msg),) = errors_of(read_source(tmp_path))
    assert (f, line) == ("outcomes.csv", 1) and msg.startswith("missing column correct|score"), (f, line, msg)
    (tmp_path / "outcomes.csv").unlink()
    (tmp_path / "outcomes.tsv").write_text("model\tprompt_id\tpass1\nm1\tp1\t1\n")
    ((f, line, msg),) = errors_of(read_source(tmp_path))
    assert (f, line) == ("outcomes.tsv", 1) and msg.startswith("missing column")


@pytest.mark.parametrize("header", ["Model,Prompt_ID,Correct", "model, prompt_id, correct", " MODEL ,Prompt ID,correct"])
@pytest.mark.parametrize("ext", ["csv", "jsonl"])
def test_a_long_form_header_in_another_case_or_spacing_is_long_form(tmp_path, header, ext):
    """Header names are matched stripped and case-insensitively; before, `Model,Prompt_ID,Correct` was read as matrix
    form and every row dropped with "prompt_id 'Prompt_ID' is not in the prompts file"."""
    write_prompts(tmp_path)
    names = header.split(",")
    rows = [r for r in ROWS if r[1] != "p4"]
    if ext == "csv":
        (tmp_path / "outcomes.csv").write_text(header + "\n" + "".join(f"{m},{p},{c}\n" for m, p, c in rows))
    else:
        (tmp_path / "outcomes.jsonl").write_text("".join(json.dumps(dict(zip(names, r))) + "\n" for r in rows))
    batch = read_source(tmp_path)
    assert batch.errors == []
    assert sorted((o.model, o.prompt_id, o.score) for o in batch.iter_outcomes()) == sorted(
        (m, p, float(c)) for m, p, c in rows)


def test_prompt_ids_and_benchmarks_with_spaces_around_them_in_the_prompts_file_match(tmp_path, store):
    """A prompts file from a spreadsheet with spaces around its ids and benchmark names (`p1 ,b ,...`, ` p2,b,...`):
    the outcomes file's ids are read stripped, the prompts file's were not, so every outcome row of them was "prompt_id
    'p1' is not in the prompts file" (and a benchmark `b ` stood beside `b`). Now both are read stripped; an id of
    spaces only is a missing field."""
    from indexer.ingest import ingest
    from indexer.sources.tables import prompt_fields

    (tmp_path / "prompts.csv").write_text("prompt_id,benchmark,text,src\np1 ,b ,What is 2+2?,x\n p2,b,What is 3+3?,y\n"
                                          "  ,b,What is 4+4?,z\n")
    write_outcomes(tmp_path, "csv", [("m1", "p1 ", 1), ("m1", "p2", 0), ("m2", " p1", 0)])
    batch = read_source(tmp_path)
    assert errors_of(batch) == [("prompts.csv", 4, "missing field prompt_id (a prompt needs prompt_id, benchmark, "
                                                   "text)")]
    assert batch.table.prompt_ids == ["p1", "p2"] and set(batch.table.benchmarks) == {"b"}
    assert prompt_fields(tmp_path) == {"p1": {"src": "x"}, "p2": {"src": "y"}}
    s = ingest(str(tmp_path), store=store, fetch_metadata=False)
    assert s.outcomes == 3 and s.prompts == 2


@pytest.mark.parametrize("name, text", [
    ("outcomes.csv", "model;prompt_id;correct\nm1;p1;1\n"),  # a spreadsheet in a locale with a decimal comma
    ("matrix.csv", "model;p1;p2\nm1;1;0\n"),
    ("outcomes.csv", "model\tprompt_id\tcorrect\nm1\tp1\t1\n"),  # a tab-separated export named .csv
    ("outcomes.tsv", "model,prompt_id,correct\nm1,p1,1\n"),
    ("prompts.csv", "prompt_id;benchmark;text\np1;b;What is two plus two?\n"),
])
def test_a_table_separated_by_another_character_than_its_extensions_says_so(tmp_path, name, text):
    """A .csv separated by semicolons (or tabs), a .tsv by commas: the header was one column named
    'model;prompt_id;correct', reported as "matrix form needs a model column and one column per prompt id", and a
    prompts file lost every prompt to "missing field(s) prompt_id, benchmark, text", one error per line. Now one error
    at line 1 says which separator the file seems to use and what taskspace reads; the outcome rows of an unread prompts
    file say it could not be read."""
    write_prompts(tmp_path)
    write_outcomes(tmp_path, "csv", [("m1", "p1", 1)])
    if name.startswith("prompts"):
        (tmp_path / "prompts.jsonl").unlink()
    else:
        (tmp_path / "outcomes.csv").unlink()
    (tmp_path / name).write_text(text)
    errs = errors_of(read_source(tmp_path))
    mine = [e for e in errs if e[0] == name]
    assert len(mine) == 1 and mine[0][1] == 1, errs
    assert mine[0][2].startswith("the header is one column") and "nothing of it is read: save it with" in mine[0][2]
    assert ("semicolons" if ";" in text else "tabs" if "\t" in text else "commas") in mine[0][2].split("but")[0]
    if name.startswith("prompts"):  # after the prompts file's own error, its cause
        assert errs[1][2] == ("prompt_id 'p1' is not in the prompts file, which could not be read (its error says "
                              "why); its rows are dropped")
    else:
        assert len(errs) == 1


@pytest.mark.parametrize("prompts_ext, outcomes_ext", [("jsonl", "jsonl"), ("parquet", "csv"), ("jsonl", "csv"),
                                                        ("parquet", "parquet")])
def test_whole_number_ids_written_as_floats_match_across_the_files(tmp_path, store, prompts_ext, outcomes_ext):
    """pandas writes an integer id column with a gap as floats (`1.0`): a JSON or Parquet `1.0` read as "1" in an
    outcomes file (arrow's cast) but "1.0" in a prompts file (`str`), and a CSV holds what was written, so the files of
    one writer did not match: every row "prompt_id '1' is not in the prompts file". Now a whole number written with a
    decimal point is its digits on both sides; other ids are as written."""
    from indexer.ingest import ingest

    prompts = [{"prompt_id": 1.0, "benchmark": "b", "text": "One?"}, {"prompt_id": 2.0, "benchmark": "b", "text": "Two?"},
               {"prompt_id": "v1.5", "benchmark": "b", "text": "Three?"}]
    rows = [("m1", 1.0, 1), ("m1", 2.0, 0), ("m2", 1.0, 0), ("m2", "v1.5", 1)]
    if prompts_ext == "jsonl":
        (tmp_path / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts))
    else:  # a Parquet column holds one type: the float ids, the text one apart
        pq.write_table(pa.Table.from_pylist(prompts[:2]), tmp_path / "prompts.parquet")
        rows = rows[:3]
    if outcomes_ext == "jsonl":
        (tmp_path / "outcomes.jsonl").write_text("".join(json.dumps({"model": m, "prompt_id": p, "correct": c}) + "\n"
                                                         for m, p, c in rows))
    elif outcomes_ext == "parquet":
        pq.write_table(pa.table({"model": [r[0] for r in rows], "prompt_id": [r[1] for r in rows],
                                 "correct": [r[2] for r in rows]}), tmp_path / "outcomes.parquet")
    else:  # a CSV as written by hand (1) and by pandas (2.0)
        write_outcomes(tmp_path, "csv", [(m, {1.0: "1", 2.0: "2.0"}.get(p, p), c) for m, p, c in rows])
    batch = read_source(tmp_path)
    assert batch.errors == [] and len(batch.table) == len(rows)
    assert sorted(batch.table.prompt_ids) == sorted(["1", "2", "v1.5"][:len({r[1] for r in rows})])
    assert ingest(str(tmp_path), store=store, fetch_metadata=False).outcomes == len(rows)


@pytest.mark.parametrize("header", ["Prompt_ID,Benchmark,Text", "prompt_id, benchmark, text", " PROMPT ID ,benchmark,Text"])
@pytest.mark.parametrize("ext", ["csv", "jsonl"])
def test_a_prompts_header_in_another_case_or_spacing_is_read(tmp_path, header, ext):
    """The prompts file's header is matched as the outcomes file's is (stripped, any case, spaces and hyphens as
    `_`); before, `Prompt_ID,Benchmark,Text` rejected every prompt with "missing field(s) prompt_id, benchmark,
    text" and every outcome row with it."""
    names = header.split(",")
    prompts = [("p1", "b", "What is 2+2?"), ("p2", "b", "What is 5+5?")]
    if ext == "csv":
        (tmp_path / "prompts.csv").write_text(header + "\n" + "".join(",".join(r) + "\n" for r in prompts))
    else:
        (tmp_path / "prompts.jsonl").write_text("".join(json.dumps(dict(zip(names, r))) + "\n" for r in prompts))
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\nm1,p2,0\n")
    batch = read_source(tmp_path)
    assert batch.errors == []
    assert sorted((o.model, o.prompt_id, o.benchmark, o.text, o.score) for o in batch.iter_outcomes()) == [
        ("m1", "p1", "b", "What is 2+2?", 1.0), ("m1", "p2", "b", "What is 5+5?", 0.0)]


def test_a_header_that_looks_like_long_form_without_prompt_id_says_so(tmp_path):
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_text("model,pid,correct\nm1,p1,1\nm1,p2,0\n")
    (e,) = read_source(tmp_path).errors
    assert e.line == 1 and "no prompt_id column" in e.message and "looks like long form" in e.message
    (tmp_path / "outcomes.csv").write_text("Model,p1,p2\nm1,1,0\n")  # a matrix with its model column capitalised
    batch = read_source(tmp_path)
    assert batch.errors == [] and sorted((o.model, o.prompt_id, o.score) for o in batch.iter_outcomes()) == [
        ("m1", "p1", 1.0), ("m1", "p2", 0.0)]


def test_csv_errors_name_the_physical_line_after_blank_lines_and_quoted_line_breaks(tmp_path):
    """pyarrow's fast path skips blank lines and reads a quoted line break as part of its record: errors name the
    line the record is on in the file; before, the record's index + 2 (line 3 for the value on line 5)."""
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\n\n\nm1,p2,7\nm1,p3,1\n")
    assert errors_of(read_source(tmp_path)) == [("outcomes.csv", 5, "correct value 7 is not binary (expected 0 or 1; "
                                                                   "put graded outcomes in a `score` column)")]
    (tmp_path / "outcomes.csv").write_text('model,prompt_id,correct\n"m\n1",p1,1\nm2,p2,1\n\nm2,p9,1\nm2,p2,0\n')
    assert errors_of(read_source(tmp_path)) == [
        ("outcomes.csv", 2, "model 'm\\n1' holds a control character (U+000A: a line break, tab or terminal escape); "
                            "a name is one line of printable text; its outcomes are dropped: fix the name in the file"),
        ("outcomes.csv", 6, "prompt_id 'p9' is not in the prompts file; its rows are dropped"),
        ("outcomes.csv", 7, "model 'm2', prompt_id 'p2' repeated with a different outcome (1 at line 4, 0 here); all "
                            "its rows are dropped: fix the source"),
    ]


def test_a_long_prompt_text_reads_from_csv_as_from_jsonl(tmp_path, monkeypatch):
    """A prompt longer than the csv module's default field limit (131,072 characters) is read from CSV as from
    JSONL; before, "field larger than field limit (131072)" and the prompt was lost. Over the (raised) limit, the
    message says what to do."""
    from indexer.sources import common

    long_text = "Explain: " + "x" * 200_000
    (tmp_path / "prompts.csv").write_text(f'prompt_id,benchmark,text\np1,b,"{long_text}"\np2,b,Short?\n')
    write_outcomes(tmp_path, "csv", [("m1", "p1", 1), ("m1", "p2", 0)])
    batch = read_source(tmp_path)
    assert batch.errors == [] and {o.prompt_id: len(o.text) for o in batch.iter_outcomes()} == {"p1": len(long_text),
                                                                                                "p2": 6}
    monkeypatch.setattr(common, "CSV_FIELD_LIMIT", 100_000)
    errs = errors_of(read_source(tmp_path))
    assert errs[0] == ("prompts.csv", 2, "a field longer than 100,000 characters, the most a CSV field may hold; the "
                                         "line is skipped (put such long texts in a JSONL file, prompts.jsonl)")
    assert errs[1][:2] == ("outcomes.csv", 2) and "'p1' is not in the prompts file" in errs[1][2]


def test_outcomes_of_a_prompt_id_dropped_as_conflicting_say_it_was_rejected(tmp_path):
    """A prompt id repeated with a different text is dropped; its outcome rows say so, naming the conflicting lines;
    before, "prompt_id 'p2' is not in the prompts file", for an id that is there twice."""
    rows = [("p1", "Q1?"), ("p2", "Q2?"), ("p3", "Q3?"), ("p2", "Q2 again?")]
    (tmp_path / "prompts.jsonl").write_text("".join(json.dumps({"prompt_id": p, "benchmark": "b", "text": t}) + "\n"
                                                    for p, t in rows))
    write_outcomes(tmp_path, "csv", [("m1", "p1", 1), ("m1", "p2", 1), ("m1", "p3", 0)])
    batch = read_source(tmp_path)
    assert errors_of(batch) == [
        ("prompts.jsonl", 4, "prompt_id 'p2' repeated with a different benchmark or text (first at line 2); both "
                             "dropped"),
        ("outcomes.csv", 3, "prompt_id 'p2' was rejected in the prompts file: repeated with a different benchmark or "
                            "text (lines 2, 4); its rows are dropped"),
    ]
    assert sorted(o.prompt_id for o in batch.iter_outcomes()) == ["p1", "p3"]


def test_prompts_and_models_without_a_kept_outcome_are_not_in_the_batch(tmp_path, store):
    """A prompt (or model) whose every outcome row was rejected is neither stored nor counted; before, "added 4
    prompts" with outcomes on 2 of them, the others stored without any outcome."""
    from indexer.ingest import ingest

    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\nm1,p2,7\nm1,p3,1\nm2,p2,x\nm1,p4,maybe\n")
    batch = read_source(tmp_path)
    assert len(batch.errors) == 3
    assert batch.table.prompt_ids == ["p1", "p3"] and batch.table.models == ["m1"]
    assert sorted((o.model, o.prompt_id, o.score) for o in batch.iter_outcomes()) == [("m1", "p1", 1.0), ("m1", "p3", 1.0)]
    summary = ingest(str(tmp_path), store=store, fetch_metadata=False)
    assert (summary.prompts, summary.outcomes, summary.models) == (2, 2, 1)


@pytest.mark.parametrize("ext", ["csv", "jsonl"])
def test_true_false_words_in_any_case_and_nan_is_not_a_valid_score(tmp_path, ext):
    """yes/no/true/false are read in any case (before, `Yes`, `No`, `YES` were "not a number" while `yes`, `True`
    and `TRUE` were read); `NaN` is an error saying it is not a valid score (before, "missing correct value")."""
    write_prompts(tmp_path)
    rows = [("m1", "p1", "Yes"), ("m1", "p2", "NO"), ("m1", "p3", "YES"), ("m2", "p1", "False"), ("m2", "p2", "NaN"),
            ("m2", "p3", "tRuE")]
    write_outcomes(tmp_path, ext, rows)
    batch = read_source(tmp_path)
    head = 1 if ext == "csv" else 0  # a CSV file's line 1 is its header
    assert errors_of(batch) == [(f"outcomes.{ext}", 5 + head, "correct value NaN is not a valid score (expected a number in "
                                 "[0, 1]; leave the row out when the outcome is unknown)")]
    assert sorted((o.model, o.prompt_id, o.score) for o in batch.iter_outcomes()) == [
        ("m1", "p1", 1.0), ("m1", "p2", 0.0), ("m1", "p3", 1.0), ("m2", "p1", 0.0), ("m2", "p3", 1.0)]
    write_outcomes(tmp_path, ext, [("m1", "p1", 1), ("m1", "p2", "NaN"), ("m1", "p3", "nan")])  # the numeric path
    assert [line for _, line, _ in errors_of(read_source(tmp_path))] == [2 + head, 3 + head]


@pytest.mark.parametrize("ext", ["jsonl", "parquet"])
def test_a_prompt_field_that_is_not_a_string_is_an_error_at_its_line(tmp_path, ext):
    """A prompts file with typed values (JSON lines, Parquet) whose benchmark, text or prompt_id is a list, an object
    or a boolean: an error at its line naming the field and its kind, the prompt and its outcome rows dropped, the
    rest read; a number still reads as its digits (as in CSV). Before, str() stored Python reprs: a benchmark named
    "['x']", a prompt text "{'a': 1}" or "True", embedded and indexed as if real."""
    rows = [{"prompt_id": "p1", "benchmark": "b", "text": "Q1"},
            {"prompt_id": "p2", "benchmark": "b", "text": 5},
            {"prompt_id": "p3", "benchmark": ["x"], "text": "Q3"},
            {"prompt_id": "p4", "benchmark": "b", "text": {"a": 1}},
            {"prompt_id": "p5", "benchmark": "b", "text": True}]
    if ext == "jsonl":
        (tmp_path / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:  # Parquet has one type per column: each bad value in a file of its own kind
        rows = [rows[0], {"prompt_id": "p3", "benchmark": ["x"], "text": "Q3"}]
        pq.write_table(pa.table({"prompt_id": ["p1", "p3"], "benchmark": [["b"], ["x"]], "text": ["Q1", "Q3"]}),
                       tmp_path / "prompts.parquet")
    ids = [r["prompt_id"] for r in rows]
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\n" + "".join(f"m1,{p},1\n" for p in ids))
    batch = read_source(tmp_path)
    msgs = {(e.file.rsplit("/", 1)[-1], e.line): e.message for e in batch.errors}
    pf = f"prompts.{ext}"
    if ext == "jsonl":
        assert batch.table.texts == ["Q1", "5"] and batch.table.benchmarks == ["b", "b"]
        assert msgs[(pf, 3)] == "benchmark is a list, not a string; the prompt is skipped"
        assert msgs[(pf, 4)] == "text is an object, not a string; the prompt is skipped"
        assert msgs[(pf, 5)] == "text is a boolean, not a string; the prompt is skipped"
        assert "prompt_id 'p4' was rejected in the prompts file (line 4)" in msgs[("outcomes.csv", 5)]
    else:
        assert batch.table.texts == [] and msgs[(pf, 1)].startswith("benchmark is a list, not a string")


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_a_header_that_names_a_column_twice_is_one_error_and_nothing_of_the_file_is_read(tmp_path, ext):
    """A matrix whose header repeats a prompt id (`model,p1,p1`, two different cells for one pair) or a long-form
    file with two `correct` columns: one error naming the column and its positions (at line 1 in CSV), nothing of
    the file read. Before, the columns were read into a dict by name, so all but the last were dropped without a
    word: `m1,1,0` stored m1's p1 as 0, the 1 gone, and the ingest reported no error."""
    write_prompts(tmp_path)
    header, row = ["model", "p1", "p1"], ["m1", "1", "0"]
    if ext == "csv":
        (tmp_path / "matrix.csv").write_text(",".join(header) + "\n" + ",".join(row) + "\n")
    else:
        pq.write_table(pa.Table.from_arrays([pa.array([v]) for v in row], names=header), tmp_path / "matrix.parquet")
    batch = read_source(tmp_path)
    (e,) = batch.errors
    assert e.file.endswith(f"matrix.{ext}") and e.line == (1 if ext == "csv" else None)
    assert e.message.startswith("the header names 'p1' (columns 2, 3) more than once") and "nothing of this file" in e.message
    assert batch.table.scores.size == 0
    long = tmp_path / "long"
    long.mkdir()
    write_prompts(long)
    (long / "outcomes.csv").write_text("model,prompt_id,correct,correct\nm1,p1,1,0\n")
    (e,) = read_source(long).errors
    assert e.line == 1 and "the header names 'correct' (columns 3, 4) more than once" in e.message


def test_empty_header_cells_a_spreadsheet_export_ends_with_are_no_repeated_column(tmp_path, store):
    """A CSV saved from a spreadsheet whose header ends with empty cells (`model,prompt_id,correct,,`, a column once
    formatted): before, "the header names '' (columns 4, 5) more than once ... nothing of this file is read", the
    whole file rejected for two columns that name nothing. Now blank header cells name no column: long form and
    matrix form read as without them; a named column repeated is still refused."""
    from indexer.ingest import ingest

    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct,,\r\nm1,p1,1,,\r\nm1,p2,0,,\r\nm2,p1,1,,\r\n")
    s = ingest(str(tmp_path), store=store, fetch_metadata=False)
    assert s.errors == [] and s.outcomes == 3 and s.models == 2
    m = tmp_path / "m"
    m.mkdir()
    write_prompts(m)
    (m / "matrix.csv").write_text("model,p1,p2,,\nm1,1,0,,\nm2,,1,,\n")
    batch = read_source(m)
    assert batch.errors == [] and batch.table.scores.size == 3
    (m / "matrix.csv").write_text("model,p1,p1,,\nm1,1,0,,\n")
    (e,) = read_source(m).errors
    assert e.line == 1 and e.message.startswith("the header names 'p1' (columns 2, 3) more than once")


@pytest.mark.parametrize("ext", ["csv", "jsonl", "parquet"])
def test_an_outcomes_file_with_both_correct_and_score_is_one_error_naming_both(tmp_path, ext):
    """A long-form outcomes file with a `correct` and a `score` column (`Score`, any case): one error (at line 1 in CSV,
    the first row's line in JSON lines) naming both columns and saying to keep one, nothing of the file read. Before,
    `correct` was read and `score` dropped without a word."""
    write_prompts(tmp_path)
    rows = [{"model": "m1", "prompt_id": "p1", "correct": 1, "Score": 0.25},
            {"model": "m2", "prompt_id": "p2", "correct": 0, "Score": 0.75}]
    if ext == "csv":
        (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct,Score\nm1,p1,1,0.25\nm2,p2,0,0.75\n")
    elif ext == "jsonl":
        (tmp_path / "outcomes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), tmp_path / "outcomes.parquet")
    batch = read_source(tmp_path)
    (e,) = batch.errors
    assert e.file.endswith(f"outcomes.{ext}") and e.line == {"csv": 1, "jsonl": 1, "parquet": None}[ext], e
    assert e.message.startswith("both a 'correct' and a 'score' column") and "keep one" in e.message, e.message
    assert batch.table.scores.size == 0


@pytest.mark.parametrize("block", [3, 200_000])
def test_json_lines_rows_that_mix_correct_and_score_name_the_first_line_of_each_and_read_nothing(tmp_path,
                                                                                                 monkeypatch, block):
    """JSON-lines outcome rows, some holding their outcome under `correct` and some under `score`: one error naming
    the first line of each column and the value seen there, nothing of the file read, whether the rows fall in one
    block of the reader or in two (`block`: rows per block, `JSON_BLOCK_ROWS`, 200,000). Before, in one block: "both a
    'correct' and a 'score' column" at line 1, naming no row of either; across blocks (a file of more than 200,000
    rows): "mixed value columns 'correct' and 'score'" at no line, and every row of both stored, the benchmark's metric
    `score`."""
    from indexer.sources import common

    monkeypatch.setattr(common, "JSON_BLOCK_ROWS", block, raising=False)
    write_prompts(tmp_path)
    rows = [{"model": "m1", "prompt_id": "p1", "correct": 1}, {"model": "m2", "prompt_id": "p1", "correct": 0},
            {"model": "m3", "prompt_id": "p2", "correct": True}, {"model": "m1", "prompt_id": "p2", "score": 0.25},
            {"model": "m2", "prompt_id": "p2", "score": 0.5}, {"model": "m9", "prompt_id": "nope", "correct": 1}]
    (tmp_path / "outcomes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    batch = read_source(tmp_path)
    (e,) = batch.errors
    assert e.file.endswith("outcomes.jsonl") and e.line == 4, e
    assert e.message == ("mixed value columns: line 1 holds its outcome under 'correct' (1), line 4 under 'score' (0.25): "
                         "which one holds the outcomes cannot be told, so nothing of this file is read; write every "
                         "row's outcome under one of them (correct: 0/1, score: [0, 1])"), e.message
    assert batch.table.scores.size == 0 and batch.table.models == []


def test_a_json_number_too_big_for_64_bits_costs_its_row_not_the_file(tmp_path):
    """JSON-lines outcome rows holding a whole number past 64 bits (`1e23` written out as digits, a model named by
    such a number): the row of the score is an error at its line naming the value, the model reads as its digits,
    the rest is read. Before, "cannot be read: OverflowError: Python int too large to convert to C long (an
    unexpected error: please report it)", and nothing of the source stored."""
    write_prompts(tmp_path)
    (tmp_path / "outcomes.jsonl").write_text(
        '{"model": 7, "prompt_id": "p1", "score": 0}\n'
        '{"model": 7, "prompt_id": "p2", "score": 100000000000000000000000}\n'
        '{"model": 123456789012345678901234567890, "prompt_id": "p1", "score": 1}\n')
    batch = read_source(tmp_path)
    (e,) = batch.errors
    assert (e.line, e.message) == (2, "score value 1e+23 is outside [0, 1]"), e
    assert sorted(batch.table.models) == ["123456789012345678901234567890", "7"]
    assert sorted(batch.table.scores.tolist()) == [0.0, 1.0]


def test_a_value_just_outside_its_range_is_quoted_as_written_not_rounded(tmp_path):
    """A score just past 1 (`1.0000001`), a `correct` just short of 1 (`0.9999999`) and one (model, prompt_id) given
    0.5 and 0.5000001: each error quotes the values as written. Before, rounded to 6 digits: "score value 1 is outside
    [0, 1]", "correct value 1 is not binary", "repeated with a different outcome (0.5 at line 2, 0.5 here)", which
    named values that are fine; values 6 digits show as before (`2`, `1e+30`)."""
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,score\nm1,p1,1.0000001\nm1,p2,0.5\nm1,p2,0.5000001\n"
                                           "m2,p1,2\nm2,p2,1e30\n")
    msgs = [e.message for e in read_source(tmp_path).errors]
    assert "score value 1.0000001 is outside [0, 1]" in msgs and "score value 2 is outside [0, 1]" in msgs, msgs
    assert "score value 1e+30 is outside [0, 1]" in msgs, msgs
    assert any("repeated with a different outcome (0.5 at line 3, 0.5000001 here)" in m for m in msgs), msgs
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,0.9999999\nm1,p2,1\n")
    (e,) = read_source(tmp_path).errors
    assert e.message.startswith("correct value 0.9999999 is not binary"), e.message


@pytest.mark.parametrize("sep", [",", ";"])
def test_excels_separator_line_above_the_header_is_one_error_saying_to_delete_it(tmp_path, sep):
    """A CSV whose first line is Excel's separator hint (`sep=,`, `sep=;`), outcomes or prompts file: one error at
    line 1 naming it and saying to delete it, nothing of the file read. Before, `sep=,` was taken for a header of two
    columns and every row was "malformed CSV row: 3 fields, the header has 2"; `sep=;` read as a file "separated by
    semicolons"."""
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_text(f"sep={sep}\nmodel,prompt_id,correct\nm1,p1,1\nm2,p2,0\n")
    batch = read_source(tmp_path)
    (e,) = batch.errors
    assert (e.line, e.message) == (1, f"line 1, 'sep={sep}', is Excel's separator line, not the header: delete it (the "
                                      "header is the first line); nothing of this file is read"), e
    assert batch.table.scores.size == 0
    (tmp_path / "prompts.jsonl").unlink()
    (tmp_path / "prompts.csv").write_text(f"sep={sep}\nprompt_id,benchmark,text\np1,b,Q?\n")
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\n")
    errs = read_source(tmp_path).errors
    assert (errs[0].file, errs[0].line) == (str(tmp_path / "prompts.csv"), 1), errs
    assert errs[0].message.startswith(f"line 1, 'sep={sep}', is Excel's separator line"), errs


@pytest.mark.parametrize("name", ["outcomes.json", "outcomes.jsonl"])
def test_an_outcomes_file_of_one_object_holding_the_rows_under_a_key_says_how_to_write_them(tmp_path, name):
    """An outcomes file that is one JSON object holding the rows under a key (`{"rows": [{...}, ...]}`): the error
    says so and how to write them, as the prompts file's does. Before, "rows is a list, not a name; the row is
    skipped", which named no row the file has."""
    write_prompts(tmp_path)
    (tmp_path / name).write_text(json.dumps({"rows": [{"model": "m1", "prompt_id": "p1", "correct": 1},
                                                      {"model": "m2", "prompt_id": "p1", "correct": 0}]}))
    (e,) = read_source(tmp_path).errors
    assert e.line == 1 and "this line is one JSON object holding 2 rows under 'rows': write them as a JSON array" \
        in e.message, e.message


def test_a_json_lines_row_naming_a_key_twice_is_an_error_at_its_line(tmp_path):
    """A JSON-lines outcomes or prompts row whose object names a key twice (`{"correct": 1, "correct": 0}`, a
    hand-merged or concatenated export): an error at its line naming the key, the row skipped, the rest read. Before,
    the last value was read without a word (the row stored as a failure). A value holding `":` is no repeated key."""
    (tmp_path / "prompts.jsonl").write_text(
        '{"prompt_id": "p1", "benchmark": "b", "text": "Say \\"a\\": b?"}\n'
        '{"prompt_id": "p2", "benchmark": "b", "text": "Q two?", "text": "Other?"}\n')
    (tmp_path / "outcomes.jsonl").write_text(
        '{"model": "m1", "prompt_id": "p1", "correct": 1, "correct": 0}\n'
        '{"model": "m2", "prompt_id": "p1", "correct": 1}\n'
        '{"model": "m3", "prompt_id": "p2", "correct": 1}\n')
    batch = read_source(tmp_path)
    errs = [(Path(e.file).name, e.line, e.message) for e in batch.errors]
    assert errs[0] == ("prompts.jsonl", 2, "the object names 'text' more than once: which value holds cannot be told; "
                                           "the row is skipped"), errs
    assert errs[1] == ("outcomes.jsonl", 1, "the object names 'correct' more than once: which value holds cannot be "
                                            "told; the row is skipped"), errs
    assert batch.table.models == ["m2"] and batch.table.texts == ['Say "a": b?']


@pytest.mark.parametrize("name", ["outcomes.csv", "prompts.csv"])
def test_a_dos_end_of_file_byte_on_the_last_line_is_no_row(tmp_path, name):
    """A CSV ending with the DOS end-of-file byte (\\x1a, Ctrl-Z) on its own line, as old DOS/Windows tools append it,
    reads as without it (as a blank line); before, "malformed CSV row: 1 fields, the header has 3" at that line."""
    (tmp_path / "prompts.csv").write_text("prompt_id,benchmark,text\r\np1,b,t\r\np2,b,u\r\n")
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\r\nm1,p1,1\r\nm1,p2,0\r\n")
    with open(tmp_path / name, "a", newline="") as f:
        f.write("\x1a")
    batch = read_source(tmp_path)
    assert batch.errors == []
    assert sorted((o.model, o.prompt_id, o.score) for o in batch.iter_outcomes()) == [("m1", "p1", 1.0), ("m1", "p2", 0.0)]


@pytest.mark.parametrize("name,body", [
    ("outcomes.csv", "model,prompt_id,correct\r\nm1,p1,1\r\nm1,p2,0"),
    ("outcomes.csv.gz", "model,prompt_id,correct\r\nm1,p1,1\r\nm1,p2,0"),
    ("prompts.csv", "prompt_id,benchmark,text\r\np1,b,t\r\np2,b,u"),
    ("outcomes.jsonl", '{"model": "m1", "prompt_id": "p1", "correct": 1}\r\n{"model": "m1", "prompt_id": "p2", "correct": 0}'),
    ("outcomes.jsonl", '{"model": "m1", "prompt_id": "p1", "correct": 1}\r\n{"model": "m1", "prompt_id": "p2", "correct": 0}\r\n'),
    ("outcomes.json", '[{"model": "m1", "prompt_id": "p1", "correct": 1},\r\n{"model": "m1", "prompt_id": "p2", "correct": 0}]'),
])
def test_a_dos_end_of_file_byte_ends_the_file(tmp_path, name, body):
    """The DOS end-of-file byte (\\x1a) right after a file's last value (no line break before it) or on a last line of
    its own in a JSON file ends the file, as on a line of its own in a CSV; before, a CSV's last row was lost
    ("correct value '0\\x1a' is not a number"), a JSON-lines file's last line was "malformed", a JSON file skipped."""
    (tmp_path / "prompts.csv").write_text("prompt_id,benchmark,text\r\np1,b,t\r\np2,b,u\r\n")
    if name.startswith("prompts"):
        (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\r\nm1,p1,1\r\nm1,p2,0\r\n")
    data = (body + "\x1a").encode()
    (tmp_path / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    batch = read_source(tmp_path)
    assert batch.errors == [] and batch.table.texts == ["t", "u"]  # (not 'u\x1a')
    assert sorted((o.model, o.prompt_id, o.score) for o in batch.iter_outcomes()) == [("m1", "p1", 1.0), ("m1", "p2", 0.0)]


@pytest.mark.parametrize("sep", [",", "\t"])
def test_rows_of_empty_cells_a_spreadsheet_export_leaves_are_blank_lines(tmp_path, sep):
    """A CSV/TSV export from a spreadsheet holds rows of empty cells (`,,` after the data, `,,,,` where a formatted but
    empty column ran past the header, ` , , `): they hold no row and are skipped as blank lines are, in the prompts, the
    outcomes (long form) and the matrix file alike; the line numbers of the rows after them stay the file's. Before,
    each was an error ("missing model", "missing field(s) prompt_id, benchmark, text") and the ingest exited 1."""
    ext = "csv" if sep == "," else "tsv"
    e = sep * 2
    (tmp_path / f"prompts.{ext}").write_text(sep.join(["prompt_id", "benchmark", "text"]) + "\r\n" + e + "\r\n"
                                             + sep.join(["p1", "b", "Q one?"]) + "\r\n" + sep.join(["p2", "b", "Q two?"])
                                             + "\r\n" + e + "\r\n" + e + "\r\n")
    for wide in (e, sep * 4):  # the header's field count (the fast reader), or more (the line-exact reader)
        (tmp_path / f"outcomes.{ext}").write_text(sep.join(["model", "prompt_id", "correct"]) + "\n"
                                                  + sep.join(["m1", "p1", "1"]) + "\n" + e + "\n" + wide + "\n"
                                                  + sep.join([" ", " ", " "]) + "\n" + sep.join(["m1", "p9", "1"]) + "\n"
                                                  + sep.join(["m2", "p2", "0"]) + "\n" + e + "\n")
        batch = read_source(tmp_path)
        assert errors_of(batch) == [(f"outcomes.{ext}", 6, "prompt_id 'p9' is not in the prompts file; its rows are "
                                                           "dropped")], wide
        assert sorted((o.model, o.prompt_id, o.score) for o in batch.iter_outcomes()) == [("m1", "p1", 1.0),
                                                                                          ("m2", "p2", 0.0)]
    (tmp_path / f"outcomes.{ext}").unlink()
    (tmp_path / f"matrix.{ext}").write_text(sep.join(["model", "p1", "p2"]) + "\n" + sep.join(["m1", "1", "0"]) + "\n"
                                            + e + "\n" + sep.join(["m2", "", "1"]) + "\n" + e + "\n")
    batch = read_source(tmp_path)
    assert errors_of(batch) == []
    assert sorted((o.model, o.prompt_id, o.score) for o in batch.iter_outcomes()) == [
        ("m1", "p1", 1.0), ("m1", "p2", 0.0), ("m2", "p2", 1.0)]


def test_a_json_line_starting_with_a_byte_order_mark_is_read(tmp_path):
    """JSON-lines files joined with `cat` (each written by a tool that starts its files with a UTF-8 byte order mark:
    PowerShell, .NET, Notepad) hold a mark at the start of the second file's first line: it is no content, so the line
    is read. Before, "malformed JSON line: Unexpected UTF-8 BOM (decode using utf-8-sig)", the row skipped, and its
    outcome rows "not in the prompts file"."""
    bom = "\ufeff"
    (tmp_path / "prompts.jsonl").write_text("".join(
        (bom if i in (1, 3) else "") + json.dumps({"prompt_id": f"p{i}", "benchmark": "b", "text": f"Q{i}?"}) + "\r\n"
        for i in range(1, 5)), encoding="utf-8")
    (tmp_path / "outcomes.jsonl").write_text("".join(
        (bom if i == 3 else "") + json.dumps({"model": "m1", "prompt_id": f"p{i}", "correct": i % 2}) + "\n"
        for i in range(1, 5)), encoding="utf-8")
    batch = read_source(tmp_path)
    assert errors_of(batch) == []
    assert sorted((o.prompt_id, o.text, o.score) for o in batch.iter_outcomes()) == [
        ("p1", "Q1?", 1.0), ("p2", "Q2?", 0.0), ("p3", "Q3?", 1.0), ("p4", "Q4?", 0.0)]


def test_a_compressed_or_binary_file_under_a_text_name_is_one_error_saying_what_it_is(tmp_path):
    """A table file whose bytes are gzip (`outcomes.csv` compressed without renaming), a ZIP archive (an Excel .xlsx
    workbook renamed .csv) or Parquet: one error naming the file, what it is and what to do; nothing of it is read.
    Before, "the header line is not valid UTF-8 text ... (re-save the file as UTF-8)", or for JSON lines an error per
    line ("not valid UTF-8"), the advice beside the point."""
    import io
    import zipfile

    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_bytes(gzip.compress(b"model,prompt_id,correct\nm1,p1,1\n"))
    errs = errors_of(read_source(tmp_path))
    assert errs == [("outcomes.csv", None, "the file is gzip-compressed but its name does not end in .gz: name it "
                                           "outcomes.csv.gz (or decompress it: gunzip); nothing of it is read")], errs
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("xl/workbook.xml", "<workbook/>")
    (tmp_path / "outcomes.csv").write_bytes(buf.getvalue())
    errs = errors_of(read_source(tmp_path))
    assert errs == [("outcomes.csv", None, "the file is a ZIP archive (an Excel .xlsx workbook under another name?), "
                                           "not text: save the sheet as CSV UTF-8, or unzip it; nothing of it is read")]
    (tmp_path / "outcomes.csv").unlink()
    pq.write_table(pa.table({"model": ["m1"], "prompt_id": ["p1"], "correct": [1]}), tmp_path / "outcomes.jsonl")
    errs = errors_of(read_source(tmp_path))
    assert errs == [("outcomes.jsonl", None, "the file is Parquet, not text: name it outcomes.parquet; nothing of it "
                                             "is read")], errs


def test_a_table_file_name_holding_a_folder_or_a_pipe_is_said_as_such(tmp_path):
    """`outcomes.csv` that is a folder (Spark's `df.write.csv("outcomes.csv")` writes part-*.csv files in one) or a
    named pipe beside a prompts file: the error names it and what it is, not "prompts.jsonl but no outcomes file beside
    it"; a pipe is never opened (reading one waits for a writer)."""
    import os

    from indexer.sources.tables import why_not

    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").mkdir()
    (tmp_path / "outcomes.csv" / "part-00000.csv").write_text("model,prompt_id,correct\nm1,p1,1\n")
    assert why_not(tmp_path) == ("outcomes.csv is a folder, not a file (Spark writes a table so, as part-*.csv files): "
                                 "join its part files into one outcomes.csv with one header line")
    (tmp_path / "outcomes.csv" / "part-00000.csv").unlink()
    (tmp_path / "outcomes.csv").rmdir()
    os.mkfifo(tmp_path / "outcomes.csv")
    assert why_not(tmp_path) == "outcomes.csv is a named pipe, not a file: replace it with the file"
    with pytest.raises(InputError, match="outcomes.csv is a named pipe, not a file"):
        read_source(tmp_path)


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_a_header_naming_a_known_column_twice_in_two_spellings_is_one_error(tmp_path, ext):
    """`model,prompt_id,correct,Correct` (or `Prompt ID` beside `prompt_id`; a prompts file's `Text` beside `text`):
    headers are read in any case and spacing, so these name one column twice and which holds the values cannot be
    told: one error at the header naming both spellings, nothing of the file read, as for a name repeated as written.
    Before, the one spelled exactly was read and the other dropped without a word. Matrix prompt ids stay
    case-sensitive (`p1` and `P1` are two ids)."""
    write_prompts(tmp_path)
    names, rows = ["model", "prompt_id", "correct", "Correct"], [["m1", "p1", "1", "0"], ["m1", "p2", "0", "1"]]
    if ext == "csv":
        (tmp_path / "outcomes.csv").write_text("\n".join(",".join(r) for r in [names, *rows]) + "\n")
    else:
        pq.write_table(pa.Table.from_arrays([pa.array(list(c)) for c in zip(*rows)], names=names),
                       tmp_path / "outcomes.parquet")
    errs = errors_of(read_source(tmp_path))
    assert errs == [(f"outcomes.{ext}", 1 if ext == "csv" else None,
                     "the header names 'correct' and 'Correct' (columns 3, 4: one column, names read in any case and "
                     "spacing) more than once: which column holds the values cannot be told, so nothing of this file "
                     "is read; remove or rename the repeated column")], errs
    (tmp_path / f"outcomes.{ext}").unlink()
    (tmp_path / "outcomes.jsonl").write_text('{"model": "m1", "prompt_id": "p1", "correct": 1, "Correct": 0}\n'
                                             '{"model": "m1", "prompt_id": "p2", "correct": 0, "note": "x"}\n')
    batch = read_source(tmp_path)
    assert errors_of(batch) == [("outcomes.jsonl", 1, "the object names 'correct' and 'Correct' (one column, names read "
                                                      "in any case and spacing): which value holds cannot be told; the "
                                                      "row is skipped")], errors_of(batch)
    assert [(o.prompt_id, o.score) for o in batch.iter_outcomes()] == [("p2", 0.0)]
    (tmp_path / "outcomes.jsonl").unlink()
    (tmp_path / "prompts.jsonl").unlink()
    (tmp_path / "prompts.csv").write_text("prompt_id,benchmark,text,Text\np1,b,Q one?,Other?\n")
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\n")
    errs = errors_of(read_source(tmp_path))
    assert errs[0][:2] == ("prompts.csv", 1) and "'text' and 'Text' (columns 3, 4" in errs[0][2], errs
    (tmp_path / "prompts.csv").write_text("prompt_id,benchmark,text\np1,b,Q one?\nP1,b,Q two?\n")
    (tmp_path / "outcomes.csv").unlink()
    (tmp_path / "matrix.csv").write_text("model,p1,P1\nm1,1,0\n")
    batch = read_source(tmp_path)
    assert errors_of(batch) == [] and sorted(o.prompt_id for o in batch.iter_outcomes()) == ["P1", "p1"]


def test_a_json_array_item_naming_a_key_twice_is_an_error_at_its_line(tmp_path):
    """A `.json` array outcomes or prompts file whose item names a key twice (`{"correct": 1, "correct": 0}`): an
    error naming the file, the item's line and number and the key, the item skipped, the rest read, as for JSON lines.
    Before, the last value was read without a word (the row stored as a failure). A key repeated in another item, or
    a value holding `":`, is no repeated key."""
    (tmp_path / "prompts.json").write_text(json.dumps([
        {"prompt_id": "p1", "benchmark": "b", "text": 'Say "a": b?'}, {"prompt_id": "p2", "benchmark": "b", "text": "Q2?"},
    ], indent=2)[:-2] + ',\n  {"prompt_id": "p3", "benchmark": "b", "text": "Q3?", "text": "Other?"}\n]')
    (tmp_path / "outcomes.json").write_text(
        '[{"model": "m1", "prompt_id": "p1", "correct": 1},\n'
        ' {"model": "m2", "prompt_id": "p1", "correct": 1, "correct": 0},\n'
        ' {"model": "m3", "prompt_id": "p2", "correct": 0}, {"model": "m4", "prompt_id": "p3", "correct": 1}]\n')
    batch = read_source(tmp_path)
    errs = [(Path(e.file).name, e.line, e.message) for e in batch.errors]
    assert ("prompts.json", 12, "item 3 names 'text' more than once: which value holds cannot be told; the item is "
                                "skipped") in errs, errs
    assert ("outcomes.json", 2, "item 2 names 'correct' more than once: which value holds cannot be told; the item "
                                "is skipped") in errs, errs
    assert sorted(batch.table.models) == ["m1", "m3"], errs
    assert sorted(batch.table.texts) == ["Q2?", 'Say "a": b?']


def test_an_outcome_row_with_a_list_or_object_where_a_value_belongs_is_an_error_at_its_line(tmp_path):
    """JSON-lines outcomes whose model or prompt_id is a list, an object or a boolean, or whose correct/score is a
    list or an object: an error at the line naming the field, the row skipped, the rest read; in matrix form such a
    cell is left out with an error, such a model costs its row. Before, the rows were read as Python reprs (models
    named "['m2']", "True", "{'a': 1}" stored and indexed), and a file whose every model was a list failed as an
    unexpected error (ArrowNotImplementedError: cast from list to utf8) costing the source."""
    write_prompts(tmp_path)
    rows = [{"model": "m1", "prompt_id": "p1", "correct": 1}, {"model": ["m2"], "prompt_id": "p1", "correct": 1},
            {"model": True, "prompt_id": "p2", "correct": 0}, {"model": {"a": 1}, "prompt_id": "p2", "correct": 1},
            {"model": "m3", "prompt_id": ["p2"], "correct": 1}, {"model": "m4", "prompt_id": "p2", "correct": [1]},
            {"model": "m5", "prompt_id": "p2", "correct": True}]
    (tmp_path / "outcomes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    batch = read_source(tmp_path)
    assert sorted(batch.table.models) == ["m1", "m5"]
    assert [(e.line, e.message) for e in batch.errors] == [
        (2, "model is a list, not a name; the row is skipped"), (3, "model is a boolean, not a name; the row is skipped"),
        (4, "model is an object, not a name; the row is skipped"),
        (5, "prompt_id is a list, not a name; the row is skipped"), (6, "correct is a list, not a score; the row is skipped")]
    every = tmp_path / "every"
    every.mkdir()
    write_prompts(every)
    (every / "outcomes.jsonl").write_text(json.dumps({"model": ["m1"], "prompt_id": "p1", "correct": 1}) + "\n")
    (e,) = read_source(every).errors
    assert e.line == 1 and e.message.startswith("model is a list")
    matrix = tmp_path / "matrix"
    matrix.mkdir()
    write_prompts(matrix)
    (matrix / "matrix.jsonl").write_text(json.dumps({"model": "m1", "p1": 1, "p2": [0]}) + "\n"
                                         + json.dumps({"model": ["m2"], "p1": 1}) + "\n")
    batch = read_source(matrix)
    assert batch.table.models == ["m1"] and batch.table.prompt_ids == ["p1"]
    assert [(e.line, e.message) for e in batch.errors] == [
        (1, "cell p2 is a list, not a score; it is left out (unobserved)"),
        (2, "model is a list, not a name; the row is skipped")]


def test_a_parquet_model_or_prompt_id_column_of_lists_is_an_error_naming_it(tmp_path):
    """A Parquet outcomes file whose model (or prompt_id) column holds lists (or booleans): one error naming the
    column and its type, nothing of it read. Before, an ArrowNotImplementedError ("Unsupported cast from
    list<element: string> to utf8") reported as an unexpected error costing the source."""
    write_prompts(tmp_path)
    pq.write_table(pa.table({"model": [["m1"], ["m2"]], "prompt_id": ["p1", "p2"], "correct": [1, 0]}),
                   tmp_path / "outcomes.parquet")
    batch = read_source(tmp_path)
    (e,) = batch.errors
    assert e.line is None and e.message.startswith("the model column holds list<element: string> values, not names")
    assert batch.table.models == []
    pq.write_table(pa.table({"model": ["m1", "m2"], "prompt_id": [True, False], "correct": [1, 0]}),
                   tmp_path / "outcomes.parquet")
    (e,) = read_source(tmp_path).errors
    assert e.message.startswith("the prompt_id column holds bool values")


@pytest.mark.parametrize("form", ["long", "matrix"])
def test_a_prompt_id_in_another_unicode_form_in_the_outcomes_file_is_the_same_id(tmp_path, form):
    """`café-1` written with a precomposed é in the prompts file and with e + a combining accent in the outcomes file
    (macOS, some exports): one id, as they look; before, "prompt_id 'café-1' is not in the prompts file" and its rows
    dropped. A zero-width character still makes another id."""
    import unicodedata

    nfc, nfd = unicodedata.normalize("NFC", "café-1"), unicodedata.normalize("NFD", "café-1")
    assert nfc != nfd
    (tmp_path / "prompts.jsonl").write_text(json.dumps({"prompt_id": nfc, "benchmark": "b", "text": "Q1?"}) + "\n" +
                                            json.dumps({"prompt_id": "p2", "benchmark": "b", "text": "Q2?"}) + "\n")
    if form == "long":
        (tmp_path / "outcomes.csv").write_text(f"model,prompt_id,correct\nm1,{nfd},1\nm1,p2,0\nm1,p2\u200b,1\n")
    else:
        (tmp_path / "outcomes.csv").write_text(f"model,{nfd},p2\nm1,1,0\n")
    batch = read_source(tmp_path)
    assert sorted((o.text, o.score) for o in batch.iter_outcomes()) == [("Q1?", 1.0), ("Q2?", 0.0)]
    if form == "long":
        (e,) = batch.errors
        assert e.line == 4 and "not in the prompts file" in e.message
    else:
        assert batch.errors == []


def test_a_lone_carriage_return_in_an_unquoted_csv_field_is_part_of_it_not_a_line_end(tmp_path):
    """A lone CR (``\\r`` not followed by ``\\n``) inside an unquoted field of a file whose lines end with a line feed is
    part of the field, as an editor shows the line (``^M``) and as a quoted field's is read: the prompt text is kept
    whole and later errors name the lines an editor numbers. Before, the CR ended a line: the text was cut to "What
    is", the rest ("2+2?") was "malformed CSV row: 1 fields" at a line 3 that the editor calls line 2, and every
    error after it named the line after its own. In a file whose first line ends with a lone CR (classic Mac OS,
    Excel's "CSV (Macintosh)") a lone CR still ends a line; a model name holding one is refused as a control
    character, at its line."""
    for end in ("\n", "\r\n"):
        (tmp_path / "prompts.csv").write_text(
            f"prompt_id,benchmark,text{end}p1,demo/a,What is\r2+2?{end}p3,demo/b{end}p4,demo/b,Name a prime.{end}",
            newline="")
        write_outcomes(tmp_path, "csv", [("m1", "p1", 1), ("m1", "p4", 1)])
        batch = read_source(tmp_path)
        assert {o.prompt_id: o.text for o in batch.iter_outcomes()} == {"p1": "What is\r2+2?", "p4": "Name a prime."}
        assert [e[:2] for e in errors_of(batch)] == [("prompts.csv", 3)]  # p3's missing text, on the editor's line 3
    (tmp_path / "prompts.csv").write_text("prompt_id,benchmark,text\rp1,demo/a,What is 1+1?\rp2,demo/a,Two?\r",
                                          newline="")
    write_outcomes(tmp_path, "csv", [("m1", "p1", 1), ("m1", "p2", 0)])
    batch = read_source(tmp_path)
    assert batch.errors == [] and {o.prompt_id: o.text for o in batch.iter_outcomes()} == {"p1": "What is 1+1?",
                                                                                            "p2": "Two?"}
    (tmp_path / "prompts.csv").unlink()
    write_prompts(tmp_path)
    (tmp_path / "outcomes.csv").write_text("model,prompt_id,correct\nm1,p1,1\nm\r2,p1,0\nm3,p9,1\n", newline="")
    assert errors_of(read_source(tmp_path)) == [
        ("outcomes.csv", 3, "model 'm\\r2' holds a control character (U+000D: a line break, tab or terminal escape); "
                            "a name is one line of printable text; its outcomes are dropped: fix the name in the file"),
        ("outcomes.csv", 4, "prompt_id 'p9' is not in the prompts file; its rows are dropped"),
    ]


def test_an_empty_json_object_line_is_one_error_saying_so_as_a_line_of_null_is(tmp_path):
    """A JSON line (or `.json` array item) `{}` holds no row: one error at its line saying it is an empty object and to
    remove it, as a line `[]` or `null` is one ("not a JSON object"), the other rows read; a blank line (no JSON value)
    is skipped. It holds no prompt id, so an outcome row of an id the prompts file lacks does not say the id may be on
    it. Before, it was read as a row missing every field: "missing field(s) prompt_id, benchmark, text", "missing
    model"."""
    said = "an empty JSON object ({}), which holds no row (no field at all)"
    rows = [json.dumps(p) for p in PROMPTS[:2]]
    (tmp_path / "prompts.jsonl").write_text(f"{rows[0]}\n{{}}\n\n[]\nnull\n {{ }} \n{rows[1]}\n")
    (tmp_path / "outcomes.jsonl").write_text('{"model": "m1", "prompt_id": "p1", "correct": 1}\n{}\n'
                                             '{"model": "m1", "prompt_id": "p2", "correct": 0}\n'
                                             '{"model": "m1", "prompt_id": "p9", "correct": 0}\n')
    batch = read_source(tmp_path)
    assert errors_of(batch) == [
        ("prompts.jsonl", 2, f"line is {said}: remove the line, or write the row's fields into it"),
        ("prompts.jsonl", 4, "line is not a JSON object"),
        ("prompts.jsonl", 5, "line is not a JSON object"),
        ("prompts.jsonl", 6, f"line is {said}: remove the line, or write the row's fields into it"),
        ("outcomes.jsonl", 2, f"line is {said}: remove the line, or write the row's fields into it"),
        ("outcomes.jsonl", 4, "prompt_id 'p9' is not in the prompts file, unless on a line of it that could not be "
                              "read (lines 4, 5); its rows are dropped"),
    ]
    assert sorted(o.prompt_id for o in batch.iter_outcomes()) == ["p1", "p2"]
    (tmp_path / "prompts.jsonl").unlink()
    (tmp_path / "prompts.json").write_text(f"[\n  {rows[0]},\n  {{}},\n  {rows[1]}\n]\n")
    assert errors_of(read_source(tmp_path))[0] == ("prompts.json", 3, f"item 2 is {said}: remove it, or write the "
                                                                      "row's fields into it")


@pytest.mark.parametrize("ext", ["csv", "csv.gz", "tsv"])
def test_an_outcomes_file_mixing_line_ends_reads_as_the_line_exact_reader_reads_it(tmp_path, ext):
    """A lone CR (``\\r`` not followed by ``\\n``) in an outcomes file whose first line ends with a line feed is part of
    its line on both paths. Before, the fast path (pyarrow) ended a line there and fell back to the line-exact reader
    only when the field count broke: `m1,p1,1\\rm1,p2,0` (a file mixing both line ends) was two rows stored without a
    word, while one more malformed row elsewhere in the file made it one row of 5 fields, rejected: the same line read
    two ways by what else the file held. Now it is rejected on both, its error saying what the line holds and what to
    do; a file whose lines all end with a lone CR (classic Mac OS) still reads as rows."""
    write_prompts(tmp_path)
    sep = "\t" if ext == "tsv" else ","
    name = f"outcomes.{ext}"

    def write(text):
        data = text.replace(",", sep).encode()
        (tmp_path / name).write_bytes(gzip.compress(data) if ext.endswith(".gz") else data)

    said = ("malformed CSV row: 5 fields, the header has 3; the line holds a carriage return (\\r) not followed by a "
            "line feed, which ends no line in a file whose first line ends with a line feed: if it was meant to end "
            "one, end every line of the file with \\n (or \\r\\n)")
    for extra in ("", "m2,p9\n"):
        write("model,prompt_id,correct\nm1,p1,1\rm1,p2,0\nm1,p3,1\n" + extra)
        batch = read_source(tmp_path)
        assert [(o.model, o.prompt_id) for o in batch.iter_outcomes()] == [("m1", "p3")]
        assert errors_of(batch)[0] == (name, 2, said)
    write("model,prompt_id,correct\rm1,p1,1\rm1,p2,0\rm1,p3,1\r")
    batch = read_source(tmp_path)
    assert batch.errors == [] and len(list(batch.iter_outcomes())) == 3


@pytest.mark.parametrize("ext", ["csv", "tsv"])
def test_a_row_ending_with_an_empty_field_past_the_header_says_to_remove_the_trailing_separator(tmp_path, ext):
    """`m1,p1,1,` under `model,prompt_id,correct` (a script that writes a separator after every value): the row has a
    field more than the header and is rejected at its line as before, its error now saying the extra fields are empty
    and what to do (remove the trailing separator, or end the header with as many, which reads: empty header cells
    name no column). Before, `malformed CSV row: 4 fields, the header has 3` said nothing of why or what to do."""
    write_prompts(tmp_path)
    sep = "\t" if ext == "tsv" else ","
    word = "tab" if ext == "tsv" else "comma"
    rows = "m1,p1,1,\nm1,p2,0,,\nm1,p3,1,x\n"
    (tmp_path / f"outcomes.{ext}").write_text(("model,prompt_id,correct\n" + rows).replace(",", sep))
    assert errors_of(read_source(tmp_path)) == [
        (f"outcomes.{ext}", 2, f"malformed CSV row: 4 fields, the header has 3; the 1 past the header's is empty (a "
                               f"{word} ending the line?): remove the trailing {word}, or end the header line with as many"),
        (f"outcomes.{ext}", 3, f"malformed CSV row: 5 fields, the header has 3; the 2 past the header's are empty (a "
                               f"{word} ending the line?): remove the trailing {word}s, or end the header line with as "
                               "many"),
        (f"outcomes.{ext}", 4, "malformed CSV row: 4 fields, the header has 3"),
    ]
    (tmp_path / f"outcomes.{ext}").write_text(("model,prompt_id,correct,,\n" + rows).replace(",", sep))
    batch = read_source(tmp_path)  # the header ended with as many as a row has: that row reads
    assert [(o.prompt_id, o.score) for o in batch.iter_outcomes()] == [("p2", 0.0)]
    assert [e[:2] for e in errors_of(batch)] == [(f"outcomes.{ext}", 2), (f"outcomes.{ext}", 4)]


def test_a_trailing_comma_in_json_is_said_as_such_with_what_to_do(tmp_path):
    """A comma before a closing `]` or `}` (a hand edit, a JavaScript or Python literal pasted as JSON): JSON allows
    none, so the line (JSON lines) or the file (a `.json` array) is still rejected, its error now saying where the comma
    is and to remove it. Before, Python's "Expecting value at column 1" / "Expecting property name enclosed in double
    quotes", which named neither the comma nor the fix."""
    said = "(a comma before the closing '{}', which JSON does not allow: remove that comma)"
    (tmp_path / "prompts.jsonl").write_text('{"prompt_id": "p1", "benchmark": "b", "text": "Q1?",}\n'
                                            '{"prompt_id": "p2", "benchmark": "b", "text": "Q2?"}\n')
    (tmp_path / "outcomes.json").write_text('[{"model": "m1", "prompt_id": "p1", "correct": 1},\n'
                                            ' {"model": "m1", "prompt_id": "p2", "correct": 0},\n]\n')
    got = errors_of(read_source(tmp_path))
    assert got[0] == ("prompts.jsonl", 1, "malformed JSON line: Expecting property name enclosed in double quotes at "
                                          f"column 53 {said.format('}')}; the line is skipped: fix it, or export or copy "
                                          "the file again"), got
    assert got[1] == ("outcomes.json", 3, f"malformed JSON: Expecting value at column 1 {said.format(']')}; the file is "
                                          "skipped: fix it, or copy or download it again"), got
    (tmp_path / "outcomes.json").write_text('[{"model": "m1", "prompt_id": "p2", "correct": 0}]\n')
    assert errors_of(read_source(tmp_path)) == [got[0]]  # a comma that is no trailing one: no such word
    (tmp_path / "prompts.jsonl").write_text('{"prompt_id": "p1",, "benchmark": "b", "text": "Q1?"}\n')
    assert "comma before the closing" not in errors_of(read_source(tmp_path))[0][2]


def test_a_parquet_binary_column_of_names_or_ids_reads_its_utf8_values_and_skips_the_others_at_their_row(tmp_path):
    """A Parquet outcomes file whose model or prompt_id column is binary (pandas writes a column of bytes objects so)
    reads every value that is UTF-8 text; one that is not costs its row, an error at its row saying so and what to do
    (in a matrix once, not once per prompt column). A prompts file's binary text column says it is binary data and
    to write it as a string column. Before, one value that was not UTF-8 failed the whole source: "ArrowInvalid:
    Invalid UTF8 payload (an unexpected error: please report it)"; a prompt's text was "a bytes"."""
    write_prompts(tmp_path)
    binary = pa.binary()
    pq.write_table(pa.table({"model": pa.array([b"m1", b"m\xff", b"m1"], binary),
                             "prompt_id": pa.array([b"p1", b"p2", b"p\xfe3"], binary), "correct": [1, 0, 1]}),
                   tmp_path / "outcomes.parquet")
    batch = read_source(tmp_path)
    assert [(o.model, o.prompt_id) for o in batch.iter_outcomes()] == [("m1", "p1")]
    said = "is not UTF-8 text; the row is skipped (a binary column: write it as a column of UTF-8 strings)"
    assert errors_of(batch) == [("outcomes.parquet", 2, f"model b'm\\xff' {said}"),
                                ("outcomes.parquet", 3, f"prompt_id b'p\\xfe3' {said}")]
    (tmp_path / "outcomes.parquet").unlink()
    pq.write_table(pa.table({"model": pa.array([b"m1", b"m\xff"], binary), "p1": [1, 0], "p2": [0, 1]}),
                   tmp_path / "matrix.parquet")
    batch = read_source(tmp_path)
    assert sorted((o.model, o.prompt_id) for o in batch.iter_outcomes()) == [("m1", "p1"), ("m1", "p2")]
    assert errors_of(batch) == [("matrix.parquet", 2, f"model b'm\\xff' {said}")]
    (tmp_path / "prompts.jsonl").unlink()
    pq.write_table(pa.table({"prompt_id": ["p1", "p2"], "benchmark": ["b", "b"], "text": pa.array([b"Q1?", b"Q2?"], binary)}),
                   tmp_path / "prompts.parquet")
    assert errors_of(read_source(tmp_path))[0] == (
        "prompts.parquet", 1, "text is binary data (a Parquet binary column: write it as a string column), not a string; "
                              "the prompt is skipped")


def test_a_table_file_holding_the_other_format_than_its_name_says_is_one_error_saying_so(tmp_path):
    """JSON lines saved as `outcomes.csv` (or `.tsv`, or a prompts file) and CSV saved as `outcomes.jsonl`: one error at
    line 1 saying what the file holds and how to name it; nothing of it is read. Before, the JSON read as a matrix whose
    prompt ids were pieces of the JSON ("prompt_id 'prompt_id:\\"p1\\"' is not in the prompts file"), a one-line JSON
    prompts.csv was "empty prompts file: no rows", and CSV named .jsonl was an error per line saying each "breaks off
    before its end (a file still being written, or cut short?)"."""
    write_prompts(tmp_path)
    rows = '{"model": "m1", "prompt_id": "p1", "correct": 1}\n{"model": "m1", "prompt_id": "p2", "correct": 0}\n'
    json_said = ("line 1 is JSON, not a {} header: the file holds JSON; name it .jsonl (one JSON object a line) or .json "
                 "(one JSON array); nothing of it is read")
    for ext in ("csv", "tsv"):
        (tmp_path / f"outcomes.{ext}").write_text(rows)
        assert errors_of(read_source(tmp_path)) == [(f"outcomes.{ext}", 1, json_said.format(ext.upper()))]
        (tmp_path / f"outcomes.{ext}").unlink()
    (tmp_path / "outcomes.jsonl").write_text("model,prompt_id,correct\nm1,p1,1\nm1,p2,0\n")
    assert errors_of(read_source(tmp_path)) == [
        ("outcomes.jsonl", 1, "line 1, 'model,prompt_id,correct', is no JSON but a header of names separated by "
                              "commas: the file seems to be CSV; name it outcomes.csv; nothing of it is read")]
    (tmp_path / "outcomes.jsonl").write_text(rows)
    (tmp_path / "prompts.jsonl").unlink()
    (tmp_path / "prompts.csv").write_text('{"prompt_id": "p1", "benchmark": "b", "text": "Q1?"}\n')
    assert errors_of(read_source(tmp_path))[0] == ("prompts.csv", 1, json_said.format("CSV"))


def test_a_raw_carriage_return_inside_a_json_line_is_one_error_at_its_line_and_later_lines_keep_their_numbers(tmp_path):
    """A raw CR inside a JSON string (a text pasted from an old Mac or a web form, the line written by hand) in a
    JSON-lines file of line-feed lines: the line is one line, rejected with one error at it saying what the character is
    and how JSON writes it, and the lines after it keep the numbers an editor shows. Before, the reader ended the line at
    the CR: "Invalid control character ... the line breaks off before its end", then "Extra data" at a line 2 the editor
    does not show, and every later error one line past its own. A file whose lines end with lone CRs still reads."""
    (tmp_path / "prompts.jsonl").write_bytes(b'{"prompt_id": "p1", "benchmark": "b", "text": "What is\r2+2?"}\n'
                                             b'{"prompt_id": "p2", "benchmark": "b", "text": "Q2?"}\n'
                                             b'{"prompt_id": "p3", "benchmark": "b", "text": "Q3?"\n')
    write_outcomes(tmp_path, "csv", [("m1", "p2", 1)])
    batch = read_source(tmp_path)
    assert [o.prompt_id for o in batch.iter_outcomes()] == ["p2"]
    assert [e[:2] for e in errors_of(batch)] == [("prompts.jsonl", 1), ("prompts.jsonl", 3)]
    assert errors_of(batch)[0][2] == ("malformed JSON line: a raw carriage return inside a string at column 55 (JSON "
                                      "writes it as \\r); the line is skipped: fix it, or export the file again with a "
                                      "JSON writer")
    (tmp_path / "prompts.jsonl").write_bytes(b'{"prompt_id": "p2", "benchmark": "b", "text": "Q2?"}\r'
                                             b'{"prompt_id": "p1", "benchmark": "b", "text": "Q1?"}\r')
    batch = read_source(tmp_path)
    assert batch.errors == [] and [o.prompt_id for o in batch.iter_outcomes()] == ["p2"]
