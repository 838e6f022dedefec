import json
import subprocess
import sys

import pytest


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True, env=env)


def test_bad_setting_is_one_line_with_exit_code(monkeypatch):
    import os

    env = dict(os.environ, TASKSPACE_LAMBDA="oops")
    res = run("demo", "--json", env=env)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1].startswith("error: TASKSPACE_LAMBDA='oops'")
    assert "Traceback" not in res.stderr
    res = run("--debug", "demo", env=env)
    assert "Traceback" in res.stderr


def test_demo_ranks_bundled_models(encoder):
    from indexer.demo import run_demo

    out = run_demo(["Which enzyme is most specific for myocardial infarction?"], top=3)
    assert out["models"] == 25 and out["prompts"] == 420
    ranking = out["queries"][0]["ranking"]
    assert len(ranking) == 3
    scores = [r["score"] for r in ranking]
    assert scores == sorted(scores, reverse=True)
    json.dumps(out)
