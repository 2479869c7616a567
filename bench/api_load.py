"""`python -m bench api`: POST recommendations under concurrent load on gunicorn, the production server.

Starts gunicorn on a free loopback port with a fresh database (SQLite under a temporary ADVISOR_VAR_DIR, as
configured or switched to WAL; or a temporary PostgreSQL database, dropped afterwards), creates a user and a
token, then runs N closed-loop clients (each sends its next request when the previous answer arrived) for a
fixed time after a warm-up, and reports requests/s and latency percentiles. The target: p95 under 50 ms at 20
concurrent clients. Loopback only; nothing leaves the machine."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import psutil

from bench import api_clients
from bench.api_clients import Trial

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TARGET_P95_MS = 50.0

# --database: the embedded default, the same file in WAL mode, or a temporary PostgreSQL database
DATABASES = {
    "sqlite": "SQLite, as configured",
    "sqlite-wal": "SQLite in WAL mode",
    "postgres": "PostgreSQL (a temporary database on --postgres-url)",
}
SPEC: dict[str, Any] = {
    "task": "tabular",
    "goal": "classify",
    "data": {"examples": 50000, "input_shape": [32], "outputs": 5},
    "hardware": {"cpu_cores": 4, "ram_gb": 16},
    "target": {"accuracy": 0.9},
}


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


def _server_cpu_seconds(server: subprocess.Popen[bytes]) -> float:
    """User + system CPU of gunicorn's master and workers so far."""
    master = psutil.Process(server.pid)
    total = 0.0
    for proc in [master, *master.children(recursive=True)]:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def _idle_seconds() -> float:
    times = psutil.cpu_times()
    return float(times.idle + getattr(times, "iowait", 0.0))


def measure(
    server: subprocess.Popen[bytes],
    client: str,
    port: int,
    token: str,
    args: argparse.Namespace,
    warmup: float,
) -> tuple[Trial, dict[str, float]]:
    """One trial, with what the machine did meanwhile: the server's CPU per request and the idle share."""
    cpu0, idle0, wall0 = _server_cpu_seconds(server), _idle_seconds(), time.monotonic()
    run = api_clients.run_wrk if client == "wrk" else api_clients.run_python
    trial = run(port, token, SPEC, args.clients, warmup, args.seconds)
    cpu, idle, wall = _server_cpu_seconds(server) - cpu0, _idle_seconds() - idle0, time.monotonic() - wall0
    machine = {
        # Includes the warm-up's requests' CPU but not their count: slightly high on the first trial only.
        "server_cpu_ms_per_request": cpu / trial.requests * 1000 if trial.requests else float("nan"),
        "idle_percent": 100 * idle / (wall * (os.cpu_count() or 1)),
    }
    return trial, machine


def report(
    trials: list[tuple[Trial, dict[str, float]]], args: argparse.Namespace, client: str, database: str
) -> dict[str, Any]:
    """The figures: every trial, and the median trial (by p95), which decides the target."""
    rows = [
        {**asdict(trial), "requests_per_second": trial.requests_per_second, **machine}
        for trial, machine in trials
    ]
    answered = sorted((r for r in rows if r["latency_ms"]), key=lambda r: float(r["latency_ms"]["p95"]))
    middle = answered[(len(answered) - 1) // 2] if answered else None
    return {
        "clients": args.clients,
        "client": client,
        "gunicorn_workers": args.workers,
        "threads_per_worker": args.threads,
        "database": database,
        "cpu_count": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
        "trials": rows,
        "median_trial": middle,
        "target_p95_ms": TARGET_P95_MS,
        "meets_target": middle is not None and middle["latency_ms"]["p95"] < TARGET_P95_MS,
    }


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
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window of each trial (10)")
    parser.add_argument("--trials", type=int, default=3, help="measured windows, one after another (3)")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured warm-up before the first (2)")
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="gunicorn sync workers (one per core: a request is CPU-bound; more only add switching)",
    )
    parser.add_argument("--threads", type=int, default=1, help="threads per worker (>1: gthread, keep-alive)")
    parser.add_argument(
        "--client",
        choices=["auto", "wrk", "python"],
        default="auto",
        help="load generator: wrk (Debian's package; auto when installed) or the asyncio client",
    )
    parser.add_argument(
        "--database",
        choices=list(DATABASES),
        default="sqlite",
        help="; ".join(f"{name}: {words}" for name, words in DATABASES.items()),
    )
    parser.add_argument("--postgres-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    client = args.client if args.client != "auto" else ("wrk" if api_clients.wrk_path() else "python")
    if client == "wrk" and not api_clients.wrk_path():
        parser.error("wrk is not installed (apt-get install wrk), or use --client python")
    if client == "python":
        print(
            "note: the asyncio client takes about 1 ms of CPU per request from the server's two cores "
            "(wrk: 0.1 ms)"
        )

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
            trials = [
                measure(server, client, port, token, args, args.warmup if i == 0 else 0.0)
                for i in range(args.trials)
            ]
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    database = DATABASES[args.database].split(" (")[0]
    figures = report(trials, args, client, database)
    print(
        f"POST {api_clients.PATH} on gunicorn ({args.workers} workers x {args.threads} thread(s), "
        f"{database}), {args.clients} clients ({client}), {args.trials} x {args.seconds:g} s on "
        f"{figures['cpu_count']} CPUs "
        f"(load average {figures['load_average_1min']:.1f})"
    )
    for i, row in enumerate(figures["trials"], 1):
        lat = row["latency_ms"]
        shown = (
            f"p50 {lat['p50']:.1f}  p95 {lat['p95']:.1f}  p99 {lat['p99']:.1f}  max {lat['max']:.1f}"
            if lat
            else "-"
        )
        print(
            f"  trial {i}: {row['requests']} requests, {row['requests_per_second']:.0f}/s, statuses "
            f"{row['statuses']}, connection errors {row['connection_errors']}; latency ms {shown}; server "
            f"{row['server_cpu_ms_per_request']:.2f} ms CPU/request, machine idle {row['idle_percent']:.0f}%"
        )
    if figures["median_trial"] is None:
        print("no request answered")
        return 1
    p95 = figures["median_trial"]["latency_ms"]["p95"]
    verdict = "met" if figures["meets_target"] else "NOT met"
    print(f"  median trial p95 {p95:.1f} ms -> target {TARGET_P95_MS:g} ms {verdict}")
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2))
    statuses = {status for row in figures["trials"] for status in row["statuses"]}
    return 0 if statuses == {"201"} else 1
