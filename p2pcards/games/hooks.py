"""What the rest of the program asks of a deal beyond its rules: the hooks.

A table, a screen, the benchmarks and the arena ask a deal a few questions that
the rules themselves never need: which cards an action shows, how a table
without a dealer makes a chance event, how a person types a move, what the
table looks like.  :class:`DealHooks` holds them apart from the state tracking
(:class:`~p2pcards.games.places.Places`) and the rules
(:class:`~p2pcards.games.core.HandState`, which takes both); its docstring lists
them with their defaults.  A hook with no default that a game may leave out, it
declares on its descriptor when it fills it in
(:class:`~p2pcards.games.capabilities.Capabilities`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar, Protocol, Self

from p2pcards.games.cards import Notation
from p2pcards.games.display import Row, dim
from p2pcards.games.seats import Observer


class ChanceKind(Enum):
    """How a table without a dealer makes a chance event (:meth:`DealHooks.table_chance`)."""

    DRAW = "draw"
    """A public outcome drawn by joint randomness (Control Nut!'s controls, the
    auction card): :meth:`DealHooks.drawn_chance`."""
    TAKE = "take"
    """One hidden card, picked at random, moves face down from one hidden place to
    another (Control Nut!'s HAND): :meth:`DealHooks.taken_chance`."""
    RESHUFFLE = "reshuffle"
    """A hidden place is shuffled in secret (Pasur's stock after an opening jack):
    :meth:`DealHooks.reshuffled_chance`."""


@dataclass(frozen=True, slots=True)
class TableChance:
    """A pending chance event: its kind, and the hidden places it concerns (TAKE:
    ``source`` to ``target``; RESHUFFLE: ``source``)."""

    kind: ChanceKind
    source: int = -1
    target: int = -1


class Draw(Protocol):
    """Joint randomness as a chance event sees it: uniform numbers from one seed."""

    def choice(self, n: int) -> int:
        """A uniform number in range(n)."""
        ...

    def sample(self, n: int, k: int) -> list[int]:
        """``k`` distinct uniform numbers of range(n), in the order drawn."""
        ...


class DealHooks:
    """The questions a table, a screen, the benchmarks and the arena ask of a deal,
    each with its default (a game's state class overrides what it needs).

    The table:

    * :meth:`shown_cards`: the cards an action shows to everyone (no default;
      declared: ``Capabilities.shown_cards``);
    * :meth:`face_down`: the cards an action moves face down from its mover's hand
      (default: none; declared: ``Capabilities.face_down``);
    * :attr:`void_reason`: why the rules void this deal as dealt (default None;
      declared: ``Capabilities.void_deals``);
    * :meth:`table_chance`: the pending chance event of a table without a dealer,
      made by :meth:`drawn_chance`, :meth:`taken_chance` or
      :meth:`reshuffled_chance` by its kind (default: none is pending; declared,
      with the kinds: ``Capabilities.table_chance``).

    A person:

    * :meth:`multi_card_rule`: how many cards of the observer's hand a move may
      name, and which (default: any of them);
    * :meth:`shorthand`: what short input stands for (default: a card alone is
      ``play`` it);
    * :meth:`table_rows`, :meth:`last_trick_row`, :meth:`phase_name`: the table in
      rows of words and cards (default: none), the previous trick (default: "this
      game has no tricks"), the phase (default: ``play``);
    * :meth:`summary`, :meth:`detail` (no default), :meth:`narrate` (default: no
      lines): the deal in words, for people and for ``replay --json``.

    The arena and the benchmarks:

    * :meth:`exact_bids`: per seat, whether its bid was met exactly (no default;
      declared: ``Capabilities.exact_bids``);
    * :meth:`card_plays`: cards played so far (default: the moves);
    * :meth:`random_action`: a uniformly random legal action (default: one of
      :meth:`legal_actions`).

    The hooks read a few fields of the state tracking (declared here for them);
    they change nothing.
    """

    __slots__ = ()

    notation: ClassVar[Notation]
    may: list[int]
    observer: Observer
    moves: int

    def legal_actions(self) -> list[int]:
        raise NotImplementedError

    # ------------------------------------------- what a table needs of a deal

    def shown_cards(self, action: int) -> list[int]:
        """The cards ``action`` shows to everyone (a card played, a bid of cards);
        the secure table opens them.  A face-down card is not shown."""
        raise NotImplementedError

    def face_down(self, action: int) -> list[int | None]:
        """The cards ``action`` moves face down from its mover's hand to a place the
        others do not see (a Bid Whist discard), each None where this observer does
        not know it; the secure table names their slots."""
        return []

    @property
    def void_reason(self) -> str | None:
        """Why the rules void this deal as dealt (None: it counts)."""
        return None

    def table_chance(self) -> TableChance:
        """What the pending chance event is, for a table that draws it jointly
        (:class:`TableChance`); only asked when :meth:`current_player` is CHANCE."""
        raise ValueError("no chance event is pending")

    def drawn_chance(self, draw: Draw) -> int:
        """The public chance action a joint draw makes (:data:`ChanceKind.DRAW`)."""
        raise ValueError("no public draw is pending")

    def taken_chance(self, card: int | None) -> int:
        """The chance action of :data:`ChanceKind.TAKE`: the card taken (None for a
        seat that does not see it)."""
        raise ValueError("no card is taken here")

    def reshuffled_chance(self) -> int:
        """The chance action of :data:`ChanceKind.RESHUFFLE` as a seat takes it (the
        new order unseen)."""
        raise ValueError("no reshuffle is pending")

    # -------------------------------------------------- what a person needs

    def multi_card_rule(self) -> tuple[int, int]:
        """For a move naming several cards of the observer's hand (a discard, a bid
        of cards): (at most how many it names, the cards it may name)."""
        hand = self.may[self.observer]
        return hand.bit_count(), hand

    def shorthand(self, text: str) -> str | None:
        """The full action text that short input stands for, or None: input that
        starts with a card means ``play`` (``QH``, ``7H take 2C 2D``)."""
        words = text.split()
        if not words:
            return None
        try:
            self.notation.parse(words[0])
        except ValueError:
            return None
        return "play " + " ".join(words)

    def trump_groups(self) -> tuple[int, ...]:
        """The groups of cards (:meth:`Notation.group`) a hand shows first, in order:
        the trumps once they are known (none by default)."""
        return ()

    def table_rows(self, names: Sequence[str]) -> list[Row]:
        """The table as this observer knows it, beyond :meth:`summary`: the trick,
        the bids, the pool (:mod:`p2pcards.games.display`)."""
        return []

    def last_trick_row(self, names: Sequence[str]) -> Row:
        """The previous trick and who won it."""
        return dim("this game has no tricks")

    def phase_name(self) -> str:
        """The phase of the deal in a word or two (the screen's status line)."""
        return "play"

    def exact_bids(self) -> list[bool]:
        """Per seat, whether its bid was met exactly (a finished deal of a game that
        declares :attr:`~p2pcards.games.capabilities.Capabilities.exact_bids`)."""
        raise ValueError("this game has no exact bids")

    def card_plays(self) -> int:
        """Cards played so far (the benchmarks count plays per second)."""
        return self.moves

    def random_action(self, rng: random.Random) -> int:
        """A uniformly random legal action, drawn without listing them all where
        they are too many (a Bid Whist discard)."""
        actions = self.legal_actions()
        return actions[int(rng.random() * len(actions))]

    # ------------------------------------------------------- text for people

    def summary(self, names: Sequence[str]) -> str:
        """One line on the deal for people: contract or captures, and the points."""
        raise NotImplementedError

    def detail(self) -> dict[str, object]:
        """Game-specific facts about the finished deal, for ``replay --json``."""
        raise NotImplementedError

    def narrate(self, before: Self, action: int, names: Sequence[str]) -> list[str]:
        """Lines on what ``action`` caused beyond itself (a trick won, cards dealt)."""
        return []
