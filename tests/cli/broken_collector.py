"""A collector plugin that fails mid-run, loaded through ``GPU_TRACKER_PLUGINS``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar, Self

from collectors.base import CollectorError, RunContext
from tests.conftest import make_offer
from tracker.models import Offer
from tracker.settings import Settings


class BrokenCollector:
    name: ClassVar[str] = "broken"
    description: ClassVar[str] = "yields one offer, then the provider fails"

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls()

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        yield make_offer(provider="broken")
        raise CollectorError("broken: HTTP 503 from the price API after retries")
