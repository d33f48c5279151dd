"""The net price beside the list price in every row that shows an offer's price.

The account's discounts (``[[discounts]]``, :mod:`tracker.discounts`) are applied here,
when read, from the :class:`~tracker.views.currency.CurrencyView` every face already
builds from the settings: a face that shows list prices shows net ones with no code of
its own. Keys are always present (no rule: net = list, ``discount`` None), so the JSON
shape does not depend on the settings; a table shows its "your price" column only when
rules exist.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from tracker.discounts import Net
from tracker.models import Offer
from tracker.views.currency import CurrencyView

__all__ = ["NET_OFFER_KEYS", "PER_GPU", "net_fields", "net_usd", "per_gpu"]

NET_OFFER_KEYS = (
    "net_price_per_hour",
    "net_price_per_hour_usd",
    "net_price_per_gpu_hour_usd",
    "display_net_price_per_hour",
    "display_net_price_per_gpu_hour",
    "discount",
)
"""What an offer row carries about its net price, after its list figures."""

PER_GPU = Decimal("1e-6")
"""Per-GPU figures to a millionth, as the list ones (tracker.views.offers)."""


def per_gpu(value: Decimal | None, gpu_count: Decimal) -> Decimal | None:
    return None if value is None else (value / gpu_count).quantize(PER_GPU)


def net_fields(
    offer: Offer, view: CurrencyView | None, at: datetime | None = None
) -> dict[str, Any]:
    """:data:`NET_OFFER_KEYS` for ``offer`` (its USD figure converted) at ``at``; with
    no view (USD, no rules) the net figures are the list ones."""
    net = view.net(offer, at) if view is not None else Net(offer.price_per_hour, offer.usd)
    shown = net.price_per_hour_usd
    if view is not None and shown is not None:
        shown = view.show(shown, original=net.price_per_hour, currency=offer.currency, at=at)
    return {
        "net_price_per_hour": net.price_per_hour,
        "net_price_per_hour_usd": net.price_per_hour_usd,
        "net_price_per_gpu_hour_usd": per_gpu(net.price_per_hour_usd, offer.gpu_count),
        "display_net_price_per_hour": shown,
        "display_net_price_per_gpu_hour": per_gpu(shown, offer.gpu_count),
        "discount": net.rule,
    }


def net_usd(offer: Offer, view: CurrencyView, at: datetime | None = None) -> Decimal:
    """The net USD price ``offer`` is ranked by (its list USD without a rule)."""
    usd = view.net(offer, at).price_per_hour_usd
    return offer.usd if usd is None else usd
