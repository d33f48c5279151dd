"""Seeweb Cloud Server GPU prices from ``GET /ecs/v2/plans`` (API token).

A plan (``ECS2GPU3``) is one server shape at one ``hourly_price`` for the **whole
server** (``ECS2GPU3``: 2x A100 at 1.98, i.e. 0.99 per GPU-hour, the price of the
1-GPU ``ECS1GPU3``), in every region its ``available_regions`` lists. One offer per
(GPU plan, region). The API sends counts and sizes as strings (``"cpu": "8"``, ``"ram":
"32768"`` MB) and carries no currency: prices are stored in ``seeweb.currency`` (EUR
by default: an assumption, as no Seeweb document found names the currency of
``hourly_price``; Seeweb is an Italian provider). ``available: false`` is a retired plan (no offer);
the regions are where a plan is sold, not live capacity (Seeweb's ``/plans/availables``
would say that), so availability is ``unknown``. Plans without GPUs are not offers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import GpuCloudCollector, gpu_offer, loose_number, number, text
from tracker.catalog import normalize_gpu_name, resolve_gpu
from tracker.models import AttributeValue, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "SeewebCollector", "parse_plans"]


PROVIDER = "seeweb"
DOCUMENTED_URL = "https://api.seeweb.it/ecs/v2/plans"
_MB_PER_GIB = Decimal(1024)


def _regions(plan: Mapping[str, Any]) -> list[str]:
    listed = plan.get("available_regions")
    if not isinstance(listed, list):
        raise SkipItem("malformed_item", f"available_regions is {listed!r}")
    found = []
    for region in listed:
        code = region.get("location") if isinstance(region, Mapping) else None
        if not isinstance(code, str) or not code.strip():
            raise SkipItem("malformed_item", f"region entry {region!r} has no location")
        if code.strip() not in found:
            found.append(code.strip())
    return found


def parse_plan(plan: Any, currency: str) -> list[Offer] | None:
    """The offers of one plan; ``None`` for a plan without GPUs or a retired one."""
    if not isinstance(plan, Mapping):
        raise SkipItem("malformed_item", f"plan is {type(plan).__name__}")
    count = loose_number(plan, "gpu")
    if not count or plan.get("available") is False:
        return None
    name, label = text(plan, "name"), text(plan, "gpu_label")
    price = number(plan, "hourly_price")
    assert price is not None
    if price <= 0:
        raise SkipItem("zero_price", f"hourly_price {price}")
    ram = loose_number(plan, "ram")
    match = resolve_gpu(label)
    attributes: dict[str, AttributeValue] = {
        "gpu_label": label,
        "disk_gb": loose_number(plan, "disk"),
        "host_type": plan.get("host_type") if isinstance(plan.get("host_type"), str) else None,
    }
    return [
        gpu_offer(
            name,
            match,
            label,
            attributes,
            provider=PROVIDER,
            instance_type=name,
            region=region,
            pricing=PricingModel.ON_DEMAND,
            price_per_hour=price,
            currency=currency,
            gpu_count=count,
            gpu_memory_gib=normalize_gpu_name(label).memory_gib,  # "L40s 48GB"
            vcpus=loose_number(plan, "cpu"),
            memory_gib=ram / _MB_PER_GIB if ram is not None else None,
        )
        for region in _regions(plan)
    ]


def parse_plans(
    payload: Any, skip: Callable[[str, str], None], currency: str = "EUR"
) -> list[Offer]:
    """Every GPU offer in a ``/plans`` response; unpriceable plans are counted skips."""
    plans = payload.get("plans") if isinstance(payload, Mapping) else None
    if not isinstance(plans, list):
        raise CollectorError("seeweb: response has no 'plans' list")
    found = parse_each(
        plans,
        lambda plan: parse_plan(plan, currency),
        skip,
        where=lambda plan: str(plan.get("name") or "") if isinstance(plan, Mapping) else "",
    )
    return [offer for offers in found for offer in offers]


class SeewebCollector(GpuCloudCollector):
    """On-demand Cloud Server GPU prices on Seeweb."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Seeweb Cloud Server GPU plans (on-demand, API token)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False  # Seeweb sells no spot servers
    documented: ClassVar[str] = DOCUMENTED_URL
    key_header: ClassVar[tuple[str, str]] = ("X-APITOKEN", "{}")  # Seeweb's own header

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return self.listing(
            ctx,
            lambda payload, scope: parse_plans(payload, ctx.skip, self.settings.seeweb.currency),
        )
