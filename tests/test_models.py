"""Offer validation names the offending field; money never passes through a float."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest

from tests.conftest import make_offer
from tracker.models import InvalidOffer, PricingModel, to_decimal


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"price_per_hour": Decimal(-1)}, "price_per_hour"),
        ({"price_per_hour": Decimal(0)}, "price_per_hour"),
        ({"price_per_hour": "NaN"}, "price_per_hour"),
        ({"price_per_hour": float("inf")}, "price_per_hour"),
        ({"price_per_hour": "12,5"}, "price_per_hour"),
        ({"price_per_hour_usd": Decimal(0)}, "price_per_hour_usd"),
        ({"provider": "  "}, "provider"),
        ({"instance_type": ""}, "instance_type"),
        ({"region": ""}, "region"),
        ({"gpu_model": ""}, "gpu_model"),
        ({"gpu_count": 0}, "gpu_count"),
        ({"gpu_count": Decimal("-0.5")}, "gpu_count"),
        ({"gpu_memory_gib": 0}, "gpu_memory_gib"),
        ({"pricing": "hourly"}, "pricing"),
        ({"interconnect": "infiniband"}, "interconnect"),
        ({"currency": "dollars"}, "currency"),
        ({"currency": "ÜSD"}, "currency"),
        ({"observed_at": datetime(2026, 1, 1)}, "observed_at"),
        ({"price_per_hour": Decimal(2), "price_per_hour_usd": Decimal(3)}, "price_per_hour_usd"),
    ],
)
def test_invalid_offers_name_the_field(overrides: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidOffer) as info:
        make_offer(**overrides)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")


def test_fractional_gpus_and_identity() -> None:
    offer = make_offer(gpu_count=Decimal("0.5"), pricing="spot", zone="us-east-1a")
    assert offer.gpu_count == Decimal("0.5")
    assert offer.pricing is PricingModel.SPOT
    assert offer.key() == (
        "testcloud", "gpu.8xa100", "us-east-1", "us-east-1a", "spot", "", "", "linux"
    )  # fmt: skip
    assert offer.price_per_gpu_hour_usd == Decimal("65.5452")


def test_decimals_from_json_floats_keep_their_written_digits() -> None:
    assert to_decimal(0.1, "x") == Decimal("0.1")
    assert to_decimal("3.673385", "x") == Decimal("3.673385")
    with pytest.raises(InvalidOffer):
        to_decimal(True, "x")


def test_reservation_terms() -> None:
    assert PricingModel.RESERVED_1Y.term_hours == 8760
    assert PricingModel.RESERVED_3Y.term_hours == 26280
    assert PricingModel.SPOT.term_hours is None
