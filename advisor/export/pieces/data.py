"""Reading a data file as the probe reads an upload; splitting and scaling it.

Formats: a CSV file (a header row; the label column named by --label-column), an NPZ
file (arrays x and y), an NPY file (x only) or a ZIP of PNG/JPEG images in one folder
per class. Class labels become indices in sorted order of their names, as the probe
numbers them, so that a probe's split (split.json) picks the same examples.

A piece of the code a user downloads (advisor/export/training.py); plain numpy, csv,
zipfile and zlib, no advisor import. JPEG images need Pillow; PNG images need nothing.
"""

from __future__ import annotations

import csv
import io
import json
import math
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from advisor.export.pieces.setup import Config


class DataError(ValueError):
    """A data file this script cannot use; the message says why."""


@dataclass
class Sample:
    x: np.ndarray  # [n, *example_shape] float32
    y: np.ndarray | None  # [n] class indices, [n] or [n, k] values, or None
    label_kind: str  # "class", "value" or "none"
    classes: list[str]  # class index -> its name


def load_sample(path: Path, label_column: str) -> Sample:
    """A CSV, NPZ, NPY or image-ZIP file as one Sample."""
    suffix = path.suffix.lower()
    data = path.read_bytes()
    if suffix == ".csv":
        return read_csv(data, label_column)
    if suffix == ".npz":
        with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            if "x" not in arrays.files:
                raise DataError(f"{path.name} has no array 'x'")
            y = arrays["y"] if "y" in arrays.files else None
            return labelled(arrays["x"], y)
    if suffix == ".npy":
        return labelled(np.load(io.BytesIO(data), allow_pickle=False), None)
    if suffix == ".zip":
        return read_image_zip(data)
    raise DataError(f"{path.name}: send a .csv, .npz, .npy or .zip (images) file")


def labelled(x: np.ndarray, raw: np.ndarray | None) -> Sample:
    """One column of names or whole numbers is classes; real numbers are values."""
    if x.dtype.kind not in "biuf":
        raise DataError(f"x must hold numbers, not {x.dtype}")
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim < 2:
        raise DataError(f"x must hold one example per row; got shape {list(x.shape)}")
    if not np.isfinite(x).all():
        raise DataError("x holds NaN or infinite values")
    if raw is None:
        return Sample(x, None, "none", [])
    if raw.shape[0] != x.shape[0]:
        raise DataError(f"{x.shape[0]} examples but {raw.shape[0]} labels")
    whole = raw.dtype.kind in "biu" or (
        raw.dtype.kind == "f"
        and np.isfinite(raw).all()
        and (raw == np.round(raw)).all()
    )
    if raw.ndim == 1 and raw.dtype.kind in "US":
        names, index = np.unique(raw.astype(str), return_inverse=True)
        return Sample(x, index.astype(np.int64), "class", [str(n) for n in names])
    if raw.ndim == 1 and whole:
        values, index = np.unique(raw.astype(np.float64), return_inverse=True)
        return Sample(x, index.astype(np.int64), "class", [str(int(v)) for v in values])
    if raw.dtype.kind not in "biuf":
        raise DataError(
            f"labels must be one name or number per example, not {raw.dtype}"
        )
    return Sample(x, np.ascontiguousarray(raw, dtype=np.float32), "value", [])


def read_csv(data: bytes, label_column: str) -> Sample:
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if len(rows) < 2:
        raise DataError("the CSV file needs a header row and at least one example")
    header = [name.strip() for name in rows[0]]
    label = label_column.strip()
    if label and label not in header:
        raise DataError(f"no column {label!r}; the columns are: {', '.join(header)}")
    features = [j for j, name in enumerate(header) if name != label]
    x = np.empty((len(rows) - 1, len(features)), dtype=np.float32)
    for i, row in enumerate(rows[1:]):
        if len(row) != len(header):
            raise DataError(
                f"row {i + 2} has {len(row)} cells, the header {len(header)}"
            )
        for k, j in enumerate(features):
            value = number(row[j])
            if value is None:
                raise DataError(f"row {i + 2}, column {header[j]!r}: {row[j]!r}")
            x[i, k] = value
    if not label:
        return labelled(x, None)
    cells = [row[header.index(label)].strip() for row in rows[1:]]
    numbers = [number(cell) for cell in cells]
    if all(n is not None for n in numbers):
        return labelled(x, np.array(numbers, dtype=np.float64))
    return labelled(x, np.array(cells))


def number(cell: str) -> float | None:
    try:
        value = float(cell.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def read_image_zip(data: bytes) -> Sample:
    """Images in one folder per class (one common top folder allowed), in order."""
    members = []
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            parts = [p for p in info.filename.split("/") if p not in ("", ".")]
            if ".." in parts or info.filename.startswith("/") or "\\" in info.filename:
                raise DataError(f"{info.filename!r} points outside its folder")
            skip = not parts or parts[0] == "__MACOSX" or parts[-1].startswith(".")
            if not (info.is_dir() or skip):
                members.append((parts, info))
        roots = {parts[0] for parts, _ in members}
        strip = 1 if len(roots) == 1 and all(len(p) == 3 for p, _ in members) else 0
        images, labels = [], []
        for parts, info in members:
            where = parts[strip:]
            if len(where) != 2 or not where[1].lower().endswith(IMAGE_SUFFIXES):
                raise DataError(
                    f"{info.filename!r}: PNG/JPEG images go in class folders"
                )
            blob = archive.read(info)
            pixels = read_png(blob) if blob[:8] == PNG_SIGNATURE else read_jpeg(blob)
            images.append(pixels)
            labels.append(where[0])
    if not images:
        raise DataError("the archive holds no images")
    colour = any(p.ndim == 3 for p in images)
    if colour:  # every image in colour when one is: a grey level on all three channels
        images = [
            p if p.ndim == 3 else np.repeat(p[:, :, None], 3, axis=2) for p in images
        ]
    if len({p.shape for p in images}) > 1:
        raise DataError("the images differ in size")
    x = np.stack(images).astype(np.float32) / 255.0  # [n, H, W] or [n, H, W, 3]
    x = x[:, None, :, :] if x.ndim == 3 else x.transpose(0, 3, 1, 2)  # [n, C, H, W]
    return labelled(x, np.array(labels))


def read_jpeg(blob: bytes) -> np.ndarray:
    try:
        from PIL import Image
    except ImportError:
        raise DataError("JPEG images need Pillow (pip install pillow)") from None
    with Image.open(io.BytesIO(blob)) as img:
        grey = img.mode in ("1", "L", "LA", "I", "I;16", "F")
        return np.asarray(img.convert("L" if grey else "RGB"), dtype=np.uint8)


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # by PNG colour type
# (x0, y0, dx, dy) of each pass of an interlaced image
ADAM7 = (
    (0, 0, 8, 8),
    (4, 0, 8, 8),
    (0, 4, 4, 8),
    (2, 0, 4, 4),
    (0, 2, 2, 4),
    (1, 0, 2, 2),
    (0, 1, 1, 2),
)


def read_png(blob: bytes) -> np.ndarray:
    """A PNG image as 8-bit levels, as Pillow gives it: [H, W] grey (colour types 0, 4)
    or [H, W, 3] colour, the alpha channel dropped, 16-bit samples cut to 8 bits."""
    chunks: dict[bytes, bytes] = {}
    at = len(PNG_SIGNATURE)
    while at + 8 <= len(blob):
        size, kind = struct.unpack(">I4s", blob[at : at + 8])
        body = blob[at + 8 : at + 8 + size]
        chunks[kind] = chunks.get(kind, b"") + body if kind == b"IDAT" else body
        at += 12 + size
    width, height, depth, colour, _, _, interlace = struct.unpack(
        ">IIBBBBB", chunks[b"IHDR"]
    )
    raw = zlib.decompress(chunks[b"IDAT"])
    channels = CHANNELS[colour]
    samples = np.zeros((height, width, channels), dtype=np.int64)
    offset = 0
    for x0, y0, dx, dy in ADAM7 if interlace else ((0, 0, 1, 1),):
        w, h = -(-(width - x0) // dx), -(-(height - y0) // dy)
        if w <= 0 or h <= 0:
            continue
        stride = -(-(w * channels * depth) // 8)
        rows = unfilter(
            raw[offset : offset + h * (stride + 1)], stride, channels, depth
        )
        offset += h * (stride + 1)
        samples[y0::dy, x0::dx] = unpack(rows, w, channels, depth)
    if colour == 3:  # palette indices
        palette = np.frombuffer(chunks[b"PLTE"], dtype=np.uint8).reshape(-1, 3)
        palette = np.concatenate([palette, np.zeros((256, 3), dtype=np.uint8)])
        return palette[samples[:, :, 0]]
    if depth == 16:
        levels = samples >> 8 if colour != 0 else np.minimum(samples, 255)
    else:
        levels = samples * (255 // (2**depth - 1))  # 1, 2 or 4 bits spread over 0..255
    levels = levels.astype(np.uint8)
    if colour == 4 and depth == 16:  # Pillow opens 16-bit grey with alpha as colour
        return np.repeat(levels[:, :, :1], 3, axis=2)
    return levels[:, :, 0] if colour in (0, 4) else levels[:, :, :3]


def unfilter(data: bytes, stride: int, channels: int, depth: int) -> list[bytearray]:
    """Undo PNG's per-row filters (none, sub, up, average, Paeth)."""
    step = max(1, channels * depth // 8)  # bytes per whole pixel, at least one
    prior = bytearray(stride)
    rows = []
    for start in range(0, len(data), stride + 1):
        kind, row = data[start], bytearray(data[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = row[i - step] if i >= step else 0
            up = prior[i]
            if kind == 1:
                row[i] = (row[i] + left) & 255
            elif kind == 2:
                row[i] = (row[i] + up) & 255
            elif kind == 3:
                row[i] = (row[i] + ((left + up) >> 1)) & 255
            elif kind == 4:
                corner = prior[i - step] if i >= step else 0
                guess = left + up - corner
                near = min(
                    (abs(guess - left), 0, left),
                    (abs(guess - up), 1, up),
                    (abs(guess - corner), 2, corner),
                )
                row[i] = (row[i] + near[2]) & 255
        rows.append(row)
        prior = row
    return rows


def unpack(rows: list[bytearray], width: int, channels: int, depth: int) -> np.ndarray:
    """Rows of bytes as samples [h, width, channels]."""
    data = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), -1)
    if depth == 16:
        values = data.reshape(len(rows), -1, 2).astype(np.int64)
        samples = values[:, :, 0] * 256 + values[:, :, 1]
    elif depth == 8:
        samples = data.astype(np.int64)
    else:
        bits = np.unpackbits(data, axis=1).reshape(len(rows), -1, depth)
        samples = (bits * (1 << np.arange(depth - 1, -1, -1))).sum(axis=2)
    return samples[:, : width * channels].reshape(len(rows), width, channels)


# --- the split and the scaling ----------------------------------------------------


def read_split(path: Path, examples: int) -> dict[str, np.ndarray]:
    """A probe's split (split.json): the examples of each part, by index."""
    split = json.loads(path.read_text())
    if split["examples"] != examples:
        raise DataError(
            f"{path.name} splits {split['examples']} examples; the data has {examples}"
        )
    return {part: np.array(split[part], dtype=np.int64) for part in PARTS}


PARTS = ("train", "validation", "test")


def make_split(
    classes: np.ndarray | None, examples: int, config: Config
) -> dict[str, np.ndarray]:
    """A random split (stratified by class: each class in each part) of the examples."""
    rng = np.random.default_rng(config.seed)
    groups = [np.arange(examples)] if classes is None else []
    if classes is not None:
        groups = [np.flatnonzero(classes == c) for c in np.unique(classes)]
    parts: dict[str, list[np.ndarray]] = {part: [] for part in PARTS}
    for group in groups:
        order = rng.permutation(group)
        keep = 1 if classes is not None else 0
        test = max(keep, round(len(order) * config.test_share))
        val = max(keep, round(len(order) * config.validation_share))
        parts["test"].append(order[:test])
        parts["validation"].append(order[test : test + val])
        parts["train"].append(order[test + val :])
    return {part: rng.permutation(np.concatenate(ix)) for part, ix in parts.items()}


@dataclass
class Data:
    """The split as tensors in the network's input shape; `y` is None where the target
    is the input itself or there is none."""

    x: dict[str, torch.Tensor]
    y: dict[str, torch.Tensor | None]
    truth: dict[str, np.ndarray]  # what the scores compare outputs with, per part


def prepare(
    sample: Sample, split: dict[str, np.ndarray], config: Config, device: torch.device
) -> Data:
    n = sample.x.shape[0]
    flat = sample.x.reshape(n, -1)
    if flat.shape[1] != math.prod(config.input_shape):
        raise DataError(
            f"the network takes examples of shape {list(config.input_shape)}; "
            f"the data's have {flat.shape[1]} values"
        )
    train = flat[split["train"]]
    mean, std = train.mean(axis=0), train.std(axis=0)
    std[std < 1e-6] = 1.0  # a constant feature (a blank border pixel) stays zero
    if config.inputs == "ids":
        mean, std = np.zeros_like(mean), np.ones_like(std)  # token ids stay whole
    scaled = {
        part: ((flat[ix] - mean) / std).astype(np.float32) for part, ix in split.items()
    }
    if config.inputs in ("unit", "symmetric"):  # the output layer's range
        low, high = scaled["train"].min(axis=0), scaled["train"].max(axis=0)
        span = np.where(high - low > 1e-6, high - low, 1.0)
        for part, x in scaled.items():
            x = np.clip((x - low) / span, 0.0, 1.0).astype(np.float32)
            scaled[part] = x * 2 - 1 if config.inputs == "symmetric" else x
    data = Data({}, {}, {})
    for part, ix in split.items():
        x = torch.from_numpy(scaled[part]).reshape(len(ix), *config.input_shape)
        y = targets(sample, ix, config)
        if config.next_step and y is None:  # the next step of each sequence
            y = x[:, -1] if config.target == "value" else x[:, 1:]
            x = x[:, :-1]
        if config.inputs == "ids":
            x = x.round().long()
        data.x[part] = x.to(device)
        data.y[part] = None if y is None else y.to(device)
        truth = scaled[part] if config.target in ("input", "none") else y
        data.truth[part] = np.asarray(truth) if truth is not None else np.zeros(0)
    return data


def targets(sample: Sample, ix: np.ndarray, config: Config) -> torch.Tensor | None:
    """The labels the network learns, or None for the input itself or no target."""
    if config.target in ("input", "none") or sample.y is None:
        if (
            config.target in ("class", "value", "class_per_step")
            and not config.next_step
        ):
            raise DataError(
                f"this network learns a {config.target} target: give labels"
            )
        return None
    if config.target == "class":
        if sample.label_kind != "class":
            raise DataError("this network learns classes: give names or whole numbers")
        return torch.from_numpy(sample.y[ix]).long()
    values = sample.y.astype(np.float32)
    if sample.label_kind == "class":  # numbers read as class names: back to numbers
        values = np.array([float(c) for c in sample.classes], dtype=np.float32)[
            sample.y
        ]
    y = torch.from_numpy(values[ix].reshape(len(ix), -1))
    return y.round().long() if config.target == "class_per_step" else y
