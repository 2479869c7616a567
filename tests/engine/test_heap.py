"""The simulated heap behind the resident-set estimate (advisor/engine/heap.py) and resident_for."""

from __future__ import annotations

import pytest

from advisor.engine import memory_for, recommend, resident_for
from advisor.engine.heap import Event, Heap, chunk, resident_growth
from tests.calibration import candidates as C

MB = 1 << 20


@pytest.mark.parametrize(
    ("request_bytes", "chunk_bytes"),
    [(1, 64), (48, 64), (49, 128), (4096, 4160), (MB, MB + 64)],
)
def test_a_chunk_is_the_request_and_its_header_rounded_to_64_bytes(
    request_bytes: int, chunk_bytes: int
) -> None:
    assert chunk(request_bytes) == chunk_bytes


@pytest.mark.parametrize(
    ("script", "high"),
    [
        # a freed block is reused by a request that fits in it: the heap does not grow
        ([("a", 10 * MB), ("a", MB), ("f", 0), ("a", 5 * MB)], chunk(10 * MB) + chunk(MB)),
        # a request larger than the hole goes to the top
        ([("a", MB), ("a", MB), ("f", 0), ("a", 2 * MB)], 2 * chunk(MB) + chunk(2 * MB)),
        # two freed neighbours coalesce into one hole that holds the larger request
        ([("a", MB), ("a", MB), ("a", MB), ("f", 0), ("f", 1), ("a", 2 * MB)], 3 * chunk(MB)),
        # a free hole at the top grows into fresh memory rather than leaving a gap
        ([("a", MB), ("a", MB), ("f", 1), ("a", 3 * MB)], chunk(MB) + chunk(3 * MB)),
        # best fit: the smaller of two holes is used, the larger stays for the larger request
        (
            [("a", 4 * MB), ("a", 64), ("a", MB), ("a", 64), ("f", 0), ("f", 2), ("a", MB), ("a", 4 * MB)],
            chunk(4 * MB) + chunk(MB) + 2 * chunk(64),
        ),
    ],
)
def test_the_heap_reuses_splits_and_coalesces_free_chunks(script: list[tuple[str, int]], high: int) -> None:
    heap, blocks = Heap(), list[tuple[int, int]]()
    for op, n in script:
        if op == "a":
            blocks.append((heap.alloc(n), n))
        else:
            heap.free(*blocks[n])
    assert heap.high == high


def test_state_made_in_the_first_update_pushes_the_next_steps_activations_up() -> None:
    events: list[Event] = [
        (True, "weights", MB),
        (True, "optimizer", MB),  # torch.optim makes it in the first step's update
        (True, "activations", 8 * MB),
        (False, "activations", 8 * MB),
    ]
    one, four = resident_growth(events, steps=1), resident_growth(events, steps=4)
    assert one == chunk(MB) + chunk(8 * MB)  # the state reuses the freed activations' space
    # the state sits where the activations began: the next step's no longer fit below the top
    assert four == 2 * chunk(MB) + chunk(8 * MB)


def test_a_sum_freed_at_once_releases_the_blocks_that_make_it() -> None:
    events: list[Event] = [
        (True, "activations", MB),
        (True, "activations", 2 * MB),
        (False, "activations", 3 * MB),
        (True, "workspace", 3 * MB),
    ]
    assert resident_growth(events, steps=1) == chunk(MB) + chunk(2 * MB)


@pytest.mark.parametrize("family", sorted(C.ALL_FAMILIES))
@pytest.mark.parametrize("batch", [8, 128])
def test_the_resident_set_is_at_least_the_live_peak(family: str, batch: int) -> None:
    candidate = C.ALL_FAMILIES[family]()
    live = memory_for(candidate, batch_size=batch)["total"]
    resident = resident_for(candidate, batch_size=batch)
    assert live <= resident < 3 * live
    assert resident_for(candidate, batch_size=batch, steps=1) <= resident


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
