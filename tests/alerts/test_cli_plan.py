"""A saved plan's alert through the real ``gpu-tracker import``, as it arrives at a local
Slack webhook receiver (blocks validated by slack_sdk) and aiosmtpd, and as ``alerts
list`` and ``alerts rules`` show it. Figures by hand."""

from __future__ import annotations

import json
from email import message_from_bytes
from email.policy import default
from pathlib import Path

from slack_sdk.models.blocks import Block

from tests.alerts.conftest import SlackServer, SmtpServer
from tests.alerts.test_cli import HEADER, setup  # noqa: F401  (the fixture)
from tests.conftest import Run

RULES = """
[[rules]]
name = "fleet"
type = "ranking_change"
plan = "h100-fleet"
threshold_percent = 10
"""
PROFILES = """
[plans.h100-fleet]
gpu = "H100"
steady_gpus = 16
months = 36
"""
LINE = (
    "h100-fleet: best plan now aws p5.48xlarge × 2 (16× H100-SXM, us-east-1) at "
    "1,051,200.00 USD over 36 months, was lambda gpu_8x_h100_sxm5 × 2 (16× H100-SXM, "
    "us-east-1) at 1,257,235.20 USD (total -16.4 %)"
)


def sheet(path: Path, aws: str, lam: str) -> Path:
    path.write_text(
        f"{HEADER}\n"
        f"aws,p5.48xlarge,us-east-1,,on_demand,H100,8,{aws},USD\n"
        f"lambda,gpu_8x_h100_sxm5,us-east-1,,on_demand,H100,8,{lam},USD\n"
    )
    return path


def test_a_new_best_provider_for_a_saved_plan_reaches_slack_email_and_the_list(
    setup: tuple[Run, dict[str, str]],  # noqa: F811
    tmp_path: Path,
    slack: SlackServer,
    smtp: SmtpServer,
) -> None:
    run, env = setup
    Path(env["GPU_TRACKER_ALERTS__RULES_FILE"]).write_text(RULES)
    profiles = tmp_path / "profiles.toml"
    profiles.write_text(PROFILES)
    env = {**env, "GPU_TRACKER_PROFILES_PATH": str(profiles)}
    path = tmp_path / "deals.csv"
    # 16 GPUs on 8-GPU instances = 2 instances, 36 months × 730 h = 26,280 h each:
    # lambda 23.92 × 26,280 × 2 = 1,257,235.20 beats aws 55.04 × 26,280 × 2 = 2,892,902.40.
    first = run("import", str(sheet(path, "55.04", "23.92")), extra_env=env)
    assert first.returncode == 0, first.stderr
    assert slack.posts == [] and smtp.messages == []  # the first evaluation seeds
    # aws 20.00 × 26,280 × 2 = 1,051,200.00 is the best now:
    # (1,051,200 - 1,257,235.20) / 1,257,235.20 = -206,035.20 / 1,257,235.20 = -16.39 %.
    second = run("import", str(sheet(path, "20.00", "23.92")), extra_env=env)
    assert second.returncode == 0, second.stderr
    (post,) = slack.posts
    blocks = post["json"]["blocks"]
    for block in blocks:
        Block.parse(block).validate_json()  # type: ignore[union-attr]  # raises past a limit
    assert blocks[0]["text"]["text"] == "[gpu-tracker] best plan for h100-fleet now aws p5.48xlarge"
    assert blocks[1]["text"]["text"] == f"*Ranking changes and new GPU models*\n• {LINE}"
    assert blocks[2]["elements"][0]["text"] == "alert ids 1"
    mail = message_from_bytes(smtp.messages[0]["content"], policy=default)
    assert mail["Subject"] == "[gpu-tracker] best plan for h100-fleet now aws p5.48xlarge"
    text = mail.get_body(("plain",)).get_content().replace("\r\n", "\n")  # type: ignore[union-attr]
    assert f"Ranking changes and new GPU models\n- {LINE}\n" in text
    listed = json.loads(run("alerts", "list", "--format", "json", extra_env=env).stdout)
    assert {(r["channel"], r["status"], r["rule"], r["message"]) for r in listed} == {
        ("email", "sent", "fleet", LINE),
        ("slack", "sent", "fleet", LINE),
    }
    rules = json.loads(run("alerts", "rules", "--format", "json", extra_env=env).stdout)
    assert rules[0]["filters"] == "plan=h100-fleet events=leader,cost"


def test_an_unknown_plan_stops_alerts_rules_with_one_line_and_import_stores_anyway(
    setup: tuple[Run, dict[str, str]],  # noqa: F811
    tmp_path: Path,
) -> None:
    run, env = setup
    rules = Path(env["GPU_TRACKER_ALERTS__RULES_FILE"])
    rules.write_text(RULES.replace("h100-fleet", "h200-fleet"))
    profiles = tmp_path / "profiles.toml"
    profiles.write_text(PROFILES)
    env = {**env, "GPU_TRACKER_PROFILES_PATH": str(profiles)}
    line = (
        f"gpu-tracker: error: {rules}: rule 'fleet': plan: 'h200-fleet' is not a saved plan "
        "(saved: h100-fleet; [plans.NAME] in the profiles file)"
    )
    checked = run("alerts", "rules", extra_env=env)
    assert checked.returncode == 2 and checked.stderr.strip() == line
    stored = run("import", str(sheet(tmp_path / "deals.csv", "55.04", "23.92")), extra_env=env)
    assert stored.returncode == 1
    assert line.removeprefix("gpu-tracker: error: ") in stored.stderr
    offers = json.loads(run("offers", "--format", "json", extra_env=env).stdout)
    assert len(offers) == 2
