"""DigitalOcean GPU Droplet prices from ``GET /v2/sizes`` (API token).

A Droplet size is sold at one hourly price everywhere (``price_hourly``, USD, for the
whole Droplet) in the regions it lists. Only sizes with ``gpu_info`` are GPU offers:
``gpu_info.count`` GPUs of model ``gpu_info.model`` (a slug: ``nvidia_h100``,
``amd_mi300x``, ``nvidia_rtx6000_ada``), and ``gpu_info.vram.amount`` is the VRAM of
all of them together (8x H100 = 640 GiB, 80 GiB each). One offer per (size, region
in ``regions``), ``available`` when the size's ``available`` flag is true (DigitalOcean:
"whether new Droplets can be created with this size") and ``unavailable`` when it is
false. As for Lambda, a region this collector listed before that the size no longer
names stays an ``unavailable`` offer rather than being delisted; a size DigitalOcean
stops listing is delisted.

The list is paginated (``links.pages.next``); each next link is followed on the
configured endpoint's origin, so an override serves every page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from collectors.base import CollectorError, RunContext, SkipItem, parse_each
from collectors.gpucloud import GpuCloudCollector, documented_url, gpu_offer, number, text
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Availability, Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "DigitalOceanCollector", "parse_size", "parse_sizes"]

log = logging.getLogger(__name__)

PROVIDER = "digitalocean"
DOCUMENTED_URL = "https://api.digitalocean.com/v2/sizes"
PER_PAGE = 200  # the API's maximum page size
MAX_PAGES = 100
_MIB_PER_GIB = Decimal(1024)


def _count(gpu_info: Mapping[str, Any]) -> int:
    count = gpu_info.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise SkipItem("malformed_item", f"gpu_info.count is not a count ({count!r})")
    return count


def _vram_per_gpu(gpu_info: Mapping[str, Any], count: int) -> Decimal | None:
    """GiB of one GPU: ``vram.amount`` is the total over ``count`` GPUs."""
    vram = gpu_info.get("vram")
    if not isinstance(vram, Mapping):
        return None
    unit = vram.get("unit")
    if unit != "gib":
        raise SkipItem("malformed_item", f"gpu_info.vram.unit is {unit!r}, not 'gib'")
    total = number(vram, "amount")
    assert total is not None
    return total / count


def parse_size(item: Any, known_regions: Collection[str] = ()) -> list[Offer] | None:
    """Offers for one size; ``None`` for a size without GPUs (not this tracker's market)."""
    if not isinstance(item, Mapping):
        raise SkipItem("malformed_item", f"size is {type(item).__name__}")
    gpu_info = item.get("gpu_info")
    if not gpu_info:
        return None
    if not isinstance(gpu_info, Mapping):
        raise SkipItem("malformed_item", f"gpu_info is {type(gpu_info).__name__}")
    slug = text(item, "slug")
    count = _count(gpu_info)
    model = text(gpu_info, "model")
    per_gpu = _vram_per_gpu(gpu_info, count)
    price = number(item, "price_hourly")
    assert price is not None
    if price <= 0:
        raise SkipItem("zero_price", f"price_hourly {price}")
    regions = item.get("regions")
    if not isinstance(regions, list) or not all(isinstance(r, str) and r for r in regions):
        raise SkipItem("malformed_item", f"regions is not a list of slugs ({regions!r})")
    creatable = item.get("available")
    if not isinstance(creatable, bool):
        raise SkipItem("malformed_item", f"available is not true/false ({creatable!r})")
    match = resolve_gpu(model, per_gpu)
    memory_mib = number(item, "memory", required=False)
    attributes: dict[str, AttributeValue] = {
        "description": item.get("description")
        if isinstance(item.get("description"), str)
        else None,
        "price_monthly": number(item, "price_monthly", required=False),
        "disk_gb": number(item, "disk", required=False),
        "gpu_vram_total_gib": per_gpu * count if per_gpu is not None else None,
    }
    listed = {r: Availability.AVAILABLE if creatable else Availability.UNAVAILABLE for r in regions}
    listed |= {r: Availability.UNAVAILABLE for r in known_regions if r not in listed}
    return [
        gpu_offer(
            slug,
            match,
            model,
            attributes,
            provider=PROVIDER,
            instance_type=slug,
            region=region,
            pricing=PricingModel.ON_DEMAND,
            price_per_hour=price,
            currency="USD",
            gpu_count=Decimal(count),
            gpu_memory_gib=per_gpu,
            vcpus=number(item, "vcpus", required=False),
            memory_gib=memory_mib / _MIB_PER_GIB if memory_mib is not None else None,
            availability=availability,
        )
        for region, availability in sorted(listed.items())
    ]


def parse_sizes(
    pages: list[Any],
    skip: Callable[[str, str], None],
    known: Mapping[str, Collection[str]] | None = None,
) -> list[Offer]:
    """Every GPU offer in the ``/v2/sizes`` pages; ``known`` maps a slug to the regions
    it was listed in before (those no longer named stay, marked unavailable)."""
    sizes: list[Any] = []
    for page in pages:
        listed = page.get("sizes") if isinstance(page, Mapping) else None
        if not isinstance(listed, list):
            raise CollectorError("digitalocean: response has no 'sizes' list")
        sizes += listed
    before = known or {}

    def parse(item: Any) -> list[Offer] | None:
        slug = item.get("slug") if isinstance(item, Mapping) else None
        return parse_size(item, before.get(slug, ()) if isinstance(slug, str) else ())

    found = parse_each(
        sizes,
        parse,
        skip,
        where=lambda item: str(item.get("slug") or "") if isinstance(item, Mapping) else "",
    )
    return [offer for offers in found for offer in offers]


def next_page(page: Any) -> str | None:
    links = page.get("links") if isinstance(page, Mapping) else None
    pages = links.get("pages") if isinstance(links, Mapping) else None
    following = pages.get("next") if isinstance(pages, Mapping) else None
    return following if isinstance(following, str) and following else None


class DigitalOceanCollector(GpuCloudCollector):
    """On-demand GPU Droplet prices from DigitalOcean."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "DigitalOcean GPU Droplet sizes (on-demand, API token)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False
    """DigitalOcean sells no spot Droplets."""
    documented: ClassVar[str] = DOCUMENTED_URL

    def pages(self) -> list[Any]:
        origin = self.section(self.settings).endpoint_url
        pages: list[Any] = []
        url = f"{self.url}?per_page={PER_PAGE}"
        seen: set[str] = set()
        with self.client() as http:
            while len(pages) < MAX_PAGES:
                seen.add(url)
                page = self.fetch(http, "GET", url)
                pages.append(page)
                following = next_page(page)
                if following is None:
                    return pages
                url = documented_url(following, origin)
                if url in seen:
                    raise CollectorError(f"digitalocean: pagination loop at {url.split('?')[0]}")
        raise CollectorError(f"digitalocean: more than {MAX_PAGES} pages of sizes")

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        if not self.scope(ctx):
            return
        pages = self.pages()
        known: dict[str, set[str]] = {}
        for key in ctx.listed_keys():
            known.setdefault(key[1], set()).add(key[2])  # (provider, instance_type, region, …)
        offers = parse_sizes(pages, ctx.skip, known)
        log.info("digitalocean: %d offers from %d pages", len(offers), len(pages))
        yield from offers
