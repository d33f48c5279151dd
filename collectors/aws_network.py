"""An EC2 instance type's inter-node network, from what AWS itself states about it.

``DescribeInstanceTypes`` items carry ``NetworkInfo``: ``EfaSupported`` (the Elastic
Fabric Adapter, AWS's RDMA-class transport for collectives between instances),
``NetworkPerformance`` (the instance's figure, ``"3200 Gigabit"``, ``"4x 100 Gigabit"``,
``"Up to 25 Gigabit"``) and ``NetworkCards[].PeakBandwidthInGbps``. The bulk price
list carries only its ``networkPerformance`` attribute, which says nothing of EFA, so
that path's fabric stays ``unknown`` (never guessed to be EFA from the family).

The instance's own ``NetworkPerformance`` is preferred to the sum of its cards: the
two disagree where a card carries several interfaces (moto's p6-b200.48xlarge lists
8 cards × 200 Gbps = 1,600 but states "3200 Gigabit", which is AWS's published
figure). The cards' sum is used only when the text is not a number ("High").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from tracker.models import Fabric

__all__ = ["gbps_from_performance", "instance_network"]

_PERFORMANCE = re.compile(
    r"^\s*(?:up to\s+)?(?:(\d+)\s*x\s+)?([0-9]+(?:\.[0-9]+)?)\s*gigabit\s*$", re.I
)


def gbps_from_performance(text: Any) -> Decimal | None:
    """``"3200 Gigabit"`` -> 3200, ``"16x 200 Gigabit"`` -> 3200, ``"Up to 25 Gigabit"`` -> 25
    (the burst peak AWS states); None for a text without a figure (``"High"``, ``"NA"``)."""
    match = _PERFORMANCE.match(str(text or ""))
    if match is None:
        return None
    cards = Decimal(match.group(1) or 1)
    value = (cards * Decimal(match.group(2))).normalize()
    return value if value > 0 else None


def _cards_gbps(cards: Any) -> Decimal | None:
    if not isinstance(cards, list) or not cards:
        return None
    total = Decimal(0)
    for card in cards:
        peak = card.get("PeakBandwidthInGbps") if isinstance(card, Mapping) else None
        if peak is None:
            return None
        try:
            total += Decimal(str(peak))
        except InvalidOperation:
            return None
    return total.normalize() if total > 0 else None


def instance_network(item: Mapping[str, Any]) -> tuple[Fabric, Decimal | None]:
    """(fabric, Gbit/s) of one ``DescribeInstanceTypes`` item.

    ``EfaSupported`` true is ``efa``; false is ``ethernet`` (AWS states the instance
    has only its ENA VPC network); absent (the 2020-era items, the bulk path's shaped
    items) is ``unknown``.
    """
    info = item.get("NetworkInfo")
    if not isinstance(info, Mapping):
        return Fabric.UNKNOWN, None
    efa = info.get("EfaSupported")
    fabric = Fabric.EFA if efa is True else Fabric.ETHERNET if efa is False else Fabric.UNKNOWN
    gbps = gbps_from_performance(info.get("NetworkPerformance"))
    if gbps is None:
        gbps = _cards_gbps(info.get("NetworkCards"))
    return fabric, gbps
