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

Local paths are stored absolute. ``taskspace index --source SPEC`` appends to this file (once).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import ConfigError
from .ingest import spec_kind

_KEYS = {"spec", "format", "limit"}


@dataclass(frozen=True)
class SourceSpec:
    spec: str
    format: str | None = None
    limit: int | None = None

    @property
    def is_hub(self) -> bool:
        return spec_kind(self.spec) != "path"


def normalise(spec: str) -> str:
    """Local paths become absolute; ``hub:`` / ``hub-org:`` specs are kept as given."""
    spec = spec.strip()
    if not spec:
        raise ConfigError("a source spec is empty; give a path, hub:ORG/REPO or hub-org:ORG")
    kind = spec_kind(spec)
    if kind != "path":
        name = spec.split(":", 1)[1]
        if not name or (kind == "hub" and name.count("/") != 1):
            raise ConfigError(f"source {spec!r}: write hub:ORG/REPO for a dataset or hub-org:ORG for an organisation")
        return spec
    return str(Path(spec).expanduser().resolve())


def load(path: Path) -> list[SourceSpec]:
    """The configured sources (empty when the file does not exist)."""
    if not path.exists():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix or delete the file") from None
    items = data.get("source", [])
    if not isinstance(items, list):
        raise ConfigError(f"{path}: 'source' must be an array of tables ([[source]])")
    out = []
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict) or "spec" not in item:
            raise ConfigError(f"{path}: source #{n} needs a 'spec' (a path, hub:ORG/REPO or hub-org:ORG)")
        unknown = set(item) - _KEYS
        if unknown:
            raise ConfigError(f"{path}: source #{n} has unknown key(s) {sorted(unknown)}; allowed: {sorted(_KEYS)}")
        limit = item.get("limit")
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise ConfigError(f"{path}: source #{n} limit must be a positive integer")
        try:
            spec = normalise(str(item["spec"]))
        except ConfigError as exc:
            raise ConfigError(f"{path}: source #{n}: {exc}") from None
        out.append(SourceSpec(spec=spec, format=item.get("format"), limit=limit))
    return out


def save(path: Path, sources: list[SourceSpec]) -> None:
    """Write the configuration atomically."""
    import tomli_w

    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"source": [{k: v for k, v in asdict(s).items() if v is not None} for s in sources]}
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(tomli_w.dumps(doc), encoding="utf-8")
    os.replace(tmp, path)


def add(path: Path, specs: list[SourceSpec]) -> list[SourceSpec]:
    """Append sources not configured yet (same spec = same source; a new format/limit replaces the old)."""
    current = load(path)
    by_spec = {s.spec: s for s in current}
    for s in specs:
        s = SourceSpec(spec=normalise(s.spec), format=s.format, limit=s.limit)
        by_spec[s.spec] = s
    merged = list(by_spec.values())
    if merged != current:
        save(path, merged)
    return merged
