"""`python -m bench api` end to end in a tiny run, with each load generator: gunicorn starts, every request is
answered 201, the figures come out. Speed is reported by the benchmark, never asserted here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import api_clients, api_load
from tests.conftest import need

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("client", ["wrk", "python"])
def test_it_reports_throughput_and_percentiles(
    client: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if client == "wrk":
        need(api_clients.wrk_path() is not None, "wrk (apt-get install wrk)")
    out = tmp_path / "api.json"
    argv = ["--client", client, "--clients", "3", "--seconds", "1", "--warmup", "1", "--trials", "2"]
    code = api_load.main([*argv, "--workers", "2", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    figures = json.loads(out.read_text())
    assert figures["client"] == client and len(figures["trials"]) == 2
    for trial in figures["trials"]:
        assert trial["requests"] > 0 and trial["statuses"] == {"201": trial["requests"]}
        assert trial["requests_per_second"] == pytest.approx(trial["requests"] / trial["seconds"])
        lat = trial["latency_ms"]
        assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
        assert trial["server_cpu_ms_per_request"] > 0 and 0 <= trial["idle_percent"] <= 100
    assert figures["median_trial"] in figures["trials"]
    assert figures["meets_target"] == (figures["median_trial"]["latency_ms"]["p95"] < 50)
    assert f"({client})" in printed and "median trial p95" in printed
