"""The engine core: every game's deal state, :class:`HandState`.

A deal state is three things, each in its own module:

* the state tracking (:class:`~p2pcards.games.places.Places`): the cards of the
  deal as one observer knows them, hidden places and claims, proofs and views;
* the hooks (:class:`~p2pcards.games.hooks.DealHooks`): what a table, a screen,
  the benchmarks and the arena ask of a deal beyond its rules, with defaults;
* the rules interface, here: the moves, the score, the text of actions, and
  what the search needs (``p2pcards.ai.protocol``), which each game fills in.

This module also names what the rest of the program imports with the core: the
values that stand where no seat does (:mod:`p2pcards.games.seats`), the errors
(:mod:`p2pcards.games.errors`), the proofs and the chance events.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping
from typing import ClassVar, Self

from p2pcards.games.cards import bits
from p2pcards.games.determinize import determinize
from p2pcards.games.errors import ActionSyntaxError, IllegalAction, KnowledgeError, reading
from p2pcards.games.hooks import ChanceKind, DealHooks, Draw, TableChance
from p2pcards.games.places import Places, Proof
from p2pcards.games.seats import CHANCE, FULL, SPECTATOR, TERMINAL, Mover, Observer

__all__ = [
    "CHANCE", "FULL", "SPECTATOR", "TERMINAL", "ActionSyntaxError", "ChanceKind", "DealHooks",
    "Draw", "HandState", "IllegalAction", "KnowledgeError", "Mover", "Observer", "Places", "Proof",
    "TableChance", "pick", "reading", "whole_number",
]


class HandState(Places, DealHooks):
    """Base class of every game's deal state: the state tracking (:class:`Places`),
    the hooks (:class:`DealHooks`) and the rules interface below."""

    __slots__ = ()

    game: ClassVar[str]
    team_game: ClassVar[bool] = False
    reward_bound: ClassVar[float] = 1.0
    """A deal's typical largest points margin: :meth:`rewards` maps margins onto [0, 1]."""
    words: ClassVar[Mapping[str, str]] = {}
    """Words a person may type for a word of an action text, lower case (``hearts``
    and ``♥`` for the ``H`` of ``trump H``); the prompt reads them, a hand history
    never holds them."""

    # ------------------------------------------------ interface of every game

    def current_player(self) -> int:
        """The seat to act, CHANCE or TERMINAL (a :data:`Mover`, kept an int for the
        search's protocol and its hot path)."""
        raise NotImplementedError

    def legal_actions(self) -> list[int]:
        raise NotImplementedError

    def check(self, action: int) -> None:
        """Raise :class:`IllegalAction` naming the rule ``action`` breaks, if any."""
        raise NotImplementedError

    def step(self, action: int) -> None:
        """Apply ``action`` without checking it (the search fast path)."""
        raise NotImplementedError

    def is_terminal(self) -> bool:
        raise NotImplementedError

    def points(self) -> list[int]:
        """Points of this deal per unit (team or seat); valid once terminal."""
        raise NotImplementedError

    def hidden_mask(self) -> int:
        """Every card in a hidden place (the whole deck but what lies face up)."""
        raise NotImplementedError

    def _finish_world(self, rng: random.Random) -> None:
        """Complete a determinized world: what only a full state keeps (Pasur's stock order)."""

    def determinize(self, rng: random.Random) -> Self:
        """A full-information world this view cannot tell from the truth (search)."""
        return determinize(self, rng)

    def forced_action(self) -> int | None:
        """An action the table takes for the player to move, who has no choice and
        may not know it (Nullern's blind card); None when the player decides.  A
        game that fills it in declares ``Capabilities.forced_actions``."""
        return None

    def chance_action(self, rng: random.Random) -> int:
        """A chance outcome drawn with ``rng`` (full-information states only).  A game
        in which chance acts declares ``Capabilities.chance``."""
        raise ValueError("no chance event is pending")

    def penalize(self, seat: int, code: str) -> None:
        """End the deal with the game's penalty against ``seat`` (p2pcards/rules/)."""
        raise NotImplementedError

    def parse_action(self, text: str) -> int:
        raise NotImplementedError

    def format_action(self, action: int, seat: int = FULL) -> str:
        """Action text (docs/hand-history.md); for ``seat``, cards it does not see are ``?``."""
        raise NotImplementedError

    # ------------------------------------------------------------ conveniences

    def apply(self, action: int) -> None:
        """Check ``action`` and apply it.

        A view that is still :attr:`awaiting` an observation refuses every
        action: what it knows is incomplete until the table delivers the cards.
        """
        if self.awaiting:
            raise KnowledgeError(f"waiting to observe the cards now in place(s) "
                                 f"{', '.join(map(str, bits(self.awaiting)))}")
        self.check(action)
        self.step(action)

    def is_legal(self, action: int) -> bool:
        try:
            self.check(action)
        except IllegalAction:
            return False
        return True

    def apply_text(self, text: str, actor: int | str | None = None) -> int:
        """Parse ``text`` (acted by ``actor``: a seat or ``"chance"``), check it and apply it."""
        action = self.parse_action(text)
        if actor is not None:
            self.check_actor(actor)
        self.apply(action)
        return action

    def check_actor(self, actor: int | str) -> None:
        player = self.current_player()
        if player == TERMINAL:
            raise IllegalAction("phase", "the deal is over")
        if actor == "chance":
            if player != CHANCE:
                raise IllegalAction("turn", f"it is seat {player}'s turn, not chance's")
        elif actor != player:
            who = "chance" if player == CHANCE else f"seat {player}"
            raise IllegalAction("turn", f"out of turn: it is {who}'s turn, not seat {actor}'s",
                                actor if isinstance(actor, int) else None)

    def unit_of(self, seat: int) -> int:
        """The scoring unit of ``seat``: its team in partnership games, else itself."""
        return seat % 2 if self.team_game else seat

    def returns(self) -> list[float]:
        """Points of the finished deal per seat (a team's points to each partner)."""
        pts = self.points()
        return [float(pts[self.unit_of(s)]) for s in range(self.players)]

    def rewards(self) -> list[float]:
        """Per seat in [0, 1]: 0.5 plus its unit's margin over the other units' mean,
        scaled by :attr:`reward_bound` and clipped (the search's returns)."""
        pts = self.points()
        units = len(pts)
        total = sum(pts)
        scale = 2 * self.reward_bound
        by_unit = [min(1.0, max(0.0, 0.5 + (p - (total - p) / (units - 1)) / scale))
                   for p in pts]
        return [by_unit[self.unit_of(s)] for s in range(self.players)]

    def public_action(self, action: int, seat: int) -> int:
        """What ``seat`` observes of ``action`` (search keys): the action, unless the
        game hides part of it from that seat."""
        return action

    def observation(self, seat: int) -> int:
        """The cards in the places ``seat`` sees (a token for the search)."""
        seen = 0
        for place, cards in enumerate(self.may):
            if self.visible(place, seat):
                seen |= cards << (64 * place)  # keep the places apart
        return seen

    def information_key(self, seat: int) -> int:
        """What ``seat`` knows in this world, as an int (the ``own`` search's key of
        another player's statistics, docs/bots.md): the cards in the places it sees
        (:meth:`observation`: its hand, a Bid Whist bidder's discard), the number of
        moves so far, and what it alone knows of cards it saw leave face down
        (``private``: a Control Nut! HAND victim).

        The public history enters only by its length: every world the search
        compares keys in stands at one node of its tree, which fixes the public
        history, so the length is enough there (two worlds with the same hand at
        different points of a deal differ in it).  Exact (no collisions) but for
        the private part, which is hashed.  Defined on full-information worlds."""
        key = self.observation(seat) << 16 | self.moves
        if self.private:
            mine = sorted((card, where) for (who, card), where in self.private.items()
                          if who == seat)
            if mine:
                key = key << 64 | hash(tuple(mine)) & ((1 << 64) - 1)
        return key

    def sampled_move(self, seat: int, rng: random.Random) -> int | None:
        """A move the search samples rather than branches on (none by default)."""
        return None

    def moves_left(self) -> int | None:
        """The moves to the end of this full-information world when nothing is left to
        chance, else None (the default, and always for a view: the bots' exact
        endgames, docs/bots.md, then leave the game to its rollouts)."""
        return None

    def solve_key(self) -> Hashable:
        """Everything in this state that decides how the deal plays on, hashable (the
        exact endgames' transposition key): every slot but the record of the past
        (:data:`PAST`).  Two states play out alike exactly when their keys are
        equal; a game whose state holds more history adds its names to ``PAST``."""
        return tuple(_frozen(getattr(self, name)) for name in _key_slots(type(self)))

    def candidate_actions(self, rng: random.Random) -> list[int] | None:
        """A short list of sensible actions for the player to move, when the legal
        ones are too many to search (the Bid Whist discard, a Control Nut! bid from
        a long hand): a model proposes, the search chooses.  None: no model."""
        return None

    def rollout(self, rng: random.Random) -> None:
        """Play to the end at random (games replace it with their fast playout)."""
        while not self.is_terminal():
            if self.current_player() == CHANCE:
                self.step(self.chance_action(rng))
            else:
                actions = self.legal_actions()
                self.step(actions[int(rng.random() * len(actions))])


PAST = frozenset({"last_trick", "past", "moves", "proofs", "played_by", "observer"})
"""The slots that record the past and play no part in what follows: left out of
:meth:`HandState.solve_key`."""


_SLOTS: dict[type, tuple[str, ...]] = {}


def _key_slots(cls: type) -> tuple[str, ...]:
    found = _SLOTS.get(cls)
    if found is None:
        names: set[str] = set()
        for klass in cls.__mro__:
            names.update(getattr(klass, "__slots__", ()))
        found = _SLOTS[cls] = tuple(sorted(names - PAST))
    return found


def _frozen(value: object) -> Hashable:
    if isinstance(value, list):
        return tuple([_frozen(v) for v in value]) if value and isinstance(value[0], list | dict) \
            else tuple(value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, set | frozenset):
        return frozenset(value)
    return value  # ints and objects hash as they are


def whole_number(text: str, most: int) -> int | None:
    """``text`` as a number from 0 to ``most`` written in ASCII digits, else None."""
    if not (text.isascii() and text.isdigit()) or len(text) > 3:
        return None
    value = int(text)
    return value if value <= most else None


def pick(mask: int, r: float) -> int:
    """The card of ``mask`` at uniform fraction ``r`` in [0, 1) (random playouts)."""
    k = int(r * mask.bit_count())
    while k:
        mask &= mask - 1
        k -= 1
    return (mask & -mask).bit_length() - 1
