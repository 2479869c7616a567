"""net.shallow.first for small images (W §III-A): the deep candidates lead (net.deep.structure) and a shallow
FFN on the flattened image follows as the baseline to try and validate; large images get none."""

from __future__ import annotations

import math
from typing import Any

import pytest

from advisor.engine import recommend
from advisor.engine.choice import SHALLOW_MAX_INPUTS
from tests.engine.specs import spec

DIGITS = spec("vision", [1, 8, 8], outputs=10, examples=1_797)
MNIST = spec("vision", [1, 28, 28], outputs=10, examples=60_000, target={"accuracy": 0.98})
EDGE = spec("vision", [1, 64, 64], outputs=10)  # exactly SHALLOW_MAX_INPUTS values

SMALL = [
    DIGITS,
    MNIST,
    spec("vision", [1, 28, 28], goal="regress", outputs=2),
    spec("vision", [1, 28, 28], outputs=10, labelled_fraction=0.1),  # the DBN leads
    spec("vision", [3, 32, 32], outputs=10),
    EDGE,
]
LARGE = [
    spec("vision", [3, 224, 224], outputs=10),
    spec("vision", [3, 224, 224], outputs=1000, examples=1_281_167),
    spec("vision", [1, 64, 65], outputs=10),  # one row past the threshold
    spec("vision", [4, 64, 48], goal="regress", outputs=2),
]


def _first(candidates: list[dict[str, Any]], depth: str) -> int | None:
    """As the accuracy probe picks: the first candidate of that depth."""
    return next((i for i, c in enumerate(candidates) if c["depth"] == depth), None)


def test_it_puts_the_edge_case_exactly_on_the_threshold() -> None:
    assert math.prod(EDGE["data"]["input_shape"]) == SHALLOW_MAX_INPUTS


@pytest.mark.parametrize("task_spec", SMALL, ids=lambda s: "x".join(map(str, s["data"]["input_shape"])))
def test_it_adds_a_shallow_ffn_after_the_deep_candidates_for_small_images(task_spec: dict[str, Any]) -> None:
    rec = recommend(task_spec)
    candidates = rec["candidates"]
    shallow, deep = _first(candidates, "shallow"), _first(candidates, "deep")
    assert deep == 0 and shallow is not None
    assert all(c["depth"] == "deep" for c in candidates[:shallow])  # net.deep.structure keeps the lead
    baseline = candidates[shallow]
    assert baseline["family"] == "ffn" and len(baseline["hidden_sizes"]) == 1
    model = baseline["networks"]["model"]
    assert [layer["kind"] for layer in model[:2]] == ["Flatten", "Linear"]
    assert model[1]["args"]["in_features"] == math.prod(task_spec["data"]["input_shape"])
    assert baseline["io"]["input_shape"] == task_spec["data"]["input_shape"]
    assert baseline["io"]["outputs"] == task_spec["data"]["outputs"]
    own = {r["rule"] for r in baseline["reasons"]}
    assert {"net.shallow.first", "size.ffn.hidden"} <= own
    top = {r["rule"] for r in rec["reasons"]}
    assert {"net.deep.structure", "net.shallow.first", "net.shallow.validate"} <= top


@pytest.mark.parametrize("task_spec", LARGE, ids=lambda s: "x".join(map(str, s["data"]["input_shape"])))
def test_it_adds_no_shallow_ffn_for_large_images(task_spec: dict[str, Any]) -> None:
    rec = recommend(task_spec)
    assert all(c["depth"] == "deep" for c in rec["candidates"])
    assert "net.shallow.first" not in {r["rule"] for r in rec["reasons"]}


def test_it_explains_the_baseline_with_the_images_size() -> None:
    candidates = recommend(DIGITS)["candidates"]
    baseline = candidates[_first(candidates, "shallow") or 0]
    text = next(r["text"] for r in baseline["reasons"] if r["rule"] == "net.shallow.first")
    assert "64 values" in text and "deep" in text
