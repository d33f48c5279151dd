"""Load and validate the GPU data file (``gpus.toml``) into an indexed :class:`Catalog`.

The file is data maintained by hand from datasheets, so it is checked hard at load:
a typo in a field name, a missing figure, a non-positive number or an alias claimed
by two models stops the load with one line naming the file, the row and the field,
instead of silently mis-resolving offers later.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from tracker.catalog.names import memory_fits, normalize_gpu_name
from tracker.catalog.spec import GpuSpec

__all__ = ["Catalog", "CatalogError", "Family", "load_catalog"]

KINDS = frozenset({"gpu", "accelerator"})

_REQUIRED_TEXT = ("name", "vendor", "kind", "architecture", "form_factor", "source")
_OPTIONAL_NUMBERS = (
    "memory_bandwidth_gbs",
    "fp32_tflops",
    "fp16_tflops",
    "bf16_tflops",
    "fp8_tflops",
    "int8_tops",
)
_GPU_FIELDS = frozenset(
    {
        *_REQUIRED_TEXT,
        *_OPTIONAL_NUMBERS,
        "year",
        "vram_gib",
        "nvlink",
        "chip_link",
        "aliases",
        "note",
    }
)
_FAMILY_FIELDS = frozenset({"aliases", "members", "default", "default_reason"})


class CatalogError(ValueError):
    """The GPU data file is malformed; the message names the file, row and field."""


@dataclass(frozen=True, slots=True)
class Family:
    """Spellings shared by several models that only memory size tells apart.

    ``default`` is the member a spelling means when neither the name nor a hint
    gives a memory size; ``None`` means such a spelling stays unknown.
    """

    label: str
    members: tuple[str, ...]
    default: str | None
    default_reason: str


@dataclass(frozen=True, slots=True)
class Catalog:
    """Specs by canonical name, plus lookup keys to the model or family they mean."""

    specs: Mapping[str, GpuSpec]
    by_key: Mapping[str, str] = field(default_factory=dict)
    families: Mapping[str, Family] = field(default_factory=dict)
    by_lower_name: Mapping[str, str] = field(default_factory=dict)
    by_named_size: Mapping[tuple[str, Decimal], str] = field(default_factory=dict)
    """(key, size) of aliases whose size is part of the product name, not its GPU memory."""


def load_catalog(path: Path) -> Catalog:
    """Parse and validate one data file; raise :class:`CatalogError` on any defect."""
    where = path.name
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle, parse_float=Decimal)
    except OSError as exc:
        raise CatalogError(f"{where}: cannot read GPU catalog: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{where}: not valid TOML: {exc}") from None
    return build_catalog(data, where)


def build_catalog(data: Mapping[str, Any], where: str) -> Catalog:
    """Validate parsed TOML and index it; ``where`` prefixes every error message."""
    unknown_tables = set(data) - {"gpu", "family"}
    if unknown_tables:
        raise CatalogError(f"{where}: unknown top-level table(s) {sorted(unknown_tables)}")
    rows = data.get("gpu")
    if not isinstance(rows, list) or not rows:
        raise CatalogError(f"{where}: no [[gpu]] rows")

    specs: dict[str, GpuSpec] = {}
    owner_of_key: dict[str, str] = {}
    named_sizes: dict[tuple[str, Decimal], str] = {}
    for index, row in enumerate(rows):
        spec = _parse_gpu(row, f"{where}: gpu[{index}]")
        label = f"{where}: gpu[{index}] ({spec.name!r})"
        if spec.name in specs:
            raise CatalogError(f"{label}: duplicate name")
        specs[spec.name] = spec
        for alias in spec.aliases:
            size = normalize_gpu_name(alias).memory_gib
            if size is None:
                _claim(owner_of_key, alias, spec.name, label)
            else:
                _claim_named_size(named_sizes, alias, size, spec, label)
        # The canonical name is a spelling too ("NVIDIA A40"), unless it carries a
        # memory size: "A100-80GB" is reached through its family instead.
        if normalize_gpu_name(spec.name).memory_gib is None:
            _claim(owner_of_key, spec.name, spec.name, label)

    lower: dict[str, str] = {}
    for name in specs:
        if name.lower() in lower:
            raise CatalogError(
                f"{where}: names {lower[name.lower()]!r} and {name!r} differ only by case"
            )
        lower[name.lower()] = name

    families: dict[str, Family] = {}
    family_rows = data.get("family", [])
    if not isinstance(family_rows, list):
        raise CatalogError(f"{where}: 'family' must be an array of tables ([[family]])")
    for index, row in enumerate(family_rows):
        label = f"{where}: family[{index}]"
        family, aliases = _parse_family(row, label, specs)
        family_id = f"family:{index}"
        families[family_id] = family
        for alias in aliases:
            _claim(owner_of_key, alias, family_id, f"{label} ({family.label!r})")

    # A spec row lists its family spellings too, so `gpus` output shows them.
    shared: dict[str, list[str]] = {}
    for row in family_rows:
        for member in row["members"]:
            shared.setdefault(member, []).extend(row["aliases"])
    if shared:
        specs = {name: _with_aliases(spec, shared.get(name, [])) for name, spec in specs.items()}
    return Catalog(
        specs=specs,
        by_key=owner_of_key,
        families=families,
        by_lower_name=lower,
        by_named_size=named_sizes,
    )


def _with_aliases(spec: GpuSpec, extra: list[str]) -> GpuSpec:
    if not extra:
        return spec
    return replace(spec, aliases=tuple(dict.fromkeys((*spec.aliases, *extra))))


def _claim(owner_of_key: dict[str, str], alias: str, owner: str, label: str) -> None:
    normalized = normalize_gpu_name(alias)
    if not normalized.key:
        raise CatalogError(f"{label}: alias {alias!r} has nothing left after normalising")
    if normalized.memory_gib is not None:
        raise _stated_memory(label, alias)
    previous = owner_of_key.get(normalized.key)
    if previous is not None and previous != owner:
        raise CatalogError(
            f"{label}: alias {alias!r} (key {normalized.key!r}) is already claimed by {previous!r}"
        )
    owner_of_key[normalized.key] = owner


def _stated_memory(label: str, alias: str) -> CatalogError:
    return CatalogError(
        f"{label}: alias {alias!r} states a memory size; list the spelling without it "
        "(memory is matched against vram_gib)"
    )


def _claim_named_size(
    named_sizes: dict[tuple[str, Decimal], str],
    alias: str,
    size: Decimal,
    spec: GpuSpec,
    label: str,
) -> None:
    """Register a product name that carries a size the GPU does not have.

    "NVIDIA GH200 480GB" counts the Grace CPU's memory; read as GPU memory it would fit
    no GH200. Such an alias matches only its exact key and size. A size that *is* the
    GPU's memory stays forbidden: it would shadow the memory check it duplicates.
    """
    key = normalize_gpu_name(alias).key
    if not key or memory_fits(size, spec.vram_gib):
        raise _stated_memory(label, alias)
    slot = (key, size)
    previous = named_sizes.get(slot)
    if previous is not None and previous != spec.name:
        raise CatalogError(f"{label}: alias {alias!r} is already claimed by {previous!r}")
    named_sizes[slot] = spec.name


def _parse_gpu(row: Any, label: str) -> GpuSpec:
    if not isinstance(row, dict):
        raise CatalogError(f"{label}: must be a table")
    name = row.get("name")
    if isinstance(name, str) and name.strip():
        label = f"{label} ({name!r})"
    extra = set(row) - _GPU_FIELDS
    if extra:
        raise CatalogError(f"{label}: unknown field(s) {sorted(extra)}")
    text = {key: _text(row, key, label) for key in _REQUIRED_TEXT}
    if text["kind"] not in KINDS:
        raise CatalogError(f"{label}: kind must be one of {sorted(KINDS)}, got {text['kind']!r}")
    if not text["source"].startswith("https://"):
        raise CatalogError(f"{label}: source must be an https:// datasheet URL")
    year = row.get("year")
    if not isinstance(year, int) or isinstance(year, bool) or not 2000 <= year <= 2100:
        raise CatalogError(f"{label}: year must be an integer between 2000 and 2100, got {year!r}")
    nvlink = row.get("nvlink")
    if not isinstance(nvlink, bool):
        raise CatalogError(f"{label}: nvlink must be true or false, got {nvlink!r}")
    vram = _number(row, "vram_gib", label)
    if vram is None:
        raise CatalogError(f"{label}: missing required field 'vram_gib'")
    numbers = {key: _number(row, key, label) for key in _OPTIONAL_NUMBERS}
    aliases = row.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
        raise CatalogError(f"{label}: aliases must be a list of non-empty strings")
    note = row.get("note", "")
    if not isinstance(note, str):
        raise CatalogError(f"{label}: note must be a string")
    chip_link = row.get("chip_link", "")
    if not isinstance(chip_link, str):
        raise CatalogError(f"{label}: chip_link must be a string")
    return GpuSpec(
        name=text["name"],
        vendor=text["vendor"],
        kind=text["kind"],
        architecture=text["architecture"],
        year=year,
        vram_gib=vram,
        memory_bandwidth_gbs=numbers["memory_bandwidth_gbs"],
        fp32_tflops=numbers["fp32_tflops"],
        fp16_tflops=numbers["fp16_tflops"],
        bf16_tflops=numbers["bf16_tflops"],
        fp8_tflops=numbers["fp8_tflops"],
        int8_tops=numbers["int8_tops"],
        nvlink=nvlink,
        chip_link=chip_link.strip(),
        form_factor=text["form_factor"],
        source=text["source"],
        aliases=tuple(dict.fromkeys(a.strip() for a in aliases)),
        note=note.strip(),
    )


def _parse_family(row: Any, label: str, specs: Mapping[str, GpuSpec]) -> tuple[Family, list[str]]:
    if not isinstance(row, dict):
        raise CatalogError(f"{label}: must be a table")
    extra = set(row) - _FAMILY_FIELDS
    if extra:
        raise CatalogError(f"{label}: unknown field(s) {sorted(extra)}")
    aliases = row.get("aliases")
    if (
        not isinstance(aliases, list)
        or not aliases
        or not all(isinstance(a, str) and a.strip() for a in aliases)
    ):
        raise CatalogError(f"{label}: aliases must be a non-empty list of strings")
    members = row.get("members")
    if not isinstance(members, list) or len(members) < 2:
        raise CatalogError(f"{label}: members must list at least two canonical names")
    for member in members:
        if member not in specs:
            raise CatalogError(f"{label}: member {member!r} is not a [[gpu]] name")
    default = row.get("default")
    reason = row.get("default_reason", "")
    if default is not None:
        if default not in members:
            raise CatalogError(f"{label}: default {default!r} is not one of its members")
        if not isinstance(reason, str) or not reason.strip():
            raise CatalogError(f"{label}: a default needs a default_reason saying who reports it")
    elif reason:
        raise CatalogError(f"{label}: default_reason given without a default")
    family = Family(
        label=str(aliases[0]),
        members=tuple(members),
        default=default,
        default_reason=str(reason).strip(),
    )
    return family, [a.strip() for a in aliases]


def _text(row: Mapping[str, Any], key: str, label: str) -> str:
    value = row.get(key)
    if value is None:
        raise CatalogError(f"{label}: missing required field {key!r}")
    if not isinstance(value, str) or not value.strip():
        raise CatalogError(f"{label}: {key} must be a non-empty string")
    return value.strip()


def _number(row: Mapping[str, Any], key: str, label: str) -> Decimal | None:
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise CatalogError(f"{label}: {key} must be a number, got {value!r}")
    result = Decimal(value)
    if not result.is_finite() or result <= 0:
        raise CatalogError(f"{label}: {key} must be a positive number, got {value!r}")
    return result
