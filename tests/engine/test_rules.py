"""Every rule of advisor/engine/rules.json fires when its condition holds and not
otherwise; every reason cites its rule's source; the rule catalog is complete and readable."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import RULES, recommend, rules
from tests.engine.specs import CPU, GPU, spec

MNIST = spec("vision", [1, 28, 28], outputs=10)
MNIST_GPU = spec("vision", [1, 28, 28], outputs=10, examples=60_000, hardware=GPU)
TABULAR = spec("tabular", [20], outputs=3)
TOKENS = spec("sequence", [32], vocab_size=1_000, outputs=4)
SERIES = spec("sequence", [50, 12], outputs=4)
IMAGENET = spec("vision", [3, 224, 224], outputs=1000, examples=1_281_167)
CIFAR = spec("vision", [3, 32, 32], outputs=10, examples=50_000)
LARGE_IMAGES = spec("vision", [3, 224, 224], outputs=10)  # too large for a shallow FFN baseline
FARM = {**GPU, "gpus_per_node": 8, "nodes": 4}
BIG_DATA_GPU = spec("vision", [3, 256, 256], outputs=10, examples=2_000_000, hardware=GPU)
EIGHT = {**GPU, "gpus_per_node": 8}
IMAGENET_EIGHT_2H = {**IMAGENET, "hardware": EIGHT, "target": {"time_budget_hours": 2}}
IMAGENET_FARM_2H = {**IMAGENET, "hardware": FARM, "target": {"time_budget_hours": 2}}
IMAGENET_GPU_60H = {**IMAGENET, "hardware": GPU, "target": {"time_budget_hours": 60}}
HUGE_IMAGES_980 = spec("vision", [3, 1024, 1024], outputs=10, hardware={**GPU, "gpu": "gtx-980"})


def fired(rec: dict[str, Any], where: str = "any") -> set[str]:
    """Rule ids among the reasons: anywhere, or in one candidate ("0", "1", ...)."""
    if where != "any":
        return {r["rule"] for r in rec["candidates"][int(where)]["reasons"]}
    sections = [rec["reasons"], rec["hardware_plan"]["reasons"], rec["dataflow"]["reasons"]]
    sections += [c["reasons"] for c in rec["candidates"]]
    return {r["rule"] for section in sections for r in section}


# (rule, spec where it fires, spec where it does not, where to look)
TABLE = [
    (
        "net.generation.random",
        spec("generation", [3, 32, 32]),
        spec("generation", [3, 32, 32], generation="controlled"),
        "any",
    ),
    (
        "net.generation.controlled",
        spec("generation", [20], generation="controlled"),
        spec("generation", [20]),
        "any",
    ),
    (
        "net.generation.sequence",
        spec("generation", [16], vocab_size=40),
        spec("generation", [1, 16, 16]),
        "any",
    ),
    ("net.generation.vector", spec("generation", [2]), spec("generation", [3, 32, 32]), "any"),
    (
        "net.generation.dn",
        spec("generation", [1, 28, 28], generation="controlled"),
        spec("generation", [1, 28, 28]),
        "any",
    ),
    ("net.vision.cnn", MNIST, TABULAR, "any"),
    ("net.vision.dbn", MNIST, spec("vision", [1, 28, 28], goal="compress"), "any"),
    ("net.sequence.lstm", SERIES, TABULAR, "any"),
    ("net.sequence.gru", SERIES, MNIST, "any"),
    ("net.sequence.tcn", TOKENS, MNIST, "any"),
    ("net.time.first", SERIES, MNIST, "0"),  # several networks expected to reach the target; MNIST: one CNN
    ("net.published", IMAGENET, CIFAR, "any"),
    ("net.shallow.first", TABULAR, LARGE_IMAGES, "any"),
    ("net.deep.structure", MNIST, TABULAR, "any"),
    ("net.shallow.validate", TABULAR, spec("sequence", [1000, 40], outputs=4), "any"),
    ("net.pretrain.unlabelled", spec("tabular", [20], outputs=3, labelled_fraction=0.1), TABULAR, "any"),
    ("net.tokens.embedding", TOKENS, SERIES, "any"),
    ("size.ffn.hidden", TABULAR, LARGE_IMAGES, "any"),
    ("size.ae.bottleneck", spec("tabular", [20], goal="compress"), TABULAR, "any"),
    ("size.deep.cnn", MNIST, TABULAR, "any"),
    ("size.deep.dn", spec("generation", [1, 28, 28]), TABULAR, "any"),
    ("size.oversize", spec("tabular", [1000], outputs=10, examples=50), TABULAR, "any"),
    ("size.capacity", spec("tabular", [20], outputs=3, target={"accuracy": 0.95}), TABULAR, "any"),
    ("size.recurrent", SERIES, TABULAR, "any"),
    ("size.temporal", SERIES, TABULAR, "any"),
    # a whole sequence's answer, not the next step's (a series generator reads its last step)
    ("size.temporal.readout", SERIES, spec("generation", [50, 12]), "any"),
    ("size.exceeds.memory", spec("tabular", [1_000_000], outputs=10), TABULAR, "any"),
    ("init.small", TABULAR, spec("tabular", [20], goal="compress"), "0|2"),  # candidate 2: the RBM
    ("init.rbm", spec("tabular", [20], goal="compress"), TABULAR, "any"),
    ("train.optimizer", TABULAR, spec("generation", [3, 32, 32]), "0"),
    ("train.optimizer.gan", spec("generation", [3, 32, 32]), spec("generation", [2]), "0"),
    # vectors: the VAE first (net.generation.vector), the GAN second
    ("train.optimizer.gan.vector", spec("generation", [2]), spec("generation", [3, 32, 32]), "1"),
    ("train.optimizer.vae", spec("generation", [20], generation="controlled"), TABULAR, "0"),
    # a whole sequence's TCN; a next-step generator keeps the default rate
    ("train.optimizer.tcn", SERIES, spec("generation", [100], vocab_size=80), "any"),
    # a Gaussian VAE's fitted prior: vectors and series, not an image VAE's Bernoulli decoder
    ("train.prior.mixture", spec("generation", [2]), spec("generation", [3, 32, 32]), "0|any"),
    ("train.optimizer.cd", spec("tabular", [20], goal="compress"), TABULAR, "any"),
    ("train.optimizer.published", IMAGENET, CIFAR, "0"),
    (
        "batch.start",
        MNIST_GPU,
        HUGE_IMAGES_980,  # there the GPU's memory, not the generic start, sets the batch
        "0",
    ),
    ("cpu.threads.physical", MNIST, MNIST_GPU, "any"),
    ("cpu.single.avoid", IMAGENET, TABULAR, "any"),
    ("gpu.prefer", MNIST_GPU, MNIST, "any"),
    (
        "gpu.memory",
        HUGE_IMAGES_980,
        MNIST_GPU,
        "any",
    ),
    ("gpu.overlap", BIG_DATA_GPU, MNIST_GPU, "any"),
    (
        "multigpu.gain",
        IMAGENET_EIGHT_2H,
        MNIST_GPU,
        "any",
    ),
    (
        "multigpu.data",
        IMAGENET_EIGHT_2H,
        spec("vision", [3, 224, 224], outputs=1000, hardware=EIGHT),
        "any",
    ),
    (
        "multigpu.model",
        spec("tabular", [30_000], outputs=10, hardware={**EIGHT, "gpu": "gtx-980"}),
        MNIST_GPU,
        "any",
    ),
    (
        "multigpu.budget",
        spec("vision", [1, 28, 28], outputs=10, hardware=EIGHT, target={"time_budget_hours": 1}),
        spec("vision", [1, 28, 28], outputs=10, hardware=GPU, target={"time_budget_hours": 1}),
        "any",
    ),
    (
        "sync.sync",
        IMAGENET_EIGHT_2H,
        MNIST_GPU,
        "any",
    ),
    (
        "sync.mixed",
        IMAGENET_FARM_2H,
        IMAGENET_EIGHT_2H,
        "any",
    ),
    ("cluster.only.large", spec("vision", [1, 28, 28], outputs=10, hardware=FARM), MNIST_GPU, "any"),
    (
        "gpu.direct",
        IMAGENET_EIGHT_2H,
        MNIST_GPU,
        "any",
    ),
    ("data.pcie", BIG_DATA_GPU, MNIST_GPU, "any"),
    ("data.ram", BIG_DATA_GPU, MNIST_GPU, "any"),
    ("data.gpu.fit", MNIST_GPU, BIG_DATA_GPU, "any"),
    ("data.example.size", spec("vision", [1, 512, 512], outputs=2), MNIST, "any"),
    ("cpu.allocator", IMAGENET, TABULAR, "any"),
    ("gpu.fp16", spec("tabular", [20], outputs=3, hardware={**GPU, "gpu": "a100-80gb"}), MNIST_GPU, "any"),
    (
        "budget.unmet",
        IMAGENET_GPU_60H,
        MNIST_GPU,
        "any",
    ),
]


@pytest.mark.parametrize(("rule", "when", "otherwise", "where"), TABLE, ids=[row[0] for row in TABLE])
def test_it_fires_each_rule_exactly_when_its_condition_holds(
    rule: str, when: dict[str, Any], otherwise: dict[str, Any], where: str
) -> None:
    where_fires, where_not = (where.split("|") * 2)[:2]
    assert rule in fired(recommend(when), where_fires)
    assert rule not in fired(recommend(otherwise), where_not)


UNCONDITIONAL = {"train.epochs"}  # every candidate gets an epoch budget (and one optimiser rule, below)


# fire only with a device profile or after a calibration: tests/engine/test_batching.py tables them
PROFILED = {"batch.profiled", "cpu.threads.profiled", "plan.measured"}


def test_it_tests_every_rule_of_the_catalog() -> None:
    assert {row[0] for row in TABLE} | UNCONDITIONAL | PROFILED == {rule["id"] for rule in RULES}


@pytest.mark.parametrize("rec", [recommend(s) for s in (MNIST, TABULAR, TOKENS, IMAGENET)], ids=str)
def test_it_gives_every_candidate_an_optimiser_and_an_epoch_budget(rec: dict[str, Any]) -> None:
    for i, candidate in enumerate(rec["candidates"]):
        assert fired(rec, str(i)) >= UNCONDITIONAL
        optimisers = [r for r in candidate["reasons"] if r["rule"].startswith("train.optimizer")]
        assert len(optimisers) == 1


def test_it_cites_each_reason_with_its_rules_source() -> None:
    by_id = {rule["id"]: rule for rule in rules()}
    for row in TABLE:
        rec = recommend(row[1])
        sections = [rec["reasons"], rec["hardware_plan"]["reasons"], rec["dataflow"]["reasons"]]
        for reason in [r for s in sections for r in s] + [r for c in rec["candidates"] for r in c["reasons"]]:
            assert reason["source"] == by_id[reason["rule"]]["source"]
            assert reason["text"].strip()


def test_it_lists_rules_a_beginner_can_read_with_a_source() -> None:
    catalog = rules()
    assert len({rule["id"] for rule in catalog}) == len(catalog)
    for rule in catalog:
        assert rule["text"][0].isupper() and rule["text"].endswith(".")
        assert any(
            name in rule["source"]
            for name in (
                "Wünsche",
                "Shi",
                "Keskar",
                "PyTorch",
                "Goodfellow",
                "Hinton",
                "Bengio",
                "Micikevicius",
                "Kingma",
                "Radford",
                "Krizhevsky",
                "Joulin",
                "LeCun",
                "Bai",
                "Cho",
                "Dosovitskiy",
                "Ghosh",
                "Collobert",
                "Howard",
            )
        )
    catalog[0]["text"] = "changed"
    assert rules()[0]["text"] != "changed"


def test_it_orders_candidates_as_patterson_says() -> None:
    def families(s: dict[str, Any]) -> list[str]:
        return [c["family"] for c in recommend(s)["candidates"]]

    assert families(spec("generation", [3, 32, 32]))[:2] == ["gan", "vae"]
    assert families(spec("generation", [2]))[:2] == ["vae", "gan"]  # vectors: net.generation.vector
    assert families(spec("generation", [3, 32, 32], generation="controlled"))[:2] == ["vae", "gan"]
    # data over time: the three networks expected to reach the target first (in the order of the time they
    # need: test_time_first.py), then the RNN, then the shallow baseline last, as for small images
    over_time = {"lstm", "gru", "tcn"}
    assert set(families(spec("generation", [16], vocab_size=40))[:3]) == over_time
    assert set(families(SERIES)[:3]) == over_time and families(SERIES)[3:] == ["rnn", "ffn"]
    assert families(MNIST)[0] == "cnn"
    assert families(spec("vision", [1, 28, 28], outputs=10, labelled_fraction=0.1))[0] == "dbn"
    tabular = recommend(TABULAR)["candidates"]
    assert [(c["family"], c["depth"]) for c in tabular] == [("ffn", "shallow"), ("ffn", "deep")]


@pytest.mark.parametrize(
    ("accuracy", "first"),
    [(None, "resnet-50"), (0.5, "alexnet"), (0.65, "googlenet"), (0.75, "resnet-50"), (0.9, "resnet-50")],
)
def test_it_proposes_the_cheapest_published_network_that_reached_the_target(
    accuracy: float | None, first: str
) -> None:
    rec = recommend({**IMAGENET, "target": {"accuracy": accuracy}})
    names = [c["published"] for c in rec["candidates"]]
    assert names[0] == first
    assert set(names[:3]) == {"alexnet", "googlenet", "resnet-50"} and names[3] is None
    text = next(r["text"] for r in rec["reasons"] if r["rule"] == "net.published")
    assert ("none reached" in text) == (accuracy is not None and accuracy > 0.7613)


def test_it_names_a_gpu_that_would_meet_a_missed_budget() -> None:
    rec = recommend(IMAGENET_GPU_60H)
    text = next(r["text"] for r in rec["hardware_plan"]["reasons"] if r["rule"] == "budget.unmet")
    assert "over your 60 h budget: one NVIDIA" in text


def test_it_warns_in_cpu_threads_when_hyper_threads_are_offered() -> None:
    rec = recommend(spec("tabular", [20], outputs=3, hardware={**CPU, "cpu_threads": 8}))
    assert rec["hardware_plan"]["threads"] == 4
    text = next(r["text"] for r in rec["hardware_plan"]["reasons"] if r["rule"] == "cpu.threads.physical")
    assert "not 8" in text
