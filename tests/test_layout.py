"""docs/architecture.md's Layout names every module of the program, and no module that
is not there.

The Layout is the fenced block under "## Layout".  A line of it that begins with
a path (no indent) starts an *entry*, which runs to the next such line: the entry
of a package (``p2pcards/games/``) or of one module (``p2pcards/local.py``).  A
module counts as named when

- its path begins an entry of its own (``p2pcards/local.py``), or
- its file name (``cards.py``) stands as a word in the entry of its own package
  (``p2pcards/games/``): not in the entry of a package above it, not as a pattern
  (``vectors*.py``) or a bare name (``cards``), and no phrase such as "one module
  per game" stands for it, or
- it is a package's ``__init__.py`` or ``__main__.py`` and an entry's path lies in
  that package's folder (``p2pcards/`` by ``p2pcards/local.py``).

So a module added, moved or renamed fails here until the Layout says what it is;
and a file name in a package's entry that is not a module of that package (one
deleted or renamed) fails too.
"""

from __future__ import annotations

import re

from tests.imports import ROOT, SOURCES

WORD = r"(?<![\w./*]){}(?![\w*])"
"""A file name standing as a word (not the end of a path, not part of a pattern)."""


def layout() -> str:
    """The fenced block under "## Layout" in docs/architecture.md."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```\n", 2)[1]


def entries(block: str) -> dict[str, str]:
    """Path (``p2pcards/games/``, ``p2pcards/local.py``) -> the text of its entry."""
    found: dict[str, str] = {}
    path = None
    for line in block.splitlines():
        if line and not line[0].isspace():
            path = line.split()[0]
            assert path.endswith(("/", ".py")), f"a Layout entry that is not a path: {line}"
            assert path not in found, f"two Layout entries for {path}"
            found[path] = line[len(path):]
        else:
            assert path is not None, f"a Layout line before any entry: {line}"
            found[path] += "\n" + line
    return found


def files() -> list[str]:
    """Every module of the program, as a path from the top of the tree."""
    return sorted(path.relative_to(ROOT).as_posix() for folder in SOURCES.values()
                  for path in folder.rglob("*.py"))


def unnamed(block: str, modules: list[str]) -> list[str]:
    """The modules ``block`` does not name, by the rule of this module's docstring."""
    found = entries(block)
    missing = []
    for module in modules:
        folder, _, name = module.rpartition("/")
        folder += "/"
        if module in found:
            continue
        if name in ("__init__.py", "__main__.py"):
            if any(path.startswith(folder) for path in found):
                continue
        elif folder in found and re.search(WORD.format(re.escape(name)), found[folder]):
            continue
        missing.append(module)
    return missing


def strangers(block: str, modules: list[str]) -> list[str]:
    """File names in a package's entry that are not modules of that package."""
    wrong = []
    for path, text in entries(block).items():
        if path.endswith("/"):
            for name in re.findall(r"(?<![\w./*])(\w+\.py)(?![\w*])", text):
                if path + name not in modules:
                    wrong.append(f"{path}: {name}")
    return wrong


def test_the_layout_names_every_module() -> None:
    missing = unnamed(layout(), files())
    assert missing == [], (
        "modules docs/architecture.md's Layout does not name (each by its file name in its "
        "package's entry): " + ", ".join(missing))


def test_the_layout_names_no_module_that_is_not_there() -> None:
    wrong = strangers(layout(), files())
    assert wrong == [], "the Layout names modules its packages do not hold: " + ", ".join(wrong)


def test_what_counts_as_named() -> None:
    block = ("p2pcards/games/            the rules, one module per game\n"
             "  __init__.py cards.py     the registry; cards\n"
             "  vectors*.py              the golden vectors\n"
             "p2pcards/local.py          a local table\n"
             "p2pcards/bots/            the bots (heuristics/pasur.py; search)\n"
             "protocol/                  the deck (proved/deck.py)\n")
    modules = ["p2pcards/__main__.py", "p2pcards/games/__init__.py",
               "p2pcards/games/cards.py", "p2pcards/games/core.py",
               "p2pcards/games/vectors_deck.py", "p2pcards/local.py",
               "p2pcards/bots/search.py", "p2pcards/bots/heuristics/__init__.py",
               "p2pcards/bots/heuristics/pasur.py", "protocol/proved/deck.py"]
    assert unnamed(block, modules) == [
        "p2pcards/games/core.py", "p2pcards/games/vectors_deck.py", "p2pcards/bots/search.py",
        "p2pcards/bots/heuristics/__init__.py", "p2pcards/bots/heuristics/pasur.py",
        "protocol/proved/deck.py"]
    assert strangers(block, modules) == []
    assert strangers(block + "  gone.py                  a module deleted\n", modules) == [
        "protocol/: gone.py"]
