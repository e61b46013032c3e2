"""ElGamal under a joint key, the proof of knowledge of a key share and the proof of a
decryption share (docs/proved-deck.md): round trips, and each attack shown to work
against a weakened check before the real check refuses it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from p2pcards.protocol.proved import elgamal, sigma
from p2pcards.protocol.proved.elgamal import Ciphertext
from p2pcards.protocol.proved.group import (
    EncodingError,
    G,
    IdentityPointError,
    N,
    Point,
    add,
    base_mul,
    mul,
    neg,
    sub,
)
from p2pcards.protocol.proved.sigma import Context, ProofError
from p2pcards.protocol.source import SeededSource

TABLE = b"proved-table"
DEAL = 259


def parties(count: int, seed: str = "sigma") -> list[tuple[int, Point]]:
    return [elgamal.key_share(SeededSource(f"{seed}:{i}")) for i in range(count)]


def open_with_proofs(ciphertext: Ciphertext, shares: list[tuple[int, Point]],
                     source: SeededSource) -> Point:
    """Every party's decryption share, each checked, combined."""
    opened = []
    for party, (x, public) in enumerate(shares):
        context = Context(TABLE, DEAL, party)
        share, proof = sigma.prove_share(context, x, ciphertext, source)
        sigma.verify_share(context, public, ciphertext, share, proof)
        opened.append(share)
    return elgamal.combine(ciphertext, opened)


def test_cards_encrypt_reencrypt_and_open_with_every_share() -> None:
    source = SeededSource(1)
    keys = parties(3)
    joint = elgamal.joint_key(p for _, p in keys)
    cards = elgamal.card_points(TABLE, DEAL, 52)
    assert len(set(cards)) == 52
    assert elgamal.card_points(TABLE, DEAL + 1, 52)[0] != cards[0]  # new points each deal
    first = elgamal.public_encryption(cards[7], joint)
    assert first.c1 == G
    again = elgamal.reencrypt(first, joint, 12345)
    assert again.c1 != first.c1 and again.c2 != first.c2
    assert open_with_proofs(again, keys, source) == cards[7]
    fresh = elgamal.encrypt(cards[9], joint, 777)
    assert open_with_proofs(fresh, keys, source) == cards[9]
    assert elgamal.combine(fresh, [mul(x, fresh.c1) for x, _ in keys[:2]]) != cards[9]
    deck = [elgamal.public_encryption(c, joint) for c in cards[:5]]
    shuffled, psi, rs = elgamal.shuffle(deck, joint, source)
    assert sorted(psi) == list(range(5)) and len(rs) == 5
    assert [open_with_proofs(c, keys, source) for c in shuffled] == [cards[j] for j in psi]
    assert elgamal.decode_deck(elgamal.encode_deck(shuffled), 5) == tuple(shuffled)


def test_a_ciphertext_that_opens_to_the_identity_is_refused() -> None:
    x, public = elgamal.key_share(SeededSource(2))
    empty = Ciphertext(G, public)  # C2 − x·C1 = 0
    with pytest.raises(IdentityPointError, match="identity"):
        elgamal.combine(empty, [elgamal.decryption_share(empty, x)])


def test_key_and_share_proofs_round_trip_through_their_bytes() -> None:
    source = SeededSource(3)
    x, public = elgamal.key_share(source)
    context = Context(TABLE, DEAL, 4)
    proof = sigma.prove_key(context, x, source)
    data = proof.encode()
    assert len(data) == sigma.KEY_PROOF_BYTES == 65
    assert sigma.decode_key_proof(data) == proof
    sigma.verify_key(context, public, sigma.decode_key_proof(data))
    ciphertext = elgamal.encrypt(base_mul(99), public, 5)
    share, sproof = sigma.prove_share(context, x, ciphertext, source)
    data = sproof.encode()
    assert len(data) == sigma.SHARE_PROOF_BYTES == 98
    assert sigma.decode_share_proof(data) == sproof
    sigma.verify_share(context, public, ciphertext, share, sigma.decode_share_proof(data))


def test_a_rogue_key_without_a_proof_of_knowledge_is_refused() -> None:
    """Party 2 publishes X2 = y·G − X0 − X1 after seeing the others' shares: the
    joint key is then y·G and party 2 opens every card alone.  Taken without a proof
    (the weakened check), the attack works; with one, party 2 cannot make it."""
    source = SeededSource(4)
    honest = parties(2)
    y = 424242
    rogue = sub(base_mul(y), add(honest[0][1], honest[1][1]))
    joint = elgamal.joint_key([honest[0][1], honest[1][1], rogue])
    assert joint == base_mul(y)
    card = elgamal.card_points(TABLE, DEAL, 4)[2]
    secret = elgamal.encrypt(card, joint, 31337)
    assert sub(secret.c2, mul(y, secret.c1)) == card  # opened by party 2 alone
    context = Context(TABLE, DEAL, 2)
    best_try = sigma.prove_key(context, y, source)  # y is all party 2 knows
    sigma.verify_key(context, base_mul(y), best_try)
    with pytest.raises(ProofError, match="party 2's key proof: s·G = R \\+ c·X"):
        sigma.verify_key(context, rogue, best_try)


def test_a_key_proof_made_for_another_party_or_deal_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Party 2 copies party 0's share and proof as its own.  With a challenge that
    leaves out table, deal and party (the weakened check) the copy holds; the real
    challenge names them, and the copy is refused, as is a proof from another deal
    or table."""
    source = SeededSource(5)
    (x0, public0), = parties(1)
    elsewhere = [Context(TABLE, DEAL, 2), Context(TABLE, DEAL + 1, 0),
                 Context(b"other-table", DEAL, 0)]
    with monkeypatch.context() as weakened:
        weakened.setattr(Context, "fields", lambda self: [])
        copied = sigma.prove_key(Context(TABLE, DEAL, 0), x0, source)
        for other in elsewhere:
            sigma.verify_key(other, public0, copied)
    proof0 = sigma.prove_key(Context(TABLE, DEAL, 0), x0, source)
    sigma.verify_key(Context(TABLE, DEAL, 0), public0, proof0)
    for other in elsewhere:
        with pytest.raises(ProofError, match=f"party {other.party}'s key proof"):
            sigma.verify_key(other, public0, proof0)


def skip(checks: dict[str, bool], name: str) -> bool:
    """A weakened verifier: every check but ``name``."""
    assert name in checks
    return all(ok for check, ok in checks.items() if check != name)


def test_a_wrong_decryption_share_is_refused() -> None:
    """Party 1 sends D' = D + G.  A verifier that skips the share equation takes a
    proof forged for D' (it needs only the key equation), and the card opens to
    another point; the real verifier refuses it."""
    source = SeededSource(6)
    keys = parties(2)
    joint = elgamal.joint_key(p for _, p in keys)
    card = elgamal.card_points(TABLE, DEAL, 4)[1]
    ciphertext = elgamal.encrypt(card, joint, 99)
    x1, public1 = keys[1]
    context = Context(TABLE, DEAL, 1)
    wrong = add(mul(x1, ciphertext.c1), G)
    w = 1234567
    a, b = base_mul(w), base_mul(7)  # B is any point
    c = sigma.share_challenge(context, public1, ciphertext, wrong, a=a, b=b)
    forged = sigma.ShareProof(a, b, (w + c * x1) % N)
    checks = sigma.share_checks(context, public1, ciphertext, wrong, forged)
    assert skip(checks, "s·C1 = B + c·D")
    opened = elgamal.combine(ciphertext, [mul(keys[0][0], ciphertext.c1), wrong])
    assert opened != card
    with pytest.raises(ProofError, match="party 1's decryption share: s·C1 = B \\+ c·D"):
        sigma.verify_share(context, public1, ciphertext, wrong, forged)
    _honest, proof = sigma.prove_share(context, x1, ciphertext, source)
    with pytest.raises(ProofError, match="decryption share"):  # right proof, wrong share
        sigma.verify_share(context, public1, ciphertext, wrong, proof)


def test_a_share_and_proof_for_another_ciphertext_are_refused() -> None:
    """Party 1 answers a request for ciphertext Y with its share and proof of X.  A
    check against the ciphertext the share was made for takes it, and Y opens to a
    point that is no card; checked against Y, it is refused."""
    source = SeededSource(7)
    keys = parties(2)
    joint = elgamal.joint_key(p for _, p in keys)
    cards = elgamal.card_points(TABLE, DEAL, 4)
    x_ct, y_ct = elgamal.encrypt(cards[0], joint, 11), elgamal.encrypt(cards[1], joint, 12)
    context = Context(TABLE, DEAL, 1)
    share, proof = sigma.prove_share(context, keys[1][0], x_ct, source)
    sigma.verify_share(context, keys[1][1], x_ct, share, proof)  # the weakened check
    opened = elgamal.combine(y_ct, [mul(keys[0][0], y_ct.c1), share])
    assert opened not in cards
    with pytest.raises(ProofError, match="party 1's decryption share"):
        sigma.verify_share(context, keys[1][1], y_ct, share, proof)
    same_c1 = Ciphertext(x_ct.c1, add(x_ct.c2, G))  # even a share that would be right
    with pytest.raises(ProofError):
        sigma.verify_share(context, keys[1][1], same_c1, share, proof)


def test_every_field_of_a_proof_tampered_is_refused() -> None:
    source = SeededSource(8)
    x, public = elgamal.key_share(source)
    context = Context(TABLE, DEAL, 0)
    kproof = sigma.prove_key(context, x, source)
    for changed in [replace(kproof, r=add(kproof.r, G)), replace(kproof, s=(kproof.s + 1) % N)]:
        with pytest.raises(ProofError):
            sigma.verify_key(context, public, changed)
    with pytest.raises(ProofError):
        sigma.verify_key(context, neg(public), kproof)
    ciphertext = elgamal.encrypt(base_mul(5), public, 6)
    share, sproof = sigma.prove_share(context, x, ciphertext, source)
    for changed_proof in [replace(sproof, a=add(sproof.a, G)), replace(sproof, b=add(sproof.b, G)),
                          replace(sproof, s=(sproof.s + 1) % N)]:
        with pytest.raises(ProofError):
            sigma.verify_share(context, public, ciphertext, share, changed_proof)
    with pytest.raises(ProofError):
        sigma.verify_share(context, public, ciphertext, neg(share), sproof)


def test_a_proof_with_a_non_canonical_scalar_or_point_is_refused_naming_the_field() -> None:
    source = SeededSource(9)
    x, _ = elgamal.key_share(source)
    context = Context(TABLE, DEAL, 0)
    kdata = sigma.prove_key(context, x, source).encode()
    ciphertext = elgamal.encrypt(base_mul(5), base_mul(x), 6)
    sdata = sigma.prove_share(context, x, ciphertext, source)[1].encode()
    high = b"\xff" * 32
    n_bytes = N.to_bytes(32, "big")
    cases = [
        (sigma.decode_key_proof, kdata[:33] + n_bytes, "key proof.s: a scalar is below"),
        (sigma.decode_key_proof, kdata[:33] + high, "key proof.s: a scalar is below"),
        (sigma.decode_key_proof, b"\x05" + kdata[1:], "key proof.R: a point begins"),
        (sigma.decode_key_proof, b"\x02" + high + kdata[33:], "key proof.R: the x-coordinate"),
        (sigma.decode_key_proof, kdata[:-1], "key proof: is 65 bytes, not 64"),
        (sigma.decode_share_proof, sdata[:66] + n_bytes, "share proof.s: a scalar is below"),
        (sigma.decode_share_proof, sdata[:33] + b"\x04" + sdata[34:], "share proof.B: a point"),
        (sigma.decode_share_proof, b"\x03" + high + sdata[33:], "share proof.A: the x-coord"),
        (sigma.decode_share_proof, sdata + b"\x00", "share proof: is 98 bytes, not 99"),
    ]
    for decode, data, message in cases:
        with pytest.raises(EncodingError, match=message.replace(".", "\\.")):
            decode(data)


def test_a_context_outside_its_ranges_is_refused() -> None:
    for table, deal, party in [(b"x" * 65536, 0, 0), (b"t", -1, 0), (b"t", 2**63, 0),
                               (b"t", 0, 256), (b"t", 0, -1)]:
        with pytest.raises(ValueError):
            Context(table, deal, party)
