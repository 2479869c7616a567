"""Table 4 of Shi et al. (2016), re-aligned (shi2016_table4.csv beside it).

Seconds per mini-batch for four tools on a 4-core desktop CPU at 1/2/4/8 threads, a 16-core server at 1-32
threads, and three GPUs. The CSV's comment lines explain the re-alignment of the extracted text.
"""

from __future__ import annotations

import csv
from pathlib import Path

TABLE = Path(__file__).with_name("shi2016_table4.csv")
TOOLS = ("Caffe", "CNTK", "TensorFlow", "Torch")
DESKTOP_THREADS = (1, 2, 4, 8)
GPUS = ("gtx980", "gtx1080", "k80")
DESKTOP = "Intel i7-3820 (4 cores, 3.6 GHz, 2012), OpenBLAS 0.2.18 / Eigen 3.2.8"

# network -> tool -> column ("desktop_1", "gpu_k80", ...) -> seconds per mini-batch; absent = not reported
Table = dict[str, dict[str, dict[str, float]]]


def load(path: Path = TABLE) -> Table:
    with path.open(encoding="utf-8") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        table: Table = {}
        for row in rows:
            cells = {k: float(v) for k, v in row.items() if k not in {"network", "tool", "batch"} and v}
            table.setdefault(row["network"], {})[row["tool"]] = cells
    return table


def desktop(table: Table, network: str, tool: str, threads: int) -> float | None:
    """The paper's desktop time at this thread count, or None where it has none (e.g. Caffe has no LSTM)."""
    return table.get(network, {}).get(tool, {}).get(f"desktop_{threads}")


def gpu(table: Table, network: str, tool: str, card: str) -> float | None:
    return table.get(network, {}).get(tool, {}).get(f"gpu_{card}")
