"""Model identity: the name a source gives a model -> the key it is stored under (its Hugging Face Hub repo id
when that is knowable), and whether it is an API-only model (no Hub repo: ``--open-only`` drops it).

Sources name one model in many ways: ``Qwen--Qwen1.5-72B-Chat`` (``org--name``), ``meta-llama__Llama-3-8B``
(``org__name``), ``open-llm-leaderboard/meta-llama__Llama-3-8B-details`` (leaderboard details repos),
``Meta-Llama-3_1-70B-Instruct`` (a bare name), ``gpt-4o(eval_results/gpt4o)`` (a name with a provenance tag).
:func:`resolve` applies, in order:

1. the user's alias file ``$TASKSPACE_HOME/aliases.toml`` (same format as the packaged one; it wins);
2. the packaged file :data:`ALIASES_FILE` (``indexer/data/aliases.toml``): known bare names -> Hub repo ids,
   and the names and name patterns of API-only models;
3. rules: a trailing ``(...)`` provenance tag is dropped; a Hub reference ``hf://org/name`` or
   ``https://huggingface.co/org/name`` (a revision or sub-path after it dropped) and a huggingface_hub cache path
   ``.../models--org--name/snapshots/<sha>`` (an lm-eval run of a downloaded snapshot) become ``org/name``; leaderboard details naming
   (``open-llm-leaderboard/<org>__<name>-details``, ``details_<org>__<name>``) and ``org__name`` / ``org--name``
   become ``org/name`` when the result is a valid Hub repo id; a name that already is ``org/name`` stays.

A name none of these maps stays as given (``kind`` ``"name"``: not known to be open or API-only). A name is read
in Unicode NFC first: ``Café-7B`` with a precomposed ``é`` and with ``e`` plus a combining accent (macOS, some
exports) is one model, stored under the NFC key (before, two model rows that look the same).

The alias file format (TOML)::

    [hub]                                   # a source's name = the Hub repo id it is
    "Meta-Llama-3_1-8B-Instruct" = "meta-llama/Llama-3.1-8B-Instruct"

    [api]                                   # models served only through an API (no Hub repo)
    names = ["mistral-large-latest"]
    patterns = ["gpt-4*", "claude-*"]       # shell-style, case-insensitive

The SQL store keeps every name it was given in ``model_aliases`` (alias -> model row), so one model is one row
whatever its sources call it; its outcomes from several sources are merged like repeats of one source.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import re
import tomllib
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError, noun

ALIASES_FILE = Path(__file__).parent / "data" / "aliases.toml"
USER_FILE = "aliases.toml"  # in TASKSPACE_HOME

#: a Hub repo id "org/name": ASCII only ([A-Za-z0-9._-], as the Hub allows; ``\w`` alone is Unicode and took
#: "org/модель" for one), to the end of the string (``$`` would also end before a trailing newline)
_REPO = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+\Z", re.ASCII)
_TAG = re.compile(r"^(.*?)\s*\([^()]*\)$")
#: a Hub reference as tools and users write it: ``hf://ORG/NAME`` (huggingface_hub's file system, vLLM, DuckDB), the
#: repo's page ``https://huggingface.co/ORG/NAME`` (with or without the scheme; ``/tree/main``, ``@REV`` after it)
_HUB_URL = re.compile(r"^(?:hf://|(?:https?://)?(?:www\.)?huggingface\.co/)(?:models/)?([^/@?#\s]+)/([^/@?#\s]+)"
                      r"(?:[@/?#].*)?\Z", re.IGNORECASE | re.DOTALL)
#: the huggingface_hub cache folder of a model repo, ``.../hub/models--ORG--NAME/snapshots/SHA``: an lm-eval run given
#: a downloaded snapshot's path (``pretrained=$(hf download ORG/NAME)``) names its model by it
_HF_CACHE = re.compile(r"(?:^|[/\\])models--([A-Za-z0-9][\w.\-]*?)--([\w.\-]+?)(?:[/\\].*)?\Z", re.ASCII | re.DOTALL)
_DETAILS = (re.compile(r"^open-llm-leaderboard(?:-old)?/details_(.+)$"),
            re.compile(r"^open-llm-leaderboard(?:-old)?/(.+)-details$"),
            re.compile(r"^details_(.+)$"))

#: model kinds: ``hub`` (a Hub repo id: open weights), ``api`` (served only through an API), ``name`` (unknown)
KINDS = ("hub", "api", "name")


@dataclass(frozen=True)
class Identity:
    """What a source's model name resolves to: the storage ``key``, its ``hub_id`` (None when it has none),
    ``kind`` (one of :data:`KINDS`) and ``rule`` (what mapped it: ``user``, ``known``, ``rule``, ``as-given``)."""

    name: str
    key: str
    hub_id: str | None
    kind: str
    rule: str

    @property
    def api_only(self) -> bool:
        return self.kind == "api"


def is_repo_id(name: str) -> bool:
    """True for ``org/name`` strings the Hub accepts as model repo ids."""
    return bool(_REPO.match(name)) and ".." not in name and len(name) <= 96 and not name.endswith((".", "-"))


@dataclass(frozen=True)
class AliasTable:
    """Parsed alias files: ``hub`` (lowercased name -> repo id), ``api_names`` (lowercased), ``api_patterns``."""

    hub: dict
    api_names: frozenset
    api_patterns: tuple

    @classmethod
    def parse(cls, path: Path) -> "AliasTable":
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8-sig"))  # a byte-order mark (Notepad) is no error
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"not valid TOML: {exc}; see indexer/data/aliases.toml for the format", file=str(path)) from exc
        except UnicodeDecodeError as exc:  # TOML is UTF-8: a file saved in Latin-1 (a name with "é")
            from .records import utf8_position

            raise InputError(f"not UTF-8 text ({utf8_position(exc)}); TOML files are UTF-8: save it as UTF-8",
                             file=str(path)) from exc
        except OSError as exc:
            raise InputError(f"cannot read the alias file: {exc}", file=str(path)) from exc
        unknown = set(data) - {"hub", "api"}
        if unknown:
            raise InputError(f"unknown {noun(len(unknown), 'section')} {sorted(unknown)}; use [hub] and [api]", file=str(path))
        for section in ("hub", "api"):  # `hub = 5`: a value where a table belongs
            if section in data and not isinstance(data[section], dict):
                raise InputError(f"{section} must be a table ([{section}]), not {type(data[section]).__name__}; see "
                                 "indexer/data/aliases.toml for the format", file=str(path))
        hub = {}
        for name, repo in (data.get("hub") or {}).items():
            if not isinstance(repo, str) or not is_repo_id(repo):
                raise InputError(f"[hub] {name!r} = {repo!r} is not a Hub repo id (ORG/NAME)", file=str(path))
            hub[name.lower()] = repo
        api = data.get("api") or {}
        names, patterns = api.get("names") or [], api.get("patterns") or []
        for what, items in (("names", names), ("patterns", patterns)):
            if not isinstance(items, list) or not all(isinstance(x, str) and x for x in items):
                raise InputError(f"[api] {what} must be a list of non-empty strings", file=str(path))
        return cls(hub, frozenset(n.lower() for n in names), tuple(p.lower() for p in patterns))

    def lookup(self, name: str) -> tuple[str, str | None] | None:
        """``("hub", repo)``, ``("api", None)`` or None for a name this table does not know."""
        low = name.lower()
        if low in self.hub:
            return "hub", self.hub[low]
        if low in self.api_names or (self._patterns is not None and self._patterns.match(low)):
            return "api", None
        return None

    @functools.cached_property
    def _patterns(self) -> "re.Pattern | None":
        """The api patterns as one regular expression (what ``any(fnmatchcase(low, p) for p in patterns)`` tests)."""
        if not self.api_patterns:
            return None
        return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in self.api_patterns))


@functools.lru_cache(maxsize=1)
def packaged() -> AliasTable:
    return AliasTable.parse(ALIASES_FILE)


@functools.lru_cache(maxsize=8)
def _user(path: str, mtime: float) -> AliasTable:
    return AliasTable.parse(Path(path))


def _user_file(home: Path | None) -> tuple[str, float] | None:
    """(path, mtime) of the user's alias file in ``home`` (default ``TASKSPACE_HOME``); None when there is none."""
    if home is None:
        from .config import get_settings

        home = get_settings().home
    path = Path(home) / USER_FILE
    try:
        return str(path), path.stat().st_mtime
    except OSError:
        return None


def user_table(home: Path | None = None) -> AliasTable | None:
    """The user's alias file in ``TASKSPACE_HOME`` (None when there is none); re-read when it changes."""
    found = _user_file(home)
    return None if found is None else _user(*found)


def _rules(name: str) -> str | None:
    """The Hub repo id the naming rules derive from ``name`` (None: none)."""
    for pat in (_HUB_URL, _HF_CACHE):
        m = pat.match(name) if pat is _HUB_URL else pat.search(name)
        if m and m.group(1).lower() not in ("datasets", "spaces"):
            cand = f"{m.group(1)}/{m.group(2)}"
            return cand if is_repo_id(cand) and "--" not in cand else None  # the Hub allows no "--" in an id
    for pat in _DETAILS:
        m = pat.match(name)
        if m:
            name = m.group(1)
            break
    for sep in ("__", "--"):
        if sep in name and "/" not in name:
            org, _, rest = name.partition(sep)
            cand = f"{org}/{rest}"
            if is_repo_id(cand):
                return cand
    return name if is_repo_id(name) else None


def resolve(name: str, tables: list[AliasTable] | None = None) -> Identity:
    """The :class:`Identity` of a source's model name (see the module docstring). ``tables``: the alias tables to
    consult first (default: the user's file, then the packaged one)."""
    if not isinstance(name, str) or not name.strip():
        raise InputError("a model needs a non-empty name", item=repr(name))
    if tables is None:
        tables = [t for t in (user_table(), packaged()) if t is not None]
    base = name.strip()
    if not base.isascii():  # one model for the two spellings of one text (precomposed or combining accents)
        base = unicodedata.normalize("NFC", base)
    m = _TAG.match(base)
    stripped = m.group(1).strip() if m and m.group(1).strip() else base
    for i, table in enumerate(tables):
        for cand in dict.fromkeys((base, stripped)):
            got = table.lookup(cand)
            if got is not None:
                kind, repo = got
                rule = "user" if i == 0 and len(tables) > 1 else "known"
                if kind == "hub":
                    return Identity(name, repo, repo, "hub", rule)
                return Identity(name, stripped, None, "api", rule)
    repo = _rules(stripped)
    if repo is not None:
        return Identity(name, repo, repo, "hub", "rule" if repo != name else "as-given")
    return Identity(name, stripped, None, "name", "rule" if stripped != name else "as-given")


@functools.lru_cache(maxsize=8)
def _stamp(user: str | None, mtime: float | None) -> str:
    h = hashlib.sha256(Path(__file__).read_bytes())  # the rules themselves
    h.update(ALIASES_FILE.read_bytes())
    if user is not None:
        try:
            h.update(b"\x00" + Path(user).read_bytes())
        except OSError:
            pass
    return h.hexdigest()[:32]


def rules_stamp(home: Path | None = None) -> str:
    """A digest of everything :func:`resolve` depends on besides the name: this module's rules, the packaged alias
    file and the user's. A key checked under one stamp (``models.identity_stamp``) needs no new check until it
    changes (:meth:`indexer.store.sql.Store.merge_model_names`)."""
    return _stamp(*(_user_file(home) or (None, None)))


def resolve_many(names) -> dict[str, Identity]:
    """:func:`resolve` for each distinct name (the alias files read once)."""
    tables = [t for t in (user_table(), packaged()) if t is not None]
    return {n: resolve(n, tables) for n in dict.fromkeys(names)}
