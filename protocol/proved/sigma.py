"""Two sigma protocols made non-interactive by Fiat–Shamir (docs/proved-deck.md).

* **Proof of knowledge of a key share** (Schnorr): ``X = x·G``.  A party that
  publishes a share without knowing its logarithm (a rogue key ``X = y·G − Σ X_j``,
  which would give it the joint key alone) cannot make one.
* **Decryption share** (Chaum–Pedersen, DLEQ): ``log_G X = log_C1 D``, the share
  ``D`` of a ciphertext ``(C1, C2)`` is made with the party's own key share.

Each challenge hashes a domain tag, the table, the deal, the party and everything
the proof is about, so a proof made for another deal, party or ciphertext fails.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from ..curve import SecretSource
from .elgamal import Ciphertext
from .group import (
    POINT_BYTES,
    SCALAR_BYTES,
    EncodingError,
    IdentityPointError,
    N,
    Point,
    ProvedError,
    base_mul,
    decode_point,
    decode_scalar,
    equals,
    frame,
    hash_to_scalar,
    msm,
    mul,
    random_scalar,
    s32,
    u8,
    u64,
)

KEY_PROOF_DOMAIN = b"p2pcards/proved/key-proof/v1"
SHARE_PROOF_DOMAIN = b"p2pcards/proved/share-proof/v1"
SHARE_BATCH_DOMAIN = b"p2pcards/proved/share-batch/v1"
"""The tag of the weights a verifier checks several decryption shares' first equations
with at once (:func:`first_bad_share`); nothing signed or sent depends on it."""
SHARE_CHECKS = ("s·G = A + c·X", "s·C1 = B + c·D")
KEY_PROOF_BYTES = POINT_BYTES + SCALAR_BYTES
SHARE_PROOF_BYTES = 2 * POINT_BYTES + SCALAR_BYTES


class ProofError(ProvedError):
    """A proof that does not hold: ``proof`` names it, ``check`` the equation."""

    def __init__(self, proof: str, check: str, detail: str = "does not hold"):
        super().__init__(f"{proof}: {check} {detail}")
        self.proof = proof
        self.check = check


@dataclass(frozen=True, slots=True)
class Context:
    """Whose proof, where: the table id (≤ 65,535 bytes), the deal (< 2⁶³), the party
    (0–255); hashed as ``table``, ``u64(deal)``, ``u8(party)``."""

    table: bytes
    deal: int
    party: int

    def __post_init__(self) -> None:
        if not isinstance(self.table, bytes) or len(self.table) > 0xFFFF:
            raise ValueError("a table id is at most 65,535 bytes")
        if not 0 <= self.deal < 2**63:
            raise ValueError("a deal number is in [0, 2^63)")
        if not 0 <= self.party < 256:
            raise ValueError("a party is in [0, 255]")

    def fields(self) -> list[bytes]:
        return [self.table, u64(self.deal), u8(self.party)]


# -- proof of knowledge of a key share -----------------------------------------------

@dataclass(frozen=True, slots=True)
class KeyProof:
    """``(R, s)``: ``R = w·G``, ``s = w + c·x``; encoded ``R ‖ s32(s)``, 65 bytes."""

    r: Point
    s: int

    def encode(self) -> bytes:
        return self.r.encode() + s32(self.s)


def decode_key_proof(data: bytes) -> KeyProof:
    if len(data) != KEY_PROOF_BYTES:
        raise EncodingError("key proof", f"is {KEY_PROOF_BYTES} bytes, not {len(data)}")
    return KeyProof(decode_point(data[:POINT_BYTES], "key proof.R"),
                    decode_scalar(data[POINT_BYTES:], "key proof.s"))


def key_challenge(context: Context, public: Point, r: Point) -> int:
    """``c = H(KEY_PROOF_DOMAIN; table, u64(deal), u8(party), X, R) mod N``."""
    return hash_to_scalar(KEY_PROOF_DOMAIN, [*context.fields(), public.encode(), r.encode()])


def prove_key(context: Context, x: int, source: SecretSource) -> KeyProof:
    """Proof that the sender knows ``x`` with ``X = x·G``."""
    w = random_scalar(source)
    r = base_mul(w)
    c = key_challenge(context, base_mul(x), r)
    return KeyProof(r, (w + c * x) % N)


def key_checks(context: Context, public: Point, proof: KeyProof) -> dict[str, bool]:
    """The one equation: ``s·G = R + c·X``."""
    c = key_challenge(context, public, proof.r)
    return {"s·G = R + c·X": equals(
        lambda: msm([((N - c) % N, public)], proof.s), proof.r)}


def verify_key(context: Context, public: Point, proof: KeyProof) -> None:
    """ProofError unless ``proof`` shows that ``context.party`` knows ``log_G X``."""
    for check, ok in key_checks(context, public, proof).items():
        if not ok:
            raise ProofError(f"party {context.party}'s key proof", check)


# -- decryption share (Chaum–Pedersen) -----------------------------------------------

@dataclass(frozen=True, slots=True)
class ShareProof:
    """``(A, B, s)``: ``A = w·G``, ``B = w·C1``, ``s = w + c·x``; encoded
    ``A ‖ B ‖ s32(s)``, 98 bytes."""

    a: Point
    b: Point
    s: int

    def encode(self) -> bytes:
        return self.a.encode() + self.b.encode() + s32(self.s)


def decode_share_proof(data: bytes) -> ShareProof:
    if len(data) != SHARE_PROOF_BYTES:
        raise EncodingError("share proof", f"is {SHARE_PROOF_BYTES} bytes, not {len(data)}")
    return ShareProof(decode_point(data[:POINT_BYTES], "share proof.A"),
                      decode_point(data[POINT_BYTES:2 * POINT_BYTES], "share proof.B"),
                      decode_scalar(data[2 * POINT_BYTES:], "share proof.s"))


def share_challenge(context: Context, public: Point, ciphertext: Ciphertext, share: Point,
                    *, a: Point, b: Point) -> int:
    """``c = H(SHARE_PROOF_DOMAIN; table, u64(deal), u8(party), X, C1 ‖ C2, D, A, B)
    mod N``."""
    return hash_to_scalar(SHARE_PROOF_DOMAIN, [
        *context.fields(), public.encode(), ciphertext.encode(), share.encode(),
        a.encode(), b.encode()])


def prove_share(context: Context, x: int, ciphertext: Ciphertext, source: SecretSource,
                public: Point | None = None) -> tuple[Point, ShareProof]:
    """The decryption share ``D = x·C1`` and its proof (``public``: ``x·G``, if known)."""
    share = mul(x, ciphertext.c1)
    w = random_scalar(source)
    a, b = base_mul(w), mul(w, ciphertext.c1)
    c = share_challenge(context, base_mul(x) if public is None else public, ciphertext,
                        share, a=a, b=b)
    return share, ShareProof(a, b, (w + c * x) % N)


def share_checks(context: Context, public: Point, ciphertext: Ciphertext, share: Point,
                 proof: ShareProof) -> dict[str, bool]:
    """Both equations: ``s·G = A + c·X`` and ``s·C1 = B + c·D``."""
    c = share_challenge(context, public, ciphertext, share, a=proof.a, b=proof.b)
    minus_c = (N - c) % N
    return {
        "s·G = A + c·X": equals(lambda: msm([(minus_c, public)], proof.s), proof.a),
        "s·C1 = B + c·D": equals(
            lambda: msm([(proof.s, ciphertext.c1), (minus_c, share)]), proof.b),
    }


def first_bad_share(context: Context, public: Point,
                    items: Sequence[tuple[Ciphertext, Point, ShareProof]]
                    ) -> tuple[int, str] | None:
    """The first of one party's decryption shares ``(C, D, proof)`` whose proof does not
    hold, and its first equation that fails (as :func:`share_checks` would name it,
    share by share), or None.  The first equations of all are checked at once: with
    128-bit weights ``w_i`` hashed from everything checked (so that no prover can
    choose shares that cancel out), ``(Σ w_i·s_i)·G − (Σ w_i·c_i)·X = Σ w_i·A_i``; only
    if that fails is each checked alone.  The second equations, ``s·C1 = B + c·D``, have
    a ciphertext each and are checked one by one."""
    if not items:
        return None
    challenges = [share_challenge(context, public, c, d, a=p.a, b=p.b) for c, d, p in items]
    seed = hashlib.sha256(frame(SHARE_BATCH_DOMAIN, [
        *context.fields(), public.encode(),
        *(c.encode() + d.encode() + p.encode() for c, d, p in items)])).digest()
    weights = [1 + int.from_bytes(hashlib.sha256(seed + i.to_bytes(4, "big")).digest()[:16],
                                  "big") for i in range(len(items))]
    s = sum(w * p.s for w, (_, _, p) in zip(weights, items, strict=True)) % N
    c = sum(w * ci for w, ci in zip(weights, challenges, strict=True)) % N
    try:
        together: Point | None = msm([(w, p.a) for w, (_, _, p)
                                      in zip(weights, items, strict=True)])
    except IdentityPointError:
        together = None
    if together is None or not _sums_to([((N - c) % N, public)], s, together):
        for i, (ciphertext, share, proof) in enumerate(items):
            failed = [k for k, ok in share_checks(context, public, ciphertext, share,
                                                  proof).items() if not ok]
            if failed:
                return i, failed[0]
        return None  # (never: the batch holds when each does)
    for i, ((ciphertext, share, proof), ci) in enumerate(zip(items, challenges, strict=True)):
        if not _sums_to([(proof.s, ciphertext.c1), ((N - ci) % N, share)], 0, proof.b):
            return i, SHARE_CHECKS[1]
    return None


def _sums_to(terms: list[tuple[int, Point]], base: int, expected: Point) -> bool:
    return equals(lambda: msm(terms, base), expected)


def verify_share(context: Context, public: Point, ciphertext: Ciphertext, share: Point,
                 proof: ShareProof) -> None:
    """ProofError unless ``share`` is ``x·C1`` for the ``x`` of ``X = x·G``."""
    for check, ok in share_checks(context, public, ciphertext, share, proof).items():
        if not ok:
            raise ProofError(f"party {context.party}'s decryption share", check)


__all__ = ["Context", "KeyProof", "ProofError", "ShareProof", "decode_key_proof",
           "decode_share_proof", "key_checks", "prove_key", "prove_share", "share_checks",
           "verify_key", "verify_share"]
