"""Pondering: the searching bots think while the person thinks.

While a person's prompt is open, each searching bot at the table searches from
its own seat's view in one background thread (the person is to act at the
root of its tree: the search models the person's move as it models any other
player's).  When a bot is to decide, its tree is followed through what
happened since, as the search itself keys it (each move by what the bot
observes of it, then the bot's own observation after a move), and the search
continues from the subtree it reaches: the visits found there count toward the
bot's budget, so a bot whose subtree already holds a second's worth of visits
answers at once.

Only ``ismcts`` with a time budget on one process ponders: an iteration budget
promises the same game for the same seed, which pondering (as much as the
person's thinking allows) would break.  The thread is pure Python, so it shares
the person's core with the prompt, which is idle while the person thinks.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from p2pcards.ai.ismcts import Node, grow
from p2pcards.ai.protocol import Policy, SearchState, SearchView
from p2pcards.bots.registry import Bot
from p2pcards.bots.search import SearchBot
from p2pcards.games import CHANCE, HandState
from p2pcards.history import HandRecord
from p2pcards.local import LocalGame

CHUNK = 16
"""Iterations a bot's tree grows before the thread turns to the next bot."""
MOST = 200_000
"""Iterations pondered at most while one person thinks (a person gone from the screen
must not keep a core busy and the trees growing: about 40 MB and 20 s of one core)."""
SHARES = (4, 2, 1)
"""Chunks per turn of the thread for the bot that moves first after the person, the
second, the others: a bot further on reaches its subtree through more moves it
cannot foresee, so less of what it ponders is of use to it."""


@dataclass
class _Tree:
    """One bot's pondered tree, and where in the deal it stands."""

    seat: int
    view: SearchView[SearchState]
    """The bot's view when pondering began (the person to act), as its search takes
    it (weighed by the game's belief when the bot infers)."""
    full: HandState
    """The table's state when pondering began; followed along to find the subtree."""
    record: HandRecord
    at: int
    """How many actions of ``record`` the tree's root stands after."""
    policy: Policy | None
    rng: random.Random
    root: Node


def ponders(bot: Bot | None) -> bool:
    """Whether ``bot`` thinks during the person's turn (see the module docstring)."""
    return (isinstance(bot, SearchBot) and bot.kind == "ismcts" and bot.variant == "single"
            and bot.early_stop
            and bot.think is not None and bot.iterations is None and bot.workers == 1)


class Pondering:
    """The bots of ``table`` (``bots[seat]``, None for the person) pondering in turn.

    :meth:`start` when the person's move prompt opens, :meth:`stop` when the
    person has moved (or leaves), :meth:`tree_for` when a bot is to decide: the
    subtree to give its :meth:`SearchBot.choose` (None: search afresh)."""

    def __init__(self, table: LocalGame, bots: Sequence[Bot | None]):
        self.table = table
        self.bots = list(bots)
        self.trees: dict[int, _Tree] = {}
        self._thread: threading.Thread | None = None
        self._halt = threading.Event()
        self.iterations = 0
        """Iterations pondered so far (all bots, all turns)."""

    @property
    def running(self) -> bool:
        """Whether the bots are pondering now."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Begin pondering at the table's current state (the person to act)."""
        self.stop()
        table = self.table
        state, record = table.state, table.record
        self.trees = {}
        if state is None or record is None or state.is_terminal():
            return
        actor = state.current_player()
        for seat, bot in enumerate(self.bots):
            if seat == actor or not ponders(bot):
                continue
            assert isinstance(bot, SearchBot)
            searched, policy = bot.search_inputs(state.view(seat))  # its search's own
            self.trees[seat] = _Tree(seat, searched, state.clone(), record, len(record.actions),
                                     policy,
                                     random.Random(f"ponder:{seat}:{len(record.actions)}"),
                                     Node(-1))
        if not self.trees:
            return
        self._halt = threading.Event()
        players = len(self.bots)
        order = sorted(self.trees.values(), key=lambda tree: (tree.seat - actor) % players)
        turns = [(tree, SHARES[min(rank, len(SHARES) - 1)]) for rank, tree in enumerate(order)]
        self._thread = threading.Thread(target=self._run, args=(turns, self._halt),
                                        name="p2pcards-ponder", daemon=True)
        self._thread.start()

    def _run(self, turns: list[tuple[_Tree, int]], halt: threading.Event) -> None:
        start = self.iterations
        while not halt.is_set() and self.iterations - start < MOST:
            for tree, chunks in turns:
                for _ in range(chunks):
                    if halt.is_set():
                        return
                    self.iterations += grow(tree.view, tree.seat, tree.root, tree.rng,
                                            iterations=CHUNK, policy=tree.policy)

    def stop(self) -> None:
        """Stop pondering (the trees are kept for :meth:`tree_for`)."""
        thread = self._thread
        if thread is not None:
            self._halt.set()
            thread.join()
            self._thread = None

    def tree_for(self, seat: int) -> Node | None:
        """The pondered subtree for ``seat``'s decision at the table's current state, or
        None (nothing pondered for it, or the deal went elsewhere: a new deal, an undo).
        A tree is given once."""
        self.stop()
        tree = self.trees.pop(seat, None)
        table = self.table
        if tree is None or table.record is not tree.record or table.state is None \
                or len(tree.record.actions) < tree.at:
            return None
        return follow(tree.root, tree.full, seat,
                      [text for _, text in tree.record.actions[tree.at:]])


    def decide(self, bot: Bot, view: HandState, rng: random.Random) -> int:
        """``bot``'s action for ``view`` (its seat to act), continuing what it pondered."""
        tree = self.tree_for(view.current_player())
        if isinstance(bot, SearchBot):
            return bot.choose(view, rng, tree)[0]
        return bot(view, rng)


def follow(root: Node, full: HandState, seat: int, texts: Sequence[str]) -> Node | None:
    """The node of ``root`` (``seat``'s tree searched at the full state ``full``) that
    the actions ``texts`` (as the hand history writes them) lead to, keyed as the
    search keys them; None where the tree has not been (``full`` is played along)."""
    node: Node | None = root
    for text in texts:
        if node is None:
            return None
        chance = full.current_player() == CHANCE
        action = full.parse_action(text)
        key = full.public_action(action, seat)
        full.apply(action)
        node = node.children.get(key)
        if node is not None and not chance:  # after a player's move: the seat's observation
            node = node.after.get(full.observation(seat)) if node.after else None
    return node
