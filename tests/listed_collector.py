"""Fill a store with hand-built offers through the real collection path.

``collect`` runs ``run_collector`` with a collector that yields exactly the given
offers (provider ``testcloud`` unless an offer names its own), so intervals,
delistings and runs are what a real collection writes. Shared by the alerts,
history and recommender tests, which each build their histories this way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import ClassVar, Self

from collectors.base import RunContext
from tracker.collect import run_collector
from tracker.models import Offer
from tracker.settings import Settings
from tracker.store.engine import Engine


class ListCollector:
    name: ClassVar[str] = "testcloud"
    description: ClassVar[str] = "offers given by the test"

    def __init__(self, offers: Iterable[Offer]) -> None:
        self.offers = list(offers)

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls([])

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        yield from self.offers


def collect(engine: Engine, offers: Iterable[Offer], at: datetime) -> None:
    """One complete, successful run at ``at`` that saw exactly ``offers``."""
    summary = run_collector(engine, ListCollector(offers), Settings(), now=at)
    assert summary.status == "succeeded", summary.error
