"""The rule-based ``heuristic`` bot of Pasur, deciding from its own view.

Take the capture worth most (points, a sur, then cards: clubs count toward
the majority); when nothing can be taken, add the card worth least and avoid
leaving a pool that one card could clear for a sur.
"""

from __future__ import annotations

import random

from p2pcards.bots.registry import Playbook, register
from p2pcards.games.core import HandState
from p2pcards.games.pasur import (
    ACES,
    CLUBS,
    JACK,
    JACKS,
    NUMBERS,
    TEN_OF_DIAMONDS,
    TWO_OF_CLUBS,
    VALUE,
    PasurState,
)


def worth(cards: int) -> float:
    """What cards are worth to their taker: their points, and clubs toward the majority."""
    return (3 * (cards >> TEN_OF_DIAMONDS & 1) + 2 * (cards >> TWO_OF_CLUBS & 1)
            + (cards & ACES).bit_count() + (cards & JACKS).bit_count()
            + 0.5 * (cards & CLUBS).bit_count())


def _sweepable(pool: int) -> bool:
    """One number card could take the whole pool (a sur for the next player)."""
    if not pool or pool & ~NUMBERS:
        return False
    total = sum(VALUE[c] for c in range(52) if pool >> c & 1)
    return total <= 10


def pasur_action(view: PasurState, rng: random.Random) -> int:
    pool = view.pool
    best_score = -1e9
    best = -1
    for action in view.legal_actions():
        card, take = action & 63, action >> 6
        if take:
            gained = take | 1 << card
            score = 10 + worth(gained) + 0.1 * gained.bit_count()
            if not pool & ~take and card % 13 != JACK and not view.last_deal:
                score += view.sur_points
        else:
            score = -worth(1 << card) - (3 if _sweepable(pool | 1 << card) else 0)
        if score > best_score or (score == best_score and action < best):
            best_score, best = score, action
    return best


def heuristic(view: HandState, rng: random.Random) -> int:
    assert isinstance(view, PasurState)
    return pasur_action(view, rng)


PLAYBOOK = Playbook(heuristic=heuristic)
register("pasur", PLAYBOOK)
