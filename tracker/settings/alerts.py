"""Settings section ``[alerts]``: where the rules are, the channels, and delivery pacing.

The Slack webhook URL and the SMTP password are secrets: ``SecretStr`` (they never
print) from the environment or a ``*_file`` path (Docker/Kubernetes secrets), so
``config/tracker.toml`` never needs to hold one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from tracker.settings.base import CsvList, Section, read_secret, split_csv

SmtpTls = Literal["none", "starttls", "ssl"]
DEFAULT_SMTP_PORTS: dict[str, int] = {"none": 25, "starttls": 587, "ssl": 465}


class AlertsSettings(Section):
    """Alert rules (``rules_file``), channels and the outbox sender (tracker/alerts/)."""

    enabled: bool = True
    """False: no evaluation and no delivery (the outbox keeps what it holds)."""
    rules_file: Path | None = None
    """The ``[[rules]]`` TOML (see config/alerts.toml); unset: no rules, nothing fires."""

    slack_webhook_url: SecretStr | None = None
    slack_webhook_url_file: Path | None = None

    smtp_host: str = ""
    smtp_port: int | None = Field(default=None, ge=1, le=65535)
    """Default by ``smtp_tls``: 25 (none), 587 (starttls), 465 (ssl)."""
    smtp_tls: SmtpTls = "starttls"
    smtp_username: str = ""
    smtp_password: SecretStr | None = None
    smtp_password_file: Path | None = None
    email_from: str = ""
    email_to: CsvList = Field(default_factory=list)

    timeout_seconds: float = Field(default=10.0, gt=0)
    """One delivery attempt's network timeout (Slack request, SMTP session)."""
    max_attempts: int = Field(default=8, ge=1, le=100)
    """After this many failed attempts an alert is ``dead`` (``alerts list --failed``)."""
    backoff_base_seconds: float = Field(default=30.0, ge=0)
    """Wait after the first failure; doubles with each further failure."""
    backoff_max_seconds: float = Field(default=3600.0, ge=0)
    send_interval_seconds: float = Field(default=60.0, gt=0)
    """How often ``serve`` drains the outbox besides right after each evaluation."""
    digest_rows: int = Field(default=15, ge=1, le=200)
    """Rows a digest shows; the rest are counted ("and 285 more")."""
    failing_after: int = Field(default=3, ge=1)
    """Consecutive failed attempts after which /healthz reports a channel failing."""

    _split = field_validator("email_to", mode="before")(split_csv)

    def webhook_url(self) -> SecretStr | None:
        value = read_secret(
            self.slack_webhook_url, self.slack_webhook_url_file, "alerts.slack_webhook_url"
        )
        return value if value is not None and value.get_secret_value() else None

    def password(self) -> SecretStr | None:
        value = read_secret(self.smtp_password, self.smtp_password_file, "alerts.smtp_password")
        return value if value is not None and value.get_secret_value() else None

    def port(self) -> int:
        return self.smtp_port or DEFAULT_SMTP_PORTS[self.smtp_tls]
