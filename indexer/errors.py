"""The error tree. Every error the library raises on purpose derives from :class:`IndexerError`
and also from the builtin that matches it, so callers can catch either.

Messages say what went wrong, name the item (file, line, model, prompt) and what to do next.
The CLI maps each class to an exit code (``exit_code``) and prints one line.
"""

from __future__ import annotations

import contextvars
import logging

#: Who reads a message, so that it names what that reader can act on (:func:`arg`, :func:`accept_partial_advice`):
#: False, a Python caller (the library's parameters, ``dry_run='DIR'``); True while a CLI command runs (set by
#: :mod:`indexer.cli` for every command but the services): the command's options (``--dry-run DIR``); or the name of
#: a service the CLI started, :data:`WORKER` or :data:`SERVE`, in the thread of its indexing passes only (set by
#: ``taskspace worker`` and by the in-process worker of ``taskspace serve``; serve's HTTP answers keep the API's
#: words): its operator, at a shell, reads the pass's run record (``taskspace runs``) and log, so options are named as
#: the CLI's, and what the pass itself cannot take (``--accept-partial``) as the command they run beside the service.
#: Before, a service's passes were not set, so ``taskspace runs`` told its operator ``accept_partial=True (ingest()
#: or Indexer.run())``.
CLI = contextvars.ContextVar("taskspace_cli", default=False)
#: :data:`CLI`'s values for the services' passes
WORKER, SERVE = "worker", "serve"
#: The configured source (a :class:`indexer.sourcelist.SourceSpec`) an indexing pass is reading, in that pass's thread
#: while it reads it; None otherwise. The hints of its errors (:func:`option_hint`) then say how to set a reading option
#: for that source (``taskspace sources add SPEC --metric NAME``): the pass takes no ``--metric``. Before, a worker's run
#: record said "pass --metric", which no worker pass can take.
SOURCE = contextvars.ContextVar("taskspace_source", default=None)
#: The command whose reading of a source the readers' errors advise on: ``"ingest"`` (``taskspace ingest``, the
#: library's ingest, an indexing pass), or ``"evaluate"`` while :func:`indexer.evaluate.load_matrix` reads one: it takes
#: no ``--prompts`` and is run again by its own name. Before, `taskspace evaluate` was told to run
#: ``taskspace ingest OUTCOMES_FILE --prompts FILE`` or to "ingest its folder".
READING_FOR = contextvars.ContextVar("taskspace_reading_for", default="ingest")
#: the reading options a configured source can carry, with the placeholder a hint writes for their value
SOURCE_OPTIONS = {"format": "FORMAT", "prompts": "FILE", "model": "NAME", "filter": "NAME", "metric": "NAME"}
_UNSET = object()


def arg(param: str, value=_UNSET, *, flag: str | None = None, quote: bool = True) -> str:
    """How a message names the argument ``param`` (a library parameter) given ``value``, as its caller wrote it: the
    CLI's option (``flag``, by default ``--`` and the parameter with dashes) and the value (a text quoted unless
    ``quote`` is False, as for a path), ``--model 'org/x'``, ``--dry-run out``, ``--include-restricted`` for True; the
    library's ``model='org/x'``, ``dry_run='out'``, ``include_restricted=True``. Before, the library said ``--dry-run
    out`` to a Python caller, which has no such option."""
    if CLI.get():
        name = flag or "--" + param.replace("_", "-")
        if value is _UNSET or value is True:
            return name
        return f"{name} {value!r}" if isinstance(value, str) and quote else f"{name} {value}"
    return f"{param}=" if value is _UNSET else f"{param}={value!r}"


def option_hint(param: str, value=_UNSET, *, quote: bool = True) -> str:
    """:func:`arg` for a hint that says to give a reading option (``pass --metric``), and, while an indexing pass reads
    a configured source (:data:`SOURCE`), how to set it for that source: the command (or the library call) that
    configures it so, keeping its other options (``--metric (for this configured source: `taskspace sources add /x
    --format lm_eval --metric NAME`)``)."""
    return arg(param, value, quote=quote) + source_hint(param, value)


def source_hint(param: str, value=_UNSET) -> str:
    """What :func:`option_hint` adds to a hint while a pass reads a configured source (:data:`SOURCE`): `` (for this
    configured source: `taskspace sources add SPEC ... --metric NAME`)``; "" otherwise."""
    source = SOURCE.get()
    if source is None or param not in SOURCE_OPTIONS:
        return ""
    shown = SOURCE_OPTIONS[param] if value is _UNSET else value
    how = (f"`{source.add_command(**{param: shown})}`" if CLI.get() else
           f"indexer.sourcelist.add(sources_file, [{source.with_options(**{param: shown})!r}])")
    return f" (for this configured source: {how})"


def accept_partial_advice(location: str, format: str | None = None) -> str:
    """How the reader of a quarantine (:data:`CLI`) stores the new revision of the source at ``location`` anyway: the
    option and the commands that take it (a CLI command); the parameter and the calls (a Python caller); for the
    operator of ``taskspace worker``, whose passes take no such option, a pass by hand beside it (``taskspace index
    --accept-partial``, which reads the configured sources); for ``taskspace serve``'s worker, ``taskspace ingest
    LOCATION --accept-partial`` (SQL only, so it runs beside a server holding the embedded index, which ``taskspace
    index`` cannot), its next pass indexing it. A pass reading a configured source (:data:`SOURCE`) names the ingest
    for that source alone with the source's format and reading options (:func:`_ingest_accepting`), as the pass reads
    it: without them ``taskspace ingest`` stored another read, and the next pass found a revision it had not stored."""
    mode = CLI.get()
    source = SOURCE.get()
    if mode == WORKER:
        return ("`taskspace index --accept-partial` (one pass by hand, beside this worker; `taskspace worker` takes no "
                "such option)")
    if mode == SERVE:
        return (f"`{_ingest_accepting(location, format, source)}` beside this server (it writes SQL only); "
                "the server's indexing worker indexes it at its next pass")
    if mode and source is not None:  # taskspace index
        return ("`taskspace index --accept-partial` (a pass that reads the configured sources with their options; it "
                "stores every quarantined source's new revision), or for this source alone "
                f"`{_ingest_accepting(location, format, source)}` (the next pass indexes it)")
    if mode:  # taskspace ingest: the source is not configured, so `taskspace index` would not read it
        return "--accept-partial (give this `taskspace ingest` command again with it, and the same options)"
    if source is not None:
        return ("accept_partial=True (Indexer.run(), which reads the configured sources with their options, or for "
                f"this source alone {_ingest_accepting(location, format, source)})")
    return "accept_partial=True (ingest() or Indexer.run())"


def _ingest_accepting(location: str, format: str | None, source) -> str:
    """The ingest that stores the quarantined revision at ``location`` as a pass reads it: with ``format`` and the
    configured ``source``'s reading options (if any); a shell's ``taskspace ingest LOCATION --accept-partial --format F
    --model M``, or (a Python caller) ``ingest(LOCATION, accept_partial=True, format=F, model=M)``."""
    import shlex

    options = {"format": format} if format else {}
    if source is not None:
        options.update(source.options)
    if CLI.get():
        return (f"taskspace ingest {shlex.quote(location)} --accept-partial"
                + "".join(f" --{k} {shlex.quote(str(x))}" for k, v in options.items()
                          for x in (v if isinstance(v, (list, tuple)) else [v])))  # --metric KEY --metric TASK=KEY
    return f"ingest({location!r}, accept_partial=True" + "".join(f", {k}={v!r}" for k, v in options.items()) + ")"


def traceback_advice(logger: str) -> str:
    """Where the reader of an unexpected error's line (:data:`CLI`) finds its traceback, which ``logger`` logs at INFO
    just before: ``-v`` for a command (it logs at WARNING unless asked); the log of ``taskspace worker`` or
    ``taskspace serve``, which log at INFO (unless TASKSPACE_LOG_LEVEL says otherwise), where ``-v`` adds nothing;
    the logger, for a Python caller, who has no ``-v``."""
    mode = CLI.get()
    if mode in (WORKER, SERVE):
        who = "this worker's" if mode == WORKER else "the server's"
        return (f"its traceback is in {who} log, just before this line (logged at INFO; with TASKSPACE_LOG_LEVEL "
                "set higher, set it to INFO)")
    if mode:
        return "run with -v for the traceback"
    return f"its traceback is logged at INFO by the logger {logger}"


def command_word() -> str:
    """The command word of this process's command line: its first argument that is no option (``index`` of
    ``taskspace -v index --source DIR``), "" when it has none. Never the other arguments, which may hold a URL or a
    prompt. What names this process to whoever waits for a lock it holds (:func:`running_command`, the embedded
    index's lock file)."""
    import sys

    return next((a for a in (sys.argv or [])[1:] if not a.startswith("-")), "")


def running_command() -> str:
    """This process as the SQL lock (:mod:`indexer.store.sql_lock`) names its holder, so that whoever waits for the
    lock tells a pass of a worker from an ``index`` run by hand or a server: as :data:`CLI` says it, ``taskspace
    worker`` or ``taskspace serve`` in a service's passes, the CLI command with its subcommands (``taskspace db
    upgrade``; in a pass's thread, which has no click context, :func:`command_word`), else ``Python (PROGRAM)``.
    Never the command's arguments, which may hold a URL or a prompt."""
    import sys
    from pathlib import Path

    mode = CLI.get()
    if isinstance(mode, str):
        return f"taskspace {mode}"
    if mode:
        import click

        ctx, names = click.get_current_context(silent=True), []
        while ctx is not None and ctx.parent is not None:
            names.append(ctx.info_name)
            ctx = ctx.parent
        return " ".join(["taskspace", *(reversed(names) if names else [command_word()])]).strip()
    argv = sys.argv or []
    return f"Python ({Path(argv[0]).name if argv and argv[0] else 'interactive'})"


class IndexerError(Exception):
    """Root of every taskspace error. ``item``: the argument (or item) at fault, as a caller named it (``k``,
    ``filters.licenses``, ``models[0]``, ``space``), the HTTP layer's ``field``; None where none is (an empty index, a
    store that cannot be used). Every error has it (a class attribute, None unless the error was made with one), so
    ``exc.item`` of any IndexerError can be read, as the README says."""

    exit_code = 1
    item: str | None = None
    #: True for an error no later pass of a running worker can get past (the database URL it read at its start, the
    #: database's schema): the worker exits with it instead of failing every pass (:mod:`indexer.worker`)
    permanent = False


class ConfigError(IndexerError, ValueError):
    """A setting is missing or malformed (environment variable, config file)."""

    exit_code = 2


class InputError(IndexerError, ValueError):
    """Bad input data: names the item (file and line, model, prompt) and what is wrong.

    ``value``: the value the message names, where the message writes ``{value}`` (said as Python's ``repr``: ``not
    -3``); :meth:`said_with` gives the message with it said otherwise, as a caller wrote it (the HTTP layer: ``-3.0``,
    ``1e+300`` as the JSON body wrote them). ``template`` is None for a message that names no value."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None, item: str | None = None,
                 value=_UNSET):
        self.file = file
        self.line = line
        self.item = item
        where = ""
        if file is not None:
            where = f"{file}:{line}: " if line is not None else f"{file}: "
        elif item is not None and not message.startswith((f"{item} ", f"{item.rsplit('.', 1)[-1]} ")):
            where = f"{item}: "  # "k must be ...", "min_evidence must be ..." (item filters.min_evidence): named once
        self.template = None if value is _UNSET else message
        self.value = None if value is _UNSET else value
        self._where = where
        if self.template is not None:
            message = self.template.replace("{value}", repr(value))
        super().__init__(where + message)
        self.message = message

    def said_with(self, shown: str) -> str:
        """The message with the value it names (``value``) said as ``shown``; the message as it is when it names none
        (``template`` None)."""
        if self.template is None:
            return str(self)
        return self._where + self.template.replace("{value}", shown)


class DimensionError(InputError):
    """Vectors of the wrong dimension for the embedding space or collection."""


class NotFoundError(IndexerError, LookupError):
    """A model, benchmark, prompt, repo or file that does not exist."""


class HiddenRepoError(NotFoundError):
    """The Hub answered 401 to a read made without a token: it answers a repo that does not exist as it answers a
    private or gated one, so either may be true. A NotFoundError (exit 1, as a missing repo), not a
    :class:`GatedRepoError`: no token was refused; the message says to check the id and to set HF_TOKEN if it is the
    user's. With a token set, a 401 stays a GatedRepoError (the token was refused)."""


class UnknownSpaceError(NotFoundError):
    """``--space NAME`` names no space SQL holds (or several): a usage error (exit 2) naming the option and the known
    spaces, as for any other bad option value; still a NotFoundError (HTTP 404) to code that looks names up."""

    exit_code = 2


class StoreError(IndexerError, RuntimeError):
    """The database or the vector index cannot be used (unreachable, locked, out of date). ``nothing_saved``: True
    when the message already says that nothing of the failed write transaction was saved (a caller adding its own
    "nothing of it was written" would say it twice)."""

    exit_code = 3
    nothing_saved = False


class ConnectionLostError(StoreError):
    """The database ended the session in the middle of an operation (a PostgreSQL restart or failover,
    ``pg_terminate_backend``, a session timeout): nothing of its transaction was saved, and the same operation on a
    fresh connection can succeed (the worker runs such a pass again soon: :mod:`indexer.worker`)."""


def once_more_if_lost(call, *args, log, said, level: int = logging.WARNING):
    """``call(*args)``, and once more when the database ended the session under it (:class:`ConnectionLostError`:
    nothing of its transaction was saved, and the pool's next connection is a fresh one), ``said(exc)`` logged to
    ``log`` at ``level`` (default WARNING) in between. For a read, or a write whose transaction is whole (a source's
    ingest, a run record); a second ending is the caller's error."""
    try:
        return call(*args)
    except ConnectionLostError as exc:
        log.log(level, "%s", said(exc))
        return call(*args)


class DatabaseUnreachableError(StoreError):
    """The database server could not be reached for now (PostgreSQL restarting or failing over: the connection
    refused, "the database system is starting up", "not currently accepting connections", a connect timeout): the
    same work can succeed once it answers again (the worker runs such a pass again soon: :mod:`indexer.worker`)."""


class IndexMissingError(StoreError, NotFoundError):
    """The vector index of a space SQL holds is missing (its folder removed by hand, or never published): nothing
    can be searched until ``taskspace reindex`` (or an indexing pass) rebuilds it from SQL. A store that cannot
    answer (exit 3, HTTP 503), not an unknown name; still a NotFoundError to code that looks for an index."""


class DatabaseURLError(ConfigError, StoreError):
    """The database URL (``TASKSPACE_DATABASE_URL``, ``taskspace db --url``) cannot name a database: malformed, or its
    driver is not installed. A setting to fix (exit 2, as any configuration error; before, exit 3 as for a database
    that cannot be reached); still a StoreError to code that catches one (the store cannot be opened). A well-formed
    URL whose server does not answer is a StoreError (exit 3)."""

    permanent = True


class SchemaError(ConfigError, StoreError):
    """The database has no taskspace tables (``taskspace db upgrade`` never run on it) or is at a schema this
    taskspace cannot use (older: ``taskspace db upgrade``; newer: upgrade taskspace). Something to set up before
    anything can run (exit 2, as any configuration error, not 3 as for a database that cannot be reached for now; a
    worker ends on it, ``permanent``); still a StoreError to code that catches one."""

    permanent = True


class IndexOutOfStepError(StoreError, DimensionError):
    """The vector index holds vectors of another dimension than SQL's space (copied from another home, built with
    another encoder): ``taskspace reindex`` rebuilds it from SQL. A store that cannot answer (exit 3, HTTP 503), not
    bad input; still a DimensionError to code that catches that (before, only one: exit 1)."""


class HubError(IndexerError, ConnectionError):
    """The Hugging Face Hub refused or failed a request (after retries)."""

    exit_code = 4


class GatedRepoError(HubError, PermissionError):
    """A gated or private repo: the message says how to request access and set ``HF_TOKEN``."""


class EncoderError(IndexerError, RuntimeError):
    """The sentence-transformer could not be loaded or run."""

    exit_code = 5


class ReadOnlyError(StoreError, PermissionError):
    """A pulled embedding space is read-only until raw results are ingested (``taskspace pull``)."""


class BusyError(StoreError):
    """Another taskspace process holds the lock (indexing pass, local Qdrant folder). ``held``: who holds it, without
    the advice to wait and retry, for a process that waits and retries by itself (the worker's log line, the busy
    pass of ``/readyz``); the message otherwise. ``lasting``: for a holder that keeps it as long as it runs, not for
    a pass (a ``taskspace serve`` on the embedded index, a notebook kernel), what to do about it, which waiting does
    not (the worker logs it with ``held``); None for a holder that lets it go when its work is done."""

    exit_code = 6

    def __init__(self, message: str = "", *, held: str | None = None, lasting: str | None = None):
        super().__init__(message)
        self.held = held or message
        self.lasting = lasting


def counted(n: int, word: str, plural: str | None = None, *, grouped: bool = False) -> str:
    """A count and its noun, singular for one: ``counted(1, "model")`` -> ``"1 model"``, ``counted(3, "model")`` ->
    ``"3 models"`` (``plural`` for a noun not made by adding "s"; ``grouped`` writes the count with thousands
    separators, ``"32,823 models"``, as the CLI's tables and their notes do). The one helper of the CLI's and the logs'
    counts: before, "added 1 models" and "1 models indexed", and elsewhere "1 model(s)"."""
    return f"{f'{n:,}' if grouped else n} {noun(n, word, plural)}"


def noun(n: int, word: str, plural: str | None = None) -> str:
    """The noun :func:`counted` writes after ``n``, without the count: ``noun(1, "column")`` -> ``"column"``,
    ``noun(2, "column")`` -> ``"columns"``, for a message that lists the items in place of counting them ("missing
    columns model, score"; before, "missing column(s) model, score")."""
    return word if n == 1 else plural or word + "s"


def one_line(text: str) -> str:
    """``text`` on one line, its line breaks (and the blanks around them) one space each, as the CLI prints an error:
    a message that quotes another library's (transformers' "We couldn't connect to ...\nCheck your internet
    connection ...", a driver's) is one line of the worker's log and of ``taskspace runs``'s table."""
    import re

    return re.sub(r"\s*\n\s*", " ", str(text).strip())


def abort_reason(exc: BaseException) -> str:
    """Why a run stopped early, as its recorded error says it after "run aborted: " (``taskspace runs``): the
    exception's message on one line (:func:`one_line`), else what it was (an interrupt carries none: Ctrl-C). Before,
    an interrupted run's error read "run aborted: " and nothing more, and an encoder that could not be loaded from the
    Hub recorded transformers' two lines, the second printed at the margin of ``taskspace runs``'s table."""
    text = one_line(str(exc))
    if text:
        return text
    return "interrupted (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else type(exc).__name__


def item_error_line(err) -> str:
    """An item error of a pass (``{"file", "line", "message"}``, as a run records it) as one line, the way
    ``taskspace index``, ``taskspace runs`` and the worker's log print it: ``error: file:line: message`` (``file`` and
    ``line`` when known)."""
    if not isinstance(err, dict):
        return f"error: {one_line(err)}"
    where = str(err.get("file") or "")
    if err.get("line") is not None:
        where += f":{err['line']}"
    message = one_line(err.get("message"))
    return f"error: {where}: {message}" if where else f"error: {message}"


#: below this much free space, SQLite's "disk I/O error" (it cannot create its shared-memory file) or "database or disk
#: is full" is taken for a full disk
FULL_DISK_BYTES = 1 << 20


def full_disk_free(folder, detail: str) -> int | None:
    """The free bytes of the disk holding ``folder`` when ``detail`` (a SQLite error's text) is one a full disk gives
    and fewer than :data:`FULL_DISK_BYTES` are free; None otherwise. For the SQL store's and the embedding cache's
    SQLite files, whose usual advice (check the URL; delete the cache file) does not help there."""
    import shutil

    words = detail.lower()
    if "disk i/o error" not in words and "disk is full" not in words:
        return None
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return None
    return free if free < FULL_DISK_BYTES else None


def file_size_limit_note(detail: str, what: str = "a database file") -> str:
    """When ``detail`` (an error's text) is one a write past this process's file-size limit gives (``ulimit -f``,
    RLIMIT_FSIZE, with SIGXFSZ ignored: the write fails with EFBIG, which SQLite calls "disk I/O error" and Qdrant
    "File too large") and such a limit is set: what to say of it, beginning "; "; "" otherwise. ``what``: the file that
    grew past it (the SQL database's, the vector index's, the embedding cache's). As :func:`full_disk_free` tells a
    full disk."""
    import resource

    words = detail.lower()
    if "disk i/o error" not in words and "disk is full" not in words and "file too large" not in words:
        return ""
    try:
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    except (OSError, ValueError):
        return ""
    if limit == resource.RLIM_INFINITY:
        return ""
    return (f"; this process runs under a file-size limit of {limit} bytes (`ulimit -f` {limit // 1024}, RLIMIT_FSIZE), "
            f"which {what} grew past: lift it (`ulimit -f unlimited` in the shell or script that starts taskspace, "
            "LimitFSIZE=infinity in a systemd unit) or raise it above the size the files need, then run again")


def unwritable(path) -> str | None:
    """``path``'s folder (``"the folder F"``), or ``path`` itself, when it exists and cannot be written (a read-only
    file system, no permission); None otherwise. SQLite writes beside its file even to read it."""
    import os
    from pathlib import Path

    path = Path(path)
    for p in (path.parent, path):
        if p.exists() and not os.access(p, os.W_OK):
            return f"{'the folder ' if p.is_dir() else ''}{p}"
    return None
