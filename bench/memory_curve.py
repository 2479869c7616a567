"""`python -m bench memory --curve FAMILY [--batch B] [--steps N]`: how the reference itself behaves.

In a fresh process with the harness's tuned glibc thresholds, the first recommended candidate of a family is
built and trained for N steps twice, after a tiny unrelated network has paid the runtime's fixed cost
(`pay_fixed_cost()`, as `bench memory`'s child does). Step 0 is the first run at its end: the RSS reference
(`rss_training_growth_bytes`: a fresh process's growth, no trim before it). After each step of the second
run it prints the resident set's growth (VmHWM after a reset,
less the resident set before) next to glibc's own counts (mallinfo2): how far the brk heap grew (`arena`)
and the peak of bytes malloc had handed out (`in use`, sampled around every operator). Growth above the
arena's is pages the first run's trimmed holes give back when reused; arena above in-use is fragmentation.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from typing import Any


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (k, ctypes.c_size_t)
        for k in [
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        ]
    ]


def _child(candidate: dict[str, Any], batch: int, steps: int, trim: bool) -> dict[str, Any]:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from advisor.calibration.memory import peak_rss_bytes, release_free_memory, reset_peak_rss, rss_bytes
    from advisor.calibration.resident import pay_fixed_cost
    from advisor.calibration.steps import make_step
    from advisor.engine import memory_for, resident_for

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2

    class Sampled(TorchDispatchMode):  # type: ignore[no-untyped-call,misc]
        def __init__(self) -> None:
            super().__init__()  # type: ignore[no-untyped-call]
            self.arena = self.used = 0

        def sample(self) -> None:
            m = libc.mallinfo2()
            self.arena, self.used = max(self.arena, m.arena), max(self.used, m.uordblks)

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            self.sample()
            out = func(*args, **(kwargs or {}))
            self.sample()
            return out

    torch.set_num_threads(1)
    pay_fixed_cost()
    rows: list[dict[str, float]] = []
    for run in (1, 2):
        if trim and run == 2:  # as measure() does; without it the first run's free pages stay resident
            release_free_memory()
        base, start = rss_bytes(), libc.mallinfo2()
        reset_peak_rss()
        mode = Sampled()
        with mode:
            step = make_step(candidate, torch.device("cpu"))
            batch_tensors = step.make_batch(batch)
            for i in range(steps):
                step.refill(batch_tensors)
                step.run(batch_tensors)
                if run == 2 or i == steps - 1:
                    rows.append(
                        {
                            "step": i + 1 if run == 2 else 0,  # 0: the first run, at its end
                            "rss_growth_mb": ((peak_rss_bytes() or rss_bytes()) - base) / 1e6,
                            "arena_growth_mb": (mode.arena - start.arena) / 1e6,
                            "in_use_growth_mb": (mode.used - start.uordblks) / 1e6,
                        }
                    )
        step = batch_tensors = None  # type: ignore[assignment]
    return {
        "family": candidate["family"],
        "batch": batch,
        "live_estimate_mb": memory_for(candidate, batch_size=batch)["total"] / 1e6,
        "resident_estimate_mb": resident_for(candidate, batch_size=batch) / 1e6,
        "steps": rows,
    }


def curve(candidate: dict[str, Any], batch: int, steps: int, *, trim: bool = True) -> int:
    """Runs `candidate` (a recommendation's candidate) in a fresh process; it travels on stdin."""
    from advisor.calibration.allocator import TUNED_GLIBC_ENV

    env = {**os.environ, **TUNED_GLIBC_ENV}
    args = [sys.executable, "-m", "bench.memory_curve", str(batch), str(steps), str(int(trim))]
    out = subprocess.run(
        args, input=json.dumps(candidate), capture_output=True, text=True, env=env, check=True
    ).stdout
    family = candidate["family"]
    result = json.loads(out.strip().splitlines()[-1])
    print(
        f"{family} batch {batch}{'' if trim else ' (no trim)'}: "
        f"live estimate {result['live_estimate_mb']:.1f} MB, "
        f"resident estimate {result['resident_estimate_mb']:.1f} MB"
    )
    print(f"{'step':>4} {'rss growth':>11} {'arena':>9} {'in use':>9}   (step 0: the whole first run)")
    for r in result["steps"]:
        rss, arena, used = r["rss_growth_mb"], r["arena_growth_mb"], r["in_use_growth_mb"]
        print(f"{r['step']:>4} {rss:>10.1f}M {arena:>8.1f}M {used:>8.1f}M")
    return 0


if __name__ == "__main__":
    print(json.dumps(_child(json.load(sys.stdin), int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1")))
