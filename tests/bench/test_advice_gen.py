"""The synthetic generation task of `python -m bench advice --data mixture`: its scores are what the
construction says (the true model at the achievable score, one Gaussian far below it), and the
recommended GAN trains through the calibration's own step and is judged the same way."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from advisor.engine import recommend
from advisor.probe.learning import generation
from bench import advice_gen
from bench.advice_data import dataset


def test_it_scores_the_true_model_at_the_achievable_and_one_gaussian_far_below() -> None:
    rng = np.random.default_rng(0)
    real, same = advice_gen.draw(800, rng), advice_gen.draw(800, rng)
    blob = rng.multivariate_normal(real.mean(axis=0), np.cov(real.T), size=800).astype(np.float32)
    truth, gaussian = advice_gen.judge(real, same, 0), advice_gen.judge(real, blob, 0)
    assert truth["c2st_accuracy"] < 0.55 and truth["score"] > 0.9  # chance, up to the test's noise
    assert gaussian["c2st_accuracy"] > 0.8 and gaussian["score"] < 0.4
    assert truth["modes_covered"] == advice_gen.MODES and gaussian["modes_covered"] == 0
    # within 3 sigma in 2 dimensions: 1 - exp(-9/2) of a Gaussian's mass
    assert truth["high_quality"] == pytest.approx(1 - math.exp(-4.5), abs=0.02)


@pytest.mark.parametrize(("accuracy", "score"), [(0.5, 1.0), (0.45, 1.0), (0.75, 0.5), (1.0, 0.0)])
def test_the_c2st_score_maps_chance_to_one_and_separable_to_zero(accuracy: float, score: float) -> None:
    assert advice_gen.c2st_score(accuracy) == pytest.approx(score)


def test_the_true_log_likelihood_is_what_a_mixture_fitted_to_many_draws_reaches() -> None:
    from sklearn.mixture import GaussianMixture

    rng = np.random.default_rng(1)
    train, test = advice_gen.draw(4000, rng), advice_gen.draw(2000, rng)
    fitted = GaussianMixture(advice_gen.MODES, n_init=3, random_state=0).fit(train)
    assert float(fitted.score(test)) == pytest.approx(advice_gen.true_log_likelihood(test), abs=0.05)


@pytest.mark.parametrize("family", ["vae", "gan"])
def test_it_trains_the_recommended_generators_with_the_calibration_step(family: str) -> None:
    torch.set_num_threads(1)
    _, spec, best = dataset("mixture", 0)
    candidates = recommend(spec)["candidates"]
    assert [c["family"] for c in candidates][:2] == ["vae", "gan"] and best == 1.0
    chosen = next(c for c in candidates if c["family"] == family)
    short = {**chosen, "training": {**chosen["training"], "epochs": 2}}
    rng = np.random.default_rng(0)
    run = advice_gen.train_generator(short, advice_gen.draw(600, rng), advice_gen.draw(200, rng), 800, 0)
    batch = short["training"]["batch_size"]
    assert run["epochs"] == math.ceil(2 * math.ceil(800 / batch) / math.ceil(600 / batch))
    assert 0.0 <= run["val_score"] <= 1.0 and run["curve"][-1]["epoch"] == run["epochs"]
    fake = generation.generate(short, run["nets"], 50, seed=0)
    assert fake.shape == (50, 2) and np.isfinite(fake).all()
