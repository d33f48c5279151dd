"""/healthz for whoever asks without the token: error classes and counts, no text.

The probes answer without the token (orchestrators send none), but an error text can
carry what no one meant to publish: a receiver's echo of a webhook path, a provider's
message naming an account. Secrets are masked in every text already
(:mod:`tracker.redact`); on top of that, when a token is set, a request without it
gets each error as its class only (``ProviderError``, ``slack: HTTP 404``) beside the
counts the report keeps (``consecutive_failures``), and the text itself only with the
token. Without a token set every route is open, so the report is shown whole.
"""

from __future__ import annotations

import hmac

from starlette.requests import Request

from tracker.health_text import HEALTH_PATHS, error_class, public_body, public_report
from tracker.service.web import Response
from tracker.web.security import presented_token

__all__ = ["HEALTH_PATHS", "error_class", "for_request", "public_report"]


def for_request(request: Request, answer: Response, token: bytes | None) -> Response:
    """``answer`` as this request may see it: whole with the token (or none set),
    else with error classes only."""
    status, content_type, body = answer
    if token is None:
        return answer
    given = presented_token(request.headers.raw)
    if given is not None and hmac.compare_digest(given.encode(), token):
        return answer
    return status, content_type, public_body(body)
