"""`python -m bench noisy`: one tiny configuration measured quiet, under a real competing process and quiet
again (the structure, and that the load ran and was stopped: never a timing), and the score on made-up
phases."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from bench import noisy
from bench.noisy import Config, Phase, configurations, judge_row, score


def test_it_measures_quiet_loaded_and_quiet_again_and_stops_the_load(tmp_path: Path) -> None:
    argv = ["--configs", "1", "--per-family", "1", "--batches", "8", "--threads", "1", "--load", "1"]
    argv += ["--min-seconds", "0.2", "--allocator", "inherit", "--out", str(tmp_path)]
    assert noisy.main(argv) == 0
    result = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    [row] = result["rows"]
    assert row["config"] == {"network": "ffn-small", "family": "ffn", "batch": 8, "threads": 1}
    assert row["quiet"]["load"] is None and row["quiet_again"]["load"] is None
    load = row["loaded"]["load"]
    # the busy process reached its loop before the measurement, took CPU during it, and was terminated
    assert load["processes"] == 1 and load["spinning"] == [True] and load["cpu_seconds"][0] > 0
    assert load["returncodes"] == [-signal.SIGTERM] and not Path(f"/proc/{load['pids'][0]}").exists()
    for phase in ("quiet", "loaded", "quiet_again"):
        measured = row[phase]
        assert measured["median"] > 0 and measured["iterations"] >= 5
        assert measured["unreliable"] == bool(measured["reasons"])
        assert set(measured["signals"]) >= {"cpu_per_wall", "runnable_above_cpus", "interval_halfwidth"}
    assert row["ratio"] == pytest.approx(row["loaded"]["median"] / row["reference"])
    assert result["score"]["configurations"] == 1 and result["score"]["quiet_runs"] == 2
    assert result["command"].startswith("python -m bench noisy --configs 1")
    assert "| ffn-small | ffn | 8 | 1 |" in (tmp_path / "table.md").read_text(encoding="utf-8")


def _phase(median: float, reasons: list[str] | None = None) -> Phase:
    return {
        "median": median,
        "iqr": 0.0,
        "iterations": 5,
        "stopped": "precise",
        "unreliable": bool(reasons),
        "reasons": reasons or [],
        "reason_texts": [],
        "signals": {"cpu_per_wall": 0.5 if reasons else 1.0, "runnable_above_cpus": 0.0},
        "seconds": 1.0,
        "load": None,
    }


CONFIG = Config("ffn-small", "ffn", 16, 1)


@pytest.mark.parametrize(
    ("loaded", "verdict"),
    [
        (_phase(1.05), "within"),
        (_phase(1.05, ["runnable"]), "within, marked"),
        (_phase(1.5, ["cpu_share"]), "marked"),
        (_phase(1.5), "miss"),
        (_phase(0.85), "miss"),
    ],
)
def test_a_loaded_run_is_within_marked_or_missed(loaded: Phase, verdict: str) -> None:
    row = judge_row(CONFIG, _phase(0.9), loaded, _phase(1.1))
    assert (row["reference"], row["verdict"]) == (pytest.approx(1.0), verdict)
    assert row["floor"] == pytest.approx(1.1 / 0.9 - 1)


def test_the_score_counts_misses_false_alarms_and_whether_the_quiet_phase_was_quiet() -> None:
    rows = [judge_row(CONFIG, _phase(1.0), _phase(1.02), _phase(1.0)) for _ in range(8)]
    rows.append(judge_row(CONFIG, _phase(1.0), _phase(2.0, ["runnable"]), _phase(1.0)))
    rows.append(judge_row(CONFIG, _phase(1.0, ["runnable"]), _phase(2.0), _phase(1.0, ["interval"])))
    found = score(rows)
    assert (found["score"], found["misses"], found["met"]) == (0.9, 0.1, True)
    assert (found["quiet_marked"], found["quiet_contended"], found["quiet_was_quiet"]) == (0.1, 0.05, True)
    assert (found["firm_configurations"], found["firm_score"]) == (9, 1.0)
    [cpu] = [s for s in noisy.signal_table(rows) if s["signal"] == "cpu_per_wall"]
    # the one miss ran at 1.0 CPU per second, as every unmarked quiet run: no threshold on it would do
    assert (cpu["catches_every_miss"], cpu["quiet_marked_by_it"]) == (1.0, 1.0)


def test_configurations_keep_an_evenly_spaced_varied_subset() -> None:
    whole = configurations(2, [16, 64], [1, 2])
    kept = configurations(2, [16, 64], [1, 2], keep=12)
    families = {c.family for c, _ in whole}
    # two networks a family, at each batch and thread count
    assert len(whole) == 2 * 2 * 2 * len(families) and len(kept) == len({c for c, _ in kept}) == 12
    assert {c.threads for c, _ in kept} == {1, 2} and {c.batch for c, _ in kept} == {16, 64}
    assert len({c.family for c, _ in kept}) >= 6
