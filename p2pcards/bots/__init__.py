"""The bots: who may take a seat, by name (docs/bots.md).

``random`` plays a random legal move, ``heuristic`` the game's rules of thumb
(its playbook, :mod:`p2pcards.bots.registry`), ``ismcts`` searches its own
view and ``pimc`` is the search's baseline; ``ismcts-full`` is ``ismcts``
spending its whole budget on every search (no early stop), kept to measure
``ismcts`` against.  ``ismcts-mo`` and ``ismcts-own`` search like ``ismcts``
but model every other player from its own information (multiple-observer
trees, or statistics keyed on each player's information in the sampled
world: :mod:`p2pcards.ai.observers`); ``ismcts-backoff`` keys them so once
the search has met that information often enough, and chooses as ``ismcts``
until then.  A searching bot's name may carry its
exploration constant, ``ismcts-own:c=0.5`` (the arena's tuning).  Every bot
decides from its own seat's view only.  The arena
(:mod:`p2pcards.bots.arena`) plays them against each other.
"""

from __future__ import annotations

from p2pcards.ai.ismcts import EXPLORATION
from p2pcards.bots import heuristics  # noqa: F401  (registers the built-in playbooks)
from p2pcards.bots.registry import Bot, Playbook, heuristic_bot, playbook, random_bot, register
from p2pcards.bots.search import SEARCH_LIMIT, SearchBot

BOT_NAMES = ("random", "heuristic", "ismcts", "pimc", "ismcts-full", "ismcts-mo", "ismcts-own",
             "ismcts-backoff")
SEARCHING = {"ismcts": "single", "ismcts-full": "single", "ismcts-mo": "multiple",
             "ismcts-own": "own", "ismcts-backoff": "backoff", "pimc": "single"}
"""The searching bots, and how each models the other players (``ai.ismcts.VARIANTS``)."""


def parse_bot(spec: str) -> tuple[str, float]:
    """A bot name with its exploration constant: ``ismcts-mo:c=0.5`` -> (``ismcts-mo``,
    0.5); a bare name has the default.  ValueError naming what is wrong."""
    name, colon, params = spec.partition(":")
    if name not in BOT_NAMES:
        raise ValueError(f"unknown bot {name!r} (bots: {', '.join(BOT_NAMES)})")
    exploration = EXPLORATION
    if colon:
        if name not in SEARCHING:
            raise ValueError(f"bot {name!r} takes no parameters (in {spec!r})")
        for param in params.split(";"):
            key, eq, value = param.partition("=")
            if key.strip() != "c" or not eq:
                raise ValueError(f"bot {spec!r}: the only parameter is c=NUMBER, the "
                                 f"exploration constant (not {param!r})")
            try:
                exploration = float(value)
            except ValueError:
                raise ValueError(f"bot {spec!r}: c must be a number, not {value!r}") from None
            if not 0 <= exploration <= 100:
                raise ValueError(f"bot {spec!r}: c must be from 0 to 100, not {value}")
    return name, exploration


def make_bot(kind: str, iterations: int | None = None, think: float | None = None,
             workers: int = 1) -> Bot:
    """A bot by name (:func:`parse_bot`: a name, with ``:c=X`` for a searching bot's
    exploration constant): ``random``, ``heuristic``, or a searching bot with an
    iteration or time budget (on ``workers`` processes: root parallelism)."""
    name, exploration = parse_bot(kind)
    if name == "random":
        return random_bot
    if name == "heuristic":
        return heuristic_bot
    if iterations is None and think is None:
        iterations = 1000
    if name == "pimc":
        return SearchBot("pimc", iterations, think, workers, exploration=exploration)
    return SearchBot("ismcts", iterations, think, workers, early_stop=name != "ismcts-full",
                     variant=SEARCHING[name], exploration=exploration)


__all__ = ["BOT_NAMES", "SEARCHING", "SEARCH_LIMIT", "Bot", "Playbook", "SearchBot",
           "heuristic_bot", "make_bot", "parse_bot", "playbook", "random_bot", "register"]
