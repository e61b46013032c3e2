"""Control Nut! (p2pcards/rules/controlnut.md).

Four seats, teams 0 (seats 0, 2) and 1 (seats 1, 3).  The hidden places are
the four hands, which hold nut cards and the control cards won at auction;
controls are always public, and so are bid cards once shown (they go back to
a hand *exposed*: known to every view).  HAND steals move a nut card face
down; only the taker and the victim learn which.

Action codes (text forms in p2pcards/rules/controlnut.md, "Action texts"):

* ``0..59``: ``play`` that card (a nut card, or a control card alone);
  ``VALUE_WITH + nut``: ``play VALUE A7``;
* ``ORDER_PLACE`` (``order``), ``SITOUT``, ``PASS``, ``STAR_BANK``,
  ``STAR_KEEP``, ``TRUMP + suit``, ``BONUS + n``;
* tagged codes ``tag << 60 | payload``: ``BID`` (payload: the mask of bid
  cards), ``GIVE`` (up to three bytes ``card + 1 | seat << 6``), and the
  chance actions ``CONTROLS`` (mask of the four controls), ``DRAW`` (the
  control auctioned next) and ``STEAL`` (``victim << 8 | card + 1``; 0 for a
  card not seen).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from itertools import combinations, permutations
from math import ceil

from p2pcards.games.capabilities import Capabilities
from p2pcards.games.cards import Notation, bits, mask_of
from p2pcards.games.core import (
    CHANCE,
    FULL,
    TERMINAL,
    ActionSyntaxError,
    ChanceKind,
    Draw,
    HandState,
    IllegalAction,
    TableChance,
    pick,
    reading,
    whole_number,
)
from p2pcards.games.display import Cards, Piece, Row, dim, trick_row, trick_rows
from p2pcards.games.game import Game, OptionSpec, random_position

NUT_MASK = (1 << 52) - 1
TRUMP_C, TRICK_C, STAR_C, HAND_C, ORDER_C, BONUS_C, VALUE_C, SCORE_C = range(52, 60)
CONTROL_MASK = 0xFF << 52
SUIT_MASKS = tuple(((1 << 13) - 1) << (13 * s) for s in range(4))
VALUE = tuple(c % 13 + 1 for c in range(52))
STARS = tuple({1: 2, 3: 1, 7: 1}.get(v, 0) for v in VALUE)


class ControlNutNotation(Notation):
    """Nut cards ``A1`` .. ``W13`` (suits A H P W, star cards shown with ``*``) and the
    eight controls ``TRUMP`` .. ``SCORE``, shown after the nut suits."""

    def shown(self, card: int) -> str:
        return self.names[card] + ("*" if card < 52 and STARS[card] else "")

    def face(self, card: int) -> str:
        return self.names[card]

    def _normalise(self, text: str) -> str:
        return text.strip().upper().removesuffix("*")  # a star card as a hand shows it

    def style(self, card: int) -> str:
        if card >= 52:
            return "control"
        return f"nut-{card // 13}" + (" star" if STARS[card] else "")

    def group(self, card: int) -> int:
        return min(card // 13, 4)

    def rank(self, card: int) -> int:
        return card % 13 if card < 52 else -card


# nut card = suit * 13 + (value - 1), suits A H P W; the controls are cards 52..59
NUT_SUITS = "AHPW"
CONTROLS = ("TRUMP", "TRICK", "STAR", "HAND", "ORDER", "BONUS", "VALUE", "SCORE")
CONTROLNUT = ControlNutNotation(
    "Control Nut!", [f"{s}{v}" for s in NUT_SUITS for v in range(1, 14)] + list(CONTROLS))
VERB_CONTROLS = ("trump", "star", "bonus", "order")
"""Controls named like a verb of the game: typed alone they are the verb."""
SUIT_WORDS = {f"{word}{plural}": letter.lower()
              for letter, word in zip(NUT_SUITS, ("acorn", "hazelnut", "pecan", "walnut"),
                                      strict=True) for plural in ("", "s")}

(CONTROLS_DRAW, AUCTION_DRAW, AUCTION, GIVE_PHASE, NAME_TRUMP, STAR_PHASE, BONUS_PHASE, PLAY,
 TRUMP_AFTER, STEAL_PHASE, DONE) = range(11)
PHASE_NAMES = ("control draw", "auction draw", "auction", "give", "trump naming", "star choice",
               "bonus declaration", "play", "trump naming", "steal", "done")

VALUE_WITH = 64
ORDER_PLACE, SITOUT, PASS, STAR_BANK, STAR_KEEP = 128, 129, 130, 131, 132
TRUMP = 140
BONUS = 200
MAX_BONUS = 28
BID, GIVE, CONTROLS_TAG, DRAW, STEAL = 1, 2, 3, 4, 5
TAG_SHIFT = 60
PAYLOAD = (1 << TAG_SHIFT) - 1


def tagged(tag: int, payload: int) -> int:
    return tag << TAG_SHIFT | payload


def give_code(pairs: Sequence[tuple[int, int]]) -> int:
    """``give`` handing out (card, seat) pairs."""
    payload = 0
    for i, (card, seat) in enumerate(pairs):
        payload |= ((card + 1) | seat << 6) << (8 * i)
    return tagged(GIVE, payload)


def give_pairs(code: int) -> list[tuple[int, int]]:
    payload = code & PAYLOAD
    pairs = []
    while payload:
        byte = payload & 0xFF
        pairs.append(((byte & 63) - 1, byte >> 6))
        payload >>= 8
    return pairs


def steal_code(victim: int, card: int | None) -> int:
    return tagged(STEAL, victim << 8 | (0 if card is None else card + 1))


class ControlNutState(HandState):
    """One Control Nut! round: auction, declarations, play."""

    __slots__ = (
        "added",
        "auction_card",
        "bids",
        "bonus",
        "cards_played",
        "ctrl_hand",
        "dealer",
        "effects",
        "give_cards",
        "high",
        "high_seat",
        "in_play",
        "last_trick",
        "last_winner",
        "leader",
        "led",
        "order_front",
        "penalty",
        "pending",
        "phase",
        "plays",
        "remaining",
        "set_aside",
        "star_banked",
        "steal_queue",
        "tricks",
        "trump",
        "turn",
        "win_order",
        "won",
    )

    notation = CONTROLNUT
    game = "controlnut"
    team_game = True
    words = SUIT_WORDS
    reward_bound = 200.0  # a round's usual margin

    dealer: int
    phase: int
    turn: int
    in_play: int
    remaining: int
    set_aside: int
    auction_card: int
    cards_played: int
    pending: list[int]
    bids: list[int]
    high: int
    high_seat: int
    give_cards: int
    win_order: list[int]
    last_winner: int
    ctrl_hand: list[int]
    trump: int
    star_banked: bool
    bonus: tuple[int, int] | None
    order_front: int
    leader: int
    led: int
    plays: list[tuple[int, int]]
    effects: list[tuple[int, int]]
    steal_queue: list[int] | None
    won: list[int]
    tricks: list[int]
    added: list[int]
    last_trick: tuple[tuple[tuple[int, int], ...], int] | None
    penalty: tuple[int, str] | None

    def clone(self) -> ControlNutState:
        new = ControlNutState.__new__(ControlNutState)
        self._copy_core(new)
        new.cards_played = self.cards_played
        new.dealer = self.dealer
        new.phase = self.phase
        new.turn = self.turn
        new.in_play = self.in_play
        new.remaining = self.remaining
        new.set_aside = self.set_aside
        new.auction_card = self.auction_card
        new.high = self.high
        new.high_seat = self.high_seat
        new.give_cards = self.give_cards
        new.last_winner = self.last_winner
        new.trump = self.trump
        new.star_banked = self.star_banked
        new.bonus = self.bonus
        new.order_front = self.order_front
        new.leader = self.leader
        new.led = self.led
        new.last_trick = self.last_trick
        new.penalty = self.penalty
        new.pending = self.pending[:]
        new.bids = self.bids[:]
        new.win_order = self.win_order[:]
        new.ctrl_hand = self.ctrl_hand[:]
        new.plays = self.plays[:]
        new.effects = self.effects[:]
        new.steal_queue = None if self.steal_queue is None else self.steal_queue[:]
        new.won = self.won[:]
        new.tricks = self.tricks[:]
        new.added = self.added[:]
        return new

    # ---------------------------------------------------------------- queries

    def current_player(self) -> int:
        phase = self.phase
        if phase in (CONTROLS_DRAW, AUCTION_DRAW, STEAL_PHASE):
            return CHANCE
        if phase == DONE:
            return TERMINAL
        if phase in (AUCTION, PLAY):
            return self.pending[0]
        return self.turn

    def is_terminal(self) -> bool:
        return self.phase == DONE

    def public_action(self, action: int, seat: int) -> int:
        if action >> TAG_SHIFT == STEAL and seat not in (self.turn, (action & PAYLOAD) >> 8):
            return steal_code((action & PAYLOAD) >> 8, None)
        return action

    def rollout(self, rng: random.Random) -> None:
        random_playout(self, rng)

    def candidate_actions(self, rng: random.Random) -> list[int] | None:
        """Bids worth searching: for a spread of totals from the lowest to the highest
        legal one, the bid of that total giving away the fewest stars."""
        if self.phase != AUCTION:
            return None
        masks = self._bid_masks(self.pending[0])
        if len(masks) < 2:
            return None
        best: dict[int, tuple[int, int]] = {}
        for mask in masks:
            cards = bits(mask)
            total = sum(VALUE[c] for c in cards)
            key = (sum(STARS[c] for c in cards), mask)
            if total not in best or key < best[total]:
                best[total] = key
        totals = sorted(best)
        picks = {totals[round(i * (len(totals) - 1) / 7)] for i in range(8)}
        return [tagged(BID, best[t][1]) for t in sorted(picks)]

    def hidden_mask(self) -> int:
        held = 0
        for controls in self.ctrl_hand:
            held |= controls
        return NUT_MASK & ~self._public_cards() | held

    def holder(self, control: int) -> int:
        """The seat holding ``control`` in hand, or -1."""
        for seat, mask in enumerate(self.ctrl_hand):
            if mask >> control & 1:
                return seat
        return -1

    def nut_count(self, seat: int) -> int:
        """Nut cards in ``seat``'s hand (public: controls in hand are known)."""
        return self.count[seat] - self.ctrl_hand[seat].bit_count()

    def _public_cards(self) -> int:
        """Nut and control cards face up: won, in the trick, bid or being handed out."""
        out = self.won[0] | self.won[1] | self.give_cards
        for _, action in self.plays:
            out |= _cards_of(action)
        for mask in self.bids:
            if mask > 0:
                out |= mask
        return out

    # ----------------------------------------------------------- legal moves

    def legal_actions(self) -> list[int]:
        phase = self.phase
        if phase == PLAY:
            return self._play_actions(self.pending[0])
        if phase == AUCTION:
            bids = self._bid_masks(self.pending[0])
            return [tagged(BID, m) for m in bids] if bids else [PASS]
        if phase == GIVE_PHASE:
            cards = bits(self.give_cards)
            others = [s for s in range(4) if s != self.turn]
            return [give_code(list(zip(cards, seats, strict=True)))
                    for seats in permutations(others, len(cards))]
        if phase in (NAME_TRUMP, TRUMP_AFTER):
            return [TRUMP + s for s in range(4)]
        if phase == STAR_PHASE:
            return [STAR_BANK, STAR_KEEP]
        if phase == BONUS_PHASE:
            return [BONUS + n for n in range(MAX_BONUS + 1)]
        if phase == AUCTION_DRAW:
            return [tagged(DRAW, c) for c in bits(self.remaining)]
        return []

    def _bid_masks(self, seat: int) -> list[int]:
        nuts = self.may[seat] & NUT_MASK
        cards = bits(nuts)
        high = self.high
        if len(cards) < 3:
            total = sum(VALUE[c] for c in cards)
            return [nuts] if cards and total != high else []
        return [mask_of(combo) for combo in combinations(cards, 3)
                if VALUE[combo[0]] + VALUE[combo[1]] + VALUE[combo[2]] != high]

    def _play_actions(self, seat: int) -> list[int]:
        hand = self.may[seat]
        nuts = hand & NUT_MASK
        playable = nuts & SUIT_MASKS[self.led] if self.led >= 0 else 0
        playable = playable or nuts
        actions = bits(playable)
        for control in bits(self.ctrl_hand[seat]):
            if control == VALUE_C and nuts:
                actions += [VALUE_WITH + n for n in bits(playable)]
            else:
                actions.append(control)
            if control == ORDER_C:
                actions.append(ORDER_PLACE)
        if self.order_front == seat:
            actions += [ORDER_C, SITOUT]
        return actions

    # ----------------------------------------------------------------- checks

    def check(self, action: int) -> None:
        phase = self.phase
        if phase == DONE:
            raise IllegalAction("phase", "the round is over")
        tag = action >> TAG_SHIFT
        if tag in (CONTROLS_TAG, DRAW, STEAL) or phase in (CONTROLS_DRAW, AUCTION_DRAW,
                                                           STEAL_PHASE):
            self._check_chance(action, tag)
            return
        seat = self.current_player()
        if phase == AUCTION:
            self._check_bid(seat, action, tag)
        elif phase == GIVE_PHASE:
            self._check_give(seat, action, tag)
        elif phase in (NAME_TRUMP, TRUMP_AFTER):
            if not TRUMP <= action < TRUMP + 4:
                raise IllegalAction("phase", f"seat {seat} names a trump suit now", seat)
        elif phase == STAR_PHASE:
            if action not in (STAR_BANK, STAR_KEEP):
                raise IllegalAction("phase", f"seat {seat} chooses 'star bank' or 'star keep'",
                                    seat)
        elif phase == BONUS_PHASE:
            if not BONUS <= action <= BONUS + 99:
                raise IllegalAction("phase", f"seat {seat} declares the bonus now", seat)
            if action > BONUS + MAX_BONUS:
                raise IllegalAction("bonus", f"seat {seat} declares a bonus of 0 to {MAX_BONUS}"
                                    " tricks now", seat)
        else:
            self._check_play(seat, action)

    def _check_chance(self, action: int, tag: int) -> None:
        phase = self.phase
        payload = action & PAYLOAD
        if phase == CONTROLS_DRAW and tag == CONTROLS_TAG:
            if payload & ~CONTROL_MASK or payload.bit_count() != 4:
                raise IllegalAction("chance", "a round uses four different control cards")
        elif phase == AUCTION_DRAW and tag == DRAW:
            if not self.remaining >> payload & 1:
                raise IllegalAction("chance", "the control auctioned must be one of this round's"
                                    " not yet auctioned")
        elif phase == STEAL_PHASE and tag == STEAL:
            victim, card = payload >> 8, (payload & 0xFF) - 1
            if not self.steal_queue or victim != self.steal_queue[0]:
                want = self.steal_queue[0] if self.steal_queue else None
                raise IllegalAction("chance", f"HAND takes from seat {want} now, not {victim}")
            if card < 0:
                if self.observer == FULL:
                    raise IllegalAction("chance", "a full-information steal names the card")
            elif card >= 52:
                raise IllegalAction("chance", "HAND takes nut cards only")
            else:
                self._check_cards_held(victim, 1 << card)
        else:
            raise IllegalAction("phase", f"no such chance event during the "
                                f"{PHASE_NAMES[phase]}")

    def _check_bid(self, seat: int, action: int, tag: int) -> None:
        if action == PASS:
            nuts = self.nut_count(seat)
            # public proof of a legal bid: any nut card before the first bid; five or more
            # nut cards always hold a triple off the high bid (at most four share a value)
            must = (self._bid_masks(seat) if self._sees(seat)
                    else nuts >= 5 or (nuts > 0 and self.high_seat < 0))
            if must:
                raise IllegalAction("bid", f"seat {seat} has a legal bid and must bid", seat)
            return
        if tag != BID:
            raise IllegalAction("phase", f"seat {seat} bids or passes now", seat)
        mask = action & PAYLOAD
        if mask & ~NUT_MASK:
            raise IllegalAction("bid", "control cards are never bid", seat)
        self._check_cards_held(seat, mask)
        size = mask.bit_count()
        nuts = self.nut_count(seat)
        if size != min(3, nuts):
            raise IllegalAction("bid", f"a bid is three nut cards (all of them when fewer are "
                                f"held): seat {seat} holds {nuts}", seat)
        total = sum(VALUE[c] for c in bits(mask))
        if total == self.high:
            raise IllegalAction("bid", f"a bid may not equal the high bid ({self.high})", seat)

    def _check_give(self, seat: int, action: int, tag: int) -> None:
        if tag != GIVE:
            raise IllegalAction("phase", f"seat {seat} hands out the bid cards now", seat)
        pairs = give_pairs(action)
        cards = [c for c, _ in pairs]
        seats = [s for _, s in pairs]
        if mask_of(cards) != self.give_cards or len(cards) != self.give_cards.bit_count():
            raise IllegalAction("give", "the winner hands out exactly its bid cards: "
                                + CONTROLNUT.format_mask(self.give_cards), seat)
        if seat in seats or len(set(seats)) != len(seats) or not all(0 <= s < 4 for s in seats):
            raise IllegalAction("give", "the bid cards go to the other players, at most one each",
                                seat)

    def _check_cards_held(self, seat: int, cards: int) -> None:
        """The seat must hold ``cards``: exactly for a seen hand, else what is public."""
        if self._sees(seat):
            if cards & ~self.may[seat]:
                raise IllegalAction("not-held", f"seat {seat} does not hold "
                                    + CONTROLNUT.format_mask(cards & ~self.may[seat]), seat)
            return
        self._check_unseen(seat, cards, self._public_cards())

    def _check_play(self, seat: int, action: int) -> None:
        if action == ORDER_PLACE:
            if not self.ctrl_hand[seat] >> ORDER_C & 1:
                raise IllegalAction("not-held", f"seat {seat} does not hold ORDER", seat)
            return
        if action == SITOUT:
            if self.order_front != seat:
                raise IllegalAction("order", "only the player with ORDER in front may sit out",
                                    seat)
            return
        if action == ORDER_C and self.order_front == seat:
            return
        if action >= VALUE_WITH + 52 or action < 0:
            raise IllegalAction("phase", f"seat {seat} plays a card now", seat)
        nut = action - VALUE_WITH if action >= VALUE_WITH else action
        controls = 1 << VALUE_C if action >= VALUE_WITH else 0
        if nut >= 52:
            controls |= 1 << nut
            if not self.ctrl_hand[seat] & controls:
                raise IllegalAction("not-held", f"seat {seat} does not hold "
                                    f"{CONTROLNUT.name(nut)}", seat)
            if nut == VALUE_C and self.nut_count(seat):
                raise IllegalAction("value", "VALUE is played together with a nut card while "
                                    f"seat {seat} holds one", seat)
            return
        if controls and not self.ctrl_hand[seat] & controls:
            raise IllegalAction("not-held", f"seat {seat} does not hold VALUE", seat)
        if not self.nut_count(seat):
            raise IllegalAction("not-held", f"seat {seat} holds no nut card", seat)
        self._check_cards_held(seat, 1 << nut)
        led = self.led
        if led < 0 or nut // 13 == led:
            return
        if self._sees(seat):
            if self.may[seat] & SUIT_MASKS[led]:
                raise IllegalAction("renege", f"must follow suit: seat {seat} holds "
                                    f"{_suit_word(led)}", seat)
            return
        known = self._known_in(seat) & SUIT_MASKS[led]  # (a breach public anyway)
        if known:
            raise IllegalAction("renege", f"must follow suit: seat {seat} holds"
                                f" {CONTROLNUT.format_mask(known)}, which everyone saw go"
                                " to it", seat)

    # ------------------------------------------------------------------ steps

    def step(self, action: int) -> None:
        self.moves += 1
        phase = self.phase
        if phase == PLAY:
            self._play(action)
        elif phase == AUCTION:
            self._bid(action)
        elif phase == STEAL_PHASE:
            self._steal(action & PAYLOAD)
        elif phase == AUCTION_DRAW:
            self._draw(action & PAYLOAD)
        elif phase == CONTROLS_DRAW:
            self.in_play = self.remaining = action & PAYLOAD
            self.phase = AUCTION_DRAW
        elif phase == GIVE_PHASE:
            for card, seat in give_pairs(action):
                self._put_shown(card, seat)
            self.give_cards = 0
            self._after_auction()
        elif phase == NAME_TRUMP:
            self.trump = action - TRUMP
            self._declarations(NAME_TRUMP)
        elif phase == TRUMP_AFTER:
            self.trump = action - TRUMP
            self.effects.pop(0)
            self._run_effects()
        elif phase == STAR_PHASE:
            if action == STAR_BANK:
                self._to_pile(STAR_C, self.turn)
                self.star_banked = True
            self._declarations(STAR_PHASE)
        elif phase == BONUS_PHASE:
            self.bonus = (self.turn & 1, action - BONUS)
            self._to_pile(BONUS_C, self.turn)
            self._declarations(BONUS_PHASE)

    def _to_pile(self, control: int, seat: int) -> None:
        self._take_shown(control, seat, seat)
        self.ctrl_hand[seat] &= ~(1 << control)
        self.won[seat & 1] |= 1 << control

    def _draw(self, control: int) -> None:
        self.auction_card = control
        self.remaining &= ~(1 << control)
        first = self.last_winner if self.last_winner >= 0 else self.dealer
        self.pending = [(first + i) % 4 for i in range(4)]
        self.bids = [-1, -1, -1, -1]
        self.high = 0
        self.high_seat = -1
        self.phase = AUCTION

    def _bid(self, action: int) -> None:
        seat = self.pending.pop(0)
        if action == PASS:
            self.bids[seat] = 0
        else:
            mask = action & PAYLOAD
            total = 0
            rest = mask
            while rest:  # the bid cards go face up on the table
                low = rest & -rest
                rest ^= low
                card = low.bit_length() - 1
                total += VALUE[card]
                if self.observer == FULL:
                    self.may[seat] ^= low
                    self.count[seat] -= 1
                    if self.exposed:
                        self.exposed.pop(card, None)
                    if self.private:
                        self._forget(card)
                else:
                    self._take_shown(card, seat, seat)
            self.bids[seat] = mask
            if total > self.high:
                self.high, self.high_seat = total, seat
        if self.pending:
            return
        winner = self.high_seat
        control = self.auction_card
        if winner < 0:
            self.set_aside |= 1 << control
            self._after_auction()
            return
        may, count, exposed = self.may, self.count, self.exposed
        for other, mask in enumerate(self.bids):
            if other != winner and mask > 0:  # a losing bid goes back, known to all
                may[other] |= mask
                count[other] += mask.bit_count()
                for card in bits(mask):
                    exposed[card] = 1 << other
        self._put_shown(control, winner)
        self.ctrl_hand[winner] |= 1 << control
        self.win_order.append(winner)
        self.last_winner = winner
        self.give_cards = self.bids[winner]
        self.bids = [-1, -1, -1, -1]
        self.phase = GIVE_PHASE
        self.turn = winner

    def _after_auction(self) -> None:
        self.bids = [-1, -1, -1, -1]
        self.high, self.high_seat = 0, -1
        if self.remaining:
            self.phase = AUCTION_DRAW
        else:
            self._declarations(GIVE_PHASE)

    def _declarations(self, done: int) -> None:
        """Before the first lead, in order: trump (unless TRUMP is in play), STAR, BONUS."""
        trump_control_won = (self.in_play & ~self.set_aside) >> TRUMP_C & 1
        if done < NAME_TRUMP and not trump_control_won and self.win_order:
            most = max(self.win_order.count(s) for s in set(self.win_order))
            tied = {s for s in set(self.win_order) if self.win_order.count(s) == most}
            self.turn = next(s for s in reversed(self.win_order) if s in tied)
            self.phase = NAME_TRUMP
            return
        if done < STAR_PHASE and self.holder(STAR_C) >= 0:
            self.turn = self.holder(STAR_C)
            self.phase = STAR_PHASE
            return
        if done < BONUS_PHASE and self.holder(BONUS_C) >= 0:
            self.turn = self.holder(BONUS_C)
            self.phase = BONUS_PHASE
            return
        self.phase = PLAY
        self._start_trick(self.last_winner)

    def _start_trick(self, leader: int) -> None:
        """The end-of-play check, then the seats that play this trick from ``leader``."""
        count = self.count
        teams = {s & 1 for s in range(4) if count[s]}
        if len(teams) < 2:
            self._end_play()
            return
        self.pending = [(leader + i) % 4 for i in range(4) if count[(leader + i) % 4]]
        self.leader = self.pending[0]
        self.plays = []
        self.led = -1

    def _play(self, action: int) -> None:
        seat = self.pending.pop(0)
        if action == SITOUT:
            pass
        elif action == ORDER_PLACE:
            self._take_shown(ORDER_C, seat, seat)
            self.ctrl_hand[seat] &= ~(1 << ORDER_C)
            self.order_front = seat
        elif action == ORDER_C and self.order_front == seat:  # from in front, not from hand
            self.order_front = -1
            self.plays.append((seat, action))
            self.cards_played += 1
        else:
            self.plays.append((seat, action))
            boosted = action >= VALUE_WITH
            card = action - VALUE_WITH if boosted else action
            self._take_played(card, seat)
            if boosted:
                self._take_played(VALUE_C, seat)
            if card < 52:
                suit = card // 13
                if self.led < 0:
                    self.led = suit
                elif suit != self.led:
                    self._claim_void(seat, SUIT_MASKS[self.led], seat)
        if not self.pending:
            self._end_trick()

    def _take_played(self, card: int, seat: int) -> None:
        """``card`` leaves ``seat``'s hand face up, into the trick."""
        self.cards_played += 1
        if card >= 52:
            self.ctrl_hand[seat] &= ~(1 << card)
        if self.observer != FULL:
            self._take_shown(card, seat, seat)
            return
        self.may[seat] &= ~(1 << card)
        self.count[seat] -= 1
        if self.exposed:
            self.exposed.pop(card, None)
        if self.private:
            self._forget(card)
        if self.transfers:
            self._shown_after_transfer(card, seat)

    def _end_trick(self) -> None:
        plays = self.plays
        if not plays:  # everyone with cards sat out: nothing to win
            self._start_trick(self.leader)
            return
        winner = _trick_winner(plays, self.led, self.trump)
        team = winner & 1
        for _, action in plays:
            self.won[team] |= _cards_of(action)
        self.tricks[team] += 1
        self.last_trick = (tuple(plays), winner)
        self.effects = [(a, s) for s, a in plays if a in (TRUMP_C, HAND_C)]
        self.leader = winner
        self._run_effects()

    def _run_effects(self) -> None:
        """After-effects of the trick just won, in the order the cards were played."""
        while self.effects:
            control, seat = self.effects[0]
            if control == TRUMP_C:
                self.turn = seat
                self.phase = TRUMP_AFTER
                return
            if self.steal_queue is None:  # HAND: the next opponent clockwise first
                self.steal_queue = [(seat + 1) % 4, (seat + 3) % 4]
            while self.steal_queue and self.nut_count(self.steal_queue[0]) == 0:
                self.steal_queue.pop(0)
            if self.steal_queue:
                self.turn = seat
                self.phase = STEAL_PHASE
                return
            self.steal_queue = None
            self.effects.pop(0)
        self.phase = PLAY
        self._start_trick(self.leader)

    def _steal(self, payload: int) -> None:
        victim, card = payload >> 8, (payload & 0xFF) - 1
        assert self.steal_queue is not None
        self.steal_queue.pop(0)
        self._move_hidden(1, victim, self.turn, 1 << card if card >= 0 else -1, NUT_MASK)
        self._run_effects()

    def _end_play(self) -> None:
        """One partnership (or nobody) holds cards: it adds ceil(cards / 4) tricks."""
        left = sum(self.count)
        if left:
            team = next(s for s in range(4) if self.count[s]) & 1
            self.added[team] = ceil(left / 4)
            self.tricks[team] += self.added[team]
        if self.order_front >= 0:
            self.won[self.order_front & 1] |= 1 << ORDER_C
            self.order_front = -1
        self.pending = []
        self.phase = DONE

    # ---------------------------------------------------------------- results

    def stars(self, team: int) -> int:
        pile = self.won[team]
        total = sum(STARS[c] for c in bits(pile & NUT_MASK))
        if pile >> STAR_C & 1:
            total += 2 if self.star_banked else 4
        return total

    def points(self) -> list[int]:
        if self.phase != DONE:
            raise ValueError("the round is not over")
        pts = [round_score(self.tricks[t], self.stars(t), self.won[t], self.bonus_made(t))
               for t in (0, 1)]
        if self.penalty is not None:
            pts[self.penalty[0] & 1] = 0
        return pts

    def bonus_made(self, team: int) -> bool:
        return self.bonus is not None and self.bonus[0] == team \
            and self.tricks[team] == self.bonus[1]

    def detail(self) -> dict[str, object]:
        out: dict[str, object] = {
            "tricks": self.tricks[:], "added": self.added[:],
            "stars": [self.stars(0), self.stars(1)],
            "controls": [[CONTROLNUT.name(c) for c in bits(self.won[t] & CONTROL_MASK)]
                         for t in (0, 1)],
            "trump": NUT_SUITS[self.trump] if self.trump >= 0 else None,
        }
        if self.bonus is not None:
            out["bonus"] = {"team": self.bonus[0], "tricks": self.bonus[1],
                            "made": self.bonus_made(self.bonus[0])}
        if self.penalty is not None:
            out["penalty"] = {"seat": self.penalty[0], "reason": self.penalty[1]}
        return out

    def penalize(self, seat: int, code: str) -> None:
        """The offender's side scores 0; the other scores its pile as it stands."""
        self.penalty = (seat, code)
        self.phase = DONE

    def summary(self, names: Sequence[str]) -> str:
        text = (f"tricks {self.tricks[0]}-{self.tricks[1]}, stars {self.stars(0)}-"
                f"{self.stars(1)}")
        if self.trump >= 0:
            text = f"trump {NUT_SUITS[self.trump]}; " + text
        if self.penalty is not None:
            text += f"; {self.penalty[1]} by {names[self.penalty[0]]}"
        if self.phase == DONE:
            pts = self.points()
            text += f"; points {pts[0]}-{pts[1]}"
        return text

    def narrate(self, before: ControlNutState, action: int, names: Sequence[str]) -> list[str]:
        lines = []
        ended = self.phase == DONE and before.phase != DONE and any(self.added)
        if self.last_trick is not None and self.last_trick is not before.last_trick:
            played = [t - (self.added[i] if ended else 0) for i, t in enumerate(self.tricks)]
            lines.append(f"{names[self.last_trick[1]]} wins the trick (tricks "
                         f"{played[0]}-{played[1]})")
        if before.phase == AUCTION and self.phase != AUCTION:
            control = CONTROLNUT.name(before.auction_card)
            lines.append(f"{names[self.last_winner]} wins {control}" if self.phase == GIVE_PHASE
                         else f"nobody can bid: {control} is set aside")
        if ended:
            team = 0 if self.added[0] else 1
            added = self.added[team]
            lines.append(f"only team {team} ({names[team]} & {names[team + 2]}) holds cards:"
                         f" it adds {added} trick{'s' if added != 1 else ''} (tricks "
                         f"{self.tricks[0]}-{self.tricks[1]})")
        return lines

    def chance_action(self, rng: random.Random) -> int:
        phase = self.phase
        if self.observer != FULL:
            raise ValueError("chance is drawn by the table, not by a view")
        if phase == CONTROLS_DRAW:
            return tagged(CONTROLS_TAG, mask_of(rng.sample(range(52, 60), 4)))
        if phase == AUCTION_DRAW:
            return tagged(DRAW, rng.choice(bits(self.remaining)))
        if phase == STEAL_PHASE and self.steal_queue:
            victim = self.steal_queue[0]
            return steal_code(victim, pick(self.may[victim] & NUT_MASK, rng.random()))
        raise ValueError("no chance event is pending")

    # ------------------------------------------------------------------- text

    # ----------------------------------------------------------- the table

    def shown_cards(self, action: int) -> list[int]:
        if action >> TAG_SHIFT == BID:
            return bits(action & NUT_MASK)
        if 0 <= action < 52:
            return [action]
        if VALUE_WITH <= action < VALUE_WITH + 52:
            return [action - VALUE_WITH]
        return []

    def table_chance(self) -> TableChance:
        if self.phase == STEAL_PHASE and self.steal_queue:
            return TableChance(ChanceKind.TAKE, source=self.steal_queue[0], target=self.turn)
        if self.phase in (CONTROLS_DRAW, AUCTION_DRAW):
            return TableChance(ChanceKind.DRAW)
        raise ValueError("no chance event is pending")

    def drawn_chance(self, draw: Draw) -> int:
        if self.phase == CONTROLS_DRAW:  # four of the eight controls are in play
            return tagged(CONTROLS_TAG, sum(1 << (52 + i) for i in draw.sample(8, 4)))
        remaining = bits(self.remaining)  # the control auctioned next
        return tagged(DRAW, remaining[draw.choice(len(remaining))])

    def taken_chance(self, card: int | None) -> int:
        assert self.steal_queue
        return steal_code(self.steal_queue[0], card)

    def multi_card_rule(self) -> tuple[int, int]:
        nuts = self.may[self.observer] & NUT_MASK
        return min(3, nuts.bit_count()), nuts

    def shorthand(self, text: str) -> str | None:
        """Input that starts with a card means ``play`` (``A7``, ``TRICK``, ``VALUE
        A7``), but for the controls whose names are verbs too: ``trump``, ``star``,
        ``bonus`` and ``order`` keep their own meaning (``play TRUMP`` plays the card)."""
        words = text.split()
        if not words or words[0].lower() in VERB_CONTROLS:
            return None
        try:
            CONTROLNUT.parse(words[0])
        except ValueError:
            return None
        return "play " + " ".join(words)

    def card_plays(self) -> int:
        return self.cards_played

    # ------------------------------------------------------------ the screen

    def trump_groups(self) -> tuple[int, ...]:
        return (self.trump,) if self.trump >= 0 else ()

    def table_rows(self, names: Sequence[str]) -> list[Row]:
        rows = []
        if self.in_play:
            controls: list[Piece] = [Cards(tuple(bits(self.in_play & ~self.set_aside)))]
            held = [f"{names[s]} " + " ".join(CONTROLNUT.name(c) for c in bits(self.ctrl_hand[s]))
                    for s in range(4) if self.ctrl_hand[s]]
            if held:
                controls.append("  (held: " + "; ".join(held) + ")")
            rows.append(Row("controls", tuple(controls)))
        if self.phase == AUCTION and self.auction_card >= 0:
            bids = [f"{names[s]} " + ("pass" if m == 0 else _bid_text(m))
                    for s, m in enumerate(self.bids) if m >= 0]
            rows.append(Row("auction", (Cards((self.auction_card,)), f", high {self.high}"
                                        + ("; " + ", ".join(bids) if bids else ""))))
        if self.phase == PLAY:
            plays = self.plays
            rows += trick_rows([(seat, tuple(bits(_cards_of(action)))) for seat, action in plays],
                               names, leader=self.leader, observer=self.observer,
                               winning=_trick_winner(plays, self.led, self.trump) if plays else -1,
                               notation=CONTROLNUT)
        return rows

    def last_trick_row(self, names: Sequence[str]) -> Row:
        if self.last_trick is None:
            return dim("no trick has been played yet")
        plays, winner = self.last_trick
        return trick_row("last trick", [(seat, bits(_cards_of(action))) for seat, action in plays],
                         names, won_by=names[winner])

    def phase_name(self) -> str:
        return PHASE_NAMES[self.phase]

    def format_action(self, action: int, seat: int = FULL) -> str:
        tag = action >> TAG_SHIFT
        payload = action & PAYLOAD
        name = CONTROLNUT.name
        if tag == BID:
            return "bid " + _bid_text(payload)
        if tag == GIVE:
            return "give " + " ".join(f"{name(c)}:{s}" for c, s in give_pairs(action))
        if tag == CONTROLS_TAG:
            return "controls " + CONTROLNUT.format_mask(payload)
        if tag == DRAW:
            return f"auction {name(payload)}"
        if tag == STEAL:
            victim, card = payload >> 8, (payload & 0xFF) - 1
            shown = card >= 0 and (seat in (FULL, victim, self.turn))
            return f"steal {victim} {name(card) if shown else '?'}"
        if action < VALUE_WITH:
            return f"play {name(action)}"
        if action < VALUE_WITH + 52:
            return f"play VALUE {name(action - VALUE_WITH)}"
        fixed = {ORDER_PLACE: "order", SITOUT: "sitout", PASS: "pass", STAR_BANK: "star bank",
                 STAR_KEEP: "star keep"}
        if action in fixed:
            return fixed[action]
        if TRUMP <= action < TRUMP + 4:
            return f"trump {NUT_SUITS[action - TRUMP]}"
        return f"bonus {action - BONUS}"

    def parse_action(self, text: str) -> int:
        return parse_action(text)


def _bid_text(mask: int) -> str:
    """Bid cards in a stable order: by value, then suit."""
    return " ".join(CONTROLNUT.name(c) for c in sorted(bits(mask), key=lambda c: (VALUE[c], c)))


def _cards_of(action: int) -> int:
    """The cards a play action puts on the table."""
    if VALUE_WITH <= action < VALUE_WITH + 52:
        return 1 << VALUE_C | 1 << (action - VALUE_WITH)
    if action < 60:
        return 1 << action
    return 0


def _trick_winner(plays: Sequence[tuple[int, int]], led: int, trump: int) -> int:
    """TRICK wins; else the highest trump; else the highest of the suit led (VALUE adds 2,
    equal values go to the earlier card); a trick without nut cards: the first control."""
    best_seat = -1
    best_key = -1
    for seat, action in plays:
        if action == TRICK_C:
            return seat
    for seat, action in plays:
        boosted = VALUE_WITH <= action < VALUE_WITH + 52
        nut = action - VALUE_WITH if boosted else action
        if nut >= 52:
            continue
        value = VALUE[nut] + (2 if boosted else 0)
        suit = nut // 13
        if suit == trump:
            key = 100 + value
        elif suit == led:
            key = value
        else:
            continue
        if key > best_key:
            best_key, best_seat = key, seat
    return best_seat if best_seat >= 0 else plays[0][0]


def round_score(tricks: int, stars: int, pile: int, bonus_made: bool) -> int:
    """Tricks x stars + 5 per control card in the pile + 20 for SCORE + 50 for BONUS made."""
    controls = (pile & CONTROL_MASK).bit_count()
    return (tricks * stars + 5 * controls + (20 if pile >> SCORE_C & 1 else 0)
            + (50 if bonus_made else 0))


def _suit_word(suit: int) -> str:
    return ("acorns", "hazelnuts", "pecans", "walnuts")[suit]


def parse_action(text: str) -> int:
    """Action code of a Control Nut! action text (p2pcards/rules/controlnut.md), any case."""
    words = text.split()
    if not words:
        raise ActionSyntaxError("empty action")
    verb, args = words[0].lower(), words[1:]
    parse = CONTROLNUT.parse
    with reading(text):
        if verb == "play" and len(args) == 1:
            return parse(args[0])
        if verb == "play" and len(args) == 2 and parse(args[0]) == VALUE_C:
            nut = parse(args[1])
            if nut >= 52:
                raise ActionSyntaxError(f"VALUE is played with a nut card: {text!r}")
            return VALUE_WITH + nut
        if verb in ("order", "sitout", "pass") and not args:
            return {"order": ORDER_PLACE, "sitout": SITOUT, "pass": PASS}[verb]
        if verb == "star" and len(args) == 1 and args[0].lower() in ("bank", "keep"):
            return STAR_BANK if args[0].lower() == "bank" else STAR_KEEP
        if verb == "bonus" and len(args) == 1 and whole_number(args[0], 99) is not None:
            return BONUS + int(args[0])
        if verb == "trump" and len(args) == 1 and len(args[0]) == 1 \
                and args[0].upper() in NUT_SUITS:
            return TRUMP + NUT_SUITS.index(args[0].upper())
        if verb == "trump":
            raise ActionSyntaxError(f"cannot read {text!r}: trump names a nut suit, A, H, P or"
                                    " W (acorns, hazelnuts, pecans, walnuts)")
        if verb == "bid" and 1 <= len(args) <= 3:
            cards = [parse(a) for a in args]
            if len(set(cards)) != len(cards):
                raise ActionSyntaxError(f"a card twice in {text!r}")
            return tagged(BID, mask_of(cards))
        if verb == "give" and 1 <= len(args) <= 3:
            pairs = []
            for arg in args:
                card_text, sep, seat_text = arg.partition(":")
                if not sep or whole_number(seat_text, 3) is None:
                    raise ActionSyntaxError(f"cannot read {arg!r} in {text!r}: expected CARD:SEAT")
                pairs.append((parse(card_text), int(seat_text)))
            if any(c >= 52 or s > 3 for c, s in pairs):
                raise ActionSyntaxError(f"give hands out nut cards to seats 0-3: {text!r}")
            return give_code(pairs)
        if verb == "controls" and len(args) == 4:
            cards = [parse(a) for a in args]
            if any(c < 52 for c in cards) or len(set(cards)) != 4:
                raise ActionSyntaxError(f"four different control cards: {text!r}")
            return tagged(CONTROLS_TAG, mask_of(cards))
        if verb == "auction" and len(args) == 1:
            card = parse(args[0])
            if card < 52:
                raise ActionSyntaxError(f"only control cards are auctioned: {text!r}")
            return tagged(DRAW, card)
        if verb == "steal" and len(args) == 2 and args[0] in "0123" and len(args[0]) == 1:
            stolen = None if args[1] == "?" else parse(args[1])
            if stolen is not None and stolen >= 52:
                raise ActionSyntaxError(f"HAND takes nut cards only: {text!r}")
            return steal_code(int(args[0]), stolen)
    raise ActionSyntaxError(f"cannot read Control Nut! action {text!r}")


class ControlNut(Game):
    name = "controlnut"
    title = "Control Nut!"
    brief = """\
Control Nut!: two partnerships, 52 nut cards (acorn A, hazelnut H, pecan P,
walnut W, values 1-13) and control cards. Each round four controls are
auctioned: bid three nut cards (never equal to the high bid; you must bid
if you can), the highest total wins the control and hands its bid cards to
the other players. Trump is named, STAR is banked or kept, BONUS declared,
then the play: follow suit; each control bends one rule (TRICK wins a
trick, HAND steals cards, ORDER sits out, VALUE adds to a nut card...). A
side scores its tricks times the stars it took (1s two stars, 3s and 7s
one, marked *), plus points for controls; more than 300 wins."""
    moves_help = """\
bid A3 W7 H13, give A3:ben W7:cy H13:dee, play A7 (or just the card: A7),
play VALUE A7, play TRICK (or just TRICK), trump H (or trump hazelnuts),
star bank, bonus 9, order, sitout. Cards in any order; give names the seats
that get the bid cards (or their numbers).
Nut cards are suit then value (A7: acorn 7; H hazelnut, P pecan, W walnut); the
controls by name (TRUMP, TRICK, STAR, HAND, ORDER, BONUS, VALUE, SCORE). TRUMP,
STAR, BONUS and ORDER alone are moves of their own: play TRUMP plays the card."""
    notation = CONTROLNUT
    units = "teams"
    player_counts = (4,)
    default_players = 4
    capabilities = Capabilities(shown_cards=True, chance=True,
                                table_chance=frozenset({ChanceKind.DRAW, ChanceKind.TAKE}))
    split_search = False  # two trees of half the iterations lost 4.9 points a deal to one
    options = {
        "target": OptionSpec(300, minimum=1, maximum=100_000,
                             help="a partnership that exceeds it ends the game"),
    }

    def deck(self, players: int, options: Mapping[str, int]) -> list[int]:
        return list(range(52))

    def deal(self, deck: Sequence[int | None], dealer: int, players: int,
             options: Mapping[str, int], *, observer: int = FULL,
             number: int = 0) -> ControlNutState:
        self.check_players(players)
        if len(deck) != 52:
            raise ValueError(f"a Control Nut! deck has the 52 nut cards, not {len(deck)}")
        state = ControlNutState.__new__(ControlNutState)
        state._init_core(4, 4, observer)
        state.dealer = dealer
        state.phase = CONTROLS_DRAW
        state.turn = dealer
        state.in_play = state.remaining = state.set_aside = 0
        state.auction_card = -1
        state.cards_played = 0
        state.pending = []
        state.bids = [-1, -1, -1, -1]
        state.high, state.high_seat = 0, -1
        state.give_cards = 0
        state.win_order = []
        state.last_winner = -1
        state.ctrl_hand = [0, 0, 0, 0]
        state.trump = -1
        state.star_banked = False
        state.bonus = None
        state.order_front = -1
        state.leader = -1
        state.led = -1
        state.plays = []
        state.effects = []
        state.steal_queue = None
        state.won = [0, 0]
        state.tricks = [0, 0]
        state.added = [0, 0]
        state.last_trick = None
        state.penalty = None
        places = [(dealer + 1 + i) % 4 for i in range(52)]
        state._place_deck(deck, places, 0, NUT_MASK)
        return state

    def observed_deck(self, deck: Sequence[int], dealer: int, players: int,
                      options: Mapping[str, int], seat: int, *,
                      number: int = 0) -> list[int | None]:
        return [c if (dealer + 1 + i) % 4 == seat else None for i, c in enumerate(deck)]

    def winner(self, totals: Sequence[int], deals: int,
               options: Mapping[str, int]) -> int | None:
        if max(totals) <= options.get("target", 300) or totals[0] == totals[1]:
            return None
        return 0 if totals[0] > totals[1] else 1

    def bench_position(self, rng: random.Random) -> tuple[str, HandState]:
        """The first card of the play, after a random auction."""
        def playing(state: HandState, moves: int) -> bool:
            return isinstance(state, ControlNutState) and state.phase == PLAY

        return "controlnut.first_trick", random_position(self, 4, rng, playing)


GAME = ControlNut()


def _kth(mask: int, k: int) -> int:
    while k:
        mask &= mask - 1
        k -= 1
    return (mask & -mask).bit_length() - 1


def random_play(state: ControlNutState, r: float) -> int:
    """The play action at uniform fraction ``r`` of the legal list, without listing it."""
    seat = state.pending[0]
    nuts = state.may[seat] & NUT_MASK
    led = state.led
    playable = (nuts & SUIT_MASKS[led] if led >= 0 else 0) or nuts
    n = playable.bit_count()
    controls = state.ctrl_hand[seat]
    if not controls and state.order_front != seat:  # most turns: a nut card, nothing else
        return _kth(playable, int(r * n))
    extra = []  # the non-nut-card choices, each with its number of actions
    rest = controls
    while rest:
        low = rest & -rest
        rest ^= low
        control = low.bit_length() - 1
        extra.append((control, n if control == VALUE_C and nuts else 1))
        if control == ORDER_C:
            extra.append((ORDER_PLACE, 1))
    if state.order_front == seat:
        extra += [(ORDER_C, 1), (SITOUT, 1)]
    total = n + sum(k for _, k in extra)
    index = int(r * total)
    if index < n:
        return _kth(playable, index)
    index -= n
    for action, k in extra:
        if index < k:
            return VALUE_WITH + _kth(playable, index) if k > 1 or (
                action == VALUE_C and nuts) else action
        index -= k
    raise IndexError("play index out of range")


def random_bid(state: ControlNutState, rng: random.Random) -> int:
    """A uniformly random legal bid (or the forced pass), by rejection sampling."""
    seat = state.pending[0]
    nuts = state.may[seat] & NUT_MASK
    size = nuts.bit_count()
    if size >= 3:
        rnd = rng.random
        for _ in range(8):
            a = _kth(nuts, int(rnd() * size))
            b = _kth(nuts & ~(1 << a), int(rnd() * (size - 1)))
            c = _kth(nuts & ~(1 << a) & ~(1 << b), int(rnd() * (size - 2)))
            if VALUE[a] + VALUE[b] + VALUE[c] != state.high:
                return tagged(BID, 1 << a | 1 << b | 1 << c)
    actions = state.legal_actions()
    return actions[int(rng.random() * len(actions))]


def random_playout(state: ControlNutState, rng: random.Random) -> None:
    """Play the round to the end at random (bench, rollouts)."""
    rnd = rng.random
    while state.phase != DONE:
        phase = state.phase
        if phase == PLAY:
            state.step(random_play(state, rnd()))
        elif phase == AUCTION:
            state.step(random_bid(state, rng))
        elif state.current_player() == CHANCE:
            state.step(state.chance_action(rng))
        elif phase == GIVE_PHASE:
            seats = [s for s in range(4) if s != state.turn]
            rng.shuffle(seats)
            state.step(give_code(list(zip(bits(state.give_cards), seats, strict=False))))
        else:
            actions = state.legal_actions()
            state.step(actions[int(rnd() * len(actions))])
