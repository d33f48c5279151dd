"""IBM Cloud VPC GPU profiles priced from IBM's public Global Catalog (list prices, no key).

Two requests, both to ``https://globalcatalog.cloud.ibm.com/api/v1`` (docs/providers.md#ibm-cloud
names the readers they were taken from):

1. ``GET /api/v1?q=is.instance&include=metadata`` pages (``_offset``/``_limit``) through catalog
   entries; those of ``kind`` ``instance.profile`` are VPC virtual-server profiles. A profile's
   ``metadata.other.profile.measures`` names, for the ``instance`` component's ``multi-tenant``
   deployment, its pricing ``plan`` and the ``meters`` it is billed by.
2. ``GET /api/v1/{plan}/pricing/deployment`` lists that plan's prices per region
   (``deployment_region`` or ``deployment_location``), each region a list of ``metrics``.

A gen3 GPU profile (``gx3-16x80x1l4``) carries the meter ``INSTANCE_MULTI_TENANT``: it has one
flat rate, the metric ``part-is.instance-hours-<profile>``. The price unit is read from that
metric, never assumed: its ``charge_unit_name`` must be ``INSTANCE_HOURS_MULTI_TENANT`` with
``charge_unit_quantity`` 1 and a ``linear_tier`` ``tier_model`` (one instance for one hour, one
price at ``quantity_tier`` 1); anything else is a counted ``non_hourly_metric`` skip, not a
rescaled guess. The price is the ``amounts`` row for country ``USA`` in ``USD``: IBM's own USD
list price (other countries' rows are other currencies), stored in USD. Gen2 profiles
(``gx2-8x64x1v100``) are billed as a sum of vCPU, memory and GPU meters held in per-profile
composite deployments: not read here, one counted ``composite_price`` skip per profile. The spot
metric (``part-is.spot-<profile>``) is not read: no source names its charge unit.

GPU model and count come from the profile name, IBM's documented pattern
``<family>-<vCPU>x<GiB RAM>x<count><gpu>`` (the GPU profile tables list ``gx3-16x80x1l4`` as
16 vCPU, 80 GiB, ``l4 / 1``); each suffix is read as IBM's profile docs describe it
(``collectors.ibm_parse.GPUS``). The catalog says nothing of capacity, so availability is unknown.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar
from urllib.parse import quote

from collectors.base import CollectorError, RunContext, parse_each
from collectors.gpucloud import GpuCloudCollector
from collectors.http import HttpClient, HttpError
from collectors.ibm_parse import PROVIDER, parse_prices, parse_profile
from tracker.models import Offer, PricingModel

__all__ = ["DOCUMENTED_URL", "IbmCollector"]

log = logging.getLogger(__name__)

DOCUMENTED_URL = "https://globalcatalog.cloud.ibm.com/api/v1"
LIST_QUERY = {"q": "is.instance", "include": "metadata"}
PAGE = 200
MAX_PAGES = 50


def _entry_name(entry: Any) -> str:
    return str(entry.get("name") or entry.get("id") or "") if isinstance(entry, Mapping) else ""


class IbmCollector(GpuCloudCollector):
    """On-demand IBM Cloud VPC GPU profile prices, per region, from the Global Catalog."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "IBM Cloud VPC GPU profiles (Global Catalog list prices, USD)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    documented: ClassVar[str] = DOCUMENTED_URL

    def pages(self, http: HttpClient, url: str, query: Mapping[str, str]) -> list[Any]:
        """Every ``resources`` item of a paged catalog answer (``_offset``/``_limit``)."""
        items: list[Any] = []
        for page in range(MAX_PAGES):
            params = {**query, "_offset": str(page * PAGE), "_limit": str(PAGE)}
            body = self.fetch(http, "GET", url, params=params)
            resources = body.get("resources") if isinstance(body, Mapping) else None
            if not isinstance(resources, list):
                raise CollectorError(f"ibm: {url} answered no 'resources' list")
            items.extend(resources)
            total = body.get("resource_count")
            if len(resources) < PAGE or (isinstance(total, int) and len(items) >= total):
                return items
        raise CollectorError(f"ibm: {url} has more than {MAX_PAGES} pages")

    def _plan_prices(self, http: HttpClient, plan: str) -> list[Any] | None:
        """A pricing plan's deployments (one per region); None if the plan answers 404.
        Profiles may share a plan (its metrics are named per profile), so a run asks
        for each plan once."""
        url = f"{self.url}/{quote(plan, safe='')}/pricing/deployment"
        try:
            return self.pages(http, url, {})
        except CollectorError as exc:
            cause = exc.__cause__
            if isinstance(cause, HttpError) and cause.status == 404:
                return None
            raise

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        if not self.scope(ctx):
            return
        with self.client() as http:
            entries = self.pages(http, self.url, LIST_QUERY)
            profiles = list(parse_each(entries, parse_profile, ctx.skip, _entry_name))
            offers: list[Offer] = []
            plans: dict[str, list[Any] | None] = {}  # a plan's prices, read once a run
            for profile in profiles:
                if profile.plan not in plans:
                    plans[profile.plan] = self._plan_prices(http, profile.plan)
                deployments = plans[profile.plan]
                if deployments is None:
                    ctx.skip("no_pricing", f"{profile.name}: plan {profile.plan}: HTTP 404")
                    continue
                offers.extend(parse_prices(profile, deployments, ctx.skip))
        if profiles and not offers:  # a reshaped catalog, not a market with nothing for sale
            raise CollectorError(f"ibm: no price read for any of {len(profiles)} GPU profiles")
        log.info("ibm: %d offers from %d GPU profiles", len(offers), len(profiles))
        yield from offers
