"""The generation probe's learning side (advisor/probe/learning/generation.py, pipeline.py): a generator
trained by the shared loop on a tiny ring of Gaussians, its scale, its stop, and the probe's stages and
verdict."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from advisor.engine import recommend
from advisor.probe.learning import generation, pipeline, samples, verdict
from advisor.probe.learning import split as splitting
from advisor.probe.learning.plan import ProbePlan

EXAMPLES = 800
RING_SPEC: dict[str, Any] = {
    "task": "generation",
    "generation": "random",
    "data": {"examples": EXAMPLES, "input_shape": [2]},
    "hardware": {"cpu_cores": 2, "ram_gb": 8},
    "target": {"two_sample": 0.8},
}


def ring(n: int, seed: int = 0) -> np.ndarray:
    """8 Gaussians on a circle of radius 2, standard deviation 0.1 (bench/advice_gen.py's task, smaller)."""
    rng = np.random.default_rng(seed)
    angle = 2 * np.pi * rng.integers(0, 8, size=n) / 8
    centres = np.stack([2 * np.cos(angle), 2 * np.sin(angle)], axis=1)
    return (centres + 0.1 * rng.standard_normal((n, 2))).astype(np.float32)


def short(family: str, epochs: int) -> dict[str, Any]:
    """The recommended candidate of `family`, with fewer epochs: a test's training, not a full one."""
    chosen = next(c for c in recommend(RING_SPEC)["candidates"] if c["family"] == family)
    return {**copy.deepcopy(chosen), "training": {**chosen["training"], "epochs": epochs}}


@pytest.fixture(scope="module")
def split() -> splitting.Split:
    return splitting.split(samples.Sample(ring(EXAMPLES), None, "none"), goal="compress", seed=0, scale=False)


def test_the_engine_recommends_a_generator_first_and_the_probe_picks_it() -> None:
    candidates = recommend(RING_SPEC)["candidates"]
    index = generation.generator_index(candidates)
    assert index == 0 and generation.generates(candidates[0])
    tabular = {
        "task": "tabular",
        "data": {"examples": 150, "input_shape": [4], "outputs": 3},
        "hardware": RING_SPEC["hardware"],
        "target": {"accuracy": 0.9},
    }
    assert generation.generator_index(recommend(tabular)["candidates"]) is None  # nothing generates


@pytest.mark.slow
def test_a_short_training_beats_the_same_generator_untrained(split: splitting.Split) -> None:
    """The GAN: untrained, its generator draws a small blob that a classifier always tells from the ring
    (0 here); a few hundred adversarial updates spread it over the ring. (A VAE's untrained Gaussian decoder
    already draws the standardised data's N(0, 1) marginal, and a short training leaves it there: no test.)"""
    import torch

    from advisor.calibration import make_step

    candidate = short("gan", epochs=10)
    standard = generation.Scale.fit("standard", split.x_train)
    train, val, test = (standard.to_net(x) for x in (split.x_train, split.x_val, split.x_test))
    rows: list[dict[str, Any]] = []
    run = generation.train_generator(candidate, train, val, EXAMPLES, 0, on_eval=rows.append)
    trained = generation.two_sample_score(test, generation.generate(candidate, run["nets"], len(test)))
    torch.manual_seed(0)  # the networks train_generator started from
    untrained_nets = make_step(candidate, "cpu").nets
    untrained = generation.two_sample_score(test, generation.generate(candidate, untrained_nets, len(test)))
    assert 0.0 <= untrained <= 1.0 and 0.0 <= trained <= 1.0
    assert trained > untrained
    assert run["stopped"] == "epochs" and run["updates"] == run["epochs"] * run["steps_per_epoch"]
    every = generation.EVAL_EVERY
    assert rows == run["curve"]
    assert [r["epoch"] for r in rows] == sorted({*range(every, run["epochs"] + 1, every), run["epochs"]})
    assert run["val_score"] == max(r["val"] for r in rows)
    assert run["best_epoch"] == next(r["epoch"] for r in rows if r["val"] == run["val_score"])


def test_it_stops_when_asked_and_scores_where_it_stopped(split: splitting.Split) -> None:
    calls = iter(range(10**6))
    stop_after = 7  # updates
    run = generation.train_generator(
        short("gan", epochs=50),
        split.x_train,
        split.x_val,
        EXAMPLES,
        0,
        should_stop=lambda: next(calls) >= stop_after,
    )
    assert run["stopped"] == "stopped" and run["updates"] == stop_after
    assert run["curve"][-1]["updates"] == stop_after and 0.0 <= run["val_score"] <= 1.0
    assert run["epochs"] == stop_after // run["steps_per_epoch"] + 1 < run["planned_epochs"]


@pytest.mark.parametrize(("kind", "low", "high"), [("unit", 0.0, 1.0), ("symmetric", -1.0, 1.0)])
def test_its_bounded_scales_fill_the_outputs_range_and_invert(kind: str, low: float, high: float) -> None:
    x = ring(200) * np.array([1.0, 30.0], dtype=np.float32) + 5.0
    scale = generation.Scale.fit(kind, x)
    net = scale.to_net(x)
    assert net.min(axis=0) == pytest.approx([low, low]) and net.max(axis=0) == pytest.approx([high, high])
    assert np.allclose(scale.from_net(net), x, atol=1e-4)


def test_its_standard_scale_standardises_and_inverts() -> None:
    x = ring(200) * np.array([1.0, 30.0], dtype=np.float32) + 5.0
    scale = generation.Scale.fit("standard", x)
    net = scale.to_net(x)
    assert np.allclose(net.mean(axis=0), 0.0, atol=1e-5) and np.allclose(net.std(axis=0), 1.0, atol=1e-4)
    assert np.allclose(scale.from_net(net), x, atol=1e-3)


@pytest.mark.parametrize(("family", "scale"), [("vae", "standard"), ("gan", "standard")])
def test_it_trains_each_generator_on_the_scale_its_output_reaches(family: str, scale: str) -> None:
    assert generation.scale_for(short(family, 1)) == scale


def test_an_image_generator_trains_on_its_activations_range() -> None:
    spec = {**RING_SPEC, "data": {"examples": 1000, "input_shape": [1, 8, 8]}}
    by_family = {c["family"]: c for c in recommend(spec)["candidates"]}
    assert generation.scale_for(by_family["gan"]) == "symmetric"  # DCGAN: tanh
    assert generation.scale_for(by_family["vae"]) == "unit"  # a Bernoulli decoder: sigmoid


@pytest.mark.slow
@pytest.mark.parametrize("family", ["vae", "gan"])
def test_it_probes_a_generation_sample_in_stages(tmp_path: Any, family: str) -> None:
    x = ring(EXAMPLES, seed=1)
    labels = (np.arange(EXAMPLES) % 3).astype(np.int64)  # a labelled sample: its labels are not used
    samples.save(samples.Sample(x, labels, "class", ["a", "b", "c"]), tmp_path / "ring.npz")
    candidate = short(family, epochs=10)
    plan = ProbePlan(
        str(tmp_path / "ring.npz"),
        "classify",
        0.8,
        EXAMPLES,
        None,
        {"index": 0, "candidate": candidate},
        budget_s=300,
        task="generation",
    )
    events: list[dict[str, Any]] = []
    answer = pipeline.probe_generation(plan, events.append)
    stages = [e["stage"] for e in events if e["type"] == "stage"]
    assert stages[:2] == ["split", "baseline"] and stages[-2:] == ["generator", "verdict"]
    final = [e["data"] for e in events if e["type"] == "stage" and e["stage"] == "generator"][-1]
    baseline = [e["data"] for e in events if e["type"] == "stage" and e["stage"] == "baseline"][-1]
    split = [e["data"] for e in events if e["type"] == "stage" and e["stage"] == "split"][-1]
    assert split["train"] + split["validation"] + split["test"] == EXAMPLES
    assert sorted(i for part in split["indices"].values() for i in part) == list(range(EXAMPLES))
    for score in (final["score"], baseline["score"], baseline["one_gaussian"], baseline["real"]):
        assert 0.0 <= score <= 1.0
    # the ring's true shape is a mixture of 8: a fitted mixture passes for it, one Gaussian does not
    assert baseline["one_gaussian"] < baseline["score"]
    assert answer["metric"] == "two_sample" and answer["family"] == family
    assert answer["score"] == final["score"] and answer["baseline_score"] == baseline["score"]
    assert answer["met"] is (final["score"] >= 0.8)
    assert (
        "met the two-sample target of 0.80" if answer["met"] else "missed the two-sample target of 0.80"
    ) in (answer["text"])
    assert baseline["model"] in answer["text"]


def test_it_reports_a_generator_it_cannot_train(tmp_path: Any) -> None:
    samples.save(samples.Sample(ring(100), None, "none"), tmp_path / "ring.npz")
    broken = short("vae", 1)
    broken["io"] = {**broken["io"], "input_shape": [3]}  # the sample's examples have 2 values
    plan = ProbePlan(
        str(tmp_path / "ring.npz"),
        "classify",
        0.8,
        100,
        None,
        {"index": 0, "candidate": broken},
        task="generation",
    )
    answer = pipeline.probe_generation(plan, lambda event: None)
    assert answer["score"] is None and answer["met"] is None and answer["chosen"] is None
    assert "cannot be probed" in answer["text"] and "shape [3]" in answer["text"]
    assert answer["baseline_score"] is not None  # the baseline still ran


BASE = {
    "model": "Gaussian mixture (8 components, full covariance)",
    "score": 0.96,
    "one_gaussian": 0.24,
    "real": 1.0,
}


@pytest.mark.parametrize(
    ("target", "score", "met", "words"),
    [
        (0.8, 0.85, True, "The VAE met the two-sample target of 0.80: its generated examples scored 0.85"),
        (
            0.8,
            0.7996,
            False,
            "The VAE missed the two-sample target of 0.80: its generated examples scored 0.7996",
        ),
        (None, 0.5, None, "The VAE's generated examples scored 0.50 on the two-sample test."),
        (0.8, 0.25, False, "no better than one Gaussian fitted to the sample (0.24)"),
        (0.8, None, None, "No generator was scored"),
    ],
)
def test_its_verdict_says_met_or_missed_beside_the_baseline(
    target: float | None, score: float | None, met: bool | None, words: str
) -> None:
    run = (
        None if score is None else {"score": score, "stopped": "epochs", "updates": 10, "planned_updates": 10}
    )
    answer = verdict.generation_verdict(
        family="vae", target=target, run=run, baseline=BASE, test_examples=800
    )
    assert answer["met"] is met and answer["score"] == score and answer["baseline_score"] == 0.96
    assert words in answer["text"] + " ".join(answer["notes"])
    assert (BASE["model"] in answer["text"]) is (score is not None)
    assert ("posterior collapse" in " ".join(answer["notes"])) is (score == 0.25)


def test_a_gaussian_vaes_codes_come_from_the_prior_fitted_to_its_training_codes(
    split: splitting.Split,
) -> None:
    """A Gaussian VAE's training says `prior: mixture`: `fit_prior` fits a mixture of Gaussians to the
    encoder's means of the training split and `generate` decodes codes drawn from it; a GAN has none."""
    import torch

    from advisor.calibration import make_step

    vae, gan = short("vae", 1), short("gan", 1)
    assert vae["training"]["prior"] == "mixture" and "prior" not in gan["training"]
    nets = make_step(vae, "cpu").nets
    prior = generation.fit_prior(vae, nets, split.x_train, seed=0)
    assert prior.n_components == generation.PRIOR_COMPONENTS
    with torch.no_grad():
        codes = nets["encoder"](torch.from_numpy(split.x_train)).chunk(2, dim=1)[0].numpy()
    assert np.allclose(prior.means_.T @ prior.weights_, codes.mean(axis=0), atol=1e-3)
    assert generation.fit_prior(gan, make_step(gan, "cpu").nets, split.x_train) is None

    class OneCode:
        """A prior that always draws the same code."""

        def sample(self, n: int) -> tuple[np.ndarray, np.ndarray]:
            return np.full((n, vae["io"]["latent_size"]), 0.7), np.zeros(n)

    with torch.no_grad():  # no decoder noise: an example is its code's decoding
        for name, parameter in nets["decoder"].named_parameters():
            if name.endswith("log_variance"):
                parameter.fill_(-60.0)
    same = generation.generate(vae, nets, 5, seed=0, prior=OneCode())
    varied = generation.generate(vae, nets, 5, seed=0)
    assert np.allclose(same, same[0]) and not np.allclose(varied, varied[0])


def test_a_gaussian_decoders_variance_starts_below_a_standardised_values() -> None:
    """Started at 1, a standardised value's own variance, the decoder that ignores the code was optimal
    from the first step and the VAE collapsed to it (bench/results/advice_amd-epyc-2c_generation-prior/);
    the initialisation keeps the Gaussian layer's start."""
    from advisor.calibration import make_step

    decoder = make_step(short("vae", 1), "cpu").nets["decoder"]
    (log_variance,) = [p for name, p in decoder.named_parameters() if name.endswith("log_variance")]
    assert bool((log_variance == -2.0).all())
