"""`python -m bench pages`: server-side render time of the main pages for a user with a long history.

Builds a fresh SQLite database in a temporary folder (or --var-dir), stores --recs recommendations (real
engine answers for a mix of tasks) and --jobs finished calibrations with measurements for one user, then
requests each page through Django's full middleware stack (test Client: session, CSRF, auth, htmx) and reports
the median, 95th percentile, CPU time and SQL queries per page. Exit status 1 when a page's median wall-clock
time exceeds --budget-ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SPECS: list[dict[str, Any]] = [
    {
        "task": "tabular",
        "data": {"examples": 20000, "input_shape": [32], "outputs": 4},
        "hardware": {"cpu_cores": 4, "ram_gb": 16},
        "target": {"accuracy": 0.9},
    },
    {
        "task": "vision",
        "data": {"examples": 60000, "input_shape": [1, 28, 28], "outputs": 10},
        "hardware": {"cpu_cores": 8, "ram_gb": 32, "gpu": "gtx-1080"},
        "target": {"accuracy": 0.98},
    },
    {
        "task": "vision",
        "data": {"examples": 1281167, "input_shape": [3, 224, 224], "outputs": 1000},
        "hardware": {"cpu_cores": 16, "ram_gb": 128, "gpu": "v100-sxm2-32gb", "gpus_per_node": 4},
    },
    {
        "task": "sequence",
        "data": {"examples": 100000, "input_shape": [100, 40], "outputs": 40},
        "hardware": {"cpu_cores": 4, "ram_gb": 16},
    },
    {
        "task": "generation",
        "data": {"examples": 200000, "input_shape": [64], "vocab_size": 10000},
        "hardware": {"cpu_cores": 4, "ram_gb": 16},
    },
]


def _setup(var_dir: Path) -> None:
    os.environ["ADVISOR_VAR_DIR"] = str(var_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "advisor.settings")
    os.environ.pop("DATABASE_URL", None)  # always a fresh SQLite file: never fill a real database
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def _populate(recs: int, jobs: int) -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from advisor import engine
    from advisor.models import CalibrationJob, Device, MeasuredConfiguration, Recommendation

    user = get_user_model().objects.create_user(username="bench", password="bench-password-1")
    answers = [engine.recommend(spec) for spec in SPECS]
    Recommendation.objects.bulk_create(
        Recommendation(owner=user, spec=answers[i % len(answers)]["spec"], result=answers[i % len(answers)])
        for i in range(recs)
    )
    device = Device.objects.create(
        id="bench-cpu0", host="bench", kind="cpu", name="Bench CPU", cores=4, threads=8,
        memory_bytes=16 * 2**30, queue="device.bench-cpu0", last_seen=timezone.now(),
    )  # fmt: skip
    tabular = list(Recommendation.objects.filter(spec__task="tabular").order_by("-id")[:jobs])
    now = timezone.now()
    created = CalibrationJob.objects.bulk_create(
        CalibrationJob(
            owner=user, recommendation=rec, candidate=0, device=device, batch_sizes=[32, 64, 128, 256],
            threads=[1, 2, 4], time_limit_seconds=120, status=CalibrationJob.SUCCEEDED, progress=1.0,
            step="done", started_at=now, finished_at=now,
            estimate=engine.measured_estimate(rec.result, 0, seconds_per_batch=0.002, batch_size=64),
        )
        for rec in tabular
    )  # fmt: skip
    rows = []
    for job in created:
        for b in job.batch_sizes:
            for t in job.threads:
                s = 1e-5 * b / t + 1e-4
                result = {
                    "seconds_per_batch": s, "iqr": s / 20, "iterations": 40, "examples_per_second": b / s,
                    "peak_memory_bytes": 10_000_000 * b, "achieved_flops": 1e9, "device": "cpu", "threads": t,
                }  # fmt: skip
                rows.append(
                    MeasuredConfiguration(
                        job=job, batch_size=b, threads=t, seconds_per_batch=s, result=result
                    )
                )
    MeasuredConfiguration.objects.bulk_create(rows)
    by_task = {r.spec["task"]: r.pk for r in Recommendation.objects.order_by("-id")[: len(SPECS) * 2]}
    return {"user": user, "by_task": by_task, "jobs": [j.pk for j in created]}


def _pages(data: dict[str, Any]) -> list[tuple[str, str, str, dict[str, str]]]:
    """(name, method, url, headers)."""
    t, jobs = data["by_task"], data["jobs"]
    hx = {"HTTP_HX_REQUEST": "true"}
    return [
        ("wizard", "GET", "/", {}),
        ("wizard step (htmx)", "POST", "/", {**hx, "step": "task", "go": "data"}),
        ("wizard live check (htmx)", "POST", "/wizard/check/", {**hx, "step": "data"}),
        ("recommendation (vision)", "GET", f"/recommendations/{t['vision']}/", {}),
        ("recommendation (tabular)", "GET", f"/recommendations/{t['tabular']}/", {}),
        ("candidate panel (htmx)", "GET", f"/recommendations/{t['sequence']}/?c=1", hx),
        ("calibration", "GET", f"/calibrations/{jobs[0]}/", {}),
        ("calibration poll (htmx)", "GET", f"/calibrations/{jobs[0]}/", hx),
        ("history", "GET", "/history/", {}),
        ("history, last page", "GET", "/history/?page=9999", {}),
        ("history of calibrations", "GET", "/history/calibrations/", {}),
        ("compare candidates", "GET", f"/compare/?kind=candidates&a={t['vision']}:0&b={t['tabular']}:0", {}),
        ("compare devices", "GET", f"/compare/?kind=devices&a={jobs[0]}&b={jobs[1]}", {}),
        ("rules", "GET", "/rules/", {}),
        ("API token", "GET", "/account/token/", {}),
    ]


def _wizard_form() -> dict[str, Any]:
    """What the wizard's form posts for the default example (the values its first page shows)."""
    from advisor.web.examples import default_spec
    from advisor.web.forms import SpecForm, initial_from_spec

    form = SpecForm(initial=initial_from_spec(default_spec([])))
    return {name: "" if form[name].value() is None else form[name].value() for name in form.fields}


def _measure(data: dict[str, Any], repeat: int) -> list[dict[str, Any]]:
    from django.db import connection
    from django.test import Client

    client = Client()
    client.force_login(data["user"])
    form = _wizard_form()
    rows = []
    for name, method, url, extra in _pages(data):
        headers = {k: v for k, v in extra.items() if k.startswith("HTTP_")}
        body = {**form, **{k: v for k, v in extra.items() if not k.startswith("HTTP_")}}

        def request(method: str = method, url: str = url, body: Any = body, headers: Any = headers) -> Any:
            if method == "GET":
                return client.get(url, **headers)
            return client.post(url, body, **headers)

        for _ in range(2):  # warm-up: template compilation, first-query caches
            response = request()
            if response.status_code not in (200, 286):
                raise SystemExit(f"{name}: {url} answered {response.status_code}")
        queries: list[str] = []

        def count(execute: Any, sql: str, *args: Any) -> Any:
            queries.append(sql)  # noqa: B023
            return execute(sql, *args)

        # A wrapper rather than CaptureQueriesContext: each request opens a new connection (CONN_MAX_AGE=0).
        with connection.execute_wrapper(count):
            request()
        times, cpu = [], []
        for _ in range(repeat):
            start, start_cpu = time.perf_counter(), time.process_time()
            request()
            cpu.append((time.process_time() - start_cpu) * 1000)
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        rows.append(
            {
                "page": name,
                "url": url,
                "median_ms": statistics.median(times),
                "p95_ms": times[min(len(times) - 1, round(0.95 * (len(times) - 1)))],
                "max_ms": times[-1],
                # CPU time of this process (the view, templates and SQLite all run in it): what the page costs
                # apart from waiting for a CPU that other processes on a shared machine hold.
                "cpu_median_ms": statistics.median(cpu),
                "queries": len(queries),
            }
        )
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench pages", description=__doc__)
    parser.add_argument("--recs", type=int, default=1000, help="stored recommendations of the user")
    parser.add_argument("--jobs", type=int, default=50, help="finished calibrations of the user")
    parser.add_argument("--repeat", type=int, default=30, help="timed requests per page")
    parser.add_argument("--budget-ms", type=float, default=100.0, help="fail when a page's median exceeds it")
    parser.add_argument("--var-dir", type=Path, default=None, help="where the database goes (default: temp)")
    parser.add_argument("--out", type=Path, default=None, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-pages-") as tmp:
        _setup(args.var_dir or Path(tmp))
        started = time.perf_counter()
        data = _populate(args.recs, max(2, args.jobs))
        print(f"stored {args.recs} recommendations and {len(data['jobs'])} calibrations in "
              f"{time.perf_counter() - started:.1f} s; {args.repeat} timed requests per page")  # fmt: skip
        rows = _measure(data, args.repeat)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nload average {load:.1f} on {os.cpu_count()} CPUs (wall-clock times include waiting for a CPU)")
    print(f"{'page':<28} {'median ms':>10} {'p95 ms':>8} {'max ms':>8} {'cpu ms':>8} {'queries':>8}")
    for r in rows:
        print(
            f"{r['page']:<28} {r['median_ms']:>10.1f} {r['p95_ms']:>8.1f} {r['max_ms']:>8.1f} "
            f"{r['cpu_median_ms']:>8.1f} {r['queries']:>8}"
        )
    over = [r["page"] for r in rows if r["median_ms"] > args.budget_ms]
    print(
        f"\nbudget {args.budget_ms:g} ms (median): "
        + (f"EXCEEDED by {', '.join(over)}" if over else "all within")
    )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        report = {"recs": args.recs, "jobs": args.jobs, "load_average": load, "rows": rows}
        args.out.write_text(json.dumps(report, indent=2))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
