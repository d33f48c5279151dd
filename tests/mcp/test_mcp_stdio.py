"""``gpu-tracker mcp`` through the SDK's own client: ``ClientSession`` over
``stdio_client`` launching the installed command on a stocked SQLite store.

Each tool's answer is compared with ``gpu-tracker <cmd> --format json`` for the same
options on the same store: the MCP face must answer exactly what the CLI prints (the
CLI's own tests work the figures out by hand from the sheets used here).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent
from sqlalchemy.engine import make_url

from tests.cli.test_plan_cli import DEMAND, EUR, OFFER_SHEET, SERVICE_SHEET
from tests.conftest import SCRIPT, Run, cli_runner
from tests.fresh_db import copy_sqlite

TOOLS = {"offers", "compare", "history", "recommend", "plan", "gpus"}
PLAN_ARGS = {
    "gpu": ["H100"],
    "steady_gpus": "16",
    "burst_gpu_hours": "1000",
    "interruptible": "0.5",
    "spot_overhead": "0.1",
    "storage_tb": "10",
    "egress_tb": "15",
    "migration_usd": "5000",
    "current_provider": "lambda",
}
"""tests/cli/test_plan_cli.py's DEMAND, as the tool's arguments."""
CALLS: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
    ("offers", {"gpu": ["H100"], "currency": "EUR"}, ("offers", "--gpu", "H100", "--currency", "EUR")),
    ("offers", {"sort": "price_per_gpu", "limit": 3}, ("offers", "--sort", "price_per_gpu", "-n", "3")),
    ("compare", {"gpu": ["H100"]}, ("compare", "--gpu", "H100")),
    (
        "history",
        {"provider": ["aws"], "instance_type": "p5.48xlarge", "region": ["us-east-1"], "currency": "EUR"},
        ("history", "-p", "aws", "-i", "p5.48xlarge", "-r", "us-east-1", "--currency", "EUR"),
    ),
    (
        "recommend",
        {"params": 7e9, "task": "inference", "precision": "bf16", "tokens": 1e9, "top": 3},
        ("recommend", "--params", "7e9", "--task", "inference", "--precision", "bf16",
         "--tokens", "1e9", "--top", "3"),
    ),
    ("plan", PLAN_ARGS, ("plan", *DEMAND)),
    ("gpus", {}, ("gpus",)),
]  # fmt: skip


@pytest.fixture
def stocked(sqlite_url: str, sqlite_template: Path, tmp_path: Path) -> tuple[Run, dict[str, str]]:
    """The plan tests' offer and service sheets imported; the CLI and the env it ran with."""
    copy_sqlite(sqlite_template, Path(str(make_url(sqlite_url).database)))
    cli = cli_runner(sqlite_url, tmp_path)
    for name, sheet in (("offers.csv", OFFER_SHEET), ("services.csv", SERVICE_SHEET)):
        (tmp_path / name).write_text(sheet)
        proc = cli("import", str(tmp_path / name))
        assert proc.returncode == 0, proc.stderr
    env = {
        "GPU_TRACKER_DATABASE_URL": sqlite_url,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        **EUR,
    }
    return cli, env


def _text(result: Any) -> str:
    (item,) = result.content
    assert isinstance(item, TextContent)
    return item.text


async def _session_calls(env: dict[str, str], cwd: Path) -> tuple[Any, list[Any]]:
    params = StdioServerParameters(command=SCRIPT, args=["mcp"], env=env, cwd=cwd)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        results = [await session.call_tool(name, args) for name, args, _ in CALLS]
        results.append(await session.call_tool("offers", {"currency": "XYZ"}))
        return listed, results


def test_the_stdio_server_answers_each_tool_with_the_clis_json(
    stocked: tuple[Run, dict[str, str]], tmp_path: Path
) -> None:
    cli, env = stocked
    listed, results = anyio.run(_session_calls, env, tmp_path)
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == TOOLS
    assert "USD per GPU-hour" in (tools["offers"].description or "")
    assert "min_vram" in tools["offers"].input_schema["properties"]
    assert tools["plan"].input_schema["required"] == ["gpu"]
    for (name, args, argv), result in zip(CALLS, results, strict=False):
        proc = cli(*argv, "--format", "json", extra_env=EUR)
        assert proc.returncode == 0, proc.stderr
        assert not result.is_error, (name, _text(result))
        rows = json.loads(_text(result))
        assert rows, (name, args)  # every call here has rows: equal lists are not both empty
        assert rows == json.loads(proc.stdout), (name, args)
    refused = results[-1]
    assert refused.is_error
    assert (
        _text(refused) == "Error executing tool offers: currency: no exchange rate stored for XYZ"
    )
