"""What a team asks a plan to cover, checked before anything is read.

The numbers are the ones a team lead has at hand: GPUs busy all the time, extra
GPU-hours a month and how much of that could run on spot, disks held and terabytes
sent out, over a horizon of months. A value that cannot describe a fleet (negative
demand, a share outside 0–1, a ten-year-plus horizon) is refused with one line naming
the option, before the store is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from tracker.service_prices import ServiceKind

__all__ = ["MAX_MONTHS", "MAX_QUANTITY", "Demand", "PlanInputError"]

MAX_MONTHS = 120
MAX_QUANTITY = Decimal(10) ** 9
"""The most of any one quantity (GPUs, GPU-hours, TB, dollars, minutes): more than the
world's fleet, and small enough that a horizon's cost keeps cents within Decimal's 28
digits (10^9 GPUs x 87,600 h x $100/h is 10^16 dollars), so ``1e400`` is a usage error
rather than an arithmetic failure deep in the plan."""
_QUANTITIES = (
    "steady_gpus",
    "burst_gpu_hours",
    "storage_tb",
    "egress_tb",
    "migration_usd",
    "checkpoint_minutes",
    "spot_overhead",
)


class PlanInputError(ValueError):
    """A demand that no plan can answer; the message names the option."""


@dataclass(frozen=True, slots=True)
class Demand:
    steady_gpus: Decimal = Decimal(0)
    burst_gpu_hours: Decimal = Decimal(0)
    """Extra GPU-hours a month, on top of the steady fleet."""
    interruptible: Decimal = Decimal(0)
    """Share of the burst that may run on spot (0–1)."""
    months: int = 36
    spot_overhead: Decimal | None = None
    """Re-work share added to spot hours; None: from the provider's interruption rate."""
    checkpoint_minutes: Decimal = Decimal(60)
    storage_tb: Decimal = Decimal(0)
    storage: ServiceKind = ServiceKind.BLOCK_STORAGE_SSD
    egress_tb: Decimal = Decimal(0)
    """Internet egress a month."""
    migration_usd: Decimal = Decimal(0)
    current_provider: str | None = None
    fabric: str = "any"
    """``required``: the fleet only on cluster nodes (:func:`tracker.plan.nodes.cluster_node`)."""

    def __post_init__(self) -> None:
        for name in ("steady_gpus", "burst_gpu_hours", "storage_tb", "egress_tb", "migration_usd"):
            if getattr(self, name) < 0:
                raise PlanInputError(f"--{_option(name)}: must not be negative")
        for name in _QUANTITIES:
            value = getattr(self, name)
            if value is not None and value > MAX_QUANTITY:
                raise PlanInputError(f"--{_option(name)}: {value} is more than {MAX_QUANTITY:,}")
        if self.steady_gpus == 0 and self.burst_gpu_hours == 0:
            raise PlanInputError(
                "no demand: give --steady-gpus and/or --burst-gpu-hours above zero"
            )
        if not Decimal(0) <= self.interruptible <= Decimal(1):
            raise PlanInputError(f"--interruptible: {self.interruptible} is not a share 0-1")
        if not 1 <= self.months <= MAX_MONTHS:
            raise PlanInputError(f"--months: {self.months} is not 1-{MAX_MONTHS}")
        if self.spot_overhead is not None and self.spot_overhead < 0:
            raise PlanInputError("--spot-overhead: must not be negative")
        if self.checkpoint_minutes <= 0:
            raise PlanInputError("--checkpoint-minutes: must be above zero")
        if self.storage not in (ServiceKind.BLOCK_STORAGE_SSD, ServiceKind.BLOCK_STORAGE_HDD):
            raise PlanInputError("--storage: ssd or hdd")
        if self.fabric not in ("any", "required"):
            raise PlanInputError(f"--fabric: {self.fabric!r} is not any or required")
        if self.migration_usd > 0 and not self.current_provider:
            raise PlanInputError(
                "--migration-usd needs --current-provider (the provider you would move from)"
            )


def _option(field: str) -> str:
    return field.replace("_", "-")
