"""Schemathesis against the project's own generated schema, on a live gunicorn server: no 5xx for anything a
client can send (valid and invalid requests, every operation). A bounded run: SCHEMATHESIS_EXAMPLES per
operation (default 20), well under two minutes here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rest_framework.authtoken.models import Token

from tests.conftest import REPO

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BIN = Path(sys.executable).parent


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
