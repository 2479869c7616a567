"""`python -m bench predict --from A,B`: several saved runs of one grid, the run-to-run floor and the model
against the median of the runs."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from advisor.engine.costmodel import step_cost
from bench import predict
from bench.predict_runs import floor, stats, thread_choices
from tests.engine.profiles import synthetic_profile

NETWORKS = ("ae-small", "rbm-small", "gan-small", "vae-small")


def _save(path: Path, factor: float) -> Path:
    """A saved run whose every configuration measured `factor` times the synthetic profile's model."""
    profile = synthetic_profile()
    candidates = dict(predict.grid_networks(2))
    rows: list[dict[str, Any]] = []
    for name in NETWORKS:
        for batch in (16, 64):
            for threads in (1, 2):
                modelled = step_cost(
                    candidates[name], batch_size=batch, threads=threads, profile=profile
                ).seconds
                rows.append(
                    {
                        "network": name,
                        "family": name.split("-")[0],
                        "batch": batch,
                        "threads": threads,
                        "measured": factor * modelled,
                        "iqr": 0.0,
                    }
                )
    machine = {
        "machine": "test",
        "cpu_model": "Test CPU",
        "allocator": "tuned",
        "started_utc": "2026-11-23",
        "load_average_start": [0.5, 0.5, 0.5],
        "load_average_end": [0.6, 0.6, 0.6],
    }
    path.mkdir()
    result = path / "result.json"
    result.write_text(
        json.dumps(
            {"machine": machine, "command": "python -m bench predict", "profile": profile, "rows": rows}
        )
    )
    return result


@pytest.mark.parametrize(
    ("factors", "spread", "within_10", "within_20"),
    [
        ((1.0, 1.0, 1.0), 1.0, 1.0, 1.0),
        ((1.0, 1.1, 1.05), 1.1, 1.0, 1.0),  # every run within 5% of the median of runs
        ((1.0, 1.3, 1.1), 1.3, 0.0, 1.0),  # the slowest 18% above the median
        ((1.0, 2.0), 2.0, 0.0, 0.0),  # two runs: their median is their mean, each a third away
    ],
)
def test_the_floor_is_the_run_to_run_spread_of_each_configuration(
    factors: tuple[float, ...], spread: float, within_10: float, within_20: float
) -> None:
    runs = [
        [{"network": n, "batch": 16, "threads": 1, "measured": f * (1 + i)} for i, n in enumerate(NETWORKS)]
        for f in factors
    ]
    found = floor(runs)
    assert found["configurations"] == len(NETWORKS) and found["runs"] == len(factors)
    assert found["spread_median"] == pytest.approx(spread)
    assert (found["all_runs_within_10"], found["all_runs_within_20"]) == (within_10, within_20)
    # each run predicted by the mean of the others: the same ratios for every network
    ratios = [sum(factors[:k] + factors[k + 1 :]) / (len(factors) - 1) / f - 1 for k, f in enumerate(factors)]
    assert found["other_runs_predict_one"]["n"] == len(NETWORKS) * len(factors)
    assert found["other_runs_predict_one"]["median_abs"] == pytest.approx(statistics.median(map(abs, ratios)))


def test_it_analyses_several_saved_runs_together(tmp_path: Path) -> None:
    sources = [_save(tmp_path / "run1", 1.0), _save(tmp_path / "run2", 1.2)]
    out = tmp_path / "together"
    assert predict.main(["--from", ",".join(str(s) for s in sources), "--out", str(out)]) == 0
    result = json.loads((out / "result.json").read_text())
    table = (out / "table.md").read_text()
    assert result["floor"]["spread_median"] == pytest.approx(1.2)
    assert result["floor"]["configurations"] == len(NETWORKS) * 4
    # the same profile in both runs: the model predicts run 1 exactly, and the median of runs (1.1x) 9% above
    assert result["each_run_profiled"][0]["median_abs"] == pytest.approx(0.0, abs=1e-9)
    assert result["against_median"]["profiled"]["median_signed"] == pytest.approx(1 / 1.1 - 1)
    assert set(result["against_median_by_threads"]) == {"1", "2"}
    for r in result["rows"]:
        assert len(r["measured"]) == 2 and len(r["learned_lono"]) == 2 and min(r["learned_same"]) > 0
    assert "The measurement floor" in table and str(sources[1]) in table


def test_stats_report_the_signed_median_and_the_90th_percentile() -> None:
    s = stats([0.1, -0.2, 0.3, -0.05, 0.0, 0.15, -0.1, 0.25, 0.05, -0.3])
    assert s["n"] == 10 and s["median_signed"] == pytest.approx(0.025)
    assert s["within_20"] == pytest.approx(0.7) and s["p90_abs"] == pytest.approx(0.3)


def _rows(seconds: dict[tuple[str, int], float]) -> list[dict[str, Any]]:
    """Rows of one run: (network, threads) -> measured seconds, at one batch, predicted as measured."""
    return [
        {"network": net, "batch": 64, "threads": t, "measured": s, "profiled": s}
        for (net, t), s in seconds.items()
    ]


@pytest.mark.parametrize(
    ("runs", "own", "ceiling"),
    [
        # the same fastest count in both runs: every choice holds in the other run
        ([{("a", 1): 1.0, ("a", 2): 2.0}, {("a", 1): 1.1, ("a", 2): 2.0}], [1.0, 1.0], [1.0, 1.0]),
        # the fastest count flips between runs by more than 5%: each run's choice misses in the other
        ([{("a", 1): 1.0, ("a", 2): 1.2}, {("a", 1): 1.2, ("a", 2): 1.0}], [1.0, 1.0], [0.0, 0.0]),
        # a flip within 5% is no miss
        ([{("a", 1): 1.0, ("a", 2): 1.04}, {("a", 1): 1.04, ("a", 2): 1.0}], [1.0, 1.0], [1.0, 1.0]),
        # two configurations, one flips: half
        (
            [
                {("a", 1): 1.0, ("a", 2): 2.0, ("b", 1): 1.0, ("b", 2): 1.5},
                {("a", 1): 1.0, ("a", 2): 2.0, ("b", 1): 1.5, ("b", 2): 1.0},
            ],
            [1.0, 1.0],
            [0.5, 0.5],
        ),
    ],
)
def test_it_scores_the_thread_choice_against_another_runs_measurement(
    runs: list[dict[tuple[str, int], float]], own: list[float], ceiling: list[float]
) -> None:
    choice = thread_choices([_rows(r) for r in runs])
    assert choice["profiled_each_run"] == own
    assert choice["another_runs_measurement"] == ceiling
