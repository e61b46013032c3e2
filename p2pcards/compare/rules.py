"""What OpenSpiel's ``spades`` and ``hearts`` (2.0.2, default parameters) show a seat.

Pure Python, no OpenSpiel import: the card encodings, the layout of each game's
action history (chance prefix, deal, passes, then the public moves), and what a
seat learns about another seat's hand from each card it sees played under the
game's legality rules (:func:`forbidden`).  A failure to follow suit is the
obvious case; OpenSpiel's rules reveal more:

* spades: OpenSpiel never marks spades broken (``is_spades_broken_`` is never
  set), so a spade may be led only by a hand holding nothing but spades;
* hearts: on the first trick a hand off clubs may play a heart or the queen of
  spades only if it holds nothing else (``no_pts_on_first_trick``), and a heart
  may be led before hearts are broken only from a hand of hearts alone
  (``must_break_hearts``; the queen of spades breaks hearts).

Each such fact is a set of cards the player did not hold when it played, so
does not hold now (hands only shrink once play starts).

What differs between the two games is said by their descriptors (:class:`Rules`:
the trump, the bids, the passing, the penalty points, the first lead, the suit
led only once broken, what OpenSpiel ships for each), so that no module asks
which game it plays.
"""

from __future__ import annotations

from dataclasses import dataclass

PLAYERS = 4
CARDS = 52
HAND = 13
CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
PASS_CARDS = 3
"""Cards each hearts player passes (when the deal's direction is not "no pass")."""


@dataclass(frozen=True, slots=True)
class Rules:
    """One OpenSpiel card game as the adapters, the worlds, the policy and the match
    need it: its encoding, and every fact in which the two games differ."""

    name: str
    prefix: int
    """Chance actions before the deal (hearts draws its pass direction first)."""
    suit_major: bool
    """Card encoding: ``suit * 13 + rank`` (spades) or ``rank * 4 + suit`` (hearts)."""
    partners: bool
    reward_bound: float
    """The margin mapped to the ends of [0, 1] (0.5 + margin / (2 * bound), clipped)."""
    exploration_unit: float
    """OpenSpiel's returns per unit of our [0, 1] reward (its bots' exploration
    constant is ours times this; ``match``)."""
    trump: int | None = None
    """The trump suit, which beats any other (spades: spades); None: no trump."""
    bidding: bool = False
    """Each seat bids its tricks before play (spades: ``CARDS + n`` bids ``n``)."""
    passing: bool = False
    """Each seat passes :data:`PASS_CARDS` cards after the deal, to the seat the first
    chance outcome names (hearts; 0: no passing in that deal)."""
    penalties: bool = False
    """The deal scores penalty points, lower is better: every heart and the queen of
    spades (:meth:`penalty_cards`; hearts' returns are 26 minus them), which may
    not be played on the first trick by a hand holding anything else."""
    first_lead: tuple[int, int] | None = None
    """The card that leads the first trick, as (suit, rank), so that the lead shows
    nothing (hearts: the two of clubs); None: seat 0 leads what it likes."""
    unbroken_lead: int | None = None
    """The suit that may be led only from a hand of it alone until a penalty card is
    played (hearts: hearts; spades: spades, and OpenSpiel never marks them broken)."""
    native_worlds: bool = False
    """The search's worlds of a deal without passing may be :mod:`.fasthearts`'s
    (OpenSpiel's rules in pure Python), not OpenSpiel's own states (hearts)."""
    resampler: bool = False
    """OpenSpiel ships a resampler for its bots' worlds (``ResampleFromInfostate``:
    hearts)."""
    information_state: bool = False
    """OpenSpiel gives an information-state string to key its bots' trees on (hearts);
    else they key on the observation string (spades: the whole auction and play)."""

    def suit(self, card: int) -> int:
        return card // HAND if self.suit_major else card % PLAYERS

    def rank(self, card: int) -> int:
        return card % HAND if self.suit_major else card // PLAYERS

    def card(self, suit: int, rank: int) -> int:
        return suit * HAND + rank if self.suit_major else rank * PLAYERS + suit

    def of_suit(self, suit: int) -> frozenset[int]:
        return frozenset(c for c in range(CARDS) if self.suit(c) == suit)

    def is_card(self, action: int) -> bool:
        return 0 <= action < CARDS

    def penalty_cards(self) -> frozenset[int]:
        """The cards that score penalty points (none but in a game of
        :attr:`penalties`)."""
        return points_cards(self) if self.penalties else frozenset()

    def rewards(self, returns: list[float]) -> list[float]:
        """OpenSpiel's returns as the search's [0, 1] rewards: spades, 0.5 plus the
        team's margin over the other team; hearts, 0.5 plus the seat's margin over
        the mean of the other three (returns are 26 minus penalty points)."""
        scale = 2 * self.reward_bound
        out = []
        for seat in range(PLAYERS):
            if self.partners:
                margin = returns[seat] - returns[(seat + 1) % PLAYERS]
            else:
                margin = returns[seat] - (sum(returns) - returns[seat]) / (PLAYERS - 1)
            out.append(min(1.0, max(0.0, 0.5 + margin / scale)))
        return out


SPADES_RULES = Rules("spades", prefix=0, suit_major=True, partners=True, reward_bound=200.0,
                     exploration_unit=400.0, trump=SPADES, bidding=True, unbroken_lead=SPADES)
"""Bound: a hand's usual team margin (the scores run from -330 to 230).  Exploration
unit: 2 x 200 points of team margin per team point."""
HEARTS_RULES = Rules("hearts", prefix=1, suit_major=False, partners=False, reward_bound=26.0,
                     exploration_unit=39.0, passing=True, penalties=True,
                     first_lead=(CLUBS, 0), unbroken_lead=HEARTS, native_worlds=True,
                     resampler=True, information_state=True)
"""Bound: 26, the widest margin (all the points, or the moon shot), so nothing is clipped.
Exploration unit: 2 x 26 / (4/3) (a point more for one seat is 4/3 of margin over the
others' mean)."""
RULES = {"spades": SPADES_RULES, "hearts": HEARTS_RULES}


def queen_of_spades(rules: Rules) -> int:
    return rules.card(SPADES, 10)


def points_cards(rules: Rules) -> frozenset[int]:
    """Hearts' penalty cards: every heart and the queen of spades."""
    return rules.of_suit(HEARTS) | {queen_of_spades(rules)}


def forbidden(rules: Rules, plays: list[tuple[int, int]]) -> list[set[int]]:
    """Per seat, the cards it cannot hold now, from the cards played so far
    (``plays``: (seat, card) in order, four to a trick): a suit not followed; the
    :attr:`~Rules.unbroken_lead` led before it is broken (but for a forced first
    lead); a penalty card on the first trick."""
    out: list[set[int]] = [set() for _ in range(PLAYERS)]
    every = frozenset(range(CARDS))
    broken = False
    points = rules.penalty_cards()
    forced = rules.first_lead is not None
    led = -1
    for index, (seat, card) in enumerate(plays):
        position = index % PLAYERS
        suit = rules.suit(card)
        if position == 0:
            led = suit
            if suit == rules.unbroken_lead and not broken and not (index == 0 and forced):
                out[seat] |= every - rules.of_suit(suit)
        elif suit != led:
            out[seat] |= rules.of_suit(led)
            if index < PLAYERS and card in points:
                out[seat] |= every - points
        if card in points:
            broken = True
    return out
