"""What a method means and what an embedding space is: the home of both ideas.

**Methods** (:data:`METHODS`, ``TASKSPACE_METHOD``). Each name is a :class:`Method`: the solver options it
sets (a centred per-model intercept, lambda chosen per model by generalised cross-validation), its prior policy
(``'mean'``: every model is shrunk toward the indexed models' mean normal, stored with the space and
re-estimated when the models changed since reach :data:`REFIT_SHARE` of those it was estimated from) and its prompt
feature set (:mod:`indexer.features`: covariate columns appended to each prompt's row and left unpenalised, the solver's
``free`` columns; ``multiple-choice-v2`` (and its predecessor ``-v1``) also embeds a prompt as its question and
its options apart and keeps the two answer formats apart in the index, :mod:`indexer.represent`). What each method is for and how it measures: ``docs/RESULTS.md``.

**Spaces** (:class:`SpaceSpec`). A space is fixed by its encoder id (``name@revision``), lambda, eps, method
and params (the method's solver options but lambda and eps, plus ``features``); its vectors' width follows from
the encoder's and the params (:func:`indexer.represent.index_dim`). One canonical JSON of those six fields is
the space's identity: its sha256 is the SQL ``spaces.key``, and the space's name in the vector index is the
encoder's short name plus the first 10 hex digits of the same hash. A stored space (:class:`SpaceRecord
<indexer.store.sql_types.SpaceRecord>`) and a :class:`SpaceSpec` are interchangeable wherever a space is taken.
:func:`configured` is the space the settings ask for; ``matches`` tells whether a stored space is it.

**A space's encoder** (:func:`space_encoder`): one shared instance per process (:func:`indexer.encoder.get_encoder`),
and an :class:`~indexer.errors.EncoderError` (exit 5) when the installed encoder is not the one the space was
built with (its prompt vectors would not match the stored model vectors).

No I/O here but loading the encoder in :func:`space_encoder`; importing this module loads neither numpy nor torch.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace

from .errors import EncoderError, InputError

__all__ = ["Method", "METHODS", "REFIT_SHARE", "needs_refit", "get_method", "method_options", "space_params", "SpaceSpec",
           "configured", "encoder_name", "space_name", "space_encoder"]

#: the prompt feature sets' names (the same strings as :data:`indexer.features.TEXT_FEATURES` and
#: :data:`indexer.features.MULTIPLE_CHOICE`, kept literal so that validating a setting does not import numpy;
#: a test checks they agree)
_TEXT_FEATURES = "text-length-v1"
_MULTIPLE_CHOICE = "multiple-choice-v1"
_MULTIPLE_CHOICE_V2 = "multiple-choice-v2"
#: :data:`indexer.represent.LEVELS`, literal for the same reason
_LEVELS = "level-deviation-v1"
#: :data:`indexer.represent.LEVELS_FORMATS`
_LEVELS_FORMATS = "level-deviation-v2"

#: a space re-estimates its ``'mean'`` prior and refits its calibration map (solving every model once) when the
#: models solved toward them or removed since they were estimated (a new model, a known one with new or changed
#: results), or the change in the model count, reach this share of the models they were estimated from; in between
#: both are held fixed, so adding a model is one solve and the total work stays linear in the number of models
#: (each changed model costs on average at most ``1 + 1 / REFIT_SHARE`` solves). Measured (docs/BENCHMARKS.md
#: "Held prior and map"): holding them until the count doubled let an evolving evalarena_code home answer up to 0.12 apart
#: from a fresh index of the same results when known models gained benchmarks
REFIT_SHARE = 0.25


def needs_refit(n_models: int, fitted_on: int, changed: int) -> bool:
    """Whether a prior or calibration map estimated from ``fitted_on`` models is re-estimated now that the space
    holds ``n_models``, ``changed`` models solved or removed since (this pass's stale ones included; not counted
    before schema 0015) (:data:`REFIT_SHARE`)."""
    limit = REFIT_SHARE * fitted_on
    return changed >= limit or abs(n_models - fitted_on) >= limit


@dataclass(frozen=True)
class Method:
    """One ``TASKSPACE_METHOD``: what it sets in the solver and how it represents a prompt."""

    name: str
    #: centred embeddings with an unpenalised per-model intercept (stored as a trailing ``c_i``)
    intercept: bool = False
    #: how lambda is chosen: None = ``TASKSPACE_LAMBDA``; ``'gcv'`` = per model by generalised cross-validation
    select: str | None = None
    #: the prior policy: None = ridge toward 0; ``'mean'`` = toward the models' mean normal (see the module docstring)
    prior: str | None = None
    #: the prompt feature set (:mod:`indexer.features`), None = the embedding alone
    features: str | None = None
    #: model vectors carry their level coordinates and the calibration is the level/deviation map fitted on
    #: cross-fitted held-out source cells (:func:`indexer.represent.has_levels`, :mod:`indexer.posterior`)
    levels: bool = False
    #: with ``levels`` and the answer formats apart: the prior (and its part of the map) per answer format
    #: (:func:`indexer.represent.prior_formats`; space param ``levels = level-deviation-v2``)
    prior_formats: bool = False

    @property
    def free(self) -> int:
        """How many unpenalised covariate columns the feature set appends to a row."""
        from .features import n_features

        return n_features(self.features)

    @property
    def split(self) -> bool:
        """True when a prompt is embedded as its question and its options apart (``multiple-choice-v1``/``-v2``)."""
        return self.features in (_MULTIPLE_CHOICE, _MULTIPLE_CHOICE_V2)

    def options(self, lam: float = 1.0, eps: float = 0.0) -> dict:
        """The :class:`~indexer.solver.HyperplaneSolver` constructor options of this method."""
        opts: dict = {"lam": lam, "eps": eps}
        if self.intercept:
            opts["intercept"] = True
        if self.select:
            opts["select"] = self.select
        if self.prior:
            opts["prior"] = self.prior
        if self.features:
            opts["free"] = self.free
        if self.prior_formats:
            opts["n_formats"] = 2
        return opts

    @property
    def params(self) -> dict:
        """A space's params under this method: the solver options but ``lam``/``eps`` (columns of their own),
        plus ``features`` for a method with a feature set."""
        params = {k: v for k, v in self.options().items() if k not in ("lam", "eps", "n_formats")}
        if self.features:
            params["features"] = self.features
        if self.levels:
            params["levels"] = _LEVELS_FORMATS if self.prior_formats else _LEVELS
        return params


#: every method ``TASKSPACE_METHOD`` accepts, the default first
METHODS: dict[str, Method] = {m.name: m for m in (
    # auto-mean on the question/options split with four option covariates (on prompts without options: auto-mean)
    # (multiple-choice-v2: a model is never extrapolated to an answer format it was not observed on, represent.py)
    # (levels: its calibration weighs a model's level, its own deviation and the shared (prior) part apart, fitted on
    # held-out prompts and folded into the query vector, docs/RESULTS.md "Level and deviation")
    # (prior_formats: one prior per answer format, each model shrunk toward the mean normal of the models seen on its
    # formats, docs/RESULTS.md "mmlu_pro and evalarena_code pooled"; on one format the single prior exactly)
    Method("auto-mc", intercept=True, select="gcv", prior="mean", features=_MULTIPLE_CHOICE_V2, levels=True,
           prior_formats=True),
    # auto, every model shrunk toward the models' mean normal (below PRIOR_MIN_MODELS models: auto)
    Method("auto-mean", intercept=True, select="gcv", prior="mean"),
    # centred embeddings, per-model intercept, lambda per model by GCV (eps as given)
    Method("auto", intercept=True, select="gcv"),
    # auto plus two prompt-length covariates
    Method("auto-text", intercept=True, select="gcv", features=_TEXT_FEATURES),
    # the paper's exact method with TASKSPACE_LAMBDA / TASKSPACE_EPS
    Method("paper"),
)}


def get_method(name: str | None) -> Method:
    """The method of a name (case and surrounding space ignored); :class:`InputError` for an unknown one."""
    method = METHODS.get((name or "").strip().lower())
    if method is None:
        raise InputError(f"unknown solver method {name!r}; use {', '.join(METHODS)}")
    return method


def method_options(name: str, *, lam: float = 1.0, eps: float = 0.0) -> dict:
    """The solver options of the method ``name`` (:meth:`Method.options`)."""
    return get_method(name).options(lam, eps)


def space_params(name: str) -> dict:
    """The space params of the method ``name`` (:attr:`Method.params`)."""
    return get_method(name).params


def encoder_name(encoder_id: str) -> str:
    """The encoder name of an encoder id ``name@revision`` (what :func:`indexer.encoder.get_encoder` takes)."""
    return encoder_id.rsplit("@", 1)[0]


@dataclass(frozen=True)
class SpaceSpec:
    """An embedding space's settings (see the module docstring). ``encoder`` (the encoder id) may be None and
    ``dim`` (the width of its vectors) is None until the encoder is known; :attr:`key` and :attr:`name` need both.
    ``params`` is copied on construction and must not be modified."""

    encoder: str | None
    lam: float
    eps: float
    method: str
    params: dict = field(default_factory=dict, hash=False)
    dim: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "params", dict(self.params or {}))

    @classmethod
    def of(cls, space) -> "SpaceSpec":
        """The spec of a stored space (anything with ``encoder, lam, eps, method, params, dim``)."""
        if isinstance(space, SpaceSpec):
            return space
        return cls(space.encoder, space.lam, space.eps, space.method, dict(space.params or {}), space.dim)

    def with_encoder(self, encoder_id: str, encoder_dim: int) -> "SpaceSpec":
        """This space on an encoder: its id and the width of its vectors from the encoder's ``encoder_dim``."""
        from .represent import index_dim

        return replace(self, encoder=encoder_id, dim=index_dim(int(encoder_dim), self.params))

    # -- identity ------------------------------------------------------------------------------------------
    @property
    def canonical(self) -> str:
        """The canonical JSON of the six fields that identify the space (hashed by :attr:`key`)."""
        if self.encoder is None or self.dim is None:
            raise InputError(f"space of method {self.method!r} has no encoder yet: its key needs the encoder id "
                             "and the vector width")
        return json.dumps([self.encoder, int(self.dim), float(self.lam), float(self.eps), self.method,
                           dict(self.params)], sort_keys=True, default=str)

    @property
    def key(self) -> str:
        """sha256 hex of :attr:`canonical`: the space's SQL key."""
        return hashlib.sha256(self.canonical.encode()).hexdigest()

    @property
    def name(self) -> str:
        """The space's name in the vector index, e.g. ``all-minilm-l6-v2-3f2a9c1b0d``: the encoder's short name
        and 10 hex digits of :attr:`key`."""
        short = re.sub(r"[^a-z0-9-]+", "-", encoder_name(self.encoder or "").rsplit("/", 1)[-1].lower()).strip("-")
        return f"{short[:40] or 'space'}-{self.key[:10]}"

    @property
    def encoder_name(self) -> str:
        """The encoder's name without its revision."""
        return encoder_name(self.encoder or "")

    def matches(self, space) -> bool:
        """True when the stored ``space`` is this one: same encoder id, lambda, eps, method and params."""
        return space.encoder == self.encoder and self.same_method(space)

    def same_method(self, space) -> bool:
        """True when the stored ``space`` was built by this method with these settings (lambda, eps, method and
        params), whatever its encoder: what a spec of :func:`configured` without an encoder can tell."""
        return (space.lam == self.lam and space.eps == self.eps and space.method == self.method
                and dict(space.params or {}) == self.params)

    # -- what the params mean ----------------------------------------------------------------------------
    @property
    def prior(self) -> str | None:
        """The prior policy of the space (``'mean'`` or None)."""
        return self.params.get("prior")

    @property
    def options(self) -> dict:
        """The solver options the space's models are solved with."""
        from .represent import prior_formats

        opts = {"lam": self.lam, "eps": self.eps, **{k: v for k, v in self.params.items()
                                                     if k not in ("features", "levels")}}
        if prior_formats(self.params) > 1:
            opts["n_formats"] = prior_formats(self.params)
        return opts

    def solver(self):
        """A new :class:`~indexer.solver.HyperplaneSolver` with the space's options (unfitted)."""
        from .solver import HyperplaneSolver

        return HyperplaneSolver(**self.options)


def configured(settings=None, *, encoder: str | None = None, method: str | None = None) -> SpaceSpec:
    """The space the settings configure (default :func:`indexer.config.get_settings`): ``TASKSPACE_METHOD``
    (or ``method``) with ``TASKSPACE_LAMBDA`` / ``TASKSPACE_EPS``, on the encoder id ``encoder`` (None: not
    known here; enough for the solver and the representation)."""
    if settings is None:
        from .config import get_settings

        settings = get_settings()
    m = get_method(method or settings.method)
    # a method that chooses lambda per model (GCV) never reads TASKSPACE_LAMBDA: its space keeps the default 1.0, so
    # a value set for the paper method names no second space with the same vectors (before, it built one beside)
    lam = settings.lam if m.select is None else 1.0
    return SpaceSpec(encoder, lam, settings.eps, m.name, m.params)


def eps_bound(n_prompts: int, texts_per_prompt: int = 1) -> float:
    """The most the largest singular value of ``n_prompts`` prompts' embedding rows can be: each embedded text is of
    length 1 (every encoder normalises), so the rows' Frobenius norm, sqrt(``texts_per_prompt`` * n), bounds it, and
    a model's Gram (its prompts alone; centred for an intercept, with covariates partialled out) is no larger. An eps
    past it drops every component of every model whatever the prompts are (with float32 rows' slack, 1e-6)."""
    import math

    return math.sqrt(max(int(texts_per_prompt), 1) * max(int(n_prompts), 0)) * (1 + 1e-6)


def eps_problem(eps: float, n_prompts: int, space_or_params) -> str | None:
    """Why ``eps`` cannot be a space's (``space_or_params``: its params) on ``n_prompts`` prompts: it drops every
    component of every model (:func:`eps_bound`), so each model's score would be the same for every task; None when it
    keeps one for some prompts, or when no prompt is stored (nothing to build yet)."""
    from .represent import is_split

    if n_prompts <= 0:
        return None
    split = is_split(space_or_params)
    bound = eps_bound(n_prompts, 2 if split else 1)
    if eps <= bound:  # (bound > 0: an eps of 0 or less keeps every component)
        return None
    return eps_drops_every_component(eps, bound / (1 + 1e-6), f"the {n_prompts:,} stored prompts' embeddings (each of "
                                     f"length 1{', a question and its options in each row' if split else ''})")


def rounded_down(x: float) -> float:
    """``x`` rounded down to 3 decimals: a bound said that, given back, is still within it."""
    import math

    return math.floor(x * 1000) / 1000


def eps_drops_every_component(eps: float, bound: float, embeddings: str, *, whatever: bool = True) -> str:
    """The one wording of an ``eps`` that drops every component of every model, for each check of it: ``taskspace
    index`` (TASKSPACE_EPS) and a search of a space built with one (:func:`eps_problem`), ``taskspace evaluate --eps``
    before the prompts are encoded and after (:mod:`indexer.evaluate`). ``embeddings``: whose largest singular value is
    at most ``bound`` (said rounded down to 3 decimals); ``whatever``: ``bound`` holds whatever the prompts are (their
    count bounds it), so the usable range is below it; else it is the embeddings' own, the range's end."""
    said = f"{rounded_down(bound):g}"
    return (f"eps {eps:g} drops every component of every model{', whatever the prompts' if whatever else ''}: "
            f"{embeddings} have a largest singular value of at most {said} (components whose singular value is below "
            "eps are dropped), so a model's score would be the same for every task; the usable range is "
            + ("0 <= eps up to the largest singular value of the prompts' embeddings, below that bound" if whatever
               else f"0 <= eps <= {said}") + " (0 keeps every component, the default)")


def space_name(space) -> str:
    """The vector-index name of a space (:attr:`SpaceSpec.name`)."""
    return SpaceSpec.of(space).name


def space_encoder(space, encoder=None):
    """The encoder of a space: ``encoder`` when given, else the process's shared instance of the space's encoder
    (:func:`indexer.encoder.get_encoder`, so a model loads once however many queries use it). Raises
    :class:`~indexer.errors.EncoderError` when its id is not the one the space was built with."""
    spec = SpaceSpec.of(space)
    if encoder is None:
        from .encoder import get_encoder

        try:
            encoder = get_encoder(spec.encoder_name)
            encoder.id  # noqa: B018  (resolves the encoder: an EncoderError when it is not here)
        except EncoderError as exc:
            # the space needs its own encoder whatever TASKSPACE_ENCODER says (before: the loader's own advice to set
            # TASKSPACE_ENCODER, which changes nothing for this space, and no word of which space needed it)
            why = re.sub(r"; set TASKSPACE_ENCODER to [^;]*$", "", str(exc))
            raise EncoderError(f"space {spec.name} needs its encoder {spec.encoder_name}, which cannot be loaded here: "
                               f"{why}; install that encoder to query this space, or query another (`taskspace "
                               "spaces` lists them)") from exc
    if encoder.id != spec.encoder:
        raise EncoderError(f"space {spec.name} was built with encoder {spec.encoder} but the installed encoder is "
                           f"{encoder.id}; prompt vectors would not match its model vectors: install that encoder "
                           "revision, or re-run `taskspace index` so a space for the installed encoder is built")
    return encoder
