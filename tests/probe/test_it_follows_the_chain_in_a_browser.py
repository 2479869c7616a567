"""Headless Chromium against a live server: a probe that missed its target proposes its next step, the button
(htmx) starts it as the next probe, and the probe page, the history and the recommendation page show the
chain."""

from __future__ import annotations

import re
from typing import Any

import pytest

from advisor import services as core
from advisor.probe import services
from advisor.probe.models import ProbeJob
from tests.conftest import cpu_device
from tests.probe.conftest import DIGITS_SPEC
from tests.web.browser import shoot
from tests.web.conftest import page  # noqa: F401  (the logged-in tab)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_it_runs_the_next_step_and_shows_the_chain(page: Any, user: Any, samples_dir: Any) -> None:  # noqa: F811
    rec = core.advise(owner=user, spec=DIGITS_SPEC)
    sample = services.create_sample(owner=user, demo="digits", recommendation=rec)
    device = cpu_device("probe-chain")
    shallow = next(i for i, c in enumerate(rec.result["candidates"]) if c["depth"] == "shallow")
    step = {
        "diagnosis": "over-fitting",
        "text": "The CNN scores 1.00 on its training split but 0.93 held out: it over-fits.",
        "advice": "regularisation, a smaller network or more data",
        "from_candidate": 0,
        "candidate": shallow,
        "change": None,
        "reason": f"probe candidate {shallow + 1} next: fewer parameters than this one's",
    }
    first = ProbeJob.objects.create(
        owner=user,
        recommendation=rec,
        sample=sample,
        device=device,
        status=ProbeJob.SUCCEEDED,
        deep_candidate=0,
        time_limit_seconds=40,
        verdict={
            "text": "CNN scores 0.93, below the target 0.95",
            "met": False,
            "chosen": "deep",
            "next": step,
        },
    )
    page.goto(f"/probes/{first.pk}/")
    page.wait_for_selector("#next-step:has-text('over-fits')")
    shoot(page, "probe-next-step")
    page.click(f"#probe-next button:has-text('Probe candidate {shallow + 1} next')")
    page.wait_for_url(re.compile(r"/probes/(\d+)/$"))
    page.wait_for_selector("#probe-chain")
    second = ProbeJob.objects.get(previous=first)
    assert page.url.endswith(f"/probes/{second.pk}/")
    assert (second.sample_id, second.device_id, second.time_limit_seconds) == (sample.pk, device.pk, 40)
    assert page.locator(f"#probe-chain a[href='/probes/{first.pk}/']").count() == 1
    assert page.inner_text("#probe-chain [aria-current=page]") == f"#{second.pk}"
    page.goto("/history/probes/")
    row = page.locator(f"tr:has(a[href='/probes/{second.pk}/'])")
    assert f"next step of #{first.pk}" in row.inner_text()
    page.goto(f"/probes/{first.pk}/")
    assert page.locator("#probe-next").count() == 0  # the step runs already: no second button
    page.click(f"#next-step a[href='/probes/{second.pk}/']")
    page.wait_for_url(re.compile(rf"/probes/{second.pk}/$"))
    assert page.console_errors == []
