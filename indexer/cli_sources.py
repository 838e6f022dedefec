"""``taskspace sources list|add|remove``: the indexing worker's source configuration (:mod:`indexer.sourcelist`)."""

from __future__ import annotations

from typing import Optional

import typer

app = typer.Typer(help="The sources the indexing pass reads ($TASKSPACE_HOME/sources.toml).", no_args_is_help=True)


def _file():
    from .config import get_settings

    return get_settings().sources_file


@app.command("list")
def list_(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show the configured sources."""
    from dataclasses import asdict

    from . import sourcelist
    from .cli_index import echo_json

    items = sourcelist.load(_file())
    if as_json:
        echo_json([asdict(s) for s in items])
        return
    if not items:
        typer.echo(f"no sources configured in {_file()} (`taskspace sources add SPEC` adds one)")
    for s in items:
        extra = "".join(f"  {k}={v}" for k, v in (("format", s.format), ("limit", s.limit)) if v is not None)
        typer.echo(f"{s.spec}{extra}")


@app.command("add")
def add(
    spec: str = typer.Argument(..., help="A file or folder, hub:ORG/REPO[@REVISION] or hub-org:ORG."),
    fmt: Optional[str] = typer.Option(None, "--format", help="Reader for a path (default: detected)."),
    limit: Optional[int] = typer.Option(None, "--limit", help="At most this many datasets per pass (hub-org:)."),
) -> None:
    """Add a source (checked first: a path must exist and be readable as a known format; nothing is saved otherwise)."""
    from . import sourcelist

    s = sourcelist.validate(sourcelist.SourceSpec(spec=spec, format=fmt, limit=limit))
    before = {c.spec: c for c in sourcelist.load(_file())}
    sourcelist.add(_file(), [s], check=False)
    if before.get(s.spec) == s:
        typer.echo(f"{s.spec} is configured already (nothing changed)")
    elif s.spec in before:
        typer.echo(f"updated {s.spec} (its format or limit; the next `taskspace index` reads it so)")
    else:
        typer.echo(f"added {s.spec} (the next `taskspace index` reads it)")


@app.command("remove")
def remove(spec: str = typer.Argument(..., help="The source as listed by `taskspace sources list` (or as added).")) -> None:
    """Remove a source from the configuration (its results already stored stay in the database)."""
    from . import sourcelist

    s = sourcelist.remove(_file(), spec)
    typer.echo(f"removed {s.spec} (its stored results stay; the next pass no longer reads it)")
