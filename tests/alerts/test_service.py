"""``serve``: the sender's timer, /metrics counters and the backlog gauge, channel health."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr
from sqlalchemy import Engine

from tests.alerts.conftest import SlackServer
from tests.alerts.test_slack import price_alert
from tracker.alerts.stats import STATS
from tracker.service.scheduler import Service
from tracker.settings import Settings
from tracker.settings.alerts import AlertsSettings
from tracker.store.outbox import queue_alerts

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def samples(service: Service) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(service.metrics.render().decode()):
        for s in family.samples:
            if s.name.startswith("gpu_tracker_alerts"):
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_tick_delivers_and_metrics_and_health_tell_it(
    sqlite_engine: Engine, slack: SlackServer, tmp_path: Path
) -> None:
    rules = tmp_path / "alerts.toml"
    rules.write_text('[[rules]]\nname = "drops"\ntype = "price_change"\nthreshold_percent = 10\n')
    settings = Settings(
        alerts=AlertsSettings(
            rules_file=rules,
            slack_webhook_url=SecretStr(slack.url),
            backoff_base_seconds=0,
            failing_after=2,
        )
    )
    service = Service(settings, engine=sqlite_engine, collectors={}, http="")
    before = STATS.snapshot().get("slack")
    sent_before = before.sent if before else 0
    failed_before = before.failed["http_500"] if before else 0
    queue_alerts(sqlite_engine, [price_alert(1, "10.00", "8.00", "-20.00")], T0)
    slack.answer((500, "rollup_error", 0.0), (500, "rollup_error", 0.0))
    service.alerting.tick()
    service.alerting.tick()
    got = samples(service)
    assert got[("gpu_tracker_alerts_backlog", (("channel", "slack"),))] == 1
    assert (
        got[("gpu_tracker_alerts_failed_total", (("channel", "slack"), ("reason", "http_500")))]
        == failed_before + 2
    )
    _, report = service.health_report()
    assert report["alerts"]["failing"] == ["slack"]
    assert report["alerts"]["channels"]["slack"]["consecutive_failures"] == 2
    assert slack.url not in str(report)
    service.alerting.tick()  # the third answer is 200
    got = samples(service)
    assert got[("gpu_tracker_alerts_sent_total", (("channel", "slack"),))] == sent_before + 1
    assert got[("gpu_tracker_alerts_backlog", (("channel", "slack"),))] == 0
    _, report = service.health_report()
    assert report["alerts"]["status"] == "ok" and report["alerts"]["failing"] == []
    assert len(slack.accepted) == 1
