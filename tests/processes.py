"""The processes a test started through multiprocessing's spawn (ranks, measuring children)."""

from __future__ import annotations

import contextlib

import psutil


def spawned_children(root: psutil.Process) -> list[psutil.Process]:
    """Live spawned descendants of `root`; multiprocessing's resource tracker is not one of them."""
    found = []
    for child in root.children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            if child.status() != psutil.STATUS_ZOMBIE and "spawn_main" in " ".join(child.cmdline()):
                found.append(child)
    return found
