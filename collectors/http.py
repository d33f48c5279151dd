"""One HTTP layer for every REST collector: timeouts, retries, backoff, User-Agent.

Retries cover what a pricing API does under load (429, 5xx, timeouts, dropped
connections); ``Retry-After`` is honoured because providers throttle hard and a
client that ignores it gets banned. Everything else (4xx) fails at once: a bad
request will not get better by asking again. The policy is tenacity's (stop after
``max_retries`` retries, exponential backoff with "equal jitter"), with one wait
strategy of ours on top: the server's ``Retry-After`` when it sends one.

A service calls a failing provider every cadence for months, so a failed request
must cost nothing once it is reported. Two things made it cost: every client loaded
its own TLS context (the CA bundle, about a MiB of C memory, not Python's), and the
retry policy's state, the exception and its traceback formed a reference cycle that
kept the whole client (context included) alive until a full garbage collection, which
a large process runs rarely. So every client shares one TLS context
(:func:`tls_context`) and a failure leaves no frames behind
(:func:`tracker.errors.drop_frames`). A caller that must not overlap its next run (the
service) bounds the retries with :func:`collectors.deadline.retry_deadline`.
"""

from __future__ import annotations

import logging
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import tenacity

from collectors.deadline import seconds_left
from tracker import __version__
from tracker.errors import drop_frames
from tracker.settings import HttpSettings

__all__ = [
    "USER_AGENT",
    "HttpClient",
    "HttpError",
    "retry_after_seconds",
    "tls_context",
]

log = logging.getLogger(__name__)

USER_AGENT = f"gpu-tracker/{__version__} (+https://github.com/gpu-tracker/gpu-tracker)"
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})

_TLS: list[ssl.SSLContext] = []
_TLS_LOCK = threading.Lock()


def tls_context() -> ssl.SSLContext:
    """The process's one TLS context (httpx's defaults: certifi's CA bundle, or
    ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set at the first call).

    An OpenSSL context is safe to share between threads, and loading the CA bundle is
    what makes a client expensive: once per process instead of once per run."""
    with _TLS_LOCK:
        if not _TLS:
            _TLS.append(httpx.create_ssl_context())
        return _TLS[0]


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


_RETRY_ON = tenacity.retry_if_exception_type(
    (httpx.TimeoutException, httpx.TransportError, _RetryableStatus)
)
"""One for the process: each instance holds a method of its own (a cycle per request)."""


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


class _StopAtDeadline(tenacity.stop.stop_base):
    """Stop when the next wait would end past the run's deadline (``retry_deadline``)."""

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        left = seconds_left()
        return left is not None and retry_state.upcoming_sleep >= left


_PAST_DEADLINE = _StopAtDeadline()


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
            verify=tls_context(),
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
            # INFO: a request that recovers is routine, and one that does not is the
            # run's failure, told once by whoever runs it (the service's ERROR line).
            failure = state.outcome.exception() if state.outcome is not None else None
            delay = state.next_action.sleep if state.next_action is not None else 0.0
            # The text, not the exception: a record a handler keeps must not keep it alive.
            log.info("%s %s: %s, retrying in %.1fs", method, _safe(url), str(failure), delay)

        return tenacity.Retrying(
            stop=tenacity.stop_after_attempt(http.max_retries + 1) | _PAST_DEADLINE,
            wait=_WaitRetryAfter(backoff, cap=http.backoff_max_seconds * 4),
            retry=_RETRY_ON,
            sleep=self._sleep,
            before_sleep=log_retry,
            reraise=True,
        )

    def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        response = self._client.request(method, url, **kwargs)
        # httpx binds the read body's stream to its response, and the stream to the
        # connection pool: a cycle per response (the pool, its connections and socket in
        # it) that only the cyclic collector frees. The body is read: keep it alone.
        response.stream = httpx.ByteStream(response.content)
        if response.is_success:
            return response
        if response.status_code in RETRY_STATUS:
            raise _RetryableStatus(response)
        raise _status_error(method, url, response)

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send with retries; returns a 2xx response or raises :class:`HttpError`."""
        attempts = [0]

        def attempt() -> httpx.Response:
            attempts[0] += 1
            left = seconds_left()
            if attempts[0] > 1 and left is not None:  # a retry never outlives the deadline
                timeout = min(self.settings.timeout_seconds, max(left, 0.001))
                return self._send(method, url, **{**kwargs, "timeout": timeout})
            return self._send(method, url, **kwargs)

        policy = self._policy(method, url)
        try:
            response: httpx.Response = policy(attempt)
        except _RetryableStatus as exc:
            drop_frames(exc)
            raise _status_error(method, url, exc.response) from None
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            drop_frames(exc)
            raise HttpError(f"{method} {_safe(url)}: {type(exc).__name__}: {exc}") from exc
        finally:
            # The policy's last steps are its own bound methods, held by the policy: a
            # cycle per request until the cyclic collector runs. Forgotten now.
            policy.iter_state.reset()
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
