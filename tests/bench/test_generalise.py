"""`python -m bench generalise`: the seeded spec generator and the scoring of a saved run (the floor, the
spread between profiles, quiet rows, interval coverage). No accuracy is asserted, and neither the build
seed nor the evaluation seed is used (bench/generalise_specs.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from advisor.engine.costmodel import step_cost
from advisor.engine.intervals import ratios_for
from advisor.engine.profile import DeviceProfile
from bench import generalise
from bench.generalise_specs import (
    BUILD_SEED,
    EVALUATION_SEEDS,
    MAX_PARAMETERS,
    MAX_STEP_FLOPS,
    configurations,
    step_flops,
)
from tests.engine.profiles import scaled, synthetic_profile

SEEDS = (7, 8)  # neither BUILD_SEED nor any of EVALUATION_SEEDS
TASKS = {"tabular", "vision", "sequence", "generation"}


def test_the_test_seeds_are_neither_the_build_nor_the_evaluation_seed() -> None:
    assert BUILD_SEED not in EVALUATION_SEEDS and not {BUILD_SEED, *EVALUATION_SEEDS} & set(SEEDS)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_seed_draws_the_same_capped_configurations_across_every_task(seed: int) -> None:
    drawn = configurations(seed, 40)
    again = configurations(seed, 40)
    assert [(c.name, c.batch, c.candidate["networks"]) for c in drawn.configurations] == [
        (c.name, c.batch, c.candidate["networks"]) for c in again.configurations
    ]
    assert len(drawn.configurations) == 40
    assert {c.spec["task"] for c in drawn.configurations} == TASKS
    assert len({c.family for c in drawn.configurations}) >= 6
    keys = {json.dumps([c.candidate["networks"], c.batch], sort_keys=True) for c in drawn.configurations}
    assert len(keys) == 40  # distinct networks at their batch
    for c in drawn.configurations:
        assert step_flops(c.candidate, c.batch) <= MAX_STEP_FLOPS
        assert c.candidate["parameters"] <= MAX_PARAMETERS and c.batch >= 1
    other = configurations(SEEDS[1] if seed == SEEDS[0] else SEEDS[0], 40)
    assert [c.name for c in other.configurations] != [c.name for c in drawn.configurations]


def _run(factor_1: float, factor_2: float, profiles: list[DeviceProfile]) -> dict[str, Any]:
    """A saved run of four generated networks, each measured three times: `factor_1` and `factor_2` times
    the first profile's estimate at 1 and 2 threads, the third measurement of the first one twice as slow
    and marked contended."""
    drawn = configurations(SEEDS[0], 4).configurations
    runs: dict[str, list[dict[str, Any]]] = {}
    for n, c in enumerate(drawn):
        for threads, factor in ((1, factor_1), (2, factor_2)):
            modelled = step_cost(
                c.candidate, batch_size=c.batch, threads=threads, profile=profiles[0]
            ).seconds
            rows = []
            for round_ in range(3):
                slow = 2.0 if (n, round_) == (0, 2) else 1.0
                rows.append(
                    {
                        "round": round_,
                        "seconds": factor * modelled * slow,
                        "status": "ok",
                        "iterations": 10,
                        "iqr": 0.0,
                        "cpu_seconds": factor * modelled,
                        "unreliable": slow > 1,
                        "reasons": ["runnable"] if slow > 1 else [],
                        "cpu_share": 0.99,
                        "runnable_above_cpus": 0.5 if slow > 1 else 0.0,
                        "steal_share": 0.0,
                    }
                )
            runs[f"{c.name}@{threads}"] = rows
    machine = {
        "machine": "test",
        "cpu_model": "Test CPU",
        "allocator": "tuned",
        "load_average_start": [0.1, 0.1, 0.1],
        "load_average_end": [0.2, 0.2, 0.2],
    }
    return {
        "machine": machine,
        "command": "python -m bench generalise --seed 7",
        "seed": SEEDS[0],
        "seed_is": "other",
        "threads": [1, 2],
        "configurations": [generalise.saved_configuration(c) for c in drawn],
        "crashes": [],
        "profiles": profiles,
        "runs": runs,
    }


def test_a_run_is_scored_against_the_median_of_its_measurements_with_its_floor() -> None:
    base = synthetic_profile()
    result = generalise.score(_run(1.0, 1.0, [base, base, base]))
    assert len(result["rows"]) == 8 and result["merged_from"] == 3
    scores = result["all"]
    # the estimate is each configuration's model, and the median of three measurements ignores the slow one
    assert scores["estimate"]["median_abs"] == pytest.approx(0.0, abs=1e-9)
    assert scores["estimate"]["within_25"] == 1.0
    # the floor: the slow measurement against the other two (-50%), and each of those against the median of
    # a slow and a normal one (+50%): the three of both rows of the first network outside ±25%
    assert scores["floor"]["n"] == 24 and scores["floor"]["within_25"] == pytest.approx(18 / 24)
    # two quiet rows dropped: the first network's, whose third measurement was contended, at both counts
    assert result["dropped"] == 2 and result["dropped_by_reason"] == {"runnable": 2}
    assert result["quiet"]["estimate"]["n"] == 6
    low, high = ratios_for("profiled", "cpu")
    assert scores["intervals"]["covered"] == 1.0 and scores["intervals"]["width"] == pytest.approx(high / low)
    assert scores["profile_spread"]["median"] == pytest.approx(1.0)
    table = generalise.table(result)
    assert "Quiet rows" in table and "floor" in table


def test_the_estimate_reads_the_median_of_the_trusted_profiles_and_reports_their_spread() -> None:
    base = synthetic_profile()
    contended = scaled(base, 10.0, threads=("2",))
    contended["unreliable_reasons"] = [{"code": "runnable", "text": "others ran"}]
    saved = _run(1.0, 1.0, [base, scaled(base, 1.5, threads=("2",)), contended])
    result = generalise.score(saved)
    assert result["merged_from"] == 2 and [p["trusted"] for p in result["profiles"]] == [True, True, False]
    by_threads = result["all"]["profile_spread"]["by_threads"]
    assert by_threads["1"] == pytest.approx(1.0) and by_threads["2"] > 1.5  # only the 2-thread curves moved
    # each profile alone is scored too: the contended one misses every 2-thread row
    assert result["all"]["each_profile"][2]["within_25"] <= 0.5
    assert result["all"]["each_profile"][0]["within_25"] == 1.0


def test_a_saved_run_is_scored_again_from_its_file(tmp_path: Path) -> None:
    base = synthetic_profile()
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_run(1.3, 0.8, [base, base, base])))
    assert generalise.main(["--from", str(path)]) == 0
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["source"] == str(path) and len(result["rows"]) == 8
    assert result["all"]["by_threads"]["1"]["median_signed"] == pytest.approx(1 / 1.3 - 1)
    assert (tmp_path / "table.md").read_text().startswith("# bench generalise")
