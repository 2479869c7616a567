"""bench.predict.compare_profiles: profiles scored against one grid measured once (a real measurement)."""

from __future__ import annotations

import copy
import statistics

from advisor.engine.costmodel import step_cost
from bench.predict import compare_profiles
from bench.predict_grid import grid_networks
from tests.engine.profiles import synthetic_profile


def test_every_profile_is_scored_against_the_same_measured_rows() -> None:
    network = next(n for n in grid_networks(2) if n[0] == "ffn-small")
    model = {**synthetic_profile(), "seconds": 1.0}
    slow = copy.deepcopy(model)
    for rates in slow["threads"].values():
        rates["step_factor"] = 10.0  # every prediction ten times the model's
    result = compare_profiles({"model": model, "slow": slow}, [network], (16,), (1, 2), 0.05)
    rows = result["rows"]
    assert [(r["network"], r["batch"], r["threads"]) for r in rows] == [
        ("ffn-small", 16, 1),
        ("ffn-small", 16, 2),
    ]
    assert all("profiled" not in r for r in rows)  # the measured rows are kept as measured
    for name, profile in (("model", model), ("slow", slow)):
        errors = [
            abs(
                step_cost(network[1], batch_size=16, threads=r["threads"], profile=profile).seconds
                - r["measured"]
            )
            / r["measured"]
            for r in rows
        ]
        assert result[name]["median"] == statistics.median(errors)
        assert result[name]["within20"] == sum(e <= 0.2 for e in errors) / 2
        assert result[name]["seconds"] == 1.0
    # the same thread count is fastest under a profile scaled as a whole
    assert result["model"]["threads"] == result["slow"]["threads"]
