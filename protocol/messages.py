"""The deck protocol's messages: frozen, slotted, keyword-only, validated on creation.

They carry no signature and no routing: the table session wraps each one in
a signed envelope and keeps the envelopes as evidence.  A
constructor checks shapes and types only (cheap, and enough that nothing
malformed reaches the arithmetic); whether a point is on the curve, a key
matches its commitment or a step comes in turn is the :class:`~p2pcards.protocol.deck.Deck`'s
business, because only it knows the context.
"""

from __future__ import annotations

from dataclasses import dataclass

from .constants import MAX_ITEMS, MAX_PARTIES, MAX_ROUNDS, MAX_SLOTS
from .curve import POINT_BYTES, N

COMMITMENT_BYTES = 32
DIGEST_BYTES = 32


def _party(value: object, what: str = "party") -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < MAX_PARTIES:
        raise ValueError(f"{what} must be a seat number from 0 to {MAX_PARTIES - 1}")


def _blobs(value: object, size: int, what: str) -> None:
    if not isinstance(value, tuple) or not 0 < len(value) <= MAX_ITEMS:
        raise ValueError(f"{what} must be a tuple of 1 to {MAX_ITEMS} items")
    for i, item in enumerate(value):
        if not isinstance(item, bytes) or len(item) != size:
            raise ValueError(f"{what}[{i}] must be {size} bytes")


def _scalar(value: object, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < N:
        raise ValueError(f"{what} must be an integer in [1, N-1]")


def _digest(value: object) -> None:
    if not isinstance(value, bytes) or len(value) != DIGEST_BYTES:
        raise ValueError(f"prior must be a {DIGEST_BYTES}-byte digest")


def _index(value: object, what: str, most: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < most:
        raise ValueError(f"{what} must be an integer from 0 to {most - 1}")


def _indices(value: object, what: str, most: int) -> None:
    if not isinstance(value, tuple) or not 0 < len(value) <= MAX_ITEMS:
        raise ValueError(f"{what} must be a tuple of 1 to {MAX_ITEMS} items")
    for item in value:
        _index(item, f"{what} entries", most)


def _scalars(value: object, what: str) -> None:
    if not isinstance(value, tuple) or len(value) > MAX_ITEMS:
        raise ValueError(f"{what} must be a tuple of at most {MAX_ITEMS} items")
    for i, key in enumerate(value):
        _scalar(key, f"{what}[{i}]")


@dataclass(frozen=True, slots=True, kw_only=True)
class Unlocked:
    """A reshuffle's unlock pass: each input slot's key swapped for one scalar.
    ``slots``: the slots reshuffled (the first unlock opens the round);
    ``prior``: the digest of the deck it was computed from."""

    party: int
    round: int
    slots: tuple[int, ...]
    prior: bytes
    deck: tuple[bytes, ...]

    def __post_init__(self) -> None:
        _party(self.party)
        _index(self.round, "round", MAX_ROUNDS)
        _indices(self.slots, "slots", MAX_SLOTS)
        _digest(self.prior)
        _blobs(self.deck, POINT_BYTES, "deck")


@dataclass(frozen=True, slots=True, kw_only=True)
class Shuffled:
    """A shuffle pass: the deck re-encrypted under the party's scalar and permuted
    (``prior``: the digest of the deck it was computed from)."""

    party: int
    round: int
    prior: bytes
    deck: tuple[bytes, ...]

    def __post_init__(self) -> None:
        _party(self.party)
        _index(self.round, "round", MAX_ROUNDS)
        _digest(self.prior)
        _blobs(self.deck, POINT_BYTES, "deck")


@dataclass(frozen=True, slots=True, kw_only=True)
class Locked:
    """A lock pass: the shuffle scalar swapped for a key per slot, with a
    commitment to each key (``prior``: the digest of the deck it was computed from)."""

    party: int
    round: int
    prior: bytes
    deck: tuple[bytes, ...]
    commitments: tuple[bytes, ...]

    def __post_init__(self) -> None:
        _party(self.party)
        _index(self.round, "round", MAX_ROUNDS)
        _digest(self.prior)
        _blobs(self.deck, POINT_BYTES, "deck")
        _blobs(self.commitments, COMMITMENT_BYTES, "commitments")
        if len(self.commitments) != len(self.deck):
            raise ValueError("one commitment per slot")


@dataclass(frozen=True, slots=True, kw_only=True)
class Remixed:
    """A holder's cards (``slots``, which it can open) re-encrypted each under a
    fresh key of its own and permuted: new slots whose history says nothing."""

    party: int
    slots: tuple[int, ...]
    deck: tuple[bytes, ...]
    commitments: tuple[bytes, ...]

    def __post_init__(self) -> None:
        _party(self.party)
        _indices(self.slots, "slots", MAX_SLOTS)
        _blobs(self.deck, POINT_BYTES, "deck")
        _blobs(self.commitments, COMMITMENT_BYTES, "commitments")
        if not len(self.slots) == len(self.deck) == len(self.commitments):
            raise ValueError("one new point and one commitment per slot")


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyRelease:
    """A party's key of one slot, for one party (``to``) or everyone (None)."""

    party: int
    slot: int
    key: int
    to: int | None = None

    def __post_init__(self) -> None:
        _party(self.party)
        _index(self.slot, "slot", MAX_SLOTS)
        _scalar(self.key, "key")
        if self.to is not None:
            _party(self.to, "to")


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditReveal:
    """Everything a party kept secret in this deal, round by round (the first
    deal is round 0; each reshuffle another) and re-mix by re-mix.

    ``unlock_keys[r]`` is 1 in round 0, which has no unlock pass;
    ``remix_orders[i][m]`` is the old slot whose card new slot m holds.
    """

    party: int
    unlock_keys: tuple[int, ...]
    shuffle_keys: tuple[int, ...]
    permutations: tuple[tuple[int, ...], ...]
    lock_keys: tuple[tuple[int, ...], ...]
    remix_orders: tuple[tuple[int, ...], ...] = ()
    remix_keys: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        _party(self.party)
        _scalars(self.unlock_keys, "unlock_keys")
        _scalars(self.shuffle_keys, "shuffle_keys")
        rounds = len(self.shuffle_keys)
        if not 0 < rounds <= MAX_ROUNDS or not rounds == len(self.unlock_keys) == len(
                self.permutations) == len(self.lock_keys):
            raise ValueError("one unlock key, shuffle key, permutation and lock keys per round")
        for order in self.permutations:
            _indices(order, "permutation", MAX_ITEMS)
        for keys in self.lock_keys:
            _scalars(keys, "lock_keys")
        if len(self.remix_orders) != len(self.remix_keys) or len(self.remix_orders) > MAX_ROUNDS:
            raise ValueError("one order and one set of keys per re-mix")
        for order in self.remix_orders:
            _indices(order, "remix order", MAX_SLOTS)
        for keys in self.remix_keys:
            _scalars(keys, "remix_keys")
