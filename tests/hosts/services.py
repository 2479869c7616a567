"""Private PostgreSQL and Redis inside a test host (a network namespace), listening only on its address.

The machine's own servers serve other users on 127.0.0.1 and are never touched: these are new processes, a
cluster made by initdb in a temporary folder, gone when the context ends."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from tests.conftest import need, wait_for
from tests.hosts.netns import SUBNET_BITS, Host

PG_PORT = "5418"
REDIS_PORT = "6418"


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@contextmanager
def private_postgres(host: Host) -> Iterator[str]:
    """A PostgreSQL cluster owned by the postgres user, trust authentication, on host.address only."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    need(bool(found), "PostgreSQL's server is not installed (apt-get install postgresql)")
    need(shutil.which("runuser") is not None, "runuser (util-linux) is not installed")
    bindir = os.path.dirname(found[-1])
    root = tempfile.mkdtemp(prefix="advisor-pg-", dir="/tmp")
    os.chmod(root, 0o755)
    data = os.path.join(root, "data")
    try:
        shutil.chown(root, "postgres")
        as_pg = ["runuser", "-u", "postgres", "--"]
        subprocess.run(
            [*as_pg, f"{bindir}/initdb", "-D", data, "--auth=trust", "-U", "postgres"],
            check=True,
            capture_output=True,
        )
        with open(os.path.join(data, "pg_hba.conf"), "a") as hba:  # initdb's trusts only the loopback
            hba.write(f"host all all {host.address}/{SUBNET_BITS} trust\n")
        server = subprocess.Popen(
            host.command(
                *as_pg,
                f"{bindir}/postgres",
                "-D",
                data,
                "-p",
                PG_PORT,
                "-k",
                root,
                "-c",
                f"listen_addresses={host.address}",
                "-c",
                "fsync=off",
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            ready = [f"{bindir}/pg_isready", "-h", host.address, "-p", PG_PORT]
            wait_for(
                lambda: subprocess.run(host.command(*ready), capture_output=True).returncode == 0,
                timeout=60,
                interval=0.3,
                what="the private PostgreSQL started",
            )
            subprocess.run(
                host.command(
                    f"{bindir}/createdb", "-h", host.address, "-p", PG_PORT, "-U", "postgres", "advisor"
                ),
                check=True,
                capture_output=True,
            )
            yield f"postgres://postgres@{host.address}:{PG_PORT}/advisor"
        finally:
            _stop(server)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def private_redis(host: Host) -> Iterator[str]:
    need(
        shutil.which("redis-server") is not None,
        "redis-server is not installed (apt-get install redis-server)",
    )
    server = subprocess.Popen(
        host.command(
            "redis-server",
            *("--bind", host.address, "--port", REDIS_PORT, "--save", "", "--appendonly", "no"),
            *("--protected-mode", "no"),  # it listens only on the namespace's own address
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        ping = host.command("redis-cli", "-h", host.address, "-p", REDIS_PORT, "ping")
        wait_for(
            lambda: subprocess.run(ping, capture_output=True, text=True).stdout.strip() == "PONG",
            timeout=30,
            what="the private Redis started",
        )
        yield f"redis://{host.address}:{REDIS_PORT}/0"
    finally:
        _stop(server)
