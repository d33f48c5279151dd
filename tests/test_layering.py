"""The code's boundaries, checked on the source: only the store speaks SQL, modules stay small.

Each check lists every offender with its place, so a failure says what to move where.
"""

from __future__ import annotations

import ast
import subprocess
import sys
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


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(tree: ast.AST, module: str, is_package: bool) -> set[tuple[str, str]]:
    """Every ``(module, name)`` that ``module`` imports (name empty for ``import m``),
    at the top or inside a function (both run when called), leaving out ``if
    TYPE_CHECKING:`` blocks (never run)."""
    found: set[tuple[str, str]] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update((alias.name, "") for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                keep = len(parts) - node.level + (1 if is_package else 0)
                base = ".".join([*parts[:keep], *([base] if base else [])])
            found.update((base, alias.name) for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the project modules it imports (``from a import b`` counts ``a.b`` when
    that is a module, else ``a``; the parent packages an import loads first are not
    counted, or every package would be a cycle with its own modules)."""
    names = {}
    for path in modules(root):
        rel = path.relative_to(root).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        names[".".join(parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        wanted = {
            f"{base}.{item}" if f"{base}.{item}" in names else base
            for base, item in _imported(tree, name, path.name == "__init__.py")
        }
        graph[name] = {w for w in wanted if w in names and w != name}
    return graph


def import_cycles(root: Path) -> list[str]:
    """``a -> b -> a`` for every group of modules that import each other (Tarjan's
    strongly connected components, each shown as one cycle through its members)."""
    graph = import_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            connect(v)
    return [_cycle_through(graph, g) for g in sorted(groups)]


def _cycle_through(graph: dict[str, set[str]], group: list[str]) -> str:
    """One import path from the group's first module back to itself (breadth-first)."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                return " -> ".join([*paths[v], start]) + f"  (group: {', '.join(group)})"
            if w not in paths:
                paths[w] = [*paths[v], w]
                queue.append(w)
    return ", ".join(group)


def test_no_import_cycles() -> None:
    """Counting imports inside functions (they run too), not TYPE_CHECKING blocks."""
    cycles = import_cycles(ROOT)
    assert not cycles, "these modules import each other; move the shared part:\n" + "\n".join(
        cycles
    )


def test_the_cycle_check_names_the_modules(tmp_path: Path) -> None:
    """A cycle through a function-level import is found and named; a TYPE_CHECKING
    import back is not a cycle."""
    pkg = tmp_path / "tracker"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from tracker import b\n")
    (pkg / "b.py").write_text("def f():\n    from tracker.c import g\n")
    (pkg / "c.py").write_text("from .a import x\n")
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import tracker.e\n"
    )
    (pkg / "e.py").write_text("import tracker.d\n")
    assert import_cycles(tmp_path) == [
        "tracker.a -> tracker.b -> tracker.c -> tracker.a  (group: tracker.a, tracker.b, tracker.c)"
    ]


def test_only_the_cli_imports_the_cli_and_the_service_never_the_web() -> None:
    """Faces do not import each other: nothing outside tracker/cli imports tracker.cli,
    and the service package does not import the web package (``serve`` composes them,
    tracker/serving.py), not even inside a function."""
    graph = import_graph(ROOT)
    offenders = [
        f"{m} imports {', '.join(sorted(t for t in targets if _under(t, face)))}"
        for m, targets in sorted(graph.items())
        for face, allowed in (("tracker.cli", "tracker.cli"), ("tracker.web", "tracker.web"))
        if not _under(m, allowed)
        and (face == "tracker.cli" or _under(m, "tracker.service"))
        and any(_under(t, face) for t in targets)
    ]
    assert not offenders, "\n".join(offenders)


def test_the_mcp_face_imports_no_other_face_and_none_imports_it() -> None:
    """tracker/mcp is a face like cli and web: it reads through tracker.views and imports
    neither tracker.cli nor tracker.web; of the rest only the CLI's ``mcp`` command and
    tracker/serving.py (which composes ``serve``) may import it."""
    graph = import_graph(ROOT)
    offenders = [
        f"{m} imports {t}"
        for m, targets in sorted(graph.items())
        for t in sorted(targets)
        if (_under(m, "tracker.mcp") and (_under(t, "tracker.cli") or _under(t, "tracker.web")))
        or (
            _under(t, "tracker.mcp")
            and not _under(m, "tracker.mcp")
            and m not in ("tracker.cli.mcp", "tracker.serving")
        )
    ]
    assert not offenders, "\n".join(offenders)


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_importing_the_web_package_loads_no_cli_library() -> None:
    """A fresh interpreter: ``import tracker.web`` (the dashboard) and ``import
    tracker.views`` load neither typer, rich nor tracker.cli."""
    code = (
        "import sys, tracker.web, tracker.web.pages, tracker.web.api, tracker.web.history_api, "
        "tracker.web.alerts_page, tracker.views.offers, tracker.views.history, "
        "tracker.views.rankings, tracker.views.alerts\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich') "
        "or m.startswith('tracker.cli')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
