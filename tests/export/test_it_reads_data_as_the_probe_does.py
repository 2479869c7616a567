"""The download's data loading (advisor/export/pieces/data.py, plain numpy, zlib and zipfile) reads every
format the probe accepts (advisor/probe/learning/uploads.py, with Pillow) into the same examples, in the
same order, with the same class numbers, so that a probe's split picks the same examples; and it scales them
as the probe did. PNG files are written here byte by byte: every filter, bit depth and colour type, and
interlaced."""

from __future__ import annotations

import csv
import io
import runpy
import struct
import sys
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from PIL import Image

from advisor import export
from advisor.engine import recommend
from advisor.export import training
from advisor.export.pieces import data as mine
from advisor.probe.learning import samples
from advisor.probe.learning import split as splits
from advisor.probe.learning.uploads import parse_upload


def same(path: Path, label_column: str = "") -> None:
    theirs = parse_upload(path.name, path.read_bytes(), label_column=label_column)
    ours = mine.load_sample(path, label_column)
    np.testing.assert_array_equal(ours.x, theirs.x)
    assert ours.x.dtype == theirs.x.dtype == np.float32
    assert (ours.label_kind, ours.classes) == (theirs.label_kind, theirs.classes)
    if theirs.y is None:
        assert ours.y is None
    else:
        assert ours.y is not None
        np.testing.assert_array_equal(ours.y, theirs.y)


def write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8-sig") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for row in rows:
            writer.writerow(row)
            writer.writerow([])  # blank lines are skipped
    return path


@pytest.mark.parametrize(
    "labels",
    [["cat", "dog", "cat", "bird"], [3, 1, 3, 2], [1.0, 2.0, 1.0, 2.0], [0.5, 1.25, -2.0, 7.5]],
    ids=["names", "whole-numbers", "integral-floats", "values"],
)
def test_it_reads_a_csv_file_as_the_probe(tmp_path: Path, labels: list[Any]) -> None:
    rows = [[i, i * 0.5, label] for i, label in enumerate(labels)]
    path = write_csv(tmp_path / "sample.csv", ["a", "b", "target"], rows)
    same(path, "target")
    if not isinstance(labels[0], str):
        same(path, "")  # no label column: every column is a feature


def test_it_reads_npz_and_npy_files_as_the_probe(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    x = rng.random((12, 2, 3))
    for name, y in (("ints", rng.integers(5, 9, 12)), ("names", np.array(list("abcabcabcabc"))),
                    ("values", rng.random((12, 2)))):  # fmt: skip
        np.savez(tmp_path / f"{name}.npz", x=x, y=y)
        same(tmp_path / f"{name}.npz")
    np.save(tmp_path / "x.npy", x)
    same(tmp_path / "x.npy")


# --- PNG, written here ------------------------------------------------------------------------------------


def paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def filtered(rows: list[bytes], step: int) -> bytes:
    """Each row with one of PNG's five filters in turn (none, sub, up, average, Paeth)."""
    out, prior = b"", bytes(len(rows[0]) if rows else 0)
    for i, row in enumerate(rows):
        kind, line = i % 5, bytearray()
        for j, value in enumerate(row):
            left = row[j - step] if j >= step else 0
            corner = prior[j - step] if j >= step else 0
            guess = [0, left, prior[j], (left + prior[j]) // 2, paeth(left, prior[j], corner)][kind]
            line.append((value - guess) & 255)
        out += bytes([kind]) + bytes(line)
        prior = row
    return out


def row_bytes(samples_: np.ndarray, depth: int) -> bytes:
    if depth == 16:
        return samples_.astype(">u2").tobytes()
    if depth == 8:
        return samples_.astype(np.uint8).tobytes()
    bits = ((samples_.reshape(-1, 1) >> np.arange(depth - 1, -1, -1)) & 1).astype(np.uint8)
    return np.packbits(bits.reshape(-1)).tobytes()


ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def png(
    pixels: np.ndarray, colour: int, depth: int, *, interlace: bool = False, palette: bytes = b""
) -> bytes:
    """pixels: [H, W, channels] samples of `depth` bits."""
    height, width, channels = pixels.shape
    step = max(1, channels * depth // 8)
    raw = b""
    for x0, y0, dx, dy in ADAM7 if interlace else ((0, 0, 1, 1),):
        part = pixels[y0::dy, x0::dx]
        if part.size:
            raw += filtered([row_bytes(r.reshape(-1), depth) for r in part], step)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    head = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, int(interlace))
    chunks = chunk(b"IHDR", head) + (chunk(b"PLTE", palette) if palette else b"")
    return mine.PNG_SIGNATURE + chunks + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


PALETTE = bytes(np.random.default_rng(1).integers(0, 256, 16 * 3, dtype=np.uint8))
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
KINDS = [  # (colour type, bit depth): every pair PNG allows
    *((0, d) for d in (1, 2, 4, 8, 16)),
    *((2, d) for d in (8, 16)),
    *((3, d) for d in (1, 2, 4, 8)),
    *((4, d) for d in (8, 16)),
    *((6, d) for d in (8, 16)),
]


def images(
    colour: int, depth: int, *, interlace: bool, n: int = 4, size: tuple[int, int] = (9, 7)
) -> Iterator[bytes]:
    rng = np.random.default_rng(colour * 100 + depth)
    top = min(2**depth, 16) if colour == 3 else 2**depth
    for _ in range(n):
        pixels = rng.integers(0, top, (*size, CHANNELS[colour]))
        yield png(pixels, colour, depth, interlace=interlace, palette=PALETTE if colour == 3 else b"")


def write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, blob in members.items():
            archive.writestr(name, blob)
    return path


@pytest.mark.parametrize("interlace", [False, True], ids=["plain", "interlaced"])
@pytest.mark.parametrize(("colour", "depth"), KINDS, ids=[f"type{c}-{d}bit" for c, d in KINDS])
def test_it_decodes_png_as_pillow(tmp_path: Path, colour: int, depth: int, interlace: bool) -> None:
    members = {
        f"top/{label}/{i}.png": blob
        for label in ("b", "a")
        for i, blob in enumerate(images(colour, depth, interlace=interlace))
    }
    same(write_zip(tmp_path / "images.zip", members))


def test_it_turns_grey_images_to_colour_beside_colour_ones(tmp_path: Path) -> None:
    grey = next(images(0, 8, interlace=False))
    rgb = next(images(2, 8, interlace=False))
    same(write_zip(tmp_path / "mixed.zip", {"x/1.png": grey, "y/2.png": rgb, "x/3.png": grey}))


def test_it_reads_jpeg_through_pillow(tmp_path: Path) -> None:
    members = {}
    for i, mode in enumerate(("L", "RGB", "L")):
        buffer = io.BytesIO()
        Image.new(mode, (8, 6), color=40 * i if mode == "L" else (10, 200, 30)).save(buffer, format="JPEG")
        members[f"class{i % 2}/{i}.jpg"] = buffer.getvalue()
    same(write_zip(tmp_path / "photos.zip", members))


# --- the split and the scaling ----------------------------------------------------------------------------


@pytest.fixture
def digits_train(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """train.py of the digits CNN as a module (its data functions and CONFIG)."""
    rec = recommend({**samples.DEMOS["digits"]["spec"], "hardware": {"cpu_cores": 2, "ram_gb": 8}})
    for name, text in export.files(export.Download(rec, 0)).items():
        (tmp_path / name).write_text(text)
    sys.path.insert(0, str(tmp_path))
    sys.modules.pop("model", None)
    try:
        yield runpy.run_path(str(tmp_path / "train.py"), run_name="downloaded")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("model", None)


def test_it_splits_and_scales_as_the_probe(digits_train: dict[str, Any], tmp_path: Path) -> None:
    sample = samples.demo("digits")
    probe_split = splits.split(sample, goal="classify", seed=3)
    np.savez(tmp_path / "digits.npz", x=sample.x, y=sample.y)
    ours = digits_train["load_sample"](tmp_path / "digits.npz", "")
    parts = {part: np.array(ix) for part, ix in probe_split.indices.items()}
    prepared = digits_train["prepare"](ours, parts, digits_train["CONFIG"], torch.device("cpu"))
    for part, x, y in (("train", probe_split.x_train, probe_split.y_train),
                       ("validation", probe_split.x_val, probe_split.y_val),
                       ("test", probe_split.x_test, probe_split.y_test)):  # fmt: skip
        assert torch.equal(prepared.x[part].reshape(len(x), -1), torch.from_numpy(x))
        np.testing.assert_array_equal(prepared.truth[part], y)


def test_it_splits_on_its_own_by_class_without_a_probe(digits_train: dict[str, Any]) -> None:
    classes = np.repeat(np.arange(3), [3, 10, 50])
    split = digits_train["make_split"](classes, len(classes), digits_train["CONFIG"])
    together = np.concatenate(list(split.values()))
    assert sorted(together) == list(range(len(classes)))
    for part in ("train", "validation", "test"):
        assert set(classes[split[part]]) == {0, 1, 2}


def test_it_splits_and_caps_epochs_by_the_probes_numbers() -> None:
    """(Early stopping is the probe's own piece, advisor/export/pieces/stopping.py.)"""
    from advisor.probe.learning import train

    assert (training.VALIDATION_SHARE, training.TEST_SHARE) == (splits.VALIDATION_SHARE, splits.TEST_SHARE)
    assert training.MAX_EPOCHS == train.MAX_EPOCHS
