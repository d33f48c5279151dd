"""Tencent Cloud CVM GPU prices through Tencent's official SDK (tencentcloud-sdk-python-cvm).

Per region, ``DescribeZoneInstanceConfigInfos`` is asked once per charge type the run
needs (``POSTPAID_BY_HOUR``, ``SPOTPAID``, ``PREPAID``); without a zone filter it
answers every zone of the region, one item per instance type and zone, so offers are
per zone. :mod:`collectors.tencent_parse` turns items into offers and
:mod:`collectors.tencent_families` names each family's GPU.

The SDK signs every request (TC3-HMAC-SHA256), sends it to the site's endpoint or to
``[tencent] endpoint_url`` (``http://host:port`` works: the SDK's ``HttpProfile``
takes the scheme and the host apart), and retries throttling (``RequestLimitExceeded``)
and network errors with its ``StandardRetryer`` and our backoff. The generic
``call_json`` is used instead of the typed request models so the parser sees the
payload exactly as the API sent it (a model drops fields its SDK version does not know).

Failures are one line each: refused credentials stop the run (every region would
fail the same); an unknown region, throttling that outlasts the retries or any other
API error leaves that region partial (not delisted) and the others collected.

The SDK itself is used from :mod:`collectors.tencent_sdk`, imported on the first call:
listing the collectors (every CLI command) imports this module, never the SDK.
"""

from __future__ import annotations

import functools
import logging
import random
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar, Self

from collectors.base import (
    WITHOUT_SAVINGS_PLANS,
    CollectorError,
    MissingCredentials,
    NotConfigured,
    RunContext,
    parse_each,
)
from collectors.tencent_parse import PROVIDER, charge_types, describe_item, parse_item
from tracker.models import Offer, PricingModel
from tracker.settings import ConfigError, Settings
from tracker.settings.tencent import SECRET_ID_ENV, SECRET_KEY_ENV

if TYPE_CHECKING:
    from tencentcloud.cvm.v20170312.cvm_client import CvmClient

__all__ = ["TencentCollector"]

log = logging.getLogger(__name__)

_AUTH_CODES = ("AuthFailure", "UnauthorizedOperation")
_REGION_CODES = ("UnsupportedRegion", "InvalidParameterValue", "InvalidRegion")
_CREDENTIALS = f"{SECRET_ID_ENV} / {SECRET_KEY_ENV}"

Backoff = Callable[[int], float]


def default_backoff(settings: Settings) -> Backoff:
    """Exponential backoff with full jitter from ``[http]`` (attempt n waits up to base × 2ⁿ)."""
    base, cap = settings.http.backoff_base_seconds, settings.http.backoff_max_seconds
    return lambda attempt: random.uniform(0, min(cap, base * 2**attempt))


class TencentCollector:
    """GPU instance prices per zone: pay-as-you-go, spot and 1/3-year prepaid."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = (
        "Tencent Cloud CVM (official SDK): GPU instances per zone, pay-as-you-go/spot/prepaid"
    )
    pricing_models: ClassVar[frozenset[PricingModel]] = WITHOUT_SAVINGS_PLANS
    spot_fetched_separately: ClassVar[bool] = True
    """A spot-only run asks for ``SPOTPAID`` items only."""

    def __init__(
        self,
        settings: Settings,
        secret_id: str,
        secret_key: str,
        *,
        backoff: Backoff | None = None,
    ) -> None:
        self.settings = settings
        self._key_pair = (secret_id, secret_key)
        self._backoff = backoff or default_backoff(settings)

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        if not settings.tencent.enabled:
            raise NotConfigured("disabled (tencent.enabled = false)")
        try:
            pair = settings.tencent.credentials()
        except ConfigError as exc:
            raise MissingCredentials(str(exc)) from None
        if pair is None:
            raise MissingCredentials(
                f"no credentials: set {SECRET_ID_ENV} and {SECRET_KEY_ENV} "
                "(or tencent.secret_id / tencent.secret_key, or their _file settings)"
            )
        return cls(settings, *pair)

    def client(self, region: str) -> CvmClient:
        """A signed CVM client (the SDK is imported here, on first use: see tencent_sdk)."""
        from collectors.tencent_sdk import make_client

        return make_client(self.settings, *self._key_pair, region, self._backoff)

    def _call(self, region: str, action: str, params: dict[str, Any]) -> dict[str, Any]:
        """One signed call; refused credentials raise :class:`CollectorError` at once."""
        from collectors.tencent_sdk import TencentCloudSDKException, describe_error, is_code

        try:
            payload = self.client(region).call_json(action, params)
        except TencentCloudSDKException as exc:
            if is_code(exc, _AUTH_CODES):
                raise CollectorError(
                    f"tencent: credentials refused ({describe_error(exc)}); check {_CREDENTIALS}"
                ) from None
            raise
        response = payload.get("Response") if isinstance(payload, dict) else None
        if not isinstance(response, dict):
            raise TencentCloudSDKException("MalformedResponse", f"{action}: no Response object")
        return response

    def regions(self) -> list[str]:
        from collectors.tencent_sdk import TencentCloudSDKException, describe_error

        configured = self.settings.tencent.regions
        if configured:
            return list(dict.fromkeys(configured))
        try:
            response = self._call("", "DescribeRegions", {})
        except TencentCloudSDKException as exc:
            raise CollectorError(
                f"tencent: cannot list regions ({describe_error(exc)}); "
                "set GPU_TRACKER_TENCENT__REGIONS"
            ) from None
        found = response.get("RegionSet")
        if not isinstance(found, list):
            raise CollectorError("tencent: DescribeRegions answered without a RegionSet")
        return sorted(
            r["Region"]
            for r in found
            if isinstance(r, dict) and r.get("RegionState") == "AVAILABLE" and r.get("Region")
        )

    def fetch(self, region: str, charge_type: str) -> list[Any]:
        """Every item of one region and charge type, all zones."""
        from collectors.tencent_sdk import TencentCloudSDKException

        filters = [{"Name": "instance-charge-type", "Values": [charge_type]}]
        response = self._call(region, "DescribeZoneInstanceConfigInfos", {"Filters": filters})
        items = response.get("InstanceTypeQuotaSet")
        if not isinstance(items, list):
            raise TencentCloudSDKException(
                "MalformedResponse", "DescribeZoneInstanceConfigInfos: no InstanceTypeQuotaSet"
            )
        log.info("tencent: %s %s: %d items", region, charge_type, len(items))
        return items

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        from collectors.tencent_sdk import TencentCloudSDKException, describe_error, is_code

        wanted = charge_types(ctx.pricing_scope)
        if not wanted:
            return
        regions = self.regions()
        for region in regions:
            try:
                # A region's offers are yielded only once all its charge types arrived.
                items = [(c, self.fetch(region, c)) for c in wanted]
            except TencentCloudSDKException as exc:
                reason = describe_error(exc)
                if is_code(exc, _REGION_CODES):
                    reason += (
                        f" (is {region!r} a Tencent Cloud region? see GPU_TRACKER_TENCENT__REGIONS)"
                    )
                ctx.mark_partial(region, reason)
                continue
            parse = functools.partial(
                parse_item, region=region, settings=ctx.settings, scope=ctx.pricing_scope
            )
            for _charge, batch in items:
                for offers in parse_each(batch, parse, ctx.skip, describe_item):
                    yield from offers
        ctx.fail_if_every_region_partial("tencent", regions)
