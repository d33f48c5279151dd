"""The currency a read shows its figures in (USD by default), and the rates it uses.

Prices are stored in their own currency; USD (and any other view currency) is computed
from the exchange rate in force (:mod:`tracker.fx`): the stored ECB series plus the
configured ``fx_rates``, which is why :func:`load_view` takes the settings. An offer
whose currency has no rate is left out of the view and counted, never converted at 1.0.
The JSON keys keep their meaning whatever the view: ``price_per_hour`` + ``currency`` are
the provider's own figure, ``price_per_hour_usd`` the computed USD one, and the
``display_*`` keys the figures in ``display_currency``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from tracker.discounts import Discounts, Net
from tracker.fx import USD, Conversion, Rates, parse_currency, which_missing
from tracker.models import Offer
from tracker.settings import Settings
from tracker.store import Engine
from tracker.store import series as fx_store
from tracker.views.errors import ReadError

__all__ = ["CurrencyView", "UnknownCurrency", "load_discounts", "load_rates", "load_view"]


class UnknownCurrency(ReadError):
    """A view currency that is not an ISO code, or has no exchange rate at all."""

    def __init__(self, code: str, message: str, *, no_rate: bool) -> None:
        super().__init__(message)
        self.code = code
        self.no_rate = no_rate


class CurrencyView:
    """USD conversion of offers plus the figures in the view currency ``code``, and the
    account's discounts (applied when read, like the rates: :mod:`tracker.discounts`)."""

    def __init__(
        self,
        code: str,
        rates: Rates,
        at: datetime | None = None,
        discounts: Discounts | None = None,
    ) -> None:
        self.code = code
        self.rates = rates
        self.usd = Conversion(rates, at)
        self.discounts = discounts if discounts is not None else Discounts((), rates)

    def net(self, offer: Offer, at: datetime | None = None) -> Net:
        """What ``offer`` (with its USD figure) costs the account at ``at`` (the view's
        moment, else now): the rule in force then, or list price."""
        moment = at or self.usd.at or datetime.now(UTC)
        return self.discounts.of_offer(offer, moment)

    @property
    def symbol(self) -> str:
        """The table header's unit: ``$`` for USD, else the code (``CNY/h``)."""
        return "$" if self.code == USD else self.code

    def offer(self, offer: Offer) -> Offer | None:
        """The offer with its USD figure at the latest rate, or None (counted)."""
        return self.usd.offer(offer)

    def show(
        self,
        usd: Decimal,
        *,
        original: Decimal | None = None,
        currency: str | None = None,
        at: datetime | None = None,
    ) -> Decimal | None:
        """A USD figure in the view currency (None when the view currency had no rate
        yet at ``at``); the provider's own figure unchanged when it is already in the
        view currency (exact, no round trip through USD)."""
        if original is not None and currency == self.code:
            return original
        return self.rates.convert(usd, USD, self.code, at if at is not None else self.usd.at)

    def missing_line(self, noun: str) -> str | None:
        """``2 <noun>s have no EUR figure: no exchange rate for XYZ (2)`` (``noun``
        singular: ``1 <noun> has``), or None."""
        if not self.usd.missing:
            return None
        n = self.usd.skipped
        counted = f"{n} {noun} has" if n == 1 else f"{n} {noun}s have"
        which = which_missing(self.usd.missing)
        return f"{counted} no {self.code} figure: no exchange rate for {which}"

    def report_line(self) -> str | None:
        """``2 offers left out of the EUR view: …`` for what this view left out, or None."""
        return self.usd.report(self.code)


def load_rates(engine: Engine, settings: Settings) -> Rates:
    """The stored ECB rates plus ``settings.fx_rates`` (raises DatabaseError)."""
    return fx_store.load_rates(engine, settings.fx_rates)


def load_view(
    engine: Engine, settings: Settings, currency: str = USD, at: datetime | None = None
) -> CurrencyView:
    """The view in ``currency`` at the rates in force at ``at`` (the latest when None);
    :class:`UnknownCurrency` for a code that is not one, or one without any exchange
    rate stored or in ``fx_rates`` (raises DatabaseError)."""
    try:
        code = parse_currency(currency)
    except ValueError as exc:
        raise UnknownCurrency(currency, str(exc), no_rate=False) from None
    rates = load_rates(engine, settings)
    if not rates.knows(code):
        raise UnknownCurrency(code, f"no exchange rate stored for {code}", no_rate=True)
    return CurrencyView(code, rates, at, load_discounts(settings, rates))


def load_discounts(settings: Settings, rates: Rates) -> Discounts:
    """The settings' ``[[discounts]]`` with the rates a fixed net price converts at."""
    return Discounts(tuple(settings.discounts), rates)
