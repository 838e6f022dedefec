"""One indexing pass: sources -> SQL -> encoder -> solver -> SQL vectors -> Qdrant, recorded as a run.

Stages (each idempotent, so a pass killed anywhere is completed by the next one):

1. **ingest**: every configured source (``sources.toml``) is read when new or changed (Hub: by dataset commit,
   checked before any download; local: by content fingerprint) and stored whole or not at all.
2. **embed**: prompts not yet in the encoder's cache are embedded (the cache is keyed by text hash).
3. **solve**: only models whose stored outcomes changed since their vector was computed (the SQL
   ``inputs_digest``) are re-solved. A model's normal depends only on its own outcomes and the embeddings of
   the prompts it was observed on, so solving a subset gives exactly what a from-scratch fit gives.
   With ``auto-mean`` it also depends on the space's prior (the models' mean normal, SQL ``space_priors``),
   which is held fixed between estimations, as is the calibration map: a pass re-estimates both from all models,
   and re-solves them all, only when there are none yet or the models solved or removed since (new, with new or
   changed results, gone) reach a quarter of those they were estimated from (:data:`indexer.space.REFIT_SHARE`),
   so adding one model stays one solve and the total work stays linear in the number of models.
4. **vectors**: the new model vectors and the benchmark mean vectors are saved in SQL (the source of truth).
5. **index**: Qdrant is brought in step with SQL: changed models are pushed; the benchmarks and prompts
   collections are rebuilt (fresh collection + alias switch) when they drift. After a pass that did not finish
   (killed), the next pass checks every collection against SQL and repairs the drift, and drops the collections an
   interrupted rebuild left behind. Runs a killed process left "running" are marked "killed" when the lock is taken.

A pass holds the SQL lock ``"index"``: one pass per database at a time. It checks the lock is still held between its
stages (PostgreSQL releases it when it ends the lock's session: the pass takes it again, or stops with BusyError when
another pass took it meanwhile).
"""

from __future__ import annotations

import logging
import shlex
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import sourcelist
from .encoder import Stopped
from .errors import IndexerError, InputError, abort_reason, counted
from .records import ToDict
from .sourcelist import SourceSpec
from .sources.common import count_rejected

log = logging.getLogger(__name__)

SOLVE_CHUNK = 256  # models per solver call (progress granularity)
#: a pass that replaces as many vectors as this or more computes every group's average model from every vector
#: (:meth:`Indexer._refresh_links`); fewer: only those of the groups their benchmarks lie in
CENTRES_BY_GROUP = 2000
STAGES = ("ingest", "setup", "load", "embed", "solve", "vectors", "index")


@dataclass
class RunReport(ToDict):
    """What one pass did. ``errors`` are per-item (file/source, line, message)."""

    run_id: int | None = None
    status: str = "running"
    sources: list[dict] = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    errors: list[dict] = field(default_factory=list)
    seconds: dict = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 0 if self.status == "ok" else 1

    def as_dict(self) -> dict:
        return {"run_id": self.run_id, "status": self.status, "counts": self.counts, "sources": self.sources,
                "errors": self.errors, "seconds": {k: round(v, 3) for k, v in self.seconds.items()}}


def unconfigured_note(report) -> str | None:
    """What a finished pass over no configured source says (`taskspace index`'s summary, the worker's pass line): where
    sources come from and how to add one; None for a pass that read sources (or stopped or failed before it could)."""
    if getattr(report, "sources", None) != [] or getattr(report, "status", None) not in ("ok", "partial"):
        return None
    from .config import get_settings

    return (f"no sources configured in {get_settings().sources_file}: `taskspace sources add SPEC` or "
            "`taskspace index --source SPEC` adds one (this pass indexed what `taskspace ingest` stored)")


def truncated_note(counts: dict) -> str | None:
    """The pass's line on the texts it embedded that are longer than the encoder reads (``counts["truncated"]``), or
    None: the encoder embeds only their beginning (as a query's ``query.truncated`` says of its prompts)."""
    n = counts.get("truncated")
    if not n:
        return None
    of = counts.get("embedded", n)
    return (f"{n} of the {of} texts embedded in this pass are longer than the encoder reads "
            f"({counts.get('token_limit')} word pieces): only their beginning is embedded, so prompts that differ "
            "after the cut look alike to the index")


def _count_embedded(report: RunReport | None, enc, texts: list[str]) -> None:
    """Count ``texts``, embedded by this pass, in ``report``: ``embedded``, and ``truncated`` those longer than the
    encoder reads (it embeds their beginning alone, query.truncated's rule; said once per pass by
    :func:`truncated_note`; 0 when none was), so ``truncated`` is a part of ``embedded``, of a stopped pass too (its finished chunks;
    before, they were counted in ``embedded`` alone)."""
    if report is None or not texts:
        return
    report.counts["embedded"] = report.counts.get("embedded", 0) + len(texts)
    over, limit = enc.over_limit(texts)
    report.counts["truncated"] = report.counts.get("truncated", 0) + sum(over)  # 0 too: a script reads the key
    if any(over):
        report.counts["token_limit"] = limit


class Progress:
    """Progress reporting: tqdm bars on a terminal, plain log lines otherwise (cron, CI)."""

    def __init__(self, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled

    def stage(self, name: str, detail: str = "") -> None:
        log.info("stage %s%s", name, f": {detail}" if detail else "")

    def wrap(self, items, desc: str):
        """``items`` with a bar of unknown length on a terminal (Qdrant upserts), unchanged otherwise."""
        if not self.enabled:
            return items
        from tqdm import tqdm

        return tqdm(items, desc=f"upsert {desc}", unit="point", leave=False, file=sys.stderr)

    def bar(self, total: int, desc: str, unit: str = "item"):
        if not self.enabled:
            return None
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit=unit, leave=False, file=sys.stderr)


@contextmanager
def _timed(report: RunReport, stage: str):
    t0 = time.perf_counter()
    try:
        yield
    finally:
        report.seconds[stage] = report.seconds.get(stage, 0.0) + time.perf_counter() - t0


class Indexer:
    """Runs indexing passes over one SQL store and one vector store.

    ``stop`` (a :class:`threading.Event`) asks a pass to finish the current item and return early
    (the worker sets it on SIGTERM/SIGINT); what was committed stays, the next pass continues.
    """

    def __init__(self, store, vectors=None, *, encoder=None, settings=None, progress: Progress | None = None,
                 stop: threading.Event | None = None, hub=None, open_vectors=None, fetch_metadata: bool = True):
        from .config import get_settings

        self.store = store
        self._vectors = vectors
        self._open_vectors = open_vectors
        self.settings = settings or get_settings()
        self._encoder = encoder
        self.progress = progress or Progress(False)
        self.stop = stop or threading.Event()
        self.hub = hub
        self.fetch_metadata = fetch_metadata  # False: no Hub metadata for the ingested models (the demo: no network)
        self._ensure_lock = lambda: None  # set by run(): checks the pass still holds the 'index' lock and its file

    @property
    def vectors(self):
        """The vector store, opened on first use: a pass with nothing to write never opens it (the embedded index
        is one process at a time)."""
        if self._vectors is None:
            if self._open_vectors is None:
                from .store.vectors import VectorStore

                self._open_vectors = VectorStore.from_settings
            self._vectors = self._open_vectors()
        return self._vectors

    def close(self) -> None:
        """Close the vector store if this indexer opened it."""
        if self._vectors is not None and self._open_vectors is not None:
            self._vectors.close()
            self._vectors = None

    @property
    def encoder(self):
        if self._encoder is None:
            from .encoder import get_encoder

            self._encoder = get_encoder(self.settings.encoder)
        return self._encoder

    # ------------------------------------------------------------------ the pass
    def run(self, extra_sources: list[SourceSpec] | None = None, *, refresh_prior: bool = False,
            accept_partial: bool = False) -> RunReport:
        """One pass over the configured sources (plus ``extra_sources``, which are added to the configuration).
        ``refresh_prior`` (``auto-mean``): re-estimate the space's prior now and re-solve every model toward it,
        whatever the model count (``taskspace index --refresh-prior``). ``accept_partial``: store new revisions
        that read much worse than the stored ones instead of quarantining them (:data:`indexer.ingest.QUARANTINE_LOSS`)."""
        cfg = self.settings.sources_file
        # a bad --source: refused, no run; an empty folder too (asked to read it now, as `ingest` is: before, saved and
        # shown `empty`, exit 0, while `ingest` of it failed); a configured one that is empty at a pass is no error
        specs = sourcelist.add(cfg, extra_sources, empty_ok=False) if extra_sources else None
        report = RunReport()
        t_start = time.perf_counter()
        with self.store.lock("index") as held:
            # between stages: is the lock still ours (PostgreSQL ends it with its session: taken again, or BusyError
            # when another pass took it meanwhile, so no two passes run on together) and its database file still there
            # (Store.check_file: one deleted or replaced under the pass fails it before its next stage, so nothing is
            # pushed to the vector index for a database that is gone)
            self._ensure_lock = self._still_ours(held)
            self._mark_killed(report)
            previous = self.store.list_runs(limit=1)
            # a pass that finished (ok, or partial: item errors, a quarantined source, its index stage done) leaves the
            # index current; only one that did not (killed, failed, stopped) makes this pass compare it with SQL. Before,
            # a partial one did too: while a source stayed quarantined every pass rebuilt the models collection
            clean_before = (bool(previous) and previous[0].status in ("ok", "partial")
                            and previous[0].kind == "index")
            report.run_id = self._record("start_run", "index")
            try:
                if specs is None:  # read in the run: a sources.toml broken by hand fails the run (a worker's pass
                    specs = sourcelist.load(cfg)  # is in `taskspace runs`), not only a log line
                self._pass(specs, report, verify_index=not clean_before, refresh_prior=refresh_prior,
                           accept_partial=accept_partial)
            except Stopped as exc:  # asked to stop while embedding: nothing solved or published, the finished
                log.info("%s", exc)  # chunks cached for the next pass; recorded "stopped" below
            except BaseException as exc:
                report.status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
                report.errors.append({"file": None, "line": None, "message": f"run aborted: {abort_reason(exc)}"})
                try:
                    self._record("finish_run", report.run_id, report.status, report.counts, report.errors)
                except Exception as rec:  # noqa: BLE001 - recording it must not replace what stopped the pass
                    if not isinstance(exc, KeyboardInterrupt):
                        raise
                    # an interrupt stays one (exit 130/143), its run left "running" for the next pass to mark killed;
                    # before, a record that could not be written (the database locked) became the error (exit 6)
                    log.warning("the interrupted run %s could not be recorded (%s); the next pass marks it killed",
                                report.run_id, rec)
                raise
            if self.stop.is_set():
                report.status = "stopped"
            else:
                report.status = "ok" if not report.errors else "partial"
            report.seconds["total"] = time.perf_counter() - t_start
            # its database file deleted (or replaced) under the pass: its work and its record went into a file nobody
            # reads again; a storage error naming the file, not "ok" (before: "ok", and the next pass quietly began anew)
            getattr(self.store, "check_file", lambda: None)()
            self._record("finish_run", report.run_id, report.status, report.counts, report.errors)
        return report

    def _still_ours(self, held):
        """What :attr:`_ensure_lock` runs between stages: the lock's own check (``held.ensure``: PostgreSQL's
        session lock taken again, or BusyError) and the store's :meth:`~indexer.store.sql.Store.check_file`."""
        ensure = getattr(held, "ensure", None) or (lambda: None)
        check_file = getattr(self.store, "check_file", None) or (lambda: None)

        def still_ours() -> None:
            ensure()
            check_file()

        return still_ours

    def _record(self, what: str, *args):
        """``self.store.<what>(*args)`` (the run record: ``start_run``, ``finish_run``), once more on a fresh
        connection when the database ended the session under it (a restart or failover, ``pg_terminate_backend``:
        nothing of it was written; in the rare case its COMMIT reached the server and only the answer was lost, a
        second run row is started and the next pass marks the first one "killed"), as a source's ingest is. Before,
        one such ending at the record failed the pass: at its start the pass did not run and left no run at all; at
        its end a pass that had done its work (or failed for another reason, whose message the record's error then
        replaced) stayed "running" until the next pass marked it "killed (the process ended without finishing this
        run)", though the process ran on."""
        from .errors import once_more_if_lost

        return once_more_if_lost(getattr(self.store, what), *args, log=log, said=lambda exc: (
            f"recording the run failed ({exc}); writing it once more on a fresh connection"))

    def _mark_killed(self, report: RunReport) -> None:
        """Runs left "running" by a killed process become "killed": index runs (this pass holds their lock), and
        reindex runs when their lock is free (none is running now)."""
        from .errors import BusyError

        killed = self.store.mark_killed_runs("index")
        try:
            with self.store.lock("reindex"):
                killed += self.store.mark_killed_runs("reindex")
        except BusyError:
            pass
        if killed:
            report.counts["killed_runs_marked"] = sorted(killed)

    def _pass(self, specs: list[SourceSpec], report: RunReport, *, verify_index: bool,
              refresh_prior: bool = False, accept_partial: bool = False) -> None:
        from .ingest import Ingester

        counts = report.counts
        counts.update(sources=0, sources_unchanged=0, quarantined=0, models_added=0, prompts_added=0,
                      outcomes_added=0, embedded=0, solved=0, removed=0, benchmarks=0, pushed=0, rebuilt=[])
        # 1. ingest
        with _timed(report, "ingest"):
            self.progress.stage("ingest", counted(len(specs), "source"))
            ing = Ingester(self.store, hub=self.hub, fetch_metadata=self.fetch_metadata, accept_partial=accept_partial)
            bar = self.progress.bar(len(specs), "ingest")
            for spec in specs:
                if self.stop.is_set():
                    break  # what was ingested so far is committed and counted below
                self._ensure_lock()
                if bar is not None:
                    bar.update(1)
                if _empty_folder(spec):  # `sources add` takes an empty folder as one that may fill later:
                    report.sources.append({"spec": spec.spec, "status": "empty", "errors": 0})  # nothing to read yet
                    continue
                before = (ing.summary.sources, ing.summary.skipped, len(ing.summary.errors), len(ing.summary.quarantined))
                self._ingest_one(ing, spec)
                s = ing.summary
                if s.sources > before[0]:
                    status = "ingested"
                elif len(s.quarantined) > before[3]:
                    status = "quarantined"
                elif len(s.errors) > before[2] and s.skipped == before[1]:
                    status = "failed"
                else:
                    status = "unchanged"
                # the rows rejected, as `taskspace ingest` counts them (a "N more rows rejected" line is N)
                report.sources.append({"spec": spec.spec, "status": status,
                                       "errors": count_rejected(s.errors[before[2]:])})
            if bar is not None:
                bar.close()
            if not self.stop.is_set():
                ing.summary.warnings.extend(_gone_from_folders(specs, self.store.list_sources()))
            self.store.merge_model_names()  # rows stored under names the identity rules now map elsewhere
            self.store.lower_licenses()  # licenses an older taskspace stored as a card wrote them ('MIT')
            ing.fetch_model_metadata()
            for w in dict.fromkeys(ing.summary.warnings):  # what the readers warned of (a model folder too deep to be
                log.warning("%s", w)  # read, a task the results file lacks): before, `taskspace ingest` alone said it;
                # and the metadata's (the Hub unreachable, HF_HUB_OFFLINE set): before, logged ahead of fetching it
            s = ing.summary
            counts.update(sources=s.sources, sources_unchanged=s.skipped, quarantined=len(s.quarantined), models_added=s.models,
                          prompts_added=s.prompts, outcomes_added=s.outcomes)
            report.errors.extend(e.as_dict() for e in s.errors)
        if self.stop.is_set():
            return
        self._ensure_lock()
        with _timed(report, "setup"):  # the embedding space (the encoder loads only for a new space)
            # not created without results to build it from beside other spaces (a home pulled with another method or
            # encoder than the configured one): before, created empty, it became the space every search took by
            # default, which then found no model, the pulled records reachable by --space alone
            space = self._space()
            counts["space"] = None if space is None else space.id
        if space is None:
            log.info("no results to build the configured space from; the pulled spaces are left as they are")
            self._push_other_spaces(report, skip=())  # their payloads (licenses lowered, metadata)
            return
        if self.store.is_read_only(space.id):  # pulled, no raw results yet: nothing here can be solved or replaced
            from .space import space_name

            counts["read_only"] = space_name(space)
            log.info("space %s was pulled (%s) and is read-only until raw results are ingested",
                     space_name(space), self.store.space_origin(space.id))
            self._push_other_spaces(report, skip=())  # its points too: their payloads (licenses lowered, metadata)
            return
        # 2-4. embed, solve, save vectors for the models whose inputs changed
        with _timed(report, "load"):
            plan = solve_plan(self.store, space, refresh_prior=refresh_prior, report=report)
            changed_models = len(plan.stale)  # new, or with new or changed results (or solved toward another prior)
            every, stale, refresh, prior, calibrate = plan.every, plan.models, plan.refresh, plan.prior, plan.calibrate
            if not every and (prior is not None or self.store.get_space_calibration(space.id) is not None):
                self.store.forget_space_fit(space.id)  # no model has outcomes (every source dropped or emptied): a
                # prior and map fitted on the gone models would be kept for the ones that come next (their changes
                # are counted against them), where a fresh space fits its own
        if self.stop.is_set():  # the last stop before this pass writes what queries read (vectors, calibration)
            return
        touched: list | None = []  # the benchmark lists of the vectors this pass replaces, before and after
        if stale:
            with _timed(report, "load"):
                digests = self.store.model_digests(stale if len(stale) < 2000 else None)  # all: one read
                touched = self._fitted_on(space, stale)
            stale = self._solve(space, stale, digests, report, refresh_prior=refresh, prior=prior,
                                calibrate=calibrate)
        with _timed(report, "load"):
            if touched is not None and stale:
                touched += self._fitted_on(space, stale)
            gone = self._drop_orphan_vectors(space)
            # what changed under the held prior and map, counted toward their re-estimation (space.needs_refit)
            self.store.add_fit_drift(space.id, changed_models + len(gone), prior=not refresh,
                                     calibration=not calibrate)
            self._refresh_links(space, changed=bool(stale or gone), touched=None if gone else touched)
        counts["removed"] = len(gone)
        with _timed(report, "vectors"):
            bench_changed = self._benchmark_vectors(space, report)
        # a stop from here on still publishes: SQL holds the new vectors and calibration, and until the index follows
        # every query ranks its old points under them (before, a SIGTERM during the solve stopped here, leaving that
        # mix to a restarted server until its first pass, and to `taskspace search` until the next pass)
        # 5. Qdrant: the re-solved and removed models, and those whose point's other inputs changed in SQL since their
        # last push (Hub metadata this pass or an ingest fetched for the backlog: before, it reached SQL only, the answers
        # kept no size or licence for the model and `check` reported it stale until a reindex)
        with _timed(report, "load"):
            unpushed = getattr(self.store, "unpushed_models", lambda _: [])(space.id)
        changed = list(dict.fromkeys([*stale, *gone, *unpushed]))
        self._ensure_lock()
        with _timed(report, "index"):
            self._sync_index(space, changed=changed, bench_changed=bench_changed or s.prompts > 0 or s.pruned > 0,
                             verify=verify_index, report=report)
        # models left with no result and no vector (a new revision without them, a dropped source): gone from SQL as
        # a fresh index never had them (before, `taskspace model NAME` still answered one, "not indexed")
        with _timed(report, "index"):
            self.store.delete_models_without_results()
            self._push_other_spaces(report, skip=(space.id,))

    def _refresh_links(self, space, changed: bool, touched: list | None = None) -> None:
        """The calibration map's groups of benchmarks no model links (:attr:`indexer.posterior.Calibration.links`)
        and their average models (:attr:`~indexer.posterior.Calibration.centres`) as the space's vectors now give
        them, after a pass that solved or removed models (``changed``) or on a map that has links without their
        centres (stored before schema 0019): the map's other values are held until enough models change, but a
        benchmark whose models were measured on it alone, indexed since the map was fitted, is such a group at once
        (before, its models kept intervals as narrow as a linked model's at any query until the next refit), a model
        measured on two groups joins them, and each group's average model follows its models' vectors.

        ``touched``: the benchmark lists of every vector the pass replaced, as they were and as they are (None: not
        known, or vectors removed). With the groups as stored, only the centres of the groups those lists lie in
        are computed again, from those groups' vectors alone (the others' vectors are those their stored centres
        were computed from): the same means as from every vector, where before every pass read all of them (32,823
        vectors, 3.9 s, to add 3 models). The groups come from the distinct lists alone; without groups no vector is
        read."""
        from . import posterior

        cal = self.store.get_space_calibration(space.id)
        if cal is None or not cal.folded or cal.region_var is None:
            return
        if not changed and (cal.links is None or cal.centres is not None):
            return
        kinds = self.store.model_benchmark_lists(space.id)
        links = posterior.links_of(kinds)
        groups = None  # the groups whose centres are computed again (None: every group)
        if links is not None and touched is not None and links == cal.links and cal.centres is not None:
            at = posterior.link_members(links, [bs for bs in touched if bs])
            groups = set(at.tolist()) if (at >= 0).all() else None
        if links is None:
            centres = None
        elif groups is None:
            centres = posterior.link_centres(links, *self.store.model_benchmark_vectors(space.id))
        elif not groups:
            centres = cal.centres
        else:
            lists, V = self.store.model_benchmark_vectors(
                space.id, [bs for bs, g in zip(kinds, posterior.link_members(links, kinds)) if g in groups])
            fresh = posterior.link_centres(links, lists, V)
            centres = tuple(fresh[g] if g in groups else tuple(c) for g, c in enumerate(cal.centres))
        same = (links == cal.links and (centres is None) == (cal.centres is None)
                and (centres is None or np.allclose(centres, cal.centres, rtol=0.0, atol=1e-9)))
        if not same:
            self.store.set_calibration_links(space.id, links, centres)

    def _fitted_on(self, space, models: list[str]) -> list | None:
        """The benchmark lists the stored vectors of ``models`` in ``space`` were fitted on (one per vector; a
        model without one: none), or None for as many models as :data:`CENTRES_BY_GROUP` or more (the centres are
        then computed from every vector)."""
        if len(models) >= CENTRES_BY_GROUP:
            return None
        return [list(mv.benchmarks or []) for mv in self.store.load_model_vectors(space.id, models)]

    def _push_other_spaces(self, report: RunReport, skip: tuple) -> None:
        """The points of the spaces this pass does not solve whose payload changed in SQL (licenses lowered, Hub
        metadata fetched, models renamed: written for every space): pushed, so every space answers and checks as
        SQL says (:func:`indexer.sync.push_other_spaces`; counted as ``pushed_other``, space -> points)."""
        from . import sync

        self._ensure_lock()
        pushed = sync.push_other_spaces(self.store, self.vectors, skip=skip)
        if pushed:
            report.counts["pushed_other"] = pushed

    def _ingest_one(self, ing, spec: SourceSpec) -> None:
        from .ingest import parse_spec

        parsed = parse_spec(spec.spec)  # a malformed spec stops the pass
        if parsed.kind == "path" and not Path(parsed.target).exists():  # a configured folder removed or moved
            ing.summary.add_error(InputError(
                "no such file or folder: this source is configured in sources.toml and its path is gone; if it moved, "
                f"`taskspace sources remove {shlex.quote(spec.spec)}` and add the new path (the results stored from it "
                "stay)", file=spec.spec), spec.spec)
            return
        from .errors import SOURCE

        # its errors' hints say how to set a reading option for this source (errors.option_hint), not ingest's option
        token = SOURCE.set(spec)
        try:
            ing.ingest_spec(parsed, spec.format, limit=spec.limit, **spec.options)
        except IndexerError as exc:  # one failing source is recorded; the run goes on
            ing.summary.add_error(exc, spec.spec)
        finally:
            SOURCE.reset(token)

    # ------------------------------------------------------------------ space and embeddings
    def _space(self):
        """The SQL embedding space of the configured encoder and method (the model loads only for a new one); None
        when there is none and nothing to build it from beside other spaces (no results: a pulled home)."""
        from .space import configured

        spec = configured(self.settings, encoder=self.encoder.id)
        if spec.eps > 0:  # (the results just ingested are stored)
            from .errors import ConfigError
            from .space import eps_problem

            if (why := eps_problem(spec.eps, self.store.prompt_count(), spec.params)) is not None:
                raise ConfigError(f"TASKSPACE_EPS={spec.eps:g}: {why}: set TASKSPACE_EPS within it (or unset it) and "
                                  "run `taskspace index` again; no space was built or solved")
        spaces = self.store.list_spaces()
        for sp in spaces:
            if spec.matches(sp):
                return sp
        if spaces and not self.store.has_outcomes():
            return None
        # model vectors are [e_i, f_i, c_i] and prompt/query vectors [q, covariates, 1] (indexer.represent), with
        # f_i only when the method has prompt features and c_i only with an intercept
        spec = spec.with_encoder(spec.encoder, self.encoder.dim)
        return self.store.get_or_create_space(spec.encoder, spec.dim, spec.lam, spec.eps, method=spec.method,
                                              params=spec.params)

    def embeddings(self, prompt_ids: np.ndarray, hashes: list[str], report: RunReport | None = None) -> np.ndarray:
        """(N, dim) float32 embeddings of these prompts; only texts missing from the cache are read and encoded."""
        return self._through_cache(hashes, lambda pos: self.store.prompt_texts([int(prompt_ids[i]) for i in pos]),
                                   report, "prompt")

    def _encode(self, texts: list[str], report: RunReport | None) -> np.ndarray:
        """Embeddings of texts (e.g. question and option parts) through the encoder's cache."""
        from .records import prompt_hash

        return self._through_cache([prompt_hash(t) for t in texts], lambda pos: [texts[i] for i in pos],
                                   report, "text")

    def _through_cache(self, hashes: list[str], texts_at, report: RunReport | None, what: str) -> np.ndarray:
        """(N, dim) float32 embeddings of the texts with these hashes: one read of the encoder's cache; the texts
        of the missing ones (``texts_at(positions)``, one position per missing hash) are encoded, cached and
        counted as ``embedded``."""
        enc = self.encoder
        found = enc.cached(hashes)
        missing: dict[str, int] = {}  # hash -> its first position
        for i, h in enumerate(hashes):
            if h not in found:
                missing.setdefault(h, i)
        if missing:
            self.progress.stage("embed", counted(len(missing), f"new {what}"))
            texts = texts_at(list(missing.values()))
            try:
                vecs = enc.encode(texts, progress=self.progress.enabled, stop=self.stop)
            except Stopped as exc:  # its finished chunks were embedded and cached: the stopped run counts them (before,
                done = set(exc.finished)  # `embedded 0` beside "stopped after embedding 2048 of 3000 new texts")
                _count_embedded(report, enc, [t for h, t in zip(missing, texts) if h in done])
                raise
            found.update(zip(missing, vecs))
            _count_embedded(report, enc, texts)
        return np.stack([found[h] for h in hashes]) if hashes else np.zeros((0, enc.dim), np.float32)

    def rows(self, prompt_ids: np.ndarray, hashes: list[str], params: dict, report: RunReport | None = None,
             *, lifted: bool = False) -> np.ndarray:
        """Design rows of these prompts in the representation of the space ``params`` (:mod:`indexer.represent`;
        ``lifted``: in the index form). Embeddings come from the encoder cache; texts are read only when the
        representation needs them (covariates, or the question/options split)."""
        from . import represent

        if represent.is_split(params):  # question and options embedded apart: by text, through the cache
            texts = self.store.prompt_texts([int(i) for i in prompt_ids])
            return represent.rows(texts, lambda t: self._encode(t, report), params, lifted=lifted)
        E = self.embeddings(prompt_ids, hashes, report)
        texts = self.store.prompt_texts([int(i) for i in prompt_ids]) if represent.feature_set(params) else None
        return represent.lift(E, params, texts) if lifted else represent.design(E, texts, params)

    # ------------------------------------------------------------------ solving
    def _solve(self, space, models: list[str], digests: dict[str, str], report: RunReport,
               refresh_prior: bool = False, prior=None, calibrate: bool = False) -> list[str]:
        """Solve ``models`` (``digests``: their outcome digests, :meth:`Store.model_digests`, recorded with the
        vectors) and save their vectors with their posterior (coverage pattern, lambda, residual variance; the
        patterns' factors beside them); returns the models whose vector was saved. With
        ``refresh_prior`` (``auto-mean``), ``models`` are all models: the prior is estimated from them and saved
        with their vectors; otherwise a space with a ``'mean'`` prior solves toward ``prior``, its stored prior
        (None: too few models for one, plain ``auto``). ``calibrate``: ``models`` are all models; fit the space's
        calibration map on their leave-one-out scores and save it with them."""
        from . import posterior, represent
        from .space import SpaceSpec
        from .store.sql import ModelVector, SpacePrior
        from .store.sql_types import vector_digest

        with _timed(report, "load"):
            om = self.store.load_outcomes(models=models)
        spec = SpaceSpec.of(space)
        solver, params = spec.solver(), spec.params
        with _timed(report, "embed"):  # the rows in the space's representation (covariates are columns of them)
            embedded = report.counts.get("embedded", 0)
            D = self.rows(om.prompt_ids, om.prompt_hashes, params, report)
        if self.stop.is_set():  # a stop while the encoder's last chunk was embedded: nothing is solved yet, so stop
            # here as between two chunks (before, the pass went on to solve every changed model and publish them:
            # minutes on a large home, past a service manager's stop timeout, which then killed the pass)
            n = report.counts.get("embedded", 0) - embedded
            raise Stopped((), n, f"stopped after embedding the {n} new texts of this pass (cached), before solving"
                          if n else "stopped before solving")
        if refresh_prior:
            prior = None  # estimated below from the models solved here
        elif spec.prior == "mean":  # held fixed: each model is solved toward the stored prior
            solver.prior = represent.prior_matrix(prior.vector, spec) if prior is not None else None
        with _timed(report, "solve"):
            self.progress.stage("solve", f"{counted(len(om.models), 'model')} on {counted(len(om.prompt_hashes), 'prompt')}")
            # models are independent given D: adding them in chunks gives the same vectors and lets a bar move
            solver.prepare(D, formats=represent.prompt_formats(D, spec))
            bar = self.progress.bar(len(om.models), "solve")
            for lo in range(0, len(om.models), SOLVE_CHUNK):
                ids = om.models[lo:lo + SOLVE_CHUNK]
                try:
                    solver.add_models(om.scores[lo:lo + SOLVE_CHUNK], model_ids=ids)
                except IndexerError:  # one bad model must not stop the others: retry the chunk one by one
                    for k, m in enumerate(ids):
                        try:
                            solver.add_models(om.scores[lo + k:lo + k + 1], model_ids=[m])
                        except IndexerError as exc:
                            report.errors.append({"file": None, "line": None, "item": m,
                                                  "message": f"model {m}: not solved: {exc}"})
                if bar is not None:
                    bar.update(len(ids))
            if bar is not None:
                bar.close()
            if refresh_prior and solver.model_ids_:  # the models' mean normal, then every model toward it
                solver.refresh_prior()
                if solver.prior_ is not None:  # None: fewer than PRIOR_MIN_MODELS models could be solved
                    prior = SpacePrior(solver.prior_, len(solver.model_ids_))
            # the index form of the models (represent.index_vectors): [e_i, (f_i,) c_i] with an intercept, queried
            # with [q, (covariates,) 1]; [e_i, f_i, c_mc, c_free] when the answer formats are kept apart
            stored = represent.index_vectors(solver, D, spec) if solver.model_ids_ else np.zeros((0, space.dim))
            posts, keys = {}, {}
            if solver.model_ids_ and params.get("intercept"):  # the plain method (paper) has no posterior
                keys = {k: _pattern_id(om.prompt_ids, p.mask) for k, p in solver.patterns_.items()}
                posts = posterior.pattern_posteriors(solver, D, keys, spec)
            bench = np.asarray(om.benchmarks)
            row_of = {m: i for i, m in enumerate(om.models)}
            vectors = []
            for j, m in enumerate(solver.model_ids_):
                i = row_of[m]
                row = om.scores[i]
                seen = ~np.isnan(row)
                names = sorted(set(bench[seen].tolist()))
                # in float64, as the answers' own means of the outcomes (before, float32: 131 of 160 was 0.8187500238,
                # so a pulled home, which shows this stored value, said 0.8188 where the publisher said 0.8187)
                acc = {b: float(np.mean(row[seen & (bench == b)], dtype=np.float64)) for b in names}
                vectors.append(ModelVector(model=m, vector=stored[j].astype(np.float32),
                                           n_prompts=int(seen.sum()), benchmarks=names, accuracy=acc,
                                           inputs_digest=vector_digest(digests[m], prior),
                                           pattern=keys.get(solver.pattern_of_[j]),
                                           lam=float(solver.lam_[j]) if keys else None,
                                           noise=float(solver.noise_[j]) if keys else None))
            cal = None
            if calibrate and solver.model_ids_:
                S = om.scores[[row_of[m] for m in solver.model_ids_]]
                cal = _fit_calibration(solver, D, S, spec, groups=bench)
                report.counts["calibration_cells"] = cal.n_cells
        self._ensure_lock()  # (the solve takes minutes on a large index)
        with _timed(report, "vectors"):
            # a re-estimation replaces the stored prior (removes it when there is none now)
            self.store.save_model_vectors(space.id, vectors, prior=prior, replace_prior=refresh_prior,
                                          patterns=posts.values(), calibration=cal,
                                          calibration_models=len(solver.model_ids_))
        report.counts["solved"] = len(vectors)
        if refresh_prior and prior is not None:
            report.counts["prior_models"] = prior.n_models
        return [v.model for v in vectors]

    def _drop_orphan_vectors(self, space) -> list[str]:
        """Vectors of models that no longer have any outcome (their source was replaced without them)."""
        gone = self.store.orphan_model_vectors(space.id)
        if gone:
            self.store.delete_model_vectors(space.id, gone)
        return gone

    def _benchmark_vectors(self, space, report: RunReport) -> bool:
        """Save benchmark mean vectors that are missing or out of date; True when any changed."""
        from .store.sql import BenchmarkVector

        stored = {bv.benchmark: bv for bv in self.store.load_benchmark_vectors(space.id)}
        changed = []
        for b in self.store.list_benchmarks():
            old = stored.get(b.name)
            if (old is not None and old.n_prompts == b.n_prompts) or not b.n_prompts:
                continue  # current, or a pulled benchmark without prompts here (its vector came with it)
            ids = self.store.benchmark_prompts(b.name)
            hashes = self.store.prompt_hashes(ids)
            # the mean of the prompts' lifted vectors: a model's score for it is its mean predicted score
            X = self.rows(np.asarray(ids), hashes, space.params or {}, report, lifted=True)
            vec = X.mean(axis=0, dtype=np.float64).astype(np.float32)
            changed.append(BenchmarkVector(benchmark=b.name, vector=vec, n_prompts=len(ids)))
        if changed:
            self.store.save_benchmark_vectors(space.id, changed)
        report.counts["benchmarks"] = len(changed)
        return bool(changed)

    # ------------------------------------------------------------------ Qdrant
    def _kinds_gone(self, name: str) -> set[str]:
        """The kinds of the space ``name`` whose embedded index was removed (read from its files, the store not
        opened): in the folder of the store passed in, or the configured one when this indexer opens that."""
        from .store.vectors import VectorStore

        if self._vectors is not None:
            path, engine = self._vectors.path, self._vectors.engine
        elif self._open_vectors in (None, VectorStore.from_settings) and not self.settings.qdrant_url:
            path, engine = self.settings.qdrant_path, self.settings.qdrant_engine
        else:
            return set()
        return set(VectorStore.kinds_gone(path, engine, name))

    def _sync_index(self, space, *, changed: list[str], bench_changed: bool, verify: bool, report: RunReport) -> None:
        from .space import space_name

        name = space_name(space)
        gone = self._kinds_gone(name)  # removed by hand: rebuilt from SQL even when nothing else changed
        if not (changed or bench_changed or verify or gone):
            return  # SQL did not change and the last pass finished: the index is current, do not open it
        from . import sync

        # only the kinds this pass touches are opened
        needed = {"models", "benchmarks", "prompts"} if (verify or bench_changed) else {"models"} if changed else set()
        needed |= gone
        # a kind without an index, or whose live collection cannot be read (its folder gone), is rebuilt
        rebuild = {k for k in needed if self.vectors.alias_target(name, k) is None or self.vectors.unreadable(name, k)}
        if verify and rebuild != needed:  # (a kind without an index is rebuilt anyway: nothing to compare)
            for drift in sync.check(self.store, self.vectors, space.id):
                if drift.space != name:
                    continue
                for kind in ("models", "benchmarks", "prompts"):
                    if drift.missing.get(kind) or drift.stale.get(kind) or drift.extra.get(kind) or drift.problems:
                        rebuild.add(kind)
        elif bench_changed:
            rebuild.update({"benchmarks", "prompts"})
        elif changed and self.vectors.alias_target(name, "benchmarks") is not None and (
                self.vectors.count(name, "benchmarks", missing_ok=True) != len(self.store.load_benchmark_vectors(space.id))):
            rebuild.update({"benchmarks", "prompts"})  # a benchmark removed with a dropped source (`sources drop`)
        if rebuild:
            self.progress.stage("index", f"rebuild {sorted(rebuild)}")
            sync.reindex(self.store, self.vectors, space.id, kinds=sorted(rebuild), encoder=self.encoder,
                         progress=self.progress.wrap)
            report.counts["rebuilt"] = sorted(rebuild)
        if changed and "models" not in rebuild:
            self.progress.stage("index", f"push {counted(len(changed), 'model')}")
            report.counts["pushed"] = sync.push_models(self.store, self.vectors, space.id, changed)
        # collections an interrupted rebuild left (no alias points at them): dropped here, for the kinds this pass opened
        # (a rebuild drops those of its own kind); after a killed run or reindex the pass verifies, so opens every kind
        dropped = [c for kind in sorted(needed - rebuild) for c in self.vectors.drop_orphans(name, kind)]
        if dropped:
            report.counts["orphans_dropped"] = dropped


@dataclass
class SolvePlan:
    """What an indexing pass solves in its space (:func:`solve_plan`)."""

    #: the models whose vector is missing or was solved from other inputs (:meth:`Store.stale_models`)
    stale: list[str]
    #: the models the pass solves: ``stale``, or every model with outcomes (``solves_all``)
    models: list[str]
    #: whether the pass re-estimates the space's prior; the stored prior (or None)
    refresh: bool
    prior: object
    #: whether the pass fits the space's calibration map
    calibrate: bool
    #: every model with outcomes (asked lazily)
    every: "_Every"

    @property
    def solves_all(self) -> bool:
        """True when the pass solves every model with outcomes: each plan solves them all exactly when it fits its
        prior or map now."""
        return self.refresh or self.calibrate


def solve_plan(store, space, *, refresh_prior: bool = False, report: RunReport | None = None) -> SolvePlan:
    """The models an indexing pass solves in ``space`` now and the fits it makes (:func:`_prior_plan`,
    :func:`_calibration_plan`), read from SQL alone: the pass follows it, and ``taskspace check``
    (:func:`indexer.sync.check`) reads it to say which models' drift the pass it advises repairs."""
    # the stale models, found in SQL from the digests stored with the outcomes and the vectors: a pass with
    # nothing new reads no model's digest; every model's key only when all are re-solved
    stale = store.stale_models(space.id)
    every = _Every(store)
    drift = store.fit_drift(space.id)  # (since the prior, since the map): read once for both plans
    models, refresh, prior = _prior_plan(store, space, stale, every, drift[0], force=refresh_prior)
    # --refresh-prior fits the map now too (it is held fixed like the prior): under a method without a prior
    # (auto, auto-text) that is all the flag does; before, it did nothing there and the map could not be refitted
    models, calibrate = _calibration_plan(store, space, models, every, drift[1],
                                          refresh or (refresh_prior and bool(every)), report)
    return SolvePlan(stale, models, refresh, prior, calibrate, every)


def _prior_plan(store, space, stale: list[str], models: "_Every", drift: int | None,
                force: bool = False) -> tuple[list[str], bool, object]:
    """(models to solve, whether to re-estimate the space's prior, the stored prior or None). Without a
    ``'mean'`` prior: the stale models. With one: every model when the models solved or removed since the stored
    prior was estimated, or the change in their count, reach :data:`~indexer.space.REFIT_SHARE` of the models it
    was estimated from (:func:`~indexer.space.needs_refit`; ``drift``: those counted by earlier passes,
    :meth:`Store.fit_drift`), or when there is none yet and there are at least
    ``PRIOR_MIN_MODELS`` models (fewer get no prior: plain ``auto``); else the stale ones (solved toward the
    stored prior, if any). ``models``: every model with outcomes. ``force``: re-estimate now (with too few
    models that removes the stored prior)."""
    from .space import SpaceSpec, needs_refit

    if SpaceSpec.of(space).prior != "mean":
        return stale, False, None
    # a pulled space's prior came with it for folding queries: built here, the space estimates its own
    prior = None if store.space_origin(space.id) is not None else store.get_space_prior(space.id)
    n = len(models)
    if force and n:
        return models.keys(), True, prior
    if prior is None:
        from .solver import PRIOR_MIN_MODELS  # (the solver package is imported only by a pass that solves)

        return (models.keys(), True, None) if n >= PRIOR_MIN_MODELS else (stale, False, None)
    if needs_refit(n, prior.n_models, (drift or 0) + len(stale)):  # this pass's too
        return models.keys(), True, prior
    return stale, False, prior

def _calibration_plan(store, space, models: list[str], every: "_Every", drift: int | None,
                      solving_all: bool, report: RunReport | None = None) -> tuple[list[str], bool]:
    """(models to solve, whether to fit the space's calibration map now). The map (:mod:`indexer.posterior`) is
    fitted on the leave-one-out scores of the models a pass solves, so only from a pass that solves every
    model: when there is none yet, or the models solved or removed since it was fitted, or the change in their
    count, reach :data:`~indexer.space.REFIT_SHARE` of the models it was fitted on (then every model is solved), or the prior is re-estimated (``solving_all``); in
    between it is held fixed, like the prior. A map an older taskspace fitted otherwise than this one fits it
    (:func:`_fitted_before`) is fitted now, which ``report`` says once (``counts["calibration_refit"]``, printed
    by `taskspace index`, the worker's pass line and `taskspace runs`). ``every``: every model with outcomes;
    ``drift``: the models counted toward the map's re-estimation by earlier passes."""
    from .space import needs_refit

    if not every:
        return models, False
    cal = store.get_space_calibration(space.id)
    if solving_all or cal is None or needs_refit(len(every), cal.n_models, (drift or 0) + len(models)):
        return every.keys(), True
    why = _fitted_before(cal, space)
    if why:
        from .space import space_name

        note = (f"the calibration map of space {space_name(space)} was fitted by an older taskspace ({why}): "
                "fitted again, every model solved once, so intervals are computed as a fresh index computes them")
        log.debug("%s", note)  # said once, by the pass's summary and its run record
        if report is not None:
            report.counts["calibration_refit"] = note
        return every.keys(), True
    return models, False


class _Every:
    """Every model with outcomes, asked lazily: its count (one SQL count) and, only when a pass solves them all,
    its keys."""

    def __init__(self, store):
        self.store = store
        self._n: int | None = None
        self._keys: list[str] | None = None

    def __len__(self) -> int:
        if self._n is None:
            self._n = self.store.models_with_outcomes()
        return self._n

    def __bool__(self) -> bool:
        return len(self) > 0

    def keys(self) -> list[str]:
        if self._keys is None:
            self._keys = sorted(self.store.model_digests())
            self._n = len(self._keys)
        return list(self._keys)


def _pattern_id(prompt_ids: np.ndarray, mask: np.ndarray) -> str:
    """A stable key of a coverage pattern: sha256 of its sorted database prompt ids (the solver's own keys
    depend on the order of the prompts in a pass), 32 hex digits."""
    import hashlib

    ids = np.sort(np.asarray(prompt_ids, dtype="<i8")[np.asarray(mask)])
    return hashlib.sha256(ids.tobytes()).hexdigest()[:32]


def calibration_refit(store, space) -> str:
    """Why the next pass that solves ``space`` fits its stored calibration map again as one an older taskspace fitted
    otherwise (:func:`_fitted_before`; "" when it does not: no map, no model with outcomes, or a map as this one
    fits it), read from SQL alone: ``taskspace check`` (:func:`indexer.sync.check`) reports it, the pass says it."""
    cal = store.get_space_calibration(space.id)
    if cal is None or not store.models_with_outcomes():
        return ""
    return _fitted_before(cal, space)


def _fitted_before(cal, space) -> str:
    """How a stored calibration map differs from what :func:`_fit_calibration` gives every map of ``space`` now
    ("" where it does not): a map stored by an older taskspace (before schema 0011, no ``lam_cap``; before 0013, no
    ``region_var``; before 0017, a ``region_var`` of the estimator that counted models measured on one benchmark,
    too small; before 0018, without the benchmarks' links) kept its intervals as they were computed then, on every pass after the upgrade, until the model count
    doubled or halved (as passes then re-estimated it), or until ``--refresh-prior`` for the older region variance.
    ``lam_cap``: every space whose models keep a posterior (any option but the plain solve's); ``region_var``: every
    level/deviation (folded) map, by the estimator :data:`indexer.posterior.REGION_ESTIMATOR`."""
    from .posterior import REGION_ESTIMATOR
    from .space import SpaceSpec

    params = SpaceSpec.of(space).params
    missing = []
    if cal.lam_cap is None and any(params.get(k) for k in ("intercept", "select", "free", "prior")):
        missing.append("its lambda cap")
    if cal.folded and cal.region_var is None:
        missing.append("its region variance")
    out = [f"without {' and '.join(missing)}, which this one fits"] if missing else []
    if cal.folded and cal.region_var is not None and (cal.region_estimator or 1) < 2:
        out.append("with its region variance from an older estimator, which counted models measured on one benchmark and so "
                   "could make intervals far from a model's evidence too narrow")
    elif cal.folded and cal.region_var is not None and cal.region_estimator < REGION_ESTIMATOR:
        out.append("without the benchmarks' links, so the intervals of a model measured only on benchmarks no model links "
                   "to the query's were as narrow as if its level there were known")
    return "; ".join(out)


def _fit_calibration(solver, D: np.ndarray, S: np.ndarray, space=None, groups: np.ndarray | None = None):
    """The space's calibration map fitted on the solver's models (outcomes ``S`` in its row order): their
    closed-form leave-one-out scores on a seeded sample of the prompts (:func:`indexer.posterior.loo_cells`);
    the plain method has no leverages, so its in-sample scores stand in. A ``space`` with levels
    (:func:`indexer.represent.has_levels`): the level/deviation map on cross-fitted held-out prompts
    (:func:`indexer.posterior.heldout_cells`: two more solves of every model on half of the prompts each). With a
    posterior, the map carries the models' median lambda, the largest an interval uses
    (:attr:`indexer.posterior.Calibration.lam_cap`). The level/deviation map, given the prompts' benchmarks
    ``groups``, carries the region variance of ``S`` too (:func:`indexer.posterior.region_variance`): how uncertain a
    model's level is where it has no evidence; and which benchmarks no model links (:func:`indexer.posterior.
    benchmark_links`), where it is as uncertain as any model's."""
    import dataclasses

    from . import posterior, represent

    spread = posterior.level_spread(S)
    if space is not None and represent.has_levels(space):
        from .space import SpaceSpec

        spec = SpaceSpec.of(space)
        level, deviation, shared, outcomes, coverage = posterior.heldout_cells(spec.solver, D, S, spec,
                                                                               with_coverage=True)
        cal = posterior.fit_level_calibration(level, deviation, shared, outcomes, spread=spread, coverage=coverage)
    else:
        prompts = posterior.calibration_prompts(D.shape[0])
        if np.isnan(np.asarray(solver.noise_)).any():  # the plain method: no posterior, no interval
            Sp = np.asarray(S[:, prompts], dtype=np.float64)
            obs = ~np.isnan(Sp)
            return posterior.fit_calibration(solver.predict(np.asarray(D[prompts])).T[obs], Sp[obs], spread)
        cal = posterior.fit_calibration(*posterior.loo_cells(solver, D, S, prompts), spread)
    region = posterior.region_variance(S, groups) if groups is not None and cal.folded else None
    links = posterior.benchmark_links(S, groups) if region is not None else None
    return dataclasses.replace(cal, lam_cap=posterior.lambda_cap(solver.lam_), region_var=region,
                               region_estimator=None if region is None else posterior.REGION_ESTIMATOR, links=links)


def run_index(extra_sources: list[SourceSpec] | None = None, *, progress: Progress | None = None,
              stop: threading.Event | None = None, refresh_prior: bool = False,
              accept_partial: bool = False) -> RunReport:
    """Open the configured stores and run one pass (the ``taskspace index`` command)."""
    from .store.sql import open_store
    from .store.vectors import VectorStore

    VectorStore.refuse_if_served()  # before anything is written (sources.toml, SQL): it could not be published
    store = open_store()
    indexer = Indexer(store, progress=progress, stop=stop, open_vectors=VectorStore.from_settings)
    try:
        return indexer.run(extra_sources, refresh_prior=refresh_prior, accept_partial=accept_partial)
    finally:
        indexer.close()
        store.close()


__all__ = ["Indexer", "RunReport", "Progress", "run_index", "STAGES"]


def _gone_from_folders(specs: list[SourceSpec], stored) -> list[str]:
    """A warning for each stored local source inside a configured folder that is no longer there (a model's run folder
    deleted or moved out of an lm-eval output folder): its results stay, and ``sources drop`` removes them; unsaid, a
    pass would say "nothing new" while the index serves the deleted results."""
    from .ingest import parse_spec, spec_kind

    roots = []
    for spec in specs:
        try:
            parsed = parse_spec(spec.spec)
        except IndexerError:
            continue  # _ingest_one reports it
        if parsed.kind == "path" and Path(parsed.target).is_dir():
            roots.append(Path(parsed.target).resolve())
    out = []
    for rec in stored:
        if rec.kind == "pulled" or spec_kind(rec.location) != "path":
            continue
        where = Path(rec.location)
        root = next((r for r in roots if r in where.parents), None)
        if root is not None and not where.exists():
            out.append(f"{rec.location}: stored from the configured folder {root}, which no longer holds it: its "
                       f"results stay in the index; `taskspace sources drop {rec.location}` removes them")
    return out


def _empty_folder(spec: SourceSpec) -> bool:
    """True for a configured local folder with nothing in it yet (``taskspace sources add`` accepts one, as a folder
    results will land in): a pass reads nothing there, which is no error. Before, every pass failed on it ("cannot
    tell the format of this folder", run ``partial``, exit 1) until a file arrived."""
    from .ingest import parse_spec

    try:
        parsed = parse_spec(spec.spec)
    except IndexerError:
        return False  # _ingest_one reports it
    if parsed.kind != "path":
        return False
    from .sources.registry import empty_folder

    path = Path(parsed.target)
    return path.is_dir() and empty_folder(path)
