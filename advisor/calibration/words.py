"""Small phrases shared by the messages users read."""

from __future__ import annotations


def threads_text(threads: object) -> str:
    return "1 thread" if threads == 1 else f"{threads} threads"
