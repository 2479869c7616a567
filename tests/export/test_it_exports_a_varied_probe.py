"""The code download of a next-step probe that changed its candidate (issue 25 item 4: every hidden width x2,
weight decay): model.py builds the wider network the probe trained, with exactly the parameters the engine
counted for it, and train.py takes two updates with the weight decay in its optimiser, in a process where
the advisor cannot be imported; the files pass ruff's defaults."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from advisor import downloads, export
from advisor import services as core
from advisor.probe.models import ProbeJob
from tests.conftest import cpu_device

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

BIN = Path(sys.executable).parent

IRIS = {
    "task": "tabular",
    "data": {"examples": 150, "input_shape": [4], "outputs": 3},
    "hardware": {"cpu_cores": 2, "ram_gb": 8},
    "target": {"accuracy": 0.99},
}
DRIVER = """
import contextlib, io, json, runpy, sys
sys.path.insert(0, ".")
import model
nets = model.build()
script = runpy.run_path("train.py", run_name="downloaded")
optimiser = script["make_optimizer"](nets["model"].parameters(), script["CONFIG"])
argv = ["--synthetic", "--max-steps", "2", "--batch-size", "2", "--threads", "1"]
with contextlib.redirect_stdout(io.StringIO()):
    report = script["main"](script["CONFIG"], script["ALLOCATOR"], argv)
print(json.dumps({
    "parameters": sum(p.numel() for p in nets["model"].parameters()),
    "widths": [m.out_features for m in nets["model"].modules() if m.__class__.__name__ == "Linear"],
    "weight_decay": optimiser.param_groups[0]["weight_decay"],
    "steps": report["steps"],
}))
"""


@pytest.mark.parametrize(
    ("variation", "width", "decay"),
    [({"width": 2}, 2, 0.0), ({"width": 4, "weight_decay": 0.001}, 4, 0.001), ({}, 1, 0.0)],
)
def test_it_builds_and_trains_the_network_the_probe_trained(
    user: Any, tmp_path: Path, variation: dict[str, float], width: int, decay: float
) -> None:
    rec = core.advise(owner=user, spec=IRIS)
    index, base = next((i, c) for i, c in enumerate(rec.result["candidates"]) if c["depth"] == "deep")
    job = ProbeJob.objects.create(
        owner=user,
        recommendation=rec,
        device=cpu_device("export-test"),
        deep_candidate=index,
        variation=variation,
        status=ProbeJob.SUCCEEDED,
        time_limit_seconds=45,
    )
    download = downloads.probe_download(job)
    assert download is not None
    trained = job.candidate("deep")
    assert trained is not None and download.candidate["parameters"] == trained["parameters"]
    for name, text in export.files(download).items():
        (tmp_path / name).write_text(text)
    if variation:
        assert "next step changed the recommended candidate" in (tmp_path / "README.md").read_text()
    for command in (["check", "--isolated", "."], ["format", "--isolated", "--check", "."]):
        linted = subprocess.run([str(BIN / "ruff"), *command], cwd=tmp_path, capture_output=True, text=True)
        assert linted.returncode == 0, linted.stdout[-3000:]  # as the user who downloads them runs ruff
    (tmp_path / "driver.py").write_text(DRIVER)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-I", "driver.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["parameters"] == trained["parameters"]
    assert (found["parameters"] > base["parameters"]) == (width > 1)
    assert found["widths"][:-1] == [s * width for s in base["hidden_sizes"]]  # the output layer kept
    assert found["widths"][-1] == IRIS["data"]["outputs"]
    assert found["weight_decay"] == decay and found["steps"] == 2
