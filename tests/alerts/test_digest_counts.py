"""Digests that count right: whole lines, Slack's limits kept, "and N more" exact.

The Block Kit payloads are checked with slack_sdk's own block models (``Block.parse``
then ``validate_json``, which raises on a section over 3,000 characters or a header
over 150), besides the counts worked out here by hand.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from tracker.alerts.channels.slack import slack_payload
from tracker.alerts.digest import build_digest
from tracker.alerts.render import slack_escape
from tracker.store.outbox import DueDelivery

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def due(alert_id: int, kind: str, **details: Any) -> DueDelivery:
    return DueDelivery(
        alert_id, alert_id, "slack", 0, "r", kind, f"s{alert_id}", f"title {alert_id}",
        {"kind": kind, **details}, T0,
    )  # fmt: skip


def price(alert_id: int, pct: str, instance: str = "") -> DueDelivery:
    return due(
        alert_id, "price_change", provider="aws", instance_type=instance or f"p{alert_id}",
        region="us-east-1", pricing="on_demand", gpu_count="8", gpu_model="H100-SXM",
        old="10.00", new="9.00", currency="USD", change_pct=pct,
    )  # fmt: skip


def leader(alert_id: int) -> DueDelivery:
    return due(
        alert_id, "ranking_change", profile="llm-7b-lora", event="leader", provider="gcp",
        instance_type="a2-ultragpu-1g", region="us-central1", pricing="on_demand",
        gpu_count="1", gpu_model="A100-80GB", job_cost_usd="3.02", old="4.13", new="3.02",
        currency="USD",
        previous={"provider": "aws", "instance_type": "p4d.24xlarge", "region": "us-east-1",
                  "pricing": "on_demand", "gpu_count": "8", "gpu_model": "A100-40GB"},
    )  # fmt: skip


def new_b200(first_id: int) -> list[DueDelivery]:
    """One new machine, new in two ways: two alerts, one line."""
    base = {
        "provider": "lambda", "instance_type": "gpu_8x_b200", "region": "us-east-3",
        "pricing": "on_demand", "gpu_count": "8", "gpu_model": "B200",
        "events": ["gpu_model", "instance_type"],
    }  # fmt: skip
    return [
        due(first_id, "new_hardware", event="gpu_model", **base),
        due(first_id + 1, "new_hardware", event="instance_type", **base),
    ]


def mixed(n_prices: int) -> list[DueDelivery]:
    """A leader, a new B200 (2 alerts), then ``n_prices`` changes: alternately a drop and
    a rise, sizes 0.01 % apart (id 10 + i has size (i + 1) × 0.01 %)."""
    out = [leader(1), *new_b200(2)]
    for i in range(n_prices):
        size = f"{(i + 1) / 100:.2f}"
        out.append(price(10 + i, f"-{size}" if i % 2 == 0 else size))
    return out


def bullets(payload: dict[str, Any]) -> list[str]:
    return [
        line
        for b in payload["blocks"]
        if b["type"] == "section"
        for line in b["text"]["text"].split("\n")
        if line.startswith("• ")
    ]


def check_slack_limits(payload: dict[str, Any]) -> None:
    blocks = payload["blocks"]
    assert len(blocks) <= 50
    for block in blocks:
        Block.parse(block).validate_json()  # type: ignore[union-attr]  # raises past a limit
        if block["type"] == "section":
            assert len(block["text"]["text"]) <= 3000


def test_the_issue_example_leader_and_new_gpu_first_then_drops_by_size() -> None:
    # 165 drops and 165 rises, a leader change and one new B200 machine (2 alerts):
    # 1 + 2 + 330 = 333 alerts.
    alerts = mixed(330)
    digest = build_digest(alerts, rows=15)
    assert digest.subject == (
        "[gpu-tracker] best for llm-7b-lora now gcp a2-ultragpu-1g, new GPU model B200, "
        "165 price drops, 165 price rises"
    )
    shown = [i.line.text for i in digest.shown]
    assert shown[0] == (
        "llm-7b-lora: best offer now gcp a2-ultragpu-1g (1× A100-80GB, us-central1, "
        "on-demand) at 3.02 USD per job, was aws p4d.24xlarge (8× A100-40GB, us-east-1, "
        "on-demand) at 4.13 USD"
    )
    assert shown[1] == (
        "new GPU model B200: 8× B200 at lambda gpu_8x_b200 (us-east-3, on-demand); "
        "also a new instance type"
    )
    # The 13 largest drops: i = 328, 326, … (even i, size (i + 1) / 100): 3.29 %, 3.27 % …
    assert shown[2] == ("8× H100-SXM aws p338 (us-east-1, on-demand): 10.00 → 9.00 USD/h (-3.3 %)")
    assert [i.alert_ids[0] for i in digest.shown[2:]] == [10 + i for i in range(328, 302, -2)]
    # Shown: 15 lines for 1 + 2 + 13 = 16 alerts; 333 - 16 = 317 more.
    assert digest.more == 317
    payload = slack_payload(digest)
    check_slack_limits(payload)
    assert len(bullets(payload)) == 15
    assert payload["blocks"][-1]["elements"][0]["text"] == "alert ids 1-3, 10-339 · and 317 more"


@pytest.mark.parametrize("n_prices", [330, 1000, 5000])
@pytest.mark.parametrize("rows", [1, 15, 50, 200])
def test_every_line_whole_limits_kept_and_the_rest_counted(n_prices: int, rows: int) -> None:
    alerts = mixed(n_prices)
    digest = build_digest(alerts, rows=rows)
    payload = slack_payload(digest)
    check_slack_limits(payload)
    lines = bullets(payload)
    # Short lines: every shown line fits, whole, in order.
    assert lines == [f"• {slack_escape(i.line.text)}" for i in digest.shown]
    assert len(lines) == rows
    # Alerts behind the shown lines: the B200 line stands for 2 (when shown).
    covered = rows + (1 if rows >= 2 else 0)
    more = len(alerts) - covered  # = 3 + n_prices - covered
    assert payload["blocks"][-1]["elements"][0]["text"].endswith(f" · and {more} more")
    # Drops before rises, each by size.
    sizes = [i.line.size for i in digest.items if i.line.label == "price drop"]
    assert sizes == sorted(sizes, reverse=True) and len(sizes) == n_prices // 2
    groups = [i.line.group for i in digest.items]
    assert groups == sorted(groups)


def test_a_section_is_cut_before_a_line_that_would_pass_3000_characters() -> None:
    # Instance names of 100 characters with 20 '&' (provider text): 60 + 100 characters
    # plain, each '&' escaped to '&amp;' (+4): about 240 characters a bullet, so 12 to
    # a section, never a line split across two.
    name = "x&xxx" * 20
    alerts = [price(i, f"-{i}", instance=f"{name}{i:03d}") for i in range(1, 201)]
    payload = slack_payload(build_digest(alerts, rows=200))
    check_slack_limits(payload)
    sections = [b["text"]["text"] for b in payload["blocks"] if b["type"] == "section"]
    assert len(sections) > 1
    for text in sections:
        for line in text.split("\n")[1 if text.startswith("*") else 0 :]:
            assert re.fullmatch(r"• 8× H100-SXM aws (x&amp;xxx){20}\d{3} \(.*\)", line), line
    assert len(bullets(payload)) == 200
    assert payload["blocks"][-1]["elements"][0]["text"] == "alert ids 1-200"


def test_past_50_blocks_the_lines_left_are_counted_exactly() -> None:
    # Lines of 500 characters full of '&' escape to about 2,400: one per section, so a
    # message holds 48 sections (50 blocks less the header and the context).
    name = "&" * 460
    alerts = [price(i, f"-{i % 90 + 1}", instance=f"{name}{i:03d}") for i in range(1, 331)]
    digest = build_digest(alerts, rows=200)
    payload = slack_payload(digest)
    check_slack_limits(payload)
    assert len(payload["blocks"]) == 50
    assert len(bullets(payload)) == 48
    # 330 alerts, 48 shown: 282 more.
    assert payload["blocks"][-1]["elements"][0]["text"] == "alert ids 1-330 · and 282 more"


def test_ids_too_many_to_list_are_given_as_count_and_span() -> None:
    # 500 alerts with even ids 2 … 1000: "2, 4, …" would take about 2,400 characters.
    alerts = [price(i, "-20") for i in range(2, 1001, 2)]
    digest = build_digest(alerts, rows=15)
    assert digest.ids_text == "500 alerts, ids 2 to 1000"
    payload = slack_payload(digest)
    check_slack_limits(payload)
    # 500 - 15 shown = 485.
    assert payload["blocks"][-1]["elements"][0]["text"] == (
        "500 alerts, ids 2 to 1000 · and 485 more"
    )
    # A short list is given in full.
    assert build_digest(alerts[:3], rows=15).ids_text == "alert ids 2, 4, 6"


def test_a_newline_from_a_provider_stays_inside_its_line() -> None:
    leader_alert = leader(1)
    leader_alert.details["instance_type"] = "a2\nultragpu\r\n-1g"
    digest = build_digest([leader_alert, price(2, "-20", instance="p5\n• fake line")], 15)
    assert digest.subject == (
        "[gpu-tracker] best for llm-7b-lora now gcp a2 ultragpu -1g, 1 price drop"
    )
    assert [i.line.text.count("\n") for i in digest.shown] == [0, 0]
    assert digest.shown[1].line.text.startswith("8× H100-SXM aws p5 • fake line (us-east-1")
    assert len(bullets(slack_payload(digest))) == 2
