"""The project's modules and the imports between them, read from the source (nothing is
imported): the layers (tests/test_layers.py) and the import cycles
(tests/test_import_cycles.py) are checked on them.

A module is known by its installed name: ``protocol/deck.py`` is
``p2pcards.protocol.deck`` (pyproject's package-dir), a package by its
``__init__.py`` (``p2pcards.games``).  An import names the project's module it
executes: ``from p2pcards.games import cards`` the module ``p2pcards.games.cards``,
``from p2pcards.games import GAMES`` the package ``p2pcards.games``, ``from .deck import
Deck`` (in ``p2pcards.protocol.audit``) ``p2pcards.protocol.deck``.  The packages above
the module named, which Python initialises first, are not counted: a package whose
``__init__.py`` imports its own modules would otherwise stand in a cycle with every one
of them that imports a sibling.  An import is found wherever it is: at the top of the
module, under ``if TYPE_CHECKING:`` (which mypy follows) and inside a function (which
runs when called).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = {"p2pcards": ROOT / "p2pcards", "p2pcards.protocol": ROOT / "protocol",
           "p2pcards.ai": ROOT / "ai"}
"""Package -> its folder (pyproject's package-dir puts protocol/ and ai/ inside p2pcards)."""


def modules() -> dict[str, Path]:
    """Every module of the project by its installed name -> its file."""
    out = {}
    for package, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([package, *parts])
            if package == "p2pcards" and parts and parts[0] in ("protocol", "ai"):
                continue  # (not a folder of p2pcards/)
            out[name] = path
    return out


def from_base(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute name of what ``from X import ...`` in ``module`` names as X
    (a relative import resolved against ``module``'s package)."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base[:len(base) - node.level + (1 if path.name == "__init__.py" else 0)]
    return ".".join(base + ([node.module] if node.module else []))


@dataclass(frozen=True)
class Import:
    """One import of one of the project's modules by another."""

    module: str
    target: str
    line: int
    where: str
    """``top`` (run on import), ``TYPE_CHECKING`` or ``function`` (run when called)."""

    def __str__(self) -> str:
        where = {"top": "", "TYPE_CHECKING": " (if TYPE_CHECKING)",
                 "function": " (inside a function)"}[self.where]
        return f"{self.module} (line {self.line}) imports {self.target}{where}"


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _statements(nodes: Iterable[ast.AST],
                where: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement among ``nodes`` and under them, with where it stands."""
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, where
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _statements(ast.iter_child_nodes(node), "function")
        elif isinstance(node, ast.If) and _type_checking(node.test):
            yield from _statements(node.body, "TYPE_CHECKING" if where == "top" else where)
            yield from _statements(node.orelse, where)
        else:
            yield from _statements(ast.iter_child_nodes(node), where)


def project_imports(known: dict[str, Path]) -> list[Import]:
    """Every import of a module of ``known`` by another one of them (a module importing
    itself, or a name of its own package from inside that package's ``__init__``, is
    not an edge)."""
    found = []
    for module, path in sorted(known.items()):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node, where in _statements(tree.body, "top"):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names if alias.name in known]
            else:
                base = from_base(module, path, node)
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known
                           else base for alias in node.names]
                targets = [t for t in targets if t in known]
            for target in dict.fromkeys(targets):
                if target != module:
                    found.append(Import(module, target, node.lineno, where))
    return found


def graph(found: list[Import]) -> dict[str, set[str]]:
    """Module -> the project's modules it imports."""
    edges: dict[str, set[str]] = {}
    for edge in found:
        edges.setdefault(edge.module, set()).add(edge.target)
        edges.setdefault(edge.target, set())
    return edges


def cycles(edges: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (each sorted, the list
    sorted): the modules that import each other, directly or round a longer loop.
    Tarjan's algorithm, without recursion."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(tuple(sorted(component)))
    return sorted(found)
