"""What the other players' past plays say of the cards they held (docs/bots.md).

A card played in a trick game says something of the cards its player did not
play: a Nullern player still short of its bid who lets a trick go probably held
nothing that could win it.  The model reads only what a player meant to do with
a trick, win it or let it go, which a searching player does far more often like
the playbook's heuristic than it picks the heuristic's very card (measured with
``bench infer``: docs/bots.md).  A game's belief reads each play of another
player that went against what the heuristic would have meant as a :class:`Play`:
the cards that player played from then on (in its hand at the time, whatever the
world), the cards it could choose among (its whole hand, or the suit it
followed), and the cards that would have done what the heuristic meant.
Everything but the hand is public, so it is worked out once per search, and a
world's weight costs one mask test per such play:

    P(the play | hand) = floor  if a card that would have done it was among them
                         1      otherwise

so a world in which the player could not have done otherwise explains the play
best, and no world is ruled out.  Nothing here names a game.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ALL", "Play", "Trick", "later_cards", "play_log_weight"]

ALL = -1
"""``Play.within`` when the player could play any card of its hand."""


@dataclass(frozen=True, slots=True)
class Play:
    """One past play of another player, as evidence (see the module docstring)."""

    seat: int
    later: int
    """The cards ``seat`` played from this play on, this one included: in its hand then."""
    within: int
    """The cards it could choose among, as a mask over its hand then (:data:`ALL`)."""
    against: int
    """The cards that would have done what the model meant (none of them was played)."""


Trick = tuple[int, Sequence[int]]
"""A trick as (leader, cards in the order played)."""


def later_cards(tricks: Sequence[Trick], players: int) -> list[list[int]]:
    """Per trick and card: the cards its player played from that play on (this one
    included), over ``tricks`` in the order played."""
    after = [0] * players
    out: list[list[int]] = [[0] * len(cards) for _, cards in tricks]
    for t in range(len(tricks) - 1, -1, -1):
        leader, cards = tricks[t]
        for i in range(len(cards) - 1, -1, -1):
            seat = (leader + i) % players
            after[seat] |= 1 << cards[i]
            out[t][i] = after[seat]
    return out


def play_log_weight(plays: Sequence[Play], hands: Sequence[int], floor: float) -> float:
    """The log-likelihood of ``plays`` when each player's hand now is ``hands[seat]``
    (see the module docstring): ``log(floor)`` for each play its player could have
    made as the model meant."""
    missed = 0
    for play in plays:
        if (hands[play.seat] | play.later) & play.within & play.against:
            missed += 1
    return missed * math.log(floor)
