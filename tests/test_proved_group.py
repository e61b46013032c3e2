"""The proved deck's group (secp256k1 through coincurve): canonical encodings, the
identity handled, arithmetic checked against plain affine formulas, hash to curve
recomputed from its specification (docs/proved-deck.md, "The group")."""

from __future__ import annotations

import hashlib
import random

import pytest
from coincurve import PublicKey

from p2pcards.protocol.proved import group
from p2pcards.protocol.proved.group import (
    EncodingError,
    G,
    IdentityPointError,
    N,
    P,
    add,
    base_mul,
    decode_point,
    decode_scalar,
    hash_to_point,
    msm,
    mul,
    neg,
    sub,
)
from p2pcards.protocol.source import SeededSource

GX = 0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798
GY = 0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8


def affine_add(a: tuple[int, int] | None, b: tuple[int, int] | None) -> tuple[int, int] | None:
    """Textbook affine addition on y² = x³ + 7 (None is the identity)."""
    if a is None:
        return b
    if b is None:
        return a
    (x1, y1), (x2, y2) = a, b
    if x1 == x2 and (y1 + y2) % P == 0:
        return None
    if a == b:
        m = 3 * x1 * x1 * pow(2 * y1, -1, P)
    else:
        m = (y2 - y1) * pow(x2 - x1, -1, P)
    x3 = (m * m - x1 - x2) % P
    return x3, (m * (x1 - x3) - y1) % P


def affine_mul(k: int, point: tuple[int, int]) -> tuple[int, int] | None:
    acc: tuple[int, int] | None = None
    for bit in bin(k)[2:]:
        acc = affine_add(acc, acc)
        if bit == "1":
            acc = affine_add(acc, point)
    return acc


def sec1(point: tuple[int, int] | None) -> bytes:
    assert point is not None
    x, y = point
    return bytes([2 + (y & 1)]) + x.to_bytes(32, "big")


def test_arithmetic_matches_the_affine_formulas() -> None:
    rng = random.Random(5)
    assert G.encode() == sec1((GX, GY))
    for _ in range(3):
        a, b = rng.randrange(1, N), rng.randrange(1, N)
        pa = affine_mul(a, (GX, GY))
        assert pa is not None
        assert base_mul(a).encode() == sec1(pa)
        assert mul(b, base_mul(a)).encode() == sec1(affine_mul(a * b % N, (GX, GY)))
        pb = affine_mul(b, (GX, GY))
        assert add(base_mul(a), base_mul(b)).encode() == sec1(affine_add(pa, pb))
        assert neg(base_mul(a)) == base_mul(N - a)
        assert sub(base_mul(a), base_mul(b)) == base_mul((a - b) % N) or a == b
        assert msm([(a, G), (b, base_mul(3))], base=5) == base_mul((a + 3 * b + 5) % N)
    assert mul(N + 2, G) == base_mul(2)  # scalars are reduced mod N


def test_the_identity_has_no_encoding_and_is_refused_where_it_would_appear() -> None:
    """Reaching the identity raises IdentityPointError instead of yielding a point."""
    with pytest.raises(IdentityPointError):
        add(G, neg(G))
    with pytest.raises(IdentityPointError):
        mul(N, G)
    with pytest.raises(IdentityPointError):
        base_mul(0)
    with pytest.raises(IdentityPointError):
        msm([(3, G), (N - 3, G)])
    with pytest.raises(IdentityPointError):
        msm([(0, G)], base=0)
    assert group.equals(lambda: add(G, neg(G)), G) is False  # a verifier refuses
    with pytest.raises(EncodingError, match="begins with 02 or 03, not 00"):
        decode_point(bytes(33))  # nor is there a byte string for it


def test_points_decode_only_from_their_canonical_encoding() -> None:
    good = base_mul(12345).encode()
    assert decode_point(good) == base_mul(12345)
    assert decode_point(bytes([good[0] ^ 1]) + good[1:]) == neg(base_mul(12345))
    not_on_curve = next(x for x in range(1, 100) if not group.is_square_x(x))
    cases = {
        good[:32]: "33 bytes, not 32",
        good + b"\x00": "33 bytes, not 34",
        b"\x04" + good[1:]: "not 04",
        b"\x06" + good[1:]: "not 06",
        b"\x02" + P.to_bytes(32, "big"): "not below the field prime",
        b"\x02" + (P + 1).to_bytes(32, "big"): "not below the field prime",
        b"\x02" + not_on_curve.to_bytes(32, "big"): "not on the curve",
    }
    for data, reason in cases.items():
        with pytest.raises(EncodingError, match=reason) as caught:
            decode_point(data, "deck[3].c1")
        assert caught.value.field == "deck[3].c1"
    uncompressed = b"\x04" + GX.to_bytes(32, "big") + GY.to_bytes(32, "big")
    hybrid = b"\x06" + uncompressed[1:]
    # a decoder built on coincurve's parser alone (the weakened check) would take
    # other byte strings for G, so one proof could travel in several encodings
    assert PublicKey(uncompressed).format() == PublicKey(hybrid).format() == G.encode()
    for other in (uncompressed, hybrid, hybrid[:33]):
        with pytest.raises(EncodingError):
            decode_point(other)


def test_scalars_decode_only_below_the_order() -> None:
    assert decode_scalar((N - 1).to_bytes(32, "big")) == N - 1
    # a decoder that reduced mod N (the weakened check) would read N + 5 as 5: a
    # second encoding of the same response
    assert int.from_bytes((N + 5).to_bytes(32, "big"), "big") % N == 5
    with pytest.raises(EncodingError):
        decode_scalar((N + 5).to_bytes(32, "big"))
    assert decode_scalar(bytes(32)) == 0
    for data, reason in [((N).to_bytes(32, "big"), "below the group order"),
                         (b"\xff" * 32, "below the group order"),
                         (bytes(31), "32 bytes, not 31"),
                         (bytes(33), "32 bytes, not 33")]:
        with pytest.raises(EncodingError, match=reason):
            decode_scalar(data, "s1")
    with pytest.raises(EncodingError, match="s1: this scalar may not be 0"):
        decode_scalar(bytes(32), "s1", nonzero=True)


def test_random_scalars_come_from_the_source() -> None:
    a = [group.random_scalar(SeededSource(3)) for _ in range(2)]
    assert a[0] == a[1]
    assert group.random_scalar(SeededSource(4)) != a[0]
    assert all(1 <= group.random_scalar(SeededSource(s)) < N for s in range(20))


def test_hash_to_curve_follows_its_specification() -> None:
    """Recomputed from the doc's words: SHA-256 of the length-prefixed frame with a
    counter byte as the last field, the first x on the curve, even y."""
    tag, fields = b"p2pcards/test/v1", [b"table", (259).to_bytes(8, "big")]
    point, counter = hash_to_point(tag, fields)
    for i in range(counter + 1):
        pre = (len(tag).to_bytes(2, "big") + tag
               + b"".join(len(f).to_bytes(4, "big") + f for f in [*fields, bytes([i])]))
        x = int.from_bytes(hashlib.sha256(pre).digest(), "big")
        on_curve = x < P and pow((x**3 + 7) % P, (P - 1) // 2, P) == 1
        assert on_curve == (i == counter)
    assert point.encode() == b"\x02" + x.to_bytes(32, "big")
    y = pow((x**3 + 7) % P, (P + 1) // 4, P)  # a square root (P = 3 mod 4)
    even = y if y % 2 == 0 else P - y
    assert point.key.point() == (x, even)
    # the length prefixes keep fields apart: moving a byte between fields moves the point
    assert hash_to_point(tag, [b"ab", b"c"])[0] != hash_to_point(tag, [b"a", b"bc"])[0]
    gens = [group.generator(i) for i in range(6)]
    assert len(set(gens)) == 6 and G not in gens
