"""The import structure of the package: no module reaches itself again through imports,
and the rules core stands on its own.

Imports are read with ``ast`` from the source, wherever they stand: at module level, in
a function (a lazy import is still a dependency), under ``if TYPE_CHECKING``.  An edge
goes to the module that is named, not to the packages above it: ``from .games import
load_board`` ties a module to ``games``, ``from . import mails`` to ``mails``, and
``from ..rules import Board`` to ``rules/__init__.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "abalone_pbm"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} (line {self.line})"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def _base(module: str, path: Path, level: int, name: str | None) -> str:
    """The absolute module a (possibly relative) ``from`` import names."""
    if level == 0:
        return name or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{name}" if name else package


def _targets(module: str, path: Path, node: ast.AST, known: set[str]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
    elif isinstance(node, ast.ImportFrom):
        base = _base(module, path, node.level, node.module)
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            yield submodule if submodule in known else base


def import_edges() -> list[Edge]:
    modules = _modules()
    known = set(modules)
    edges: dict[tuple[str, str], Edge] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for target in _targets(module, path, node, known):
                if target in known and target != module and (module, target) not in edges:
                    edges[module, target] = Edge(module, target, getattr(node, "lineno", 0))
    return sorted(edges.values(), key=lambda e: (e.source, e.line, e.target))


def circles(edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for following in sorted(graph[node]):
            if following not in index:
                visit(following)
                low[node] = min(low[node], low[following])
            elif following in on_stack:
                low[node] = min(low[node], index[following])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_reader_finds_imports_of_every_kind() -> None:
    edges = {(e.source, e.target) for e in import_edges()}
    # module level, relative to a sibling module
    assert ("abalone_pbm.service.mailroom", "abalone_pbm.service.context") in edges
    # a function-level import (``serve`` imports the service layer lazily)
    assert ("abalone_pbm.server", "abalone_pbm.service.mailroom") in edges
    # a package's own __init__ named by ``from ..rules import ...``
    assert ("abalone_pbm.service.games", "abalone_pbm.rules") in edges


def test_circles_are_found() -> None:
    edges = [Edge("a", "b", 1), Edge("b", "c", 1), Edge("c", "a", 1), Edge("c", "d", 1)]
    assert circles(edges) == [["a", "b", "c"]]


def test_no_import_circles() -> None:
    edges = import_edges()
    report = []
    for component in circles(edges):
        members = set(component)
        ties = [str(e) for e in edges if e.source in members and e.target in members]
        report.append("circle: " + ", ".join(component) + "\n    " + "\n    ".join(ties))
    assert not report, "\n".join(report)


def test_the_rules_core_imports_nothing_else_of_the_package() -> None:
    core = f"{PACKAGE}.rules"
    outward = [
        str(e) for e in import_edges()
        if (e.source == core or e.source.startswith(core + "."))
        and not (e.target == core or e.target.startswith(core + "."))
    ]
    assert not outward, "\n".join(outward)
