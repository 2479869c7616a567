"""`python -m bench memory`: its specs reach all ten families; one configuration runs in a fresh process."""

from __future__ import annotations

import os

from bench.memory import FAMILIES, candidates, run_one, summary


def test_the_benchmark_covers_all_ten_families() -> None:
    found = candidates(per_family=1)
    assert [c["family"] for c in found] == list(FAMILIES)


def test_one_configuration_is_measured_in_a_fresh_process() -> None:
    first = candidates(per_family=1)[0]
    row = run_one(first, 16, "cpu", dict(os.environ))
    assert row["status"] == "ok" and row["family"] == "ffn"
    assert row["live_tensor_peak_bytes"] > 0 and row["rss_growth_bytes"] is not None
    assert abs(row["live_error"]) < 0.10
    assert summary([row])["configurations"] == 1
