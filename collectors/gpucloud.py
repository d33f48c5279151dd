"""What the GPU-cloud collectors (Lambda, RunPod, Vast.ai, OCI and the smaller clouds) share.

They are small JSON APIs with one documented URL each, so the common parts are
where the request goes (an override keeps the documented path), how a refused
key is reported (one line naming the setting, never the key), and how an item
that cannot be priced becomes a counted skip (:class:`collectors.base.SkipItem`)
instead of a guess.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any, ClassVar, Self, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx

from collectors.base import (
    CollectorError,
    MissingCredentials,
    NotConfigured,
    RunContext,
    SkipItem,
)
from collectors.http import HttpClient, HttpError
from collectors.json_fields import decimal_text, loose_number, number, text
from tracker.catalog import GpuMatch
from tracker.models import (
    AttributeValue,
    Availability,
    InvalidOffer,
    Offer,
    PricingModel,
)
from tracker.settings import ConfigError, KeyedCloudSettings, Settings

__all__ = [
    "AUTH_STATUSES",
    "Before",
    "GpuCloudCollector",
    "api_key_if_set",
    "api_key_or_skip",
    "availability_now",
    "decimal_text",
    "documented_url",
    "gpu_offer",
    "group_nodes",
    "listed_before",
    "loose_number",
    "number",
    "refused_or_failed",
    "text",
    "where_listed",
]

log = logging.getLogger(__name__)

AUTH_STATUSES = frozenset({401, 403})


def documented_url(documented: str, origin: str | None) -> str:
    """``documented`` with its scheme, host and port replaced by ``origin`` (if set).

    Proxies and mirrors serve the provider's own paths, so only the origin moves.
    """
    if not origin:
        return documented
    base = urlsplit(origin)
    parts = urlsplit(documented)
    return urlunsplit((base.scheme, base.netloc, parts.path, parts.query, ""))


def api_key_if_set(provider: str, section: Any) -> str:
    """The provider's API key, "" when none is set (a public list needs none).

    A disabled section is :class:`NotConfigured`, an unreadable ``*_file``
    :class:`MissingCredentials`. ``section`` is a :class:`KeyedCloudSettings`.
    """
    if not section.enabled:
        raise NotConfigured(f"disabled ({provider}.enabled = false)")
    try:
        key = section.resolved_api_key()
    except ConfigError as exc:
        raise MissingCredentials(str(exc)) from None
    return str(key.get_secret_value()) if key is not None else ""


def api_key_or_skip(provider: str, section: Any) -> str:
    """The provider's API key, or :class:`MissingCredentials` naming the setting.

    The runner prefixes the provider's name (``lambda: skipped: no API key: …``).
    """
    key = api_key_if_set(provider, section)
    if not key:
        raise MissingCredentials(f"no API key: set {section.key_setting()}")
    return key


def refused_or_failed(
    provider: str, exc: HttpError, setting: str = "", what: str = "the API key was"
) -> CollectorError:
    """The run's error for a failed request: a refused key says which setting to fix."""
    if exc.status in AUTH_STATUSES and setting:
        return CollectorError(f"{provider}: {what} refused (HTTP {exc.status}); check {setting}")
    return CollectorError(f"{provider}: {exc}")


def gpu_offer(
    where: str,
    match: GpuMatch,
    raw_name: str,
    attributes: Mapping[str, AttributeValue],
    **fields: Any,
) -> Offer:
    """The :class:`Offer` of a GPU sent as ``raw_name`` and resolved to ``match``.

    What every GPU cloud's parser does the same way: an unknown name is kept as sent
    (``gpu_unknown_reason`` says why, and ``gpus --unknown`` lists it), and an offer the
    model refuses is a counted ``invalid_offer`` skip naming ``where`` (when given)
    instead of a failed run. ``fields`` are the rest of the offer's fields.
    """
    why = {} if match.known else {"gpu_unknown_reason": match.reason}
    try:
        return Offer(
            gpu_model=match.name,
            gpu_known=match.known,
            gpu_raw_name=raw_name,
            attributes={**attributes, **why},
            **fields,
        )
    except InvalidOffer as exc:
        raise SkipItem("invalid_offer", f"{where}: {exc}" if where else str(exc)) from None


def where_listed(now: Collection[str], before: Collection[str] = ()) -> dict[str, Availability]:
    """Regions of one offer: ``available`` where the provider names it now, and
    ``unavailable`` where it was listed before and is no longer named.

    For providers that name only where they have capacity (Lambda, DigitalOcean,
    Verda): a region that ran out stays an offer instead of being delisted.
    """
    listed = {region: Availability.AVAILABLE for region in now}
    return listed | {r: Availability.UNAVAILABLE for r in before if r not in listed}


_Key = TypeVar("_Key")
_Member = TypeVar("_Member")


def group_nodes(
    nodes: Iterable[Any],
    rentable: Callable[[Any], Mapping[_Key, _Member]],
    skip: Callable[[str, str], None],
) -> dict[_Key, list[_Member]]:
    """A marketplace's nodes grouped into series (Lium, Hyperbolic): ``rentable(node)``
    maps every series key the node can be rented as to its member (price, node); a node
    it refuses with :class:`SkipItem` is a counted skip naming the node's ``id``."""
    groups: dict[_Key, list[_Member]] = defaultdict(list)
    for node in nodes:
        try:
            for key, member in rentable(node).items():
                groups[key].append(member)
        except SkipItem as exc:
            where = node.get("id") if isinstance(node, Mapping) else None
            skip(exc.reason, f"node {where}: {exc.detail}" if where else exc.detail)
    return groups


Before = Mapping[tuple[str, str], Collection[str]]
"""(pricing, instance type) -> the regions listed before (:func:`listed_before`)."""


def availability_now(
    fits: bool, region: str, instance_type: str, before: Before
) -> Availability | None:
    """One on-demand shape in one region: ``available`` when it fits the capacity the
    provider reports now, ``unavailable`` when it does not but was listed before (it
    stays an offer), None when it is no offer at all (:func:`where_listed` for a
    provider that reports capacity per shape)."""
    key = (PricingModel.ON_DEMAND.value, instance_type)
    return where_listed([region] if fits else (), before.get(key, ())).get(region)


def listed_before(ctx: RunContext) -> dict[tuple[str, str], set[str]]:
    """(pricing, instance type) -> the regions this source lists now (in the store)."""
    found: dict[tuple[str, str], set[str]] = {}
    for key in ctx.listed_keys():  # (provider, instance_type, region, zone, pricing, …)
        found.setdefault((key[4], key[1]), set()).add(key[2])
    return found


class GpuCloudCollector:
    """Construction, endpoint and JSON requests the GPU-cloud collectors share.

    A subclass names its settings section and documented URL and implements
    ``collect``; a section with an API key (:class:`KeyedCloudSettings`) makes the
    collector need one and send it as a bearer token.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    pricing_models: ClassVar[frozenset[PricingModel]]
    documented: ClassVar[str]
    """The provider's documented URL; ``<section>.endpoint_url`` replaces its origin."""
    spot_fetched_separately: ClassVar[bool] = False
    """Most of these APIs return spot with everything else (see collectors/base.py)."""
    credential: ClassVar[str] = "the API key was"
    """What a 401/403 says was refused (``the client credentials were``)."""
    key_header: ClassVar[tuple[str, str]] = ("Authorization", "Bearer {}")
    """The header the key travels in and its form (Hot Aisle's ``Token {}``)."""

    def __init__(
        self,
        settings: Settings,
        api_key: str = "",
        *,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self._api_key = api_key
        self._sleep = sleep
        self._transport = transport

    @classmethod
    def section(cls, settings: Settings) -> Any:
        return settings.section(cls.name)

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        section = cls.section(settings)
        if isinstance(section, KeyedCloudSettings):
            return cls(settings, api_key_or_skip(cls.name, section))
        if not section.enabled:
            raise NotConfigured(f"disabled ({cls.name}.enabled = false)")
        return cls(settings)

    @property
    def url(self) -> str:
        return documented_url(self.documented, self.section(self.settings).endpoint_url)

    def scope(self, ctx: RunContext) -> frozenset[PricingModel]:
        """The pricing models this run wants that the provider sells."""
        return ctx.pricing_scope & self.pricing_models

    def credential_setting(self) -> str:
        """How a user sets the credential, for the line that says it was refused."""
        section = self.section(self.settings)
        return section.key_setting() if isinstance(section, KeyedCloudSettings) else ""

    def client(self, token: str = "") -> HttpClient:
        """A client sending ``token`` (default: the API key) in :attr:`key_header`;
        without either, no such header."""
        # The key goes in a header, never the URL, so it cannot reach a log line.
        key = token or self._api_key
        name, form = self.key_header
        headers = {name: form.format(key)} if key else {}
        return HttpClient(
            self.settings.http, headers=headers, transport=self._transport, sleep=self._sleep
        )

    def listing(
        self,
        ctx: RunContext,
        parse: Callable[[Any, frozenset[PricingModel]], list[Offer]],
        method: str = "GET",
        **request: Any,
    ) -> Iterator[Offer]:
        """The offers of a provider that lists every price in one request of :attr:`url`
        (a GET, or ``method`` with ``request``'s body, e.g. Hyperbolic's POST):
        ``parse(payload, scope)`` turns the JSON into offers; nothing is fetched when the
        run wants none of the pricing models the provider sells."""
        scope = self.scope(ctx)
        if not scope:
            return
        with self.client() as http:
            payload = self.fetch(http, method, **request)
        offers = parse(payload, scope)
        log.info("%s: %d offers", self.name, len(offers))
        yield from offers

    def gather(
        self,
        ctx: RunContext,
        pages: Callable[[HttpClient, Callable[[str, str], None]], Iterable[Offer]],
    ) -> list[Offer]:
        """The offers ``pages(http, skip)`` reads (e.g. page after page) that are in the
        run's pricing scope; nothing is fetched when the run wants none of the models the
        provider sells."""
        scope = self.scope(ctx)
        if not scope:
            return []
        with self.client() as http:
            return [o for o in pages(http, ctx.skip) if o.pricing in scope]

    def fetch(self, http: HttpClient, method: str, url: str = "", **kwargs: Any) -> Any:
        """The JSON body of one request to :attr:`url` (or ``url``, e.g. a next page
        already moved to the override's origin); retries are the client's."""
        try:
            response = http.request(method, url or self.url, **kwargs)
        except HttpError as exc:
            raise refused_or_failed(
                self.name, exc, self.credential_setting(), self.credential
            ) from exc
        try:
            return response.json()
        except ValueError as exc:
            raise CollectorError(f"{self.name}: response is not JSON: {exc}") from exc
