"""Issue 28's table: for every candidate the engine recommends over the specs of tests/engine/test_rules.py's
table (every family, every task kind), the downloaded model.py builds exactly the candidate's `parameters`,
and train.py takes two updates on random data of its shapes, in a process where the advisor cannot be
imported; the files pass ruff's defaults (check and format), as the user who downloads them runs ruff.

One subprocess builds and trains every candidate (a process per candidate would cost a torch import each).
Candidates above CALIBRATION_MAX_PARAMETERS (the advisor itself trains none of them: the size.exceeds.memory,
size.oversize and multigpu.model cases, 0.9 to 3,000 billion parameters) are built on torch's meta device,
which counts without memory, and not trained."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from advisor import export
from advisor.engine import recommend
from advisor.engine.families import KEYS
from advisor.engine.layers import count
from tests.engine.test_rules import TABLE

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
STEPS = ["--synthetic", "--max-steps", "2", "--batch-size", "2", "--threads", "1"]

# A hand-written candidate for the layer kinds no rule of the table reaches (GRU, BatchNorm1d): a torch.nn
# kind needs no row of network.KINDS.
GRU = {
    "family": "rnn",
    "depth": "deep",
    "networks": {
        "model": [
            {"kind": "Linear", "args": {"in_features": 12, "out_features": 16}},
            {"kind": "GRU", "args": {"input_size": 16, "hidden_size": 32, "num_layers": 2,
                                     "batch_first": True}},
            {"kind": "LastStep", "args": {}},
            {"kind": "BatchNorm1d", "args": {"num_features": 32}},
            {"kind": "Dropout", "args": {"p": 0.2}},
            {"kind": "Linear", "args": {"in_features": 32, "out_features": 3}},
        ]
    },
    "io": {"input_shape": [10, 12], "input_dtype": "float32", "vocab_size": None, "target": "class",
           "outputs": 3, "latent_size": None},
    "training": {"batch_size": 32, "init_scale": 0.1, "init": "uniform_fan_in", "optimizer": "adam",
                 "learning_rate": 0.001, "epochs": 10, "loss": "cross_entropy"},
    "reasons": [],
}  # fmt: skip
GRU["parameters"] = count(GRU["networks"]["model"], [10, 12]).parameters


def cases() -> dict[str, export.Download]:
    """Each distinct candidate of the table's specs once, named after the first row that recommends it."""
    found: dict[str, export.Download] = {}
    seen: set[str] = set()
    for rule, when, otherwise, _ in TABLE:
        for side, spec in (("when", when), ("otherwise", otherwise)):
            rec = recommend(spec)
            for i, candidate in enumerate(rec["candidates"]):
                key = json.dumps(
                    [candidate[k] for k in ("family", "networks", "io", "training")], sort_keys=True
                )
                if key not in seen:
                    seen.add(key)
                    found[f"{rule}-{side}-{i}-{candidate['family']}"] = export.Download(rec, i)
    spec = recommend(TABLE[0][1])
    found["hand-written-gru"] = export.Download({**spec, "candidates": [GRU]}, 0)
    return found


CASES = cases()
TRAINED = [c for c, d in CASES.items() if d.candidate["parameters"] <= settings.CALIBRATION_MAX_PARAMETERS]
DRIVER = """
import contextlib, io, json, runpy, sys, traceback
from pathlib import Path

try:
    import advisor  # noqa: F401
    found = {"advisor": "importable"}
except ImportError:
    found = {"advisor": "not importable"}
import torch


def flushed():
    return torch.tensor([1e-39]).mul(1.0).item() == 0.0  # a denormal float32, times one


found["flushed_at_start"] = flushed()
plan = json.loads(Path("plan.json").read_text())
for case, train in plan["cases"].items():
    folder = str(Path(case).resolve())
    sys.path.insert(0, folder)
    sys.modules.pop("model", None)
    entry = found[case] = {}
    try:
        import model

        with torch.device("meta"):  # counts without memory, whatever the size
            nets = model.build()
        entry["parameters"] = sum(p.numel() for net in nets.values() for p in net.parameters())
        if train:
            script = runpy.run_path(f"{folder}/train.py", run_name="downloaded")
            with contextlib.redirect_stdout(io.StringIO()):
                report = script["main"](script["CONFIG"], script["ALLOCATOR"], plan["argv"])
            entry["steps"], entry["loss"] = report["steps"], report["loss"]
            entry["flushed"] = flushed()
    except Exception:
        entry["error"] = traceback.format_exc()[-3000:]
    sys.path.remove(folder)
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def downloaded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The files of every case under a folder of its own, and what the isolated process found."""
    root = tmp_path_factory.mktemp("downloads")
    for case, download in CASES.items():
        (root / case).mkdir()
        for name, text in export.files(download).items():
            (root / case / name).write_text(text)
    trained = {case: case in TRAINED for case in CASES}
    (root / "plan.json").write_text(json.dumps({"cases": trained, "argv": STEPS}))
    (root / "driver.py").write_text(DRIVER)
    # -I: no PYTHONPATH, no user site-packages, not even the script's folder on the path; the environment
    # is emptied too, as on a machine that never had the advisor
    env = {"PATH": os.environ["PATH"], "HOME": str(root), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-I", "driver.py"], cwd=root, env=env, capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return root, json.loads(done.stdout.splitlines()[-1])


def test_it_reaches_every_family_of_the_registry() -> None:
    assert {d.candidate["family"] for d in CASES.values()} == set(KEYS)


def test_the_advisor_cannot_be_imported_where_the_code_runs(downloaded: tuple[Path, dict[str, Any]]) -> None:
    assert downloaded[1]["advisor"] == "not importable"


@pytest.mark.parametrize("case", list(CASES))
def test_it_builds_exactly_the_candidates_parameters(
    downloaded: tuple[Path, dict[str, Any]], case: str
) -> None:
    found = downloaded[1][case]
    assert "error" not in found, found.get("error")
    assert found["parameters"] == CASES[case].candidate["parameters"]


def test_it_leaves_untrained_only_the_networks_too_large_for_any_machine() -> None:
    untrained = {case.split("-")[0] for case in CASES if case not in TRAINED}
    assert untrained <= {"size.exceeds.memory", "size.oversize", "multigpu.model"}


@pytest.mark.parametrize("case", TRAINED)
def test_it_trains_two_steps_on_random_data_of_its_shapes(
    downloaded: tuple[Path, dict[str, Any]], case: str
) -> None:
    found = downloaded[1][case]
    assert "error" not in found, found.get("error")
    assert found["steps"] == 2 and found["loss"] == found["loss"]  # a number, not NaN


def test_it_trains_with_denormals_flushed_as_the_advisor_timed_it(
    downloaded: tuple[Path, dict[str, Any]],
) -> None:
    """torch keeps denormal floats by default; the first train.py to run on a CPU flushes them."""
    found = downloaded[1]
    assert found["flushed_at_start"] is False
    assert found[TRAINED[0]]["flushed"] is True


@pytest.mark.parametrize("case", list(CASES))
def test_it_writes_files_ruff_leaves_alone(downloaded: tuple[Path, dict[str, Any]], case: str) -> None:
    """Run where the files are, as their user would: ruff then counts model.py as this folder's own module."""
    folder = downloaded[0] / case
    for command in (["check", "--isolated", "."], ["format", "--isolated", "--check", "--diff", "."]):
        done = subprocess.run([str(BIN / "ruff"), *command], cwd=folder, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
