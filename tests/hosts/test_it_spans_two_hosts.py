"""One data-parallel job over two hosts: network namespaces joined by a veth pair, a participant in each,
meeting at the TCPStore that host a's rank 0 serves on its veth address."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from tests.conftest import REPO
from tests.hosts.netns import Host, two_hosts

STORE_PORT = "29418"


class Participant:
    """`python -m advisor.calibration.hosts` inside a host; its JSON lines are read as they come."""

    def __init__(self, host: Host, store: str, rank: int, *extra: str) -> None:
        argv = [sys.executable, "-m", "advisor.calibration.hosts", "--store", store, "--world", "2"]
        argv += [
            "--first-rank",
            str(rank),
            "--local",
            "1",
            "--network",
            "tabular-mlp",
            "--threads",
            "1",
            *extra,
        ]
        env = {**os.environ, "GLOO_SOCKET_IFNAME": host.ifname, "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen(
            host.command(*argv), stdout=subprocess.PIPE, text=True, env=env, cwd=REPO
        )
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.events.put(json.loads(line))

    def until(self, kind: str, timeout: float) -> dict[str, Any]:
        """The first event of `kind`. A readiness wait, not a timing: it fails (queue.Empty) only when the
        participant says nothing for `timeout` seconds; its output ends when it exits, by its time limit."""
        while True:
            event = self.events.get(timeout=timeout)
            if event["type"] == kind:
                return event


def _empty(host: Host) -> bool:
    """No process left in the host, looked at up to 150 times 0.2 s apart (a count, not the clock)."""
    for _ in range(150):
        if not host.pids():
            return True
        time.sleep(0.2)
    return not host.pids()


def test_it_runs_one_job_over_two_hosts() -> None:
    with two_hosts() as (a, b):
        store = f"{a.address}:{STORE_PORT}"
        first, second = (
            Participant(a, store, 0, "--min-seconds", "0.3"),
            Participant(b, store, 1, "--min-seconds", "0.3"),
        )
        done_a, done_b = first.until("done", 180), second.until("done", 180)

        assert (done_a["status"], done_b["status"]) == ("succeeded", "succeeded"), (done_a, done_b)
        (rank0,), (rank1,) = done_a["ranks"], done_b["ranks"]
        assert (rank0["rank"], rank1["rank"]) == (0, 1)
        assert rank0["iterations"] == rank1["iterations"] >= 5  # the two agreed on their steps
        assert rank0["allreduce_seconds"] > 0 and rank1["allreduce_seconds"] > 0
        assert first.proc.wait(60) == 0 and second.proc.wait(60) == 0
        assert _empty(a) and _empty(b)


LONG = ("--min-seconds", "600", "--time-limit", "900")


def test_it_fails_the_job_with_a_reason_when_a_host_dies() -> None:
    with two_hosts() as (a, b):
        store = f"{a.address}:{STORE_PORT}"
        first, second = Participant(a, store, 0, *LONG), Participant(b, store, 1, *LONG)
        second.until("progress", 180)  # b's rank times its steps: both are inside the job
        os.kill(second.proc.pid, signal.SIGKILL)

        # the peer's death ends the job, not its time limit (900 s, which would end it `timed_out`): rank 0's
        # collective gives up on its peer after collective_timeout_s and says so
        done = first.until("done", 60)
        assert done["status"] == "failed" and "rank 0" in done["error"], done
        assert first.proc.wait(60) == 1
        assert _empty(a) and _empty(b)


def test_it_cancels_a_host_and_its_peer_fails() -> None:
    with two_hosts() as (a, b):
        store = f"{a.address}:{STORE_PORT}"
        first, second = Participant(a, store, 0, *LONG), Participant(b, store, 1, *LONG)
        first.until("progress", 180)
        first.proc.send_signal(signal.SIGTERM)

        assert first.until("done", 60)["status"] == "cancelled"
        peer = second.until("done", 60)  # as above: the peer's absence ends it, not the time limit
        assert peer["status"] == "failed" and "rank 1" in peer["error"], peer
        assert _empty(a) and _empty(b)
