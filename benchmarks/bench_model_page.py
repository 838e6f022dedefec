"""Latency of one model's page, ``GET /v1/models/{id}`` on a real ``taskspace serve``, sequential and under concurrent
clients.

    python benchmarks/bench_model_page.py [--home DIR] [--source indexer/data/sample --source DIR ...]
                                          [--requests 150] [--clients 1 12] [--deadline 170]

1. Indexes ``--source`` (repeatable; default the bundled sample) with ``taskspace index`` into ``--home``, else a
   fresh TASKSPACE_HOME (a temporary folder, removed at the end). ``--home`` without ``--source``: its index as it
   is (the environment's TASKSPACE_DATABASE_URL and TASKSPACE_QDRANT_URL, if set, are used as ever).
2. Starts ``taskspace serve --host 127.0.0.1 --port P`` on it (no worker) and waits for ``/readyz``.
3. Lists every indexed model (``GET /v1/models``, paged), then per entry of ``--clients``: that many threads
   (keep-alive) make ``--requests`` requests in all, ``GET /v1/models/{id}`` over the models in turn; each must
   answer 200. Its first request per model is not a warm-up: the server answered one page before (step 3).
4. Stops the server (SIGTERM) and prints a Markdown table: clients, requests, p50/p95/max latency (ms), requests/s.

Writes nothing into the repository; the whole run is bounded by ``--deadline`` seconds (a client stops there).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKSPACE = str(Path(sys.executable).parent / "taskspace")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(conn: http.client.HTTPConnection, path: str) -> tuple[int, bytes]:
    conn.request("GET", path)
    r = conn.getresponse()
    return r.status, r.read()


def wait_ready(port: int, proc: subprocess.Popen, timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"taskspace serve exited with {proc.returncode} before it was ready")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            if _get(c, "/readyz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise SystemExit(f"taskspace serve was not ready after {timeout:.0f}s")


def model_keys(port: int) -> list[str]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    keys, offset = [], 0
    while offset is not None:
        status, body = _get(c, f"/v1/models?offset={offset}&limit=100")
        if status != 200:
            raise SystemExit(f"GET /v1/models answered {status}: {body[:200]!r}")
        page = json.loads(body)
        keys += [m["model"] for m in page["models"]]
        offset = page["next_offset"]
    return keys


def load(port: int, keys: list[str], clients: int, requests: int, stop_at: float) -> tuple[list[float], float]:
    """``requests`` GETs of the models' pages over ``clients`` threads: (latencies in seconds, wall seconds)."""
    paths = [f"/v1/models/{urllib.parse.quote(k, safe='/')}" for k in keys]
    lat: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    counter = iter(range(requests))

    def client() -> None:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while time.monotonic() < stop_at:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            t = time.perf_counter()
            status, body = _get(c, paths[i % len(paths)])
            dt = time.perf_counter() - t
            with lock:
                lat.append(dt)
                if status != 200:
                    errors.append(f"{paths[i % len(paths)]}: {status} {body[:200]!r}")

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"{len(errors)} request(s) failed, e.g. {errors[0]}")
    return lat, time.perf_counter() - t0


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, help="a TASKSPACE_HOME (indexed unless it holds an index already)")
    ap.add_argument("--source", action="append", type=Path, help="a source to index (repeatable)")
    ap.add_argument("--requests", type=int, default=150, help="requests per --clients entry")
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 12])
    ap.add_argument("--deadline", type=float, default=170.0, help="seconds for the whole run")
    args = ap.parse_args()
    stop_at = time.monotonic() + args.deadline
    temp = args.home is None
    home = Path(tempfile.mkdtemp(prefix="bench-model-page-")) if temp else args.home
    env = {**os.environ, "TASKSPACE_HOME": str(home), "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
    proc = None
    try:
        if temp or args.source:
            cmd = [TASKSPACE, "index"]
            for s in args.source or [ROOT / "indexer" / "data" / "sample"]:
                cmd += ["--source", str(s)]
            t = time.perf_counter()
            subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
            print(f"indexed {home} in {time.perf_counter() - t:.1f}s", flush=True)
        port = free_port()
        proc = subprocess.Popen([TASKSPACE, "serve", "--host", "127.0.0.1", "--port", str(port)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_ready(port, proc, 60)
        keys = model_keys(port)
        rows = []
        for n in args.clients:
            lat, wall = load(port, keys, n, args.requests, stop_at)
            if not lat:
                break
            rows.append((n, len(lat), 1000 * _pct(lat, 0.5), 1000 * _pct(lat, 0.95), 1000 * max(lat), len(lat) / wall))
        print(f"\nGET /v1/models/{{id}}, {len(keys)} models\n")
        print("| clients | requests | p50 ms | p95 ms | max ms | requests/s |")
        print("|---:|---:|---:|---:|---:|---:|")
        for n, k, p50, p95, mx, rps in rows:
            print(f"| {n} | {k} | {p50:.0f} | {p95:.0f} | {mx:.0f} | {rps:.1f} |")
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        if temp:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
