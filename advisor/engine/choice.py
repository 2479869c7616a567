"""Which networks, best first (W §III-A, §III-D, after Patterson): one builder call per candidate."""

from __future__ import annotations

from typing import Any

from advisor.engine.candidate import Draft
from advisor.engine.families import dense
from advisor.engine.rules import reason

FEW_LABELS = (
    0.5  # below this share of labelled examples, unsupervised pretraining pays (W §III-D, Zhong 2016)
)


def drafts(spec: dict[str, Any]) -> tuple[list[Draft], list[dict[str, Any]]]:
    """The candidates' drafts, best first, and the top-level reasons for the choice."""
    task, goal = spec["task"], spec["goal"]
    if task != "generation" and goal == "compress":
        return _compress(spec)
    return _shallow_first(spec)


def _shallow_first(spec: dict[str, Any]) -> tuple[list[Draft], list[dict[str, Any]]]:
    reasons = [
        reason(
            "net.shallow.first",
            "Tabular data without image, audio or time structure: a shallow network (one hidden layer) "
            "first; "
            "if it misses your accuracy target, try the deep network listed next.",
        ),
        reason("net.shallow.validate"),
    ]
    result = [dense.ffn(spec, deep=False), dense.ffn(spec, deep=True)]
    if spec["data"]["labelled_fraction"] < FEW_LABELS and spec["goal"] == "classify":
        result.append(dense.dbn(spec))
        reasons.append(
            reason(
                "net.pretrain.unlabelled",
                f"Only {spec['data']['labelled_fraction']:.0%} of your examples carry "
                "a label: a DBN pretrained on all of them is listed as an alternative.",
            )
        )
    return result, reasons


def _compress(spec: dict[str, Any]) -> tuple[list[Draft], list[dict[str, Any]]]:
    reasons = [
        reason(
            "net.shallow.first",
            "Learning a smaller code of your input: a shallow auto-encoder first, a deeper one and an RBM as "
            "alternatives.",
        ),
        reason("net.shallow.validate"),
    ]
    return [dense.ae(spec, deep=False), dense.ae(spec, deep=True), dense.rbm(spec)], reasons
