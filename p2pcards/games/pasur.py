"""Pasur (p2pcards/rules/pasur.md): captures that sum to eleven, surs, game to 62.

2 to 4 seats, each for itself.  Hidden places: the hands and the stock; the
pool and the capture piles are public.

Action codes: ``card | take << 6`` plays ``card`` and captures the pool cards
of mask ``take`` (``take == 0``: the card is added to the pool).  The chance
action after an opening-pool jack is ``stock_code(order)`` (the new stock
order, next card first) or ``STOCK_UNKNOWN`` where the order is not seen.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from functools import cache
from itertools import combinations
from math import comb

from p2pcards.games.capabilities import Capabilities
from p2pcards.games.cards import STANDARD, bits, mask_of
from p2pcards.games.core import (
    CHANCE,
    FULL,
    TERMINAL,
    ActionSyntaxError,
    ChanceKind,
    HandState,
    IllegalAction,
    TableChance,
    pick,
    reading,
)
from p2pcards.games.display import Cards, Piece, Row, Styled, dim
from p2pcards.games.game import Game, OptionSpec, highest_unique, random_position

CHANCE_STOCK, PLAY, DONE, VOID = range(4)
STOCK_UNKNOWN = -1
VOID_REASON = "jacks in the opening pool"
"""Why the rules void a deal (p2pcards/rules/pasur.md)."""

DECK_MASK = (1 << 52) - 1
JACK, QUEEN, KING, ACE = 9, 10, 11, 12
RANK_MASKS = [sum(1 << (s * 13 + r) for s in range(4)) for r in range(13)]
JACKS, QUEENS, KINGS, ACES = (RANK_MASKS[r] for r in (JACK, QUEEN, KING, ACE))
NUMBERS = DECK_MASK & ~(JACKS | QUEENS | KINGS)
CLUBS = ((1 << 13) - 1) << 39
TEN_OF_DIAMONDS = STANDARD.parse("TD")
TWO_OF_CLUBS = STANDARD.parse("2C")
VALUE = [1 if c % 13 == ACE else (c % 13 + 2 if c % 13 <= 8 else 0) for c in range(52)]

# Number captures work on the multiset of pool *values* first: which values (and
# how many of each) add up to a target depends only on the value counts, which
# repeat far more often than the pool cards themselves.  A key packs the count
# of each value 1..10 in 3 bits; the state keeps its pool's key up to date.
VALUE_KEY = [1 << 3 * (VALUE[c] - 1) if VALUE[c] else 0 for c in range(52)]
VALUE_MASKS = [0] + [sum(1 << c for c in range(52) if VALUE[c] == v) for v in range(1, 11)]
Combo = tuple[tuple[int, int], ...]


def values_key(cards: int) -> int:
    """The packed value counts of the number cards among ``cards``."""
    key = 0
    for card in bits(cards & NUMBERS):
        key += VALUE_KEY[card]
    return key


class _Sums:
    """For one multiset of pool values: per target 1..10 the value combinations
    that reach it (``(value, how many)`` pairs) and how many card subsets they make."""

    __slots__ = ("combos", "counts", "ways")

    def __init__(self, key: int):
        have = [0] + [(key >> 3 * (v - 1)) & 7 for v in range(1, 11)]
        combos: list[list[Combo]] = [[] for _ in range(11)]
        ways_of: list[list[int]] = [[] for _ in range(11)]
        counts = [0] * 11

        def walk(value: int, total: int, chosen: Combo, ways: int) -> None:
            if value > 10:
                if chosen:
                    combos[total].append(chosen)
                    ways_of[total].append(ways)
                    counts[total] += ways
                return
            for k in range(have[value] + 1):
                if total + k * value > 10:
                    break
                walk(value + 1, total + k * value, (*chosen, (value, k)) if k else chosen,
                     ways * comb(have[value], k))

        walk(1, 0, (), 1)
        self.combos: tuple[tuple[Combo, ...], ...] = tuple(tuple(c) for c in combos)
        self.counts: tuple[int, ...] = tuple(counts)
        self.ways: tuple[tuple[int, ...], ...] = tuple(tuple(w) for w in ways_of)


_SUMS: dict[int, _Sums] = {}


def sums_for(key: int) -> _Sums:
    found = _SUMS.get(key)
    if found is None:
        if len(_SUMS) > 100_000:
            _SUMS.clear()
        found = _SUMS[key] = _Sums(key)
    return found


def _choices(pool: int, value: int, k: int) -> list[int]:
    """The ways to take ``k`` pool cards of ``value``, as masks."""
    of_value = pool & VALUE_MASKS[value]
    if k == of_value.bit_count():
        return [of_value]
    if k == 1:
        singles = []
        while of_value:
            low = of_value & -of_value
            singles.append(low)
            of_value ^= low
        return singles
    return [mask_of(chosen) for chosen in combinations(bits(of_value), k)]


def expand(combo: Combo, pool: int) -> list[int]:
    """Every capture (card mask) of ``pool`` matching a value combination."""
    masks = [0]
    for value, k in combo:
        options = _choices(pool, value, k)
        masks = [m | o for m in masks for o in options]
    return masks


def nth_capture(sums: _Sums, target: int, pool: int, index: int) -> int:
    """The ``index``-th capture reaching ``target``, in :func:`expand` order, listing none."""
    all_ways = sums.ways[target]
    for i, combo in enumerate(sums.combos[target]):
        ways = all_ways[i]
        if index >= ways:
            index -= ways
            continue
        take = 0
        for value, k in reversed(combo):
            options = _choices(pool, value, k)
            index, at = divmod(index, len(options))
            take |= options[at]
        return take
    raise IndexError("capture index out of range")


def number_captures(card: int, pool: int, key: int) -> list[int]:
    out: list[int] = []
    for combo in sums_for(key).combos[11 - VALUE[card]]:
        out += expand(combo, pool)
    return out


def captures(card: int, pool: int) -> list[int]:
    """Every capture (mask of pool cards) ``card`` can make; empty: it is added to the pool."""
    rank = card % 13
    if rank == JACK:
        take = pool & (JACKS | NUMBERS)
        return [take] if take else []
    if rank in (QUEEN, KING):
        return [1 << c for c in bits(pool & RANK_MASKS[rank])]
    return number_captures(card, pool, values_key(pool))


def stock_code(order: Sequence[int]) -> int:
    """The chance action setting the stock to ``order`` (next card first)."""
    packed = 0
    for i, card in enumerate(order):
        packed |= (card + 1) << (6 * i)
    return -2 - packed


def stock_order(code: int) -> list[int]:
    packed = -2 - code
    order = []
    while packed:
        order.append((packed & 63) - 1)
        packed >>= 6
    return order


class PasurState(HandState):
    """One Pasur round (a deal of the whole pack, in 4-card hands)."""

    __slots__ = ("clubs_points", "dealer", "last_capturer", "penalty", "phase", "piles", "pool",
                 "pool_values", "stock", "sur_points", "surs", "turn")

    notation = STANDARD
    game = "pasur"
    other_places = ("the stock",)
    reward_bound = 20.0  # the points of a round before surs

    dealer: int
    phase: int
    turn: int
    pool: int
    pool_values: int  # values_key(pool), kept up to date
    piles: list[int]
    surs: list[int]
    last_capturer: int
    stock: list[int]
    clubs_points: int
    sur_points: int
    penalty: tuple[int, str] | None

    @property
    def stock_place(self) -> int:
        return self.players

    def clone(self) -> PasurState:
        new = PasurState.__new__(PasurState)
        self._copy_core(new)
        new.dealer = self.dealer
        new.phase = self.phase
        new.turn = self.turn
        new.pool = self.pool
        new.pool_values = self.pool_values
        new.piles = self.piles[:]
        new.surs = self.surs[:]
        new.last_capturer = self.last_capturer
        new.stock = self.stock[:]
        new.clubs_points = self.clubs_points
        new.sur_points = self.sur_points
        new.penalty = self.penalty
        return new

    # ---------------------------------------------------------------- queries

    def public_action(self, action: int, seat: int) -> int:
        return STOCK_UNKNOWN if action < 0 else action

    def moves_left(self) -> int | None:
        """The cards in hand, once the play has begun and the stock is empty (a full
        world knows the stock's order, but a draw from it is chance to the players:
        docs/bots.md)."""
        if self.phase != PLAY or self.count[self.players] or self.observer != FULL:
            return None
        return sum(self.count[:self.players])

    def rollout(self, rng: random.Random) -> None:
        random_playout(self, rng)

    def hidden_mask(self) -> int:
        public = self.pool
        for pile in self.piles:
            public |= pile
        return DECK_MASK & ~public

    def _finish_world(self, rng: random.Random) -> None:
        self.stock = bits(self.may[self.players])
        rng.shuffle(self.stock)

    def current_player(self) -> int:
        phase = self.phase
        if phase == PLAY:
            return self.turn
        return CHANCE if phase == CHANCE_STOCK else TERMINAL

    def is_terminal(self) -> bool:
        return self.phase >= DONE

    @property
    def last_deal(self) -> bool:
        """No more cards to deal: surs no longer score."""
        return self.count[self.players] == 0

    def legal_actions(self) -> list[int]:
        if self.phase != PLAY:
            return []
        pool = self.pool
        actions = []
        for card in bits(self.may[self.turn]):
            if VALUE[card]:
                takes = number_captures(card, pool, self.pool_values)
            else:
                takes = captures(card, pool)
            if takes:
                actions += [card | take << 6 for take in takes]
            else:
                actions.append(card)
        return actions

    # ----------------------------------------------------------------- checks

    def check(self, action: int) -> None:
        phase = self.phase
        if phase >= DONE:
            raise IllegalAction("phase", "the round is over")
        if action < 0:
            if phase != CHANCE_STOCK:
                raise IllegalAction("phase", "the stock is reshuffled only after an opening jack")
            if action != STOCK_UNKNOWN:
                order = stock_order(action)
                stock = self.may[self.players]
                if len(order) != self.count[self.players] or (
                        self.observer == FULL and mask_of(order) != stock):
                    raise IllegalAction("chance", "the new stock order must hold exactly the "
                                        f"{self.count[self.players]} cards of the stock")
            return
        if phase != PLAY:
            raise IllegalAction("phase", "the stock must be reshuffled first")
        seat = self.turn
        card = action & 63
        take = action >> 6
        if card >= 52:
            raise IllegalAction("not-held", f"card {card} is not in this deck", seat)
        name = STANDARD.name(card)
        bit = 1 << card
        if self._sees(seat):
            if not self.may[seat] & bit:
                raise IllegalAction("not-held", f"seat {seat} does not hold {name}", seat)
        else:
            face_up = self.pool
            for pile in self.piles:
                face_up |= pile
            self._check_unseen(seat, bit, face_up)
        if take & ~self.pool:
            raise IllegalAction("capture", STANDARD.format_mask(take & ~self.pool)
                                + " not in the pool", seat)
        takes = captures(card, self.pool)
        if take in takes or (not take and not takes):
            return
        if not take:
            raise IllegalAction(
                "must-capture", f"{name} can capture ({STANDARD.format_mask(takes[0])}); a card "
                "that can capture may not be added to the pool", seat)
        rank = card % 13
        if rank == JACK:
            raise IllegalAction("capture", "a jack takes every jack and number card in the pool"
                                + (f": {STANDARD.format_mask(takes[0])}" if takes else
                                   " and there are none"), seat)
        if rank in (QUEEN, KING):
            word = "queen" if rank == QUEEN else "king"
            raise IllegalAction("capture", f"a {word} takes exactly one {word}", seat)
        raise IllegalAction("capture", f"{name} takes one set of number cards totalling "
                            f"{11 - VALUE[card]}", seat)

    # ------------------------------------------------------------------ steps

    def step(self, action: int) -> None:
        self.moves += 1
        if action < 0:
            if action != STOCK_UNKNOWN and self.observer == FULL:
                self.stock = stock_order(action)[::-1]
            self.phase = PLAY
            return
        seat = self.turn
        card = action & 63
        take = action >> 6
        bit = 1 << card
        count = self.count
        self.played_by[seat] |= bit
        if self.observer == FULL:
            self.may[seat] ^= bit
            count[seat] -= 1
            if self.exposed:
                self.exposed.pop(card, None)
        else:
            self._take_shown(card, seat, seat)
        players = self.players
        if take:
            pool = self.pool = self.pool & ~take
            numbers = take & NUMBERS
            if numbers:
                values = self.pool_values
                while numbers:
                    low = numbers & -numbers
                    numbers ^= low
                    values -= VALUE_KEY[low.bit_length() - 1]
                self.pool_values = values
            self.piles[seat] |= take | bit
            self.last_capturer = seat
            if not pool and count[players] and card % 13 != JACK:
                self.surs[seat] += 1
        else:
            self.pool |= bit
            self.pool_values += VALUE_KEY[card]
        self.turn = nxt = seat + 1 if seat + 1 < players else 0
        if count[nxt]:
            return
        if count[players]:
            self._refill()
        else:
            if self.last_capturer >= 0:
                self.piles[self.last_capturer] |= self.pool
                self.pool = 0
                self.pool_values = 0
            self.phase = DONE

    def _refill(self) -> None:
        """Four more cards each, dealt one at a time from the dealer's left."""
        players = self.players
        stock = self.players
        if self.observer == FULL:
            order = self.stock
            got = [0] * players
            first = self.dealer + 1
            for i in range(4 * players):
                got[(first + i) % players] |= 1 << order.pop()
            if self.exposed:
                for seat in range(players):
                    self._move_hidden(4, stock, seat, got[seat])
                return
            may, count = self.may, self.count
            dealt = 0
            for seat in range(players):  # the hands are empty: they become what they got
                may[seat] = got[seat]
                count[seat] = 4
                dealt |= got[seat]
            may[stock] &= ~dealt
            count[stock] -= 4 * players
        else:
            for seat in range(players):
                self._move_hidden(4, stock, seat)

    # ---------------------------------------------------------------- results

    def points(self) -> list[int]:
        if self.phase == VOID:
            raise ValueError("a void deal scores nothing")
        if self.phase != DONE:
            raise ValueError("the round is not over")
        piles = self.piles
        clubs = [(pile & CLUBS).bit_count() for pile in piles]
        most = max(clubs)
        pts = [0] * self.players
        if clubs.count(most) == 1:
            pts[clubs.index(most)] += self.clubs_points
        for seat, pile in enumerate(piles):
            pts[seat] += (3 * (pile >> TEN_OF_DIAMONDS & 1) + 2 * (pile >> TWO_OF_CLUBS & 1)
                          + (pile & ACES).bit_count() + (pile & JACKS).bit_count()
                          + self.sur_points * self.surs[seat])
        if self.penalty is not None:
            pts[self.penalty[0]] = 0
        return pts

    def detail(self) -> dict[str, object]:
        out: dict[str, object] = {
            "cards": [pile.bit_count() for pile in self.piles],
            "clubs": [(pile & CLUBS).bit_count() for pile in self.piles],
            "surs": self.surs[:],
            "last_capture": self.last_capturer if self.last_capturer >= 0 else None,
        }
        if self.penalty is not None:
            out["penalty"] = {"seat": self.penalty[0], "reason": self.penalty[1]}
        return out

    def summary(self, names: Sequence[str]) -> str:
        if self.phase == VOID:
            return f"void deal ({VOID_REASON})"
        cards = "/".join(str(p.bit_count()) for p in self.piles)
        clubs = "/".join(str((p & CLUBS).bit_count()) for p in self.piles)
        surs = "/".join(str(n) for n in self.surs)
        text = f"cards {cards}, clubs {clubs}, surs {surs}"
        if self.penalty is not None:
            text += f"; {self.penalty[1]} by {names[self.penalty[0]]}"
        if self.phase == DONE:
            text += "; points " + " ".join(str(p) for p in self.points())
        return text

    def narrate(self, before: PasurState, action: int, names: Sequence[str]) -> list[str]:
        lines = []
        seat = before.turn
        if action >= 0 and self.surs[seat] > before.surs[seat]:
            lines.append(f"{names[seat]} clears the pool: sur!")
        stock = self.players
        if self.count[stock] < before.count[stock]:
            lines.append(f"four more cards each ({self.count[stock]} left in the stock)"
                         + ("; no more surs this round" if not self.count[stock] else ""))
        if self.phase == DONE and before.phase != DONE and self.last_capturer >= 0 \
                and self.penalty is None and action >= 0:
            take = action >> 6
            left = before.pool & ~take if take else before.pool | 1 << (action & 63)
            if left:
                n = left.bit_count()
                lines.append(f"{names[self.last_capturer]} takes the {n} card{'s' if n > 1 else ''}"
                             " left in the pool")
        return lines

    def chance_action(self, rng: random.Random) -> int:
        """The secret reshuffle of the stock after an opening jack went back into it."""
        if self.phase != CHANCE_STOCK or self.observer != FULL:
            raise ValueError("no stock reshuffle is pending here")
        order = self.stock[::-1]
        rng.shuffle(order)
        return stock_code(order)

    def penalize(self, seat: int, code: str) -> None:
        """The deal stops as it stands (no final sweep); the offender scores 0."""
        self.penalty = (seat, code)
        self.phase = DONE

    # ------------------------------------------------------------------- text

    # ----------------------------------------------------------- the table

    def shown_cards(self, action: int) -> list[int]:
        return [action & 63] if action >= 0 else []

    @property
    def void_reason(self) -> str | None:
        return VOID_REASON if self.phase == VOID else None

    def table_chance(self) -> TableChance:
        if self.phase != CHANCE_STOCK:
            raise ValueError("no stock reshuffle is pending here")
        return TableChance(ChanceKind.RESHUFFLE, source=self.stock_place)

    def reshuffled_chance(self) -> int:
        return STOCK_UNKNOWN

    def card_plays(self) -> int:
        return 0 if self.phase == VOID else 52 - 4

    # ------------------------------------------------------------ the screen

    def table_rows(self, names: Sequence[str]) -> list[Row]:
        pool: tuple[Piece, ...] = (Cards(tuple(bits(self.pool))),) if self.pool \
            else (Styled("dim", "(empty)"),)
        piles = ", ".join(f"{names[s]} {self.piles[s].bit_count()} cards"
                          + (f" {self.surs[s]} sur" if self.surs[s] else "")
                          for s in range(self.players))
        stock = self.count[self.stock_place]
        return [Row("pool", pool), Row("taken", (piles, f"; stock {stock}"))]

    def last_trick_row(self, names: Sequence[str]) -> Row:
        return dim("Pasur has no tricks: see the pool and the taken piles")

    def format_action(self, action: int, seat: int = FULL) -> str:
        if action < 0:
            size = self.count[self.players]
            if action == STOCK_UNKNOWN or seat != FULL:
                return "stock" + " ?" * size
            return "stock " + STANDARD.format_cards(stock_order(action))
        card, take = action & 63, action >> 6
        text = f"play {STANDARD.name(card)}"
        return text + " take " + STANDARD.format_mask(take) if take else text

    def parse_action(self, text: str) -> int:
        return parse_action(text)


def parse_action(text: str) -> int:
    """Action code of a Pasur action text (p2pcards/rules/pasur.md), any case."""
    words = text.split()
    if not words:
        raise ActionSyntaxError("empty action")
    verb = words[0].lower()
    with reading(text):
        if verb == "play" and len(words) >= 2:
            card = STANDARD.parse(words[1])
            if card >= 52:
                raise ActionSyntaxError(f"there are no jokers in Pasur: {text!r}")
            if len(words) == 2:
                return card
            if words[2].lower() != "take" or len(words) == 3:
                raise ActionSyntaxError(f"cannot read {text!r}: expected 'play CARD take CARDS'")
            take = 0
            for word in words[3:]:
                c = STANDARD.parse(word)
                if take >> c & 1 or c >= 52:
                    raise ActionSyntaxError(f"{word} twice or not a Pasur card in {text!r}")
                take |= 1 << c
            return card | take << 6
        if verb == "stock" and len(words) >= 2:
            if all(w == "?" for w in words[1:]):
                return STOCK_UNKNOWN
            order = STANDARD.parse_many(words[1:])
            if len(set(order)) != len(order) or max(order) >= 52:
                raise ActionSyntaxError(f"a stock order lists each card once: {text!r}")
            return stock_code(order)
    raise ActionSyntaxError(f"cannot read Pasur action {text!r}")


@cache
def _places(players: int, dealer: int) -> tuple[int, ...]:
    """Deal mapping: position -> hidden place (a hand, the stock) or -1 (the pool)."""
    opening = 4 * players
    return tuple((dealer + 1 + i) % players if i < opening else
                 (-1 if i < opening + 4 else players) for i in range(52))


class Pasur(Game):
    name = "pasur"
    title = "Pasur"
    brief = """\
Pasur: a fishing game for 2-4 players. Four cards each and four in the
pool. A number card captures pool number cards that add up to eleven with
it; a king takes one king, a queen one queen, a jack every jack and number
card. A card that takes nothing joins the pool. Emptying the pool is a sur
(not with a jack, not in the last deal). Points each round: most clubs 7,
10 of diamonds 3, 2 of clubs 2, each ace and jack 1, each sur 5; 62 wins."""
    moves_help = """\
play 7H take 2C 2D, play JS, play KD take KS; the cards taken in any order.
A card alone plays it: 7H takes its only capture; when it has several, the
prompt offers them. 7H take 2C 2D is play 7H take 2C 2D.
Cards: rank then suit; T or 10; suits S H D C or the symbols (7♥, 10♦)."""
    notation = STANDARD
    units = "seats"
    player_counts = (2, 3, 4)
    default_players = 4
    capabilities = Capabilities(shown_cards=True, chance=True,
                                table_chance=frozenset({ChanceKind.RESHUFFLE}),
                                void_deals=True, cards_change_deal=True)
    bench_players = (2, 3, 4)
    options = {
        "clubs": OptionSpec(7, choices=(7, 13), help="points for most clubs"),
        "sur": OptionSpec(5, choices=(5, 10), help="points per sur"),
        "target": OptionSpec(62, minimum=1, maximum=10_000, help="points that win the game"),
    }

    def deck(self, players: int, options: Mapping[str, int]) -> list[int]:
        return list(range(52))

    def _opening_jack(self, deck: Sequence[int | None], players: int) -> tuple[int, int]:
        """(jacks in the opening pool, the replacement card or -1)."""
        pool = deck[4 * players:4 * players + 4]
        jacks = sum(1 for c in pool if c is not None and c % 13 == JACK)
        replacement = deck[4 * players + 4] if jacks == 1 else None
        return jacks, -1 if replacement is None else replacement

    def void_reason(self, deck: Sequence[int], players: int) -> str | None:
        jacks, replacement = self._opening_jack(deck, players)
        return VOID_REASON if jacks > 1 or (jacks == 1 and replacement % 13 == JACK) else None

    def cards_change_mapping(self, deck: Sequence[int | None], players: int) -> bool:
        return self._opening_jack(deck, players)[0] > 0

    def shown_after_deal(self, observed: Sequence[int | None], players: int) -> list[int]:
        """A lone jack in the opening pool: the card after the pool replaces it, face up."""
        after_pool = 4 * players + 4
        jacks, _ = self._opening_jack(observed, players)
        return [after_pool] if jacks == 1 and observed[after_pool] is None else []

    def deal(self, deck: Sequence[int | None], dealer: int, players: int,
             options: Mapping[str, int], *, observer: int = FULL,
             number: int = 0) -> PasurState:
        self.check_players(players)
        if len(deck) != 52:
            raise ValueError(f"a Pasur deck has 52 cards, not {len(deck)}")
        opening = 4 * players
        pool_cards = deck[opening:opening + 4]
        if any(c is None for c in pool_cards):
            raise ValueError("the opening pool is face up")
        state = PasurState.__new__(PasurState)
        state._init_core(players, players + 1, observer)
        state.dealer = dealer
        state.turn = (dealer + 1) % players
        state.pool = mask_of(c for c in pool_cards if c is not None)
        state.piles = [0] * players
        state.surs = [0] * players
        state.last_capturer = -1
        state.clubs_points = options.get("clubs", 7)
        state.sur_points = options.get("sur", 5)
        state.penalty = None
        state._place_deck(deck, _places(players, dealer), state.pool, DECK_MASK)
        stock = players
        state.pool_values = values_key(state.pool)
        state.stock = [c for c in reversed(deck[opening + 4:]) if c is not None] \
            if observer == FULL else []
        jacks, replacement = self._opening_jack(deck, players)
        if jacks == 0:
            state.phase = PLAY
        elif jacks > 1 or replacement < 0 or replacement % 13 == JACK:
            if jacks == 1:
                if replacement < 0:
                    raise ValueError("the replacement for an opening jack is shown to everyone")
                state.exposed[replacement] = 1 << stock  # shown, and left on the stock
            state.phase = VOID
        else:
            jack = next(c for c in bits(state.pool & JACKS))
            state._take_shown(replacement, stock, -1)
            if observer == FULL:
                state.stock.pop()
            state.pool = state.pool & ~(1 << jack) | 1 << replacement
            state.pool_values = values_key(state.pool)
            state._put_shown(jack, stock)
            if observer == FULL:
                state.stock.append(jack)
            state.phase = CHANCE_STOCK
        return state

    def observed_deck(self, deck: Sequence[int], dealer: int, players: int,
                      options: Mapping[str, int], seat: int, *,
                      number: int = 0) -> list[int | None]:
        opening = 4 * players
        jacks, _ = self._opening_jack(deck, players)
        shown = opening + 5 if jacks == 1 else opening + 4
        return [c if (i < opening and (dealer + 1 + i) % players == seat)
                or opening <= i < shown else None for i, c in enumerate(deck)]

    def winner(self, totals: Sequence[int], deals: int,
               options: Mapping[str, int]) -> int | None:
        if max(totals) < options.get("target", 62):
            return None
        return highest_unique(totals)

    def bench_position(self, rng: random.Random) -> tuple[str, HandState]:
        """Three players, fourteen random moves into a deal that counts."""
        return "pasur.mid_round", random_position(self, 3, rng, lambda state, moves: moves == 14)


GAME = Pasur()


def random_card_action(state: PasurState, r: float, r2: float) -> int:
    """A random playable card (fraction ``r`` of the hand), then one of its legal
    captures at fraction ``r2`` (or adding it to the pool when it takes nothing)."""
    hand = state.may[state.turn]
    k = int(r * hand.bit_count())
    while k:  # the k-th card of the hand (core.pick, inlined: this is the hot path)
        hand &= hand - 1
        k -= 1
    card = (hand & -hand).bit_length() - 1
    pool = state.pool
    value = VALUE[card]
    if value:
        key = state.pool_values
        sums = _SUMS.get(key) or sums_for(key)
        n = sums.counts[11 - value]
        return card | nth_capture(sums, 11 - value, pool, int(r2 * n)) << 6 if n else card
    if card % 13 == JACK:
        return card | (pool & (JACKS | NUMBERS)) << 6
    faces = pool & RANK_MASKS[card % 13]
    return card | 1 << pick(faces, r2) << 6 if faces else card


def random_playout(state: PasurState, rng: random.Random) -> None:
    """Play the round to the end at random through the fast path (bench, rollouts):
    each turn a random card of the hand, then a random one of its captures."""
    rnd = rng.random
    step = state.step
    while state.phase < DONE:
        if state.phase == CHANCE_STOCK:
            step(state.chance_action(rng))
        else:
            step(random_card_action(state, rnd(), rnd()))
