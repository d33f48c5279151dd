"""End to end through the real ``gpu-tracker`` entry point, with local Slack and SMTP."""

from __future__ import annotations

import json
from email import message_from_bytes
from email.policy import default
from pathlib import Path

import pytest

from tests.alerts.conftest import SlackServer, SmtpServer
from tests.conftest import Run, cli_runner

HEADER = "provider,instance_type,region,zone,pricing,gpu_model,gpu_count,price_per_hour,currency"
RULES = """
[[rules]]
name = "drops"
type = "price_change"
threshold_percent = 10
"""


def sheet(path: Path, p5_price: str) -> Path:
    path.write_text(
        f"{HEADER}\n"
        "aws,p4d.24xlarge,us-east-1,,on_demand,A100,8,32.7726,USD\n"
        f"aws,p5.48xlarge,us-east-1,,on_demand,H100,8,{p5_price},USD\n"
    )
    return path


@pytest.fixture
def setup(tmp_path: Path, slack: SlackServer, smtp: SmtpServer) -> tuple[Run, dict[str, str]]:
    rules = tmp_path / "alerts.toml"
    rules.write_text(RULES)
    env = {
        "GPU_TRACKER_ALERTS__RULES_FILE": str(rules),
        "GPU_TRACKER_ALERTS__SLACK_WEBHOOK_URL": slack.url,
        "GPU_TRACKER_ALERTS__SMTP_HOST": "127.0.0.1",
        "GPU_TRACKER_ALERTS__SMTP_PORT": str(smtp.port),
        "GPU_TRACKER_ALERTS__SMTP_TLS": "none",
        "GPU_TRACKER_ALERTS__EMAIL_FROM": "tracker@example.com",
        "GPU_TRACKER_ALERTS__EMAIL_TO": "team@example.com",
    }
    run = cli_runner(f"sqlite:///{tmp_path / 'cli.db'}", tmp_path)
    return run, env


def test_two_imports_with_a_20_percent_drop_send_one_post_and_one_email(
    setup: tuple[Run, dict[str, str]], tmp_path: Path, slack: SlackServer, smtp: SmtpServer
) -> None:
    run, env = setup
    path = tmp_path / "deals.csv"
    first = run("import", str(sheet(path, "55.04")), extra_env=env)
    assert first.returncode == 0, first.stderr
    assert slack.posts == [] and smtp.messages == []  # the first import seeds
    # 55.04 × 0.8 = 44.032: a 20 % drop, over the 10 % threshold.
    second = run("import", str(sheet(path, "44.032")), extra_env=env)
    assert second.returncode == 0, second.stderr
    assert len(slack.posts) == 1 and len(smtp.messages) == 1
    blocks = slack.posts[0]["json"]["blocks"]
    assert blocks[0]["text"]["text"] == "[gpu-tracker] 1 price drop"
    # 44.032 reads 44.03 (cents from 1 up); the H100 of the sheet is an H100-SXM, 8 of them.
    assert blocks[1]["text"]["text"] == (
        "*Price drops*\n• 8× H100-SXM aws p5.48xlarge (us-east-1, on-demand): "
        "55.04 → 44.03 USD/h (-20 %)"
    )
    mail = message_from_bytes(smtp.messages[0]["content"], policy=default)
    assert mail["Subject"] == "[gpu-tracker] 1 price drop"
    assert smtp.messages[0]["rcpt_tos"] == ["team@example.com"]
    assert "aws p5.48xlarge" in mail.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    third = run("import", str(sheet(path, "44.032")), extra_env=env)
    assert third.returncode == 0, third.stderr
    assert len(slack.posts) == 1 and len(smtp.messages) == 1
    listed = run("alerts", "list", "--format", "json", extra_env=env)
    rows = json.loads(listed.stdout)
    assert [(r["channel"], r["status"]) for r in rows] == [("email", "sent"), ("slack", "sent")]
    assert slack.url not in first.stderr + second.stderr + third.stderr + listed.stdout


def test_no_notify_queues_and_alerts_send_delivers(
    setup: tuple[Run, dict[str, str]], tmp_path: Path, slack: SlackServer, smtp: SmtpServer
) -> None:
    run, env = setup
    path = tmp_path / "deals.csv"
    assert run("import", str(sheet(path, "55.04")), extra_env=env).returncode == 0
    quiet = run("import", "--no-notify", str(sheet(path, "44.032")), extra_env=env)
    assert quiet.returncode == 0, quiet.stderr
    assert slack.posts == [] and smtp.messages == []
    sent = run("alerts", "send", extra_env=env)
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout.splitlines() == ["email: sent 1 alert(s)", "slack: sent 1 alert(s)"]
    assert len(slack.posts) == 1 and len(smtp.messages) == 1
    assert run("alerts", "send", extra_env=env).stdout.strip() == "nothing due"


def test_alerts_test_reports_success_or_the_exact_failure(
    setup: tuple[Run, dict[str, str]], slack: SlackServer
) -> None:
    run, env = setup
    ok = run("alerts", "test", "--channel", "slack", extra_env=env)
    assert ok.returncode == 0 and ok.stdout.strip() == "slack: ok, test message accepted"
    assert slack.posts[0]["json"]["blocks"][0]["text"]["text"] == (
        "[gpu-tracker] test message: this channel works"
    )
    # Under no heading: the test message is not an alert of any kind.
    assert slack.posts[0]["json"]["blocks"][1]["text"]["text"] == "• a test from gpu-tracker"
    slack.answer((404, "no_service", 0.0))
    bad = run("alerts", "test", "--channel", "slack", extra_env=env)
    assert bad.returncode == 1
    assert bad.stderr.strip() == (
        "gpu-tracker: error: slack: test failed: slack: HTTP 404 no_service: "
        "the webhook was revoked or its URL is wrong"
    )
    unknown = run("alerts", "test", "--channel", "teams", extra_env=env)
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == (
        "gpu-tracker: error: channel 'teams' is not configured (configured: email, slack)"
    )


def test_a_bad_rules_file_fails_rules_and_serve_with_the_same_line(
    setup: tuple[Run, dict[str, str]], tmp_path: Path
) -> None:
    run, env = setup
    rules = Path(env["GPU_TRACKER_ALERTS__RULES_FILE"])
    good = run("alerts", "rules", "--format", "json", extra_env=env)
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout) == [
        {
            "name": "drops",
            "type": "price_change",
            "threshold_percent": "10",
            "filters": "",
            "channels": "email,slack",
            "cooldown": "",
        }
    ]
    rules.write_text(RULES + 'channels = ["pagerduty"]\n')
    expected = (
        f"gpu-tracker: error: {rules}: rule 'drops': channels: 'pagerduty' is not "
        "configured (configured: email, slack)"
    )
    checked = run("alerts", "rules", extra_env=env)
    assert (checked.returncode, checked.stderr.strip()) == (2, expected)
    served = run("serve", "--once", "--http", "", extra_env=env)
    assert (served.returncode, served.stderr.strip()) == (2, expected)
