"""The body of a calibration child process: a sweep of configurations, each result sent as soon as it exists.

Runs in a process started with the "spawn" method, so glibc, the allocator and torch start fresh with the
environment the parent chose. Talks to the parent only through `events` (a multiprocessing queue):
  {"type": "progress", ...}, {"type": "result", ...}  relayed to the caller as they come;
  {"type": "done", "stop_reason": ...}                the sweep ended normally;
  {"type": "error", "message": ...}                   an exception ended it (a crash sends nothing).
"""

from __future__ import annotations

import os
import time
import traceback
from typing import Any, Protocol

from advisor.calibration.allocator import current_allocator

PLATEAU_GAIN = 1.05  # a doubling that adds less than 5% examples/s counts towards the plateau
PLATEAU_DOUBLINGS = 2


class EventSink(Protocol):
    def put(self, obj: Any) -> None: ...


def batch_plan(payload: dict[str, Any]) -> tuple[list[int], bool]:
    """The batch sizes to try, ascending, and whether they are a doubling sweep."""
    if payload["batch_sizes"]:
        return sorted({int(b) for b in payload["batch_sizes"]}), False
    sizes, b = [], max(1, int(payload["batch_start"]))
    while b <= int(payload["max_batch_size"]):
        sizes.append(b)
        b *= 2
    return sizes or [int(payload["max_batch_size"])], True


def run_sweep(payload: dict[str, Any], events: EventSink) -> None:
    """Measure every planned configuration; stop early at out-of-memory, a plateau or the soft budget."""
    from advisor.calibration.measure import (
        measure,
    )  # torch is imported here, in the child, after its environment

    if payload.get("memory_limit_bytes") and payload["device"] == "cpu":
        from advisor.calibration.memory import limit_data_memory

        limit_data_memory(int(payload["memory_limit_bytes"]))
    elif payload.get("memory_limit_bytes"):
        import torch

        dev = torch.device(payload["device"])
        total = torch.cuda.get_device_properties(dev).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, payload["memory_limit_bytes"] / total), dev)

    started = time.monotonic()
    budget = float(payload["budget_s"])
    allocator = current_allocator()
    threads: list[int] = [int(t) for t in payload["threads"]]
    configs: list[tuple[int, int]] | None = payload.get("configs")
    if configs:
        plan: list[tuple[int, list[int]]] = [(int(b), [int(t)]) for b, t in configs]
        doubling = False
    else:
        sizes, doubling = batch_plan(payload)
        plan = [(b, threads) for b in sizes]
    base = int(payload.get("progress_base", 0))
    total = base + sum(len(ts) for _, ts in plan)
    done = base
    best_rate, flat, last_ok_batch = 0.0, 0, None
    last_duration, last_batch = 0.0, None
    stop_reason = "all configurations measured"
    for batch, thread_list in plan:
        rates: list[float] = []
        oom = False
        for t in thread_list:
            scale = batch / last_batch if last_batch else 1.0
            if last_batch is not None and time.monotonic() - started + last_duration * scale > budget:
                stop_reason = f"time limit: batch {batch}, {t} threads would not finish in time"
                events.put({"type": "done", "stop_reason": stop_reason, "done": done, "total": total})
                return
            events.put(
                {
                    "type": "progress",
                    "done": done,
                    "total": total,
                    "step": f"batch {batch}, {t} threads: timing",
                    "pid": os.getpid(),
                }
            )
            t0 = time.monotonic()
            result = measure(
                payload["candidate"],
                device=payload["device"],
                batch_size=batch,
                threads=t,
                min_iterations=int(payload["min_iterations"]),
                min_seconds=float(payload["min_seconds"]),
                warmup=int(payload["warmup"]),
                memory_limit_bytes=payload.get("memory_limit_bytes"),
            )
            last_duration, last_batch = time.monotonic() - t0, batch
            done += 1
            if result["status"] == "oom" and last_ok_batch is not None:
                result["message"] += f"; {last_ok_batch} does"
            events.put(
                {
                    "type": "result",
                    "batch_size": batch,
                    "threads": t,
                    "allocator": allocator,
                    "result": result,
                    "pid": os.getpid(),
                }
            )
            if result["status"] == "oom":
                oom = True
                break
            rates.append(float(result["examples_per_second"]))
        if oom:
            stop_reason = f"out of memory at batch {batch}"
            break
        last_ok_batch = batch
        if doubling and payload.get("stop_on_plateau", True):
            rate = max(rates)
            flat = flat + 1 if rate < best_rate * PLATEAU_GAIN else 0
            best_rate = max(best_rate, rate)
            if flat >= PLATEAU_DOUBLINGS:
                stop_reason = (
                    f"throughput plateau: {PLATEAU_DOUBLINGS} doublings up to batch {batch} gained < 5%"
                )
                break
    else:
        if doubling:
            stop_reason = f"reached the cap, batch {plan[-1][0]}"
    events.put({"type": "done", "stop_reason": stop_reason, "done": done, "total": total})


def child_main(payload: dict[str, Any], events: Any) -> None:
    """Entry point of the spawned process; `events` is a multiprocessing queue."""
    code = 0
    try:
        run_sweep(payload, events)
    except BaseException as exc:  # report anything, even KeyboardInterrupt, before the process ends
        code = 1
        events.put(
            {
                "type": "error",
                "message": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=8),
            }
        )
    # Flush the queue, then leave at once: tearing down an interpreter with torch loaded takes seconds.
    events.close()
    events.join_thread()
    os._exit(code)
