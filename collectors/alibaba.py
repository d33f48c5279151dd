"""Alibaba Cloud ECS GPU prices through Alibaba's official SDK (``alibabacloud-ecs20140526``).

Per configured region: the GPU instance types (``DescribeInstanceTypes`` with
``MinimumGPUAmount=1``, paged by ``NextToken``), then for each type its pay-as-you-go
price (``DescribePrice``, ``PriceUnit=Hour``) and 1- and 3-year subscription prices
(``PriceUnit=Year``, ``Period`` 1 and 3), and its spot price history in every zone
(``DescribeSpotPriceHistory``, paged by ``NextOffset``, from the last stored spot
point like AWS spot) with the zone's release rate from ``DescribeSpotAdvice`` where
the API has one. Parsing is in :mod:`collectors.alibaba_parse`.

The account decides the site and so the currency (China site CNY, international
site USD); every price keeps the currency its response names. The SDK signs each
request (ACS3-HMAC-SHA256 ``Authorization`` header); ``Throttling`` answers are
retried here with exponential backoff, since the SDK does not retry by default.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import SecretStr

from collectors.alibaba_parse import (
    AlibabaHardware,
    SpotAdvice,
    instance_type_items,
    parse_describe_price,
    parse_instance_types,
    parse_spot_advice,
    parse_spot_history,
    priced_offer,
    spot_items,
)
from collectors.base import (
    WITHOUT_SAVINGS_PLANS,
    CollectorError,
    MissingCredentials,
    NotConfigured,
    RunContext,
    SkipItem,
)
from tracker.models import Offer, PricingModel
from tracker.settings import Settings
from tracker.settings.alibaba import KEY_ID_ENV, KEY_SECRET_ENV

if TYPE_CHECKING:
    from alibabacloud_ecs20140526.client import Client as EcsClient
    from darabonba.runtime import RuntimeOptions
    from Tea.exceptions import TeaException

__all__ = ["ENV_KEY_ID", "ENV_KEY_SECRET", "AlibabaApiError", "AlibabaCollector"]

log = logging.getLogger(__name__)

ENV_KEY_ID = KEY_ID_ENV
ENV_KEY_SECRET = KEY_SECRET_ENV
FIXED = (PricingModel.ON_DEMAND, PricingModel.RESERVED_1Y, PricingModel.RESERVED_3Y)
_PERIOD = {PricingModel.RESERVED_1Y: 1, PricingModel.RESERVED_3Y: 3}
TYPES_PAGE = 100
ADVICE_CHUNK = 10
"""``DescribeSpotAdvice`` takes at most 10 ``InstanceTypes``."""
BACKOFF_SECONDS = 1.0
BACKOFF_CAP_SECONDS = 20.0
# Error codes (Alibaba's "Service error codes" / per-API error tables).
_AUTH_CODES = (
    "InvalidAccessKeyId",
    "InvalidAccessKeySecret",
    "SignatureDoesNotMatch",
    "IncompleteSignature",
    "InvalidSecurityToken",
    "Forbidden.AccessKeyDisabled",
    "Forbidden.RAM",
)
_NO_PRICE_CODES = ("PriceNotFound", "InvalidInstanceType", "InstanceType.Offline")


class AlibabaApiError(Exception):
    """One failed API call, as one line: action, region, code, message, HTTP status."""

    def __init__(self, action: str, region: str, code: str, message: str, status: Any) -> None:
        self.action, self.region, self.code = action, region, code
        self.message = " ".join(message.split())
        self.status = status
        super().__init__(str(self))

    @property
    def is_auth(self) -> bool:
        return self.code.startswith(_AUTH_CODES)

    @property
    def is_retryable(self) -> bool:
        """Throttling, a server-side fault or a dropped connection: worth another try."""
        return (
            self.code.startswith("Throttling")
            or self.code in ("ServiceUnavailable", "InternalError", "Network")
            or (isinstance(self.status, int) and self.status >= 500)
        )

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status else ""
        return f"{self.action} in {self.region}: {self.code}: {self.message}{status}"


_CAUSE = re.compile(r"\[Errno -?\d+\][^'\"\\)]*|Read timed out|timed out|Name or service not known")


def _api_error(exc: TeaException, action: str, region: str) -> AlibabaApiError:
    data = exc.data if isinstance(getattr(exc, "data", None), Mapping) else {}
    if not exc.code and not data:
        # The SDK wraps a transport failure (refused, DNS, timeout) in a
        # RetryError repr; its cause is the part worth a line.
        text = str(exc.message or exc)
        cause = _CAUSE.search(text)
        return AlibabaApiError(action, region, "Network", cause[0] if cause else text[:200], None)
    message = str(data.get("Message") or exc.message or "")
    status = getattr(exc, "status_code", None) or data.get("statusCode")
    return AlibabaApiError(action, region, str(exc.code or "Unknown"), message, status)


def _ecs() -> Any:
    """The SDK's request models, imported on first use: the SDK takes seconds to import
    and every CLI command that lists collectors would otherwise pay for it."""
    from alibabacloud_ecs20140526 import models

    return models


def _utc(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class AlibabaCollector:
    """Pay-as-you-go, 1/3-year subscription and per-zone spot prices of ECS GPU types."""

    name: ClassVar[str] = "alibaba"
    description: ClassVar[str] = (
        "Alibaba Cloud ECS (official SDK): GPU types, pay-as-you-go, 1y/3y subscription, spot"
    )
    pricing_models: ClassVar[frozenset[PricingModel]] = WITHOUT_SAVINGS_PLANS
    spot_fetched_separately: ClassVar[bool] = True
    """Spot comes from DescribeSpotPriceHistory, calls of its own."""

    def __init__(
        self,
        settings: Settings,
        key_id: SecretStr,
        key_secret: SecretStr,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.settings = settings
        self.cfg = settings.alibaba
        self._key_id = key_id
        self._key_secret = key_secret
        self._sleep = sleep
        self._clock = clock or (lambda: datetime.now(UTC))

    @classmethod
    def from_settings(cls, settings: Settings, environ: Mapping[str, str] | None = None) -> Self:
        if not settings.alibaba.enabled:
            raise NotConfigured("alibaba: disabled in the configuration (alibaba.enabled = false)")
        pair = settings.alibaba.credentials(environ)
        if pair is None:
            raise MissingCredentials(
                f"alibaba: no credentials (set {ENV_KEY_ID} and {ENV_KEY_SECRET})"
            )
        return cls(settings, *pair)

    # ------------------------------------------------------------------ SDK

    def client(self, region: str) -> EcsClient:
        from alibabacloud_ecs20140526.client import Client
        from alibabacloud_tea_openapi import models as openapi

        config = openapi.Config(
            access_key_id=self._key_id.get_secret_value(),
            access_key_secret=self._key_secret.get_secret_value(),
            region_id=region,
            user_agent="gpu-tracker",
        )
        if self.cfg.endpoint_url:
            scheme, _, host = self.cfg.endpoint_url.partition("://")
            config.endpoint, config.protocol = host, scheme
        return Client(config)

    def _runtime(self) -> RuntimeOptions:
        from darabonba.runtime import RuntimeOptions

        millis = int(self.cfg.timeout_seconds * 1000)
        return RuntimeOptions(autoretry=False, read_timeout=millis, connect_timeout=millis)

    def call(
        self, region: str, action: str, send: Callable[[Any, RuntimeOptions], Any], request: Any
    ) -> dict[str, Any]:
        """One SDK call's response body as the API's JSON mapping. ``Throttling`` (and a
        5xx or dropped connection) is retried with exponential backoff, up to
        ``alibaba.max_attempts`` attempts; the SDK's own retries are off."""
        from Tea.exceptions import TeaException

        attempts = self.cfg.max_attempts
        for attempt in range(1, attempts + 1):
            try:
                response = send(request, self._runtime())
            except TeaException as exc:
                error = _api_error(exc, action, region)
                if error.is_retryable and attempt < attempts:
                    delay = min(BACKOFF_SECONDS * 2 ** (attempt - 1), BACKOFF_CAP_SECONDS)
                    log.info("alibaba: %s; retry %d in %.1fs", error, attempt, delay)
                    self._sleep(delay)
                    continue
                raise error from None
            body = response.body.to_map() if response.body is not None else {}
            return body if isinstance(body, dict) else {}
        raise AssertionError("unreachable: the last attempt returns or raises")

    # ------------------------------------------------------------------ collect

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        fixed = [p for p in FIXED if p in ctx.pricing_scope]
        want_spot = PricingModel.SPOT in ctx.pricing_scope and self.cfg.spot
        if not fixed and not want_spot:
            return
        regions = list(dict.fromkeys(self.cfg.regions))
        if not regions:
            raise NotConfigured("alibaba: no regions (set alibaba.regions)")
        for region in regions:
            try:
                yield from self._collect_region(ctx, region, fixed, want_spot)
            except AlibabaApiError as exc:
                if exc.is_auth:
                    raise CollectorError(
                        f"alibaba: credentials refused: {exc} "
                        f"(check {ENV_KEY_ID} / {ENV_KEY_SECRET})"
                    ) from None
                ctx.mark_partial(region, str(exc))
        ctx.fail_if_every_region_partial("alibaba", regions)

    def _collect_region(
        self, ctx: RunContext, region: str, fixed: Sequence[PricingModel], want_spot: bool
    ) -> Iterator[Offer]:
        client = self.client(region)
        hardware = self.hardware(ctx, client, region)
        if not hardware:
            log.info("alibaba: %s lists no GPU instance types", region)
            return
        priced: set[str] = set()
        for name in sorted(hardware):
            for pricing in fixed:
                try:
                    offer = self._fixed_price(client, region, hardware[name], pricing)
                except SkipItem as exc:
                    ctx.skip(exc.reason, f"{name} {region} {pricing.value}: {exc.detail}")
                    continue
                priced.add(name)
                yield offer
        if want_spot:
            # Spot for the types sold here; a spot-only run has no prices to go by.
            types = sorted(priced) if fixed else sorted(hardware)
            yield from self._spot(ctx, client, region, types, hardware)

    def hardware(
        self, ctx: RunContext, client: EcsClient, region: str
    ) -> dict[str, AlibabaHardware]:
        items: list[Any] = []
        token: str | None = None
        while True:
            request = _ecs().DescribeInstanceTypesRequest(
                minimum_gpuamount=1, max_results=TYPES_PAGE, next_token=token
            )
            body = self.call(
                region,
                "DescribeInstanceTypes",
                client.describe_instance_types_with_options,
                request,
            )
            items.extend(instance_type_items(body))
            following = str(body.get("NextToken") or "") or None
            if following is None:
                break
            if following == token:
                raise AlibabaApiError(
                    "DescribeInstanceTypes", region, "Pagination", "NextToken repeats", None
                )
            token = following
        return parse_instance_types(items, ctx.skip)

    def _fixed_price(
        self, client: EcsClient, region: str, hw: AlibabaHardware, pricing: PricingModel
    ) -> Offer:
        request = _ecs().DescribePriceRequest(
            region_id=region,
            resource_type="instance",
            instance_type=hw.instance_type,
            price_unit="Hour" if pricing is PricingModel.ON_DEMAND else "Year",
            period=_PERIOD.get(pricing),
        )
        try:
            body = self.call(region, "DescribePrice", client.describe_price_with_options, request)
        except AlibabaApiError as exc:
            if exc.code.startswith(_NO_PRICE_CODES):
                raise SkipItem("no_price", f"{exc.code}: {exc.message}") from None
            raise
        where = f"{hw.instance_type} {region} {pricing.value}"
        price = parse_describe_price(body, pricing, where)
        return priced_offer(hw, region, pricing, price)

    # ------------------------------------------------------------------ spot

    def _spot(
        self,
        ctx: RunContext,
        client: EcsClient,
        region: str,
        types: Sequence[str],
        hardware: Mapping[str, AlibabaHardware],
    ) -> Iterator[Offer]:
        since = ctx.last_observed(PricingModel.SPOT, region)
        start = since or self._clock() - timedelta(days=self.cfg.spot_lookback_days)
        advice = self.spot_advice(client, region, types)
        for name in types:
            items, currency = self._spot_history(client, region, name, start)
            yield from parse_spot_history(
                items, hardware, currency, ctx.skip, region=region, advice=advice
            )

    def _spot_history(
        self, client: EcsClient, region: str, instance_type: str, start: datetime
    ) -> tuple[list[Any], str]:
        """Every point since ``start`` in every zone, following ``NextOffset``."""
        items: list[Any] = []
        currency = ""
        offset: int | None = None
        while True:
            request = _ecs().DescribeSpotPriceHistoryRequest(
                region_id=region,
                instance_type=instance_type,
                network_type="vpc",
                ostype="linux",
                start_time=_utc(start),
                offset=offset,
            )
            body = self.call(
                region,
                "DescribeSpotPriceHistory",
                client.describe_spot_price_history_with_options,
                request,
            )
            page = spot_items(body)
            items.extend(page)
            currency = str(body.get("Currency") or currency).strip().upper()
            following = body.get("NextOffset")
            if not page or not isinstance(following, int) or following <= (offset or 0):
                return items, currency
            offset = following

    def spot_advice(
        self, client: EcsClient, region: str, types: Sequence[str]
    ) -> dict[tuple[str, str], SpotAdvice]:
        """Release rates where the API has them; a refusal only loses the rates."""
        advice: dict[tuple[str, str], SpotAdvice] = {}
        for i in range(0, len(types), ADVICE_CHUNK):
            request = _ecs().DescribeSpotAdviceRequest(
                region_id=region, instance_types=list(types[i : i + ADVICE_CHUNK])
            )
            try:
                body = self.call(
                    region, "DescribeSpotAdvice", client.describe_spot_advice_with_options, request
                )
            except AlibabaApiError as exc:
                if exc.is_auth:
                    raise
                log.warning("alibaba: no spot release rates for %s: %s", region, exc)
                return advice
            advice.update(parse_spot_advice(body))
        return advice
