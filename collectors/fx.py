"""ECB euro foreign exchange reference rates (``/stats/eurofxref/``), no key.

The ECB publishes, each TARGET working day around 16:00 CET, how many units of some
thirty currencies one euro buys (``eurofxref-daily.xml``), and the last 90 days of
them (``eurofxref-hist-90d.xml``). This collector fetches the daily file, or the
90-day file when the store has no rates yet or its newest is older than
``fx.backfill_after_days`` (a tracker that was down), and hands the rates to the
store, which keeps one compact series per currency (``tracker/store/series/_fx.py``).

It is registered like every collector (entry point ``fx``) but produces rates, not
offers: the runner (``tracker.collect``) sees :meth:`FxCollector.collect_rates`
(the :class:`collectors.base.RateCollector` protocol) and stores a rates run.

``[fx] endpoint_url`` / ``GPU_TRACKER_FX__ENDPOINT_URL`` replaces the origin
``https://www.ecb.europa.eu`` (mirrors, proxies, test servers); the paths are kept.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import ClassVar, Self

import httpx

from collectors.base import CollectorError, NotConfigured, RunContext, SkipItem, SkipSink
from collectors.gpucloud import documented_url
from collectors.http import HttpClient, HttpError
from tracker.fx import BASE, EcbRate
from tracker.models import PricingModel
from tracker.settings import Settings

__all__ = ["DAILY_URL", "HISTORY_URL", "FxCollector", "parse_rates"]

DAILY_URL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"
HISTORY_URL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml"
_NS = "{http://www.ecb.int/vocabulary/2002-08-01/eurofxref}"


def _rate(day: date, cube: ET.Element) -> EcbRate:
    currency = (cube.get("currency") or "").strip().upper()
    text = (cube.get("rate") or "").strip()
    if len(currency) != 3 or not currency.isalpha() or not currency.isascii():
        raise SkipItem("malformed_rate", f"{day}: currency {currency!r} is not an ISO code")
    if currency == BASE:
        raise SkipItem("malformed_rate", f"{day}: a rate for the base currency EUR")
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise SkipItem(
            "malformed_rate", f"{day} {currency}: rate {text!r} is not a number"
        ) from None
    if not value.is_finite() or value <= 0:
        raise SkipItem("malformed_rate", f"{day} {currency}: rate {text!r} is not positive")
    return EcbRate(currency, day, value)


def parse_rates(xml: bytes | str, skip: SkipSink) -> list[EcbRate]:
    """Every ``<Cube time=…><Cube currency=… rate=…/>`` of an ECB file (daily or history).

    A rate that is not a positive number or names no ISO currency is a counted skip;
    a document that is not the ECB's envelope (no dated cube at all) raises
    :class:`CollectorError`, since storing nothing would look like a quiet success.
    """
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise CollectorError(f"fx: the ECB file is not XML: {exc}") from None
    days = [c for c in root.iter(f"{_NS}Cube") if c.get("time") is not None]
    if not days:
        raise CollectorError("fx: the ECB file holds no dated <Cube time=…> element")
    rates: list[EcbRate] = []
    for day_cube in days:
        stamp = day_cube.get("time", "")
        try:
            day = date.fromisoformat(stamp)
        except ValueError:
            skip("malformed_rate", f"day {stamp!r} is not a date")
            continue
        for cube in day_cube.findall(f"{_NS}Cube"):
            try:
                rates.append(_rate(day, cube))
            except SkipItem as exc:
                skip(exc.reason, exc.detail)
    return rates


class FxCollector:
    """The ECB's reference rates; see the module docstring."""

    name: ClassVar[str] = "fx"
    description: ClassVar[str] = "ECB euro reference exchange rates (no key)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset()
    """None: this collector stores exchange rates, not offers."""
    spot_fetched_separately: ClassVar[bool] = False

    def __init__(
        self,
        settings: Settings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
        today: Callable[[], date] = lambda: datetime.now(UTC).date(),
    ) -> None:
        self.settings = settings
        self._sleep = sleep
        self._transport = transport
        self._today = today

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        if not settings.fx.enabled:
            raise NotConfigured("disabled (fx.enabled = false)")
        return cls(settings)

    def url(self, since: date | None) -> str:
        """The daily file, or the 90-day one when ``since`` (the newest stored day) is
        missing or older than ``fx.backfill_after_days``."""
        stale = since is None or (self._today() - since).days > self.settings.fx.backfill_after_days
        return documented_url(HISTORY_URL if stale else DAILY_URL, self.settings.fx.endpoint_url)

    def collect_rates(self, ctx: RunContext, since: date | None) -> list[EcbRate]:
        url = self.url(since)
        headers = {"Accept": "application/xml, text/xml"}
        with HttpClient(
            self.settings.http, headers=headers, transport=self._transport, sleep=self._sleep
        ) as http:
            try:
                body = http.request("GET", url).content
            except HttpError as exc:
                raise CollectorError(f"fx: {exc}") from exc
        return parse_rates(body, ctx.skip)
