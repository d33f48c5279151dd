"""Exchange rates in force over time, and prices converted at read time.

Prices are stored in the provider's own currency only. A USD figure (or one in any
other currency) is computed when read, from the rate in force at the moment that
matters: the latest rate for current offers, the rate at each step for history. So an
unchanged CNY price never opens a new price interval because the yuan moved.

Rates come from the ECB's euro reference rates (``collectors/fx.py``, stored as their
own compact series by ``tracker/store/series/_fx.py``): units of a currency per one euro. The
ECB publishes no USD-based rate, so USD per unit of X is the ratio of two EUR rates::

    USD per X = (USD per EUR) / (X per EUR)

Worked example, ECB 2024-06-28: 1 EUR = 1.0705 USD and 1 EUR = 7.7748 CNY, so
1 CNY = 1.0705 / 7.7748 = 0.137688…  USD, and a 30.00 CNY/hour price is
30.00 × 0.137688… = 4.1306… USD/hour. EUR itself is 1.0705 USD (X per EUR = 1).

The ``fx_rates`` setting (USD per one unit, constant) covers currencies the ECB does
not publish; a currency with ECB rates stored uses those. A currency with neither has
no rate: its offers are left out of USD views with a counted reason, never converted
at 1.0 (:class:`Conversion`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time
from decimal import ROUND_HALF_EVEN, Context, Decimal

from tracker.models import Offer

__all__ = [
    "BASE",
    "NO_RATE_HINT",
    "USD",
    "Conversion",
    "EcbRate",
    "RatePoint",
    "Rates",
    "parse_currency",
    "valid_from",
    "which_missing",
]

BASE = "EUR"
"""The currency the ECB's rates are quoted against (units of X per one EUR)."""
USD = "USD"
NO_RATE_HINT = (
    "run 'gpu-tracker collect -p fx', or set fx_rates for a currency the ECB does not publish"
)
"""What to do about a missing rate, said by every line that counts figures left out."""
_QUANTUM = Decimal("1e-10")  # the store's money scale: figures read like stored ones
_EXACT = Context(prec=80, rounding=ROUND_HALF_EVEN)
"""Wide enough that a stored amount (20 digits) times a factor (28) is exact."""


def _q(value: Decimal) -> Decimal:
    return value.quantize(_QUANTUM, rounding=ROUND_HALF_EVEN)


@dataclass(frozen=True, slots=True)
class EcbRate:
    """One published reference rate: ``per_eur`` units of ``currency`` for one euro on ``day``."""

    currency: str
    day: date
    per_eur: Decimal


def valid_from(day: date) -> datetime:
    """When a reference rate of ``day`` starts being the rate in force: 00:00 UTC that day.

    The ECB publishes around 16:00 CET; a price seen that morning is converted at the
    day's rate, which is the rate the day is known by. The rate stays in force until
    the next published one, so weekends and TARGET holidays carry the last rate.
    """
    return datetime.combine(day, time(0), tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class RatePoint:
    """A stored step of one currency's series: ``per_eur`` from ``valid_from`` on."""

    currency: str
    valid_from: datetime
    per_eur: Decimal


class Rates:
    """Every currency's rate series (EUR-based steps) plus the manual ``fx_rates``."""

    def __init__(
        self, points: Iterable[RatePoint] = (), manual: Mapping[str, Decimal] | None = None
    ) -> None:
        by_currency: dict[str, list[tuple[datetime, Decimal]]] = {}
        for p in points:
            by_currency.setdefault(p.currency, []).append((p.valid_from, p.per_eur))
        self._times: dict[str, list[datetime]] = {}
        self._values: dict[str, list[Decimal]] = {}
        for currency, steps in by_currency.items():
            steps.sort(key=lambda s: s[0])
            self._times[currency] = [t for t, _ in steps]
            self._values[currency] = [v for _, v in steps]
        self.manual: dict[str, Decimal] = dict(manual or {})

    def per_eur(self, currency: str, at: datetime | None = None) -> Decimal | None:
        """Units of ``currency`` per EUR in force at ``at`` (the latest when None)."""
        if currency == BASE:
            return Decimal(1)
        times = self._times.get(currency)
        if not times:
            return None
        if at is None:
            return self._values[currency][-1]
        i = bisect_right(times, at)
        return self._values[currency][i - 1] if i else None

    def usd_per_unit(self, currency: str, at: datetime | None = None) -> Decimal | None:
        """USD for one unit of ``currency`` at ``at`` (latest when None), or None.

        ECB rates first (USD per EUR ÷ X per EUR, see the module docstring), then the
        manual ``fx_rates`` for a currency the ECB series lack; never a guess, and never
        a rate <= 0 (it is no rate). :func:`tracker.store.series.usd_sql` is the same rule in
        SQL; tests/fx/test_one_rule.py checks the two agree.
        """
        if currency == USD:
            return Decimal(1)
        usd, x = self.per_eur(USD, at), self.per_eur(currency, at)
        if usd is not None and x is not None and usd > 0 and x > 0:
            return usd / x
        manual = self.manual.get(currency)
        return manual if manual is not None and manual > 0 else None

    def to_usd(self, amount: Decimal, currency: str, at: datetime | None = None) -> Decimal | None:
        if currency == USD:
            return amount
        rate = self.usd_per_unit(currency, at)
        return None if rate is None else _q(amount * rate)

    def convert(
        self, amount: Decimal, currency: str, target: str, at: datetime | None = None
    ) -> Decimal | None:
        """``amount`` of ``currency`` in ``target`` at ``at``; exact when they are the same."""
        if currency == target:
            return amount
        into = self.converter(currency, target, at)
        return None if into is None else into(amount)

    def converter(
        self, currency: str, target: str, at: datetime | None = None
    ) -> Callable[[Decimal], Decimal] | None:
        """What :meth:`convert` does to an amount of ``currency`` (not ``target``) at
        ``at``, the rates looked up once (None: a rate is missing), for a caller that
        converts many amounts at one time: a big run's alerts.

        The amount times :meth:`factor`, exactly, rounded half-even to the store's
        scale: the alerts written in SQL (:mod:`tracker.store.outbox`) do the
        same arithmetic with the same factor, so both give the same figure."""
        factor = self.factor(currency, target, at)
        if factor is None:
            return None
        return lambda amount: _EXACT.multiply(amount, factor).quantize(_QUANTUM, context=_EXACT)

    def factor(self, currency: str, target: str, at: datetime | None = None) -> Decimal | None:
        """Units of ``target`` for one unit of ``currency`` at ``at`` (USD per unit of
        one over USD per unit of the other, to 28 digits); None when a rate is missing."""
        source_rate, target_rate = self.usd_per_unit(currency, at), self.usd_per_unit(target, at)
        if source_rate is None or target_rate is None or target_rate <= 0:
            return None
        return source_rate / target_rate

    def named(self) -> set[str]:
        """Every currency a rate is stored or set for (at some time, perhaps none now),
        the base and USD."""
        return {*self._times, *self.manual, BASE, USD}

    def currencies(self) -> set[str]:
        """Every currency with a USD figure: stored series, manual rates, the base, USD."""
        return {c for c in self.named() if c == USD or self.knows(c)}

    def knows(self, currency: str) -> bool:
        """Whether any rate (stored or manual) exists for ``currency``."""
        return self.usd_per_unit(currency) is not None

    def covered_from(self, at: datetime) -> set[str]:
        """The currencies with a USD figure at ``at`` and so at every later time (a
        stored step stays in force until the next one; a manual rate always holds)."""
        known = {USD, BASE, *self._times, *self.manual}
        return {c for c in known if self.usd_per_unit(c, at) is not None}


@dataclass
class Conversion:
    """Offers converted for a USD view, and the ones left out for want of a rate.

    ``missing`` counts left-out offers by currency; :meth:`report` is the one line a
    reader shows so nothing disappears silently.
    """

    rates: Rates
    at: datetime | None = None
    missing: Counter[str] = field(default_factory=Counter)

    def usd(self, amount: Decimal, currency: str) -> Decimal | None:
        """``amount`` in USD at the rate in force, or None (counted as missing)."""
        usd = self.rates.to_usd(amount, currency, self.at)
        if usd is None:
            self.missing[currency] += 1
        return usd

    def offer(self, offer: Offer) -> Offer | None:
        """``offer`` with its USD figure at the rate in force, or None (counted)."""
        usd = self.usd(offer.price_per_hour, offer.currency)
        if usd is None:
            return None
        if usd == offer.price_per_hour_usd:
            return offer
        return replace(offer, price_per_hour_usd=usd)

    def offers(self, offers: Iterable[Offer]) -> list[Offer]:
        result = []
        for o in offers:
            converted = self.offer(o)
            if converted is not None:
                result.append(converted)
        return result

    @property
    def skipped(self) -> int:
        return sum(self.missing.values())

    def report(self, view: str = "USD") -> str | None:
        """``2 offers left out of the USD view: no exchange rate for XYZ (2)``, or None."""
        if not self.missing:
            return None
        noun = "offer" if self.skipped == 1 else "offers"
        return (
            f"{self.skipped} {noun} left out of the {view} view: no exchange rate for "
            f"{which_missing(self.missing)} ({NO_RATE_HINT})"
        )


def which_missing(missing: Mapping[str, int]) -> str:
    """``AED (1), XYZ (2)``: the currencies without a rate, each with how many figures
    went without one (the tail of every no-rate line)."""
    return ", ".join(f"{c} ({n})" for c, n in sorted(missing.items()))


def parse_currency(value: str) -> str:
    """An ISO 4217 code as typed (``cny`` → ``CNY``); ValueError for anything else."""
    code = value.strip().upper()
    if len(code) != 3 or not code.isascii() or not code.isalpha():
        raise ValueError(f"currency {value!r}: expected a three-letter ISO 4217 code such as EUR")
    return code
