"""This machine's fp32 matrix-multiply throughput: the "physical limit" each network is compared with.

A large square fp32 GEMM is the best case for the BLAS that PyTorch dispatches to (MKL/oneDNN here), so its
FLOP/s at a given thread count is a practical ceiling for training steps, which are mostly GEMMs and
convolutions lowered to GEMMs. Networks report their achieved fraction of it.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class PeakConfig:
    size: int = 2048  # n of the n x n @ n x n product: 2 n^3 FLOPs (17 GFLOP at 2048)
    min_repeats: int = 5
    min_seconds: float = 1.0
    warmup: int = 2


@dataclass(frozen=True)
class Peak:
    threads: int
    device: str
    flops: float  # median FLOP/s over the repeats
    best_flops: float  # fastest repeat
    size: int
    repeats: int


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def measure_peak(threads: int, device: str = "cpu", config: PeakConfig | None = None) -> Peak:
    """fp32 matmul FLOP/s with `threads` intra-op threads (the thread count is restored afterwards)."""
    config = config or PeakConfig()
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        generator = torch.Generator().manual_seed(0)
        n = config.size
        a = torch.randn(n, n, generator=generator).to(device)  # [n, n]
        b = torch.randn(n, n, generator=generator).to(device)  # [n, n]
        out = torch.empty(n, n, device=device)  # reused so no allocation is timed
        for _ in range(config.warmup):
            torch.mm(a, b, out=out)
        _sync(device)
        times: list[float] = []
        started = time.perf_counter()
        while len(times) < config.min_repeats or time.perf_counter() - started < config.min_seconds:
            t0 = time.perf_counter()
            torch.mm(a, b, out=out)
            _sync(device)
            times.append(time.perf_counter() - t0)
        flop = 2.0 * n**3
        return Peak(
            threads=threads,
            device=device,
            flops=flop / statistics.median(times),
            best_flops=flop / min(times),
            size=n,
            repeats=len(times),
        )
    finally:
        torch.set_num_threads(previous)


if __name__ == "__main__":
    for t in range(1, (torch.get_num_threads() or 1) + 1):
        p = measure_peak(t)
        print(f"{t} thread(s): {p.flops / 1e9:.1f} GFLOP/s median, {p.best_flops / 1e9:.1f} best")
