"""The Terelius–Wikström proof of a shuffle (docs/proved-deck.md, "Proof of a
shuffle"): round trips, and each cheat first shown to get through a verifier with one
equation skipped, then refused by the real one, which names the equation."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace

import pytest

from p2pcards.protocol.proved import elgamal, shuffle
from p2pcards.protocol.proved.elgamal import Ciphertext
from p2pcards.protocol.proved.group import EncodingError, G, N, Point, add, mul, sub
from p2pcards.protocol.proved.shuffle import ShuffleProof, ShuffleStatement
from p2pcards.protocol.proved.sigma import Context, ProofError
from p2pcards.protocol.source import SeededSource

TABLE = b"proved-table"
DEAL = 259
SHUFFLER = Context(TABLE, DEAL, 1)


@dataclass
class Pass:
    """One honest shuffle pass of a small deck among two parties."""

    keys: list[int]
    joint: Point
    cards: tuple[Point, ...]
    inputs: tuple[Ciphertext, ...]
    outputs: tuple[Ciphertext, ...]
    psi: list[int]
    rs: list[int]
    source: SeededSource

    def statement(self, outputs: tuple[Ciphertext, ...] | None = None,
                  context: Context = SHUFFLER) -> ShuffleStatement:
        return ShuffleStatement(context, self.joint, self.inputs,
                                self.outputs if outputs is None else outputs)

    def input_card(self, j: int) -> Point:
        """The card of input ``j`` (party 0's pass put them in its secret order)."""
        return self.opened(self.inputs)[j]

    def opened(self, deck: tuple[Ciphertext, ...]) -> list[Point]:
        """Every card of ``deck``, opened with both key shares."""
        total = sum(self.keys) % N
        return [sub(c.c2, mul(total, c.c1)) for c in deck]


def a_pass(size: int = 6, seed: int = 1) -> Pass:
    source = SeededSource(seed)
    shares = [elgamal.key_share(source) for _ in range(2)]
    joint = elgamal.joint_key(p for _, p in shares)
    cards = elgamal.card_points(TABLE, DEAL, size)
    first = tuple(elgamal.public_encryption(c, joint) for c in cards)
    inputs, _, _ = elgamal.shuffle(first, joint, source)  # party 0's pass
    outputs, psi, rs = elgamal.shuffle(inputs, joint, source)
    return Pass([x for x, _ in shares], joint, cards, inputs, outputs, psi, rs, source)


def skipping(statement: ShuffleStatement, proof: ShuffleProof, name: str) -> bool:
    """A weakened verifier: every equation but ``name``."""
    checks = shuffle.shuffle_checks(statement, proof)
    assert name in checks
    return all(ok for check, ok in checks.items() if check != name)


def refused(statement: ShuffleStatement, proof: ShuffleProof, name: str) -> None:
    with pytest.raises(ProofError, match=f"party 1's shuffle proof: {name} does not hold"):
        shuffle.verify_shuffle(statement, proof)


@pytest.mark.parametrize("size", [1, 2, 13, 54])
def test_an_honest_shuffle_proof_holds_and_survives_its_bytes(size: int) -> None:
    p = a_pass(size)
    statement = p.statement()
    proof = shuffle.prove_shuffle(statement, p.psi, p.rs, p.source)
    shuffle.verify_shuffle(statement, proof)
    assert all(shuffle.shuffle_checks(statement, proof).values())
    data = shuffle.encode_shuffle_proof(proof)
    assert len(data) == shuffle.shuffle_proof_bytes(size)
    assert len(data) == 33 * (3 * size + 5) + 32 * (2 * size + 4)
    assert shuffle.decode_shuffle_proof(data, size) == proof
    assert sorted(p.opened(p.outputs), key=Point.encode) == sorted(p.cards, key=Point.encode)


def test_a_substituted_card_is_refused() -> None:
    """Output 2 becomes an encryption of a card of another deal: the pass still looks
    like a shuffle to a verifier that skips t4, and the deck holds a foreign card."""
    p = a_pass()
    foreign = elgamal.card_points(TABLE, DEAL + 1, 1)[0]
    outputs = list(p.outputs)
    outputs[2] = elgamal.encrypt(foreign, p.joint, 4242)
    statement = p.statement(tuple(outputs))
    proof = shuffle.prove_shuffle(statement, p.psi, p.rs, p.source)
    assert skipping(statement, proof, "t4")
    assert foreign in p.opened(statement.outputs)
    refused(statement, proof, "t4")


def test_a_duplicated_card_is_refused() -> None:
    """Output 0 becomes a re-encryption of the input behind output 1: that card twice,
    and the card behind output 0 gone."""
    p = a_pass()
    outputs = list(p.outputs)
    outputs[0] = elgamal.reencrypt(p.inputs[p.psi[1]], p.joint, 777)
    statement = p.statement(tuple(outputs))
    proof = shuffle.prove_shuffle(statement, p.psi, p.rs, p.source)
    assert skipping(statement, proof, "t4")
    opened = p.opened(statement.outputs)
    assert opened[0] == opened[1] and p.input_card(p.psi[0]) not in opened
    refused(statement, proof, "t4")


def scaled(ciphertext: Ciphertext, alpha: int) -> Ciphertext:
    return Ciphertext(mul(alpha, ciphertext.c1), mul(alpha, ciphertext.c2))


def test_a_tagged_ciphertext_is_refused() -> None:
    """Output 3 multiplied by a scalar the shuffler knows: it opens to α·M, which the
    shuffler recognises among α·(every card point), so it learns who holds the card."""
    p = a_pass()
    alpha = 0xC0FFEE
    outputs = list(p.outputs)
    outputs[3] = scaled(outputs[3], alpha)
    statement = p.statement(tuple(outputs))
    proof = shuffle.prove_shuffle(statement, p.psi, p.rs, p.source)
    assert skipping(statement, proof, "t4")
    tagged = p.opened(statement.outputs)[3]
    assert [mul(alpha, c) for c in p.cards].index(tagged) == \
        p.cards.index(p.input_card(p.psi[3]))
    refused(statement, proof, "t4")


def test_tags_hidden_in_the_permutation_commitment_are_refused() -> None:
    """Outputs 1 and 4 tagged by α and 1/α, with the commitment made to the matrix that
    undoes them: t2 to t4 then hold, and only t1 (each column of the committed
    matrix sums to 1) refuses it."""
    p = a_pass()
    alpha = 0xBEEF
    inverse = pow(alpha, -1, N)
    outputs = list(p.outputs)
    outputs[1] = elgamal.reencrypt(scaled(p.inputs[p.psi[1]], alpha), p.joint, p.rs[1])
    outputs[4] = elgamal.reencrypt(scaled(p.inputs[p.psi[4]], inverse), p.joint, p.rs[4])
    statement = p.statement(tuple(outputs))
    columns = [((p.psi[i], {1: inverse, 4: alpha}.get(i, 1)),) for i in range(6)]
    proof = shuffle.prove_linear(statement, columns, p.rs, p.source)
    assert skipping(statement, proof, "t1")
    assert p.opened(statement.outputs)[1] == mul(alpha, p.input_card(p.psi[1]))
    refused(statement, proof, "t1")


def test_a_matrix_whose_columns_sum_to_one_but_is_no_permutation_is_refused() -> None:
    """Output 0 = ½·e_a (a tag the shuffler knows) and output 1 = ½·e_a + e_b, committed
    as the inverse matrix [[2, 0], [−1, 1]], whose columns sum to 1: t1, t3 and t4 hold,
    and only the product of the challenges (t2) refuses it."""
    p = a_pass()
    half = pow(2, -1, N)
    a, b = p.psi[0], p.psi[1]
    outputs = list(p.outputs)
    outputs[0] = elgamal.reencrypt(scaled(p.inputs[a], half), p.joint, p.rs[0])
    mixed = scaled(p.inputs[a], half)
    mixed = Ciphertext(add(mixed.c1, p.inputs[b].c1), add(mixed.c2, p.inputs[b].c2))
    outputs[1] = elgamal.reencrypt(mixed, p.joint, p.rs[1])
    statement = p.statement(tuple(outputs))
    columns = [((a, 2), (b, N - 1)), ((b, 1),), *(((p.psi[i], 1),) for i in range(2, 6))]
    proof = shuffle.prove_linear(statement, columns, p.rs, p.source)
    assert skipping(statement, proof, "t2")
    assert p.opened(statement.outputs)[0] == mul(half, p.input_card(a))
    refused(statement, proof, "t2")


def test_a_proof_for_another_deal_or_another_shuffler_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Party 1's proof of its pass at deal 259, replayed as another shuffler's or at
    another deal (or table): with hashes that leave out the context (the weakened
    check), it holds there too; the real hashes name table, deal and shuffler."""
    p = a_pass()
    elsewhere = [Context(TABLE, DEAL + 1, 1), Context(TABLE, DEAL, 2),
                 Context(b"another-table", DEAL, 1)]
    bound = ShuffleStatement.fields
    with monkeypatch.context() as weakened:
        weakened.setattr(ShuffleStatement, "fields", lambda self: bound(self)[3:])
        proof = shuffle.prove_shuffle(p.statement(), p.psi, p.rs, p.source)
        for context in elsewhere:
            shuffle.verify_shuffle(p.statement(context=context), proof)
    proof = shuffle.prove_shuffle(p.statement(), p.psi, p.rs, p.source)
    shuffle.verify_shuffle(p.statement(), proof)
    for context in elsewhere:
        with pytest.raises(ProofError, match=f"party {context.party}'s shuffle proof: "):
            shuffle.verify_shuffle(p.statement(context=context), proof)


def tampered(proof: ShuffleProof) -> list[tuple[str, ShuffleProof]]:
    """The proof with one field changed, for every field (one element of each list)."""
    def bump_points(points: tuple[Point, ...], i: int) -> tuple[Point, ...]:
        return (*points[:i], add(points[i], G), *points[i + 1:])

    def bump_scalars(scalars: tuple[int, ...], i: int) -> tuple[int, ...]:
        return (*scalars[:i], (scalars[i] + 1) % N, *scalars[i + 1:])

    t4 = proof.t4
    return [
        ("commitments", replace(proof, commitments=bump_points(proof.commitments, 2))),
        ("chain", replace(proof, chain=bump_points(proof.chain, 0))),
        ("t1", replace(proof, t1=add(proof.t1, G))),
        ("t2", replace(proof, t2=add(proof.t2, G))),
        ("t3", replace(proof, t3=add(proof.t3, G))),
        ("t4.c1", replace(proof, t4=Ciphertext(add(t4.c1, G), t4.c2))),
        ("t4.c2", replace(proof, t4=Ciphertext(t4.c1, add(t4.c2, G)))),
        ("t_hat", replace(proof, t_hat=bump_points(proof.t_hat, 3))),
        ("s1", replace(proof, s1=(proof.s1 + 1) % N)),
        ("s2", replace(proof, s2=(proof.s2 + 1) % N)),
        ("s3", replace(proof, s3=(proof.s3 + 1) % N)),
        ("s4", replace(proof, s4=(proof.s4 + 1) % N)),
        ("s_hat", replace(proof, s_hat=bump_scalars(proof.s_hat, 1))),
        ("s_tilde", replace(proof, s_tilde=bump_scalars(proof.s_tilde, 5))),
        ("commitments swapped", replace(proof, commitments=(
            proof.commitments[1], proof.commitments[0], *proof.commitments[2:]))),
    ]


def test_every_field_of_a_shuffle_proof_tampered_is_refused() -> None:
    p = a_pass()
    statement = p.statement()
    proof = shuffle.prove_shuffle(statement, p.psi, p.rs, p.source)
    changes = tampered(proof)
    assert len(changes) == 15
    accepted = [field for field, changed in changes
                if all(shuffle.shuffle_checks(statement, changed).values())]
    assert accepted == []
    for _, changed in changes:
        with pytest.raises(ProofError, match="party 1's shuffle proof: "):
            shuffle.verify_shuffle(statement, changed)
    swapped = (p.outputs[1], p.outputs[0], *p.outputs[2:])  # the deck itself
    with pytest.raises(ProofError):
        shuffle.verify_shuffle(p.statement(swapped), proof)
    with pytest.raises(ProofError, match="size"):
        shuffle.verify_shuffle(statement, replace(proof, chain=proof.chain[:-1]))


def test_non_canonical_points_and_scalars_in_a_shuffle_proof_are_refused_by_name() -> None:
    size = 4
    p = a_pass(size)
    data = shuffle.encode_shuffle_proof(
        shuffle.prove_shuffle(p.statement(), p.psi, p.rs, p.source))
    scalars_at = 33 * (3 * size + 5)
    points = {"commitments[0]": 0, "chain[1]": 33 * (size + 1), "t1": 66 * size,
              "t2": 66 * size + 33, "t3": 66 * size + 66, "t4.c1": 66 * size + 99,
              "t4.c2": 66 * size + 132, "t_hat[3]": 66 * size + 165 + 99}
    scalars = {"s1": scalars_at, "s4": scalars_at + 96, "s_hat[0]": scalars_at + 128,
               "s_tilde[3]": scalars_at + 128 + 32 * size + 96}
    for field, at in points.items():
        for bad, reason in [(b"\x04" + data[at + 1:at + 33], "a point begins with 02 or 03"),
                            (b"\x02" + b"\xff" * 32, "the x-coordinate is not below"),
                            (b"\x03" + (7).to_bytes(32, "big"), "not on the curve")]:
            with pytest.raises(EncodingError, match=re.escape(f"shuffle proof.{field}: {reason}")):
                shuffle.decode_shuffle_proof(data[:at] + bad + data[at + 33:], size)
    for field, at in scalars.items():
        for bad in [N.to_bytes(32, "big"), b"\xff" * 32]:
            with pytest.raises(EncodingError, match=re.escape(f"shuffle proof.{field}: a scalar")):
                shuffle.decode_shuffle_proof(data[:at] + bad + data[at + 32:], size)
    for wrong in [data[:-1], data + b"\x00"]:
        with pytest.raises(EncodingError, match=f"is {len(data)} bytes, not {len(wrong)}"):
            shuffle.decode_shuffle_proof(wrong, size)
    with pytest.raises(EncodingError, match="of a deck of 5"):
        shuffle.decode_shuffle_proof(data, size + 1)


def test_a_statement_with_decks_of_different_sizes_or_a_prover_with_no_permutation() -> None:
    p = a_pass()
    with pytest.raises(ValueError, match="as many ciphertexts"):
        p.statement(p.outputs[:-1])
    with pytest.raises(ValueError, match="not one of 0 … N-1"):
        shuffle.prove_shuffle(p.statement(), [0, 0, 1, 2, 3, 4], p.rs, p.source)


def test_nothing_a_peer_sends_crashes_the_decoder_or_the_verifier() -> None:
    """Random bytes flipped anywhere in a proof: the decoder raises EncodingError or
    decodes it, and the verifier then refuses it with ProofError; nothing else."""
    size = 3
    p = a_pass(size)
    statement = p.statement()
    data = shuffle.encode_shuffle_proof(
        shuffle.prove_shuffle(statement, p.psi, p.rs, p.source))
    rng = random.Random(11)
    outcomes = {"encoding": 0, "proof": 0}
    for _ in range(150):
        mutated = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            mutated[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        if mutated == data:  # two flips of one bit
            continue
        try:
            proof = shuffle.decode_shuffle_proof(bytes(mutated), size)
        except EncodingError:
            outcomes["encoding"] += 1
            continue
        with pytest.raises(ProofError):
            shuffle.verify_shuffle(statement, proof)
        outcomes["proof"] += 1
    assert outcomes["encoding"] > 0 and outcomes["proof"] > 0
