"""The profiled time model: per-layer costs over each family's real step, threads, basis and error band."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from advisor.engine import estimate_for, measured_estimate, recommend
from advisor.engine.costmodel import factor_of, fastest_threads, step_cost
from advisor.engine.estimate import CATALOG_ERROR, MEASURED_ERROR, PROFILED_ERROR
from advisor.engine.layercost import NO_INPUT_GRAD_SHARE
from advisor.engine.profile import at_threads, interpolate, is_current
from tests.engine.profiles import synthetic_profile
from tests.engine.specs import CPU, GPU, first_of_each_family, spec

PROFILE = synthetic_profile()


@pytest.mark.parametrize(
    ("curve", "work", "launch", "expected"),
    [
        ([[10.0, 1.0], [1000.0, 10.0]], 100.0, True, 10**0.5),  # log-log between points
        ([[10.0, 1.0], [1000.0, 10.0]], 5.0, False, 0.5),  # below the smallest: in proportion
        ([[10.0, 1.0], [1000.0, 10.0]], 1.0, False, 0.2),  # down to BELOW_SMALLEST of the smallest's time
        # with launch costs: down to the line through the two smallest points at no work, 1 - 10 * 9 / 990
        ([[10.0, 1.0], [1000.0, 10.0]], 1.0, True, 1.0 - 10 * 9 / 990),
        ([[10.0, 1.0], [1000.0, 10.0]], 9.99, True, 0.999),  # in proportion where that is more
        ([[10.0, 1.0], [20.0, 1.05]], 1.0, True, 0.95),  # a flat curve: nearly all launch
        ([[10.0, 2.0], [1000.0, 1.0]], 1.0, True, 0.4),  # a curve that falls: BELOW_SMALLEST again
        ([[10.0, 1.0], [1000.0, 10.0]], 4000.0, True, 40.0),  # beyond the largest: its rate
        ([[10.0, 1.0]], 0.0, True, 0.0),
        ([[10.0, 1.0]], 1.0, True, 0.2),  # one point: no line to draw
    ],
)
def test_it_reads_times_off_a_measured_curve(
    curve: list[list[float]], work: float, launch: bool, expected: float
) -> None:
    assert interpolate(curve, work, launch=launch) == pytest.approx(expected)


def test_every_family_costs_more_at_a_larger_batch() -> None:
    families = first_of_each_family()
    assert {"ffn", "cnn", "lstm", "gan", "vae", "dbn"} <= set(families)
    for family, c in families.items():
        small = step_cost(c, batch_size=16, threads=1, profile=PROFILE)
        large = step_cost(c, batch_size=256, threads=1, profile=PROFILE)
        assert 0 < small.seconds < large.seconds, family
        assert small.seconds == pytest.approx(small.compute + small.other)


def test_a_gan_step_runs_the_discriminator_three_times_and_both_optimisers() -> None:
    gan = first_of_each_family()["gan"]
    both = step_cost(gan, batch_size=64, threads=1, profile=PROFILE)
    d_only = copy.deepcopy(gan)
    d_only["networks"]["generator"] = []
    without_g = step_cost(d_only, batch_size=64, threads=1, profile=PROFILE)
    assert both.seconds > without_g.seconds  # the generator's layers count
    ffn_like = {**gan, "family": "ffn", "networks": {"model": gan["networks"]["discriminator"]}}
    once = step_cost(ffn_like, batch_size=64, threads=1, profile=PROFILE)
    assert both.compute > 3 * once.compute * 0.99


def test_it_picks_one_thread_for_a_small_network_and_all_cores_for_a_large_one() -> None:
    small = recommend(spec("tabular", [7], outputs=3, hardware={"cpu_cores": 2, "ram_gb": 8}))
    small_c = small["candidates"][0]
    assert fastest_threads(small_c, batch_size=64, profile=PROFILE, cores=2) == 1
    large = recommend(spec("vision", [3, 32, 32], outputs=10, hardware={"cpu_cores": 2, "ram_gb": 8}))
    large_c = large["candidates"][0]
    assert fastest_threads(large_c, batch_size=64, profile=PROFILE, cores=2) == 2
    with_profile = recommend(
        spec("tabular", [7], outputs=3, hardware={"cpu_cores": 2, "ram_gb": 8}),
        profile=PROFILE,
        device="vm-cpu0",
    )
    plan = with_profile["hardware_plan"]
    assert (plan["threads"], plan["threads_basis"]) == (1, "profiled")
    text = next(r["text"] for r in plan["reasons"] if r["rule"] == "cpu.threads.profiled")
    assert "profile of vm-cpu0" in text and "1 thread" in text


def test_a_profile_times_cpu_training_and_says_so() -> None:
    s = spec("vision", [1, 28, 28], outputs=10, hardware={"cpu_cores": 2, "ram_gb": 8})
    catalog = recommend(s)
    profiled = recommend(s, profile=PROFILE, device="vm-cpu0")
    for c in catalog["candidates"]:
        assert c["estimate"]["basis"] == "catalog" and c["estimate"]["expected_error"] == CATALOG_ERROR
    for c in profiled["candidates"]:
        e = c["estimate"]
        assert e["basis"] == "profiled" and e["expected_error"] == PROFILED_ERROR and e["device"] == "vm-cpu0"
        threads = profiled["hardware_plan"]["threads"]
        batch = c["training"]["batch_size"]
        assert (
            e["seconds_per_batch"] == step_cost(c, batch_size=batch, threads=threads, profile=PROFILE).seconds
        )
    assert profiled["device_profile"]["device"] == "vm-cpu0"


def test_a_cpu_profile_does_not_time_gpu_training() -> None:
    result = recommend(spec("vision", [1, 28, 28], outputs=10, hardware=GPU), profile=PROFILE, device="x")
    assert result["hardware_plan"]["device"] == "gpu"
    assert {c["estimate"]["basis"] for c in result["candidates"]} == {"catalog"}


def test_estimates_at_another_batch_keep_the_profile_and_measured_ones_their_band() -> None:
    rec = recommend(spec("tabular", [20], outputs=3, hardware=CPU), profile=PROFILE, device="vm-cpu0")
    other = estimate_for(rec, 0, batch_size=32)
    assert other["basis"] == "profiled" and other["batch_size"] == 32
    measured = measured_estimate(rec, 0, seconds_per_batch=0.002, batch_size=32)
    assert measured["basis"] == "measured" and measured["expected_error"] == MEASURED_ERROR
    assert measured["analytic"] == other


def test_a_profile_is_read_at_the_nearest_thread_count_and_is_current_only_for_its_torch() -> None:
    assert at_threads(PROFILE, 8) is PROFILE["threads"]["2"]
    assert at_threads(PROFILE, 1) is PROFILE["threads"]["1"]
    assert is_current(PROFILE, torch_version="0.0-test", processor="Test CPU")
    assert not is_current(PROFILE, torch_version="2.13.0", processor="Test CPU")
    assert not is_current(PROFILE, torch_version="0.0-test", processor="Other CPU")
    assert not is_current({**PROFILE, "version": 0}, torch_version="0.0-test", processor="Test CPU")
    assert not is_current(None, torch_version="0.0-test", processor="Test CPU")


def _lstm(steps: int) -> dict[str, Any]:
    layers = [
        {"kind": "LSTM", "args": {"input_size": 4, "hidden_size": 64, "num_layers": 2, "batch_first": True}},
        {"kind": "LastStep", "args": {}},  # and nothing after it: compute is the LSTM's alone
    ]
    return {
        "family": "lstm",
        "networks": {"model": layers},
        "io": {"input_shape": [steps, 4]},
        "training": {"optimizer": "adam"},
    }


@pytest.mark.parametrize(
    ("factor", "exponent", "steps", "expected_ratio"),
    [
        (1.0, 0.0, 200, (200 / 8, 200 / 8 * 1.01)),  # per-step cost constant: linear in the steps
        (1.0, 0.5, 200, (200 / 8 * 4.5, 200 / 8 * 5.01)),  # per-step cost grows by (200 / 8) ** 0.5 = 5
        (1.0, 0.5, 8, (1.0, 1.0)),  # at the profile's own 8 steps the exponent changes nothing
    ],
)
def test_it_costs_long_sequences_by_the_profiles_sequence_exponent(
    factor: float, exponent: float, steps: int, expected_ratio: tuple[float, float]
) -> None:
    profile = copy.deepcopy(PROFILE)
    rates = profile["threads"]["1"]
    rates["step_factor"], rates["sequence_exponent"] = factor, exponent
    flat = copy.deepcopy(PROFILE)
    short = step_cost(_lstm(8), batch_size=16, threads=1, profile=flat).compute
    long = step_cost(_lstm(steps), batch_size=16, threads=1, profile=profile).compute
    low, high = expected_ratio
    assert low * 0.999 <= long / short <= high * 1.001


@pytest.mark.parametrize(
    ("points", "line", "steps", "expected_ratio"),
    [
        # 8 steps 100 us a step, 128 steps 10 us a step: a call costs 768 us plus 4 us a step
        ([100e-6, 10e-6], True, 8, 1.0),
        ([100e-6, 10e-6], True, 128, 128 / 8 * 0.1),
        ([100e-6, 10e-6], True, 200, (768e-6 + 200 * 4e-6) / (8 * 100e-6)),
        # an H100's profile: the 128-step call (13 us a step) cost no more than the 8-step one (243 us a
        # step), all launches: a call of any length costs the same
        ([243e-6, 13e-6], True, 200, 1.0),
        # per-step cost constant: the line is the exponent 0's
        ([10e-6, 10e-6], True, 200, 200 / 8),
        # a CPU profile (no line flag) keeps the exponent (0 here: constant per step) whatever the points
        ([243e-6, 13e-6], False, 128, 128 / 8),
    ],
)
def test_it_costs_long_sequences_along_the_line_through_the_profiles_two_lengths(
    points: list[float], line: bool, steps: int, expected_ratio: float
) -> None:
    profile = copy.deepcopy(PROFILE)
    rates = profile["threads"]["1"]
    rates["step_factor"], rates["sequence_exponent"], rates["sequence_step_seconds"] = 1.0, 0.0, points
    if line:
        rates["sequence_line"] = True
    flat = copy.deepcopy(PROFILE)
    flat["threads"]["1"]["step_factor"] = 1.0
    short = step_cost(_lstm(8), batch_size=16, threads=1, profile=flat).compute
    long = step_cost(_lstm(steps), batch_size=16, threads=1, profile=profile).compute
    assert long / short == pytest.approx(expected_ratio, rel=1e-6)


def _ffn(layers: list[dict[str, Any]], input_shape: list[int]) -> dict[str, Any]:
    return {
        "family": "ffn",
        "networks": {"model": layers},
        "io": {"input_shape": input_shape},
        "training": {},
    }


def _conv(ci: int, co: int) -> dict[str, Any]:
    return {"kind": "Conv2d", "args": {"in_channels": ci, "out_channels": co, "kernel_size": 3, "padding": 1}}


@pytest.mark.parametrize(
    ("first", "input_shape", "curve", "work"),
    [
        (
            {"kind": "Linear", "args": {"in_features": 512, "out_features": 512}},
            [512],
            "linear",
            2 * 512 * 512,
        ),
        (_conv(3, 32), [3, 16, 16], "conv", 2 * 32 * 16 * 16 * 3 * 9),
    ],
)
def test_a_first_layer_fed_by_data_skips_its_inputs_gradient(
    first: dict[str, Any], input_shape: list[int], curve: str, work: int
) -> None:
    """Forward and the weight's gradient: two of the three products the profile timed; behind an Embedding
    (a layer with parameters) the same layer needs its input's gradient again."""
    rates = PROFILE["threads"]["1"]
    alone = step_cost(_ffn([first], input_shape), batch_size=64, threads=1, profile=PROFILE).compute
    expected = NO_INPUT_GRAD_SHARE * interpolate(rates[curve], 64 * work)  # type: ignore[literal-required]
    assert alone == pytest.approx(factor_of(PROFILE) * expected)
    behind_a_flatten = _ffn([{"kind": "Flatten", "args": {}}, first], input_shape)
    if first["kind"] == "Linear":  # a view in front changes nothing: its input is still data
        assert step_cost(
            behind_a_flatten, batch_size=64, threads=1, profile=PROFILE
        ).compute == pytest.approx(alone)
    second = _ffn([first, first] if first["kind"] == "Linear" else [first, _conv(32, 32)], input_shape)
    both = step_cost(second, batch_size=64, threads=1, profile=PROFILE).compute
    assert both > alone + 0.99 * factor_of(PROFILE) * interpolate(rates[curve], 64 * work)  # type: ignore[literal-required]


def _embedding(kind: str, table: int, dim: int) -> dict[str, Any]:
    return {"kind": kind, "args": {"num_embeddings": table, "embedding_dim": dim}}


@pytest.mark.parametrize(
    ("kind", "table", "dim", "steps", "batch"),
    [
        ("Embedding", 1000, 64, 32, 16),
        ("EmbeddingBag", 1000, 64, 32, 16),
        ("EmbeddingBag", 100_000, 64, 32, 16),  # a large table: its dense gradient dominates
        ("EmbeddingBag", 1000, 64, 32, 256),
    ],
)
def test_an_embedding_moves_the_looked_up_values_and_writes_the_whole_tables_gradient(
    kind: str, table: int, dim: int, steps: int, batch: int
) -> None:
    rates = PROFILE["threads"]["1"]
    bare = step_cost(_ffn([], [steps]), batch_size=batch, threads=1, profile=PROFILE)
    looked_up = step_cost(
        _ffn([_embedding(kind, table, dim)], [steps]), batch_size=batch, threads=1, profile=PROFILE
    )
    walk = factor_of(PROFILE) * (
        interpolate(rates["elementwise"], batch * steps * dim)
        + interpolate(rates["elementwise"], table * dim)
    )
    optimiser = looked_up.other - bare.other - walk  # the table is a parameter tensor the optimiser steps
    assert looked_up.compute == 0.0
    assert 0 < optimiser <= factor_of(PROFILE) * interpolate(rates["optimizer"]["sgd"], table * dim) + 1e-12


@pytest.mark.parametrize(("batch", "bound"), [(1, "memory"), (4096, "compute")])
def test_a_product_is_bound_by_moving_its_weights_at_a_small_batch_and_by_its_flops_at_a_large_one(
    batch: int, bound: str
) -> None:
    """Roofline per product: the larger of its FLOPs' time and moving activations and weights."""
    rates = PROFILE["threads"]["1"]
    wide = {"kind": "Linear", "args": {"in_features": 4096, "out_features": 4096}}
    # the first product is fed by data (two thirds of the profiled products), the second is not
    network = _ffn([{"kind": "ReLU", "args": {}}, wide, wide], [4096])
    flops = interpolate(rates["linear"], batch * 2 * 4096 * 4096)
    memory = interpolate(rates["elementwise"], batch * 2 * 4096 + 4096 * 4096 + 4096)
    expected = max(NO_INPUT_GRAD_SHARE * flops, memory) + max(flops, memory)
    seconds = step_cost(network, batch_size=batch, threads=1, profile=PROFILE).compute
    assert seconds == pytest.approx(factor_of(PROFILE) * expected)
    assert (memory > flops) == (bound == "memory")


def test_a_causal_convolution_is_read_off_its_own_curve_or_an_older_profiles_conv_curve() -> None:
    layers = [
        {
            "kind": "CausalConv1d",
            "args": {"in_channels": 16, "out_channels": 64, "kernel_size": 3, "dilation": 2},
        },
        {"kind": "LastStep", "args": {}},
        {"kind": "Linear", "args": {"in_features": 64, "out_features": 5}},
    ]
    candidate = {
        "family": "ffn",
        "published": None,
        "networks": {"model": layers},
        "io": {"input_shape": [128, 16], "target": "class", "outputs": 5},
        "training": {"optimizer": "sgd"},
    }
    older = copy.deepcopy(PROFILE)  # version 5: no conv1d curve
    newer = copy.deepcopy(PROFILE)
    cheap = copy.deepcopy(PROFILE)
    for rates in newer["threads"].values():
        rates["conv1d"] = rates["conv"]
    for rates in cheap["threads"].values():
        rates["conv1d"] = [[w, s / 4] for w, s in rates["conv"]]

    def seconds(profile: Any) -> float:
        return step_cost(candidate, batch_size=32, threads=1, profile=profile).compute

    assert seconds(older) == seconds(newer)
    assert seconds(cheap) < seconds(newer)


@pytest.mark.parametrize(("batch", "kappa", "ratio"), [(8, 0.0, 1.0), (8, 55.0, 3.0), (256, 55.0, 1.05)])
def test_a_products_work_counts_its_weights_own_cost(batch: int, kappa: float, ratio: float) -> None:
    """Forward + backward of a product cost about c_w x weights + c_f x FLOPs: its work on the linear curve
    is its FLOPs plus the profile's product_weight_work x its weights, which weighs most at a small batch."""
    profile = copy.deepcopy(PROFILE)
    rates = profile["threads"]["1"]
    rates["step_factor"], rates["product_weight_work"] = 1.0, kappa
    wide = {"kind": "Linear", "args": {"in_features": 3072, "out_features": 4608}}
    # behind an embedding (a layer with parameters): the product makes its input's gradient too
    network = _ffn([{"kind": "Embedding", "args": {"num_embeddings": 10, "embedding_dim": 3072}}, wide], [1])
    weights = 3072 * 4608 + 4608
    work = interpolate(rates["linear"], batch * 2 * 3072 * 4608 + kappa * weights)
    memory = interpolate(rates["elementwise"], batch * (3072 + 4608) + weights)
    seconds = step_cost(network, batch_size=batch, threads=1, profile=profile).compute
    assert seconds == pytest.approx(factor_of(profile) * max(work, memory))
    plain = copy.deepcopy(profile)
    plain["threads"]["1"]["product_weight_work"] = 0.0
    assert seconds >= ratio * step_cost(network, batch_size=batch, threads=1, profile=plain).compute


def _rnn(steps: int, layers: int = 1) -> dict[str, Any]:
    return {
        "family": "rnn",
        "networks": {
            "model": [
                {
                    "kind": "RNN",
                    "args": {"input_size": 4, "hidden_size": 64, "num_layers": layers, "batch_first": True},
                },
                {"kind": "LastStep", "args": {}},
            ]
        },
        "io": {"input_shape": [steps, 4]},
        "training": {"optimizer": "sgd"},
    }


@pytest.mark.parametrize(
    ("steps", "layers", "calls"),
    [
        (8, 1, 8 * 100e-6),  # at the short curve's 8 steps: 8 of its per-step seconds
        (128, 1, 128 * 40e-6),  # at the long curve's 128 steps: 128 of its
        # the line through them: 800 us at 8 steps, 5120 us at 128: 512 us a call + 36 us a step
        (200, 1, 512e-6 + 200 * 36e-6),
        (200, 2, 2 * (512e-6 + 200 * 36e-6)),  # each layer is a call of its own
        (2, 1, 512e-6 + 2 * 36e-6),  # a short call costs its fixed part
    ],
)
def test_a_recurrent_layers_call_costs_a_fixed_part_and_a_part_per_step(
    steps: int, layers: int, calls: float
) -> None:
    """Version 7 profiles time every cell's calls at 8 and at 128 steps: a call costs the line through them,
    fixed part and part per step, read at the cell's size (here flat curves: every size alike)."""
    profile = copy.deepcopy(PROFILE)
    rates = profile["threads"]["1"]
    rates["step_factor"], rates["sequence_exponent"] = 1.0, 0.0
    rates["rnn"] = [[1e3, 100e-6], [1e9, 100e-6]]
    rates["rnn_long"] = [[1e3, 40e-6], [1e9, 40e-6]]
    assert step_cost(_rnn(steps, layers), batch_size=16, threads=1, profile=profile).compute == pytest.approx(
        factor_of(profile) * calls
    )
    older = copy.deepcopy(profile)  # without the long curve: 100 us a step whatever the length
    del older["threads"]["1"]["rnn_long"]
    assert step_cost(_rnn(steps, layers), batch_size=16, threads=1, profile=older).compute == pytest.approx(
        factor_of(profile) * layers * steps * 100e-6
    )


@pytest.mark.parametrize(("loss", "passes"), [("cross_entropy", 1.5), ("mse", 1.5), ("cd1", 0.0)])
def test_a_loss_costs_passes_over_the_values_it_reads(loss: str, passes: float) -> None:
    """A next-token model's cross-entropy over steps x vocabulary is a fifth of its step: the loss is
    charged as passes of the element-wise curve over the network's output."""
    rates = PROFILE["threads"]["1"]
    per_step = {"kind": "Linear", "args": {"in_features": 64, "out_features": 5000}}
    network = {**_ffn([per_step], [40, 64]), "training": {"loss": loss}}
    quiet = {**network, "training": {"loss": "none"}}
    charged = step_cost(network, batch_size=32, threads=1, profile=PROFILE)
    bare = step_cost(quiet, batch_size=32, threads=1, profile=PROFILE)
    factor = factor_of(PROFILE)
    expected = passes * interpolate(rates["elementwise"], 32 * 40 * 5000, launch=False)
    assert charged.other - bare.other == pytest.approx(factor * expected)
    assert charged.compute == bare.compute


def test_a_gru_is_read_off_its_own_curves_or_an_older_profiles_lstm_curves() -> None:
    """Version 8 profiles time the GRU's cells as such; before, a GRU read the LSTM's curves by its FLOPs."""

    def recurrent(kind: str) -> dict[str, Any]:
        return {
            "family": kind.lower(),
            "published": None,
            "networks": {
                "model": [
                    {"kind": kind, "args": {"input_size": 8, "hidden_size": 64, "batch_first": True}},
                    {"kind": "LastStep", "args": {}},
                    {"kind": "Linear", "args": {"in_features": 64, "out_features": 5}},
                ]
            },
            "io": {"input_shape": [50, 8], "target": "class", "outputs": 5},
            "training": {"optimizer": "sgd"},
        }

    older = copy.deepcopy(PROFILE)  # no GRU curves
    slow = copy.deepcopy(PROFILE)
    for rates in slow["threads"].values():
        rates["gru"] = [[w, 2 * s] for w, s in rates["recurrent"]]
        if "recurrent_long" in rates:
            rates["gru_long"] = [[w, 2 * s] for w, s in rates["recurrent_long"]]

    def seconds(candidate: dict[str, Any], profile: Any) -> float:
        return step_cost(candidate, batch_size=32, threads=1, profile=profile).compute

    gru, lstm = recurrent("GRU"), recurrent("LSTM")
    assert seconds(gru, slow) > 1.5 * seconds(gru, older)  # its own, slower curve is read
    assert seconds(lstm, slow) == seconds(lstm, older)  # the LSTM's is not touched
