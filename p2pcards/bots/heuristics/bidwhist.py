"""The rule-based ``heuristic`` bot of Bid Whist, and the play model its search uses.

A decent club player's rules, deciding from the bot's own view only: bid on
the books counted in hand (aces, kings guarded, long suits, jokers) plus two
for the partner and one for the discard, name the longest suit, discard the
weakest cards, lead winners and draw trumps; follow cheaply (when the partner
already wins the trick, or nothing can win it, play the lowest card, otherwise
win with the lowest card that does).

The same rules are the search's model of the auction (:class:`BidWhistPolicy`):
random play cannot make contracts, so random rollouts from the auction cannot
tell a good bid from a bad one.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import cast

from p2pcards.ai.protocol import SearchState
from p2pcards.bots.evidence import ALL, Play, Trick, later_cards, play_log_weight
from p2pcards.bots.registry import Playbook, register
from p2pcards.games import bidwhist
from p2pcards.games.bidwhist import (
    BID,
    BID_CODES,
    DECLARE,
    DISCARD_PHASE,
    DOWNTOWN,
    JOKERS,
    NO_SUIT,
    NOTRUMP_BID,
    PASS,
    PLAY,
    STRENGTH,
    TRUMP,
    UPTOWN,
    BidWhistState,
    plain_discard,
    random_playout,
)
from p2pcards.games.cards import SUIT_MASKS, bits
from p2pcards.games.core import FULL, HandState


def _beats(keys: tuple[int, ...], suits: tuple[int, ...], card: int, led: int,
           win_key: int) -> bool:
    key = keys[card]
    return (suits[card] == led or key >= 100) and key > win_key






def _books(hand: int, downtown: bool) -> float:
    """Books a hand should take with its longest suit as trump, either direction."""
    books = (hand & JOKERS).bit_count() * 1.0
    longest = 0
    for suit in range(4):
        cards = hand & SUIT_MASKS[suit]
        n = cards.bit_count()
        longest = max(longest, n)
        ranks = {c % 13 for c in bits(cards)}
        top = (12, 0, 1) if downtown else (12, 11, 10)  # A 2 3 or A K Q
        books += (top[0] in ranks) + 0.7 * (top[1] in ranks and n >= 2) \
            + 0.4 * (top[2] in ranks and n >= 3)
    return books + max(0, longest - 4)


def bidwhist_action(view: BidWhistState, rng: random.Random) -> int:
    seat = view.turn
    hand = view.may[seat]
    if view.phase == BID:
        up, down = _books(hand, False), _books(hand, True)
        kind = 0 if up >= down else 1
        level = int(max(up, down) + 3) - 6  # + partner 2, + the discard 1
        legal = view.legal_actions()
        wanted = [c for c in legal if c != PASS and bidwhist.bid_of(c)[1] == kind
                  and bidwhist.bid_of(c)[0] <= level]
        if wanted:
            return min(wanted, key=bidwhist.bid_strength)
        if PASS in legal:
            return PASS
        return min((c for c in legal if bidwhist.bid_of(c)[1] == kind),
                   key=bidwhist.bid_strength)
    if view.phase == DECLARE:
        if view.kind == NOTRUMP_BID:
            return DOWNTOWN if _books(hand, True) > _books(hand, False) else UPTOWN
        suit = max(range(4), key=lambda s: ((hand & SUIT_MASKS[s]).bit_count(), s))
        return TRUMP + suit
    if view.phase == DISCARD_PHASE:
        return plain_discard(view)
    return _trick_card(view.legal_mask(), view.tables.keys, view.tables.suits, view.led,
                       view.win_key, trick=view.trick,
                       partner_wins=(view.win_seat - seat) % 2 == 0)


def _trick_card(legal: int, keys: tuple[int, ...], suits: tuple[int, ...], led: int,
                win_key: int, *, trick: list[int], partner_wins: bool) -> int:
    cards = sorted(bits(legal), key=lambda c: (keys[c], c))
    if not trick:  # lead the strongest card: a winner or a trump drawing trumps
        return cards[-1]
    winners = [c for c in cards if _beats(keys, suits, c, led, win_key)]
    if partner_wins or not winners:
        return cards[0]
    return winners[0]



def bidding_model(view: object, rng: random.Random) -> int | None:
    """Bid Whist's declaration by the heuristic, for the searching bot. None where the
    search decides (Nullern's bids search well; Bid Whist's bid: see
    :func:`bidding_candidates`)."""
    if isinstance(view, BidWhistState) and view.phase == DECLARE:
        return bidwhist_action(view, rng)
    return None


def bidding_candidates(view: object, rng: random.Random) -> list[int] | None:
    """Bid Whist's bid for the searching bot: the model's bid and its neighbours (a
    pass, one level higher, one lower, and at the same level uptown for downtown,
    downtown for uptown, uptown for notrump), for a search whose rollouts play
    the deal out with the heuristic to choose among. None: not a bid."""
    if not isinstance(view, BidWhistState) or view.phase != BID:
        return None
    legal = view.legal_actions()
    model = bidwhist_action(view, rng)
    bids = sorted((c for c in legal if c != PASS), key=bidwhist.bid_strength)
    out = [model]
    if PASS in legal:
        out.append(PASS)
    if model == PASS:
        out += bids[:2]
    else:
        n, kind = bidwhist.bid_of(model)
        for other_n, other_kind in ((n + 1, kind), (n, 1 - kind if kind < 2 else 0),
                                    (n - 1, kind)):
            if 3 <= other_n <= 7:
                code = bidwhist.bid_code(other_n, other_kind)
                if code in legal:
                    out.append(code)
    seen: list[int] = []
    for code in out:
        if code not in seen:
            seen.append(code)
    return seen


def heuristic_playout(state: BidWhistState, rng: random.Random) -> None:
    """Play a full-information Bid Whist deal to the end with the heuristic in
    every seat (the search's rollouts from the auction on)."""
    while state.phase != bidwhist.DONE:
        state.step(bidwhist_action(state, rng))


class BidWhistPolicy:
    """How the search plays Bid Whist where it does not branch: from the auction,
    the discard or the declaration, the heuristic plays every seat of a rollout;
    another seat's bid and declaration in a sampled world are the heuristic's, from
    that seat's cards in the world (so that a search of the searcher's own bid
    meets sensible bidders).  The rest is the engine's own (random play, the
    discard's rule of thumb)."""

    # (The search calls these at every step of every iteration: no checks beyond the
    # rules', the world is a full-information Bid Whist deal.)

    def rollout(self, world: SearchState, rng: random.Random) -> None:
        deal = cast(BidWhistState, world)
        if deal.phase < PLAY and deal.observer == FULL:
            heuristic_playout(deal, rng)
        else:
            random_playout(deal, rng)

    def sampled_move(self, world: SearchState, seat: int, rng: random.Random) -> int | None:
        deal = cast(BidWhistState, world)
        phase = deal.phase
        if phase == PLAY:
            return None
        if phase in (BID, DECLARE) and seat != deal.turn and deal.observer == FULL:
            return bidwhist_action(deal, rng)
        return deal.sampled_move(seat, rng)

    def move(self, world: SearchState, rng: random.Random) -> int:
        return bidwhist_action(cast(BidWhistState, world), rng)


SPREAD = 0.5
"""How far (in books) a player's judgement of its hand strays from the model's count:
the slope of the belief's logistic curves."""

FLOOR = 0.05
"""The least likelihood the belief gives any bid: a player who bids against the model
flattens the weights, and no world is ruled out."""

PLAY_FLOOR = 0.3
"""How likely a player is to go against what the heuristic means with a trick, when it
could have done it (:mod:`p2pcards.bots.evidence`; chosen on seed 2 of ``bench
infer``: docs/bots.md)."""


def _agree(margin: float) -> float:
    """The likelihood of a choice the model favours by ``margin`` books: logistic."""
    return FLOOR + (1 - FLOOR) / (1 + math.exp(-margin / SPREAD))


@dataclass(frozen=True, slots=True)
class BidWhistBelief:
    """The other players' bids under the heuristic's count of books (the playbook's
    ``belief``): a player bids a level it counts its hand good for and passes below
    the lowest bid open to it, naming uptown (``cards``) or downtown (``special``) as
    its books lean.  Each bid is scored on the twelve cards the world gives the
    bidder at the auction (those it holds and has played; a declarer's are the twelve
    it kept after the kitty, an approximation); and, when it reads plays, the tricks
    other players let the opponents keep or took from their partner
    (:func:`play_evidence`)."""

    bids: tuple[tuple[int, int, tuple[int, int]], ...]
    """(seat, bid code or PASS, the lowest level then open to a bid of each kind,
    cards and special: 8 where none was)."""
    plays: tuple[Play, ...] = ()

    def log_weight(self, world: SearchState) -> float:
        deal = cast(BidWhistState, world)
        counted: dict[int, tuple[float, float]] = {}
        total = play_log_weight(self.plays, deal.may, PLAY_FLOOR) if self.plays else 0.0
        for seat, code, lowest in self.bids:
            if seat not in counted:
                hand = deal.may[seat] | deal.played_by[seat]
                counted[seat] = (_books(hand, False), _books(hand, True))
            up, down = counted[seat]
            strength = max(up, down) - 3  # the level the heuristic would bid
            if code == PASS:
                total += math.log(_agree(lowest[0 if up >= down else 1] - strength))
                continue
            level, kind = bidwhist.bid_of(code)
            likely = _agree(strength - level)
            if kind < NOTRUMP_BID:
                likely *= _agree(up - down if kind == 0 else down - up)
            total += math.log(likely)
        return total


def play_evidence(view: BidWhistState) -> tuple[Play, ...]:
    """The cards other players have played this hand against what the heuristic means
    (:func:`_trick_card`: take a trick the opponents hold when a card can, leave one
    the partner holds), each with the cards that would have done it: a card that beats
    the trick so far, or one that does not (leads say nothing).  From the public
    record: the finished tricks and the trick on the table."""
    if view.phase < PLAY:
        return ()
    keys, suits, follow = view.tables.keys, view.tables.suits, view.tables.follow
    tricks: list[Trick] = [*view.past]
    if view.trick:
        tricks.append((view.leader, view.trick))
    later = later_cards(tricks, 4)
    notrump = view.kind == NOTRUMP_BID
    everything = (1 << len(keys)) - 1
    out: list[Play] = []
    win_seat = -1  # as the state: a trick's first winner is the last trick's until a card wins
    for t, (leader, cards) in enumerate(tricks):
        led, win_key = -1, -1000
        for i, card in enumerate(cards):
            seat = (leader + i) & 3
            beats = _beats(keys, suits, card, led, win_key)
            if i and seat != view.observer and beats == ((win_seat - seat) % 2 == 0):
                within = ALL
                if led >= 0 and follow[led] >> card & 1:
                    within = follow[led]
                elif led >= 0 and notrump and seat != view.bidder and JOKERS >> card & 1:
                    within = JOKERS
                winners = sum(1 << c for c in range(len(keys))
                              if _beats(keys, suits, c, led, win_key))
                against = everything & ~winners if beats else winners
                if against & within:  # else no world could have done it: no evidence
                    out.append(Play(seat, later[t][i], within, against))
            suit, key = suits[card], keys[card]
            if led < 0 and suit != NO_SUIT:
                led = suit
            if (suit == led or key >= 100) and key > win_key:
                win_key, win_seat = key, seat
    return tuple(out)


def belief(view: HandState, plays: bool = False) -> BidWhistBelief | None:
    """The belief of ``view``'s player about the others' bids, and with ``plays`` their
    plays too (None: none bid yet)."""
    assert isinstance(view, BidWhistState)
    seat = view.observer
    high = -1
    bids = []
    for index, (bidder, code) in enumerate(view.bids):
        forced = index == 3 and high < 0  # the dealer must bid: a forced bid says little
        if bidder != seat and not forced:
            lowest = tuple(min((bidwhist.bid_of(c)[0] for c in BID_CODES[view.min_bid]
                                if bidwhist.bid_of(c)[1] == kind and STRENGTH[c] > high),
                               default=8) for kind in (0, 1))
            bids.append((bidder, code, cast(tuple[int, int], lowest)))
        if code != PASS:
            high = max(high, STRENGTH[code])
    if not bids:
        return None
    return BidWhistBelief(tuple(bids), play_evidence(view) if plays else ())


def heuristic(view: HandState, rng: random.Random) -> int:
    assert isinstance(view, BidWhistState)
    return bidwhist_action(view, rng)


PLAYBOOK = Playbook(heuristic=heuristic, model=bidding_model, candidates=bidding_candidates,
                    policy=BidWhistPolicy(), belief=belief)
register("bidwhist", PLAYBOOK)
