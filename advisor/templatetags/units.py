"""The pages' one way of writing numbers in templates ({% load units %}): thin filters over
advisor/engine/units.py, which the views and the engine's reason texts use too.
{{ seconds|duration }}, {{ bytes|nbytes }}, {{ fraction|percent }}, {{ n|count }}, {{ value|si }},
{{ ratio|ratio }}, {{ gb|gigabytes }}, {{ n|plural:"thread" }},
{{ pair|interval }} (a [low, high] pair of seconds)."""

from __future__ import annotations

from collections.abc import Sequence

from django import template

from advisor.engine import units

register = template.Library()

register.filter("duration", units.duration)
register.filter("nbytes", units.nbytes)
register.filter("percent", units.percent)
register.filter("count", units.count)
register.filter("si", units.si)
register.filter("ratio", units.ratio)
register.filter("shape", units.shape)


@register.filter
def plural(n: object, nouns: str) -> str:
    """{{ 1|plural:"thread" }} -> '1 thread', {{ 2|plural:"batch,batches" }} -> '2 batches'."""
    noun, _, irregular = nouns.partition(",")
    return units.plural(n, noun, irregular or None)


@register.filter
def gigabytes(value: object) -> str:
    """A TaskSpec's decimal GB (ram_gb 8.0) as bytes are written: '8 GB', 0.5 -> '500 MB'."""
    amount = units.finite(value)
    return units.NONE if amount is None else units.nbytes(amount * 1e9)


@register.filter
def interval(bounds: Sequence[object] | None) -> str:
    """[1500, 2880] -> '25-48 min' (an en dash); anything but a pair reads as missing."""
    if not bounds or len(bounds) != 2:
        return units.NONE
    return units.interval_text(bounds[0], bounds[1])
