"""How the Huawei collector calls Huawei's SDK: clients, throttling retries, one-line errors.

Importing Huawei's SDK takes seconds, so only a collection run imports this module
(``collectors/huawei.py`` loads it lazily); listing the collectors never does.

ECS clients are built per region with ``BasicCredentials`` and no project id, so the SDK
looks the project up in IAM (``KeystoneListProjects``, honouring its own
``HUAWEICLOUD_SDK_IAM_ENDPOINT``); the BSS client uses ``GlobalCredentials``, whose
account-id lookup is the SDK's too. Calls go through the SDK's invoker, which retries
throttled ones (HTTP 429, ``APIGW.0308``) with back-off. Bodies are read raw, with
Decimal numbers: the SDK's models turn money into floats and drop unknown fields such as
``info:ascend:name``. Every failure becomes one :class:`HuaweiApiError` line.
"""

from __future__ import annotations

import importlib
import json
import random
import re
from decimal import Decimal
from typing import Any

from huaweicloudsdkcore.auth.credentials import BasicCredentials, GlobalCredentials
from huaweicloudsdkcore.exceptions.exceptions import SdkException, ServiceResponseException
from huaweicloudsdkcore.http.http_config import HttpConfig
from huaweicloudsdkcore.region.region import Region
from huaweicloudsdkcore.retry.backoff_strategy import BackoffStrategy
from huaweicloudsdkecs.v2 import EcsClient, ListFlavorsRequest
from huaweicloudsdkecs.v2.region.ecs_region import EcsRegion
from pydantic import SecretStr

from tracker.settings.huawei import AK_ENV, SK_ENV, HuaweiSettings

__all__ = [
    "HuaweiApiError",
    "bss_client",
    "call",
    "describe_error",
    "ecs_client",
    "list_flavors",
]

_THROTTLED = frozenset({"APIGW.0308"})
_AUTH_CODES = frozenset({"APIGW.0301", "APIGW.0101", "APIGW.0303", "APIGW.0305"})
# "ClientRequestException - {status_code:401,request_id:…,error_code:APIGW.0301,error_msg:…,encoded_…"
_WRAPPED = re.compile(
    r"status_code:(?P<status>\d+),.*?error_code:(?P<code>[^,]*),error_msg:(?P<message>.*?)"
    r",encoded_authorization_message"
)
# BSS lives in one place per site; the region id only selects the IAM endpoint of its lookup.
_BSS = {
    "china": ("huaweicloudsdkbss.v2", "BssClient", "bss_region.BssRegion", "cn-north-1"),
    "international": (
        "huaweicloudsdkbssintl.v2",
        "BssintlClient",
        "bssintl_region.BssintlRegion",
        "ap-southeast-1",
    ),
}


class HuaweiApiError(Exception):
    """One failed call, already told in one line (see :func:`describe_error`)."""

    def __init__(self, line: str, *, auth: bool = False) -> None:
        super().__init__(line)
        self.auth = auth


def describe_error(exc: Exception, what: str) -> HuaweiApiError:
    """One line for a failed SDK call: the API's error code and message, and a hint."""
    if isinstance(exc, ServiceResponseException):
        code = str(exc.error_code or exc.status_code)
        message = " ".join(str(exc.error_msg or "").split())
        auth = exc.status_code in (401, 403) or code in _AUTH_CODES
        hint = f" (check {AK_ENV} / {SK_ENV})" if auth else ""
        if code in _THROTTLED or exc.status_code == 429:
            hint = " (still throttled after retries)"
        return HuaweiApiError(
            f"huawei: {what}: {code} {message}{hint} [HTTP {exc.status_code}, "
            f"request {exc.request_id or '-'}]",
            auth=auth,
        )
    # The SDK's IAM lookups wrap the API's error into their own message.
    text = " ".join(str(getattr(exc, "error_msg", None) or exc).split())
    wrapped = _WRAPPED.search(text)
    if wrapped is not None:
        status, code, message = wrapped.group("status", "code", "message")
        auth = status in ("401", "403") or code in _AUTH_CODES
        hint = f" (check {AK_ENV} / {SK_ENV})" if auth else ""
        lookup = text.split(",", 1)[0]  # "Failed to get domain id" / "... project id of region 'x'"
        return HuaweiApiError(
            f"huawei: {what}: {lookup}: {code} {message.strip()}{hint} [HTTP {status}]", auth=auth
        )
    if "Failed to get project id" in text:
        return HuaweiApiError(
            f"huawei: {what}: IAM knows no project of this region for the account "
            f"(unknown or not enabled region id?): {text.split(',', 1)[0]}"
        )
    return HuaweiApiError(f"huawei: {what}: {type(exc).__name__}: {text}")


class _Backoff(BackoffStrategy):  # type: ignore[misc]
    """Exponential back-off with equal jitter, from the section's base delay."""

    def __init__(self, base_seconds: float) -> None:
        self._base_ms = base_seconds * 1000

    def calculate_retry_delay_millis(self, retries: int) -> int:
        delay = self._base_ms * (2 ** (retries - 1))
        return int(delay / 2 + random.uniform(0, delay / 2))


def _throttled(response: Any, exc: Exception | None) -> bool:
    return isinstance(exc, ServiceResponseException) and (
        exc.status_code == 429 or str(exc.error_code) in _THROTTLED
    )


def _body(response: Any) -> Any:
    raw = getattr(response, "raw_content", None)
    if not raw:
        raise HuaweiApiError("huawei: empty response body")
    try:
        return json.loads(raw, parse_float=Decimal)
    except ValueError as exc:
        raise HuaweiApiError(f"huawei: response is not JSON: {exc}") from None


def _config(section: HuaweiSettings) -> Any:
    config = HttpConfig.get_default_config()
    config.timeout = section.timeout_seconds
    return config


def ecs_client(
    section: HuaweiSettings, region: str, ak: SecretStr, sk: SecretStr
) -> tuple[Any, str]:
    """An ECS client of ``region`` and the project id the SDK found for it in IAM."""
    override = section.ecs_endpoint_url
    try:
        where = Region(region, override) if override else EcsRegion.value_of(region)
    except KeyError:
        raise HuaweiApiError(
            f"huawei: region {region}: the SDK knows no ECS endpoint for it "
            "(check huawei.regions, or set huawei.ecs_endpoint_url)"
        ) from None
    credentials = BasicCredentials(ak.get_secret_value(), sk.get_secret_value())
    try:
        client = (
            EcsClient.new_builder()
            .with_credentials(credentials)
            .with_region(where)
            .with_http_config(_config(section))
            .build()
        )
    except (SdkException, ValueError) as exc:
        raise describe_error(exc, f"region {region}: project lookup") from None
    return client, str(credentials.project_id)


def bss_client(section: HuaweiSettings, ak: SecretStr, sk: SecretStr) -> tuple[Any, Any]:
    """The site's BSS client and its model module (bss and bssintl share shapes)."""
    package, client_name, region_path, region_id = _BSS[section.site]
    models = importlib.import_module(package)
    override = section.bss_endpoint_url
    if override:
        where = Region(region_id, override)
    else:
        module, _, class_name = region_path.partition(".")
        regions = importlib.import_module(f"{package}.region.{module}")
        where = getattr(regions, class_name).value_of(region_id)
    credentials = GlobalCredentials(ak.get_secret_value(), sk.get_secret_value())
    try:
        client = (
            getattr(models, client_name)
            .new_builder()
            .with_credentials(credentials)
            .with_region(where)
            .with_http_config(_config(section))
            .build()
        )
    except (SdkException, ValueError) as exc:
        raise describe_error(exc, "billing account lookup") from None
    return client, models


def call(section: HuaweiSettings, invoker: Any, what: str) -> Any:
    """Invoke an SDK call (retrying throttling) and return its JSON body, Decimal numbers."""
    if section.max_retries:
        invoker = invoker.with_retry(
            _throttled, section.max_retries, _Backoff(section.retry_base_seconds)
        )
    try:
        return _body(invoker.invoke())
    except SdkException as exc:
        raise describe_error(exc, what) from None


def list_flavors(section: HuaweiSettings, ecs: Any, region: str) -> list[Any]:
    """Every flavor ECS lists in ``region`` (``ListFlavors`` has no paging)."""
    body = call(
        section, ecs.list_flavors_invoker(ListFlavorsRequest()), f"region {region}: ListFlavors"
    )
    flavors = body.get("flavors") if isinstance(body, dict) else None
    if not isinstance(flavors, list):
        raise HuaweiApiError(f"huawei: region {region}: ListFlavors has no 'flavors' list")
    return flavors
