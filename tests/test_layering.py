"""The code's boundaries, checked on the source: only the store speaks SQL, modules stay small.

Each check lists every offender with its place, so a failure says what to move where.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tracker", "collectors")
MAX_LINES = 500


def modules(root: Path) -> list[Path]:
    return sorted(
        p for pkg in PACKAGES if (root / pkg).is_dir() for p in (root / pkg).rglob("*.py")
    )


def sqlalchemy_mentions(root: Path) -> list[str]:
    """``path:line: text`` for every line outside tracker/store that names sqlalchemy.

    Any mention, not only an import statement: a ``TYPE_CHECKING`` import, an
    ``import_module("sqlalchemy")`` or a comment pointing at it all tie the module to
    the database library.
    """
    store = root / "tracker" / "store"
    found = []
    for path in modules(root):
        if path.is_relative_to(store):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if "sqlalchemy" in line.lower():
                found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    return found


def oversized(root: Path) -> list[str]:
    """``path: N lines`` for every module over :data:`MAX_LINES`."""
    sizes = ((p, len(p.read_text(encoding="utf-8").splitlines())) for p in modules(root))
    return [f"{p.relative_to(root)}: {n} lines" for p, n in sizes if n > MAX_LINES]


def test_only_the_store_mentions_sqlalchemy() -> None:
    offenders = sqlalchemy_mentions(ROOT)
    assert not offenders, "outside tracker/store, go through tracker.store:\n" + "\n".join(
        offenders
    )


def test_no_module_over_500_lines() -> None:
    offenders = oversized(ROOT)
    assert not offenders, f"split these (limit {MAX_LINES} lines):\n" + "\n".join(offenders)


def test_the_checks_find_what_they_look_for(tmp_path: Path) -> None:
    """A typed-only import outside the store and a 501-line module are flagged; the
    store's own import and a 500-line module are not."""
    store = tmp_path / "tracker" / "store"
    store.mkdir(parents=True)
    (store / "engine.py").write_text("from sqlalchemy import Engine\n")
    (tmp_path / "tracker" / "cli.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import sqlalchemy\n"
    )
    (tmp_path / "collectors").mkdir()
    (tmp_path / "collectors" / "big.py").write_text("x = 1\n" * 501)
    (tmp_path / "collectors" / "small.py").write_text("x = 1\n" * 500)
    assert sqlalchemy_mentions(tmp_path) == ["tracker/cli.py:4: import sqlalchemy"]
    assert oversized(tmp_path) == ["collectors/big.py: 501 lines"]
