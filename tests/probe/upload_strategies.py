"""Hypothesis strategies for uploaded samples: well-formed files, their mutations and hostile ones (zip bombs,
huge declared dimensions, pickles, path tricks), per format. Used by the parser fuzz test."""

from __future__ import annotations

import functools
import io
import struct
import zipfile
from typing import Any

import numpy as np
from hypothesis import strategies as st
from PIL import Image

CELLS = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", " ", "nan", "inf", "-inf", "1e999", "0x10", "1_000", '"', '""', "a,b", "\x00", "é"]),
    st.text(max_size=12),
)


@st.composite
def csv_files(draw: Any) -> tuple[str, bytes, str]:
    columns = draw(st.integers(1, 6))
    header = draw(st.lists(st.text(max_size=6), min_size=columns, max_size=columns))
    rows = draw(st.lists(st.lists(CELLS, min_size=0, max_size=columns + 1), max_size=30))
    sep = draw(st.sampled_from([",", ";", "\t"]))
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = end.join(sep.join(r) for r in [header, *rows])
    data = text.encode(draw(st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16"])), "replace")
    data = draw(mutated(data))
    label = draw(st.one_of(st.just(""), st.sampled_from(header), st.text(max_size=4)))
    return "sample.csv", data, label


@st.composite
def mutated(draw: Any, data: bytes) -> bytes:
    """The bytes as they are, or with a few bytes flipped, cut short or with junk appended."""
    how = draw(st.sampled_from(["keep", "keep", "flip", "cut", "append"]))
    if how == "flip" and data:
        buf = bytearray(data)
        for _ in range(draw(st.integers(1, 8))):
            buf[draw(st.integers(0, len(buf) - 1))] = draw(st.integers(0, 255))
        return bytes(buf)
    if how == "cut" and data:
        return data[: draw(st.integers(0, len(data) - 1))]
    if how == "append":
        return data + draw(st.binary(max_size=64))
    return data


DTYPES = ["<f4", "<f8", "<i8", "|u1", "|b1", "<f2", "<c8", "|O", "<U3", "|S2", "<M8[s]", "|V4", "<i4"]


@st.composite
def npy_bytes(draw: Any) -> bytes:
    """A .npy file: real arrays, or a hand-written header declaring any dtype and shape (up to 10**15 values,
    object arrays) over too little data."""
    if draw(st.booleans()):
        shape = draw(st.lists(st.integers(0, 6), min_size=0, max_size=4))
        dtype = draw(st.sampled_from(["<f4", "<f8", "<i8", "|u1", "|b1", "<U3"]))
        values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
        if draw(st.booleans()):
            values = values * draw(st.sampled_from([np.nan, np.inf, 1e300, -1.0]))
        buf = io.BytesIO()
        with np.errstate(all="ignore"):
            np.save(buf, values.astype(dtype), allow_pickle=False)
        return draw(mutated(buf.getvalue()))
    shape = tuple(draw(st.lists(st.integers(0, 10**15), min_size=0, max_size=5)))
    descr, order = draw(st.sampled_from(DTYPES)), draw(st.sampled_from(["False", "True"]))
    header = f"{{'descr': {descr!r}, 'fortran_order': {order}, 'shape': {shape!r}, }}"
    header += " " * ((64 - (len(header) + 11) % 64) % 64) + "\n"
    version = draw(st.sampled_from([(1, 0), (2, 0), (3, 0)]))
    size = struct.pack("<H", len(header)) if version == (1, 0) else struct.pack("<I", len(header))
    raw = b"\x93NUMPY" + bytes(version) + size + header.encode("latin-1") + draw(st.binary(max_size=256))
    return draw(mutated(raw))


def _zip(members: list[tuple[str, bytes]], method: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buf.getvalue()


@functools.cache  # the same few bombs over and over: compressing 200 MB each time would be most of a run
def zip_bomb(expanded: int, name: str = "x.npy") -> bytes:
    """One member of `expanded` zero bytes, deflated to about a thousandth of that."""
    return _zip([(name, b"\x00" * expanded)], zipfile.ZIP_DEFLATED)


def lying_zip(data: bytes, name: str, declared: int) -> bytes:
    """A ZIP whose headers declare `declared` bytes for a member that expands to len(data)."""
    raw = bytearray(_zip([(name, data)], zipfile.ZIP_DEFLATED))
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = raw.find(signature)
        if at >= 0:
            raw[at + offset : at + offset + 4] = struct.pack("<I", declared)
    return bytes(raw)


METHODS = [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]


@st.composite
def npz_files(draw: Any) -> tuple[str, bytes, str]:
    kind = draw(st.sampled_from(["arrays", "arrays", "bomb", "liar", "junk"]))
    if kind == "bomb":
        data = zip_bomb(draw(st.sampled_from([2**20, 50 * 2**20, 200 * 2**20])))
    elif kind == "liar":
        data = lying_zip(b"\x00" * draw(st.integers(1, 2**20)), "x.npy", draw(st.integers(0, 2**32 - 1)))
    elif kind == "junk":
        data = b"PK" + draw(st.binary(max_size=300))
    else:
        names = draw(st.lists(st.sampled_from(["x.npy", "y.npy", "z.npy", "x", "dir/x.npy"]), max_size=3))
        data = _zip([(n, draw(npy_bytes())) for n in names], draw(st.sampled_from(METHODS)))
    return "sample.npz", draw(mutated(data)), ""


MODES = {"PNG": ["1", "L", "LA", "P", "RGB", "RGBA", "I;16"], "JPEG": ["L", "RGB", "CMYK"],
         "GIF": ["1", "L", "P", "RGB"]}  # fmt: skip


@st.composite
def image_bytes(draw: Any) -> tuple[str, bytes]:
    fmt = draw(st.sampled_from(["PNG", "JPEG", "GIF", "junk"]))
    if fmt == "junk":
        return draw(st.sampled_from(["a.png", "a.jpg"])), draw(st.binary(max_size=200))
    mode = draw(st.sampled_from(MODES[fmt]))
    size = (draw(st.integers(1, 24)), draw(st.integers(1, 24)))
    image = Image.new(
        mode, size, color=draw(st.integers(0, 255)) if mode not in ("RGB", "RGBA", "CMYK") else None
    )
    buf = io.BytesIO()
    image.save(buf, format=fmt)
    suffix = {"PNG": ".png", "JPEG": ".jpg", "GIF": ".png"}[fmt]
    return "img" + suffix, draw(mutated(buf.getvalue()))


def huge_png(width: int, height: int) -> bytes:
    """A PNG declaring width x height pixels whose data is a few bytes (a pixel-flood bomb)."""
    buf = io.BytesIO()
    Image.new("1", (width, height)).save(buf, format="PNG", optimize=True)
    return buf.getvalue()


@st.composite
def image_zips(draw: Any) -> tuple[str, bytes, str]:
    kind = draw(st.sampled_from(["valid", "images", "images", "bomb", "flood"]))
    if kind == "valid":  # two classes of same-sized images, so that the accepting path is fuzzed too
        side, mode = draw(st.integers(1, 16)), draw(st.sampled_from(["L", "RGB"]))
        members = []
        for label in draw(
            st.lists(st.sampled_from(["cat", "dog", "eel"]), min_size=2, max_size=3, unique=True)
        ):
            for j in range(draw(st.integers(1, 3))):
                buf = io.BytesIO()
                Image.new(mode, (side, side), color=draw(st.integers(0, 255)) if mode == "L" else None).save(
                    buf, format="PNG"
                )
                members.append((f"{label}/{j}.png", buf.getvalue()))
        return "images.zip", _zip(members, draw(st.sampled_from(METHODS))), ""
    if kind == "bomb":
        return "images.zip", zip_bomb(200 * 2**20, "cat/a.png"), ""
    if kind == "flood":
        side = draw(st.sampled_from([5000, 20000]))
        return "images.zip", _zip([("cat/a.png", huge_png(side, side)), ("dog/b.png", huge_png(2, 2))], 8), ""
    folders = draw(st.lists(st.sampled_from(["cat", "dog", "root/cat", "root/dog", "", "__MACOSX", ".."]),
                            min_size=1, max_size=4))  # fmt: skip
    members = []
    for i, folder in enumerate(folders):
        for j in range(draw(st.integers(1, 3))):
            name, data = draw(image_bytes())
            prefix = draw(st.sampled_from(["", "", "/", "C:", "./"]))
            members.append((f"{prefix}{folder}/{i}{j}{name}" if folder else f"{i}{j}{name}", data))
    return "images.zip", draw(mutated(_zip(members, draw(st.sampled_from(METHODS))))), ""


FORMATS = {"csv": csv_files(), "npy": npy_bytes().map(lambda b: ("x.npy", b, "")), "npz": npz_files(),
           "zip": image_zips()}  # fmt: skip
