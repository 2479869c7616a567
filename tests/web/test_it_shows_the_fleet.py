"""The fleet page (staff): devices, heartbeat, torch, the running job and its owner, the queue in fair-share
order, recent failures, the profile's age; drain and undrain (POST, CSRF); the htmx fragment it polls; and,
in a real browser, the page, a drain, and a queued job's place on its own page (screenshots)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from advisor import services
from advisor.models import CalibrationJob, Device
from tests.conftest import TABULAR_SPEC
from tests.web.browser import shoot

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def staff(user: Any) -> Any:
    user.is_staff = True
    user.save()
    return user


@pytest.fixture
def busy(staff: Any, other_user: Any, device: Device) -> dict[str, Any]:
    """The device runs bob's job; ada has two queued, bob one more; one of ada's failed."""
    Device.objects.filter(pk=device.pk).update(
        details={"torch": "2.13.0+cpu"},
        profile={"profiled_at": (timezone.now() - timedelta(hours=3)).isoformat()},
    )
    mine = services.advise(owner=staff, spec=TABULAR_SPEC)
    theirs = services.advise(owner=other_user, spec=TABULAR_SPEC)

    def job(owner: Any, rec: Any, **fields: Any) -> CalibrationJob:
        return CalibrationJob.objects.create(
            owner=owner,
            recommendation=rec,
            device=device,
            time_limit_seconds=60,
            sent_at=timezone.now(),
            **fields,
        )

    running = job(
        other_user, theirs, status="running", started_at=timezone.now(), step="batch 16, 1 thread: timing"
    )
    queued = [job(staff, mine), job(staff, mine), job(other_user, theirs)]
    failed = job(
        staff,
        mine,
        status="failed",
        finished_at=timezone.now(),
        error="calibration process died with signal 9",
    )
    return {"running": running, "queued": queued, "failed": failed}


def test_it_shows_every_device_to_staff(staff: Any, busy: dict[str, Any], device: Device) -> None:
    client = Client()
    client.force_login(staff)
    response = client.get("/fleet/")
    html = response.content.decode()
    assert response.status_code == 200
    assert device.pk in html and "torch 2.13.0+cpu" in html and "3 h old" in html.replace("\u00a0", " ")
    assert f"calibration #{busy['running'].pk} of <strong>bob</strong>" in html
    # fair share: ada has not used the device, so her first; then bob's (his running job started before
    # ada's first will), then ada's second
    (row,) = response.context["rows"]
    a1, a2, b1 = busy["queued"]
    assert [q.job.pk for q in row.queue.queued] == [a1.pk, b1.pk, a2.pk]
    assert "signal 9" in html
    fragment = client.get("/fleet/", **HX).content.decode()
    assert fragment.lstrip().startswith('<div id="fleet"') and "<html" not in fragment


def test_it_is_for_staff_only(other_user: Any, busy: dict[str, Any], device: Device) -> None:
    client = Client()
    client.force_login(other_user)
    assert client.get("/fleet/").status_code == 403
    assert client.post(f"/fleet/{device.pk}/drain/", {"action": "drain"}).status_code == 403
    assert not Device.objects.get(pk=device.pk).draining


def test_drain_needs_a_post_with_the_csrf_token(staff: Any, device: Device) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    assert client.get(f"/fleet/{device.pk}/drain/").status_code == 405
    assert client.post(f"/fleet/{device.pk}/drain/", {"action": "drain"}).status_code == 403
    token = client.get("/fleet/").cookies["csrftoken"].value
    response = client.post(f"/fleet/{device.pk}/drain/", {"action": "drain", "csrfmiddlewaretoken": token})
    assert response.status_code == 302 and Device.objects.get(pk=device.pk).draining
    client.post(f"/fleet/{device.pk}/drain/", {"action": "undrain", "csrfmiddlewaretoken": token})
    assert not Device.objects.get(pk=device.pk).draining


@pytest.mark.slow
def test_in_a_browser_staff_drain_a_device_and_users_see_their_place(
    page: Any, live_server: Any, staff: Any, busy: dict[str, Any], device: Device
) -> None:
    page.goto("/fleet/")
    page.wait_for_selector(f"#device-{device.pk}")
    shoot(page, "fleet")
    page.click(f"#device-{device.pk} button[type=submit]")
    page.wait_for_selector(f"#drained-{device.pk}")
    assert Device.objects.get(pk=device.pk).draining
    shoot(page, "fleet-drained")
    a1 = busy["queued"][0]
    page.goto(f"/calibrations/{a1.pk}/")
    text = page.inner_text("#job-eta")
    assert re.search(r"1st in line on \S+ \(1 job ahead\); the device is drained", text), text
    page.click("a[href='/fleet/']")
    page.click(f"#device-{device.pk} button[type=submit]")  # undrain
    page.wait_for_selector(f"#drained-{device.pk}", state="detached")
    page.goto(f"/calibrations/{a1.pk}/")
    assert re.search(
        r"1st in line on \S+ \(1 job ahead\); expected to start in about", page.inner_text("#job-eta")
    )
    shoot(page, "calibration-queued")
