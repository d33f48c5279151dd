"""Availability through the installed ``gpu-tracker``: ``offers --available``, the
``availability`` key, ``history --availability`` and the recommender's skip (issue 13).

A local HTTP server plays Lambda and RunPod with the recorded payloads
(tests/fixtures/*/SOURCES.md), reached through the ``*_ENDPOINT_URL`` overrides.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.recorded_server import serve_recorded
from tests.conftest import Run, cli_runner

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LAMBDA = json.loads((FIXTURES / "lambda" / "instance_types.json").read_text())
RUNPOD = (FIXTURES / "runpod" / "gpuTypes_stockStatus_high_docs_example.json").read_bytes()


@pytest.fixture
def cli(sqlite_url: str, tmp_path: Path) -> Run:
    """SQLite only: the store tests run availability on both engines; this one is about
    the commands, and each call starts the installed script."""
    run = cli_runner(sqlite_url, tmp_path)
    assert run("db", "upgrade").returncode == 0
    return run


@pytest.fixture
def bodies() -> dict[tuple[str, str], bytes]:
    return {
        ("GET", "/api/v1/instance-types"): json.dumps(LAMBDA).encode(),
        ("POST", "/graphql"): RUNPOD,
    }


@pytest.fixture
def server(bodies: dict[tuple[str, str], bytes]) -> Iterator[str]:
    with serve_recorded(bodies) as url:
        yield url


def collect(cli: Run, server: str, *providers: str) -> None:
    env = {
        "GPU_TRACKER_LAMBDA__ENDPOINT_URL": server,
        "GPU_TRACKER_LAMBDA__API_KEY": "test-key",
        "GPU_TRACKER_RUNPOD__ENDPOINT_URL": server,
        "GPU_TRACKER_RUNPOD__API_KEY": "test-key",
    }
    args = [a for p in providers for a in ("--provider", p)]
    proc = cli("collect", "--no-hooks", *args, extra_env=env)
    assert proc.returncode == 0, proc.stderr


def rows(cli: Run, *args: str) -> list[dict[str, Any]]:
    proc = cli(*args, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_offers_show_and_filter_availability(
    cli: Run, server: str, bodies: dict[tuple[str, str], bytes]
) -> None:
    collect(cli, server, "lambda", "runpod")
    every = rows(cli, "offers")
    runpod = {
        (r["instance_type"], r["pricing"], r["offering_class"]): r["availability"]
        for r in every
        if r["provider"] == "runpod"
    }
    # stockStatus High, availableGpuCounts [1, 2, 4]: Secure Cloud on-demand 8x unavailable
    assert runpod[("8x NVIDIA RTX A4000", "on_demand", "secure")] == "unavailable"
    assert runpod[("2x NVIDIA RTX A4000", "on_demand", "secure")] == "available"
    assert runpod[("2x NVIDIA RTX A4000", "on_demand", "community")] == "unknown"
    available = rows(cli, "offers", "--available", "--provider", "runpod")
    assert sorted(r["instance_type"] for r in available) == [
        "1x NVIDIA RTX A4000",
        "2x NVIDIA RTX A4000",
        "4x NVIDIA RTX A4000",
    ]
    csv_out = cli("offers", "--provider", "lambda", "--format", "csv").stdout.splitlines()
    assert "availability" in csv_out[0].split(",")
    assert all(",available," in line for line in csv_out[1:]) and len(csv_out) == 1 + 3

    # Lambda's 8x H100 runs out of capacity in us-west-1, then the recommender skips it
    changed = json.loads(json.dumps(LAMBDA))
    changed["data"]["gpu_8x_h100_sxm5gdr"]["regions_with_capacity_available"] = []
    bodies[("GET", "/api/v1/instance-types")] = json.dumps(changed).encode()
    collect(cli, server, "lambda")
    key = ("--provider", "lambda", "--instance-type", "gpu_8x_h100_sxm5gdr", "--region")
    history = rows(cli, "history", *key, "us-west-1", "--availability")
    assert [(h["availability"], h["ended_at"] is None) for h in history] == [
        ("available", False),
        ("unavailable", True),
    ]
    # --at: the interval in force then. The instant the first interval began lies inside
    # it (first_seen <= at < ended_at); with both collects in one process they can fall
    # within the same second, so a time cut to whole seconds could precede it.
    at = history[0]["first_seen"]
    at_first = rows(cli, "history", *key, "us-west-1", "--availability", "--at", at)
    assert [h["availability"] for h in at_first] == ["available"]
    assert len(rows(cli, "history", *key, "us-west-1")) == 1  # one price interval still
    assert [r["instance_type"] for r in rows(cli, "offers", "--available", "-p", "lambda")] == [
        "gpu_1x_a100_sxm4",
        "gpu_1x_a100_sxm4",
    ]

    ranked = cli("recommend", "-P", "llm-7b-lora", "-p", "lambda", "--format", "json")
    assert ranked.returncode == 0, ranked.stderr
    assert "skipped 1 offer(s) the provider reported unavailable" in ranked.stderr
    assert {r["instance_type"] for r in json.loads(ranked.stdout)} == {"gpu_1x_a100_sxm4"}
    table = cli("recommend", "-P", "llm-7b-lora", "-p", "lambda", extra_env={"COLUMNS": "300"})
    assert "1 skipped as unavailable" in table.stdout
    included = rows(cli, "recommend", "-P", "llm-7b-lora", "-p", "lambda", "--include-unavailable")
    assert "gpu_8x_h100_sxm5gdr" in {r["instance_type"] for r in included}
