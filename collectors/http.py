"""One HTTP layer for every REST collector: timeouts, retries, backoff, User-Agent.

Retries cover what a pricing API does under load (429, 5xx, timeouts, dropped
connections); ``Retry-After`` is honoured because providers throttle hard and a
client that ignores it gets banned. Everything else (4xx) fails at once: a bad
request will not get better by asking again. The policy is tenacity's (stop after
``max_retries`` retries, exponential backoff with "equal jitter"), with one wait
strategy of ours on top: the server's ``Retry-After`` when it sends one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import tenacity

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


class _RetryableStatus(Exception):
    """A 429/5xx answer: retried by the policy, reported as HttpError once it gives up."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


def retry_after_seconds(response: httpx.Response, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP-date).

    ``now`` (a Unix time) is what an HTTP-date is counted from; the clock by default.
    """
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
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class _WaitRetryAfter(tenacity.wait.wait_base):
    """The server's ``Retry-After`` (capped) when the last answer carried one, else ``backoff``."""

    def __init__(self, backoff: tenacity.wait.wait_base, cap: float) -> None:
        self.backoff = backoff
        self.cap = cap

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        outcome = retry_state.outcome
        failure = outcome.exception() if outcome is not None else None
        if isinstance(failure, _RetryableStatus):
            hinted = retry_after_seconds(failure.response)
            if hinted is not None:
                return min(hinted, self.cap)
        return float(self.backoff(retry_state))


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

    def _policy(self, method: str, url: str) -> tenacity.Retrying:
        """Retry timeouts, dropped connections and 429/5xx; wait Retry-After or back off.

        The backoff is "equal jitter": half the capped exponential delay, plus a
        random share of the other half (``base x 2^n`` capped at ``backoff_max``).
        """
        http = self.settings
        half_base, half_max = http.backoff_base_seconds / 2, http.backoff_max_seconds / 2
        backoff = tenacity.wait_exponential(
            multiplier=half_base, max=half_max
        ) + tenacity.wait_random_exponential(multiplier=half_base, max=half_max)

        def log_retry(state: tenacity.RetryCallState) -> None:
            failure = state.outcome.exception() if state.outcome is not None else None
            delay = state.next_action.sleep if state.next_action is not None else 0.0
            log.warning("%s %s: %s, retrying in %.1fs", method, _safe(url), failure, delay)

        return tenacity.Retrying(
            stop=tenacity.stop_after_attempt(http.max_retries + 1),
            wait=_WaitRetryAfter(backoff, cap=http.backoff_max_seconds * 4),
            retry=tenacity.retry_if_exception_type(
                (httpx.TimeoutException, httpx.TransportError, _RetryableStatus)
            ),
            sleep=self._sleep,
            before_sleep=log_retry,
            reraise=True,
        )

    def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        response = self._client.request(method, url, **kwargs)
        if response.is_success:
            return response
        if response.status_code in RETRY_STATUS:
            raise _RetryableStatus(response)
        raise _status_error(method, url, response)

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send with retries; returns a 2xx response or raises :class:`HttpError`."""
        try:
            response: httpx.Response = self._policy(method, url)(self._send, method, url, **kwargs)
        except _RetryableStatus as exc:
            raise _status_error(method, url, exc.response) from None
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise HttpError(f"{method} {_safe(url)}: {type(exc).__name__}: {exc}") from exc
        return response

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


def _status_error(method: str, url: str, response: httpx.Response) -> HttpError:
    return HttpError(
        f"{method} {_safe(url)}: HTTP {response.status_code}: {_snippet(response)}",
        status=response.status_code,
    )


def _safe(url: str) -> str:
    """The URL without its query string, which may carry an API key."""
    return url.split("?", 1)[0]


def _snippet(response: httpx.Response) -> str:
    text = response.text.strip().replace("\n", " ")
    return text[:200] + ("…" if len(text) > 200 else "")
