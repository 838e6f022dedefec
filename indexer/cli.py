"""The ``taskspace`` command line: a thin layer that parses, calls the library and formats.

Heavy modules (torch, sentence-transformers, SQLAlchemy, qdrant-client) are imported inside the
commands, so ``taskspace --help`` stays fast. Library errors (:class:`indexer.errors.IndexerError`)
become one line on stderr and the error's exit code; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import json
import logging
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from . import cli_find, cli_index, cli_publish, cli_sources, cli_spaces
from .errors import IndexerError, counted

app = typer.Typer(
    name="taskspace",
    help="Index Hugging Face Hub models in prompt semantic task space and find the model for a task.\n\n"
         "Examples:\n\n"
         "  taskspace index --source indexer/data/sample\n\n"
         "  taskspace search \"Compute the derivative of x^3 sin(x)\" -k 5\n\n"
         "  taskspace models --benchmark mmlu_pro/law\n\n"
         "Exit codes: 0 done; 1 input (a bad file or row, an unknown model or benchmark, a Hub repo that does not "
         "exist; some input rejected, the rest kept); 2 usage or configuration; 3 storage (database, index); 4 Hugging Face Hub; 5 encoder; 6 busy "
         "(another process holds the index); 130 interrupted, 141 output closed (its reader stopped: `| head`), "
         "143 terminated (SIGTERM), 129 hung up (SIGHUP: its terminal closed).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

_state = {"debug": False}


def _help_shows_what_an_option_takes() -> None:
    """typer 0.29's rich help writes a Python type after every option, flags included: "--open-only <bool>",
    "-v <int>", as if they took a value (`--open-only true` is then "unexpected extra argument"), and
    "--license <list[str]>" for a repeatable option, which takes one value each time; its plain help writes none for a
    flag. Here a flag or counter shows no type, and a repeatable option the type of its one value ("<str>")."""
    import re

    from typer.core import TyperArgument, TyperOption

    for cls in (TyperOption, TyperArgument):
        shown = cls.display_type_rich
        if getattr(shown, "_taskspace", False):
            continue

        def display_type_rich(self, ctx, shown=shown):
            if getattr(self, "is_flag", False) or getattr(self, "count", False):
                return None
            got = shown(self, ctx)
            several = getattr(self, "multiple", False) or self.nargs != 1  # DATA...: one value each, as --license
            if not (several and isinstance(got, str)):
                return got
            # a repeated Path shows as one Path does (typer writes "<path>"; "<list[Path]>" would be "<Path>"), a
            # number with a range as one does ("--limit <int range> [x>=1]", typer: "<list[int]> [x>=1]")
            info = getattr(getattr(self, "type_descriptor", None), "parameter_info", None)
            ranged = " range" if getattr(info, "min", None) is not None or getattr(info, "max", None) is not None else ""
            return re.sub(r"^<list\[(.+)\]>$", lambda m: "<path>" if m[1] == "Path" else f"<{m[1]}{ranged}>", got)

        display_type_rich._taskspace = True
        cls.display_type_rich = display_type_rich


_help_shows_what_an_option_takes()


def _options_take_one_value() -> None:
    """Every single-valued option of every command (and flag pair, ``--metadata/--no-metadata``) given twice with two
    different values is a usage error naming it and both (:func:`indexer.cli_index.one_value`: exit 2, before the
    command runs; the same value twice is one), where click kept the last of them without a word: `check --space a
    --space b` checked space b alone. Done once here, in the parser every command of this app makes, so each command
    has it and a new one too (``search``, ``models``, ``model``, ``index``, ``ingest`` and ``sources add`` read theirs
    as lists and refuse them themselves, with their own advice). The help is untouched."""
    from typer.core import TyperCommand, TyperGroup

    for cls in (TyperCommand, TyperGroup):
        made = cls.make_parser
        if getattr(made, "_taskspace", False):
            continue

        def make_parser(self, ctx, made=made):
            parser = made(self, ctx)
            for opt in {id(o): o for o in [*parser._long_opt.values(), *parser._short_opt.values()]}.values():
                if opt.action in ("store", "store_const") and not getattr(opt.obj, "multiple", False):
                    opt.process = _once(opt, opt.process, ctx)
            return parser

        make_parser._taskspace = True
        cls.make_parser = make_parser


def _once(opt, process, ctx):
    """The parser's ``process`` of one single-valued option (``opt``), refusing a second value other than its first."""
    def once(value, state):
        given = opt.const if opt.action == "store_const" else value
        if opt.dest in state.opts and not ctx.resilient_parsing:  # (only the command line sets it, while parsing)
            param = opt.obj
            if opt.action == "store_const":  # a flag pair: which of its spellings, not True and False
                names = {True: param.opts, False: param.secondary_opts}
                values = [max(names.get(v) or [str(v)], key=len) for v in (state.opts[opt.dest], given)]
                name = "/".join(max(n, key=len) for n in (param.opts, param.secondary_opts) if n)
                advice = f"give {' or '.join(name.split('/'))}, once"
            else:
                values, name = [_as_read(param, ctx, v) for v in (state.opts[opt.dest], given)], max(param.opts, key=len)
                advice = f"{name} takes one value; give it once"
            cli_index.one_value(name, values, advice)
        process(value, state)

    return once


def _as_read(param, ctx, value):
    """``value`` as the option reads it (`-k 03` is 3, as `-k 3`), or as given when it does not read (its own error
    comes once it is the only value)."""
    try:
        got = param.get_runtime_param().coerce(value, param=param, ctx=ctx)
    except Exception:
        return value
    return got.value if isinstance(got, Enum) else got


_options_take_one_value()


def _version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(f"taskspace {__version__}")
        raise typer.Exit()


#: commands that run as a service: their INFO log is their output (the worker's passes, its schedule; the server's
#: start and its in-process passes)
_SERVICES = {"worker", "serve"}


@app.callback()
def _main(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks instead of one-line errors."),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True,
                                help="Log at INFO (-v) or DEBUG (-vv); default WARNING, or TASKSPACE_LOG_LEVEL."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    import os

    _state["debug"] = debug
    if ctx.invoked_subcommand not in _SERVICES:  # a command's errors name its options (indexer.errors.arg)
        from .errors import CLI

        token = CLI.set(True)

        def _reset() -> None:
            try:
                CLI.reset(token)
            except ValueError:  # closed in another context: set back all the same
                CLI.set(False)

        ctx.call_on_close(_reset)
    if verbose:
        level = "INFO" if verbose == 1 else "DEBUG"
    elif os.environ.get("TASKSPACE_LOG_LEVEL") or ctx.invoked_subcommand in _SERVICES:
        from .config import get_settings

        level = get_settings().log_level
    else:  # a command's answer alone: nothing on stderr but warnings and errors unless asked
        level = "WARNING"
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)


echo_json = cli_index.echo_json


class Split(str, Enum):
    """``taskspace evaluate --split`` (:data:`indexer.evaluate.SPLIT_CHOICES`; a test checks they agree)."""

    in_sample = "in-sample"
    oos = "oos"
    coverage = "coverage"
    all = "all"
    both = "both"


#: the values of :class:`Split`, literal so that the CLI module does not import numpy
SPLIT_CHOICES = tuple(s.value for s in Split)


class Queries(str, Enum):
    full = "full"
    stem = "stem"


def _prompts_option(values: Optional[list[str]]) -> Optional[list[str]]:
    """``demo --prompt``: each a usable text (not blank), checked while the options are parsed (a usage error naming
    which, exit 2); before, the encoder's "prompt #1" (0-based) with exit 1, after the sample was read."""
    from .records import text_problem

    for i, value in enumerate(values or []):
        bad = text_problem(value)
        if bad:
            n = i + 1
            nth = f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
            raise typer.BadParameter(f"the {nth}: {bad}")
    return values


@app.command()
def demo(
    prompt: list[str] = typer.Option(
        None, "--prompt", "-p", callback=_prompts_option, help="A prompt to find models for (repeatable: one --prompt each). Default: a few sample questions."
    ),
    top: int = typer.Option(5, "--top", "-k", min=1, help="How many models to show (1 or more)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Index the bundled sample (real MMLU-Pro results) into a throwaway home and rank its models for sample prompts
    as `taskspace search` would: Hub ids, calibrated P(success), 90% intervals (nothing is kept; no network).

    Examples:

      taskspace demo

      taskspace demo -p "Prove that sqrt(2) is irrational" -k 5 --json
    """
    from .cli_find import _print_result
    from .cli_index import interrupt_on_sigterm
    from .demo import DEFAULT_PROMPTS, run_demo

    interrupt_on_sigterm()  # its throwaway home is removed on SIGTERM too (before, it stayed in the temp folder)
    result = run_demo(prompt or DEFAULT_PROMPTS, top=top)
    if as_json:
        echo_json(result.to_dict())
        return
    typer.echo(f"bundled sample: {counted(result.models, 'model')} x {counted(result.prompts, 'prompt')}, encoder {result.encoder}")
    for text, answer in result.queries:
        typer.echo(f"\nprompt: {text[:100]}")
        _print_result(answer)


@app.command()
def ingest(
    source: str = typer.Argument(..., metavar="SOURCE", callback=cli_index.spec_argument, help="A file or folder, hub:ORG/REPO or hub:ORG/REPO@REVISION (a Hub dataset), or hub-org:ORG (its datasets)."),
    # each a list, so that one given twice with two values is refused (cli_index.one_value), not the last read
    limit: Optional[list[int]] = typer.Option(None, "--limit", "-n", min=1, help="hub-org: ingest at most N datasets (1 or more)."),
    format: Optional[list[str]] = typer.Option(None, "--format", "-f", callback=cli_index.each(cli_index.format_option), help="table, lm_eval or lighteval (default: detected)."),
    prompts: Optional[list[Path]] = cli_index.PROMPTS_OPTION,
    model: Optional[list[str]] = cli_index.MODEL_OPTION,
    filter: Optional[list[str]] = cli_index.FILTER_OPTION,
    metric: Optional[list[str]] = cli_index.METRIC_OPTION,
    metadata: bool = typer.Option(True, "--metadata/--no-metadata", help="Fetch Hub metadata for ingested models that are Hub repo ids."),
    accept_partial: bool = typer.Option(False, "--accept-partial", help="Store a new revision that reads much worse than the stored one (errors and over 10% of its outcome cells lost) instead of quarantining it."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Read per-sample results (plain tables, lm-eval samples, leaderboard details) into the SQL store.

    Exit code 0 when no input was rejected, 1 when some was, a Hub repo does not exist or a source was quarantined
    (its stored revision keeps serving; --accept-partial stores the new one), 4 when a Hub request failed (the rest
    is still ingested).

    Examples:

      taskspace ingest indexer/data/sample

      taskspace ingest hub:open-llm-leaderboard/meta-llama__Meta-Llama-3-8B-Instruct-details

      taskspace ingest hub-org:open-llm-leaderboard --limit 10 --json

      taskspace ingest out/ --metric comet_score --metric 'gfg_*=bert_f1'
    """
    from .ingest import ingest as run_ingest

    limit, format, prompts, model, filter = (
        cli_index.one_value(o, v, f"{o} takes one value; give it once (nothing was ingested)")
        for o, v in (("--limit", limit), ("--format", format), ("--prompts", prompts), ("--model", model),
                     ("--filter", filter)))
    metric = cli_index.metric_values(metric, "nothing was ingested")
    options = cli_index.reading_options(prompts, model, filter, metric)
    summary = run_ingest(source, format=format, limit=limit, fetch_metadata=metadata, accept_partial=accept_partial, **options)
    if as_json:
        echo_json(summary.as_dict())
    else:
        s = summary
        # a source is stored again whole: its outcome cells are stored, not added (as `taskspace index` and the worker say)
        typer.echo(f"added {counted(s.models, 'model')}, {counted(s.prompts, 'prompt')}; "
                   f"{counted(s.outcomes, 'outcome')} stored from {counted(s.sources, 'source')}; "
                   f"{counted(s.skipped, 'unchanged source')} skipped; {counted(s.duplicates, 'repeated row')} dropped; "
                   f"Hub metadata for {counted(s.metadata, 'model')}")
        for w in s.warnings:
            typer.echo(f"warning: {w}", err=True)
        for q in s.quarantined:
            typer.echo(f"quarantined: {q} (the stored revision keeps serving; --accept-partial stores the new one)", err=True)
        if s.errors:
            rest = "the rest was ingested" if s.sources else "nothing was ingested"
            from .sources.common import count_rejected

            # what the lines stand for: each one error, a "N more rows rejected" line N (before, 300 bad rows were
            # "21 error(s)": 20 shown and the line counting the other 280)
            total = count_rejected(s.errors)
            # a Hub failure rejected nothing: the input could not be fetched; nor did a repo the Hub does not have.
            # Each kind its own clause and count (before, joined with "or", the first without its count: "this input
            # was rejected or (2) could not be fetched from the Hub or (1) not found on the Hub")
            kinds = [(total - s.hub_failures - s.hub_missing, "rejected", "was rejected"),
                     (s.hub_failures, "could not be fetched from the Hub", "could not be fetched from the Hub"),
                     (s.hub_missing, "not found on the Hub", "was not found on the Hub")]
            kinds = [k for k in kinds if k[0] > 0]
            if len(kinds) == 1:
                typer.echo(f"{counted(total, 'error')}: this input {kinds[0][2]}, {rest}", err=True)
            else:
                typer.echo(f"{counted(total, 'error')}: " + "; ".join(f"{n} {said}" for n, said, _ in kinds) + f"; {rest}",
                           err=True)
            for e in s.errors[:50]:
                typer.echo(f"  {e}", err=True)
            if len(s.errors) > 50:
                typer.echo(f"  ... {len(s.errors) - 50} more (use --json for all)", err=True)
    if summary.exit_code:
        raise typer.Exit(summary.exit_code)


db_app = typer.Typer(
    help="Schema migrations (Alembic) of the SQL store at TASKSPACE_DATABASE_URL (default: the SQLite file).\n\n"
         "Examples:\n\n"
         "  taskspace db upgrade\n\n"
         "  taskspace db current --check || taskspace db upgrade   (--check: exit 0 at the newest schema, 1 behind "
         "or empty, 3 newer than this taskspace)\n\n"
         "  taskspace db current --url postgresql+psycopg://user@host:5432/db",
    no_args_is_help=True,
)
app.add_typer(db_app, name="db")
_DB_URL = typer.Option(None, "--url", help="SQLAlchemy URL; default: TASKSPACE_DATABASE_URL or the SQLite file in TASKSPACE_HOME.")


@db_app.command("upgrade")
def db_upgrade(
    revision: str = typer.Argument("head", metavar="REVISION", help="Target revision (default: the newest)."),
    url: Optional[str] = _DB_URL,
) -> None:
    """Create or migrate every table up to REVISION (safe to repeat).

    Examples:

      taskspace db upgrade

      taskspace db upgrade --url postgresql+psycopg://user@host:5432/db
    """
    from .store.sql_migrate import upgrade_url

    r = upgrade_url(url, revision)
    typer.echo(f"{r['url']}: {r['from'] or '(empty)'} -> {r['to']}")


@db_app.command("current")
def db_current(
    url: Optional[str] = _DB_URL,
    check: bool = typer.Option(False, "--check", help="Exit 0 only when the schema is at the newest revision: 1 when "
                               "the database is behind it or empty (`taskspace db upgrade` brings it there), 3 when a "
                               "newer taskspace migrated it; for scripts. Without it: exit 0 whatever the state."),
) -> None:
    """Show the database's schema revision and the newest one this taskspace knows.

    With --check the exit code says it: 0 up to date, 1 behind or empty (run `taskspace db upgrade`), 3 newer than
    this taskspace (upgrade taskspace) or the database cannot be read.

    Examples:

      taskspace db current

      taskspace db current --check || taskspace db upgrade

      taskspace db current --url postgresql+psycopg://user@host:5432/db
    """
    from .store.sql_migrate import status

    r = status(url)
    state = ("up to date" if r["current"] == r["head"] else
             "newer than this taskspace: upgrade taskspace" if r["newer"] else "run `taskspace db upgrade`")
    typer.echo(f"{r['url']}: current {r['current'] or '(empty)'}, head {r['head']} ({state})")
    if check and r["current"] != r["head"]:
        raise typer.Exit(3 if r["newer"] else 1)


@db_app.command("history")
def db_history(url: Optional[str] = _DB_URL) -> None:
    """List the schema revisions, oldest first, marking the database's and the newest (a REVISION for `db downgrade`).

    Examples:

      taskspace db history

      taskspace db history --url postgresql+psycopg://user@host:5432/db
    """
    from .store.sql_migrate import history

    r = history(url)
    typer.echo(f"{r['url']}: current {r['current'] or '(empty)'}, head {r['head']}")
    for rev, doc in r["revisions"]:
        marks = " ".join(m for m, on in (("(current)", rev == r["current"]), ("(head)", rev == r["head"])) if on)
        typer.echo(f"{rev}  {doc}{'  ' + marks if marks else ''}")


@db_app.command("downgrade")
def db_downgrade(
    revision: str = typer.Argument(..., metavar="REVISION", help="Target revision; 'base' drops every taskspace table."),
    url: Optional[str] = _DB_URL,
    yes: bool = typer.Option(False, "--yes", help="Confirm: a downgrade deletes the data of the dropped tables."),
) -> None:
    """Migrate the schema down to REVISION (destroys data in dropped tables; needs --yes).

    Examples:

      taskspace db downgrade 0009 --yes

      taskspace db downgrade base --yes     # drops every table and its data
    """
    from .errors import ConfigError
    from .store.sql_migrate import downgrade_url

    if not yes:
        raise ConfigError(f"`taskspace db downgrade {revision}` deletes stored data; repeat with --yes to confirm")
    r = downgrade_url(url, revision)
    typer.echo(f"{r['url']}: {r['from'] or '(empty)'} -> {r['to'] or '(empty)'}")


class Peers(str, Enum):
    """``taskspace evaluate --peers`` (:data:`indexer.evaluation.peers.PEER_SETS`; a test checks they agree)."""

    none = "none"
    fast = "fast"
    all = "all"


def _method(value: str) -> None:
    from .space import get_method

    get_method(value)


def _plots(value: str) -> None:
    from .evaluation.plots import check_plots_dir

    check_plots_dir(value)


def _seeds_option(value: Optional[int]) -> Optional[int]:
    """``evaluate --seeds``: at most ``MAX_SEEDS``, checked while the options are parsed (a usage error naming it);
    before, no bound, and ``--seeds 99999999999`` ran until killed."""
    from .evaluate import MAX_SEEDS

    if value is not None and value > MAX_SEEDS:
        raise typer.BadParameter(f"{value} is more than the {MAX_SEEDS} seeds evaluate takes")
    return value


#: ``evaluate --method``: checked while the options are parsed (a usage error naming it, exit 2), not after
_method_option = cli_index.checked_option(_method)
#: ``evaluate --plots``: a file there, or a folder that cannot be created or written, is a usage error while the
#: options are parsed; before, the evaluation ran for minutes, then failed with a FileExistsError traceback
_plots_option = cli_index.checked_option(_plots, lambda exc: str(exc).removeprefix("--plots ").removeprefix(": "))


@app.command()
def evaluate(
    data: list[str] = typer.Argument(..., metavar="DATA", help="A folder in ../shared/data format (outcomes + prompts) or any table the ingest layer reads; several are pooled into one index (models merged as the index merges them: by Hub repo id when known) with every metric also per data set."),
    format: Optional[str] = typer.Option(None, "--format", callback=cli_index.format_option, help="Reader of every DATA: table, lm_eval or lighteval (default: detected, as for ingest)."),
    split: Split = typer.Option(Split.oos, "--split", help="in-sample (random 20% of prompts held out per seed), oos (leave one group out), coverage (per group: its outcomes hidden from a random half of the models, a random half of its prompts the targets, every model scored; covered/uncovered apart), all (the three), or both (in-sample and oos); of all or both, a split the data cannot take (oos of one benchmark) is named in one line and the others run."),
    seeds: Optional[int] = typer.Option(None, "--seeds", min=1, callback=_seeds_option, help="Seeds of the in-sample and coverage splits (1 to 1000; default 5); --split oos has one fold per group and takes none."),
    encoder: Optional[str] = typer.Option(None, "--encoder", help="Encoder name or folder (default TASKSPACE_ENCODER)."),
    group_by: Optional[str] = typer.Option(None, "--group-by", help="Prompt field that defines the out-of-sample groups (default: benchmark; e.g. src)."),
    eps: Optional[float] = typer.Option(None, "--eps", help="eps of the `paper` method (default 0)."),
    lam: Optional[float] = typer.Option(None, "--lambda", help="lambda of the `paper` method (default 1)."),
    method: Optional[str] = typer.Option(None, "--method", callback=_method_option, help="The `default` method's name (default TASKSPACE_METHOD)."),
    sweep: bool = typer.Option(True, "--sweep/--no-sweep", help="Run the paper's eps/lambda ablation (on the in-sample and oos splits; the coverage split has none)."),
    queries: Queries = typer.Option(Queries.full, "--queries", help="Query each held-out prompt with its full text, or with its question alone (stem: the text before its answer options)."),
    peers: Peers = typer.Option(Peers.none, "--peers", help="Published peers compared too: none, fast (cluster profiles, per-benchmark best; training-free) or all (adds EmbedLLM and IRT routing, trained on CPU)."),
    as_json: bool = typer.Option(False, "--json", help="Print every number as JSON."),
    # a string, not a Path: the path type read `--plots ""` as the current folder, and the PNGs were written there
    plots: Optional[str] = typer.Option(None, "--plots", metavar="DIR", callback=_plots_option, help="Write PNGs (ROC curves, reliability, eps/lambda sweep, per-benchmark bars) into this folder."),
) -> None:
    """Measure success prediction, calibration (ECE, Brier) and model selection on real outcomes (the paper's
    protocol and the coverage split: docs/RESULTS.md).

    Exit code 0 when no input was rejected, 1 when some was (as for ingest; the rest is still evaluated and shown,
    unless more was rejected than read: then an error naming a rejected row, and no metrics).

    Examples:

      taskspace evaluate ../shared/data/mmlu_pro --split in-sample --seeds 3

      taskspace evaluate DATA --split both --json

      taskspace evaluate ../shared/data/mmlu_pro ../shared/data/evalarena_code --split all --no-sweep
    """
    from .evaluate import SPLITS
    from .evaluate import evaluate as run_evaluate
    from .evaluation.report import format_result, rejected_summary

    from .cli_index import interrupt_on_sigterm

    # SIGTERM (a job scheduler's time limit, `timeout`, `kill`) and SIGHUP stop it as Ctrl-C does: a plot being written
    # is removed, the command says what it kept and exits 143 (129); before, it ended at once, exit -15 without a word
    interrupt_on_sigterm()
    if seeds is not None and split == Split.oos:  # it was ignored without a word: the leave-one-group-out folds are fixed
        raise typer.BadParameter("applies to the in-sample and coverage splits; --split oos has one fold per group "
                                 "(give --split all to run every split)", param_hint="'--seeds'")
    result = run_evaluate(
        data, split=split.value, seeds=5 if seeds is None else seeds, encoder=encoder, group_by=group_by, lam=lam, eps=eps, method=method,
        sweep=sweep, plots_dir=None if plots is None else Path(plots), queries=queries.value, peers=Peers(peers).value, format=format,
    )
    skipped = [f"split {sp} not run: {why}" for sp, why in result.get("skipped", {}).items()]
    if as_json:
        echo_json(result)
        for line in skipped:  # beside the JSON's "skipped", where a reader of the terminal sees it
            typer.echo(line, err=True)
    else:
        several = len(SPLITS[result["split"]]) > 1
        parts = [result[k] for k in SPLITS[result["split"]] if k in result] if several else [result]
        typer.echo("\n".join(skipped + ([""] if skipped else [])) + "\n\n".join(format_result(r) for r in parts))
        for r in parts:
            for p in r.get("plots", []):
                typer.echo(f"wrote {p}")
    rejected = rejected_summary(result)
    if rejected:  # exit 1 when some input was rejected, as `taskspace ingest` (README, exit codes)
        typer.echo(rejected, err=True)
        raise typer.Exit(1)


def _kinds_option(value: Optional[list[str]]) -> Optional[list[str]]:
    """``reindex --kind``: checked while the options are parsed (a usage error naming it, exit 2); before, an unknown
    kind was an input error (exit 1) after the stores were opened, and left a `failed` reindex run."""
    from .store.vectors import KINDS

    for k in value or []:
        if k not in KINDS:
            raise typer.BadParameter(f"unknown collection kind {k!r}; use one of {', '.join(KINDS)}")
    return value


@app.command()
def reindex(
    space: Optional[str] = typer.Option(None, "--space", callback=cli_find._name_option, help="Only this space: its index name, SQL id or encoder name (default: every space)."),
    kind: list[str] = typer.Option(None, "--kind", callback=_kinds_option,
                                   help="Only these collections (repeatable): models, benchmarks, prompts."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
) -> None:
    """Rebuild the Qdrant index from SQL (fresh collections, then an atomic alias switch).

    Examples:

      taskspace reindex

      taskspace reindex --kind prompts --json
    """
    from .store.vectors import KINDS, VectorStore
    from .sync import open_sql_of_index, resolve_spaces
    from .sync import reindex as run_reindex

    from .cli_index import interrupt_on_sigterm
    from .errors import abort_reason

    interrupt_on_sigterm()
    # the indexing passes' lock, taken before the index is opened: a pass running now writes the index itself, and a
    # rebuild beside it would hold the embedded index the pass needs at its index stage and make the pass fail; an
    # indexing pass started meanwhile waits (worker) or is told who holds it. read_only: a home never indexed has
    # nothing to rebuild from, which is said, and nothing is created
    with open_sql_of_index(read_only=True) as sql, sql.lock("index") as held, VectorStore.from_settings() as vectors:
        if space is not None:  # a --space naming no space is a usage error, not a failed reindex run
            resolve_spaces(sql, space)
        # recorded as a run: a killed reindex shows in `taskspace runs`, and the next index pass verifies the index
        run_id = sql.start_run("reindex")
        try:
            results = run_reindex(sql, vectors, space, kinds=kind or KINDS, ensure=held.ensure)
        except BaseException as exc:
            sql.finish_run(run_id, "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed",
                           errors=[{"file": None, "line": None, "message": f"reindex aborted: {abort_reason(exc)}"}])
            raise
        sql.finish_run(run_id, "ok", {"spaces": [r.as_dict() for r in results]})
    if as_json:
        echo_json([r.as_dict() for r in results])
        return
    if not results:
        typer.echo("no embedding spaces in SQL yet: index some results first")
    for r in results:
        counts = ", ".join(f"{n} {k}" for k, n in r.counts.items())
        typer.echo(f"space {r.space} (id {r.space_id}): {counts} in {r.seconds:.1f}s")


@app.command()
def check(
    space: Optional[str] = typer.Option(None, "--space", callback=cli_find._name_option, help="Only this space: its index name, SQL id or encoder name (default: every space)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
) -> None:
    """Compare the Qdrant index with SQL; exit 1 when points are missing, stale or extra, when models of the configured space wait for `taskspace index` (results ingested since their vector was solved, or left without results), when the configured space (TASKSPACE_ENCODER, TASKSPACE_METHOD, TASKSPACE_LAMBDA, TASKSPACE_EPS) is not built while SQL holds results (`taskspace index` builds it), or when a space's vectors are not as wide as its encoder's own make (built from another encoder's embedding cache: `taskspace index`, then `taskspace spaces drop NAME`).

    Examples:

      taskspace check

      taskspace check --json
    """
    from .store.vectors import VectorStore
    from .sync import beyond_a_pass, check_report, open_sql_of_index

    # create=False: a read-only command; a home whose index folder was removed gets it reported, not made empty
    with open_sql_of_index(read_only=True) as sql, VectorStore.from_settings(create=False) as vectors:
        # the configured space (the one a pass solves): its models a pass would solve are drift (Drift.unsolved)
        report = check_report(sql, vectors, space)
    drifts, unbuilt, running = report.drifts, report.configured_unbuilt, report.running
    if as_json:
        echo_json(report.as_dict())
    else:
        if not drifts:
            typer.echo("no embedding spaces in SQL and none in the index")
        for d in drifts:
            if d.orphans:
                typer.echo(f"space {d.space}: note: {counted(len(d.orphans), 'collection')} left by an interrupted rebuild "
                           "(the next `taskspace reindex` drops them)")
            if d.clean:
                typer.echo(f"space {d.space}: clean")
                continue
            typer.echo(f"space {d.space}: drift")
            for problem in d.problems:
                typer.echo(f"  {problem}")
            for what in ("missing", "stale", "extra"):
                for k, keys in getattr(d, what).items():
                    if keys:
                        typer.echo(f"  {what} {k}: {len(keys)}: {_named(keys)}")
            if d.unsolved:  # results ingested since the last pass: these models are in no search until it solves them
                typer.echo(f"  unsolved models: {len(d.unsolved)}: {_named(d.unsolved)}")
            if d.resultless:  # results dropped: these models are in every search until a pass removes them
                typer.echo(f"  models without results: {len(d.resultless)}: {_named(d.resultless)}")
            if d.foreign_dim is not None:  # before: clean, while every search of a new prompt failed on it
                typer.echo(f"  vectors: {_foreign_said(d)}")
            if d.refit:  # before: clean, though the next pass refits the map (and says so)
                typer.echo(f"  calibration map: fitted by an older taskspace ({d.refit}); the next `{d.indexed_by}` "
                           "fits it again, every model solved once")
        _echo_unsolvable(drifts)
        if running is not None:  # the drift is the pass's work in progress: `reindex` now would make that pass fail
            typer.echo(f"note: an indexing pass is running (run {running.id}, pid {running.pid}, started "
                       f"{running.started_at:%Y-%m-%d %H:%M:%S} UTC) and writes the index; check again when it "
                       "finishes (`taskspace runs`)", err=True)
        advice = _passes_advised(drifts)
        if running is None:
            for line in advice.values():
                typer.echo(line, err=True)
        if running is None and any(beyond_a_pass(d, advice) for d in drifts if d.in_sql and d.pull_again is None):
            then = "then " if advice else ""
            typer.echo(f"{then}run `taskspace reindex` to rebuild the index from SQL", err=True)
        if any(d.unsolvable for d in drifts):  # not drift (exit 0 on its own): no pass or rebuild repairs it
            typer.echo("fix the values of the models not solvable in the source that holds them (outcomes are 0 or 1, "
                       "or a graded score in [0, 1], and a model needs one at least) and ingest it again "
                       "(`taskspace ingest PATH`, or the next `taskspace index` of a configured source): until then "
                       "no pass solves them and they are in no search", err=True)
        for d in drifts:
            if running is None and d.pull_again is not None:  # reindex keeps a read-only space's prompts collection
                typer.echo(f"run `taskspace pull {d.pull_again}` again to finish writing the index of space {d.space}",
                           err=True)
        for d in drifts:
            if not d.in_sql:  # a rebuild from SQL does not touch it (before: "run `taskspace reindex`", which left it)
                typer.echo(f"run `taskspace spaces drop {d.space}` to remove index space {d.space}, which SQL does not "
                           "hold", err=True)
        for d in drifts:
            if d.foreign_dim is not None and running is None:
                build = (f"run `{d.rebuild}` to build the space again with the encoder's own vectors, then "
                         if d.rebuild else "")
                typer.echo(f"{build}run `taskspace spaces drop {d.space}` to remove space {d.space}, whose vectors "
                           "came from another encoder's embedding cache", err=True)
        if unbuilt is not None:  # before: "clean", exit 0, while every search warned of it (or failed)
            if unbuilt["searched"] is None:
                meanwhile = "SQL holds results but no embedding space, so every search fails meanwhile"
            else:
                older = (f" (method {unbuilt['older_method']}, which no setting of this taskspace builds any more)"
                         if unbuilt["older_method"] else "")
                meanwhile = f"searches without --space take {unbuilt['searched']}{older} meanwhile"
            typer.echo(f"configured space ({unbuilt['settings']}): not built; {meanwhile}")
            if running is None:
                typer.echo(f"run `{unbuilt['command']}` to build it from the stored results", err=True)
    if not report.clean:
        raise typer.Exit(1)


def _foreign_said(d) -> str:
    """check's line on a space built from another encoder's vectors (:attr:`~indexer.sync.Drift.foreign_dim`)."""
    return (f"{d.dim} wide, where its encoder's own embeddings under its method make {d.foreign_dim}: built from "
            "another encoder's vectors in this encoder's embedding cache (a file copied or renamed), so every search "
            "of a new prompt fails on it")


def _while_a_pass_runs(exc) -> str:
    """An error's message; for an index that is missing while an indexing pass runs (a worker's first pass: SQL
    written, the index not yet built), the pass that builds it instead of advising `taskspace reindex`, which run then
    held the embedded index the pass needed and made it fail."""
    from .errors import IndexMissingError

    text = str(exc).strip()
    if not isinstance(exc, IndexMissingError) or " is missing from " not in text:  # (not the other engine's index)
        return text
    try:
        from .store.sql import open_store
        from .sync import running_pass

        with open_store() as sql:
            running = running_pass(sql)
    except Exception:  # noqa: BLE001 - the error as it is when the runs cannot be read
        return text
    if running is None:
        return text
    return (f"{text.split(';')[0]}: an indexing pass is running (run {running.id}, pid {running.pid}, started "
            f"{running.started_at:%Y-%m-%d %H:%M:%S} UTC) and builds it; run the command again when it finishes "
            "(`taskspace runs`)")


def _echo_unsolvable(drifts) -> None:
    """check's lines of the models the solver refuses (``Drift.unsolvable`` of each space), each model once with why
    and the spaces it is refused in: a line per set of spaces, ``not solvable in space A: 2: org/b (why), org/c
    (why)`` (a model refused with another why in each space: ``org/b (A: why; B: why)``). Before, a model was listed
    under each space, once per space (a home of two spaces listed each twice), and before that not at all (every
    pass's item errors did)."""
    spaces_of: dict[str, dict[str, str]] = {}
    for d in drifts:
        for m, why in d.unsolvable.items():
            spaces_of.setdefault(m, {})[d.space] = why
    by_spaces: dict[tuple, list[str]] = {}
    for m, whys in spaces_of.items():
        said = (next(iter(whys.values())) if len(set(whys.values())) == 1 else
                "; ".join(f"{sp}: {why}" for sp, why in whys.items()))
        by_spaces.setdefault(tuple(whys), []).append(f"{m} ({said})")
    for spaces, named in by_spaces.items():
        where = f"space {spaces[0]}" if len(spaces) == 1 else f"spaces {', '.join(spaces[:-1])} and {spaces[-1]}"
        typer.echo(f"not solvable in {where}: {len(named)}: {_named(named)}")


def _named(keys: list[str], most: int = 5) -> str:
    """Up to ``most`` of ``keys``, and how many more."""
    return ", ".join(keys[:most]) + (f" (+{len(keys) - most} more)" if len(keys) > most else "")


def _passes_advised(drifts) -> dict[str, str]:
    """check's "run `taskspace index`" lines: the command of each pass that repairs some drift -> its line
    (:func:`_index_advice`). The benchmark vectors of a space are computed, and its benchmarks and prompts collections
    rebuilt, by the pass that solves it (:attr:`~indexer.sync.Drift.indexed_by`: `taskspace index` for the configured
    space, with `TASKSPACE_METHOD=...` before it for another; a space no pass solves gets no line); the unsolved
    models are the configured space's. Before, one "run `taskspace index`" line took every space's benchmarks, though
    its pass repairs the configured space's alone: another space's came back after every pass."""
    by: dict[str, list] = {}
    for d in drifts:
        if d.in_sql and d.indexed_by is not None:
            by.setdefault(d.indexed_by, []).append(d)
    out = {}

    def unsolved_by(command):  # the models its pass solves (each space's pass its own; the configured: taskspace index)
        return sorted({m for d in drifts if d.in_sql and (d.indexed_by or "taskspace index") == command
                       for m in d.unsolved})

    def resultless_by(command):  # the models without results whose vectors its pass removes
        return sorted({m for d in drifts if d.in_sql and (d.indexed_by or "taskspace index") == command
                       for m in d.resultless})

    unsolved = unsolved_by("taskspace index") + resultless_by("taskspace index")
    unpushed = sorted({m for d in drifts if d.in_sql for m in d.unpushed})  # (any pass pushes them, in every space)
    for command in sorted(set(by) | ({"taskspace index"} if unsolved or unpushed else set()),
                          key=lambda c: (c != "taskspace index", c)):  # the configured space's first
        ds = by.get(command, [])
        uncomputed = {b for d in ds for b in d.uncomputed}
        # results ingested since the last pass (`taskspace ingest` alone): before, "run `taskspace reindex`", which
        # rebuilt the prompts from SQL and left these results unsolved, unindexed
        pending = sorted({b for d in ds if not d.clean for b in d.unindexed} - uncomputed)
        spaces = None if command == "taskspace index" else [d.space for d in ds]
        mine = command == "taskspace index"
        line = _index_advice(sum(len(d.uncomputed) for d in ds), pending, unsolved_by(command), command, spaces,
                             unpushed=unpushed if mine else [], refit=[d.space for d in ds if d.refit],
                             resultless=resultless_by(command))
        if line is not None:
            out[command] = line
    return out


def _index_advice(uncomputed: int, pending: list[str], unsolved: list[str], command: str = "taskspace index",
                  spaces: list[str] | None = None, *, unpushed: list[str] = (), refit: list[str] = (),
                  resultless: list[str] = ()) -> str | None:
    """check's one "run `COMMAND`" line (None: no drift its pass repairs): what its pass does about each drift
    it repairs, the benchmark vectors SQL lacks (``uncomputed``: how many), the benchmarks of results ingested since
    the last pass (``pending``), the models to solve (``unsolved``) and those whose point waits for a push
    (``unpushed``), the spaces whose calibration map it fits again (``refit``). ``spaces``: the spaces it repairs when they
    are not the configured one (its pass solves them, `taskspace index` does not). Before, each said "run
    `taskspace index`" on a line of its own."""
    parts = []
    if uncomputed:  # `reindex` would drop their points; a pass computes the vectors and rebuilds the collection
        parts.append(f"compute the {counted(uncomputed, 'benchmark vector')} SQL lacks (extra benchmarks above; "
                     "`taskspace reindex` alone would drop them)")
    if pending:
        parts.append(f"index the results ingested since the last indexing pass ({'benchmark' if len(pending) == 1 else 'benchmarks'} {_named(pending)}): it "
                     "solves their models, computes the benchmark vectors and rebuilds the prompts and benchmarks above "
                     "(`taskspace reindex` would rebuild the prompts alone)")
    if unsolved:  # before: check said clean, these models in no search until a pass
        parts.append(f"solve the {counted(len(unsolved), 'model')} whose results were ingested since their vector was solved, "
                     f"or that have none ({_named(unsolved)}): they are in no search until it does")
    if resultless:  # before: check said nothing of them (clean after the `taskspace reindex` it advised)
        parts.append(f"remove the {counted(len(resultless), 'model')} whose results are no longer stored ({_named(resultless)}): "
                     "their vectors and points stay in every search until it does")
    if refit:  # a map an older taskspace fitted (Drift.refit): before, check said clean; a rebuild leaves the map
        parts.append(f"fit the calibration map of space {', '.join(refit)} again (fitted by an older taskspace, above): "
                     "every model is solved once, so intervals are computed as a fresh index computes them")
    if unpushed:  # before: "run `taskspace reindex`", a rebuild of every model's point for these
        parts.append(f"push the points of the {counted(len(unpushed), 'model')} whose metadata, name or aliases were written "
                     f"since their last push ({_named(unpushed)}): every pass pushes them, in every space")
    if not parts:
        return None
    if len(parts) > 1:
        parts[-1] = "and to " + parts[-1]
    where = (f" (its pass solves space {', '.join(spaces)}; `taskspace index` solves the configured space alone)"
             if spaces else "")
    return f"run `{command}`{where} to " + "; ".join(parts)


app.add_typer(cli_sources.app, name="sources")
app.add_typer(cli_spaces.app, name="spaces")

from .cli_serve import serve as _serve  # noqa: E402  (serve lives in cli_serve.py)

app.command(name="serve")(_serve)

# index, worker and runs live in cli_index.py, search, models, benchmarks and model in cli_find.py (registered
# here, so `python -m indexer.cli` sees them too)
for _command in (cli_index.index, cli_index.worker, cli_index.runs, cli_find.search, cli_find.models,
                 cli_find.benchmarks, cli_find.model):
    app.command()(_command)
for _command in (cli_publish.publish, cli_publish.pull):
    app.command()(_command)


def _summaries_in_one_paragraph(typer_app: typer.Typer) -> None:
    """Give each command of ``typer_app`` and its groups, as its ``short_help``, the first paragraph of its help with
    the docstring's line breaks made spaces: typer's command list (in its rich markup mode) keeps those breaks, where
    the command's own ``-h`` joins them, so `taskspace -h` broke `demo`'s summary after "for sample prompts" and
    `evaluate`'s after "(the paper's", short lines amid the panel; the summary is then wrapped at the width alone."""
    import inspect

    for info in typer_app.registered_commands:
        text = info.help or inspect.getdoc(info.callback) or ""
        if info.short_help is None and text:
            info.short_help = " ".join(text.split("\n\n")[0].split())
    for group in typer_app.registered_groups:
        _summaries_in_one_paragraph(group.typer_instance)


def _paragraphs_unbroken(typer_app: typer.Typer) -> None:
    """Give each command of ``typer_app`` and its groups, as its ``help``, its docstring with the line breaks inside
    each paragraph made spaces: typer's rich help keeps them after the first paragraph, so `taskspace evaluate --help`
    broke its exit-code paragraph after "evaluated and shown," (and every command's longer paragraphs at the source's
    line ends); the paragraphs are then wrapped at the terminal's width alone. A paragraph whose later lines are a list
    or indented (``-``, ``*``, a space, ``\b``) keeps its breaks.

    The paragraphs after the first start with a blank line: typer dedents them as one docstring (``inspect.cleandoc``,
    which measures the indentation from their second line on), so where each line after "Examples:" was an indented
    command, it took that indentation away and `taskspace sources add -h` showed its examples flush with the prose; the
    blank line (dropped there) makes "Examples:" count, and the examples keep their indentation as written."""
    import inspect

    def unbroken(paragraph: str) -> str:
        lines = paragraph.split("\n")
        if lines[0].startswith("\b") or any(ln[:1] in ("-", "*", " ", "\b") for ln in lines[1:]):
            return paragraph
        return " ".join([lines[0].rstrip(), *(ln.strip() for ln in lines[1:])])

    def whole(text: str) -> str:
        first, *rest = (unbroken(p) for p in inspect.cleandoc(text).split("\n\n"))
        return "\n\n\n".join([first, "\n\n".join(rest)]) if rest else first

    for info in typer_app.registered_commands:
        text = info.help or inspect.getdoc(info.callback) or ""
        if text:
            info.help = whole(text)
    for group in typer_app.registered_groups:
        info = group.typer_instance.info
        if isinstance(info.help, str) and info.help:  # a group's own text (`taskspace sources -h`)
            info.help = whole(info.help)
        _paragraphs_unbroken(group.typer_instance)


_summaries_in_one_paragraph(app)
_paragraphs_unbroken(app)


def _command_path(argv: list[str]) -> str:
    """``taskspace`` and the (sub)command names ``argv`` gives, for a usage error that comes without its context (the
    parser's, e.g. an option at the end without its value)."""
    import typer.main

    path, cmd = ["taskspace"], typer.main.get_command(app)
    for arg in argv:
        sub = getattr(cmd, "commands", {}).get(arg)
        if sub is None:
            if not arg.startswith("-"):
                break
            continue
        path.append(arg)
        cmd = sub
    return " ".join(path)


#: the options of ``taskspace`` itself (the callback's), which a command does not take after its name
_GLOBAL_OPTIONS = ("--debug", "--verbose", "-v", "--version")

#: how many models a listing shows is `-n/--limit` for `taskspace models` and `-k/--top` for the ranking commands: the
#: other command's spelling, by command, and this one's (`taskspace search QUERY -n 5` right after `models -n 5`)
_COUNT_OPTIONS = {"taskspace models": ("-k", "--top", "-n/--limit N"),
                  **{c: ("-n", "--limit", "-k/--top N") for c in ("taskspace search", "taskspace demo")}}


def _asks_json(argv: list[str]) -> bool:
    """Whether the command line asks for ``--json`` (before a ``--``, after which every word is an argument)."""
    for word in argv:
        if word == "--":
            return False
        if word == "--json":
            return True
    return False


def _say_error(text: str, code: int) -> None:
    """An error on stderr, one line: ``error: TEXT``, or under ``--json`` the JSON object ``{"error": TEXT, "exit":
    CODE}``, which a program reading a command's ``--json`` output can parse (logs, on stderr too, come before it).
    Before, a ``--json`` command's errors were the plain line, which it could not."""
    if _asks_json(sys.argv[1:]):
        typer.echo(json.dumps({"error": text, "exit": code}, ensure_ascii=False), err=True)
    else:
        typer.echo(f"error: {text}", err=True)


def _say_stopped(text: str, code: int) -> None:
    """The line of a command stopped before its end (``interrupted: ...``, ``terminated: ...``, ``aborted``) on
    stderr as it is, or under ``--json`` as the JSON object of :func:`_say_error`; before, plain text there too, which
    a program reading the command's ``--json`` output could not parse."""
    if _asks_json(sys.argv[1:]):
        _say_error(text, code)
    else:
        typer.echo(text, err=True)


def _usage_error(exc) -> int:
    """One line on stderr for a usage error (bad option value, missing argument, unknown command): the command,
    the message and where help is; exit code 2."""
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else _command_path(sys.argv[1:])
    import re

    message = " ".join(exc.format_message().split())
    # typer's choice check words a bad choice as pydantic does, "Value error, 'x' is not one of ...": the prefix is the
    # validator's, not the user's concern (before: "Invalid value for '--rank': Value error, 'x' is not one of ...")
    message = re.sub(r"^(Invalid value for .*?: )Value error, ", r"\1", message)
    if type(exc).__name__ == "NoArgsIsHelpError":  # a bare group: click printed its help already
        return 2
    hint = ""
    name = getattr(exc, "option_name", None) if type(exc).__name__ == "NoSuchOption" else None
    text = next((w for w in sys.argv[1:] if name and w.startswith(name) and any(c.isspace() for c in w)), None)
    if text is not None:  # `search "-1 times -1?"`: a text taken for options (before: only "No such option: -1")
        shown = text if len(text) <= 40 else text[:37] + "..."
        hint = f"; a text that starts with '-' goes after `--`: {where} -- {json.dumps(shown, ensure_ascii=False)}"
    elif name in _GLOBAL_OPTIONS and where != "taskspace":
        # `taskspace models -v` (before: only "No such option: -v", though the README lists -v and --debug)
        run = "taskspace --version" if name == "--version" else f"taskspace {name} {where.removeprefix('taskspace ')} ..."
        hint = f"; {name} is an option of taskspace itself: put it before the command, {run}"
    elif name in _COUNT_OPTIONS.get(where, ())[:2]:  # before, only "No such option: -n"
        hint = f"; {where} takes how many models as {_COUNT_OPTIONS[where][2]}"
    elif name in ("--eps", "--lambda"):  # `search --eps 1e9`: before, "(Possible options: --help, --top)" alone
        var = f"TASKSPACE_{name[2:].upper()}"
        hint = (f"; {name[2:]} is how a space is built, not a query's: set {var} for `taskspace index` (a space per "
                f"value; --space picks one), or compare values with `taskspace evaluate DATA {name} X`")
    _say_error(f"{where}: {message} (see `{where} -h`){hint}", 2)
    return 2


#: the commands whose work is recorded as a run (`taskspace runs`): an interrupt of one shows there
_RUN_COMMANDS = ("taskspace index", "taskspace reindex", "taskspace worker", "taskspace serve")


def _exit(code: int) -> None:
    """Exit with ``code``; 130 is an interrupt (typer turns a KeyboardInterrupt into ``Exit(130)``), which says so,
    and what it left; 143 when it was SIGTERM, 129 SIGHUP (the commands that take them as Ctrl-C:
    :func:`indexer.cli_index.interrupt_on_sigterm`).
    Before, every command was said to have kept what it committed, so `evaluate` (which stores nothing) was said to
    continue when run again and to show in `taskspace runs`."""
    from .cli_index import terminated

    if code in (0, 130) and terminated:  # 0: the command's work returned though the signal came, its interrupt
        # swallowed by library code (an `except BaseException` that does not raise again): it ends as terminated still;
        # before, `taskspace demo` sent SIGTERM under load now and then finished its work and exited 0
        code = 128 + terminated[0]  # 143 for SIGTERM, 129 for SIGHUP
    if code in (130, 143, 129):
        how = "interrupted" if code == 130 else "terminated"
        where = _command_path(sys.argv[1:])
        if where == "taskspace evaluate":
            said = (f"{how}: an evaluation keeps no partial results (only the --plots of splits that finished "
                    "were written); run the command again to start it over")
        else:
            said = f"{how}: what was committed is kept, nothing is half-written; run the command again to continue"
            if where in _RUN_COMMANDS:
                said += " (`taskspace runs` shows an interrupted pass)"
        _say_stopped(said, code)
    sys.exit(code)


def main() -> None:
    """Console-script entry point: run the app, mapping library errors to exit codes."""
    try:
        rc = app(standalone_mode=False, prog_name="taskspace")
        from .cli_index import terminated

        if isinstance(rc, int) and rc or terminated:  # typer.Exit(code) comes back as a return value here
            _exit(rc if isinstance(rc, int) else 0)
    except IndexerError as exc:
        if _state["debug"]:  # the traceback, and still the error's exit code
            import traceback

            traceback.print_exc()
        else:  # one line (README): a cause quoted in the message (transformers' offline error) may span several
            import re

            text = _while_a_pass_runs(exc)
            _say_error(re.sub(r"\s*\n\s*", " ", text), exc.exit_code)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:  # Ctrl-C, a worker's second SIGINT/SIGTERM, or SIGTERM to index/reindex
        _exit(130)
    except SystemExit as exc:
        if isinstance(exc.__context__, BrokenPipeError):
            # the reader of stdout went away (`taskspace models | head -1`): typer's handler stops quietly with exit
            # 1, the code of an input error; 141 (128 + SIGPIPE) is what a shell shows for a program the closed pipe
            # ended, nothing to say on stderr
            sys.exit(141)
        raise
    except typer.Exit as exc:
        _exit(exc.exit_code)
    except typer.Abort:
        _say_stopped("aborted", 1)
        sys.exit(1)
    except Exception as exc:  # click's usage errors: typer 0.29 raises those of its own vendored click
        import click

        try:
            from typer._click import exceptions as tclick
        except ImportError:  # a typer that uses click itself
            tclick = click.exceptions
        usage = (click.exceptions.UsageError, tclick.UsageError)
        if isinstance(exc, usage):
            sys.exit(_usage_error(exc))
        if isinstance(exc, (click.exceptions.ClickException, tclick.ClickException)):
            _say_error(" ".join(exc.format_message().split()), exc.exit_code)
            sys.exit(exc.exit_code)
        # typer 0.29's vendored click has no Abort or Exit (typer's own are caught above): click's stand in
        if isinstance(exc, (click.exceptions.Abort, getattr(tclick, "Abort", click.exceptions.Abort))):
            _say_stopped("aborted", 1)
            sys.exit(1)
        if isinstance(exc, (click.exceptions.Exit, getattr(tclick, "Exit", click.exceptions.Exit))):
            sys.exit(exc.exit_code)
        raise


if __name__ == "__main__":
    main()
