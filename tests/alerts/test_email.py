"""Email: a real SMTP server on localhost (aiosmtpd) receives the digest."""

from __future__ import annotations

from datetime import UTC, datetime
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default

from pydantic import SecretStr
from sqlalchemy import Engine

from tests.alerts.conftest import SmtpServer
from tests.alerts.test_slack import price_alert
from tracker.alerts.channels import DeliveryError
from tracker.alerts.channels.email import EmailChannel
from tracker.alerts.sender import drain
from tracker.alerts.stats import DeliveryStats
from tracker.settings.alerts import AlertsSettings
from tracker.store.outbox import NewAlert, list_alerts, queue_alerts

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def settings(smtp: SmtpServer, **kw: object) -> AlertsSettings:
    values: dict[str, object] = {
        "smtp_host": "127.0.0.1",
        "smtp_port": smtp.port,
        "smtp_tls": "none",
        "email_from": "gpu-tracker <alerts@example.com>",
        "email_to": "team@example.com, oncall@example.com",
        "backoff_base_seconds": 0,
        "max_attempts": 3,
        "timeout_seconds": 5,
    }
    values.update(kw)
    return AlertsSettings(**values)  # type: ignore[arg-type]


def email_alert(alert: NewAlert) -> NewAlert:
    return NewAlert(**{**{f: getattr(alert, f) for f in alert.__slots__}, "channels": ("email",)})  # type: ignore[arg-type]


def test_digest_arrives_with_envelope_subject_and_both_parts(
    sqlite_engine: Engine, smtp: SmtpServer
) -> None:
    cfg = settings(smtp, smtp_username="alerts", smtp_password=SecretStr("pa55word"))
    queue_alerts(
        sqlite_engine,
        [
            email_alert(price_alert(1, "10.00", "9.00", "-10.00")),
            email_alert(price_alert(2, "10.00", "7.00", "-30.00")),
        ],
        T0,
    )
    channel = EmailChannel(cfg, cfg.password())
    assert drain(sqlite_engine, cfg, {"email": channel}, now=T0).sent == {"email": 2}
    assert smtp.logins == [("alerts", "pa55word")]
    (msg,) = smtp.messages
    assert msg["mail_from"] == "alerts@example.com"
    assert msg["rcpt_tos"] == ["team@example.com", "oncall@example.com"]
    parsed = message_from_bytes(msg["content"], policy=default)
    assert isinstance(parsed, EmailMessage)
    assert parsed["Subject"] == "[gpu-tracker] 2 price drops"
    assert parsed["To"] == "team@example.com, oncall@example.com"
    assert parsed["X-GPU-Tracker-Alert-Ids"] == "alert ids 1-2"
    text = parsed.get_body(("plain",))
    html = parsed.get_body(("html",))
    assert text is not None and html is not None
    plain = text.get_content().replace("\r\n", "\n")
    # Largest change first: i2 (-30 %) above i1 (-10 %).
    assert plain.index("testcloud i2") < plain.index("testcloud i1")
    assert plain == (
        "2 price drops\n\nPrice drops\n"
        "- 8× H100-SXM testcloud i2 (us-east-1, on-demand): 10.00 → 7.00 USD/h (-30 %)\n"
        "- 8× H100-SXM testcloud i1 (us-east-1, on-demand): 10.00 → 9.00 USD/h (-10 %)\n"
        "\nalert ids 1-2\n"
    )
    assert (
        "<li>8× H100-SXM testcloud i2 (us-east-1, on-demand): 10.00 → 7.00 USD/h (-30 %)</li>"
        in html.get_content()
    )
    assert list_alerts(sqlite_engine)[0].status == "sent"


def test_rejected_login_stays_pending_then_dead_never_lost(
    sqlite_engine: Engine, smtp: SmtpServer
) -> None:
    smtp.accept_login = False
    cfg = settings(smtp, smtp_username="alerts", smtp_password=SecretStr("wrong-pa55"))
    queue_alerts(sqlite_engine, [email_alert(price_alert(1, "10.00", "9.00", "-10.00"))], T0)
    channel = {"email": EmailChannel(cfg, cfg.password())}
    stats = DeliveryStats()
    for attempt in (1, 2):
        result = drain(sqlite_engine, cfg, channel, now=T0, stats=stats)
        assert result.failed["email"].startswith(
            "email: 127.0.0.1 refused the login of 'alerts': 535"
        )
        assert "wrong-pa55" not in result.failed["email"]
        (row,) = list_alerts(sqlite_engine)
        assert (row.status, row.attempts) == ("pending", attempt)
    drain(sqlite_engine, cfg, channel, now=T0, stats=stats)
    (row,) = list_alerts(sqlite_engine, failed=True)
    assert (row.status, row.attempts) == ("dead", 3)
    assert smtp.messages == []
    assert dict(stats.snapshot()["email"].failed) == {"auth": 3}
    assert stats.health(failing_after=3)["failing"] == ["email"]


def test_starttls_against_a_server_without_it_is_a_clear_error(smtp: SmtpServer) -> None:
    from tracker.alerts.digest import sample_digest

    cfg = settings(smtp, smtp_tls="starttls")
    try:
        EmailChannel(cfg, None).send(sample_digest())
    except DeliveryError as exc:
        assert exc.reason == "smtp" and "STARTTLS" in str(exc)
    else:
        raise AssertionError("STARTTLS cannot succeed on a plain server")
