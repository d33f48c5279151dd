"""AWS block storage and internet egress prices from the Price List API.

Two ``GetProducts`` queries per region, filtered server-side so a run reads a few
products, never the offer files:

* ``AmazonEC2``, ``productFamily = Storage``, ``volumeApiName`` gp3 or st1, priced
  per ``GB-Mo``. **gp3** stands for ``block_storage_ssd``: the general-purpose SSD
  volume AWS makes the default, and the cheapest SSD per GB (io1/io2 sell IOPS, gp2 is
  the older generation). **st1** stands for ``block_storage_hdd``: throughput-optimised
  HDD, the one for large sequential reads such as datasets and checkpoints (sc1 is
  cheaper but meant for data read a few times a year).
* ``AWSDataTransfer``, ``transferType = AWS Outbound``, ``toLocation = External``
  from the region: egress to the internet, one product whose price dimensions are the
  tiers, ``beginRange``/``endRange`` in GB a month (``Inf`` for the last).

Parsing is pure and lives in :mod:`collectors.aws_service_parse`; this module queries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from collectors.aws_hardware import PROVIDER
from collectors.aws_service_parse import (
    EGRESS_ATTRIBUTES,
    VOLUME_KINDS,
    parse_egress_item,
    parse_storage_item,
)
from collectors.base import RunContext, SkipItem, SkipSink
from tracker.service_prices import ServiceKind, ServicePrice

__all__ = [
    "VOLUME_KINDS",
    "collect_services",
    "egress_filters",
    "parse_egress_item",
    "parse_storage_item",
    "storage_filters",
]

PAGE_SIZE = 100


def storage_filters(region: str) -> list[dict[str, str]]:
    term = "TERM_MATCH"
    return [
        {"Type": term, "Field": "regionCode", "Value": region},
        {"Type": term, "Field": "productFamily", "Value": "Storage"},
        {"Type": "ANY_OF", "Field": "volumeApiName", "Value": ",".join(sorted(VOLUME_KINDS))},
    ]


def egress_filters(region: str) -> list[dict[str, str]]:
    term = "TERM_MATCH"
    filters = [{"Type": term, "Field": "fromRegionCode", "Value": region}]
    filters += [{"Type": term, "Field": k, "Value": v} for k, v in EGRESS_ATTRIBUTES.items()]
    return filters


def _region_prices(pricing: Any, region: str, skip: SkipSink) -> list[ServicePrice]:
    """Both queries of one region; a second product for a service already priced in
    the region is a skip (``duplicate_product``), the first one wins."""
    found: list[ServicePrice] = []
    priced: set[ServiceKind] = set()
    queries: list[tuple[str, list[dict[str, str]], Callable[..., Any]]] = [
        ("AmazonEC2", storage_filters(region), parse_storage_item),
        ("AWSDataTransfer", egress_filters(region), parse_egress_item),
    ]
    for service_code, filters, parse in queries:
        pages = pricing.get_paginator("get_products").paginate(
            ServiceCode=service_code,
            Filters=filters,
            FormatVersion="aws_v1",
            PaginationConfig={"PageSize": PAGE_SIZE},
        )
        for page in pages:
            for raw in page.get("PriceList", []):
                try:
                    parsed = parse(raw, region_hint=region)
                except SkipItem as exc:
                    skip(exc.reason, exc.detail)
                    continue
                prices = [parsed] if isinstance(parsed, ServicePrice) else list(parsed or [])
                if not prices:
                    continue
                kind = prices[0].service
                if kind in priced:
                    detail = f"{region} {kind.value}: a second Price List product, the first kept"
                    skip("duplicate_product", detail)
                    continue
                priced.add(kind)
                found.extend(prices)
    return found


def collect_services(
    pricing: Any,
    regions: Sequence[str],
    ctx: RunContext,
    describe: Callable[[str, Exception], str],
) -> Iterator[ServicePrice]:
    """Every region's storage and egress prices; a region whose queries fail is marked
    partial (its stored tiers stay) and the run fails only if every region did."""
    for region in regions:
        try:
            prices = _region_prices(pricing, region, ctx.skip)
        except (ClientError, BotoCoreError) as exc:
            ctx.mark_partial(region, describe(region, exc))
            continue
        yield from prices
    ctx.fail_if_every_region_partial(PROVIDER, regions)
