"""docker compose: the tracker reads config/alerts.toml read-only and the channel secrets from .env."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import yaml

REPO = Path(__file__).resolve().parents[2]


def test_tracker_mounts_the_rules_read_only_and_points_at_them() -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    tracker = compose["services"]["tracker"]
    rules = PurePosixPath(tracker["environment"]["GPU_TRACKER_ALERTS__RULES_FILE"])
    mounts = [v.split(":") for v in tracker["volumes"]]
    (host, target, mode) = next(m for m in mounts if rules.is_relative_to(m[1]))
    assert mode == "ro"
    assert (REPO / host / rules.relative_to(target)).resolve() == REPO / "config" / "alerts.toml"
    assert tracker["env_file"] == ".env"
    # No channel secret is written in the compose file itself.
    for key in tracker["environment"]:
        assert "WEBHOOK" not in key and "SMTP_PASSWORD" not in key


def test_env_example_lists_every_channel_setting() -> None:
    text = (REPO / ".env.example").read_text()
    for key in (
        "SLACK_WEBHOOK_URL",
        "SMTP_HOST",
        "SMTP_PORT",
        "SMTP_TLS",
        "SMTP_USERNAME",
        "SMTP_PASSWORD",
        "EMAIL_FROM",
        "EMAIL_TO",
    ):
        assert f"GPU_TRACKER_ALERTS__{key}=" in text, key
