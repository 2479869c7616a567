"""One supervised child process, for every kind of device job (calibration sweeps, accuracy probes).

The child is started with the "spawn" method (torch is never forked): clean memory, and the environment the
caller chose, since glibc reads MALLOC_* only at process start. The caller's process only relays the child's
events, so a crash or an OOM-kill of the child is reported, not inherited. A child that overruns its deadline
or whose job is cancelled is stopped hard (terminate, then kill). Imports neither Django nor torch.

The child talks through one multiprocessing queue of dict events. Two end it: {"type": "done", ...} (it
finished; the supervisor lets it exit) and {"type": "error", "message": ...} (an exception ended it); every
other event is relayed to on_event as it comes.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from advisor.calibration.floats import run_flushed

Event = dict[str, Any]
POLL_S = 0.2
STOP_GRACE_S = 2.0

# Spawning copies os.environ as it is at start(); one lock for every child of this process, whatever its kind,
# so two threads never set it at once.
_ENV_LOCK = threading.Lock()


@dataclass(frozen=True)
class ChildEnd:
    """How a supervised child ended. status: "done" (it sent done), "error" (it sent error), "died" (it
    ended without either), "cancelled" or "timed_out" (stopped by the supervisor). `event` is the final done
    or error event; `exit` describes the exit code of a child that died."""

    status: Literal["done", "error", "died", "cancelled", "timed_out"]
    event: Event | None = None
    exit: str = ""


def describe_exit(code: int | None) -> str:
    """'exit code -9 (SIGKILL)': a negative code is the signal that ended the process."""
    if code is not None and code < 0:
        try:
            return f"exit code {code} ({signal.Signals(-code).name})"
        except ValueError:
            pass
    return f"exit code {code}"


@contextmanager
def spawn_environment(env: Mapping[str, str]) -> Iterator[None]:
    """Processes started (spawn method) inside this block get exactly `env` as their environment: the keys
    that differ are changed for that instant only, under the one lock."""
    with _ENV_LOCK:
        changed = {
            k: os.environ.get(k) for k in set(os.environ) | set(env) if os.environ.get(k) != env.get(k)
        }
        for key in changed:
            if key in env:
                os.environ[key] = env[key]
            else:
                del os.environ[key]
        try:
            yield
        finally:
            for key, value in changed.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def stop(proc: Any, *, finished: bool) -> None:
    """Let a finished child exit; terminate, then kill, one that does not stop within the grace period."""
    if finished:
        proc.join(STOP_GRACE_S)
    for signal_it in (proc.terminate, proc.kill):
        if proc.is_alive():
            signal_it()
            proc.join(STOP_GRACE_S)


def supervise(
    target: Callable[..., None],
    args: tuple[Any, ...],
    *,
    name: str,
    env: Mapping[str, str],
    deadline: Callable[[], float],
    on_event: Callable[[Event], None],
    should_cancel: Callable[[], bool],
    on_start: Callable[[int], None] | None = None,
) -> ChildEnd:
    """Run target(*args, events) in a spawned child to its end. `deadline()` is read at each check (a
    time.monotonic() value; a caller may move it, e.g. once the child reports it is ready); should_cancel()
    is asked every POLL_S. on_start gets the child's pid."""
    ctx = mp.get_context("spawn")
    events = ctx.Queue()
    proc = ctx.Process(target=run_flushed, args=(target, *args, events), name=name, daemon=True)
    with spawn_environment(env):
        proc.start()
    if on_start is not None:
        on_start(int(proc.pid or 0))
    last_check = 0.0
    finished = False
    try:
        while True:
            try:
                event: Event | None = events.get(timeout=POLL_S)
            except queue.Empty:
                event = None
                if not proc.is_alive():
                    try:  # the pipe may still hold what the child sent just before it ended
                        event = events.get(timeout=POLL_S)
                    except queue.Empty:
                        proc.join()
                        return ChildEnd("died", exit=describe_exit(proc.exitcode))
            if event is not None:
                if event["type"] == "done":
                    finished = True
                    return ChildEnd("done", event)
                if event["type"] == "error":
                    return ChildEnd("error", event)
                on_event(event)
            now = time.monotonic()
            if now - last_check >= POLL_S:
                last_check = now
                if should_cancel():
                    return ChildEnd("cancelled")
                if now >= deadline():
                    return ChildEnd("timed_out")
    finally:
        stop(proc, finished=finished)
        events.close()
        events.cancel_join_thread()
