"""Step-function resampling and the per-GPU cheapest aggregate, on both engines."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from tests.history.conftest import DAY
from tracker.catalog import select_gpus
from tracker.history import views
from tracker.history.args import Grid, HistoryArgumentError, Window, make_grid
from tracker.models import PricingModel
from tracker.store.engine import Engine

HOUR = timedelta(hours=1)


def hourly(first: int, last: int) -> Grid:
    return make_grid(Window(DAY + first * HOUR, DAY + last * HOUR), HOUR)


def test_a_resampled_point_is_the_price_in_force_and_a_delisted_gap_is_empty(
    day_history: Engine,
) -> None:
    offer = views.OfferKey("aws", "p5.48xlarge", "us-east-1")
    rows = views.offer_steps(day_history, offer, hourly(9, 16), fx_rates={})
    assert [r["time"] for r in rows] == [DAY + h * HOUR for h in range(9, 17)]
    # 98.32 until the change at 10:30, 80 after; delisted by the 13:00 run, back at 15:00.
    assert [r["price_per_hour"] for r in rows] == [
        Decimal("98.32"), Decimal("98.32"),  # 09:00, 10:00: the old price still in force
        Decimal("80.00"), Decimal("80.00"),  # 11:00, 12:00
        None, None,                          # 13:00, 14:00: delisted
        Decimal("80.00"), Decimal("80.00"),  # 15:00 (relisted at 15:00 exactly), 16:00
    ]  # fmt: skip
    assert {r["currency"] for r in rows if r["price_per_hour"]} == {"USD"}
    assert all(r["currency"] is None and r["price_per_hour_usd"] is None for r in rows[4:6])


def test_steps_keep_the_original_currency_beside_usd(day_history: Engine) -> None:
    offer = views.OfferKey("ovh", "l40s-90", "GRA")
    # stored in EUR only: no rate, no USD figure (never 1.0) ...
    [row] = views.offer_steps(day_history, offer, hourly(12, 12), fx_rates={})
    assert (row["price_per_hour"], row["currency"]) == (Decimal("2.80"), "EUR")
    assert row["price_per_hour_usd"] is None
    # ... and at the rate in force (here the manual fx_rates.EUR): 2.80 x 1.08 = 3.0240
    fx_rates = {"EUR": Decimal("1.08")}
    [row] = views.offer_steps(day_history, offer, hourly(12, 12), fx_rates=fx_rates)
    assert row["price_per_hour_usd"] == Decimal("3.0240")


def test_steps_before_the_first_price_are_left_out(day_history: Engine) -> None:
    offer = views.OfferKey("azure", "Standard_NC40ads_H100_v5", "eastus")
    rows = views.offer_steps(day_history, offer, hourly(11, 13), fx_rates={})
    # first seen at 12:30: nothing in force at 11:00 or 12:00 (no history yet: no row),
    # 11.50 at 13:00
    assert [(r["time"].hour, r["price_per_hour"]) for r in rows] == [(13, Decimal("11.50"))]


def test_gpu_family_aggregate_picks_the_cheapest_offer_at_each_step(day_history: Engine) -> None:
    rows = views.gpu_steps(
        day_history,
        select_gpus(["H100"]),
        hourly(9, 16),
        pricing=[PricingModel.ON_DEMAND],
        fx_rates={},
    )
    picked = [(r["price_per_gpu_hour_usd"], r["provider"], r["gpu_model"]) for r in rows]
    # per GPU-hour: aws p5 98.32/8 = 12.29 then 80/8 = 10.00; lambda PCIe 12.00/1;
    # azure NVL 11.50/1 from 12:30; the A100 (1.00) and the spot p5 (5.00) never count.
    assert picked == [
        (Decimal("12.000000"), "lambda", "H100-PCIE"),  # 09:00: 12.00 < 12.29
        (Decimal("12.000000"), "lambda", "H100-PCIE"),  # 10:00
        (Decimal("10.000000"), "aws", "H100-SXM"),      # 11:00: 10.00 after 10:30
        (Decimal("10.000000"), "aws", "H100-SXM"),      # 12:00
        (Decimal("11.500000"), "azure", "H100-NVL"),    # 13:00: aws delisted
        (Decimal("11.500000"), "azure", "H100-NVL"),    # 14:00
        (Decimal("10.000000"), "aws", "H100-SXM"),      # 15:00: aws back
        (Decimal("10.000000"), "aws", "H100-SXM"),      # 16:00
    ]  # fmt: skip
    assert rows[2]["instance_type"] == "p5.48xlarge" and rows[2]["region"] == "us-east-1"
    assert rows[2]["price_per_hour"] == Decimal("80.00") and rows[2]["gpu_count"] == 8


def test_gpu_aggregate_filters_pricing_and_provider(day_history: Engine) -> None:
    spot = views.gpu_steps(
        day_history,
        select_gpus(["h100-sxm"]),
        hourly(9, 9),
        pricing=[PricingModel.SPOT],
        fx_rates={},
    )
    # 40.00 / 8 GPUs = 5.00
    assert [(r["price_per_gpu_hour_usd"], r["zone"]) for r in spot] == [
        (Decimal("5.000000"), "us-east-1a")
    ]
    only_lambda = views.gpu_steps(
        day_history, select_gpus(["h100"]), hourly(11, 11), provider=["lambda"],
        pricing=[PricingModel.ON_DEMAND],
        fx_rates={},
    )  # fmt: skip
    assert [r["provider"] for r in only_lambda] == ["lambda"]
    before = views.gpu_steps(day_history, select_gpus(["a100 80gb"]), hourly(-2, -1), fx_rates={})
    assert before == []  # before any price: no history yet, no rows


def test_an_unknown_offer_is_an_argument_error(day_history: Engine) -> None:
    with pytest.raises(HistoryArgumentError, match=r"no stored offer aws p9\.huge us-east-1"):
        views.offer_steps(
            day_history, views.OfferKey("aws", "p9.huge", "us-east-1"), hourly(1, 2), fx_rates={}
        )
