"""EC2 spot price history -> spot offers per zone, each at its own timestamp (pure).

Items from ``DescribeSpotPriceHistory`` and the region's hardware go in; offers
come out oldest first. An item that cannot be priced raises
:class:`~collectors.base.SkipItem` and is reported to the caller's skip sink.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from collectors.aws_hardware import PROVIDER, InstanceHardware
from collectors.base import SkipItem, SkipSink, parse_each
from tracker.models import AttributeValue, InvalidOffer, Offer, PricingModel, to_decimal

__all__ = ["SpotRisk", "parse_spot_history"]


@dataclass(frozen=True, slots=True)
class SpotRisk:
    """Spot Instance Advisor figures for one region/instance type (Linux)."""

    interruption_bucket: str
    interruption_max_pct: int
    spot_savings_pct: int

    def attributes(self) -> dict[str, AttributeValue]:
        return {
            "interruption_bucket": self.interruption_bucket,
            "interruption_max_pct": self.interruption_max_pct,
            "spot_savings_pct": self.spot_savings_pct,
        }


def _timestamp(value: Any, where: str) -> datetime:
    if isinstance(value, datetime):
        ts = value
    elif isinstance(value, str):
        try:
            ts = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidOffer(where, f"bad Timestamp {value!r}") from None
    else:
        raise InvalidOffer(where, f"bad Timestamp {value!r}")
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return ts.astimezone(UTC)


def parse_spot_history(
    items: Iterable[Mapping[str, Any]],
    hardware: Mapping[str, InstanceHardware],
    skip: SkipSink,
    *,
    region: str,
    risk: Mapping[str, SpotRisk] | None = None,
) -> list[Offer]:
    """``SpotPriceHistory`` items -> one spot offer per item, dated at its ``Timestamp``.

    Offers are returned oldest first, so a store that applies them in order keeps
    each price change at its own time. AWS also returns, per zone, the price in
    effect at ``StartTime`` (dated before it): it is kept, because it is what
    shows the store that the zone is still offered when nothing changed since the
    last run (the store counts it as already known). ``risk`` maps instance type
    to Spot Advisor figures for this region.
    """

    def parse(item: Mapping[str, Any]) -> tuple[datetime, Offer]:
        return _dated_offer(item, hardware, region, risk)

    dated = list(parse_each(items, parse, skip))
    dated.sort(key=lambda pair: (pair[0], pair[1].zone, pair[1].instance_type))
    return [offer for _, offer in dated]


def _dated_offer(
    item: Mapping[str, Any],
    hardware: Mapping[str, InstanceHardware],
    region: str,
    risk: Mapping[str, SpotRisk] | None,
) -> tuple[datetime, Offer]:
    """One history item as (its timestamp, a spot offer); raises SkipItem when it
    cannot be priced."""
    instance_type = item.get("InstanceType", "")
    zone = item.get("AvailabilityZone", "")
    where = f"spot {instance_type or '?'} {zone or region}"
    hw = hardware.get(instance_type)
    if hw is None:
        raise SkipItem(
            "unknown_gpu", f"{where}: no GPU/accelerator data from DescribeInstanceTypes"
        )
    description = item.get("ProductDescription", "")
    if not description.startswith("Linux/UNIX"):
        raise SkipItem("filtered_attributes", f"{where}: ProductDescription {description!r}")
    try:
        ts = _timestamp(item.get("Timestamp"), f"{where}.Timestamp")
        price = to_decimal(item.get("SpotPrice"), f"{where}.SpotPrice")
    except InvalidOffer as exc:
        raise SkipItem("malformed_spot_item", str(exc)) from None
    if price <= 0:
        raise SkipItem("zero_price", f"{where}: SpotPrice {price}")
    attrs = hw.attributes()
    advice = risk.get(instance_type) if risk else None
    if advice is not None:
        attrs.update(advice.attributes())
    try:
        offer = Offer(
            provider=PROVIDER,
            instance_type=instance_type,
            region=region,
            zone=zone,
            pricing=PricingModel.SPOT,
            price_per_hour=price,
            currency="USD",
            observed_at=ts,
            attributes=attrs,
            **hw.offer_fields(),
        )
    except InvalidOffer as exc:
        raise SkipItem("malformed_spot_item", f"{where}: {exc}") from None
    return ts, offer
