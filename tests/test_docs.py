"""The docs name real things: every test docs/RELIABILITY.md cites exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_test_cited_in_reliability_md_exists():
    text = (ROOT / "docs" / "RELIABILITY.md").read_text()
    cited = set(re.findall(r"(test_\w+\.py)::(test_\w+)", text))
    assert len(cited) > 40
    missing = [f"{f}::{t}" for f, t in sorted(cited)
               if not re.search(rf"^def {t}\(", (ROOT / "tests" / f).read_text(), re.M)]
    assert missing == []
    for f in set(re.findall(r"`(test_\w+\.py)`", text)):
        assert (ROOT / "tests" / f).is_file(), f


def test_testing_md_cites_real_tests_and_every_mutant():
    """docs/TESTING.md: every test it cites exists, and every mutant of scripts/mutants.py is in its table with
    test ids that exist."""
    import importlib.util

    text = (ROOT / "docs" / "TESTING.md").read_text()
    for f, t in set(re.findall(r"(test_\w+\.py)::(test_\w+)", text)):
        assert re.search(rf"^def {t}\(", (ROOT / "tests" / f).read_text(), re.M), f"{f}::{t}"
    spec = importlib.util.spec_from_file_location("mutants", ROOT / "scripts" / "mutants.py")
    mutants = importlib.util.module_from_spec(spec)
    import sys

    sys.modules["mutants"] = mutants  # dataclasses look their module up
    try:
        spec.loader.exec_module(mutants)
    finally:
        sys.modules.pop("mutants", None)
    assert len(mutants.MUTANTS) >= 20
    for m in mutants.MUTANTS:
        assert (ROOT / m.path).read_text().count(m.old) == 1, m.name  # still applies to the code
        for node in m.tests:
            f, _, t = node.partition("::")
            assert (ROOT / f).is_file(), node
            if t:
                assert re.search(rf"^def {t}\(", (ROOT / f).read_text(), re.M), node
