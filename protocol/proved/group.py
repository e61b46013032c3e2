"""The group: secp256k1 through coincurve (bindings to libsecp256k1).

Points travel as 33-byte compressed SEC1 encodings (``02``/``03`` ‖ x) and scalars as
32 bytes big-endian; both decoders refuse anything not canonical.  The identity has
no encoding: a computation that would reach it raises :class:`IdentityPointError`, which a
verifier turns into a refusal and a prover never meets but with negligible
probability (docs/proved-deck.md, "The group").

Multiplications of the base point ``G`` by a scalar go through libsecp256k1's
constant-time generator multiplication; a multiplication of any other point is
variable-time (docs/proved-deck.md, "Timing").
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable, Sequence

from coincurve import PublicKey

from ..curve import SecretSource
from ..errors import DeckError

P = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F
"""The field prime of secp256k1."""
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
"""The group order (the cofactor is 1: every point but the identity has order N)."""
POINT_BYTES = 33
SCALAR_BYTES = 32
_G_X = 0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798


class ProvedError(DeckError):
    """Any error of the proved deck's cryptography."""


class EncodingError(ProvedError, ValueError):
    """Bytes that are not the canonical encoding of what is due; names the field."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class IdentityPointError(ProvedError, ArithmeticError):
    """A computation reached the identity, which has no encoding."""


def u8(v: int) -> bytes:
    return v.to_bytes(1, "big")


def u16(v: int) -> bytes:
    return v.to_bytes(2, "big")


def u32(v: int) -> bytes:
    return v.to_bytes(4, "big")


def u64(v: int) -> bytes:
    return v.to_bytes(8, "big")


def s32(k: int) -> bytes:
    """A scalar (already reduced mod N) as 32 bytes big-endian."""
    return k.to_bytes(SCALAR_BYTES, "big")


class Point:
    """A point of secp256k1 other than the identity (immutable; equal by encoding)."""

    __slots__ = ("_encoded", "_key")

    def __init__(self, key: PublicKey, encoded: bytes | None = None):
        self._key = key
        self._encoded = encoded

    @property
    def key(self) -> PublicKey:
        return self._key

    def encode(self) -> bytes:
        """The 33-byte compressed encoding, ``02`` (even y) or ``03`` (odd y) ‖ x."""
        if self._encoded is None:
            self._encoded = self._key.format(compressed=True)
        return self._encoded

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Point) and self.encode() == other.encode()

    def __hash__(self) -> int:
        return hash(self.encode())

    def __repr__(self) -> str:
        return f"Point({self.encode().hex()})"


def decode_point(data: bytes, field: str = "point") -> Point:
    """The point ``data`` encodes: exactly 33 bytes, prefix 02 or 03, x < P, on the
    curve.  Anything else raises :class:`EncodingError` naming ``field``."""
    if len(data) != POINT_BYTES:
        raise EncodingError(field, f"a point is {POINT_BYTES} bytes, not {len(data)}")
    if data[0] not in (2, 3):
        raise EncodingError(field, f"a point begins with 02 or 03, not {data[0]:02x}")
    if int.from_bytes(data[1:], "big") >= P:
        raise EncodingError(field, "the x-coordinate is not below the field prime")
    try:
        key = PublicKey(bytes(data))
    except ValueError:
        raise EncodingError(field, "not on the curve") from None
    return Point(key, bytes(data))


def decode_scalar(data: bytes, field: str = "scalar", *, nonzero: bool = False) -> int:
    """The scalar ``data`` encodes: exactly 32 bytes big-endian, below N (and not 0 if
    ``nonzero``).  Anything else raises :class:`EncodingError` naming ``field``."""
    if len(data) != SCALAR_BYTES:
        raise EncodingError(field, f"a scalar is {SCALAR_BYTES} bytes, not {len(data)}")
    value = int.from_bytes(data, "big")
    if value >= N:
        raise EncodingError(field, "a scalar is below the group order")
    if nonzero and value == 0:
        raise EncodingError(field, "this scalar may not be 0")
    return value


G = Point(PublicKey.from_secret(s32(1)))
"""The standard base point of secp256k1."""
assert G.encode() == b"\x02" + _G_X.to_bytes(32, "big")


def random_scalar(source: SecretSource) -> int:
    """A uniform secret scalar in [1, N-1] from ``source``."""
    return 1 + source.randbelow(N - 1)


def base_mul(k: int) -> Point:
    """``k·G`` by libsecp256k1's constant-time generator multiplication."""
    k %= N
    if k == 0:
        raise IdentityPointError("0·G is the identity")
    return Point(PublicKey.from_secret(s32(k)))


def mul(k: int, point: Point) -> Point:
    """``k·point`` (variable-time in ``k``); IdentityPointError when ``k ≡ 0 mod N``."""
    k %= N
    if k == 0:
        raise IdentityPointError("0·P is the identity")
    return Point(point.key.multiply(s32(k)))


def neg(point: Point) -> Point:
    """``−point``: the same x, the other y (the prefix flips between 02 and 03)."""
    data = point.encode()
    flipped = bytes([data[0] ^ 1]) + data[1:]
    return Point(PublicKey(flipped), flipped)


def add(*points: Point) -> Point:
    """The sum of one or more points; IdentityPointError when it is the identity."""
    try:
        return Point(PublicKey.combine_keys([p.key for p in points]))
    except ValueError:
        raise IdentityPointError("the sum is the identity") from None


def sub(a: Point, b: Point) -> Point:
    return add(a, neg(b))


def msm(terms: Iterable[tuple[int, Point]], base: int = 0) -> Point:
    """``base·G + Σ k_i·P_i``: every product computed (``base·G`` in constant time),
    then one sum.  Terms whose scalar is 0 mod N are left out, those whose scalar is 1
    are not multiplied; IdentityPointError when the sum is the identity."""
    keys = [p.key if k % N == 1 else p.key.multiply(s32(k % N)) for k, p in terms if k % N]
    if base % N:
        keys.append(PublicKey.from_secret(s32(base % N)))
    if not keys:
        raise IdentityPointError("an empty sum is the identity")
    try:
        return Point(PublicKey.combine_keys(keys))
    except ValueError:
        raise IdentityPointError("the sum is the identity") from None


def equals(compute: Callable[[], Point], expected: Point) -> bool:
    """Whether a point a verifier recomputes equals ``expected``; one that would be the
    identity equals nothing encodable, so the check fails."""
    try:
        return compute() == expected
    except IdentityPointError:
        return False


def frame(tag: bytes, fields: Sequence[bytes]) -> bytes:
    """The length-prefixed encoding every hash of the proved deck takes:
    ``u16(len(tag)) ‖ tag ‖ (u32(len(f)) ‖ f for each field f)``."""
    parts = [u16(len(tag)), tag]
    for f in fields:
        parts += [u32(len(f)), f]
    return b"".join(parts)


def digest(tag: bytes, fields: Sequence[bytes]) -> bytes:
    return hashlib.sha256(frame(tag, fields)).digest()


def hash_to_scalar(tag: bytes, fields: Sequence[bytes]) -> int:
    """``int(SHA-256(frame(tag, fields))) mod N`` (a Fiat–Shamir challenge)."""
    return int.from_bytes(digest(tag, fields), "big") % N


def is_square_x(x: int) -> bool:
    """Whether ``x < P`` is the x-coordinate of a point: ``x³ + 7`` a square mod P
    (never 0: secp256k1 has no point with y = 0)."""
    return x < P and pow((x * x * x + 7) % P, (P - 1) // 2, P) == 1


def hash_to_point(tag: bytes, fields: Sequence[bytes]) -> tuple[Point, int]:
    """Try and increment: for counter ``i`` = 0, 1, …, 255, ``x = SHA-256(frame(tag,
    fields ‖ [u8(i)]))``; the first ``x`` that is an x-coordinate gives the point with
    even y (``02 ‖ x``).  Returns the point and the counter.  Public labels only: the
    number of tries shows."""
    for counter in range(256):
        x = digest(tag, [*fields, u8(counter)])
        if is_square_x(int.from_bytes(x, "big")):
            return decode_point(b"\x02" + x, "hash to curve"), counter
    raise AssertionError("no point in 256 tries")  # probability 2^-256


GENERATOR_DOMAIN = b"p2pcards/proved/generator/v1"


@functools.lru_cache(maxsize=1024)
def generator(index: int) -> Point:
    """Independent generator number ``index`` (0 is the shuffle proof's ``H``, 1…N its
    ``H_1 … H_N``): ``hash_to_point(GENERATOR_DOMAIN, [u16(index)])``, so that nobody
    knows its discrete logarithm to ``G`` or to another generator."""
    return hash_to_point(GENERATOR_DOMAIN, [u16(index)])[0]
