"""One rank of a data-parallel calibration: the candidate's training step under DistributedDataParallel.

Runs in its own process (scaling.py starts it with the "spawn" method, one per device or per share of the CPU
cores). It joins the job's process group through a torch.distributed TCPStore (rank 0 hosts it, the others
connect to the address it was given), wraps each of the candidate's networks in DDP (gloo on the CPU, NCCL on
CUDA, one GPU per rank), and times whole steps the way measure.py does: warm-up steps discarded, the batch
redrawn in place before every step's clock starts, median and IQR of the per-step times.

Every rank must run the same number of steps, or the last collective of the longest waits forever: the ranks
agree on the count after the warm-up (the slowest rank's last warm-up step against `min_seconds`).

The all-reduce time is measured by a communication hook that wraps torch's own (`allreduce_hook`, or
`post_localSGD_hook` for "mixed"): for each gradient bucket, from the moment DDP hands it over to the moment
its all-reduce completes (host clock for gloo; CUDA events on the stream for NCCL), summed per step. Buckets
are reduced while backward still runs, so this is the communication's duration, not only what it adds to the
step; the step time at world size N against world size 1 gives the latter.

"mixed" is local SGD after Lin et al. (2020) as torch ships it: gradients are all-reduced only within groups
of `mixed_group` ranks (post_localSGD_hook after the warm-up), and the whole world averages its parameters
every `average_period` steps (PeriodicModelAverager); that averaging is timed as all-reduce too.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, post_localSGD_hook
from torch.distributed.algorithms.model_averaging.averagers import PeriodicModelAverager
from torch.nn.parallel import DistributedDataParallel

from advisor.calibration.allocator import current_allocator
from advisor.calibration.layers import build
from advisor.calibration.measure import summarise_samples, time_steps
from advisor.calibration.ranks import RankFigures, RankPayload
from advisor.calibration.steps import Batch, make_step
from advisor.calibration.supervisor import Event
from advisor.engine.families import family_of

MAX_STEPS = 10_000


def backend_for(device: str) -> str:
    return "nccl" if device.startswith("cuda") else "gloo"


def rank_setup(payload: RankPayload) -> tuple[str, str, dict[str, str]]:
    """A rank's backend, its torch device ("cpu", or "cuda:<gpu>": one GPU of its own) and the variables
    torchrun would have set for it. Libraries (and NCCL's own logs) read LOCAL_RANK and friends; the NCCL_*
    and GLOO_* settings come from the worker's environment untouched (allocator.child_environment keeps
    them)."""
    device = str(payload["device"])
    local = int(payload["local_rank"])
    if device.startswith("cuda"):
        gpu = payload.get("gpu")
        device = f"cuda:{local if gpu is None else int(gpu)}"
    env = {
        "RANK": str(int(payload["rank"])),
        "LOCAL_RANK": str(local),
        "WORLD_SIZE": str(int(payload["world_size"])),
        "LOCAL_WORLD_SIZE": str(int(payload.get("local_world_size", 1))),
    }
    return backend_for(device), device, env


class CommClock:
    """Wraps a DDP communication hook; records each bucket's all-reduce from hand-over to completion."""

    def __init__(self, dev: torch.device) -> None:
        self.dev = dev
        self.cuda = dev.type == "cuda"
        self._lock = threading.Lock()
        self._step: list[Any] = []  # this step's (start, end): floats, or CUDA event pairs
        self.steps: list[list[Any]] = []

    def add(self, start: Any, end: Any) -> None:
        with self._lock:
            self._step.append((start, end))

    def now(self) -> Any:
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            # The rank's own device's current stream, named: DDP's hook and the future's callback run on
            # other threads, whose current device need not be this rank's GPU.
            event.record(torch.cuda.current_stream(self.dev))
            return event
        return time.perf_counter()

    def wrap(self, hook: Callable[[Any, Any], torch.futures.Future[torch.Tensor]]) -> Any:
        def timed(state: Any, bucket: Any) -> torch.futures.Future[torch.Tensor]:
            start = self.now()

            def done(fut: torch.futures.Future[torch.Tensor]) -> torch.Tensor:
                # For NCCL the callback runs with the current stream synchronised to the all-reduce's, so an
                # event recorded here marks its completion on the device's timeline.
                self.add(start, self.now())
                return fut.value()

            return hook(state, bucket).then(done)

        # DDP checks the hook's annotations as objects; this module's are strings (future annotations).
        timed.__annotations__ = {
            "state": object,
            "bucket": dist.GradBucket,  # type: ignore[attr-defined]
            "return": torch.futures.Future[torch.Tensor],
        }
        return timed

    def end_step(self) -> None:
        with self._lock:
            self.steps.append(self._step)
            self._step = []

    def per_step_seconds(self) -> list[float]:
        """Summed all-reduce seconds of each recorded step (synchronise CUDA before calling)."""
        if self.cuda:
            return [sum(a.elapsed_time(b) / 1000.0 for a, b in step) for step in self.steps]
        return [sum(b - a for a, b in step) for step in self.steps]


def _wrap(nets: dict[str, nn.Module], dev: torch.device) -> dict[str, nn.Module]:
    ids = [dev.index] if dev.type == "cuda" else None
    return {k: DistributedDataParallel(net.to(dev), device_ids=ids) for k, net in nets.items()}


def _register_hooks(
    ddp: dict[str, nn.Module], clock: CommClock, payload: RankPayload
) -> list[PeriodicModelAverager]:
    """The communication hook of each DDP module; for "mixed", also its parameter averager."""
    if payload["sync"] == "sync":
        for module in ddp.values():
            module.register_comm_hook(None, clock.wrap(default_hooks.allreduce_hook))  # type: ignore[operator]
        return []
    subgroup, _ = dist.new_subgroups(group_size=int(payload["mixed_group"]))
    averagers = []
    for module in ddp.values():
        state = post_localSGD_hook.PostLocalSGDState(
            process_group=None, subgroup=subgroup, start_localSGD_iter=int(payload["warmup"])
        )
        module.register_comm_hook(state, clock.wrap(post_localSGD_hook.post_localSGD_hook))  # type: ignore[operator]
        averagers.append(
            PeriodicModelAverager(period=int(payload["average_period"]), warmup_steps=int(payload["warmup"]))
        )
    return averagers


def _agreed_steps(warmup_step_s: float, payload: RankPayload, dev: torch.device) -> int:
    """The number of timed steps every rank runs: enough for min_iterations and min_seconds on the slowest
    rank, judged by its fastest warm-up step."""
    slowest = torch.tensor([warmup_step_s], dtype=torch.float64, device=dev)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    per_step = max(float(slowest.item()), 1e-6)
    wanted = math.ceil(float(payload["min_seconds"]) / per_step)
    return int(min(MAX_STEPS, max(int(payload["min_iterations"]), wanted)))


def participate(payload: RankPayload, emit: Callable[[Event], None] = lambda e: None) -> RankFigures:
    """Join the process group, time the candidate's DDP step, leave; returns this rank's figures.

    payload: candidate, device ("cpu" | "cuda"), local_rank, local_world_size, gpu (its CUDA index; None:
    local_rank), rank, world_size, store_host, store_port,
    batch_size (per rank), threads (CPU threads of this rank), sync, mixed_group, average_period,
    min_iterations, min_seconds, warmup (at least 1), timeout_s (how long a collective may wait for a peer),
    rendezvous_s (how long the ranks may take to gather at the store).
    `emit` gets {"type": "progress", "rank", "pid", "step": "timing", "steps"} once the timed steps start.
    """
    rank, world = int(payload["rank"]), int(payload["world_size"])
    backend, device, env = rank_setup(payload)
    os.environ.update(env)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        torch.cuda.set_device(dev)  # before any CUDA work: NCCL binds the communicator to the current device
    torch.set_num_threads(int(payload["threads"]))
    timeout = dt.timedelta(seconds=float(payload["timeout_s"]))
    store = dist.TCPStore(  # type: ignore[attr-defined]
        str(payload["store_host"]),
        int(payload["store_port"]),
        world,
        is_master=rank == 0,
        timeout=dt.timedelta(seconds=float(payload.get("rendezvous_s", payload["timeout_s"]))),
    )
    dist.init_process_group(backend, store=store, rank=rank, world_size=world, timeout=timeout)
    try:
        torch.manual_seed(rank)  # each rank trains on its own data; DDP copies rank 0's initial weights
        candidate = payload["candidate"]
        ddp = _wrap(build(candidate), dev)
        clock = CommClock(dev)
        averagers = _register_hooks(ddp, clock, payload)
        step = make_step(candidate, dev, nets=ddp)
        params = [list(m.parameters()) for m in ddp.values()]

        def run(batch: Batch) -> None:
            step.run(batch)
            for averager, group in zip(averagers, params, strict=False):
                start = clock.now()
                averager.average_parameters(group)  # a no-op except every average_period steps
                clock.add(start, clock.now())
            clock.end_step()

        batch = step.make_batch(int(payload["batch_size"]))
        fastest = math.inf  # the first steps pay one-off costs (torch.optim's lazy imports, allocations)
        for _ in range(max(1, int(payload["warmup"]))):
            step.refill(batch)
            t0 = time.perf_counter()
            run(batch)
            if cuda:
                torch.cuda.synchronize(dev)
            fastest = min(fastest, time.perf_counter() - t0)
        steps = _agreed_steps(fastest, payload, dev)
        clock.steps.clear()
        emit({"type": "progress", "rank": rank, "pid": os.getpid(), "step": "timing", "steps": steps})
        timing = time_steps(
            run,
            batch,
            dev,
            min_iterations=steps,
            min_seconds=0.0,
            warmup=0,
            refill=lambda: step.refill(batch),
        )
        if cuda:
            torch.cuda.synchronize(dev)
        seconds, iqr = summarise_samples(timing["samples"])
        allreduce, _ = summarise_samples(clock.per_step_seconds())
        # Nobody leaves while a peer still times: its last collective would have no partner. NCCL's barrier
        # is an all-reduce on a GPU: name this rank's, or torch guesses one from the rank number.
        dist.barrier(device_ids=[dev.index] if cuda else None)
        return {
            "rank": rank,
            "family": family_of(candidate).key,
            "seconds_per_step": seconds,
            "iqr": iqr,
            "iterations": len(timing["samples"]),
            "allreduce_seconds": allreduce,
            "user_seconds_per_step": timing["user_seconds_per_step"],
            "system_seconds_per_step": timing["system_seconds_per_step"],
            "threads": torch.get_num_threads(),
            "allocator": current_allocator(),
            "device": f"cuda:{dev.index}" if cuda else "cpu",
        }
    finally:
        dist.destroy_process_group()
