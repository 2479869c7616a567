"""Adam's step timed alone in a loop (warm: its four tensors stay in cache, as the profile times it) against
the same step after a 64 MB buffer is written (cold: its tensors come from memory, as after a backward that
moved more than the caches hold). One thread, medians of 30 steps, the median of three such runs. Run from
the repository root with the tuned allocator:

    python bench/results/generalise_amd-epyc-2c_evaluation-12/adam_cold.py
"""

from __future__ import annotations

import statistics
import time

import torch

PARAMETERS = (30_000, 100_000, 300_000, 1_000_000, 3_000_000, 12_000_000)


def step_seconds(parameters: int, cold: bool, flush: torch.Tensor, repeats: int = 30) -> float:
    weights = [torch.nn.Parameter(torch.randn(parameters // 2)) for _ in range(2)]
    optimizer = torch.optim.Adam(weights, lr=1e-3)
    for w in weights:
        w.grad = torch.randn_like(w)
    optimizer.step()  # its state (two moments per weight) made before timing
    times = []
    for _ in range(repeats):
        if cold:
            flush.add_(1.0)
        start = time.perf_counter()
        optimizer.step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    torch.set_num_threads(1)
    flush = torch.empty(16 * 1024 * 1024)  # 64 MB: more than this VM's caches
    for p in PARAMETERS:
        warm = statistics.median(step_seconds(p, False, flush) for _ in range(3))
        cold = statistics.median(step_seconds(p, True, flush) for _ in range(3))
        print(f"{p} warm {warm * 1e3:.3f} ms cold {cold * 1e3:.3f} ms cold/warm {cold / warm:.2f}")


if __name__ == "__main__":
    main()
