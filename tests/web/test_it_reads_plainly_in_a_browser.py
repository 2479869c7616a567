"""Issue 17 in a real browser: what a new user stumbled over, page by page, each checked on the rendered page
and kept as a screenshot (tests/artifacts/screenshots/17-*.png). The jobs' rows are written as a worker leaves
them: these pages only read them."""

from __future__ import annotations

import contextlib
import itertools
import re
from typing import Any

import pytest

from advisor import services
from advisor.engine.units import duration
from advisor.models import Device
from tests.web.browser import SHOTS, next_step, shoot, submit
from tests.web.conftest import tuned_job

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def ticks(page: Any, figure: str) -> list[float]:
    axis = page.locator(f"{figure} >> g.axes text[text-anchor=end][dominant-baseline=middle]")
    labels = axis.evaluate_all("texts => texts.map(t => t.textContent)")
    return [float(t) for t in labels]


def test_it_names_the_allocator_and_the_epoch_bound_on_calibration_and_compare(
    page: Any, rec: Any, device: Device
) -> None:
    job = tuned_job(rec, device)
    page.goto(f"/calibrations/{job.pk}/")
    headline = page.inner_text("#job-status table.compact tbody tr >> nth=0")
    assert "batch 64, 2 threads, tuned allocator" in headline  # item 1: not silently the tuned row
    default_row = page.inner_text("#default-allocator")
    assert "default allocator" in default_row and "99.7 ms" in default_row
    epochs = rec.result["candidates"][0]["training"]["epochs"]
    assert f"To train (up to {epochs} epochs)" in page.inner_text("#job-status thead")  # item 2
    verdict = page.inner_text("#job-status")  # item 6: each thread count once, the 1-thread one included
    assert "1 thread 320 examples/s, 2 threads 642 examples/s" in verdict
    assert "2 threads 642 examples/s, 2 threads" not in verdict
    shoot(page, "17-01-calibration-allocator")
    other = tuned_job(rec, device)
    page.goto("/compare/?kind=devices")
    page.select_option("#cmp-a", str(job.pk))
    page.select_option("#cmp-b", str(other.pk))
    with page.expect_response(lambda r: "/compare/" in r.url):
        page.click(".compare-form button[type=submit]")
    page.wait_for_selector("table.compare")
    assert f"a={job.pk}" in page.url and f"b={other.pk}" in page.url  # item 10: the URL can be shared
    fastest = page.inner_text("table.compare tr:has(th:text('Fastest set-up'))")
    assert "batch 64, 2 threads, tuned allocator" in fastest
    assert "8.59 GB" in page.inner_text(
        "table.compare tr:has(th:text('Memory'))"
    )  # item 9: GB like the wizard
    shoot(page, "17-02-compare-devices")
    page.goto(page.url)  # the shared address shows the same table
    assert page.locator("table.compare").count() == 1
    page.goto("/history/calibrations/")
    to_train = duration(other.estimate["seconds_to_train"])  # item 9: "70 min" as elsewhere, not "4198.8 s"
    assert to_train in page.inner_text("#list tbody tr >> nth=0")


def test_it_explains_the_recommendation_page_its_form_and_the_rules(
    page: Any, user: Any, device: Device
) -> None:
    dbn = services.advise(
        owner=user,
        spec={
            "task": "vision",
            "hardware": {"cpu_cores": 4, "ram_gb": 16},
            "data": {"examples": 50000, "input_shape": [1, 28, 28], "outputs": 10, "labelled_fraction": 0.05},
        },
    )
    page.goto(f"/recommendations/{dbn.pk}/")
    training = dbn.result["candidates"][0]["training"]
    assert f"To train (up to {training['epochs']} epochs, early stopping)" in page.inner_text("#candidate")
    assert "contrastive divergence" in page.inner_text("#candidate")  # item 8: not a bare "cd1 loss"
    assert "classifier: 1 layer " in page.inner_text("#candidate")  # item 8: "1 layer", not "1 layers"
    assert page.input_value("#id_batch_sizes") == ""  # item 7: blank means the doubling sweep, as it says
    assert f"doubling from the recommended {training['batch_size']}" in page.inner_text("#candidate form")
    page.click("a[href='#probe']")  # item 3: the probe is announced at the top, not only at the bottom
    assert page.url.endswith("#probe")
    shoot(page, "17-03-recommendation")
    page.goto("/rules/")
    assert page.locator("#references li").count() >= 5
    glossary = page.inner_text("#how-to-read")
    assert "Wünsche 2018" in glossary and "Shi et al. 2016" in glossary and "CD-1" in glossary
    assert "No rule applies" in glossary
    shoot(page, "17-04-rules")


def test_it_leads_a_new_user_to_the_probe_and_draws_its_charts_honestly(
    page: Any, rec: Any, device: Device
) -> None:
    from advisor.probe.models import ProbeJob

    page.goto("/samples/")
    assert "Probe on a data sample" in page.inner_text("main")  # item 3: says where samples come from
    shoot(page, "17-05-samples-empty")
    page.goto(f"/recommendations/{rec.pk}/probe/")
    assert page.is_disabled("#probe-form button[type=submit]")
    assert "Keep a sample first" in page.inner_text("#probe-why")  # item 3: why the button is disabled
    shoot(page, "17-06-probe-new")
    running = ProbeJob.objects.create(
        owner=rec.owner, recommendation=rec, device=device, time_limit_seconds=30,
        status=ProbeJob.RUNNING, progress=0.06, step="training the shallow FFN",
    )  # fmt: skip
    page.goto(f"/probes/{running.pk}/")
    assert "(6%)" in page.inner_text("#probe-status")  # item 9: a percentage, as calibrations show
    running.delete()

    def run(family: str, scores: tuple[float, ...]) -> dict[str, Any]:
        epochs = [{"epoch": e + 1, "val": v} for e, v in enumerate(scores)]
        return {"family": family, "score": scores[-1], "train_score": 1.0, "best_epoch": len(scores),
                "stopped": "plateau", "epochs": epochs}  # fmt: skip

    points = [{"examples": n, "score": v} for n, v in ((300, 0.93), (1200, 0.96), (4800, 0.975))]
    results = {
        "shallow": run("ffn", (0.93, 0.95, 0.98)),
        "deep": run("cnn", (0.94, 0.97, 0.99)),
        "curve": {"family": "ffn", "method": "power_law", "examples": 12000, "estimate": 0.985, "low": 0.97,
                  "high": 0.999, "interval": 0.9, "points": points,
                  "line": [{"examples": n, "score": v} for n, v in ((300, 0.93), (12000, 0.985))]},
    }  # fmt: skip
    done = ProbeJob.objects.create(
        owner=rec.owner, recommendation=rec, device=device, time_limit_seconds=30,
        status=ProbeJob.SUCCEEDED, progress=1.0, results=results,
        verdict={"text": "shallow FFN reaches 0.95 (target 0.90)", "notes": [], "reasons": []},
    )  # fmt: skip
    page.goto(f"/probes/{done.pk}/")
    figures = page.locator("figure.plot")
    assert figures.count() == 2
    assert "(FFN)" in figures.nth(0).inner_text()  # item 4: which network the learning curve is
    for i in range(2):  # item 4: even ticks, never past 1
        values = ticks(page, f"figure.plot >> nth={i}")
        steps = {round(b - a, 6) for a, b in itertools.pairwise(values)}
        assert len(steps) == 1 and max(values) <= 1.0, values
    epochs = figures.nth(1)
    for series, colour in (("s0", "rgb(29, 78, 216)"), ("s1", "rgb(180, 83, 9)")):  # item 4: key = line
        line = epochs.locator(f"g.series.{series} polyline")
        key = epochs.locator(f"ul.legend svg.key.{series} line")
        assert line.evaluate("e => getComputedStyle(e).stroke") == colour
        assert key.evaluate("e => getComputedStyle(e).stroke") == colour
    shoot(page, "17-07-probe-charts")
    page.goto("/history/probes/")  # item 10: probes are in the history
    assert f"#{done.pk}" in page.inner_text("#list") and "shallow FFN reaches" in page.inner_text("#list")
    shoot(page, "17-08-history-probes")


def test_it_keeps_the_wizard_consistent(page: Any, user: Any) -> None:
    assert page.is_hidden(".field-generation")  # item 5: only for generation tasks
    page.check("input[name=task][value=generation]")
    page.wait_for_selector(".field-generation", state="visible")
    page.check("input[name=task][value=tabular]")
    next_step(page, "data")
    assert page.input_value("#id_input_shape") == "32"  # item 5: not the vision shape (1, 28, 28)
    page.fill("#id_input_shape", "3, 4")
    page.wait_for_selector("#warn-data:has-text('(check)')")
    page.click("button[name=go][value=task]")
    page.wait_for_selector("button[aria-current=step][value=task]")
    assert "Data (step 2)" in page.inner_text("#preview")  # item 5: names the step, not "above"
    next_step(page, "data")
    page.fill("#id_input_shape", "32")
    page.wait_for_selector("#warn-data:empty", state="attached")  # item 5: the tab turns back
    held: list[Any] = []  # item 11: a live check still unanswered when the step changes
    page.route("**/wizard/check/", lambda route: held.append(route))
    with page.expect_request("**/wizard/check/"):  # sent after its 350 ms debounce, and held here
        page.fill("#id_examples", "5000")
    while not held:
        page.wait_for_timeout(50)
    next_step(page, "hardware")
    page.unroute("**/wizard/check/")
    for route in held:
        with contextlib.suppress(Exception):  # aborted by the page: nothing left to answer
            route.continue_()
    page.wait_for_timeout(500)
    assert not [e for e in page.console_errors if e.startswith("htmx:")], page.console_errors
    assert page.get_attribute("button[aria-current=step]", "value") == "hardware"  # a late check leaves it
    assert page.is_hidden(".field-link")  # item 5: no GPU, no host-to-GPU link
    page.fill("#id_cpu_cores", "7")
    page.fill("#id_ram_gb", "12")
    next_step(page, "target")
    page.fill("#id_accuracy", "0.9")
    page.wait_for_function("document.querySelector('#preview .big') !== null")
    assert not [e for e in page.console_errors if "oob" in e.lower()], page.console_errors  # item 11
    shoot(page, "17-09-wizard-targets")
    page.click("button[name=go][value=recommend]")
    page.wait_for_url(re.compile(r"/recommendations/\d+/$"))
    page.goto("/")
    submit(page, "button[name=example][value=cifar]")
    next_step(page, "hardware")
    assert page.input_value("#id_cpu_cores") == "7" and float(page.input_value("#id_ram_gb")) == 12  # item 5
    shoot(page, "17-10-wizard-hardware-kept")


def test_it_welcomes_a_new_user_and_links_the_api_docs_back(page: Any, live_server: Any) -> None:
    page.goto("/account/token/")
    assert "pip install requests" in page.inner_text("main")  # item 10
    page.goto("/api/v1/docs/")
    page.wait_for_selector("a:has-text('Back to the app')")  # item 11
    page.screenshot(path=str(SHOTS / "17-11-swagger.png"), full_page=True)  # Swagger UI's own colours
    redoc = page.request.get(f"{live_server.url}/api/v1/redoc/").text()
    assert (
        "redoc.standalone.js" in redoc and "fonts.googleapis" not in redoc
    )  # local files only: no blocked fonts
    answer = page.request.get(f"{live_server.url}/favicon.ico")
    assert answer.ok and "svg" in answer.headers["content-type"]  # item 11: no 404
    page.context.clear_cookies()
    page.goto("/")
    assert "manage.py createsuperuser" in page.inner_text("#first-account")  # item 12
    shoot(page, "17-12-login")
