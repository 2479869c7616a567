"""The one error the engine raises for bad input."""

from __future__ import annotations


class SpecError(ValueError):
    """A TaskSpec that cannot be answered; `.errors` maps dotted field paths to plain messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{path}: {' '.join(msgs)}" for path, msgs in errors.items()))
