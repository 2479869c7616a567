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

# The rule's one implementation, which a code download copies into train.py (advisor/export/); its constants
# are the numbers this docstring argues for.
from advisor.export.pieces.stopping import MIN_DELTA, MIN_GAIN, PATIENCE, Plateau

__all__ = ["MIN_DELTA", "MIN_GAIN", "PATIENCE", "Plateau"]
