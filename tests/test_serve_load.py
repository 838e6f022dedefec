"""A small run of benchmarks/bench_serve.py: a real ``taskspace serve`` on 127.0.0.1 (the worker in the server
process), 4 concurrent clients x 25 requests while an index pass ingests a new source, re-solves every model and
publishes: no error, the same answer shape all along, the pass overlapped the load, a clean SIGTERM exit."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from servehelpers import build_index

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_serve.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_serve", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_load_while_an_index_pass_runs(tmp_path, encoder):
    bench = _bench()
    build_index(tmp_path, encoder)
    bench.flipped_source(tmp_path / "a", tmp_path / "extra")
    prompts = bench.prompt_texts(tmp_path / "a", 16) + bench.prompt_texts(tmp_path / "b", 12)
    result = bench.run_load(dict(os.environ), extra_source=tmp_path / "extra", prompts=prompts,
                            benchmarks=["alpha", "beta"], clients=4, requests=25, deadline=600,
                            log=tmp_path / "serve.log")
    print(result)
    bench.check(result, 4, 25)
    assert result["pass_counts"]["solved"] == 4
