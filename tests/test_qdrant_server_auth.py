"""A Qdrant server that refuses the API key (401 without one, 403 with a wrong one), met through the real
qdrant-client: a clear StoreError (exit 3) that says to check TASKSPACE_QDRANT_API_KEY and never shows the key.

No Qdrant server runs here, so a tiny local HTTP server stands in for one: it answers qdrant-client's REST calls
with the statuses a Qdrant server with ``service.api_key`` set answers (401 ``Must provide an API key``, 403
``Invalid API key``), and a valid key with Qdrant's JSON for an empty instance (GET /collections, /aliases)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from indexer.errors import StoreError

KEY = "qdrant-test-key-123"
pytestmark = pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    key = KEY
    revoked = False  # set on the server: every request is refused, even with the right key (a key revoked mid-run)
    seen: list

    def log_message(self, *args):
        pass

    def _send(self, status: int, obj) -> None:
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _route(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        given = self.headers.get("api-key")
        self.seen.append((self.command, self.path, given))
        if not given:
            return self._send(401, {"status": {"error": "Must provide an API key or an Authorization bearer token"}})
        if given != self.key or self.server.revoked:
            return self._send(403, {"status": {"error": "Invalid API key or JWT"}})
        if self.path.startswith("/collections/aliases") or self.path.startswith("/aliases"):
            return self._send(200, {"result": {"aliases": []}, "status": "ok", "time": 0.0})
        if self.path.startswith("/collections"):
            return self._send(200, {"result": {"collections": []}, "status": "ok", "time": 0.0})
        return self._send(404, {"status": {"error": "Not found"}})

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _route


@pytest.fixture
def qdrant_server():
    handler = type("H", (_Handler,), {"seen": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.revoked = False
    httpd.seen = handler.seen
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield httpd, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("key,status", [(None, 401), ("a-wrong-key-456", 403)])
def test_a_refused_api_key_is_a_clear_store_error(qdrant_server, key, status):
    from indexer.store.vectors import VectorStore

    httpd, url = qdrant_server
    with pytest.raises(StoreError) as e:
        VectorStore(url=url, api_key=key)
    msg = str(e.value)
    assert f"answered HTTP {status}" in msg and "TASKSPACE_QDRANT_API_KEY" in msg and e.value.exit_code == 3
    assert key is None or key not in msg
    assert httpd.seen and all(given == key for _, _, given in httpd.seen)  # the key went as qdrant-client sends it


def test_the_right_key_opens_and_a_key_revoked_later_fails_cleanly(qdrant_server):
    from indexer.store.vectors import VectorStore

    httpd, url = qdrant_server
    store = VectorStore(url=url, api_key=KEY)
    try:
        assert store.spaces() == []
        httpd.revoked = True
        with pytest.raises(StoreError) as e:
            store.spaces()
        assert "403" in str(e.value) and KEY not in str(e.value)
    finally:
        store.close()


def test_cli_with_a_refused_key_exits_3_with_one_line(qdrant_server, taskspace_script):
    _, url = qdrant_server
    env = dict(os.environ, TASKSPACE_QDRANT_URL=url, TASKSPACE_QDRANT_API_KEY="a-wrong-key-456")
    res = subprocess.run([taskspace_script, "check"], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 3, res.stderr[-2000:]
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("error:") and "HTTP 403" in last and "TASKSPACE_QDRANT_API_KEY" in last
    assert "a-wrong-key-456" not in res.stderr + res.stdout and "Traceback" not in res.stderr
