"""Hot Aisle VM prices from ``GET /api/teams/{team}/virtual_machines/available/`` (API key).

Hot Aisle rents AMD Instinct GPUs; the endpoint lists the VMs a team can rent now, each
with ``OnDemandPrice`` in integer US **cents per hour for the whole VM** and its
``Specs`` (``cpu_cores``, ``ram_capacity`` and ``disk_capacity`` in bytes, ``cpus``,
``gpus: [{count, model}]``). One offer is one VM shape
(``1x MI300X 13c 240g``: GPUs, cores, GiB of RAM), ``available`` since it is listed;
several identical VMs listed at once are one offer at the lowest price (their number is
the ``listed`` attribute). The endpoint names no location, so the region is ``global``;
it answers ``null`` when nothing is available, which delists every offer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from decimal import Decimal
from typing import Any, ClassVar, Self
from urllib.parse import quote

from collectors.base import CollectorError, MissingCredentials, RunContext, SkipItem, parse_each
from collectors.gpucloud import (
    GpuCloudCollector,
    api_key_or_skip,
    documented_url,
    gpu_offer,
    number,
    text,
)
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Offer, PricingModel
from tracker.settings import Settings
from tracker.settings.small_clouds import TEAM_ENV

__all__ = ["DOCUMENTED_URL", "HotAisleCollector", "parse_available"]


PROVIDER = "hotaisle"
DOCUMENTED_URL = "https://admin.hotaisle.app/api/teams/{team}/virtual_machines/available/"
REGION = "global"
_CENTS = Decimal(100)
_GIB = Decimal(1024**3)


def _whole(part: Mapping[str, Any], field: str) -> int:
    value = part.get(field)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise SkipItem("malformed_item", f"{field} is not a positive whole number ({value!r})")
    return value


def parse_vm(item: Any) -> Offer:
    """The offer of one available VM; :class:`SkipItem` if it cannot be priced."""
    if not isinstance(item, Mapping) or not isinstance(item.get("Specs"), Mapping):
        raise SkipItem("malformed_item", "VM without a Specs object")
    specs: Mapping[str, Any] = item["Specs"]
    gpus = specs.get("gpus")
    if not isinstance(gpus, list) or len(gpus) != 1 or not isinstance(gpus[0], Mapping):
        raise SkipItem("malformed_item", f"gpus is not one GPU kind ({gpus!r:.80})")
    count, model = _whole(gpus[0], "count"), text(gpus[0], "model")
    cents = item.get("OnDemandPrice")
    if not isinstance(cents, int) or isinstance(cents, bool):
        raise SkipItem("malformed_item", f"OnDemandPrice is not whole cents ({cents!r})")
    if cents <= 0:
        raise SkipItem("zero_price", f"OnDemandPrice {cents}")
    cores = _whole(specs, "cpu_cores")
    ram = Decimal(_whole(specs, "ram_capacity")) / _GIB
    disk = number(specs, "disk_capacity", required=False)
    cpus = specs.get("cpus")
    cpu_model = cpus.get("model") if isinstance(cpus, Mapping) else None
    match = resolve_gpu(model)
    attributes: dict[str, AttributeValue] = {
        "cpu_model": cpu_model if isinstance(cpu_model, str) else None,
        "disk_gib": disk / _GIB if disk is not None else None,
        "price_cents_per_hour": cents,
    }
    return gpu_offer(
        "",
        match,
        model,
        attributes,
        provider=PROVIDER,
        instance_type=f"{count}x {model} {cores}c {ram.normalize():f}g",
        region=REGION,
        pricing=PricingModel.ON_DEMAND,
        price_per_hour=Decimal(cents) / _CENTS,  # 199 cents -> $1.99
        currency="USD",
        gpu_count=Decimal(count),
        vcpus=Decimal(cores),
        memory_gib=ram,
        availability=Availability.AVAILABLE,
    )


def parse_available(payload: Any, skip: Callable[[str, str], None]) -> list[Offer]:
    """One offer per VM shape listed (the cheapest of identical ones); ``null`` is none."""
    if payload is None:
        return []
    if not isinstance(payload, list):
        raise CollectorError("hotaisle: response is not a list of virtual machines")
    cheapest: dict[str, Offer] = {}
    listed: dict[str, int] = {}
    for offer in parse_each(payload, parse_vm, skip):
        key = offer.instance_type
        listed[key] = listed.get(key, 0) + 1
        if key not in cheapest or offer.price_per_hour < cheapest[key].price_per_hour:
            cheapest[key] = offer
    return [
        replace(o, attributes={**o.attributes, "listed": listed[k]}) for k, o in cheapest.items()
    ]


class HotAisleCollector(GpuCloudCollector):
    """On-demand AMD Instinct VM prices on Hot Aisle."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Hot Aisle available VMs (on-demand, API key and team)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False  # Hot Aisle sells no spot VMs
    documented: ClassVar[str] = DOCUMENTED_URL
    key_header: ClassVar[tuple[str, str]] = ("Authorization", "Token {}")  # not a bearer

    def __init__(self, settings: Settings, api_key: str = "", team: str = "", **kw: Any) -> None:
        super().__init__(settings, api_key, **kw)
        self.team = team

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        key = api_key_or_skip(PROVIDER, settings.hotaisle)
        team = settings.hotaisle.resolved_team()
        if team is None:
            raise MissingCredentials(f"no team: set GPU_TRACKER_HOTAISLE__TEAM (or {TEAM_ENV})")
        return cls(settings, key, team)

    @property
    def url(self) -> str:
        documented = DOCUMENTED_URL.format(team=quote(self.team, safe=""))
        return documented_url(documented, self.settings.hotaisle.endpoint_url)

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return self.listing(ctx, lambda payload, scope: parse_available(payload, ctx.skip))
