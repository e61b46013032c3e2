"""Single-observer information-set MCTS (Cowling, Powley & Whitehouse 2012).

Each iteration draws a world consistent with the searching player's view,
walks the tree in it, expands one node, plays out with the game's rollout
and backs the [0, 1] rewards up the path.  With the fixes the literature and
OpenSpiel's experience call for:

* the tree is keyed on what the searching player observes of each move
  (``public_action``), so moves it cannot tell apart share a node and deep
  nodes are revisited across worlds;
* at a node, the acting player's legal moves differ between worlds, so the
  UCB exploration term uses availability counts (how often a move was
  legal when its node was visited), not the parent's visits;
* chance outcomes are tree edges too, keyed by what the searcher observes;
* the move played is the root child with the most visits (deterministic);
* budgets are iterations (reproducible under a seed) or seconds, the clock
  read every ``CLOCK_EVERY`` iterations;
* the search stops early once the most visited move cannot be overtaken by
  the iterations left (under a time budget: as many as the rate measured so
  far fits in the time left), and it may continue a tree searched before
  (pondering), whose root visits count toward the budget.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from .protocol import Policy, SearchState

CLOCK_EVERY = 32
EXPLORATION = 0.7


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


@dataclass(slots=True)
class SearchResult:
    """The move chosen, each root move's visits, and what the search cost: its new
    iterations, the visits it found in a tree it continued (``reused``), its time."""

    action: int
    visits: dict[int, int]
    iterations: int
    seconds: float
    root: Node = field(repr=False)
    reused: int = 0

    @property
    def share(self) -> float:
        """The chosen move's share of the root visits (``hint`` shows it)."""
        total = sum(self.visits.values())
        return self.visits.get(self.action, 0) / total if total else 0.0


def search(view: SearchState, rng: random.Random, *, iterations: int | None = None,
           seconds: float | None = None, root_actions: list[int] | None = None,
           policy: Policy | None = None, early_stop: bool = True,
           root: Node | None = None) -> SearchResult:
    """Search from ``view`` (whose player is to act) and return the move to play.

    ``root_actions``: search only these of the player's legal moves (a model's
    candidates when the legal moves are too many); the rest of the tree is whole.
    ``policy``: the rollouts and sampled moves (None: the state's own).
    ``early_stop``: stop as soon as the most visited move can no longer be
    overtaken within the budget (:func:`settled`); under an iteration budget the
    move is then the one the whole budget would have chosen.
    ``root``: a tree to continue (the subtree of a search made before, matching
    this view); its root visits count toward the budget.
    """
    if iterations is None and seconds is None:
        raise ValueError("give an iteration or a time budget")
    seat, legal = root_moves(view, root_actions)
    only = legal if root_actions is not None else None
    if root is None:
        root = Node(-1)
    children = root.children
    reused = sum(children[a].visits for a in legal if a in children)
    start = time.perf_counter()
    done = 0
    if len(legal) > 1:
        while True:
            if iterations is not None and done + reused >= iterations:
                break
            if done % CLOCK_EVERY == 0 and (done or reused):
                left: float | None = None if iterations is None else iterations - reused - done
                if seconds is not None:
                    elapsed = time.perf_counter() - start
                    if done:  # the budget in iterations, at the rate measured so far
                        rate = done / max(elapsed, 1e-9)
                        timed = rate * seconds - reused - done
                        left = timed if left is None else min(left, timed)
                    elif elapsed >= seconds:
                        break
                    if left is not None and left <= 0:
                        break
                if early_stop and left is not None and settled(
                        legal, {a: node.visits for a, node in children.items()}, left):
                    break
            _iterate(view.determinize(rng), root, seat, rng, EXPLORATION, only=only,
                     policy=policy)
            done += 1
    visits = {a: children[a].visits for a in legal if a in children}
    action = most_visited(legal, visits)
    return SearchResult(action, visits, done, time.perf_counter() - start, root, reused)


def grow(view: SearchState, seat: int, root: Node, rng: random.Random, *,
         iterations: int | None = None, until: float | None = None,
         only: list[int] | None = None, policy: Policy | None = None) -> int:
    """Add iterations to ``root``, the tree of ``seat`` searching ``view``: ``iterations``
    of them, or until ``time.perf_counter()`` reads ``until`` (checked every
    ``CLOCK_EVERY``); return how many.  The player to act need not be ``seat``
    (pondering searches while another player is to act); ``only``: the moves searched
    at the root.  Growing in several calls builds the same tree as in one."""
    if iterations is None and until is None:
        raise ValueError("give an iteration count or a deadline")
    done = 0
    while iterations is None or done < iterations:
        if until is not None and done % CLOCK_EVERY == 0 and time.perf_counter() >= until:
            break
        _iterate(view.determinize(rng), root, seat, rng, EXPLORATION, only=only, policy=policy)
        done += 1
    return done


def root_moves(view: SearchState, root_actions: list[int] | None = None
               ) -> tuple[int, list[int]]:
    """The searching seat and its legal moves (only those of ``root_actions`` when
    given); ValueError if nobody is to act or none of ``root_actions`` is legal."""
    seat = view.current_player()
    legal = view.legal_actions()
    if seat < 0 or not legal:
        raise ValueError("the searching player is not to act")
    if root_actions is not None:
        wanted = set(root_actions)
        legal = [a for a in legal if a in wanted]
        if not legal:
            raise ValueError("none of the root actions is legal")
    return seat, legal


def most_visited(legal: list[int], visits: dict[int, int]) -> int:
    """The move to play: the most visits, ties to the lowest action code."""
    return max(legal, key=lambda a: (visits.get(a, 0), -a))


def settled(legal: list[int], visits: Mapping[int, int], left: float) -> bool:
    """Whether :func:`most_visited` must choose the same move however the ``left``
    iterations still to come are spent (each adds one visit to one root move).

    The leader ``L`` (most visits, ties to the lowest code) stays ahead of a move
    ``R`` given all ``left`` visits when ``v(L) - v(R) > left``, or when they would
    tie and ``L`` has the lower code.  Checking the runner-up by the same order is
    enough: every other move is behind it.
    """
    if len(legal) < 2:
        return True
    first = second = None
    first_key = second_key = (-1, 0)
    for action in legal:
        key = (visits.get(action, 0), -action)
        if key > first_key:
            second, second_key = first, first_key
            first, first_key = action, key
        elif key > second_key:
            second, second_key = action, key
    assert first is not None and second is not None
    margin = first_key[0] - second_key[0]
    return margin > left or (margin == left and first < second)


def _iterate(world: SearchState, root: Node, seat: int, rng: random.Random,
             exploration: float, *, only: list[int] | None = None,
             policy: Policy | None = None) -> None:
    node = root
    path: list[Node] = []
    expanded = False
    while not world.is_terminal():
        actor = world.current_player()
        if actor < 0:
            outcome = world.chance_action(rng)
            node = node.child(world.public_action(outcome, seat), actor)
            world.step(outcome)
            continue
        if only is not None and node is root:  # the model's candidates, searched
            legal = only  # legal in every world: the searcher's own moves
        else:
            sampled = world.sampled_move(seat, rng) if policy is None \
                else policy.sampled_move(world, seat, rng)
            legal = [sampled] if sampled is not None else world.legal_actions()
        public = world.public_action
        keys = [public(action, seat) for action in legal]
        by_key: dict[int, list[int]] | None = None
        if keys != legal:  # some moves look alike to the searcher: group them
            by_key = {}
            for key, action in zip(keys, legal, strict=True):
                by_key.setdefault(key, []).append(action)
            keys = list(by_key)
        children = node.children
        untried = [k for k in keys if k not in children]
        if untried:
            key = untried[int(rng.random() * len(untried))]
            expanded = True
        else:
            key = _select(children, keys, exploration)
        for k in keys:
            child = children.get(k)
            if child is not None:
                child.avail += 1
        move = node.child(key, actor)
        path.append(move)
        if by_key is None:
            world.step(key)
        else:
            options = by_key[key]
            world.step(options[int(rng.random() * len(options))])
        node = move.branch(world.observation(seat))
        if expanded:
            break
    if not world.is_terminal():
        if policy is None:
            world.rollout(rng)
        else:
            policy.rollout(world, rng)
    rewards = world.rewards()
    for visited in path:
        visited.visits += 1
        visited.reward += rewards[visited.actor]


def _select(children: dict[int, Node], keys: list[int], exploration: float) -> int:
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


def tree_stats(root: Node) -> dict[int, int]:
    """Depth in moves -> number of move nodes visited more than once (the tree grows)."""
    out: dict[int, int] = {}
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth and node.visits > 1:
            out[depth] = out.get(depth, 0) + 1
        stack.extend((child, depth + 1) for child in node.children.values())
        if node.after:
            stack.extend((later, depth) for later in node.after.values())
    return out


def pimc(view: SearchState, rng: random.Random, *, iterations: int | None = None,
         seconds: float | None = None, worlds: int = 10,
         root_actions: list[int] | None = None, policy: Policy | None = None
         ) -> SearchResult:
    """Determinized UCT (perfect-information Monte Carlo), the baseline ``pimc``.

    ``worlds`` determinizations of the view, each searched as if every card
    were known (UCT on that one world) with an equal share of the budget;
    the root visits are summed and the most visited move is played.
    """
    if iterations is None and seconds is None:
        raise ValueError("give an iteration or a time budget")
    _, legal = root_moves(view, root_actions)
    start = time.perf_counter()
    visits: dict[int, int] = {}
    done = 0
    root = Node(-1)
    if len(legal) > 1:
        share = None if iterations is None else max(1, iterations // worlds)
        for _ in range(worlds):
            world = view.determinize(rng)  # a full-information world: UCT on it
            result = search(world, rng, iterations=share,
                            seconds=None if seconds is None else seconds / worlds,
                            root_actions=root_actions, policy=policy, early_stop=False)
            for action, count in result.visits.items():
                visits[action] = visits.get(action, 0) + count
            done += result.iterations
    action = most_visited(legal, visits)
    return SearchResult(action, visits, done, time.perf_counter() - start, root)
