"""Rule net.time.first: among the candidates the rules expect to reach the target, the one the device is
predicted to bring there soonest comes first; the others keep their places (advisor/engine/ordering.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from advisor.engine import recommend
from advisor.engine.families import title_of
from advisor.engine.ordering import time_first
from advisor.engine.profile import DeviceProfile
from tests.engine.profiles import synthetic_profile
from tests.engine.specs import GPU, spec

OVER_TIME = {"lstm", "gru", "tcn"}
SERIES = spec("sequence", [50, 12], outputs=4)
TOKENS = spec("sequence", [32], vocab_size=1_000, outputs=4, target={"accuracy": 0.9})
TOKEN_GENERATION = spec("generation", [16], vocab_size=40)


def _candidate(family: str, epochs: int = 10) -> dict[str, Any]:
    return {"family": family, "training": {"epochs": epochs}, "reasons": []}


# (families in the rules' order, contenders, seconds per epoch by family, epochs by family, expected order)
TABLE = [
    # the contenders sorted into the places they hold; the others stay
    (
        ["lstm", "gru", "tcn", "rnn"],
        [0, 1, 2],
        {"lstm": 3, "gru": 2, "tcn": 1},
        {},
        ["tcn", "gru", "lstm", "rnn"],
    ),
    (
        ["lstm", "gru", "tcn", "rnn"],
        [0, 1, 2],
        {"lstm": 1, "gru": 2, "tcn": 3},
        {},
        ["lstm", "gru", "tcn", "rnn"],
    ),
    # a tie keeps the rules' order
    (["lstm", "gru", "tcn"], [0, 1, 2], {"lstm": 2, "gru": 2, "tcn": 2}, {}, ["lstm", "gru", "tcn"]),
    # epochs count: slower per epoch but needing a third of them
    (["lstm", "tcn"], [0, 1], {"lstm": 1, "tcn": 2}, {"lstm": 30, "tcn": 10}, ["tcn", "lstm"]),
    # contenders need not lead: only their own places are reordered
    (["dbn", "cnn", "vae", "ffn"], [1, 2], {"cnn": 5, "vae": 1}, {}, ["dbn", "vae", "cnn", "ffn"]),
    # one contender, or none: nothing to decide
    (["cnn", "ffn"], [0], {"cnn": 9, "ffn": 1}, {}, ["cnn", "ffn"]),
    (["ffn", "ffn"], [], {"ffn": 1}, {}, ["ffn", "ffn"]),
]


@pytest.mark.parametrize(("families", "contenders", "seconds", "epochs", "expected"), TABLE)
def test_it_orders_the_contenders_by_predicted_time_to_the_target(
    families: list[str],
    contenders: list[int],
    seconds: dict[str, float],
    epochs: dict[str, int],
    expected: list[str],
) -> None:
    candidates = [_candidate(f, epochs.get(f, 10)) for f in families]
    ordered, reasons = time_first(
        candidates, contenders, lambda c: (seconds[c["family"]], "catalog"), "your 4 CPU cores"
    )
    assert [c["family"] for c in ordered] == expected
    if len(contenders) < 2:
        assert reasons == [] and all(not c["reasons"] for c in ordered)
        return
    assert [r["rule"] for r in reasons] == ["net.time.first"]
    assert f"the {title_of(ordered[min(contenders)]['family'])} is predicted" in reasons[0]["text"]
    for place in contenders:
        assert ordered[place]["reasons"][0]["rule"] == "net.time.first"
    assert "the fastest" in ordered[min(contenders)]["reasons"][0]["text"]


def _families(rec: dict[str, Any]) -> list[str]:
    return [c["family"] for c in rec["candidates"]]


@pytest.mark.parametrize(
    ("task_spec", "contenders"),
    [
        (SERIES, {"lstm", "tcn"}),
        (TOKENS, {"lstm", "tcn"}),
        (TOKEN_GENERATION, {"lstm", "tcn"}),
        ({**SERIES, "hardware": GPU}, OVER_TIME),
        ({**TOKENS, "hardware": GPU}, OVER_TIME),
    ],
    ids=["series", "tokens", "token-generation", "series-gpu", "tokens-gpu"],
)
def test_it_puts_the_network_predicted_soonest_at_the_target_first(
    task_spec: dict[str, Any], contenders: set[str]
) -> None:
    """On a GPU the LSTM, GRU and TCN contend; on a CPU the GRU, which PyTorch runs cell by cell there,
    follows them as an alternative."""
    rec = recommend(task_spec)
    leading = rec["candidates"][: len(contenders)]
    assert {c["family"] for c in leading} == contenders
    times = [c["estimate"]["seconds_to_train"] for c in leading]  # the epochs are the budget's
    assert times == sorted(times)
    assert "net.time.first" in {r["rule"] for r in rec["reasons"]}
    assert all(c["reasons"][0]["rule"] == "net.time.first" for c in leading)
    others = rec["candidates"][len(contenders) :]
    assert {c["family"] for c in others} >= OVER_TIME - contenders
    assert all(r["rule"] != "net.time.first" for c in others for r in c["reasons"])
    if "gru" not in contenders:  # on a CPU it says why it follows
        gru = next(c for c in others if c["family"] == "gru")
        assert gru["reasons"][0]["rule"] == "net.sequence.gru" and "cell by cell" in gru["reasons"][0]["text"]


def _profile(conv1d_scale: float) -> DeviceProfile:
    """The synthetic profile with its causal convolutions `conv1d_scale` times as costly as its 2-D ones."""
    profile = copy.deepcopy(synthetic_profile())
    for rates in profile["threads"].values():
        rates["conv1d"] = [[work, seconds * conv1d_scale] for work, seconds in rates["conv"]]
    return profile


@pytest.mark.parametrize(("scale", "order"), [(0.01, ["tcn", "lstm"]), (100.0, ["lstm", "tcn"])])
def test_it_follows_the_devices_profile(scale: float, order: list[str]) -> None:
    rec = recommend(SERIES, profile=_profile(scale), device="cpu-test")
    assert _families(rec)[:2] == order
    text = next(r["text"] for r in rec["reasons"] if r["rule"] == "net.time.first")
    assert "profiled estimate" in text


def test_it_keeps_a_single_contender_where_it_was() -> None:
    rec = recommend(spec("vision", [1, 28, 28], outputs=10))
    assert _families(rec) == ["cnn", "ffn"]
    assert "net.time.first" not in {r["rule"] for r in rec["reasons"]}


def test_the_cost_model_times_every_candidate_the_engine_makes() -> None:
    """Every candidate of the grid (TCNs, GRUs and Gaussian decoders included) gets a profiled time on a
    CPU plan: the order by time to the target can read any of them."""
    from tests.engine.specs import grid

    profile = _profile(1.0)
    for task_spec in grid():
        rec = recommend(task_spec, profile=profile, device="cpu-test")
        if rec["hardware_plan"]["device"] != "cpu" or rec["hardware_plan"]["parallelism"] != "none":
            continue
        for candidate in rec["candidates"]:
            assert candidate["estimate"]["basis"] == "profiled"
            assert candidate["estimate"]["seconds_per_epoch"] > 0, candidate["family"]
