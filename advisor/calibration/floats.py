"""Denormal floats flushed to zero in the processes that time or run training.

Denormals (below 1.2e-38 in float32) cost a microcode assist per operation on many x86 CPUs: a 2-layer LSTM
over 200 steps, whose gradients through time decay into them, trained 16x slower on the Intel VM, a GRU 4x
(bench/results/denormals_intel-xeon-2c/README.md). The harness's children (supervisor.supervise, the
profiler's, the DDP ranks) and the bench flush them, as a downloaded train.py does on a CPU
(export/pieces/setup.py), so that a measurement is what the user's training gets.

The mode is per thread, and an intra-op thread keeps the one it started with: it must be set before the
process's first parallel operator. It is not set at import: it is process-wide state (hypothesis, for one,
refuses to draw floats where denormals are flushed), which a web process importing the harness keeps as is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def flush_denormals() -> bool:
    """Flush denormals on this thread and on the intra-op threads started after it; False where the CPU
    cannot (torch supports x86 with SSE3 and AArch64)."""
    import torch  # here: the supervisor that imports this module runs no torch itself

    return bool(torch.set_flush_denormal(True))


def run_flushed(target: Callable[..., None], *args: Any) -> None:
    """A spawned child's entry: denormals flushed before target(*args) runs its first operator."""
    flush_denormals()
    target(*args)
