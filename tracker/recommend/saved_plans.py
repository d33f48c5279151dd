"""Saved plans: a ``plan`` question kept in the profiles file as ``[plans.NAME]``.

A fleet decision is re-made as prices move (the seeds' "re-evaluate every 6 months"):
a ``ranking_change`` alert rule names a saved plan and fires when its best total or its
best provider moves. The plan takes the ``plan`` command's parameters under the same
names (underscores for dashes), and is checked as strictly as the command checks its
options, each problem one line naming the plan and the key, because a plan that cannot
be priced would otherwise be an alert that never fires.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from tracker.recommend.assumptions import Assumptions
from tracker.recommend.demand import Demand, PlanInputError
from tracker.recommend.errors import ProfileError
from tracker.recommend.field_errors import FieldError, describe
from tracker.service_prices import ServiceKind

__all__ = ["PlanTarget", "SavedPlan", "saved_plans"]

_STORAGE = {"ssd": ServiceKind.BLOCK_STORAGE_SSD, "hdd": ServiceKind.BLOCK_STORAGE_HDD}
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_OPTION = re.compile(r"--([a-z][a-z-]*)")
_DECIMALS = (
    "steady_gpus",
    "burst_gpu_hours",
    "interruptible",
    "spot_overhead",
    "checkpoint_minutes",
    "storage_tb",
    "egress_tb",
    "migration_usd",
)


def _key(option: str) -> str:
    return option.replace("-", "_")


class SavedPlan(BaseModel):
    """The ``plan`` command's options as a table; ``demand`` is what it plans for."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = ""
    gpu: list[str] = Field(min_length=1)
    """GPU models or families, as ``plan --gpu`` takes them (``H100``: every variant)."""
    steady_gpus: Decimal = Decimal(0)
    burst_gpu_hours: Decimal = Decimal(0)
    interruptible: Decimal = Decimal(0)
    months: int = 36
    spot_overhead: Decimal | None = None
    checkpoint_minutes: Decimal = Decimal(60)
    storage_tb: Decimal = Decimal(0)
    storage: Literal["ssd", "hdd"] = "ssd"
    egress_tb: Decimal = Decimal(0)
    migration_usd: Decimal = Decimal(0)
    current_provider: str | None = None
    fabric: Literal["any", "required"] = "any"
    """``required``: only cluster nodes (a stated RDMA fabric, two GPUs or more)."""
    provider: list[str] = Field(default_factory=list)
    region: list[str] = Field(default_factory=list)

    @field_validator(*_DECIMALS, mode="before")
    @classmethod
    def _exact(cls, value: Any) -> Any:
        # A TOML float would otherwise reach Decimal through binary floating point.
        return Decimal(repr(value)) if isinstance(value, float) else value

    @field_validator("gpu", "provider", "region", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.split(",")
        if isinstance(value, list | tuple):
            return [str(v).strip() for v in value if str(v).strip()]
        return value

    @field_validator("gpu")
    @classmethod
    def _known_gpus(cls, value: list[str]) -> list[str]:
        from tracker.catalog import gpu_models_for

        for name in value:
            if not gpu_models_for(name):
                raise ValueError(f"{name!r} is not a known GPU (see the GPU catalog)")
        return value

    @model_validator(mode="after")
    def _plannable(self) -> SavedPlan:
        try:
            self.demand  # noqa: B018 - built to be checked
        except PlanInputError as exc:
            text = str(exc)
            found = _OPTION.search(text)
            field = _key(found.group(1)) if found else "steady_gpus"
            message = _OPTION.sub(lambda m: _key(m.group(1)), text)
            message = message.removeprefix(f"{field}: ").removeprefix(f"{field} ")
            raise FieldError(field, message) from None
        return self

    @property
    def demand(self) -> Demand:
        """What the plan covers (raises PlanInputError, naming the ``plan`` option)."""
        # Every Demand field under its own name here (storage spelled as plan --storage).
        given = {f.name: getattr(self, f.name) for f in fields(Demand) if f.name != "storage"}
        return Demand(**given, storage=_STORAGE[self.storage])

    def fingerprint(self) -> str:
        """Stable hash of what the plan's figures depend on (not its description)."""
        # ``fabric = "any"`` is left out so plans saved before the key keep their hash
        # (a watching alert rule would otherwise start over for nothing).
        skip = {"description"} | ({"fabric"} if self.fabric == "any" else set())
        data = self.model_dump_json(exclude=skip)
        return hashlib.sha256(data.encode()).hexdigest()[:16]


def saved_plans(data: Mapping[str, Any], where: object) -> dict[str, SavedPlan]:
    """A profiles file's ``[plans.NAME]``, each checked as ``plan`` checks its options;
    a bad one is a one-line :class:`ProfileError` naming the plan, the key and the file."""
    raw = data.get("plans", {})
    if not isinstance(raw, dict):
        raise ProfileError(f"{where}: 'plans' must be tables like [plans.NAME]")
    plans = {}
    for name, body in raw.items():
        if not _NAME.match(name):
            raise ProfileError(
                f"plan {name!r}: must be lower-case letters, digits, '.', '_' or '-' (in {where})"
            )
        if not isinstance(body, dict):
            raise ProfileError(f"plan {name!r}: expected a table (in {where})")
        try:
            plans[name] = SavedPlan(**body)
        except ValidationError as exc:
            raise ProfileError(f"plan {name!r}: {describe(exc)} (in {where})") from None
    return plans


@dataclass(frozen=True)
class PlanTarget:
    """A saved plan as an alert rule watches it: with the profiles file's assumptions
    (spot restart and checkpoint times), which its spot re-work depends on."""

    name: str
    plan: SavedPlan
    assumptions: Assumptions

    def fingerprint(self) -> str:
        """Changes when the plan or the assumptions do: the question changed, not the
        market, so a watching rule starts over from where things stand."""
        data = f"{self.plan.fingerprint()}|{self.assumptions.model_dump_json()}"
        return hashlib.sha256(data.encode()).hexdigest()[:16]
