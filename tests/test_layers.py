"""The layers of the code keep to the directions docs/architecture.md gives.

The rules are read from the table under "Layers" in docs/architecture.md: each
row names a part of the program and the parts (and third-party packages) it may
import.  Every import in every module, the ones inside functions included, is
checked against it, so a new dependency against the direction fails here and
the docs and the code cannot drift apart.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from tests.imports import ROOT, from_base, modules

WATCHED = ("trio", "prompt_toolkit", "cryptography", "msgpack")
"""Third-party packages whose use is part of the layering."""
MAPPED_AWAY = ("protocol", "ai")
"""Folder names that are not import names (they work from the source tree, not
from an installed wheel)."""


def layers() -> dict[str, set[str]]:
    """Part -> what it may import, from docs/architecture.md's table of layers."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    rules: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        rules[cells[0].strip("`")] = set(re.findall(r"`([\w.]+)`", cells[1]))
    return rules


def part_of(module: str, parts: set[str]) -> str | None:
    """The most specific part a module belongs to (``p2pcards.games.core`` ->
    ``p2pcards.games``)."""
    best = None
    for part in parts:
        if (module == part or module.startswith(part + ".")) and \
                (best is None or len(part) > len(best)):
            best = part
    return best


def imports(module: str, path: Path) -> set[str]:
    """Every module ``module`` imports, anywhere in it (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = from_base(module, path, node)
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def test_the_docs_name_every_part_of_the_program() -> None:
    rules = layers()
    assert {"p2pcards.protocol", "p2pcards.ai", "p2pcards.games", "p2pcards.table",
            "p2pcards.net", "p2pcards.cli", "p2pcards.bots"} <= set(rules)
    parts = set(rules)
    unplaced = [m for m in modules() if part_of(m, parts) is None]
    assert unplaced == [], f"modules in no layer of docs/architecture.md: {unplaced}"


def graph() -> dict[str, set[str]]:
    """Module -> the modules it imports."""
    return {module: imports(module, path) for module, path in modules().items()}


def violations(rules: dict[str, set[str]], imported: dict[str, set[str]]) -> list[str]:
    """Each import against the direction of ``rules``."""
    parts = set(rules)
    wrong = []
    for module, targets in sorted(imported.items()):
        mine = part_of(module, parts)
        assert mine is not None, module
        for target in sorted(targets):
            top = target.split(".")[0]
            if top in MAPPED_AWAY:
                wrong.append(f"{module} imports {target} (installed as p2pcards.{top})")
            elif top == "p2pcards":
                theirs = part_of(target, parts)
                if theirs is not None and theirs != mine and theirs not in rules[mine]:
                    wrong.append(f"{module} imports {target} ({mine} may not use {theirs})")
            elif top in WATCHED and top not in rules[mine]:
                wrong.append(f"{module} imports {target} ({mine} may not use {top})")
    return wrong


def test_every_import_keeps_to_the_layers() -> None:
    wrong = violations(layers(), graph())
    assert wrong == [], "\n".join(wrong)


def test_an_import_against_the_direction_is_caught() -> None:
    """The check can fail: the engines reaching into the table, the table into the
    local table, or the session opening a socket with trio, would each be named."""
    imported = graph()
    imported["p2pcards.games.core"] = imported["p2pcards.games.core"] | {
        "p2pcards.table.session"}
    imported["p2pcards.table.phases"] = imported["p2pcards.table.phases"] | {
        "p2pcards.local", "trio", "protocol.deck"}
    wrong = violations(layers(), imported)
    assert len(wrong) == 4
    assert any("imports protocol.deck (installed as p2pcards.protocol)" in w for w in wrong)
    assert any("p2pcards.games.core imports p2pcards.table.session" in w for w in wrong)
    assert any("p2pcards.table.phases imports p2pcards.local" in w for w in wrong)
    assert any("p2pcards.table.phases imports trio" in w for w in wrong)


def test_protocol_and_ai_stand_alone() -> None:
    """They are installed inside p2pcards but import nothing else of it (and not
    by the name they are installed as: their own imports are relative)."""
    for module, path in modules().items():
        if module.startswith(("p2pcards.protocol", "p2pcards.ai")):
            own = module.split(".")[1]
            for target in imports(module, path):
                if target.startswith("p2pcards"):
                    assert target.startswith(f"p2pcards.{own}"), (module, target)
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"^\s*(from|import) p2pcards", text, re.M), module


def test_the_tests_use_the_installed_names() -> None:
    wrong = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for target in imports(f"tests.{path.stem}", path):
            if target.split(".")[0] in MAPPED_AWAY:
                wrong.append(f"tests/{path.name} imports {target}")
    assert wrong == []


def test_every_package_is_installed() -> None:
    """pyproject lists the packages by hand (protocol/ and ai/ are mapped inside
    p2pcards): a package folder missing from the list would be missing from a wheel.
    A folder of data only (p2pcards/rules/, the rules' Markdown) is listed with its
    package data."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {name for name, path in modules().items() if path.name == "__init__.py"}
    data = set(config["tool"]["setuptools"]["package-data"])
    assert data == {"p2pcards.rules"}
    assert listed == found | data
    assert config["tool"]["setuptools"]["package-dir"] == {
        "p2pcards.protocol": "protocol", "p2pcards.ai": "ai"}
