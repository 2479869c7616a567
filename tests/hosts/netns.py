"""Two test hosts on this machine: network namespaces joined by a veth pair, made and removed by the tests.

Traffic stays on the pair's two addresses, which exist only inside the two namespaces (none in the machine's
own), so nothing a test sends can leave them. Needs root and iproute2's `ip`; outside CI a missing one is a
skip, in CI a failure (conftest.need).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from tests.conftest import need

SUBNET = "10.218.18"  # a /30 of the test's own; it exists only inside the two namespaces
SUBNET_BITS = 30


@dataclass(frozen=True)
class Host:
    netns: str
    ifname: str
    address: str

    def command(self, *argv: str) -> list[str]:
        return ["ip", "netns", "exec", self.netns, *argv]

    def pids(self) -> list[int]:
        out = subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True, text=True, check=False)
        return [int(p) for p in out.stdout.split()]


def _ip(*argv: str) -> None:
    subprocess.run(["ip", *argv], check=True, capture_output=True, text=True)


def need_namespaces() -> None:
    need(shutil.which("ip") is not None, "iproute2's `ip` is not installed (apt-get install iproute2)")
    need(os.geteuid() == 0, "network namespaces need root")


@contextmanager
def two_hosts() -> Iterator[tuple[Host, Host]]:
    """Hosts a (SUBNET.1) and b (SUBNET.2); on exit every process left in them is killed and both go."""
    need_namespaces()
    tag = f"{os.getpid() % 100000}"
    a = Host(f"adv{tag}a", f"v{tag}a", f"{SUBNET}.1")
    b = Host(f"adv{tag}b", f"v{tag}b", f"{SUBNET}.2")
    made: list[Host] = []
    try:
        for host in (a, b):
            _ip("netns", "add", host.netns)
            made.append(host)
        _ip(
            "link",
            "add",
            a.ifname,
            "netns",
            a.netns,
            "type",
            "veth",
            "peer",
            "name",
            b.ifname,
            "netns",
            b.netns,
        )
        for host in (a, b):
            _ip("-n", host.netns, "addr", "add", f"{host.address}/{SUBNET_BITS}", "dev", host.ifname)
            _ip("-n", host.netns, "link", "set", host.ifname, "up")
            _ip("-n", host.netns, "link", "set", "lo", "up")
        yield a, b
    finally:
        for host in made:
            for pid in host.pids():
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            subprocess.run(["ip", "netns", "del", host.netns], check=False, capture_output=True)
