"""The simulated heap behind the resident-set estimate (advisor/engine/heap.py) and resident_for."""

from __future__ import annotations

import pytest

from advisor.engine import memory_for, recommend, resident_for
from advisor.engine.codepages import code_pages
from advisor.engine.heap import ALIGN, MALLOC_ALIGN, Event, Heap, chunk, resident_growth
from tests.calibration import candidates as C

MB = 1 << 20


@pytest.mark.parametrize(
    ("request_bytes", "chunk_bytes"),
    [(1, 32), (24, 32), (25, 48), (4096, 4112), (MB, MB + 16)],
)
def test_a_chunk_is_the_request_and_its_size_field_rounded_to_16_bytes(
    request_bytes: int, chunk_bytes: int
) -> None:
    assert chunk(request_bytes) == chunk_bytes


@pytest.mark.parametrize(
    ("script", "grows"),
    [
        # memalign asks for the chunk plus 64 + 32 bytes: a tensor does not fit the hole its twin left
        ([("a", MB), ("s", 64), ("f", 0), ("a", MB)], True),
        # a smaller request does
        ([("a", 2 * MB), ("s", 64), ("f", 0), ("a", MB)], False),
        # and two freed neighbours coalesce into a hole that holds their twin
        ([("a", MB), ("a", MB), ("s", 64), ("f", 0), ("f", 1), ("a", MB)], False),
        # a free chunk bordering the top becomes part of it: the next request starts there
        ([("a", MB), ("a", MB), ("f", 1), ("a", MB)], False),
        # best fit: the smaller hole takes the small request, the larger stays for the larger one
        (
            [
                ("a", 4 * MB),
                ("s", 64),
                ("a", 2 * MB),
                ("s", 64),
                ("f", 0),
                ("f", 2),
                ("a", MB),
                ("a", 3 * MB),
            ],
            False,
        ),
    ],
)
def test_the_heap_pads_reuses_splits_and_coalesces_as_glibc_does(
    script: list[tuple[str, int]], grows: bool
) -> None:
    heap, blocks = Heap(), list[int]()
    for i, (op, n) in enumerate(script):
        if i == len(script) - 1:
            before = heap.high
        if op in "as":  # a tensor (memalign), a small object (malloc)
            blocks.append(heap.alloc(n, ALIGN if op == "a" else MALLOC_ALIGN))
        else:
            heap.free(blocks[n])
    assert (heap.high > before) is grows


@pytest.mark.parametrize("base", [0, 16, 32, 48])
def test_every_tensor_is_64_byte_aligned_and_freeing_all_empties_the_heap(base: int) -> None:
    heap = Heap(base=base)
    sizes = [100, 4096, 3 * MB, 24, 70_000, MB + 1]
    starts = [heap.alloc(n, ALIGN if n > 24 else MALLOC_ALIGN) for n in sizes]
    assert all((s + 16) % ALIGN == 0 for s, n in zip(starts, sizes, strict=True) if n > 24)
    for s in starts:
        heap.free(s)
    assert heap.top == heap.base and not heap.free_starts  # everything coalesced back into the top


def test_state_made_in_the_first_update_pushes_the_next_steps_activations_up() -> None:
    events: list[Event] = [
        (True, "weights", MB),
        (True, "optimizer", MB),  # torch.optim makes it in the first step's update
        (True, "activations", 8 * MB),
        (False, "activations", 8 * MB),
    ]
    one, four = resident_growth(events, steps=1), resident_growth(events, steps=4)
    assert one >= chunk(MB) + chunk(8 * MB)
    # the state sits where the activations began: the next step's no longer fit below the top
    assert four >= one + chunk(MB)


def test_a_sum_freed_at_once_releases_the_blocks_that_make_it() -> None:
    events: list[Event] = [(True, "activations", MB), (True, "activations", 2 * MB)]
    both = resident_growth(events, steps=1)
    events += [(False, "activations", 3 * MB), (True, "workspace", 3 * MB)]
    assert resident_growth(events, steps=1) == both  # the 3 MB reuse what the two left


@pytest.mark.parametrize("family", sorted(C.ALL_FAMILIES))
@pytest.mark.parametrize("batch", [8, 128])
def test_the_resident_set_is_at_least_the_live_peak(family: str, batch: int) -> None:
    candidate = C.ALL_FAMILIES[family]()
    live = memory_for(candidate, batch_size=batch)["total"]
    resident = resident_for(candidate, batch_size=batch)
    heap = resident - code_pages(candidate)
    assert live <= heap < 3 * live + MB  # a tiny network's companions and fragments: well under 1 MB
    assert resident_for(candidate, batch_size=batch, steps=1) <= resident


@pytest.mark.parametrize(
    ("kinds", "loss", "pages"),
    [
        # the groups count once, at their largest member present
        (["Linear", "ReLU"], "cross_entropy", 0),
        (["Conv2d", "ReLU", "MaxPool2d", "Linear"], "cross_entropy", 9.55e6),
        (["Conv2d", "ConvTranspose2d"], "mse", 10.9e6 + 0.92e6),
        (["Embedding", "LSTM", "RNN"], "cross_entropy", 0.6e6 + 8.6e6),
    ],
)
def test_library_code_counts_each_kernel_group_once(kinds: list[str], loss: str, pages: float) -> None:
    candidate = {"networks": {"model": [{"kind": k, "args": {}} for k in kinds]}, "training": {"loss": loss}}
    assert code_pages(candidate) == round(pages)


def test_it_gives_every_cpu_candidate_a_resident_set_and_none_on_a_gpu() -> None:
    spec = {
        "task": "vision",
        "hardware": {"cpu_cores": 4, "ram_gb": 16},
        "data": {"examples": 1000, "input_shape": [1, 28, 28], "outputs": 10},
    }
    for c in recommend(spec)["candidates"]:
        assert c["resident_bytes"] >= c["memory_bytes"]["total"]
    spec["hardware"] = {"cpu_cores": 4, "ram_gb": 16, "gpu": "gtx-1080"}
    assert all(c["resident_bytes"] is None for c in recommend(spec)["candidates"])
