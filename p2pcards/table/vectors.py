"""Golden test vectors for an independent implementation (docs/protocol.md, "Vectors").

``python -m p2pcards.table.vectors`` prints them as JSON (bytes as hex); the
copy in ``tests/data/protocol_vectors.json`` is what the tests check this
implementation against.  Everything is fixed: keys, seeds, secrets.  The one
thing HPKE cannot fix is its ephemeral key, so the sealed vector gives a
ciphertext made once, with the recipient's private key to open it, and the exact
signed inner blob it must open to.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from p2pcards.protocol.curve import N, card_points
from p2pcards.protocol.steps import DeckContext, deck_digest, lift_deck, rekey_deck, shuffle_deck
from p2pcards.table import kinds, vectors_table
from p2pcards.table.codec import (
    SEALED_DOMAIN,
    chain,
    genesis,
    pack,
    public_bytes,
    seal,
    seal_envelope,
    seal_info,
)
from p2pcards.table.kinds import Act, Hello, Sign
from p2pcards.table.roster import make_roster

FORMAT = "p2pcards-protocol-vectors/1"


def _seed(label: str) -> bytes:
    return hashlib.sha256(f"p2pcards/vectors/{label}".encode()).digest()


def _scalar(label: str) -> int:
    return int.from_bytes(_seed(label), "big") % (N - 1) + 1


def _hex(value: Any) -> Any:
    """Bytes as hex, recursively (JSON has no bytes)."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list | tuple):
        return [_hex(v) for v in value]
    if isinstance(value, dict):
        return {k: _hex(v) for k, v in value.items()}
    return value


def identities() -> list[Ed25519PrivateKey]:
    return [Ed25519PrivateKey.from_private_bytes(_seed(f"identity/{i}")) for i in range(4)]


def build(ciphertext: bytes | None = None) -> dict[str, Any]:
    """Every vector; ``ciphertext``: the sealed vector's stored ciphertext (a fresh one
    when None)."""
    keys = identities()
    table = _seed("table")[:16]
    roster = make_roster(table, "bidwhist", [public_bytes(k.public_key()) for k in keys],
                         names=["ana", "ben", "cy", "dee"], bots=["", "", "", "heuristic"])
    out: dict[str, Any] = {"format": FORMAT}
    out["identities"] = [{"seed": _seed(f"identity/{i}"), "public": public_bytes(k.public_key())}
                         for i, k in enumerate(keys)]
    out["roster"] = {"table": table, "game": "bidwhist", "options": {},
                     "seats": [s.to_wire() for s in roster.seats], "encoded": roster.encode(),
                     "digest": roster.digest(), "safety_number": roster.safety_number()}
    seal_key = X25519PrivateKey.from_private_bytes(_seed("seal/1"))
    messages: list[tuple[int, int, kinds.Message]] = [
        (0, 0, Sign(roster=roster.digest())),
        (1, 0, Sign(roster=roster.digest())),
        (1, 1, Hello(seal_key=public_bytes(seal_key.public_key()))),
        (2, 0, Act(action="play QH", shown=((17, ((0, _scalar("k0")), (1, _scalar("k1")),
                                                  (2, _scalar("k2")), (3, _scalar("k3")))),))),
        (3, 0, Act(action="discard ? ? ? ? ? ?", slots=(54, 55, 56, 57, 58, 59))),
    ]
    prior = genesis(table)
    envelopes = []
    for sender, seq, message in messages:
        kind, body = kinds.encode_body(message)
        env = seal_envelope(keys[sender], table=table, deal=0, sender=sender, seq=seq,
                            prior=prior, kind=kind, body=body)
        after = chain(prior, env.payload)
        envelopes.append({"sender": sender, "seq": seq, "deal": 0, "prior": prior,
                          "kind": kind, "body": body, "payload": env.payload,
                          "signature": env.signature, "wire": env.wire,
                          "transcript_after": after})
        prior = after
    out["transcript_genesis"] = genesis(table)
    out["envelopes"] = envelopes
    content = [[5, _scalar("sealed/5").to_bytes(32, "big")],
               [9, _scalar("sealed/9").to_bytes(32, "big")]]
    inner = pack([table, 0, 0, 1, content])
    blob = pack([inner, keys[0].sign(SEALED_DOMAIN + inner)])
    if ciphertext is None:
        ciphertext = seal(keys[0], public_bytes(seal_key.public_key()), table=table, deal=0,
                          sender=0, recipient=1, content=content)
    out["sealed"] = {"sender": 0, "recipient": 1, "deal": 0,
                     "recipient_private": _seed("seal/1"),
                     "recipient_public": public_bytes(seal_key.public_key()),
                     "info": seal_info(table, 0, 1), "content": content, "inner": inner,
                     "blob": blob, "ciphertext": ciphertext}
    out["deck"] = deck_vector(table)
    out.update(vectors_table.build(table))
    return out


def deck_vector(table: bytes) -> dict[str, Any]:
    """Two parties, four cards: the card points, both shuffle and lock passes with the
    secrets that made them, the commitments, and the card each slot opens to."""
    context = DeckContext(table, 0, 2, 4)
    points = card_points(table, 0, 4)
    deck: tuple[bytes, ...] = points
    passes = []
    shuffles = {0: (_scalar("shuffle/0"), [2, 0, 3, 1]), 1: (_scalar("shuffle/1"), [3, 1, 0, 2])}
    for party in context.order(0):
        scalar, permutation = shuffles[party]
        prior = deck_digest(context, 0, deck)
        deck = shuffle_deck(lift_deck(deck), scalar, permutation)
        passes.append({"step": "shuffle", "party": party, "prior": prior,
                       "scalar": _bytes32(scalar), "permutation": permutation, "deck": deck})
    locks = {p: [_scalar(f"lock/{p}/{j}") for j in range(4)] for p in (0, 1)}
    for party in context.order(0):
        prior = deck_digest(context, 0, deck)
        deck = rekey_deck(lift_deck(deck), [shuffles[party][0]] * 4, locks[party])
        passes.append({"step": "lock", "party": party, "prior": prior,
                       "keys": [_bytes32(k) for k in locks[party]],
                       "commitments": [context.commitment(party, j, k)
                                       for j, k in enumerate(locks[party])], "deck": deck})
    opened = []
    for slot, point in enumerate(deck):
        product = locks[0][slot] * locks[1][slot] % N
        plain = rekey_deck(lift_deck([point]), [product], [1])[0]
        opened.append(points.index(plain))
    return {"table": table, "deal": 0, "parties": 2, "size": 4, "card_points": points,
            "passes": passes, "opened": opened}


def _bytes32(scalar: int) -> bytes:
    return scalar.to_bytes(32, "big")


def dumps(vectors: dict[str, Any]) -> str:
    return json.dumps(_hex(vectors), indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(dumps(build()), end="")
