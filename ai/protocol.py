"""What a game must offer the search: a small protocol, no game named.

Every rules engine in ``p2pcards.games`` implements it; ``tests/test_ismcts.py``
runs the search on a tiny game written inside the test, to show that nothing
here depends on the card games.
"""

from __future__ import annotations

import random
from typing import Protocol, Self


class SearchState(Protocol):
    """A game state the search can drive.

    The search holds the *view* of the player it searches for and asks it for
    full-information worlds (:meth:`determinize`); it then plays moves in
    those worlds with :meth:`step`.

    On the view the search calls only :meth:`current_player`,
    :meth:`legal_actions` (the root's moves) and :meth:`determinize`; every other
    method is called on sampled (full-information) worlds.  ``observation`` and
    ``public_action`` are asked for the searching seat, and in the ``multiple``
    search for every seat; ``information_key`` only in the ``own`` search, for
    the seat to act.
    """

    players: int

    def current_player(self) -> int:
        """The seat to act, or a negative value when no player acts (chance)."""
        ...

    def legal_actions(self) -> list[int]:
        """The actions of the player to act (exact in a full-information world)."""
        ...

    def step(self, action: int) -> None:
        """Apply a legal action in place, without checking it."""
        ...

    def clone(self) -> Self:
        ...

    def is_terminal(self) -> bool:
        ...

    def rewards(self) -> list[float]:
        """Per seat, the outcome mapped to [0, 1] (partners share their team's)."""
        ...

    def chance_action(self, rng: random.Random) -> int:
        """A chance outcome drawn with ``rng`` (full-information worlds only)."""
        ...

    def determinize(self, rng: random.Random) -> Self:
        """A full-information world the observer of this view cannot tell from the truth."""
        ...

    def public_action(self, action: int, seat: int) -> int:
        """What ``seat`` observes of ``action`` (the action itself when it is public).

        Moves the searching player cannot tell apart (another seat's face-down
        discard, a steal it is not part of) share one key, so that the search
        tree stays keyed on that player's information.
        """
        ...

    def sampled_move(self, seat: int, rng: random.Random) -> int | None:
        """A move the search should sample instead of branching on (a choice among
        thousands, such as a Bid Whist discard), or None to branch as usual."""
        ...

    def observation(self, seat: int) -> int:
        """What ``seat`` privately sees now (its hand, say) as a hashable token: the
        search tells information sets apart by it after each move."""
        ...

    def rollout(self, rng: random.Random) -> None:
        """Play to the end with a cheap policy (random, or the game's heuristic)."""
        ...

    def information_key(self, seat: int) -> int:
        """What ``seat`` knows in this full-information world, as a hashable token:
        equal in two worlds that differ only in what ``seat`` cannot see, different
        when its own cards differ (a game may choose a coarser abstraction and say
        so).  Only the ``own`` search calls it, on sampled worlds, to keep another
        player's statistics per information it has (:mod:`.observers`)."""
        ...


class Policy(Protocol):
    """How the search plays where it does not grow its tree: a bot's model of a game,
    given to :func:`search` in place of the state's own :meth:`SearchState.rollout`
    and :meth:`SearchState.sampled_move` (a game's heuristic playing the rollout, say).
    """

    def rollout(self, world: SearchState, rng: random.Random) -> None:
        """Play ``world`` (full information) to the end."""
        ...

    def sampled_move(self, world: SearchState, seat: int, rng: random.Random) -> int | None:
        """A move to sample in ``world`` instead of branching on, or None; ``seat``
        is the searching player's."""
        ...

    def move(self, world: SearchState, rng: random.Random) -> int:
        """The move of the player to act in ``world`` (full information), as this
        policy plays it from that player's own cards: the ``multiple`` and ``own``
        searches play it where they meet another player's information for the first
        time (:mod:`.observers`).  The single-observer search never calls it."""
        ...
