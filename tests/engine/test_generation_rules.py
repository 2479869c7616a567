"""Generation judged as generation: a generation task is sized by its two-sample target, never by an accuracy;
vectors and series get a VAE with a Gaussian decoder and a fitted prior first; generators get the longer
epoch budget; a DN only where a specification is to be followed."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import recommend
from advisor.engine.training import GENERATOR_EPOCHS, epochs_for
from tests.engine.specs import spec

IMAGES = spec("generation", [3, 32, 32], examples=50_000)
RING = spec("generation", [2], examples=4000)  # bench advice's 8 Gaussians
SERIES = spec("generation", [16, 4], generation="random")


def _first(task: dict[str, Any], family: str) -> dict[str, Any]:
    return next(c for c in recommend(task)["candidates"] if c["family"] == family)


def _sizes(task: dict[str, Any], family: str, **target: float) -> list[int]:
    return list(_first({**task, "target": target}, family)["hidden_sizes"])


@pytest.mark.parametrize(("task", "family"), [(IMAGES, "gan"), (IMAGES, "vae"), (RING, "vae"), (RING, "gan")])
def test_an_accuracy_target_sizes_no_generator(task: dict[str, Any], family: str) -> None:
    # the wizard's default 0.98 widened the image GAN's 128/64/32 to 224/112/56 before
    assert _sizes(task, family, accuracy=0.98) == _sizes(task, family)
    assert "size.capacity" not in {
        r["rule"] for r in _first({**task, "target": {"accuracy": 0.98}}, family)["reasons"]
    }


@pytest.mark.parametrize(("task", "family"), [(IMAGES, "gan"), (RING, "vae"), (RING, "gan")])
@pytest.mark.parametrize(("low", "high"), [(0.3, 0.5), (0.5, 0.8)])
def test_a_higher_two_sample_target_widens_the_generator(
    task: dict[str, Any], family: str, low: float, high: float
) -> None:
    assert _sizes(task, family, two_sample=high) > _sizes(task, family, two_sample=low)
    widened = _first({**task, "target": {"two_sample": high}}, family)
    text = next(r["text"] for r in widened["reasons"] if r["rule"] == "size.capacity")
    assert f"a two-sample target of {high:g}" in text


@pytest.mark.parametrize(
    ("task", "first", "loss", "last_kinds"),
    [
        (RING, "vae", "elbo_gaussian", ["Gaussian"]),
        (SERIES, "vae", "elbo_gaussian", ["Gaussian", "Reshape"]),
        (IMAGES, "gan", "elbo", ["Sigmoid"]),  # an image VAE's decoder stays Bernoulli, the GAN first
    ],
)
def test_it_gives_vectors_and_series_a_gaussian_vae_first_with_a_fitted_prior(
    task: dict[str, Any], first: str, loss: str, last_kinds: list[str]
) -> None:
    rec = recommend(task)
    assert rec["candidates"][0]["family"] == first
    vae = _first(task, "vae")
    assert vae["training"]["loss"] == loss
    assert [layer["kind"] for layer in vae["networks"]["decoder"][-len(last_kinds) :]] == last_kinds
    if loss == "elbo_gaussian":
        gaussian = next(layer for layer in vae["networks"]["decoder"] if layer["kind"] == "Gaussian")
        assert gaussian["args"]["features"] == (2 if task is RING else 64)
        assert "net.generation.vector" in {r["rule"] for r in rec["reasons"]}
        # its samples come from codes drawn where the training codes lie (Ghosh et al. 2020)
        assert vae["training"]["prior"] == "mixture"
        assert "train.prior.mixture" in {r["rule"] for r in vae["reasons"]}
    else:
        assert "prior" not in vae["training"]


@pytest.mark.parametrize(("task", "family"), [(RING, "vae"), (RING, "gan"), (IMAGES, "gan")])
def test_it_gives_generators_the_longer_epoch_budget(task: dict[str, Any], family: str) -> None:
    candidate = _first({**task, "target": {"accuracy": 0.99}}, family)
    assert candidate["training"]["epochs"] == GENERATOR_EPOCHS * epochs_for(task["data"]["examples"], None)
    said = next(r["text"] for r in candidate["reasons"] if r["rule"] == "train.epochs")
    assert f"{GENERATOR_EPOCHS}x a supervised network's" in said


@pytest.mark.parametrize(("kind", "listed"), [("controlled", True), ("random", False)])
def test_it_lists_a_dn_only_where_a_specification_is_followed(kind: str, listed: bool) -> None:
    families = [
        c["family"] for c in recommend(spec("generation", [1, 28, 28], generation=kind))["candidates"]
    ]
    assert ("dn" in families) is listed
