"""CloudRift GPU prices from ``POST /api/v1/instance-types/list`` (public; key optional).

CloudRift's API is one POST per operation with the body ``{"version", "data"}`` and the
answer ``{"version", "data"}``; the instance-type list answers without credentials
(a key, when set, goes in ``X-API-Key``). Each instance type (``brand_short``: the GPU,
as ``RTX 4090``) has variants, one per GPU count (``rtx49-7c-kn.1``), and a variant
carries, per CloudRift's OpenAPI schema (``InstanceVariantInfo``): ``cost_per_hour``,
"cost of the instance per hour in currency units (**cents**)" for the whole variant;
``gpu_count``; ``vram`` per GPU, ``dram`` and ``disk`` in bytes; ``cpu_count``
(``logical_cpu_count`` is twice it); ``nodes_per_dc``, the nodes per datacenter that
host the variant, and ``available_nodes_per_dc``, those free now. One offer is one
variant in one datacenter named by either map, priced ``cost_per_hour / 100`` USD,
``available`` where a node is free and ``unavailable`` where none is. A variant with
no GPU is not a GPU offer; a MIG slice (``mig_profile``), no GPU name or no
datacenter is a counted skip.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from functools import partial
from typing import Any, ClassVar, Self

from collectors.base import (
    CollectorError,
    RunContext,
    SkipItem,
    parse_each,
)
from collectors.gpucloud import (
    AUTH_STATUSES,
    GpuCloudCollector,
    api_key_if_set,
    gpu_offer,
    number,
    text,
)
from collectors.http import HttpClient, HttpError
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Offer, PricingModel
from tracker.settings import Settings

__all__ = ["DOCUMENTED_URL", "REQUEST", "CloudRiftCollector", "parse_instance_types"]

log = logging.getLogger(__name__)

PROVIDER = "cloudrift"
DOCUMENTED_URL = "https://api.cloudrift.ai/api/v1/instance-types/list"
API_VERSION = "2025-03-21"
"""The protocol date gpuhunt and dstack pin for this call."""
REQUEST = {
    "version": API_VERSION,
    "data": {"selector": {"ByServiceAndLocation": {"services": ["vm"]}}},
}
"""Virtual machines, the selector CloudRift's own tools (cloudrift-ai/emmy) list with."""
_CENTS = Decimal(100)
_GIB = Decimal(1024**3)


def _per_dc(variant: Mapping[str, Any], field: str) -> dict[str, int]:
    value = variant.get(field) or {}
    if not isinstance(value, Mapping) or not all(
        isinstance(dc, str) and isinstance(n, int) and not isinstance(n, bool)
        for dc, n in value.items()
    ):
        raise SkipItem("malformed_item", f"{field} is not datacenter counts ({value!r:.80})")
    return dict(value)


def _gib(variant: Mapping[str, Any], field: str) -> Decimal | None:
    size = number(variant, field, required=False)
    return size / _GIB if size is not None else None


def _sites(instance_type: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The type's ``datacenters`` by name (the hosting provider and country)."""
    listed = instance_type.get("datacenters")
    if not isinstance(listed, list):
        return {}
    return {
        d["name"]: d for d in listed if isinstance(d, Mapping) and isinstance(d.get("name"), str)
    }


def parse_variant(
    variant: Any, brand: Any, sites: Mapping[str, Mapping[str, Any]]
) -> list[Offer] | None:
    """The offers of one variant; ``None`` for one without GPUs."""
    if not isinstance(variant, Mapping):
        raise SkipItem("malformed_item", f"variant is {type(variant).__name__}")
    name = text(variant, "name")
    count = number(variant, "gpu_count", required=False)
    if not count:
        return None
    if variant.get("mig_profile"):
        raise SkipItem("mig_slice", f"MIG profile {variant['mig_profile']!r}, not whole GPUs")
    if not isinstance(brand, str) or not brand.strip():
        raise SkipItem("malformed_item", f"brand_short missing, no GPU name ({brand!r})")
    cents = number(variant, "cost_per_hour")
    assert cents is not None
    if cents <= 0:
        raise SkipItem("zero_price", f"cost_per_hour {cents}")
    nodes, free = _per_dc(variant, "nodes_per_dc"), _per_dc(variant, "available_nodes_per_dc")
    if not nodes.keys() | free.keys():
        raise SkipItem("no_location", "no datacenter in nodes_per_dc or available_nodes_per_dc")
    vram = _gib(variant, "vram")
    match = resolve_gpu(brand.strip(), vram)
    attributes: dict[str, AttributeValue] = {
        "price_cents_per_hour": cents,
        "logical_cpu_count": number(variant, "logical_cpu_count", required=False),
        "disk_gib": _gib(variant, "disk"),
    }
    offers = []
    for dc in sorted(nodes.keys() | free.keys()):
        site = sites.get(dc, {})
        here: dict[str, AttributeValue] = {
            "nodes": nodes.get(dc),
            "free_nodes": free.get(dc, 0),
            "host_provider": site.get("provider_name") if isinstance(site, Mapping) else None,
            "country_code": site.get("country_code") if isinstance(site, Mapping) else None,
        }
        offers.append(
            gpu_offer(
                dc,
                match,
                brand.strip(),
                attributes | here,
                provider=PROVIDER,
                instance_type=name,
                region=dc,
                pricing=PricingModel.ON_DEMAND,
                price_per_hour=cents / _CENTS,  # 38.75 cents -> $0.3875
                currency="USD",
                gpu_count=count,
                gpu_memory_gib=vram,
                vcpus=number(variant, "cpu_count", required=False),
                memory_gib=_gib(variant, "dram"),
                availability=Availability.AVAILABLE
                if free.get(dc, 0) > 0
                else Availability.UNAVAILABLE,
            )
        )
    return offers


def parse_instance_types(payload: Any, skip: Callable[[str, str], None]) -> list[Offer]:
    """Every GPU offer in an ``instance-types/list`` answer; unpriceable variants skip."""
    data = payload.get("data") if isinstance(payload, Mapping) else None
    types = data.get("instance_types") if isinstance(data, Mapping) else None
    if not isinstance(types, list):
        raise CollectorError("cloudrift: response has no 'data.instance_types' list")
    offers: list[Offer] = []
    for instance_type in types:
        if not isinstance(instance_type, Mapping) or not isinstance(
            instance_type.get("variants"), list
        ):
            skip("malformed_item", f"instance type without a variants list ({instance_type!r:.80})")
            continue
        brand, sites = instance_type.get("brand_short"), _sites(instance_type)
        found = parse_each(
            instance_type["variants"],
            partial(parse_variant, brand=brand, sites=sites),
            skip,
            lambda v: str(v.get("name") or "") if isinstance(v, Mapping) else "",
        )
        offers += [offer for variant_offers in found for offer in variant_offers]
    return offers


class CloudRiftCollector(GpuCloudCollector):
    """On-demand VM prices on CloudRift."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "CloudRift instance types (on-demand VMs, public list)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False  # CloudRift lists no spot prices
    documented: ClassVar[str] = DOCUMENTED_URL
    key_header: ClassVar[tuple[str, str]] = ("X-API-Key", "{}")  # none sent without a key

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings, api_key_if_set(PROVIDER, settings.cloudrift))

    def fetch(self, http: HttpClient, method: str, url: str = "", **kwargs: Any) -> Any:
        try:
            return super().fetch(http, method, url, **kwargs)
        except CollectorError as exc:
            refused = exc.__cause__
            if self._api_key or not isinstance(refused, HttpError):
                raise
            if refused.status not in AUTH_STATUSES:
                raise
            raise CollectorError(
                f"cloudrift: the list now asks for an API key (HTTP {refused.status}); "
                f"set {self.credential_setting()}"
            ) from exc

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        if not self.scope(ctx):
            return
        with self.client() as http:
            payload = self.fetch(http, "POST", json=REQUEST)
        offers = parse_instance_types(payload, ctx.skip)
        log.info("cloudrift: %d offers", len(offers))
        yield from offers
