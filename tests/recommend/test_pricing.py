"""Spot re-work (Daly's formula) and reservation eligibility."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tracker.models import PricingModel
from tracker.recommend.pricing import (
    expected_wall_hours,
    interruption_rate_per_hour,
    term_covered,
)


def wall(work: float, pct: float, checkpoint: float | None, restart: float = 0.0) -> float:
    rate = interruption_rate_per_hour(pct)
    return float(
        expected_wall_hours(np.array([work]), np.array([rate]), checkpoint, restart, 0.0)[0]
    )


def test_no_interruptions_means_no_rework() -> None:
    assert wall(100, 0, None) == pytest.approx(100)
    assert wall(100, 0, 1.0) == pytest.approx(100)


def test_without_checkpoints_the_whole_job_restarts() -> None:
    # Daly with tau = T, R = 0: (e^{lambda T} - 1) / lambda; 100 % per 730 h month
    lam = 1 / 730
    assert wall(100, 100, None) == pytest.approx(math.expm1(lam * 100) / lam)
    assert wall(100, 100, None) > 107  # ~7 % re-work


def test_checkpoints_bound_the_rework_per_interruption() -> None:
    lam = 1 / 730
    expected = 100 / 1.0 * math.expm1(lam * 1.0) / lam
    assert wall(100, 100, 1.0) == pytest.approx(expected)
    assert wall(100, 100, 1.0) < 100.1


def test_restart_time_adds_to_every_interruption() -> None:
    assert wall(100, 100, 1.0, restart=0.5) > wall(100, 100, 1.0)


def test_rework_grows_with_the_interruption_rate() -> None:
    hours = [wall(200, pct, None) for pct in (5, 11, 16, 22, 100)]
    assert hours == sorted(hours)


@pytest.mark.parametrize(
    ("pricing", "months", "covered"),
    [
        (PricingModel.ON_DEMAND, 0, True),
        (PricingModel.SPOT, 0, True),
        (PricingModel.RESERVED_1Y, 11.9, False),
        (PricingModel.RESERVED_1Y, 12, True),
        (PricingModel.RESERVED_3Y, 24, False),
        (PricingModel.RESERVED_3Y, 36, True),
    ],
)
def test_reserved_terms_need_a_covering_horizon(
    pricing: PricingModel, months: float, covered: bool
) -> None:
    assert term_covered(pricing, months) is covered
