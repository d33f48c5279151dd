"""Slack incoming webhook: one Block Kit message per digest.

A header that says what changed, the lines grouped under bold headings in section
blocks, and a context line with the alert ids (so a reader, or a bot, can tell a
re-sent digest from a new one) and the exact count of alerts not shown. Every line
is escaped for mrkdwn (``&``, ``<``, ``>``): a provider's ``<!channel>`` arrives as
text, never as a mention. Sections hold whole lines up to Slack's 3,000 characters,
and a message at most 50 blocks; what does not fit is counted in "and N more".
The webhook URL is the credential: it is never logged or put in an error message.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

import httpx
from pydantic import SecretStr

from tracker import __version__
from tracker.alerts.channels import DeliveryError
from tracker.alerts.digest import Digest
from tracker.alerts.render import heading, slack_escape
from tracker.errors import one_line
from tracker.redact import masked_first, redact
from tracker.settings import Settings

__all__ = ["SlackChannel", "slack_payload"]

SECTION_MAX = 3000
"""Characters of a section block's text (Block Kit's limit)."""
MAX_BLOCKS = 50
"""Blocks in one message (Block Kit's limit): a header, sections, a context line."""
PERMANENT = {
    400: "Slack refused the message",
    403: "the webhook is not allowed to post",
    404: "the webhook was revoked or its URL is wrong",
    410: "the webhook's channel is archived",
}
"""Answers a retry cannot change (Slack's documented incoming-webhook errors)."""


def _sections(digest: Digest, room: int) -> tuple[list[str], int]:
    """The shown lines as at most ``room`` section texts of whole lines; and how many
    lines they hold. A line that would pass :data:`SECTION_MAX` starts the next section
    (with its group's heading, if it opens a group); lines past the last one are counted.
    """
    texts: list[str] = []
    current: list[str] = []
    size = shown = 0
    group = None
    for item in digest.shown:
        entry = [f"• {slack_escape(item.line.text)}"]
        if item.line.group != group and heading(item.line.group):
            entry.insert(0, f"*{heading(item.line.group)}*")
        added = sum(len(e) + 1 for e in entry)
        if current and size + added - 1 > SECTION_MAX:
            texts.append("\n".join(current))
            current, size = [], 0
        if not current and len(texts) == room:
            break
        if size + added - 1 > SECTION_MAX:
            break  # cannot happen: a line is at most MAX_LINE (500) characters, escaped ×5
        current += entry
        size += added
        shown += 1
        group = item.line.group
    if current:
        texts.append("\n".join(current))
    return texts, shown


def slack_payload(digest: Digest) -> dict[str, Any]:
    """Block Kit for ``digest``: every text from outside escaped, every limit kept."""
    blocks: list[dict[str, Any]] = [
        # plain_text: Slack parses no mention or link in it, so the subject goes as is
        {"type": "header", "text": {"type": "plain_text", "text": digest.subject, "emoji": False}}
    ]
    texts, shown = _sections(digest, MAX_BLOCKS - 2)
    blocks += [{"type": "section", "text": {"type": "mrkdwn", "text": t}} for t in texts]
    more = digest.more_after(shown)
    context = digest.ids_text + (f" · and {more} more" if more else "")
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": context}]})
    return {"text": slack_escape(digest.subject), "blocks": blocks}


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
        # The path alone too: a proxy answering 404 echoes /services/T…/B…/<token>.
        return redact(text, masked_first([self._url.get_secret_value()]))

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
