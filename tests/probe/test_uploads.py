"""Parsing uploads: what is accepted becomes the canonical sample; everything malformed is refused by name."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
from PIL import Image

from advisor.probe.learning.samples import Limits, SampleError, load, save
from advisor.probe.learning.uploads import parse_upload

IRIS_CSV = "sepal,petal,width,species\n" + "".join(
    f"{1 + i % 7}.{i % 10},{2 + i % 5}.5,{i % 3}.1,{['setosa', 'versicolor', 'virginica'][i % 3]}\n"
    for i in range(30)
)


def refused(name: str, data: bytes, **kw: object) -> dict[str, list[str]]:
    with pytest.raises(SampleError) as info:
        parse_upload(name, data, **kw)  # type: ignore[arg-type]
    return info.value.errors


def npz(**arrays: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def png(size: tuple[int, int] = (8, 8), mode: str = "L", value: int = 0) -> bytes:
    buf = io.BytesIO()
    Image.new(mode, size, value if mode == "L" else (value, 0, 0)).save(buf, format="PNG")
    return buf.getvalue()


def zipped(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, blob in members.items():
            z.writestr(name, blob)
    return buf.getvalue()


def test_it_reads_a_csv_with_named_classes() -> None:
    sample = parse_upload("iris.csv", IRIS_CSV.encode(), label_column="species")
    assert sample.x.shape == (30, 3)
    assert sample.label_kind == "class"
    assert sample.classes == ["setosa", "versicolor", "virginica"]
    assert np.bincount(sample.y).tolist() == [10, 10, 10]  # type: ignore[arg-type]


def test_it_reads_real_numbered_labels_as_regression_values() -> None:
    rows = "".join(f"{i},{i * 2},{i * 0.37 + 0.01}\n" for i in range(25))
    sample = parse_upload("r.csv", f"a,b,price\n{rows}".encode(), label_column="price")
    assert sample.label_kind == "value"
    assert sample.outputs == 1


@pytest.mark.parametrize(
    ("text", "label", "key", "words"),
    [
        ("a,b,y\n1,2,x\n3,4\n", "y", "file", "row 3 has 2 cells"),
        ("a,b,y\n1,abc,x\n3,4,z\n", "y", "file", "column 'b': 'abc' is not a finite number"),
        ("a,b,y\n1,nan,x\n3,4,z\n", "y", "file", "'nan' is not a finite number"),
        ("a,b,y\n1,,x\n3,4,z\n", "y", "file", "an empty cell"),
        ("a,b,y\n1,2,x\n3,4,z\n", "label", "label_column", "no column 'label'; the columns are: a, b, y"),
        ("a,b,y\n1,2,x\n3,4,x\n", "y", "file", "one class only ('x')"),
        ("a,b,y\n1,2,\n3,4,z\n", "y", "label_column", "empty label cells in rows 2"),
        ("a,a,y\n1,2,x\n", "y", "file", "name every column once"),
        ("a,b,y\n", "y", "file", "no examples"),
    ],
)
def test_it_refuses_a_bad_csv_naming_the_problem(text: str, label: str, key: str, words: str) -> None:
    errors = refused("d.csv", text.encode(), label_column=label)
    assert words in " ".join(errors[key])


@pytest.mark.parametrize(
    ("name", "data", "words"),
    [
        ("empty.csv", b"", "the file is empty"),
        ("big.csv", b"a,y\n" + b"1,2\n" * 100, "the limit is"),
        ("data.xlsx", b"PK\x03\x04...", "unknown file type"),
        ("fake.npz", b"not a zip at all", "is not a ZIP archive"),
        ("fake.npy", b"plain text", "is not a NumPy .npy file"),
        ("latin.csv", "a,y\n1,é\n".encode("latin-1"), "not UTF-8"),
    ],
)
def test_it_refuses_empty_oversize_and_mistyped_files(name: str, data: bytes, words: str) -> None:
    errors = refused(name, data, limits=Limits(max_bytes=200))
    assert words in " ".join(errors["file"])


def test_it_reads_an_npz_with_x_and_y() -> None:
    x = np.random.default_rng(0).random((40, 1, 8, 8))
    sample = parse_upload("d.npz", npz(x=x, y=np.arange(40) % 4))
    assert sample.input_shape == [1, 8, 8]
    assert sample.outputs == 4


@pytest.mark.parametrize(
    ("arrays", "words"),
    [
        ({"y": np.arange(4)}, "has no array 'x'"),
        ({"x": np.zeros((5, 3)), "y": np.arange(4)}, "x has 5 examples but y has 4 labels"),
        ({"x": np.zeros(5), "y": np.arange(5)}, "one example per row"),
        ({"x": np.array([[1.0, np.nan]] * 4), "y": np.arange(4)}, "NaN or infinite"),
        ({"x": np.array([["a", "b"]] * 4), "y": np.arange(4)}, "x must be numbers"),
        ({"x": np.array([[1, 2]] * 4, dtype=object), "y": np.arange(4)}, "unpickling"),
    ],
)
def test_it_refuses_a_bad_npz(arrays: dict[str, np.ndarray], words: str) -> None:
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=True, **arrays)
    assert words in " ".join(refused("d.npz", buf.getvalue())["file"])


def test_it_reads_an_npy_as_unlabelled_inputs() -> None:
    buf = io.BytesIO()
    np.save(buf, np.ones((30, 5), dtype=np.float32))
    sample = parse_upload("x.npy", buf.getvalue())
    assert sample.label_kind == "none"
    assert sample.y is None


def test_it_reads_a_zip_of_images_in_class_folders() -> None:
    members = {f"digits/{c}/{i}.png": png(value=40 * i) for c in ("a", "b") for i in range(3)}
    sample = parse_upload("imgs.zip", zipped(members))
    assert sample.x.shape == (6, 1, 8, 8)
    assert sample.classes == ["a", "b"]
    assert sample.x.min() >= 0.0 and sample.x.max() <= 1.0


@pytest.mark.parametrize(
    "members",
    [
        {f"{i}.png": png(value=40 * i) for i in range(3)},  # no folder
        {f"faces/{i}.png": png(value=40 * i) for i in range(3)},  # one folder: no classes to tell apart
    ],
)
def test_it_reads_a_zip_of_images_without_class_folders_as_unlabelled(members: dict[str, bytes]) -> None:
    sample = parse_upload("imgs.zip", zipped(members))
    assert sample.x.shape == (3, 1, 8, 8) and sample.label_kind == "none" and sample.y is None


@pytest.mark.parametrize(
    ("members", "words"),
    [
        ({"../evil/a.png": png(), "ok/b.png": png()}, "outside its folder"),
        ({"cat/../../etc/a.png": png(), "dog/b.png": png()}, "outside its folder"),
        ({"/abs/a.png": png(), "dog/b.png": png()}, "absolute"),
        ({"cat\\a.png": png(), "dog/b.png": png()}, "absolute or Windows"),
        ({"a.png": png(), "dog/b.png": png()}, "one folder per class"),
        ({"cat/notes.txt": b"hello", "dog/b.png": png()}, "not a PNG or JPEG"),
        ({"cat/a.png": b"garbage", "dog/b.png": png()}, "not a readable image"),
        ({"cat/a.png": png((8, 8)), "dog/b.png": png((9, 8))}, "the first image is 8x8"),
    ],
)
def test_it_refuses_a_bad_image_zip(members: dict[str, bytes], words: str) -> None:
    assert words in " ".join(refused("imgs.zip", zipped(members))["file"])


def test_it_refuses_a_zip_that_expands_too_far() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("cat/a.png", b"\0" * 500_000)  # deflates to about 500 bytes
        z.writestr("dog/b.png", png())
    bomb = buf.getvalue()
    errors = refused("imgs.zip", bomb, limits=Limits(max_bytes=len(bomb) + 10))
    assert "expands to" in " ".join(errors["file"])


def test_it_stores_and_reloads_the_canonical_form(tmp_path) -> None:  # type: ignore[no-untyped-def]
    sample = parse_upload("iris.csv", IRIS_CSV.encode(), label_column="species")
    save(sample, tmp_path / "s.npz")
    again = load(tmp_path / "s.npz")
    assert np.array_equal(again.x, sample.x) and np.array_equal(again.y, sample.y)  # type: ignore[arg-type]
    assert again.classes == sample.classes
    assert [p.name for p in tmp_path.iterdir()] == ["s.npz"]  # no temporary file left behind


def test_it_reads_colour_jpegs_as_three_channels() -> None:
    def jpeg(value: int) -> bytes:
        buf = io.BytesIO()
        Image.new("RGB", (6, 4), (value, 10, 200)).save(buf, format="JPEG")
        return buf.getvalue()

    sample = parse_upload(
        "c.zip", zipped({f"{c}/{i}.jpg": jpeg(50 * i) for c in ("x", "y") for i in range(2)})
    )
    assert sample.x.shape == (4, 3, 4, 6)  # [n, channels, height, width]
    assert sample.x[:, 2].mean() > sample.x[:, 1].mean()  # the blue channel stays the blue one
