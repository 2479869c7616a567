"""Ids in URLs and query parameters, read by one rule: ASCII digits, at most 18 of them.

Eighteen digits fit a 64-bit key, so no id reaches the database driver as a number it cannot hold, and only
ASCII digits count: `str.isdigit` also accepts "²" or "٣", which `int()` then refuses or reads as a number
nobody typed. Paths use `IdConverter` (`<id:pk>`, `<pid:pk>`); query parameters (`?recommendation=`, `?c=`,
`?sample=`, compare's `a` and `b`) use `parse_id`, which says what is wrong where a view answers with it.
"""

from __future__ import annotations

import re

# The largest id a 64-bit signed key can hold: a request body's ids are bounded by it (the serializers).
MAX_ID = 2**63 - 1
DIGITS = "[0-9]{1,18}"
_DIGITS = re.compile(DIGITS)


class BadId(ValueError):
    """A query parameter that is not an id; the message says what it must be."""


def parse_id(text: str, *, what: str = "an id", least: int = 1) -> int:
    """The whole number `text` writes, `least` or more (1 for an id, 0 for an index), else BadId
    ("must be <what>")."""
    if _DIGITS.fullmatch(text) is None or int(text) < least:
        raise BadId(f"must be {what}")
    return int(text)


def id_or(text: str | None, default: int | None, *, least: int = 1) -> int | None:
    """`parse_id` for a page, which ignores what it cannot read: the id, else `default`."""
    try:
        return parse_id(text or "", least=least)
    except BadId:
        return default


class IdConverter:
    """`<id:pk>`: like Django's `int`, but at most 18 digits, so every id that matches fits a BigAutoField."""

    regex = DIGITS

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)
