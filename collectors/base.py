"""The contract between a collector and the collection runner.

A collector only fetches and parses; the runner owns run bookkeeping, storage
and delisting. Keeping ``parse_*`` functions pure (payload in, offers out) is
what lets tests hit them hard with recorded payloads.

For collector authors:

* **Declare what you sell.** ``pricing_models`` lists the pricing models the
  collector can produce; ``spot_fetched_separately`` says whether a run scoped to
  spot alone can fetch spot prices without downloading the rest. The service plans
  its jobs from these two (``tracker/service/jobs.py``): a collector that can fetch
  spot apart gets a frequent spot job and a slow standard job; one that cannot gets
  one job for everything at the standard cadence, so a provider whose price list
  comes in one piece is not downloaded whole every few minutes. Honour
  ``ctx.pricing_scope``: do not fetch what the run does not ask for.
* **Skipping an item** (one payload item that should have been an offer but cannot
  be priced) has one protocol. The pure function that turns one item into an offer
  raises :class:`SkipItem` with a short stable ``reason`` (``"zero_price"``) and a
  ``detail`` naming the item. The loop over items catches it and reports it through
  a :data:`SkipSink`, a ``(reason, detail)`` callable, which at run time is
  ``ctx.skip`` and in tests is the ``skip`` of a test's own :class:`RunContext`.
  :func:`parse_each` is that loop for the common case. Parsers never see the run
  context, so a test can call them with a payload and nothing else; they return
  ``None`` (not a skip) for items that are not this tracker's market by design
  (a Windows meter, an instance type without a GPU).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self, TypeVar, runtime_checkable

from tracker.models import PricingModel

if TYPE_CHECKING:
    from datetime import date

    from tracker.fx import EcbRate
    from tracker.models import Offer, OfferKey
    from tracker.service_prices import ServicePrice
    from tracker.settings import Settings

log = logging.getLogger(__name__)

__all__ = [
    "ALL_PRICING",
    "WITHOUT_SAVINGS_PLANS",
    "Collector",
    "CollectorError",
    "MissingCredentials",
    "NotConfigured",
    "RateCollector",
    "RunContext",
    "ServiceCollector",
    "SkipItem",
    "SkipSink",
    "collects_services",
    "parse_each",
    "term_attributes",
    "text_field",
]


class NotConfigured(Exception):
    """The collector has nothing to do with the current settings (e.g. no path given).

    The message says what to set; the runner skips the provider with that line.
    """


class MissingCredentials(NotConfigured):
    """Credentials the provider requires are absent; the run skips it with a warning."""


class CollectorError(Exception):
    """A provider failure the collector could not work around (the run is recorded failed)."""


class SkipItem(Exception):
    """One payload item that should have been an offer but cannot be priced.

    Raised by a pure parser for that one item; the loop over items reports it
    through a :data:`SkipSink` and goes on (see the module docstring).
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.reason}: {self.detail}" if self.detail else self.reason


SkipSink = Callable[[str, str], None]
"""Where a parser loop reports a skipped item: ``(reason, detail)``; ``ctx.skip`` is one."""

_Item = TypeVar("_Item")
_Parsed = TypeVar("_Parsed")


def parse_each(
    items: Iterable[_Item],
    parse: Callable[[_Item], _Parsed | None],
    skip: SkipSink,
    where: Callable[[_Item], str] | None = None,
) -> Iterator[_Parsed]:
    """``parse(item)`` for every item: a :class:`SkipItem` is reported to ``skip``
    (its detail prefixed with ``where(item)`` when given, naming the item) and the
    loop goes on; ``None`` (not this tracker's market) is left out silently."""
    for item in items:
        try:
            parsed = parse(item)
        except SkipItem as exc:
            label = where(item) if where is not None else ""
            skip(exc.reason, f"{label}: {exc.detail}" if label else exc.detail)
            continue
        if parsed is not None:
            yield parsed


def text_field(item: Mapping[str, Any], field: str, *, required: bool = True) -> str:
    """``item[field]`` stripped, when it is non-blank text; otherwise "" if not
    ``required``, else a ``malformed_item`` :class:`SkipItem` naming the field and value
    (the one check every JSON parser makes of an item's names and ids)."""
    value = item.get(field)
    if isinstance(value, str) and value.strip():
        return value.strip()
    if required:
        raise SkipItem("malformed_item", f"{field} missing or not text ({value!r})")
    return ""


ALL_PRICING: frozenset[PricingModel] = frozenset(PricingModel)
WITHOUT_SAVINGS_PLANS: frozenset[PricingModel] = ALL_PRICING - {
    PricingModel.SAVINGS_PLAN_1Y,
    PricingModel.SAVINGS_PLAN_3Y,
    PricingModel.CAPACITY_BLOCK,
}
"""On-demand, spot and reservations: what a hyperscaler sells but AWS's savings plans."""

MAX_SKIP_DETAILS = 50
"""Skip messages kept per run for the CLI to show; the counts cover every skip."""

LastObserved = Callable[["PricingModel", str], datetime | None]


def term_attributes(currency: str, upfront: Decimal, recurring: Decimal) -> dict[str, Decimal]:
    """A commitment's upfront fee and recurring hourly rate as offer attributes, the pair
    the recommender recomputes the effective rate from (``tracker.recommend.pricing``):
    ``upfront_usd`` / ``recurring_hourly_usd`` for a USD price, plain names for another
    currency (converted when read, like the price)."""
    suffix = "_usd" if currency == "USD" else ""
    return {f"upfront{suffix}": upfront, f"recurring_hourly{suffix}": recurring}


def _nothing_observed(pricing: PricingModel, region: str) -> None:
    return None


ListedKeys = Callable[[], "Sequence[OfferKey]"]


def _nothing_listed() -> list[OfferKey]:
    return []


@dataclass
class RunContext:
    """What one run offers a collector, and what the collector reports back.

    The one concrete context: the runner builds it with a ``last_observed`` reader
    bound to the store, tests build it with the default (nothing stored) or their
    own callable, so collectors are exercised through the same object in both.
    """

    settings: Settings
    pricing_scope: frozenset[PricingModel] = field(default_factory=lambda: ALL_PRICING)
    """The pricing models this run collects; offers outside it are dropped, and
    delisting only touches these models. Collectors should not fetch the rest."""
    source: str = ""
    """The collector's name, for log lines."""
    last_observed_reader: LastObserved = _nothing_observed
    listed_reader: ListedKeys = _nothing_listed
    skips: Counter[str] = field(default_factory=Counter)
    details: list[str] = field(default_factory=list)
    """The first :data:`MAX_SKIP_DETAILS` skip messages (``reason: detail``)."""
    partial: dict[str, str] = field(default_factory=dict)
    """Regions not fully collected this run, with the reason."""
    unchanged: bool = False
    """The source said nothing changed since the copy this store holds (another
    gpu-tracker's 304): the run yields nothing and delists or ends nothing."""

    def skip(self, reason: str, detail: str = "") -> None:
        """Count one item that could not be turned into an offer (logged with ``detail``).

        ``reason`` is a short stable label (``"malformed_item"``, ``"zero_price"``) so the
        summary can group them; ``detail`` says which item and why.
        """
        self.skips[reason] += 1
        if len(self.details) < MAX_SKIP_DETAILS:
            self.details.append(f"{reason}: {detail}" if detail else reason)
        log.info("%s: skipped (%s) %s", self.source, reason, detail)

    @property
    def skipped(self) -> int:
        return sum(self.skips.values())

    def mark_unchanged(self, reason: str) -> None:
        """Nothing changed at the source since the last run stored its copy: keep every
        offer (or tier) as it is instead of treating the empty run as complete."""
        self.unchanged = True
        log.info("%s: unchanged at the source: %s", self.source, reason)

    def mark_partial(self, region: str, reason: str) -> None:
        """This region was not fully collected: do not delist its offers this run."""
        self.partial[region] = reason
        log.warning("%s: region %s not fully collected: %s", self.source, region, reason)

    def fail_if_every_region_partial(self, provider: str, regions: Sequence[str]) -> None:
        """Raise :class:`CollectorError` when every one of ``regions`` was marked partial.

        A run that collected no region at all is a failure, not a partial success; the
        line names the first region's reason (the one collectors loop regions in order).
        """
        if regions and all(region in self.partial for region in regions):
            first = regions[0]
            raise CollectorError(
                f"{provider}: every region failed ({len(regions)}); "
                f"first: {first}: {self.partial[first]}"
            )

    def last_observed(self, pricing: PricingModel, region: str) -> datetime | None:
        """Latest stored observation of this provider's offers in ``region`` for
        ``pricing`` (for incremental collection), or None if nothing is stored."""
        return self.last_observed_reader(pricing, region)

    def listed_keys(self) -> Sequence[OfferKey]:
        """Identity keys (:meth:`Offer.key`) of the offers this source has listed now.

        For a provider that names only where it has capacity (Lambda): an offer it
        listed before and no longer names can stay, marked unavailable, not delisted.
        """
        return self.listed_reader()


@runtime_checkable
class Collector(Protocol):
    """A provider's price source.

    ``from_settings`` raises :class:`MissingCredentials`/:class:`NotConfigured` when
    it cannot run; ``collect`` yields validated offers and reports every item it
    could not price through ``ctx.skip``. Raising aborts the run: nothing of it is
    stored.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    pricing_models: ClassVar[frozenset[PricingModel]]
    """Every pricing model this collector can produce (the service plans jobs for these)."""
    spot_fetched_separately: ClassVar[bool]
    """True when a spot-only run fetches only what spot needs (a spot price history, a
    spot-filtered query); False when spot comes in the same download as every other
    price, so a separate frequent spot job would download everything each time."""

    @classmethod
    def from_settings(cls, settings: Settings) -> Self: ...

    def collect(self, ctx: RunContext) -> Iterable[Offer]: ...


@runtime_checkable
class RateCollector(Protocol):
    """A source of exchange rates instead of offers (the ECB collector, ``fx``).

    Registered in the same entry-point group, so it is listed, scheduled and run like
    any collector; the runner stores what :meth:`collect_rates` returns as rate series
    (``tracker/store/series/_fx.py``) instead of offers. ``since`` is the newest stored rate's
    day (None when the store has none), so a collector can back-fill a gap.
    """

    name: ClassVar[str]
    description: ClassVar[str]

    @classmethod
    def from_settings(cls, settings: Settings) -> Self: ...

    def collect_rates(self, ctx: RunContext, since: date | None) -> list[EcbRate]: ...


@runtime_checkable
class ServiceCollector(Protocol):
    """A collector that also prices what a fleet pays beside its instances: block
    storage and internet egress (:class:`~tracker.service_prices.ServicePrice`).

    Optional, next to :class:`Collector`: a collector class that has
    :meth:`collect_service_prices` gets a run of its own for them (scope ``services``,
    ``tracker.collect_services.run_service_collector``), after its instance prices in
    ``gpu-tracker collect`` and as a daily ``<name>:services`` job in ``serve``. The
    run is complete: a tier the provider no longer lists is ended, except in the
    regions the collector marked partial (``ctx.mark_partial``). Items that cannot be
    priced are skipped through ``ctx.skip`` (or :class:`SkipItem` in a pure parser),
    exactly as for offers; raising fails the run and stores nothing.
    """

    name: ClassVar[str]

    @classmethod
    def from_settings(cls, settings: Settings) -> Self: ...

    def collect_service_prices(self, ctx: RunContext) -> Iterable[ServicePrice]: ...


def collects_services(collector: object) -> bool:
    """Whether a collector (class or instance) implements :class:`ServiceCollector`:
    the check the scheduler makes of classes, where ``isinstance`` cannot be used."""
    return callable(getattr(collector, "collect_service_prices", None))
