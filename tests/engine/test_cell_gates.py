"""A gated cell's work on a CPU profile: its products' FLOPs plus CELL_GATE_WORK per gate value, read off
curves whose points are the profile's own cells (CELL_SIZES); other curves keep FLOPs alone."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from advisor.engine import layercost
from advisor.engine.layercost import CELL_GATE_WORK, layer_seconds
from advisor.engine.layershapes import GATES
from advisor.engine.profile import CELL_SIZES, ThreadProfile
from tests.engine.profiles import synthetic_profile

RATE = 1e-10  # seconds per unit of work: a curve this straight reads back exactly what it was built from
STEPS = 8


def _cell_curve(gates: int, *, gate_work: float) -> list[list[float]]:
    """Per-step seconds of the profile's cells, as calibration.profile keys them (by FLOPs), at RATE times
    their work with `gate_work` per gate value."""
    return [
        [2.0 * b * gates * h * (i + h), RATE * (2.0 * b * gates * h * (i + h) + gate_work * b * gates * h)]
        for b, i, h in CELL_SIZES
    ]


def _rates(*, gru_curves: bool = True) -> ThreadProfile:
    rates = copy.deepcopy(synthetic_profile(1)["threads"]["1"])
    # the same per-step seconds at 8 and 128 steps: a call has no fixed part
    rates["recurrent"] = rates["recurrent_long"] = _cell_curve(GATES["LSTM"], gate_work=CELL_GATE_WORK)
    if gru_curves:
        rates["gru"] = rates["gru_long"] = _cell_curve(GATES["GRU"], gate_work=CELL_GATE_WORK)
    return rates


def _cell(kind: str, width: int, hidden: int, layers: int = 1, bidirectional: bool = False) -> dict[str, Any]:
    args = {"input_size": width, "hidden_size": hidden, "num_layers": layers, "batch_first": True}
    return {"kind": kind, "args": {**args, "bidirectional": bidirectional}}


def _expected(kind: str, batch: int, width: int, hidden: int, layers: int, directions: int) -> float:
    gates, seconds = GATES[kind], 0.0
    for _ in range(layers):
        work = 2.0 * batch * gates * hidden * (width + hidden) + CELL_GATE_WORK * batch * gates * hidden
        seconds += directions * STEPS * RATE * work
        width = hidden * directions
    return seconds


@pytest.mark.parametrize(
    ("kind", "batch", "width", "hidden", "layers", "bidirectional"),
    [
        ("LSTM", 32, 64, 64, 1, False),  # one of the profile's own cells
        ("LSTM", 512, 16, 16, 1, False),  # the same FLOPs as the one above, four times the gate values
        ("LSTM", 64, 4, 128, 2, False),  # a narrow input: the second layer is as wide as the first's state
        ("GRU", 128, 27, 80, 2, True),  # each layer and direction a call of its own
        ("GRU", 8, 256, 256, 1, False),
    ],
)
def test_a_gated_cell_costs_its_flops_and_its_gate_values(
    kind: str, batch: int, width: int, hidden: int, layers: int, bidirectional: bool
) -> None:
    item = _cell(kind, width, hidden, layers, bidirectional)
    _, compute, other = layer_seconds(item, (STEPS, width), batch, _rates())  # type: ignore[arg-type]
    directions = 2 if bidirectional else 1
    assert compute == pytest.approx(_expected(kind, batch, width, hidden, layers, directions), rel=1e-9)
    assert other == 0.0


def test_at_the_same_flops_more_gate_values_cost_more() -> None:
    rates = _rates()
    wide = layer_seconds(_cell("LSTM", 64, 64), (STEPS, 64), 32, rates)[1]  # type: ignore[arg-type]
    many = layer_seconds(_cell("LSTM", 16, 16), (STEPS, 16), 512, rates)[1]  # type: ignore[arg-type]
    gate_share = CELL_GATE_WORK * 4 / (2 * 4 * 128)  # per FLOP of the 64-unit cell's step, per unit
    assert many / wide == pytest.approx((1 + 4 * gate_share) / (1 + gate_share), rel=1e-9)


def test_an_older_profiles_gru_reads_the_lstms_cells_by_their_gate_values() -> None:
    """A profile before version 8 has no GRU curves: a GRU reads the LSTM's, whose points have four gates."""
    item = _cell("GRU", 32, 96)
    _, compute, _ = layer_seconds(item, (STEPS, 32), 64, _rates(gru_curves=False))  # type: ignore[arg-type]
    assert compute == pytest.approx(_expected("GRU", 64, 32, 96, 1, 1), rel=1e-9)


@pytest.mark.parametrize(
    ("profile", "reads_gate_work"),
    [("the profile's own cells", True), ("points elsewhere", False), ("gpu", False)],
)
def test_only_a_cpu_profiles_own_cells_are_read_by_their_gate_values(
    profile: str, reads_gate_work: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The synthetic profile's cell points are not CELL_SIZES'; a GPU's profile prices a call along its own
    line (sequence_line) and its gate work is unmeasured: neither reads CELL_GATE_WORK."""
    rates = _rates() if profile != "points elsewhere" else copy.deepcopy(synthetic_profile(1)["threads"]["1"])
    rates["recurrent_long"] = rates["recurrent"]
    if profile == "gpu":
        rates["sequence_line"] = True
    item = _cell("LSTM", 16, 64)

    def priced(gate_work: float) -> float:
        monkeypatch.setattr(layercost, "CELL_GATE_WORK", gate_work)
        return layer_seconds(item, (STEPS, 16), 32, rates)[1]  # type: ignore[arg-type]

    assert priced(0.0) > 0
    assert (priced(0.0) != priced(1000.0)) == reads_gate_work
