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
