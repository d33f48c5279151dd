"""Offers as columns, prepared once and shared by every profile's ranking.

Ranking 20 profiles over 100,000 offers is 2 million cost estimates; doing the
catalog lookup, VRAM normalisation and Decimal→float conversion once per offer and
the arithmetic as numpy column operations keeps that well under a second. Floats are
fine here because they only feed *estimates* and the ordering; the prices shown to
the user are the offers' own Decimals (see :mod:`tracker.recommend.rank`).

VRAM rule (every collector's convention): ``gpu_memory_gib`` is the VRAM of one whole
GPU, so an offer has ``gpu_memory_gib × gpu_count`` of VRAM and ``gpu_count`` × the
GPU's TFLOPS of compute, whole GPUs and slices alike (1/6 of a 24 GiB A10 has 4 GiB).
A missing ``gpu_memory_gib`` falls back to the catalog's datasheet VRAM.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from operator import itemgetter
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from tracker.catalog import GpuSpec
from tracker.fixed_clusters import CLUSTER_CLASS, cluster_nodes
from tracker.models import (
    OFFER_COLUMNS,
    OFFER_KEY_FIELDS,
    Availability,
    Offer,
    PricingModel,
    offer_from_values,
    offer_values,
)
from tracker.recommend.fabric import FABRICS, INTERCONNECTS, Links, resolved_interconnect
from tracker.recommend.profiles import COMPUTE_PRECISIONS, Precision
from tracker.recommend.throughput import spec_tflops

__all__ = [
    "PRICING_CODES",
    "LazyOffers",
    "OfferRow",
    "OfferTable",
    "SpecLookup",
    "catalog_lookup",
    "offer_to_row",
    "row_to_offer",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

SpecLookup = Callable[[str], GpuSpec | None]
PRICING_CODES = {p: i for i, p in enumerate(PricingModel)}


@lru_cache(maxsize=1024)
def _catalog_spec(name: str) -> GpuSpec | None:
    from tracker.catalog import get_spec

    try:
        return get_spec(name)
    except KeyError:
        return None


def catalog_lookup(name: str) -> GpuSpec | None:
    """The project's GPU catalog, None for a name it does not know."""
    return _catalog_spec(name)


OfferRow = tuple[Any, ...]
"""One offer as a tuple laid out like :data:`tracker.models.OFFER_COLUMNS` (what
``tracker.store.series.current_offer_rows`` returns)."""

_NAMES = tuple(c.name for c in OFFER_COLUMNS)
_AT = {name: i for i, name in enumerate(_NAMES)}
# The positions the columnar build reads, named once from the one column list.
PROVIDER, REGION, PRICING = _AT["provider"], _AT["region"], _AT["pricing"]
GPU_MODEL, GPU_KNOWN, GPU_COUNT = _AT["gpu_model"], _AT["gpu_known"], _AT["gpu_count"]
GPU_MEMORY, INTERCONNECT = _AT["gpu_memory_gib"], _AT["interconnect"]
FABRIC, NETWORK_GBPS = _AT["fabric"], _AT["network_gbps"]
PRICE_USD, ATTRIBUTES = _AT["price_per_hour_usd"], _AT["attributes"]
AVAILABILITY = _AT["availability"]
OFFERING_CLASS = _AT["offering_class"]
_UNAVAILABLE = Availability.UNAVAILABLE.value
_KEY = itemgetter(*(_AT[name] for name in OFFER_KEY_FIELDS))
_TERM = {p.value: p.term_hours for p in PricingModel}


def offer_to_row(o: Offer) -> OfferRow:
    return tuple(offer_values(o))


def _attrs(value: Any) -> Mapping[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):
        decoded = json.loads(value)
        return decoded if isinstance(decoded, dict) else {}
    return value  # type: ignore[no-any-return]


def row_to_offer(r: OfferRow) -> Offer:
    """The full, validated record for one stored row (done only for shown rows)."""
    return offer_from_values(dict(zip(_NAMES, r, strict=True)))


class LazyOffers(Sequence[Offer]):
    """Offers built from rows on first access (a ranking shows a handful of 100,000)."""

    def __init__(self, rows: Sequence[OfferRow]) -> None:
        self._rows = rows
        self._built: dict[int, Offer] = {}

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> Offer: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Offer]: ...
    def __getitem__(self, index: int | slice) -> Offer | Sequence[Offer]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self._rows)
        offer = self._built.get(index)
        if offer is None:
            offer = self._built[index] = row_to_offer(self._rows[index])
        return offer

    def __iter__(self) -> Iterator[Offer]:
        return (self[i] for i in range(len(self)))


def _effective_hourly(row: OfferRow, price: float) -> float:
    """Float twin of pricing.effective_hourly_usd, from the row's attributes."""
    term = _TERM[row[PRICING]]
    if term is None:
        return price
    attrs = _attrs(row[ATTRIBUTES])
    upfront = _attr_float(attrs.get("upfront_usd"))
    recurring = _attr_float(attrs.get("recurring_hourly_usd"))
    if math.isnan(upfront) or math.isnan(recurring) or upfront < 0 or recurring < 0:
        return price
    return upfront / term + recurring


def _attr_float(value: object) -> float:
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        return float(str(value).strip().rstrip("%"))
    except ValueError:
        return math.nan


def _cluster_nodes(rows: Sequence[OfferRow]) -> IntArray:
    """Each row's fixed-cluster node count (0 for most: only a row whose offering class
    marks it a cluster has its attributes read)."""
    out = np.zeros(len(rows), np.int64)
    at_class, at_attributes = OFFERING_CLASS, ATTRIBUTES
    for i, r in enumerate(rows):
        if r[at_class] == CLUSTER_CLASS:
            out[i] = cluster_nodes(CLUSTER_CLASS, _attrs(r[at_attributes]))
    return out


@dataclass(frozen=True)
class OfferTable:
    offers: Sequence[Offer]
    """Full records, built lazily from the rows when the table came from the store."""
    specs: Sequence[GpuSpec | None]
    """Per distinct GPU model code, its catalog spec (None when unknown)."""
    providers: tuple[str, ...]
    provider_code: IntArray
    regions: tuple[str, ...]
    region_code: IntArray
    gpu_models: tuple[str, ...]
    gpu_code: IntArray
    pricing_code: IntArray
    interconnect_code: IntArray
    known: BoolArray
    count: FloatArray
    whole_gpus: IntArray
    """GPUs across which state can be sharded (1 for a fraction)."""
    vram_per_gpu: FloatArray
    """GiB each GPU (or the slice) offers; NaN when unknown."""
    vram_total: FloatArray
    tflops: dict[Precision, FloatArray]
    """Per-GPU dense rate by compute precision; NaN when the catalog has no figure."""
    bandwidth: FloatArray
    price: FloatArray
    """Listed USD/hour."""
    hourly: FloatArray
    """Effective USD/hour (amortised upfront for reservations)."""
    interruption_pct: FloatArray
    """Provider-published interruption bucket bound (% per month); NaN when none."""
    tie_order: IntArray
    """Rank of each offer's identity key, for a deterministic order among equal costs."""
    unavailable: BoolArray
    """The provider last reported no capacity for the offer (unknown is not unavailable)."""
    fabric_code: IntArray
    """Index into :data:`tracker.recommend.fabric.FABRICS` (the inter-node network)."""
    network_gbps: FloatArray
    """One instance's inter-node Gbit/s as the provider states it; NaN when not stated."""
    cluster_nodes: IntArray = field(default_factory=lambda: np.empty(0, np.int64))
    """Nodes of the fixed-size cluster each offer is one node of (0: not such an offer;
    :mod:`tracker.fixed_clusters`): the job may use at most that many and pays them all."""
    identity_keys: Sequence[tuple[Any, ...]] = ()
    """Each offer's identity key (:data:`tracker.models.OFFER_KEY_FIELDS`), in order."""
    obtainability_7d: FloatArray = field(default_factory=lambda: np.empty(0))
    obtainability_30d: FloatArray = field(default_factory=lambda: np.empty(0))
    """Shares of the last 7 / 30 days each offer was reported rentable; NaN where never
    reported (every offer, until :meth:`with_obtainability` fills them)."""

    def __post_init__(self) -> None:
        n = len(self.offers)
        for name in ("obtainability_7d", "obtainability_30d"):
            if len(getattr(self, name)) != n:
                object.__setattr__(self, name, np.full(n, math.nan))
        if len(self.cluster_nodes) != n:
            object.__setattr__(self, "cluster_nodes", np.zeros(n, np.int64))

    def with_obtainability(
        self, shares: Mapping[tuple[Any, ...], tuple[float | None, float | None]]
    ) -> OfferTable:
        """This table with each offer's (7-day, 30-day) shares, looked up by its identity
        key (as :attr:`identity_keys` holds it); absent keys stay NaN."""
        keys = self.identity_keys
        pairs = [shares.get(k, (None, None)) for k in keys]
        week = np.array([math.nan if a is None else a for a, _ in pairs], np.float64)
        month = np.array([math.nan if b is None else b for _, b in pairs], np.float64)
        return replace(self, obtainability_7d=week, obtainability_30d=month)

    def __len__(self) -> int:
        return len(self.offers)

    @cached_property
    def links(self) -> Links:
        """Interconnects with ``unknown`` resolved from the catalog (once per table)."""
        return resolved_interconnect(
            self.interconnect_code, self.gpu_code, self.specs, self.whole_gpus > 1
        )

    @classmethod
    def build(cls, offers: Sequence[Offer], lookup: SpecLookup = catalog_lookup) -> OfferTable:
        """From validated records (tests, callers holding offers already)."""
        return cls.from_rows([offer_to_row(o) for o in offers], lookup, offers=offers)

    @classmethod
    def from_rows(
        cls,
        rows: Sequence[OfferRow],
        lookup: SpecLookup = catalog_lookup,
        *,
        offers: Sequence[Offer] | None = None,
    ) -> OfferTable:
        """From store rows (``current_offer_rows``): no Offer is built until one is shown."""
        n = len(rows)
        provider_ix: dict[str, int] = {}
        region_ix: dict[str, int] = {}
        gpu_ix: dict[str, int] = {}
        spec_by_model: dict[str, GpuSpec | None] = {}
        ic_ix = {name: i for i, name in enumerate(INTERCONNECTS)}
        pricing_ix = {p.value: code for p, code in PRICING_CODES.items()}
        spot = PricingModel.SPOT.value
        # Positions as locals: the loop below runs once per stored offer.
        at_provider, at_region, at_pricing = PROVIDER, REGION, PRICING
        at_model, at_known, at_count, at_memory = GPU_MODEL, GPU_KNOWN, GPU_COUNT, GPU_MEMORY
        at_interconnect, at_price, at_attributes = INTERCONNECT, PRICE_USD, ATTRIBUTES

        provider_code = np.empty(n, np.int64)
        region_code = np.empty(n, np.int64)
        gpu_code = np.empty(n, np.int64)
        pricing_code = np.empty(n, np.int64)
        ic_code = np.empty(n, np.int64)
        known = np.zeros(n, np.bool_)
        count = np.empty(n, np.float64)
        mem = np.full(n, math.nan)
        price = np.empty(n, np.float64)
        hourly = np.empty(n, np.float64)
        interrupt = np.full(n, math.nan)
        at_availability = AVAILABILITY
        unavailable = np.fromiter(
            (r[at_availability] == _UNAVAILABLE for r in rows), np.bool_, count=n
        )
        fabric_ix = {name: i for i, name in enumerate(FABRICS)}
        fabric_code = np.fromiter((fabric_ix[r[FABRIC]] for r in rows), np.int64, count=n)
        network = np.fromiter(
            (math.nan if r[NETWORK_GBPS] is None else float(r[NETWORK_GBPS]) for r in rows),
            np.float64,
            count=n,
        )

        cluster = _cluster_nodes(rows)
        for i, r in enumerate(rows):
            provider_code[i] = provider_ix.setdefault(r[at_provider], len(provider_ix))
            region_code[i] = region_ix.setdefault(r[at_region], len(region_ix))
            model = r[at_model]
            gpu_code[i] = gpu_ix.setdefault(model, len(gpu_ix))
            pricing = r[at_pricing]
            pricing_code[i] = pricing_ix[pricing]
            ic_code[i] = ic_ix[r[at_interconnect]]
            if r[at_known]:
                if model not in spec_by_model:
                    spec_by_model[model] = lookup(model)
                known[i] = spec_by_model[model] is not None
            count[i] = float(r[at_count])
            if r[at_memory] is not None:
                mem[i] = float(r[at_memory])
            usd = r[at_price]
            if usd is None:  # a reader converts first (tracker.recommend.stored, tracker.fx)
                raise ValueError(
                    f"offer {_KEY(r)} has no USD figure: convert it at the rate in force first"
                )
            p = float(usd)
            price[i] = p
            hourly[i] = p if _TERM[pricing] is None else _effective_hourly(r, p)
            if pricing == spot:
                interrupt[i] = _attr_float(_attrs(r[at_attributes]).get("interruption_max_pct"))

        model_specs = [spec_by_model.get(m) for m in gpu_ix]
        # GPUs without a reported VRAM fall back to the datasheet figure
        datasheet = np.array(
            [float(s.vram_gib) if s is not None else math.nan for s in model_specs] or [math.nan]
        )
        if n:
            fill = np.isnan(mem) & known
            mem[fill] = datasheet[gpu_code[fill]]
        tflops: dict[Precision, FloatArray] = {}
        for precision in COMPUTE_PRECISIONS:
            per_model = np.array(
                [
                    (spec_tflops(s, precision) or math.nan) if s is not None else math.nan
                    for s in model_specs
                ]
                or [math.nan],
                np.float64,
            )
            column = per_model[gpu_code] if n else np.empty(0, np.float64)
            tflops[precision] = np.where(known, column, math.nan)
        bw_model = np.array(
            [
                float(s.memory_bandwidth_gbs)
                if s is not None and s.memory_bandwidth_gbs is not None
                else math.nan
                for s in model_specs
            ]
            or [math.nan],
            np.float64,
        )
        bandwidth = np.where(known, bw_model[gpu_code], math.nan) if n else np.empty(0)

        whole = np.maximum(np.floor(count), 1).astype(np.int64)
        vram_total = mem * count
        keys = [_KEY(r) for r in rows]
        order = sorted(range(n), key=keys.__getitem__)
        tie_order = np.empty(n, np.int64)
        tie_order[order] = np.arange(n)
        return cls(
            offers=offers if offers is not None else LazyOffers(rows),
            specs=model_specs,
            providers=tuple(provider_ix),
            provider_code=provider_code,
            regions=tuple(region_ix),
            region_code=region_code,
            gpu_models=tuple(gpu_ix),
            gpu_code=gpu_code,
            pricing_code=pricing_code,
            interconnect_code=ic_code,
            known=known,
            count=count,
            whole_gpus=whole,
            vram_per_gpu=mem * np.minimum(count, 1.0),  # a slice owns its share only
            vram_total=vram_total,
            tflops=tflops,
            bandwidth=bandwidth,
            price=price,
            hourly=hourly,
            interruption_pct=interrupt,
            tie_order=tie_order,
            identity_keys=keys,
            unavailable=unavailable,
            fabric_code=fabric_code,
            network_gbps=network,
            cluster_nodes=cluster,
        )

    @cached_property
    def shapes(self) -> tuple[IntArray, IntArray]:
        """Per offer, the code of its hardware shape (GPU model, resolved interconnect,
        GPU count, fabric, network Gbit/s), and one offer of each shape: offers of one
        shape run a job at one rate and scale alike across nodes (cluster sizing)."""
        columns = np.column_stack(
            [
                self.gpu_code,
                self.links.code,
                self.count,
                self.fabric_code,
                np.nan_to_num(self.network_gbps, nan=-1.0),
            ]
        ).astype(np.float64)
        _, first, code = np.unique(columns, axis=0, return_index=True, return_inverse=True)
        return code.ravel().astype(np.int64), first.astype(np.int64)

    def codes(self, names: Sequence[str], universe: Sequence[str]) -> IntArray:
        """Codes of the ``names`` present in ``universe`` (absent names match nothing)."""
        index = {name: i for i, name in enumerate(universe)}
        return np.array([index[n] for n in names if n in index], np.int64)
