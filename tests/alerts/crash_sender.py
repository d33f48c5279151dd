"""Run by test_sender: drains the outbox and dies (os._exit) right after Slack accepted,
before the deliveries are marked sent."""

from __future__ import annotations

import os
import sys

from pydantic import SecretStr

from tracker.alerts import sender
from tracker.alerts.channels.slack import SlackChannel
from tracker.settings.alerts import AlertsSettings
from tracker.store import outbox
from tracker.store.engine import make_engine


def die(*args: object, **kwargs: object) -> None:
    os._exit(9)


if __name__ == "__main__":
    url, webhook = sys.argv[1], sys.argv[2]
    outbox.mark_sent = die  # type: ignore[assignment]
    config = AlertsSettings(backoff_base_seconds=0)
    sender.drain(make_engine(url), config, {"slack": SlackChannel(SecretStr(webhook), 5)})
    sys.exit(0)  # not reached: the channel accepted, so die() ran
