"""The devices this machine offers for calibration (the worker announces them on start)."""

from __future__ import annotations

import os
import platform
from typing import NotRequired, TypedDict

import psutil
import torch


def cpu_model_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def _cores_from_cpuinfo() -> int | None:
    """Distinct (physical id, core id) pairs: physical cores where psutil cannot tell."""
    try:
        with open("/proc/cpuinfo") as f:
            blocks = f.read().split("\n\n")
    except OSError:
        return None
    cores = set()
    for block in blocks:
        fields = dict(line.split(":", 1) for line in block.splitlines() if ":" in line)
        fields = {k.strip(): v.strip() for k, v in fields.items()}
        if "core id" in fields:
            cores.add((fields.get("physical id", "0"), fields["core id"]))
    return len(cores) or None


def physical_cores() -> int:
    """Physical cores (psutil), else from /proc/cpuinfo, else logical CPUs: never fewer than one."""
    return int(psutil.cpu_count(logical=False) or _cores_from_cpuinfo() or os.cpu_count() or 1)


def logical_cpus() -> int:
    return int(psutil.cpu_count(logical=True) or os.cpu_count() or 1)


class DetectedDevice(TypedDict):
    """A device this machine offers, as a worker announces it (workers.register_devices keeps it in the
    device row's `details`)."""

    kind: str  # "cpu" or "cuda"
    index: int
    name: str
    memory_bytes: int
    cores: NotRequired[int]  # CPU: physical cores
    threads: NotRequired[int]  # CPU: logical CPUs
    capability: NotRequired[str]  # CUDA: "8.0"
    # CUDA: the GPUs this worker's process sees (CUDA_VISIBLE_DEVICES, the container's reservation): the
    # largest world size a data-parallel calibration queued on this GPU can use
    host_gpus: NotRequired[int]
    torch: NotRequired[str]  # the worker's torch version, shown on the fleet page
    restart: NotRequired[object]  # a restarted worker's {"count", "reason", "at"} (manage.py serve)


def detect_devices() -> list[DetectedDevice]:
    devices: list[DetectedDevice] = [
        {
            "kind": "cpu",
            "index": 0,
            "name": cpu_model_name(),
            "cores": physical_cores(),
            "threads": logical_cpus(),
            "memory_bytes": int(psutil.virtual_memory().total),
        }
    ]
    if torch.cuda.is_available():
        count = torch.cuda.device_count()
        for i in range(count):
            props = torch.cuda.get_device_properties(i)
            devices.append(
                {
                    "kind": "cuda",
                    "index": i,
                    "name": props.name,
                    "memory_bytes": int(props.total_memory),
                    "capability": f"{props.major}.{props.minor}",
                    "host_gpus": count,
                }
            )
    return devices


def local_device(spec: str) -> tuple[str, list[DetectedDevice]]:
    """`cpu` / `cuda:N` on this machine: its tag (`cpu0`, `cuda1`) and its detected entry (none if absent).
    The worker and profile_device commands both start from it, so they name a device alike."""
    kind, _, index = spec.partition(":")
    found = [d for d in detect_devices() if d["kind"] == kind and str(d.get("index", 0)) == (index or "0")]
    return f"{kind}{index or 0}", found
