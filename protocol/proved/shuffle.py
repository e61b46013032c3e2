"""The Terelius–Wikström proof of a shuffle (docs/proved-deck.md, "Proof of a shuffle").

A shuffler turns the deck ``e`` (N ElGamal ciphertexts under the joint key ``K``)
into ``ẽ`` with ``ẽ_i = e_ψ(i) + (r̃_i·G, r̃_i·K)`` for a secret permutation ``ψ`` and
secret ``r̃``, and proves it without showing either.  This follows Haenni, Locher,
Koenig and Dubuis, "Pseudo-code algorithms for verifiable re-encryption mix-nets"
(2017), GenShuffleProof and CheckShuffleProof, in additive notation: a Pedersen
commitment ``c`` to the permutation matrix over independent generators ``H_1 … H_N``,
a commitment chain ``ĉ`` that proves the product of the permuted challenges, and one
sigma protocol for all of it, made non-interactive by Fiat–Shamir over everything the
proof is about.  Indices here run 0 … N-1 where the paper's run 1 … N.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from ..constants import MAX_ITEMS
from ..curve import SecretSource
from .elgamal import CIPHERTEXT_BYTES, Ciphertext, decode_ciphertext, encode_deck
from .group import (
    POINT_BYTES,
    SCALAR_BYTES,
    EncodingError,
    G,
    N,
    Point,
    add,
    base_mul,
    decode_point,
    decode_scalar,
    digest,
    equals,
    generator,
    hash_to_scalar,
    msm,
    random_scalar,
    s32,
    u16,
)
from .sigma import Context, ProofError

U_DOMAIN = b"p2pcards/proved/shuffle-u/v1"
U_EACH_DOMAIN = b"p2pcards/proved/shuffle-u-each/v1"
CHALLENGE_DOMAIN = b"p2pcards/proved/shuffle-challenge/v1"


@dataclass(frozen=True, slots=True)
class ShuffleStatement:
    """What a shuffle proof is about: whose (``context``: table, deal, shuffler), the
    joint key, the deck it took and the deck it gave."""

    context: Context
    key: Point
    inputs: tuple[Ciphertext, ...]
    outputs: tuple[Ciphertext, ...]

    def __post_init__(self) -> None:
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"a shuffle gives as many ciphertexts as it takes "
                             f"({len(self.inputs)} in, {len(self.outputs)} out)")
        if not 1 <= len(self.inputs) <= MAX_ITEMS:
            raise ValueError(f"a shuffle takes 1 to {MAX_ITEMS} ciphertexts")

    @property
    def size(self) -> int:
        return len(self.inputs)

    def fields(self) -> list[bytes]:
        """table, u64(deal), u8(party), K, G, H, H_1 ‖ … ‖ H_N, e_1 ‖ … ‖ e_N,
        ẽ_1 ‖ … ‖ ẽ_N: the statement's part of every hash of the proof."""
        return [*self.context.fields(), self.key.encode(), G.encode(),
                generator(0).encode(),
                b"".join(generator(i + 1).encode() for i in range(self.size)),
                encode_deck(self.inputs), encode_deck(self.outputs)]


@dataclass(frozen=True, slots=True)
class ShuffleProof:
    """``(c, ĉ, t, s)`` of CheckShuffleProof; :func:`encode_shuffle_proof` gives its
    bytes.  The challenge is not sent: a verifier recomputes it from ``t``."""

    commitments: tuple[Point, ...]
    chain: tuple[Point, ...]
    t1: Point
    t2: Point
    t3: Point
    t4: Ciphertext
    t_hat: tuple[Point, ...]
    s1: int
    s2: int
    s3: int
    s4: int
    s_hat: tuple[int, ...]
    s_tilde: tuple[int, ...]


def _points(points: Sequence[Point]) -> bytes:
    return b"".join(p.encode() for p in points)


def challenges(fields: list[bytes], commitments: Sequence[Point]) -> list[int]:
    """``u_i = H(U_EACH_DOMAIN; seed, u16(i)) mod N`` with ``seed = SHA-256(frame(
    U_DOMAIN; statement, c_0 ‖ … ‖ c_{N-1}))``, as GetChallenges derives them."""
    seed = digest(U_DOMAIN, [*fields, _points(commitments)])
    return [hash_to_scalar(U_EACH_DOMAIN, [seed, u16(i)]) for i in range(len(commitments))]


def challenge(fields: list[bytes], commitments: Sequence[Point], chain: Sequence[Point],
              t: tuple[Point, Point, Point, Ciphertext, Sequence[Point]]) -> int:
    """``c = H(CHALLENGE_DOMAIN; statement, c, ĉ, t1, t2, t3, t4, t̂) mod N``."""
    t1, t2, t3, t4, t_hat = t
    return hash_to_scalar(CHALLENGE_DOMAIN, [
        *fields, _points(commitments), _points(chain), t1.encode(), t2.encode(),
        t3.encode(), t4.encode(), _points(t_hat)])


def prove_shuffle(statement: ShuffleStatement, permutation: Sequence[int],
                  randomness: Sequence[int], source: SecretSource) -> ShuffleProof:
    """The proof that ``outputs[i] = reencrypt(inputs[permutation[i]], randomness[i])``
    (what :func:`p2pcards.protocol.proved.elgamal.shuffle` returns)."""
    if sorted(permutation) != list(range(statement.size)):
        raise ValueError("the permutation is not one of 0 … N-1")
    if len(randomness) != statement.size:
        raise ValueError("one re-encryption scalar per ciphertext")
    columns = [((permutation[i], 1),) for i in range(statement.size)]
    return prove_linear(statement, columns, randomness, source)


def prove_linear(statement: ShuffleStatement, columns: Sequence[Sequence[tuple[int, int]]],
                 randomness: Sequence[int], source: SecretSource) -> ShuffleProof:
    """The prover for ``outputs[i] = Σ_(j, b) ∈ columns[i] b·inputs[j] + (r̃_i·G, r̃_i·K)``
    when the matrix ``B`` (``B[j][i] = b``) inverts that map.  For a permutation
    (:func:`prove_shuffle`) ``columns[i] = ((ψ(i), 1),)``; the tests give it other
    matrices to show which check refuses them."""
    size, key = statement.size, statement.key
    fields = statement.fields()
    h0 = generator(0)
    hs = [generator(i + 1) for i in range(size)]
    r = [random_scalar(source) for _ in range(size)]
    rows: list[list[tuple[int, Point]]] = [[] for _ in range(size)]
    for i, column in enumerate(columns):
        for j, b in column:
            rows[j].append((b, hs[i]))
    commitments = tuple(msm(rows[j], r[j]) for j in range(size))  # c_j = r_j·G + Σ B_ji·H_i
    u = challenges(fields, commitments)
    u_tilde = [sum(b * u[j] for j, b in column) % N for column in columns]
    r_hat = [random_scalar(source) for _ in range(size)]
    chain: list[Point] = []
    for i in range(size):  # ĉ_i = r̂_i·G + ũ_i·ĉ_{i-1}, ĉ_{-1} = H
        chain.append(msm([(u_tilde[i], chain[-1] if chain else h0)], r_hat[i]))
    w1, w2, w3, w4 = (random_scalar(source) for _ in range(4))
    w_hat = [random_scalar(source) for _ in range(size)]
    w_tilde = [random_scalar(source) for _ in range(size)]
    t1, t2 = base_mul(w1), base_mul(w2)
    t3 = msm(list(zip(w_tilde, hs, strict=True)), w3)
    outs = statement.outputs
    t4 = Ciphertext(msm([(w, e.c1) for w, e in zip(w_tilde, outs, strict=True)], N - w4),
                    msm([(w, e.c2) for w, e in zip(w_tilde, outs, strict=True)]
                        + [(N - w4, key)]))
    t_hat = tuple(msm([(w_tilde[i], chain[i - 1] if i else h0)], w_hat[i])
                  for i in range(size))
    c = challenge(fields, commitments, chain, (t1, t2, t3, t4, t_hat))
    v = [1] * size  # v_i = ũ_{i+1} · … · ũ_{N-1}
    for i in range(size - 2, -1, -1):
        v[i] = u_tilde[i + 1] * v[i + 1] % N
    r_bar = sum(r) % N
    r_chain = sum(a * b for a, b in zip(r_hat, v, strict=True)) % N
    r_weighted = sum(a * b for a, b in zip(r, u, strict=True)) % N
    r_reenc = sum(a * b for a, b in zip(randomness, u_tilde, strict=True)) % N
    return ShuffleProof(
        commitments, tuple(chain), t1, t2, t3, t4, t_hat,
        (w1 + c * r_bar) % N, (w2 + c * r_chain) % N, (w3 + c * r_weighted) % N,
        (w4 + c * r_reenc) % N,
        tuple((w + c * x) % N for w, x in zip(w_hat, r_hat, strict=True)),
        tuple((w + c * x) % N for w, x in zip(w_tilde, u_tilde, strict=True)))


def shuffle_checks(statement: ShuffleStatement, proof: ShuffleProof) -> dict[str, bool]:
    """Every equation of CheckShuffleProof, by name: ``t1`` (the commitments sum to
    the generators: each column of B sums to 1), ``t2`` (the chain ends at the product
    of the challenges), ``t3`` (the weighted commitments open to the responses),
    ``t4`` (the outputs are the inputs, re-weighted and re-encrypted), and
    ``t_hat[i]`` (link i of the chain).  The proof holds if every one is true."""
    size, key = statement.size, statement.key
    if not (len(proof.commitments) == len(proof.chain) == len(proof.t_hat)
            == len(proof.s_hat) == len(proof.s_tilde) == size):
        raise ProofError(f"party {statement.context.party}'s shuffle proof", "size",
                         f"is not that of a deck of {size}")
    fields = statement.fields()
    h0 = generator(0)
    hs = [generator(i + 1) for i in range(size)]
    u = challenges(fields, proof.commitments)
    c = challenge(fields, proof.commitments, proof.chain,
                  (proof.t1, proof.t2, proof.t3, proof.t4, proof.t_hat))
    minus_c = N - c
    product = 1
    for x in u:
        product = product * x % N
    ins, outs, s_tilde = statement.inputs, statement.outputs, proof.s_tilde
    checks = {
        # t1' = s1·G − c·(Σ c_j − Σ H_i)
        "t1": equals(lambda: msm([(minus_c, add(*proof.commitments)), (c, add(*hs))],
                                 proof.s1), proof.t1),
        # t2' = s2·G − c·(ĉ_{N-1} − (Π u_j)·H)
        "t2": equals(lambda: msm([(minus_c, proof.chain[-1]), (c * product, h0)],
                                 proof.s2), proof.t2),
        # t3' = s3·G + Σ s̃_i·H_i − c·Σ u_j·c_j
        "t3": equals(lambda: msm(list(zip(s_tilde, hs, strict=True))
                                 + [(minus_c * x, cj) for x, cj in
                                    zip(u, proof.commitments, strict=True)], proof.s3),
                     proof.t3),
        # t4' = Σ s̃_i·ẽ_i − (s4·G, s4·K) − c·Σ u_j·e_j, component by component
        "t4": equals(lambda: msm([(s, e.c1) for s, e in zip(s_tilde, outs, strict=True)]
                                 + [(minus_c * x, e.c1) for x, e in
                                    zip(u, ins, strict=True)], N - proof.s4),
                     proof.t4.c1)
        and equals(lambda: msm([(s, e.c2) for s, e in zip(s_tilde, outs, strict=True)]
                               + [(minus_c * x, e.c2) for x, e in zip(u, ins, strict=True)]
                               + [(N - proof.s4, key)]), proof.t4.c2),
    }
    def link(i: int) -> Point:  # t̂'_i = ŝ_i·G + s̃_i·ĉ_{i-1} − c·ĉ_i
        previous = proof.chain[i - 1] if i else h0
        return msm([(s_tilde[i], previous), (minus_c, proof.chain[i])], proof.s_hat[i])

    for i in range(size):
        checks[f"t_hat[{i}]"] = equals(functools.partial(link, i), proof.t_hat[i])
    return checks


def shuffle_holds(statement: ShuffleStatement, proof: ShuffleProof) -> bool:
    """Whether ``proof`` holds for ``statement`` (what :func:`verify_shuffle` checks,
    without naming the failure: for a worker thread, whose caller checks a failure
    again to name it)."""
    return all(shuffle_checks(statement, proof).values())


def verify_shuffle(statement: ShuffleStatement, proof: ShuffleProof) -> None:
    """ProofError, naming the first equation that fails, unless ``proof`` shows that
    the outputs are a re-encryption of a permutation of the inputs."""
    for check, ok in shuffle_checks(statement, proof).items():
        if not ok:
            raise ProofError(f"party {statement.context.party}'s shuffle proof", check)


# -- encoding ------------------------------------------------------------------------

def shuffle_proof_bytes(size: int) -> int:
    """``33·(3N + 5) + 32·(2N + 4)`` bytes for a deck of N."""
    return POINT_BYTES * (3 * size + 5) + SCALAR_BYTES * (2 * size + 4)


def encode_shuffle_proof(proof: ShuffleProof) -> bytes:
    """``c_0 … c_{N-1} ‖ ĉ_0 … ĉ_{N-1} ‖ t1 ‖ t2 ‖ t3 ‖ t4.C1 ‖ t4.C2 ‖ t̂_0 … t̂_{N-1} ‖
    s1 ‖ s2 ‖ s3 ‖ s4 ‖ ŝ_0 … ŝ_{N-1} ‖ s̃_0 … s̃_{N-1}``: points 33 bytes, scalars 32."""
    return b"".join([
        _points(proof.commitments), _points(proof.chain), proof.t1.encode(),
        proof.t2.encode(), proof.t3.encode(), proof.t4.encode(), _points(proof.t_hat),
        *(s32(s) for s in (proof.s1, proof.s2, proof.s3, proof.s4)),
        *(s32(s) for s in proof.s_hat), *(s32(s) for s in proof.s_tilde)])


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.at = 0

    def take(self, n: int) -> bytes:
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def points(self, name: str, count: int) -> tuple[Point, ...]:
        return tuple(decode_point(self.take(POINT_BYTES), f"shuffle proof.{name}[{i}]")
                     for i in range(count))

    def point(self, name: str) -> Point:
        return decode_point(self.take(POINT_BYTES), f"shuffle proof.{name}")

    def scalars(self, name: str, count: int) -> tuple[int, ...]:
        return tuple(decode_scalar(self.take(SCALAR_BYTES), f"shuffle proof.{name}[{i}]")
                     for i in range(count))

    def scalar(self, name: str) -> int:
        return decode_scalar(self.take(SCALAR_BYTES), f"shuffle proof.{name}")


def decode_shuffle_proof(data: bytes, size: int) -> ShuffleProof:
    """The proof of a shuffle of ``size`` ciphertexts; EncodingError naming the field
    (``shuffle proof.chain[3]``) for a wrong length or a non-canonical point or scalar."""
    if len(data) != shuffle_proof_bytes(size):
        raise EncodingError("shuffle proof", f"of a deck of {size} is "
                            f"{shuffle_proof_bytes(size)} bytes, not {len(data)}")
    read = _Reader(data)
    commitments = read.points("commitments", size)
    chain = read.points("chain", size)
    t1, t2, t3 = read.point("t1"), read.point("t2"), read.point("t3")
    t4 = decode_ciphertext(read.take(CIPHERTEXT_BYTES), "shuffle proof.t4")
    t_hat = read.points("t_hat", size)
    s1, s2, s3, s4 = (read.scalar(f"s{k}") for k in range(1, 5))
    return ShuffleProof(commitments, chain, t1, t2, t3, t4, t_hat, s1, s2, s3, s4,
                        read.scalars("s_hat", size), read.scalars("s_tilde", size))
