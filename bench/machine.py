"""A description of the machine a benchmark ran on, so that a result file can be judged without the machine.

Load average and the allocator set-up are recorded because both move CPU timings by tens of percent here:
the machine is shared, and glibc malloc's mmap/trim thresholds decide whether every training step pays
page faults for its large activation buffers.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import socket
import time
from pathlib import Path
from typing import Any

import torch


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def physical_cores() -> int:
    from advisor.calibration.devices import physical_cores as harness_cores

    return harness_cores()


def malloc_env() -> dict[str, str]:
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("MALLOC_") or k == "LD_PRELOAD"}


def allocator_label() -> str:
    """The calibration harness's name for this process's set-up: default, tuned, jemalloc, ..."""
    from advisor.calibration.allocator import current_allocator

    return current_allocator()


def gpus() -> list[dict[str, Any]]:
    if not torch.cuda.is_available():
        return []
    found = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        found.append(
            {
                "device": f"cuda:{i}",
                "name": props.name,
                "memory_bytes": int(props.total_memory),
                "capability": f"{props.major}.{props.minor}",
                "multiprocessors": int(props.multi_processor_count),
            }
        )
    return found


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def gpu_slug(device: str) -> str:
    """Names a GPU run's result folders: the GPU's name without the vendor ("h100-80gb-hbm3")."""
    import torch

    name = torch.cuda.get_device_name(torch.device(device))
    return slug(re.sub("nvidia", "", name, flags=re.IGNORECASE))


def machine_slug() -> str:
    """Names result folders: the CPU model without trademarks, physical cores, and the first GPU if any."""
    model = re.sub(r"\((r|tm)\)|cpu|processor|@.*", "", cpu_model(), flags=re.IGNORECASE)
    name = f"{slug(model)}-{physical_cores()}c"
    gpu = gpus()
    return f"{name}-{slug(gpu[0]['name'])}" if gpu else name


def describe() -> dict[str, Any]:
    """Everything but the end-of-run load average (see `finish`)."""
    mem_total = None
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_total = int(line.split()[1]) * 1024
    except OSError:
        pass
    return {
        "started_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "hostname": socket.gethostname(),
        "machine": machine_slug(),
        "cpu_model": cpu_model(),
        "physical_cores": physical_cores(),
        "logical_cpus": os.cpu_count(),
        "memory_bytes": mem_total,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_num_threads_default": torch.get_num_threads(),
        "blas": torch.__config__.show(),
        "parallel": torch.__config__.parallel_info(),
        "mkldnn_enabled": bool(torch.backends.mkldnn.is_available()),
        "gpus": gpus(),
        "load_average_start": list(os.getloadavg()),
        "malloc_env": malloc_env(),
        "allocator": allocator_label(),
    }


def finish(info: dict[str, Any]) -> dict[str, Any]:
    return {
        **info,
        "finished_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "load_average_end": list(os.getloadavg()),
    }


def save(
    out: Path, argv: list[str], info: dict[str, Any], table: str, results: dict[str, Any], **meta: Any
) -> None:
    """A run's results in `out`: results.json (`meta`: the command that reruns it, the machine, the load at
    both ends, and `meta`'s fields; then `results`) and table.md."""
    out.mkdir(parents=True, exist_ok=True)
    head = {"command": "python -m bench " + " ".join(argv), **meta, **finish(info)}
    (out / "results.json").write_text(json.dumps({"meta": head, **results}, indent=1, default=float))
    (out / "table.md").write_text(table + "\n")


def run_parser(name: str, doc: str | None) -> argparse.ArgumentParser:
    """`python -m bench <name>`'s parser, described by the first line of its module's `doc`, with `--out`."""
    parser = argparse.ArgumentParser(prog=f"python -m bench {name}", description=(doc or "").split("\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="write results.json and table.md here")
    return parser


def close_run(
    out: Path | None,
    argv: list[str],
    info: dict[str, Any],
    text: str,
    results: dict[str, Any],
    *,
    started: float,
    **meta: Any,
) -> float:
    """A run's end: its table printed, then its seconds (since time.monotonic() read `started`), the load and
    the allocator; all of it saved in `out` when given (`save`). Returns the seconds."""
    print(text)
    elapsed = time.monotonic() - started
    print(f"{elapsed:.0f} s in all; load {os.getloadavg()}; allocator {info['allocator']}")
    if out is not None:
        save(out, argv, info, text, results, seconds=elapsed, **meta)
    return elapsed


def write_result(out: Path, result: dict[str, Any] | list[Any], table: str) -> None:
    """A benchmark's result.json and table.md in `out`, the table printed too."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "result.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    (out / "table.md").write_text(table, encoding="utf-8")
    print(table)
    print(f"written to {out}")


def run_header(result: dict[str, Any], bench: str) -> list[str]:
    """A profiling benchmark's table opening: the machine, the allocator, the load, the profile's seconds."""
    m = result["machine"]
    return [
        f"# bench {bench} on {m['machine']} ({m['cpu_model']}), allocator {m['allocator']}",
        f"load average start {m['load_average_start']}, end {m['load_average_end']}; "
        f"profile took {result['profile']['seconds']:.1f} s; whole run {result['seconds']:.0f} s",
    ]
