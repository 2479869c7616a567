"""Shared fixtures: users and API clients, and a real Celery worker process for integration tests."""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import psutil
import pytest
from django.conf import settings
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

REPO = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
# profiles a quarter as long, in this process and every worker and child it starts: the tests check what a
# profile holds and how it is used, never how well it predicts (bench does: at full length)
os.environ.setdefault("ADVISOR_PROFILE_SCALE", "0.25")

TABULAR_SPEC: dict[str, Any] = {
    "task": "tabular",
    "goal": "classify",
    "data": {"examples": 2000, "input_shape": [16], "outputs": 3},
    "hardware": {"cpu_cores": 2, "ram_gb": 8},
    "target": {"accuracy": 0.9},
}


def need(condition: bool, reason: str) -> None:
    """Skip when something a test needs is missing, except in CI, where a missing service is a failure."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"CI=true and {reason}")
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    """Fixtures create users; the default PBKDF2 costs about a second per user on this machine, which would be
    most of many tests' time. What is under test never depends on the hasher."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def tabular_spec() -> dict[str, Any]:
    import copy

    return copy.deepcopy(TABULAR_SPEC)


@pytest.fixture
def user(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="ada", password="correct-horse-battery")


@pytest.fixture
def other_user(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="bob", password="correct-horse-battery")


@pytest.fixture
def client_for(user: Any) -> Client:
    """A page client signed in as `user`: the pages' tests and the probe's."""
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def api(user: Any) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def worker_env() -> dict[str, str]:
    """The environment a worker process needs to share this test run's database and broker."""
    db = settings.DATABASES["default"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "WORKER_HEARTBEAT_SECONDS": "0.5"}
    env["WORKER_PROFILE_DEVICES"] = "0"  # 25 s per start; tests/calibration/test_profile.py profiles
    env["ADVISOR_VAR_DIR"] = str(settings.VAR_DIR)
    env["CELERY_BROKER_URL"] = settings.CELERY_BROKER_URL
    if db["ENGINE"].endswith("sqlite3"):
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    else:
        env["DATABASE_URL"] = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    return env


def spawn(argv: list[str], log: IO[bytes], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A server process of this repository on the test run's database and broker (`env` over it), its output
    in `log`, in a session of its own so that os.killpg stops it with its children."""
    return subprocess.Popen(
        argv,
        cwd=REPO,
        env={**worker_env(), **(env or {})},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


class WorkerProcess:
    """A real `manage.py worker` process on a host name of its own, so its queue is this test's alone."""

    def __init__(self, log_dir: Path, env: dict[str, str] | None = None) -> None:
        self.env = env or {}  # over worker_env()
        self.host = f"pytest-{uuid.uuid4().hex[:8]}"
        self.device_id = f"{self.host}-cpu0"
        self.log_path = log_dir / f"worker-{self.host}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> None:
        from advisor.models import Device

        argv = [sys.executable, "manage.py", "worker", "--device", "cpu", "--host", self.host]
        self.proc = spawn([*argv, "--loglevel", "INFO"], self.log_path.open("ab"), self.env)
        polls = max(1, math.ceil(timeout / 0.2))  # a readiness poll, as wait_for: a count of looks
        for _ in range(polls):
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited with {self.proc.returncode}:\n{self.log()}")
            if "ready." in self.log() and Device.objects.filter(id=self.device_id).exists():
                return
            time.sleep(0.2)
        raise RuntimeError(f"worker not ready after {polls} looks 0.2 s apart:\n{self.log()}")

    def kill(self) -> list[int]:
        """SIGKILL the worker process alone, as the OOM killer would; returns the pids of the children it
        had (the measuring child among them), which must not outlive it."""
        assert self.proc is not None and self.proc.poll() is None
        children = [c.pid for c in psutil.Process(self.proc.pid).children(recursive=True)]
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        return children

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


@pytest.fixture
def worker(transactional_db: None, tmp_path: Path) -> Iterator[WorkerProcess]:
    proc = WorkerProcess(tmp_path)
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


def wait_for(predicate: Any, *, timeout: float, interval: float = 0.2, what: str = "condition") -> Any:
    """A readiness poll: `predicate`'s first true value, looked at timeout / interval times, `interval`
    seconds apart. It fails only if the thing never happens; a count, not the clock, says when to give up,
    so a busy machine (where each look itself takes longer) gets as many looks as a quiet one."""
    polls = max(1, math.ceil(timeout / interval))
    for _ in range(polls):
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"{what}: still not after {polls} looks {interval} s apart")


def advise_command(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`manage.py advise ARGS` in-process: its exit code, stdout and stderr."""
    from django.core.management import call_command

    try:
        call_command("advise", *args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def cpu_device(host: str, **fields: Any) -> Any:
    """An online CPU row of `host` with no worker behind it (jobs submitted in a rolled-back test are never
    sent); `fields` add to or override its 2-core test CPU."""
    from advisor.models import Device

    ident = f"{host}-cpu0"
    defaults = {"name": "Test CPU", "cores": 2, "threads": 2}
    return Device.objects.create(
        id=ident, host=host, kind="cpu", queue=f"device.{ident}", **{**defaults, **fields}
    )


def submit_to_worker(worker: WorkerProcess, user: Any, spec: dict[str, Any], **fields: Any) -> Any:
    """Candidate 0 of `spec`, advised for `user` and submitted (one thread unless `fields` say) to the
    worker's device; the CalibrationJob, not yet waited for."""
    from advisor import services
    from advisor.models import Device

    rec = services.advise(owner=user, spec=spec)
    job, _ = services.submit_calibration(
        owner=user,
        recommendation=rec,
        candidate=0,
        device=Device.objects.get(id=worker.device_id),
        **{"threads": [1], **fields},
    )
    return job


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    need(path is not None, "chromium is not installed (make test installs it with apt-get)")
    return str(path)
