"""The pages' one way of writing times and shares in templates: {% load units %} {{ seconds|duration }},
{{ fraction|percent }}, formatted as advisor/web/present.py does (4198.8 s reads '70 min' everywhere)."""

from __future__ import annotations

from typing import Any

from django import template

from advisor.web import present

register = template.Library()


@register.filter
def duration(seconds: Any) -> str:
    try:
        return present.duration(None if seconds in (None, "") else float(seconds))
    except (TypeError, ValueError):
        return "—"


@register.filter
def percent(fraction: Any) -> str:
    """0.06 -> '6 %', as the calibration pages show progress."""
    try:
        return f"{100 * float(fraction):.0f} %"
    except (TypeError, ValueError):
        return "—"
