"""GCP persistent disk and internet egress prices from the Cloud Billing Catalog.

They are Compute Engine SKUs, in the same catalog download as the machine prices
(:mod:`collectors.gcp`), so they cost no extra request. What is read, each shape seen in
public captures of the catalog (tests/fixtures/gcp/SOURCES.md):

* ``Storage PD Capacity in <location>`` (``resourceGroup`` ``PDStandard``, pd-standard)
  is ``block_storage_hdd``; ``SSD backed PD Capacity in <location>`` (``SSD``, pd-ssd) is
  ``block_storage_ssd``. Both are priced per ``GiBy.mo`` (gibibyte-month), stored as
  GB-month one for one: the project counts 1 TB as 1,024 GB, i.e. its GB is the GiB.
  Regional (replicated) PD, balanced PD, Hyperdisk, snapshots and images are not read
  (no public capture of a balanced-PD SKU was found).
* ``Network Internet Egress from <source> to <destination>`` (``resourceGroup``
  ``PremiumInternetEgress``: the Premium network tier, the default; Standard tier and
  VPN egress are other groups) is ``egress_internet``, per ``GiBy`` in tiers whose
  ``startUsageAmount`` is GiB a month (aggregated per account and month). China and
  Australia destinations are priced apart by Google and left out; when the other
  destinations of one region differ, the **dearest** ladder is kept (a plan does not
  know where its users are, and the dearest is the bound it can count on).

Only ``usageType`` OnDemand is read; a SKU's ``serviceRegions`` are the regions it prices.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Any

from collectors.base import SkipItem, SkipSink, parse_each
from collectors.gcp_skus import money_amount
from tracker.service_prices import ServiceKind, ServicePrice

__all__ = [
    "EGRESS_GROUP",
    "SERVICE_FAMILIES",
    "classify_service",
    "parse_service_skus",
    "sku_tiers",
]

log = logging.getLogger(__name__)

PROVIDER = "gcp"
_DISKS: dict[str, tuple[ServiceKind, str]] = {
    "storage pd capacity": (ServiceKind.BLOCK_STORAGE_HDD, "PDStandard"),
    "ssd backed pd capacity": (ServiceKind.BLOCK_STORAGE_SSD, "SSD"),
}
EGRESS_GROUP = "PremiumInternetEgress"
SERVICE_FAMILIES = frozenset({"Storage", "Network"})
"""The resource families of every SKU :func:`classify_service` may read."""
_EGRESS = re.compile(r"^Network Internet Egress from (?P<source>.+?) to (?P<to>.+)$")
PRICED_APART = frozenset({"China", "Australia"})
_UNIT = {ServiceKind.EGRESS_INTERNET: "GiBy"}
_STORAGE_UNIT = "GiBy.mo"

Tier = tuple[Decimal, Decimal]  # (start GiB, price per unit)


def classify_service(sku: Any) -> ServiceKind | None:
    """Which service ``sku`` (a ``billing_v1.Sku``) prices, or None when none we read."""
    category = sku.category
    if str(category.usage_type or "") != "OnDemand":
        return None
    description = " ".join(str(sku.description or "").split())
    group = str(category.resource_group or "")
    family = str(category.resource_family or "")
    if family == "Storage":
        found = _DISKS.get(description.rsplit(" in ", 1)[0].lower())
        if found is None:
            return None
        if group != found[1]:
            raise SkipItem(
                "inconsistent_sku",
                f"SKU {sku.sku_id} {description!r}: resourceGroup {group!r}, expected {found[1]!r}",
            )
        return found[0]
    if family == "Network" and group == EGRESS_GROUP:
        match = _EGRESS.match(description)
        if match is None:
            raise SkipItem(
                "unrecognised_sku", f"SKU {sku.sku_id} {description!r}: no known pattern"
            )
        return None if match["to"] in PRICED_APART else ServiceKind.EGRESS_INTERNET
    return None


def sku_tiers(sku: Any, kind: ServiceKind) -> tuple[str, list[Tier]]:
    """(currency, tiers by start) of the SKU's current pricing; raises SkipItem when
    the unit is not the service's, a price is unreadable, or the tiers do not start at 0.
    A free storage price is a skip (``zero_price``); a free egress tier is real."""
    where = f"SKU {sku.sku_id} {sku.description!r}"
    if not sku.pricing_info:
        raise SkipItem("no_pricing_info", f"{where}: no pricingInfo")
    expression = sku.pricing_info[-1].pricing_expression
    unit, expected = str(expression.usage_unit or ""), _UNIT.get(kind, _STORAGE_UNIT)
    if unit != expected:
        raise SkipItem("unexpected_unit", f"{where}: usageUnit {unit!r}, expected {expected!r}")
    currencies: set[str] = set()
    tiers: list[Tier] = []
    for rate in expression.tiered_rates:
        currencies.add(str(rate.unit_price.currency_code or "").upper())
        price = money_amount(rate.unit_price, where)
        if price < 0 or (price == 0 and kind is not ServiceKind.EGRESS_INTERNET):
            raise SkipItem("zero_price" if price == 0 else "bad_price", f"{where}: price {price}")
        # startUsageAmount is a double in the API: a whole number of GiB as an integer,
        # anything else in its shortest decimal form (repr).
        start = float(rate.start_usage_amount)
        tiers.append((Decimal(int(start)) if start.is_integer() else Decimal(repr(start)), price))
    tiers.sort()
    if len(currencies) != 1 or not re.fullmatch(r"[A-Z]{3}", next(iter(currencies))):
        raise SkipItem("bad_price", f"{where}: currencyCode {sorted(currencies)}")
    starts = [start for start, _ in tiers]
    if starts[0] != 0 or len(set(starts)) != len(starts):
        raise SkipItem("missing_tier", f"{where}: tiers start at {starts}")
    return currencies.pop(), tiers


Ladder = tuple[str, tuple[Tier, ...]]  # (currency, tiers)


def _dearer(a: Ladder, b: Ladder) -> Ladder:
    """The ladder with the higher first differing price (same currency assumed)."""
    return max(a, b, key=lambda ladder: [price for _, price in ladder[1]])


def parse_service_skus(
    skus: Iterable[Any], skip: SkipSink, *, regions: frozenset[str] = frozenset()
) -> Iterator[ServicePrice]:
    """Storage and egress prices per region from catalog SKUs (``regions`` empty = all).

    Two disk SKUs pricing one region differently make it ambiguous: it is a
    ``conflicting_sku`` skip and no price is kept for it.
    """

    def read(sku: Any) -> tuple[Any, ServiceKind, Ladder] | None:
        kind = classify_service(sku)
        if kind is None:
            return None
        if not sku.service_regions:
            raise SkipItem(
                "malformed_item", f"SKU {sku.sku_id} {sku.description!r}: no serviceRegions"
            )
        if regions and not regions.intersection(sku.service_regions):
            return None
        currency, tiers = sku_tiers(sku, kind)
        return sku, kind, (currency, tuple(tiers))

    chosen: dict[tuple[str, ServiceKind], Ladder | None] = {}
    for sku, kind, ladder in parse_each(skus, read, skip):
        for region in sku.service_regions:
            if regions and region not in regions:
                continue
            key = (region, kind)
            held = chosen.get(key, ladder)
            if held is None or held == ladder:
                chosen[key] = held
            elif held[0] != ladder[0]:
                skip(
                    "mixed_currency", f"SKU {sku.sku_id}: {region} {kind} in {held[0]}, {ladder[0]}"
                )
            elif kind is ServiceKind.EGRESS_INTERNET:
                chosen[key] = _dearer(held, ladder)
                log.debug("gcp: %s egress destinations differ; the dearest is kept", region)
            else:
                skip("conflicting_sku", f"SKU {sku.sku_id}: another SKU prices {kind} in {region}")
                chosen[key] = None
    for (region, kind), held in sorted(chosen.items()):
        if held is None:
            continue
        currency, tiers = held
        for (start, price), end in zip(tiers, [*(s for s, _ in tiers[1:]), None], strict=True):
            yield ServicePrice(
                PROVIDER, region, kind, kind.unit, price, currency,
                tier_start_gb=start, tier_end_gb=end,
            )  # fmt: skip
