"""A device's stored profile: the median of its latest trusted profiles (engine.profile.merge)."""

from __future__ import annotations

import copy

import pytest

from advisor.engine import recommend
from advisor.engine.costmodel import step_cost
from advisor.engine.profile import DeviceProfile, merge, trusted
from tests.engine.profiles import scaled, synthetic_profile
from tests.engine.specs import spec

PROFILE = synthetic_profile()


def test_profiles_merge_point_by_point_into_their_median() -> None:
    """A device's stored profile is the median of its latest trusted ones, each point on its own: one
    profile's slow 2-thread points (a burst of other work) do not move it."""
    one, two, three = PROFILE, scaled(PROFILE, 3.0, threads=("2",)), scaled(PROFILE, 1.5)
    merged = merge([one, two, three])
    assert merged["merged"] == 3
    for count, factor in (("1", 1.0), ("2", 1.5)):  # 1 thread: 1, 1, 1.5 x; 2 threads: 1, 3, 1.5 x
        points = zip(merged["threads"][count]["linear"], PROFILE["threads"][count]["linear"], strict=True)
        for (w, s), (w0, s0) in points:
            assert w == w0 and s == pytest.approx(factor * s0)
    assert merged["threads"]["1"]["step_seconds"] == PROFILE["threads"]["1"]["step_seconds"]
    # it keeps the profiles it is the median of, for the interval to span them; a single one keeps none
    assert merged.get("members") == [one, two, three]
    assert merge([one]) == {**one, "merged": 1}
    assert merge([merged]) == {**{k: v for k, v in merged.items() if k != "members"}, "merged": 1}
    # a profile of another version (or torch, processor) is left out; the newest decides which
    older = {**scaled(PROFILE, 10.0), "version": PROFILE["version"] - 1}
    assert merge([older, one]) == {**one, "merged": 1}
    assert trusted(one) and not trusted({**one, "unreliable_reasons": [{"code": "runnable", "text": ""}]})


def test_the_linear_curve_merges_with_its_weight_work_from_the_median_profile() -> None:
    """A linear curve's works count the weights at its own profile's product_weight_work, so curves of
    different profiles share no works: the merged one is a whole curve and its weight work, from the profile
    whose weight work is the median, whichever profile is the newest."""
    profiles = []
    for kappa, scale in ((10.0, 0.1), (30.0, 1.0), (20.0, 5.0)):  # the newest last: kappa 20, a slow curve
        p = copy.deepcopy(PROFILE)
        for rates in p["threads"].values():
            rates["product_weight_work"] = kappa
            rates["linear"] = [[w + kappa, s * scale] for w, s in rates["linear"]]
        profiles.append(p)
    merged = merge(profiles)
    for count, rates in merged["threads"].items():
        assert rates["product_weight_work"] == 20.0
        assert rates["linear"] == profiles[2]["threads"][count]["linear"]
    profiles[2], profiles[1] = profiles[1], profiles[2]  # the median profile is no longer the newest
    assert merge(profiles)["threads"]["1"]["linear"] == profiles[1]["threads"]["1"]["linear"]


def test_a_merged_profile_prices_a_step_at_the_median_of_its_members_prices() -> None:
    """The median of the members' own prices (each with its own step factor), not the price of their
    pointwise median, which can fall outside all of them; with two, their mean."""
    candidate = recommend(spec("tabular", [20], outputs=3))["candidates"][0]
    one, twice, thrice = PROFILE, scaled(PROFILE, 2.0), scaled(PROFILE, 3.0)

    def price(profile: DeviceProfile) -> float:
        return step_cost(candidate, batch_size=32, threads=1, profile=profile).seconds

    assert price(merge([thrice, one, twice])) == pytest.approx(price(twice))
    assert price(merge([one, thrice])) == pytest.approx((price(one) + price(thrice)) / 2)
    assert price(merge([one])) == pytest.approx(price(one))
