"""Email over SMTP (stdlib ``smtplib``): a text and an HTML part per digest.

``smtp_tls`` is ``none`` (plain, port 25), ``starttls`` (upgrade, port 587) or
``ssl`` (implicit TLS, port 465); login only when a username is set. Every SMTP
failure, a refused login included, is a retryable :class:`DeliveryError`: a
password being rotated must not drop alerts, and ``max_attempts`` bounds it.
"""

from __future__ import annotations

import html
import logging
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import make_msgid, parseaddr
from typing import ClassVar, Self

from pydantic import SecretStr

from tracker.alerts.channels import DeliveryError
from tracker.alerts.digest import Digest
from tracker.alerts.render import heading
from tracker.errors import one_line
from tracker.redact import redact
from tracker.settings import ConfigError, Settings
from tracker.settings.alerts import AlertsSettings

__all__ = ["EmailChannel", "email_message"]

log = logging.getLogger(__name__)


def _text_of(value: bytes | str) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def _grouped(digest: Digest) -> list[tuple[str, list[str]]]:
    """The shown lines under their group's heading, in digest order."""
    out: list[tuple[str, list[str]]] = []
    for item in digest.shown:
        title = heading(item.line.group)
        if not out or out[-1][0] != title:
            out.append((title, []))
        out[-1][1].append(item.line.text)
    return out


def _text(digest: Digest) -> str:
    """The plain part: the lines as they are (a text part has nothing to escape)."""
    parts = [digest.headline, ""]
    for title, lines in _grouped(digest):
        parts += [*([title] if title else []), *(f"- {line}" for line in lines), ""]
    if digest.more:
        parts += [f"... and {digest.more} more", ""]
    parts.append(digest.ids_text)
    return "\n".join(parts).strip() + "\n"


def _html(digest: Digest) -> str:
    """The HTML part: every line HTML-escaped whole (a provider's ``<script>`` is text)."""
    esc = html.escape
    out = [f"<h2>{esc(digest.headline)}</h2>"]
    for title, lines in _grouped(digest):
        if title:
            out.append(f"<h3>{esc(title)}</h3>")
        out.append("<ul>" + "".join(f"<li>{esc(line)}</li>" for line in lines) + "</ul>")
    if digest.more:
        out.append(f"<p>… and {digest.more} more</p>")
    out.append(f"<p style='color:#666'>{esc(digest.ids_text)}</p>")
    return "<html><body>" + "".join(out) + "</body></html>"


def email_message(digest: Digest, sender: str, recipients: list[str]) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = digest.subject
    msg["From"] = sender
    msg["To"] = ", ".join(recipients)
    msg["Message-ID"] = make_msgid(domain=parseaddr(sender)[1].rpartition("@")[2] or None)
    msg["X-GPU-Tracker-Alert-Ids"] = digest.ids_text
    msg.set_content(_text(digest))
    msg.add_alternative(_html(digest), subtype="html")
    return msg


class EmailChannel:
    name: ClassVar[str] = "email"

    def __init__(self, config: AlertsSettings, password: SecretStr | None) -> None:
        self.config = config
        self._password = password

    @classmethod
    def from_settings(cls, settings: Settings) -> Self | None:
        a = settings.alerts
        if not (a.smtp_host or a.email_to):
            return None
        missing = [
            name
            for name, value in (
                ("smtp_host", a.smtp_host),
                ("email_from", a.email_from),
                ("email_to", a.email_to),
            )
            if not value
        ]
        if missing:
            raise ConfigError(
                f"alerts: email needs {', '.join('alerts.' + m for m in missing)} "
                "(GPU_TRACKER_ALERTS__" + missing[0].upper() + ")"
            )
        password = a.password()
        if password is not None and not a.smtp_username:
            raise ConfigError("alerts.smtp_password is set but alerts.smtp_username is not")
        return cls(a, password)

    def _masked(self, text: str) -> str:
        return redact(text, [self._password.get_secret_value()] if self._password else [])

    def _connect(self) -> smtplib.SMTP:
        a = self.config
        if a.smtp_tls == "ssl":
            return smtplib.SMTP_SSL(
                a.smtp_host,
                a.port(),
                timeout=a.timeout_seconds,
                context=ssl.create_default_context(),
            )
        smtp = smtplib.SMTP(a.smtp_host, a.port(), timeout=a.timeout_seconds)
        if a.smtp_tls == "starttls":
            smtp.starttls(context=ssl.create_default_context())
        return smtp

    def send(self, digest: Digest) -> None:
        a = self.config
        msg = email_message(digest, a.email_from, list(a.email_to))
        try:
            with self._connect() as smtp:
                if a.smtp_username:
                    password = self._password.get_secret_value() if self._password else ""
                    smtp.login(a.smtp_username, password)
                refused = smtp.send_message(
                    msg, from_addr=parseaddr(a.email_from)[1], to_addrs=list(a.email_to)
                )
        except smtplib.SMTPAuthenticationError as exc:
            raise DeliveryError(
                "auth",
                f"email: {a.smtp_host} refused the login of {a.smtp_username!r}: "
                f"{exc.smtp_code} {self._masked(_text_of(exc.smtp_error))}",
            ) from None
        except smtplib.SMTPRecipientsRefused as exc:
            raise DeliveryError(
                "refused", f"email: every recipient refused: {sorted(exc.recipients)}"
            ) from None
        except (TimeoutError, smtplib.SMTPServerDisconnected) as exc:
            raise DeliveryError(
                "timeout", f"email: {a.smtp_host}: {self._masked(one_line(exc))}"
            ) from None
        except (OSError, smtplib.SMTPException) as exc:
            raise DeliveryError(
                "smtp", f"email: {a.smtp_host}: {self._masked(one_line(exc))}"
            ) from None
        if refused:
            # Accepted for the others: retrying would send it to them twice.
            log.warning("email: %s refused %s", a.smtp_host, ", ".join(sorted(refused)))
