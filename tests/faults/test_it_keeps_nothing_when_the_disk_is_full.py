"""The disk fills up while an uploaded sample is written: a real tmpfs of 256 kB mounted by the test (root
only; CI=true makes a missing capability a failure). The client gets a clear 507 naming the cause, and nothing
is left behind: no partial file, no row. The next upload that fits is kept as usual."""

from __future__ import annotations

import io
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from advisor.probe.models import DataSample
from tests.conftest import need

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_disk(tmp_path: Path, settings: Any) -> Iterator[Path]:
    need(os.geteuid() == 0, "mounting a tmpfs needs root")
    var = tmp_path / "var"
    var.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(var)], capture_output=True
    )
    need(mounted.returncode == 0, f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    settings.VAR_DIR = var  # where samples are kept (advisor.probe.conf.samples_root)
    try:
        yield var
    finally:
        subprocess.run(["umount", "-l", str(var)], check=False)


def _csv(rows: int, seed: int) -> io.BytesIO:
    """Random floats (incompressible): about 60 bytes per row once stored."""
    values = np.random.default_rng(seed).normal(size=(rows, 8))
    lines = ["a,b,c,d,e,f,g,h,label"] + [",".join(f"{v:.9f}" for v in row) + f",{i % 2}" for i, row in
                                         enumerate(values)]  # fmt: skip
    upload = io.BytesIO("\n".join(lines).encode())
    upload.name = "big.csv"
    return upload


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_it_refuses_clearly_and_keeps_nothing(api: Any, small_disk: Path) -> None:
    response = api.post(
        "/api/v1/samples/", {"file": _csv(20_000, 1), "label_column": "label"}, format="multipart"
    )
    assert response.status_code == 507, response.content
    assert "storage is full" in response.json()["file"][0]
    assert _files(small_disk) == []  # the temporary .part file went too
    assert DataSample.objects.count() == 0

    fits = api.post("/api/v1/samples/", {"file": _csv(100, 2), "label_column": "label"}, format="multipart")
    assert fits.status_code == 201, fits.content
    assert DataSample.objects.count() == 1 and len(_files(small_disk)) == 1
