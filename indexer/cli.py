"""The ``taskspace`` command line: a thin layer that parses, calls the library and formats.

Heavy modules (torch, sentence-transformers, SQLAlchemy, qdrant-client) are imported inside the
commands, so ``taskspace --help`` stays fast. Library errors (:class:`indexer.errors.IndexerError`)
become one line on stderr and the error's exit code; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Optional

import typer

from .errors import IndexerError

app = typer.Typer(
    name="taskspace",
    help="Index Hugging Face Hub models in prompt semantic task space and find the model for a task.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_state = {"debug": False}


@app.callback()
def _main(
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks instead of one-line errors."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log at DEBUG level."),
) -> None:
    _state["debug"] = debug
    from .config import get_settings

    level = "DEBUG" if verbose else get_settings().log_level
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def echo_json(obj) -> None:
    """Print an object as indented JSON on stdout."""
    typer.echo(json.dumps(obj, indent=2, sort_keys=False, default=str))


@app.command()
def demo(
    prompt: list[str] = typer.Option(
        None, "--prompt", "-p", help="Prompt(s) to find models for (repeatable). Default: a few sample questions."
    ),
    top: int = typer.Option(5, "--top", "-k", help="How many models to show."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Embed the bundled sample (real MMLU-Pro results), fit every model and rank them for sample prompts."""
    from .demo import DEFAULT_PROMPTS, run_demo

    result = run_demo(prompt or DEFAULT_PROMPTS, top=top)
    if as_json:
        echo_json(result)
        return
    typer.echo(f"bundled sample: {result['models']} models x {result['prompts']} prompts, encoder {result['encoder']}")
    for item in result["queries"]:
        typer.echo(f"\nprompt: {item['prompt'][:100]}")
        for rank, row in enumerate(item["ranking"], 1):
            typer.echo(f"  {rank:>2}. {row['model']:<40} predicted {row['score']:+.3f}   observed acc {row['accuracy']:.3f}")


def main() -> None:
    """Console-script entry point: run the app, mapping library errors to exit codes."""
    try:
        app(standalone_mode=False)
    except IndexerError as exc:
        if _state["debug"]:
            raise
        typer.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("aborted", err=True)
        sys.exit(1)
    except Exception as exc:  # click usage errors and the like
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise


if __name__ == "__main__":
    main()
