"""When training has stopped making progress on the validation split: the early-stopping rule.

Prechelt 1998 ("Early Stopping - But When?", Neural Networks: Tricks of the Trade, LNCS 1524, pp. 55-69)
compared stopping criteria over 1,296 runs: "slower" criteria, which wait longer for a further improvement,
gave about 4% better generalisation on average at about four times the training time. The advisor's promise
is a good score at a small fraction of a search's cost, so the rule waits a fixed patience (no longer one
that grows with the epoch count) and counts only substantial progress: a strictly better validation score,
or a validation loss both `MIN_GAIN` (relative) and `MIN_DELTA` (absolute) below the loss at the last
progress (the "minimum improvement" of Prechelt's training-progress measure, §2.2, and of Keras's
`EarlyStopping(min_delta)`, applied to the validation loss).

Why absolute too: a classifier whose validation accuracy is already perfect keeps shrinking its
cross-entropy by a few percent per 20 epochs as its outputs grow confident (wine: 0.05 to 0.013 nats over
epochs 200-450, accuracy 1.0 throughout); those gains change no prediction. Measured (`python -m bench
advice`, bench/results/advice_intel-xeon-2c_min-delta/README.md): the earlier rule (patience max(20,
epoch/4), any 0.1% loss gain counted) let wine and breast cancer run to their 450-epoch cap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PATIENCE = 20  # epochs without substantial progress before training stops
MIN_GAIN = 0.01  # a validation loss this share below the last progress's loss is progress ...
MIN_DELTA = 0.01  # ... and at least this much below it (nats of cross-entropy, or MSE on scaled targets)


@dataclass
class Plateau:
    """Feed it each epoch's validation score and loss; `update` says whether to stop now."""

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
            self.progress_loss * (1 - self.min_gain), self.progress_loss - self.min_delta
        )
        if better_score or better_loss:
            self.progress_epoch = self.epoch
            self.progress_loss = min(self.progress_loss, loss)
        self.best_score = max(self.best_score, score)
        return self.epoch - self.progress_epoch >= self.patience
