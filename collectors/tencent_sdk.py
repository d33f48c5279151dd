"""The Tencent Cloud SDK's side of the collector: the client, its retry policy, errors.

Kept apart from :mod:`collectors.tencent` and imported only when Tencent is called:
every CLI command lists the collectors (importing their modules), and importing the
SDK costs about 0.4 s, as Alibaba's and Huawei's SDKs are kept out of that path too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from tencentcloud.common.credential import Credential
from tencentcloud.common.exception.tencent_cloud_sdk_exception import (
    TencentCloudSDKException,
)
from tencentcloud.common.profile.client_profile import ClientProfile
from tencentcloud.common.profile.http_profile import HttpProfile
from tencentcloud.common.retry import StandardRetryer
from tencentcloud.cvm.v20170312.cvm_client import CvmClient

from tracker.settings import Settings

__all__ = [
    "INTERNATIONAL_ENDPOINT",
    "Retryer",
    "TencentCloudSDKException",
    "describe_error",
    "endpoint_profile",
    "is_code",
    "make_client",
]

log = logging.getLogger("collectors.tencent")

INTERNATIONAL_ENDPOINT = "cvm.intl.tencentcloudapi.com"
"""The international site's CVM endpoint (the China site's is the SDK's default,
``cvm.tencentcloudapi.com``)."""


def endpoint_profile(settings: Settings) -> HttpProfile:
    """Where the SDK sends requests: ``endpoint_url`` (scheme and host[:port]) or the site's."""
    tencent = settings.tencent
    profile = HttpProfile(reqTimeout=int(max(1, settings.http.timeout_seconds)))
    if tencent.endpoint_url:
        scheme, _, host = tencent.endpoint_url.partition("://")
        profile.protocol = profile.scheme = scheme
        profile.endpoint = host
    elif tencent.site == "international":
        profile.endpoint = INTERNATIONAL_ENDPOINT
    return profile


def describe_error(exc: TencentCloudSDKException) -> str:
    """``Code: message`` on one line (a network error's message may be a bytes body)."""
    message = exc.get_message()
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    text = " ".join(str(message or "").split())
    return f"{exc.get_code()}: {text}" if text else str(exc.get_code())


def is_code(exc: TencentCloudSDKException, codes: tuple[str, ...]) -> bool:
    """Whether the error's code is one of ``codes`` or a sub-code of one (``AuthFailure.X``)."""
    code = str(exc.get_code() or "")
    return any(code == c or code.startswith(f"{c}.") for c in codes)


class Retryer(StandardRetryer):  # type: ignore[misc]
    """The SDK's retry policy (throttling and network errors, its ``should_retry``) with
    one fix: ``StandardRetryer.send_request`` in tencentcloud-sdk-python-common 3.1.195
    keeps the previous attempt's exception, so an attempt that succeeds after a
    throttled one is still judged failed and the call ends with the stale error
    (tests/collectors/test_tencent.py shows it). Each attempt is judged on its own here.
    """

    def send_request(self, fn: Callable[[], Any]) -> Any:
        for attempt in range(self._max_attempts):
            try:
                return fn()
            except TencentCloudSDKException as exc:
                if attempt + 1 >= self._max_attempts or not self.should_retry(None, exc):
                    raise
                delay = self._backoff_fn(attempt)
                self.on_retry(attempt, delay, None, exc)
                time.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")


def make_client(
    settings: Settings,
    secret_id: str,
    secret_key: str,
    region: str,
    backoff: Callable[[int], float],
) -> CvmClient:
    """A CVM client for ``region``: signed with the key pair, sent where
    :func:`endpoint_profile` says, retried by :class:`Retryer` with ``backoff``."""
    retryer = Retryer(max_attempts=settings.http.max_retries + 1, backoff_fn=backoff, logger=log)
    profile = ClientProfile(
        httpProfile=endpoint_profile(settings), language="en-US", retryer=retryer
    )
    return CvmClient(Credential(secret_id, secret_key), region, profile)
