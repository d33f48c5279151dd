"""What a newcomer sees in Chromium (issue 41): a fresh store's charts, the plan page's
money and bars, and tables at 1,366 px and on a 390 px phone.

Same browser set-up as tests/web/test_browser.py (Debian's chromium and chromedriver,
SE_OFFLINE, Chrome's mobile emulation for the phone). Two stores of their own: a
fresh one holding a single collection made just now, and the plan sheet of
tests/cli/test_plan_cli.py (whose hand-worked totals tests/web/test_plan_web.py checks).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.cli.test_plan_cli import OFFER_SHEET, SERVICE_SHEET
from tests.conftest import cli_runner
from tests.web.conftest import Site, serve
from tests.web.store import Beta, beta_offers
from tests.web.test_browser import DESKTOP, PHONE, SCREENSHOTS, sideways, start_chromium
from tracker.collect import run_collector
from tracker.settings import Settings
from tracker.store import migrate
from tracker.store.engine import make_engine

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402

PLAN = {
    "gpu": "H100",
    "steady_gpus": "16",
    "burst_gpu_hours": "1000",
    "current_provider": "lambda",
}
"""No storage, egress or migration asked for: those parts are exactly zero."""


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    driver = start_chromium(mobile=False)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def phone() -> Iterator[WebDriver]:
    driver = start_chromium(mobile=True)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def fresh_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Site, datetime]]:
    """A store right after its first collection: beta's four offers, seen once, now."""
    url = f"sqlite:///{tmp_path_factory.mktemp('fresh') / 'tracker.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    settings = Settings(database_url=url)
    collected = datetime.now(UTC).replace(microsecond=0)
    assert run_collector(engine, Beta(beta_offers()), settings, now=collected).ok
    server = serve(settings, engine)
    yield Site(server.url, engine, settings, url), collected
    server.stop()
    engine.dispose()


@pytest.fixture(scope="module")
def plan_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("plan-browser")
    url = f"sqlite:///{folder / 'tracker.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    cli = cli_runner(url, folder)
    for name, text in (("offers.csv", OFFER_SHEET), ("services.csv", SERVICE_SHEET)):
        (folder / name).write_text(text)
        assert cli("import", str(folder / name)).returncode == 0
    settings = Settings(database_url=url, fx_rates={"EUR": Decimal("1.05")})
    server = serve(settings, engine)
    yield Site(server.url, engine, settings, url)
    server.stop()
    engine.dispose()


def _iso(text: str | None) -> datetime:
    assert text
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_fresh_store_draws_its_price_as_a_point_at_now(
    fresh_site: tuple[Site, datetime], browser: WebDriver
) -> None:
    """Right after the first collection the GPU page's axis ran an hour into the
    future and the price, seen once, drew nothing."""
    site, collected = fresh_site
    browser.set_window_size(DESKTOP, 900)
    before = datetime.now(UTC).replace(microsecond=0)
    browser.get(site.url + "/gpu?name=H100-SXM")
    after = datetime.now(UTC) + timedelta(seconds=1)
    browser.save_screenshot(str(SCREENSHOTS / "gpu-fresh.png"))
    chart = browser.find_element(By.CSS_SELECTOR, "svg.chart")
    end = _iso(chart.get_attribute("data-end"))
    assert before <= end <= after  # the axis ends at now, not an hour later
    assert _iso(chart.get_attribute("data-start")) == end - timedelta(hours=1)
    # beta.h100: on-demand 3.60 and spot 2.00, one GPU each, seen once at `collected`
    series = {
        s.get_attribute("data-name"): json.loads(s.get_attribute("data-points") or "")
        for s in chart.find_elements(By.CSS_SELECTOR, "g.series")
    }
    assert {name: points[-1][2] for name, points in series.items()} == {
        "on-demand": "3.6",
        "spot": "2",
    }
    for name in series:
        dot = chart.find_element(By.CSS_SELECTOR, f'g.series[data-name="{name}"] circle')
        assert dot.is_displayed() and dot.size["width"] > 0  # drawn, not a zero-length line
        # at the axis's right end: the plot's right edge is 16 of 760 units from the box's
        box = chart.rect
        right = dot.rect["x"] + dot.rect["width"] / 2
        assert abs(right - (box["x"] + box["width"] * 744 / 760)) < 3, name
    note = browser.find_element(By.CSS_SELECTOR, "figure .chart-note")
    assert note.is_displayed()
    assert note.text.startswith("Too little data for a history yet: prices seen since")
    # since the chart's first point: the price in force at the page's now (the
    # collection's minute, or the next one if the clock turned between the two)
    minutes = {t.strftime("%Y-%m-%d %H:%M UTC") for t in (collected, before, end)}
    assert any(m in note.text for m in minutes), note.text


def test_a_fresh_offer_page_ends_at_now_and_says_it_has_little_data(
    fresh_site: tuple[Site, datetime], browser: WebDriver
) -> None:
    site, _ = fresh_site
    before = datetime.now(UTC).replace(microsecond=0)
    browser.get(site.url + "/offer?provider=beta&instance_type=beta.h100&region=eu-west-1")
    chart = browser.find_element(By.CSS_SELECTOR, "svg.chart")
    end = _iso(chart.get_attribute("data-end"))
    assert before <= end <= datetime.now(UTC) + timedelta(seconds=1)
    assert len(chart.find_elements(By.CSS_SELECTOR, "g.series circle")) == 2  # on-demand, spot
    assert browser.find_element(By.CSS_SELECTOR, ".chart-note").is_displayed()


def _plan_url(site: Site) -> str:
    return f"{site.url}/plan?{urlencode(PLAN)}"


def test_the_plan_page_writes_zero_money_as_cents(plan_site: Site, browser: WebDriver) -> None:
    browser.set_window_size(DESKTOP, 900)
    browser.get(_plan_url(plan_site))
    browser.save_screenshot(str(SCREENSHOTS / "plan.png"))
    head = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#plans thead th")]
    rows = browser.find_elements(By.CSS_SELECTOR, "#plans tbody tr")
    assert rows
    for row in rows:
        cells = dict(
            zip(head, [td.text for td in row.find_elements(By.TAG_NAME, "td")], strict=True)
        )
        # nothing stored or moved was asked for: storage, egress and migration are 0,
        # written as the formatting module writes an exact zero (it was "0.000")
        assert (cells["storage"], cells["egress"], cells["migration"]) == ("0.00",) * 3


def test_the_plan_bars_never_cut_a_label(plan_site: Site, browser: WebDriver) -> None:
    browser.set_window_size(DESKTOP, 900)
    browser.get(_plan_url(plan_site))
    rows = browser.find_elements(By.CSS_SELECTOR, "#plans tbody tr")
    labels = browser.find_elements(By.CSS_SELECTOR, ".plan-bars .plan-label")
    assert len(labels) == len(rows)
    # OFFER_SHEET's lambda gpu_8x_h100_sxm5 us-east-1: the label that was clipped
    assert any(label.text == "lambda gpu_8x_h100_sxm5 us-east-1" for label in labels)
    for label in labels:
        assert browser.execute_script(
            "const e = arguments[0], box = e.closest('main').getBoundingClientRect();"
            "const r = e.getBoundingClientRect();"
            "return e.scrollWidth <= e.clientWidth && r.left >= box.left && r.right <= box.right",
            label,
        ), label.text


PAGES = ("/", "/offers", "/compare", "/profiles")


@pytest.mark.parametrize("device", ["browser", "phone"])
def test_the_plan_table_fits_or_scrolls_inside_its_box(
    plan_site: Site, device: str, request: pytest.FixtureRequest
) -> None:
    driver: WebDriver = request.getfixturevalue(device)
    if device == "browser":
        driver.set_window_size(DESKTOP, 900)
    driver.get(_plan_url(plan_site))
    assert sideways(driver) == 0  # the page never scrolls sideways
    table = driver.find_element(By.ID, "plans")
    inside = driver.execute_script(
        "const t = arguments[0].getBoundingClientRect();"
        "return t.right <= document.documentElement.clientWidth && t.left >= 0",
        table,
    )
    assert inside  # the table's box is inside the window; wider content scrolls in it
    if device == "browser":  # at 1,366 px the fifteen columns fit: the total is in sight
        widths = driver.execute_script(
            "return [arguments[0].scrollWidth, arguments[0].clientWidth]", table
        )
        assert widths[0] <= widths[1], widths
    if device == "phone":
        driver.save_screenshot(str(SCREENSHOTS / "plan-phone.png"))


def _first_screen(driver: WebDriver, table: object) -> dict[str, bool]:
    """Whether the table's identifying (th.key) and price (th.price) headers are wholly
    inside the table's visible box, and on top there (nothing drawn over them)."""
    return dict(
        driver.execute_script(
            """
            const table = arguments[0], box = table.getBoundingClientRect();
            const right = Math.min(box.right, document.documentElement.clientWidth);
            const seen = (cell) => {
                const r = cell.getBoundingClientRect();
                const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
                // wholly in sight, on top, and not squeezed to a letter a line
                return r.left >= box.left - 1 && r.right <= right + 1 && cell.contains(hit)
                    && r.width >= 64;
            };
            return {key: seen(table.querySelector('thead th.key')),
                    price: seen(table.querySelector('thead th.price'))};
            """,
            table,
        )
    )


def test_on_a_phone_each_table_shows_what_a_row_is_and_its_price_first(
    plan_site: Site, fresh_site: tuple[Site, datetime], phone: WebDriver
) -> None:
    """At 390 px the Offers table showed provider, instance and half a region: the price
    was off-screen. Now the price column stays at the right edge of the table's box."""
    site, _ = fresh_site
    urls = [site.url + p for p in PAGES] + [_plan_url(plan_site)]
    checked = 0
    for url in urls:
        phone.get(url)
        assert phone.execute_script("return window.innerWidth") == PHONE
        for table in phone.find_elements(By.CSS_SELECTOR, "table:has(thead th.price)"):
            phone.execute_script("arguments[0].scrollIntoView()", table)
            assert _first_screen(phone, table) == {"key": True, "price": True}, url
            # scrolled to its far end, the identifying column is still in sight
            phone.execute_script("arguments[0].scrollLeft = arguments[0].scrollWidth", table)
            assert _first_screen(phone, table)["key"], url
            checked += 1
    phone.get(site.url + "/offers")
    phone.save_screenshot(str(SCREENSHOTS / "offers-phone.png"))
    # Overview, Offers, Compare, one ranking a profile, and the plans
    assert checked >= 5


def test_the_screenshots_were_written() -> None:
    for name in ("gpu-fresh", "plan"):
        path = Path(SCREENSHOTS / f"{name}.png")
        assert path.exists() and path.stat().st_size > 0
