"""What one run asks of the write path (:class:`DelistScope`) and what it did
(:class:`IngestStats`); kept apart from :mod:`tracker.store.ingest`, which re-exports them."""

from __future__ import annotations

from dataclasses import dataclass

from tracker.models import PricingModel

__all__ = ["DelistScope", "IdentityCollision", "IngestStats"]


@dataclass(frozen=True)
class DelistScope:
    """Which listed series a complete run may delist when they were not seen."""

    source: str
    pricing: frozenset[PricingModel]
    exclude_regions: frozenset[str] = frozenset()


class IdentityCollision(Exception):
    """Two offer identities share a 64-bit identity hash: the run fails, nothing merges."""


@dataclass
class IngestStats:
    offers_seen: int = 0
    new_series: int = 0
    price_changes: int = 0
    unchanged: int = 0
    stale: int = 0
    delisted: int = 0
    relisted: int = 0
    refused_delist: int = 0
    rounds: int = 0
    availability_changes: int = 0
    """Availability intervals opened (tracker/store/series/_availability.py); not a run count."""

    def run_counts(self) -> dict[str, int]:
        """The counters a run records in ``collection_runs`` (and the service logs).

        ``unchanged`` there covers both prices re-seen unchanged and observations
        the store already held (an incremental fetch's boundary point).
        """
        return {
            "offers_seen": self.offers_seen,
            "new_series": self.new_series,
            "price_changes": self.price_changes,
            "unchanged": self.unchanged + self.stale,
            "delisted": self.delisted,
            "relisted": self.relisted,
        }
