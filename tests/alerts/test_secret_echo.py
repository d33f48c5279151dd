"""A receiver that echoes the webhook's path leaks no part of it (issue 44.4).

The reproduction: a proxy or framework in front of the webhook answering
``Cannot POST /services/T0…/B0…/<token>`` put the path into ``last_error``, which
showed in the WARNING log, ``alerts list``, /alerts, /api/v1/alerts and /healthz;
only the whole URL was masked. The 404 body below is Express's default
(finalhandler's ``createHtmlDocument``: ``<pre>Cannot POST <path></pre>``), the
answer of a Node proxy or mock that has no route for the path.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import SecretStr

from tests.alerts.conftest import SlackServer
from tests.alerts.test_slack import config, price_alert
from tests.conftest import cli_runner
from tracker.alerts.channels.slack import SlackChannel
from tracker.alerts.sender import drain
from tracker.alerts.stats import DeliveryStats
from tracker.redact import MASK, redact, secrets_of
from tracker.settings import Settings
from tracker.settings.alerts import AlertsSettings
from tracker.store import Engine
from tracker.store.outbox import due_deliveries, list_alerts, mark_failed, queue_alerts
from tracker.views.alerts import alerts

T0 = datetime(2026, 3, 1, tzinfo=UTC)
PATH_PARTS = ("T0ABCDEF12", "B0GHIJKL34", "abcdefghijklmnopqrstuvwx")
PATH = "/services/" + "/".join(PATH_PARTS)
EXPRESS_404 = (
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    "<title>Error</title>\n</head>\n<body>\n<pre>Cannot POST {path}</pre>\n</body>\n</html>\n"
)


def _leaks(text: str | None) -> list[str]:
    return [part for part in PATH_PARTS if part in (text or "")]


def test_the_path_and_each_of_its_parts_are_masked() -> None:
    url = "https://hooks.slack.com" + PATH
    secrets = secrets_of(Settings(alerts=AlertsSettings(slack_webhook_url=SecretStr(url))))
    assert redact(f"Cannot POST {PATH}", secrets) == f"Cannot POST /services{MASK}"
    assert redact("token abcdefghijklmnopqrstuvwx", secrets) == f"token {MASK}"
    assert redact("channel B0GHIJKL34 is gone", secrets) == f"channel {MASK} is gone"
    # route words stay readable: only the credential's parts are masked
    assert redact("POST /services/ not found", secrets) == "POST /services/ not found"


def test_a_url_s_password_and_query_values_are_masked_alone() -> None:
    hook = "https://bot:pa55w0rd-xyz@hooks.example.com/hook?token=q1w2e3r4t5&format=json"
    secrets = secrets_of(Settings(alerts=AlertsSettings(slack_webhook_url=SecretStr(hook))))
    assert redact("login pa55w0rd-xyz refused", secrets) == f"login {MASK} refused"
    assert redact("GET /hook?token=q1w2e3r4t5", secrets) == f"GET /hook?token={MASK}"


def test_an_echoed_webhook_path_is_masked_before_it_is_stored(
    engine: Engine, slack: SlackServer, caplog: pytest.LogCaptureFixture
) -> None:
    url = slack.url.split("/services/")[0] + PATH
    slack.answer((404, EXPRESS_404.format(path=PATH), 0.0))
    cfg = config(slack_webhook_url=SecretStr(url))
    queue_alerts(engine, [price_alert(1, "10.00", "8.00", "-20.00")], T0)
    stats = DeliveryStats()
    caplog.set_level(logging.WARNING, logger="tracker.alerts.sender")
    result = drain(engine, cfg, {"slack": SlackChannel(SecretStr(url), 2.0)}, now=T0, stats=stats)
    assert slack.posts[0]["path"] == PATH  # the receiver did get the secret path
    (row,) = list_alerts(engine, failed=True)
    assert row.status == "dead"
    assert f"Cannot POST /services{MASK}" in (row.last_error or "")  # stored masked
    assert _leaks(row.last_error) == []
    assert _leaks(result.failed["slack"]) == []
    assert _leaks(stats.health(1)["channels"]["slack"]["last_error"]) == []
    assert "did not take 1 alert(s)" in caplog.text and _leaks(caplog.text) == []


def test_a_plugin_channel_s_echo_is_masked_by_the_sender(engine: Engine) -> None:
    """Masking is the sender's, not each channel's: a channel that repeats its secret
    in an exception (a third-party plugin) stores it masked too."""
    url = "https://hooks.slack.com" + PATH

    class Echo:
        name = "slack"

        def send(self, digest: object) -> None:
            raise RuntimeError(f"proxy said: no route {PATH}")

    queue_alerts(engine, [price_alert(1, "10.00", "8.00", "-20.00")], T0)
    cfg = config(slack_webhook_url=SecretStr(url))
    drain(engine, cfg, {"slack": Echo()}, now=T0, stats=DeliveryStats())  # type: ignore[dict-item]
    (row,) = list_alerts(engine)
    assert row.last_error == f"RuntimeError: proxy said: no route /services{MASK}"


def test_an_error_stored_before_masking_is_masked_when_shown(
    engine: Engine, tmp_path: Path
) -> None:
    url = "https://hooks.slack.com" + PATH
    queue_alerts(engine, [price_alert(1, "10.00", "8.00", "-20.00")], T0)
    (due,) = due_deliveries(engine, T0)
    mark_failed(engine, [(due.delivery_id, due.attempts)], f"slack: HTTP 404 {PATH}", None)
    settings = Settings(alerts=AlertsSettings(slack_webhook_url=SecretStr(url)))
    (shown,) = alerts(engine, secrets=secrets_of(settings))
    assert shown["last_error"] == f"slack: HTTP 404 /services{MASK}"
    run = cli_runner(engine.url.render_as_string(hide_password=False), tmp_path)
    listed = run(
        "alerts",
        "list",
        "--format",
        "json",
        extra_env={"GPU_TRACKER_ALERTS__SLACK_WEBHOOK_URL": url},
    )
    assert listed.returncode == 0, listed.stderr
    assert f"/services{MASK}" in listed.stdout and _leaks(listed.stdout) == []
