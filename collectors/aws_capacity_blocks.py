"""AWS EC2 Capacity Blocks for ML: ``DescribeCapacityBlockOfferings`` -> capacity-block offers.

A Capacity Block is 1-64 instances of one type held for a fixed window (1-14 days in
whole days, then weeks up to 182 days) from a start date, for one upfront fee. Each
is stored as an offer priced per instance-hour, ``fee / (instances × hours)`` (hours
include ``CapacityBlockDurationMinutes`` ÷ 60), pricing ``capacity_block``, with the
block's own instance count, hours, start and end, fee and offering id as attributes
(:mod:`tracker.capacity_blocks` reads them back).

Identity. An offering's start date moves every day and AWS answers a 24-hour query
with 19- and 43-hour blocks too, so neither can be in the offer's identity without an
unbounded number of series. The identity is the *shape asked for*:
``offering_class`` ``"<instances>x<hours>h"`` (``"8x24h"``) from the configured
``aws.capacity_block_instance_counts`` × ``aws.capacity_block_hours``, per type and
zone. Of the offerings one query returns for a zone, the one whose shape is exactly
the one asked for is kept (cheapest per instance-hour, then earliest start); failing
that, the cheapest of the others, its real shape in the attributes. So the series
count is bounded by types × zones × configured shapes, and each reads "what a block
of this shape costs to book now".

UltraServer offerings (``UltraserverType``) are priced per UltraServer, not per
instance, and are a counted skip, as is an offering of a type without hardware.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from collectors.aws_hardware import PROVIDER, InstanceHardware
from collectors.base import SkipItem, SkipSink
from tracker.capacity_blocks import END, FEE, HOURS, INSTANCES, START, valid_block_hours
from tracker.models import AttributeValue, InvalidOffer, Offer, PricingModel

__all__ = [
    "BlockShape",
    "fetch_capacity_block_offerings",
    "parse_capacity_block_offerings",
    "shapes_of",
]

MAX_INSTANCES = 64
PRICE_PLACES = Decimal("0.0000000001")
"""The store's price scale: a re-collected block reads back as the same price."""


@dataclass(frozen=True, slots=True)
class BlockShape:
    """One configured query: ``instances`` instances for ``hours`` hours."""

    instances: int
    hours: int

    def __post_init__(self) -> None:
        if not 1 <= self.instances <= MAX_INSTANCES or not valid_block_hours(self.hours):
            raise ValueError(f"not a capacity block shape: {self.instances} × {self.hours} h")

    @property
    def label(self) -> str:
        """The offer's ``offering_class``: the shape asked for, its identity."""
        return f"{self.instances}x{self.hours}h"


def fetch_capacity_block_offerings(
    ec2: Any, instance_type: str, shape: BlockShape
) -> list[Mapping[str, Any]]:
    """Every page of one query (botocore's paginator follows ``NextToken``)."""
    items: list[Mapping[str, Any]] = []
    pages = ec2.get_paginator("describe_capacity_block_offerings").paginate(
        InstanceType=instance_type,
        InstanceCount=shape.instances,
        CapacityDurationHours=shape.hours,
    )
    for page in pages:
        items.extend(page.get("CapacityBlockOfferings", []))
    return items


@dataclass(frozen=True, slots=True)
class _Block:
    item: Mapping[str, Any]
    instance_type: str
    zone: str
    instances: int
    hours: Decimal
    fee: Decimal
    currency: str
    start: datetime
    end: datetime | None

    @property
    def hourly(self) -> Decimal:
        return (self.fee / (self.instances * self.hours)).quantize(PRICE_PLACES)


def _iso(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def _block(item: Mapping[str, Any]) -> _Block:
    oid = str(item.get("CapacityBlockOfferingId") or "?")
    if item.get("UltraserverType"):
        raise SkipItem("ultraserver_capacity_block", f"{oid}: priced per UltraServer")
    name, zone = item.get("InstanceType"), item.get("AvailabilityZone")
    if not isinstance(name, str) or not name or not isinstance(zone, str) or not zone:
        raise SkipItem("malformed_capacity_block", f"{oid}: no InstanceType/AvailabilityZone")
    count, hours = item.get("InstanceCount"), item.get("CapacityBlockDurationHours")
    minutes = item.get("CapacityBlockDurationMinutes") or 0
    if not isinstance(count, int) or not 1 <= count <= MAX_INSTANCES:
        raise SkipItem("malformed_capacity_block", f"{oid}: InstanceCount {count!r}")
    if not isinstance(hours, int) or not isinstance(minutes, int) or hours * 60 + minutes <= 0:
        raise SkipItem("malformed_capacity_block", f"{oid}: duration {hours!r} h {minutes!r} min")
    try:
        fee = Decimal(str(item.get("UpfrontFee")))
    except InvalidOperation:
        raise SkipItem("malformed_capacity_block", f"{oid}: UpfrontFee not a number") from None
    if not fee.is_finite() or fee <= 0:
        raise SkipItem("zero_price", f"{oid}: UpfrontFee {item.get('UpfrontFee')!r}")
    currency = str(item.get("CurrencyCode") or "").upper()
    start = _iso(item.get("StartDate"))
    if len(currency) != 3 or start is None:
        raise SkipItem("malformed_capacity_block", f"{oid}: no CurrencyCode or StartDate")
    total_hours = Decimal(hours) + Decimal(minutes) / 60
    return _Block(
        item, name, zone, count, total_hours, fee, currency, start, _iso(item.get("EndDate"))
    )


def _chosen(blocks: Iterable[_Block], shape: BlockShape) -> list[_Block]:
    """Per zone, the exact shape asked for when offered, else the cheapest other."""
    by_zone: dict[tuple[str, str], list[_Block]] = {}
    for b in blocks:
        by_zone.setdefault((b.instance_type, b.zone), []).append(b)
    exact = (shape.instances, Decimal(shape.hours))
    return [
        min(found, key=lambda b: ((b.instances, b.hours) != exact, b.hourly, b.start))
        for found in by_zone.values()
    ]


def parse_capacity_block_offerings(
    items: Iterable[Mapping[str, Any]],
    hardware: Mapping[str, InstanceHardware],
    skip: SkipSink,
    *,
    region: str,
    shape: BlockShape,
) -> list[Offer]:
    """One query's offerings -> at most one offer per (type, zone) for ``shape``."""
    blocks: list[_Block] = []
    for item in items:
        try:
            block = _block(item)
            if block.instance_type not in hardware:
                raise SkipItem("unknown_instance_type", f"{block.instance_type}: no hardware")
        except SkipItem as exc:
            skip(exc.reason, exc.detail)
            continue
        blocks.append(block)
    offers = []
    for block in _chosen(blocks, shape):
        try:
            offers.append(_offer(block, hardware[block.instance_type], region, shape))
        except InvalidOffer as exc:
            skip("malformed_capacity_block", f"{block.instance_type} {block.zone}: {exc}")
    return offers


def _offer(block: _Block, hw: InstanceHardware, region: str, shape: BlockShape) -> Offer:
    attrs: dict[str, AttributeValue] = hw.attributes()
    attrs |= {
        INSTANCES: block.instances,
        HOURS: block.hours,
        START: block.start.astimezone(UTC).isoformat(),
        FEE: block.fee,
        "capacity_block_offering_id": str(block.item.get("CapacityBlockOfferingId") or ""),
    }
    if block.end is not None:
        attrs[END] = block.end.astimezone(UTC).isoformat()
    return Offer(
        provider=PROVIDER,
        instance_type=block.instance_type,
        region=region,
        zone=block.zone,
        pricing=PricingModel.CAPACITY_BLOCK,
        offering_class=shape.label,
        price_per_hour=block.hourly,
        currency=block.currency,
        attributes=attrs,
        **hw.offer_fields(),
    )


def shapes_of(counts: Sequence[int], hours: Sequence[int]) -> list[BlockShape]:
    """The configured shapes, every count with every duration."""
    return [BlockShape(n, h) for n in dict.fromkeys(counts) for h in dict.fromkeys(hours)]
