"""Huawei Cloud GPU and Ascend ECS prices, through Huawei's official Python SDK.

Per region: the SDK's ``BasicCredentials`` looks up the region's project id in IAM
(``KeystoneListProjects``; ``HUAWEICLOUD_SDK_IAM_ENDPOINT`` is honoured by the SDK
itself), ECS ``ListFlavors`` lists the flavors, and BSS prices the GPU/NPU ones in calls
of up to 100 products: ``ListOnDemandResourceRatings`` for one hour on demand and
``ListRateOnPeriodDetail`` for 1- and 3-year subscriptions (effective hourly price =
term price ÷ (years × 8,760)). The China site's BSS answers in CNY, the international
site's BSS-INTL in USD; the currency is read from each response.

The offer's price is the rating's ``amount``: what this account would pay, with its
contract and published discounts. The public list price (``official_website_amount``)
is kept as ``list_price_per_hour`` when it differs. How the SDK is called (clients,
throttling retries, errors in one line) is :mod:`collectors.huawei_sdk`; reading flavors
and ratings is :mod:`collectors.huawei_flavors` and :mod:`collectors.huawei_ratings`.
"""

from __future__ import annotations

import functools
import importlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from decimal import Decimal
from types import ModuleType
from typing import Any, ClassVar, Self

from pydantic import SecretStr

from collectors.base import (
    CollectorError,
    MissingCredentials,
    NotConfigured,
    RunContext,
    SkipItem,
    parse_each,
)
from collectors.huawei_families import catalog_spelling, family_of
from collectors.huawei_flavors import FlavorHardware, parse_flavor, sold_charging_modes
from collectors.huawei_ratings import (
    MAX_PRODUCTS,
    Rating,
    RatingError,
    on_demand_products,
    parse_on_demand,
    parse_period,
    period_products,
)
from tracker.catalog import resolve_gpu
from tracker.models import AttributeValue, Interconnect, InvalidOffer, Offer, PricingModel
from tracker.settings import Settings
from tracker.settings.huawei import AK_ENV, SK_ENV

__all__ = ["HuaweiCollector", "build_offer"]

log = logging.getLogger(__name__)

PROVIDER = "huawei"
_MONEY = Decimal(1).scaleb(-10)
_TERMS: Mapping[PricingModel, int] = {PricingModel.RESERVED_1Y: 1, PricingModel.RESERVED_3Y: 3}


def _sdk() -> ModuleType:
    """:mod:`collectors.huawei_sdk`, imported on first use: Huawei's SDK takes seconds to
    import, and every CLI command lists the collectors."""
    return importlib.import_module("collectors.huawei_sdk")


# ---------------------------------------------------------------- pure parts


def build_offer(
    hardware: FlavorHardware,
    region: str,
    pricing: PricingModel,
    rating: Rating,
) -> Offer:
    """The offer of one flavor priced one way; yearly terms become an hourly price."""
    hours = pricing.term_hours
    if rating.amount <= 0:
        raise SkipItem("zero_price", f"{pricing.value} amount {rating.amount}")
    hourly = (rating.amount / hours).quantize(_MONEY) if hours else rating.amount
    attributes: dict[str, AttributeValue] = {
        "performance_type": hardware.performance_type,
        "generation": hardware.generation,
        "operation_status": hardware.operation_status,
    }
    if rating.list_amount is not None and rating.list_amount != rating.amount:
        listed = (rating.list_amount / hours).quantize(_MONEY) if hours else rating.list_amount
        attributes["list_price_per_hour"] = listed
    if hours:
        attributes["term_price"] = rating.amount
    if rating.discount_name:
        attributes["discount_name"] = rating.discount_name
    generation = hardware.generation or hardware.flavor.partition(".")[0]
    family = family_of(generation)
    match = resolve_gpu(catalog_spelling(hardware.gpu_name, generation), hardware.vram_gib)
    if not match.known:
        attributes["gpu_unknown_reason"] = match.reason
    try:
        return Offer(
            provider=PROVIDER,
            instance_type=hardware.flavor,
            region=region,
            pricing=pricing,
            price_per_hour=hourly,
            currency=rating.currency,
            gpu_model=match.name,
            gpu_count=hardware.gpu_count,
            gpu_memory_gib=hardware.vram_gib,
            vcpus=hardware.vcpus,
            memory_gib=hardware.memory_gib,
            os="linux",
            gpu_raw_name=hardware.gpu_name,
            interconnect=family.interconnect if family is not None else Interconnect.UNKNOWN,
            gpu_known=match.known,
            attributes=attributes,
        )
    except InvalidOffer as exc:
        raise SkipItem("invalid_offer", str(exc)) from None


class HuaweiCollector:
    """GPU/Ascend ECS flavors of Huawei Cloud: on demand and 1/3-year subscriptions."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Huawei Cloud ECS GPU/Ascend flavors priced by BSS (SDK)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(
        {PricingModel.ON_DEMAND, PricingModel.RESERVED_1Y, PricingModel.RESERVED_3Y}
    )
    spot_fetched_separately: ClassVar[bool] = False

    def __init__(self, settings: Settings, ak: SecretStr, sk: SecretStr) -> None:
        self.settings = settings
        self._ak = ak
        self._sk = sk

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        section = settings.huawei
        if not section.enabled:
            raise NotConfigured("huawei is disabled (set huawei.enabled = true to collect it)")
        credentials = section.credentials()
        if credentials is None:
            raise MissingCredentials(
                f"no credentials: set {AK_ENV} and {SK_ENV} "
                "(or huawei.ak / huawei.sk, or their *_file)"
            )
        return cls(settings, *credentials)

    # -- collection ---------------------------------------------------------------

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        scope = ctx.pricing_scope & self.pricing_models
        if not scope:
            return
        regions = self.settings.huawei.resolved_regions()
        sdk = _sdk()
        try:
            bss, models = sdk.bss_client(self.settings.huawei, self._ak, self._sk)
        except sdk.HuaweiApiError as exc:
            raise CollectorError(str(exc)) from None
        failures: list[str] = []
        for region in regions:
            try:
                offers = self._collect_region(region, bss, models, ctx, scope)
            except sdk.HuaweiApiError as exc:
                if exc.auth:
                    raise CollectorError(str(exc)) from None
                failures.append(str(exc))
                ctx.mark_partial(region, str(exc))
                continue
            yield from offers
        if failures and len(failures) == len(regions):
            raise CollectorError(failures[0])

    def _collect_region(
        self,
        region: str,
        bss: Any,
        models: Any,
        ctx: RunContext,
        scope: frozenset[PricingModel],
    ) -> list[Offer]:
        sdk = _sdk()
        section = self.settings.huawei
        ecs, project_id = sdk.ecs_client(section, region, self._ak, self._sk)
        flavors = sdk.list_flavors(section, ecs, region)
        hardware = list(
            parse_each(flavors, parse_flavor, ctx.skip, lambda f: _flavor_name(f, region))
        )
        log.info("huawei: %s: %d GPU/NPU flavors of %d", region, len(hardware), len(flavors))
        by_name = {_name(f): f for f in flavors if isinstance(f, Mapping)}
        modes = {h.flavor: sold_charging_modes(by_name.get(h.flavor, {})) for h in hardware}
        offers: list[Offer] = []
        for pricing in sorted(scope):
            mode = "demand" if pricing is PricingModel.ON_DEMAND else "period"
            priced = [h for h in hardware if mode in modes[h.flavor]]
            ratings = self._rate(bss, models, region, project_id, pricing, priced)
            offers.extend(
                parse_each(
                    priced,
                    functools.partial(_rated_offer, ratings, region, pricing),
                    ctx.skip,
                    functools.partial(_label, region, pricing),
                )
            )
        return offers

    def _rate(
        self,
        bss: Any,
        models: Any,
        region: str,
        project_id: str,
        pricing: PricingModel,
        hardware: Sequence[FlavorHardware],
    ) -> dict[str, Rating]:
        """Rating per flavor name, asking BSS at most :data:`MAX_PRODUCTS` at a time."""
        sdk = _sdk()
        ratings: dict[str, Rating] = {}
        names = [h.flavor for h in hardware]
        for start in range(0, len(names), MAX_PRODUCTS):
            chunk = names[start : start + MAX_PRODUCTS]
            years = _TERMS.get(pricing)
            if years is None:
                products = on_demand_products(region, chunk)
                request = models.ListOnDemandResourceRatingsRequest(
                    body=models.RateOnDemandReq(
                        project_id=project_id,
                        product_infos=[models.DemandProductInfo(**p) for p in products],
                    )
                )
                invoker = bss.list_on_demand_resource_ratings_invoker(request)
                parse: Callable[[Any], dict[str, Rating]] = parse_on_demand
                what = f"region {region}: ListOnDemandResourceRatings"
            else:
                products = period_products(region, chunk, years)
                request = models.ListRateOnPeriodDetailRequest(
                    body=models.RateOnPeriodReq(
                        project_id=project_id,
                        product_infos=[models.PeriodProductInfo(**p) for p in products],
                    )
                )
                invoker = bss.list_rate_on_period_detail_invoker(request)
                parse = parse_period
                what = f"region {region}: ListRateOnPeriodDetail ({years}y)"
            body = sdk.call(self.settings.huawei, invoker, what)
            try:
                by_id = parse(body)
            except RatingError as exc:
                raise sdk.HuaweiApiError(f"huawei: {what}: {exc}") from None
            for i, name in enumerate(chunk, start=1):
                if str(i) in by_id:
                    ratings[name] = by_id[str(i)]
        return ratings


def _rated_offer(
    ratings: Mapping[str, Rating], region: str, pricing: PricingModel, item: FlavorHardware
) -> Offer:
    """``item``'s offer at its BSS rating; a flavor BSS did not rate is a ``no_price`` skip."""
    rating = ratings.get(item.flavor)
    if rating is None:
        raise SkipItem("no_price", "BSS returned no rating for it")
    return build_offer(item, region, pricing, rating)


def _label(region: str, pricing: PricingModel, item: FlavorHardware) -> str:
    return f"{item.flavor} {region} {pricing.value}"


def _flavor_name(flavor: Any, region: str) -> str:
    name = flavor.get("name") if isinstance(flavor, Mapping) else None
    return f"{name or '?'} {region}"


def _name(flavor: Mapping[str, Any]) -> str:
    name = flavor.get("name") or flavor.get("id")
    return name.strip() if isinstance(name, str) else ""
