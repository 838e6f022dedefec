"""Real evaluation output of other harness versions (issue 17): one test group per layout. The fixtures are
written by tests/fixtures/make_format_fixtures.py from the upstream code that produces each layout."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from indexer.errors import ConfigError
from indexer.ingest import ingest
from indexer.sources import detect_format, plan_files, read_source, read_sources
from indexer.sources.rules import load_rules
from indexer.sources.scoring import py_literal

FMT = Path(__file__).parent / "fixtures" / "formats"


def means(outcomes, key=lambda o: o.benchmark):
    acc = defaultdict(list)
    for o in outcomes:
        acc[key(o)].append(o.score)
    return {k: sum(v) / len(v) for k, v in acc.items()}


def results(folder: Path, pattern: str = "results_*.json") -> dict:
    return json.loads(sorted(folder.glob(pattern))[-1].read_text())


def errs(batch):
    return [(Path(e.file).name, e.line, e.message) for e in batch.errors]


# ----------------------------------------------------------------- 1. --output_path NAME.json (harness 0.4.9+)


def test_results_file_found_by_timestamp_and_content():
    runs = FMT / "lm_eval_output_path_json" / "runs"
    assert detect_format(runs) == "lm_eval"
    (b,) = read_sources(runs)
    assert b.errors == []  # notes_<ts>.json (not a results file) is passed over without complaint
    # two models ran into one folder: each model's own run, each mean equal to its results file's aggregate
    got = means(b.outcomes, key=lambda o: o.model)
    for f in runs.glob("eval_*.json"):
        res = json.loads(f.read_text())
        assert got[res["model_name"]] == pytest.approx(res["results"]["arc_challenge"]["acc_norm,none"])
    assert sorted(got) == ["org-a/model-a", "org-b/model-b"] and len(b.outcomes) == 8
    assert {o.revision for o in b.outcomes} == {"b" * 40}


def test_results_file_named_by_output_path_in_the_hub_planner():
    ts = "2025-06-01T10-00-00.000001"
    files = [f"runs/eval_{ts}.json", f"runs/samples_arc_challenge_{ts}.jsonl", f"runs/notes_{ts}.json",
             "runs/samples_arc_challenge_2025-05-01T00-00-00.jsonl", "runs/old_2025-05-01T00-00-00.json", "README.md"]
    fmt, got = plan_files(files)
    assert fmt == "lm_eval"
    # the latest run with a results candidate, and every candidate of its timestamp (told apart by content)
    assert got == [f"runs/eval_{ts}.json", f"runs/notes_{ts}.json", f"runs/samples_arc_challenge_{ts}.jsonl"]


def test_output_path_layout_from_a_hub_repo(store, hub_server):
    repo = hub_server.root / "datasets" / "fake-org" / "output-path-runs"
    shutil.copytree(FMT / "lm_eval_output_path_json", repo)
    s = ingest("hub:fake-org/output-path-runs", store=store, fetch_metadata=False)
    assert s.errors == [] and s.sources == 1 and s.outcomes == 4  # the latest run (model-b); no orphan reported
    assert store.load_outcomes().models == ["org-b/model-b"]


def test_a_samples_file_whose_results_file_lacks_results_and_configs_is_rejected(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(FMT / "lm_eval_output_path_json" / "runs", runs)
    f = runs / "eval_2025-06-02T11-30-00.000002.json"
    f.write_text(json.dumps({"results": {}}))
    b = read_source(runs)
    # no candidate of that timestamp is a results file: each is named, and its samples are not read
    assert {name for name, _, msg in errs(b) if "no `results` and `configs` keys" in msg} == {
        f.name, "notes_2025-06-02T11-30-00.000002.json"}
    assert {o.model for o in b.outcomes} == {"org-a/model-a"}  # the other model's run is still read


# ------------------------------------------------------- 2. harness <= 0.4.6: no filter key, one record per filter


@pytest.mark.parametrize("model", ["org__one-rank", "org__two-ranks", "org__with-keys"])
def test_filters_recovered_from_the_record_order(model):
    d = FMT / "lm_eval_0.4.6_filters" / model
    res = results(d)["results"]["gsm8k"]
    for flt in ("strict-match", "flexible-extract"):
        b = read_source(d, filter=flt)
        assert b.errors == [] and len(b.outcomes) == 5
        assert means(b.outcomes)["gsm8k"] == pytest.approx(res[f"exact_match,{flt}"])
    assert read_source(d).benchmarks["gsm8k"].config["filter"] == "strict-match"
    # the two filters disagree on this run, so reading the wrong records would show
    assert res["exact_match,strict-match"] != res["exact_match,flexible-extract"]


def test_an_incomplete_old_file_is_rejected_whole(tmp_path):
    d = tmp_path / "org__one-rank"
    shutil.copytree(FMT / "lm_eval_0.4.6_filters" / "org__one-rank", d)
    f = next(d.glob("samples_*.jsonl"))
    lines = f.read_text().splitlines()
    f.write_text("\n".join(lines[:-1]) + "\n")  # the last doc's flexible-extract record is missing
    b = read_source(d)
    ((name, line, msg),) = errs(b)
    assert name == f.name and "1 to 2 records per doc" in msg and "harness <= 0.4.6" in msg and "biased" in msg
    assert b.outcomes == []


def test_old_records_whose_order_contradicts_the_aggregate_are_rejected(tmp_path):
    d = tmp_path / "org__one-rank"
    shutil.copytree(FMT / "lm_eval_0.4.6_filters" / "org__one-rank", d)
    f = next(d.glob("samples_*.jsonl"))
    lines = f.read_text().splitlines()
    f.write_text("\n".join(lines[5:] + lines[:5]) + "\n")  # the filter blocks swapped
    b = read_source(d)
    ((name, line, msg),) = errs(b)
    assert name == f.name and "the results file says" in msg and b.outcomes == []


def test_one_record_per_doc_but_two_declared_filters_is_rejected(tmp_path):
    d = tmp_path / "org__one-rank"
    shutil.copytree(FMT / "lm_eval_0.4.6_filters" / "org__one-rank", d)
    f = next(d.glob("samples_*.jsonl"))
    f.write_text("\n".join(f.read_text().splitlines()[:5]) + "\n")
    ((name, _, msg),) = errs(read_source(d))
    assert "one record per doc, but the task's config declares 2 filters" in msg


# ------------------------------------------------------------------ 3. MATH-hard: exact_match changed in 0.4.9


def test_math_hard_reads_the_strict_check_of_every_version():
    base = FMT / "lm_eval_math_versions"
    v2, v3 = read_source(base / "org__math-v2"), read_source(base / "org__math-v3")
    assert v2.errors == [] and v3.errors == []
    strict = results(base / "org__math-v3")["results"]["leaderboard_math_algebra_hard"]["exact_match_original,none"]
    lenient = results(base / "org__math-v3")["results"]["leaderboard_math_algebra_hard"]["exact_match,none"]
    assert strict != lenient
    assert means(v3.outcomes)["math_hard/algebra"] == pytest.approx(strict)
    assert [o.score for o in v2.outcomes] == [o.score for o in v3.outcomes]  # one scorer, both versions
    info2, info3 = v2.benchmarks["math_hard/algebra"], v3.benchmarks["math_hard/algebra"]
    assert (info2.metric, info3.metric) == ("exact_match", "exact_match")
    assert (info2.config["version"], info3.config["version"]) == (2.0, 3.0)
    assert info3.config["metric_key"] == "exact_match_original"


def test_math_hard_version_3_without_the_strict_check_is_rejected():
    b = read_source(FMT / "lm_eval_math_versions" / "org__math-v3-no-original")
    # every row of the task alike: one error for the file, counting the 3 rows it cost
    assert b.outcomes == [] and len(b.errors) == 1 and b.errors[0].message.startswith("3 rows of task ")
    assert all("version 3" in e.message and "harness >= 0.4.9" in e.message and "exact_match_original" in e.message
               for e in b.errors)


# ------------------------------------------------------------- 4. pairs, lists and graded per-sample metrics


def test_gold_pred_pairs_are_rejected_and_graded_acc_is_read_by_rule():
    d = FMT / "lm_eval_metric_shapes" / "org__shapes"
    b = read_source(d)
    res = results(d)["results"]
    cola = [e for e in errs(b) if e[0].startswith("samples_cola")]
    # (every row's mcc a pair: one error for the file, counting its 3 rows)
    assert len(cola) == 1 and all("(gold, pred) pair" in m and "corpus" in m for _, _, m in cola)
    assert cola[0][1] is None and cola[0][2].startswith("3 rows of task cola rejected: mcc value [1, 1] is a (gold")
    assert "cola" not in b.benchmarks
    got = means(b.outcomes)
    assert got["mrpc"] == pytest.approx(res["mrpc"]["acc,none"])  # acc, not the f1 pairs
    # truthfulqa_mc2's acc is a probability mass: graded by rule, averaged as the harness does
    assert got["truthfulqa_mc"] == pytest.approx(res["truthfulqa_mc2"]["acc,none"])
    assert b.benchmarks["truthfulqa_mc"].metric == "mc2"
    assert sorted(o.score for o in b.outcomes if o.benchmark == "truthfulqa_mc") == [0.375, 0.8125]


def test_a_pair_metric_asked_for_is_rejected_and_scored_when_a_rule_says_how(tmp_path):
    d = FMT / "lm_eval_metric_shapes" / "org__shapes"
    f1 = [e for e in errs(read_source(d, metric="f1")) if e[0].startswith("samples_mrpc")]
    assert len(f1) == 1 and f1[0][2].startswith("4 rows of task mrpc rejected: f1 value [1, 1] is a (gold, pred) pair")
    # a class-0 prediction that is right must not score 0 (the old average of the pair did)
    rules = tmp_path / "rules.toml"
    base = (Path(__file__).parents[1] / "indexer" / "sources" / "rules.toml").read_text()
    rules.write_text(base.replace("\n[[task]]\n", '\n[[task]]\nmatch = "cola"\nbenchmark = "cola"\nmetric = "mcc"\n'
                                  'pair_score = "match"\n\n[[task]]\n', 1))
    b = read_source(d, rules=load_rules(rules))
    assert [o.score for o in b.outcomes if o.benchmark == "cola"] == [1.0, 1.0, 0.0]


def test_lists_are_averaged_only_for_inst_level_metrics():
    from indexer.sources.scoring import metric_value

    rule = load_rules().for_task("leaderboard_ifeval")
    assert metric_value([True, False, True, True], "inst_level_strict_acc", rule) == (0.75, None)
    score, why = metric_value([1, 0], "acc", rule)
    assert score is None and "is a list" in why


# ------------------------------------------------------------------------- 5. a question after its passage


def test_question_text_keeps_its_context():
    b = read_source(FMT / "lm_eval_context" / "org__context")
    assert b.errors == []
    texts = {o.benchmark: o.text for o in b.outcomes}
    assert texts["asdiv"] == "Mary put 3 apples and 5 pears in a basket.\n\nHow many apples are in the basket?"
    assert texts["boolq"] == "The Pacific is the largest ocean on Earth.\n\nis the pacific the largest ocean\nA. no\nB. yes"
    # race: no question field beside the article: the rendered prompt from where the article starts
    assert texts["race"].startswith("Tom went to the park on Sunday.") and texts["race"].endswith("What did he see there?")


# ----------------------------------------------------------------------------------- 6. current lighteval


def test_lighteval_output_folder_with_doc_and_metric_columns():
    out = FMT / "lighteval_0.13_output"
    assert detect_format(out) == "lighteval"
    (b,) = read_sources(out)
    assert b.errors == []
    assert {k: (v.metric, v.num_fewshot, v.source_task) for k, v in b.benchmarks.items()} == {
        "mmlu/anatomy": ("acc", 5, "mmlu:anatomy|5"), "winogrande": ("acc", 5, "winogrande|5")}
    assert {o.model for o in b.outcomes} == {"org/light-model"}
    anatomy = [o for o in b.outcomes if o.benchmark == "mmlu/anatomy"]
    assert anatomy[0].text == "Question: Which bone protects the brain?\nA. Skull\nB. Femur\nC. Rib\nD. Tibia\nAnswer:"
    assert [o.score for o in anatomy] == [1.0, 0.0]
    # a key per task, the task as the file names it (or a pattern of such names); a TASK naming none is refused
    (b,) = read_sources(out, metric=["winogrande|5=acc", "mmlu:*=acc"])
    assert b.errors == [] and {k: v.metric for k, v in b.benchmarks.items()} == {"mmlu/anatomy": "acc", "winogrande": "acc"}
    (b,) = read_sources(out, metric="mmlu:anatomy|5=em")
    assert {o.benchmark for o in b.outcomes} == {"winogrande"} and "'em'" in b.errors[0].message
    # (both rows of the task alike: one error for the file, counting them)
    assert len(b.errors) == 1 and b.errors[0].message.startswith("2 rows of task mmlu:anatomy|5 rejected: metric 'em'")
    with pytest.raises(ConfigError, match=r"no task 'arc\|25' in .* \(its tasks: mmlu:anatomy\|5, winogrande\|5\)"):
        list(read_sources(out, metric="arc|25=acc"))


def test_lighteval_tasks_that_all_have_one_key_are_advised_the_plain_metric_too():
    """lighteval details read with a key none of its tasks has (`--metric em`): each task's error advises its own
    `TASK=KEY` and also the plain key every task has with 0/1 values (`acc`), which reads them all."""
    (b,) = read_sources(FMT / "lighteval_0.13_output", metric="em")
    assert len(b.errors) == 2 and all("(or metric='acc' for every task: each task of this folder has acc" in e.message
                                      for e in b.errors), b.errors


def test_a_lighteval_metric_key_holding_an_equals_sign_is_advised_and_read_as_star_equals_key(tmp_path):
    """lighteval 0.11+ names a parameterised metric with its parameters (`pass@k:k=1&n=1`, the per-sample key of its
    aime24/aime25 tasks, lighteval src/lighteval/metrics/metrics.py). Two tasks scored so: each error advises the
    plain key for every task as `metric='*=pass@k:k=1&n=1'`, which reads both; the key given plain (split at its first
    `=` as task `pass@k:k`) is refused with an error saying to give it so. Before, the advice was the plain
    `metric='pass@k:k=1&n=1'`, which that refusal answered with "no task 'pass@k:k'" alone."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ts, model, key = "2026-04-01T10-00-00.000001", "acme/light-aime", "pass@k:k=1&n=1"
    out = tmp_path / "light-out"
    (out / "results" / model).mkdir(parents=True)
    (out / "results" / model / f"results_{ts}.json").write_text(json.dumps({"config_general": {"model_name": model}}))
    for task in ("aime24|0", "aime25|0"):
        rows = [{"doc": {"query": f"{task} problem {i}: find 2^{i + 10} mod 7.", "choices": [str(i)], "gold_index": [0],
                         "instruction": None, "task_name": task, "id": str(i)},
                 "model_response": {"input": "...", "text": ["\\boxed{1}"]}, "metric": {key: float(i == 0)}}
                for i in range(2)]
        f = out / "details" / model / ts / f"details_{task}_{ts}.parquet"
        f.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows), f)
    (b,) = read_sources(out)
    assert len(b.errors) == 2 and all(f"(or metric='*={key}' for every task" in e.message for e in b.errors), b.errors
    (b,) = read_sources(out, metric=f"*={key}")
    assert b.errors == [] and sorted(o.score for o in b.outcomes) == [0.0, 0.0, 1.0, 1.0], b.errors
    with pytest.raises(ConfigError, match=r"no task 'pass@k:k' in .*give it as metric='\*=pass@k:k=1&n=1' to read "
                                          r"every task with it"):
        list(read_sources(out, metric=key))


def test_lighteval_extractive_match_is_read_by_default_as_a_0_1_outcome(tmp_path):
    """lighteval's gsm8k (its `lighteval` suite, and the one gsm8k of >= 0.12.1) and its math tasks without a rule here
    (math_500, aime, gpqa:diamond) score each sample by `extractive_match` (`Metrics.expr_gold_metric`,
    src/lighteval/metrics/metrics.py: 1.0 when an answer extracted from the generation equals the gold one, else 0.0).
    It is read by default as a 0/1 outcome: gsm8k's rows into benchmark gsm8k (its recorded metric exact_match, the key
    read kept in the benchmark's config), math_500's by the default metric preference; a value neither 0 nor 1 is an
    error. Before, every row was rejected: gsm8k's as "metric 'exact_match' or 'acc' ... is missing from the sample (it
    has: extractive_match)", math_500's as "unknown metric"."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ts, model = "2026-04-01T10-00-00.000001", "acme/light-gsm"
    out = tmp_path / "light-out"
    (out / "results" / model).mkdir(parents=True)
    (out / "results" / model / f"results_{ts}.json").write_text(json.dumps({"config_general": {"model_name": model}}))
    for task, values in (("gsm8k|5", [1.0, 0.0]), ("math_500|0", [0.0, 1.0, 0.5])):
        rows = [{"doc": {"query": f"Question: {task} problem {i}: what is {i} + 2?\nAnswer:", "choices": [f" #### {i + 2}"],
                         "gold_index": 0, "instruction": None, "task_name": task, "id": str(i)},
                 "model_response": {"input": "...", "text": [f"... #### {i + 2}"]}, "metric": {"extractive_match": v}}
                for i, v in enumerate(values)]
        f = out / "details" / model / ts / f"details_{task}_{ts}.parquet"
        f.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows), f)
    (b,) = read_sources(out)
    assert sorted((o.benchmark, o.score) for o in b.outcomes) == [
        ("gsm8k", 0.0), ("gsm8k", 1.0), ("math_500", 0.0), ("math_500", 1.0)], b.errors
    assert (b.benchmarks["gsm8k"].metric, b.benchmarks["gsm8k"].config) == ("exact_match", {"metric_key": "extractive_match"})
    assert b.benchmarks["math_500"].metric == "extractive_match"
    ((name, line, msg),) = errs(b)
    assert (name, line) == (f"details_math_500|0_{ts}.parquet", 3) and "extractive_match value 0.5 is not binary" in msg


def test_a_lighteval_row_whose_metric_struct_lacks_a_key_is_read_as_a_row_without_it(tmp_path):
    """lighteval 0.11+ details whose rows of one task carry different metric keys (`{"acc": 1.0}`, then
    `{"acc_norm": 0.0}`): the Parquet `metric` struct column has a field for each key and fills it with null in the
    rows without it. Such a row is read as one without the key, as the same rows written as JSON cells are: the key is
    said missing from the row (naming the keys it has), and the row is read when another key is asked for. Before, it
    was rejected as "acc value None is not a number"."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ts, model, task = "2026-04-01T10-00-00.000001", "acme/light-mixed", "winogrande|5"

    def details(out: Path, cell) -> Path:
        (out / "results" / model).mkdir(parents=True)
        (out / "results" / model / f"results_{ts}.json").write_text(json.dumps({"config_general": {"model_name": model}}))
        rows = [{"doc": {"query": f"Sentence {i}: the trophy does not fit in the _.", "choices": ["a", "b"],
                         "gold_index": [0], "instruction": None, "task_name": task, "id": str(i)},
                 "model_response": {"input": "...", "text": ["a"]}, "metric": cell(m)}
                for i, m in enumerate([{"acc": 1.0}, {"acc_norm": 0.0}, {"acc": 0.0}])]
        f = out / "details" / model / ts / f"details_{task}_{ts}.parquet"
        f.parent.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows), f)
        return f

    f = details(tmp_path / "struct", dict)
    assert pq.read_table(f).to_pylist()[1]["metric"] == {"acc": None, "acc_norm": 0.0}  # (the null filled in)
    details(tmp_path / "json", json.dumps)
    for metric, scores, lines, has in ((None, [0.0, 1.0], [2], "acc_norm"), ("acc_norm", [0.0], [1, 3], "acc")):
        (b,) = read_sources(tmp_path / "struct", metric=metric)
        assert sorted(o.score for o in b.outcomes) == scores and [e.line for e in b.errors] == lines, b.errors
        assert all("is missing from the sample" in e.message and f"(it has: {has})" in e.message
                   for e in b.errors), b.errors
        (j,) = read_sources(tmp_path / "json", metric=metric)
        assert [(o.text, o.score) for o in b.outcomes] == [(o.text, o.score) for o in j.outcomes]
        assert [(e.line, e.message) for e in b.errors] == [(e.line, e.message) for e in j.errors]


def test_a_lighteval_task_without_a_rule_is_read_with_one_key_whatever_its_cells(tmp_path):
    """lighteval details of a task without a rule (`mytask|0`) whose rows carry `acc`, `em`, `acc`, as a Parquet struct
    (the null filled in where a row lacks a key) and as JSON cells: both read rows 1 and 3 with acc and reject row 2,
    naming which rows have which key and advising `mytask|0=em`; rows of keys taskspace does not know (`score_a`,
    `score_b`) are one error naming the rows of each. Before, row 2 was read with em beside acc without a word, and each
    unknown-key row advised its own key."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ts, model, task = "2026-04-01T10-00-00.000001", "acme/light-keys", "mytask|0"

    def details(out: Path, cells) -> Path:
        (out / "results" / model).mkdir(parents=True)
        (out / "results" / model / f"results_{ts}.json").write_text(json.dumps({"config_general": {"model_name": model}}))
        rows = [{"doc": {"query": f"Question {i}: what is {i} + 2?", "choices": ["x"], "gold_index": [0],
                         "instruction": None, "task_name": task, "id": str(i)},
                 "model_response": {"input": "...", "text": ["x"]}, "metric": cell} for i, cell in enumerate(cells)]
        f = out / "details" / model / ts / f"details_{task}_{ts}.parquet"
        f.parent.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows), f)
        return out

    known = [{"acc": 1.0}, {"em": 0.0}, {"acc": 0.0}]
    for out in (details(tmp_path / "struct", known), details(tmp_path / "json", [json.dumps(c) for c in known])):
        (b,) = read_sources(out)
        assert sorted(o.score for o in b.outcomes) == [0.0, 1.0] and b.benchmarks["mytask"].metric == "acc"
        ((name, line, msg),) = errs(b)
        assert line == 2 and "read with one key, the first of the default preference they have (acc), and they carry " \
            "different keys: acc (rows 1, 3), em (row 2); pass metric='mytask|0=em' to read the rows having em" in msg, msg
    (b,) = read_sources(details(tmp_path / "unknown", [{"score_a": 1.0}, {"score_b": 0.0}, {"score_a": 0.0}]))
    ((name, line, msg),) = errs(b)
    assert line is None and msg.startswith("3 rows of task mytask|0 rejected: unknown metric") and \
        "score_a (rows 1, 3), score_b (row 2); none in every row" in msg, msg


def test_an_empty_lighteval_details_file_is_an_error_naming_it(tmp_path):
    """A lighteval details file of no rows (a run that saved no sample of a task, a copy cut to its schema): an error
    naming the file, saying what to do; the other tasks' files are read. Before, nothing was said of the file: only
    when it was the model's only one did the ingest warn "<folder>: no outcomes to store", naming no file."""
    import pyarrow.parquet as pq

    out = tmp_path / "light"
    shutil.copytree(FMT / "lighteval_0.13_output", out)
    f = next(out.rglob("details_mmlu:anatomy|5_*.parquet"))
    t = pq.read_table(f)
    pq.write_table(t.slice(0, 0), f)
    (b,) = read_sources(out)
    assert [(Path(e.file).name, e.line) for e in b.errors] == [(f.name, None)], b.errors
    assert b.errors[0].message == ("empty details file: no rows (the run saved no sample of this task); run the task "
                                   "again, or remove the file")
    assert set(b.benchmarks) == {"winogrande"}


def test_lighteval_python_repr_cells_are_read_as_literals_only():
    d = FMT / "lighteval_0.7_str_cells" / "details_org__str-model"
    b = read_source(d)
    assert [o.score for o in b.outcomes] == [1.0, 1.0, 0.0]  # acc_norm, from "{'acc': 1, 'acc_norm': 1}"
    ((name, line, msg),) = errs(b)
    assert line == 4 and "Python-literal" in msg and "lighteval <= 0.7" in msg  # the __import__(...) cell
    # (the cell quoted: before, it was not shown)
    assert msg.startswith("metrics \"{'acc': 1, 'acc_norm': __import__('os').getpid()}\" is not a dict"), msg
    assert py_literal("{'acc': np.float64(1.0), 'x': (1, 'a')}") == {"acc": 1.0, "x": (1, "a")}
    with pytest.raises(ValueError):
        py_literal("__import__('os').system('true')")


# ------------------------------------------------------------------------------ 7. v1 shot counts, preamble


def test_v1_runs_at_another_shot_count_are_skipped_and_truthfulqa_preamble_stripped():
    b = read_source(FMT / "leaderboard_v1_shots" / "details_org__v1-shots")
    assert b.errors == []
    assert b.benchmarks["winogrande"].num_fewshot == 5 and b.skipped == 3  # the |0 run's 3 rows
    assert [o.score for o in b.outcomes if o.benchmark == "winogrande"] == [1.0, 0.0, 1.0]
    tqa = [o.text for o in b.outcomes if o.benchmark == "truthfulqa_mc"]
    assert tqa == ["Q: Can pigs fly?\nA:", "Q: What happens if you swallow gum?\nA:"]


def test_the_hub_planner_fetches_only_the_shot_count_read():
    files = ["results_2023-11-01T10-00-00.json", "2023-10-01T10-00-00/details_harness|winogrande|0_2023-10-01T10-00-00.parquet",
             "2023-11-01T10-00-00/details_harness|winogrande|5_2023-11-01T10-00-00.parquet",
             "2023-09-01T10-00-00/details_harness|gsm8k|0_2023-09-01T10-00-00.parquet",
             "2023-09-01T10-00-00/details_harness|gsm8k|3_2023-09-01T10-00-00.parquet"]
    fmt, got = plan_files(files)
    assert fmt == "lighteval"
    assert got == ["2023-09-01T10-00-00/details_harness|gsm8k|3_2023-09-01T10-00-00.parquet",  # no standard: most shots
                   "2023-11-01T10-00-00/details_harness|winogrande|5_2023-11-01T10-00-00.parquet",
                   "results_2023-11-01T10-00-00.json"]


# ---------------------------------------------------------------------- 8. one name and one metric per benchmark


@pytest.mark.parametrize("task,bench,metric", [
    ("arc_challenge", "arc_challenge", "acc_norm"),
    ("leaderboard_arc_challenge", "arc_challenge", "acc_norm"),
    ("harness|arc:challenge|25", "arc_challenge", "acc_norm"),
    ("lighteval|arc:challenge|25", "arc_challenge", "acc_norm"),
    ("arc:challenge|25", "arc_challenge", "acc_norm"),
    ("hellaswag", "hellaswag", "acc_norm"),
    ("harness|hellaswag|10", "hellaswag", "acc_norm"),
    ("mmlu_anatomy", "mmlu/anatomy", "acc"),
    ("harness|hendrycksTest-anatomy|5", "mmlu/anatomy", "acc"),
    ("mmlu:anatomy|5", "mmlu/anatomy", "acc"),
    ("mmlu_pro_law", "mmlu_pro/law", "acc"),
    ("truthfulqa_mc2", "truthfulqa_mc", "mc2"),
    ("harness|truthfulqa:mc|0", "truthfulqa_mc", "mc2"),
    ("gsm8k", "gsm8k", "exact_match"),
    ("harness|gsm8k|5", "gsm8k", "exact_match"),
    ("mmlu_flan_n_shot_generative_anatomy", "mmlu_flan_n_shot_generative_anatomy", None),
])
def test_one_benchmark_name_and_metric_whatever_wrote_it(task, bench, metric):
    r = load_rules().for_task(task)
    assert (r.benchmark, r.metric) == (bench, metric)


def test_leaderboard_mmlu_pro_and_lm_eval_mmlu_pro_meet_in_one_benchmark():
    a, b = load_rules().for_task("leaderboard_mmlu_pro"), load_rules().for_task("mmlu_pro_computer_science")
    assert a.benchmark_for({"category": "computer science"}) == b.benchmark_for({"category": "computer science"}) == "mmlu_pro/computer_science"
    assert a.metric == b.metric == "acc"


def test_writers_of_arc_challenge_meet_in_one_stored_benchmark(store):
    ingest(str(FMT / "lm_eval_output_path_json"), store=store, fetch_metadata=False)
    ingest(str(FMT / "lighteval_0.7_str_cells"), store=store, fetch_metadata=False)
    m = store.load_outcomes()
    assert set(m.benchmarks) == {"arc_challenge"}
    assert sorted(m.models) == ["org-a/model-a", "org-b/model-b", "org/str-model"]


def test_a_writer_without_the_benchmarks_metric_is_rejected_with_the_reason(tmp_path):
    import pyarrow.parquet as pq

    d = tmp_path / "details_org__m"
    shutil.copytree(FMT / "lighteval_0.13_output" / "details" / "org" / "light-model", d)
    f = next(d.glob("*/details_winogrande*.parquet"))
    rows = pq.read_table(f).to_pylist()
    for r in rows:
        r["metric"] = {"em": 1.0}
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist(rows), f.with_name(f.name.replace("winogrande|5", "arc:challenge|25")))
    f.unlink()
    b = read_source(d, model="org/m")
    (e,) = b.errors
    assert "metric 'acc_norm'" in e.message and "benchmark arc_challenge" in e.message and "metric=" in e.message  # the library's parameter


# ----------------------------------------------------------------- 9. June-2024 leaderboard: the array variant


def test_leaderboard_json_array_variant_is_still_read():
    d = FMT / "leaderboard_v2_json_array"
    b = read_source(d)
    assert b.errors == [] and [o.score for o in b.outcomes] == [1.0, 0.0]
    assert b.benchmarks["bbh/boolean_expressions"].num_fewshot == 3


# ------------------------------------------------------------------ 10. GPQA's options shuffled on every run


def test_gpqa_prompt_identity_does_not_depend_on_option_order():
    d = FMT / "leaderboard_v2_gpqa_shuffled"
    orders = [[tuple(json.loads(line)["doc"][f"choice{k}"] for k in range(1, 5))
               for line in next((d / m).glob("samples_*")).read_text().splitlines()]
              for m in ("org__gpqa-a", "org__gpqa-b")]
    assert orders[0] != orders[1]  # the two runs lettered the options differently
    b = read_source(d)
    assert len({o.prompt_hash for o in b.outcomes}) == 2 and len(b.outcomes) == 4
    (text,) = {o.text for o in b.outcomes if o.prompt_id.endswith(":0")}
    assert text == "Which particle mediates the electromagnetic force?\nA. Gluon\nB. Graviton\nC. Photon\nD. W boson"


def test_read_sources_names_a_path_that_is_no_path():
    """`indexer.sources.read_sources(None)` (bytes, a number; with or without a format): the InputError naming `path`;
    before, Python's TypeError ("expected str, bytes or os.PathLike object, not NoneType")."""
    from indexer.errors import InputError
    from indexer.sources import read_source, read_sources

    for bad in (None, b"/data/results", 3):
        for fmt in (None, "table"):
            with pytest.raises(InputError, match="^path must be a path") as err:
                list(read_sources(bad, fmt))
            assert err.value.item == "path" and type(bad).__name__ in str(err.value)
        with pytest.raises(InputError, match="^path must be a path"):
            read_source(bad)
