"""``taskspace spaces [list]`` and ``taskspace spaces drop NAME``: thin adapters over :mod:`indexer.spaces`."""

from __future__ import annotations

import typer

from .cli_find import _name_option
from .errors import counted

app = typer.Typer(help="The embedding spaces of this home (one per encoder and method indexed or pulled): `taskspace "
                       "spaces` lists each one's encoder, method, dimension, models, how many are stale and the command "
                       "that re-solves them, and marks the default (the one a search without --space takes) and the "
                       "configured one (the one `taskspace index` updates); `drop` removes one.\n\n"
                       "Examples:\n\n"
                       "  taskspace spaces\n\n"
                       "  taskspace spaces --json\n\n"
                       "  taskspace spaces drop all-minilm-l6-v2-3f2a9c1b0d --dry-run",
                  invoke_without_command=True)


def _show(as_json: bool) -> None:
    from .cli_find import count
    from .cli_index import echo_json
    from .spaces import describe_spaces
    from .store.vectors import VectorStore
    from .sync import open_sql_of_index

    from .errors import EncoderError
    from .spaces import configured_spec

    from .errors import BusyError

    with open_sql_of_index(read_only=True) as sql:
        try:
            vectors = VectorStore.from_settings(create=False)  # a listing: a removed index folder is not made
        except BusyError as exc:  # a running server holds the embedded folder: SQL still says what the spaces are
            # (before: exit 6, nothing listed, and "send the query to it", though the server has no such query)
            infos = describe_spaces(sql)
            for i in infos:
                i.index = None
            typer.echo(f"note: {exc.held}: the spaces are listed from SQL alone, their vector-index collections unchecked",
                       err=True)
        else:
            with vectors:
                infos = describe_spaces(sql, vectors)
    try:
        configured_spec()
    except EncoderError as exc:  # listed all the same, the newest as the default (what a search takes then)
        typer.echo(f"note: the configured encoder cannot be loaded here, so a search without --space takes the newest "
                   f"space (with a warning) and `taskspace index` fails until TASKSPACE_ENCODER names an installed one: "
                   f"{exc}", err=True)
    if as_json:
        echo_json([i.as_dict() for i in infos])
        return
    if not infos:
        typer.echo("no embedding spaces yet: `taskspace index` builds one (or `taskspace pull` brings one)")
        return
    for i in infos:
        if i.id is None:
            typer.echo(f"{i.name}  in the vector index only, not in SQL (left by an interrupted drop, or copied): "
                       f"`taskspace spaces drop {i.name}` removes it")
            continue
        marks = [m for m, on in (("default", i.default), ("configured", i.configured)) if on]
        head = f"{i.name}{' [' + ', '.join(marks) + ']' if marks else ''}"
        typer.echo(head)
        typer.echo(f"  id {i.id}  encoder {i.encoder}  method {i.method}  dim {i.dim}  lambda {float(i.lam):g}  "
                   f"eps {float(i.eps):g}")
        if i.read_only:
            stale = "stale: - (pulled, read-only)"
        elif i.stale:
            stale = (f"stale: {counted(i.stale, 'model', grouped=True)} whose results changed since their vector was solved ("
                     + ("the next `taskspace index` re-solves them)" if i.configured else
                        f"not the configured space, so no pass updates it: `{i.update}` re-solves it)" if i.update else
                        "not the configured space, and no setting of this taskspace builds it: no pass updates it)"))
        else:
            stale = "stale: none"
        # counts as the tables and the page's space chooser write them ("32,823")
        typer.echo(f"  models {count(i.models)}  benchmarks {count(i.benchmarks)}  {stale}")
        if i.origin:
            typer.echo(f"  pulled from {i.origin}{' (read-only until raw results are ingested)' if i.read_only else ''}")
        missing = [k for k, n in (i.index or {}).items() if n is None]
        if missing:
            typer.echo(f"  index: {', '.join(missing)} missing (`taskspace reindex --space {i.name}` rebuilds it)")


@app.callback()
def spaces(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the embedding spaces: encoder, method, dimension, models, how many are stale, which is the default (the
    one a search without --space takes) and which the configured one (the one `taskspace index` updates)."""
    if ctx.invoked_subcommand is None:
        _show(as_json)


@app.command("list")
def list_(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the embedding spaces (as `taskspace spaces` does).

    Examples:

      taskspace spaces list --json
    """
    _show(as_json)


@app.command("drop")
def drop(
    space: str = typer.Argument(..., metavar="NAME", callback=_name_option, help="The space: its index name (as `taskspace spaces` lists it), SQL id or encoder name."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Only list what would be removed."),
    force: bool = typer.Option(False, "--force", help="Drop the default space too."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Remove a space: its vectors, calibration and the rest SQL holds of it, and its vector-index collections
    (results, prompts and models with results stay). The default space is refused without --force. Safe to repeat:
    a drop that was interrupted finishes, one done already does nothing.

    Examples:

      taskspace spaces drop all-minilm-l6-v2-3f2a9c1b0d --dry-run

      taskspace spaces drop all-minilm-l6-v2-3f2a9c1b0d
    """
    from .cli_index import echo_json, interrupt_on_sigterm
    from .spaces import drop_space
    from .store.vectors import VectorStore
    from .sync import open_sql_of_index

    interrupt_on_sigterm()
    # the indexing passes' lock before the index is opened (as `taskspace reindex`): no pass writes the space meanwhile
    # a home never indexed has no space to drop: said so, and nothing created (open_sql_of_index's read_only)
    with open_sql_of_index(read_only=True) as sql, sql.lock("index"), VectorStore.from_settings() as vectors:
        res = drop_space(sql, vectors, space, force=force, dry_run=dry_run)
    if as_json:
        echo_json(res.as_dict())
        return
    if res.nothing:
        typer.echo(f"space {res.space}: nothing to drop (not in SQL nor in the vector index; `taskspace spaces` lists "
                   "the spaces)")
        return
    verb = "would remove" if res.dry_run else "removed"
    what = f" ({res.encoder}, method {res.method})" if res.encoder else " (in the vector index only)"
    typer.echo(f"space {res.space}{what}: {verb}")
    rows = ", ".join(f"{n} {t}" for t, n in res.sql.items() if n)
    if rows:
        typer.echo(f"  SQL rows: {rows}")
    for c, n in res.collections.items():
        typer.echo(f"  index collection {c}" + (f" ({counted(n, 'point')})" if n is not None else " (not live)"))
    if res.dry_run:
        force = " --force" if res.default else ""
        if res.default:
            typer.echo("it is the default space (searches without --space, the server and the page use it): the drop "
                       "needs --force")
        typer.echo(f"nothing was changed (`taskspace spaces drop {res.space}{force}` drops it)")
    elif res.default:
        typer.echo("it was the default space: searches now take "
                   "another (`taskspace spaces`), or say the index is empty until `taskspace index` builds one")
