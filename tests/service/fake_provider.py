"""Fake-provider collectors for the service tests, fetching from a local HTTP server.

Not a model of any real provider: the payload is this test suite's own small
format (served by ``tests.service.fake_server``), because what is under test is the
service around a collector, not parsing. They use the real ``HttpClient`` so
retries, backoff and timeouts are the production ones. ``serve`` subprocesses load
them through ``GPU_TRACKER_PLUGINS`` (``{"fakegood": "tests.service.fake_provider:Good"}``).

Payload: ``{"offers": [{"instance_type", "region", "gpu", "gpus", "price"}],
"next": "<path of the next page>" | null}``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, ClassVar, Self

from collectors.base import MissingCredentials, NotConfigured, RunContext
from collectors.http import HttpClient
from tracker.models import Offer, PricingModel, to_decimal
from tracker.settings import HttpSettings, Settings

URL_ENV = "FAKE_PROVIDER_URL"
KEY_ENV = "FAKE_PROVIDER_KEY"


class _Fake:
    name: ClassVar[str]
    description: ClassVar[str] = "test provider on a local HTTP server"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset({PricingModel.ON_DEMAND})

    def __init__(self, base_url: str, http: HttpSettings) -> None:
        self.base_url = base_url
        self.http = http

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        url = os.environ.get(URL_ENV)
        if not url:
            raise NotConfigured(f"{cls.name}: set {URL_ENV}")
        return cls(url, settings.http)

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        with HttpClient(self.http, base_url=self.base_url) as client:
            pages = client.paginate(f"/{self.name}/offers", lambda page: page.get("next"))
            for page in pages:
                for item in page["offers"]:
                    yield self.parse(item)

    def parse(self, item: dict[str, Any]) -> Offer:
        price = to_decimal(item["price"], "price")
        return Offer(
            provider=self.name,
            instance_type=item["instance_type"],
            region=item["region"],
            pricing=PricingModel.ON_DEMAND,
            price_per_hour=price,
            currency="USD",
            price_per_hour_usd=price,
            gpu_model=item["gpu"],
            gpu_count=to_decimal(item["gpus"], "gpus"),
        )


class Good(_Fake):
    name = "fakegood"


class Bad(_Fake):
    name = "fakebad"


class Slow(_Fake):
    name = "fakeslow"


class Crashing(_Fake):
    """Raises an unexpected exception half-way through a run (a collector bug)."""

    name = "fakecrash"

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        for offer in super().collect(ctx):
            yield offer
            raise RuntimeError("bug in the collector")


class Spot(_Fake):
    """Declares spot and on-demand, so it is planned as two jobs."""

    name = "fakespot"
    pricing_models = frozenset({PricingModel.SPOT, PricingModel.ON_DEMAND})


class Keyed(_Fake):
    """Needs a credential (``FAKE_PROVIDER_KEY``) that may come and go, like a role's."""

    name = "fakekeyed"

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        if not os.environ.get(KEY_ENV):
            raise MissingCredentials(f"{cls.name}: no credentials ({KEY_ENV} is not set)")
        return super().from_settings(settings)
