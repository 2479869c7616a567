"""TaskSpec validation: every field, default and vocabulary of the contract, errors by dotted path."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, TypedDict, TypeGuard, cast

from advisor.contract import TaskData, TaskHardware, TaskSpec, TaskTarget
from advisor.engine.catalog import gpu_ids
from advisor.engine.errors import SpecError

# The fields and their vocabularies are declared once, in fields.py (re-exported here for the callers).
from advisor.engine.fields import (
    BYTES_PER_VALUE as BYTES_PER_VALUE,
)
from advisor.engine.fields import (
    GENERATIONS as GENERATIONS,
)
from advisor.engine.fields import (
    GOALS as GOALS,
)
from advisor.engine.fields import (
    LINKS as LINKS,
)
from advisor.engine.fields import (
    SECTIONS as _SECTIONS,
)
from advisor.engine.fields import (
    STORAGES as STORAGES,
)
from advisor.engine.fields import (
    TASKS as TASKS,
)

# Beyond these a number is a typo, not a task: no dataset or machine comes near them, and they keep every
# later computation finite (a float overflow would be a crash, not an answer).
MAX_DIM = 2**31 - 1
MAX_INPUT_VALUES = 10**12
MAX_EXAMPLES = 10**13
MAX_COUNT = 100_000
MAX_GB = 10**9


# A section as the user wrote it: JSON, checked field by field here
_Raw = Mapping[str, object]


class _DataDraft(TypedDict, total=False):
    """TaskData while it is checked: None where a field was wrong (its error is recorded)."""

    examples: int | None
    vocab_size: int | None
    input_shape: list[int] | None
    outputs: int | None
    labelled_fraction: float | None
    bytes_per_value: int


class _HardwareDraft(TypedDict, total=False):
    """TaskHardware while it is checked: None where a field was wrong (its error is recorded)."""

    cpu_cores: int | None
    cpu_threads: int | None
    ram_gb: float | None
    gpu: str | None
    gpus_per_node: int | None
    gpu_memory_gb: float | None
    nodes: int | None
    link: str | None
    storage: str | None


class _Errors:
    def __init__(self) -> None:
        self.by_path: dict[str, list[str]] = {}

    def add(self, path: str, message: str) -> None:
        self.by_path.setdefault(path, []).append(message)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def _in_bounds(
    err: _Errors, path: str, value: Any, low: float, high: float, *, whole: bool, low_open: bool
) -> bool:
    """Whether `value` is a (whole) number in [low, high] ((low, high] where `low_open`); else says why."""
    if not (_is_int(value) if whole else _is_number(value)):
        err.add(path, f"must be {'a whole number' if whole else 'a number'}, not {_show(value)}")
        return False
    low_format, high_format = ("d", ",") if whole else ("g", "g")
    if value < low or (low_open and value == low):
        err.add(
            path,
            f"must be {'above' if low_open else 'at least'} {low:{low_format}}, not {value:{low_format}}",
        )
        return False
    if value > high:
        err.add(path, f"must be at most {high:{high_format}}, not {value:{high_format}}")
        return False
    return True


def _int(err: _Errors, path: str, value: Any, low: int, high: int) -> int | None:
    return int(value) if _in_bounds(err, path, value, low, high, whole=True, low_open=False) else None


def _number(err: _Errors, path: str, value: Any, low: float, high: float, *, low_open: bool) -> float | None:
    return float(value) if _in_bounds(err, path, value, low, high, whole=False, low_open=low_open) else None


def _choice(err: _Errors, path: str, value: Any, allowed: tuple[str, ...]) -> str | None:
    if not isinstance(value, str) or value not in allowed:
        err.add(path, f"must be one of {', '.join(allowed)}, not {_show(value)}")
        return None
    return value


def _show(value: Any) -> str:
    """A value as the user wrote it in JSON, shortened."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _section(err: _Errors, spec: _Raw, name: str, *, required: bool) -> _Raw:
    value = spec.get(name)
    if value is None:
        if required:
            err.add(name, "is required")
        return {}
    if not isinstance(value, dict):
        err.add(name, f"must be an object with fields {', '.join(_SECTIONS[name])}")
        return {}
    _unknown(err, value, name)
    return value


def _unknown(err: _Errors, value: _Raw, section: str) -> None:
    allowed = _SECTIONS[section]
    for key in value:
        if key not in allowed:
            path = f"{section}.{key}" if section else str(key)
            err.add(path, f"is not a field of the task description (known: {', '.join(allowed)})")


def normalise(spec: Any) -> TaskSpec:
    """The TaskSpec validated, with every default filled in; raises SpecError naming each bad field."""
    err = _Errors()
    if not isinstance(spec, dict):
        raise SpecError({"spec": ["must be a JSON object describing the task"]})
    _unknown(err, spec, "")
    if spec.get("task") is None:
        err.add("task", f"is required: one of {', '.join(TASKS)}")
        task = None
    else:
        task = _choice(err, "task", spec["task"], TASKS)
    data = _data(err, _section(err, spec, "data", required=True), task)
    generation = _generation(err, spec, task, data)
    goal = "classify" if spec.get("goal") is None else _choice(err, "goal", spec.get("goal"), GOALS)
    _outputs_rule(err, data, task, goal)
    hardware = _hardware(err, _section(err, spec, "hardware", required=True))
    target = _target(err, _section(err, spec, "target", required=False), task)
    if err.by_path:
        raise SpecError(err.by_path)
    # every field is checked and filled in above, or the error raised names it
    return {
        "task": str(task),
        "generation": generation,
        "goal": goal,
        "data": cast(TaskData, data),
        "hardware": cast(TaskHardware, hardware),
        "target": target,
    }


def _data(err: _Errors, raw: _Raw, task: str | None) -> _DataDraft:
    out: _DataDraft = {}
    if "examples" not in raw or raw["examples"] is None:
        err.add("data.examples", "is required: how many training examples you have")
    else:
        out["examples"] = _int(err, "data.examples", raw["examples"], 1, MAX_EXAMPLES)
    vocab = raw.get("vocab_size")
    out["vocab_size"] = None if vocab is None else _int(err, "data.vocab_size", vocab, 2, 10**8)
    if out["vocab_size"] is not None and task in ("vision", "tabular"):
        err.add("data.vocab_size", f"is only for token sequences (task sequence or generation), not {task}")
    out["input_shape"] = _shape(err, raw.get("input_shape"), task, out["vocab_size"])
    outputs = raw.get("outputs")
    out["outputs"] = None if outputs is None else _int(err, "data.outputs", outputs, 1, 10**8)
    fraction = raw.get("labelled_fraction")
    out["labelled_fraction"] = (
        1.0
        if fraction is None
        else _number(err, "data.labelled_fraction", fraction, 0.0, 1.0, low_open=False)
    )
    size = raw.get("bytes_per_value")
    if size is None:
        out["bytes_per_value"] = 4
    elif not _is_int(size) or size not in BYTES_PER_VALUE:
        err.add("data.bytes_per_value", f"must be 1, 2, 4 or 8, not {_show(size)}")
    else:
        out["bytes_per_value"] = size
    return out


def _shape(err: _Errors, shape: Any, task: str | None, vocab: int | None) -> list[int] | None:
    path = "data.input_shape"
    if shape is None:
        err.add(path, "is required: the shape of one example, e.g. [1, 28, 28] for a greyscale image")
        return None
    if not isinstance(shape, list) or not shape or not all(_is_int(v) for v in shape):
        err.add(path, f"must be a list of whole numbers, e.g. [3, 32, 32], not {_show(shape)}")
        return None
    if any(v < 1 for v in shape):
        err.add(path, "every dimension must be at least 1")
        return None
    if any(v > MAX_DIM for v in shape):
        err.add(path, f"a dimension above {MAX_DIM:,} is not a real example size")
        return None
    if math.prod(shape) > MAX_INPUT_VALUES:
        err.add(path, f"one example with more than {MAX_INPUT_VALUES:,} values is not a real example size")
        return None
    expected = {"vision": 3, "tabular": 1, "sequence": 1 if vocab is not None else 2}.get(task or "")
    messages = {
        "vision": "vision needs [channels, height, width]",
        "tabular": "tabular needs [features]",
        "sequence": "sequence with vocab_size needs [steps]"
        if vocab is not None
        else "sequence needs [steps, features]",
    }
    if expected is not None and len(shape) != expected:
        err.add(path, messages[task or ""])
        return None
    if task == "generation" and not 1 <= len(shape) <= 3:
        err.add(
            path,
            "generation needs the shape of one generated example: [features], [steps, features] or "
            "[channels, height, width]",
        )
        return None
    if task == "generation" and vocab is not None and len(shape) != 1:
        err.add(path, "token generation with vocab_size needs [steps]")
        return None
    if task == "vision" and shape[2] in (1, 3, 4) and shape[0] > 4:
        fixed = [shape[2], shape[0], shape[1]]
        err.add(
            path,
            f"vision needs [channels, height, width]; {shape} looks like [height, width, channels]: "
            f"use {fixed}",
        )
        return None
    return list(shape)


def _generation(err: _Errors, spec: _Raw, task: str | None, data: _DataDraft) -> str | None:
    value = spec.get("generation")
    if task != "generation":
        if value is not None:
            err.add("generation", "is only used with task generation")
        return None
    shape = data.get("input_shape")
    if value is not None:
        chosen = _choice(err, "generation", value, GENERATIONS)
        # A sequence generator is recurrent over steps: it needs steps to run over, either [steps, features]
        # or token ids ([steps] with vocab_size); a vector or an image has none.
        sequential = data.get("vocab_size") is not None or (isinstance(shape, list) and len(shape) == 2)
        if chosen == "sequence" and isinstance(shape, list) and not sequential:
            err.add(
                "generation",
                "sequence needs data.input_shape [steps, features], or [steps] with data.vocab_size; "
                f"{shape} has no steps: use random or controlled",
            )
            return None
        return chosen
    if data.get("vocab_size") is not None or (shape is not None and len(shape) == 2):
        return "sequence"
    return "random"


def _outputs_rule(err: _Errors, data: _DataDraft, task: str | None, goal: str | None) -> None:
    if task not in (None, "generation") and goal == "compress":
        shape = data.get("input_shape")
        if data.get("vocab_size") is not None:
            err.add(
                "goal",
                "compress needs real-valued inputs; token ids (vocab_size) cannot be compressed this way",
            )
        elif shape is not None and math.prod(shape) < 2:
            err.add("data.input_shape", "compress needs at least 2 input values to make a smaller code")
    if task in (None, "generation") or goal in (None, "compress"):
        return
    fraction, examples = data.get("labelled_fraction"), data.get("examples")
    if fraction is not None and examples is not None and fraction * examples < 1:
        err.add(
            "data.labelled_fraction",
            f"{goal} needs at least one labelled example; {fraction:g} of "
            f"{examples:,} examples is none (use goal compress to learn without labels)",
        )
    outputs = data.get("outputs")
    if outputs is None:
        if "data.outputs" not in err.by_path:
            what = "number of classes" if goal == "classify" else "number of values to predict"
            err.add("data.outputs", f"is required to {goal}: the {what}")
    elif goal == "classify" and outputs < 2:
        err.add("data.outputs", "classify needs at least 2 classes (a yes/no task has 2)")


def _hardware(err: _Errors, raw: _Raw) -> _HardwareDraft:
    out: _HardwareDraft = {}
    if raw.get("cpu_cores") is None:
        err.add("hardware.cpu_cores", "is required: the number of physical CPU cores")
        cores = None
    else:
        cores = _int(err, "hardware.cpu_cores", raw["cpu_cores"], 1, 4096)
    out["cpu_cores"] = cores
    threads = raw.get("cpu_threads")
    if threads is None:
        out["cpu_threads"] = cores
    else:
        checked = out["cpu_threads"] = _int(err, "hardware.cpu_threads", threads, 1, 8192)
        if checked is not None and cores is not None and checked < cores:
            err.add("hardware.cpu_threads", f"must be at least cpu_cores ({cores}): every core runs a thread")
    if raw.get("ram_gb") is None:
        err.add("hardware.ram_gb", "is required: the machine's memory in GB")
    else:
        out["ram_gb"] = _number(err, "hardware.ram_gb", raw["ram_gb"], 0.0, MAX_GB, low_open=True)
    gpu = raw.get("gpu")
    if gpu is not None and (not isinstance(gpu, str) or gpu not in gpu_ids()):
        err.add(
            "hardware.gpu", f"{_show(gpu)} is not in the GPU catalog (see /api/v1/catalog/gpus/), or use null"
        )
        gpu = None
    out["gpu"] = gpu if isinstance(gpu, str) else None  # left as given when in the catalog
    per_node = raw.get("gpus_per_node")
    if per_node is None:
        out["gpus_per_node"] = 1 if gpu is not None else 0
    elif raw.get("gpu") is None:
        out["gpus_per_node"] = _int(err, "hardware.gpus_per_node", per_node, 0, 0)
        if out["gpus_per_node"] is None:
            err.by_path["hardware.gpus_per_node"] = ["must be 0 (or left out) when no gpu is given"]
    else:
        out["gpus_per_node"] = _int(err, "hardware.gpus_per_node", per_node, 1, 64)
    memory = raw.get("gpu_memory_gb")
    if memory is not None and raw.get("gpu") is None:
        err.add("hardware.gpu_memory_gb", "overrides the memory of a GPU: give hardware.gpu too")
    out["gpu_memory_gb"] = (
        None
        if memory is None
        else _number(err, "hardware.gpu_memory_gb", memory, 0.0, 100_000.0, low_open=True)
    )
    nodes = raw.get("nodes")
    out["nodes"] = 1 if nodes is None else _int(err, "hardware.nodes", nodes, 1, MAX_COUNT)
    link = raw.get("link")
    out["link"] = "pcie3" if link is None else _choice(err, "hardware.link", link, LINKS)
    storage = raw.get("storage")
    out["storage"] = "ssd" if storage is None else _choice(err, "hardware.storage", storage, STORAGES)
    return out


def _target(err: _Errors, raw: _Raw, task: str | None) -> TaskTarget:
    accuracy = raw.get("accuracy")
    budget = raw.get("time_budget_hours")
    two_sample = raw.get("two_sample")
    if two_sample is not None and task not in (None, "generation"):
        err.add(
            "target.two_sample",
            "is only for task generation (how well generated examples pass for real ones); "
            f"{task} takes target.accuracy",
        )
        two_sample = None
    return {
        "accuracy": None
        if accuracy is None
        else _number(err, "target.accuracy", accuracy, 0.0, 1.0, low_open=False),
        "two_sample": None
        if two_sample is None
        else _number(err, "target.two_sample", two_sample, 0.0, 1.0, low_open=False),
        "time_budget_hours": (
            None
            if budget is None
            else _number(err, "target.time_budget_hours", budget, 0.0, 10.0**6, low_open=True)
        ),
    }
