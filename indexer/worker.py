"""The scheduled worker: ``taskspace worker --every 6h`` (or a cron expression) runs indexing passes forever.

- SIGTERM / SIGINT / SIGHUP set a stop flag: the current item (source, stage) finishes, the pass records itself as
  ``stopped`` and the worker exits 0. A second signal exits at once (what was committed stays committed). SIGHUP (the
  terminal or ssh session closed) is taken as SIGTERM: there is nothing to reload (each pass reads ``sources.toml``
  afresh), and its default action killed the worker mid-pass, leaving its run ``running``.
- One pass per database at a time (the SQL lock ``"index"``): when another process holds it, the worker
  waits and tries again (``wait=True``) or exits with a clear message.
- A pass that fails (a lost database, or an unexpected exception: a bug) is logged (an unexpected exception with
  its traceback), counts as a pass (``--max-passes``), is recorded as a ``failed`` run by the pass itself
  (:meth:`indexer.pipeline.Indexer.run`), and is retried at the next scheduled time: the worker keeps serving. A pass
  whose database session the server ended (a restart or failover: ConnectionLostError), or whose database could not be
  reached (DatabaseUnreachableError: refused, starting up), is run again after ``busy_retry_seconds`` (30 s), up to
  :data:`LOST_RETRIES` times in a row, then at the next scheduled time. A retry (this one, or one for the lock) never
  waits past the schedule's next pass: a schedule under 30 s retries at its own pace.
  A pass that fails with an error no later pass can get past (``IndexerError.permanent``: a database without the
  taskspace tables or at another schema, a database URL that names none) ends the worker with its code (2): the
  operator must act and start it again (``taskspace serve``'s in-process worker: its thread ends and the server keeps
  serving its last index, as its log line says). A bad ``sources.toml`` (read afresh by each pass) is retried as above.
  One failing source or model never stops a pass (it is recorded with the run and retried next time).
  Only KeyboardInterrupt / SystemExit (the second signal, an exit) end the worker.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from datetime import datetime, timezone
from typing import Callable

from .errors import (CLI, SERVE, BusyError, ConnectionLostError, DatabaseUnreachableError, IndexerError, counted,
                     item_error_line, one_line)
from .pipeline import truncated_note, unconfigured_note
from .schedule import next_run

log = logging.getLogger(__name__)

#: passes in a row that failed because the database ended their session (ConnectionLostError), each run again after
#: ``busy_retry_seconds`` instead of at the next scheduled time
LOST_RETRIES = 3


def hangup_is_ours() -> bool:
    """Whether this process may take SIGHUP as a stop: not where it was started to ignore it (``nohup``, a service
    manager's ``IgnoreSIGHUP``), which is the user asking it to outlive the terminal. Before, the handlers of worker,
    index and reindex replaced the ignored disposition, so ``nohup taskspace worker &`` stopped when its terminal
    closed."""
    return signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN


class Worker:
    """Runs ``run_pass()`` on a schedule until stopped. ``run_pass`` gets the stop event."""

    def __init__(self, schedule: str, run_pass: Callable[[threading.Event], object], *, wait_for_lock: bool = True,
                 busy_retry_seconds: float = 30.0, max_passes: int | None = None, where: str | None = None):
        next_run(schedule, datetime.now(timezone.utc))  # validate now: a bad schedule fails before any work
        self.schedule = schedule
        #: what the worker's start line says it indexes (the database, the sources file); None: nothing
        self.where = where
        #: the signal that stopped the worker (its name), None until one came
        self.signalled: str | None = None
        self.run_pass = run_pass
        self.wait_for_lock = wait_for_lock
        self.busy_retry_seconds = busy_retry_seconds
        self.max_passes = max_passes
        self.stop = threading.Event()
        self.passes = 0
        #: when (time.monotonic()) the next pass starts while the worker waits for it; None while a pass runs
        self.next_at: float | None = None
        #: the error no later pass can get past that ended :meth:`serve` (``IndexerError.permanent``); None until then
        self.stopped_by: IndexerError | None = None

    def _on_signal(self, signum, frame) -> None:
        name = signal.Signals(signum).name
        if self.stop.is_set():
            raise KeyboardInterrupt(f"a second {signal.Signals(signum).name}")  # second signal: leave now
        self.signalled = name
        # waiting for the next pass there is no item to finish: before, "finishing the current item" while idle too
        log.info("signal %s: %s", name, "no pass running: exiting" if self.next_at is not None else
                 "finishing the current item, then exiting")
        self.stop.set()

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        if hangup_is_ours():  # a closed terminal: stop as for SIGTERM (nothing to reload); under nohup: ignored still
            signal.signal(signal.SIGHUP, self._on_signal)

    def _retry_wait(self) -> float:
        """How long to wait before trying a pass again (the lock busy, the database lost or unreachable): the busy
        retry (30 s), or less when the schedule's next pass comes sooner. Before, 30 s whatever the schedule, so a
        `--worker-every 10s` worker retried a pass later than its schedule would have run it."""
        scheduled = (next_run(self.schedule, datetime.now(timezone.utc)) - datetime.now(timezone.utc)).total_seconds()
        return max(0.0, min(self.busy_retry_seconds, scheduled))

    def _wait(self, seconds: float) -> None:
        """Wait ``seconds`` for the next pass (or the stop flag), saying when it starts (:attr:`next_at`)."""
        self.next_at = time.monotonic() + seconds
        try:
            self.stop.wait(seconds)
        finally:
            self.next_at = None

    def _retry_note(self) -> str:
        """What a failed pass's log line says of the retry: none after the last of ``max_passes`` (a one-shot that
        promised a retry which never came) or a signal."""
        if self.stop.is_set() or (self.max_passes is not None and self.max_passes <= self.passes):
            return ""
        return " (retrying at the next scheduled time)"

    def serve(self) -> int:
        """Loop until stopped (or ``max_passes``). Returns the exit code: 0 when stopped by a signal; after
        ``max_passes`` the last pass's code, as `taskspace index` exits (0 ok, 1 item errors or an unexpected failure,
        a failed pass's own code). Before, 0 whatever the passes recorded.

        The log says when the worker started (its pid, schedule and what it indexes) and when and why it stopped: before,
        a worker restarted after a kill -9 or stopped by a signal while idle left no line telling one worker's passes
        from the next one's, nor that it had exited."""
        import os

        log.info("worker started (pid %d): %s%s", os.getpid(), _schedule_text(self.schedule),
                 f"; {self.where}" if self.where else "")
        code = self._serve()
        if self.signalled:
            log.info("worker stopped by %s after %s: exit %d", self.signalled, counted(self.passes, "pass", "passes"),
                     code)
        elif self.max_passes is not None and not self.passes < self.max_passes:
            log.info("worker done after %s (--max-passes): exit %d", counted(self.passes, "pass", "passes"), code)
        return code

    def _serve(self) -> int:
        last_code = 0
        lost = 0  # passes in a row that failed because the database ended their session, each run again soon
        # (the holder's message, since when, who) while another pass (or a server) holds the lock
        waiting: tuple[str, float, str] | None = None
        while not self.stop.is_set():
            started = time.monotonic()  # the end of a wait for the lock: the pass's own time is not waiting
            try:
                report = self.run_pass(self.stop)
                lost = 0
                if waiting:
                    log.info("the lock is free (waited %.0f s for %s); this pass ran", started - waiting[1], waiting[2])
                    waiting = None
                self.passes += 1
                last_code = getattr(report, "exit_code", 0)
                unconfigured = unconfigured_note(report)  # as `taskspace index` says it: before, a worker on a home
                # without sources.toml (a mistyped TASKSPACE_HOME) logged "ok: nothing new" every pass, reading nothing
                log.info("pass finished: %s%s", pass_summary(report), f"; {unconfigured}" if unconfigured else "")
                note = truncated_note(getattr(report, "counts", None) or {})
                if note:  # as `taskspace index` prints it
                    log.info("%s", note)
                _log_errors(report)
            except BusyError as exc:
                if not self.wait_for_lock:
                    log.error("%s", exc)
                    return exc.exit_code
                wait = self._retry_wait()
                held = one_line(exc.held)  # who holds it, without the advice to retry: this worker does
                if waiting is None or waiting[0] != held:  # once per holder: not a line every 30 s of its pass
                    # a holder for as long as it runs (a server on the embedded index): what to do, as waiting alone
                    # could last for days
                    lasting = f"; {one_line(exc.lasting)}" if getattr(exc, "lasting", None) else ""
                    log.warning("%s%s; waiting: trying again every %s s until it is free", held, lasting, _seconds(wait))
                    waiting = (held, waiting[1] if waiting else time.monotonic(),
                               "the process that held it" if lasting else "the other pass")
                else:
                    log.debug("still busy: %s", held)
                self._wait(wait)
                continue
            except IndexerError as exc:
                waiting = None  # it got the lock (or failed before asking): a later holder is logged again
                self.passes += 1
                last_code = exc.exit_code
                # the database ended the pass's session (a restart, a failover): run it again soon, not hours later (a
                # server's first pass: no index until then); a few times in a row, then back to the schedule
                # the same for a database that could not be reached (restarting, failing over: before, that pass waited
                # for the schedule, so a restart under way when a pass began, or outlasting the retries, left it hours behind)
                again = isinstance(exc, (ConnectionLostError, DatabaseUnreachableError)) and lost < LOST_RETRIES and (
                    not self.stop.is_set()) and (self.max_passes is None or self.passes < self.max_passes)
                lost = lost + 1 if again else 0
                why = "ended its session" if isinstance(exc, ConnectionLostError) else "could not be reached"
                wait = self._retry_wait() if again else 0.0
                sooner = " (the next scheduled pass)" if wait < self.busy_retry_seconds else ""
                note = f" (the database {why}: retrying in {_seconds(wait)} s{sooner})" if again else None
                if exc.permanent:  # the database's schema, its URL: no later pass can get past it, so say so and end
                    # `taskspace serve`'s worker ends its thread alone: the server goes on answering from its index
                    end = ("the server's indexing worker stops; the server keeps serving its last index: restart it "
                           "once this is fixed" if CLI.get() == SERVE else f"exiting with code {exc.exit_code}")
                    log.error("pass failed: %s (no later pass can succeed until this is fixed: %s)", one_line(str(exc)),
                              end)
                    self.stopped_by = exc  # said by `taskspace serve`'s /readyz
                    return exc.exit_code
                log.error("pass failed: %s%s", one_line(str(exc)), note or self._retry_note())
                if again:
                    self._wait(wait)
                    continue
            except Exception as exc:  # noqa: BLE001 - a bug in a pass must not end a scheduled worker
                waiting = None
                self.passes += 1
                last_code = 1  # as `taskspace index` exits on an unexpected error
                log.exception("pass failed with an unexpected %s: %s%s", type(exc).__name__, one_line(str(exc)),
                              self._retry_note())
            if self.stop.is_set():
                break  # stopped during the pass (a signal): no next pass to announce
            if self.max_passes is not None and self.passes >= self.max_passes:
                return last_code  # a one-shot (CI, a cron job) tells a failing pass from a clean one, as `index` does
            due = next_run(self.schedule, datetime.now(timezone.utc))
            log.info("next pass at %s", due.isoformat(timespec="seconds"))
            while not self.stop.is_set():
                left = (due - datetime.now(timezone.utc)).total_seconds()
                if left <= 0:
                    break
                self.next_at = time.monotonic() + left
                self.stop.wait(min(left, 60.0))
            self.next_at = None
        return 0


def _schedule_text(schedule: str) -> str:
    """The schedule as the start line says it: ``every 6h`` or ``cron "0 3 * * *"``."""
    from .schedule import is_cron

    return f'cron "{schedule}"' if is_cron(schedule) else f"a pass every {schedule}"


def _seconds(x: float) -> str:
    """A wait as the log says it: 30, 2, 0.05."""
    return f"{x:.0f}" if x >= 10 else f"{x:.2g}"


#: what a pass did, in the order of `taskspace index`'s summary (the counts of :class:`indexer.pipeline.RunReport`);
#: a changed source is stored whole, so its outcomes are the cells stored, not added (a table of 750 grown by 125
#: stores 875); the embedded count is of texts (with ``auto-mc`` a prompt with answer options is two), as the pass's
#: truncation note says: before, "898 prompts embedded" beside "462 prompts added"
_DONE = (("sources", "source", "ingested"), ("quarantined", "source", "quarantined"),
         ("models_added", "model", "added"), ("prompts_added", "prompt", "added"), ("outcomes_added", "outcome", "stored"),
         ("embedded", "text", "embedded"), ("solved", "model", "solved"), ("removed", "model", "removed"),
         ("benchmarks", "benchmark vector", ""), ("pushed", "model", "pushed"))


def pass_summary(report) -> str:
    """The worker's line for a finished pass: ``ok (run 3): 1 source ingested, 4 models solved, ...`` or
    ``ok (run 4): nothing new: 1 source unchanged`` (each count by :func:`indexer.errors.counted`; before, "1 source(s)
    unchanged"). Before, every pass logged only its status ("ok"), the same for a pass that indexed new results and
    one that changed nothing."""
    counts = getattr(report, "counts", None)
    status = getattr(report, "status", report)
    if not isinstance(counts, dict):
        return str(status)
    head = f"{status} (run {getattr(report, 'run_id', '?')})"
    done = [f"{counted(counts[key], noun)} {what}".rstrip() for key, noun, what in _DONE if counts.get(key)]
    if counts.get("rebuilt"):
        done.append("index rebuilt (" + ", ".join(counts["rebuilt"]) + ")")
    if counts.get("pushed_other"):  # the points of other spaces whose payload changed in SQL (licenses lowered, ...)
        done.append(f"{counted(sum(counts['pushed_other'].values()), 'model')} pushed to "
                    f"{counted(len(counts['pushed_other']), 'other space')}")
    unchanged = counts.get("sources_unchanged", 0)
    killed = counts.get("killed_runs_marked") or []  # a restart after kill -9: the run it left, seen in `runs` only
    killed_note = (f"; run{'s' if len(killed) > 1 else ''} {', '.join(map(str, killed))} left running by a killed "
                   "process marked killed" if killed else "")
    refit = f"; {counts['calibration_refit']}" if counts.get("calibration_refit") else ""  # why every model was solved
    read = _configured_note(getattr(report, "sources", None), counts)
    if not done:
        return (f"{head}: nothing new" + (f": {counted(unchanged, 'source')} unchanged" if unchanged else "") + read
                + killed_note)
    return (f"{head}: " + ", ".join(done) + (f"; {counted(unchanged, 'source')} unchanged" if unchanged else "") + read
            + refit + killed_note)


def _configured_note(configured, counts: dict) -> str:
    """``; of 3 sources read: 1 ingested, 2 unchanged (the counts before are of stored sources: ...)`` when the
    pass's sources (``report.sources``, one per configured source, as ``stage ingest: 3 sources`` counts them) are
    not what the counts of stored sources say: an lm-eval output folder is one configured source and one stored source
    per model folder. Before, 3 configured sources gave "2 sources ingested ...; 2 sources unchanged" and nothing
    told the two counts apart. Empty when they agree (a source is one stored source) or no list is given."""
    if not isinstance(configured, list) or not configured:
        return ""
    from collections import Counter

    by = Counter(str(s.get("status")) for s in configured if isinstance(s, dict))
    if (by["ingested"], by["unchanged"]) == (counts.get("sources", 0), counts.get("sources_unchanged", 0)):
        return ""
    each = ", ".join(f"{n} {status}" for status, n in sorted(by.items(), key=lambda kv: (-kv[1], kv[0])))
    return (f"; of {counted(len(configured), 'source')} read: {each} (the counts before are of stored sources: each "
            "model folder of an lm-eval output folder is one)")


#: the item errors of a pass the worker logs (as `taskspace index` prints them); the rest are counted
MAX_LOGGED_ERRORS = 20


def _log_errors(report) -> None:
    """A warning per item error of a finished pass (``file:line: message``, at most :data:`MAX_LOGGED_ERRORS`), as
    `taskspace index` prints them. Before, a worker's log said only "pass finished: partial": which source or file
    failed was in the run's record only (`taskspace runs` shows it now, under the run)."""
    errors = getattr(report, "errors", None) or []
    for err in errors[:MAX_LOGGED_ERRORS]:
        log.warning("%s", item_error_line(err))
    if len(errors) > MAX_LOGGED_ERRORS:
        log.warning("... and %s in run %s", counted(len(errors) - MAX_LOGGED_ERRORS, "more error"),
                    getattr(report, "run_id", "?"))
