"""Settings: one typed object built on first use from ``TASKSPACE_*`` environment variables.

Nothing is read at import time. ``get_settings()`` builds the object on first use and caches it while the
``TASKSPACE_*`` variables stay the same (a change of one builds it again); ``reset_settings()`` forgets it.
Every variable is documented in ``docs/CONFIGURATION.md``; keep that table and ``ENV_VARS`` in step.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ConfigError

#: name -> (default shown in the docs, description). The docs table is generated from this.
ENV_VARS: dict[str, tuple[str, str]] = {
    "TASKSPACE_HOME": ("./.taskspace", "Data directory: SQLite file, local Qdrant folder, embedding cache, sources.toml (the sources a pass reads, with their format, limit and reading options: docs/WORKER.md)."),
    "TASKSPACE_DATABASE_URL": ("sqlite:///$TASKSPACE_HOME/taskspace.db", "SQLAlchemy URL of the SQL store (e.g. postgresql+psycopg://user@host/db; postgresql:// and postgres:// mean psycopg too; its ?connect_timeout=N, in seconds, defaults to 5; a SQLite URL's ?timeout=N, how long a writer waits for another's lock, to 30)."),
    "TASKSPACE_QDRANT_URL": ("(unset: embedded in $TASKSPACE_HOME/qdrant)", "URL of a Qdrant server; unset uses the embedded engine (TASKSPACE_QDRANT_ENGINE) in a folder, one process at a time."),
    "TASKSPACE_QDRANT_ENGINE": ("edge", "Embedded vector engine: `edge` (Qdrant Edge, Qdrant's own engine in-process: memory-mapped, exact search, payload indexes) or `local` (qdrant-client's pure-Python local mode: loads every point when it opens a collection, filters in Python; slow above about 20,000 points). An index written by one is not read by the other: `taskspace reindex` rebuilds it."),
    "TASKSPACE_QDRANT_API_KEY": ("(unset)", "API key for the Qdrant server."),
    "TASKSPACE_ENCODER": ("all-MiniLM-L6-v2", "Sentence-transformer: a known name (all-MiniLM-L6-v2, all-mpnet-base-v2), a local folder, or a Hub model id. Each encoder (with `TASKSPACE_METHOD`) is a space of its own: `taskspace index` builds and updates the configured one, searches without `--space` take it (else the newest space, with a warning), and the others stay as they are (`taskspace spaces` lists them, their stale models and the command that re-solves each; `taskspace spaces drop NAME` removes one). One model named two ways is two encoders (the id is `name@revision`: a Hub id's revision is its commit, a folder's a fingerprint of its files), so two spaces and every prompt embedded twice: name it one way in every pass. A snapshot folder of the Hugging Face cache (`.../models--ORG--NAME/snapshots/COMMIT`, where a Hub id's model is downloaded) is recognised and warned of, naming the Hub id; a copy elsewhere (`huggingface-cli download --local-dir`, a copied folder) is not, its files not saying which Hub model they are."),
    "TASKSPACE_ENCODER_DEVICE": ("cpu", "torch device for the encoder (cpu, cuda, ...)."),
    "TASKSPACE_BATCH_SIZE": ("64", "Encoder batch size."),
    "TASKSPACE_CACHE_DIR": ("$TASKSPACE_HOME/cache", "Embedding cache directory (one store per encoder)."),
    "TASKSPACE_LAMBDA": ("1.0", "Tikhonov regularisation lambda of the `paper` method. The other methods choose lambda per model by generalised cross-validation and ignore it (a warning says so where it is set)."),
    "TASKSPACE_EPS": ("0.0", "Singular-value threshold eps of the solver (components whose singular value is below it "
                             "are dropped). One past sqrt(number of stored prompts) (sqrt(2 x that) under `auto-mc`: a "
                             "question and its options a prompt) drops every component of every model: `taskspace index` "
                             "refuses it, naming the bound."),
    "TASKSPACE_METHOD": ("auto-mc", "Solver method: `auto-mc` (`auto-mean` with multiple-choice prompts embedded as their question and their answer options apart plus four option covariates; on prompts without an option block it is `auto-mean`; a query without options takes the options of the 50 most similar indexed questions; a model is never extrapolated to an answer format it was not measured on; indexer/represent.py, docs/RESULTS.md), `auto-mean` (`auto` with every model shrunk toward the models' mean normal, which is stored with the space and re-estimated when the models added, changed or removed since reach a quarter of those it was estimated from; below 5 models it is `auto`), `auto` (centred, per-model intercept, lambda chosen per model by generalised cross-validation), `auto-text` (`auto` plus two unpenalised prompt-length covariates, indexer/features.py; better on held-out benchmark prompts, unreliable for queries much shorter than the indexed prompts) or `paper` (the paper's exact method with TASKSPACE_LAMBDA / TASKSPACE_EPS)."),
    "TASKSPACE_LOG_LEVEL": ("(unset: WARNING; worker and serve INFO)", "Log level (DEBUG, INFO, WARNING, ERROR, CRITICAL). Unset, CLI commands log at WARNING (`-v`: INFO) and `taskspace worker` / `serve` at INFO."),
    "TASKSPACE_TEST_POSTGRES_URL": ("postgresql+psycopg://postgres@127.0.0.1:5432/test", "Tests only: the PostgreSQL the SQL tests use (each test in its own schema)."),
    "TASKSPACE_REQUIRE_POSTGRES": ("(unset)", "Tests only: 1 makes the PostgreSQL tests fail instead of skip when the server is unreachable (.ci/run sets it)."),
    "TASKSPACE_REQUIRE_SHARED": ("(unset)", "Tests only: 1 makes the real-dataset tests fail instead of skip when ../shared/data is missing (.ci/run sets it)."),
    "TASKSPACE_REQUIRE_BROWSER": ("(unset)", "Tests only: 1 (or CI set) makes the search page's browser test fail instead of skip when chromium is missing (.ci/run sets it and installs chromium)."),
    "TASKSPACE_CHROMIUM": ("/usr/bin/chromium", "Tests only: the chromium the browser test drives (Playwright with executable_path)."),
    "TASKSPACE_ARTIFACTS": ("/tmp/taskspace-artifacts", "Tests only: where the browser test writes its screenshots."),
    "TASKSPACE_TEST_SCRIPT": ("(unset: the venv's taskspace)", "Tests only: the taskspace console script the CLI tests run (scripts/mutants.py points it at a copy)."),
    "TASKSPACE_TEST_CACHE": ("(unset)", "Tests only: an embedding cache folder to keep across test sessions (default: a fresh folder per session)."),
    "HF_TOKEN": ("(unset)", "Hugging Face token (read by huggingface_hub, without spaces or a newline around it; never logged; its older name `HUGGING_FACE_HUB_TOKEN` is read when HF_TOKEN is unset). `hf auth login` works too. `taskspace publish` needs one with write access (docs/PUBLISHING.md). A token no request can carry (a character that is not ASCII: a pasted `…` or non-breaking space) is a configuration error naming where it came from (exit 2), before any request; it stops every Hub request, Hub metadata fetches too: an ingest or pass stores its local results with one warning and no model's licence, size or gate until the token is fixed."),
    "HF_ENDPOINT": ("https://huggingface.co", "Hub endpoint (read by huggingface_hub); tests point it at a local server."),
    "HF_HUB_OFFLINE": ("0", "Set to 1 (or true, yes, on) to forbid any Hub request (the encoder loads from installed packages anyway); TRANSFORMERS_OFFLINE set so counts the same."),
    "HTTPS_PROXY": ("(unset)", "Proxy for Hub requests to an https:// endpoint (HTTP_PROXY for an http:// one, ALL_PROXY for either when the other is unset; lower-case names too), read as httpx reads it; a socks5:// proxy needs the socksio package (a proxy the Hub client cannot use is a configuration error naming the variable, exit 2)."),
    "NO_PROXY": ("(unset)", "Hosts the Hub requests go to directly, not through HTTPS_PROXY/HTTP_PROXY/ALL_PROXY, as httpx and curl read it: comma-separated names (`example.com` also covers its subdomains), `host:port`, IP addresses, CIDR ranges (`10.0.0.0/8`), `*` for every host; e.g. the mirror HF_ENDPOINT names."),
}


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of the SQLite file at ``path``, its path percent-quoted: SQLAlchemy reads a ``?`` as the
    start of the URL's query and decodes ``%XX``, so a home named ``h?x`` put the database in a file ``h`` beside it
    (outside the home) and one named ``h%41`` looked for the folder ``hA``."""
    quoted = "".join({"%": "%25", "?": "%3F", "#": "%23"}.get(c, c) for c in str(path))  # the rest reads as written
    return f"sqlite:///{quoted}"


#: query parameters of a URL that hold a secret, masked like the password: a database's (libpq's connection
#: parameters, :func:`indexer.store.sql_migrate.safe_url`), a Qdrant server's (an API key, :func:`mask_url`)
SECRET_PARAMS = {"password", "sslpassword", "api_key", "api-key"}


def url_secrets(url) -> set[str]:
    """The secrets of ``url`` as a message may show them: its password (all of it up to the host, an '@' in it not
    percent-encoded included) and the values of its query's secret parameters (:data:`SECRET_PARAMS`, which
    :func:`indexer.store.sql_migrate.safe_url` and :func:`mask_url` mask), each as written and percent-decoded."""
    from urllib.parse import parse_qsl, quote, unquote, urlsplit

    try:
        parts = urlsplit(str(url))
        found = [parts.password]
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        found, query = [], []
    found.extend(value for key, value in query if key.lower() in SECRET_PARAMS)
    return {form for secret in found if secret for form in (secret, unquote(secret), quote(unquote(secret), safe=""))}


def mask_url(url: str | None) -> str | None:
    """``url`` with the password of its user part masked (``http://user:***@host:6333``) and the values of its query's
    secret parameters (``?api_key=***``, ``password``: :data:`SECRET_PARAMS`, as
    ``safe_url`` masks them), for messages and logs. Before, a key given in the query was shown."""
    if not url:
        return url
    from urllib.parse import unquote, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        if parts.password is not None:
            host = parts.hostname or ""
            netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
            parts = parts._replace(netloc=netloc)
        query = "&".join(f"{p.partition('=')[0]}=***" if unquote(p.partition("=")[0]).lower() in SECRET_PARAMS else p
                         for p in parts.query.split("&"))
        return urlunsplit(parts._replace(query=query))
    except ValueError:
        return "<unparseable URL>"


def mask_secrets(text: str, url: str | None) -> str:
    """``text`` with the secrets of ``url`` (:func:`url_secrets`: its password, a
    ``?password=`` / ``sslpassword=`` / ``api_key=`` value) replaced by ``***`` where they stand as such: before a
    host (``user:SECRET@``) and as a parameter (``password=SECRET``, ``sslpassword='SECRET'``, ``api_key=SECRET``), as a
    client's error may show them. Before, only the password before the host was masked, and wherever its text appeared: a short
    one (``a``) garbled every word holding it."""
    import re

    for secret in sorted(url_secrets(url) if url else (), key=len, reverse=True):
        s = re.escape(secret)
        text = re.sub(rf"(?<=:){s}(?=@)", "***", text)
        text = re.sub(rf"(?i)(\b(?:(?:ssl)?password|api[_-]key)\s*=\s*['\"]?){s}(?=['\"&\s,;:)]|$)", r"\1***", text)
    return text


def _float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number; set it to e.g. {default}") from None
    if not math.isfinite(value):  # nan passed the `< 0` checks and failed every pass later as an "invalid space"
        raise ConfigError(f"{name}={raw!r} is not a finite number; set it to e.g. {default}")
    return value


def _int(name: str, default: int, minimum: int = 1) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not an integer; set it to e.g. {default}") from None
    if value < minimum:
        raise ConfigError(f"{name}={value} must be at least {minimum}")
    return value


#: the largest lambda / eps the solver takes (TASKSPACE_LAMBDA, TASKSPACE_EPS, `evaluate --lambda/--eps`): far beyond
#: any use (the Gram's eigenvalues of unit-length prompt rows are at most the number of prompts; the GCV grid ends at
#: 1e4), and safe: at 1e308 the solver's 2 lambda overflowed and every prediction was NaN
PENALTY_MAX = 1e12


def check_penalty(name: str, value, sep: str = " ") -> float:
    """``value`` as a float, or a ConfigError ``"{name}{sep}{value}: must be ..."`` (an option, or a variable with
    ``sep`` "=") when it is not a finite number in ``[0, PENALTY_MAX]``."""
    value = float(value)
    if not (math.isfinite(value) and 0 <= value <= PENALTY_MAX):
        raise ConfigError(f"{name}{sep}{value}: must be a finite number >= 0 and at most {PENALTY_MAX:g}")
    return value


@dataclass(frozen=True)
class Settings:
    home: Path
    database_url: str
    qdrant_url: str | None = field(repr=False)
    qdrant_api_key: str | None = field(repr=False)
    encoder: str
    encoder_device: str
    batch_size: int
    cache_dir: Path
    lam: float
    eps: float
    log_level: str
    method: str = "auto-mc"
    qdrant_engine: str = "edge"

    @property
    def qdrant_path(self) -> Path:
        """Folder of the embedded Qdrant (Qdrant Edge, or qdrant-client's local mode)."""
        return self.home / "qdrant"

    @property
    def sources_file(self) -> Path:
        """The indexing worker's source configuration (TOML)."""
        return self.home / "sources.toml"

    @property
    def is_default_database(self) -> bool:
        return "TASKSPACE_DATABASE_URL" not in os.environ or not os.environ["TASKSPACE_DATABASE_URL"]

    @classmethod
    def from_env(cls) -> "Settings":
        _warn_unknown_variables()
        for name in _TEXT_SETTINGS:  # a value of spaces only: before, TASKSPACE_HOME=" " made a folder named " "
            raw = os.environ.get(name)
            if raw and not raw.strip():
                raise ConfigError(f"{name}={raw!r} is blank; set a value, or unset it (or set it empty) for the default")
        home = Path(os.environ.get("TASKSPACE_HOME") or "./.taskspace").expanduser().resolve()
        db = os.environ.get("TASKSPACE_DATABASE_URL") or sqlite_url(home / "taskspace.db")
        lam = check_penalty("TASKSPACE_LAMBDA", _float("TASKSPACE_LAMBDA", 1.0), "=")
        eps = check_penalty("TASKSPACE_EPS", _float("TASKSPACE_EPS", 0.0), "=")
        level = (os.environ.get("TASKSPACE_LOG_LEVEL") or "INFO").upper()
        if level not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ConfigError(f"TASKSPACE_LOG_LEVEL={level!r}: use DEBUG, INFO, WARNING, ERROR or CRITICAL")
        cache = os.environ.get("TASKSPACE_CACHE_DIR")
        from .space import METHODS  # the method registry (a light import: no numpy)

        method = (os.environ.get("TASKSPACE_METHOD") or "auto-mc").strip().lower()
        if method not in METHODS:
            raise ConfigError(f"TASKSPACE_METHOD={method!r}: use one of {', '.join(METHODS)}")
        if os.environ.get("TASKSPACE_LAMBDA") and METHODS[method].select is not None:
            import logging

            logging.getLogger(__name__).warning(
                "TASKSPACE_LAMBDA is set but TASKSPACE_METHOD=%s chooses lambda per model by generalised "
                "cross-validation and ignores it; it is the paper method's only (TASKSPACE_METHOD=paper)", method)
        engine = (os.environ.get("TASKSPACE_QDRANT_ENGINE") or "edge").strip().lower()
        if engine not in ("edge", "local"):
            raise ConfigError(f"TASKSPACE_QDRANT_ENGINE={engine!r}: use edge (Qdrant Edge) or local (qdrant-client)")
        cache_dir = Path(cache).expanduser().resolve() if cache else home / "cache"
        _folder("TASKSPACE_HOME", home)
        if cache:
            _folder("TASKSPACE_CACHE_DIR", cache_dir)
        return cls(
            home=home,
            database_url=db,
            qdrant_url=os.environ.get("TASKSPACE_QDRANT_URL") or None,
            qdrant_api_key=os.environ.get("TASKSPACE_QDRANT_API_KEY") or None,
            encoder=os.environ.get("TASKSPACE_ENCODER") or "all-MiniLM-L6-v2",
            encoder_device=os.environ.get("TASKSPACE_ENCODER_DEVICE") or "cpu",
            batch_size=_int("TASKSPACE_BATCH_SIZE", 64),
            cache_dir=cache_dir,
            lam=lam,
            eps=eps,
            log_level=level,
            method=method,
            qdrant_engine=engine,
        )


#: the settings read as text (paths, URLs, names): one given as spaces only is a ConfigError (empty means the default)
_TEXT_SETTINGS = ("TASKSPACE_HOME", "TASKSPACE_DATABASE_URL", "TASKSPACE_QDRANT_URL", "TASKSPACE_QDRANT_API_KEY",
                  "TASKSPACE_ENCODER", "TASKSPACE_ENCODER_DEVICE", "TASKSPACE_CACHE_DIR")


def _warn_unknown_variables() -> None:
    """A warning for each ``TASKSPACE_*`` variable that is no setting (a typo: ``TASKSPACE_DATABASE_URI``), naming the
    setting it is closest to, and for a Qdrant API key without the server's URL. Before, both were ignored without a
    word: a pass meant for PostgreSQL (or a Qdrant server) indexed into the default SQLite file (or the embedded
    index)."""
    import difflib
    import logging

    known = {v.removeprefix("TASKSPACE_"): v for v in ENV_VARS if v.startswith("TASKSPACE_")}
    for name in sorted(os.environ):
        if name.startswith("TASKSPACE_") and name not in ENV_VARS:
            close = difflib.get_close_matches(name.removeprefix("TASKSPACE_"), list(known), n=1)
            logging.getLogger(__name__).warning(
                "%s is not a taskspace setting and is ignored%s (docs/CONFIGURATION.md lists them)", name,
                f"; did you mean {known[close[0]]}?" if close else "")
    if os.environ.get("TASKSPACE_QDRANT_API_KEY") and not os.environ.get("TASKSPACE_QDRANT_URL"):
        logging.getLogger(__name__).warning(
            "TASKSPACE_QDRANT_API_KEY is set but TASKSPACE_QDRANT_URL is not: the key is for a Qdrant server, and "
            "without its URL the embedded index in TASKSPACE_HOME is used and the key ignored")


def _folder(name: str, path: Path) -> None:
    """ConfigError when ``path`` (a setting's folder, created on first use) cannot be a folder: it, or the nearest of
    its parents that exists, is a file."""
    p = path
    while not p.exists() and p.parent != p:
        p = p.parent
    if p.exists() and not p.is_dir():
        what = "is a file" if p == path else f"cannot be created: {p} is a file"
        raise ConfigError(f"{name}={str(path)!r} {what}; set it to a folder (created when missing)")


def make_folder(name: str, path: Path) -> None:
    """Create a setting's folder (``TASKSPACE_HOME``, ``TASKSPACE_CACHE_DIR``) if missing; a folder that cannot be
    created (a read-only file system, no permission, a file in its way) is a ConfigError naming the setting, not an
    OSError traceback."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{name}={str(path)!r} cannot be created: {exc.strerror or exc}; set it to a folder you can "
                          "write (created when missing)") from None


def check_output_folder(path: Path, option: str, what: str) -> Path:
    """``path`` if files can be written there: a folder that exists and can be written, or a path that does not exist
    yet whose nearest existing parent is such a folder (it is created when written). Otherwise a ConfigError naming
    ``option`` (the caller's parameter, named as its caller wrote it: :func:`indexer.errors.arg`) with the path and
    what is wrong (``what``: what the folder is for, e.g. "the PNGs"), so a command fails before its work, not with a
    FileExistsError traceback at its end (``evaluate --plots``, ``publish --dry-run``)."""
    import os

    from .errors import arg

    flag = {"plots_dir": "--plots"}.get(option)
    named = arg(option, str(path), flag=flag, quote=False)

    probe = path
    while not (probe.exists() or probe.is_symlink()) and probe.parent != probe:
        probe = probe.parent
    if not probe.exists():  # a dangling symbolic link
        raise ConfigError(f"{named}: {probe} is a broken symbolic link; give a folder to write {what} into")
    if not probe.is_dir():
        where = "is a file" if probe == path else f"cannot be created: {probe} is a file"
        raise ConfigError(f"{named}: {where}; give a folder to write {what} into")
    if not os.access(probe, os.W_OK | os.X_OK):
        where = "cannot be written" if probe == path else f"cannot be created: {probe} cannot be written"
        raise ConfigError(f"{named}: {where} (permission denied); give a folder you can write")
    return path


def get_settings() -> Settings:
    """The settings of the environment as it is now: built from the ``TASKSPACE_*`` variables on first call and kept
    while they stay the same; a change of any of them (a program pointing ``TASKSPACE_HOME`` at a second home) builds
    them again on the next call. Before, they were read once per process: a second home's ``find_models`` answered
    from the first one's index without a word, unless the program knew to call :func:`reset_settings`."""
    return _settings_of(tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("TASKSPACE_"))))


@functools.lru_cache(maxsize=1)
def _settings_of(variables: tuple) -> Settings:
    """:meth:`Settings.from_env` for the ``TASKSPACE_*`` ``variables`` the environment holds (the cache's key)."""
    return Settings.from_env()


def reset_settings() -> None:
    """Forget the cached settings: the next :func:`get_settings` reads the environment again, even unchanged (a
    relative ``TASKSPACE_HOME`` resolved against a new working directory, a folder made since)."""
    _settings_of.cache_clear()


get_settings.cache_clear = reset_settings  # what it was called when get_settings was the cache itself


def env_table_markdown() -> str:
    """The Markdown table of every environment variable (docs/CONFIGURATION.md embeds it)."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name, (default, desc) in ENV_VARS.items():
        rows.append(f"| `{name}` | `{default}` | {desc} |")
    return "\n".join(rows)
