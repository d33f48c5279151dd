"""Account discounts: what a team actually pays, applied when a price is read.

A team above a few GPUs rarely pays list price (AWS private pricing / EDP, Azure MACC,
a GPU cloud's volume deal): the ``[[discounts]]`` tables of the settings file say so,
each a percentage off list (or a fixed net price per hour) for one provider, optionally
only some pricing models, instance types (globs: ``p5.*``) and regions, for a period.

Like exchange rates (:mod:`tracker.fx`) a discount is applied **when read**: no stored
price is rewritten, a rule change never opens a price interval, and a history applies
the rule in force at each of its steps. The first rule (in file order) that matches an
offer and is in force at the moment read wins; an offer no rule matches pays list.

Worked example (the tests use it): AWS p5.48xlarge on-demand at 55.04 USD/hour under a
15 % rule nets 55.04 × (1 − 0.15) = 55.04 × 0.85 = 46.784 USD/hour.

A percentage is the same in any currency, so a percent rule applies to an offer in its
own currency and its USD figure alike. A fixed ``price_per_hour`` is in ``currency``
(USD unless said); an offer priced in another currency gets it converted at the rate in
force, and without a rate the rule cannot price it: the offer keeps its list price and
is counted (:attr:`Discounts.unpriced`), never converted at 1.0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import ROUND_HALF_EVEN, Decimal
from fnmatch import fnmatchcase
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from tracker.fx import USD, Rates, parse_currency
from tracker.models import Offer, PricingModel

__all__ = [
    "NET_KEYS",
    "DiscountRule",
    "Discounts",
    "Net",
    "parse_discounts",
]

NET_KEYS = ("net_price_per_hour", "net_price_per_hour_usd", "discount")
"""A history row's net figures: in the offer's currency, in USD, and the rule's name."""

_QUANTUM = Decimal("1e-10")  # the store's money scale: net figures read like stored ones
_HUNDRED = Decimal(100)


def _q(value: Decimal) -> Decimal:
    return value.quantize(_QUANTUM, rounding=ROUND_HALF_EVEN)


def _moment(value: Any) -> Any:
    """A TOML date is its 00:00 UTC; a datetime without an offset is UTC."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime.combine(value, time(0), tzinfo=UTC)
    return value


def _names(value: Any) -> Any:
    """A TOML list, or one string (``"p5.*"``, or ``a,b`` from the environment)."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class DiscountRule(BaseModel):
    """One ``[[discounts]]`` table: which offers it covers, what they cost, and when."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64)
    provider: str = Field(min_length=1)
    """A collector's name (``aws``); one rule covers one provider's offers."""
    pricing: list[PricingModel] = Field(default_factory=list)
    """Empty: every pricing model (spot too: say ``pricing`` to leave spot at list)."""
    instance_types: list[str] = Field(default_factory=list)
    """Globs matched against the whole instance type, case-sensitive (``p5.*``)."""
    regions: list[str] = Field(default_factory=list)
    """Globs matched against the region (``us-*``); empty: every region."""
    percent: Decimal | None = Field(default=None, gt=0, lt=100)
    """Off list price: 15 pays 85 % of it."""
    price_per_hour: Decimal | None = Field(default=None, gt=0)
    """A fixed net price per hour of the whole instance, in ``currency``."""
    currency: str | None = None
    """The currency of ``price_per_hour`` (USD unless said); only with it."""
    valid_from: datetime | None = None
    """In force from this moment on (a date: its 00:00 UTC); unset: always was."""
    valid_until: datetime | None = None
    """In force until just before this moment; unset: open-ended."""

    _lists = field_validator("pricing", "instance_types", "regions", mode="before")(_names)
    _times = field_validator("valid_from", "valid_until", mode="before")(_moment)

    @field_validator("currency")
    @classmethod
    def _iso(cls, value: str | None) -> str | None:
        return None if value is None else parse_currency(value)

    @field_validator("instance_types", "regions")
    @classmethod
    def _no_empty(cls, value: list[str]) -> list[str]:
        if any(not v.strip() for v in value):
            raise ValueError("an empty pattern matches nothing")
        return value

    @model_validator(mode="after")
    def _one_price(self) -> DiscountRule:
        if (self.percent is None) == (self.price_per_hour is None):
            raise ValueError("percent: give either percent or price_per_hour (exactly one)")
        if self.currency is not None and self.price_per_hour is None:
            raise ValueError("currency: names the currency of price_per_hour (set none here)")
        if self.valid_from and self.valid_until and self.valid_until <= self.valid_from:
            raise ValueError("valid_until: must be after valid_from")
        return self

    @property
    def kind(self) -> Literal["percent", "fixed"]:
        return "percent" if self.percent is not None else "fixed"

    def in_force(self, at: datetime) -> bool:
        """Whether the rule holds at ``at`` (``valid_from`` ≤ at < ``valid_until``)."""
        if self.valid_from is not None and at < self.valid_from:
            return False
        return self.valid_until is None or at < self.valid_until

    def covers(self, provider: str, pricing: str, instance_type: str, region: str) -> bool:
        """Whether an offer with these identity fields is one the rule is about."""
        if provider != self.provider:
            return False
        if self.pricing and pricing not in {p.value for p in self.pricing}:
            return False
        if self.instance_types and not any(
            fnmatchcase(instance_type, g) for g in self.instance_types
        ):
            return False
        return not self.regions or any(fnmatchcase(region, g) for g in self.regions)

    def describe(self) -> str:
        """``15 % off`` or ``40.00 USD/h``: what the rule does, for a listing."""
        if self.percent is not None:
            return f"{self.percent.normalize():f} % off"
        assert self.price_per_hour is not None
        return f"{self.price_per_hour:f} {self.currency or USD}/h"


_RULES: TypeAdapter[DiscountRule] = TypeAdapter(DiscountRule)


def _rule_error(index: int, raw: Any, exc: ValidationError) -> str:
    """``rule 'aws-edp': percent: …``: the rule (its number when it has no name) and
    the key, one line."""
    name = raw.get("name") if isinstance(raw, Mapping) else None
    label = f"rule {name!r}" if isinstance(name, str) and name else f"rule number {index + 1}"
    first = exc.errors()[0]
    key = ".".join(str(p) for p in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        return f"{label}: unknown key {key!r}"
    if first["type"] == "value_error" and not key:  # a rule-wide check names its key
        return f"{label}: {message}"
    got = f" (got {first['input']!r})" if first["type"] not in ("missing", "value_error") else ""
    return f"{label}: {key}: {message}{got}"


def parse_discounts(raw: Any) -> list[DiscountRule]:
    """The ``[[discounts]]`` tables validated into rules; ValueError (one line naming
    the rule and the key) for the first bad one, or a name used twice."""
    if raw is None:
        return []
    if isinstance(raw, Mapping) or not isinstance(raw, Sequence) or isinstance(raw, str):
        raise ValueError("expected an array of tables ([[discounts]])")
    rules: list[DiscountRule] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        if isinstance(item, DiscountRule):
            rule = item
        else:
            try:
                rule = _RULES.validate_python(item)
            except ValidationError as exc:
                raise ValueError(_rule_error(index, item, exc)) from None
        if rule.name in seen:
            raise ValueError(f"rule {rule.name!r}: name: used twice")
        seen.add(rule.name)
        rules.append(rule)
    return rules


@dataclass(frozen=True, slots=True)
class Net:
    """What an offer costs the account at one moment: the net price in the offer's own
    currency and in USD (None without a rate), and the rule that set it (None: list)."""

    price_per_hour: Decimal
    price_per_hour_usd: Decimal | None
    rule: str | None = None


@dataclass
class Discounts:
    """The configured rules with the exchange rates a fixed price may need.

    ``unpriced`` counts, by rule, offers a fixed-price rule could not price for want of a
    rate (they keep their list price); :meth:`report` is the line that says so."""

    rules: Sequence[DiscountRule] = ()
    rates: Rates = field(default_factory=Rates)
    unpriced: Counter[str] = field(default_factory=Counter)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def rule_for(
        self, provider: str, pricing: str, instance_type: str, region: str, at: datetime
    ) -> DiscountRule | None:
        """The first rule that covers the offer and is in force at ``at``."""
        for rule in self.rules:
            if rule.covers(provider, pricing, instance_type, region) and rule.in_force(at):
                return rule
        return None

    def net(
        self,
        key: tuple[str, str, str, str],
        price: Decimal,
        currency: str,
        usd: Decimal | None,
        at: datetime,
    ) -> Net:
        """The net price of the offer ``key`` (provider, pricing, instance type, region)
        listed at ``price`` ``currency`` (``usd`` its USD figure at ``at``)."""
        rule = self.rule_for(*key, at) if self.rules else None
        if rule is None:
            return Net(price, usd)
        if rule.percent is not None:
            keep = (_HUNDRED - rule.percent) / _HUNDRED
            return Net(_q(price * keep), None if usd is None else _q(usd * keep), rule.name)
        assert rule.price_per_hour is not None
        fixed, code = rule.price_per_hour, rule.currency or USD
        own = self.rates.convert(fixed, code, currency, at)
        if own is None:
            self.unpriced[rule.name] += 1
            return Net(price, usd)
        return Net(_q(own), self.rates.to_usd(fixed, code, at), rule.name)

    def fields(
        self,
        key: tuple[str, str, str, str],
        price: Decimal | None,
        currency: str | None,
        usd: Decimal | None,
        at: datetime,
    ) -> dict[str, Any]:
        """:data:`NET_KEYS` of a history row (None where no price was in force)."""
        if price is None or currency is None:
            return dict.fromkeys(NET_KEYS)
        net = self.net(key, price, currency, usd, at)
        return {
            "net_price_per_hour": net.price_per_hour,
            "net_price_per_hour_usd": net.price_per_hour_usd,
            "discount": net.rule,
        }

    def of_offer(self, offer: Offer, at: datetime) -> Net:
        """The net price of ``offer`` (its USD figure already converted) at ``at``."""
        key = (offer.provider, offer.pricing.value, offer.instance_type, offer.region)
        return self.net(key, offer.price_per_hour, offer.currency, offer.price_per_hour_usd, at)

    def matching(self, rule: DiscountRule, offers: Iterable[Offer], at: datetime) -> int:
        """How many of ``offers`` ``rule`` covers and actually prices at ``at`` (an
        earlier rule that also covers an offer takes it)."""
        n = 0
        for o in offers:
            key = (o.provider, o.pricing.value, o.instance_type, o.region)
            if self.rule_for(*key, at) is rule:
                n += 1
        return n

    def report(self) -> str | None:
        """``2 offers kept their list price: no exchange rate for rule 'x' (2)``, or None."""
        if not self.unpriced:
            return None
        n = sum(self.unpriced.values())
        which = ", ".join(f"{name!r} ({k})" for name, k in sorted(self.unpriced.items()))
        noun = "offer kept its" if n == 1 else "offers kept their"
        return f"{n} {noun} list price: no exchange rate for the fixed price of rule {which}"
