"""Golden vectors of the mental-poker deck (docs/mental-poker.md, "Vectors").

One small deal, two parties and four cards at deal 259, with fixed secrets: the
card points (each label and the counter that gave it), round 0's shuffle and
lock passes, party 0 dealt slots 0 and 2 and re-mixing them, a reshuffle of
slots 1 and 3 (round 1: unlock, shuffle and lock passes), the key releases, each
party's ``audit.reveal`` as the ``audit`` message carries it, the card every
slot opens to, and the audit's verdict on four changed versions of the deal (its
exact reason texts).  Every figure is computed by :mod:`p2pcards.protocol`'s own
functions; the messages are then checked by an observing :class:`Deck` (every
check a receiver makes) and by the audit, so a vector that the code would refuse
cannot be written.  ``python -m p2pcards.table.vectors`` prints them with the
table's other vectors.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any

from p2pcards.protocol.audit import audit
from p2pcards.protocol.constants import OBSERVER
from p2pcards.protocol.curve import N, card_label, card_points
from p2pcards.protocol.deck import Deck, Round
from p2pcards.protocol.messages import (
    AuditReveal,
    KeyRelease,
    Locked,
    Remixed,
    Shuffled,
    Unlocked,
)
from p2pcards.protocol.steps import (
    COMMIT_DOMAIN,
    DIGEST_DOMAIN,
    DeckContext,
    deck_digest,
    lift_deck,
    rekey_deck,
    shuffle_deck,
)
from p2pcards.table import kinds
from p2pcards.table.codec import pack

PARTIES, SIZE, DEAL = 2, 4, 259
"""DEAL: both of its low bytes non-zero (0x0103), so that the deal's byte order shows in
every label and pre-image, and odd, so that round 0 begins at party 1 (259 mod 2)."""
DEALT = (0, 2)
"""Round 0's slots dealt to party 0, which then re-mixes them."""
REMIX_ORDER = (2, 0)
"""The re-mix's secret order: new slot 4 + m holds the card of old slot REMIX_ORDER[m]."""
RESHUFFLED = (1, 3)
"""The slots of the reshuffle (round 1), in the order the unlock names them."""
PERMUTATIONS = {(0, 0): [2, 0, 3, 1], (0, 1): [3, 1, 0, 2], (1, 0): [1, 0], (1, 1): [0, 1]}
"""(round, party) -> the party's permutation of that round."""


def _scalar(label: str) -> int:
    """A fixed scalar in [1, n-1] (the same recipe as the table's other vectors)."""
    digest = hashlib.sha256(f"p2pcards/vectors/{label}".encode()).digest()
    return int.from_bytes(digest, "big") % (N - 1) + 1


def _bytes32(scalar: int) -> bytes:
    return scalar.to_bytes(32, "big")


def _header(context: DeckContext) -> bytes:
    return len(context.table).to_bytes(2, "big") + context.table + context.deal.to_bytes(8, "big")


def commitment_preimage(context: DeckContext, party: int, slot: int, key: int) -> bytes:
    """The bytes :meth:`DeckContext.commitment` hashes (checked against it)."""
    preimage = (COMMIT_DOMAIN + _header(context) + party.to_bytes(1, "big")
                + slot.to_bytes(2, "big") + _bytes32(key))
    assert hashlib.sha256(preimage).digest() == context.commitment(party, slot, key)
    return preimage


def prior_preimage(context: DeckContext, round_: int, deck: Sequence[bytes]) -> bytes:
    """The bytes :func:`deck_digest` hashes (checked against it)."""
    preimage = DIGEST_DOMAIN + _header(context) + round_.to_bytes(1, "big") + b"".join(deck)
    assert hashlib.sha256(preimage).digest() == deck_digest(context, round_, deck)
    return preimage


def _counter(label: bytes, point: bytes) -> int:
    """The try-and-increment counter that gave ``point`` (the first one that did)."""
    return next(i for i in range(256) if hashlib.sha256(label + bytes([i])).digest() == point)


class _Deal:
    """The vector's deal, message by message, with the secrets that made each."""

    def __init__(self, table: bytes):
        self.context = DeckContext(table, DEAL, PARTIES, SIZE)
        self.cards = card_points(table, DEAL, SIZE)
        self.unlock = {(0, p): 1 for p in range(PARTIES)}  # round 0 has no unlock pass
        self.shuffle = {(r, p): _scalar(f"shuffle/{p}" if r == 0 else f"shuffle/{r}/{p}")
                        for r in (0, 1) for p in range(PARTIES)}
        self.lock = {(0, p): [_scalar(f"lock/{p}/{j}") for j in range(SIZE)]
                     for p in range(PARTIES)}
        self.slot_keys: dict[int, dict[int, int]] = {}
        self.slot_points: list[bytes] = []
        self.log: list[Round | Remixed] = []
        self.releases: list[KeyRelease] = []
        self.remix_keys = [_scalar(f"remix/0/{m}") for m in range(len(DEALT))]

    def digest(self, round_: int, deck: Sequence[bytes]) -> tuple[bytes, bytes]:
        return deck_digest(self.context, round_, deck), prior_preimage(self.context, round_, deck)

    def round(self, number: int, inputs: tuple[int, ...] | None) -> dict[str, Any]:
        """Every pass of a round, in turn order, from the round's input deck."""
        context, order = self.context, self.context.order(number)
        deck = self.cards if inputs is None else tuple(self.slot_points[s] for s in inputs)
        size, first = len(deck), len(self.slot_points)
        made = Round(number, inputs)
        passes: list[dict[str, Any]] = []
        if inputs is not None:
            for p in order:
                self.unlock[number, p] = _scalar(f"unlock/{number}/{p}")
                self.lock[number, p] = [_scalar(f"lock/{number}/{p}/{j}") for j in range(size)]
                prior, preimage = self.digest(number, deck)
                removed = [self.slot_keys[s][p] for s in inputs]
                deck = rekey_deck(lift_deck(deck), removed, [self.unlock[number, p]] * size)
                made.unlocks.append(Unlocked(party=p, round=number, slots=inputs, prior=prior,
                                             deck=deck))
                passes.append({"step": "unlock", "party": p, "prior": prior,
                               "prior_preimage": preimage, "slots": list(inputs),
                               "removed": [_bytes32(k) for k in removed],
                               "scalar": _bytes32(self.unlock[number, p]), "deck": deck})
        for p in order:
            scalar, permutation = self.shuffle[number, p], PERMUTATIONS[number, p]
            prior, preimage = self.digest(number, deck)
            deck = shuffle_deck(lift_deck(deck), scalar, permutation)
            made.shuffles.append(Shuffled(party=p, round=number, prior=prior, deck=deck))
            passes.append({"step": "shuffle", "party": p, "prior": prior,
                           "prior_preimage": preimage, "scalar": _bytes32(scalar),
                           "permutation": permutation, "deck": deck})
        for p in order:
            keys = self.lock[number, p]
            hidden = self.unlock[number, p] * self.shuffle[number, p] % N
            prior, preimage = self.digest(number, deck)
            deck = rekey_deck(lift_deck(deck), [hidden] * size, keys)
            commitments = tuple(context.commitment(p, first + j, k) for j, k in enumerate(keys))
            made.locks.append(Locked(party=p, round=number, prior=prior, deck=deck,
                                     commitments=commitments))
            passes.append({"step": "lock", "party": p, "prior": prior,
                           "prior_preimage": preimage, "keys": [_bytes32(k) for k in keys],
                           "commitments": commitments,
                           "commitment_preimages": [commitment_preimage(context, p, first + j, k)
                                                    for j, k in enumerate(keys)],
                           "deck": deck})
        for j in range(size):
            self.slot_keys[first + j] = {p: self.lock[number, p][j] for p in range(PARTIES)}
        self.slot_points.extend(deck)
        self.log.append(made)
        return {"round": number, "order": order, "slots": None if inputs is None else list(inputs),
                "input": self.cards if inputs is None else [self.slot_points[s] for s in inputs],
                "passes": passes, "new_slots": list(range(first, first + size))}

    def open(self, slot: int) -> int:
        """The card ``slot`` opens to: the inverse of its keys' product times its point."""
        product = 1
        for key in self.slot_keys[slot].values():
            product = product * key % N
        plain = rekey_deck(lift_deck([self.slot_points[slot]]), [product], [1])[0]
        return self.cards.index(plain)

    def release(self, party: int, slot: int, to: int | None) -> dict[str, Any]:
        key = self.slot_keys[slot][party]
        self.releases.append(KeyRelease(party=party, slot=slot, key=key, to=to))
        return {"party": party, "slot": slot, "key": _bytes32(key), "to": to}

    def remix(self, party: int) -> dict[str, Any]:
        """``party`` re-mixes the slots it was dealt: card point times a fresh key each."""
        first, context = len(self.slot_points), self.context
        cards = [self.open(old) for old in REMIX_ORDER]
        deck = tuple(rekey_deck(lift_deck([self.cards[card]]), [1], [key])[0]
                     for card, key in zip(cards, self.remix_keys, strict=True))
        commitments = tuple(context.commitment(party, first + m, key)
                            for m, key in enumerate(self.remix_keys))
        message = Remixed(party=party, slots=DEALT, deck=deck, commitments=commitments)
        for m, key in enumerate(self.remix_keys):
            self.slot_keys[first + m] = {party: key}
        self.slot_points.extend(deck)
        self.log.append(message)
        return {"party": party, "slots": list(DEALT), "order": list(REMIX_ORDER),
                "cards": cards, "keys": [_bytes32(k) for k in self.remix_keys], "deck": deck,
                "commitments": commitments,
                "commitment_preimages": [commitment_preimage(context, party, first + m, key)
                                         for m, key in enumerate(self.remix_keys)],
                "new_slots": list(range(first, first + len(deck)))}

    def reveal(self, party: int) -> AuditReveal:
        rounds = range(len([e for e in self.log if isinstance(e, Round)]))
        mine = party == 0
        return AuditReveal(
            party=party, unlock_keys=tuple(self.unlock[r, party] for r in rounds),
            shuffle_keys=tuple(self.shuffle[r, party] for r in rounds),
            permutations=tuple(tuple(PERMUTATIONS[r, party]) for r in rounds),
            lock_keys=tuple(tuple(self.lock[r, party]) for r in rounds),
            remix_orders=(REMIX_ORDER,) if mine else (),
            remix_keys=(tuple(self.remix_keys),) if mine else ())

    def observed(self) -> Deck:
        """Every broadcast message through an observing party (the checks a receiver
        makes on arrival): proof that the code accepts the vector's messages."""
        watcher = Deck(self.context, OBSERVER)
        for entry in self.log:
            if isinstance(entry, Remixed):
                for slot in entry.slots:  # who was dealt what is public (the table says)
                    watcher.assign(slot, entry.party)
                watcher.receive(entry)
                continue
            if entry.inputs is not None:
                watcher.begin_reshuffle(entry.inputs)
            passes: list[Unlocked | Shuffled | Locked] = [*entry.unlocks, *entry.shuffles,
                                                          *entry.locks]
            for message in passes:
                watcher.receive(message)
        for release in self.releases:
            if release.to is None:  # a key shown to everyone: the watcher opens the slot
                watcher.receive(release)
                watcher.open(release.slot)
        return watcher


def build(table: bytes) -> dict[str, Any]:
    """The deck vectors (bytes as bytes: the caller writes them as hex)."""
    deal = _Deal(table)
    context = deal.context
    labels = [card_label(table, DEAL, card) for card in range(SIZE)]
    first = deal.round(0, None)
    opened = [deal.open(slot) for slot in range(SIZE)]
    releases = [deal.release(1, slot, 0) for slot in DEALT]  # party 0 is dealt slots 0, 2
    remix = deal.remix(0)
    second = deal.round(1, RESHUFFLED)
    releases += [deal.release(0, remix["new_slots"][0], None),  # party 0 plays new slot 4
                 deal.release(0, second["new_slots"][0], 1)]  # party 1 is dealt slot 6
    watcher = deal.observed()
    reveals = {p: deal.reveal(p) for p in range(PARTIES)}
    verdict = audit(context, deal.log, reveals, deal.releases)
    assert verdict.ok and verdict.order is not None, verdict
    assert watcher.points == deal.slot_points and watcher.opened[remix["new_slots"][0]] \
        == verdict.order[remix["new_slots"][0]]
    assert list(verdict.order[:SIZE]) == opened
    failures = audit_failures(deal, reveals)
    encoded = {}
    for p, reveal in reveals.items():
        wire = _wire_reveal(reveal)
        encoded[str(p)] = {"reveal": wire, "packed": pack(wire)}
    return {
        # round 0 as first published (kept as it was for existing readers)
        "table": table, "deal": DEAL, "parties": PARTIES, "size": SIZE,
        "card_points": deal.cards, "passes": first["passes"], "opened": opened,
        # the labels, the rounds and re-mix after it, the audit
        "card_labels": labels,
        "card_counters": [_counter(label, point)
                          for label, point in zip(labels, deal.cards, strict=True)],
        "orders": [{"deal": d, "parties": n, "round": r, "order": DeckContext(
            table, d, n, SIZE).order(r)} for d, n, r in ((DEAL, 2, 0), (DEAL, 2, 1), (5, 3, 0),
                                                         (5, 3, 2), (9, 7, 4))],
        "reshuffle": second,
        "releases": releases,
        "remix": remix,
        "reveals": encoded,
        "slot_cards": list(verdict.order),
        "retired": sorted(watcher.retired),
        "audit_failures": failures,
    }


def audit_failures(deal: _Deal, reveals: dict[int, AuditReveal]) -> list[dict[str, Any]]:
    """The audit's verdict on the vector's deal with one thing changed, each as the audit
    names it and as the verdict every seat signs (``seat P broke the STEP: REASON``,
    :func:`p2pcards.table.judge.judge`): the exact texts of docs/mental-poker.md, "The
    audit"."""
    lie = reveals[1].shuffle_keys[0] % (N - 1) + 1  # another scalar than party 1's
    cases: list[tuple[str, dict[int, AuditReveal], list[KeyRelease]]] = [
        ("no party revealed its secrets", {}, deal.releases),
        ("party 1 revealed an unlock key for round 0, and party 0 only round 0's secrets",
         {0: dataclasses.replace(reveals[0], **{
             name: getattr(reveals[0], name)[:1]
             for name in ("unlock_keys", "shuffle_keys", "permutations", "lock_keys")}),
          1: dataclasses.replace(reveals[1], unlock_keys=(2, *reveals[1].unlock_keys[1:]))},
         deal.releases),
        ("party 1 lied about its shuffle scalar of round 0",
         {0: reveals[0], 1: dataclasses.replace(
             reveals[1], shuffle_keys=(lie, *reveals[1].shuffle_keys[1:]))}, deal.releases),
        ("party 1 released to party 0 a key of slot 0 that is not its key",
         reveals, [dataclasses.replace(deal.releases[0], key=deal.releases[0].key % (N - 1) + 1),
                   *deal.releases[1:]]),
    ]
    out = []
    for case, given, releases in cases:
        verdict = audit(deal.context, deal.log, given, releases)
        assert not verdict.ok and verdict.party is not None, case
        out.append({"case": case,
                    "reveals": {str(p): _wire_reveal(r) for p, r in given.items()},
                    "releases": [{"party": r.party, "slot": r.slot, "key": _bytes32(r.key),
                                  "to": r.to} for r in releases],
                    "party": verdict.party, "step": verdict.step, "reason": verdict.reason,
                    "verdict": f"seat {verdict.party} broke the {verdict.step}: {verdict.reason}"})
    return out


def _wire_reveal(reveal: AuditReveal) -> Any:
    """A reveal as the ``audit`` message's ``reveal`` map carries it."""
    _, body = kinds.encode_body(kinds.Audit(reveal=reveal, seal_secret=bytes(32)))
    return body["reveal"]
