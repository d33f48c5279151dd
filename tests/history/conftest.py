"""Hand-built price histories, written through the real collection path.

``day_history`` (2026-03-01, one collector, complete runs so a missing offer is delisted):

=====  ============================  ===================================================
time   run                           what changes
=====  ============================  ===================================================
00:00  aws, lambda, a100, spot, eur  first prices
10:30  same                          aws p5 98.32 → 80.00
12:30  + azure NVL 11.50             a new H100-NVL offer
13:00  aws missing                   aws p5 delisted (its interval ends at 13:00)
15:00  aws back at 80.00             relisted: a new interval from 15:00
=====  ============================  ===================================================
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from tests.conftest import make_offer
from tests.listed_collector import collect
from tracker.models import Offer
from tracker.store.engine import Engine

DAY = datetime(2026, 3, 1, tzinfo=UTC)


def h100(provider: str, instance: str, model: str, count: int, price: str, **kw: Any) -> Offer:
    return make_offer(
        provider=provider,
        instance_type=instance,
        gpu_model=model,
        gpu_count=Decimal(count),
        gpu_memory_gib=Decimal(80),
        price_per_hour=Decimal(price),
        **kw,
    )


def aws_p5(price: str) -> Offer:
    return h100("aws", "p5.48xlarge", "H100-SXM", 8, price)


LAMBDA = h100("lambda", "gpu_1x_h100_pcie", "H100-PCIE", 1, "12.00")
AZURE = h100("azure", "Standard_NC40ads_H100_v5", "H100-NVL", 1, "11.50", region="eastus")
A100 = make_offer(provider="gcp", instance_type="a2-ultragpu-8g", gpu_model="A100-80GB",
                  gpu_count=Decimal(8), price_per_hour=Decimal("8.00"))  # fmt: skip
SPOT = h100("aws", "p5.48xlarge", "H100-SXM", 8, "40.00", pricing="spot", zone="us-east-1a")
EUR = make_offer(provider="ovh", instance_type="l40s-90", region="GRA", gpu_model="L40S",
                 gpu_count=Decimal(1), gpu_memory_gib=Decimal(48), price_per_hour=Decimal("2.80"), currency="EUR",
                 price_per_hour_usd=Decimal("3.0240"))  # fmt: skip


@pytest.fixture
def day_history(engine: Engine) -> Engine:
    return build_day_history(engine)


def build_day_history(engine: Engine) -> Engine:
    always = [LAMBDA, A100, SPOT, EUR]
    collect(engine, [aws_p5("98.32"), *always], DAY)
    collect(engine, [aws_p5("80.00"), *always], DAY + timedelta(hours=10, minutes=30))
    collect(engine, [aws_p5("80.00"), AZURE, *always], DAY + timedelta(hours=12, minutes=30))
    collect(engine, [AZURE, *always], DAY + timedelta(hours=13))
    collect(engine, [aws_p5("80.00"), AZURE, *always], DAY + timedelta(hours=15))
    return engine
