"""Slack: a real local HTTP server receives the Block Kit JSON; failures are retried or dead."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine

from tests.alerts.conftest import SlackServer
from tracker.alerts.channels.slack import SlackChannel
from tracker.alerts.sender import drain
from tracker.alerts.stats import DeliveryStats
from tracker.settings.alerts import AlertsSettings
from tracker.store.outbox import NewAlert, list_alerts, queue_alerts

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def price_alert(n: int, old: str, new: str, pct: str) -> NewAlert:
    return NewAlert(
        dedupe_key=f"r|price_change|{n}",
        rule="r",
        kind="price_change",
        subject=f"offer:{n}",
        title=f"testcloud i{n} us-east-1 on_demand: {old} → {new} USD/h ({pct}%)",
        details={
            "kind": "price_change",
            "provider": "testcloud",
            "instance_type": f"i{n}",
            "region": "us-east-1",
            "pricing": "on_demand",
            "gpu_count": "8",
            "gpu_model": "H100-SXM",
            "old": old,
            "new": new,
            "currency": "USD",
            "change_pct": pct,
        },
        channels=("slack",),
    )


def config(**kw: object) -> AlertsSettings:
    return AlertsSettings(
        **{"backoff_base_seconds": 0, "max_attempts": 3, "timeout_seconds": 2.0, **kw}  # type: ignore[arg-type]
    )


def channel(slack: SlackServer, cfg: AlertsSettings) -> dict[str, SlackChannel]:
    from pydantic import SecretStr

    return {"slack": SlackChannel(SecretStr(slack.url), cfg.timeout_seconds)}


def test_one_block_kit_digest_for_many_alerts(sqlite_engine: Engine, slack: SlackServer) -> None:
    cfg = config(digest_rows=2)
    alerts = [
        price_alert(1, "10.00", "9.00", "-10.00"),
        price_alert(2, "10.00", "5.00", "-50.00"),
        price_alert(3, "10.00", "12.00", "20.00"),
    ]
    queue_alerts(sqlite_engine, alerts, T0)
    result = drain(sqlite_engine, cfg, channel(slack, cfg), now=T0, stats=DeliveryStats())
    assert result.sent == {"slack": 3}
    assert len(slack.posts) == 1
    post = slack.posts[0]
    assert post["path"] == "/services/T0001/B0001/s3cr3tTok3n"
    blocks = post["json"]["blocks"]
    assert [b["type"] for b in blocks] == ["header", "section", "context"]
    # Two drops and one rise; the subject says so.
    assert blocks[0]["text"] == {
        "type": "plain_text",
        "text": "[gpu-tracker] 2 price drops, 1 price rise",
        "emoji": False,
    }
    assert post["json"]["text"] == "[gpu-tracker] 2 price drops, 1 price rise"
    # The two largest changes (-50 % then -10 %: drops come before rises), the +20 %
    # rise counted in the context line.
    assert blocks[1]["text"]["text"] == (
        "*Price drops*\n"
        "• 8× H100-SXM testcloud i2 (us-east-1, on-demand): 10.00 → 5.00 USD/h (-50 %)\n"
        "• 8× H100-SXM testcloud i1 (us-east-1, on-demand): 10.00 → 9.00 USD/h (-10 %)"
    )
    assert blocks[2]["elements"][0]["text"] == "alert ids 1-3 · and 1 more"
    # Nothing left to send.
    assert drain(sqlite_engine, cfg, channel(slack, cfg), now=T0).sent == {}
    assert len(slack.posts) == 1


def test_500_then_200_delivers_exactly_once(sqlite_engine: Engine, slack: SlackServer) -> None:
    cfg = config()
    slack.answer((500, "rollup_error", 0.0))
    queue_alerts(sqlite_engine, [price_alert(1, "10.00", "8.00", "-20.00")], T0)
    stats = DeliveryStats()
    first = drain(sqlite_engine, cfg, channel(slack, cfg), now=T0, stats=stats)
    assert first.failed == {"slack": "slack: HTTP 500 rollup_error: Slack could not take it now"}
    assert list_alerts(sqlite_engine)[0].status == "pending"
    second = drain(sqlite_engine, cfg, channel(slack, cfg), now=T0, stats=stats)
    assert second.sent == {"slack": 1}
    assert [p["status"] for p in slack.posts] == [500, 200]
    assert len(slack.accepted) == 1
    assert drain(sqlite_engine, cfg, channel(slack, cfg), now=T0).sent == {}
    row = list_alerts(sqlite_engine)[0]
    assert (row.status, row.attempts) == ("sent", 2)
    assert stats.snapshot()["slack"].sent == 1
    assert dict(stats.snapshot()["slack"].failed) == {"http_500": 1}


def test_404_revoked_webhook_is_dead_at_once_with_a_clear_reason(
    sqlite_engine: Engine, slack: SlackServer
) -> None:
    cfg = config(max_attempts=8)
    slack.answer((404, "no_service", 0.0))
    queue_alerts(sqlite_engine, [price_alert(1, "10.00", "8.00", "-20.00")], T0)
    drain(sqlite_engine, cfg, channel(slack, cfg), now=T0, stats=DeliveryStats())
    (row,) = list_alerts(sqlite_engine, failed=True)
    assert row.status == "dead" and row.attempts == 1
    assert row.last_error == (
        "slack: HTTP 404 no_service: the webhook was revoked or its URL is wrong"
    )
    assert "s3cr3tTok3n" not in (row.last_error or "")
    assert drain(sqlite_engine, cfg, channel(slack, cfg), now=T0 + timedelta(days=1)).sent == {}
    assert len(slack.posts) == 1


def test_a_timeout_is_retried(sqlite_engine: Engine, slack: SlackServer) -> None:
    cfg = config(timeout_seconds=0.3)
    slack.answer((200, "ok", 1.0))  # answers after the client gave up
    queue_alerts(sqlite_engine, [price_alert(1, "10.00", "8.00", "-20.00")], T0)
    first = drain(sqlite_engine, cfg, channel(slack, cfg), now=T0, stats=DeliveryStats())
    assert first.failed == {"slack": "slack: no answer within 0.3s"}
    assert list_alerts(sqlite_engine)[0].status == "pending"
    assert drain(sqlite_engine, cfg, channel(slack, cfg), now=T0).sent == {"slack": 1}


def test_backoff_waits_and_max_attempts_makes_it_dead(
    sqlite_engine: Engine, slack: SlackServer
) -> None:
    cfg = config(backoff_base_seconds=60, max_attempts=3)
    slack.answer(*[(503, "busy", 0.0)] * 3)
    queue_alerts(sqlite_engine, [price_alert(1, "10.00", "8.00", "-20.00")], T0)
    drain(sqlite_engine, cfg, channel(slack, cfg), now=T0)
    # Next attempt 60 s later (base), then 120 s after that (doubled).
    assert (
        drain(sqlite_engine, cfg, channel(slack, cfg), now=T0 + timedelta(seconds=59)).failed == {}
    )
    drain(sqlite_engine, cfg, channel(slack, cfg), now=T0 + timedelta(seconds=60))
    assert (
        drain(sqlite_engine, cfg, channel(slack, cfg), now=T0 + timedelta(seconds=179)).failed == {}
    )
    drain(sqlite_engine, cfg, channel(slack, cfg), now=T0 + timedelta(seconds=180))
    assert len(slack.posts) == 3
    (row,) = list_alerts(sqlite_engine, failed=True)
    assert (row.status, row.attempts) == ("dead", 3)
