"""``taskspace sources list|add|remove``: the indexing worker's source configuration (:mod:`indexer.sourcelist`);
``taskspace sources stored|drop``: the sources whose results the database holds (:func:`indexer.ingest.stored_sources`,
:func:`indexer.ingest.drop_source`)."""

from __future__ import annotations

from typing import Optional

import typer

from pathlib import Path

from .cli_index import (FILTER_OPTION, METRIC_OPTION, MODEL_OPTION, PROMPTS_OPTION, each, format_option, metric_values,
                        one_value, reading_options)
from .errors import counted

app = typer.Typer(help="The sources the indexing pass reads ($TASKSPACE_HOME/sources.toml).\n\n"
                       "Examples:\n\n"
                       "  taskspace sources add indexer/data/sample\n\n"
                       "  taskspace sources list\n\n"
                       "  taskspace sources stored --json", no_args_is_help=True)


def _file():
    from .config import get_settings

    return get_settings().sources_file


@app.command("list")
def list_(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show the configured sources (a local path that no longer exists is marked missing).

    Examples:

      taskspace sources list
    """
    from dataclasses import asdict

    from . import sourcelist
    from .cli_index import echo_json

    from pathlib import Path

    from .ingest import spec_kind

    items = sourcelist.load(_file())
    # a configured path that is gone fails every pass; the list the error sends the user to names it (local paths only)
    missing = {s.spec: not Path(s.spec).exists() for s in items if spec_kind(s.spec) == "path"}
    if as_json:
        # every entry the same keys: "missing" null where it does not apply (a Hub source; before, no such key)
        echo_json([{**asdict(s), "missing": missing.get(s.spec)} for s in items])
        return
    if not items:
        typer.echo(f"no sources configured in {_file()} (`taskspace sources add SPEC` adds one)")
    for s in items:
        extra = "".join(f"  {k}={x}" for k, v in (("format", s.format), ("limit", s.limit), *s.options.items())
                        if v is not None for x in (v if isinstance(v, tuple) else (v,)))  # metric=KEY metric=TASK=KEY
        gone = (f"  (missing: no such file or folder; every pass reports it until `taskspace sources remove {s.spec}`)"
                if missing.get(s.spec) else "")
        typer.echo(f"{s.spec}{extra}{gone}")


@app.command("add")
def add(
    spec: str = typer.Argument(..., metavar="SPEC", help="A file or folder, hub:ORG/REPO[@REVISION] or hub-org:ORG."),
    # each a list, so that one given twice with two values is refused (one_value), not the last silently saved
    fmt: Optional[list[str]] = typer.Option(None, "--format", callback=each(format_option), help="Reader for a path (default: detected)."),
    limit: Optional[list[int]] = typer.Option(None, "--limit", help="At most this many datasets per pass (hub-org:)."),
    prompts: Optional[list[Path]] = PROMPTS_OPTION,
    model: Optional[list[str]] = MODEL_OPTION,
    filter: Optional[list[str]] = FILTER_OPTION,
    metric: Optional[list[str]] = METRIC_OPTION,
) -> None:
    """Add a source (checked first: a path must exist and be readable as a known format, the reading options as
    `taskspace ingest` checks them; nothing is saved otherwise). Every pass reads it with these options; adding a
    configured source again replaces its format, limit and options (one path or Hub repo is one source).

    Examples:

      taskspace sources add /data/lm_eval_out --format lm_eval

      taskspace sources add hub:my-org/my-eval-results

      taskspace sources add hub-org:open-llm-leaderboard --limit 200

      taskspace sources add /data/lm_eval_out/org__model --metric acc_norm

      taskspace sources add /data/calamita --metric comet_score --metric 'gfg_*=bert_f1'
    """
    from . import sourcelist

    fmt, limit, prompts, model, filter = (
        one_value(o, v, f"{o} takes one value; give it once (nothing was saved)")
        for o, v in (("--format", fmt), ("--limit", limit), ("--prompts", prompts), ("--model", model),
                     ("--filter", filter)))
    metric = metric_values(metric, "nothing was saved")
    s = sourcelist.validate(sourcelist.SourceSpec(spec=spec, format=fmt, limit=limit,
                                                   **reading_options(prompts, model, filter, metric)))
    before = {sourcelist.source_key(c.spec): c for c in sourcelist.load(_file())}
    sourcelist.add(_file(), [s], check=False)
    old = before.get(sourcelist.source_key(s.spec))
    if old == s:
        typer.echo(f"{s.spec} is configured already (nothing changed)")
    elif old is not None:  # one Hub repo is one source: another revision replaces the configured one
        what = f"replaces {old.spec}" if old.spec != s.spec else "its format, limit or reading options"
        typer.echo(f"updated {s.spec} ({what}; the next `taskspace index` reads it so)")
    else:
        typer.echo(f"added {s.spec} (the next `taskspace index` reads it)")


@app.command("remove")
def remove(spec: str = typer.Argument(..., metavar="SPEC", help="The source as listed by `taskspace sources list` (or as added).")) -> None:
    """Remove a source from the configuration (its results already stored stay in the database).

    Examples:

      taskspace sources remove /data/lm_eval_out
    """
    from . import sourcelist

    s = sourcelist.remove(_file(), spec)
    typer.echo(f"removed {s.spec} (its stored results stay; the next pass no longer reads it)")


@app.command("stored")
def stored(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the sources whose results the database holds (what `drop` takes), configured or not.

    Examples:

      taskspace sources stored

      taskspace sources stored --json
    """
    from .cli_index import echo_json
    from .ingest import stored_sources

    rows = stored_sources()
    if as_json:
        echo_json(rows)
        return
    if not rows:
        typer.echo("no results stored yet (`taskspace index` or `taskspace ingest` stores them)")
    for r in rows:
        rev = (r["revision"] or "-")[:12]
        typer.echo(f"{r['location']}  {r['kind']}  revision {rev}  {counted(r['outcomes'], 'outcome cell', grouped=True)}")


@app.command("drop")
def drop(location: str = typer.Argument(..., metavar="LOCATION", help="A stored source as `taskspace sources stored` lists it (or its "
                                         "path).")) -> None:
    """Delete a stored source's results from the database (one transaction); the next `taskspace index` re-solves
    the models they touched and removes those left without results.

    Example:

      taskspace sources drop /data/results/old-run
    """
    from . import sourcelist
    from .ingest import drop_source

    got = drop_source(location)
    typer.echo(f"dropped {got['location']} ({counted(got['outcomes'], 'outcome cell', grouped=True)}); the next `taskspace index` re-solves "
               "the models they touched and removes those left without results")
    for c in sourcelist.reading(got["location"], sourcelist.load(_file())):
        typer.echo(f"note: {c.spec} is still configured, so the next pass reads it again "
                   f"(`taskspace sources remove {c.spec}` stops that)")
