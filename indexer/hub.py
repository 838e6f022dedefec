"""Everything that talks to the Hugging Face Hub. The only module that imports ``huggingface_hub``.

- :meth:`HubClient.model_info` -> a dict of model metadata for filters (the field names of
  ``Store.upsert_models``: key, revision, author, license, num_parameters, pipeline_tag, library, tags,
  downloads, likes, gated, created_at, last_modified, base_model).
- :meth:`HubClient.list_datasets` (an organisation's datasets, e.g. ``open-llm-leaderboard``),
  :meth:`HubClient.repo_snapshot` (commit sha + file list at a revision) and :meth:`HubClient.download`
  (chosen files at that exact commit into ``$TASKSPACE_HOME/hub``; cached, so nothing is fetched twice).
- The token comes from ``HF_TOKEN`` or the ``huggingface_hub`` login; it is never logged or put in a message.
  ``HF_ENDPOINT`` and ``HF_HUB_OFFLINE`` are read when a client is made (not at import).
- One place (:func:`_translate`) turns client errors into :mod:`indexer.errors`: 429 and 5xx (and dropped
  connections) are retried with exponential backoff (honouring ``Retry-After``), then :class:`HubError`;
  a gated repo -> :class:`GatedRepoError` saying which repo and how to request access; 401/403 ->
  GatedRepoError about the token; 404 -> :class:`NotFoundError`.
"""

from __future__ import annotations

import logging
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .errors import GatedRepoError, HubError, NotFoundError

log = logging.getLogger(__name__)

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w\-.]{0,95}/[\w\-.]{1,96}$")
RETRY_STATUS = (429, 500, 502, 503, 504)


class HubUnreachableError(HubError):
    """The Hub endpoint cannot be connected to at all (DNS, refused, no network): not retried."""


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


def _offline() -> bool:
    return (os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or "").strip().lower() in {"1", "true", "yes", "on"}


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
        sleep: Callable[[float], None] = time.sleep,
    ):
        from huggingface_hub import HfApi, constants
        from huggingface_hub import get_token

        self.endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
        # the library reads HF_HUB_OFFLINE once at import; make the environment at call time the truth
        constants.HF_HUB_OFFLINE = _offline()
        self._token = token or os.environ.get("HF_TOKEN") or get_token() or None
        if cache_dir is None:
            from .config import get_settings

            cache_dir = get_settings().home / "hub"
        self.cache_dir = Path(cache_dir)
        self.retries = max(0, int(retries))
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._sleep = sleep
        self._api = HfApi(endpoint=self.endpoint, token=self._token or False)

    def __repr__(self) -> str:  # never show the token
        return f"HubClient(endpoint={self.endpoint!r}, token={'set' if self._token else 'none'})"

    @property
    def offline(self) -> bool:
        return _offline()

    # -- the retry loop and the error translation -------------------------------------------------------

    def _call(self, what: str, repo: str, repo_type: str, fn: Callable, /, *args, **kwargs):
        if self.offline:
            raise HubError(f"cannot {what} {repo}: HF_HUB_OFFLINE is set; unset it to reach the Hub")
        attempt = 0
        while True:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - translated below, unknown ones re-raised
                err, retry_after = _translate(exc, what, repo, repo_type, self.endpoint, self._token is not None)
                if err is None:
                    raise
                if retry_after is None or attempt >= self.retries:
                    if retry_after is not None:
                        err = HubError(f"{err} (gave up after {attempt + 1} tries)")
                    raise err from None
                delay = min(self.max_backoff, max(retry_after, self.backoff * (2**attempt)))
                attempt += 1
                log.warning("Hub: %s; retry %d/%d in %.1fs", err, attempt, self.retries, delay)
                self._sleep(delay)

    # -- models ---------------------------------------------------------------------------------------

    def model_info(self, repo_id: str) -> dict:
        """Metadata of a model repo as a dict for ``Store.upsert_models`` (missing fields are None)."""
        info = self._call("read model info of", repo_id, "model", self._api.model_info, repo_id)
        card = info.card_data.to_dict() if getattr(info, "card_data", None) is not None else {}
        license_ = card.get("license")
        if isinstance(license_, list):
            license_ = ",".join(map(str, license_))
        base = card.get("base_model")
        if isinstance(base, list):
            base = base[0] if base else None
        st = getattr(info, "safetensors", None)
        gated = info.gated
        return {
            "key": info.id,
            "revision": info.sha,
            "author": info.author or (info.id.split("/", 1)[0] if "/" in info.id else None),
            "license": license_,
            "num_parameters": getattr(st, "total", None) if st is not None else None,
            "pipeline_tag": info.pipeline_tag,
            "library": info.library_name,
            "tags": list(info.tags or []),
            "downloads": info.downloads,
            "likes": info.likes,
            "gated": None if gated is None else str(gated).lower(),
            "created_at": info.created_at,
            "last_modified": info.last_modified,
            "base_model": base,
        }

    # -- datasets -------------------------------------------------------------------------------------

    def list_datasets(self, author: str, search: str | None = None, limit: int | None = None) -> list[str]:
        """Dataset repo ids of an organisation or user (optionally matching ``search``)."""

        def run():
            return [d.id for d in self._api.list_datasets(author=author, search=search, limit=limit)]

        return self._call("list the datasets of", author, "dataset", run)

    def repo_snapshot(self, repo_id: str, revision: str | None = None, repo_type: str = "dataset") -> RepoSnapshot:
        """The commit sha and file list of a repo at ``revision`` (default: main)."""

        def run():
            info = self._api.repo_info(repo_id, repo_type=repo_type, revision=revision)
            files = tuple(s.rfilename for s in (info.siblings or []))
            return RepoSnapshot(repo_id, repo_type, info.sha, files, getattr(info, "gated", None))

        return self._call("read", repo_id, repo_type, run)

    def download(self, snapshot: RepoSnapshot, files: list[str]) -> Path:
        """Download ``files`` of the snapshot at its exact commit; returns the local root holding them in
        the repo's layout. Files already in the cache at that commit are not fetched again."""
        from huggingface_hub import hf_hub_download

        root: Path | None = None
        for name in files:
            path = self._call(
                f"download {name} from", snapshot.repo_id, snapshot.repo_type, hf_hub_download,
                snapshot.repo_id, name, repo_type=snapshot.repo_type, revision=snapshot.sha,
                cache_dir=str(self.cache_dir), token=self._token or False, endpoint=self.endpoint,
            )
            p = Path(path)
            root = p.parents[len(Path(name).parts) - 1]
        if root is None:  # nothing to fetch: the (empty) snapshot folder
            root = self.cache_dir / f"{snapshot.repo_type}s--{snapshot.repo_id.replace('/', '--')}" / "snapshots" / snapshot.sha
            root.mkdir(parents=True, exist_ok=True)
        return root


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _translate(exc: Exception, what: str, repo: str, repo_type: str, endpoint: str, has_token: bool):
    """(indexer error, retry_after seconds or None if not retryable), or (None, None) for unknown errors."""
    import httpx2
    from huggingface_hub import errors as hf

    kind = "dataset" if repo_type == "dataset" else "model"
    url = f"{endpoint}/{'datasets/' if repo_type == 'dataset' else ''}{repo.split('/')[0]}/{repo.split('/')[1]}" if "/" in repo else endpoint
    for e in _chain(exc):
        if isinstance(e, hf.OfflineModeIsEnabled):
            return HubError(f"cannot {what} {repo}: HF_HUB_OFFLINE is set; unset it to reach the Hub"), None
        if isinstance(e, hf.GatedRepoError):
            how = ("your token has no access yet" if has_token else "no token is set")
            return GatedRepoError(
                f"the {kind} {repo} is gated and {how}: request access at {url} (log in and accept its conditions), "
                "then set HF_TOKEN or run `hf auth login`"), None
        if isinstance(e, hf.RevisionNotFoundError):
            return NotFoundError(f"revision not found in the {kind} {repo}"), None
        if isinstance(e, hf.RemoteEntryNotFoundError):
            return NotFoundError(f"cannot {what} the {kind} {repo}: no such file at this revision"), None
        if isinstance(e, hf.RepositoryNotFoundError):
            status = e.response.status_code if getattr(e, "response", None) is not None else None
            if status in (401, 403):
                return _auth_error(what, repo, kind, url, has_token, status), None
            return NotFoundError(f"the {kind} {repo} does not exist on {endpoint} (or it is private: set HF_TOKEN)"), None
        if isinstance(e, hf.HfHubHTTPError) and getattr(e, "response", None) is not None:
            status = e.response.status_code
            if status in RETRY_STATUS:
                return HubError(f"cannot {what} {repo}: the Hub answered {status}"), _retry_after(e.response)
            if status in (401, 403):
                return _auth_error(what, repo, kind, url, has_token, status), None
            if status == 404:
                return NotFoundError(f"not found on the Hub: {repo} ({what})"), None
            return HubError(f"cannot {what} {repo}: the Hub answered {status}"), None
        if isinstance(e, httpx2.ConnectError):
            return HubUnreachableError(f"cannot {what} {repo}: cannot connect to {endpoint}; check the network or HF_ENDPOINT, "
                                       "or set HF_HUB_OFFLINE=1 to work without the Hub"), None
        if isinstance(e, httpx2.TransportError):  # a dropped or timed-out connection: retried like a 5xx
            return HubError(f"cannot {what} {repo}: the connection to {endpoint} failed ({type(e).__name__})"), 0.0
    return None, None


def _auth_error(what, repo, kind, url, has_token, status) -> GatedRepoError:
    if has_token:
        msg = (f"the Hub refused to let this token {what} the {kind} {repo} ({status}): if it is gated, request access at "
               f"{url}; otherwise check that HF_TOKEN is valid and has read access")
    else:
        msg = (f"the {kind} {repo} needs a Hugging Face token ({status}): request access at {url} if it is gated, "
               "then set HF_TOKEN or run `hf auth login`")
    return GatedRepoError(msg)


def _retry_after(response) -> float:
    value = response.headers.get("Retry-After") if response is not None else None
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0
