"""Verda (formerly DataCrunch) instance prices from its public API (client credentials).

Instant Clusters (``/cluster-types``) are read too, as fixed-size cluster offers: see
:mod:`collectors.verda_clusters`.

``POST /v1/oauth2/token`` (client credentials, as the official SDK sends them) gives a
bearer token; ``GET /v1/instance-types?currency=usd`` lists every instance type with
``price_per_hour`` (on-demand) and ``spot_price`` as decimal strings. Both are the
price of the **whole instance** (an ``8V100.48M`` is one price for its 8 GPUs): the
same field prices the GPU-less ``CPU.*`` types, which can only be a per-instance
figure, and the SDK's ``Instance.price_per_hour`` is what a running instance costs.
GPU count is ``gpu.number_of_gpus`` (checked against the ``8x`` of ``gpu.description``,
whose rest names the model); ``gpu_memory.size_in_gigabytes`` is the VRAM of all GPUs.

Locations come from ``GET /v1/instance-availability?isSpot=false|true``: a list of
``{location_code, availabilities: [instance types deployable there now]}``. Each
(type, location listed) is an ``available`` offer; as for Lambda, a (type, location)
listed before that is no longer named stays an ``unavailable`` offer instead of being
delisted (Verda names only what it can deploy now).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar, Self

from collectors.base import (
    CollectorError,
    MissingCredentials,
    NotConfigured,
    RunContext,
    SkipItem,
    parse_each,
)
from collectors.gpucloud import (
    GpuCloudCollector,
    decimal_text,
    documented_url,
    gpu_offer,
    listed_before,
    text,
    where_listed,
)
from collectors.http import HttpClient, HttpError
from collectors.verda_clusters import parse_cluster_types
from tracker.catalog import resolve_gpu
from tracker.fixed_clusters import CLUSTER_CLASS
from tracker.models import AttributeValue, Interconnect, Offer, PricingModel
from tracker.settings import ConfigError, Settings, VerdaSettings

__all__ = [
    "CLUSTER_AVAILABILITY_URL",
    "CLUSTER_TYPES_URL",
    "DOCUMENTED_URL",
    "VerdaCollector",
    "locations",
    "parse_instance_types",
]

log = logging.getLogger(__name__)

PROVIDER = "verda"
DOCUMENTED_URL = "https://api.verda.com/v1/instance-types"
TOKEN_URL = "https://api.verda.com/v1/oauth2/token"
AVAILABILITY_URL = "https://api.verda.com/v1/instance-availability"
CLUSTER_TYPES_URL = "https://api.verda.com/v1/cluster-types"
CLUSTER_AVAILABILITY_URL = "https://api.verda.com/v1/cluster-availability"
_COUNT_PREFIX = re.compile(r"^\s*(\d+)\s*x\s+(.+?)\s*$", re.IGNORECASE)
# (pricing, price field, isSpot query value)
_PRICES = (
    (PricingModel.ON_DEMAND, "price_per_hour", "false"),
    (PricingModel.SPOT, "spot_price", "true"),
)

Where = Mapping[tuple[str, str], Collection[str]]
"""(pricing, instance type) -> location codes (deployable now, or listed before)."""


def _whole(part: Any, field: str, where: str) -> Decimal | None:
    value = part.get(field) if isinstance(part, Mapping) else None
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise SkipItem("malformed_item", f"{where}.{field} is not a whole number ({value!r})")
    return Decimal(value)


def _gpu(item: Mapping[str, Any]) -> tuple[int, str]:
    """(count, model description without the ``Nx``) of a type; count 0 for a CPU type."""
    count = _whole(item.get("gpu"), "number_of_gpus", "gpu")
    if count is None:
        raise SkipItem("malformed_item", "gpu.number_of_gpus missing")
    if count == 0:
        return 0, ""
    description = text(item["gpu"], "description")
    prefix = _COUNT_PREFIX.match(description)
    if prefix is None:
        return int(count), description
    if int(prefix.group(1)) != count:
        raise SkipItem(
            "inconsistent_gpu_count",
            f"gpu.number_of_gpus {count} but the description says {description!r}",
        )
    return int(count), prefix.group(2)


def parse_instance_type(item: Any, now: Where, before: Where) -> list[Offer] | None:
    """Offers for one instance type (``None`` without GPUs), ``available`` where ``now``
    lists it, ``unavailable`` where only ``before`` (the store) does."""
    if not isinstance(item, Mapping):
        raise SkipItem("malformed_item", f"instance type is {type(item).__name__}")
    name = text(item, "instance_type")
    count, model = _gpu(item)
    if count == 0:
        return None
    currency = item.get("currency", "usd")  # the collector asks for ?currency=usd
    if not isinstance(currency, str) or len(currency) != 3:
        raise SkipItem("malformed_item", f"currency is {currency!r}")
    total_vram = _whole(item.get("gpu_memory"), "size_in_gigabytes", "gpu_memory")
    per_gpu = total_vram / count if total_vram else None
    match = resolve_gpu(model, per_gpu)
    attributes: dict[str, AttributeValue] = {"gpu_description": model}
    attributes |= {
        f: item[f] for f in ("name", "description", "p2p") if isinstance(item.get(f), str)
    }
    interconnect = Interconnect.NVLINK if "SXM" in model.upper() else Interconnect.UNKNOWN
    offers = []
    for pricing, field, _ in _PRICES:
        price = decimal_text(item, field)
        if not price:  # absent or 0: not sold this way
            continue
        regions = where_listed(now.get((pricing, name), ()), before.get((pricing, name), ()))
        offers += [
            gpu_offer(
                name,
                match,
                model,
                attributes,
                provider=PROVIDER,
                instance_type=name,
                region=location,
                pricing=pricing,
                price_per_hour=price,
                currency=currency.upper(),
                gpu_count=Decimal(count),
                gpu_memory_gib=per_gpu,
                vcpus=_whole(item.get("cpu"), "number_of_cores", "cpu"),
                memory_gib=_whole(item.get("memory"), "size_in_gigabytes", "memory"),
                interconnect=interconnect,
                availability=availability,
            )
            for location, availability in sorted(regions.items())
        ]
    return offers


def locations(payload: Any, pricing: PricingModel) -> dict[tuple[str, str], set[str]]:
    """(pricing, instance type) -> location codes deployable now (``/instance-availability``)."""
    if not isinstance(payload, list):
        raise CollectorError("verda: instance-availability is not a list of locations")
    found: dict[tuple[str, str], set[str]] = {}
    for entry in payload:
        code = entry.get("location_code") if isinstance(entry, Mapping) else None
        names = entry.get("availabilities") if isinstance(entry, Mapping) else None
        if not isinstance(code, str) or not code or not isinstance(names, list):
            raise CollectorError(f"verda: malformed instance-availability entry {entry!r}")
        for name in names:
            if isinstance(name, str) and name:
                found.setdefault((pricing.value, name), set()).add(code)
    return found


def parse_instance_types(
    payload: Any, now: Where, skip: Callable[[str, str], None], before: Where | None = None
) -> list[Offer]:
    """Every GPU offer in an ``/instance-types`` response; unpriceable types are skips."""
    if not isinstance(payload, list):
        raise CollectorError("verda: instance-types is not a list")
    found = parse_each(
        payload,
        lambda item: parse_instance_type(item, now, before or {}),
        skip,
        where=lambda item: (
            str(item.get("instance_type") or "") if isinstance(item, Mapping) else ""
        ),
    )
    return [offer for offers in found for offer in offers]


class VerdaCollector(GpuCloudCollector):
    """On-demand and spot instance prices from Verda (DataCrunch)."""

    name: ClassVar[str] = PROVIDER
    description: ClassVar[str] = "Verda (DataCrunch) instance types (on-demand/spot)"
    pricing_models: ClassVar[frozenset[PricingModel]] = frozenset(
        {PricingModel.ON_DEMAND, PricingModel.SPOT}
    )
    spot_fetched_separately: ClassVar[bool] = False  # spot is in the same instance-types list
    documented: ClassVar[str] = DOCUMENTED_URL
    credential: ClassVar[str] = "the client credentials were"

    def __init__(
        self, settings: Settings, client_id: str = "", secret: str = "", **kw: Any
    ) -> None:
        super().__init__(settings, **kw)
        self._client_id = client_id
        self._secret = secret

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        if not settings.verda.enabled:
            raise NotConfigured("disabled (verda.enabled = false)")
        try:
            pair = settings.verda.credentials()
        except ConfigError as exc:
            raise MissingCredentials(str(exc)) from None
        if pair is None:
            raise MissingCredentials(f"no client credentials: set {VerdaSettings.key_setting()}")
        return cls(settings, pair[0].get_secret_value(), pair[1].get_secret_value())

    def credential_setting(self) -> str:
        return VerdaSettings.key_setting()

    def token(self, http: HttpClient) -> str:
        """A bearer token for the client credentials (as the official SDK asks for one)."""
        body = {"grant_type": "client_credentials", "client_id": self._client_id}
        body["client_secret"] = self._secret
        url = documented_url(TOKEN_URL, self.settings.verda.endpoint_url)
        try:
            answer = self.fetch(http, "POST", url, json=body)
        except CollectorError as exc:  # OAuth2 answers a bad client with 400 or 401
            if isinstance(exc.__cause__, HttpError) and exc.__cause__.status == 400:
                why = f"{self.credential} refused (HTTP 400)"
                raise CollectorError(f"verda: {why}; check {self.credential_setting()}") from exc
            raise
        token = answer.get("access_token") if isinstance(answer, Mapping) else None
        if not isinstance(token, str) or not token:
            raise CollectorError("verda: the token response has no access_token")
        return token

    def collect(self, ctx: RunContext) -> Iterator[Offer]:
        scope = self.scope(ctx)
        if not scope:
            return
        with self.client() as anonymous:
            token = self.token(anonymous)
        where = documented_url(AVAILABILITY_URL, self.settings.verda.endpoint_url)
        now: dict[tuple[str, str], set[str]] = {}
        with self.client(token) as http:
            types = self.fetch(http, "GET", params={"currency": "usd"})
            for pricing, _, is_spot in _PRICES:
                if pricing in scope:
                    listed = self.fetch(http, "GET", where, params={"isSpot": is_spot})
                    now |= locations(listed, pricing)
            clusters = self._clusters(http, ctx) if PricingModel.ON_DEMAND in scope else None
        before = listed_before(ctx)
        offers = parse_instance_types(types, now, ctx.skip, before)
        if clusters is not None:
            offers += parse_cluster_types(clusters[0], clusters[1], ctx.skip, before)
        log.info("verda: %d offers", len(offers))
        yield from (offer for offer in offers if offer.pricing in scope)

    def _clusters(
        self, http: HttpClient, ctx: RunContext
    ) -> tuple[Any, dict[tuple[str, str], set[str]]] | None:
        """Instant Clusters (:mod:`collectors.verda_clusters`): the cluster types and
        where each is deployable now (pay as you go: on demand only).

        A cluster call that fails costs the run its clusters, not its instance prices:
        one WARNING, and every location that listed a cluster before is marked partial,
        so nothing stored there is delisted by a run that could not see its clusters."""
        origin = self.settings.verda.endpoint_url
        try:
            types = self.fetch(
                http, "GET", documented_url(CLUSTER_TYPES_URL, origin), params={"currency": "usd"}
            )
            listed = self.fetch(http, "GET", documented_url(CLUSTER_AVAILABILITY_URL, origin))
        except CollectorError as exc:
            reason = f"clusters: {exc}"
            log.warning("verda: %s", reason)
            # (provider, instance_type, region, zone, pricing, payment_option, offering_class, os)
            for key in ctx.listed_keys():
                if key[6] == CLUSTER_CLASS:
                    ctx.mark_partial(key[2], reason)
            return None
        return types, locations(listed, PricingModel.ON_DEMAND)
