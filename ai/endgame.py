"""Exact endgames: the sampled worlds solved instead of rolled out, once few moves remain.

Where an iteration's world has at most ``limit`` moves left and no chance
event to come (``moves_left``), :class:`Exact` (a :class:`~.protocol.Policy`
wrapping the bot's own) returns the rewards of perfect play from there for
every player, each knowing every card of that world, instead of a random or
heuristic playout.  The world's own cards are all known in it, so this is the
usual perfect-information solve of a determinized world (the double-dummy
solve of bridge programs since GIB).

:class:`Solver` searches:

* with **two scoring units** (partnerships, or two players): alpha-beta on the
  first unit's reward, fail-soft, with a transposition table of bounds
  (exact, lower, upper) keyed by ``solve_key`` and the best move of each entry
  tried first at the next visit (move ordering);
* with **more units** (each player scores for itself): max^n (each player takes
  the move best for itself, ties to the first legal move), with a table of
  exact values; nothing is pruned.

The table lives as long as the solver (one search: iterations meet the same
positions again and again), bounded by ``entries`` (cleared when full, checked
at every entry stored).  A
world whose solve meets a chance event is rolled out as before.
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Protocol, cast

from .protocol import Policy, SearchState, base_rollout, base_sampled_move

__all__ = ["ENTRIES", "Exact", "Solvable", "Solver", "solvable_now"]

ENTRIES = 50_000
"""Positions the transposition table keeps before it is cleared (an entry and its key
take about 1 KB in Bid Whist: some 50 MB at most, per process)."""

EXACT, LOWER, UPPER = 0, 1, 2


class Solvable(SearchState, Protocol):
    """A world the solver can search: what :class:`~.protocol.SearchState` offers, and
    three questions more."""

    def moves_left(self) -> int | None:
        """The moves to the end when no chance event is to come (every card known and
        no draw left to chance), else None: a world is solved only then."""
        ...

    def solve_key(self) -> Hashable:
        """Everything that decides the rest of the deal, hashable: equal for two
        positions exactly when they play out alike (the transposition table's key)."""
        ...

    def unit_of(self, seat: int) -> int:
        """The scoring unit of ``seat`` (its team, else itself)."""
        ...


def solvable_now(world: SearchState, limit: int) -> bool:
    """Whether ``world`` is one the solver takes: it can say its moves left, and they
    are at most ``limit``."""
    left = getattr(world, "moves_left", None)
    if left is None:
        return False
    moves = left()
    return moves is not None and moves <= limit


Entry = tuple[int, float, tuple[float, ...], int]


@dataclass
class Solver:
    """Perfect play from a world (see the module docstring); ``nodes`` counts the
    positions it expanded, ``solves`` the worlds it solved."""

    entries: int = ENTRIES
    table: dict[Hashable, Entry] = field(default_factory=dict, repr=False)
    nodes: int = 0
    solves: int = 0

    def solve(self, world: SearchState) -> list[float] | None:
        """The rewards (per seat) of perfect play from ``world``, or None if a chance
        event lies ahead.  ``world`` itself is left as it was."""
        state = cast(Solvable, world)
        units = {state.unit_of(s) for s in range(state.players)}
        self.solves += 1
        try:
            if len(units) == 2:
                first = state.unit_of(0)
                _, rewards = self._alphabeta(state, first, -1.0, 2.0)
            else:
                rewards = self._maxn(state)
        except _Chance:
            return None
        return list(rewards)

    def _alphabeta(self, world: Solvable, first: int, alpha: float, beta: float
                   ) -> tuple[float, tuple[float, ...]]:
        if world.is_terminal():
            rewards = tuple(world.rewards())
            return rewards[first], rewards
        actor = world.current_player()
        if actor < 0:
            raise _Chance
        key = world.solve_key()
        entry = self.table.get(key)
        hint = -1
        if entry is not None:
            flag, value, rewards, hint = entry
            if flag == EXACT or (flag == LOWER and value >= beta) or \
                    (flag == UPPER and value <= alpha):
                return value, rewards
        self.nodes += 1
        low, high = alpha, beta
        maximize = world.unit_of(actor) == first
        best = -1.0 if maximize else 2.0
        best_rewards: tuple[float, ...] = ()
        best_move = -1
        for action in _ordered(world.legal_actions(), hint):
            child = world.clone()
            child.step(action)
            value, rewards = self._alphabeta(child, first, alpha, beta)
            if (value > best) if maximize else (value < best):
                best, best_rewards, best_move = value, rewards, action
                if maximize:
                    alpha = max(alpha, value)
                else:
                    beta = min(beta, value)
                if alpha >= beta:
                    break
        flag = UPPER if best <= low else LOWER if best >= high else EXACT
        self._keep(key, (flag, best, best_rewards, best_move))
        return best, best_rewards

    def _maxn(self, world: Solvable) -> tuple[float, ...]:
        if world.is_terminal():
            return tuple(world.rewards())
        actor = world.current_player()
        if actor < 0:
            raise _Chance
        key = world.solve_key()
        entry = self.table.get(key)
        if entry is not None:
            return entry[2]
        self.nodes += 1
        best: tuple[float, ...] = ()
        best_move = -1
        for action in world.legal_actions():
            child = world.clone()
            child.step(action)
            rewards = self._maxn(child)
            if not best or rewards[actor] > best[actor]:
                best, best_move = rewards, action
        self._keep(key, (EXACT, best[actor], best, best_move))
        return best

    def _keep(self, key: Hashable, entry: Entry) -> None:
        if len(self.table) >= self.entries:
            self.table.clear()
        self.table[key] = entry


class _Chance(Exception):
    """A chance event ahead: the world is not solved."""


def _ordered(actions: list[int], first: int) -> list[int]:
    if first >= 0 and first in actions:
        return [first, *(a for a in actions if a != first)]
    return actions


@dataclass
class Exact:
    """A search policy that solves the worlds with at most ``limit`` moves left
    (:func:`solvable_now`) and leaves the rest to ``base`` (None: the world's own
    rollout and sampled moves, and a random move for :meth:`move`)."""

    limit: int
    base: Policy | None = None
    solver: Solver = field(default_factory=Solver)

    def rollout(self, world: SearchState, rng: random.Random) -> list[float] | None:
        if solvable_now(world, self.limit):
            rewards = self.solver.solve(world)
            if rewards is not None:
                return rewards
        return base_rollout(self.base, world, rng)

    def sampled_move(self, world: SearchState, seat: int, rng: random.Random) -> int | None:
        return base_sampled_move(self.base, world, seat, rng)

    def move(self, world: SearchState, rng: random.Random) -> int:
        if self.base is None:
            actions = world.legal_actions()
            return actions[int(rng.random() * len(actions))]
        return self.base.move(world, rng)

    def __getstate__(self) -> dict[str, object]:
        # the table stays where it was filled: each process keeps its own
        return {"limit": self.limit, "base": self.base}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(cast(int, state["limit"]), cast(Policy | None, state["base"]))  # type: ignore[misc]
