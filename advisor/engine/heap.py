"""A simulated process heap: the resident set a training step's allocations grow to, fragmentation included.

The live-tensor peak (timeline.py) is what batch fitting uses; the process's resident set grows further
because a freed block can only be reused by a later request that fits in it. With the harness's tuned glibc
thresholds (MALLOC_MMAP_THRESHOLD_ above any tensor, trimming off) every tensor comes from the one brk heap
and nothing is given back, so the resident set's growth over a run is the heap's high-water extent. The heap
is modelled as glibc's large-chunk path: a best-fit search of the free chunks, the unused remainder split
off, neighbours coalesced on free, the top extended when nothing fits. PyTorch's CPU allocator asks for
64-byte-aligned memory, so every block is the request plus glibc's 16-byte chunk header, rounded up to 64.
"""

from __future__ import annotations

from bisect import bisect_left, insort

ALIGN = 64  # c10's CPU allocator alignment
HEADER = 16  # glibc's chunk header on 64-bit
PERSISTENT = ("weights", "optimizer")  # live from their first step to the end of the run


def chunk(n: int) -> int:
    return -(-(n + HEADER) // ALIGN) * ALIGN


class Heap:
    """Best-fit free list over [0, top); `high` is the highest top reached (the resident-set growth)."""

    def __init__(self) -> None:
        self.free_starts: list[int] = []  # sorted starts of free chunks
        self.free_size: dict[int, int] = {}
        self.top = 0
        self.high = 0

    def alloc(self, n: int) -> int:
        size = chunk(n)
        best = -1
        for start in self.free_starts:  # best fit: the smallest free chunk that holds it
            s = self.free_size[start]
            if s >= size and (best < 0 or s < self.free_size[best]):
                best = start
                if s == size:
                    break
        if best < 0:
            if self.free_starts and self.free_starts[-1] + self.free_size[self.free_starts[-1]] == self.top:
                best = self.free_starts[-1]  # the free chunk at the top grows into fresh memory
                self._take(best)
                self.top = best
            start, self.top = self.top, self.top + size
            self.high = max(self.high, self.top)
            return start
        rest = self._take(best) - size
        if rest:
            self._put(best + size, rest)
        return best

    def free(self, start: int, n: int) -> None:
        size = chunk(n)
        i = bisect_left(self.free_starts, start)
        after = self.free_starts[i] if i < len(self.free_starts) else -1
        if after == start + size:  # coalesce with the following free chunk
            size += self._take(after)
        if i > 0:
            before = self.free_starts[i - 1]
            if before + self.free_size[before] == start:  # and with the preceding one
                start, size = before, size + self._take(before)
        self._put(start, size)

    def _take(self, start: int) -> int:
        self.free_starts.pop(bisect_left(self.free_starts, start))
        return self.free_size.pop(start)

    def _put(self, start: int, size: int) -> None:
        insort(self.free_starts, start)
        self.free_size[start] = size


Event = tuple[bool, str, int]  # (allocate?, category, bytes)


def resident_growth(events: list[Event], *, steps: int) -> int:
    """The heap's high-water extent over `steps` replays of one step's allocations and frees (`events`, in
    order). Weights and optimiser state are allocated on the first step only and stay; whatever else is
    still live at a step's end (gradients until the next zero_grad, the batch) is freed before the next
    step starts. A free of `n` bytes releases the latest live block of that size in its category, or, where
    the timeline frees several blocks as one sum, the latest blocks that add up to it."""
    heap = Heap()
    lazy: list[int] = []
    live: dict[str, list[tuple[int, int]]] = {}  # category -> [(start, bytes)] in allocation order
    for step in range(steps):
        for category, blocks in live.items():
            if category not in PERSISTENT:
                for start, n in blocks:
                    heap.free(start, n)
                blocks.clear()
        for allocate, category, n in events:
            blocks = live.setdefault(category, [])
            if allocate:
                if category == "optimizer":
                    if step == 0:
                        lazy.append(n)
                elif step == 0 or category not in PERSISTENT:
                    blocks.append((heap.alloc(n), n))
            elif category not in PERSISTENT:
                for start, size in _release(blocks, n):
                    heap.free(start, size)
        # torch.optim makes its state in the first step's update, after the backward pass
        live.setdefault("optimizer", []).extend((heap.alloc(n), n) for n in lazy)
        lazy.clear()
    return heap.high


def _release(blocks: list[tuple[int, int]], n: int) -> list[tuple[int, int]]:
    for i in range(len(blocks) - 1, -1, -1):
        if blocks[i][1] == n:
            return [blocks.pop(i)]
    taken: list[tuple[int, int]] = []
    for i in range(len(blocks) - 1, -1, -1):
        if n <= 0:
            break
        if blocks[i][1] <= n:
            n -= blocks[i][1]
            taken.append(blocks.pop(i))
    return taken
