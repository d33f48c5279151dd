"""A GPU the vendor publishes no throughput for is rated as the part it is built from.

The A10G exists only in AWS g5 instances; NVIDIA publishes no datasheet for it and AWS
publishes its memory (24 GB per GPU) but no clocks or TFLOPS. Leaving it out would drop
the most rented GPU on the most used cloud from every training ranking, and inventing a
peak would break the catalog's rule that every figure is a vendor's. So the recommender
rates it by a stated rule instead: it is the GA102 die of NVIDIA's A10, taken at the
A10's published clocks and memory bandwidth, so it runs a job as the A10 does (the A10's
own measurements where they exist, else the A10's datasheet path). The rate's basis is
``modelled`` and its source names the rule, so ``--explain`` says how it was costed.

A GPU's own measurements always come first (the A10G's published serving runs, a user's
``[[measured]]`` rows): the rule applies only where nothing else rates the GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tracker.catalog import GpuSpec, get_spec
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.calibration import Basis, Rate
from tracker.recommend.measured import Measurement
from tracker.recommend.profiles import Profile

__all__ = ["STAND_INS", "StandIn", "stand_in_rate"]


@dataclass(frozen=True, slots=True)
class StandIn:
    gpu: str
    """The catalog name without vendor throughput figures."""
    like: str
    """The catalog part whose figures and measurements rate it."""
    rule: str
    """The rule as ``--explain`` prints it."""
    source: str


STAND_INS: dict[str, StandIn] = {
    s.gpu: s
    for s in (
        StandIn(
            gpu="A10G",
            like="A10",
            rule=(
                "A10G modelled as the A10 (the same GA102 die at the A10's published "
                "clocks and 600 GB/s; AWS's g5 page publishes 24 GB per GPU and no TFLOPS)"
            ),
            source="https://aws.amazon.com/ec2/instance-types/g5/",
        ),
    )
}

Predict = Callable[[Profile, GpuSpec, Assumptions, tuple[Measurement, ...]], Rate | None]


def stand_in_rate(
    p: Profile,
    spec: GpuSpec,
    a: Assumptions,
    measurements: tuple[Measurement, ...],
    predict: Predict,
) -> Rate | None:
    """``spec``'s rate by its stand-in rule; None when it has no rule (or no rate)."""
    rule = STAND_INS.get(spec.name)
    if rule is None:
        return None
    inner = predict(p, get_spec(rule.like), a, measurements)
    if inner is None:
        return None
    source = f"{rule.rule}; as the {rule.like}: {inner.label}, {inner.source}"
    fallback = inner.fallback.replace(f": {rule.like} has", f": {rule.gpu} (as {rule.like}) has")
    return Rate(
        inner.flops,
        Basis.MODELLED,
        source,
        inner.precision,
        fallback,
        False,
        memory_scale=inner.memory_scale,
    )
