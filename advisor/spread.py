"""One data-parallel calibration spread over the workers of several hosts.

`submit_spread_calibration` queues one CalibrationJob per device, each on its own device's queue, tied by
`options["spread"]` = {group, rank, world, devices}. The worker that runs rank 0 hosts torch.distributed's
TCPStore on its own address (settings.DISTRIBUTED_ADDRESS) at a free port and publishes "address:port" in
its job's `summary["store"]`; the others wait for it (checking cancel), then every worker
runs its rank (advisor.calibration.hosts.run_host). The job's time limit bounds the wait and the run.

Cancelling any of the jobs cancels them all. A participant that dies (its worker killed, its rank killed)
fails its own job, and its peers' collectives fail at once when its connections close (within
`collective_timeout_s` when they just go silent): every job ends failed with its reason and no rank waits.
"""

from __future__ import annotations

import functools
import time
import uuid
from datetime import timedelta
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from advisor import forecasts, jobs
from advisor.contract import Candidate
from advisor.models import CalibrationJob, Device, Recommendation
from advisor.services import CalibrationRefused, ddp_refusal, parameters_refusal, publish, queued_refusal

if TYPE_CHECKING:  # torch's side, imported where a rank runs
    from advisor.calibration.scaling import ScalingRow


class RankOutcome(TypedDict):
    """How this worker's rank of a spread calibration ended, for the job machinery (running.conclude)."""

    status: str
    error: str | None
    data_parallel: NotRequired[list[ScalingRow]]  # its world size's row
    store: NotRequired[str | None]  # rank 0's store address, which the others read from its summary


WAIT_POLL_S = 0.5
PEER_STALE_S = 15.0  # a running peer whose worker beat no heartbeat for this long has died


class Peers:
    """Cancel checks that also watch the other ranks' jobs: one that failed, was cancelled, or whose worker
    stopped beating ends this rank too, even before the ranks met (a rendezvous would wait for it)."""

    def __init__(self, job: CalibrationJob, watcher: jobs.Watcher) -> None:
        self.job, self.watcher = job, watcher
        self.lost: str | None = None
        self.last = 0.0

    def should_stop(self) -> bool:
        if self.watcher.should_cancel():
            return True
        now = time.monotonic()
        if self.lost is None and now - self.last >= jobs.CHECK_EVERY_SECONDS:
            self.last = now
            stale = timezone.now() - timedelta(seconds=PEER_STALE_S)
            for peer in siblings(self.job).exclude(pk=self.job.pk):
                rank = peer.options["spread"]["rank"]
                if peer.status in (CalibrationJob.FAILED, CalibrationJob.CANCELLED):
                    self.lost = f"rank {rank} {peer.status}: {peer.error or peer.step}"
                elif (
                    peer.status == CalibrationJob.RUNNING and peer.heartbeat_at and peer.heartbeat_at < stale
                ):
                    self.lost = f"rank {rank}'s worker stopped (no heartbeat for {PEER_STALE_S:.0f} s)"
        return self.lost is not None


def siblings(job: CalibrationJob) -> Any:
    """The jobs of the same spread calibration, this one included."""
    return CalibrationJob.objects.filter(options__spread__group=job.options["spread"]["group"])


def submit_spread_calibration(
    *,
    owner: User,
    recommendation: Recommendation,
    candidate: int,
    devices: list[Device],
    time_limit_seconds: int | None = None,
    options: dict[str, Any] | None = None,
) -> list[CalibrationJob]:
    """Queue rank r of a len(devices)-rank data-parallel calibration on devices[r]'s queue."""
    limit = time_limit_seconds or settings.CALIBRATION_DEFAULT_SECONDS
    errors = spread_errors(recommendation=recommendation, candidate=candidate, devices=devices, limit=limit)
    errors.update(queued_refusal(owner, adding=len(devices)))
    if errors:
        jobs.count_refusal("calibration", errors)
        raise CalibrationRefused(errors)
    group = uuid.uuid4().hex
    made: list[CalibrationJob] = []
    with transaction.atomic():
        for rank, device in enumerate(devices):
            spread = {"group": group, "rank": rank, "world": len(devices), "devices": [d.id for d in devices]}
            job = CalibrationJob(
                owner=owner,
                recommendation=recommendation,
                candidate=candidate,
                device=device,
                time_limit_seconds=limit,
                options={**(options or {}), "spread": spread},
            )
            job.work_plan = forecasts.calibration_work_plan(job)
            job.save()
            made.append(job)
        for job in made:
            transaction.on_commit(functools.partial(publish, job))
    return made


def spread_errors(
    *, recommendation: Recommendation, candidate: int, devices: list[Device], limit: int
) -> dict[str, list[str]]:
    """What refuses a spread calibration, by field: its devices must be distinct, online CPU devices, each
    on a host of its own (a rank per host), and its candidate one that DDP can train."""
    errors: dict[str, list[str]] = {}
    ids = [d.id for d in devices]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        errors["devices"] = [f"each device once: {', '.join(twice)} given more than once"]
    elif len(devices) < 2 or len({d.host for d in devices}) != len(devices):
        errors["devices"] = ["two or more devices, each on a host of its own"]
    kinds = sorted({d.kind for d in devices})
    if len(kinds) > 1:
        errors.setdefault("devices", []).append(f"devices of one kind, not a mix of {', '.join(kinds)}")
    elif kinds and kinds != ["cpu"]:
        errors.setdefault("devices", []).append("CPU devices (a GPU rank needs NCCL across hosts: not yet)")
    offline = [d.id for d in devices if not d.online]
    if offline:
        errors.setdefault("devices", []).append(f"offline: {', '.join(offline)}")
    candidates = recommendation.result["candidates"]
    if not 0 <= candidate < len(candidates):
        errors["candidate"] = [f"must be between 0 and {len(candidates) - 1}"]
    else:
        refusal = ddp_refusal(candidates[candidate]) or parameters_refusal(candidates[candidate])
        if refusal:
            errors["candidate"] = [refusal]
    if not 1 <= limit <= settings.CALIBRATION_MAX_SECONDS:
        errors["time_limit_seconds"] = [f"must be from 1 to {settings.CALIBRATION_MAX_SECONDS} seconds"]
    return errors


class Participants(TypedDict):
    """A spread job's place among its peers (the API's `spread`)."""

    group: str
    rank: int
    world: int
    devices: list[str]  # device ids in rank order
    jobs: list[int]  # every participant's job id in rank order


def participants(job: CalibrationJob) -> Participants | None:
    """A spread job's place in its calibration for the API: its rank, the world, the devices in rank order
    and the ids of every participant's job in rank order; None for a job of one device."""
    spread = job.options.get("spread")
    if not spread:
        return None
    ranks = dict(siblings(job).values_list("options__spread__rank", "pk"))
    return {
        "group": spread["group"],
        "rank": int(spread["rank"]),
        "world": int(spread["world"]),
        "devices": list(spread["devices"]),
        "jobs": [ranks[r] for r in sorted(ranks)],
    }


def _publish_store(job: CalibrationJob, store: str) -> None:
    # In rank 0's summary, which nothing else writes until the job ends (options are rewritten when a
    # job's message is sent, which may happen after this).
    CalibrationJob.objects.filter(pk=job.pk).update(summary={"store": store})


def _wait_for_store(job: CalibrationJob, peers: Peers, deadline: float) -> str | None:
    first = siblings(job).filter(options__spread__rank=0)
    while time.monotonic() < deadline and not peers.should_stop():
        current = (first.values_list("summary", flat=True).first() or {}).get("store")
        if current:
            return str(current)
        time.sleep(WAIT_POLL_S)
    return None


def run_participant(job: CalibrationJob, watcher: jobs.Watcher, candidate: Candidate) -> RankOutcome:
    """This worker's rank of the spread calibration; the outcome for the job machinery."""
    from advisor.calibration.hosts import run_host
    from advisor.calibration.scaling import ScalingPlan, free_port, scaling_rows

    started = time.monotonic()
    deadline = started + float(job.time_limit_seconds)
    spread = job.options["spread"]
    rank, world = int(spread["rank"]), int(spread["world"])
    peers = Peers(job, watcher)
    if rank == 0:
        address = settings.DISTRIBUTED_ADDRESS
        store: str | None = f"{address}:{free_port(address)}"
        _publish_store(job, str(store))
    else:
        watcher.rows.update(step="waiting for rank 0's address", heartbeat_at=timezone.now())
        store = _wait_for_store(job, peers, deadline)
        if store is None:
            if peers.lost:
                return _fail_all(job, rank, peers.lost)
            if watcher.should_cancel():
                return {"status": "cancelled", "error": "cancelled on request"}
            return {
                "status": "timed_out",
                "error": "rank 0's worker published no address within the time limit",
            }
    host, _, port = str(store).rpartition(":")
    plan = ScalingPlan(
        candidate,
        world_sizes=[1],
        min_seconds=float(job.options.get("data_parallel_min_seconds", settings.CALIBRATION_MIN_SECONDS)),
        time_limit_s=max(1.0, deadline - time.monotonic()),
    )
    watcher.rows.update(step=f"rank {rank} of {world}: training", heartbeat_at=timezone.now())

    def on_event(event: dict[str, Any]) -> None:
        if event.get("step") == "timing":
            watcher.rows.update(step=f"rank {rank} of {world}: timing {event['steps']} steps")

    result = run_host(
        plan,
        world=world,
        first_rank=rank,
        local=1,
        store_host=host,
        store_port=int(port),
        should_cancel=peers.should_stop,
        on_event=on_event,
    )
    if watcher.rows.filter(cancel_requested=True).exists():  # a peer stopped by the same cancel may have
        # failed this rank first; asked afresh, as the watcher's answer may be a second old
        return {"status": "cancelled", "error": "cancelled on request"}
    if peers.lost:
        return _fail_all(job, rank, peers.lost)
    if result["status"] in ("failed", "timed_out"):
        _fail_all(job, rank, str(result["error"]))
    batch = int(plan.batch_size or 0) or _batch(candidate)
    rows = scaling_rows({world: result["ranks"]}, plan, batch) if result["ranks"] else []
    return {"status": result["status"], "error": result["error"], "data_parallel": rows, "store": store}


def _fail_all(job: CalibrationJob, rank: int, reason: str) -> RankOutcome:
    """The whole calibration fails: a peer whose worker died would otherwise stay running until a worker
    for its device came back. Returns this rank's outcome."""
    others = siblings(job).exclude(pk=job.pk)
    others.filter(status__in=[CalibrationJob.QUEUED, CalibrationJob.RUNNING]).update(
        status=CalibrationJob.FAILED,
        error=f"rank {rank} ended the spread calibration: {reason}"[:2000],
        finished_at=timezone.now(),
        step="failed",
    )
    return {"status": "failed", "error": reason}


def _batch(candidate: Candidate) -> int:
    return int((candidate.get("training") or {}).get("batch_size") or 32)
