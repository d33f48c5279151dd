"""Job planning and the scheduler settings."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tests.service import fake_provider
from tracker.models import PricingModel
from tracker.service.jobs import plan_jobs
from tracker.settings import ConfigError, SchedulerSettings


def test_a_collector_with_spot_gets_a_spot_job_and_a_standard_job() -> None:
    settings = SchedulerSettings()
    jobs = plan_jobs({"fakespot": fake_provider.Spot, "fakegood": fake_provider.Good}, settings)

    assert [(j.id, j.interval_seconds) for j in jobs] == [
        ("fakegood:standard", 360 * 60),
        ("fakespot:spot", 15 * 60),
        ("fakespot:standard", 360 * 60),
    ]
    assert jobs[1].pricing_scope == frozenset({PricingModel.SPOT})
    assert jobs[2].pricing_scope == frozenset({PricingModel.ON_DEMAND})


def test_a_collector_without_declared_models_is_assumed_to_offer_all() -> None:
    class Undeclared(fake_provider.Good):
        pricing_models = None  # type: ignore[assignment]

    jobs = plan_jobs({"x": Undeclared}, SchedulerSettings())
    assert [j.id for j in jobs] == ["x:spot", "x:standard"]
    assert jobs[1].pricing_scope == frozenset(PricingModel) - {PricingModel.SPOT}


def test_per_collector_cadences_override_the_defaults() -> None:
    settings = SchedulerSettings(
        spot_minutes=10, default_minutes=120, cadences={"fakespot": 60, "fakespot.spot": 5}
    )
    jobs = plan_jobs({"fakespot": fake_provider.Spot, "fakegood": fake_provider.Good}, settings)
    assert {j.id: j.interval_seconds for j in jobs} == {
        "fakegood:standard": 7200,
        "fakespot:spot": 300,
        "fakespot:standard": 3600,
    }


def test_only_narrows_and_names_unknown_collectors() -> None:
    collectors = {"fakegood": fake_provider.Good, "fakebad": fake_provider.Bad}
    assert [j.id for j in plan_jobs(collectors, SchedulerSettings(), ["fakebad"])] == [
        "fakebad:standard"
    ]
    with pytest.raises(ConfigError, match=r"unknown collector\(s\) nope \(registered: fakebad"):
        plan_jobs(collectors, SchedulerSettings(), ["nope"])


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("cadences", {"aws": 0}, "cadence for 'aws' must be > 0"),
        ("http", "8080", "expected host:port"),
        ("spot_minutes", -1, "greater than 0"),
        ("stale_after_cadences", 1, "greater than 1"),
    ],
)
def test_bad_scheduler_settings_are_rejected(field: str, value: object, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        SchedulerSettings(**{field: value})  # type: ignore[arg-type]


def test_collectors_accepts_a_comma_list_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tracker.settings import Settings

    monkeypatch.setenv("GPU_TRACKER_SCHEDULER__COLLECTORS", "aws, azure")
    monkeypatch.setenv("GPU_TRACKER_SCHEDULER__CADENCES", '{"aws.spot": 5}')
    settings = Settings()
    assert settings.scheduler.collectors == ["aws", "azure"]
    assert settings.scheduler.cadence_minutes("aws", spot=True) == 5
    assert settings.scheduler.cadence_minutes("aws", spot=False) == 360


ON_DEMAND_AND_RESERVED = frozenset(
    {PricingModel.ON_DEMAND, PricingModel.RESERVED_1Y, PricingModel.RESERVED_3Y}
)
SAVINGS_PLANS = frozenset({PricingModel.SAVINGS_PLAN_1Y, PricingModel.SAVINGS_PLAN_3Y})
CAPACITY_BLOCK = frozenset({PricingModel.CAPACITY_BLOCK})


def test_builtin_collectors_get_a_spot_job_only_where_spot_is_fetched_apart() -> None:
    """AWS (spot price history) and Azure (a spot-filtered query) fetch spot on its own;
    GCP's catalog and a price sheet come in one piece, so they get one job for every
    pricing model at the standard cadence instead of a full download every 15 minutes."""
    from collectors.aws import AwsCollector
    from collectors.azure import AzureCollector
    from collectors.gcp import GcpCollector
    from collectors.pricesheet import PriceSheetCollector

    builtin = {
        "aws": AwsCollector,
        "azure": AzureCollector,
        "gcp": GcpCollector,
        "pricesheet": PriceSheetCollector,
    }
    jobs = plan_jobs(builtin, SchedulerSettings())  # type: ignore[arg-type]
    spot = frozenset({PricingModel.SPOT})
    assert [(j.id, j.pricing_scope, j.interval_seconds) for j in jobs] == [
        ("aws:services", frozenset(), 24 * 60 * 60),  # EBS and egress prices, daily
        ("aws:spot", spot, 15 * 60),
        # capacity blocks (DescribeCapacityBlockOfferings) with the standard prices
        ("aws:standard", ON_DEMAND_AND_RESERVED | SAVINGS_PLANS | CAPACITY_BLOCK, 360 * 60),
        ("azure:services", frozenset(), 24 * 60 * 60),  # Managed Disks and Bandwidth
        ("azure:spot", spot, 15 * 60),
        ("azure:standard", ON_DEMAND_AND_RESERVED, 360 * 60),
        ("gcp:services", frozenset(), 24 * 60 * 60),  # disk and egress SKUs
        ("gcp:standard", frozenset(PricingModel) - SAVINGS_PLANS - CAPACITY_BLOCK, 360 * 60),
        ("pricesheet:standard", frozenset(PricingModel), 360 * 60),
    ]
    # GCP catalog downloads a day: 24 h / 6 h = 4 (it was 4 + 24 h / 15 min = 100), plus
    # the daily services job's: 24 h / 24 h = 1.
    assert sum(86_400 / j.interval_seconds for j in jobs if j.collector == "gcp") == 5


def test_a_spot_cadence_for_a_collector_without_a_spot_job_is_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class OnePiece(fake_provider.Spot):
        spot_fetched_separately = False

    settings = SchedulerSettings(cadences={"onepiece": 120, "onepiece.spot": 5})
    with caplog.at_level("WARNING"):
        jobs = plan_jobs({"onepiece": OnePiece}, settings)
    assert [(j.id, j.interval_seconds) for j in jobs] == [("onepiece:standard", 7200)]
    assert jobs[0].pricing_scope == frozenset({PricingModel.SPOT, PricingModel.ON_DEMAND})
    assert "'onepiece.spot' is ignored" in caplog.text
