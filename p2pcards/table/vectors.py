"""Golden test vectors for an independent implementation (docs/protocol.md, "Golden
vectors").

``python -m p2pcards.table.vectors`` prints them as JSON (bytes as hex), with a
fresh HPKE ciphertext; ``--write`` rewrites ``tests/data/protocol_vectors.json``,
the copy the tests check this implementation against, keeping its ciphertext.
Everything is fixed: keys, seeds, secrets.  The one thing HPKE cannot fix is its
ephemeral key, so the sealed vector gives a
ciphertext made once, with the recipient's private key to open it, and the exact
signed inner blob it must open to.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from p2pcards.protocol.curve import N
from p2pcards.table import kinds, vectors_deck, vectors_proved, vectors_table
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
from p2pcards.table.roster import LOCK_DECK, make_roster

FORMAT = "p2pcards-protocol-vectors/1"
SEALED_DEAL = 259
"""The sealed vector's deal: both of its low bytes non-zero (0x0103), so that the deal's
byte order shows in ``info`` and ``inner``."""


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
                         names=["ana", "ben", "cy", "dee"], bots=["", "", "", "heuristic"],
                         deck=LOCK_DECK)  # (the vectors are the lock deck's: its roster's bytes)
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
    inner = pack([table, SEALED_DEAL, 0, 1, content])
    blob = pack([inner, keys[0].sign(SEALED_DOMAIN + inner)])
    if ciphertext is None:
        ciphertext = seal(keys[0], public_bytes(seal_key.public_key()), table=table,
                          deal=SEALED_DEAL, sender=0, recipient=1, content=content)
    out["sealed"] = {"sender": 0, "recipient": 1, "deal": SEALED_DEAL,
                     "recipient_private": _seed("seal/1"),
                     "recipient_public": public_bytes(seal_key.public_key()),
                     "info": seal_info(table, SEALED_DEAL, 1), "content": content,
                     "inner": inner,
                     "blob": blob, "ciphertext": ciphertext}
    out["deck"] = vectors_deck.build(table)
    out.update(vectors_table.build(table))
    out.update(vectors_proved.build(keys[:2]))
    return out


def dumps(vectors: dict[str, Any]) -> str:
    return json.dumps(_hex(vectors), indent=1, sort_keys=True) + "\n"


STORED = Path(__file__).resolve().parents[2] / "tests" / "data" / "protocol_vectors.json"


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        stored = json.loads(STORED.read_text())
        STORED.write_text(dumps(build(bytes.fromhex(stored["sealed"]["ciphertext"]))))
        print(f"wrote {STORED}")
    elif argv:
        print("usage: python -m p2pcards.table.vectors [--write]", file=sys.stderr)
        return 2
    else:
        print(dumps(build()), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
