"""Provider text is escaped for each medium: what arrives at a real local Slack webhook
receiver and at aiosmtpd when a price sheet's instance types carry mentions, links
and markup. Driven through the real ``gpu-tracker import``."""

from __future__ import annotations

from email import message_from_bytes
from email.policy import default
from pathlib import Path

from tests.alerts.conftest import SlackServer, SmtpServer
from tests.alerts.test_cli import HEADER, setup  # noqa: F401  (the fixture)
from tests.conftest import Run

HOSTILE = [
    "<!channel> gpu_1x_h200 & co",
    "<@U123>",
    "<https://evil|click>",
    "<script>alert(1)</script>",
]


def sheet(path: Path, price: str) -> Path:
    rows = [f"lambda,{name},us-east-1,,on_demand,H200,1,{price},USD" for name in HOSTILE]
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    return path


def test_mentions_links_and_markup_arrive_as_text(
    setup: tuple[Run, dict[str, str]],  # noqa: F811
    tmp_path: Path,
    slack: SlackServer,
    smtp: SmtpServer,
) -> None:
    run, env = setup
    path = tmp_path / "hostile.csv"
    assert run("import", str(sheet(path, "4.00")), extra_env=env).returncode == 0
    # 4.00 → 3.00: -25 % for each of the four, over the rules' 10 %.
    second = run("import", str(sheet(path, "3.00")), extra_env=env)
    assert second.returncode == 0, second.stderr
    (post,) = slack.posts
    sections = [b["text"]["text"] for b in post["json"]["blocks"] if b["type"] == "section"]
    # Same size: in alert (sheet row) order.
    assert sections == [
        "*Price drops*\n"
        "• 1× H200 lambda &lt;!channel&gt; gpu_1x_h200 &amp; co (us-east-1, on-demand): "
        "4.00 → 3.00 USD/h (-25 %)\n"
        "• 1× H200 lambda &lt;@U123&gt; (us-east-1, on-demand): 4.00 → 3.00 USD/h (-25 %)\n"
        "• 1× H200 lambda &lt;https://evil|click&gt; (us-east-1, on-demand): "
        "4.00 → 3.00 USD/h (-25 %)\n"
        "• 1× H200 lambda &lt;script&gt;alert(1)&lt;/script&gt; (us-east-1, on-demand): "
        "4.00 → 3.00 USD/h (-25 %)"
    ]
    # No mrkdwn text anywhere (sections, context, the notification text) holds a '<'.
    context = post["json"]["blocks"][-1]["elements"][0]["text"]
    assert "<" not in context + post["json"]["text"] + "".join(sections)

    (message,) = smtp.messages
    mail = message_from_bytes(message["content"], policy=default)
    plain = mail.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    html = mail.get_body(("html",)).get_content()  # type: ignore[union-attr]
    # The text part stays plain: the names as the sheet wrote them.
    for name in HOSTILE:
        assert f"- 1× H200 lambda {name} (us-east-1, on-demand)" in plain
    # The HTML part: each escaped, none left as markup.
    assert (
        "<li>1× H200 lambda &lt;script&gt;alert(1)&lt;/script&gt; (us-east-1, on-demand): "
        "4.00 → 3.00 USD/h (-25 %)</li>" in html
    )
    assert "<li>1× H200 lambda &lt;!channel&gt; gpu_1x_h200 &amp; co (us-east-1" in html
    assert "<script>" not in html and "<@U123>" not in html and "<https://evil" not in html
