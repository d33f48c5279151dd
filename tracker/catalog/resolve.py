"""Map provider GPU spellings to canonical catalog names, refusing to guess.

Rules, in order:

1. A canonical name (any case) means that model.
2. Otherwise the spelling is normalised (see :mod:`tracker.catalog.names`) and its
   key looked up among the aliases. A key owned by one model means that model; a key
   owned by a *family* (``A100``, ``V100``, ``H100`` …) means one of its members.
   An alias that states a size the GPU does not have (``NVIDIA GH200 480GB``: 480 GB is
   the superchip's CPU memory) matches only that exact key and size, and its size is
   then part of the product name, not memory evidence.
3. Memory evidence (a size in the name, e.g. ``-80GB``, and/or ``memory_hint``) must
   lie within ±10 % of the chosen model's ``vram_gib``. Among family members the one
   that fits is chosen; if none fits, or evidence contradicts a single model, the
   name is returned unknown. The 10 % band absorbs providers reporting usable
   rather than nominal memory (AWS reports the 24 GB A10G as 22 888 MiB).
4. With no memory evidence a family resolves to its documented ``default`` (e.g. a
   bare ``A100`` is the 40 GB part, as AWS p4d and GCP a2-highgpu report it); a
   family without a default stays unknown.

Unknown names come back as ``GpuMatch(known=False, name=raw)`` so the offer is
stored under the provider's own spelling and flagged, never mislabelled.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path

from tracker.catalog.loader import Catalog, load_catalog
from tracker.catalog.names import HINT_TOLERANCE, memory_fits, normalize_gpu_name
from tracker.catalog.spec import GpuMatch, GpuSpec
from tracker.models import to_decimal

__all__ = [
    "DATA_FILE",
    "HINT_TOLERANCE",
    "all_specs",
    "default_catalog",
    "get_spec",
    "resolve_gpu",
]

DATA_FILE = Path(__file__).with_name("gpus.toml")


@functools.cache
def default_catalog() -> Catalog:
    """The packaged catalog, parsed and validated once per process."""
    return load_catalog(DATA_FILE)


def get_spec(name: str, *, catalog: Catalog | None = None) -> GpuSpec:
    """Spec for a canonical name; ``KeyError`` for anything else (aliases included)."""
    specs = (catalog or default_catalog()).specs
    try:
        return specs[name]
    except KeyError:
        raise KeyError(f"unknown canonical GPU name {name!r}") from None


def all_specs(*, catalog: Catalog | None = None) -> list[GpuSpec]:
    """Every spec, in data-file order."""
    return list((catalog or default_catalog()).specs.values())


def resolve_gpu(
    raw_name: str,
    memory_hint: Decimal | int | float | None = None,
    *,
    catalog: Catalog | None = None,
) -> GpuMatch:
    """Canonical match for a provider's GPU spelling.

    ``memory_hint`` is the memory of one whole physical GPU in GiB as the provider
    reports it. Pass ``None`` rather than a fractional share's memory for
    fractional GPUs, or the share will not fit and the name stays unknown.
    """
    cat = catalog or default_catalog()
    hint = _hint(memory_hint)

    canonical = cat.by_lower_name.get(raw_name.strip().lower())
    name_memory: Decimal | None = None
    if canonical is not None:
        candidates: tuple[str, ...] = (canonical,)
        default: str | None = canonical
    else:
        normalized = normalize_gpu_name(raw_name)
        size = normalized.memory_gib
        named = cat.by_named_size.get((normalized.key, size)) if size is not None else None
        if named is not None:
            # The size is part of the product's name, so it says nothing of GPU memory.
            candidates, default = (named,), named
        else:
            owner = cat.by_key.get(normalized.key) if normalized.key else None
            if owner is None:
                return _unknown(raw_name, "no catalog alias matches this name")
            family = cat.families.get(owner)
            if family is not None:
                candidates, default = family.members, family.default
            else:
                candidates, default = (owner,), owner
            name_memory = normalized.memory_gib

    evidence = [m for m in (name_memory, hint) if m is not None]
    if not evidence:
        if default is None:
            return _unknown(
                raw_name,
                f"could be any of {', '.join(candidates)}; no memory size in the name or hint",
            )
        return _known(raw_name, cat.specs[default])

    fitting = [
        name
        for name in candidates
        if all(memory_fits(m, cat.specs[name].vram_gib) for m in evidence)
    ]
    if len(fitting) == 1:
        return _known(raw_name, cat.specs[fitting[0]])
    stated = " and ".join(f"{m} GiB" for m in dict.fromkeys(evidence))
    if not fitting:
        sizes = ", ".join(f"{name} ({cat.specs[name].vram_gib} GiB)" for name in candidates)
        return _unknown(raw_name, f"memory {stated} fits none of {sizes}")
    if default in fitting:
        return _known(raw_name, cat.specs[default])
    return _unknown(raw_name, f"memory {stated} fits several of {', '.join(fitting)}")


def _hint(memory_hint: Decimal | int | float | None) -> Decimal | None:
    if memory_hint is None:
        return None
    value = to_decimal(memory_hint, "memory_hint")
    if value <= 0:
        raise ValueError(f"memory_hint: must be > 0 GiB, got {value}")
    return value


def _known(raw: str, spec: GpuSpec) -> GpuMatch:
    return GpuMatch(raw=raw, name=spec.name, known=True, spec=spec)


def _unknown(raw: str, reason: str) -> GpuMatch:
    return GpuMatch(raw=raw, name=raw, known=False, spec=None, reason=reason)


def chip_unit(models: Iterable[str], *, catalog: Catalog | None = None) -> str:
    """What a per-unit price column counts: ``"accelerator"`` when any row is a TPU,
    Trainium, Inferentia or Gaudi (priced per chip, which is not a GPU), else ``"GPU"``.
    Names the catalog does not know count as GPUs (what providers sell under them)."""
    specs = (catalog or default_catalog()).specs
    for name in models:
        spec = specs.get(name)
        if spec is not None and spec.kind == "accelerator":
            return "accelerator"
    return "GPU"
