"""Reading Compute Engine SKUs: which resource a SKU prices, and at what hourly rate.

The Cloud Billing Catalog has no machine-type field: a SKU is identified by its
``description`` ("A2 Instance Core running in Americas", "Nvidia Tesla T4 GPU
attached to Spot Preemptible VMs running in Belgium", "Commitment v1: A2 Cpu in
APAC for 1 Year") plus ``category``. :func:`classify` turns that into a
:class:`SkuKind`; anything it does not recognise is left alone (out of scope) or,
when it looks like one of our GPU families, reported so a catalog rename shows up
as a counted skip instead of silently missing prices.

Quirks handled here, each seen in public captures of the catalog:
* spot SKUs are spelt three ways: ``Spot Preemptible X running in L``, ``X attached to
  Spot Preemptible VMs running in L``, and the older ``Preemptible X running in L``;
  some spot GPU SKUs carry ``usageType`` OnDemand, so the description wins for spot.
* commitments say ``for 1 Year`` / ``for 3 Year`` / ``for 3 Years`` and must agree with
  ``usageType`` Commit1Yr / Commit3Yr (a disagreement is a counted skip).
* N1 predefined cores/RAM sit in resourceGroup ``N1Standard``; N1 commitments are
  plain ``Commitment v1: Cpu|Ram in L for N Year``.
* A3 Mega's core/RAM SKUs are ``A3Plus Instance ...``; its GPU is "H100 80GB Mega"
  or "H100 80GB Plus"; newer GPU SKUs drop the "Nvidia" prefix ("H200 141GB GPU").
* Reserved, Calendar-mode, DWS (Dynamic Workload Scheduler), Custom and Sole-Tenancy
  SKUs are other products and are never read as a list price.
* TPU SKUs (``resourceGroup`` ``TPU``) price one chip-hour, host VM included: "TpuV5e
  running in Delhi", "TpuV5e attached to Spot Preemptible VMs running in ...",
  "Commitment v1: TpuV5p running in Netherlands for 3 Years", and "TPU7x running in
  Americas" as one multi-regional SKU. A "Reserved TpuV5p ... in Calendar Mode" SKU says
  ``usageType`` OnDemand but is a reservation: it is a counted ``reservation_sku`` skip,
  never an on-demand price; so is flex-start ("DWS Defined Duration V6e running in
  Columbus", which drops the "Tpu"). Other TPU products at list-looking rates ("Capacity
  Optimized TpuV6e running in Columbus", OnDemand, 2.70) are ``unrecognised_sku`` skips.
  A SKU missing its ``resourceGroup`` (as trimmed public captures are) whose description
  names a TPU is treated the same, never silently ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from collectors.base import SkipItem
from tracker.models import PricingModel

__all__ = [
    "HOURS_PER_MONTH",
    "Resource",
    "SkuKind",
    "SkuPrice",
    "applicable_rate",
    "classify",
    "hourly_price",
    "money_amount",
]

HOURS_PER_MONTH = Decimal(730)
"""Hours in a month for turning local SSD's GiB-month price into a GiB-hour.

730 (= 8760 / 12) is the month Google's own pricing calculator uses for monthly
estimates of hourly resources (its estimates read "730 hours" per month, e.g. the
calculator export in developmentseed/bioacoustics-api issue attachment 11512854),
and what public catalog consumers use (dstackai/gpuhunt ``providers/gcp.py``:
``hours_in_month = 730  # according to GCP pricing``). Note the catalog's own
``baseUnitConversionFactor`` for ``GiBy.mo`` (2.8759101014016e15 byte-seconds per
GiB-month) implies a 744-hour month; we follow the published 730-hour convention.
"""


class Resource(StrEnum):
    CORE = "core"
    RAM = "ram"
    GPU = "gpu"
    LOCAL_SSD = "local_ssd"
    TPU = "tpu"
    """One TPU chip-hour (the slice's host VM is included in the chip price)."""


# The unit each resource must be priced in; anything else is a malformed SKU.
EXPECTED_UNIT: dict[Resource, str] = {
    Resource.CORE: "h",
    Resource.RAM: "GiBy.h",
    Resource.GPU: "h",
    Resource.LOCAL_SSD: "GiBy.mo",
    Resource.TPU: "h",
}

USAGE_TYPES: dict[str, PricingModel] = {
    "OnDemand": PricingModel.ON_DEMAND,
    "Preemptible": PricingModel.SPOT,
    "Commit1Yr": PricingModel.RESERVED_1Y,
    "Commit3Yr": PricingModel.RESERVED_3Y,
}


@dataclass(frozen=True)
class SkuKind:
    """What a SKU prices: ``family`` is set for core/RAM, ``gpu`` for GPUs and TPUs
    (the TPU version: ``v5e``, ``v5p``, ``v6e``, ``tpu7x``)."""

    resource: Resource
    pricing: PricingModel
    family: str = ""
    gpu: str = ""

    @property
    def component(self) -> str:
        """The key composition looks rates up by: the family or the GPU model."""
        return self.gpu if self.resource in (Resource.GPU, Resource.TPU) else self.family


# Body (description without usage markers and location) -> (resource, family | gpu).
_CORE_RAM: dict[str, tuple[Resource, str]] = {}
for _family, _names in {
    "a2": ("A2",),
    "a3": ("A3",),
    "a3plus": ("A3Plus",),
    "a3ultra": ("A3Ultra",),
    "g2": ("G2",),
}.items():
    for _name in _names:
        _CORE_RAM[f"{_name} Instance Core".lower()] = (Resource.CORE, _family)
        _CORE_RAM[f"{_name} Instance Ram".lower()] = (Resource.RAM, _family)
        _CORE_RAM[f"{_name} Cpu".lower()] = (Resource.CORE, _family)  # commitments
        _CORE_RAM[f"{_name} Ram".lower()] = (Resource.RAM, _family)
_CORE_RAM.update(
    {
        "n1 predefined instance core": (Resource.CORE, "n1"),
        "n1 predefined instance ram": (Resource.RAM, "n1"),
        "cpu": (Resource.CORE, "n1"),  # "Commitment v1: Cpu in Montreal for 1 Year"
        "ram": (Resource.RAM, "n1"),
    }
)

_GPU_BODIES: dict[str, str] = {
    "nvidia tesla a100 gpu": "a100-40gb",
    "nvidia tesla a100 80gb gpu": "a100-80gb",
    "nvidia a100 80gb gpu": "a100-80gb",
    "nvidia h100 80gb gpu": "h100-80gb",
    "nvidia h100 80gb mega gpu": "h100-mega-80gb",
    "nvidia h100 mega 80gb gpu": "h100-mega-80gb",
    "nvidia h100 80gb plus gpu": "h100-mega-80gb",
    "nvidia h200 141gb gpu": "h200-141gb",
    "h200 141gb gpu": "h200-141gb",
    "nvidia l4 gpu": "l4",
    "nvidia tesla t4 gpu": "t4",
    "nvidia tesla v100 gpu": "v100",
    "nvidia tesla p100 gpu": "p100",
    "nvidia tesla p4 gpu": "p4",
}

_TPU_BODIES: dict[str, str] = {
    "tpuv5e": "v5e",
    "tpuv5p": "v5p",
    "tpuv6e": "v6e",
    "tpu7x": "tpu7x",
}
"""TPU SKU bodies (description without usage and location) -> the TPU version."""

_RESERVATION = re.compile(r"^Reserved\b|\bCalendar Mode\b|\bDWS\b|Dynamic Workload Scheduler", re.I)
# A description naming a TPU ("TpuV6e", "TPU7x", "Reserved V6e TPU", "DWS Defined Duration
# V6e"): how a SKU without its resourceGroup (public captures trim it) is still known as TPU.
_TPU_NAMED = re.compile(r"\bTpu|\bV\d+[ep]\b", re.I)

_LOCAL_SSD_BODIES = frozenset({"ssd backed local storage", "local ssd"})

_COMMIT = re.compile(r"^Commitment v1:\s*(?P<rest>.+?)\s+for\s+(?P<years>[13])\s+Years?$", re.I)
_SPOT_PREFIX = re.compile(r"^(?:Spot\s+)?Preemptible\s+(?P<rest>.+)$", re.I)
_SPOT_ATTACHED = re.compile(r"\s+attached to Spot Preemptible VMs\b", re.I)
_LOCATION = re.compile(r"^(?P<body>.+?)(?:\s+running)?\s+in\s+(?P<where>.+)$", re.I)
# Families whose unplaced SKUs are worth counting (a rename there loses prices).
_IN_SCOPE = re.compile(r"\b(?:A2|A3|A3Plus|A3Ultra|G2|N1 Predefined)\b")
_SPACES = re.compile(r"\s+")


def _body(text: str) -> str:
    match = _LOCATION.match(text)
    body = match.group("body") if match else text
    return _SPACES.sub(" ", body).strip().lower()


def _usage_from_description(description: str) -> tuple[str, str | None]:
    """(description without usage markers, usage type the text states or None)."""
    commit = _COMMIT.match(description)
    if commit:
        return commit.group("rest"), f"Commit{commit.group('years')}Yr"
    spot = _SPOT_PREFIX.match(description)
    if spot:
        return spot.group("rest"), "Preemptible"
    if _SPOT_ATTACHED.search(description):
        return _SPOT_ATTACHED.sub("", description), "Preemptible"
    return description, None


def _refuse_reservation(sku: Any, description: str, usage: str) -> None:
    """A TPU reservation (calendar mode, DWS flex-start) says OnDemand but is no list price."""
    if _RESERVATION.search(description):
        raise SkipItem(
            "reservation_sku",
            f"SKU {sku.sku_id} {description!r}: a reservation, not a list price "
            f"(usageType {usage!r})",
        )


def classify(sku: Any) -> SkuKind | None:
    """What ``sku`` (a ``billing_v1.Sku``) prices, or None when it is none of ours.

    Raises :class:`~collectors.base.SkipItem` for a GPU- or TPU-group SKU (or, without a
    group, one whose description names a TPU), or a SKU naming one of our machine
    families, that matches no known pattern or whose usage is inconsistent (reasons
    ``unrecognised_sku``, ``inconsistent_usage``, ``unsupported_usage_type``), and for a
    TPU reservation (``reservation_sku``).
    """
    description = _SPACES.sub(" ", str(sku.description or "")).strip()
    category = sku.category
    group = str(category.resource_group or "")
    category_usage = str(category.usage_type or "")
    rest, stated_usage = _usage_from_description(description)
    body = _body(rest)

    tpu = group == "TPU" or (not group and _TPU_NAMED.search(description) is not None)
    if tpu:
        _refuse_reservation(sku, description, category_usage)
    kind: tuple[Resource, str] | None = _CORE_RAM.get(body)
    if kind is None and body in _TPU_BODIES:
        kind = (Resource.TPU, _TPU_BODIES[body])
    if kind is None and body in _GPU_BODIES:
        kind = (Resource.GPU, _GPU_BODIES[body])
    if kind is None and body in _LOCAL_SSD_BODIES:
        kind = (Resource.LOCAL_SSD, "")
    if kind is None:
        if tpu or group == "GPU" or _IN_SCOPE.search(description):
            raise SkipItem(
                "unrecognised_sku", f"SKU {sku.sku_id} {description!r}: no known pattern"
            )
        return None

    if stated_usage == "Preemptible":
        # Spot wording wins: Google tags some spot GPU SKUs OnDemand.
        if category_usage not in ("Preemptible", "OnDemand"):
            raise SkipItem(
                "inconsistent_usage",
                f"SKU {sku.sku_id} {description!r}: spot wording but usageType {category_usage!r}",
            )
        usage = "Preemptible"
    elif stated_usage is not None:
        if category_usage != stated_usage:
            raise SkipItem(
                "inconsistent_usage",
                f"SKU {sku.sku_id} {description!r}: says {stated_usage} "
                f"but usageType is {category_usage!r}",
            )
        usage = stated_usage
    else:
        if category_usage in ("Commit1Yr", "Commit3Yr"):
            raise SkipItem(
                "inconsistent_usage",
                f"SKU {sku.sku_id} {description!r}: usageType {category_usage!r} "
                "without a commitment term in the description",
            )
        usage = category_usage

    pricing = USAGE_TYPES.get(usage)
    if pricing is None:
        raise SkipItem(
            "unsupported_usage_type", f"SKU {sku.sku_id} {description!r}: usageType {usage!r}"
        )
    resource, key = kind
    if resource in (Resource.GPU, Resource.TPU):
        return SkuKind(resource, pricing, gpu=key)
    return SkuKind(resource, pricing, family=key)


@dataclass(frozen=True)
class SkuPrice:
    """A per-unit hourly price in the SKU's own currency."""

    amount: Decimal
    currency: str


def money_amount(unit_price: Any, where: str) -> Decimal:
    """``units + nanos/1e9`` (google.type.Money), exactly, in Decimal."""
    try:
        units = int(unit_price.units)
        nanos = int(unit_price.nanos)
    except (TypeError, ValueError):
        raise SkipItem("bad_price", f"{where}: units/nanos are not integers") from None
    if not -999_999_999 <= nanos <= 999_999_999:
        raise SkipItem("bad_price", f"{where}: nanos {nanos} out of range")
    if (units > 0 and nanos < 0) or (units < 0 and nanos > 0):
        raise SkipItem("bad_price", f"{where}: units {units} and nanos {nanos} differ in sign")
    return Decimal(units) + Decimal(nanos).scaleb(-9)


def applicable_rate(tiered_rates: Any, usage: Decimal = Decimal(0)) -> Any:
    """The tier that prices ``usage`` units: the highest ``startUsageAmount`` <= usage.

    The collector prices one machine running one hour, i.e. a list price before
    any volume tier, so it asks for ``usage=0``: the first tier, which starts at 0.
    A SKU without a tier covering ``usage`` has no applicable rate (None).
    """
    best = None
    best_start: Decimal | None = None
    for tier in tiered_rates:
        start = Decimal(repr(float(tier.start_usage_amount)))
        if start <= usage and (best_start is None or start > best_start):
            best, best_start = tier, start
    return best


def hourly_price(sku: Any, resource: Resource) -> SkuPrice:
    """The hourly price of one unit (a vCPU, a GiB, a GPU) from the latest pricing info.

    ``pricingInfo`` is a timeline in chronological order; the last entry is current.
    Local SSD's GiB-month price is turned into a GiB-hour with :data:`HOURS_PER_MONTH`.
    A price that cannot be read raises :class:`~collectors.base.SkipItem`.
    """
    where = f"SKU {sku.sku_id} {sku.description!r}"
    if not sku.pricing_info:
        raise SkipItem("no_pricing_info", f"{where}: no pricingInfo")
    expression = sku.pricing_info[-1].pricing_expression
    unit = str(expression.usage_unit or "")
    expected = EXPECTED_UNIT[resource]
    if unit != expected:
        raise SkipItem(
            "unexpected_unit", f"{where}: usageUnit {unit!r}, expected {expected!r} for {resource}"
        )
    tier = applicable_rate(expression.tiered_rates)
    if tier is None:
        raise SkipItem("no_applicable_rate", f"{where}: no tier starts at 0")
    money = tier.unit_price
    currency = str(money.currency_code or "").upper()
    if not re.fullmatch(r"[A-Z]{3}", currency):
        raise SkipItem("bad_price", f"{where}: currencyCode {money.currency_code!r}")
    amount = money_amount(money, where)
    if amount < 0:
        raise SkipItem("bad_price", f"{where}: negative price {amount}")
    if amount == 0:
        raise SkipItem("zero_price", f"{where}: price is 0")
    if resource is Resource.LOCAL_SSD:
        amount = amount / HOURS_PER_MONTH
    return SkuPrice(amount, currency)
