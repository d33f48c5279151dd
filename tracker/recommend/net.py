"""The recommender's offers at the net price the account pays (``[[discounts]]``).

Recommendations and the ranking alerts rank by what a team pays, so the rows the
ranking reads carry the net figures in the price columns (own currency and USD, which
an Offer keeps equal for a USD price), converted and discounted when read
(:mod:`tracker.discounts`); nothing stored changes. The list figure and the rule ride
along in the row's attributes under :data:`LIST_KEY` and :data:`RULE_KEY` so a ranking
row shows both. A reservation's ``upfront_usd`` and
``recurring_hourly_usd`` (from which the effective rate is recomputed exactly) are
scaled by the same percentage; a fixed net price is the effective rate itself, so they
are dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from tracker.discounts import Discounts
from tracker.models import OFFER_COLUMNS, Offer

__all__ = ["LIST_KEY", "RULE_KEY", "list_and_rule", "net_rows"]

LIST_KEY = "list_price_per_hour_usd"
"""The offer's USD list price, kept beside the net one the ranking used."""
RULE_KEY = "discount"
"""The discount rule that set the net price."""

_NAMES = [c.name for c in OFFER_COLUMNS]
_AT = {name: i for i, name in enumerate(_NAMES)}
_KEY = tuple(_AT[n] for n in ("provider", "pricing", "instance_type", "region"))
_PRICE, _CURRENCY = _AT["price_per_hour"], _AT["currency"]
_USD, _ATTRIBUTES = _AT["price_per_hour_usd"], _AT["attributes"]
_TERM_PARTS = ("upfront_usd", "recurring_hourly_usd")


def _decoded(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):
        found = json.loads(value)
        return dict(found) if isinstance(found, dict) else {}
    return dict(value)


def _attributes(raw: Any, list_usd: Decimal, rule: str, keep: Decimal | None) -> dict[str, Any]:
    attrs = _decoded(raw)
    for part in _TERM_PARTS:
        if part in attrs:
            if keep is None:
                del attrs[part]
            else:
                try:
                    attrs[part] = str(Decimal(str(attrs[part])) * keep)
                except ArithmeticError:
                    del attrs[part]
    attrs[LIST_KEY] = str(list_usd)
    attrs[RULE_KEY] = rule
    return attrs


def net_rows(
    rows: Iterable[Sequence[Any]], discounts: Discounts, at: datetime
) -> list[tuple[Any, ...]]:
    """``rows`` (laid out like OFFER_COLUMNS, USD converted) at the net USD price."""
    if not discounts:
        return [tuple(r) for r in rows]
    out = []
    for r in rows:
        key = (str(r[_KEY[0]]), str(r[_KEY[1]]), str(r[_KEY[2]]), str(r[_KEY[3]]))
        usd = r[_USD]
        net = discounts.net(key, Decimal(str(r[_PRICE])), str(r[_CURRENCY]), usd, at)
        if net.rule is None or net.price_per_hour_usd is None:
            out.append(tuple(r))
            continue
        rule = discounts.rule_for(*key, at)
        keep = None
        if rule is not None and rule.percent is not None:
            keep = (Decimal(100) - rule.percent) / Decimal(100)
        row = list(r)
        row[_PRICE], row[_USD] = net.price_per_hour, net.price_per_hour_usd
        row[_ATTRIBUTES] = _attributes(r[_ATTRIBUTES], usd, net.rule, keep)
        out.append(tuple(row))
    return out


def list_and_rule(offer: Offer) -> tuple[Decimal | None, str | None]:
    """The USD list price and the rule of an offer :func:`net_rows` discounted, else
    its own USD figure and None."""
    attrs: Mapping[str, Any] = offer.attributes or {}
    rule = attrs.get(RULE_KEY)
    listed = attrs.get(LIST_KEY)
    if isinstance(rule, str) and listed is not None:
        return Decimal(str(listed)), rule
    return offer.price_per_hour_usd, None
