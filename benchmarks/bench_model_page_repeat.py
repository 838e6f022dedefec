"""A model's page on a large existing home, first and repeated (docs/BENCHMARKS.md, "A model's page on 32,823
models"): ``taskspace model NAME --json`` as one-shot processes, and ``GET /v1/models/{id}`` of several models in
turn on one ``taskspace serve`` process.

    TASKSPACE_HOME=... TASKSPACE_CACHE_DIR=/work/cache HF_HUB_OFFLINE=1 \\
        python benchmarks/bench_model_page_repeat.py [--models A B C] [--runs 3] [--rounds 3] [--port 8763]

1. CLI: per model of ``--models``, ``--runs`` runs of ``taskspace model NAME --json``; wall and CPU (user + sys of
   the child) seconds, median per model.
2. HTTP: starts ``taskspace serve --port P`` on the home (no worker), waits for ``/readyz``, then ``--rounds``
   rounds of ``GET /v1/models/{id}`` of every model of ``--models`` in turn; prints each request's seconds (the
   first request is the process's first page, the next ones pages of other models, then the same ones again) and
   whether each answer equals the CLI's ``--json`` of that model (the same page either way).

Reads the home only (never writes it); give it a copy of a large home, not one another process uses.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

TASKSPACE = str(Path(sys.executable).parent / "taskspace")
MODELS = ("Qwen/Qwen1.5-110B", "Salesforce/codet5p-16b", "mmlu-B:r1239")


def cli_page(model: str) -> tuple[float, float, dict]:
    """One ``taskspace model MODEL --json``: (wall s, CPU s of the child, its answer)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([TASKSPACE, "model", model, "--json"], check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=list(MODELS), help="the models whose pages are asked for")
    ap.add_argument("--runs", type=int, default=3, help="CLI runs per model (0: no CLI part)")
    ap.add_argument("--rounds", type=int, default=3, help="HTTP rounds over the models (0: no HTTP part)")
    ap.add_argument("--port", type=int, default=8763)
    args = ap.parse_args()
    if not os.environ.get("TASKSPACE_HOME"):
        raise SystemExit("set TASKSPACE_HOME to (a copy of) the home to measure")

    pages: dict[str, dict] = {}
    if args.runs:
        print("| model | CLI runs | wall s (median) | CPU s (median) |\n|---|---:|---:|---:|")
        for m in args.models:
            got = [cli_page(m) for _ in range(args.runs)]
            pages[m] = got[-1][2]
            print(f"| {m} | {args.runs} | {statistics.median(g[0] for g in got):.2f} | "
                  f"{statistics.median(g[1] for g in got):.2f} |", flush=True)
    if args.rounds:
        from bench_model_page import wait_ready  # (this folder: the script's own)

        proc = subprocess.Popen([TASKSPACE, "serve", "--host", "127.0.0.1", "--port", str(args.port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(args.port, proc, 120)
            c = http.client.HTTPConnection("127.0.0.1", args.port, timeout=300)
            print("\n| round | model | GET s | equals the CLI's |\n|---:|---|---:|---|")
            for r in range(args.rounds):
                for m in args.models:
                    t = time.perf_counter()
                    c.request("GET", f"/v1/models/{urllib.parse.quote(m, safe='/')}")
                    resp = c.getresponse()
                    body = resp.read()
                    dt = time.perf_counter() - t
                    if resp.status != 200:
                        raise SystemExit(f"GET {m}: {resp.status} {body[:300]!r}")
                    same = "-" if m not in pages else "yes" if json.loads(body) == pages[m] else "NO"
                    print(f"| {r + 1} | {m} | {dt:.2f} | {same} |", flush=True)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()


if __name__ == "__main__":
    main()
