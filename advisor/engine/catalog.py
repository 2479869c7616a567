"""The hardware catalog (hardware.json beside this module), loaded once per process."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Literal, TypedDict

from advisor.contract import TaskHardware

_PATH = Path(__file__).with_name("hardware.json")


class Gpu(TypedDict):
    id: str
    name: str
    architecture: str
    year: int
    memory_gb: float
    fp32_tflops: float
    fp16_tflops: float  # tensor-core FP16 with FP32 accumulate where it has tensor cores
    memory_bandwidth_gbps: float
    host_link: str  # a link's id
    tensor_cores: bool
    source: str


class Cpu(TypedDict):
    id: str
    name: str
    cores: int
    threads: int
    ghz: float
    fp32_flops_per_cycle_per_core: int
    memory_bandwidth_gbps: float
    source: str


class Transfer(TypedDict):
    """A link (host to GPU, between nodes) or a store, by the bandwidth it moves data at."""

    id: str
    name: str
    gbps: float
    source: str


class _Catalog(TypedDict):
    gpus: list[Gpu]
    cpus: list[Cpu]
    links: list[Transfer]
    storage: list[Transfer]


@cache
def _catalog() -> _Catalog:
    with _PATH.open(encoding="utf-8") as handle:
        data: _Catalog = json.load(handle)
    return data


def gpu_catalog() -> list[Gpu]:
    """Every catalogued GPU (a copy: callers may serialise or change it freely)."""
    return copy.deepcopy(_catalog()["gpus"])


def gpus() -> tuple[Gpu, ...]:
    """Every catalogued GPU, shared: read them, never change them (for the engine's own loops)."""
    return _gpus_sorted()


@cache
def _gpus_sorted() -> tuple[Gpu, ...]:
    return tuple(sorted(_catalog()["gpus"], key=lambda g: (g["fp32_tflops"], g["memory_gb"])))


def cpu_catalog() -> list[Cpu]:
    return copy.deepcopy(_catalog()["cpus"])


def link_catalog() -> list[Transfer]:
    return copy.deepcopy(_catalog()["links"])


def storage_catalog() -> list[Transfer]:
    return copy.deepcopy(_catalog()["storage"])


@cache
def _gpus_by_id() -> dict[str, Gpu]:
    return {entry["id"]: entry for entry in _catalog()["gpus"]}


@cache
def _cpus_by_id() -> dict[str, Cpu]:
    return {entry["id"]: entry for entry in _catalog()["cpus"]}


@cache
def _transfers_by_id(section: Literal["links", "storage"]) -> dict[str, Transfer]:
    return {entry["id"]: entry for entry in _catalog()[section]}


@cache
def gpu_ids() -> frozenset[str]:
    return frozenset(_gpus_by_id())


def gpu(gpu_id: str) -> Gpu:
    """One GPU's entry, shared: read it, never change it."""
    return _gpus_by_id()[gpu_id]


def spec_gpu(hardware: TaskHardware) -> Gpu:
    """The entry of the GPU a spec names; the engine plans a GPU only where the spec names one."""
    if hardware["gpu"] is None:
        raise ValueError("the spec names no GPU (hardware.gpu)")
    return gpu(hardware["gpu"])


def cpu(cpu_id: str) -> Cpu:
    return _cpus_by_id()[cpu_id]


def link(link_id: str) -> Transfer:
    return _transfers_by_id("links")[link_id]


def storage(storage_id: str) -> Transfer:
    return _transfers_by_id("storage")[storage_id]


@cache
def largest_gpu_memory_gb() -> float:
    return float(max(entry["memory_gb"] for entry in _catalog()["gpus"]))
