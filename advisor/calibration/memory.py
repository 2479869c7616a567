"""Process memory on Linux: resident set, its high-water mark (resettable), and a real memory cap.

Peak memory on CPU is the growth of the resident set over the configuration: the kernel's high-water mark
VmHWM, reset before the configuration by writing 5 to /proc/self/clear_refs (Linux >= 4.0), minus the resident
set
before it. Where that reset is not allowed we fall back to sampling the resident set after each step.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
import re
import resource
from typing import Any

import psutil

_STATUS = "/proc/self/status"


def _status_kb(key: str) -> int | None:
    try:
        with open(_STATUS) as f:
            m = re.search(rf"^{key}:\s+(\d+)\s+kB", f.read(), re.MULTILINE)
    except OSError:
        return None
    return int(m.group(1)) * 1024 if m else None


def rss_bytes() -> int:
    return int(psutil.Process().memory_info().rss)


def reset_peak_rss() -> bool:
    """Reset the kernel's resident-set high-water mark; False where not permitted."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def peak_rss_bytes() -> int | None:
    return _status_kb("VmHWM")


def release_free_memory() -> None:
    """Collect garbage, hand glibc's free heap pages back: the next configuration starts from a clean RSS."""
    # Young generations only: a configuration's garbage is young, and a full collection scans all of torch's
    # module objects (about 0.6 s here), which would dwarf a short measurement.
    gc.collect(1)
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    """glibc's malloc_trim, looked up once (find_library runs ldconfig), or None where libc is not glibc."""
    name = ctypes.util.find_library("c")
    if name:
        with contextlib.suppress(OSError, AttributeError):
            return ctypes.CDLL(name).malloc_trim
    return None


def limit_data_memory(extra_bytes: int) -> int:
    """Cap this process's data memory (heap and private mappings: where tensors live) at its current size
    plus `extra_bytes`, via RLIMIT_DATA. An allocation past it fails for real: torch raises "can't allocate
    memory". Returns the cap in bytes."""
    current = _status_kb("VmData") or rss_bytes()
    cap = current + int(extra_bytes)
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    return cap


def total_ram_bytes() -> int:
    return int(psutil.virtual_memory().total)
