"""Bytes a training step allocates in blocks over glibc's largest dynamic mmap threshold (32 MiB on 64-bit:
under the default allocator each such block is a fresh mapping, faulted in page by page every step), from
the memory model's replay of the step (engine.memory, timeline events), for the networks of allocators.py.
Nothing is measured.

Rerun: python bench/results/queue_intel-xeon-2c_grid/mapped.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from allocators import NETWORKS, candidate

from advisor.engine.memory import _Step, replay

BATCHES = (32, 128, 512, 2048)
CEILING = 32 * 2**20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit


def allocations(cand: dict[str, Any], batch: int) -> list[tuple[str, int]]:
    """Each block one training step allocates, in order: its category (engine.timeline) and bytes."""
    step = _Step(cand, batch, "cpu", record=True)  # type: ignore[arg-type]
    replay(step)
    return [(category, n) for allocated, category, n in step.t.events or [] if allocated]


def main() -> None:
    print("MB a step allocates in blocks over 32 MiB / in all")
    print(f"{'network':<24}" + "".join(f"{b:>14}" for b in BATCHES))
    for name in NETWORKS:
        cells = []
        for b in BATCHES:
            sizes = [n for _, n in allocations(candidate(name), b)]
            cells.append(f"{sum(n for n in sizes if n > CEILING) / 2**20:.0f} / {sum(sizes) / 2**20:.0f}")
        print(f"{name:<24}" + "".join(f"{c:>14}" for c in cells))


if __name__ == "__main__":
    main()
