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


@dataclass(frozen=True, slots=True)
class NullernBelief:
    """The other players' bids under the heuristic's count of tricks (the playbook's
    ``belief``): a bid of ``b`` is likely as ``exp(-((b - count) / SPREAD)^2 / 2)`` among the bids
    from 0 to the round's cards, on the cards the world gives the bidder at the
    auction (those it holds and has played this round), mixed with a floor."""

    bids: tuple[tuple[int, int], ...]
    """(seat, tricks bid)."""
    cards: int

    def log_weight(self, world: SearchState) -> float:
        deal = cast(NullernState, world)
        keys = deal.keys
        total = 0.0
        for seat, bid in self.bids:
            count = _strength(deal.may[seat] | deal.played_by[seat], keys)
            scores = [math.exp(-((b - count) / SPREAD) ** 2 / 2) for b in range(self.cards + 1)]
            total += math.log(FLOOR + (1 - FLOOR) * scores[bid] / sum(scores))
        return total


def belief(view: HandState) -> NullernBelief | None:
    """The belief of ``view``'s player about the others' bids (None: no bid to read,
    or the blind round, where nobody saw the card they bid on)."""
    assert isinstance(view, NullernState)
    if view.blind:
        return None
    bids = tuple((s, b) for s, b in enumerate(view.bids) if b >= 0 and s != view.observer)
    return NullernBelief(bids, view.cards) if bids else None


def heuristic(view: HandState, rng: random.Random) -> int:
    assert isinstance(view, NullernState)
    return nullern_action(view, rng)


PLAYBOOK = Playbook(heuristic=heuristic, belief=belief, infers=True)
register("nullern", PLAYBOOK)
