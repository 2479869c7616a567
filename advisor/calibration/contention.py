"""What can be seen of other work on the device while one configuration is timed, and the verdict on it.

On a CPU (Linux): the process's CPU time against wall time x threads over the timed steps (measure.py
passes them), the machine's runnable tasks (/proc/loadavg's running count, sampled between steps), the
hypervisor's steal time (/proc/stat) and, where the process lives in a cgroup (a container, whose /proc
figures are the host's), the cgroup's own CPU usage and throttling (cpu.stat, v2 or v1). On CUDA: the other
processes on the GPU and its utilisation through NVML, where pynvml is installed (never required).

`judge` turns those figures and the median's precision into the reasons a configuration is `unreliable`.
Every file is optional: a figure that cannot be read is None, and says nothing.
"""

from __future__ import annotations

import importlib
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor.contract import CgroupFigures, Contention, GpuFigures, Unreliability
from advisor.engine.robust import CONFIDENCE, PRECISION

SAMPLE_EVERY_S = 0.02  # runnable tasks are read between steps at most this often (a read costs ~20 µs)
# The verdict's thresholds (measure()'s `unreliable`):
MIN_CPU_SHARE = 0.85  # the process had less than this of one core per timed second: it waited for a CPU
RUNNABLE_SHARE = 0.25  # runnable tasks above the CPUs in this share of the samples: others wanted them
MAX_STEAL_SHARE = 0.05  # the hypervisor ran other guests on this VM's CPUs this share of the time
MAX_THROTTLED_SHARE = 0.02  # the cgroup's quota held it back this share of the timed seconds

PROC = Path("/proc")
CGROUP = Path("/sys/fs/cgroup")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None


def proc_stat(text: str | None) -> tuple[int, int, int] | None:
    """(all ticks, steal ticks, CPUs) from /proc/stat's text."""
    if not text:
        return None
    total = steal = cpus = 0
    for line in text.splitlines():
        if line.startswith("cpu "):
            ticks = [int(v) for v in line.split()[1:]]
            # user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is in user
            total, steal = sum(ticks[:8]), ticks[7] if len(ticks) > 7 else 0
        elif line.startswith("cpu"):
            cpus += 1
    return (total, steal, cpus) if total else None


def running_tasks(text: str | None) -> int | None:
    """The running count of /proc/loadavg ("0.25 0.35 0.22 2/158 11830" -> 2)."""
    try:
        return int((text or "").split()[3].split("/")[0])
    except (IndexError, ValueError):
        return None


def _cpu_stat(text: str | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in (text or "").splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            out[key] = int(value)
    return out


def cgroup_files(self_cgroup: str | None, root: Path = CGROUP) -> tuple[str, Path, Path | None] | None:
    """(version, cpu.stat, v1's cpuacct.usage) of this process's CPU cgroup, from /proc/self/cgroup's text:
    v1 names a hierarchy with the cpu controller, v2 has one line "0::/path"."""
    lines = [line.split(":", 2) for line in (self_cgroup or "").splitlines() if line.count(":") >= 2]
    for _, controllers, path in lines:
        names = controllers.split(",")
        if "cpu" in names:
            mount = next((root / d for d in ("cpu,cpuacct", "cpu") if (root / d).is_dir()), root / "cpu")
            acct = next((root / d for d in ("cpu,cpuacct", "cpuacct") if (root / d).is_dir()), None)
            base = mount / path.lstrip("/")
            stat = base / "cpu.stat" if (base / "cpu.stat").exists() else mount / "cpu.stat"
            usage = None
            if acct is not None:
                usage = acct / path.lstrip("/") / "cpuacct.usage"
                usage = usage if usage.exists() else acct / "cpuacct.usage"
            return "v1", stat, usage
    for hierarchy, _, path in lines:
        if hierarchy == "0":
            for mount in (root, root / "unified"):
                stat = mount / path.lstrip("/") / "cpu.stat"
                if stat.exists():
                    return "v2", stat, None
    return None


def _cgroup_counters(files: tuple[str, Path, Path | None] | None) -> dict[str, float] | None:
    """usage_seconds, nr_throttled, throttled_seconds of the cgroup now."""
    if files is None:
        return None
    version, stat_path, usage_path = files
    stat = _cpu_stat(_read(stat_path))
    if version == "v2":
        if "usage_usec" not in stat:
            return None
        return {
            "usage_seconds": stat["usage_usec"] / 1e6,
            "nr_throttled": float(stat.get("nr_throttled", 0)),
            "throttled_seconds": stat.get("throttled_usec", 0) / 1e6,
        }
    usage = (_read(usage_path) or "").strip() if usage_path is not None else ""
    if not stat and not usage.isdigit():
        return None
    return {
        "usage_seconds": int(usage) / 1e9 if usage.isdigit() else float("nan"),
        "nr_throttled": float(stat.get("nr_throttled", 0)),
        "throttled_seconds": stat.get("throttled_time", 0) / 1e9,  # v1: nanoseconds
    }


def _nvml() -> Any:
    """pynvml, initialised, or None where it is not installed or finds no driver."""
    try:
        nvml = importlib.import_module("pynvml")
        nvml.nvmlInit()
    except Exception:  # not installed, no driver, no permission: nothing to see
        return None
    return nvml


def _gpu_handle(nvml: Any, device_index: int) -> Any:
    """The NVML handle of torch's device `device_index`: by UUID (CUDA_VISIBLE_DEVICES renumbers), else by
    index."""
    import torch

    try:
        uuid = str(torch.cuda.get_device_properties(device_index).uuid)
        return nvml.nvmlDeviceGetHandleByUUID(uuid if uuid.startswith("GPU-") else f"GPU-{uuid}")
    except Exception:
        return nvml.nvmlDeviceGetHandleByIndex(device_index)


def gpu_state(device_index: int) -> GpuFigures | None:
    """Other processes computing on the GPU and its utilisation now, via NVML; None without it."""
    nvml = _nvml()
    if nvml is None:
        return None
    try:
        handle = _gpu_handle(nvml, device_index)
        pids = [int(p.pid) for p in nvml.nvmlDeviceGetComputeRunningProcesses(handle)]
        utilisation = int(nvml.nvmlDeviceGetUtilizationRates(handle).gpu)
    except Exception:
        return None
    # in a container NVML lists host process ids, ours among them under another number: count it out once
    others = len([p for p in pids if p != os.getpid()]) if os.getpid() in pids else max(0, len(pids) - 1)
    return {"other_processes": others, "utilisation": float(utilisation)}


@dataclass
class Probe:
    """Reads the machine before, between and after a configuration's timed steps (measure.time_steps)."""

    cuda_index: int | None = None  # a CUDA device's index: NVML instead of the CPU's figures
    proc: Path = PROC
    cgroup_root: Path = CGROUP
    clock: Callable[[], float] = time.perf_counter
    runnable: list[int] = field(default_factory=list)
    _stat: tuple[int, int, int] | None = None
    _files: tuple[str, Path, Path | None] | None = None
    _cgroup: dict[str, float] | None = None
    _last: float = -1e9
    _gpu: list[GpuFigures] = field(default_factory=list)

    def start(self) -> None:
        self._stat = proc_stat(_read(self.proc / "stat"))
        self._files = cgroup_files(_read(self.proc / "self" / "cgroup"), self.cgroup_root)
        self._cgroup = _cgroup_counters(self._files)
        self.tick(force=True)

    def tick(self, *, force: bool = False) -> None:
        """Between two steps: a sample of the runnable tasks (or the GPU's processes), at most every
        SAMPLE_EVERY_S."""
        now = self.clock()
        if not force and now - self._last < SAMPLE_EVERY_S:
            return
        self._last = now
        if self.cuda_index is not None:
            state = gpu_state(self.cuda_index)
            if state is not None:
                self._gpu.append(state)
            return
        running = running_tasks(_read(self.proc / "loadavg"))
        if running is not None:
            self.runnable.append(running)

    def finish(self, *, cpu_seconds: float | None, timed_seconds: float, threads: int) -> Contention:
        """The figures over the timed loop; `cpu_seconds` is the process's CPU time in the timed steps."""
        self.tick(force=True)
        end = proc_stat(_read(self.proc / "stat"))
        cpus = end[2] if end else None
        steal = None
        if end and self._stat and end[0] > self._stat[0]:
            steal = (end[1] - self._stat[1]) / (end[0] - self._stat[0])
        cgroup: CgroupFigures | None = None
        now, then = _cgroup_counters(self._files), self._cgroup
        if now is not None and then is not None and self._files is not None:
            cgroup = {
                "version": self._files[0],
                "usage_seconds": now["usage_seconds"] - then["usage_seconds"],
                "nr_throttled": now["nr_throttled"] - then["nr_throttled"],
                "throttled_seconds": now["throttled_seconds"] - then["throttled_seconds"],
            }
        per_wall = cpu_seconds / timed_seconds if cpu_seconds is not None and timed_seconds > 0 else None
        above = [r > cpus for r in self.runnable] if cpus else []
        gpu: GpuFigures | None = None
        if self._gpu:
            gpu = {
                "other_processes": max(s["other_processes"] for s in self._gpu),
                "utilisation": statistics.median(s["utilisation"] for s in self._gpu),
            }
        return {
            "cpus": cpus,
            "cpu_share": per_wall / max(1, threads) if per_wall is not None else None,
            "cpu_per_wall": per_wall,
            "runnable_median": statistics.median(self.runnable) if self.runnable else None,
            "runnable_max": max(self.runnable) if self.runnable else None,
            "runnable_above_cpus": sum(above) / len(above) if above else None,
            "samples": len(self.runnable) + len(self._gpu),
            "steal_share": steal,
            "cgroup": cgroup,
            "gpu": gpu,
        }


def judge(
    contention: Contention | None, *, halfwidth: float, timed_seconds: float, iterations: int
) -> list[Unreliability]:
    """Why a configuration's figures cannot be trusted: its median not pinned down within ±PRECISION by the
    time it was given, or other work seen taking the CPUs (or the GPU) it was timed on. [] when none."""
    reasons: list[Unreliability] = []
    if halfwidth > PRECISION:
        said = f"±{halfwidth:.0%}" if halfwidth < 10 else "no interval yet"
        reasons.append(
            {
                "code": "interval",
                "text": f"the median's {CONFIDENCE:.0%} interval was still {said} after {iterations} steps "
                f"(the time it was given ran out; it must be within ±{PRECISION:.0%})",
            }
        )
    if contention is None:
        return reasons
    c = contention
    per_wall = c["cpu_per_wall"]
    if per_wall is not None and per_wall < MIN_CPU_SHARE:
        reasons.append(
            {
                "code": "cpu_share",
                "text": f"the process ran {per_wall:.0%} of the timed seconds (under {MIN_CPU_SHARE:.0%}: it "
                "waited for a CPU)",
            }
        )
    above = c["runnable_above_cpus"]
    if above is not None and above >= RUNNABLE_SHARE:
        reasons.append(
            {
                "code": "runnable",
                "text": f"more tasks wanted to run than the {c['cpus']} CPUs in {above:.0%} of the samples "
                f"(median {c['runnable_median']}, up to {c['runnable_max']})",
            }
        )
    steal = c["steal_share"]
    if steal is not None and steal >= MAX_STEAL_SHARE:
        reasons.append(
            {"code": "steal", "text": f"the hypervisor took {steal:.0%} of the CPUs' time (steal)"}
        )
    cgroup = c["cgroup"]
    throttled = cgroup["throttled_seconds"] if cgroup else 0.0
    if cgroup and timed_seconds > 0 and throttled / timed_seconds >= MAX_THROTTLED_SHARE:
        reasons.append(
            {
                "code": "throttled",
                "text": f"the container's CPU quota held it back {throttled:.2g} s of {timed_seconds:.2g} s "
                f"({int(cgroup['nr_throttled'])} times)",
            }
        )
    gpu = c["gpu"]
    if gpu and gpu["other_processes"]:
        reasons.append(
            {
                "code": "gpu_shared",
                "text": f"{gpu['other_processes']} other process(es) computed on the GPU "
                f"(utilisation {gpu['utilisation']:.0f}%)",
            }
        )
    return reasons
