"""The dashboard in a real browser: Debian's headless Chromium driven by Selenium.

One desktop session (1366 px wide) and one phone (Chrome's mobile emulation, 390 px)
for the module. Selenium gets the distribution's chromedriver
and chromium explicitly (SE_OFFLINE: Selenium Manager never downloads anything).
Every page's screenshot goes to SCREENSHOTS; the README's picture is the overview's.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from tests.ci_postgres import in_ci
from tests.web.conftest import Site

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "build" / "screenshots" / "web"
"""Where each page's screenshot is written (build/ is not committed)."""
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

DESKTOP = 1366
PHONE = 390
"""An iPhone 14's CSS width: the narrowest screen the pages are laid out for."""


def start_chromium(mobile: bool) -> WebDriver:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        message = "chromium and chromium-driver (Debian packages) are not installed"
        if in_ci():
            pytest.fail(message + ": .ci/run installs them")
        pytest.skip(message)
    os.environ["SE_OFFLINE"] = "true"  # never let Selenium Manager reach the network
    options = Options()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        f"--window-size={DESKTOP},900",
        "--disable-dev-shm-usage",
    ):
        options.add_argument(arg)
    if mobile:
        metrics = {"width": PHONE, "height": 844, "pixelRatio": 3.0, "touch": True}
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": metrics})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return driver


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


def shot(driver: WebDriver, name: str) -> None:
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(DESKTOP, max(600, min(int(height) + 40, 2400)))
    path = SCREENSHOTS / f"{name}.png"
    assert driver.save_screenshot(str(path)) and path.stat().st_size > 0


def wait_for_url(driver: WebDriver, part: str) -> None:
    WebDriverWait(driver, 15).until(lambda d: part in d.current_url)


def cells(driver: WebDriver, table: str) -> list[list[str]]:
    rows = driver.find_elements(By.CSS_SELECTOR, f"{table} tbody tr")
    return [[td.text for td in row.find_elements(By.TAG_NAME, "td")] for row in rows]


def test_overview_shows_the_cheapest_figures_and_a_filter_narrows_it(
    site: Site, browser: WebDriver
) -> None:
    browser.get(site.url + "/")
    shot(browser, "overview")
    rows = {r[0]: r for r in cells(browser, "#overview")}
    # Per GPU-hour: H100-SXM on-demand min(beta 3.60/1, alpha 32.00/8 = 4.00) = 3.60 beta;
    # spot min(alpha 12.00/8 = 1.50, beta 2.00) = 1.50 alpha; reserved alpha 24.00/8 = 3.00;
    # discount (3.60 - 1.50) / 3.60 = 58.33 % → 58.3 %.
    # Cheapest on-demand first: L4 0.80, A100-80GB 2.20 (beta), H100-SXM 3.60.
    assert list(rows) == ["L4", "A100-80GB", "H100-SXM"]
    h100 = rows["H100-SXM"]
    assert h100[1] == "5"
    assert h100[2:6] == ["3.60 beta", "1.50 alpha", "3.00 alpha", "58.3 %"]
    assert rows["A100-80GB"][2] == "2.20 beta"  # beta 2.20 < alpha 2.50
    assert rows["L4"][2] == "0.800 beta" and rows["L4"][3] == "–"

    browser.find_element(By.NAME, "provider").send_keys("alpha")
    browser.find_element(By.CSS_SELECTOR, "form.filters button").click()
    wait_for_url(browser, "provider=alpha")
    rows = {r[0]: r for r in cells(browser, "#overview")}
    # alpha alone: no L4; H100 on-demand 32.00/8 = 4.00, discount (4.00 - 1.50)/4.00 = 62.5 %.
    assert list(rows) == ["A100-80GB", "H100-SXM"]
    assert rows["H100-SXM"][2] == "4.00 alpha" and rows["H100-SXM"][5] == "62.5 %"
    shot(browser, "overview-alpha")


def test_overview_sorts_by_a_column_in_the_browser(site: Site, browser: WebDriver) -> None:
    browser.get(site.url + "/?provider=alpha")
    browser.find_element(By.LINK_TEXT, "spot $/GPU·h").click()  # a link: no script needed
    wait_for_url(browser, "sort=spot")
    assert "provider=alpha" in browser.current_url  # the filter is kept
    # alpha: only H100-SXM has a spot price (12.00 / 8 = 1.50); A100-80GB has none: last.
    assert [r[0] for r in cells(browser, "#overview")] == ["H100-SXM", "A100-80GB"]
    browser.find_element(By.LINK_TEXT, "GPU").click()
    wait_for_url(browser, "sort=gpu")
    assert [r[0] for r in cells(browser, "#overview")] == ["A100-80GB", "H100-SXM"]


def test_gpu_page_shows_its_cheapest_offers_and_datasheet(site: Site, browser: WebDriver) -> None:
    browser.get(site.url + "/")
    browser.find_element(By.LINK_TEXT, "H100-SXM").click()
    wait_for_url(browser, "/gpu?name=H100-SXM")
    shot(browser, "gpu")
    cheapest = {r[0]: r for r in cells(browser, "#cheapest")}
    # As on the overview: on-demand beta 3.60, spot alpha 12.00/8 = 1.50, reserved 24.00/8.
    assert [cheapest[g][1] for g in ("on-demand", "spot", "reserved")] == ["3.60", "1.50", "3.00"]
    sheet = {
        row.find_element(By.TAG_NAME, "th").text: row.find_element(By.TAG_NAME, "td").text
        for row in browser.find_elements(By.CSS_SELECTOR, "#datasheet tr")
    }
    assert sheet["vram_gib"] == "80" and sheet["architecture"] == "Hopper"
    # tracker/catalog/gpus.toml: H100-SXM, 2022, 3,350 GB/s (a year has no thousands separator)
    assert sheet["year"] == "2022" and sheet["memory_bandwidth_gbs"] == "3,350"
    # The aggregate chart: one line per pricing model, each day's cheapest per GPU-hour
    # (the day-2 prices are still in force, so the last 90 days are flat at them).
    series = browser.find_elements(By.CSS_SELECTOR, "svg.chart g.series")
    last = {
        s.get_attribute("data-name"): json.loads(s.get_attribute("data-points") or "")[-1][2]
        for s in series
    }
    assert last == {"on-demand": "3.6", "spot": "1.5", "reserved 1y": "3"}


def test_alerts_page_highlights_the_failing_channel(site: Site, browser: WebDriver) -> None:
    browser.get(site.url + "/alerts")
    shot(browser, "alerts")
    assert browser.find_element(By.ID, "failing").text.startswith("Failing channels: email")
    bad = browser.find_elements(By.CSS_SELECTOR, "#alerts tr.bad")
    assert [row.find_elements(By.TAG_NAME, "td")[4].text for row in bad] == ["email", "email"]


def test_offers_page_filters_and_pages(site: Site, browser: WebDriver) -> None:
    browser.get(site.url + "/offers")
    shot(browser, "offers")
    # 4 alpha + 4 beta offers, 3 per page (web.page_size = 3 in this site).
    assert browser.find_element(By.CSS_SELECTOR, "p.count").text == "8 offers, page 1 of 3"
    # Cheapest per hour first: beta L4 0.80, beta spot 2.00, beta A100 2.20.
    assert [r[3 - 3] + " " + r[1] for r in cells(browser, "#offers")] == [
        "beta beta.l4",
        "beta beta.h100",
        "beta beta.a100",
    ]
    browser.find_element(By.CSS_SELECTOR, "a[rel=next]").click()
    wait_for_url(browser, "page=2")
    browser.get(site.url + "/offers?gpu=h100&pricing=spot&min_vram=")
    assert [r[1] for r in cells(browser, "#offers")] == ["beta.h100", "alpha.8xh100"]


def test_offer_page_draws_one_step_series_per_pricing(site: Site, browser: WebDriver) -> None:
    browser.get(site.url + "/offers?provider=alpha&gpu=H100-SXM&pricing=spot")
    browser.find_element(By.LINK_TEXT, "alpha.8xh100").click()
    wait_for_url(browser, "/offer?")
    shot(browser, "offer")
    series = browser.find_elements(By.CSS_SELECTOR, "svg.chart g.series")
    names = [s.get_attribute("data-name") for s in series]
    # alpha.8xh100 in us-east-1 is sold on-demand, spot (zone us-east-1a) and reserved 1y.
    assert sorted(names) == ["on-demand", "reserved 1y, no upfront", "spot us-east-1a"]
    spot = json.loads(series[names.index("spot us-east-1a")].get_attribute("data-points") or "")
    # Three daily runs: 16.00 on day 0, 14.00 from day 1, 12.00 from day 2 (still open:
    # in force until now, as the table says, so its line runs to today).
    assert [(p[0][:10], p[2]) for p in spot] == [
        ("2026-03-01", "16"),
        ("2026-03-02", "14"),
        ("2026-03-03", "12"),
    ]
    assert spot[0][1] == spot[1][0]  # steps: a price holds until the next one starts
    assert spot[-1][1][:10] == datetime.now(UTC).date().isoformat()
    on_demand = json.loads(series[names.index("on-demand")].get_attribute("data-points") or "")
    assert [p[2] for p in on_demand] == ["32"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "table.intervals")) == 3


def test_profile_page_lists_the_top_n_in_job_cost_order(site: Site, browser: WebDriver) -> None:
    browser.get(site.url + "/profiles?top=3")
    shot(browser, "profiles")
    table = "table.ranking[data-profile='bert-base-finetune']"
    rows = browser.find_elements(By.CSS_SELECTOR, f"{table} tbody tr")
    assert len(rows) == 3
    ranks = [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows]
    costs = [
        Decimal(r.find_element(By.CSS_SELECTOR, "td.job-cost").get_attribute("data-value") or "")
        for r in rows
    ]
    assert ranks == ["1", "2", "3"] and costs == sorted(costs)
    # bert-base-finetune takes one GPU (max_gpus = 1): only the single-GPU instances
    # beta.h100, beta.a100, alpha.1xa100 and beta.l4 may appear, never alpha.8xh100.
    shown = {r.find_elements(By.TAG_NAME, "td")[2].text for r in rows}
    assert shown <= {"beta.h100", "beta.a100", "alpha.1xa100", "beta.l4"}
    # Three snapshots were stored (one per daily collection): the history lists them.
    history = browser.find_elements(
        By.CSS_SELECTOR, "#profile-bert-base-finetune table.history tbody tr"
    )
    assert len(history) == 3


def test_collectors_page_shows_the_last_runs(site: Site, browser: WebDriver) -> None:
    browser.get(site.url + "/collectors")
    shot(browser, "collectors")
    runs = {r[0]: r for r in cells(browser, "#runs")}
    assert set(runs) == {"alpha", "beta"}
    assert runs["alpha"][2] == "succeeded" and runs["alpha"][5] == "4"


PAGES = (
    "/",
    "/offers",
    "/compare",
    "/profiles",
    "/alerts",
    "/collectors",
    "/api/docs",
    "/gpu?name=H100-SXM",
    "/offer?provider=alpha&instance_type=alpha.8xh100&region=us-east-1",
    "/nowhere",
)


def sideways(driver: WebDriver) -> int:
    """How many CSS pixels the page is wider than the window (0: no sideways scroll)."""
    return int(
        driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
    )


@pytest.mark.parametrize("device", ["browser", "phone"])
def test_no_page_scrolls_sideways(site: Site, device: str, request: pytest.FixtureRequest) -> None:
    driver: WebDriver = request.getfixturevalue(device)
    if device == "browser":
        driver.set_window_size(DESKTOP, 900)
    width = DESKTOP if device == "browser" else PHONE
    for path in PAGES:
        driver.get(site.url + path)
        assert driver.execute_script("return window.innerWidth") == width
        assert sideways(driver) == 0, path  # wide tables scroll inside their own box
    driver.get(site.url + "/")
    table = driver.find_element(By.ID, "overview")
    if device == "phone":  # nine columns do not fit 390 px: the table's box scrolls
        assert driver.execute_script("return arguments[0].scrollWidth", table) > PHONE
        assert table.value_of_css_property("overflow-x") == "auto"
        chart_page = "/offer?provider=alpha&instance_type=alpha.8xh100&region=us-east-1"
        driver.get(site.url + chart_page)
        chart = driver.find_element(By.CSS_SELECTOR, "svg.chart")
        assert chart.size["width"] < PHONE  # scaled to the screen, not 760 px
        driver.save_screenshot(str(SCREENSHOTS / "offer-phone.png"))
        driver.get(site.url + "/")
        driver.save_screenshot(str(SCREENSHOTS / "overview-phone.png"))


def test_the_navigation_folds_on_a_phone_and_stays_reachable(
    site: Site, phone: WebDriver, browser: WebDriver
) -> None:
    browser.set_window_size(DESKTOP, 900)
    browser.get(site.url + "/")
    assert all(a.is_displayed() for a in browser.find_elements(By.CSS_SELECTOR, "#nav a"))
    assert not browser.find_element(By.CSS_SELECTOR, ".menu-button").is_displayed()
    phone.get(site.url + "/")
    links = phone.find_elements(By.CSS_SELECTOR, "#nav a")
    assert len(links) == 8 and not any(a.is_displayed() for a in links)  # folded away
    phone.find_element(By.CSS_SELECTOR, ".menu-button").click()
    assert all(a.is_displayed() for a in links)
    phone.find_element(By.LINK_TEXT, "Compare").click()
    wait_for_url(phone, "/compare")
    assert phone.find_element(By.TAG_NAME, "h1").text == "Compare"


@pytest.mark.parametrize("device", ["browser", "phone"])
def test_an_error_is_a_page_with_the_navigation(
    site: Site, device: str, request: pytest.FixtureRequest
) -> None:
    driver: WebDriver = request.getfixturevalue(device)
    driver.get(site.url + "/gpu?name=H100")
    assert driver.find_element(By.TAG_NAME, "h1").text == "Bad request"
    reason = driver.find_element(By.ID, "reason").text
    assert reason == "400 name: 'H100' is not a canonical GPU model (see 'gpus')"
    assert len(driver.find_elements(By.CSS_SELECTOR, "#nav a")) == 8
    assert sideways(driver) == 0
    driver.find_element(By.ID, "back").click()
    wait_for_url(driver, site.url + "/")
    assert driver.find_element(By.TAG_NAME, "h1").text == "Overview"


def test_head_from_the_browser(site: Site, browser: WebDriver) -> None:
    """The browser's own fetch sends HEAD: each answers as its GET does, without a body."""
    browser.get(site.url + "/")
    script = """
        const done = arguments[arguments.length - 1];
        Promise.all(arguments[0].map(async (path) => {
            const r = await fetch(path, {method: "HEAD"});
            return [path, r.status, (await r.text()).length];
        })).then(done);
    """
    paths = ["/", "/offers", "/api/v1/offers", "/api/v1/", "/static/style.css", "/nowhere"]
    answers = browser.execute_async_script(script, paths)
    assert answers == [[p, 404 if p == "/nowhere" else 200, 0] for p in paths]
