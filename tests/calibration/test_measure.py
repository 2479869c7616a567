"""measure(): the contract's fields, the timing rules, and agreement with an independent timer."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import pytest
import torch

from advisor.calibration import make_step, measure
from advisor.calibration.allocator import child_environment
from advisor.calibration.measure import summarise_samples
from tests.calibration import candidates as C

CONTRACT_FIELDS = {
    "seconds_per_batch",
    "iqr",
    "iterations",
    "examples_per_second",
    "peak_memory_bytes",
    "achieved_flops",
    "device",
    "threads",
}
OUR_FIELDS = {
    "noisy",
    "status",
    "message",
    "user_seconds_per_step",
    "system_seconds_per_step",
    "minor_faults_per_step",
    "major_faults_per_step",
    "samples",
    "batch_size",
    "live_tensor_peak_bytes",
    "rss_growth_bytes",
    "max_memory_reserved_bytes",
}


@pytest.mark.parametrize("family", sorted(C.ALL_FAMILIES))
def test_it_measures_every_family_with_the_contract_fields(family: str) -> None:
    r = measure(
        C.ALL_FAMILIES[family](), batch_size=8, threads=1, min_iterations=3, min_seconds=0.02, warmup=1
    )
    assert set(r) >= CONTRACT_FIELDS | OUR_FIELDS
    assert r["status"] == "ok"
    assert r["device"] == "cpu"
    assert r["threads"] == 1
    assert r["iterations"] == len(r["samples"]) >= 3
    assert r["seconds_per_batch"] == statistics.median(r["samples"])
    assert r["examples_per_second"] == pytest.approx(8 / r["seconds_per_batch"])
    assert r["achieved_flops"] == pytest.approx(r["step_flops_per_example"] * 8 / r["seconds_per_batch"])
    assert r["noisy"] == (r["iqr"] / r["seconds_per_batch"] > 0.10)
    assert r["user_seconds_per_step"] >= 0
    assert r["minor_faults_per_step"] >= 0
    assert r["family"] == family


def test_it_times_the_minimum_count_when_no_duration_is_asked() -> None:
    """The duration half of the rule is timed by a synthetic clock in test_stopping_rule.py: on the
    machine's clock a step's length, and so how long past the minimum it ends, is the machine's."""
    few = measure(C.ffn(), batch_size=4, threads=1, min_iterations=7, min_seconds=0.0, warmup=0)
    assert few["iterations"] == 7


def test_it_sets_the_thread_count_for_the_configuration_and_restores_it() -> None:
    before = torch.get_num_threads()
    r = measure(C.ffn(), batch_size=4, threads=2, min_iterations=2, min_seconds=0.0, warmup=0)
    assert r["threads"] == 2
    assert torch.get_num_threads() == before


def test_it_counts_the_family_step_flops() -> None:
    # gan: 3 G + 9 D per example; dbn: 8 R + 3 C; rbm: CD-1 = 5 F; vae: 3 (E + D)
    gan = make_step(C.gan())
    g, d = gan.forward_flops["generator"], gan.forward_flops["discriminator"]
    assert (g, d) == (2 * (4 * 16 + 16 * 36), 2 * (36 * 16 + 16))
    assert gan.step_flops_per_example == 3 * g + 9 * d
    rbm = make_step(C.rbm())
    assert rbm.step_flops_per_example == 5 * 2 * 36 * 12
    dbn = make_step(C.dbn())
    assert dbn.step_flops_per_example == 8 * 2 * (36 * 16 + 16 * 8) + 3 * 2 * 8 * 3
    r = measure(C.dbn(), batch_size=8, threads=1, min_iterations=2, min_seconds=0.0, warmup=0)
    assert r["achieved_flops"] == pytest.approx(dbn.step_flops_per_example * 8 / r["seconds_per_batch"])


def test_it_reports_more_peak_memory_for_a_bigger_batch() -> None:
    wide = C.ffn(features=16, hidden=8000, outputs=10)
    small = measure(wide, batch_size=8, threads=1, min_iterations=2, min_seconds=0.0, warmup=1)
    big = measure(wide, batch_size=1024, threads=1, min_iterations=2, min_seconds=0.0, warmup=1)
    # batch 1024: the hidden layer's output, its sigmoid and their gradients are 33 MB each
    assert big["peak_memory_bytes"] > small["peak_memory_bytes"] + 60_000_000


def test_it_summarises_median_and_iqr() -> None:
    assert summarise_samples([1.0, 2.0, 3.0, 4.0, 100.0]) == (3.0, 2.0)


def test_it_agrees_with_torch_utils_benchmark_within_5_percent() -> None:
    """measure() against torch.utils.benchmark timing the same training step on new values each call, median
    against median: `python -m bench harness`'s comparison (bench.harness.compare), in a fresh process under
    the allocator set-up calibrations measure with, as a calibration job's child runs.

    In the test process itself, after a thousand other tests under glibc's default thresholds, measure()
    (which hands free memory back before it starts) ran 6-15% above the Timer in every round of one CI run
    while the Timer's control stayed within 2%: the process's heap, not the harness. Rounds alternate, so the
    tolerance is 5%, widened to twice the control's interquartile spread when the machine is busier than that.
    A systematic difference (timing the build, the warm-up, or data creation; a different step) exceeds it."""
    code = (
        "import json; from bench.harness import compare; "
        "print(json.dumps(compare('mnist-cnn', batch_size=64, threads=1, rounds=6, seconds=0.15)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=child_environment("tuned"),
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    tolerance = max(0.05, 2 * found["control_spread"])
    assert abs(found["agreement"]) < tolerance, found
