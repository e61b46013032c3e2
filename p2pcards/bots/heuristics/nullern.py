"""The rule-based ``heuristic`` bot of Nullern, deciding from its own view.

Bid the tricks counted in hand (high trumps, very high cards), then win
tricks while the bid is short (as cheaply as possible, or lead high) and duck
with the highest loser once it is made.
"""

from __future__ import annotations

import random

from p2pcards.bots.registry import Playbook, register
from p2pcards.games import nullern
from p2pcards.games.cards import bits
from p2pcards.games.core import HandState
from p2pcards.games.nullern import NullernState


def nullern_action(view: NullernState, rng: random.Random) -> int:
    seat = view.turn
    hand = view.may[seat]
    keys = view.keys
    if view.phase == nullern.BIDDING:
        if view.blind:
            return nullern.BID
        strong = sum(1.0 if keys[c] >= nullern.TRUMP_KEY + 11 else
                     0.5 if keys[c] >= nullern.TRUMP_KEY + 5 else
                     0.6 if keys[c] % 20 >= 18 else 0.0 for c in bits(hand))
        return nullern.BID + min(view.cards, round(strong))
    legal = sorted(bits(view.legal_mask()), key=lambda c: (keys[c], c))
    need = view.bids[seat] - view.tricks[seat]
    winning = [c for c in legal if keys[c] > view.win_key]
    if need > 0:  # still short: win as cheaply as possible, or lead high
        return winning[0] if view.trick and winning else legal[-1]
    losing = [c for c in legal if keys[c] <= view.win_key] if view.trick else []
    return losing[-1] if losing else legal[0]  # made: duck with the highest loser


def heuristic(view: HandState, rng: random.Random) -> int:
    assert isinstance(view, NullernState)
    return nullern_action(view, rng)


PLAYBOOK = Playbook(heuristic=heuristic)
register("nullern", PLAYBOOK)
