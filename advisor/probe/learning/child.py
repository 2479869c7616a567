"""Running a probe in a child process: a clean process started with "spawn" (torch is never forked), the
calibration's tuned allocator environment, and a hard stop (terminate, then kill) on cancel or at the time
limit.

The time limit runs from the child's "ready", once torch and scikit-learn are imported (seconds on a busy
machine; capped separately). The child keeps a soft budget a little shorter than the limit, so it normally
answers in time with what it has; the hard stop is for a child that does not.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from typing import Any

from advisor.calibration.parent_death import die_with_parent
from advisor.calibration.supervisor import supervise
from advisor.probe.learning.plan import ProbePlan

SOFT_MARGIN_S = 2.0  # the child aims to answer this long before the hard limit
STARTUP_LIMIT_S = 90.0  # starting the child and importing torch; not part of the probe's own time limit


def child_main(probe: ProbePlan, threads: int, parent_pid: int, events: Any) -> None:
    die_with_parent(parent_pid)
    try:
        import torch

        torch.set_num_threads(max(1, threads))
        from advisor.probe.learning.pipeline import prepare, probe_generation, shallow_first

        prepare(probe)
        # The time limit counts from here: starting the process and importing torch is not the probe's time.
        events.put({"type": "ready"})
        probe.deadline = time.time() + max(0.5, probe.budget_s - SOFT_MARGIN_S)
        # a generation task's generator is scored by the two-sample test
        run = probe_generation if probe.task == "generation" else shallow_first
        result = run(probe, events.put)
        events.put({"type": "done", "result": result})
    except Exception as exc:
        events.put(
            {
                "type": "error",
                "message": f"{type(exc).__name__}: {exc}",
                "trace": traceback.format_exc()[-4000:],
            }
        )


def run_in_child(
    plan: ProbePlan,
    *,
    time_limit_s: float,
    threads: int,
    on_event: Callable[[dict[str, Any]], None],
    should_cancel: Callable[[], bool],
    startup_limit_s: float = STARTUP_LIMIT_S,
) -> dict[str, Any]:
    """Returns {"status": succeeded|failed|cancelled|timed_out, "error", "result", "startup_s", "probe_s"};
    the child's events go to on_event. The time limit runs from the child's "ready" (imports done)."""
    from advisor.calibration.allocator import child_environment

    started = time.monotonic()
    ready: float | None = None
    deadline = started + startup_limit_s

    def relay(event: dict[str, Any]) -> None:
        nonlocal ready, deadline
        if event["type"] == "ready":
            ready = time.monotonic()
            deadline = ready + time_limit_s
        else:
            on_event(event)

    end = supervise(
        child_main,
        (plan, threads, os.getpid()),  # a plain dataclass: it crosses into the child as is
        name="probe",
        env=child_environment("tuned"),  # the tuned glibc allocator; glibc reads it only at process start
        deadline=lambda: deadline,
        on_event=relay,
        should_cancel=should_cancel,
    )
    now = time.monotonic()
    outcome: dict[str, Any] = {
        "status": "failed",
        "error": None,
        "result": None,
        "startup_s": round((ready or now) - started, 2),
        "probe_s": None if ready is None else round(now - ready, 2),
    }
    if end.status == "done" and end.event is not None:
        return {**outcome, "status": "succeeded", "result": end.event["result"]}
    if end.status == "error" and end.event is not None:
        return {**outcome, "error": end.event["message"], "trace": end.event.get("trace")}
    if end.status == "died":
        return {**outcome, "error": f"the probe process died with {end.exit}"}
    if end.status == "cancelled":
        return {**outcome, "status": "cancelled", "error": "cancelled on request"}
    if ready is None:
        error = f"the probe process did not start within {startup_limit_s:g} s"
    else:
        error = f"stopped at the time limit of {time_limit_s:g} s"
    return {**outcome, "status": "timed_out", "error": error}
