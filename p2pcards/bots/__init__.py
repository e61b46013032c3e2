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
exploration constant, ``ismcts-own:c=0.5`` (the arena's tuning), and ``w=N`` to
spread its budget over N processes, ``ismcts:w=2``; ``i=1`` samples its worlds
by what the other players' bids say (:mod:`p2pcards.ai.inference`), ``i=2`` by
their bids and plays (:mod:`p2pcards.bots.evidence`), ``i=0`` does not
(without ``i=``, as the game's playbook says) and ``e=N``
solves the last N moves of each world exactly (:mod:`p2pcards.ai.endgame`).
Every bot
decides from its own seat's view only.  The arena
(:mod:`p2pcards.bots.arena`) plays them against each other.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from p2pcards.ai.ismcts import EXPLORATION
from p2pcards.ai.parallel import RootParallel
from p2pcards.bots import heuristics  # noqa: F401  (registers the built-in playbooks)
from p2pcards.bots.registry import Bot, Playbook, heuristic_bot, playbook, random_bot, register
from p2pcards.bots.search import SEARCH_LIMIT, SearchBot
from p2pcards.games.game import Game

BOT_NAMES = ("random", "heuristic", "ismcts", "pimc", "ismcts-full", "ismcts-mo", "ismcts-own",
             "ismcts-backoff")
SEARCHING = {"ismcts": "single", "ismcts-full": "single", "ismcts-mo": "multiple",
             "ismcts-own": "own", "ismcts-backoff": "backoff", "pimc": "single"}
"""The searching bots, and how each models the other players (``ai.ismcts.VARIANTS``)."""


MakeBot = Callable[[str, Game], Bot]
"""How a table gets its bots: a bot of a kind (a name of :func:`parse_spec`), to play a
game (the defaults may depend on it: :func:`default_workers`)."""


MAX_SHARE = 8
"""The most processes a bot's budget may be spread over (``w=N``)."""


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A bot name and its parameters (:func:`parse_options`)."""

    name: str
    exploration: float = EXPLORATION
    share: int = 1
    """The processes the move's budget is spread over (``w=N``)."""
    infer: int | None = None
    """Worlds sampled by what the other players' bids say (``i=1``), their bids and
    plays (``i=2``), or not (``i=0``); None: as the game's playbook says
    (``Playbook.infers``)."""
    endgame: int = 0
    """Solve exactly once at most this many moves are left (``e=N``; 0: never)."""


MAX_ENDGAME = 60
"""The most moves ``e=N`` may name."""

PARAMETERS = ("c=NUMBER, the exploration constant; w=N, the processes sharing the move's"
              " budget; i=1, i=2 or i=0, worlds sampled by inference from the other players'"
              " bids, from their bids and plays, or not (default: the game's);"
              f" e=N, the last N moves (up to {MAX_ENDGAME}) solved exactly")


def parse_options(spec: str) -> BotSpec:
    """A bot name with its parameters: ``ismcts:c=0.5;w=2;i=1;e=12`` (docs/bots.md).
    ValueError naming what is wrong."""
    name, colon, params = spec.partition(":")
    if name not in BOT_NAMES:
        raise ValueError(f"unknown bot {name!r} (bots: {', '.join(BOT_NAMES)})")
    found: dict[str, float | int] = {}
    if colon:
        if name not in SEARCHING:
            raise ValueError(f"bot {name!r} takes no parameters (in {spec!r})")
        for param in params.split(";"):
            key, eq, value = param.partition("=")
            key, value = key.strip(), value.strip()
            if key not in ("c", "w", "i", "e") or not eq:
                raise ValueError(f"bot {spec!r}: the parameters are {PARAMETERS}"
                                 f" (not {param!r})")
            found[key] = _parameter(spec, key, value)
    infer = found.get("i")
    return BotSpec(name, float(found.get("c", EXPLORATION)), int(found.get("w", 1)),
                   None if infer is None else int(infer), int(found.get("e", 0)))


def _parameter(spec: str, key: str, value: str) -> float | int:
    if key == "c":
        try:
            exploration = float(value)
        except ValueError:
            raise ValueError(f"bot {spec!r}: c must be a number, not {value!r}") from None
        if not 0 <= exploration <= 100:
            raise ValueError(f"bot {spec!r}: c must be from 0 to 100, not {value}")
        return exploration
    most, what = {"w": (MAX_SHARE, "w must be a whole number from 1 to"),
                  "i": (2, "i must be 0, 1 or 2, not"),
                  "e": (MAX_ENDGAME, "e must be a whole number from 0 to")}[key]
    least = 1 if key == "w" else 0
    if not value.isascii() or not value.isdigit() or not least <= int(value) <= most:
        bound = f"{what} {most}, not" if key != "i" else what
        raise ValueError(f"bot {spec!r}: {bound} {value!r}")
    return int(value)


def parse_spec(spec: str) -> tuple[str, float, int]:
    """A bot name with its parameters: ``ismcts-mo:c=0.5;w=2`` -> (``ismcts-mo``, 0.5,
    2): ``c`` the exploration constant, ``w`` the processes the move's budget is spread
    over (1 if absent); the rest: :func:`parse_options`.  ValueError naming what is
    wrong."""
    options = parse_options(spec)
    return options.name, options.exploration, options.share


def parse_bot(spec: str) -> tuple[str, float]:
    """A bot name with its exploration constant: ``ismcts-mo:c=0.5`` -> (``ismcts-mo``,
    0.5); a bare name has the default.  ValueError naming what is wrong."""
    name, exploration, _ = parse_spec(spec)
    return name, exploration


def make_bot(kind: str, iterations: int | None = None, think: float | None = None,
             workers: int = 1) -> Bot:
    """A bot by name (:func:`parse_spec`: a name, with ``:c=X`` for a searching bot's
    exploration constant and ``:w=N`` to spread its budget over N processes):
    ``random``, ``heuristic``, or a searching bot with an iteration or time budget (on
    ``workers`` processes: root parallelism, each with the whole budget).  ``w=N``
    gives each of N processes an Nth of the budget (of the iterations, or of the
    seconds): the same search in an Nth of the wait."""
    options = parse_options(kind)
    name, exploration, share = options.name, options.exploration, options.share
    if name == "random":
        return random_bot
    if name == "heuristic":
        return heuristic_bot
    if iterations is None and think is None:
        iterations = 1000
    if share > 1:
        workers = share
        iterations = None if iterations is None else -(-iterations // share)
        think = None if think is None else think / share
    if name == "pimc":
        return SearchBot("pimc", iterations, think, workers, exploration=exploration,
                         infer=options.infer, endgame=options.endgame)
    return SearchBot("ismcts", iterations, think, workers, early_stop=name != "ismcts-full",
                     variant=SEARCHING[name], exploration=exploration, infer=options.infer,
                     endgame=options.endgame)


def default_workers(game: Game) -> int:
    """Processes a searching bot uses by default at ``game``: two where the machine has
    two cores or more and the game's search may be split (``Game.split_search``; root
    parallelism: the same search in half the wait), else one."""
    return 2 if game.split_search and (os.cpu_count() or 1) >= 2 else 1


def unsplit_games() -> str:
    """The games whose default search stays on one process, by title (help texts)."""
    from p2pcards.games import GAMES  # noqa: PLC0415  (the games load the bots' playbooks)

    return " and ".join(g.title for g in GAMES.values() if not g.split_search) or "no game"


SEARCH_SECONDS = 1.0
"""The default budget of a searching bot's move: one second of search, shared by its
processes (half a second's wait on two)."""


def default_think(workers: int) -> float:
    """The default seconds of a move on ``workers`` processes: :data:`SEARCH_SECONDS`
    shared by them."""
    return SEARCH_SECONDS / workers


def share_pool(bots: Iterable[Bot | None]) -> RootParallel | None:
    """One pool of processes for every searching bot with more than one worker (the
    bots of a table move in turn), started now so the first search does not wait for
    the processes to start; None if no bot needs one.  Close it after the game."""
    searching = [b for b in bots if isinstance(b, SearchBot) and b.kind == "ismcts"
                 and b.workers > 1]
    if not searching:
        return None
    pool = RootParallel(max(b.workers for b in searching))
    for bot in searching:
        if bot.workers == pool.workers:
            bot.pool = pool
    pool.warm(_load_games)
    return pool


def _load_games() -> None:
    """In a search process: the games and their bots, imported before the first search."""
    import p2pcards.games  # noqa: F401, PLC0415


__all__ = [
    "BOT_NAMES",
    "MAX_ENDGAME",
    "MAX_SHARE",
    "SEARCHING",
    "SEARCH_LIMIT",
    "SEARCH_SECONDS",
    "Bot",
    "BotSpec",
    "MakeBot",
    "Playbook",
    "RootParallel",
    "SearchBot",
    "default_think",
    "default_workers",
    "heuristic_bot",
    "make_bot",
    "parse_bot",
    "parse_options",
    "parse_spec",
    "playbook",
    "random_bot",
    "register",
    "share_pool",
    "unsplit_games",
]
