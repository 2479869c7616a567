"""Fuzzing the sample parsers (CSV, NPY, NPZ, image ZIPs) with Hypothesis: every input is accepted as a sample
that passes check_arrays or refused with a SampleError (a 400 with its message at the API); nothing else is
raised and the process' peak memory stays bounded, zip bombs, pixel floods and huge declared dimensions
included. UPLOAD_FUZZ_EXAMPLES per format (default 100 here); the committed figure runs 10,000 each
(bench/results/fuzz_shared2core/README.md)."""

from __future__ import annotations

import os
import resource
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from advisor.probe.learning.samples import Limits, SampleError, check_arrays
from advisor.probe.learning.uploads import parse_upload
from tests.probe.upload_strategies import FORMATS, huge_png, lying_zip, zip_bomb

EXAMPLES = int(os.environ.get("UPLOAD_FUZZ_EXAMPLES", "100"))
LIMITS = Limits()  # the defaults: 20 MB files, 50,000 examples, 20 million values
MEMORY_BOUND = 1024 * 2**20  # peak RSS growth allowed over a whole run (the limits allow 80 MB of floats)


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def parse_or_refuse(upload: tuple[str, bytes, str]) -> str:
    name, data, label = upload
    try:
        sample = parse_upload(name, data, label_column=label, limits=LIMITS)
    except SampleError as exc:
        messages = [m for ms in exc.errors.values() for m in ms]
        assert messages and all(isinstance(m, str) and m for m in messages), exc.errors
        return "refused"
    check_arrays(sample, LIMITS)
    return "accepted"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_input_is_accepted_or_refused_clearly(fmt: str) -> None:
    before = peak_rss()
    outcomes: dict[str, int] = {}

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(FORMATS[fmt])
    def run(upload: Any) -> None:
        outcome = parse_or_refuse(upload)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1

    run()
    assert peak_rss() - before < MEMORY_BOUND, f"peak memory grew by {(peak_rss() - before) / 2**20:.0f} MiB"
    assert outcomes.get("refused", 0) > 0, outcomes
    if os.environ.get("UPLOAD_FUZZ_REPORT"):
        with open(os.environ["UPLOAD_FUZZ_REPORT"], "a", encoding="utf-8") as report:
            report.write(
                f"{fmt}\t{sum(outcomes.values())}\t{outcomes}\t{(peak_rss() - before) / 2**20:.0f}\n"
            )


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("x.npz", zip_bomb(400 * 2**20), "expands to"),
        ("i.zip", zip_bomb(400 * 2**20, "cat/a.png"), "expands to"),
        ("x.npz", lying_zip(b"\x00" * 2**20, "x.npy", 10), "not readable"),
        ("i.zip", b"", "empty"),
        ("x.npy", b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, "
         b"'shape': (10000000000000,), }" + b" " * 49 + b"\n", "declares"),
        ("x.npy", b"\x93NUMPY\x01\x00v\x00{'descr': '|O', 'fortran_order': False, 'shape': (3,), }"
         + b" " * 61 + b"\n", "unpickling"),
    ],
)  # fmt: skip
def test_hostile_files_are_refused_with_a_reason(name: str, data: bytes, message: str) -> None:
    with pytest.raises(SampleError) as info:
        parse_upload(name, data, limits=LIMITS)
    assert message in str(info.value.errors)


def test_a_pixel_flood_is_refused_before_decoding() -> None:
    data = __import__("tests.probe.upload_strategies", fromlist=["_zip"])._zip(
        [("cat/a.png", huge_png(20000, 20000)), ("dog/b.png", huge_png(2, 2))], 8
    )
    before = peak_rss()
    with pytest.raises(SampleError) as info:
        parse_upload("i.zip", data, limits=LIMITS)
    assert "too large" in str(info.value.errors) or "not a readable image" in str(info.value.errors)
    assert peak_rss() - before < 200 * 2**20
