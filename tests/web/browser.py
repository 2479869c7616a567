"""What the browser tests share: Chromium's flags, where screenshots go, logging in, and waiting for htmx."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.web.a11y import CONTRAST_JS

SHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SETTLED = "!document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')"


@contextmanager
def open_page(chromium_path: str, base_url: str, *, login: bool = True) -> Iterator[Any]:
    """A logged-in tab (user ada) whose console errors are kept in `tab.console_errors`."""
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path, args=ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=base_url)
        context.set_default_timeout(15_000)
        tab = context.new_page()
        tab.console_errors = []
        tab.on("console", lambda m: tab.console_errors.append(m.text) if m.type == "error" else None)
        try:
            if login:
                tab.goto("/")
                tab.fill("#id_username", "ada")
                tab.fill("#id_password", "correct-horse-battery")
                tab.click("button[type=submit]")
                tab.wait_for_url(re.compile(r"/$"))
            yield tab
        finally:
            context.close()
            browser.close()


def shoot(page: Any, name: str) -> None:
    """A full-page screenshot kept under tests/artifacts/screenshots/, and the page's colour contrast."""
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    assert page.evaluate(CONTRAST_JS) == [], name


def submit(page: Any, selector: str) -> None:
    """Click a wizard button and wait until htmx has swapped its answer in (the old step still shows until
    then, so waiting for a selector alone could match the page being replaced)."""
    with page.expect_response(lambda r: r.request.method == "POST"):
        page.click(selector)
    page.wait_for_function(SETTLED)


def next_step(page: Any, step: str) -> None:
    submit(page, f"button[name=go][value={step}]")
    page.wait_for_selector(f"button[aria-current=step][value={step}]")
