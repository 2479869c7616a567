"""The resident set a network's training takes, as issue 13 defines it: the growth of a fresh process's
resident set over training the network, the runtime's fixed cost (measured once per process) excluded.

`pay_fixed_cost()` trains a tiny unrelated network for a few steps: it loads torch's kernels, the thread
pool, autograd and the optimiser (Adam's imports and its first-step state path), whose pages stay resident
for the process's life and belong to no network. `training_rss_growth()` then records the resident set,
resets the kernel's high-water mark and trains the network: the figure is the high-water mark less that
base. No malloc_trim in between: a trim would hand the heap's free pages back, and the network's blocks,
landing in those holes, would count pages a fresh process never gave back
(bench/results/memory_intel-xeon-2c_resident/README.md).
"""

from __future__ import annotations

import torch

from advisor.calibration.memory import peak_rss_bytes, reset_peak_rss, rss_bytes
from advisor.calibration.steps import make_step
from advisor.engine.families import FFN
from advisor.engine.families.roles import MODEL

# A two-layer perceptron for 16 features: a few kB of weights, so its own pages are noise next to any
# network of the 30 MB the target covers.
_FIXED_COST_CANDIDATE = {
    "family": FFN.key,
    "networks": {
        MODEL: [
            {"kind": "Linear", "args": {"in_features": 16, "out_features": 8}},
            {"kind": "ReLU", "args": {}},
            {"kind": "Linear", "args": {"in_features": 8, "out_features": 4}},
        ]
    },
    "io": {"input_shape": [16], "input_dtype": "float32", "target": "class", "outputs": 4},
    "training": {"optimizer": "adam", "learning_rate": 0.001, "loss": "cross_entropy"},
}


def pay_fixed_cost(*, steps: int = 3) -> None:
    """Train a tiny unrelated network a few steps on the CPU: the runtime's one-off costs, paid once."""
    step = make_step(_FIXED_COST_CANDIDATE, torch.device("cpu"))
    batch = step.make_batch(8)
    for _ in range(steps):
        step.refill(batch)
        step.run(batch)


def rss_parts() -> dict[str, int]:
    """The resident set's anonymous (heap) and file-backed (code and data of loaded libraries) parts, in
    bytes, from /proc/self/status; empty where the kernel does not report them. A network's first kernels
    fault in pages of libtorch's code the fixed cost did not touch: file-backed, whatever the batch."""
    parts: dict[str, int] = {}
    try:
        with open("/proc/self/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("RssAnon", "RssFile"):
                    parts[key] = int(value.split()[0]) * 1024
    except OSError:
        return {}
    return parts


def training_rss_growth(candidate: dict[str, object], *, batch_size: int, steps: int = 4) -> int:
    """The peak resident-set growth over building `candidate` and training it `steps` steps on the CPU.

    Call it in a process that has paid the fixed cost (`pay_fixed_cost()`) and trained nothing else: what
    an earlier network left in the heap would be reused and not counted. Where the kernel does not let us
    reset its high-water mark, the resident set is sampled after every step instead.
    """
    base = rss_bytes()
    hwm = reset_peak_rss()
    sampled = base
    step = make_step(candidate, torch.device("cpu"))
    batch = step.make_batch(int(batch_size))
    for _ in range(steps):
        step.refill(batch)
        step.run(batch)
        sampled = max(sampled, rss_bytes())
    peak = peak_rss_bytes() if hwm else None
    return max(0, (peak if peak is not None else sampled) - base)
