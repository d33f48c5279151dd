"""Nebius AI Cloud VM prices from its billing calculator (gRPC, through the Nebius SDK).

Nebius sells a VM as a *platform* (``gpu-h200-sxm``: the GPU model and host) in a fixed
*preset* (``1gpu-16vcpu-200gb``: GPUs, vCPUs, GiB of RAM); its price list is not an API,
but ``nebius.billing.v1alpha1.CalculatorService/Estimate`` prices any VM one could
create. So the collector asks, per region of the account (one project in each, from
``iam.v1`` tenants and projects), which platforms and presets
``compute.v1.PlatformService/List`` offers there, and has the calculator price a VM of
each preset: ``hourly_cost.general.total.cost`` (a decimal string) is the price of the
**whole VM** for one hour (1x H200 1gpu-16vcpu-200gb: $3.50), in the billing contract's
currency (``nebius.currency``, USD by default; the answer names none). One offer per
(region, platform, preset with GPUs, pricing): ``on_demand``, and ``spot`` (a
preemptible VM) where the platform is ``allowed_for_preemptibles``. The API says
nothing about free capacity, so availability is ``unknown``. This is what gpuhunt's
Nebius provider does (dstackai/gpuhunt ``src/gpuhunt/providers/nebius.py``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar, Self

from collectors.base import (
    CollectorError,
    RunContext,
    SkipItem,
    parse_each,
)
from collectors.gpucloud import GpuCloudCollector, api_key_or_skip, gpu_offer
from collectors.nebius_sdk import NebiusApi, Refused
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Fabric, Offer, PricingModel
from tracker.settings import Settings

__all__ = ["NebiusCollector", "Quote", "parse_quote", "platform_gpu"]

log = logging.getLogger(__name__)

PROVIDER = "nebius"
_GPU_IN_PLATFORM = re.compile(r"^gpu-([a-z0-9]+)(?:-|$)")


@dataclass(frozen=True)
class Quote:
    """The calculator's price of one preset in one region, with what the platform says."""

    region: str
    platform: str
    preset: str
    vcpus: int
    memory_gib: int
    gpus: int
    pricing: PricingModel
    cost: str
    clustering: bool = False


def platform_gpu(platform: str) -> str:
    """The GPU a platform name carries (``gpu-h200-sxm`` -> ``H200``), else the name.

    Nebius names GPU platforms ``gpu-<model>-<form>``; an unforeseen name is kept whole
    so that ``gpus --unknown`` lists it.
    """
    match = _GPU_IN_PLATFORM.match(platform)
    return match.group(1).upper() if match else platform


def parse_quote(quote: Quote, currency: str) -> Offer:
    """The offer of one priced preset; :class:`SkipItem` if it cannot be one."""
    try:
        price = Decimal(quote.cost.strip())
    except InvalidOperation:
        raise SkipItem("malformed_item", f"cost is not a number ({quote.cost!r})") from None
    if not price.is_finite() or price < 0:
        raise SkipItem("malformed_item", f"cost is {quote.cost!r}")
    if price == 0:
        raise SkipItem("zero_price", f"{quote.platform} {quote.preset}: cost {quote.cost!r}")
    raw = platform_gpu(quote.platform)
    match = resolve_gpu(raw)
    attributes: dict[str, AttributeValue] = {
        "platform": quote.platform,
        "preset": quote.preset,
        "gpu_clustering": quote.clustering,
    }
    return gpu_offer(
        "",
        match,
        raw,
        attributes,
        provider=PROVIDER,
        instance_type=f"{quote.platform} {quote.preset}",
        region=quote.region,
        pricing=quote.pricing,
        price_per_hour=price,
        currency=currency,
        gpu_count=Decimal(quote.gpus),
        vcpus=Decimal(quote.vcpus),
        memory_gib=Decimal(quote.memory_gib),
        availability=Availability.UNKNOWN,
        # A preset the API marks ``allow_gpu_clustering`` joins a GPU cluster, which the
        # API defines by its ``infiniband_fabric`` (compute.v1 GpuClusterSpec): InfiniBand.
        # The API states no bandwidth, so network_gbps stays unknown.
        fabric=Fabric.INFINIBAND if quote.clustering else Fabric.UNKNOWN,
    )


class NebiusCollector(GpuCloudCollector):
    """On-demand and preemptible (spot) VM prices on Nebius AI Cloud."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Nebius AI Cloud VM presets (billing calculator, IAM token)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(
        {PricingModel.ON_DEMAND, PricingModel.SPOT}
    )
    documented: ClassVar[str] = "https://api.nebius.cloud"
    """gRPC, not HTTP: the SDK resolves ``<service>.api.nebius.cloud:443`` itself."""

    def __init__(self, settings: Settings, token: str = "", **kw: Any) -> None:
        super().__init__(settings, **kw)
        self._token = token

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        section = settings.nebius
        if section.enabled and section.credentials_file is not None:
            return cls(settings)  # the SDK reads the service account's file itself
        return cls(settings, api_key_or_skip(PROVIDER, section))

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        scope = self.scope(ctx)
        if not scope:
            return
        section = self.settings.nebius
        with NebiusApi(section, self.settings.http.timeout_seconds, self._token) as api:
            quotes = list(self._quotes(api, scope, ctx))
        offers = list(parse_each(quotes, lambda q: parse_quote(q, section.currency), ctx.skip))
        log.info("nebius: %d offers", len(offers))
        yield from offers

    def _quotes(
        self, api: NebiusApi, scope: frozenset[PricingModel], ctx: RunContext
    ) -> Iterator[Quote]:
        """Every GPU preset of every region priced in the run's scope."""
        regions = api.project_per_region()
        if not regions:
            raise CollectorError(f"{PROVIDER}: the account has no project to price VMs in")
        for region, project in sorted(regions.items()):
            for platform in api.platforms(project):
                models = [PricingModel.ON_DEMAND]
                if platform.status.allowed_for_preemptibles:
                    models.append(PricingModel.SPOT)
                for preset in platform.spec.presets:
                    if not preset.resources.gpu_count:
                        continue  # a CPU-only preset is not a GPU offer
                    for pricing in (m for m in models if m in scope):
                        quote = _priced(api, region, project, platform, preset, pricing, ctx)
                        if quote is not None:
                            yield quote


def _priced(
    api: NebiusApi,
    region: str,
    project: str,
    platform: Any,
    preset: Any,
    pricing: PricingModel,
    ctx: RunContext,
) -> Quote | None:
    """The calculator's quote for one preset; a preset it cannot price is a counted skip
    (a refused credential still fails the run)."""
    name, resources = str(platform.metadata.name), preset.resources
    try:
        cost = api.hourly_cost(project, name, str(preset.name), pricing is PricingModel.SPOT)
    except Refused:
        raise
    except CollectorError as exc:
        ctx.skip("no_price", str(exc))
        return None
    return Quote(
        region=region,
        platform=name,
        preset=str(preset.name),
        vcpus=int(resources.vcpu_count),
        memory_gib=int(resources.memory_gibibytes),
        gpus=int(resources.gpu_count),
        pricing=pricing,
        cost=cost,
        clustering=bool(preset.allow_gpu_clustering),
    )
