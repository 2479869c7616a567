"""Running a probe in a child process: a clean process started with "spawn" (torch is never forked), the
calibration's tuned allocator environment, and a hard stop (terminate, then kill) on cancel or at the time
limit.

The child keeps a soft budget a little shorter than the hard limit, so it normally finishes in time with
what it has; the hard stop is for a child that does not.
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
from dataclasses import asdict, replace
from typing import Any

from advisor.probe.learning.plan import ProbePlan

POLL_S = 0.2
GRACE_S = 2.0
SOFT_MARGIN_S = 2.0  # the child aims to answer this long before the hard limit
_ENV_LOCK = threading.Lock()


def child_main(plan: dict[str, Any], threads: int, events: Any) -> None:
    try:
        import torch

        torch.set_num_threads(max(1, threads))
        from advisor.probe.learning.probe import run_probe

        result = run_probe(ProbePlan(**plan), events.put)
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
) -> dict[str, Any]:
    """Returns {"status": succeeded|failed|cancelled|timed_out, "error", "result"}; events go to on_event."""
    started = time.monotonic()
    deadline = started + time_limit_s
    # The child's own deadline is on the wall clock, so the seconds it spends starting count against it.
    soft = replace(plan, deadline=time.time() + max(1.0, time_limit_s - SOFT_MARGIN_S))
    ctx = mp.get_context("spawn")
    events = ctx.Queue()
    proc = ctx.Process(target=child_main, args=(asdict(soft), threads, events), name="probe", daemon=True)
    _start(proc)
    outcome: dict[str, Any] = {"status": "failed", "error": None, "result": None}
    finished = False
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
                    return {
                        **outcome,
                        "error": f"the probe process died with {_describe_exit(proc.exitcode)}",
                    }
            if event is not None:
                if event["type"] == "done":
                    finished = True
                    return {**outcome, "status": "succeeded", "result": event["result"]}
                if event["type"] == "error":
                    return {**outcome, "error": event["message"], "trace": event.get("trace")}
                on_event(event)
            if should_cancel():
                return {**outcome, "status": "cancelled", "error": "cancelled on request"}
            if time.monotonic() >= deadline:
                return {
                    **outcome,
                    "status": "timed_out",
                    "error": f"stopped at the time limit of {time_limit_s:g} s",
                }
    finally:
        if finished:
            proc.join(GRACE_S)
        for stop in (proc.terminate, proc.kill):
            if proc.is_alive():
                stop()
                proc.join(GRACE_S)
        events.close()
        events.cancel_join_thread()
