"""Google Cloud GPU machine prices, composed from the Cloud Billing Catalog.

Compute Engine has no per-machine-type price: the catalog (``services/6F81-5844-456A``)
sells vCPU-hours, GiB-hours of RAM, GPU-hours and GiB-months of local SSD per machine
family, region and usage type. This collector pages through that catalog with
google-cloud-billing's own client (REST transport), keeps the SKUs of the GPU
families (:mod:`collectors.gcp_skus`), and prices each documented shape
(:mod:`collectors.gcp_machines`) per region and usage type as

    vCPUs x core SKU + GiB x RAM SKU + GPUs x GPU SKU (+ bundled local SSD GiB x SSD SKU)

A shape is priced in a region only when every component SKU exists there for that
usage type; otherwise it is a counted skip, never a partial price.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar, Self

from collectors.base import (
    ALL_PRICING,
    WITHOUT_SAVINGS_PLANS,
    CollectorError,
    MissingCredentials,
    NotConfigured,
    RunContext,
    SkipItem,
    SkipSink,
    parse_each,
    term_attributes,
)
from collectors.fabric_docs import documented_network
from collectors.gcp_machines import MACHINE_SHAPES, MachineShape
from collectors.gcp_services import SERVICE_FAMILIES, parse_service_skus
from collectors.gcp_skus import Resource, SkuKind, classify, hourly_price
from collectors.gcp_tpus import TPU_SLICES, TpuSlice, tpu_offer
from tracker.catalog import resolve_gpu
from tracker.errors import one_line
from tracker.models import Offer, PricingModel
from tracker.service_prices import ServicePrice
from tracker.settings import ConfigError, GcpSettings, Settings

__all__ = [
    "COMPUTE_ENGINE_SERVICE",
    "GcpCollector",
    "Rate",
    "RateTable",
    "compose_offers",
    "compose_tpu_offers",
    "parse_skus",
]

log = logging.getLogger(__name__)

COMPUTE_ENGINE_SERVICE = "services/6F81-5844-456A"
DEFAULT_ENDPOINT = "cloudbilling.googleapis.com"
# The catalog is public pricing; this read-only scope is the narrowest that covers it.
SCOPES = ("https://www.googleapis.com/auth/cloud-billing.readonly",)
PROVIDER = "gcp"


@dataclass(frozen=True)
class Rate:
    """An hourly price per unit of one component in one region."""

    amount: Decimal
    currency: str
    sku_id: str


_AMBIGUOUS = Rate(Decimal(-1), "", "")

RateKey = tuple[Resource, str, PricingModel, str]  # (resource, family|gpu, pricing, region)


@dataclass
class RateTable:
    """Component rates by (resource, family-or-GPU, pricing, region).

    Two SKUs pricing the same key at different prices make it ambiguous: machines
    needing it are skipped rather than priced from an arbitrary pick.
    """

    rates: dict[RateKey, Rate] = field(default_factory=dict)

    def add(self, kind: SkuKind, region: str, rate: Rate) -> bool:
        """Record ``rate``; False when it conflicts with a different rate already there."""
        key = (kind.resource, kind.component, kind.pricing, region)
        existing = self.rates.get(key)
        if existing is None:
            self.rates[key] = rate
            return True
        if existing is _AMBIGUOUS:
            return False
        if (existing.amount, existing.currency) == (rate.amount, rate.currency):
            return True
        self.rates[key] = _AMBIGUOUS
        return False

    def get(
        self, resource: Resource, component: str, pricing: PricingModel, region: str
    ) -> Rate | None:
        return self.rates.get((resource, component, pricing, region))

    def regions(self, resource: Resource, component: str, pricing: PricingModel) -> list[str]:
        return sorted(
            r
            for (res, comp, p, r) in self.rates
            if (res, comp, p) == (resource, component, pricing)
        )

    def __len__(self) -> int:
        return len(self.rates)


def parse_skus(
    skus: Iterable[Any],
    skip: SkipSink,
    *,
    pricing_scope: frozenset[PricingModel] = ALL_PRICING,
    regions: frozenset[str] = frozenset(),
) -> RateTable:
    """Fold catalog SKUs (``billing_v1.Sku``) into a :class:`RateTable`.

    Only pricing models in ``pricing_scope`` are kept; ``regions`` (empty = all)
    limits the regions. Unplaceable SKUs of our families, unreadable prices and
    SKUs conflicting with another are reported to ``skip``. Prices keep the catalog's
    currency (``gcp.currency``); the USD figure is computed when read.
    """

    def rate_of(sku: Any) -> tuple[Any, SkuKind, list[str], Rate] | None:
        return _sku_rate(sku, pricing_scope, regions)

    table = RateTable()
    for sku, kind, wanted, rate in parse_each(skus, rate_of, skip):
        for region in wanted:
            if not table.add(kind, region, rate):
                skip(
                    "conflicting_sku",
                    f"SKU {sku.sku_id} {sku.description!r}: another SKU prices "
                    f"{kind.resource} {kind.component} {kind.pricing} in {region} differently",
                )
    return table


def _sku_rate(
    sku: Any, scope: frozenset[PricingModel], regions: frozenset[str]
) -> tuple[Any, SkuKind, list[str], Rate] | None:
    """(sku, what it prices, the wanted regions it is sold in, its rate), or None when
    it is not one of ours or outside the scope; raises SkipItem when it cannot be read."""
    kind = classify(sku)
    if kind is None or kind.pricing not in scope:
        return None
    wanted = [r for r in sku.service_regions if not regions or r in regions]
    if not wanted:
        return None
    price = hourly_price(sku, kind.resource)
    return sku, kind, wanted, Rate(price.amount, price.currency, str(sku.sku_id))


_ORDER = (
    PricingModel.ON_DEMAND,
    PricingModel.SPOT,
    PricingModel.RESERVED_1Y,
    PricingModel.RESERVED_3Y,
)


def _components(shape: MachineShape) -> list[tuple[Resource, str, Decimal]]:
    parts = [
        (Resource.CORE, shape.family, Decimal(shape.vcpus)),
        (Resource.RAM, shape.family, shape.memory_gib),
        (Resource.GPU, shape.gpu, Decimal(shape.gpu_count)),
    ]
    if shape.local_ssd_gib:
        parts.append((Resource.LOCAL_SSD, "", Decimal(shape.local_ssd_gib)))
    return parts


def compose_offers(
    table: RateTable,
    skip: SkipSink,
    *,
    pricing_scope: frozenset[PricingModel] = ALL_PRICING,
    shapes: Iterable[MachineShape] = MACHINE_SHAPES,
) -> Iterator[Offer]:
    """One offer per (shape, region, pricing model) whose components are all priced.

    Regions come from the GPU SKU (a shape cannot run where its GPU is not sold);
    a region missing any other component, or with an ambiguous one, is reported to
    ``skip``.
    """
    for shape in shapes:
        gpu = shape.gpu_type
        match = resolve_gpu(gpu.catalog_name, gpu.memory_gib)
        for pricing in _ORDER:
            if pricing not in pricing_scope:
                continue
            for region in table.regions(Resource.GPU, shape.gpu, pricing):
                try:
                    total, currency, sku_ids = _price_shape(table, shape, pricing, region)
                except SkipItem as exc:
                    skip(exc.reason, exc.detail)
                    continue
                attributes: dict[str, str | int | Decimal | bool | None] = {
                    "machine_family": shape.family,
                    "machine_type": shape.base_machine_type,
                    "accelerator_type": gpu.accelerator_type,
                    "local_ssd_gib": shape.local_ssd_gib,
                    "sku_ids": ",".join(sku_ids),
                }
                if pricing.term_hours is not None:
                    # Committed use discounts are billed monthly, with nothing upfront.
                    attributes.update(term_attributes(currency, Decimal(0), total))
                yield Offer(
                    provider=PROVIDER,
                    instance_type=shape.machine_type,
                    region=region,
                    pricing=pricing,
                    price_per_hour=total,
                    currency=currency,
                    gpu_model=match.name,
                    gpu_count=Decimal(shape.gpu_count),
                    gpu_memory_gib=gpu.memory_gib,
                    vcpus=Decimal(shape.vcpus),
                    memory_gib=shape.memory_gib,
                    interconnect=shape.interconnect,
                    **documented_network(PROVIDER, shape.machine_type),
                    gpu_raw_name=gpu.accelerator_type,
                    gpu_known=match.known,
                    attributes=attributes,
                )


def compose_tpu_offers(
    table: RateTable,
    skip: SkipSink,
    *,
    pricing_scope: frozenset[PricingModel] = ALL_PRICING,
    slices: Iterable[TpuSlice] = TPU_SLICES,
) -> Iterator[Offer]:
    """One offer per (TPU slice, region, pricing model) whose chip SKU prices that
    region (:mod:`collectors.gcp_tpus`); a chip price two SKUs disagree on is a skip."""
    for tpu in slices:
        for pricing in _ORDER:
            if pricing not in pricing_scope:
                continue
            for region in table.regions(Resource.TPU, tpu.version, pricing):
                rate = table.get(Resource.TPU, tpu.version, pricing, region)
                if rate is None or rate is _AMBIGUOUS:
                    skip(
                        "ambiguous_component",
                        f"{tpu.machine_type} in {region} ({pricing}): SKUs disagree on "
                        f"the TPU {tpu.version} chip price",
                    )
                    continue
                yield tpu_offer(tpu, pricing, region, rate.amount, rate.currency, rate.sku_id)


def _price_shape(
    table: RateTable,
    shape: MachineShape,
    pricing: PricingModel,
    region: str,
) -> tuple[Decimal, str, list[str]]:
    """(total, currency, component SKU ids); raises SkipItem when a component is
    missing, ambiguous or priced in another currency than the others."""
    total = Decimal(0)
    currencies: set[str] = set()
    sku_ids: list[str] = []
    where = f"{shape.machine_type} in {region} ({pricing})"
    for resource, component, quantity in _components(shape):
        rate = table.get(resource, component, pricing, region)
        label = f"{resource} of {component}" if component else str(resource)
        if rate is None:
            raise SkipItem("missing_component", f"{where}: no {label} SKU")
        if rate is _AMBIGUOUS:
            raise SkipItem("ambiguous_component", f"{where}: SKUs disagree on the {label} price")
        total += quantity * rate.amount
        currencies.add(rate.currency)
        sku_ids.append(rate.sku_id)
    if len(currencies) != 1:
        raise SkipItem("mixed_currency", f"{where}: components priced in {sorted(currencies)}")
    return total, currencies.pop(), sku_ids


def _retry(settings: GcpSettings) -> Any:
    """Retry 429, 5xx and dropped connections with google-api-core's jittered backoff.

    ``OSError`` covers the REST transport's connection errors and timeouts
    (requests' exceptions derive from it); any other 4xx fails at once.
    """
    from google.api_core import exceptions, retry

    return retry.Retry(
        predicate=retry.if_exception_type(
            exceptions.TooManyRequests,
            exceptions.InternalServerError,
            exceptions.BadGateway,
            exceptions.ServiceUnavailable,
            exceptions.GatewayTimeout,
            OSError,
        ),
        initial=settings.retry_initial_seconds,
        maximum=max(settings.retry_max_seconds, settings.retry_initial_seconds),
        multiplier=2.0,
        timeout=settings.retry_deadline_seconds,
    )


class GcpCollector:
    """GPU machine types and TPU slices on Compute Engine: on-demand, spot and 1/3-year
    commitments."""

    name: ClassVar[str] = "gcp"
    description: ClassVar[str] = (
        "Google Cloud Compute Engine GPU machines and TPU slices (Cloud Billing Catalog API)"
    )
    pricing_models: ClassVar[frozenset[PricingModel]] = WITHOUT_SAVINGS_PLANS
    spot_fetched_separately: ClassVar[bool] = False
    """Spot SKUs sit in the same Compute Engine catalog as every other price, and the
    Catalog API has no usage-type filter: one download serves every pricing model."""

    def __init__(
        self,
        settings: Settings,
        *,
        api_key: str | None = None,
        credentials: Any = None,
    ) -> None:
        if api_key is None and credentials is None:
            raise MissingCredentials(
                "gcp: an API key or Application Default Credentials is required"
            )
        self.settings = settings
        self._api_key = api_key
        self._credentials = credentials
        self._service_skus: list[Any] | None = None
        """The disk and network SKUs of the last whole catalog an offers run read: a
        services run right after (``collect``) reads them instead of downloading again."""

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        gcp = settings.gcp
        if not gcp.enabled:
            raise NotConfigured("gcp: disabled (gcp.enabled = false)")
        try:
            key = gcp.resolved_api_key()
        except ConfigError as exc:
            raise MissingCredentials(str(exc)) from None
        if key is not None and key.get_secret_value():
            return cls(settings, api_key=key.get_secret_value())

        import google.auth
        from google.auth.exceptions import DefaultCredentialsError

        try:
            credentials, _project = google.auth.default(scopes=list(SCOPES))
        except DefaultCredentialsError:
            raise MissingCredentials(
                "gcp: no credentials: set GPU_TRACKER_GCP__API_KEY "
                "(or GPU_TRACKER_GCP__API_KEY_FILE) or configure Application Default Credentials "
                "(GOOGLE_APPLICATION_CREDENTIALS or `gcloud auth application-default login`)"
            ) from None
        return cls(settings, credentials=credentials)

    @property
    def endpoint(self) -> str:
        return self.settings.gcp.endpoint_url or DEFAULT_ENDPOINT

    def _client(self) -> Any:
        from google.api_core.client_options import ClientOptions
        from google.cloud import billing_v1

        # A scheme in api_endpoint is kept by the REST transport ("http://host:port"
        # talks plain HTTP to a local gateway); a bare host gets https.
        options = ClientOptions(api_endpoint=self.endpoint, api_key=self._api_key)
        return billing_v1.CloudCatalogClient(
            transport="rest", client_options=options, credentials=self._credentials
        )

    def fetch_skus(self) -> Iterator[Any]:
        """Every Compute Engine SKU, page by page (each page retried on 429/5xx)."""
        from google.api_core import exceptions
        from google.cloud import billing_v1

        gcp = self.settings.gcp
        request = billing_v1.ListSkusRequest(
            parent=COMPUTE_ENGINE_SERVICE,
            currency_code=gcp.currency_code,
            page_size=gcp.page_size,
        )
        client = self._client()
        page_number = 0
        try:
            pager = client.list_skus(
                request=request, retry=_retry(gcp), timeout=gcp.timeout_seconds
            )
            for page in pager.pages:
                page_number += 1
                log.debug("gcp: catalog page %d: %d SKUs", page_number, len(page.skus))
                yield from page.skus
        except exceptions.GoogleAPICallError as exc:
            raise CollectorError(
                f"gcp: Cloud Billing Catalog at {self.endpoint} failed on page "
                f"{page_number + 1}: {one_line(exc, with_type=False)}"
            ) from None
        except exceptions.RetryError as exc:
            cause = (
                one_line(exc.cause, with_type=False)
                if exc.cause is not None
                else "deadline exceeded"
            )
            raise CollectorError(
                f"gcp: Cloud Billing Catalog at {self.endpoint} still failing on page "
                f"{page_number + 1} after retries: {cause}"
            ) from None
        except OSError as exc:
            raise CollectorError(
                f"gcp: Cloud Billing Catalog at {self.endpoint} unreachable on page "
                f"{page_number + 1}: {one_line(exc, with_type=False)}"
            ) from None
        finally:
            client.transport.close()

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        """The whole catalog, whatever the scope: it cannot be filtered by usage type,
        so a spot-only run downloads everything and keeps spot (see
        ``spot_fetched_separately``)."""
        regions = frozenset(self.settings.gcp.regions)
        scope = ctx.pricing_scope
        skus = self._keeping_service_skus(self.fetch_skus())
        table = parse_skus(skus, ctx.skip, pricing_scope=scope, regions=regions)
        log.info("gcp: %d component rates from the catalog", len(table))
        yield from compose_offers(table, ctx.skip, pricing_scope=scope)
        yield from compose_tpu_offers(table, ctx.skip, pricing_scope=scope)

    def collect_service_prices(self, ctx: RunContext) -> Iterator[ServicePrice]:
        """Persistent disk and internet egress prices (:mod:`collectors.gcp_services`)
        from the same Compute Engine catalog, client, retries and paging as the machines."""
        regions = frozenset(self.settings.gcp.regions)
        skus = self.fetch_skus() if self._service_skus is None else self._service_skus
        yield from parse_service_skus(skus, ctx.skip, regions=regions)

    def _keeping_service_skus(self, skus: Iterable[Any]) -> Iterator[Any]:
        """``skus`` as they come, keeping the few a services run reads once the whole
        catalog has been read (a download that failed half-way keeps nothing)."""
        kept = []
        for sku in skus:
            if str(sku.category.resource_family or "") in SERVICE_FAMILIES:
                kept.append(sku)
            yield sku
        self._service_skus = kept
