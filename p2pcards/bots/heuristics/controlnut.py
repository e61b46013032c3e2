"""The rule-based ``heuristic`` bot of Control Nut!, deciding from its own view.

Auction: pay a lot (but no star cards) for TRICK, SCORE, STAR and HAND, as
little as possible for the rest; hand the best bid card to the partner.  Name
the suit the hand is strongest in; bank STAR; declare half the round's
tricks as the bonus.  Play: feed star cards and low cards to a trick the
partner wins, take a trick with the cheapest card that wins it (TRICK only
for two stars or more), else throw the cheapest card; lead HAND when it is
held.
"""

from __future__ import annotations

import random

from p2pcards.bots.registry import Playbook, register
from p2pcards.games.cards import bits
from p2pcards.games.controlnut import (
    AUCTION,
    BONUS,
    BONUS_PHASE,
    GIVE_PHASE,
    HAND_C,
    NAME_TRUMP,
    NUT_MASK,
    ORDER_PLACE,
    SCORE_C,
    SITOUT,
    STAR_BANK,
    STAR_C,
    STAR_PHASE,
    STARS,
    SUIT_MASKS,
    TRICK_C,
    TRUMP,
    TRUMP_AFTER,
    VALUE,
    VALUE_WITH,
    ControlNutState,
    _cards_of,
    _trick_winner,
    give_code,
)
from p2pcards.games.core import HandState

PRIZED = (TRICK_C, SCORE_C, STAR_C, HAND_C)


def _bid_cost(mask: int, prized: bool) -> float:
    stars = sum(STARS[c] for c in bits(mask))
    total = sum(VALUE[c] for c in bits(mask))
    return 10 * stars - total if prized else 10 * stars + total


def controlnut_action(view: ControlNutState, rng: random.Random) -> int:
    phase = view.phase
    seat = view.current_player()
    hand = view.may[seat]
    if phase == AUCTION:
        legal = view.legal_actions()
        prized = view.auction_card in PRIZED
        return min(legal, key=lambda a: (_bid_cost(a & ((1 << 60) - 1), prized), a))
    if phase == GIVE_PHASE:
        cards = sorted(bits(view.give_cards), key=lambda c: (VALUE[c], c), reverse=True)
        partner = (seat + 2) % 4
        others = [partner, (seat + 1) % 4, (seat + 3) % 4]
        return give_code(list(zip(cards, others, strict=False)))
    if phase in (NAME_TRUMP, TRUMP_AFTER):
        return TRUMP + max(range(4), key=lambda s: (
            sum(VALUE[c] for c in bits(hand & SUIT_MASKS[s])), s))
    if phase == STAR_PHASE:
        return STAR_BANK
    if phase == BONUS_PHASE:
        return BONUS + 7
    return _play(view, seat)


def _play(view: ControlNutState, seat: int) -> int:
    legal = [a for a in view.legal_actions() if a not in (ORDER_PLACE, SITOUT)]
    if not legal:
        return view.legal_actions()[0]
    plays = view.plays
    if not plays and HAND_C in legal:
        return HAND_C

    def cost(action: int) -> float:
        cards = _cards_of(action)
        nuts = cards & NUT_MASK
        value = sum(VALUE[c] + 5 * STARS[c] for c in bits(nuts))
        return value + (50 if cards & ~NUT_MASK else 0)  # keep control cards back

    cheapest = sorted(legal, key=lambda a: (cost(a), a))
    if not plays:
        nuts = [a for a in cheapest if _cards_of(a) & NUT_MASK]
        return nuts[-1] if nuts else cheapest[0]  # lead a strong card
    led = view.led
    current = _trick_winner(plays, led, view.trump)
    on_table = sum(STARS[c] for _, a in plays for c in bits(_cards_of(a) & NUT_MASK))
    if current % 2 == seat % 2:  # the partner wins: feed it stars, else the cheapest
        starred = [a for a in legal if a < 52 and STARS[a] and (led < 0 or a // 13 == led)]
        return starred[0] if starred else cheapest[0]
    winning = []
    for action in cheapest:
        nut = action - VALUE_WITH if action >= VALUE_WITH else action
        suit = nut // 13 if nut < 52 else -1
        trial = [*plays, (seat, action)]
        if _trick_winner(trial, led if led >= 0 else suit, view.trump) == seat:
            winning.append(action)
    worthy = [a for a in winning if a != TRICK_C or on_table >= 2]
    return worthy[0] if worthy else cheapest[0]


def heuristic(view: HandState, rng: random.Random) -> int:
    assert isinstance(view, ControlNutState)
    return controlnut_action(view, rng)


PLAYBOOK = Playbook(heuristic=heuristic)
register("controlnut", PLAYBOOK)
