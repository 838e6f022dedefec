"""Sources -> the SQL store: ``ingest(spec)`` reads every source a spec names and stores each whole or not at all.

Specs:

- a local file or folder (format detected, or ``format=``): plain tables, lm-eval output, lighteval details;
- ``hub:ORG/REPO`` or ``hub:ORG/REPO@REVISION``: a Hub dataset repo (leaderboard details, lm-eval output pushed
  to the Hub, a plain table). Its commit sha is the source revision: a repo whose sha is already ingested is
  skipped before anything is downloaded, and only the files needed (the latest run per task) are fetched;
- ``hub-org:ORG``: the organisation's datasets (for ``open-llm-leaderboard``: its ``*-details`` repos; for
  ``open-llm-leaderboard-old``: its ``details_*`` repos), at most ``limit`` of them.

:func:`parse_spec` is the one place a spec string is resolved and :meth:`Ingester.ingest_spec` the one place it
is dispatched (``ingest()`` and the indexing pass both use them). Which reader reads a path, and which files
of a Hub repo are downloaded, is the reader registry's business (:mod:`indexer.sources.registry`).

A source is one store transaction; a failure (bad input rejected by the store, a Hub error, a file that cannot be
read at all, even an unexpected bug in a reader) is recorded against that source and the next one is tried. Rows
a reader rejects come back as errors (file, line, what) and the rest of the source is stored.

Quarantine: a new revision of a source already stored that reads with errors and would keep fewer than
``1 - QUARANTINE_LOSS`` (90%) of the outcome cells the stored revision holds (rows rejected, or rows lost after the
point where a truncated file breaks off) is not stored: the stored revision keeps serving, the source is counted in
``IngestSummary.quarantined`` with an error saying why, and ``accept_partial=True`` (``--accept-partial``) stores it
anyway. A revision that reads cleanly is stored whatever its size (the source's owner may drop models). Afterwards Hub metadata is fetched for the ingested models whose
names are Hub repo ids and that have none yet (plain names such as API models are skipped silently).
The :class:`IngestSummary` counts what this ingest added.
"""

from __future__ import annotations

import logging
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import NamedTuple

from .errors import (READING_FOR, ConfigError, HiddenRepoError, HubError, IndexerError, InputError, NotFoundError,
                     accept_partial_advice, arg, counted, noun, once_more_if_lost, source_hint, traceback_advice)
from .records import RowError, SourceBatch, SourceInfo, ToDict

log = logging.getLogger(__name__)

#: a new revision that reads with errors and loses more than this share of the stored revision's outcome cells is
#: quarantined (not stored; the stored revision keeps serving) unless accepted with ``--accept-partial``
QUARANTINE_LOSS = 0.10
#: how many models whose Hub metadata was never fetched (a failing Hub, an offline pass, ``--no-metadata``) an ingest or
#: pass asks for besides the models of the sources it stores (:meth:`Ingester.fetch_model_metadata`)
METADATA_BACKLOG = 200
#: Hub metadata fetched longer ago than this is asked again by the next ingest or pass (within the backlog's bound,
#: after the never-fetched models, oldest first): a licence, size or gate changed on the Hub reaches the index as it
#: reaches a fresh one. None: never again (once per model)
METADATA_MAX_AGE = timedelta(days=7)

#: reader options that change what a source stores (the model name recorded, the filter and metric read, a table's
#: shape): a source read with any of them is stored under a revision that names them (:func:`read_revision`), so
#: reading it again with other options re-reads it and replaces its results; read with none, the revision is the
#: content's (or the Hub commit's) alone, as before these options counted
STORED_OPTIONS = ("model", "filter", "metric", "shape")

LEADERBOARD_ORGS = {"open-llm-leaderboard": ("search", "-details"), "open-llm-leaderboard-old": ("search", "details_")}


@dataclass
class IngestSummary(ToDict):
    models: int = 0  # model rows this ingest created
    prompts: int = 0  # prompt rows this ingest created
    pruned: int = 0  # benchmark memberships of prompts a new revision edited, moved or dropped, removed
    outcomes: int = 0  # outcome cells stored (after averaging copies)
    skipped: int = 0  # sources already ingested at this revision (nothing downloaded or changed)
    sources: int = 0  # sources stored (new or replaced)
    duplicates: int = 0  # input rows repeated with the same outcome (dropped without error)
    metadata: int = 0  # models whose Hub metadata was fetched
    hub_failures: int = 0  # sources (or listings) that could not be fetched because a Hub request failed
    hub_missing: int = 0  # sources (or listings) the Hub does not have (a repo, revision or file it answers 404 to)
    quarantined: list[str] = field(default_factory=list)  # sources whose new revision was not stored (see QUARANTINE_LOSS)
    errors: list[RowError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 when nothing was rejected; 4 (:class:`HubError`'s code) when a Hub request failed, so some source could
        not be fetched; else 1 when some input was rejected (in every case the rest was still ingested)."""
        if self.hub_failures:
            return HubError.exit_code
        return 1 if self.errors else 0

    def as_dict(self) -> dict:
        return {
            "models": self.models, "prompts": self.prompts, "outcomes": self.outcomes, "skipped": self.skipped,
            "sources": self.sources, "duplicates": self.duplicates, "metadata": self.metadata,
            "hub_failures": self.hub_failures, "hub_missing": self.hub_missing, "quarantined": list(self.quarantined),
            "errors": [e.as_dict() for e in self.errors], "warnings": list(self.warnings),
        }

    def add_error(self, exc: BaseException, where: str) -> None:
        """Record an exception as the error of the source or listing ``where`` (counted as a Hub failure when it is
        a :class:`HubError`, as not found on the Hub when a :class:`NotFoundError`: only the Hub's are recorded here).
        An :class:`InputError` that already names its file keeps its file and line, and its message is not prefixed
        with the location a second time."""
        if isinstance(exc, HubError):
            self.hub_failures += 1
        elif isinstance(exc, NotFoundError):
            self.hub_missing += 1
        self.errors.append(row_error(exc, where))


def read_revision(revision: str | None, options: dict) -> str | None:
    """The revision a source read with ``options`` is stored under: ``revision`` itself when no option of
    :data:`STORED_OPTIONS` is set, else ``<revision>+read:<hash of those options>``. None stays None (the store
    then fingerprints the outcomes read, which differ with the options anyway)."""
    from .sources.scoring import metric_value_text

    # (metric: one canonical text, so `--metric a --metric t=b` and `--metric t=b --metric a` are one read, and a
    # single KEY the string it always was: a source stored before per-task keys is not read again)
    used = {k: str(metric_value_text(options[k]) if k == "metric" else options[k]) for k in STORED_OPTIONS
            if options.get(k) not in (None, "")}
    if revision is None or not used:
        return revision
    import hashlib
    import json

    return f"{revision}+read:" + hashlib.sha256(json.dumps(used, sort_keys=True).encode()).hexdigest()[:16]


def missing_path_hint(path: str) -> str:
    """What to add to "no such file or folder" for the source path ``path``: the ``hub:`` hint when the path could
    have been meant as a Hub dataset (``ORG/NAME`` as typed, relative), else nothing (``/data/x`` never was one)."""
    from .hub import is_valid_repo_id

    text = str(path)
    return f" (for a Hub dataset write hub:{text})" if is_valid_repo_id(text) else ""


def row_error(exc: BaseException, where: str) -> RowError:
    """The :class:`RowError` of an exception met while reading the source ``where``: the error's own file and line
    when it names them, its message without the location prefix its ``str`` carries (``where: where: ...`` never)."""
    file = getattr(exc, "file", None) or getattr(exc, "item", None) or where
    message = getattr(exc, "message", None) if isinstance(exc, InputError) else None
    return RowError(file, getattr(exc, "line", None), message or str(exc))


class Spec(NamedTuple):
    """What a source spec names: ``kind`` "path" (``target`` a local path), "hub" (``target`` ORG/REPO, at
    ``revision`` or the newest commit) or "hub-org" (``target`` ORG)."""

    kind: str
    target: str
    revision: str | None = None


def spec_text(spec, param: str = "spec", *, hub: bool = True) -> str:
    """A source spec (or a stored source's location) as a Python caller may give it: a string, or a path object
    (``pathlib.Path``, any ``os.PathLike``) as the text of its path; anything else (None, bytes, a number) is an
    InputError naming ``param`` (that says a Hub spec is one too, unless ``hub`` is False). Before, :func:`drop_source` and :func:`indexer.publish.pull` given a ``Path`` or None
    failed inside (AttributeError: no attribute 'startswith', or the database's "type 'PosixPath' is not supported"),
    and :func:`ingest` read ``None`` as a folder named "None"."""
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        said = " or hub:ORG/NAME[@REVISION]" if hub else ""  # hub: False, a local path alone (read_sources)
        raise InputError(f"{param} must be a path (a string or a pathlib.Path){said}, not {type(spec).__name__}",
                         item=param)
    return spec


def spec_kind(spec: str) -> str:
    """"hub-org", "hub" or "path", from the spec's prefix alone (no validation: :func:`parse_spec` does that)."""
    if spec.startswith("hub-org:"):
        return "hub-org"
    return "hub" if spec.startswith("hub:") else "path"


def hub_repo_key(spec: str) -> str:
    """A Hub spec's repo without its ``@REVISION``, in lower case (the Hub's repo ids are case-insensitive:
    ``hub:Org/Repo@v2`` is ``hub:org/repo``); any other spec as it is. What one configured source is
    (:func:`indexer.sourcelist.source_key`) and which dataset a pull came from (:mod:`indexer.publish`)."""
    return spec.partition("@")[0].lower() if spec_kind(spec) == "hub" else spec


def is_limit(value) -> bool:
    """Whether ``value`` is a ``hub-org:`` limit (at most that many datasets): a whole number >= 1. A bool is not
    one, though Python counts it an int (``limit = true`` in sources.toml); 0 listed nothing, a negative one failed
    inside huggingface_hub."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


#: what the REVISION of ``hub:ORG/REPO@REVISION`` is (:func:`indexer.hub.is_valid_revision`)
REVISION_FORMS = ("a revision is a commit sha (40 hex digits), refs/pr/N, or a branch or tag name (letters, digits, "
                  "._- and / between parts)")


def parse_spec(spec: str) -> Spec:
    """The :class:`Spec` of a path, ``hub:ORG/REPO[@REVISION]`` or ``hub-org:ORG``; InputError when malformed (blank
    too: ``Path("")`` is the current folder, so `taskspace ingest "$UNSET"` read whatever lay there)."""
    if not spec.strip():
        raise InputError("a source spec is empty; give a path, hub:ORG/REPO or hub-org:ORG (an empty path is not "
                         "the current folder: write . for that)")
    kind = spec_kind(spec)
    if kind == "hub-org":
        org = spec[len("hub-org:"):].strip("/")
        if not org or "/" in org or not re.fullmatch(r"[A-Za-z0-9][\w.-]{0,95}", org):
            raise InputError("hub-org: needs an organisation name, e.g. hub-org:open-llm-leaderboard", item=spec)
        return Spec("hub-org", org)
    if kind == "hub":
        from .hub import is_valid_repo_id, is_valid_revision

        target, at, rev = spec[len("hub:"):].partition("@")
        if not is_valid_repo_id(target):
            raise InputError("hub: needs a dataset repo id ORG/NAME (optionally @REVISION)", item=spec)
        if at and not rev:  # `hub:org/repo@$REV`, REV unset: before, read as no revision (the default branch)
            raise InputError(f"the @ is followed by no revision; {REVISION_FORMS}, written after the @ "
                             "(hub:ORG/REPO@main); drop the @ to read the repo's default branch", item=spec)
        if rev and not is_valid_revision(rev):
            raise InputError("@REVISION must be a commit sha (40 hex digits), refs/pr/N, or a branch or tag name "
                             "(letters, digits, ._- and / between parts)", item=spec)
        return Spec("hub", target, rev or None)
    return Spec("path", spec)


def check_spec_options(spec: str | Spec, limit: int | None, options: dict) -> Spec:
    """The :class:`Spec` of ``spec``, or a ConfigError (exit 2) when ``limit`` or the reading ``options`` cannot go with
    it, before anything is listed or downloaded: a limit that is no positive integer or is given for a path or a
    ``hub:`` repo (it would be ignored), a blank ``--model``/``--filter``/``--metric``, a ``--model`` for a
    ``hub-org:`` (every repo of the listing would be stored as that one model). :meth:`Ingester.ingest_spec` and
    :func:`indexer.sourcelist.validate` (``taskspace sources add``) both check a source so."""
    if limit is not None and not is_limit(limit):
        raise ConfigError(f"{arg('limit', limit)}: must be a positive integer (at most that many datasets of a "
                          "hub-org:)")
    from .sources.registry import check_option_values

    check_option_values(options)  # a blank --model/--filter/--metric: before any listing or download
    spec = spec if isinstance(spec, Spec) else parse_spec(spec)
    if spec.kind == "hub-org" and options.get("model"):  # every repo of the listing would be stored as it
        raise ConfigError(f"{arg('model', options['model'])} names one model, but hub-org:{spec.target} lists the "
                          "datasets of many: all would be stored as that one model; ingest one repo with "
                          f"{arg('model')} (hub:ORG/REPO), or drop {arg('model')}")
    if limit is not None and spec.kind != "hub-org":  # it would be ignored: say so instead
        raise ConfigError(f"{arg('limit')} applies only to hub-org: sources (at most that many of the "
                          f"organisation's datasets), not to a path or a hub: repo; drop {arg('limit')}")
    return spec


def _one_model_for(model: str, path: str, locations: list[str]) -> None:
    """``--model NAME`` names the model of one source: a ConfigError (exit 2, before anything is stored) when ``path``
    holds several (an lm-eval output folder of several model folders, lighteval details of several models), whose
    outcomes would all be stored as that one model."""
    if len(locations) > 1:
        names = ", ".join(Path(loc).name for loc in locations[:4]) + (", ..." if len(locations) > 4 else "")
        raise ConfigError(f"{arg('model', model)} names one model, but {path} holds the runs of {len(locations)} "
                          f"models ({names}): all would be stored as {model!r}; ingest one model's folder with "
                          f"{arg('model')}, or drop {arg('model')}")


def leaderboard_model_id(repo_id: str) -> str | None:
    """The model a leaderboard details repo is about: ``open-llm-leaderboard/<org>__<model>-details`` and
    ``open-llm-leaderboard-old/details_<org>__<model>`` -> ``org/model``; None for other repos."""
    name = repo_id.split("/", 1)[1]
    m = re.fullmatch(r"(.*)-details", name) or re.fullmatch(r"details_(.*)", name)
    if not m or not repo_id.startswith("open-llm-leaderboard"):
        return None
    return m.group(1).replace("__", "/", 1)


class Ingester:
    """One ingest run over a store (and a Hub client, made on first use)."""

    def __init__(self, store, *, hub=None, fetch_metadata: bool = True, accept_partial: bool = False,
                 again: str | None = None):
        self.store = store
        self._hub = hub
        self._again = again  # what a Hub failure's error says happens next (HubClient's ``again``)
        self.fetch_metadata = fetch_metadata
        self.accept_partial = accept_partial
        self.summary = IngestSummary()
        self._models: set[str] = set()
        self._format: str | None = None  # the reader named for the spec being ingested (ingest_spec)
        self._sources = None  # the home's configured Hub sources (their parse_spec), False: unreadable; read once

    @property
    def hub(self):
        if self._hub is None:
            from .hub import HubClient

            self._hub = HubClient()
        if self._again is not None:
            self._hub.again = self._again
        return self._hub

    # -- one spec ---------------------------------------------------------------------------------------

    def ingest_spec(self, spec: str | Spec, format: str | None = None, *, limit: int | None = None,
                    **options) -> None:
        """Ingest what a spec (a string, or its :func:`parse_spec`) names; ``limit``: at most that many
        datasets of a ``hub-org:`` (a positive integer: 0 listed nothing, a negative one failed inside
        huggingface_hub). ``options`` go to the readers."""
        spec = check_spec_options(spec, limit, options)
        where = spec.target if spec.kind == "path" else f"{spec.kind}:{spec.target}"
        self._format = format  # the source's reader, as a quarantine's advice names it (errors.accept_partial_advice)
        with self._guard(where):
            if spec.kind == "path":
                self.ingest_path(spec.target, format, **options)
            elif spec.kind == "hub":
                self.ingest_hub_repo(spec.target, spec.revision, format, **options)
            else:
                self.ingest_hub_org(spec.target, limit, format, **options)

    @contextmanager
    def _guard(self, where: str):
        """One source's unexpected failure (a bug in a reader, a library raising what it should not) costs only that
        source: it becomes an error line and the next source is read. Library errors pass (the caller records them)."""
        try:
            yield
        except IndexerError:
            raise
        except Exception as exc:  # noqa: BLE001 - recorded, with the traceback in the debug log
            # a reader's model folder that failed (sources.common.each_isolated): each is named, the others were read
            for at, e in [(getattr(exc, "source_where", where), exc), *getattr(exc, "also_failed", [])]:
                if isinstance(e, PermissionError):  # a file or folder this user may not read: no bug, the user's fix
                    self.summary.errors.append(RowError(e.filename or at, None,
                                                        unreadable_message(e, self._stored_or_none(at))))
                    continue
                log.info("unexpected error while reading %s", at, exc_info=e)  # -v shows it, as the line says
                self.summary.errors.append(RowError(at, None, f"cannot be read: {type(e).__name__}: {e} (an "
                                                    "unexpected error: please report it; "
                                                    f"{traceback_advice(log.name)}; this source is skipped, the "
                                                    "others are read)"))

    # -- one source -------------------------------------------------------------------------------------

    def store_batch(self, batch: SourceBatch) -> None:
        s = self.summary
        batch = drop_unusable_rows(batch)
        # its names' aliases read once more on a fresh connection when the database ended the session (a restart, a
        # failover), as the store below
        batch = once_more_if_lost(drop_conflicts_between_names, batch, self.store, log=log,
                                  said=lambda exc: f"{batch.source.location}: {exc}; looking its names up once more")
        s.errors.extend(batch.errors)
        s.warnings.extend(batch.warnings)
        if (repeated := repeated_texts(batch)) is not None:
            s.warnings.append(repeated)
        s.duplicates += batch.skipped
        why = None if self.accept_partial or not batch.errors else self._quarantine_reason(batch)
        if why is not None:
            s.quarantined.append(batch.source.location)
            s.errors.append(RowError(batch.source.location, None, why))
            return
        if batch.n_outcomes == 0:
            if not batch.errors:
                s.warnings.append(f"{batch.source.location}: no outcomes to store")
            return
        try:
            # the database ended the session (a restart, a failover): nothing of it was written, and the batch is
            # read; once more on a fresh connection, so the pass does not fit the prior and calibration without it
            res = once_more_if_lost(self.store.ingest, batch, log=log,
                                    said=lambda exc: f"{batch.source.location}: {exc}; storing it once more")
        except IndexerError as exc:
            # a write's StoreError says "nothing of it was saved" already: said once
            said = "" if getattr(exc, "nothing_saved", False) else " (nothing of it was written)"
            s.errors.append(RowError(batch.source.location, getattr(exc, "line", None),
                                     f"source not stored{said}: {exc}"))
            return
        if res.skipped:
            s.skipped += 1
            return
        s.sources += 1
        s.warnings.extend(res.warnings)
        s.models += res.models
        s.prompts += res.prompts
        s.pruned += res.pruned
        s.outcomes += res.outcomes
        self._models.update(o.model for o in batch.outcomes)
        if batch.table is not None:
            self._models.update(batch.table.models)

    def _read_stored(self, read, *args):
        """``read(*args)``, a read of what is stored before a source is read or stored (its revision, the stored local
        sources), once more on a fresh connection when the database ended the session under it (a restart or failover,
        ``pg_terminate_backend``), as a source's ingest is; nothing is counted before it returns. Before, the
        ConnectionLostError left the ingest and failed the pass, even one with nothing new."""
        return once_more_if_lost(read, *args, log=log,
                                 said=lambda exc: f"{exc}; reading it once more on a fresh connection")

    def _stored_or_none(self, location: str):
        """The stored revision of ``location`` (a SourceRecord with outcomes), or None: none stored, or the database
        could not say (an error line about a source is not to fail on a second error)."""
        try:
            known = self._read_stored(self.store.get_source, location)
        except IndexerError:
            return None
        return known if known is not None and known.n_outcomes else None

    def _quarantine_reason(self, batch: SourceBatch) -> str | None:
        """Why this new revision (read with errors) must not replace the stored one, or None (see QUARANTINE_LOSS)."""
        known = self._read_stored(self.store.get_source, batch.source.location)
        if known is None or not known.n_outcomes or (batch.source.revision is not None
                                                     and known.revision == batch.source.revision):
            return None
        kept = cell_count(batch)
        if kept >= (1 - QUARANTINE_LOSS) * known.n_outcomes:
            return None
        lost = 1 - kept / known.n_outcomes
        return (f"new revision quarantined: it reads with errors ({len(batch.errors)} listed) and would keep {kept} of "
                f"the {known.n_outcomes} outcome cells stored ({lost:.0%} lost; the limit is {QUARANTINE_LOSS:.0%}); the "
                "stored revision keeps serving. Fix the source (a file still being written? re-copy it), or store it "
                f"anyway with {accept_partial_advice(batch.source.location, self._format)}")

    def _unchanged(self, location: str, revision: str | None) -> bool:
        known = self._read_stored(self.store.get_source, location)
        return known is not None and revision is not None and known.revision == revision

    def _refuse_nested(self, infos: list[SourceInfo], path: str) -> None:
        """InputError when a new local source is inside a stored local source (a file of an ingested folder) or holds
        one: its files would be read as a second source and every outcome stored twice. A source stored already is
        read as before (a database that holds both from before this rule keeps ingesting them)."""
        from .sourcelist import nesting

        mine = [i.location for i in infos if i.location.startswith("/")]
        if not mine:
            return
        stored = [s.location for s in self._read_stored(self.store.list_sources)
                  if s.revision is not None and s.location.startswith("/")]
        known = set(stored)
        for loc in mine:
            if loc in known:  # a source stored already (beside another, from before this rule): read as it always was
                continue
            for other in stored:
                how = nesting(loc, other)
                if how == "inside":
                    raise InputError(f"part of the stored source {other} (its outcomes are stored with it); ingested "
                                     "alone they would be stored twice: nothing is stored (ingest "
                                     f"{other} to read a change)", file=str(path))
                if how == "contains":
                    raise InputError(f"holds the stored source {other}; ingested as one source its outcomes would be "
                                     "stored twice: nothing is stored (ingest the part stored before, or drop that "
                                     f"source's results first: `taskspace sources drop {other}`)", file=str(path))

    def ingest_path(self, path: str, format: str | None = None, **options) -> None:
        from .sources import read_sources, source_infos

        from .sources.common import path_problem

        if (why := path_problem(path)) is not None:
            hint = missing_path_hint(path) if why == "no such file or folder" else ""
            raise InputError(why + hint, file=str(path))
        try:
            try:
                infos = source_infos(path, format, **options)  # None: a reader that knows them only by reading
            except PermissionError:  # a file of one of its folders this user may not read: known by reading, each
                infos = None  # folder on its own (the others stored, that one an error naming the file)
            self._refuse_nested(infos or [], path)
            if options.get("model") and infos is not None:
                _one_model_for(options["model"], path, [i.location for i in infos])
            if infos and all(self._unchanged(i.location, read_revision(i.revision, options)) for i in infos):
                self.summary.skipped += len(infos)  # nothing to read
                return
            batches = read_sources(path, format, **options)
            if options.get("model") and infos is None:  # known only by reading: read all before storing any
                batches = list(batches)
                _one_model_for(options["model"], path, [b.source.location for b in batches])
            # the fingerprint taken before reading is the one stored: a file rewritten while it was read (the reader
            # fingerprints it again after) is then read again by the next pass instead of skipped as unchanged
            before = {i.location: i.revision for i in infos or []}
            for batch in batches:
                if infos is None:
                    self._refuse_nested([batch.source], path)
                revision = before.get(batch.source.location, batch.source.revision)
                batch.source = replace(batch.source, revision=read_revision(revision, options))
                self.store_batch(batch)
        except InputError as exc:
            self.summary.add_error(exc, str(path))

    def ingest_hub_repo(self, repo_id: str, revision: str | None = None, format: str | None = None,
                        listed: bool = False, **options) -> None:
        """One Hub dataset repo (``hub:ORG/REPO[@REV]``). A reading option its format does not take is a usage error
        (:func:`indexer.sources.check_options`) before anything is downloaded; ``listed`` (one repo of a ``hub-org:``
        listing, whose options are for the repos that take them): an error line for this repo instead. Holds the
        repo's Hub cache (:meth:`indexer.hub.HubClient.using`) from the download to the reading."""
        with self.hub.using(repo_id, "dataset"):
            self._ingest_hub_repo(repo_id, revision, format, listed, **options)

    def _ingest_hub_repo(self, repo_id: str, revision: str | None, format: str | None, listed: bool,
                         **options) -> None:
        from .hub import HubOutageError, RevisionGoneError, is_safe_repo_path, is_valid_repo_id
        from .sources import check_options, find_reader, plan_files, read_source

        location = self._hub_location(repo_id)
        s = self.summary
        outage = None  # the Hub's outage, when the repo is read from this home's Hub cache instead
        relisted = False  # listed once more, the commit first listed gone before its files were downloaded
        while True:
            try:
                snap = (self.hub.repo_snapshot(repo_id, revision) if outage is None else
                        self.hub.cached_snapshot(repo_id, revision, "dataset"))
                if snap.hub_id and snap.hub_id.lower() != repo_id.lower():  # renamed: the Hub redirects the old id;
                    # stored under the id it has now, which its next ingest finds, so the two names are not two
                    # sources holding the same outcomes
                    location = self._hub_location(snap.hub_id)
                    s.warnings.append(f"hub:{repo_id} is hub:{snap.hub_id} on the Hub now (renamed): stored as "
                                      f"{location}; name it so where it is configured (`taskspace sources add "
                                      f"hub:{snap.hub_id}`, then `sources remove hub:{repo_id}`)")
                    repo_id = snap.hub_id
                stored_as = read_revision(snap.sha, options)  # the commit, and the read options that change the result
                if self._unchanged(location, stored_as):
                    self._said_cached(location, outage, snap)
                    s.skipped += 1
                    self.store.record_checked(location, revision=stored_as)
                    return
                unsafe = [f for f in snap.files if not is_safe_repo_path(f)]
                if unsafe:
                    s.errors.append(RowError(location, None, f"the repo lists an unsafe file name {unsafe[0][:120]!r} "
                                             "(a path that could leave the download folder); nothing of this source is "
                                             "downloaded"))
                    return
                fmt, files = plan_files(list(snap.files))
                if format and format != fmt and find_reader(format) is not None:  # the files the named format reads
                    fmt, files = format, find_reader(format).plan_hub_files(list(snap.files))[1]
                    if not files:
                        s.errors.append(RowError(location, None, f"no files of format {format} in this repo "
                                                 f"({arg('format', format)}); nothing to read"))
                        return
                fmt = format or fmt
                if fmt is None:
                    from .dataset import SPACES, records_not_results

                    rev = f"@{revision}" if revision else ""
                    s.errors.append(RowError(location, None, records_not_results("repo", f"hub:{repo_id}{rev}")
                                             if SPACES in snap.files else "no lm-eval samples, lighteval details or "
                                             "plain table files in this repo; nothing to read"))
                    return
                reader = find_reader(fmt)
                if reader is not None:  # an option the repo's format does not take: before any download
                    try:
                        check_options(reader, options)
                    except ConfigError as exc:
                        if not listed:
                            raise
                        s.errors.append(RowError(location, None, f"{exc}; this repo is skipped, the others in the "
                                                 "listing are read"))
                        return
                model = leaderboard_model_id(repo_id)
                if model is not None and not is_valid_repo_id(model):
                    s.errors.append(RowError(location, None, f"the model id {model!r} derived from the repo name is not "
                                             "a valid Hub repo id (ORG/NAME); this source is skipped"))
                    return
                root = self.hub.download(snap, files, cached=outage is not None)
                break
            except HubOutageError as exc:  # no answer, or 408/429/5xx through the retries (not a 401/403/404): the
                # home's Hub cache, as `taskspace pull` reads it (before, the repo was an error whatever it held)
                if outage is not None:
                    s.add_error(outage, location)
                    return
                outage = exc
            except RevisionGoneError as exc:  # main moved on (a force-push) between the listing and the download:
                # read the revision it has now (listed once more), unless a commit was asked for
                if relisted or snap.sha.startswith(revision or "\0"):
                    s.add_error(exc, location)
                    return
                log.warning("%s: %s; listing it again", location, exc)
                relisted = True
            except (HubError, NotFoundError) as exc:
                s.add_error(exc if outage is None else outage, location)  # nothing usable cached: the Hub's error
                return
        self._said_cached(location, outage, snap)
        in_use = self._hub_revisions_in_use(repo_id) if outage is None else None  # (nothing removed in an outage)
        if in_use is not None:  # the revision read, and those other sources of the home read: not every one ever read
            self.hub.keep_only(snap, also=in_use)
        kind = "leaderboard" if repo_id.startswith("open-llm-leaderboard") else fmt
        opts = dict(options)
        if reader is not None and reader.takes_identity:
            opts.update(kind=kind, location=location, revision=snap.sha)
            if model:
                opts.setdefault("model", model)
        if options.get("model"):  # the user's --model names one model: not a repo of several models' runs
            from .sources import source_infos

            try:
                infos = source_infos(root, fmt, **options)  # (the local folders: their names say which models)
            except InputError:
                infos = None  # the reading below reports it
            if infos is not None:
                _one_model_for(options["model"], location, [i.location for i in infos])
        try:
            batch = read_source(root, fmt, **opts)
        except InputError as exc:
            s.errors.append(RowError(location, exc.line, exc.message))
            return
        except ConfigError as exc:  # --metric TASK=KEY naming no task of this repo (said of the repo, not the download)
            said = str(exc).replace(str(root), location)
            if not listed:
                raise ConfigError(said) from None
            s.errors.append(RowError(location, None, f"{said}; this repo is skipped, the others in the listing are read"))
            return
        batch.source = SourceInfo(kind=kind, location=location, revision=stored_as)
        batch.errors = [replace(e, file=_hub_file(e.file, root, location)) for e in batch.errors]
        batch.warnings = [w.replace(f"{root}/", f"{location}/") for w in batch.warnings]
        # model names are kept as a local copy of the files keeps them (the store checks them; only names that are
        # Hub repo ids are ever asked of the Hub); before, every name that was not ORG/NAME (gpt-4o, a short name the
        # identity rules map) was rejected here, so a table of API models in a Hub repo stored nothing
        self.store_batch(batch)

    def _said_cached(self, location: str, outage: Exception | None, snap) -> None:
        """The warning of a Hub repo read from this home's Hub cache because the Hub failed (``outage``; None: read
        from the Hub, nothing said), in the words of `taskspace pull` (:func:`indexer.publish.cache_fallback_said`)."""
        if outage is not None:
            from .publish import cache_fallback_said

            self.summary.warnings.append(f"{location}: {cache_fallback_said(outage, 'read', snap)}")

    def _hub_location(self, repo_id: str) -> str:
        """``hub:ORG/REPO``, the stored source of the repo: the one stored under that id in another case where there is
        one (the Hub's repo ids are case-insensitive: `hub:Fake-Org/Results` is the dataset `fake-org/results`).
        Before, each spelling ingested was a source of its own, every outcome stored once per spelling."""
        location = f"hub:{repo_id}"
        if self.store.get_source(location) is not None:
            return location
        held = sorted(x.location for x in self.store.list_sources() if x.location.lower() == location.lower())
        if held:
            log.info("%s is the stored source %s (the Hub's repo ids are case-insensitive)", location, held[0])
        return held[0] if held else location

    def _hub_revisions_in_use(self, repo_id: str) -> list[str] | None:
        """The revisions of the Hub repo ``repo_id`` (in any case: the Hub's ids are case-insensitive) that the
        home's configured sources name (``main`` for none): an ingest keeps them in the Hub cache beside the one it
        read (a ``sources.toml`` written by hand can name two revisions of one repo). None when the sources file
        cannot be read: then nothing is removed."""
        if self._sources is None:
            from . import sourcelist
            from .config import get_settings

            try:
                self._sources = [parse_spec(sp.spec) for sp in sourcelist.load(get_settings().sources_file)
                                 if spec_kind(sp.spec) == "hub"]
            except (IndexerError, OSError) as exc:
                log.info("Hub cache: the configured sources cannot be read (%s): no earlier revision is removed", exc)
                self._sources = False
        if self._sources is False:
            return None
        return [s.revision or "main" for s in self._sources if s.target.lower() == repo_id.lower()]

    def ingest_hub_org(self, org: str, limit: int | None = None, format: str | None = None, **options) -> None:
        mode = LEADERBOARD_ORGS.get(org)
        try:
            repos = self.hub.list_datasets(org, search=mode[1] if mode else None, limit=limit)
        except (HubError, NotFoundError) as exc:
            self.summary.add_error(exc, f"hub-org:{org}")
            return
        if mode:
            suffix = mode[1]
            repos = [r for r in repos if r.endswith(suffix) or r.split("/", 1)[1].startswith(suffix)]
        if not repos:  # the Hub answers an unknown organisation (a typo) with an empty list, not a 404
            what = f"datasets named like '{mode[1]}'" if mode else "datasets"
            self.summary.errors.append(RowError(f"hub-org:{org}", None, f"the Hub at {self.hub.endpoint} lists no "
                                                f"{what} of {org!r}: is the organisation (or user) name right?"))
            return
        from .hub import is_valid_repo_id

        for repo in repos[:limit] if limit else repos:
            if not is_valid_repo_id(repo):  # the listing comes from the server
                self.summary.errors.append(RowError(f"hub-org:{org}", None, f"the listing names {repo[:120]!r}, not a "
                                                    "valid repo id; it is skipped"))
                continue
            with self._guard(f"hub:{repo}"):
                self.ingest_hub_repo(repo, format=format, listed=True, **options)

    # -- Hub metadata -----------------------------------------------------------------------------------

    def fetch_model_metadata(self) -> None:
        from .hub import HubClient, HubUnreachableError, is_valid_repo_id

        if not self.fetch_metadata:
            return
        stored = self.store.resolve_aliases(sorted(self._models)) if self._models else {}  # the names' model keys
        names = sorted({stored.get(m, m) for m in self._models} - {None})
        names = [m for m in names if is_valid_repo_id(m)]
        if self._hub is None or isinstance(self._hub, HubClient):
            # offline, a Hub client (one a hub: spec of this ingest made) refuses every request: one warning, no
            # request; before, with such a client, each model of the metadata backlog got a warning of its own
            # (`ingest hub:ORG/REPO` offline on the bundled sample's home: 23 lines "no Hub metadata (cannot read
            # model info of ...: HF_HUB_OFFLINE is set ...)")
            from .hub import offline_variable

            if (variable := offline_variable()) is not None:
                if names:
                    self.summary.warnings.append(f"{variable} is set: no Hub metadata fetched for the ingested models")
                return
        # and models with results whose metadata was never fetched (a Hub failure or an offline pass when its source
        # was stored: the source is unchanged since, so nothing else would ask again), at most METADATA_BACKLOG a run
        # (a home ingested with --no-metadata catches up over passes, not in one long pass), drawn at random so that
        # ids the Hub keeps refusing do not hold the rest back
        # and, after them, models whose metadata is older than METADATA_MAX_AGE, oldest first (a licence, size or gate
        # changed on the Hub: before, metadata was fetched once per model and an evolving index kept the old values
        # in its answers and filters, where a fresh index of the same results had the new ones)
        import random

        stale_before = None if METADATA_MAX_AGE is None else datetime.now(timezone.utc) - METADATA_MAX_AGE
        never = set(self.store.models_without_metadata())
        due = [m for m in self.store.models_without_metadata(stale_before) if is_valid_repo_id(m) and m not in names]
        backlog = sorted(m for m in due if m in never)
        if len(backlog) > METADATA_BACKLOG:
            backlog = random.sample(backlog, METADATA_BACKLOG)
        backlog += [m for m in due if m not in never][:max(0, METADATA_BACKLOG - len(backlog))]
        names = sorted({*names, *backlog})
        if not names:
            return
        rows, moves = [], {}
        for name in names:
            rec = self.store.get_model(name)
            if (rec is not None and rec.fetched_at is not None
                    and (stale_before is None or rec.fetched_at >= stale_before)):
                continue
            try:
                rows.append(self.hub.model_info(name))
                if rows[-1]["key"] != name:  # renamed on the Hub, or stored in another case: one model, its id now
                    moves[name] = rows[-1]["key"]
            except NotFoundError as exc:  # no such repo, or (a token set) one private to other tokens
                self.summary.warnings.append(f"{name}: no Hub metadata ({exc})")
                # asked: not asked again every pass (its kind and fields stay); a 401 without a token (missing, or
                # private: HiddenRepoError) is asked again, as a token may come
                if rec is not None and not isinstance(exc, HiddenRepoError):
                    self.store.upsert_models([{"key": name, "kind": rec.kind}])
            except (HubUnreachableError, ConfigError) as exc:  # (a token no request can carry: for every model)
                self.summary.warnings.append(f"no Hub metadata fetched: {exc}")
                break
            except HubError as exc:
                self.summary.warnings.append(f"{name}: no Hub metadata ({exc})")
        if moves:
            for old, new in self.store.rename_models(moves.items()):
                log.info("model %s is %s on the Hub: its results are stored under %s", old, new, new)
        if rows:
            self.summary.metadata += self.store.upsert_models(rows)


def unreadable_message(exc: PermissionError, stored=None) -> str:
    """The error line of a file or folder of a source that this user may not read (``chmod 000``, another user's
    0600 file, a folder without ``x``): what to do, not "an unexpected error ... please report it". ``stored``: the
    source's stored revision (a SourceRecord), which stays in the index and serves searches; the line says so, as
    "nothing of this source is stored" alone read as if its outcomes were gone."""
    import os

    from .errors import counted

    path = Path(exc.filename) if exc.filename else None
    how = "chmod a+rx" if path is not None and path.is_dir() else "chmod a+r"
    who = f"uid {os.geteuid()}" if hasattr(os, "geteuid") else "this user"
    kept = ("nothing of this source is stored" if stored is None else
            f"nothing of it is read now; its stored revision ({counted(stored.n_outcomes, 'outcome')}) is kept and "
            "searched until the source can be read")
    return (f"permission denied: this user ({who}) may not read it; make it readable (`{how}`, or chown it) or ingest as "
            f"a user who can: {kept}, the others are read")


def _rows_file(source: SourceInfo) -> str:
    """Where an error about rows of ``source`` points: a table folder's outcomes file, which holds the rows (the
    folder alone would leave the user to find it); the source's location otherwise."""
    where = source.location
    if source.kind == "table" and Path(where).is_dir():
        from .sources.tables import find_table_files

        where = str(find_table_files(Path(where))[0] or where)
    return where


def drop_unusable_rows(batch: SourceBatch) -> SourceBatch:
    """The batch without outcomes whose prompt text, model/benchmark name or prompt id no database can take
    (:func:`text_problem`, :func:`name_problem`; a prompt id longer than :data:`NAME_LIMIT`), each problem an error naming the prompt (the table reader already rejects these at their
    line; this holds the same rule for every reader, so the rest of the source is stored on SQLite and PostgreSQL)."""
    import numpy as np

    from .records import NAME_LIMIT, name_problem, text_problem
    from .sources.common import ErrorLog, example_value

    log_ = ErrorLog()
    where = _rows_file(batch.source)

    checked: dict[str, str | None] = {}  # text -> its problem (a text recurs once per model)

    def why(o_text, model, bench, pid=None):
        bad = checked[o_text] if o_text in checked else checked.setdefault(o_text, text_problem(o_text))
        if bad:
            return bad
        if pid is not None and len(str(pid)) > NAME_LIMIT:  # the store's source_prompt_id column (it refuses to cut it)
            return f"prompt id is longer than {NAME_LIMIT} characters ({len(str(pid))}), more than the database holds"
        if name_problem(model):
            return f"model name {name_problem(model)}"
        if name_problem(bench):
            return f"benchmark name {name_problem(bench)}"
        return None

    outcomes, seen = [], set()
    bad_names: dict[tuple[str, str], int] = {}  # (model|benchmark, name) -> its rows dropped: one error each
    for o in batch.outcomes:
        bad = why(o.text, o.model, o.benchmark, o.prompt_id)
        if bad is None:
            outcomes.append(o)
        elif bad.startswith(("model name ", "benchmark name ")):
            what = bad.split(" ", 1)[0]
            key = (what, o.model if what == "model" else o.benchmark)
            bad_names[key] = bad_names.get(key, 0) + 1
        elif (bad, o.prompt_id, o.model) not in seen:
            seen.add((bad, o.prompt_id, o.model))
            log_.add(where, None, f"prompt {example_value(o.prompt_id)} of {example_value(o.model)}: {bad}; its outcomes "
                     "are dropped", bad)
    for (what, name), n in bad_names.items():  # before: one line per prompt, each with the whole name (5,000 chars)
        log_.add(where, None, f"{what} {example_value(name)}: name {name_problem(name)}; its {counted(n, 'outcome')} {noun(n, 'is', 'are')} dropped"
                 + ((": fix it in the source (an lm-eval or lighteval run: or ingest it with --model NAME"
                     f"{source_hint('model', 'NAME')})" if READING_FOR.get() == "ingest" else
                     ": fix it in the source (`taskspace evaluate` has no --model to name it otherwise)")
                    if what == "model" else ""),
                 f"{what} names")
    table = batch.table
    if table is not None and len(table):
        bad_p = [i for i, (t, b, p) in enumerate(zip(table.texts, table.benchmarks, table.prompt_ids)) if why(t, "m", b, p)]
        bad_m = [i for i, m in enumerate(table.models) if name_problem(m)]
        if bad_p or bad_m:
            for i in bad_p:
                bad = why(table.texts[i], "m", table.benchmarks[i], table.prompt_ids[i])
                log_.add(where, None, f"prompt {example_value(table.prompt_ids[i])}: {bad}; its outcomes are dropped", bad)
            for i in bad_m:
                log_.add(where, None, f"model {example_value(table.models[i])}: {name_problem(table.models[i])}; its outcomes "
                         "are dropped", "model names")
            keep = ~np.isin(table.prompt_idx, bad_p) & ~np.isin(table.model_idx, bad_m)
            table = replace(table, model_idx=table.model_idx[keep], prompt_idx=table.prompt_idx[keep],
                            scores=table.scores[keep])
    if not log_.errors:
        return batch
    return replace(batch, outcomes=outcomes, table=table, errors=list(batch.errors) + log_.finish())


def drop_conflicts_between_names(batch: SourceBatch, store) -> SourceBatch:
    """The batch without the outcomes of a model that the source names several ways (``meta-llama__Llama-3-8B`` and
    ``meta-llama/Llama-3-8B``, ``gpt-4o(eval_results/gpt4o)`` and ``gpt-4o``: one model once the names are mapped, as
    :meth:`Store.ingest <indexer.store.sql.Store.ingest>` maps them) with different outcomes on one prompt id: the
    rule the table reader holds for one name (all the rows of the pair dropped, an error naming them), held after the
    names are mapped. Equal outcomes under two names stay (they merge into the same value), counted in
    ``skipped`` as repeated rows."""
    import numpy as np

    from .records import OutcomeTable
    from .sources.common import ErrorLog, number_shown

    table = batch.table
    if table is None or len(table.models) < 2 or not len(table):
        return batch
    keys = store.model_keys(table.models)
    key_list = [keys.get(m, m) for m in table.models]
    if len(set(key_list)) == len(key_list):
        return batch
    kid = np.asarray([{k: i for i, k in enumerate(dict.fromkeys(key_list))}[k] for k in key_list], dtype=np.int64)
    key = kid[table.model_idx] * max(len(table.prompt_ids), 1) + table.prompt_idx
    order = np.lexsort((table.model_idx, key))  # by (model, prompt id), then by name
    ks, sc = key[order], table.scores[order]
    same_key = np.r_[False, ks[1:] == ks[:-1]]
    differs = same_key & (sc != np.r_[np.nan, sc[:-1]])
    # equal outcomes under another name of the model merge into one: repeated rows, counted as the table reader counts
    # them under one name (before, "0 repeated row(s) dropped")
    merged = int(same_key[~np.isin(ks, ks[differs])].sum())
    if not differs.any():
        return replace(batch, skipped=batch.skipped + merged)
    log_ = ErrorLog()
    where = _rows_file(batch.source)
    bad_keys = np.unique(ks[differs])
    for k in bad_keys.tolist():
        rows = order[np.searchsorted(ks, k, "left"):np.searchsorted(ks, k, "right")]
        m, p = key_list[int(table.model_idx[rows[0]])], table.prompt_ids[int(table.prompt_idx[rows[0]])]
        said = ", ".join(f"{number_shown(table.scores[r])} as {table.models[int(table.model_idx[r])]!r}" for r in rows.tolist())
        log_.add(where, None, f"model {m!r}, prompt_id {p!r}: different outcomes under the names of one model ({said});"
                 " all its rows are dropped: fix the source (or the alias that maps these names to one model)",
                 "one model named several ways with different outcomes")
    keep = ~np.isin(key, bad_keys)
    used_m, m_idx = np.unique(table.model_idx[keep], return_inverse=True)
    used_p, p_idx = np.unique(table.prompt_idx[keep], return_inverse=True)
    um, up = used_m.tolist(), used_p.tolist()  # only the models and prompts left with an outcome are stored
    table = OutcomeTable(
        models=[table.models[i] for i in um], revisions=[table.revisions[i] for i in um] if table.revisions else None,
        prompt_ids=[table.prompt_ids[i] for i in up], benchmarks=[table.benchmarks[i] for i in up],
        texts=[table.texts[i] for i in up], model_idx=m_idx.astype(np.int32), prompt_idx=p_idx.astype(np.int32),
        scores=table.scores[keep])
    kept_b = set(table.benchmarks) | {o.benchmark for o in batch.outcomes}
    benchmarks = {b: info for b, info in batch.benchmarks.items() if b in kept_b}
    return replace(batch, table=table, benchmarks=benchmarks, errors=list(batch.errors) + log_.finish(),
                   skipped=batch.skipped + merged)


def repeated_texts(batch: SourceBatch) -> str | None:
    """A warning when the batch holds one prompt text (in one benchmark) under several prompt ids: a prompt's identity
    is its text, so the copies are stored as one prompt and a model's outcomes on them averaged into one graded score
    (as ``taskspace evaluate`` warns for its data); None when no text is repeated. Before, the ingest summary counted
    fewer prompts than the source's ids, and "0 repeated row(s) dropped", without a word."""
    ids: dict[tuple[str, str], dict] = {}
    for o in batch.outcomes:
        ids.setdefault((o.benchmark, o.text), {})[o.prompt_id] = None
    table = batch.table
    if table is not None and len(table):
        import numpy as np

        for i in np.unique(table.prompt_idx).tolist():  # the prompts some outcome row names
            ids.setdefault((table.benchmarks[i], table.texts[i]), {})[table.prompt_ids[i]] = None
    repeated = [(b, list(p)) for (b, _), p in ids.items() if len(p) > 1]
    if not repeated:
        return None
    bench, first = repeated[0]
    example = " = ".join(repr(str(i)) for i in first[:3]) + (" ..." if len(first) > 3 else "")
    n = len(repeated)
    return (f"{batch.source.location}: {n} prompt text{' is' if n == 1 else 's are'} given under more than one prompt "
            f"id ({sum(len(p) for _, p in repeated)} ids; e.g. {bench} {example}): a prompt is its text, so the ids of a "
            "text are one prompt and a model's outcomes on them are averaged into one score")


def cell_count(batch: SourceBatch) -> int:
    """The outcome cells a batch would store: distinct (model, benchmark, prompt text), copies of a text averaged."""
    n = len({(o.model, o.benchmark, o.text) for o in batch.outcomes})
    if batch.table is not None and len(batch.table):
        n += len(batch.table.merged())
    return n


def _hub_file(file: str, root: Path, location: str) -> str:
    """A downloaded file's path as ``hub:ORG/REPO/<path in repo>`` (for error messages)."""
    import os

    try:  # abspath, not resolve: the Hub cache's files are symlinks into its blob store
        return f"{location}/{Path(os.path.abspath(file)).relative_to(os.path.abspath(root))}"
    except ValueError:
        return file


@contextmanager
def _given_or_opened(store, existing: bool = False):
    """``store`` as it is, or, when it is None, the configured store (``open_store()``), closed on the way out.
    ``existing`` (a call that only reads or removes: :func:`stored_sources`, :func:`drop_source`): a configured SQLite
    file that does not exist is :func:`indexer.query.refuse_missing_database`'s error, and nothing is created
    (:func:`indexer.query.open_existing_store`)."""
    if store is not None:
        yield store
        return
    from .query import open_existing_store
    from .store.sql import open_store

    own = open_existing_store() if existing else open_store()
    try:
        yield own
    finally:
        own.close()


def ingest(
    spec: str,
    *,
    store=None,
    format: str | None = None,
    limit: int | None = None,
    hub=None,
    fetch_metadata: bool = True,
    accept_partial: bool = False,
    **options,
) -> IngestSummary:
    """Ingest a local path, ``hub:ORG/REPO[@REV]`` or ``hub-org:ORG`` into the store (default: ``open_store()``).

    ``options`` go to the readers (``prompts=``, ``shape=``, ``model=``, ``filter=``, ``metric=``); those that change
    what is stored (:data:`STORED_OPTIONS`) are part of the source's revision (:func:`read_revision`).
    ``accept_partial``: store a new revision even when it reads much worse than the stored one (no quarantine).
    Raises InputError for a malformed spec or a missing path; everything else is reported in the summary.
    """
    parsed = parse_spec(spec_text(spec))
    with _given_or_opened(store) as store:
        # a command the user runs: no next run tries the source again (a configured source's pass does)
        ing = Ingester(store, hub=hub, fetch_metadata=fetch_metadata, accept_partial=accept_partial,
                       again="run `taskspace ingest` again later")
        ing.ingest_spec(parsed, format, limit=limit, **options)
        store.merge_model_names()  # rows stored under names the identity rules now map elsewhere
        store.lower_licenses()  # licenses an older taskspace stored as a card wrote them ('MIT')
        ing.fetch_model_metadata()
        return ing.summary


def stored_sources(store=None) -> list[dict]:
    """The sources whose results the store holds: ``{"location", "kind", "revision", "outcomes", "ingested_at"}``,
    by location (pulled spaces' markers left out: they hold no results)."""
    with _given_or_opened(store, existing=True) as store:
        return [{"location": s.location, "kind": s.kind, "revision": s.revision, "outcomes": int(s.n_outcomes),
                 "ingested_at": s.ingested_at.isoformat() if s.ingested_at else None}
                for s in sorted(store.list_sources(), key=lambda s: s.location) if s.kind != "pulled"]


def drop_source(location: str, *, store=None) -> dict:
    """Delete a stored source and its outcomes from SQL in one transaction, under the ``index`` lock (BusyError while
    a pass runs): the next indexing pass re-solves the models whose outcomes it held and drops those left with none.
    ``location``: as :func:`stored_sources` lists it, or a local path (resolved). NotFoundError for an unknown one
    (naming close ones), InputError for a pulled space's marker. Returns ``{"location", "outcomes"}``."""
    import difflib

    location = spec_text(location, "location")
    with _given_or_opened(store, existing=True) as store:
        with store.lock("index"):
            rec = store.get_source(location)
            if rec is None and spec_kind(location) == "hub":  # hub:ORG/REPO@REV: the repo is stored once
                rec = store.get_source(location.partition("@")[0])
            if rec is None and not spec_kind(location).startswith("hub") and Path(location).expanduser().exists():
                rec = store.get_source(str(Path(location).expanduser().resolve()))
            if rec is None:
                known = [s["location"] for s in stored_sources(store)]
                close = difflib.get_close_matches(location, known, n=3, cutoff=0.5)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise NotFoundError(f"no stored source {location!r}{hint} (`taskspace sources stored` lists them)")
            if rec.kind == "pulled":
                raise InputError(f"{rec.location} marks a pulled space, not a source of results: pull again to "
                                 "replace it", item=location)
            store.delete_source(rec.location)
            return {"location": rec.location, "outcomes": int(rec.n_outcomes)}
