"""The rules engines: one module per game over the shared core (see docs/architecture.md).

Games are known by name through :data:`GAMES`; :func:`register` adds one.  The
four built-in games register here, in the order the benchmarks draw their
positions in (``p2pcards bench ai``).
"""

from __future__ import annotations

from p2pcards.games import bidwhist, controlnut, nullern, pasur
from p2pcards.games.capabilities import Capabilities
from p2pcards.games.core import (
    CHANCE,
    FULL,
    TERMINAL,
    ActionSyntaxError,
    HandState,
    IllegalAction,
    KnowledgeError,
    Proof,
)
from p2pcards.games.game import Game, OptionError

GAMES: dict[str, Game] = {}
"""Every game by name, in the order registered."""


def register(game: Game) -> None:
    """Make ``game`` known by its name everywhere: the local table, the secure table,
    the network, the bots, the arena and the benchmarks (replacing a game of that
    name).  ``ValueError`` for a game whose declared capabilities and hooks part
    (:meth:`Game.check_capabilities`)."""
    if not game.name or not game.name.isidentifier():
        raise ValueError(f"a game's name is a word of letters and digits, not {game.name!r}")
    game.check_capabilities()
    GAMES[game.name] = game


def get_game(name: str) -> Game:
    """The game called ``name``; ``KeyError`` with the known names otherwise."""
    try:
        return GAMES[name]
    except KeyError:
        raise KeyError(f"unknown game {name!r} (games: {', '.join(sorted(GAMES))})") from None


for _module in (bidwhist, nullern, pasur, controlnut):
    register(_module.GAME)

__all__ = [
    "CHANCE", "FULL", "GAMES", "TERMINAL", "ActionSyntaxError", "Capabilities", "Game", "HandState",
    "IllegalAction", "KnowledgeError", "OptionError", "Proof", "get_game", "register",
]
