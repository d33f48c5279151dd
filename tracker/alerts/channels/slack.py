"""Slack incoming webhook: one Block Kit message per digest.

A header that says what changed, the rows as a fixed-width table in a code block
(Slack has no table block for webhooks), and a context line with the alert ids so
a reader (or a bot) can tell a re-sent digest from a new one. The webhook URL is
the credential: it is never logged or put in an error message.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

import httpx
from pydantic import SecretStr

from tracker import __version__
from tracker.alerts.channels import DeliveryError
from tracker.alerts.digest import Digest
from tracker.errors import one_line
from tracker.redact import redact
from tracker.settings import Settings

__all__ = ["SlackChannel", "slack_payload"]

SECTION_MAX = 3000
PERMANENT = {
    400: "Slack refused the message",
    403: "the webhook is not allowed to post",
    404: "the webhook was revoked or its URL is wrong",
    410: "the webhook's channel is archived",
}
"""Answers a retry cannot change (Slack's documented incoming-webhook errors)."""


def _code_block(text: str) -> str:
    if len(text) + 6 > SECTION_MAX:
        text = text[: SECTION_MAX - 10] + "\n…"
    return f"```{text}```"


def slack_payload(digest: Digest) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": digest.subject, "emoji": False}}
    ]
    if digest.rows:
        blocks.append(
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": _code_block(digest.table_text())},
            }
        )
    if digest.lines:
        text = "\n".join(f"• {line}" for line in digest.lines)
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text[:SECTION_MAX]}})
    context = digest.ids_text + (f" · and {digest.more} more" if digest.more else "")
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": context}]})
    return {"text": digest.subject, "blocks": blocks}


class SlackChannel:
    name: ClassVar[str] = "slack"

    def __init__(self, webhook_url: SecretStr, timeout_seconds: float) -> None:
        self._url = webhook_url
        self.timeout = timeout_seconds

    @classmethod
    def from_settings(cls, settings: Settings) -> Self | None:
        url = settings.alerts.webhook_url()
        return cls(url, settings.alerts.timeout_seconds) if url is not None else None

    def _masked(self, text: str) -> str:
        return redact(text, [self._url.get_secret_value()])

    def send(self, digest: Digest) -> None:
        try:
            response = httpx.post(
                self._url.get_secret_value(),
                json=slack_payload(digest),
                timeout=self.timeout,
                headers={"User-Agent": f"gpu-tracker/{__version__}"},
            )
        except httpx.TimeoutException:
            raise DeliveryError("timeout", f"slack: no answer within {self.timeout:g}s") from None
        except httpx.HTTPError as exc:
            raise DeliveryError("connection", f"slack: {self._masked(one_line(exc))}") from None
        if response.status_code == 200:
            return
        code = response.status_code
        body = self._masked(" ".join(response.text.split())[:200])
        why = PERMANENT.get(code, "Slack could not take it now")
        raise DeliveryError(
            f"http_{code}",
            f"slack: HTTP {code} {body}: {why}".replace(f"{code} :", f"{code}:"),
            permanent=code in PERMANENT,
        )
