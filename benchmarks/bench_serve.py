"""Load on a real ``taskspace serve``: concurrent clients while an index pass runs in the server process.

    python benchmarks/bench_serve.py [--clients 4] [--requests 200] [--home DIR] [--source indexer/data/sample ...]

1. Indexes ``--source`` (repeatable; default: the bundled MMLU-Pro sample, 25 models x 420 prompts) into a fresh
   TASKSPACE_HOME (a temporary folder unless ``--home``) with ``taskspace index``; the second source below is made
   from the last one given, the clients' prompts come from the first.
2. Starts ``taskspace serve --host 127.0.0.1 --port P --worker-every 2s`` (the worker in the server process: the
   embedded index has one owner) and waits for ``/readyz``.
3. Runs ``--clients`` threads x ``--requests`` requests each (keep-alive, 30 s timeout per request): ``POST /v1/find``
   with distinct indexed prompts (every 10th a benchmark query, every 25th ``GET /v1/models``); a client whose
   requests are done before the pass ends goes on with its first ones until it has. Just before, it adds a second source (the same prompts under other benchmark names with every outcome flipped for a
   third of the prompts), so the worker's next pass ingests it, re-solves every model, recalibrates and publishes a
   new index while the clients run.
4. Asserts: every request answered 200 with the same shape (only the results change), the pass that ingested the
   new source ran (status ok) and overlapped the load; then stops the server (SIGTERM, bounded).

Prints p50/p95/max latency overall and for the requests made while the pass ran, as a Markdown block for
docs/BENCHMARKS.md. The whole run is bounded (``--deadline`` seconds). ``run_load`` is also what
tests/test_serve_load.py runs, smaller.
"""

from __future__ import annotations

import argparse
import csv
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKSPACE = str(Path(sys.executable).parent / "taskspace")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def flipped_source(src: Path, dst: Path, seed: int = 1) -> None:
    """A table source beside ``src`` (prompts.jsonl + outcomes.csv): the same prompts under the benchmark names
    ``extra/<name>``, every outcome of a third of the prompts flipped (so every model's outcomes change)."""
    dst.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    flip = set()
    with open(src / "prompts.jsonl") as f, open(dst / "prompts.jsonl", "w") as g:
        for line in f:
            row = json.loads(line)
            row["benchmark"] = "extra/" + row["benchmark"].split("/")[-1]
            row["prompt_id"] = "x-" + str(row["prompt_id"])
            if rng.random() < 1 / 3:
                flip.add(row["prompt_id"])
            g.write(json.dumps(row) + "\n")
    import gzip

    plain = src / "outcomes.csv"
    with (open(plain) if plain.exists() else gzip.open(src / "outcomes.csv.gz", "rt")) as f, \
            open(dst / "outcomes.csv", "w", newline="") as g:
        r, w = csv.reader(f), csv.writer(g)
        w.writerow(next(r))
        for model, pid, correct in r:
            pid = "x-" + pid
            w.writerow([model, pid, 1 - int(float(correct)) if pid in flip else correct])


def prompt_texts(src: Path, n: int) -> list[str]:
    with open(src / "prompts.jsonl") as f:
        texts = [json.loads(line)["text"] for line in f]
    return texts[:n]


def benchmarks_of(src: Path) -> list[str]:
    with open(src / "prompts.jsonl") as f:
        return sorted({json.loads(line)["benchmark"] for line in f})


class Server:
    """``taskspace serve`` in a subprocess of its own process group (stopped by SIGTERM, then SIGKILL)."""

    def __init__(self, env: dict, port: int, every: str = "2s", log: Path | None = None):
        self.port = port
        self.log = open(log, "w") if log else subprocess.DEVNULL
        self.proc = subprocess.Popen([TASKSPACE, "serve", "--host", "127.0.0.1", "--port", str(port),
                                      "--worker-every", every], env=env, stdout=self.log, stderr=self.log,
                                     start_new_session=True)

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"taskspace serve exited with {self.proc.returncode}")
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"taskspace serve not ready after {timeout:.0f} s")

    def stop(self, timeout: float = 60) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        if self.log is not subprocess.DEVNULL:
            self.log.close()
        return self.proc.returncode


def _requests(plan: list, until: threading.Event):
    """The plan, then the plan again (cycled) until ``until`` is set: the load lasts at least as long as the pass."""
    yield from plan
    while not until.is_set():
        yield from plan[:10]


def _client(port: int, plan: list[tuple[str, str, dict | None]], out: list, stop_at: float,
            until: threading.Event) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for method, path, body in _requests(plan, until):
        if time.monotonic() > stop_at:
            out.append((time.time(), None, 0.0, "deadline"))
            return
        t0 = time.time()
        start = time.perf_counter()
        try:
            data = json.dumps(body).encode() if body is not None else None
            conn.request(method, path, body=data, headers={"content-type": "application/json"} if data else {})
            resp = conn.getresponse()
            payload = json.loads(resp.read())
            shape = tuple(sorted(payload)) + (tuple(sorted(payload["results"][0])) if payload.get("results") else ())
            out.append((t0, resp.status, time.perf_counter() - start, shape))
        except Exception as exc:  # noqa: BLE001 - every failure is counted and reported
            out.append((t0, None, time.perf_counter() - start, f"{type(exc).__name__}: {exc}"))
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.close()


def _runs(env: dict) -> list:
    """The recent runs of the index in ``env`` (read straight from its SQL store)."""
    from indexer.store.sql import Store

    url = env.get("TASKSPACE_DATABASE_URL") or f"sqlite:///{Path(env['TASKSPACE_HOME']) / 'taskspace.db'}"
    with Store(url, upgrade=False) as store:
        return store.list_runs(limit=20)


def _wait_run(env: dict, after: float, stop_at: float, *, finished: bool):
    """The first index run started after ``after`` (epoch seconds): once it runs, or (``finished``) once it ended
    having ingested a source."""
    while time.monotonic() < stop_at:
        runs = sorted((x for x in _runs(env) if x.kind == "index" and x.started_at.timestamp() >= after - 0.5),
                      key=lambda x: x.started_at)
        if finished:
            done = [x for x in runs if x.finished_at is not None and (x.counts or {}).get("sources", 0) >= 1]
            if done:
                return done[0]
        elif runs:
            return runs[0]
        time.sleep(0.1)
    raise RuntimeError("the worker's index pass over the new source did not " + ("finish" if finished else "start")
                       + " within the deadline")


def _pct(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(q * (len(v) - 1)))))] if v else float("nan")


def run_load(env: dict, *, extra_source: Path, prompts: list[str], benchmarks: list[str], clients: int = 4,
             requests: int = 200, deadline: float = 900, log: Path | None = None) -> dict:
    """Serve the index of ``env['TASKSPACE_HOME']`` with the in-process worker, run the clients, add
    ``extra_source`` once the load runs, and check (see the module docstring). Returns the measurements."""
    started = time.monotonic()
    stop_at = started + deadline
    port = free_port()
    server = Server(env, port, log=log)
    try:
        server.wait_ready(min(300, deadline))
        plans = []
        for c in range(clients):
            plan = []
            for i in range(requests):
                j = c * requests + i
                if i % 25 == 24:
                    plan.append(("GET", f"/v1/models?limit=20&offset={j % 5}", None))
                elif i % 10 == 9:
                    plan.append(("POST", "/v1/find", {"benchmark": benchmarks[j % len(benchmarks)], "k": 10}))
                else:
                    plan.append(("POST", "/v1/find", {"prompts": [prompts[j % len(prompts)]], "k": 10}))
            plans.append(plan)
        # the new source first: the worker's next pass (within --worker-every) ingests it
        t_added = time.time()
        r = subprocess.run([TASKSPACE, "sources", "add", str(extra_source)], env=env, capture_output=True, text=True,
                           timeout=120)
        if r.returncode:
            raise RuntimeError(f"taskspace sources add failed: {r.stderr.strip()}")
        # the clients start at once and run their requests, and on (cycling their first ones) until that pass ended
        passed = threading.Event()
        outs = [[] for _ in range(clients)]
        threads = [threading.Thread(target=_client, args=(port, plan, out, stop_at, passed))
                   for plan, out in zip(plans, outs)]
        t_load = time.time()
        for t in threads:
            t.start()
        try:
            run = _wait_run(env, t_added, stop_at, finished=True)
        finally:
            passed.set()
        for t in threads:
            t.join(max(1.0, stop_at - time.monotonic()))
        t_end = time.time()
        if any(t.is_alive() for t in threads):
            raise RuntimeError("the clients did not finish within the deadline")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/readyz")
        worker = json.loads(conn.getresponse().read())["checks"]["worker"]
        conn.close()
        rc = server.stop()
    except BaseException:
        server.stop()
        raise
    rows = [x for out in outs for x in out]
    errors = [x for x in rows if x[1] != 200]
    shapes = {x[3] for x in rows if x[1] == 200 and isinstance(x[3], tuple) and "results" in x[3]}
    lat = [x[2] for x in rows if x[1] == 200]
    result = {"requests": len(rows), "errors": len(errors), "error_samples": [x[1:] for x in errors[:5]],
              "find_shapes": len(shapes), "seconds": t_end - t_load, "server_exit": rc,
              "p50_ms": 1000 * _pct(lat, 0.5), "p95_ms": 1000 * _pct(lat, 0.95), "max_ms": 1000 * max(lat or [float("nan")])}
    a, b = run.started_at.timestamp(), run.finished_at.timestamp()
    during = [x[2] for x in rows if x[1] == 200 and a <= x[0] <= b]
    result.update(pass_status=run.status, pass_seconds=b - a, pass_overlapped=a < t_end and b > t_load,
                  pass_counts={k: (run.counts or {}).get(k) for k in ("sources", "solved", "pushed", "rebuilt")},
                  during_requests=len(during), during_p50_ms=1000 * _pct(during, 0.5),
                  during_p95_ms=1000 * _pct(during, 0.95),
                  publish_seconds=next((p["publish_seconds"] for p in worker["passes"] if p.get("run_id") == run.id), None))
    return result


def check(result: dict, clients: int, requests: int) -> None:
    assert result["requests"] >= clients * requests, result  # more when the pass outlasted the planned requests
    assert result["errors"] == 0, result
    assert result["find_shapes"] == 1, result  # the same shape all along: only the results change
    assert result.get("pass_status") == "ok", result
    assert result["pass_overlapped"] and result["during_requests"] > 0, result
    assert result["server_exit"] == 0, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--requests", type=int, default=200, help="per client")
    ap.add_argument("--source", type=Path, action="append", help="repeatable (default: indexer/data/sample)")
    ap.add_argument("--home", type=Path, default=None, help="TASKSPACE_HOME (default: a temporary folder, removed)")
    ap.add_argument("--deadline", type=float, default=1200, help="seconds for the whole load phase")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    sources = a.source or [ROOT / "indexer" / "data" / "sample"]
    home = a.home or Path(tempfile.mkdtemp(prefix="bench-serve-"))
    env = {**os.environ, "TASKSPACE_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    try:
        t = time.perf_counter()
        subprocess.run([TASKSPACE, "index", *[x for src in sources for x in ("--source", str(src))]], env=env,
                       check=True, capture_output=True, timeout=1800)
        index_s = time.perf_counter() - t
        extra = home / "extra-source"
        flipped_source(sources[-1], extra)
        result = run_load(env, extra_source=extra, prompts=prompt_texts(sources[0], 400),
                          benchmarks=sorted({b for src in sources for b in benchmarks_of(src)}),
                          clients=a.clients, requests=a.requests, deadline=a.deadline, log=home / "serve.log")
        result["index_seconds"] = index_s
        if a.json:
            print(json.dumps(result, indent=2))
        check(result, a.clients, a.requests)
        cmd = f"python benchmarks/bench_serve.py --clients {a.clients} --requests {a.requests}"
        cmd += "".join(f" --source {src}" for src in a.source or ())
        print(f"\n`{cmd}` ({os.cpu_count()} cores; {' + '.join(src.name for src in sources)}; the in-process worker ingested a second source, "
              f"re-solved {result['pass_counts']['solved']} models and published while the clients ran)\n")
        print("| requests | errors | p50 ms | p95 ms | max ms | during the pass: requests | p50 ms | p95 ms | pass s | publish s |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        print(f"| {result['requests']} | {result['errors']} | {result['p50_ms']:.0f} | {result['p95_ms']:.0f} | "
              f"{result['max_ms']:.0f} | {result['during_requests']} | {result['during_p50_ms']:.0f} | "
              f"{result['during_p95_ms']:.0f} | {result['pass_seconds']:.1f} | {result['publish_seconds'] or float('nan'):.2f} |")
    finally:
        if a.home is None:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
