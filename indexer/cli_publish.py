"""``taskspace publish`` and ``taskspace pull`` (registered in :mod:`indexer.cli`): thin adapters over
:mod:`indexer.publish`."""

from __future__ import annotations

from typing import Optional

import typer

from .cli_find import _name_option
from .errors import counted


def _repo_id(value: str) -> str:
    """``publish ORG/NAME``: a Hub repo id, checked while the arguments are parsed (a usage error, exit 2, as the
    README says a bad value is; before, the library's input error, exit 1, after the command had started)."""
    from .hub import is_valid_repo_id

    if not is_valid_repo_id(value):
        raise typer.BadParameter(f"{value[:80]!r} is not a Hub dataset id; write ORG/NAME, e.g. my-org/taskspace-vectors")
    return value


def _pull_source(value: str) -> str:
    """``pull SOURCE``: a malformed ``hub:`` spec, or an organisation, is a usage error naming the argument (exit 2),
    as ``ingest`` and ``index --source`` refuse one; a folder that is not there stays an input error (exit 1)."""
    from .errors import InputError
    from .ingest import parse_spec, spec_kind

    kind = spec_kind(value)
    if kind == "hub-org":
        raise typer.BadParameter(f"{value[:80]!r} names an organisation; pull takes one record set, "
                                 "hub:ORG/NAME[@REVISION], or a folder")
    if kind == "hub":
        try:
            parse_spec(value)
        except InputError as exc:
            raise typer.BadParameter(f"{exc.message} (given {value[:80]!r})") from None
    return value


def publish(
    repo: str = typer.Argument(..., metavar="ORG/NAME", callback=_repo_id, help="The Hub dataset to publish to, ORG/NAME (created when missing)."),
    space: Optional[str] = typer.Option(None, "--space", callback=_name_option, help="Only this space (index name, SQL id or encoder name)."),
    private: bool = typer.Option(False, "--private", help="Create the dataset private (when it does not exist yet)."),
    dry_run: Optional[str] = typer.Option(None, "--dry-run", metavar="DIR",
                                          help="Write the files a publish would commit into DIR; contact no one."),
    include_restricted: bool = typer.Option(False, "--include-restricted",
                                            help="Publish records derived from non-commercial or share-alike sources."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Publish the model records (vectors, calibration, uncertainty, benchmarks, card) as a Hub dataset: one commit,
    or none when nothing changed. The token comes from HF_TOKEN or `hf auth login` and needs write access.

    Examples:

      taskspace publish my-org/taskspace-vectors

      taskspace publish my-org/taskspace-vectors --dry-run out/
    """
    from .cli_index import echo_json
    from .publish import publish as run

    res = run(repo, space=space, private=private, dry_run=dry_run, include_restricted=include_restricted)
    if as_json:
        echo_json(res.as_dict())
    elif res.dry_run:
        gone = f", removed {len(res.deleted)} an earlier dry run wrote" if res.deleted else ""
        typer.echo(f"wrote {counted(len(res.files), 'file')} to {res.dry_run} ({counted(res.added, 'model record')}){gone}; "
                   "nothing was sent")
    elif res.commit is None:
        typer.echo(f"{repo}: nothing changed, no commit")
    else:
        typer.echo(f"{repo}: commit {res.commit[:12]}: {res.message}")


def pull(
    source: str = typer.Argument(..., metavar="SOURCE", callback=_pull_source, help="hub:ORG/NAME[@REVISION] or a folder of published records."),
    space: Optional[str] = typer.Option(None, "--space", callback=_name_option, help="Only this space of the records (its index name)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Load published model records into this installation (SQL and the vector index), so search and serve work at
    once. A pulled space is read-only until raw results are ingested. With HF_HUB_OFFLINE=1, or a Hub that cannot be
    reached (no connection, timeouts), a Hub dataset comes from this home's Hub cache when it holds it: a warning names
    the commit used, exit 0.

    Examples:

      taskspace pull hub:my-org/taskspace-vectors

      taskspace pull out/      # a --dry-run folder
    """
    from .cli_index import echo_json
    from .publish import cached_revision_said, pull as run

    res = run(source, space=space)
    if as_json:
        echo_json(res.as_dict())
        return
    if res.cached and not res.cached.get("unreachable"):  # offline, from the home's Hub cache: which revision, and
        # that nothing newer was looked for (with the Hub unreachable, the pull's warning on stderr says so)
        c = res.cached
        which = cached_revision_said(c["revision"], c["ref"])
        held, asked = res.origin.rpartition('@')[0], source.partition('@')[0]
        spelled = (f" (asked as {asked}: the Hub's repo ids are case-insensitive, and the cache holds it as written "
                   "when it was fetched)" if held != asked else "")
        typer.echo(f"{c['variable']} is set: pulled {held} at {c['revision']} from the Hub cache ({which}){spelled}; "
                   "could not check the Hub for a newer revision")
    for s in res.spaces:
        n = s.get("models_removed")
        gone = (f"; {counted(n, 'model')} the space held here {'is' if n == 1 else 'are'} not in these records and "
                f"{'was' if n == 1 else 'were'} removed" if n else "")
        typer.echo(f"{s['space']}: {counted(s['models'], 'model')}, {counted(s['benchmarks'], 'benchmark vector')} from "
                   f"{res.origin}{gone}")
