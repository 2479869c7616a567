"""Starting points for the wizard: example tasks, and hardware taken from the devices live workers report."""

from __future__ import annotations

import re
from typing import Any

from advisor import queries
from advisor.models import Device


def _classify(
    label: str, task: str, examples: int, shape: list[int], outputs: int, accuracy: float
) -> dict[str, Any]:
    """An example of a classification task: its label, and the spec of its task and data steps."""
    data = {"examples": examples, "input_shape": shape, "outputs": outputs}
    return {
        "label": label,
        "spec": {"task": task, "goal": "classify", "data": data, "target": {"accuracy": accuracy}},
    }


# Each example fills the task and data steps; the hardware step keeps what the user (or a worker) gave.
EXAMPLES: dict[str, dict[str, Any]] = {
    "mnist": _classify("MNIST-like digits", "vision", 60000, [1, 28, 28], 10, 0.98),
    "cifar": _classify("CIFAR-like small photos", "vision", 50000, [3, 32, 32], 10, 0.9),
    "imagenet": _classify("ImageNet-like photos", "vision", 1281167, [3, 224, 224], 1000, 0.75),
    "speech": _classify("Speech frames", "sequence", 100000, [100, 40], 40, 0.8),
    "text": {
        "label": "Text generation",
        "spec": {
            "task": "generation",
            "generation": "sequence",
            "data": {"examples": 200000, "input_shape": [64], "vocab_size": 10000},
            "target": {},
        },
    },
    "tabular": _classify("Customer table", "tabular", 20000, [32], 4, 0.9),
}
DEFAULT_EXAMPLE = "mnist"
# The example whose input shape a task starts from when the user switches to it.
TASK_EXAMPLE = {"vision": "mnist", "sequence": "speech", "tabular": "tabular", "generation": "text"}


def reshape_for_task(data: Any) -> None:
    """A switch of task leaves the data step's shape of the old task (1, 28, 28 for tabular data): when the
    shape was filled for another task (`shaped_for`, a hidden field), start from the new task's example."""
    task, shaped = data.get("task", ""), data.get("shaped_for", "")
    if not shaped or task == shaped or task not in TASK_EXAMPLE:
        return
    example = EXAMPLES[TASK_EXAMPLE[task]]["spec"]["data"]
    data["input_shape"] = ", ".join(map(str, example["input_shape"]))
    data["vocab_size"] = str(example.get("vocab_size", ""))
    data["shaped_for"] = task


FALLBACK_HARDWARE: dict[str, Any] = {"cpu_cores": 4, "ram_gb": 16, "link": "pcie3", "storage": "ssd"}


def hardware_from_device(device: Device) -> dict[str, Any]:
    """The TaskSpec hardware section a worker's device implies: its host's CPU, and the GPU if it is one."""
    host_cpu = queries.host_cpu(device)
    hardware: dict[str, Any] = dict(FALLBACK_HARDWARE)
    if host_cpu is not None:
        hardware["cpu_cores"] = host_cpu.cores or hardware["cpu_cores"]
        hardware["cpu_threads"] = host_cpu.threads or None
        if host_cpu.memory_bytes:
            hardware["ram_gb"] = round(host_cpu.memory_bytes / 1e9, 1)
    if device.kind == "cuda":
        hardware["gpu"] = _catalog_gpu(device.name)
        if device.memory_bytes:
            hardware["gpu_memory_gb"] = round(device.memory_bytes / 1e9, 1) if hardware["gpu"] else None
    return hardware


def _words(name: str) -> set[str]:
    """'Tesla V100-SXM2-32GB' -> {'v100', 'sxm2', '32', 'gb'}: vendor words dropped, sizes split off."""
    spaced = re.sub(r"(\d+)(gb)\b", r"\1 \2", name.lower().replace("-", " "))
    return set(spaced.split()) - {"nvidia", "geforce", "tesla"}


def _catalog_gpu(name: str) -> str | None:
    """The catalog id whose name shares the most words with a CUDA device's name; None when none does."""
    from advisor import engine

    words = _words(name)
    best, score = None, 0
    for gpu in engine.gpu_catalog():
        shared = words & _words(gpu["name"])
        # The model number must be among them: "RTX A4000" is no "RTX 2080 Ti" for sharing "rtx".
        if any(c.isdigit() for w in shared for c in w if w not in {"gb"}) and len(shared) > score:
            best, score = gpu["id"], len(shared)
    return best


def default_spec(devices: list[Device], example: str = DEFAULT_EXAMPLE) -> dict[str, Any]:
    chosen = EXAMPLES.get(example, EXAMPLES[DEFAULT_EXAMPLE])["spec"]
    cpu = next((d for d in devices if d.kind == "cpu"), None)
    hardware = hardware_from_device(cpu) if cpu is not None else dict(FALLBACK_HARDWARE)
    return {**chosen, "hardware": hardware}
