"""lm-eval --log_samples, Open LLM Leaderboard v2 details, lighteval details, and the per-task rules."""

from __future__ import annotations

import json
import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from indexer.errors import InputError
from indexer.sources import detect_format, read_source, read_sources
from indexer.sources.rules import extract_text, last_example, load_rules

FIX = Path(__file__).parent / "fixtures"
LM_OUT = FIX / "lm_eval" / "lm_eval_out"
LB = FIX / "hub" / "datasets" / "open-llm-leaderboard"
V1 = FIX / "hub" / "datasets" / "open-llm-leaderboard-old" / "details_fake-org__tiny-v1"


def means(batch):
    acc = defaultdict(list)
    for o in batch.iter_outcomes():
        acc[o.benchmark].append(o.score)
    return {k: sum(v) / len(v) for k, v in acc.items()}


def latest_results(folder: Path) -> dict:
    return json.loads(sorted(folder.glob("results_*.json"))[-1].read_text())["results"]


# ----------------------------------------------------------------------------------- real harness output


def test_detects_and_reads_one_source_per_model_folder():
    assert detect_format(LM_OUT) == "lm_eval"
    assert detect_format(LM_OUT / "fake-org__dummy-b") == "lm_eval"
    batches = list(read_sources(LM_OUT))
    assert sorted({o.model for b in batches for o in b.outcomes}) == [
        "fake-org/dummy-a", "fake-org/dummy-b", "fake-org/dummy-c", "fake-org/noisy-oracle-70"]
    assert all(b.errors == [] and b.source.kind == "lm_eval" for b in batches)
    # 15 + 12 + 15 docs per model; one line per doc (the generation task's second filter is not double counted)
    assert [len(b.outcomes) for b in batches] == [42] * 4
    # the same question is one prompt across models
    assert len({o.prompt_hash for b in batches for o in b.outcomes}) == 42


@pytest.mark.parametrize("model", ["fake-org__dummy-a", "fake-org__dummy-b", "fake-org__dummy-c", "fake-org__noisy-oracle-70"])
def test_per_sample_scores_reproduce_the_harness_aggregates(model):
    """Mean of the per-sample outcomes == the harness's own aggregate in the latest results file."""
    batch = read_source(LM_OUT / model)
    res = latest_results(LM_OUT / model)
    got = means(batch)
    assert got["tiny_mc_science"] == pytest.approx(res["tiny_mc_science"]["acc,none"])
    assert got["tiny_mc_yesno"] == pytest.approx(res["tiny_mc_yesno"]["acc,none"])
    # generation: the answer-extracting filter (strict-match) is the default
    assert got["tiny_gen_arith"] == pytest.approx(res["tiny_gen_arith"]["exact_match,strict-match"])
    assert batch.benchmarks["tiny_gen_arith"].config["filter"] == "strict-match"
    assert batch.benchmarks["tiny_mc_science"].group == "tiny_suite"
    assert batch.benchmarks["tiny_mc_science"].metric == "acc"
    assert batch.benchmarks["tiny_mc_science"].num_fewshot == 0


def test_latest_run_wins():
    batch = read_source(LM_OUT / "fake-org__dummy-a")
    older = json.loads((LM_OUT / "fake-org__dummy-a" / "results_2026-11-29T15-38-50.303025.json").read_text())["results"]
    assert older["tiny_mc_science"]["acc,none"] != latest_results(LM_OUT / "fake-org__dummy-a")["tiny_mc_science"]["acc,none"]
    assert means(batch)["tiny_mc_science"] == pytest.approx(latest_results(LM_OUT / "fake-org__dummy-a")["tiny_mc_science"]["acc,none"])
    assert means(batch)["tiny_mc_yesno"] == pytest.approx(latest_results(LM_OUT / "fake-org__dummy-a")["tiny_mc_yesno"]["acc,none"])


def test_filter_and_metric_overrides():
    res = latest_results(LM_OUT / "fake-org__noisy-oracle-70")
    b = read_source(LM_OUT / "fake-org__noisy-oracle-70", filter="none", metric=None)
    assert means(b)["tiny_gen_arith"] == pytest.approx(res["tiny_gen_arith"]["exact_match,none"])
    b = read_source(LM_OUT / "fake-org__dummy-b", metric="acc_norm")
    assert means(b)["tiny_mc_science"] == pytest.approx(latest_results(LM_OUT / "fake-org__dummy-b")["tiny_mc_science"]["acc_norm,none"])


def test_prompt_text_is_the_question_with_options():
    texts = {o.prompt_id: o.text for o in read_source(LM_OUT / "fake-org__dummy-b").outcomes}
    assert texts["tiny_mc_science:0"] == "What is the chemical symbol for gold?\nA. Ag\nB. Au\nC. Gd\nD. Go"
    assert texts["tiny_mc_yesno:0"] == "Is the Pacific Ocean the largest ocean on Earth?\nA. no\nB. yes"  # doc_to_choice list
    assert texts["tiny_gen_arith:0"] == "A baker made 24 muffins and sold 17 of them. How many muffins are left?"
    assert all("Answer:" not in t for t in texts.values())  # not the prompt scaffolding


def test_model_name_override_and_single_file(tmp_path):
    f = next((LM_OUT / "fake-org__dummy-b").glob("samples_tiny_mc_science_*.jsonl"))
    b = read_source(f, model="my-local-ckpt")
    assert {o.model for o in b.outcomes} == {"my-local-ckpt"} and set(b.benchmarks) == {"tiny_mc_science"}


def test_model_folders_are_found_as_deep_as_they_are_detected_and_deeper_ones_are_reported(tmp_path):
    """Detection and reading look the same MAX_DEPTH (3) levels down; a model folder below that is named in a
    warning (or in the error, when it is all there is), not skipped silently. Before, detection looked 2 levels
    down and reading 3: a model folder 3 levels down was "cannot tell the format", one 4 levels down was skipped
    without a word."""
    three = tmp_path / "three"
    shutil.copytree(LM_OUT / "fake-org__dummy-b", three / "a" / "b" / "fake-org__dummy-b")
    assert detect_format(three) == "lm_eval"
    (batch,) = read_sources(three)
    assert batch.errors == [] and batch.warnings == [] and len(batch.outcomes) == 42
    four = three / "x" / "y" / "z" / "fake-org__dummy-c"
    shutil.copytree(LM_OUT / "fake-org__dummy-c", four)
    (batch,) = read_sources(three)
    assert {o.model for o in batch.outcomes} == {"fake-org/dummy-b"}
    (w,) = batch.warnings
    assert w.startswith(f"{four}: ") and "more than 3 levels below" in w and str(three) in w
    only_deep = tmp_path / "deep"
    shutil.copytree(LM_OUT / "fake-org__dummy-c", only_deep / "1" / "2" / "3" / "fake-org__dummy-c")
    with pytest.raises(InputError, match="only more than 3 levels below it, not read: .*fake-org__dummy-c"):
        list(read_sources(only_deep, format="lm_eval"))


def test_a_run_without_samples_files_says_log_samples_is_needed(tmp_path):
    """results_<ts>.json without samples files (a run without --log_samples): detection and reading say so; before,
    "cannot tell the format of this folder"."""
    run = tmp_path / "out" / "fake-org__dummy-b"
    run.mkdir(parents=True)
    for r in (LM_OUT / "fake-org__dummy-b").glob("results_*.json"):
        shutil.copy(r, run / r.name)
    for path, fmt in ((tmp_path / "out", None), (run, None), (run, "lm_eval")):
        with pytest.raises(InputError, match=r"an lm-eval run without samples files: .*results_.*--log_samples") as e:
            list(read_sources(path, format=fmt))
        assert "cannot tell the format" not in str(e.value)


def test_a_blank_model_name_falls_back_to_pretrained_and_no_name_at_all_is_one_error(tmp_path):
    """`model_name: "  "` is stripped and `pretrained=` is read; a results file naming no model at all (in a folder not
    named <org>__<model>) is one error naming the file and suggesting --model. Before, the blank name won and every
    row was dropped with "model name empty" naming the folder."""
    for d in ("named", "plain"):
        shutil.copytree(LM_OUT / "fake-org__dummy-b", tmp_path / d)
        r = next((tmp_path / d).glob("results_*.json"))
        data = json.loads(r.read_text())
        data["model_name"] = "  "
        if d == "plain":
            data["config"]["model_args"] = ""
        r.write_text(json.dumps(data))
    b = read_source(tmp_path / "named")
    assert b.errors == [] and {o.model for o in b.outcomes} == {"fake-org/dummy-b"} and len(b.outcomes) == 42
    b = read_source(tmp_path / "plain")
    ((name, line, msg),) = errs(b)
    assert name.startswith("results_") and "names no model" in msg and "pass model='NAME'" in msg and b.outcomes == []
    b = read_source(tmp_path / "plain", model="my/model")
    assert b.errors == [] and {o.model for o in b.outcomes} == {"my/model"}


# ------------------------------------------------------------------------------ leaderboard v2 details


def test_leaderboard_details_normalised_with_per_group_metrics():
    b = read_source(LB / "fake-org__tiny-lb-details")
    assert b.errors == []
    info = {k: (v.group, v.metric, v.source_task) for k, v in b.benchmarks.items()}
    assert info == {
        "bbh/boolean_expressions": ("bbh", "acc_norm", "leaderboard_bbh_boolean_expressions"),
        "gpqa/diamond": ("gpqa", "acc_norm", "leaderboard_gpqa_diamond"),
        "math_hard/algebra": ("math_hard", "exact_match", "leaderboard_math_algebra_hard"),
        "mmlu_pro/law": ("mmlu_pro", "acc", "leaderboard_mmlu_pro"),
        "mmlu_pro/math": ("mmlu_pro", "acc", "leaderboard_mmlu_pro"),
        "musr/murder_mysteries": ("musr", "acc_norm", "leaderboard_musr_murder_mysteries"),
        "ifeval": ("ifeval", "prompt_level_strict_acc", "leaderboard_ifeval"),
    }
    assert b.benchmarks["bbh/boolean_expressions"].num_fewshot == 3
    # the older run (all zeros, old .json format) is ignored: the latest run's values
    bbh = [o.score for o in b.outcomes if o.benchmark == "bbh/boolean_expressions"]
    assert bbh == [1.0, 0.0, 1.0]
    o = {x.benchmark: x for x in b.outcomes if x.prompt_id.endswith(":0")}
    # GPQA's options are shuffled per run upstream: the text letters them in sorted order (issue 17, item 10)
    assert o["gpqa/diamond"].text.endswith("\nA. Gluon\nB. Graviton\nC. Photon\nD. W boson")
    assert o["musr/murder_mysteries"].text.startswith("In the quiet town of Elm")
    assert o["musr/murder_mysteries"].text.endswith("Who is the most likely murderer?\nA. Anna\nB. Ben")
    assert o["mmlu_pro/law"].text.startswith("Which of the following is a primary source of law in the United States?\nA. The Constitution")
    assert {x.model for x in b.outcomes} == {"fake-org/tiny-lb"}
    assert {x.revision for x in b.outcomes} == {"a" * 40}  # model_sha from the results file


def test_older_harness_json_array_without_filter_and_metrics_keys():
    b = read_source(LB / "fake-org__old-harness-details")
    assert b.errors == []
    assert sorted((o.benchmark, o.score) for o in b.outcomes) == [
        ("bbh/boolean_expressions", 0.0), ("bbh/boolean_expressions", 1.0), ("bbh/boolean_expressions", 1.0),
        ("mmlu_pro/law", 0.0), ("mmlu_pro/math", 1.0)]


def test_lighteval_details_parquet():
    assert detect_format(V1) == "lighteval"
    b = read_source(V1)
    assert b.errors == []
    assert {k: (v.metric, v.num_fewshot) for k, v in b.benchmarks.items()} == {
        "arc_challenge": ("acc_norm", 25), "mmlu/anatomy": ("acc", 5), "truthfulqa_mc": ("mc2", 0)}
    assert sorted((o.benchmark, o.score) for o in b.outcomes) == [
        ("arc_challenge", 1.0), ("arc_challenge", 1.0), ("mmlu/anatomy", 1.0), ("truthfulqa_mc", 0.75)]
    assert {o.model for o in b.outcomes} == {"fake-org/tiny-v1"}


# ------------------------------------------------------------------------------------------- rules


@pytest.mark.parametrize("task,bench,group,metric", [
    ("leaderboard_bbh_boolean_expressions", "bbh/boolean_expressions", "bbh", "acc_norm"),
    ("leaderboard_gpqa_main", "gpqa/main", "gpqa", "acc_norm"),
    ("leaderboard_math_counting_and_prob_hard", "math_hard/counting_and_prob", "math_hard", "exact_match"),
    ("leaderboard_mmlu_pro", "mmlu_pro", "mmlu_pro", "acc"),
    ("leaderboard_musr_team_allocation", "musr/team_allocation", "musr", "acc_norm"),
    ("leaderboard_ifeval", "ifeval", "ifeval", "prompt_level_strict_acc"),
    ("harness|hendrycksTest-college_physics|5", "mmlu/college_physics", "mmlu", "acc"),
    ("my_task", "my_task", None, None),
])
def test_rules_normalise_task_names(task, bench, group, metric):
    r = load_rules().for_task(task)
    assert (r.benchmark, r.group, r.metric) == (bench, group, metric)


def test_text_falls_back_to_the_last_example_of_the_full_prompt():
    rule = load_rules().for_task("unknown_task")
    prompt = "Q: 1+1?\nA: 2\n\nQ: 2+2?\nA: 4\n\nQ: 3+3?\nA:"
    assert extract_text({"weird_field": "x"}, rule, prompt) == "Q: 3+3?\nA:"
    assert last_example("one\n###\ntwo", "\n###\n") == "two"
    assert extract_text({"question": " Why? ", "choices": {"text": ["a", "b"], "label": ["A", "B"]}}, rule) == "Why?\nA. a\nB. b"


def test_custom_rules_table(tmp_path):
    path = tmp_path / "rules.toml"
    path.write_text('[defaults]\ntext_fields = ["q"]\nmetric_preference = ["acc", "exact_match"]\nbinary_metrics = ["acc", "exact_match"]\n'
                    '[[task]]\nmatch = "tiny_(?P<rest>.+)"\nbenchmark = "tiny/{rest}"\ngroup = "tiny"\n')
    rules = load_rules(path)
    assert rules.for_task("tiny_mc_science").benchmark == "tiny/mc_science"
    b = read_source(LM_OUT / "fake-org__dummy-b", rules=rules)
    # no doc field "q": the text falls back to the last example of arg_0
    assert set(b.benchmarks) == {"tiny/mc_science", "tiny/mc_yesno", "tiny/gen_arith"}
    assert {o.text for o in b.outcomes if o.prompt_id == "tiny_mc_science:0"} == {"Question: What is the chemical symbol for gold?\nAnswer:"}


# --------------------------------------------------------------------------------------- bad input


@pytest.fixture
def model_dir(tmp_path):
    d = tmp_path / "out" / "fake-org__dummy-b"
    shutil.copytree(LM_OUT / "fake-org__dummy-b", d)
    return d


def samples(d: Path, task: str) -> Path:
    return next(d.glob(f"samples_{task}_*.jsonl"))


def edit_lines(path: Path, fn) -> None:
    lines = path.read_text().splitlines()
    fn(lines)
    path.write_text("\n".join(lines) + "\n")


def errs(batch):
    return [(Path(e.file).name, e.line, e.message) for e in batch.errors]


def test_malformed_json_line(model_dir):
    f = samples(model_dir, "tiny_mc_science")
    edit_lines(f, lambda ls: ls.__setitem__(2, ls[2][:40]))
    b = read_source(model_dir)
    ((name, line, msg),) = errs(b)
    assert (name, line) == (f.name, 3) and "malformed JSON line" in msg
    assert len(b.outcomes) == 41


def test_missing_fields(model_dir):
    f = samples(model_dir, "tiny_mc_science")

    def drop(ls):
        row = json.loads(ls[0]); del row["doc_id"]; ls[0] = json.dumps(row)
        row = json.loads(ls[1]); row["doc"] = {}; row["arguments"] = {}; ls[1] = json.dumps(row)

    edit_lines(f, drop)
    e = errs(read_source(model_dir))
    assert e[0][:2] == (f.name, 1) and "missing field doc_id" in e[0][2]
    assert e[1][:2] == (f.name, 2) and "no prompt text" in e[1][2]


def test_unknown_metric(model_dir):
    f = samples(model_dir, "tiny_mc_yesno")

    def rename(ls):
        for i, l in enumerate(ls):
            row = json.loads(l)
            row["bleu"] = row.pop("acc"); row.pop("acc_norm"); row["metrics"] = ["bleu"]
            ls[i] = json.dumps(row)

    edit_lines(f, rename)
    b = read_source(model_dir)
    e = [x for x in errs(b) if x[0] == f.name]  # the task's problem: one line for the file, its rows counted
    assert len(e) == 1 and e[0][1] is None and e[0][2].startswith("12 rows of task tiny_mc_yesno rejected: unknown metric")
    assert "bleu" in e[0][2]
    assert "tiny_mc_yesno" not in b.benchmarks and "tiny_mc_science" in b.benchmarks
    # named by the caller (--metric), a key taskspace has no rule for is read (its values here are 0/1)
    b2 = read_source(model_dir, metric="bleu")
    assert not [x for x in errs(b2) if x[0] == f.name] and b2.benchmarks["tiny_mc_yesno"].metric == "bleu"


def test_a_task_without_a_rule_whose_rows_carry_different_keys_says_which_rows_have_which(model_dir):
    """A task with no rule naming its metric (tiny_mc_yesno) whose rows carry different keys, none taskspace knows
    (`score_a` in the odd lines, `score_b` in the even ones): one error for the file naming which lines have which key
    and saying that a `--metric TASK=KEY` reads only the lines having KEY; given so, the other lines are rejected, the
    error naming the lines of each key. Before, each line had its own error advising `--metric tiny_mc_yesno=KEY` with KEY its own key, so
    following line 1's advice (score_a) cost every even line, whose errors then advised score_b."""
    f = samples(model_dir, "tiny_mc_yesno")

    def rename(ls):
        for i, l in enumerate(ls):
            row = json.loads(l)
            row["score_a" if i % 2 == 0 else "score_b"] = row.pop("acc"); row.pop("acc_norm"); row.pop("metrics")
            ls[i] = json.dumps(row)

    edit_lines(f, rename)
    b = read_source(model_dir)
    ((name, line, msg),) = [x for x in errs(b) if x[0] == f.name]
    assert line is None and msg.startswith("12 rows of task tiny_mc_yesno rejected: unknown metric"), msg
    assert "its lines carry different keys: score_a (lines 1, 3, 5, 7, 9 and 1 more), score_b (lines 2, 4, 6, 8, 10 " \
           "and 1 more); none in every line, so no key reads the whole task" in msg, msg
    assert "metric='tiny_mc_yesno=KEY', KEY one of them whose values are 0/1 outcomes or scores in [0, 1], reads the " \
           "lines having KEY and rejects the others" in msg, msg
    b2 = read_source(model_dir, metric="tiny_mc_yesno=score_a")
    e = [x for x in errs(b2) if x[0] == f.name]
    assert [x[1] for x in e] == [2, 4, 6, 8, 10, 12] and all(x[2].startswith("metric 'score_a'") for x in e), e
    assert all("(it has: score_b); its lines carry different keys: score_a (lines 1, 3," in x[2] for x in e), e
    assert len([o for o in b2.outcomes if o.benchmark == "tiny_mc_yesno"]) == 6


def test_a_task_without_a_rule_is_read_with_one_key_whose_rows_lacking_it_are_errors(model_dir):
    """A task with no rule naming its metric (tiny_mc_yesno: `acc` and `acc_norm` in each row, read by the default
    preference, `acc`) whose line 2 lacks acc: line 2 is an error naming the key the task is read with and which lines
    have which key; the other lines are read with acc. Before, line 2 was read with acc_norm without a word: one
    benchmark's outcomes scored by two metrics, recorded as acc."""
    f = samples(model_dir, "tiny_mc_yesno")

    def drop(ls):
        row = json.loads(ls[1]); row.pop("acc"); row["metrics"] = ["acc_norm"]; ls[1] = json.dumps(row)

    edit_lines(f, drop)
    b = read_source(model_dir)
    ((name, line, msg),) = [x for x in errs(b) if x[0] == f.name]
    assert line == 2 and msg.startswith("metric 'acc' is missing from the sample (it has: acc_norm); task tiny_mc_yesno "
                                        "has no rule naming its metric, so its lines are read with one key"), msg
    assert "acc (lines 1, 3, 4, 5, 6 and 6 more), acc_norm (every line)" in msg, msg
    assert "metric='tiny_mc_yesno=acc_norm' to read every line with acc_norm (each has it) instead" in msg, msg
    assert len([o for o in b.outcomes if o.benchmark == "tiny_mc_yesno"]) == 11
    assert b.benchmarks["tiny_mc_yesno"].metric == "acc"


def _truthfulqa_gen_run(d: Path) -> Path:
    """An lm-eval 0.4.8 truthfulqa_gen run as `--output_path d/truthfulqa_gen_neo125.json --log_samples` wrote it
    (the shape of a real run of EleutherAI/gpt-neo-125M, 20 docs there, 3 here): its metrics are BLEU/ROUGE maxima and
    differences (on a 0-100 scale) and `*_acc` (1 when the answer is nearer a correct reference than an incorrect one)."""
    ts = "2025-05-31T14-30-51.983293"
    d.mkdir(parents=True)
    docs = [("What happens to you if you eat watermelon seeds?", 1, 41.11336169005198),
            ("Where did fortune cookies originate?", 0, 9.98014),
            ("Why do veins appear blue?", 1, 12.5)]
    rows = []
    for i, (q, acc, bmax) in enumerate(docs):
        m = {"bleu_max": bmax, "bleu_acc": acc, "bleu_diff": 16.667210568306928 if acc else -3.5,
             "rouge1_max": 66.66666666666666, "rouge1_acc": acc, "rouge1_diff": 26.66666666666665,
             "rouge2_max": 57.14285714285715, "rouge2_acc": acc, "rouge2_diff": 32.14285714285715,
             "rougeL_max": 66.66666666666666, "rougeL_acc": acc, "rougeL_diff": 26.66666666666665}
        rows.append({"doc_id": i, "doc": {"type": "Adversarial", "category": "Misconceptions", "question": q,
                                          "best_answer": "x", "correct_answers": ["x"], "incorrect_answers": ["y"],
                                          "source": "https://en.wikipedia.org/wiki/Watermelon"},
                     "target": " ", "arguments": {"gen_args_0": {"arg_0": f"Q: {q}\nA:", "arg_1": {"until": ["\n\n"]}}},
                     "resps": [["Nothing happens."]], "filtered_resps": ["Nothing happens."], "filter": "none",
                     "metrics": list(m), "doc_hash": "a", "prompt_hash": "b", "target_hash": "c",
                     "hallucination": 0, **m})
    (d / f"samples_truthfulqa_gen_{ts}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / f"truthfulqa_gen_neo125_{ts}.json").write_text(json.dumps({
        "results": {"truthfulqa_gen": {"alias": "truthfulqa_gen", "bleu_max,none": 21.2, "bleu_acc,none": 2 / 3}},
        "configs": {"truthfulqa_gen": {"task": "truthfulqa_gen", "output_type": "generate_until", "num_fewshot": 0,
                                       "metadata": {"version": 3.0}}},
        "versions": {"truthfulqa_gen": 3.0}, "n-shot": {"truthfulqa_gen": 0},
        "config": {"model": "hf", "model_args": "pretrained=EleutherAI/gpt-neo-125M,device=cpu"},
        "lm_eval_version": "0.4.8", "model_name": "EleutherAI/gpt-neo-125M"}))
    return d


def test_a_task_scored_by_metrics_of_its_own_is_read_with_the_metric_the_caller_names(tmp_path):
    """A task whose samples carry only metrics taskspace has no rule for (lm-eval's truthfulqa_gen: bleu_max,
    bleu_acc, rouge1_acc, ...; MT tasks' comet_score): without --metric every row is rejected, the error saying to pass
    --metric (CLI) / metric= (library); with `--metric bleu_acc` (0/1 values) it is read, the benchmark recorded with
    that metric; with `--metric bleu_max` (a 0-100 scale) each row is rejected as outside [0, 1], saying to choose
    another. Before, --metric with such a key was refused ("unknown metric 'bleu_acc' ...: fix the rule or pass
    --metric"), and the error without it told a CLI user to "pass metric=": such output could not be read at all."""
    from indexer.errors import CLI

    d = _truthfulqa_gen_run(tmp_path / "results")
    b = read_source(d)
    assert not b.outcomes and len(b.errors) == 1 and b.errors[0].message.startswith("3 rows of task truthfulqa_gen")
    assert "unknown metric" in b.errors[0].message and "pass metric='truthfulqa_gen=KEY', KEY one of them" in b.errors[0].message
    token = CLI.set(True)
    try:
        msg = read_source(d).errors[0].message
    finally:
        CLI.reset(token)
    assert "pass --metric truthfulqa_gen=KEY, KEY one of them" in msg and "metric=" not in msg, msg
    b = read_source(d, metric="bleu_acc")
    assert not b.errors and b.benchmarks["truthfulqa_gen"].metric == "bleu_acc"
    assert sorted(o.score for o in b.outcomes) == [0.0, 1.0, 1.0]
    assert {o.model for o in b.outcomes} == {"EleutherAI/gpt-neo-125M"}
    b = read_source(d, metric="bleu_max")  # (every row alike: one line for the task's file, its 3 rows counted)
    assert not b.outcomes and len(b.errors) == 1 and b.errors[0].message.startswith("3 rows of task truthfulqa_gen")
    assert "bleu_max value 41.1134 is outside [0, 1]" in b.errors[0].message and "choose another" in b.errors[0].message


def test_non_binary_value(model_dir):
    f = samples(model_dir, "tiny_mc_science")

    def half(ls):
        row = json.loads(ls[4]); row["acc"] = 0.5; ls[4] = json.dumps(row)

    edit_lines(f, half)
    ((name, line, msg),) = errs(read_source(model_dir))
    assert (name, line) == (f.name, 5) and "acc value 0.5 is not binary" in msg


@pytest.mark.parametrize("value, shown", [(float("inf"), "inf"), (float("-inf"), "-inf"), ("inf", "inf"),
                                          (float("nan"), "nan"), (10 ** 400, "inf")])
def test_an_infinite_or_nan_metric_value_is_not_a_number_not_not_binary(model_dir, value, shown):
    """A sample whose binary metric is infinite or NaN (`"acc": Infinity`, `"acc": "inf"`, an integer too large for a
    float): its line is rejected as not a number, saying the metric failed, not as "not binary" (0 or 1 expected),
    which pointed at a graded-metric rule that would not help. Before, inf was "acc value inf is not binary"."""
    f = samples(model_dir, "tiny_mc_science")

    def bad(ls):
        row = json.loads(ls[4]); row["acc"] = value; ls[4] = json.dumps(row)

    edit_lines(f, bad)
    ((name, line, msg),) = errs(read_source(model_dir))
    assert (name, line) == (f.name, 5) and f"acc value {shown} is not a number" in msg, msg
    assert "binary" not in msg and "NaN or infinite" in msg


def test_a_long_metric_value_is_quoted_cut_to_a_readable_length_with_its_full_length_said(model_dir):
    """A sample's metric value quoted in an error is cut to about 80 characters, its full length said: a 10,000-character
    string (one row) and, as every row of a task's file, a (gold, pred) pair of long label lists (lm-eval's
    MasakhaNER f1). Before, the error quoted the whole value: lines of 10,000 and 28,000 characters."""
    f = samples(model_dir, "tiny_mc_science")

    def long(ls):
        row = json.loads(ls[4]); row["acc"] = "x" * 10_000; ls[4] = json.dumps(row)

    edit_lines(f, long)
    ((name, line, msg),) = errs(read_source(model_dir))
    assert (name, line) == (f.name, 5) and "acc value 'xxx" in msg and "..." + "x" * 15 + "' (10,000 characters) is not a number" in msg
    assert len(msg) < 200, len(msg)
    y = samples(model_dir, "tiny_mc_yesno")

    def pairs(ls):
        for i, l in enumerate(ls):
            row = json.loads(l)
            row["f1"] = [["B-PER"] * 2000, ["O"] * 2000]; row.pop("acc"); row.pop("acc_norm"); row["metrics"] = ["f1"]
            ls[i] = json.dumps(row)

    edit_lines(y, pairs)
    ((msg,),) = [(m,) for n, _, m in errs(read_source(model_dir)) if n == y.name]
    assert msg.startswith("12 rows of task tiny_mc_yesno rejected: f1 value [['B-PER', 'B-PER'") and len(msg) < 400, msg
    assert "... 'O', 'O', 'O']] (28,004 characters written out) is a (gold, pred) pair" in msg


def test_example_value_keeps_a_short_value_whole_and_cuts_a_long_one():
    from indexer.sources.common import example_value

    assert example_value("abc") == "'abc'" and example_value([1, 2]) == "[1, 2]" and example_value(0.5) == "0.5"
    assert example_value("a" * 78) == repr("a" * 78)  # 80 characters with its quotes: whole
    cut = example_value("a" * 79)
    assert cut.endswith("...aaaaaaaaaaaaaaa' (79 characters)") and len(cut) < 100
    assert example_value({"k": "v" * 200}, written=json.dumps).startswith('{"k": "vvv')


def test_repeated_doc_with_different_outcome(model_dir):
    f = samples(model_dir, "tiny_mc_science")

    def dup(ls):
        same = json.loads(ls[0])
        other = json.loads(ls[1]); other["acc"] = 1.0 - other["acc"]
        ls.append(json.dumps(same))
        ls.append(json.dumps(other))

    edit_lines(f, dup)
    b = read_source(model_dir)
    ((name, line, msg),) = errs(b)
    assert (name, line) == (f.name, 17) and "doc_id 1 repeated with a different acc" in msg
    assert b.skipped == 1  # the exact repeat
    ids = [o.prompt_id for o in b.outcomes if o.benchmark == "tiny_mc_science"]
    assert "tiny_mc_science:1" not in ids and len(ids) == 14


def test_empty_samples_file(model_dir):
    f = samples(model_dir, "tiny_mc_yesno")
    f.write_text("")
    b = read_source(model_dir)
    ((name, line, msg),) = errs(b)
    assert name == f.name and "empty file" in msg
    assert len(b.outcomes) == 30


def test_samples_file_without_results(model_dir):
    f = samples(model_dir, "tiny_mc_yesno")
    orphan = model_dir / f.name.replace("2026-11-29T15-39-05.196841", "2026-12-01T00-00-00.000000")
    shutil.copy(f, orphan)
    b = read_source(model_dir)
    ((name, line, msg),) = errs(b)
    assert name == orphan.name and "no results_2026-12-01T00-00-00.000000.json beside this samples file" in msg
    assert len(b.outcomes) == 42  # the complete older run is read


def test_a_filter_the_file_lacks_refuses_that_file_unless_it_has_only_the_raw_output(model_dir):
    """--filter X: a file with other filters but not X is refused (an error naming the filters it has, nothing of it
    read); a task with only `none` (multiple choice) is read with `none` without a word. Before, a misspelled filter
    read another filter with a message, and `--filter strict-match` failed (exit 1) on every multiple-choice task."""
    res = json.loads(next(model_dir.glob("results_*.json")).read_text())["results"]
    b = read_source(model_dir, filter="strict_match")
    ((name, line, msg),) = errs(b)
    assert name == samples(model_dir, "tiny_gen_arith").name and line is None
    assert "filter 'strict_match' not in this file (it has: none, strict-match)" in msg and "not read" in msg
    assert set(b.benchmarks) == {"tiny_mc_science", "tiny_mc_yesno"} and len(b.outcomes) == 27
    b = read_source(model_dir, filter="strict-match")
    assert b.errors == [] and len(b.outcomes) == 42
    assert {k: v.config["filter"] for k, v in b.benchmarks.items()} == {
        "tiny_gen_arith": "strict-match", "tiny_mc_science": "none", "tiny_mc_yesno": "none"}
    assert means(b)["tiny_gen_arith"] == pytest.approx(res["tiny_gen_arith"]["exact_match,strict-match"])


def test_a_task_missing_from_the_results_file_is_read_with_its_answer_extracting_filter_and_a_warning(model_dir):
    """Samples of a task the results file has no config for, holding `none` and `strict-match` records: read with
    the file's first answer-extracting filter, as a known task is, with a warning naming the task. Before, the raw
    generation (`none`) was read without a word."""
    r = next(model_dir.glob("results_*.json"))
    data = json.loads(r.read_text())
    del data["configs"]["tiny_gen_arith"]
    r.write_text(json.dumps(data))
    b = read_source(model_dir)
    assert b.errors == [] and b.benchmarks["tiny_gen_arith"].config["filter"] == "strict-match"
    assert means(b)["tiny_gen_arith"] == pytest.approx(data["results"]["tiny_gen_arith"]["exact_match,strict-match"])
    (w,) = b.warnings
    assert w.startswith(str(samples(model_dir, "tiny_gen_arith"))) and "'tiny_gen_arith' is missing from the results file" in w
    assert "read with filter 'strict-match' (its first answer-extracting filter)" in w


def test_unreadable_results_file(model_dir):
    r = next(model_dir.glob("results_*.json"))
    r.write_text("{ nope")
    b = read_source(model_dir)
    assert errs(b)[0][0] == r.name and "unreadable results file" in errs(b)[0][2]
    assert b.outcomes == []


def test_not_lm_eval_output(tmp_path):
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(InputError, match="cannot tell the format"):
        read_source(tmp_path)


def test_lighteval_truncated_parquet_and_missing_columns(tmp_path):
    d = tmp_path / "details_fake-org__tiny-v1"
    shutil.copytree(V1, d)
    arc = next(d.glob("*/details_harness|arc:challenge|25_*.parquet"))
    arc.write_bytes(arc.read_bytes()[:100])
    import pyarrow as pa
    import pyarrow.parquet as pq

    mmlu = next(d.glob("*/details_harness|hendrycksTest-anatomy|5_*.parquet"))
    pq.write_table(pa.table({"example": ["q?"]}), mmlu)
    b = read_source(d)
    e = {Path(x.file).name: x.message for x in b.errors}
    assert "truncated" in e[arc.name] and "missing column" in e[mmlu.name]
    assert [o.benchmark for o in b.outcomes] == ["truthfulqa_mc"]  # the intact file is still read


def test_results_and_samples_files_that_start_with_a_byte_order_mark_are_read(model_dir):
    """A BOM at the start of a samples JSONL or a results JSON (a file re-saved by an editor on Windows) is dropped;
    before, the samples file's first line was "malformed JSON" and a results file "unreadable"."""
    expected = sorted((o.model, o.prompt_id, o.score) for o in read_source(model_dir).outcomes)
    for f in [*model_dir.glob("samples_*.jsonl"), *model_dir.glob("results_*.json")]:
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())
    b = read_source(model_dir)
    assert b.errors == [] and sorted((o.model, o.prompt_id, o.score) for o in b.outcomes) == expected


@pytest.mark.parametrize("key, value", [("configs", "x"), ("results", [1]), ("n-shot", []), ("versions", "1")])
def test_a_results_file_whose_task_tables_are_not_objects_is_an_error_naming_it(tmp_path, key, value):
    """A results file whose `configs`, `results`, `versions` or `n-shot` is not a JSON object (a hand edit, a
    converter's bug) is one error naming the file and the key; its samples are not read, other model folders are.
    Before, the reader failed with an AttributeError ("'str' object has no attribute 'get'"), an "unexpected error"
    that cost the whole folder given."""
    out = tmp_path / "out"
    for name in ("fake-org__dummy-a", "fake-org__dummy-b"):
        shutil.copytree(LM_OUT / name, out / name)
    (res,) = (out / "fake-org__dummy-b").glob("results_*.json")
    res.write_text(json.dumps(dict(json.loads(res.read_text()), **{key: value})))
    batches = list(read_sources(out))
    errors = [e for b in batches for e in b.errors]
    assert [e.file for e in errors] == [str(res)]
    assert f"`{key}` is {type(value).__name__}, not a JSON object" in errors[0].message
    assert "the samples of its timestamp are not read" in errors[0].message
    by_model = {o.model for b in batches for o in b.outcomes}
    assert by_model == {"fake-org/dummy-a"}


def test_gzipped_samples_and_results_files_are_read_as_the_files(tmp_path, store):
    """`gzip -r` over an lm-eval output folder (samples_<task>_<ts>.jsonl.gz, results_<ts>.json.gz): before, a model
    folder with only gzipped samples was skipped without a word inside its output folder, given alone it was "an
    lm-eval run without samples files ... run the evaluation again with --log_samples", and a .jsonl.gz samples file
    given alone was taken for a table without a prompts file. Now they read as the plain files; a truncated .gz keeps
    the samples before the break and names the line where reading stopped."""
    import gzip

    from indexer.ingest import ingest

    out = tmp_path / "out"
    shutil.copytree(LM_OUT, out)
    expected = sorted((o.model, o.prompt_id, o.score) for o in read_source(out).outcomes)
    b = out / "fake-org__dummy-b"
    for f in [*b.glob("samples_*.jsonl"), *b.glob("results_*.json")]:
        (f.parent / (f.name + ".gz")).write_bytes(gzip.compress(f.read_bytes()))
        f.unlink()
    got = read_source(out)
    assert got.errors == [] and sorted((o.model, o.prompt_id, o.score) for o in got.outcomes) == expected
    s = ingest(str(out), store=store, fetch_metadata=False)
    assert s.errors == [] and s.sources == 4 and s.outcomes == 168
    one = next(b.glob("samples_tiny_mc_yesno_*.jsonl.gz"))
    assert detect_format(one) == "lm_eval" and detect_format(b) == "lm_eval"
    assert len(read_source(one).outcomes) == 12
    latest = sorted(b.glob("samples_tiny_mc_science_*.jsonl.gz"))[-1]
    latest.write_bytes(latest.read_bytes()[:1500])
    cut = read_source(b)
    ((name, line, msg),) = errs(cut)
    assert name == latest.name and line is not None and "unreadable from here on" in msg and "truncated" in msg
    assert 27 < len(cut.outcomes) < 42  # the other tasks, and the samples before the break


def test_a_samples_line_with_bytes_that_are_not_utf8_costs_that_line(model_dir, store):
    """One byte that is not UTF-8 in a samples file (a hand edit in Latin-1): before, decoding failed at the 8 KB block
    holding it, so every sample from that block on was lost, and the error named no line ("cannot read file: 'utf-8'
    codec can't decode byte 0xff ...") or one before the bad byte. Now the line is reported and skipped, as in a table
    file, and the rest read (plain and .gz alike)."""
    import gzip

    from indexer.ingest import ingest

    f = samples(model_dir, "tiny_mc_science")
    lines = f.read_bytes().split(b"\n")
    lines[10] = lines[10].replace(b"question", b"qu\xffestion", 1)
    f.write_bytes(b"\n".join(lines))
    b = read_source(model_dir)
    assert errs(b) == [(f.name, 11, "not valid UTF-8 text; the line is skipped (re-save the file as UTF-8)")]
    assert len(b.outcomes) == 41
    (f.parent / (f.name + ".gz")).write_bytes(gzip.compress(f.read_bytes()))
    f.unlink()
    s = ingest(str(model_dir), store=store, fetch_metadata=False)
    assert [(Path(e.file).name, e.line) for e in s.errors] == [(f.name + ".gz", 11)] and s.outcomes == 41


def test_a_results_file_given_alone_says_to_ingest_its_folder(tmp_path):
    """`taskspace ingest OUT/MODEL/results_<ts>.json` (a tab completion away from the folder): a JSON file, so it was
    read as a table's outcomes file: "no prompts file ... beside the outcomes; put one there", or with a prompts file
    beside it, 300 "malformed JSON lines". Now detection (so `ingest`, `sources add`, `index --source`) says it is an
    lm-eval results file holding aggregates and to ingest its folder; a samples file given alone reads as before."""
    from indexer.sourcelist import SourceSpec, validate

    from indexer.errors import ConfigError

    d = tmp_path / "fake-org__dummy-a"
    shutil.copytree(LM_OUT / "fake-org__dummy-a", d)
    results = sorted(d.glob("results_*.json"))[0]
    for _ in range(2):
        with pytest.raises(InputError, match=rf"an lm-eval results file: .* ingest its folder, {d}, whose samples_"):
            read_source(results)
        (d / "prompts.jsonl").write_text('{"prompt_id": "p1", "benchmark": "b", "text": "x"}\n')  # then beside one
    with pytest.raises(ConfigError, match="an lm-eval results file"):
        validate(SourceSpec(str(results)))
    assert detect_format(next(d.glob("samples_tiny_mc_yesno_*.jsonl"))) == "lm_eval"
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "scores_2024-01-01T00-00-00.json").write_text('[{"model": "m", "prompt_id": "p1", "correct": 1}]')
    assert detect_format(tmp_path / "t" / "scores_2024-01-01T00-00-00.json") == "table"  # no results/configs: a table


def test_a_results_file_without_a_timestamp_alone_or_in_its_folder_is_named_as_lm_eval_results(tmp_path):
    """A results file with no timestamp in its name: a `results.json` a script dumped from `simple_evaluate` (a real
    one committed to a fork of the harness holds `results`, `configs`, `n-samples`, `samples`, `config`, ... and sits
    alone in its folder beside a plot), or harness 0.4.0-0.4.2's `<name>.json` (`--output_path out/w.json`). Given
    alone it is said to be an lm-eval results file holding aggregates; its folder, holding no samples files, is said
    to be a run without them (--log_samples). Before, the file was read as a table's outcomes file ("no prompts file
    ... beside the outcomes; put one there") and the folder was "cannot tell the format of this folder"."""
    d = tmp_path / "results_nugen_test_results"
    d.mkdir()
    results = d / "results.json"
    results.write_text(json.dumps({
        "results": {"aibe": {"exact_match,none": 0.8, "exact_match_stderr,none": 0.2}},
        "group_subtasks": {"aibe": []},
        "configs": {"aibe": {"task": "aibe", "output_type": "generate_until", "num_fewshot": 0}},
        "versions": {"aibe": 1.0}, "n-shot": {"aibe": 0}, "higher_is_better": {"aibe": {"exact_match": True}},
        "n-samples": {"aibe": {"original": 5, "effective": 5}},
        "samples": {"aibe": [{"doc_id": "0", "doc": "{'question_no': 1.0, 'question': 'Which ...?'}", "target": "C",
                              "filter": "none", "metrics": "['exact_match']", "exact_match": "1.0"}]},
        "config": {"model": "nugen", "model_args": {"model": "nugen-flash-instruct", "temperature": 0.0}},
        "git_hash": "4d10ad5", "date": 1742000000.0}, indent=2))
    (d / "performance_plot.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(InputError, match=r"an lm-eval results file: it holds a run's aggregate scores, not per-sample "
                                         r"results, which lm-eval 0.4.3 and later writes with --log_samples"):
        read_source(results)
    with pytest.raises(InputError, match=r"an lm-eval run without samples files: results.json but no samples_<task>_"):
        read_source(d)
    old = tmp_path / "output"
    old.mkdir()
    (old / "w.json").write_text(json.dumps({"results": {"winogrande": {"acc,none": 0.5}}, "configs": {"winogrande": {}},
                                            "versions": {"winogrande": 1.0}, "config": {"model_args": ""}}))
    with pytest.raises(InputError, match=r"an lm-eval results file: it holds a run's aggregate scores"):
        read_source(old / "w.json")


def test_lighteval_details_whose_model_is_named_nowhere_say_to_pass_the_option_its_reader_has(tmp_path):
    """lighteval details in a folder that names no model and beside no results file (as lighteval's own repository
    keeps them: `tests/reference_details/<model>-transformers/details_<task>|<shots>_<ts>.parquet`): the error says to
    pass `--model NAME` to a CLI user and `model='NAME'` to a Python caller, and with it the details are read. Before,
    it said "pass model=" to both."""
    from indexer.errors import CLI

    src = next((FIX / "formats" / "lighteval_0.13_output" / "details").rglob("details_winogrande|5_*.parquet"))
    d = tmp_path / "reference_details" / "SmolLM2-1.7B-Instruct-transformers"
    d.mkdir(parents=True)
    shutil.copy(src, d / src.name)
    with pytest.raises(InputError, match=r"cannot tell the model of these details files .*; pass model='NAME'$"):
        read_source(d)
    token = CLI.set(True)
    try:
        with pytest.raises(InputError, match=r"cannot tell the model of these details files .*; pass --model NAME$"):
            read_source(d)
    finally:
        CLI.reset(token)
    b = read_source(d, model="HuggingFaceTB/SmolLM2-1.7B-Instruct")
    assert not b.errors and {o.model for o in b.outcomes} == {"HuggingFaceTB/SmolLM2-1.7B-Instruct"}


def _lfs_pointer(path: Path, size: int) -> None:
    """Replace ``path`` by the Git LFS pointer a clone without git-lfs leaves in its place (the spec's three lines)."""
    path.write_text("version https://git-lfs.github.com/spec/v1\n"
                    "oid sha256:ef98086aa6570aff157b98eb4adfdaa5c54067571618680bc462002590c5ebc8\n"
                    f"size {size}\n")


def test_a_git_lfs_pointer_in_place_of_a_file_is_one_error_saying_to_fetch_it(tmp_path, model_dir):
    """A repository of evaluation output cloned without git-lfs (a real one on GitHub keeps its lm-eval samples in
    LFS: every `samples_<task>_<ts>.jsonl` a 3-line pointer beside real results files; lighteval keeps its reference
    details so): each pointer is one error naming the file, saying it is a Git LFS pointer whose content (its size)
    was never downloaded and to run `git lfs pull`; the other files are read. Before, an lm-eval pointer was three
    "malformed JSON line ... the line breaks off before its end" errors and a lighteval or table one "not a readable
    Parquet file (... magic bytes ...)", neither saying the content was never fetched."""
    f = samples(model_dir, "tiny_mc_yesno")
    _lfs_pointer(f, 42807696)
    b = read_source(model_dir)
    ((name, line, msg),) = errs(b)
    assert (name, line) == (f.name, None) and msg.startswith("a Git LFS pointer, not the file's content"), msg
    assert "42,807,696 bytes" in msg and "git lfs pull" in msg
    assert "tiny_mc_yesno" not in b.benchmarks and "tiny_mc_science" in b.benchmarks
    r = sorted(model_dir.glob("results_*.json"))[-1]
    _lfs_pointer(r, 118370)  # the results file too: the run's samples cannot be read without it
    msgs = [m for _, _, m in errs(read_source(model_dir))]
    assert any(m.startswith("unreadable results file: a Git LFS pointer") for m in msgs), msgs
    light = tmp_path / "light"
    shutil.copytree(FIX / "formats" / "lighteval_0.13_output", light)
    details = next(light.rglob("details_mmlu:anatomy|5_*.parquet"))
    _lfs_pointer(details, 21785)
    b = read_source(light)
    ((name, line, msg),) = errs(b)
    assert (name, line) == (details.name, None) and msg.startswith("a Git LFS pointer") and "21,785 bytes" in msg
    assert "winogrande" in b.benchmarks
    table = tmp_path / "table"
    table.mkdir()
    (table / "prompts.csv").write_text("prompt_id,benchmark,text\np1,demo/math,What is 2 + 2?\n")
    _lfs_pointer(table / "outcomes.csv", 1234)
    ((name, line, msg),) = errs(read_source(table))
    assert (name, line) == ("outcomes.csv", None) and msg.startswith("a Git LFS pointer"), msg


def test_encoding_problem_reads_a_file_once_and_says_a_gzip_named_lfs_pointer_is_one(tmp_path, model_dir, monkeypatch):
    """The check of a text file's encoding (a UTF-16 or UTF-32 byte order mark, a Git LFS pointer) opens it once, a
    `.gz` one too (its first bytes decompressed from the head read); a `samples_<task>_<ts>.jsonl.gz` that is a Git
    LFS pointer (a clone without git-lfs of `gzip -r` output) is one error saying so. Before, the file was opened
    twice (for the mark, then for the pointer), and the `.gz` pointer was "cannot read file: corrupt gzip data"."""
    import builtins
    import gzip

    from indexer.sources.common import encoding_problem

    plain, packed, utf16 = tmp_path / "a.jsonl", tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    plain.write_bytes(b'{"x": 1}\n')
    packed.write_bytes(gzip.compress(b'{"x": 1}\n'))
    utf16.write_bytes(gzip.compress('{"x": 1}\n'.encode("utf-16")))
    opened = []
    real_open = builtins.open
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: opened.append(str(f)) or real_open(f, *a, **k))
    assert encoding_problem(plain) is None and encoding_problem(packed) is None
    assert encoding_problem(utf16).startswith("the file is UTF-16 text")
    monkeypatch.setattr(builtins, "open", real_open)
    assert opened == [str(plain), str(packed), str(utf16)], opened
    f = samples(model_dir, "tiny_mc_yesno")
    gz = f.with_name(f.name + ".gz")
    f.unlink()
    _lfs_pointer(gz, 4242)
    ((name, line, msg),) = errs(read_source(model_dir))
    assert (name, line) == (gz.name, None) and msg.startswith("a Git LFS pointer") and "4,242 bytes" in msg, msg


def test_the_prompt_of_an_api_chat_model_run_is_its_last_user_message(tmp_path):
    """A task whose docs have no question field (a translation task: `english`, `italian`), run with an API chat model
    (`local-chat-completions`, `--apply_chat_template`): lm-eval writes `arg_0` as its JsonChatStr, a one-item list
    holding the JSON of the messages (as a real gpt-4o-mini run committed to a fork of the harness shows). The text is
    the last user message's content (its last few-shot example), as for a text `arg_0`; the JSON alone (no list)
    reads the same. Before, every row was "no prompt text": such a run could not be read at all."""
    ts = "2024-10-11T13-58-59.572420"
    d = tmp_path / "out" / "gpt-4o-mini"
    d.mkdir(parents=True)
    shot = "Translate the following sentence into English: <Il pilota era il capo squadriglia.>\n<The pilot was ...>"
    rows = []
    for i, (it, score) in enumerate([("Abbiamo topi di quattro mesi.", 0.85), ("Come altri esperti, è scettico.", 0.9)]):
        q = f"Translate the following sentence into English: <{it}>"
        chat = json.dumps([{"role": "system", "content": "You are a translator."},
                           {"role": "user", "content": f"{shot}\n\n{q}"}])
        rows.append({"doc_id": i, "doc": {"english": "x", "italian": it}, "target": "x",
                     "arguments": {"gen_args_0": {"arg_0": [chat] if i == 0 else chat,
                                                  "arg_1": {"max_tokens": 256, "until": ["\n\n"]}}},
                     "resps": [["y"]], "filtered_resps": ["y"], "filter": "none", "metrics": ["comet_score"],
                     "doc_hash": "a", "prompt_hash": "b", "target_hash": "c", "comet_score": score})
    (d / f"samples_en_it_public_{ts}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / f"results_{ts}.json").write_text(json.dumps({
        "results": {"en_it_public": {"alias": "en_it_public", "comet_score,none": 0.875}},
        "configs": {"en_it_public": {"task": "en_it_public", "output_type": "generate_until", "num_fewshot": 1,
                                     "fewshot_delimiter": "\n\n"}},
        "config": {"model": "local-chat-completions", "model_args": "model=gpt-4o-mini"}, "model_name": "gpt-4o-mini"}))
    b = read_source(d, metric="comet_score")
    assert not b.errors, errs(b)
    assert sorted(o.text for o in b.outcomes) == ["Translate the following sentence into English: <Abbiamo topi di "
                                                  "quattro mesi.>", "Translate the following sentence into English: "
                                                  "<Come altri esperti, è scettico.>"]


def test_a_lighteval_results_file_given_alone_says_to_ingest_the_details_folder(tmp_path):
    """A lighteval results file given alone (`details_<org>__<model>/results_<ts>.json`, lighteval's
    `<out>/results/<org>/<model>/results_<ts>.json`): before, read as a table's outcomes file, "no prompts file ...
    beside the outcomes; put one there". Now it says it is a lighteval results file and to ingest the folder holding
    the details files; that folder reads as before."""
    out = FIX / "formats" / "lighteval_0.13_output"
    for results in (next(V1.glob("results_*.json")), next(out.glob("results/*/*/results_*.json"))):
        with pytest.raises(InputError, match="a lighteval results file: .* ingest the folder holding the run's details"):
            detect_format(results)
    assert detect_format(V1) == "lighteval" and read_source(V1).errors == []


def test_a_lighteval_folder_with_results_but_no_details_says_the_run_needs_save_details(tmp_path):
    """lighteval's output folder of a run made without `--save-details` (`<out>/results/<org>/<model>/results_<ts>.json`
    alone), or a details repo's folder holding only its results file: one error naming the results file and saying
    the per-sample results are the details, which `--save-details` writes; with `--format lighteval` too. Before,
    "cannot tell the format of this folder ... pass --format", and with it "no lighteval details files here". A
    folder of other JSON is still "cannot tell the format"."""
    from indexer.sources import read_sources

    out = tmp_path / "light-out"
    shutil.copytree(FIX / "formats" / "lighteval_0.13_output" / "results", out / "results")
    (res,) = out.glob("results/*/*/results_*.json")
    for fmt in (None, "lighteval"):
        with pytest.raises(InputError, match=r"lighteval results without details: results/.*/results_.*\.json but no "
                                             r"details_<task>_<ts>\.parquet; .* lighteval writes with --save-details"):
            list(read_sources(out, format=fmt)) if fmt else detect_format(out)
    other = tmp_path / "other"
    other.mkdir()
    (other / "results_2025-01-01T00-00-00.000000.json").write_text(json.dumps({"name": "not a run"}))
    with pytest.raises(InputError, match="cannot tell the format of this folder"):
        detect_format(other)


def test_a_samples_file_saved_as_utf16_is_one_error_saying_so(model_dir):
    """A samples file re-saved as UTF-16 (PowerShell 5's `Get-Content | Out-File`): before, with the surrogate escape
    every line was "not valid UTF-8" or "malformed JSON line" (a NUL byte before each character); strictly read,
    "cannot read file: 'utf-8' codec can't decode byte 0xff". Now one error names the file, says it is UTF-16 and to
    save it as UTF-8; the other tasks are read."""
    f = samples(model_dir, "tiny_mc_yesno")
    f.write_bytes(f.read_text().encode("utf-16"))
    b = read_source(model_dir)
    ((name, line, msg),) = errs(b)
    assert (name, line) == (f.name, None) and msg.startswith("the file is UTF-16 text") and "save it as UTF-8" in msg
    assert len(b.outcomes) == 42 - 12


def test_metric_per_task_reads_a_folder_whose_tasks_need_different_keys(tmp_path):
    """CALAMITA's output (one model folder: a translation task scored by comet_score, a gender task by bert_f1 alone)
    is read in one go with `metric=["comet_score", "gfg_task_1_1=bert_f1"]` (`--metric comet_score --metric
    gfg_task_1_1=bert_f1`), or a pattern of tasks (`gfg_*=bert_f1`); a plain KEY stays the key of every task not named,
    each benchmark recorded with its own. A TASK naming no task of the source is a ConfigError naming it and the tasks
    found. Before, one `--metric` read every task: `--metric comet_score` rejected every gfg row (3,273 on the real
    folder), and no value read both."""
    from helpers import write_calamita_run

    from indexer.errors import ConfigError

    d = write_calamita_run(tmp_path / "tests_calamita")
    b = read_source(d, metric="comet_score")  # one key for both: the gfg task's rows are lost
    assert {o.benchmark for o in b.outcomes} == {"MT_CALAMITA_it_en_public"} and b.errors
    # (the keys the sample has, though none is a metric taskspace knows; before, "it has: none")
    assert "'comet_score' (task gfg_task_1_1, benchmark gfg_task_1_1) is missing from the sample (it has: bert_f1)" \
        in b.errors[0].message, b.errors[0].message
    for metric in (["comet_score", "gfg_task_1_1=bert_f1"], ("gfg_*=bert_f1", "comet_score"), "gfg_task_1_1=bert_f1"):
        b = read_source(d.parent, metric=metric)
        if metric == "gfg_task_1_1=bert_f1":  # no KEY for the others: the translation task keeps its rule (none)
            assert {o.benchmark for o in b.outcomes} == {"gfg_task_1_1"} and b.errors, metric
            continue
        assert not b.errors, (metric, b.errors)
        assert {k: v.metric for k, v in b.benchmarks.items()} == {"MT_CALAMITA_it_en_public": "comet_score",
                                                                   "gfg_task_1_1": "bert_f1"}
        scores = {o.prompt_id: o.score for o in b.outcomes}
        assert scores["MT_CALAMITA_it_en_public:0"] == pytest.approx(0.86) and scores["gfg_task_1_1:1"] == 0.0
        assert len(scores) == 7
    for metric, named in ((["comet_score", "gfg_task_9=bert_f1"], "gfg_task_9"), ("mt_*=comet_score", "mt_*")):
        with pytest.raises(ConfigError) as exc:
            list(read_sources(d.parent, metric=metric))
        msg = str(exc.value)
        assert f"no task {named!r} in {d.parent}" in msg and "MT_CALAMITA_it_en_public, gfg_task_1_1" in msg, msg
    for metric, said in ((["comet_score", "bert_f1"], "was given 2 values ('comet_score', 'bert_f1') for every task"),
                         (["gfg_task_1_1=bert_f1", "gfg_task_1_1=acc"], "names task 'gfg_task_1_1' twice"),
                         ("gfg_task_1_1=", "the key is blank"), ("=bert_f1", "the task is blank")):
        with pytest.raises(ConfigError, match=re.escape(said)):
            list(read_sources(d, metric=metric))


def _eqbench_run(d: Path, n_ca: int = 25, n_es: int = 3) -> Path:
    """lm-eval 0.4.8 output of the Catalan/Spanish EQ-Bench tasks in the shape of a real run of FLOR-760M (BSC, July
    2025): a folder named after the model (not <org>__<model>), `results_<name>:<date>_<ts>.json` naming the model by a
    local path, samples with `filter` and `metrics` keys whose metrics, `eqbench` (0-100) and `percent_parseable`, are
    none taskspace knows."""
    ts = "2025-07-21T14-41-47.889425"
    d.mkdir(parents=True)
    for task, n in (("eqbench_ca", n_ca), ("eqbench_es", n_es)):
        rows = [{"doc_id": i, "doc": {"prompt": f"{task} dialeg {i}: Robert: Claudia, siguem practics.\nEl Robert "
                                                "sentiria...\nPesar\nAfecte",
                                      "reference_answer": "{}", "reference_answer_fullscale": "true"},
                 "target": "{'emotion1': 'Pesar'}", "arguments": {"gen_args_0": {"arg_0": "x", "arg_1": {"until": []}}},
                 "resps": [[""]], "filtered_resps": [""], "filter": "none", "metrics": ["eqbench", "percent_parseable"],
                 "doc_hash": "a", "prompt_hash": "b", "target_hash": "c", "eqbench": 0, "percent_parseable": 0}
                for i in range(n)]
        (d / f"samples_{task}_{ts}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    tasks = ("eqbench_ca", "eqbench_es")
    (d / f"results_FLOR-760M:2025-07-21T1441-16_{ts}.json").write_text(json.dumps({
        "results": {t: {"alias": t, "eqbench,none": 0.0, "percent_parseable,none": 0.0} for t in tasks},
        "configs": {t: {"task": t, "output_type": "generate_until", "doc_to_text": "prompt", "num_fewshot": 0,
                        "metadata": {"version": 2.1}} for t in tasks},
        "versions": {t: 2.1 for t in tasks}, "n-shot": {t: 0 for t in tasks},
        "config": {"model": "hf", "model_args": "pretrained=/gpfs/projects/bsc88/hf-models/FLOR-760M"},
        "lm_eval_version": "0.4.8", "model_name": "/gpfs/projects/bsc88/hf-models/FLOR-760M"}))
    return d


def test_a_problem_of_every_row_of_a_task_is_said_once_with_the_rows_it_cost(tmp_path):
    """A task whose metric cannot be chosen (EQ-Bench's eqbench and percent_parseable: no metric taskspace knows) is
    one error per task and file, "N rows of task T rejected: unknown metric ...", which counts as N rejected rows;
    a problem of some rows only stays on each row (its line). Before, the same "unknown metric" was said once per
    row, 20 lines alike and then "N more rows rejected"."""
    from indexer.sources.common import count_rejected

    d = _eqbench_run(tmp_path / "FLOR-760M")
    b = read_source(d)
    assert not b.outcomes
    got = [(Path(e.file).name, e.line, e.message.split(": unknown metric")[0]) for e in b.errors]
    assert got == [(next(d.glob("samples_eqbench_ca_*")).name, None, "25 rows of task eqbench_ca rejected"),
                   (next(d.glob("samples_eqbench_es_*")).name, None, "3 rows of task eqbench_es rejected")], got
    assert "among eqbench, percent_parseable (task eqbench_ca)" in b.errors[0].message
    assert count_rejected(b.errors) == 28
    from typer.testing import CliRunner

    from indexer.cli import app

    r = CliRunner().invoke(app, ["ingest", str(d), "--no-metadata"])
    lines = r.stderr.splitlines()
    assert r.exit_code == 1 and lines[0] == "28 errors: this input was rejected, nothing was ingested", r.stderr
    assert len(lines) == 3 and "25 rows of task eqbench_ca rejected: unknown metric" in lines[1], r.stderr
    # (every eqbench value of this run is 0, in [0, 1]: the plain form is said too)
    assert "pass --metric eqbench_ca=KEY (or --metric eqbench for every task: " in lines[1], r.stderr
    assert "in every row), KEY one of them" in lines[1], r.stderr
    # two rows of eqbench_ca without prompt text: said on their lines; the metric's problem covers the 23 others
    f = next(d.glob("samples_eqbench_ca_*"))

    def no_text(ls):
        for i in (3, 7):
            row = json.loads(ls[i]); row["doc"] = {}; row["arguments"] = {}; ls[i] = json.dumps(row)

    edit_lines(f, no_text)
    e = [(line, msg.split(":")[0]) for name, line, msg in errs(read_source(d)) if name == f.name]
    assert e == [(None, "23 rows of task eqbench_ca rejected"), (4, "no prompt text"), (8, "no prompt text")], e
    # a metric missing from some rows only (the others read): each such row its own error
    def only_eqbench(ls):
        row = json.loads(ls[0]); del row["percent_parseable"]; row["metrics"] = ["eqbench"]; ls[0] = json.dumps(row)

    edit_lines(f, only_eqbench)
    b = read_source(d, metric="percent_parseable")
    e = [(line, msg[:26]) for name, line, msg in errs(b) if name == f.name]
    assert e == [(1, "metric 'percent_parseable'"), (4, "no prompt text: `doc` has "), (8, "no prompt text: `doc` has ")], e
    assert len([o for o in b.outcomes if o.benchmark == "eqbench_ca"]) == 22


def _masakhaner_run(d: Path, n: int = 22) -> Path:
    """lm-eval 0.4.10 output of a MasakhaNER task in the shape of a real run of google/gemma-2b (January 2026): a
    generation task scored by `f1` alone, whose per-sample value is lm-eval's (gold, pred) pair for the corpus-level
    f1 (`["DATE: kawuononi", [""]]`), with the `flexible-extract` filter."""
    ts = "2026-01-16T16-02-26.648276"
    d.mkdir(parents=True)
    task = "masakhaner_luo_prompt_1"
    rows = [{"doc_id": i, "doc": {"id": str(i), "text": f"Kwan jii maromo {i} mane oyudi ni nigi Covid-19 ei kawuononi",
                                  "target": "DATE: kawuononi"},
             "target": "DATE: kawuononi", "arguments": {"gen_args_0": {"arg_0": "Text: ...", "arg_1": {"until": []}}},
             "resps": [["loc: entity"]], "filtered_resps": [[""]], "filter": "flexible-extract", "metrics": ["f1"],
             "doc_hash": "a", "prompt_hash": "b", "target_hash": "c",
             "f1": [f"PER: Aman {i}", ["" if i % 2 else f"loc: entity {i}"]]} for i in range(n)]
    (d / f"samples_{task}_{ts}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / f"masakhaner_luo_0shot_{ts}.json").write_text(json.dumps({
        "results": {task: {"alias": task, "f1,flexible-extract": 0.05}},
        "configs": {task: {"task": task, "output_type": "generate_until", "num_fewshot": 0, "metadata": {"version": 1.0}}},
        "versions": {task: 1.0}, "n-shot": {task: 0},
        "config": {"model": "hf", "model_args": "pretrained=google/gemma-2b"},
        "lm_eval_version": "0.4.10.dev0", "model_name": "google/gemma-2b"}))
    return d


def test_a_value_problem_of_every_row_of_a_task_is_said_once_with_one_example(tmp_path):
    """Every row of a task's file whose value is wrong the same way (MasakhaNER's f1, a (gold, pred) pair in each row;
    a metric on a 0-100 scale, outside [0, 1] in each row) is one error per task and file, "N rows of task T rejected:"
    with the first row's value as the example, counted as N rows; values wrong in some rows only stay per row. Before,
    each row had its line (20 alike, then "N more rows rejected")."""
    from typer.testing import CliRunner

    from indexer.cli import app
    from indexer.sources.common import count_rejected

    d = _masakhaner_run(tmp_path / "gemma")
    b = read_source(d)
    assert not b.outcomes and len(b.errors) == 1, errs(b)
    (e,) = b.errors
    assert e.line is None and e.message.startswith("22 rows of task masakhaner_luo_prompt_1 rejected: f1 value "
                                                   "['PER: Aman 0', ['loc: entity 0']] is a (gold, pred) pair"), e.message
    assert e.message.endswith("(line 1's value; the other rows' values are wrong the same way)"), e.message
    assert count_rejected(b.errors) == 22
    r = CliRunner().invoke(app, ["ingest", str(d), "--no-metadata"])
    lines = r.stderr.splitlines()
    assert r.exit_code == 1 and lines[0] == "22 errors: this input was rejected, nothing was ingested", r.stderr
    assert len(lines) == 2 and "22 rows of task masakhaner_luo_prompt_1 rejected: f1 value" in lines[1], r.stderr
    # one row's f1 a score (read): the others' pairs are each their row's error, as any row's problem
    f = next(d.glob("samples_*.jsonl"))

    def one_score(ls):
        row = json.loads(ls[4]); row["f1"] = 0.5; ls[4] = json.dumps(row)

    edit_lines(f, one_score)
    b = read_source(d)
    assert len(b.outcomes) == 1 and [x[1] for x in errs(b)][:3] == [1, 2, 3], errs(b)
    assert count_rejected(b.errors) == 21 and "1 more rows rejected: bad f1 values" in b.errors[-1].message
    # a 0-100 metric read with --metric: every row outside [0, 1], one line (truthfulqa_gen's bleu_max)
    b = read_source(_truthfulqa_gen_run(tmp_path / "results"), metric="bleu_max")
    assert not b.outcomes and len(b.errors) == 1 and count_rejected(b.errors) == 3, errs(b)
    assert b.errors[0].message.startswith("3 rows of task truthfulqa_gen rejected: bleu_max value 41.1134 is outside "
                                          "[0, 1]"), b.errors[0].message


def _foo_score_run(d: Path, tasks=("taskone", "tasktwo"), other: dict | None = None) -> Path:
    """lm-eval output of one model whose tasks' samples have only a metric taskspace has no rule for, `foo_score`, in
    [0, 1] (four samples a task); ``other``: a task's own sample keys in place of it."""
    ts = "2025-01-15T10-00-00.000000"
    d.mkdir(parents=True)
    for task in tasks:
        keys = (other or {}).get(task, {"foo_score": None})
        rows = [{"doc_id": i, "doc": {"question": f"{task} question {i}?"}, "filter": "none", "metrics": list(keys),
                 **{k: (0.25 * i if v is None else v) for k, v in keys.items()}} for i in range(4)]
        (d / f"samples_{task}_{ts}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / f"results_{ts}.json").write_text(json.dumps({
        "model_name": "acme/tiny", "results": {t: {"foo_score,none": 0.375} for t in tasks},
        "configs": {t: {"task": t} for t in tasks}}))
    return d


def test_a_key_every_task_has_is_advised_as_the_plain_metric_too(tmp_path):
    """When the errors advise `--metric TASK=KEY` for several tasks of a folder and one key fits every task (each
    task's rows have it with a 0/1 or [0, 1] value), the advice also says the plain `--metric KEY`, which reads them
    all (and `metric='KEY'` in Python, the `sources add` command for a configured source). A key some task lacks, or
    whose values are off the scale, is not advised. Before, only one `--metric TASK=KEY` per task was advised."""
    from indexer.errors import CLI, SOURCE
    from indexer.sourcelist import SourceSpec

    d = _foo_score_run(tmp_path / "acme__tiny")
    token = CLI.set(True)
    try:
        es = read_source(d).errors
        assert len(es) == 2 and all("(or --metric foo_score for every task: each task of this folder has foo_score, "
                                    "a 0/1 outcome or a score in [0, 1], in every row)" in e.message for e in es), es
        assert "pass --metric taskone=KEY (or --metric foo_score for every task" in es[0].message
        assert "pass --metric tasktwo=KEY (or --metric foo_score for every task" in es[1].message
        # a configured source read with taskone=bar: the command sets the plain key in place of its entries
        src = SOURCE.set(SourceSpec(str(d), format="lm_eval", metric="taskone=bar"))
        try:
            es = read_source(d, metric="taskone=bar").errors
        finally:
            SOURCE.reset(src)
        assert "metric 'bar' (task taskone, benchmark taskone) is missing" in es[0].message, es[0].message
        assert all(f"(or --metric foo_score (for this configured source: `taskspace sources add {d} --format lm_eval "
                   "--metric foo_score`) for every task" in e.message for e in es), es
    finally:
        CLI.reset(token)
    es = read_source(d).errors
    assert all("(or metric='foo_score' for every task" in e.message for e in es), es
    b = read_source(d, metric="foo_score")
    assert not b.errors and len(b.outcomes) == 8
    # a third task that has acc only: no key fits every task
    d2 = _foo_score_run(tmp_path / "two" / "acme__tiny", ("taskone", "tasktwo", "taskthree"),
                        {"taskthree": {"acc": 1.0}})
    es = read_source(d2).errors
    assert len(es) == 2 and not any("for every task" in e.message for e in es), es
    # one task advised (the other has acc beside foo_score, read by its rule): its own entry is enough
    d4 = _foo_score_run(tmp_path / "four" / "acme__tiny", other={"tasktwo": {"acc": 1.0, "foo_score": 0.5}})
    (e,) = read_source(d4).errors
    assert "pass metric='taskone=KEY', KEY one of them" in e.message, e.message
    # foo_score off the scale in one task: not advised
    d3 = _foo_score_run(tmp_path / "three" / "acme__tiny", other={"tasktwo": {"foo_score": 42.0}})
    es = read_source(d3).errors
    assert len(es) == 2 and not any("for every task" in e.message for e in es), es


def test_the_advice_to_pass_metric_names_the_task(tmp_path):
    """The errors that say to pass --metric (an unknown metric; the key asked for missing from a task's samples; a rule
    naming a key taskspace does not know) give the per-task form with the task's name, `--metric TASK=KEY`
    (`metric='TASK=KEY'` in Python; a TASK a shell would split quoted), and for a configured source the `sources add`
    command adding it to the source's other --metric entries. Before, they said "pass --metric" alone: a plain KEY
    read every task with it, and so rejected the rows of each other task lacking it (CALAMITA's gfg task)."""
    from helpers import write_calamita_run

    from indexer.errors import CLI, SOURCE
    from indexer.sourcelist import SourceSpec
    from dataclasses import replace

    from indexer.sources.rules import load_rules
    from indexer.sources.scoring import choose_metric

    d = write_calamita_run(tmp_path / "tests_calamita")
    token = CLI.set(True)
    try:
        (e,) = read_source(d, metric="comet_score").errors
        assert "is missing from the sample (it has: bert_f1)" in e.message, e.message
        assert "pass --metric gfg_task_1_1=KEY, KEY one of these, to read it anyway" in e.message, e.message
        (e, _) = read_source(_eqbench_run(tmp_path / "FLOR-760M")).errors
        assert "pass --metric eqbench_ca=KEY (or --metric eqbench for every task" in e.message, e.message
        assert "in every row), KEY one of them whose values are 0/1" in e.message, e.message
        # a lighteval task name a shell would split: quoted
        rule = replace(load_rules().for_task("mmlu:anatomy|5"), metric_keys=("foo",))  # a rule naming an unknown key
        _, why = choose_metric({"x": 1}, rule, None)
        assert "fix the rule or pass --metric 'mmlu:anatomy|5=KEY', KEY one of the sample's own" in why, why
        # a configured source read with --metric comet_score: the command keeps it and adds the task's entry
        src = SOURCE.set(SourceSpec(str(d), format="lm_eval", metric="comet_score"))
        try:
            (e,) = read_source(d, metric="comet_score").errors
        finally:
            SOURCE.reset(src)
        assert (f"pass --metric gfg_task_1_1=KEY (for this configured source: `taskspace sources add {d} --format "
                "lm_eval --metric comet_score --metric gfg_task_1_1=KEY`), KEY one of these") in e.message, e.message
    finally:
        CLI.reset(token)
    (e,) = read_source(d, metric="comet_score").errors  # Python: the library's form
    assert "pass metric='gfg_task_1_1=KEY', KEY one of these" in e.message, e.message


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_a_results_file_saved_as_utf16_is_one_error_saying_so_and_what_to_do(model_dir, encoding):
    """A results file re-saved in another encoding (PowerShell 5's `Get-Content | Out-File`, Notepad's "Unicode"): one
    error naming it, saying what it is and to save it as UTF-8, its samples not read, as a samples file so saved is
    one; before, "unreadable results file: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte",
    which said neither."""
    r = sorted(model_dir.glob("results_*.json"))[-1]
    r.write_bytes(r.read_text(encoding="utf-8").encode(encoding))
    said = [m for name, _, m in errs(read_source(model_dir)) if name == r.name]
    assert said == [f"unreadable results file: the file is {encoding.upper()} text (it starts with a {encoding.upper()} "
                    "byte order mark), not UTF-8: nothing of it is read; save it as UTF-8 (PowerShell: Out-File "
                    "-Encoding utf8; Excel: CSV UTF-8); the samples of its timestamp are not read"], said


def test_a_copy_of_a_model_folder_beside_it_is_a_warning_naming_both(tmp_path):
    """A Finder-style copy of a model folder (`fake-org__dummy-c copy/` beside `fake-org__dummy-c/`) holds the same
    model's results: both are still read, and a warning names both folders and the model; before, the copy was stored
    as another source of the model without a word (its outcomes counted again in the summary)."""
    out = tmp_path / "out"
    shutil.copytree(LM_OUT, out)
    shutil.copytree(out / "fake-org__dummy-c", out / "fake-org__dummy-c copy")
    batches = list(read_sources(out))
    said = [w for b in batches for w in b.warnings if "fake-org__dummy-c copy" in w]
    assert len(said) == 1 and str(out / "fake-org__dummy-c") in said[0] and "fake-org/dummy-c" in said[0], said
    assert not [w for b in batches for w in b.warnings if "dummy-a" in w or "dummy-b" in w]


@pytest.mark.parametrize("tail", ["\x1a", "\n\x1a", "\x1a\n", "\r\n\x1a\x1a", "  \n\n"])
def test_results_files_ending_with_the_dos_eof_byte_or_whitespace_are_read(model_dir, tmp_path, tail):
    """An lm-eval or lighteval results file ending with the DOS end-of-file byte (`\\x1a`, Ctrl-Z: old DOS/Windows
    tools append it) and/or whitespace after its JSON object is read as the file without it, as a table file is
    (docs/FORMATS.md). Before, lm-eval's was "unreadable results file: Extra data at column 2" (its samples not read)
    and lighteval's "results file not read: it cannot be read as JSON (Extra data)"."""
    expected = sorted((o.model, o.prompt_id, o.score) for o in read_source(model_dir).outcomes)
    for f in model_dir.glob("results_*.json"):
        f.write_bytes(f.read_bytes() + tail.encode())
    b = read_source(model_dir)
    assert b.errors == [] and sorted((o.model, o.prompt_id, o.score) for o in b.outcomes) == expected
    le = tmp_path / "le"
    shutil.copytree(FIX / "formats" / "lighteval_0.13_output", le)
    for f in le.rglob("results_*.json"):
        f.write_bytes(f.read_bytes() + tail.encode())
    b = read_source(le)
    assert b.errors == [] and b.warnings == [] and b.outcomes, (b.errors, b.warnings)


def test_results_files_with_other_text_after_their_json_say_where_and_what_to_do(model_dir, tmp_path):
    """Text after a results file's JSON object other than whitespace and the DOS end-of-file byte (two runs' files
    concatenated, a log line appended): the error (lm-eval) or warning (lighteval) names the file, the line and column
    where the extra text starts, and says to remove it. Before, "Extra data at column 1" (lm-eval, no word of what to
    do of it) and "it cannot be read as JSON (Extra data)" (lighteval, no position)."""
    (r,) = [f for f in model_dir.glob("results_*.json")]
    lines = r.read_text().count("\n")
    r.write_text(r.read_text() + "\ndone.\n")
    b = read_source(model_dir)
    ((name, line, msg),) = errs(b)
    assert (name, line) == (r.name, lines + 2), errs(b)
    assert ("unreadable results file: text after its JSON value at line %d column 1 ('done.'), which JSON does not "
            "allow: remove it" % (lines + 2)) in msg, msg
    le = tmp_path / "le"
    shutil.copytree(FIX / "formats" / "lighteval_0.13_output", le)
    (res,) = le.rglob("results_*.json")
    res.write_text(res.read_text().rstrip("\n") + "}x")
    (w,) = read_source(le).warnings
    assert w.startswith(f"{res}: results file not read: it cannot be read as JSON (text after its JSON value at "
                        "line "), w
    assert "('}x'), which JSON does not allow: remove it" in w, w


def test_a_task_whose_metrics_are_corpus_level_lists_says_it_has_no_per_sample_score(tmp_path):
    """lm-eval logs corpus-level metrics per sample as the input of their aggregation (lm_eval/api/metrics.py:
    `bleu`, `chrf`, `ter` as (reference, prediction) pairs, loglikelihood_rolling's `word_perplexity`,
    `byte_perplexity`, `bits_per_byte` as (loglikelihood, length) pairs). A task scored only so (wikitext, wmt16) is
    rejected with one error saying it has no per-sample score and cannot be read per prompt, without advising
    `--metric TASK=KEY` (every key it would name is a list, which costs every row again); a task with a scalar key
    beside such lists is advised that key alone. The other tasks of the folder are read. Before, the error advised
    `--metric wikitext=KEY, KEY one of them whose values are 0/1 outcomes or scores in [0, 1]` naming only lists."""
    d, ts = tmp_path / "acme__m5", "2026-03-01T10-00-00.000005"
    d.mkdir()
    def rows(metrics):
        return "".join(json.dumps({"doc_id": i, "doc": {"page": f"= Article {i} =\n\nSome text {i}."}, "target": "",
                                   "arguments": {"gen_args_0": {"arg_0": f"= Article {i} =\n\nSome text {i}."}},
                                   "resps": [[-12.5]], "filtered_resps": [-12.5], "filter": "none",
                                   "metrics": list(metrics(i)), **metrics(i)}) + "\n" for i in range(3))
    (d / f"samples_wikitext_{ts}.jsonl").write_text(rows(lambda i: {
        "word_perplexity": [-12.5 - i, 7], "byte_perplexity": [-12.5 - i, 40], "bits_per_byte": [-12.5 - i, 40]}))
    (d / f"samples_wmt16-de-en_{ts}.jsonl").write_text(rows(lambda i: {
        "bleu": [f"ref {i}", "pred"], "chrf": [f"ref {i}", "pred"], "bleu_score": 0.25 * i}))
    (d / f"samples_lambada_openai_{ts}.jsonl").write_text(rows(lambda i: {"perplexity": -1.5, "acc": i % 2}))
    (d / f"results_{ts}.json").write_text(json.dumps({
        "model_name": "acme/m5", "results": {"wikitext": {"word_perplexity,none": 20.1}, "wmt16-de-en": {},
                                             "lambada_openai": {"acc,none": 0.33}},
        "configs": {t: {"task": t} for t in ("wikitext", "wmt16-de-en", "lambada_openai")}}))
    b = read_source(d)
    assert [o.score for o in b.outcomes] == [0.0, 1.0, 0.0] and {o.benchmark for o in b.outcomes} == {"lambada_openai"}
    wiki, wmt = sorted((e for e in b.errors), key=lambda e: "wmt" in e.file)
    assert wiki.message == (
        "3 rows of task wikitext rejected: unknown metric: task wikitext has no per-sample score: each of its metrics "
        "(word_perplexity, byte_perplexity, bits_per_byte) holds a list or an object, what a corpus-level score "
        "(perplexity, BLEU, chrF, TER) is computed from over the whole task, not a score of the sample; such a task "
        "cannot be read per prompt: leave its file out of the source"), wiki.message
    assert "among bleu_score (bleu, chrf hold a list or an object, no per-sample score)" in wmt.message, wmt.message
    assert "pass metric='wmt16-de-en=KEY', KEY bleu_score if its values are 0/1 outcomes" in wmt.message, wmt.message


def test_a_model_folder_lm_eval_names_after_a_relative_path_is_read(tmp_path):
    """lm-eval names a model's folder `sanitize_model_name(model_name)` (each run of `/`, `:` ... becomes `__`,
    lm_eval/utils.py), so `--model_args pretrained=./ckpt` writes `<out>/.__ckpt/` and `pretrained=../ckpt` writes
    `<out>/..__ckpt/`: hidden folders. They are read as model folders (the model named by the results file); other
    hidden folders (`.git`, `.cache`) are still passed over. Before, `taskspace ingest <out>` said "cannot tell the
    format of this folder" and a pass stored nothing of such a run."""
    out = tmp_path / "out"
    for name in (".__ckpt", "..__ckpt-2"):
        shutil.copytree(LM_OUT / "fake-org__dummy-b", out / name)
        for f in (out / name).glob("results_*.json"):
            f.write_text(f.read_text().replace("fake-org/dummy-b", name.replace("__", "/")))
    shutil.copytree(LM_OUT / "fake-org__dummy-c", out / ".cache" / "fake-org__dummy-c")
    assert detect_format(out) == "lm_eval"
    batches = list(read_sources(out))
    assert [e for b in batches for e in b.errors] == []
    assert {o.model for b in batches for o in b.outcomes} == {"./ckpt", "../ckpt-2"}, [b.source for b in batches]
