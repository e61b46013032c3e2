"""No module of the project imports itself round a loop.

A cycle is a set of modules that import each other, directly or round a longer
loop: a strongly connected component of more than one module in the graph of
imports between the project's modules (tests/imports.py: every import, the ones
under ``if TYPE_CHECKING:`` and inside functions included, for a loop that Python
tolerates because one side imports late or only for mypy is a loop all the same:
neither module can be read, tested or moved without the other).  A package
counts as its ``__init__.py``: importing ``p2pcards.bench.record`` is not
importing ``p2pcards.bench``, so a package whose ``__init__`` gathers its own
modules is in no cycle with them, unless one of them imports the package's own
name back.

``KNOWN_CYCLES`` would list a cycle accepted for a time, each to be broken (none is
today); the list can only shrink: a new cycle fails here, and so does a listed one
that is gone (then delete its entry).
"""

from __future__ import annotations

from pathlib import Path

from tests.imports import Import, cycles, graph, modules, project_imports

KNOWN_CYCLES: set[tuple[str, ...]] = set()
"""Cycles accepted for a time (each a sorted tuple of module names, with a comment on
what imports what); none today."""


def _found() -> tuple[list[Import], list[tuple[str, ...]]]:
    found = project_imports(modules())
    return found, cycles(graph(found))


def _described(cycle: tuple[str, ...], found: list[Import]) -> str:
    lines = [f"  {edge}" for edge in found if edge.module in cycle and edge.target in cycle]
    return " <-> ".join(cycle) + "\n" + "\n".join(lines)


def test_no_import_cycle_but_the_known_ones() -> None:
    found, now = _found()
    new = [_described(c, found) for c in now if c not in KNOWN_CYCLES]
    assert new == [], "import cycles not in KNOWN_CYCLES:\n" + "\n".join(new)


def test_every_known_cycle_still_exists() -> None:
    """A cycle broken leaves the list, so that it cannot come back unnoticed."""
    _, now = _found()
    gone = sorted(KNOWN_CYCLES - set(now))
    assert gone == [], f"cycles in KNOWN_CYCLES that are gone (delete them): {gone}"


def test_every_kind_of_import_is_followed(tmp_path: Path) -> None:
    """The imports that hide a cycle are found (under ``if TYPE_CHECKING:``, inside a
    function, relative ones), each with where it stands; what a package's ``__init__``
    imports of its own modules is an edge, a module's own package is not."""
    sources = {
        "__init__.py": "from .core import Core\n",
        "core.py": "from typing import TYPE_CHECKING\n"
                   "if TYPE_CHECKING:\n    from pkg.rules import Rules\n",
        "rules.py": "import pkg.core\n"
                    "def later():\n    from . import view\n    from pkg import Core\n",
        "view.py": "from pkg.core import Core\nfrom .rules import later as _, Rules\n",
    }
    for name, text in sources.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    known = {("pkg." + name[:-3]).removesuffix(".__init__"): tmp_path / name
             for name in sources}
    assert sorted((e.module, e.target, e.where) for e in project_imports(known)) == [
        ("pkg", "pkg.core", "top"),
        ("pkg.core", "pkg.rules", "TYPE_CHECKING"),
        ("pkg.rules", "pkg", "function"),
        ("pkg.rules", "pkg.core", "top"),
        ("pkg.rules", "pkg.view", "function"),
        ("pkg.view", "pkg.core", "top"),
        ("pkg.view", "pkg.rules", "top")]
    assert cycles(graph(project_imports(known))) == [("pkg", "pkg.core", "pkg.rules",
                                                     "pkg.view")]


def test_a_cycle_is_found_however_long_its_loop() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"},
             "g": set()}
    assert cycles(edges) == [("a", "b", "c"), ("d", "e")]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
