"""advisor/web/charts.py, the one chart module: round, even ticks that stop at an axis' limit, x labels that
do not overlap, and legends whose keys are the series' own marks and classes."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from advisor.web.charts import Series, axis, calibration_charts, line_chart, probe_charts


@pytest.mark.parametrize(
    ("lo", "hi", "kwargs", "ticks"),
    [
        (0.0, 0.213, {"floor": 0.0}, [0.0, 0.1, 0.2, 0.3]),
        (0.93, 1.01, {"ceiling": 1.0}, [0.92, 0.94, 0.96, 0.98, 1.0]),  # a score never runs past 1
        (0.9, 0.99, {"ceiling": 1.0}, [0.9, 0.925, 0.95, 0.975, 1.0]),
        (0.0, 642.0, {"floor": 0.0}, [0.0, 200.0, 400.0, 600.0, 800.0]),
        (1.0, 497.0, {"count": 6}, [0.0, 100.0, 200.0, 300.0, 400.0, 500.0]),
        (5.0, 5.0, {}, [4.5, 4.75, 5.0, 5.25, 5.5]),  # one value: a span around it
    ],
)
def test_it_picks_round_even_ticks(lo: float, hi: float, kwargs: dict[str, Any], ticks: list[float]) -> None:
    got = axis(lo, hi, **kwargs)
    assert got == pytest.approx(ticks)
    assert len({round(b - a, 9) for a, b in itertools.pairwise(got)}) == 1


def labels(chart: dict[str, Any], key: str) -> list[str]:
    return [t["label"] for t in chart[key]]


def test_it_labels_a_score_axis_with_one_number_of_decimals_and_keeps_x_labels_apart() -> None:
    chart = line_chart(
        title="curve",
        xlabel="examples",
        ylabel="score",
        series=[Series(name="measured", kind="dots", points=[(300, 0.93), (1200, 0.96), (4800, 0.975)])],
        log_x=True,
        y_from_zero=False,
        y_ceiling=1.0,
        band=(12000, 0.97, 0.999),
    )
    assert chart is not None
    assert labels(chart, "yticks") == ["0.92", "0.94", "0.96", "0.98", "1.00"]
    xs = [t["x"] for t in chart["xticks"]]
    assert labels(chart, "xticks") == ["300", "1000", "12000"]  # 10000 would sit on 12000's label
    assert all(b - a > 30 for a, b in itertools.pairwise(xs))


def test_it_keys_the_legend_with_each_series_mark() -> None:
    results = {
        role: {"family": family, "epochs": [{"epoch": e, "val": 0.9 + e / 100} for e in range(1, 4)]}
        for role, family in (("shallow", "ffn"), ("deep", "cnn"))
    }
    points = [{"examples": 10, "score": 0.8}, {"examples": 40, "score": 0.9}]
    results["curve"] = {"family": "ffn", "points": points, "line": points}
    charts = probe_charts(results, target=0.9)
    epochs, curve = charts["epochs"], charts["curve"]
    assert [(e["cls"], e["kind"], e["name"]) for e in epochs["legend"]] == [
        ("s0", "line", "shallow FFN"),
        ("s1", "line", "deep CNN"),
        ("target", "target", "target 0.9"),
    ]
    assert [s["cls"] for s in epochs["series"]] == ["s0", "s1"]
    assert curve["title"].endswith("(FFN)") and [e["kind"] for e in curve["legend"]][:2] == ["dots", "curve"]
    assert not curve["legend"][1]["marked"]  # a fitted curve is a line without dots


def row(batch: int, threads: int, seconds: float, allocator: str = "default") -> dict[str, Any]:
    return {"batch_size": batch, "threads": threads, "allocator": allocator, "status": "ok",
            "seconds_per_batch": seconds, "examples_per_second": batch / seconds}  # fmt: skip


def test_it_compares_threads_at_the_batch_measured_with_most_thread_counts() -> None:
    rows = [row(64, 1, 0.01), row(64, 2, 0.006), row(128, 1, 0.011), row(2048, 1, 0.1)]
    threads, batches, bars = calibration_charts(rows)
    assert (
        threads["title"] == "Time per batch vs threads (batch 64)" and len(threads["series"][0]["dots"]) == 2
    )
    assert batches["title"] == "Time per batch vs batch size (1 thread)"
    assert [b["lines"] for b in bars["bars"]][:2] == [["b64", "t1"], ["b64", "t2"]]
    only_one = calibration_charts([row(64, 1, 0.01), row(128, 1, 0.02)])
    assert only_one[0]["title"].startswith("Time per batch vs batch size")  # no one-dot plot
