"""Every page passes the accessibility smoke check: labels, one h1 and no skipped heading levels, named
figures, buttons and links with text; the stylesheet's colour pairs reach WCAG AA contrast."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.web.a11y import contrast, problems, stylesheet_pairs
from tests.web.conftest import finished_job

CSS = Path(__file__).resolve().parents[2] / "static" / "css" / "app.css"


@pytest.mark.django_db
def test_it_passes_the_smoke_check_on_every_page(client_for: Client, rec: Any, device: Any) -> None:
    job = finished_job(rec, device)
    running = finished_job(rec, device, status="running")
    pages = [
        "/",
        "/?step=data",
        "/?step=hardware",
        "/?step=target",
        f"/recommendations/{rec.pk}/",
        f"/recommendations/{rec.pk}/?c=1",
        f"/calibrations/{job.pk}/",
        f"/calibrations/{running.pk}/",
        "/history/",
        "/history/calibrations/",
        "/compare/",
        f"/compare/?kind=candidates&a={rec.pk}:0&b={rec.pk}:1",
        f"/compare/?kind=devices&a={job.pk}&b={running.pk}",
        "/rules/",
        "/account/token/",
    ]
    for url in pages:
        response = client_for.get(url)
        assert response.status_code == 200, url
        assert problems(response.content.decode()) == [], url
    login = Client().get("/accounts/login/")
    assert problems(login.content.decode()) == []


def test_it_finds_what_the_smoke_check_looks_for() -> None:
    bad = '<html><body><h1>a</h1><h3>b</h3><input id="x"><svg></svg><button></button></body></html>'
    found = problems(bad)
    assert any("lang" in p for p in found) and any("jumps" in p for p in found)
    assert any("without a label" in p for p in found) and any("<svg>" in p for p in found)
    assert any("button without text" in p for p in found)


@pytest.mark.parametrize(
    ("fg", "bg", "low", "high"), [("#000000", "#ffffff", 20.9, 21.1), ("#777777", "#ffffff", 4.4, 4.5)]
)
def test_it_computes_contrast_as_wcag_does(fg: str, bg: str, low: float, high: float) -> None:
    assert low <= contrast(fg, bg) <= high


def test_it_styles_text_with_enough_contrast() -> None:
    pairs = stylesheet_pairs(CSS.read_text())
    assert len(pairs) >= 5  # the parser found the stylesheet's coloured rules
    low = [
        (selector, fg, bg, round(contrast(fg, bg), 2)) for selector, fg, bg in pairs if contrast(fg, bg) < 4.5
    ]
    assert low == []
