"""The contract between a collector and the collection runner.

A collector only fetches and parses; the runner owns run bookkeeping, storage
and delisting. Keeping ``parse_*`` functions pure (payload in, offers out) is
what lets tests hit them hard with recorded payloads.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar, Protocol, Self, runtime_checkable

from tracker.models import PricingModel

if TYPE_CHECKING:
    from tracker.models import Offer
    from tracker.settings import Settings

__all__ = ["Collector", "CollectorError", "MissingCredentials", "NotConfigured", "RunContext"]


class NotConfigured(Exception):
    """The collector has nothing to do with the current settings (e.g. no path given).

    The message says what to set; the runner skips the provider with that line.
    """


class MissingCredentials(NotConfigured):
    """Credentials the provider requires are absent; the run skips it with a warning."""


class CollectorError(Exception):
    """A provider failure the collector could not work around (the run is recorded failed)."""


class RunContext(Protocol):
    """What the runner offers a collector during one run."""

    @property
    def settings(self) -> Settings: ...

    @property
    def pricing_scope(self) -> frozenset[PricingModel]:
        """The pricing models this run collects; offers outside it are dropped, and
        delisting only touches these models. Collectors should not fetch the rest."""
        ...

    def skip(self, reason: str, detail: str = "") -> None:
        """Count one item that could not be turned into an offer (logged with ``detail``).

        ``reason`` is a short stable label (``"non_usd"``, ``"zero_price"``) so the
        summary can group them; ``detail`` says which item and why.
        """
        ...

    def mark_partial(self, region: str, reason: str) -> None:
        """This region was not fully collected: do not delist its offers this run."""
        ...

    def last_observed(self, pricing: PricingModel, region: str) -> datetime | None:
        """Latest stored observation of this provider's offers in ``region`` for
        ``pricing`` (for incremental collection), or None if nothing is stored."""
        ...


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

    @classmethod
    def from_settings(cls, settings: Settings) -> Self: ...

    def collect(self, ctx: RunContext) -> Iterable[Offer]: ...


ALL_PRICING: frozenset[PricingModel] = frozenset(PricingModel)
