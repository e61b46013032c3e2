"""Golden vectors of the proved deck's cryptography (docs/proved-deck.md, "Vectors").

One small deal, two parties and four cards at deal 259, every secret drawn from a
seeded source and listed, so that another implementation can recompute every byte:
the generators and card points (with the counters that gave them), each party's key
share and its proof of knowledge, the joint key, the deck before the first shuffle,
two shuffle passes with their proofs (the prover's every random draw given by name),
and the opening of one ciphertext with both decryption shares and their proofs.
Every proof is checked before it is written.

``python -m p2pcards.protocol.proved.vectors`` prints them as JSON (bytes as hex);
``--write`` rewrites ``tests/data/proved_vectors.json``, which
``tests/test_proved_vectors.py`` checks this implementation still computes.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from ..steps import DeckContext
from . import elgamal, shuffle, sigma
from .deck import deck_digest, verify_deal
from .elgamal import CARD_DOMAIN, Ciphertext, card_fields, decode_deck
from .group import GENERATOR_DOMAIN, Point, decode_point, frame, generator, hash_to_point, s32, u16
from .messages import KeyShare, Remix, Shares, Shuffle

FORMAT = "p2pcards-proved-vectors/1"
TABLE = b"proved-vectors!!"
"""16 bytes, as the table session's ids are."""
DEAL, PARTIES, SIZE = 259, 2, 4
"""DEAL: both of its low bytes non-zero (0x0103), so that its byte order shows."""
STORED = Path(__file__).resolve().parents[2] / "tests" / "data" / "proved_vectors.json"


class Recorder:
    """A seeded source that remembers every ``randbelow`` it answers (the scalars a
    proof drew are ``1 + value``)."""

    def __init__(self, seed: str):
        self._rng = random.Random(seed)
        self.drawn: list[int] = []

    def randbelow(self, n: int) -> int:
        value = self._rng.randrange(n)
        self.drawn.append(value)
        return value

    def token_bytes(self, n: int) -> bytes:
        return self._rng.randbytes(n)

    def take(self) -> list[int]:
        """The scalars drawn since the last take (each ``1 + randbelow(N - 1)``)."""
        out, self.drawn = [1 + v for v in self.drawn], []
        return out


def _hex(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list | tuple):
        return [_hex(v) for v in value]
    if isinstance(value, dict):
        return {k: _hex(v) for k, v in value.items()}
    return value


def _scalars(values: list[int]) -> list[str]:
    return [s32(v).hex() for v in values]


def _shuffle_pass(context: sigma.Context, key: Point, deck: tuple[Ciphertext, ...],
                  source: Recorder) -> tuple[dict[str, Any], tuple[Ciphertext, ...]]:
    out, psi, rs = elgamal.shuffle(deck, key, source)
    source.drawn = source.drawn[len(deck) - 1:]  # Fisher–Yates's draws: psi gives them
    randomness = source.take()
    assert randomness == rs
    statement = shuffle.ShuffleStatement(context, key, deck, out)
    proof = shuffle.prove_shuffle(statement, psi, rs, source)
    drawn = source.take()
    shuffle.verify_shuffle(statement, proof)
    size = len(deck)
    fields = statement.fields()
    u = shuffle.challenges(fields, proof.commitments)
    c = shuffle.challenge(fields, proof.commitments, proof.chain,
                          (proof.t1, proof.t2, proof.t3, proof.t4, proof.t_hat))
    return {
        "party": context.party, "permutation": psi, "reencryption": _scalars(rs),
        "input": elgamal.encode_deck(deck), "output": elgamal.encode_deck(out),
        "prover_draws": {
            "r": _scalars(drawn[:size]), "r_hat": _scalars(drawn[size:2 * size]),
            "omega": _scalars(drawn[2 * size:2 * size + 4]),
            "omega_hat": _scalars(drawn[2 * size + 4:3 * size + 4]),
            "omega_tilde": _scalars(drawn[3 * size + 4:])},
        "u": _scalars(u), "challenge": s32(c),
        "proof": shuffle.encode_shuffle_proof(proof),
    }, out


def build() -> dict[str, Any]:
    source = Recorder("p2pcards/proved/vectors")
    out: dict[str, Any] = {"format": FORMAT, "table": TABLE, "deal": DEAL,
                           "parties": PARTIES, "size": SIZE}
    out["domains"] = {"generator": GENERATOR_DOMAIN, "card_point": CARD_DOMAIN,
                      "key_proof": sigma.KEY_PROOF_DOMAIN,
                      "share_proof": sigma.SHARE_PROOF_DOMAIN,
                      "shuffle_u": shuffle.U_DOMAIN, "shuffle_u_each": shuffle.U_EACH_DOMAIN,
                      "shuffle_challenge": shuffle.CHALLENGE_DOMAIN}
    out["generators"] = [
        {"index": i, "frame0": frame(GENERATOR_DOMAIN, [u16(i), b"\x00"]),
         "counter": hash_to_point(GENERATOR_DOMAIN, [u16(i)])[1],
         "point": generator(i).encode()} for i in range(SIZE + 1)]
    out["cards"] = [
        {"card": card, "frame0": frame(CARD_DOMAIN, [*card_fields(TABLE, DEAL, card), b"\x00"]),
         "counter": hash_to_point(CARD_DOMAIN, card_fields(TABLE, DEAL, card))[1],
         "point": elgamal.card_points(TABLE, DEAL, SIZE)[card].encode()} for card in range(SIZE)]
    keys = []
    for party in range(PARTIES):
        context = sigma.Context(TABLE, DEAL, party)
        x, public = elgamal.key_share(source)
        source.take()
        proof = sigma.prove_key(context, x, source)
        (w,) = source.take()
        sigma.verify_key(context, public, proof)
        keys.append((x, public))
        out.setdefault("keys", []).append({
            "party": party, "secret": s32(x), "public": public.encode(), "nonce": s32(w),
            "challenge": s32(sigma.key_challenge(context, public, proof.r)),
            "proof": proof.encode()})
    joint = elgamal.joint_key(p for _, p in keys)
    out["joint_key"] = joint.encode()
    cards = elgamal.card_points(TABLE, DEAL, SIZE)
    deck = tuple(elgamal.public_encryption(c, joint) for c in cards)
    out["initial_deck"] = elgamal.encode_deck(deck)
    out["shuffles"] = []
    for party in (DEAL % PARTIES, (DEAL + 1) % PARTIES):
        vector, deck = _shuffle_pass(sigma.Context(TABLE, DEAL, party), joint, deck, source)
        out["shuffles"].append(vector)
    target = deck[0]
    shares = []
    out["opening"] = {"ciphertext": target.encode(), "shares": []}
    for party, (x, public) in enumerate(keys):
        context = sigma.Context(TABLE, DEAL, party)
        share, sproof = sigma.prove_share(context, x, target, source)
        (w,) = source.take()
        sigma.verify_share(context, public, target, share, sproof)
        shares.append(share)
        out["opening"]["shares"].append({
            "party": party, "share": share.encode(), "nonce": s32(w),
            "challenge": s32(sigma.share_challenge(context, public, target, share,
                                                   a=sproof.a, b=sproof.b)),
            "proof": sproof.encode()})
    opened = elgamal.combine(target, shares)
    out["opening"]["card"] = cards.index(opened)
    out["opening"]["point"] = opened.encode()
    out["messages"] = _messages(out, keys, source)
    return out


def _messages(out: dict[str, Any], keys: list[tuple[int, Point]],
              source: Recorder) -> list[dict[str, Any]]:
    """The deal above as the deck's messages, each in its canonical bytes, then a little
    more of it (drawn after everything above, which it leaves as it was): party 1's
    shares of slots 1 and 2 to party 0, party 0's re-mix of them (new slots 4 and 5),
    party 1's shares of those to party 0, party 0's share of slot 4 to everyone, and
    party 0's shuffle of a reshuffle of slots 0 and 3 (round 1, which it begins).
    Every message is checked by :func:`~p2pcards.protocol.proved.deck.verify_deal`, in
    this order, before it is written."""
    context = DeckContext(TABLE, DEAL, PARTIES, SIZE)
    made: list[KeyShare | Shuffle | Remix | Shares] = []
    for key in out["keys"]:
        made.append(KeyShare(party=key["party"], public=keys[key["party"]][1],
                             proof=sigma.decode_key_proof(key["proof"])))
    for step in out["shuffles"]:
        deck = decode_deck(step["input"], SIZE)
        made.append(Shuffle(party=step["party"], round=0, slots=(),
                            prior=deck_digest(context, 0, deck),
                            deck=decode_deck(step["output"], SIZE),
                            proof=shuffle.decode_shuffle_proof(step["proof"], SIZE)))
    for item in out["opening"]["shares"]:
        made.append(Shares(party=item["party"], to=None, slots=(0,),
                           shares=(decode_point(item["share"]),),
                           proofs=(sigma.decode_share_proof(item["proof"]),)))
    points = list(decode_deck(out["shuffles"][-1]["output"], SIZE))
    joint = elgamal.joint_key(p for _, p in keys)

    def release(party: int, slots: tuple[int, ...], to: int | None) -> Shares:
        x = keys[party][0]
        proved = [sigma.prove_share(sigma.Context(TABLE, DEAL, party), x, points[s], source)
                  for s in slots]
        return Shares(party=party, to=to, slots=slots, shares=tuple(d for d, _ in proved),
                      proofs=tuple(q for _, q in proved))

    made.append(release(1, (1, 2), 0))
    inputs = (points[1], points[2])
    mixed, psi, rs = elgamal.shuffle(inputs, joint, source)
    statement = shuffle.ShuffleStatement(sigma.Context(TABLE, DEAL, 0), joint, inputs, mixed)
    made.append(Remix(party=0, slots=(1, 2), deck=mixed,
                      proof=shuffle.prove_shuffle(statement, psi, rs, source)))
    points += mixed
    made.append(release(1, (4, 5), 0))
    made.append(release(0, (4,), None))
    inputs = (points[0], points[3])
    moved, psi, rs = elgamal.shuffle(inputs, joint, source)
    statement = shuffle.ShuffleStatement(sigma.Context(TABLE, DEAL, 0), joint, inputs, moved)
    made.append(Shuffle(party=0, round=1, slots=(0, 3), prior=deck_digest(context, 1, inputs),
                        deck=moved, proof=shuffle.prove_shuffle(statement, psi, rs, source)))
    source.take()
    verify_deal(context, [m.encode() for m in made])
    return [{"type": type(m).__name__, "party": m.party, "encoded": m.encode(),
             **({"round": m.round, "prior": m.prior} if isinstance(m, Shuffle) else {})}
            for m in made]


def dumps(vectors: dict[str, Any]) -> str:
    return json.dumps(_hex(vectors), indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        STORED.write_text(dumps(build()))
        print(f"wrote {STORED}")
    elif argv:
        print("usage: python -m p2pcards.protocol.proved.vectors [--write]", file=sys.stderr)
        return 2
    else:
        print(dumps(build()), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
