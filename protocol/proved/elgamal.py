"""ElGamal on secp256k1 under a joint key, and the proved deck's card points.

Each party ``i`` holds a key share ``x_i`` and publishes ``X_i = x_i·G``; the joint
key is ``K = Σ X_i``.  A card ``M`` encrypted under ``K`` with randomness ``r`` is
the ciphertext ``(C1, C2) = (r·G, M + r·K)``; re-encrypting adds ``(r'·G, r'·K)``;
party ``i``'s decryption share is ``D_i = x_i·C1`` and ``M = C2 − Σ D_i``.
docs/proved-deck.md, "ElGamal", gives the exact bytes.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..curve import SecretSource
from .group import (
    POINT_BYTES,
    EncodingError,
    G,
    Point,
    add,
    base_mul,
    decode_point,
    hash_to_point,
    mul,
    random_scalar,
    sub,
    u16,
    u64,
)

CARD_DOMAIN = b"p2pcards/proved/card-point/v1"
CIPHERTEXT_BYTES = 2 * POINT_BYTES


@dataclass(frozen=True, slots=True)
class Ciphertext:
    """``(C1, C2) = (r·G, M + r·K)``; encoded ``C1 ‖ C2``, 66 bytes."""

    c1: Point
    c2: Point

    def encode(self) -> bytes:
        return self.c1.encode() + self.c2.encode()


def decode_ciphertext(data: bytes, field: str = "ciphertext") -> Ciphertext:
    if len(data) != CIPHERTEXT_BYTES:
        raise EncodingError(field, f"a ciphertext is {CIPHERTEXT_BYTES} bytes, not {len(data)}")
    return Ciphertext(decode_point(data[:POINT_BYTES], f"{field}.c1"),
                      decode_point(data[POINT_BYTES:], f"{field}.c2"))


def encode_deck(deck: Sequence[Ciphertext]) -> bytes:
    return b"".join(c.encode() for c in deck)


def decode_deck(data: bytes, size: int, field: str = "deck") -> tuple[Ciphertext, ...]:
    """Exactly ``size`` ciphertexts, each canonical."""
    if len(data) != size * CIPHERTEXT_BYTES:
        raise EncodingError(field, f"{size} ciphertexts are {size * CIPHERTEXT_BYTES} bytes, "
                            f"not {len(data)}")
    return tuple(decode_ciphertext(data[i * CIPHERTEXT_BYTES:(i + 1) * CIPHERTEXT_BYTES],
                                   f"{field}[{i}]") for i in range(size))


def card_fields(table: bytes, deal: int, card: int) -> list[bytes]:
    """What card ``card``'s point hashes, after the domain tag: table, deal, card."""
    return [table, u64(deal), u16(card)]


@functools.lru_cache(maxsize=16)
def card_points(table: bytes, deal: int, size: int) -> tuple[Point, ...]:
    """The public points of cards 0..size-1 at this table and deal."""
    return tuple(hash_to_point(CARD_DOMAIN, card_fields(table, deal, c))[0]
                 for c in range(size))


def key_share(source: SecretSource) -> tuple[int, Point]:
    """A fresh key share ``x`` and its public part ``x·G`` (one deal only)."""
    x = random_scalar(source)
    return x, base_mul(x)


def joint_key(publics: Iterable[Point]) -> Point:
    """``K = Σ X_i``; IdentityPointError if the shares cancel (their proofs of knowledge
    make that impossible to arrange)."""
    return add(*publics)


def encrypt(message: Point, key: Point, r: int) -> Ciphertext:
    """``(r·G, M + r·K)`` for ``r`` in [1, N-1]."""
    return Ciphertext(base_mul(r), add(message, mul(r, key)))


def public_encryption(message: Point, key: Point) -> Ciphertext:
    """The deck before the first shuffle: ``(G, M + K)``, randomness 1, which anyone
    can check (the identity, randomness 0, has no encoding)."""
    return Ciphertext(G, add(message, key))


def reencrypt(ciphertext: Ciphertext, key: Point, r: int) -> Ciphertext:
    """``(C1 + r·G, C2 + r·K)``: the same card, unlinkable without the key."""
    return Ciphertext(add(ciphertext.c1, base_mul(r)), add(ciphertext.c2, mul(r, key)))


def decryption_share(ciphertext: Ciphertext, x: int) -> Point:
    """``D = x·C1`` (with a proof: :func:`p2pcards.protocol.proved.sigma.prove_share`)."""
    return mul(x, ciphertext.c1)


def combine(ciphertext: Ciphertext, shares: Sequence[Point]) -> Point:
    """``M = C2 − Σ D_i``, every party's share given; IdentityPointError if that is the
    identity (a ciphertext that opens to no card)."""
    return sub(ciphertext.c2, add(*shares))


def shuffle(deck: Sequence[Ciphertext], key: Point, source: SecretSource
            ) -> tuple[tuple[Ciphertext, ...], list[int], list[int]]:
    """A shuffle pass: ``out[i] = reencrypt(deck[ψ[i]], r[i])`` for a uniform secret
    permutation ``ψ`` (Fisher–Yates) and fresh ``r``.  Returns (out, ψ, r)."""
    psi = list(range(len(deck)))
    for i in range(len(psi) - 1, 0, -1):
        j = source.randbelow(i + 1)
        psi[i], psi[j] = psi[j], psi[i]
    rs = [random_scalar(source) for _ in deck]
    return tuple(reencrypt(deck[psi[i]], key, rs[i]) for i in range(len(deck))), psi, rs
