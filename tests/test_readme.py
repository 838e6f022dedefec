"""The README opens with a three-line Python example and a CLI example; this runs both exactly as written."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _blocks():
    text = (ROOT / "README.md").read_text()
    head = text[:text.index("**Which open model")]  # the opening, before any prose
    py = re.search(r"```python\n(.*?)```", head, re.S).group(1)
    sh = re.search(r"```bash\n(.*?)```", head, re.S).group(1)
    return py, sh


def test_readme_opens_with_three_python_lines_and_a_cli_example():
    py, sh = _blocks()
    assert len(py.strip().splitlines()) == 3
    ast.parse(py)
    assert all(line.startswith("taskspace ") for line in sh.strip().splitlines())


def test_readme_examples_run_as_written(taskspace_home):
    py, sh = _blocks()
    env = dict(os.environ, HF_HUB_OFFLINE="1", PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for line in sh.strip().splitlines():
        res = subprocess.run(line, shell=True, cwd=ROOT, env=env, capture_output=True, text=True)
        assert res.returncode == 0, (line, res.stderr[-2000:])
    assert "P(success)" in res.stdout and "meta-llama/" in res.stdout  # the search answered with Hub ids
    res = subprocess.run([sys.executable, "-c", py], cwd=ROOT, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    printed = ast.literal_eval(res.stdout.strip())
    assert len(printed) == 5 and all(0.0 <= p <= 1.0 for _, p, _ in printed)
