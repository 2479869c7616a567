"""`python -m bench queue [--broker URL] [--database URL] [--repeat N]`: calibration round trips through a
real worker process: queue pick-up, and the whole default calibration of a small tabular and a small
vision task.

`python -m bench queue --from RUN/forecast.json [--no-measured] [--out DIR]` predicts a saved run's ETAs again
by today's estimator, from each job's plan, marks and measured configurations (nothing re-run).

`python -m bench queue --forecast [--jobs N] [--users U] [--warmup W] [--load L] [--load-delay S]
[--grid B,B:T,T --time-limit S] [--out D]`:
the remaining-time estimator (advisor/engine/remaining.py) against what happened. N default calibrations of
varied networks are queued at once by U users on one worker (its device profiled first, as a worker does;
W calibrations run before them give the device a history, as a team box has; L busy loops compete from S
seconds after the profile on, a box that got busy after its worker started; `--grid` asks each for that grid
of batch sizes and thread counts, a longer calibration as a script asks for one); each queued job's expected
start, as the API gives it right after the last submission, is set against its actual start, and the
running job's remaining time, sampled as its page polls it, against the time that actually remained
(targets, issues 24 and 29: both within +-25%, the ETA from 25% progress on).

Runs against a throw-away SQLite database and file-system broker in a temporary folder unless told otherwise,
so it never touches the database of `make run`."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.queue_forecast import Sweep, replay, report, run_forecast, wait_for

REPO = Path(__file__).resolve().parent.parent

SPECS: dict[str, dict[str, Any]] = {
    "tabular 20k x 32, 4 classes": {
        "task": "tabular",
        "data": {"examples": 20000, "input_shape": [32], "outputs": 4},
        "hardware": {"cpu_cores": 2, "ram_gb": 16},
        "target": {"accuracy": 0.9},
    },
    "vision 60k MNIST-like": {
        "task": "vision",
        "data": {"examples": 60000, "input_shape": [1, 28, 28], "outputs": 10},
        "hardware": {"cpu_cores": 2, "ram_gb": 16},
        "target": {"accuracy": 0.98},
    },
}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench queue", description=__doc__)
    parser.add_argument("--broker", default="filesystem://", help="CELERY_BROKER_URL (default: embedded)")
    parser.add_argument("--database", default="", help="DATABASE_URL (default: a temporary SQLite file)")
    parser.add_argument("--repeat", type=int, default=3, help="round trips per spec")
    parser.add_argument("--forecast", action="store_true", help="expected starts and ETAs against the truth")
    parser.add_argument("--jobs", type=int, default=8, help="--forecast: calibrations queued at once")
    parser.add_argument("--users", type=int, default=2, help="--forecast: users they are spread over")
    parser.add_argument(
        "--warmup", type=int, default=0, help="--forecast: calibrations run first (a history)"
    )
    parser.add_argument(
        "--load", type=int, default=0, help="--forecast: busy loops competing once the device is profiled"
    )
    parser.add_argument("--load-delay", type=float, default=0.0, help="--forecast: --load starts this late")
    parser.add_argument(
        "--grid",
        default="",
        help="--forecast: each calibration sweeps these batch sizes and thread counts (B,B,...:T,T,...) "
        "instead of the default doubling sweep",
    )
    parser.add_argument("--time-limit", type=int, default=None, help="--forecast: each job's limit (s)")
    parser.add_argument("--out", default="", help="--forecast: a folder for forecast.json")
    parser.add_argument(
        "--from", dest="source", default="", help="a saved forecast.json: its ETAs by today's estimator"
    )
    parser.add_argument(
        "--no-measured",
        action="store_true",
        help="--from: each job's plan made at submit, without its measured configurations",
    )
    args = parser.parse_args(argv)
    if args.source:
        saved = json.loads(Path(args.source).read_text(encoding="utf-8"))
        report(replay(saved, measured=not args.no_measured), args.out)
        return 0

    with tempfile.TemporaryDirectory(prefix="bench-queue-") as tmp:
        os.environ["ADVISOR_VAR_DIR"] = tmp
        os.environ["DATABASE_URL"] = args.database or f"sqlite:///{tmp}/bench.sqlite3"
        os.environ["CELERY_BROKER_URL"] = args.broker
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "advisor.settings")
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=REPO, check=True)
        host = f"bench-{os.getpid()}"
        log = open(Path(tmp) / "worker.log", "wb")  # noqa: SIM115 - closed after the worker stops
        worker = subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "worker",
                "--device",
                "cpu",
                "--host",
                host,
                "--loglevel",
                "WARNING",
            ],
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            if args.forecast:
                result = run_forecast(
                    host,
                    jobs=args.jobs,
                    users=args.users,
                    warmup=args.warmup,
                    load=args.load,
                    load_delay=args.load_delay,
                    sweep=Sweep.parse(args.grid, args.time_limit),
                )
                report(result, args.out)
                return 0
            rows = _run(host, args.repeat)
        except BaseException:
            log.flush()
            sys.stderr.write((Path(tmp) / "worker.log").read_text(errors="replace")[-4000:])
            raise
        finally:
            worker.terminate()
            worker.wait(timeout=30)
            log.close()
    _print(rows, args.broker)
    return 0


def _run(host: str, repeat: int) -> list[dict[str, Any]]:
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from advisor import services
    from advisor.models import CalibrationJob, Device

    device_id = f"{host}-cpu0"
    wait_for(lambda: Device.objects.filter(id=device_id).exists(), 60, "the worker to register its device")
    time.sleep(1.0)  # the worker announces its device a moment before it consumes
    user, _ = get_user_model().objects.get_or_create(username="bench")
    rows = []
    for name, spec in SPECS.items():
        rec = services.advise(owner=user, spec=spec)
        for _ in range(repeat):
            start = time.perf_counter()
            device = Device.objects.get(id=device_id)  # fresh: `online` reads its last heartbeat
            job, _ = services.submit_calibration(owner=user, recommendation=rec, candidate=0, device=device)
            wait_for(lambda job=job: CalibrationJob.objects.get(pk=job.pk).finished, 300, "the job")
            total = time.perf_counter() - start
            job.refresh_from_db()
            assert job.started_at is not None and job.finished_at is not None
            rows.append(
                {
                    "spec": name,
                    "family": rec.first_family,
                    "status": job.status,
                    "configs": job.measurements.count(),
                    "pickup": (job.started_at - job.created_at).total_seconds(),
                    "total": total,
                    "error": job.error,
                }
            )
    return rows


def _print(rows: list[dict[str, Any]], broker: str) -> None:
    print(f"broker: {broker.split('://')[0]}   (seconds; pick-up = job row created -> claimed by the worker)")
    print(f"{'spec':<30} {'family':<7} {'status':<10} {'configs':>7} {'pick-up':>8} {'total':>7}")
    for row in rows:
        print(
            f"{row['spec']:<30} {row['family']:<7} {row['status']:<10} {row['configs']:>7} "
            f"{row['pickup']:>8.3f} {row['total']:>7.2f}"
        )
        if row["error"]:
            print(f"    error: {row['error']}")
    for name in SPECS:
        totals = [r["total"] for r in rows if r["spec"] == name]
        pickups = [r["pickup"] for r in rows if r["spec"] == name]
        total, pickup = statistics.median(totals), statistics.median(pickups)
        print(f"median {name}: total {total:.2f} s, pick-up {pickup:.3f} s")
