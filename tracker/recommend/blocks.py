"""Capacity blocks in a ranking: a block serves a job that fits it and costs its whole fee.

An EC2 Capacity Block is paid upfront for ``instances`` instances over ``hours``
(:mod:`tracker.capacity_blocks`), whatever the job uses. Ranked like an hourly price it
would win every short job at a fraction of what it costs, so a block row is a candidate
only when the job's size (nodes, 1 off a cluster profile) and expected wall hours fit
it, and its job cost is then the whole block: the per-instance-hour price x instances x
hours (the fee). A block whose terms are not recorded, or a job without a length (no
hours to compare), is never a candidate.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import numpy.typing as npt

from tracker.capacity_blocks import block_fits, terms_from_attributes
from tracker.recommend.table import OfferTable

__all__ = ["fit_blocks"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def fit_blocks(
    table: OfferTable, rows: IntArray, nodes: IntArray, wall_hours: FloatArray | None
) -> tuple[BoolArray, FloatArray]:
    """For the block ``rows`` still in the ranking: which the job fits (a mask over the
    whole table) and, for those, the whole block's USD cost (NaN elsewhere)."""
    fits = np.zeros(len(table), np.bool_)
    whole = np.full(len(table), np.nan)
    if wall_hours is None:
        return fits, whole
    for ix in rows.tolist():
        o = table.offers[ix]
        terms = terms_from_attributes(o.pricing, o.attributes)
        hours = wall_hours[ix]
        if terms is None or not np.isfinite(hours):
            continue
        if block_fits(terms, int(nodes[ix]), Decimal(repr(float(hours)))):
            fits[ix] = True
            whole[ix] = float(table.hourly[ix]) * terms.instances * float(terms.hours)
    return fits, whole
