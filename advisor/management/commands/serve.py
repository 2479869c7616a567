"""`python manage.py serve`: the web server and one CPU worker in the foreground; Ctrl-C stops both.

The worker is supervised: if it dies (killed, out of memory, a crash) it is started again after a back-off
(1 s, doubling to 60 s, back to 1 s once a worker has lived a minute) while the web server stays up. The new
worker records the restart on its device (`details.restart`), which the pages and /api/v1/devices/ show; the
job it was running is re-queued or failed with a reason by the usual orphan reaping."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from advisor.workers import RESTART_ENV

BACKOFF_FIRST, BACKOFF_MAX, HEALTHY_AFTER = 1.0, 60.0, 60.0


def exit_reason(returncode: int) -> str:
    if returncode < 0:
        name = signal.Signals(-returncode).name
        why = " (the out-of-memory killer sends it too)" if name == "SIGKILL" else ""
        return f"killed by {name}{why}"
    return f"exited with status {returncode}"


class Supervisor:
    """Keeps one worker process running: restarts it with back-off until stopped."""

    def __init__(self, command: list[str], *, write: Any, sleep: Any = time.sleep) -> None:
        self.command, self.write, self.sleep = command, write, sleep
        self.restarts, self.backoff, self.stopping = 0, BACKOFF_FIRST, False
        self.proc = self._start(None)

    def _start(self, note: dict[str, Any] | None) -> subprocess.Popen[bytes]:
        env = dict(os.environ)
        if note is not None:
            env[RESTART_ENV] = json.dumps(note)
        self.started = time.monotonic()
        return subprocess.Popen(self.command, env=env)

    def check(self) -> None:
        """Called every half second: restart the worker if it died."""
        code = self.proc.poll()
        if code is None or self.stopping:
            return
        if time.monotonic() - self.started >= HEALTHY_AFTER:
            self.backoff = BACKOFF_FIRST
        reason = exit_reason(code)
        self.restarts += 1
        self.write(f"worker {reason}; restarting it in {self.backoff:g} s (restart {self.restarts})")
        self.sleep(self.backoff)
        if self.stopping:
            return
        self.backoff = min(BACKOFF_MAX, self.backoff * 2)
        note = {"count": self.restarts, "reason": reason, "at": timezone.now().isoformat()}
        self.proc = self._start(note)


class Command(BaseCommand):
    help = "Run the web server (127.0.0.1:PORT) and a supervised Celery worker for this machine's CPU."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--bind", default=os.environ.get("BIND", "127.0.0.1"))

    def handle(self, *args: Any, **options: Any) -> None:
        manage = [sys.executable, "manage.py"]
        address = f"{options['bind']}:{options['port']}"
        web = subprocess.Popen([*manage, "runserver", "--noreload", address])
        worker = Supervisor([*manage, "worker", "--device", "cpu"], write=self.stderr.write)
        self._welcome(address)

        def stop(*_: object) -> None:
            worker.stopping = True
            for proc in (web, worker.proc):
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while web.poll() is None and not worker.stopping:
                worker.check()
                time.sleep(0.5)
        finally:
            stop()
            deadline = time.monotonic() + 15
            for proc in (web, worker.proc):
                try:
                    proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    proc.kill()
        if web.returncode not in (0, -signal.SIGTERM, None):
            self.stderr.write(f"stopped: the web server {exit_reason(web.returncode)}")

    def _welcome(self, address: str) -> None:
        users = get_user_model().objects.count()
        lines = [
            "",
            f"  The advisor is at http://{address}/   (API: http://{address}/api/v1/, docs: /api/v1/docs/)",
            "  Ctrl-C stops the web server and the worker; a worker that dies is restarted.",
        ]
        if not users:
            lines.append("  No user yet. In another terminal:  .venv/bin/python manage.py createsuperuser")
        lines.append("  API token for a user:  .venv/bin/python manage.py drf_create_token <username>")
        lines.append("")
        self.stdout.write("\n".join(lines))
