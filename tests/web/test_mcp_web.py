"""``serve``'s app answers MCP at /mcp (streamable HTTP) behind the dashboard's token:
the SDK's own streamable-HTTP client against the real uvicorn server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import TextContent
from pydantic import SecretStr

from tests.web.conftest import TOKEN, Site
from tracker.encode import jsonable
from tracker.hooks import Hooks
from tracker.service import Service
from tracker.serving import service_app
from tracker.settings import Settings, WebSettings
from tracker.views.offers import gpu_catalog_rows

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def served(site: Site) -> Iterator[str]:
    """``serve`` (scheduler without collectors, the composed app) with a token set."""
    settings = Settings(database_url=site.database_url, web=WebSettings(token=SecretStr(TOKEN)))
    service = Service(
        settings, collectors={}, hooks=Hooks(), http="127.0.0.1:0", http_app=service_app
    )
    service.start()
    assert service.health_url is not None
    yield f"{service.health_url}/mcp"
    service.stop(timeout=5)


def test_mcp_without_the_token_is_refused(served: str) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        answer = httpx.post(served, json=INITIALIZE, headers=ACCEPT | headers, timeout=30)
        assert answer.status_code == 401, answer.text
    with_token = httpx.post(
        served, json=INITIALIZE, headers=ACCEPT | {"Authorization": f"Bearer {TOKEN}"}, timeout=30
    )
    assert with_token.status_code == 200, with_token.text
    assert with_token.json()["result"]["serverInfo"]["name"] == "gpu-tracker"


async def _client_calls(url: str) -> tuple[list[str], Any]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
        result = await session.call_tool("gpus", {})
        return sorted(t.name for t in listed.tools), result


def test_the_sdk_client_lists_and_calls_the_tools_with_the_token(served: str) -> None:
    names, result = anyio.run(_client_calls, served)
    assert names == ["compare", "gpus", "history", "offers", "plan", "recommend"]
    (item,) = result.content
    assert isinstance(item, TextContent) and not result.is_error
    # the catalog as `gpu-tracker gpus --format json` encodes it
    assert json.loads(item.text) == [jsonable(dict(r)) for r in gpu_catalog_rows()]
