"""One HTTP layer for every REST collector: timeouts, retries, backoff, User-Agent.

Retries cover what a pricing API does under load (429, 5xx, timeouts, dropped
connections); ``Retry-After`` is honoured because providers throttle hard and a
client that ignores it gets banned. Everything else (4xx) fails at once: a bad
request will not get better by asking again.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from tracker import __version__
from tracker.settings import HttpSettings

__all__ = ["USER_AGENT", "HttpClient", "HttpError", "retry_after_seconds"]

log = logging.getLogger(__name__)

USER_AGENT = f"gpu-tracker/{__version__} (+https://github.com/gpu-tracker/gpu-tracker)"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class HttpError(Exception):
    """A request that failed for good (after retries, or a non-retryable status)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def retry_after_seconds(response: httpx.Response) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP-date)."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class HttpClient:
    """A thin wrapper over ``httpx.Client`` adding the retry policy.

    ``sleep`` is injectable so tests of the retry path take no wall time.
    """

    def __init__(
        self,
        settings: HttpSettings,
        *,
        base_url: str = "",
        headers: dict[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self._sleep = sleep
        all_headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        all_headers.update(headers or {})
        self._client = httpx.Client(
            base_url=base_url,
            headers=all_headers,
            timeout=settings.timeout_seconds,
            transport=transport,
            follow_redirects=True,
        )

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def _backoff(self, attempt: int) -> float:
        base = self.settings.backoff_base_seconds * (2**attempt)
        capped = min(self.settings.backoff_max_seconds, base)
        return random.uniform(capped / 2, capped)  # "equal jitter"

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send with retries; returns a 2xx response or raises :class:`HttpError`."""
        attempts = self.settings.max_retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self._client.request(method, url, **kwargs)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                if last:
                    raise HttpError(f"{method} {_safe(url)}: {type(exc).__name__}: {exc}") from exc
                delay = self._backoff(attempt)
                log.warning("%s %s: %s, retrying in %.1fs", method, _safe(url), exc, delay)
                self._sleep(delay)
                continue
            if response.is_success:
                return response
            if response.status_code in RETRY_STATUS and not last:
                hinted = retry_after_seconds(response)
                delay = (
                    min(hinted, self.settings.backoff_max_seconds * 4)
                    if hinted is not None
                    else self._backoff(attempt)
                )
                log.warning(
                    "%s %s: HTTP %d, retrying in %.1fs",
                    method,
                    _safe(url),
                    response.status_code,
                    delay,
                )
                self._sleep(delay)
                continue
            raise HttpError(
                f"{method} {_safe(url)}: HTTP {response.status_code}: {_snippet(response)}",
                status=response.status_code,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def get_json(self, url: str, **kwargs: Any) -> Any:
        response = self.request("GET", url, **kwargs)
        try:
            return response.json()
        except ValueError as exc:
            raise HttpError(f"GET {_safe(url)}: response is not JSON: {exc}") from exc

    def paginate(
        self, url: str, next_url: Callable[[Any], str | None], **kwargs: Any
    ) -> Iterator[Any]:
        """Yield each JSON page, following ``next_url(page)`` until it returns None.

        Stops with an error on a repeated link instead of looping forever.
        """
        seen: set[str] = set()
        current: str | None = url
        first = True
        while current is not None:
            if current in seen:
                raise HttpError(f"pagination loop: {_safe(current)} returned twice")
            seen.add(current)
            page = self.get_json(current, **(kwargs if first else {}))
            first = False
            yield page
            current = next_url(page)


def _safe(url: str) -> str:
    """The URL without its query string, which may carry an API key."""
    return url.split("?", 1)[0]


def _snippet(response: httpx.Response) -> str:
    text = response.text.strip().replace("\n", " ")
    return text[:200] + ("…" if len(text) > 200 else "")
