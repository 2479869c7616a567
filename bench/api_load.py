"""`python -m bench api`: POST recommendations under concurrent load on gunicorn, the production server.

Starts gunicorn on a free loopback port with a fresh database (SQLite under a temporary ADVISOR_VAR_DIR, as
configured or switched to WAL; or a temporary PostgreSQL database, dropped afterwards), creates a user and a
token, then runs N closed-loop clients (each sends its next request when the previous answer arrived) for a
fixed time after a warm-up, and reports requests/s and latency percentiles. The target: p95 under 50 ms at 20
concurrent clients. Loopback only; nothing leaves the machine."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TARGET_P95_MS = 50.0

SPEC: dict[str, Any] = {
    "task": "tabular",
    "goal": "classify",
    "data": {"examples": 50000, "input_shape": [32], "outputs": 5},
    "hardware": {"cpu_cores": 4, "ram_gb": 16},
    "target": {"accuracy": 0.9},
}


@dataclass
class Load:
    latencies: list[float] = field(default_factory=list)  # seconds, of answered requests in the window
    statuses: dict[int, int] = field(default_factory=dict)
    errors: int = 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"manage.py {args[0]} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def _token(env: dict[str, str]) -> str:
    code = (
        "from django.contrib.auth import get_user_model; from rest_framework.authtoken.models import Token\n"
        "u, _ = get_user_model().objects.get_or_create(username='bench-api')\n"
        "print('TOKEN', Token.objects.get_or_create(user=u)[0].key)"
    )
    out = _manage(env, "shell", "-c", code)
    return next(line.split()[1] for line in out.splitlines() if line.startswith("TOKEN "))


def _start_gunicorn(env: dict[str, str], port: int, workers: int, threads: int) -> subprocess.Popen[bytes]:
    cmd = [str(BIN / "gunicorn"), "advisor.wsgi", "-b", f"127.0.0.1:{port}", "-w", str(workers)]
    if threads > 1:
        cmd += ["--threads", str(threads)]  # gthread workers: keep-alive connections
    cmd += ["--log-level", "warning", "--backlog", "256"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/schema/", timeout=2).read()
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("gunicorn exited during start-up") from None
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not answer within 60 s")


async def _one(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
) -> tuple[int, bool]:
    """Send one request on an open connection; returns (status, whether the server keeps it open)."""
    writer.write(request)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {
        k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
    }
    await reader.readexactly(int(headers.get("content-length", "0")))
    return status, headers.get("connection", "").lower() != "close"


async def _client(port: int, request: bytes, start: float, stop: float, load: Load) -> None:
    conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    while time.perf_counter() < stop:
        began = time.perf_counter()
        try:
            if conn is None:
                conn = await asyncio.open_connection("127.0.0.1", port)
            status, keep = await _one(*conn, request)
        except (OSError, asyncio.IncompleteReadError, ValueError):
            load.errors += 1
            conn = None
            continue
        if not keep:
            conn[1].close()
            conn = None
        if began >= start:  # the warm-up's requests are not counted
            load.latencies.append(time.perf_counter() - began)
            load.statuses[status] = load.statuses.get(status, 0) + 1
    if conn is not None:
        conn[1].close()


async def _run(port: int, token: str, clients: int, warmup: float, seconds: float) -> tuple[Load, float]:
    body = json.dumps(SPEC).encode()
    request = (
        f"POST /api/v1/recommendations/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Token {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    load = Load()
    start = time.perf_counter() + warmup
    stop = start + seconds
    await asyncio.gather(*(_client(port, request, start, stop, load) for _ in range(clients)))
    return load, seconds


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def report(
    load: Load, seconds: float, clients: int, workers: int, threads: int, database: str
) -> dict[str, Any]:
    ms = [x * 1000 for x in load.latencies]
    figures: dict[str, Any] = {
        "clients": clients,
        "gunicorn_workers": workers,
        "threads_per_worker": threads,
        "database": database,
        "cpu_count": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
        "seconds": seconds,
        "requests": len(ms),
        "requests_per_second": len(ms) / seconds,
        "statuses": {str(k): v for k, v in sorted(load.statuses.items())},
        "connection_errors": load.errors,
        "latency_ms": {
            "p50": statistics.median(ms) if ms else None,
            "p95": _percentile(ms, 95) if ms else None,
            "p99": _percentile(ms, 99) if ms else None,
            "max": max(ms) if ms else None,
        },
        "target_p95_ms": TARGET_P95_MS,
    }
    figures["meets_target"] = bool(ms) and figures["latency_ms"]["p95"] < TARGET_P95_MS
    return figures


@contextmanager
def _database(args: argparse.Namespace, var: Path) -> Iterator[str]:
    """The DATABASE_URL of a fresh, empty database; a PostgreSQL one is created here and dropped after."""
    if args.database != "postgres":
        yield f"sqlite:///{var / 'bench.sqlite3'}"
        return
    import psycopg

    name = f"advisor_bench_{os.getpid()}"
    admin = args.postgres_url.replace("postgres://", "postgresql://", 1)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield args.postgres_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench api", description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20, help="concurrent closed-loop clients (20)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window (10)")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured warm-up (2)")
    parser.add_argument("--workers", type=int, default=(os.cpu_count() or 1) + 1, help="gunicorn workers")
    parser.add_argument("--threads", type=int, default=1, help="threads per worker (>1: gthread, keep-alive)")
    parser.add_argument(
        "--database",
        choices=["sqlite", "sqlite-wal", "postgres"],
        default="sqlite",
        help="sqlite: the embedded default as configured; sqlite-wal: the same file in WAL mode; postgres: a "
        "temporary database on --postgres-url",
    )
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-api-") as var, _database(args, Path(var)) as url:
        env = {**os.environ, "ADVISOR_VAR_DIR": var, "PYTHONUNBUFFERED": "1", "LOG_LEVEL": "WARNING"}
        env["DATABASE_URL"] = url
        _manage(env, "migrate", "--no-input")
        if args.database == "sqlite-wal":
            import sqlite3

            with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
                db.execute("PRAGMA journal_mode=WAL")  # persistent: every later connection uses it
        token = _token(env)
        port = _free_port()
        server = _start_gunicorn(env, port, args.workers, args.threads)
        try:
            load, seconds = asyncio.run(_run(port, token, args.clients, args.warmup, args.seconds))
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    database = {
        "sqlite": "SQLite, as configured",
        "sqlite-wal": "SQLite in WAL mode",
        "postgres": "PostgreSQL",
    }[args.database]
    figures = report(load, seconds, args.clients, args.workers, args.threads, database)
    lat = figures["latency_ms"]
    print(
        f"POST /api/v1/recommendations/ on gunicorn ({args.workers} workers x {args.threads} thread(s), "
        f"{database}), {args.clients} clients, {seconds:g} s on {figures['cpu_count']} CPUs "
        f"(load average {figures['load_average_1min']:.1f})"
    )
    if not load.latencies:
        print("no request answered")
        return 1
    print(
        f"  {figures['requests']} requests, {figures['requests_per_second']:.0f} requests/s, statuses "
        f"{figures['statuses']}, connection errors {figures['connection_errors']}"
    )
    print(
        f"  latency ms: p50 {lat['p50']:.1f}  p95 {lat['p95']:.1f}  p99 {lat['p99']:.1f}  "
        f"max {lat['max']:.1f}  -> p95 target {TARGET_P95_MS:g} ms "
        f"{'met' if figures['meets_target'] else 'NOT met'}"
    )
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2))
    return 0 if set(figures["statuses"]) == {"201"} else 1
