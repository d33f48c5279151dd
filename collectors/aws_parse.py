"""Pure parsers for the AWS payloads: Price List items, spot history, instance types.

Nothing here talks to AWS: each function takes a decoded (or raw) payload and
returns offers plus the items it could not price, each with a stable reason.
That is what lets the tests replay recorded responses, and what the benchmark
times. The collector in ``collectors/aws.py`` does the fetching.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from types import MappingProxyType
from typing import Any

from tracker.models import (
    AttributeValue,
    Interconnect,
    InvalidOffer,
    Offer,
    PricingModel,
    to_decimal,
)

__all__ = [
    "PROVIDER",
    "InstanceHardware",
    "ParseResult",
    "Skip",
    "SpotRisk",
    "UsdRate",
    "effective_hourly",
    "parse_instance_types",
    "parse_price_list_item",
    "parse_spot_history",
]

log = logging.getLogger(__name__)

PROVIDER = "aws"
MIB_PER_GIB = Decimal(1024)
NO_HARDWARE = "no GPU/accelerator in DescribeInstanceTypes for this type"
_QUANTUM = Decimal("1e-10")
_ZERO = Decimal(0)  # the Price List's own precision (10 decimals)

UsdRate = Callable[[str], Decimal | None]
GpuResolver = Callable[[str, Decimal | None], Any]

# The Price List's words -> the offer fields the store keys on.
PAYMENT_OPTIONS = {
    "No Upfront": "no_upfront",
    "Partial Upfront": "partial_upfront",
    "All Upfront": "all_upfront",
}
LEASES = {"1yr": PricingModel.RESERVED_1Y, "3yr": PricingModel.RESERVED_3Y}
OFFERING_CLASSES = frozenset({"standard", "convertible"})
RESERVED = frozenset(LEASES.values())

# What the server-side filter asks for; re-checked per item so a loosened filter
# (or a proxy that ignores it) can never store a Windows or Dedicated price as Linux.
EXPECTED_ATTRIBUTES = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
}


def _usd_only(currency: str) -> Decimal | None:
    return Decimal(1) if currency == "USD" else None


@dataclass(frozen=True, slots=True)
class Skip:
    """One item that produced no offer: ``reason`` is a stable label, ``detail`` says which."""

    reason: str
    detail: str


@dataclass(slots=True)
class ParseResult:
    offers: list[Offer] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)

    def skip(self, reason: str, detail: str) -> None:
        self.skips.append(Skip(reason, detail))


@dataclass(frozen=True, slots=True)
class InstanceHardware:
    """Accelerator facts of one instance type, already resolved through the GPU catalog.

    ``kind`` is ``"gpu"`` or ``"accelerator"`` (Inferentia, Trainium, Qualcomm AI100):
    accelerators are priced like GPUs but never named as one.
    """

    instance_type: str
    gpu_model: str
    gpu_raw_name: str
    gpu_known: bool
    gpu_count: Decimal
    gpu_memory_gib: Decimal | None
    vcpus: Decimal | None
    memory_gib: Decimal | None
    interconnect: Interconnect
    kind: str
    manufacturer: str
    partition: Decimal | None = None
    """Share of one physical GPU (g6f: 0.125); None for whole GPUs."""

    def offer_fields(self) -> dict[str, Any]:
        """The Offer keyword arguments that describe the machine (same for every price)."""
        return {
            "gpu_model": self.gpu_model,
            "gpu_raw_name": self.gpu_raw_name,
            "gpu_known": self.gpu_known,
            "gpu_count": self.gpu_count,
            "gpu_memory_gib": self.gpu_memory_gib,
            "vcpus": self.vcpus,
            "memory_gib": self.memory_gib,
            "interconnect": self.interconnect,
        }

    def attributes(self) -> dict[str, AttributeValue]:
        attrs: dict[str, AttributeValue] = {"accelerator_kind": self.kind}
        if self.manufacturer:
            attrs["accelerator_manufacturer"] = self.manufacturer
        if self.partition is not None:
            attrs["gpu_partition_size"] = self.partition
        return attrs


@dataclass(frozen=True, slots=True)
class SpotRisk:
    """Spot Instance Advisor figures for one region/instance type (Linux)."""

    interruption_bucket: str
    interruption_max_pct: int
    spot_savings_pct: int

    def attributes(self) -> dict[str, AttributeValue]:
        return {
            "interruption_bucket": self.interruption_bucket,
            "interruption_max_pct": self.interruption_max_pct,
            "spot_savings_pct": self.spot_savings_pct,
        }


# --------------------------------------------------------------------------- hardware


def _resolver() -> GpuResolver:
    from tracker.catalog import resolve_gpu

    return resolve_gpu


def _mib_to_gib(value: Any, name: str) -> Decimal | None:
    if value in (None, 0):
        return None
    return (to_decimal(value, name) / MIB_PER_GIB).quantize(Decimal("0.001"))


def _device(info: Mapping[str, Any], list_key: str) -> Mapping[str, Any] | None:
    devices = info.get(list_key) or []
    return devices[0] if devices and isinstance(devices[0], Mapping) else None


def parse_instance_types(
    items: Iterable[Mapping[str, Any]],
    *,
    include_accelerators: bool = True,
    resolve: GpuResolver | None = None,
) -> tuple[dict[str, InstanceHardware], list[Skip]]:
    """``DescribeInstanceTypes`` items -> hardware of the GPU/ML-accelerator types.

    Instance types without a GPU or ML accelerator are left out silently (they are
    not this tracker's market); video transcoders (``MediaAcceleratorInfo``) and
    FPGAs are not ML accelerators either. A GPU name the catalog does not know is
    kept under its raw name and flagged ``gpu_known=False``.
    """
    resolve_gpu = resolve or _resolver()
    hardware: dict[str, InstanceHardware] = {}
    skips: list[Skip] = []
    for item in items:
        name = item.get("InstanceType")
        if not isinstance(name, str) or not name:
            skips.append(
                Skip("malformed_instance_type", f"item without InstanceType: {item!r:.80}")
            )
            continue
        try:
            hw = _hardware(name, item, include_accelerators, resolve_gpu)
        except InvalidOffer as exc:
            skips.append(Skip("malformed_instance_type", f"{name}: {exc}"))
            continue
        if hw is not None:
            hardware[name] = hw
    return hardware, skips


@dataclass(frozen=True, slots=True)
class _Common:
    instance_type: str
    vcpus: Decimal | None
    memory_gib: Decimal | None


def _hardware(
    name: str, item: Mapping[str, Any], include_accelerators: bool, resolve_gpu: GpuResolver
) -> InstanceHardware | None:
    vcpus = item.get("VCpuInfo", {}).get("DefaultVCpus")
    memory = item.get("MemoryInfo", {}).get("SizeInMiB")
    common = _Common(
        instance_type=name,
        vcpus=to_decimal(vcpus, f"{name}.VCpuInfo.DefaultVCpus") if vcpus else None,
        memory_gib=_mib_to_gib(memory, f"{name}.MemoryInfo.SizeInMiB"),
    )
    gpu = _device(item.get("GpuInfo") or {}, "Gpus")
    if gpu is not None:
        return _gpu_hardware(name, gpu, resolve_gpu, common)
    if not include_accelerators:
        return None
    # Neuron (Inferentia/Trainium) first: it is the newer, more precise block;
    # InferenceAcceleratorInfo also covers Qualcomm AI100 (dl2q).
    accel = _device(item.get("NeuronInfo") or {}, "NeuronDevices")
    manufacturer = "AWS"
    if accel is None:
        accel = _device(item.get("InferenceAcceleratorInfo") or {}, "Accelerators")
        manufacturer = str(accel.get("Manufacturer", "")) if accel else ""
    if accel is None:
        return None
    raw = str(accel.get("Name") or "").strip()
    count = to_decimal(accel.get("Count", 0), f"{name}.accelerator Count")
    if not raw or count <= 0:
        raise InvalidOffer(f"{name}.accelerator", "accelerator without a name or count")
    per_device = _mib_to_gib(accel.get("MemoryInfo", {}).get("SizeInMiB"), f"{name}.accel memory")
    # Accelerator names are unambiguous, and their memory figures are not reliable
    # (trn2 reports 512 GiB per 96 GiB Trainium2 device), so resolve by name alone.
    match = resolve_gpu(raw, None)
    spec = getattr(match, "spec", None)
    if spec is not None and getattr(spec, "kind", "accelerator") == "gpu":
        raise InvalidOffer(f"{name}.accelerator", f"{raw!r} resolved to GPU {match.name!r}")
    if spec is not None and per_device is not None and per_device > spec.vram_gib * 2:
        log.debug("%s: %s GiB per %s is implausible; using the datasheet", name, per_device, raw)
        per_device = spec.vram_gib
    return InstanceHardware(
        gpu_model=match.name,
        gpu_raw_name=raw,
        gpu_known=match.known,
        gpu_count=count,
        gpu_memory_gib=per_device,
        interconnect=Interconnect.UNKNOWN,
        kind="accelerator",
        manufacturer=manufacturer,
        instance_type=common.instance_type,
        vcpus=common.vcpus,
        memory_gib=common.memory_gib,
    )


def _gpu_hardware(
    name: str, gpu: Mapping[str, Any], resolve_gpu: GpuResolver, common: _Common
) -> InstanceHardware:
    raw = str(gpu.get("Name") or "").strip()
    if not raw:
        raise InvalidOffer(f"{name}.GpuInfo.Gpus[0].Name", "missing")
    count = to_decimal(gpu.get("Count", 0), f"{name}.GpuInfo.Gpus[0].Count")
    partition_raw = gpu.get("GpuPartitionSize")
    partition = (
        to_decimal(partition_raw, f"{name}.GpuPartitionSize") if partition_raw is not None else None
    )
    share: Decimal | None = None
    if partition is not None and Decimal(0) < partition < Decimal(1):
        # g6f/gr6f: Count is 0 and the instance owns a slice of one GPU.
        logical = to_decimal(gpu.get("LogicalGpuCount", 1) or 1, f"{name}.LogicalGpuCount")
        share = partition.normalize()
        count = partition * logical
    if count <= 0:
        raise InvalidOffer(f"{name}.GpuInfo.Gpus[0].Count", f"no GPUs ({count})")
    memory = _mib_to_gib(gpu.get("MemoryInfo", {}).get("SizeInMiB"), f"{name}.GPU memory")
    # A slice reports its share of the memory; offers carry VRAM per whole GPU
    # (the convention every collector follows: usable VRAM = gpu_count x
    # gpu_memory_gib), which is also what the catalog needs to tell A100 40/80 GB
    # and V100 16/32 GB apart.
    hint = memory / share if memory is not None and share else memory
    match = resolve_gpu(raw, hint)
    spec = getattr(match, "spec", None)
    if spec is None:
        interconnect = Interconnect.UNKNOWN
    elif getattr(spec, "kind", "gpu") != "gpu":
        raise InvalidOffer(f"{name}.GpuInfo", f"{raw!r} resolved to non-GPU {match.name!r}")
    else:
        interconnect = Interconnect.NVLINK if spec.nvlink else Interconnect.PCIE
    return InstanceHardware(
        gpu_model=match.name,
        gpu_raw_name=raw,
        gpu_known=match.known,
        gpu_count=count,
        gpu_memory_gib=hint,
        interconnect=interconnect,
        kind="gpu",
        manufacturer=str(gpu.get("Manufacturer", "")),
        partition=share,
        instance_type=common.instance_type,
        vcpus=common.vcpus,
        memory_gib=common.memory_gib,
    )


# ------------------------------------------------------------------------- price list


def effective_hourly(hourly: Decimal, upfront: Decimal, term_hours: int) -> Decimal:
    """Reserved cost per hour over the whole term: recurring hourly + upfront spread evenly."""
    return (hourly + upfront / term_hours).quantize(_QUANTUM, rounding=ROUND_HALF_EVEN)


def _amount(value: Any, where: str) -> Decimal:
    """A Price List amount (always a decimal string on the wire) as a Decimal."""
    if type(value) is str:
        try:
            result = Decimal(value)
        except InvalidOperation:
            raise InvalidOffer(where, f"not a number: {value!r}") from None
        if not result.is_finite():
            raise InvalidOffer(where, f"must be finite, got {value!r}")
        return result
    return to_decimal(value, where)


def _dimensions(term: Mapping[str, Any], where: str) -> tuple[str, Decimal, Decimal]:
    """(currency, hourly, upfront) of one term's price dimensions.

    Hot path of the collector (13 terms per product): no work is done for the
    error messages unless there is an error.
    """
    hourly: Decimal | None = None
    upfront = _ZERO
    currency: str | None = None
    dims = term.get("priceDimensions")
    if not isinstance(dims, Mapping) or not dims:
        raise InvalidOffer(where, "no priceDimensions")
    for dim in dims.values():
        price_per_unit = dim.get("pricePerUnit")
        if not isinstance(price_per_unit, Mapping) or len(price_per_unit) != 1:
            raise InvalidOffer(
                f"{where}.pricePerUnit", f"expected one currency, got {price_per_unit!r}"
            )
        ((dim_currency, raw),) = price_per_unit.items()
        amount = _amount(raw, f"{where}.pricePerUnit")
        if currency is None:
            currency = dim_currency
        elif dim_currency != currency:
            raise InvalidOffer(where, f"mixed currencies {currency} and {dim_currency}")
        unit = dim.get("unit")
        if unit == "Hrs":
            if hourly is not None:
                raise InvalidOffer(where, "more than one hourly price dimension")
            hourly = amount
        elif unit == "Quantity":
            upfront += amount
        else:
            raise InvalidOffer(where, f"unexpected price unit {unit!r}")
    if hourly is None or currency is None:
        raise InvalidOffer(where, "no hourly (Hrs) price dimension")
    return currency, hourly, upfront


def parse_price_list_item(
    item: Mapping[str, Any] | str | bytes,
    hardware: Mapping[str, InstanceHardware],
    *,
    region_hint: str | None = None,
    pricing_scope: frozenset[PricingModel] = frozenset(PricingModel),
    usd_rate: UsdRate = _usd_only,
) -> ParseResult:
    """One ``GetProducts`` ``PriceList`` element -> on-demand and reserved offers.

    ``item`` may be the JSON string exactly as the API returns it. The region is
    the item's ``regionCode`` (older items lack it: then ``region_hint``, the
    region the query was filtered on). Reserved offers are priced at their
    effective hourly cost (see :func:`effective_hourly`) with the upfront fee and
    recurring hourly kept in the attributes. Every term that cannot be priced is
    a skip with a reason; the item's other terms are still returned.
    """
    result = ParseResult()
    if isinstance(item, str | bytes):
        try:
            item = json.loads(item)
        except ValueError as exc:
            result.skip("bad_json", f"PriceList item is not JSON: {exc}")
            return result
    if not isinstance(item, Mapping):
        result.skip("bad_json", f"PriceList item is a {type(item).__name__}, not an object")
        return result
    product = item.get("product") or {}
    attrs = product.get("attributes") or {}
    sku = product.get("sku", "?")
    instance_type = attrs.get("instanceType")
    if not instance_type:
        result.skip("not_an_instance", f"sku {sku}: no instanceType attribute")
        return result
    region = attrs.get("regionCode") or region_hint
    where = f"{instance_type} sku {sku}"
    if not region:
        result.skip("no_region", f"{where}: no regionCode and no region queried")
        return result
    where = f"{instance_type} {region} sku {sku}"
    for key, expected in EXPECTED_ATTRIBUTES.items():
        value = attrs.get(key)
        if value is not None and value != expected:
            result.skip("filtered_attributes", f"{where}: {key}={value!r}, expected {expected!r}")
            return result
    market = attrs.get("marketoption")
    if market is not None and market != "OnDemand":
        result.skip("filtered_attributes", f"{where}: marketoption={market!r}")
        return result
    hw = hardware.get(instance_type)
    if hw is None:
        result.skip("unknown_gpu", f"{where}: {NO_HARDWARE}")
        return result
    terms = item.get("terms")
    if not isinstance(terms, Mapping) or not (terms.get("OnDemand") or terms.get("Reserved")):
        result.skip("missing_terms", f"{where}: no OnDemand or Reserved terms")
        return result
    base = _Base(instance_type, region, hw, usd_rate, where)
    if PricingModel.ON_DEMAND in pricing_scope:
        on_demand = terms.get("OnDemand") or {}
        if not on_demand:
            result.skip("missing_terms", f"{where}: no OnDemand term")
        for code, term in on_demand.items():
            base.on_demand(result, code, term)
    if not pricing_scope.isdisjoint(RESERVED):
        for code, term in (terms.get("Reserved") or {}).items():
            base.reserved(result, code, term, pricing_scope)
    return result


class _Base:
    """What every offer of one Price List item shares; builds them term by term.

    Error labels (``where``) are only formatted when a term is skipped: this runs
    for every term of every product, and most terms are fine.
    """

    __slots__ = ("attrs", "hardware", "hw", "instance_type", "region", "usd_rate", "where")

    def __init__(
        self, instance_type: str, region: str, hw: InstanceHardware, usd_rate: UsdRate, where: str
    ) -> None:
        self.instance_type = instance_type
        self.region = region
        self.hw = hw
        self.usd_rate = usd_rate
        self.where = where
        # Immutable and shared by this item's offers: Offer keeps a MappingProxyType as is.
        self.attrs = MappingProxyType(hw.attributes())
        self.hardware = hw.offer_fields()

    def _priced(
        self, result: ParseResult, currency: str, amount: Decimal, kind: str, code: str
    ) -> Decimal | None:
        """USD figure of ``amount``, or None after recording why it cannot be priced."""
        if amount <= 0:
            result.skip("zero_price", f"{self.where} {kind} {code}: price {amount} {currency}")
            return None
        if currency == "USD":
            return amount
        rate = self.usd_rate(currency)
        if rate is None:
            detail = f"{self.where} {kind} {code}: priced in {currency}, no fx rate configured"
            result.skip("non_usd", detail)
            return None
        return (amount * rate).quantize(_QUANTUM)

    def _offer(
        self,
        pricing: PricingModel,
        amount: Decimal,
        currency: str,
        usd: Decimal,
        attrs: Mapping[str, AttributeValue],
        payment_option: str = "",
        offering_class: str = "",
    ) -> Offer:
        return Offer(
            provider=PROVIDER,
            instance_type=self.instance_type,
            region=self.region,
            pricing=pricing,
            price_per_hour=amount,
            currency=currency,
            price_per_hour_usd=usd,
            payment_option=payment_option,
            offering_class=offering_class,
            attributes=attrs,
            **self.hardware,
        )

    def on_demand(self, result: ParseResult, code: str, term: Mapping[str, Any]) -> None:
        try:
            currency, hourly, upfront = _dimensions(term, "")
        except InvalidOffer as exc:
            result.skip("malformed_term", f"{self.where} OnDemand {code}{exc}")
            return
        if upfront:
            detail = f"{self.where} OnDemand {code}: on-demand term with an upfront fee"
            result.skip("malformed_term", detail)
            return
        usd = self._priced(result, currency, hourly, "OnDemand", code)
        if usd is not None:
            result.offers.append(
                self._offer(PricingModel.ON_DEMAND, hourly, currency, usd, self.attrs)
            )

    def reserved(
        self,
        result: ParseResult,
        code: str,
        term: Mapping[str, Any],
        scope: frozenset[PricingModel],
    ) -> None:
        ta = term.get("termAttributes") or {}
        pricing = LEASES.get(ta.get("LeaseContractLength", ""))
        payment = PAYMENT_OPTIONS.get(ta.get("PurchaseOption", ""))
        offering = ta.get("OfferingClass", "")
        if pricing is None or payment is None or offering not in OFFERING_CLASSES:
            detail = f"{self.where} Reserved {code}: termAttributes {dict(ta)!r}"
            result.skip("unknown_reserved_term", detail)
            return
        if pricing not in scope:
            return
        try:
            currency, hourly, upfront = _dimensions(term, "")
        except InvalidOffer as exc:
            result.skip("malformed_term", f"{self.where} Reserved {code}{exc}")
            return
        hours = pricing.term_hours
        assert hours is not None
        amount = effective_hourly(hourly, upfront, hours)
        usd = self._priced(result, currency, amount, "Reserved", code)
        if usd is None:
            return
        attrs = dict(self.attrs)
        if currency == "USD":
            attrs["upfront_usd"] = upfront
            attrs["recurring_hourly_usd"] = hourly
        else:
            rate = self.usd_rate(currency) or _ZERO
            attrs["upfront_usd"] = (upfront * rate).quantize(_QUANTUM)
            attrs["recurring_hourly_usd"] = (hourly * rate).quantize(_QUANTUM)
        result.offers.append(
            self._offer(pricing, amount, currency, usd, MappingProxyType(attrs), payment, offering)
        )


# ----------------------------------------------------------------------- spot history


def _timestamp(value: Any, where: str) -> datetime:
    if isinstance(value, datetime):
        ts = value
    elif isinstance(value, str):
        try:
            ts = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidOffer(where, f"bad Timestamp {value!r}") from None
    else:
        raise InvalidOffer(where, f"bad Timestamp {value!r}")
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return ts.astimezone(UTC)


def parse_spot_history(
    items: Iterable[Mapping[str, Any]],
    hardware: Mapping[str, InstanceHardware],
    *,
    region: str,
    risk: Mapping[str, SpotRisk] | None = None,
) -> ParseResult:
    """``SpotPriceHistory`` items -> one spot offer per item, dated at its ``Timestamp``.

    Offers are returned oldest first, so a store that applies them in order keeps
    each price change at its own time. AWS also returns, per zone, the price in
    effect at ``StartTime`` (dated before it): it is kept, because it is what
    shows the store that the zone is still offered when nothing changed since the
    last run (the store counts it as already known). ``risk`` maps instance type
    to Spot Advisor figures for this region.
    """
    result = ParseResult()
    dated: list[tuple[datetime, Offer]] = []
    for item in items:
        instance_type = item.get("InstanceType", "")
        zone = item.get("AvailabilityZone", "")
        where = f"spot {instance_type or '?'} {zone or region}"
        hw = hardware.get(instance_type)
        if hw is None:
            result.skip(
                "unknown_gpu", f"{where}: no GPU/accelerator data from DescribeInstanceTypes"
            )
            continue
        description = item.get("ProductDescription", "")
        if not description.startswith("Linux/UNIX"):
            result.skip("filtered_attributes", f"{where}: ProductDescription {description!r}")
            continue
        try:
            ts = _timestamp(item.get("Timestamp"), f"{where}.Timestamp")
            price = to_decimal(item.get("SpotPrice"), f"{where}.SpotPrice")
        except InvalidOffer as exc:
            result.skip("malformed_spot_item", str(exc))
            continue
        if price <= 0:
            result.skip("zero_price", f"{where}: SpotPrice {price}")
            continue
        attrs = hw.attributes()
        advice = risk.get(instance_type) if risk else None
        if advice is not None:
            attrs.update(advice.attributes())
        try:
            offer = Offer(
                provider=PROVIDER,
                instance_type=instance_type,
                region=region,
                zone=zone,
                pricing=PricingModel.SPOT,
                price_per_hour=price,
                currency="USD",
                price_per_hour_usd=price,
                observed_at=ts,
                attributes=attrs,
                **hw.offer_fields(),
            )
        except InvalidOffer as exc:
            result.skip("malformed_spot_item", f"{where}: {exc}")
            continue
        dated.append((ts, offer))
    dated.sort(key=lambda pair: (pair[0], pair[1].zone, pair[1].instance_type))
    result.offers.extend(offer for _, offer in dated)
    return result
