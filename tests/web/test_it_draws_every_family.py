"""The recommendation page draws every family the engine proposes: each network of each candidate as a
diagram whose every layer has an output shape (the engine's own counting), ending where the task says."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from advisor import services
from advisor.web.present import diagrams

pytestmark = pytest.mark.django_db
HW = {"cpu_cores": 4, "ram_gb": 16}
SPECS: dict[str, dict[str, Any]] = {
    "gan": {
        "task": "generation",
        "generation": "random",
        "data": {"examples": 50000, "input_shape": [1, 28, 28]},
    },
    "dn": {  # a DN only where a specification is followed (rule net.generation.dn)
        "task": "generation",
        "generation": "controlled",
        "data": {"examples": 50000, "input_shape": [1, 28, 28]},
    },
    "vae": {
        "task": "generation",
        "generation": "controlled",
        "data": {"examples": 50000, "input_shape": [784]},
    },
    "dbn": {
        "task": "vision",
        "data": {"examples": 50000, "input_shape": [1, 28, 28], "outputs": 10, "labelled_fraction": 0.05},
    },
    "ae": {"task": "tabular", "goal": "compress", "data": {"examples": 50000, "input_shape": [64]}},
    "tokens": {
        "task": "sequence",
        "data": {"examples": 50000, "input_shape": [50], "vocab_size": 5000, "outputs": 2},
    },
    "published": {
        "task": "vision",
        "data": {"examples": 1281167, "input_shape": [3, 224, 224], "outputs": 1000},
        "hardware": {"cpu_cores": 16, "ram_gb": 128, "gpu": "a100-80gb", "gpus_per_node": 8, "nodes": 2},
    },
}


@pytest.mark.parametrize("name", list(SPECS))
def test_it_draws_each_network_of_each_candidate(client_for: Client, user: Any, name: str) -> None:
    spec = {"hardware": HW, **SPECS[name]}
    rec = services.advise(owner=user, spec=spec)
    for index, cand in enumerate(rec.result["candidates"]):
        page = client_for.get(f"/recommendations/{rec.pk}/?c={index}")
        assert page.status_code == 200
        drawn = diagrams(cand)
        assert [d["name"] for d in drawn] == list(cand["networks"])
        for d in drawn:
            assert all(row["shape"] for row in d["rows"]), (name, index, d["name"])
            n = len(d["rows"]) - 1  # "classifier: 1 layer", never "1 layers"
            assert f"{d['name']}: {n} layer{'' if n == 1 else 's'} " in page.content.decode()
        outputs = cand["io"]["outputs"]
        if cand["io"]["target"] == "class" and "model" in drawn[0]["name"]:
            assert drawn[0]["rows"][-1]["shape"][-1] == outputs


def test_it_covers_every_family() -> None:
    from advisor import engine

    families = {
        c["family"]
        for spec in SPECS.values()
        for c in engine.recommend({"hardware": HW, **spec})["candidates"]
    }
    assert families >= {"gan", "vae", "dn", "dbn", "cnn", "ae", "rbm", "lstm", "gru", "tcn", "rnn"}


@pytest.mark.parametrize(
    ("hardware", "examples", "last_hop"),
    [
        ({"cpu_cores": 2, "ram_gb": 8}, 2000, "no transfer"),
        ({"cpu_cores": 8, "ram_gb": 32, "gpu": "rtx-4090"}, 60000, "once, then resident"),
        ({"cpu_cores": 16, "ram_gb": 16, "gpu": "gtx-980"}, 5_000_000, "transfer_seconds_per_epoch"),
    ],
)
def test_it_draws_the_data_flow_with_the_engines_figures(
    client_for: Client, user: Any, hardware: dict[str, Any], examples: int, last_hop: str
) -> None:
    from advisor.engine.units import duration
    from advisor.web.flowfig import flow_figure

    spec = {"task": "vision", "data": {"examples": examples, "input_shape": [1, 28, 28], "outputs": 10}}
    rec = services.advise(owner=user, spec={**spec, "hardware": hardware})
    flow, plan = rec.result["dataflow"], rec.result["hardware_plan"]
    figure = flow_figure(rec.result["spec"], plan, flow)
    storage_hop, device_hop = figure["arrows"]
    expected = f"{duration(flow[last_hop])} / epoch" if last_hop in flow else last_hop
    assert device_hop["below"] == expected
    if not flow["fits_in_ram"] and not flow["fits_in_gpu"]:
        assert storage_hop["below"] == f"{duration(flow['storage_seconds_per_epoch'])} / epoch"
    html = client_for.get(f"/recommendations/{rec.pk}/").content.decode()
    assert 'class="flowfig"' in html and device_hop["below"] in html
