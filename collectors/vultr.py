"""Vultr GPU plan prices from the public ``GET /v2/plans`` and ``/v2/plans-metal`` (no key).

A plan is one machine shape at one price in every location it lists (``locations``:
where it can be deployed now, so each is an ``available`` offer; a location listed
before and no longer named stays ``unavailable``, as for Lambda). The price is the
plan's ``hourly_cost`` (USD) where the API gives it, else ``monthly_cost`` over the
hours Vultr bills a month at most: 730 for Cloud GPU (``/plans``) and 672 for Bare
Metal (Vultr docs, "How Am I Billed for My Servers?", 2025-09-15), rounded to the
tenth of a cent as Vultr's own hourly figures are (1750 / 730 = 2.397). Preemptible
prices (``hourly_cost_preemptible`` / ``monthly_cost_preemptible``) are spot offers;
``deploy_ondemand`` / ``deploy_preemptible`` false means the plan is not sold that way.

Cloud GPU plans name their GPU (``gpu_type`` ``NVIDIA_A100``) and the VRAM the plan
gets (``gpu_vram_gb``, so one GPU has ``gpu_vram_gb / gpu_count``); ``gpu_count`` is a
number, a numeric string or a fraction (``"1/4"`` of an A40, stored as 0.25 GPU). A
plan without it (older listings, dedicated ``vdm`` plans, which name no GPU at all) is
a counted skip: the VRAM cannot tell one 40 GB A100 from half an 80 GB one. Bare Metal
plans carry no GPU name, so theirs is read from the plan id
(``vbm-256c-2048gb-8-mi300x-gpu``: 8x MI300X) and flagged ``gpu_from_plan_id``, since
Vultr documents the id format only "for general education".
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Mapping
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import (
    Before,
    GpuCloudCollector,
    documented_url,
    gpu_offer,
    listed_before,
    number,
    text,
    where_listed,
)
from collectors.http import HttpClient
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "METAL_URL", "VultrCollector", "parse_plans"]

log = logging.getLogger(__name__)

PROVIDER = "vultr"
DOCUMENTED_URL = "https://api.vultr.com/v2/plans"
METAL_URL = "https://api.vultr.com/v2/plans-metal"
HOURS = {"plans": Decimal(730), "plans_metal": Decimal(672)}
PER_PAGE = 500  # the API's maximum
MAX_PAGES = 50
_CENT_TENTH = Decimal("0.001")
_METAL_GPU = re.compile(r"-(?:(\d+)-)?([a-z0-9]+)-gpu$")
# (pricing, hourly field, monthly field, deploy flag)
_PRICES = (
    (PricingModel.ON_DEMAND, "hourly_cost", "monthly_cost", "deploy_ondemand"),
    (
        PricingModel.SPOT,
        "hourly_cost_preemptible",
        "monthly_cost_preemptible",
        "deploy_preemptible",
    ),
)


def _count(value: Any) -> Decimal | None:
    """``gpu_count`` as sent: 8, "1" or "1/4"; None when absent."""
    if value is None:
        return None
    try:
        if isinstance(value, int) and not isinstance(value, bool):
            return Decimal(value)
        if isinstance(value, str):
            share = Fraction(value.strip())
            return Decimal(share.numerator) / Decimal(share.denominator)
    except (ValueError, ZeroDivisionError):
        pass
    raise SkipItem("malformed_item", f"gpu_count is {value!r}")


def _gpu(plan: Mapping[str, Any], kind: str) -> tuple[str, Decimal | None, bool] | None:
    """(GPU name, count if stated, read from the id); None for a plan without GPUs."""
    if isinstance(plan.get("gpu_type"), str) and plan["gpu_type"].strip():
        return plan["gpu_type"].strip(), _count(plan.get("gpu_count")), False
    plan_id = text(plan, "id")
    if kind == "plans_metal":
        found = _METAL_GPU.search(plan_id)
        if found is None:
            return None
        stated = _count(plan.get("gpu_count"))
        return found.group(2), stated or (Decimal(found.group(1)) if found.group(1) else None), True
    if plan.get("type") in ("vcg", "vdm") or plan.get("gpu_vram_gb") is not None:
        raise SkipItem("no_gpu_type", f"{plan.get('type')} plan without gpu_type")
    return None


def _price(plan: Mapping[str, Any], hourly: str, monthly: str, kind: str) -> Decimal | None:
    per_hour = number(plan, hourly, required=False)
    if per_hour is None:
        per_month = number(plan, monthly, required=False)
        if per_month is None:
            return None
        per_hour = (per_month / HOURS[kind]).quantize(_CENT_TENTH, rounding=ROUND_HALF_UP)
    return per_hour if per_hour > 0 else None


def parse_plan(plan: Any, kind: str, before: Before) -> list[Offer] | None:
    """The offers of one plan (``kind``: ``plans`` or ``plans_metal``); None without GPUs."""
    if not isinstance(plan, Mapping):
        raise SkipItem("malformed_item", f"plan is {type(plan).__name__}")
    gpu = _gpu(plan, kind)
    if gpu is None:
        return None
    raw, count, from_id = gpu
    plan_id = text(plan, "id")
    vram = number(plan, "gpu_vram_gb", required=False)
    if not count:  # never derived: 40 GB of "NVIDIA_A100" is one 40 GB card or half an 80
        raise SkipItem("no_gpu_count", f"{raw} plan without gpu_count")
    match = resolve_gpu(raw, vram / count if vram else None)  # "NVIDIA_A100": vendor ignored
    locations = plan.get("locations")
    if not isinstance(locations, list):
        raise SkipItem("malformed_item", f"locations is {locations!r}")
    now = [r for r in locations if isinstance(r, str) and r]
    ram = number(plan, "ram", required=False)
    attributes: dict[str, AttributeValue] = {
        "plan_type": plan.get("type") if isinstance(plan.get("type"), str) else None,
        "monthly_cost": number(plan, "monthly_cost", required=False),
        "disk_gb": number(plan, "disk", required=False),
        "gpu_vram_gb": vram,
    }
    if from_id:
        attributes["gpu_from_plan_id"] = True
    offers = []
    for pricing, hourly, monthly, flag in _PRICES:
        price = _price(plan, hourly, monthly, kind)
        if price is None or plan.get(flag) is False:
            continue
        vcpus = number(plan, "vcpu_count" if kind == "plans" else "cpu_threads", required=False)
        offers += [
            gpu_offer(
                plan_id,
                match,
                raw,
                attributes,
                provider=PROVIDER,
                instance_type=plan_id,
                region=region,
                pricing=pricing,
                price_per_hour=price,
                currency="USD",
                gpu_count=count,
                gpu_memory_gib=vram / count if vram else None,
                vcpus=vcpus,
                memory_gib=ram / 1024 if ram is not None else None,  # MB (MiB)
                availability=availability,
            )
            for region, availability in sorted(
                where_listed(now, before.get((pricing.value, plan_id), ())).items()
            )
        ]
    return offers


def parse_plans(
    pages: Mapping[str, list[Any]], skip: Callable[[str, str], None], before: Before | None = None
) -> list[Offer]:
    """Every GPU offer in the ``plans`` and ``plans_metal`` pages (keyed by list name)."""
    items: list[tuple[str, Any]] = []
    for kind, kind_pages in pages.items():
        for page in kind_pages:
            listed = page.get(kind) if isinstance(page, Mapping) else None
            if not isinstance(listed, list):
                raise CollectorError(f"vultr: response has no '{kind}' list")
            items += [(kind, plan) for plan in listed]
    found = parse_each(
        items,
        lambda item: parse_plan(item[1], item[0], before or {}),
        skip,
        where=lambda item: str(item[1].get("id") or "") if isinstance(item[1], Mapping) else "",
    )
    return [offer for offers in found for offer in offers]


class VultrCollector(GpuCloudCollector):
    """Cloud GPU and Bare Metal GPU plan prices (on-demand and preemptible) on Vultr."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Vultr GPU plans and GPU bare metal (public, no key)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(
        {PricingModel.ON_DEMAND, PricingModel.SPOT}
    )
    spot_fetched_separately: ClassVar[bool] = False  # preemptible prices are in the same plans
    documented: ClassVar[str] = DOCUMENTED_URL

    def pages(self, http: HttpClient, url: str, params: dict[str, Any]) -> list[Any]:
        """Every page of one list, following ``meta.links.next`` cursors."""
        pages: list[Any] = []
        cursor = ""
        while len(pages) < MAX_PAGES:
            page = self.fetch(
                http, "GET", url, params={**params, **({"cursor": cursor} if cursor else {})}
            )
            pages.append(page)
            meta = page.get("meta") if isinstance(page, Mapping) else None
            links = meta.get("links") if isinstance(meta, Mapping) else None
            following = links.get("next") if isinstance(links, Mapping) else None
            if not isinstance(following, str) or not following:
                return pages
            if following == cursor:
                raise CollectorError(f"vultr: pagination loop at cursor {following!r}")
            cursor = following
        raise CollectorError(f"vultr: more than {MAX_PAGES} pages at {url}")

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        scope = self.scope(ctx)
        if not scope:
            return
        metal = documented_url(METAL_URL, self.settings.vultr.endpoint_url)
        with self.client() as http:
            pages = {
                "plans": self.pages(http, self.url, {"type": "all", "per_page": PER_PAGE}),
                "plans_metal": self.pages(http, metal, {"per_page": PER_PAGE}),
            }
        offers = parse_plans(pages, ctx.skip, listed_before(ctx))
        log.info("vultr: %d offers", len(offers))
        yield from (offer for offer in offers if offer.pricing in scope)
