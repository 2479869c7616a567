"""Every work a rule or a reason cites is listed under References on /rules/ (engine/references.json)."""

from __future__ import annotations

import re

import pytest

from advisor.engine import recommend
from advisor.engine.rules import REFERENCES, RULES
from advisor.web.present import LOSSES
from tests.engine.specs import GPU, grid, spec

NAME = r"[A-Z][A-Za-zÀ-ÿ'-]+"
# "Keskar et al. 2017", "Kingma & Ba 2015", "LeCun, Bottou, Orr & Müller 1998", "Hinton 2010": the first
# author's surname and the year
AUTHOR_YEAR = re.compile(rf"\b({NAME})(?: et al\.|(?:, {NAME})*(?:,? (?:&|and) {NAME})?)? ((?:19|20)\d\d)\b")
# a work Wünsche cites by name alone: "(Patterson)", "(Sastre Cabot)"
BY_NAME = re.compile(r"\(([A-Z][a-zà-ÿ]+(?: [A-Z][a-zà-ÿ]+)?)\)")
KEYS = {key for ref in REFERENCES for key in ref["keys"]}


def citations(text: str) -> set[str]:
    return {f"{m[1]} {m[2]}" for m in AUTHOR_YEAR.finditer(text)} | {m[1] for m in BY_NAME.finditer(text)}


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Keskar et al. 2017 (large-batch training)", {"Keskar 2017"}),
        ("Kingma & Ba 2015, 'Adam'", {"Kingma 2015"}),
        ("LeCun, Bottou, Orr & Müller 1998, 'Efficient BackProp'", {"LeCun 1998"}),
        ("Wünsche 2018 §III-D (Patterson)", {"Wünsche 2018", "Patterson"}),
        ("Wünsche 2018 §III-H-2, §IV-B (Sastre Cabot)", {"Wünsche 2018", "Sastre Cabot"}),
        ("Radford, Metz & Chintala 2016 (DCGAN), §4", {"Radford 2016"}),
        ("a bench run of 2026-11-23 (CPU)", set()),
    ],
)
def test_it_finds_the_citations_in_a_text(text: str, found: set[str]) -> None:
    assert citations(text) == found


def test_every_work_the_rules_cite_is_listed() -> None:
    cited = {c for rule in RULES for c in citations(rule["source"]) | citations(rule["text"])}
    for expected in (
        "Keskar 2017",
        "Masters 2018",
        "Kingma 2015",
        "Prechelt 1998",
        "Zaremba 2014",
        "Hinton 2006",
    ):
        assert expected in cited  # the ones /rules/ cited without listing them (issue 27)
    assert cited - KEYS == set()


def test_every_work_a_reason_cites_is_listed() -> None:
    specs = [*grid(), spec("vision", [1, 28, 28], outputs=10, hardware=GPU, examples=60_000)]
    cited: set[str] = {c for text in LOSSES.values() for c in citations(text)}
    for each in specs:
        rec = recommend(each)
        reasons = [*rec["reasons"], *rec["hardware_plan"]["reasons"], *rec["dataflow"]["reasons"]]
        reasons += [r for c in rec["candidates"] for r in c["reasons"]]
        cited |= {c for r in reasons for c in citations(r["text"]) | citations(r["source"])}
    assert {"Hinton 2010", "Wünsche 2018"} <= cited
    assert cited - KEYS == set()


def test_each_reference_has_one_anchor_and_its_keys_are_unique() -> None:
    anchors = [ref["anchor"] for ref in REFERENCES]
    keys = [key for ref in REFERENCES for key in ref["keys"]]
    assert len(set(anchors)) == len(anchors) and len(set(keys)) == len(keys)
    assert all(ref["title"] and ref["where"] for ref in REFERENCES)
