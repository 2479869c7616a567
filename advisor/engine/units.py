"""The one way every page, API message and reason text writes a number a person reads: bytes, times, rates,
counts, shares, ratios and intervals. Plain Python (the engine's reason texts use it, so no Django); the
template filters in advisor/templatetags/units.py are thin wrappers over these functions.

One unit system: decimal bytes (kB, MB, GB, as the wizard's "RAM (GB)" and the GPU catalog write them), times
in the largest unit that keeps the number at or above 1 (µs, ms, s, min, h, days: 0.0027 s reads "2.7 ms",
4198.8 s "70 min"), three significant digits, trailing zeros dropped. A number is rounded before its unit is
chosen, so 999,600 bytes read "1 MB", never "1e+03 kB"."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import SupportsFloat

NONE = "—"  # what a missing figure reads
DASH = "\u2013"  # the en dash of a range: 25-48 min
TIMES = "\u00d7"  # the multiplication sign of ratios (1.07x) and shapes (3x224x224)

# (seconds in one unit, its name), largest first; a time is written in the first unit it reaches after
# rounding, except that seconds run to 120 and minutes to 120 ("90 s" and "90 min" read better than 1.5 min
# and 1.5 h)
_TIME_UNITS = ((86400.0, "days"), (3600.0, "h"), (60.0, "min"), (1.0, "s"), (1e-3, "ms"), (1e-6, "µs"))
_TIME_FROM = {"days": 172800.0, "h": 7200.0, "min": 120.0, "s": 1.0, "ms": 1e-3, "µs": 0.0}
_BYTE_UNITS = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B"))
_SI_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def finite(value: object) -> float | None:
    """A number from what a payload or a template hands over (int, float, numpy scalar, numeric string);
    None for anything else, NaN and infinities included: they are shown as missing, never as 'nan'."""
    if isinstance(value, bool) or not isinstance(value, SupportsFloat | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def round_sig(value: float, digits: int = 3) -> float:
    """`value` rounded to `digits` significant digits: 0.0027849 -> 0.00278, 999.6 -> 1000.0."""
    if value == 0:
        return 0.0
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def number(value: float, digits: int = 3) -> str:
    """`digits` significant digits without an exponent, trailing zeros dropped, thousands grouped:
    0.0278 -> '0.0278', 1.20 -> '1.2', 12345 -> '12,300', 45.0 -> '45'."""
    rounded = round_sig(value, digits)
    if rounded == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(rounded))))
    text = f"{rounded:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def count(value: object) -> str:
    """A whole number with its thousands grouped: 48000 -> '48,000'."""
    number_ = finite(value)
    return NONE if number_ is None else f"{round(number_):,}"


def plural(n: object, noun: str, nouns: str | None = None) -> str:
    """'1 thread', '2 threads', '1,797 examples'; `nouns` for an irregular plural."""
    amount = finite(n)
    if amount is None:
        return f"{n} {nouns or noun + 's'}"
    shown = count(amount) if amount == round(amount) else number(amount)
    return f"{shown} {noun if amount == 1 else (nouns or noun + 's')}"


def threads_text(threads: object) -> str:
    return plural(threads, "thread")


def _scaled(value: object, steps: tuple[tuple[float, str], ...]) -> tuple[str, str] | None:
    """The number in the largest of `steps` (factor, name) it reaches once rounded, and that step's name."""
    number_ = finite(value)
    if number_ is None:
        return None
    rounded = round_sig(number_)
    factor, name = next(((f, n) for f, n in steps if abs(rounded) >= f), steps[-1])
    return number(rounded / factor), name


def si(value: object, unit: str = "") -> str:
    """1093930 -> '1.09 M', with `unit` after the prefix: si(4.5e10, 'FLOP') -> '45 GFLOP'."""
    scaled = _scaled(value, _SI_PREFIXES)
    return NONE if scaled is None else f"{scaled[0]} {scaled[1]}{unit}".rstrip()


def nbytes(value: object) -> str:
    """Decimal bytes: 512 -> '512 B', 80700 -> '80.7 kB', 8.59e9 -> '8.59 GB'."""
    scaled = _scaled(value, _BYTE_UNITS)
    return NONE if scaled is None else f"{scaled[0]} {scaled[1]}"


def _time_unit(seconds: float) -> tuple[float, str]:
    for size, unit in _TIME_UNITS:
        if abs(seconds) >= _TIME_FROM[unit]:
            return size, unit
    return _TIME_UNITS[-1]


def duration(seconds: object) -> str:
    """0.00278 -> '2.78 ms', 45 -> '45 s', 4198.8 -> '70 min', 1e6 -> '11.6 days'."""
    value = finite(seconds)
    if value is None:
        return NONE
    if value == 0:
        return "0 s"
    rounded = round_sig(value)
    size, unit = _time_unit(rounded)
    return f"{number(rounded / size)} {unit}"


def quantity(value: object) -> str:
    """A measured amount of things, grouped below a million and with an SI prefix above: 1280 -> '1,280',
    12345 -> '12,300', 4.2e7 -> '42 M'."""
    amount = finite(value)
    if amount is None:
        return NONE
    return number(amount) if abs(round_sig(amount)) < 1e6 else si(amount)


def rate(per_second: object, noun: str) -> str:
    """Things per second: rate(947, 'examples') -> '947 examples/s', rate(12345, 'examples') -> '12,300
    examples/s'."""
    value = finite(per_second)
    return NONE if value is None else f"{quantity(value)} {noun}/s"


def flops_rate(per_second: object) -> str:
    """Achieved arithmetic: 1e9 -> '1 GFLOP/s'."""
    return si(per_second, "FLOP/s")


def byte_rate(per_second: object) -> str:
    """Bandwidth: 3.15e10 -> '31.5 GB/s'."""
    value = finite(per_second)
    return NONE if value is None else f"{nbytes(value)}/s"


def percent(fraction: object, digits: int = 0) -> str:
    """0.06 -> '6%'; `digits` decimals: percent(0.9995, 1) -> '99.9%' (never 100.0% for less than all)."""
    value = finite(fraction)
    if value is None:
        return NONE
    shown = f"{100 * value:.{digits}f}"
    if value < 1 and float(shown) >= 100:  # 99.96% must not read as all of it
        shown = f"{100 - 10**-digits:.{digits}f}"
    return f"{shown}%"


def ratio(value: object) -> str:
    """How many times one figure is another: 1.0712 -> '1.07x' (with the multiplication sign)."""
    number_ = finite(value)
    return NONE if number_ is None else f"{number(number_)}{TIMES}"


def interval_text(low_seconds: object, high_seconds: object) -> str:
    """A range of times in one unit where that reads: (1500, 2880) -> '25-48 min' (an en dash); in two where
    the low end would fall below a tenth of the high end's unit: (5, 180) -> '5 s to 3 min'."""
    low, high = finite(low_seconds), finite(high_seconds)
    if low is None or high is None:
        return NONE
    low, high = sorted((low, high))
    if high == 0:
        return "0 s"
    size, unit = _time_unit(round_sig(high))
    if low / size < 0.1:
        return f"{duration(low)} to {duration(high)}" if duration(low) != duration(high) else duration(low)
    low_text, high_text = number(low / size), number(round_sig(high) / size)
    return f"{low_text} {unit}" if low_text == high_text else f"{low_text}{DASH}{high_text} {unit}"


def ratio_interval_text(low: object, high: object) -> str:
    """A range of factors on an estimate, two significant digits: (0.7, 1.42) -> 'x0.7 to x1.4'
    (multiplication signs)."""
    lo, hi = finite(low), finite(high)
    if lo is None or hi is None:
        return NONE
    lo, hi = sorted((lo, hi))
    return f"{TIMES}{number(lo, 2)} to {TIMES}{number(hi, 2)}"


def shape(values: Sequence[object] | None) -> str:
    """(3, 224, 224) -> '3x224x224' (multiplication signs)."""
    return TIMES.join(str(v) for v in values) if values else NONE
