"""`run_scaling()`: a data-parallel calibration at each world size, and `run_ranks()`, one host's share of it.

For each world size N, N rank processes (distributed.participate) are spawned at once with the job's allocator
environment: on CUDA one per GPU (NCCL), on the CPU the physical cores split between them (gloo). Each rank
trains on its own batch of `batch_size` (the per-device batch stays fixed as the world grows, as DDP is used),
so examples per second are N x batch / seconds per step, and the scaling efficiency is that throughput over N
times the smallest world's per-rank throughput.

A rank that fails sends its reason; one that dies sends nothing and is found by its exit code. Either ends the
whole world at once: every other rank is terminated, then killed (supervisor.py's grace period), and the job
is failed with the first reason. Ranks also die with the process that spawned them
(parent_death.die_with_parent), and a collective waits at most `collective_timeout_s` for a peer, so a rank on
another host whose peer vanished fails by itself too.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import socket
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from advisor.calibration.allocator import child_environment
from advisor.calibration.devices import physical_cores
from advisor.calibration.floats import run_flushed
from advisor.calibration.parent_death import die_with_parent
from advisor.calibration.ranks import RankPayload
from advisor.calibration.supervisor import POLL_S, Event, describe_exit, spawn_environment, stop
from advisor.contract import Trainable
from advisor.engine.families import family_of

SYNC_MODES = ("sync", "mixed")


class ScalingRow(TypedDict):
    """One world size's figures (`scaling_rows`): a calibration summary's `data_parallel` rows."""

    world_size: int
    backend: str  # "gloo" or "nccl"
    sync: str
    seconds_per_step: float  # the slowest rank's median
    iqr: float
    examples_per_second: float
    allreduce_seconds: float
    allreduce_share: float
    batch_size_per_rank: int
    threads_per_rank: int
    iterations: int
    allocator: str
    devices: list[str]
    efficiency: float  # throughput over world_size times the smallest world's per rank


class ScalingOutcome(TypedDict):
    status: str  # "succeeded", "failed", "cancelled" or "timed_out"
    error: str | None
    rows: list[ScalingRow]
    elapsed_s: float


class ScalingError(ValueError):
    """A ScalingPlan that cannot run; `.errors` maps each field to its messages, like runner.PlanError."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {', '.join(v)}" for k, v in errors.items()))
        self.errors = errors


def cuda_devices() -> int:
    import torch

    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0


def max_world_size(device: str) -> int:
    """The largest world size this host can run on `device`: its GPUs, or its physical cores (one each)."""
    return cuda_devices() if device.startswith("cuda") else physical_cores()


def gpu_order(first: int, available: int) -> list[int]:
    """The GPUs a job on cuda:`first` gives its ranks, rank 0 first: its own GPU, then the host's others in
    index order, so world size 1 measures the very GPU the job was queued on."""
    return [first, *(i for i in range(available) if i != first)]


@dataclass(frozen=True)
class ScalingPlan:
    candidate: Trainable
    world_sizes: list[int] = field(default_factory=lambda: [1, 2])
    device: str = "cpu"  # "cpu" (gloo) or "cuda" (NCCL, rank r on cuda:gpus[r])
    gpus: tuple[int, ...] | None = None  # "cuda": the GPUs of the ranks in rank order; None: 0, 1, 2, ...
    batch_size: int | None = None  # per rank; None: the candidate's training.batch_size
    threads: int | None = None  # CPU threads per rank; None: the physical cores split between the ranks
    sync: str = "sync"  # "sync": DDP all-reduce every step; "mixed": post-local-SGD (distributed.py)
    mixed_group: int = 1  # "mixed": ranks that all-reduce gradients every step
    average_period: int = 4  # "mixed": steps between averagings of the whole world's parameters
    min_iterations: int = 5
    min_seconds: float = 1.0
    warmup: int = 2
    time_limit_s: float = 300.0
    allocator: str = "tuned"  # the calibration harness's set-ups (allocator.child_environment)
    collective_timeout_s: float = 30.0  # how long a rank waits for a peer in a collective

    def __post_init__(self) -> None:
        errors: dict[str, list[str]] = {}
        if not isinstance(self.candidate, dict) or "networks" not in self.candidate:
            errors.setdefault("candidate", []).append("a candidate dict with networks is required")
        elif (family := family_of(self.candidate)).step.hand_gradients:  # CD-1: outside DDP's hooks
            errors.setdefault("candidate", []).append(
                f"{family.key} trains with CD-1, whose hand-set gradients DDP does not reduce"
            )
        if not (self.device == "cpu" or self.device == "cuda"):
            errors.setdefault("device", []).append("cpu or cuda (rank r uses cuda:r)")
        most = max_world_size(self.device) if self.device in ("cpu", "cuda") else 0
        if self.device == "cuda" and self.gpus is not None:
            if len(set(self.gpus)) != len(self.gpus) or any(not 0 <= int(g) < most for g in self.gpus):
                errors.setdefault("gpus", []).append(f"distinct GPU indices from 0 to {most - 1}")
            most = min(most, len(self.gpus))
        if not self.world_sizes or any(int(w) < 1 or int(w) > most for w in self.world_sizes):
            errors.setdefault("world_sizes", []).append(
                f"each world size between 1 and {most}, the {'GPUs' if self.device == 'cuda' else 'cores'}"
                " of this host"
            )
        if self.sync not in SYNC_MODES:
            errors.setdefault("sync", []).append(f"one of {', '.join(SYNC_MODES)}")
        for name in ("mixed_group", "average_period", "min_iterations", "warmup"):
            if int(getattr(self, name)) < 1:
                errors.setdefault(name, []).append("must be at least 1")
        if self.sync == "mixed" and any(int(w) % self.mixed_group for w in self.world_sizes):
            errors.setdefault("mixed_group", []).append("must divide every world size")
        for name in ("time_limit_s", "collective_timeout_s"):
            if float(getattr(self, name)) <= 0:
                errors.setdefault(name, []).append("must be positive")
        if errors:
            raise ScalingError(errors)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def rank_payloads(
    plan: ScalingPlan,
    world: int,
    *,
    store_host: str,
    store_port: int,
    first_rank: int = 0,
    local: int | None = None,
) -> list[RankPayload]:
    """The payloads of this host's ranks first_rank .. first_rank + local - 1 of a `world`-rank job."""
    local = world if local is None else local
    threads = plan.threads or max(1, physical_cores() // local)
    batch = plan.batch_size or int((plan.candidate.get("training") or {}).get("batch_size") or 32)
    gpus: list[int | None] = list(plan.gpus or range(local)) if plan.device == "cuda" else [None] * local
    return [
        {
            "candidate": plan.candidate,
            "device": plan.device,
            "world_size": world,
            "store_host": store_host,
            "store_port": store_port,
            "batch_size": batch,
            "threads": threads,
            "sync": plan.sync,
            "mixed_group": plan.mixed_group,
            "average_period": plan.average_period,
            "min_iterations": plan.min_iterations,
            "min_seconds": plan.min_seconds,
            "warmup": plan.warmup,
            "timeout_s": plan.collective_timeout_s,
            "rendezvous_s": plan.time_limit_s,  # hosts start their ranks when their workers get to the job
            "rank": first_rank + i,
            "local_rank": i,
            "local_world_size": local,
            "gpu": gpus[i],
        }
        for i in range(local)
    ]


def rank_main(payload: RankPayload, events: Any) -> None:
    """A rank process's body: its figures, or the reason it failed, go to the parent through `events`."""
    die_with_parent(int(payload["parent_pid"]))
    try:
        from advisor.calibration.distributed import participate  # torch loads here, under the child's env

        events.put({"type": "rank", **participate(payload, events.put)})
    except BaseException as exc:
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        events.put(
            {"type": "error", "rank": payload["rank"], "message": f"rank {payload['rank']}: {last[:400]}"}
        )
        raise SystemExit(1) from None


def run_ranks(
    payloads: list[RankPayload],
    env: dict[str, str],
    *,
    deadline: float,
    should_cancel: Callable[[], bool] = lambda: False,
    on_event: Callable[[Event], None] = lambda e: None,
) -> tuple[str, str | None, list[Event]]:
    """Run these ranks to their end. Returns (status, reason, the ranks' figures by rank); on any failure,
    cancel or the deadline, every rank is stopped before this returns. Progress events go to `on_event`."""
    ctx = mp.get_context("spawn")
    events = ctx.Queue()
    procs = []
    with spawn_environment(env):
        for p in payloads:
            proc = ctx.Process(
                target=run_flushed, args=(rank_main, {**p, "parent_pid": os.getpid()}, events), daemon=True
            )
            proc.start()
            procs.append((int(p["rank"]), proc))
    done: dict[int, Event] = {}
    try:
        while len(done) < len(procs):
            try:
                event: Event | None = events.get(timeout=POLL_S)
            except queue.Empty:
                event = None
            if event is not None:
                if event["type"] == "error":
                    return "failed", str(event["message"]), []
                if event["type"] == "progress":
                    on_event(event)
                else:
                    done[int(event["rank"])] = event
                continue
            dead = [(r, p) for r, p in procs if r not in done and p.exitcode is not None]
            if dead:
                rank, proc = dead[0]
                try:  # the pipe may still hold what it sent last
                    late: Event = events.get(timeout=POLL_S)
                    if late["type"] == "error":
                        return "failed", str(late["message"]), []
                    if late["type"] == "rank":
                        done[int(late["rank"])] = late
                    continue
                except queue.Empty:
                    return "failed", f"rank {rank} died with {describe_exit(proc.exitcode)}", []
            if should_cancel():
                return "cancelled", "cancelled on request", []
            if time.monotonic() >= deadline:
                return "timed_out", "time limit reached", []
        return "succeeded", None, [done[r] for r in sorted(done)]
    finally:
        for _, proc in procs:
            stop(proc, finished=len(done) == len(procs))
        events.close()
        events.cancel_join_thread()


def scaling_rows(worlds: dict[int, list[Event]], plan: ScalingPlan, batch_size: int) -> list[ScalingRow]:
    """One row per world size; the slowest rank paces a synchronous step, so its figures are the world's."""
    from advisor.calibration.distributed import backend_for

    rows: list[ScalingRow] = []
    for world in sorted(worlds):
        slowest = max(worlds[world], key=lambda r: float(r["seconds_per_step"]))
        seconds = float(slowest["seconds_per_step"])
        allreduce = max(float(r["allreduce_seconds"]) for r in worlds[world])
        rows.append(
            {
                "world_size": world,
                "backend": backend_for(plan.device),
                "sync": plan.sync,
                "seconds_per_step": seconds,
                "iqr": float(slowest["iqr"]),
                "examples_per_second": world * batch_size / seconds,
                "allreduce_seconds": allreduce,
                "allreduce_share": allreduce / seconds,
                "batch_size_per_rank": batch_size,
                "threads_per_rank": int(slowest["threads"]),
                "iterations": int(slowest["iterations"]),
                "allocator": str(slowest["allocator"]),
                "devices": [str(r["device"]) for r in worlds[world]],
                "efficiency": 1.0,  # set below, against the smallest world
            }
        )
    if rows:
        base = rows[0]
        per_rank = base["examples_per_second"] / base["world_size"]
        for row in rows:
            row["efficiency"] = row["examples_per_second"] / (per_rank * row["world_size"])
    return rows


def run_scaling(
    plan: ScalingPlan,
    *,
    on_event: Callable[[Event], None] = lambda e: None,
    should_cancel: Callable[[], bool] = lambda: False,
) -> ScalingOutcome:
    """Each world size in turn on this host. Returns status, error, rows (see scaling_rows), elapsed_s."""
    started = time.monotonic()
    deadline = started + plan.time_limit_s
    env = child_environment(plan.allocator)
    batch = rank_payloads(plan, 1, store_host="", store_port=0)[0]["batch_size"]
    worlds: dict[int, list[Event]] = {}
    status, error = "succeeded", None
    sizes = sorted({int(w) for w in plan.world_sizes})
    for i, world in enumerate(sizes):
        on_event({"type": "progress", "done": i, "total": len(sizes), "step": f"world size {world}"})
        payloads = rank_payloads(plan, world, store_host="127.0.0.1", store_port=free_port())
        status, error, ranks = run_ranks(
            payloads, env, deadline=deadline, should_cancel=should_cancel, on_event=on_event
        )
        if status != "succeeded":
            break
        worlds[world] = ranks
        on_event({"type": "result", "world_size": world, "ranks": ranks})
    return {
        "status": status,
        "error": error,
        "rows": scaling_rows(worlds, plan, int(batch)),
        "elapsed_s": time.monotonic() - started,
    }
