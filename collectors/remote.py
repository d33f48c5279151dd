"""Another gpu-tracker as a source: a team server's offers and service prices.

One ``gpu-tracker serve`` holds the credentials and collects every provider; a laptop
sets ``remote.url`` (and ``remote.token``, the server's ``web.token``) and runs this
collector, which copies what the server lists through ``/api/v1/sync/offers`` and
``/api/v1/sync/service-prices`` (tracker/web/sync_api.py). Like a price sheet, one
source stores offers of many providers: each keeps the server's provider, currency,
exact price and hardware, and is observed at the server's times (the current price's
``price_since``, then its ``last_seen``), so the laptop's interval is the server's and
its history, recommendations and alerts follow the server's.

The server's ETag is kept in ``remote.state_dir``; the next sync sends it as
``If-None-Match`` and a 304 stores nothing and delists nothing
(:meth:`RunContext.mark_unchanged`). The ETag is saved once every row has been handed
to the runner; if the store then fails to commit, the count of offers the store lists
no longer matches the one saved beside it and the next sync asks without it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import SecretStr

from collectors.base import CollectorError, NotConfigured, RunContext, SkipItem, parse_each
from collectors.http import HttpClient, HttpError
from tracker.models import (
    OFFER_COLUMNS,
    ColumnGroup,
    InvalidOffer,
    Offer,
    PricingModel,
    offer_from_values,
)
from tracker.service_prices import ServicePrice
from tracker.settings import Settings

__all__ = [
    "OFFERS_PATH",
    "SERVICES_PATH",
    "EtagState",
    "RemoteCollector",
    "parse_offer",
    "parse_service_price",
]

log = logging.getLogger(__name__)

OFFERS_PATH = "/api/v1/sync/offers"
SERVICES_PATH = "/api/v1/sync/service-prices"
SYNC_VERSION = 1
"""The row shape this collector reads (tracker.views.sync.SYNC_VERSION on the server)."""


def _time(row: Mapping[str, Any], key: str) -> datetime:
    value = row.get(key)
    if not isinstance(value, str):
        raise InvalidOffer(key, f"expected an ISO-8601 time, got {value!r}")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidOffer(key, f"not ISO-8601: {value!r}") from None
    if moment.tzinfo is None:
        raise InvalidOffer(key, f"no time zone: {value!r}")
    return moment.astimezone(UTC)


SINCE_RELEASE = {"fabric": "unknown", "network_gbps": None}
"""Offer fields a server of an earlier release does not send, and what their absence
means: the server did not state them (the same ``unknown`` a collector gives)."""


def parse_offer(row: Any) -> tuple[Offer, ...]:
    """One server row as the observations that rebuild its current interval: the offer
    at ``price_since`` and, if later, at ``last_seen``. Raises SkipItem (``invalid_row``)
    naming the offer and the field."""
    if not isinstance(row, Mapping):
        raise SkipItem("invalid_row", f"not an object: {row!r:.80}")
    name = "/".join(str(row.get(k, "?")) for k in ("provider", "instance_type", "region"))
    try:
        values = {
            c.name: None
            if c.group is ColumnGroup.DERIVED
            else row.get(c.name, SINCE_RELEASE[c.name])
            if c.name in SINCE_RELEASE
            else row[c.name]
            for c in OFFER_COLUMNS
        }
        offer = offer_from_values(values)
        since, last = _time(row, "price_since"), _time(row, "last_seen")
    except KeyError as exc:
        raise SkipItem("invalid_row", f"{name}: {exc.args[0]}: missing") from None
    except (InvalidOffer, ValueError, TypeError) as exc:
        raise SkipItem("invalid_row", f"{name}: {exc}") from None
    first = replace(offer, observed_at=since)
    return (first,) if last <= since else (first, replace(offer, observed_at=last))


def parse_service_price(row: Any) -> ServicePrice:
    """One server row as a storage or egress tier; raises SkipItem (``invalid_row``)."""
    if not isinstance(row, Mapping):
        raise SkipItem("invalid_row", f"not an object: {row!r:.80}")
    name = "/".join(str(row.get(k, "?")) for k in ("provider", "region", "service"))
    try:
        return ServicePrice(
            provider=row["provider"],
            region=row["region"],
            service=row["service"],
            unit=row["unit"],
            price=row["price"],
            currency=row["currency"],
            tier_start_gb=row["tier_start_gb"],
            tier_end_gb=row.get("tier_end_gb"),
        )
    except KeyError as exc:
        raise SkipItem("invalid_row", f"{name}: {exc.args[0]}: missing") from None
    except (InvalidOffer, ValueError, TypeError) as exc:
        raise SkipItem("invalid_row", f"{name}: {exc}") from None


class EtagState:
    """The server's last ETag per route and how many rows it listed, in one JSON file
    per server URL under ``remote.state_dir``."""

    def __init__(self, directory: Path, url: str) -> None:
        digest = hashlib.sha256(url.encode()).hexdigest()[:16]
        self.path = directory / f"remote-{digest}.json"
        self.url = url

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # none yet, or unreadable: the next sync simply transfers everything
        return data if isinstance(data, dict) and data.get("url") == self.url else {}

    def etag(self, route: str, count: int | None) -> str | None:
        """The saved ETag of ``route``, if the store still holds the ``count`` rows it had."""
        saved = self._read().get(route)
        if not isinstance(saved, dict) or not isinstance(saved.get("etag"), str):
            return None
        if count is not None and saved.get("count") != count:
            return None
        return str(saved["etag"])

    def save(self, route: str, etag: str | None, count: int) -> None:
        data = self._read() or {"url": self.url}
        data[route] = {"etag": etag, "count": count}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(data, indent=1), encoding="utf-8")
        except OSError as exc:
            log.warning("remote: cannot keep the ETag in %s: %s", self.path, exc.strerror)


class RemoteCollector:
    """Copies a team server's offers and service prices; configured by ``remote.url``."""

    name: ClassVar[str] = "remote"
    description: ClassVar[str] = "another gpu-tracker's current prices (a team server)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(PricingModel)
    spot_fetched_separately: ClassVar[bool] = False
    """One answer holds every offer of the server."""

    def __init__(self, url: str, token: SecretStr | None, settings: Settings) -> None:
        self.url = url
        self.token = token
        self.settings = settings
        self.state = EtagState(settings.remote.resolved_state_dir(), url)

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        remote = settings.remote
        if not remote.enabled or not remote.url:
            raise NotConfigured(
                "no team server configured (set remote.url or GPU_TRACKER_REMOTE__URL)"
            )
        return cls(remote.url, remote.resolved_token(), settings)

    def _fetch(self, path: str, key: str, etag: str | None) -> tuple[list[Any], str]:
        """The rows under ``key`` and the answer's ETag; raises _NotModified for a 304."""
        headers = {"If-None-Match": etag} if etag else {}
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token.get_secret_value()}"
        where = self.url + path
        with HttpClient(self.settings.http) as http:
            try:
                response = http.request("GET", where, headers=headers)
            except HttpError as exc:
                raise self._failure(where, exc) from None
        try:
            document = response.json()
        except ValueError:
            raise CollectorError(f"remote: {where}: the answer is not JSON") from None
        if not isinstance(document, dict) or document.get("version") != SYNC_VERSION:
            raise CollectorError(
                f"remote: {where}: not a gpu-tracker sync answer of version {SYNC_VERSION}"
                f" (got version {document.get('version') if isinstance(document, dict) else '?'})"
            )
        rows = document.get(key)
        if not isinstance(rows, list):
            raise CollectorError(f"remote: {where}: {key!r} is not a list")
        return rows, response.headers.get("ETag", "")

    def _failure(self, where: str, exc: HttpError) -> Exception:
        if exc.status == 304:
            return _NotModified()
        if exc.status in (401, 403):
            fix = "is wrong" if self.token is not None else "is needed"
            return CollectorError(
                f"remote: {where}: HTTP {exc.status}: the server's web token {fix}"
                " (set remote.token or GPU_TRACKER_REMOTE__TOKEN)"
            )
        if exc.status is None:
            return CollectorError(f"remote: team server unreachable: {exc}")
        return CollectorError(f"remote: {exc}")

    def _rows(
        self, ctx: RunContext, path: str, key: str, count: int | None
    ) -> tuple[list[Any], str] | None:
        """The route's rows and ETag; None (the run marked unchanged) for a 304."""
        try:
            return self._fetch(path, key, self.state.etag(path, count))
        except _NotModified:
            ctx.mark_unchanged(f"{self.url}{path}: 304 Not Modified")
            return None

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        found = self._rows(ctx, OFFERS_PATH, "offers", len(ctx.listed_keys()))
        if found is None:
            return
        rows, etag = found
        count = 0
        for observations in parse_each(rows, parse_offer, ctx.skip):
            count += 1
            yield from observations
        self.state.save(OFFERS_PATH, etag or None, count)

    def collect_service_prices(self, ctx: RunContext) -> Iterator[ServicePrice]:
        found = self._rows(ctx, SERVICES_PATH, "service_prices", None)
        if found is None:
            return
        rows, etag = found
        prices = list(parse_each(rows, parse_service_price, ctx.skip))
        yield from prices
        self.state.save(SERVICES_PATH, etag or None, len(prices))


class _NotModified(Exception):
    """The server answered 304: the copy this store holds is current."""
