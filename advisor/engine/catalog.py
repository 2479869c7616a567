"""The hardware catalog (hardware.json beside this module), loaded once per process."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

_PATH = Path(__file__).with_name("hardware.json")


@cache
def _catalog() -> dict[str, Any]:
    with _PATH.open(encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


@cache
def _by_id(section: str) -> dict[str, dict[str, Any]]:
    return {entry["id"]: entry for entry in _catalog()[section]}


def gpu_catalog() -> list[dict[str, Any]]:
    """Every catalogued GPU (a copy: callers may serialise or change it freely)."""
    return copy.deepcopy(_catalog()["gpus"])


def gpus() -> tuple[dict[str, Any], ...]:
    """Every catalogued GPU, shared: read them, never change them (for the engine's own loops)."""
    return _gpus_sorted()


@cache
def _gpus_sorted() -> tuple[dict[str, Any], ...]:
    return tuple(sorted(_catalog()["gpus"], key=lambda g: (g["fp32_tflops"], g["memory_gb"])))


def cpu_catalog() -> list[dict[str, Any]]:
    return copy.deepcopy(_catalog()["cpus"])


def link_catalog() -> list[dict[str, Any]]:
    return copy.deepcopy(_catalog()["links"])


def storage_catalog() -> list[dict[str, Any]]:
    return copy.deepcopy(_catalog()["storage"])


@cache
def gpu_ids() -> frozenset[str]:
    return frozenset(_by_id("gpus"))


def gpu(gpu_id: str) -> dict[str, Any]:
    """One GPU's entry, shared: read it, never change it."""
    return _by_id("gpus")[gpu_id]


def cpu(cpu_id: str) -> dict[str, Any]:
    return _by_id("cpus")[cpu_id]


def link(link_id: str) -> dict[str, Any]:
    return _by_id("links")[link_id]


def storage(storage_id: str) -> dict[str, Any]:
    return _by_id("storage")[storage_id]


@cache
def largest_gpu_memory_gb() -> float:
    return float(max(entry["memory_gb"] for entry in _catalog()["gpus"]))
