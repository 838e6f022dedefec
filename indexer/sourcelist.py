"""The indexing worker's source configuration: ``$TASKSPACE_HOME/sources.toml``.

One ``[[source]]`` table per source::

    [[source]]
    spec = "/data/lm_eval_out"            # a local file or folder (lm-eval samples, tables, ...)
    format = "lm_eval"                    # optional: detected when absent

    [[source]]
    spec = "hub:my-org/my-eval-results"   # a Hub dataset repo

    [[source]]
    spec = "hub-org:open-llm-leaderboard" # every details dataset of a Hub organisation
    limit = 200                           # optional: at most this many datasets per run

    [[source]]
    spec = "/data/lm_eval_out/org__model" # reading options, as `taskspace ingest` takes them (all optional):
    metric = "acc_norm"                   # lm_eval/lighteval: the per-sample metric to read; per task, an array
                                          # of KEY and TASK=KEY: ["comet_score", "gfg_*=bert_f1"] (--metric each)
    model = "org/model"                   # lm_eval/lighteval: the model name to record (one model's runs)
    filter = "strict-match"               # lm_eval: the filter whose lines are read
    # prompts = "/data/prompts.csv"       # plain tables: the prompts file (relative: to this file's folder)

Local paths (``spec``, ``prompts``) are stored absolute. ``taskspace index --source SPEC`` and ``taskspace sources add SPEC`` append to this
file (once); ``taskspace sources remove SPEC`` takes an entry out; ``taskspace sources list`` shows them.

A spec is checked before it is saved (:func:`validate`): a path must exist and (unless it is an empty folder, which
may fill later) be a format taskspace reads, a Hub
spec must be well formed (``hub:ORG/REPO[@REVISION]``, ``hub-org:ORG``), a format must be known, a limit positive, the
reading options as ``taskspace ingest`` checks them (:func:`indexer.ingest.check_spec_options`, and for a path the
reader's own checks: an option its format does not take, a prompts file that is not there, ``model`` for a folder of
several models);
:func:`add` refuses a path inside (or holding) a configured path, which would store every outcome twice.
Every change is a read-modify-write under an exclusive lock (``sources.toml.lock``, ``fcntl``) and is written to a
uniquely named temporary file, flushed to disk and renamed over the file, so concurrent changes (several processes
or threads) lose nothing and a reader never sees a half-written file.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import tempfile
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import SOURCE_OPTIONS, ConfigError, IndexerError, arg, noun
from .ingest import hub_repo_key, is_limit, spec_kind, spec_text

log = logging.getLogger(__name__)

#: the reading options a source can carry (:meth:`indexer.ingest.Ingester.ingest_spec`'s ``options``, ``taskspace
#: ingest``'s --prompts, --model, --filter, --metric)
OPTIONS = ("prompts", "model", "filter", "metric")
_KEYS = {"spec", "format", "limit", *OPTIONS}


@dataclass(frozen=True)
class SourceSpec:
    """One configured source. One spec is one source (:func:`source_key`): its format, limit and reading options are
    how it is read, and configuring it again with others replaces them (the store keeps one result set per source, so
    two entries of one path read with two metrics would replace each other's results every pass). A reading option
    that changes what is stored (:data:`indexer.ingest.STORED_OPTIONS`: model, filter, metric) is part of the revision
    the source is stored under, and a prompts file is part of a table's fingerprint, so the next pass after a change
    reads the source again."""

    spec: str
    format: str | None = None
    limit: int | None = None
    prompts: str | None = None
    model: str | None = None
    filter: str | None = None
    #: KEY, or (``--metric`` per task) a tuple of KEY and TASK=KEY entries in
    #: :func:`~indexer.sources.scoring.metric_value_text`'s canonical order
    metric: str | tuple[str, ...] | None = None

    def __post_init__(self):
        # a pathlib.Path as the text of its path (before, kept as a Path that failed later: no attribute 'strip');
        # None, bytes or a number: the InputError naming spec
        object.__setattr__(self, "spec", spec_text(self.spec))
        if isinstance(self.prompts, os.PathLike):
            object.__setattr__(self, "prompts", os.fspath(self.prompts))

    @property
    def options(self) -> dict:
        """The reading options set, as :meth:`indexer.ingest.Ingester.ingest_spec` takes them."""
        return {k: getattr(self, k) for k in OPTIONS if getattr(self, k) is not None}

    def with_options(self, **changes) -> "SourceSpec":
        from dataclasses import replace

        return replace(self, **changes)

    def add_command(self, **changes) -> str:
        """The ``taskspace sources add`` command that configures this source so (with ``changes``)."""
        import shlex

        s = self.with_options(**changes)
        parts = ["taskspace sources add", shlex.quote(s.spec)]
        for k in ("format", "limit", *OPTIONS):
            v = getattr(s, k)
            for x in (v if isinstance(v, tuple) else () if v is None else (v,)):  # --metric KEY --metric TASK=KEY
                shown = x in changes.values() and x in SOURCE_OPTIONS.values()  # a placeholder: NAME, FILE
                parts.append(f"--{k} {x if shown else shlex.quote(str(x))}")
        return " ".join(parts)


def normalise(spec: str) -> str:
    """Local paths become absolute; ``hub:`` / ``hub-org:`` specs are written as :func:`indexer.ingest.parse_spec`
    reads them (``hub:ORG/REPO[@REVISION]``, an empty ``@REVISION`` refused, ``hub-org:ORG`` without a
    trailing ``/``)."""
    spec = spec.strip()
    if not spec:
        raise ConfigError("a source spec is empty; give a path, hub:ORG/REPO or hub-org:ORG")
    kind = spec_kind(spec)
    if kind != "path":
        from .errors import InputError
        from .ingest import parse_spec

        try:
            parsed = parse_spec(spec)
        except InputError as exc:
            raise ConfigError(f"source {spec!r}: {exc.message}; write hub:ORG/REPO[@REVISION] for a dataset or "
                              "hub-org:ORG for an organisation") from None
        return f"{parsed.kind}:{parsed.target}" + (f"@{parsed.revision}" if parsed.revision else "")
    from .sources.common import path_problem

    path = Path(spec).expanduser()
    # a loop of links, a link to nothing, a named pipe: said of the path given (before: a RuntimeError traceback for a
    # loop, and "no such file or folder" named the missing target of a link)
    if (why := path_problem(path)) is not None and why != "no such file or folder":
        raise ConfigError(f"{spec}: {why}")
    return str(path.resolve())


def source_key(spec: str) -> str:
    """What one configured source is, for :func:`add` and :func:`remove`: a normalised spec without its ``@REVISION``
    (one Hub repo is one stored source, ``hub:ORG/REPO``, whichever revision is read: two revisions configured would
    each replace the other's results every pass), a Hub repo's in lower case (the Hub's repo ids are
    case-insensitive: ``hub:Org/Repo`` is ``hub:org/repo``, whose stored source an ingest of either reads)."""
    return hub_repo_key(normalise(spec))


def reading(location: str, sources: list[SourceSpec]) -> list[SourceSpec]:
    """The configured ``sources`` whose next pass reads the stored source ``location`` (as
    :func:`indexer.ingest.stored_sources` lists it) again: the same path or a folder holding it (an lm-eval output
    folder stores one source per model folder), the same Hub repo at any revision (:func:`source_key`), or the
    ``hub-org:`` that lists the repo."""
    out = []
    for s in sources:
        kind = spec_kind(s.spec)
        if kind == "hub-org":  # the Hub's ids in any case
            hit = location.lower().startswith(f"hub:{s.spec[len('hub-org:'):]}/".lower())
        elif kind == "hub":
            hit = source_key(s.spec) == location.lower()
        else:
            key = source_key(s.spec)
            hit = (spec_kind(location) == "path" and Path(location).is_relative_to(key)
                   and (location == key or not _read_apart(Path(location), Path(key))))
        if hit:
            out.append(s)
    return out


def load(path: Path | str) -> list[SourceSpec]:
    """The configured sources (empty when the file does not exist)."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # -sig: a byte-order mark (Notepad) is no error
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix or delete the file") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8: a file saved in Latin-1 (a path with "é")
        from .records import utf8_position

        raise ConfigError(f"{path}: not UTF-8 text ({utf8_position(exc)}); TOML files are UTF-8: save it as UTF-8, or "
                          "fix or delete the file") from None
    except PermissionError as exc:  # another user's file (root's, mode 600): deleting it would lose the sources
        import os

        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}: this user (uid {os.geteuid()}) may not read "
                          "it; make it readable (`chmod a+r`, or chown it) or run taskspace as a user who can") from None
    except OSError as exc:  # a folder of that name
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}; it should be the TOML file of the "
                          "configured sources: fix or delete it") from None
    stray = sorted(set(data) - {"source"})
    if stray:  # `[[sources]]` (a typo) was ignored: "no sources configured" and every pass indexed nothing
        raise ConfigError(f"{path}: unknown {noun(len(stray), 'key')} {stray} at the top level; a source is a [[source]] table (with "
                          f"spec, and optionally format, limit, {', '.join(OPTIONS)}): fix or delete the file")
    items = data.get("source", [])
    if not isinstance(items, list):
        raise ConfigError(f"{path}: 'source' must be an array of tables ([[source]])")
    out, numbers = [], []  # the sources, and their entry numbers in the file
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict) or "spec" not in item:
            raise ConfigError(f"{path}: source #{n} needs a 'spec' (a path, hub:ORG/REPO or hub-org:ORG)")
        unknown = set(item) - _KEYS
        if unknown:
            raise ConfigError(f"{path}: source #{n} has unknown {noun(len(unknown), 'key')} {sorted(unknown)}; allowed: {sorted(_KEYS)}")
        limit = item.get("limit")
        if limit is not None and not is_limit(limit):
            raise ConfigError(f"{path}: source #{n} limit must be a positive integer")
        fmt = item.get("format")
        if fmt is not None:
            from .sources import formats

            if fmt not in formats():
                raise ConfigError(f"{path}: source #{n} format {fmt!r} is unknown; use one of {', '.join(formats())}")
        if not isinstance(item["spec"], str):  # `spec = 5` was the folder "5" under the current folder
            raise ConfigError(f"{path}: source #{n} spec must be a string (a path, hub:ORG/REPO or hub-org:ORG)")
        raw = item["spec"].strip()
        if raw and spec_kind(raw) == "path" and not Path(raw).expanduser().is_absolute():
            raw = str(path.parent / raw)  # written by hand: relative to this file's folder, not to the current one
        try:
            spec = normalise(raw)
        except ConfigError as exc:
            raise ConfigError(f"{path}: source #{n}: {exc}") from None
        options = _loaded_options(path, n, spec, item, fmt)
        got = SourceSpec(spec=spec, format=fmt, limit=limit, **options)
        first = next((k for k, o in zip(numbers, out) if o == got), None)
        if first is not None:  # `/x` and `/x/` by hand: one source, read once (before, twice every pass)
            log.warning("%s: source #%d is source #%d again (%s); it is read once", path, n, first, spec)
            continue
        key = source_key(spec)
        same = next((i for i, o in enumerate(out) if source_key(o.spec) == key), None)
        if same is not None:  # one source by hand (`hub:org/repo@v1` and `@v2`, a path with two metrics): one stored
            # source, read at the later entry, as `sources add` keeps it; before, both were read, each replacing the
            # other's results every pass
            what = {"hub": "one Hub repo", "hub-org": "one Hub organisation"}.get(spec_kind(spec), "one path")
            log.warning(
                "%s: source #%d (%s) and source #%d (%s) are %s (%s), which is one stored source: source #%d (%s) is "
                "read, source #%d is not; delete one of the two entries (`%s` leaves the one read)", path,
                numbers[same], _shown(out[same]), n, _shown(got), what, key, n, _shown(got), numbers[same],
                got.add_command())
            numbers[same], out[same] = n, got
            continue
        numbers.append(n)
        out.append(got)
    return out


def _shown(source: SourceSpec) -> str:
    """A configured source as a warning names it: its spec, then its format, limit and reading options set."""
    extra = [f"{k}={v!r}" for k in ("format", "limit", *OPTIONS) if (v := getattr(source, k)) is not None]
    return source.spec + (f" with {', '.join(extra)}" if extra else "")


def _loaded_options(path: Path, n: int, spec: str, item: dict, fmt: str | None) -> dict:
    """The reading options of the sources.toml entry ``item`` (source #``n``, ``spec``), checked as ``taskspace
    ingest`` checks them (:func:`indexer.ingest.check_spec_options`, and an option the entry's format does not take);
    a relative prompts path is relative to the file's folder. A ConfigError names the file, the entry and the fix."""
    from .ingest import check_spec_options
    from .sources.registry import check_options, find_reader

    options = {k: item[k] for k in OPTIONS if k in item}
    if isinstance(options.get("metric"), list) and options["metric"]:  # KEY and TASK=KEY entries (--metric each)
        from .sources.scoring import metric_value_text

        if not all(isinstance(x, str) and x.strip() for x in options["metric"]):
            raise ConfigError(f"{path}: source #{n} ({spec}): metric must be a non-empty string (metric = \"KEY\") or "
                              f"an array of them (metric = [\"KEY\", \"TASK=KEY\"], as `taskspace ingest --metric` "
                              f"takes them), not {options['metric']!r}; fix it in the file, or drop the key")
        options["metric"] = metric_value_text(options["metric"])
    for k, v in options.items():
        if k == "metric" and isinstance(v, tuple):
            continue
        if not isinstance(v, str) or not v.strip():
            raise ConfigError(f"{path}: source #{n} ({spec}): {k} must be a non-empty string ({k} = \"NAME\", as "
                              f"`taskspace ingest --{k}` takes it), not {v!r}; fix it in the file, or drop the key")
    if "prompts" in options and not Path(options["prompts"]).expanduser().is_absolute():
        options["prompts"] = str((path.parent / Path(options["prompts"]).expanduser()).resolve())
    try:
        check_spec_options(spec, None, options)
        if fmt is not None:
            check_options(find_reader(fmt), options)
    except ConfigError as exc:
        raise ConfigError(f"{path}: source #{n} ({spec}): {getattr(exc, 'message', None) or exc}; fix this entry "
                          f"in the file (or configure it again: `taskspace sources add {spec} ...` replaces it)") from None
    return options


def validate(source: SourceSpec, *, empty_ok: bool = True) -> SourceSpec:
    """The source with its spec normalised, or a ConfigError saying what is wrong (nothing is saved then).
    ``empty_ok``: an empty folder is a valid source (``taskspace sources add``: one results will land in); False
    for a source to be read now (``taskspace index --source``), which refuses it as ``taskspace ingest`` does."""
    from .ingest import parse_spec
    from .sources import detect_format, formats
    from .sources.registry import empty_folder

    where = f"source {source.spec!r}"
    try:
        spec = normalise(source.spec)
    except ConfigError as exc:
        raise ConfigError(f"{exc}; nothing was saved") from None
    if source.format is not None and source.format not in formats():
        raise ConfigError(f"{where}: unknown format {source.format!r}; use one of {', '.join(formats())}; nothing was saved")
    if source.limit is not None and not is_limit(source.limit):
        # the caller's words: `--limit` on the command line, `limit=` to the library (indexer.errors.arg)
        raise ConfigError(f"{where}: {arg('limit')} must be a positive integer, not {source.limit!r}; nothing was saved")
    options = source.options
    if isinstance(options.get("metric"), list):  # the library's caller may give a list (KEY, TASK=KEY)
        options["metric"] = tuple(options["metric"])
    if isinstance(options.get("prompts"), Path):  # the library's caller may give a Path
        options["prompts"] = str(options["prompts"])
    if "prompts" in options and (not isinstance(options["prompts"], str) or not options["prompts"].strip()):
        raise ConfigError(f"{where}: {arg('prompts', options['prompts'])}: give the path of a prompts file (or leave "
                          f"{arg('prompts')} out); nothing was saved")
    if isinstance(options.get("prompts"), str) and options["prompts"].strip():  # stored absolute, as a path spec is
        options["prompts"] = str(Path(options["prompts"]).expanduser().resolve())
    try:
        parsed = parse_spec(spec)
        with _unsaved():
            _check_options(parsed, source.format, options)
        if source.limit is not None and parsed.kind != "hub-org":  # it would be ignored: say so instead
            raise ConfigError(f"{where}: {arg('limit')} applies only to hub-org: sources (at most that many of the "
                              "organisation's datasets), not to a path or a hub: repo; nothing was saved")
        if parsed.kind == "path":
            if not Path(spec).exists():
                # the path once (as ingest names it): "source '/x': no such file or folder (/x)" named it twice
                raise ConfigError(f"{spec}: no such file or folder; nothing was saved (for a Hub dataset write "
                                  "hub:ORG/REPO, for an organisation hub-org:ORG)")
            p = Path(spec)
            if not empty_ok and p.is_dir() and empty_folder(p):  # to be read now: as `ingest` says of it, and how
                detect_format(spec, options)  # to configure it for later (raises: the folder is empty)
            if p.is_file() or any(p.iterdir()):  # an empty folder may fill later
                if source.format is None:
                    detect_format(spec, options)
                else:  # the reader named must know the path: a wrong --format failed every later pass
                    _check_format(spec, source.format)
                if options:  # as a pass reads it: an option the format does not take, a missing prompts file,
                    with _unsaved():  # --model for several models
                        _check_path_options(spec, source.format, options)
    except _Unsaved as exc:  # a check of the options, in ingest's words: said of this source
        raise ConfigError(f"{where}: {exc.args[0]}; nothing was saved") from None
    except ConfigError:
        raise
    except IndexerError as exc:
        later = (f"; to configure a folder that results will land in later, run `taskspace sources add {spec}`"
                 if not empty_ok and Path(spec).is_dir() and empty_folder(Path(spec)) else "")
        said = getattr(exc, "message", None) or str(exc)
        file = getattr(exc, "file", None)  # a file in the source (its `outcomes.csv.zst`): named, the source's path not
        if file is not None and Path(file) != Path(spec):  # twice (before, the file was not named: "source 'v':
            said = str(exc)  # compressed with zstd ...")
        raise ConfigError(f"{where}: {said}{later}; nothing was saved") from None
    if "metric" in options:  # one canonical form (a key alone stays a string), so one read compares equal
        from .sources.scoring import metric_value_text

        options["metric"] = metric_value_text(options["metric"])
    return SourceSpec(spec=spec, format=source.format, limit=source.limit, **options)


class _Unsaved(Exception):
    """An option check's error (its message), for :func:`validate` to say of the source with "nothing was saved"."""


@contextlib.contextmanager
def _unsaved():
    try:
        yield
    except IndexerError as exc:
        raise _Unsaved(getattr(exc, "message", None) or str(exc)) from None


def _check_options(parsed, format: str | None, options: dict) -> None:
    """``taskspace ingest``'s checks of the reading options that need no reading (:func:`indexer.ingest.check_spec_options`,
    and an option the named format does not take)."""
    from .ingest import check_spec_options
    from .sources.registry import check_options, find_reader

    check_spec_options(parsed, None, options)
    if format is not None and find_reader(format) is not None:
        check_options(find_reader(format), options)


def _check_path_options(spec: str, format: str | None, options: dict) -> None:
    """The reader's checks of the reading options of the local source ``spec``, as a pass meets them before reading
    (:func:`indexer.sources.source_infos`: an option the format does not take, a prompts file that is not there; and
    ``model`` for a folder of several models' runs, :func:`indexer.ingest._one_model_for`)."""
    from .ingest import _one_model_for
    from .sources import source_infos

    infos = source_infos(spec, format, **options)
    if options.get("model") and infos is not None:
        _one_model_for(options["model"], spec, [i.location for i in infos])


def _check_format(spec: str, format: str) -> None:
    """An InputError when the reader of ``format`` does not recognise the local path ``spec`` (it would not read it
    either), saying what that format's files look like and, when detection knows, what the path is instead."""
    from .errors import InputError
    from .sources import detect_format
    from .sources.registry import Match, get_reader

    reader = get_reader(format)
    if reader.recognise(Path(spec)) > Match.NONE:
        return
    why = reader.why_not(Path(spec)) if reader.why_not is not None else None
    try:
        other = detect_format(spec)
    except IndexerError:
        other = None
    # the caller's words: `--format` on the command line, `format=` to the library (indexer.errors.arg)
    instead = (f"; it reads as {other} (drop {arg('format')}, or give {arg('format', other, quote=False)})"
               if other and other != format else "")
    raise InputError(why or f"not a {format} source: expected {reader.layout}{instead}")


def _unwritable(path: Path, exc: OSError) -> ConfigError:
    """The error for a configuration file (or its lock or temporary file) that cannot be written: a home on a
    read-only file system or without write permission. Nothing was changed."""
    import errno

    why = exc.strerror or type(exc).__name__
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(path) else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):  # a full disk (or quota): the folder is writable, room is missing
        return ConfigError(f"{path}: cannot be written: {why}{where}; nothing was saved. The disk holding "
                           "TASKSPACE_HOME is full: free some space there, or set TASKSPACE_HOME to a folder with room")
    return ConfigError(f"{path}: cannot be written: {why}{where}; nothing was saved. The sources list is kept in "
                       "TASKSPACE_HOME: make that folder writable, or set TASKSPACE_HOME to a folder you can write")


@contextlib.contextmanager
def _locked(path: Path):
    """Hold the exclusive lock of the configuration ``path`` (waits for another holder). A ConfigError when the lock
    file cannot be created (a read-only home)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise _unwritable(path, exc) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def save(path: Path, sources: list[SourceSpec]) -> None:
    """Write the configuration atomically: a uniquely named temporary file beside it, flushed, renamed over it.
    (Callers changing the file hold :func:`_locked`; :func:`add` and :func:`remove` do.)"""
    import tomli_w

    doc = {"source": [{k: list(v) if isinstance(v, tuple) else v for k, v in asdict(s).items() if v is not None}
                      for s in sources]}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise _unwritable(path, exc) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(tomli_w.dumps(doc))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # a full disk, a file that may not be replaced
            raise _unwritable(path, exc) from exc
        raise
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def add(path: Path | str, specs: list[SourceSpec], *, check: bool = True, empty_ok: bool = True) -> list[SourceSpec]:
    """Append sources not configured yet (same :func:`source_key` = same source: a new revision, format, limit or
    reading options replace the old, in its place). Each is validated first (``check``, :func:`validate`; ``empty_ok``
    as there; a source configured already may be an empty folder whatever it says, as a pass without ``--source``
    shows it ``empty``): one bad spec saves none of them. Returns the configuration. ``specs``: :class:`SourceSpec` objects,
    or specs (a string or a ``pathlib.Path``) read with the defaults; one of them alone is a list of one."""
    path = Path(path)
    if isinstance(specs, (SourceSpec, str, os.PathLike)):
        specs = [specs]
    specs = [s if isinstance(s, SourceSpec) else SourceSpec(s) for s in specs]
    configured = set() if empty_ok or not check else {source_key(s.spec) for s in load(path)}
    new = [validate(s, empty_ok=empty_ok or _key_or_none(s.spec) in configured) if check
           else s.with_options(spec=normalise(s.spec)) for s in specs]
    with _locked(path):
        current = load(path)
        by_key = {source_key(s.spec): s for s in current}
        for s in new:
            _refuse_nested(s, list(by_key.values()), path)
            by_key[source_key(s.spec)] = s
        merged = list(by_key.values())
        if merged != current:
            save(path, merged)
    return merged


def _key_or_none(spec: str) -> str | None:
    """:func:`source_key` of ``spec``, None for a spec it refuses (:func:`validate` says what is wrong with it)."""
    try:
        return source_key(spec)
    except ConfigError:
        return None


def nesting(a: str, b: str) -> str | None:
    """How local path ``a`` relates to local path ``b`` as sources: "inside", "contains", or None (also for equal paths,
    Hub specs, and nested paths that read no file in common: :func:`_read_apart`)."""
    if a == b or spec_kind(a) != "path" or spec_kind(b) != "path":
        return None
    pa, pb = Path(a), Path(b)
    how = "inside" if pa.is_relative_to(pb) else "contains" if pb.is_relative_to(pa) else None
    return None if how is None or _read_apart(pa, pb) else how


def _read_apart(a: Path, b: Path) -> bool:
    """Whether two nested local sources read no file in common because a plain table is one of them: a table source
    reads its outcomes and prompts files only (a folder's, in the folder itself), and no other format reads those.
    Before, an lm-eval run in a subfolder of a table folder (or a second table in one) was refused as "part of the
    stored source" whose outcomes "are stored with it", while the table source had not read it."""
    ta, tb = _table_files_read(a), _table_files_read(b)
    if ta is None and tb is None:
        return False
    return ta is None or tb is None or not (ta & tb)


def _table_files_read(path: Path) -> set[Path] | None:
    """The files a local path reads as a plain table source (its outcomes and prompts files, resolved); None when it
    is no table source (another format, or it cannot be told: the nesting rule then holds as for any folder)."""
    from .errors import IndexerError
    from .sources import detect_format
    from .sources.tables import resolve_table_files

    try:
        if detect_format(path) != "table":
            return None
        return {f.resolve() for f in resolve_table_files(path)}
    except (IndexerError, OSError):
        return None


def _refuse_nested(source: SourceSpec, current: list[SourceSpec], path: Path) -> None:
    """ConfigError when a local path is inside (or holds) a configured source: the files of both would be read as two
    sources and every outcome stored twice."""
    for cur in current:
        how = nesting(source.spec, cur.spec)
        if how == "inside":
            raise ConfigError(f"source {source.spec!r} is inside the configured source {cur.spec!r}, which reads it "
                              "already: as a second source its outcomes would be stored twice; nothing was saved "
                              f"(to configure this one instead, `taskspace sources remove {cur.spec}` first)")
        if how == "contains":
            raise ConfigError(f"source {source.spec!r} holds the configured source {cur.spec!r}: its outcomes would be "
                              "stored twice; nothing was saved (to configure the folder instead, `taskspace sources "
                              f"remove {cur.spec}` first)")


def remove(path: Path | str, spec: str) -> SourceSpec:
    """Take the source ``spec`` (as given or as stored: a path is matched absolute; a string or a ``pathlib.Path``) out
    of the configuration; returns it. ConfigError when it is not configured. Its stored results stay in the database."""
    path, spec = Path(path), spec_text(spec)
    key = source_key(spec)
    with _locked(path):
        current = load(path)
        kept = [s for s in current if s.spec != spec.strip() and source_key(s.spec) != key]
        if len(kept) == len(current):
            known = ", ".join(s.spec for s in current) or "none"
            raise ConfigError(f"source {spec!r} is not configured in {path} (configured: {known})")
        save(path, kept)
    return next(s for s in current if s not in kept)

