"""The README's API example, extracted and run as written against a live gunicorn and a real worker."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Any

import pytest
from rest_framework.authtoken.models import Token

from advisor.models import CalibrationJob
from tests.conftest import REPO, WorkerProcess

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _readme_example() -> str:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Using the API from a script", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the README's API section has no python example"
    return match.group(1)


def test_it_runs_the_readme_example(live_server_url: str, worker: WorkerProcess, user: Any) -> None:
    token, _ = Token.objects.get_or_create(user=user)
    env = {**os.environ, "ADVISOR_URL": live_server_url, "ADVISOR_TOKEN": token.key}
    result = subprocess.run(
        [sys.executable, "-c", _readme_example()], env=env, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:] + worker.log()[-3000:]
    job = CalibrationJob.objects.get(owner=user)
    assert job.status == "succeeded" and job.device_id == worker.device_id
    if job.estimate is None:  # the machine was busy: every configuration unreliable, and the script says why
        assert f"no measured time: {job.summary['withheld']}" in result.stdout
        return
    reported = float(result.stdout.rsplit("measured time to train:", 1)[1].split()[0])
    assert reported == pytest.approx(job.estimate["seconds_to_train"], abs=0.05)
