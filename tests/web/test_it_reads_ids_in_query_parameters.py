"""Ids in the pages' query parameters (`?c=`, `?sample=`, compare's `a` and `b`) are read by advisor.ids: only
ASCII digits count, so "²" (which `str.isdigit` accepts and `int()` refuses) is ignored like any other
garbage instead of a 500, and a good id still selects what it names."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from advisor.ids import BadId, id_or, parse_id

pytestmark = pytest.mark.django_db
PAGES = ["/recommendations/{rec}/?c={g}", "/recommendations/{rec}/probe/?sample={g}", "/compare/?a={g}&b={g}"]
GARBAGE = ["²", "٣", "-1", "1e3", " 1", "9" * 19, "x"]


@pytest.mark.parametrize(
    ("text", "least", "expected"),
    [("1", 1, 1), ("0", 0, 0), ("007", 1, 7), ("9" * 18, 1, 10**18 - 1), *[(g, 0, None) for g in GARBAGE]],
)
def test_it_parses_digits_only(text: str, least: int, expected: int | None) -> None:
    assert id_or(text, None, least=least) == expected


def test_it_says_what_an_id_must_be() -> None:
    with pytest.raises(BadId, match=r"^must be a recommendation.s id$"):
        parse_id("0", what="a recommendation's id")


@pytest.mark.parametrize("garbage", GARBAGE)
@pytest.mark.parametrize("url", PAGES)
def test_it_ignores_what_is_not_an_id(client_for: Client, rec: Any, url: str, garbage: str) -> None:
    assert client_for.get(url.format(rec=rec.pk, g=garbage)).status_code == 200


@pytest.mark.parametrize(("c", "shown"), [("1", 1), ("²", 0), ("01", 1), ("99", 1)])
def test_it_shows_the_candidate_a_good_index_names(client_for: Client, rec: Any, c: str, shown: int) -> None:
    """The download link names the candidate shown: a good index (past the end: the last), else the first."""
    assert len(rec.result["candidates"]) == 2
    html = client_for.get(f"/recommendations/{rec.pk}/?c={c}").content.decode()
    assert f"/api/v1/recommendations/{rec.pk}/candidates/{shown}/code/" in html
