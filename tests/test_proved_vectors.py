"""The proved deck's golden vectors (tests/data/proved_vectors.json): this
implementation still computes them byte for byte, and the hashes and equations the
specification (docs/proved-deck.md) states are recomputed from its words with nothing
but hashlib and textbook curve arithmetic."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from p2pcards.protocol.proved import shuffle
from p2pcards.protocol.proved.elgamal import decode_deck
from p2pcards.protocol.proved.group import decode_point
from p2pcards.protocol.proved.shuffle import ShuffleStatement
from p2pcards.protocol.proved.sigma import Context
from p2pcards.protocol.proved.vectors import build, dumps

STORED = Path(__file__).parent / "data" / "proved_vectors.json"
P = 2**256 - 2**32 - 977
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
     0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)
Pt = tuple[int, int] | None


def frame(tag: bytes, fields: list[bytes]) -> bytes:
    return len(tag).to_bytes(2, "big") + tag + b"".join(
        len(f).to_bytes(4, "big") + f for f in fields)


def h_scalar(tag: bytes, fields: list[bytes]) -> int:
    return int.from_bytes(hashlib.sha256(frame(tag, fields)).digest(), "big") % N


def lift(data: bytes) -> Pt:
    x = int.from_bytes(data[1:], "big")
    y = pow((x**3 + 7) % P, (P + 1) // 4, P)
    return x, y if y % 2 == data[0] % 2 else P - y


def sec1(point: Pt) -> bytes:
    assert point is not None
    return bytes([2 + point[1] % 2]) + point[0].to_bytes(32, "big")


def plus(a: Pt, b: Pt) -> Pt:
    if a is None or b is None:
        return a or b
    if a[0] == b[0] and (a[1] + b[1]) % P == 0:
        return None
    if a == b:
        m = 3 * a[0] ** 2 * pow(2 * a[1], -1, P)
    else:
        m = (b[1] - a[1]) * pow(b[0] - a[0], -1, P)
    x = (m * m - a[0] - b[0]) % P
    return x, (m * (a[0] - x) - a[1]) % P


def times(k: int, point: Pt) -> Pt:
    acc: Pt = None
    for bit in bin(k % N)[2:]:
        acc = plus(acc, acc)
        if bit == "1":
            acc = plus(acc, point)
    return acc


def test_the_code_still_computes_the_stored_vectors() -> None:
    assert json.loads(dumps(build())) == json.loads(STORED.read_text())


def test_the_vectors_follow_the_specification() -> None:
    v = json.loads(STORED.read_text())
    table, deal = bytes.fromhex(v["table"]), v["deal"]
    assert (len(table), deal, v["parties"], v["size"]) == (16, 259, 2, 4)
    tags = {k: bytes.fromhex(t) for k, t in v["domains"].items()}
    assert tags["card_point"] == b"p2pcards/proved/card-point/v1"
    for item in v["cards"]:  # try and increment
        fields = [table, deal.to_bytes(8, "big"), item["card"].to_bytes(2, "big")]
        assert bytes.fromhex(item["frame0"]) == frame(tags["card_point"], [*fields, b"\x00"])
        for counter in range(item["counter"] + 1):
            x = hashlib.sha256(frame(tags["card_point"], [*fields, bytes([counter])])).digest()
            xi = int.from_bytes(x, "big")
            square = xi < P and pow((xi**3 + 7) % P, (P - 1) // 2, P) == 1
            assert square == (counter == item["counter"])
        assert bytes.fromhex(item["point"]) == b"\x02" + x
    joint: Pt = None
    for key in v["keys"]:  # Schnorr: c = H(tag; T, u64(d), u8(i), X, R), s = w + c·x
        x, w = int(key["secret"], 16), int(key["nonce"], 16)
        public = bytes.fromhex(key["public"])
        assert sec1(times(x, G)) == public
        proof = bytes.fromhex(key["proof"])
        assert proof[:33] == sec1(times(w, G))
        c = h_scalar(tags["key_proof"], [table, deal.to_bytes(8, "big"),
                                         bytes([key["party"]]), public, proof[:33]])
        assert c == int(key["challenge"], 16)
        assert int.from_bytes(proof[33:], "big") == (w + c * x) % N
        joint = plus(joint, lift(public))
    assert sec1(joint) == bytes.fromhex(v["joint_key"])
    deck = bytes.fromhex(v["initial_deck"])  # (G, M + K)
    for item in v["cards"]:
        c1c2 = deck[66 * item["card"]:66 * item["card"] + 66]
        assert c1c2[:33] == sec1(G)
        assert c1c2[33:] == sec1(plus(lift(bytes.fromhex(item["point"])), joint))
    for step in v["shuffles"]:
        check_shuffle_vector(v, tags, step)
    opening = v["opening"]
    ciphertext = bytes.fromhex(opening["ciphertext"])
    assert ciphertext == bytes.fromhex(v["shuffles"][-1]["output"])[:66]
    card = lift(ciphertext[33:])
    for item, key in zip(opening["shares"], v["keys"], strict=True):
        x, w = int(key["secret"], 16), int(item["nonce"], 16)
        share = bytes.fromhex(item["share"])
        assert share == sec1(times(x, lift(ciphertext[:33])))
        proof = bytes.fromhex(item["proof"])
        assert proof[:33] == sec1(times(w, G))
        assert proof[33:66] == sec1(times(w, lift(ciphertext[:33])))
        c = h_scalar(tags["share_proof"], [
            table, deal.to_bytes(8, "big"), bytes([item["party"]]), bytes.fromhex(key["public"]),
            ciphertext, share, proof[:33], proof[33:66]])
        assert c == int(item["challenge"], 16)
        assert int.from_bytes(proof[66:], "big") == (w + c * x) % N
        s = lift(share)
        assert s is not None
        card = plus(card, (s[0], P - s[1]))
    assert sec1(card) == bytes.fromhex(opening["point"])
    assert v["cards"][opening["card"]]["point"] == opening["point"]


def check_shuffle_vector(v: dict[str, Any], tags: dict[str, bytes], step: dict[str, Any]) -> None:
    """The re-encryptions, the hashes u_i and c recomputed from the specification's
    encoding, and the proof checked by this implementation's verifier."""
    table, deal, size = bytes.fromhex(v["table"]), v["deal"], v["size"]
    joint = lift(bytes.fromhex(v["joint_key"]))
    ins, outs = bytes.fromhex(step["input"]), bytes.fromhex(step["output"])
    for i, (j, r) in enumerate(zip(step["permutation"], step["reencryption"], strict=True)):
        r = int(r, 16)
        assert outs[66 * i:66 * i + 33] == sec1(plus(lift(ins[66 * j:66 * j + 33]), times(r, G)))
        assert outs[66 * i + 33:66 * i + 66] == sec1(
            plus(lift(ins[66 * j + 33:66 * j + 66]), times(r, joint)))
    proof = bytes.fromhex(step["proof"])
    gens = [sec1(lift(bytes.fromhex(g["point"]))) for g in v["generators"]]
    statement = [table, deal.to_bytes(8, "big"), bytes([step["party"]]),
                 bytes.fromhex(v["joint_key"]), sec1(G), gens[0], b"".join(gens[1:]), ins, outs]
    commitments, chain = proof[:33 * size], proof[33 * size:66 * size]
    seed = hashlib.sha256(frame(tags["shuffle_u"], [*statement, commitments])).digest()
    u = [h_scalar(tags["shuffle_u_each"], [seed, i.to_bytes(2, "big")]) for i in range(size)]
    assert [f"{x:064x}" for x in u] == step["u"]
    t = proof[66 * size:66 * size + 165]
    t_hat = proof[66 * size + 165:99 * size + 165]
    c = h_scalar(tags["shuffle_challenge"], [*statement, commitments, chain, t[:33], t[33:66],
                                             t[66:99], t[99:165], t_hat])
    assert f"{c:064x}" == step["challenge"]
    s1 = int.from_bytes(proof[99 * size + 165:99 * size + 197], "big")
    w1, r = int(step["prover_draws"]["omega"][0], 16), step["prover_draws"]["r"]
    assert s1 == (w1 + c * sum(int(x, 16) for x in r)) % N  # s1 = ω1 + c·Σ r_j
    context = Context(table, deal, step["party"])
    point = decode_point(bytes.fromhex(v["joint_key"]))
    st = ShuffleStatement(context, point, decode_deck(ins, size), decode_deck(outs, size))
    shuffle.verify_shuffle(st, shuffle.decode_shuffle_proof(proof, size))
