"""The proved deck's messages: frozen dataclasses, each with one canonical byte
encoding and a strict decoder (docs/proved-deck.md, "The state machine").

Like :mod:`p2pcards.protocol.messages` they carry no signature and no routing (the
table session wraps them in signed envelopes).  A constructor checks shapes and
ranges only; whether a proof holds, a step comes in turn or a slot is in play is the
:class:`~p2pcards.protocol.proved.deck.ProvedDeck`'s business.  The points, scalars
and proofs inside are the objects of :mod:`~p2pcards.protocol.proved.group`,
:mod:`~p2pcards.protocol.proved.sigma` and :mod:`~p2pcards.protocol.proved.shuffle`,
so a message that exists holds only canonical values.

Layouts (``‖`` concatenation, integers big-endian, points 33 bytes, scalars 32):

* ``KeyShare``: ``01 ‖ u8(party) ‖ X ‖ R ‖ s`` (100 bytes).
* ``Shuffle``: ``02 ‖ u8(party) ‖ u8(round) ‖ prior (32) ‖ u16(k) ‖ u16(slot)×k ‖
  u16(n) ‖ deck (66·n) ‖ shuffle proof`` (``k = 0`` in round 0).
* ``Remix``: ``03 ‖ u8(party) ‖ u16(n) ‖ u16(slot)×n ‖ deck (66·n) ‖ shuffle proof``.
* ``Shares``: ``04 ‖ u8(party) ‖ u8(to) ‖ u16(n) ‖ (u16(slot) ‖ D ‖ A ‖ B ‖ s)×n``,
  ``to`` = ``FF`` for everyone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..constants import MAX_ITEMS, MAX_PARTIES, MAX_ROUNDS, MAX_SLOTS
from .elgamal import CIPHERTEXT_BYTES, Ciphertext, decode_deck, encode_deck
from .group import (
    POINT_BYTES,
    SCALAR_BYTES,
    EncodingError,
    Point,
    decode_point,
    decode_scalar,
    u8,
    u16,
)
from .shuffle import (
    ShuffleProof,
    decode_shuffle_proof,
    encode_shuffle_proof,
    shuffle_proof_bytes,
)
from .sigma import KeyProof, ShareProof

KEY_SHARE, SHUFFLE, REMIX, SHARES = 1, 2, 3, 4
"""The first byte of each message."""
EVERYONE = 0xFF
"""``to`` of shares shown to everyone, on the wire."""
DIGEST_BYTES = 32


def _party(value: object, what: str = "party") -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < MAX_PARTIES:
        raise ValueError(f"{what} must be a seat number from 0 to {MAX_PARTIES - 1}")


def _slots(value: object, what: str, *, empty: bool = False) -> None:
    if not isinstance(value, tuple) or len(value) > MAX_ITEMS or (not value and not empty):
        raise ValueError(f"{what} must be a tuple of {0 if empty else 1} to {MAX_ITEMS} slots")
    for slot in value:
        if not isinstance(slot, int) or isinstance(slot, bool) or not 0 <= slot < MAX_SLOTS:
            raise ValueError(f"{what} entries must be slot numbers from 0 to {MAX_SLOTS - 1}")


def _deck(deck: object, proof: object) -> None:
    if not isinstance(deck, tuple) or not 0 < len(deck) <= MAX_ITEMS \
            or not all(isinstance(c, Ciphertext) for c in deck):
        raise ValueError(f"deck must be a tuple of 1 to {MAX_ITEMS} ciphertexts")
    if not isinstance(proof, ShuffleProof) or len(proof.commitments) != len(deck):
        raise ValueError("proof must be a shuffle proof of a deck of the same size")


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyShare:
    """A party's public key share ``X = x·G`` with its proof of knowledge of ``x``."""

    party: int
    public: Point
    proof: KeyProof

    def __post_init__(self) -> None:
        _party(self.party)
        if not isinstance(self.public, Point) or not isinstance(self.proof, KeyProof):
            raise ValueError("a key share is a point and a key proof")

    def encode(self) -> bytes:
        return u8(KEY_SHARE) + u8(self.party) + self.public.encode() + self.proof.encode()


@dataclass(frozen=True, slots=True, kw_only=True)
class Shuffle:
    """A shuffle pass of round ``round`` (0: the deal's deck; then each reshuffle):
    the deck re-encrypted and permuted, with the proof.  ``slots``: the slots a
    reshuffle takes (empty in round 0); ``prior``: the digest of the deck it was
    computed from (:func:`~p2pcards.protocol.proved.deck.deck_digest`)."""

    party: int
    round: int
    slots: tuple[int, ...]
    prior: bytes
    deck: tuple[Ciphertext, ...]
    proof: ShuffleProof

    def __post_init__(self) -> None:
        _party(self.party)
        if not isinstance(self.round, int) or not 0 <= self.round < MAX_ROUNDS:
            raise ValueError(f"round must be an integer from 0 to {MAX_ROUNDS - 1}")
        _slots(self.slots, "slots", empty=True)
        if not isinstance(self.prior, bytes) or len(self.prior) != DIGEST_BYTES:
            raise ValueError(f"prior must be a {DIGEST_BYTES}-byte digest")
        _deck(self.deck, self.proof)

    def encode(self) -> bytes:
        return b"".join([u8(SHUFFLE), u8(self.party), u8(self.round), self.prior,
                         u16(len(self.slots)), *(u16(s) for s in self.slots),
                         u16(len(self.deck)), encode_deck(self.deck),
                         encode_shuffle_proof(self.proof)])


@dataclass(frozen=True, slots=True, kw_only=True)
class Remix:
    """A holder's re-mix: the ciphertexts of ``slots`` (cards it holds) re-encrypted
    and permuted by it alone, with the proof; they become new slots."""

    party: int
    slots: tuple[int, ...]
    deck: tuple[Ciphertext, ...]
    proof: ShuffleProof

    def __post_init__(self) -> None:
        _party(self.party)
        _slots(self.slots, "slots")
        _deck(self.deck, self.proof)
        if len(self.slots) != len(self.deck):
            raise ValueError("one new ciphertext per slot re-mixed")

    def encode(self) -> bytes:
        return b"".join([u8(REMIX), u8(self.party), u16(len(self.slots)),
                         *(u16(s) for s in self.slots), encode_deck(self.deck),
                         encode_shuffle_proof(self.proof)])


@dataclass(frozen=True, slots=True, kw_only=True)
class Shares:
    """A party's decryption shares of ``slots``, each with its proof, for the party
    ``to`` (who adds its own, never sent) or for everyone (None)."""

    party: int
    to: int | None
    slots: tuple[int, ...]
    shares: tuple[Point, ...]
    proofs: tuple[ShareProof, ...]

    def __post_init__(self) -> None:
        _party(self.party)
        if self.to is not None:
            _party(self.to, "to")
            if self.to == self.party:
                raise ValueError("a party never sends its shares to itself")
        _slots(self.slots, "slots")
        if len(set(self.slots)) != len(self.slots):
            raise ValueError("a slot named twice")
        if not len(self.slots) == len(self.shares) == len(self.proofs) \
                or not all(isinstance(d, Point) for d in self.shares) \
                or not all(isinstance(p, ShareProof) for p in self.proofs):
            raise ValueError("one share (a point) and one share proof per slot")

    def encode(self) -> bytes:
        return b"".join([
            u8(SHARES), u8(self.party), u8(EVERYONE if self.to is None else self.to),
            u16(len(self.slots)),
            *(u16(s) + d.encode() + p.encode()
              for s, d, p in zip(self.slots, self.shares, self.proofs, strict=True))])


Message = KeyShare | Shuffle | Remix | Shares


# -- decoding ------------------------------------------------------------------------

class _Reader:
    def __init__(self, data: bytes, what: str):
        self.data = data
        self.what = what
        self.at = 1  # after the kind

    def take(self, n: int, field: str) -> bytes:
        if self.at + n > len(self.data):
            raise EncodingError(f"{self.what}.{field}", f"the message ends after "
                                f"{len(self.data)} bytes")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def number(self, size: int, field: str) -> int:
        return int.from_bytes(self.take(size, field), "big")

    def party(self, field: str = "party") -> int:
        value = self.number(1, field)
        if value >= MAX_PARTIES:
            raise EncodingError(f"{self.what}.{field}", f"no seat {value}")
        return value

    def slot(self, field: str) -> int:
        value = self.number(2, field)
        if value >= MAX_SLOTS:
            raise EncodingError(f"{self.what}.{field}", f"no slot {value}")
        return value

    def slots(self, count: int, field: str = "slots") -> tuple[int, ...]:
        if count > MAX_ITEMS:
            raise EncodingError(f"{self.what}.{field}", f"{count} slots, more than {MAX_ITEMS}")
        return tuple(self.slot(f"{field}[{i}]") for i in range(count))

    def point(self, field: str) -> Point:
        return decode_point(self.take(POINT_BYTES, field), f"{self.what}.{field}")

    def scalar(self, field: str) -> int:
        return decode_scalar(self.take(SCALAR_BYTES, field), f"{self.what}.{field}")

    def deck_and_proof(self, size: int) -> tuple[tuple[Ciphertext, ...], ShuffleProof]:
        if not 0 < size <= MAX_ITEMS:
            raise EncodingError(f"{self.what}.deck", f"{size} ciphertexts, not 1 to {MAX_ITEMS}")
        deck = decode_deck(self.take(size * CIPHERTEXT_BYTES, "deck"), size,
                           f"{self.what}.deck")
        data = self.take(shuffle_proof_bytes(size), "proof")
        try:
            proof = decode_shuffle_proof(data, size)
        except EncodingError as error:
            raise EncodingError(f"{self.what}.proof{error.field.removeprefix('shuffle proof')}",
                                error.reason) from None
        return deck, proof

    def end(self) -> None:
        if self.at != len(self.data):
            raise EncodingError(self.what, f"{len(self.data) - self.at} bytes after the end")


def _key_share(read: _Reader) -> KeyShare:
    party = read.party()
    public = read.point("public")
    return KeyShare(party=party, public=public,
                    proof=KeyProof(read.point("proof.R"), read.scalar("proof.s")))


def _shuffle(read: _Reader) -> Shuffle:
    party = read.party()
    round_ = read.number(1, "round")
    if round_ >= MAX_ROUNDS:
        raise EncodingError("shuffle.round", f"round {round_}, not below {MAX_ROUNDS}")
    prior = read.take(DIGEST_BYTES, "prior")
    slots = read.slots(read.number(2, "slot count"))
    deck, proof = read.deck_and_proof(read.number(2, "deck size"))
    return Shuffle(party=party, round=round_, slots=slots, prior=prior, deck=deck, proof=proof)


def _remix(read: _Reader) -> Remix:
    party = read.party()
    slots = read.slots(read.number(2, "slot count"))
    if not slots:
        raise EncodingError("remix.slots", "a re-mix takes one slot or more")
    deck, proof = read.deck_and_proof(len(slots))
    return Remix(party=party, slots=slots, deck=deck, proof=proof)


def _shares(read: _Reader) -> Shares:
    party = read.party()
    to_byte = read.number(1, "to")
    if to_byte != EVERYONE and to_byte >= MAX_PARTIES:
        raise EncodingError("shares.to", f"neither a seat nor FF (everyone): {to_byte}")
    to = None if to_byte == EVERYONE else to_byte
    if to == party:
        raise EncodingError("shares.to", "a party never sends its shares to itself")
    count = read.number(2, "count")
    if not 0 < count <= MAX_ITEMS:
        raise EncodingError("shares.count", f"{count} entries, not 1 to {MAX_ITEMS}")
    slots, shares, proofs = [], [], []
    for i in range(count):
        slots.append(read.slot(f"entries[{i}].slot"))
        shares.append(read.point(f"entries[{i}].share"))
        proofs.append(ShareProof(read.point(f"entries[{i}].proof.A"),
                                 read.point(f"entries[{i}].proof.B"),
                                 read.scalar(f"entries[{i}].proof.s")))
    if len(set(slots)) != count:
        raise EncodingError("shares.entries", "a slot named twice")
    return Shares(party=party, to=to, slots=tuple(slots), shares=tuple(shares),
                  proofs=tuple(proofs))


_DECODERS: dict[int, tuple[str, Callable[[_Reader], Message]]] = {
    KEY_SHARE: ("key share", _key_share), SHUFFLE: ("shuffle", _shuffle),
    REMIX: ("remix", _remix), SHARES: ("shares", _shares)}


def decode_message(data: bytes) -> Message:
    """The message ``data`` encodes; :class:`EncodingError` naming the field
    (``shuffle.deck[3].c1``, ``shares.entries[0].proof.s``) for anything that is not
    the canonical encoding of a message."""
    if not isinstance(data, bytes | bytearray) or not data:
        raise EncodingError("message", "empty")
    if data[0] not in _DECODERS:
        raise EncodingError("message", f"unknown kind {data[0]:02x}")
    what, decoder = _DECODERS[data[0]]
    read = _Reader(bytes(data), what)
    message = decoder(read)
    read.end()
    return message


__all__ = ["EVERYONE", "KeyShare", "Message", "Remix", "Shares", "Shuffle", "decode_message"]
