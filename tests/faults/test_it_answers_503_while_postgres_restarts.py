"""PostgreSQL restarted under a running web server: a PRIVATE cluster (initdb into a temporary folder, its own
port; the shared server is never touched) behind a real gunicorn. While the database is down every request
that needs it is a 503 with the reason (JSON under /api/, HTML elsewhere); once it is back the same gunicorn
answers again, without a restart."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.conftest import free_port
from tests.conftest import REPO, need, wait_for

pytestmark = pytest.mark.slow
BINS = sorted(Path("/usr/lib/postgresql").glob("*/bin"))


class PrivatePostgres:
    """A throw-away cluster run as the `postgres` user (PostgreSQL refuses to run as root)."""

    def __init__(self) -> None:
        self.bin = BINS[-1]
        self.dir = Path(tempfile.mkdtemp(prefix="advisor-pg-", dir="/tmp"))
        self.dir.chmod(0o755)
        shutil.chown(self.dir, "postgres", "postgres")
        self.data, self.port = self.dir / "data", free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def _as_postgres(self, *args: str) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *args], check=True, capture_output=True, timeout=120
        )

    def init(self) -> None:
        self._as_postgres(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                          "--no-sync")  # fmt: skip

    def start(self) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._as_postgres(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l",
                          str(self.dir / "log"), "-w", "start")  # fmt: skip

    def stop(self) -> None:
        self._as_postgres(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")


@pytest.fixture
def postgres() -> Iterator[PrivatePostgres]:
    need(bool(BINS) and shutil.which("runuser") is not None, "PostgreSQL's binaries are not installed")
    need(os.geteuid() == 0, "running a private PostgreSQL as its own user needs root")
    server = PrivatePostgres()
    server.init()
    server.start()
    try:
        yield server
    finally:
        subprocess.run(["runuser", "-u", "postgres", "--", str(server.bin / "pg_ctl"), "-D", str(server.data),
                        "-m", "immediate", "stop"], capture_output=True)  # fmt: skip
        shutil.rmtree(server.dir, ignore_errors=True)


def _get(url: str, headers: dict[str, str]) -> tuple[int, str, str]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, answer.headers.get("Content-Type", ""), answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode()
    except OSError as error:  # not listening yet
        return 0, "", str(error)


def test_it_answers_503_meanwhile_and_recovers_without_a_restart(
    postgres: PrivatePostgres, tmp_path: Path
) -> None:
    env = {**os.environ, "DATABASE_URL": postgres.url, "ADVISOR_VAR_DIR": str(tmp_path / "var")}
    env.pop("CELERY_BROKER_URL", None)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--no-input"], cwd=REPO, env=env, check=True, capture_output=True)
    make_token = (
        "from django.contrib.auth.models import User; from rest_framework.authtoken.models import Token;"
        "u = User.objects.create_user('ada', password='x' * 12); print(Token.objects.create(user=u).key)"
    )
    shell = subprocess.run(
        [*manage, "shell", "-c", make_token], cwd=REPO, env=env, check=True, capture_output=True
    )
    api = {"Authorization": f"Token {shell.stdout.decode().split()[-1]}"}
    page = {"Cookie": "sessionid=" + "a" * 32}  # a well-formed session key: looking it up needs the database
    port = free_port()
    log = (tmp_path / "gunicorn.log").open("wb")
    gunicorn = [
        str(Path(sys.executable).parent / "gunicorn"),
        "advisor.wsgi",
        "-b",
        f"127.0.0.1:{port}",
        "-w",
        "1",
    ]
    web = subprocess.Popen(
        gunicorn, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _get(f"{base}/api/v1/recommendations/", api)[0] == 200, timeout=60, what="gunicorn")

        postgres.stop()
        status, kind, body = _get(f"{base}/api/v1/recommendations/", api)
        assert status == 503 and kind == "application/json", body
        assert "database is unavailable" in json.loads(body)["detail"]
        status, kind, body = _get(f"{base}/", page)
        assert status == 503 and kind.startswith("text/html") and "database is unavailable" in body.lower()

        postgres.start()
        wait_for(lambda: _get(f"{base}/api/v1/recommendations/", api)[0] == 200, timeout=30, what="recovery")
        status, _, body = _get(f"{base}/", page)  # redirected to log in: the session is unknown, not an error
        assert status == 200 and 'name="password"' in body
        assert web.poll() is None, "the same gunicorn answers"
    finally:
        os.killpg(web.pid, signal.SIGTERM)
        web.wait(timeout=20)
