"""The rule-based ``heuristic`` bot of Nullern, deciding from its own view.

Bid the tricks counted in hand (high trumps, very high cards), then win
tricks while the bid is short (as cheaply as possible, or lead high) and duck
with the highest loser once it is made.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import cast

from p2pcards.ai.protocol import SearchState
from p2pcards.bots.evidence import ALL, Play, Trick, later_cards, play_log_weight
from p2pcards.bots.registry import Playbook, register
from p2pcards.games import nullern
from p2pcards.games.cards import bits
from p2pcards.games.core import HandState
from p2pcards.games.nullern import NullernState


def _strength(hand: int, keys: tuple[int, ...]) -> float:
    """The tricks the heuristic counts in ``hand``: high trumps, very high cards."""
    return sum(1.0 if keys[c] >= nullern.TRUMP_KEY + 11 else
               0.5 if keys[c] >= nullern.TRUMP_KEY + 5 else
               0.6 if keys[c] % 20 >= 18 else 0.0 for c in bits(hand))


def nullern_action(view: NullernState, rng: random.Random) -> int:
    seat = view.turn
    hand = view.may[seat]
    keys = view.keys
    if view.phase == nullern.BIDDING:
        if view.blind:
            return nullern.BID
        return nullern.BID + min(view.cards, round(_strength(hand, keys)))
    legal = sorted(bits(view.legal_mask()), key=lambda c: (keys[c], c))
    need = view.bids[seat] - view.tricks[seat]
    winning = [c for c in legal if keys[c] > view.win_key]
    if need > 0:  # still short: win as cheaply as possible, or lead high
        return winning[0] if view.trick and winning else legal[-1]
    losing = [c for c in legal if keys[c] <= view.win_key] if view.trick else []
    return losing[-1] if losing else legal[0]  # made: duck with the highest loser


SPREAD = 0.5
"""How far (in tricks) a player's bid strays from the heuristic's count."""

FLOOR = 0.05
"""The least likelihood the belief gives any bid (no world is ruled out)."""


PLAY_FLOOR = 0.15
"""How likely a player is to go against what the heuristic means with a trick, when it
could have done it (:mod:`p2pcards.bots.evidence`; chosen on seed 2 of ``bench
infer``: docs/bots.md)."""


@dataclass(frozen=True, slots=True)
class NullernBelief:
    """The other players' bids under the heuristic's count of tricks (the playbook's
    ``belief``): a bid of ``b`` is likely as ``exp(-((b - count) / SPREAD)^2 / 2)`` among the bids
    from 0 to the round's cards, on the cards the world gives the bidder at the
    auction (those it holds and has played this round), mixed with a floor; and,
    when it reads plays, the cards other players played that did not beat the trick
    so far while they were short of their bid, or beat it once the bid was made
    (:func:`play_evidence`)."""

    bids: tuple[tuple[int, int], ...]
    """(seat, tricks bid)."""
    cards: int
    plays: tuple[Play, ...] = ()

    def log_weight(self, world: SearchState) -> float:
        deal = cast(NullernState, world)
        keys = deal.keys
        total = play_log_weight(self.plays, deal.may, PLAY_FLOOR) if self.plays else 0.0
        for seat, bid in self.bids:
            count = _strength(deal.may[seat] | deal.played_by[seat], keys)
            scores = [math.exp(-((b - count) / SPREAD) ** 2 / 2) for b in range(self.cards + 1)]
            total += math.log(FLOOR + (1 - FLOOR) * scores[bid] / sum(scores))
        return total


def play_evidence(view: NullernState) -> tuple[Play, ...]:
    """The cards other players have played this round against what the heuristic means
    (:func:`nullern_action`: win while short of the bid, let tricks go once it is
    made), each with the cards that would have done it: a card that beats the trick
    so far, or one that does not (leads say nothing).  From the public record: the
    finished tricks and the trick on the table."""
    players, keys = view.players, view.keys
    tricks: list[Trick] = [*view.past]
    if view.trick:
        tricks.append((view.leader, view.trick))
    later = later_cards(tricks, players)
    beating: dict[int, int] = {}
    won = [0] * players
    out: list[Play] = []
    for t, (leader, cards) in enumerate(tricks):
        led_trump, win_key, win_seat = False, -1, -1
        for i, card in enumerate(cards):
            seat = (leader + i) % players
            key = keys[card]
            if i and seat != view.observer and (key > win_key) != (view.bids[seat] > won[seat]):
                if win_key not in beating:
                    beating[win_key] = sum(1 << c for c, k in enumerate(keys) if k > win_key)
                winners = beating[win_key]
                against = nullern.DECK_MASK & ~winners if key > win_key else winners
                within = view.trump_mask if led_trump and key >= nullern.TRUMP_KEY else ALL
                if against & within:  # else no world could have done it: no evidence
                    out.append(Play(seat, later[t][i], within, against))
            if not i:
                led_trump = key >= nullern.TRUMP_KEY
            if key > win_key:
                win_key, win_seat = key, seat
        if len(cards) == players:
            won[win_seat] += 1
    return tuple(out)


def belief(view: HandState, plays: bool = False) -> NullernBelief | None:
    """The belief of ``view``'s player about the others' bids, and with ``plays`` their
    plays too (None: no bid to read, or the blind round, where nobody saw the card
    they bid on and the table played it)."""
    assert isinstance(view, NullernState)
    if view.blind:
        return None
    bids = tuple((s, b) for s, b in enumerate(view.bids) if b >= 0 and s != view.observer)
    if not bids:
        return None
    return NullernBelief(bids, view.cards, play_evidence(view) if plays else ())


def heuristic(view: HandState, rng: random.Random) -> int:
    assert isinstance(view, NullernState)
    return nullern_action(view, rng)


PLAYBOOK = Playbook(heuristic=heuristic, belief=belief, infers=1)
register("nullern", PLAYBOOK)
