"""The rules engines: one module per game over the shared core (see docs/architecture.md)."""

from __future__ import annotations

from p2pcards.games import bidwhist, controlnut, nullern, pasur
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

GAMES: dict[str, Game] = {
    bidwhist.GAME.name: bidwhist.GAME,
    controlnut.GAME.name: controlnut.GAME,
    nullern.GAME.name: nullern.GAME,
    pasur.GAME.name: pasur.GAME,
}


def get_game(name: str) -> Game:
    """The game called ``name``; ``KeyError`` with the known names otherwise."""
    try:
        return GAMES[name]
    except KeyError:
        raise KeyError(f"unknown game {name!r} (games: {', '.join(sorted(GAMES))})") from None


__all__ = [
    "CHANCE", "FULL", "GAMES", "TERMINAL", "ActionSyntaxError", "Game", "HandState",
    "IllegalAction", "KnowledgeError", "OptionError", "Proof", "get_game",
]
