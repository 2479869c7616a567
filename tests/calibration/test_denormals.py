"""The harness's children time steps with denormal floats flushed to zero, on every intra-op thread."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

import pytest

from advisor.calibration.supervisor import supervise

# a parallel multiply over a million denormal float32s on two intra-op threads: how many stay nonzero
COUNT = """
import sys, torch
from advisor.calibration.floats import flush_denormals
if sys.argv[1] == "before":
    flush_denormals()
torch.set_num_threads(2)
# the largest denormal, bit by bit: a float's conversion would flush it already on the calling thread
x = torch.full((1 << 20,), 0x007FFFFF, dtype=torch.int32).view(torch.float32)
x.mul(1.0)  # the intra-op threads start here
if sys.argv[1] == "after":
    flush_denormals()
print(int(torch.count_nonzero(x.mul(1.0))))
"""


def _count(when: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", COUNT, when], capture_output=True, text=True, timeout=120, check=True
    )
    return int(done.stdout.strip())


@pytest.mark.parametrize(("when", "nonzero"), [("before", 0), ("never", 1 << 20)])
def test_flushing_before_the_first_operator_reaches_every_thread(when: str, nonzero: int) -> None:
    assert _count(when) == nonzero


def test_flushing_after_it_reaches_the_calling_thread_alone() -> None:
    """Why the children flush before their first operator: the other thread's share stays denormal."""
    assert 0 < _count("after") < 1 << 20


def count_in_child(events: Any) -> None:
    import torch

    torch.set_num_threads(2)
    x = torch.full((1 << 20,), 0x007FFFFF, dtype=torch.int32).view(torch.float32)
    events.put({"type": "done", "nonzero": int(torch.count_nonzero(x.mul(1.0)))})


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
