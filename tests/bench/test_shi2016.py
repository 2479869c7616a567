"""`python -m bench shi2016`: the files it writes and their structure (never the speed)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from bench import shi2016, shi2016_paper
from bench.shi2016_report import COLUMNS, paper_cells

# the contract's columns, first and in this order (written out here, not read from the report module): the
# configuration, what was measured, the paper's figures
REQUIRED = [
    *("network", "device", "threads", "batch_size"),
    *("seconds_per_batch", "iqr", "iterations", "achieved_flops"),
    *("paper_caffe", "paper_cntk", "paper_tensorflow", "paper_torch"),
]


def _paper_csv() -> dict[tuple[str, str], dict[str, str]]:
    """Table 4 read straight from the shared data file's format, independently of bench.shi2016_paper."""
    with shi2016_paper.TABLE.open(encoding="utf-8") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return {(r["network"], r["tool"]): r for r in rows}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("shi2016")
    argv = ["--quick", "--networks", "FCN-5", "--threads", "1,2", "--out", str(out), "--scale", "0.05"]
    assert shi2016.main([*argv, "--min-seconds", "0"]) == 0
    return out


def test_it_writes_one_row_per_network_and_thread_count_with_the_contract_columns(quick_run: Path) -> None:
    with (quick_run / "shi2016.csv").open(encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    assert reader.fieldnames is not None
    assert reader.fieldnames[: len(REQUIRED)] == REQUIRED
    assert reader.fieldnames == COLUMNS
    assert [(r["network"], r["device"], r["threads"]) for r in rows] == [
        ("FCN-5", "cpu", "1"),
        ("FCN-5", "cpu", "2"),
    ]
    for r in rows:
        assert r["batch_size"] == "64"
        assert float(r["seconds_per_batch"]) > 0
        assert int(r["iterations"]) >= 2
        assert float(r["achieved_flops"]) > 0
        assert (
            0
            < float(r["fraction_of_peak"])
            == pytest.approx(float(r["achieved_flops"]) / float(r["peak_flops"]))
        )
        assert r["error"] == ""


def test_it_fills_the_paper_cells_from_table_4_at_the_same_thread_count(quick_run: Path) -> None:
    table = _paper_csv()
    with (quick_run / "shi2016.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for tool in shi2016_paper.TOOLS:
            expected = table[("FCN-5", tool)][f"desktop_{r['threads']}"]
            assert r[f"paper_{tool.lower()}"] == expected  # FCN-5 has all four tools at 1 and 2 threads
            assert all(r[f"paper_{tool.lower()}_{card}"] == "" for card in shi2016_paper.GPUS)


@pytest.mark.parametrize(
    ("network", "device", "threads", "column", "source"),
    [
        ("LSTM-32", "cpu", 1, "paper_caffe", None),  # Caffe had no LSTM
        ("ResNet-50", "cpu", 4, "paper_torch", None),  # Torch's 4-thread ResNet-50 is "-" in the paper
        ("ResNet-50", "cpu", 8, "paper_tensorflow", ("ResNet-50", "TensorFlow", "desktop_8")),
        ("AlexNet", "cuda:0", 2, "paper_tensorflow_gtx1080", ("AlexNet", "TensorFlow", "gpu_gtx1080")),
        ("AlexNet", "cuda:0", 2, "paper_tensorflow", None),  # GPU rows carry the GPU columns only
        ("FCN-8", "cpu", 16, "paper_cntk", None),  # the desktop had no 16-thread setting
    ],
)
def test_it_leaves_paper_cells_empty_only_where_the_paper_has_none(
    network: str, device: str, threads: int, column: str, source: tuple[str, str, str] | None
) -> None:
    cells = paper_cells(network, device, threads, shi2016_paper.load())
    if source is None:
        assert cells[column] is None
    else:
        assert cells[column] == float(_paper_csv()[source[:2]][source[2]])


def test_it_writes_the_markdown_table_the_plots_and_the_machine(quick_run: Path) -> None:
    md = (quick_run / "shi2016.md").read_text(encoding="utf-8")
    assert "| FCN-5 | cpu | 1 | 64 |" in md and "| FCN-5 | cpu | 2 | 64 |" in md
    assert "Hardware differs" in md and "Network definitions" in md and "Allocator" in md
    for name in ("shi2016_time.png", "shi2016_speedup.png"):
        assert (quick_run / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    info = json.loads((quick_run / "machine.json").read_text(encoding="utf-8"))
    for key in ("cpu_model", "physical_cores", "torch", "blas", "gpus", "malloc_env", "allocator"):
        assert key in info
    assert len(info["load_average_start"]) == len(info["load_average_end"]) == 3
    assert [p["threads"] for p in info["peaks"] if p["device"] == "cpu"][:2] == [1, 2]
    assert all(math.isfinite(p["flops"]) and p["flops"] > 0 for p in info["peaks"])
