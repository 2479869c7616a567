"""The harness's children time steps with denormal floats flushed to zero, on every intra-op thread."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from advisor.calibration.supervisor import supervise


def nonzero_denormals(flush_after_start: bool = False) -> int:
    """A parallel multiply over a million denormal float32s on two intra-op threads: how many stay nonzero
    (`flush_after_start`: flushed once the intra-op threads have started)."""
    import torch

    from advisor.calibration.floats import flush_denormals

    torch.set_num_threads(2)
    # the largest denormal, bit by bit: a float's conversion would flush it already on the calling thread
    x = torch.full((1 << 20,), 0x007FFFFF, dtype=torch.int32).view(torch.float32)
    if flush_after_start:
        x.mul(1.0)  # the intra-op threads start here
        flush_denormals()
    return int(torch.count_nonzero(x.mul(1.0)))


COUNT = """
import sys
from advisor.calibration.floats import flush_denormals
from tests.calibration.test_denormals import nonzero_denormals
if sys.argv[1] == "before":
    flush_denormals()
print(nonzero_denormals(flush_after_start=sys.argv[1] == "after"))
"""


def _count(when: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", COUNT, when],
        cwd=Path(__file__).resolve().parents[2],  # the repository root: `tests` importable
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return int(done.stdout.strip())


@pytest.mark.parametrize(("when", "nonzero"), [("before", 0), ("never", 1 << 20)])
def test_flushing_before_the_first_operator_reaches_every_thread(when: str, nonzero: int) -> None:
    assert _count(when) == nonzero


def test_flushing_after_it_reaches_the_calling_thread_alone() -> None:
    """Why the children flush before their first operator: the other thread's share stays denormal."""
    assert 0 < _count("after") < 1 << 20


def count_in_child(events: Any) -> None:
    events.put({"type": "done", "nonzero": nonzero_denormals()})


def test_a_supervised_child_runs_with_denormals_flushed() -> None:
    """The sweep's and the probe's children start through supervise()."""
    deadline = time.monotonic() + 120
    end = supervise(
        count_in_child,
        (),
        name="denormals",
        env={},
        deadline=lambda: deadline,
        on_event=lambda e: None,
        should_cancel=lambda: False,
    )
    assert end.status == "done"
    assert end.event is not None and end.event["nonzero"] == 0
