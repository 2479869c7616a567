"""TaskSpec validation: every field, default and vocabulary of the contract; errors by dotted path."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine import SpecError, normalise, recommend
from tests.engine.specs import grid

GOOD: dict[str, Any] = {
    "task": "vision",
    "data": {"examples": 60_000, "input_shape": [1, 28, 28], "outputs": 10},
    "hardware": {"cpu_cores": 4, "ram_gb": 32},
}


def _with(path: str, value: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """GOOD with one dotted path set (or removed when value is ...)."""
    spec = copy.deepcopy(base or GOOD)
    *parents, last = path.split(".")
    node = spec
    for part in parents:
        node = node.setdefault(part, {})
    if value is ...:
        node.pop(last, None)
    else:
        node[last] = value
    return spec


TOKENS = {
    "task": "sequence",
    "data": {"examples": 10, "input_shape": [32], "vocab_size": 100, "outputs": 2},
    "hardware": {"cpu_cores": 2, "ram_gb": 8},
}
TABULAR = {
    "task": "tabular",
    "data": {"examples": 10, "input_shape": [5], "outputs": 2},
    "hardware": {"cpu_cores": 2, "ram_gb": 8},
}

BAD = [
    # (spec, dotted path, words the message must contain)
    (_with("task", ...), "task", "required"),
    (_with("task", "video"), "task", "one of generation, vision, sequence, tabular"),
    (_with("task", 3), "task", "one of"),
    (_with("foo", 1), "foo", "not a field"),
    (_with("generation", "random"), "generation", "only used with task generation"),
    (_with("target.two_sample", 0.8), "target.two_sample", "only for task generation"),
    (_with("target.two_sample", 1.5, {**GOOD, "task": "generation"}), "target.two_sample", "at most 1"),
    (
        _with("generation", "music", {**GOOD, "task": "generation"}),
        "generation",
        "random, controlled, sequence",
    ),
    (_with("generation", "sequence", {**GOOD, "task": "generation"}), "generation", "has no steps"),
    (
        _with("generation", "sequence", {**GOOD, "task": "generation", "data": {**TABULAR["data"]}}),
        "generation",
        "[steps, features]",
    ),
    (_with("goal", "cluster"), "goal", "classify, regress, compress"),
    (_with("data", ...), "data", "required"),
    (_with("data", [1, 2]), "data", "must be an object"),
    (_with("data.colour", "red"), "data.colour", "not a field"),
    (_with("data.examples", ...), "data.examples", "required"),
    (_with("data.examples", 0), "data.examples", "at least 1"),
    (_with("data.examples", 1.5), "data.examples", "whole number"),
    (_with("data.examples", "100"), "data.examples", "whole number"),
    (_with("data.examples", True), "data.examples", "whole number"),
    (_with("data.examples", 10**20), "data.examples", "at most"),
    (_with("data.input_shape", ...), "data.input_shape", "required"),
    (_with("data.input_shape", "28x28"), "data.input_shape", "list of whole numbers"),
    (_with("data.input_shape", []), "data.input_shape", "list of whole numbers"),
    (_with("data.input_shape", [1, 28.0, 28]), "data.input_shape", "list of whole numbers"),
    (_with("data.input_shape", [1, 0, 28]), "data.input_shape", "at least 1"),
    (_with("data.input_shape", [28, 28]), "data.input_shape", "vision needs [channels, height, width]"),
    (_with("data.input_shape", [28, 28, 1]), "data.input_shape", "looks like [height, width, channels]"),
    (_with("data.input_shape", [1, 2**31, 2]), "data.input_shape", "not a real example size"),
    (_with("data.input_shape", [101, 100_000, 100_000]), "data.input_shape", "not a real example size"),
    (_with("data.input_shape", [5, 2], TABULAR), "data.input_shape", "tabular needs [features]"),
    (_with("data.vocab_size", ..., TOKENS), "data.input_shape", "sequence needs [steps, features]"),
    (
        _with("data.input_shape", [32, 4], TOKENS),
        "data.input_shape",
        "sequence with vocab_size needs [steps]",
    ),
    (
        _with("data.input_shape", [1, 2, 3, 4], {**GOOD, "task": "generation"}),
        "data.input_shape",
        "generation",
    ),
    (
        _with(
            "data.vocab_size",
            50,
            {**GOOD, "task": "generation", "data": {"examples": 9, "input_shape": [3, 4]}},
        ),
        "data.input_shape",
        "token generation with vocab_size needs [steps]",
    ),
    (_with("data.vocab_size", 1, TOKENS), "data.vocab_size", "at least 2"),
    (_with("data.vocab_size", 100), "data.vocab_size", "only for token sequences"),
    (_with("data.outputs", ...), "data.outputs", "required to classify"),
    (_with("data.outputs", ..., {**TABULAR, "goal": "regress"}), "data.outputs", "required to regress"),
    (_with("data.outputs", 1), "data.outputs", "at least 2 classes"),
    (_with("data.outputs", 0), "data.outputs", "at least 1"),
    (_with("data.outputs", "ten"), "data.outputs", "whole number"),
    (_with("data.labelled_fraction", 1.5), "data.labelled_fraction", "at most 1"),
    (_with("data.labelled_fraction", -0.1), "data.labelled_fraction", "at least 0"),
    (_with("data.labelled_fraction", "all"), "data.labelled_fraction", "number"),
    (_with("data.labelled_fraction", float("nan")), "data.labelled_fraction", "number"),
    (_with("data.labelled_fraction", 0.0), "data.labelled_fraction", "at least one labelled example"),
    (_with("data.bytes_per_value", 3), "data.bytes_per_value", "1, 2, 4 or 8"),
    (_with("data.bytes_per_value", 4.0), "data.bytes_per_value", "1, 2, 4 or 8"),
    (_with("goal", "compress", TOKENS), "goal", "token ids"),
    (_with("data.input_shape", [1], {**TABULAR, "goal": "compress"}), "data.input_shape", "at least 2 input"),
    (_with("hardware", ...), "hardware", "required"),
    (_with("hardware", "laptop"), "hardware", "must be an object"),
    (_with("hardware.tpu", 1), "hardware.tpu", "not a field"),
    (_with("hardware.cpu_cores", ...), "hardware.cpu_cores", "required"),
    (_with("hardware.cpu_cores", 0), "hardware.cpu_cores", "at least 1"),
    (_with("hardware.cpu_threads", 2), "hardware.cpu_threads", "at least cpu_cores (4)"),
    (_with("hardware.ram_gb", ...), "hardware.ram_gb", "required"),
    (_with("hardware.ram_gb", 0), "hardware.ram_gb", "above 0"),
    (_with("hardware.ram_gb", "lots"), "hardware.ram_gb", "number"),
    (_with("hardware.gpu", "gtx-9999"), "hardware.gpu", "not in the GPU catalog"),
    (_with("hardware.gpu", 1080), "hardware.gpu", "not in the GPU catalog"),
    (_with("hardware.gpus_per_node", 2), "hardware.gpus_per_node", "must be 0"),
    (_with("hardware.gpus_per_node", 0, _with("hardware.gpu", "t4")), "hardware.gpus_per_node", "at least 1"),
    (_with("hardware.gpu_memory_gb", 16), "hardware.gpu_memory_gb", "give hardware.gpu too"),
    (_with("hardware.gpu_memory_gb", 0, _with("hardware.gpu", "t4")), "hardware.gpu_memory_gb", "above 0"),
    (_with("hardware.nodes", 0), "hardware.nodes", "at least 1"),
    (_with("hardware.link", "pcie6"), "hardware.link", "pcie3, pcie4, pcie5, nvlink"),
    (_with("hardware.storage", "tape"), "hardware.storage", "hdd, ssd, nvme, nvme-raid0"),
    (_with("target", 0.9), "target", "must be an object"),
    (_with("target.accuracy", 98), "target.accuracy", "at most 1"),
    (_with("target.time_budget_hours", 0), "target.time_budget_hours", "above 0"),
    (_with("target.time_budget_hours", float("inf")), "target.time_budget_hours", "number"),
]


@pytest.mark.parametrize(("spec", "path", "words"), BAD, ids=[f"{i}-{row[1]}" for i, row in enumerate(BAD)])
def test_it_names_the_offending_field_in_plain_words(spec: dict[str, Any], path: str, words: str) -> None:
    with pytest.raises(SpecError) as caught:
        recommend(spec)
    assert path in caught.value.errors, caught.value.errors
    assert any(words in message for message in caught.value.errors[path]), caught.value.errors[path]


def test_it_reports_every_bad_field_at_once() -> None:
    spec = _with("data.examples", 0, _with("hardware.link", "usb", _with("target.accuracy", 2)))
    with pytest.raises(SpecError) as caught:
        normalise(spec)
    assert set(caught.value.errors) == {"data.examples", "hardware.link", "target.accuracy"}


def test_it_rejects_a_spec_that_is_not_an_object() -> None:
    with pytest.raises(SpecError) as caught:
        normalise([GOOD])
    assert list(caught.value.errors) == ["spec"]


def test_it_fills_every_default_of_the_contract() -> None:
    clean = normalise(GOOD)
    assert clean["generation"] is None and clean["goal"] == "classify"
    assert clean["data"]["labelled_fraction"] == 1.0 and clean["data"]["bytes_per_value"] == 4
    assert clean["data"]["vocab_size"] is None
    hardware = clean["hardware"]
    assert hardware["cpu_threads"] == 4 and hardware["gpu"] is None and hardware["gpus_per_node"] == 0
    assert (hardware["nodes"], hardware["link"], hardware["storage"]) == (1, "pcie3", "ssd")
    assert clean["target"] == {"accuracy": None, "two_sample": None, "time_budget_hours": None}
    assert normalise(_with("hardware.gpu", "t4"))["hardware"]["gpus_per_node"] == 1


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"examples": 9, "input_shape": [32], "vocab_size": 50}, "sequence"),
        ({"examples": 9, "input_shape": [32, 3]}, "sequence"),
        ({"examples": 9, "input_shape": [3, 32, 32]}, "random"),
        ({"examples": 9, "input_shape": [12]}, "random"),
    ],
)
def test_it_infers_the_kind_of_generation(data: dict[str, Any], expected: str) -> None:
    spec = {"task": "generation", "data": data, "hardware": {"cpu_cores": 1, "ram_gb": 1}}
    assert normalise(spec)["generation"] == expected


def test_it_does_not_change_the_callers_spec() -> None:
    spec = copy.deepcopy(GOOD)
    recommend(spec)
    assert spec == GOOD


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**15),
    st.floats(allow_nan=True),
    st.text(max_size=5),
    st.lists(st.integers(-2, 600), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(
    task=st.sampled_from(["generation", "vision", "sequence", "tabular", "x"]),
    shape=_values,
    examples=_values,
    outputs=_values,
    vocab=_values,
    gpu=st.sampled_from([None, "t4", "gtx-980", "h100-sxm", "nope"]),
    per_node=_values,
    budget=_values,
    goal=st.sampled_from([None, "classify", "regress", "compress", 7]),
    gpu_memory=st.one_of(st.none(), st.floats(min_value=1e-12, max_value=1e4)),
    nodes=st.one_of(st.none(), st.integers(1, 300)),
    accuracy=st.one_of(st.none(), st.floats(0, 1)),
    fraction=st.one_of(st.none(), st.floats(0, 1)),
)
def test_it_answers_or_explains_but_never_crashes(**values: Any) -> None:
    spec = {
        "task": values["task"],
        "goal": values["goal"],
        "data": {
            "examples": values["examples"],
            "input_shape": values["shape"],
            "outputs": values["outputs"],
            "vocab_size": values["vocab"],
        },
        "hardware": {
            "cpu_cores": 4,
            "ram_gb": 16,
            "gpu": values["gpu"],
            "gpus_per_node": values["per_node"],
            "gpu_memory_gb": values["gpu_memory"],
            "nodes": values["nodes"],
        },
        "target": {"time_budget_hours": values["budget"], "accuracy": values["accuracy"]},
    }
    try:
        rec = recommend(spec)
    except SpecError as error:
        assert error.errors and all(isinstance(m, list) and m for m in error.errors.values())
        return
    assert rec["candidates"]


def test_it_accepts_its_own_normalised_spec_unchanged() -> None:
    for task_spec in [
        *grid(),
        _with("hardware.gpu", "t4"),
        _with("hardware.gpu_memory_gb", 12, _with("hardware.gpu", "t4")),
    ]:
        clean = normalise(task_spec)
        assert normalise(clean) == clean
