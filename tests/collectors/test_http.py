"""The shared HTTP layer retries what is worth retrying, honours Retry-After, and stops."""

from __future__ import annotations

import httpx
import pytest
import respx

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
