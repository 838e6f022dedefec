"""The indexing commands of the ``taskspace`` CLI: index, worker, runs (registered in :mod:`indexer.cli`).

Thin adapters: parse, call :mod:`indexer.pipeline` / :mod:`indexer.worker`, format.
"""

from __future__ import annotations

import json
import math
import sys
import threading
from pathlib import Path
from typing import Optional

import typer

from .errors import counted, item_error_line


def echo_json(obj) -> None:
    """Print an object as indented JSON on stdout: standard JSON (RFC 8259), so a number without a value (a NaN
    metric, an infinite bound) is ``null``; Python's bare ``NaN`` token is refused by jq 1.6, JSON.parse and Go."""
    write_out(json_text(obj) + "\n")


#: the size of each write of :func:`write_out` (a pipe's buffer on Linux)
WRITE_PIECE = 1 << 16


def write_out(text: str, file=None) -> None:
    """Write ``text`` to stdout (or ``file``) in pieces of :data:`WRITE_PIECE` characters, then flush. A pipe whose
    reader goes (`taskspace models | head -1`) takes part of a long write and Python counts it as written, the rest
    dropped without an error, so one write of a long listing exited 0; the next piece's write raises BrokenPipeError,
    which :func:`indexer.cli.main` ends with exit 141."""
    out = sys.stdout if file is None else file
    for at in range(0, len(text), WRITE_PIECE):
        out.write(text[at:at + WRITE_PIECE])
    out.flush()


def json_text(obj, indent: int = 2) -> str:
    """``obj`` as standard JSON text (:func:`echo_json`; the benchmark scripts' ``--json`` files too)."""
    return json.dumps(_finite(obj), indent=indent, sort_keys=False, default=_json_default, allow_nan=False)


def _json_default(value):
    """A value JSON has no type for: a time as ISO 8601 (``2026-12-05T04:48:31.257500+00:00``, as ``sources stored
    --json`` writes one; before, ``runs --json`` wrote ``str()``'s "2026-12-05 04:48:31.257500+00:00"),
    anything else as its text."""
    import datetime

    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    return str(value)


def _finite(obj):
    """``obj`` with every float that is NaN or infinite replaced by None (dicts, lists and tuples walked)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def checked_option(check, message=str):
    """A typer callback that runs ``check(value)`` while the options are parsed (None passes): an
    :class:`~indexer.errors.IndexerError` from it is a usage error naming the option (exit 2) with ``message(error)``,
    before anything is read or opened."""
    def callback(value):
        if value is None:
            return None
        from .errors import IndexerError

        try:
            check(value)
        except IndexerError as exc:
            raise typer.BadParameter(message(exc)) from None
        return value

    return callback


def _spec(value: str) -> None:
    from .ingest import parse_spec, spec_kind

    if spec_kind(value) != "path":  # a path that is not there (or a blank one) stays an input error (exit 1)
        parse_spec(value)


#: a source spec given as an argument (``ingest SOURCE``): a malformed ``hub:`` / ``hub-org:`` spec is a usage error
#: naming the argument (exit 2), as ``index --source`` and ``sources add`` refuse it; before, the library's input
#: error, exit 1, for the same spec those two refuse with 2
spec_argument = checked_option(_spec, lambda exc: f"{exc.message}" + (f" (given {exc.item!r})" if exc.item else ""))


def _interval(value: str) -> None:
    from .errors import ConfigError
    from .schedule import is_cron, parse_interval

    if is_cron(value):  # a crontab line's schedule: point at --cron rather than say the interval is not understood
        raise ConfigError(f"{value!r} is a cron expression, not an interval: give it as --cron \"{value.strip()}\"")
    parse_interval(value)


#: ``worker --every`` / ``serve --worker-every``: an interval, checked while the options are parsed, so a bad one is a
#: usage error naming the option (before: "error: interval 'abc' is not understood ...", no option named)
interval_option = checked_option(_interval)


def cron_option(interval: str):
    """``--cron`` of ``worker`` (``interval``: ``--every``) and ``serve`` (``--worker-every``): a cron expression,
    checked while the options are parsed (a usage error naming ``--cron``, as the other options' are)."""
    def check(value: str) -> None:
        from .errors import ConfigError
        from .schedule import Cron, is_cron

        if not is_cron(value):
            raise ConfigError(f"{value!r} is not a cron expression (5 fields or @daily ...); for an interval use "
                              f"{interval}")
        Cron(value)

    return checked_option(check)


def _reader(value: str) -> None:
    from .sources.registry import get_reader

    get_reader(value)


#: ``--format`` (ingest, index, sources add, evaluate): a reader name, checked while the options are parsed (a usage
#: error naming the option and the formats, exit 2). Before, ``ingest --format bogus`` reported the source as rejected
#: (exit 1, "1 error(s)"), and ``evaluate`` named the first DATA, as if the data were at fault.
format_option = checked_option(_reader)

#: the reading options of ``taskspace ingest``, which ``taskspace sources add`` and ``taskspace index --source`` take
#: too (a configured source carries them: :class:`indexer.sourcelist.SourceSpec`); one definition for the three
PROMPTS_OPTION = typer.Option(None, "--prompts", help="Plain tables: the prompts file (default: prompts.<ext> beside the outcomes).")
MODEL_OPTION = typer.Option(None, "--model", help="lm-eval/lighteval: the model name to record (default: from the results file); for one model's runs, not a folder, repo or hub-org: of several.")
FILTER_OPTION = typer.Option(None, "--filter", help="lm-eval: read the lines of this filter (default: the task's answer-extracting filter); a file with other filters but not this one is refused, a task with only 'none' is read with it.")
METRIC_OPTION = typer.Option(None, "--metric", help="lm-eval/lighteval: the per-sample metric key to read (default: rules.toml): KEY for every task, or TASK=KEY for one task (TASK as its files name it, or a pattern: 'gfg_*=bert_f1'); repeatable: one KEY at most, and a TASK=KEY per task, which must name a task of the source.")


def metric_values(values, advice: str):
    """``--metric``'s values as the library takes them (None, a KEY, or a tuple of KEY and TASK=KEY entries:
    :func:`indexer.sources.scoring.metric_value_text`), or a ConfigError (exit 2) ending in ``advice`` (what to do;
    what was left undone): two KEYs for every task (click kept the last of them without a word, so `--metric acc
    --metric acc_norm` read acc_norm alone), a blank one, a TASK given two keys."""
    from .errors import ConfigError
    from .sources.scoring import metric_value_text, parse_metric

    if not values:
        return None
    try:
        parse_metric(list(values))
    except ConfigError as exc:
        raise ConfigError(f"{exc}; {advice}") from None
    return metric_value_text(list(values))


def reading_options(prompts, model, filter, metric) -> dict:
    """The reading options given (``--prompts``, ``--model``, ``--filter``, ``--metric``), as the library takes them."""
    given = {"prompts": None if prompts is None else str(prompts), "model": model, "filter": filter, "metric": metric}
    return {k: v for k, v in given.items() if v is not None}


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP taken as Ctrl-C (:func:`interrupt_on_sigterm`): the command exits 143 (129), its run recorded."""


#: the signal numbers the handler of :func:`interrupt_on_sigterm` took (typer turns the KeyboardInterrupt into Exit(130))
terminated: list[int] = []


def interrupt_on_sigterm() -> None:
    """Make SIGTERM (``timeout``, a service manager, ``kill``) stop this command as Ctrl-C does: the pass (or reindex)
    records its run as ``interrupted``, a command that records no run (``evaluate``, ``demo``, ``spaces drop``) says
    what it kept, and the command exits 143. SIGHUP (its terminal or ssh session closed) the same, exit 129. Before, either signal ended the process at once: its run stayed ``running`` in ``taskspace runs`` until
    the next pass marked it ``killed``."""
    import signal

    def on_term(signum, frame):
        terminated.append(signum)
        if _in_unraisable_hook(frame):  # raised in that hook it would be dropped too: sent again, after the hook
            _send_again(signum)
            return
        raise Terminated(f"terminated ({signal.Signals(signum).name})")

    try:
        signal.signal(signal.SIGTERM, on_term)
        from .worker import hangup_is_ours

        if hangup_is_ours():
            signal.signal(signal.SIGHUP, on_term)
    except ValueError:  # not the main thread (the command called from a thread): SIGTERM keeps its own action
        return
    if sys.unraisablehook is not _unraisable_hook:
        _unraisable_hook.previous = sys.unraisablehook
        sys.unraisablehook = _unraisable_hook


def _unraisable_hook(unraisable) -> None:
    """Deliver again a SIGTERM (SIGHUP) whose :class:`Terminated` Python dropped: raised where the handler ran, in a
    finalizer (a ``__del__``, a weakref callback of the garbage collector: SQLAlchemy's run every few transactions),
    it is printed as "Exception ignored in ..." with a traceback and lost, and the command went on as if never
    signalled (`taskspace demo` under load: exit 0, about 1 SIGTERM in 40). Nothing is printed for the dropped one.
    Once signalled, the error of any other finalizer is logged at DEBUG: the interrupt, raised wherever the process was,
    can leave a library's state half-updated, whose cleanup then fails (SQLAlchemy's event registry: "weak object has
    gone away"), and the command, ending, said "Exception ignored in ..." with a traceback under its one line."""
    if isinstance(unraisable.exc_value, Terminated) and terminated:
        _send_again(terminated[-1])
    elif terminated:
        import logging
        import signal

        logging.getLogger(__name__).debug("after %s, ignored in %r: %r", signal.Signals(terminated[0]).name,
                                          unraisable.object, unraisable.exc_value)
    else:
        _unraisable_hook.previous(unraisable)


_unraisable_hook.previous = sys.__unraisablehook__


def _send_again(signum: int) -> None:
    """Send ``signum`` to the main thread again, from another thread in 10 ms: its handler runs once the finalizer (or
    the hook) it was dropped in has returned."""
    import signal

    again = threading.Timer(0.01, signal.pthread_kill, (threading.main_thread().ident, signum))
    again.daemon = True
    again.start()


def _in_unraisable_hook(frame) -> bool:
    while frame is not None:
        if frame.f_code is _unraisable_hook.__code__:
            return True
        frame = frame.f_back
    return False


def each(callback):
    """A list option's callback running ``callback`` on each value given."""
    def check(values):
        return [callback(v) for v in values] if values else values

    return check


def one_value(option: str, values, advice: str):
    """The one value of ``option`` (None when not given; the same value twice is one), read as a list so that two
    values are a usage error naming both, then ``advice`` (what to do; what was left undone): click keeps the last of
    two values without a word, so `--metric acc --metric acc_norm` read acc_norm alone."""
    distinct = list(dict.fromkeys(str(v) if isinstance(v, Path) else v for v in values or []))
    if len(distinct) > 1:
        from .errors import ConfigError

        raise ConfigError(f"{option} was given {len(distinct)} values ({', '.join(map(repr, distinct))}): {advice}")
    return (values or [None])[0]


def _one_value(option: str, values, placeholder: str):
    """The one value of ``index``'s per-source ``option``: `--source A --metric m1 --source B --metric m2` reads as
    options per source, but the options are the pass's, every --source's; before, the last value silently read (and
    was saved with) every source."""
    return one_value(option, values, f"{option} applies to every --source given, one value for all; to read sources "
                                     f"with different options, configure each with its own (`taskspace sources add "
                                     f"SPEC {option} {placeholder}`), then run `taskspace index`; nothing was saved")


def index(
    source: list[str] = typer.Option(
        None, "--source", "-s",
        help="Add a source (a path, hub:ORG/REPO or hub-org:ORG) to the configuration and index it. Repeatable.",
    ),
    # each a list, so that one given twice with two values is refused (one_value) rather than the last silently read
    fmt: Optional[list[str]] = typer.Option(None, "--format", callback=each(format_option),
                                            help="Reader for the --source paths (default: detected)."),
    limit: Optional[list[int]] = typer.Option(None, "--limit", help="At most this many datasets per hub-org: source."),
    prompts: Optional[list[Path]] = PROMPTS_OPTION,
    model: Optional[list[str]] = MODEL_OPTION,
    filter: Optional[list[str]] = FILTER_OPTION,
    metric: Optional[list[str]] = METRIC_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print the run summary as JSON."),
    accept_partial: bool = typer.Option(
        False, "--accept-partial",
        help="Store new revisions that read much worse than the stored ones (errors and over 10% of the stored outcome "
             "cells lost) instead of quarantining them.",
    ),
    refresh_prior: bool = typer.Option(
        False, "--refresh-prior",
        help="Re-estimate now what passes hold fixed until the models changed since reach a quarter of the models: the space's "
             "prior (auto-mc, auto-mean: the models' mean normal) and the calibration map; every model is solved once.",
    ),
) -> None:
    """One indexing pass: ingest new/changed sources, embed new prompts, re-solve changed models, update Qdrant.

    Sources are configured in $TASKSPACE_HOME/sources.toml (see docs/WORKER.md). Exit code 0 when the index
    is current, 1 when any item failed (the rest is indexed; the next pass retries the failures) or a source was
    quarantined (its stored revision keeps serving; --accept-partial stores the new one).

    --format and the reading options (--prompts, --model, --filter, --metric) apply to every --source given, and
    are saved with each in sources.toml (--limit with each hub-org: one); each takes one value (--metric: one KEY,
    plus TASK=KEY for a task read with a key of its own). To read sources with different options, configure each
    with its own (`taskspace sources add SPEC --metric M`), then run `taskspace index`.

    Examples:

      taskspace index

      taskspace index --source indexer/data/sample

      taskspace index --source hub:my-org/my-eval-results --json
    """
    from .pipeline import Progress, run_index
    from .sourcelist import SourceSpec

    from .ingest import spec_kind

    fmt, limit = _one_value("--format", fmt, "F"), _one_value("--limit", limit, "N")
    prompts, model = _one_value("--prompts", prompts, "FILE"), _one_value("--model", model, "NAME")
    filter = _one_value("--filter", filter, "F")
    metric = metric_values(metric, "--metric applies to every --source given, one KEY for all (and TASK=KEY per task); "
                                   "to read sources with different options, configure each with its own (`taskspace "
                                   "sources add SPEC --metric M`), then run `taskspace index`; nothing was saved")
    orgs = [s for s in source or [] if spec_kind(s.strip()) == "hub-org"]
    if limit is not None and not orgs:  # (sourcelist.validate refuses a limit on another kind of source)
        from .errors import ConfigError

        raise ConfigError("--limit applies only to hub-org: sources given with --source (at most that many of the "
                          "organisation's datasets); drop --limit")
    if fmt is not None and not source:  # it would be ignored (the configured sources keep their own format)
        from .errors import ConfigError

        raise ConfigError("--format applies only to the sources given with --source (the configured ones are read "
                          "with the format sources.toml gives them); add --source PATH, or drop --format")
    options = reading_options(prompts, model, filter, metric)
    if options and not source:  # they would be ignored (the configured sources keep their own options)
        from .errors import ConfigError

        given = " ".join(f"--{k}" for k in options)
        raise ConfigError(f"{given} applies only to the sources given with --source (the configured ones are read "
                          "with the options sources.toml gives them: `taskspace sources add SPEC "
                          f"{given} ...` sets them); add --source SPEC, or drop {given}")
    extra = [SourceSpec(spec=s, format=fmt, limit=limit if s in orgs else None, **options) for s in source or []]
    interrupt_on_sigterm()
    report = run_index(extra or None, progress=Progress(None if not as_json else False), refresh_prior=refresh_prior,
                       accept_partial=accept_partial)
    if as_json:
        echo_json(report.as_dict())
    else:
        _print_run(report)
    raise typer.Exit(report.exit_code)


def _print_run(report) -> None:
    c = report.counts
    typer.echo(f"run {report.run_id}: {report.status}")
    for src in report.sources:
        typer.echo(f"  {src['status']:<11} {src['spec']}" + (f"  ({counted(src['errors'], 'error')})" if src["errors"] else ""))
    if not report.sources:  # a pass over nothing: say where sources come from (it indexes what `ingest` stored)
        from .pipeline import unconfigured_note

        typer.echo(f"  {unconfigured_note(report) or 'no sources read'}")
    rows = [
        ("sources ingested", c.get("sources", 0)), ("sources unchanged", c.get("sources_unchanged", 0)),
        ("sources quarantined", c.get("quarantined", 0)),
        ("models added", c.get("models_added", 0)), ("prompts added", c.get("prompts_added", 0)),
        ("outcomes stored", c.get("outcomes_added", 0)), ("texts embedded", c.get("embedded", 0)),
        ("models solved", c.get("solved", 0)), ("models removed", c.get("removed", 0)),
        ("benchmark vectors", c.get("benchmarks", 0)), ("models pushed", c.get("pushed", 0)),
        ("collections rebuilt", ", ".join(c.get("rebuilt", [])) or "-"),
    ]
    for name, value in rows:
        typer.echo(f"  {name:<20} {value}")
    for name, n in (c.get("pushed_other") or {}).items():  # payloads changed in SQL (licenses lowered, metadata)
        typer.echo(f"  {'models pushed':<20} {n} to space {name}")
    if c.get("truncated"):
        from .pipeline import truncated_note

        typer.echo(f"  {truncated_note(c)}")
    if c.get("read_only"):
        typer.echo(f"  space {c['read_only']} was pulled and is read-only until raw results are ingested: left as it is")
    if c.get("calibration_refit"):  # why an upgraded home's first pass solved every model
        typer.echo(f"  {c['calibration_refit']}")
    times = "  ".join(f"{k} {v:.1f}s" for k, v in report.seconds.items())
    if times:
        typer.echo(f"  time: {times}")
    for err in report.errors[:20]:
        typer.echo(f"  {item_error_line(err)}", err=True)
    if len(report.errors) > 20:
        typer.echo(f"  ... and {counted(len(report.errors) - 20, 'more error')} (--json lists all)", err=True)


def worker(
    every: Optional[str] = typer.Option(None, "--every", callback=interval_option, help="Interval between passes, e.g. 6h, 30m, 1d."),
    cron: Optional[str] = typer.Option(None, "--cron", callback=cron_option("--every"), help='Cron expression, in UTC unless it starts with CRON_TZ=ZONE: 5 fields (e.g. "0 */6 * * *", "0 3 * * MON-FRI", "CRON_TZ=Europe/Berlin 0 3 * * *") or a nickname (@hourly, @daily, @weekly, @monthly, @yearly).'),
    no_wait: bool = typer.Option(False, "--no-wait", help="Exit (code 6) instead of waiting when another pass holds the lock."),
    max_passes: Optional[int] = typer.Option(None, "--max-passes", min=1, help="Stop after this many passes, 1 or more (default: run forever); then exit as `taskspace index` does for the last one (0 ok, 1 item errors)."),
) -> None:
    """Run indexing passes on a schedule until SIGTERM/SIGINT/SIGHUP (finishes the current item, then exits 0; a
    second signal exits at once (130)).

    Examples:

      taskspace worker --every 6h

      taskspace worker --cron "0 3 * * MON-FRI" --no-wait

      taskspace worker --every 1h --max-passes 1
    """
    from .errors import CLI, WORKER, ConfigError
    from .pipeline import Progress, run_index
    from .worker import Worker

    if bool(every) == bool(cron):
        raise ConfigError("give exactly one of --every INTERVAL or --cron EXPRESSION")
    from .config import get_settings
    from .store.sql_migrate import safe_url

    settings = get_settings()
    w = Worker(every or cron, lambda stop: run_index(progress=Progress(False), stop=stop),
               wait_for_lock=not no_wait, max_passes=max_passes,
               where=f"database {safe_url(settings.database_url)}, sources {settings.sources_file}")
    w.install_signal_handlers()
    token = CLI.set(WORKER)  # its passes' records and log are read by its operator, at a shell (errors.CLI)
    try:
        code = w.serve()
    finally:
        CLI.reset(token)  # (a command run in-process, by CliRunner: the caller's context as it was)
    raise typer.Exit(code)


#: the item errors ``taskspace runs`` prints under a run in its table (``--json`` lists them all)
RUN_ERRORS_SHOWN = 3


def runs(
    limit: int = typer.Option(20, "--limit", "-n", min=1, help="How many recent runs."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List recent indexing runs with their status and counts, and under each run its first errors (which file or
    source failed, and why; --json lists every one under "error_details").

    Examples:

      taskspace runs

      taskspace runs -n 5 --json
    """
    from dataclasses import replace

    from .query import open_existing_store
    from .sources.common import count_rejected
    from .store.sql_derived import killed_error

    store = open_existing_store()  # a home never indexed has no run: said so, and nothing is created
    try:
        recs = store.list_runs(limit=limit)
        # a run its process left "running" (kill -9, an OOM kill, a lost machine) stays so in the database until the
        # next pass of its kind marks it killed: hours with a worker's schedule, during which `runs` said "running"
        # for a process that was gone. It is shown as the next pass will record it
        recs = [replace(r, status="killed", errors=[*r.errors, killed_error()])
                if store.run_left_running(r) else r for r in recs]
    finally:
        store.close()
    if as_json:
        echo_json([{"id": r.id, "kind": r.kind, "status": r.status, "started_at": r.started_at,
                    "finished_at": r.finished_at, "pid": r.pid, "counts": r.counts, "errors": len(r.errors or []),
                    "error_details": list(r.errors or [])}
                   for r in recs])
        return
    if not recs:
        typer.echo("no runs yet (taskspace index starts one)")
        return
    typer.echo(f"{'id':>5}  {'kind':<8} {'status':<11} {'started (UTC)':<20} {'took':>8}  {'solved':>6} {'embedded':>8} "
               f"{'errors':>6}")
    for r in recs:  # the kind: a reindex (or a pull) solves and embeds nothing, and read as an index pass that had no work
        # a killed run's finish time is when the next pass marked it (days later, after a weekend): not how long it ran
        took = f"{(r.finished_at - r.started_at).total_seconds():.1f}s" if r.finished_at and r.status != "killed" else "-"
        c = r.counts or {}
        typer.echo(f"{r.id:>5}  {r.kind:<8} {r.status:<11} {r.started_at:%Y-%m-%d %H:%M:%S}  {took:>8}  "
                   f"{c.get('solved', 0):>6} {c.get('embedded', 0):>8} {count_rejected(r.errors or []):>6}")
        if c.get("calibration_refit"):  # why it solved every model (an upgraded home's first pass)
            typer.echo(f"       {c['calibration_refit']}")
        # which file or source failed was only in the run's record, which no command showed (the count above)
        errs = list(r.errors or [])
        for err in errs[:RUN_ERRORS_SHOWN]:
            typer.echo(f"       {item_error_line(err)}")
        if len(errs) > RUN_ERRORS_SHOWN:
            typer.echo(f"       ... and {len(errs) - RUN_ERRORS_SHOWN} more (taskspace runs --json lists them)")
