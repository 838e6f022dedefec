"""The published record set: the files of a Hub dataset of taskspace records, written from and read back into
records (pyarrow for Parquet; no store, no Hub, no encoder here).

Files (``FILES``):

- ``spaces.parquet``: one row per embedding space: its name (``space``), SQL ``key``, ``encoder`` id
  (``name@revision``), ``encoder_name``, ``encoder_revision``, ``encoder_dim``, ``dim``, ``lam``, ``eps``,
  ``method``, ``params`` (JSON), ``layout`` (JSON: the vector's parts, :func:`layout`), the calibration
  (``calibration_a``, ``calibration_b``, ``calibration_n_cells``, ``calibration_n_models``, ``calibration_spread``;
  null when the space has none), ``n_models``, ``created_at``.
- ``models/<space>.parquet``: one row per model record (:data:`MODEL_COLUMNS`, and :data:`MODEL_OPTIONAL`).
- ``patterns/<space>.parquet``: the posterior factors of the space's coverage patterns (:data:`PATTERN_COLUMNS`,
  float32 as stored), which with a record's ``pattern``, ``model_lambda`` and ``noise`` give its score's variance;
  and (:data:`PATTERN_OBSERVED`, optional when read) ``observed``: which indexed prompts the pattern's models were
  observed on, one bit per row of ``prompts/<space>.parquet`` in its order (numpy ``packbits``, little bit order:
  row ``j`` is bit ``j % 8`` of byte ``j // 8``; padding bits 0), so that a pulled index computes each model's
  coverage of a query as the publisher does from its outcomes (:func:`pattern_masks`, :func:`read`).
- ``prompts/<space>.parquet`` (when the space has indexed prompts; :func:`read` requires it when the space's
  ``benchmarks.parquet`` rows count any): one row per indexed prompt: ``hash`` (sha256 of
  its text; the text is not published), ``benchmarks``, ``vector`` (its index row). taskspace fills a question typed
  without its answer options from the 50 of these nearest by question (:mod:`indexer.query`).
- ``benchmarks.parquet``: one row per (benchmark, space): name, group, metric, prompt count and the benchmark's
  vector (the mean of its prompts' index rows).
- ``README.md``: the dataset card (:func:`card`).

:func:`read` validates everything before returning anything: missing files or columns, and bad rows (wrong
dimension, NaN or infinite entries, unknown pattern) are :class:`~indexer.errors.InputError`s naming the file and
row; nothing is returned half.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from .errors import ConfigError, InputError, UnknownSpaceError, arg, counted, noun
from .records import parameter_count

SPACES = "spaces.parquet"
BENCHMARKS = "benchmarks.parquet"
CARD = "README.md"
MODELS_DIR = "models"
PATTERNS_DIR = "patterns"
PROMPTS_DIR = "prompts"
MAX_REPORTED = 20

MODEL_COLUMNS = (
    "model", "aliases", "hub_repo_id", "kind", "model_revision", "sources", "author", "license", "num_parameters", "pipeline_tag", "library",
    "tags", "gated", "downloads", "likes", "base_model", "created_at", "last_modified",
    "space", "encoder", "encoder_revision", "dim", "method", "lam", "eps", "vector", "layout",
    "pattern", "model_lambda", "noise", "n_prompts", "benchmarks", "inputs_digest", "computed_at", "taskspace_version",
)
#: written since a model's size may be its base model's: ``num_parameters_from``, the repo whose parameter count
#: ``num_parameters`` is when it is not the model's own (a PEFT adapter's: its base model's; null: its own, or none);
#: optional when read (records of an older taskspace, which sized no model by its base, pull with it null)
MODEL_OPTIONAL = ("num_parameters_from",)
#: the columns of ``models/<space>.parquet`` in the order written (the optional ones beside what they qualify)
MODEL_WRITTEN = tuple(c for col in MODEL_COLUMNS for c in ((col, *MODEL_OPTIONAL) if col == "num_parameters" else (col,)))
PATTERN_COLUMNS = ("key", "n", "width", "rank", "free", "mc_seen", "free_seen", "mu", "w", "V", "K", "Cinv")
#: written since pulled indexes tell coverage: the pattern's observed prompts, a bitmask over the prompts file's rows
#: (binary; null: not known); optional when read (a record set without it pulls with coverage unknown, as before)
PATTERN_OBSERVED = ("observed",)
BENCHMARK_COLUMNS = ("benchmark", "group", "source_task", "metric", "num_fewshot", "config", "prompt_count", "space",
                     "vector", "n_prompts", "computed_at")
SPACE_COLUMNS = ("space", "key", "encoder", "encoder_name", "encoder_revision", "encoder_dim", "dim", "lam", "eps",
                 "method", "params", "layout", "calibration_a", "calibration_b", "calibration_n_cells",
                 "calibration_n_models", "calibration_spread", "n_models", "created_at")
#: written since the level/deviation calibration (indexer.posterior.Calibration.level ...); optional when read
SPACE_OPTIONAL = ("calibration_level", "calibration_specific", "calibration_shared")
#: written since the coverage-aware map (indexer.posterior.Calibration.uncovered); optional (null: one weight) when read
SPACE_COVERAGE = ("calibration_uncovered",)
#: written since the bend of the map's logit (indexer.posterior.Calibration.knots): its knots, two list<float64> of one
#: length, increasing; optional (null: no bend) when read
SPACE_BEND = ("calibration_knots_z", "calibration_knots_logit")
#: written since intervals cap the models' lambdas (indexer.posterior.Calibration.lam_cap): float64, positive;
#: optional (null: each model's own lambda) when read
SPACE_CAP = ("calibration_lam_cap",)
#: written since intervals widen where a model has no evidence near the query (indexer.posterior.Calibration.
#: region_var): float64, at least 0; optional (null: none) when read
SPACE_REGION = ("calibration_region_var",)
#: written since intervals widen where no model links a model's benchmarks to the query's (indexer.posterior.
#: Calibration.links): list<list<string>>, the groups of benchmark names; optional (null: one group) when read
SPACE_LINKS = ("calibration_links",)
#: the space's prior (the models' mean normal, ``prior`` list<float64>, and how many models it is the mean of), so a
#: pulled index folds a query as the one it was published from (indexer.posterior.Calibration.fold); optional
SPACE_PRIOR = ("prior", "prior_models")


def models_file(space: str) -> str:
    return f"{MODELS_DIR}/{space}.parquet"


def patterns_file(space: str) -> str:
    return f"{PATTERNS_DIR}/{space}.parquet"


def prompts_file(space: str) -> str:
    return f"{PROMPTS_DIR}/{space}.parquet"


PROMPT_COLUMNS = ("hash", "benchmarks", "vector")


def is_managed(path: str) -> bool:
    """True for a repo file a publish writes (and may delete): the card, the two tables and the per-space files."""
    return path in (SPACES, BENCHMARKS, CARD) or (
        path.count("/") == 1 and path.split("/")[0] in (MODELS_DIR, PATTERNS_DIR, PROMPTS_DIR) and path.endswith(".parquet"))


# -------------------------------------------------------------------------------------------- the vector layout
def encoder_dim_of(dim: int, params: dict) -> int:
    """The encoder's dimension from a space's vector width and params (inverse of ``represent.index_dim``)."""
    from . import represent
    from .features import n_features

    extra = n_features(represent.feature_set(params)) + (1 if represent.has_intercept(params) else 0) + (
        1 if represent.has_formats(params) else 0) + represent.level_width(params)
    rest = int(dim) - extra
    return rest // 2 if represent.is_split(params) else rest


def layout(dim: int, params: dict) -> list[dict]:
    """The parts of a space's vectors, in order: ``{part, start, stop, query}`` where ``query`` says what the query
    row holds in those columns (a model record's score is record . query row)."""
    from . import represent

    d = encoder_dim_of(dim, params)
    parts: list[tuple[str, int, str]] = []
    fs = represent.feature_set(params)
    if represent.is_split(params):
        parts += [("e_q", d, "E(question): the embedding of the prompt's text before its answer-option block (the "
                             "whole text when it has none)"),
                  ("e_o", d, "E(options): the embedding of the option block (from its 'A.' line to the end); zeros "
                             "for a prompt without options" + ("" if represent.has_formats(params) else
                                                               " (multiple-choice-v1: E('(no options)'))"))]
        parts += [("f", 4, "is_mc, is_mc*log1p(question characters), is_mc*log1p(option characters), "
                           "is_mc*log(number of option lines); is_mc = 1 with an option block, else 0")]
    else:
        parts += [("e", d, "E(text): the embedding of the whole prompt")]
        if fs:
            parts += [("f", 2, "log1p(characters), log1p(lines)")]
    if represent.has_formats(params):
        parts += [("c_mc", 1, "is_mc (1 for a prompt with options)"), ("c_free", 1, "1 - is_mc")]
    elif represent.has_intercept(params):
        parts += [("c", 1, "1")]
    if represent.level_width(params) > 2:
        parts += [("prior_w", represent.prior_formats(params), "0 (the share of the model's observed prompts with answer "
                   "options, then without: the weights of the space's per-format priors in the model's own; a folded "
                   "query holds (shared - specific) u_f . row there)")]
    if represent.has_levels(params):
        parts += [("level", 1, "0 (the model's level, its mean signed outcome; the level/deviation calibration "
                               "folds a query to level - specific here)"),
                  ("prior_mu", 1, "0 (u . mu_i, the space prior at the model's pattern mean; a folded query holds "
                                  "-(shared - specific))")]
    out, at = [], 0
    for name, width, what in parts:
        out.append({"part": name, "start": at, "stop": at + width, "query": what})
        at += width
    if at != int(dim):
        raise InputError(f"the layout of method params {params} gives {at} columns, the space has {dim}")
    return out


def layout_string(parts: list[dict]) -> str:
    return " ".join(f"{p['part']}[{p['start']}:{p['stop']}]" for p in parts)


# -------------------------------------------------------------------------------------------- writing
def _iso(t) -> str | None:
    return t.isoformat() if t is not None else None


def _parquet(columns: dict, schema) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pydict(columns, schema=schema)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def _vectors(rows: list[np.ndarray], dtype="float32"):
    """A pyarrow list<float32> column from equal or unequal length vectors, without a Python loop per entry."""
    import pyarrow as pa

    lengths = np.array([np.size(r) for r in rows], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    if lengths.sum() >= 2**31:
        raise InputError("a vector column of more than 2^31 floats: publish fewer spaces at once")
    flat = np.concatenate([np.asarray(r, dtype=dtype).ravel() for r in rows]) if rows else np.zeros(0, dtype=dtype)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat))


def models_table(records: list[dict], vectors: np.ndarray) -> bytes:
    """``models/<space>.parquet`` from record dicts (every :data:`MODEL_COLUMNS` but ``vector``) and (M, dim)
    float32 vectors."""
    import pyarrow as pa

    s = pa.string()
    schema = pa.schema([
        ("model", s), ("aliases", pa.list_(s)), ("hub_repo_id", s), ("kind", s), ("model_revision", s), ("sources", pa.list_(s)), ("author", s),
        ("license", s),
        ("num_parameters", pa.int64()), ("num_parameters_from", s), ("pipeline_tag", s), ("library", s), ("tags", pa.list_(s)), ("gated", s),
        ("downloads", pa.int64()), ("likes", pa.int64()), ("base_model", s), ("created_at", s), ("last_modified", s),
        ("space", s), ("encoder", s), ("encoder_revision", s), ("dim", pa.int32()), ("method", s), ("lam", pa.float64()),
        ("eps", pa.float64()), ("vector", pa.list_(pa.float32())), ("layout", s), ("pattern", s),
        ("model_lambda", pa.float64()), ("noise", pa.float64()), ("n_prompts", pa.int64()),
        ("benchmarks", pa.list_(pa.struct([("name", s), ("accuracy", pa.float64()), ("n", pa.int64())]))),
        ("inputs_digest", s), ("computed_at", s), ("taskspace_version", s),
    ])
    cols = {c: [r.get(c) for r in records] for c in MODEL_WRITTEN if c != "vector"}
    cols["vector"] = _vectors(list(vectors))
    return _parquet({c: cols[c] for c in MODEL_WRITTEN}, schema)


def pattern_masks(observed: dict[str, set[str]], hashes: list[str]) -> dict[str, bytes]:
    """pattern key -> the ``observed`` column of :func:`patterns_table`: one bit per prompt row of
    :func:`prompts_table` (whose rows are ``hashes`` sorted), set where the pattern's models were observed on it."""
    rows = sorted(hashes)
    out = {}
    for key, seen in observed.items():
        bits = np.fromiter((h in seen for h in rows), dtype=bool, count=len(rows))
        out[key] = np.packbits(bits, bitorder="little").tobytes()
    return out


def patterns_table(patterns: list, observed: dict[str, bytes] | None = None) -> bytes:
    """``patterns/<space>.parquet`` from :class:`indexer.posterior.PatternPosterior` (as stored: float32), with each
    pattern's ``observed`` bitmask when known (:func:`pattern_masks`; null otherwise)."""
    import pyarrow as pa

    f = pa.list_(pa.float32())
    schema = pa.schema([("key", pa.string()), ("n", pa.int64()), ("width", pa.int32()), ("rank", pa.int32()),
                        ("free", pa.int32()), ("mc_seen", pa.bool_()), ("free_seen", pa.bool_()), ("mu", f), ("w", f),
                        ("V", f), ("K", f), ("Cinv", f), ("observed", pa.binary())])
    ps = sorted(patterns, key=lambda p: p.key)
    f4 = lambda a: None if a is None else np.asarray(a, dtype=np.float32).ravel().tolist()  # noqa: E731
    cols = {"key": [p.key for p in ps], "n": [int(p.n) for p in ps], "width": [int(np.shape(p.V)[0]) for p in ps],
            "rank": [int(np.shape(p.V)[1]) for p in ps],
            "free": [0 if p.K is None else int(np.shape(p.K)[1]) for p in ps],
            "mc_seen": [bool(p.formats[0]) for p in ps], "free_seen": [bool(p.formats[1]) for p in ps],
            "mu": _vectors([p.mu for p in ps]), "w": _vectors([p.w for p in ps]), "V": _vectors([p.V for p in ps]),
            "K": [f4(p.K) for p in ps], "Cinv": [f4(p.Cinv) for p in ps],
            "observed": [(observed or {}).get(p.key) for p in ps]}
    return _parquet(cols, schema)


def prompts_table(hashes: list[str], benchmarks: list[list[str]], vectors: list[np.ndarray]) -> bytes:
    """``prompts/<space>.parquet``: the index rows of a space's prompts, by text hash (sorted)."""
    import pyarrow as pa

    schema = pa.schema([("hash", pa.string()), ("benchmarks", pa.list_(pa.string())),
                        ("vector", pa.list_(pa.float32()))])
    order = sorted(range(len(hashes)), key=lambda i: hashes[i])
    return _parquet({"hash": [hashes[i] for i in order], "benchmarks": [list(benchmarks[i]) for i in order],
                     "vector": _vectors([vectors[i] for i in order])}, schema)


def benchmarks_table(rows: list[dict]) -> bytes:
    import pyarrow as pa

    s = pa.string()
    schema = pa.schema([("benchmark", s), ("group", s), ("source_task", s), ("metric", s), ("num_fewshot", pa.int64()),
                        ("config", s), ("prompt_count", pa.int64()), ("space", s), ("vector", pa.list_(pa.float32())),
                        ("n_prompts", pa.int64()), ("computed_at", s)])
    cols = {c: [r.get(c) for r in rows] for c in BENCHMARK_COLUMNS if c != "vector"}
    cols["vector"] = _vectors([r["vector"] for r in rows])
    return _parquet({c: cols[c] for c in BENCHMARK_COLUMNS}, schema)


def spaces_table(rows: list[dict]) -> bytes:
    import pyarrow as pa

    s, f, i = pa.string(), pa.float64(), pa.int64()
    schema = pa.schema([("space", s), ("key", s), ("encoder", s), ("encoder_name", s), ("encoder_revision", s),
                        ("encoder_dim", i), ("dim", i), ("lam", f), ("eps", f), ("method", s), ("params", s),
                        ("layout", s), ("calibration_a", f), ("calibration_b", f), ("calibration_n_cells", i),
                        ("calibration_n_models", i), ("calibration_spread", f), ("n_models", i), ("created_at", s),
                        ("calibration_level", f), ("calibration_specific", f), ("calibration_shared", f),
                        ("prior", pa.list_(f)), ("prior_models", i), ("calibration_uncovered", f),
                        ("calibration_knots_z", pa.list_(f)), ("calibration_knots_logit", pa.list_(f)),
                        ("calibration_lam_cap", f), ("calibration_region_var", f),
                        ("calibration_links", pa.list_(pa.list_(s)))])
    return _parquet({c: [r.get(c) for r in rows]
                     for c in (SPACE_COLUMNS + SPACE_OPTIONAL + SPACE_PRIOR + SPACE_COVERAGE + SPACE_BEND + SPACE_CAP
                               + SPACE_REGION + SPACE_LINKS)},
                    schema)


# -------------------------------------------------------------------------------------------- reading
def _links(value, where: str, errors) -> tuple[tuple[str, ...], ...] | None:
    """A spaces row's ``calibration_links`` (:data:`SPACE_LINKS`) as :attr:`indexer.posterior.Calibration.links`, or
    None (null, or not at least two groups of names each named once: an error added for ``where``)."""
    if value is None:
        return None
    groups = list(value) if isinstance(value, (list, tuple)) else []
    names = [b for g in groups if isinstance(g, (list, tuple)) for b in g]
    if (len(groups) < 2 or not all(isinstance(g, (list, tuple)) and g for g in groups)
            or not all(isinstance(b, str) and b for b in names) or len(set(names)) != len(names)):
        errors.add(where, "calibration_links must be null or at least two non-empty lists of benchmark names, each "
                   f"name in one list only, not {value!r}")
        return None
    return tuple(sorted(tuple(sorted(g)) for g in groups))


@dataclass
class SpaceRecords:
    """One space read back from the files, validated. ``models``: upsert_models dicts; ``vectors``: ModelVector."""

    spec: object
    row: dict
    calibration: object | None
    models: list[dict] = field(default_factory=list)
    vectors: list = field(default_factory=list)
    patterns: list = field(default_factory=list)
    benchmarks: list[dict] = field(default_factory=list)
    benchmark_vectors: list = field(default_factory=list)
    created_at: datetime | None = None
    #: model key -> every name its sources gave it (the SQL model_aliases), its key included
    aliases: dict[str, list[str]] = field(default_factory=dict)
    #: the space's prior (vector, n_models), when published with it (:data:`SPACE_PRIOR`)
    prior: tuple | None = None
    #: the indexed prompts' (hash, benchmarks, index row), for the prompts collection
    prompts: list[tuple[str, list[str], np.ndarray]] = field(default_factory=list)
    #: pattern key -> the hashes of the indexed prompts its models were observed on (:data:`PATTERN_OBSERVED`), for
    #: the patterns the records say it of; None: a record set published without it (coverage unknown when pulled)
    coverage: dict[str, list[str]] | None = None


#: what to do about a record file that is missing, cut short or damaged (a partial upload or copy), said once after the
#: problems (:meth:`_Errors.raise_if_any`)
_INCOMPLETE = ("the record set is incomplete or damaged (a partial upload, download or copy): fetch the whole record "
               "set again (of a Hub dataset, another revision with @REVISION), or have its publisher publish again, "
               "which rewrites its files")


class _Errors:
    def __init__(self):
        self.items: list[str] = []
        self.incomplete = False  # a file missing or unreadable: :data:`_INCOMPLETE` is said once

    def add(self, where: str, message: str) -> None:
        self.items.append(f"{where}: {message}")

    def raise_if_any(self, root) -> None:
        if self.items:
            more = f" (and {len(self.items) - MAX_REPORTED} more)" if len(self.items) > MAX_REPORTED else ""
            raise InputError(f"{counted(len(self.items), 'problem')} in the records, nothing was imported: "
                             + "; ".join(self.items[:MAX_REPORTED]) + more
                             + (f"; {_INCOMPLETE}" if self.incomplete else ""), item=str(root))


def _read_table(root: Path, name: str, columns: tuple, errors: _Errors):
    import pyarrow.parquet as pq

    path = root / name
    if not path.is_file():
        errors.add(name, "file is missing")
        errors.incomplete = True
        return None
    try:
        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable Parquet is bad input
        # Parquet's reason without the file's path (named already: a Hub cache snapshot's folder for a Hub dataset),
        # so the cut keeps the reason; before, the path filled the 200 characters and the reason was lost
        why = " ".join(str(exc).replace(f"'{path}'", "").replace(str(path), "").split()).replace(" :", ":")
        errors.add(name, f"not a readable Parquet file: cut short or damaged ({type(exc).__name__}: {why[:300]})")
        errors.incomplete = True
        return None
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        errors.add(name, f"missing {noun(len(missing), 'column')} {', '.join(missing)}")
        return None
    # each column taskspace writes must hold (or cast safely to) the type it writes (int32 read as int64 is fine, a
    # string where a list of floats belongs is not): the checks below read values of those types
    written = _written_schema(name)
    wrong = []
    for c in table.column_names:
        if c not in written.names or table.schema.field(c).type == written.field(c).type:
            continue
        try:
            table = table.set_column(table.column_names.index(c), c, table.column(c).cast(written.field(c).type))
        except (ArithmeticError, NotImplementedError, TypeError, ValueError):  # pyarrow's ArrowInvalid is a ValueError
            wrong.append(f"{c} is {table.schema.field(c).type}, not {written.field(c).type}")
    if wrong:
        errors.add(name, f"{noun(len(wrong), 'column')} of the wrong type: {'; '.join(wrong)} (not the records `taskspace publish` "
                   "writes, or a damaged copy: fetch the record set again)")
        return None
    return table


def _written_schema(name: str):
    """The Parquet schema taskspace writes for the record file ``name`` (that of an empty file of its kind)."""
    import pyarrow.parquet as pq

    if name == SPACES:
        data = spaces_table([])
    elif name == BENCHMARKS:
        data = benchmarks_table([])
    elif name.startswith(f"{MODELS_DIR}/"):
        data = models_table([], np.zeros((0, 1), dtype=np.float32))
    elif name.startswith(f"{PATTERNS_DIR}/"):
        data = patterns_table([])
    else:
        data = prompts_table([], [], [])
    return pq.read_schema(io.BytesIO(data))


def _vector_column(table, name: str, file: str, dims, labels: list[str], errors: _Errors) -> list[np.ndarray | None]:
    """The list<float> column ``name`` as float32 arrays; a row of the wrong length (``dims``: an int or one per row),
    null, NaN or infinite is reported by row and comes back None."""
    import pyarrow.compute as pc

    col = table.column(name).combine_chunks()
    n = len(col)
    out: list[np.ndarray | None] = [None] * n
    if n == 0:
        return out
    lengths = pc.list_value_length(col).to_numpy(zero_copy_only=False)
    flat = np.asarray(pc.list_flatten(col).to_numpy(zero_copy_only=False), dtype=np.float32)
    valid = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False))
    at = 0
    for i in range(n):
        want = dims if isinstance(dims, int) else dims[i]
        if not valid[i]:
            errors.add(f"{file}: row {i} ({labels[i]})", f"{name} is missing")
            continue
        k = int(lengths[i])
        v = flat[at:at + k]
        at += k
        if want is not None and k != want:
            errors.add(f"{file}: row {i} ({labels[i]})", f"{name} has {k} entries, expected {want}")
        elif not np.isfinite(v).all():
            errors.add(f"{file}: row {i} ({labels[i]})", f"{name} has NaN or infinite entries")
        else:
            out[i] = v
    return out


#: the longest text of each record column taskspace stores, the width of its SQL column (indexer.store.sql_models:
#: PostgreSQL refuses a longer one, failing the whole pull; SQLite would keep what PostgreSQL refuses); a list's every
#: text (``aliases``, a prompt's ``benchmarks``) is held to it
MODEL_TEXT_LIMITS = {"model": 512, "aliases": 512, "kind": 16, "model_revision": 128, "author": 256, "license": 256,
                     "pipeline_tag": 128, "library": 128, "gated": 16, "base_model": 512, "num_parameters_from": 512,
                     "pattern": 64, "inputs_digest": 64}
BENCHMARK_TEXT_LIMITS = {"benchmark": 512, "group": 256, "source_task": 512, "metric": 128}
PATTERN_TEXT_LIMITS = {"key": 64}
PROMPT_TEXT_LIMITS = {"hash": 64, "benchmarks": 512}


def _too_long(row: dict, limits: dict[str, int]) -> str | None:
    """What is wrong with the first text of a record row longer than its column holds (``limits``), or None."""
    for c, width in limits.items():
        v = row.get(c)
        for text in (v if isinstance(v, (list, tuple)) else [v]):
            if isinstance(text, str) and len(text) > width:
                return (f"{c} has {len(text)} characters, more than the {width} taskspace stores (a damaged or "
                        "hand-made copy?)")
    return None


def _nul_column(row: dict) -> str | None:
    """The first column of a record row whose text holds a NUL character (PostgreSQL refuses it in any text, and a
    name holding one cannot be asked for), or None. Lists and structs (``benchmarks``, ``aliases``) are looked into."""

    def has_nul(v) -> bool:
        if isinstance(v, str):
            return "\x00" in v
        if isinstance(v, dict):
            return any(has_nul(x) for x in v.values())
        if isinstance(v, (list, tuple)):
            return any(has_nul(x) for x in v)
        return False

    return next((c for c, v in row.items() if has_nul(v)), None)


def _time(value, where: str, errors: _Errors):
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except (TypeError, ValueError):
        errors.add(where, f"{value!r} is not an ISO time")
        return None


def _finite(x) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def records_not_results(where: str, spec: str) -> str:
    """What ingesting a published record set (a ``repo`` or ``folder`` holding :data:`SPACES`) is told: these are
    model records, not per-sample results, and ``taskspace pull SPEC`` loads them."""
    return (f"this {where} holds {SPACES}: published taskspace model records, not per-sample results; load them with "
            f"`taskspace pull {spec}`")


def space_names(root: Path, want: list[str] | None = None) -> list[str]:
    """The spaces (by index name) the space table of the record set in ``root`` lists; with ``want``, an
    :class:`UnknownSpaceError` naming the first of them it does not list (as :func:`read` raises it)."""
    root = Path(root)
    errors = _Errors()
    st = _read_table(root, SPACES, SPACE_COLUMNS, errors)
    errors.raise_if_any(root)
    known = [r["space"] for r in st.select(["space"]).to_pylist()]
    _check_wanted(known, want)
    return known


def files_needed(root: Path, spaces: list[str]) -> list[str]:
    """The files of the record set in ``root`` that :func:`read` needs for ``spaces`` (index names), from its space
    and benchmark tables (both in ``root``): those two, each space's models and patterns, and its prompts where the
    benchmark rows count indexed prompts. A pull from the Hub cache offline checks them before reading."""
    errors = _Errors()
    bt = _read_table(Path(root), BENCHMARKS, BENCHMARK_COLUMNS, errors)
    errors.raise_if_any(root)
    rows = bt.select(["space", "n_prompts"]).to_pylist()
    out = [SPACES, BENCHMARKS]
    for name in spaces:
        out += [models_file(name), patterns_file(name)] + ([prompts_file(name)] if _indexed(rows, name) else [])
    return out


def _indexed(b_rows: list[dict], space: str) -> int:
    """How many indexed prompts the benchmark rows count in ``space`` (its benchmark vectors are their means): a
    space with any has a prompts file."""
    return sum(int(b["n_prompts"] or 0) for b in b_rows if b["space"] == space)


def _check_wanted(known: list, want: list[str] | None) -> None:
    unknown = [s for s in want or [] if s not in known]
    if unknown:  # a bad option value (exit 2, naming it), as `--space` of publish, check and reindex
        raise UnknownSpaceError(f"{arg('space', unknown[0])} is not a space of the records; they hold "
                                f"{', '.join(map(str, known)) or 'none'} (by index name)")


def read(root: Path, spaces: list[str] | None = None) -> list[SpaceRecords]:
    """Every space of the record set in the folder ``root`` (or those named in ``spaces``), validated (see the
    module docstring); :class:`InputError` listing every problem by file and row, and nothing returned, otherwise."""
    from .posterior import Calibration, PatternPosterior
    from .space import SpaceSpec
    from .store.sql import BenchmarkVector, ModelVector

    root = Path(root)
    errors = _Errors()
    st = _read_table(root, SPACES, SPACE_COLUMNS, errors)
    bt = _read_table(root, BENCHMARKS, BENCHMARK_COLUMNS, errors)
    errors.raise_if_any(root)
    out: list[SpaceRecords] = []
    rows = st.to_pylist()
    known = [r["space"] for r in rows]
    if not rows:
        raise InputError(f"{SPACES} lists no space: nothing to pull", item=str(root))
    twice = sorted({k for k in known if known.count(k) > 1})
    if twice:
        raise InputError(f"{SPACES} lists {noun(len(twice), 'space')} {', '.join(map(str, twice))} more than once", item=str(root))
    _check_wanted(known, spaces)
    b_rows = [dict(r, vector=None) for r in bt.drop_columns(["vector"]).to_pylist()]
    b_dims = []
    by_space = {r["space"]: r for r in rows}
    for r in b_rows:
        sp = by_space.get(r["space"])
        b_dims.append(int(sp["dim"]) if sp and sp.get("dim") else None)
        if sp is None:
            errors.add(f"{BENCHMARKS}: row {len(b_dims) - 1} ({r['benchmark']})", f"unknown space {r['space']!r}")
    b_vecs = _vector_column(bt, "vector", BENCHMARKS, b_dims, [str(r["benchmark"]) for r in b_rows], errors)
    b_seen: set = set()
    for j, r in enumerate(b_rows):  # one row per (benchmark, space): a second one would fail the pull's SQL write
        if (r["benchmark"], r["space"]) in b_seen:
            errors.add(f"{BENCHMARKS}: row {j} ({r['benchmark']})", f"a second record of this benchmark in space "
                       f"{r['space']}")
            b_vecs[j] = None
        b_seen.add((r["benchmark"], r["space"]))
    for i, r in enumerate(rows):
        if spaces and r["space"] not in spaces:
            continue
        where = f"{SPACES}: row {i} ({r.get('space')})"
        try:
            params = json.loads(r["params"] or "{}")
            spec = SpaceSpec(r["encoder"], float(r["lam"]), float(r["eps"]), r["method"], params, int(r["dim"]))
            if spec.key != r["key"] or spec.name != r["space"]:
                errors.add(where, "its key or name does not match its encoder, dim, lambda, eps, method and params")
                continue
            layout(spec.dim, params)  # settings this version knows (a newer one may add feature sets, levels)
        except ConfigError as exc:  # before ValueError: a setting of another (newer) version, not bad input
            from . import __version__

            errors.add(where, f"its settings are not known to this taskspace ({__version__}): "
                       f"{str(exc).split(' (the space was built')[0]}; another, likely newer, taskspace published these records: "
                       "upgrade taskspace to pull them")
            continue
        except (TypeError, ValueError, InputError) as exc:
            errors.add(where, f"bad space settings ({exc})")
            continue
        cal = None
        if r.get("calibration_a") is not None:
            folded = [r.get(c) for c in SPACE_OPTIONAL]
            folded = [float(x) for x in folded] if all(x is not None for x in folded) else [None, None, None]
            unc = r.get("calibration_uncovered") if folded[0] is not None else None
            folded.append(None if unc is None else float(unc))
            kz, kl = (r.get(c) if folded[0] is not None else None for c in SPACE_BEND)
            knots = None
            if kz is not None or kl is not None:
                kz, kl = (np.asarray(k if k is not None else [], dtype=np.float64) for k in (kz, kl))
                if (kz.size < 2 or kz.shape != kl.shape or not np.isfinite(kz).all() or not np.isfinite(kl).all()
                        or (np.diff(kz) <= 0).any() or (np.diff(kl) <= 0).any()):
                    errors.add(where, "calibration_knots_z and calibration_knots_logit must be two increasing lists of "
                               "finite numbers of one length (at least 2)")
                else:
                    knots = (tuple(map(float, kz)), tuple(map(float, kl)))
            cap = r.get("calibration_lam_cap")
            if cap is not None and not (math.isfinite(float(cap)) and float(cap) > 0):
                errors.add(where, f"calibration_lam_cap must be a positive number, not {cap!r}")
                cap = None
            region = r.get("calibration_region_var") if folded[0] is not None else None
            if region is not None and not (math.isfinite(float(region)) and float(region) >= 0):
                errors.add(where, f"calibration_region_var must be a number at least 0, not {region!r}")
                region = None
            links = _links(r.get("calibration_links") if region is not None else None, where, errors)
            cal = Calibration(float(r["calibration_a"]), float(r["calibration_b"]), int(r["calibration_n_cells"] or 0),
                              int(r["calibration_n_models"] or 0), float(r["calibration_spread"] or 0.0), *folded,
                              knots=knots, lam_cap=None if cap is None else float(cap),
                              region_var=None if region is None else float(region), links=links)
            if not all(math.isfinite(x) for x in (cal.a, cal.b, cal.spread, *(x for x in folded if x is not None))):
                errors.add(where, "calibration has NaN or infinite entries")
        rec = SpaceRecords(spec, r, cal, created_at=_time(r.get("created_at"), where, errors))
        if r.get("prior") is not None:
            u = np.asarray(r["prior"], dtype=np.float64)
            from . import represent

            F = represent.prior_formats(spec.params)  # a prior per answer format: F rows, flattened
            if (np.isfinite(u).all() and 0 < u.shape[0] < F * int(spec.dim) and u.shape[0] % F == 0
                    and int(r.get("prior_models") or 0) > 0):
                rec.prior = (u, int(r["prior_models"]))
            else:
                errors.add(where, "its prior is not a finite vector shorter than the space's (one per answer format)")
        # patterns
        pname = patterns_file(spec.name)
        pt = _read_table(root, pname, PATTERN_COLUMNS, errors)
        keys = set()
        masks: dict[str, tuple[int, bytes]] = {}  # pattern key -> (its row, its observed bitmask)
        if pt is not None:
            prow = pt.drop_columns(["mu", "w", "V"]).to_pylist()
            for j, p in enumerate(prow):
                if p.get("observed") is not None and p["key"]:
                    masks[p["key"]] = (j, bytes(p["observed"]))
            labels = [f"pattern {p['key']}" for p in prow]
            mus = _vector_column(pt, "mu", pname, [p["width"] + p["free"] for p in prow], labels, errors)
            ws = _vector_column(pt, "w", pname, [p["rank"] for p in prow], labels, errors)
            Vs = _vector_column(pt, "V", pname, [p["width"] * p["rank"] for p in prow], labels, errors)
            for j, p in enumerate(prow):
                if mus[j] is None or ws[j] is None or Vs[j] is None:
                    continue
                if _nul_column(p):
                    errors.add(f"{pname}: row {j} ({labels[j]})", f"{_nul_column(p)} holds a NUL character (no database "
                               "takes it)")
                    continue
                if _too_long(p, PATTERN_TEXT_LIMITS):
                    errors.add(f"{pname}: row {j} ({labels[j][:80]})", _too_long(p, PATTERN_TEXT_LIMITS))
                    continue
                if p["key"] in keys:  # one row per pattern: a second one would fail the pull's SQL write
                    errors.add(f"{pname}: row {j} ({labels[j]})", "a second record of this pattern")
                    continue
                K = Cinv = None
                if p["free"]:
                    K = np.asarray(p["K"] or [], dtype=np.float32)
                    Cinv = np.asarray(p["Cinv"] or [], dtype=np.float32)
                    if K.size != p["width"] * p["free"] or Cinv.size != p["free"] ** 2:
                        errors.add(f"{pname}: row {j} ({labels[j]})", "K or Cinv has the wrong size")
                        continue
                    K, Cinv = K.reshape(p["width"], p["free"]), Cinv.reshape(p["free"], p["free"])
                keys.add(p["key"])
                rec.patterns.append(PatternPosterior(key=p["key"], n=int(p["n"]), mu=mus[j], w=ws[j],
                                                     V=Vs[j].reshape(p["width"], p["rank"]), K=K, Cinv=Cinv,
                                                     formats=(bool(p["mc_seen"]), bool(p["free_seen"]))))
        # models
        mname = models_file(spec.name)
        mt = _read_table(root, mname, MODEL_COLUMNS, errors)
        if mt is not None:
            mrows = mt.drop_columns(["vector"]).to_pylist()
            if r.get("n_models") is not None and int(r["n_models"]) != len(mrows):  # publish writes n_models = rows
                errors.add(mname, f"holds {counted(len(mrows), 'model record')}, but {SPACES} counts {int(r['n_models'])} for "
                           f"space {spec.name}: the copy is incomplete or mixed (a file from another publish); fetch "
                           "the whole record set again")
            labels = [f"model {m['model']}" for m in mrows]
            vecs = _vector_column(mt, "vector", mname, int(spec.dim), labels, errors)
            seen = set()
            for j, (m, v) in enumerate(zip(mrows, vecs)):
                w = f"{mname}: row {j} ({labels[j]})"
                if not m["model"] or not isinstance(m["model"], str):
                    errors.add(w, "model is missing")
                    continue
                if _nul_column(m):
                    errors.add(w, f"{_nul_column(m)} holds a NUL character (no database takes it)")
                    continue
                if _too_long(m, MODEL_TEXT_LIMITS):  # before, PostgreSQL failed the pull naming no row
                    errors.add(f"{mname}: row {j} (model {m['model'][:80]})", _too_long(m, MODEL_TEXT_LIMITS))
                    continue
                if m["model"] in seen:
                    errors.add(w, "a second record of this model")
                    continue
                seen.add(m["model"])
                if m["space"] != spec.name:
                    errors.add(w, f"space {m['space']!r} is not the file's space {spec.name}")
                # against a patterns file that was read: one that could not be is its own problem, not every record's
                if pt is not None and m["pattern"] is not None and m["pattern"] not in keys:
                    errors.add(w, f"pattern {m['pattern']} is not in {pname}")
                for c in ("model_lambda", "noise"):
                    if m[c] is not None and not (math.isfinite(m[c]) and m[c] >= 0):
                        errors.add(w, f"{c} is {m[c]}, not a finite number >= 0")
                if m["n_prompts"] is None or m["n_prompts"] < 0:
                    errors.add(w, "n_prompts is missing or negative")
                bench = list(m["benchmarks"] or [])
                bad_n = next((b for b in bench if b.get("n") is not None and b["n"] < 0), None)
                if bad_n is not None:
                    errors.add(w, f"benchmark {bad_n['name']} has n {bad_n['n']}, not a count >= 0")
                if v is None or bad_n is not None:
                    continue
                rec.aliases[m["model"]] = sorted({m["model"], *[a for a in (m["aliases"] or []) if a]})
                rec.models.append({"key": m["model"], "kind": m["kind"] or "name", "revision": m["model_revision"],
                                   # in lower case, as this taskspace stores a card's license (an older publisher
                                   # wrote "MIT" as the card did; `--license MIT` reads "mit" and missed it)
                                   "author": m["author"], "license": m["license"] and m["license"].lower(),
                                   "num_parameters": parameter_count(m["num_parameters"]),  # 0: unknown
                                   # whose count it is (a record of an older taskspace has no such column: its count
                                   # is the repo's own, as that taskspace sized no model by its base)
                                   "num_parameters_from": m.get("num_parameters_from"),
                                   "pipeline_tag": m["pipeline_tag"],
                                   "library": m["library"], "tags": m["tags"], "gated": m["gated"],
                                   "downloads": m["downloads"], "likes": m["likes"], "base_model": m["base_model"],
                                   "created_at": _time(m["created_at"], w, errors),
                                   "last_modified": _time(m["last_modified"], w, errors)})
                rec.vectors.append(ModelVector(
                    m["model"], v, int(m["n_prompts"] or 0), [b["name"] for b in bench],
                    {b["name"]: float(b["accuracy"]) for b in bench if b["accuracy"] is not None},
                    m["inputs_digest"], _time(m["computed_at"], w, errors), m["pattern"], _finite(m["model_lambda"]),
                    _finite(m["noise"]),
                    # the outcome cells per benchmark (before, dropped: a pulled home showed every n as unknown)
                    {b["name"]: int(b["n"]) for b in bench if b.get("n") is not None} or None))
        # prompts: written whenever the space indexed prompts, which its benchmark rows' n_prompts count (a benchmark
        # vector is the mean of its prompts' rows); a copy without the file would pull silently and then fill no
        # question's answer options and tell no model's coverage, so it is refused (a space that indexed none, and a
        # set whose benchmark rows count no prompt, need none)
        qname = prompts_file(spec.name)
        indexed = _indexed(b_rows, spec.name)
        if indexed and not (root / qname).is_file():
            errors.add(qname, f"file is missing, though {BENCHMARKS} counts {counted(indexed, 'indexed prompt')} in space "
                       f"{spec.name}: the copy is incomplete; fetch the whole record set again")
        if (root / qname).is_file():
            qt = _read_table(root, qname, PROMPT_COLUMNS, errors)
            if qt is not None:
                qrows = qt.drop_columns(["vector"]).to_pylist()
                qvecs = _vector_column(qt, "vector", qname, int(spec.dim), [f"prompt {q['hash']}" for q in qrows],
                                       errors)
                for j, (q, v) in enumerate(zip(qrows, qvecs)):
                    if not q["hash"] or not q["benchmarks"]:
                        errors.add(f"{qname}: row {j}", "hash or benchmarks is missing")
                    elif _nul_column(q):
                        errors.add(f"{qname}: row {j}", f"{_nul_column(q)} holds a NUL character (no database takes it)")
                    elif _too_long(q, PROMPT_TEXT_LIMITS):
                        errors.add(f"{qname}: row {j}", _too_long(q, PROMPT_TEXT_LIMITS))
                    elif v is not None:
                        rec.prompts.append((q["hash"], list(q["benchmarks"]), v))
                if masks:
                    rec.coverage = _coverage(masks, [q["hash"] for q in qrows], pname, errors)
        elif masks:
            errors.add(pname, f"its observed bitmasks index the rows of {qname}, which is missing")
        for j, b in enumerate(b_rows):
            if b["space"] != spec.name or b_vecs[j] is None:
                continue
            w = f"{BENCHMARKS}: row {j} ({b['benchmark']})"
            if _nul_column(b):
                errors.add(w, f"{_nul_column(b)} holds a NUL character (no database takes it)")
                continue
            if _too_long(b, BENCHMARK_TEXT_LIMITS):
                errors.add(f"{BENCHMARKS}: row {j} ({b['benchmark'][:80]})", _too_long(b, BENCHMARK_TEXT_LIMITS))
                continue
            try:
                config = json.loads(b["config"]) if b["config"] else {}
            except ValueError:
                errors.add(w, "config is not JSON")
                continue
            rec.benchmarks.append({"name": b["benchmark"], "group": b["group"], "source_task": b["source_task"],
                                   "metric": b["metric"], "num_fewshot": b["num_fewshot"], "config": config})
            rec.benchmark_vectors.append(BenchmarkVector(b["benchmark"], b_vecs[j], int(b["n_prompts"] or 0),
                                                         _time(b["computed_at"], w, errors)))
        out.append(rec)
    errors.raise_if_any(root)
    return out


def _coverage(masks: dict[str, tuple[int, bytes]], hashes: list, pname: str, errors: _Errors) -> dict[str, list[str]]:
    """pattern key -> the prompt hashes its ``observed`` bitmask sets (over the prompts file's rows ``hashes``); a
    bitmask of the wrong length, with a padding bit set or a bit on a row without a valid hash is reported."""
    out = {}
    n = len(hashes)
    valid = np.array([isinstance(h, str) and len(h) == 64 and all(c in "0123456789abcdef" for c in h)
                      for h in hashes], dtype=bool)
    for key, (j, raw) in masks.items():
        where = f"{pname}: row {j} (pattern {key})"
        if len(raw) != (n + 7) // 8:
            errors.add(where, f"observed has {counted(len(raw), 'byte')}, not one bit per prompt row ({(n + 7) // 8} bytes)")
            continue
        bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little").astype(bool)
        if bits[n:].any():
            errors.add(where, "observed has a bit set past the last prompt row")
            continue
        bits = bits[:n]
        if (bits & ~valid).any():
            errors.add(where, "observed marks a prompt row whose hash is not a sha256 hex digest")
            continue
        out[key] = [hashes[i] for i in np.flatnonzero(bits)]
    return out


def digest(root: Path) -> str:
    """sha256 over the managed files of a folder (the revision of a folder pull)."""
    h = hashlib.sha256()
    for p in sorted(Path(root).rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and is_managed(rel):
            h.update(rel.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()
