"""The indexing pass: incremental runs equal a from-scratch rebuild; nothing new means no work; failures are
recorded per item; a pass killed anywhere is completed by the next one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from indexer import sync
from indexer.errors import NotFoundError
from indexer.pipeline import Indexer
from indexer.solver import HyperplaneSolver
from indexer.sourcelist import SourceSpec

from helpers import model_vectors, outcomes, write_table


@pytest.mark.parametrize("method", ["auto-text", "auto", "paper"])
def test_incremental_runs_equal_a_rebuild(tmp_path, env, encoder, monkeypatch, method):
    from indexer.config import reset_settings

    monkeypatch.setenv("TASKSPACE_METHOD", method)
    reset_settings()
    # the calibration map held however many models change (on 4 models a quarter is one), so that each pass solves
    # only the changed models: the vectors under test do not depend on the map (no prior under these methods)
    monkeypatch.setattr("indexer.space.REFIT_SHARE", 100.0)
    rng = np.random.default_rng(0)
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    out_a, out_b, out_c = (outcomes(rng, ["m1", "m2", "m3", "m4"], 12), outcomes(rng, ["m1", "m2", "m5"], 10),
                           outcomes(rng, ["m6"], 12))
    texts_a = write_table(a, "alpha", out_a, 12)
    texts_b = write_table(b, "beta", out_b, 10, offset=100)
    write_table(c, "alpha", out_c, 12)  # one more model on the same prompts

    ix = env()
    r1 = ix.run([SourceSpec(str(a))])
    assert r1.status == "ok" and r1.counts["solved"] == 4 and r1.counts["sources"] == 1
    r2 = ix.run([SourceSpec(str(b))])
    assert r2.counts["solved"] == 3  # m1, m2 (new benchmark) and m5; m3, m4 untouched
    assert r2.counts["sources_unchanged"] == 1
    r3 = ix.run([SourceSpec(str(c))])
    assert r3.counts["solved"] == 1 and r3.counts["embedded"] == 0  # same texts: nothing to embed
    incremental = model_vectors(ix)
    assert sorted(incremental) == ["m1", "m2", "m3", "m4", "m5", "m6"]
    assert all(d.clean for d in sync.check(ix.store, ix.vectors))

    # from scratch: all three sources in one pass, in another data directory
    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "fresh"))
    reset_settings()
    fresh = env()
    rf = fresh.run([SourceSpec(str(a)), SourceSpec(str(b)), SourceSpec(str(c))])
    assert rf.counts["solved"] == 6
    scratch = model_vectors(fresh)
    for m in incremental:
        np.testing.assert_allclose(incremental[m], scratch[m], rtol=0, atol=1e-6)

    # and both equal an independent fit (tests/reference.py: explicit least squares per model, no represent/solver)
    import reference

    (space,) = fresh.store.list_spaces()
    n_cov = 2 if method == "auto-text" else 0
    assert space.method == method and space.dim == 384 + n_cov + (method != "paper")
    texts = texts_a + texts_b
    X = np.asarray(encoder.encode(texts), dtype=np.float64)
    T = (np.array([[np.log1p(len(t)), np.log1p(t.count("\n") + 1)] for t in texts]) if n_cov
         else np.zeros((len(texts), 0)))  # auto-text's covariates: log1p(characters), log1p(lines)
    names = ["m1", "m2", "m3", "m4", "m5", "m6"]
    S = np.full((6, 22), np.nan)
    for out, cols in ((out_a, slice(0, 12)), (out_b, slice(12, 22)), (out_c, slice(0, 12))):
        for m, ys in out.items():
            S[names.index(m), cols] = ys
    if method == "paper":  # the paper: no intercept, lambda = TASKSPACE_LAMBDA (1), eps 0
        fits = reference.fit_all(X, T, S, intercept=False, lambdas=[1.0])
    else:  # auto, auto-text: intercept, lambda per model by GCV, no prior
        fits = reference.fit_all(X, T, S, intercept=True)
    for m, fit in zip(names, fits):
        want = fit.e if method == "paper" else np.r_[fit.e, fit.f, fit.a]  # stored as [e_i, (f_i,) c_i]
        np.testing.assert_allclose(scratch[m], want, rtol=1e-4, atol=1e-5, err_msg=m)


def test_second_run_with_nothing_new_does_no_work(tmp_path, env):
    rng = np.random.default_rng(1)
    write_table(tmp_path / "a", "nothing-new", outcomes(rng, ["m1", "m2"], 8), 8)  # texts no other test embeds
    ix = env()
    first = ix.run([SourceSpec(str(tmp_path / "a"))])
    assert first.counts["embedded"] == 8, first.counts
    again = ix.run()
    c = again.counts
    assert again.status == "ok" and again.exit_code == 0
    assert (c["sources"], c["sources_unchanged"], c["embedded"], c["solved"], c["benchmarks"], c["pushed"]) == (0, 1, 0, 0, 0, 0)
    assert c["rebuilt"] == []
    runs = ix.store.list_runs()
    assert [r.status for r in runs[:2]] == ["ok", "ok"]


def test_lambda_set_for_the_paper_method_builds_no_second_space_under_a_gcv_method(tmp_path, env, monkeypatch, caplog):
    """TASKSPACE_LAMBDA set under the default method, which chooses lambda per model by GCV: a warning that it is
    ignored, and the next pass has nothing to do; before, the value named another space, so the pass re-solved every
    model into a second space with the same vectors (and its searches looked there)."""
    import logging

    from indexer.config import reset_settings

    rng = np.random.default_rng(2)
    write_table(tmp_path / "a", "lambda-space", outcomes(rng, ["m1", "m2"], 8), 8)
    ix = env()
    assert ix.run([SourceSpec(str(tmp_path / "a"))]).counts["solved"] == 2
    monkeypatch.setenv("TASKSPACE_LAMBDA", "3")
    reset_settings()
    with caplog.at_level(logging.WARNING, logger="indexer.config"):
        again = Indexer(ix.store, ix.vectors, encoder=ix.encoder).run()
    assert "TASKSPACE_LAMBDA is set but TASKSPACE_METHOD=auto-mc chooses lambda per model" in caplog.text
    assert (again.counts["solved"], again.counts["pushed"]) == (0, 0), again.counts
    assert [(s.method, s.lam) for s in ix.store.list_spaces()] == [("auto-mc", 1.0)]
    monkeypatch.setenv("TASKSPACE_METHOD", "paper")  # the paper method reads it: its own space, at lambda 3
    reset_settings()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="indexer.config"):
        assert Indexer(ix.store, ix.vectors, encoder=ix.encoder).run().counts["solved"] == 2
    assert "TASKSPACE_LAMBDA is set" not in caplog.text
    assert sorted((s.method, s.lam) for s in ix.store.list_spaces()) == [("auto-mc", 1.0), ("paper", 3.0)]
    reset_settings()


def test_replaced_source_drops_a_models_vector_and_point(tmp_path, env):
    rng = np.random.default_rng(2)
    src = tmp_path / "a"
    write_table(src, "alpha", outcomes(rng, ["m1", "m2", "m3"], 8), 8)
    ix = env()
    ix.run([SourceSpec(str(src))])
    write_table(src, "alpha", outcomes(rng, ["m1", "m2"], 8), 8)  # m3 gone, m1/m2 changed
    r = ix.run()
    assert r.counts["removed"] == 1 and r.counts["solved"] == 2
    assert sorted(model_vectors(ix)) == ["m1", "m2"]
    assert all(d.clean for d in sync.check(ix.store, ix.vectors))


def test_a_failing_source_is_recorded_and_the_rest_indexed(tmp_path, env):
    rng = np.random.default_rng(3)
    write_table(tmp_path / "good", "alpha", outcomes(rng, ["m1"], 6), 6)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "outcomes.csv").write_text("model,prompt_id,correct\nm9,p1,2\n")
    (bad / "prompts.jsonl").write_text('{"prompt_id": "p1", "benchmark": "x", "text": "Is this fine?"}\n')
    ix = env()
    r = ix.run([SourceSpec(str(bad)), SourceSpec(str(tmp_path / "good"))])
    assert r.status == "partial" and r.exit_code == 1
    assert any("outcomes.csv" in (e["file"] or "") for e in r.errors)
    assert "m1" in model_vectors(ix)
    assert ix.store.list_runs()[0].status == "partial"


KILL_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    from indexer import pipeline, sync
    from indexer.store import sql_derived, vectors
    point = sys.argv[1]

    def die(*a, **k):
        os.kill(os.getpid(), signal.SIGKILL)

    if point == "after-ingest":
        pipeline.Indexer._space = die
    elif point == "after-vectors":
        real = sql_derived.DerivedMixin.save_model_vectors
        def save(self, *a, **k):
            real(self, *a, **k)
            die()
        sql_derived.DerivedMixin.save_model_vectors = save
    elif point == "mid-rebuild":
        real_rebuild = vectors.VectorStore.rebuild
        def rebuild(self, space, kind, points, **k):
            def gen():
                for i, p in enumerate(points):
                    if kind == "prompts" and i == 5:
                        die()
                    yield p
            return real_rebuild(self, space, kind, gen(), **k)
        vectors.VectorStore.rebuild = rebuild
    from indexer.cli import main
    sys.argv = ["taskspace", "index"] + sys.argv[2:]
    main()
    """
)


@pytest.mark.parametrize("point", ["after-ingest", "after-vectors", "mid-rebuild"])
def test_kill_9_mid_run_then_next_run_completes(tmp_path, env, point, monkeypatch):
    rng = np.random.default_rng(4)
    write_table(tmp_path / "a", "alpha", outcomes(rng, ["m1", "m2", "m3"], 10), 10)
    script = tmp_path / "kill.py"
    script.write_text(KILL_SCRIPT)
    res = subprocess.run([sys.executable, str(script), point, "--source", str(tmp_path / "a")],
                         capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert res.returncode == -signal.SIGKILL, res.stderr[-2000:]
    ix = env()
    assert ix.store.list_runs()[0].status == "running"  # the killed run is visible as unfinished
    r = ix.run()
    assert r.status == "ok", r.errors
    drifts = sync.check(ix.store, ix.vectors)
    assert all(d.clean and not d.orphans for d in drifts)
    killed = ix.store.list_runs()[1]
    assert killed.status == "killed" and killed.finished_at is not None  # marked when the lock was next taken
    assert r.counts["killed_runs_marked"] == [killed.id]
    got = model_vectors(ix)
    assert sorted(got) == ["m1", "m2", "m3"]
    # equal to an uninterrupted run in another data directory
    from indexer.config import reset_settings

    monkeypatch.setenv("TASKSPACE_HOME", str(tmp_path / "clean"))
    reset_settings()
    clean = env()
    clean.run([SourceSpec(str(tmp_path / "a"))])
    want = model_vectors(clean)
    for m in want:
        np.testing.assert_allclose(got[m], want[m], atol=1e-6)


def test_progress_bars_on_a_terminal_give_the_same_result(tmp_path, env, capsys):
    """With progress enabled (a terminal), bars wrap ingest, solve (in model chunks) and upserts; same vectors."""
    from indexer.pipeline import Progress

    rng = np.random.default_rng(6)
    outs = outcomes(rng, [f"m{i}" for i in range(300)], 6)
    texts = write_table(tmp_path / "a", "alpha", outs, 6)
    ix = env()
    ix.progress = Progress(True)
    r = ix.run([SourceSpec(str(tmp_path / "a"))])
    assert r.status == "ok" and r.counts["solved"] == 300
    err = capsys.readouterr().err
    assert "solve" in err and "upsert" in err
    # an independent fit (tests/reference.py): prompts without options, so rows [E(text), 0...] and no covariates;
    # 300 models: the mean prior; stored as [e_q, e_o = 0, f = 0, c_mc, c_free] with both intercepts c_i
    import reference

    X = np.asarray(ix.encoder.encode(texts), dtype=np.float64)
    S = np.array([outs[m] for m in outs], dtype=float)
    fits = reference.fit_all(np.hstack([X, np.zeros_like(X)]), np.zeros((6, 4)), S, intercept=True, prior="mean")
    got = model_vectors(ix)
    for m, fit in zip(outs, fits):
        v = got[m]
        np.testing.assert_allclose(v[:384], fit.e[:384], rtol=1e-4, atol=1e-6, err_msg=m)
        assert not v[384:-2].any() and v[-2:] == pytest.approx([fit.a, fit.a], abs=1e-5)


def test_a_model_that_cannot_be_solved_is_recorded_and_the_others_saved(tmp_path, env, monkeypatch):
    """A failing model (here: the solver rejects it) is an error of the run; the others get vectors; the next
    pass retries it (its vector is still missing, so it is still stale)."""
    from indexer.errors import InputError

    rng = np.random.default_rng(7)
    write_table(tmp_path / "a", "alpha", outcomes(rng, ["good1", "bad", "good2"], 6), 6)
    real = HyperplaneSolver.add_models

    def add_models(self, S, model_ids=None):
        if "bad" in list(model_ids or []):
            raise InputError("rejected for the test", item="model bad")
        return real(self, S, model_ids)

    monkeypatch.setattr(HyperplaneSolver, "add_models", add_models)
    ix = env()
    r = ix.run([SourceSpec(str(tmp_path / "a"))])
    assert r.status == "partial" and r.counts["solved"] == 2
    assert any(e.get("item") == "bad" for e in r.errors)
    assert sorted(model_vectors(ix)) == ["good1", "good2"]
    monkeypatch.setattr(HyperplaneSolver, "add_models", real)
    again = ix.run()
    # the map was fitted on 2 models, one (a half) changed since: every model solved, the map fitted on all three
    assert again.status == "ok" and again.counts["solved"] == 3
    assert sorted(model_vectors(ix)) == ["bad", "good1", "good2"]


def test_stop_between_sources_records_a_stopped_run_and_the_next_pass_finishes(tmp_path, env):
    rng = np.random.default_rng(8)
    write_table(tmp_path / "a", "alpha", outcomes(rng, ["m1"], 6), 6)
    write_table(tmp_path / "b", "beta", outcomes(rng, ["m2"], 6), 6, offset=50)
    ix = env()
    from indexer import ingest

    real = ingest.Ingester.ingest_path

    def ingest_then_stop(self, *a, **k):
        real(self, *a, **k)
        ix.stop.set()  # as SIGTERM would, while the first source is being read

    ingest.Ingester.ingest_path = ingest_then_stop
    try:
        r = ix.run([SourceSpec(str(tmp_path / "a")), SourceSpec(str(tmp_path / "b"))])
    finally:
        ingest.Ingester.ingest_path = real
    assert r.status == "stopped" and r.counts["sources"] == 1 and r.counts["solved"] == 0
    ix.stop.clear()
    again = ix.run()
    assert again.status == "ok" and again.counts["sources"] == 1 and again.counts["solved"] == 2
    assert sorted(model_vectors(ix)) == ["m1", "m2"]


def test_a_stop_during_the_solve_publishes_what_it_saved_the_index_in_step_with_sql(tmp_path, env, monkeypatch):
    """SIGTERM (the worker's stop) while a pass solves: the solved vectors, calibration and benchmark vectors are saved
    to SQL and the pass then pushes them to the index before it stops (`stopped`), so SQL and the index agree. Before,
    it stopped between the two: SQL held the new vectors and calibration, the index the old points and none of the
    new models, and every query (a restarted server's until its first pass published, `taskspace search`, a server
    without --worker-every for good) ranked the old points under the new calibration."""
    rng = np.random.default_rng(8)
    write_table(tmp_path / "a", "alpha", outcomes(rng, ["m1", "m2"], 6), 6)
    ix = env()
    assert ix.run([SourceSpec(str(tmp_path / "a"))]).status == "ok"
    write_table(tmp_path / "b", "beta", outcomes(rng, ["m1", "m3"], 6), 6, offset=50)
    real = HyperplaneSolver.add_models

    def solve_then_stop(self, S, model_ids=None):
        ix.stop.set()  # as SIGTERM would, while the models are being solved
        return real(self, S, model_ids)

    monkeypatch.setattr(HyperplaneSolver, "add_models", solve_then_stop)
    r = ix.run([SourceSpec(str(tmp_path / "b"))])
    # m1 and m3 changed, a quarter of the 2 models the map was fitted on and more: every model solved, the map refitted
    assert r.status == "stopped" and r.counts["solved"] == 3 and r.counts["benchmarks"] == 1
    assert all(d.clean for d in sync.check(ix.store, ix.vectors)), [d.as_dict() for d in sync.check(ix.store, ix.vectors)]
    assert sorted(model_vectors(ix)) == ["m1", "m2", "m3"]


def test_an_interrupt_is_recorded_and_reraised(tmp_path, env, monkeypatch):
    rng = np.random.default_rng(9)
    write_table(tmp_path / "a", "alpha", outcomes(rng, ["m1"], 6), 6)
    ix = env()

    def ctrl_c(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(Indexer, "_space", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        ix.run([SourceSpec(str(tmp_path / "a"))])
    run = ix.store.list_runs()[0]
    assert run.status == "interrupted" and "run aborted" in run.errors[0]["message"]


def test_an_interrupt_stays_an_interrupt_when_its_run_cannot_be_recorded(tmp_path, env, monkeypatch):
    """Ctrl-C or SIGTERM during a pass whose run record cannot be written (the SQLite database locked past its busy
    timeout): the pass still ends with the interrupt (exit 130/143), a warning says the run was not recorded and the
    next pass marks it killed. Before, the BusyError of the record replaced it: `taskspace demo` sent SIGTERM exited 6
    "another process kept the SQLite database ... locked for over 30 s" (CI, twice this session)."""
    from indexer.errors import BusyError

    write_table(tmp_path / "a", "alpha", outcomes(np.random.default_rng(9), ["m1"], 6), 6)
    ix = env()

    def ctrl_c(self):
        raise KeyboardInterrupt

    def locked(*args, **kwargs):
        raise BusyError("writing to the database failed, nothing of it was saved: another process kept it locked")

    monkeypatch.setattr(Indexer, "_space", ctrl_c)
    monkeypatch.setattr(type(ix.store), "finish_run", locked)
    with pytest.raises(KeyboardInterrupt):
        ix.run([SourceSpec(str(tmp_path / "a"))])
    monkeypatch.undo()
    again = ix.run()
    assert again.status == "ok" and again.counts.get("killed_runs_marked") == [1]


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_an_interrupted_runs_error_says_what_interrupted_it(tmp_path, env, monkeypatch, how):
    """The error an interrupted pass records (`taskspace runs` prints it) names the interrupt: Ctrl-C, or SIGTERM to
    `taskspace index` (its handler, indexer.cli_index.interrupt_on_sigterm); before, it read "run aborted: " and
    nothing more (a KeyboardInterrupt has no message)."""
    from indexer import cli_index

    write_table(tmp_path / "a", "alpha", outcomes(np.random.default_rng(9), ["m1"], 6), 6)
    ix = env()

    def interrupt(self):
        if how == "ctrl-c":
            raise KeyboardInterrupt
        os.kill(os.getpid(), signal.SIGTERM)  # the handler raises in this (the main) thread
        raise AssertionError("SIGTERM did not interrupt the pass")  # not reached: the handler raised

    monkeypatch.setattr(Indexer, "_space", interrupt)
    monkeypatch.setattr(cli_index, "terminated", [])
    previous = signal.getsignal(signal.SIGTERM)
    try:
        if how == "sigterm":
            cli_index.interrupt_on_sigterm()
        with pytest.raises(KeyboardInterrupt):
            ix.run([SourceSpec(str(tmp_path / "a"))])
    finally:
        signal.signal(signal.SIGTERM, previous)
    run = ix.store.list_runs()[0]
    said = {"ctrl-c": "interrupted (Ctrl-C)", "sigterm": "terminated (SIGTERM)"}[how]
    assert run.status == "interrupted" and run.errors[0]["message"] == f"run aborted: {said}", run.errors


def _two_models_indexed(tmp_path, env, seed: int):
    """One pass over two models on one benchmark (folder ``a``): the indexer, its space, the space's index name and
    the random generator that made the outcomes."""
    from indexer.space import space_name

    rng = np.random.default_rng(seed)
    write_table(tmp_path / "a", "alpha", outcomes(rng, ["m1", "m2"], 8), 8)
    ix = env()
    assert ix.run([SourceSpec(str(tmp_path / "a"))]).status == "ok"
    (space,) = ix.store.list_spaces()
    return ix, space, space_name(space), rng


def test_a_killed_reindex_is_marked_and_its_orphan_dropped_by_the_next_pass(tmp_path, env):
    """A `taskspace reindex` killed mid-rebuild leaves a run "running" and a collection no alias points at. Before,
    `taskspace runs` showed it running forever and the orphan survived every `index` until the next reindex."""
    ix, space, name, _ = _two_models_indexed(tmp_path, env, seed=8)
    run_id = ix.store.start_run("reindex")  # what the killed process left
    orphan = ix.vectors._create(name, "prompts", space.dim)  # a rebuild's fresh collection, never aliased
    assert sync.check(ix.store, ix.vectors)[0].orphans == [orphan]
    r = ix.run()
    assert r.status == "ok" and r.counts["orphans_dropped"] == [orphan]
    assert r.counts["killed_runs_marked"] == [run_id] and ix.store.get_run(run_id).status == "killed"
    assert sync.check(ix.store, ix.vectors)[0].orphans == []
    assert ix.run().counts.get("killed_runs_marked") is None


def test_default_method_equals_a_first_principles_fit(tmp_path, env, encoder):
    """The default method (auto-mc) on prompts with and without answer options: every stored model vector, and the
    score it gives each indexed prompt, equal an independent fit (tests/reference.py: explicit least squares per
    model and lambda in sample space, the rows built here from each prompt's own question, options and counts;
    no represent/design/solver code)."""
    import reference
    from helpers import MIXED_MODELS, mixed_outcomes, mixed_parts, write_mixed

    quiz, tasks = write_mixed(tmp_path)
    ix = env()
    r = ix.run([SourceSpec(str(quiz)), SourceSpec(str(tasks))])
    assert r.status == "ok" and r.counts["solved"] == 7
    got = model_vectors(ix)
    (space,) = ix.store.list_spaces()
    assert space.method == "auto-mc" and space.dim == 2 * 384 + 4 + 2 + 2 + 2
    # a prior per answer format, but with 7 models neither format has 5 models' worth of shares (m1-m5 are on both):
    # each format's prior is the mean of all (the reference's 'mean'; the per-format estimate: test_solver_prior.py)
    from indexer import represent

    u = represent.prior_matrix(ix.store.get_space_prior(space.id).vector, space)
    assert u.shape == (2, 2 * 384) and np.array_equal(u[0], u[1])

    Xq, Xo, T, is_mc = mixed_parts(encoder.encode)
    fits = reference.fit_all(np.hstack([Xq, Xo]), T, mixed_outcomes(), intercept=True, prior="mean")
    d = 384
    for name, fit in zip(MIXED_MODELS, fits):
        v = got[name]
        np.testing.assert_allclose(v[:d], fit.e[:d], rtol=1e-4, atol=1e-6, err_msg=name)  # question half
        if name == "free-only":  # never observed with options: no options part, no covariates
            assert not v[d:2 * d + 4].any()
        else:
            np.testing.assert_allclose(v[d:2 * d], fit.e[d:], rtol=1e-4, atol=1e-6, err_msg=name)
    # every model's score at every indexed prompt, through the stored vectors and index rows [q, o, t, m, 1 - m]
    m = is_mc.astype(float)
    rows = np.hstack([Xq, Xo, T, m[:, None], 1.0 - m[:, None]])
    want = reference.mc_scores(fits, Xq, Xo, T, m, is_mc, Xo, T)
    stored = np.stack([got[name] for name in MIXED_MODELS])
    np.testing.assert_allclose(stored @ rows.T, want, atol=1e-4)
    # the fits are not degenerate: lambdas inside the grid for most models, and the models differ
    assert sum(reference.GRID[0] < f.lam < reference.GRID[-1] for f in fits) >= 4
    assert np.ptp(want, axis=0).max() > 0.5


def test_a_pass_with_hub_sources_records_each_failing_source_and_indexes_the_rest(tmp_path, env, hub_server):
    """Sources from the (local) Hub beside a local one: a readable Hub dataset is ingested; a gated one (no token), a
    missing one and one whose listing keeps answering 503 are each recorded as that source's error (status `failed`,
    the spec named, the reason said) and retried by the next pass; the run is `partial` (exit 1), and every
    model of the readable sources gets its vector."""
    from indexer.hub import HubClient

    rng = np.random.default_rng(12)
    write_table(tmp_path / "local", "hub-pass", outcomes(rng, ["local/m1", "local/m2"], 6), 6)
    good, gated = "hub:open-llm-leaderboard/fake-org__tiny-lb-details", "hub:open-llm-leaderboard/fake-org__gated-details"
    missing, flaky = "hub:fake-org/no-such-results", "hub:fake-org/lm-eval-results"
    hub_server.fail("/api/datasets/fake-org/lm-eval-results", [503] * 50)
    sleeps = []
    ix = env()
    ix.hub = HubClient(retries=2, backoff=0.01, sleep=sleeps.append)
    specs = [SourceSpec(good), SourceSpec(gated), SourceSpec(missing), SourceSpec(flaky), SourceSpec(str(tmp_path / "local"))]
    r = ix.run(specs)
    assert r.status == "partial" and r.exit_code == 1
    status = {s["spec"]: s["status"] for s in r.sources}
    assert status == {good: "ingested", gated: "failed", missing: "failed", flaky: "failed",
                      str(tmp_path / "local"): "ingested"}
    by_source = {}
    for e in r.errors:
        by_source.setdefault(next(s for s in (gated, missing, flaky) if s.split(":", 1)[1] in (e["file"] or "") + e["message"]), []).append(e["message"])
    assert set(by_source) == {gated, missing, flaky}
    assert "gated" in by_source[gated][0] and "HF_TOKEN" in by_source[gated][0]
    assert "does not exist" in by_source[missing][0] or "not found" in by_source[missing][0]
    assert "503" in by_source[flaky][0] and len(sleeps) == 2
    vectors = model_vectors(ix)
    assert {"local/m1", "local/m2"} <= set(vectors) and len(vectors) > 2  # the Hub dataset's model(s) too
    run = ix.store.list_runs()[0]
    assert run.status == "partial" and len(run.errors) == len(r.errors)  # recorded with the run
    hub_server._faults.clear()
    again = ix.run()  # the next pass retries the failed sources: the flaky one now reads
    status = {s["spec"]: s["status"] for s in again.sources}
    assert status[flaky] == "ingested" and status[good] == "unchanged" and status[gated] == "failed"
    assert again.status == "partial" and len(again.errors) == 2


def test_a_model_renamed_on_the_hub_after_it_was_indexed_leaves_no_point_under_its_old_id(tmp_path, env, hub_server,
                                                                                           monkeypatch):
    """A model indexed under its Hub id, whose repo is renamed later (the Hub redirects the old id): the pass that
    refreshes its metadata moves it to the new id, and its point under the old id is dropped as the new one is
    pushed, so the index holds one point per model (`check` clean, no reindex). Before, the old point stayed beside
    the new: `models` and `search` listed the model twice and `check` reported an extra point."""
    import json
    from datetime import timedelta

    import indexer.ingest as ingest_mod

    old = hub_server.root / "models" / "fake-org" / "old-name"
    old.mkdir(parents=True)
    (old / "config.json").write_text("{}")
    (old / "_info.json").write_text(json.dumps({"cardData": {"license": "mit"}}))
    rng = np.random.default_rng(5)
    write_table(tmp_path / "src", "renamed", outcomes(rng, ["fake-org/old-name", "fake-org/tiny-lb"], 8), 8)
    ix = env()
    assert ix.run([SourceSpec(str(tmp_path / "src"))]).exit_code == 0
    (space_name_,) = [d.space for d in sync.check(ix.store, ix.vectors)]
    assert {h.key for h in ix.vectors.scan(space_name_, "models")} == {"fake-org/old-name", "fake-org/tiny-lb"}
    old.rename(old.parent / "new-name")  # the Hub renames the repo
    hub_server.rename("model", "fake-org/old-name", "fake-org/new-name")
    monkeypatch.setattr(ingest_mod, "METADATA_MAX_AGE", timedelta(0))  # the stored metadata is due
    assert ix.run().exit_code == 0
    assert [m.key for m in ix.store.list_models()] == ["fake-org/new-name", "fake-org/tiny-lb"]
    assert {h.key for h in ix.vectors.scan(space_name_, "models")} == {"fake-org/new-name", "fake-org/tiny-lb"}
    drift = sync.check(ix.store, ix.vectors)
    assert all(d.clean for d in drift), drift


def test_a_full_pass_and_queries_on_postgresql(tmp_path, pg_url, encoder, monkeypatch):
    """The indexing pass and the queries on PostgreSQL (not only the store's own tests): the mixed index's model
    vectors and scores equal the first-principles fit (tests/reference.py), a second pass does no work, and a
    benchmark query ranks as the fit says."""
    import reference
    from helpers import MIXED_MODELS, mixed_outcomes, mixed_parts, write_mixed
    from indexer.config import reset_settings
    from indexer.query import find_models
    from indexer.store.sql import Store
    from indexer.store.vectors import VectorStore

    monkeypatch.setenv("TASKSPACE_DATABASE_URL", pg_url)
    reset_settings()
    quiz, tasks = write_mixed(tmp_path)
    store = Store(pg_url, upgrade=True)
    vectors = VectorStore.from_settings()
    try:
        assert store.dialect == "postgresql"
        ix = Indexer(store, vectors, encoder=encoder)
        r = ix.run([SourceSpec(str(quiz)), SourceSpec(str(tasks))])
        assert r.status == "ok" and r.counts["solved"] == 7
        again = ix.run()
        assert again.status == "ok" and (again.counts["solved"], again.counts["embedded"], again.counts["sources"]) == (0, 0, 0)
        Xq, Xo, T, is_mc = mixed_parts(encoder.encode)
        fits = reference.fit_all(np.hstack([Xq, Xo]), T, mixed_outcomes(), intercept=True, prior="mean")
        m = is_mc.astype(float)
        want = reference.mc_scores(fits, Xq, Xo, T, m, is_mc, Xo, T)
        got = model_vectors(ix)
        rows = np.hstack([Xq, Xo, T, m[:, None], 1.0 - m[:, None]])
        np.testing.assert_allclose(np.stack([got[n] for n in MIXED_MODELS]) @ rows.T, want, atol=1e-4)
        ranked = {x.model: x.score for x in find_models(benchmark="quiz", top=7, store=store, vectors=vectors)}
        assert ranked == pytest.approx(dict(zip(MIXED_MODELS, want[:, :8].mean(axis=1))), abs=1e-4)
        assert sync.check(store, vectors)[0].clean
    finally:
        vectors.close()
        store.close()


@pytest.mark.postgres
@pytest.mark.parametrize("taken", [False, True])
def test_a_pass_whose_lock_session_is_ended_takes_it_again_or_stops(tmp_path, pg_url, encoder, monkeypatch, taken):
    """PostgreSQL ending the session that holds a pass's 'index' lock after its ingest (`pg_terminate_backend`, a
    restart): the pass takes the lock again before its next stage and completes (`ok`); when another process took it
    meanwhile (a waiting worker), the pass stops there (BusyError, exit 6), its run recorded `failed` saying why,
    and the next pass completes the index. Before, the pass ran on without the lock beside the other one, which
    marked its run `killed` while it ran."""
    from helpers import lose_lock_session
    from indexer.config import reset_settings
    from indexer.errors import BusyError
    from indexer.store.sql import Store
    from indexer.store.vectors import VectorStore

    monkeypatch.setenv("TASKSPACE_DATABASE_URL", pg_url)
    reset_settings()
    write_table(tmp_path / "a", "alpha", outcomes(np.random.default_rng(5), ["m1", "m2", "m3"], 10), 10)
    store, other = Store(pg_url, upgrade=True), Store(pg_url)
    vectors = VectorStore.from_settings()
    held_by_other = []
    merge = store.merge_model_names

    def merge_then_lose_the_lock():  # after the ingest loop, before the next stage
        out = merge()
        lose_lock_session(other, taken, held_by_other)
        return out

    monkeypatch.setattr(store, "merge_model_names", merge_then_lose_the_lock)
    try:
        ix = Indexer(store, vectors, encoder=encoder)
        if not taken:
            save, refused = store.save_model_vectors, []

            def save_while_a_second_pass_tries(*args, **kwargs):  # the pass holds the lock again: a second is refused
                try:
                    with other.lock("index"):
                        refused.append(False)
                except BusyError:
                    refused.append(True)
                return save(*args, **kwargs)

            monkeypatch.setattr(store, "save_model_vectors", save_while_a_second_pass_tries)
            r = ix.run([SourceSpec(str(tmp_path / "a"))])
            assert r.status == "ok" and r.counts["solved"] == 3 and refused == [True], refused
            with pytest.raises(BusyError):  # the pass held it again to its end; now free, and taken by nobody else
                with other.lock("index"), store.lock("index"):
                    pass
            return
        with pytest.raises(BusyError, match="another taskspace process took it"):
            ix.run([SourceSpec(str(tmp_path / "a"))])
        (run,) = store.list_runs()
        assert run.status == "failed" and "this pass stops here" in run.errors[0]["message"], run
        assert not store.list_spaces()  # it stopped before its setup stage: nothing solved beside the other pass
        held_by_other.pop().__exit__(None, None, None)
        monkeypatch.setattr(store, "merge_model_names", merge)
        r = ix.run()
        assert r.status == "ok" and r.counts["solved"] == 3
    finally:
        for cm in held_by_other:
            cm.__exit__(None, None, None)
        vectors.close()
        other.close()
        store.close()


def test_a_pass_rebuilds_a_live_collection_whose_folder_is_gone(tmp_path, env):
    """A pass that pushes new model vectors into a models collection whose folder was removed rebuilds it from SQL
    instead of failing on it."""
    import shutil

    ix, space, name, rng = _two_models_indexed(tmp_path, env, seed=11)
    gone = ix.vectors.alias_target(name, "models")
    ix.vectors.close()
    shutil.rmtree(ix.vectors.path / "models" / gone)
    ix = env()
    write_table(tmp_path / "b", "beta", outcomes(rng, ["m1", "m3"], 8), 8)
    r = ix.run([SourceSpec(str(tmp_path / "b"))])
    assert r.status == "ok", r.errors
    assert "models" in r.counts["rebuilt"] and ix.vectors.alias_target(name, "models") != gone
    assert all(d.clean for d in sync.check(ix.store, ix.vectors))


@pytest.mark.parametrize("removed", ["all", "prompts", "collection"])
def test_a_pass_with_nothing_new_rebuilds_an_index_folder_removed_by_hand(tmp_path, env, removed):
    """The index folder (or one kind's) removed by hand: before, a pass with nothing new did not open the index, so
    it reported nothing to do and every search failed until a `taskspace reindex` or a pass with new results. Now
    the pass notices the folder is gone (a stat, the index not opened) and rebuilds it from SQL; a pass over an
    intact index still opens nothing."""
    import shutil

    ix, space, name, _ = _two_models_indexed(tmp_path, env, seed=12)
    root, live = ix.vectors.path, ix.vectors.alias_target(name, "models")
    ix.vectors.close()
    shutil.rmtree({"all": root, "prompts": root / "prompts", "collection": root / "models" / live}[removed])
    if removed == "all":  # a search in between opens the store: it leaves empty kind folders, which are no index
        looker = env()
        with pytest.raises(NotFoundError, match="reindex"):
            looker.vectors.search(name, "models", np.ones(space.dim, dtype=np.float32))
        looker.vectors.close()
    ix = env()
    r = ix.run()
    assert r.status == "ok", r.errors
    want = {"all": ["benchmarks", "models", "prompts"], "prompts": ["prompts"], "collection": ["models"]}[removed]
    assert r.counts["rebuilt"] == want
    assert all(d.clean for d in sync.check(ix.store, ix.vectors))
    hits = ix.vectors.search(name, "models", np.ones(space.dim, dtype=np.float32), limit=5)
    assert sorted(h.key for h in hits) == ["m1", "m2"]
    ix.vectors.close()
    ix = env()
    r = ix.run()
    assert r.counts["rebuilt"] == [] and ix.vectors._clients == {}  # intact: nothing rebuilt, no kind opened


def _write_membership(folder, benches: dict[str, str], outcomes: dict[str, list[int]]) -> None:
    """prompts.jsonl (text -> its benchmark) + outcomes.csv (model -> 0/1 per text, in the dict's order)."""
    import csv
    import json

    folder.mkdir(parents=True, exist_ok=True)
    texts = list(benches)
    with open(folder / "prompts.jsonl", "w") as f:
        for j, t in enumerate(texts):
            f.write(json.dumps({"prompt_id": f"p{j}", "benchmark": benches[t], "text": t}) + "\n")
    with open(folder / "outcomes.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "prompt_id", "correct"])
        for m, ys in outcomes.items():
            for j, y in enumerate(ys):
                w.writerow([m, f"p{j}", int(y)])


def test_a_source_that_edits_renames_or_drops_prompts_leaves_no_stale_benchmark_membership(tmp_path, env):
    from indexer.space import space_name

    rng = np.random.default_rng(7)
    src = tmp_path / "a"
    texts = [f"Membership question {j} on {['algebra', 'poetry', 'law', 'chemistry'][j % 4]}: item {j}?" for j in range(8)]
    ys = {m: list(rng.integers(0, 2, 8)) for m in ("m1", "m2", "m3")}
    _write_membership(src, {t: "alpha" for t in texts}, ys)
    ix = env()
    ix.run([SourceSpec(str(src))])
    # the next revision: the text of prompt 0 edited, prompts 6 and 7 moved to benchmark beta
    edited = ["Membership question 0, reworded: algebra item 0?"] + texts[1:]
    _write_membership(src, {t: ("beta" if j >= 6 else "alpha") for j, t in enumerate(edited)}, ys)
    r = ix.run()
    assert r.exit_code == 0, r.errors
    counts = {b.name: b.n_prompts for b in ix.store.list_benchmarks()}
    assert counts == {"alpha": 6, "beta": 2}
    alpha = set(ix.store.prompt_texts(ix.store.benchmark_prompts("alpha")))
    assert alpha == set(edited[:6])
    space = ix.store.list_spaces()[0]
    vecs = {bv.benchmark: bv.n_prompts for bv in ix.store.load_benchmark_vectors(space.id)}
    assert vecs == {"alpha": 6, "beta": 2}
    name = space_name(space)
    assert all(d.clean for d in sync.check(ix.store, ix.vectors))
    assert ix.vectors.count(name, "prompts") == 8  # the old text of prompt 0 is no longer an indexed prompt
    # the revision after: benchmark beta's prompts gone from the source
    _write_membership(src, {t: "alpha" for t in edited[:6]}, {m: y[:6] for m, y in ys.items()})
    r = ix.run()
    assert r.exit_code == 0, r.errors
    assert {b.name: b.n_prompts for b in ix.store.list_benchmarks()} == {"alpha": 6}
    assert {bv.benchmark for bv in ix.store.load_benchmark_vectors(space.id)} == {"alpha"}
    assert all(d.clean for d in sync.check(ix.store, ix.vectors))
    assert ix.vectors.count(name, "benchmarks") == 1
    # the source dropped (`taskspace sources drop`): its benchmark goes with it, from SQL and from the index
    from indexer import sourcelist

    sourcelist.remove(ix.settings.sources_file, str(src))
    assert ix.store.delete_source(str(src))
    assert ix.store.list_benchmarks() == []
    r = ix.run()
    assert r.exit_code == 0, r.errors
    assert ix.vectors.count(name, "benchmarks") == 0, r.counts
    assert all(d.clean for d in sync.check(ix.store, ix.vectors))


def test_a_pass_logs_what_the_readers_warned_of(env, tmp_path, caplog):
    """The readers' warnings (an lm-eval model folder more than 3 levels down, not read; a task the results file has no
    config for) reached `taskspace ingest`'s output only: an indexing pass (`taskspace index`, the worker) dropped
    them, so a model folder left unread was not mentioned anywhere. Now the pass logs each at WARNING."""
    import logging
    import shutil
    from pathlib import Path

    from indexer.sourcelist import SourceSpec

    lm_out = Path(__file__).parent / "fixtures" / "lm_eval" / "lm_eval_out"
    out = tmp_path / "out"
    shutil.copytree(lm_out / "fake-org__dummy-b", out / "fake-org__dummy-b")
    shutil.copytree(lm_out / "fake-org__dummy-a", out / "a" / "b" / "c" / "d" / "fake-org__dummy-a")
    with caplog.at_level(logging.WARNING, logger="indexer.pipeline"):
        r = env().run([SourceSpec(str(out))])
    assert r.status == "ok" and r.counts["solved"] == 1
    said = [rec.getMessage() for rec in caplog.records if rec.name == "indexer.pipeline"]
    assert any("fake-org__dummy-a" in m and "more than 3 levels below" in m for m in said), said


def test_a_space_left_without_models_fits_its_next_models_afresh(tmp_path, store, encoder):
    """Every source dropped, then a pass (no model has outcomes), then results again: the prior and the calibration
    map are fitted on the new models, as in a fresh index. Before, the pass without models kept both, and the new
    models (not twice or half as many as the gone ones) were solved toward the gone models' prior and calibrated
    by their map, so the index never equalled a rebuild until the count doubled or halved."""
    from indexer import sourcelist
    from indexer.store.sql import Store
    from indexer.store.vectors import VectorStore

    rng = np.random.default_rng(21)
    a, b = tmp_path / "a", tmp_path / "b"
    write_table(a, "alpha", outcomes(rng, [f"m{i}" for i in range(8)], 12), 12)
    write_table(b, "alpha", outcomes(rng, [f"n{i}" for i in range(5)], 12), 12)
    vectors = VectorStore.from_settings()
    try:
        ix = Indexer(store, vectors, encoder=encoder)
        assert ix.run([SourceSpec(str(a))]).status == "ok"
        (space,) = store.list_spaces()
        assert store.get_space_prior(space.id).n_models == 8
        sourcelist.remove(ix.settings.sources_file, str(a))  # `sources remove` + `sources drop`
        assert store.delete_source(str(a))
        r = ix.run()
        assert r.status == "ok" and r.counts["removed"] == 8
        assert store.get_space_prior(space.id) is None and store.get_space_calibration(space.id) is None
        r = ix.run([SourceSpec(str(b))])
        assert r.status == "ok" and r.counts["solved"] == 5 and r.counts["prior_models"] == 5
        assert store.get_space_calibration(space.id).n_models == 5
        again = model_vectors(ix)
    finally:
        vectors.close()
    fresh_store = Store(f"sqlite:///{tmp_path / 'fresh.db'}", upgrade=True)
    fresh_vectors = VectorStore(path=tmp_path / "fresh-qdrant")
    try:
        fresh = Indexer(fresh_store, fresh_vectors, encoder=encoder)
        assert fresh.run([SourceSpec(str(b))]).status == "ok"
        scratch = model_vectors(fresh)
    finally:
        fresh_vectors.close()
        fresh_store.close()
    assert sorted(again) == sorted(scratch) == [f"n{i}" for i in range(5)]
    for m in again:
        np.testing.assert_allclose(again[m], scratch[m], rtol=0, atol=1e-6)


def test_a_space_left_without_models_is_an_empty_index_as_a_home_without_a_space(tmp_path, store, encoder):
    """Every source dropped, then a pass: a search (a prompt with or without answer options), `taskspace models` and the
    HTTP API answer as on a home where nothing is indexed: the empty index's error (CLI exit 1, HTTP 404), naming the
    database and the space and how to index results, and a server's own advice in its place. Before, the space without
    models answered "no model indexed yet" (exit 0, an empty list) while the home without a space was "error: the
    index is empty" (exit 1): a script calling search could not tell an empty index by one rule. (Before that, a prompt
    without options failed with "the space has no benchmark vectors yet".)"""
    from fastapi.testclient import TestClient

    from indexer import find_models, list_models, sourcelist
    from indexer.browse import models_page
    from indexer.serve import Service, create_app
    from indexer.store.vectors import VectorStore

    rng = np.random.default_rng(22)
    write_table(tmp_path / "a", "alpha", outcomes(rng, ["m1", "m2", "m3"], 8), 8)
    vectors = VectorStore.from_settings()
    try:
        ix = Indexer(store, vectors, encoder=encoder)
        assert ix.run([SourceSpec(str(tmp_path / "a"))]).status == "ok"
        sourcelist.remove(ix.settings.sources_file, str(tmp_path / "a"))
        assert store.delete_source(str(tmp_path / "a"))
        assert ix.run().counts["removed"] == 3
        said = []
        for call in (lambda: find_models("What is item 3 of alpha?", k=5, store=store, vectors=vectors),
                     lambda: find_models("What is 2+2?\nA. 3\nB. 4\nC. 5\nD. 6", k=5, store=store, vectors=vectors),
                     lambda: find_models("x", k=5, filters={"licenses": ["mit"]}, store=store, vectors=vectors),
                     lambda: list_models(store=store, vectors=vectors), lambda: models_page(store=store, vectors=vectors)):
            with pytest.raises(NotFoundError) as exc:
                call()
            said.append(str(exc.value))
        assert len(set(said)) == 1, said
        assert said[0].startswith("the index is empty: run `taskspace index` first (the database ") and (
            " holds no model in space " in said[0] and "`taskspace index --source SPEC` ingests results" in said[0]), said
        with TestClient(create_app(Service(store=store, vectors=vectors, encoder=encoder))) as c:
            # (the server's own advice, as its /readyz says it of an empty index)
            advice = c.get("/readyz").json()["checks"]["index"]["detail"]
            assert advice.startswith("the index is empty: stop this server, run `taskspace index`"), advice
            for r in (c.post("/v1/find", json={"prompts": ["What is item 3 of alpha?"]}), c.get("/v1/models")):
                assert r.status_code == 404 and r.json()["error"]["message"] == advice, r.json()
    finally:
        vectors.close()


def test_a_model_whose_results_are_all_gone_is_unknown_as_in_a_fresh_index(tmp_path, store, encoder):
    """A new revision of a source without one model's rows, and a dropped source that held another's: after the pass,
    `taskspace model NAME` says "unknown model" for both and SQL keeps no row (nor alias) of them, as a fresh index
    of the same sources; a model that comes back later is indexed anew. Before, their rows stayed: `taskspace model
    m3` answered a model "not indexed" with no benchmarks, where a fresh index said it does not know it."""
    from sqlalchemy import text

    from indexer import model_detail, sourcelist
    from indexer.store.vectors import VectorStore

    rng = np.random.default_rng(23)
    a, b = tmp_path / "a", tmp_path / "b"
    outs = outcomes(rng, ["m1", "m2", "m3"], 8)
    write_table(a, "alpha", outs, 8)
    write_table(b, "beta", outcomes(rng, ["m1", "m7"], 6), 6, offset=50)
    vectors = VectorStore.from_settings()
    try:
        ix = Indexer(store, vectors, encoder=encoder)
        assert ix.run([SourceSpec(str(a)), SourceSpec(str(b))]).status == "ok"
        assert model_detail("m3", store=store, vectors=vectors)["indexed"] is True
        write_table(a, "alpha", {m: outs[m] for m in ("m1", "m2")}, 8)  # m3's results disappear
        sourcelist.remove(ix.settings.sources_file, str(b))  # `sources remove` + `sources drop`: m7's
        assert store.delete_source(str(b))
        r = ix.run()
        assert r.status == "ok" and r.counts["removed"] == 2
        for gone in ("m3", "m7"):
            with pytest.raises(NotFoundError, match=f"unknown model '{gone}'"):
                model_detail(gone, store=store, vectors=vectors)
        with store.engine.connect() as conn:
            keys = sorted(conn.execute(text("select key from models")).scalars())
            aliases = sorted(conn.execute(text("select alias from model_aliases")).scalars())
        assert keys == ["m1", "m2"] and set(aliases) <= {"m1", "m2"}, (keys, aliases)
        write_table(a, "alpha", outs, 8)  # m3 back
        assert ix.run().counts["solved"] >= 1
        assert model_detail("m3", store=store, vectors=vectors)["indexed"] is True
    finally:
        vectors.close()


def test_a_pass_says_how_many_texts_it_embedded_were_longer_than_the_encoder_reads(tmp_path):
    """`taskspace index` says, once, how many of the texts it embedded were cut by the encoder (all-MiniLM-L6-v2 reads
    256 word pieces), as a query's `query.truncated` does for its prompts; the run record counts them
    (``truncated``, ``token_limit``) and a pass that embeds nothing new says nothing. Before, only a query was told:
    a benchmark of long prompts was indexed without a word that the index saw only their beginning."""
    import uuid

    from typer.testing import CliRunner

    from helpers import write_source
    from indexer.cli import app

    tag = uuid.uuid4().hex  # texts no earlier run has cached: the pass embeds them
    long = " ".join(f"word{j} {tag}" for j in range(300))  # far beyond 256 word pieces
    texts = [f"{tag} question {i}: what is {i} + {i}?" for i in range(18)] + [f"first {long}", f"second {long}"]
    d = tmp_path / "t"
    write_source(d, "arith", texts, outcomes(np.random.default_rng(0), [f"org/m{i}" for i in range(5)], 20))
    runner = CliRunner()
    res = runner.invoke(app, ["index", "--source", str(d)])
    assert res.exit_code == 0, res.output
    says = ("2 of the 20 texts embedded in this pass are longer than the encoder reads (256 word pieces): only their "
            "beginning is embedded")
    assert says in " ".join(res.output.split()), res.output
    res = runner.invoke(app, ["runs", "--json"])
    import json

    counts = json.loads(res.output)[0]["counts"]
    assert counts["truncated"] == 2 and counts["token_limit"] == 256 and counts["embedded"] == 20, counts
    res = runner.invoke(app, ["index"])
    assert res.exit_code == 0 and "longer than the encoder reads" not in res.output, res.output


def test_a_pass_that_cut_no_text_counts_truncated_as_0(tmp_path):
    """The run record of a pass that embedded texts counts ``truncated`` whether or not any was cut (docs/WORKER.md
    names the key): 0 for a pass of short prompts, so a script reading ``counts["truncated"]`` of `taskspace runs
    --json` gets a number. Before, the key was written only when some text was cut: a KeyError after an ordinary
    pass."""
    import json
    import uuid

    from typer.testing import CliRunner

    from helpers import write_source
    from indexer.cli import app

    tag = uuid.uuid4().hex  # texts no earlier run has cached: the pass embeds them
    texts = [f"{tag} question {i}: what is {i} + {i}?" for i in range(12)]
    d = tmp_path / "t"
    write_source(d, "arith", texts, outcomes(np.random.default_rng(0), [f"org/m{i}" for i in range(4)], 12))
    runner = CliRunner()
    res = runner.invoke(app, ["index", "--source", str(d)])
    assert res.exit_code == 0 and "longer than the encoder reads" not in res.output, res.output
    counts = json.loads(runner.invoke(app, ["runs", "--json"]).output)[0]["counts"]
    assert counts["embedded"] == 12 and counts["truncated"] == 0, counts



def test_a_run_stopped_while_embedding_counts_the_long_texts_of_its_finished_chunks(tmp_path, env, monkeypatch):
    """``truncated`` is how many of the texts a pass embedded are longer than the encoder reads ("N of the M texts
    embedded in this pass"): of a pass stopped between the encoder's chunks, the texts of its finished chunks, which
    it embedded, cached and counts in ``embedded``. The run record, `taskspace runs --json` and the worker's line
    (:func:`~indexer.pipeline.truncated_note`) say so. Before, the stopped run counted them in ``embedded`` alone:
    8 texts embedded, every one cut, and no ``truncated`` nor line."""
    import json

    from typer.testing import CliRunner

    from indexer.cli import app
    from indexer.pipeline import truncated_note

    def long(tag: str, i: int) -> str:  # far beyond 256 word pieces
        return f"{tag} question {i}: " + " ".join(f"word{j} {tag}" for j in range(300))

    ix, _, chunks, resume = _stopped_while_embedding(tmp_path, env, monkeypatch, stop_in_chunk=2, seed=4, text=long)
    r = ix.run([SourceSpec(str(tmp_path / "a"))])
    assert r.status == "stopped" and chunks == [4, 4], (r.status, chunks)
    assert r.counts.get("truncated") == 8 and r.counts["embedded"] == 8 and r.counts.get("token_limit") == 256, r.counts
    (run,) = ix.store.list_runs(limit=1)
    assert run.counts.get("truncated") == 8, run.counts
    res = CliRunner().invoke(app, ["runs", "--json"])
    assert res.exit_code == 0 and json.loads(res.output)[0]["counts"].get("truncated") == 8, res.output
    assert truncated_note(run.counts).startswith("8 of the 8 texts embedded in this pass are longer than the encoder "
                                                 "reads (256 word pieces)"), run.counts
    again = resume()  # the rest, counted once: 8 + 2 of the 10 long texts
    assert again.status == "ok" and again.counts["embedded"] == 2 and again.counts["truncated"] == 2, again.counts

@pytest.mark.postgres
@pytest.mark.parametrize("record", ["start_run", "finish_run"])
def test_a_run_record_whose_database_session_was_ended_is_written_on_a_fresh_connection(tmp_path, pg_url, encoder,
                                                                                       monkeypatch, caplog, record):
    """PostgreSQL ending the session under a pass's run record (a restart, `pg_terminate_backend` from another
    session, as `taskspace serve --worker-every` met it under load): the record is written once more on a fresh
    connection and the pass is `ok`, recorded once. Before, the pass failed: at `start_run` it left no run at all,
    at `finish_run` its run stayed `running`, later marked `killed` though the process ran on."""
    import logging

    from indexer.config import reset_settings
    from indexer.store.sql import Store
    from indexer.store.vectors import VectorStore

    monkeypatch.setenv("TASKSPACE_DATABASE_URL", pg_url)
    reset_settings()
    write_table(tmp_path / "a", "alpha", outcomes(np.random.default_rng(5), ["m1", "m2", "m3"], 10), 10)
    store = Store(pg_url, upgrade=True)
    vectors = VectorStore.from_settings()
    real, ended = getattr(store, record), []

    def end_session_once(*args):  # the session ends under the record's transaction, once
        if not ended:
            ended.append(1)
            with store._write() as conn:
                conn.connection().exec_driver_sql("select pg_terminate_backend(pg_backend_pid())")
        return real(*args)

    monkeypatch.setattr(store, record, end_session_once)
    try:
        with caplog.at_level(logging.WARNING, logger="indexer.pipeline"):
            r = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "a"))])
        assert ended == [1] and r.status == "ok" and r.counts["solved"] == 3
        (run,) = store.list_runs()
        assert run.id == r.run_id and run.status == "ok", run
        assert "writing it once more on a fresh connection" in caplog.text
    finally:
        vectors.close()
        store.close()


def _stopped_while_embedding(tmp_path, env, monkeypatch, stop_in_chunk: int, seed: int, text=None):
    """A pass over 10 texts no earlier run has cached (a uuid tag), embedded 4 a chunk, whose stop event is set (as
    SIGTERM to `taskspace worker` or `serve` would) while chunk ``stop_in_chunk`` (1-based) is being embedded;
    ``text(tag, i)`` gives the i-th text (a short question by default). Returns the indexer, the texts, the sizes of the chunks the encoder was given, and ``resume()``: the next pass
    (the stop cleared, the encoder no longer stopping it)."""
    import uuid

    from helpers import write_source

    tag = uuid.uuid4().hex
    text = text or (lambda tag, i: f"{tag} question {i}: what is {i} times {i + 1}?")
    texts = [text(tag, i) for i in range(10)]
    write_source(tmp_path / "a", "alpha", texts, outcomes(np.random.default_rng(seed), ["m1", "m2"], 10))
    ix = env()
    enc = ix.encoder
    monkeypatch.setattr(enc, "chunk_size", 4)
    real, chunks = enc._encode_raw, []

    def encode_then_stop(batch, **k):
        chunks.append(len(batch))
        if len(chunks) == stop_in_chunk:
            ix.stop.set()
        return real(batch, **k)

    def resume():
        ix.stop.clear()
        monkeypatch.setattr(enc, "_encode_raw", real)
        return ix.run()

    monkeypatch.setattr(enc, "_encode_raw", encode_then_stop)
    return ix, texts, chunks, resume


def test_a_stop_while_embedding_stops_after_the_current_chunk_and_keeps_it_cached(tmp_path, env, monkeypatch):
    """A stop (SIGTERM to `taskspace worker` or `serve`) while a pass embeds new texts takes effect before the
    encoder's next chunk: the run is recorded `stopped`, nothing is solved, the finished chunk stays in the embedding
    cache and the next pass encodes only the rest. Before, the pass embedded every new text first (11,444 MMLU-Pro
    texts kept a stopped server busy for minutes)."""
    from indexer.records import prompt_hash

    ix, texts, chunks, resume = _stopped_while_embedding(tmp_path, env, monkeypatch, stop_in_chunk=1, seed=3)
    r = ix.run([SourceSpec(str(tmp_path / "a"))])
    assert r.status == "stopped" and r.counts.get("solved", 0) == 0 and chunks == [4], (r.status, r.counts, chunks)
    assert r.errors == [], r.errors
    assert len(ix.encoder.cached([prompt_hash(t) for t in texts])) == 4
    again = resume()
    assert again.status == "ok" and again.counts["embedded"] == 6 and again.counts["solved"] == 2, again.counts


def test_a_stop_while_embedding_the_last_chunk_solves_nothing(tmp_path, env, monkeypatch, caplog):
    """A stop (SIGTERM to `taskspace worker` or `serve`) while a pass embeds the last chunk of its new texts takes
    effect once that chunk is cached, as between two chunks: the run is recorded `stopped`, its `embedded` count the
    10 texts, nothing is solved, and the next pass solves without embedding again. Before, with no chunk left to
    stop before, the pass went on to solve every changed model and publish them (on a home of 32,823 models, an
    embedding's last chunk followed by minutes of solving: a `systemctl stop` or a pod's grace period ran out and
    the pass was killed instead of stopped)."""
    import logging

    from indexer.records import prompt_hash

    caplog.set_level(logging.INFO, logger="indexer.pipeline")
    ix, texts, chunks, resume = _stopped_while_embedding(tmp_path, env, monkeypatch, stop_in_chunk=3, seed=5)
    r = ix.run([SourceSpec(str(tmp_path / "a"))])
    assert chunks == [4, 4, 2], chunks
    assert r.status == "stopped" and r.counts.get("solved", 0) == 0, (r.status, r.counts)
    assert r.counts["embedded"] == 10 and r.errors == [], (r.counts, r.errors)
    assert "stopped after embedding the 10 new texts of this pass (cached), before solving" in caplog.text
    assert len(ix.encoder.cached([prompt_hash(t) for t in texts])) == 10
    again = resume()
    assert again.status == "ok" and again.counts["embedded"] == 0 and again.counts["solved"] == 2, again.counts


def test_a_stop_while_the_encoder_loads_stops_before_its_first_chunk(tmp_path, env, monkeypatch):
    """A stop (SIGTERM to `taskspace worker` or `serve`) that comes while a pass loads the encoder for its new texts
    (the first embedding of a process: seconds of imports and the model's files) takes effect before the encoder's
    first chunk: the run is recorded `stopped`, nothing embedded or solved. Before, the stop was looked at before the
    load only, so the pass then embedded a whole chunk of up to 2,048 texts (minutes on a CPU) before it stopped."""
    from indexer.records import prompt_hash

    ix, texts, chunks, resume = _stopped_while_embedding(tmp_path, env, monkeypatch, stop_in_chunk=99, seed=6)
    enc = ix.encoder
    enc.encode([f"{texts[0]} (a text cached before)"])  # the cache knows the dimension, as in a home indexed before
    chunks.clear()
    monkeypatch.setattr(enc, "_model", None)  # as in a fresh worker process: the first embedding loads the encoder
    real_load = type(enc)._load

    def load_then_stop(self):
        ix.stop.set()  # as SIGTERM would, while the model loads
        return real_load(self)

    monkeypatch.setattr(type(enc), "_load", load_then_stop)
    r = ix.run([SourceSpec(str(tmp_path / "a"))])
    assert r.status == "stopped" and chunks == [], (r.status, chunks)
    assert r.counts.get("embedded", 0) == 0 and r.counts.get("solved", 0) == 0, r.counts
    assert not ix.encoder.cached([prompt_hash(t) for t in texts])
    monkeypatch.setattr(type(enc), "_load", real_load)
    again = resume()
    assert again.status == "ok" and again.counts["embedded"] == 10 and again.counts["solved"] == 2, again.counts


def test_a_run_stopped_while_embedding_counts_the_texts_it_embedded(tmp_path, env, monkeypatch, caplog):
    """A pass stopped between the encoder's chunks records the texts its finished chunks embedded (and cached) in its
    run's ``embedded`` count, the number its "stopped after embedding N of M new texts" line gives, so `taskspace
    runs` and the run's counts say what the pass did. Before, the stopped run recorded `embedded 0` though its
    finished chunks were embedded and cached (the count was added only after the encoder returned)."""
    import json
    import logging
    import re

    from typer.testing import CliRunner

    from indexer.cli import app

    ix, _, chunks, resume = _stopped_while_embedding(tmp_path, env, monkeypatch, stop_in_chunk=2, seed=4)
    with caplog.at_level(logging.INFO, logger="indexer.pipeline"):
        r = ix.run([SourceSpec(str(tmp_path / "a"))])
    assert r.status == "stopped" and chunks == [4, 4], (r.status, chunks)
    said = re.search(r"stopped after embedding (\d+) of (\d+) new texts", caplog.text)
    assert said and said.groups() == ("8", "10"), caplog.text
    assert r.counts["embedded"] == 8, r.counts
    (run,) = ix.store.list_runs(limit=1)
    assert run.status == "stopped" and run.counts["embedded"] == 8, run.counts
    res = CliRunner().invoke(app, ["runs", "--json"])
    assert res.exit_code == 0 and json.loads(res.output)[0]["counts"]["embedded"] == 8, res.output
    again = resume()  # the rest, counted once: 8 + 2 = the 10 new texts
    assert again.status == "ok" and again.counts["embedded"] == 2, again.counts


def test_taskspace_index_beside_a_server_holding_the_embedded_index_refuses_before_it_ingests(tmp_path, monkeypatch):
    """`taskspace index --source S` while a `taskspace serve` holds the embedded index: the busy error (stop the
    server, or let it index with --worker-every) before anything is written: S not added to sources.toml, no source,
    model, run or vector in SQL. Before, found by running it beside a server on the 32,823-model home: the pass
    ingested S, solved its models and saved their vectors in SQL, then failed at its index stage (exit 6), leaving
    SQL ahead of the index the server answered from (`GET /v1/spaces` counted a model no search could find, `stale`
    0) and S in sources.toml, until the server was stopped and a pass run."""
    from indexer.config import get_settings
    from indexer.errors import BusyError
    from indexer.pipeline import run_index
    from indexer.sourcelist import load
    from indexer.store.sql import open_store

    rng = np.random.default_rng(0)
    src = tmp_path / "s"
    write_table(src, "alpha", outcomes(rng, ["m1", "m2"], 6), 6)
    settings = get_settings()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time
        from indexer.store.vectors import VectorStore
        path = sys.argv[1]
        sys.argv = ["/usr/bin/taskspace", "serve", "--port", "9"]
        vs = VectorStore(path=path, create=True)  # as the server's VectorStore.from_settings(): locked at open
        print("ready", flush=True)
        time.sleep(60)
    """), str(settings.qdrant_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        assert holder.stdout.readline().strip() == "ready", holder.stderr.read()
        monkeypatch.setattr(sys, "argv", ["/usr/bin/taskspace", "index", "--source", str(src)])
        with pytest.raises(BusyError) as err:
            run_index([SourceSpec(spec=str(src))])
        assert f"(pid {holder.pid}: taskspace serve): stop it first" in str(err.value), err.value
        assert "--worker-every" in str(err.value)
    finally:
        holder.kill()
        holder.wait()
    assert not settings.sources_file.exists() or load(settings.sources_file) == []
    store = open_store()
    try:
        assert store.list_sources() == [] and store.list_runs() == []
    finally:
        store.close()


def test_a_pass_whose_database_file_is_deleted_under_it_fails_naming_the_file(tmp_path, env, taskspace_home):
    """`rm $TASKSPACE_HOME/taskspace.db*` while a pass runs: SQLite goes on writing into the deleted (unlinked) file.
    The pass must not record `ok` into it and exit 0: it fails as a storage error (exit 3) naming the file. Before,
    `ok`, and the next pass quietly made a new database and ingested everything again."""
    from indexer.errors import StoreError

    rng = np.random.default_rng(8)
    write_table(tmp_path / "a", "alpha", outcomes(rng, ["m1", "m2"], 6), 6)
    ix = env()
    db = taskspace_home / "taskspace.db"
    real = ix._pass

    def pass_then_delete(*a, **k):
        real(*a, **k)
        for f in taskspace_home.glob("taskspace.db*"):  # as `rm $TASKSPACE_HOME/taskspace.db*` mid-pass
            f.unlink()

    ix._pass = pass_then_delete
    with pytest.raises(StoreError) as err:
        ix.run([SourceSpec(str(tmp_path / "a"))])
    assert err.value.exit_code == 3 and str(db) in str(err.value) and "deleted" in str(err.value)


def test_a_pass_whose_database_file_is_deleted_before_its_index_stage_pushes_nothing(tmp_path, env, taskspace_home):
    """`rm $TASKSPACE_HOME/taskspace.db*` while a pass solves: it fails (exit 3, naming the file) before its index
    stage, and the vector index gets nothing of a database that is gone. Before, the file was checked at the end alone:
    the pass pushed its models and benchmarks to the index first (found by reading the pass after the check was
    added)."""
    from indexer.errors import StoreError

    rng = np.random.default_rng(8)
    write_table(tmp_path / "a", "alpha", outcomes(rng, ["m1", "m2"], 6), 6)
    ix = env()
    db = taskspace_home / "taskspace.db"
    real = ix._space

    def space_then_delete(*a, **k):
        got = real(*a, **k)
        for f in taskspace_home.glob("taskspace.db*"):  # as `rm $TASKSPACE_HOME/taskspace.db*` mid-pass
            f.unlink()
        return got

    ix._space = space_then_delete
    with pytest.raises(StoreError) as err:
        ix.run([SourceSpec(str(tmp_path / "a"))])
    assert err.value.exit_code == 3 and str(db) in str(err.value) and "deleted" in str(err.value)
    assert ix.vectors.spaces() == [] and ix.vectors.physical_collections() == []


def test_a_database_made_afresh_beside_an_index_is_a_warning(tmp_path, env, taskspace_home, caplog):
    """A home whose SQL store is gone but whose Qdrant index is there: the store made afresh is logged as a WARNING
    saying the database was missing and is being rebuilt (every source ingested again, run history gone); a
    new home's first store stays quiet. Before, "migrating ... from None to 0020" at INFO only."""
    import logging

    from indexer.store.sql import open_store

    rng = np.random.default_rng(8)
    write_table(tmp_path / "a", "alpha", outcomes(rng, ["m1", "m2"], 6), 6)
    with caplog.at_level(logging.INFO):
        ix = env()
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert ix.run([SourceSpec(str(tmp_path / "a"))]).status == "ok"
    ix.vectors.close()
    ix.store.close()
    for f in taskspace_home.glob("taskspace.db*"):
        f.unlink()
    caplog.clear()
    with caplog.at_level(logging.INFO):
        open_store().close()
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and str(taskspace_home / "taskspace.db") in warned[0], warned
    assert "missing" in warned[0] and str(taskspace_home / "qdrant") in warned[0]


def test_a_store_of_another_database_is_not_warned_of_the_homes_index(tmp_path, taskspace_home, caplog):
    """A Store opened on a database of its own (`taskspace demo`'s throwaway home, a program's second SQLite file)
    is made afresh without a word about TASKSPACE_HOME's index: that index is not beside it. Before, `make run` then
    `make demo` warned "the database /tmp/taskspace-demo-.../demo.db was missing ... though the index
    ./.taskspace/qdrant beside it is there", telling a new user to put back from a backup a file that never existed."""
    import logging

    from indexer.config import sqlite_url
    from indexer.store.sql import Store

    (taskspace_home / "qdrant").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    (taskspace_home / "qdrant" / "aliases.json").write_text("{}")
    with caplog.at_level(logging.INFO):
        Store(sqlite_url(tmp_path / "other" / "demo.db"), upgrade=True).close()
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
