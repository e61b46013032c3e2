"""What every party computes and checks alike: the context of a deal, the
commitments, and the passes over a deck as pure functions.

A *slot* is one encrypted card.  The first shuffle and lock make slots
0..M-1; a reshuffle or a re-mix retires its input slots and appends new ones,
so a slot number names one encrypted card for the whole deal.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .constants import MAX_CARDS, MAX_PARTIES, MIN_CARDS, MIN_PARTIES
from .curve import Multiplier, N, Point, inverse, lift

COMMIT_DOMAIN = b"p2pcards/slot-key/v1"
DIGEST_DOMAIN = b"p2pcards/deck-digest/v1"
UNLOCK, SHUFFLE, LOCK, REMIX = "unlock", "shuffle", "lock", "remix"


@dataclass(frozen=True, slots=True)
class DeckContext:
    """What every party agrees on before the deal: table id, deal number, parties, cards."""

    table: bytes
    deal: int
    parties: int
    size: int

    def __post_init__(self) -> None:
        if not MIN_PARTIES <= self.parties <= MAX_PARTIES:
            raise ValueError(f"{MIN_PARTIES} to {MAX_PARTIES} parties, not {self.parties}")
        if not MIN_CARDS <= self.size <= MAX_CARDS:
            raise ValueError(f"{MIN_CARDS} to {MAX_CARDS} cards, not {self.size}")
        if not 0 <= self.deal < 1 << 63:
            raise ValueError("the deal number must be a non-negative 63-bit integer")

    def order(self, round_: int = 0) -> list[int]:
        """The parties in pass order: the first rotates with the deal (and the round)."""
        first = (self.deal + round_) % self.parties
        return [(first + i) % self.parties for i in range(self.parties)]

    def commitment(self, party: int, slot: int, key: int) -> bytes:
        """The hash commitment to ``party``'s key of ``slot`` (domain-separated by
        table and deal; a slot number is never reused within a deal)."""
        return hashlib.sha256(b"".join([
            COMMIT_DOMAIN, len(self.table).to_bytes(2, "big"), self.table,
            self.deal.to_bytes(8, "big"), party.to_bytes(1, "big"),
            slot.to_bytes(2, "big"), key.to_bytes(32, "big")])).digest()


def deck_digest(context: DeckContext, round_: int, deck: Sequence[bytes]) -> bytes:
    """What a pass names as its input: a digest of the deck it was computed from, so
    that a party sending different versions of a step is caught at the next one."""
    return hashlib.sha256(b"".join([
        DIGEST_DOMAIN, len(context.table).to_bytes(2, "big"), context.table,
        context.deal.to_bytes(8, "big"), round_.to_bytes(1, "big"), *deck])).digest()


def lift_deck(deck: Sequence[bytes], known: Mapping[bytes, Point] | None = None
              ) -> list[Point]:
    """Every point of a deck decompressed and checked (``known``: points already
    lifted); PointError at the first that is none."""
    if known is None:
        return [lift(x) for x in deck]
    return [known.get(x) or lift(x) for x in deck]


def shuffle_deck(deck: Sequence[Point], scalar: int, permutation: Sequence[int]
                 ) -> tuple[bytes, ...]:
    """Shuffle pass: output j is ``scalar ·`` input ``permutation[j]``."""
    times = Multiplier(scalar).times
    return tuple(times(deck[i]) for i in permutation)


def rekey_deck(deck: Sequence[Point], remove: Sequence[int], add: Sequence[int]
               ) -> tuple[bytes, ...]:
    """Each point's key ``remove[j]`` swapped for ``add[j]``: ``add_j · remove_j⁻¹ ·`` point.

    The lock pass (remove the shuffle scalar, add the slot's key) and the unlock
    pass of a reshuffle (remove the slot's key, add one scalar) are both this.
    """
    inverses: dict[int, int] = {}  # a pass removes one scalar from every point: invert it once
    out = []
    for r, a, point in zip(remove, add, deck, strict=True):
        if r not in inverses:
            inverses[r] = inverse(r)
        out.append(Multiplier(a * inverses[r] % N).times(point))
    return tuple(out)
