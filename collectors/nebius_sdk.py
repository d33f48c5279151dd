"""The Nebius API calls the Nebius collector makes, through the official Nebius SDK.

Nebius AI Cloud has no REST gateway: its API is gRPC, one service per host
(``<service>.api.nebius.cloud:443``), which the SDK resolves, authorizes (an IAM token,
or a service account's key exchanged for tokens) and retries. This module keeps the
SDK's types and errors in one place: the collector gets plain lists and cost strings,
and every failure becomes one :class:`CollectorError` line naming the provider (a
refused credential names the settings to fix, never the token).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

from collectors.base import CollectorError
from tracker.settings.small_clouds import NebiusSettings

__all__ = ["NebiusApi", "Platform", "Refused"]

PROVIDER = "nebius"
USER_AGENT = "gpu-tracker"
REFUSED = frozenset({"UNAUTHENTICATED", "PERMISSION_DENIED"})
PAGE_SIZE = 999  # the largest page the list methods accept (gpuhunt asks for the same)
MAX_PAGES = 100

Platform = Any
"""``nebius.api.nebius.compute.v1.Platform`` (the SDK's messages are untyped here)."""


class Refused(CollectorError):
    """The API refused the credentials: nothing else can be asked this run."""


def _status(exc: BaseException) -> str:
    """The gRPC status name of a failed call (``UNAUTHENTICATED``), or ""."""
    status = getattr(exc, "status", None)
    code = getattr(status, "code", None) or getattr(exc, "code", None)
    if callable(code):
        code = code()
    return str(getattr(code, "name", code or ""))


class NebiusApi:
    """One SDK channel for one collection run (``with NebiusApi(settings, t) as api``)."""

    def __init__(self, settings: NebiusSettings, timeout: float, token: str = "") -> None:
        self.settings = settings
        self.timeout = timeout
        self._token = token
        self._sdk: Any = None

    def __enter__(self) -> Self:
        from nebius.base.constants import DOMAIN  # the SDK loads its API on import: here
        from nebius.base.options import INSECURE
        from nebius.base.resolver import Constant
        from nebius.sdk import SDK

        kwargs: dict[str, Any] = {"user_agent_prefix": USER_AGENT, "domain": DOMAIN}
        if self._token:
            kwargs["credentials"] = self._token
        else:
            kwargs["credentials_file_name"] = self.settings.credentials_file
        if self.settings.endpoint_url:
            origin = urlsplit(self.settings.endpoint_url)
            kwargs["resolver"] = Constant(origin.netloc)
            if origin.scheme == "http":
                kwargs["options"] = [(INSECURE, True)]
        try:
            self._sdk = SDK(**kwargs)
        except Exception as exc:  # the SDK's own errors: a bad credentials file, …
            raise CollectorError(f"{PROVIDER}: cannot set up the SDK: {_line(exc)}") from exc
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._sdk is not None:
            self._sdk.sync_close(timeout=self.timeout)
            self._sdk = None

    def _call(self, what: str, start: Callable[..., Any], request: Any) -> Any:
        """The response of one unary call; its failure as one line naming ``what``."""
        try:
            return start(request, timeout=self.timeout).wait()
        except Exception as exc:  # RequestError, grpc.RpcError, SDKError, timeouts
            code = _status(exc)
            if code in REFUSED:
                raise Refused(
                    f"{PROVIDER}: the credentials were refused ({code}) {what}; "
                    f"check {self.settings.key_setting()}"
                ) from exc
            raise CollectorError(f"{PROVIDER}: {what} failed: {_line(exc)}") from exc

    def _pages(
        self, what: str, start: Callable[..., Any], make: Callable[[str], Any]
    ) -> Iterator[Any]:
        token = ""
        for _ in range(MAX_PAGES):
            page = self._call(what, start, make(token))
            yield from page.items
            token = page.next_page_token
            if not token:
                return
        raise CollectorError(f"{PROVIDER}: {what}: more than {MAX_PAGES} pages")

    def project_per_region(self) -> dict[str, str]:
        """Region -> one project of the account there: prices are asked per project."""
        from nebius.api.nebius.iam.v2 import (
            ListProjectsRequest,
            ListTenantsRequest,
            ProjectServiceClient,
            TenantServiceClient,
        )

        tenants = TenantServiceClient(self._sdk)
        projects = ProjectServiceClient(self._sdk)
        found: dict[str, str] = {}
        tenant_ids = [
            str(tenant.metadata.id)
            for tenant in self._pages(
                "listing tenants",
                tenants.list,
                lambda t: ListTenantsRequest(page_size=PAGE_SIZE, page_token=t),
            )
        ]
        for tenant_id in tenant_ids:

            def page(token: str, parent: str = tenant_id) -> Any:
                return ListProjectsRequest(parent_id=parent, page_size=PAGE_SIZE, page_token=token)

            for project in self._pages("listing projects", projects.list, page):
                found.setdefault(str(project.spec.region), str(project.metadata.id))
        return found

    def platforms(self, project_id: str) -> list[Platform]:
        """The compute platforms (with their presets) a project can create VMs on."""
        from nebius.api.nebius.compute.v1 import ListPlatformsRequest, PlatformServiceClient

        client = PlatformServiceClient(self._sdk)
        return list(
            self._pages(
                "listing platforms",
                client.list,
                lambda t: ListPlatformsRequest(
                    parent_id=project_id, page_size=PAGE_SIZE, page_token=t
                ),
            )
        )

    def hourly_cost(self, project_id: str, platform: str, preset: str, spot: bool) -> str:
        """The calculator's hourly cost of one VM of ``platform``/``preset`` (decimal text)."""
        from nebius.api.nebius.billing.v1alpha1 import (
            CalculatorServiceClient,
            EstimateRequest,
            ResourceSpec,
        )
        from nebius.api.nebius.common.v1 import ResourceMetadata
        from nebius.api.nebius.compute.v1 import (
            CreateInstanceRequest,
            InstanceSpec,
            PreemptibleSpec,
            ResourcesSpec,
        )

        # A preemptible VM as Nebius's docs create one (its ``priority`` is deprecated).
        stop = PreemptibleSpec(on_preemption=PreemptibleSpec.PreemptionPolicy.STOP)
        spec = InstanceSpec(
            resources=ResourcesSpec(platform=platform, preset=preset),
            preemptible=stop if spot else None,
        )
        vm = CreateInstanceRequest(metadata=ResourceMetadata(parent_id=project_id), spec=spec)
        request = EstimateRequest(resource_spec=ResourceSpec(compute_instance_spec=vm))
        answer = self._call(
            "estimating prices", CalculatorServiceClient(self._sdk).estimate, request
        )
        return str(answer.hourly_cost.general.total.cost)


def _line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
