"""Write-path throughput against raw COPY, on the same Postgres, in the same run.

Generates N synthetic offers, then measures
  (a) raw psycopg COPY of the same rows into a bare table with the same columns,
  (b) the project's full write path (run bookkeeping, change detection, intervals)
      for a first collection, and for a re-collection where 10% of prices changed.
The figures are ratios to (a), so they compare across machines. Each timed run of (b)
is paired with an (a) of its own rows timed just before it, and each ratio is the
median of --repeat pairs (a first collection into a new database each; then, in the
last one, re-collections each changing another 10%). Before each timed run the
database is settled (no autovacuum running or able to start, VACUUM ANALYZE except
before a first collection, CHECKPOINT) and Python's garbage collected; the offers are
made before the clock starts (--stream: during the run, a generation timed just before
taken out). Runs in throwaway databases created next to the one
GPU_TRACKER_DATABASE_URL names. docs/performance.md says why each of these matters.

    GPU_TRACKER_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \
        python bench/ingest.py [--offers 200000] [--repeat 3] [--stream]
"""

from __future__ import annotations

import argparse
import gc
import random
import resource
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from itertools import islice
from statistics import median
from typing import Any, ClassVar, Self

from scratch_db import (
    autovacuum_off,
    quiesce,
    scratch_database,
)  # bench/ is the script's own directory

from collectors.base import RunContext
from tracker.collect import run_collector
from tracker.models import Interconnect, Offer, PricingModel
from tracker.settings import Settings
from tracker.store import migrate, rollup
from tracker.store.engine import make_engine
from tracker.store.ingest import INCOMING_COLUMNS, offer_hash, store_row

GPUS = [
    ("A100-40GB", 40),
    ("A100-80GB", 80),
    ("H100-SXM", 80),
    ("A10G", 24),
    ("L4", 24),
    ("T4", 16),
]
REGIONS = [f"region-{n}" for n in range(30)]


def synthetic_offers(n: int, seed: int = 7) -> Iterator[Offer]:
    """The same ``n`` offers on every call, generated one at a time (a 1,000,000-offer
    run never holds its offers in memory, here or in the store's write path)."""
    rng = random.Random(seed)
    for i in range(n):
        gpu, vram = GPUS[i % len(GPUS)]
        pricing = (PricingModel.ON_DEMAND, PricingModel.SPOT, PricingModel.RESERVED_1Y)[i % 3]
        price = Decimal(rng.randrange(10_000, 9_000_000)) / Decimal(100_000)
        yield (
            Offer(
                provider=f"cloud{i % 7}",
                instance_type=f"gpu.{i // 3 % 4000}.x{1 + i % 8}",
                region=REGIONS[i // 12000 % len(REGIONS)],
                zone=f"z{i % 3}" if pricing is PricingModel.SPOT else "",
                pricing=pricing,
                payment_option="no_upfront" if pricing is PricingModel.RESERVED_1Y else "",
                price_per_hour=price,
                currency="USD",
                price_per_hour_usd=price,
                gpu_model=gpu,
                gpu_count=Decimal(1 + i % 8),
                gpu_memory_gib=Decimal(vram),
                vcpus=Decimal(8 * (1 + i % 8)),
                memory_gib=Decimal(64 * (1 + i % 8)),
                interconnect=Interconnect.NVLINK if i % 2 else Interconnect.PCIE,
            )
        )


def with_changes(offers: Iterator[Offer], changes: list[set[int]]) -> Iterator[Offer]:
    """``offers`` with the price of each 5% higher per set of ``changes`` holding its
    position: the offers of the last set are the ones whose price moved since the
    offers with one set fewer."""
    for i, o in enumerate(offers):
        times = sum(i in changed for changed in changes)
        if times:
            new = o.price_per_hour * Decimal("1.05") ** times
            o = replace(o, price_per_hour=new, price_per_hour_usd=new)
        yield o


class ListCollector:
    name: ClassVar[str] = "bench"
    description: ClassVar[str] = "synthetic offers"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(
        (PricingModel.ON_DEMAND, PricingModel.SPOT, PricingModel.RESERVED_1Y)
    )
    spot_fetched_separately: ClassVar[bool] = False

    def __init__(self, offers: Iterator[Offer]) -> None:
        self.offers = offers

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        raise NotImplementedError

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        return self.offers


def raw_copy(url: str, offers: Iterator[Offer]) -> float:
    """COPY the rows the write path stages (same columns, same values, identity hash
    included) into a bare table (no indexes, no logic). Rows are built in chunks with
    the clock stopped, so only the COPY is timed and memory stays at one chunk."""
    engine = make_engine(url)
    cols = ", ".join(f"{c} TEXT" for c in INCOMING_COLUMNS)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE IF EXISTS raw_copy")
        conn.exec_driver_sql(f"CREATE TABLE raw_copy ({cols}) WITH (autovacuum_enabled = off)")
    now = datetime.now(UTC)
    elapsed = 0.0
    with engine.begin() as conn:
        raw = conn.connection.driver_connection
        assert raw is not None
        with (
            raw.cursor() as cur,
            cur.copy(f"COPY raw_copy ({', '.join(INCOMING_COLUMNS)}) FROM STDIN") as copy,
        ):
            n = 0
            while chunk := [
                (n := n + 1, *store_row(o), now, offer_hash(o)) for o in islice(offers, 10_000)
            ]:
                start = time.perf_counter()
                for row in chunk:
                    copy.write_row(row)
                elapsed += time.perf_counter() - start
            start = time.perf_counter()
        elapsed += time.perf_counter() - start  # the COPY's end and the commit
    engine.dispose()
    return elapsed


ROLLUP_S: list[float] = []
"""Seconds each run spent keeping the cheapest-price rollup (inside its time)."""
_maintain_run = rollup.maintain_run


def _timed_maintain_run(*args: Any, **kwargs: Any) -> int:
    start = time.perf_counter()
    try:
        return _maintain_run(*args, **kwargs)
    finally:
        ROLLUP_S.append(time.perf_counter() - start)


rollup.maintain_run = _timed_maintain_run  # the run calls it through the module


def project_run(url: str, offers: Iterator[Offer], at: datetime) -> tuple[float, int]:
    engine = make_engine(url)
    with engine.connect():  # the pool's connection made before the clock starts
        pass
    start = time.perf_counter()
    summary = run_collector(engine, ListCollector(offers), Settings(), now=at)
    elapsed = time.perf_counter() - start
    engine.dispose()
    if summary.status != "succeeded":
        sys.exit(f"bench run failed: {summary.error}")
    return elapsed, summary.stats.price_changes


def generating(offers: Iterator[Offer]) -> float:
    """Seconds to generate ``offers`` alone (subtracted from a run that consumes them)."""
    start = time.perf_counter()
    for _ in offers:
        pass
    return time.perf_counter() - start


class Source:
    """The offers of one timed run, and the seconds of making them inside its timer.

    By default the offers are made into a list before the clock starts (0 s inside
    it): making 200,000 offers takes 3-12 s on a shared 2-core machine, several times
    the re-collection itself, so subtracting a generation timed at another moment left
    the re-collection's figure mostly that moment's load. ``--stream`` keeps a run's
    offers out of memory (for the peak RSS of a 1,000,000-offer run): they are made
    while the run consumes them and a generation timed just before is subtracted."""

    def __init__(self, make: Callable[[], Iterator[Offer]], *, stream: bool) -> None:
        self.make, self.stream = make, stream
        self.held: list[Offer] | None = None if stream else list(make())

    def offers(self) -> tuple[Iterator[Offer], float]:
        if self.held is not None:
            return iter(self.held), 0.0
        return self.make(), generating(self.make())


def settle(url: str, *, analyze: bool) -> None:
    """Before each timed run: the database quiet (:func:`scratch_db.quiesce`) and
    Python's garbage collected, so neither side pays for what the one before left."""
    quiesce(url, analyze=analyze)
    gc.collect()


def pair(url: str, source: Source, at: datetime, *, analyze: bool) -> tuple[float, float, int]:
    """A raw COPY of ``source``'s rows, then the write path over the same offers, each
    after :func:`settle`, always in this order: (COPY s, run s, price changes)."""
    settle(url, analyze=analyze)
    raw = raw_copy(url, source.offers()[0])
    settle(url, analyze=analyze)
    offers, gen_s = source.offers()
    run_s, moved = project_run(url, offers, at)
    return raw, run_s - gen_s, moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offers", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--stream", action="store_true", help="never hold a run's offers")
    args = parser.parse_args()
    n, repeat = args.offers, max(1, args.repeat)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    rng = random.Random(11)
    changes = [set(rng.sample(range(n), n // 10)) for _ in range(repeat)]
    first_src = Source(lambda: synthetic_offers(n), stream=args.stream)
    firsts: list[tuple[float, float, int]] = []
    agains: list[tuple[float, float, int]] = []
    first_rollup: list[float] = []
    again_rollup: list[float] = []
    for attempt in range(repeat):
        with scratch_database() as url:
            migrate.upgrade(make_engine(url))
            autovacuum_off(url)
            day = t0 + attempt * timedelta(days=1)
            firsts.append(pair(url, first_src, day, analyze=False))
            first_rollup.append(ROLLUP_S[-1])
            if attempt == repeat - 1:  # the re-collections, one after another
                del first_src
                for k in range(1, repeat + 1):
                    src = Source(
                        lambda k=k: with_changes(synthetic_offers(n), changes[:k]),  # type: ignore[misc]
                        stream=args.stream,
                    )
                    agains.append(pair(url, src, day + k * timedelta(hours=6), analyze=True))
                    again_rollup.append(ROLLUP_S[-1])
                    moved = agains[-1][2]
                    assert moved == n // 10, f"expected {n // 10} price changes, got {moved}"
                    del src
    report(n, firsts, agains, first_rollup, again_rollup)


def report(
    n: int,
    firsts: list[tuple[float, float, int]],
    agains: list[tuple[float, float, int]],
    first_rollup: list[float],
    again_rollup: list[float],
) -> None:
    """Each side's times, and each ratio as the median of its pairs (a COPY and the run
    timed right after it): a pair shares its minute's load, the median drops the pair
    a burst of other work landed in."""
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def each(runs: list[float]) -> str:
        return ", ".join(f"{r:.2f}" for r in runs)

    def line(name: str, pairs: list[tuple[float, float, int]], rollup: list[float]) -> float:
        raws, runs = [p[0] for p in pairs], [p[1] for p in pairs]
        ratios = [r / s for r, s, _ in pairs]
        print(f"{name}: {n / median(runs):>10,.0f} rows/s (runs {each(runs)} s)")
        print(f"  raw COPY just before: {n / median(raws):,.0f} rows/s ({each(raws)} s)")
        print(f"  ratios {each(ratios)}; keeping the rollup {each(rollup)} s")
        return median(ratios)

    print(f"offers: {n}")
    ratio_first = line("first collection", firsts, first_rollup)
    ratio_again = line("re-collection (10%)", agains, again_rollup)
    print(
        f"ingest ratio_first={ratio_first:.2f} ratio_recollect={ratio_again:.2f} "
        f"peak_rss_mib={peak_mib:.0f}"
    )


if __name__ == "__main__":
    main()
