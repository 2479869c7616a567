"""The probe's marks on other pages ({% load probes %}): `{% expected_first rec as first %}`, the
candidate the recommendation's probes now expect to reach the target first (queries.expected_first_of)."""

from __future__ import annotations

from django import template

from advisor.models import Recommendation
from advisor.probe import queries

register = template.Library()


@register.simple_tag
def expected_first(rec: Recommendation) -> queries.ExpectedFirst | None:
    return queries.expected_first_of(rec)
