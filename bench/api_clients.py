"""The load generators of `python -m bench api`: closed-loop clients (each sends its next request when the
previous answer arrived), measured over a fixed window after an unmeasured warm-up.

wrk (Debian's package) is the default: written in C, it costs the machine about 0.1 ms of CPU per request,
while the asyncio client below costs about 1 ms, a third of what the server itself spends, on the same two
cores. The asyncio client needs nothing installed and is kept as the fallback."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PATH = "/api/v1/recommendations/"


@dataclass
class Trial:
    """One measured window. Latencies in ms, of the requests answered within the window."""

    requests: int
    seconds: float
    statuses: dict[str, int] = field(default_factory=dict)
    connection_errors: int = 0
    latency_ms: dict[str, float] = field(default_factory=dict)  # p50, p95, p99, max

    @property
    def requests_per_second(self) -> float:
        return self.requests / self.seconds


def wrk_path() -> str | None:
    return shutil.which("wrk")


# wrk's own statistics, printed by its done() hook: requests, duration (µs), 201s, other statuses, socket
# errors, then latency percentiles and max in µs. Each wrk thread counts statuses in its own Lua state;
# done() sums them through the thread handles setup() kept.
_LUA = """
wrk.method = "POST"
wrk.body = [==[{body}]==]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Token {token}"
local threads = {{}}
function setup(thread) table.insert(threads, thread) end
function init(args) created = 0; other = 0 end
function response(status, headers, body)
  if status == 201 then created = created + 1 else other = other + 1 end
end
function done(summary, latency, requests)
  local c, o = 0, 0
  for _, t in ipairs(threads) do c = c + t:get("created"); o = o + t:get("other") end
  local e = summary.errors
  io.write(string.format("RESULT %d %d %d %d %d %d %d %d %d\\n", summary.requests, summary.duration, c, o,
    e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(95),
    latency:percentile(99), latency.max))
end
"""


def run_wrk(
    port: int, token: str, body: dict[str, Any], clients: int, warmup: float, seconds: float
) -> Trial:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(_LUA.format(body=json.dumps(body), token=token))
    try:
        url = f"http://127.0.0.1:{port}{PATH}"
        # One wrk thread drives 20 connections at well over 1,000 requests/s; a second would only take CPU
        # from the server.
        base = [wrk_path() or "wrk", "-t1", f"-c{clients}", "--timeout", "10s", "-s", script.name]
        if warmup > 0:
            subprocess.run([*base, f"-d{max(1, round(warmup))}s", url], capture_output=True, check=True)
        done = subprocess.run(
            [*base, f"-d{max(1, round(seconds))}s", url], capture_output=True, text=True, check=True
        )
    finally:
        Path(script.name).unlink(missing_ok=True)
    found = re.search(r"^RESULT ((?:\d+ ?){9})$", done.stdout, re.M)
    if not found:
        raise RuntimeError(f"wrk printed no result:\n{done.stdout}\n{done.stderr}")
    n, duration_us, created, other, errors, p50, p95, p99, top = (int(x) for x in found.group(1).split())
    statuses = {"201": created} if created else {}
    if other:
        statuses["other"] = other
    return Trial(
        requests=n,
        seconds=duration_us / 1e6,
        statuses=statuses,
        connection_errors=errors,
        latency_ms={"p50": p50 / 1000, "p95": p95 / 1000, "p99": p99 / 1000, "max": top / 1000},
    )


async def _one(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
) -> tuple[int, bool]:
    """Send one request on an open connection; returns (status, whether the server keeps it open)."""
    writer.write(request)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {
        k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
    }
    await reader.readexactly(int(headers.get("content-length", "0")))
    return status, headers.get("connection", "").lower() != "close"


async def _client(
    port: int, request: bytes, start: float, stop: float, trial: Trial, ms: list[float]
) -> None:
    conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    while time.perf_counter() < stop:
        began = time.perf_counter()
        try:
            if conn is None:
                conn = await asyncio.open_connection("127.0.0.1", port)
            status, keep = await _one(*conn, request)
        except (OSError, asyncio.IncompleteReadError, ValueError):
            trial.connection_errors += 1
            conn = None
            continue
        if not keep:
            conn[1].close()
            conn = None
        if began >= start:  # the warm-up's requests are not counted
            ms.append((time.perf_counter() - began) * 1000)
            trial.statuses[str(status)] = trial.statuses.get(str(status), 0) + 1
    if conn is not None:
        conn[1].close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def run_python(
    port: int, token: str, body: dict[str, Any], clients: int, warmup: float, seconds: float
) -> Trial:
    data = json.dumps(body).encode()
    request = (
        f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Token {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    ).encode() + data
    trial = Trial(requests=0, seconds=seconds)
    ms: list[float] = []

    async def run() -> None:
        start = time.perf_counter() + warmup
        await asyncio.gather(
            *(_client(port, request, start, start + seconds, trial, ms) for _ in range(clients))
        )

    asyncio.run(run())
    trial.requests = len(ms)
    if ms:
        trial.latency_ms = {q: percentile(ms, n) for q, n in (("p50", 50), ("p95", 95), ("p99", 99))}
        trial.latency_ms["max"] = max(ms)
    return trial
