"""Bid Whist, tournament rules (p2pcards/rules/bidwhist.md).

Four seats, teams 0 (seats 0, 2) and 1 (seats 1, 3).  Hidden places: the four
hands, the kitty and the bid winner's discard (the bidders' first book).

Action codes (the fast path; text forms in p2pcards/rules/bidwhist.md):

* ``0..53``: ``play`` that card;
* ``PASS`` and ``bid_code(n, kind)``: the auction;
* ``TRUMP + suit``, ``UPTOWN``, ``DOWNTOWN``: the bid winner's declaration;
* ``DISCARD | mask << 9``: the discard (``DISCARD`` alone: cards not seen).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations

from p2pcards.games.capabilities import Capabilities
from p2pcards.games.cards import (
    BIG_JOKER,
    LITTLE_JOKER,
    STANDARD,
    SUIT_MASKS,
    SUITS,
    SYMBOLS,
    bits,
    mask_of,
)
from p2pcards.games.core import (
    FULL,
    TERMINAL,
    ActionSyntaxError,
    HandState,
    IllegalAction,
    pick,
    reading,
    whole_number,
)
from p2pcards.games.display import Row, last_trick, seated, trick_rows
from p2pcards.games.game import Game, OptionSpec

KITTY = 4
DISCARD_PILE = 5
PLACES = 6

BID, DECLARE, DISCARD_PHASE, PLAY, DONE = range(5)
PHASE_NAMES = ("bidding", "declaration", "discard", "play", "done")

PASS = 100
TRUMP = 120
UPTOWN = 130
DOWNTOWN = 131
DISCARD = 256
KINDS = ("cards", "special", "notrump")
CARDS_BID, SPECIAL_BID, NOTRUMP_BID = range(3)
NO_SUIT = 4

JOKERS = (1 << BIG_JOKER) | (1 << LITTLE_JOKER)
DECK_MASK = {6: (1 << 54) - 1, 5: (1 << 53) - 1}
HAND_SIZE = 12


def bid_code(n: int, kind: int) -> int:
    return PASS + 1 + 3 * (n - 3) + kind


def bid_of(code: int) -> tuple[int, int]:
    """(n, kind) of a bid code."""
    n, kind = divmod(code - PASS - 1, 3)
    return n + 3, kind


def bid_strength(code: int) -> int:
    """Order of bids: n cards = n special < n notrump < n+1 cards."""
    n, kind = bid_of(code)
    return 2 * n + (kind == NOTRUMP_BID)


STRENGTH = tuple(bid_strength(code) if PASS < code < TRUMP else -1 for code in range(TRUMP))
BID_CODES = {low: tuple(bid_code(n, k) for n in range(low, 8) for k in range(3)) for low in (3, 4)}


WORDS = {**{f"{word}{plural}": letter.lower()
             for letter, word in zip(SUITS, ("spade", "heart", "diamond", "club"), strict=True)
             for plural in ("", "s")},
         **{symbol: letter.lower() for symbol, letter in zip(SYMBOLS, SUITS, strict=True)},
         "card": "cards", "nt": "notrump", "no-trump": "notrump", "up": "uptown",
         "down": "downtown"}
"""What a person may type for a word of a Bid Whist move (``trump hearts``, ``bid 4 nt``)."""
JOKER_GROUP = 4
"""The jokers' group in a hand shown (:meth:`StandardNotation.group`)."""
BID_WORDS = {"uptown": "cards", "up": "cards", "high": "cards",
             "downtown": "special", "down": "special", "low": "special"}
"""A bid's direction as players say it, for the kind of trump bid it is."""


def discard_code(mask: int) -> int:
    return DISCARD | (mask << 9)


# ------------------------------------------------------------ ranking tables


def _rank_strength(rank: int, downtown: bool) -> int:
    """0..12, higher wins: uptown A K ... 2; downtown A 2 3 ... K (ace high both ways)."""
    if not downtown or rank == 12:
        return rank
    return 11 - rank


class _Tables:
    """Per contract: each card's suit for following, its winning key, the follow masks."""

    __slots__ = ("follow", "keys", "suits")

    def __init__(self, trump: int, downtown: bool):
        suits = [c // 13 for c in range(52)] + [trump if trump < 4 else NO_SUIT] * 2
        keys = [_rank_strength(c % 13, downtown) for c in range(52)] + [0, 0]
        if trump < 4:
            for c in range(52):
                if c // 13 == trump:
                    keys[c] += 100
            keys[BIG_JOKER], keys[LITTLE_JOKER] = 114, 113
        else:
            keys[BIG_JOKER] = keys[LITTLE_JOKER] = -100  # jokers never win in notrump
        follow = [*SUIT_MASKS, 0]
        if trump < 4:
            follow[trump] |= JOKERS
        self.suits: tuple[int, ...] = tuple(suits)
        self.keys: tuple[int, ...] = tuple(keys)
        self.follow: tuple[int, ...] = tuple(follow)


TABLES = {(t, d): _Tables(t, d) for t in range(5) for d in (False, True)}


class BidWhistState(HandState):
    """One Bid Whist hand."""

    __slots__ = ("bidder", "bids", "books", "dealer", "downtown", "high", "kind", "kitty_size",
                 "last_trick", "leader", "led", "level", "past", "penalty", "phase", "tables",
                 "trick", "tricks_played", "trump", "turn", "win_key", "win_seat", "won")

    notation = STANDARD
    game = "bidwhist"
    team_game = True
    words = WORDS
    other_places = ("the kitty", "the discard")
    reward_bound = 14.0  # 7 notrump, made or set

    dealer: int
    kitty_size: int
    phase: int
    turn: int
    bids: list[tuple[int, int]]
    high: int
    bidder: int
    level: int
    kind: int
    trump: int
    downtown: bool
    tables: _Tables
    trick: list[int]
    leader: int
    led: int
    win_key: int
    win_seat: int
    books: list[int]
    won: list[int]
    tricks_played: int
    last_trick: tuple[int, tuple[int, ...]] | None
    past: tuple[tuple[int, tuple[int, ...]], ...]
    """The deal's finished tricks in order, each as (leader, cards): public, read by the
    bots' beliefs (docs/bots.md); the fast playout of a full-information world (the
    search's rollouts) leaves it as it was."""
    penalty: tuple[int, str] | None

    def clone(self) -> BidWhistState:
        new = BidWhistState.__new__(BidWhistState)
        self._copy_core(new)
        new.dealer = self.dealer
        new.kitty_size = self.kitty_size
        new.phase = self.phase
        new.turn = self.turn
        new.bids = self.bids[:]
        new.high = self.high
        new.bidder = self.bidder
        new.level = self.level
        new.kind = self.kind
        new.trump = self.trump
        new.downtown = self.downtown
        new.tables = self.tables
        new.trick = self.trick[:]
        new.leader = self.leader
        new.led = self.led
        new.win_key = self.win_key
        new.win_seat = self.win_seat
        new.books = self.books[:]
        new.won = self.won[:]
        new.tricks_played = self.tricks_played
        new.last_trick = self.last_trick
        new.past = self.past
        new.penalty = self.penalty
        return new

    # ------------------------------------------------------------- queries

    def public_action(self, action: int, seat: int) -> int:
        return DISCARD if action > DISCARD and seat != self.bidder else action

    def moves_left(self) -> int | None:
        """The cards still in hand, once the play has begun (docs/bots.md)."""
        return sum(self.count[:4]) if self.phase == PLAY and self.observer == FULL else None

    def rollout(self, rng: random.Random) -> None:
        """Random play to the end (the fast loop from the first card on).  The
        heuristic bot's search plays the auction by a model instead (its playbook's
        policy, :mod:`p2pcards.bots.heuristics.bidwhist`)."""
        random_playout(self, rng)

    def sampled_move(self, seat: int, rng: random.Random) -> int | None:
        """Moves the search samples instead of branching on: the discard (18,564
        choices), by the rule of thumb :func:`plain_discard` for every seat (the
        searcher's is the same in every world, so the tree grows past it)."""
        if self.phase == DISCARD_PHASE:
            return plain_discard(self)
        return None

    def candidate_actions(self, rng: random.Random) -> list[int] | None:
        if self.phase != DISCARD_PHASE:
            return None
        return discard_candidates(self, rng)

    def hidden_mask(self) -> int:
        return DECK_MASK[self.kitty_size] & ~(self.won[0] | self.won[1] | mask_of(self.trick))

    def visible(self, place: int, seat: int) -> bool:
        return place == seat or (place == DISCARD_PILE and seat == self.bidder
                                 and self.phase > DISCARD_PHASE)

    def observation(self, seat: int) -> int:
        """As :meth:`HandState.observation`, without asking every place (the search's hot path)."""
        seen = self.may[seat] << (64 * seat)
        if seat == self.bidder and self.phase > DISCARD_PHASE:
            seen |= self.may[DISCARD_PILE] << (64 * DISCARD_PILE)
        return seen

    def current_player(self) -> int:
        return TERMINAL if self.phase == DONE else self.turn

    def is_terminal(self) -> bool:
        return self.phase == DONE

    @property
    def notrump(self) -> bool:
        return self.kind == NOTRUMP_BID

    @property
    def min_bid(self) -> int:
        return 3 if self.kitty_size == 5 else 4

    def contract_text(self) -> str:
        if not self.level:  # the auction is not over
            return ""
        return f"{self.level} {KINDS[self.kind]}"

    def legal_mask(self) -> int:
        """The cards the player to move may play (exact when its hand is known)."""
        seat = self.turn
        hand = self.may[seat]
        led = self.led
        if led < 0:
            return hand
        follow = hand & self.tables.follow[led]
        if follow:
            return follow
        if self.kind == NOTRUMP_BID and seat != self.bidder:
            jokers = hand & JOKERS
            if jokers:
                return jokers
        return hand

    def legal_actions(self) -> list[int]:
        phase = self.phase
        if phase == PLAY:
            return bits(self.legal_mask())
        if phase == BID:
            high = STRENGTH[self.high] if self.high else -1
            bids = [code for code in BID_CODES[self.min_bid] if STRENGTH[code] > high]
            return bids if self._dealer_forced() else [PASS, *bids]
        if phase == DECLARE:
            return [UPTOWN, DOWNTOWN] if self.notrump else [TRUMP + s for s in range(4)]
        if phase == DISCARD_PHASE:
            return self._discard_codes() if self._sees(self.turn) else [DISCARD]
        return []

    def _high_strength(self) -> int:
        return STRENGTH[self.high] if self.high else -1

    def _dealer_forced(self) -> bool:
        return len(self.bids) == 3 and not self.high

    def _discard_codes(self) -> list[int]:
        hand = self.may[self.turn]
        must = hand & JOKERS if self.notrump else 0
        rest = bits(hand & ~must)
        need = self.kitty_size - must.bit_count()
        codes = []
        for combo in combinations(rest, need):
            mask = must
            for c in combo:
                mask |= 1 << c
            codes.append(discard_code(mask))
        return codes

    # ---------------------------------------------------------------- checks

    def check(self, action: int) -> None:
        phase = self.phase
        seat = self.turn
        if phase == DONE:
            raise IllegalAction("phase", "the hand is over")
        if action < 64:
            if phase != PLAY:
                raise IllegalAction("phase", f"no card is played during the {PHASE_NAMES[phase]}")
            self._check_play(seat, action)
        elif action < TRUMP:
            if phase != BID:
                raise IllegalAction("phase", f"the bidding is over ({PHASE_NAMES[phase]} now)")
            self._check_bid(action)
        elif action < DISCARD:
            if phase != DECLARE:
                raise IllegalAction("phase", f"no declaration during the {PHASE_NAMES[phase]}")
            if action in (UPTOWN, DOWNTOWN):
                if not self.notrump:
                    raise IllegalAction("declare", "a cards or special bid names a trump suit")
            elif self.notrump:
                raise IllegalAction("declare", "a notrump bid declares uptown or downtown")
            elif not TRUMP <= action < TRUMP + 4:
                raise IllegalAction("declare", f"unknown declaration code {action}")
        else:
            if phase != DISCARD_PHASE:
                raise IllegalAction("phase", f"no discard during the {PHASE_NAMES[phase]}")
            self._check_discard(seat, action >> 9)

    def _check_bid(self, action: int) -> None:
        if action == PASS:
            if self._dealer_forced():
                raise IllegalAction("bid", "the dealer must bid when the other three have passed",
                                    self.turn)
            return
        n, kind = bid_of(action)
        if not (self.min_bid <= n <= 7 and 0 <= kind < 3):
            raise IllegalAction("bid", f"bids run from {self.min_bid} to 7", self.turn)
        if bid_strength(action) <= self._high_strength():
            raise IllegalAction(
                "bid", f"a bid must be higher than {self._bid_text(self.high)}"
                + (" (cards and special of one number rank alike)" if kind < 2 else ""),
                self.turn)

    def _check_discard(self, seat: int, mask: int) -> None:
        if not self._sees(seat):
            return  # another seat's face-down discard: only its count is public
        hand = self.may[seat]
        if mask & ~hand:
            raise IllegalAction("not-held", f"seat {seat} does not hold "
                                + STANDARD.format_mask(mask & ~hand), seat)
        if mask.bit_count() != self.kitty_size:
            raise IllegalAction("discard",
                                f"the discard is exactly {self.kitty_size} cards, not "
                                f"{mask.bit_count()}", seat)
        if self.notrump and hand & JOKERS & ~mask:
            raise IllegalAction("renege", "in notrump the bidder must discard every joker", seat)

    def _check_play(self, seat: int, card: int) -> None:
        name = STANDARD.name(card) if card < 54 else str(card)
        if card >= 54 or (self.kitty_size == 5 and card == LITTLE_JOKER):
            raise IllegalAction("not-held", f"{name} is not in this deck", seat)
        bit = 1 << card
        if not self._sees(seat):
            # Another seat's card: only what is public can be checked here; a
            # contradiction with its claims is recorded as a proof when applied.
            self._check_unseen(seat, bit, self.won[0] | self.won[1] | mask_of(self.trick))
            return
        hand = self.may[seat]
        if not hand & bit:
            raise IllegalAction("not-held", f"seat {seat} does not hold {name}", seat)
        if not self.legal_mask() & bit:
            led = self.led
            if hand & self.tables.follow[led]:
                raise IllegalAction("renege", f"must follow suit: seat {seat} holds "
                                    f"{_suit_word(led, self.trump)}", seat)
            raise IllegalAction("renege", "unable to follow suit in notrump while holding a joker,"
                                f" seat {seat} must play a joker", seat)

    # ----------------------------------------------------------------- steps

    def step(self, action: int) -> None:
        self.moves += 1
        if action < 64:
            self._play(action)
        elif action < TRUMP:
            self._bid(action)
        elif action < DISCARD:
            self._declare(action)
        else:
            self._discard(action >> 9)

    def _bid(self, action: int) -> None:
        seat = self.turn
        self.bids.append((seat, action))
        if action != PASS:
            self.high = action
            self.bidder = seat
        if len(self.bids) < 4:
            self.turn = (seat + 1) % 4
            return
        bidder = self.bidder
        self.level, self.kind = bid_of(self.high)
        kitty = self.may[KITTY] if self.observer == FULL else -1
        self._move_hidden(self.kitty_size, KITTY, bidder, kitty)
        self.phase = DECLARE
        self.turn = bidder

    def _declare(self, action: int) -> None:
        if action in (UPTOWN, DOWNTOWN):
            self.downtown = action == DOWNTOWN
            self.trump = NO_SUIT
        else:
            self.trump = action - TRUMP
            self.downtown = self.kind == SPECIAL_BID
        self.tables = TABLES[self.trump, self.downtown]
        self.phase = DISCARD_PHASE

    def _discard(self, mask: int) -> None:
        bidder = self.bidder
        known = mask if mask and self._sees(bidder) else -1
        self.phase = PLAY  # first: from now on the bidder sees the discard pile
        self._move_hidden(self.kitty_size, bidder, DISCARD_PILE, known)
        self.books[bidder & 1] = 1
        if self.notrump:
            self._claim_void(bidder, JOKERS, bidder)
        self.leader = self.turn = bidder
        self.trick = []
        self.led = -1
        self.win_key = -1000

    def _play(self, card: int) -> None:
        seat = self.turn
        self.played_by[seat] |= 1 << card
        if self.observer == FULL:
            self.may[seat] ^= 1 << card
            self.count[seat] -= 1
            if self.exposed:
                self.exposed.pop(card, None)
        else:
            self._take_shown(card, seat, seat)
        tables = self.tables
        suit = tables.suits[card]
        led = self.led
        if led < 0:
            if suit != NO_SUIT:
                self.led = led = suit
        elif suit != led:
            self._claim_void(seat, tables.follow[led], seat)
            if suit != NO_SUIT and self.kind == NOTRUMP_BID and seat != self.bidder:
                self._claim_void(seat, JOKERS, seat)
        key = tables.keys[card]
        if (suit == led or key >= 100) and key > self.win_key:
            self.win_key = key
            self.win_seat = seat
        trick = self.trick
        trick.append(card)
        if len(trick) < 4:
            self.turn = (seat + 1) & 3
            return
        winner = self.win_seat
        team = winner & 1
        self.books[team] += 1
        self.won[team] |= (1 << trick[0]) | (1 << trick[1]) | (1 << trick[2]) | (1 << trick[3])
        self.last_trick = (self.leader, tuple(trick))
        self.past += (self.last_trick,)
        self.tricks_played += 1
        self.leader = winner  # after the last trick too: who won the last trick
        if self.tricks_played == HAND_SIZE:
            self.phase = DONE
            self.trick = []
            return
        self.turn = winner
        self.trick = []
        self.led = -1
        self.win_key = -1000

    # --------------------------------------------------------------- results

    def points(self) -> list[int]:
        if self.phase != DONE:
            raise ValueError("the hand is not over")
        pts = [0, 0]
        if self.penalty is not None:
            offender = self.penalty[0] & 1
            if self.level:  # the auction is over: the bid that was won
                pts[1 - offender] = self.level * (2 if self.notrump else 1)
            else:
                pts[1 - offender] = self.min_bid
            return pts
        team = self.bidder & 1
        pts[team], pts[1 - team] = hand_points(self.level, self.notrump, self.books[team])
        return pts

    def detail(self) -> dict[str, object]:
        out: dict[str, object] = {"books": self.books[:]}
        if self.level:
            out["bid"] = self.contract_text()
            out["bidder"] = self.bidder
            if 0 <= self.trump < NO_SUIT:
                out["trump"] = SUITS[self.trump]
            elif self.trump == NO_SUIT:
                out["direction"] = "downtown" if self.downtown else "uptown"
        if self.penalty is not None:
            out["penalty"] = {"seat": self.penalty[0], "reason": self.penalty[1]}
        elif self.level and self.phase == DONE:
            out["made"] = self.books[self.bidder & 1] >= 6 + self.level
        return out

    def summary(self, names: Sequence[str]) -> str:
        pts = self.points() if self.phase == DONE else None
        parts = []
        if self.level:
            how = (f"trump {SUITS[self.trump]}" if 0 <= self.trump < NO_SUIT else
                   ("downtown" if self.downtown else "uptown") if self.trump == NO_SUIT else "")
            parts.append(f"{names[self.bidder]} bid {self.contract_text()}"
                         + (f", {how}" if how else ""))
        parts.append(f"books {self.books[0]}-{self.books[1]}")
        if self.penalty is not None:
            parts.append(f"{self.penalty[1]} by {names[self.penalty[0]]}")
        elif pts is not None:
            parts.append("made" if self.books[self.bidder & 1] >= 6 + self.level else "set")
        if pts is not None:
            parts.append(f"points {pts[0]}-{pts[1]}")
        return "; ".join(parts)

    def narrate(self, before: BidWhistState, action: int, names: Sequence[str]) -> list[str]:
        if self.tricks_played > before.tricks_played and self.last_trick is not None:
            leader, cards = self.last_trick
            winner = self.win_seat
            return [f"trick {self.tricks_played}: {names[winner]} wins with "
                    f"{STANDARD.name(cards[(winner - leader) % 4])} "
                    f"(books {self.books[0]}-{self.books[1]})"]
        if before.phase == BID and self.phase == DECLARE:
            return [f"{names[self.bidder]} wins the bid with {self.contract_text()} and takes"
                    " the kitty"]
        return []

    def penalize(self, seat: int, code: str) -> None:
        """The renege penalty: the other team scores the bid, the offenders nothing."""
        self.penalty = (seat, code)
        self.phase = DONE

    # ------------------------------------------------------------------ text

    # ----------------------------------------------------------- the table

    def shown_cards(self, action: int) -> list[int]:
        return [action] if action < 64 else []

    def face_down(self, action: int) -> list[int | None]:
        if action < DISCARD:
            return []
        mask = action >> 9
        return list(bits(mask)) if mask else [None] * self.kitty_size

    def multi_card_rule(self) -> tuple[int, int]:
        return self.kitty_size, self.may[self.observer]

    def card_plays(self) -> int:
        return 4 * self.tricks_played

    def random_action(self, rng: random.Random) -> int:
        if self.phase == DISCARD_PHASE:  # one random discard, not one of 18,564 listed
            return random_discard(self, rng.random)
        actions = self.legal_actions()
        return actions[int(rng.random() * len(actions))]

    # ------------------------------------------------------------ the screen

    def trump_groups(self) -> tuple[int, ...]:
        """The jokers (the highest trumps) then the trump suit; in notrump none."""
        return (JOKER_GROUP, self.trump) if 0 <= self.trump < NO_SUIT else ()

    def table_rows(self, names: Sequence[str]) -> list[Row]:
        if self.phase == BID:
            bids = ", ".join(f"{names[s]} {self._bid_text(code)}" for s, code in self.bids)
            return [Row("bids", (bids or "(none yet)",))]
        if self.phase != PLAY:
            return []
        return trick_rows(seated(self.leader, self.trick, 4), names, leader=self.leader,
                          winning=self.win_seat if self.trick else -1,
                          observer=self.observer, notation=STANDARD)

    def last_trick_row(self, names: Sequence[str]) -> Row:
        return last_trick(self.last_trick, self.players, names, self.leader)

    def phase_name(self) -> str:
        return PHASE_NAMES[self.phase]

    @staticmethod
    def _bid_text(code: int) -> str:
        if code == PASS:
            return "pass"
        n, kind = bid_of(code)
        return f"{n} {KINDS[kind]}"

    def format_action(self, action: int, seat: int = FULL) -> str:
        if action < 64:
            return f"play {STANDARD.name(action)}"
        if action == PASS:
            return "pass"
        if action < TRUMP:
            return f"bid {self._bid_text(action)}"
        if action < UPTOWN:
            return f"trump {SUITS[action - TRUMP]}"
        if action < DISCARD:
            return "direction " + ("downtown" if action == DOWNTOWN else "uptown")
        mask = action >> 9
        if not mask or seat not in (FULL, self.bidder):
            return "discard" + " ?" * self.kitty_size
        return "discard " + STANDARD.format_mask(mask)

    def parse_action(self, text: str) -> int:
        return parse_action(text, self.kitty_size)

    def shorthand(self, text: str) -> str | None:
        """A card alone means ``play``; a bid said as players say it, ``bid 4 uptown``
        (``up``, ``high``) or ``bid 4 downtown`` (``down``, ``low``), is the trump bid
        of that direction: ``bid 4 cards`` or ``bid 4 special``."""
        words = text.split()
        if len(words) == 3 and words[0].lower() == "bid" and words[2].lower() in BID_WORDS:
            return f"bid {words[1]} {BID_WORDS[words[2].lower()]}"
        return super().shorthand(text)


def _suit_word(suit: int, trump: int) -> str:
    name = ("spades", "hearts", "diamonds", "clubs")[suit]
    return f"{name} or a joker" if suit == trump else name


def _suit(text: str) -> int:
    """The suit a letter or symbol names (``H``, ``♥``), else -1."""
    try:
        ace = STANDARD.parse("A" + text)
    except ValueError:
        return -1
    return ace // 13 if ace < 52 else -1


def parse_action(text: str, kitty_size: int = 6) -> int:
    """Action code of a Bid Whist action text (p2pcards/rules/bidwhist.md), any case."""
    words = text.split()
    if not words:
        raise ActionSyntaxError("empty action")
    verb = words[0].lower()
    args = words[1:]
    with reading(text):
        if verb == "pass" and not args:
            return PASS
        if verb == "play" and len(args) == 1:
            return STANDARD.parse(args[0])
        if verb == "bid" and len(args) == 2 and whole_number(args[0], 99) is not None:
            n = int(args[0])
            kind = KINDS.index(args[1].lower()) if args[1].lower() in KINDS else -1
            if 3 <= n <= 7 and kind >= 0:
                return bid_code(n, kind)
        if verb == "bid":
            low = 4 if kitty_size == 6 else 3
            raise ActionSyntaxError(f"cannot read bid {text!r}: a bid is 'bid N cards', 'bid N"
                                    f" special' or 'bid N notrump' with N from {low} to 7")
        if verb == "trump" and len(args) == 1 and _suit(args[0]) >= 0:
            return TRUMP + _suit(args[0])
        if verb == "trump":
            raise ActionSyntaxError(f"cannot read {text!r}: trump names a suit, S, H, D or C"
                                    " (spades, hearts, diamonds, clubs)")
        if verb == "direction" and len(args) == 1 and args[0].lower() in ("uptown", "downtown"):
            return DOWNTOWN if args[0].lower() == "downtown" else UPTOWN
        if verb == "discard" and args:
            if all(a == "?" for a in args):
                if len(args) != kitty_size:
                    raise ActionSyntaxError(f"a discard is {kitty_size} cards: {text!r}")
                return DISCARD
            cards = STANDARD.parse_many(args)
            mask = 0
            for c in cards:
                if mask >> c & 1:
                    raise ActionSyntaxError(f"{STANDARD.name(c)} twice in {text!r}")
                mask |= 1 << c
            return discard_code(mask)
    raise ActionSyntaxError(f"cannot read Bid Whist action {text!r}")


# -------------------------------------------------------------- the descriptor


class BidWhist(Game):
    name = "bidwhist"
    title = "Bid Whist"
    brief = """\
Bid Whist: two partnerships (you and the seat opposite), 54 cards with two
jokers, 12 cards each and a kitty. One round of bidding, each bid higher
than the last: books over six in cards (uptown: high cards win; downtown
with special: low cards win) or in notrump. The winner takes the kitty,
names trump or a direction and discards. Follow suit when you can; the
jokers are the highest trumps (in notrump they never win). Make the bid and
score the books over six; fall short and the other side scores the bid, plus
its books over six in a trump contract; notrump doubles either score."""
    moves_help = """\
play AS, play 10h, play A♠ (or just the card: AS), pass, bid 4 cards (or
bid 4 uptown), bid 4 special (or bid 4 downtown), bid 5 notrump (or bid 5 nt;
bid 5 alone: the prompt offers the kinds),
trump H (or trump hearts, trump ♥), direction downtown,
discard 2C 3C 4D 9S LJ BJ (the cards in any order).
Cards: rank then suit; T or 10; suits S H D C or the symbols; jokers BJ LJ."""
    notation = STANDARD
    units = "teams"
    player_counts = (4,)
    default_players = 4
    capabilities = Capabilities(shown_cards=True, face_down=True)
    options = {
        "kitty": OptionSpec(6, choices=(5, 6), help="kitty size: 6 (54 cards, bids 4-7) or 5"
                            " (53 cards with the big joker only, bids 3-7)"),
        "target": OptionSpec(7, minimum=1, maximum=1000, help="points that win the game"),
    }

    def deck(self, players: int, options: Mapping[str, int]) -> list[int]:
        return bits(DECK_MASK[options.get("kitty", 6)])

    def deal(self, deck: Sequence[int | None], dealer: int, players: int,
             options: Mapping[str, int], *, observer: int = FULL,
             number: int = 0) -> BidWhistState:
        kitty_size = options.get("kitty", 6)
        if len(deck) != 48 + kitty_size:
            raise ValueError(f"a Bid Whist deck has {48 + kitty_size} cards, not {len(deck)}")
        state = BidWhistState.__new__(BidWhistState)
        state._init_core(4, PLACES, observer)
        state.dealer = dealer
        state.kitty_size = kitty_size
        state.phase = BID
        state.turn = (dealer + 1) % 4
        state.bids = []
        state.high = 0
        state.bidder = -1
        state.level = 0
        state.kind = -1
        state.trump = -1
        state.downtown = False
        state.tables = TABLES[NO_SUIT, False]
        state.trick = []
        state.leader = -1
        state.led = -1
        state.win_key = -1000
        state.win_seat = -1
        state.books = [0, 0]
        state.won = [0, 0]
        state.tricks_played = 0
        state.last_trick = None
        state.past = ()
        state.penalty = None
        places = [(dealer + 1 + i) % 4 if i < 48 else KITTY for i in range(len(deck))]
        state._place_deck(deck, places, 0, DECK_MASK[kitty_size])
        return state

    def observed_deck(self, deck: Sequence[int], dealer: int, players: int,
                      options: Mapping[str, int], seat: int, *,
                      number: int = 0) -> list[int | None]:
        return [c if i < 48 and (dealer + 1 + i) % 4 == seat else None
                for i, c in enumerate(deck)]

    def first_dealer(self, players: int, rng: random.Random) -> int:
        """Deal a shuffled deck face up from seat 0: the first to get a diamond deals."""
        return first_dealer(self.shuffled_deck(4, {}, rng))

    def winner(self, totals: Sequence[int], deals: int,
               options: Mapping[str, int]) -> int | None:
        target = options.get("target", 7)
        if max(totals) < target or totals[0] == totals[1]:
            return None
        return 0 if totals[0] > totals[1] else 1

    def bench_position(self, rng: random.Random) -> tuple[str, HandState]:
        """The first lead after a 4-card bid in spades and a random discard."""
        options = self.resolve_options({})
        hand = self.deal(self.shuffled_deck(4, options, rng), 3, 4, options)
        for seat, text in [(0, "bid 4 cards"), (1, "pass"), (2, "pass"), (3, "pass"),
                           (0, "trump S")]:
            hand.apply_text(text, seat)
        hand.apply(random_discard(hand, rng.random))
        return "bidwhist.first_lead", hand.view(0)


def hand_points(level: int, notrump: bool, bidder_books: int) -> tuple[int, int]:
    """(bidders', opponents') points of a hand played out, of 13 books (p2pcards/rules/bidwhist.md).

    Made: the books over six, doubled in notrump.  Set: the opponents score
    the bid, doubled in notrump, plus on trump bids one per book over six.
    """
    mult = 2 if notrump else 1
    if bidder_books >= 6 + level:
        return (bidder_books - 6) * mult, 0
    odd = 0 if notrump else max(0, 13 - bidder_books - 6)
    return 0, level * mult + odd


def first_dealer(order: Sequence[int]) -> int:
    """Cards dealt face up clockwise from seat 0; the first diamond deals (the rules)."""
    for i, card in enumerate(order):
        if card < 52 and card // 13 == 2:
            return i % 4
    raise ValueError("no diamond in the deck")


GAME = BidWhist()


def random_discard(state: BidWhistState, rnd: Callable[[], float]) -> int:
    """A uniformly random legal discard (every joker first, in notrump)."""
    hand = state.may[state.turn]
    mask = hand & JOKERS if state.notrump else 0
    rest = hand & ~mask
    while mask.bit_count() < state.kitty_size:
        card = pick(rest, rnd())
        rest &= ~(1 << card)
        mask |= 1 << card
    return discard_code(mask)


def discard_candidates(state: BidWhistState, rng: random.Random) -> list[int]:
    """Discards worth searching: the weakest cards (:func:`plain_discard`); each side
    suit thrown away whole (a void to trump in on) with the weakest cards to fill;
    the weakest cards outside the longest side suit; and a few draws among the
    nine weakest.  Every joker goes first in notrump, as the rules require."""
    hand = state.may[state.turn]
    size = state.kitty_size
    keys = state.tables.keys
    forced = hand & JOKERS if state.notrump else 0
    weakest = sorted(bits(hand & ~forced), key=lambda c: (keys[c], c))

    def fill(base: int, avoid: int = 0) -> int | None:
        mask = forced | base
        for card in weakest:
            if mask.bit_count() >= size:
                break
            if not (avoid >> card & 1):
                mask |= 1 << card
        return mask if mask.bit_count() == size else None

    trump = state.trump if 0 <= state.trump < NO_SUIT else -1
    side = [s for s in range(4) if s != trump and hand & SUIT_MASKS[s]]
    options = [fill(0)]
    for suit in side:
        cards = hand & SUIT_MASKS[suit]
        if (forced | cards).bit_count() <= size:
            options.append(fill(cards))
    if side:
        longest = max(side, key=lambda s: ((hand & SUIT_MASKS[s]).bit_count(), s))
        options.append(fill(0, avoid=SUIT_MASKS[longest]))
    pool = weakest[:9]
    need = size - forced.bit_count()
    for _ in range(4):
        if need <= len(pool):
            options.append(forced | mask_of(rng.sample(pool, need)))
    out: list[int] = []
    for mask in options:
        if mask is not None and discard_code(mask) not in out:
            out.append(discard_code(mask))
    return out


def plain_discard(state: BidWhistState) -> int:
    """A first rule of thumb: every joker in notrump, then the weakest cards of the
    contract (lowest non-trumps first), until the discard is full."""
    hand = state.may[state.turn]
    keys = state.tables.keys
    weakest = sorted(bits(hand), key=lambda c: (keys[c], c))
    return discard_code(mask_of(weakest[:state.kitty_size]))


def _play_out_full(state: BidWhistState, rnd: Callable[[], float]) -> None:
    """The rest of the play at random, full information, in one tight loop.

    The same moves and the same random draws as :meth:`BidWhistState._play` one
    card at a time (tested), without the bookkeeping nobody reads afterwards:
    claims of voids, the last trick.
    """
    tables = state.tables
    keys, suits, follow = tables.keys, tables.suits, tables.follow
    hands = state.may
    books, won = state.books, state.won
    trick = state.trick
    in_trick = len(trick)
    taken = 0
    for card in trick:
        taken |= 1 << card
    led, win_key, win_seat, turn = state.led, state.win_key, state.win_seat, state.turn
    notrump_defender = -1 if state.kind != NOTRUMP_BID else state.bidder
    played = 0
    tricks = state.tricks_played
    while tricks < HAND_SIZE:
        hand = hands[turn]
        mask = hand
        if led >= 0:
            mask = hand & follow[led]
            if not mask:
                mask = hand
                if notrump_defender >= 0 and turn != notrump_defender and hand & JOKERS:
                    mask = hand & JOKERS
        k = int(rnd() * mask.bit_count())
        while k:
            mask &= mask - 1
            k -= 1
        bit = mask & -mask
        card = bit.bit_length() - 1
        hands[turn] = hand ^ bit
        taken |= bit
        played += 1
        suit = suits[card]
        if led < 0 and suit != NO_SUIT:
            led = suit
        key = keys[card]
        if (suit == led or key >= 100) and key > win_key:
            win_key, win_seat = key, turn
        in_trick += 1
        if in_trick < 4:
            turn = (turn + 1) & 3
            continue
        team = win_seat & 1
        books[team] += 1
        won[team] |= taken
        taken = 0
        tricks += 1
        in_trick = 0
        turn = win_seat
        led, win_key = -1, -1000
    for seat in range(4):
        state.count[seat] = 0
    state.tricks_played = tricks
    state.moves += played
    state.trick = []
    state.leader = state.turn = turn
    state.led, state.win_key, state.win_seat = led, win_key, win_seat
    state.phase = DONE


def random_playout(state: BidWhistState, rng: random.Random) -> None:
    """Play the hand to the end at random through the fast path (bench, rollouts)."""
    rnd = rng.random
    while state.phase != DONE:
        phase = state.phase
        if phase == PLAY:
            if state.observer == FULL:
                _play_out_full(state, rnd)
            else:
                state._play(pick(state.legal_mask(), rnd()))
                state.moves += 1
        elif phase == DISCARD_PHASE:
            state.step(random_discard(state, rnd))
        else:
            actions = state.legal_actions()
            state.step(actions[int(rnd() * len(actions))])
