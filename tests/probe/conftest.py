"""Fixtures of the probe tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import cpu_device


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread() -> Iterator[None]:
    """Small networks train fastest on one thread; on a shared 2-core machine more threads only contend (the
    probe's worker does the same for small candidates)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


IRIS_SPEC = {
    "task": "tabular",
    "data": {"examples": 150, "input_shape": [4], "outputs": 3},
    "hardware": {"cpu_cores": 2, "ram_gb": 8},
    "target": {"accuracy": 0.9},
}
DIGITS_SPEC = {
    "task": "vision",
    "data": {"examples": 1797, "input_shape": [1, 8, 8], "outputs": 10},
    "hardware": {"cpu_cores": 2, "ram_gb": 8},
    "target": {"accuracy": 0.95},
}


def _clean(user: object) -> None:
    import shutil

    from advisor.probe.conf import samples_root

    shutil.rmtree(samples_root() / str(user.pk), ignore_errors=True)  # type: ignore[attr-defined]


@pytest.fixture
def samples_dir(user: object) -> Iterator[object]:
    """The user's sample folder, empty before and removed after (ids repeat across test databases)."""
    from advisor.probe.conf import samples_root

    _clean(user)
    yield samples_root() / str(user.pk)  # type: ignore[attr-defined]
    _clean(user)


@pytest.fixture
def iris_rec(user: object) -> object:
    from advisor import services

    return services.advise(owner=user, spec=IRIS_SPEC)  # type: ignore[arg-type]


@pytest.fixture
def digits_rec(user: object) -> object:
    from advisor import services

    return services.advise(owner=user, spec=DIGITS_SPEC)  # type: ignore[arg-type]


@pytest.fixture
def device(db: None) -> object:
    return cpu_device("probe-test")
