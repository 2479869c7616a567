"""`python -m bench advice --variants`: each variant sets what its name says on the first candidate (whatever
the engine recommends today), and a real run scores every variant on the same split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from advisor.calibration.layers import build
from advisor.engine import recommend
from bench import advice_variants
from bench.advice_data import dataset
from bench.advice_variants import VARIANTS, variant


def _first(name: str) -> dict[str, Any]:
    return recommend(dataset(name, 0)[1])["candidates"][0]


@pytest.mark.parametrize(
    ("name", "training", "latent"),
    [
        ("lr2e-4", {"learning_rate": 2e-4, "betas": None}, 2),
        ("lr2e-4_epochs500", {"learning_rate": 2e-4, "betas": None, "epochs": 500}, 2),
        ("lr2e-4_b05", {"learning_rate": 2e-4, "betas": [0.5, 0.999]}, 2),
        ("lr2e-4_b05_z100", {"learning_rate": 2e-4, "betas": [0.5, 0.999]}, 100),
        ("lr1e-3", {"learning_rate": 1e-3, "betas": None}, 2),
        ("lr1e-3_b05", {"learning_rate": 1e-3, "betas": [0.5, 0.999]}, 2),
        ("metz", {"learning_rate": 1e-4, "betas": [0.5, 0.999], "batch_size": 64}, 256),
        ("metz_b512", {"learning_rate": 1e-4, "betas": [0.5, 0.999], "batch_size": 512}, 256),
        ("metz_nets_dcgan_opt", {"learning_rate": 2e-4, "betas": [0.5, 0.999]}, 256),
        ("metz_nets_kb_opt", {"learning_rate": 1e-3, "betas": None}, 256),
    ],
)
def test_each_gan_variant_sets_its_rate_betas_and_latent_and_builds(
    name: str, training: dict[str, Any], latent: int
) -> None:
    candidates = recommend(dataset("mixture", 0)[1])["candidates"]
    first = advice_variants.base_of(name, candidates)
    assert first["family"] == "gan"  # the GAN variants change the recommendation's GAN (after the VAE)
    c = variant(name, first)
    for key, value in training.items():
        assert c["training"].get(key) == value, key
    assert c["io"]["latent_size"] == latent
    nets = build(c)
    assert nets["generator"](torch.randn(3, latent)).shape == (3, 2)
    assert nets["discriminator"](torch.randn(3, 2)).shape == (3, 1)
    assert first == advice_variants.base_of(name, recommend(dataset("mixture", 0)[1])["candidates"])


def test_the_supervised_variants_change_the_optimiser_and_width() -> None:
    first = _first("diabetes")
    sgd = variant("sgd0.01_half", first)
    assert {k: sgd["training"][k] for k in ("optimizer", "learning_rate", "momentum")} == {
        "optimizer": "sgd",
        "learning_rate": 0.01,
        "momentum": 0.9,
    }
    widths, halved = (
        [x["args"]["out_features"] for x in c["networks"]["model"] if x["kind"] == "Linear"]
        for c in (first, sgd)
    )
    assert halved[:-1] == [max(1, round(w / 2)) for w in widths[:-1]] and halved[-1] == widths[-1]
    adamw = variant("adamw_wd0.01", first)
    assert (adamw["training"]["optimizer"], adamw["training"]["weight_decay"]) == ("adamw", 0.01)
    assert variant("advised", first) == first


def test_an_unknown_variant_is_refused() -> None:
    with pytest.raises(SystemExit, match="unknown variant"):
        advice_variants.run(["diabetes"], 1, ["advised", "bogus"], 60.0, None)
    assert set(VARIANTS) >= {"advised", "baseline"}


def test_it_scores_each_variant_on_the_same_split(tmp_path: Path) -> None:
    torch.set_num_threads(1)
    advice_variants.run(["diabetes"], 1, ["advised", "baseline", "adamw_wd0.01"], 60.0, tmp_path)
    rows = [json.loads(line) for line in (tmp_path / "variants.jsonl").read_text().splitlines()]
    assert [r["variant"] for r in rows] == ["advised", "baseline", "adamw_wd0.01"]
    assert all(r["data"] == "diabetes" and r["seed"] == 0 for r in rows)
    assert all(-1.0 < r["score"] < 1.0 for r in rows)  # held-out R²
    assert rows[0]["epochs"] > 0 and rows[0]["training"]["optimizer"] == "adam"
    assert "training" not in rows[1]  # the linear baseline has none
    assert "| diabetes | advised | 1 |" in (tmp_path / "variants.md").read_text()
