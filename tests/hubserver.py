"""A local HTTP server that speaks the part of the Hugging Face Hub API that huggingface_hub 2.4 uses,
serving repos from a folder laid out as ``<root>/models/<org>/<name>/...`` and ``<root>/datasets/<org>/<name>/...``.

A repo folder may hold ``_info.json``: fields merged into the ``/api/{type}s/{id}`` answer (cardData,
safetensors, pipeline_tag, gated, downloads, ...); a model whose ``_info.json`` gives no ``tags`` gets the model-tree
tags the Hub derives from its card's ``base_model`` (:meth:`HubServer.model_tree_tags`: ``base_model:adapter:BASE``
for a PEFT adapter, ...). ``"gated": "manual"`` (or "auto") makes file downloads
answer 401 (no token) / 403 (a token not in ``_info.json``'s ``"_allowed_tokens"``) with ``X-Error-Code: GatedRepo``.
The commit sha of a repo is the sha1 of its files (names and contents), so editing a file makes a new revision.

Endpoints: ``GET /api/{models|datasets}?author=&search=&limit=``, ``GET /api/{type}s/{id}[/revision/{rev}]``,
``GET /api/{type}s/{id}/tree/{rev}[/{path}]?recursive=``, ``HEAD``/``GET /[datasets/]{id}/resolve/{rev}/{path}``.
Unknown repo -> 404 ``X-Error-Code: RepoNotFound``; unknown revision -> ``RevisionNotFound``; unknown file ->
``EntryNotFound``; a short commit sha (4+ hex digits) names the one commit it starts, as on the Hub. Repo ids are matched case-insensitively and a repo's info gives its own id (as the Hub does).
``server.rename(rtype, old, new)`` makes requests naming ``old`` answer 307 to ``new`` (a renamed
repo). ``server.fail(prefix, [429, 503])`` makes the next requests whose path starts with ``prefix``
answer those statuses first (to test retries and error paths); an entry may be ``(status, {header: value})`` to
send headers of its own (``(429, {"Retry-After": "7"})``; a plain 408/429/5xx answers ``Retry-After: 0``, other
statuses no such header); ``server.log`` records ``(method, path, auth_present)``.
``server.require_token(repo_id, tokens)`` makes a (non-gated) private repo: every request for it (info, tree,
files) answers as the Hub answers a repo it does not have, ``X-Error-Code: RepoNotFound`` with 401 without a token and
with 404 to a token not in ``tokens`` (the Hub never says 403 to a read of a private repo: a token that cannot read it
is answered as if the repo did not exist). ``server.hide_missing = True``: a repo that does not exist answers a request
without a token 401 too, as the Hub does (``X-Error-Code: RepoNotFound``; 404 with a token). A gated repo's info and
listing answer anyone; its files answer 401 (no token) and 403 (a token without access), ``X-Error-Code: GatedRepo``.

Misbehaving servers (a broken mirror, a hostile ``HF_ENDPOINT``): ``server.tamper(repo_id, sha=..., files=...,
etag=...)`` makes the repo answer that commit ``sha`` (in its info; ``X-Repo-Commit`` keeps the real one), list extra ``files``
(``{name: bytes}``, any name, e.g. ``../../escape.jsonl``; served at their URL path) and answer ``etag`` as every
file's ETag. ``server.drop(prefix, n)`` closes the connection without an answer on the next ``n`` requests whose path
starts with ``prefix`` (a dropping server). ``server.cut(prefix, n)``: the next ``n`` file answers (GET ``/resolve/``)
under ``prefix`` send their headers (the whole Content-Length) and half the body, then close the connection (a
connection reset mid-file). ``server.slow(prefix, seconds)``: file answers under ``prefix`` send their body 1 KB at a
time, ``seconds`` apart (a server trickling its bytes, each read well within any read timeout).
``server.stall(prefix)``: requests under ``prefix`` are read and never answered, the connection held open until the
server stops (a server that accepts and then hangs).
``server.garble(prefix, n)``: the next ``n`` answers under ``prefix`` are 200 with a
body that is not JSON (a proxy's error page, a broken mirror). ``server.misanswer(prefix, body, n)``: the next ``n``
answers under ``prefix`` (GET or POST) are 200 with the JSON ``body``, of a shape huggingface_hub does not expect (a
preupload answer whose ``files`` is no list, an LFS batch answer without ``objects``).

Writing (what ``HfApi.create_repo`` / ``create_commit`` / ``upload_folder`` send): ``POST /api/repos/create`` (JSON
``{name, organization, type, visibility}``; 409 when it exists), ``POST /api/validate-yaml``, ``GET /api/whoami-v2``,
``POST /api/{type}s/{id}/preupload/{rev}`` (answers ``uploadMode: "regular"`` for every file, so the client inlines
them) and ``POST /api/{type}s/{id}/commit/{rev}`` (the client's NDJSON body: a ``header`` line with ``summary``,
``description`` and optional ``parentCommit``, then ``file`` lines with base64 ``content``, ``deletedFile`` and
``deletedFolder`` lines; an ``lfsFile`` line is refused with 422 unless ``server.lfs`` is on). ``server.lfs = True``
(off by default): preupload answers ``uploadMode: "lfs"`` for every file, ``POST /{prefix}{id}.git/info/lfs/objects/batch``
answers the ``basic`` transfer to ``PUT /_lfs/{sha256}``, and an ``lfsFile`` line commits an uploaded object; there is no
Xet endpoint (``/api/{type}s/{id}/xet-write-token/{rev}`` answers 404), as on a server that speaks LFS only.
``server.xet_cas = URL``: that endpoint answers 200 naming ``URL`` as the Xet storage, as the Hub does (nothing here speaks
Xet: a URL under the server's own answers 404, a Xet storage that fails). A commit
applies its operations to the repo folder, records ``server.commits`` (``{repo, summary, added, deleted, sha}``) and
keeps the repo's earlier file sets, so an older commit sha still resolves (``@REV``). ``server.tokens`` maps a token
to its role (``"write"``/``"read"``): when it is non-empty, writes need a write token (401 without a known token,
403 with a read one) and whoami answers the role.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse


def _git_oid(data: bytes) -> str:
    """A file's ETag and tree ``oid`` as the Hub gives a file not stored in LFS: its git blob id, the sha1 of
    ``blob <size>\\0`` and its bytes (huggingface_hub names the cached blob by it)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class HubServer:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.log: list[tuple[str, str, bool]] = []
        self._faults: list[tuple[str, list]] = []
        self.private: dict[str, set[str]] = {}
        self._drops: list[list] = []
        self._cuts: list[list] = []
        self._garbles: list[list] = []
        self._misanswers: list[list] = []
        self.slows: dict[str, float] = {}
        self.stalls: list[str] = []  # path prefixes answered never (:meth:`stall`)
        self._stopped = threading.Event()
        self.tampered: dict[str, dict] = {}
        self.tokens: dict[str, str] = {}
        self.commits: list[dict] = []
        self.history: dict[str, dict[str, dict[str, bytes]]] = {}  # repo dir -> sha -> {file: bytes}
        self.renamed: dict[str, str] = {}  # URL path prefix of an old repo id -> that of its new id
        #: True: a repo that does not exist answers a request without a token 401 (X-Error-Code RepoNotFound), as the
        #: Hub does (it answers a missing repo as a private one), and 404 only to a request with a token
        self.hide_missing = False
        #: True: preupload answers ``uploadMode: "lfs"`` for every file (as the Hub does for binary ones), the LFS batch
        #: endpoint answers the ``basic`` transfer, uploads are PUT to ``/_lfs/{oid}`` and a commit takes ``lfsFile``
        #: lines of uploaded objects; there is no Xet endpoint (``xet-write-token`` answers 404), as on a server that
        #: speaks LFS only
        self.lfs = False
        self.lfs_objects: dict[str, bytes] = {}  # sha256 -> bytes PUT to /_lfs/
        #: a URL: the Xet write-token endpoint answers 200 naming it as the Xet storage (CAS) server, as the Hub does;
        #: nothing here speaks Xet itself, so a URL nothing listens at is a Xet storage that cannot be reached
        self.xet_cas: str | None = None
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"hub": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def start(self) -> "HubServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()  # the stalled requests end
        self.httpd.shutdown()
        self.httpd.server_close()

    def fail(self, prefix: str, statuses: list) -> None:
        """The next requests under ``prefix`` answer ``statuses`` in turn: ints or ``(status, headers)``."""
        with self._lock:
            self._faults.append((prefix, list(statuses)))

    def require_token(self, repo_id: str, tokens) -> None:
        """Make ``repo_id`` private: answered as a missing repo (``X-Error-Code: RepoNotFound``) to a request without
        a token (401) or with one not in ``tokens`` (404), as the Hub answers."""
        self.private[repo_id] = set(tokens)

    def _private_status(self, repo_id: str, auth: str | None) -> int | None:
        """The status a private repo answers this request with (its ``X-Error-Code`` is ``RepoNotFound``), or None
        when the token may read it: 401 without a token, 404 with another (not 403: the Hub does not tell a token
        that cannot read a private repo that the repo exists)."""
        if repo_id not in self.private:
            return None
        token = (auth or "").removeprefix("Bearer ").strip()
        if not token:
            return 401
        return None if token in self.private[repo_id] else 404

    def tamper(self, repo_id: str, *, sha: str | None = None, files: dict[str, bytes] | None = None,
               etag: str | None = None) -> None:
        self.tampered[repo_id] = {"sha": sha, "files": dict(files or {}), "etag": etag}

    def rename(self, rtype: str, old: str, new: str) -> None:
        """The repo ``old`` was renamed ``new`` (its folder is ``new``'s): requests naming ``old`` (its info, tree and
        files) answer 307 to the same path under ``new``, as the Hub redirects a renamed repo."""
        prefix = "" if rtype == "model" else f"{rtype}s/"
        self.renamed[f"/api/{rtype}s/{old}"] = f"/api/{rtype}s/{new}"
        self.renamed[f"/{prefix}{old}/resolve/"] = f"/{prefix}{new}/resolve/"

    def _redirect(self, path: str) -> str | None:
        for old, new in self.renamed.items():
            if path == old or path.startswith(old + "/") or (old.endswith("/") and path.startswith(old)):
                return new + path[len(old):]
        return None

    def drop(self, prefix: str, n: int) -> None:
        with self._lock:
            self._drops.append([prefix, n])

    def cut(self, prefix: str, n: int) -> None:
        with self._lock:
            self._cuts.append([prefix, n])

    def slow(self, prefix: str, seconds: float) -> None:
        self.slows[prefix] = seconds

    def stall(self, prefix: str) -> None:
        """Requests under ``prefix`` are never answered (their connection held open until the server stops)."""
        self.stalls.append(prefix)

    def garble(self, prefix: str, n: int) -> None:
        with self._lock:
            self._garbles.append([prefix, n])

    def misanswer(self, prefix: str, body, n: int = 1) -> None:
        with self._lock:
            self._misanswers.append([prefix, n, body])

    def _misanswer_for(self, path: str):
        with self._lock:
            for m in self._misanswers:
                if path.startswith(m[0]) and m[1] > 0:
                    m[1] -= 1
                    return m[2]
        return None

    def _drop_for(self, path: str, drops: list | None = None) -> bool:
        with self._lock:
            for d in self._drops if drops is None else drops:
                if path.startswith(d[0]) and d[1] > 0:
                    d[1] -= 1
                    return True
        return False

    def _fault_for(self, path: str):
        with self._lock:
            for prefix, statuses in self._faults:
                if path.startswith(prefix) and statuses:
                    return statuses.pop(0)
        return None

    def downloads(self, contains: str = "") -> list[str]:
        """Paths of file GETs (``/resolve/``) so far."""
        return [p for m, p, _ in self.log if m == "GET" and "/resolve/" in p and contains in p]

    # -- repos ------------------------------------------------------------------------------------------

    def repo_dir(self, rtype: str, repo_id: str) -> Path | None:
        """The repo's folder; an id in another case finds it too (the Hub's repo ids are case-insensitive: it answers
        ``Meta-Llama/llama-3-8b`` with the repo ``meta-llama/Llama-3-8B``, whose own id its info gives)."""
        if "/" not in repo_id:
            return None
        d = self.root / f"{rtype}s" / repo_id
        if d.is_dir():
            return d
        org, _, name = repo_id.partition("/")
        base = self.root / f"{rtype}s"
        for o in (p for p in (base.iterdir() if base.is_dir() else ()) if p.name.lower() == org.lower()):
            for r in (p for p in o.iterdir() if p.name.lower() == name.lower() and p.is_dir()):
                return r
        return None

    @staticmethod
    def repo_id(d: Path) -> str:
        """The repo's own id (its folder's spelling)."""
        return f"{d.parent.name}/{d.name}"

    def _tamper_of(self, d: Path) -> dict:
        return self.tampered.get(f"{d.parent.name}/{d.name}", {})

    def files(self, d: Path) -> list[str]:
        real = [str(p.relative_to(d)) for p in d.rglob("*") if p.is_file() and p.name != "_info.json"]
        return sorted(real + list(self._tamper_of(d).get("files", {})))

    def read(self, d: Path, name: str) -> bytes | None:
        extra = self._tamper_of(d).get("files", {})
        if name in extra:
            return extra[name]
        f = d / name
        return f.read_bytes() if f.is_file() and f.name != "_info.json" else None

    def revisions(self, d: Path) -> tuple[str, ...]:
        """The revisions the repo answers to: main, its commit, a tampered sha and earlier commits."""
        return ("main", self.sha(d), self.info_sha(d), *self.history.get(str(d), {}))

    def resolve(self, d: Path, rev: str) -> str | None:
        """The revision ``rev`` names: itself, or the one commit a short sha (4 to 39 hex digits) starts, as the Hub
        resolves one (huggingface_hub#197: "fixed server-side" in 2023); None when it names none."""
        revs = self.revisions(d)
        if rev in revs:
            return rev
        if re.fullmatch(r"[0-9a-f]{4,39}", rev):
            hits = {r for r in revs if len(r) == 40 and r.startswith(rev)}
            if len(hits) == 1:
                return hits.pop()
        return None

    def snapshot(self, d: Path, rev: str) -> dict[str, bytes] | None:
        """The files of an earlier commit ``rev`` (None: ``rev`` is the current state)."""
        if rev in ("main", self.sha(d), self.info_sha(d)):
            return None
        return self.history.get(str(d), {}).get(rev)

    # -- writing ---------------------------------------------------------------------------------------

    def role(self, auth: str | None) -> str | None:
        """The role of the request's token: ``"write"`` for any token when ``tokens`` is empty, else its entry."""
        token = (auth or "").removeprefix("Bearer ").strip()
        if not token:
            return None
        return self.tokens.get(token) if self.tokens else "write"

    def create(self, rtype: str, repo_id: str) -> bool:
        d = self.root / f"{rtype}s" / repo_id
        if d.is_dir():
            return False
        d.mkdir(parents=True)
        return True

    def commit(self, rtype: str, repo_id: str, lines: list[dict]) -> dict:
        """Apply an NDJSON commit body; returns the record appended to ``commits`` (raises ValueError on a bad one)."""
        d = self.repo_dir(rtype, repo_id)
        header = next((x["value"] for x in lines if x.get("key") == "header"), None)
        if header is None or not header.get("summary"):
            raise ValueError("a commit needs a header line with a summary")
        with self._lock:
            before = {f: self.read(d, f) for f in self.files(d)}
            parent = header.get("parentCommit")
            if parent is not None and parent != self.sha(d):
                raise PermissionError(f"parentCommit {parent} is not the head {self.sha(d)}")
            added, deleted = [], []
            for x in lines:
                key, v = x.get("key"), x.get("value") or {}
                if key == "header":
                    continue
                path = v.get("path", "")
                if not path or path.startswith("/") or ".." in path.split("/"):
                    raise ValueError(f"bad path {path!r}")
                if key == "file":
                    if v.get("encoding") != "base64":
                        raise ValueError("file content must be base64")
                    target = d / path
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(base64.b64decode(v["content"]))
                    added.append(path)
                elif key == "deletedFile":
                    if not (d / path).is_file():
                        raise FileNotFoundError(f"A file with this name doesn't exist: {path}")
                    (d / path).unlink()
                    deleted.append(path)
                elif key == "deletedFolder":
                    for f in sorted((d / path).rglob("*"), reverse=True):
                        if f.is_file():
                            f.unlink()
                            deleted.append(str(f.relative_to(d)))
                elif key == "lfsFile":
                    data = self.lfs_objects.get(v.get("oid"))
                    if not self.lfs or data is None:
                        raise NotImplementedError(f"no LFS object {v.get('oid')} was uploaded to this test server")
                    target = d / path
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
                    added.append(path)
                else:
                    raise ValueError(f"unknown commit line {key!r}")
            old_sha = hashlib.sha1()
            for f in sorted(before):
                old_sha.update(f.encode() + b"\0" + before[f])
            self.history.setdefault(str(d), {})[old_sha.hexdigest()] = before
            rec = {"repo": repo_id, "summary": header["summary"], "description": header.get("description", ""),
                   "added": added, "deleted": deleted, "sha": self.sha(d)}
            self.commits.append(rec)
            return rec

    def info_sha(self, d: Path) -> str:
        """The sha the repo's info claims (a tampered one; X-Repo-Commit keeps the real one)."""
        return self._tamper_of(d).get("sha") or self.sha(d)

    def sha(self, d: Path) -> str:
        h = hashlib.sha1()
        for f in self.files(d):
            h.update(f.encode() + b"\0" + self.read(d, f))
        return h.hexdigest()

    def meta(self, d: Path) -> dict:
        p = d / "_info.json"
        return json.loads(p.read_text()) if p.is_file() else {}

    def info(self, rtype: str, repo_id: str, d: Path) -> dict:
        meta = {k: v for k, v in self.meta(d).items() if not k.startswith("_")}
        if not isinstance(meta.get("cardData", {}), dict):  # the Hub gives a card's metadata only as a mapping: a
            del meta["cardData"]  # card whose YAML header is a list or a text has none (before: AttributeError)
        out = {"_id": hashlib.md5(repo_id.encode()).hexdigest()[:24], "id": repo_id, "author": repo_id.split("/")[0],
               "sha": self.info_sha(d), "private": False, "gated": False, "disabled": False, "downloads": 0, "likes": 0,
               "tags": [], "createdAt": "2024-01-01T00:00:00.000Z", "lastModified": "2024-06-01T00:00:00.000Z",
               "siblings": [{"rfilename": f} for f in self.files(d)]}
        if rtype == "model":
            out["modelId"] = repo_id
            out["tags"] = self.model_tree_tags(meta, out["siblings"])
        out.update(meta)
        return out

    @staticmethod
    def model_tree_tags(meta: dict, siblings: list[dict]) -> list[str]:
        """The tags the Hub adds to a model from its card's ``base_model`` (its model tree), when ``_info.json`` gives
        no ``tags`` of its own: ``base_model:BASE`` and ``base_model:RELATION:BASE``, the relation ``adapter`` for a
        repo holding ``adapter_config.json`` (PEFT), ``quantized`` for one whose info has ``gguf``, whose card says
        ``quantized_by`` or whose config has a ``quantization_config``, ``merge`` for a card naming several bases, else
        ``finetune``."""
        bases = (meta.get("cardData") or {}).get("base_model")
        bases = [bases] if isinstance(bases, str) else [b for b in bases or [] if isinstance(b, str)]
        if not bases:
            return []
        files = {s.get("rfilename") for s in siblings}
        relation = ("merge" if len(bases) > 1 else "adapter" if "adapter_config.json" in files else
                    "quantized" if "gguf" in meta or "quantized_by" in (meta.get("cardData") or {})
                    or "quantization_config" in (meta.get("config") or {}) else "finetune")
        return [t for b in bases for t in (f"base_model:{b}", f"base_model:{relation}:{b}")]

    def list(self, rtype: str, author: str | None, search: str | None) -> list[dict]:
        base = self.root / f"{rtype}s"
        out = []
        if not base.is_dir():
            return out
        for org in sorted(p for p in base.iterdir() if p.is_dir()):
            if author and org.name != author:
                continue
            for repo in sorted(p for p in org.iterdir() if p.is_dir()):
                rid = f"{org.name}/{repo.name}"
                if search and search.lower() not in rid.lower():
                    continue
                info = self.info(rtype, rid, repo)
                info.pop("siblings", None)
                out.append(info)
        return out


class _Handler(BaseHTTPRequestHandler):
    hub: HubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, head: bool = False) -> None:
        self.send_response(status)
        hdrs = {"Content-Type": "application/json", "Content-Length": str(len(body))}
        hdrs.update(headers or {})
        for k, v in hdrs.items():
            self.send_header(k, v)
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def _json(self, status: int, obj, headers: dict | None = None, head: bool = False) -> None:
        self._send(status, json.dumps(obj).encode(), headers, head)

    def _error(self, status: int, code: str | None, message: str, head: bool = False) -> None:
        headers = {"X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self._json(status, {"error": message}, headers, head)

    def _missing(self, auth: str | None, head: bool) -> None:
        """A repo that does not exist: 404, or with ``hide_missing`` and no token 401 (as a private repo)."""
        if self.hub.hide_missing and not (auth or "").removeprefix("Bearer ").strip():
            return self._error(401, "RepoNotFound", "Repository not found", head)
        return self._error(404, "RepoNotFound", "Repository not found", head)

    def do_HEAD(self):
        self._route(head=True)

    def do_GET(self):
        self._route(head=False)

    def do_POST(self):
        url = urlparse(self.path)
        path = unquote(url.path)
        auth = self.headers.get("Authorization")
        self.hub.log.append(("POST", path, bool(auth)))
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        wrong = self.hub._misanswer_for(path)
        if wrong is not None:  # 200 with JSON of a shape the client does not expect
            return self._send(200, json.dumps(wrong).encode(), {"Content-Type": "application/json"})
        fault = self.hub._fault_for(path)
        if fault is not None:
            return self._send(fault, b"{}", {"Retry-After": "0"})
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        if parts[:2] == ["api", "validate-yaml"]:
            return self._json(200, {"errors": [], "warnings": []})
        role = self.hub.role(auth)
        if role is None:
            return self._error(401, None, "Invalid credentials in Authorization header")
        if role != "write":
            return self._error(403, None, "You don't have the rights to write to this repository: a read token")
        if self.hub.lfs and path.endswith(".git/info/lfs/objects/batch"):  # git-lfs's batch API, basic transfer
            req = json.loads(body)
            return self._json(200, {"transfer": "basic", "objects": [
                {"oid": o["oid"], "size": o["size"],
                 "actions": {"upload": {"href": f"{self.hub.url}/_lfs/{o['oid']}", "header": {}}}}
                for o in req["objects"]]})
        if parts[:3] == ["api", "repos", "create"]:
            req = json.loads(body or b"{}")
            rtype = req.get("type") or "model"
            repo_id = f"{req.get('organization') or 'tester'}/{req['name']}"
            prefix = "" if rtype == "model" else f"{rtype}s/"
            url = f"{self.hub.url}/{prefix}{repo_id}"
            if not self.hub.create(rtype, repo_id):  # the Hub's 409 names the repo's URL too
                return self._json(409, {"error": "You already created this model repo", "url": url},
                                  {"X-Error-Message": "You already created this repo"})
            return self._json(200, {"url": url, "name": repo_id})
        if len(parts) >= 6 and parts[0] == "api" and parts[1] in ("models", "datasets") and parts[4] in ("preupload", "commit"):
            rtype, repo_id, rev = parts[1][:-1], "/".join(parts[2:4]), "/".join(parts[5:])
            d = self.hub.repo_dir(rtype, repo_id)
            if d is None:
                return self._error(404, "RepoNotFound", "Repository not found")
            if rev != "main":
                return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev} (this server commits to main only)")
            if parts[4] == "preupload":
                files = json.loads(body)["files"]
                mode = "lfs" if self.hub.lfs else "regular"
                return self._json(200, {"files": [{"path": f["path"], "uploadMode": mode, "shouldIgnore": False,
                                                    "oid": None} for f in files]})
            try:
                lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
                rec = self.hub.commit(rtype, repo_id, lines)
            except PermissionError as exc:
                return self._error(412, None, str(exc))
            except FileNotFoundError as exc:
                return self._error(404, "EntryNotFound", str(exc))
            except NotImplementedError as exc:
                return self._error(422, None, str(exc))
            except (ValueError, KeyError) as exc:
                return self._error(400, None, f"bad commit body: {exc}")
            prefix = "" if rtype == "model" else f"{rtype}s/"
            return self._json(200, {"commitUrl": f"{self.hub.url}/{prefix}{repo_id}/commit/{rec['sha']}",
                                    "commitOid": rec["sha"], "pullRequestUrl": None})
        return self._error(404, None, "Not found")

    def do_PUT(self):  # an LFS object's upload (``server.lfs``)
        path = unquote(urlparse(self.path).path)
        self.hub.log.append(("PUT", path, bool(self.headers.get("Authorization"))))
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        oid = path[len("/_lfs/"):] if path.startswith("/_lfs/") else ""
        if not self.hub.lfs or oid != hashlib.sha256(data).hexdigest():
            return self._error(400 if self.hub.lfs else 404, None, f"not an LFS upload of its sha256: {path}")
        with self.hub._lock:
            self.hub.lfs_objects[oid] = data
        return self._send(200)

    def _route(self, head: bool) -> None:
        url = urlparse(self.path)
        path = unquote(url.path)
        auth = self.headers.get("Authorization")
        self.hub.log.append((self.command, path, bool(auth)))
        if self.hub._drop_for(path):  # a dropping server: no answer at all
            self.close_connection = True
            import socket

            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if any(path.startswith(p) for p in self.hub.stalls):  # accepted, never answered
            self.hub._stopped.wait()
            self.close_connection = True
            return
        moved = self.hub._redirect(path)
        if moved is not None:  # a renamed repo
            return self._send(307, b"", {"Location": moved + (f"?{url.query}" if url.query else "")}, head)
        if self.hub._drop_for(path, self.hub._garbles):  # 200 with a body that is not JSON
            return self._send(200, b"<html><body>502 Bad Gateway</body></html>", {"Content-Type": "text/html"}, head)
        wrong = self.hub._misanswer_for(path)
        if wrong is not None:
            return self._send(200, json.dumps(wrong).encode(), {"Content-Type": "application/json"}, head)
        fault = self.hub._fault_for(path)
        if fault is not None:
            status, headers = fault if isinstance(fault, tuple) else (fault, None)
            if headers is None:
                headers = {"Retry-After": "0"} if status in (408, 429) or status >= 500 else {}
            return self._send(status, b"{}", headers, head)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        parts = [unquote(p) for p in url.path.strip("/").split("/")]  # split first: a quoted revision may hold "/"
        if self.hub.xet_cas and len(parts) >= 5 and parts[0] == "api" and parts[4] == "xet-write-token":
            exp = 4102444800  # 2100: never expires in a test
            return self._json(200, {"casUrl": self.hub.xet_cas, "accessToken": "xet-test", "exp": exp},
                              {"X-Xet-Cas-Url": self.hub.xet_cas, "X-Xet-Access-Token": "xet-test",
                               "X-Xet-Token-Expiration": str(exp)})
        if parts[:2] == ["api", "whoami-v2"]:
            token = (auth or "").removeprefix("Bearer ").strip()
            role = self.hub.role(auth)
            if role is None or (self.hub.tokens and token not in self.hub.tokens):
                return self._error(401, None, "Invalid credentials in Authorization header", head)
            return self._json(200, {"type": "user", "name": "tester", "orgs": [],
                                    "auth": {"type": "access_token", "accessToken": {"displayName": "test",
                                                                                     "role": role}}}, head=head)
        if parts[0] == "api" and len(parts) >= 2 and parts[1] in ("models", "datasets"):
            rtype = parts[1][:-1]
            if len(parts) == 2:
                items = self.hub.list(rtype, q.get("author"), q.get("search"))
                if q.get("limit"):
                    items = items[: int(q["limit"])]
                return self._json(200, items, head=head)
            if len(parts) < 4:
                return self._error(404, "RepoNotFound", "Repository not found", head)
            d = self.hub.repo_dir(rtype, "/".join(parts[2:4]))
            if d is None:
                return self._missing(auth, head)
            repo_id = self.hub.repo_id(d)
            private = self.hub._private_status(repo_id, auth)
            if private is not None:  # as the Hub answers a repo it does not have (hide_missing)
                return self._error(private, "RepoNotFound", "Repository not found", head)
            rest = parts[4:]
            if not rest or rest[0] == "revision":
                rev = self.hub.resolve(d, asked := rest[1] if len(rest) > 1 else "main")
                if rev is None:
                    return self._error(404, "RevisionNotFound", f"Invalid rev id: {asked}", head)
                info = self.hub.info(rtype, repo_id, d)
                old = self.hub.snapshot(d, rev)
                if old is not None:  # an earlier commit
                    info.update(sha=rev, siblings=[{"rfilename": f} for f in sorted(old)])
                return self._json(200, info, head=head)
            if rest[0] == "tree":
                rev = self.hub.resolve(d, asked := rest[1] if len(rest) > 1 else "main")
                if rev is None:
                    return self._error(404, "RevisionNotFound", f"Invalid rev id: {asked}", head)
                sub = "/".join(rest[2:])
                recursive = q.get("recursive", "false").lower() in ("1", "true")
                entries = []
                old = self.hub.snapshot(d, rev)
                for f in (sorted(old) if old is not None else self.hub.files(d)):
                    if sub and not f.startswith(sub + "/"):
                        continue
                    rel = f[len(sub) + 1:] if sub else f
                    if not recursive and "/" in rel:
                        continue
                    data = old[f] if old is not None else self.hub.read(d, f)
                    entries.append({"type": "file", "path": f, "size": len(data), "oid": _git_oid(data)})
                return self._json(200, entries, head=head)
            return self._error(404, None, "Not found", head)
        # file resolve: /{datasets/}{org}/{name}/resolve/{rev}/{path}
        rtype = "model"
        if parts[0] in ("datasets", "spaces"):
            rtype = parts[0][:-1]
            parts = parts[1:]
        if len(parts) >= 5 and parts[2] == "resolve":
            d = self.hub.repo_dir(rtype, "/".join(parts[:2]))
            if d is None:
                return self._missing(auth, head)
            private = self.hub._private_status(self.hub.repo_id(d), auth)
            if private is not None:
                return self._error(private, "RepoNotFound", "Repository not found", head)
            meta = self.hub.meta(d)
            if meta.get("gated") not in (None, False, "false"):
                token = (auth or "").removeprefix("Bearer ").strip()
                if not token:
                    return self._error(401, "GatedRepo", "Access to this gated repo is restricted: log in", head)
                if token not in meta.get("_allowed_tokens", []):
                    return self._error(403, "GatedRepo", "Access to this gated repo is restricted", head)
            rev = self.hub.resolve(d, parts[3])
            sha = self.hub.sha(d)
            if rev is None:
                return self._error(404, "RevisionNotFound", f"Invalid rev id: {parts[3]}", head)
            fpath = "/".join(parts[4:])
            old = self.hub.snapshot(d, rev)
            data = self.hub.read(d, fpath) if old is None else old.get(fpath)
            if old is not None:
                sha = rev
            if data is None:
                return self._error(404, "EntryNotFound", f"{fpath} does not exist on {rev}", head)
            etag = self.hub._tamper_of(d).get("etag") or _git_oid(data)
            if not head and self.hub._drop_for(path, self.hub._cuts):  # half the body, then the connection closes
                self.send_response(200)
                for k, v in {"Content-Type": "application/octet-stream", "Content-Length": str(len(data)),
                             "X-Repo-Commit": sha, "ETag": f'"{etag}"'}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            pause = next((v for k, v in self.hub.slows.items() if path.startswith(k)), None)
            if not head and pause is not None:  # the body 1 KB at a time, ``pause`` seconds apart
                import time

                self.send_response(200)
                for k, v in {"Content-Type": "application/octet-stream", "Content-Length": str(len(data)),
                             "X-Repo-Commit": sha, "ETag": f'"{etag}"'}.items():
                    self.send_header(k, v)
                self.end_headers()
                for i in range(0, len(data), 1024):
                    try:
                        self.wfile.write(data[i:i + 1024])
                        self.wfile.flush()
                    except OSError:  # the client gave up
                        self.close_connection = True
                        return
                    time.sleep(pause)
                return
            return self._send(200, data, {"Content-Type": "application/octet-stream", "X-Repo-Commit": sha,
                                          "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}, head)
        return self._error(404, None, "Not found", head)
