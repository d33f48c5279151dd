"""AWS: on-demand and reserved prices from the Price List Query API, spot from EC2.

Per region the collector asks EC2 which instance types carry a GPU or an ML
accelerator (``DescribeInstanceTypes``), then asks the Price List API for those
types only (filtered server-side, so a run never downloads the multi-GB offer
file), then reads spot price history for the same types from the last stored
point on. A region that fails (throttled past botocore's adaptive retries, not
enabled for the account, unreachable) is skipped with a warning and marked
partial so nothing of it is delisted; the run fails only if every region did.

Parsing lives in three pure modules, one per payload (what the tests replay):
:mod:`collectors.aws_hardware` (DescribeInstanceTypes), :mod:`collectors.aws_pricelist`
(GetProducts) and :mod:`collectors.aws_spot` (DescribeSpotPriceHistory); this
module only fetches. A spot-only run (the service's frequent spot job) makes no
Price List call: instance types, spot history and the Spot Advisor feed only.

Without credentials the collector still runs: on-demand and reserved prices come
from the public bulk offer files (:mod:`collectors.aws_bulk`), and what needs an
account (spot, savings plans, EBS/egress) is one counted, stated skip each.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Self

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from collectors.aws_bulk import BulkSource, bulk_offers
from collectors.aws_capacity_blocks import (
    fetch_capacity_block_offerings,
    parse_capacity_block_offerings,
    shapes_of,
)
from collectors.aws_hardware import InstanceHardware, parse_instance_types
from collectors.aws_pricelist import parse_price_list_item
from collectors.aws_savings import (
    SAVINGS_PLANS,
    fetch_savings_plan_rates,
    parse_savings_plan_rates,
)
from collectors.aws_services import collect_services
from collectors.aws_spot import SpotRisk, parse_spot_history
from collectors.aws_spot_advisor import fetch_spot_advisor
from collectors.base import CollectorError, NotConfigured, RunContext
from collectors.http import HttpClient
from tracker import __version__
from tracker.models import Offer, OfferKey, PricingModel

if TYPE_CHECKING:
    from tracker.service_prices import ServicePrice
    from tracker.settings import Settings

__all__ = [
    "AwsCollector",
    "ClientFactory",
    "InstanceHardware",
    "parse_instance_types",
    "parse_price_list_item",
    "parse_spot_history",
]

log = logging.getLogger(__name__)

ClientFactory = Callable[[str, str], Any]
"""(service name, region) -> a boto3 client; injectable for tests."""

THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestLimitExceeded",
        "RequestThrottled",
        "RequestThrottledException",
        "TooManyRequestsException",
        "SlowDown",
    }
)
# What EC2 answers in a region the account has not opted into (or may not use).
REGION_DISABLED_CODES = frozenset(
    {
        "AuthFailure",
        "OptInRequired",
        "UnauthorizedOperation",
        "InvalidClientTokenId",
        "UnrecognizedClientException",
    }
)
SPOT_PRODUCT = "Linux/UNIX"
FIXED_PRICING = frozenset(
    {PricingModel.ON_DEMAND, PricingModel.RESERVED_1Y, PricingModel.RESERVED_3Y}
)
NEEDS_CREDENTIALS = "needs_credentials"
BULK_READINESS = (
    "ready without credentials: on-demand and reserved from the public bulk offer files;"
    " spot, savings plans, capacity blocks and EBS/egress need credentials"
)
FILTER_VALUE_MAX = 1024  # the Price List API's limit on one filter value
PRICE_LIST_PAGE = 100  # the API's maximum MaxResults


class RegionFailed(Exception):
    """One region could not be collected; the message is the one-line reason."""


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def describe_failure(region: str, exc: Exception) -> str:
    if isinstance(exc, ClientError):
        code = error_code(exc)
        message = exc.response.get("Error", {}).get("Message", "")
        if code in THROTTLING_CODES:
            return f"throttled by AWS after retries ({code}: {message})"
        if code in REGION_DISABLED_CODES:
            return f"region {region} not enabled for this account or not permitted ({code})"
        return f"{code}: {message}"
    return f"{type(exc).__name__}: {exc}"


def instance_type_filters(types: Sequence[str]) -> list[str]:
    """Comma-joined ``ANY_OF`` values, each within the API's 1024-character limit."""
    chunks: list[str] = []
    current = ""
    for name in sorted(types):
        candidate = f"{current},{name}" if current else name
        if len(candidate) > FILTER_VALUE_MAX:
            chunks.append(current)
            current = name
        else:
            current = candidate
    if current:
        chunks.append(current)
    return chunks


def price_list_filters(region: str, types_value: str) -> list[dict[str, str]]:
    """Server-side filter: Linux, shared tenancy, no bundled software, on-demand capacity."""
    term = "TERM_MATCH"
    return [
        {"Type": term, "Field": "regionCode", "Value": region},
        {"Type": term, "Field": "operatingSystem", "Value": "Linux"},
        {"Type": term, "Field": "tenancy", "Value": "Shared"},
        {"Type": term, "Field": "preInstalledSw", "Value": "NA"},
        {"Type": term, "Field": "capacitystatus", "Value": "Used"},
        {"Type": "ANY_OF", "Field": "instanceType", "Value": types_value},
    ]


class AwsCollector:
    """GPU and ML-accelerator prices from AWS (see the module docstring)."""

    name: ClassVar[str] = "aws"
    description: ClassVar[str] = (
        "AWS EC2: on-demand, reserved and Savings Plans (1y/3y, all payment options),"
        " per-zone spot history and Capacity Blocks for ML"
    )
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(PricingModel)
    spot_fetched_separately: ClassVar[bool] = True
    """Spot comes from EC2's spot price history, a call of its own."""

    def __init__(
        self,
        settings: Settings,
        *,
        session: boto3.Session | None = None,
        client_factory: ClientFactory | None = None,
        advisor_loader: Callable[[], Mapping[str, Mapping[str, SpotRisk]]] | None = None,
        clock: Callable[[], datetime] | None = None,
        bulk: BulkSource | None = None,
    ) -> None:
        self.settings = settings
        self.aws = settings.aws
        self._session = session
        self._factory = client_factory
        self._clients: dict[tuple[str, str], Any] = {}
        self._advisor_loader = advisor_loader
        self._clock = clock or (lambda: datetime.now(UTC))
        self._hardware: dict[str, dict[str, InstanceHardware]] = {}
        self._priced: dict[str, set[str]] = {}
        """Per region, the accelerated types and those the Price List priced this run."""
        self.bulk = bulk
        """Set when there are no credentials: prices come from the bulk offer files."""
        self.readiness = BULK_READINESS if bulk is not None else ""
        """What ``gpu-tracker providers`` says beside "ready" (empty: everything runs)."""

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        if not settings.aws.enabled:
            raise NotConfigured("aws: disabled in the configuration (aws.enabled = false)")
        session = boto3.Session()
        if session.get_credentials() is None:
            http = HttpClient(settings.http)
            source = BulkSource(settings.aws.bulk_url, http, settings.http.timeout_seconds)
            return cls(settings, bulk=source)
        return cls(settings, session=session)

    # ------------------------------------------------------------------ clients

    def client_config(self) -> Config:
        return Config(
            retries={"mode": "adaptive", "total_max_attempts": self.aws.max_attempts},
            user_agent_extra=f"gpu-tracker/{__version__}",
            connect_timeout=self.settings.http.timeout_seconds,
            read_timeout=self.settings.http.timeout_seconds,
        )

    def endpoint_for(self, service: str) -> str | None:
        """A configured endpoint, or None so boto3's own ``AWS_ENDPOINT_URL_*`` apply."""
        specific = {
            "pricing": self.aws.pricing_endpoint_url,
            "ec2": self.aws.ec2_endpoint_url,
            "savingsplans": self.aws.savingsplans_endpoint_url,
        }.get(service)
        return specific or self.aws.endpoint_url or None

    def client(self, service: str, region: str) -> Any:
        key = (service, region)
        if key not in self._clients:
            if self._factory is not None:
                self._clients[key] = self._factory(service, region)
            else:
                session = self._session or boto3.Session()
                self._clients[key] = session.client(
                    service,  # type: ignore[call-overload]
                    region_name=region,
                    endpoint_url=self.endpoint_for(service),
                    config=self.client_config(),
                )
        return self._clients[key]

    # ------------------------------------------------------------------ collect

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        scope = ctx.pricing_scope
        want_fixed = bool(scope & FIXED_PRICING)
        want_spot = PricingModel.SPOT in scope and self.aws.spot
        want_plans = bool(scope & SAVINGS_PLANS) and self.aws.savings_plans
        want_blocks = PricingModel.CAPACITY_BLOCK in scope and self.aws.capacity_blocks
        if not want_fixed and not want_spot and not want_plans and not want_blocks:
            return
        if self.bulk is not None:
            if want_blocks:
                ctx.skip(NEEDS_CREDENTIALS, "aws: capacity blocks need credentials")
            yield from self._collect_bulk(ctx, self.bulk, want_fixed, want_spot, want_plans)
            return
        regions = self._regions()
        advisor = self._load_advisor() if want_spot else {}
        plans_failed: set[str] = set()
        for region in regions:
            try:
                yield from self._collect_region(ctx, region, want_fixed, want_spot, advisor)
                if want_plans:
                    yield from self._savings_plans(ctx, region, plans_failed)
                if want_blocks:
                    yield from self._capacity_blocks(ctx, region, plans_failed)
            except (ClientError, BotoCoreError) as exc:
                reason = describe_failure(region, exc)
                log.warning("aws: skipping region %s: %s", region, reason)
                ctx.mark_partial(region, reason)
        # A region whose only failure was its savings plans or capacity blocks still
        # collected the rest.
        ctx.fail_if_every_region_partial("aws", [r for r in regions if r not in plans_failed])

    def collect_service_prices(self, ctx: RunContext) -> Iterator[ServicePrice]:
        """EBS gp3/st1 and internet egress, per region (:mod:`collectors.aws_services`)."""
        if self.bulk is not None:
            ctx.skip(NEEDS_CREDENTIALS, "aws: EBS and egress prices need credentials")
            return
        pricing = self.client("pricing", self.aws.pricing_region)
        yield from collect_services(pricing, self._regions(), ctx, describe_failure)

    def _collect_bulk(
        self, ctx: RunContext, bulk: BulkSource, fixed: bool, spot: bool, plans: bool
    ) -> Iterator[Offer]:
        """On-demand and reserved from the bulk offer files, region by region; a region
        whose file cannot be read is partial (nothing of it delisted)."""
        if spot:
            ctx.skip(NEEDS_CREDENTIALS, "aws: spot needs credentials")
        if plans:
            ctx.skip(NEEDS_CREDENTIALS, "aws: savings plans need credentials")
        if not fixed:
            return
        files = bulk.region_index()
        regions = list(dict.fromkeys(self.aws.regions)) if self.aws.regions else sorted(files)
        for region in regions:
            path = files.get(region)
            if path is None:
                ctx.mark_partial(region, "not in the bulk price list's region index")
                continue
            try:
                extract = bulk.extract(region, path)
            except CollectorError as exc:
                ctx.mark_partial(region, str(exc))
                continue
            yield from bulk_offers(ctx, region, extract, self.aws.include_accelerators)
        ctx.fail_if_every_region_partial("aws", regions)

    def _regions(self) -> list[str]:
        if self.aws.regions:
            return list(dict.fromkeys(self.aws.regions))
        ec2 = self.client("ec2", self.aws.pricing_region)
        try:
            response = ec2.describe_regions()
        except (ClientError, BotoCoreError) as exc:
            raise CollectorError(
                f"aws: cannot list regions ({describe_failure(self.aws.pricing_region, exc)});"
                " set aws.regions / GPU_TRACKER_AWS__REGIONS"
            ) from exc
        return sorted(r["RegionName"] for r in response.get("Regions", []))

    def _load_advisor(self) -> Mapping[str, Mapping[str, SpotRisk]]:
        if self._advisor_loader is not None:
            return self._advisor_loader()
        return fetch_spot_advisor(self.aws.spot_advisor_url, self.settings.http)

    def _collect_region(
        self,
        ctx: RunContext,
        region: str,
        want_fixed: bool,
        want_spot: bool,
        advisor: Mapping[str, Mapping[str, SpotRisk]],
    ) -> Iterator[Offer]:
        ec2 = self.client("ec2", region)
        hardware = self._hardware[region] = self.hardware(ctx, ec2)
        if not hardware:
            log.info("aws: %s offers no GPU or ML-accelerator instance types", region)
            return
        priced = self._priced[region] = set()
        if want_fixed:
            for offer in self._fixed_prices(ctx, region, hardware):
                priced.add(offer.instance_type)
                yield offer
        if want_spot:
            # Spot only for types the Price List sells here; without it, all accelerated types.
            types = sorted(priced) if priced else sorted(hardware)
            yield from self._spot(ctx, ec2, region, types, hardware, advisor.get(region, {}))

    def hardware(self, ctx: RunContext, ec2: Any) -> dict[str, InstanceHardware]:
        items: list[Mapping[str, Any]] = []
        for page in ec2.get_paginator("describe_instance_types").paginate():
            items.extend(page.get("InstanceTypes", []))
        return parse_instance_types(
            items, ctx.skip, include_accelerators=self.aws.include_accelerators
        )

    def _fixed_prices(
        self, ctx: RunContext, region: str, hardware: Mapping[str, InstanceHardware]
    ) -> Iterator[Offer]:
        pricing = self.client("pricing", self.aws.pricing_region)
        paginator = pricing.get_paginator("get_products")
        seen: set[OfferKey] = set()
        for value in instance_type_filters(list(hardware)):
            pages = paginator.paginate(
                ServiceCode="AmazonEC2",
                Filters=price_list_filters(region, value),
                FormatVersion="aws_v1",
                PaginationConfig={"PageSize": PRICE_LIST_PAGE},
            )
            for page in pages:
                for raw in page.get("PriceList", []):
                    offers = parse_price_list_item(
                        raw,
                        hardware,
                        ctx.skip,
                        region_hint=region,
                        pricing_scope=ctx.pricing_scope,
                    )
                    for offer in offers:
                        key = offer.key()
                        if key in seen:
                            ctx.skip("duplicate_offer", f"{key!r}: a second Price List product")
                            continue
                        seen.add(key)
                        yield offer

    def _spot(
        self,
        ctx: RunContext,
        ec2: Any,
        region: str,
        types: Sequence[str],
        hardware: Mapping[str, InstanceHardware],
        risk: Mapping[str, SpotRisk],
    ) -> Iterator[Offer]:
        since = ctx.last_observed(PricingModel.SPOT, region)
        start = since or self._clock() - timedelta(days=self.aws.spot_lookback_days)
        items: list[Mapping[str, Any]] = []
        paginator = ec2.get_paginator("describe_spot_price_history")
        for page in paginator.paginate(
            InstanceTypes=list(types), ProductDescriptions=[SPOT_PRODUCT], StartTime=start
        ):
            items.extend(page.get("SpotPriceHistory", []))
        if not risk:
            log.debug("aws: no spot advisor data for %s", region)
        yield from parse_spot_history(items, hardware, ctx.skip, region=region, risk=risk)

    def _savings_plans(self, ctx: RunContext, region: str, failed: set[str]) -> Iterator[Offer]:
        """The region's savings plan rates for the types the Price List priced (all its
        accelerated types when on-demand was not asked for); a failure marks the region
        partial (nothing of it delisted) without failing its other prices."""
        hardware = self._hardware.get(region) or {}
        types = sorted(self._priced.get(region) or hardware)
        if not types:
            return
        client = self.client("savingsplans", self.aws.pricing_region)
        try:
            rates = fetch_savings_plan_rates(client, region, types)
        except (ClientError, BotoCoreError) as exc:
            reason = f"savings plans: {describe_failure(region, exc)}"
            log.warning("aws: %s: %s", region, reason)
            ctx.mark_partial(region, reason)
            failed.add(region)
            return
        yield from parse_savings_plan_rates(
            rates, hardware, ctx.skip, region=region, scope=ctx.pricing_scope & SAVINGS_PLANS
        )

    def _capacity_blocks(self, ctx: RunContext, region: str, failed: set[str]) -> Iterator[Offer]:
        """The region's Capacity Block offerings of each configured shape, for the
        configured types it has hardware for; a failure marks the region partial
        (nothing of it delisted) without failing its other prices."""
        hardware = self._hardware.get(region) or {}
        types = [t for t in dict.fromkeys(self.aws.capacity_block_types) if t in hardware]
        shapes = shapes_of(self.aws.capacity_block_instance_counts, self.aws.capacity_block_hours)
        ec2 = self.client("ec2", region)
        offers: list[Offer] = []
        try:
            for instance_type in types:
                for shape in shapes:
                    try:
                        items = fetch_capacity_block_offerings(ec2, instance_type, shape)
                    except ClientError as exc:
                        if error_code(exc) in THROTTLING_CODES | REGION_DISABLED_CODES:
                            raise
                        # One type or shape AWS will not quote here (a bad parameter for
                        # this region): a counted skip, the region's other prices stand.
                        detail = f"{region} {instance_type} {shape.label}: {error_code(exc)}"
                        ctx.skip("capacity_block_refused", detail)
                        continue
                    offers.extend(
                        parse_capacity_block_offerings(
                            items, hardware, ctx.skip, region=region, shape=shape
                        )
                    )
        except (ClientError, BotoCoreError) as exc:
            reason = f"capacity blocks: {describe_failure(region, exc)}"
            log.warning("aws: %s: %s", region, reason)
            ctx.mark_partial(region, reason)
            failed.add(region)
            return
        yield from offers
