"""The dashboard's alerts page shows each alert as the line Slack and email show."""

from __future__ import annotations

import html
from pathlib import Path

import httpx

from tests.alerts.conftest import SlackServer, SmtpServer
from tests.alerts.test_cli import setup  # noqa: F401  (the fixture)
from tests.alerts.test_escaping import sheet
from tests.conftest import Run
from tests.web.conftest import serve
from tracker.settings import Settings
from tracker.store.engine import make_engine


def test_the_alerts_page_shows_the_slack_lines_escaped_for_html(
    setup: tuple[Run, dict[str, str]],  # noqa: F811
    tmp_path: Path,
    slack: SlackServer,
    smtp: SmtpServer,
) -> None:
    run, env = setup
    path = tmp_path / "hostile.csv"
    assert run("import", str(sheet(path, "4.00")), extra_env=env).returncode == 0
    assert run("import", str(sheet(path, "3.00")), extra_env=env).returncode == 0
    (post,) = slack.posts
    slack_lines = [
        line.removeprefix("• ")
        for b in post["json"]["blocks"]
        if b["type"] == "section"
        for line in b["text"]["text"].split("\n")
        if line.startswith("• ")
    ]
    assert len(slack_lines) == 4
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    engine = make_engine(url)
    server = serve(Settings(database_url=url), engine)
    try:
        page = httpx.get(f"{server.url}/alerts", timeout=30).text
    finally:
        server.stop()
        engine.dispose()
    cells = [c.split("</td>")[0] for c in page.split('<td class="message">')[1:]]
    # One row per alert and channel (email and slack): each line twice, newest first.
    # Slack's escaping (&amp; &lt; &gt;) is HTML's for these names, quotes aside.
    assert sorted(set(cells)) == sorted(slack_lines)
    assert len(cells) == 8
    assert (
        html.escape(
            "1× H200 lambda <script>alert(1)</script> (us-east-1, on-demand): "
            "4.00 → 3.00 USD/h (-25 %)",
            quote=True,
        )
        in cells
    )
    assert "<script>" not in page.split("<tbody>")[1]
