"""Nullern (p2pcards/rules/nullern.md): bid your tricks exactly, or catch a grasshopper.

2 to 7 seats, each for itself, over 20 rounds of 1, 2 ... 10, 9 ... 1 cards and a
final blind round of 1 card.  All 80 cards (colours R Y G B, ranks 1..20) are
dealt from every round; the card after the hands is turned face up and names
trump.  Hidden places: the hands ``0..N-1`` and the undealt cards ``UNDEALT = N``;
the turned card, the trick on the table and the played cards are public.

The round is the deal's ``number`` in the match (deals already scored), so
``Game.deal(..., number=r)`` deals round ``r + 1``.  In the blind round
(``number == 19``) nobody sees a hand, its holder included, until the card is
played: the table reveals the cards as ordinary ``play`` actions from the leader.

Action codes (the fast path; text forms in p2pcards/rules/nullern.md):

* ``0..79``: ``play`` that card (``colour * 20 + rank - 1``, as ``cards.NULLERN``);
* ``BID + n`` (``BID = 100``, ``n = 0..10``): ``bid n``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from functools import cache

from p2pcards.games.capabilities import Capabilities
from p2pcards.games.cards import Notation, bits
from p2pcards.games.core import (
    FULL,
    TERMINAL,
    ActionSyntaxError,
    HandState,
    IllegalAction,
    reading,
    whole_number,
)
from p2pcards.games.display import Row, last_trick, seated, trick_rows
from p2pcards.games.game import Game


class NullernNotation(Notation):
    """Nullern's 80 cards ``R1`` .. ``B20``, shown in their colours, high first."""

    def style(self, card: int) -> str:
        return f"colour-{card // 20}"

    def group(self, card: int) -> int:
        return card // 20

    def rank(self, card: int) -> int:
        return card % 20


# card = colour * 20 + (rank - 1), colours R Y G B, ranks 1..20
COLOURS = "RYGB"
COLOUR_NAMES = ("red", "yellow", "green", "blue")
NULLERN = NullernNotation("Nullern", [f"{c}{r}" for c in COLOURS for r in range(1, 21)])

BIDDING, PLAY, DONE = range(3)
PHASE_NAMES = ("bidding", "play", "done")

BID = 100
MAX_CARDS = 10
DECK_SIZE = 80
DECK_MASK = (1 << DECK_SIZE) - 1
COLOUR_MASKS: tuple[int, ...] = tuple(((1 << 20) - 1) << (20 * c) for c in range(4))

ROUND_CARDS: tuple[int, ...] = (*range(1, 11), *range(9, 0, -1), 1)
"""Cards per player in rounds 1..20 (index = the deal's ``number``); the last is blind."""
ROUNDS = len(ROUND_CARDS)
BLIND_ROUND = ROUNDS - 1
GRASSHOPPER = 5
"""Points a grasshopper costs in the final score."""

TRUMP_KEY = 100
KEYS: tuple[tuple[int, ...], ...] = tuple(
    tuple(c % 20 + (TRUMP_KEY if c // 20 == trump else 0) for c in range(DECK_SIZE))
    for trump in range(4))
"""Per trump colour, each card's trick-winning key: rank 0..19, trumps 100 higher."""


def prize(bid: int, tricks: int) -> tuple[int, int]:
    """(prize points, grasshoppers) of one seat's round (p2pcards/rules/nullern.md, "Scoring").

    Exact 0: 20.  Exact n >= 1: 10 + n.  Missed: one point per trick and a grasshopper.
    """
    if bid == tricks:
        return (20 if bid == 0 else 10 + bid), 0
    return tricks, 1


class NullernState(HandState):
    """One Nullern round."""

    __slots__ = ("bids", "bids_made", "blind", "cards", "dealer", "keys", "last_trick", "leader",
                 "led_trump", "past", "penalty", "phase", "played", "round_index", "trick",
                 "tricks", "tricks_played", "trump", "trump_card", "trump_mask", "turn",
                 "win_key", "win_seat")

    notation = NULLERN
    game = "nullern"
    other_places = ("the undealt cards",)
    reward_bound = 20.0  # an exact zero against a grasshopper

    dealer: int
    round_index: int
    cards: int
    blind: bool
    phase: int
    turn: int
    trump: int
    trump_card: int
    trump_mask: int
    keys: tuple[int, ...]
    bids: list[int]
    bids_made: int
    leader: int
    trick: list[int]
    led_trump: bool
    win_key: int
    win_seat: int
    tricks: list[int]
    played: int
    tricks_played: int
    last_trick: tuple[int, tuple[int, ...]] | None
    past: tuple[tuple[int, tuple[int, ...]], ...]
    """The deal's finished tricks in order, each as (leader, cards): public, read by the
    bots' beliefs (docs/bots.md); the fast playout of a full-information world (the
    search's rollouts) leaves it as it was."""
    penalty: tuple[int, str] | None

    def clone(self) -> NullernState:
        new = NullernState.__new__(NullernState)
        self._copy_core(new)
        new.dealer = self.dealer
        new.round_index = self.round_index
        new.cards = self.cards
        new.blind = self.blind
        new.phase = self.phase
        new.turn = self.turn
        new.trump = self.trump
        new.trump_card = self.trump_card
        new.trump_mask = self.trump_mask
        new.keys = self.keys
        new.bids = self.bids[:]
        new.bids_made = self.bids_made
        new.leader = self.leader
        new.trick = self.trick[:]
        new.led_trump = self.led_trump
        new.win_key = self.win_key
        new.win_seat = self.win_seat
        new.tricks = self.tricks[:]
        new.played = self.played
        new.tricks_played = self.tricks_played
        new.last_trick = self.last_trick
        new.past = self.past
        new.penalty = self.penalty
        return new

    # ------------------------------------------------------------- queries

    def moves_left(self) -> int | None:
        """The cards still in hand, once the play has begun (docs/bots.md)."""
        if self.phase != PLAY or self.observer != FULL:
            return None
        return sum(self.count[:self.players])

    def rollout(self, rng: random.Random) -> None:
        random_playout(self, rng)

    def hidden_mask(self) -> int:
        return DECK_MASK & ~self.played & ~(1 << self.trump_card)

    def visible(self, place: int, seat: int) -> bool:
        return place == seat and not self.blind

    def observation(self, seat: int) -> int:
        """As :meth:`HandState.observation`, without asking every place (the search's hot path)."""
        return 0 if self.blind else self.may[seat] << (64 * seat)

    def current_player(self) -> int:
        return TERMINAL if self.phase == DONE else self.turn

    def is_terminal(self) -> bool:
        return self.phase == DONE

    def legal_mask(self) -> int:
        """The cards the player to move may play (exact when its hand is known)."""
        hand = self.may[self.turn]
        if self.led_trump:
            trumps = hand & self.trump_mask
            if trumps:
                return trumps
        return hand

    def forced_action(self) -> int | None:
        """In the blind round the table plays each seat's unseen card for it."""
        if self.blind and self.phase == PLAY and self.observer == FULL:
            return (self.may[self.turn] & -self.may[self.turn]).bit_length() - 1
        return None

    def legal_actions(self) -> list[int]:
        if self.phase == PLAY:
            return bits(self.legal_mask())
        if self.phase == BIDDING:
            return list(range(BID, BID + self.cards + 1))
        return []

    # -------------------------------------------------------------- checks

    def check(self, action: int) -> None:
        phase = self.phase
        seat = self.turn
        if phase == DONE:
            raise IllegalAction("phase", "the round is over")
        if 0 <= action < BID:
            if phase != PLAY:
                raise IllegalAction("phase", "no card is played during the bidding")
            self._check_play(seat, action)
            return
        if phase != BIDDING:
            raise IllegalAction("phase", "the bidding is over")
        if not BID <= action <= BID + self.cards:
            raise IllegalAction("bid", f"bids run from 0 to {self.cards} this round", seat)

    def _check_play(self, seat: int, card: int) -> None:
        if card >= DECK_SIZE:
            raise IllegalAction("not-held", f"card {card} is not in this deck", seat)
        name = NULLERN.name(card)
        bit = 1 << card
        if not self._sees(seat):
            # Another seat's card, or one's own blind card: only what is public is
            # checked here; a play against a claim becomes a proof when applied.
            self._check_unseen(seat, bit, self.played | 1 << self.trump_card)
            return
        hand = self.may[seat]
        if not hand & bit:
            raise IllegalAction("not-held", f"seat {seat} does not hold {name}", seat)
        if not self.legal_mask() & bit:
            raise IllegalAction("renege", f"a trump was led: seat {seat} holds a trump", seat)

    # --------------------------------------------------------------- steps

    def step(self, action: int) -> None:
        self.moves += 1
        if action < BID:
            self._play(action)
        else:
            self._bid(action - BID)

    def _bid(self, n: int) -> None:
        seat = self.turn
        self.bids[seat] = n
        self.bids_made += 1
        players = self.players
        if self.bids_made < players:
            self.turn = seat + 1 if seat + 1 < players else 0
            return
        best = -1
        leader = 0
        for i in range(players):  # bidding order: the earliest of the tied leads
            s = (self.dealer + 1 + i) % players
            if self.bids[s] > best:
                best = self.bids[s]
                leader = s
        self.leader = self.turn = leader
        self.phase = PLAY

    def _play(self, card: int) -> None:
        seat = self.turn
        bit = 1 << card
        self.played_by[seat] |= bit
        if self.observer == FULL:
            self.may[seat] ^= bit
            self.count[seat] -= 1
        else:
            self._take_shown(card, seat, seat)
        self.played |= bit
        key = self.keys[card]
        trick = self.trick
        if not trick:
            self.led_trump = key >= TRUMP_KEY
        elif self.led_trump and key < TRUMP_KEY:
            self._claim_void(seat, self.trump_mask, seat)
        if key > self.win_key:
            self.win_key = key
            self.win_seat = seat
        trick.append(card)
        players = self.players
        if len(trick) < players:
            self.turn = seat + 1 if seat + 1 < players else 0
            return
        winner = self.win_seat
        self.tricks[winner] += 1
        self.last_trick = (self.leader, tuple(trick))
        self.past += (self.last_trick,)
        self.tricks_played += 1
        self.trick = []
        self.led_trump = False
        self.win_key = -1
        self.win_seat = -1
        self.leader = winner  # after the last trick too: who won the last trick
        if self.tricks_played == self.cards:
            self.phase = DONE
            return
        self.turn = winner

    # ------------------------------------------------------------- results

    def results(self) -> tuple[list[int], list[int]]:
        """(prize points, grasshoppers) per seat; a seat that had not bid scores nothing.

        Under a penalty the offender scores 0 and takes a grasshopper; the others
        are scored on their bids against the tricks taken when the round stopped.
        """
        prizes = [0] * self.players
        hoppers = [0] * self.players
        for seat, bid in enumerate(self.bids):
            if bid >= 0:
                prizes[seat], hoppers[seat] = prize(bid, self.tricks[seat])
        if self.penalty is not None:
            prizes[self.penalty[0]] = 0
            hoppers[self.penalty[0]] = 1
        return prizes, hoppers

    def points(self) -> list[int]:
        if self.phase != DONE:
            raise ValueError("the round is not over")
        prizes, hoppers = self.results()
        return [p - GRASSHOPPER * g for p, g in zip(prizes, hoppers, strict=True)]

    def detail(self) -> dict[str, object]:
        out: dict[str, object] = {
            "round": self.round_index + 1,
            "cards": self.cards,
            "trump": COLOURS[self.trump],
            "bids": [b if b >= 0 else None for b in self.bids],
            "tricks": self.tricks[:],
        }
        if self.phase == DONE:
            out["prizes"], out["grasshoppers"] = self.results()
        if self.penalty is not None:
            out["penalty"] = {"seat": self.penalty[0], "reason": self.penalty[1]}
        return out

    def summary(self, names: Sequence[str]) -> str:
        parts = [f"round {self.round_index + 1}" + (" (blind)" if self.blind else "")
                 + f", {self.cards} card{'s' if self.cards > 1 else ''}, trump "
                 f"{COLOUR_NAMES[self.trump]} ({NULLERN.name(self.trump_card)} turned)"]
        if self.bids_made:
            parts.append("bids " + "/".join(str(b) if b >= 0 else "-" for b in self.bids))
        parts.append("tricks " + "/".join(str(t) for t in self.tricks))
        if self.penalty is not None:
            parts.append(f"{self.penalty[1]} by {names[self.penalty[0]]}")
        if self.phase == DONE:
            _, hoppers = self.results()
            caught = [names[s] for s, g in enumerate(hoppers) if g]
            parts.append("grasshoppers: " + (", ".join(caught) if caught else "none"))
            parts.append("points " + " ".join(str(p) for p in self.points()))
        return "; ".join(parts)

    def narrate(self, before: NullernState, action: int, names: Sequence[str]) -> list[str]:
        if self.tricks_played > before.tricks_played and self.last_trick is not None:
            leader, cards = self.last_trick
            keys = self.keys
            best = max(range(len(cards)), key=lambda i: (keys[cards[i]], -i))
            winner = (leader + best) % self.players
            return [f"trick {self.tricks_played}: {names[winner]} wins with "
                    f"{NULLERN.name(cards[best])} ({self.tricks[winner]} taken, "
                    f"bid {self.bids[winner]})"]
        if before.phase == BIDDING and self.phase == PLAY:
            total = sum(self.bids)
            return [f"bids total {total} for {self.cards} trick{'s' if self.cards > 1 else ''};"
                    f" {names[self.leader]} leads"]
        return []

    def penalize(self, seat: int, code: str) -> None:
        """The round stops: the offender scores 0 and takes a grasshopper
        (p2pcards/rules/nullern.md)."""
        self.penalty = (seat, code)
        self.phase = DONE

    # ---------------------------------------------------------------- text

    # ----------------------------------------------------------- the table

    def shown_cards(self, action: int) -> list[int]:
        return [action] if action < BID else []

    def exact_bids(self) -> list[bool]:
        return [self.bids[seat] == self.tricks[seat] for seat in range(self.players)]

    def card_plays(self) -> int:
        return self.players * self.tricks_played

    # ------------------------------------------------------------ the screen

    def trump_groups(self) -> tuple[int, ...]:
        return (self.trump,)

    def table_rows(self, names: Sequence[str]) -> list[Row]:
        bids = []
        for seat in range(self.players):
            bid = "-" if self.bids[seat] < 0 else str(self.bids[seat])
            bids.append(f"{names[seat]} bid {bid} took {self.tricks[seat]}")
        rows = [Row("bids", (", ".join(bids),))]  # (the trump: in the summary above them)
        if self.phase == PLAY:
            rows += trick_rows(seated(self.leader, self.trick, self.players), names,
                               leader=self.leader, winning=self.win_seat if self.trick else -1,
                               observer=self.observer, notation=NULLERN)
        return rows

    def last_trick_row(self, names: Sequence[str]) -> Row:
        return last_trick(self.last_trick, self.players, names, self.leader)

    def phase_name(self) -> str:
        return PHASE_NAMES[self.phase]

    def format_action(self, action: int, seat: int = FULL) -> str:
        if action >= BID:
            return f"bid {action - BID}"
        return f"play {NULLERN.name(action)}"

    def parse_action(self, text: str) -> int:
        return parse_action(text, self.cards)


def parse_action(text: str, cards: int = MAX_CARDS) -> int:
    """Action code of a Nullern action text (p2pcards/rules/nullern.md), any case; ``cards``:
    the round's hand size, which a refused bid names."""
    words = text.split()
    if not words:
        raise ActionSyntaxError("empty action")
    verb = words[0].lower()
    if verb == "play" and len(words) == 2:
        with reading(text):
            return NULLERN.parse(words[1])
    if verb == "bid" and len(words) == 2 and whole_number(words[1], MAX_CARDS) is not None:
        return BID + int(words[1])
    if verb == "bid":
        raise ActionSyntaxError(f"cannot read bid {text!r}: a bid is 'bid N' with N from 0 to "
                                f"{cards}")
    raise ActionSyntaxError(f"cannot read Nullern action {text!r}")


# -------------------------------------------------------------- the descriptor


@cache
def _places(players: int, dealer: int, cards: int) -> tuple[int, ...]:
    """Deal mapping: position -> hand, -1 for the turned trump card, N for the undealt."""
    dealt = cards * players
    return tuple((dealer + 1 + i) % players if i < dealt else (-1 if i == dealt else players)
                 for i in range(DECK_SIZE))


def round_cards(number: int) -> int:
    """Cards per player in the deal that follows ``number`` scored deals."""
    if not 0 <= number < ROUNDS:
        raise ValueError(f"a Nullern game has {ROUNDS} rounds; there is no round {number + 1}")
    return ROUND_CARDS[number]


class Nullern(Game):
    name = "nullern"
    title = "Nullern"
    brief = """\
Nullern: each for themselves, 80 cards in four colours ranked 1-20, twenty
rounds of 1 up to 10 cards and back, the last one blind (nobody sees their
own card). A turned card sets trump each round. Everyone bids the exact
number of tricks they will take: hit it for prize points (a made zero pays
most), miss it for a point per trick and a grasshopper (-5 at the end).
Colours need not be followed, but a trump lead must be answered with a
trump if you have one; the highest trump wins, else the highest rank (the
first played on a tie)."""
    moves_help = """\
bid 2, play R12 (or just the card: R12).
Cards: colour then rank 1-20: R red, Y yellow, G green, B blue (R12 is the red
12, B3 the blue 3)."""
    notation = NULLERN
    units = "seats"
    player_counts = (2, 3, 4, 5, 6, 7)
    default_players = 4
    capabilities = Capabilities(shown_cards=True, forced_actions=True, exact_bids=True)
    options = {}
    numbered_deals = ROUNDS
    representative_deal = 9  # the 10-card round

    def deck(self, players: int, options: Mapping[str, int]) -> list[int]:
        return list(range(DECK_SIZE))

    def deal(self, deck: Sequence[int | None], dealer: int, players: int,
             options: Mapping[str, int], *, observer: int = FULL,
             number: int = 0) -> NullernState:
        self.check_players(players)
        if len(deck) != DECK_SIZE:
            raise ValueError(f"a Nullern deck has {DECK_SIZE} cards, not {len(deck)}")
        cards = round_cards(number)
        turned = deck[cards * players]
        if turned is None:
            raise ValueError("the trump card is turned face up")
        state = NullernState.__new__(NullernState)
        state._init_core(players, players + 1, observer)
        state.dealer = dealer
        state.round_index = number
        state.cards = cards
        state.blind = number == BLIND_ROUND
        state.phase = BIDDING
        state.turn = (dealer + 1) % players
        state.trump_card = turned
        state.trump = turned // 20
        state.trump_mask = COLOUR_MASKS[state.trump]
        state.keys = KEYS[state.trump]
        state.bids = [-1] * players
        state.bids_made = 0
        state.leader = -1
        state.trick = []
        state.led_trump = False
        state.win_key = -1
        state.win_seat = -1
        state.tricks = [0] * players
        state.played = 0
        state.tricks_played = 0
        state.last_trick = None
        state.past = ()
        state.penalty = None
        if observer == FULL:
            may = state.may
            for card, place in zip(deck, _places(players, dealer, cards), strict=True):
                if card is None:
                    raise ValueError("a full-information deal sees every card")
                if place >= 0:
                    may[place] |= 1 << card
            state.count[:players] = [cards] * players
            state.count[players] = DECK_SIZE - 1 - cards * players
        else:
            state._place_deck(deck, _places(players, dealer, cards), 1 << turned, DECK_MASK)
        return state

    def observed_deck(self, deck: Sequence[int], dealer: int, players: int,
                      options: Mapping[str, int], seat: int, *,
                      number: int = 0) -> list[int | None]:
        cards = round_cards(number)
        dealt = cards * players
        own = number != BLIND_ROUND
        return [c if i == dealt or (own and i < dealt and (dealer + 1 + i) % players == seat)
                else None for i, c in enumerate(deck)]

    def winner(self, totals: Sequence[int], deals: int,
               options: Mapping[str, int]) -> int | list[int] | None:
        """After the 20th round: the highest total, or every unit tied for it (a shared win)."""
        if deals < ROUNDS:
            return None
        best = max(totals)
        leaders = [unit for unit, total in enumerate(totals) if total == best]
        return leaders[0] if len(leaders) == 1 else leaders

    def bench_position(self, rng: random.Random) -> tuple[str, HandState]:
        """The first card of the 10-card round, every seat having bid 2."""
        options = self.resolve_options({})
        round_ = self.deal(self.shuffled_deck(4, options, rng), 3, 4, options, number=9)
        for seat in range(4):
            round_.apply_text("bid 2", seat)
        return "nullern.first_play_10", round_.view(round_.current_player())


GAME = Nullern()


def random_playout(state: NullernState, rng: random.Random) -> None:
    """Play the round to the end at random through the fast path (bench, rollouts):
    uniform bids from 0 to the cards dealt, then uniform cards of ``legal_mask()``."""
    rnd = rng.random
    while state.phase == BIDDING:
        state.moves += 1
        state._bid(int(rnd() * (state.cards + 1)))
    if state.phase != PLAY:
        return
    if state.observer == FULL:
        _play_out_full(state, rnd)
        return
    play = state._play
    while state.phase == PLAY:
        mask = state.legal_mask()
        k = int(rnd() * mask.bit_count())
        while k:  # the k-th card of the mask (core.pick, inlined: this is the hot path)
            mask &= mask - 1
            k -= 1
        state.moves += 1
        play((mask & -mask).bit_length() - 1)


def _play_out_full(state: NullernState, rnd: Callable[[], float]) -> None:
    """The rest of the play at random, full information, in one tight loop.

    The same moves and the same random draws as :meth:`NullernState._play` one
    card at a time (tested), without the bookkeeping nobody reads afterwards
    (the last trick).
    """
    hands, counts, tricks = state.may, state.count, state.tricks
    keys, trump_mask, players = state.keys, state.trump_mask, state.players
    trick = state.trick
    in_trick = len(trick)
    played = state.played
    led_trump, win_key, win_seat = state.led_trump, state.win_key, state.win_seat
    turn = state.turn
    done = state.tricks_played
    moves = 0
    while done < state.cards:
        hand = hands[turn]
        mask = hand
        if led_trump and hand & trump_mask:
            mask = hand & trump_mask
        k = int(rnd() * mask.bit_count())
        while k:
            mask &= mask - 1
            k -= 1
        bit = mask & -mask
        card = bit.bit_length() - 1
        hands[turn] = hand ^ bit
        counts[turn] -= 1
        played |= bit
        moves += 1
        key = keys[card]
        if not in_trick:
            led_trump = key >= TRUMP_KEY
        if key > win_key:
            win_key, win_seat = key, turn
        in_trick += 1
        if in_trick < players:
            turn = turn + 1 if turn + 1 < players else 0
            continue
        tricks[win_seat] += 1
        done += 1
        state.leader = win_seat
        if done == state.cards:  # as _play: the turn stays with the last card
            break
        turn = win_seat
        in_trick = 0
        led_trump, win_key, win_seat = False, -1, -1
    state.played = played
    state.moves += moves
    state.tricks_played = done
    state.trick = []
    state.led_trump, state.win_key, state.win_seat = False, -1, -1
    state.turn = turn
    state.phase = DONE
