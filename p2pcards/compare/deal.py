"""Dealing unseen cards to hands of given sizes, each card only to a hand that may
hold it, uniformly over every such deal.

A shuffle dealt in order is tried a few times (a uniform deal, kept if it breaks
no constraint: uniform over the consistent deals); when the constraints are tight
the deal is drawn exactly instead: the cards fall into classes by the set of hands
that may hold them, and the number of consistent deals is counted class by class
(how many of a class each hand gets, weighted by the multinomial number of ways),
so each class's split is drawn with its true weight.  The counts are kept by the
:class:`Dealer`, which a view builds once and reuses for every world it draws.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

TRIES = 16
"""Plain shuffles tried before the exact draw."""


class DealError(ValueError):
    """No deal satisfies the constraints (the information given is contradictory)."""


class Dealer:
    """Deals ``cards`` to hands ``0..n-1`` of sizes ``sizes``; ``allowed[h]`` is the
    set of cards hand ``h`` may hold (None: any)."""

    def __init__(self, cards: Sequence[int], sizes: Sequence[int],
                 allowed: Sequence[frozenset[int] | None]):
        if sum(sizes) != len(cards):
            raise DealError(f"{len(cards)} cards for hands of {sum(sizes)}")
        self.cards = list(cards)
        self.sizes = tuple(sizes)
        self.hands = len(sizes)
        self.free = all(a is None or set(cards) <= a for a in allowed)
        classes: dict[tuple[int, ...], list[int]] = {}
        for card in self.cards:
            who = tuple(h for h in range(self.hands) if allowed[h] is None
                        or card in allowed[h])  # type: ignore[operator]
            if not who:
                raise DealError(f"card {card} fits no hand")
            classes.setdefault(who, []).append(card)
        self.classes = sorted(classes.items())
        self.allowed = [allowed[h] for h in range(self.hands)]
        self._counts: dict[tuple[int, tuple[int, ...]], int] = {}
        self._choices: dict[tuple[int, tuple[int, ...]],
                            list[tuple[int, tuple[int, ...], tuple[int, ...]]]] = {}
        self.rejections = 0

    def deal(self, rng: random.Random) -> list[list[int]]:
        """One deal, uniform over the consistent ones."""
        if self.free:
            return self._shuffled(rng)
        if self.rejections < TRIES:
            for _ in range(TRIES):
                hands = self._shuffled(rng)
                if self._fits(hands):
                    return hands
            self.rejections = TRIES  # tight constraints: draw exactly from now on
        return self._exact(rng)

    def _shuffled(self, rng: random.Random) -> list[list[int]]:
        cards = shuffled(self.cards, rng)
        hands = []
        start = 0
        for size in self.sizes:
            hands.append(cards[start:start + size])
            start += size
        return hands

    def _fits(self, hands: list[list[int]]) -> bool:
        for hand, allowed in zip(hands, self.allowed, strict=True):
            if allowed is not None and not allowed.issuperset(hand):
                return False
        return True

    def _splits(self, index: int, left: tuple[int, ...]) -> list[tuple[tuple[int, ...], int]]:
        """Each way to split class ``index`` among the hands allowed it (room
        permitting), with its multinomial weight."""
        who, cards = self.classes[index]
        n = len(cards)
        out: list[tuple[tuple[int, ...], int]] = []

        def rec(i: int, remaining: int, taken: list[int]) -> None:
            if i == len(who) - 1:
                if remaining <= left[who[i]]:
                    counts = [*taken, remaining]
                    weight = math.factorial(n)
                    for k in counts:
                        weight //= math.factorial(k)
                    out.append((tuple(counts), weight))
                return
            for k in range(min(remaining, left[who[i]]) + 1):
                rec(i + 1, remaining - k, [*taken, k])

        rec(0, n, [])
        return out

    def _after(self, index: int, left: tuple[int, ...], counts: tuple[int, ...]
               ) -> tuple[int, ...]:
        rest = list(left)
        for hand, k in zip(self.classes[index][0], counts, strict=True):
            rest[hand] -= k
        return tuple(rest)

    def _count(self, index: int, left: tuple[int, ...]) -> int:
        """The number of deals of classes ``index..`` into the room ``left``."""
        if index == len(self.classes):
            return 1 if not any(left) else 0
        key = (index, left)
        known = self._counts.get(key)
        if known is not None:
            return known
        total = sum(weight * self._count(index + 1, self._after(index, left, counts))
                    for counts, weight in self._splits(index, left))
        self._counts[key] = total
        return total

    def _options(self, index: int, left: tuple[int, ...]
                 ) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
        """Class ``index``'s splits with the number of deals each leaves (kept)."""
        key = (index, left)
        known = self._choices.get(key)
        if known is None:
            known = []
            for counts, weight in self._splits(index, left):
                rest = self._after(index, left, counts)
                ways = weight * self._count(index + 1, rest)
                if ways:
                    known.append((ways, counts, rest))
            self._choices[key] = known
        return known

    def _exact(self, rng: random.Random) -> list[list[int]]:
        if self._count(0, self.sizes) == 0:
            raise DealError("no deal satisfies the constraints")
        hands: list[list[int]] = [[] for _ in range(self.hands)]
        left = self.sizes
        for index, (who, cards) in enumerate(self.classes):
            counts, rest = _pick(self._options(index, left), rng)
            mixed = shuffled(cards, rng)
            start = 0
            for hand, k in zip(who, counts, strict=True):
                hands[hand].extend(mixed[start:start + k])
                start += k
            left = rest
        return hands

def shuffled(cards: Sequence[int], rng: random.Random) -> list[int]:
    """A uniform permutation of ``cards``: Fisher-Yates on ``rng.random()``, three times
    as fast as ``rng.shuffle`` (whose exact integer draws cost more than the rest of a
    search's determinization; each draw's bias from rounding is
    below 2**-47 for a deck of 52)."""
    out = list(cards)
    draw = rng.random
    for i in range(len(out) - 1, 0, -1):
        j = int(draw() * (i + 1))
        out[i], out[j] = out[j], out[i]
    return out


def _pick(options: list[tuple[int, tuple[int, ...], tuple[int, ...]]], rng: random.Random
          ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """One option, with probability proportional to its count of deals."""
    pick = rng.randrange(sum(ways for ways, _, _ in options))
    for ways, counts, rest in options:
        if pick < ways:
            return counts, rest
        pick -= ways
    raise AssertionError("unreachable: the pick is below the total")
