"""Golden vectors of the proved deck's messages at the table (docs/protocol.md, "Golden
vectors"): one envelope of each of its kinds, carrying the deck's messages of
``tests/data/proved_vectors.json`` (:mod:`p2pcards.protocol.proved.vectors`: table
``proved-vectors!!``, deal 259, two parties), signed by the vectors' identities 0 and 1
and chained from that table's genesis.  :func:`build` is merged into
:func:`p2pcards.table.vectors.build`.
"""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.protocol.proved import vectors as proved_vectors
from p2pcards.protocol.proved.messages import Shares, decode_message
from p2pcards.table import kinds
from p2pcards.table.codec import chain, genesis, seal_envelope
from p2pcards.table.kinds import ProvedAct, ProvedShares

ACTION = "play 0"
"""The ``pact``'s text: the vectors' four cards belong to no game, so it is a stand-in
(the card the slot opens to is card 0 of the vectors' deck)."""


def build(identities: list[Ed25519PrivateKey]) -> dict[str, Any]:
    made = [decode_message(m["encoded"]) for m in proved_vectors.build()["messages"]]
    key_0, _, shuffle_1, _, _, open_1, give_1, remix_0, _, show_0, _ = made
    assert isinstance(open_1, Shares) and isinstance(give_1, Shares)
    assert isinstance(show_0, Shares)
    table, deal = proved_vectors.TABLE, proved_vectors.DEAL
    messages: list[tuple[int, kinds.Message]] = [
        (0, key_0), (1, shuffle_1),  # type: ignore[list-item]
        (1, ProvedShares(party=1, shares=(open_1, give_1))),
        (0, remix_0),  # type: ignore[list-item]
        (0, ProvedAct(party=0, action=ACTION, shown=(4,), shares=show_0))]
    prior = genesis(table)
    seqs = [0, 0]
    envelopes = []
    for sender, message in messages:
        kind, body = kinds.encode_body(message)
        env = seal_envelope(identities[sender], table=table, deal=deal, sender=sender,
                            seq=seqs[sender], prior=prior, kind=kind, body=body)
        after = chain(prior, env.payload)
        envelopes.append({"sender": sender, "seq": seqs[sender], "deal": deal, "prior": prior,
                          "kind": kind, "body": body, "payload": env.payload,
                          "signature": env.signature, "wire": env.wire,
                          "transcript_after": after})
        seqs[sender] += 1
        prior = after
    return {"proved_envelopes": {"table": table, "genesis": genesis(table),
                                 "envelopes": envelopes}}
