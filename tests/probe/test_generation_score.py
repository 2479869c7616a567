"""The generation score (advisor/probe/learning/generation.py): a classifier two-sample test whose score is 1
where generated examples cannot be told from real ones and 0 where they always can."""

from __future__ import annotations

import numpy as np
import pytest

from advisor.probe.learning.generation import neighbours, score_of, two_sample_accuracy, two_sample_score


def test_it_scores_a_second_draw_of_the_data_near_one_and_a_shifted_one_near_zero() -> None:
    rng = np.random.default_rng(0)
    real, same = rng.standard_normal((400, 3)), rng.standard_normal((400, 3))
    assert two_sample_score(real, same, seed=0) > 0.85
    assert two_sample_score(real, same + 4.0, seed=0) < 0.05
    # between them, a half-shifted draw: partly told apart
    assert 0.05 < two_sample_score(real, same + 0.5, seed=0) < 0.85


def test_it_flattens_examples_of_any_shape() -> None:
    rng = np.random.default_rng(1)
    real = rng.random((200, 1, 4, 4)).astype(np.float32)
    assert two_sample_accuracy(real, real[::-1].copy() + 2.0, seed=0) > 0.95


@pytest.mark.parametrize(("accuracy", "score"), [(0.5, 1.0), (0.4, 1.0), (0.75, 0.5), (1.0, 0.0)])
def test_it_maps_chance_to_one_and_separable_to_zero(accuracy: float, score: float) -> None:
    assert score_of(accuracy) == pytest.approx(score)


@pytest.mark.parametrize(("examples", "k"), [(800, 25), (100, 9), (5, 2)])
def test_its_neighbours_grow_as_the_root_of_a_folds_real_examples(examples: int, k: int) -> None:
    assert neighbours(examples) == k


def test_it_needs_as_many_generated_as_real_examples() -> None:
    with pytest.raises(ValueError, match="as many generated as real"):
        two_sample_score(np.zeros((10, 2)), np.zeros((9, 2)))
