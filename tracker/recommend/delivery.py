"""What a GPU family delivers of its roofline, carried from one workload class to another.

A GPU with no measurement in a job's class is scaled from the nearest measured GPU by the
compute/bandwidth roofline (:mod:`tracker.recommend.calibration`). Within a family (one
vendor's architecture) that works: the nearest GPU shares its software stack and its
share of the datasheet. Across families it takes the target's datasheet at face value,
and a new architecture's software often delivers less of it than the old one's does.

Where the target's family has measurements in another class, those say how far the
roofline over-promises for it: each such row is predicted from the nearest GPU of another
family, as the target is, and ``measured ÷ predicted`` (geometric mean over the rows) is
the family's delivered-efficiency factor. The scaled rate is multiplied by it and its
uncertainty widened (:data:`tracker.recommend.uncertainty.CARRIED`): the factor was
measured on other work. Where the family is measured in the job's own class, those rows
already dominate (they are its nearest GPUs), and no factor is carried.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple

from tracker.catalog import GpuSpec
from tracker.recommend.assumptions import Assumptions
from tracker.recommend.kinds import WorkloadClass
from tracker.recommend.measured import Measurement
from tracker.recommend.rating import Rate
from tracker.recommend.rating import precision_family as _family
from tracker.recommend.roofline import (
    CLASS_TASK,
    achieved_flops,
    cached_fit,
    closest_size,
    fitted_intensity,
    nearest_gpu,
    scaled_rate,
    spec_of,
)
from tracker.recommend.serving_rate import fit_serving

__all__ = ["Delivery", "FamilyRow", "carried_delivery", "carry", "family_of"]


@dataclass(frozen=True, slots=True)
class Delivery:
    factor: float
    """Measured ÷ roofline-scaled throughput of the family's rows in other classes."""
    classes: tuple[str, ...]
    rows: tuple[str, ...]

    def describe(self, family: str) -> str:
        return (
            f"x {self.factor:.2f}: {family} delivered {self.factor:.2f} of its roofline "
            f"in {', '.join(self.classes)} ({', '.join(self.rows)})"
        )


class FamilyRow(NamedTuple):
    family: str
    wclass: WorkloadClass
    row: str
    ratio: float
    """Measured ÷ predicted from the nearest GPU of another family."""


class _Fit(NamedTuple):
    measured_in: frozenset[tuple[str, WorkloadClass]]
    """(family, class) pairs with a training measurement."""
    rows: tuple[FamilyRow, ...]


def family_of(spec: GpuSpec) -> str:
    return f"{spec.vendor} {spec.architecture}"


def carried_delivery(
    spec: GpuSpec, wclass: WorkloadClass, measurements: tuple[Measurement, ...], a: Assumptions
) -> Delivery | None:
    """The factor for ``spec`` in ``wclass``; None where its family is measured in that
    class already or nowhere else."""
    fit = cached_fit(_fit_families, measurements, a)
    family = family_of(spec)
    if (family, wclass) in fit.measured_in:
        return None
    found = [r for r in fit.rows if r.family == family and r.wclass is not wclass]
    if not found:
        return None
    factor = math.exp(sum(math.log(r.ratio) for r in found) / len(found))
    classes = tuple(sorted({r.wclass.value for r in found}))
    return Delivery(factor, classes, tuple(r.row for r in found))


def _serving_ratios(rows: tuple[Measurement, ...], a: Assumptions) -> list[FamilyRow]:
    """Serving rows: the row's measured ÷ modelled against other families' on the same
    benchmark (model, request shape, precision): MLPerf's MI300X against the H100/H200."""
    modelled = cached_fit(fit_serving, rows, a)
    out = []
    for m in modelled:
        family = family_of(spec_of(m.gpu))
        peers = [
            o
            for o in modelled
            if o.model == m.model
            and (o.input_tokens, o.output_tokens) == (m.input_tokens, m.output_tokens)
            and _family(o.precision) == _family(m.precision)
            and family_of(spec_of(o.gpu)) != family
        ]
        if not peers:
            continue
        own = m.throughput / modelled[m]
        theirs = math.exp(sum(math.log(o.throughput / modelled[o]) for o in peers) / len(peers))
        out.append(FamilyRow(family, m.workload_class, m.id, own / theirs))
    return out


def _fit_families(rows: tuple[Measurement, ...], a: Assumptions) -> _Fit:
    """Per training row: its family, and measured ÷ scaled from the nearest other family."""
    measured_in: set[tuple[str, WorkloadClass]] = set()
    ratios = _serving_ratios(rows, a)
    for m in rows:
        if m.workload_class not in CLASS_TASK:
            continue
        spec = spec_of(m.gpu)
        family = family_of(spec)
        measured_in.add((family, m.workload_class))
        pool = tuple(
            r
            for r in rows
            if r.workload_class is m.workload_class
            and _family(r.precision) == _family(m.precision)
            and family_of(spec_of(r.gpu)) != family
        )
        near = nearest_gpu(spec, m.precision, pool)
        if near is None:
            continue
        source = closest_size(near[1], m.params)
        predicted = scaled_rate(spec, m.precision, source, fitted_intensity(pool, a), a)
        if predicted:
            ratio = achieved_flops(m, a) / predicted
            ratios.append(FamilyRow(family, m.workload_class, m.id, ratio))
    return _Fit(frozenset(measured_in), tuple(ratios))


def carry(
    rate: Rate,
    spec: GpuSpec,
    wclass: WorkloadClass,
    measurements: tuple[Measurement, ...],
    a: Assumptions,
) -> Rate:
    """``rate`` (scaled from another family's GPU) × the family's carried factor, if any."""
    from tracker.recommend.uncertainty import CARRIED

    delivery = carried_delivery(spec, wclass, measurements, a)
    if delivery is None:
        return rate
    return replace(
        rate,
        flops=rate.flops * delivery.factor,
        source=f"{rate.source}; {delivery.describe(family_of(spec))}",
        spread=CARRIED,
    )
