"""A competing CPU-bound load for the benchmarks that measure under one (`bench epoch`, `learned`, `noisy`),
and the contention signals measure() recorded meanwhile.

Each load process is a plain Python busy loop in its own process (one core's worth of demand, never done):
it sleeps `delay` seconds, says so on its stdout, then spins until terminated. `stop_load` reports the CPU
time each process spent between `start_load`'s return and the stop, read from /proc, so that a run can show
the load really competed (and a test can check it) without trusting a wall clock.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

# sleeps argv[1] seconds, says "spinning", then spins until terminated
SPIN = """import sys, time
time.sleep(float(sys.argv[1]))
print("spinning", flush=True)
while True:
    pass
"""
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a live process from /proc/<pid>/stat; None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            text = f.read()
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / TICKS  # stat's fields 14 and 15: utime, stime


@dataclass
class Load:
    """Running load processes and their CPU time when `start_load` returned."""

    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    cpu_at_start: list[float] = field(default_factory=list)
    spinning: list[bool] = field(default_factory=list)  # said so before start_load returned (with `wait`)


def start_load(processes: int, delay: float, *, wait: bool = False) -> Load:
    """`processes` busy loops (0: none) starting after `delay` seconds; with `wait`, returns once every one
    spins."""
    started = [
        subprocess.Popen([sys.executable, "-c", SPIN, f"{delay:.3f}"], stdout=subprocess.PIPE)
        for _ in range(processes)
    ]
    said = [p.stdout.readline() == b"spinning\n" if wait and p.stdout else False for p in started]
    return Load(started, [cpu_seconds(p.pid) or 0.0 for p in started], said)


def stop_load(load: Load) -> dict[str, Any]:
    """Terminates the load and waits for it: {"processes", "pids", "spinning" (each had said so before the
    measurement), "cpu_seconds" (each one's since start_load returned), "returncodes" (-SIGTERM each where
    it was still running)}."""
    now = [cpu_seconds(p.pid) for p in load.processes]
    spent = [(n or s) - s for n, s in zip(now, load.cpu_at_start, strict=True)]
    for p in load.processes:
        p.terminate()
    for p in load.processes:
        p.wait()
        if p.stdout is not None:
            p.stdout.close()
    return {
        "processes": len(load.processes),
        "pids": [p.pid for p in load.processes],
        "spinning": load.spinning,
        "cpu_seconds": spent,
        "returncodes": [p.returncode for p in load.processes],
    }


def contention_signals(m: dict[str, Any]) -> dict[str, Any]:
    """The contention figures of one measure() result that the verdict reads (advisor.calibration.contention),
    flat, plus the median's interval half-width."""
    c = m.get("contention") or {}
    return {
        k: c.get(k)
        for k in ("cpu_per_wall", "cpu_share", "runnable_median", "runnable_above_cpus", "steal_share")
    } | {
        "throttled_seconds": (c.get("cgroup") or {}).get("throttled_seconds"),
        "interval_halfwidth": m.get("interval_halfwidth"),
    }
