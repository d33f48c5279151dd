"""``--currency``: the currency a listing shows its figures in (USD by default).

Prices are stored in their own currency; USD (and any other view currency) is computed
from the exchange rate in force (:mod:`tracker.fx`). An offer whose currency has no
rate is left out of the view and counted on stderr, never converted at 1.0. The JSON
keys keep their meaning whatever the view: ``price_per_hour`` + ``currency`` are the
provider's own figure, ``price_per_hour_usd`` the computed USD one, and the
``display_*`` keys the figures in ``display_currency``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from tracker.cli.context import USAGE, CliError, settings_of
from tracker.cli.output import err
from tracker.store import DatabaseError, Engine
from tracker.views import currency as views_currency

__all__ = ["CurrencyOption", "CurrencyView", "currency_view"]

CurrencyOption = Annotated[
    str,
    typer.Option(
        "--currency",
        help="Show figures in this currency (ISO code: USD, EUR, CNY…), converted at the "
        "exchange rate in force; offers are ranked and sorted in USD either way.",
    ),
]


class CurrencyView(views_currency.CurrencyView):
    """The read layer's view, reporting what it left out on stderr."""

    def report(self) -> None:
        for line in (self.report_line(), self.discounts.report()):
            if line:
                err(f"gpu-tracker: {line}")


def currency_view(ctx: typer.Context, engine: Engine, currency: str) -> CurrencyView:
    """The view for ``--currency``: exit 2 for a code that is not one, or one without
    any exchange rate (stored or in ``fx_rates``)."""
    try:
        found = views_currency.load_view(engine, settings_of(ctx), currency)
    except views_currency.UnknownCurrency as exc:
        if not exc.no_rate:
            raise CliError(f"--currency: {exc}", USAGE) from None
        code = exc.code
        raise CliError(
            f"--currency {code}: no exchange rate stored for {code} (run 'gpu-tracker collect "
            f"-p fx', or set fx_rates.{code} for a currency the ECB does not publish)",
            USAGE,
        ) from None
    except DatabaseError as exc:
        raise CliError(str(exc)) from None
    return CurrencyView(found.code, found.rates, discounts=found.discounts)
