"""Alert rules: the ``[[rules]]`` tables of the rules file, validated into typed rules.

Each rule type has its own model with ``extra="forbid"``, so a key that means
nothing for that type (a filter the type cannot apply, a typo) is refused with the
rule's name and the key rather than silently ignored: a rule that never fires
because of a typo is worse than a service that does not start.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Collection, Sequence
from datetime import timedelta
from decimal import Decimal
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tracker.catalog import GpuSelection, select_gpus
from tracker.catalog.select import gpu_models_for
from tracker.filters import OfferFilter
from tracker.fx import USD, parse_currency
from tracker.models import PricingModel
from tracker.settings import ConfigError
from tracker.settings.base import split_csv

if TYPE_CHECKING:
    from tracker.recommend.profiles import ProfileSet
    from tracker.recommend.saved_plans import PlanTarget

__all__ = [
    "RULE_TYPES",
    "AlertRule",
    "CollectorHealthRule",
    "NewHardwareRule",
    "PriceChangeRule",
    "RankingChangeRule",
    "RulesError",
    "SpotDiscountRule",
    "load_rules",
    "parse_duration",
    "parse_rules",
]


class RulesError(ConfigError):
    """A rules file that cannot be used: one line naming the file, the rule and the key."""


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(value: Any) -> timedelta:
    """``"6h"``, ``"30m"``, ``"1d"``, ``"90s"``, ``"2w"``, or 0 (no cooldown)."""
    if value in (0, "0", ""):
        return timedelta(0)
    match = _DURATION.match(str(value)) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f'expected a duration like "6h", "30m" or "1d", got {value!r}')
    return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])


Percent = Annotated[Decimal, Field(gt=0, le=100)]
Names = Annotated[list[str], Field(default_factory=list)]
Currency = Annotated[str, AfterValidator(parse_currency)]
"""The currency a rule reads prices in and shows them in (an ISO code; USD by default)."""
PriceBasis = Literal["net", "list"]
"""Which price a rule compares: ``net`` (default) what the account pays under its
``[[discounts]]`` (the list price where no rule applies), or ``list``."""


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64)
    channels: list[str] | None = None
    """None: every configured channel."""
    cooldown: timedelta = timedelta(0)
    """After firing about a subject, stay quiet about that subject this long."""

    @field_validator("cooldown", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> timedelta:
        return value if isinstance(value, timedelta) else parse_duration(value)

    @field_validator("channels", mode="before")
    @classmethod
    def _channels(cls, value: Any) -> Any:
        return split_csv(value)


class _OfferFilters(_Rule):
    gpu_model: Names
    """Any spelling the catalog resolves; a family (``H100``) matches all its variants."""
    provider: Names
    region: Names

    _csv = field_validator("gpu_model", "provider", "region", mode="before")(split_csv)

    @field_validator("gpu_model")
    @classmethod
    def _gpus(cls, value: list[str]) -> list[str]:
        """Each name resolved through the catalog now: a rule naming a GPU the catalog
        does not know (``H1000``) could never match, so it is refused, not kept."""
        for name in value:
            if not name.strip():
                raise ValueError("empty GPU name")
            if not gpu_models_for(name):
                raise ValueError(
                    f"{name!r} is not a GPU the catalog knows (a model like H100-SXM, "
                    "a family like H100, or a provider's spelling of one)"
                )
        return value

    @cached_property
    def gpus(self) -> GpuSelection | None:
        return select_gpus(self.gpu_model) if self.gpu_model else None

    @property
    def offers(self) -> OfferFilter:
        """The rule's filters as every read takes them."""
        return OfferFilter.of(
            gpu=self.gpu_model,
            provider=self.provider,
            region=self.region,
            pricing=getattr(self, "pricing", None),
        )

    def matches(self, provider: str, region: str, gpu_model: str, gpu_raw_name: str = "") -> bool:
        if self.provider and provider not in self.provider:
            return False
        if self.region and region not in self.region:
            return False
        gpus = self.gpus
        return gpus is None or gpus.matches(gpu_model, gpu_raw_name)


class _PricedFilters(_OfferFilters):
    """Offer filters that also name pricing models (empty: every one)."""

    pricing: list[PricingModel] = Field(default_factory=list)

    _pricing_csv = field_validator("pricing", mode="before")(split_csv)

    def matches_priced(
        self, pricing: str, provider: str, region: str, gpu_model: str, gpu_raw_name: str = ""
    ) -> bool:
        if self.pricing and pricing not in {p.value for p in self.pricing}:
            return False
        return self.matches(provider, region, gpu_model, gpu_raw_name)


class PriceChangeRule(_PricedFilters):
    """A price moved by at least ``threshold_percent`` between consecutive intervals."""

    type: Literal["price_change"]
    threshold_percent: Percent
    direction: Literal["either", "down", "up"] = "either"
    currency: Currency = USD
    on: PriceBasis = "net"
    """``net``: the move of what the account pays (a fixed net price never moves)."""


class SpotDiscountRule(_OfferFilters):
    """Spot at least ``threshold_percent`` below on-demand, fired when it crosses; both
    at the net price the account pays unless ``on = "list"``."""

    type: Literal["spot_discount"]
    threshold_percent: Percent
    currency: Currency = USD
    on: PriceBasis = "net"


HardwareEvent = Literal["gpu_model", "instance_type", "region"]
NEW_HARDWARE_EVENTS: tuple[HardwareEvent, ...] = ("gpu_model", "instance_type", "region")


class NewHardwareRule(_PricedFilters):
    """A GPU model, an instance type, or a provider's region with a GPU, seen first now."""

    type: Literal["new_hardware"]
    events: list[HardwareEvent] = Field(default_factory=lambda: list(NEW_HARDWARE_EVENTS))

    _events_csv = field_validator("events", mode="before")(split_csv)


RankingEvent = Literal["leader", "top_n", "cost"]
RANKING_EVENTS: tuple[RankingEvent, ...] = ("leader", "top_n", "cost")


class RankingChangeRule(_Rule):
    """A profile's best offer changed, a GPU model entered its top N, or its cost moved;
    or, with ``plan``, a saved plan's best provider changed or its best total moved."""

    type: Literal["ranking_change"]
    profile: Names
    plan: Names
    """Saved plans (``[plans.NAME]`` of the profiles file) watched instead of profiles."""
    threshold_percent: Percent | None = None
    """The best job cost moved by at least this much (no threshold: no cost events)."""
    top_n: int = Field(default=3, ge=1, le=100)
    events: list[RankingEvent] = Field(default_factory=lambda: list(RANKING_EVENTS))
    currency: Currency = USD
    on: PriceBasis = "net"
    """A saved plan is priced at the net price unless ``list``; a profile's ranking is
    the one snapshotted after each collection, at the net price (``list`` is refused)."""

    _csv = field_validator("profile", "plan", "events", mode="before")(split_csv)

    @field_validator("on")
    @classmethod
    def _list_is_for_plans(cls, value: str, info: ValidationInfo) -> str:
        if value == "list" and info.data.get("profile"):
            raise ValueError(
                '"list" is for plan rules: a profile\'s rankings are snapshotted once '
                "after each collection, at the net price"
            )
        return value

    @model_validator(mode="before")
    @classmethod
    def _plan_events(cls, data: Any) -> Any:
        """A plan has one best plan, no top N: its events default to leader and cost."""
        if isinstance(data, dict) and data.get("plan") and "events" not in data:
            return {**data, "events": ["leader", "cost"]}
        return data

    _targets: dict[str, PlanTarget] = PrivateAttr(default_factory=dict)

    @property
    def targets(self) -> dict[str, PlanTarget]:
        """The saved plans named by ``plan``, attached when the rules load."""
        return self._targets


class CollectorHealthRule(_Rule):
    """A collector turned stale or failed ``failures`` runs in a row, and when it recovers."""

    type: Literal["collector_health"]
    provider: Names
    failures: int = Field(default=3, ge=1, le=1000)

    _csv = field_validator("provider", mode="before")(split_csv)


AlertRule = Annotated[
    PriceChangeRule | SpotDiscountRule | NewHardwareRule | RankingChangeRule | CollectorHealthRule,
    Field(discriminator="type"),
]
RULE_TYPES = ("price_change", "spot_discount", "new_hardware", "ranking_change", "collector_health")
_ADAPTER: TypeAdapter[AlertRule] = TypeAdapter(AlertRule)


def _rule_error(where: str, index: int, raw: Any, exc: ValidationError) -> RulesError:
    name = raw.get("name") if isinstance(raw, dict) else None
    label = f"rule {name!r}" if isinstance(name, str) and name else f"rules[{index}]"
    first = exc.errors()[0]
    loc = [str(p) for p in first["loc"]]
    kind = raw.get("type") if isinstance(raw, dict) else None
    if loc and loc[0] == kind:  # the discriminated union names the branch first
        loc = loc[1:]
    key = ".".join(loc) or "type"
    if first["type"] == "extra_forbidden":
        message = f"unknown key {key!r} for a {kind} rule"
    elif first["type"] in ("union_tag_invalid", "union_tag_not_found"):
        message = f"type: expected one of {', '.join(RULE_TYPES)}, got {kind!r}"
    elif first["type"] == "value_error":  # our own validators: the message says it all
        message = f"{key}: {first['msg'].removeprefix('Value error, ')}"
    else:
        message = f"{key}: {first['msg']}"
        if "input" in first and first["type"] != "missing":
            message += f" (got {first['input']!r})"
    return RulesError(f"{where}: {label}: {message}")


def parse_rules(
    data: Any,
    where: str,
    channels: Collection[str],
    providers: Collection[str] | None = None,
    profiles: Callable[[], ProfileSet] | None = None,
) -> list[AlertRule]:
    """Rules from the parsed TOML ``data``; ``channels`` are those configured,
    ``providers`` (when given) the registered collectors a rule's ``provider`` names, and
    ``profiles`` reads the profiles file whose saved plans a rule's ``plan`` names (only
    when one does: a profiles file no rule needs cannot break the alerts)."""
    if not isinstance(data, dict):
        raise RulesError(f"{where}: expected a table with [[rules]]")
    extra = sorted(set(data) - {"rules"})
    if extra:
        raise RulesError(f"{where}: unknown top-level key {extra[0]!r} (expected [[rules]])")
    raw_rules = data.get("rules", [])
    if not isinstance(raw_rules, list):
        raise RulesError(f"{where}: rules must be an array of tables ([[rules]])")
    rules: list[AlertRule] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_rules):
        try:
            rule = _ADAPTER.validate_python(raw)
        except ValidationError as exc:
            raise _rule_error(where, index, raw, exc) from None
        if rule.name in seen:
            raise RulesError(f"{where}: rule {rule.name!r}: name used twice")
        seen.add(rule.name)
        for channel in rule.channels or ():
            if channel not in channels:
                known = ", ".join(sorted(channels)) or "none"
                raise RulesError(
                    f"{where}: rule {rule.name!r}: channels: {channel!r} is not configured "
                    f"(configured: {known})"
                )
        _check_providers(where, rule, providers)
        if isinstance(rule, RankingChangeRule) and rule.plan:
            _attach_plans(where, rule, profiles)
        rules.append(rule)
    return rules


def _check_providers(where: str, rule: AlertRule, providers: Collection[str] | None) -> None:
    if providers is None:
        return
    for provider in getattr(rule, "provider", ()):
        if provider not in providers:
            known = ", ".join(sorted(providers)) or "none"
            raise RulesError(
                f"{where}: rule {rule.name!r}: provider: {provider!r} is not a registered "
                f"collector (registered: {known})"
            )


def _attach_plans(
    where: str, rule: RankingChangeRule, profiles: Callable[[], ProfileSet] | None
) -> None:
    """A rule watches saved plans or profiles, never both, and only plans that exist."""
    from tracker.recommend.profiles import ProfileError
    from tracker.recommend.saved_plans import PlanTarget

    label = f"{where}: rule {rule.name!r}"
    if rule.profile:
        raise RulesError(f"{label}: plan: a rule watches profiles or saved plans, not both")
    for key in ("top_n", "events"):
        if key in rule.model_fields_set and (key == "top_n" or "top_n" in rule.events):
            raise RulesError(f"{label}: {key}: top_n is for profiles (a plan has one best plan)")
    try:
        book = profiles() if profiles is not None else None
    except ProfileError as exc:
        raise RulesError(f"{label}: plan: {exc}") from None
    saved = book.plans if book is not None else {}
    for name in rule.plan:
        if name not in saved:
            known = ", ".join(sorted(saved)) or "none"
            raise RulesError(
                f"{label}: plan: {name!r} is not a saved plan (saved: {known}; "
                "[plans.NAME] in the profiles file)"
            )
        assert book is not None
        rule.targets[name] = PlanTarget(name, saved[name], book.assumptions)


def load_rules(
    path: Path | None,
    channels: Collection[str],
    providers: Collection[str] | None = None,
    profiles: Callable[[], ProfileSet] | None = None,
) -> list[AlertRule]:
    """The rules of ``path`` (None: no rules). Raises :class:`RulesError` (one line)."""
    if path is None:
        return []
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RulesError(f"alerts rules file {where}: cannot read: {exc.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{where}: invalid TOML: {exc}") from None
    return parse_rules(data, where, channels, providers, profiles)


def channels_of(rule: AlertRule, configured: Sequence[str]) -> tuple[str, ...]:
    """Where ``rule``'s alerts go: its own list, or every configured channel."""
    return tuple(rule.channels) if rule.channels is not None else tuple(configured)
