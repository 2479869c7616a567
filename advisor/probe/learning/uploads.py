"""Parsing an uploaded file into a Sample: CSV (a header row, feature columns and a label column, or none),
NPZ (arrays `x` and `y`, or `x` alone), NPY (one array: x, no labels) or a ZIP of PNG/JPEG images in one
folder per class (or with no folders, or all in one: unlabelled images, for a generation task).

Everything is read and checked in memory; nothing is written here, so a refused upload leaves nothing behind.
"""

from __future__ import annotations

import csv
import io
import lzma
import math
import struct
import zipfile
import zlib
from pathlib import PurePosixPath

import numpy as np
from PIL import Image

from advisor.engine.units import nbytes
from advisor.probe.learning.samples import Limits, Sample, SampleError, check_arrays, from_labels, refuse

FORMATS = {".csv": "csv", ".npz": "npz", ".npy": "npy", ".zip": "zip"}
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
MAX_PROBLEMS = 5  # a message lists at most this many bad cells
MAX_IMAGE_PIXELS = 4096 * 4096
ZIP_EXPANSION = 8  # an archive may expand to this many times the byte limit (decompression bombs)
IGNORED_ZIP_PARTS = ("__MACOSX",)


def detect_format(filename: str, head: bytes) -> str:
    suffix = PurePosixPath(filename.lower()).suffix
    fmt = FORMATS.get(suffix)
    if fmt is None:
        raise refuse(
            f"{filename!r}: unknown file type; send .csv, .npz, .npy or .zip (images in class folders)"
        )
    if fmt in ("npz", "zip") and not head.startswith(b"PK"):
        raise refuse(f"{filename!r} is not a ZIP archive (an .{fmt} file starts with 'PK')")
    if fmt == "npy" and not head.startswith(b"\x93NUMPY"):
        raise refuse(f"{filename!r} is not a NumPy .npy file")
    return fmt


def parse_upload(
    filename: str, data: bytes, *, label_column: str = "", limits: Limits | None = None
) -> Sample:
    limits = limits or Limits()
    if not data:
        raise refuse("the file is empty")
    if len(data) > limits.max_bytes:
        raise refuse(too_big(len(data), limits.max_bytes))
    fmt = detect_format(filename, data[:8])
    parser = {"csv": parse_csv, "npz": parse_npz, "npy": parse_npy, "zip": parse_zip}[fmt]
    sample = parser(data, label_column=label_column, limits=limits)
    check_arrays(sample, limits)
    return sample


def too_big(size: int, limit: int) -> str:
    return f"the file is {nbytes(size)}; the limit is {nbytes(limit)} (SAMPLE_MAX_BYTES)"


def parse_csv(data: bytes, *, label_column: str, limits: Limits) -> Sample:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise refuse(f"not UTF-8 text (byte {exc.start}); save the CSV as UTF-8") from None
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise refuse(f"not a readable CSV file: {exc}") from None
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        raise refuse("the CSV file has no rows")
    header = [h.strip() for h in rows[0]]
    if len(set(header)) != len(header) or not all(header):
        raise refuse("the first row must name every column once (a header row)")
    if len(rows) < 2:
        raise refuse("the CSV file has a header but no examples")
    if len(rows) - 1 > limits.max_examples:
        raise refuse(f"{len(rows) - 1:,} rows; the limit is {limits.max_examples:,} (SAMPLE_MAX_EXAMPLES)")
    label = label_column.strip()
    if label and label not in header:
        raise refuse(f"no column {label!r}; the columns are: {', '.join(header)}", "label_column")
    ragged = [f"row {i + 1} has {len(r)} cells" for i, r in enumerate(rows[1:], 1) if len(r) != len(header)]
    if ragged:
        raise refuse(
            f"ragged rows: {'; '.join(ragged[:MAX_PROBLEMS])} (the header has {len(header)} columns)"
        )
    features = [j for j, h in enumerate(header) if h != label]
    if not features:
        raise refuse("no feature columns besides the label column", "label_column")
    x = np.empty((len(rows) - 1, len(features)), dtype=np.float32)
    problems: list[str] = []
    for i, row in enumerate(rows[1:]):
        for k, j in enumerate(features):
            cell = row[j].strip()
            value = _number(cell)
            if value is None:
                what = "an empty cell" if not cell else f"{cell[:40]!r} is not a finite number"
                problems.append(f"row {i + 2}, column {header[j]!r}: {what}")
                if len(problems) >= MAX_PROBLEMS:
                    break
            else:
                x[i, k] = value
        if len(problems) >= MAX_PROBLEMS:
            break
    if problems:
        raise refuse("non-numeric feature cells: " + "; ".join(problems))
    if not label:
        return from_labels(x, None)
    j = header.index(label)
    raw = [row[j].strip() for row in rows[1:]]
    empty = [str(i + 2) for i, cell in enumerate(raw) if not cell]
    if empty:
        raise refuse(f"empty label cells in rows {', '.join(empty[:MAX_PROBLEMS])}", "label_column")
    numbers = [_number(cell) for cell in raw]
    labels = np.array(numbers, dtype=np.float64) if all(n is not None for n in numbers) else np.array(raw)
    return from_labels(x, labels)


def _number(cell: str) -> float | None:
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if np.isfinite(value) else None


def _check_declared_size(blob: bytes, what: str) -> None:
    """Refuse a header that declares more data than the file holds before numpy allocates for it: a 100-byte
    file may declare 10**13 values, and np.load sizes its buffer from the header."""
    stream = io.BytesIO(blob)
    try:
        version = np.lib.format.read_magic(stream)
        read_header = (
            np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        )
        shape, _, dtype = read_header(stream)
    except Exception as exc:  # numpy raises many kinds of error for a corrupt header
        raise refuse(f"{what} is not a readable NumPy array: {exc}") from None
    declared = math.prod(int(n) for n in shape) * dtype.itemsize
    held = len(blob) - stream.tell()
    if not dtype.hasobject and declared > held:
        raise refuse(
            f"{what} declares shape {list(shape)} of {dtype} ({declared:,} bytes) but holds {held:,} bytes"
        )


def _load_npy(blob: bytes, what: str) -> np.ndarray:
    _check_declared_size(blob, what)
    try:
        array = np.load(io.BytesIO(blob), allow_pickle=False)
    except ValueError as exc:
        raise refuse(
            f"{what} cannot be read without unpickling Python objects, which is refused ({exc})"
        ) from None
    except Exception as exc:  # numpy raises many kinds of error for a corrupt header
        raise refuse(f"{what} is not a readable NumPy array: {exc}") from None
    if not isinstance(array, np.ndarray):
        raise refuse(f"{what} is not an array")
    return array


def parse_npy(data: bytes, *, label_column: str, limits: Limits) -> Sample:
    x = _load_npy(data, "the .npy file")
    if x.dtype.kind not in "biuf":
        raise refuse(
            f"x must be numbers; got dtype {x.dtype} (a .npy file holds x only; send .npz for x and y)"
        )
    return from_labels(x, None)


def parse_npz(data: bytes, *, label_column: str, limits: Limits) -> Sample:
    archive = _open_zip(data, ".npz archive")
    with archive:
        names = {PurePosixPath(n).stem: n for n in archive.namelist() if n.endswith(".npy")}
        if "x" not in names:
            raise refuse(f"the .npz file has no array 'x' (it has: {', '.join(sorted(names)) or 'none'})")
        _check_expansion(archive, limits)
        x = _load_npy(_read_member(archive, names["x"]), "array 'x'")
        y = _load_npy(_read_member(archive, names["y"]), "array 'y'") if "y" in names else None
    if x.dtype.kind not in "biuf":
        raise refuse(f"x must be numbers; got dtype {x.dtype}")
    if x.ndim >= 1 and x.shape[0] > limits.max_examples:
        raise refuse(f"{x.shape[0]:,} examples; the limit is {limits.max_examples:,} (SAMPLE_MAX_EXAMPLES)")
    return from_labels(x, y)


def _open_zip(data: bytes, what: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    # zipfile raises more than BadZipFile for a corrupt directory: NotImplementedError for an unknown version
    except (zipfile.BadZipFile, NotImplementedError, EOFError, OSError, ValueError, struct.error) as exc:
        raise refuse(f"not a readable {what}: {exc}") from None


def _read_member(archive: zipfile.ZipFile, member: str | zipfile.ZipInfo) -> bytes:
    """A member's bytes. zipfile stops at the size the header declares, so a lying header cannot expand past
    the checked total; a corrupt, encrypted or exotic member is refused with the reason."""
    name = member.filename if isinstance(member, zipfile.ZipInfo) else member
    try:
        return archive.read(member)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError) as exc:
        raise refuse(f"archive member {name!r} is not readable: {exc}") from None
    except (ValueError, LookupError, lzma.LZMAError) as exc:  # lzma and bz2 raise these for corrupt streams
        raise refuse(f"archive member {name!r} is not readable: {exc}") from None


def _check_expansion(archive: zipfile.ZipFile, limits: Limits) -> None:
    expanded = sum(info.file_size for info in archive.infolist())
    if expanded > ZIP_EXPANSION * limits.max_bytes:
        raise refuse(f"the archive expands to {nbytes(expanded)}, too much for a sample")


def safe_member(name: str) -> list[str]:
    """The parts of an archive member's path; refuses paths that could escape the folder they unpack into."""
    if "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise refuse(f"archive member {name!r} has an absolute or Windows path; refused")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise refuse(f"archive member {name!r} points outside its folder ('..'); refused")
    return parts


def parse_zip(data: bytes, *, label_column: str, limits: Limits) -> Sample:
    archive = _open_zip(data, "ZIP archive")
    with archive:
        _check_expansion(archive, limits)
        members = []
        for info in archive.infolist():
            parts = safe_member(info.filename)
            if info.is_dir() or not parts or parts[0] in IGNORED_ZIP_PARTS or parts[-1].startswith("."):
                continue
            members.append((parts, info))
        if not members:
            raise refuse("the archive holds no files")
        roots = {parts[0] for parts, _ in members}
        flat = all(len(p) == 1 for p, _ in members)  # images in no folder: unlabelled
        strip = 1 if len(roots) == 1 and all(len(p) == 3 for p, _ in members) else 0
        if len(members) > limits.max_examples:
            raise refuse(
                f"{len(members):,} images; the limit is {limits.max_examples:,} (SAMPLE_MAX_EXAMPLES)"
            )
        images, labels = [], []
        for parts, info in members:
            rel = ["", *parts] if flat else parts[strip:]
            if len(rel) != 2:
                raise refuse(f"{info.filename!r}: images must lie in one folder per class, e.g. cat/001.png")
            if not rel[1].lower().endswith(IMAGE_SUFFIXES):
                raise refuse(f"{info.filename!r} is not a PNG or JPEG image")
            try:
                with Image.open(io.BytesIO(_read_member(archive, info))) as img:
                    if img.width * img.height > MAX_IMAGE_PIXELS:
                        raise refuse(
                            f"{info.filename!r} is {img.width}x{img.height} pixels, too large for a sample"
                        )
                    grey = img.mode in ("1", "L", "LA", "I", "I;16", "F")
                    images.append((info.filename, img.convert("L" if grey else "RGB")))
            except SampleError:
                raise
            except Exception as exc:  # Pillow raises many kinds of error for a corrupt image
                raise refuse(f"{info.filename!r} is not a readable image: {exc}") from None
            labels.append(rel[0])
    return _stack_images(images, labels)


def _stack_images(images: list[tuple[str, Image.Image]], labels: list[str]) -> Sample:
    pictures = [img for _, img in images]
    colour = any(p.mode == "RGB" for p in pictures)
    size = pictures[0].size
    for (name, _), p in zip(images, pictures, strict=True):
        if p.size != size:
            raise refuse(
                f"{name!r} is {p.size[0]}x{p.size[1]} pixels; the first image is {size[0]}x{size[1]}"
            )
    arrays = [np.asarray(p.convert("RGB") if colour else p, dtype=np.float32) / 255.0 for p in pictures]
    x = np.stack(arrays)  # [n, H, W] grey or [n, H, W, 3] colour
    x = x[:, None, :, :] if x.ndim == 3 else x.transpose(0, 3, 1, 2)  # [n, C, H, W]
    # one folder (or none) names no classes: the images are an unlabelled sample, which a generation task
    # takes and a classification task refuses when it checks the sample (split.check_fit)
    return from_labels(x, np.array(labels) if len(set(labels)) > 1 else None)
