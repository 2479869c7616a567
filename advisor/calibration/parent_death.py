"""Measuring children must not outlive the worker that started them: a worker killed with SIGKILL (OOM
killer, `kill -9`, a container stop) runs no clean-up, and an orphaned child would go on loading the device
while the next job measures on it."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux), and exit now if that already
    happened between the spawn and this call. Elsewhere it does nothing: the runner's own kill on timeout and
    cancel still applies."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:
        return
    if os.getppid() != parent_pid:
        os._exit(1)
