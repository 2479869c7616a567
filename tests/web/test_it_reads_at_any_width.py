"""Issue 27 in a real browser: every page at 390, 768 and 1280 px without sideways scrolling or cut text, one
system of units and words, every cited work listed, a wizard that shows what applies and says why it stays,
samples offered for the probes they fit, memory figures that say what they cover, API docs that fetch nothing
from outside. Screenshots: tests/artifacts/screenshots/27-*.png. The jobs' rows are written as a worker leaves
them: these pages only read them."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from django.utils import timezone

from advisor import engine, services
from advisor.engine.rules import REFERENCES
from advisor.engine.units import DASH, duration, nbytes
from advisor.models import Device, Recommendation
from advisor.probe import services as probes
from advisor.probe.conf import samples_root
from advisor.probe.learning.verdict import interval_words, verdict
from advisor.probe.models import ProbeJob
from tests.web.browser import SHOTS, next_step, shoot, submit
from tests.web.conftest import tuned_job

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDTHS = (390, 768, 1280)
HARDWARE = {"cpu_cores": 2, "ram_gb": 8}
# Runs in the page: whether it scrolls sideways, and each element that cuts its text (overflow hidden or clip
# with more content than room); with `strict` (a desktop width) also each box that scrolls sideways at all,
# since there a table must fit. Form controls scroll their own value by design; a 1 px box is .sr-only text.
# The API docs pages draw third-party content (Swagger UI, ReDoc): only their page width is checked.
FIT_JS = """
(strict) => {
  const what = e => `${e.tagName.toLowerCase()}#${e.id}.${String(e.className).trim().replace(/\\s+/g, '.')}`
    + ` "${(e.innerText || '').replace(/\\s+/g, ' ').trim().slice(0, 40)}" ${e.scrollWidth}>${e.clientWidth}`;
  const out = {scroll: document.documentElement.scrollWidth, cut: [], scrolls: []};
  if (document.querySelector('#swagger-ui, #redoc-container')) return out;
  for (const e of document.querySelectorAll('body *')) {
    if (e.matches('input, select, textarea, option')) continue;
    const r = e.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1 || e.scrollWidth <= e.clientWidth + 1) continue;
    const o = getComputedStyle(e).overflowX;
    if (o === 'hidden' || o === 'clip') out.cut.push(what(e));
    else if (strict && (o === 'auto' || o === 'scroll')) out.scrolls.push(what(e));
  }
  return out;
}
"""


@pytest.fixture
def samples_dir(user: Any) -> Iterator[None]:
    """The user's sample folder, removed after (ids repeat across test databases)."""
    yield
    shutil.rmtree(samples_root() / str(user.pk), ignore_errors=True)


def spec(task: str, shape: list[int], **data: Any) -> dict[str, Any]:
    extra = {k: data.pop(k) for k in ("generation", "goal", "target") if k in data}
    return {
        "task": task,
        "data": {"examples": 60_000, "input_shape": shape, **data},
        "hardware": HARDWARE,
        **extra,
    }


def probe(rec: Recommendation, device: Device, sample: Any) -> ProbeJob:
    """A finished probe whose shallow network reached the target, with its learning curve and the verdict's
    own sentence (learning/verdict.py), as a worker leaves it."""
    epochs = [{"epoch": e + 1, "val": v} for e, v in enumerate((0.88, 0.93, 0.95, 0.96, 0.961))]
    shallow = {"family": "ffn", "score": 0.961, "train_score": 1.0, "best_epoch": 5, "stopped": "plateau",
               "epochs": epochs, "batch_size": 64}  # fmt: skip
    points = [{"examples": n, "score": s} for n, s in ((108, 0.886), (378, 0.944), (1079, 0.961))]
    curve = {"family": "ffn", "method": "power_law", "examples": 48_000, "estimate": 0.9643, "low": 0.9442,
             "high": 0.9866, "interval": 0.9, "points": points,
             "line": [{"examples": n, "score": s} for n, s in ((108, 0.887), (48_000, 0.9643))]}  # fmt: skip
    baseline = {"model": "logistic regression", "score": 0.967, "train_score": 0.998, "metric": "accuracy"}
    said = verdict(metric="accuracy", target=0.95, baseline=baseline, shallow=shallow, deep=None,
                   deep_note=None, expected=curve)  # fmt: skip
    said["time_to_target"] = {"role": "shallow", "reached": True, "epoch": 3, "updates": 51,
                              "full_size_examples": 48_000, "epochs_at_full_size": 1,
                              "seconds_per_epoch": 0.0651, "basis": "profiled",
                              "seconds_to_target": 0.0651}  # fmt: skip
    return ProbeJob.objects.create(
        owner=rec.owner, recommendation=rec, device=device, sample=sample, time_limit_seconds=60,
        status=ProbeJob.SUCCEEDED, progress=1.0, step="done", shallow_candidate=0,
        results={"baseline": baseline, "shallow": shallow, "curve": curve,
                 "split": {"train": 1079, "validation": 359, "test": 359}},
        verdict=said, finished_at=timezone.now(),
    )  # fmt: skip


def world(user: Any, device: Device) -> dict[str, Any]:
    """Every kind of page with content: recommendations of several families, a calibration and a probe with
    results, a kept sample. Returns the objects by name."""
    made: dict[str, Any] = {
        "digits": services.advise(owner=user, spec=spec("vision", [1, 8, 8], outputs=10, examples=1797)),
        "mnist": services.advise(owner=user, spec=spec("vision", [1, 28, 28], outputs=10)),
        "gan": services.advise(owner=user, spec=spec("generation", [1, 28, 28], generation="random")),
        "dbn": services.advise(
            owner=user, spec=spec("vision", [1, 28, 28], outputs=10, labelled_fraction=0.05)
        ),
        "tokens": services.advise(owner=user, spec=spec("sequence", [50], outputs=2, vocab_size=5000)),
    }
    made["sample"] = probes.create_sample(owner=user, upload=None, demo="digits", name="digits")
    made["calibration"] = tuned_job(made["mnist"], device)
    made["probe"] = probe(made["digits"], device, made["sample"])
    return made


def pages(made: dict[str, Any]) -> dict[str, str]:
    return {
        "wizard": "/",
        "recommendation": f"/recommendations/{made['mnist'].pk}/",
        "recommendation-gan": f"/recommendations/{made['gan'].pk}/",
        "calibration": f"/calibrations/{made['calibration'].pk}/",
        "probe-new": f"/recommendations/{made['mnist'].pk}/probe/",
        "probe": f"/probes/{made['probe'].pk}/",
        "rules": "/rules/",
        "samples": "/samples/",
        "history": "/history/",
        "history-calibrations": "/history/calibrations/",
        "history-probes": "/history/probes/",
        "compare": f"/compare/?kind=candidates&a={made['mnist'].pk}:0&b={made['mnist'].pk}:1",
        "compare-devices": f"/compare/?kind=devices&a={made['calibration'].pk}",
        "token": "/account/token/",
        "api-docs": "/api/v1/docs/",
        "api-redoc": "/api/v1/redoc/",
    }


def fits(page: Any, url: str, name: str, width: int) -> list[str]:
    """Load `url` at `width`, keep its screenshot, and say what does not fit."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(url)
    if "docs" in name or "redoc" in name:
        page.wait_for_selector("#swagger-ui .info, #redoc-container h1")
    found = page.evaluate(FIT_JS, width >= 1280)
    if width == 1280 and "api-" not in name:
        shoot(page, f"27-{name}-{width}")  # with the contrast check, once a page
    else:
        page.screenshot(path=str(SHOTS / f"27-{name}-{width}.png"), full_page=True)
    problems = (
        [f"{name} at {width}px scrolls sideways: {found['scroll']} px"] if found["scroll"] > width else []
    )
    problems += [f"{name} at {width}px cuts {e}" for e in found["cut"]]
    problems += [f"{name} at {width}px scrolls inside {e}" for e in found["scrolls"]]
    return problems


def test_no_page_scrolls_sideways_or_cuts_text_at_any_width(
    page: Any, user: Any, device: Device, samples_dir: Any
) -> None:
    shown = pages(world(user, device))
    problems = [p for width in WIDTHS for name, url in shown.items() for p in fits(page, url, name, width)]
    page.context.clear_cookies()
    problems += [p for width in WIDTHS for p in fits(page, "/accounts/login/", "login", width)]
    assert problems == []


def test_it_writes_units_words_references_and_memory_one_way(
    page: Any, user: Any, device: Device, samples_dir: Any
) -> None:
    made = world(user, device)
    page.goto("/samples/")  # item 2: decimal bytes, not filesizeformat's 67.4 KB
    assert nbytes(made["sample"].size_bytes) in page.inner_text(f"#sample-{made['sample'].pk}")
    assert "KB" not in page.inner_text("main")
    page.goto(f"/recommendations/{made['mnist'].pk}/probe/")
    assert "at most 20 MB" in page.inner_text("#sample-form")  # the setting's 20,000,000 bytes
    page.goto(f"/calibrations/{made['calibration'].pk}/")
    reasons = page.inner_text("#job-status ul.reasons")
    assert "a step took 85.3 ms instead of 99.7 ms" in reasons  # the allocator sentence in ms, as the table
    assert "1 thread 320 examples/s, 2 threads 642 examples/s" in reasons
    header = page.inner_text("#results thead")  # item 7: each memory figure says what it covers
    assert "Process growth, estimated" in header and "Process growth, measured" in header
    resident = engine.resident_for(made["mnist"].result["candidates"][0], batch_size=64)
    assert nbytes(resident) in page.inner_text("#results tbody")
    assert "resident memory grows" in page.inner_text("#memory-columns")
    shoot(page, "27-units-calibration")
    page.goto(f"/recommendations/{made['mnist'].pk}/")
    first = made["mnist"].result["candidates"][0]
    assert nbytes(first["resident_bytes"]) in page.inner_text("#resident")
    memory = first["memory_bytes"]
    if memory["gradients"] < memory["weights"]:  # item 7: why gradients are below the weights
        assert "falls inside the backward pass" in page.inner_text("#memory-notes")
    shoot(page, "27-memory-recommendation")
    page.goto(f"/recommendations/{made['gan'].pk}/")  # item 3: a GAN's own reasons
    why = page.inner_text("#candidate ul.reasons")
    generator = made["gan"].result["candidates"][0]["networks"]["generator"]
    transposed = sum(1 for layer in generator if layer["kind"] == "ConvTranspose2d")
    assert f"through {transposed} transposed convolutions" in why and transposed == 3
    assert "stopping early" not in why and "without early stopping" in why
    assert "early stopping" not in page.inner_text("#candidate dl.facts")
    assert page.locator("#probe").count() == 0  # a generation task has no accuracy to probe
    shoot(page, "27-words-gan")
    page.goto("/history/")  # item 3: family names expanded, feed-forward networks shallow or deep
    listed = page.inner_text("#list")
    assert "Deep belief network" in listed and re.search(r"\bdbn\b", listed) is None
    page.goto("/")
    assert "Deep belief network" in page.inner_text(".side")
    shoot(page, "27-words-history")
    page.goto("/rules/")  # item 4: every cited work listed
    for ref in REFERENCES:
        assert page.locator(f"#references li#{ref['anchor']}").count() == 1, ref["anchor"]
    for work in ("Keskar", "Masters", "Kingma, Jimmy Ba", "Prechelt", "Zaremba", "Osindero"):
        assert work in page.inner_text("#references"), work
    shoot(page, "27-references")


def test_the_wizard_shows_what_applies_and_says_why_it_stays(page: Any) -> None:
    page.set_viewport_size({"width": 1280, "height": 900})
    page.check("input[name=task][value=generation]")  # item 5: no goal for generation
    page.wait_for_selector(".field-goal", state="hidden")
    next_step(page, "data")
    assert page.is_hidden(".field-outputs") and page.is_visible(".field-vocab_size")
    next_step(page, "hardware")
    page.fill("#id_cpu_cores", "1")
    page.fill("#id_ram_gb", "8")
    next_step(page, "target")
    assert page.is_hidden(".field-accuracy") and page.is_visible(".field-time_budget_hours")
    page.wait_for_function("document.querySelector('#preview .big') !== null")
    summary = page.inner_text("#preview dl.summary")
    assert "accuracy" not in summary.lower() and "→" not in summary  # nothing sent for generation
    assert "CPU, 1 thread" in page.inner_text("#preview") and "1 threads" not in page.inner_text("#preview")
    shoot(page, "27-wizard-generation")
    page.click("button[name=go][value=task]")
    page.wait_for_selector("button[aria-current=step][value=task]")
    page.check("input[name=task][value=vision]")
    page.wait_for_selector(".field-goal", state="visible")
    next_step(page, "data")
    assert page.is_hidden(".field-vocab_size") and page.is_visible(".field-outputs")
    page.fill("#id_examples", "0")
    page.wait_for_selector("#warn-data:has-text('(check)')")
    submit(page, "button[name=go][value=hardware]")  # item 5: says why it stays, and where
    assert page.get_attribute("button[aria-current=step]", "value") == "data"
    assert "before going on to Hardware" in page.inner_text("#wizard-blocked")
    assert page.evaluate("document.activeElement.id") == "id_examples"
    shoot(page, "27-wizard-blocked")
    submit(page, "button[name=go][value=recommend]")  # item 5: answered with the errors, no 400 logged
    assert "Fix the marked fields before the recommendation" in page.inner_text("#wizard-blocked")
    assert page.evaluate("document.activeElement.id") == "id_examples"
    assert page.console_errors == [], page.console_errors
    page.fill("#id_examples", "60000")
    next_step(page, "target")
    page.wait_for_function("document.querySelector('#preview .big') !== null")
    alternatives = page.inner_text("#preview p.muted")  # item 3: a feed-forward network says which
    assert "Alternatives:" in alternatives and re.search(r"\bffn\b", alternatives) is None
    assert "feed-forward network" in alternatives and "hallow" in alternatives


def test_samples_and_probes_offer_what_fits_and_read_evenly(
    page: Any, user: Any, device: Device, samples_dir: Any
) -> None:
    made = world(user, device)
    digits, mnist, sample = made["digits"], made["mnist"], made["sample"]
    page.goto("/samples/")  # item 6: a probe per recommendation the sample fits, not the others
    card = f"#sample-{sample.pk}"
    offered = page.locator(f"{card} ul.offers a")
    assert offered.evaluate_all("links => links.map(a => a.getAttribute('href'))") == [
        f"/recommendations/{digits.pk}/probe/?sample={sample.pk}"
    ]
    page.click(f"{card} details summary")
    refused = page.inner_text(f"{card} details")
    assert f"#{mnist.pk}" in refused and "[1, 8, 8] (64 values)" in refused
    assert "[1, 28, 28] (784 values)" in refused
    shoot(page, "27-samples")
    page.click(f"{card} ul.offers a")
    assert page.input_value("#id_sample") == str(sample.pk)
    assert page.is_enabled("#probe-form button[type=submit]")
    page.goto(f"/recommendations/{mnist.pk}/probe/")  # the 8x8 sample is not offered for 28x28, and says so
    assert page.is_disabled(f"#id_sample option[value='{sample.pk}']")
    assert page.is_disabled("#probe-form button[type=submit]")
    assert "[1, 28, 28] (784 values)" in page.inner_text("#probe-why")
    shoot(page, "27-probe-refused")
    page.goto(f"/probes/{made['probe'].pk}/")
    assert page.locator("table.data#probe-results").count() == 1  # styled like the other tables
    lefts = page.locator("#verdict li").evaluate_all(
        "items => items.map(i => i.getBoundingClientRect().left)"
    )
    assert len(lefts) >= 3 and len(set(lefts)) == 1  # the notes and the reasons: one even list
    time_to_target = page.inner_text("#time-to-target")
    assert "65.1 ms to train" not in time_to_target
    assert "about 65.1 ms of training (1 epoch of 65.1 ms, the profiled time per epoch)" in time_to_target
    words = interval_words(made["probe"].results["curve"])
    assert words == f"0.964, 90% interval 0.944{DASH}0.987"
    assert words in page.inner_text("#verdict p.status") and words in page.inner_text("#expected")
    assert "±" not in page.inner_text("#verdict p.status")
    assert duration(60) in page.inner_text("main")  # the time limit as durations are written
    shoot(page, "27-probe")


def test_the_api_docs_fetch_nothing_from_outside(page: Any, live_server: Any) -> None:
    outside: list[str] = []
    local = (live_server.url, "data:", "blob:")
    page.on("request", lambda r: None if r.url.startswith(local) else outside.append(r.url))
    page.goto("/api/v1/redoc/")
    page.wait_for_selector("text=API docs by Redocly")  # item 8: its logo, from this server
    logo = page.locator("img[alt='redocly logo']")
    logo.wait_for()
    assert logo.get_attribute("src") == "/static/vendor/redoc-logo-mini.svg"
    assert logo.evaluate("img => img.complete && img.naturalWidth > 0")
    page.screenshot(path=str(SHOTS / "27-redoc.png"))
    page.goto("/api/v1/docs/")
    page.wait_for_selector("#swagger-ui .info")
    page.wait_for_load_state("networkidle")
    assert outside == []
