"""One offer's history read by its series ids (tracker.store.reads, Postgres)
gives the general statement's rows, and hands non-USD offers back to it."""

from __future__ import annotations

import random
from datetime import timedelta

from tests.store.test_rollup import START, _history
from tracker.models import PricingModel
from tracker.store import reads
from tracker.store.engine import Engine


def history_times(times: reads.Times) -> list[object]:
    return list(times.times() if isinstance(times, reads.Steps) else times)


def test_offer_steps_by_series_id_equal_the_general_statement(pg_engine: Engine) -> None:
    _history(random.Random(3), pg_engine, runs=8)
    steps = reads.Steps(START - timedelta(hours=1), timedelta(minutes=20), 160)
    listed = [START + timedelta(hours=h, minutes=7) for h in (0, 5, 13, 30)]
    ending = reads.Steps(START, timedelta(hours=6), 6, end=START + timedelta(hours=33))
    compared = 0
    for n in range(14):
        pricing = PricingModel.SPOT if n % 4 == 3 else PricingModel.ON_DEMAND
        where = reads.SeriesFilter(
            provider=[("aws", "gcp")[n % 2]],
            instance_type=f"gpu.{n // 3}",
            region=[("r1", "r2")[n // 7]],
            pricing=[pricing],
        )
        for times in (steps, listed, ending):
            fast = reads.probe_usd_offer_steps(pg_engine, times, where)
            general = reads.offer_steps(pg_engine, times, where)  # the general statement
            if n in (4, 9):  # the EUR offers: left to the general statement
                assert fast is None
                assert reads.probe_offer_steps(pg_engine, times, where) == general
                continue
            assert fast == general == reads.probe_offer_steps(pg_engine, times, where), where
            assert any(s.price is None for s in general) or times is not steps
            assert {s.k for s in general} == set(range(len(history_times(times))))
            compared += 1
    assert compared >= 30
    nothing = reads.SeriesFilter(provider=["nosuch"])
    assert reads.probe_usd_offer_steps(pg_engine, steps, nothing) == []
