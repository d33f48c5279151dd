"""A service runs collections for months in one process: memory must not grow per run.

Each run's write path holds the source's listed hashes (a 20,000-entry set), its staged
rows and its connection. If anything of a run outlives it through a reference cycle, it
stays until a full garbage collection, which a busy process makes rarely (issue 30
measured RSS growing 6-25 MiB per run of 20,000 offers). The test runs 30 collections
of 20,000 offers in this process, 5 % of the prices moving each time, with the cyclic
collector switched off: only what reference counting frees is freed, so whatever a run
leaves in a cycle counts as growth, every time (not only when a full collection
happens not to run before the measurement).
"""

from __future__ import annotations

import gc
import random
import tracemalloc
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import ClassVar, Self

import pytest
from sqlalchemy import Engine

from collectors.base import RunContext
from tests.conftest import make_offer
from tracker.collect import run_collector
from tracker.models import Offer, PricingModel
from tracker.settings import Settings

pytestmark = pytest.mark.postgres

OFFERS = 20_000
RUNS = 30
MEASURED_FROM = 10
MOVING = OFFERS // 20  # 5 % of the prices move every run
MAX_GROWTH_MIB = 3.0
"""The growth allowed between run 10 and run 30. A cycle holding one run's hash set
alone (20,000 ints in a set: ~1.2 MiB) would put 20 of them, ~24 MiB, over it."""


class Sheet:
    """A generated sheet whose prices move. Every offer exists twice, built before the
    measurement (at its price and a cent dearer); a run lists, per offer, the version its
    flag names, and moving a price flips the flag, so the test's own data allocates
    nothing while memory is traced."""

    name: ClassVar[str] = "memsheet"
    description: ClassVar[str] = "a generated sheet"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})
    spot_fetched_separately: ClassVar[bool] = False

    def __init__(self, n: int) -> None:
        regions = [f"region-{r}" for r in range(20)]
        self.cheap = [
            make_offer(
                provider="memsheet",
                instance_type=f"gpu.{i // 20}",
                region=regions[i % 20],
                price_per_hour=Decimal(100 + i % 997) / 100,
            )
            for i in range(n)
        ]
        self.dear = [
            replace(o, price_per_hour=p, price_per_hour_usd=p)
            for o in self.cheap
            if (p := o.price_per_hour + Decimal("0.01"))
        ]
        self.flags = bytearray(n)

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        raise NotImplementedError

    def move_prices(self, rng: random.Random, count: int) -> None:
        for i in rng.sample(range(len(self.flags)), count):
            self.flags[i] ^= 1

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        cheap, dear = self.cheap, self.dear
        return (dear[i] if flag else cheap[i] for i, flag in enumerate(self.flags))


def test_thirty_runs_of_20000_offers_leave_memory_flat(pg_engine: Engine) -> None:
    sheet = Sheet(OFFERS)
    rng = random.Random(30)
    settings = Settings()
    start = datetime(2026, 3, 1, tzinfo=UTC)
    traced: dict[int, int] = {}
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for run in range(1, RUNS + 1):
            if run > 1:
                sheet.move_prices(rng, MOVING)
            summary = run_collector(
                pg_engine, sheet, settings, now=start + run * timedelta(minutes=10)
            )
            assert summary.status == "succeeded", summary.error
            # Every run after the first meets every series again; 5 % moved.
            assert summary.stats.offers_seen == OFFERS
            assert summary.stats.price_changes == (0 if run == 1 else MOVING)
            if run == MEASURED_FROM:
                # Traced from here on: what is still allocated at run 30 was allocated
                # since run 10 (runs 1-10 untraced, so they run at full speed).
                tracemalloc.start()
            if run >= MEASURED_FROM:
                traced[run] = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
        if was_enabled:
            gc.enable()
    growth_mib = (traced[RUNS] - traced[MEASURED_FROM]) / 2**20
    assert growth_mib < MAX_GROWTH_MIB, {r: round(b / 2**20, 2) for r, b in traced.items()}
