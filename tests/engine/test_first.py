"""First contract checks: a tabular spec gets a full Recommendation; bad specs name their fields."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from advisor.engine import SpecError, recommend

TABULAR: dict[str, Any] = {
    "task": "tabular",
    "data": {"examples": 5000, "input_shape": [20], "outputs": 3},
    "hardware": {"cpu_cores": 4, "ram_gb": 16},
}


def test_it_answers_a_tabular_spec_with_a_shallow_ffn_first() -> None:
    rec = recommend(TABULAR)
    first = rec["candidates"][0]
    assert (first["family"], first["depth"]) == ("ffn", "shallow")
    assert first["hidden_sizes"][0] >= 20
    assert set(rec) == {"spec", "candidates", "hardware_plan", "dataflow", "reasons"}
    assert first["estimate"]["basis"] == "analytic"


def test_it_counts_ffn_parameters_exactly_as_torch_builds_them() -> None:
    for candidate in recommend(TABULAR)["candidates"]:
        model = torch.nn.Sequential(
            *[getattr(torch.nn, x["kind"])(**x["args"]) for x in candidate["networks"]["model"]]
        )
        assert sum(p.numel() for p in model.parameters()) == candidate["parameters"]


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"task": "video"}, "task"),
        ({"data": {"examples": 0, "input_shape": [20], "outputs": 3}}, "data.examples"),
        ({"data": {"examples": 10, "input_shape": [20, 3], "outputs": 3}}, "data.input_shape"),
        ({"hardware": {"cpu_cores": 4, "ram_gb": 16, "gpu": "nope"}}, "hardware.gpu"),
    ],
)
def test_it_names_the_offending_field(change: dict[str, Any], path: str) -> None:
    with pytest.raises(SpecError) as caught:
        recommend({**TABULAR, **change})
    assert path in caught.value.errors
