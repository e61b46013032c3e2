"""Full action histories one seat cannot tell from the truth (pure Python).

:class:`Worlds` deals the cards a seat has not seen to the other seats -- each
seat's hand the size it has now, no card to a seat whose plays show it cannot
hold it (:func:`rules.forbidden`), uniformly over those deals
(:class:`deal.Dealer`) -- and writes the action history that deal implies: the
chance prefix, the 52 deal actions (card ``i`` of the deal goes to seat
``i % 4``), hearts' passes, then the public moves unchanged.  Replaying it in
OpenSpiel gives a state in which every move made so far was legal and the seat's
own information is exactly what it saw.

Hearts' passes that the seat did not see (between two other seats) are drawn
among the receiver's cards: which cards were passed changes only the dealt
hands, never the hands held now, and any choice replays legally.
"""

from __future__ import annotations

import random

from .deal import Dealer
from .rules import CARDS, PASS_CARDS, PLAYERS
from .seen import Seen, hand_sizes


class Worlds:
    """Draws histories consistent with ``seen`` (the counting is kept between draws)."""

    def __init__(self, seen: Seen):
        if seen.dealt_count != CARDS:
            raise ValueError("the deal is not over: nothing to determinize yet")
        self.seen = seen
        self.others = [p for p in range(PLAYERS) if p != seen.seat]
        played = seen.played_by()
        self.played = played
        passing = seen.rules.passing and seen.pass_dir != 0
        self.passing = passing
        self.in_pass = passing and seen.received is None
        # the cards the seat knows another seat holds: its own passes, once received
        self.known: list[list[int]] = [[] for _ in range(PLAYERS)]
        if passing and not self.in_pass:
            target = (seen.seat + seen.pass_dir) % PLAYERS
            gone = {c for _, c in seen.plays()}
            self.known[target] = [c for c in seen.passes if c not in gone]
        unseen = set(range(CARDS)) - set(seen.dealt)
        if not self.in_pass:
            if seen.received is not None:
                unseen -= set(seen.received)
            unseen -= {c for _, c in seen.plays()}
            for cards in self.known:
                unseen -= set(cards)
        sizes = hand_sizes(seen)
        room = []
        for player in self.others:
            if self.in_pass:  # no play yet: each seat's whole deal is unknown
                room.append(CARDS // PLAYERS)
            else:
                room.append(sizes[player] - len(self.known[player]))
        voids = seen.voids()
        every = frozenset(range(CARDS))
        allowed = [every - voids[p] if voids[p] else None for p in self.others]
        self.dealer = Dealer(sorted(unseen), room, allowed)

    def hands(self, rng: random.Random) -> list[list[int]]:
        """The cards each seat holds now in one world (in pass phase: its deal)."""
        drawn = self.dealer.deal(rng)
        out: list[list[int]] = [[] for _ in range(PLAYERS)]
        out[self.seen.seat] = sorted(self.seen.holding()) if not self.in_pass \
            else list(self.seen.dealt)
        for player, cards in zip(self.others, drawn, strict=True):
            out[player] = cards + self.known[player]
        return out

    def history(self, rng: random.Random) -> list[int]:
        """One world's full action history."""
        seen = self.seen
        hands = self.hands(rng)
        passes: list[list[int]] = [[] for _ in range(PLAYERS)]
        if self.in_pass:
            dealt = hands
            for player in range(PLAYERS):
                count = seen.pass_counts[player]
                if player == seen.seat:
                    passes[player] = list(seen.passes)
                elif count:
                    passes[player] = rng.sample(dealt[player], count)
        else:
            after = [hands[p] + self.played[p] for p in range(PLAYERS)]  # held after passing
            if self.passing:
                d = seen.pass_dir
                for player in range(PLAYERS):
                    target = (player + d) % PLAYERS
                    if player == seen.seat:
                        passes[player] = list(seen.passes)
                    elif target == seen.seat:
                        assert seen.received is not None
                        passes[player] = list(seen.received)
                    else:
                        passes[player] = rng.sample(sorted(after[target]), PASS_CARDS)
                dealt = []
                for player in range(PLAYERS):
                    got = set(passes[(player - d) % PLAYERS])
                    dealt.append([c for c in after[player] if c not in got] + passes[player])
            else:
                dealt = after
            dealt[seen.seat] = list(seen.dealt)
        actions = list(seen.prefix)
        for i in range(CARDS):
            actions.append(dealt[i % PLAYERS][i // PLAYERS])
        for player in range(PLAYERS):
            actions.extend(passes[player])
        actions.extend(a for _, a in seen.moves)
        return actions
