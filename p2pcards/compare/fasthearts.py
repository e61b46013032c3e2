"""OpenSpiel's ``hearts`` (2.0.2, default parameters) once the cards are dealt and no
cards are passed, in pure Python: the search's worlds without OpenSpiel.

A :class:`HeartsWorld` is the play phase of OpenSpiel's ``HeartsState`` kept in ints:
each hand a bitmask over OpenSpiel's card numbers (``rank * 4 + suit``, so actions map
one to one), the trick under way as its led suit, winning rank, winner and points, the
points taken, whether hearts are broken, and the moves made (for
:meth:`~HeartsWorld.information_key`).  Its rules are ``HeartsState::PlayLegalActions``,
``ApplyPlayAction`` and ``ComputeScore`` with OpenSpiel's defaults
(``pyspiel.load_game("hearts").get_parameters()``): the two of clubs leads the first
trick; no heart or queen of spades on the first trick unless the hand holds nothing
else (``no_pts_on_first_trick``); no heart led before hearts are broken unless the hand
holds only hearts (``must_break_hearts``), the queen of spades breaking them
(``qs_breaks_hearts``); no jack of diamonds bonus, no bonus for taking no trick, no
other club led first, and no exception for a hand of hearts and the queen of spades.
Each heart is a point, the queen 13; a player who takes all 26 scores 0 and every other
player 26 (shooting the moon); OpenSpiel's returns are 26 minus the points.

Legal moves come in OpenSpiel's order (ascending card numbers), and the rollouts --
uniformly random, or :mod:`policy`'s hearts play -- draw from the random generator
exactly as the OpenSpiel-state rollouts of :mod:`adapters` do, so that the same
generator plays the same moves in both.  tests/compare proves the model equal to
OpenSpiel move by move.
"""

from __future__ import annotations

import random
from typing import Self

from .policy import EPSILON
from .rules import CARDS, HEARTS, HEARTS_RULES, PLAYERS, SPADES
from .seen import key_of
from .worlds import Worlds

SUIT_MASKS = tuple(sum(1 << (rank * 4 + suit) for rank in range(13)) for suit in range(4))
RANK_MASKS = tuple(0xF << (rank * 4) for rank in range(13))
HEART_MASK = SUIT_MASKS[HEARTS]
QUEEN = 10 * 4 + SPADES
"""The queen of spades (OpenSpiel's ``Card(kSpades, 10)``)."""
QUEEN_BIT = 1 << QUEEN
POINTS_MASK = HEART_MASK | QUEEN_BIT
NOT_POINTS = ((1 << CARDS) - 1) & ~POINTS_MASK
NOT_HEARTS = ((1 << CARDS) - 1) & ~HEART_MASK
SAFE_LEADS = NOT_HEARTS & ~sum(1 << (rank * 4 + SPADES) for rank in (10, 11, 12))
"""The policy's leads: neither a heart nor the queen, king or ace of spades."""
CARD_POINTS = tuple(1 if card % 4 == HEARTS else 13 if card == QUEEN else 0
                    for card in range(CARDS))
BITS = tuple(1 << card for card in range(CARDS))
MOON = 26
TERMINAL = -4
"""OpenSpiel's ``kTerminalPlayerId``: the player to act once the deal is over."""


def cards_of(mask: int) -> list[int]:
    """The cards of ``mask``, ascending (OpenSpiel's order of legal actions)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def policy_card(legal: int, lead: bool, led: int, top: int) -> int:
    """:mod:`policy`'s hearts card among ``legal`` (a mask); ``led``
    and ``top``: the suit led and the rank winning the trick (when not ``lead``).
    The same choice as ``policy._hearts_play`` on OpenSpiel's ordered list: its ``min``
    and ``max`` keep the first of equal ranks, the lowest card number."""
    if not legal & (legal - 1):  # (one card)
        return legal.bit_length() - 1
    if lead:
        safe = legal & SAFE_LEADS
        low = safe or legal
        return (low & -low).bit_length() - 1
    if legal & SUIT_MASKS[led]:  # following suit (a hand that can may play only that)
        under = legal & ((1 << (top * 4)) - 1)
        if under:
            return under.bit_length() - 1
        rest = (legal & ~QUEEN_BIT) or legal
        return rest.bit_length() - 1
    if legal & QUEEN_BIT:
        return QUEEN
    hearts = legal & HEART_MASK
    if hearts:
        return hearts.bit_length() - 1
    same = legal & RANK_MASKS[(legal.bit_length() - 1) >> 2]
    return (same & -same).bit_length() - 1


class HeartsWorld:
    """A hearts deal in play, every hand known (the search's world)."""

    __slots__ = ("broken", "count", "hands", "led", "moves", "player", "points", "rollouts",
                 "top", "trick_points", "winner")
    players = PLAYERS
    rules = HEARTS_RULES

    def __init__(self, hands: list[int], rollouts: str = "random"):
        """The deal before the first card: seat ``s`` holds the cards of ``hands[s]``."""
        self.hands = list(hands)
        self.count = 0
        self.led = self.top = self.winner = self.trick_points = -1
        self.broken = False
        self.points = [0] * PLAYERS
        self.moves: list[int] = []
        """Each card played as ``player << 6 | card``."""
        self.rollouts = rollouts
        holder = [s for s in range(PLAYERS) if hands[s] & 1]
        self.player = holder[0] if holder else 0  # the two of clubs leads

    # -- the protocol -------------------------------------------------------------

    def current_player(self) -> int:
        return self.player

    def legal_mask(self) -> int:
        """``PlayLegalActions`` as a mask."""
        hand = self.hands[self.player]
        count = self.count
        if count & 3:
            follow = hand & SUIT_MASKS[self.led]
            if follow:
                return follow
            if count < PLAYERS:
                return (hand & NOT_POINTS) or hand
            return hand
        if count == 0:
            return 1  # the two of clubs
        return hand if self.broken else (hand & NOT_HEARTS) or hand

    def legal_actions(self) -> list[int]:
        if self.player < 0:
            return []
        return cards_of(self.legal_mask())

    def step(self, action: int) -> None:
        player = self.player
        self.hands[player] &= ~(1 << action)
        suit, rank = action & 3, action >> 2
        if self.count & 3 == 0:
            self.led, self.top, self.winner = suit, rank, player
            self.trick_points = CARD_POINTS[action]
        else:
            self.trick_points += CARD_POINTS[action]
            if suit == self.led and rank > self.top:
                self.top, self.winner = rank, player
        if suit == HEARTS or action == QUEEN:
            self.broken = True
        self.moves.append(player << 6 | action)
        self.count += 1
        if self.count & 3:
            self.player = (player + 1) & 3
            return
        self.player = self.winner
        self.points[self.winner] += self.trick_points
        if self.count == CARDS:
            self.player = TERMINAL
            if MOON in self.points:  # one player took every point: it shot the moon
                self.points = [0 if p == MOON else MOON for p in self.points]

    def clone(self) -> Self:
        copy = object.__new__(type(self))
        copy.hands = self.hands[:]
        copy.points = self.points[:]
        copy.moves = self.moves[:]
        copy.count, copy.player, copy.broken = self.count, self.player, self.broken
        copy.led, copy.top, copy.winner = self.led, self.top, self.winner
        copy.trick_points, copy.rollouts = self.trick_points, self.rollouts
        return copy

    def is_terminal(self) -> bool:
        return self.count == CARDS

    def returns(self) -> list[float]:
        """OpenSpiel's returns: 26 minus each player's points (zeros before the end)."""
        if self.count < CARDS:
            return [0.0] * PLAYERS
        return [float(MOON - p) for p in self.points]

    def rewards(self) -> list[float]:
        return self.rules.rewards(self.returns())

    def chance_action(self, rng: random.Random) -> int:
        raise TypeError("a hearts world in play has no chance node")

    def public_action(self, action: int, seat: int) -> int:
        return action  # without passing, every card is played face up

    def sampled_move(self, seat: int, rng: random.Random) -> int | None:
        return None

    def observation(self, seat: int) -> int:
        return 0  # nothing is passed: no seat learns anything privately in play

    def history(self) -> list[int]:
        """The OpenSpiel action history of this world: no pass, the deal (each seat's
        cards ascending, card ``i`` to seat ``i % 4``), the cards played."""
        dealt = [cards_of(hand) for hand in self.hands]
        for move in self.moves:
            dealt[move >> 6].append(move & 63)
        ordered = [sorted(cards) for cards in dealt]
        deal = [ordered[i % PLAYERS][i // PLAYERS] for i in range(CARDS)]
        return [0, *deal, *(move & 63 for move in self.moves)]

    def information_key(self, seat: int) -> int:
        """``Seen.key()`` of ``seat``'s view of this deal (its hand and every move)."""
        moves = tuple((m >> 6, m & 63) for m in self.moves)
        return key_of(self.rules, seat, prefix=(0,), holding=tuple(cards_of(self.hands[seat])),
                      passes=(), received=None, pass_counts=(0,) * PLAYERS, moves=moves)

    # -- what the exact endgames ask (p2pcards.ai.endgame) ---------------------------

    def moves_left(self) -> int:
        """The cards still to play: every card of the world is known, and no chance
        event is left in hearts' play."""
        return CARDS - self.count

    def solve_key(self) -> tuple[object, ...]:
        """What decides the rest of the deal: the hands, the trick under way (its size,
        the player to act, the suit led, the winning rank and seat, its points), whether
        hearts are broken and the points taken (the moon: a player who has taken every
        point so far may still take all 26)."""
        return (tuple(self.hands), self.count & 3, self.player, self.led, self.top,
                self.winner, self.trick_points, self.broken, tuple(self.points))

    def unit_of(self, seat: int) -> int:
        """Each seat scores for itself."""
        return seat

    def rollout(self, rng: random.Random) -> None:
        """To the end: uniformly random legal moves, or the policy's (a tenth random).
        :meth:`legal_mask` and :meth:`step` inlined (this is the search's inner loop)."""
        if self.count == CARDS:
            return
        hands, points, moves = self.hands, self.points, self.moves
        count, player, broken = self.count, self.player, self.broken
        led, top, winner, taken = self.led, self.top, self.winner, self.trick_points
        draw = rng.random
        policy = self.rollouts == "policy"
        while count < CARDS:
            hand = hands[player]
            position = count & 3
            if position:  # the legal cards, as in legal_mask
                legal = hand & SUIT_MASKS[led]
                if not legal:
                    legal = ((hand & NOT_POINTS) or hand) if count < PLAYERS else hand
            elif count:
                legal = hand if broken else (hand & NOT_HEARTS) or hand
            else:
                legal = 1
            if policy and (not legal & (legal - 1) or draw() >= EPSILON):
                card = policy_card(legal, not position, led, top)
            else:  # (a uniformly random card: the n-th of the mask)
                for _ in range(int(draw() * legal.bit_count())):
                    legal &= legal - 1
                card = (legal & -legal).bit_length() - 1
            hands[player] = hand ^ BITS[card]  # the card played, as in step
            worth = CARD_POINTS[card]
            if position:
                taken += worth
                if card & 3 == led and card >> 2 > top:
                    top, winner = card >> 2, player
            else:
                led, top, winner, taken = card & 3, card >> 2, player, worth
            if worth:  # a heart or the queen of spades: hearts are broken
                broken = True
            moves.append(player << 6 | card)
            count += 1
            if count & 3:
                player = (player + 1) & 3
            else:
                player = winner
                points[winner] += taken
        self.count, self.broken = count, broken
        self.led, self.top, self.winner, self.trick_points = led, top, winner, taken
        self.player = TERMINAL
        if MOON in points:
            self.points = [0 if p == MOON else MOON for p in points]


class NativeDeals:
    """Native worlds of one view of a hearts deal without passing: the public play is
    replayed once, and each world is that with the other hands ``worlds`` deals (the
    generator used as by :meth:`worlds.Worlds.hands`, so the pyspiel worlds drawn with
    the same generator hold the same cards)."""

    def __init__(self, worlds: Worlds, rollouts: str):
        seen = worlds.seen
        if not seen.rules.native_worlds or seen.pass_dir != 0:
            raise ValueError("native worlds are for hearts without passing")
        public = HeartsWorld([0] * PLAYERS, rollouts)
        for player, card in seen.moves:
            public.player = player
            public.step(card)
        self.public = public
        self.deal = worlds.dealer.deal
        self.seat = seen.seat
        self.others = worlds.others
        self.own = sum(BITS[card] for card in seen.holding())

    def world(self, rng: random.Random) -> HeartsWorld:
        """One world: the view's own hand, the others' drawn."""
        world = self.public.clone()
        masks = world.hands
        masks[self.seat] = self.own
        for player, cards in zip(self.others, self.deal(rng), strict=True):
            mask = 0
            for card in cards:
                mask |= BITS[card]
            masks[player] = mask
        if world.count == 0:
            world.player = next(s for s in range(PLAYERS) if masks[s] & 1)
        return world
