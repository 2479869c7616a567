"""`python manage.py serve`: the web server and one CPU worker in the foreground; Ctrl-C stops both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any, cast

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Run the web server (127.0.0.1:PORT) and a Celery worker for this machine's CPU."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--bind", default=os.environ.get("BIND", "127.0.0.1"))

    def handle(self, *args: Any, **options: Any) -> None:
        manage = [sys.executable, "manage.py"]
        address = f"{options['bind']}:{options['port']}"
        procs = [
            subprocess.Popen([*manage, "runserver", "--noreload", address]),
            subprocess.Popen([*manage, "worker", "--device", "cpu"]),
        ]
        self._welcome(address)

        def stop(*_: object) -> None:
            for proc in procs:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while all(p.poll() is None for p in procs):
                time.sleep(0.5)
        finally:
            stop()
            deadline = time.monotonic() + 15
            for proc in procs:
                try:
                    proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    proc.kill()
        failed = [
            str(cast(list[str], p.args)[2]) for p in procs if p.returncode not in (0, -signal.SIGTERM, None)
        ]
        if failed:
            self.stderr.write(f"stopped: {', '.join(failed)} exited with an error")

    def _welcome(self, address: str) -> None:
        users = get_user_model().objects.count()
        lines = [
            "",
            f"  The advisor is at http://{address}/   (API: http://{address}/api/v1/, docs: /api/v1/docs/)",
            "  Ctrl-C stops the web server and the worker.",
        ]
        if not users:
            lines.append("  No user yet. In another terminal:  .venv/bin/python manage.py createsuperuser")
        lines.append("  API token for a user:  .venv/bin/python manage.py drf_create_token <username>")
        lines.append("")
        self.stdout.write("\n".join(lines))
