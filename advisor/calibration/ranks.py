"""What a data-parallel rank gets and what it sends back: scaling.py makes the payloads and reads the figures,
distributed.py (torch) runs the rank. Declarations only, so that scaling.py stays free of torch until a rank
starts."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from advisor.contract import Trainable


class RankPayload(TypedDict):
    """One rank of a `world_size`-rank job on this host (scaling.rank_payloads)."""

    candidate: Trainable
    device: str  # "cpu" or "cuda"
    world_size: int
    store_host: str
    store_port: int
    batch_size: int  # per rank
    threads: int  # CPU threads of this rank
    sync: str  # "sync" or "mixed"
    mixed_group: int
    average_period: int
    min_iterations: int
    min_seconds: float
    warmup: int
    timeout_s: float  # how long a collective may wait for a peer
    rendezvous_s: float  # how long the ranks may take to gather at the store
    rank: int
    local_rank: int
    local_world_size: int
    gpu: int | None  # its CUDA index; None: local_rank
    parent_pid: NotRequired[int]  # set as the process starts (scaling.run_ranks)


class RankFigures(TypedDict):
    """What a rank measured (distributed.participate)."""

    rank: int
    family: str
    seconds_per_step: float
    iqr: float
    iterations: int
    allreduce_seconds: float
    user_seconds_per_step: float
    system_seconds_per_step: float
    threads: int
    allocator: str
    device: str
