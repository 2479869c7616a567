"""`python -m bench queue --forecast`: expected starts and remaining times against what happened
(bench/queue.py starts the worker; this module queues, polls and scores). Default calibrations of varied
networks, as the wizard would queue them: each recommendation timed from the worker's device profile."""

from __future__ import annotations

import json
import math
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.load import start_load, stop_load

# varied tasks and sizes: tabular FFNs, CNNs, a recurrent network, a generative one
FORECAST_SPECS: dict[str, dict[str, Any]] = {
    "tabular 20k x 32": {"task": "tabular", "data": {"examples": 20000, "input_shape": [32], "outputs": 4}},
    "tabular 100k x 200": {
        "task": "tabular",
        "data": {"examples": 100000, "input_shape": [200], "outputs": 2},
    },
    "vision MNIST-like": {
        "task": "vision",
        "data": {"examples": 60000, "input_shape": [1, 28, 28], "outputs": 10},
    },
    "vision 3x32x32": {
        "task": "vision",
        "data": {"examples": 50000, "input_shape": [3, 32, 32], "outputs": 10},
    },
    "sequence 50 x 16": {
        "task": "sequence",
        "data": {"examples": 20000, "input_shape": [50, 16], "outputs": 5},
    },
    "generation 8x8 images": {"task": "generation", "data": {"examples": 10000, "input_shape": [1, 8, 8]}},
}
HARDWARE = {"cpu_cores": 2, "ram_gb": 16}


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    """Poll `predicate` until it holds (bench queue's round trips and this module's waits)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise SystemExit(f"timed out waiting for {what}")


POLL_S = 0.25
TOLERANCE = 0.25
# jobs by their seconds from start to end
JOB_LENGTHS = (("under_20s", 0.0, 20.0), ("20_to_60s", 20.0, 60.0), ("60s_or_more", 60.0, math.inf))


@dataclass(frozen=True)
class Sweep:
    """What each queued calibration asks for: the default (the wizard's: a doubling sweep from the
    candidate's batch within its own budget, the default time limit), or a grid of batch sizes and thread
    counts under a time limit of its own, as a script or a team box's user asks for a longer calibration."""

    batch_sizes: tuple[int, ...] = ()
    threads: tuple[int, ...] = ()
    time_limit_seconds: int | None = None

    @classmethod
    def parse(cls, grid: str, time_limit: int | None) -> Sweep:
        """`--grid 32,128,512:1,2` (batch sizes, then thread counts; either may be empty)."""
        batches, _, threads = grid.partition(":")
        return cls(
            tuple(int(b) for b in batches.split(",") if b),
            tuple(int(t) for t in threads.split(",") if t),
            time_limit,
        )


def run_forecast(
    host: str,
    *,
    jobs: int,
    users: int,
    warmup: int = 0,
    load: int = 0,
    load_delay: float = 0.0,
    sweep: Sweep = Sweep(),
) -> dict[str, Any]:
    """`load` busy loops (bench/load.py) compete from `load_delay` seconds after the device's profile, which
    was taken quiet, to the end: a team box that got busy after its worker started."""
    import django

    django.setup()
    from advisor.models import Device

    device_id = f"{host}-cpu0"
    wait_for(lambda: Device.objects.filter(id=device_id).exists(), 120, "the worker to register its device")
    wait_for(lambda: Device.objects.get(id=device_id).profile, 180, "the worker to profile its device")
    time.sleep(1.0)  # the worker announces its device a moment before it consumes
    competing = start_load(load, load_delay)
    try:
        result = _queue_and_poll(device_id, jobs=jobs, users=users, warmup=warmup, sweep=sweep)
    finally:
        spent = stop_load(competing)
    load_info = {"processes": load, "delay_s": load_delay, "cpu_seconds": spent["cpu_seconds"]}
    return {**result, "sweep": asdict(sweep), "load": load_info}


def _queue_and_poll(device_id: str, *, jobs: int, users: int, warmup: int, sweep: Sweep) -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from advisor import services
    from advisor.models import CalibrationJob, Device
    from advisor.queueing import Forecaster

    device = Device.objects.get(id=device_id)
    people = [get_user_model().objects.get_or_create(username=f"bench{u}")[0] for u in range(users)]
    specs = list(FORECAST_SPECS.items())

    def submit(i: int, owner: Any) -> tuple[str, str, CalibrationJob]:
        name, spec = specs[i % len(specs)]
        device.refresh_from_db()  # `online` reads its latest heartbeat
        rec = services.advise(owner=owner, spec={**spec, "hardware": HARDWARE}, device=device)
        job, _ = services.submit_calibration(
            owner=owner,
            recommendation=rec,
            candidate=0,
            device=device,
            batch_sizes=list(sweep.batch_sizes),
            threads=list(sweep.threads),
            time_limit_seconds=sweep.time_limit_seconds,
        )
        return name, rec.first_family, job

    # a box with a history: the device's pace, start-up and re-measure chances come from finished jobs
    for i in range(warmup):
        _, _, job = submit(i, people[0])
        limit = max(300, job.time_limit_seconds + 60)
        wait_for(lambda job=job: CalibrationJob.objects.get(pk=job.pk).finished, limit, f"warm-up {job.pk}")
    made = [submit(i, people[i % users]) for i in range(jobs)]
    at = timezone.now()
    forecaster = Forecaster(at)
    expected = {}
    for _, _, job in made:
        job.refresh_from_db()
        place = forecaster.place("calibration", job)
        if place is not None and place["expected_start"] is not None:
            expected[job.pk] = (place["expected_start"] - at).total_seconds()
    samples: dict[int, list[tuple[float, float, float, str, Any]]] = {job.pk: [] for _, _, job in made}
    ids = [job.pk for _, _, job in made]
    deadline = time.monotonic() + max(60, (sweep.time_limit_seconds or 0) + 10) * jobs
    while time.monotonic() < deadline:
        rows = list(CalibrationJob.objects.filter(pk__in=ids).select_related("device"))
        if all(r.finished for r in rows):
            break
        now = Forecaster()
        for row in rows:
            left = now.finish("calibration", row)
            if left is not None:
                # the latest mark as it stood: a slow step's word on it is overwritten as it goes on
                mark = row.marks[-1] if row.marks else None
                samples[row.pk].append(
                    (now.now.timestamp(), row.progress, left["remaining_seconds"], left["basis"], mark)
                )
        time.sleep(POLL_S)
    result: dict[str, Any] = {"forecast_at": at.isoformat(), "warmup": warmup, "jobs": []}
    for name, family, job in made:
        job.refresh_from_db()
        start, end = job.started_at, job.finished_at
        result["jobs"].append(
            {
                "id": job.pk,
                "spec": name,
                "family": family,
                "owner": job.owner.username,
                "status": job.status,
                "configurations": job.measurements.count(),
                "planned": job.work_plan,
                "marks": job.marks,
                # in the order they ran (with_measured): batch, threads, seconds, allocator, unreliable
                "measured": list(
                    job.measurements.order_by("pk").values_list(
                        "batch_size", "threads", "seconds_per_batch", "allocator", "result__unreliable"
                    )
                ),
                "expected_wait": expected.get(job.pk),
                "actual_wait": (start - at).total_seconds() if start else None,
                "duration": (end - start).total_seconds() if start and end else None,
                "eta": [
                    {
                        "t": t,
                        "progress": p,
                        "elapsed_share": (t - start.timestamp()) / (end - start).total_seconds(),
                        "predicted": r,
                        "actual": end.timestamp() - t,
                        "basis": b,
                        "mark": mark,
                    }
                    for t, p, r, b, mark in samples[job.pk]
                ]
                if start and end
                else [],
            }
        )
    return result


def replay(result: dict[str, Any], *, measured: bool = True, plan: str = "planned") -> dict[str, Any]:
    """A saved run's ETA samples predicted again by today's estimator (engine.remaining.remaining), each from
    the job's stored plan, its marks up to the sample and the device's pace over the jobs of the run that had
    finished before it started (the run's warm-up jobs are not saved, so a warmed run's early pace differs;
    the three saved runs replayed by the estimator they ran with gave the same shares within 1 point). Where
    the run saved its measured configurations, those measured by the sample price the re-measure
    (engine.sweepplan.with_measured), as the product does; `measured=False`: the plan made at submit.
    `plan`: the key of the plan each job is paced against, where an analysis put another beside `planned`
    (bench/results/queue_amd-epyc-2c_grid-budget/repriced.py)."""
    from advisor.engine.remaining import (
        device_pace,
        expected_duration,
        marks_from_json,
        plan_from_json,
        remaining,
    )
    from advisor.engine.sweepplan import first_child, with_measured

    jobs = result["jobs"]
    stored = {j["id"]: j.get(plan) or j["planned"] for j in jobs}
    plans = {i: plan_from_json(p, 0.0) for i, p in stored.items()}
    replayed = []
    for j in jobs:
        if not j["eta"] or not j["duration"]:
            replayed.append(j)
            continue
        history = [
            (expected_duration(plans[o["id"]]), o["duration"])
            for o in jobs
            if o["duration"]
            and o["actual_wait"] is not None
            and o["actual_wait"] + o["duration"] <= j["actual_wait"]
        ]
        pace = device_pace(history)
        samples = []
        for e in j["eta"]:
            elapsed = e["elapsed_share"] * j["duration"]
            marks = marks_from_json(_marks_then(j["marks"], elapsed, e.get("mark")))
            paced = plans[j["id"]]
            if measured:
                paced = with_measured(paced, stored[j["id"]], first_child(j.get("measured") or []), marks)
            left = remaining(paced, marks, elapsed, prior_pace=pace)
            samples.append({**e, "predicted": left.seconds, "basis": left.basis})
        replayed.append({**j, "eta": samples})
    return {**result, "jobs": replayed, "replayed": True}


def _marks_then(marks: list[list[Any]], elapsed: float, polled: list[Any] | None) -> list[list[Any]]:
    """A job's marks as they stood `elapsed` seconds in: the latest as polled then (a slow step's word on
    it, said later, is overwritten as the step goes on), else without a word said later."""
    then = [m for m in marks if m[0] <= elapsed]
    if then and polled and polled[0] == then[-1][0]:
        return [*then[:-1], polled]
    return [m[:6] if len(m) > 7 and m[7] > elapsed else m for m in then]


def score(result: dict[str, Any]) -> dict[str, Any]:
    starts = [
        (j["expected_wait"] - j["actual_wait"]) / j["actual_wait"]
        for j in result["jobs"]
        if j["expected_wait"] is not None and j["actual_wait"] and j["actual_wait"] > 1.0
    ]

    def etas(key: str, shortest: float = 0.0, longest: float = math.inf) -> list[float]:
        return [
            (e["predicted"] - e["actual"]) / e["actual"]
            for j in result["jobs"]
            if shortest <= (j["duration"] or 0.0) < longest
            for e in j["eta"]
            if e[key] >= 0.25 and e["actual"] > 0
        ]

    def summary(errors: list[float]) -> dict[str, Any]:
        if not errors:
            return {"n": 0}
        inside = sum(abs(e) <= TOLERANCE for e in errors)
        return {
            "n": len(errors),
            "within": inside,
            "share": inside / len(errors),
            "median_abs": statistics.median(abs(e) for e in errors),
            "worst": max(errors, key=abs),
        }

    # "from 25% progress on": the progress the job reports (a calibration's share of the configurations it
    # counts, its whole grid until the sweep stops) and the share of its run that had passed
    # and the latter by the job's length: +-25% of what remains is a fraction of a second near the end of a
    # 5-17 s default calibration, seconds on a longer one
    by_length = {
        f"eta_from_25pct_of_run_jobs_{name}": summary(etas("elapsed_share", lo, hi))
        for name, lo, hi in JOB_LENGTHS
    }
    return {
        "expected_start": summary(starts),
        "eta_from_25pct_reported": summary(etas("progress")),
        "eta_from_25pct_of_run": summary(etas("elapsed_share")),
        **by_length,
    }


def report(result: dict[str, Any], out: str) -> None:
    scores = score(result)
    head = ("job", "spec", "family", "owner", "cfg", "expect", "actual", "err", "took", "plan")
    print("{:>5} {:<24} {:<7} {:<7} {:>3} {:>7} {:>7} {:>6} {:>6} {:>6}".format(*head))
    for j in result["jobs"]:
        err = (
            f"{(j['expected_wait'] - j['actual_wait']) / j['actual_wait']:+.0%}"
            if j["expected_wait"] is not None and j["actual_wait"] and j["actual_wait"] > 1.0
            else "—"
        )
        plan = j["planned"] or {}
        planned = plan.get("startup_s", 0) + sum(plan.get("steps", [])) + plan.get("finish_s", 0)
        expected = "—" if j["expected_wait"] is None else f"{j['expected_wait']:.1f}"
        actual = "—" if j["actual_wait"] is None else f"{j['actual_wait']:.1f}"
        took = "—" if j["duration"] is None else f"{j['duration']:.1f}"
        print(
            f"{j['id']:>5} {j['spec']:<24} {j['family']:<7} {j['owner']:<7} {j['configurations']:>3} "
            f"{expected:>7} {actual:>7} {err:>6} {took:>6} {planned:>6.1f}"
        )
    load = result.get("load") or {}
    if load.get("processes"):
        spent = ", ".join(f"{c:.0f}" for c in load["cpu_seconds"])
        print(f"load: {load['processes']} busy loops from {load['delay_s']:.0f} s on (CPU seconds: {spent})")
    for what, s in scores.items():
        if s["n"]:
            print(
                f"{what}: {s['within']}/{s['n']} within +-{TOLERANCE:.0%} ({s['share']:.0%}), "
                f"median |error| {s['median_abs']:.0%}, worst {s['worst']:+.0%}"
            )
        else:
            print(f"{what}: no samples")
    if out:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "forecast.json").write_text(json.dumps({**result, "scores": scores}, indent=1, default=str))
