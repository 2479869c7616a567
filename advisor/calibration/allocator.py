"""Memory-allocator set-ups for a calibration child process (rule cpu.allocator, advisor/engine/rules.json).

glibc's malloc serves large blocks with mmap and hands them back to the OS on free, so a PyTorch CPU
training step that frees and re-allocates its big activation and gradient tensors pays page faults and system
time every step. PyTorch's Performance Tuning Guide ("CPU specific optimizations": use jemalloc/tcmalloc) and
Intel's and AMD's tuning guides ("Memory Allocator") recommend an allocator that keeps memory. The glibc
variables below keep large blocks in the heap and never trim it; glibc reads them once at process start, so a
set-up chosen for a job runs in a child process started with that environment. glibc's `mallopt` sets the same
two thresholds in a running process (`tune_in_process`): an "auto" job's re-measure under the tuned set-up
switches its sweep's own child, which then allocates as a fresh tuned one does, instead of starting another
(bench/results/allocator_intel-xeon-2c_in-process/README.md).
"""

from __future__ import annotations

import ctypes.util
import os
from collections.abc import Mapping

TUNED_GLIBC_ENV: dict[str, str] = {
    "MALLOC_MMAP_THRESHOLD_": "4294967296",  # serve blocks up to 4 GiB from the heap, not fresh mmaps
    "MALLOC_TRIM_THRESHOLD_": "68719476736",  # never give the heap's top back to the OS
}
# jemalloc hands freed dirty pages back to the OS after a decay time (and a 36 MB block at once, measured
# here); -1 means never, which is what Intel's Extension for PyTorch tuning guide ("Memory Allocator") aims
# at with its very long decay times (its oversize_threshold:1 setting kept the faults, measured here).
JEMALLOC_CONF = "dirty_decay_ms:-1,muzzy_decay_ms:-1"
_GLIBC_KEYS = (
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_TOP_PAD_",
    "MALLOC_ARENA_MAX",
    "MALLOC_CONF",
    "TCMALLOC_RELEASE_RATE",
)
_PRELOADED = ("jemalloc", "tcmalloc")
# mallopt's parameters for those two variables (glibc's malloc.h). It takes an int, so 2 GiB is the largest
# threshold it sets: a single block over 2 GiB is still mapped after the switch (the variables allow 4 GiB),
# and a heap top over 2 GiB free is trimmed (never, with the variable).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MALLOPT_MAX = 2**31 - 1

SOURCE = (
    "PyTorch Performance Tuning Guide, CPU specific optimizations; Intel Extension for PyTorch tuning guide, "
    "Memory Allocator"
)


def current_allocator(environ: Mapping[str, str] | None = None) -> str:
    """Name this process's set-up: "default", "tuned" (glibc variables) or a preloaded allocator."""
    env = os.environ if environ is None else environ
    preload = env.get("LD_PRELOAD", "")
    for name in _PRELOADED:
        if name in preload:
            return name
    if any(env.get(k) for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")):
        return "tuned"
    return "default"


def preloadable(name: str) -> str | None:
    """The shared library of a replacement allocator ("jemalloc", "tcmalloc") if installed, else None."""
    for candidate in (name, f"{name}_minimal"):
        found = ctypes.util.find_library(candidate)
        if found:
            return found
    return None


def child_environment(setup: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The full environment of a child measured under `setup`: "default", "tuned" (glibc variables), or
    "jemalloc"/"tcmalloc" preloaded (LD_PRELOAD; the dynamic loader finds the library by its soname).

    Every set-up first strips the allocator settings the worker itself was started with, so comparisons are
    honest.
    """
    env = dict(os.environ if base is None else base)
    for key in _GLIBC_KEYS:
        env.pop(key, None)
    preload = [p for p in env.get("LD_PRELOAD", "").split(":") if p and not any(n in p for n in _PRELOADED)]
    if preload:
        env["LD_PRELOAD"] = ":".join(preload)
    else:
        env.pop("LD_PRELOAD", None)
    if setup == "tuned":
        env.update(TUNED_GLIBC_ENV)
    elif setup in _PRELOADED:
        library = preloadable(setup)
        if library is None:
            raise ValueError(f"allocator {setup!r} is not installed on this machine")
        env["LD_PRELOAD"] = ":".join([library, *preload])
        if setup == "jemalloc":
            env["MALLOC_CONF"] = JEMALLOC_CONF
        else:
            env["TCMALLOC_RELEASE_RATE"] = "0"  # never return freed pages to the OS
    elif setup != "default":
        raise ValueError(f"unknown allocator set-up {setup!r}: use default, tuned, jemalloc or tcmalloc")
    return env


def tune_in_process() -> bool:
    """Give this process's glibc malloc the tuned set-up's thresholds from now on (blocks up to 2 GiB from
    the heap, its top kept): what TUNED_GLIBC_ENV gives a process at its start. False where the C library
    has no mallopt (not glibc: neither do the variables mean anything there) or refuses a value."""
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    if not (mallopt(_M_MMAP_THRESHOLD, _MALLOPT_MAX) and mallopt(_M_TRIM_THRESHOLD, _MALLOPT_MAX)):
        return False
    os.environ.update(TUNED_GLIBC_ENV)  # what current_allocator reads, and what a child would inherit
    return True
