"""Everything that talks to the Hugging Face Hub. The only module that imports ``huggingface_hub``.

- :meth:`HubClient.model_info` -> a dict of model metadata for filters (the field names of
  ``Store.upsert_models``: key (the repo's id on the Hub now: for a renamed repo, whose old id the Hub redirects,
  its new id; for an id in another case, the repo's own spelling), revision, author,
  license, num_parameters (safetensors' total, else a GGUF repo's; None for packed quantized weights; with none of
  these, the count of the one base model its card names, e.g. a PEFT adapter's, which ``num_parameters_from`` then
  names; a count mostly of U8 bytes, bitsandbytes 4-bit's, gives way to that base's when larger), pipeline_tag,
  library, tags, downloads, likes, gated, created_at, last_modified, base_model; a card's value that is not text, or does not fit its SQL column, is None).
- :meth:`HubClient.list_datasets` (an organisation's datasets, e.g. ``open-llm-leaderboard``),
  :meth:`HubClient.repo_snapshot` (commit sha + file list at a revision) and :meth:`HubClient.download`
  (chosen files at that exact commit into ``$TASKSPACE_HOME/hub``; cached, so nothing is fetched twice, in one folder
  per repo whatever the case its id is asked in (:meth:`HubClient._held_as`); it records
  which commit the revision asked for was in the cache's ``refs``, as huggingface_hub does by branch; a cached file
  whose bytes do not match the checksum its blob is named by is downloaded again: :func:`_intact`; a commit gone
  since the listing, a force-push, is a :class:`RevisionGoneError` naming the file and the commit);
  :meth:`HubClient.keep_only` removes a repo's other revisions from the cache (publish and pull keep the one they
  read; so does an ingest, beside the revisions the home's other sources of the repo read), each holding
  :meth:`HubClient.using` (a lock per repo) from its download to its reading, so no other process removes what it
  reads. Offline,
  :meth:`HubClient.cached_snapshot` gives what the cache holds at a revision and ``download`` serves those files
  (``taskspace pull`` offline), naming the offline variable for what the cache lacks.
- The token comes from ``HF_TOKEN`` or the ``huggingface_hub`` login, read as huggingface_hub reads it (without the
  newline or spaces around it); it is never logged or put in a message.
  ``HF_ENDPOINT`` and ``HF_HUB_OFFLINE`` are read when a client is made (not at import).
- One place (:func:`_translate`) turns client errors into :mod:`indexer.errors`: 429 and 5xx (and dropped
  connections) are retried with exponential backoff (honouring ``Retry-After``), then :class:`HubUnavailableError`
  (:class:`HubUnreachableError` when no answer came at all, as for a refused connection, which is not retried;
  :class:`HubOutOfTimeError` when the deadline passed between huggingface_hub's own requests; each
  a :class:`HubOutageError`, on which a pull or an ingest reads the home's Hub cache);
  a gated repo -> :class:`GatedRepoError` saying which repo and how to request access; 401/403 ->
  GatedRepoError about the token, except a 401 to a read without a token (the Hub's answer to a missing repo as to a
  private one) -> :class:`~indexer.errors.HiddenRepoError`, a NotFoundError; 404 -> :class:`NotFoundError`.
- One retry layer, one deadline: every request huggingface_hub sends goes through :class:`_HubTransport` (installed
  with ``huggingface_hub.set_client_factory``). Inside a :class:`HubClient` operation it raises 408/429/5xx answers
  and failed connections as :class:`_Retryable`, which huggingface_hub does not retry itself (its own retries used to
  stack on these: 5 x 5 tries per file), so :meth:`HubClient._call` is the only layer that retries; and it starts no
  request, and reads no more of an answer coming in slower than :data:`LOW_SPEED` (a server trickling a file's
  bytes), once the operation's ``deadline`` (default 60 s from its start) has passed. After an operation gave up,
  the client's later operations are tried once each until one succeeds, so a failing Hub costs one deadline per
  ``hub-org:`` listing, not one per repo. (A body cut off mid-transfer is resumed by huggingface_hub, within the
  deadline.)
- Writing (``taskspace publish``, :mod:`indexer.publish`): :meth:`HubClient.check_write_access` (the token must exist
  and, by ``whoami``, not be a read-only one), :meth:`HubClient.create_dataset` (``HfApi.create_repo``, exist_ok) and
  :meth:`HubClient.commit` (one ``HfApi.create_commit`` of ``CommitOperationAdd``/``CommitOperationDelete``). A
  missing token is a :class:`~indexer.errors.ConfigError` (exit 2), a token without write access a
  :class:`~indexer.errors.GatedRepoError` (exit 4); both one line saying what to do. Commits are not retried (a
  commit whose answer was lost could otherwise land twice). huggingface_hub uploads LFS files by Xet whenever hf_xet is
  installed, whatever the server offers: a commit first asks the Xet write-token endpoint
  (:meth:`HubClient._xet_offered`) and, where it answers 404/405, gives huggingface_hub its files as buffers, which it
  uploads by LFS; an upload failing before the commit (hf_xet's own error, an LFS batch endpoint answering 404) is a
  :class:`HubError` naming it (:meth:`HubClient._upload_problem`), as is a Xet upload still running at the operation's
  deadline (hf_xet retries on its own, past it): :class:`_XetWatchdog` aborts it then.
- Nothing is written outside ``$TASKSPACE_HOME/hub``: every server-supplied revision must be a 40-hex-digit commit sha
  (a repo's ``sha``, a file's ``X-Repo-Commit``), a user's ``@REVISION`` a commit sha or a plain branch or tag
  name (:func:`is_valid_revision`), every repo file name a plain relative path (:func:`is_safe_repo_path`), and a
  file's ETag a plain token; anything else is refused before huggingface_hub uses it, and every downloaded path is
  checked to resolve inside the cache. (huggingface_hub 2.4.0 itself joins the server's ETag into the blob path and
  its commit header into ref and pointer paths: an endpoint answering ``../`` there makes it write outside the cache.
  taskspace refuses such answers at the transport, before huggingface_hub sees them, and refuses any path it gets
  back that resolves outside the cache.)
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import io
import logging
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from .errors import ConfigError, GatedRepoError, HiddenRepoError, HubError, NotFoundError
from .records import parameter_count

log = logging.getLogger(__name__)

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w\-.]{0,95}/[\w\-.]{1,96}\Z", re.ASCII)  # ASCII, as indexer.identity._REPO
RETRY_STATUS = (408, 429, 500, 502, 503, 504)
_SHA = re.compile(r"^[0-9a-f]{40}$")
#: the start of a commit sha, as git abbreviates one (at least 4 hex digits): offline, the cached commit it starts
_SHORT_SHA = re.compile(r"^[0-9a-f]{4,39}$")
#: a branch or tag name: parts of letters, digits and ``._-`` separated by ``/``, each starting with a letter or digit
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(?:/[A-Za-z0-9][A-Za-z0-9._-]{0,127}){0,7}$")
_ETAG = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$")


class _RevisionNotFound(NotFoundError):
    """The repo exists, the revision asked for does not (:meth:`HubClient.repo_snapshot` names it)."""


class RevisionGoneError(HubError):
    """The commit a repo was listed at is gone by the time its files are downloaded (its branch was force-pushed,
    its history squashed): :meth:`HubClient.download` names the file and the commit; listing the repo again reads
    the revision it has now (an ingest does so once)."""


class HubOutageError(HubError):
    """The Hub gave no usable answer however often it was asked: an outage, not an answer such as a 401/403/404 (a
    pull or an ingest falls back on the home's Hub cache then). ``reason``: what failed, without the advice the message ends with
    (the pull's warning gives it after ``outage``, what the Hub did)."""

    outage = "the Hub failed"

    def __init__(self, message: str, reason: str | None = None):
        super().__init__(message)
        self.reason = reason or message


class HubUnreachableError(HubOutageError):
    """The Hub endpoint cannot be connected to at all (DNS, refused, no network: not retried), or no answer came
    through the retries (timeouts, dropped connections)."""

    outage = "the Hub could not be reached"


class HubUnavailableError(HubOutageError):
    """The Hub answered 408, 429 or 5xx to every try (down, overloaded, rate limiting), or asked to wait past the
    operation's deadline (``Retry-After``)."""

    outage = "the Hub failed every try"


class HubOutOfTimeError(HubOutageError):
    """The operation's deadline passed between the requests huggingface_hub sends for it (a download's metadata, then
    its file: slow answers took the time), so the next was not started."""

    outage = "the Hub did not answer within the deadline"


def is_valid_revision(value: str) -> bool:
    """True for a revision taskspace passes to the Hub: a commit sha (40 hex digits), ``refs/pr/N``, or a branch or
    tag name (letters, digits and ``._-`` in ``/``-separated parts that start with a letter or digit; no ``..``)."""
    if not isinstance(value, str):
        return False
    if _SHA.match(value) or re.fullmatch(r"refs/pr/[0-9]{1,9}", value):
        return True
    return bool(_REF.match(value)) and ".." not in value and not value.endswith((".lock", "."))


def is_safe_repo_path(name: str) -> bool:
    """True for a repo file name that stays inside any folder it is joined to: a relative ``/``-separated path with
    no empty, ``.`` or ``..`` part, no backslash, no NUL and no drive prefix."""
    if not isinstance(name, str) or not name or "\\" in name or "\0" in name or name.startswith("/"):
        return False
    if re.match(r"^[A-Za-z]:", name):
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def _intact(path) -> bool:
    """Whether a cached file's bytes match the checksum huggingface_hub names its blob by: the git blob id (sha1 of
    ``blob <size>\\0`` and the bytes) of a regular file (or, from a mirror that names it so, the bytes' own sha1),
    the sha256 of an LFS one. A blob named otherwise (an ETag that is no checksum, a cache without symlinks) has
    nothing to be checked against and counts as intact."""
    import hashlib

    blob = os.path.realpath(path)
    name = os.path.basename(blob)
    if _SHA.match(name):
        hs = [hashlib.sha1(b"blob %d\0" % os.path.getsize(blob)), hashlib.sha1()]
    elif re.fullmatch(r"[0-9a-f]{64}", name):
        hs = [hashlib.sha256()]
    else:
        return True
    with open(blob, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            for h in hs:
                h.update(chunk)
    return any(h.hexdigest() == name for h in hs)


# -- the transport every huggingface_hub request goes through ---------------------------------------------------

#: set while a HubClient operation runs: a callable telling whether its deadline has passed
_OPERATION: contextvars.ContextVar = contextvars.ContextVar("taskspace_hub_operation", default=None)


class _Retryable(Exception):
    """A 408/429/5xx answer or a failed connection inside a HubClient operation (retried by HubClient._call only)."""

    def __init__(self, detail: str, status: int | None = None, retry_after: float = 0.0):
        super().__init__(detail)
        self.status, self.retry_after = status, retry_after


class _Unreachable(Exception):
    """The endpoint (or the proxy ``proxy`` names, through which it is asked) cannot be connected to at all."""

    def __init__(self, detail: str, proxy: tuple[str, str] | None = None):
        super().__init__(detail)
        self.proxy = proxy


class _ProxyRefused(Exception):
    """The proxy requests go through answered 4xx itself (407: it asks for credentials; 403: its rules forbid the
    host): an answer, not retried."""

    def __init__(self, answer: str, proxy: tuple[str, str]):
        super().__init__(answer)
        self.proxy = proxy


class _Unsafe(Exception):
    """The server answered a commit sha or ETag that would become a path outside the cache."""


class _DeadlineExceeded(Exception):
    """The operation's deadline passed: no new request is started."""


def _normal_etag(value: str) -> str:
    value = value.strip()
    if value.startswith("W/"):
        value = value[2:]
    return value.strip('"')


def _check_file_headers(request, response) -> None:
    """Refuse a file answer whose commit or ETag huggingface_hub would join into a cache path unsafely."""
    if "/resolve/" not in request.url.path:
        return
    commit = response.headers.get("X-Repo-Commit")
    if commit is not None and not _SHA.match(commit):
        raise _Unsafe(f"a commit header X-Repo-Commit {commit[:80]!r} that is not a 40-hex-digit sha")
    for name in ("X-Linked-Etag", "ETag"):
        etag = response.headers.get(name)
        if etag is not None and not _ETAG.match(_normal_etag(etag)):
            raise _Unsafe(f"an {name} {etag[:80]!r} that is not a plain token")


class _HubTransport:
    """Wraps huggingface_hub's HTTP transport (see the module docstring)."""

    def __init__(self, inner, proxy: tuple[str, str] | None = None):
        self.inner = inner
        #: the proxy requests go through, as errors name it, and its variable (:func:`_proxy_named`), or None
        self.proxy = proxy

    def handle_request(self, request):
        import httpx2

        expired = _OPERATION.get()
        if expired is not None and expired():
            raise _DeadlineExceeded(f"{request.method} {request.url.path}: the operation's deadline has passed")
        timeout = request.extensions.get("timeout")
        if isinstance(timeout, dict) and all(v is None for v in timeout.values()):  # never wait forever
            request.extensions["timeout"] = {"connect": 10.0, "read": 60.0, "write": 60.0, "pool": 10.0}
        try:
            response = self.inner.handle_request(request)
        except httpx2.ConnectError as exc:  # through a proxy, the connection to the proxy
            if expired is None:
                raise
            raise _Unreachable(str(exc) or type(exc).__name__, self.proxy) from exc
        except httpx2.TransportError as exc:
            if expired is None:
                raise
            if self.proxy is None:
                raise _Retryable(f"the connection failed ({type(exc).__name__})") from exc
            if isinstance(exc, httpx2.ProxyError) and str(exc).startswith("4"):  # its CONNECT answer: "407 Proxy ..."
                raise _ProxyRefused(str(exc), self.proxy) from exc
            raise _Retryable(f"the connection through the proxy {self.proxy[0]} ({self.proxy[1]}) failed "
                             f"({type(exc).__name__}{f': {exc}' if str(exc) else ''})") from exc
        try:
            _check_file_headers(request, response)
            if expired is not None and self.proxy is not None and response.status_code == 407:  # http:// via a proxy
                raise _ProxyRefused(f"407 {response.reason_phrase}".strip(), self.proxy)
            if expired is not None and response.status_code in RETRY_STATUS:
                raise _Retryable(f"the Hub answered {response.status_code}", response.status_code,
                                 _retry_after(response))
        except BaseException:
            response.close()
            raise
        if expired is not None:  # the body too: a server trickling its bytes (each read within the read timeout)
            response.stream = _deadline_stream(response.stream, expired, f"{request.method} {request.url.path}")
        return response

    def close(self) -> None:
        self.inner.close()


#: past an operation's deadline, an answer's body is read on while it comes in at least this fast (bytes a second),
#: averaged from its start and over each :data:`LOW_SPEED_SECONDS` since the deadline passed, as curl's
#: ``--speed-limit`` and ``--speed-time``: a large file on a good link is not cut off, a trickle is, however fast the
#: answer began (averaged from its start alone, a burst of 2 MB would buy 40 s of trickle)
LOW_SPEED = 50_000
LOW_SPEED_SECONDS = 10.0


def _deadline_stream(inner, expired: Callable[[], bool], what: str):
    """A response body that stops once the operation's deadline has passed and it comes in slower than
    :data:`LOW_SPEED` (:class:`_DeadlineExceeded`), looked at before each chunk: the deadline looked at only between
    requests would let a server sending a byte every few seconds, within every read timeout, hold a download (and a
    pass) for as long as it liked."""
    import httpx2

    class _DeadlineStream(httpx2.SyncByteStream):  # (the type httpx asks a transport's answer to have)
        def __iter__(self):
            began, got = time.monotonic(), 0
            window, late = None, 0  # since when, and how many bytes came in that window, past the deadline
            for chunk in inner:
                got += len(chunk)
                if expired():
                    now = time.monotonic()
                    if got < LOW_SPEED * (now - began):
                        raise _DeadlineExceeded(f"{what}: the operation's deadline passed while the answer came in at "
                                                f"{got} bytes in {now - began:.0f} s")
                    if window is None:
                        window, late = now, 0
                    elif now - window >= LOW_SPEED_SECONDS:
                        if late < LOW_SPEED * (now - window):
                            raise _DeadlineExceeded(f"{what}: the operation's deadline passed while the answer came in "
                                                    f"at {late} bytes in its last {now - window:.0f} s")
                        window, late = now, 0
                    late += len(chunk)
                yield chunk

        def close(self) -> None:
            inner.close()

    return _DeadlineStream()


def _client_factory():
    """huggingface_hub's HTTP client with :class:`_HubTransport` (and its request hooks: offline mode, request ids).
    Proxies are read from the environment as httpx reads them (``httpx2._utils.get_environment_proxies``: HTTP_PROXY,
    HTTPS_PROXY, ALL_PROXY for the schemes neither names, each in either case, and NO_PROXY's hosts, domain suffixes,
    ``host:port``, IP addresses and CIDR ranges, ``*``), since a client given its own transport reads none. A proxy
    the client cannot use (a SOCKS one without the ``socksio`` package, an unknown scheme) is a ConfigError naming
    the variable. Before, NO_PROXY was not read: a mirror named there (HF_ENDPOINT) was asked through the proxy, and
    behind a proxy that cannot reach it was unreachable; and ALL_PROXY was not read, so a network reached only through
    the proxy it names (as httpx, requests and curl use it) had no Hub."""
    import httpx2
    from httpx2._utils import get_environment_proxies
    from huggingface_hub.utils._http import hf_request_event_hook

    # the hooks huggingface_hub's default_client_factory gives its client (2.4.0), not that client itself: made with
    # trust_env, it reads the proxy variables as it is made, and a proxy httpx cannot use (a SOCKS one without
    # socksio, an ftp:// one) raised out of every Hub request with a traceback
    hooks = {"request": [hf_request_event_hook]}
    # a pattern mapped to None is asked directly (NO_PROXY); the others through their proxy
    mounts = {pattern: None if proxy is None else _proxy_transport(pattern, proxy)
              for pattern, proxy in get_environment_proxies().items()}
    return httpx2.Client(
        transport=_HubTransport(httpx2.HTTPTransport()), event_hooks=hooks, follow_redirects=True, timeout=None,
        trust_env=False, mounts=mounts,
    )


def _proxy_transport(pattern: str, proxy: str) -> _HubTransport:
    """The transport of the requests ``pattern`` matches, through ``proxy``; a ConfigError naming the variable when
    httpx cannot use that proxy (a SOCKS proxy needs the ``socksio`` package; an unknown scheme)."""
    import httpx2

    named = _proxy_named(pattern, proxy)
    try:
        return _HubTransport(httpx2.HTTPTransport(proxy=proxy), named)
    except ImportError:
        import sys

        raise ConfigError(f"{named[1]} names the SOCKS proxy {named[0]}, which needs the socksio package: install it "
                          f"(`{sys.executable} -m pip install socksio`), or name an HTTP proxy there") from None
    except (ValueError, httpx2.InvalidURL):  # its message would quote the URL, password and all
        raise ConfigError(f"{named[1]} names the proxy {named[0]}, which is not a proxy URL the Hub client can use: "
                          "name an http://, https:// or socks5:// proxy there, or unset it") from None


def _proxy_named(pattern: str, proxy: str) -> tuple[str, str]:
    """(a proxy as errors name it: its URL without user name or password, the variable that set it): e.g.
    ``("http://proxy.corp:3128", "HTTPS_PROXY")`` (the lower-case variable where it is set, as urllib and httpx read
    it)."""
    from urllib.parse import urlsplit

    scheme = pattern.split("://", 1)[0]
    variable = next((n for n in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY") if os.environ.get(n)),
                    f"{scheme.upper()}_PROXY")
    try:
        parts = urlsplit(proxy)
        shown = f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}"
    except ValueError:
        shown = "(unreadable URL)"
    return shown, variable


_installed = False


def _install_transport() -> None:
    global _installed
    if not _installed:
        from huggingface_hub import set_client_factory

        set_client_factory(_client_factory)
        _installed = True
    _one_log_handler()


def _one_log_handler() -> None:
    """huggingface_hub's log records through the handlers the application configured (the CLI's, in its format),
    not also through the bare stderr handler huggingface_hub gives its own logger, which would show each of its
    warnings ("Error while downloading ... Trying to resume download...") a second time. Left as it is when the root
    logger has no handler: the library's warnings still show."""
    if not logging.getLogger().handlers:
        return
    hf = logging.getLogger("huggingface_hub")
    for handler in list(hf.handlers):
        if type(handler) is logging.StreamHandler:
            hf.removeHandler(handler)


def is_valid_repo_id(value: str) -> bool:
    """True for a Hub repo id "org/name" (letters, digits, ``-_.``, no ``--`` or ``..``, no leading/trailing ``-.``)."""
    if not isinstance(value, str) or not _REPO_ID.match(value):
        return False
    name = value.split("/", 1)[1]
    return ".." not in value and "--" not in value and not name[0] in "-." and not name[-1] in "-." and not value.endswith(".git")


@dataclass(frozen=True)
class RepoSnapshot:
    repo_id: str
    repo_type: str  # "model" | "dataset"
    sha: str  # the commit this listing is at
    files: tuple[str, ...]
    gated: Any = None
    #: the revision asked for (``main`` when none): :meth:`HubClient.download` records in the cache which commit it
    #: was, as huggingface_hub does for a branch or tag, so an offline :meth:`HubClient.cached_snapshot` finds it
    ref: str | None = field(default=None, compare=False)  # the same commit is the same snapshot, however asked
    #: the id the Hub gives the repo now (its info's ``id``): a renamed repo's new id, whose old one the Hub redirects;
    #: None when unknown (read from the cache)
    hub_id: str | None = field(default=None, compare=False)


def offline_variable() -> str | None:
    """The environment variable that forbids Hub requests (``HF_HUB_OFFLINE``, else ``TRANSFORMERS_OFFLINE``, set to
    1/true/yes/on; an explicit HF_HUB_OFFLINE wins), or None. Messages name it: before, they said "HF_HUB_OFFLINE is
    set" where only TRANSFORMERS_OFFLINE was, and unsetting HF_HUB_OFFLINE changed nothing."""
    name = "HF_HUB_OFFLINE" if os.environ.get("HF_HUB_OFFLINE") else "TRANSFORMERS_OFFLINE"
    return name if (os.environ.get(name) or "").strip().lower() in {"1", "true", "yes", "on"} else None


def _offline() -> bool:
    return offline_variable() is not None


def _endpoint_problem(endpoint: str, variable: str | None) -> str | None:
    """What is wrong with a Hub endpoint no request can reach (no http:// or https:// scheme, no host: ``hub.corp:8080``,
    ``htp://hub.corp``), naming the variable it came from; None for a URL. Before, each request failed inside httpx
    ("the connection failed (UnsupportedProtocol)") and was retried for 31 s."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(endpoint)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        ok = False
    if ok:
        return None
    named = f"{variable} is {endpoint[:200]!r}" if variable else f"the Hub endpoint {endpoint[:200]!r} is"
    return (f"{named}{', which is' if variable else ''} not an http:// or https:// URL with a host: set "
            f"{variable or 'it'} to the Hub's URL (https://huggingface.co) or a mirror's (https://HOST[:PORT])")


def _token_problem(token: str | None, given: str | None) -> str | None:
    """What makes the token one no HTTP header can carry (a character that is not ASCII: a pasted ``…``; a line
    break or NUL inside a token given as an argument: huggingface_hub drops those of HF_TOKEN), naming where it came
    from and never showing it; None for a token a request can carry (or none). Said before any request: sent, a
    non-ASCII one raises ``UnicodeEncodeError`` out of every request, and a line break is a LocalProtocolError that
    would be retried as a failed connection."""
    if not token:
        return None
    bad = next((c for c in token if ord(c) > 127 or c in "\r\n\0"), None)
    if bad is None:
        return None
    what = "a line break" if bad in "\r\n" else "a NUL" if bad == "\0" else \
        f"a character that is not ASCII (U+{ord(bad):04X})"
    where = ("the token given" if given else next((v for v in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
                                                   if os.environ.get(v)), "the token `hf auth login` saved"))
    return (f"{where} holds {what}, which no HTTP header can carry: set it to the token alone (hf_... as "
            "https://huggingface.co/settings/tokens shows it), or run `hf auth login`")


def _offline_message(what: str, repo: str) -> str:
    return f"cannot {what} {repo}: {offline_variable() or 'HF_HUB_OFFLINE'} is set; unset it to reach the Hub"


class HubClient:
    """A Hub client with typed errors and retries. ``endpoint``/``token`` default to HF_ENDPOINT / HF_TOKEN or login."""

    def __init__(
        self,
        endpoint: str | None = None,
        token: str | None = None,
        *,
        cache_dir: str | Path | None = None,
        retries: int = 5,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        deadline: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        again: str = "the next run tries again",
    ):
        from huggingface_hub import HfApi, constants
        from huggingface_hub import get_token

        given = endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
        self.endpoint = given.rstrip("/")
        self._endpoint_problem = _endpoint_problem(given, "HF_ENDPOINT" if endpoint is None else None)
        # the library reads HF_HUB_OFFLINE once at import; make the environment at call time the truth
        constants.HF_HUB_OFFLINE = _offline()
        # as huggingface_hub reads it (HF_TOKEN, else HUGGING_FACE_HUB_TOKEN, else the login), without the newline or
        # spaces a file or a paste leaves (kept, they make an illegal header, retried as a failed connection)
        self._token = token or get_token() or None
        self._token_problem = _token_problem(self._token, token)
        if cache_dir is None:
            from .config import get_settings

            cache_dir = get_settings().home / "hub"
        self.cache_dir = Path(cache_dir)
        self.retries = max(0, int(retries))
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.deadline = float(deadline)
        self._sleep = sleep
        self._clock = clock
        self._failing = False  # an operation gave up: later ones are tried once until one succeeds
        self._bases: dict[str, dict | None] = {}  # base model -> its model_info (None: the Hub could not say)
        self._using: set[str] = set()  # the repos whose cache lock this client holds (:meth:`using`)
        self._xet_cas: str | None = None  # the Xet storage the Hub named for the last commit (:meth:`_xet_offered`)
        #: what happens next, said when an operation gave up: an indexing pass's source is tried again by the next
        #: run; a command the user runs (pull, publish) says what it left and to run it again
        self.again = again
        _install_transport()
        self._api = HfApi(endpoint=self.endpoint, token=self._token or False)

    def __repr__(self) -> str:  # never show the token
        return f"HubClient(endpoint={self.endpoint!r}, token={'set' if self._token else 'none'})"

    @property
    def offline(self) -> bool:
        return _offline()

    # -- the retry loop and the error translation -------------------------------------------------------

    def _call(self, what: str, repo: str, repo_type: str, fn: Callable, /, *args, **kwargs):
        """``fn(*args, **kwargs)`` with the one retry layer: up to ``retries`` retries with exponential backoff
        (at least ``Retry-After``), none that would end after ``deadline`` seconds from the start, and none at all
        while the client is failing (an earlier operation gave up and none has succeeded since)."""
        if self.offline:
            raise HubError(_offline_message(what, repo))
        if self._token_problem is not None:  # no request could carry it: said at once, not retried for 31 s
            raise ConfigError(self._token_problem)
        if self._endpoint_problem is not None:  # no request could reach it: said at once, not retried for 31 s
            raise HubUnreachableError(f"cannot {what} {repo}: {self._endpoint_problem}", self._endpoint_problem)
        start = self._clock()
        end = start + self.deadline
        token = _OPERATION.set(lambda: self._clock() > end)
        attempt = 0
        try:
            while True:
                try:
                    result = fn(*args, **kwargs)
                    self._failing = False
                    return result
                except Exception as exc:  # noqa: BLE001 - translated below, unknown ones re-raised
                    err, retry_after = _translate(exc, what, repo, repo_type, self.endpoint, self._token is not None)
                    if err is None and _malformed_answer(exc):
                        err = HubError(f"cannot {what} {repo}: the Hub at {self.endpoint} answered something "
                                       f"huggingface_hub cannot read ({type(exc).__name__}: {exc}); a broken or "
                                       "hostile endpoint? check HF_ENDPOINT")
                    if err is None:
                        raise
                    if retry_after is None:
                        if isinstance(err, HubOutOfTimeError):  # the deadline spent, as retries giving up spend it:
                            self._failing = True  # the next operation is tried once (before, retried to its deadline)
                            # and what to do, as when the retries give up
                            raise HubOutOfTimeError(
                                f"{err} (past this operation's {self.deadline:.0f} s deadline: the Hub answered too "
                                f"slowly or broke off mid-answer; {self.again})", err.reason) from None
                        raise err from None
                    delay = min(self.max_backoff, max(retry_after, self.backoff * (2**attempt)))
                    attempt += 1
                    if self._failing or attempt > self.retries or self._clock() + delay > end:
                        why = ("not retried: an earlier request had failed as well" if self._failing else
                               f"gave up after {attempt} tries in {self._clock() - start:.0f} s")
                        if not self._failing and attempt <= self.retries:  # the wait would pass the deadline
                            wait = (f"the Hub asks to wait {retry_after:.0f} s (Retry-After)" if retry_after > 0 else
                                    f"the next try would be in {delay:.0f} s")
                            why += f": {wait}, past this operation's {self.deadline:.0f} s deadline"
                        self._failing = True
                        # no answer at all through the retries (timeouts, dropped connections), or only 408/429/5xx:
                        # an outage, as when the Hub refuses connections (a pull falls back to the Hub cache then)
                        raise type(err)(f"{err} ({why}; {self.again})", f"{err.reason}, {why}") from None
                    log.warning("Hub: %s; retry %d/%d in %.1fs", err, attempt, self.retries, delay)
                    self._sleep(delay)
        finally:
            _OPERATION.reset(token)

    # -- models ---------------------------------------------------------------------------------------

    def model_info(self, repo_id: str, *, _seen: tuple[str, ...] = ()) -> dict:
        """Metadata of a model repo as a dict for ``Store.upsert_models`` (missing fields are None). A repo with no
        parameter count of its own whose card names one base model (a PEFT adapter, a fine-tune or quantization
        without safetensors; not a merge) has the base model's count, and ``num_parameters_from`` names that base
        (:meth:`_base_size`; else None). A card naming no license has its one base model's, and a PEFT adapter (library
        ``peft`` or tagged ``base_model:adapter:BASE``) of a gated base is gated as its base (its ``gated`` the base's
        ``auto``/``manual``): it runs only on the base's weights."""
        info = self._call("read model info of", repo_id, "model", self._api.model_info, repo_id)
        card = info.card_data.to_dict() if getattr(info, "card_data", None) is not None else {}
        # the card's YAML is the model author's: a license or base_model may be a number, a mapping or a list of
        # anything; only text is kept (a list of texts joined), so no odd card reaches SQL, where a mapping failed
        # the whole metadata batch of the pass
        license_ = _fits(_card_text(card.get("license"), join=True), 256)
        # in lower case, as the Hub's license ids are: a card's "MIT" or "Other" is `mit` / `other`, which the filters
        # match (they read a filter value in lower case too); before, stored as written, `--license mit` missed "MIT"
        license_ = license_.lower() if license_ is not None else None
        if license_ is not None and license_ == "other":  # the Hub's "other" with the license's own name
            # (`license_name: tongyi-qianwen`, with `license_link`): kept beside it, as a card naming two licenses
            # is, so the answers show which license and a filter on either name matches; before, "other" alone
            named = _card_text(card.get("license_name"), join=False)
            if named is not None and named.lower() != "other":
                license_ = _fits(f"{license_},{named.lower()}", 256) or license_
        base = _fits(_card_text(card.get("base_model"), join=False), 512)
        st = getattr(info, "safetensors", None)
        gated = info.gated
        # a count of 0 (safetensors of no tensor) is none of its own: its GGUF header or base model may size it
        total = parameter_count(getattr(st, "total", None) if st is not None else None)
        counts = getattr(st, "parameters", None) if st is not None else None
        if isinstance(total, int) and isinstance(counts, dict) and total > 0:
            # a GPTQ/AWQ repo stores its weights packed, eight 4-bit values in one I32, and the Hub counts the packed
            # tensors' elements (a 4-bit 70B model: about 9B). A
            # count that is mostly packed integers is not the model's size: unknown, which a size filter reports as
            # missing, rather than a 70B model passing `--max-params 10B`
            packed = sum(v for k, v in counts.items() if str(k).upper() in _PACKED and isinstance(v, int))
            if packed > total * PACKED_SHARE:
                total = None
            bytes_ = sum(v for k, v in counts.items() if str(k).upper() in _BYTE_PACKED and isinstance(v, int))
        else:
            bytes_ = 0
        if total is None and isinstance(getattr(info, "gguf", None), dict):  # a GGUF repo (llama.cpp quantizations)
            total = parameter_count(info.gguf.get("total"))  # no safetensors: the Hub counts it from the GGUF header;
            # before, its size was unknown and every --max-params / --min-params filter dropped it
        size_from = None
        if total is None and (one := _one_base(card.get("base_model"), info.tags)) is not None:
            # a PEFT adapter (its adapter_model.safetensors is no model the Hub counts), or a fine-tune or quantization
            # without a count of its own: it runs as its base model does, so it has that size; before, its size was
            # unknown and every size filter dropped it as missing metadata (an adapter of Llama-3-8B was not found by
            # `--max-params 10B`)
            total, size_from = self._base_size(one, (*_seen, repo_id))
        elif total is not None and bytes_ > total * PACKED_SHARE and (
                one := _one_base(card.get("base_model"), info.tags)) is not None:
            # a count mostly of U8 elements: a bitsandbytes 4-bit repo packs two values in a byte and the Hub counts
            # the bytes (a 4-bit Llama-3-8B: about 4.6B); MXFP4 blocks are U8 too, but their count may be right. The
            # base model's count, when larger, is the size (its quantization runs as it does); before, the under-count
            # stood and a 4-bit 8B model passed `--max-params 5B`
            base_total, base_from = self._base_size(one, (*_seen, repo_id))
            if base_total is not None and base_total > total:
                total, size_from = base_total, base_from
        # the Hub's gated is false, true, "auto" or "manual": anything else (a mapping from a broken mirror) is unknown,
        # not its repr stored
        gated = str(gated).lower() if isinstance(gated, (bool, str)) else None
        one = _one_base(card.get("base_model"), info.tags)
        adapter = one is not None and (str(info.library_name or "").lower() == "peft" or any(
            isinstance(t, str) and t.lower() == f"base_model:adapter:{one}".lower() for t in info.tags or []))
        if one is not None and (license_ is None or (adapter and gated in (None, "false"))):
            # what its one base model (not a merge's several) says where the repo's card is silent: a card naming no
            # license has its base's (a fine-tune, adapter or quantization is used under its base's terms; "other" is
            # a license of its own and stays), and an adapter, which runs only on its base's weights, is gated as its
            # base is; before, such an adapter passed --exclude-gated, though using it needs access to the gated
            # base, and every --license filter dropped a fine-tune whose card named no license as missing metadata
            row = self._base_info(one, (*_seen, repo_id))
            if row is not None:
                license_ = license_ if license_ is not None else row["license"]
                if adapter and gated in (None, "false") and row["gated"] not in (None, "false"):
                    gated = row["gated"]
        # the repo's id now: a renamed repo's old id is answered (through a redirect) with its new one, an id typed in
        # another case with the repo's own (the Hub's ids are case-insensitive); the caller stores the model under it
        key = info.id if isinstance(info.id, str) and is_valid_repo_id(info.id) else repo_id
        if key != repo_id:
            log.info("Hub: model %s is %s on the Hub", repo_id, key)
        return {
            "key": key,
            "revision": info.sha if _SHA.match(info.sha or "") else None,
            "author": _fits(_card_text(info.author, join=False), 256) or key.split("/", 1)[0],
            "license": license_,
            "num_parameters": parameter_count(total),  # a base model stored with 0 before: unknown
            "pipeline_tag": _fits(_card_text(info.pipeline_tag, join=False), 128),
            "library": _fits(_card_text(info.library_name, join=False), 128),
            # a list of texts (one text is no list of tags: iterated, its letters would be stored as tags)
            "tags": [t for t in (_card_text(x, join=False) for x in info.tags if isinstance(x, str)) if t]
            if isinstance(info.tags, (list, tuple)) else [],
            "downloads": _tally(info.downloads),
            "likes": _tally(info.likes),
            "gated": gated,
            "created_at": info.created_at,
            "last_modified": info.last_modified,
            "base_model": base,
            "num_parameters_from": size_from if total is not None else None,
        }

    def _base_info(self, base: str, seen: tuple[str, ...]) -> dict | None:
        """The metadata of the base model ``base`` (:meth:`model_info`: what it has of its own base in turn, at most
        :data:`BASE_DEPTH` models deep), or None when the Hub cannot say (a failure is logged, not raised: the model's
        own metadata stands) or the bases loop. Asked once per client: the adapters of one base in a pass cost one
        request."""
        if base in self._bases:
            return self._bases[base]
        got = None
        if base not in seen and len(seen) <= BASE_DEPTH:
            try:
                got = self.model_info(base, _seen=seen)
            except (HubError, NotFoundError) as exc:  # gone, private, failing: what it would give stays unknown
                log.info("Hub: no metadata of %s, the base model of %s (%s)", base, seen[-1], exc)
        self._bases[base] = got
        return got

    def _base_size(self, base: str, seen: tuple[str, ...]) -> tuple[int | None, str | None]:
        """(parameter count, the repo it is of) of the base model ``base`` (its own count, or in turn its base's), or
        (None, None) when none is known or the Hub cannot say."""
        row = self._base_info(base, seen)
        if row is None or row["num_parameters"] is None:
            return None, None
        return row["num_parameters"], row["num_parameters_from"] or row["key"]

    # -- datasets -------------------------------------------------------------------------------------

    def list_datasets(self, author: str, search: str | None = None, limit: int | None = None) -> list[str]:
        """Dataset repo ids of an organisation or user (optionally matching ``search``)."""

        def run():
            return [d.id for d in self._api.list_datasets(author=author, search=search, limit=limit)]

        return self._call("list the datasets of", author, "dataset", run)

    def repo_snapshot(self, repo_id: str, revision: str | None = None, repo_type: str = "dataset", *,
                      records: bool = False) -> RepoSnapshot:
        """The commit sha and file list of a repo at ``revision`` (default: main). ``records``: the dataset is to
        hold published model records (``taskspace pull``), not results: what a model repo's id is told."""

        if revision is not None and not is_valid_revision(revision):
            raise HubError(f"cannot read {repo_id}: revision {revision[:80]!r} is not a commit sha (40 hex digits) or a "
                           "branch or tag name")

        def run():
            info = self._api.repo_info(repo_id, repo_type=repo_type, revision=revision)
            files = tuple(s.rfilename for s in (info.siblings or []))
            now = info.id if isinstance(info.id, str) and is_valid_repo_id(info.id) else None
            return RepoSnapshot(repo_id, repo_type, info.sha, files, getattr(info, "gated", None), revision or "main",
                                now)

        try:
            snap = self._call("read", repo_id, repo_type, run)
        except _RevisionNotFound:
            kind = "dataset" if repo_type == "dataset" else "model"
            short = (f" (if it is the start of a commit sha, the Hub at {self.endpoint} does not know it as one: give "
                     "the whole 40-hex-digit commit)" if _SHORT_SHA.match(revision or "") else "")
            raise NotFoundError(f"revision {revision!r} not found in the {kind} {repo_id}{short}: give one of its commit "
                                "shas, branches or tags, or none for main") from None
        except NotFoundError:
            if repo_type == "dataset" and self._is_model(repo_id):  # `hub:` of a model's id: setting HF_TOKEN won't help
                org, _, name = repo_id.partition("/")
                if records:  # the leaderboard's details are results, which pull cannot read
                    raise NotFoundError(f"{repo_id} is a model repo on {self.endpoint}, not a dataset: `taskspace pull "
                                        "hub:ORG/NAME` takes a dataset of model records that `taskspace publish` made "
                                        "(a model's per-sample results are ingested with `taskspace ingest "
                                        "hub:ORG/NAME`)") from None
                raise NotFoundError(f"{repo_id} is a model repo on {self.endpoint}, not a dataset: hub:ORG/NAME names a "
                                    "dataset repo of results (for this model's Open LLM Leaderboard details: "
                                    f"hub:open-llm-leaderboard/{org}__{name}-details; a private dataset of that "
                                    "name needs HF_TOKEN)") from None
            raise
        odd = next((f for f in snap.files if not isinstance(f, str)), None)
        if odd is not None:  # refused here: the ingest's checks of file names take each name for text
            raise HubError(f"the Hub at {self.endpoint} listed a file of {repo_id} whose name is not text "
                           f"({str(odd)[:80]}); refusing it (a broken or hostile endpoint? check HF_ENDPOINT)")
        if not _SHA.match(snap.sha or ""):
            raise HubError(f"the Hub at {self.endpoint} answered the commit sha {str(snap.sha)[:80]!r} for {repo_id}, not "
                           "40 hex digits; refusing it (a broken or hostile endpoint? check HF_ENDPOINT)")
        return snap

    def _is_model(self, repo_id: str) -> bool:
        """True when the Hub knows ``repo_id`` as a model repo (False also when it cannot tell)."""
        try:
            self._call("read model info of", repo_id, "model", self._api.model_info, repo_id)
            return True
        except Exception:  # noqa: BLE001 - only a hint: any failure means "cannot tell"
            return False

    def _storage(self, repo_id: str, repo_type: str) -> Path:
        """The repo's folder in the cache, as huggingface_hub names it (``datasets--ORG--NAME``)."""
        return self.cache_dir / f"{repo_type}s--{repo_id.replace('/', '--')}"

    def _cached_spellings(self, repo_id: str, repo_type: str) -> list[str]:
        """The spellings of ``repo_id`` the cache holds a folder of, that one first: the Hub's repo ids are
        case-insensitive (it answers ``walk/recs`` with the repo ``Walk/Recs``), but huggingface_hub names the folder
        by the id as it was asked, so a home that fetched ``hub:Walk/Recs`` holds ``datasets--Walk--Recs`` alone."""
        prefix, want = f"{repo_type}s--", repo_id.replace("/", "--").lower()
        exact = self._storage(repo_id, repo_type).name
        try:
            others = sorted(p.name for p in self.cache_dir.iterdir() if p.name != exact and p.name.startswith(prefix)
                            and p.name[len(prefix):].lower() == want and p.is_dir())
        except OSError:
            others = []
        names = ([exact] if (self.cache_dir / exact).is_dir() else []) + others
        return [n[len(prefix):].replace("--", "/", 1) for n in names]  # ids hold no "--": the first is the "/"

    def _held_as(self, snapshot: RepoSnapshot) -> RepoSnapshot:
        """The snapshot under the spelling of its repo id whose folder the cache holds already (of several, the first
        in sorted order), so that one repo asked in two cases (`hub:Walk/Recs`, `hub:walk/recs`) is one folder, as
        it is one repo on the Hub; the snapshot as it is when the cache holds none. Before, each spelling asked
        online got a folder of its own, each with its own copy of the files."""
        spellings = self._cached_spellings(snapshot.repo_id, snapshot.repo_type)
        held = min(spellings) if spellings else snapshot.repo_id
        return snapshot if held == snapshot.repo_id else dataclasses.replace(snapshot, repo_id=held)

    def cached_snapshot(self, repo_id: str, revision: str | None = None, repo_type: str = "dataset") -> RepoSnapshot:
        """What the cache holds of the repo at ``revision`` (a commit sha, or a branch or tag: the commit it was when
        last fetched; default main), without asking the Hub: its files are those downloaded at that commit. The repo
        is found whatever the case of ``repo_id`` (the Hub's ids are case-insensitive): the snapshot's ``repo_id`` is
        the spelling the cache holds it under (the one asked first). A :class:`HubError` naming the offline variable
        when the cache holds no such revision (offline use: with the Hub reachable, :meth:`repo_snapshot` says what
        the revision is now)."""
        if revision is not None and not is_valid_revision(revision):
            raise HubError(f"cannot read {repo_id}: revision {revision[:80]!r} is not a commit sha (40 hex digits) or a "
                           "branch or tag name")
        ref = revision or "main"
        held: list[str] = []
        for spelling in self._cached_spellings(repo_id, repo_type):
            storage = self._storage(spelling, repo_type)
            sha = ref
            if not _SHA.match(ref):
                try:
                    sha = (storage / "refs" / ref).read_text().strip()
                except OSError:
                    sha = ""
            here = sorted(p.name for p in (storage / "snapshots").iterdir() if _SHA.match(p.name) and p.is_dir()) if (
                storage / "snapshots").is_dir() else []
            if not (_SHA.match(sha) and sha in here) and _SHORT_SHA.match(ref):  # a short sha: the commit it starts
                hits = [h for h in here if h.startswith(ref)]
                if len(hits) > 1:
                    raise HubError(f"cannot read {repo_id}: revision {ref} is the start of {len(hits)} commits the Hub "
                                   f"cache {self.cache_dir} holds ({', '.join(hits)}): give more of it, or the whole "
                                   "40-hex-digit commit")
                sha = hits[0] if hits else sha
            folder = storage / "snapshots" / sha
            if not _SHA.match(sha) or sha not in here:
                # what it holds (a cache filled before downloads recorded the branch they read has no refs): by sha
                held += here
                continue
            if spelling != repo_id:
                log.info("Hub cache: %s is held as %s (the Hub's repo ids are case-insensitive): reading that",
                         repo_id, spelling)
            cache = os.path.realpath(self.cache_dir)
            files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                           if p.is_file() and _inside(os.path.realpath(p), cache))
            return RepoSnapshot(spelling, repo_type, sha, tuple(f for f in files if is_safe_repo_path(f)), None, ref)
        also = (f" (it holds revision {', '.join(held[:3])}{', ...' if len(held) > 3 else ''}: name it as "
                "@REVISION to read it offline)" if held else "")
        raise HubError(f"cannot read {repo_id}: {offline_variable() or 'HF_HUB_OFFLINE'} is set and the Hub cache "
                       f"{self.cache_dir} holds no revision {ref} of it{also}; unset it to reach the Hub")

    def _remember_ref(self, snapshot: RepoSnapshot) -> None:
        """Record in the cache that the snapshot's ``ref`` (a branch or tag) was its commit, as huggingface_hub does when
        it downloads by branch (taskspace downloads by commit sha, so it writes none itself); best effort."""
        ref = snapshot.ref
        if not ref or snapshot.sha.startswith(ref) or not is_valid_revision(ref):  # a commit, whole or short: no ref
            return
        path = self._storage(snapshot.repo_id, snapshot.repo_type) / "refs" / ref
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.is_file() or path.read_text() != snapshot.sha:
                tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
                tmp.write_text(snapshot.sha)
                os.replace(tmp, path)
        except OSError as exc:  # a read-only cache: the files are there, only an offline lookup by branch misses
            log.debug("Hub cache: cannot record %s of %s: %s", ref, snapshot.repo_id, exc)

    def download(self, snapshot: RepoSnapshot, files: list[str], *, cached: bool = False) -> Path:
        """Download ``files`` of the snapshot at its exact commit; returns the local root holding them in
        the repo's layout. Files already in the cache at that commit are not fetched again. Offline
        (``HF_HUB_OFFLINE``), or ``cached`` (a pull falling back on the cache of a Hub it cannot reach), the cache's
        files at that commit, or a :class:`HubError` naming the variable and the first file it lacks."""
        from huggingface_hub import hf_hub_download

        if not _SHA.match(snapshot.sha or ""):
            raise HubError(f"cannot download from {snapshot.repo_id}: {str(snapshot.sha)[:80]!r} is not a commit sha")
        unsafe = [n for n in files if not is_safe_repo_path(n)]
        if unsafe:
            raise HubError(f"cannot download from {snapshot.repo_id}: unsafe file name {unsafe[0][:120]!r} (a path that "
                           "could leave the cache)")
        if self.offline or cached:
            return self._cached_files(snapshot, files)
        asked, snapshot = snapshot.repo_id, self._held_as(snapshot)  # the folder the cache holds the repo in
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        cache = os.path.realpath(self.cache_dir)
        root: Path | None = None

        def fetch(name: str, **again) -> str:
            try:
                return self._call(
                    f"download {name} from", asked, snapshot.repo_type, hf_hub_download,
                    snapshot.repo_id, name, repo_type=snapshot.repo_type, revision=snapshot.sha,
                    cache_dir=str(self.cache_dir), token=self._token or False, endpoint=self.endpoint, **again,
                )
            except _RevisionNotFound:  # listed a moment ago: the repo changed since, so name the file and the commit,
                # not a revision "not found" as if one had been mistyped
                when = (f" ({snapshot.ref} when listed)" if snapshot.ref and not snapshot.sha.startswith(snapshot.ref)
                        else "")
                raise RevisionGoneError(
                    f"cannot download {name} from {asked}: its commit {snapshot.sha}{when} is no longer on the Hub at "
                    f"{self.endpoint}: the repo changed since it was listed (a force-push or a squashed history); "
                    "run the command again to read the revision it has now") from None

        for name in files:
            path = fetch(name)
            if not _intact(path):  # huggingface_hub hands on a cached copy as it is: fetch a damaged one again
                log.warning("Hub cache: %s of %s at %s is damaged (its bytes do not match the checksum it is stored "
                            "under: cut short, a partial copy?); downloading it again", name, asked,
                            snapshot.sha)
                path = fetch(name, force_download=True)
                if not _intact(path):
                    raise HubError(f"the download of {name} from {asked} does not match the checksum the "
                                   f"Hub at {self.endpoint} gave it; run the command again (a broken or hostile "
                                   "endpoint? check HF_ENDPOINT)")
            p = Path(path)
            real = os.path.realpath(p)
            if not (_inside(real, cache) and _inside(os.path.abspath(p), os.path.abspath(self.cache_dir))):
                raise HubError(f"the download of {name} from {asked} resolved to {real}, outside the Hub "
                               f"cache {cache}; refusing it (a broken or hostile endpoint? check HF_ENDPOINT)")
            root = p.parents[len(Path(name).parts) - 1]
        if root is None:  # nothing to fetch: the (empty) snapshot folder
            root = self._storage(snapshot.repo_id, snapshot.repo_type) / "snapshots" / snapshot.sha
            root.mkdir(parents=True, exist_ok=True)
        self._remember_ref(snapshot)
        return root

    @contextlib.contextmanager
    def using(self, repo_id: str, repo_type: str = "dataset"):
        """Hold this home's Hub cache of the repo (in any case of its id) while one command downloads and reads it: an
        exclusive ``fcntl.flock`` on ``<cache>/.locks/taskspace--<type>s--<org>--<name>.lock`` (lower case), so that
        another process's :meth:`keep_only` cannot remove the revision this one reads meanwhile (two pulls of two
        revisions of one record set, a publish beside a pull, an ingest beside a pass); the other process waits for
        it, saying so. Reentrant within a client. A cache where no lock file can be made (read-only) is used
        without one."""
        import fcntl

        key = f"{repo_type}s--{repo_id.replace('/', '--')}".lower()
        if key in self._using:
            yield
            return
        path = self.cache_dir / ".locks" / f"taskspace--{key}.lock"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            log.debug("Hub cache: no lock for %s (%s): used without one", repo_id, exc)
            yield
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log.warning("Hub cache: another taskspace process is reading %s in %s; waiting for it to finish",
                            repo_id, self.cache_dir)
                fcntl.flock(fd, fcntl.LOCK_EX)
            self._using.add(key)
            try:
                yield
            finally:
                self._using.discard(key)
        finally:
            os.close(fd)  # releases the lock

    def keep_only(self, snapshot: RepoSnapshot, also: Iterable[str] = ()) -> None:
        """Remove from the cache every other revision of the snapshot's repo: their snapshot folders, the refs that
        name them and the blobs only they used (a download in progress, ``*.incomplete``, is left). A publish
        compares with one revision and a pull reads one, so a scheduled run's cache holds that one, not every revision
        it ever read. ``also``: revisions to keep as well (a commit sha, whole or short, or a branch or tag: the commit
        the cache's refs say it was), e.g. those other sources of the home read. The folders of the repo's id in other
        cases lose their other revisions too, and go once they hold none. Best effort: what cannot be removed is
        logged and stays."""
        import shutil

        snapshot = self._held_as(snapshot)
        storage = self._storage(snapshot.repo_id, snapshot.repo_type)
        keep = storage / "snapshots" / snapshot.sha
        if not _SHA.match(snapshot.sha or "") or not keep.is_dir():
            return
        self._keep_in(storage, {snapshot.sha}, also, snapshot.repo_id)
        # the folders of the repo's other spellings (a home that fetched it as `Walk/Recs` and `walk/recs` before
        # downloads went to the one folder the cache holds, :meth:`_held_as`): what they hold of other revisions too
        for spelling in self._cached_spellings(snapshot.repo_id, snapshot.repo_type):
            if spelling == snapshot.repo_id:
                continue
            other = self._storage(spelling, snapshot.repo_type)
            self._keep_in(other, set(), also, snapshot.repo_id)
            with contextlib.suppress(OSError):
                if not (other / "snapshots").is_dir() or not any((other / "snapshots").iterdir()):
                    shutil.rmtree(other)

    def _keep_in(self, storage: Path, kept: set[str], also: Iterable[str], repo_id: str) -> None:
        """:meth:`keep_only` in one folder of the cache: ``kept`` and the revisions ``also`` names stay."""
        import shutil

        try:
            refs = {r: r.read_text().strip() for r in (storage / "refs").rglob("*") if r.is_file()} if (
                storage / "refs").is_dir() else {}
            snapshots = storage / "snapshots"
            held = [p.name for p in snapshots.iterdir()] if snapshots.is_dir() else []
            kept = set(kept)
            for rev in also:
                if _SHA.match(rev or ""):
                    kept.add(rev)
                elif rev and (storage / "refs" / rev) in refs:
                    kept.add(refs[storage / "refs" / rev])
                elif _SHORT_SHA.match(rev or ""):
                    kept.update(h for h in held if h.startswith(rev))
            for other in (snapshots / h for h in held if h not in kept):
                shutil.rmtree(other) if other.is_dir() and not other.is_symlink() else other.unlink()
            for ref, sha in refs.items():
                if sha not in kept:
                    ref.unlink()
            used = {os.path.basename(os.path.realpath(p)) for sha in kept for p in (storage / "snapshots" / sha).rglob("*")
                    if p.is_symlink()}
            for blob in (storage / "blobs").iterdir() if (storage / "blobs").is_dir() else []:
                if blob.name not in used and not blob.name.endswith(".incomplete") and blob.is_file():
                    blob.unlink()
        except OSError as exc:
            log.warning("Hub cache: cannot remove the earlier revisions of %s from %s: %s", repo_id, storage, exc)

    def _cached_files(self, snapshot: RepoSnapshot, files: list[str]) -> Path:
        """The snapshot folder holding ``files`` at the snapshot's commit in the cache (offline :meth:`download`)."""
        root = self._storage(snapshot.repo_id, snapshot.repo_type) / "snapshots" / snapshot.sha
        cache = os.path.realpath(self.cache_dir)
        missing = [n for n in files if not ((root / n).is_file() and _inside(os.path.realpath(root / n), cache))]
        damaged = [n for n in files if n not in missing and not _intact(root / n)]
        if damaged:
            raise HubError(f"cannot read {damaged[0]} of {snapshot.repo_id}: its copy in the Hub cache {self.cache_dir} "
                           f"at revision {snapshot.sha} is damaged (its bytes do not match the checksum it is stored "
                           f"under) and cannot be downloaded again: {offline_variable() or 'HF_HUB_OFFLINE'} is set; "
                           "unset it to reach the Hub")
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise HubError(f"cannot read {missing[0]}{more} of {snapshot.repo_id}: {offline_variable() or 'HF_HUB_OFFLINE'} "
                           f"is set and the Hub cache {self.cache_dir} holds revision {snapshot.sha} without it; unset it "
                           "to reach the Hub")
        return root


    # -- writing (publish) ------------------------------------------------------------------------------------

    _WRITE_HELP = ("create a token with write access at https://huggingface.co/settings/tokens, then run "
                   "`hf auth login` or set HF_TOKEN")

    def check_write_access(self, repo_id: str) -> None:
        """Refuse early when there is no token or the Hub says it is a read-only one (one line, the token never shown)."""
        if not self._token:
            raise ConfigError(f"publishing to {repo_id} needs a Hugging Face token and none is set: {self._WRITE_HELP}")
        info = self._call("check the token for", repo_id, "dataset", self._api.whoami, token=self._token, cache=False)
        role = (((info or {}).get("auth") or {}).get("accessToken") or {}).get("role")
        if role == "read":
            raise GatedRepoError(f"the Hugging Face token is read-only and cannot publish to {repo_id}: {self._WRITE_HELP}")

    def create_dataset(self, repo_id: str, *, private: bool = False) -> None:
        """Create the dataset repo ``repo_id`` unless it exists."""
        self._call("create", repo_id, "dataset", self._api.create_repo, repo_id, repo_type="dataset",
                   private=private, exist_ok=True, token=self._token)

    def commit(self, repo_id: str, files: dict[str, bytes], deletes: list[str], message: str,
               parent: str | None = None) -> str:
        """One commit to the dataset ``repo_id`` adding (or replacing) ``files`` (repo path -> bytes) and deleting
        ``deletes``, on top of ``parent`` (a commit sha, when known). Returns the new commit sha. Not retried."""
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        bad = [n for n in [*files, *deletes] if not is_safe_repo_path(n)]
        if bad:
            raise HubError(f"cannot commit to {repo_id}: unsafe file name {bad[0][:120]!r}")
        # huggingface_hub uploads a file the Hub answers "lfs" for by Xet whenever hf_xet is installed, whatever the
        # server offers; a server with no Xet endpoint gets the LFS upload it offers instead (huggingface_hub's own
        # way for a file given as a buffer, which Xet does not take)
        xet = self._call("write to", repo_id, "dataset", self._xet_offered, repo_id) if files else None
        ops = [CommitOperationAdd(path_in_repo=n, path_or_fileobj=data if xet is not False else io.BytesIO(data))
               for n, data in sorted(files.items())]
        ops += [CommitOperationDelete(path_in_repo=n) for n in sorted(deletes)]
        retries, self.retries = self.retries, 0
        try:
            info = self._call("write to", repo_id, "dataset", self._create_commit, repo_id, ops, xet,
                              commit_message=message, parent_commit=parent)
        except HubError as exc:
            if "answered 412" in str(exc):  # parentCommit is no longer the head
                raise HubError(f"cannot write to {repo_id}: it changed since this publish read it (commit {parent}); "
                               "nothing was written: run the publish again") from None
            raise
        finally:
            self.retries = retries
        return info.oid

    def _xet_path(self, repo_id: str) -> str:
        return f"/api/datasets/{repo_id}/xet-write-token/main"

    def _xet_offered(self, repo_id: str) -> bool | None:
        """Whether the Hub offers Xet uploads to the dataset ``repo_id``: its Xet write-token endpoint answers 2xx (the
        Hub: 200); any other answer (404/405 from a server that speaks LFS only; an error page of a mirror that does not
        know the route) is no: the files go by LFS, which the Hub takes too, so a commit never fails on this question
        alone. None when huggingface_hub would not use Xet anyway (hf_xet is not installed, or HF_HUB_DISABLE_XET is
        set)."""
        from huggingface_hub import _commit_api
        from huggingface_hub.utils import build_hf_headers, get_session

        if not _commit_api.is_xet_available():
            return None
        answer = get_session().get(self.endpoint + self._xet_path(repo_id),
                                   headers=build_hf_headers(token=self._token or False))
        offered = 200 <= answer.status_code < 300
        cas = answer.headers.get("X-Xet-Cas-Url") if offered else None  # the storage hf_xet talks to, for its errors
        if offered and not cas:
            with contextlib.suppress(ValueError):
                body = answer.json()
                cas = body.get("casUrl") if isinstance(body, dict) else None
        self._xet_cas = cas[:200] if isinstance(cas, str) and cas else None
        return offered

    def _create_commit(self, repo_id: str, ops: list, xet: bool | None, **kwargs):
        """``HfApi.create_commit`` of ``ops``, an upload that fails before the commit (Xet's, or an LFS endpoint the
        server does not have) a :class:`HubError` naming the endpoint and what to do."""
        quiet = _Unsaid("Uploading files as a binary IO buffer is not supported by Xet")  # LFS chosen, not a fallback
        logging.getLogger("huggingface_hub._commit_api").addFilter(quiet)
        # hf_xet retries on its own (minutes: a storage answering 500 held a publish 318 s, one that never answers
        # longer still), past this operation's deadline, which bounds only the requests huggingface_hub sends through
        # _HubTransport: at the deadline the Xet session is aborted, which ends the upload's wait at once
        watchdog = _XetWatchdog(self.deadline) if xet else None
        try:
            with _no_progress_bars():
                return self._api.create_commit(repo_id, ops, repo_type="dataset", token=self._token, **kwargs)
        except Exception as exc:  # noqa: BLE001 - an upload's failure said below, anything else re-raised
            problem = self._upload_problem(exc, repo_id, xet, watchdog is not None and watchdog.fired)
            if problem is None:
                raise
        finally:
            if watchdog is not None:
                watchdog.cancel()
            logging.getLogger("huggingface_hub._commit_api").removeFilter(quiet)
        raise HubError(f"cannot write to {repo_id}: {problem}; nothing was committed")  # outside the except: it is
        # this error _call sees, not the HTTP error it would translate into a "not found"

    def _upload_problem(self, exc: Exception, repo_id: str, xet: bool | None, late: bool = False) -> str | None:
        """What failed in a commit's upload, for :meth:`_create_commit`'s error: the LFS batch endpoint answering
        404/405, or hf_xet's own error (a builtin ``ConnectionError``, ...; ``late``: the Xet upload was aborted at the
        deadline); None for anything else."""
        from huggingface_hub import errors as hf

        if isinstance(exc, hf.HfHubHTTPError):
            answer = getattr(exc, "response", None)
            if answer is None or answer.status_code not in (404, 405) or not answer.request.url.path.endswith(
                    "/info/lfs/objects/batch"):
                return None
            no_xet = f"answers no Xet upload endpoint ({self._xet_path(repo_id)}) and " if xet is False else ""
            return (f"the Hub at {self.endpoint} {no_xet}its LFS upload endpoint ({answer.request.url.path}) answered "
                    f"{answer.status_code}, so no file can be uploaded to it: check HF_ENDPOINT")
        if _in_xet_upload(exc, xet):
            if late:
                cas = self._xet_cas or "the Xet storage"
                return (f"the Xet upload to {cas} (the Xet storage the Hub at {self.endpoint} names) did not finish "
                        f"within this operation's {self.deadline:g} s deadline (it answered too slowly or failed, and "
                        "hf_xet was still retrying): run the publish again later, or set HF_HUB_DISABLE_XET=1 to upload "
                        "by LFS")
            return (f"the Xet upload to the Hub at {self.endpoint} failed ({type(exc).__name__}: {str(exc)[:300]}): "
                    "run the publish again, or set HF_HUB_DISABLE_XET=1 to upload by LFS")
        return None


class _XetWatchdog:
    """Aborts huggingface_hub's Xet session once ``seconds`` have passed (a timer thread), unless cancelled first:
    the upload waiting on hf_xet then raises (hf_xet's "Operation cancelled"), and ``fired`` says why. The session is
    huggingface_hub's one per process (it makes a new one for the next upload); without the function that aborts it
    (another huggingface_hub version) hf_xet's own retries run on, logged."""

    def __init__(self, seconds: float):
        import threading

        self.fired = False
        self._timer = threading.Timer(max(0.0, seconds), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        try:
            from huggingface_hub.utils._xet import abort_xet_session
        except ImportError:
            log.warning("Hub: the Xet upload passed its deadline and this huggingface_hub cannot abort it; hf_xet's "
                        "own retries go on")
            return
        self.fired = True
        abort_xet_session()

    def cancel(self) -> None:
        self._timer.cancel()


def _no_progress_bars():
    """huggingface_hub's progress bars off for a block (``disable_progress_bars``, as it documents) when stderr is
    not a terminal: hf_xet's upload bars, drawn with carriage returns and cursor moves, are noise in a log, a pipe or
    beside ``--json``. ``HF_HUB_DISABLE_PROGRESS_BARS=0`` keeps them (huggingface_hub gives it priority)."""
    import sys
    import warnings

    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars

    isatty = getattr(sys.stderr, "isatty", None)
    if (callable(isatty) and isatty()) or are_progress_bars_disabled():
        return contextlib.nullcontext()
    with warnings.catch_warnings():  # "cannot disable: HF_HUB_DISABLE_PROGRESS_BARS=0 has priority": the user's choice
        warnings.simplefilter("ignore")
        return disable_progress_bars()


class _Unsaid(logging.Filter):
    """Drops the log records whose message starts with ``start``."""

    def __init__(self, start: str):
        super().__init__()
        self.start = start

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.start)


#: the function of huggingface_hub's ``_commit_api`` that uploads by Xet (huggingface_hub 2.4), in whose frame hf_xet's
#: errors surface (:func:`_in_xet_upload`)
_XET_UPLOAD_FUNCTION = "_upload_xet_files"


def _in_xet_upload(exc: BaseException, xet: bool | None = True) -> bool:
    """True for an error raised inside huggingface_hub's Xet upload (:data:`_XET_UPLOAD_FUNCTION`, or a function it
    calls: hf_xet's own exceptions, which carry no Python frame of their own), so not by an answer huggingface_hub
    reads (those it raises are told apart first: :meth:`HubClient._upload_problem`) or by our call.
    A huggingface_hub without that function (another version): an error of the kinds hf_xet raises (an ``OSError``
    such as its ``ConnectionError``, a ``RuntimeError``, a ``ValueError``, its own classes) in a commit that went by
    Xet (``xet``: the Hub offered it), not one of the HTTP errors :func:`_translate` reads; before, such an error
    escaped `taskspace publish` as a traceback."""
    import inspect

    from huggingface_hub import _commit_api

    code = getattr(inspect.unwrap(getattr(_commit_api, _XET_UPLOAD_FUNCTION, None)), "__code__", None)
    if code is not None:  # in its frame, or in a function it calls (a version calling hf_xet from a helper)
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code is not code:
            tb = tb.tb_next
        return tb is not None
    if not xet:
        return False
    import httpx2
    from huggingface_hub import errors as hf

    answers = (hf.HfHubHTTPError, httpx2.HTTPError, _Retryable, _Unreachable, _ProxyRefused, _Unsafe, _DeadlineExceeded)
    if any(isinstance(e, answers) for e in _chain(exc)):
        return False
    return isinstance(exc, (OSError, RuntimeError, ValueError)) or type(exc).__module__.split(".")[0] == "hf_xet"


#: safetensors dtypes that hold packed quantized weights (GPTQ/AWQ: I32); a parameter count with more than
#: PACKED_SHARE of its elements in them counts packed words, not parameters (:meth:`HubClient.model_info`). U8 is not
#: one of them: bitsandbytes 4-bit packs two values in a U8, but MXFP4 checkpoints hold U8 blocks too, whose count the
#: Hub may already give right
_PACKED = frozenset({"I32"})
PACKED_SHARE = 0.05
#: safetensors dtypes that may hold packed values whose count can be right (bitsandbytes 4-bit: two values a U8, an
#: under-count; MXFP4 blocks: U8 too, counted right): a count more than PACKED_SHARE of them gives way to the one
#: base model's count when that is larger (:meth:`HubClient.model_info`)
_BYTE_PACKED = frozenset({"U8"})


#: how many base models deep :meth:`HubClient._base_size` looks for a count (an adapter of a quantization of a model)
BASE_DEPTH = 3


def _one_base(value, tags) -> str | None:
    """The one base model a card's ``base_model`` names (text, or a list of one), when it is a repo id and the Hub's
    model-tree tags do not call the repo a merge of it (a merge's size is not its base's); else None."""
    if isinstance(value, (list, tuple)):
        value = value[0] if len(value) == 1 else None
    if not isinstance(value, str) or not is_valid_repo_id(value.strip()):
        return None
    value = value.strip()
    if any(isinstance(t, str) and t.lower() == f"base_model:merge:{value}".lower() for t in tags or []):
        return None
    return value


def _fits(text: str | None, width: int) -> str | None:
    """``text`` when it fits its SQL column (``width`` characters: PostgreSQL refuses a longer one, failing the whole
    metadata batch), else None: a longer licence or tag is no Hub value taskspace could filter on."""
    return text if text is None or len(text) <= width else None


def _tally(value) -> int | None:
    """A count of the Hub's (downloads, likes) when it is one its SQL column takes: a whole number from 0 below 2**63,
    else None, so that a broken mirror's ``"many"`` does not reach SQL, where PostgreSQL would refuse the pass's whole
    metadata batch."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63 else None


def _card_text(value, *, join: bool) -> str | None:
    """A model card's metadata value as text: a string (stripped; blank -> None), a number as written, a list of
    them joined with "," (``join``) or its first (else); a mapping, a text holding a NUL (no database takes it: a
    broken or hostile endpoint) or anything else -> None."""
    if isinstance(value, (list, tuple)):
        items = [t for t in (_card_text(v, join=False) for v in value) if t]
        return (",".join(items) if join else items[0]) if items else None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return None if "\x00" in value else (value.strip() or None)
    return None


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _malformed_answer(exc: Exception) -> bool:
    """True for an error huggingface_hub raised reading an answer it did not expect (a JSON field missing or of
    another type: ``KeyError: 'parameters'`` from a model's ``safetensors`` without it, a body that is not JSON), as a
    broken mirror or a hostile ``HF_ENDPOINT`` may send: the innermost frame is not taskspace's own code, so a bug
    of ours still escapes as itself. Before, such an answer ended the whole indexing pass with a traceback."""
    import json

    from huggingface_hub import hf_api

    # not any ValueError: one about the arguments taskspace passed (islice's "Stop argument ...", hf_hub_download's
    # "Invalid repo type", a CommitOperationAdd's "Provided path ... is not a file") is our fault and escapes as
    # itself; only one raised while huggingface_hub builds the object it returns from the answer's JSON is the
    # answer's: ModelInfo/DatasetInfo (model_info, dataset_info, repo_info, list_models, list_datasets; a
    # ``createdAt`` that is no date makes its ``parse_datetime`` raise), CommitInfo (create_commit), RepoUrl
    # (create_repo). Before, a ValueError in any huggingface_hub __init__, __post_init__ or parse_datetime frame
    # counted, so a bug of ours (an argument huggingface_hub checks there) read as a broken endpoint
    if not isinstance(exc, (KeyError, TypeError, AttributeError, IndexError, ValueError)):
        return False
    tb = exc.__traceback__
    if tb is None:
        return False
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame.f_code)
        tb = tb.tb_next
    ours = str(Path(__file__).resolve().parent)
    if str(Path(frames[-1].co_filename).resolve()).startswith(ours):
        return False
    if not isinstance(exc, ValueError) or isinstance(exc, json.JSONDecodeError):
        return True
    building = {getattr(cls.__dict__.get(name), "__code__", None)
                for cls in (hf_api.ModelInfo, hf_api.DatasetInfo, hf_api.CommitInfo, hf_api.RepoUrl)
                for name in ("__init__", "__post_init__")} - {None}
    return any(code in building for code in frames) or frames[-1] in _answer_checks()


def _answer_checks() -> set:
    """The code of the functions in which huggingface_hub checks an answer of a commit (``create_commit``: the
    preupload answer, the LFS batch answer and its upload actions, a multipart upload's part URLs and ETags) and raises
    a plain ValueError when it is not of the shape expected ("preupload_info is improperly formatted", "Malformed
    response from server"): such a ValueError raised there (the innermost frame) is the Hub's answer, not our call.
    Before, ``taskspace publish`` to a Hub answering so ended with that ValueError's traceback (found reading the
    commit path of huggingface_hub beside :func:`_malformed_answer`, which counted only the answer objects' own
    constructors)."""
    import inspect

    from huggingface_hub import _commit_api, lfs

    funcs = [getattr(lfs, n, None) for n in ("post_lfs_batch_info", "lfs_upload", "_validate_lfs_action",
                                             "_validate_batch_actions", "_validate_batch_error",
                                             "_get_sorted_parts_urls", "_get_completion_payload")]
    funcs.append(getattr(_commit_api, "_validate_preupload_info", None))
    return {getattr(inspect.unwrap(f), "__code__", None) for f in funcs if f is not None} - {None}


def _translate(exc: Exception, what: str, repo: str, repo_type: str, endpoint: str, has_token: bool):
    """(indexer error, retry_after seconds or None if not retryable), or (None, None) for unknown errors."""
    import httpx2
    from huggingface_hub import errors as hf

    kind = "dataset" if repo_type == "dataset" else "model"
    for e in _chain(exc):  # the transport's own errors first (see _HubTransport)
        if isinstance(e, _Retryable):
            if e.status is not None:
                return _unavailable(what, repo, endpoint, e.status), e.retry_after
            why = f"{e} talking to {endpoint}"
            return HubUnreachableError(f"cannot {what} {repo}: {why}", why), 0.0
        if isinstance(e, _ProxyRefused):
            proxy, variable = e.proxy
            how = (f"it asks for credentials: give them in {variable} (http://USER:PASSWORD@HOST:PORT)"
                   if str(e).startswith("407")
                   else f"check the proxy's rules for {endpoint}, or {_bypass_proxy(variable)}")
            return HubError(f"cannot {what} {repo}: the proxy {proxy} ({variable}) refused the request to {endpoint} "
                            f"({e}): {how}"), None
        if isinstance(e, _Unreachable) and e.proxy:
            proxy, variable = e.proxy
            return HubUnreachableError(f"cannot {what} {repo}: cannot connect to the proxy {proxy} ({variable}) that "
                                       f"requests to {endpoint} go through; check that the proxy runs and the "
                                       f"variable names it, or {_bypass_proxy(variable)}, or set HF_HUB_OFFLINE=1 "
                                       "to work without the Hub",
                                       f"cannot connect to the proxy {proxy} ({variable}): {e}"), None
        if isinstance(e, _Unreachable):
            return HubUnreachableError(f"cannot {what} {repo}: cannot connect to {endpoint}; check the network or "
                                       "HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to work without the Hub",
                                       f"cannot connect to {endpoint} ({e})"), None
        if isinstance(e, _Unsafe):
            return HubError(f"cannot {what} {repo}: the Hub at {endpoint} answered {e}; refusing it (nothing was "
                            "written; a broken or hostile endpoint? check HF_ENDPOINT)"), None
        if isinstance(e, _DeadlineExceeded):  # an outage, as the retries giving up at the deadline are (before, a
            # plain HubError: a pull whose Hub answered slowly failed whatever the Hub cache held)
            return HubOutOfTimeError(f"cannot {what} {repo}: out of time ({e})", f"out of time ({e})"), None
    url = f"{endpoint}/{'datasets/' if repo_type == 'dataset' else ''}{repo.split('/')[0]}/{repo.split('/')[1]}" if "/" in repo else endpoint
    for e in _chain(exc):
        if isinstance(e, hf.OfflineModeIsEnabled):
            return HubError(_offline_message(what, repo)), None
        if isinstance(e, hf.GatedRepoError):
            how = ("your token has no access yet" if has_token else "no token is set")
            return GatedRepoError(
                f"the {kind} {repo} is gated and {how}: request access at {url} (log in and accept its conditions), "
                "then set HF_TOKEN or run `hf auth login`"), None
        if isinstance(e, hf.RevisionNotFoundError):
            return _RevisionNotFound(f"revision not found in the {kind} {repo}"), None
        if isinstance(e, hf.RemoteEntryNotFoundError):
            return NotFoundError(f"cannot {what} the {kind} {repo}: no such file at this revision"), None
        if isinstance(e, hf.RepositoryNotFoundError):
            status = e.response.status_code if getattr(e, "response", None) is not None else None
            if status in (401, 403):
                return _auth_error(what, repo, kind, url, has_token, status, endpoint), None
            private = "it is private and this token cannot read it" if has_token else "it is private: set HF_TOKEN"
            return NotFoundError(f"the {kind} {repo} does not exist on {endpoint} (or {private})"), None
        if isinstance(e, hf.HfHubHTTPError) and getattr(e, "response", None) is not None:
            status = e.response.status_code
            if status in RETRY_STATUS:
                return _unavailable(what, repo, endpoint, status), _retry_after(e.response)
            if status in (401, 403):
                return _auth_error(what, repo, kind, url, has_token, status, endpoint), None
            if status == 404:
                return NotFoundError(f"not found on the Hub: {repo} ({what})"), None
            return HubError(f"cannot {what} {repo}: the Hub answered {status}"), None
        if isinstance(e, httpx2.ConnectError):
            return HubUnreachableError(f"cannot {what} {repo}: cannot connect to {endpoint}; check the network or HF_ENDPOINT, "
                                       "or set HF_HUB_OFFLINE=1 to work without the Hub", f"cannot connect to {endpoint}"), None
        if isinstance(e, httpx2.TransportError):  # a dropped or timed-out connection: retried like a 5xx
            return HubUnreachableError(f"cannot {what} {repo}: the connection to {endpoint} failed "
                                       f"({type(e).__name__})", f"the connection to {endpoint} failed "
                                       f"({type(e).__name__})"), 0.0
    return None, None


def _bypass_proxy(variable: str) -> str:
    """The way around a proxy that fails (refuses, or cannot be connected to), as both its errors end."""
    return f"unset {variable} (or name the host in NO_PROXY) to reach the Hub without it"


def _unavailable(what: str, repo: str, endpoint: str, status: int) -> HubUnavailableError:
    """A 408/429/5xx answer (retried; :meth:`HubClient._call` says how often when it gives up)."""
    return HubUnavailableError(f"cannot {what} {repo}: the Hub answered {status}",
                               f"the Hub at {endpoint} answered {status}")


def _auth_error(what, repo, kind, url, has_token, status, endpoint="the Hub") -> GatedRepoError | HiddenRepoError:
    if status == 401 and not has_token and what not in ("write to", "create", "check the token for"):
        # without a token the Hub answers a repo that does not exist (deleted, renamed without a redirect, a typo) as
        # it answers a private one, 401 (huggingface_hub: "401 is misleading"); no token was refused, so not the auth
        # failure (exit 4) it was before, but a repo not found (exit 1) that may be private. (A gated repo's files
        # answer 401 with X-Error-Code GatedRepo: a GatedRepoError before this is reached.)
        return HiddenRepoError(f"the {kind} {repo} is not on the Hub at {endpoint}, or it is private or gated (without "
                               "a token the Hub answers 401 for all three): check the id, and if it is yours or you "
                               f"have access set HF_TOKEN or run `hf auth login` (gated: request access at {url})")
    if what == "check the token for" and status == 401:  # whoami: the token itself is refused, whatever its rights
        return GatedRepoError(f"the Hub at {endpoint} does not accept the "
                              "Hugging Face token (401: mistyped, expired or revoked), so nothing can be published to "
                              f"{repo}: create a token with write access at https://huggingface.co/settings/tokens, "
                              "then run `hf auth login` or set HF_TOKEN")
    if what in ("write to", "create", "check the token for"):
        return GatedRepoError(f"the Hub refused to let this token {what} the {kind} {repo} ({status}): use a token with "
                              f"write access to {repo.split('/')[0]} (https://huggingface.co/settings/tokens), then run "
                              "`hf auth login` or set HF_TOKEN")
    if has_token:
        msg = (f"the Hub refused to let this token {what} the {kind} {repo} ({status}): if it is gated, request access at "
               f"{url}; otherwise check that HF_TOKEN is valid and has read access")
    else:
        msg = (f"the {kind} {repo} needs a Hugging Face token ({status}): request access at {url} if it is gated, "
               "then set HF_TOKEN or run `hf auth login`")
    return GatedRepoError(msg)


def _retry_after(response) -> float:
    """The seconds an answer's ``Retry-After`` asks to wait: a number of seconds, or an HTTP date (RFC 9110, as a CDN
    or proxy may send); 0 when absent, unreadable or past."""
    import email.utils

    value = response.headers.get("Retry-After") if response is not None else None
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return 0.0
    return max(0.0, when.timestamp() - time.time()) if when.tzinfo is not None else 0.0
