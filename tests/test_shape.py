"""The shape the code keeps (docs/architecture.md), read from the source.

Every public class name is defined once in the project, so that a name read in a
traceback, a doc or a review means one thing; no class of the table session or of
the network node is longer than a few hundred lines (:data:`MOST_LINES`); and the
table never asks which deck it has: both decks satisfy one interface
(``TableDeck``), so no ``isinstance`` in ``p2pcards/table/`` names a deck class;
and every message class of the table has exactly one handler.
"""

from __future__ import annotations

import ast
from collections import Counter, defaultdict
from pathlib import Path

from p2pcards.bots import heuristic_bot
from p2pcards.table.kinds import KIND_OF, Back, Cheat, Silent
from p2pcards.table.memory import MemoryTable
from p2pcards.table.phases import FLOW, deal, ending, opening, play
from p2pcards.table.roster import LOCK_DECK, PROVED_DECK
from tests.imports import modules

MOST_LINES = 400
"""The most lines of one class in p2pcards/table/ and p2pcards/net/."""
DECK_CLASSES = frozenset({"Deck", "ProvedDeck", "LockTableDeck", "ProvedTableDeck"})


def _trees() -> dict[str, tuple[Path, ast.Module]]:
    return {name: (path, ast.parse(path.read_text(encoding="utf-8")))
            for name, path in modules().items()}


def test_every_public_class_name_is_defined_once() -> None:
    defined: dict[str, list[str]] = defaultdict(list)
    for name, (_, tree) in _trees().items():
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                defined[node.name].append(name)
    twice = {cls: where for cls, where in defined.items() if len(where) > 1}
    assert twice == {}, f"public class names defined more than once: {twice}"


def test_no_class_of_the_table_or_the_node_runs_past_a_few_hundred_lines() -> None:
    long = []
    for name, (_, tree) in _trees().items():
        if not name.startswith(("p2pcards.table", "p2pcards.net")):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MOST_LINES:
                    long.append(f"{name}.{node.name}: {size} lines")
    assert long == []


def test_the_table_never_asks_which_deck_it_has() -> None:
    asked = []
    for name, (_, tree) in _trees().items():
        if not name.startswith("p2pcards.table"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "isinstance" and len(node.args) == 2:
                kinds = node.args[1]
                named = {n.id for n in ast.walk(kinds) if isinstance(n, ast.Name)} | \
                    {n.attr for n in ast.walk(kinds) if isinstance(n, ast.Attribute)}
                if named & DECK_CLASSES:
                    asked.append(f"{name}:{node.lineno}")
    assert asked == []


def test_every_message_class_has_one_handler() -> None:
    """The phases' handler tables do not overlap (a class named twice would silently
    take the last), each deck's own messages are its own, and with the claims and the
    return the intake takes itself they cover every message class of the table."""
    tables = [opening.HANDLERS, deal.HANDLERS, play.HANDLERS, ending.HANDLERS]
    named = Counter(cls for table in tables for cls in table)
    assert [cls.__name__ for cls, n in named.items() if n > 1] == []
    assert set(FLOW.handlers) == set(named)
    decks = []
    for name in (LOCK_DECK, PROVED_DECK):
        table = MemoryTable("bidwhist", 4, 3, [heuristic_bot] * 4, deck=name)
        table.deliver()
        run = table.sessions[0].run
        assert run is not None
        decks.append(set(run.deck.handlers()))
    assert not (decks[0] & decks[1]) and not (set(named) & (decks[0] | decks[1]))
    intake = {Silent, Cheat, Back}
    assert set(named) | decks[0] | decks[1] | intake == set(KIND_OF)
