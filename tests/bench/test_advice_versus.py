"""`python -m bench advice --store-first/--versus`: an earlier commit's first candidates come from that
commit's own engine on today's specs, and the series tasks are what their construction says."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np

from advisor.engine.families import KEYS
from bench import advice_versus
from bench.advice_data import _adding, dataset


def test_it_stores_an_earlier_commits_first_candidates_from_its_own_engine(tmp_path: Path) -> None:
    out = tmp_path / "first.json"
    advice_versus.store_first("be5a774", ["tokens-count", "digits-rows"], out, ["--store-first", "be5a774"])
    stored = json.loads(out.read_text(encoding="utf-8"))
    commit = subprocess.run(["git", "rev-parse", "be5a774"], capture_output=True, text=True, check=True)
    assert stored["commit"] == commit.stdout.strip()
    assert set(stored["first"]) == {"tokens-count", "digits-rows"}
    assert stored["specs"]["digits-rows"] == dataset("digits-rows", 0)[1]
    # be5a774 knew no GRU or TCN: its first network for data over time was the LSTM
    assert {c["family"] for c in stored["first"].values()} == {"lstm"} and "lstm" in KEYS
    # the committed file is the same command's answer
    committed = json.loads(Path("bench/advice_be5a774_first.json").read_text(encoding="utf-8"))
    assert committed["first"]["tokens-count"] == stored["first"]["tokens-count"]


def test_the_adding_problem_sums_the_two_marked_values() -> None:
    sample, best = _adding(50, 0, steps=20)
    x, y = sample.x, sample.y
    assert x.shape == (50, 20, 2) and best == 1.0
    assert (x[:, :, 1].sum(axis=1) == 2).all()
    total = (x[:, :, 0] * x[:, :, 1]).sum(axis=1)
    assert y is not None
    np.testing.assert_allclose(y[:, 0] * np.sqrt(1 / 6) + 1.0, total, rtol=1e-5)


def test_the_digit_rows_are_the_digits_read_row_by_row() -> None:
    rows, spec, _ = dataset("digits-rows", 0)
    images, _, _ = dataset("digits", 0)
    assert spec["data"]["input_shape"] == [8, 8] and rows.input_shape == [8, 8]
    np.testing.assert_array_equal(rows.x.reshape(len(rows.x), -1), images.x.reshape(len(images.x), -1))
    np.testing.assert_array_equal(rows.y, images.y)
