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
