"""bench curves: its table sets each held-out layer's measured seconds against the curve it is read off and
the older reading that curve replaced."""

from __future__ import annotations

from bench.curves import table


def test_it_reports_medians_over_the_rounds_and_the_older_reading_where_a_row_has_one() -> None:
    causal = {"kind": "CausalConv1d", "args": {"in_channels": 8}, "batch": 32}
    conv = {"kind": "Conv2d", "args": {"in_channels": 4}, "batch": 16}
    rows = [
        {**causal, "measured": 1e-3, "predicted": 1e-3, "older": 4e-3},
        {**causal, "measured": 3e-3, "predicted": 2e-3, "older": 4e-3},
        {**causal, "measured": 2e-3, "predicted": 4e-3, "older": 8e-3},
        {**conv, "measured": 2e-3, "predicted": 1e-3},
    ]
    lines = table(rows).splitlines()
    assert len(lines) == 4  # a header, its rule and one line per layer
    assert lines[2].endswith("| 2.000 | 1.00 | 0.25 |")  # medians of 1, 1.5, 0.5 and of 0.25, 0.75, 0.25
    assert lines[3].endswith("| 2.000 | 2.00 | — |")
