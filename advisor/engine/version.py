"""The engine's version, stored with every recommendation (`Recommendation.engine_version`, the API's
`engine_version`), so that advice made before a rule changed can be told apart from advice made after it.

Bump ENGINE_VERSION in the change that alters what `recommend()` answers for some spec: a rule (rules.json,
choice.py), a family's layers or sizing, the training set-up, an estimate's formula or band, the plan.
A change that leaves every answer as it was (a refactoring, a reason's wording) keeps it. Rows stored before
versions were recorded say 0.
"""

from __future__ import annotations

ENGINE_VERSION = 8
