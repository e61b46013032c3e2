"""The searching bots: ``ismcts`` (and its variants modelling each player from its own
information) and the ``pimc`` baseline, on one or more processes."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import cast

from p2pcards.ai.endgame import Exact
from p2pcards.ai.inference import Inferred
from p2pcards.ai.ismcts import EXPLORATION, Node, pimc, search
from p2pcards.ai.parallel import RootParallel
from p2pcards.ai.protocol import (
    Policy,
    SearchState,
    SearchView,
    base_rollout,
    base_sampled_move,
)
from p2pcards.bots.registry import Bot, heuristic_bot, playbook
from p2pcards.games.core import HandState

SEARCH_LIMIT = 300
"""Decisions with more legal actions than this are searched over the game's
candidates (``candidate_actions``: the Bid Whist discard, 18,564 choices, and
Control Nut! bids from a long hand, up to 560); without candidates the game's own
rule decides, else the heuristic bot."""


@dataclass(frozen=True)
class HeuristicPolicy:
    """The search policy of the ``multiple`` and ``own`` searches: the playbook's
    (``base``; None: the engine's own rollout and sampled moves), and for another
    player met for the first time the game's heuristic playing that player's cards
    in the sampled world (``Policy.move``)."""

    heuristic: Bot
    base: Policy | None = None

    def rollout(self, world: SearchState, rng: random.Random) -> list[float] | None:
        return base_rollout(self.base, world, rng)

    def sampled_move(self, world: SearchState, seat: int, rng: random.Random) -> int | None:
        return base_sampled_move(self.base, world, seat, rng)

    def move(self, world: SearchState, rng: random.Random) -> int:
        return self.heuristic(cast(HandState, world), rng)


@dataclass
class SearchBot:
    """A bot that searches its own view (``ismcts``, or the ``pimc`` baseline), counting
    its iterations and time for reports.

    ``early_stop``: the search stops once its most visited move can no longer be
    overtaken within the budget (``ismcts``; off for ``ismcts-full``, the same
    search spending its whole budget, kept to compare against).  Each search
    draws its own random source from ``rng`` with one draw, so the bot's random
    stream does not depend on how long its searches ran: with an iteration
    budget ``ismcts`` and ``ismcts-full`` play the same moves in the same games.
    ``variant``: how the search models the other players (``ai.ismcts.VARIANTS``);
    ``exploration``: its UCB constant; ``infer``: draw the worlds by the playbook's
    ``belief`` (:class:`~p2pcards.ai.inference.Inferred`) of the other players' bids
    (1), of their bids and plays (2), or not (0), or as the playbook says when None
    (:meth:`infers`); ``endgame``: solve each
    world exactly once at most that many moves are left (0: never;
    :class:`~p2pcards.ai.endgame.Exact`).
    """

    kind: str
    iterations: int | None = None
    think: float | None = None
    workers: int = 1
    early_stop: bool = True
    done: int = 0
    seconds: float = 0.0
    searches: int = 0
    reused: int = 0
    """Root visits its searches found in trees they continued (pondering)."""
    pool: RootParallel | None = None
    variant: str = "single"
    exploration: float = EXPLORATION
    infer: int | None = None
    endgame: int = 0

    def infers(self, view: HandState) -> int:
        """How this bot draws its worlds at ``view``'s game: 0 uniformly, 1 by inference
        from the bids, 2 from the bids and plays (``infer``, or when it is None the
        game's playbook: ``Playbook.infers``)."""
        return playbook(view).infers if self.infer is None else self.infer

    def search_inputs(self, view: HandState) -> tuple[SearchView[SearchState], Policy | None]:
        """What this bot searches for ``view``: the view (weighed by the game's belief
        when the bot infers) and the policy (the playbook's, solving endgames with
        ``endgame``, with the heuristic for other players' first moves in the
        variants that model them).  Pondering grows its trees from the same."""
        book = playbook(view)
        policy = book.policy
        if self.endgame:
            policy = Exact(self.endgame, policy)
        if self.variant != "single":
            policy = HeuristicPolicy(book.heuristic, policy)
        depth = self.infers(view)
        belief = book.belief(view, depth >= 2) if depth else None
        return (view if belief is None else Inferred(view, belief)), policy

    def __call__(self, view: HandState, rng: random.Random) -> int:
        return self.choose(view, rng)[0]

    def choose(self, view: HandState, rng: random.Random, tree: Node | None = None
               ) -> tuple[int, float | None]:
        """The action, and its share of the root visits when a search chose it
        (None: the only move, a model's or a rule's choice).  ``tree``: a tree of
        this bot searched before for this very view (pondering), to continue."""
        actions = view.legal_actions()
        if len(actions) == 1:
            return actions[0], None
        only = None
        book = playbook(view)
        if self.kind == "ismcts":
            modelled = book.model(view, rng)
            if modelled is not None:
                return modelled, None
            only = book.candidates(view, rng)
            if only is not None and len(only) == 1:
                return only[0], None
        if only is None and len(actions) > SEARCH_LIMIT:  # a model proposes, the search chooses
            only = view.candidate_actions(rng)
            if not only:  # no model: the game's own rule, else the heuristic's
                sampled = view.sampled_move(view.current_player(), rng)
                return (sampled if sampled is not None else heuristic_bot(view, rng)), None
        if only is not None and len(only) == 1:
            return only[0], None
        searched, policy = self.search_inputs(view)
        if self.kind == "pimc":
            result = pimc(searched, rng, iterations=self.iterations, seconds=self.think,
                          root_actions=only, policy=policy, exploration=self.exploration)
        elif self.workers > 1:  # root parallelism: persistent worker processes
            if self.pool is None:
                self.pool = RootParallel(self.workers)
            result = self.pool.search(searched, rng.randrange(1 << 31), iterations=self.iterations,
                                      seconds=self.think, root_actions=only, policy=policy,
                                      early_stop=self.early_stop,
                                      exploration=self.exploration, variant=self.variant)
        else:
            result = search(searched, random.Random(rng.getrandbits(64)),
                            iterations=self.iterations,
                            seconds=self.think, root_actions=only, policy=policy,
                            early_stop=self.early_stop, root=tree,
                            exploration=self.exploration, variant=self.variant)
        self.searches += 1
        self.done += result.iterations
        self.seconds += result.seconds
        self.reused += result.reused
        return result.action, result.share
