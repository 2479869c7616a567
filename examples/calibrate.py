"""Ask the advisor for a network, measure it on a worker's device, print the measured time to train.

    export ADVISOR_URL=http://127.0.0.1:8000 ADVISOR_TOKEN=<key from manage.py drf_create_token>
    python examples/calibrate.py [DEVICE_ID]      # default: the first device GET /api/v1/devices/ lists

Standard library only, so it runs in any Python 3.9+ without installing anything.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

API = os.environ.get("ADVISOR_URL", "http://127.0.0.1:8000").rstrip("/") + "/api/v1/"
TOKEN = os.environ["ADVISOR_TOKEN"]


def call(
    method: str, path: str, body: object = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    """One API call; returns (HTTP status, JSON answer). Errors come back as JSON too."""
    request = urllib.request.Request(
        API + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Token {TOKEN}", "Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


# 1. Describe the task: 50,000 rows of 32 features, 5 classes, a 4-core laptop without a GPU.
spec = {
    "task": "tabular",
    "goal": "classify",
    "data": {"examples": 50000, "input_shape": [32], "outputs": 5},
    "hardware": {"cpu_cores": 4, "ram_gb": 16},
    "target": {"accuracy": 0.9},
}
status, rec = call("POST", "recommendations/", spec)
if status != 201:
    sys.exit(f"the spec was refused: {rec}")  # {"data.input_shape": ["..."], ...}
best = rec["candidates"][0]
print(
    f"recommendation {rec['id']}: {best['family']} ({best['depth']}), hidden {best['hidden_sizes']}, "
    f"{best['parameters']:,} parameters"
)
print(f"  analytic time to train: {best['estimate']['seconds_to_train']:.1f} s")
for reason in best["reasons"][:3]:
    print(f"  - {reason['text']} [{reason['source']}]")

# 2. Calibrate it on a device that a live worker offers.
status, devices = call("GET", "devices/")
if not devices:
    sys.exit("no live worker: start one with `python manage.py worker --device cpu` (make run starts one)")
device = sys.argv[1] if len(sys.argv) > 1 else devices[0]["id"]
request = {
    "recommendation": rec["id"],
    "candidate": 0,
    "device": device,
    "batch_sizes": [32, 64],
    "threads": [1],
}
# The key makes a retried POST return the same job instead of queuing a second one.
status, job = call("POST", "calibrations/", request, {"Idempotency-Key": str(uuid.uuid4())})
if status == 503:  # broker down: the job is kept and sent when it is back
    print(job["detail"])
    job = job["job"]
elif status != 202:
    sys.exit(f"calibration refused ({status}): {job}")

# 3. Wait, with a progress line.
while job["status"] in ("queued", "running"):
    print(f"\r  {job['status']:<8} {job['progress']:4.0%}  {job['step'][:60]:<60}", end="", flush=True)
    time.sleep(1)
    status, job = call("GET", f"calibrations/{job['id']}/")
print(f"\r  {job['status']:<8} {job['progress']:4.0%}  {'':<60}")
if job["status"] != "succeeded":
    sys.exit(f"calibration {job['status']}: {job['error']}")

# 4. What was measured, and the time to train it implies.
for row in job["results"]:
    print(
        f"  batch {row['batch_size']:>3}, {row['threads']} thread(s): {row['seconds_per_batch'] * 1e3:.2f} "
        f"ms per batch, {row['examples_per_second']:,.0f} examples/s"
        + (
            f"; unreliable: {'; '.join(r['text'] for r in row['unreliable_reasons'])}"
            if row.get("unreliable")
            else ""
        )
    )
measured = job["estimate"]
if measured is None:  # every configuration was measured under contention or imprecisely: nothing published
    sys.exit(job["summary"]["withheld"])
low, high = measured["interval"]["seconds_to_train"]
print(
    f"measured time to train on {device}: {measured['seconds_to_train']:.1f} s, 90% interval "
    f"{low:.1f}-{high:.1f} s (analytic estimate: {measured['analytic']['seconds_to_train']:.1f} s)"
)
