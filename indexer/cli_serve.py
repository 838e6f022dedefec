"""``taskspace serve``: the HTTP API and the search page (registered in :mod:`indexer.cli`; the app is
:mod:`indexer.serve`)."""

from __future__ import annotations

from typing import Optional

import typer

from .cli_index import cron_option, interval_option


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (0.0.0.0: every interface)."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="TCP port."),
    every: Optional[str] = typer.Option(
        None, "--worker-every", "--every", callback=interval_option,
        help="Also run the indexing worker in this process, a pass every INTERVAL (e.g. 6h, 30m): one process then "
             "owns the embedded index, and queries during a pass rank by the previous complete index (a result "
             "whose results the pass already ingested says so: results changed)."),
    cron: Optional[str] = typer.Option(
        None, "--cron", callback=cron_option("--worker-every"), help='Like --worker-every, on a cron schedule in UTC unless it starts with CRON_TZ=ZONE (e.g. "0 */6 * * *", @daily, "CRON_TZ=Europe/Berlin 0 3 * * *").'),
    cors_origin: Optional[list[str]] = typer.Option(
        None, "--cors-origin",
        help="Let pages from this origin (scheme://host[:port], or * for any) call the API from a browser; repeat for "
             "more. Unset: no CORS headers (the search page at / needs none)."),
) -> None:
    """Serve the HTTP API (POST /v1/find, GET /v1/models, /v1/models/{id}, /v1/benchmarks, /v1/spaces, /healthz,
    /readyz) and the search page at /.

    Examples:

      taskspace serve --port 8000

      taskspace serve --worker-every 6h      # embedded index: the worker runs in the server process

      taskspace serve --cors-origin https://my-app.example.org
    """
    from .errors import ConfigError
    from .serve import run

    if every and cron:
        raise ConfigError("give at most one of --worker-every INTERVAL or --cron EXPRESSION")
    schedule = every or cron  # each checked while the options were parsed (a usage error naming it)
    import logging

    # once the stores are open: a second server on the same index fails before saying it serves
    def announce(url: str) -> None:
        typer.echo(f"serving {url} (API under /v1, OpenAPI at /openapi.json)"
                   + (f"; indexing worker: {schedule}" if schedule else ""), err=True)

    run(host, port, worker_schedule=schedule, log_level=logging.getLevelName(logging.getLogger().getEffectiveLevel()),
        on_start=announce, cors=cors_origin)  # run checks the origins first (a bad one: exit 2, nothing opened)
