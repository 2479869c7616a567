"""The API's JSON renderer (orjson) and the recommendations' JSON encoder say what DRF's and the standard
library's would: the same values, DRF's formats for dates and decimals, indentation on request."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal
from typing import Any

import pytest
from django.utils.translation import gettext_lazy
from rest_framework import renderers

from advisor.api.policies import JSONRenderer
from advisor.jsonenc import FastEncoder

AWARE = dt.datetime(2026, 11, 22, 4, 5, 6, 789123, tzinfo=dt.UTC)

CASES: list[tuple[str, Any]] = [
    ("nested", {"candidates": [{"layers": [{"kind": "Linear", "out": 64}], "ratio": 0.125}], "ok": True}),
    ("unicode", {"reason": "Wünsche § 3.2 — “shallow first”", "empty": None}),
    ("dates", {"created": AWARE, "naive": dt.datetime(2026, 1, 2, 3, 4, 5), "day": dt.date(2026, 1, 2)}),
    ("others", {"price": Decimal("1.50"), "id": uuid.UUID(int=7), "lazy": gettext_lazy("Invalid token.")}),
    ("int keys and tuples", {1: (1, 2), "big": 2**70, "small": 1e-05}),
    ("list", [1, "two", 3.5, [], {}]),
]


@pytest.mark.parametrize(("name", "data"), CASES, ids=[c[0] for c in CASES])
def test_it_renders_what_drf_renders(name: str, data: Any) -> None:
    ours = JSONRenderer().render(data, "application/json", {})
    drf = renderers.JSONRenderer().render(data, "application/json", {})
    assert json.loads(ours) == json.loads(drf)
    assert b"\n" not in ours and b'", "' not in ours  # compact, as DRF's


def test_it_indents_on_request() -> None:
    data = {"a": [1, 2], "when": AWARE}
    ours = JSONRenderer().render(data, "application/json; indent=4", {})
    assert ours == renderers.JSONRenderer().render(data, "application/json; indent=4", {})
    assert b'\n    "a"' in ours


def test_it_renders_nothing_for_no_content() -> None:
    assert JSONRenderer().render(None) == b""


@pytest.mark.parametrize(
    "value", [{"spec": {"task": "vision"}, "n": [1, 2.5, None]}, {"huge": 2**80}, [], "é"]
)
def test_the_encoder_writes_what_json_reads_back(value: Any) -> None:
    written = json.dumps(value, cls=FastEncoder)
    assert json.loads(written) == value


def test_the_encoder_writes_compact_utf8_with_string_keys() -> None:
    assert json.dumps({"ü": 1, 2: [True]}, cls=FastEncoder) == '{"ü":1,"2":[true]}'
