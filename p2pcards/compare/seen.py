"""What one seat has seen of an OpenSpiel spades or hearts deal (pure Python).

:func:`seen_by` reads a full action history, ``(player, action)`` pairs in
OpenSpiel's order, and keeps only what ``seat`` observed: the public chance
outcome (hearts' pass direction), its own dealt cards, its own passes, the cards
passed to it once passing is over, and every bid and card played with who made
it.  Other seats' cards and passes are reduced to counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from .rules import CARDS, HAND, PASS_CARDS, PLAYERS, Rules, forbidden


@dataclass(frozen=True, slots=True)
class Seen:
    """One seat's information."""

    rules: Rules
    seat: int
    prefix: tuple[int, ...]
    """The public chance outcomes before the deal (hearts: the pass direction)."""
    dealt: tuple[int, ...]
    """The seat's own dealt cards, in the order dealt."""
    dealt_count: int
    """Deal actions so far (52 once dealt)."""
    passes: tuple[int, ...]
    """The seat's own passed cards (hearts), in order."""
    received: tuple[int, ...] | None
    """The cards passed to the seat, once every pass is made (hearts); else None."""
    pass_counts: tuple[int, ...]
    """How many cards each seat has passed so far (hearts)."""
    moves: tuple[tuple[int, int], ...]
    """Every bid and card played, with its player, in order."""

    @property
    def pass_dir(self) -> int:
        return self.prefix[0] if self.rules.passing else 0

    def plays(self) -> list[tuple[int, int]]:
        return [(p, a) for p, a in self.moves if self.rules.is_card(a)]

    def played_by(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in range(PLAYERS)]
        for player, card in self.plays():
            out[player].append(card)
        return out

    def holding(self) -> frozenset[int]:
        """The seat's cards now (after passing, less the cards it played)."""
        cards = set(self.dealt) - set(self.passes)
        if self.received is not None:
            cards |= set(self.received)
        cards -= set(self.played_by()[self.seat])
        return frozenset(cards)

    def voids(self) -> list[set[int]]:
        """Per seat, the cards the plays show it cannot hold (:func:`rules.forbidden`)."""
        return forbidden(self.rules, self.plays())

    def key(self) -> int:
        """A hash of the seat's own hand and the history it observed."""
        return key_of(self.rules, self.seat, prefix=self.prefix,
                      holding=tuple(sorted(self.holding())), passes=self.passes,
                      received=self.received, pass_counts=self.pass_counts, moves=self.moves)


def key_of(rules: Rules, seat: int, *, prefix: tuple[int, ...], holding: tuple[int, ...],
           passes: tuple[int, ...], received: tuple[int, ...] | None,
           pass_counts: tuple[int, ...], moves: tuple[tuple[int, int], ...]) -> int:
    """:meth:`Seen.key` from its parts (``holding`` ascending), for a world that keeps
    them otherwise (:mod:`fasthearts`)."""
    return hash((rules.name, seat, prefix, holding, passes, received, pass_counts, moves))


def seen_by(rules: Rules, history: list[tuple[int, int]], seat: int) -> Seen:
    """What ``seat`` has seen of ``history`` (``(player, action)`` pairs, chance
    actions with a negative player, as OpenSpiel's ``full_history`` lists them)."""
    actions = [a for _, a in history]
    prefix = tuple(actions[:rules.prefix])
    start = rules.prefix
    deal = actions[start:start + CARDS]
    dealt = tuple(card for i, card in enumerate(deal) if i % PLAYERS == seat)
    at = start + len(deal)
    passes: list[list[int]] = [[] for _ in range(PLAYERS)]
    received: tuple[int, ...] | None = None
    if rules.passing and prefix and prefix[0] != 0 and len(deal) == CARDS:
        for index, action in enumerate(actions[at:at + PLAYERS * PASS_CARDS]):
            passes[index // PASS_CARDS].append(action)
        at += sum(len(p) for p in passes)
        if sum(len(p) for p in passes) == PLAYERS * PASS_CARDS:
            received = tuple(passes[(seat - prefix[0]) % PLAYERS])
    moves = tuple((p, a) for p, a in history[at:])
    return Seen(rules, seat, prefix, dealt, len(deal), tuple(passes[seat]), received,
                tuple(len(p) for p in passes), moves)


def hand_sizes(seen: Seen) -> list[int]:
    """How many cards each seat holds now (in hand, not counting cards passed away
    before the passing is over)."""
    played = seen.played_by()
    sizes = []
    for player in range(PLAYERS):
        size = HAND - len(played[player])
        if seen.received is None:
            size -= seen.pass_counts[player]
        sizes.append(size)
    return sizes
