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

``search(..., variant=)`` also runs the searches that model each player from
its own information (``multiple``, ``own``: :mod:`.observers`) with the same
budgets, early stop and root moves; ``exploration=`` sets UCB's constant.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from .observers import MultipleObserver, OwnInformation
from .protocol import Policy, SearchState, SearchView
from .tree import EXPLORATION, Node, finish, select

__all__ = ["CLOCK_EVERY", "EXPLORATION", "VARIANTS", "Known", "Node", "SearchResult",
           "SingleObserver", "Tree", "grow", "grow_tree", "make_tree", "most_visited", "pimc",
           "root_moves", "run", "search", "settled", "tree_stats"]

CLOCK_EVERY = 32


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


VARIANTS = ("single", "multiple", "own", "backoff")
"""How the search models the players (docs/bots.md): ``single``, one tree keyed on the
searching player's information (every other player's move chosen from it, as if
they played blind); ``multiple``, one tree per player, each keyed on what its
player observes (:mod:`.observers`); ``own``, the searcher's tree with each other
player's move chosen by statistics keyed on that player's own information in
the sampled world (``information_key``); ``backoff``, as ``own`` where the search
has met that information often enough, else as ``single``."""


class Tree(Protocol):
    """A search in progress: ``root`` is the searching player's tree, and each
    :meth:`iterate` adds one iteration played in ``world``."""

    @property
    def root(self) -> Node:
        ...

    def iterate(self, world: SearchState, rng: random.Random) -> None:
        ...


class SingleObserver:
    """Today's search: the searcher's tree alone (:func:`_iterate`)."""

    __slots__ = ("exploration", "only", "policy", "root", "seat")

    def __init__(self, seat: int, root: Node | None = None, *, exploration: float = EXPLORATION,
                 only: list[int] | None = None, policy: Policy | None = None):
        self.seat = seat
        self.root = Node(-1) if root is None else root
        self.exploration = exploration
        self.only = only
        self.policy = policy

    def iterate(self, world: SearchState, rng: random.Random) -> None:
        _iterate(world, self.root, self.seat, rng, self.exploration, only=self.only,
                 policy=self.policy)


def make_tree(variant: str, seat: int, *, root: Node | None = None,
              exploration: float = EXPLORATION, only: list[int] | None = None,
              policy: Policy | None = None) -> Tree:
    """A new search of ``seat`` by ``variant`` (:data:`VARIANTS`); ``root``: a tree of
    the single-observer search to continue (the others start afresh)."""
    if variant == "single":
        return SingleObserver(seat, root, exploration=exploration, only=only, policy=policy)
    if variant not in VARIANTS:
        raise ValueError(f"unknown search {variant!r} (searches: {', '.join(VARIANTS)})")
    if root is not None:
        raise ValueError("only the single-observer search continues a tree")
    if variant == "multiple":
        return MultipleObserver(seat, exploration=exploration, only=only, policy=policy)
    return OwnInformation(seat, exploration=exploration, only=only, policy=policy,
                          backoff=variant == "backoff")


def search(  # noqa: PLR0913  (the search's settings, every one keyword-only)
        view: SearchView[SearchState], rng: random.Random, *, iterations: int | None = None,
           seconds: float | None = None, root_actions: list[int] | None = None,
           policy: Policy | None = None, early_stop: bool = True,
           root: Node | None = None, exploration: float = EXPLORATION,
           variant: str = "single") -> SearchResult:
    """Search from ``view`` (whose player is to act) and return the move to play.

    ``root_actions``: search only these of the player's legal moves (a model's
    candidates when the legal moves are too many); the rest of the tree is whole.
    ``policy``: the rollouts and sampled moves (None: the state's own), and, in
    the ``multiple`` and ``own`` variants, another player's move where the search
    meets its information for the first time (None: a random legal move).
    ``early_stop``: stop as soon as the most visited move can no longer be
    overtaken within the budget (:func:`settled`); under an iteration budget the
    move is then the one the whole budget would have chosen.
    ``root``: a tree to continue (the subtree of a search made before, matching
    this view); its root visits count toward the budget (single observer only).
    ``exploration``: the UCB constant (rewards are in [0, 1]).
    ``variant``: how the other players are modelled (:data:`VARIANTS`).
    """
    if iterations is None and seconds is None:
        raise ValueError("give an iteration or a time budget")
    seat, legal = root_moves(view, root_actions)
    only = legal if root_actions is not None else None
    tree = make_tree(variant, seat, root=root, exploration=exploration, only=only,
                     policy=policy)
    return run(view, tree, legal, rng, iterations=iterations, seconds=seconds,
               early_stop=early_stop)


def run(view: SearchView[SearchState], tree: Tree, legal: list[int], rng: random.Random, *,
        iterations: int | None = None, seconds: float | None = None,
        early_stop: bool = True) -> SearchResult:
    """Grow ``tree`` from ``view`` within the budget (see :func:`search`); the root moves
    are ``legal``."""
    root = tree.root
    children = root.children
    reused = sum(children[a].visits for a in legal if a in children)
    start = time.perf_counter()
    done = 0
    if len(legal) > 1:
        iterate = tree.iterate
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
            iterate(view.determinize(rng), rng)
            done += 1
    visits = {a: children[a].visits for a in legal if a in children}
    action = most_visited(legal, visits)
    return SearchResult(action, visits, done, time.perf_counter() - start, root, reused)


def grow(view: SearchView[SearchState], seat: int, root: Node, rng: random.Random, *,
         iterations: int | None = None, until: float | None = None,
         only: list[int] | None = None, policy: Policy | None = None) -> int:
    """Add iterations to ``root``, the tree of ``seat`` searching ``view``: ``iterations``
    of them, or until ``time.perf_counter()`` reads ``until`` (checked every
    ``CLOCK_EVERY``); return how many.  The player to act need not be ``seat``
    (pondering searches while another player is to act); ``only``: the moves searched
    at the root.  Growing in several calls builds the same tree as in one."""
    tree = SingleObserver(seat, root, only=only, policy=policy)
    return grow_tree(view, tree, rng, iterations=iterations, until=until)


def grow_tree(view: SearchView[SearchState], tree: Tree, rng: random.Random, *,
              iterations: int | None = None, until: float | None = None) -> int:
    """:func:`grow` for a search of any variant (:func:`make_tree`)."""
    if iterations is None and until is None:
        raise ValueError("give an iteration count or a deadline")
    done = 0
    iterate = tree.iterate
    while iterations is None or done < iterations:
        if until is not None and done % CLOCK_EVERY == 0 and time.perf_counter() >= until:
            break
        iterate(view.determinize(rng), rng)
        done += 1
    return done


def root_moves(view: SearchView[SearchState], root_actions: list[int] | None = None
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
            key = select(children, keys, exploration)
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
    finish(world, path, rng, policy)


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


class Known:
    """A full-information world as a view of itself: every determinization is a copy
    (:func:`pimc` searches each world it draws this way)."""

    def __init__(self, world: SearchState):
        self.world = world
        self.players = world.players

    def current_player(self) -> int:
        return self.world.current_player()

    def legal_actions(self) -> list[int]:
        return self.world.legal_actions()

    def determinize(self, rng: random.Random) -> SearchState:
        return self.world.clone()


def pimc(view: SearchView[SearchState], rng: random.Random, *, iterations: int | None = None,
         seconds: float | None = None, worlds: int = 10,
         root_actions: list[int] | None = None, policy: Policy | None = None,
         exploration: float = EXPLORATION) -> SearchResult:
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
            world = Known(view.determinize(rng))  # a full-information world: UCT on it
            result = search(world, rng, iterations=share,
                            seconds=None if seconds is None else seconds / worlds,
                            root_actions=root_actions, policy=policy, early_stop=False,
                            exploration=exploration)
            for action, count in result.visits.items():
                visits[action] = visits.get(action, 0) + count
            done += result.iterations
    action = most_visited(legal, visits)
    return SearchResult(action, visits, done, time.perf_counter() - start, root)
