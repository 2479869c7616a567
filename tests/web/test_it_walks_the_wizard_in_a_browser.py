"""Headless Chromium against a live server and a real worker: the wizard for a vision and a tabular task, the
recommendation, a calibration watched live to its measured results and plots, and screenshots of each page."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.web.browser import ARGS, SHOTS, next_step, shoot, submit

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_it_walks_a_vision_task_with_live_validation(page: Any) -> None:
    submit(page, "button[name=example][value=mnist]")
    page.wait_for_function("document.querySelector('input[name=task][value=vision]').checked")
    shoot(page, "01-wizard-task")
    next_step(page, "data")
    page.fill("#id_input_shape", "28, 28")  # typed, not submitted: the live check answers
    page.wait_for_selector("#err-input_shape:has-text('vision needs [channels, height, width]')")
    shoot(page, "02-wizard-data-error")
    page.fill("#id_input_shape", "3, 32, 32")
    page.wait_for_function("document.querySelector('#err-input_shape').textContent.trim() === ''")
    page.wait_for_selector("#preview:has-text('Preview: first candidate') >> .big")
    next_step(page, "hardware")
    shoot(page, "03-wizard-hardware")
    next_step(page, "target")
    page.click("button[name=go][value=recommend]")
    page.wait_for_url(re.compile(r"/recommendations/\d+/$"))
    heading = page.inner_text("h1")
    assert heading.startswith("Recommendation #")
    assert page.locator("svg.net").count() >= 1 and page.locator(".badge.analytic").count() >= 3
    assert "3\u00d732\u00d732" in (page.locator("svg.net").first.text_content() or "")
    shoot(page, "04-recommendation-vision")
    page.click("a:has-text('Details') >> nth=1")
    page.wait_for_selector("#cand-h:has-text('Candidate 2')")
    assert "?c=1" in page.url
    page.set_viewport_size({"width": 400, "height": 800})  # a phone: wide parts scroll in their own box
    for url, name in ((page.url, "04b-recommendation-narrow"), ("/", "01b-wizard-narrow")):
        page.goto(url)
        assert page.evaluate("document.documentElement.scrollWidth") <= 400, name
        shoot(page, name)


def test_it_recommends_calibrates_and_shows_measured_results(page: Any, worker: Any) -> None:
    page.goto("/")
    submit(page, "button[name=example][value=tabular]")
    page.wait_for_function("document.querySelector('input[name=task][value=tabular]').checked")
    next_step(page, "data")
    page.fill("#id_examples", "2000")
    next_step(page, "hardware")
    submit(page, f"button[name=use_device][value='{worker.device_id}']")
    assert page.input_value("#id_cpu_cores") == str(worker_cores(worker))
    next_step(page, "target")
    page.fill("#id_accuracy", "0.9")
    page.click("button[name=go][value=recommend]")
    page.wait_for_url(re.compile(r"/recommendations/\d+/$"))
    page.select_option("#id_device", worker.device_id)
    page.fill("#id_batch_sizes", "32")
    page.fill("#id_threads", "1")
    shoot(page, "05-recommendation-tabular")
    page.click("button:has-text('Calibrate candidate 1')")
    page.wait_for_url(re.compile(r"/calibrations/\d+/$"))
    states = set()
    deadline = time.monotonic() + 120  # a readiness poll: fails only if the job never finishes
    while time.monotonic() < deadline:  # htmx polls every second; watch what the user sees
        states.add(page.inner_text("#job-state"))
        if states & {"succeeded", "failed", "cancelled"}:
            break
        if "running" in states and not (SHOTS / "06-calibration-running.png").exists():
            page.screenshot(path=str(SHOTS / "06-calibration-running.png"), full_page=True)
        page.wait_for_timeout(250)
    assert page.inner_text("#job-state") == "succeeded", (states, worker.log()[-3000:])
    assert page.get_attribute("#job-status", "hx-get") is None  # polling stopped (286)
    rows = page.locator("#results tbody tr")
    assert rows.count() >= 1 and "32" in rows.first.inner_text()
    assert page.locator(".plot svg").count() >= 1 and page.locator(".plot circle").count() >= 1
    if page.locator("#withheld").count():  # a busy machine: every configuration unreliable, and it says so
        assert "unreliable" in page.inner_text("#withheld")
        assert page.locator("#measure-again button").inner_text() == "Measure again"
    else:
        assert page.locator("#measured-to-train").inner_text().strip() not in ("", "—")
    shoot(page, "07-calibration-done")
    page.click("text=recommendation #")
    page.wait_for_selector(".badge.measured")
    for url, name in (
        ("/history/", "08-history"),
        ("/history/calibrations/", "09-history-calibrations"),
        ("/compare/?kind=candidates", "10-compare"),
        ("/rules/", "11-rules"),
        ("/account/token/", "12-token"),
    ):
        page.goto(url)
        shoot(page, name)
    _cancel_a_long_sweep(page, worker)
    rec_id = re.search(
        r"#(\d+)", page.goto("/history/") and page.inner_text("#list tbody tr >> nth=0")
    ).group(1)
    page.goto(f"/compare/?kind=candidates&a={rec_id}:0&b={rec_id}:1")
    assert page.locator("table.compare tbody tr").count() >= 5
    shoot(page, "13-compare-candidates")


def worker_cores(worker: Any) -> int:
    from advisor.models import Device

    return int(Device.objects.get(id=worker.device_id).cores or 0)


def _cancel_a_long_sweep(page: Any, worker: Any) -> None:
    """Queue a sweep that would run for many seconds, cancel it from its page, see it stop."""
    page.goto("/history/")
    page.click("#list tbody tr >> nth=0 >> a")
    page.select_option("#id_device", worker.device_id)
    page.fill("#id_batch_sizes", "16, 32, 64, 128, 256, 512")
    page.fill("#id_threads", "1, 2")
    page.click("button:has-text('Calibrate candidate 1')")
    page.wait_for_url(re.compile(r"/calibrations/\d+/$"))
    page.wait_for_selector("#job-state:has-text('running')", timeout=60_000)
    page.click("#job-status button:has-text('Cancel')")
    page.wait_for_selector("#job-state:has-text('cancelled')", timeout=30_000)
    assert page.get_attribute("#job-status", "hx-get") is None
    shoot(page, "14-calibration-cancelled")


def test_it_works_as_plain_forms_without_javascript(chromium_path: str, live_server: Any, user: Any) -> None:
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path, args=ARGS, headless=True)
        context = browser.new_context(java_script_enabled=False, base_url=live_server.url)
        context.set_default_timeout(15_000)
        tab = context.new_page()
        try:
            tab.goto("/")
            tab.fill("#id_username", "ada")
            tab.fill("#id_password", "correct-horse-battery")
            tab.click("button[type=submit]")
            tab.click("button[name=example][value=speech]")
            assert tab.is_checked("input[name=task][value=sequence]")
            tab.click("button[name=go][value=data]")
            tab.fill("#id_input_shape", "100")  # a full page load answers with the engine's message
            tab.click("button[name=go][value=hardware]")
            assert "sequence needs [steps, features]" in tab.inner_text("#err-input_shape")
            tab.fill("#id_input_shape", "100, 40")
            tab.click("button[name=go][value=hardware]")
            tab.click("button[name=go][value=recommend]")
            tab.wait_for_url(re.compile(r"/recommendations/\d+/$"))
            # of the networks expected to reach the target, the one predicted soonest there (net.time.first)
            assert "temporal convolutional network" in tab.inner_text("h1").lower()
            tab.click("a:has-text('Details') >> nth=1")
            assert "Candidate 2" in tab.inner_text("#cand-h")
            tab.screenshot(path=str(SHOTS / "15-no-javascript-recommendation.png"), full_page=True)
        finally:
            context.close()
            browser.close()
