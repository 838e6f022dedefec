"""The scripts in benchmarks/: each answers --help with its usage (exit 0) without reading data or an index."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_benchmark_script_answers_help(script, tmp_path):
    # bench_level.py and bench_prior.py read sys.argv by position (--help: an IndexError traceback), and
    # probe_edge_segments.py read the index of TASKSPACE_HOME first (--help: a NotFoundError traceback)
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TASKSPACE_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--help"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("usage:"), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
