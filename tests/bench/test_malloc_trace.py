"""glibc's own allocations over a real training run (bench/malloc_trace.py) against the account's kernel
temporaries (advisor/engine/timeline.py) and the simulated heap (advisor/engine/heap.py)."""

from __future__ import annotations

import shutil

from advisor.engine import recommend
from bench.malloc_trace import trace
from bench.memory import candidates
from tests.conftest import need

# the deconvolutional network of MNIST-sized images (28x28 from a 100-value specification): the DN whose
# oneDNN scratch requests the test below counts
DN_SPEC = {
    "task": "generation",
    "generation": "controlled",
    "data": {"examples": 60000, "input_shape": [1, 28, 28], "outputs": 10},
    "hardware": {"cpu_cores": 2, "ram_gb": 8},
}


def _traced(family: str, batch: int) -> dict[str, object]:
    # a skip where there is no compiler, a failure in CI (Makefile's DEBS installs gcc)
    need(shutil.which("cc") is not None, "the malloc trace needs a C compiler (cc)")
    found = recommend(DN_SPEC)["candidates"] if family == "dn" else candidates(per_family=1)
    candidate = next(c for c in found if c["family"] == family)
    result = trace(candidate, batch)
    assert result is not None
    return result


def test_every_large_request_of_a_cnn_step_is_in_the_account() -> None:
    """oneDNN's blocked copies of each convolution's input, weights and output (and of the gradients in
    its backward pass) are the kernel temporaries PyTorch's dispatcher never sees: with them the account
    makes every request of 16 KiB or more that glibc sees in the second training step, size for size."""
    result = _traced("cnn", 32)
    assert result["not_in_account"] == []
    # the same sequence on the simulated heap against glibc's own top. glibc's top is lower where the
    # fixed cost's holes take some of the step's requests, which varies from one process to the next (14.5
    # to 23.1 MB over 12 processes on a 2-core EPYC, 2 of them more than 35% under the replay's 22.3); the
    # replay starts with no holes, so it is set against the highest top of three processes
    tops = [result["glibc_top"], *(_traced("cnn", 32)["glibc_top"] for _ in range(2))]
    assert 0.65 < result["simulated"] / max(tops) < 1.35  # type: ignore[operator, type-var]


def test_a_transposed_convolutions_temporaries_are_in_the_account() -> None:
    """ConvTranspose2d adds an output-sized buffer to the blocked copies; a few small scratch buffers of
    oneDNN (under 2 MB at batch 32) are not modelled: four requests a step on a Xeon with AVX-512, five on
    an AMD EPYC with AVX-512 BF16 (oneDNN picks its kernels, and their scratch, by the CPU's instructions)."""
    result = _traced("dn", 32)
    missing = result["not_in_account"]
    assert isinstance(missing, list)
    assert sum(n for _, n in missing) <= 6 and all(size < 2e6 for size, _ in missing)
