"""Living with several embedding spaces: which one a query takes when none is named (:func:`default_space`), what
each one holds (:func:`describe_spaces`, ``taskspace spaces``) and removing one (:func:`drop_space`, ``taskspace
spaces drop``).

A home holds one space per (encoder, method and its settings) it was indexed with: a second encoder
(``TASKSPACE_ENCODER=all-mpnet-base-v2``), a newer default method, or a pulled record set each add one beside the
others. A query without ``--space`` takes the *default* space: the configured one (encoder, ``TASKSPACE_METHOD``,
lambda, eps), else the newest of the configured encoder, else the newest (:func:`default_space`; the warnings that
go with the last two are :func:`indexer.query._space`'s). Only the configured space is updated by ``taskspace
index``: the others keep the vectors they were solved with, and their *stale* count says how many models' results
changed since (or have none any more).

Dropping a space removes its SQL rows (:meth:`Store.delete_space <indexer.store.sql.Store.delete_space>`, one
transaction) and its vector-index collections (:meth:`VectorStore.drop_space
<indexer.store.vectors.VectorStore.drop_space>`). The index goes first: killed between the two, SQL still names the
space and the same command finishes the work (the index part deletes nothing twice); the other order would leave
collections no SQL row names. The caller holds the ``index`` lock (``taskspace spaces drop`` takes it before opening
the index, as ``reindex`` does), so no pass writes the space meanwhile. The default space is refused unless
``force``: every search, the server and the page use it.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from .errors import ConfigError, InputError, UnknownSpaceError
from .records import ToDict

__all__ = ["default_space", "configured_spec", "update_command", "SpaceInfo", "describe_spaces", "DropResult", "drop_space"]

#: the form of a space's index name (:attr:`indexer.space.SpaceSpec.name`): an encoder's short name and 10 hex digits
SPACE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*-[0-9a-f]{10}")


def default_space(spaces: list, spec):
    """The space a query takes when none is named, of SQL's ``spaces`` (in id order): the one ``spec`` (the
    configured space, :func:`configured_spec`) matches, else the newest of its encoder, else the newest; None when
    there is none. No I/O."""
    if not spaces:
        return None
    mine = [s for s in spaces if s.encoder == spec.encoder]
    return ([s for s in mine if spec.matches(s)][-1:] or mine[-1:] or spaces[-1:])[0]


def configured_spec(settings=None, *, lenient: bool = False):
    """The configured space (:func:`indexer.space.configured`) on the configured encoder's id. ``lenient``: when that
    encoder cannot be loaded here (not installed, a typo in ``TASKSPACE_ENCODER``), the spec without an encoder, which
    matches no space (so :func:`default_space` gives the newest) instead of the :class:`~indexer.errors.EncoderError`."""
    from .encoder import get_encoder
    from .errors import EncoderError
    from .space import configured

    if settings is None:
        from .config import get_settings

        settings = get_settings()
    try:
        return configured(settings, encoder=get_encoder(settings.encoder).id)
    except EncoderError:
        if not lenient:
            raise
        return configured(settings)


def update_command(space, settings=None) -> str | None:
    """The command whose indexing pass re-solves ``space`` from the stored results: ``taskspace index`` for the
    configured space, with ``TASKSPACE_ENCODER=...`` / ``TASKSPACE_METHOD=...`` (``TASKSPACE_LAMBDA=...`` /
    ``TASKSPACE_EPS=...`` when it was built under other ones) before it for another one; None when no
    setting of this taskspace builds it (a method or params of an older taskspace, another revision of its encoder)."""
    from .errors import InputError
    from .space import SpaceSpec, configured, encoder_name

    if settings is None:
        from .config import get_settings

        settings = get_settings()
    from dataclasses import replace

    sp = SpaceSpec.of(space)
    try:
        # under the lambda and eps it was built with (TASKSPACE_LAMBDA=3 of a paper space): before, only the settings
        # as they are, so such a space was said to be built by no setting, and no pass to update it
        here = configured(settings, encoder=sp.encoder, method=sp.method)
        if not configured(replace(settings, lam=float(sp.lam), eps=float(sp.eps)), encoder=sp.encoder,
                          method=sp.method).matches(sp):
            return None
    except InputError:  # a method this taskspace does not know
        return None
    mine = configured_spec(settings, lenient=True)
    env = []
    if sp.encoder != mine.encoder:
        if mine.encoder is not None and encoder_name(mine.encoder) == sp.encoder_name:
            return None  # the installed revision of its encoder is another one: a pass builds another space
        env.append(f"TASKSPACE_ENCODER={sp.encoder_name}")
    if sp.method != mine.method:
        env.append(f"TASKSPACE_METHOD={sp.method}")
    env += [f"{var}={setting_value(got)}" for var, got, want in (("TASKSPACE_LAMBDA", sp.lam, here.lam),
                                                                 ("TASKSPACE_EPS", sp.eps, here.eps))
            if float(got) != float(want)]
    return " ".join(env + ["taskspace index"])


def setting_value(x: float) -> str:
    """A space's lambda or eps as the setting that builds it again is set to: the shortest text that reads back as the
    same float (``3``, ``0.5``, ``0.1234567``). Not ``:g`` alone, which keeps 6 digits: a space built under
    TASKSPACE_LAMBDA=0.1234567 was told ``TASKSPACE_LAMBDA=0.123457 taskspace index``, whose pass builds another space."""
    short = f"{float(x):g}"
    return short if float(short) == float(x) else repr(float(x))


@dataclass
class SpaceInfo(ToDict):
    """One space as ``taskspace spaces`` shows it."""

    name: str
    id: int | None  # None: a space the vector index holds and SQL does not (left by an interrupted drop, or copied)
    encoder: str | None = None
    method: str | None = None
    dim: int | None = None
    lam: float | None = None
    eps: float | None = None
    created_at: str | None = None
    #: models with a vector, benchmarks with a vector
    models: int = 0
    benchmarks: int = 0
    #: models whose results changed since their vector was solved (or that have none any more); None for a pulled
    #: space that is read-only (its vectors are the publisher's)
    stale: int | None = None
    #: the space a query takes without --space
    default: bool = False
    #: the space the settings configure: the one `taskspace index` updates
    configured: bool = False
    #: the command that re-solves it from the stored results (:func:`update_command`; None: none does)
    update: str | None = None
    #: where a pulled space came from (None: built here)
    origin: str | None = None
    read_only: bool = False
    #: points per collection kind in the vector index (None: that collection is missing); None when the index could
    #: not be read (another process holds the embedded folder: `taskspace spaces` beside `taskspace serve`)
    index: dict | None = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def describe_spaces(sql, vectors=None, settings=None) -> list[SpaceInfo]:
    """Every space SQL holds (id order) with its encoder, method, dimension, models, staleness and whether it is the
    default; with ``vectors``, the points of each collection, and the spaces the index holds that SQL does not."""
    from .space import space_name
    from .store.vectors import KINDS

    spaces = sql.list_spaces()
    spec = configured_spec(settings, lenient=True)
    chosen = default_space(spaces, spec)
    out = []
    for rec in spaces:
        origin = sql.space_origin(rec.id)
        read_only = sql.is_read_only(rec.id)
        stale = None if read_only else len(set(sql.stale_models(rec.id)) | set(sql.orphan_model_vectors(rec.id)))
        out.append(SpaceInfo(
            name=space_name(rec), id=rec.id, encoder=rec.encoder, method=rec.method, dim=rec.dim, lam=rec.lam,
            eps=rec.eps, created_at=rec.created_at.isoformat() if rec.created_at else None,
            models=len(sql.model_vector_keys(rec.id)), benchmarks=len(sql.load_benchmark_vectors(rec.id)),
            stale=stale, default=chosen is not None and rec.id == chosen.id, configured=spec.matches(rec),
            origin=origin, read_only=read_only, update=None if origin else update_command(rec, settings)))
    if vectors is not None:
        known = {i.name for i in out}
        out += [SpaceInfo(name=slug, id=None) for slug in vectors.spaces() if slug not in known]
        for info in out:
            info.index = {k: (vectors.count(info.name, k, missing_ok=True) if vectors.alias_target(info.name, k) else None)
                          for k in KINDS}
    return out


@dataclass
class DropResult(ToDict):
    """What :func:`drop_space` removed (or, ``dry_run``, would remove)."""

    space: str
    id: int | None
    encoder: str | None
    method: str | None
    default: bool
    dry_run: bool
    #: SQL rows per table
    sql: dict = field(default_factory=dict)
    #: the vector index's collections (physical names) and their points
    collections: dict = field(default_factory=dict)

    @property
    def nothing(self) -> bool:
        return not any(self.sql.values()) and not self.collections

    def as_dict(self) -> dict:
        return {**asdict(self), "nothing": self.nothing}


def drop_space(sql, vectors, space: str | int, *, force: bool = False, dry_run: bool = False,
               settings=None) -> DropResult:
    """Remove the space ``space`` names (its index name, SQL id or encoder name, as ``--space`` takes) from SQL and
    the vector index (see the module docstring); ``dry_run``: only say what would be removed. A space the index holds
    and SQL does not is removed from the index. A name of a space's form that neither holds is dropped already: nothing
    to do (so a repeated drop succeeds). :class:`~indexer.errors.ConfigError` for the default space without
    ``force``; :class:`~indexer.errors.UnknownSpaceError` for a name that fits no space (or several)."""
    from .space import space_name
    from .store.vectors import KINDS
    from .sync import resolve_spaces

    import numpy as np

    if isinstance(space, np.integer):  # an id read from an array: the id it holds
        space = int(space)
    if isinstance(space, bool) or not isinstance(space, (str, int)):
        # before: str(space) looked up, so `drop_space(sql, vectors, None)` or a list was 'space "None" is not a known
        # space', a NotFoundError about a name nobody gave
        raise InputError(f"space must be a space's name or id (a string or an integer), not {type(space).__name__}",
                         item="space")
    spaces = sql.list_spaces()
    name = str(space).strip()
    try:
        rec = resolve_spaces(sql, name, spaces, said=f"space {name!r}")[0]  # an argument here, not --space
    except UnknownSpaceError as exc:
        if name in vectors.spaces() or (SPACE_NAME.fullmatch(name) and not any(space_name(s) == name for s in spaces)
                                        and _not_ambiguous(name, spaces)):
            rec = None  # in the index alone (an interrupted drop, a copied folder), or dropped already
        else:
            from .find import lister

            # the reader's listing: a command's `taskspace spaces`, a Python caller's call (before, the command to both)
            err = UnknownSpaceError(f"{exc} ({lister('space')} lists them)")
            err.item = "space"
            raise err from None
    spec = configured_spec(settings, lenient=True)
    chosen = default_space(spaces, spec)
    is_default = rec is not None and chosen is not None and rec.id == chosen.id
    slug = space_name(rec) if rec is not None else name
    collections = {c: vectors.count(slug, k, missing_ok=True) if vectors.alias_target(slug, k) == c else None
                   for k in KINDS for c in vectors.physical_collections(slug, k)}
    result = DropResult(slug, rec.id if rec else None, rec.encoder if rec else None, rec.method if rec else None,
                        is_default, dry_run, sql.space_rows(rec.id) if rec is not None else {}, collections)
    if is_default and not force and not dry_run:
        # each with the settings that make it the default (its update command's), where a setting builds it: before,
        # "TASKSPACE_ENCODER / TASKSPACE_METHOD" alone, though a space of another lambda needs TASKSPACE_LAMBDA too
        others = []
        for s in spaces:
            if s.id != rec.id:
                env = (update_command(s, settings) or "").removesuffix("taskspace index").strip()
                others.append(f"{space_name(s)}: {env}" if env else space_name(s))
        # built here from stored results: the next pass builds the configured space again (a pulled one it cannot)
        again = (" (the next `taskspace index` builds it again from the stored results)"
                 if spec.matches(rec) and sql.space_origin(rec.id) is None else "")
        switch = (f"; or make another the default first (the settings that build it: TASKSPACE_ENCODER, "
                  f"TASKSPACE_METHOD, TASKSPACE_LAMBDA, TASKSPACE_EPS; other spaces: "
                  f"{', '.join(others)})" if others else "")
        raise ConfigError(f"space {slug} ({rec.encoder}, method {rec.method}) is the default space: searches, "
                          f"`taskspace serve` and the page use it; `taskspace spaces drop {slug} --force` drops it "
                          f"anyway{again}"
                          f"{switch}")
    if dry_run:
        return result
    vectors.drop_space(slug)  # first: killed after it, SQL still names the space and the same command finishes
    if rec is not None:
        result.sql = sql.delete_space(rec.id)
    return result


def _not_ambiguous(name: str, spaces: list) -> bool:
    """A space-shaped name that is no encoder name of SQL's spaces either (those errors stay errors)."""
    from .space import encoder_name

    low = name.lower()
    return not any((n := encoder_name(s.encoder).lower()) == low or n.endswith("/" + low) for s in spaces)
