"""The distribution ships every package of the tree and registers its collectors."""

from __future__ import annotations

import tomllib
from importlib.metadata import entry_points
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_folder_is_listed_in_pyproject() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    mapped = {v: k for k, v in config.get("package-dir", {}).items()}
    found = set()
    for init in ROOT.glob("**/__init__.py"):
        rel = init.parent.relative_to(ROOT)
        if rel.parts[0] in {"tests", "bench", ".venv", "build"} or "." in rel.parts[0][:1]:
            continue
        top = rel.parts[0]
        dotted = ".".join(rel.parts)
        if top in mapped:
            dotted = ".".join((mapped[top], *rel.parts[1:]))
        found.add(dotted)
    assert found == listed


def test_our_collectors_are_entry_points() -> None:
    names = {ep.name for ep in entry_points(group="gpu_tracker.collectors")}
    assert {"pricesheet", "aws", "azure", "gcp"} <= names
