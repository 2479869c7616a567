"""The step factor: what whole steps cost beyond their layers timed alone, derived from the seconds a profile
stored by today's cost model (costmodel.with_factors), and which one multiplies which network (factor_of)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from advisor.engine.costmodel import factor_of, step_cost, step_factor, with_current_factor
from advisor.engine.profile import merge
from advisor.engine.wholesteps import FACTOR_RANGE, SMALL_STEP_SPAN, WHOLE_STEPS
from tests.engine.profiles import synthetic_profile
from tests.engine.specs import first_of_each_family

PROFILE = synthetic_profile()


@pytest.mark.parametrize("factor", [0.5, 1.0, 2.5])
def test_a_profiles_step_factor_scales_the_whole_step(factor: float) -> None:
    cnn = first_of_each_family()["cnn"]
    profile = copy.deepcopy(PROFILE)
    profile["threads"]["1"]["step_factor"] = factor
    plain = step_cost(cnn, batch_size=64, threads=1, profile=PROFILE)
    scaled = step_cost(cnn, batch_size=64, threads=1, profile=profile)
    assert scaled.seconds == pytest.approx(factor * plain.seconds)
    assert scaled.compute == pytest.approx(factor * plain.compute)


@pytest.mark.parametrize(("fewest", "more"), [(1.5, 3.0), (1.5, 0.6), (1.0, 1.0)])
def test_every_thread_count_takes_the_fewest_threads_step_factor(fewest: float, more: float) -> None:
    """The 2-thread whole steps' factor swings between profilings; the 1-thread one stands for every count."""
    cnn = first_of_each_family()["cnn"]
    profile, same = copy.deepcopy(PROFILE), copy.deepcopy(PROFILE)
    profile["threads"]["1"]["step_factor"], profile["threads"]["2"]["step_factor"] = fewest, more
    same["threads"]["1"]["step_factor"] = same["threads"]["2"]["step_factor"] = fewest
    for threads in (1, 2):
        assert step_cost(cnn, batch_size=64, threads=threads, profile=profile) == step_cost(
            cnn, batch_size=64, threads=threads, profile=same
        )


def _modelled() -> list[float]:
    """Today's model's seconds of each whole step at one thread, without a factor."""
    return [
        step_cost(c, batch_size=c["training"]["batch_size"], threads=1, profile=PROFILE).seconds
        / factor_of(PROFILE)
        for c in WHOLE_STEPS
    ]


@pytest.mark.parametrize("ratio", [0.7, 1.0, 1.6, 5.0])
def test_the_step_factor_is_derived_from_the_stored_whole_steps_by_todays_model(ratio: float) -> None:
    profile = copy.deepcopy(PROFILE)
    rates = profile["threads"]["1"]
    rates["whole_step_seconds"] = [ratio * m for m in _modelled()]
    rates["step_factor"] = 99.0  # set by an older model: replaced
    low, high = FACTOR_RANGE
    assert step_factor(rates) == pytest.approx(min(high, max(low, ratio)))
    assert with_current_factor(profile)["threads"]["1"]["step_factor"] == pytest.approx(
        min(high, max(low, ratio))
    )
    older = copy.deepcopy(PROFILE)
    older["threads"]["1"]["step_factor"] = 1.3  # a version-2 profile: no whole steps, its factor is kept
    assert with_current_factor(older)["threads"]["1"]["step_factor"] == 1.3


def _with_whole_steps(ratios: list[float], kind: str = "cpu") -> Any:
    """PROFILE with each whole step timed `ratios[i]` x what today's model gives it, factors derived."""
    profile = copy.deepcopy(PROFILE)
    profile["kind"] = kind
    for rates in profile["threads"].values():
        rates["whole_step_seconds"] = [r * m for r, m in zip(ratios, _modelled(), strict=True)]
    return with_current_factor(profile)


@pytest.mark.parametrize(
    ("family", "kind", "cnn_ratio", "expected"),
    [
        ("gan", "cpu", 1.8, (1.8 / 1.2) ** 0.5),  # a generator's transposed convolutions: half the excess
        ("gan", "cpu", 1.2, 1.0),
        ("gan", "cpu", 0.9, (0.9 / 1.2) ** 0.5),
        ("gan", "cuda", 1.8, 1.0),  # measured on CPUs only
        ("cnn", "cpu", 1.8, 1.0),  # convolutions without a transposed one: the wide MLP's factor alone
        ("ffn", "cpu", 1.8, 1.0),
    ],
)
def test_a_network_with_a_transposed_convolution_takes_half_the_cnn_steps_excess(
    family: str, kind: str, cnn_ratio: float, expected: float
) -> None:
    candidate = first_of_each_family()[family]
    transposed = any(
        item["kind"] == "ConvTranspose2d" for layers in candidate["networks"].values() for item in layers
    )
    assert transposed == (family == "gan")
    base = _with_whole_steps([1.0, 1.2, 1.2], kind)
    other = _with_whole_steps([1.0, cnn_ratio, 1.2], kind)
    assert other["threads"]["1"]["step_factor"] == pytest.approx(1.2)
    assert other["threads"]["1"]["decoder_step_factor"] == pytest.approx(cnn_ratio)
    for threads in (1, 2):
        plain = step_cost(candidate, batch_size=32, threads=threads, profile=base).seconds
        mixed = step_cost(candidate, batch_size=32, threads=threads, profile=other).seconds
        assert mixed == pytest.approx(expected * plain)


def test_a_merged_profiles_members_take_todays_factors_too() -> None:
    """A device's stored profile is merged from raw ones, each with the factors of the model that took it."""
    older = []
    for _ in range(3):
        member = _with_whole_steps([1.0, 1.8, 1.2])
        for rates in member["threads"].values():
            rates.pop("decoder_step_factor")  # taken before the decoders' factor
            rates["step_factor"] = 99.0  # and by a model whose factor differs
        older.append(member)
    merged = merge(older)
    assert all("decoder_step_factor" not in m["threads"]["1"] for m in merged["members"])
    current = with_current_factor(merged)
    for m in current["members"]:
        assert m["threads"]["1"]["step_factor"] == pytest.approx(1.2)
        assert m["threads"]["1"]["decoder_step_factor"] == pytest.approx(1.8)
    gan = first_of_each_family()["gan"]
    fresh = step_cost(gan, batch_size=32, threads=1, profile=_with_whole_steps([1.0, 1.8, 1.2])).seconds
    assert step_cost(gan, batch_size=32, threads=1, profile=current).seconds == pytest.approx(fresh)


@pytest.mark.parametrize(
    ("at", "share"),
    [
        (0.1, 1.0),  # far below the small MLP's step: half its excess, in log, whole
        (1.0, 1.0),
        (SMALL_STEP_SPAN**0.5, 0.5),  # half way to the span, in log: half of that
        (SMALL_STEP_SPAN, 0.0),  # from the span on: the wide MLP's factor alone
        (40.0, 0.0),
    ],
)
def test_a_step_near_the_small_mlps_takes_half_its_excess_fading_over_the_span(
    at: float, share: float
) -> None:
    profile = _with_whole_steps([1.8, 1.2, 1.2])
    small = _modelled()[0]
    assert profile["threads"]["1"]["small_step_factor"] == pytest.approx(1.8)
    assert profile["threads"]["1"]["small_step_modelled"] == pytest.approx(small)
    expected = 1.2 * (1.8 / 1.2) ** (0.5 * share)
    assert factor_of(profile, None, at * small) == pytest.approx(expected)
    assert factor_of(profile) == pytest.approx(1.2)  # without the step's seconds: the factor alone


@pytest.mark.parametrize("kind", ["cpu", "cuda"])
def test_a_tiny_networks_step_is_priced_with_the_small_steps_excess_on_a_cpu_only(kind: str) -> None:
    """The same tiny FFN on two profiles that differ only in the small MLP's measured seconds."""
    ffn = first_of_each_family()["ffn"]
    tiny = copy.deepcopy(ffn)
    tiny["networks"]["model"] = [
        {"kind": "Linear", "args": {"in_features": 8, "out_features": 16}},
        {"kind": "ReLU", "args": {}},
        {"kind": "Linear", "args": {"in_features": 16, "out_features": 2}},
    ]
    tiny["io"]["input_shape"], tiny["io"]["outputs"] = [8], 2
    level, slow = _with_whole_steps([1.2, 1.2, 1.2], kind), _with_whole_steps([1.8, 1.2, 1.2], kind)
    plain = step_cost(tiny, batch_size=16, threads=1, profile=level).seconds
    priced = step_cost(tiny, batch_size=16, threads=1, profile=slow).seconds
    assert plain / 1.2 < _modelled()[0]  # a step below the small MLP's, so the whole half applies
    assert priced == pytest.approx(plain * (1.8 / 1.2) ** 0.5 if kind == "cpu" else plain)
    wide = WHOLE_STEPS[2]
    batch = wide["training"]["batch_size"]
    assert step_cost(wide, batch_size=batch, threads=1, profile=slow).seconds == pytest.approx(
        step_cost(wide, batch_size=batch, threads=1, profile=level).seconds
    )


def test_a_profile_without_the_wide_mlp_has_no_small_step_factor() -> None:
    """Before version 9 the small MLP's step set the factor itself: it is not counted twice."""
    profile = copy.deepcopy(PROFILE)
    profile["threads"]["1"]["whole_step_seconds"] = [1.8 * m for m in _modelled()[:2]]
    rates = with_current_factor(profile)["threads"]["1"]
    assert "small_step_factor" not in rates
    assert rates["step_factor"] == pytest.approx(1.8)
