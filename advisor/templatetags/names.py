"""Names on the pages ({% load names %}): {{ family|family:depth }} -> 'Shallow feed-forward network',
{{ family|family_label:depth }} -> 'Shallow feed-forward network (FFN)'; both from advisor/web/present.py, the
one place the engine's short family names are expanded."""

from __future__ import annotations

from django import template

from advisor.web import present

register = template.Library()


@register.filter
def family(name: object, depth: object = None) -> str:
    return present.family_title(str(name or ""), str(depth) if depth else None)


@register.filter
def family_label(name: object, depth: object = None) -> str:
    return present.family_label(str(name or ""), str(depth) if depth else None)
