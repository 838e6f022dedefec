"""Mutation checks of the test suite: each entry puts one deliberate one-line bug into the code, runs the tests that
must catch it, and restores the file. A mutant "survives" when those tests still pass: then the suite has a hole.

    .venv/bin/python scripts/mutants.py            # every mutant
    .venv/bin/python scripts/mutants.py cron 400   # the mutants whose names contain one of these words

Prints one line per mutant (caught / SURVIVED, the failing tests) and exits 1 when any survived. The mutants are
made in a copy of the checkout (a temporary folder, run with this checkout's interpreter and the copy first on
PYTHONPATH), so the checkout itself is never modified and another test run may go on beside it. docs/TESTING.md lists the mutants and what caught each.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_IGNORE = shutil.ignore_patterns(".venv", ".git", ".taskspace", "__pycache__", ".pytest_cache")


@dataclass
class Mutant:
    name: str
    path: str  # file under the checkout
    old: str  # an exact snippet, found exactly once
    new: str
    tests: list[str]  # pytest node ids or files that must fail


MUTANTS = [
    # -- issue 21, item 1: the two mutations the suite missed, and the Hub error paths
    Mutant("cron day-of-month AND day-of-week", "indexer/schedule.py",
           "croniter(self.expr, t.astimezone(self.tz)).get_next",
           "croniter(self.expr, t.astimezone(self.tz), day_or=False).get_next",
           ["tests/test_schedule.py"]),
    Mutant("hub ignores Retry-After", "indexer/hub.py",
           "max(retry_after, self.backoff * (2**attempt))", "max(0.0, self.backoff * (2**attempt))",
           ["tests/test_hub.py"]),
    Mutant("hub retries a 400", "indexer/hub.py",
           "RETRY_STATUS = (408, 429,", "RETRY_STATUS = (400, 408, 429,",
           ["tests/test_hub.py"]),
    Mutant("hub 401/403 message ignores the token", "indexer/hub.py",
           "    if has_token:\n        msg = (f\"the Hub refused", "    if not has_token:\n        msg = (f\"the Hub refused",
           ["tests/test_hub.py"]),
    Mutant("hub retries a 404", "indexer/hub.py",
           "return NotFoundError(f\"the {kind} {repo} does not exist on {endpoint} (or {private})\"), None",
           "return NotFoundError(f\"the {kind} {repo} does not exist on {endpoint} (or {private})\"), 0.0",
           ["tests/test_hub.py"]),
    Mutant("hub retries a bare 404", "indexer/hub.py",
           "return NotFoundError(f\"not found on the Hub: {repo} ({what})\"), None",
           "return NotFoundError(f\"not found on the Hub: {repo} ({what})\"), 0.0",
           ["tests/test_hub.py"]),
    Mutant("hub does not retry a dropped connection", "indexer/hub.py",
           "return HubUnreachableError(f\"cannot {what} {repo}: {why}\", why), 0.0",
           "return HubUnreachableError(f\"cannot {what} {repo}: {why}\", why), None",
           ["tests/test_hub.py"]),
    # -- item 2: exact counts (a pass that stops counting what it embedded passed the old `== 0 or == 8`)
    Mutant("pipeline does not count embedded texts", "indexer/pipeline.py",
           'report.counts["embedded"] = report.counts.get("embedded", 0) + len(texts)',
           'report.counts["embedded"] = report.counts.get("embedded", 0) + 0',
           ["tests/test_pipeline.py::test_second_run_with_nothing_new_does_no_work"]),
    # -- item 4: pinned evaluation numbers of the bundled sample (0.3 < auc < 1 let these through)
    Mutant("kNN baseline takes the farthest prompts", "indexer/represent.py",  # (its search: represent.nearest)
           "out[lo:lo + block] = np.argpartition(-sims, k - 1, axis=1)[:, :k]",
           "out[lo:lo + block] = np.argpartition(sims, k - 1, axis=1)[:, :k]",
           ["tests/test_evaluate.py::test_evaluate_oos_on_the_bundled_sample_json_shape"]),
    Mutant("kNN baseline k=3", "indexer/evaluate.py", "    knn_k: int = 5,", "    knn_k: int = 3,",
           ["tests/test_evaluate.py::test_evaluate_oos_on_the_bundled_sample_json_shape"]),
    # -- item 5: expectations from first principles (tests/reference.py), not from represent/design/the solver
    Mutant("solver drops the intercept", "indexer/solver/ridge.py",
           "a = sy / n - E @ mu if intercept else 0.0", "a = 0.0 * (sy / n - E @ mu) if intercept else 0.0",
           ["tests/test_pipeline.py::test_default_method_equals_a_first_principles_fit",
            "tests/test_query.py::test_queries_on_a_mixed_index_equal_a_first_principles_fit"]),
    Mutant("covariates swap question and option lengths", "indexer/features.py",
           "out[i] = (1.0, np.log1p(len(q)), np.log1p(len(o)), np.log(max(k, 1)))",
           "out[i] = (1.0, np.log1p(len(o)), np.log1p(len(q)), np.log(max(k, 1)))",
           ["tests/test_pipeline.py::test_default_method_equals_a_first_principles_fit",
            "tests/test_query.py::test_queries_on_a_mixed_index_equal_a_first_principles_fit"]),
    Mutant("index: a model seen only with options gets no own average elsewhere", "indexer/represent.py",
           "out[rows_, -1] = a[rows_] if free_seen else a[rows_] + own", "out[rows_, -1] = a[rows_]",
           ["tests/test_pipeline.py::test_default_method_equals_a_first_principles_fit",
            "tests/test_query.py::test_queries_on_a_mixed_index_equal_a_first_principles_fit"]),
    Mutant("query: a bare question's length column not scaled by p", "indexer/represent.py",
           "X[bare, d + 1] *= p", "X[bare, d + 1] *= 1.0",
           ["tests/test_query.py::test_queries_on_a_mixed_index_equal_a_first_principles_fit"]),
    Mutant("prior: not the models' mean normal", "indexer/solver/estimator.py",
           "        return E.mean(axis=0)", "        return E.mean(axis=0) * 0.5",
           ["tests/test_pipeline.py::test_default_method_equals_a_first_principles_fit"]),
    Mutant("coverage: the re-rank blends with the covered map only", "indexer/query.py",
           "return c * covered + (1.0 - c) * (uncovered + d0)",
           "return c * covered + (1.0 - c) * covered",
           ["tests/test_find.py::test_a_coverage_aware_map_reranks_by_each_models_coverage_exactly"]),
    Mutant("rebuild: the child writer drops the batches read before it started", "indexer/store/vectors_edge.py",
           "rest = itertools.chain(head, it)", "rest = it",
           ["tests/test_vectors.py::test_a_large_rebuild_written_by_a_child_process_holds_the_same_points"]),
    Mutant("rebuild: the child writer applies no batch", "indexer/store/edge_writer.py",
           "                    engine.apply(name, op)", "                    pass",
           ["tests/test_vectors.py::test_a_large_rebuild_written_by_a_child_process_holds_the_same_points"]),
    Mutant("bend: the probability ignores the knots", "indexer/posterior.py",
           "z = self.bend(self.a + offset + s) if self.folded", "z = (self.a + offset + s) if self.folded",
           ["tests/test_levels.py::test_the_bend_calibrates_a_shape_one_logistic_misses_and_keeps_the_order",
            "tests/test_publish.py::test_the_cards_example_runs_against_the_files"]),
    Mutant("bend: fitted on logits without the coverage weight", "indexer/posterior.py",
           "(c * g1 + (1.0 - c) * g0) * own", "g1 * own",
           ["tests/test_levels.py::test_the_level_map_is_bent_on_the_logits_the_index_gives_its_cells"]),
    Mutant("bend: the evaluation's default leaves its logits unbent", "indexer/evaluation/contestants.py",
           "np.tanh(0.5 * cal.bend(P))", "np.tanh(0.5 * np.asarray(P))",
           ["tests/test_evaluate.py::test_default_contestants_probabilities_bend_its_logits_as_the_index_does"]),
    Mutant("bend: the end knots' slope is the bend's, not 1", "indexer/posterior.py",
           "L[0] + (z - xs[0])", "L[0] + 2 * (z - xs[0])",
           ["tests/test_levels.py::test_the_bend_calibrates_a_shape_one_logistic_misses_and_keeps_the_order"]),
    Mutant("coverage: the nearest prompts are the farthest", "indexer/represent.py",
           "out[lo:lo + block] = np.argpartition(-sims, k - 1, axis=1)[:, :k]",
           "out[lo:lo + block] = np.argpartition(sims, k - 1, axis=1)[:, :k]",
           ["tests/test_levels.py::test_coverage_shares_and_the_folded_query_with_the_uncovered_weight"]),
    Mutant("coverage: the covered search filtered although a model is unmeasured", "indexer/query.py",
           "    return unmeasured is not None and not unmeasured(space.id)",
           "    return unmeasured is not None",
           ["tests/test_find.py::test_the_covered_search_is_filtered_to_models_fitted_near_unless_one_is_unmeasured"]),
    Mutant("intervals: the region variance left out of a one-weight map's search", "indexer/find.py",
           "        found = _matches(hits, pred, q, shares=None if shares is None else shares(hits))",
           "        found = _matches(hits, pred, q)",
           ["tests/test_find.py::test_a_models_interval_widens_by_the_region_variance_as_far_as_it_has_no_evidence"]),
    Mutant("intervals: the level weighed as the deviation", "indexer/posterior.py",
           "        return ((float(self.level) / self.scale) ** 2 - 1.0) * noise",
           "        return 0.0 * noise",
           ["tests/test_mc_path.py::test_probabilities_intervals_and_the_lower_bound_ranking"]),
    Mutant("coverage: the re-rank's inner products taken from the (size-penalised) searches", "indexer/query.py",
           "        for got, into in zip(vectors.scores_of(",
           "        raw1.update((h.key, float(h.score)) for h in h1[:fetch]); raw0.update((h.key, float(h.score)) for h in h0[:fetch])\n        for got, into in zip(vectors.scores_of(",
           ["tests/test_find.py::test_a_coverage_aware_map_with_prefer_smaller_ranks_by_the_blend_less_the_size_term"]),
    Mutant("coverage: the top keeps the candidates' partial payloads", "indexer/query.py",
           "            h.payload = got[h.key].payload", "            pass",
           ["tests/test_find.py::test_a_coverage_aware_map_reranks_by_each_models_coverage_exactly"]),
    Mutant("coverage: the candidates' two folded scores swapped", "indexer/query.py",
           "for x in (q1, q0)])", "for x in (q0, q1)])",
           ["tests/test_find.py::test_a_coverage_aware_map_reranks_by_each_models_coverage_exactly"]),
    Mutant("coverage: a benchmark query's neighbourhood is every prompt", "indexer/find.py",
           'own = vectors.search(name, "prompts", probe, filters={"benchmarks": {"all": [benchmark]}}, limit=NEAR_PROMPTS)',
           'own = vectors.search(name, "prompts", probe, limit=NEAR_PROMPTS)',
           ["tests/test_find.py::test_a_benchmark_querys_neighbourhood_is_its_own_prompts"]),
    Mutant("prior per answer format: shares not normalised", "indexer/solver/estimator.py",
           "                out[f] = W[:, f] @ E / total[f]", "                out[f] = W[:, f] @ E / (2.0 * total[f])",
           ["tests/test_solver_prior.py::test_a_prior_per_format_shrinks_each_model_toward_the_models_seen_on_its_formats"]),
    Mutant("ridge penalty lambda instead of 2 lambda (GCV path)", "indexer/solver/ridge.py",
           "    denom = w + 2.0 * lam", "    denom = w + lam",
           ["tests/test_pipeline.py::test_incremental_runs_equal_a_rebuild"]),
    Mutant("auto-text length covariate log instead of log1p", "indexer/features.py",
           "out[i, 0] = np.log1p(len(t))", "out[i, 0] = np.log(len(t))",
           ["tests/test_pipeline.py::test_incremental_runs_equal_a_rebuild"]),
    # -- item 6: the worker
    Mutant("worker lets an unexpected exception escape", "indexer/worker.py",
           "except Exception as exc:  # noqa: BLE001", "except ArithmeticError as exc:  # noqa: BLE001",
           ["tests/test_worker.py::test_worker_survives_an_unexpected_exception",
            "tests/test_worker.py::test_a_pass_failing_with_a_bug_is_recorded_and_retried"]),
    Mutant("worker ignores the second signal", "indexer/worker.py",
           "raise KeyboardInterrupt(f\"a second {signal.Signals(signum).name}\")  # second signal: leave now",
           "return  # second signal: leave now",
           ["tests/test_worker.py::test_cli_worker_second_signal_exits_at_once"]),
    Mutant("worker runs one pass too many", "indexer/worker.py",
           "self.passes >= self.max_passes", "self.passes > self.max_passes",
           ["tests/test_worker.py::test_cli_worker_max_passes_and_cron"]),
    Mutant("--cron schedule ignored (runs hourly)", "indexer/cli_index.py",
           "w = Worker(every or cron,", "w = Worker(every or \"1h\",",
           ["tests/test_worker.py::test_cli_worker_max_passes_and_cron"]),
    Mutant("CLI: typer's usage errors escape as tracebacks", "indexer/cli.py",
           "            sys.exit(_usage_error(exc))", "            raise",
           ["tests/test_cli.py::test_a_bad_option_value_is_a_usage_error_not_a_traceback",
            "tests/test_cli_search.py::test_search_bad_input_exit_codes"]),
    Mutant("pass: a failing source's error is not recorded", "indexer/ingest.py",
           "        self.errors.append(row_error(exc, where))", "        pass",
           ["tests/test_pipeline.py::test_a_pass_with_hub_sources_records_each_failing_source_and_indexes_the_rest"]),
    Mutant("pass: a failed source shown as unchanged", "indexer/pipeline.py",
           '                    status = "failed"', '                    status = "unchanged"',
           ["tests/test_pipeline.py::test_a_pass_with_hub_sources_records_each_failing_source_and_indexes_the_rest"]),
    Mutant("Qdrant 403 not explained as the API key", "indexer/store/vectors_qdrant.py",
           "if exc.status_code in (401, 403)", "if exc.status_code in (401,)",
           ["tests/test_qdrant_server_auth.py"]),
    Mutant("PostgreSQL pass: vectors of the solver without the prior", "indexer/solver/estimator.py",
           "        if len(self._models) >= PRIOR_MIN_MODELS:", "        if len(self._models) >= 1000:",
           ["tests/test_pipeline.py::test_a_full_pass_and_queries_on_postgresql"]),
    # -- session 32: damaged or missing files of the derived stores
    Mutant("damage: a rebuild does not replace an unreadable live collection", "indexer/store/vectors.py",
           "old = self._check_dim(space, kind, dim, replacing=True)", "old = self._check_dim(space, kind, dim)",
           ["tests/test_sync.py::test_a_live_collection_whose_folder_is_gone_is_reported_and_rebuilt",
            "tests/test_pipeline.py::test_a_pass_rebuilds_a_live_collection_whose_folder_is_gone"]),
    Mutant("damage: check fails on a damaged collection", "indexer/sync.py",
           '                    drift.problems.append(f"{kind} index cannot be read: {exc}")', "                    raise",
           ["tests/test_sync.py::test_a_live_collection_with_a_damaged_file_is_reported_and_rebuilt"]),
    Mutant("damage: a damaged embedding cache is not set aside", "indexer/encoder.py",
           'damaged = "malformed" in str(exc) or "not a database" in str(exc)', "damaged = False",
           ["tests/test_encoder.py::test_a_damaged_cache_file_is_set_aside_and_a_fresh_one_used"]),
    Mutant("damage: the CLI's handler looks up Abort in typer's click", "indexer/cli.py",
           'getattr(tclick, "Abort", click.exceptions.Abort)', "tclick.Abort",
           ["tests/test_cli.py::test_an_unexpected_error_escapes_as_itself"]),
]


def _only(words: list[str]) -> list[Mutant]:
    if not words:
        return MUTANTS
    return [m for m in MUTANTS if any(w.lower() in m.name.lower() for w in words)]


def run(m: Mutant, root: Path) -> tuple[bool, str]:
    """(caught, the failing tests or the tail of the output); ``root``: the copy of the checkout to mutate."""
    path = root / m.path
    original = path.read_text()
    if original.count(m.old) != 1:
        raise SystemExit(f"{m.name}: the snippet occurs {original.count(m.old)} times in {m.path}; update MUTANTS")
    try:
        path.write_text(original.replace(m.old, m.new))
        env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(root), TASKSPACE_TEST_SCRIPT=str(root / ".bin" / "taskspace"))
        res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", "-p", "no:randomly",
                              *m.tests], cwd=root, capture_output=True, text=True, env=env)
    finally:
        path.write_text(original)
    failed = re.findall(r"^FAILED (\S+)", res.stdout, re.M)
    return res.returncode != 0, ", ".join(failed) or res.stdout[-300:]


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("words", nargs="*", help="only the mutants whose names contain one of these words (any case)")
    words = ap.parse_args(argv).words
    chosen = _only(words)
    if not chosen:  # before: `--help` or a typo ran no mutant, printed nothing and exited 0, as if all were caught
        ap.error(f"no mutant's name contains {' or '.join(map(repr, words))}; the mutants: "
                 + "; ".join(m.name for m in MUTANTS))
    survived = 0
    with tempfile.TemporaryDirectory(prefix="taskspace-mutants-") as tmp:
        root = Path(tmp) / ROOT.name
        shutil.copytree(ROOT, root, ignore=_IGNORE)
        script = root / ".bin" / "taskspace"  # the console script, running the copy
        script.parent.mkdir()
        script.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(root)!r})\n"
                          "from indexer.cli import main\nsys.exit(main())\n")
        script.chmod(0o755)
        for m in chosen:
            caught, detail = run(m, root)
            survived += not caught
            print(f"{'caught  ' if caught else 'SURVIVED'}  {m.name}  [{m.path}]  {detail}", flush=True)
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
