"""The exchange rates a request converts with: the store's ECB series plus ``fx_rates``.

Prices are stored in their own currency, so every page and /api/v1 route that shows or
ranks USD builds its view here, as ``offers --currency`` does in the CLI, but a bad
``currency`` parameter is the web's one-line 400 instead of exit 2. Offers whose
currency has no rate are left out and counted (logged for the API, shown on the pages).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime

from tracker.fx import USD, Conversion, Rates
from tracker.views.currency import CurrencyView, UnknownCurrency, load_view
from tracker.web.context import WebContext
from tracker.web.errors import BadRequest

__all__ = ["currency_view", "left_out_line", "log_left_out", "page_view"]

log = logging.getLogger(__name__)


def currency_view(
    context: WebContext, currency: str = USD, at: datetime | None = None
) -> CurrencyView:
    """The view in ``currency`` at the rates in force at ``at`` (the latest when None,
    as the CLI's); raises BadRequest for a code that is not one, or one without any
    rate stored or in ``fx_rates``."""
    try:
        return load_view(context.engine, context.settings, currency, at)
    except UnknownCurrency as exc:
        if not exc.no_rate:
            raise BadRequest(f"currency: {exc}") from None
        code = exc.code
        raise BadRequest(
            f"currency: no exchange rate stored for {code} (collect the fx source, or set "
            f"fx_rates.{code} for a currency the ECB does not publish)"
        ) from None


def page_view(context: WebContext) -> tuple[CurrencyView, datetime]:
    """The pages' USD view and the moment it reads the rates at: the SQL that ranks and
    the Python that shows must use the same rates in force, so both take this ``at``."""
    now = datetime.now(UTC)
    return currency_view(context, USD, now), now


def left_out_line(missing: dict[str, int]) -> str | None:
    """``2 offers left out: no exchange rate for XYZ (2)`` for a page, or None."""
    if not missing:
        return None
    total = sum(missing.values())
    which = ", ".join(f"{c} ({n})" for c, n in sorted(missing.items()))
    noun = "offer" if total == 1 else "offers"
    return f"{total} {noun} left out: no exchange rate for {which}"


def log_left_out(route: str, missing: Mapping[str, int], view: str = USD) -> None:
    """Log the offers ``route`` left out for want of an exchange rate, by currency (the
    line the CLI prints on stderr), so an API answer never drops them silently."""
    line = Conversion(Rates(), missing=Counter(missing)).report(view)
    if line:
        log.warning("%s: %s", route, line)
