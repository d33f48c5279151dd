"""Reduce a provider's GPU spelling to a lookup key plus any memory size it states.

Providers spell the same part many ways ("NVIDIA A100-SXM4-80GB",
"nvidia-a100-80gb", "A100 80GB"). Stripping case, punctuation, vendor and
marketing words, and the memory suffix leaves a short key ("a100sxm4", "a100")
that the alias table can match exactly. The memory size is returned separately
because it is what tells the A100 40/80 GB and V100 16/32 GB parts apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

__all__ = ["HINT_TOLERANCE", "NormalizedName", "memory_fits", "normalize_gpu_name"]

_SPLIT = re.compile(r"[^a-z0-9.]+")
_MEMORY_TOKEN = re.compile(r"^(\d+(?:\.\d+)?)(?:gb|gib|g)$")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")

# Words that never distinguish one part from another in any provider's spelling.
_NOISE = frozenset(
    {
        "nvidia",
        "tesla",
        "geforce",
        "amd",
        "intel",
        "habana",
        "aws",
        "amazon",
        "google",
        "cloud",
        "tpu",
        "instinct",
        "gpu",
        "gpus",
        "tensor",
        "core",
        "accelerator",
        # GCP's "-vws" accelerator types (nvidia-tesla-t4-vws, nvidia-l4-vws, ...) are the
        # same GPU sold with an NVIDIA RTX Virtual Workstation licence.
        "vws",
    }
)
# Memory technology names say nothing the capacity does not.
_MEMORY_KIND = frozenset({"hbm", "hbm2", "hbm2e", "hbm3", "hbm3e", "gddr5", "gddr6", "gddr6x"})
_MEMORY_UNITS = frozenset({"gb", "gib"})

# How far a stated memory size may sit from the datasheet's: providers report usable
# rather than nominal memory (AWS reports the 24 GB A10G as 22 888 MiB).
HINT_TOLERANCE = Decimal("0.10")


@dataclass(frozen=True, slots=True)
class NormalizedName:
    key: str
    memory_gib: Decimal | None


def normalize_gpu_name(raw: str) -> NormalizedName:
    """Lookup key and stated memory (GiB) of a GPU spelling; the key may be empty."""
    tokens = [t.strip(".") for t in _SPLIT.split(raw.lower())]
    tokens = [t for t in tokens if t]
    kept: list[str] = []
    memory: Decimal | None = None
    i = 0
    while i < len(tokens):
        token = tokens[i]
        match = _MEMORY_TOKEN.match(token)
        if match:
            memory = Decimal(match.group(1))
        elif (
            _NUMBER.match(token)
            and i + 1 < len(tokens)
            and tokens[i + 1] in _MEMORY_UNITS
            and kept  # "80 GB" after a model name, not a leading model number
        ):
            memory = Decimal(token)
            i += 1
        elif token not in _NOISE and token not in _MEMORY_KIND:
            kept.append(token)
        i += 1
    return NormalizedName(key="".join(kept).replace(".", ""), memory_gib=memory)


def memory_fits(stated: Decimal, vram_gib: Decimal) -> bool:
    """Whether a stated memory size is this VRAM, allowing :data:`HINT_TOLERANCE`."""
    return abs(stated - vram_gib) <= vram_gib * HINT_TOLERANCE
