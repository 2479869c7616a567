"""The rule catalog (rules.json beside this module: the papers' rules and the project's cited additions) and
the works they cite (references.json: /rules/ lists them).

Each rule has an id, a condition (`when`), an effect (`then`), a text a beginner understands and its source.
The conditions are evaluated where the decision is made (choice, sizing, training, plan, dataflow, budget);
each firing becomes a reason `{"rule", "text", "source"}` whose text says what it means for this task.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict

from advisor.contract import Reason


@dataclass(frozen=True)
class Rule:
    id: str
    when: str
    then: str
    text: str  # for a beginner, independent of the task
    source: str


def _load() -> tuple[Rule, ...]:
    with Path(__file__).with_name("rules.json").open(encoding="utf-8") as handle:
        return tuple(Rule(**entry) for entry in json.load(handle))


RULE_UNITS: tuple[Rule, ...] = _load()
RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULE_UNITS}
RULES: tuple[dict[str, str], ...] = tuple(
    {"id": r.id, "text": r.text, "source": r.source, "when": r.when, "then": r.then} for r in RULE_UNITS
)


class Reference(TypedDict):
    """A cited work. `keys`: how citations name it, the first author's surname and the year ("Keskar 2017"),
    or a name alone for a work Wünsche cites by name ("Patterson"); `anchor`: its id on /rules/."""

    keys: list[str]
    anchor: str
    authors: str
    year: str
    title: str
    where: str
    note: NotRequired[str]  # what the rules take from it


def _load_references() -> tuple[Reference, ...]:
    with Path(__file__).with_name("references.json").open(encoding="utf-8") as handle:
        return tuple(json.load(handle))


REFERENCES: tuple[Reference, ...] = _load_references()


def rules() -> list[dict[str, str]]:
    """Every rule: id, text (for a beginner), source, when, then (a copy: change it freely)."""
    return copy.deepcopy(list(RULES))


def reason(rule_id: str, detail: str | None = None) -> Reason:
    """A fired rule as a reason; `detail` says what it means for this task (else the rule's own text)."""
    rule = RULES_BY_ID[rule_id]
    return {"rule": rule.id, "text": detail or rule.text, "source": rule.source}
