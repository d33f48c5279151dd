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


# The store: sub-packages behind small fronts.

STORE = ("tracker", "store")
MAX_STORE_TOP = 10


def store_layout(root: Path) -> list[str]:
    """What breaks the store's layout: more than :data:`MAX_STORE_TOP` public modules at
    its top, or a public module inside one of its sub-packages (their ``__init__`` is the
    front; everything else there is a private ``_module``)."""
    store = root.joinpath(*STORE)
    top = sorted(p.name for p in store.glob("*.py") if not p.name.startswith("_"))
    found = []
    if len(top) > MAX_STORE_TOP:
        found.append(f"tracker/store: {len(top)} public modules (at most {MAX_STORE_TOP})")
    for package in sorted(p for p in store.iterdir() if p.is_dir() and p.name != "__pycache__"):
        if not (package / "__init__.py").is_file():
            found.append(f"{package.relative_to(root)}: no __init__.py (its public front)")
        found.extend(
            f"{m.relative_to(root)}: public module in a store package (name it _{m.name})"
            for m in sorted(package.rglob("*.py"))
            if m.name != "__init__.py" and not m.name.startswith("_")
        )
    return found


def _project_module(name: str) -> bool:
    return name.split(".")[0] in PACKAGES


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _is_module(root: Path, dotted: str) -> bool:
    path = root.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def private_imports(root: Path, outside: tuple[str, ...] = PACKAGES) -> list[str]:
    """``path:line: what`` for every private name one module takes from another: ``from
    a import _x`` (``_x`` not a module), ``a._x`` on an imported project module, or a
    private module of a package the importer is not inside (a package may use its own
    private modules: they are its internals)."""
    found = []
    paths = (p for d in outside if (root / d).is_dir() for p in sorted((root / d).rglob("*.py")))
    for path in paths:
        here = ".".join(path.relative_to(root).parts[:-1])
        where = path.relative_to(root)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound: set[str] = set()
        for node in ast.walk(tree):
            imported: list[tuple[str, str | None]] = []
            if isinstance(node, ast.ImportFrom) and node.module and _project_module(node.module):
                imported = [(f"{node.module}.{a.name}", a.asname or a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                imported = [(a.name, None) for a in node.names if _project_module(a.name)]
            for dotted, name in imported:
                parts = dotted.split(".")
                is_module = _is_module(root, dotted)
                if not is_module and _private(parts[-1]):
                    found.append(f"{where}:{node.lineno}: {dotted}")
                    continue
                modules = parts if is_module else parts[:-1]
                hidden = [i for i, p in enumerate(modules) if _private(p)]
                if hidden and not _under(here, ".".join(modules[: hidden[0]])):
                    found.append(f"{where}:{node.lineno}: {dotted}")
                if is_module and name is not None:
                    bound.add(name)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and _private(node.attr)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
            ):
                found.append(f"{where}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def store_bypasses(
    root: Path, outside: tuple[str, ...] = PACKAGES, *, top_modules: bool = False
) -> list[str]:
    """``path:line: module`` for every import outside tracker/store of a store module that
    is neither ``tracker.store``, one of its sub-package fronts nor ``migrate`` (with
    ``top_modules``, the store's public top-level modules too: schema, column types)."""
    store = root.joinpath(*STORE)
    fronts = {"tracker.store", "tracker.store.migrate"} | {
        f"tracker.store.{p.name}" for p in store.iterdir() if (p / "__init__.py").is_file()
    }
    if top_modules:
        fronts |= {f"tracker.store.{p.stem}" for p in store.glob("*.py") if not _private(p.stem)}
    found = []
    for path in (
        p for d in outside if (root / d).is_dir() for p in sorted((root / d).rglob("*.py"))
    ):
        if path.is_relative_to(store):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and _under(node.module, "tracker.store")
            ):
                names = (
                    [node.module]
                    if node.module != "tracker.store"
                    else [
                        f"tracker.store.{a.name}"
                        for a in node.names
                        if (store / a.name).is_dir() or (store / f"{a.name}.py").is_file()
                    ]
                )
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if _under(a.name, "tracker.store")]
            found.extend(
                f"{path.relative_to(root)}:{node.lineno}: {n}" for n in names if n not in fronts
            )
    return found


def package_of(module: str, root: Path) -> str:
    """The package a module counts for in the package graph: a store sub-package, else
    the first level under ``tracker`` (``tracker.plan``, ``tracker.views``, a top module)."""
    parts = module.split(".")
    if parts[:2] == list(STORE) and len(parts) > 2 and root.joinpath(*STORE, parts[2]).is_dir():
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def package_cycles(root: Path) -> list[str]:
    """``a <-> b (m imports n; ...)`` for each pair of packages that import each other,
    counted through the module graph (imports inside functions too)."""
    edges: dict[tuple[str, str], list[str]] = {}
    for m, targets in import_graph(root).items():
        for t in targets:
            a, b = package_of(m, root), package_of(t, root)
            if a != b and not _under(a, b) and not _under(b, a):
                edges.setdefault((a, b), []).append(f"{m} imports {t}")
    found = [
        f"{a} <-> {b} ({edges[a, b][0]}; {edges[b, a][0]})"
        for a, b in sorted(edges)
        if a < b and (b, a) in edges
    ]
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    paired = {p for a, b in edges if (b, a) in edges for p in (a, b)}
    for start in sorted(set(graph) - paired):
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            v = todo.pop()
            if v == start:
                found.append(f"{start} imports itself back through other packages")
                break
            if v not in seen:
                seen.add(v)
                todo.extend(graph.get(v, ()))
    return found


def test_the_store_is_grouped_behind_small_fronts() -> None:
    offenders = store_layout(ROOT)
    assert not offenders, "\n".join(offenders)


def test_code_outside_the_store_imports_only_its_fronts() -> None:
    """tracker/ and collectors/ reach the store through ``tracker.store`` and its
    sub-packages' fronts (``migrate`` is a front of its own); bench/ and migrations/ may
    also name its public top-level modules (the schema and column types they build on)."""
    offenders = store_bypasses(ROOT) + store_bypasses(
        ROOT, ("bench", "migrations"), top_modules=True
    )
    assert not offenders, "import the front instead:\n" + "\n".join(offenders)


def test_no_private_name_is_imported_from_another_module() -> None:
    offenders = private_imports(ROOT, (*PACKAGES, "bench", "migrations"))
    assert not offenders, "make these public where they are shared:\n" + "\n".join(offenders)


def test_no_package_imports_another_that_imports_it_back() -> None:
    offenders = package_cycles(ROOT)
    assert not offenders, "move the shared part:\n" + "\n".join(offenders)


def test_the_package_checks_find_what_they_look_for(tmp_path: Path) -> None:
    """A private name across modules, a private store module used from outside, a public
    module inside a store package and two packages importing each other are all named;
    a package using its own private module is not."""
    store = tmp_path / "tracker" / "store"
    (store / "reads").mkdir(parents=True)
    for f in ("tracker/__init__.py", "tracker/store/__init__.py", "tracker/store/engine.py"):
        (tmp_path / f).write_text("")
    (store / "reads" / "__init__.py").write_text("from tracker.store.reads._offers import x\n")
    (store / "reads" / "_offers.py").write_text("x = 1\n_y = 2\n")
    (store / "reads" / "public.py").write_text("")
    (tmp_path / "tracker" / "a").mkdir()
    (tmp_path / "tracker" / "b").mkdir()
    (tmp_path / "tracker" / "a" / "__init__.py").write_text("")
    (tmp_path / "tracker" / "b" / "__init__.py").write_text("")
    (tmp_path / "tracker" / "a" / "one.py").write_text(
        "from tracker.b.two import f\nfrom tracker.store.reads._offers import _y\n"
    )
    (tmp_path / "tracker" / "b" / "two.py").write_text(
        "from tracker.a import one\nfrom tracker.store import engine\n\ndef f():\n    return one._z\n"
    )
    assert store_layout(tmp_path) == [
        "tracker/store/reads/public.py: public module in a store package (name it _public.py)"
    ]
    assert private_imports(tmp_path) == [
        "tracker/a/one.py:2: tracker.store.reads._offers._y",
        "tracker/b/two.py:5: one._z",
    ]
    assert store_bypasses(tmp_path) == [
        "tracker/a/one.py:2: tracker.store.reads._offers",
        "tracker/b/two.py:2: tracker.store.engine",
    ]
    assert package_cycles(tmp_path)[0].startswith("tracker.a <-> tracker.b (tracker.a.one imports")
