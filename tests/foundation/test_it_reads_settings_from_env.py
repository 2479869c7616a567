from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from advisor.env import env_bool, env_float, env_int, env_list


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1", True), ("true", True), ("YES", True), ("0", False), ("off", False), ("", False)],
)
def test_it_reads_booleans(monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool) -> None:
    monkeypatch.setenv("X_FLAG", raw)
    assert env_bool("X_FLAG", not expected) is expected


@pytest.mark.parametrize(
    ("reader", "raw", "message"),
    [
        (lambda: env_bool("X_VAL", False), "maybe", "is not a boolean"),
        (lambda: env_int("X_VAL", 1), "3.5", "is not an integer"),
        (lambda: env_int("X_VAL", 1, minimum=1), "0", "must be at least 1"),
        (lambda: env_float("X_VAL", 1.0), "fast", "is not a number"),
        (lambda: env_float("X_VAL", 1.0, minimum=0.1), "0.01", "must be at least 0.1"),
    ],
)
def test_it_fails_loudly_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, reader: object, raw: str, message: str
) -> None:
    monkeypatch.setenv("X_VAL", raw)
    with pytest.raises(ImproperlyConfigured) as info:
        reader()  # type: ignore[operator]
    assert "X_VAL" in str(info.value) and message in str(info.value)


def test_it_uses_defaults_when_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("X_VAL", raising=False)
    assert env_int("X_VAL", 7) == 7
    assert env_list("X_VAL", ["a"]) == ["a"]
    monkeypatch.setenv("X_VAL", " a, b ,,c")
    assert env_list("X_VAL", []) == ["a", "b", "c"]
