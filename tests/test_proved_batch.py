"""Several decryption shares of one party checked at once (``first_bad_share``): the
first equations summed with weights hashed from everything checked, the second ones
one by one; the share and the equation named are those a check of each alone names
first, and shares made to cancel out in a plain sum are caught."""

from __future__ import annotations

import dataclasses
import random

from p2pcards.protocol.proved.elgamal import Ciphertext, card_points, key_share, reencrypt
from p2pcards.protocol.proved.group import N, Point, base_mul, mul, random_scalar
from p2pcards.protocol.proved.sigma import (
    Context,
    ShareProof,
    first_bad_share,
    prove_share,
    share_challenge,
    share_checks,
)

CONTEXT = Context(b"batch-test-table", 7, 1)


class Source:
    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def randbelow(self, n: int) -> int:
        return self.rng.randrange(n)

    def token_bytes(self, n: int) -> bytes:
        return self.rng.randbytes(n)


def shares(count: int) -> tuple[int, Point, list[tuple[Ciphertext, Point, ShareProof]]]:
    """A party's key share and honest shares of ``count`` ciphertexts (with its proofs)."""
    source = Source("batch")
    x, public = key_share(source)
    key = base_mul(random_scalar(source))
    items = []
    for point in card_points(b"batch-test-table", 7, count):
        ciphertext = reencrypt(Ciphertext(base_mul(1), point), key, random_scalar(source))
        share, proof = prove_share(CONTEXT, x, ciphertext, source)
        items.append((ciphertext, share, proof))
    return x, public, items


def one_by_one(public: Point, items: list[tuple[Ciphertext, Point, ShareProof]]
               ) -> tuple[int, str] | None:
    for i, (ciphertext, share, proof) in enumerate(items):
        failed = [k for k, ok in share_checks(CONTEXT, public, ciphertext, share,
                                              proof).items() if not ok]
        if failed:
            return i, failed[0]
    return None


def test_honest_shares_hold_together() -> None:
    _, public, items = shares(12)
    assert first_bad_share(CONTEXT, public, items) is None
    assert first_bad_share(CONTEXT, public, []) is None


def test_a_bad_proof_is_named_as_one_by_one_names_it() -> None:
    x, public, items = shares(8)
    items[5] = (items[5][0], items[5][1], dataclasses.replace(items[5][2],
                                                              s=(items[5][2].s + 1) % N))
    assert first_bad_share(CONTEXT, public, items) == (5, "s·G = A + c·X") \
        == one_by_one(public, items)
    # a proof of a share made with another key share: its first equation holds (it is
    # made with the party's x), its second does not
    ciphertext = items[2][0]
    wrong = mul(x + 1, ciphertext.c1)
    w = 12345
    a, b = base_mul(w), mul(w, ciphertext.c1)
    c = share_challenge(CONTEXT, public, ciphertext, wrong, a=a, b=b)
    items[2] = (ciphertext, wrong, ShareProof(a, b, (w + c * x) % N))
    assert first_bad_share(CONTEXT, public, items) == (2, "s·C1 = B + c·D") \
        == one_by_one(public, items)


def test_errors_that_cancel_in_a_plain_sum_are_caught() -> None:
    _, public, items = shares(6)
    (c1, d1, p1), (c4, d4, p4) = items[1], items[4]
    items[1] = (c1, d1, dataclasses.replace(p1, s=(p1.s + 99) % N))
    items[4] = (c4, d4, dataclasses.replace(p4, s=(p4.s - 99) % N))
    assert first_bad_share(CONTEXT, public, items) == (1, "s·G = A + c·X")
