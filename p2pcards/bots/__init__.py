"""The bots: who may take a seat, by name (docs/bots.md).

``random`` plays a random legal move, ``heuristic`` the game's rules of thumb
(its playbook, :mod:`p2pcards.bots.registry`), ``ismcts`` searches its own
view and ``pimc`` is the search's baseline; ``ismcts-full`` is ``ismcts``
spending its whole budget on every search (no early stop), kept to measure
``ismcts`` against.  Every bot decides from its own
seat's view only.  The arena (:mod:`p2pcards.bots.arena`) plays them against
each other.
"""

from __future__ import annotations

from p2pcards.bots import heuristics  # noqa: F401  (registers the built-in playbooks)
from p2pcards.bots.registry import Bot, Playbook, heuristic_bot, playbook, random_bot, register
from p2pcards.bots.search import SEARCH_LIMIT, SearchBot

BOT_NAMES = ("random", "heuristic", "ismcts", "pimc", "ismcts-full")


def make_bot(kind: str, iterations: int | None = None, think: float | None = None,
             workers: int = 1) -> Bot:
    """A bot by name: ``random``, ``heuristic``, or ``ismcts``/``pimc`` with an
    iteration or time budget (``ismcts`` on ``workers`` processes: root parallelism)."""
    if kind == "random":
        return random_bot
    if kind == "heuristic":
        return heuristic_bot
    if kind in ("ismcts", "pimc", "ismcts-full"):
        if iterations is None and think is None:
            iterations = 1000
        if kind == "ismcts-full":
            return SearchBot("ismcts", iterations, think, workers, early_stop=False)
        return SearchBot(kind, iterations, think, workers)
    raise ValueError(f"unknown bot {kind!r} (bots: {', '.join(BOT_NAMES)})")


__all__ = ["BOT_NAMES", "SEARCH_LIMIT", "Bot", "Playbook", "SearchBot", "heuristic_bot",
           "make_bot", "playbook", "random_bot", "register"]
