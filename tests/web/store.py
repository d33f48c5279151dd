"""A hand-built store for the dashboard tests: two providers, three days of history.

Every figure the tests expect is worked out from the prices below (see each test's
comment); the store is filled through the real ingestion path (``run_collector``),
so intervals, runs and ranking snapshots are what a collection writes.

alpha (us-east-1 / us-west-2)              beta (eu-west-1)
  alpha.8xh100 on_demand 8x H100-SXM 32.00   beta.h100 on_demand 1x H100-SXM 3.60
  alpha.8xh100 spot us-east-1a       16.00 → 14.00 (day 1) → 12.00 (day 2)
  alpha.8xh100 reserved_1y           24.00   beta.h100 spot 1x H100-SXM 2.00
  alpha.1xa100 on_demand 1x A100-80GB 2.50   beta.a100 on_demand 1x A100-80GB 2.20
                                             beta.l4 on_demand 1x L4 0.80
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, ClassVar

from sqlalchemy import Engine

from tests.conftest import make_offer
from tests.listed_collector import ListCollector
from tracker.collect import run_collector
from tracker.models import Offer
from tracker.recommend.stored import recompute_rankings
from tracker.settings import Settings
from tracker.store.outbox import NewAlert, due_deliveries, mark_failed, mark_sent, queue_alerts

DAY0 = datetime(2026, 3, 1, tzinfo=UTC)
DAYS = 3


class Alpha(ListCollector):
    name: ClassVar[str] = "alpha"


class Beta(ListCollector):
    name: ClassVar[str] = "beta"


def _offer(
    provider: str,
    itype: str,
    region: str,
    pricing: str,
    gpu: str,
    count: int,
    price: str,
    vram: int,
    **extra: Any,
) -> Offer:
    return make_offer(
        provider=provider,
        instance_type=itype,
        region=region,
        pricing=pricing,
        gpu_model=gpu,
        gpu_count=Decimal(count),
        gpu_memory_gib=Decimal(vram),
        price_per_hour=Decimal(price),
        vcpus=Decimal(12 * count),
        memory_gib=Decimal(120 * count),
        interconnect="nvlink" if count > 1 else "pcie",
        **extra,
    )


SPOT_BY_DAY = ("16.00", "14.00", "12.00")


def alpha_offers(day: int) -> list[Offer]:
    return [
        _offer("alpha", "alpha.8xh100", "us-east-1", "on_demand", "H100-SXM", 8, "32.00", 80),
        _offer(
            "alpha",
            "alpha.8xh100",
            "us-east-1",
            "spot",
            "H100-SXM",
            8,
            SPOT_BY_DAY[day],
            80,
            zone="us-east-1a",
        ),
        _offer(
            "alpha",
            "alpha.8xh100",
            "us-east-1",
            "reserved_1y",
            "H100-SXM",
            8,
            "24.00",
            80,
            payment_option="no_upfront",
        ),
        _offer("alpha", "alpha.1xa100", "us-west-2", "on_demand", "A100-80GB", 1, "2.50", 80),
    ]


def beta_offers() -> list[Offer]:
    return [
        _offer("beta", "beta.h100", "eu-west-1", "on_demand", "H100-SXM", 1, "3.60", 80),
        _offer("beta", "beta.h100", "eu-west-1", "spot", "H100-SXM", 1, "2.00", 80),
        _offer("beta", "beta.a100", "eu-west-1", "on_demand", "A100-80GB", 1, "2.20", 80),
        _offer("beta", "beta.l4", "eu-west-1", "on_demand", "L4", 1, "0.80", 24),
    ]


def add_alerts(engine: Engine) -> None:
    """Two alerts for slack and email: slack took both; email gave up on the newer one."""
    at = DAY0 + timedelta(days=DAYS - 1, hours=1)
    for n, title in enumerate(("alpha spot fell 12.5 %", "beta.h100 leads bert-base-finetune")):
        alert = NewAlert(
            f"key-{n}", f"rule-{n}", "price_change", f"s{n}", title, {}, ("email", "slack")
        )
        queue_alerts(engine, [alert], at + timedelta(minutes=n))
    due = due_deliveries(engine, at + timedelta(hours=1))
    mark_sent(engine, [d.delivery_id for d in due if d.channel == "slack"], at)
    email = [d for d in due if d.channel == "email"]
    mark_sent(
        engine, [d.delivery_id for d in email if d.alert_id == min(e.alert_id for e in email)], at
    )
    newest = [
        (d.delivery_id, d.attempts) for d in email if d.alert_id == max(e.alert_id for e in email)
    ]
    mark_failed(engine, newest, "SMTP 535 authentication failed", None)


def fill(engine: Engine, settings: Settings) -> None:
    """Three daily collections of both providers, rankings recomputed after each, and
    two alerts (see :func:`add_alerts`)."""
    for day in range(DAYS):
        at = DAY0 + timedelta(days=day)
        for summary in (
            run_collector(engine, Alpha(alpha_offers(day)), settings, now=at),
            run_collector(engine, Beta(beta_offers()), settings, now=at),
        ):
            assert summary.ok, summary
        recompute_rankings(engine, settings, now=at + timedelta(minutes=5))
    add_alerts(engine)
