from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import advise_command

CONTRACT_EXAMPLE = {
    "task": "vision",
    "generation": None,
    "goal": "classify",
    "data": {
        "examples": 60000,
        "input_shape": [1, 28, 28],
        "vocab_size": None,
        "outputs": 10,
        "labelled_fraction": 1.0,
        "bytes_per_value": 4,
    },
    "hardware": {
        "cpu_cores": 4,
        "cpu_threads": 8,
        "ram_gb": 32,
        "gpu": "gtx-1080",
        "gpus_per_node": 1,
        "gpu_memory_gb": None,
        "nodes": 1,
        "link": "pcie3",
        "storage": "nvme",
    },
    "target": {"accuracy": 0.98, "time_budget_hours": 2},
}


def test_it_prints_the_recommendation_for_the_contract_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(CONTRACT_EXAMPLE))
    code, out, _ = advise_command(capsys, str(path))
    assert code == 0
    answer = json.loads(out)
    assert answer["spec"]["task"] == "vision"
    assert answer["candidates"][0]["family"] == "cnn"
    assert answer["hardware_plan"]["device"] == "gpu"
    assert "id" not in answer
    low, high = answer["candidates"][0]["estimate"]["interval"]["seconds_to_train"]
    assert low < answer["candidates"][0]["estimate"]["seconds_to_train"] < high


def test_it_reads_the_spec_from_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tabular_spec: dict[str, Any]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(tabular_spec)))
    code, out, _ = advise_command(capsys, "-")
    assert code == 0
    assert json.loads(out)["candidates"][0]["family"] == "ffn"


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (
            '{"task": "vision", "data": {"examples": 10, "input_shape": [28, 28], "outputs": 10},'
            ' "hardware": {"cpu_cores": 2, "ram_gb": 8}}',
            "data.input_shape",
        ),
        (
            '{"task": "poetry", "data": {"examples": 10, "input_shape": [4], "outputs": 2},'
            ' "hardware": {"cpu_cores": 2, "ram_gb": 8}}',
            "task",
        ),
        ("{not json", "spec"),
    ],
)
def test_it_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, field: str
) -> None:
    path = tmp_path / "spec.json"
    path.write_text(text)
    code, out, err = advise_command(capsys, str(path))
    assert code == 2 and out == ""
    assert field in json.loads(err)


def test_it_exits_2_for_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = advise_command(capsys, str(tmp_path / "nope.json"))
    assert code == 2 and "cannot read" in json.loads(err)["spec"][0]


def test_it_writes_each_candidates_code_under_its_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tabular_spec: dict[str, Any]
) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(tabular_spec))
    code, out, _ = advise_command(capsys, str(path), "--code", str(tmp_path / "code"))
    assert code == 0
    candidates = json.loads(out)["candidates"]
    folders = sorted((tmp_path / "code").iterdir())
    assert [f.name for f in folders] == [str(i) for i in range(len(candidates))]
    for folder, candidate in zip(folders, candidates, strict=True):
        assert sorted(p.name for p in folder.iterdir()) == ["README.md", "model.py", "train.py"]
        assert f"PARAMETERS = {candidate['parameters']}" in (folder / "model.py").read_text()
