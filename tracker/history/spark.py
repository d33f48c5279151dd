"""A one-line sparkline of a series, printed under a history table on a terminal."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

__all__ = ["BARS", "sparkline"]

BARS = "▁▂▃▄▅▆▇█"
EMPTY = " "


def sparkline(values: Sequence[Decimal | None], *, width: int = 60) -> str:
    """One bar per value (lowest ▁ to highest █, a space where there is none), taking
    every n-th value when there are more than ``width``."""
    if len(values) > width:
        values = [values[i * len(values) // width] for i in range(width)]
    present = [v for v in values if v is not None]
    if not present:
        return EMPTY * len(values)
    low, high = min(present), max(present)
    span = high - low
    top = len(BARS) - 1
    out = []
    for v in values:
        if v is None:
            out.append(EMPTY)
        elif span == 0:
            out.append(BARS[0])
        else:
            out.append(BARS[int((v - low) / span * top + Decimal("0.5"))])
    return "".join(out)
