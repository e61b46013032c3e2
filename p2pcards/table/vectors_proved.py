"""Golden vectors of the proved deck's messages at the table (docs/protocol.md, "Golden
vectors"): one envelope of each of its kinds, carrying the deck's messages of
``tests/data/proved_vectors.json`` (:mod:`p2pcards.protocol.proved.vectors`: table
``proved-vectors!!``, deal 259, two parties), signed by the vectors' identities 0 and 1
and chained from that table's genesis; then (``proved_ahead``) the chain goes on with
three ``pmove`` envelopes carrying the steps of deal 260's deck, shuffled ahead: seat
1's key share, seat 0's, and seat 0's shuffle of round 0 (docs/protocol.md, "Shuffle
ahead"); then (``proved_agree``) one more ``pmove`` carrying seat 1's shuffle, which
completes that deck, and the two ``pagree`` envelopes of deal 259's agreement: seat
0's, the first signer's, with no shares, and seat 1's with its shares of slots 0 and 1
of deal 260's deck to seat 0 (docs/protocol.md, "Shares on the agreement").
:func:`build` is merged into :func:`p2pcards.table.vectors.build`.
"""

from __future__ import annotations

from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.protocol.proved import vectors as proved_vectors
from p2pcards.protocol.proved.deck import ProvedDeck, deck_digest
from p2pcards.protocol.proved.elgamal import encode_deck
from p2pcards.protocol.proved.messages import KeyShare, Shares, Shuffle, decode_message
from p2pcards.protocol.steps import DeckContext
from p2pcards.table import kinds
from p2pcards.table.codec import chain, genesis, seal_envelope
from p2pcards.table.kinds import ProvedAct, ProvedAgree, ProvedMove, ProvedShares

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
    envelopes = _chained(identities, table, deal, messages, prior=prior, seqs=seqs)
    ahead, steps, decks = _ahead(table, deal + 1)
    moves: list[tuple[int, kinds.Message]] = [
        (sender, ProvedMove(party=sender, action=ACTION, ahead=step)) for sender, step in steps]
    ahead["envelopes"] = _chained(identities, table, deal, moves,
                                  prior=envelopes[-1]["transcript_after"], seqs=seqs)
    return {"proved_envelopes": {"table": table, "genesis": genesis(table),
                                 "envelopes": envelopes},
            "proved_ahead": ahead,
            "proved_agree": _agree(identities, table, deal, decks,
                                   prior=ahead["envelopes"][-1]["transcript_after"],
                                   seqs=seqs)}


def _agree(identities: list[Ed25519PrivateKey], table: bytes, deal: int,
           decks: list[ProvedDeck], *, prior: bytes, seqs: list[int]) -> dict[str, Any]:
    """Seat 1's shuffle of deal ``deal + 1``'s round 0 on a ``pmove`` (the deck is then
    complete), and deal ``deal``'s agreement: seat 0's ``pagree`` with no shares, seat
    1's with its shares of slots 0 and 1 to seat 0, each proof checked by seat 0's deck."""
    last = decks[1].step()
    decks[0].receive(last)
    assert decks[0].expected() is None and decks[1].expected() is None
    moved = _chained(identities, table, deal, [
        (1, ProvedMove(party=1, action=ACTION, ahead=last))], prior=prior, seqs=seqs)
    agreed = moved[-1]["transcript_after"]
    shares = decks[1].release([0, 1], 0)
    decks[0].receive(shares)
    signed: list[tuple[int, kinds.Message]] = [
        (0, ProvedAgree(party=0, transcript=agreed, points=(0, 0), verdict="ok")),
        (1, ProvedAgree(party=1, transcript=agreed, points=(0, 0), verdict="ok",
                        shares=ProvedShares(party=1, shares=(shares,))))]
    return {"step": last.encode(), "agreement": agreed,
            "envelopes": moved + _chained(identities, table, deal, signed, prior=agreed,
                                          seqs=seqs)}


def _chained(identities: list[Ed25519PrivateKey], table: bytes, deal: int,
             messages: list[tuple[int, kinds.Message]], *, prior: bytes,
             seqs: list[int]) -> list[dict[str, Any]]:
    """Each message sealed in its sender's name, the transcript chained from ``prior``
    (``seqs``: each sender's next number, moved on)."""
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
    return envelopes


def _ahead(table: bytes, deal: int
           ) -> tuple[dict[str, Any], list[tuple[int, KeyShare | Shuffle]], list[ProvedDeck]]:
    """Deal ``deal``'s deck of the vectors' four cards, prepared ahead by two parties
    (secrets from seeded sources): the key shares (seat 1's first) and the first shuffle
    of round 0 (seat ``deal mod 2``'s), each checked by the other party's deck."""
    context = DeckContext(table, deal, proved_vectors.PARTIES, proved_vectors.SIZE)
    decks = [ProvedDeck(context, p, proved_vectors.Recorder(f"p2pcards/proved/ahead/{p}"))
             for p in range(proved_vectors.PARTIES)]
    steps: list[tuple[int, KeyShare | Shuffle]] = []
    for party in (1, 0, deal % 2):
        step = decks[party].step()
        decks[1 - party].receive(step)
        steps.append((party, step))
    first = decks[0].rounds[0].deck
    shuffle = steps[-1][1]
    assert isinstance(shuffle, Shuffle) and shuffle.prior == deck_digest(context, 0, first)
    return {"deal": deal, "card_points": [p.encode() for p in decks[0].cards],
            "joint_key": decks[0].key.encode() if decks[0].key is not None else b"",
            "deck_before_shuffle": encode_deck(first), "prior": shuffle.prior,
            "steps": [step.encode() for _, step in steps]}, steps, decks
