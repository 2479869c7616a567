"""engine.remaining's pace for the steps still ahead: its thread count's latest, within twice its median."""

from __future__ import annotations

import pytest

from advisor.engine.remaining import Mark, WorkPlan, remaining

# four configurations of 2 s at one thread, batch 32 to 256, as an explicit grid runs them; 1 s to finish
GRID = WorkPlan(2.0, (2.0,) * 4, 1.0, 120.0, threads=(1,) * 4, batches=(32, 64, 128, 256))


@pytest.mark.parametrize(
    ("took", "seconds"),
    [
        # on plan: the latest pace is 1
        ((2.0, 2.0), 2 * 2.0 + 1.0),
        # the estimates' error drifts with the batch (0.8x at 32, 1.2x at 64): the nearest batch's pace
        ((1.6, 2.4), 2 * 2.4 + 1.0),
        # the latest step stalled 5x: at most twice the median of its thread count's (1, 5 and the job's 1)
        ((2.0, 10.0), 2 * 2.0 * 2.0 + 1.0),
    ],
)
def test_the_steps_ahead_take_their_thread_counts_latest_pace_within_twice_its_median(
    took: tuple[float, float], seconds: float
) -> None:
    marks = [Mark(2.0, 0, 4, threads=1), Mark(2.0 + took[0], 1, 4, threads=1)]
    marks.append(Mark(marks[-1].at_s + took[1], 2, 4, threads=1))
    assert remaining(GRID, marks, marks[-1].at_s).seconds == pytest.approx(seconds)
