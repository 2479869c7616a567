"""Running a probe in a child process: a clean process started with "spawn" (torch is never forked), the
calibration's tuned allocator environment, and a hard stop (terminate, then kill) on cancel or at the time
limit.

The time limit runs from the child's "ready", once torch and scikit-learn are imported (seconds on a busy
machine; capped separately). The child keeps a soft budget a little shorter than the limit, so it normally
answers in time with what it has; the hard stop is for a child that does not.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from advisor.calibration.orphans import die_with_parent
from advisor.probe.learning.plan import ProbePlan

POLL_S = 0.2
GRACE_S = 2.0
SOFT_MARGIN_S = 2.0  # the child aims to answer this long before the hard limit
STARTUP_LIMIT_S = 90.0  # starting the child and importing torch; not part of the probe's own time limit
_ENV_LOCK = threading.Lock()


def child_main(plan: dict[str, Any], threads: int, events: Any, parent_pid: int) -> None:
    die_with_parent(parent_pid)
    try:
        import torch

        torch.set_num_threads(max(1, threads))
        from advisor.probe.learning.probe import prepare, run_probe

        probe = ProbePlan(**plan)
        prepare(probe)
        # The time limit counts from here: starting the process and importing torch is not the probe's time.
        events.put({"type": "ready"})
        probe.deadline = time.time() + max(0.5, probe.budget_s - SOFT_MARGIN_S)
        result = run_probe(probe, events.put)
        events.put({"type": "done", "result": result})
    except Exception as exc:
        events.put(
            {
                "type": "error",
                "message": f"{type(exc).__name__}: {exc}",
                "trace": traceback.format_exc()[-4000:],
            }
        )


def _start(proc: Any) -> None:
    """Start with the tuned glibc allocator settings; glibc reads them only at process start."""
    from advisor.calibration.allocator import child_environment

    env = child_environment("tuned")
    with _ENV_LOCK:
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(env)
        try:
            proc.start()
        finally:
            os.environ.clear()
            os.environ.update(saved)


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"exit code {code} ({signal.Signals(-code).name})"
        except ValueError:
            pass
    return f"exit code {code}"


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
    started = time.monotonic()
    ready: float | None = None
    deadline = started + startup_limit_s
    ctx = mp.get_context("spawn")
    events = ctx.Queue()
    proc = ctx.Process(
        target=child_main, args=(asdict(plan), threads, events, os.getpid()), name="probe", daemon=True
    )
    _start(proc)
    finished = False

    def outcome(status: str, error: str | None = None, **more: Any) -> dict[str, Any]:
        now = time.monotonic()
        return {
            "status": status,
            "error": error,
            "result": None,
            "startup_s": round((ready or now) - started, 2),
            "probe_s": None if ready is None else round(now - ready, 2),
            **more,
        }

    try:
        while True:
            try:
                event: dict[str, Any] | None = events.get(timeout=POLL_S)
            except queue.Empty:
                event = None
            if event is None and not proc.is_alive():
                try:  # whatever the child sent before it ended is still in the pipe
                    event = events.get(timeout=POLL_S)
                except queue.Empty:
                    proc.join()
                    return outcome("failed", f"the probe process died with {_describe_exit(proc.exitcode)}")
            if event is not None:
                if event["type"] == "done":
                    finished = True
                    return outcome("succeeded", result=event["result"])
                if event["type"] == "error":
                    return outcome("failed", event["message"], trace=event.get("trace"))
                if event["type"] == "ready":
                    ready = time.monotonic()
                    deadline = ready + time_limit_s
                else:
                    on_event(event)
            if should_cancel():
                return outcome("cancelled", "cancelled on request")
            if time.monotonic() >= deadline:
                if ready is None:
                    return outcome(
                        "timed_out", f"the probe process did not start within {startup_limit_s:g} s"
                    )
                return outcome("timed_out", f"stopped at the time limit of {time_limit_s:g} s")
    finally:
        if finished:
            proc.join(GRACE_S)
        for stop in (proc.terminate, proc.kill):
            if proc.is_alive():
                stop()
                proc.join(GRACE_S)
        events.close()
        events.cancel_join_thread()
