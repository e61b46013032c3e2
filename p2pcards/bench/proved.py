"""``p2pcards bench proved``: the proved deck's cryptography (docs/proved-deck.md).

Per operation, best of several rounds (the least disturbed by other work): the group
operations coincurve gives (a multiplication of any point, of the base point, an
addition), a shuffle pass and its proof made and checked for decks of 52, 54 and 80
cards, a decryption share with its proof, and a proof of knowledge of a key share.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from p2pcards.bench.record import Record
from p2pcards.protocol.proved import elgamal, group, shuffle, sigma
from p2pcards.protocol.source import SeededSource

SIZES = (52, 54, 80)
TABLE = b"bench-table"


def _best(call: Callable[[], object], rounds: int, repeat: int = 1) -> float:
    """The best of ``rounds`` timings of ``repeat`` calls, per call, in seconds."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeat):
            call()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best


def _shuffle_records(size: int, joint: group.Point, source: SeededSource, rounds: int
                     ) -> list[Record]:
    """A shuffle pass of ``size`` cards, and its proof made and checked."""
    context = sigma.Context(TABLE, size, 1)
    deck = tuple(elgamal.public_encryption(c, joint)
                 for c in elgamal.card_points(TABLE, size, size))
    shuffled, psi, rs = elgamal.shuffle(deck, joint, source)
    statement = shuffle.ShuffleStatement(context, joint, deck, shuffled)
    proof = shuffle.prove_shuffle(statement, psi, rs, source)  # warms the generators
    return [
        Record(f"proved.shuffle.{size}",
               round(1e3 * _best(lambda: elgamal.shuffle(deck, joint, source), rounds), 1),
               "ms"),
        Record(f"proved.shuffle_prove.{size}", round(1e3 * _best(
            lambda: shuffle.prove_shuffle(statement, psi, rs, source), rounds), 1), "ms"),
        Record(f"proved.shuffle_verify.{size}", round(1e3 * _best(
            lambda: shuffle.verify_shuffle(statement, proof), rounds), 1), "ms"),
    ]


def bench_proved(seconds: float = 2.0, seed: int = 1) -> list[Record]:
    rounds = max(3, round(seconds * 2.5))
    source = SeededSource(f"bench:proved:{seed}")
    a, b = group.random_scalar(source), group.random_scalar(source)
    p, q = group.base_mul(a), group.base_mul(b)
    records = [
        Record("proved.group.multiply", round(1e6 * _best(lambda: group.mul(b, p), rounds,
                                                          200), 1), "us"),
        Record("proved.group.base_multiply", round(1e6 * _best(lambda: group.base_mul(b),
                                                               rounds, 200), 1), "us"),
        Record("proved.group.add", round(1e6 * _best(lambda: group.add(p, q), rounds, 200), 1),
               "us"),
    ]
    shares = [elgamal.key_share(source) for _ in range(4)]
    joint = elgamal.joint_key(x for _, x in shares)
    for size in SIZES:
        records += _shuffle_records(size, joint, source, rounds)
    x, public = shares[0]
    context = sigma.Context(TABLE, 0, 0)
    target = elgamal.encrypt(elgamal.card_points(TABLE, 0, 1)[0], joint, 12345)
    share, share_proof = sigma.prove_share(context, x, target, source)
    key_proof = sigma.prove_key(context, x, source)
    return [*records,
        Record("proved.share_prove", round(1e6 * _best(
            lambda: sigma.prove_share(context, x, target, source), rounds, 50), 1), "us"),
        Record("proved.share_verify", round(1e6 * _best(
            lambda: sigma.verify_share(context, public, target, share, share_proof),
            rounds, 50), 1), "us"),
        Record("proved.key_prove", round(1e6 * _best(
            lambda: sigma.prove_key(context, x, source), rounds, 50), 1), "us"),
        Record("proved.key_verify", round(1e6 * _best(
            lambda: sigma.verify_key(context, public, key_proof), rounds, 50), 1), "us"),
    ]
