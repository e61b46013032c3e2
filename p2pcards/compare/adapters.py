"""OpenSpiel's ``spades`` and ``hearts`` through the search's protocol
(:class:`p2pcards.ai.protocol.SearchState`).

A :class:`CardTable` is either a *view* -- one seat's information
(:class:`seen.Seen`), built by :meth:`CardTable.view` from an OpenSpiel state
keeping only what that seat observed -- or a *world*, a full OpenSpiel state the
table drives (legal actions, steps, returns all OpenSpiel's own).  A view's
:meth:`~CardTable.determinize` deals the unseen cards exactly
(:class:`worlds.Worlds`: hand sizes, every void and every other card the plays
rule out) and replays the implied history in a fresh OpenSpiel state.

A hearts deal without passing (``pass_cards=False``, or a deal whose direction is
"no pass") has native worlds by default (``worlds="native"``): a
:class:`fasthearts.HeartsWorld`, OpenSpiel's rules in pure Python, built from the
dealt hands and the public play with no OpenSpiel state at all; ``worlds="pyspiel"``
keeps OpenSpiel's own states (both draw the same hands from the same generator).

Rollouts play uniformly random legal moves, or with ``rollouts="policy"`` the card
sense of :mod:`policy` (a tenth of its moves random).  Every move is public except a hearts
pass, which only its passer (and, once passing is over, its receiver) sees: the
search keys another seat's passes alike (:data:`HIDDEN`) and tells apart the
worlds after passing by the cards the searching seat received (``observation``).
"""

from __future__ import annotations

import random
from typing import Any, Self

import pyspiel

from . import policy
from .fasthearts import HeartsWorld, NativeDeals
from .rules import CARDS, PASS_CARDS, PLAYERS, RULES, Rules
from .seen import Seen, seen_by
from .worlds import Worlds

HIDDEN = 1_000
"""The search key of a move the searching seat cannot see (another seat's pass)."""

GAMES: dict[str, Any] = {}

ROLLOUTS = ("random", "policy")

WORLDS = ("native", "pyspiel")
"""The worlds a view draws: native (:mod:`fasthearts`, hearts without passing; other
deals fall back to OpenSpiel's states) or OpenSpiel's states always."""


def load(name: str, passing: bool = True) -> Any:
    """OpenSpiel's game ``name`` (``spades`` or ``hearts``) with its default parameters,
    but for hearts without passing when ``passing`` is False (``pass_cards=False``)."""
    if name not in RULES:
        raise ValueError(f"unknown game {name!r}: choose spades or hearts")
    spec = name if passing or not RULES[name].passing else f"{name}(pass_cards=False)"
    game = GAMES.get(spec)
    if game is None:
        game = GAMES[spec] = pyspiel.load_game(spec)
    return game


def replay(game: Any, actions: list[int]) -> Any:
    """A fresh OpenSpiel state after ``actions``."""
    state = game.new_initial_state()
    for action in actions:
        state.apply_action(action)
    return state


def history_of(state: Any) -> list[tuple[int, int]]:
    return [(item.player, item.action) for item in state.full_history()]


class CardTable:
    """One seat's view of an OpenSpiel card game, or a full-information world."""

    players = PLAYERS

    def __init__(self, game: Any, rules: Rules, state: Any = None, *, seen: Seen | None = None,
                 to_act: int = -1, legal: list[int] | None = None, rollouts: str = "random",
                 worlds: str = "native"):
        if rollouts not in ROLLOUTS:
            raise ValueError(f"unknown rollouts {rollouts!r}: choose {' or '.join(ROLLOUTS)}")
        if worlds not in WORLDS:
            raise ValueError(f"unknown worlds {worlds!r}: choose {' or '.join(WORLDS)}")
        self.worlds = worlds
        self.game = game
        self.rollouts = rollouts
        self.rules = rules
        self.state = state
        self.seen = seen
        self._to_act = to_act
        self._legal = legal or []
        self._worlds: Worlds | None = None
        self._native: NativeDeals | None = None
        self._received: dict[int, int] = {}
        history = [] if state is None else state.history()
        self._length = len(history)
        self._pass_dir = history[0] if rules.passing and history else 0

    # -- building ---------------------------------------------------------------

    @classmethod
    def view(cls, state: Any, seat: int, rollouts: str = "random",
             worlds: str = "native") -> CardTable:
        """``seat``'s view of OpenSpiel ``state``: only what the seat observed (and,
        when it is to act, its own legal moves); its worlds (:data:`WORLDS`) roll out
        by ``rollouts``."""
        game = state.get_game()
        rules = RULES[game.get_type().short_name]
        seen = seen_by(rules, history_of(state), seat)
        to_act = state.current_player()
        legal = list(state.legal_actions()) if to_act == seat else []
        return cls(game, rules, seen=seen, to_act=to_act, legal=legal, rollouts=rollouts,
                   worlds=worlds)

    @classmethod
    def world(cls, state: Any) -> CardTable:
        """A world driving OpenSpiel ``state`` (a copy of it)."""
        game = state.get_game()
        return cls(game, RULES[game.get_type().short_name], state=state.clone())

    @property
    def is_view(self) -> bool:
        return self.state is None

    def _full(self) -> Any:
        if self.state is None:
            raise TypeError("a view has no full state: determinize it first")
        return self.state

    # -- the protocol -------------------------------------------------------------

    def current_player(self) -> int:
        if self.state is None:
            return self._to_act
        return int(self.state.current_player())

    def legal_actions(self) -> list[int]:
        if self.state is None:
            return list(self._legal)
        return list(self.state.legal_actions())

    def step(self, action: int) -> None:
        self._full().apply_action(action)
        self._length += 1

    def clone(self) -> Self:
        copy = type(self)(self.game, self.rules,
                          None if self.state is None else self.state.clone(),
                          seen=self.seen, to_act=self._to_act, legal=self._legal,
                          rollouts=self.rollouts, worlds=self.worlds)
        copy._worlds = self._worlds
        copy._native = self._native
        copy._received = self._received
        copy._length = self._length
        copy._pass_dir = self._pass_dir
        return copy

    def is_terminal(self) -> bool:
        if self.state is None:
            return self.seen is not None and len(self.seen.plays()) == CARDS
        return bool(self.state.is_terminal())

    def rewards(self) -> list[float]:
        return self.rules.rewards(list(self._full().returns()))

    def chance_action(self, rng: random.Random) -> int:
        outcomes = self._full().legal_actions()  # both games' chance is uniform
        return int(outcomes[int(rng.random() * len(outcomes))])

    def native(self) -> bool:
        """Whether this view draws native worlds (:data:`WORLDS`)."""
        seen = self.seen
        return self.worlds == "native" and seen is not None and seen.rules.native_worlds \
            and seen.pass_dir == 0

    def determinize(self, rng: random.Random) -> CardTable | HeartsWorld:
        """A world (a :class:`fasthearts.HeartsWorld` or a table driving an OpenSpiel
        state) this view's seat cannot tell from the truth."""
        if self.state is not None:
            return self.clone()
        assert self.seen is not None
        if self._worlds is None:
            self._worlds = Worlds(self.seen)
        if self.native():
            if self._native is None:
                self._native = NativeDeals(self._worlds, self.rollouts)
            return self._native.world(rng)
        return self._replayed(rng)

    def openspiel_world(self, rng: random.Random) -> Any:
        """The OpenSpiel state of a world drawn from this view, whatever its
        :data:`WORLDS` (for OpenSpiel's own bots and the audit)."""
        return self._replayed(rng).state

    def _replayed(self, rng: random.Random) -> Self:
        assert self.seen is not None
        if self._worlds is None:
            self._worlds = Worlds(self.seen)
        state = replay(self.game, self._worlds.history(rng))
        world = type(self)(self.game, self.rules, state=state, rollouts=self.rollouts)
        if self.seen.received is not None:  # what the seat received is the same in every world
            world._received = {self.seen.seat: hash(self.seen.received)}
        return world

    def _passing_now(self) -> bool:
        """Whether hearts' passing is under way (in a world)."""
        if not self.rules.passing:
            return False
        start = self.rules.prefix + CARDS
        return self._pass_dir != 0 and start <= self._length < start + PLAYERS * PASS_CARDS

    def public_action(self, action: int, seat: int) -> int:
        if not self.rules.passing or self.current_player() == seat:
            return action
        if self.state is None:
            assert self.seen is not None
            passing = self.seen.received is None and self.seen.pass_dir != 0
        else:
            passing = self._passing_now()
        return HIDDEN if passing else action

    def sampled_move(self, seat: int, rng: random.Random) -> int | None:
        return None

    def observation(self, seat: int) -> int:
        """Hearts: the cards passed to ``seat`` once passing is over; else nothing
        (every other private fact is fixed from the deal on)."""
        if not self.rules.passing:
            return 0
        if self.state is None:
            assert self.seen is not None
            return hash(self.seen.received) if self.seen.received is not None else 0
        if self._pass_dir == 0:  # (no passing in this deal: nothing is ever received)
            return 0
        known = self._received.get(seat)
        if known is not None:
            return known
        seen = seen_by(self.rules, history_of(self.state), seat)
        if seen.received is None:
            return 0
        token = hash(seen.received)
        self._received = {**self._received, seat: token}
        return token

    def rollout(self, rng: random.Random) -> None:
        """Uniformly random legal moves to the end, or the policy's (:mod:`policy`)."""
        state = self._full()
        if self.rollouts == "policy":
            self._length += policy.rollout(self.rules, state, rng)
            return
        steps = 0
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.random() * len(legal))])
            steps += 1
        self._length += steps

    def information_key(self, seat: int) -> int:
        """A hash of ``seat``'s own hand and the history it observed (equal in a view
        and in every world drawn from it)."""
        if self.state is None:
            assert self.seen is not None
            if self.seen.seat != seat:
                raise ValueError(f"this view is seat {self.seen.seat}'s, not seat {seat}'s")
            return self.seen.key()
        return seen_by(self.rules, history_of(self.state), seat).key()
