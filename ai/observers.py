"""Searches that model each player from its own information (docs/bots.md).

The single-observer search (:mod:`.ismcts`) chooses every player's move from
one tree keyed on what the *searching* player observes: another player's move
is the same whatever cards it holds in the sampled world, as if it bid and
played blind.  The searches here give each player its own information:

* :class:`MultipleObserver`, multiple-observer ISMCTS (Cowling, Powley &
  Whitehouse 2012): one tree per player, each keyed on what its player
  observes (each move by ``public_action(action, p)``, then ``observation(p)``;
  another player's tree starts from ``information_key(p)``, what that player
  knows in the sampled world: its cards).  The move at each step is chosen in
  the acting player's tree (availability counts there), every tree follows the
  move as its player sees it, and every tree is backed up with the rewards of
  each edge's actor.
* :class:`OwnInformation`: the searcher's tree as in the single-observer
  search, but at another player's decision the statistics are kept per
  ``information_key(actor)`` of the sampled world (what the actor knows: its
  cards and the public history), under the searcher's node.  With ``backoff``
  those statistics are used only once the search has met that information more
  often than the actor has moves; until then the actor chooses as in the
  single-observer search (the searcher's node's statistics of its moves).

In ``multiple`` and ``own``, where another player's information is met for the
first time its move is the policy's (``Policy.move``: the game's heuristic playing that player's
cards in the world) rather than a random expansion, and the iteration goes on:
it ends when the *searcher's* tree gains a node, as in the single-observer
search.  (With each player keyed on its own cards, another player's
information is new in almost every world; the textbook rule, a random move
that ends the iteration, would make every iteration stop at the first move
of another player and leave a flat search of the root.)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping

from .protocol import Policy, SearchState
from .tree import EXPLORATION, Node, finish, select


class Stats(dict[int, "Stat"]):
    """Another player's statistics at one of its information sets: move -> :class:`Stat`,
    and how often the search met that information (``backoff``)."""

    __slots__ = ("met",)

    def __init__(self) -> None:
        super().__init__()
        self.met = 0

    def of(self, action: int, actor: int) -> Stat:
        """The statistics of ``action``, made on first use."""
        stat = self.get(action)
        if stat is None:
            stat = self[action] = Stat(actor)
        return stat


class Stat:
    """One move's statistics at one information set of another player (``own``)."""

    __slots__ = ("actor", "avail", "reward", "visits")

    def __init__(self, actor: int):
        self.actor = actor
        self.visits = 0
        self.avail = 0
        self.reward = 0.0


class InfoNode(Node):
    """A node of the searcher's tree that also keeps, where another player acts, that
    player's statistics per information key (``info``: key -> move -> :class:`Stat`)."""

    __slots__ = ("info",)

    def __init__(self, actor: int):
        super().__init__(actor)
        self.info: dict[int, Stats] | None = None

    def child(self, key: int, actor: int) -> InfoNode:
        node = self.children.get(key)
        if node is None:
            node = self.children[key] = InfoNode(actor)
        assert isinstance(node, InfoNode)
        return node

    def stats(self, key: int) -> tuple[Stats, bool]:
        """Another player's statistics at its information ``key`` here, and whether they
        are new."""
        if self.info is None:
            self.info = {}
        stats = self.info.get(key)
        if stats is None:
            stats = self.info[key] = Stats()
            return stats, True
        return stats, False

    def branch(self, observation: int) -> InfoNode:
        if self.after is None:
            self.after = {}
        node = self.after.get(observation)
        if node is None:
            node = self.after[observation] = InfoNode(-1)
        assert isinstance(node, InfoNode)
        return node


def _legal(world: SearchState, seat: int, rng: random.Random,
           policy: Policy | None) -> list[int]:
    sampled = world.sampled_move(seat, rng) if policy is None \
        else policy.sampled_move(world, seat, rng)
    return [sampled] if sampled is not None else world.legal_actions()


def _first_move(world: SearchState, legal: list[int], rng: random.Random,
                policy: Policy | None) -> int:
    """Another player's move at information it shows the search for the first time."""
    if policy is not None:
        return policy.move(world, rng)
    return legal[int(rng.random() * len(legal))]


def _one_of(actions: list[int], rng: random.Random) -> int:
    return actions[int(rng.random() * len(actions))]


def _grouped(legal: list[int], seat: int, public: Callable[[int, int], int]
             ) -> tuple[list[int], dict[int, list[int]] | None]:
    """The keys of ``legal`` as ``seat`` sees them, and the moves behind each key when
    some moves look alike to it (else None)."""
    keys = [public(a, seat) for a in legal]
    if keys == legal:
        return keys, None
    by_key: dict[int, list[int]] = {}
    for k, a in zip(keys, legal, strict=True):
        by_key.setdefault(k, []).append(a)
    return list(by_key), by_key


def _available(stats: Mapping[int, Node | Stat], keys: list[int]) -> None:
    for k in keys:
        stat = stats.get(k)
        if stat is not None:
            stat.avail += 1


def _as_single(children: Mapping[int, Node], legal: list[int], seat: int,
               public: Callable[[int, int], int], rng: random.Random, *,
               exploration: float) -> int:
    """The move chosen as the single-observer search chooses it at a node of the
    searcher's tree: keyed by what ``seat`` sees, an untried key at random, else UCB."""
    keys, by_key = _grouped(legal, seat, public)
    key = _ucb(children, keys, rng, exploration)
    _available(children, keys)
    return key if by_key is None else _one_of(by_key[key], rng)


def _ucb(stats: Mapping[int, Node | Stat], keys: list[int], rng: random.Random,
         exploration: float) -> int:
    """An untried key at random, else the best by UCB."""
    untried = [k for k in keys if k not in stats]
    return _one_of(untried, rng) if untried else select(stats, keys, exploration)


def _by_own(stats: Stats, legal: list[int], rng: random.Random, exploration: float) -> int:
    """Another player's move from its statistics at its own information: an untried
    move at random, else UCB."""
    _available(stats, legal)
    return _ucb(stats, legal, rng, exploration)


class MultipleObserver:
    """Multiple-observer ISMCTS (module docstring); ``root`` is the searcher's tree,
    ``roots`` every player's."""

    def __init__(self, seat: int, *, exploration: float = EXPLORATION,
                 only: list[int] | None = None, policy: Policy | None = None):
        self.seat = seat
        self.root = Node(-1)
        self.roots: list[Node] = []
        self.exploration = exploration
        self.only = only
        self.policy = policy

    def iterate(self, world: SearchState, rng: random.Random) -> None:
        seat, policy = self.seat, self.policy
        players = world.players
        if not self.roots:
            self.roots = [self.root if p == seat else Node(-1) for p in range(players)]
        # another player's tree starts from what it knows in this world (its cards)
        nodes = [root if p == seat else root.branch(world.information_key(p))
                 for p, root in enumerate(self.roots)]
        path: list[Node] = []
        public = world.public_action
        expanded = False
        while not world.is_terminal():
            actor = world.current_player()
            if actor < 0:
                outcome = world.chance_action(rng)
                nodes = [node.child(public(outcome, p), actor) for p, node in enumerate(nodes)]
                world.step(outcome)
                continue
            mine = nodes[actor]
            if self.only is not None and mine is self.root:
                legal = self.only  # the model's candidates, searched
            else:
                legal = _legal(world, seat, rng, policy)
            keys, by_key = _grouped(legal, actor, public)  # moves the actor cannot tell apart
            children = mine.children
            untried = [k for k in keys if k not in children]
            action: int | None = None
            if untried:
                if actor != seat and not children and len(keys) > 1:
                    action = _first_move(world, legal, rng, policy)
                    key = public(action, actor)
                else:
                    key = untried[int(rng.random() * len(untried))]
            else:
                key = select(children, keys, self.exploration)
            for k in keys:
                child = children.get(k)
                if child is not None:
                    child.avail += 1
            if action is None:
                action = key if by_key is None else _one_of(by_key[key], rng)
            moved: list[Node] = []
            for p, node in enumerate(nodes):
                k = key if p == actor else public(action, p)
                child = node.children.get(k)
                if child is None:
                    child = node.child(k, actor)
                    if p == seat:
                        expanded = True
                moved.append(child)
            path.extend(moved)
            world.step(action)
            nodes = [node.branch(world.observation(p)) for p, node in enumerate(moved)]
            if expanded:
                break
        finish(world, path, rng, policy)


class OwnInformation:
    """The searcher's tree, with other players' statistics keyed on their own
    information in the sampled world (module docstring)."""

    def __init__(self, seat: int, *, exploration: float = EXPLORATION,
                 only: list[int] | None = None, policy: Policy | None = None,
                 backoff: bool = False):
        self.seat = seat
        self.root: InfoNode = InfoNode(-1)
        self.exploration = exploration
        self.only = only
        self.policy = policy
        self.backoff = backoff

    def iterate(self, world: SearchState, rng: random.Random) -> None:
        seat, policy, exploration = self.seat, self.policy, self.exploration
        node = self.root
        path: list[Node | Stat] = []
        public = world.public_action
        expanded = False
        while not world.is_terminal():
            actor = world.current_player()
            if actor < 0:
                outcome = world.chance_action(rng)
                node = node.child(public(outcome, seat), actor)
                world.step(outcome)
                continue
            if actor == seat:
                if self.only is not None and node is self.root:
                    legal = self.only
                else:
                    legal = _legal(world, seat, rng, policy)
                action = _as_single(node.children, legal, seat, public, rng,
                                    exploration=exploration)
            else:
                legal = _legal(world, seat, rng, policy)
                if len(legal) == 1:
                    action = legal[0]
                elif self.backoff:
                    action = self._backoff(node, world, actor, legal=legal, rng=rng, path=path)
                else:
                    action = self._other(node, world, actor, legal=legal, rng=rng, path=path)
            key = public(action, seat)
            move = node.children.get(key)
            if move is None:
                move = node.child(key, actor)
                expanded = True
            assert isinstance(move, InfoNode)
            path.append(move)
            world.step(action)
            node = move.branch(world.observation(seat))
            if expanded:
                break
        finish(world, path, rng, policy)

    def _other(self, node: InfoNode, world: SearchState, actor: int, *, legal: list[int],
               rng: random.Random, path: list[Node | Stat]) -> int:
        """Another player's move, from its statistics under its own information key."""
        stats, new = node.stats(world.information_key(actor))
        if new:
            action = _first_move(world, legal, rng, self.policy)
        else:
            action = _by_own(stats, legal, rng, self.exploration)
        path.append(stats.of(action, actor))
        return action

    def _backoff(self, node: InfoNode, world: SearchState, actor: int, *, legal: list[int],
                 rng: random.Random, path: list[Node | Stat]) -> int:
        """Another player's move: by its statistics under its own information key once
        the search has met that information more often than the player has moves, and
        until then as the single observer chooses it (the searcher's node's statistics
        of that player's moves, the same whatever it holds).  Both are backed up."""
        stats, _ = node.stats(world.information_key(actor))
        stats.met += 1
        children = node.children
        keys, by_key = _grouped(legal, self.seat, world.public_action)
        _available(children, keys)  # the single observer's counts, kept in every case
        if stats.met > len(legal):  # known information: its own statistics
            action = _by_own(stats, legal, rng, self.exploration)
        else:  # new to the search: as the single observer
            key = _ucb(children, keys, rng, self.exploration)
            action = key if by_key is None else _one_of(by_key[key], rng)
        path.append(stats.of(action, actor))
        return action
