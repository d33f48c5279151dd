"""A spot discount and new hardware through the real ``gpu-tracker import``, as they
arrive at a local Slack webhook receiver and aiosmtpd (expected messages by hand)."""

from __future__ import annotations

from email import message_from_bytes
from email.policy import default
from pathlib import Path

from tests.alerts.conftest import SlackServer, SmtpServer
from tests.alerts.test_cli import HEADER, setup  # noqa: F401  (the fixture)
from tests.conftest import Run

RULES = """
[[rules]]
name = "deep-spot"
type = "spot_discount"
threshold_percent = 60

[[rules]]
name = "new"
type = "new_hardware"
"""


def test_a_spot_discount_and_a_new_machine_read_in_their_own_terms(
    setup: tuple[Run, dict[str, str]],  # noqa: F811
    tmp_path: Path,
    slack: SlackServer,
    smtp: SmtpServer,
) -> None:
    run, env = setup
    Path(env["GPU_TRACKER_ALERTS__RULES_FILE"]).write_text(RULES)
    path = tmp_path / "deals.csv"
    p5 = [
        "aws,p5.48xlarge,us-east-1,,on_demand,H100,8,55.04,USD",
        "aws,p5.48xlarge,us-east-1,,spot,H100,8,{spot},USD",
    ]
    path.write_text("\n".join([HEADER, *p5]).format(spot="50.00") + "\n")
    assert run("import", str(path), extra_env=env).returncode == 0  # seeds
    b200 = "lambda,gpu_8x_b200,us-east-3,,on_demand,B200,8,39.92,USD"
    path.write_text("\n".join([HEADER, *p5, b200]).format(spot="16.512") + "\n")
    second = run("import", str(path), extra_env=env)
    assert second.returncode == 0, second.stderr
    (post,) = slack.posts
    blocks = post["json"]["blocks"]
    assert blocks[0]["text"]["text"] == "[gpu-tracker] new GPU model B200, 1 spot discount"
    # Spot: (55.04 - 16.512) / 55.04 = 0.70; 16.512 reads 16.51. The B200 machine is new
    # three ways (GPU model, instance type, lambda's first region): three alerts, one line.
    assert blocks[1]["text"]["text"] == (
        "*Ranking changes and new GPU models*\n"
        "• new GPU model B200: 8× B200 at lambda gpu_8x_b200 (us-east-3, on-demand); "
        "also a new instance type and a new region\n"
        "*Spot discounts*\n"
        "• 8× H100-SXM spot 16.51 USD/h, 70 % below on-demand 55.04 (aws p5.48xlarge, "
        "us-east-1)"
    )
    assert blocks[2]["elements"][0]["text"] == "alert ids 1-4"
    mail = message_from_bytes(smtp.messages[0]["content"], policy=default)
    assert mail["Subject"] == "[gpu-tracker] new GPU model B200, 1 spot discount"
    text = mail.get_body(("plain",)).get_content().replace("\r\n", "\n")  # type: ignore[union-attr]
    assert text == (
        "new GPU model B200, 1 spot discount\n\n"
        "Ranking changes and new GPU models\n"
        "- new GPU model B200: 8× B200 at lambda gpu_8x_b200 (us-east-3, on-demand); "
        "also a new instance type and a new region\n\n"
        "Spot discounts\n"
        "- 8× H100-SXM spot 16.51 USD/h, 70 % below on-demand 55.04 (aws p5.48xlarge, "
        "us-east-1)\n\n"
        "alert ids 1-4\n"
    )
