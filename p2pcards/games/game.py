"""What each game module declares besides its deal state: deck, options, deal, match rules.

A :class:`Game` is a stateless descriptor (one instance per game, registered
in :data:`p2pcards.games.GAMES` by :func:`p2pcards.games.register`).  Its deal
states are :class:`HandState` subclasses.  The match (several deals, running
totals, the dealer, the winner) is run by whoever holds the table (the local
table, each peer's table session) through the hooks here; every fact about
one game that the rest of the program needs is a hook of its descriptor or of
its state class, so that nothing outside the game's module names the game.
Which hooks with no default it fills in, a game declares
(:attr:`Game.capabilities`), and nothing asks its classes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from p2pcards.games.capabilities import Capabilities, mismatches
from p2pcards.games.cards import Notation
from p2pcards.games.core import FULL, HandState


class OptionError(ValueError):
    """A table option that is unknown or out of range; the message names it."""


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One table option (p2pcards/rules/): its default and the values allowed."""

    default: int
    choices: tuple[int, ...] = ()
    minimum: int = 1
    maximum: int = 100_000
    help: str = ""


@dataclass(frozen=True, slots=True)
class DealSetup:
    """Everything a deal depends on besides its cards: the game, the seats, the table
    options, the dealer and the deal's place in the match (``number``: the deals
    scored before it; Nullern's round size depends on it)."""

    game: Game
    players: int
    options: Mapping[str, int]
    dealer: int
    number: int = 0

    def deal(self, deck: Sequence[int | None], observer: int = FULL) -> HandState:
        """The state after dealing ``deck`` (None where ``observer`` does not see a card)."""
        return self.game.deal(deck, self.dealer, self.players, self.options,
                              observer=observer, number=self.number)

    def observed_deck(self, deck: Sequence[int], seat: int) -> list[int | None]:
        """``deck`` as ``seat`` sees it at the deal (None where it does not)."""
        return self.game.observed_deck(deck, self.dealer, self.players, self.options, seat,
                                       number=self.number)


class Game:
    """Descriptor of one game; subclasses fill in the class attributes and hooks."""

    name: str = ""
    title: str = ""
    brief: str = ""
    """The rules in a few lines, for ``help rules`` (the full rules: p2pcards/rules/)."""
    moves_help: str = ""
    """Examples of the game's moves as typed, and its card notation (``help moves``)."""
    notation: Notation
    units: str = "seats"  # "teams" or "seats"
    player_counts: tuple[int, ...] = (4,)
    default_players: int = 4
    options: Mapping[str, OptionSpec] = {}
    capabilities: Capabilities = Capabilities()
    """What its deals and this descriptor fill in beyond what every game has: which
    cards an action shows, chance and how a table makes it, ... (:class:`Capabilities`)."""
    numbered_deals: int = 1
    """How many places in a match deal differently (Nullern's 20 rounds of different
    sizes); 1 when a deal does not depend on its place."""
    representative_deal: int = 0
    """The place in the match of a typical deal (the benchmarks play it)."""
    bench_players: tuple[int, ...] = ()
    """The player counts ``p2pcards bench engines`` measures (none: the default)."""
    split_search: bool = True
    """Whether a searching bot's default move may spread its second of search over two
    processes (two trees of half a second each, half the wait).  False where the arena
    found the two trees weaker than one (docs/benchmarks.md, "Strength: two processes
    against one"): the bots then search one tree for the whole second."""

    # -------------------------------------------------------------- options

    def resolve_options(self, given: Mapping[str, object]) -> dict[str, int]:
        """Defaults filled in; :class:`OptionError` naming any bad option."""
        resolved = {k: spec.default for k, spec in self.options.items()}
        for key, value in given.items():
            spec = self.options.get(key)
            if spec is None:
                known = ", ".join(sorted(self.options)) or "none"
                raise OptionError(f"unknown {self.name} option {key!r} (options: {known})")
            if isinstance(value, bool) or not isinstance(value, int):
                raise OptionError(f"option {key!r} must be a whole number, not {value!r}")
            if spec.choices and value not in spec.choices:
                allowed = " or ".join(str(c) for c in spec.choices)
                raise OptionError(f"option {key!r} must be {allowed}, not {value}")
            if not spec.minimum <= value <= spec.maximum:
                raise OptionError(
                    f"option {key!r} must be from {spec.minimum} to {spec.maximum}, not {value}")
            resolved[key] = value
        return resolved

    def non_default(self, options: Mapping[str, int]) -> dict[str, int]:
        """The options that differ from the defaults (what a hand history records)."""
        return {k: v for k, v in options.items() if self.options[k].default != v}

    def check_capabilities(self) -> None:
        """Raise ``ValueError`` where :attr:`capabilities` and the hooks this game fills
        in part (:func:`~p2pcards.games.capabilities.mismatches`): its deal states'
        class is read off a deal of :meth:`blank_deck`."""
        players, options = self.default_players, self.resolve_options({})
        deals = type(self.deal(self.blank_deck(players, options), 0, players, options))
        problems = mismatches(self.capabilities, deals, HandState, type(self), Game)
        if problems:
            raise ValueError(f"{self.title or self.name} does not do what it declares: "
                             + "; ".join(problems))

    def check_players(self, players: int) -> None:
        if players not in self.player_counts:
            counts = ", ".join(str(n) for n in self.player_counts)
            raise OptionError(f"{self.title} is played by {counts} players, not {players}")

    # ----------------------------------------------------------------- deals

    def deck(self, players: int, options: Mapping[str, int]) -> list[int]:
        """The cards of one deal's deck (a hand history's ``deck``), in id order."""
        raise NotImplementedError

    def deal(self, deck: Sequence[int | None], dealer: int, players: int,
             options: Mapping[str, int], *, observer: int = FULL, number: int = 0
             ) -> HandState:
        """The state after dealing ``deck`` (None where ``observer`` does not see the card).

        ``number`` counts the deals of the match already scored (void deals
        not counted): Nullern's round size depends on it.
        """
        raise NotImplementedError

    def observed_deck(self, deck: Sequence[int], dealer: int, players: int,
                      options: Mapping[str, int], seat: int, *,
                      number: int = 0) -> list[int | None]:
        """``deck`` with the positions ``seat`` does not see at the deal replaced by None."""
        raise NotImplementedError

    def void_reason(self, deck: Sequence[int], players: int) -> str | None:
        """Why the rules void a deal of ``deck`` before any action (Pasur's jacks), or
        None; the state dealt says the same (:attr:`HandState.void_reason`)."""
        return None

    def is_void_deal(self, deck: Sequence[int], players: int) -> bool:
        """Whether the rules void a deal of ``deck`` before any action."""
        return self.void_reason(deck, players) is not None

    def cards_change_mapping(self, deck: Sequence[int | None], players: int) -> bool:
        """Whether the cards of ``deck`` change where the deal puts its positions (a
        Pasur jack in the opening pool is put back and replaced); the secure table
        reads the mapping off a deck for which this is False."""
        return False

    def blank_deck(self, players: int, options: Mapping[str, int]) -> list[int]:
        """The deck's cards in an order in which no card changes where the deal puts
        its positions (the first rotation of the id order that does not): the deal
        mapping is read off it, and a record whose cards are unknown deals it."""
        ids = self.deck(players, options)
        for turn in range(len(ids)):
            order = ids[turn:] + ids[:turn]
            if not self.cards_change_mapping(order, players):
                return order
        return ids

    def shown_after_deal(self, observed: Sequence[int | None], players: int) -> list[int]:
        """Deck positions that every seat must see before the deal can be made, once
        the positions shown at the deal are seen (``observed``, None where unseen):
        Pasur's replacement for a lone jack in the opening pool."""
        return []

    def bench_position(self, rng: random.Random) -> tuple[str, HandState] | None:
        """A fixed position for ``p2pcards bench ai``: its name and the view of the
        player to move, dealt from ``rng`` (None: the game has none)."""
        return None

    def shuffled_deck(self, players: int, options: Mapping[str, int],
                      rng: random.Random) -> list[int]:
        deck = self.deck(players, options)
        rng.shuffle(deck)
        return deck

    # ---------------------------------------------------------------- match

    def first_dealer(self, players: int, rng: random.Random) -> int:
        return rng.randrange(players)

    def next_dealer(self, dealer: int, players: int, void: bool) -> int:
        """The dealer of the next deal: the same after a void deal, else the next seat."""
        return dealer if void else (dealer + 1) % players

    def unit_count(self, players: int) -> int:
        return 2 if self.units == "teams" else players

    def winner(self, totals: Sequence[int], deals: int,
               options: Mapping[str, int]) -> int | list[int] | None:
        """The unit that has won after these totals (a list for a shared win), or None."""
        raise NotImplementedError

    def unit_name(self, unit: int, names: Sequence[str]) -> str:
        if self.units == "teams":
            return f"team {unit} ({names[unit]} & {names[unit + 2]})"
        return names[unit]


def random_position(game: Game, players: int, rng: random.Random,
                    stop: Callable[[HandState, int], bool]) -> HandState:
    """The view of the player to move after random play (``stop(state, moves)`` says
    when) from a deal of ``game`` that counts, dealt by seat 0 from ``rng``."""
    options = game.resolve_options({})
    deck = game.shuffled_deck(players, options, rng)
    while game.is_void_deal(deck, players):
        deck = game.shuffled_deck(players, options, rng)
    state = game.deal(deck, 0, players, options)
    moves = 0
    while not stop(state, moves):
        actions = state.legal_actions()
        seat = state.current_player()
        state.apply(state.chance_action(rng) if seat < 0 else actions[rng.randrange(
            len(actions))])
        moves += 1
    return state.view(state.current_player())


def highest_unique(totals: Sequence[int]) -> int | None:
    """Index of the strictly highest total, None on a tie for highest."""
    best = max(totals)
    leaders = [i for i, t in enumerate(totals) if t == best]
    return leaders[0] if len(leaders) == 1 else None
