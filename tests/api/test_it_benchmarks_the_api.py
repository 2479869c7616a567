"""`python -m bench api` end to end in a tiny run: gunicorn starts, every request is answered 201, the
figures come out. Speed is reported by the benchmark, never asserted here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import api_load

pytestmark = pytest.mark.slow


def test_it_reports_throughput_and_percentiles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "api.json"
    code = api_load.main(
        ["--clients", "3", "--seconds", "1", "--warmup", "0.5", "--workers", "2", "--out", str(out)]
    )
    assert code == 0, capsys.readouterr().out
    figures = json.loads(out.read_text())
    assert figures["requests"] > 0 and set(figures["statuses"]) == {"201"}
    assert figures["requests_per_second"] == pytest.approx(figures["requests"] / figures["seconds"])
    lat = figures["latency_ms"]
    assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    assert "requests/s" in capsys.readouterr().out
