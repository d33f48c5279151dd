"""The cheapest way to keep one instance running for the whole horizon.

Each month of the horizon is covered either on-demand (730 hours at the hourly price)
or by a term (12 or 36 months, paid for every hour of the term whether or not the
horizon still needs it): a reservation or a savings plan, at its effective hourly rate. With 18 months, a 1-year term and 6 on-demand months can beat
a 3-year term and two 1-year terms; only a search over the combinations finds which.

Prices are the same every month of a plan (the ones in force when it is made), so
the order of the pieces changes nothing but which term runs past the horizon: the
search is over how many terms of each length and how many on-demand months, at most
``(M/36 + 1) × (M/12 + 1)`` combinations (55 for 120 months), instead of a shortest
path over months. Of two terms of one length only the cheaper can be in the best
cover. Everything is exact ``Decimal``. Of equally cheap covers the one with fewer
committed months wins (a term that costs exactly what on-demand does is never
chosen), then the one with fewer long terms; terms come first and on-demand months
last, so the end of the horizon stays free to re-plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from itertools import product

__all__ = ["HOURS_PER_MONTH", "Cover", "Segment", "Term", "cheapest_cover"]

HOURS_PER_MONTH = 730
"""8,760 h / 12: the month AWS, Azure and GCP quote and bill reservations against."""

ON_DEMAND = "on_demand"


@dataclass(frozen=True, slots=True)
class Term:
    """A commitment one instance can be bought on: ``months`` long at an hourly rate."""

    pricing: str
    months: int
    hourly: Decimal
    """Effective USD per hour of the term (upfront spread over it)."""
    payment_option: str = ""
    plan_type: str = ""
    """A savings plan's type (``ec2_instance``, ``compute``); empty for a reservation."""

    @property
    def cost(self) -> Decimal:
        return self.hourly * self.months * HOURS_PER_MONTH


@dataclass(frozen=True, slots=True)
class Segment:
    pricing: str
    from_month: int
    """1-based, as people count months."""
    months: int
    """Months of the horizon it covers (a term running past the horizon covers fewer
    than ``term_months`` and is still paid in full)."""
    term_months: int | None = None
    payment_option: str = ""
    cost: Decimal = Decimal(0)
    plan_type: str = ""

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "pricing": self.pricing,
            "from_month": self.from_month,
            "months": self.months,
        }
        if self.term_months is not None:
            out["term_months"] = self.term_months
        if self.payment_option:
            out["payment_option"] = self.payment_option
        if self.plan_type:
            out["plan_type"] = self.plan_type
        return out


@dataclass(frozen=True, slots=True)
class Cover:
    cost: Decimal
    """For one instance over the horizon."""
    segments: tuple[Segment, ...]

    @property
    def committed(self) -> bool:
        return any(s.pricing != ON_DEMAND for s in self.segments)


def cheapest_cover(
    months: int, on_demand_hourly: Decimal | None, terms: list[Term]
) -> Cover | None:
    """The cheapest cover of one instance over ``months``, or None when no price can
    cover some month (no on-demand price and no term)."""
    if months < 1:
        raise ValueError(f"horizon of {months} months: at least 1")
    month_cost = None if on_demand_hourly is None else on_demand_hourly * HOURS_PER_MONTH
    cheapest: dict[int, Term] = {}
    for t in terms:
        if t.months not in cheapest or t.cost < cheapest[t.months].cost:
            cheapest[t.months] = t
    kinds = [cheapest[n] for n in sorted(cheapest, reverse=True)]
    pairs = [(t.months, t.cost) for t in kinds]
    best: tuple[Decimal, int, tuple[int, ...]] | None = None
    # Plain loops, no generators: a plan over 25,000 instance types runs this 25,000 times.
    for counts in product(*(range(-(-months // length) + 1) for length, _ in pairs)):
        covered, cost = 0, Decimal(0)
        for n, (length, term_cost) in zip(counts, pairs, strict=True):
            if n:
                covered += n * length
                cost += n * term_cost
        left = months - covered
        if left > 0:
            if month_cost is None:
                continue
            cost += left * month_cost
        key = (cost, min(covered, months), counts)
        if best is None or key < best:
            best = key
    if best is None:
        return None
    return Cover(best[0], _segments(months, best[2], kinds, month_cost))


def _segments(
    months: int, counts: tuple[int, ...], kinds: list[Term], month_cost: Decimal | None
) -> tuple[Segment, ...]:
    segments: list[Segment] = []
    at = 0
    for n, term in zip(counts, kinds, strict=True):
        for _ in range(n):
            covers = min(term.months, months - at)
            segments.append(
                Segment(
                    term.pricing,
                    at + 1,
                    covers,
                    term_months=term.months,
                    payment_option=term.payment_option,
                    cost=term.cost,
                    plan_type=term.plan_type,
                )
            )
            at += covers
    if at < months:
        assert month_cost is not None
        segments.append(Segment(ON_DEMAND, at + 1, months - at, cost=month_cost * (months - at)))
    return tuple(segments)
