"""The normalized offer record every collector produces.

Kept free of ORM imports so collectors and the recommender can use it without a
database, and validated at construction so a bad record is rejected where it is
made, with the offending field named, instead of deep inside a bulk insert.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from operator import attrgetter
from types import MappingProxyType
from typing import Any, TypeVar

from tracker import storable

__all__ = [
    "OFFER_COLUMNS",
    "OFFER_KEY_FIELDS",
    "STORED_OFFER_COLUMNS",
    "AttributeValue",
    "Availability",
    "ColumnGroup",
    "ColumnKind",
    "Interconnect",
    "InvalidOffer",
    "Offer",
    "OfferColumn",
    "OfferKey",
    "PricingModel",
    "RunStatus",
    "offer_dict",
    "offer_from_values",
    "offer_values",
    "to_decimal",
]


class PricingModel(StrEnum):
    ON_DEMAND = "on_demand"
    SPOT = "spot"
    RESERVED_1Y = "reserved_1y"
    RESERVED_3Y = "reserved_3y"
    SAVINGS_PLAN_1Y = "savings_plan_1y"
    """An AWS Savings Plan rate (EC2 Instance or Compute plan, ``offering_class``) for one
    instance type: a 1-year commitment like a reservation, priced per hour of use."""
    SAVINGS_PLAN_3Y = "savings_plan_3y"
    CAPACITY_BLOCK = "capacity_block"
    """An AWS EC2 Capacity Block for ML: N instances reserved for a fixed window (1-182
    days) from a start date, for one upfront fee. The price is the fee per instance-hour
    (fee / (instances × hours)); the block's own shape is in its attributes
    (:func:`tracker.capacity_blocks.capacity_block_terms`). Not a term: it has no
    ``term_hours``, and it fits only a job of its size and length."""

    @property
    def term_hours(self) -> int | None:
        """Hours in a commitment's term (365-day years, as AWS, Azure and GCP bill): a
        reservation or a savings plan is paid for every hour of it, used or not."""
        return _TERM_HOURS.get(self)


_TERM_HOURS = {
    PricingModel.RESERVED_1Y: 8760,
    PricingModel.RESERVED_3Y: 26280,
    PricingModel.SAVINGS_PLAN_1Y: 8760,
    PricingModel.SAVINGS_PLAN_3Y: 26280,
}


class RunStatus(StrEnum):
    """The state of one collection run, as stored in ``collection_runs.status``."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"
    """Not run: not configured, no credentials, or another process held its lock."""
    ABANDONED = "abandoned"
    """Left ``running`` by a process that died; the next run of that provider says so."""


class Interconnect(StrEnum):
    """How an offer's GPUs talk to each other.

    ``nvlink`` is NVIDIA's NVLink/NVSwitch; ``gpu_fabric`` is another vendor's direct
    GPU-to-GPU fabric of the same class (AMD Infinity Fabric, Intel Gaudi's RoCE mesh),
    kept apart so an AMD box is never labelled NVLink; both let training state shard.
    ``unknown`` means the offer did not say (the recommender may then ask the catalog).
    """

    NVLINK = "nvlink"
    GPU_FABRIC = "gpu_fabric"
    PCIE = "pcie"
    UNKNOWN = "unknown"


class Fabric(StrEnum):
    """How an offer's instances talk to each other: the inter-node network a multi-node
    job's collectives cross (``interconnect`` is the link inside one box).

    ``infiniband`` (Azure ND, OCI cluster networks, most GPU clouds' clusters), ``efa``
    (AWS Elastic Fabric Adapter), ``roce`` (RDMA over converged Ethernet: GCP's GPUDirect
    RDMA on A3 Ultra/A4, OCI RoCE shapes), ``gpudirect_tcpx`` (GCP A3/A3 Mega's
    GPUDirect-TCPX/TCPXO), ``ici`` (TPU inter-chip interconnect inside a slice),
    ``ethernet`` (a plain VPC network: no RDMA), ``unknown`` when the provider does not
    say. Unknown is never treated as fast.
    """

    INFINIBAND = "infiniband"
    EFA = "efa"
    ROCE = "roce"
    GPUDIRECT_TCPX = "gpudirect_tcpx"
    ICI = "ici"
    ETHERNET = "ethernet"
    UNKNOWN = "unknown"


RDMA_FABRICS = frozenset(
    {Fabric.INFINIBAND, Fabric.EFA, Fabric.ROCE, Fabric.GPUDIRECT_TCPX, Fabric.ICI}
)
"""The fabrics built for collectives between nodes (GPU-direct or RDMA transport)."""


class Availability(StrEnum):
    """Whether the provider said it has capacity for an offer when it was seen.

    ``low`` is the provider's own "few left" (RunPod's ``Low`` stock status): still
    rentable. ``unknown`` is what every provider that does not say reports; the store
    keeps no interval for it, so a gap in an offer's availability series is unknown.
    """

    AVAILABLE = "available"
    LOW = "low"
    UNAVAILABLE = "unavailable"
    UNKNOWN = "unknown"

    @property
    def rentable(self) -> bool:
        """Known to be rentable now (``offers --available`` keeps these)."""
        return self is Availability.AVAILABLE or self is Availability.LOW


class InvalidOffer(ValueError):
    """A record that cannot be stored; ``field`` names what was wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


AttributeValue = str | int | bool | Decimal | None


class ColumnGroup(StrEnum):
    """Where a column lives in the store, and what a change in it means."""

    IDENTITY = "identity"
    """Part of the offer's key: another value is another offer (another series)."""
    HARDWARE = "hardware"
    """What the series records about the machine, updated as the provider reports it."""
    PRICE = "price"
    """The value of one price interval: a change closes the interval and opens the next."""
    DERIVED = "derived"
    """Computed when read, never stored: the USD figure of a price comes from the exchange
    rate in force (tracker.fx), so a rate change never opens a price interval."""
    AVAILABILITY = "availability"
    """The value of one availability interval, a series of its own beside the prices so
    a stock flicker never splits a price interval (tracker/store/series/_availability.py)."""


class ColumnKind(StrEnum):
    """How a column's value is held, so each reader and writer converts it the same way."""

    TEXT = "text"
    CHOICE = "choice"
    """A :class:`StrEnum` member, stored and shown as its value."""
    FLAG = "flag"
    NUMBER = "number"
    """A :class:`Decimal` (money, counts, sizes): exact in storage and in JSON."""
    MAPPING = "mapping"
    """Provider extras, stored as JSON."""


@dataclass(frozen=True, slots=True)
class OfferColumn:
    name: str
    """The :class:`Offer` field, which is also the key in the CLI's JSON rows."""
    group: ColumnGroup
    kind: ColumnKind
    stored_as: str = ""
    """The store's column name when it differs (price points say ``price``, not
    ``price_per_hour``: the interval is the hour's price by definition)."""
    optional: bool = False

    @property
    def column(self) -> str:
        return self.stored_as or self.name


_I, _H, _P, _D = ColumnGroup.IDENTITY, ColumnGroup.HARDWARE, ColumnGroup.PRICE, ColumnGroup.DERIVED
_A = ColumnGroup.AVAILABILITY
_T, _C, _F, _N, _M = (
    ColumnKind.TEXT,
    ColumnKind.CHOICE,
    ColumnKind.FLAG,
    ColumnKind.NUMBER,
    ColumnKind.MAPPING,
)
OFFER_COLUMNS: tuple[OfferColumn, ...] = (
    OfferColumn("provider", _I, _T),
    OfferColumn("instance_type", _I, _T),
    OfferColumn("region", _I, _T),
    OfferColumn("zone", _I, _T),
    OfferColumn("pricing", _I, _C),
    OfferColumn("payment_option", _I, _T),
    OfferColumn("offering_class", _I, _T),
    OfferColumn("os", _I, _T),
    OfferColumn("gpu_model", _H, _T),
    OfferColumn("gpu_known", _H, _F),
    OfferColumn("gpu_raw_name", _H, _T),
    OfferColumn("gpu_count", _H, _N),
    OfferColumn("gpu_memory_gib", _H, _N, optional=True),
    OfferColumn("vcpus", _H, _N, optional=True),
    OfferColumn("memory_gib", _H, _N, optional=True),
    OfferColumn("interconnect", _H, _C),
    OfferColumn("fabric", _H, _C),
    OfferColumn("network_gbps", _H, _N, optional=True),
    OfferColumn("availability", _A, _C),
    OfferColumn("price_per_hour", _P, _N, stored_as="price"),
    OfferColumn("currency", _P, _T),
    OfferColumn("price_per_hour_usd", _D, _N, optional=True),
    OfferColumn("attributes", _H, _M, optional=True),
)
"""The one list of an offer's stored columns, in the order every tuple of them uses
(ingest rows, the recommender's offer rows) and the CLI's JSON rows list them."""

STORED_OFFER_COLUMNS = tuple(c for c in OFFER_COLUMNS if c.group is not ColumnGroup.DERIVED)
"""The columns the store holds: every offer column but the ones computed when read."""

OFFER_KEY_FIELDS = tuple(c.name for c in OFFER_COLUMNS if c.group is ColumnGroup.IDENTITY)
"""The fields of an offer's identity, in :meth:`Offer.key` order."""
OfferKey = tuple[str, str, str, str, str, str, str, str]

_CURRENCY = re.compile(r"^[A-Z]{3}$")
_LO, _HI = storable.SMALLEST_STORED, storable.TOO_BIG  # what NUMERIC(20, 10) holds as it is
_EMPTY: Mapping[str, AttributeValue] = MappingProxyType({})


def to_decimal(value: Any, field_name: str) -> Decimal:
    """Parse money or a count without ever passing through a binary float."""
    if isinstance(value, Decimal):
        result = value
    elif isinstance(value, bool):
        raise InvalidOffer(field_name, f"expected a number, got {value!r}")
    elif isinstance(value, int):
        result = Decimal(value)
    elif isinstance(value, float):
        # Floats come from JSON parsers; repr() is the shortest string that
        # round-trips, which is what the provider actually wrote.
        result = Decimal(repr(value))
    elif isinstance(value, str):
        try:
            result = Decimal(value.strip())
        except InvalidOperation:
            raise InvalidOffer(field_name, f"not a number: {value!r}") from None
    else:
        raise InvalidOffer(field_name, f"expected a number, got {type(value).__name__}")
    if not result.is_finite():
        raise InvalidOffer(field_name, f"must be finite, got {value!r}")
    return result


def _positive(value: Any, name: str) -> Decimal:
    result = to_decimal(value, name)
    if result <= 0:
        raise InvalidOffer(name, f"must be > 0, got {result}")
    if (problem := storable.number_problem(result)) is not None:
        raise InvalidOffer(name, problem)
    return result


_E = TypeVar("_E", bound=StrEnum)


def _choice(value: Any, choices: type[_E], name: str) -> _E:
    """``value`` as one of ``choices``, else the field-naming error (the slow path)."""
    try:
        return choices(value)
    except ValueError:
        allowed = ", ".join(c.value for c in choices)
        raise InvalidOffer(name, f"{value!r} is not one of {allowed}") from None


_CHOICE_FIELDS: tuple[tuple[str, type[StrEnum]], ...] = (
    ("pricing", PricingModel),
    ("interconnect", Interconnect),
    ("fabric", Fabric),
    ("availability", Availability),
)


def _required_text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidOffer(name, "must not be empty")
    return value.strip()


@dataclass(frozen=True, slots=True)
class Offer:
    """One purchasable hourly price of one machine shape.

    Identity is :meth:`key`; hardware and price are what is tracked over time.
    ``gpu_model`` is the canonical catalog name when ``gpu_known`` is true and
    the provider's raw spelling otherwise (flagged, never guessed).
    ``observed_at`` is set when the provider dates the price itself (AWS spot
    history, a back-filled price sheet); otherwise the run's time is used.
    """

    provider: str
    instance_type: str
    region: str
    pricing: PricingModel
    price_per_hour: Decimal
    currency: str
    gpu_model: str
    gpu_count: Decimal
    price_per_hour_usd: Decimal | None = None
    """The USD figure, computed when read from the exchange rate in force
    (:mod:`tracker.fx`); never stored. Filled in for USD prices (equal to the price);
    None for another currency until a reader converts it. Collectors leave it out."""
    gpu_memory_gib: Decimal | None = None
    vcpus: Decimal | None = None
    memory_gib: Decimal | None = None
    interconnect: Interconnect = Interconnect.UNKNOWN
    fabric: Fabric = Fabric.UNKNOWN
    """The inter-node network as the provider states it (never guessed fast)."""
    network_gbps: Decimal | None = None
    """One instance's inter-node bandwidth in Gbit/s, as the provider states it (the
    fabric's aggregate where it has one: 3,200 for a p5's 32 EFA cards)."""
    zone: str = ""
    payment_option: str = ""
    offering_class: str = ""
    os: str = "linux"
    gpu_raw_name: str = ""
    gpu_known: bool = True
    observed_at: datetime | None = None
    availability: Availability = Availability.UNKNOWN
    """Capacity as the provider reported it at ``observed_at`` (``unknown``: not said)."""
    attributes: Mapping[str, AttributeValue] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        # Collectors build hundreds of thousands of these per run, so every check
        # has a cheap fast path for values that are already right and falls back
        # to the full conversion (with its field-naming error) otherwise.
        s = object.__setattr__
        for name in ("provider", "instance_type", "region", "gpu_model"):
            value = getattr(self, name)
            if type(value) is not str or not value or value != value.strip():
                s(self, name, _required_text(value, name))
        for name, choices in _CHOICE_FIELDS:
            value = getattr(self, name)
            if type(value) is not choices:
                s(self, name, _choice(value, choices, name))
        for name in ("price_per_hour", "gpu_count"):
            value = getattr(self, name)
            if type(value) is not Decimal or not value.is_finite() or not _LO <= value < _HI:
                s(self, name, _positive(value, name))
        currency = self.currency
        if not (
            type(currency) is str
            and len(currency) == 3
            and currency.isascii()
            and currency.isalpha()
            and currency.isupper()
        ):
            currency = currency.strip().upper() if isinstance(currency, str) else ""
            if not _CURRENCY.match(currency):
                raise InvalidOffer("currency", f"must be an ISO 4217 code, got {self.currency!r}")
            s(self, "currency", currency)
        usd = self.price_per_hour_usd
        if currency == "USD":
            if usd is None:
                s(self, "price_per_hour_usd", self.price_per_hour)
            elif usd != self.price_per_hour:
                raise InvalidOffer("price_per_hour_usd", "must equal price_per_hour for USD prices")
        elif usd is not None and (type(usd) is not Decimal or not usd.is_finite() or usd <= 0):
            s(self, "price_per_hour_usd", _positive(usd, "price_per_hour_usd"))
        for name in ("gpu_memory_gib", "vcpus", "memory_gib", "network_gbps"):
            value = getattr(self, name)
            if value is not None and (
                type(value) is not Decimal or not value.is_finite() or not _LO <= value < _HI
            ):
                s(self, name, _positive(value, name))
        for name in ("zone", "payment_option", "offering_class"):
            value = getattr(self, name)
            if value is None:
                s(self, name, "")
            elif type(value) is not str:
                raise InvalidOffer(name, f"expected text, got {type(value).__name__}")
            elif value != value.strip():
                s(self, name, value.strip())
        if self.os != "linux":
            s(self, "os", _required_text(self.os, "os").lower())
        if not self.gpu_raw_name:
            s(self, "gpu_raw_name", self.gpu_model)
        if (problem := storable.offer_text_problem(self)) is not None:  # lengths, NUL
            raise InvalidOffer(*problem)
        if self.observed_at is not None:
            if self.observed_at.tzinfo is None:
                raise InvalidOffer("observed_at", "must be timezone-aware")
            s(self, "observed_at", self.observed_at.astimezone(UTC))
        if type(self.attributes) is not MappingProxyType:
            s(
                self,
                "attributes",
                MappingProxyType(dict(self.attributes)) if self.attributes else _EMPTY,
            )

    def key(self) -> OfferKey:
        return (
            self.provider,
            self.instance_type,
            self.region,
            self.zone,
            self.pricing.value,
            self.payment_option,
            self.offering_class,
            self.os,
        )

    @property
    def usd(self) -> Decimal:
        """:attr:`price_per_hour_usd`, for code that only sees converted offers (the
        recommender, USD views); raises ValueError naming the offer when there is none."""
        if self.price_per_hour_usd is None:
            raise ValueError(
                f"{self.provider} {self.instance_type} {self.region}: a {self.currency} price "
                "has no USD figure until converted at the rate in force (tracker.fx)"
            )
        return self.price_per_hour_usd

    @property
    def price_per_gpu_hour_usd(self) -> Decimal:
        return self.usd / self.gpu_count


_NAMES = tuple(c.name for c in OFFER_COLUMNS)
_VALUES = attrgetter(*_NAMES)
_CHOICE_POSITIONS = tuple(i for i, c in enumerate(OFFER_COLUMNS) if c.kind is ColumnKind.CHOICE)
_ATTRIBUTES_POSITION = next(i for i, c in enumerate(OFFER_COLUMNS) if c.kind is ColumnKind.MAPPING)


def offer_values(offer: Offer) -> list[Any]:
    """The offer's :data:`OFFER_COLUMNS` values, in order, as plain data (enums as their
    values, attributes as a dict), ready for a row, a tuple or a JSON object."""
    values = list(_VALUES(offer))
    for i in _CHOICE_POSITIONS:
        values[i] = values[i].value
    values[_ATTRIBUTES_POSITION] = dict(values[_ATTRIBUTES_POSITION])
    return values


def offer_dict(offer: Offer) -> dict[str, Any]:
    """:func:`offer_values` by column name, in :data:`OFFER_COLUMNS` order."""
    return dict(zip(_NAMES, offer_values(offer), strict=True))


def offer_from_values(values: Mapping[str, Any]) -> Offer:
    """The validated record for :data:`OFFER_COLUMNS` values keyed by name, as any store
    driver returns them: numbers as Decimal or decimal text, attributes as a dict or
    JSON text (or None), flags as bool or 0/1, choices as text (the record validates them)."""
    fields: dict[str, Any] = {}
    for c in OFFER_COLUMNS:
        value = values[c.name]
        if c.kind is ColumnKind.NUMBER:
            value = None if value is None else to_decimal(value, c.name)
        elif c.kind is ColumnKind.FLAG:
            value = bool(value)
        elif c.kind is ColumnKind.MAPPING:
            value = _mapping(value, c.name)
        fields[c.name] = value
    return Offer(**fields)


def _mapping(value: Any, name: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, Mapping):
        raise InvalidOffer(name, f"expected a JSON object, got {type(value).__name__}")
    return value
