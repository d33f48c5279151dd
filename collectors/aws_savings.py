"""AWS Savings Plans: ``DescribeSavingsPlansOfferingRates`` -> savings-plan offers.

A Savings Plan is a 1- or 3-year commitment to spend so many dollars an hour; each
instance type then runs at the plan's rate for it. The rate is already the effective
hourly price whatever the payment option (an upfront payment pre-pays the commitment,
it does not lower the rate further), so it is stored as it comes, one offer per
(instance type, region, term, plan type, payment option): ``pricing``
``savings_plan_1y``/``savings_plan_3y``, ``offering_class`` the plan type
(``ec2_instance`` or ``compute``) and ``payment_option`` as for reservations.

Fetching asks for what the on-demand offers cover (Linux/UNIX, shared tenancy, the
region's GPU and accelerator types) and follows ``nextToken`` itself: botocore has no
paginator for this operation. Parsing re-checks each rate (a loosened filter or a
proxy that ignores it can never store a Windows or Dedicated rate as Linux) and reports
each rate it cannot price as a skip; the payload's other rates are still priced.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from collectors.aws_hardware import PROVIDER, InstanceHardware
from collectors.aws_pricelist import PAYMENT_OPTIONS
from collectors.base import SkipItem, SkipSink
from tracker.models import AttributeValue, Offer, OfferKey, PricingModel

__all__ = [
    "PLAN_TYPES",
    "SAVINGS_PLANS",
    "fetch_savings_plan_rates",
    "parse_savings_plan_rates",
    "savings_plan_request",
]

SAVINGS_PLANS = frozenset({PricingModel.SAVINGS_PLAN_1Y, PricingModel.SAVINGS_PLAN_3Y})
# The API's plan types -> offering_class (SageMaker and Database plans price no EC2 type).
PLAN_TYPES = {"EC2Instance": "ec2_instance", "Compute": "compute"}
DURATIONS = {
    31_536_000: PricingModel.SAVINGS_PLAN_1Y,  # 365 days
    94_608_000: PricingModel.SAVINGS_PLAN_3Y,  # 3 × 365 days
}
PAGE_SIZE = 1000  # the API's maximum maxResults
LINUX = "Linux/UNIX"
SHARED = "shared"
# What the request's filters ask for, re-checked per rate (property name -> value).
EXPECTED_PROPERTIES = {"productDescription": LINUX, "tenancy": SHARED}
# On-demand Linux usage on shared tenancy: "BoxUsage:p5.48xlarge" (us-east-1) or
# "USW2-BoxUsage:p5.48xlarge"; Dedicated ("DedicatedUsage:") and hosts are other products.
BOX_USAGE = "BoxUsage:"
LINUX_OPERATION = "RunInstances"


def savings_plan_request(region: str, types: Sequence[str]) -> dict[str, Any]:
    """The request for ``region``'s EC2 Instance and Compute plan rates of ``types``."""
    return {
        "products": ["EC2"],
        "serviceCodes": ["AmazonEC2"],
        "savingsPlanTypes": sorted(PLAN_TYPES),
        "filters": [
            {"name": "region", "values": [region]},
            {"name": "tenancy", "values": [SHARED]},
            {"name": "productDescription", "values": [LINUX]},
            {"name": "instanceType", "values": sorted(types)},
        ],
        "maxResults": PAGE_SIZE,
    }


def fetch_savings_plan_rates(
    client: Any, region: str, types: Sequence[str]
) -> list[Mapping[str, Any]]:
    """Every page of ``region``'s rates for ``types``, following ``nextToken`` (raises
    botocore's errors; a repeated token would loop forever, so it ends the pages)."""
    request = savings_plan_request(region, types)
    results: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    while True:
        page = client.describe_savings_plans_offering_rates(**request)
        results.extend(page.get("searchResults") or [])
        token = page.get("nextToken")
        if not token or token in seen:
            return results
        seen.add(token)
        request["nextToken"] = token


def parse_savings_plan_rates(
    rates: Sequence[Mapping[str, Any]],
    hardware: Mapping[str, InstanceHardware],
    skip: SkipSink,
    *,
    region: str,
    scope: frozenset[PricingModel] = SAVINGS_PLANS,
) -> Iterator[Offer]:
    """The offers of ``region``'s ``searchResults`` within ``scope``; a rate that cannot
    be priced, or a second rate for an offer already priced, is one skip."""
    seen: set[OfferKey] = set()
    for rate in rates:
        try:
            offer = _offer(rate, hardware, region)
        except SkipItem as exc:
            skip(exc.reason, exc.detail)
            continue
        if offer.pricing not in scope:
            continue
        key = offer.key()
        if key in seen:
            skip("duplicate_offer", f"{key!r}: a second savings plan rate")
            continue
        seen.add(key)
        yield offer


def _properties(rate: Mapping[str, Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    for p in rate.get("properties") or []:
        if isinstance(p, Mapping) and isinstance(p.get("name"), str):
            value = p.get("value")
            if isinstance(value, str):
                found[p["name"]] = value
    return found


def _offer(rate: Mapping[str, Any], hardware: Mapping[str, InstanceHardware], region: str) -> Offer:
    """One rate as an offer; raises SkipItem naming the rate and what was wrong."""
    props = _properties(rate)
    usage = str(rate.get("usageType", ""))
    instance_type = props.get("instanceType", "")
    where = f"{instance_type or '?'} {props.get('region', region)} rate {usage or '?'}"
    if not instance_type:
        raise SkipItem("not_an_instance", f"{where}: no instanceType property")
    if props.get("region", region) != region:
        raise SkipItem("filtered_attributes", f"{where}: asked for region {region}")
    for name, expected in EXPECTED_PROPERTIES.items():
        if props.get(name, expected) != expected:
            raise SkipItem("filtered_attributes", f"{where}: {name}={props[name]!r}")
    operation = rate.get("operation")
    if BOX_USAGE not in usage or operation != LINUX_OPERATION or rate.get("unit") != "Hrs":
        detail = f"{where}: operation {operation!r}, unit {rate.get('unit')!r}"
        raise SkipItem("filtered_attributes", detail)
    offering = rate.get("savingsPlanOffering") or {}
    pricing = DURATIONS.get(offering.get("durationSeconds"))  # type: ignore[arg-type]
    plan = PLAN_TYPES.get(offering.get("planType", ""))
    payment = PAYMENT_OPTIONS.get(offering.get("paymentOption", ""))
    if pricing is None or plan is None or payment is None:
        terms = {k: offering.get(k) for k in ("planType", "paymentOption", "durationSeconds")}
        detail = f"{where}: savingsPlanOffering {terms!r}"
        raise SkipItem("unknown_savings_plan", detail)
    currency = offering.get("currency")
    if not isinstance(currency, str) or not currency:
        raise SkipItem("malformed_item", f"{where}: savingsPlanOffering has no currency")
    amount = _rate(rate.get("rate"), where)
    hw = hardware.get(instance_type)
    if hw is None:
        raise SkipItem("unknown_gpu", f"{where}: no GPU/accelerator for this type")
    attrs: dict[str, AttributeValue] = dict(hw.attributes())
    attrs["savings_plan_type"] = str(offering["planType"])
    if offering.get("offeringId"):
        attrs["savings_plan_offering_id"] = str(offering["offeringId"])
    return Offer(
        provider=PROVIDER,
        instance_type=instance_type,
        region=region,
        pricing=pricing,
        price_per_hour=amount,
        currency=currency,
        payment_option=payment,
        offering_class=plan,
        attributes=attrs,
        **hw.offer_fields(),
    )


def _rate(value: Any, where: str) -> Decimal:
    """The rate: a decimal string on the wire ("2.1000000000")."""
    try:
        amount = Decimal(value) if isinstance(value, str) else None
    except InvalidOperation:
        amount = None
    if amount is None or not amount.is_finite():
        raise SkipItem("malformed_item", f"{where}: rate {value!r} is not a number")
    if amount <= 0:
        raise SkipItem("zero_price", f"{where}: rate {amount}")
    return amount
