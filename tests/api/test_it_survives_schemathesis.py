"""Schemathesis against the project's own generated schema, on a live gunicorn server: no 5xx for anything a
client can send (valid and invalid requests, every operation). A bounded run: SCHEMATHESIS_EXAMPLES per
operation (default 20), well under two minutes here."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rest_framework.authtoken.models import Token

from tests.api.conftest import free_port
from tests.conftest import REPO, worker_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BIN = Path(sys.executable).parent


@pytest.fixture
def live_server_url(tmp_path: Path) -> Iterator[str]:
    """gunicorn, the production server, on the test database (committed rows are visible to it)."""
    port = free_port()
    log = (tmp_path / "gunicorn.log").open("wb")
    proc = subprocess.Popen(
        [str(BIN / "gunicorn"), "advisor.wsgi", "-b", f"127.0.0.1:{port}", "-w", "2", "--timeout", "60"],
        cwd=REPO,
        env=worker_env(),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/v1/schema/", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((tmp_path / "gunicorn.log").read_text()) from None
                time.sleep(0.2)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)


def test_it_answers_no_5xx_to_generated_requests(
    live_server_url: str, user: Any, rec: Any, device: Any
) -> None:
    token, _ = Token.objects.get_or_create(user=user)
    examples = os.environ.get("SCHEMATHESIS_EXAMPLES", "20")
    result = subprocess.run(
        [
            str(BIN / "st"),
            "run",
            f"{live_server_url}/api/v1/schema/",
            "--header",
            f"Authorization: Token {token.key}",
            "--checks",
            "not_a_server_error",
            "--data-generation-method",
            "all",
            "--hypothesis-max-examples",
            examples,
            "--hypothesis-deadline",
            "10000",
            "--hypothesis-database",
            "none",
            "--request-timeout",
            "20000",
            "--no-color",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "not_a_server_error" in result.stdout and "passed" in result.stdout
