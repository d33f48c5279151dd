"""Crash safety: a sender killed between "accepted" and "marked sent" re-sends once."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from pydantic import SecretStr
from sqlalchemy import Engine, func, select

from tests.alerts.conftest import SlackServer
from tests.alerts.test_slack import price_alert
from tracker.alerts.channels.slack import SlackChannel
from tracker.alerts.sender import drain
from tracker.settings.alerts import AlertsSettings
from tracker.store.outbox import AlertOutbox, list_alerts, queue_alerts

T0 = datetime(2026, 3, 1, tzinfo=UTC)
SCRIPT = Path(__file__).with_name("crash_sender.py")


def test_killed_after_accept_resends_once_with_the_same_ids(
    sqlite_engine: Engine, sqlite_url: str, slack: SlackServer
) -> None:
    queue_alerts(sqlite_engine, [price_alert(7, "10.00", "8.00", "-20.00")], T0)
    killed = subprocess.run(
        [sys.executable, str(SCRIPT), sqlite_url, slack.url],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert killed.returncode == 9, killed.stderr
    assert len(slack.accepted) == 1
    assert list_alerts(sqlite_engine)[0].status == "pending"  # never marked: not lost
    # The restarted sender delivers it again, with the same alert id, then never more.
    config = AlertsSettings()
    channels = {"slack": SlackChannel(SecretStr(slack.url), 5)}
    assert drain(sqlite_engine, config, channels).sent == {"slack": 1}
    assert drain(sqlite_engine, config, channels).sent == {}
    ids = [p["json"]["blocks"][-1]["elements"][0]["text"] for p in slack.accepted]
    assert ids == ["alert ids 1", "alert ids 1"]
    assert list_alerts(sqlite_engine)[0].status == "sent"


def test_the_outbox_never_holds_two_rows_for_one_event(engine: Engine) -> None:
    alert = price_alert(1, "10.00", "8.00", "-20.00")
    assert queue_alerts(engine, [alert], T0) == [1]
    assert queue_alerts(engine, [alert, alert], T0) == []
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(AlertOutbox)).scalar_one() == 1
