"""Every HTML page gets garbage query strings (GET) and form posts built from its own field names plus
strangers, with Hypothesis: the answer is 2xx, 3xx or 4xx, never a 5xx. PAGE_FUZZ_EXAMPLES per page and method
(default 10)."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.models import CalibrationJob, Device
from advisor.probe.models import DataSample, ProbeJob
from tests.web.conftest import finished_job

pytestmark = pytest.mark.django_db
EXAMPLES = int(os.environ.get("PAGE_FUZZ_EXAMPLES", "10"))
PAGES = [
    "/",
    "/wizard/check/",
    "/recommendations/{rec}/",
    "/recommendations/{rec}/calibrate/",
    "/calibrations/{cal}/",
    "/calibrations/{queued}/cancel/",
    "/rules/",
    "/history/",
    "/history/calibrations/",
    "/compare/",
    "/account/token/",
    "/recommendations/{rec}/probe/",
    "/recommendations/{rec}/probe/samples/",
    "/probes/{probe}/",
    "/probes/{probe}/cancel/",
    "/samples/",
    "/samples/{sample}/delete/",
    "/accounts/login/",
]
VALUES = st.one_of(
    st.text(max_size=30),
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(["", "0", "-1", "1e999", "nan", "NaN", "inf", "true", "null", "[]", "{}", "%00", "../..",
                     "<script>", "'; drop table", "9" * 40, "1,2,,3", " 16 , 16 ", "x" * 5000]),
)  # fmt: skip
STRANGERS = [
    "step",
    "go",
    "example",
    "use_cpu",
    "use_device",
    "page",
    "kind",
    "a",
    "b",
    "sort",
    "format",
    "x",
]


@pytest.fixture
def objects(user: Any, rec: Any, device: Device) -> dict[str, int]:
    cal = finished_job(rec, device)
    queued = CalibrationJob.objects.create(owner=user, recommendation=rec, candidate=0, device=device,
                                           batch_sizes=[8], threads=[1], time_limit_seconds=60)  # fmt: skip
    sample = DataSample.objects.create(owner=user, name="mine", format="csv", path="no.npz", examples=10,
                                       input_shape=[16], label_kind="class", outputs=3)  # fmt: skip
    probe = ProbeJob.objects.create(
        owner=user, recommendation=rec, sample=sample, device=device, time_limit_seconds=60
    )
    return {"rec": rec.pk, "cal": cal.pk, "queued": queued.pk, "sample": sample.pk, "probe": probe.pk}


def field_names(client: Client, url: str) -> list[str]:
    page = client.get(url)
    html = page.content.decode(errors="replace") if page.status_code == 200 else ""
    return sorted(set(re.findall(r'name="([^"]+)"', html)) - {"csrfmiddlewaretoken"}) + STRANGERS


@pytest.mark.parametrize("method", ["get", "post"])
@pytest.mark.parametrize("page", PAGES)
def test_it_never_answers_5xx(client_for: Client, objects: dict[str, int], page: str, method: str) -> None:
    url = page.format(**objects)
    client_for.raise_request_exception = False
    names = field_names(client_for, url)
    answers: set[int] = set()

    @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.dictionaries(st.sampled_from(names), VALUES, max_size=len(names)), st.booleans())
    def run(fields: dict[str, str], htmx: bool) -> None:
        headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
        response = getattr(client_for, method)(url, fields, **headers)
        answers.add(response.status_code)
        assert response.status_code < 500, (url, method, fields, response.content[:3000])

    run()
    assert answers, url
