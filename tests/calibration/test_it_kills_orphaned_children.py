"""A measuring child dies with the process that started it, even when that one is killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil

PARENT = textwrap.dedent(
    """
    import multiprocessing as mp, os, sys, time
    from advisor.calibration.parent_death import die_with_parent

    def child(parent_pid):
        die_with_parent(parent_pid)
        time.sleep(60)

    if __name__ == "__main__":
        proc = mp.get_context("spawn").Process(target=child, args=(os.getpid(),))
        proc.start()
        print(proc.pid, flush=True)
        time.sleep(60)
    """
)


def test_it_kills_the_child_when_its_parent_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"  # a file, not -c: a spawned child imports its target from __main__'s file
    script.write_text(PARENT)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    assert parent.stdout is not None
    child_pid = int(parent.stdout.readline())
    child = psutil.Process(child_pid)
    time.sleep(1.0)  # the child has called die_with_parent by now (it starts by doing so)
    assert child.is_running() and child.status() != psutil.STATUS_ZOMBIE

    os.kill(parent.pid, signal.SIGKILL)
    parent.wait(timeout=10)
    gone, _ = psutil.wait_procs([child], timeout=10)
    assert gone, "the child outlived its killed parent"
