"""Sizing rules over the whole grid: FFN hidden >= inputs, AE code < inputs, CNN activations shrinking stage
by stage, DN growing; training set-up per Shi et al. and W; capacity growing with target and data."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import pytest

from advisor.engine import recommend
from advisor.engine.families.dense import DEEP_MIN_WIDTH, SHALLOW_MIN_WIDTH
from advisor.engine.layers import count
from tests.engine.specs import grid, spec

ALL = [c for s in grid() for c in recommend(s)["candidates"]]


def _of(family: str) -> list[dict[str, Any]]:
    return [c for c in ALL if c["family"] == family and c["published"] is None]


def _numel_after(candidate: dict[str, Any], key: str, kind: str) -> list[int]:
    layers = candidate["networks"][key]
    shape = candidate["io"]["input_shape"] if key == "model" else [candidate["io"]["latent_size"]]
    return [math.prod(count(layers[: i + 1], shape).shape) for i, x in enumerate(layers) if x["kind"] == kind]


def test_it_gives_an_ffn_at_least_as_many_hidden_nodes_as_inputs() -> None:
    for candidate in _of("ffn"):
        inputs, outputs = math.prod(candidate["io"]["input_shape"]), candidate["io"]["outputs"]
        least = max(inputs, outputs, DEEP_MIN_WIDTH if candidate["depth"] == "deep" else SHALLOW_MIN_WIDTH)
        assert min(candidate["hidden_sizes"]) >= least
        assert candidate["hidden_sizes"][0] <= 2 * least + 8


def test_it_gives_an_auto_encoder_a_smaller_code_and_a_full_output() -> None:
    for candidate in _of("ae"):
        inputs = math.prod(candidate["io"]["input_shape"])
        assert min(candidate["hidden_sizes"]) < inputs
        final = count(candidate["networks"]["model"], candidate["io"]["input_shape"]).shape
        assert list(final) == candidate["io"]["input_shape"]


def test_it_shrinks_cnn_activations_stage_by_stage() -> None:
    cnns = [c for c in _of("cnn") if _numel_after(c, "model", "MaxPool2d")]
    assert cnns
    for candidate in cnns:
        after = _numel_after(candidate, "model", "MaxPool2d")
        assert all(b < a for a, b in itertools.pairwise(after))
        assert candidate["hidden_sizes"] == sorted(candidate["hidden_sizes"])


def test_it_grows_a_deconvolutional_network_layer_by_layer() -> None:
    for candidate in _of("dn") + _of("gan"):
        key = "model" if candidate["family"] == "dn" else "generator"
        after = _numel_after(candidate, key, "ConvTranspose2d")[:-1]  # the last one sets the image's channels
        assert all(b > a for a, b in itertools.pairwise(after))


@pytest.mark.parametrize(
    ("task_spec", "family", "batch"),
    [
        (spec("tabular", [20], outputs=2), "ffn", 64),
        (spec("vision", [3, 224, 224], outputs=10), "cnn", 16),
        (spec("sequence", [32], vocab_size=100, outputs=2), "lstm", 128),
        (spec("sequence", [32], vocab_size=100, outputs=2), "tcn", 32),  # Bai et al.'s reference code
        (spec("tabular", [20], outputs=2, examples=10), "ffn", 10),
    ],
)
def test_it_starts_mini_batches_where_shi_et_al_did(
    task_spec: dict[str, Any], family: str, batch: int
) -> None:
    training = next(c for c in recommend(task_spec)["candidates"] if c["family"] == family)["training"]
    assert training["batch_size"] == batch
    assert training["init_scale"] == 0.1 and training["optimizer"] == "adam" and training["epochs"] >= 1


def test_it_trains_gans_and_vaes_with_adam_and_rbms_by_contrastive_divergence() -> None:
    for candidate in ALL:
        training = candidate["training"]
        if candidate["family"] in ("gan", "vae"):
            assert training["optimizer"] == "adam"
        if candidate["family"] in ("rbm", "dbn"):
            assert training["loss"] == "cd1" and training["init_scale"] == 0.01


def test_it_grows_capacity_with_the_target_and_the_data() -> None:
    def width(**extra: Any) -> int:
        return int(recommend(spec("tabular", [100], outputs=5, **extra))["candidates"][0]["hidden_sizes"][0])

    assert width(examples=500, target={"accuracy": 0.99}) == width(examples=500)  # little data: no growth
    assert width(target={"accuracy": 0.9}) > width()
    assert width(target={"accuracy": 0.99}) > width(target={"accuracy": 0.9})
    assert width(examples=1_000_000, target={"accuracy": 0.99}) > width(target={"accuracy": 0.99})


def test_it_gives_every_candidate_the_contracts_fields() -> None:
    fields = {
        "family",
        "depth",
        "published",
        "networks",
        "hidden_sizes",
        "parameters",
        "flops_per_example",
        "training",
        "memory_bytes",
        "estimate",
        "reasons",
        "io",
    }
    for candidate in ALL:
        assert fields <= set(candidate)
        assert candidate["depth"] in ("shallow", "deep")
        assert (candidate["depth"] == "shallow") == (
            len(candidate["hidden_sizes"]) == 1 and candidate["family"] in ("ffn", "ae", "rbm")
        )
        assert candidate["estimate"]["seconds_to_train"] > 0 and candidate["estimate"]["basis"] == "catalog"


def test_it_answers_in_plain_json_that_round_trips() -> None:
    for task_spec in grid()[::3]:
        rec = recommend(task_spec)
        text = json.dumps(rec, allow_nan=False)
        assert json.loads(text) == rec
        assert set(rec) == {"spec", "candidates", "hardware_plan", "dataflow", "reasons", "warnings"}
