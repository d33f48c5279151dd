"""``[alerts]`` settings: secrets from the environment or files, never printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracker.alerts.channels import load_channels
from tracker.redact import secrets_of
from tracker.settings import ConfigError, load_settings


def test_channel_secrets_from_env_and_files_never_print(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "smtp_password"
    secret.write_text("smtp-very-secret\n")
    monkeypatch.setenv("GPU_TRACKER_ALERTS__SLACK_WEBHOOK_URL", "https://hooks.example/T/B/tok3n")
    monkeypatch.setenv("GPU_TRACKER_ALERTS__SMTP_HOST", "smtp.example.com")
    monkeypatch.setenv("GPU_TRACKER_ALERTS__SMTP_TLS", "ssl")
    monkeypatch.setenv("GPU_TRACKER_ALERTS__SMTP_USERNAME", "alerts")
    monkeypatch.setenv("GPU_TRACKER_ALERTS__SMTP_PASSWORD_FILE", str(secret))
    monkeypatch.setenv("GPU_TRACKER_ALERTS__EMAIL_FROM", "alerts@example.com")
    monkeypatch.setenv("GPU_TRACKER_ALERTS__EMAIL_TO", "a@example.com, b@example.com")
    settings = load_settings()
    a = settings.alerts
    assert a.email_to == ["a@example.com", "b@example.com"]
    assert a.port() == 465  # implicit TLS
    password = a.password()
    assert password is not None and password.get_secret_value() == "smtp-very-secret"
    text = repr(settings) + str(settings)
    assert "tok3n" not in text and "very-secret" not in text
    # The log masking knows both, so no log line can show them.
    assert {"https://hooks.example/T/B/tok3n", "smtp-very-secret"} <= set(secrets_of(settings))
    assert sorted(load_channels(settings)) == ["email", "slack"]


def test_half_configured_email_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_TRACKER_ALERTS__SMTP_HOST", "smtp.example.com")
    with pytest.raises(ConfigError) as info:
        load_channels(load_settings())
    assert str(info.value) == (
        "alerts: email needs alerts.email_from, alerts.email_to (GPU_TRACKER_ALERTS__EMAIL_FROM)"
    )


def test_no_channel_configured_by_default() -> None:
    assert load_channels(load_settings()) == {}
