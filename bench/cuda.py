"""`python -m bench cuda`: every CUDA path of the calibration once, on a machine with a GPU, as a report.

The CPU-only CI never reaches these paths, so a session that is lent a GPU runs this first. Each check runs
the product's own code (no copies) and records what it returned, or the exception, so one broken path does
not hide the others:
  devices      detect_devices() lists the GPU with its memory
  profile      profile_device("cuda"): the matrix curve, launch floor, copy bandwidth
  measure      measure() with CUDA events and synchronisation; allocator statistics (peak, reserved)
  recurrent_memory  cuDNN's RNN, LSTM and GRU against the engine's memory estimate
  oom          a doubling sweep through run_job() under a memory cap: out of memory is a row, the job succeeds
  gathering    loading_seconds_per_batch() and a real train_one_epoch() on the device (the refill), against
               the mean step plus gathering (calibration/epoch.py)
  nccl         run_scaling() at world size 1 with the NCCL back end (one GPU: larger worlds need more)
Writes result.json to --out (default bench/results/cuda_<date>_<gpu>/).
"""

from __future__ import annotations

import argparse
import functools
import json
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.machine import describe, finish, gpu_slug

RESULTS = Path(__file__).with_name("results")


@functools.cache
def _grid() -> dict[str, dict[str, Any]]:
    from bench.predict_grid import grid_networks

    return dict(grid_networks(2))  # recommend() over every spec: once, not once per check


def _candidate(family: str) -> dict[str, Any]:
    return _grid()[f"{family}-large"]


def check_devices(device: str) -> dict[str, Any]:
    from advisor.calibration import detect_devices

    found = detect_devices()
    assert any(d["kind"] == "cuda" for d in found), "detect_devices() found no GPU"
    return {"devices": found}


def check_profile(device: str) -> dict[str, Any]:
    from advisor.calibration.profile import profile_device

    profile = profile_device(device)
    assert profile["kind"] == "cuda" and profile["copy_bandwidth"], "no copy bandwidth"
    return {"profile": profile}


def check_measure(device: str) -> dict[str, Any]:
    from advisor.calibration import measure
    from advisor.engine.memory import memory_for

    rows = []
    for family in ("ffn", "cnn", "lstm"):
        c = _candidate(family)
        for batch in (64, 1024):
            m = measure(c, device=device, batch_size=batch, min_seconds=0.3, warmup=3)
            assert m["status"] == "ok", m
            estimate = memory_for(c, batch_size=batch, device="cuda")["total"]
            rows.append(
                {
                    "family": family,
                    "batch": batch,
                    "seconds_per_batch": m["seconds_per_batch"],
                    "iqr": m.get("iqr"),
                    "peak_memory_bytes": m["peak_memory_bytes"],
                    "max_memory_reserved_bytes": m.get("max_memory_reserved_bytes"),
                    "estimate_bytes": estimate,
                    "memory_error": estimate / m["peak_memory_bytes"] - 1,
                }
            )
    return {"rows": rows}


def _recurrent(kind: str, steps: int, hidden: int, layers: int, embedded: bool) -> dict[str, Any]:
    first: list[dict[str, Any]] = (
        [{"kind": "Embedding", "args": {"num_embeddings": 1000, "embedding_dim": hidden}}] if embedded else []
    )
    cell = {"input_size": hidden, "hidden_size": hidden, "num_layers": layers, "batch_first": True}
    return {
        "family": "lstm" if kind == "LSTM" else "rnn",
        "networks": {
            "model": [
                *first,
                {"kind": kind, "args": cell},
                {"kind": "LastStep", "args": {}},
                {"kind": "Linear", "args": {"in_features": hidden, "out_features": 5}},
            ]
        },
        "io": {
            "input_shape": [steps] if embedded else [steps, hidden],
            "input_dtype": "int64" if embedded else "float32",
            "vocab_size": 1000 if embedded else None,
            "target": "class",
            "outputs": 5,
            "latent_size": None,
        },
        "training": {"optimizer": "adam", "batch_size": 64},
    }


def check_recurrent_memory(device: str) -> dict[str, Any]:
    """cuDNN's recurrent layers against the engine's memory model, which counts what autograd saves on a CPU:
    bench memory found an embedded 2-layer RNN 3.6x over its estimate on an H100."""
    from advisor.calibration import measure
    from advisor.engine.memory import memory_for

    rows = []
    for kind in ("RNN", "LSTM", "GRU"):
        for steps, hidden, layers, embedded in ((32, 256, 2, True), (32, 256, 2, False), (64, 128, 1, False)):
            c = _recurrent(kind, steps, hidden, layers, embedded)
            for batch in (64, 1024):
                m = measure(c, device=device, batch_size=batch, min_iterations=3, min_seconds=0.05, warmup=1)
                estimate = memory_for(c, batch_size=batch, device="cuda")
                rows.append(
                    {
                        "kind": kind,
                        "steps": steps,
                        "hidden": hidden,
                        "layers": layers,
                        "embedded": embedded,
                        "batch": batch,
                        "status": m["status"],
                        "peak_memory_bytes": m["peak_memory_bytes"],
                        "estimate": estimate,
                        "error": estimate["total"] / m["peak_memory_bytes"] - 1
                        if m["peak_memory_bytes"]
                        else None,
                    }
                )
    return {"rows": rows}


def check_oom(device: str) -> dict[str, Any]:
    from advisor.calibration import JobPlan, run_job

    events: list[dict[str, Any]] = []
    plan = JobPlan(
        candidate=_candidate("cnn"),
        device=device,
        batch_sizes=[64, 2048],  # ~0.7 GB at 2,048 (bench memory): past the cap; 32x the first (time limit)
        memory_limit_bytes=256 * 2**20,
        min_seconds=0.1,
        time_limit_s=240.0,
    )
    summary = run_job(plan, on_event=events.append, should_cancel=lambda: False)
    statuses = [r["result"]["status"] for r in summary["results"]]
    assert summary["status"] == "succeeded", summary.get("error")
    assert "oom" in statuses, (
        f"no out-of-memory row under a 256 MiB cap: {statuses}, {summary['stop_reason']}"
    )
    return {"summary": {k: v for k, v in summary.items() if k != "children"}, "statuses": statuses}


def check_gathering(device: str) -> dict[str, Any]:
    from advisor.calibration import measure, train_one_epoch
    from advisor.calibration.epoch import loading_seconds_per_batch, predicted_epoch_seconds

    rows = []
    for family in ("ffn", "cnn"):
        c = _candidate(family)
        examples, batch = 60_000, 256
        m = measure(c, device=device, batch_size=batch, min_seconds=0.5, warmup=3)
        gather = loading_seconds_per_batch(c, batch_size=batch, examples=examples, device=device)
        mean_step = m.get("mean_seconds_per_batch") or m["seconds_per_batch"]
        predicted = predicted_epoch_seconds(mean_step + gather, examples, batch)
        epochs = [train_one_epoch(c, examples=examples, batch_size=batch, device=device) for _ in range(3)]
        actual = sorted(e["seconds"] for e in epochs)[1]
        rows.append(
            {
                "family": family,
                "examples": examples,
                "batch": batch,
                "step_seconds": mean_step,
                "gather_seconds_per_batch": gather,
                "predicted_epoch_seconds": predicted,
                "epoch_seconds": [e["seconds"] for e in epochs],
                "error": predicted / actual - 1,
            }
        )
    return {"rows": rows}


def check_nccl(device: str) -> dict[str, Any]:
    from advisor.calibration import ScalingPlan, run_scaling

    result = run_scaling(
        ScalingPlan(candidate=_candidate("cnn"), world_sizes=[1], device="cuda", min_seconds=0.5)
    )
    assert result["status"] == "succeeded", result.get("error")
    return {"scaling": result}


CHECKS: dict[str, Callable[[str], dict[str, Any]]] = {
    "devices": check_devices,
    "profile": check_profile,
    "measure": check_measure,
    "recurrent_memory": check_recurrent_memory,
    "oom": check_oom,
    "gathering": check_gathering,
    "nccl": check_nccl,
}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench cuda", description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--only", default=",".join(CHECKS), help="comma-separated checks")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: nothing to check")
        return 2
    info = describe()
    gpu = torch.cuda.get_device_name(torch.device(args.device))
    out = args.out or RESULTS / f"cuda_{info['started_utc'][:10]}_{gpu_slug(args.device)}"
    out.mkdir(parents=True, exist_ok=True)
    checks: dict[str, Any] = {}
    for name in args.only.split(","):
        started = time.perf_counter()
        try:
            checks[name] = {"ok": True, **CHECKS[name](args.device)}
        except Exception as exc:  # each check's failure is its finding; the others still run
            checks[name] = {"ok": False, "error": repr(exc), "traceback": traceback.format_exc()}
        checks[name]["seconds"] = time.perf_counter() - started
        print(f"{name:<10} {'ok' if checks[name]['ok'] else 'FAILED'} ({checks[name]['seconds']:.1f} s)")
        if not checks[name]["ok"]:
            print(checks[name]["traceback"])
    result = {"machine": finish(info), "gpu": gpu, "torch": torch.__version__, "checks": checks}
    (out / "result.json").write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    print(f"written to {out}")
    return 0 if all(c["ok"] for c in checks.values()) else 1
