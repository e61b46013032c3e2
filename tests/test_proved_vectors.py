"""The proved deck's golden vectors (tests/data/proved_vectors.json): this
implementation still computes them byte for byte, and the hashes and equations the
specification (docs/proved-deck.md) states are recomputed from its words with nothing
but hashlib and textbook curve arithmetic."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2pcards.protocol.constants import OBSERVER
from p2pcards.protocol.proved import shuffle
from p2pcards.protocol.proved.deck import ProvedDeck, verify_deal
from p2pcards.protocol.proved.elgamal import card_points, decode_deck
from p2pcards.protocol.proved.group import decode_point
from p2pcards.protocol.proved.shuffle import ShuffleStatement
from p2pcards.protocol.proved.sigma import Context
from p2pcards.protocol.proved.vectors import build, dumps
from p2pcards.protocol.steps import DeckContext
from p2pcards.table.codec import chain, genesis, open_envelope

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


DIGEST_TAG = b"p2pcards/proved/deck-digest/v1"
"""The tag of ``prior`` as docs/proved-deck.md, "Messages", writes it."""


def test_the_messages_follow_the_specification() -> None:
    """Each message of the vectors' deal laid out byte by byte as docs/proved-deck.md,
    "Messages", says, each shuffle's ``prior`` recomputed from its words with hashlib
    alone, and the whole deal re-checked by the deck (``verify_deal``)."""
    v = json.loads(STORED.read_text())
    table, deal, size = bytes.fromhex(v["table"]), v["deal"], v["size"]
    m = [bytes.fromhex(item["encoded"]) for item in v["messages"]]
    assert [item["type"] for item in v["messages"]] == [
        "KeyShare", "KeyShare", "Shuffle", "Shuffle", "Shares", "Shares", "Shares", "Remix",
        "Shares", "Shares", "Shuffle"]

    def u16(value: int) -> bytes:
        return value.to_bytes(2, "big")

    def prior(round_: int, deck: bytes) -> bytes:
        return hashlib.sha256(frame(DIGEST_TAG, [table, deal.to_bytes(8, "big"),
                                                 bytes([round_]), deck])).digest()

    for key in v["keys"]:  # 01 ‖ u8(party) ‖ X ‖ R ‖ s32(s)
        party = key["party"]
        assert m[party] == b"\x01" + bytes([party]) + bytes.fromhex(key["public"]) \
            + bytes.fromhex(key["proof"])
        assert len(m[party]) == 100
    for i, step in enumerate(v["shuffles"]):  # 02 ‖ party ‖ round ‖ prior ‖ k ‖ n ‖ …
        ins = bytes.fromhex(step["input"])
        assert bytes.fromhex(v["messages"][2 + i]["prior"]) == prior(0, ins)
        assert m[2 + i] == b"\x02" + bytes([step["party"], 0]) + prior(0, ins) + u16(0) \
            + u16(size) + bytes.fromhex(step["output"]) + bytes.fromhex(step["proof"])
        assert len(m[2 + i]) == 39 + 66 * size + 33 * (3 * size + 5) + 32 * (2 * size + 4)
    for i, item in enumerate(v["opening"]["shares"]):  # 04 ‖ party ‖ FF ‖ n ‖ (slot ‖ …)
        assert m[4 + i] == b"\x04" + bytes([item["party"], 0xFF]) + u16(1) + u16(0) \
            + bytes.fromhex(item["share"]) + bytes.fromhex(item["proof"])
    for data, party, to, slots in ((m[6], 1, 0, [1, 2]), (m[8], 1, 0, [4, 5]),
                                   (m[9], 0, 0xFF, [4])):
        assert data[:5] == b"\x04" + bytes([party, to]) + u16(len(slots))
        assert len(data) == 5 + 133 * len(slots)
        assert [int.from_bytes(data[5 + 133 * j:7 + 133 * j], "big")
                for j in range(len(slots))] == slots
    remix = m[7]  # 03 ‖ party ‖ u16(n) ‖ slots ‖ deck ‖ proof
    assert remix[:8] == b"\x03\x00" + u16(2) + u16(1) + u16(2)
    assert len(remix) == 4 + 68 * 2 + 33 * (3 * 2 + 5) + 32 * (2 * 2 + 4)
    last = bytes.fromhex(v["shuffles"][-1]["output"])  # slots 0 and 3: its outputs 0 and 3
    moved = prior(1, last[:66] + last[3 * 66:4 * 66])
    assert bytes.fromhex(v["messages"][10]["prior"]) == moved
    assert m[10][:43] == b"\x02\x00\x01" + moved + u16(2) + u16(0) + u16(3) + u16(2)
    assert len(m[10]) == 39 + 2 * 2 + 66 * 2 + 33 * (3 * 2 + 5) + 32 * (2 * 2 + 4)
    deck = verify_deal(DeckContext(table, deal, v["parties"], size), m)
    assert set(deck.opened) == {0, 4} and deck.opened[0] == v["opening"]["card"]
    assert len(deck.points) == 6 and deck.retired == {1, 2}  # (round 1 under way)


TABLE_VECTORS = Path(__file__).parent / "data" / "protocol_vectors.json"


def test_the_table_envelopes_carry_the_messages() -> None:
    """``proved_envelopes`` of tests/data/protocol_vectors.json: one envelope of each of
    the proved deck's kinds, signed by the vectors' identities, chained from the table's
    genesis, each body carrying the deck's messages of this file's vectors as
    docs/protocol.md, "The kinds", says."""
    v = json.loads(STORED.read_text())
    m = [bytes.fromhex(item["encoded"]) for item in v["messages"]]
    t = json.loads(TABLE_VECTORS.read_text())
    keys = [Ed25519PublicKey.from_public_bytes(bytes.fromhex(i["public"]))
            for i in t["identities"][:2]]
    proved = t["proved_envelopes"]
    table = bytes.fromhex(proved["table"])
    assert table == bytes.fromhex(v["table"]) and proved["genesis"] == genesis(table).hex()
    prior = genesis(table)
    bodies = []
    for item in proved["envelopes"]:
        env = open_envelope(bytes.fromhex(item["wire"]), keys)
        assert (env.kind, env.sender, env.seq, env.deal, env.prior) == (
            item["kind"], item["sender"], item["seq"], v["deal"], prior)
        assert env.payload.hex() == item["payload"]
        prior = chain(prior, env.payload)
        assert prior.hex() == item["transcript_after"]
        bodies.append((env.kind, env.sender, env.body))
    assert bodies == [
        ("pkey", 0, {"data": m[0]}), ("pshuffle", 1, {"data": m[2]}),
        ("pshares", 1, {"shares": [m[5], m[6]]}),  # everyone first, then seat 0
        ("premix", 0, {"data": m[7]}),
        ("pact", 0, {"action": "play 0", "shown": [4], "slots": [], "shares": m[9]})]


def test_the_shuffle_ahead_vectors_follow_the_specification() -> None:
    """``proved_ahead``: deal 260's deck of the vectors' four cards, prepared during deal
    259 (docs/protocol.md, "Shuffle ahead"): its card points and the deck before its
    first shuffle as docs/proved-deck.md says (``(G, M_c + K)``), the shuffle's
    ``prior`` recomputed with hashlib from the words, each step laid out as a ``pkey``
    or ``pshuffle`` would carry it and its proof checked for deal 260, and three
    ``pmove`` envelopes going on with the chain of ``proved_envelopes``, each carrying
    one step."""
    v = json.loads(STORED.read_text())
    t = json.loads(TABLE_VECTORS.read_text())
    a = t["proved_ahead"]
    table, deal, size = bytes.fromhex(v["table"]), a["deal"], v["size"]
    assert deal == v["deal"] + 1
    points = [bytes.fromhex(p) for p in a["card_points"]]
    assert tuple(decode_point(p) for p in points) == card_points(table, deal, size)
    assert tuple(decode_point(p) for p in points) != card_points(table, v["deal"], size)
    key = bytes.fromhex(a["joint_key"])
    before = bytes.fromhex(a["deck_before_shuffle"])  # (textbook arithmetic)
    assert before == b"".join(sec1(G) + sec1(plus(lift(p), lift(key))) for p in points)
    prior = hashlib.sha256(frame(DIGEST_TAG, [table, deal.to_bytes(8, "big"), b"\x00",
                                              before])).digest()
    assert bytes.fromhex(a["prior"]) == prior
    steps = [bytes.fromhex(s) for s in a["steps"]]
    assert [s[:2] for s in steps] == [b"\x01\x01", b"\x01\x00", b"\x02\x00"]
    assert [len(s) for s in steps[:2]] == [100, 100]
    assert steps[2][2:3 + 32 + 4] == b"\x00" + prior + (0).to_bytes(2, "big") \
        + size.to_bytes(2, "big")  # round 0, prior, no slots, n
    observer = ProvedDeck(DeckContext(table, deal, 2, size), OBSERVER)
    for step in steps:  # every proof holds, for deal 260 (not 259)
        observer.receive(step)
    assert observer.key == decode_point(key) and len(observer.rounds[0].shuffles) == 1
    keys = [Ed25519PublicKey.from_public_bytes(bytes.fromhex(i["public"]))
            for i in t["identities"][:2]]
    last = t["proved_envelopes"]["envelopes"][-1]
    chained = bytes.fromhex(last["transcript_after"])
    seqs = {0: 3, 1: 2}  # (seat 0 sent pkey, premix, pact; seat 1 pshuffle, pshares)
    for item, step in zip(a["envelopes"], steps, strict=True):
        env = open_envelope(bytes.fromhex(item["wire"]), keys)
        assert (env.kind, env.deal, env.prior, env.seq) == (
            "pmove", v["deal"], chained, seqs[env.sender])
        assert env.sender == step[1]
        assert env.body == {"action": "play 0", "shown": [], "slots": [], "shares": b"",
                            "ahead": step}
        seqs[env.sender] += 1
        chained = chain(chained, env.payload)
        assert chained.hex() == item["transcript_after"]


def test_the_agreement_vectors_follow_the_specification() -> None:
    """``proved_agree``: seat 1's shuffle of deal 260's round 0 on one more ``pmove``
    (the prepared deck is then complete), and deal 259's agreement: both ``pagree``s
    name the transcript hash after that move; seat 0's, the first signer's, carries no
    shares; seat 1's carries its shares of slots 0 and 1 to seat 0, laid out as a
    ``pshares`` grant, every proof holding for deal 260's deck (docs/protocol.md,
    "Shares on the agreement")."""
    v = json.loads(STORED.read_text())
    t = json.loads(TABLE_VECTORS.read_text())
    a, g = t["proved_ahead"], t["proved_agree"]
    table, deal, size = bytes.fromhex(v["table"]), a["deal"], v["size"]
    keys = [Ed25519PublicKey.from_public_bytes(bytes.fromhex(i["public"]))
            for i in t["identities"][:2]]
    chained = bytes.fromhex(a["envelopes"][-1]["transcript_after"])
    observer = ProvedDeck(DeckContext(table, deal, 2, size), OBSERVER)
    for step in a["steps"]:
        observer.receive(bytes.fromhex(step))
    envs = [open_envelope(bytes.fromhex(item["wire"]), keys) for item in g["envelopes"]]
    assert [(e.kind, e.sender, e.seq, e.deal) for e in envs] == [
        ("pmove", 1, 3, v["deal"]), ("pagree", 0, 5, v["deal"]), ("pagree", 1, 4, v["deal"])]
    step = bytes.fromhex(g["step"])
    assert step[:3] == b"\x02\x01\x00" and envs[0].body["ahead"] == step  # seat 1, round 0
    observer.receive(step)
    assert observer.expected() is None  # (the deck is complete)
    agreement = chain(chained, envs[0].payload)
    assert bytes.fromhex(g["agreement"]) == agreement
    first, second = envs[1].body, envs[2].body
    assert first == {"transcript": agreement, "points": [0, 0], "verdict": "ok", "shares": []}
    assert envs[1].prior == agreement
    assert {k: second[k] for k in ("transcript", "points", "verdict")} == {
        "transcript": agreement, "points": [0, 0], "verdict": "ok"}
    (blob,) = second["shares"]
    assert blob[:5] == b"\x04\x01\x00" + (2).to_bytes(2, "big")  # seat 1 to seat 0, 2 slots
    assert [int.from_bytes(blob[5 + 133 * i:7 + 133 * i], "big") for i in range(2)] == [0, 1]
    assert len(blob) == 5 + 133 * 2
    observer.receive(blob)  # every proof holds, for deal 260
    assert set(observer.shares[0]) == set(observer.shares[1]) == {1}
    assert chain(envs[1].prior, envs[1].payload) == envs[2].prior
