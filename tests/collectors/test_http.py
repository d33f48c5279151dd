"""The shared HTTP layer retries what is worth retrying, honours Retry-After, and stops."""

from __future__ import annotations

import gc
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
import respx

from collectors.deadline import retry_deadline
from collectors.http import HttpClient, HttpError, retry_after_seconds
from tracker.settings import HttpSettings

URL = "https://prices.example.test/api"


def client(sleeps: list[float], retries: int = 3) -> HttpClient:
    return HttpClient(HttpSettings(max_retries=retries), sleep=sleeps.append)


@respx.mock
def test_429_then_success_honours_retry_after() -> None:
    route = respx.get(URL).mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "7"}),
            httpx.Response(503),
            httpx.Response(200, json={"ok": True}),
        ]
    )
    sleeps: list[float] = []
    assert client(sleeps).get_json(URL) == {"ok": True}
    assert route.call_count == 3
    assert sleeps[0] == 7.0
    assert 0 < sleeps[1] <= 1.0  # backoff, with jitter
    assert route.calls[0].request.headers["User-Agent"].startswith("gpu-tracker/")


@respx.mock
def test_timeouts_are_retried_then_reported() -> None:
    respx.get(URL).mock(side_effect=httpx.ConnectTimeout("slow"))
    sleeps: list[float] = []
    with pytest.raises(HttpError, match="ConnectTimeout"):
        client(sleeps, retries=2).get_json(URL)
    assert len(sleeps) == 2


@respx.mock
def test_client_errors_fail_at_once_without_leaking_the_query() -> None:
    route = respx.get(URL).mock(return_value=httpx.Response(403, text="forbidden"))
    with pytest.raises(HttpError) as info:
        client([]).get_json(URL + "?key=SECRET")
    assert route.call_count == 1
    assert info.value.status == 403
    assert "SECRET" not in str(info.value)


@respx.mock
def test_paginate_follows_links_and_refuses_loops() -> None:
    respx.get(URL).mock(return_value=httpx.Response(200, json={"n": 1, "next": URL + "/2"}))
    respx.get(URL + "/2").mock(return_value=httpx.Response(200, json={"n": 2, "next": None}))
    pages = list(client([]).paginate(URL, lambda page: page["next"]))
    assert [p["n"] for p in pages] == [1, 2]
    with pytest.raises(HttpError, match="pagination loop"):
        list(client([]).paginate(URL, lambda page: URL))


def test_retry_after_http_date() -> None:
    response = httpx.Response(429, headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})
    assert retry_after_seconds(response) == 0.0


def test_retry_after_http_date_in_the_future_counts_from_now() -> None:
    # RFC 9110's own example date; 30 s after it is "now" -> 30 s to wait.
    response = httpx.Response(429, headers={"Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT"})
    now = datetime(1994, 11, 6, 8, 49, 7, tzinfo=UTC).timestamp()
    assert retry_after_seconds(response, now=now) == 30.0
    assert retry_after_seconds(httpx.Response(429, headers={"Retry-After": "soon"})) is None


@respx.mock
def test_retry_after_as_an_http_date_is_what_the_client_waits() -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    route = respx.get(URL).mock(
        side_effect=[
            httpx.Response(503, headers={"Retry-After": format_datetime(when, usegmt=True)}),
            httpx.Response(200, json={"ok": True}),
        ]
    )
    sleeps: list[float] = []
    assert client(sleeps).get_json(URL) == {"ok": True}
    assert route.call_count == 2
    # The date has whole seconds: 30 s ahead less the sub-second part and elapsed time.
    assert len(sleeps) == 1 and 28.0 < sleeps[0] <= 30.0


@respx.mock
def test_backoff_is_exponential_with_equal_jitter_and_retry_after_is_capped() -> None:
    route = respx.get(URL).mock(
        side_effect=[
            httpx.Response(503),
            httpx.Response(502),
            httpx.Response(504),
            httpx.Response(500),
            httpx.Response(429, headers={"Retry-After": "86400"}),
            httpx.Response(200, json={}),
        ]
    )
    sleeps: list[float] = []
    settings = HttpSettings(max_retries=5, backoff_base_seconds=0.5, backoff_max_seconds=3)
    HttpClient(settings, sleep=sleeps.append).get_json(URL)
    assert route.call_count == 6
    # Retry n waits within [d/2, d] for d = min(3, 0.5 x 2^n): 0.5, 1, 2, 3 (capped).
    for delay, (low, high) in zip(sleeps, [(0.25, 0.5), (0.5, 1), (1, 2), (1.5, 3)], strict=False):
        assert low <= delay <= high
    # A day of Retry-After is held to 4 x backoff_max = 12 s.
    assert sleeps[4] == 12.0


@respx.mock
def test_a_server_error_that_never_clears_is_reported_with_its_status() -> None:
    route = respx.get(URL).mock(return_value=httpx.Response(503, text="overloaded"))
    sleeps: list[float] = []
    with pytest.raises(HttpError, match="HTTP 503: overloaded") as info:
        client(sleeps, retries=2).get_json(URL)
    assert info.value.status == 503
    assert route.call_count == 3 and len(sleeps) == 2


def test_a_retry_never_outlives_the_deadline_and_a_first_attempt_keeps_its_timeout() -> None:
    """The service's run must not overlap its next one (issue 41): inside
    ``retry_deadline`` no retry starts whose wait would end past it, and a retry's
    timeout is held to what is left; the first attempt keeps the configured 30 s."""
    timeouts: list[float] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        timeouts.append(request.extensions["timeout"]["read"])
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    settings = HttpSettings(max_retries=10, backoff_base_seconds=0.0, backoff_max_seconds=0.0)
    sleeps: list[float] = []
    http = HttpClient(settings, transport=httpx.MockTransport(refuse), sleep=sleeps.append)
    with retry_deadline(5.0), pytest.raises(HttpError, match="ConnectError"):
        http.get_json(URL)
    # No wait (backoff 0): all 11 attempts fit; each retry's timeout is under 5 s.
    assert len(timeouts) == 11 and timeouts[0] == 30.0
    assert all(0 < t <= 5.0 for t in timeouts[1:])

    # A wait of 0.5-1 s (base 1 s, equal jitter) does not fit in 0.2 s: one attempt only.
    timeouts.clear()
    slow = HttpSettings(max_retries=10, backoff_base_seconds=1.0, backoff_max_seconds=1.0)
    http = HttpClient(slow, transport=httpx.MockTransport(refuse), sleep=sleeps.append)
    with retry_deadline(0.2), pytest.raises(HttpError):
        http.get_json(URL)
    assert len(timeouts) == 1
    # Outside a deadline, the same client retries ten times.
    timeouts.clear()
    with pytest.raises(HttpError):
        http.get_json(URL)
    assert len(timeouts) == 11


def test_a_failed_request_leaves_nothing_for_the_cyclic_collector() -> None:
    """A refused request's client, pool and frames are freed by reference counting
    (issue 41: kept in cycles, they grew a service by ~1 MiB a failed run)."""

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    def unavailable(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, text="busy")

    settings = HttpSettings(max_retries=2, backoff_base_seconds=0.0, backoff_max_seconds=0.0)
    for handler in (refuse, unavailable):
        gc.collect()
        gc.disable()
        try:
            failed = _fails(HttpClient(settings, transport=httpx.MockTransport(handler)))
            assert failed.startswith("GET https://prices.example.test/api: ")
            n = gc.collect()
            assert n == 0, handler.__name__
        finally:
            gc.enable()


def _fails(http: HttpClient) -> str:
    """The error of one request through ``http`` (closed after); not pytest.raises, whose
    record of the exception would keep it alive past the garbage count."""
    with http:
        try:
            http.get_json(URL)
        except HttpError as exc:
            return str(exc)
    raise AssertionError("the request did not fail")
