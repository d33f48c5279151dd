"""Which jobs a service runs: one per (collector, pricing scope), each on its cadence.

Spot prices move within the hour and list prices within months, so a collector
that sells both gets two jobs: ``spot`` (cheap, frequent) and ``standard``
(on-demand + reserved, slow). A collector class may narrow what it offers with a
``pricing_models`` class attribute; without one it is assumed to offer all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from collectors.base import Collector
from tracker.models import PricingModel
from tracker.settings import ConfigError, SchedulerSettings

__all__ = ["SPOT_SCOPE", "STANDARD_SCOPE", "JobSpec", "plan_jobs", "pricing_models_of"]

SPOT_SCOPE = "spot"
STANDARD_SCOPE = "standard"
_SPOT = frozenset({PricingModel.SPOT})


@dataclass(frozen=True)
class JobSpec:
    collector: str
    scope: str
    """``spot`` or ``standard``: the label in logs, metrics and /healthz."""
    pricing_scope: frozenset[PricingModel]
    interval_seconds: float

    @property
    def id(self) -> str:
        return f"{self.collector}:{self.scope}"


def pricing_models_of(cls: type[Collector]) -> frozenset[PricingModel]:
    declared = getattr(cls, "pricing_models", None)
    if declared is None:
        return frozenset(PricingModel)
    return frozenset(PricingModel(p) for p in declared)


def plan_jobs(
    collectors: Mapping[str, type[Collector]],
    settings: SchedulerSettings,
    only: Sequence[str] = (),
) -> list[JobSpec]:
    """The jobs for ``collectors`` (narrowed to ``only`` when given), sorted by id."""
    if only:
        unknown = sorted(set(only) - set(collectors))
        if unknown:
            known = ", ".join(sorted(collectors)) or "none"
            raise ConfigError(
                f"scheduler.collectors: unknown collector(s) {', '.join(unknown)} "
                f"(registered: {known})"
            )
        collectors = {name: collectors[name] for name in only}
    jobs: list[JobSpec] = []
    for name, cls in sorted(collectors.items()):
        models = pricing_models_of(cls)
        if models & _SPOT:
            minutes = settings.cadence_minutes(name, spot=True)
            jobs.append(JobSpec(name, SPOT_SCOPE, models & _SPOT, minutes * 60))
        if models - _SPOT:
            minutes = settings.cadence_minutes(name, spot=False)
            jobs.append(JobSpec(name, STANDARD_SCOPE, models - _SPOT, minutes * 60))
    return jobs
