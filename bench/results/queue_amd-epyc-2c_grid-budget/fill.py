"""What faulting in a fresh mapping costs on the host it runs on (README.md: the AMD EPYC VM's figures): a
64 MiB anonymous mapping filled by torch once fresh and once more (the difference is the kernel's faults
and zeroing), seven times after one, at 1 and 2 threads; milliseconds per MiB. It measures (a second).

Rerun: python bench/results/queue_amd-epyc-2c_grid-budget/fill.py
"""

from __future__ import annotations

import mmap
import statistics
import time

import torch

BYTES = 64 * 2**20


def once() -> float:
    """Milliseconds per MiB of the first fill over the second."""
    with mmap.mmap(-1, BYTES) as region:
        values = torch.frombuffer(region, dtype=torch.uint8)
        started = time.perf_counter()
        values.fill_(1)
        fresh = time.perf_counter() - started
        started = time.perf_counter()
        values.fill_(2)
        warm = time.perf_counter() - started
        del values  # the mapping cannot close while a tensor holds its buffer
    return (fresh - warm) * 1e3 / (BYTES / 2**20)


def main() -> None:
    for threads in (1, 2):
        torch.set_num_threads(threads)
        once()
        each = [once() for _ in range(7)]
        print(
            f"{threads} thread(s): median {statistics.median(each):.3f} ms per MiB "
            f"(each: {', '.join(f'{x:.3f}' for x in each)})"
        )


if __name__ == "__main__":
    main()
