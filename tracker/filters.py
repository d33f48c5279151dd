"""Which offers a question is about (:class:`OfferFilter`), and one page of an answer
(:class:`Page`).

Every face parses its own input (CLI options, query parameters, a notebook's keywords)
into one :class:`OfferFilter` and passes it down unchanged: the read layer and the store
take the filter, not the same six keywords spelled out again at every layer, so a new
filter is added in one place and reaches every face.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Generic, TypeVar

from tracker.catalog import GpuSelection, select_gpus
from tracker.models import PricingModel

__all__ = ["ANY_OFFER", "OfferFilter", "Page"]

T = TypeVar("T")


def _names(values: Iterable[str] | str | None) -> tuple[str, ...]:
    if values is None:
        return ()
    return (values,) if isinstance(values, str) else tuple(values)


def _amount(value: float | Decimal | str | None) -> Decimal | None:
    # Through str: a float such as 0.1 filters as the 0.1 a person typed.
    return None if value is None else Decimal(str(value))


@dataclass(frozen=True, slots=True)
class OfferFilter:
    """Current offers narrowed by what a person asks for; every empty field is no filter."""

    gpu: tuple[str, ...] = ()
    """GPU families or models as typed (``H100`` is every variant, ``h100-sxm`` one)."""
    provider: tuple[str, ...] = ()
    region: tuple[str, ...] = ()
    pricing: tuple[PricingModel, ...] = ()
    min_vram: Decimal | None = None
    """Usable VRAM per GPU in GiB (a fractional GPU has its share of the card)."""
    min_gpus: Decimal | None = None
    """At least this many GPUs per instance."""
    available: bool = False
    """Only offers whose current availability is known to be rentable."""

    @classmethod
    def of(
        cls,
        *,
        gpu: Iterable[str] | str | None = None,
        provider: Iterable[str] | str | None = None,
        region: Iterable[str] | str | None = None,
        pricing: Iterable[PricingModel | str] | PricingModel | str | None = None,
        min_vram: float | Decimal | str | None = None,
        min_gpus: float | Decimal | str | None = None,
        available: bool = False,
    ) -> OfferFilter:
        """The filter from a face's loose values (None, one value or many)."""
        models: Iterable[PricingModel | str]
        if pricing is None:
            models = ()
        elif isinstance(pricing, PricingModel | str):
            models = (pricing,)
        else:
            models = pricing
        return cls(
            gpu=_names(gpu),
            provider=_names(provider),
            region=_names(region),
            pricing=tuple(PricingModel(p) for p in models),
            min_vram=_amount(min_vram),
            min_gpus=_amount(min_gpus),
            available=available,
        )

    def gpus(self) -> GpuSelection | None:
        """What the GPU names select in the catalog (None: every GPU)."""
        return select_gpus(list(self.gpu)) if self.gpu else None

    @property
    def hardware(self) -> bool:
        """Whether a hardware minimum narrows the offers."""
        return self.min_vram is not None or self.min_gpus is not None


ANY_OFFER = OfferFilter()
"""No filter: every current offer."""


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a listing ordered and cut by the store."""

    total: int
    """Matching items with a USD figure at the read's time (what a pager counts)."""
    items: list[T]
    """This page's items, in the listing's order."""
    missing: dict[str, int] = field(default_factory=dict)
    """Matching items left out for want of an exchange rate, by currency."""
