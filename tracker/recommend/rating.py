"""What a throughput rate is and where it came from: shared by the calibration
(:mod:`tracker.recommend.calibration`) and the fitted serving rates
(:mod:`tracker.recommend.fitted`), so neither imports the other at load time."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from tracker.recommend.kinds import Precision
from tracker.recommend.measured import Measurement

__all__ = ["Basis", "Rate", "load_of", "precision_family"]


class Basis(StrEnum):
    MEASURED = "measured"
    SCALED = "scaled"
    MODELLED = "modelled"


@dataclass(frozen=True, slots=True)
class Rate:
    """What one GPU achieves on a profile, and where the figure comes from."""

    flops: float
    """Model FLOP/s on one GPU (the multi-GPU scaling of the measurement taken out)."""
    basis: Basis
    source: str
    """The measurement (id and URL, "yours" for the user's) or the model used."""
    precision: Precision
    """The compute precision the GPU runs the job at."""
    fallback: str = ""
    """Why ``precision`` differs from the profile's (empty when it does not)."""
    yours: bool = False
    memory_scale: float = 1.0
    """Serving: measured ÷ modelled throughput, applied to bandwidth as to compute."""
    spread: float | None = None
    """Relative error where it is not the basis's band (:mod:`tracker.recommend.uncertainty`)."""

    @property
    def label(self) -> str:
        return f"{self.basis.value} (yours)" if self.yours else self.basis.value


def precision_family(p: Precision) -> str:
    """FP16 and BF16 are one family (the same tensor rate on every GPU)."""
    return "16-bit" if p in (Precision.FP16, Precision.BF16) else p.value


def load_of(m: Measurement) -> float:
    """Requests in flight when ``m`` was measured (unset: offline, as many as fit)."""
    return math.inf if m.concurrency is None else float(m.concurrency)
