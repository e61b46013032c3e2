"""What the bots know of each game, by game name: its playbook.

The rules of a game live in its engine (:mod:`p2pcards.games`); how to play it
well is the bots' business.  A :class:`Playbook` gives, for one game, the
``heuristic`` bot, the models the searching bot takes moves from without
searching (``model``) or searches among (``candidates``), the search
policy (``policy``: how a rollout plays, which moves of other seats are sampled
from a model), and the model of the other players' past bids that weighs the
worlds of a bot that infers (``belief``: bids, and plays).  A game without a playbook is still
played by every bot: its ``heuristic`` is then a random legal move and the
search uses the engine's own rollout.  ``register`` adds one (the built-in games' are registered by
:mod:`p2pcards.bots.heuristics`; a new game registers its own).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from p2pcards.ai.inference import Belief
from p2pcards.ai.protocol import Policy
from p2pcards.games.core import HandState

Bot = Callable[[HandState, random.Random], int]
"""A bot: a legal action of the view it is given (it sees only that view)."""


def random_bot(view: HandState, rng: random.Random) -> int:
    """The simple bot: a uniformly random legal action of its own view."""
    actions = view.legal_actions()
    return actions[int(rng.random() * len(actions))]


def no_model(view: HandState, rng: random.Random) -> None:
    return None


def no_belief(view: HandState, plays: bool = False) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Playbook:
    """How the bots play one game (see the module docstring)."""

    heuristic: Bot = random_bot
    model: Callable[[HandState, random.Random], int | None] = no_model
    """A move the searching bot plays without a search (None: search)."""
    candidates: Callable[[HandState, random.Random], list[int] | None] = no_model
    """The moves the searching bot searches among (None: every legal move)."""
    policy: Policy | None = None
    """The search's rollout and sampled moves (None: the engine's own)."""
    belief: Callable[[HandState, bool], Belief | None] = no_belief
    """``belief(view, plays)``: a model of the other players' past bids for ``view``,
    and with ``plays`` true of their plays too, which weighs the worlds of a bot
    that infers (``i=1``: bids, ``i=2``: bids and plays; None: no model, worlds
    drawn uniformly)."""
    infers: int = 0
    """How the game's searching bots infer unless told (``i=`` not given: 0 not at all,
    1 from bids, 2 from bids and plays): the default search of ``play`` and ``host``
    in this game (docs/bots.md)."""


DEFAULT = Playbook()
PLAYBOOKS: dict[str, Playbook] = {}


def register(game: str, playbook: Playbook) -> None:
    """Give the bots ``playbook`` for the game called ``game`` (replacing any)."""
    PLAYBOOKS[game] = playbook


def playbook(view: HandState) -> Playbook:
    """The playbook of the game ``view`` is a state of (the default one if none)."""
    return PLAYBOOKS.get(view.game, DEFAULT)


def heuristic_bot(view: HandState, rng: random.Random) -> int:
    """The ``heuristic`` bot: the game's own rules of thumb, from its own view."""
    return playbook(view).heuristic(view, rng)
