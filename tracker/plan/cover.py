"""The cheapest way to keep one instance running for the whole horizon.

Each month of the horizon is covered either on-demand (730 hours at the hourly price)
or by a term that starts that month (12 or 36 months, paid for every hour of the term
whether or not the horizon still needs it). That is a shortest path over months
0..M: from month ``s`` one step of one month on-demand, or one jump of a term to
``min(s + term, M)``. With 18 months, a 1-year term and 6 on-demand months can beat a
3-year term and two 1-year terms; only a search over the sequences finds which.
Everything is exact ``Decimal``. Of equally cheap sequences the one ending on-demand
wins: the commitment comes first and the end of the horizon stays free to re-plan,
and a term that costs exactly what on-demand does is never chosen.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

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
    """The cheapest sequence for one instance over ``months``, or None when no price
    can cover some month (no on-demand price and no term reaching it)."""
    if months < 1:
        raise ValueError(f"horizon of {months} months: at least 1")
    month_cost = None if on_demand_hourly is None else on_demand_hourly * HOURS_PER_MONTH
    best: list[Decimal | None] = [Decimal(0)] + [None] * months
    step: list[tuple[int, Term | None] | None] = [None] * (months + 1)
    for start in range(months):
        so_far = best[start]
        if so_far is None:
            continue
        moves: list[tuple[int, Decimal, Term | None]] = []
        if month_cost is not None:
            moves.append((start + 1, month_cost, None))
        moves.extend((min(start + t.months, months), t.cost, t) for t in terms)
        for end, cost, term in moves:
            total = so_far + cost
            current = best[end]
            # On a tie the on-demand step wins: commit early, keep the end free to re-plan.
            if current is None or total < current or (total == current and term is None):
                best[end], step[end] = total, (start, term)
    final = best[months]
    if final is None:
        return None
    return Cover(final, _segments(step, months, month_cost))


def _segments(
    step: list[tuple[int, Term | None] | None], months: int, month_cost: Decimal | None
) -> tuple[Segment, ...]:
    moves: list[tuple[int, int, Term | None]] = []
    end = months
    while end > 0:
        back = step[end]
        assert back is not None  # every reached month has its step
        moves.append((back[0], end, back[1]))
        end = back[0]
    segments: list[Segment] = []
    for start, stop, term in reversed(moves):
        if term is None:
            last = segments[-1] if segments else None
            cost = month_cost or Decimal(0)
            if last is not None and last.pricing == ON_DEMAND:
                segments[-1] = Segment(
                    ON_DEMAND, last.from_month, last.months + 1, cost=last.cost + cost
                )
            else:
                segments.append(Segment(ON_DEMAND, start + 1, 1, cost=cost))
        else:
            segments.append(
                Segment(
                    term.pricing,
                    start + 1,
                    stop - start,
                    term_months=term.months,
                    payment_option=term.payment_option,
                    cost=term.cost,
                )
            )
    return tuple(segments)
