"""What a game must offer the search: a small protocol, no game named.

Every rules engine in ``p2pcards.games`` implements it; ``tests/test_ismcts.py``
runs the search on a tiny game written inside the test, to show that nothing
here depends on the card games.

Two protocols: :class:`SearchView`, the searching player's knowledge (three
methods), and :class:`SearchState`, a full-information world the view samples.
One class may be both (the card games' engines are); a game may instead give
its view a class of its own.  :class:`PublicMoves` holds the defaults a game
takes when no move is hidden from any seat.
"""

from __future__ import annotations

import random
from typing import Protocol, Self, TypeVar


class SearchState(Protocol):
    """A full-information world the search plays moves in.

    The search holds the *view* of the player it searches for
    (:class:`SearchView`) and asks it for worlds; every method here is called
    on those worlds only.  ``observation`` and ``public_action`` are asked for
    the searching seat, and in the ``multiple`` search for every seat;
    ``information_key`` only in the ``multiple`` and ``own`` searches, for
    other seats.  :class:`PublicMoves` gives ``chance_action``,
    ``public_action``, ``sampled_move``, ``observation`` and ``rollout`` to a
    game in which every move is seen by every seat.
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
        """A chance outcome drawn with ``rng`` where :meth:`current_player` is
        negative (a card drawn from the stock, say)."""
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
        search tells information sets apart by it after each move, so it must
        change when ``seat`` learns something privately (a card drawn); a token
        that never changes is right in a game where nothing is learned privately
        once play has begun."""
        ...

    def rollout(self, rng: random.Random) -> None:
        """Play to the end with a cheap policy (random, or the game's heuristic)."""
        ...

    def information_key(self, seat: int) -> int:
        """What ``seat`` knows in this full-information world, as a hashable token:
        equal in two worlds that differ only in what ``seat`` cannot see, different
        when its own cards differ (a game may choose a coarser abstraction and say
        so).  Only the ``multiple`` and ``own`` searches call it, to key another
        player's tree or statistics on the information it has (:mod:`.observers`);
        a game searched only by the single observer may leave it out."""
        ...


World_co = TypeVar("World_co", bound=SearchState, covariant=True)


class SearchView(Protocol[World_co]):
    """The searching player's knowledge: all the search asks of it.

    :meth:`determinize` returns a world (:class:`SearchState`) of any class, so
    a game may keep its view apart from its worlds (a view that holds only what
    its player knows); the card games' engines are both.  Under root
    parallelism the view is pickled to the worker processes.
    """

    players: int

    def current_player(self) -> int:
        """The searching seat (the search runs where a player is to act)."""
        ...

    def legal_actions(self) -> list[int]:
        """The searching player's moves: the root's."""
        ...

    def determinize(self, rng: random.Random) -> World_co:
        """A full-information world this view's player cannot tell from the truth,
        drawn with ``rng``."""
        ...


class _Playable(Protocol):
    def current_player(self) -> int: ...
    def legal_actions(self) -> list[int]: ...
    def is_terminal(self) -> bool: ...
    def step(self, action: int) -> None: ...
    def chance_action(self, rng: random.Random) -> int: ...


class PublicMoves:
    """Defaults for a world in which every move is seen by every seat: inherit it
    and write the rest of :class:`SearchState`.

    - ``public_action``: the action itself, for every seat;
    - ``sampled_move``: None (the search branches on every move);
    - ``observation``: 0, a token that never changes: right when no seat learns
      anything privately once play has begun (hands are dealt before the
      search's root; a game that deals or shows cards to one seat later must
      say so here);
    - ``chance_action``: one of ``legal_actions()`` uniformly (a chance node
      lists its outcomes there, each as likely);
    - ``rollout``: uniformly random moves (and chance by ``chance_action``) to
      the end.
    """

    def public_action(self, action: int, seat: int) -> int:
        return action

    def sampled_move(self, seat: int, rng: random.Random) -> int | None:
        return None

    def observation(self, seat: int) -> int:
        return 0

    def chance_action(self: _Playable, rng: random.Random) -> int:
        outcomes = self.legal_actions()
        return outcomes[int(rng.random() * len(outcomes))]

    def rollout(self: _Playable, rng: random.Random) -> None:
        while not self.is_terminal():
            if self.current_player() < 0:
                self.step(self.chance_action(rng))
            else:
                actions = self.legal_actions()
                self.step(actions[int(rng.random() * len(actions))])


class Policy(Protocol):
    """How the search plays where it does not grow its tree: a bot's model of a game,
    given to :func:`search` in place of the state's own :meth:`SearchState.rollout`
    and :meth:`SearchState.sampled_move` (a game's heuristic playing the rollout, say).
    """

    def rollout(self, world: SearchState, rng: random.Random) -> list[float] | None:
        """Play ``world`` (full information) to the end and return None, or return the
        rewards per seat of the end it found without playing to it (an exact
        solve: :mod:`.endgame`); ``world`` is then left where it was."""
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


def base_rollout(base: Policy | None, world: SearchState, rng: random.Random
                 ) -> list[float] | None:
    """The rollout of a policy that plays out as ``base`` does (None: the world's own)."""
    if base is None:
        world.rollout(rng)
        return None
    return base.rollout(world, rng)


def base_sampled_move(base: Policy | None, world: SearchState, seat: int,
                      rng: random.Random) -> int | None:
    """The sampled move of a policy that samples as ``base`` does (None: the world's own)."""
    if base is None:
        return world.sampled_move(seat, rng)
    return base.sampled_move(world, seat, rng)
