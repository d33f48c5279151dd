"""A local gRPC server playing Nebius with the recorded messages of tests/fixtures/nebius.

It answers the four calls the collector makes, with the Nebius SDK's own message
classes (the API's real protobuf shapes), over plain HTTP/2 on 127.0.0.1; the
collector reaches it through ``GPU_TRACKER_NEBIUS__ENDPOINT_URL=http://127.0.0.1:PORT``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nebius"


def message(name: str, payload: Any) -> Any:
    from nebius.base.protos.dynamic import REGISTRY

    text = payload if isinstance(payload, str) else json.dumps(payload)
    return REGISTRY.message_class(name).from_json(text)


def recorded(name: str, file: str) -> Any:
    return message(name, (FIXTURES / file).read_text())


@dataclass
class NebiusServer:
    """What the server answers, and what it was asked (for the tests' assertions)."""

    tenants: Any = field(
        default_factory=lambda: recorded("nebius.iam.v2.ListTenantsResponse", "tenants.json")
    )
    projects: Any = field(
        default_factory=lambda: recorded("nebius.iam.v2.ListProjectsResponse", "projects.json")
    )
    platforms: Any = field(
        default_factory=lambda: recorded(
            "nebius.compute.v1.ListPlatformsResponse", "platforms.json"
        )
    )
    estimates: list[tuple[Any, Any]] = field(default_factory=lambda: estimates())
    refuse: grpc.StatusCode | None = None
    refuse_estimates: bool = False
    pages: dict[tuple[str, str], Any] = field(default_factory=dict)
    """(service, page_token) -> a further page of that service's list."""
    tokens: list[str] = field(default_factory=list)
    asked: list[Any] = field(default_factory=list)

    def _answer(self, reply: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        def handle(request: Any, context: Any) -> Any:
            self.tokens.append(dict(context.invocation_metadata()).get("authorization", ""))
            if self.refuse is not None:
                context.abort(self.refuse, "token is invalid")
            return reply(request, context)

        return handle

    def _page(self, service: str, first: Callable[[], Any]) -> Callable[[Any], Any]:
        return lambda request: self.pages.get((service, request.page_token)) or first()

    def _estimate(self, request: Any, context: Any) -> Any:
        self.asked.append(request)
        if self.refuse_estimates:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "no billing access")
        for known, response in self.estimates:
            if known.to_json() == request.to_json():
                return response
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, "no recorded estimate")

    def handlers(self) -> list[grpc.GenericRpcHandler]:
        def unary(request: str, reply: Callable[[Any, Any], Any]) -> grpc.RpcMethodHandler:
            from nebius.base.protos.dynamic import REGISTRY

            return grpc.unary_unary_rpc_method_handler(
                self._answer(reply),
                request_deserializer=REGISTRY.message_class(request).FromString,
                response_serializer=lambda m: m.SerializeToString(),
            )

        services: dict[str, tuple[str, Callable[[], Any]]] = {
            "nebius.iam.v2.TenantService": (
                "nebius.iam.v2.ListTenantsRequest",
                lambda: self.tenants,
            ),
            "nebius.iam.v2.ProjectService": (
                "nebius.iam.v2.ListProjectsRequest",
                lambda: self.projects,
            ),
            "nebius.compute.v1.PlatformService": (
                "nebius.compute.v1.ListPlatformsRequest",
                lambda: self.platforms,
            ),
        }
        found: list[grpc.GenericRpcHandler] = []
        for name, (req, first) in services.items():
            page = self._page(name, first)
            handler = unary(req, lambda request, _context, page=page: page(request))
            found.append(grpc.method_handlers_generic_handler(name, {"List": handler}))
        found.append(
            grpc.method_handlers_generic_handler(
                "nebius.billing.v1alpha1.CalculatorService",
                {"Estimate": unary("nebius.billing.v1alpha1.EstimateRequest", self._estimate)},
            )
        )
        return found


def estimates() -> list[tuple[Any, Any]]:
    pairs = json.loads((FIXTURES / "estimates.json").read_text())
    return [
        (
            message("nebius.billing.v1alpha1.EstimateRequest", pair["request"]),
            message("nebius.billing.v1alpha1.EstimateResponse", pair["response"]),
        )
        for pair in pairs
    ]


@contextmanager
def serve_nebius(server: NebiusServer | None = None) -> Iterator[tuple[str, NebiusServer]]:
    """``(http://127.0.0.1:PORT, the server's state)`` while the server runs."""
    state = server or NebiusServer()
    grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    grpc_server.add_generic_rpc_handlers(tuple(state.handlers()))
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    grpc_server.start()
    try:
        yield f"http://127.0.0.1:{port}", state
    finally:
        grpc_server.stop(grace=None)
