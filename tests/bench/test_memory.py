"""`python -m bench memory`: its specs reach all ten families; one configuration runs in a fresh process."""

from __future__ import annotations

import os

import pytest

from bench.memory import FAMILIES, candidates, run_one, summary
from bench.memory_curve import curve


def test_the_benchmark_covers_all_ten_families() -> None:
    found = candidates(per_family=1)
    assert [c["family"] for c in found] == list(FAMILIES)


def test_one_configuration_is_measured_in_a_fresh_process() -> None:
    first = candidates(per_family=1)[0]
    row = run_one(first, 16, "cpu", dict(os.environ))
    assert row["status"] == "ok" and row["family"] == "ffn"
    assert row["live_tensor_peak_bytes"] > 0 and row["rss_growth_bytes"] is not None
    # the reference: the fresh process's growth over training it, the fixed cost paid before
    # (a network this small may fit in pages the fixed cost left resident: 0 on the AMD EPYC machine)
    assert row["rss_training_growth_bytes"] >= 0
    if row["rss_training_growth_bytes"]:
        assert row["rss_error"] == row["estimate"]["total"] / row["rss_training_growth_bytes"] - 1
        assert row["resident_error"] is not None
    assert abs(row["live_error"]) < 0.10
    assert row["resident"] >= row["estimate"]["total"]
    assert summary([row])["configurations"] == 1


def test_the_curve_follows_each_step_of_a_fresh_process(capsys: pytest.CaptureFixture[str]) -> None:
    cnn = next(c for c in candidates(per_family=1) if c["family"] == "cnn")
    assert curve(cnn, 16, 3) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines[2:]]
    assert [r[0] for r in rows] == ["0", "1", "2", "3"]  # the first run's total, then each measured step
    in_use = [float(r[3].rstrip("M")) for r in rows[1:]]
    assert in_use[-1] > 0 and in_use == sorted(in_use)  # a high-water mark only rises


def test_the_reference_is_the_median_of_fresh_processes_and_splits_heap_from_code() -> None:
    import statistics

    from advisor.engine.codepages import code_pages

    cnn = next(c for c in candidates(per_family=1) if c["family"] == "cnn")
    row = run_one(cnn, 8, "cpu", dict(os.environ), repeats=3)
    samples = row["rss_training_growth_samples"]
    assert len(samples) == 3 and row["rss_training_growth_bytes"] == round(statistics.median(samples))
    assert row["rss_spread"] == (max(samples) - min(samples)) / statistics.median(samples)
    # the convolution's library code, brought in whatever the batch (codepages.py, measured on torch
    # 2.13.0+cpu; 25% for another build or page cache's read-ahead)
    assert row["RssFile_growth_bytes"] == pytest.approx(code_pages(cnn), rel=0.25)
    assert row["candidate"] == cnn  # kept for --rescore
