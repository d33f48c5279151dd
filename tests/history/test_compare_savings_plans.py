"""``compare`` shows savings plans as their own columns beside reservations."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from tests.history.conftest import h100
from tests.listed_collector import collect
from tracker.catalog import select_gpus
from tracker.history.compare import COMPARE_KEYS, compare_rows
from tracker.store.engine import Engine

NOW = datetime(2026, 3, 31, tzinfo=UTC)


def test_the_cheapest_savings_plan_of_each_term_is_a_column(engine: Engine) -> None:
    p5 = "p5.48xlarge"
    offers = [
        h100("aws", p5, "H100-SXM", 8, "80.00"),
        h100("aws", p5, "H100-SXM", 8, "40.00", pricing="reserved_3y", payment_option="all_upfront"),
        h100("aws", p5, "H100-SXM", 8, "36.00", pricing="savings_plan_3y",
             payment_option="all_upfront", offering_class="ec2_instance"),
        h100("aws", p5, "H100-SXM", 8, "44.00", pricing="savings_plan_3y",
             payment_option="no_upfront", offering_class="compute"),
        h100("aws", p5, "H100-SXM", 8, "58.00", pricing="savings_plan_1y",
             payment_option="no_upfront", offering_class="ec2_instance"),
    ]  # fmt: skip
    collect(engine, offers, NOW)
    (row,) = compare_rows(engine, now=NOW, gpu=select_gpus(["H100"]), fx_rates={})
    # per GPU-hour: 3y plans min(36, 44) / 8 = 4.50; 1y plan 58 / 8 = 7.25; 3y reserved 40 / 8 = 5.00
    assert row["savings_plan_3y"] == Decimal("4.500000")
    assert row["savings_plan_1y"] == Decimal("7.250000")
    assert row["reserved_3y"] == Decimal("5.000000") and row["reserved_1y"] is None
    assert COMPARE_KEYS.index("savings_plan_1y") == COMPARE_KEYS.index("reserved_3y") + 1
