"""The reference networks the benchmarks time (harness, epoch, scaling): the small ones the hosts CLI offers
(advisor.calibration.examples) and Shi et al.'s FCN-5 at its full size (DLBench's Caffe sizes: 26,752 inputs
and outputs, three hidden layers of 2048 sigmoid units; bench/networks.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from advisor.calibration.examples import EXAMPLES as HOSTS_NETWORKS
from bench.networks import fcn

EXAMPLES: dict[str, Callable[[], dict[str, Any]]] = {**HOSTS_NETWORKS, "fcn-5": lambda: fcn("FCN-5", 3)}
