"""Which jobs a service runs: one per (collector, pricing scope), each on its cadence.

Spot prices move within the hour and list prices within months, so a collector
that sells both gets two jobs: ``spot`` (cheap, frequent) and ``standard``
(on-demand + reserved, slow) -- but only when it can fetch spot prices apart
from the rest (its ``spot_fetched_separately``, declared on the ``Collector``
protocol in ``collectors/base.py``). One that cannot (GCP's catalog, a price
sheet) would download everything at the spot cadence for a few spot prices, so
it gets a single ``standard`` job covering every pricing model at the standard
cadence. A collector class without the declarations (a plugin written before
them) is assumed to offer every model and to fetch spot separately.

A collector that also prices storage and egress (``collect_service_prices``, the
:class:`~collectors.base.ServiceCollector` protocol) gets a third job, ``services``,
at ``scheduler.services_minutes`` (daily by default; ``cadences."aws.services"``
for one collector): those prices change a few times a year.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from collectors.base import Collector, collects_services
from tracker.collect_services import SERVICES_SCOPE
from tracker.models import PricingModel
from tracker.settings import ConfigError, SchedulerSettings

__all__ = [
    "SERVICES_SCOPE",
    "SPOT_SCOPE",
    "STANDARD_SCOPE",
    "JobSpec",
    "plan_jobs",
    "pricing_models_of",
    "run_scopes",
    "spot_fetched_separately",
]

log = logging.getLogger(__name__)

SPOT_SCOPE = "spot"
STANDARD_SCOPE = "standard"
_SPOT = frozenset({PricingModel.SPOT})


@dataclass(frozen=True)
class JobSpec:
    collector: str
    scope: str
    """``spot``, ``standard`` or ``services``: the label in logs, metrics and /healthz."""
    pricing_scope: frozenset[PricingModel]
    interval_seconds: float

    @property
    def id(self) -> str:
        return f"{self.collector}:{self.scope}"


def run_scopes(spec: JobSpec) -> tuple[str, ...]:
    """The run-log scopes whose successes serve ``spec``: its own name (what ``serve``
    records), the pricing label earlier releases recorded for it (``all``, or e.g.
    ``on_demand,reserved_1y,reserved_3y``), and ``all`` (a manual ``collect``). A
    ``services`` job is served by ``services`` runs alone: no offer run prices disks."""
    if spec.scope == SERVICES_SCOPE:
        return (SERVICES_SCOPE,)
    models = ",".join(sorted(p.value for p in spec.pricing_scope))
    legacy = "all" if spec.pricing_scope == frozenset(PricingModel) else models
    return tuple(dict.fromkeys((spec.scope, legacy, "all")))


def pricing_models_of(cls: type[Collector]) -> frozenset[PricingModel]:
    declared = getattr(cls, "pricing_models", None)
    if declared is None:
        return frozenset(PricingModel)
    return frozenset(PricingModel(p) for p in declared)


def spot_fetched_separately(cls: type[Collector]) -> bool:
    declared = getattr(cls, "spot_fetched_separately", None)
    return True if declared is None else bool(declared)


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
        if collects_services(cls):
            minutes = settings.cadences.get(f"{name}.services", settings.services_minutes)
            jobs.append(JobSpec(name, SERVICES_SCOPE, frozenset(), minutes * 60))
        models = pricing_models_of(cls)
        standard_seconds = settings.cadence_minutes(name, spot=False) * 60
        if not models:
            # A source of exchange rates, not offers (collectors.base.RateCollector):
            # one job at the standard cadence, labelled like a manual run ("all").
            jobs.append(JobSpec(name, STANDARD_SCOPE, frozenset(PricingModel), standard_seconds))
            continue
        if models & _SPOT and models - _SPOT and not spot_fetched_separately(cls):
            if f"{name}.spot" in settings.cadences:
                log.warning(
                    "scheduler.cadences: %r is ignored: %s fetches spot prices together with"
                    " the others, so they are collected by its one job every %g minutes"
                    " (set cadences.%s to change it)",
                    f"{name}.spot",
                    name,
                    standard_seconds / 60,
                    name,
                )
            jobs.append(JobSpec(name, STANDARD_SCOPE, models, standard_seconds))
            continue
        if models & _SPOT:
            minutes = settings.cadence_minutes(name, spot=True)
            jobs.append(JobSpec(name, SPOT_SCOPE, models & _SPOT, minutes * 60))
        if models - _SPOT:
            jobs.append(JobSpec(name, STANDARD_SCOPE, models - _SPOT, standard_seconds))
    return jobs
