"""`python -m bench pages` runs end to end on a small history (its own temporary database) and reports every
page it times; the timings themselves are the benchmark's business, not this test's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_it_reports_each_page_with_its_queries(tmp_path: Path) -> None:
    out = tmp_path / "pages.json"
    argv = ["--recs", "20", "--jobs", "2", "--repeat", "2", "--budget-ms", "100000", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "bench", "pages", *argv], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text())
    pages = {row["page"] for row in report["rows"]}
    assert {"wizard", "recommendation (vision)", "calibration poll (htmx)", "history, last page"} <= pages
    for row in report["rows"]:
        assert row["queries"] >= 2 and 0 < row["median_ms"] <= row["max_ms"], row
    assert "budget 100000 ms (median): all within" in done.stdout
