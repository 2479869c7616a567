"""`python -m bench profiles`: the profiles it compares are taken with the point lengths each letter names,
from the profile module each letter names, and the module is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

import advisor.calibration.profile as today
from advisor.calibration import points
from bench.profiles import LENGTHS, load_module, point_lengths, take


def _lengths() -> tuple[object, ...]:
    return today.WHOLE_STEP_SECONDS, points.median_seconds.__defaults__, points.harness_step.__defaults__


@pytest.mark.parametrize("letter", sorted(LENGTHS))
def test_each_letter_sets_its_lengths_and_restores_the_module(letter: str) -> None:
    _, point, whole = LENGTHS[letter]
    before = _lengths()
    with point_lengths(today, point, whole):
        inside = _lengths()
    after = _lengths()
    assert after == before
    if point is None:  # the module's own lengths
        assert inside == before
    else:
        assert inside == (whole, (point, 1), (point,))


def test_the_length_letters_are_the_committed_ab_runs() -> None:
    # bench/results/predict_amd-epyc-2c_ab-point-length: 0.06/0.3 (default), 0.06/0.75, 0.15/0.75 (adopted)
    assert {k: v for k, v in LENGTHS.items() if v[1] is not None} == {
        "d": ("default", 0.06, 0.3),
        "w": ("whole", 0.06, 0.75),
        "l": ("long", 0.15, 0.75),
    }
    assert (LENGTHS["l"][1], LENGTHS["l"][2]) == (points.POINT_SECONDS, today.WHOLE_STEP_SECONDS)


def test_another_version_of_the_profile_module_loads_beside_todays() -> None:
    other = load_module(Path(today.__file__))
    assert other is not today and other.profile_device is not today.profile_device
    assert other.WHOLE_STEP_SECONDS == today.WHOLE_STEP_SECONDS


@pytest.mark.parametrize(
    ("order", "old", "words"),
    [("dx", None, "unknown"), ("", None, "unknown"), ("no", None, "--old-profile")],
)
def test_it_refuses_an_order_before_profiling(order: str, old: Path | None, words: str) -> None:
    with pytest.raises(SystemExit, match=words):
        take(order, old, [1])


@pytest.mark.slow
def test_it_takes_a_real_profile_at_the_short_lengths_and_restores_them() -> None:
    profiles = take("d", None, [1])
    assert list(profiles) == ["default"]
    rates = profiles["default"]["threads"]["1"]
    assert rates["step_factor"] > 0 and len(rates["whole_step_seconds"]) > 0
    assert _lengths() == (0.75, (None, 1), (None,))  # restored: today's lengths, read when timed
