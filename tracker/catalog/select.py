"""What a GPU name a person types selects: one model, a family's variants, or a raw name.

Every GPU filter (``offers --gpu``, ``recommend --gpu``, a profile's ``gpus``, and the
history and alert filters to come) takes names people type, while the store holds
canonical names. One rule serves them all:

1. A canonical name, in any case (``h100-sxm``), selects that model; a bare one (no
   ``-variant`` part, e.g. ``H200``) also selects the models named ``<name>-<variant>``
   (``H200-NVL``).
2. A spelling of a family (``H100``, ``A100``, ``nvidia-tesla-v100``; see the
   ``[[family]]`` rows of ``gpus.toml``) selects every member. The family's own name
   (its first alias, e.g. ``H100``) also selects the catalog models named
   ``<name>-<variant>`` (``H100-PCIE``): someone typing "H100" means any H100. A memory
   size narrows a family to the part it fits, as resolution does (``"a100 80gb"`` is
   ``A100-80GB``).
3. Any other spelling the catalog resolves (``Tesla T4``) selects that model.
4. A name the catalog does not know selects offers whose stored model or provider
   spelling equals it, ignoring case (how unrecognised GPUs are stored).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tracker.catalog.loader import Catalog
from tracker.catalog.names import normalize_gpu_name
from tracker.catalog.resolve import default_catalog, resolve_gpu

__all__ = ["GpuSelection", "gpu_models_for", "select_gpus"]


@dataclass(frozen=True, slots=True)
class GpuSelection:
    """The stored GPU names a filter matches: canonical ``models`` exactly, and the
    lower-cased ``names`` the catalog does not know against model or raw spelling."""

    models: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.models or self.names)

    def matches(self, gpu_model: str, gpu_raw_name: str = "") -> bool:
        return (
            gpu_model in self.models
            or gpu_model.lower() in self.names
            or gpu_raw_name.lower() in self.names
        )


def gpu_models_for(name: str, *, catalog: Catalog | None = None) -> tuple[str, ...]:
    """The canonical models a typed GPU name means, in catalog order; () when the catalog
    does not know the name."""
    cat = catalog or default_catalog()
    text = name.strip()
    canonical = cat.by_lower_name.get(text.lower())
    if canonical is not None:
        chosen = {canonical}
        if "-" not in canonical:
            chosen.update(_variants(cat, canonical))
        return tuple(n for n in cat.specs if n in chosen)
    normalized = normalize_gpu_name(text)
    owner = cat.by_key.get(normalized.key) if normalized.key else None
    family = cat.families.get(owner) if owner is not None else None
    if family is None or normalized.memory_gib is not None:
        match = resolve_gpu(text, catalog=cat)
        return (match.name,) if match.known else ()
    chosen = set(family.members)
    if normalized.key == normalize_gpu_name(family.label).key:
        chosen.update(_variants(cat, family.label))
    return tuple(n for n in cat.specs if n in chosen)


def _variants(cat: Catalog, base: str) -> list[str]:
    """The catalog models named ``<base>-<variant>`` (``H100-PCIE`` for ``H100``)."""
    prefix = base.lower() + "-"
    return [name for name in cat.specs if name.lower().startswith(prefix)]


def select_gpus(names: Iterable[str], *, catalog: Catalog | None = None) -> GpuSelection:
    """What a list of typed GPU names selects together (empty names are ignored)."""
    models: dict[str, None] = {}
    unknown: dict[str, None] = {}
    for name in names:
        if not name.strip():
            continue
        found = gpu_models_for(name, catalog=catalog)
        if found:
            models.update(dict.fromkeys(found))
        else:
            unknown[name.strip().lower()] = None
    return GpuSelection(tuple(models), tuple(unknown))
