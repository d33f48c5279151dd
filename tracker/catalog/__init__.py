"""GPU catalog: canonical GPU/accelerator models, their provider spellings and datasheet specs.

Data lives in ``gpus.toml`` beside this package (one ``[[gpu]]`` row per model, each
citing its datasheet); see :mod:`tracker.catalog.resolve` for the matching rules.
``fabrics.toml`` holds the inter-node fabric the providers document per instance type
(:mod:`tracker.catalog.fabrics`).
"""

from tracker.catalog.fabrics import (
    DocumentedFabric,
    FabricDataError,
    documented_fabric,
    load_fabrics,
)
from tracker.catalog.loader import Catalog, CatalogError, Family, load_catalog
from tracker.catalog.names import NormalizedName, normalize_gpu_name
from tracker.catalog.resolve import (
    DATA_FILE,
    HINT_TOLERANCE,
    all_specs,
    chip_unit,
    default_catalog,
    get_spec,
    resolve_gpu,
)
from tracker.catalog.select import GpuSelection, gpu_models_for, select_gpus
from tracker.catalog.spec import GpuMatch, GpuSpec

__all__ = [
    "DATA_FILE",
    "HINT_TOLERANCE",
    "Catalog",
    "CatalogError",
    "DocumentedFabric",
    "FabricDataError",
    "Family",
    "GpuMatch",
    "GpuSelection",
    "GpuSpec",
    "NormalizedName",
    "all_specs",
    "chip_unit",
    "default_catalog",
    "documented_fabric",
    "get_spec",
    "gpu_models_for",
    "load_catalog",
    "load_fabrics",
    "normalize_gpu_name",
    "resolve_gpu",
    "select_gpus",
]
