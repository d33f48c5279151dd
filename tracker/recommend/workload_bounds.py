"""The largest numbers a workload profile may hold, so every estimate stays a number.

``--params 1e400`` parses to infinity and ``--tokens 1e300`` to a job of 10^280 hours:
the memory arithmetic then prints ``Infinity`` or ``NaN`` and the cost overflows the
cents Decimal keeps (28 digits). Each bound is far past any real job, so it refuses only
typos, in one line naming the field (:class:`tracker.recommend.profiles.Profile`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

__all__ = [
    "MAX_BUDGET_USD",
    "MAX_CHECKPOINT_HOURS",
    "MAX_EPOCHS",
    "MAX_GPUS",
    "MAX_HOURS",
    "MAX_IMAGES",
    "MAX_MONTHS",
    "MAX_PARAMS",
    "MAX_PRICE_PER_HOUR",
    "MAX_SHAPE",
    "MAX_TOKENS",
    "concurrency",
]

MAX_PARAMS = 1e15
"""500 x the largest model trained so far (about 2e12)."""
MAX_TOKENS = 1e18
"""10^5 x the largest training run's tokens (about 1.5e13); also caps FLOPs per image."""
MAX_IMAGES = 1e15
"""Also caps activation bytes per image."""
MAX_EPOCHS = 1e6
MAX_HOURS = 1e12
"""Reference GPU-hours."""
MAX_CHECKPOINT_HOURS = 1e6
MAX_GPUS = 1e6
MAX_MONTHS = 1200
MAX_SHAPE = 100_000_000
"""One step's largest sequence, batch, token or head count: the product of two is
still a float."""
MAX_PRICE_PER_HOUR = Decimal(10) ** 9
MAX_BUDGET_USD = Decimal(10) ** 15


def concurrency(value: Any) -> Any:
    """A profile's ``concurrency``: None, ``"max"`` or a whole number 1 to :data:`MAX_SHAPE`
    (raises ValueError, which the profile reports naming the field)."""
    if value is None or value == "max":
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f'must be a whole number >= 1 or "max", got {value!r}')
    if value > MAX_SHAPE:
        raise ValueError(f'must be at most {MAX_SHAPE:,} or "max", got {value!r}')
    return value
