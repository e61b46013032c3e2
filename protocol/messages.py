"""The deck protocol's messages: frozen, slotted, keyword-only, validated on creation.

They carry no signature and no routing: the table session wraps each one in
a signed envelope (issue 7) and keeps the envelopes as evidence.  A
constructor checks shapes and types only (cheap, and enough that nothing
malformed reaches the arithmetic); whether a point is on the curve, a key
matches its commitment or a step comes in turn is the :class:`protocol.deck.Deck`'s
business, because only it knows the context.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.curve import POINT_BYTES, N

MAX_CARDS = 1024
MAX_PARTIES = 64
COMMITMENT_BYTES = 32


def _party(value: object, what: str = "party") -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < MAX_PARTIES:
        raise ValueError(f"{what} must be a seat number from 0 to {MAX_PARTIES - 1}")


def _blobs(value: object, size: int, what: str) -> None:
    if not isinstance(value, tuple) or not 0 < len(value) <= MAX_CARDS:
        raise ValueError(f"{what} must be a tuple of 1 to {MAX_CARDS} items")
    for i, item in enumerate(value):
        if not isinstance(item, bytes) or len(item) != size:
            raise ValueError(f"{what}[{i}] must be {size} bytes")


def _scalar(value: object, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < N:
        raise ValueError(f"{what} must be an integer in [1, N-1]")


@dataclass(frozen=True, slots=True, kw_only=True)
class Shuffled:
    """A shuffle pass: the deck re-encrypted under the party's scalar and permuted."""

    party: int
    deck: tuple[bytes, ...]

    def __post_init__(self) -> None:
        _party(self.party)
        _blobs(self.deck, POINT_BYTES, "deck")


@dataclass(frozen=True, slots=True, kw_only=True)
class Locked:
    """A lock pass: the shuffle scalar swapped for per-position keys, with a
    commitment to each key."""

    party: int
    deck: tuple[bytes, ...]
    commitments: tuple[bytes, ...]

    def __post_init__(self) -> None:
        _party(self.party)
        _blobs(self.deck, POINT_BYTES, "deck")
        _blobs(self.commitments, COMMITMENT_BYTES, "commitments")
        if len(self.commitments) != len(self.deck):
            raise ValueError("one commitment per position")


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyRelease:
    """A party's lock key for one position, for one party (``to``) or everyone (None)."""

    party: int
    position: int
    key: int
    to: int | None = None

    def __post_init__(self) -> None:
        _party(self.party)
        if not isinstance(self.position, int) or isinstance(self.position, bool) \
                or not 0 <= self.position < MAX_CARDS:
            raise ValueError("position must be a deck position")
        _scalar(self.key, "key")
        if self.to is not None:
            _party(self.to, "to")


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditReveal:
    """Everything a party kept secret in this deal: its shuffle scalar and
    permutation and its lock keys, position by position."""

    party: int
    shuffle_key: int
    permutation: tuple[int, ...]
    lock_keys: tuple[int, ...]

    def __post_init__(self) -> None:
        _party(self.party)
        _scalar(self.shuffle_key, "shuffle_key")
        for what, items in (("permutation", self.permutation), ("lock_keys", self.lock_keys)):
            if not isinstance(items, tuple) or not 0 < len(items) <= MAX_CARDS:
                raise ValueError(f"{what} must be a tuple of 1 to {MAX_CARDS} items")
        for i in self.permutation:
            if not isinstance(i, int) or isinstance(i, bool):
                raise ValueError("permutation entries must be integers")
        for i, key in enumerate(self.lock_keys):
            _scalar(key, f"lock_keys[{i}]")
