"""``--currency``: the currency a listing shows its figures in (USD by default).

Prices are stored in their own currency; USD (and any other view currency) is computed
from the exchange rate in force (:mod:`tracker.fx`). An offer whose currency has no
rate is left out of the view and counted on stderr, never converted at 1.0. The JSON
keys keep their meaning whatever the view: ``price_per_hour`` + ``currency`` are the
provider's own figure, ``price_per_hour_usd`` the computed USD one, and the
``display_*`` keys the figures in ``display_currency``.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated

import typer

from tracker.cli.context import USAGE, CliError, settings_of
from tracker.cli.output import err
from tracker.fx import USD, Conversion, Rates, parse_currency, which_missing
from tracker.models import Offer
from tracker.store import fx as fx_store
from tracker.store.engine import DatabaseError, Engine

__all__ = ["CurrencyOption", "CurrencyView", "currency_view"]

CurrencyOption = Annotated[
    str,
    typer.Option(
        "--currency",
        help="Show figures in this currency (ISO code: USD, EUR, CNY…), converted at the "
        "exchange rate in force; offers are ranked and sorted in USD either way.",
    ),
]


class CurrencyView:
    """USD conversion of offers plus the figures in the view currency ``code``."""

    def __init__(self, code: str, rates: Rates, at: datetime | None = None) -> None:
        self.code = code
        self.rates = rates
        self.usd = Conversion(rates, at)

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

    def report(self) -> None:
        line = self.usd.report(self.code)
        if line:
            err(f"gpu-tracker: {line}")


def currency_view(ctx: typer.Context, engine: Engine, currency: str) -> CurrencyView:
    """The view for ``--currency``: exit 2 for a code that is not one, or one without
    any exchange rate (stored or in ``fx_rates``)."""
    try:
        code = parse_currency(currency)
    except ValueError as exc:
        raise CliError(f"--currency: {exc}", USAGE) from None
    try:
        rates = fx_store.load_rates(engine, settings_of(ctx).fx_rates)
    except DatabaseError as exc:
        raise CliError(str(exc)) from None
    if not rates.knows(code):
        raise CliError(
            f"--currency {code}: no exchange rate stored for {code} (run 'gpu-tracker collect "
            f"-p fx', or set fx_rates.{code} for a currency the ECB does not publish)",
            USAGE,
        )
    return CurrencyView(code, rates)
