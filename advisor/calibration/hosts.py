"""One host's share of a data-parallel job spread over several hosts, and its command line.

Every host runs `run_host()` with the same world size and store address, and its own first rank and number of
local ranks (its GPUs, or a share of its cores). The host that runs rank 0 hosts the torch.distributed
TCPStore on `store_port` of every interface; the others connect to the address it published (a job's workers
learn it from the job; by hand, it is the first host's address on the network they share). gloo picks its own
interface from the host name unless GLOO_SOCKET_IFNAME names one (NCCL: NCCL_SOCKET_IFNAME): set it where the
host name resolves to an address the peers cannot reach.

The job's time limit bounds every host; a host whose peer vanished fails by itself, at once when the peer's
connections close (a killed process) and within `collective_timeout_s` when they just go silent. Each host
returns its own ranks' figures; rank 0's host holds the world's slowest step only together with the others'.

    python -m advisor.calibration.hosts --store 10.0.0.1:29400 --world 2 --first-rank 0 --local 1 \\
        --network tabular-mlp --time-limit 120
prints one JSON line per event and, last, {"type": "done", "status", "error", "ranks"}; it exits 0 when the
job succeeded, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from advisor.calibration.allocator import child_environment
from advisor.calibration.scaling import ScalingPlan, rank_payloads, run_ranks
from advisor.calibration.supervisor import Event


class HostOutcome(TypedDict):
    status: str  # "succeeded", "failed", "cancelled" or "timed_out"
    error: str | None
    ranks: list[Event]  # each rank's figures (ranks.RankFigures), in rank order


def run_host(
    plan: ScalingPlan,
    *,
    world: int,
    first_rank: int,
    local: int,
    store_host: str,
    store_port: int,
    should_cancel: Callable[[], bool] = lambda: False,
    on_event: Callable[[Event], None] = lambda e: None,
) -> HostOutcome:
    """Run ranks first_rank .. first_rank + local - 1 of a `world`-rank job; {"status", "error", "ranks"}."""
    payloads = rank_payloads(
        plan, world, store_host=store_host, store_port=store_port, first_rank=first_rank, local=local
    )
    status, error, ranks = run_ranks(
        payloads,
        child_environment(plan.allocator),
        deadline=time.monotonic() + plan.time_limit_s,
        should_cancel=should_cancel,
        on_event=on_event,
    )
    return {"status": status, "error": error, "ranks": ranks}


def main(argv: list[str]) -> int:
    from advisor.calibration.examples import EXAMPLES

    parser = argparse.ArgumentParser(
        prog="python -m advisor.calibration.hosts", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--store", required=True, help="HOST:PORT of rank 0's TCPStore")
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--first-rank", type=int, required=True)
    parser.add_argument("--local", type=int, default=1, help="ranks on this host")
    parser.add_argument("--network", choices=list(EXAMPLES), help="a reference network")
    parser.add_argument("--candidate", type=Path, help="a candidate's JSON file, instead of --network")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--sync", default="sync", choices=("sync", "mixed"))
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--min-seconds", type=float, default=1.0)
    parser.add_argument("--time-limit", type=float, default=300.0)
    parser.add_argument("--collective-timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    if (args.network is None) == (args.candidate is None):
        parser.error("give one of --network and --candidate")
    candidate = EXAMPLES[args.network]() if args.network else json.loads(args.candidate.read_text())
    host, _, port = args.store.rpartition(":")
    plan = ScalingPlan(
        candidate,
        world_sizes=[args.local],
        device=args.device,
        sync=args.sync,
        threads=args.threads,
        min_seconds=args.min_seconds,
        time_limit_s=args.time_limit,
        collective_timeout_s=args.collective_timeout,
    )
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.append(signum))  # cancel: stop every rank

    def emit(event: Event) -> None:
        print(json.dumps(event), flush=True)

    result = run_host(
        plan,
        world=args.world,
        first_rank=args.first_rank,
        local=args.local,
        store_host=host,
        store_port=int(port),
        should_cancel=lambda: bool(stop),
        on_event=emit,
    )
    emit({"type": "done", **result})
    return 0 if result["status"] == "succeeded" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
