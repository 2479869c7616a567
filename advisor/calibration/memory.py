"""Process memory on Linux: resident set, its high-water mark (resettable), a real memory cap, and the peak
of live tensor bytes during a training step as PyTorch itself sees it (LiveTensors).

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
import weakref
from collections.abc import Callable
from typing import Any

import psutil
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

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


class LiveTensors(TorchDispatchMode):
    """Live tensor bytes as PyTorch sees them: every storage an operator reads or writes is counted from the
    first time it is seen until it is freed (a weakref finalizer on the storage, which PyTorch keeps as one
    Python object for as long as the storage lives). Autograd's backward runs through the same dispatcher,
    so what it saves and the gradients it makes are counted; buffers a kernel allocates for itself are not
    (they are what the resident-set growth adds)."""

    def __init__(self) -> None:
        TorchDispatchMode.__init__(
            self
        )  # named, not super(): mypy knows it as torch's (untyped_calls_exclude)
        self.live = 0
        self.peak = 0
        self._sizes: dict[int, int] = {}

    def _track(self, value: Any) -> None:
        if not isinstance(value, torch.Tensor) or value.is_meta:
            return
        storage = value.untyped_storage()
        key = storage._cdata
        if key in self._sizes:
            return
        size = storage.nbytes()
        self._sizes[key] = size
        self.live += size
        self.peak = max(self.peak, self.live)
        weakref.finalize(storage, self._free, key, size)

    def _free(self, key: int, size: int) -> None:
        if self._sizes.pop(key, None) is not None:
            self.live -= size

    def __torch_dispatch__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        for value in tree_leaves((args, kwargs)):
            self._track(value)
        out = func(*args, **(kwargs or {}))
        for value in tree_leaves(out):
            self._track(value)
        return out


def live_tensor_peak(step: Callable[[], None]) -> int:
    """The peak of live tensor bytes during one training step, everything it touches included (weights,
    gradients, optimiser state, the batch, what autograd saves). The step runs twice: the first makes every
    long-lived storage known (optimiser state is first touched after the backward pass), the second is
    measured from there."""
    tracker = LiveTensors()
    with tracker:
        step()
        tracker.peak = tracker.live
        step()
    return tracker.peak
