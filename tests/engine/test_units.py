"""advisor/engine/units.py: the one way numbers are written, table by table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from advisor.engine import units

X, D = units.TIMES, units.DASH  # the multiplication sign and the en dash


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "—"),
        ("", "—"),
        ("not a number", "—"),
        (float("nan"), "—"),
        (float("inf"), "—"),
        (0, "0 s"),
        (5e-7, "0.5 µs"),
        (2.78e-5, "27.8 µs"),
        (2782e-6, "2.78 ms"),  # not "2,782 µs"
        (0.0893, "89.3 ms"),
        (0.149, "149 ms"),
        (0.9996, "1 s"),  # rounded before its unit is chosen: never "1e+03 ms"
        (1, "1 s"),
        (45, "45 s"),
        (90, "90 s"),
        (119.96, "2 min"),
        (4198.8, "70 min"),
        (7199, "2 h"),
        (12600, "3.5 h"),
        (1e6, "11.6 days"),
        (1e9, "11,600 days"),
        ("3", "3 s"),  # what a template hands over
        (np.float32(0.1), "100 ms"),
        (np.int64(5), "5 s"),
    ],
)
def test_it_writes_durations(seconds: Any, text: str) -> None:
    assert units.duration(seconds) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "—"),
        (0, "0 B"),
        (512, "512 B"),
        (999.6, "1 kB"),
        (68992, "69 kB"),  # a sample /samples/ listed as 67.4 KB (bytes / 1024)
        (80_700, "80.7 kB"),
        (999_600, "1 MB"),
        (1_210_000, "1.21 MB"),
        (20_000_000, "20 MB"),  # the upload limit
        (20 * 2**20, "21 MB"),  # 20 MiB is not 20 MB
        (8.59e9, "8.59 GB"),
        (1.5e12, "1.5 TB"),
        (3e15, "3,000 TB"),
    ],
)
def test_it_writes_decimal_bytes(value: Any, text: str) -> None:
    assert units.nbytes(value) == text


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (lambda: units.si(1_093_930), "1.09 M"),
        (lambda: units.si(4.5e10, "FLOP"), "45 GFLOP"),
        (lambda: units.si(999.6), "1 k"),
        (lambda: units.si(947), "947"),
        (lambda: units.si(0.5), "0.5"),
        (lambda: units.si(None, "FLOP"), "—"),
        (lambda: units.rate(947, "examples"), "947 examples/s"),
        (lambda: units.rate(1280, "examples"), "1,280 examples/s"),
        (lambda: units.rate(12_345, "examples"), "12,300 examples/s"),
        (lambda: units.rate(4.2e7, "examples"), "42 M examples/s"),
        (lambda: units.quantity(999_999), "1 M"),
        (lambda: units.quantity(None), "—"),
        (lambda: units.rate(None, "examples"), "—"),
        (lambda: units.flops_rate(1e9), "1 GFLOP/s"),
        (lambda: units.byte_rate(3.15e10), "31.5 GB/s"),
        (lambda: units.byte_rate(0.55e9), "550 MB/s"),
        (lambda: units.percent(0.06), "6%"),
        (lambda: units.percent(0.37), "37%"),
        (lambda: units.percent(1), "100%"),
        (lambda: units.percent(0.9996), "99%"),  # less than all never reads as all
        (lambda: units.percent(0.9996, 1), "99.9%"),
        (lambda: units.percent(0.0312, 1), "3.1%"),
        (lambda: units.percent("x"), "—"),
        (lambda: units.ratio(1.0712), f"1.07{X}"),
        (lambda: units.ratio(7.2), f"7.2{X}"),
        (lambda: units.count(48000), "48,000"),
        (lambda: units.count(1797.0), "1,797"),
        (lambda: units.count(None), "—"),
        (lambda: units.number(12_345), "12,300"),
        (lambda: units.number(0.0278), "0.0278"),
        (lambda: units.number(1.2), "1.2"),
        (lambda: units.number(45.0), "45"),
        (lambda: units.shape([3, 224, 224]), f"3{X}224{X}224"),
        (lambda: units.shape([]), "—"),
    ],
)
def test_it_writes_counts_rates_shares_and_ratios(call: Any, text: str) -> None:
    assert call() == text


@pytest.mark.parametrize(
    ("n", "noun", "nouns", "text"),
    [
        (1, "thread", None, "1 thread"),
        (2, "thread", None, "2 threads"),
        (0, "thread", None, "0 threads"),
        (1.0, "epoch", None, "1 epoch"),
        (1.5, "epoch", None, "1.5 epochs"),
        (1797, "example", None, "1,797 examples"),
        (3, "transposed convolution", None, "3 transposed convolutions"),
        (2, "batch", "batches", "2 batches"),
        ("a few", "thread", None, "a few threads"),
    ],
)
def test_it_counts_in_words(n: Any, noun: str, nouns: str | None, text: str) -> None:
    assert units.plural(n, noun, nouns) == text


def test_threads_text_is_the_plural_of_thread() -> None:
    assert [units.threads_text(n) for n in (1, 2, 16)] == ["1 thread", "2 threads", "16 threads"]


@pytest.mark.parametrize(
    ("low", "high", "text"),
    [
        (1500, 2880, f"25{D}48 min"),
        (2880, 1500, f"25{D}48 min"),  # either order
        (0.0651, 0.0893, f"65.1{D}89.3 ms"),
        (90, 600, f"1.5{D}10 min"),  # the low end in the high end's unit where it reads
        (5, 180, "5 s to 3 min"),  # not f"0.0833{D}3 min"
        (0.05, 2, "50 ms to 2 s"),
        (2e5, 4e5, f"2.31{D}4.63 days"),
        (1500, 1502, "25 min"),  # a range too narrow to show is one figure
        (0, 0, "0 s"),
        (None, 10, "—"),
        (10, float("nan"), "—"),
    ],
)
def test_it_writes_time_intervals(low: Any, high: Any, text: str) -> None:
    assert units.interval_text(low, high) == text


@pytest.mark.parametrize(
    ("low", "high", "text"),
    [
        (0.7, 1.42, f"{X}0.7 to {X}1.4"),
        (1.42, 0.7, f"{X}0.7 to {X}1.4"),
        (0.456, 2.5, f"{X}0.46 to {X}2.5"),
        (None, 1.0, "—"),
    ],
)
def test_it_writes_ratio_intervals(low: Any, high: Any, text: str) -> None:
    assert units.ratio_interval_text(low, high) == text
