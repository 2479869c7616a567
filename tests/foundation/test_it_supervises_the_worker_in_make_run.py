"""`manage.py serve` (what `make run` starts): kill -9 of its worker restarts the worker after a back-off
while the web server keeps answering; the new worker records the restart on its device; Ctrl-C stops both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import psutil
import pytest

from advisor.models import Device
from tests.api.conftest import free_port
from tests.conftest import REPO, wait_for, worker_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _workers(serve: psutil.Process) -> list[psutil.Process]:
    return [p for p in serve.children() if "worker" in p.cmdline()]


def _web_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/accounts/login/", timeout=5) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def test_it_restarts_a_killed_worker_and_keeps_the_web_up(tmp_path: Path) -> None:
    host = f"pytest-serve-{uuid.uuid4().hex[:6]}"
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port)],
        cwd=REPO,
        env={**worker_env(), "ADVISOR_HOST": host},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    output = lambda: (tmp_path / "serve.log").read_text(errors="replace")  # noqa: E731
    try:
        parent = psutil.Process(serve.pid)
        wait_for(lambda: _web_answers(url), timeout=60, what="the web server")
        wait_for(lambda: Device.objects.filter(host=host).exists(), timeout=90, what="the worker's device")
        (first,) = _workers(parent)
        first.kill()  # SIGKILL, as the OOM killer would
        first.wait(timeout=10)
        assert _web_answers(url), output()
        second = wait_for(lambda: _workers(parent), timeout=30, what="a new worker")[0]
        assert second.pid != first.pid
        device = wait_for(
            lambda: Device.objects.filter(host=host, details__has_key="restart").first(),
            timeout=90,
            what="the restart recorded on the device",
        )
        assert device.details["restart"]["count"] == 1
        assert "SIGKILL" in device.details["restart"]["reason"]
        assert "restarting it in 1 s (restart 1)" in output()
        assert _web_answers(url) and serve.poll() is None
        children = [p.pid for p in parent.children(recursive=True)]
        os.killpg(serve.pid, signal.SIGINT)  # Ctrl-C in the terminal reaches the whole group
        assert serve.wait(timeout=30) == 0, output()
        wait_for(lambda: not any(psutil.pid_exists(pid) for pid in children), timeout=20, what="children")
        assert "stopped:" not in output()
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait(timeout=10)
