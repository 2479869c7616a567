"""`python -m bench memory --trace FAMILY [--batch B]`: glibc's own allocations over training a network.

A fresh process with the harness's tuned glibc thresholds loads bench/malloc_trace.c (compiled with the
system's `cc`) with LD_PRELOAD, pays the runtime's fixed cost (`pay_fixed_cost()`, as `bench memory`'s
child does), then records every malloc, memalign and free, with the brk heap's top after each, over building
the first recommended candidate of FAMILY and training it four steps: what `rss_training_growth_bytes`
measures. It prints how far glibc's top grew against the simulated heap (advisor/engine/heap.py) replaying
the *same* sequence (so the heap model is checked apart from the account), the same replay of only the
requests of 4 KiB or more, the engine's `resident_for`, and the step's allocations of 16 KiB or more the
account does not make (kernel temporaries and transients outside the live peak).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from advisor.engine.heap import ALIGN, MALLOC_ALIGN, Heap

_SOURCE = Path(__file__).with_name("malloc_trace.c")
_RECORD = 32  # bytes per event: kind, address, size, top (four uint64)
FREE, MALLOC, MEMALIGN, MARK = 0, 1, 2, 9
Event = tuple[int, int, int, int]


def build(directory: Path) -> Path | None:
    """Compile the shim into `directory`; None where there is no C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    library = directory / "libmalloc_trace.so"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(library), str(_SOURCE)], check=True)
    return library


def read(path: Path) -> list[Event]:
    data = path.read_bytes()
    words = memoryview(data).cast("Q")
    return [tuple(words[i : i + 4]) for i in range(0, len(words), 4)]  # type: ignore[misc]


def replay(events: list[Event], *, smallest: int = 0) -> dict[str, int]:
    """glibc's recorded top growth and in-use peak, and heap.py's extent replaying the same requests of
    `smallest` bytes or more (frees matched by address; blocks made before the trace are left out)."""
    top0 = events[0][3] if events else 0
    heap = Heap(base=top0 % ALIGN)
    placed: dict[int, int] = {}
    sizes: dict[int, int] = {}
    in_use = peak = top = 0
    for kind, addr, size, brk in events:
        top = max(top, brk - top0)
        if kind in (MALLOC, MEMALIGN):
            sizes[addr] = size
            in_use += size
            peak = max(peak, in_use)
            if size >= smallest:
                placed[addr] = heap.alloc(size, ALIGN if kind == MEMALIGN else MALLOC_ALIGN)
        elif kind == FREE and addr in sizes:
            in_use -= sizes.pop(addr)
            if addr in placed:
                heap.free(placed.pop(addr))
    return {"glibc_top": top, "in_use_peak": peak, "simulated": heap.high}


def step_sizes(events: list[Event], step: int, smallest: int) -> Counter[int]:
    """Sizes of the requests of `smallest` bytes or more made during training step `step` (0-based)."""
    current, found = -1, Counter[int]()
    for kind, _, size, _ in events:
        if kind == MARK:
            current = size
        elif current == step and kind in (MALLOC, MEMALIGN) and size >= smallest:
            found[size] += 1
    return found


def _child(candidate: dict[str, Any], batch: int, library: str, out: str) -> dict[str, Any]:
    import torch

    from advisor.calibration.memory import peak_rss_bytes, reset_peak_rss, rss_bytes
    from advisor.calibration.resident import pay_fixed_cost
    from advisor.calibration.steps import make_step

    shim = ctypes.CDLL(library)
    shim.trace_off.restype = ctypes.c_uint64
    torch.set_num_threads(1)
    pay_fixed_cost()
    base = rss_bytes()
    reset_peak_rss()
    shim.trace_on()
    step = make_step(candidate, torch.device("cpu"))
    batch_tensors = step.make_batch(batch)
    for i in range(4):
        shim.trace_mark(ctypes.c_uint64(i))
        step.refill(batch_tensors)
        step.run(batch_tensors)
    shim.trace_mark(ctypes.c_uint64(99))
    shim.trace_off(out.encode())
    return {"rss_growth": (peak_rss_bytes() or rss_bytes()) - base}


def trace(candidate: dict[str, Any], batch: int) -> dict[str, Any] | None:
    """Trace one configuration in a fresh process; None where no C compiler can build the shim."""
    from advisor.calibration.allocator import TUNED_GLIBC_ENV
    from advisor.engine import memory as engine

    with tempfile.TemporaryDirectory() as tmp:
        library = build(Path(tmp))
        if library is None:
            return None
        path = Path(tmp) / "events.bin"
        env = {**os.environ, **TUNED_GLIBC_ENV, "LD_PRELOAD": str(library)}
        args = [sys.executable, "-m", "bench.malloc_trace", str(batch), str(library), str(path)]
        out = subprocess.run(
            args, input=json.dumps(candidate), capture_output=True, text=True, env=env, check=True
        ).stdout
        measured = json.loads(out.strip().splitlines()[-1])
        events = read(path)
    step = engine._Step(candidate, batch, "cpu", record=True)
    engine.replay(step)
    account = Counter(n for allocate, category, n in step.t.events or [] if allocate and n >= 16384)
    return {
        "family": candidate["family"],
        "batch": batch,
        **measured,
        **replay(events),
        "simulated_4k": replay(events, smallest=4096)["simulated"],
        "resident_for": engine.resident_for(candidate, batch_size=batch),
        "live_estimate": engine.memory_for(candidate, batch_size=batch)["total"],
        # the second step's requests of 16 KiB or more beyond the account's (whose first step has the
        # weights and the batch too, so only the surplus counts)
        "not_in_account": sorted((step_sizes(events, 1, 16384) - account).items()),
    }


def report(result: dict[str, Any] | None) -> str:
    if result is None:
        return "no C compiler: the malloc trace needs cc"
    mb = {k: result[k] / 1e6 for k in result if isinstance(result[k], int) and k != "batch"}
    missing = ", ".join(f"{n}x {size / 1e6:.3f}" for size, n in result["not_in_account"])
    return (
        f"{result['family']} batch {result['batch']}: rss growth {mb['rss_growth']:.1f} MB, glibc top "
        f"{mb['glibc_top']:.1f} MB, in-use peak {mb['in_use_peak']:.1f} MB; heap.py on glibc's sequence "
        f"{mb['simulated']:.1f} MB (requests >= 4 KiB only: {mb['simulated_4k']:.1f} MB); live estimate "
        f"{mb['live_estimate']:.1f} MB, resident_for {mb['resident_for']:.1f} MB\n"
        f"  step 2's requests >= 16 KiB not in the account (count x MB): {missing or 'none'}"
    )


if __name__ == "__main__":
    result = _child(json.load(sys.stdin), int(sys.argv[1]), sys.argv[2], sys.argv[3])
    print(json.dumps(result))
