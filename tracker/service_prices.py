"""The prices a GPU fleet pays beside its instances: block storage and data transfer.

A three-year plan of 16 H100s is mostly instance-hours, but the disks that hold the
checkpoints and the terabytes sent out to users are a line a finance person checks,
and they differ by provider and region as much as GPU prices do. They are kept as
data, one compact series per (provider, region, service, tier), with the same interval
rule as offers: a re-seen unchanged price moves ``last_seen``, a change opens a new one.

Units follow the providers' price lists: block and object storage in USD (or the
listed currency) per **GB-month**, egress per **GB** sent, in tiers of GB per month
(``tier_start_gb`` inclusive, ``tier_end_gb`` exclusive, ``None`` for no upper bound).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from tracker.models import InvalidOffer, to_decimal
from tracker.storable import number_problem, text_problem

__all__ = ["GB_PER_TB", "ServiceKind", "ServicePrice", "ServiceUnit", "tiered_cost"]

GB_PER_TB = Decimal(1024)
"""1 TB = 1,024 GB, as the providers' storage and transfer tiers count."""


class ServiceKind(StrEnum):
    BLOCK_STORAGE_SSD = "block_storage_ssd"
    BLOCK_STORAGE_HDD = "block_storage_hdd"
    OBJECT_STORAGE = "object_storage"
    EGRESS_INTERNET = "egress_internet"

    @property
    def unit(self) -> ServiceUnit:
        """Storage is billed per GB held for a month, transfer per GB sent."""
        return ServiceUnit.GB if self is ServiceKind.EGRESS_INTERNET else ServiceUnit.GB_MONTH


class ServiceUnit(StrEnum):
    GB_MONTH = "GB-month"
    GB = "GB"


_TEXT_CHARS = 64
"""The ``service_prices`` table's provider and region length."""


def _stored(value: object, name: str) -> Decimal:
    """A number the store holds as it is (:mod:`tracker.storable`): a nonzero price
    stored as 0 would make a paid tier free."""
    result = to_decimal(value, name)
    problem = number_problem(result)
    if problem is not None:
        raise InvalidOffer(name, problem)
    return result


@dataclass(frozen=True, slots=True)
class ServicePrice:
    """One tier of one service's price in one region, as the provider lists it."""

    provider: str
    region: str
    service: ServiceKind
    unit: ServiceUnit
    price: Decimal
    """Per ``unit`` in ``currency``."""
    currency: str
    tier_start_gb: Decimal = Decimal(0)
    tier_end_gb: Decimal | None = None

    def __post_init__(self) -> None:
        for name in ("provider", "region"):
            value = getattr(self, name)
            if not value.strip():
                raise InvalidOffer(name, "is required")
            problem = text_problem(value, _TEXT_CHARS)
            if problem is not None:
                raise InvalidOffer(name, problem)
        try:
            service = ServiceKind(self.service)
        except ValueError:
            known = ", ".join(s.value for s in ServiceKind)
            raise InvalidOffer("service", f"{self.service!r} is not one of {known}") from None
        try:
            unit = ServiceUnit(self.unit)
        except ValueError:
            known = ", ".join(u.value for u in ServiceUnit)
            raise InvalidOffer("unit", f"{self.unit!r} is not one of {known}") from None
        if unit is not service.unit:
            raise InvalidOffer("unit", f"{service.value} is priced per {service.unit.value}")
        object.__setattr__(self, "service", service)
        object.__setattr__(self, "unit", unit)
        price = _stored(self.price, "price")
        if price < 0:
            raise InvalidOffer("price", f"must not be negative, got {price}")
        object.__setattr__(self, "price", price)
        if len(self.currency) != 3 or not self.currency.isalpha():
            raise InvalidOffer("currency", f"expected an ISO code like USD, got {self.currency!r}")
        object.__setattr__(self, "currency", self.currency.upper())
        start = _stored(self.tier_start_gb, "tier_start_gb")
        if start < 0:
            raise InvalidOffer("tier_start_gb", f"must not be negative, got {start}")
        object.__setattr__(self, "tier_start_gb", start)
        if self.tier_end_gb is not None:
            end = _stored(self.tier_end_gb, "tier_end_gb")
            if end <= start:
                raise InvalidOffer("tier_end_gb", f"{end} is not above tier_start_gb {start}")
            object.__setattr__(self, "tier_end_gb", end)

    @property
    def key(self) -> tuple[str, str, str, Decimal]:
        """The series identity: another tier start is another series."""
        return (self.provider, self.region, self.service.value, self.tier_start_gb)


def tiered_cost(gb: Decimal, tiers: list[tuple[Decimal, Decimal | None, Decimal]]) -> Decimal:
    """What ``gb`` costs across ``(start, end, price per GB)`` tiers (a month's egress).

    Each GB is charged at the tier it falls in: 15 TB out of AWS at 0.09 for the first
    10 TB and 0.085 above is 10,240 × 0.09 + 5,120 × 0.085. A range no tier covers
    raises ValueError: it would otherwise be priced at zero.
    """
    total, covered = Decimal(0), Decimal(0)
    for start, end, price in sorted(tiers, key=lambda t: t[0]):
        if covered >= gb:
            break
        if start > covered:
            raise ValueError(f"no tier prices {covered}-{start} GB")
        upper = gb if end is None else min(gb, end)
        if upper > covered:
            total += (upper - covered) * price
            covered = upper
    if covered < gb:
        raise ValueError(f"no tier prices the GB above {covered}")
    return total
