"""Early stopping: when training has stopped making progress on the validation split.

The advisor's probe stops by this rule (advisor/probe/learning/stopping.py says why
these numbers), and a downloaded train.py copies it (advisor/export/training.py): one
rule, so that train.py scores as the probe did. No torch here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PATIENCE = 20  # epochs without substantial progress before training stops
MIN_GAIN = 0.01  # progress: a validation loss this share below the last progress's ...
MIN_DELTA = 0.01  # ... and at least this much below it (nats, or squared error)


@dataclass
class Plateau:
    """Stop after `patience` epochs without progress, where progress is a better
    validation score, or a validation loss lower by both `min_gain` (relative) and
    `min_delta` (absolute) than at the last progress (Prechelt 1998). Feed it each
    epoch's validation score and loss; `update` says whether to stop now."""

    patience: int = PATIENCE
    min_gain: float = MIN_GAIN
    min_delta: float = MIN_DELTA
    best_score: float = -math.inf
    progress_loss: float = math.inf
    progress_epoch: int = 0
    epoch: int = 0

    def update(self, score: float, loss: float) -> bool:
        self.epoch += 1
        better_score = score > self.best_score + 1e-9
        better_loss = loss < min(
            self.progress_loss * (1 - self.min_gain),
            self.progress_loss - self.min_delta,
        )
        if better_score or better_loss:
            self.progress_epoch = self.epoch
            self.progress_loss = min(self.progress_loss, loss)
        self.best_score = max(self.best_score, score)
        return self.epoch - self.progress_epoch >= self.patience
