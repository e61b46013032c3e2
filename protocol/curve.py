"""Commutative encryption of card points on NIST P-256, x-coordinates only.

A card is a point ``P`` of the curve; encrypting it under a secret scalar
``k`` gives ``k·P``, and the encryptions by several parties commute:
``a·(b·P) = b·(a·P)``.  Decryption multiplies by ``k⁻¹ mod n``.  Only the
x-coordinate travels: ``x(k·P)`` depends on ``P`` only up to sign
(``x(k·(−P)) = x(k·P)``), so an x-coordinate is a sound name for the pair
``±P`` and every operation of the deck works on it.

The multiplication is ``cryptography``'s ECDH: the scalar as a private key,
the point (decompressed from its x-coordinate, which also proves it is on
the curve) as a peer key, and the shared secret is ``x(k·P)``.  Card points
come from hashing a label that names the table, the deal and the card
(try-and-increment), so they are public and deterministic, and nobody knows
a discrete-log relation between two of them.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Protocol

from cryptography.hazmat.primitives.asymmetric import ec

P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
"""The field prime of P-256."""
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
"""The group order of P-256 (the cofactor is 1: every point but O has order N)."""
POINT_BYTES = 32
_CURVE = ec.SECP256R1()
_ECDH = ec.ECDH()
CARD_DOMAIN = b"p2pcards/card-point/v1"


class PointError(ValueError):
    """Bytes that are not the x-coordinate of a point of P-256."""


class SecretSource(Protocol):
    """Where secrets come from: :mod:`secrets` in play, a seeded generator in tests."""

    def randbelow(self, n: int) -> int: ...

    def token_bytes(self, n: int) -> bytes: ...


def lift(x: bytes) -> ec.EllipticCurvePublicKey:
    """The point with x-coordinate ``x`` (either sign); PointError if there is none."""
    if len(x) != POINT_BYTES:
        raise PointError(f"a point is {POINT_BYTES} bytes, not {len(x)}")
    if int.from_bytes(x, "big") >= P:
        raise PointError("coordinate out of range")
    try:
        return ec.EllipticCurvePublicKey.from_encoded_point(_CURVE, b"\x02" + x)
    except ValueError:
        raise PointError("not on the curve") from None


def is_point(x: bytes) -> bool:
    try:
        lift(x)
    except PointError:
        return False
    return True


def random_scalar(source: SecretSource) -> int:
    """A uniform secret scalar in [1, N-1]."""
    return 1 + source.randbelow(N - 1)


def check_scalar(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or not 0 < k < N:
        raise ValueError("a scalar must be an integer in [1, N-1]")


def inverse(k: int) -> int:
    return pow(k, -1, N)


Point = ec.EllipticCurvePublicKey
"""A point decompressed and checked (by :func:`lift`), ready to be multiplied."""


class Multiplier:
    """Multiplication of points by one scalar (the key is built once, then reused).

    ``Multiplier.operations`` counts the multiplications done in this process
    (``p2pcards bench deck`` reports it against the floor of 2·N·M).
    """

    __slots__ = ("_key", "scalar")
    operations = 0

    def __init__(self, scalar: int):
        check_scalar(scalar)
        self.scalar = scalar
        self._key = ec.derive_private_key(scalar, _CURVE)

    def __call__(self, x: bytes) -> bytes:
        """``x(scalar·P)`` for the point ``P`` named by ``x``; PointError if ``x`` is none."""
        return self.times(lift(x))

    def times(self, point: Point) -> bytes:
        """``x(scalar·P)`` for a lifted point."""
        Multiplier.operations += 1
        return self._key.exchange(_ECDH, point)


def mul(k: int, x: bytes) -> bytes:
    return Multiplier(k)(x)


def hash_to_point(label: bytes) -> bytes:
    """A public point for ``label`` (try-and-increment on SHA-256): its x-coordinate."""
    for counter in range(256):
        digest = hashlib.sha256(label + bytes([counter])).digest()
        if int.from_bytes(digest, "big") < P and is_point(digest):
            return digest
    raise AssertionError("no point in 256 tries")  # probability 2^-256


def card_label(table: bytes, deal: int, card: int) -> bytes:
    """The label hashed to card ``card``'s point: domain, table, deal, card."""
    return b"".join([CARD_DOMAIN, len(table).to_bytes(2, "big"), table,
                     deal.to_bytes(8, "big"), card.to_bytes(2, "big")])


@functools.lru_cache(maxsize=16)
def card_points(table: bytes, deal: int, size: int) -> tuple[bytes, ...]:
    """The public points of cards 0..size-1 at this table and deal (public, so cached)."""
    return tuple(hash_to_point(card_label(table, deal, card)) for card in range(size))
