"""The search tree's nodes and the UCB selection every search variant shares."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Protocol

from .protocol import Policy, SearchState

EXPLORATION = 0.7
"""The UCB constant (rewards are in [0, 1]); every search takes ``exploration=``."""


class Node:
    """A move into an information set of the searching player, with its statistics.

    ``children`` are the moves possible from the information set the move leads
    to, keyed by what the searcher observes of them; when the searcher also
    learns something privately (cards dealt to it, a kitty picked up), the
    sets it can tell apart branch first on that observation (``after``).
    """

    __slots__ = ("actor", "after", "avail", "children", "reward", "visits")

    def __init__(self, actor: int):
        self.actor = actor
        self.children: dict[int, Node] = {}
        self.after: dict[int, Node] | None = None
        self.visits = 0
        self.avail = 0
        self.reward = 0.0

    def child(self, key: int, actor: int) -> Node:
        node = self.children.get(key)
        if node is None:
            node = self.children[key] = Node(actor)
        return node

    def branch(self, observation: int) -> Node:
        """The information set reached, told apart by the searcher's observation."""
        if self.after is None:
            self.after = {}
        node = self.after.get(observation)
        if node is None:
            node = self.after[observation] = Node(-1)
        return node


class Counts(Protocol):
    """What UCB reads of a move: a tree's :class:`Node`, or another player's statistics
    at one of its information sets (``ai.observers.Stat``)."""

    actor: int
    visits: int
    avail: int
    reward: float


def select(children: Mapping[int, Counts], keys: list[int], exploration: float) -> int:
    """UCB1 with availability counts: the key of ``keys`` (every one has statistics in
    ``children``) with the best score, ties to the first."""
    best_key = -1
    best = -math.inf
    log, sqrt = math.log, math.sqrt
    for key in keys:
        child = children[key]
        visits = child.visits
        avail = child.avail
        score = child.reward / visits + exploration * sqrt(
            (log(avail) if avail > 1 else 0.0) / visits)
        if score > best:
            best, best_key = score, key
    return best_key



def finish(world: SearchState, path: Sequence[Counts], rng: random.Random,
           policy: Policy | None) -> None:
    """The end of an iteration in every search: play ``world`` out (the policy's
    rollout, else the state's own) and back its rewards up ``path``, each move with
    the reward of the player who made it.  A policy's rollout may return the
    rewards of the end it found instead of playing to it (an exact solve:
    :mod:`.endgame`)."""
    found = None
    if not world.is_terminal():
        if policy is None:
            world.rollout(rng)
        else:
            found = policy.rollout(world, rng)
    rewards = world.rewards() if found is None else found
    for visited in path:
        visited.visits += 1
        visited.reward += rewards[visited.actor]
