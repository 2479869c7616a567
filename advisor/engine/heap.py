"""A simulated process heap: the resident set a training step's allocations grow to, fragmentation included.

The live-tensor peak (timeline.py) is what batch fitting uses; the process's resident set grows further
because a freed block can only be reused by a later request that fits in it. With the harness's tuned glibc
thresholds (MALLOC_MMAP_THRESHOLD_ above any tensor, trimming off) every tensor comes from the one brk heap
and nothing is given back, so the resident set's growth over a run is the heap's high-water extent. The heap
is modelled as glibc 2.36's large-chunk path: a best-fit search of the free chunks, the unused remainder split
off, neighbours coalesced on free, a free chunk bordering the top merged into it, the top extended when
nothing fits. PyTorch's CPU allocator calls posix_memalign(64, n), and glibc's memalign asks its malloc for
the chunk plus the alignment plus a minimum chunk (n + 8 rounded to 16, + 64 + 32), then gives back the
misaligned front and the unused tail: so a tensor never fits the hole its twin of the same size left, unless
that hole has coalesced with a neighbour (measured: bench/malloc_trace.py replays glibc's own sequence of
a training step on this heap; bench/results/memory_amd-epyc-2c_repeats/README.md).
"""

from __future__ import annotations

from bisect import bisect_left, insort

ALIGN = 64  # c10's CPU allocator: posix_memalign(64, n)
SIZE_SZ = 8  # glibc's per-chunk size field on 64-bit
MALLOC_ALIGN = 16
MINSIZE = 32  # glibc's smallest chunk on 64-bit
PERSISTENT = ("weights", "optimizer")  # live from their first step to the end of the run
# A tensor comes with a small block, made right after its memory and freed just before it (measured with
# bench/malloc_trace.py: a mean of 1.03 requests under 64 bytes per tensor of 4 KiB or more, made and freed
# within four calls of it for 65-98% of the tensors of cnn, dn, vae, gan and rnn, 22% for the LSTM's, whose
# oneDNN kernel makes its own buffers; 24 bytes most often, 40-100% of them; which C++ object it is was not
# identified). It takes the smallest free chunk, one of the fragments memalign leaves beside other tensors,
# and so stops those from coalescing while it lives.
COMPANION = 24


def chunk(n: int) -> int:
    """glibc's chunk for an n-byte request (request2size): n plus the size field, rounded up to 16."""
    return max(MINSIZE, -(-(n + SIZE_SZ) // MALLOC_ALIGN) * MALLOC_ALIGN)


class Heap:
    """Best-fit free list over [base, top); `high` is the largest extent reached (the resident-set growth).
    `base`: where the top starts, modulo 64 (glibc's chunks are 16-aligned, the user's pointer is the chunk
    plus 16, so the front memalign gives back depends on it)."""

    def __init__(self, base: int = 0) -> None:
        self.free_starts: list[int] = []  # sorted starts of free chunks
        self.free_size: dict[int, int] = {}
        self.used: dict[int, int] = {}  # start -> chunk size of every block handed out
        self.base = self.top = base
        self.high = 0

    def alloc(self, n: int, align: int = ALIGN) -> int:
        """Place an n-byte request; `align` above 16 goes through memalign's over-request."""
        nb = chunk(n)
        if align <= MALLOC_ALIGN:
            p, size = self._malloc(nb)
        else:
            p, size = self._malloc(nb + align + MINSIZE)
            aligned = -(-(p + 2 * SIZE_SZ) // align) * align - 2 * SIZE_SZ
            if aligned != p:
                if aligned - p < MINSIZE:  # the front must be a chunk of its own
                    aligned += align
                self._release(p, aligned - p)
                size -= aligned - p
                p = aligned
            if size > nb + MINSIZE:  # the tail goes back
                self._release(p + nb, size - nb)
                size = nb
        self.used[p] = size
        return p

    def free(self, start: int) -> None:
        self._release(start, self.used.pop(start))

    def _malloc(self, size: int) -> tuple[int, int]:
        best = -1
        for start in self.free_starts:  # best fit: the smallest free chunk that holds it
            s = self.free_size[start]
            if s >= size and (best < 0 or s < self.free_size[best]):
                best = start
                if s == size:
                    break
        if best < 0:  # from the top, extended as needed
            start, self.top = self.top, self.top + size
            self.high = max(self.high, self.top - self.base)
            return start, size
        whole = self._take(best)
        if whole - size >= MINSIZE:  # the remainder stays free
            self._put(best + size, whole - size)
            return best, size
        return best, whole

    def _release(self, start: int, size: int) -> None:
        i = bisect_left(self.free_starts, start)
        if i < len(self.free_starts) and self.free_starts[i] == start + size:  # coalesce forward
            size += self._take(start + size)
        if i > 0:
            before = self.free_starts[i - 1]
            if before + self.free_size[before] == start:  # and backward
                start, size = before, size + self._take(before)
        if start + size == self.top:  # a free chunk bordering the top becomes part of it
            self.top = start
            return
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
    companion: dict[int, int] = {}  # a tensor's start -> its companion's

    def alloc(n: int) -> tuple[int, int]:
        start = heap.alloc(n)
        companion[start] = heap.alloc(COMPANION, MALLOC_ALIGN)
        return start, n

    def free(start: int) -> None:
        heap.free(companion.pop(start))
        heap.free(start)

    for step in range(steps):
        for category, blocks in live.items():
            if category not in PERSISTENT:
                for start, _ in blocks:
                    free(start)
                blocks.clear()
        for allocate, category, n in events:
            blocks = live.setdefault(category, [])
            if allocate:
                if category == "optimizer":
                    if step == 0:
                        lazy.append(n)
                elif step == 0 or category not in PERSISTENT:
                    blocks.append(alloc(n))
            elif category not in PERSISTENT:
                for start, _ in _release(blocks, n):
                    free(start)
        # torch.optim makes its state in the first step's update, after the backward pass
        live.setdefault("optimizer", []).extend(alloc(n) for n in lazy)
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
