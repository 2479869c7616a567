"""`python -m bench explore`: the explorations that were scripts in results folders, as one benchmark whose
options parse as the results' READMEs write them, and whose rows come from the real training code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import explore
from bench.__main__ import BENCHMARKS


def test_it_is_listed_and_parses_each_exploration_as_the_readmes_write_it() -> None:
    assert BENCHMARKS["explore"][0] == "bench.explore"
    parse = explore.parser().parse_args
    gens = parse(["generators", '{"base": {"kind": "gan"}}', "--seeds", "0,1,2"])
    assert (gens.what, json.loads(gens.configs), gens.seeds) == (
        "generators",
        {"base": {"kind": "gan"}},
        [0, 1, 2],
    )
    widths = parse(["widths", "--data", "tokens-count", "--items", "lstm:96,tcn:32@32", "--seeds", "0,1"])
    assert (widths.data, widths.items, widths.seeds, widths.budget) == (
        "tokens-count",
        "lstm:96,tcn:32@32",
        [0, 1],
        400.0,
    )
    batch = parse(["per-batch", "--steps", "128", "--features", "1", "--items", "lstm:96,gru:96,tcn:96"])
    assert (batch.steps, batch.features, batch.batch) == (128, 1, 128)
    scale = parse(["generation-scale", "--family", "gan", "--scales", "standard,raw"])
    assert (scale.family, scale.scales, scale.seeds) == ("gan", "standard,raw", [0])
    probe = parse(["generation-probe", "--seeds", "0", "--limit", "90", "--out", "somewhere"])
    assert (probe.limit, probe.out) == (90.0, Path("somewhere"))


@pytest.mark.parametrize("argv", [["generators"], ["widths"], ["per-batch"], ["ring"]])
def test_it_refuses_an_exploration_without_what_it_needs(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        explore.main(argv)
    assert stopped.value.code == 2


def _series() -> Any:
    """A small series task the explorations' items are drawn for."""
    from advisor.engine import normalise

    return normalise(
        {
            "task": "sequence",
            "data": {"examples": 500, "input_shape": [8, 3], "outputs": 2},
            "hardware": {"cpu_cores": 2, "ram_gb": 8},
            "target": {"accuracy": 0.9},
        }
    )


def test_it_draws_each_item_at_its_width_or_the_rules() -> None:
    from advisor.engine.families import GRU, recurrent

    spec = _series()
    tcn, batch = explore._draft_item("tcn:8@32", spec)
    assert (tcn.family, set(tcn.hidden_sizes), batch) == ("tcn", {8}, "32")
    lstm, batch = explore._draft_item("lstm:5", spec)
    assert (lstm.family, set(lstm.hidden_sizes), batch) == ("lstm", {5}, "")
    gru, _ = explore._draft_item("gru", spec)  # no width: the rules' own
    assert gru.family == "gru" and gru.hidden_sizes == recurrent.recurrent(spec, GRU).hidden_sizes


def test_it_runs_a_one_pass_generator_set_up_and_saves_its_rows(tmp_path: Path) -> None:
    configs = json.dumps({"tiny": {"kind": "vae", "h": 8, "epochs": 1, "learn_var": True, "noise": 1}})
    assert explore.main(["generators", configs, "--seeds", "0", "--out", str(tmp_path)]) == 0
    saved = json.loads((tmp_path / "results.json").read_text())
    assert (
        saved["meta"]["command"] == f"python -m bench explore generators {configs} --seeds 0 --out {tmp_path}"
    )
    (row,) = saved["rows"]
    assert (row["name"], row["seed"]) == ("tiny", 0)
    assert 0.0 <= row["score"] <= 1.0 and sum(row["counts"]) <= 800 and len(row["sd"]) == 8
    assert "| tiny | 0 |" in (tmp_path / "table.md").read_text()


def test_it_reads_an_items_options_and_puts_dropout_in_the_residual_bodies() -> None:
    assert explore._options("tcn:32@32+drop0.1+wd0.001+lr0.0003") == (
        "tcn:32@32",
        {"dropout": 0.1, "weight_decay": 0.001, "learning_rate": 0.0003},
    )
    assert explore._options("tcn@32+last") == ("tcn@32", {"last": 1.0})
    with pytest.raises(ValueError, match="unknown option"):
        explore._options("tcn+depth3")
    spec = _series()
    tcn, _ = explore._draft_item("tcn:8", spec)
    # the readout narrowed to one of its two pools, its head with it
    read = explore._with_pools(tcn.networks["model"], ["max"])
    assert [(i["kind"], i["args"].get("pools"), i["args"].get("in_features")) for i in read[-2:]] == [
        ("PoolOverTime", ["max"], None),
        ("Linear", None, 8),
    ]
    dropped = explore._with_dropout(tcn.networks["model"], 0.2)
    bodies = [item["args"]["body"] for item in dropped if item["kind"] == "Residual"]
    assert bodies and all(
        [b["kind"] for b in body] == ["CausalConv1d", "ReLU", "Dropout", "CausalConv1d", "ReLU", "Dropout"]
        for body in bodies
    )
