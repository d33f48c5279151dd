"""Sections that are not a collector's: HTTP client, the price sheet and the scheduler."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator

from tracker.settings.base import CsvList, Section, split_csv


class HttpSettings(Section):
    """Shared by every httpx-based collector (see collectors/http.py)."""

    timeout_seconds: float = Field(30.0, gt=0)
    max_retries: int = Field(4, ge=0, le=20)
    backoff_base_seconds: float = Field(0.5, ge=0)
    backoff_max_seconds: float = Field(30.0, ge=0)


class PriceSheetSettings(Section):
    enabled: bool = True
    path: Path | None = None


class SchedulerSettings(Section):
    """How ``gpu-tracker serve`` runs collectors (see tracker/service/).

    Each collector gets up to two jobs: its *spot* scope every ``spot_minutes`` and
    its *standard* scope (on-demand + reserved) every ``default_minutes``, because
    spot prices move by the minute and list prices by the month. ``cadences``
    overrides one collector (``aws = 720`` for its standard scope, ``"aws.spot" = 5``
    for its spot scope, ``"aws.services" = 720`` for its storage and egress prices), in
    minutes; fractions are allowed (tests use seconds).
    """

    collectors: CsvList = Field(default_factory=list)
    """Run only these collectors (empty: every registered, enabled collector; one whose
    credentials are missing stays scheduled and records skipped runs until they are back)."""
    default_minutes: float = Field(default=360, gt=0)
    spot_minutes: float = Field(default=15, gt=0)
    services_minutes: float = Field(default=1440, gt=0)
    """Storage and egress prices (a collector's ``services`` job): they change yearly."""
    cadences: dict[str, float] = Field(default_factory=dict)
    jitter_seconds: int = Field(default=30, ge=0)
    """Random delay added to each firing, so replicas and providers are not hit in step."""
    misfire_grace_seconds: int = Field(default=300, ge=1)
    """A run that could not start on time still runs if it is at most this late."""
    stale_after_cadences: float = Field(default=3.0, gt=1)
    """A job with no successful run for this many cadences is reported stale."""
    db_retry_seconds: float = Field(default=60.0, gt=0)
    """After a database failure, retry the job this soon instead of a whole cadence later."""
    http: str = "127.0.0.1:8080"
    """Where /livez, /readyz, /healthz and /metrics listen (``host:port``; ``""``: no server)."""
    shutdown_timeout_seconds: float = Field(default=30.0, gt=0)
    """On SIGTERM, how long a running collection may take to commit or roll back."""
    health_db_timeout_seconds: float = Field(default=3.0, gt=0)
    max_workers: int = Field(default=4, ge=1, le=64)
    """Jobs that may run at once in one process (each job still runs at most once)."""

    _split = field_validator("collectors", mode="before")(split_csv)

    @field_validator("cadences")
    @classmethod
    def _positive_cadences(cls, value: dict[str, float]) -> dict[str, float]:
        for name, minutes in value.items():
            if minutes <= 0:
                raise ValueError(f"cadence for {name!r} must be > 0 minutes, got {minutes}")
        return value

    @field_validator("http")
    @classmethod
    def _host_port(cls, value: str) -> str:
        value = value.strip()
        if value:
            host, sep, port = value.rpartition(":")
            if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
                raise ValueError(f"expected host:port, got {value!r}")
        return value

    def cadence_minutes(self, collector: str, spot: bool) -> float:
        """The cadence of one collector's spot or standard job."""
        if spot:
            return self.cadences.get(f"{collector}.spot", self.spot_minutes)
        return self.cadences.get(collector, self.default_minutes)
