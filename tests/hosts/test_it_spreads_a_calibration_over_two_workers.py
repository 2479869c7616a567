"""One calibration spread over the workers of two hosts: network namespaces joined by a veth pair, host a
with a private PostgreSQL and Redis on its veth address, a worker in each host reaching them over the veth,
one rank on each worker meeting at the TCPStore rank 0's worker publishes."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.conftest import REPO
from tests.hosts.netns import Host, two_hosts
from tests.hosts.services import private_postgres, private_redis
from tests.processes import spawned_children

pytestmark = pytest.mark.slow


class Fleet:
    def __init__(self, a: Host, b: Host, database: str, broker: str, logs: Path) -> None:
        self.a, self.b, self.logs = a, b, logs
        self.env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "PYTHONUNBUFFERED": "1",
            "DJANGO_SETTINGS_MODULE": "advisor.settings",
            "DATABASE_URL": database,
            "CELERY_BROKER_URL": broker,
            "WORKER_HEARTBEAT_SECONDS": "0.5",
            # ranks time steps, not the cost model: profiling each host's device (two at once on a 2-core
            # machine) would only delay the workers' readiness
            "WORKER_PROFILE_DEVICES": "0",
        }
        self.workers: dict[str, subprocess.Popen[bytes]] = {}

    def host_env(self, host: Host) -> dict[str, str]:
        return {**self.env, "DISTRIBUTED_ADDRESS": host.address, "GLOO_SOCKET_IFNAME": host.ifname}

    def start_worker(self, host: Host, name: str) -> None:
        log = (self.logs / f"worker-{name}.log").open("ab")
        self.workers[name] = subprocess.Popen(
            host.command(sys.executable, "manage.py", "worker", "--device", "cpu", "--host", name),
            cwd=REPO,
            env=self.host_env(host),
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    def log(self) -> str:
        return "\n".join(
            p.read_text(errors="replace")[-3000:] for p in sorted(self.logs.glob("worker-*.log"))
        )

    def drive(self, mode: str) -> tuple[subprocess.Popen[str], queue.Queue[dict[str, Any]]]:
        proc = subprocess.Popen(
            self.a.command(sys.executable, "tests/hosts/spread_driver.py", mode),
            cwd=REPO,
            env=self.host_env(self.a),
            stdout=subprocess.PIPE,
            text=True,
        )
        events: queue.Queue[dict[str, Any]] = queue.Queue()

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                events.put(json.loads(line))

        threading.Thread(target=read, daemon=True).start()
        return proc, events


def _until(events: queue.Queue[dict[str, Any]], kind: str, timeout: float, fleet: Fleet) -> dict[str, Any]:
    seen: list[dict[str, Any]] = []
    end = time.monotonic() + timeout  # a readiness wait: fails only if the event never comes
    while True:
        try:
            event = events.get(timeout=max(0.1, end - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"no {kind!r} within {timeout} s after {seen}\n{fleet.log()}") from None
        if event["type"] == kind:
            return event
        seen.append(event)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    """One fleet for the module's tests (each drives its own calibration and user); the test that kills host
    b's worker runs last."""
    tmp_path = tmp_path_factory.mktemp("fleet")
    with ExitStack() as stack:
        a, b = stack.enter_context(two_hosts())
        database = stack.enter_context(private_postgres(a))
        broker = stack.enter_context(private_redis(a))
        made = Fleet(a, b, database, broker, tmp_path)
        subprocess.run(
            a.command(sys.executable, "manage.py", "migrate", "--no-input"),
            cwd=REPO,
            env=made.host_env(a),
            check=True,
            capture_output=True,
        )
        made.start_worker(a, "hosta")
        made.start_worker(b, "hostb")
        try:
            yield made
        finally:
            for proc in made.workers.values():
                if proc.poll() is None:
                    proc.terminate()
            for proc in made.workers.values():
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()


def _ranks(proc: subprocess.Popen[bytes]) -> list[psutil.Process]:
    return spawned_children(psutil.Process(proc.pid))


def test_it_trains_one_rank_on_each_hosts_worker(fleet: Fleet) -> None:
    driver, events = fleet.drive("quick")  # submitted through the API, as a client would
    submitted = _until(events, "submitted", 200, fleet)
    assert [(s["rank"], s["world"], s["jobs"]) for s in submitted["spread"]] == [
        (0, 2, submitted["jobs"]),
        (1, 2, submitted["jobs"]),
    ]
    assert submitted["spread"][0]["devices"] == ["hosta-cpu0", "hostb-cpu0"]
    done = _until(events, "done", 400, fleet)
    (first, second) = done["jobs"]

    assert (first["status"], second["status"]) == ("succeeded", "succeeded"), (done, fleet.log())
    assert first["summary"]["store"].startswith(fleet.a.address + ":")
    assert second["summary"]["store"] == first["summary"]["store"]
    for job in (first, second):
        (row,) = job["summary"]["data_parallel"]
        assert row["world_size"] == 2 and row["backend"] == "gloo" and row["allreduce_seconds"] > 0
    assert driver.wait(30) == 0


def test_it_cancels_every_rank(fleet: Fleet) -> None:
    driver, events = fleet.drive("cancel")  # cancels rank 0's job through the API once both ranks time steps
    _until(events, "training", 400, fleet)
    ranks = _ranks(fleet.workers["hosta"]) + _ranks(fleet.workers["hostb"])

    done = _until(events, "done", 60, fleet)
    assert [job["status"] for job in done["jobs"]] == ["cancelled", "cancelled"], done
    _, alive = psutil.wait_procs(ranks, timeout=15)
    assert not alive, "a rank outlived its cancelled calibration"
    assert driver.wait(30) == 0


def test_it_fails_the_whole_calibration_when_a_hosts_worker_dies(fleet: Fleet) -> None:
    driver, events = fleet.drive("long")
    _until(events, "training", 400, fleet)
    ranks_a = _ranks(fleet.workers["hosta"])
    os.kill(fleet.workers["hostb"].pid, signal.SIGKILL)  # its rank dies with it (PR_SET_PDEATHSIG)

    done = _until(events, "done", 60, fleet)  # within 60 s of the kill
    (first, second) = done["jobs"]
    assert first["status"] == "failed" and "rank" in first["error"], done
    assert second["status"] == "failed" and "rank 0 ended the spread calibration" in second["error"], done
    _, alive = psutil.wait_procs(ranks_a, timeout=15)
    assert not alive, "host a's rank outlived the failed calibration"
    assert not [p for p in fleet.b.pids() if p != fleet.workers["hostb"].pid], (
        "something still runs on host b"
    )
    assert driver.wait(30) == 0
